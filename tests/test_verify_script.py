"""``precision-lint verify train.py``: the proof on a user's own, ordinary training script.

The scripts in ``tests/user_scripts/`` are written like user code: no fixture header, no
progress prints, loops that would run for many epochs. Each test copies one into its own
folder (the "user's project"), runs ``verify`` on it, and checks the report against what
really happens: the original fails (an exception, or non-finite losses), the ``--fix``ed
copy makes the requested optimizer steps with finite losses, the plan in force is the one
the fix changed, and the user's folder is left exactly as it was.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from precision_lint.verify import main as verify_main  # noqa: E402
from precision_lint.verify.linter import Linter  # noqa: E402
from precision_lint.verify.runner import Outcome  # noqa: E402
from precision_lint.verify.script import ScriptVerifier, run_problem  # noqa: E402
from precision_lint.verify.script_report import text as script_text  # noqa: E402
from precision_lint.verify.script_report import to_json as script_json  # noqa: E402

SCRIPTS = REPO / "tests" / "user_scripts"
HAVE_TORCH = importlib.util.find_spec("torch") is not None
HAVE_TRANSFORMERS = HAVE_TORCH and importlib.util.find_spec("transformers") is not None
HAVE_PEFT = HAVE_TRANSFORMERS and importlib.util.find_spec("peft") is not None

needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed")
needs_transformers = pytest.mark.skipif(not HAVE_TRANSFORMERS, reason="transformers is not installed")
needs_peft = pytest.mark.skipif(not HAVE_PEFT, reason="peft is not installed")

# real training steps: run with `-m slow` (CI runs them; the default run skips them)
slow = pytest.mark.slow


def snapshot(folder: Path) -> dict:
    """Every file under ``folder`` with the hash of its bytes."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def user_project(tmp_path_factory, name: str) -> Path:
    folder = tmp_path_factory.mktemp(name.replace(".py", ""))
    shutil.copy2(SCRIPTS / name, folder / name)
    return folder


def verify_in_process(folder: Path, argv: list, capsys) -> tuple:
    """``precision-lint verify ... --output-format json`` with ``folder`` as the cwd."""
    old = os.getcwd()
    os.chdir(folder)
    try:
        code = verify_main(["verify", *argv[:1], "--output-format", "json", *argv[1:]])
    finally:
        os.chdir(old)
    out = capsys.readouterr().out
    return code, json.loads(out)


def finite(values) -> bool:
    return all(isinstance(v, float) and math.isfinite(v) for v in values)


# --------------------------------------------------- custom loop: fp16 weights + GradScaler
@pytest.fixture(scope="module")
def custom_loop(tmp_path_factory):
    """One verify of the custom loop, in process; both renderings of its result."""
    folder = user_project(tmp_path_factory, "custom_loop_fp16_gradscaler.py")
    before = snapshot(folder)
    verifier = ScriptVerifier(Linter(), steps=3, device="cpu", timeout=600)
    result = verifier.verify(folder / "custom_loop_fp16_gradscaler.py", cwd=folder)
    return folder, before, result, json.loads(json.dumps(script_json(result))), script_text(result)


@slow
@needs_torch
def test_custom_loop_fails_before_and_trains_three_steps_after(custom_loop):
    folder, before, result, report, _ = custom_loop
    assert report["verdict"] == "fixed", report["verdict_text"]
    assert result.ok

    original = report["original"]
    assert original["status"] == "exception" and original["exc_type"] == "ValueError"
    assert original["exc_message"] == "Attempting to unscale FP16 gradients."
    assert original["where"] == {"file": "custom_loop_fp16_gradscaler.py", "line": 28}
    assert original["steps_made"] == 0
    plan = original["probe"]["plan"]
    assert set(plan["param_dtypes"]) == {"float16"}
    assert original["probe"]["scalers"] == [{"class": "GradScaler", "device": "cpu", "enabled": True}]
    assert original["probe"]["autocast"] == [["cpu", "float16"]]

    # fp16 weights under a scaler (MP101); AdamW's default eps on them is no finding of its own
    # (MP104): the scaler's step raises before Adam runs, as the original's run above shows
    assert [f["code"] for f in report["findings_before"]] == ["MP101"]
    assert "-model.half()" in report["fix_diff"] and "+model.float()" in report["fix_diff"]
    assert report["findings_after"] == []

    fixed = report["fixed"]
    assert fixed["status"] == "completed" and fixed["stopped"] is True
    assert fixed["steps_made"] == 3 and len(fixed["losses"]) == 3 and finite(fixed["losses"])
    assert fixed["losses_finite"] is True and fixed["problem"] is None
    assert set(fixed["probe"]["plan"]["param_dtypes"]) == {"float32"}
    # the same data and seed: the first loss is the original's loss before it failed
    assert fixed["losses"][0] == pytest.approx(original["probe"]["pending_losses"][0], rel=1e-3)


