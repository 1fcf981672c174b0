"""MP101 for adapters injected in place into a float16 model (issue #24).

``unet.add_adapter(LoraConfig(...))`` (diffusers, transformers) and
``inject_adapter_in_model(config, model)`` make the LoRA layers in the dtype of the layer they
wrap and mark only them trainable: a UNet frozen and cast to ``weight_dtype = torch.float16``
trains float16 adapters, and fp16 loss scaling refuses to unscale their gradients
(``ValueError: Attempting to unscale FP16 gradients.``) unless the script upcasts them
(``cast_training_params(unet, dtype=torch.float32)``, or the ``requires_grad`` loop).
``get_peft_model`` upcasts them itself. Each test is a small program of that shape.
"""
import pytest
from conftest import fix, lint

CODE = "MP101"

SCRIPT = """
import argparse
import torch
from accelerate import Accelerator
from diffusers import UNet2DConditionModel
from peft import LoraConfig

parser = argparse.ArgumentParser()
parser.add_argument("--mixed_precision", choices=["no", "fp16", "bf16"], default="{precision}")
parser.add_argument("--upcast", action="store_true")
args = parser.parse_args()

accelerator = Accelerator(mixed_precision=args.mixed_precision)
denoiser = UNet2DConditionModel.from_pretrained("sd", subfolder="unet")
denoiser.requires_grad_(False)
weight_dtype = torch.float32
if accelerator.mixed_precision == "fp16":
    weight_dtype = torch.float16
elif accelerator.mixed_precision == "bf16":
    weight_dtype = torch.bfloat16
denoiser.to(accelerator.device, dtype=weight_dtype)
denoiser.add_adapter(LoraConfig(r=4, target_modules=["to_q", "to_k"]))
{upcast}
trainable = list(filter(lambda p: p.requires_grad, denoiser.parameters()))
opt = torch.optim.AdamW(trainable, lr=1e-4)
denoiser, opt = accelerator.prepare(denoiser, opt)
for batch in loader:
    loss = denoiser(batch["x"], batch["t"], batch["c"]).sample.mean()
    accelerator.backward(loss)
    opt.step()
    opt.zero_grad()
"""


def script(upcast="", precision="fp16"):
    return SCRIPT.replace("{upcast}", upcast).replace("{precision}", precision)


def test_float16_adapters_under_fp16_loss_scaling_are_reported_and_named():
    (d,) = lint(script(), CODE)
    assert d.span.line == 20  # the cast to weight_dtype: the dtype the adapters take
    assert "the adapters that `denoiser.add_adapter(...)` (line 21) adds to `denoiser`" in d.message
    assert "float16" in d.message and "Attempting to unscale FP16 gradients" in d.message


def test_the_fix_upcasts_the_adapters_below_add_adapter_and_leaves_the_base_dtype():
    src = script()
    fixed = fix(src, CODE)
    assert "denoiser.to(accelerator.device, dtype=weight_dtype)" in fixed  # the user's memory choice
    lines = fixed.splitlines()
    at = lines.index('denoiser.add_adapter(LoraConfig(r=4, target_modules=["to_q", "to_k"]))')
    assert lines[at + 1].startswith("for param in denoiser.parameters():")
    assert lines[at + 2:at + 4] == ["    if param.requires_grad:", "        param.data = param.data.float()"]
    assert lint(fixed, CODE) == []  # a second --fix finds nothing
    assert fix(fixed, CODE) == fixed


@pytest.mark.parametrize(
    "upcast",
    [
        "from diffusers.training_utils import cast_training_params\ncast_training_params(denoiser, dtype=torch.float32)",
        "from diffusers.training_utils import cast_training_params\ncast_training_params(denoiser)",
        "from diffusers.training_utils import cast_training_params\ncast_training_params([denoiser, text_encoder], dtype=torch.float32)",
        'from diffusers.training_utils import cast_training_params\nif args.mixed_precision == "fp16":\n'
        "    cast_training_params(denoiser, dtype=torch.float32)",
        'import diffusers\nif accelerator.mixed_precision in ("fp16",):\n'
        "    diffusers.training_utils.cast_training_params([denoiser], dtype=torch.float32)",
        "for p in denoiser.parameters():\n    if p.requires_grad:\n        p.data = p.data.float()",
        # diffusers' scripts also write it out with `.to(torch.float32)`, under the fp16 test
        'if args.mixed_precision == "fp16":\n    for param in denoiser.parameters():\n'
        "        if param.requires_grad:\n            param.data = param.to(torch.float32)",
    ],
)
def test_adapters_cast_to_float32_below_add_adapter_are_not_reported(upcast):
    assert lint(script(upcast), CODE) == []


