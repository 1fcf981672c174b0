"""Entry points, the near misses: the commands of one command line (``fire.Fire({...})``, a
``typer`` app, a ``click`` group) are separate runs, and a ``main`` imported from another
module runs with the script's own code only when the ``if __name__ == "__main__":`` block
calls it."""
import pytest
from conftest import config, lint

from precision_lint.engine import Engine

HEAD = "import torch\nfrom transformers import AutoModelForCausalLM, TrainingArguments\n"
# one command steps an optimizer on float16 weights, the other turns fp16 loss scaling on
EXPORT = "def export(path):\n    m = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float16)\n    torch.optim.SGD(m.parameters(), lr=0.1).step()\n"
TRAIN = "def train():\n    return TrainingArguments(output_dir='o', fp16=True)\n"


@pytest.mark.parametrize(
    "src",
    [
        HEAD + EXPORT + TRAIN + "import fire\nfire.Fire({'export': export, 'train': train})\n",
        "import typer\n" + HEAD + "app = typer.Typer()\n@app.command()\n" + EXPORT + "@app.command()\n" + TRAIN,
        "import click\n" + HEAD + "@click.group()\ndef cli():\n    pass\n@cli.command()\n" + EXPORT + "@cli.command()\n" + TRAIN,
    ],
    ids=["fire-dict", "typer", "click-group"],
)
def test_two_commands_of_one_command_line_do_not_run_together(src):
    assert lint(src, "MP101") == []


def test_one_command_that_does_both_is_a_finding():
    both = "def run(path):\n    export(path)\n    return train()\n"
    src = HEAD + EXPORT + TRAIN + both + "import fire\nfire.Fire({'run': run})\n"
    assert [(d.code, d.span.line) for d in lint(src, "MP101")] == [("MP101", 4)]


CLI = """
    import torch

    def main(model):
        optimizer = torch.optim.AdamW(model.parameters())
        scaler = torch.amp.GradScaler("cuda")
        return optimizer, scaler
    """
RUN = """
    import torch
    from transformers import AutoModelForCausalLM
    from pkg.cli import main

    model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)
    if __name__ == "__main__":
        {call}
    """


def _run(tree, call, *names):
    root = tree({"pkg/__init__.py": "", "pkg/cli.py": CLI, "run.py": RUN.format(call=call)})
    engine = Engine(config(), ["MP101"], jobs=1)
    paths = [str(root / n) for n in names] if names else [str(root)]
    return sorted((d.path.replace(str(root) + "/", ""), d.span.line) for d in engine.run_paths(paths).diagnostics)


@pytest.mark.parametrize("names", [(), ("run.py",), ("pkg/cli.py",)])
def test_an_imported_main_called_under_main_runs_with_the_script(tree, names):
    # the model is the script's, the loss scaling is main's: one run
    assert _run(tree, "main(model)", *names) == [("run.py", 5)]


def test_an_imported_main_the_script_never_calls_does_not_run_with_it(tree):
    assert _run(tree, "print(model)") == []


def test_a_property_setter_is_no_command_of_its_getter(tmp_path):
    """``@scaler.setter`` under ``@property def scaler`` has the getter's own name: read as a
    command registered with an app, the app was its own caller and the walk for where the
    GradScaler built in the getter runs never ended (review 24c: MP003, RecursionError). A
    property's accessors register nothing; the matcher's -1e9 is judged."""
    from conftest import findings_in, write_tree
    from precision_lint.semantic.calls import registered_commands
    from precision_lint.semantic.index import build_index

    config_src = (
        "from torch.amp import GradScaler\n\nclass Config:\n    def __init__(self, amp=False):\n"
        "        self.amp, self._scaler = amp, None\n\n    @property\n    def scaler(self):\n"
        "        if self._scaler is None and self.amp:\n            self._scaler = GradScaler('cuda')\n"
        "        return self._scaler\n\n    @scaler.setter\n    def scaler(self, obj):\n        self._scaler = obj\n"
    )
    root = write_tree(tmp_path, {
        ".git/HEAD": "", "config.py": config_src,
        "model.py": "from torch import nn\n\nclass Matcher(nn.Module):\n    def forward(self, s, m):\n"
                    "        return s.masked_fill(m, -1e9).softmax(-1)\n",
        "train.py": "import torch\nfrom config import Config\nfrom model import Matcher\n\ncfg = Config(amp=True)\n"
                    "print(Matcher()(torch.randn(4, 4), torch.zeros(4, 4, dtype=torch.bool)), cfg.scaler)\n",
    })
    index = build_index(config_src, "config")
    assert registered_commands(index) == ()
    codes = [d.code for d in findings_in(root)]
    assert "MP003" not in codes and "MP402" in codes
