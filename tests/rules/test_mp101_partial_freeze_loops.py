"""MP101 through a freeze loop that picks parameters by name (review 29a).

``for n, p in model.named_parameters(): if "ln_" in n or ".bias" in n: p.requires_grad_(False)``
after ``get_peft_model`` freezes the LayerNorms and biases; the LoRA adapters keep
``requires_grad=True`` and train, in the base's float16 on peft 0.11, so the GradScaler raises
``ValueError: Attempting to unscale FP16 gradients.``. Only a freeze the loop applies to every
parameter freezes the model (semantic/training_state.freeze_events).
"""
import pytest
from conftest import write_tree

from precision_lint.engine import Engine
from precision_lint.workspace.config import from_table

CODE = "MP101"

# the reviewer's shape (MonsieurNam/QLORA_CLIP_IxT: main.py, trainer.py, requirements.txt)
MAIN = """\
import torch
from transformers import AutoModel
from peft import LoraConfig, get_peft_model

from options import get_arguments
from loop import LoopRunner

args = get_arguments()
dtype = torch.bfloat16 if args.compute_dtype in ["auto", "bf16"] else torch.float16
kwargs = {}
if args.mode == "lora":
    kwargs["torch_dtype"] = dtype
model = AutoModel.from_pretrained("some-org/vision-text-base", **kwargs)
model = get_peft_model(model, LoraConfig(r=2, lora_alpha=1, target_modules=["q_proj", "v_proj"]))
# keep LayerNorms and biases fixed; only the adapters train
for n, p in model.named_parameters():
    if "ln_" in n or ".bias" in n:
        p.requires_grad_(False)
LoopRunner(args, model, loader=[]).run()
"""

LOOP_PY = """\
import torch


class LoopRunner:
    def __init__(self, args, model, loader):
        self.model, self.loader = model, loader
        self.opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr)
        if args.compute_dtype == "auto":
            self.compute_dtype = torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16
        else:
            self.compute_dtype = torch.bfloat16 if args.compute_dtype == "bf16" else torch.float16
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.compute_dtype == torch.float16)

    def run(self):
        for pixels, target in self.loader:
            with torch.amp.autocast("cuda", dtype=self.compute_dtype):
                loss = torch.nn.functional.cross_entropy(self.model(pixel_values=pixels), target)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()
            self.opt.zero_grad(set_to_none=True)
"""

OPTIONS = """\
import argparse


def get_arguments():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", default="qlora", choices=["qlora", "lora"])
    p.add_argument("--compute_dtype", default="auto", choices=["auto", "fp16", "bf16"])
    p.add_argument("--lr", type=float, default=1e-4)
    return p.parse_args()
"""

FREEZE = """\
for n, p in model.named_parameters():
    if "ln_" in n or ".bias" in n:
        p.requires_grad_(False)
"""


def found(root):
    engine = Engine(from_table({}, "defaults"), [CODE], jobs=1)  # nothing configured: the pins say
    return [d for d in engine.run_paths([str(root)]).diagnostics if d.code == CODE]


def shape(tmp_path, main=MAIN):
    return write_tree(tmp_path, {
        ".git/HEAD": "", "main.py": main, "loop.py": LOOP_PY, "options.py": OPTIONS,
        "requirements.txt": "transformers==4.41.2\npeft==0.11.1\naccelerate==0.31.0\n",
    })


@pytest.mark.parametrize("freeze", [True, False])
def test_a_name_filtered_freeze_loop_leaves_the_float16_adapters_training(tmp_path, freeze):
    main = MAIN if freeze else MAIN.replace(FREEZE, "")
    (d,) = found(shape(tmp_path, main))
    assert d.span.line == 12  # the float16 the adapters take
    assert "the adapters that `get_peft_model(...)` (line 14) adds to `model` take its float16 dtype" in d.message
    assert "peft==0.11.1 (requirements.txt) makes LoRA adapters in the base's float16 dtype" in d.message


