"""An argparse namespace handed to a helper of another module: the helper's ``args.X`` is the option.

``args = parser.parse_args()`` in ``train.py``, then ``build_trainer(args)`` in ``builders.py``
reading ``args.precision``: the value is the option's (its default "16-mixed", and what passing it
gives), as it is where the helper sits in the script itself. Before, the namespace as a whole was
unknown to the call record, so the helper's ``args.precision`` was unknown too (49a: a Lightning
run's fp16 autocast, and the ``masked_fill(-1e9)`` it overflows, were lost across the module
boundary). The call record keeps each option of the caller's parsers as a field of the argument
(``CallArg.fields``), and the join takes the field the helper reads.
"""
import os

from conftest import dedent, findings_in, write_tree

from precision_lint.semantic.calls import call_records
from precision_lint.semantic.evaluate import Evaluator
from precision_lint.semantic.index import build_index
from precision_lint.semantic.values import CONST

TRAIN = """\
import argparse

from asr.builders import build_model, build_trainer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--precision", default="{precision}", type=str)
    args = parser.parse_args()
    trainer = build_trainer(args)
    trainer.fit(build_model())


if __name__ == "__main__":
    main()
"""
BUILDERS = """\
import pytorch_lightning as pl

from asr.attention import SelfAttention


def build_model():
    return SelfAttention(32)


def build_trainer(args):
    return pl.Trainer(accelerator="cuda", devices=1, precision=args.precision)
"""
ATTENTION = """\
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.q = nn.Linear(d, d)

    def forward(self, x, pad_mask):
        scores = torch.matmul(self.q(x), x.transpose(1, 2))
        scores.masked_fill_(pad_mask, -1e9)
        return scores.softmax(-1)
"""


def project(tmp_path, precision):
    return write_tree(tmp_path / "p", {
        ".git/HEAD": "", "asr/__init__.py": "", "asr/train.py": TRAIN.format(precision=precision),
        "asr/builders.py": BUILDERS, "asr/attention.py": ATTENTION,
    })


def mp402(root):
    return [(os.path.relpath(d.path, root).replace(os.sep, "/"), d.span.line) for d in findings_in(root, ("MP402",))]


def test_the_helper_reads_the_option_the_script_parses(tmp_path):
    assert mp402(project(tmp_path, "16-mixed")) == [("asr/attention.py", 12)]


def test_a_float32_default_gives_the_helper_float32(tmp_path):
    assert mp402(project(tmp_path, "32-true")) == []


def test_the_call_record_holds_the_namespace_fields():
    src = dedent(TRAIN.format(precision="16-mixed"))
    index = build_index(src, "asr.train")
    (record,) = [r for r in call_records(index, Evaluator(index)) if r.callee.endswith("build_trainer")]
    (arg,) = record.args
    values, keys = arg.passed(("precision", "inner"))
    assert keys == ("inner",)
    assert [v.value for v in values if v.kind == CONST and not v.guards] == ["16-mixed"]


def test_a_value_known_as_a_whole_keeps_no_fields():
    # `cfg = Config()` handed over: its own values answer the helper, not an option table
    src = dedent("""\
        import argparse
        from helpers import run

        parser = argparse.ArgumentParser()
        parser.add_argument("--precision", default="16-mixed")
        args = parser.parse_args()
        run(args.precision)
        run("bf16-mixed")
        """)
    index = build_index(src, "train")
    records = [r for r in call_records(index, Evaluator(index)) if r.callee.endswith("run")]
    assert records and all(not a.fields for r in records for a in r.args)
