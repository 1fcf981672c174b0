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
