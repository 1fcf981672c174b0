"""MP402 and a clamp's bound that float16 rounds onto the value it keeps a probability off.

``p = torch.sigmoid(logits).clamp(eps, 1 - eps)`` then ``log(p)`` and ``log(1 - p)`` (focal and
binary cross-entropy losses written by hand): in float16 the value just below 1 is 1 - 2**-11, so
``1 - 1e-7`` is 1.0 and ``1e-8`` is 0.0. The clamp keeps nothing off, a sigmoid of a logit above
about 8 is 1.0, and the log is -inf: the loss is inf or NaN (checked on CPU: ``torch.log(1 -
p)`` is ``-inf`` for such a float16 ``p``). ``clamp`` is no autocast op: it runs in its input's
dtype, float16 for the output of an fp16 autocast region's layers. Each test is a small program
of that shape.
"""
import pytest
from conftest import lint

CODE = "MP402"

PROGRAM = """
import torch
import torch.nn as nn


class FocalLoss(nn.Module):
    def __init__(self, eps={eps}):
        super().__init__()
        self.eps = eps

    def forward(self, logits, target):
        p = {clamp}
        return -(target * torch.log(p) + (1 - target) * torch.log(1 - p)).mean()


model = nn.Linear(8, 1).cuda()
opt = torch.optim.AdamW(model.parameters())
scaler = torch.cuda.amp.GradScaler()
crit = FocalLoss()
for x, y in loader:
    with torch.autocast("cuda", dtype={dtype}):
        loss = crit(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
"""


def _lint(eps="1e-7", clamp="torch.sigmoid(logits).clamp(self.eps, 1 - self.eps)", dtype="torch.float16"):
    return lint(PROGRAM.format(eps=eps, clamp=clamp, dtype=dtype), CODE)


def test_an_upper_bound_that_rounds_to_one_under_fp16_autocast():
    (d,) = _lint()
    assert "the clamp's upper bound `1 - self.eps` is 1.0 in float16" in d.message
    assert "the log of `1 - p` is -inf" in d.message and "run uses fp16 autocast" in d.message
    assert d.fix is None


@pytest.mark.parametrize("clamp", [
    "torch.clamp(torch.sigmoid(logits), 1e-8, 1 - 1e-7)",
    "torch.sigmoid(logits).clamp(min=1e-8, max=1.0 - 1e-6)",
])
def test_both_bounds_of_a_clamp_round(clamp):
    found = sorted(d.message.split(" is ")[0] for d in _lint(clamp=clamp))
    assert [m.split("`")[0] for m in found] == ["the clamp's lower bound ", "the clamp's upper bound "]


@pytest.mark.parametrize("eps, clamp, dtype", [
    ("1e-3", "torch.sigmoid(logits).clamp(self.eps, 1 - self.eps)", "torch.float16"),  # 0.999 holds
    ("1e-7", "torch.sigmoid(logits).clamp(self.eps, 1 - self.eps)", "torch.bfloat16"),  # bf16: no run in fp16 autocast
    ("1e-7", "torch.sigmoid(logits.float()).clamp(self.eps, 1 - self.eps)", "torch.float16"),  # made float32 first
    ("1e-7", "torch.sigmoid(logits).clamp(0, 1)", "torch.float16"),  # bounds float16 holds
])
def test_bounds_float16_holds_or_no_float16_tensor(eps, clamp, dtype):
    assert _lint(eps=eps, clamp=clamp, dtype=dtype) == []


def test_a_clamp_no_log_reads_is_left_alone():
    src = PROGRAM.format(eps="1e-7", clamp="torch.sigmoid(logits).clamp(self.eps, 1 - self.eps)", dtype="torch.float16")
    src = src.replace("torch.log(p)", "p").replace("torch.log(1 - p)", "(1 - p)")
    assert lint(src, CODE) == []


def test_a_clamp_inside_the_log():
    src = """
    import torch

    x = torch.randn(4, dtype=torch.float16)
    loss = -torch.log(torch.sigmoid(x).clamp(min=1e-8)).mean()
    """
    (d,) = lint(src, CODE)
    assert "lower bound `1e-8` is 0 in float16" in d.message and "the tensor is float16" in d.message


def test_a_softmax_under_fp16_autocast_is_float32():
    """``softmax`` is an op fp16 autocast runs in float32: the clamp after it is float32."""
    assert _lint(clamp="torch.softmax(logits, dim=-1).clamp(self.eps, 1 - self.eps)") == []


SCHEDULE = """
import torch
import torch.nn as nn


class Schedule(nn.Module):
    def __init__(self, steps=1000):
        super().__init__()
        b = torch.linspace(1e-4, 0.02, steps)
        var = b * (1.0 - torch.cumprod(1.0 - b, 0))
        self.register_buffer("log_var", torch.log(var.clamp(min=1e-20)))
        {more}

    def forward(self, x, t):
        return x * self.log_var[t]


sched, net = Schedule().cuda(), nn.Linear(16, 16).cuda()
opt, scaler = torch.optim.AdamW(net.parameters()), torch.amp.GradScaler("cuda")
with torch.autocast("cuda", dtype=torch.float16):
    loss = sched(net(torch.randn(8, 16, device="cuda")), 3).pow(2).mean()
scaler.scale(loss).backward()
"""


def test_a_clamp_computed_at_construction_is_float32():
    """Review 29c: a noise schedule's ``log(var.clamp(min=1e-20))`` in ``__init__`` runs in
    float32 (no autocast reaches the construction, and it runs before any ``.half()``); its
    result, about -46, keeps in float16 when the buffer is cast later."""
    assert lint(SCHEDULE.format(more="pass"), CODE) == []


def test_a_constant_stored_at_construction_or_a_clamp_of_a_float16_tensor_is_still_reported():
    stored = 'self.register_buffer("mask", torch.zeros(4, 4).masked_fill(torch.eye(4, dtype=torch.bool), -1e9))'
    (d,) = lint(SCHEDULE.format(more=stored).replace("Schedule().cuda()", "Schedule().cuda().half()"), CODE)
    assert "-1e9" in d.message
    half = "self.h = torch.log(torch.rand(3, dtype=torch.float16).clamp(min=1e-20))"
    (d,) = lint(SCHEDULE.format(more=half), CODE)
    assert "lower bound `1e-20` is 0 in float16" in d.message and d.span.line == 11  # the float16 one
