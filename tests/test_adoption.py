"""Adopting on an existing codebase: ``--add-noqa`` (ruff's convention) so the hook only fails
on new findings, and ``--statistics`` / ``--show-fixes`` counting what only
``--unsafe-fixes`` would fix."""
import json

from conftest import dedent, run_cli
from precision_lint.fixes.noqa import add_noqa, commentable_lines, line_edit
from precision_lint.fixes.fixer import apply_edits

PYPROJECT = '[tool.precision-lint]\ntransformers-version = "5.23"\n'
LEGACY = """
import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained(
    "gpt2",
    dtype=torch.float16,   # loaded in half to save memory
)
args = TrainingArguments("out", fp16=True)
trainer = Trainer(model=model, args=args, tokenizer=tok)  # noqa: E501
trainer2 = Trainer(model=model,
                   tokenizer=tok)
"""
AUTOCAST = """
import torch
for batch in loader:
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(batch)
    loss.backward()
"""


def project(tmp_path, files):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(dedent(text))
    return tmp_path


def test_add_noqa_round_trip(tmp_path):
    project(tmp_path, {"legacy.py": LEGACY, "src/loop.py": AUTOCAST})
    before = run_cli("--output-format", "json", ".", cwd=tmp_path)
    assert before.returncode == 1
    found = {(f["filename"].rsplit("/", 1)[-1], f["noqa_row"], f["code"]) for f in json.loads(before.stdout)}
    assert found == {("legacy.py", 6, "MP101"), ("legacy.py", 9, "MP301"), ("legacy.py", 11, "MP301"), ("loop.py", 3, "MP201")}

    out = run_cli("--add-noqa", ".", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Added 4 noqa directives." in out.stderr
    assert (tmp_path / "legacy.py").read_text() == dedent(LEGACY).replace(
        "torch.float16,   # loaded in half to save memory\n",
        "torch.float16,   # loaded in half to save memory  # noqa: MP101\n",
    ).replace("tok)  # noqa: E501\n", "tok)  # noqa: E501, MP301\n").replace(
        "tokenizer=tok)\n", "tokenizer=tok)  # noqa: MP301\n"
    )
    assert '    with torch.autocast("cuda", dtype=torch.bfloat16):  # noqa: MP201\n' in (tmp_path / "src/loop.py").read_text()

    # the hook can be switched on today ...
    assert run_cli(".", cwd=tmp_path).returncode == 0
    again = run_cli("--add-noqa", ".", cwd=tmp_path)
    assert again.returncode == 0 and "Added 0 noqa directives." in again.stderr
    # ... and a new finding still fails it
    with open(tmp_path / "legacy.py", "a") as fh:
        fh.write("trainer3 = Trainer(model=model, tokenizer=tok)\n")
    new = run_cli("--output-format", "concise", ".", cwd=tmp_path)
    assert new.returncode == 1
    assert [l.split(":")[:2] for l in new.stdout.splitlines() if ": MP" in l] == [["legacy.py", "12"]]


def test_add_noqa_leaves_lines_it_cannot_comment_and_broken_files(tmp_path):
    in_string = 'from transformers import Trainer\nTrainer(tokenizer=tok, name="""a\nb""")\n'
    broken = "from transformers import Trainer\nTrainer(tokenizer=tok\n"
    project(tmp_path, {"s.py": in_string, "broken.py": broken})
    out = run_cli("--add-noqa", ".", cwd=tmp_path)
    assert out.returncode == 0
    assert "s.py: no noqa comment added to line 2: it ends inside a string" in out.stderr
    assert "broken.py: does not parse; no noqa comments added" in out.stderr
    assert "Added 0 noqa directives." in out.stderr
    assert (tmp_path / "s.py").read_text() == in_string
    assert (tmp_path / "broken.py").read_text() == broken
    assert run_cli("--add-noqa", "--fix", ".", cwd=tmp_path).returncode == 2


def test_add_noqa_in_a_notebook_cell(tmp_path):
    nb = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# T4 run"]},
            {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": 1, "source": ["%pip install transformers\n", "from transformers import Trainer"]},
            {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": 2, "source": ["Trainer(model=m, tokenizer=tok)"]},
        ],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    project(tmp_path, {})
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb, indent=1) + "\n")
    assert run_cli("--add-noqa", "nb.ipynb", cwd=tmp_path).returncode == 0
    after = json.loads((tmp_path / "nb.ipynb").read_text())
    assert after["cells"][2]["source"] == ["Trainer(model=m, tokenizer=tok)  # noqa: MP301"]
    assert after["cells"][:2] == nb["cells"][:2]
    assert run_cli("nb.ipynb", cwd=tmp_path).returncode == 0


