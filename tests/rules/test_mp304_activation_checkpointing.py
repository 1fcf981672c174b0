"""transformers 5.23 renamed ``TrainingArguments(gradient_checkpointing=, gradient_checkpointing_kwargs=)``
to ``activation_checkpointing`` / ``activation_checkpointing_kwargs``: the old names still work,
with ``FutureWarning: `gradient_checkpointing` is deprecated and will be removed in v6. Use
`activation_checkpointing` instead.`` (MP304, renamed where every targeted version has the new
name); before 5.23 there is nothing to say, and the new name does not exist."""
from __future__ import annotations

import pytest

from conftest import config, dedent, findings_in, fix, lint, write_tree


SCRIPT = """
from transformers import TrainingArguments

args = TrainingArguments(output_dir="out", gradient_checkpointing=True, gradient_checkpointing_kwargs={"use_reentrant": False})
"""


def run(tmp_path, pin):
    write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": pin + "\n", "train.py": SCRIPT})
    return findings_in(tmp_path, ["MP304"])


def test_the_old_names_warn_from_5_23_and_are_renamed(tmp_path):
    found = run(tmp_path, "transformers>=5.23")
    assert sorted(d.message.split("`")[1] for d in found) == ["gradient_checkpointing=", "gradient_checkpointing_kwargs="]
    assert all("FutureWarning" in d.message or "deprecated" in d.message for d in found)
    assert all(d.fix is not None for d in found)


@pytest.mark.parametrize("pin", ["transformers==4.44.2", "transformers==5.22.0"])
def test_before_5_23_nothing_is_said(tmp_path, pin):
    assert run(tmp_path, pin) == []


def test_the_fix_writes_the_new_names():
    cfg = config(transformers_version="5.24")
    fixed = fix(SCRIPT, "MP304", cfg=cfg)
    assert fixed == dedent(SCRIPT).replace("gradient_checkpointing", "activation_checkpointing")
    assert lint(fixed, "MP304", cfg=cfg) == []
