"""Verify one fixture: the original fails as declared, the real --fix makes it train.

For each fixture run (a fixture on one device):

1. copy it to a scratch folder and run the original: it must fail exactly as its header
   declares, otherwise the fixture is ``broken``;
2. ``check --select RULES`` on a fresh copy must report every declared rule;
3. for each ``expect-after RULES`` stage: a fresh copy, ``check --fix --select RULES``,
   run -- it must now fail as that stage declares;
4. a fresh copy, ``check --fix`` (all safe fixes), ``check --select RULES`` must report
   nothing, and the fixed copy must complete its steps with finite losses.
"""
from __future__ import annotations

import difflib
import shutil
import subprocess
import tempfile
import time
from dataclasses import field
from .._dataclass import dataclass
from pathlib import Path
from typing import Optional

from .fixture import Fixture
from .linter import Linter, LinterError
from .runner import Outcome, fixture_env, run_script

PASSED, FAILED, BROKEN, SKIPPED, ERROR = "passed", "failed", "broken", "skipped", "error"


@dataclass
class Plan:
    """One row of the report: a fixture on a device (``cpu``, ``cuda``, ``cpu-emulated``)."""

    fixture: Fixture
    device: str
    skip_reason: Optional[str] = None

    @property
    def emulate(self) -> Optional[str]:
        return self.fixture.emulate if self.device == "cpu-emulated" else None


@dataclass
class Result:
    """The verdict on one fixture on one device: how the original failed, what the checks found
    before and after ``--fix``, and how the fixed copy ran."""

    fixture: Fixture
    device: str
    verdict: str  # passed | failed | broken | skipped | error
    reason: str = ""
    before: Optional[Outcome] = None
    stages: list = field(default_factory=list)  # [{"rules", "expect", "outcome", "ok"}]
    after: Optional[Outcome] = None
    detected: dict = field(default_factory=dict)  # rule -> number of findings before --fix
    remaining: dict = field(default_factory=dict)  # rule -> number of findings after --fix
    fix_diff: str = ""
    duration_s: float = 0.0
    workdir: Optional[str] = None

    @property
    def verdict_text(self) -> str:
        return f"{self.verdict} ({self.reason})" if self.reason else self.verdict

    @property
    def ok(self) -> bool:
        return self.verdict in (PASSED, SKIPPED)


def plan(fixtures, cuda_available: bool, device: str = "auto") -> list:
    """Which rows to run. ``device``: auto | cpu | cuda (what the user asked for)."""
    use_cuda = cuda_available and device != "cpu"
    plans = []
    for fx in fixtures:
        if fx.needs == "cuda":
            if use_cuda:
                plans.append(Plan(fx, "cuda"))
            else:
                why = "needs CUDA" if not cuda_available else "needs CUDA; --device cpu"
                plans.append(Plan(fx, "cuda", skip_reason=why))
                if fx.emulate:
                    plans.append(Plan(fx, "cpu-emulated"))
        elif fx.device == "cpu":  # pinned: the fixture simulates a target CPU stands in for
            plans.append(Plan(fx, "cpu"))
        else:
            plans.append(Plan(fx, "cuda" if use_cuda else "cpu"))
    return plans