@pytest.mark.parametrize(
    "upcast",
    [
        # under a condition of its own, not fp16's: `--upcast` not passed keeps float16 adapters
        "from diffusers.training_utils import cast_training_params\nif args.upcast:\n"
        "    cast_training_params(denoiser, dtype=torch.float32)",
        # bf16 is no float32: the scaler still refuses to unscale
        "from diffusers.training_utils import cast_training_params\ncast_training_params(denoiser, dtype=torch.bfloat16)",
        # another model's adapters upcast
        "from diffusers.training_utils import cast_training_params\ncast_training_params(text_encoder, dtype=torch.float32)",
    ],
)
def test_an_upcast_that_misses_the_fp16_run_or_the_model_is_still_reported(upcast):
    (d,) = lint(script(upcast), CODE)
    assert d.span.line == 20


def test_an_upcast_above_add_adapter_upcasts_nothing_it_adds():
    upcast = "from diffusers.training_utils import cast_training_params\ncast_training_params(denoiser, dtype=torch.float32)"
    src = script().replace(
        "denoiser.to(accelerator.device, dtype=weight_dtype)\n",
        "denoiser.to(accelerator.device, dtype=weight_dtype)\n" + upcast + "\n",
    )
    assert len(lint(src, CODE)) == 1


def test_bf16_mixed_precision_with_bf16_weights_has_no_loss_scaling():
    assert lint(script(precision="bf16").replace('choices=["no", "fp16", "bf16"], ', ""), CODE) == []


def test_adapters_added_to_a_float32_model_are_float32():
    src = script().replace("denoiser.to(accelerator.device, dtype=weight_dtype)", "denoiser.to(accelerator.device)")
    assert lint(src, CODE) == []


def test_adapters_frozen_again_after_add_adapter_train_nothing():
    src = script("denoiser.requires_grad_(False)")
    assert lint(src, CODE) == []


def test_add_adapter_for_inference_only_trains_nothing():
    src = """
    import torch
    from accelerate import Accelerator
    from diffusers import UNet2DConditionModel
    from peft import LoraConfig

    accelerator = Accelerator(mixed_precision="fp16")
    unet = UNet2DConditionModel.from_pretrained("sd", subfolder="unet")
    unet.requires_grad_(False)
    unet.to(accelerator.device, dtype=torch.float16)
    unet.add_adapter(LoraConfig(r=4, target_modules=["to_q", "to_k"]))
    unet.load_state_dict(torch.load("lora.pt"), strict=False)
    with torch.no_grad():
        sample = unet(noise, t, cond).sample
    """
    assert lint(src, CODE) == []


GET_PEFT = """
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("lm", torch_dtype=torch.float16)
{wrap}
Trainer(model=model, args=TrainingArguments("out", fp16=True), train_dataset=ds).train()
"""


def test_get_peft_model_on_a_float16_base_keeps_float32_adapters():
    assert lint(GET_PEFT.format(wrap="model = get_peft_model(model, LoraConfig(r=8))"), CODE) == []


@pytest.mark.parametrize(
    "wrap",
    [
        "model.add_adapter(LoraConfig(r=8))",
        "from peft import inject_adapter_in_model\nmodel = inject_adapter_in_model(LoraConfig(r=8), model)",
        "from peft import inject_adapter_in_model\ninject_adapter_in_model(LoraConfig(r=8), model=model)",
    ],
)
def test_transformers_add_adapter_and_inject_adapter_in_model_keep_the_float16(wrap):
    (d,) = lint(GET_PEFT.format(wrap=wrap), CODE)
    assert d.span.line == 5 and "adapters" in d.message
    fixed = fix(GET_PEFT.format(wrap=wrap), CODE)
    assert "torch_dtype=torch.float16" in fixed and "param.data = param.data.float()" in fixed
    assert lint(fixed, CODE) == []


# --- modules_to_save: PEFT trains copies of them, in the model's dtype --------------------------
SAVED = 'LoraConfig(r=8, target_modules=["q_proj"], modules_to_save=["embed_tokens", "lm_head"])'


@pytest.mark.parametrize(
    "wrap",
    [
        f"model = get_peft_model(model, {SAVED})",
        f"adapter_config = {SAVED}\nmodel = get_peft_model(model, adapter_config)",
        "model = get_peft_model(model, peft_config=LoraConfig(r=8, modules_to_save='score'))",
    ],
)
def test_modules_to_save_of_a_float16_model_train_float16_copies(wrap):
    """``ModulesToSaveWrapper`` deep-copies each module in its dtype and trains the copy;
    ``get_peft_model`` upcasts only the adapters: the copies raise the unscale error."""
    (d,) = lint(GET_PEFT.format(wrap=wrap), CODE)
    assert d.span.line == 5 and "modules_to_save=" in d.message and "get_peft_model(...)" in d.message
    fixed = fix(GET_PEFT.format(wrap=wrap), CODE)
    assert "torch_dtype=torch.float16" in fixed  # the frozen base keeps the dtype chosen for memory
    lines = fixed.splitlines()
    at = next(i for i, line in enumerate(lines) if "get_peft_model(model" in line)
    assert lines[at + 1:at + 4] == [
        "for param in model.parameters():  # the adapters train in float32; the frozen base stays float16",
        "    if param.requires_grad:",
        "        param.data = param.data.float()",
    ]
    assert lint(fixed, CODE) == []


