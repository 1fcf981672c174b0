"""MP101 and the conditions code runs under: what a run that reaches a line can hold.

- An upcast of the trainable parameters written after an ``assert`` (or below an ``if bad:
  raise ...``) is on every path that goes on: a run failing that test ends there, it does not
  skip the upcast and train float16 adapters.
- A freeze ``requires_grad_(flag)`` and a cast under ``if not flag:`` never meet a trained
  model: in every run that casts, the flag is off and the model is frozen.
- A dtype a function is handed, tested at its top (``if dtype == torch.float16: raise``), is
  never float16 below: a load there is no float16 model, whatever the callers pass.
Each test is a small program of that shape.
"""
import pytest
from conftest import lint

CODE = "MP101"

ADAPTERS = """
import argparse
import torch
from accelerate import Accelerator
from diffusers import UNet2DConditionModel
from diffusers.training_utils import cast_training_params
from peft import LoraConfig

parser = argparse.ArgumentParser()
parser.add_argument("--mixed_precision", choices=["no", "fp16", "bf16"], default="fp16")
parser.add_argument("--extra", action="store_true")
args = parser.parse_args()

accelerator = Accelerator(mixed_precision=args.mixed_precision)
net = UNet2DConditionModel.from_pretrained("sd", subfolder="unet")
net.requires_grad_(False)
weight_dtype = torch.float16 if args.mixed_precision == "fp16" else torch.float32
net.to(accelerator.device, dtype=weight_dtype)
net.add_adapter(LoraConfig(r=4, target_modules=["to_q"]))
{between}
if args.mixed_precision == "fp16":
    cast_training_params([net], dtype=torch.float32)
opt = torch.optim.AdamW(filter(lambda p: p.requires_grad, net.parameters()), lr=1e-4)
net, opt = accelerator.prepare(net, opt)
for batch in loader:
    accelerator.backward(net(batch).sample.mean())
    opt.step()
"""


@pytest.mark.parametrize(
    "between",
    [
        "assert net.conv_in.weight.abs().sum() > 0",
        'if args.extra and args.mixed_precision == "bf16":\n    raise ValueError("not on this machine")',
        'if args.extra:\n    import sys\n    sys.exit("no")',
    ],
)
def test_an_upcast_below_an_assert_or_a_raise_still_reaches_the_adapters(between):
    assert lint(ADAPTERS.replace("{between}", between), CODE) == []


@pytest.mark.parametrize(
    "between",
    [
        # a run where the test fails goes on, with float16 adapters
        "if args.extra:\n    net.x_embedder = None",
        'if args.extra:\n    print("no upcast")\nelse:\n    pass',
    ],
)
def test_an_upcast_a_run_skips_and_goes_on_is_still_no_upcast(between):
    src = ADAPTERS.replace("{between}", between).replace(
        'if args.mixed_precision == "fp16":\n    cast_training_params',
        'if args.mixed_precision == "fp16" and not args.extra:\n    cast_training_params',
    )
    (d,) = lint(src, CODE)
    assert "add_adapter" in d.message


ENCODER = """
import argparse
import itertools
import torch
from accelerate import Accelerator
from transformers import CLIPTextModel
from diffusers import UNet2DConditionModel

parser = argparse.ArgumentParser()
parser.add_argument("--mixed_precision", choices=["no", "fp16", "bf16"], default="fp16")
parser.add_argument("--tune_encoder", action="store_true")
args = parser.parse_args()
{alias}
accelerator = Accelerator(mixed_precision=args.mixed_precision)
encoder = CLIPTextModel.from_pretrained("sd", subfolder="text_encoder").requires_grad_({flag})
net = UNet2DConditionModel.from_pretrained("sd", subfolder="unet")
opt = torch.optim.AdamW(
    itertools.chain(net.parameters(), encoder.parameters()) if args.tune_encoder else net.parameters(), lr=1e-5
)
net, encoder, opt = accelerator.prepare(net, encoder, opt)
weight_dtype = torch.float16 if args.mixed_precision == "fp16" else torch.float32
{cast}
for batch in loader:
    accelerator.backward(net(batch, encoder(batch)).sample.mean())
    opt.step()
"""


def encoder_script(cast, flag="args.tune_encoder", alias=""):
    return ENCODER.replace("{cast}", cast).replace("{flag}", flag).replace("{alias}", alias)


@pytest.mark.parametrize(
    "cast, flag, alias",
    [
        ("if not args.tune_encoder:\n    encoder.to(accelerator.device, dtype=weight_dtype)", "args.tune_encoder", ""),
        ("if args.tune_encoder:\n    pass\nelse:\n    encoder.to(accelerator.device, dtype=weight_dtype)", "args.tune_encoder", ""),
        # the same option read through another name: its `True` is what the test refuses
        ("if not args.tune_encoder:\n    encoder.to(accelerator.device, dtype=weight_dtype)", "tune", "tune = args.tune_encoder"),
        ("if args.tune_encoder == False:\n    encoder.to(accelerator.device, dtype=weight_dtype)", "tune", "tune = args.tune_encoder"),
    ],
)
def test_a_cast_only_where_the_flag_that_trains_the_model_is_off_is_not_reported(cast, flag, alias):
    assert lint(encoder_script(cast, flag, alias), CODE) == []


@pytest.mark.parametrize(
    "cast, flag",
    [
        ("encoder.to(accelerator.device, dtype=weight_dtype)", "args.tune_encoder"),
        ("if args.tune_encoder:\n    encoder.to(accelerator.device, dtype=weight_dtype)", "args.tune_encoder"),
        # another flag decides the cast: a run may pass both
        ("if not args.mixed_precision == 'no':\n    encoder.to(accelerator.device, dtype=weight_dtype)", "args.tune_encoder"),
        ("if not args.tune_encoder:\n    encoder.to(accelerator.device, dtype=weight_dtype)", "True"),
    ],
)
def test_a_cast_in_runs_that_train_the_model_is_reported(cast, flag):
    (d,) = lint(encoder_script(cast, flag), CODE)
    assert "makes trainable weights float16" in d.message


REFUSING = """
import argparse
import torch
from transformers import AutoModelForCausalLM

parser = argparse.ArgumentParser()
parser.add_argument("--half", action="store_true")
args = parser.parse_args()


def run(path, weight_dtype, steps):
{top}
    model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=weight_dtype)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    scaler = torch.cuda.amp.GradScaler()
    for _ in range(steps):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(torch.ones(1, 8, dtype=torch.long)).logits.mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()


run("m", torch.float16 if args.half else torch.float32, 10)
"""


@pytest.mark.parametrize(
    "top",
    [
        '    if weight_dtype == torch.float16:\n        raise ValueError("train in float32")',
        '    if weight_dtype == torch.float16 or weight_dtype == torch.bfloat16:\n        raise ValueError("no")',
        '    if weight_dtype in (torch.float16, torch.bfloat16):\n        raise ValueError("no")',
    ],
)
def test_a_dtype_the_function_refuses_at_its_top_is_never_loaded_below(top):
    assert lint(REFUSING.replace("{top}", top), CODE) == []


@pytest.mark.parametrize(
    "top",
    [
        "    pass",
        '    if steps == 0:\n        raise ValueError("no steps")',
        '    if weight_dtype == torch.bfloat16:\n        raise ValueError("no bf16")',
        '    if weight_dtype == torch.float16:\n        print("float16 weights")',  # no exit: it goes on
    ],
)
def test_a_float16_the_function_lets_through_is_reported(top):
    (d,) = lint(REFUSING.replace("{top}", top), CODE)
    assert "loads trainable weights in float16" in d.message
