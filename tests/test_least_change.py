"""Fixes touch only what fails: a PEFT model's adapters (not its frozen base), never a default
argument (evaluated at import, and every caller's)."""
from conftest import config, fix, lint

PEFT_HALF = """
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

p = "gpt2"
base = AutoModelForCausalLM.from_pretrained(p)
model = get_peft_model(base, LoraConfig(r=8))
model.half()  # fits a T4
Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=True)).train()
"""


def test_peft_half_upcasts_only_the_trainable_parameters():
    (found,) = lint(PEFT_HALF, "MP101")
    fixed = fix(PEFT_HALF, "MP101")
    assert "model.half()  # fits a T4\n" in fixed  # the frozen base stays float16
    assert (
        "model.half()  # fits a T4\n"
        "for param in model.parameters():  # the adapters train in float32; the frozen base stays float16\n"
        "    if param.requires_grad:\n"
        "        param.data = param.data.float()\n"
    ) in fixed
    assert lint(fixed) == [] and fix(fixed) == fixed


def test_a_plain_model_half_still_becomes_float():
    src = PEFT_HALF.replace("model = get_peft_model(base, LoraConfig(r=8))\n", "model = base\n")
    assert "model.float()  # fits a T4" in fix(src, "MP101")


def test_the_upcast_loop_written_by_hand_is_understood():
    src = PEFT_HALF.replace(
        "model.half()  # fits a T4\n",
        "model.half()\nfor q in model.parameters():\n    if q.requires_grad:\n        q.data = q.data.float()\n",
    )
    assert lint(src, "MP101") == []


DEFAULT_ARGUMENT = """
import torch
from transformers import AutoModelForCausalLM


def load(name, dtype=torch.bfloat16, attn="flash_attention_2"):
    return AutoModelForCausalLM.from_pretrained(name, dtype=dtype, attn_implementation=attn)


model = load("gpt2").eval()
"""


def test_a_default_argument_is_reported_but_never_rewritten():
    found = {d.code: d for d in lint(DEFAULT_ARGUMENT)}
    assert {"MP201", "MP202"} <= set(found)
    assert found["MP201"].fix is None and found["MP202"].fix is None
    assert fix(DEFAULT_ARGUMENT) == fix(DEFAULT_ARGUMENT.lstrip("\n")) and "BF16_OK" not in fix(DEFAULT_ARGUMENT)


def test_the_same_literal_at_the_call_is_still_fixed():
    src = DEFAULT_ARGUMENT.replace("name, dtype=torch.bfloat16,", "name,").replace("dtype=dtype", "dtype=torch.bfloat16")
    fixed = fix(src, "MP201", config(transformers_version="5.23"))
    assert "dtype=torch.bfloat16 if BF16_OK else torch.float16" in fixed
