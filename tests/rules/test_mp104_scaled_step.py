"""MP104: an Adam over float16 parameters stepped through a GradScaler that is on never runs:
``scaler.step(optimizer)`` unscales the float16 gradients first and raises ``ValueError:
Attempting to unscale FP16 gradients.`` (MP101's finding), so no eps is used (review 26d:
rl-knowledge-distillation). A scaler that may be off, or a plain ``optimizer.step()``, leaves
the eps finding."""
import pytest

from conftest import lint

STUDENT = """
import torch
from transformers import AutoModelForCausalLM

student = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16).to("cuda")
optimizer = torch.optim.AdamW(student.parameters(), lr=1e-5)
{scaler}loss = student(input_ids=ids, labels=ids).loss
{step}
"""
SCALED = "scaler.scale(loss).backward()\nscaler.step(optimizer)\nscaler.update()"
PLAIN = "loss.backward()\noptimizer.step()"


@pytest.mark.parametrize(
    "enabled, step, found",
    [
        ("", SCALED, ["MP101"]),
        (", enabled=use_amp", SCALED, ["MP104"]),  # may be off: then Adam steps float16
        (None, PLAIN, ["MP104"]),
    ],
    ids=["scaled", "scaler-may-be-off", "plain-step"],
)
def test_an_adam_stepped_through_a_scaler_that_is_on_raises_before_its_eps_matters(enabled, step, found):
    scaler = "" if enabled is None else f'scaler = torch.amp.GradScaler("cuda"{enabled})\n'
    codes = sorted(d.code for d in lint(STUDENT.format(scaler=scaler, step=step)) if d.code in ("MP101", "MP104"))
    assert codes == found


ON_WHERE_FLOAT16 = """
import torch
from torch import nn

dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
net = nn.Linear(32, 8).to(dtype).cuda()
opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
scaler = torch.amp.GradScaler("cuda", enabled={enabled})
loss = net(torch.randn(4, 32, device="cuda", dtype=dtype)).float().mean()
scaler.scale(loss).backward()
scaler.step(opt)
scaler.update()
"""


@pytest.mark.parametrize(
    "enabled, found",
    [("(dtype == torch.float16)", 0), ("dtype == torch.bfloat16", 1), ("(other == torch.float16)", 1)],
)
def test_a_scaler_on_exactly_where_the_weights_are_float16_raises_first(enabled, found):
    """Review 27d: ``enabled=(dtype == torch.float16)`` for weights cast ``.to(dtype)``: wherever
    they are float16 the scaler unscales first and raises (MP101), Adam never steps."""
    assert len(lint(ON_WHERE_FLOAT16.format(enabled=enabled), "MP104")) == found


def test_an_adam_in_the_other_branch_of_the_casts_test_steps_float32():
    """Review 27d: pygcn's fp16 branch casts and builds its own Adam (eps=1e-4); the default-eps
    Adam of the ``else:`` branch steps the float32 model."""
    src = """
import argparse
import torch
from torch import nn, optim

p = argparse.ArgumentParser(); p.add_argument("--fp16", action="store_true"); args = p.parse_args()
model = nn.Linear(64, 7)
if args.fp16:
    model = model.half()
    optimizer = optim.Adam(model.parameters(), lr=0.01, eps={fp16_eps})
else:
    optimizer = optim.Adam(model.parameters(), lr=0.01)
"""
    assert lint(src.format(fp16_eps="1e-4"), "MP104") == []
    assert len(lint(src.format(fp16_eps="1e-8"), "MP104")) == 1  # the fp16 branch's own Adam
