"""MP104 on parameters made float16 through their ``.data`` (review 24u: a held-out repository's
opt-in fp16 path; review 24c): Adam's default eps=1e-8 is 0 in float16, so the first zero or
underflowed gradient writes NaN into the parameters, as after ``model.half()``."""
import pytest

from conftest import lint

LOOP = """
import torch
from torch import nn

model = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 2))
frozen = nn.Linear(8, 8)
for p in {walked}.parameters():
    p.data = p.data.{cast}()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
"""

APPLY = """
import torch
from torch import nn

def to_fp16(layer):
    if isinstance(layer, nn.Linear):
        layer.weight.data = layer.weight.data.half()

model = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 2))
model.apply(to_fp16)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
"""

METHOD = """
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Conv2d(8, 3, 3))

    def convert_to_fp16(self):
        for m in self.body.modules():
            if isinstance(m, nn.Conv2d):
                m.weight.data = m.weight.data.half()

model = Net()
model.convert_to_fp16()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
"""


def test_a_loop_over_the_models_parameters_casts_them():
    assert [d.code for d in lint(LOOP.format(walked="model", cast="half"), "MP104")] == ["MP104"]


@pytest.mark.parametrize("walked, cast", [("model", "float"), ("frozen", "half")])
def test_an_upcast_or_another_models_cast_is_not_the_optimizers(walked, cast):
    assert lint(LOOP.format(walked=walked, cast=cast), "MP104") == []


def test_a_function_applied_to_every_submodule_casts_them():
    assert [d.code for d in lint(APPLY, "MP104")] == ["MP104"]
    assert lint(APPLY.replace("lr=1e-4)", "lr=1e-4, eps=1e-4)"), "MP104") == []


def test_a_method_casting_its_own_submodules_casts_the_instance_it_is_called_on():
    assert [d.code for d in lint(METHOD, "MP104")] == ["MP104"]
    assert lint(METHOD.replace("model.convert_to_fp16()\n", ""), "MP104") == []


NAMED = """
import torch
from torch import nn

model = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 2)).half()
for name, param in model.named_parameters():
    if param.requires_grad:
        param.data = param.data.to(torch.float32)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
scaler = torch.amp.GradScaler("cuda")
"""


def test_the_trainable_parameters_made_float32_again_by_name_are_not_float16():
    """``for name, p in model.named_parameters(): p.data = p.data.to(torch.float32)`` after
    ``.half()`` (held-out 40u's F3): Adam and the GradScaler see float32 parameters."""
    assert lint(NAMED, "MP104") == []
    assert lint(NAMED, "MP101") == []
    assert [d.code for d in lint(NAMED.replace("torch.float32", "torch.float16"), "MP104")] == ["MP104"]
