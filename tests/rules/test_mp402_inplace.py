"""MP402: a constant beyond float16's range added in place into a float16 tensor.

``scores + (1.0 - mask) * -1e9`` is float32 (an integer mask times a Python float), so an
out-of-place additive mask never overflows. ``scores += (1.0 - mask) * -1e9`` computes the same
float32 sum and writes it back into ``scores``, whose dtype an in-place update keeps: a float16
``scores`` gets -inf, and a fully masked row (left padding) softmaxes to NaN. The tensor's
dtype is judged as a masking call's is; the constant is followed through arithmetic, views,
casts and local variables into the update.
"""
import pytest

from conftest import dedent, fix, lint

CODE = "MP402"

LOCAL = """
import torch

def attend(q, k, keep):
    with torch.autocast("cuda", dtype=DTYPE):
        s = q @ k.transpose(-2, -1)
        LINE
        return s.softmax(-1)
"""


def local(line: str, dtype: str = "torch.float16") -> str:
    return LOCAL.replace("LINE", line).replace("DTYPE", dtype)


@pytest.mark.parametrize(
    "line, shown",
    [
        ("s += (1.0 - keep) * -1e9", "`s += ...` (line 6) adds `-1e9`"),
        ("s -= (1 - keep.float()) * 1e9", "`s -= ...` (line 6) subtracts `1e9`"),
        ("s.add_((1.0 - keep) * -1e9)", "`s.add_(...)` (line 6) adds `-1e9`"),
        ("s.sub_(other=(1.0 - keep) * 1e10)", "`s.sub_(...)` (line 6) subtracts `1e10`"),
        ("s[:, :2] += (1.0 - keep[:, :2]) * -1e9", "`s[:, :2] += ...` (line 6) adds `-1e9`"),
        ("torch.add(s, (1.0 - keep) * -1e9, out=s)", "`torch.add(..., out=s)` (line 6) adds `-1e9`"),
        # the constant travels through views, a sign, a division of it and a cast
        ("s += (-(1.0 - keep) * 1e9 / 2).unsqueeze(1).to(s.device)", "adds `1e9`"),
    ],
)
def test_an_in_place_update_under_fp16_autocast(line, shown):
    (d,) = lint(local(line), CODE)
    assert d.span.line == 6 and shown in d.message
    assert "float16, where it becomes -inf (a fully masked row softmaxes to NaN)" in d.message
    assert "inside an fp16 autocast region" in d.message
    assert "`s.masked_fill(<mask>, torch.finfo(s.dtype).min)`" in d.message
    assert d.fix is None  # report only: no edit of an additive mask is safe for every mask


def test_a_positive_constant_becomes_inf():
    (d,) = lint(local("s += (1.0 - keep) * 1e9"), CODE)
    assert "becomes inf" in d.message and "finfo(s.dtype).max" in d.message


def test_the_minimind_shape_in_model_code_of_an_fp16_run():
    """Attention scores of model code, a 0/1 mask from the data, fp16 autocast in the run."""
    src = """
    import math
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.qk = nn.Linear(4, 4)

        def forward(self, x, keep):
            q = self.qk(x)
            scores = q @ q.transpose(-2, -1) / math.sqrt(4)
            scores += torch.full((3, 3), float("-inf")).triu(1)
            if keep is not None: scores += (1.0 - keep.unsqueeze(1)) * -1e9
            return F.softmax(scores.float(), -1)

    net = Attn().cuda()
    dtype = torch.bfloat16 if ARG == "bfloat16" else torch.float16
    with torch.autocast("cuda", dtype=dtype):
        p = net(torch.randn(1, 3, 4).cuda(), torch.tensor([[0, 1, 1]]).cuda())
    """
    (d,) = lint(src.replace("ARG", "input()"), CODE)
    assert d.span.line == 15 and "`scores += ...` (line 15)" in d.message
    assert "model code, and the run uses fp16 autocast" in d.message
    assert d.related and d.related[0].span.line == 20
    assert fix(dedent(src.replace("ARG", "input()")), CODE) == dedent(src.replace("ARG", "input()"))
    # the same model where the run's autocast is certainly bf16: bf16 holds -1e9
    assert lint(src.replace('dtype = torch.bfloat16 if ARG == "bfloat16" else torch.float16', "dtype = torch.bfloat16"), CODE) == []


@pytest.mark.parametrize(
    "src, line",
    [
        (  # a tensor made float16 here; the mask built in a variable first, with a module constant
            """
            import torch
            NEG = -1e9
            def f(x, keep):
                s = x.half() @ x.half().T
                ext = (1.0 - keep) * NEG
                s += ext[None]
                return s
            """,
            2,
        ),
        (  # a helper whose only call passes a float16 tensor
            """
            import torch
            def hide(scores, keep):
                scores += (1.0 - keep) * -1e9
                return scores.softmax(-1)
            r = torch.randn(4, 4).half()
            hide(r, torch.ones(4, 4))
            """,
            3,
        ),
        (  # a model cast to float16
            """
            import torch
            from torch import nn
            class Attn(nn.Module):
                def forward(self, q, keep):
                    s = q @ q.transpose(-2, -1)
                    s += (1 - keep) * -1e9
                    return s.softmax(-1)
            net = Attn().half()
            """,
            6,
        ),
    ],
)
def test_other_ways_the_updated_tensor_is_float16(src, line):
    (d,) = lint(src, CODE)
    assert d.span.line == line and "in place" in d.message


