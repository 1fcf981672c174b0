"""MP102, MP103, MP104, MP203, MP303, MP402 together with the older rules: every fix applied
at once (safe and unsafe) leaves nothing to report, and a second --fix changes nothing."""
from conftest import fix, lint

TRAINING_SCRIPT = """
import torch
from torch import nn
from transformers import TrainingArguments


class Attention(nn.Module):
    def forward(self, q, k, mask):
        scores = q @ k.transpose(-1, -2)
        scores = scores.masked_fill(mask, -1e9)
        return scores.softmax(-1)


def train(model, opt, loader):
    scaler = torch.cuda.amp.GradScaler()
    for x in loader:
        with torch.cuda.amp.autocast(dtype=torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16):
            loss = model(x)
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()


half = Attention().half()
opt = torch.optim.AdamW(half.parameters(), lr=1e-3)
args = TrainingArguments(output_dir="o", fp16=True, bf16=True)
"""


def test_all_fixes_form_one_plan():
    before = {d.code for d in lint(TRAINING_SCRIPT)}
    assert {"MP102", "MP103", "MP104", "MP203", "MP303", "MP402"} <= before
    fixed = fix(TRAINING_SCRIPT, unsafe=True)
    assert lint(fixed) == []
    assert fix(fixed, unsafe=True) == fixed
    compile(fixed, "fixed.py", "exec")
    assert fixed.count("BF16_OK = ") == 1  # one capability probe for the module
    assert "scaler.unscale_(opt)\n        torch.nn.utils.clip_grad_norm_" in fixed
    assert "torch.amp.GradScaler(\"cuda\")" in fixed and "torch.cuda.amp" not in fixed
    assert "is_bf16_supported(including_emulation=False)" in fixed
    assert "torch.finfo(scores.dtype).min" in fixed and "eps=1e-4" in fixed


def test_safe_fixes_only_leave_the_unsafe_finding():
    """Only MP104's fix is unsafe. Its finding stays after the safe fixes while the model is
    float16; when MP101 reports those weights (fp16 is switched on in the same file), MP101's
    safe fp32-master fix removes the float16 weights, and MP104 with them."""
    fixed = fix(TRAINING_SCRIPT)
    remaining = [d.code for d in lint(fixed)]
    assert remaining == (["MP104"] if "Attention().half()" in fixed else [])
    assert fix(fixed) == fixed
