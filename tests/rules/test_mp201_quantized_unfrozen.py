"""MP201's fallback for a 4/8-bit base: float16 where only adapters train on it, float32 where
the code makes some of its own parameters trainable (``[p.requires_grad_() for n, p in
model.named_parameters() if "norm" in n]``): those train in the dtype the load gave them, and
float16 ones meet fp16 loss scaling with `ValueError: Attempting to unscale FP16 gradients.`"""
from __future__ import annotations

import pytest

from conftest import config, dedent, fix

PROGRAM = """
import torch
import transformers
from transformers import BitsAndBytesConfig, Trainer, TrainingArguments
from peft import LoraConfig, get_peft_model


def train(args: TrainingArguments):
    model = transformers.AutoModelForCausalLM.from_pretrained(
        "base", dtype=torch.bfloat16, quantization_config=BitsAndBytesConfig(load_in_4bit=True)
    )
    for param in model.parameters():
        param.requires_grad = False
    model = get_peft_model(model, LoraConfig(r=8, target_modules=["q_proj"]))
    UNFREEZE
    Trainer(model=model, args=args).train()


if __name__ == "__main__":
    train(transformers.HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()[0])
"""


@pytest.mark.parametrize(
    "unfreeze, fallback",
    [
        ('[p.requires_grad_() for n, p in model.named_parameters() if "norm" in n]', "torch.float32"),
        ('for n, p in model.named_parameters():\n        if "embed" in n:\n            p.requires_grad_()', "torch.float32"),
        ("pass", "torch.float16"),  # only the adapters train
    ],
    ids=["comprehension", "loop", "adapters-only"],
)
def test_the_fallback_of_a_quantized_base_follows_what_trains_on_it(unfreeze, fallback):
    fixed = fix(dedent(PROGRAM).replace("UNFREEZE", unfreeze), "MP201", config(transformers_version="5.23"), unsafe=True)
    assert f"dtype=torch.bfloat16 if BF16_OK else {fallback}," in fixed