@slow
@needs_torch
def test_custom_loop_text_report_and_user_files_untouched(custom_loop):
    folder, before, _, _, text = custom_loop
    assert ("original: failed at custom_loop_fp16_gradscaler.py:28 after 0 steps: "
            "ValueError: Attempting to unscale FP16 gradients.") in text
    assert "plan in force: trainable weights float16 on cpu (AdamW); autocast cpu float16; " \
           "GradScaler('cpu') enabled" in text
    assert "  -model.half()\n  +model.float()" in text
    assert "fixed:    stopped after 3 steps, losses " in text and ": finite" in text
    assert "verdict: fixed: the original fails, the fixed copy trains 3 steps with finite losses" in text
    assert snapshot(folder) == before  # nothing written, nothing changed in the user's folder


# ------------------------------------------------------------------ a Trainer script, fp16
@slow
@needs_transformers
def test_trainer_script_cpu_emulated(tmp_path_factory, capsys):
    folder = user_project(tmp_path_factory, "trainer_fp16_tiny_gpt2.py")
    before = snapshot(folder)
    code, report = verify_in_process(
        folder, ["trainer_fp16_tiny_gpt2.py", "--device", "cpu", "--reference", "fp32"], capsys)
    assert report["verdict"] == "fixed", report["verdict_text"]
    assert code == 0

    original, fixed = report["original"], report["fixed"]
    assert original["exc_type"] == "ValueError"
    assert "Attempting to unscale FP16 gradients" in original["exc_message"]
    for run in (original, fixed):  # the Trainer's CUDA fp16 path, emulated and labelled
        assert run["emulation_installed"] is True and run["emulation"] == "trainer-fp16-scaler"
        assert "cpu-emulated" in run["plan_text"]
        [asked] = run["probe"]["training_args"]
        assert asked["fp16"] is True and asked["report_to"] != "none"  # what the script asked
    assert set(original["probe"]["plan"]["param_dtypes"]) == {"float16"}
    assert set(fixed["probe"]["plan"]["param_dtypes"]) == {"float32"}
    assert fixed["steps_made"] == 3 and fixed["stopped"] and finite(fixed["losses"])

    # --reference fp32: the fixed copy again, with fp16 switched off by the probe
    reference = report["reference"]
    assert report["reference_of"] == "fixed"
    assert reference["emulation_installed"] is False and reference["probe"]["autocast"] == []
    assert reference["probe"]["scalers"] == []  # fp16=False: accelerate makes no GradScaler
    [asked] = reference["probe"]["training_args"]
    assert asked["fp16"] is True and asked["in_force"]["fp16"] is False
    assert set(reference["probe"]["plan"]["param_dtypes"]) == {"float32"}
    assert reference["steps_made"] == 3 and finite(reference["losses"])
    diffs = report["reference_relative_differences"]
    assert len(diffs) == 3 and all(d is not None and d < 0.05 for d in diffs)
    # the same seeds in every run: the original failed on the loss the fixed run starts from
    assert original["probe"]["pending_losses"][0] == pytest.approx(fixed["losses"][0], rel=1e-2)

    # capped: no checkpoint at step 10, no tensorboard run, no final save_model, no output dir
    assert snapshot(folder) == before


