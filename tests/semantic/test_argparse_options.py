"""What an argparse option holds: its default in a run that does not pass it, and what passing
it stores, marked as the user's choice (so a rule can tell "on by default" from "on when the
user asks for it")."""
import pytest
from conftest import dedent, lint

from precision_lint.semantic.evaluate import Evaluator
from precision_lint.semantic.index import build_index
from precision_lint.semantic.values import CONST


def _option_values(option_line):
    src = dedent(
        """
        import argparse
        parser = argparse.ArgumentParser()
        OPTION
        args = parser.parse_args()
        flag = args.flag
        """
    ).replace("OPTION", option_line)
    index = build_index(src, "m")
    evaluator = Evaluator(index)
    flag = next(a for a in index.root.assignments["flag"])
    values = evaluator.values(flag.value, index.root)
    return {(v.value, any(g.user_choice for g in v.guards)) for v in values if v.kind == CONST}


@pytest.mark.parametrize(
    "line, expected",
    [
        ('parser.add_argument("--flag", action="store_true")', {(False, False), (True, True)}),
        ('parser.add_argument("--flag", action="store_false")', {(True, False), (False, True)}),
        ('parser.add_argument("--flag", action="store_true", default=True)', {(True, False), (True, True)}),
        ('parser.add_argument("--flag", action="store_false", default=False)', {(False, False), (False, True)}),
    ],
)
def test_the_default_is_plain_and_passing_the_option_is_the_users_choice(line, expected):
    assert _option_values(line) == expected


def test_an_inverted_switch_is_off_by_default_and_conflicts_only_when_passed():
    src = """
        import argparse
        from transformers import Trainer, TrainingArguments

        parser = argparse.ArgumentParser()
        parser.add_argument("--no_fp16", action="store_false")
        parser.add_argument("--bf16", action="store_true", default=True)
        args = parser.parse_args()
        targs = TrainingArguments(output_dir="o", fp16=not args.no_fp16, bf16=args.bf16)
    """
    found = lint(src, "MP102")
    assert len(found) == 1
    assert "when the user passes `--no_fp16`" in found[0].message
    assert "always" not in found[0].message


def test_two_opt_in_switches_are_the_users_to_combine():
    src = """
        import argparse
        from transformers import TrainingArguments

        parser = argparse.ArgumentParser()
        parser.add_argument("--fp16", action="store_true")
        parser.add_argument("--use_bf16", action="store_true")
        args = parser.parse_args()
        targs = TrainingArguments(output_dir="o", fp16=args.fp16, bf16=args.use_bf16)
    """
    assert lint(src, "MP102") == []


def test_a_flag_on_by_default_beside_a_hard_coded_one_is_always_a_conflict():
    src = """
        import argparse
        from transformers import TrainingArguments

        parser = argparse.ArgumentParser()
        parser.add_argument("--no_fp16", action="store_true")
        args = parser.parse_args()
        targs = TrainingArguments(output_dir="o", fp16=not args.no_fp16, bf16=True)
    """
    found = lint(src, "MP102")
    assert len(found) == 1 and "(always)" in found[0].message


def _guards_of(src: str):
    index = build_index(dedent(src), "m")
    evaluator = Evaluator(index)
    wdt = next(a for a in index.root.assignments["wdt"])
    return {(v.value, g.text, g.option) for v in evaluator.values(wdt.value, index.root) for g in v.guards}


def test_a_guard_reading_a_parsed_trainingarguments_switch_names_its_option():
    src = """
        import torch
        from transformers import HfArgumentParser, TrainingArguments
        targs, = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
        on = targs.fp16
        wdt = torch.float16 if on else torch.float32
        """
    # the positive branch's guard is the `--fp16` a Trainer given `targs` reads, under any name
    assert ("float16", "on", "fp16") in _guards_of(src)
    # a condition that reads more than the switch is not the switch
    assert ("float16", "on and x", "") in _guards_of(src.replace("if on else", "if on and x else").replace("on = ", "x = targs.bf16\n        on = "))


def test_an_argparse_option_of_the_scripts_own_is_no_trainingarguments_switch():
    src = """
        import argparse
        import torch
        p = argparse.ArgumentParser()
        p.add_argument("--half_weights", action="store_true")
        a = p.parse_args()
        wdt = torch.float16 if a.half_weights else torch.float32
        """
    assert {g[2] for g in _guards_of(src)} == {""}
