"""Fixes touch only what fails: a PEFT model's adapters (not its frozen base), never a default
argument (evaluated at import, and every caller's)."""
from conftest import config, fix, lint

PEFT_HALF = """
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

p = "gpt2"
base = AutoModelForCausalLM.from_pretrained(p)
model = get_peft_model(base, LoraConfig(r=8))
model.half()  # fits a T4
Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=True)).train()
"""


def test_peft_half_upcasts_only_the_trainable_parameters():
    (found,) = lint(PEFT_HALF, "MP101")
    fixed = fix(PEFT_HALF, "MP101")
    assert "model.half()  # fits a T4\n" in fixed  # the frozen base stays float16
    assert (
        "model.half()  # fits a T4\n"
        "for param in model.parameters():  # the adapters train in float32; the frozen base stays float16\n"
        "    if param.requires_grad:\n"
        "        param.data = param.data.float()\n"
    ) in fixed
    assert lint(fixed) == [] and fix(fixed) == fixed


def test_a_plain_model_half_still_becomes_float():
    src = PEFT_HALF.replace("base = AutoModelForCausalLM.from_pretrained(p)\n", "").replace(
        "model = get_peft_model(base, LoraConfig(r=8))\n", "model = AutoModelForCausalLM.from_pretrained(p)\n"
    )
    assert "model.float()  # fits a T4" in fix(src, "MP101")


def test_the_upcast_loop_written_by_hand_is_understood():
    src = PEFT_HALF.replace(
        "model.half()  # fits a T4\n",
        "model.half()\nfor q in model.parameters():\n    if q.requires_grad:\n        q.data = q.data.float()\n",
    )
    assert lint(src, "MP101") == []


DEFAULT_ARGUMENT = """
import torch
from transformers import AutoModelForCausalLM


def load(name, dtype=torch.bfloat16, attn="flash_attention_2"):
    return AutoModelForCausalLM.from_pretrained(name, dtype=dtype, attn_implementation=attn)


model = load("gpt2").eval()
baseline = load("gpt2", attn="sdpa").eval()  # not FlashAttention-2 on every load: the dtype is MP201's
"""


def test_a_default_argument_is_reported_but_never_rewritten():
    found = {d.code: d for d in lint(DEFAULT_ARGUMENT)}
    assert {"MP201", "MP202"} <= set(found)
    assert found["MP201"].fix is None and found["MP202"].fix is None
    assert "(no automatic fix: `torch.bfloat16` is a default argument, evaluated at import" in found["MP201"].message
    assert '(no automatic fix: `"flash_attention_2"` is a default argument' in found["MP202"].message
    assert fix(DEFAULT_ARGUMENT) == fix(DEFAULT_ARGUMENT.lstrip("\n")) and "BF16_OK" not in fix(DEFAULT_ARGUMENT)


def test_the_same_literal_at_the_call_is_still_fixed():
    src = DEFAULT_ARGUMENT.replace("name, dtype=torch.bfloat16,", "name,").replace("dtype=dtype", "dtype=torch.bfloat16")
    fixed = fix(src, "MP201", config(transformers_version="5.23"), unsafe=True)
    assert "dtype=torch.bfloat16 if BF16_OK else torch.float16" in fixed


# --- a probe in a module others import is a cached function -----------------------------------

LIBRARY = """
import torch
from transformers import AutoModelForCausalLM


def load(name):
    return AutoModelForCausalLM.from_pretrained(name, dtype=torch.bfloat16, attn_implementation="flash_attention_2").eval()
"""
SCRIPT = """
from models import load

model = load("gpt2")
"""


def _fix_tree(tmp_path, monkeypatch, files):
    from conftest import dedent

    from precision_lint.engine import Engine

    for name, text in files.items():
        (tmp_path / name).write_text(dedent(text))
    monkeypatch.chdir(tmp_path)
    # with the unsafe fixes: the float16 fallback of these inference weights is one (MP201)
    result = Engine(config(transformers_version="5.23"), None, jobs=1).run_paths(["."], fix=True, unsafe=True)
    return {p.replace("./", ""): t for p, t in result.fixed_texts.items()}, result


