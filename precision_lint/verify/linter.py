"""Call the real precision-lint CLI in a subprocess -- the code path users run.

``python -m precision_lint check --fix PATH`` applies the safe fixes (never
``--unsafe-fixes``); ``check --select CODES --output-format json PATH`` lists what is
still reported. Exit status follows ruff: 0 nothing reported, 1 findings, 2 error.

The harness must not import the rest of ``precision_lint``; it runs
``sys.executable -m precision_lint`` with ``PYTHONPATH`` set to the folder that holds
the ``precision_lint`` package this file belongs to, so a source checkout and an
installed package behave alike.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from .._dataclass import dataclass
from pathlib import Path
from typing import Optional, Sequence

PACKAGE_PARENT = Path(__file__).resolve().parents[2]


class LinterError(RuntimeError):
    """The CLI failed (exit status 2, a crash, a timeout, unreadable JSON)."""


@dataclass
class CLIResult:
    """What a run of the real ``precision-lint`` command left: verify checks the command a user
    runs, not an in-process shortcut."""

    command: list
    returncode: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        tail = (self.stderr or self.stdout).strip().splitlines()[-1:] or [""]
        return f"exit status {self.returncode}: {tail[0][:300]}"


def _code_of(item) -> Optional[str]:
    if isinstance(item, dict):
        for key in ("code", "rule", "rule_code", "id"):
            value = item.get(key)
            if isinstance(value, str):
                return value
    return None


def _items(data) -> list:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in ("diagnostics", "findings", "results", "messages", "violations"):
            if isinstance(data.get(key), list):
                return data[key]
    raise LinterError(f"unexpected JSON from the linter: {str(data)[:200]}")


class Linter:
    """The ``precision_lint`` CLI, run as ``python -m precision_lint``."""

    def __init__(self, python: str = sys.executable, package_parent: Path = PACKAGE_PARENT,
                 timeout: float = 180.0):
        self.python = python
        self.package_parent = Path(package_parent)
        self.timeout = timeout

    def _env(self) -> dict:
        env = dict(os.environ)
        paths = [str(self.package_parent)]
        if env.get("PYTHONPATH"):
            paths.append(env["PYTHONPATH"])
        env["PYTHONPATH"] = os.pathsep.join(paths)
        return env

    def run(self, args: Sequence[str], cwd: Path) -> CLIResult:
        command = [self.python, "-m", "precision_lint", *args]
        try:
            proc = subprocess.run(
                command, cwd=str(cwd), env=self._env(), capture_output=True, text=True,
                errors="replace", timeout=self.timeout,
            )
        except subprocess.TimeoutExpired:
            raise LinterError(f"`{' '.join(args)}` timed out after {self.timeout:.0f}s") from None
        return CLIResult(command, proc.returncode, proc.stdout, proc.stderr)

    def fix(self, target: Path, select: Sequence[str] = (), unsafe: bool = False) -> CLIResult:
        """``check --fix [--unsafe-fixes] [--select CODES] TARGET``; exit 0 or 1 is fine, 2 is an error."""
        args = ["check", "--fix"] + (["--unsafe-fixes"] if unsafe else [])
        if select:
            args += ["--select", ",".join(select)]
        result = self.run([*args, str(target)], cwd=Path(target).parent)
        if result.returncode not in (0, 1):
            raise LinterError(f"`check --fix` failed: {result.describe()}")
        return result

    def fix_files(self, targets: Sequence[Path], cwd: Path) -> CLIResult:
        """``check --fix --no-cache FILES``: the files are checked (and joined) together."""
        result = self.run(["check", "--fix", "--no-cache", *map(str, targets)], cwd=cwd)
        if result.returncode not in (0, 1):
            raise LinterError(f"`check --fix` failed: {result.describe()}")
        return result

    def report(self, targets: Sequence[Path], cwd: Path) -> list:
        """Every finding on FILES (all rules), as the JSON items of ``--output-format json``."""
        args = ["check", "--no-cache", "--output-format", "json", *map(str, targets)]
        result = self.run(args, cwd=cwd)
        if result.returncode not in (0, 1):
            raise LinterError(f"`check` failed: {result.describe()}")
        try:
            return _items(json.loads(result.stdout))
        except ValueError:
            raise LinterError(f"`check --output-format json` printed no JSON: {result.stdout[:200]!r}") from None

    def findings(self, target: Path, rules: Sequence[str]) -> dict:
        """{code: [finding, ...]} from ``check --select RULES --output-format json``."""
        args = ["check", "--select", ",".join(rules), "--output-format", "json", str(target)]
        result = self.run(args, cwd=Path(target).parent)
        if result.returncode not in (0, 1):
            raise LinterError(f"`check --select` failed: {result.describe()}")
        try:
            data = json.loads(result.stdout)
        except ValueError:
            raise LinterError(f"`check --output-format json` printed no JSON: {result.stdout[:200]!r}") from None
        found: dict = {rule: [] for rule in rules}
        for item in _items(data):
            code = _code_of(item)
            if code is None:  # cannot tell which rule: count it against all of them
                for rule in rules:
                    found[rule].append(item)
            elif code in found:
                found[code].append(item)
        if result.returncode == 0 and any(found.values()):
            raise LinterError("`check` exited 0 but printed findings")
        if result.returncode == 1 and not any(found.values()):
            raise LinterError("`check` exited 1 but printed no finding for the selected rules")
        return found
