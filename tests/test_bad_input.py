"""Odd files and odd command lines: what the user sees, and that nothing is lost.

One table, one row per case. Each row builds a small project, runs the command line
(in this process, so a row can also simulate what a test cannot provoke as root: an
unwritable folder, a file edited while we run) and states the exit code, the lines on
stderr and stdout, and what every file holds afterwards.
"""
from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Dict, Optional, Sequence

import pytest

from precision_lint import cli
from precision_lint.engine import Engine

PYPROJECT = '[tool.precision-lint]\ntransformers-version = "5.23"\n'
BAD = b"from transformers import Trainer\nTrainer(model=m, tokenizer=tok)\n"
GOOD = b"from transformers import Trainer\nTrainer(model=m, processing_class=tok)\n"
LATIN1 = "# -*- coding: latin-1 -*-\n# Entraînement du modèle\nfrom transformers import Trainer\nTrainer(model=m, tokenizer=tok)  # élève\n"
CP1252_NO_COOKIE = b"from transformers import Trainer\n# \x93smart quotes\x94\nTrainer(model=m, tokenizer=tok)\n"


@dataclass
class Case:
    id: str
    files: Dict[str, bytes]
    args: Sequence[str]
    rc: int
    stderr: Sequence[str] = ()  # lines that must be on stderr, exactly
    stdout: Sequence[str] = ()  # text that must be in stdout
    after: Dict[str, bytes] = field(default_factory=dict)  # the bytes of these files afterwards
    setup: Optional[Callable] = None  # setup(tmp_path, monkeypatch), after the files are written
    check: Optional[Callable] = None  # check(tmp_path), after the run
    pyproject: str = PYPROJECT


def _symlink_in_project(tmp_path, monkeypatch):
    (tmp_path / "lib").mkdir()
    os.replace(tmp_path / "real.py", tmp_path / "lib" / "real.py")
    os.symlink(os.path.join("lib", "real.py"), tmp_path / "link.py")


def _link_stays_a_link(tmp_path):
    assert os.path.islink(tmp_path / "link.py")
    assert os.readlink(tmp_path / "link.py") == os.path.join("lib", "real.py")
    assert (tmp_path / "lib" / "real.py").read_bytes() == GOOD


def _symlink_out_of_project(tmp_path, monkeypatch):
    outside = tmp_path.parent / f"{tmp_path.name}-outside.py"
    outside.write_bytes(BAD)
    os.symlink(outside, tmp_path / "link.py")


def _outside_fixed(tmp_path):
    assert os.path.islink(tmp_path / "link.py")
    assert (tmp_path.parent / f"{tmp_path.name}-outside.py").read_bytes() == GOOD


def _outside_note(tmp_path):
    return (
        f"precision-lint: note: link.py links to {tmp_path.parent / (tmp_path.name + '-outside.py')}, "
        f"outside the project ({tmp_path}); the fixes were written there"
    )


def _mode(path, mode):
    return lambda tmp_path, monkeypatch: os.chmod(tmp_path / path, mode)


def _mode_is(path, mode):
    def check(tmp_path):
        assert stat.S_IMODE(os.stat(tmp_path / path).st_mode) == mode

    return check


def _folder_unwritable(tmp_path, monkeypatch):
    """As root every folder is writable: refuse the temporary file as a read-only folder would."""
    locked = str(tmp_path / "locked")
    real = tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):
        if dir == locked:
            raise PermissionError(13, "Permission denied", os.path.join(locked, ".precision-lint-x.tmp"))
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)


def _edited_while_running(tmp_path, monkeypatch):
    """Another editor saves b.py after precision-lint read it and before it writes."""
    real = Engine.run_paths

    def run_paths(self, *args, **kwargs):
        result = real(self, *args, **kwargs)
        (tmp_path / "b.py").write_bytes(BAD + b"# saved by the editor\n")
        return result

    monkeypatch.setattr(Engine, "run_paths", run_paths)


def _fixtures_not_installed(tmp_path, monkeypatch):
    """As after a plain `pip install .`: no fixtures folder beside the package."""
    import precision_lint.verify as harness

    monkeypatch.setattr(harness, "DEFAULT_FIXTURES", tmp_path / "site-packages" / "fixtures")


