"""MP402 and type promotion: a bool or integer tensor with a Python float (``mask * 1.0``,
``(ids == pad) * 1.0``), or divided by a Python number, is a float32 tensor (PyTorch's default
dtype) whatever dtype the model's weights have, so a ``-1e9`` fill on it cannot overflow
float16. A float16 tensor with a Python float stays float16 and is still reported."""
from conftest import lint

CODE = "MP402"

MODEL = """
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qk = nn.Linear(8, 16)

    def forward(self, x, mask):
        q, k = self.qk(x).chunk(2, dim=-1)
        scores = q @ k.transpose(-1, -2)
        {line}
        return scores + bias


model = Attention().half()
"""


def _lines(line):
    return [d.span.line for d in lint(MODEL.format(line=line), CODE)]


def test_a_bool_mask_times_a_python_float_is_float32():
    # `mask` is the mask of the fill itself: masked_fill demands a bool mask
    assert _lines("bias = (mask * 1.0).masked_fill(mask, -1e9).to(torch.bfloat16)") == []


def test_a_name_used_as_a_where_condition_is_a_bool_mask():
    assert _lines("s = torch.where(mask, scores.float(), 0.0)\n        bias = (mask * 1.0).masked_fill(s > 0, -1e9)") == []


def test_a_comparison_or_bitwise_mask_with_a_python_float_is_float32():
    assert _lines("bias = ((x.sum(-1) > 0) * 1.0).masked_fill(mask, -1e9)") == []
    assert _lines("pad = (mask | mask.transpose(-1, -2))\n        bias = (pad / 2).masked_fill(mask, -1e9)") == []
    assert _lines("bias = (1.0 * mask.long()).masked_fill(mask, -1e9)") == []


def test_a_float16_tensor_times_a_python_float_stays_float16():
    (d,) = lint(MODEL.format(line="bias = (scores * 1.0).masked_fill(mask, -1e9)"), CODE)
    assert d.span.line == 13


def test_an_operand_of_unknown_dtype_is_not_taken_for_a_mask():
    # `x` is never used as a mask: `x * 1.0` has x's dtype, which may be float16
    (d,) = lint(MODEL.format(line="bias = (x * 1.0).masked_fill(mask, -1e9)"), CODE)
    assert d.span.line == 13


def test_an_integer_times_a_python_int_is_not_float32():
    # bool * 1 is int64 (no float16 either), but nothing here says float32: judged as before
    (d,) = lint(MODEL.format(line="bias = (scores + mask * 1).masked_fill(mask, -1e9)"), CODE)
    assert d.span.line == 13


def test_a_module_that_changes_the_default_dtype_is_not_judged_by_float32():
    src = MODEL.format(line="bias = (mask * 1.0).masked_fill(mask, -1e9)") + "torch.set_default_dtype(torch.float16)\n"
    (d,) = lint(src, CODE)
    assert d.span.line == 13


def test_a_comment_that_names_set_default_dtype_changes_nothing():
    """Only a call of ``torch.set_default_dtype`` changes what a promotion gives, never a word in
    a comment (findings never depend on comments)."""
    src = MODEL.format(line="bias = (mask * 1.0).masked_fill(mask, -1e9)") + "# no torch.set_default_dtype here\n"
    assert lint(src, CODE) == []
