"""MP402 judges the dtype of the tensor a constant meets, in the runs that execute it: run-wide
evidence (a frozen fp16 VAE, fp16 autocast elsewhere, a merge CLI loading fp16) says nothing
about an eps in an fp32 module or an integer count; code that never runs is no evidence."""
from conftest import config, lint

from precision_lint.engine import Engine

CODE = "MP402"

ENCODER = """
import torch
from torch import nn
from diffusers import AutoencoderKL


class Encoder(nn.Module):
    def forward(self, x, ids):
        x = x / (x.norm(dim=-1, keepdim=True) + 1e-8)
        token_counts = (ids != 0).sum(-1, keepdim=True)
        mean = x.sum(1) / (token_counts + 1e-8)
        return mean


vae = AutoencoderKL.from_pretrained("m", subfolder="vae", torch_dtype=torch.float16)
vae.requires_grad_(False)
encoder = Encoder().cuda()
{cast}
"""


def test_an_eps_in_an_fp32_module_is_not_judged_by_another_models_fp16_weights():
    assert lint(ENCODER.format(cast=""), CODE) == []


def test_an_eps_in_a_module_cast_to_float16_is_reported():
    (d,) = lint(ENCODER.format(cast="encoder.half()"), CODE)  # not the integer count, line 10
    assert d.span.line == 8
    assert "adds 0" in d.message and "casts the model to float16" in d.message


LAYERS = """
import torch
from torch import nn


class Attention(nn.Module):
    def forward(self, q, k, mask):
        scores = q @ k.transpose(-1, -2)
        return scores.masked_fill(mask, -1e9).softmax(-1)
"""
EVAL_UTILS = """
import torch


def evaluate_amp(model, batch):
    with torch.autocast("cuda", dtype=torch.float16):
        return model(**batch)
"""
TRAIN = """
import torch
from layers import Attention
from eval_utils import evaluate_amp

lr = 1e-4
model = Attention().cuda()
{call}
"""


def _lint_tree(tree, files):
    root = tree(files)
    return Engine(config(), [CODE]).run_paths([str(root / "proj")]).diagnostics


def test_fp16_autocast_in_a_helper_the_run_never_calls_is_no_evidence(tree):
    files = {"proj/layers.py": LAYERS, "proj/eval_utils.py": EVAL_UTILS, "proj/train.py": TRAIN.format(call="")}
    assert _lint_tree(tree, files) == []


def test_fp16_autocast_in_a_helper_the_run_calls_is_evidence(tree):
    files = {
        "proj/layers.py": LAYERS,
        "proj/eval_utils.py": EVAL_UTILS,
        "proj/train.py": TRAIN.format(call="evaluate_amp(model, batch)"),
    }
    (d,) = _lint_tree(tree, files)
    assert d.path.endswith("layers.py") and "fp16 autocast" in d.message
