"""Run one fixture script in a subprocess and read what happened.

The script runs under ``launch.py`` (a fresh interpreter, by path), which records how it
ended (completed / uncaught exception / exit status) in a small JSON file. Progress is
read from the script's stdout::

    PRECISION-LINT-PROGRESS step=3 loss=2.3125
    PRECISION-LINT-DONE steps=4 loss=2.2969
"""
from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, field
from .._dataclass import dataclass
from pathlib import Path
from typing import Optional

from .fixture import Expectation

LAUNCHER = Path(__file__).resolve().with_name("launch.py")

_PROGRESS_RE = re.compile(r"^PRECISION-LINT-PROGRESS\s+step=(\S+)\s+loss=(\S+)\s*$")
_DONE_RE = re.compile(r"^PRECISION-LINT-DONE\s+steps=(\S+)\s+loss=(\S+)\s*$")
TAIL_CHARS = 4000


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float("nan")


def _int(text: str) -> Optional[int]:
    try:
        return int(text)
    except ValueError:
        return None


@dataclass
class Outcome:
    """How one run of a fixture script ended."""

    status: str  # completed | exception | exit | timeout | crashed
    exit_code: Optional[int] = None
    exc_type: Optional[str] = None
    exc_module: Optional[str] = None
    exc_message: Optional[str] = None
    progress: list = field(default_factory=list)  # [[step, loss], ...]
    done_steps: Optional[int] = None
    done_loss: Optional[float] = None
    duration_s: float = 0.0
    emulation: Optional[str] = None
    emulation_installed: bool = False
    stdout_tail: str = ""
    stderr_tail: str = ""
    # only for ordinary scripts run under probe.py (``verify train.py``):
    probe: Optional[dict] = None  # what probe.py recorded: steps, losses, plan in force
    where: Optional[dict] = None  # {"file", "line"}: the failing line in the script's files
    loading: Optional[str] = None  # what from_pretrained was loading when it failed
    stopped: bool = False  # stopped on purpose after the requested steps

    # -- reading progress -------------------------------------------------------------
    def losses(self) -> list:
        values = [loss for _, loss in self.progress]
        if self.done_loss is not None:
            values.append(self.done_loss)
        return values

    @property
    def has_nonfinite_loss(self) -> bool:
        return any(not math.isfinite(v) for v in self.losses())

    @property
    def final_loss(self) -> Optional[float]:
        if self.done_loss is not None:
            return self.done_loss
        return self.progress[-1][1] if self.progress else None

    @property
    def steps(self) -> Optional[int]:
        if self.done_steps is not None:
            return self.done_steps
        return self.progress[-1][0] if self.progress else None

    # -- judging ------------------------------------------------------------------------
    def matches(self, expect: Expectation) -> bool:
        """Did the run fail exactly as ``expect`` declares?"""
        if expect.kind == "non-finite":
            return self.status in ("completed", "exit") and self.has_nonfinite_loss
        if self.status != "exception" or self.exc_type is None:
            return False
        declared = expect.exc_type
        if "." in declared:
            type_ok = declared == f"{self.exc_module}.{self.exc_type}"
        else:
            type_ok = declared == self.exc_type
        return type_ok and expect.message in (self.exc_message or "")

    def completion_problem(self, steps: int) -> Optional[str]:
        """None when the run completed ``steps`` steps with finite losses, else why not."""
        if self.status != "completed":
            return self.summary()
        if self.done_steps is None:
            return "no PRECISION-LINT-DONE line"
        if self.has_nonfinite_loss:
            return f"non-finite loss ({_fmt_loss(self.first_nonfinite())})"
        if self.done_steps != steps:
            return f"completed {self.done_steps} of {steps} steps"
        return None

    def first_nonfinite(self) -> Optional[float]:
        for v in self.losses():
            if not math.isfinite(v):
                return v
        return None

    def summary(self, width: int = 0) -> str:
        """One line: 'ValueError: ...', 'non-finite loss (inf)', '4 steps, loss 2.3', ..."""
        if self.status == "exception":
            text = f"{self.exc_type}: {self.exc_message}"
        elif self.status == "timeout":
            text = f"timed out after {self.duration_s:.0f}s"
        elif self.status == "crashed":
            text = f"crashed (exit status {self.exit_code})"
        elif self.has_nonfinite_loss:
            text = f"non-finite loss ({_fmt_loss(self.first_nonfinite())})"
            if self.status == "exit":
                text += f", exit status {self.exit_code}"
        elif self.status == "exit":
            text = f"exit status {self.exit_code}"
        elif self.done_steps is None:
            text = "completed without PRECISION-LINT-DONE"
        else:
            text = f"{self.done_steps} steps, loss {_fmt_loss(self.done_loss)}"
        text = " ".join(text.split())
        if width and len(text) > width:
            text = text[: width - 1] + "\u2026"
        return text

    def to_json(self) -> dict:
        data = asdict(self)
        data["progress"] = [[s, _json_float(l)] for s, l in self.progress]
        data["done_loss"] = _json_float(self.done_loss)
        return data


def _fmt_loss(value: Optional[float]) -> str:
    if value is None:
        return "-"
    if not math.isfinite(value):
        return str(value)
    return f"{value:.4g}"


def _json_float(value):
    """JSON has no inf/nan: keep them as strings ("inf", "nan")."""
    if value is None or math.isfinite(value):
        return value
    return str(value)


def parse_progress(stdout: str):
    progress, done_steps, done_loss = [], None, None
    for line in stdout.splitlines():
        line = line.strip()
        m = _PROGRESS_RE.match(line)
        if m:
            progress.append([_int(m.group(1)), _float(m.group(2))])
            continue
        m = _DONE_RE.match(line)
        if m:
            done_steps, done_loss = _int(m.group(1)), _float(m.group(2))
    return progress, done_steps, done_loss


