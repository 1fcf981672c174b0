"""``precision-lint verify train.py``: prove the fix on the user's own training script.

The script needs no header and no special prints. In a private scratch folder:

1. copy the script's folder (its helper modules, configs, small data files) and run the
   original under ``probe.py`` for N optimizer steps (``runner.run_probed``): the steps and
   their losses, or the exception that ended it, and the precision plan in force;
2. copy the folder again and run the real ``precision-lint check --fix`` on the script and
   the modules of the folder it imported (what the first run loaded, not a guess): if that
   changes nothing, the report says ``nothing to fix`` and there is no second run;
3. run the fixed copy the same way.

The user's files are only read. Scratch folders are removed unless ``--keep``.
"""
from __future__ import annotations

import difflib
import math
import os
import re
import shutil
import tempfile
import time
from dataclasses import field
from .._dataclass import dataclass
from pathlib import Path
from typing import Optional

from .linter import Linter, LinterError
from .notebook_script import NotebookScriptError, cell_of, to_script
from .runner import Outcome, run_probed

NOTHING_TO_FIX = "nothing to fix"
FIXED = "fixed"
WORKS = "works before and after"
STILL_FAILS = "still fails"
BROKE = "fix broke it"
ERROR = "error"
OFFLINE = "not verified (offline)"

SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".venv", "venv", "env", "node_modules",
             ".precision-lint-cache", ".ipynb_checkpoints", ".mypy_cache", ".pytest_cache",
             ".ruff_cache", ".tox", "wandb", "mlruns"}
LINK_OVER_BYTES = 16 * 1024 * 1024  # larger files (checkpoints, data) are linked, not copied
MAX_FILES = 2000


class ScriptError(ValueError):
    """The script cannot be verified (missing, not Python, its folder is too large...)."""


@dataclass
class ScriptResult:
    """The verdict on a user's own training script: how the original and the fixed copy ran,
    the findings before and after the fix, and the diff in between."""

    script: Path
    args: tuple
    device: str  # "cpu" | "cuda"
    steps: int
    verdict: str = ERROR
    reason: str = ""
    original: Optional[Outcome] = None
    fixed: Optional[Outcome] = None
    files: list = field(default_factory=list)  # the script's own files that were linted
    findings_before: list = field(default_factory=list)  # [{"code", "file", "row", "column", "message", "fixable"}]
    findings_after: list = field(default_factory=list)
    fix_diff: str = ""
    linked: list = field(default_factory=list)  # large files linked into the scratch copies
    reference: Optional[Outcome] = None  # --reference fp32: the last run's copy, in float32
    reference_of: str = ""  # "fixed" | "original": which copy the reference run ran
    duration_s: float = 0.0
    workdir: Optional[str] = None

    @property
    def ok(self) -> bool:
        """The last run (the fixed one, or the original when nothing was fixed) trained."""
        if self.verdict == NOTHING_TO_FIX:
            return self.original is not None and run_problem(self.original, self.steps) is None
        return self.verdict in (FIXED, WORKS)


# ---------------------------------------------------------------------------- judging runs
def step_losses(outcome: Outcome) -> list:
    """One loss per optimizer step (the mean where a step had several backward calls)."""
    values = []
    for step in (outcome.probe or {}).get("steps", []):
        losses = [_float(v) for v in step.get("losses", [])]
        values.append(sum(losses) / len(losses) if losses else None)
    return values


def all_losses(outcome: Outcome) -> list:
    probe = outcome.probe or {}
    values = [_float(v) for step in probe.get("steps", []) for v in step.get("losses", [])]
    return values + [_float(v) for v in probe.get("pending_losses", [])]


def steps_made(outcome: Outcome) -> int:
    return len((outcome.probe or {}).get("steps", []))


def skipped_steps(outcome: Outcome) -> int:
    return sum(1 for s in (outcome.probe or {}).get("steps", []) if s.get("skipped"))