@pytest.mark.parametrize(
    "wrap",
    [
        "model = get_peft_model(model, LoraConfig(r=8, modules_to_save=None))",
        "model = get_peft_model(model, LoraConfig(r=8, modules_to_save=[]))",
        "model = get_peft_model(model, LoraConfig(r=8, modules_to_save=opts.saved))",  # the user's, unknown
        f"model = get_peft_model(model, {SAVED})\n"
        "for p in model.parameters():\n    if p.requires_grad:\n        p.data = p.data.float()",
        f"adapter_config = {SAVED}\nadapter_config = LoraConfig(r=8)\nmodel = get_peft_model(model, adapter_config)",
    ],
)
def test_no_module_saved_or_the_copies_upcast_is_not_reported(wrap):
    assert lint(GET_PEFT.format(wrap=wrap), CODE) == []


def test_saved_modules_under_deepspeed_or_bf16_are_not_reported():
    src = GET_PEFT.format(wrap=f"model = get_peft_model(model, {SAVED})")
    assert lint(src.replace('fp16=True', 'fp16=True, deepspeed="ds.json"'), CODE) == []
    assert lint(src.replace("torch.float16", "torch.bfloat16").replace("fp16=True", "bf16=True"), CODE) == []


# --- the models an upcast takes from a list variable (issue: diffusers' LoRA scripts) --------
UPCAST = "from diffusers.training_utils import cast_training_params\n"


@pytest.mark.parametrize(
    "upcast",
    [
        "kept = [denoiser]\ncast_training_params(kept, dtype=torch.float32)",
        "kept = []\nkept.append(denoiser)\ncast_training_params(kept)",
        "kept = [text_encoder]\nkept.extend([denoiser])\ncast_training_params(kept, dtype=torch.float32)",
        "kept = [text_encoder]\nkept.insert(0, denoiser)\ncast_training_params(kept)",
        "kept = [text_encoder]\nkept += [denoiser]\ncast_training_params(kept)",
        "kept = [text_encoder]\nkept = kept + [denoiser]\ncast_training_params(model=kept)",
        'if args.mixed_precision == "fp16":\n    kept = []\n    kept.append(denoiser)\n'
        "    cast_training_params(kept, dtype=torch.float32)",
        # the loop written out over the list
        "kept = [text_encoder]\nkept.append(denoiser)\nfor m in kept:\n    for p in m.parameters():\n"
        "        if p.requires_grad:\n            p.data = p.to(torch.float32)",
    ],
)
def test_an_upcast_of_a_list_variable_holding_the_model_is_not_reported(upcast):
    assert lint(script(UPCAST + upcast), CODE) == []


@pytest.mark.parametrize(
    "upcast",
    [
        # appended after the upcast: the list the call saw did not hold it
        "kept = [text_encoder]\ncast_training_params(kept)\nkept.append(denoiser)",
        # appended only under a test of its own: without `--upcast` the adapters stay float16
        "kept = [text_encoder]\nif args.upcast:\n    kept.append(denoiser)\ncast_training_params(kept)",
        # another list
        "kept = [text_encoder]\nother = [denoiser]\ncast_training_params(kept)",
    ],
)
def test_a_list_variable_without_the_model_at_the_upcast_is_still_reported(upcast):
    (d,) = lint(script(UPCAST + upcast), CODE)
    assert d.span.line == 20


TWO = """
import argparse
import torch
from accelerate import Accelerator
from diffusers import UNet2DConditionModel
from diffusers.training_utils import cast_training_params
from peft import LoraConfig
from transformers import CLIPTextModel

parser = argparse.ArgumentParser()
parser.add_argument("--mixed_precision", choices=["no", "fp16", "bf16"], default="fp16")
parser.add_argument("--tune_encoder", action="store_true")
parser.add_argument("--other", action="store_true")
args = parser.parse_args()

accelerator = Accelerator(mixed_precision=args.mixed_precision)
denoiser = UNet2DConditionModel.from_pretrained("sd", subfolder="unet")
encoder = CLIPTextModel.from_pretrained("sd", subfolder="text_encoder")
denoiser.requires_grad_(False)
encoder.requires_grad_(False)
weight_dtype = torch.float16 if accelerator.mixed_precision == "fp16" else torch.float32
denoiser.to(accelerator.device, dtype=weight_dtype)
encoder.to(accelerator.device, dtype=weight_dtype)
denoiser.add_adapter(LoraConfig(r=4, target_modules=["to_q"]))
if args.tune_encoder:
    encoder.add_adapter(LoraConfig(r=4, target_modules=["q_proj"]))
if args.mixed_precision == "fp16":
    kept = [denoiser]
    if args.{flag}:
        kept.extend([encoder])
    cast_training_params(kept, dtype=torch.float32)
params = [p for p in denoiser.parameters() if p.requires_grad] + [p for p in encoder.parameters() if p.requires_grad]
opt = torch.optim.AdamW(params, lr=1e-4)
denoiser, encoder, opt = accelerator.prepare(denoiser, encoder, opt)
for batch in loader:
    loss = denoiser(batch["x"], batch["t"], encoder(batch["ids"])[0]).sample.mean()
    accelerator.backward(loss)
    opt.step()
"""