# ------------------------------------------- PEFT: LoRA on a model cast to half, GradScaler
@slow
@needs_peft
def test_peft_half_fix_upcasts_the_adapters_and_keeps_the_base_float16(tmp_path_factory):
    """``get_peft_model(base, ...)`` then ``model.half()`` under a GradScaler: the adapters'
    gradients are float16 and ``unscale_`` refuses them. The fix (through the real ``--fix``)
    casts only the trainable parameters back to float32: the fixed copy trains, its LoRA
    weights are float32 and the frozen base is still float16 -- the least change, where
    ``model.float()`` would have doubled the base's memory too."""
    name = "peft_lora_fp16_half.py"
    folder = user_project(tmp_path_factory, name)
    before = snapshot(folder)
    verifier = ScriptVerifier(Linter(), steps=3, device="cpu", timeout=600)
    result = verifier.verify(folder / name, cwd=folder)
    report, text = json.loads(json.dumps(script_json(result))), script_text(result)
    assert report["verdict"] == "fixed", report["verdict_text"]
    assert result.ok

    original, fixed = report["original"], report["fixed"]
    assert original["exc_type"] == "ValueError"
    assert original["exc_message"] == "Attempting to unscale FP16 gradients."
    assert original["where"] == {"file": name, "line": 34}  # scaler.unscale_(optimizer)
    assert original["steps_made"] == 0
    assert [f["code"] for f in report["findings_before"]][:1] == ["MP101"]
    assert report["findings_after"] == []

    # the fix: a loop over the trainable parameters after `model.half()`, no `model.float()`
    diff = report["fix_diff"]
    assert "+for param in model.parameters():" in diff and "+        param.data = param.data.float()" in diff
    added = [line for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert removed == []  # `model.half()` stays: the whole model is never upcast
    casts = [line for line in added if ".float()" in line or ".to(" in line or "float32" in line.split("#")[0]]
    assert casts == ["+        param.data = param.data.float()"]

    lora = {"tensors": 4, "numel": 1024}  # A (4x32) and B (96x4) on c_attn, in 2 layers
    plan = original["probe"]["plan"]
    assert plan["param_dtypes"] == {"float16": lora}
    assert set(plan["frozen_param_dtypes"]) == {"float16"}
    frozen = plan["frozen_param_dtypes"]["float16"]
    assert frozen["numel"] == 32640 - 1024  # all params, less the adapters

    assert fixed["status"] == "completed" and fixed["stopped"] is True
    assert fixed["steps_made"] == 3 and finite(fixed["losses"]) and fixed["problem"] is None
    fixed_plan = fixed["probe"]["plan"]
    assert fixed_plan["param_dtypes"] == {"float32": lora}  # the adapters train in float32
    assert fixed_plan["frozen_param_dtypes"] == {"float16": frozen}  # the base stays float16
    assert ("plan in force: trainable weights float32 on cpu (AdamW); frozen weights float16; "
            "autocast cpu float16; GradScaler('cpu') enabled") in text
    # the same seeds: the fixed run's first loss is the one the original failed on
    assert fixed["losses"][0] == pytest.approx(original["probe"]["pending_losses"][0], rel=1e-2)
    assert snapshot(folder) == before


# -------------------------------------------------------- KD loop: fp16 KL that overflows
@slow
@needs_torch
def test_kd_loop_non_finite_before_finite_after(tmp_path_factory, capsys):
    folder = user_project(tmp_path_factory, "kd_fp16_teacher_kl.py")
    code, report = verify_in_process(folder, ["kd_fp16_teacher_kl.py", "--device", "cpu"], capsys)
    assert report["verdict"] == "fixed", report["verdict_text"]
    assert code == 0
    original, fixed = report["original"], report["fixed"]
    # the original does not raise: it trains on inf losses (every step skipped by the scaler)
    assert original["status"] == "completed" and original["steps_made"] == 3
    assert original["losses"] == ["inf", "inf", "inf"] and original["losses_finite"] is False
    assert original["problem"] == "non-finite loss (inf)"
    assert [f["code"] for f in report["findings_before"]] == ["MP401"]
    assert ".float() / TEMPERATURE" in report["fix_diff"]
    assert fixed["steps_made"] == 3 and finite(fixed["losses"]) and fixed["losses_finite"] is True
    assert max(fixed["losses"]) > 65504  # the sum that fp16 could not hold


# ------------------------------------- a silent bug: it runs, and only the reference shows it
@slow
@needs_torch
def test_reference_shows_the_original_trained_silently_wrong(tmp_path_factory, capsys):
    """clip_grad_norm_ on scaled gradients: finite losses before and after the fix, so without a
    reference it would read "works before and after"; against the fp32 reference the original
    drifts (its updates are 65536 times too small) and the fixed copy does not."""
    folder = user_project(tmp_path_factory, "clip_before_unscale_silent.py")
    argv = ["clip_before_unscale_silent.py", "--device", "cpu", "--steps", "4", "--reference", "fp32"]
    code, report = verify_in_process(folder, argv, capsys)
    assert [f["code"] for f in report["findings_before"]] == ["MP103"]
    assert report["original"]["losses_finite"] is True and report["original"]["problem"] is None
    assert report["verdict"] == "fixed", report["verdict_text"]
    assert "the original trained silently wrong" in report["verdict_text"]
    assert code == 0
    before = [d for d in report["reference_relative_differences_original"] if d is not None]
    after = [d for d in report["reference_relative_differences"] if d is not None]
    assert max(before) > 1e-2 and max(before) > 10 * max(after)


# ---------------------------------------------------------------- nothing to fix: one run
@slow
@needs_torch
def test_nothing_to_fix_runs_once_with_script_args(tmp_path_factory):
    """Through the real command line: options, then the script's own arguments after ``--``."""
    folder = user_project(tmp_path_factory, "fp32_regression_loop.py")
    before = snapshot(folder)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    command = [sys.executable, "-m", "precision_lint", "verify", "fp32_regression_loop.py",
               "--steps", "20", "--device", "cpu"]
    proc = subprocess.run(command + ["--output-format", "json", "--", "--epochs", "1", "--lr", "0.05"],
                          cwd=str(folder), env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["verdict"] == "nothing to fix" and report["reason"] == ""
    assert report["verdict_text"] == ("nothing to fix: the script trains and precision-lint changes "
                                      "nothing; no second run needed")
    assert report["fixed"] is None and report["fix_diff"] == "" and report["findings_before"] == []
    original = report["original"]
    # `--epochs 1` reached the script: 128 samples in batches of 16 = 8 steps, then it ended
    assert original["status"] == "completed" and original["stopped"] is False
    assert original["steps_made"] == 8 and finite(original["losses"])
    assert original["plan_text"] == "trainable weights float32 on cpu (SGD); no autocast; no GradScaler"
    assert report["args"] == ["--epochs", "1", "--lr", "0.05"]
    assert snapshot(folder) == before


# --------------------------------------------------------------------------- a notebook
@slow
@needs_torch
def test_notebook_runs_its_code_cells(tmp_path, capsys):
    """The custom loop as a notebook with IPython lines: run as cells, fixed in the .ipynb."""
    source = (SCRIPTS / "custom_loop_fp16_gradscaler.py").read_text()
    setup, loop = source.split('"""', 2)[2].split("inputs = torch.randn")
    cells = ["%pip install torch\n!nvidia-smi", setup.strip(), "inputs = torch.randn" + loop]
    notebook = {
        "cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# Training\n"]}] + [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
             "source": cell.splitlines(True)} for cell in cells],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }
    (tmp_path / "finetune.ipynb").write_text(json.dumps(notebook, indent=1))
    before = snapshot(tmp_path)
    code, report = verify_in_process(tmp_path, ["finetune.ipynb", "--device", "cpu"], capsys)
    assert report["verdict"] == "fixed", report["verdict_text"]
    assert code == 0
    original, fixed = report["original"], report["fixed"]
    assert original["exc_message"] == "Attempting to unscale FP16 gradients."
    assert original["where"] == {"file": "finetune.ipynb", "cell": 3, "line": 12}  # scaler.unscale_
    assert [(f["code"], f["cell"]) for f in report["findings_before"]] == [("MP101", 2)]
    assert '-    "model.half()\\n",' in report["fix_diff"]
    assert fixed["steps_made"] == 3 and finite(fixed["losses"])
    assert snapshot(tmp_path) == before