def test_an_additive_mask_cast_to_the_models_dtype_is_reported_once():
    """The mask cast to float16 overflows before the update: today's additive finding stands."""
    src = """
    import torch
    from torch import nn
    class Attn(nn.Module):
        def forward(self, q, keep):
            s = q @ q.transpose(-2, -1)
            s += (1.0 - keep.to(q.dtype)) * -1e9
            return s.softmax(-1)
    net = Attn().half()
    """
    (d,) = lint(src, CODE)
    assert "additive mask constant" in d.message


@pytest.mark.parametrize(
    "src",
    [
        # out of place: the sum is float32
        local("s = s + (1.0 - keep) * -1e9"),
        # bf16 autocast, or a constant float16 holds
        local("s += (1.0 - keep) * -1e9", "torch.bfloat16"),
        local("s += (1.0 - keep) * -1e4"),
        local("s += (1.0 - keep) * -65504.0"),
        # the updated tensor is float32
        local("s = s.float()\n        s += (1.0 - keep) * -1e9"),
        local("t = torch.zeros_like(s, dtype=torch.float32)\n        t += (1.0 - keep) * -1e9"),
        # a divisor makes a value smaller; other calls give another value
        local("s += keep / 1e9"),
        local("s += torch.sin(keep * 1e5)"),
        local("s += (keep * 1e9).clamp(-10, 10)"),
        # counters and totals: Python numbers and integers, not float16 tensors
        local("total = 0\n        total += keep.numel() * 1e9"),
        local("n = len(keep)\n        n += 2 * 1e9"),
        # autocast switched off around the update, inside the fp16 region
        local("with torch.autocast('cuda', enabled=False):\n            t = q.float() @ k.float().T\n            t += (1.0 - keep) * -1e9"),
        # `*=` is no additive mask
        local("s *= 1e9"),
    ],
)
def test_negatives(src):
    assert lint(src, CODE) == []


MODEL = """
import torch
from torch import nn
class Attn(nn.Module):
    DECORATOR
    def forward(self, q, keep):
        s = SCORES
        s += (1.0 - keep) * -1e9
        return s.softmax(-1)
net = Attn().cuda()
with torch.autocast("cuda", dtype=torch.float16):
    net(torch.randn(2, 2), torch.ones(2, 2))
"""


@pytest.mark.parametrize(
    "decorator, scores",
    [
        ("@torch.autocast('cuda', enabled=False)", "q @ q.transpose(-2, -1)"),  # autocast off in forward
        ("", "(q @ q.transpose(-2, -1)).float()"),  # float32 scores
        ("", "(q @ q.transpose(-2, -1)).to(torch.float32)"),
    ],
)
def test_model_code_whose_scores_are_not_float16(decorator, scores):
    assert lint(MODEL.replace("DECORATOR", decorator).replace("SCORES", scores), CODE) == []
    # the same model with float16 scores is reported
    assert len(lint(MODEL.replace("DECORATOR", "").replace("SCORES", "q @ q.transpose(-2, -1)"), CODE)) == 1


def test_model_code_of_a_run_with_no_float16_is_silent():
    assert lint(MODEL.replace("DECORATOR", "").replace("SCORES", "q @ q.transpose(-2, -1)").replace("torch.float16", "torch.float32"), CODE) == []


def test_an_in_place_update_keeps_the_dtype_for_other_shapes_too():
    """After ``s += bias`` the name still holds the autocast product: an eps added later meets
    a float16 tensor (before, the update hid what ``s`` was)."""
    src = """
    import torch
    def spread(q, k, bias):
        with torch.autocast("cuda"):
            s = torch.einsum("id,jd->ij", q, k)
            s += bias
            return s / (s.max(-1).values - s.min(-1).values + 1e-8)
    """
    (d,) = lint(src, CODE)
    assert "adds 0 in float16" in d.message and "einsum" in d.message


def test_the_failure_and_the_fix_on_cpu():
    """What the message says, on CPU: the in-place update stores -inf in float16 and a fully
    masked row gives NaN; out of place (float32) and in float32 it is finite; masked_fill with
    finfo.min is finite; adding finfo.min in place overflows where a score is below -16."""
    torch = pytest.importorskip("torch")
    scores = torch.tensor([[-20.0, -3.0, 5.0], [1.0, 2.0, 3.0]]).half()
    keep = torch.tensor([[0, 0, 0], [1, 1, 0]])  # the first row: every key masked (left padding)

    s = scores.clone()
    s += (1.0 - keep) * -1e9
    assert s.dtype == torch.float16 and torch.isinf(s[0]).all()
    assert torch.isnan(s.softmax(-1)[0]).all()
    t = scores.clone()
    t.add_((1.0 - keep) * -1e9)
    assert torch.isnan(t.softmax(-1)[0]).all()

    out_of_place = scores + (1.0 - keep) * -1e9
    assert out_of_place.dtype == torch.float32 and torch.isfinite(out_of_place.softmax(-1)).all()
    f32 = scores.float()
    f32 += (1.0 - keep) * -1e9
    assert torch.isfinite(f32.softmax(-1)).all()

    fixed = scores.masked_fill(keep == 0, torch.finfo(scores.dtype).min)
    assert torch.isfinite(fixed.softmax(-1)).all()
    assert torch.allclose(fixed.softmax(-1)[1].float(), torch.tensor([0.2689, 0.7311, 0.0]), atol=1e-3)

    added = scores.clone()
    added += (1.0 - keep) * torch.finfo(added.dtype).min
    assert torch.isinf(added[0, 0]) and torch.isfinite(added[0, 1:]).all()  # -20 - 65504 overflows


def test_autocast_switched_off_on_the_cpu_leaves_the_cuda_region_on():
    src = local("with torch.autocast('cpu', enabled=False):\n            t = q @ k.T\n            t += (1.0 - keep) * -1e9")
    (d,) = lint(src, CODE)
    assert "runs in float16 under fp16 autocast" in d.message
