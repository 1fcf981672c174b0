"""MP401 numerics: run the code the real fixer produces on float16 tensors (CPU).

A small distillation script is linted and fixed with ``precision_lint.fix_source``; the original
and the fixed functions are then executed on the same float16 inputs. Shown here:

- the original loss is inf (a batchmean total past 65504; a loss scale of 65536) or NaN (a teacher
  whose fp16 forward overflows to ±inf); the fixed loss and its gradient are finite;
- on logits with |x| < 100 the fixed loss equals the float64 reference within 1e-3 (relative),
  while the seeds' ±2.5 clamp (also produced by the fixer, ``mode = "clamp"``) is off by > 10%.
"""
import math

import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402

from conftest import config, dedent  # noqa: E402
from precision_lint import check_source, fix_source  # noqa: E402

SCRIPT = dedent(
    '''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    T = 2.0


    def kd_loss(student_logits, teacher_logits):
        log_p = F.log_softmax(student_logits / T, dim=-1)
        q = F.softmax(teacher_logits / T, dim=-1)
        return F.kl_div(log_p, q, reduction="batchmean") * T * T


    def distill_step(student, teacher, x, loss_scale=1.0):
        s = student(x)
        with torch.no_grad():
            t = teacher(x)
        return kd_loss(s, t) * loss_scale


    if __name__ == "__main__":
        teacher = nn.Linear(16, 32000).half()
        student = nn.Linear(16, 32000).half()
        distill_step(student, teacher, torch.randn(4, 16).half())
    '''
)
SEED_CLAMP = 2.5


def load(source: str):
    namespace = {"__name__": "kd_script"}
    exec(compile(source, "kd_script.py", "exec"), namespace)
    return namespace


def cfg(**options):
    return config(rules={"MP401": options}) if options else config()


@pytest.fixture(scope="module")
def scripts():
    fixed = fix_source(SCRIPT, path="kd_script.py", config=cfg(), select=["MP401"])
    clamped = fix_source(
        SCRIPT, path="kd_script.py", config=cfg(mode="upcast-and-clamp"), select=["MP401"]
    )
    seed = fix_source(
        SCRIPT,
        path="kd_script.py",
        config=cfg(mode="clamp", **{"logit-clamp": SEED_CLAMP}),
        unsafe=True,
        select=["MP401"],
    )
    return {"original": load(SCRIPT), "upcast": load(fixed), "upcast-and-clamp": load(clamped),
            "seed": load(seed), "texts": (fixed, clamped, seed)}


def reference(s: torch.Tensor, t: torch.Tensor) -> float:
    """The loss of the original code in float64 on the very same (half-rounded) logits."""
    return load(SCRIPT)["kd_loss"](s.double(), t.double()).item()


def logits(rows: int, vocab: int, seed: int, scale: float = 100.0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return ((torch.rand(rows, vocab, generator=g) * 2 - 1) * scale).half()


def test_the_fixer_wrote_what_runs_here(scripts):
    fixed, clamped, seed = scripts["texts"]
    assert check_source(SCRIPT, "kd_script.py", cfg(), select=["MP401"])
    assert "F.log_softmax(student_logits.float() / T, dim=-1)" in fixed
    assert "F.softmax(teacher_logits.float() / T, dim=-1)" in fixed
    assert "teacher_logits.float().clamp(-65504.0, 65504.0) / T" in clamped
    assert "teacher_logits.clamp(-2.5, 2.5) / T" in seed
    assert check_source(fixed, "kd_script.py", cfg(), select=["MP401"]) == []


def test_batchmean_total_past_65504_is_inf_and_fixed(scripts):
    # 2048 rows: the KL summed before the batchmean division passes float16's maximum
    s, t = logits(2048, 512, 1), logits(2048, 512, 2)
    original = scripts["original"]["kd_loss"](s, t)
    assert original.dtype == torch.float16 and math.isinf(original.item())
    s.requires_grad_(True)
    fixed = scripts["upcast"]["kd_loss"](s, t)
    assert torch.isfinite(fixed)
    assert fixed.item() == pytest.approx(reference(s.detach(), t), rel=1e-3)
    fixed.backward()
    assert s.grad.dtype == torch.float16 and torch.isfinite(s.grad).all()


def test_loss_scale_overflow_is_fixed(scripts):
    # realistic LM shape (vocab 32000) and a 65536 loss scale applied to the loss
    student, teacher = nn.Linear(16, 32000).half(), nn.Linear(16, 32000).half()
    with torch.no_grad():
        teacher.weight.mul_(40.0)  # teacher logits in the tens, as trained LMs have
    x = torch.randn(8, 16).half()
    original = scripts["original"]["distill_step"](student, teacher, x, loss_scale=65536.0)
    assert math.isinf(original.item())
    fixed = scripts["upcast"]["distill_step"](student, teacher, x, loss_scale=65536.0)
    assert torch.isfinite(fixed)
    fixed.backward()
    # the scaled gradient itself may overflow in fp16 (GradScaler then skips the step);
    # unscaled, the fixed loss's gradient is finite
    student.zero_grad()
    scripts["upcast"]["distill_step"](student, teacher, x).backward()
    assert torch.isfinite(student.weight.grad).all()


def test_teacher_overflowing_to_inf_needs_the_clamp(scripts):
    # a tiny fp16 teacher whose forward overflows: some logits are ±inf
    torch.manual_seed(0)
    student, teacher = nn.Linear(16, 32000).half(), nn.Linear(16, 32000).half()
    with torch.no_grad():
        teacher.weight[:10].mul_(1e4)
    x = (torch.randn(4, 16) * 10).half()
    assert torch.isinf(teacher(x)).any()
    assert math.isnan(scripts["original"]["distill_step"](student, teacher, x).item())
    # the upcast alone cannot repair an infinity that already exists (the page says so)
    assert math.isnan(scripts["upcast"]["distill_step"](student, teacher, x).item())
    loss = scripts["upcast-and-clamp"]["distill_step"](student, teacher, x)
    assert torch.isfinite(loss)
    loss.backward()
    assert torch.isfinite(student.weight.grad).all() and torch.isfinite(student.bias.grad).all()


@pytest.mark.parametrize("scale", [100.0, 20.0, 5.0])
def test_fixed_loss_equals_float64_and_seed_clamp_does_not(scripts, scale):
    # LM-shaped logits, |x| < 100 (finite in the original too)
    s, t = logits(8, 32000, 3, scale), logits(8, 32000, 4, scale)
    ref = reference(s, t)
    for mode in ("upcast", "upcast-and-clamp"):
        got = scripts[mode]["kd_loss"](s, t)
        assert got.dtype == torch.float32
        assert got.item() == pytest.approx(ref, rel=1e-3), mode
    seed = scripts["seed"]["kd_loss"](s, t).item()
    assert abs(seed - ref) / ref > 0.10


def test_clamp_at_65504_leaves_finite_half_logits_untouched(scripts):
    # every finite float16 value lies within ±65504: the default clamp is the identity on them
    s, t = logits(4, 32000, 5, 60000.0), logits(4, 32000, 6, 60000.0)
    a = scripts["upcast"]["kd_loss"](s, t)
    b = scripts["upcast-and-clamp"]["kd_loss"](s, t)
    assert torch.equal(a, b)
