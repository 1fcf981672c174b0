"""Properties over generated programs (hypothesis).

Training scripts are generated from the pieces the rules judge — imports in any order,
model loading with every dtype spelling, casts, ``TrainingArguments``/TRL/Accelerate
flags, GradScaler loops, autocast, KD losses, FlashAttention-2, a user's own ``BF16_OK``,
code inside functions and under guards, CRLF line ends, no final newline — and, with
hypothesmith, from Python's whole grammar. For every program:

- ``check_source`` never raises;
- ``fix_source``'s output parses (and compiles);
- fixing is idempotent: ``fix(fix(x)) == fix(x)``;
- a program with no finding comes back byte for byte;
- written from a notebook's ``%%writefile train.py`` cell, a program has the same findings
  (one line lower: the magic line) and the same fixed text as the file ``train.py``.
"""
from __future__ import annotations

import json
import os

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from conftest import config  # noqa: E402
from precision_lint.engine import check_source, fix_source  # noqa: E402
from precision_lint.workspace.notebook import boundary_lines, cell_position, parse  # noqa: E402

CFG = config(transformers_version="5.23", trl_version="0.20")
# PRECISION_LINT_EXAMPLES=2000 for a longer hunt than the suite's
EXAMPLES = int(os.environ.get("PRECISION_LINT_EXAMPLES", "60"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,  # nothing written into the repository
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

IMPORTS = [
    "import os",
    "import torch",
    "import torch.nn.functional as F",
    "from torch import nn",
    "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments",
    "from trl import SFTConfig, SFTTrainer",
    "from accelerate import Accelerator",
    "try:\n    import wandb\nexcept ImportError:\n    wandb = None",
    "os.environ['TOKENIZERS_PARALLELISM'] = 'false'",
]
DTYPES = [
    "torch.float16", "torch.bfloat16", "torch.float32", "torch.half", '"float16"', '"bfloat16"', "'auto'", "dtype",
    "torch.bfloat16 if BF16_OK else torch.float16",
]
ATTENTION = ["", ', attn_implementation="flash_attention_2"', ", use_flash_attention_2=True", ", attn_implementation='sdpa'"]
FLAGS = ["fp16=True", "bf16=True", "fp16=False", "bf16=False", "fp16=torch.cuda.is_available()", "bf16=BF16_OK"]


@st.composite
def statements(draw):
    kind = draw(st.sampled_from(["load", "cast", "args", "trainer", "loop", "kd", "trl", "accelerate", "user-probe", "plain"]))
    if kind == "load":
        dtype = draw(st.sampled_from(DTYPES))
        attn = draw(st.sampled_from(ATTENTION))
        return [f"model = AutoModelForCausalLM.from_pretrained('gpt2', torch_dtype={dtype}{attn})"]
    if kind == "cast":
        return [draw(st.sampled_from(["model = model.half()", "model.half()", "model = model.to(torch.bfloat16)", "model.float()", "model.to(dtype)"]))]
    if kind == "args":
        flags = draw(st.lists(st.sampled_from(FLAGS), max_size=2, unique_by=lambda f: f.split("=")[0]))
        return [f"args = TrainingArguments(output_dir='out'{''.join(', ' + f for f in flags)})"]
    if kind == "trainer":
        kw = draw(st.sampled_from(["tokenizer=tok", "processing_class=tok", "**kwargs"]))
        return [f"trainer = Trainer(model=model, args=args, {kw})", "trainer.train()"]
    if kind == "loop":
        scaler = draw(st.sampled_from(["torch.cuda.amp.GradScaler()", "torch.amp.GradScaler('cuda')", "torch.amp.GradScaler(enabled=True)"]))
        dtype = draw(st.sampled_from(["torch.float16", "torch.bfloat16"]))
        return [
            f"scaler = {scaler}",
            "opt = torch.optim.AdamW(model.parameters())",
            f"with torch.autocast('cuda', dtype={dtype}):\n    loss = model(x).loss",
            "scaler.scale(loss).backward()",
            "scaler.step(opt)",
            "scaler.update()",
        ]
    if kind == "kd":
        reduction = draw(st.sampled_from(["batchmean", "sum", "mean"]))
        return [
            "teacher = AutoModelForCausalLM.from_pretrained('t', torch_dtype=torch.float16)",
            "logits = teacher(x).logits",
            f"loss = F.kl_div(F.log_softmax(student_logits / T, -1), F.softmax(logits / T, -1), reduction='{reduction}') * T ** 2",
        ]
    if kind == "trl":
        flag = draw(st.sampled_from(["", ", bf16=True", ", fp16=True"]))
        return [f"cfg = SFTConfig(output_dir='out'{flag})", "SFTTrainer(model=model, args=cfg, tokenizer=tok).train()"]
    if kind == "accelerate":
        mode = draw(st.sampled_from(["bf16", "fp16", "no"]))
        return [f"accelerator = Accelerator(mixed_precision='{mode}')", "model, opt = accelerator.prepare(model, opt)"]
    if kind == "user-probe":
        value = draw(st.sampled_from(["args.bf16", "True", "torch.cuda.is_bf16_supported()", "torch.cuda.get_device_capability()[0] >= 8"]))
        return [f"BF16_OK = {value}"]
    return [draw(st.sampled_from(["x = 1", "print('hello')  # a comment", "T = 2.0", "tok = None", "kwargs = dict(tokenizer=tok)"]))]


def _indent(block: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line else line for line in block.split("\n"))


@st.composite
def programs(draw):
    imports = draw(st.lists(st.sampled_from(IMPORTS), max_size=len(IMPORTS), unique=True))
    if draw(st.booleans()):
        imports = ["import torch", *[i for i in imports if i != "import torch"]]
    body = [s for group in draw(st.lists(statements(), min_size=1, max_size=8)) for s in group]
    layout = draw(st.sampled_from(["module", "function", "guarded"]))
    if layout == "function":
        default = draw(st.sampled_from(["torch.float16", "None", "'bf16'"]))
        text = f"def main(dtype={default}):\n" + _indent("\n".join(body)) + "\n\n\nif __name__ == '__main__':\n    main()"
    elif layout == "guarded":
        cut = draw(st.integers(0, len(body)))
        text = "\n".join(body[:cut]) + ("\nif torch.cuda.is_available():\n" + _indent("\n".join(body[cut:])) if body[cut:] else "")
    else:
        text = "\n".join(body)
    doc = draw(st.sampled_from(["", '"""Fine-tune a model."""\n', "# -*- coding: utf-8 -*-\n"]))
    source = doc + "\n".join(imports) + ("\n\n" if imports else "") + text.strip("\n") + "\n"
    if draw(st.booleans()):
        source = source.rstrip("\n")  # no final newline
    if draw(st.integers(0, 4)) == 0:
        source = source.replace("\n", "\r\n")
    return source


def _compiles(text: str) -> None:
    compile(text, "fixed.py", "exec", dont_inherit=True)


@SETTINGS
@given(programs())
def test_generated_training_scripts(source):
    _compiles(source)  # the generator writes valid Python
    found = check_source(source, "train.py", config=CFG)
    fixed = fix_source(source, "train.py", config=CFG, unsafe=True)
    _compiles(fixed)
    assert fix_source(fixed, "train.py", config=CFG, unsafe=True) == fixed
    if not found:
        assert fixed == source
    safe = fix_source(source, "train.py", config=CFG)
    _compiles(safe)
    assert fix_source(safe, "train.py", config=CFG) == safe
    if safe != source:  # what the safe fixes changed is no longer reported as safely fixable
        left = check_source(safe, "train.py", config=CFG)
        assert not [d for d in left if d.fix is not None and d.fix.applicability == "safe"], left


def _notebook(*cells: str) -> str:
    code = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": c} for c in cells]
    return json.dumps({"cells": code, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


@SETTINGS
@given(programs())
def test_a_writefile_cell_is_the_module_it_writes(source):
    magic = "%%writefile train.py\n"
    nb = _notebook("%pip install -q transformers", magic + source, "!python train.py")
    joined = parse(nb.encode("utf-8")).text
    as_file = sorted((d.code, d.span.line + 1, d.span.col) for d in check_source(source, "train.py", config=CFG))
    in_cell = []
    for d in check_source(nb, "nb.ipynb", config=CFG):
        cell, row = cell_position(boundary_lines(joined), d.span.line)
        assert cell == 2, d
        in_cell.append((d.code, row, d.span.col))
    assert sorted(in_cell) == as_file
    fixed = json.loads(fix_source(nb, "nb.ipynb", config=CFG, unsafe=True))
    cells = [c["source"] for c in fixed["cells"]]
    assert cells == ["%pip install -q transformers", magic + fix_source(source, "train.py", config=CFG, unsafe=True), "!python train.py"]


@SETTINGS
@given(programs(), st.data())
def test_a_module_appended_cell_by_cell_is_still_one_module(source, data):
    """`%%writefile train.py` then `%%writefile -a train.py`, split at any line: the same
    findings as the file, each in the cell that holds its line; the fixed cells still make
    one module that compiles and is fixed for good."""
    lines = source.splitlines(keepends=True)
    cut = data.draw(st.integers(0, len(lines)))
    first, rest = "".join(lines[:cut]), "".join(lines[cut:])
    nb = _notebook("%%writefile train.py\n" + first, "x = 1", "%%writefile -a train.py\n" + rest)
    joined = parse(nb.encode("utf-8")).text
    expected = sorted(
        (d.code, 1, d.span.line + 1, d.span.col) if d.span.line <= cut else (d.code, 3, d.span.line - cut + 1, d.span.col)
        for d in check_source(source, "train.py", config=CFG)
    )
    found = sorted((d.code, *cell_position(boundary_lines(joined), d.span.line), d.span.col) for d in check_source(nb, "nb.ipynb", config=CFG))
    assert found == expected
    fixed = fix_source(nb, "nb.ipynb", config=CFG, unsafe=True)
    cells = [c["source"] for c in json.loads(fixed)["cells"]]
    assert cells[0].startswith("%%writefile train.py\n") and cells[1] == "x = 1" and cells[2].startswith("%%writefile -a train.py\n")
    module = cells[0].split("\n", 1)[1] + cells[2].split("\n", 1)[1]
    _compiles(module)
    assert fix_source(fixed, "nb.ipynb", config=CFG, unsafe=True) == fixed


@SETTINGS
@given(st.text(max_size=300))
def test_any_text_is_checked_without_raising(text):
    found = check_source(text, "x.py", config=CFG)
    assert all(d.code for d in found)
    fixed = fix_source(text, "x.py", config=CFG, unsafe=True)
    if not found:
        assert fixed == text


try:  # only the grammar-wide test needs it: without it, the tests above still run
    import hypothesmith
except ImportError:
    hypothesmith = None


@pytest.mark.skipif(hypothesmith is None, reason="hypothesmith is in the `test` extra")
@settings(max_examples=max(EXAMPLES // 2, 1), deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar() if hypothesmith is not None else st.nothing())
def test_any_python_module(source):
    """hypothesmith's programs: anything Python's grammar allows, with our words mixed in."""
    for text in (source, "import torch\nfrom transformers import Trainer, TrainingArguments\n" + source):
        found = check_source(text, "x.py", config=CFG)
        fixed = fix_source(text, "x.py", config=CFG, unsafe=True)
        if not found:
            assert fixed == text
        else:
            assert fix_source(fixed, "x.py", config=CFG, unsafe=True) == fixed