FULL = "for p in model.parameters():\n    p.requires_grad = False\n"
ALL_BUT_LORA = 'for n, p in model.named_parameters():\n    if "lora_" not in n:\n        p.requires_grad = False\n'
SCRIPT = """\
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("lm", torch_dtype=torch.float16)
model = get_peft_model(model, LoraConfig(r=8, target_modules=["q_proj"]))
{loops}Trainer(model=model, args=TrainingArguments("out", fp16=True), train_dataset=ds).train()
"""


@pytest.mark.parametrize(
    "loops, reported",
    [
        (FREEZE, True),
        ('for n, p in model.named_parameters():\n    if "position_embeddings" in n:\n        p.requires_grad = False\n', True),
        ('[p.requires_grad_(False) for n, p in model.named_parameters() if "norm" in n]\n', True),
        ('for n, p in model.named_parameters():\n    if ".bias" not in n:\n        continue\n    p.requires_grad_(False)\n', True),
        # unconditional: the adapters are frozen too, nothing trains (as before)
        (FULL, False),
        ("for p in model.parameters():\n    p.requires_grad_(False)\n", False),
        # a conditional freeze next to an unconditional one: the unconditional one freezes all
        (FULL + FREEZE, False),
        (FREEZE + FULL, False),
        # ... unless the adapters are made trainable again after it
        (FULL + 'for n, p in model.named_parameters():\n    if "lora" in n:\n        p.requires_grad_(True)\n', True),
        # a freeze of all but the adapters freezes what the wrap froze already: the adapters train
        (ALL_BUT_LORA, True),
        ('for n, p in model.named_parameters():\n    p.requires_grad = "lora" in n\n', True),
        ('for n, p in model.named_parameters():\n    if "lora" in n:\n        continue\n    p.requires_grad_(False)\n', True),
        ('for n, p in model.named_parameters():\n    if "lora" not in n and "score" not in n:\n        p.requires_grad = False\n', True),
        (ALL_BUT_LORA + FULL, False),
    ],
)
def test_only_a_freeze_of_every_parameter_freezes_the_wrapped_model(tmp_path, loops, reported):
    root = write_tree(tmp_path, {".git/HEAD": "", "train.py": SCRIPT.format(loops=loops), "requirements.txt": "peft==0.10.0\n"})
    found_here = found(root)
    assert bool(found_here) == reported
    if reported:
        (d,) = found_here
        assert "the adapters that `get_peft_model(...)` (line 6) adds to `model` take its float16 dtype" in d.message


@pytest.mark.parametrize("peft, reported", [("0.10.0", True), ("0.13.2", False)])
def test_a_freeze_of_all_but_the_adapters_after_the_wrap_leaves_peft_to_decide(tmp_path, peft, reported):
    """peft 0.7 to 0.11 makes the adapters in the base layer's float16; 0.12 and later upcast
    them to float32 (``autocast_adapter_dtype``): the freeze changes neither."""
    root = write_tree(tmp_path, {
        ".git/HEAD": "", "train.py": SCRIPT.format(loops=ALL_BUT_LORA), "requirements.txt": f"peft=={peft}\n",
    })
    assert bool(found(root)) == reported


BEFORE_WRAP = """\
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("lm", torch_dtype=torch.float16)
for p in model.parameters():
    p.requires_grad = False
model = get_peft_model(model, LoraConfig(r=8, target_modules=["q_proj"]))
Trainer(model=model, args=TrainingArguments("out", fp16=True), train_dataset=ds).train()
"""


@pytest.mark.parametrize("peft, reported", [("0.10.0", True), ("0.13.2", False)])
def test_a_freeze_before_the_wrap_leaves_the_adapters_it_adds_training(tmp_path, peft, reported):
    """``get_peft_model`` adds trainable adapters to a frozen base: a freeze written before it
    freezes only the base (the wrap would freeze it too)."""
    root = write_tree(tmp_path, {".git/HEAD": "", "train.py": BEFORE_WRAP, "requirements.txt": f"peft=={peft}\n"})
    assert bool(found(root)) == reported
    # a freeze after the wrap, of every parameter, freezes the adapters as well
    after = BEFORE_WRAP.replace("for p in model.parameters():\n    p.requires_grad = False\n", "")
    after = after.replace("Trainer(", "for p in model.parameters():\n    p.requires_grad = False\nTrainer(")
    (tmp_path / "train.py").write_text(after)
    assert found(root) == []
