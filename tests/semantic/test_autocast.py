"""The autocast domain (``semantic/autocast.py``): which tensors fp16 autocast certainly computes
in float16, and the named constants float16 cannot hold (``ModuleIndex.named_half_misfits``)."""
import textwrap

from precision_lint.semantic.autocast import autocast_half
from precision_lint.semantic.evaluate import Evaluator
from precision_lint.semantic.index import build_index


def _answers(program: str):
    """``produced`` for the value returned by each function of ``program``, by name."""
    index = build_index(textwrap.dedent(program), "m")
    domain = autocast_half(index, Evaluator(index))
    out = {}
    for qualname, function in index.functions.items():
        for value, _ in function.returns:
            out[qualname.rsplit(".", 1)[-1]] = domain.produced(value, function)
    return out


PROGRAM = """
import torch

def product(q, k):
    with torch.autocast("cuda"):
        s = q @ k
        return s.max(-1).values - s.min(-1).values

def summed(q, k):
    with torch.autocast("cuda"):
        s = torch.matmul(q, k)
        return s.sum(-1)

def promoted(q, k, w):
    with torch.autocast("cuda"):
        s = torch.bmm(q, k)
        return s * w

def scaled(q, k):
    with torch.autocast("cuda"):
        s = torch.bmm(q, k)
        return s[0] * 0.5

def reciprocal(q, k):
    with torch.autocast("cuda"):
        return 1 / torch.mm(q, k)

def outside(q, k):
    return q @ k

def inner(q, k):
    return torch.einsum("ij,jk->ik", q, k)

def caller(q, k):
    with torch.cuda.amp.autocast():
        return inner(q, k)
"""


def test_products_and_what_keeps_their_dtype():
    answers = _answers(PROGRAM)
    assert answers["product"].startswith("`q @ k` (line 6) runs in float16 under fp16 autocast (line 5)")
    assert answers["scaled"].startswith("`torch.bmm(...)`")
    assert answers["inner"].startswith("`torch.einsum(...)` (line 32) runs in float16 under fp16 autocast (the call on line 36")


def test_float32_ops_unknown_operands_and_code_outside_autocast_are_no_answer():
    answers = _answers(PROGRAM)
    for name in ("summed", "promoted", "reciprocal", "outside", "caller"):
        assert answers[name] is None, name


def test_named_constants_that_float16_cannot_hold():
    index = build_index(textwrap.dedent("""
        EPS = 1e-8
        SMALL = 1e-4

        def f(x, flag):
            eps = 1e-10 if flag else 1e-3
            a = x + EPS
            b = x + SMALL
            c = x - eps
            EPS2 = 1e-9
            return a, b, c, x + EPS2
    """), "m")
    found = sorted((m.literal.id, m.value) for m in index.named_half_misfits())
    assert found == [("EPS", 1e-8), ("EPS2", 1e-9)]


NAMED_REGIONS = """
from contextlib import nullcontext

import torch

dev = "cuda" if torch.cuda.is_available() else "cpu"
amp = torch.autocast("cuda", dtype=torch.float16)
by_device = nullcontext() if dev == "cpu" else torch.autocast(device_type=dev, dtype=torch.float16)
by_switch = nullcontext() if fast else torch.autocast("cuda", dtype=torch.float16)

def named(q, k):
    with amp:
        return q @ k

def device_chosen(q, k):
    with by_device:
        return q @ k

def switch_chosen(q, k):
    with by_switch:
        return q @ k
"""


def test_a_region_held_by_a_name():
    """``with amp:`` where ``amp`` holds the autocast call; ``nullcontext() if dev == "cpu"
    else torch.autocast(...)`` is autocast on every GPU run (review 21's held-out: a KD loss
    computed outside such a region); a null context chosen by another test (a user's switch)
    may be what a GPU run gets: no region certainly there."""
    answers = _answers(NAMED_REGIONS)
    assert answers["named"].startswith("`q @ k` (line 13) runs in float16 under fp16 autocast (line 7)")  # the call that makes it
    assert answers["device_chosen"].startswith("`q @ k` (line 17) runs in float16 under fp16 autocast")
    assert answers["switch_chosen"] is None


MODULES = """
import torch
from torch import nn

class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8).cuda()
        self.norm = nn.LayerNorm(8)
        self.epsilon = 1e-8
        self.scale = 1e-8
        self.scale = 0.5

    def projected(self, x):
        with torch.autocast("cuda"):
            return self.proj(x).sigmoid()

    def normed(self, x):
        with torch.autocast("cuda"):
            return self.norm(x)

conv = nn.Conv2d(3, 8, 3).cuda()

def convolved(x):
    with torch.autocast("cuda"):
        return torch.relu(conv(x))

def activated(q, k):
    with torch.autocast("cuda"):
        return torch.nn.functional.gelu(q @ k)
"""


def test_module_calls_of_autocasts_float16_list_and_activations_keep_float16():
    """Review 27c/27d: ``self.kqv(x)`` of an ``nn.Linear``, ``head(x)`` of an ``nn.Conv2d``
    (moved with ``.cuda()``), through ``sigmoid``/``relu``/``gelu``: float16 under fp16
    autocast; a ``LayerNorm`` (autocast's float32 list) is no answer."""
    answers = _answers(MODULES)
    assert answers["projected"].startswith("`self.proj(...)` (a `Linear`")
    assert answers["convolved"].startswith("`conv(...)` (a `Conv2d`")
    assert answers["activated"].startswith("`q @ k`")
    assert answers["normed"] is None


def test_an_instance_attribute_holding_one_tiny_constant_is_a_named_constant():
    """Review 27c: T2T-ViT's ``self.epsilon = 1e-8`` added to a float16 einsum in ``forward``."""
    inline = build_index(textwrap.dedent(MODULES).replace(
        "    def normed(self, x):", "    def ratio(self, d):\n        return d + self.epsilon, d + self.scale\n\n    def normed(self, x):"), "m")
    found = sorted((m.literal.attr, m.value) for m in inline.named_half_misfits() if hasattr(m.literal, "attr"))
    assert found == [("epsilon", 1e-8)]  # `self.scale` is set twice, to two values
