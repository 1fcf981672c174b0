"""MP201 and the GPU a note on a precision setting of the project's YAML configuration names.

``bf16: true  # A100 native bfloat16`` (review 28b's TriUTest: the only place the project names
its card) says which card the setting was chosen for, as a note on a line of code does ("bf16
weights for A100"): a project that states an Ampere card runs bf16 natively. A bare ``# A100``
says what the line needs, nothing of where the code runs; a pre-Ampere card named anywhere counts
(advice to a T4 user says T4 users are expected). Each test is a small project of that shape."""
import pytest
from conftest import findings_in, write_tree

from precision_lint.workspace.hardware import stated_in_text

TRAIN = """
import torch
import yaml
from transformers import AutoModelForCausalLM

cfg = yaml.safe_load(open("configs/distill.yaml"))
teacher = AutoModelForCausalLM.from_pretrained(cfg["teacher"], dtype=torch.bfloat16)
teacher.eval()
"""


def _mp201(tmp_path, note):
    write_tree(tmp_path, {
        ".git/HEAD": "",
        "src/train.py": TRAIN,
        "configs/distill.yaml": "teacher: org/model\n",
        "configs/sft.yaml": f"training:\n  epochs: 1\n  bf16: true{note}\n",
    })
    return [d.message for d in findings_in(tmp_path) if d.code == "MP201"]


@pytest.mark.parametrize("note", ["  # A100 native bfloat16, steady throughput", "  #A100 原生 bfloat16，吞吐稳。", "  # bf16 for the H100s"])
def test_a_note_on_a_precision_setting_states_the_card_it_was_chosen_for(tmp_path, note):
    assert _mp201(tmp_path, note) == []


@pytest.mark.parametrize("note", ["", "  # A100", "  # bf16 if you have an A100"])
def test_a_bare_or_conditional_card_states_nothing(tmp_path, note):
    (message,) = _mp201(tmp_path, note)
    assert "no GPU stated" in message


def test_a_pre_ampere_card_named_in_a_note_is_a_target(tmp_path):
    (message,) = _mp201(tmp_path, "  # bf16 on A100; the T4 nodes emulate it")
    assert "sm75" in message


@pytest.mark.parametrize("note, expected", [
    ("A100 native bfloat16", [80]),
    ("H100s natively: bf16 weights", [90]),
    ("A100", []),
    ("bf16, faster for A100 if available", []),
])
def test_a_note_that_names_the_card_with_the_precision_natively(note, expected):
    assert stated_in_text(note, note=True) == expected
