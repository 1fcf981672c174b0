"""A branch chosen by a command-line switch that every shipped launch turns off runs only by hand.

``"flash_attention_2" if not extra.disable_flash_attn2 else "sdpa"``, with every launch of the
project passing ``--disable_flash_attn2 True`` (review 29b, L1: a LLaVA-style repository whose
launches all say the model "does not support flash-attention2 yet"), loads SDPA in every shipped
run: FlashAttention-2 is the user's own choice there, never hard-coded (``Guard.switch``, read
at the join by ``project/options.switched_by_launches``). A launch that leaves the switch out
runs the default, and then the branch runs."""
import ast
import textwrap

import pytest

from conftest import write_tree
from precision_lint.engine import Engine
from precision_lint.project.options import switched_by_launches
from precision_lint.semantic.evaluate import Evaluator
from precision_lint.semantic.index import build_index
from precision_lint.semantic.values import CONST, Guard, Possible
from precision_lint.workspace.config import from_table
from precision_lint.workspace.launches import Launch

TRAIN = """\
from dataclasses import dataclass
import torch
from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments

@dataclass
class Extra:
    disable_flash_attn2: bool = False

extra, targs = HfArgumentParser((Extra, TrainingArguments)).parse_args_into_dataclasses()
model = AutoModelForCausalLM.from_pretrained(
    "org/tiny", dtype=torch.float16,
    attn_implementation="flash_attention_2" if not extra.disable_flash_attn2 else "sdpa")
Trainer(model=model, args=targs).train()
"""
ARGPARSE = """\
import argparse
import torch
from transformers import AutoModelForCausalLM
parser = argparse.ArgumentParser()
parser.add_argument("--no_fa2", action="store_true")
args = parser.parse_args()
model = AutoModelForCausalLM.from_pretrained(
    "org/tiny", dtype=torch.float16,
    attn_implementation="sdpa" if args.no_fa2 else "flash_attention_2")
"""


def mp202(tmp_path, train, *launches):
    files = {".git/HEAD": "", "train.py": train}
    for n, line in enumerate(launches):
        files[f"scripts/finetune_{n}.sh"] = f"#!/bin/bash\ndeepspeed train.py {line} --output_dir out\n"
    root = write_tree(tmp_path / "p", files)
    found = Engine(from_table({}, "defaults"), ["MP202"], jobs=1).run_paths([str(root)]).diagnostics
    return [d for d in found if d.code == "MP202"]


@pytest.mark.parametrize("passed", ["--disable_flash_attn2 True", "--disable-flash-attn2 true", "--disable_flash_attn2"])
def test_every_launch_switching_it_off_leaves_no_finding(tmp_path, passed):
    assert mp202(tmp_path, TRAIN, f"--fp16 True {passed}") == []


def test_without_a_launch_or_with_one_leaving_it_out_the_default_is_reported(tmp_path):
    assert len(mp202(tmp_path, TRAIN)) == 1
    assert len(mp202(tmp_path, TRAIN, "--fp16 True")) == 1
    # one launch runs the default: that run loads FlashAttention-2
    assert len(mp202(tmp_path, TRAIN, "--disable_flash_attn2 True", "--fp16 True")) == 1


@pytest.mark.parametrize("passed", ["--disable_flash_attn2 False", "--disable_flash_attn2 $NO_FA"])
def test_a_launch_switching_it_on_or_from_a_variable_decides_nothing(tmp_path, passed):
    assert len(mp202(tmp_path, TRAIN, passed)) == 1


def test_an_argparse_store_true_switch(tmp_path):
    assert mp202(tmp_path, ARGPARSE, "--no_fa2") == []
    assert len(mp202(tmp_path, ARGPARSE, "--lr 1e-4")) == 1


def _guards(program: str):
    """The guard of each conditional expression's first branch, in source order."""
    ix = build_index(textwrap.dedent(program), "m", False)
    evaluator = Evaluator(ix)
    tests = [n.test for n in ast.walk(ix.module) if isinstance(n, ast.IfExp)]
    return [evaluator.guard(t, True, ix.root) for t in tests]


def test_the_guard_names_the_switch_and_the_value_its_branch_runs_under():
    (field,) = _guards(TRAIN)
    assert (field.switch, field.switch_on, field.switch_passed) == ("disable_flash_attn2", False, True)
    (option,) = _guards(ARGPARSE)
    assert (option.switch, option.switch_on, option.switch_passed) == ("no_fa2", True, True)
    stored_false = ARGPARSE.replace('"store_true"', '"store_false"')
    (option,) = _guards(stored_false)
    assert (option.switch, option.switch_passed) == ("no_fa2", False)


@pytest.mark.parametrize("test", ["args.fa2 and args.bf16", "args.model == 'x'", "use_fa2", "extra.disable_flash_attn2 > 0"])
def test_a_test_that_is_no_switch_alone_names_none(test):
    program = f"""\
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--fa2", action="store_true")
parser.add_argument("--bf16", action="store_true")
parser.add_argument("--model")
args = parser.parse_args()
use_fa2 = args.fa2 or True
x = 1 if {test} else 2
"""
    assert [g.switch for g in _guards(program)] == [""]


class _Shipped:
    """Launches by script, as ``ShippedFiles.launches_for`` gives them."""

    def __init__(self, *args_lists):
        self.launches = [("run.sh", Launch("train.py", None, tuple(args), 1)) for args in args_lists]

    def launches_for(self, script):
        return self.launches if script == "train.py" else []


def test_switched_by_launches_adds_a_by_hand_guard_only_where_every_launch_turns_it_off():
    guard = Guard("not extra.off", True, False, False, switch="off", switch_on=False)
    atom = Possible(CONST, "flash_attention_2", guards=(guard,))
    other = Possible(CONST, "sdpa")
    (fa2, sdpa) = switched_by_launches((atom, other), _Shipped(["--off", "True"], ["--off"]), lambda v: "train.py")
    assert any(g.user_choice for g in fa2.guards) and sdpa is other
    unchanged = (atom, other)
    assert switched_by_launches(unchanged, _Shipped(["--off", "True"], ["--lr", "1"]), lambda v: "train.py") == unchanged
    assert switched_by_launches(unchanged, _Shipped(), lambda v: "train.py") == unchanged
    assert switched_by_launches(unchanged, _Shipped(["--off", "True"]), lambda v: "other.py") == unchanged
