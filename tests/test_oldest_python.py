"""Python 3.9 is still supported (``requires-python = ">=3.9"``), and its ``ast`` has no
``Match``/``MatchAs``/``MatchStar``/``MatchMapping``/``MatchClass``/``match_case`` (3.10) and no
``TryStar`` (3.11). Code that names one of them unguarded raises ``AttributeError`` there: at
import, the whole linter; on a common path, every file (MP003).

The suite runs on a newer Python, so a subprocess stands in for 3.9: it removes those names
from ``ast`` before precision-lint is imported, then checks and fixes a program whose
statements take the paths that asked for them (compound statements of every kind at the top
level, a trainer whose uses are read identifier by identifier).
"""
import os
import subprocess
import sys

from conftest import REPO, dedent

NEWER_AST = ("Match", "MatchAs", "MatchStar", "MatchMapping", "MatchClass", "MatchValue",
             "MatchSingleton", "MatchSequence", "MatchOr", "match_case", "TryStar")

AS_ON_PYTHON_39 = f"""
import ast, sys
for name in {NEWER_AST!r}:
    if hasattr(ast, name):
        delattr(ast, name)
from precision_lint.cli import main
sys.exit(main(sys.argv[1:]))
"""

PROGRAM = """
import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

try:
    import yaml
except ImportError:
    yaml = None


class Collator:
    def __call__(self, batch):
        with torch.no_grad():
            return batch


def main():
    model = AutoModelForCausalLM.from_pretrained("gpt2").half()
    args = TrainingArguments(output_dir="out", fp16=True)
    trainer = Trainer(model=model, args=args, data_collator=Collator())
    trainer.train()


if __name__ == "__main__":
    main()
"""


def _run(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO), NO_COLOR="1")
    env.pop("FORCE_COLOR", None)
    return subprocess.run(
        [sys.executable, "-c", AS_ON_PYTHON_39, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_linter_runs_without_the_ast_classes_python_3_9_lacks(tmp_path):
    (tmp_path / "train.py").write_text(dedent(PROGRAM))
    checked = _run("check", "--no-cache", "--output-format", "concise", "train.py", cwd=tmp_path)
    assert "MP003" not in checked.stdout + checked.stderr, checked.stdout + checked.stderr
    assert checked.returncode == 1 and "MP101" in checked.stdout, checked.stdout + checked.stderr
    fixed = _run("check", "--no-cache", "--fix", "train.py", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert '.from_pretrained("gpt2").float()' in (tmp_path / "train.py").read_text()
