"""MP201: a new bf16 model bound only to names that are bound again before any read computes
nothing (tune 46's F2/F3: a scratch ``__main__`` block whose earlier experiment, two bf16
modules, was left in place above the float32 ones it runs). A read the binding may reach, or a
cast of a module a name holds (in place: that module is bf16), is still judged."""
import pytest

from conftest import lint

SCRATCH = """
import torch
from torch import nn

down = nn.Linear(4, 4).cuda().to(dtype=torch.bfloat16)
{between}down = nn.Linear(4, 4).cuda()
print(down(torch.randn(2, 4, device="cuda")))
"""


@pytest.mark.parametrize(
    "between, reported",
    [
        ("", False),  # rebound before any read
        ("print(down)\n", True),  # read first
        ("if torch.cuda.device_count() > 1:\n    ", True),  # rebound only on some runs
    ],
)
def test_a_bf16_model_rebound_before_any_read(between, reported):
    assert bool(lint(SCRATCH.format(between=between), "MP201")) is reported


def test_a_cast_of_a_held_module_is_in_place():
    src = """
import torch
from torch import nn

model = nn.Linear(4, 4).cuda()
copy = model.to(dtype=torch.bfloat16)
copy = None
print(model(torch.randn(2, 4, device="cuda")))
"""
    assert len(lint(src, "MP201")) == 1


def test_a_load_rebound_in_a_loop_is_read_on_the_next_turn():
    src = """
import torch
from transformers import AutoModelForCausalLM

for name in ["a", "b"]:
    model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.bfloat16).cuda()
    print(model.generate(torch.ones(1, 4, dtype=torch.long).cuda()))
    model = None
"""
    assert len(lint(src, "MP201")) == 1
