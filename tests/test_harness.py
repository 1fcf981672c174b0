"""``precision-lint verify``: end to end on the real fixtures, and the harness's own logic.

``test_verify_all_fixtures`` runs ``python -m precision_lint verify --output-format json``
on every fixture with the real CLI (it needs torch, transformers and the linter). The
other tests exercise the harness with tiny torch-free scripts and a stand-in linter, so
that its verdicts are checked on cases the real fixtures never produce (a fixture that
does not fail, a fix that changes nothing, a fix that does not help, a timeout, ...).
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from precision_lint.verify import main as verify_main  # noqa: E402
from precision_lint.verify.fixture import Expectation, FixtureError, discover, load_fixture, parse_header  # noqa: E402
from precision_lint.verify.report import table, to_json  # noqa: E402
from precision_lint.verify.runner import Outcome, parse_progress, run_script  # noqa: E402
from precision_lint.verify.verify import Verifier, plan  # noqa: E402

FIXTURES = REPO / "fixtures"
HAVE_TORCH = all(importlib.util.find_spec(m) for m in ("torch", "transformers", "tokenizers"))


# --------------------------------------------------------------------------- end to end
@pytest.mark.slow
@pytest.mark.skipif(not HAVE_TORCH, reason="torch / transformers / tokenizers not installed")
def test_verify_all_fixtures():
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, "-m", "precision_lint", "verify", "--output-format", "json", "--jobs", "2"],
        cwd=str(REPO), env=env, capture_output=True, text=True, timeout=900,
    )
    assert proc.stdout.strip(), f"no JSON on stdout; stderr:\n{proc.stderr[-3000:]}"
    report = json.loads(proc.stdout)
    results = report["results"]
    fixtures = discover([FIXTURES], FIXTURES)
    assert {f.name for f in fixtures} == {r["fixture"] for r in results}

    problems = []
    for r in results:
        label = f"{r['fixture']} ({r['device']})"
        if r["needs"] == "cuda" and r["device"] == "cuda" and not report["cuda_available"]:
            if r["verdict"] != "skipped" or "needs CUDA" not in r["reason"]:
                problems.append(f"{label}: {r['verdict_text']} (expected skipped, needs CUDA)")
            continue
        if r["verdict"] != "passed":
            problems.append(f"{label}: {r['verdict_text']}")
            continue
        # a pass means: failed as declared before, trained to the end with finite loss after
        assert r["before"] is not None and r["after"] is not None, label
        assert r["after"]["status"] == "completed", label
        assert r["steps"] == r["steps_declared"], label
        assert isinstance(r["final_loss"], float) and math.isfinite(r["final_loss"]), label
        assert r["fix_diff"], label
        assert all(n > 0 for n in r["detected"].values()), label
        assert all(n == 0 for n in r["remaining"].values()), label
    if not report["cuda_available"]:
        emulated = [r for r in results if r["device"] == "cpu-emulated"]
        assert emulated, "no cpu-emulated run of a cuda fixture"
    assert not problems, "\n".join(problems) + "\n\n" + proc.stderr[-3000:]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert report["summary"]["failed"] == report["summary"]["broken"] == report["summary"]["error"] == 0


def _cuda_available() -> bool:
    if not HAVE_TORCH:
        return False
    import torch

    return torch.cuda.is_available()


CUDA_FIXTURES = {f.name: f.path for f in discover([FIXTURES], FIXTURES) if f.needs == "cuda"}


@pytest.mark.slow
@pytest.mark.skipif(not _cuda_available(), reason="needs a CUDA GPU: the Trainer's fp16 GradScaler path only runs on CUDA")
@pytest.mark.parametrize("name", sorted(CUDA_FIXTURES))
def test_cuda_fixture_on_gpu(name):
    """On a GPU machine: the real CUDA run fails as declared, and trains after --fix.

    The fixture is given by its discovered path (a single-file fixture's name has no ``.py``:
    naming ``fixtures/<name>`` made verify exit 2, "no such file", on the first GPU run)."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, "-m", "precision_lint", "verify", "--device", "cuda", "--output-format", "json",
         str(CUDA_FIXTURES[name])],
        cwd=str(REPO), env=env, capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode in (0, 1) and proc.stdout.strip(), f"verify exited {proc.returncode}: {proc.stderr[-3000:]}"
    rows = [r for r in json.loads(proc.stdout)["results"] if r["device"] == "cuda"]
    assert rows and all(r["verdict"] == "passed" for r in rows), proc.stdout[-3000:] + proc.stderr[-3000:]


