"""``--stdin-filename``: the text on stdin checked and fixed as a file of its project on disk,
as editors and tools that pipe use it (ruff's convention: fixed source on stdout, findings on
stderr)."""
import json
import os
import subprocess
import sys

from conftest import REPO, dedent
from cross_file import FIXED, HELPERS, PYPROJECT, TRAIN

# bf16 autocast without a GradScaler: the fix (fp16 on old GPUs) is unsafe, held back by --fix
AUTOCAST = """import torch
for batch in loader:
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(batch)
    loss.backward()
"""


def pipe(text, *args, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO), NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "precision_lint", *args],
        input=text.encode() if isinstance(text, str) else text,
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=120,
    )


def project(tmp_path, train_on_disk=TRAIN):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "helpers.py").write_text(dedent(HELPERS))
    if train_on_disk is not None:
        (tmp_path / "train.py").write_text(dedent(train_on_disk))
    return tmp_path


def test_check_reads_stdin_and_joins_the_project_on_disk(tmp_path):
    # on disk train.py is already fixed: what is checked is the text on stdin
    project(tmp_path, train_on_disk=FIXED)
    out = pipe(dedent(TRAIN), "--stdin-filename", "train.py", "--output-format", "json", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    items = json.loads(out.stdout)
    assert [(i["code"], os.path.basename(i["filename"]), i["location"]["row"]) for i in items] == [
        ("MP101", "train.py", 6),  # the fp16 switch is in helpers.py: a cross-file finding
        ("MP301", "train.py", 7),
    ]
    assert os.path.basename(items[0]["related"][0]["filename"]) == "helpers.py"
    assert "in helpers.py (line 5)" in items[0]["message"]  # named as a run of `.` names it
    assert (tmp_path / "train.py").read_text() == dedent(FIXED)  # nothing written
    clean = pipe(dedent(FIXED), "--stdin-filename", "train.py", cwd=tmp_path)
    assert clean.returncode == 0 and b"All checks passed!" in clean.stdout


def test_a_file_not_on_disk_yet_is_checked_as_its_name_says(tmp_path):
    project(tmp_path, train_on_disk=None)
    out = pipe(dedent(TRAIN), "--stdin-filename", "sub/../new_train.py", "--output-format", "concise", cwd=tmp_path)
    assert out.returncode == 1
    assert [line.split(": ")[1].split()[0] for line in out.stdout.decode().splitlines() if ": MP" in line] == [
        "MP101",
        "MP301",
    ]


def test_fix_prints_the_fixed_source_and_findings_go_to_stderr(tmp_path):
    project(tmp_path, train_on_disk=TRAIN)
    out = pipe(dedent(TRAIN), "--fix", "--stdin-filename", "train.py", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode() == dedent(FIXED)
    assert b"2 fixed, 0 remaining" in out.stderr
    assert (tmp_path / "train.py").read_text() == dedent(TRAIN)  # never written
    # a fix held back (unsafe) leaves the text as it was, and the exit code says a finding remains
    out = pipe(AUTOCAST, "--fix", "--stdin-filename", "loop.py", cwd=tmp_path)
    assert out.stdout.decode() == AUTOCAST and out.returncode == 1
    assert b"--unsafe-fixes" in out.stderr
    out = pipe(AUTOCAST, "--fix", "--unsafe-fixes", "--stdin-filename", "loop.py", cwd=tmp_path)
    assert "if BF16_OK else torch.float16" in out.stdout.decode() and out.returncode == 0
    same = pipe(dedent(FIXED), "--fix", "--stdin-filename", "train.py", cwd=tmp_path)
    assert same.returncode == 0 and same.stdout.decode() == dedent(FIXED)


def test_fix_keeps_bytes_it_cannot_decode_and_exits_1(tmp_path):
    project(tmp_path)
    raw = b"x = '\xff'\nTrainer(tokenizer=tok)\n"
    out = pipe(raw, "--fix", "--stdin-filename", "train.py", cwd=tmp_path)
    assert out.stdout == raw
    assert out.returncode == 1 and b"MP001" in out.stderr


def test_diff_from_stdin(tmp_path):
    project(tmp_path)
    out = pipe(dedent(TRAIN), "--diff", "--stdin-filename", "train.py", cwd=tmp_path)
    assert out.returncode == 1
    text = out.stdout.decode()
    assert "--- a/train.py" in text and "+trainer = Trainer(model=model, args=make_args(\"out\"), processing_class=tok)" in text


def test_notebook_on_stdin(tmp_path):
    project(tmp_path)
    nb = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": ["!nvidia-smi\n", "from transformers import Trainer"]},
            {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": ["Trainer(model=m, tokenizer=tok)"]},
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    text = json.dumps(nb, indent=1) + "\n"
    out = pipe(text, "--stdin-filename", "nb.ipynb", "--output-format", "concise", cwd=tmp_path)
    assert out.returncode == 1 and "nb.ipynb:cell 2:1:18: MP301" in out.stdout.decode()
    fixed = pipe(text, "--fix", "--stdin-filename", "nb.ipynb", cwd=tmp_path)
    assert fixed.returncode == 0
    assert json.loads(fixed.stdout)["cells"][1]["source"] == ["Trainer(model=m, processing_class=tok)"]
    assert json.loads(fixed.stdout)["cells"][0] == nb["cells"][0]


def test_stdin_usage_errors_and_force_exclude(tmp_path):
    project(tmp_path)
    both = pipe("", "--stdin-filename", "train.py", "train.py", cwd=tmp_path)
    assert both.returncode == 2 and b"name no paths" in both.stderr
    (tmp_path / "pyproject.toml").write_text(PYPROJECT + 'exclude = ["generated/*"]\n')
    text = dedent(TRAIN)
    skipped = pipe(text, "--force-exclude", "--stdin-filename", "generated/train.py", cwd=tmp_path)
    assert skipped.returncode == 0 and skipped.stdout == b""
    echoed = pipe(text, "--fix", "--force-exclude", "--stdin-filename", "generated/train.py", cwd=tmp_path)
    assert echoed.returncode == 0 and echoed.stdout.decode() == text  # an editor gets its buffer back
    assert pipe(text, "--stdin-filename", "generated/train.py", cwd=tmp_path).returncode == 1  # not forced


def test_a_dash_names_stdin_as_ruff_and_editors_write_it(tmp_path):
    project(tmp_path, train_on_disk=FIXED)
    out = pipe(dedent(TRAIN), "--stdin-filename", "train.py", "--output-format", "concise", "-", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert [line.split(": ")[1].split()[0] for line in out.stdout.decode().splitlines() if ": MP" in line] == ["MP101", "MP301"]
    fixed = pipe(dedent(TRAIN), "--fix", "--stdin-filename", "train.py", "-", cwd=tmp_path)
    assert fixed.returncode == 0 and fixed.stdout.decode() == dedent(FIXED)
    lone = pipe(dedent(TRAIN), "-", cwd=tmp_path)  # `-` without saying which file it is
    assert lone.returncode == 2 and b"give --stdin-filename PATH" in lone.stderr


def test_a_piped_script_without_configuration_joins_what_it_joins_on_disk(tmp_path):
    """No [tool.precision-lint]: a script in scripts/ importing the package at the project root
    gets the cross-file MP101 from stdin as it gets it named on the command line."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (tmp_path / "mylib").mkdir()
    (tmp_path / "mylib" / "__init__.py").write_text("")
    (tmp_path / "mylib" / "helpers.py").write_text(dedent(HELPERS))
    (tmp_path / "scripts").mkdir()
    script = dedent(TRAIN).replace("from helpers import", "from mylib.helpers import").replace("tokenizer=tok", "processing_class=tok")
    (tmp_path / "scripts" / "train.py").write_text(script)
    named = pipe("", "--no-cache", "--output-format", "concise", "scripts/train.py", cwd=tmp_path)
    piped = pipe(script, "--no-cache", "--output-format", "concise", "--stdin-filename", "scripts/train.py", cwd=tmp_path)
    assert named.returncode == piped.returncode == 1, (named.stdout, piped.stdout)
    assert piped.stdout == named.stdout
    assert b"scripts/train.py:6:60: MP101" in piped.stdout and b"mylib/helpers.py (line 5)" in piped.stdout
