"""Runs: which code executes together in one process, and what a rule may join.

A run is its entry (a script, a console-script function, a notebook, a test file), the
module-level code of every module it imports — never their ``if __name__ == "__main__":``
blocks — and what is reachable from the entry. Each shape has a positive and a negative case.
"""
import pytest
from conftest import config

from precision_lint.engine import Engine

NETLIB = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


if __name__ == "__main__":
    net = Net().cuda(){cast}
    opt = torch.optim.SGD(net.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        loss = net(torch.randn(2, 4, device="cuda")).sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
"""
INFER = """
import torch
from netlib import Net

net = Net().cuda().half()
out = net(torch.randn(2, 4, device="cuda").half())
print(out)
"""


def _lint(tree, files, *codes):
    root = tree(files)
    return Engine(config(), list(codes)).run_paths([str(root / "proj")]).diagnostics


def test_an_imported_modules_main_block_is_not_joined_into_its_importers(tree):
    files = {"proj/netlib.py": NETLIB.format(cast=""), "proj/infer.py": INFER}
    assert _lint(tree, files, "MP101") == []


def test_a_main_block_still_runs_in_its_own_modules_run(tree):
    files = {"proj/netlib.py": NETLIB.format(cast=".half()"), "proj/infer.py": INFER}
    found = _lint(tree, files, "MP101")
    assert [d.path.rsplit("/", 1)[-1] for d in found] == ["netlib.py"]
    assert found[0].span.line == 15


def test_module_level_loss_scaling_of_an_imported_module_is_joined(tree):
    lib = NETLIB.format(cast="").replace('if __name__ == "__main__":', "if True:")
    # the importer trains its own float16 net (trained: its parameters reach an optimizer)
    trains = INFER + "opt = torch.optim.SGD(net.parameters(), lr=1e-3)\n"
    files = {"proj/netlib.py": lib, "proj/infer.py": trains}
    assert [d.path.rsplit("/", 1)[-1] for d in _lint(tree, files, "MP101")] == ["infer.py"]


# --- a run that trains nothing never unscales gradients ---------------------------------
GENERATE = """
import torch
from accelerate import Accelerator
from diffusers import UNet2DConditionModel

accelerator = Accelerator(mixed_precision="fp16")
unet = UNet2DConditionModel.from_pretrained("m", subfolder="unet", torch_dtype=torch.float16)
unet = accelerator.prepare(unet)
latents = unet(noise, t, text).sample
{train}
"""


def test_an_inference_script_with_fp16_accelerate_trains_nothing():
    from conftest import lint

    assert lint(GENERATE.format(train=""), "MP101") == []


def test_the_same_script_with_an_optimizer_trains():
    from conftest import lint

    train = "optimizer = torch.optim.AdamW(unet.parameters())\naccelerator.backward(latents.mean())\noptimizer.step()"
    (d,) = lint(GENERATE.format(train=train), "MP101")
    assert "Accelerator(mixed_precision=" in d.message


HELPER_TRAINS = """
import torch


def fit(model, loader):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
"""
SCRIPT_CALLS = """
import torch
from transformers import AutoModel
from trainlib import fit

scaler = torch.amp.GradScaler("cuda")
model = AutoModel.from_pretrained("m", dtype=torch.float16)
{call}
"""


def test_a_run_trains_through_a_helper_of_another_module(tree):
    files = {"proj/trainlib.py": HELPER_TRAINS, "proj/train.py": SCRIPT_CALLS.format(call="fit(model, loader)")}
    assert [d.path.rsplit("/", 1)[-1] for d in _lint(tree, files, "MP101")] == ["train.py"]


def test_an_uncalled_training_helper_of_an_imported_module_trains_nothing(tree):
    files = {"proj/trainlib.py": HELPER_TRAINS, "proj/train.py": SCRIPT_CALLS.format(call="print(model)")}
    assert _lint(tree, files, "MP101") == []


# --- training state in order -------------------------------------------------------------
UNFROZEN = """
import torch
from accelerate import Accelerator
from diffusers import UNet2DConditionModel

accelerator = Accelerator(mixed_precision="fp16")
weight_dtype = torch.float16 if accelerator.mixed_precision == "fp16" else torch.float32
unet = UNet2DConditionModel.from_pretrained("m", subfolder="unet")
unet.requires_grad_(False)
{then}
unet.to(accelerator.device, dtype=weight_dtype)
optimizer = torch.optim.AdamW(filter(lambda p: p.requires_grad, unet.parameters()))
unet, optimizer = accelerator.prepare(unet, optimizer)
accelerator.backward(unet(noise, t, text).sample.mean())
"""


def test_frozen_then_made_trainable_again_is_trained():
    from conftest import lint

    (d,) = lint(UNFROZEN.format(then="unet.requires_grad_(True)"), "MP101")
    assert "weight_dtype" in d.message and d.span.line == 10


def test_frozen_then_given_lora_parameters_trains_them_in_the_dtype_cast_after():
    # `add_adapter` makes the adapters trainable; the cast below it makes them float16 too
    from conftest import fix, lint

    src = UNFROZEN.format(then="unet.add_adapter(lora_config)")
    (d,) = lint(src, "MP101")
    assert "adapters" in d.message and d.span.line == 10
    fixed = fix(src, "MP101")  # the upcast goes below the cast, not below add_adapter
    assert fixed.index("param.data = param.data.float()") > fixed.index("dtype=weight_dtype)")
    assert lint(fixed, "MP101") == []
    upcast = "unet.to(accelerator.device, dtype=weight_dtype)\ncast_training_params(unet, dtype=torch.float32)"
    assert lint(src.replace("unet.to(accelerator.device, dtype=weight_dtype)", upcast), "MP101") == []


MERGE_AFTER_TRAINING = """
import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
from peft import AutoPeftModelForCausalLM


def main(out):
    model = AutoModelForCausalLM.from_pretrained("m")
    trainer = Trainer(model=model, args=TrainingArguments(out, fp16=True))
    trainer.train()
    trainer.save_model(out)
    model = AutoPeftModelForCausalLM.from_pretrained(out, torch_dtype=torch.float16)
    merged = model.merge_and_unload()
    merged.save_pretrained(out)
{loop}

main("out")
"""


def test_a_model_loaded_after_training_to_merge_is_not_trained():
    from conftest import lint

    assert lint(MERGE_AFTER_TRAINING.format(loop=""), "MP101") == []


def test_a_model_loaded_after_an_earlier_trainer_and_trained_again_is_trained():
    from conftest import lint

    again = "    Trainer(model=model, args=TrainingArguments(out, fp16=True)).train()"
    (d,) = lint(MERGE_AFTER_TRAINING.format(loop=again), "MP101")
    assert d.span.line == 11


# --- one helper, two runs, each with its own arguments ------------------------------------
LOAD_VAE = """
import torch
from diffusers import AutoencoderKL


def load_vae(path, dtype):
    vae = AutoencoderKL.from_pretrained(path, subfolder="vae", torch_dtype=dtype)
    return vae
"""
CACHE_LATENTS = """
import torch
from models import load_vae

vae = load_vae("m", torch.float16)
vae.eval()
with torch.no_grad():
    latents = [vae.encode(x).latent_dist.sample() for x in images]
torch.save(latents, "latents.pt")
"""
TRAIN_VAE = """
import argparse
import torch
from accelerate import Accelerator
from models import load_vae

parser = argparse.ArgumentParser()
parser.add_argument("--mixed_precision", default="fp16", choices=["no", "fp16", "bf16"])
args = parser.parse_args()
accelerator = Accelerator(mixed_precision=args.mixed_precision)
vae = load_vae("m", {dtype})
optimizer = torch.optim.AdamW(vae.parameters(), lr=1e-5)
vae, optimizer = accelerator.prepare(vae, optimizer)
for batch in loader:
    loss = vae(batch).sample.float().pow(2).mean()
    accelerator.backward(loss)
    optimizer.step()
"""


def test_a_helper_called_by_two_runs_takes_each_runs_arguments(tree):
    files = {"proj/models.py": LOAD_VAE, "proj/cache_latents.py": CACHE_LATENTS, "proj/train.py": TRAIN_VAE.format(dtype="torch.float32")}
    assert _lint(tree, files, "MP101") == []


def test_a_helper_given_float16_by_the_training_run_is_reported_naming_the_run(tree):
    files = {"proj/models.py": LOAD_VAE, "proj/cache_latents.py": CACHE_LATENTS, "proj/train.py": TRAIN_VAE.format(dtype="torch.float16")}
    (d,) = _lint(tree, files, "MP101")
    assert d.path.endswith("models.py")
    assert "`Accelerator(mixed_precision=args.mixed_precision)` in " in d.message
    assert "the float16 comes from train.py" in d.message


DTYPES = """
import torch


def cache_dtype():
    return torch.float16


def train_dtype():
    return {train}
"""


def test_a_float16_written_in_a_shared_module_is_the_run_of_the_caller_that_passes_it(tree):
    # the float16 literal lies in dtypes.py, which the training run imports too; it reaches
    # load_vae only through the caching script's call, so it is that run's, not the training run's
    cache = CACHE_LATENTS.replace("from models import load_vae", "from models import load_vae\nfrom dtypes import cache_dtype")
    train = TRAIN_VAE.replace("from models import load_vae", "from models import load_vae\nfrom dtypes import train_dtype")
    files = {
        "proj/models.py": LOAD_VAE,
        "proj/dtypes.py": DTYPES.format(train="torch.float32"),
        "proj/cache_latents.py": cache.replace('load_vae("m", torch.float16)', 'load_vae("m", cache_dtype())'),
        "proj/train.py": train.format(dtype="train_dtype()"),
    }
    assert _lint(tree, files, "MP101") == []
    # the training run's own dtype helper giving float16 is reported
    files["proj/dtypes.py"] = DTYPES.format(train="torch.float16")
    (d,) = _lint(tree, files, "MP101")
    assert d.path.endswith("models.py")


def test_a_float16_passed_through_two_chains_of_calls_is_one_related_location(tree):
    files = {
        "proj/models.py": "from transformers import AutoModel\n\n\ndef load(dtype):\n"
        "    return AutoModel.from_pretrained('m', dtype=dtype)\n\n\ndef load_via(dtype):\n    return load(dtype)\n",
        "proj/train.py": "import torch\nfrom models import load, load_via\n\nd = torch.float16\na = load(d)\n"
        "b = load_via(d)\nscaler = torch.amp.GradScaler('cuda')\n"
        "opt = torch.optim.AdamW(list(a.parameters()) + list(b.parameters()))\n"
        "scaler.scale(a(x).loss + b(x).loss).backward()\nscaler.step(opt)\n",
    }
    (d,) = _lint(tree, files, "MP101")
    places = [(r.path, r.span.line, r.message) for r in d.related]
    assert len(places) == len(set(places)) and [p[1] for p in places if "comes from" in p[2]] == [4]


def test_a_message_names_the_run_when_a_third_file_joins_the_two(tree):
    files = {
        "proj/models.py": "import torch\nfrom transformers import AutoModel\n\n\ndef load():\n"
        "    return AutoModel.from_pretrained('m', dtype=torch.float16)\n",
        "proj/scaling.py": "import torch\n\nscaler = torch.amp.GradScaler('cuda')\n",
        "proj/train.py": "import torch\nfrom models import load\nfrom scaling import scaler\n\nmodel = load()\n"
        "opt = torch.optim.AdamW(model.parameters())\nscaler.scale(model(**batch).loss).backward()\n",
    }
    (d,) = _lint(tree, files, "MP101")
    assert d.path.endswith("models.py")
    assert "scaling.py in the run of `train.py` (line 3)" in d.message


# --- Lightning Fabric is modelled like Lightning's Trainer ------------------------------------
FABRIC = """
import lightning as L
import torch
from transformers import AutoModelForCausalLM

fabric = L.Fabric(accelerator="cuda", precision={precision})
model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
model, optimizer = fabric.setup(model, optimizer)
for batch in loader:
    fabric.backward(model(**batch).loss)
    optimizer.step()
"""


def test_fabric_16_mixed_scales_the_loss():
    from conftest import lint

    (d,) = lint(FABRIC.format(precision='"16-mixed"'), "MP101")
    assert 'Lightning `Fabric(precision="16-mixed")`' in d.message


def test_fabric_bf16_or_true_half_does_not_scale():
    from conftest import lint

    assert lint(FABRIC.format(precision='"bf16-mixed"'), "MP101") == []
    assert lint(FABRIC.format(precision='"16-true"'), "MP101") == []


# --- PEFT: the trained parameters are float32 adapters, on every path that wraps ---------------
PEFT_HEAD = """
import argparse
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, Trainer, TrainingArguments
from trl import SFTConfig, SFTTrainer

parser = argparse.ArgumentParser()
parser.add_argument("--use_peft", action="store_true")
args = parser.parse_args()
"""


def test_a_peft_wrap_taken_only_with_use_peft_leaves_the_full_fine_tune_path():
    from conftest import lint

    src = PEFT_HEAD + (
        "model = AutoModelForCausalLM.from_pretrained('m', torch_dtype=torch.float16)\n"
        "if args.use_peft:\n"
        "    model = get_peft_model(model, LoraConfig(r=8))\n"
        "Trainer(model=model, args=TrainingArguments('o', fp16=True)).train()\n"
    )
    (d,) = lint(src, "MP101")
    assert d.span.line == 10


@pytest.mark.parametrize(
    "body",
    [
        # wrapped on every path
        "model = AutoModelForCausalLM.from_pretrained('m', torch_dtype=torch.float16)\n"
        "model = get_peft_model(model, LoraConfig(r=8))\n"
        "Trainer(model=model, args=TrainingArguments('o', fp16=True)).train()\n",
        # TRL wraps it: SFTTrainer(peft_config=...)
        "model = AutoModelForCausalLM.from_pretrained('m', torch_dtype=torch.float16)\n"
        "SFTTrainer(model=model, args=SFTConfig(output_dir='o', fp16=True), peft_config=LoraConfig(r=8)).train()\n",
        # a 4-bit base: its weights are integers no optimizer updates
        "bnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.float16)\n"
        "model = AutoModelForCausalLM.from_pretrained('m', quantization_config=bnb, torch_dtype=torch.float16)\n"
        "Trainer(model=model, args=TrainingArguments('o', fp16=True)).train()\n",
    ],
)
def test_adapters_on_an_fp16_base_are_float32(body):
    from conftest import lint

    assert lint(PEFT_HEAD + body, "MP101") == []


def test_no_fix_touches_a_helper_that_a_run_training_nothing_also_gives_float16(tree):
    files = {"proj/models.py": LOAD_VAE, "proj/cache_latents.py": CACHE_LATENTS, "proj/train.py": TRAIN_VAE.format(dtype="torch.float16")}
    (d,) = _lint(tree, files, "MP101")
    assert d.fix is None  # the caching run loads the same helper in float16 and trains nothing


def test_a_helper_only_training_runs_give_float16_is_fixed(tree):
    cache = CACHE_LATENTS.replace("torch.float16", "torch.float32")
    files = {"proj/models.py": LOAD_VAE, "proj/cache_latents.py": cache, "proj/train.py": TRAIN_VAE.format(dtype="torch.float16")}
    (d,) = _lint(tree, files, "MP101")
    assert d.fix is not None


# --- export and save-time casts --------------------------------------------------------------
EXPORT = """
import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("m")
trainer = Trainer(model=model, args=TrainingArguments("o", fp16=True))
{body}
"""


def test_a_float16_export_after_training_is_not_trained():
    from conftest import lint

    body = "trainer.train()\nmodel.half()\nmodel.save_pretrained('out-fp16')\ntorch.save(model.half().state_dict(), 'w.pt')"
    assert lint(EXPORT.format(body=body), "MP101") == []


def test_a_cast_saved_and_then_trained_is_trained():
    from conftest import lint

    (d,) = lint(EXPORT.format(body="model.half()\nmodel.save_pretrained('init')\ntrainer.train()"), "MP101")
    assert d.span.line == 6


# --- a function decorated with @torch.no_grad() builds no graph ---------------------------------
NO_GRAD_ENTRY = """
import torch
from accelerate import Accelerator
from transformers import AutoModelForCausalLM

accelerator = Accelerator(mixed_precision="fp16")


{decorator}
def generate(prompt_ids):
    model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16).cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    out = model(prompt_ids)
    accelerator.backward(out.logits.float().mean())
    return out