def test_a_model_added_to_the_upcast_under_the_test_its_adapters_are_added_under_is_not_reported():
    assert lint(TWO.replace("{flag}", "tune_encoder"), CODE) == []


def test_a_model_added_to_the_upcast_under_another_test_is_still_reported():
    (d,) = lint(TWO.replace("{flag}", "other"), CODE)
    assert d.span.line == 22 and "encoder.add_adapter" in d.message


REMADE = SCRIPT.replace(
    'denoiser = UNet2DConditionModel.from_pretrained("sd", subfolder="unet")',
    'def load_denoiser():\n    return UNet2DConditionModel.from_pretrained("sd", subfolder="unet")\n\n\ndenoiser = load_denoiser()',
).replace("{precision}", "fp16") + """    if accelerator.is_main_process:  # validation with a freshly loaded copy
        denoiser = load_denoiser()
        denoiser.to(accelerator.device, dtype=weight_dtype)
        pipe = StableDiffusionPipeline.from_pretrained("sd", unet=denoiser)
        pipe("a prompt")
"""


def test_a_model_loaded_again_for_validation_is_not_the_one_that_trains():
    src = REMADE.replace("{upcast}", UPCAST + "cast_training_params(denoiser)")
    assert lint(src, CODE) == []


def test_a_rebinding_that_passes_the_model_on_keeps_its_adapters():
    # `unwrap_model(denoiser)` is the same model: its float16 adapters are the ones training
    src = SCRIPT.replace("{precision}", "fp16").replace(
        "denoiser.to(accelerator.device, dtype=weight_dtype)\n", ""
    ).replace("{upcast}", "denoiser = accelerator.unwrap_model(denoiser)\ndenoiser.to(accelerator.device, dtype=weight_dtype)")
    (d,) = lint(src, CODE)
    assert "denoiser.add_adapter" in d.message


NORMS = """
for name, param in denoiser.named_parameters():
    if "norm" in name:
        param.requires_grad = True
"""


def test_norm_layers_made_trainable_after_the_adapters_are_upcast_with_them():
    src = script(NORMS + UPCAST + 'if args.mixed_precision == "fp16":\n    kept = [denoiser]\n    cast_training_params(kept)')
    assert lint(src, CODE) == []


def test_norm_layers_made_trainable_in_float16_without_an_upcast_are_reported():
    (d,) = lint(script(NORMS), CODE)
    assert d.span.line == 20


BRANCHES = """
import argparse
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments


def train(args, torch_dtype, provider):
    model = AutoModelForCausalLM.from_pretrained("m")
    if provider == "hf":
        model = get_peft_model(model, LoraConfig())
        model = model.to(torch_dtype)
    else:
        model.add_adapter("task", config="seq_bn"){else_upcast}
    Trainer(model=model, args=args, train_dataset=[]).train()


p = argparse.ArgumentParser()
p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
p.add_argument("--provider", default="hf")
a = p.parse_args()
dtype = {{"bf16": torch.bfloat16, "fp16": torch.float16}}[a.dtype]
train(TrainingArguments("out", fp16=a.dtype == "fp16"), dtype, a.provider)
"""
ELSE_UPCAST = """
        for param in model.parameters():
            if param.ndim == 1:
                param.data = param.data.to(torch.float32)"""


@pytest.mark.parametrize("else_upcast", ["", ELSE_UPCAST], ids=["no-upcast", "upcast-in-the-else"])
def test_an_injection_in_the_other_branch_is_not_the_casts(else_upcast):
    """Held-out 27's peft-da-llms: peft's adapters under ``if provider == "hf":``, cast to the
    chosen dtype there, and AdapterHub's in the ``else:`` with its own upcast loop. The last
    injection of the ``if`` branch's run is ``get_peft_model``: the ``else:``'s is in no run of
    the cast, nor is its upcast, and ``--dtype fp16`` trains float16 adapters."""
    (d,) = lint(BRANCHES.format(else_upcast=else_upcast), CODE)
    assert "`.to(torch_dtype)` makes trainable weights float16" in d.message
