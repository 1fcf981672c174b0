"""The commands that run a script: a shipped launcher's and a README's, by its path or its module.

``python -m pkg.train --config configs/train.yaml`` runs ``pkg/train.py`` (``python -m`` finds a
module's file, or a package's ``__main__.py``) with ``--config configs/train.yaml`` on its
command line; written in a README's fenced shell block, it is the run the project documents,
as a launcher's command is the run it ships (``ShippedFiles.launches_for``). Review 20's
held-out misses M6-M9: a TRL ``--config`` YAML named only by the README's ``python -m``
commands, with a key transformers 5.15 no longer takes."""
import os

import pytest
from conftest import findings_in, write_tree

from precision_lint.workspace.launches import Launch, launches, option_words
from precision_lint.workspace.shipped import ShippedFiles

TRL_SCRIPT = """\
from trl import ModelConfig, SFTConfig, SFTTrainer, TrlParser


def main():
    config, model_config = TrlParser((SFTConfig, ModelConfig)).parse_args_and_config()
    SFTTrainer(model=model_config.model_name_or_path, args=config).train()


if __name__ == "__main__":
    main()
"""
HF_SCRIPT = """\
from transformers import HfArgumentParser, Trainer, TrainingArguments


def main():
    (args,) = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()
    Trainer(model=None, args=args).train()


if __name__ == "__main__":
    main()
"""
CONFIG = "model_name_or_path: some/model\noutput_dir: out\nwarmup_ratio: 0.03\n"


def readme(*commands: str) -> str:
    return "# Training\n\nRun it:\n\n```bash\n" + "\n".join(commands) + "\n```\n"


def findings(root, codes=("MP302", "MP304")):
    found = findings_in(root, codes)
    return [(d.code, os.path.relpath(d.path, root).replace(os.sep, "/"), d.span.line, d.message) for d in found]


def trl_project(tmp_path, files):
    return write_tree(tmp_path / "p", {
        ".git/HEAD": "", "requirements.txt": "transformers==5.15.0\ntrl==1.9.0\n", "pkg/__init__.py": "",
        "pkg/train.py": TRL_SCRIPT, "configs/train.yaml": CONFIG, **files,
    })


# --- which file a module launch runs -------------------------------------------------------------
def test_a_module_launch_runs_its_file_or_its_packages_main():
    (launch,) = launches("python -m pkg.train --config c.yaml\n")
    assert launch.written == "pkg.train"
    assert launch.files() == (os.path.join("pkg", "train.py"), os.path.join("pkg", "train", "__main__.py"))
    assert Launch("train.py", None, (), 1).files() == ("train.py",)
    assert Launch(None, "$MODULE", (), 1).files() == ()  # a shell variable: not known


def test_the_options_of_a_module_launch_are_found_after_the_module():
    text = "python -m pkg.train --output_dir out \\\n    --evaluation_strategy steps\n"
    (launch,) = launches(text)
    spans = option_words(text, launch)
    assert [launch.args[i] for i, _ in spans] == ["--output_dir", "--evaluation_strategy"]
    line, column, start, end = spans[1][1]
    assert (line, text[start:end]) == (2, "--evaluation_strategy")


# --- a README's commands ---------------------------------------------------------------------------
def test_a_readme_module_command_passes_its_config_file(tmp_path):
    root = trl_project(tmp_path, {"README.md": readme("python -m pkg.train --config configs/train.yaml")})
    ((code, where, line, message),) = findings(root)
    assert (code, where, line) == ("MP302", "configs/train.yaml", 3)
    assert "ValueError: Unknown arguments from config file: ['--warmup_ratio', '0.03']" in message
    assert "README.md (line 6) passes it" in message


def test_a_packages_main_run_by_its_module(tmp_path):
    root = trl_project(tmp_path, {
        "pkg/train.py": "", "pkg/train/__init__.py": "", "pkg/train/__main__.py": TRL_SCRIPT,
        "README.md": readme("accelerate launch -m pkg.train --config configs/train.yaml"),
    })
    os.remove(root / "pkg" / "train.py")
    assert [(c, w) for c, w, *_ in findings(root)] == [("MP302", "configs/train.yaml")]