def fixture_env(device: str, base: Optional[dict] = None, tmpdir: Optional[Path] = None) -> dict:
    """Environment for a fixture run: one CPU thread, offline, CUDA hidden on cpu runs.

    ``tmpdir`` becomes TMPDIR, so what the script puts in ``tempfile`` folders (saved
    checkpoints, output dirs) is removed with the caller's scratch folder.
    """
    env = dict(os.environ if base is None else base)
    env.update({
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    })
    if device in ("cpu", "cpu-emulated"):
        env["CUDA_VISIBLE_DEVICES"] = ""
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    return env


def script_env(device: str, tmpdir: Optional[Path] = None, base: Optional[dict] = None) -> dict:
    """Environment for a user's script (``verify train.py``): like ``fixture_env`` but online.

    The script's models and data are the user's: Hugging Face offline switches are left as
    the user set them (a download on an offline machine is reported as such). Reporting
    integrations that the script may start by itself are switched off.
    """
    env = fixture_env(device, base=base, tmpdir=tmpdir)
    source = os.environ if base is None else base
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        if name in source:
            env[name] = source[name]
        else:
            env.pop(name, None)
    env.update({"WANDB_MODE": "disabled", "WANDB_DISABLED": "true", "COMET_MODE": "disabled",
                "HF_HUB_DISABLE_TELEMETRY": "1"})
    return env


def run_script(
    entry: Path,
    args=(),
    cwd: Optional[Path] = None,
    device: str = "cpu",
    emulate: Optional[str] = None,
    timeout: float = 300.0,
    python: str = sys.executable,
    log_dir: Optional[Path] = None,
) -> Outcome:
    """Run ``python launch.py -- entry args`` with a timeout and return its Outcome."""
    launch = ["--emulate", emulate] if emulate else []
    return _launch(entry, args, cwd, launch, lambda tmp: fixture_env(device, tmpdir=tmp),
                   timeout, python, log_dir)


def run_probed(
    entry: Path,
    args=(),
    cwd: Optional[Path] = None,
    device: str = "cpu",
    steps: int = 3,
    root: Optional[Path] = None,
    timeout: float = 600.0,
    python: str = sys.executable,
    log_dir: Optional[Path] = None,
    fp32: bool = False,
    tiny: bool = False,
) -> Outcome:
    """Run an ordinary training script under ``probe.py``, stopped after ``steps`` steps.

    The Outcome's ``probe`` holds what the probe recorded (steps, losses, plan in force).
    ``fp32``: the fp32 reference run (half precision switched off by the probe); ``tiny``:
    ``from_pretrained`` builds a 2-layer model of the config's class (see probe.py).
    """
    launch = ["--steps", str(steps), "--root", str(Path(root or Path(entry).parent).resolve())]
    if fp32:
        launch.append("--fp32")
    if tiny:
        launch.append("--tiny")
    return _launch(entry, args, cwd, launch, lambda tmp: script_env(device, tmpdir=tmp),
                   timeout, python, log_dir, probe=True)


def _launch(entry, args, cwd, launch_args, make_env, timeout, python, log_dir, probe=False) -> Outcome:
    entry = Path(entry).resolve()
    cwd = Path(cwd) if cwd is not None else entry.parent
    with tempfile.TemporaryDirectory(prefix="precision-lint-run-") as tmp:
        result_path = Path(tmp) / "result.json"
        probe_path = Path(tmp) / "probe.json"
        script_tmp = Path(tmp) / "tmp"
        script_tmp.mkdir()
        cmd = [python, str(LAUNCHER), "--result", str(result_path), *launch_args]
        if probe:
            cmd += ["--probe", str(probe_path)]
        cmd += ["--", str(entry), *args]
        started = time.monotonic()
        proc = subprocess.Popen(
            cmd, cwd=str(cwd), env=make_env(script_tmp), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True,
        )
        timed_out = False
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            stdout, stderr = proc.communicate()
        duration = time.monotonic() - started
        record = _read_json(result_path)
        probe_state = _read_json(probe_path) if probe else None
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        (log_dir / "stdout.txt").write_text(stdout)
        (log_dir / "stderr.txt").write_text(stderr)
    outcome = outcome_from(record, stdout, stderr, duration, proc.returncode, timed_out)
    if probe:
        outcome.probe = probe_state or {}
        outcome.where = record.get("where")
        outcome.loading = record.get("loading")
        outcome.stopped = bool(record.get("stopped"))
    return outcome


def _read_json(path: Path) -> dict:
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text())
    except ValueError:
        return {}


def outcome_from(record: dict, stdout: str, stderr: str, duration: float,
                 returncode: Optional[int] = None, timed_out: bool = False) -> Outcome:
    progress, done_steps, done_loss = parse_progress(stdout)
    if timed_out:
        status = "timeout"
    elif record.get("status") in ("completed", "exception", "exit", "timeout", "crashed"):
        status = record["status"]
    else:  # killed, segfault, launcher failure: no result file
        status = "crashed"
    exit_code = record.get("exit_code", returncode)
    if status == "crashed" and returncode is not None:
        exit_code = returncode
    return Outcome(
        status=status,
        exit_code=exit_code,
        exc_type=record.get("exc_type"),
        exc_module=record.get("exc_module"),
        exc_message=record.get("exc_message"),
        progress=progress,
        done_steps=done_steps,
        done_loss=done_loss,
        duration_s=round(record.get("duration_s", duration), 3),
        emulation=record.get("emulation"),
        emulation_installed=bool(record.get("emulation_installed")),
        stdout_tail=stdout[-TAIL_CHARS:],
        stderr_tail=stderr[-TAIL_CHARS:],
    )
