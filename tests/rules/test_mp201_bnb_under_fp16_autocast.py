"""MP201 on a 4-bit compute dtype (``BitsAndBytesConfig(bnb_4bit_compute_dtype=torch.bfloat16)``)
in a unit that trains under fp16 mixed precision. bitsandbytes casts the input and the
dequantized weight to the compute dtype and multiplies them with ``F.linear``; under
``torch.autocast(dtype=torch.float16)``, which a Trainer with ``fp16=True`` puts around every
forward, that ``F.linear`` is autocast to float16 like every other matmul: no bf16 matmul runs
on any GPU (review 19's F1: a QLoRA script with ``fp16=True``). Without fp16 mixed precision the
layers do compute in bf16, emulated below sm80."""
import pytest

from conftest import lint

CODE = "MP201"

QLORA = """
    import torch
    from accelerate import Accelerator
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig, Trainer, TrainingArguments
    from trl import SFTConfig

    quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)
    lm = AutoModelForCausalLM.from_pretrained("base", quantization_config=quant, device_map={"": 0})
    Trainer(model=lm, args=ARGS).train()
    """


@pytest.mark.parametrize(
    "args",
    [
        'TrainingArguments(output_dir="o", fp16=True)',
        'TrainingArguments(output_dir="o", fp16=True, bf16=False)',
        'SFTConfig(output_dir="o", fp16=True)',
    ],
    ids=["fp16", "fp16-bf16-off", "trl-fp16"],
)
def test_a_unit_training_only_under_fp16_autocast_computes_in_float16(args):
    assert lint(QLORA.replace("ARGS", args), CODE) == []


@pytest.mark.parametrize(
    "args",
    [
        'TrainingArguments(output_dir="o")',  # fp32 training: the layers compute in bf16
        'TrainingArguments(output_dir="o", fp16=False)',
        'TrainingArguments(output_dir="o", fp16=torch.cuda.is_available())',  # not known to be on
        'SFTConfig(output_dir="o")',  # TRL 0.19+ turns bf16 on by itself
    ],
    ids=["fp32", "fp16-off", "fp16-unknown", "trl-default"],
)
def test_without_fp16_mixed_precision_the_compute_dtype_is_a_finding(args):
    found = [d for d in lint(QLORA.replace("ARGS", args), CODE) if "bnb_4bit_compute_dtype" in d.message]
    assert len(found) == 1 and found[0].span.line == 6


def test_another_call_of_the_unit_asking_for_bf16_keeps_the_finding():
    src = QLORA.replace("ARGS", 'TrainingArguments(output_dir="o", fp16=True)') + 'acc = Accelerator(mixed_precision="bf16")\n'
    assert len([d for d in lint(src, CODE) if "bnb_4bit_compute_dtype" in d.message]) == 1


def test_accelerate_fp16_mixed_precision_is_autocast_as_well():
    src = QLORA.replace("Trainer(model=lm, args=ARGS).train()", 'acc = Accelerator(mixed_precision="fp16")\nlm = acc.prepare(lm)')
    assert lint(src, CODE) == []
