"""MP201 and a conversion script: weights cast to bf16 only to be saved compute nothing in bf16
on any GPU (``training_state.computes_nothing_after``); below the cast, a use that may compute (a
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
    "body, reported",
    [
        # the adapters merged into the bf16 base, then saved: the same conversion (review 25b)
        ("model.to(torch.bfloat16)\nmerged = PeftModel.from_pretrained(model, 'a').merge_and_unload()\nmerged.save_pretrained(out)\n", False),
        ("model.to(torch.bfloat16)\nmodel = PeftModel.from_pretrained(model, 'a')\nmodel = model.merge_and_unload()\nmodel.save_pretrained(out)\n", False),
        # the merged model computes
        ("model.to(torch.bfloat16)\nmerged = PeftModel.from_pretrained(model, 'a').merge_and_unload()\nmerged.save_pretrained(out)\nmerged.generate(torch.ones(1, 4, dtype=torch.long))\n", True),
        # the adapters' model computes unmerged
        ("model.to(torch.bfloat16)\nmodel = PeftModel.from_pretrained(model, 'a')\nmodel.generate(torch.ones(1, 4, dtype=torch.long))\nmodel.save_pretrained(out)\n", True),
    ],
    ids=["merged-saved", "merged-in-place", "merged-computes", "unmerged-computes"],
)
def test_a_merge_of_adapters_between_the_cast_and_the_save_is_the_same_conversion(body, reported):
    """``PeftModel.from_pretrained(model, adapter).merge_and_unload()`` folds the adapters into
    the base's weights: saved and nothing else, the bf16 cast computes nothing but that merge."""
    code = "from peft import PeftModel\n" + HEAD + "    " + dedent(body).replace("\n", "\n    ") + "\n\nconvert('src', 'out')\n"
    assert [d.code for d in lint(code, "MP201", config())] == (["MP201"] if reported else [])


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


LOOKED_AT = """
import torch
from transformers import AutoModelForCausalLM

lm = AutoModelForCausalLM.from_pretrained("org/tiny-lm", device_map="cuda:0", dtype=torch.bfloat16)
print(lm.model.embed_tokens)
print(lm.model.embed_tokens.weight.data[:, :2])
{then}
"""


@pytest.mark.parametrize(
    "then, found",
    [("", 0), ("print(f'{lm.get_memory_footprint() / 2**20:.1f} MiB')", 0), ("print(lm.generate(torch.ones(1, 2, dtype=torch.long)))", 1)],
    ids=["modules-printed", "footprint", "generates"],
)
def test_a_bf16_model_only_looked_at_computes_nothing(then, found):
    """Review 26a: a notebook loads a bf16 model to print two of its modules; nothing runs in
    bf16 on any GPU (training_state.computes_nothing_after). Generating with it does."""
    assert len(lint(LOOKED_AT.format(then=then), "MP201")) == found


ACROSS_A_FUNCTION = """
import torch
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification


def convert(src):
    dst = AutoModelForCausalLM.from_config(src.config)
    {copy}
    return dst.to(dtype=torch.bfloat16)


src = AutoModelForSequenceClassification.from_pretrained("org/rm", device_map="auto", torch_dtype=torch.bfloat16)
{then}
"""


@pytest.mark.parametrize(
    "copy, then, rows",
    [
        # held-out 33u: the load only gives its weights and configuration to a copy, and the copy,
        # cast and returned, is only saved by its caller: nothing computes in bf16
        ("dst.model.load_state_dict(src.model.state_dict())", 'convert(src).save_pretrained("out")', []),
        ("dst.model.load_state_dict(src.model.state_dict())", 'converted = convert(src)\nconverted.save_pretrained("out")', []),
        # the function runs the loaded model: the load computes
        ("dst.score = src(torch.ones(1, 4, dtype=torch.long)).logits", 'convert(src).save_pretrained("out")', [11]),
        # the caller computes with what is returned: the cast computes
        ("dst.model.load_state_dict(src.model.state_dict())", 'convert(src)(torch.ones(1, 4, dtype=torch.long))', [8]),
        ("dst.model.load_state_dict(src.model.state_dict())", 'm = convert(src)\nm.save_pretrained("out")\nm.generate(torch.ones(1, 4, dtype=torch.long))', [8]),
    ],
    ids=["saved-at-once", "saved-by-name", "the-function-computes", "the-caller-computes", "saved-then-run"],
)
def test_a_model_handed_to_a_function_that_only_copies_it_and_a_cast_only_saved_by_callers(copy, then, rows):
    code = ACROSS_A_FUNCTION.format(copy=copy, then=then)
    assert sorted(d.span.line for d in lint(code, "MP201", config())) == rows


@pytest.mark.parametrize("then, rows", [('convert(src).save_pretrained("out")', []), ('convert(src).generate(torch.ones(1, 4, dtype=torch.long))', [8])])
def test_a_cast_bound_then_returned_is_judged_by_the_callers(then, rows):
    """``dst = dst.to(dtype=torch.bfloat16)``, its configuration set, then ``return dst``
    (held-out 33u's reward-model conversion): saved by every caller, it computes nothing."""
    code = ACROSS_A_FUNCTION.format(copy="dst.model.load_state_dict(src.model.state_dict())", then=then).replace(
        "    return dst.to(dtype=torch.bfloat16)\n", "    dst = dst.to(dtype=torch.bfloat16)\n    dst.config.auto_map = {}\n    return dst\n"
    )
    assert sorted(d.span.line for d in lint(code, "MP201", config())) == rows


MERGE_4BIT = """
import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM, BitsAndBytesConfig

quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)
base = AutoModelForCausalLM.from_pretrained("org/lm", quantization_config=quant, device_map="auto")
merged = PeftModel.from_pretrained(base, "adapter").merge_and_unload()
merged.save_pretrained("merged")
{then}"""


@pytest.mark.parametrize("then, reported", [
    ("", False),  # merged and saved: no 4-bit matmul runs in the compute dtype
    ("merged.generate(torch.ones(1, 4, dtype=torch.long))\n", True),
    ("print(base(torch.ones(1, 4, dtype=torch.long)))\n", True),
])
def test_a_4bit_base_only_merged_with_its_adapter_computes_nothing(then, reported):
    """Review 41a: a script that merges a QLoRA adapter into its 4-bit base and saves it never
    multiplies in ``bnb_4bit_compute_dtype`` (peft's merge dequantizes each weight with its own
    quantization state); a generate or forward of either model does."""
    found = [d for d in lint(MERGE_4BIT.format(then=then), "MP201", config()) if "bnb_4bit_compute_dtype" in d.message]
    assert len(found) == (1 if reported else 0)
