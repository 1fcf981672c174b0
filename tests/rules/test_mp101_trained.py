"""MP101 reports a float16 model only when the run trains it: its parameters reach an optimizer.

Before, a model cast to float16 counted as trained unless a freeze, an ``eval()`` or a
``no_grad`` said otherwise, and "the run trains somewhere" joined it with any loss scaling:
a validation pipeline, a frozen VAE, a second model used only for inference were all called
"trainable weights". Each test is a small program of the shapes the maintainers reviewed.
"""
import pytest
from conftest import config, lint

CODE = "MP101"


def lint_tree(tree, files, folder="proj"):
    from precision_lint.engine import Engine

    root = tree(files)
    return Engine(config(), [CODE]).run_paths([str(root / folder)]).diagnostics


# --- a validation pipeline cast inside a helper the training loop calls -----------------
VALIDATION = """
import torch
from accelerate import Accelerator
from diffusers import DiffusionPipeline, UNet2DConditionModel


def log_validation(accelerator, weight_dtype, step):
    pipeline = DiffusionPipeline.from_pretrained("sd-base")
    pipeline.to(accelerator.device, dtype=weight_dtype)
    images = pipeline("a photo of a dog", num_inference_steps=20).images
    images[0].save(f"val-{step}.png")


def main():
    accelerator = Accelerator(mixed_precision="fp16")
    weight_dtype = torch.float16
    unet = UNet2DConditionModel.from_pretrained("sd-base", subfolder="unet")
    {cast}
    optimizer = torch.optim.AdamW(unet.parameters(), lr=1e-5)
    unet, optimizer = accelerator.prepare(unet, optimizer)
    for step, batch in enumerate(loader):
        loss = unet(batch["x"], batch["t"], batch["c"]).sample.mean()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if step % 100 == 0:
            log_validation(accelerator, weight_dtype, step)


if __name__ == "__main__":
    main()
"""


def test_a_validation_pipeline_cast_in_a_helper_is_not_trained():
    assert lint(VALIDATION.replace("{cast}", "pass"), CODE) == []


def test_the_trained_unet_cast_to_weight_dtype_beside_it_is():
    (d,) = lint(VALIDATION.replace("{cast}", "unet.to(accelerator.device, dtype=weight_dtype)"), CODE)
    assert d.span.line == 17


# --- a frozen VAE and a LoRA UNet, both cast to weight_dtype -----------------------------
LORA = """
import torch
from accelerate import Accelerator
from diffusers import AutoencoderKL, UNet2DConditionModel
from peft import LoraConfig

accelerator = Accelerator(mixed_precision="fp16")
weight_dtype = torch.float16
vae = AutoencoderKL.from_pretrained("sd", subfolder="vae")
unet = UNet2DConditionModel.from_pretrained("sd", subfolder="unet")
vae.requires_grad_(False)
{freeze}
vae.to(accelerator.device, dtype=weight_dtype)
unet.to(accelerator.device, dtype=weight_dtype)
unet.add_adapter(LoraConfig(r=4, target_modules=["to_q", "to_v"]))
{upcast}
params = filter(lambda p: p.requires_grad, unet.parameters())
optimizer = torch.optim.AdamW(params, lr=1e-4)
unet, optimizer = accelerator.prepare(unet, optimizer)
for batch in loader:
    with torch.no_grad():
        latents = vae.encode(batch["pixels"].to(dtype=weight_dtype)).latent_dist.sample()
    loss = unet(latents, batch["t"], batch["c"]).sample.mean()
    accelerator.backward(loss)
    optimizer.step()
"""


ADAPTERS_UPCAST = "from diffusers.training_utils import cast_training_params\ncast_training_params(unet, dtype=torch.float32)"


def test_a_frozen_vae_and_a_unet_whose_float32_adapters_alone_train_are_not_reported():
    assert lint(LORA.format(freeze="unet.requires_grad_(False)", upcast=ADAPTERS_UPCAST), CODE) == []


