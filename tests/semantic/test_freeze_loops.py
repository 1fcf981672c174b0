"""A ``requires_grad`` loop over a model's parameters (semantic/training_state.freeze_events).

A freeze in the loop freezes the whole model only when nothing between the loop and it picks
parameters: ``if "ln_" in n: p.requires_grad_(False)`` freezes the LayerNorms, and the rest
trains (review 29a: a CLIP LoRA script, peft 0.11, read as a frozen model). A test that lets
every parameter through but the adapters freezes the model's own weights, as
``p.requires_grad = "lora" in n`` does. An unfreeze under a test still trains what it picks; a
test around the whole loop is the runs' business (``truth``), not the parameters'.
"""
import pytest
from conftest import dedent

from precision_lint.semantic.index import build_index
from precision_lint.semantic.training_state import adapters_at_end, freeze_events, frozen_at_end, last_freeze

ONLY_ADAPTERS = "(only the adapters train)"


def _frozen(src, names=("model",)):
    index = build_index(dedent(src), "m")
    return frozen_at_end(index, names)


def _keeps_adapters(src, names=("model",)):
    last = last_freeze(build_index(dedent(src), "m"), names)
    return last is not None and last.keeps_adapters


def _events(src, names=("model",)):
    index = build_index(dedent(src), "m")
    return [(e.trainable, e.what) for e in freeze_events(index, names)]


@pytest.mark.parametrize(
    "loop",
    [
        "for p in model.parameters():\n    p.requires_grad_(False)",
        "for p in model.parameters():\n    p.requires_grad = False",
        "for n, p in model.named_parameters():\n    p.requires_grad_(False)",
        "[p.requires_grad_(False) for p in model.parameters()]",
        # a test around the whole loop: the loop freezes everything where it runs
        "if not args.train_backbone:\n    for p in model.parameters():\n        p.requires_grad = False",
        # a `continue` after the freeze skips nothing of it
        "for n, p in model.named_parameters():\n    p.requires_grad_(False)\n    if 'ln' in n:\n        continue",
    ],
)
def test_an_unconditional_freeze_in_a_loop_freezes_the_model(loop):
    frozen = _frozen(loop)
    assert frozen.startswith("parameters of `model` set to requires_grad")
    assert ONLY_ADAPTERS not in frozen
    assert not _keeps_adapters(loop)


@pytest.mark.parametrize(
    "loop",
    [
        # review 29a: LayerNorms and biases fixed, the LoRA adapters train
        'for n, p in model.named_parameters():\n    if "ln_" in n or ".bias" in n:\n        p.requires_grad_(False)',
        'for n, p in model.named_parameters():\n    if "position_embeddings" in n:\n        p.requires_grad = False',
        'for n, p in model.named_parameters():\n    if any(k in n for k in frozen_keys):\n        p.requires_grad_(False)',
        # a test that picks some of what is not an adapter
        'for n, p in model.named_parameters():\n    if "lora" not in n and "ln" in n:\n        p.requires_grad_(False)',
        # the adapters themselves frozen: the model's own weights keep training
        'for n, p in model.named_parameters():\n    if "lora" in n:\n        p.requires_grad_(False)',
        'for n, p in model.named_parameters():\n    p.requires_grad_(False) if "ln_" in n else None',
        '[p.requires_grad_(False) for n, p in model.named_parameters() if "norm" in n]',
        'for n, p in model.named_parameters():\n    if "ln" not in n:\n        continue\n    p.requires_grad_(False)',
        # the whole loop under a test, and a name test inside it
        'if args.freeze_norms:\n    for n, p in model.named_parameters():\n        if "norm" in n:\n            p.requires_grad = False',
    ],
)
def test_a_freeze_under_a_test_in_the_loop_freezes_only_what_it_picks(loop):
    assert _events(loop) == []
    assert _frozen(loop) == ""