def test_statistics_and_show_fixes_count_what_unsafe_fixes_would_fix(tmp_path):
    project(tmp_path, {"legacy.py": LEGACY, "loop.py": AUTOCAST, "loop2.py": AUTOCAST})
    stats = run_cli("--statistics", ".", cwd=tmp_path)
    assert stats.returncode == 1
    assert stats.stdout.splitlines() == [
        "    2\tMP201\t[-] bf16-without-capability-guard\t(2 fixable with `--unsafe-fixes`)",
        "    2\tMP301\t[*] trainer-tokenizer-argument",
        "    1\tMP101\t[*] fp16-weights-under-loss-scaling",
        "2 hidden fixes can be enabled with the `--unsafe-fixes` option.",
    ]
    with_unsafe = run_cli("--statistics", "--unsafe-fixes", ".", cwd=tmp_path)
    assert with_unsafe.stdout.splitlines()[0] == "    2\tMP201\t[*] bf16-without-capability-guard"
    assert "hidden" not in with_unsafe.stdout

    shown = run_cli("--show-fixes", "--output-format", "concise", ".", cwd=tmp_path)
    tail = shown.stdout[shown.stdout.index("3 fixable with the `--fix` option:") :]
    assert tail.splitlines() == [
        "3 fixable with the `--fix` option:",
        "- legacy.py:",
        "    1 × MP101 (fp16-weights-under-loss-scaling)",
        "    2 × MP301 (trainer-tokenizer-argument)",
        "",
        "2 hidden fixes can be enabled with the `--unsafe-fixes` option:",
        "- loop.py:",
        "    1 × MP201 (bf16-without-capability-guard)",
        "- loop2.py:",
        "    1 × MP201 (bf16-without-capability-guard)",
    ]
    fixed = run_cli("--fix", "--show-fixes", ".", cwd=tmp_path)
    assert fixed.returncode == 1  # the unsafe ones remain
    tail = fixed.stdout[fixed.stdout.index("Fixed 3 errors:") :]
    assert tail.splitlines()[:4] == [
        "Fixed 3 errors:",
        "- legacy.py:",
        "    1 × MP101 (fp16-weights-under-loss-scaling)",
        "    2 × MP301 (trainer-tokenizer-argument)",
    ]
    assert "2 hidden fixes can be enabled with the `--unsafe-fixes` option:" in tail
    json_out = run_cli("--show-fixes", "--output-format", "json", ".", cwd=tmp_path)
    assert len(json.loads(json_out.stdout)) == 2  # stdout stays JSON; the listing goes to stderr
    assert "2 hidden fixes" in json_out.stderr


# --- the comment itself ------------------------------------------------------------------------
def test_line_edit_keeps_the_line_and_merges_codes():
    text = "a = 1\nb = 2   \nc = 3  # keep me\nd = 4  # noqa:MP101\ne = 5  # noqa\n"
    edit = lambda row, *codes: apply_edits(text, [line_edit(text, row, codes)]).splitlines()[row - 1]
    assert edit(1, "MP301") == "a = 1  # noqa: MP301"
    assert edit(2, "MP301", "MP101") == "b = 2  # noqa: MP101, MP301"
    assert edit(3, "MP301") == "c = 3  # keep me  # noqa: MP301"
    assert edit(4, "MP301") == "d = 4  # noqa:MP101, MP301"
    assert line_edit(text, 4, ["MP101"]) is None  # already there
    assert line_edit(text, 5, ["MP301"]) is None  # a bare noqa silences everything


def test_crlf_and_last_line_without_newline():
    text = "x = f(\r\n  1)\r\ny = 2"
    assert add_noqa(text, {2: {"MP101"}, 3: {"MP301"}}).text == "x = f(\r\n  1)  # noqa: MP101\r\ny = 2  # noqa: MP301"


def test_commentable_lines():
    text = 'a = """\nx\n"""\nb = 1 + \\\n  2\nc = (1,\n  2)\n'
    assert commentable_lines(text) == {3, 5, 6, 7}
