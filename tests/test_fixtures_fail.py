"""The fixtures are honest -- checked without the linter.

Every fixture that can run on this machine (``needs: cpu``, and the ``cpu-emulated`` run
of ``needs: cuda`` fixtures that declare an emulation):

* the original fails exactly as its header declares;
* with only a stage's rules fixed by hand (``expect-after``), it fails as that stage
  declares;
* with the *intended* fix applied by hand (HAND_FIXES below: the edit each rule's
  autofix is meant to make), it completes its declared steps with finite losses.

All runs share one interpreter that imports torch/transformers once and forks per run
(``launch.py --batch``), with CUDA hidden. ``tests/test_harness.py`` checks the same
fixtures against the real ``--fix``.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from precision_lint.verify.fixture import discover  # noqa: E402
from precision_lint.verify.runner import LAUNCHER, fixture_env, outcome_from  # noqa: E402

FIXTURES = REPO / "fixtures"
RUN_TIMEOUT = 300

PROBE = (
    "BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8\n"
)

# fixture name -> rule -> [(file relative to the fixture folder (or "" for a
# single-file fixture), old text, new text)]. Each old text must occur exactly once.
_MP201_PROBE = ("", "VOCAB = 128\n", PROBE + "\nVOCAB = 128\n")
HAND_FIXES = {
    "MP101/seed000_custom_loop_gradscaler": {
        "MP101": [("", "dtype=torch.float16).to(device)", "dtype=torch.float32).to(device)")],
    },
    "MP101/seed001_trainer_fp16_helper_module": {
        "MP101": [("model_utility_configs.py", "torch_dtype=torch.float16,", "torch_dtype=torch.float32,")],
    },
    "MP102/fp16_and_bf16_both_true": {
        "MP102": [
            ("", "WORDS = [", PROBE + "\nWORDS = ["),
            ("", "fp16=True,", "fp16=torch.cuda.is_available() and not BF16_OK,"),
            ("", "bf16=True,", "bf16=BF16_OK,"),
        ],
    },
    "MP103/clip_before_unscale_no_progress": {
        "MP103": [("", "        torch.nn.utils.clip_grad_norm_(",
                   "        scaler.unscale_(optimizer)\n        torch.nn.utils.clip_grad_norm_(")],
    },
    "MP402/masked_fill_minus_1e9_under_fp16_autocast": {
        "MP402": [("", "masked_fill(~self.causal[:t, :t], -1e9)",
                   "masked_fill(~self.causal[:t, :t], torch.finfo(scores.dtype).min)")],
    },
    "MP104/adamw_default_eps_fp16_model": {
        "MP104": [("", "AdamW(model.parameters(), lr=1e-3)", "AdamW(model.parameters(), lr=1e-3, eps=1e-4)")],
    },
    "MP201/seed001_bf16_on_pre_ampere": {
        "MP201": [
            _MP201_PROBE,
            ("", "dtype=torch.bfloat16)", "dtype=torch.bfloat16 if BF16_OK else torch.float32)"),
            ("", "bf16=True,", "bf16=BF16_OK,\n        fp16=torch.cuda.is_available() and not BF16_OK,"),
        ],
    },
    "MP202/flash_attention_2_unguarded": {
        "MP202": [
            _MP201_PROBE,
            ("", 'attn_implementation="flash_attention_2",',
             'attn_implementation="flash_attention_2" if BF16_OK else "sdpa",'),
        ],
        "MP201": [
            _MP201_PROBE,
            ("", "dtype=torch.bfloat16,", "dtype=torch.bfloat16 if BF16_OK else torch.float32,"),
            ("", "bf16=True,", "bf16=BF16_OK,\n        fp16=torch.cuda.is_available() and not BF16_OK,"),
        ],
    },
    "MP301/seed004_trainer_tokenizer_kwarg": {
        "MP301": [("", "tokenizer=tokenizer,", "processing_class=tokenizer,")],
    },
    "MP301/trainer_tokenizer_attribute": {
        "MP301": [("", "    trainer.tokenizer.save_pretrained(output_dir)", "    trainer.processing_class.save_pretrained(output_dir)")],
    },
    "MP305/compute_loss_without_num_items": {
        "MP305": [("", "def compute_loss(self, model, inputs, return_outputs=False):",
                   "def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):")],
    },
    "MP306/autocast_without_device_type": {
        "MP306": [("", "        with torch.amp.autocast(enabled=USE_AMP):", '        with torch.amp.autocast("cuda", enabled=USE_AMP):')],
    },
    "MP302/training_arguments_evaluation_strategy": {
        "MP302": [("", 'evaluation_strategy="steps",', 'eval_strategy="steps",')],
    },
    "MP302/sft_trainer_max_seq_length": {
        "MP302": [
            ("", "        max_seq_length=32,\n        dataset_text_field=\"text\",\n", ""),
            ("", "        fp16=False,\n", "        fp16=False,\n        max_length=32,\n        dataset_text_field=\"text\",\n"),
        ],
    },
    "MP401/seed002_kd_batchmean_fp16_logits": {
        "MP401": [
            ("", "F.log_softmax(student_logits / TEMPERATURE", "F.log_softmax(student_logits.float() / TEMPERATURE"),
            ("", "F.softmax(teacher_logits / TEMPERATURE", "F.softmax(teacher_logits.float() / TEMPERATURE"),
        ],
    },
    "MP401/seed003_kd_token_sum_fp16_logits": {
        "MP401": [
            ("", "F.log_softmax(student_logits / temperature", "F.log_softmax(student_logits.float() / temperature"),
            ("", "F.softmax(teacher_logits / temperature", "F.softmax(teacher_logits.float() / temperature"),
        ],
    },
}

# real training steps: run with `-m slow` (CI runs them; the default run skips them)
slow = pytest.mark.slow


def runnable_here(fixture) -> bool:
    return fixture.needs == "cpu" or fixture.emulate is not None


ALL = discover([FIXTURES], FIXTURES)
CPU_FIXTURES = [f for f in ALL if runnable_here(f)]
BY_NAME = {f.name: f for f in CPU_FIXTURES}


def _copy(fixture, dest: Path) -> Path:
    """Copy the fixture to dest; return the entry script in the copy."""
    import shutil

    dest.mkdir(parents=True)
    if fixture.is_dir:
        shutil.copytree(fixture.path, dest / fixture.path.name)
        return dest / fixture.path.name / fixture.entry_relpath
    shutil.copy2(fixture.path, dest / fixture.path.name)
    return dest / fixture.path.name


def _apply(fixture, entry: Path, rules) -> None:
    root = entry.parent if fixture.is_dir else None
    seen = set()
    for rule in rules:
        for edit in HAND_FIXES[fixture.name][rule]:
            if edit in seen:
                continue
            seen.add(edit)
            rel, old, new = edit
            path = (root / rel) if rel else entry
            text = path.read_text()
            assert text.count(old) == 1, f"{fixture.name}: {old!r} must occur once in {path.name}"
            path.write_text(text.replace(old, new))


def _emulation(fixture):
    return fixture.emulate if fixture.needs == "cuda" else None


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """Run every original, stage and hand-fixed copy in one forking interpreter."""
    base = tmp_path_factory.mktemp("fixtures-fail")
    runs, keys = [], []
    for fx in CPU_FIXTURES:
        variants = [("original", ())]
        variants += [(f"stage{i}", stage.rules) for i, stage in enumerate(fx.stages, start=1)]
        if fx.name in HAND_FIXES:
            variants.append(("fixed", tuple(HAND_FIXES[fx.name])))
        for kind, rules in variants:
            work = base / fx.name.replace("/", "__") / kind
            entry = _copy(fx, work / "src")
            if rules:
                _apply(fx, entry, rules)
            runs.append({
                "entry": str(entry), "args": list(fx.args), "cwd": str(entry.parent),
                "result": str(work / "result.json"), "stdout": str(work / "stdout.txt"),
                "stderr": str(work / "stderr.txt"), "timeout": RUN_TIMEOUT,
                "emulate": _emulation(fx), "tmpdir": str(work / "tmp"),
            })
            keys.append((fx.name, kind))
    spec = base / "spec.json"
    spec.write_text(json.dumps(runs))
    proc = subprocess.run(
        [sys.executable, str(LAUNCHER), "--batch", str(spec)],
        env=fixture_env("cpu"), capture_output=True, text=True,
        timeout=RUN_TIMEOUT * len(runs) + 120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = {}
    for key, run in zip(keys, runs):
        record = json.loads(Path(run["result"]).read_text())
        stdout = Path(run["stdout"]).read_text(errors="replace")
        stderr = Path(run["stderr"]).read_text(errors="replace")
        results[key] = outcome_from(record, stdout, stderr, record.get("duration_s", 0.0))
    return results


def _explain(outcome) -> str:
    return f"{outcome.summary()}\n--- stdout ---\n{outcome.stdout_tail}\n--- stderr ---\n{outcome.stderr_tail}"


def test_there_are_cpu_fixtures_for_every_seed_story():
    stories = " ".join(f.story for f in ALL)
    for seed in ("seed 000", "seed 001", "seed 002", "seed 003", "seed 004"):
        assert seed in stories, f"no fixture tells the story of {seed}"
    assert len(CPU_FIXTURES) >= 6


def test_every_runnable_fixture_has_a_hand_fix():
    assert sorted(HAND_FIXES) == sorted(BY_NAME)
    for name, fixes in HAND_FIXES.items():
        assert set(fixes) == set(BY_NAME[name].rules), name


@slow
@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_original_fails_as_declared(outcomes, name):
    fx = BY_NAME[name]
    outcome = outcomes[(name, "original")]
    assert outcome.matches(fx.expect), f"declared {fx.expect.describe()}, got {_explain(outcome)}"
    if fx.expect.kind == "non-finite":
        assert outcome.status == "completed"
        assert any(not math.isfinite(v) for v in outcome.losses())
    if _emulation(fx):
        assert outcome.emulation_installed, "the emulation was never switched on"


@slow
@pytest.mark.parametrize(
    "name,number",
    [(f.name, i) for f in CPU_FIXTURES for i in range(1, len(f.stages) + 1)],
)
def test_stage_fails_as_declared(outcomes, name, number):
    fx = BY_NAME[name]
    stage = fx.stages[number - 1]
    outcome = outcomes[(name, f"stage{number}")]
    assert outcome.matches(stage.expect), (
        f"after fixing {stage.rules} by hand: declared {stage.expect.describe()}, got {_explain(outcome)}"
    )


@slow
@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_hand_fixed_copy_trains(outcomes, name):
    fx = BY_NAME[name]
    outcome = outcomes[(name, "fixed")]
    problem = outcome.completion_problem(fx.steps)
    assert problem is None, f"{problem}\n{_explain(outcome)}"
    assert outcome.done_steps == fx.steps
    assert all(math.isfinite(v) for v in outcome.losses())