generate(ids)
"""


def test_a_model_made_inside_a_no_grad_function_is_not_trained():
    from conftest import lint

    assert lint(NO_GRAD_ENTRY.format(decorator="@torch.no_grad()"), "MP101") == []
    assert lint(NO_GRAD_ENTRY.format(decorator="@torch.inference_mode()"), "MP101") == []


def test_the_same_function_without_the_decorator_trains():
    from conftest import lint

    (d,) = lint(NO_GRAD_ENTRY.format(decorator=""), "MP101")
    assert d.span.line == 10


# --- entries: what a launcher runs is part of the run -------------------------------------------
LAUNCHED = """
import torch
from transformers import AutoModelForCausalLM
{imports}


def train_fn({params}):
    model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    scaler = torch.amp.GradScaler("cuda")
    scaler.scale(model(**batch).loss).backward()
    scaler.step(optimizer)


{launch}
"""


@pytest.mark.parametrize(
    "imports, params, launch",
    [
        ("import torch.multiprocessing as mp", "rank", 'if __name__ == "__main__":\n    mp.spawn(train_fn, nprocs=2)'),
        ("from accelerate import notebook_launcher", "", "notebook_launcher(train_fn, num_processes=2)"),
        ("import fire", "", 'if __name__ == "__main__":\n    fire.Fire(train_fn)'),
        ("import typer\napp = typer.Typer()", "", "app.command()(train_fn)\napp()"),
    ],
)
def test_a_function_a_launcher_runs_is_judged_in_the_run(imports, params, launch):
    from conftest import lint

    (d,) = lint(LAUNCHED.format(imports=imports, params=params, launch=launch), "MP101")
    assert "GradScaler" in d.message


def test_two_clis_of_one_package_are_two_runs(tree):
    files = {
        "proj/pkg/__init__.py": "",
        "proj/pkg/common.py": "import torch\n\n\ndef batches():\n    return [torch.zeros(2)]\n",
        "proj/pkg/train_cli.py": "import torch\nfrom pkg.common import batches\nfrom transformers import AutoModel\n\n"
        "model = AutoModel.from_pretrained('m')\nopt = torch.optim.AdamW(model.parameters())\n"
        "scaler = torch.amp.GradScaler('cuda')\nfor b in batches():\n    scaler.scale(model(b).loss).backward()\n",
        "proj/pkg/infer_cli.py": "import torch\nfrom pkg.common import batches\nfrom transformers import AutoModel\n\n"
        "model = AutoModel.from_pretrained('m', dtype=torch.float16)\nprint([model(b) for b in batches()])\n",
    }
    assert _lint(tree, files, "MP101") == []


def test_a_main_block_written_reversed_or_over_lines_is_not_joined_into_its_importers(tree):
    for header in ('if "__main__" == __name__:', 'if (\n    __name__ == "__main__"\n):'):
        lib = NETLIB.format(cast="").replace('if __name__ == "__main__":', header)
        assert _lint(tree, {"proj/netlib.py": lib, "proj/infer.py": INFER}, "MP101") == [], header


def test_module_level_loss_scaling_after_a_string_holding_a_main_header_is_joined(tree):
    # the header is the text of a string: the lines after it are module-level code of every run
    lib = NETLIB.format(cast="").replace(
        'if __name__ == "__main__":', 'if True:\n    HELP = """\nif __name__ == "__main__":\n    """'
    )
    # infer.py trains its own float16 net; the GradScaler after the string is module-level code of
    # netlib, so it runs in infer.py's run (were the string a __main__ block, it would not)
    train = INFER + "opt = torch.optim.SGD(net.parameters(), lr=1e-3)\n"
    files = {"proj/netlib.py": lib, "proj/infer.py": train}
    assert [d.path.rsplit("/", 1)[-1] for d in _lint(tree, files, "MP101")] == ["infer.py"]
