"""MP201 on an ``Accelerator()`` whose bf16 comes from the shipped ``accelerate launch``.

``Accelerator()`` without ``mixed_precision=`` takes the launch's precision: a project that
ships ``accelerate launch --mixed_precision bf16 train.py`` (a shell launcher, a README's command,
a Colab notebook's ``!accelerate launch``) trains in bf16 on whatever GPU runs it, with nothing in
the code to ask the GPU first. On a T4 that is emulated bf16, several times slower than fp16
(``torch.cuda.is_bf16_supported()`` counts emulation from torch 2.3: nothing refuses). The finding
stands at the ``Accelerator`` and names the launch; no fix (the command chooses, not the code).
"""
import json
import os

from conftest import findings_in, write_tree

TRAIN = """\
import torch
from accelerate import Accelerator

accelerator = Accelerator({kw})
model = torch.nn.Linear(4, 4)
opt = torch.optim.AdamW(model.parameters())
model, opt = accelerator.prepare(model, opt)
for x in []:
    accelerator.backward(model(x).sum())
    opt.step()
"""
T4_README = "# Train\n\nWe train on a Tesla T4 (16 GB).\n"


def colab(*lines):
    cell = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": [f"{x}\n" for x in lines]}
    meta = {"accelerator": "GPU", "colab": {"gpuType": "T4"}}
    return json.dumps({"cells": [cell], "metadata": meta, "nbformat": 4, "nbformat_minor": 5})


def mp201(root):
    return [(os.path.relpath(d.path, root).replace(os.sep, "/"), d.span.line, d.message, d.fix) for d in findings_in(root, ("MP201",))]


def test_a_shell_launch_in_bf16_on_a_stated_t4(tmp_path):
    root = write_tree(tmp_path / "p", {
        ".git/HEAD": "", "README.md": T4_README, "train.py": TRAIN.format(kw=""),
        "run.sh": "accelerate launch --mixed_precision bf16 train.py\n",
    })
    [(path, line, message, fix)] = mp201(root)
    assert (path, line, fix) == ("train.py", 4, None)
    assert "`accelerate launch --mixed_precision bf16` (run.sh, line 1)" in message and "T4" in message


def test_a_notebook_launch_in_bf16_on_colab_t4(tmp_path):
    root = write_tree(tmp_path / "p", {
        ".git/HEAD": "", "train.py": TRAIN.format(kw=""),
        "colab.ipynb": colab("!pip install accelerate", "!accelerate launch --mixed_precision bf16 train.py"),
    })
    [(path, line, message, _)] = mp201(root)
    assert (path, line) == ("train.py", 4) and "(colab.ipynb)" in message


def test_an_fp16_launch_or_an_explicit_precision_is_not_this_finding(tmp_path):
    fp16 = write_tree(tmp_path / "a", {
        ".git/HEAD": "", "README.md": T4_README, "train.py": TRAIN.format(kw=""),
        "run.sh": "accelerate launch --mixed_precision fp16 train.py\n",
    })
    assert mp201(fp16) == []
    explicit = write_tree(tmp_path / "b", {
        ".git/HEAD": "", "README.md": T4_README, "train.py": TRAIN.format(kw='mixed_precision="fp16"'),
        "run.sh": "accelerate launch --mixed_precision bf16 train.py\n",
    })
    assert mp201(explicit) == []  # the code's own value wins over the launch's


def test_a_launch_on_an_ampere_gpu_is_native(tmp_path):
    root = write_tree(tmp_path / "p", {
        ".git/HEAD": "", "README.md": "# Train\n\nWe train on one A100 80GB.\n", "train.py": TRAIN.format(kw=""),
        "run.sh": "accelerate launch --mixed_precision bf16 train.py\n",
    })
    assert mp201(root) == []


def test_a_launch_with_no_gpu_stated_is_left_to_its_author(tmp_path):
    # the default targets are a fallback, never evidence: the author ran the bf16 launch they wrote
    root = write_tree(tmp_path / "p", {
        ".git/HEAD": "", "train.py": TRAIN.format(kw=""), "run.sh": "accelerate launch --mixed_precision bf16 train.py\n",
    })
    assert mp201(root) == []
