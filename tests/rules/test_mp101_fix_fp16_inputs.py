"""MP101's fix keeps the weights float32; where the file itself casts a tensor to float16 outside
autocast (``x.to(dtype=weight_dtype)``, ``x.half()``), that tensor would meet the float32 weights
and raise ``RuntimeError: mat1 and mat2 must have the same dtype, but got Half and Float`` in a
program that ran: the fix is offered as unsafe (review 26b: finetune-clip's ``--precision fp16``;
26d: meta-learning-textual-inversion, whose notebook ran). Under autocast the input is fine."""
import pytest
import torch

from conftest import lint

PREDICTOR = """
import torch
from accelerate import Accelerator

accelerator = Accelerator(mixed_precision="fp16")
weight_dtype = torch.float16 if accelerator.mixed_precision == "fp16" else torch.float32
predictor = torch.nn.Linear(128, 768)
optimizer = torch.optim.AdamW(predictor.parameters(), lr=1e-4, eps=1e-4)
predictor.to(accelerator.device, dtype=weight_dtype)
optimizer = accelerator.prepare(optimizer)
face_id = torch.randn(4, 128, device=accelerator.device)
{forward}
"""


@pytest.mark.parametrize(
    "forward, applicability",
    [
        ("emb = predictor(face_id.to(dtype=weight_dtype))", "unsafe"),
        ("emb = predictor(face_id.half())", "unsafe"),
        ("with torch.autocast('cuda'):\n    emb = predictor(face_id.to(dtype=weight_dtype))", "safe"),
        ("emb = predictor(face_id)", "safe"),
    ],
    ids=["cast-input", "half-input", "under-autocast", "float32-input"],
)
def test_a_float16_input_made_outside_autocast_makes_the_fix_unsafe(forward, applicability):
    (d,) = lint(PREDICTOR.format(forward=forward), "MP101")
    assert d.fix is not None and d.fix.applicability == applicability


def test_the_mismatch_the_unsafe_fix_warns_of_is_real():
    """The fixed program's forward on the CPU: float32 weights, a float16 input, no autocast."""
    layer = torch.nn.Linear(8, 4).to(dtype=torch.float32)
    with pytest.raises(RuntimeError, match="dtype"):
        layer(torch.randn(2, 8).to(dtype=torch.float16))
