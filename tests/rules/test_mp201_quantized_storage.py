"""MP201: the ``torch_dtype`` of a load bitsandbytes quantizes (4 or 8 bits) reaches only the layers left
unquantized (embeddings, norms, the head). Under a Trainer's fp16 autocast every matmul of theirs
runs in float16, as the 4-bit layers' do (``bnb_4bit_compute_dtype`` is judged so already): a
unit that trains only that way computes nothing in bf16 on any GPU (held-out 45's F1: a QLoRA
script with ``torch_dtype=torch.bfloat16`` and ``TrainingArguments(fp16=True)``). A call that
runs the model outside that autocast (``model.generate(...)`` after training) runs them in bf16."""
import pytest

from conftest import lint

QLORA = """
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, GPTQConfig, Trainer, TrainingArguments

quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.float16)
model = AutoModelForCausalLM.from_pretrained("some/lm", {load}, torch_dtype=torch.bfloat16)
model = get_peft_model(model, LoraConfig(r=8, task_type="CAUSAL_LM"))
args = TrainingArguments(output_dir="out", {precision})
Trainer(model=model, args=args, train_dataset=None).train()
{after}
"""


@pytest.mark.parametrize(
    "load, precision, after, reported",
    [
        ("quantization_config=quant", "fp16=True", "", False),
        ("load_in_8bit=True", "fp16=True", "", False),
        ("quantization_config=quant", "fp16=True", "model.generate(torch.ones(1, 4, dtype=torch.long))", True),
        ("quantization_config=quant", "fp16=False", "", True),  # fp32 steps: the head's matmuls run in bf16
        ("device_map='auto'", "fp16=True", "", True),  # not quantized: the whole model is bf16
        ("quantization_config=GPTQConfig(bits=4)", "fp16=True", "", True),  # GPTQ's own kernels: not judged so
    ],
)
def test_bf16_storage_of_a_quantized_load_trained_under_fp16_autocast(load, precision, after, reported):
    found = [d for d in lint(QLORA.format(load=load, precision=precision, after=after), "MP201") if "makes the weights bf16" in d.message]
    assert bool(found) is reported


def test_the_quantization_config_spread_from_a_dict_is_read():
    """``from_pretrained(name, **model_kwargs)`` with ``quantization_config`` and ``torch_dtype``
    in the dict (held-out 45's F1 as its repository wrote it)."""
    src = """
import torch
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, Trainer, TrainingArguments

nf4 = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.float16)
model_kwargs = dict(use_cache=False, torch_dtype=torch.bfloat16, quantization_config={quant})
model = AutoModelForCausalLM.from_pretrained("some/lm", **model_kwargs)
Trainer(model=model, args=TrainingArguments(output_dir="out", fp16=True, bf16=False)).train()
"""
    assert [d for d in lint(src.format(quant="nf4"), "MP201") if "makes the weights bf16" in d.message] == []
    assert len([d for d in lint(src.format(quant="None"), "MP201") if "makes the weights bf16" in d.message]) == 1
