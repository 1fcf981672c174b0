"""MP201 and a conversion script: weights cast to bf16 only to be saved compute nothing in bf16
on any GPU (``training_state.cast_only_saved``); below the cast, a use that may compute (a
call, a hand-over, a return, a move) makes the cast one that runs."""
from __future__ import annotations

import pytest

from conftest import config, dedent, lint

HEAD = """
import torch
from transformers import AutoModelForCausalLM


def convert(src, out, evaluate=None):
    model = AutoModelForCausalLM.from_pretrained(src, device_map="auto")  # on the GPU
    model.config.use_cache = True
"""


def _findings(body: str):
    code = HEAD + "    " + dedent(body).replace("\n", "\n    ") + "\n\nconvert('src', 'out')\n"
    return lint(code, "MP201", config())


@pytest.mark.parametrize(
    "body",
    [
        "model.to(torch.bfloat16)\nmodel.save_pretrained(out)\n",
        "model = model.to(torch.bfloat16)\nmodel.eval()\ntorch.save(model.state_dict(), out)\n",
        "model.bfloat16()\nprint(model.config)\ntorch.save(model, out)\n",
    ],
)
def test_weights_cast_only_to_be_saved_are_no_finding(body):
    assert _findings(body) == []


@pytest.mark.parametrize(
    "body",
    [
        "model.to(torch.bfloat16)\nmodel.save_pretrained(out)\nmodel.generate(torch.ones(1, 4, dtype=torch.long))\n",  # computes
        "model.to(torch.bfloat16)\nevaluate(model)\nmodel.save_pretrained(out)\n",  # handed on
        "model.to(torch.bfloat16)\nmodel.save_pretrained(out)\nreturn model\n",  # returned
        "model.to(torch.bfloat16)\nmodel.save_pretrained(out)\nwith torch.no_grad():\n    model(torch.ones(1, 4, dtype=torch.long))\n",  # called
        "for _ in range(2):\n    model.to(torch.bfloat16)\n    model.save_pretrained(out)\n",  # in a loop
        "model.to(torch.bfloat16)\n",  # not saved: what is it for
    ],
)
def test_a_cast_with_a_use_that_may_compute_is_reported(body):
    assert [d.code for d in _findings(body)] == ["MP201"]