def test_a_readme_command_of_another_module_passes_nothing(tmp_path):
    root = trl_project(tmp_path, {"README.md": readme("python -m pkg.evaluate --config configs/train.yaml")})
    assert findings(root) == []


def test_a_readme_option_is_reported_in_the_readme(tmp_path):
    root = write_tree(tmp_path / "p", {
        ".git/HEAD": "", "requirements.txt": "transformers==5.2.0\n", "train.py": HF_SCRIPT,
        "README.md": readme("$ python train.py --output_dir out --evaluation_strategy steps"),
    })
    ((code, where, line, message),) = findings(root)
    assert (code, where, line) == ("MP302", "README.md", 6)
    assert "pass `--eval_strategy` instead" in message


def test_a_bare_name_in_a_readme_is_the_file_of_the_readmes_folder(tmp_path):
    """``python train.py`` in the project's README runs the ``train.py`` beside it, not a
    ``train.py`` of another folder (a launcher's bare name is read by its tail, as before)."""
    root = write_tree(tmp_path / "p", {
        ".git/HEAD": "", "requirements.txt": "transformers==5.2.0\n", "examples/train.py": HF_SCRIPT,
        "README.md": readme("python train.py --output_dir out --evaluation_strategy steps"),
    })
    assert findings(root) == []
    shipped = ShippedFiles(str(root))
    assert shipped.launches_for(str(root / "examples" / "train.py")) == []
    # a path with its folder names it from the project's root
    (root / "README.md").write_text(readme("python examples/train.py --output_dir out --evaluation_strategy steps"))
    ((launcher, launch),) = ShippedFiles(str(root)).launches_for(str(root / "examples" / "train.py"))
    assert (os.path.basename(launcher), launch.script) == ("README.md", "examples/train.py")


@pytest.mark.parametrize("where", ["run.sh", "scripts/run.sh"])
def test_a_launcher_that_runs_the_module_passes_its_options(tmp_path, where):
    root = write_tree(tmp_path / "p", {
        ".git/HEAD": "", "requirements.txt": "transformers==5.2.0\n", "pkg/__init__.py": "", "pkg/train.py": HF_SCRIPT,
        where: "#!/bin/bash\ntorchrun --nproc_per_node 2 -m pkg.train \\\n    --evaluation_strategy steps\n",
    })
    ((code, path, line, message),) = findings(root)
    assert (code, path, line) == ("MP302", where, 3)
    assert "ValueError: Some specified arguments are not used by the HfArgumentParser: ['--evaluation_strategy', 'steps']" in message


def test_a_readme_findings_excerpt_noqa_and_add_noqa(tmp_path):
    from conftest import run_cli

    command = "python train.py --output_dir out --evaluation_strategy steps"
    root = write_tree(tmp_path / "p", {
        ".git/HEAD": "", "requirements.txt": "transformers==5.2.0\n", "train.py": HF_SCRIPT, "README.md": readme(command),
    })
    full = run_cli(".", "--no-cache", "--select", "MP302", cwd=root)
    assert "README.md:6:34: MP302" in full.stdout and command in full.stdout  # the README's line, excerpted
    before = (root / "README.md").read_text()
    added = run_cli(".", "--no-cache", "--select", "MP302", "--add-noqa", cwd=root)
    assert "no noqa comments added: a launch script" in added.stderr and (root / "README.md").read_text() == before
    (root / "README.md").write_text(readme(command + "  # noqa: MP302"))
    assert findings(root) == []


def test_a_switch_the_readme_passes_is_the_documented_run(tmp_path):
    """The README's command passes `--fp16` to a script that parses `TrainingArguments`: the
    shipped run is fp16 only; `--bf16` beside it is a user's own edit of the command, as with
    a shell launcher's (review 21b's MP102 FP)."""
    root = write_tree(tmp_path / "p", {
        ".git/HEAD": "", "requirements.txt": "transformers==4.49.0\n", "train.py": HF_SCRIPT,
        "README.md": readme("python train.py --output_dir out --fp16"),
    })
    assert findings(root, codes=("MP102",)) == []
