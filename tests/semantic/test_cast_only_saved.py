"""``training_state.cast_only_saved``: below a cast, every mention of the model saves it or
reads its configuration (a conversion script), or one may compute with it."""
from __future__ import annotations

import pytest

from conftest import dedent
from precision_lint.semantic.index import build_index
from precision_lint.semantic.training_state import cast_only_saved


def _answer(body: str, names=("m",)) -> bool:
    source = "import torch\n\ndef convert(m, out, pipe):\n    " + dedent(body).replace("\n", "\n    ") + "\n"
    index = build_index(source, "conv")
    (site,) = [s for s in index.calls if s.method in ("to", "bfloat16") and index.text(s.node).startswith("m.")]
    return cast_only_saved(index, names, site.node, site.scope.code_scope())


@pytest.mark.parametrize(
    "body, saved",
    [
        ("m.to(torch.bfloat16)\nm.save_pretrained(out)", True),
        ("m.bfloat16()\nm.generation_config.top_k = 5\ntorch.save(m.state_dict(), out)", True),
        ("m.to(torch.bfloat16)\ntorch.save(m, out)", True),
        ("m.to(torch.bfloat16)", False),  # nothing saved: not a conversion
        ("m.to(torch.bfloat16)\nm.save_pretrained(out)\nm(1)", False),
        ("m.to(torch.bfloat16)\nm.save_pretrained(out)\nreturn m", False),
        ("m.to(torch.bfloat16)\nother = m\nother.save_pretrained(out)", False),
        ("m.to(torch.bfloat16)\nm.save_pretrained(out)\ndef later():\n    return m", False),
    ],
)
def test_a_cast_only_saved_is_one_no_use_below_computes_with(body, saved):
    assert _answer(body) is saved


def test_a_spelling_through_another_object_counts_as_a_use_of_it():
    body = "m.to(torch.bfloat16)\nm.save_pretrained(out)\npipe(1)"
    assert _answer(body, ("m", "pipe.unet")) is False
    assert _answer("m.to(torch.bfloat16)\nm.save_pretrained(out)", ("m", "pipe.unet")) is True