def losses_finite(outcome: Outcome) -> bool:
    return all(math.isfinite(v) for v in all_losses(outcome))


def run_problem(outcome: Outcome, steps: int) -> Optional[str]:
    """None when the run made its steps (or ended by itself after at least one) with finite
    losses; else what went wrong, in one line."""
    made = steps_made(outcome)
    if outcome.status == "exception":
        return f"{outcome.exc_type}: {outcome.exc_message}"
    if outcome.status == "timeout":
        return f"timed out after {outcome.duration_s:.0f}s ({made} of {steps} steps made)"
    if outcome.status == "crashed":
        return f"crashed (exit status {outcome.exit_code}) after {made} steps"
    if outcome.status == "exit":
        return f"exit status {outcome.exit_code} after {made} steps"
    bad = [v for v in all_losses(outcome) if not math.isfinite(v)]
    if bad:
        return f"non-finite loss ({bad[0]})"
    if made == 0:
        return "the script ended without an optimizer step"
    return None


def _float(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


# How huggingface_hub / transformers say that a file had to be downloaded and could not be.
_OFFLINE = re.compile(
    r"couldn't connect to 'https://huggingface\.co'|outgoing traffic has been disabled|"
    r"offline mode is enabled|Cannot find the requested files in the (disk )?cache|"
    r"Failed to resolve 'huggingface\.co'|Max retries exceeded with url|"
    r"Name or service not known|Temporary failure in name resolution",
    re.I,
)
_OFFLINE_TYPES = {"LocalEntryNotFoundError", "OfflineModeIsEnabled", "ConnectionError",
                  "ConnectTimeout", "ConnectError"}


def offline_download(outcome) -> bool:
    """Did the run end because a model or file had to be downloaded on an offline machine?"""
    if outcome is None or outcome.status != "exception":
        return False
    return outcome.exc_type in _OFFLINE_TYPES or bool(_OFFLINE.search(outcome.exc_message or ""))


def _runnable(rel_script: Path) -> Path:
    """The script that runs: the script itself, or the text of a notebook's code cells."""
    if rel_script.suffix == ".ipynb":
        return rel_script.with_name(f".{rel_script.stem}.ipynb-cells.py")
    return rel_script


# ---------------------------------------------------------------------------- the copies
def _tree(root: Path) -> list:
    """Files under ``root`` worth copying (no VCS, caches, virtualenvs); None if too many.

    A symlinked folder (a dataset link) is listed as one entry, not walked: it is linked.
    """
    files = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in [d for d in dirs if (Path(folder) / d).is_symlink()]:
            dirs.remove(name)
            files.append(Path(folder) / name)
        for name in sorted(names):
            files.append(Path(folder) / name)
            if len(files) > MAX_FILES:
                return None
    return files


def copy_root(script: Path, cwd: Path) -> Path:
    """The folder that is copied: the current folder if it holds the script (paths in the
    script are often relative to it) and is not huge, else the script's own folder."""
    if script.is_relative_to(cwd) and _tree(cwd) is not None:
        return cwd
    if _tree(script.parent) is None:
        raise ScriptError(f"{script.parent}: more than {MAX_FILES} files; run verify from a "
                          "smaller folder that holds the script")
    return script.parent


def copy_tree(root: Path, dest: Path) -> list:
    """Copy ``root`` to ``dest``; files over LINK_OVER_BYTES and symlinks are linked (to
    what they point to). Returns those."""
    linked = []
    for path in _tree(root) or []:
        target = dest / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or path.stat().st_size > LINK_OVER_BYTES:
            target.symlink_to(path.resolve())
            linked.append(str(path.relative_to(root)))
        else:
            shutil.copy2(path, target)
    dest.mkdir(parents=True, exist_ok=True)
    return linked


def _diff(old_root: Path, new_root: Path, files) -> str:
    chunks = []
    for name in files:
        old = (old_root / name).read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        new = (new_root / name).read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        chunks.extend(difflib.unified_diff(old, new, f"a/{name}", f"b/{name}"))
    return "".join(chunks)


def _findings(linter: Linter, root: Path, files) -> list:
    items = linter.report([root / f for f in files], cwd=root)
    found = []
    for item in items:
        location = item.get("location") or {}
        filename = item.get("filename") or ""
        try:
            filename = Path(filename).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
        found.append({"code": item.get("code"), "file": filename, "cell": item.get("cell"),
                      "row": location.get("row"),
                      "column": location.get("column"), "message": item.get("message", ""),
                      "fixable": item.get("fix") is not None})
    return found


# ---------------------------------------------------------------------------- the procedure
class ScriptVerifier:
    def __init__(self, linter: Optional[Linter] = None, steps: int = 3, device: str = "cpu",
                 timeout: float = 600.0, keep: bool = False, python: Optional[str] = None,
                 reference: Optional[str] = None, tiny: bool = False):
        self.linter = linter or Linter()
        self.tiny = tiny
        self.reference = reference  # None | "fp32"
        self.steps = steps
        self.device = device
        self.timeout = timeout
        self.keep = keep
        self.python = python or self.linter.python

    def verify(self, script, args=(), cwd: Optional[Path] = None) -> ScriptResult:
        script = Path(script).resolve()
        if not script.is_file():
            raise ScriptError(f"{script}: no such file")
        if script.suffix not in (".py", ".ipynb"):
            raise ScriptError(f"{script}: not a Python script (.py) or notebook (.ipynb)")
        cwd = Path(cwd or os.getcwd()).resolve()
        root = copy_root(script, cwd)
        result = ScriptResult(script, tuple(args), self.device, self.steps)
        started = time.monotonic()
        work = Path(tempfile.mkdtemp(prefix="precision-lint-verify-"))
        result.workdir = str(work) if self.keep else None
        try:
            self._verify(script, root, cwd if cwd.is_relative_to(root) else root, work, result)
        except LinterError as exc:
            result.verdict, result.reason = ERROR, f"linter: {exc}"
        finally:
            result.duration_s = round(time.monotonic() - started, 1)
            if not self.keep:
                shutil.rmtree(work, ignore_errors=True)
        return result

    def _run(self, copy: Path, rel_script: Path, rel_cwd: Path, result, name: str,
             fp32: bool = False) -> Outcome:
        entry = copy / rel_script
        notebook_text = None
        if rel_script.suffix == ".ipynb":  # run its code cells as a script next to it
            try:
                notebook_text = to_script(entry)
            except NotebookScriptError as exc:
                raise ScriptError(str(exc)) from None
            entry = copy / _runnable(rel_script)
            entry.write_text(notebook_text, encoding="utf-8")
        outcome = run_probed(entry, result.args, cwd=copy / rel_cwd, device=self.device,
                             steps=self.steps, root=copy, timeout=self.timeout, python=self.python,
                             log_dir=copy.parent / "logs" / name, fp32=fp32, tiny=self.tiny)
        ran = _runnable(rel_script).as_posix()
        if notebook_text is not None and outcome.where and outcome.where.get("file") == ran:
            place = cell_of(notebook_text, outcome.where["line"])
            if place:
                outcome.where = {"file": rel_script.as_posix(), "cell": place[0], "line": place[1]}
        return outcome

    def _verify(self, script: Path, root: Path, cwd: Path, work: Path, result: ScriptResult) -> None:
        rel_script, rel_cwd = script.relative_to(root), cwd.relative_to(root)

        # 1. the original, as it is
        result.linked = copy_tree(root, work / "original")
        result.original = original = self._run(work / "original", rel_script, rel_cwd, result, "original")

        # 2. the real --fix on a fresh copy: the script and the folder's modules it imported
        fixed_root = work / "fixed"
        copy_tree(root, fixed_root)
        files = [rel_script.as_posix()]
        for name in (original.probe or {}).get("local_modules", []):
            if name == _runnable(rel_script).as_posix():
                continue
            if name not in files and (fixed_root / name).is_file():
                files.append(name)
        result.files = files
        pristine = work / "pristine"
        for name in files:
            (pristine / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(fixed_root / name, pristine / name)
        result.findings_before = _findings(self.linter, fixed_root, files)
        self.linter.fix_files([fixed_root / f for f in files], cwd=fixed_root)
        result.fix_diff = _diff(pristine, fixed_root, files)
        result.findings_after = _findings(self.linter, fixed_root, files)
        if offline_download(original):  # a fixed copy would stop at the same download
            result.verdict, result.reason = OFFLINE, run_problem(original, self.steps)
            return
        if not result.fix_diff:
            result.verdict = NOTHING_TO_FIX
            result.reason = run_problem(original, self.steps) or ""
            if result.reason == "":
                self._reference(work / "original", rel_script, rel_cwd, result, "original")
            return

        # 3. the fixed copy, the same way
        result.fixed = fixed = self._run(fixed_root, rel_script, rel_cwd, result, "fixed")
        before, after = run_problem(original, self.steps), run_problem(fixed, self.steps)
        if after is None:
            result.verdict = FIXED if before is not None else WORKS
            self._reference(fixed_root, rel_script, rel_cwd, result, "fixed")
            silent = silent_divergence(original, fixed, result.reference) if before is None else None
            if silent is not None:  # it ran, but trained wrong: the fix is what made it right
                result.verdict, result.reason = FIXED, silent
        else:
            result.verdict = STILL_FAILS if before is not None else BROKE
            result.reason = after

    def _reference(self, copy: Path, rel_script: Path, rel_cwd: Path, result, of: str) -> None:
        """``--reference fp32``: the run that trained, again with half precision switched off."""
        if self.reference != "fp32":
            return
        result.reference_of = of
        result.reference = self._run(copy, rel_script, rel_cwd, result, "reference-fp32", fp32=True)


# Drift of a run's losses from the fp32 reference beyond which, when the fixed copy tracks the
# reference ten times closer, the original is said to train silently wrong.
SILENT_TOLERANCE = 1e-2


def worst_difference(outcome: Optional[Outcome], reference: Optional[Outcome]) -> Optional[float]:
    """The largest relative difference of ``outcome``'s step losses from the reference's."""
    if outcome is None or reference is None:
        return None
    found = [d for d in relative_differences(outcome, reference) if d is not None]
    return max(found) if found else None


def silent_divergence(original: Outcome, fixed: Outcome, reference: Optional[Outcome]) -> Optional[str]:
    """Why the original, which made its steps with finite losses, still trained wrong: its
    losses drift from the fp32 reference (the same program with half precision switched off)
    where the fixed copy's do not — a clip on scaled gradients (MP103), a KD loss that loses
    precision in float16 (MP401). None when the reference cannot tell them apart."""
    before, after = worst_difference(original, reference), worst_difference(fixed, reference)
    if before is None or after is None:
        return None
    if before > SILENT_TOLERANCE and before > 10 * after:
        return (
            f"the original trained silently wrong: its losses drift up to {before:.1%} from the fp32 "
            f"reference, the fixed copy's {after:.2%}"
        )
    return None


def relative_differences(outcome: Outcome, reference: Outcome) -> list:
    """|loss - reference| / |reference| for each step both runs made (None where undefined).

    The first step's loss is computed before any update, so it compares the precision of
    the forward pass alone; later steps also differ by the updates (a step that GradScaler
    skipped changes nothing, the reference never skips).
    """
    diffs = []
    for a, b in zip(step_losses(outcome), step_losses(reference)):
        if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)) or b == 0:
            diffs.append(None)
        else:
            diffs.append(abs(a - b) / abs(b))
    return diffs
