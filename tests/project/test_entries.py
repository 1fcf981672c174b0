"""Entries: console scripts, modules that only define, decorated commands, launch commands.

A function nothing in the project calls runs when a console script names it, when its module
is run as a program (its top level acts, or it has a ``__main__`` block), or when a command
object it is registered with (``@app.command()``, ``@cli.command()``) is called. A module of
definitions only that nothing imports and nothing names runs none of its functions.
"""
import pytest
from conftest import config

from precision_lint.engine import Engine
from precision_lint.workspace.launches import launches
from precision_lint.workspace.versions import launched_scripts

ENGINE = """
import torch
from transformers import AutoModelForCausalLM


def load_half():
    return AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16).cuda()


def train():
    model = AutoModelForCausalLM.from_pretrained("m").cuda().half()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    scaler = torch.amp.GradScaler("cuda")
    scaler.scale(model(**batch).loss).backward()
    scaler.step(optimizer)
"""
INFER = "from pkg.engine import load_half\n\nmodel = load_half()\nprint(model(ids))\n"


def _lint(tree, files):
    root = tree(files)
    return [
        (d.path.replace("\\", "/").rsplit("/", 1)[-1], d.span.line)
        for d in Engine(config(), ["MP101"]).run_paths([str(root / "proj")]).diagnostics
    ]


def _library(**more):
    return {"proj/pkg/__init__.py": "", "proj/pkg/engine.py": ENGINE, "proj/infer.py": INFER, **more}


# --- console scripts ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, text",
    [
        ("pyproject.toml", '[project]\nname = "pkg"\n\n[project.scripts]\npkg-train = "pkg.engine:train"\n'),
        ("pyproject.toml", '[project]\nname = "pkg"\n\n[project.gui-scripts]\npkg-train = "pkg.engine:train"\n'),
        ("pyproject.toml", '[tool.poetry]\nname = "pkg"\n\n[tool.poetry.scripts]\npkg-train = "pkg.engine:train"\n'),
        ("setup.cfg", "[metadata]\nname = pkg\n\n[options.entry_points]\nconsole_scripts =\n    pkg-train = pkg.engine:train\n"),
        ("setup.py", 'from setuptools import setup\n\nsetup(name="pkg", entry_points={"console_scripts": ["pkg-train=pkg.engine:train"]})\n'),
        ("setup.py", 'from setuptools import setup\n\nENTRIES = {"console_scripts": ["pkg-train = pkg.engine:train [gpu]"]}\nsetup(name="pkg", entry_points=ENTRIES)\n'),
    ],
)
def test_a_training_function_a_console_script_names_runs(tree, name, text):
    assert _lint(tree, _library(**{f"proj/{name}": text})) == [("engine.py", 10)]


def test_a_console_script_named_through_a_package_reexport_runs(tree):
    files = _library(**{
        "proj/pkg/__init__.py": "from pkg.engine import train\n",
        "proj/pyproject.toml": '[project]\nname = "pkg"\n\n[project.scripts]\npkg-train = "pkg:train"\n',
    })
    assert _lint(tree, files) == [("engine.py", 10)]


@pytest.mark.parametrize(
    "more",
    [
        {},  # nothing names it
        {"proj/pyproject.toml": '[project]\nname = "pkg"\n\n[project.scripts]\npkg-infer = "pkg.engine:load_half"\n'},
        {"proj/setup.py": 'from setuptools import setup\n\nsetup(name="pkg", entry_points={"console_scripts": []})\n'},
        {"proj/setup.cfg": "[options.entry_points]\nconsole_scripts =\n    pkg-infer = pkg.engine:load_half\n"},
    ],
)
def test_a_library_of_definitions_that_nothing_runs_is_not_judged(tree, more):
    # the inference script imports the library for load_half; train is never called, and no
    # console script names it: no run both casts to half and steps a GradScaler
    assert _lint(tree, _library(**more)) == []


def test_a_module_whose_top_level_acts_still_runs_its_functions(tree):
    # a script: its functions may be handed to something the join cannot see (a runner)
    files = _library(**{"proj/pkg/engine.py": ENGINE + "\nprint('ready')\n"})
    assert _lint(tree, files) == [("engine.py", 10)]


def test_a_setup_py_is_read_never_run(tree):
    text = 'import sys\nsys.exit("ran")\nfrom setuptools import setup\nsetup(entry_points={"console_scripts": ["t=pkg.engine:train"]})\n'
    assert _lint(tree, _library(**{"proj/setup.py": text})) == [("engine.py", 10)]


# --- decorated commands -----------------------------------------------------------------------
COMMANDS = """
import torch
from transformers import AutoModelForCausalLM
{head}


{decorator}
def train():
    model = AutoModelForCausalLM.from_pretrained("m").cuda().half()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    scaler = torch.amp.GradScaler("cuda")
    scaler.scale(model(**batch).loss).backward()
    scaler.step(optimizer)
"""