def test_a_unet_whose_adapters_keep_its_float16_is_reported_and_the_vae_still_not():
    # `add_adapter` makes the adapters in the UNet's dtype and marks only them trainable,
    # whether or not the UNet was frozen first (tests/rules/test_mp101_add_adapter.py)
    for freeze in ("unet.requires_grad_(False)", ""):
        (d,) = lint(LORA.format(freeze=freeze, upcast=""), CODE)
        assert d.span.line == 13  # the UNet's cast, not the VAE's (line 12)
        assert "adapters" in d.message


# --- the model handed to a train(model, ...) helper of another module ------------------------
TRAINLIB = """
import torch


def train(model, loader, epochs=1):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    for _ in range(epochs):
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()


def evaluate(model, loader):
    return sum(float(model(x).argmax(-1).eq(y).float().mean()) for x, y in loader)
"""
RUN = """
import torch
from transformers import AutoModelForSequenceClassification
from trainlib import evaluate, train

student = AutoModelForSequenceClassification.from_pretrained("s")
judge = AutoModelForSequenceClassification.from_pretrained("j", torch_dtype={judge})
train(student.to("cuda", dtype={student}), loader)
print(evaluate(judge, loader))
"""


def test_a_model_handed_to_a_train_helper_in_another_module_is_trained(tree):
    files = {"proj/trainlib.py": TRAINLIB, "proj/run.py": RUN.format(student="torch.float16", judge="torch.float32")}
    (d,) = lint_tree(tree, files)
    assert d.path.endswith("run.py") and d.span.line == 7
    assert d.related[0].path.endswith("trainlib.py")


def test_a_model_handed_only_to_an_evaluate_helper_is_not(tree):
    files = {"proj/trainlib.py": TRAINLIB, "proj/run.py": RUN.format(student="torch.float32", judge="torch.float16")}
    assert lint_tree(tree, files) == []


# --- whatever the variable is named -------------------------------------------------------------
def test_a_model_built_cast_and_optimized_is_trained_whatever_its_name():
    for name in ("m", "net", "encoder"):
        src = f"""
        import torch

        def build():
            return torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))

        {name} = build()
        {name}.half()
        opt = torch.optim.AdamW({name}.parameters(), lr=1e-3)
        scaler = torch.amp.GradScaler("cuda")
        """
        (d,) = lint(src, CODE)
        assert d.span.line == 7


# --- a second, inference-only model in the training script -------------------------------------
def test_a_second_model_used_for_inference_only_is_not_trained():
    src = """
    import torch
    from transformers import AutoModelForCausalLM

    policy = AutoModelForCausalLM.from_pretrained("policy")
    reward = AutoModelForCausalLM.from_pretrained("reward", torch_dtype=torch.float16)
    optimizer = torch.optim.AdamW(policy.parameters(), lr=1e-5)
    scaler = torch.amp.GradScaler("cuda")
    for batch in loader:
        scores = reward(batch["ids"]).logits[:, -1]
        with torch.autocast("cuda", dtype=torch.float16):
            loss = -(policy(batch["ids"]).logits[:, -1] * scores).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    """
    assert lint(src, CODE) == []


# --- `model = model.float()` on the full fine-tune path after a float16 load ----------------------
UPCAST = """
import argparse
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

parser = argparse.ArgumentParser()
parser.add_argument("--use_lora", action="store_true")
args = parser.parse_args()
model = AutoModelForCausalLM.from_pretrained("x", torch_dtype=torch.float16)
if args.use_lora:
    model = get_peft_model(model, LoraConfig(r=8))
else:
    {full}
trainer = Trainer(model=model, args=TrainingArguments("o", fp16=True), train_dataset=ds)
trainer.train()
"""


def test_a_full_fine_tune_path_that_upcasts_first_is_not_reported():
    assert lint(UPCAST.format(full="model = model.float()"), CODE) == []


def test_a_full_fine_tune_path_that_trains_the_float16_load_is():
    (d,) = lint(UPCAST.format(full="model.gradient_checkpointing_enable()"), CODE)
    assert d.span.line == 9