# ------------------------------------------------------------------ offline model download
@slow
@needs_transformers
def test_offline_download_is_said_clearly(tmp_path, capsys, monkeypatch):
    script = tmp_path / "finetune.py"
    script.write_text(
        "from transformers import AutoModelForCausalLM\n"
        "model = AutoModelForCausalLM.from_pretrained('precision-lint-tests/no-such-model')\n"
        "model.train()\n"
    )
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # as on a machine without network, but fast
    code, report = verify_in_process(tmp_path, ["finetune.py", "--device", "cpu"], capsys)
    assert code == 1
    assert report["verdict"] == "not verified (offline)" and report["fixed"] is None
    original = report["original"]
    assert original["offline_download"] is True and original["exc_type"] == "OSError"
    assert original["loading"] == "precision-lint-tests/no-such-model"
    assert original["where"] == {"file": "finetune.py", "line": 2}
    assert report["verdict_text"].startswith(
        "not verified: the script downloads `precision-lint-tests/no-such-model` from the Hugging "
        "Face Hub and this machine is offline")


# ------------------------------------------- --tiny: the plan without the weights
TINY_SCRIPT = """\
import torch
from transformers import AutoModelForCausalLM

device = "cuda" if torch.cuda.is_available() else "cpu"
model = AutoModelForCausalLM.from_pretrained("checkpoints/llama-like", dtype=torch.float16).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
scaler = torch.amp.GradScaler(device)
for step in range(1000):
    ids = torch.randint(0, 1000, (2, 32), device=device)
    with torch.autocast(device_type=device, dtype=torch.float16):
        loss = model(input_ids=ids, labels=ids).loss
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
"""


