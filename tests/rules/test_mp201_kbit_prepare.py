"""MP201 on weights loaded in bf16 and handed, first thing, to ``prepare_model_for_kbit_training``:
peft (0.4 to 0.21) casts every float16 and bfloat16 parameter to float32 there (bitsandbytes'
4-bit ``Params4bit`` aside; nothing of a GPTQ/AQLM/EETQ/HQQ/torchao model), so nothing computes
in bf16 on any GPU (review 41a: a Gemma-2 preference classifier notebook)."""
import pytest
from conftest import lint

LOAD = """
    import torch
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
    from transformers import AutoModelForSequenceClassification, BitsAndBytesConfig, GPTQConfig, Trainer, TrainingArguments

    model = AutoModelForSequenceClassification.from_pretrained("org/lm", num_labels=2, dtype=torch.bfloat16{quant})
    {between}model = prepare_model_for_kbit_training(model)
    model = get_peft_model(model, LoraConfig(task_type="SEQ_CLS", r=8))
    Trainer(model=model, args=TrainingArguments("out", fp16=True)).train()
    """


def _weights_findings(quant: str = "", between: str = ""):
    src = LOAD.format(quant=quant, between=between)
    return [d for d in lint(src, "MP201") if "makes the weights bf16" in d.message]


@pytest.mark.parametrize("quant", [
    "",  # not quantized: every parameter becomes float32
    ", quantization_config=BitsAndBytesConfig(load_in_4bit=True)",  # the bf16 ones that are not 4-bit
])
def test_weights_prepared_first_compute_nothing_in_bf16(quant):
    assert _weights_findings(quant) == []


@pytest.mark.parametrize("between", [
    "model.gradient_checkpointing_enable()\n    ",  # 47b: set up between the load and the prepare
    "model.config.use_cache = False\n    model.enable_input_require_grads()\n    print(model)\n    ",
])
def test_setting_the_model_up_before_the_prepare_computes_nothing_either(between):
    assert _weights_findings("", between) == []


@pytest.mark.parametrize("quant, between", [
    (", quantization_config=GPTQConfig(bits=4)", ""),  # peft casts nothing of a GPTQ model
    ("", 'print(model(torch.ones(1, 4, dtype=torch.long)))\n    '),  # a forward in bf16 before the cast
    ("", "model.to(torch.bfloat16)\n    model.generate(torch.ones(1, 4, dtype=torch.long))\n    "),
])
def test_weights_used_in_bf16_first_are_reported(quant, between):
    assert len(_weights_findings(quant, between)) == 1


def test_without_the_prepare_the_load_is_reported():
    src = LOAD.format(quant="", between="").replace("    model = prepare_model_for_kbit_training(model)\n", "")
    assert len([d for d in lint(src, "MP201") if "makes the weights bf16" in d.message]) == 1