@pytest.mark.parametrize(
    "head, decorator, main",
    [
        ("import typer\n\napp = typer.Typer()", "@app.command()", "from pkg.commands import app\n\napp()\n"),
        ("import click\n\n\n@click.group()\ndef cli():\n    pass", "@cli.command()", "from pkg.commands import cli\n\ncli()\n"),
    ],
)
def test_a_command_registered_with_an_app_runs_where_the_app_is_called(tree, head, decorator, main):
    files = {
        "proj/pkg/__init__.py": "",
        "proj/pkg/commands.py": COMMANDS.format(head=head, decorator=decorator),
        "proj/pkg/__main__.py": main,
    }
    found = _lint(tree, files)
    assert [name for name, _ in found] == ["commands.py"]


@pytest.mark.parametrize(
    "head, decorator, main",
    [
        ("import typer\n\napp = typer.Typer()", "@app.command()", "from pkg.commands import app\n\nAPP = app\n"),
        ("import click\n\n\n@click.group()\ndef cli():\n    pass", "@cli.command()", "from pkg.commands import cli\n\nCLI = cli\n"),
    ],
)
def test_a_registered_command_of_an_app_nobody_calls_does_not_run(tree, head, decorator, main):
    files = {
        "proj/pkg/__init__.py": "",
        "proj/pkg/commands.py": COMMANDS.format(head=head, decorator=decorator),
        "proj/pkg/__main__.py": main,
    }
    assert _lint(tree, files) == []


def test_a_console_script_may_name_the_app_its_commands_are_registered_with(tree):
    files = {
        "proj/pkg/__init__.py": "",
        "proj/pkg/commands.py": COMMANDS.format(head="import typer\n\napp = typer.Typer()", decorator="@app.command()"),
        "proj/pyproject.toml": '[project]\nname = "pkg"\n\n[project.scripts]\npkg = "pkg.commands:app"\n',
    }
    assert [name for name, _ in _lint(tree, files)] == ["commands.py"]
    files["proj/pyproject.toml"] = '[project]\nname = "pkg"\n'  # nothing names the app
    assert _lint(tree, files) == []


@pytest.mark.parametrize(
    "head, decorator, tail",
    [
        ("import hydra", '@hydra.main(config_path="conf", config_name="train", version_base=None)', 'if __name__ == "__main__":\n    train()\n'),
        ("import click", "@click.command()", 'if __name__ == "__main__":\n    train()\n'),
        ("from jsonargparse import CLI", "", 'if __name__ == "__main__":\n    CLI(train)\n'),
    ],
)
def test_a_decorated_or_handed_over_entry_of_a_script_runs(tree, head, decorator, tail):
    files = {"proj/train.py": COMMANDS.format(head=head, decorator=decorator) + "\n\n" + tail}
    assert [name for name, _ in _lint(tree, files)] == ["train.py"]


def test_a_decorated_entry_of_a_script_that_never_calls_it_does_not_run(tree):
    files = {"proj/train.py": COMMANDS.format(head="import hydra", decorator='@hydra.main(config_path="conf", version_base=None)')}
    assert _lint(tree, files) == []


# --- launch commands --------------------------------------------------------------------------
def test_launch_commands_are_read_with_their_options_continuations_and_prefixes():
    text = (
        "#!/bin/bash\n"
        "# python not_a_command.py\n"
        "CUDA_VISIBLE_DEVICES=0,1 accelerate launch --num_processes 2 --mixed_precision fp16 \\\n"
        "    scripts/train.py --fp16 --lr 1e-4\n"
        "torchrun --nproc_per_node 8 --master_port 29500 train.py --bf16\n"
        "python -m torch.distributed.run --nproc_per_node=2 other.py\n"
        "deepspeed --num_gpus 8 ds_train.py --deepspeed ds.json\n"
        "srun --gres=gpu:8 python -u -m pkg.train --x 1\n"
        "python $SCRIPT --fp16\n"
        "pip install -r requirements.txt && python eval.py\n"
    )
    found = [(l.script, l.module, l.args, l.line) for l in launches(text)]
    assert found == [
        ("scripts/train.py", None, ("--fp16", "--lr", "1e-4"), 3),
        ("train.py", None, ("--bf16",), 5),
        ("other.py", None, (), 6),
        ("ds_train.py", None, ("--deepspeed", "ds.json"), 7),
        (None, "pkg.train", ("--x", "1"), 8),
        ("eval.py", None, (), 10),
    ]


