"""MP201 on a 4-bit compute dtype (``BitsAndBytesConfig(bnb_4bit_compute_dtype=torch.bfloat16)``)
in a unit that trains under fp16 mixed precision. bitsandbytes casts the input and the
dequantized weight to the compute dtype and multiplies them with ``F.linear``; under
``torch.autocast(dtype=torch.float16)``, which a Trainer with ``fp16=True`` puts around every
forward, that ``F.linear`` is autocast to float16 like every other matmul: no bf16 matmul runs
on any GPU (review 19's F1: a QLoRA script with ``fp16=True``). Without fp16 mixed precision the
layers do compute in bf16, emulated below sm80."""
import textwrap

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


# --- the model run outside the Trainer's autocast (reviews 26a and 29b) ----------------------------
FP16_ARGS = 'TrainingArguments(output_dir="o", fp16=True)'
TRAINED = textwrap.dedent(QLORA).replace("ARGS", FP16_ARGS) + 'batch = {"input_ids": torch.ones(1, 4, dtype=torch.long)}\n'


@pytest.mark.parametrize(
    "after",
    [
        'out = lm.generate(**tok("q", return_tensors="pt").to("cuda"), max_new_tokens=20)',
        "with torch.no_grad():\n    scores = lm(**batch).logits",  # scoring rows after training
        'peft_lm = get_peft_model(lm, LoraConfig(r=8))\npeft_lm.generate(**batch)',  # the wrapped model
        'with torch.autocast("cuda", dtype=torch.bfloat16):\n    lm.generate(**batch)',
    ],
    ids=["generate", "forward-no-grad", "peft-wrapped", "under-bf16-autocast"],
)
def test_a_run_of_the_model_outside_the_trainers_autocast_computes_in_bf16(after):
    src = TRAINED + "from peft import LoraConfig, get_peft_model\n" + after + "\n"
    (d,) = [d for d in lint(src, CODE) if "bnb_4bit_compute_dtype" in d.message]
    assert "autocasts only its own steps" in d.message and "runs the model outside it" in d.message


@pytest.mark.parametrize(
    "after",
    [
        'with torch.autocast("cuda", dtype=torch.float16):\n    lm.generate(**batch)',
        'with torch.cuda.amp.autocast():\n    scores = lm(**batch).logits',
        'other = AutoModelForCausalLM.from_pretrained("base")\nother.generate(**batch)',  # another model
        'lm = AutoModelForCausalLM.from_pretrained("merged", torch_dtype=torch.float16)\nlm.generate(**batch)',
        'if False:\n    lm.generate(**batch)',
    ],
    ids=["fp16-autocast", "cuda-amp-autocast", "another-model", "rebound-name", "dead-code"],
)
def test_runs_under_fp16_autocast_or_of_another_model_keep_the_exemption(after):
    src = TRAINED + after + "\n"
    assert [d.code for d in lint(src) if d.code in ("MP000", CODE)] == []  # (parsed: no MP000 either)


@pytest.mark.parametrize("switch, reported", [("False", False), ("True", True)])
def test_a_config_built_under_a_switch_no_run_turns_on_is_no_finding(switch, reported):
    """Held-out 41u's F9 (after its measurement): ``if USE_QLORA:`` of a ``USE_QLORA = False``
    set once at the top of a notebook builds the bf16 BitsAndBytesConfig in no run."""
    src = f"""
        import torch
        from transformers import AutoModelForCausalLM, BitsAndBytesConfig

        USE_QLORA = {switch}
        quant = None
        if USE_QLORA:
            quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)
        lm = AutoModelForCausalLM.from_pretrained("base", quantization_config=quant, device_map={{"": 0}})
        print(lm.generate(torch.ones(1, 4, dtype=torch.long)))
        """
    found = [d for d in lint(src, CODE) if "bnb_4bit_compute_dtype" in d.message]
    assert len(found) == (1 if reported else 0)
