"""MP101 for LoRA adapters that peft 0.7 to 0.11 make in the base's float16 dtype (issue #24).

``get_peft_model`` upcasts float16 / bfloat16 adapters to float32 since peft 0.12
(``autocast_adapter_dtype=True``); 0.7.0 to 0.11.1 make them in the base layer's float dtype
(``LoraLayer.update_layer``: ``self.to(weight.device, dtype=weight.dtype)``) and keep them
there, so on a float16 model the adapters train in float16 and the GradScaler raises
``ValueError: Attempting to unscale FP16 gradients.``. Only a project whose every allowed peft
lies in that window is reported; an unpinned one targets the installed peft (0.12 or later).
Each test is a small program of its own in a project of its own.
"""
import pytest
from conftest import write_tree

from precision_lint.engine import Engine
from precision_lint.workspace.config import from_table

CODE = "MP101"

SCRIPT = """\
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("lm", torch_dtype={dtype}{extra})
{before}model = get_peft_model(model, {config})
{after}Trainer(model=model, args=TrainingArguments("out", {flag}=True), train_dataset=ds).train()
"""

LOOP = "for param in model.parameters():  # the adapters train in float32; the frozen base stays float16"


def script(dtype="torch.float16", extra="", before="", after="", config='LoraConfig(r=8, target_modules=["q_proj"])', flag="fp16"):
    return SCRIPT.format(dtype=dtype, extra=extra, before=before, after=after, config=config, flag=flag)


def project(tmp_path, pin, src=None):
    files = {".git/HEAD": "", "train.py": src if src is not None else script()}
    if pin is not None:
        files["requirements.txt"] = f"{pin}\n"
    return write_tree(tmp_path, files)


def run(root, fix=False):
    cfg = from_table({}, "defaults")  # nothing configured: the project's pins say
    return Engine(cfg, [CODE], jobs=1).run_paths([str(root)], fix=fix)


def found(root):
    return [d for d in run(root).diagnostics if d.code == CODE]


@pytest.mark.parametrize("pin", ["peft==0.10.0", "peft>=0.7,<0.12", "peft~=0.11.0"])
def test_a_peft_pin_inside_the_window_trains_float16_adapters(tmp_path, pin):
    (d,) = found(project(tmp_path, pin))
    assert d.span.line == 5  # the float16 the adapters take
    assert "the adapters that `get_peft_model(...)` (line 6) adds to `model` take its float16 dtype" in d.message
    assert f"{pin} (requirements.txt) makes LoRA adapters in the base's float16 dtype" in d.message
    assert "float32 adapters came with peft 0.12" in d.message
    assert "Attempting to unscale FP16 gradients" in d.message


def test_the_fix_upcasts_the_adapters_below_get_peft_model_and_keeps_the_base_float16(tmp_path):
    root = project(tmp_path, "peft==0.10.0")
    result = run(root, fix=True)
    (fixed,) = result.fixed_texts.values()
    assert "torch_dtype=torch.float16" in fixed  # the frozen base keeps the dtype chosen for memory
    lines = fixed.splitlines()
    at = lines.index('model = get_peft_model(model, LoraConfig(r=8, target_modules=["q_proj"]))')
    assert lines[at + 1:at + 4] == [LOOP, "    if param.requires_grad:", "        param.data = param.data.float()"]
    assert not [d for d in result.diagnostics if d.code == CODE]
    (root / "train.py").write_text(fixed)
    assert found(root) == []  # a second run finds nothing


def test_a_config_bound_to_a_name_is_read_through_it(tmp_path):
    src = script(before='adapter = LoraConfig(r=8)\n', config="adapter")
    (d,) = found(project(tmp_path, "peft==0.9.0", src))
    assert "get_peft_model(...)" in d.message


@pytest.mark.parametrize(
    "pin",
    [
        "peft==0.6.2",  # float32 adapters: the fresh nn.Linear's weight
        "peft==0.12.0",  # get_peft_model upcasts them
        "peft>=0.10",  # allows 0.12 and later
        "peft<0.12",  # allows 0.6 and earlier
        None,  # unpinned: the installed peft (0.12 or later)
    ],
)
def test_a_peft_outside_the_window_or_not_pinned_is_silent(tmp_path, pin):
    assert found(project(tmp_path, pin)) == []