def test_a_library_module_gets_a_lazy_probe(tmp_path, monkeypatch):
    texts, result = _fix_tree(tmp_path, monkeypatch, {"models.py": LIBRARY, "train.py": SCRIPT})
    fixed = texts["models.py"]
    assert fixed.startswith("import functools\n\nimport torch\n")  # stdlib section, sorted
    assert (
        "@functools.lru_cache(maxsize=None)\ndef bf16_ok() -> bool:\n"
        "    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8\n"
    ) in fixed
    assert "dtype=torch.bfloat16 if bf16_ok() else torch.float16" in fixed
    assert '"flash_attention_2" if bf16_ok() and is_flash_attn_2_available() else "sdpa"' in fixed
    assert "BF16_OK" not in fixed and "\nBF16" not in fixed  # nothing runs at import
    assert "functools.cache\n" not in fixed  # Python 3.9+ only; lru_cache runs on every Python torch supports
    assert result.diagnostics == []
    compile(fixed, "models.py", "exec")
    # a second run finds nothing and changes nothing
    again, second = _fix_tree(tmp_path, monkeypatch, {"models.py": fixed, "train.py": SCRIPT})
    assert again["models.py"] == fixed and second.diagnostics == []


def test_a_script_keeps_a_module_level_probe(tmp_path, monkeypatch):
    texts, _ = _fix_tree(tmp_path, monkeypatch, {"train.py": LIBRARY + '\nmodel = load("gpt2")\n'})
    assert "\nBF16_OK = torch.cuda.is_available()" in texts["train.py"]
    assert "functools" not in texts["train.py"]


# --- vendored third-party code is reported, never fixed -----------------------------------------

FORCED_FA2 = """
import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_2", dtype=torch.float16).eval()
"""
HF_HEADER = "# Copyright 2022 EleutherAI and the HuggingFace Inc. team. All rights reserved.\n#\n# Licensed under the Apache License, Version 2.0\n"


def _check_tree(tmp_path, monkeypatch, files):
    from conftest import dedent

    from precision_lint.engine import Engine

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(dedent(text) if name.endswith(".py") else text)
    monkeypatch.chdir(tmp_path)
    found = Engine(config(transformers_version="5.23"), ["MP202"], jobs=1).run_paths(["."]).diagnostics
    return {d.path.replace("./", ""): d for d in found}


def test_vendored_code_keeps_its_findings_without_fixes(tmp_path, monkeypatch):
    found = _check_tree(
        tmp_path,
        monkeypatch,
        {
            "LICENSE": "MIT License\n\nCopyright (c) 2024 Alice Example\n",
            "third_party/fastattn/model.py": FORCED_FA2,
            "libcopy/setup.py": "",
            "libcopy/mod.py": FORCED_FA2,
            "models/llama.py": HF_HEADER + FORCED_FA2.lstrip("\n"),
            "own.py": "# Copyright (c) 2025 Alice Example\n" + FORCED_FA2.lstrip("\n"),
        },
    )
    assert set(found) == {"third_party/fastattn/model.py", "libcopy/mod.py", "models/llama.py", "own.py"}
    assert "it lies in `third_party/`" in found["third_party/fastattn/model.py"].message
    assert "`libcopy/` is a copy of another distribution" in found["libcopy/mod.py"].message
    assert "licence header names another copyright holder" in found["models/llama.py"].message
    assert all(d.fix is None for p, d in found.items() if p != "own.py")
    assert found["own.py"].fix is not None  # the project's own header, the project's own code


def test_a_licence_header_alone_decides_nothing_without_a_project_licence(tmp_path, monkeypatch):
    found = _check_tree(tmp_path, monkeypatch, {"models/llama.py": HF_HEADER + FORCED_FA2.lstrip("\n")})
    assert found["models/llama.py"].fix is not None


def test_the_lazy_probe_runs_no_cuda_call_at_import(tmp_path, monkeypatch):
    """At run time: importing the fixed library module asks torch.cuda nothing (no CUDA
    initialisation in the importing process); the first use asks once, later uses are cached."""
    import subprocess
    import sys

    texts, _ = _fix_tree(tmp_path, monkeypatch, {"models.py": LIBRARY, "train.py": SCRIPT})
    (tmp_path / "models.py").write_text(texts["models.py"])
    check = """
import torch

calls = []
for name in ("is_available", "get_device_capability", "is_bf16_supported", "init"):
    real = getattr(torch.cuda, name)
    setattr(torch.cuda, name, lambda *a, _real=real, _name=name, **k: calls.append(_name) or _real(*a, **k))
import models

assert calls == [], calls
assert models.bf16_ok() is False and models.bf16_ok() is False  # CPU: no native bf16
assert calls == ["is_available"], calls
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