def _copy(fixture: Fixture, dest: Path) -> tuple:
    """Copy the fixture into ``dest``; returns (lint target, entry script) in the copy."""
    dest.mkdir(parents=True)
    if fixture.is_dir:
        target = dest / fixture.path.name
        shutil.copytree(fixture.path, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        return target, target / fixture.entry_relpath
    target = dest / fixture.path.name
    shutil.copy2(fixture.path, target)
    return target, target


def _diff(original: Path, fixed: Path) -> str:
    def files(root: Path) -> dict:
        if root.is_file():
            return {root.name: root}
        return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*.py"))}

    a, b = files(original), files(fixed)
    chunks = []
    for name in sorted(set(a) | set(b)):
        old = a[name].read_text().splitlines(keepends=True) if name in a else []
        new = b[name].read_text().splitlines(keepends=True) if name in b else []
        chunks.extend(difflib.unified_diff(old, new, f"a/{name}", f"b/{name}"))
    return "".join(chunks)


class Verifier:
    def __init__(self, linter: Optional[Linter] = None, timeout: float = 300.0,
                 keep: bool = False, scratch: Optional[Path] = None, python: Optional[str] = None):
        self.linter = linter or Linter()
        self.timeout = timeout
        self.keep = keep
        self.scratch = scratch
        self.python = python or self.linter.python

    def _run(self, p: Plan, entry: Path, log_dir: Path) -> Outcome:
        return run_script(
            entry, p.fixture.args, cwd=entry.parent, device=p.device, emulate=p.emulate,
            timeout=self.timeout, python=self.python, log_dir=log_dir,
        )

    def verify(self, p: Plan) -> Result:
        fx = p.fixture
        if p.skip_reason:
            return Result(fx, p.device, SKIPPED, p.skip_reason)
        started = time.monotonic()
        base = self.scratch if self.scratch else None
        work = Path(tempfile.mkdtemp(prefix=fx.name.replace("/", "__") + "-", dir=base))
        result = Result(fx, p.device, ERROR, workdir=str(work) if self.keep else None)
        try:
            self._verify(p, work, result)
        except LinterError as exc:
            result.verdict, result.reason = ERROR, f"linter: {exc}"
        finally:
            result.duration_s = round(time.monotonic() - started, 1)
            if not self.keep:
                shutil.rmtree(work, ignore_errors=True)
        return result

    def _verify(self, p: Plan, work: Path, result: Result) -> None:
        fx = p.fixture
        # 1. the original must fail as declared
        _, entry = _copy(fx, work / "original")
        result.before = before = self._run(p, entry, work / "logs" / "original")
        if not before.matches(fx.expect):
            result.verdict = BROKEN
            if before.completion_problem(fx.steps) is None:
                result.reason = "original did not fail"
            else:
                result.reason = (f"original failed differently: {before.summary(160)}; "
                                 f"declared {fx.expect.describe()}")
            return

        # 2. the linter must report every declared rule on the original
        pristine, _ = _copy(fx, work / "pristine")
        found = self.linter.findings(pristine, fx.rules)
        result.detected = {rule: len(items) for rule, items in found.items()}
        missing = [rule for rule in fx.rules if not found[rule]]
        if missing:
            result.verdict, result.reason = FAILED, f"not reported on the original: {', '.join(missing)}"
            return

        # 3. staged fixes: fixing only some rules exposes the next declared failure
        for number, stage in enumerate(fx.stages, start=1):
            target, entry = _copy(fx, work / f"stage{number}")
            self.linter.fix(target, select=stage.rules, **_fix_options(fx))
            outcome = self._run(p, entry, work / "logs" / f"stage{number}")
            ok = outcome.matches(stage.expect)
            result.stages.append({"rules": list(stage.rules), "expect": stage.expect.describe(),
                                  "outcome": outcome, "ok": ok})
            if not ok:
                result.verdict = FAILED
                result.reason = (f"after fixing only {', '.join(stage.rules)}: expected "
                                 f"{stage.expect.describe()}, got {outcome.summary(160)}")
                return

        # 4. the real --fix, then nothing reported and a finite run
        target, entry = _copy(fx, work / "fixed")
        self.linter.fix(target, **_fix_options(fx))
        result.fix_diff = _diff(pristine, target)
        remaining = self.linter.findings(target, fx.rules)
        result.remaining = {rule: len(items) for rule, items in remaining.items()}
        still = [rule for rule in fx.rules if remaining[rule]]
        if still:
            result.verdict, result.reason = FAILED, f"still reported after --fix: {', '.join(still)}"
            return
        if not result.fix_diff:
            result.verdict, result.reason = FAILED, "--fix changed nothing"
            return
        result.after = after = self._run(p, entry, work / "logs" / "fixed")
        problem = after.completion_problem(fx.steps)
        if problem:
            result.verdict, result.reason = FAILED, f"still fails: {problem}"
            return
        result.verdict, result.reason = PASSED, ""


def cuda_available(python: str) -> bool:
    """Ask the interpreter that runs the fixtures (not this one) whether CUDA is usable."""
    env = fixture_env("cuda")
    try:
        proc = subprocess.run(
            [python, "-c", "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 3)"],
            env=env, capture_output=True, timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def _fix_options(fixture) -> dict:
    """``unsafe=True`` for fixtures whose rule's fix is unsafe (header ``fixes: unsafe``)."""
    return {"unsafe": True} if fixture.fixes == "unsafe" else {}