def _no_torch(tmp_path, monkeypatch):
    """As after a plain `pip install .`: neither torch nor transformers importable."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in ("torch", "transformers") else real(name, *a))


def _fixed_and_nothing_else(path):
    text = path.read_text()
    assert "processing_class=tok" in text and "tokenizer=" not in text
    assert text.count(" + ") == 999


def _big(n: int) -> bytes:
    return BAD + b"".join(b"x%d = %d\n" % (i, i) for i in range(n))


CASES = [
    # --- encodings -------------------------------------------------------------------------
    Case(
        "latin1-cookie-checked",
        {"lat.py": LATIN1.encode("latin-1")},
        ["--output-format", "concise", "lat.py"],
        rc=1,
        stdout=["lat.py:4:18: MP301 [*]"],
    ),
    Case(
        "latin1-cookie-fixed-in-latin1",
        {"lat.py": LATIN1.encode("latin-1")},
        ["--fix", "lat.py"],
        rc=0,
        after={"lat.py": LATIN1.replace("tokenizer=", "processing_class=").encode("latin-1")},
    ),
    Case(
        "cp1252-without-cookie-is-MP001-and-left-alone",
        {"win.py": CP1252_NO_COOKIE, "b.py": BAD},
        ["--fix", "--output-format", "concise", "."],
        rc=1,
        stdout=[
            "win.py:2:1: MP001 Cannot check file: cannot decode as UTF-8 (invalid start byte at byte 35, line 2) "
            "and has no PEP 263 coding cookie"
        ],
        after={"win.py": CP1252_NO_COOKIE, "b.py": GOOD},
    ),
    Case(
        "unknown-codec-in-cookie-is-MP001",
        {"k.py": b"# coding: klingon\n" + BAD},
        ["--fix", "--output-format", "concise", "k.py"],
        rc=1,
        stdout=["k.py:1:1: MP001 Cannot check file: bad coding cookie: unknown encoding: klingon"],
        after={"k.py": b"# coding: klingon\n" + BAD},
    ),
    # --- links and permissions ----------------------------------------------------------
    Case(
        "fix-through-symlink-writes-the-target",
        {"real.py": BAD},
        ["--fix", "link.py"],
        rc=0,
        setup=_symlink_in_project,
        check=_link_stays_a_link,
    ),
    Case(
        "fix-through-symlink-out-of-the-project-says-so",
        {},
        ["--fix", "link.py"],
        rc=0,
        stderr=[_outside_note],
        setup=_symlink_out_of_project,
        check=_outside_fixed,
    ),
    Case(
        "fix-keeps-permissions",
        {"a.py": BAD},
        ["--fix", "a.py"],
        rc=0,
        after={"a.py": GOOD},
        setup=_mode("a.py", 0o751),
        check=_mode_is("a.py", 0o751),
    ),
    Case(
        "read-only-file-one-line-exit-2-others-fixed",
        {"a.py": BAD, "b.py": BAD},
        ["--fix", "--output-format", "concise", "."],
        rc=2,
        stderr=["precision-lint: error: fixes for b.py were not written: the file is read-only"],
        stdout=["b.py:2:18: MP301 [*]", "Found 2 errors (1 fixed, 1 remaining)."],
        after={"a.py": GOOD, "b.py": BAD},
        setup=_mode("b.py", 0o444),
        check=_mode_is("b.py", 0o444),
    ),
    Case(
        "unwritable-folder-one-line-exit-2-others-fixed",
        {"a.py": BAD, "locked/b.py": BAD},
        ["--fix", "--output-format", "concise", "."],
        rc=2,
        stderr=[
            lambda tmp: f"precision-lint: error: fixes for {os.path.join('locked', 'b.py')} were not written: "
            f"cannot write {tmp / 'locked' / '.precision-lint-x.tmp'}: Permission denied"
        ],
        after={"a.py": GOOD, "locked/b.py": BAD},
        setup=_folder_unwritable,
    ),
    Case(
        "file-changed-on-disk-is-not-overwritten",
        {"a.py": BAD, "b.py": BAD},
        ["--fix", "--output-format", "concise", "."],
        rc=2,
        stderr=[
            "precision-lint: error: fixes for b.py were not written: it changed on disk after it was read; "
            "run precision-lint again"
        ],
        after={"a.py": GOOD, "b.py": BAD + b"# saved by the editor\n"},
        setup=_edited_while_running,
    ),
    # --- size -----------------------------------------------------------------------------
    Case(  # never a pass: a finding of its own code (exit 1), also with --fix
        "file-over-max-file-size-is-mp002",
        {"big.py": _big(300), "small.py": BAD},
        ["--output-format", "concise", "--fix", "."],
        rc=1,
        pyproject=PYPROJECT + 'max-file-size = "2KB"\n',
        stdout=[
            "big.py:1:1: MP002 Not checked: 3.1 KB of code is more than max-file-size (2 KB); "
            "raise `max-file-size` in [tool.precision-lint] to check it",
            "Found 2 errors (1 fixed, 1 remaining).",
        ],
        after={"big.py": _big(300), "small.py": GOOD},
    ),
    Case(
        "only-file-over-max-file-size-is-not-all-checks-passed",
        {"big.py": b"x = 1\n" * 500},
        ["--output-format", "concise", "big.py"],
        rc=1,
        pyproject=PYPROJECT + 'max-file-size = "2KB"\n',
        stdout=["big.py:1:1: MP002 Not checked: 3 KB of code is more than max-file-size (2 KB)", "Found 1 error."],
    ),
    Case(
        # a SLURM job kept with a `.py` name (review 24u): the shell runs it, never Python
        "a-shell-script-named-py-is-not-checked-not-a-syntax-error",
        {"job.py": b"#!/bin/bash\n#SBATCH --gpus-per-node=1\nnvidia-smi\npython train.py\n",
         "env.py": b"#!/usr/bin/env -S zsh\necho hi\n", "broken.py": b"#!/usr/bin/env python\nx = (\n"},
        ["--output-format", "concise", "."],
        rc=1,
        stdout=[
            "broken.py:2:5: MP000 Cannot parse file: SyntaxError: '(' was never closed",
            "env.py:1:1: MP002 Not checked: a zsh script (its first line names zsh), not Python",
            "job.py:1:1: MP002 Not checked: a bash script (its first line names bash), not Python",
        ],
    ),
    Case(
        "max-file-size-finding-can-be-ignored-per-file",
        {"big.py": _big(300)},
        ["--output-format", "concise", "."],
        rc=0,
        pyproject=PYPROJECT + 'max-file-size = "2KB"\n[tool.precision-lint.per-file-ignores]\n"big.py" = ["MP002"]\n',
        stdout=["All checks passed!"],
    ),
    Case(
        "max-file-size-0-checks-everything",
        {"big.py": _big(300)},
        ["--output-format", "concise", "."],
        rc=1,
        pyproject=PYPROJECT + "max-file-size = 0\n",
        stdout=["big.py:2:18: MP301"],
    ),
    Case(
        "bad-max-file-size-is-a-config-error",
        {"a.py": GOOD},
        ["a.py"],
        rc=2,
        pyproject=PYPROJECT + 'max-file-size = "huge"\n',
        stderr=[
            lambda tmp: f"precision-lint: configuration error: {tmp / 'pyproject.toml'}: `max-file-size` must be "
            "a number of bytes or a size such as \"2MB\", not 'huge'"
        ],
    ),
    # --- what does not parse, and what the analysis must still read -------------------------
    Case(  # no precision word at all: still CPython's verdict, never "All checks passed!"
        "syntax-error-without-precision-words-is-MP000",
        {"a.py": b"def f(:\n    pass\n"},
        ["--output-format", "concise", "a.py"],
        rc=1,
        stdout=["a.py:1:7: MP000 Cannot parse file: SyntaxError: invalid syntax", "Found 1 error."],
        after={"a.py": b"def f(:\n    pass\n"},
    ),
    Case(  # notebook cells pasted into a .py: Python refuses the IPython line, its Python lines are checked
        "ipython-lines-in-a-py-file-are-MP000-and-the-rest-is-checked",
        {"bot.py": b"!pip install -q peft transformers\n" + BAD},
        ["--output-format", "concise", "--fix", "bot.py"],
        rc=1,
        stdout=[
            "bot.py:1:1: MP000 Cannot parse file: SyntaxError: invalid syntax (an IPython line: only IPython "
            "runs this file; its Python lines were checked)",
            "bot.py:3:18: MP301 `tokenizer=` passed to `Trainer`",
            "Found 2 errors.",
        ],
        after={"bot.py": b"!pip install -q peft transformers\n" + BAD},  # never rewritten: Python refuses it
    ),
    Case(  # a notebook Colab saved as .py ("Download .py"): its docstring says IPython runs it, no MP000
        "a-colab-export-with-ipython-lines-is-checked-without-MP000",
        {"bot.py": b'"""bot.ipynb\n\nAutomatically generated by Colab.\n"""\n\n!pip install -q peft transformers\n' + BAD},
        ["--output-format", "concise", "bot.py"],
        rc=1,
        stdout=["bot.py:8:18: MP301 `tokenizer=` passed to `Trainer`", "Found 1 error."],
    ),
    Case(  # what its `!pip install` pins is what it runs with: transformers 4.30 takes `tokenizer=`
        "ipython-pip-pins-in-a-py-file-are-its-targets",
        {"bot.py": b"!pip install transformers==4.30.0\n" + BAD},
        ["--output-format", "concise", "bot.py"],
        rc=1,
        stdout=["bot.py:1:1: MP000", "Found 1 error."],
        pyproject="",
    ),
    Case(  # a Python error beside the IPython line: nothing is checked, as before
        "ipython-line-and-a-python-error-is-MP000-alone",
        {"bot.py": b"!pip install transformers\n" + BAD + b"def f(:\n    pass\n"},
        ["--output-format", "concise", "bot.py"],
        rc=1,
        stdout=["bot.py:1:1: MP000 Cannot parse file: SyntaxError: invalid syntax\n", "Found 1 error."],
    ),
    Case(  # LibCST parses 300 nested parentheses; CPython (and so Python) refuses them
        "too-many-parentheses-for-cpython-is-MP000",
        {"a.py": b"import torch\nx = torch.float16\ny = " + b"(" * 300 + b"a" + b")" * 300 + b"\n"},
        ["--output-format", "concise", "a.py"],
        rc=1,
        stdout=["a.py:3:205: MP000 Cannot parse file: SyntaxError: too many nested parentheses"],
    ),
    Case(  # CPython gives up at once; LibCST took minutes and then crashed the process
        "chain-too-deep-for-cpython-is-MP000-at-once",
        {"a.py": b"import torch\nx = torch.float16\ny = " + b" + ".join([b"a"] * 20_000) + b"\n"},
        ["--output-format", "concise", "a.py"],
        rc=1,
        stdout=["a.py:1:1: MP000 Cannot parse file: RecursionError: maximum recursion depth exceeded during ast construction"],
    ),
    Case(  # valid Python, 1,000 levels deep in LibCST's tree: checked like any file
        "a-1000-term-chain-is-checked",
        {"a.py": b"from transformers import Trainer\ny = " + b" + ".join([b"a"] * 1_000) + b"\nTrainer(model=m, tokenizer=tok)\n"},
        ["--output-format", "concise", "--fix", "a.py"],
        rc=0,
        stdout=["Found 1 error (1 fixed, 0 remaining)."],
        check=lambda tmp: _fixed_and_nothing_else(tmp / "a.py"),
    ),
    Case(  # CPython keeps `x and y and ...` flat, LibCST nests it one level per operand
        "a-long-and-chain-is-checked",
        {"a.py": b"from transformers import Trainer\nok = " + b" and ".join([b"a"] * 5_000) + b"\nTrainer(model=m, tokenizer=tok)\n"},
        ["--output-format", "concise", "a.py"],
        rc=1,
        stdout=["a.py:3:18: MP301", "Found 1 error."],
    ),
    Case(  # DeepSpeed's json.load fails on it too: the conflict the rules would compare is unknown
        "invalid-deepspeed-json-is-MP002-where-the-code-names-it",
        {
            "train.py": b'from transformers import TrainingArguments\nargs = TrainingArguments("o", deepspeed="ds.json", bf16=True)\n',
            "ds.json": b'{\n  "bf16": {"enabled": false},\n}\n',
        },
        ["--output-format", "concise", "--select", "MP1", "--extend-select", "MP002", "train.py"],
        rc=1,
        stdout=[
            "train.py:2:41: MP002 `ds.json` was not checked: it is not valid JSON (Expecting property name "
            "enclosed in double quotes: line 3 column 1 (char 32))",
            "Found 1 error.",
        ],
        after={"ds.json": b'{\n  "bf16": {"enabled": false},\n}\n'},
    ),
    Case(  # the finding it hid (MP101 from the YAML's fp16 + float16) is not silently gone
        "yaml-config-over-max-file-size-is-MP002",
        {
            "train.py": b'import yaml\nfrom transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n'
            b'cfg = yaml.safe_load(open("config.yaml"))\n'
            b'model = AutoModelForCausalLM.from_pretrained("gpt2", dtype=cfg["model"]["dtype"])\n'
            b'args = TrainingArguments(output_dir="out", fp16=cfg["training"]["fp16"])\n'
            b'Trainer(model=model, args=args).train()\n',
            "config.yaml": b"model:\n  dtype: float16\ntraining:\n  fp16: true\n" + b"# a comment line\n" * 200,
        },
        ["--output-format", "concise", "--select", "MP101,MP002", "train.py"],
        rc=1,
        pyproject=PYPROJECT + 'max-file-size = "2KB"\n',
        stdout=[
            "train.py:3:27: MP002 `config.yaml` was not checked: it is 3.4 KB, more than max-file-size (2 KB)",
            "Found 1 error.",
        ],
    ),
    Case(  # the same file, within the limit: MP101 from its values
        "yaml-config-within-max-file-size-is-read",
        {
            "train.py": b'import yaml\nfrom transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n'
            b'cfg = yaml.safe_load(open("config.yaml"))\n'
            b'model = AutoModelForCausalLM.from_pretrained("gpt2", dtype=cfg["model"]["dtype"])\n'
            b'args = TrainingArguments(output_dir="out", fp16=cfg["training"]["fp16"])\n'
            b'Trainer(model=model, args=args).train()\n',
            "config.yaml": b"model:\n  dtype: float16\ntraining:\n  fp16: true\n" + b"# a comment line\n" * 200,
        },
        ["--output-format", "concise", "--select", "MP101,MP002", "train.py"],
        rc=1,
        pyproject=PYPROJECT + 'max-file-size = "5KB"\n',
        stdout=["train.py:4:60: MP101", "Found 1 error."],
    ),
    Case(  # a file that is not there is a path relative to somewhere else: no value, no finding
        "missing-config-file-is-not-reported",
        {"train.py": b'from transformers import TrainingArguments\nargs = TrainingArguments("o", deepspeed="ds.json", bf16=True)\n'},
        ["--output-format", "concise", "--select", "MP1,MP002", "train.py"],
        rc=0,
        stdout=["All checks passed!"],
    ),
    Case(  # the class binding shadows the import it derives from: followed once, never forever
        "class-named-as-its-imported-base-is-no-internal-error",
        {"a.py": b"import torch\nfrom torch.utils.data import Dataset\n\nclass Dataset(Dataset):\n    pass\n\n"
         b"ds = Dataset()\nx = torch.zeros(1, dtype=torch.float16)\n"},
        ["--output-format", "concise", "a.py"],
        rc=0,
        stdout=["All checks passed!"],
    ),
    Case(  # one fix (MP101's fp32 weights) resolves two findings: counted as ruff counts them
        "fix-summary-counts-the-findings-the-fixes-resolved",
        {"a.py": b'import torch\n\nmodel = torch.nn.Linear(4, 4).cuda().half()\n'
         b'opt = torch.optim.AdamW(model.parameters(), lr=1e-3)\nscaler = torch.amp.GradScaler("cuda", enabled=torch.cuda.is_available())\n'
         b'for x in loader:\n    with torch.autocast("cuda", dtype=torch.float16):\n        loss = model(x).sum()\n'
         b'    scaler.scale(loss).backward()\n    scaler.step(opt)\n    scaler.update()\n'},
        ["--output-format", "concise", "--fix", "a.py"],
        rc=0,
        stdout=["Found 2 errors (2 fixed, 0 remaining)."],
    ),
    # --- unknown codes ------------------------------------------------------------------
    Case(
        "unknown-code-in-select",
        {"a.py": BAD},
        ["--select", "MP999", "a.py"],
        rc=2,
        stderr=["precision-lint check: error: --select: unknown rule code(s) MP999 (see `precision-lint rule --all`)"],
        after={"a.py": BAD},
    ),
    Case(
        "unknown-prefix-in-ignore",
        {"a.py": BAD},
        ["--fix", "--ignore", "MP9,MP301", "a.py"],
        rc=2,
        stderr=["precision-lint check: error: --ignore: unknown rule code(s) MP9 (see `precision-lint rule --all`)"],
        after={"a.py": BAD},
    ),
    Case(
        "unknown-code-in-extend-select",
        {"a.py": BAD},
        ["--extend-select", "MP3,MP777", "a.py"],
        rc=2,
        stderr=[
            "precision-lint check: error: --extend-select: unknown rule code(s) MP777 (see `precision-lint rule --all`)"
        ],
    ),
    Case(
        "unknown-code-in-config-select",
        {"a.py": BAD},
        ["a.py"],
        rc=2,
        pyproject=PYPROJECT + 'select = ["MP3", "MP999"]\n',
        stderr=[
            lambda tmp: f"precision-lint: configuration error: {tmp / 'pyproject.toml'}: `select` has unknown rule "
            "code(s) MP999 (see `precision-lint rule --all`)"
        ],
    ),
    Case(
        "unknown-code-in-per-file-ignores",
        {"a.py": BAD},
        ["a.py"],
        rc=2,
        pyproject=PYPROJECT + '[tool.precision-lint.per-file-ignores]\n"a.py" = ["MP30"]\n"b.py" = ["MP399"]\n',
        stderr=[
            lambda tmp: f"precision-lint: configuration error: {tmp / 'pyproject.toml'}: `per-file-ignores.b.py` has "
            "unknown rule code(s) MP399 (see `precision-lint rule --all`)"
        ],
    ),
    # --- verify after a plain `pip install .` -------------------------------------------
    Case(
        "verify-without-installed-fixtures-says-where",
        {},
        ["verify"],
        rc=2,
        stderr=[
            "precision-lint verify: the fixtures are not installed with the package (a `pip install .` ships the "
            "linter only): run it in a checkout of the repository, or name the folder: "
            "precision-lint verify path/to/precision-lint/fixtures"
        ],
        setup=_fixtures_not_installed,
    ),
    Case(
        "verify-without-torch-names-the-extra",
        {},
        ["verify"],
        rc=2,
        stderr=[
            "precision-lint verify: the fixtures train real models and need torch and transformers: "
            "pip install 'precision-lint[harness]' (torch==2.13.0 from PyPI is a CUDA build on a GPU machine; "
            "see the README for a CPU-only install)"
        ],
        setup=_no_torch,
    ),
    Case(  # the user's own script: the missing extra is named, never "the fix broke it" (exit 1)
        "verify-a-script-without-torch-names-the-extra",
        {"train.py": b"import torch\nprint(torch.ones(1))\n"},
        ["verify", "train.py"],
        rc=2,
        stderr=[
            "precision-lint verify: running a training script needs torch: "
            "pip install 'precision-lint[harness]' (torch==2.13.0 from PyPI is a CUDA build on a GPU machine; "
            "see the README for a CPU-only install)"
        ],
        setup=_no_torch,
    ),
    Case(
        # 48c: smes_ppo's `.gitignore` has a pattern ending in a lone backslash, which git ignores
        # (it never matches) and pathspec refuses with a traceback; the other patterns still hold
        "gitignore-pattern-git-refuses",
        {".gitignore": b"*.pyc\nconfigs/user_side.jsonnet\\\nskipped/\n", "a.py": BAD, "skipped/b.py": BAD},
        ["--output-format", "concise", "."],
        rc=1,
        stdout=["a.py:2:18: MP301", "Found 1 error"],  # skipped/b.py stays ignored
    ),
    Case(
        "known-prefixes-and-ALL-are-accepted",
        {"a.py": BAD},
        ["--output-format", "concise", "--select", "ALL", "--ignore", "MP1,MP20", "a.py"],
        rc=1,
        stdout=["a.py:2:18: MP301"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text(case.pyproject)
    for rel, data in case.files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    if case.setup is not None:
        case.setup(tmp_path, monkeypatch)
    try:
        rc = cli.main(list(case.args) if case.args[:1] == ["verify"] else ["--no-cache", *case.args])
    except SystemExit as exc:  # argparse's usage errors
        rc = exc.code
    out, err = capsys.readouterr()
    assert rc == case.rc, f"exit {rc}\nstdout:\n{out}\nstderr:\n{err}"
    assert "Traceback" not in err
    err_lines = err.splitlines()
    for expected in case.stderr:
        line = expected(tmp_path) if callable(expected) else expected
        assert line in err_lines, f"{line!r} not a line of stderr:\n{err}"
    for expected in case.stdout:
        assert expected in out, f"{expected!r} not in stdout:\n{out}"
    for rel, data in case.after.items():
        assert (tmp_path / rel).read_bytes() == data, rel
    if case.check is not None:
        case.check(tmp_path)


@pytest.mark.parametrize(
    "raw, kept",
    [
        ("x = 'é'\n".encode("utf-8"), False),  # UTF-8: the text encoded again is the bytes read
        (b"\xef\xbb\xbfx = 1\r\n", False),  # a BOM and CRLF line ends survive too
        (LATIN1.encode("latin-1"), True),  # another codec: the bytes themselves are kept
        (b"x = '\xff'\n", True),  # not decodable: nothing else holds them
    ],
)
def test_a_source_file_gives_back_the_exact_bytes_it_read(tmp_path, raw, kept):
    """A UTF-8 file's bytes are not held beside its text (53 MB of transformers, twice):
    ``content()`` encodes the text again, which gives the bytes read exactly."""
    from precision_lint.workspace.sources import SourceFile

    path = tmp_path / "train.py"
    path.write_bytes(raw)
    src = SourceFile.read(str(path))
    assert src.content() == raw
    assert (src.raw is not None) == kept


@pytest.mark.parametrize(
    "text, as_bytes",
    [
        ("x = 1\n", False),  # ASCII: a byte a character already
        ("x = 'é'\n" * 100, False),  # Latin-1: a byte a character as a string, two in UTF-8
        ('"""🤗 Transformers"""\nx = 1\n' * 20, True),  # one emoji: 4 bytes a character as a string
        ("# " + "中文注释" * 100 + "\n", False),  # CJK: 2 bytes a character as a string, 3 in UTF-8
        ("x = '\ud800'\n", False),  # a lone surrogate (an editor's buffer): no UTF-8 for it
    ],
)
def test_a_source_keeps_its_text_in_the_smaller_form(tmp_path, text, as_bytes):
    """A run holds every text to its end (#23): one that is smaller as UTF-8 is kept so, and
    reads back the same; its digest and bytes are the same as for the string."""
    import dataclasses

    from precision_lint.workspace.sources import SourceFile, Texts

    src = SourceFile(str(tmp_path / "train.py"), None, text)
    assert src.text == text and src.has_text and isinstance(src.kept_text, bytes) == as_bytes
    assert src.utf8() == text.encode("utf-8", "surrogatepass")
    if "\ud800" not in text:
        assert src.content() == text.encode("utf-8")
    assert dataclasses.replace(src, text="y = 2\n").text == "y = 2\n" and src == SourceFile(src.path, None, text)
    none = SourceFile(str(tmp_path / "bad.py"), b"\xff", None, "cannot decode")
    texts = Texts([src, none])
    assert dict(texts) == {src.path: text} and none.path not in texts and len(texts) == 1
    texts["other.py"] = "z = 3\n"
    texts[src.path] = "changed\n"
    assert list(texts.items()) == [(src.path, "changed\n"), ("other.py", "z = 3\n")]
    assert src.text == text  # the source keeps what it read