# --- the definition: a training run that trains another model ------------------------
def test_a_float16_model_nobody_optimizes_beside_a_training_loop_is_not_reported():
    src = """
    import torch
    from transformers import AutoModel

    teacher = AutoModel.from_pretrained("t", torch_dtype=torch.float16)
    student = AutoModel.from_pretrained("s")
    optimizer = torch.optim.AdamW(student.parameters())
    scaler = torch.amp.GradScaler("cuda")
    for batch in loader:
        target = teacher(**batch).last_hidden_state
        loss = (student(**batch).last_hidden_state - target).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    """
    assert lint(src, CODE) == []
    # the same teacher handed to the optimizer too is trained
    (d,) = lint(src.replace("AdamW(student.parameters())", "AdamW(list(student.parameters()) + list(teacher.parameters()))"), CODE)
    assert d.span.line == 4


# --- an attribute of a project module's instances, trained in another file ---------------------
WRAPPER = """
import torch
from transformers import AutoModel


class Wrapper(torch.nn.Module):
    def __init__(self, name, dtype):
        super().__init__()
        self.encoder = AutoModel.from_pretrained(name, torch_dtype=dtype)
        self.head = torch.nn.Linear(8, 2)

    def forward(self, **batch):
        return self.head(self.encoder(**batch).last_hidden_state[:, 0])
"""
USES_WRAPPER = """
import torch
from lib import Wrapper

net = Wrapper("x", torch.float16)
probe = torch.nn.Linear(8, 2)
optimizer = torch.optim.AdamW({params})
scaler = torch.amp.GradScaler("cuda")
"""


def test_an_instance_trained_in_another_file_trains_the_attributes_its_class_sets(tree):
    files = {"proj/lib.py": WRAPPER, "proj/train.py": USES_WRAPPER.format(params="net.parameters()")}
    (d,) = lint_tree(tree, files)
    assert d.path.endswith("lib.py") and d.span.line == 8


def test_an_instance_nobody_optimizes_trains_nothing(tree):
    files = {"proj/lib.py": WRAPPER, "proj/train.py": USES_WRAPPER.format(params="probe.parameters()")}
    assert lint_tree(tree, files) == []


AFTER_TRAINING = """
    import torch


    def main():
        model = torch.nn.Linear(4, 4).cuda()
        opt = torch.optim.AdamW(model.parameters(), eps=1e-4)
        scaler = torch.amp.GradScaler("cuda")
        for _ in range(3):
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(torch.randn(2, 4).cuda()).sum()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        TAIL


    def finetune(m):
        pass


    if __name__ == "__main__":
        main()
"""


def test_a_cast_after_the_training_loop_for_inference_is_not_trained():
    tail = "model.half()\n        traced = torch.jit.trace(model, torch.randn(2, 4).cuda().half())\n        traced.save('m.pt')"
    assert lint(AFTER_TRAINING.replace("TAIL", tail), "MP101") == []


@pytest.mark.parametrize(
    "tail",
    [
        # training again after the cast
        "model.half()\n        for _ in range(3):\n            scaler.scale(model(torch.randn(2, 4).cuda().half()).sum()).backward()\n            scaler.step(opt)",
        # handed to a project function that may train it
        "model.half()\n        finetune(model)",
    ],
)
def test_a_cast_that_something_trains_afterwards_is_reported(tail):
    src = AFTER_TRAINING.replace("TAIL", tail)
    assert len(lint(src, "MP101")) == 1


@pytest.mark.parametrize(
    "restore, found",
    [
        ("model.float()", 0),
        ("model.float().cpu()", 0),  # review 27d: HRLLM's baseline evaluation, then back to float32
        ("model.float().train()", 0),
        ("model.float().half()", 1),  # cast again in the same chain
        ("model.cpu()", 1),  # moved, never cast back
        # an early exit between: where it exits, nothing trains (HRLLM's `--smoke` run)
        ("if smoke:\n    raise SystemExit(0)\nmodel.float().cpu()", 0),
        ("if smoke:\n    model.float()", 1),  # cast back only in some runs
    ],
)
def test_a_cast_back_to_float32_before_the_trainer_leaves_float32_weights(restore, found):
    src = f"""
import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

smoke = input() == "smoke"
model = AutoModelForCausalLM.from_pretrained("m")
model.half().to("cuda")
with torch.no_grad():
    model.generate(torch.ones(1, 4, dtype=torch.long, device="cuda"))
{restore}
Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=True)).train()
"""
    assert len([d for d in lint(src) if d.code == "MP101"]) == found