def test_yaml_and_makefile_lines_hold_commands_too():
    text = "jobs:\n  train:\n    steps:\n      - run: accelerate launch train.py --bf16\n\ntrain:\n\tpython -m pkg.train\n"
    assert [(l.script, l.module) for l in launches(text)] == [("train.py", None), (None, "pkg.train")]


def test_a_value_of_a_launchers_option_is_not_the_script():
    # `--config_file cfg.py` would be read as the script by a first-.py-word reader
    assert launched_scripts(["!accelerate launch --config_file cfg.py train.py"], "/nb") == ["/nb/train.py"]
    assert launched_scripts(["!torchrun --nproc_per_node 8 \\\n", "  train.py --x"], "/nb") == ["/nb/train.py"]
    assert launched_scripts(["!pip install torch"], "/nb") == []


# --- the call graph's answers do not depend on the order they are asked in ----------------------
CYCLE = {
    # A's method builds a B, B's method builds an A: whether either runs is asked while it is
    # being answered; the script builds a B, so both run, and so does the helper A's method calls
    "proj/lib.py": """
        class A:
            def n(self):
                helper()
                return B()

        class B:
            def m(self):
                return A()

        def helper():
            pass
        """,
    "proj/main.py": "from lib import B\n\nB()\n",
}


def test_entries_are_the_same_whichever_question_is_asked_first(tree):
    import itertools
    import os

    from precision_lint.facts.extract import extract_facts
    from precision_lint.project.model import Project
    from precision_lint.workspace.discovery import module_name

    root = tree(CYCLE) / "proj"
    facts = []
    for name in ("lib.py", "main.py"):
        path = os.path.join(str(root), name)
        facts.append(extract_facts(open(path).read(), path, *module_name(path)))
    paths = {m.path for m in facts}
    scopes = ("lib.A.n", "lib.B.m", "lib.helper")
    alone = {scope: Project(facts).callgraph.entries(scope, paths) for scope in scopes}
    assert alone == {"lib.A.n": {"lib.A.n"}, "lib.B.m": {"lib.B.m"}, "lib.helper": {"lib.A.n"}}
    for order in itertools.permutations(scopes):
        graph = Project(facts).callgraph
        assert {scope: graph.entries(scope, paths) for scope in order} == alone, order


@pytest.mark.parametrize(
    "script, expected",
    [
        # a variable holding the script (review 25f: Chinese-Llama-2's `${train_path}`)
        ("script=train/sft.py\ntorchrun --nproc_per_node 8 ${script} --bf16 True\n",
         ("train/sft.py", ("--bf16", "True"))),
        # a variable holding the options, quoted over several lines (Fengshenbang-LM's TRAINER_ARGS)
        ('ARGS="\\\n    --gpus 1 \\\n    --precision bf16 \\\n    "\npython3 finetune.py $ARGS\n',
         ("finetune.py", ("--gpus", "1", "--precision", "bf16"))),
        # a root the reader sets: the path under it
        ("ROOT=\nexport SCRIPT=$ROOT/train/sft.py\npython ${SCRIPT} --fp16\n", ("/train/sft.py", ("--fp16",))),
        ("python $WORK/train/sft.py\n", ("/train/sft.py", ())),  # a root never assigned
        # a command's output is not known; an assignment before a command is its prefix
        ("S=$(ls *.py)\npython $S\n", None),
        ("STRAT=$1\npython x.py --s $STRAT\n", ("x.py", ("--s", "$STRAT"))),  # the script's own argument
        ("CUDA_VISIBLE_DEVICES=0 python x.py --a 1\n", ("x.py", ("--a", "1"))),
    ],
)
def test_shell_variables_assigned_above_a_launch_are_written_out(script, expected):
    found = launches(script)
    assert ((found[0].script, found[0].args) if found else None) == expected


def test_a_launch_through_a_variable_under_an_unknown_root_passes_its_options(tmp_path):
    """``script=$root/train/run_sft.py`` ... ``torchrun ${script} --bf16 True`` (the root set by
    the reader): the launch runs ``train/run_sft.py``, whose ``TrainingArguments`` the parser
    fills with ``--bf16 True`` (MP201 on a torch that emulates bf16)."""
    from conftest import findings_in, write_tree

    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "requirements.txt": "transformers==4.44.2\ntorch==2.1.2\n",
        "train/launch.sh": "root=\nscript=$root/train/run_sft.py\ntorchrun --nproc_per_node 8 ${script} --output_dir out --bf16 True\n",
        "train/run_sft.py": (
            "from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments\n"
            "(args,) = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()\n"
            "Trainer(model=AutoModelForCausalLM.from_pretrained('gpt2'), args=args).train()\n"
        ),
    })
    found = findings_in(root, ["MP201"])
    assert [d.code for d in found] == ["MP201"] and "passed by launch.sh" in found[0].message
