"""A PEFT wrap under the script's own switch (``if args.use_lora: model = get_peft_model(model)``)
that every shipped launch turns on (review 24c): the run the project ships trains float32
adapters of a frozen float16 base, so neither MP101 (no float16 gradient is unscaled) nor MP104
(Adam never updates a float16 parameter) holds there. A launch that leaves the switch off, or no
launch at all (the defaults are the run), trains the float16 model itself."""
import pytest

from conftest import write_tree
from precision_lint.engine import Engine
from precision_lint.workspace.config import from_table

TRAIN = '''import argparse
import peft
import torch
from accelerate import Accelerator
from transformers import AutoModel

parser = argparse.ArgumentParser()
parser.add_argument("--use_lora", {option})
args = parser.parse_args()

accelerator = Accelerator()
model = AutoModel.from_pretrained("org/lm")
model = model.half()
if args.use_lora:
    model = peft.get_peft_model(model, peft.LoraConfig(r=8))
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)
model, optimizer = accelerator.prepare(model, optimizer)
for batch in loader:
    accelerator.backward(model(**batch).loss)
    optimizer.step()
'''


def codes(tmp_path, launch, option='action="store_true"'):
    files = {".git/HEAD": "", "train.py": TRAIN.format(option=option)}
    if launch is not None:
        files["train.sh"] = launch
    root = write_tree(tmp_path, files)
    found = Engine(from_table({}, "defaults"), ["MP101", "MP104"], jobs=1).run_paths([str(root)]).diagnostics
    return sorted(d.code for d in found)


@pytest.mark.parametrize("option, passed", [('action="store_true"', "--use_lora"), ("default=False, type=bool", "--use_lora True")])
def test_every_shipped_launch_wraps_the_model_in_float32_adapters(tmp_path, option, passed):
    launch = f"accelerate launch --mixed_precision=fp16 train.py {passed}\n"
    assert codes(tmp_path, launch, option) == []


def test_a_shipped_launch_without_the_switch_trains_the_float16_model(tmp_path):
    launch = "accelerate launch --mixed_precision=fp16 train.py --use_lora\naccelerate launch --mixed_precision=fp16 train.py\n"
    assert codes(tmp_path, launch) == ["MP101", "MP104"]


def test_without_a_launch_the_default_run_trains_the_float16_model(tmp_path):
    # no launch gives fp16 loss scaling (no MP101); Adam still updates float16 parameters
    assert codes(tmp_path, None) == ["MP104"]