@slow
@needs_transformers
def test_tiny_builds_a_two_layer_model_of_the_config_class(tmp_path, capsys):
    """A 1B-parameter Llama whose weights are not here (only its config.json): --tiny runs the
    script's precision plan on a 2-layer LlamaForCausalLM built in code, and says so."""
    checkpoint = tmp_path / "checkpoints" / "llama-like"
    checkpoint.mkdir(parents=True)
    (checkpoint / "config.json").write_text(json.dumps({
        "model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 2048,
        "intermediate_size": 5632, "num_hidden_layers": 22, "num_attention_heads": 32,
        "num_key_value_heads": 4, "vocab_size": 1000, "max_position_embeddings": 2048,
    }))
    (tmp_path / "train.py").write_text(TINY_SCRIPT)
    code, report = verify_in_process(tmp_path, ["train.py", "--device", "cpu", "--tiny"], capsys)
    assert report["verdict"] == "fixed", report["verdict_text"]
    assert code == 0
    original, fixed = report["original"], report["fixed"]
    assert original["exc_message"] == "Attempting to unscale FP16 gradients."
    for run, dtype in ((original, "float16"), (fixed, "float32")):
        [tiny] = run["probe"]["tiny_models"]
        assert tiny["name"] == "checkpoints/llama-like" and tiny["class"] == "LlamaForCausalLM"
        assert tiny["dtype"] == dtype and tiny["parameters"] < 1_000_000
        assert "--tiny: checkpoints/llama-like is a 2-layer LlamaForCausalLM built in code" in run["plan_text"]
        assert set(run["probe"]["plan"]["param_dtypes"]) == {dtype}
    assert fixed["steps_made"] == 3 and finite(fixed["losses"])


# ------------------------------------------------------------------------ cheap unit tests
def test_run_problem():
    def run(status="completed", steps=(), pending=(), **kw):
        probe = {"steps": [{"step": i + 1, "losses": [v], "skipped": False} for i, v in enumerate(steps)],
                 "pending_losses": list(pending)}
        return Outcome(status, probe=probe, **kw)

    assert run(steps=[1.0, 0.9, 0.8]).probe["steps"][2]["losses"] == [0.8]
    assert run_problem(run(steps=[1.0, 0.9, 0.8]), 3) is None
    assert run_problem(run(steps=[1.0]), 3) is None  # the script ended by itself: fine
    assert run_problem(run(steps=[1.0, "inf"]), 3) == "non-finite loss (inf)"
    assert run_problem(run(steps=[1.0], pending=["nan"]), 3) == "non-finite loss (nan)"
    assert run_problem(run(), 3) == "the script ended without an optimizer step"
    assert run_problem(run("exception", exc_type="ValueError", exc_message="x"), 3) == "ValueError: x"
    assert run_problem(run("timeout", steps=[1.0], duration_s=5.0), 3).startswith("timed out after 5s (1 of 3")


def test_script_mode_dispatch(tmp_path, capsys):
    from precision_lint.verify import _is_script

    plain = tmp_path / "train.py"
    plain.write_text("print('hi')\n")
    fixture = tmp_path / "fx.py"
    fixture.write_text("# precision-lint fixture\n# rule: MP101\n")
    assert _is_script([str(plain)]) and _is_script([str(plain), "--steps", "2"])
    assert _is_script([str(fixture), "--", "--lr", "1"])
    assert not _is_script([str(fixture)]) and not _is_script([str(tmp_path)]) and not _is_script([])
    assert verify_main([str(tmp_path / "missing.py"), "--"]) == 2
    assert "no such file" in capsys.readouterr().err
    assert verify_main([str(plain), "--steps", "0"]) == 2
