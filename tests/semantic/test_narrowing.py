"""Narrowing a variable by the test around its read: ``if dtype == torch.bfloat16:
model.to(dtype=dtype)`` reads only bf16 there (review 19c's piecewise-rectified-flow shape: a
trainable model cast to the run's dtype only where that dtype is bf16; the fp16 run keeps fp32
weights, so fp16 loss scaling never meets float16 parameters)."""
import ast

import pytest

from conftest import dedent, lint

from precision_lint.semantic.evaluate import Evaluator
from precision_lint.semantic.index import build_index, nodes_of

HEAD = """
import torch
dtype = torch.float32
if mode == "fp16":
    dtype = torch.float16
elif mode == "bf16":
    dtype = torch.bfloat16
"""


def _dtypes_read(src: str) -> set:
    """The dtypes the last read of ``dtype`` may hold."""
    ix = build_index(dedent(HEAD) + dedent(src), "m")
    use = [n for n in nodes_of(ix.module) if type(n) is ast.Name and n.id == "dtype" and type(n.ctx) is ast.Load][-1]
    values = Evaluator(ix).values(use, ix.scope_of(use))
    return {v.value for v in values if v.kind == "dtype"}


@pytest.mark.parametrize(
    "src, expected",
    [
        ("if dtype == torch.bfloat16:\n    use(dtype)\n", {"bfloat16"}),
        ("if dtype is torch.bfloat16:\n    use(dtype)\n", {"bfloat16"}),
        ("if dtype != torch.float16:\n    use(dtype)\n", {"float32", "bfloat16"}),
        ("if dtype == torch.float16:\n    pass\nelse:\n    use(dtype)\n", {"float32", "bfloat16"}),
        ("if dtype in (torch.float16, torch.bfloat16):\n    use(dtype)\n", {"float16", "bfloat16"}),
        ("if dtype not in (torch.float16,):\n    use(dtype)\n", {"float32", "bfloat16"}),
        ("def f():\n    if dtype == torch.float16:\n        return\n    use(dtype)\n", {"float32", "bfloat16"}),  # an early exit
    ],
    ids=["eq", "is", "not-eq", "else-of-eq", "in", "not-in", "early-exit"],
)
def test_a_comparison_around_the_read_narrows_it(src, expected):
    assert _dtypes_read(src) == expected


@pytest.mark.parametrize(
    "src",
    [
        "if dtype == torch.bfloat16:\n    dtype = torch.float16\n    use(dtype)\n",  # rebound after the test
        "if dtype == other:\n    use(dtype)\n",  # compared with what is not a known dtype
        "if dtype == torch.bfloat16 or mode:\n    use(dtype)\n",  # not the comparison alone
    ],
    ids=["rebound", "unknown-comparator", "or"],
)
def test_no_narrowing_without_a_plain_comparison_of_the_same_assignments(src):
    assert "float16" in _dtypes_read(src)


TRAIN = """
import argparse
import torch
from accelerate import Accelerator
from torch import nn

ap = argparse.ArgumentParser()
ap.add_argument("--precision", default=None, choices=["no", "fp16", "bf16"])
opts = ap.parse_args()
acc = Accelerator(mixed_precision=opts.precision)
wdt = torch.float32
if acc.mixed_precision == "fp16":
    wdt = torch.float16
elif acc.mixed_precision == "bf16":
    wdt = torch.bfloat16
net = nn.Linear(16, 16)
if TEST:
    net.to(acc.device, dtype=wdt)
opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
net, opt = acc.prepare(net, opt)
acc.backward(net(torch.randn(4, 16)).sum())
opt.step()
"""


def test_a_model_cast_only_where_the_dtype_is_bf16_is_no_float16_model():
    assert lint(TRAIN.replace("TEST", "wdt == torch.bfloat16"), "MP101") == []
    assert lint(TRAIN.replace("TEST", "wdt == torch.bfloat16"), "MP104") == []
    # where the test lets float16 through, the crash is there
    assert [d.code for d in lint(TRAIN.replace("TEST", "wdt != torch.float32"), "MP101")] == ["MP101"]