@pytest.mark.parametrize(
    "kwargs",
    [
        {"extra": ", load_in_8bit=True"},  # a quantized base: only the adapters train...
        {"before": "from peft import prepare_model_for_kbit_training\nmodel = prepare_model_for_kbit_training(model)\n"},
        {"after": "for p in model.parameters():\n    if p.requires_grad:\n        p.data = p.data.float()\n"},
        {"dtype": "torch.bfloat16", "flag": "bf16"},  # no loss scaling
        {"config": "LoraConfig(r=8), autocast_adapter_dtype=True"},  # peft 0.12's keyword: not this peft
        {"before": "from peft import PromptTuningConfig\n", "config": "PromptTuningConfig(num_virtual_tokens=8)"},  # not LoRA
    ],
)
def test_other_protections_and_configurations_are_silent(tmp_path, kwargs):
    assert found(project(tmp_path, "peft==0.10.0", script(**kwargs))) == []


def test_trl_wrapping_the_model_itself_is_left_alone(tmp_path):
    src = """\
import torch
from peft import LoraConfig
from transformers import AutoModelForCausalLM
from trl import SFTConfig, SFTTrainer

model = AutoModelForCausalLM.from_pretrained("lm", torch_dtype=torch.float16)
SFTTrainer(model=model, args=SFTConfig("out", fp16=True), peft_config=LoraConfig(r=8), train_dataset=ds).train()
"""
    assert found(project(tmp_path, "peft==0.10.0", src)) == []


def test_a_conditional_wrap_is_not_judged_by_the_window(tmp_path):
    """Only a wrap taken on every path is read this way: with ``if use_lora:`` the full
    fine-tune of the float16 weights is reported as before, without the pin."""
    (d,) = found(project(tmp_path, "peft==0.10.0", script(before="if use_lora:\n    ")))
    assert "loads trainable weights in float16" in d.message and "peft==0.10.0" not in d.message


def test_an_adapter_loaders_dtype_keyword_casts_nothing(tmp_path):
    """``PeftModel.from_pretrained(model, adapter_dir, torch_dtype=torch.float16)`` loads adapters
    into a model already made; peft has no dtype keyword there (it hands the rest to
    ``load_adapter``), so nothing is float16 by it (review 23f). A loader of the base model with
    the same keyword is reported."""
    src = """\
import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

base = AutoModelForCausalLM.from_pretrained("lm")
model = {loader}(base, "adapter", torch_dtype=torch.float16)
Trainer(model=model, args=TrainingArguments("out", fp16=True), train_dataset=ds).train()
"""
    cfg = from_table({}, "test")
    for loader, expected in (("PeftModel.from_pretrained", 0), ("AutoModelForCausalLM.from_pretrained", 1)):
        root = write_tree(tmp_path / loader, {"train.py": src.format(loader=loader)})
        found = [d for d in Engine(cfg, [CODE], jobs=1).run_paths([str(root)]).diagnostics if d.code == CODE]
        assert len(found) == expected, (loader, found)


REWRAPPED = """
import argparse
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, TrainingArguments
from trl import SFTTrainer

p = argparse.ArgumentParser()
p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
a = p.parse_args()
config = LoraConfig()
model = get_peft_model(AutoModelForCausalLM.from_pretrained("m"), config)
model = model.to({"bf16": torch.bfloat16, "fp16": torch.float16}[a.dtype])
SFTTrainer(model=model, args=TrainingArguments("out", fp16=a.dtype == "fp16"), peft_config=config, train_dataset=[]).train()
"""


@pytest.mark.parametrize("trl, fires", [("trl==0.12.2", True), ("trl==0.19.1", True), ("trl==0.21.0", False)])
def test_a_trainer_given_a_peft_model_with_peft_config_keeps_its_adapters_below_trl_020(tmp_path, trl, fires):
    """Held-out 27's peft-da-llms: ``get_peft_model``, the PeftModel cast to float16, then
    ``SFTTrainer(model=..., peft_config=config)``. Below TRL 0.20 the trainer returns a PeftModel
    as it is (read in the wheels of 0.11.4 to 0.19.1): the float16 adapters train and the first
    unscale raises; from 0.20 it makes the adapters anew (float32 on current peft)."""
    from conftest import findings_in, write_tree

    write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": f"{trl}\ntransformers==4.46.3\npeft==0.13.2\n", "train.py": REWRAPPED})
    found = [d for d in findings_in(tmp_path) if d.code == "MP101"]
    assert len(found) == (1 if fires else 0)
    if fires:
        assert "below TRL 0.20 a trainer keeps the PeftModel it is given" in found[0].message
