"""MP101: a submodule cast in place (``model[0].half()``, ``model.encoder.half()``), then the
whole model handed to the optimizer. ``Module.half()`` casts the submodule's own parameters,
which are the whole model's too: ``AdamW(model.parameters())`` trains float16 parameters and
the GradScaler raises ``ValueError: Attempting to unscale FP16 gradients.`` at its first
``unscale_``. What the part is comes from how the model is built (an item of a
``torch.nn.Sequential``; what the class's ``__init__`` assigns to ``self.encoder``), never from
its name. A part that is frozen, or left out of what the optimizer takes, is fine."""
import pytest

from conftest import lint

# the model cast ({cast}), its parameters ({given}) under an fp16 GradScaler ({scaler}), trained
TRAINED = """{cast}
opt = torch.optim.AdamW({given}, lr=1e-4)
scaler = torch.cuda.amp.GradScaler({scaler})
for x in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(x).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
"""

SEQUENTIAL = """
import torch
from torch import nn

model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1)).cuda()
""" + TRAINED

CLASS = """
import torch
from torch import nn


class EncoderDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 8)
        self.decoder = nn.Linear(8, 1)
        self.scale = torch.ones(8)

    def forward(self, x):
        return self.decoder(self.encoder(x).float())


model = EncoderDecoder().cuda()
""" + TRAINED


def reported(template, cast, given="model.parameters()", scaler=""):
    return [d.span.line for d in lint(template.format(cast=cast, given=given, scaler=scaler), "MP101")]


@pytest.mark.parametrize("cast", ["model[0].half()", "model[0].to(torch.float16)"])
def test_an_item_of_a_sequential_cast_and_trained_is_reported(cast):
    assert reported(SEQUENTIAL, cast) == [5]


@pytest.mark.parametrize("cast", ["model.encoder.half()", "model.encoder.to(torch.float16)"])
def test_a_submodule_the_class_builds_cast_and_trained_is_reported(cast):
    assert reported(CLASS, cast) == [17]


@pytest.mark.parametrize("template, cast, given", [
    (SEQUENTIAL, "model[0].half()\nmodel[0].requires_grad_(False)", "model.parameters()"),  # frozen
    (SEQUENTIAL, "model[0].half()\nfor p in model[0].parameters():\n    p.requires_grad = False", "model.parameters()"),
    (SEQUENTIAL, "model[0].half()", "model[2].parameters()"),  # another item trains
    (SEQUENTIAL, "model[0].to(torch.bfloat16)", "model.parameters()"),  # bf16: no unscale error
    (CLASS, "model.encoder.half()\nmodel.encoder.requires_grad_(False)", "model.parameters()"),
    (CLASS, "model.encoder.half()", "model.decoder.parameters()"),  # excluded from the optimizer
    (CLASS, "model.encoder.to(torch.bfloat16)", "model.parameters()"),
])
def test_a_frozen_excluded_or_bf16_part_is_silent(template, cast, given):
    assert reported(template, cast, given) == []


@pytest.mark.parametrize("template, cast", [(SEQUENTIAL, "model[0].half()"), (CLASS, "model.encoder.half()")])
def test_a_scaler_that_is_off_is_silent(template, cast):
    assert reported(template, cast, scaler="enabled=False") == []


def test_a_tensor_attribute_of_the_class_is_no_submodule():
    """``self.scale = torch.ones(8)``: ``model.scale.half()`` makes a new tensor, casting no
    parameter of the model."""
    assert reported(CLASS, "model.scale.half()") == []


def test_fp16_inference_of_a_part_is_silent():
    src = """
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 1)).cuda()
    model[0].half()
    with torch.no_grad():
        y = model(torch.randn(2, 8, device="cuda", dtype=torch.float16))
    """
    assert lint(src, "MP101") == []