def test_there_are_cuda_fixtures():
    assert CUDA_FIXTURES, "the Trainer(fp16=True) stories need real CUDA fixtures"


# ----------------------------------------------------------------- fixture headers
def test_repo_fixtures_parse():
    fixtures = discover([FIXTURES], FIXTURES)
    names = {f.name for f in fixtures}
    assert "MP101/seed000_custom_loop_gradscaler" in names
    seed001 = next(f for f in fixtures if f.name == "MP101/seed001_trainer_fp16_helper_module")
    assert seed001.is_dir and seed001.entry.name == "train_single_config_remote.py"
    assert seed001.args == ("--config", "paper_r64", "--gpus", "0", "--fp16")
    assert seed001.needs == "cuda" and seed001.emulate == "trainer-fp16-scaler"
    for f in fixtures:
        assert f.rules and f.rules[0] == f.name.split("/")[0], f.name


def _write(tmp_path, text, name="fx.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def test_header_fields(tmp_path):
    path = _write(tmp_path, """
        # precision-lint fixture
        # rule: MP202, MP201
        # needs: cpu
        # device: cpu
        # args: --lr 1e-3 --name "two words"
        # expect: ImportError: FlashAttention2 has been toggled on
        # expect-after MP202: ValueError: Your setup doesn't support bf16/gpu.
        # steps: 3
        # story: first line
        #   second line
        print("hi")
    """)
    fx = load_fixture(path, tmp_path)
    assert fx.name == "fx"
    assert fx.rules == ("MP202", "MP201")
    assert fx.device == "cpu" and fx.needs == "cpu" and fx.emulate is None
    assert fx.args == ("--lr", "1e-3", "--name", "two words")
    assert fx.expect == Expectation("exception", "ImportError", "FlashAttention2 has been toggled on")
    assert len(fx.stages) == 1 and fx.stages[0].rules == ("MP202",)
    assert fx.stages[0].expect.message == "Your setup doesn't support bf16/gpu."
    assert fx.steps == 3 and fx.story == "first line second line"


@pytest.mark.parametrize("bad, message", [
    ("# rule: MP101\n# needs: gpu\n# expect: non-finite loss\n# steps: 2\n", "needs must be"),
    ("# rule: MP101\n# needs: cpu\n# expect: non-finite loss\n", "missing header key 'steps'"),
    ("# rule: MP101\n# needs: cpu\n# expect: it breaks\n# steps: 2\n", "expect must be"),
    ("# rule: MP101\n# needs: cpu\n# expect: non-finite loss\n# steps: 2\n# colour: red\n", "unknown header key"),
    ("# rule: MP101\n# needs: cpu\n# expect: non-finite loss\n# steps: 2\n"
     "# expect-after MP999: ValueError: x\n", "not in 'rule:'"),
    ("# rule: MP101\n# needs: cpu\n# emulate: trainer-fp16-scaler\n# expect: non-finite loss\n# steps: 2\n",
     "only makes sense with needs: cuda"),
])
def test_bad_headers(tmp_path, bad, message):
    path = tmp_path / "fx.py"
    path.write_text("# precision-lint fixture\n" + bad)
    with pytest.raises(FixtureError, match=message):
        load_fixture(path)


def test_not_a_fixture(tmp_path):
    path = _write(tmp_path, "print('no header')\n")
    with pytest.raises(FixtureError, match="first line must be"):
        parse_header(path.read_text())
    with pytest.raises(FixtureError, match="not a fixture"):
        discover([path])


# ------------------------------------------------------------------ progress, outcomes
def test_parse_progress():
    progress, steps, loss = parse_progress(
        "noise\nPRECISION-LINT-PROGRESS step=1 loss=2.5\n"
        "PRECISION-LINT-PROGRESS step=2 loss=inf\nPRECISION-LINT-DONE steps=2 loss=nan\n"
    )
    assert progress[0] == [1, 2.5] and progress[1][0] == 2 and math.isinf(progress[1][1])
    assert steps == 2 and math.isnan(loss)


def test_outcome_matching():
    exc = Outcome("exception", exc_type="ValueError", exc_module="builtins",
                  exc_message="Attempting to unscale FP16 gradients.")
    assert exc.matches(Expectation.parse("ValueError: Attempting to unscale FP16 gradients"))
    assert exc.matches(Expectation.parse("builtins.ValueError: unscale FP16"))
    assert not exc.matches(Expectation.parse("TypeError: Attempting to unscale FP16 gradients"))
    assert not exc.matches(Expectation.parse("ValueError: bf16"))
    assert not exc.matches(Expectation.parse("non-finite loss"))

    nan = Outcome("completed", progress=[[1, 2.0], [2, float("nan")]], done_steps=2, done_loss=float("nan"))
    assert nan.matches(Expectation.parse("non-finite loss"))
    assert nan.completion_problem(2).startswith("non-finite loss")

    fine = Outcome("completed", progress=[[1, 2.0], [2, 1.9]], done_steps=2, done_loss=1.9)
    assert not fine.matches(Expectation.parse("non-finite loss"))
    assert fine.completion_problem(2) is None
    assert fine.completion_problem(4) == "completed 2 of 4 steps"
    assert Outcome("completed").completion_problem(2) == "no PRECISION-LINT-DONE line"
    assert exc.completion_problem(2).startswith("ValueError")


def test_plan_devices():
    fixtures = {f.name: f for f in discover([FIXTURES], FIXTURES)}
    rows = plan(fixtures.values(), cuda_available=False)
    by = {(p.fixture.name, p.device): p for p in rows}
    cuda_row = by[("MP101/seed001_trainer_fp16_helper_module", "cuda")]
    assert cuda_row.skip_reason == "needs CUDA"
    assert by[("MP101/seed001_trainer_fp16_helper_module", "cpu-emulated")].skip_reason is None
    assert by[("MP101/seed004_from_pretrained_fp16_trainer", "cuda")].skip_reason == "needs CUDA"
    assert ("MP101/seed004_from_pretrained_fp16_trainer", "cpu-emulated") not in by
    assert by[("MP101/seed000_custom_loop_gradscaler", "cpu")].skip_reason is None

    rows = plan(fixtures.values(), cuda_available=True)
    devices = {(p.fixture.name, p.device) for p in rows}
    assert ("MP101/seed000_custom_loop_gradscaler", "cuda") in devices  # auto: CUDA when present
    assert ("MP201/seed001_bf16_on_pre_ampere", "cpu") in devices  # pinned to CPU
    assert ("MP101/seed001_trainer_fp16_helper_module", "cpu-emulated") not in devices
    assert all(p.skip_reason is None for p in rows)

    rows = plan(fixtures.values(), cuda_available=True, device="cpu")
    assert {p.device for p in rows if p.fixture.needs == "cpu"} == {"cpu"}


# ------------------------------------------------- the procedure, with a stand-in linter
SCRIPT = """
# precision-lint fixture
# rule: XX101
# needs: cpu
# expect: {expect}
# steps: 2
import time
BROKEN = True
{body}
"""
FAILS_UNLESS_FIXED = """
if BROKEN:
    raise ValueError("boom: the declared failure")
for step in (1, 2):
    print(f"PRECISION-LINT-PROGRESS step={step} loss={3.0 - step}")
print("PRECISION-LINT-DONE steps=2 loss=1.0")
"""


def make_fixture(tmp_path, body=FAILS_UNLESS_FIXED, expect="ValueError: boom"):
    path = tmp_path / "XX101" / "case.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SCRIPT.format(expect=expect, body=body).lstrip())
    return load_fixture(path, tmp_path)


class StandInLinter:
    """Reports XX101 while ``BROKEN = True`` is in the file; ``fix`` applies ``edit``."""

    python = sys.executable

    def __init__(self, edit=("BROKEN = True", "BROKEN = False")):
        self.edit = edit
        self.calls = []

    @staticmethod
    def _files(target):
        target = Path(target)
        return [target] if target.is_file() else sorted(target.rglob("*.py"))

    def findings(self, target, rules):
        self.calls.append(("findings", Path(target).name))
        hits = [p for p in self._files(target) if "BROKEN = True" in p.read_text()]
        return {rule: list(hits) if rule == "XX101" else [] for rule in rules}

    def fix(self, target, select=()):
        self.calls.append(("fix", tuple(select)))
        if self.edit:
            for p in self._files(target):
                p.write_text(p.read_text().replace(*self.edit))


def verify_one(fixture, linter, timeout=60):
    verifier = Verifier(linter, timeout=timeout)
    [row] = plan([fixture], cuda_available=False)
    return verifier.verify(row)


def test_verdict_passed(tmp_path):
    result = verify_one(make_fixture(tmp_path), StandInLinter())
    assert result.verdict == "passed", result.verdict_text
    assert result.before.exc_type == "ValueError"
    assert result.after.done_steps == 2 and result.after.final_loss == 1.0
    assert "-BROKEN = True" in result.fix_diff and "+BROKEN = False" in result.fix_diff
    assert result.detected == {"XX101": 1} and result.remaining == {"XX101": 0}


def test_verdict_fix_changes_nothing(tmp_path):
    result = verify_one(make_fixture(tmp_path), StandInLinter(edit=None))
    assert result.verdict == "failed"
    assert result.reason == "still reported after --fix: XX101"


def test_verdict_fix_does_not_help(tmp_path):
    # the "fix" silences the linter but the script still raises
    body = FAILS_UNLESS_FIXED.replace("if BROKEN:", "if True:")
    result = verify_one(make_fixture(tmp_path, body=body), StandInLinter())
    assert result.verdict == "failed"
    assert result.reason.startswith("still fails: ValueError: boom")


def test_verdict_not_detected(tmp_path):
    # fails as declared, but spelled so that the stand-in linter does not see it
    body = FAILS_UNLESS_FIXED.replace("if BROKEN:", "if BROKEN or True:")
    fixture = make_fixture(tmp_path, body=body)
    fixture.entry.write_text(fixture.entry.read_text().replace("BROKEN = True", "BROKEN = 1"))
    linter = StandInLinter()
    result = verify_one(fixture, linter)
    assert result.verdict == "failed"
    assert result.reason == "not reported on the original: XX101"
    assert all(call[0] != "fix" for call in linter.calls)


def test_verdict_broken_when_original_does_not_fail(tmp_path):
    body = FAILS_UNLESS_FIXED.replace("if BROKEN:", "if not BROKEN:")
    linter = StandInLinter()
    result = verify_one(make_fixture(tmp_path, body=body), linter)
    assert result.verdict == "broken"
    assert result.reason == "original did not fail"
    assert linter.calls == []  # the linter is not even asked


def test_verdict_broken_when_original_fails_differently(tmp_path):
    body = "raise KeyError('other')\n"
    result = verify_one(make_fixture(tmp_path, body=body), StandInLinter())
    assert result.verdict == "broken"
    assert "original failed differently: KeyError" in result.reason


def test_non_finite_expectation(tmp_path):
    body = """
loss = float("inf") if BROKEN else 1.0
print(f"PRECISION-LINT-PROGRESS step=1 loss={loss}")
print(f"PRECISION-LINT-PROGRESS step=2 loss={loss}")
print(f"PRECISION-LINT-DONE steps=2 loss={loss}")
"""
    fixture = make_fixture(tmp_path, body=body, expect="non-finite loss")
    result = verify_one(fixture, StandInLinter())
    assert result.verdict == "passed", result.verdict_text
    assert result.before.has_nonfinite_loss and not result.after.has_nonfinite_loss

    body_bad = body.replace("else 1.0", "else float('nan')")
    other = tmp_path / "other"
    other.mkdir()
    result = verify_one(make_fixture(other, body=body_bad, expect="non-finite loss"), StandInLinter())
    assert result.verdict == "failed" and result.reason.startswith("still fails: non-finite loss")


def test_fixed_run_must_complete_declared_steps(tmp_path):
    body = FAILS_UNLESS_FIXED.replace("steps=2 loss=1.0", "steps=1 loss=1.0")
    result = verify_one(make_fixture(tmp_path, body=body), StandInLinter())
    assert result.verdict == "failed"
    assert result.reason == "still fails: completed 1 of 2 steps"


def test_timeout_is_reported(tmp_path):
    body = "time.sleep(30)\n"
    result = verify_one(make_fixture(tmp_path, body=body), StandInLinter(), timeout=2)
    assert result.verdict == "broken"
    assert "timed out" in result.reason


def test_staged_expectations(tmp_path):
    path = tmp_path / "XX101" / "staged.py"
    path.parent.mkdir(parents=True)
    path.write_text(textwrap.dedent("""
        # precision-lint fixture
        # rule: XX101, XX102
        # needs: cpu
        # expect: TypeError: first
        # expect-after XX101: ValueError: second
        # steps: 1
        A = 1
        B = 1
        if A:
            raise TypeError("first problem")
        if B:
            raise ValueError("second problem")
        print("PRECISION-LINT-DONE steps=1 loss=0.5")
    """).lstrip())
    fixture = load_fixture(path, tmp_path)

    class TwoRules(StandInLinter):
        def findings(self, target, rules):
            text = "".join(p.read_text() for p in self._files(target))
            return {"XX101": ["A"] if "A = 1" in text else [],
                    "XX102": ["B"] if "B = 1" in text else []}

        def fix(self, target, select=()):
            self.calls.append(("fix", tuple(select)))
            for p in self._files(target):
                text = p.read_text()
                if not select or "XX101" in select:
                    text = text.replace("A = 1", "A = 0")
                if not select or "XX102" in select:
                    text = text.replace("B = 1", "B = 0")
                p.write_text(text)

    linter = TwoRules()
    result = verify_one(fixture, linter)
    assert result.verdict == "passed", result.verdict_text
    assert [s["ok"] for s in result.stages] == [True]
    assert ("fix", ("XX101",)) in linter.calls and ("fix", ()) in linter.calls

    class WrongOrder(TwoRules):  # fixing XX101 alone also hides XX102's failure
        def fix(self, target, select=()):
            super().fix(target, ())

    result = verify_one(fixture, WrongOrder())
    assert result.verdict == "failed"
    assert result.reason.startswith("after fixing only XX101: expected ValueError: second")


def test_run_script_records_exception_and_argv(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import sys\nprint('ARGS', sys.argv[1:])\nraise RuntimeError('x' * 3)\n")
    outcome = run_script(script, ["--a", "b c"], cwd=tmp_path, timeout=30)
    assert outcome.status == "exception" and outcome.exc_type == "RuntimeError"
    assert outcome.exc_message == "xxx"
    assert "ARGS ['--a', 'b c']" in outcome.stdout_tail
    assert "Traceback" in outcome.stderr_tail


def test_run_script_sees_fixture_env(tmp_path):
    script = tmp_path / "s.py"
    script.write_text(
        "import os, tempfile\n"
        "print('OMP', os.environ['OMP_NUM_THREADS'], 'CUDA', repr(os.environ.get('CUDA_VISIBLE_DEVICES')))\n"
        "print('TMP', tempfile.mkdtemp(prefix='leak-'))\n"
        "print('PRECISION-LINT-DONE steps=1 loss=0.25')\n"
    )
    outcome = run_script(script, cwd=tmp_path, device="cpu", timeout=30)
    assert outcome.status == "completed" and outcome.done_loss == 0.25
    assert "OMP 1 CUDA ''" in outcome.stdout_tail
    leaked = Path(outcome.stdout_tail.split("TMP ")[1].split()[0])
    assert leaked.name.startswith("leak-") and not leaked.exists()  # private TMPDIR, removed


# ------------------------------------------------------------------------- reporting
def test_table_and_json(tmp_path):
    fixture = make_fixture(tmp_path)
    passed = verify_one(fixture, StandInLinter())
    text = table([passed])
    assert text.splitlines()[0].split("|")[1].strip() == "fixture"
    assert "XX101/case" in text and "passed" in text and "1 passed" in text
    data = json.loads(json.dumps(to_json([passed], False, "auto")))
    assert data["summary"]["passed"] == 1
    [item] = data["results"]
    assert item["verdict"] == "passed" and item["final_loss"] == 1.0 and item["steps"] == 2
    assert item["before"]["exc_type"] == "ValueError"


def test_main_exit_codes(tmp_path, capsys):
    assert verify_main(["verify", str(tmp_path / "missing.py")]) == 2
    (tmp_path / "empty").mkdir()
    assert verify_main([str(tmp_path / "empty")]) == 2
    assert "no fixtures found" in capsys.readouterr().err