@pytest.mark.parametrize(
    "loop",
    [
        'for n, p in model.named_parameters():\n    if "lora_" not in n:\n        p.requires_grad_(False)',
        'for n, p in model.named_parameters():\n    if not n.startswith("lora"):\n        p.requires_grad = False',
        'for n, p in model.named_parameters():\n    if "lora_A" not in n and "lora_B" not in n:\n        p.requires_grad = False',
        'for n, p in model.named_parameters():\n    if "lora" in n:\n        p.requires_grad = True\n    else:\n        p.requires_grad = False',
        'for n, p in model.named_parameters():\n    if "lora" in n:\n        continue\n    p.requires_grad_(False)',
        'for n, p in model.named_parameters():\n    if "lora" not in n:\n        p.requires_grad_(False)\n        continue',
        '[p.requires_grad_(False) for n, p in model.named_parameters() if "lora" not in n]',
    ],
)
def test_a_test_that_keeps_only_the_adapters_freezes_the_model_s_own_weights(loop):
    """As ``p.requires_grad = "lora" in n`` (review 27a): what trains is the adapters only."""
    assert ONLY_ADAPTERS in _frozen(loop)
    assert _keeps_adapters(loop)  # after `get_peft_model`, the wrap's adapters still train


@pytest.mark.parametrize(
    "loop",
    [
        # adapters named otherwise than peft's (`adapter`)
        'for n, p in model.named_parameters():\n    if "adapter" not in n:\n        p.requires_grad = False',
        # review 27a: all but a `language_model` that `get_peft_model` wrapped (and froze the base of)
        'for n, p in model.named_parameters():\n    if not n.startswith("language_model."):\n        p.requires_grad = False',
    ],
)
def test_a_test_that_keeps_only_a_named_part_freezes_the_model_s_own_weights(loop):
    """Every parameter but those the test names is frozen: the model's own weights, the named
    part left as it was (never a partial freeze of what the test picks)."""
    assert _frozen(loop) == "parameters of `model` set to requires_grad=False for all but the parameters it names"
    assert not _keeps_adapters(loop)


def test_a_test_that_keeps_the_adapters_among_other_names_keeps_them_training():
    loop = 'for n, p in model.named_parameters():\n    if "lora" not in n and "score" not in n:\n        p.requires_grad = False'
    assert _frozen(loop) == "parameters of `model` set to requires_grad=False for all but the parameters it names"
    assert _keeps_adapters(loop)
    # a freeze of everything after it: nothing is kept
    assert not _keeps_adapters(loop + "\nfor p in model.parameters():\n    p.requires_grad = False")


def test_a_conditional_freeze_next_to_an_unconditional_one_leaves_the_model_frozen():
    partial = 'for n, p in model.named_parameters():\n    if "ln_" in n:\n        p.requires_grad_(False)\n'
    full = "for p in model.parameters():\n    p.requires_grad = False\n"
    for src in (full + partial, partial + full):
        (event,) = _events(src)
        assert event == (False, "parameters of `model` set to requires_grad=False")
        assert _frozen(src) == "parameters of `model` set to requires_grad=False"
    # the partial freeze after a `requires_grad_(True)` of the whole model: trainable
    assert _frozen("model.requires_grad_(False)\nmodel.requires_grad_(True)\n" + partial) == ""


@pytest.mark.parametrize(
    "unfreeze",
    [
        'for n, p in model.named_parameters():\n    if "lora" in n:\n        p.requires_grad_(True)',
        'for n, p in model.named_parameters():\n    if "norm" in n:\n        p.requires_grad = True',
        '[p.requires_grad_() for n, p in model.named_parameters() if "norm" in n]',
    ],
)
def test_an_unfreeze_under_a_test_still_makes_parameters_trainable(unfreeze):
    src = "model.requires_grad_(False)\n" + unfreeze
    assert [trainable for trainable, _ in _events(src)] == [False, True]
    assert _frozen(src) == ""


def test_a_partial_freeze_after_an_injection_leaves_the_adapters_training():
    src = """
    unet = load()
    unet.requires_grad_(False)
    unet.add_adapter(LoraConfig(r=4))
    for n, p in unet.named_parameters():
        if "norm" in n:
            p.requires_grad_(False)
    """
    index = build_index(dedent(src), "m")
    assert frozen_at_end(index, ("unet",)) == ""
    assert adapters_at_end(index, ("unet",)) is not None
    # an unconditional one freezes the adapters too
    index = build_index(dedent(src.replace('if "norm" in n:\n            ', "")), "m")
    assert frozen_at_end(index, ("unet",)) and adapters_at_end(index, ("unet",)) is None
