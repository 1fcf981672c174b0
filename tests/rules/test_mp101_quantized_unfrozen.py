"""MP101 on a 4/8-bit base loaded in float16 whose own parameters the code unfreezes
(``[p.requires_grad_() for n, p in model.named_parameters() if "norm" in n]``): the adapters
PEFT adds are float32, but the unquantized norms and embeddings take the load's dtype and
train in it; under fp16 loss scaling the first step raises ``ValueError: Attempting to unscale
FP16 gradients.``. ``prepare_model_for_kbit_training`` (it casts them to float32) or an upcast
loop prevent it."""
from __future__ import annotations

import pytest

from conftest import fix, lint

PROGRAM = """
import torch
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, Trainer, TrainingArguments


def main(data):
    quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.float16)
    model = AutoModelForCausalLM.from_pretrained("base", quantization_config=quant, torch_dtype=DTYPE)
    PREPARE
    model = get_peft_model(model, LoraConfig(r=8, target_modules=["q_proj", "v_proj"]))
    UNFREEZE
    args = TrainingArguments(output_dir="out", PRECISION=True)
    Trainer(model=model, args=args, train_dataset=data).train()
"""
NORMS = '[p.requires_grad_() for n, p in model.named_parameters() if "norm" in n]'


def program(dtype="torch.float16", prepare="pass", unfreeze=NORMS, precision="fp16"):
    return (
        PROGRAM.replace("DTYPE", dtype).replace("PREPARE", prepare).replace("UNFREEZE", unfreeze)
        .replace("PRECISION", precision)
    )


def test_unfrozen_norms_of_a_float16_quantized_base_meet_fp16_loss_scaling():
    (d,) = lint(program(), "MP101")
    assert "unquantized parameters of the 4/8-bit base in float16" in d.message
    assert "requires_grad_(True) below train in that dtype" in d.message
    assert "Attempting to unscale FP16 gradients" in d.message
    fixed = fix(program(), "MP101")
    assert 'torch_dtype=torch.float32)' in fixed and fixed.count("torch.float16") == 1  # the compute dtype stays
    assert lint(fixed, "MP101") == []


@pytest.mark.parametrize(
    "changes",
    [
        {"unfreeze": "pass"},  # only the adapters train: PEFT makes them float32
        {"prepare": "model = prepare_model_for_kbit_training(model)"},  # casts the norms to float32
        {"precision": "bf16"},  # no loss scaling
        {"dtype": "torch.float32"},
        {"unfreeze": NORMS + "\n    for p in model.parameters():\n        if p.requires_grad:\n            p.data = p.data.float()"},
    ],
    ids=["adapters-only", "kbit-prepared", "bf16", "float32-load", "upcast-loop"],
)
def test_no_float16_parameter_trains_under_the_scaler(changes):
    assert lint(program(**changes), "MP101") == []
