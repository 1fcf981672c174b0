"""``training_state.computes_nothing_after``: below a cast or load, every mention of the model
saves it, reads its configuration (a conversion script) or only looks at it (a notebook that
prints its modules), or one may compute with it."""
from __future__ import annotations

import pytest

from conftest import dedent
from precision_lint.semantic.index import build_index
from precision_lint.semantic.training_state import computes_nothing_after


def _answer(body: str, names=("m",)) -> bool:
    source = "import torch\n\ndef convert(m, out, pipe):\n    " + dedent(body).replace("\n", "\n    ") + "\n"
    index = build_index(source, "conv")
    (site,) = [s for s in index.calls if s.method in ("to", "bfloat16") and index.text(s.node).startswith("m.")]
    return computes_nothing_after(index, names, site.node, site.scope.code_scope())


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
def test_a_cast_only_saved_computes_nothing_unless_a_use_below_may(body, saved):
    assert _answer(body) is saved


def test_a_spelling_through_another_object_counts_as_a_use_of_it():
    body = "m.to(torch.bfloat16)\nm.save_pretrained(out)\npipe(1)"
    assert _answer(body, ("m", "pipe.unet")) is False
    assert _answer("m.to(torch.bfloat16)\nm.save_pretrained(out)", ("m", "pipe.unet")) is True


@pytest.mark.parametrize(
    "body, nothing",
    [
        ("m.to(torch.bfloat16)\nprint(m.model.embed_tokens)\nprint(m.lm_head.weight.data[:, :2])", True),
        ("m.to(torch.bfloat16)\nprint(f'{m.get_memory_footprint() / 2**20:.1f} MiB')", True),
        ("m.to(torch.bfloat16)\nm", True),  # a notebook cell's bare expression shows it
        ("m.to(torch.bfloat16)\nprint(sum(p.numel() for p in m.parameters()))", True),
        ("m.to(torch.bfloat16)\nfor n, p in m.named_parameters():\n    print(n, p.dtype)", True),
        ("m.to(torch.bfloat16)\nm.lm_head(1)", False),  # a part called: it computes
        ("m.to(torch.bfloat16)\nopt = torch.optim.AdamW(m.parameters())", False),  # handed to an optimizer
        ("m.to(torch.bfloat16)\nopt = torch.optim.AdamW(p for p in m.parameters() if p.requires_grad)", False),
        ("m.to(torch.bfloat16)\nparams = list(m.parameters())", False),  # bound: may be trained
        ("m.to(torch.bfloat16)\nprint(m.generate(1))", False),
        ("m.to(torch.bfloat16)\nprint(m(1))", False),
    ],
)
def test_a_model_only_looked_at_computes_nothing(body, nothing):
    """Review 26a: a notebook loads a bf16 model to print two of its modules, or a 4-bit one to
    measure its memory; nothing runs in bf16 on any GPU."""
    assert _answer(body) is nothing
