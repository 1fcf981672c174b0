"""Fixture discovery and header parsing (format: fixtures/README.md)."""
from __future__ import annotations

import re
import shlex
from dataclasses import field
from .._dataclass import dataclass
from pathlib import Path
from typing import Iterable, Optional

HEADER_MARK = "# precision-lint fixture"
NON_FINITE = "non-finite loss"
NEEDS = ("cpu", "cuda")
DEVICES = ("auto", "cpu")
EMULATIONS = ("trainer-fp16-scaler",)  # implemented in launch.py
SINGLE_KEYS = ("rule", "needs", "device", "emulate", "expect", "args", "steps", "story", "files", "fixes")
FIXES = ("safe", "unsafe")  # which fixes `verify` applies: `check --fix` [--unsafe-fixes]
REQUIRED_KEYS = ("rule", "needs", "expect", "steps")

_RULE = r"[A-Z]+[0-9]+"
_RULE_RE = re.compile(rf"^{_RULE}$")
_LINE_RE = re.compile(rf"^#\s?([a-z][a-z-]*)((?:\s+{_RULE}\s*,?)*)\s*:\s*(.*?)\s*$")
_CONTINUATION_RE = re.compile(r"^#\s{2,}(\S.*?)\s*$")
_EXC_RE = re.compile(r"^([A-Za-z_][\w.]*)\s*:\s*(.+)$")


class FixtureError(ValueError):
    """A fixture file whose header is missing or malformed."""


@dataclass(frozen=True)
class Expectation:
    """How a run is declared to fail: an exception, or a non-finite loss."""

    kind: str  # "exception" | "non-finite"
    exc_type: Optional[str] = None
    message: Optional[str] = None

    @classmethod
    def parse(cls, text: str, where: str = "") -> "Expectation":
        text = text.strip()
        if text == NON_FINITE:
            return cls("non-finite")
        match = _EXC_RE.match(text)
        if not match:
            raise FixtureError(
                f"{where}expect must be '{NON_FINITE}' or 'ExceptionType: message', got {text!r}"
            )
        return cls("exception", match.group(1), match.group(2).strip())

    def describe(self) -> str:
        if self.kind == "non-finite":
            return NON_FINITE
        return f"{self.exc_type}: {self.message}"


@dataclass(frozen=True)
class Stage:
    """``expect-after RULES: ...`` -- once only RULES are fixed, the run fails like this."""

    rules: tuple
    expect: Expectation


@dataclass(frozen=True)
class Fixture:
    """A verification fixture as its header declares it: the script, the rules it must trigger,
    the failure it must show on its device, and the stages of fixing it goes through."""

    name: str  # e.g. "MP101/seed000_custom_loop_gradscaler"
    path: Path  # what gets copied and linted: the script, or the fixture folder
    entry: Path  # the script that runs (== path for single-file fixtures)
    rules: tuple
    needs: str
    device: str
    emulate: Optional[str]
    expect: Expectation
    stages: tuple
    args: tuple
    steps: int
    story: str
    files: tuple = field(default=())
    fixes: str = "safe"  # "unsafe": the rule's fix is unsafe, verify runs `check --fix --unsafe-fixes`

    @property
    def is_dir(self) -> bool:
        return self.path.is_dir()

    @property
    def entry_relpath(self) -> Path:
        """The entry script relative to ``path`` (its name for single-file fixtures)."""
        return Path(self.entry.name) if not self.is_dir else self.entry.relative_to(self.path)


def has_header(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8") as f:
            return f.readline().rstrip("\r\n") == HEADER_MARK
    except (OSError, UnicodeDecodeError):
        return False


def parse_header(text: str, where: str = "") -> dict:
    """Return {key: value} (``expect-after`` as a list of (rules, text))."""
    lines = text.splitlines()
    if not lines or lines[0].rstrip() != HEADER_MARK:
        raise FixtureError(f"{where}first line must be {HEADER_MARK!r}")
    values: dict = {"expect-after": []}
    last_key = None
    for number, raw in enumerate(lines[1:], start=2):
        line = raw.rstrip()
        if not line.startswith("#"):
            break
        if line.strip() == "#":
            last_key = None
            continue
        cont = _CONTINUATION_RE.match(line)
        if cont and last_key is not None:
            if last_key == "expect-after":
                rules, previous = values["expect-after"][-1]
                values["expect-after"][-1] = (rules, previous + " " + cont.group(1))
            else:
                values[last_key] += " " + cont.group(1)
            continue
        match = _LINE_RE.match(line)
        if not match:
            raise FixtureError(f"{where}line {number}: not a 'key: value' header line: {line!r}")
        key, rules_text, value = match.group(1), match.group(2).strip(), match.group(3)
        if key == "expect-after":
            rules = tuple(r for r in re.split(r"[\s,]+", rules_text) if r)
            if not rules:
                raise FixtureError(f"{where}line {number}: expect-after needs rule codes")
            values["expect-after"].append((rules, value))
        elif rules_text:
            raise FixtureError(f"{where}line {number}: only expect-after takes rule codes")
        elif key not in SINGLE_KEYS:
            raise FixtureError(f"{where}line {number}: unknown header key {key!r}")
        elif key in values:
            raise FixtureError(f"{where}line {number}: duplicate header key {key!r}")
        else:
            values[key] = value
        last_key = key
    for key in REQUIRED_KEYS:
        if key not in values:
            raise FixtureError(f"{where}missing header key {key!r}")
    return values


def _split_rules(text: str, where: str) -> tuple:
    rules = tuple(r for r in re.split(r"[\s,]+", text.strip()) if r)
    bad = [r for r in rules if not _RULE_RE.match(r)]
    if not rules or bad:
        raise FixtureError(f"{where}bad rule list {text!r}")
    return rules


def load_fixture(entry: Path, root: Optional[Path] = None) -> Fixture:
    entry = Path(entry).resolve()
    where = f"{entry}: "
    try:
        text = entry.read_text(encoding="utf-8")
    except OSError as exc:
        raise FixtureError(f"{where}{exc}") from exc
    values = parse_header(text, where)

    rules = _split_rules(values["rule"], where)
    needs = values["needs"].strip()
    if needs not in NEEDS:
        raise FixtureError(f"{where}needs must be one of {NEEDS}, got {needs!r}")
    device = values.get("device", "auto").strip()
    if device not in DEVICES:
        raise FixtureError(f"{where}device must be one of {DEVICES}, got {device!r}")
    if needs == "cuda" and device == "cpu":
        raise FixtureError(f"{where}needs: cuda contradicts device: cpu")
    emulate = values.get("emulate")
    if emulate is not None:
        emulate = emulate.strip()
        if emulate not in EMULATIONS:
            raise FixtureError(f"{where}unknown emulation {emulate!r} (known: {EMULATIONS})")
        if needs != "cuda":
            raise FixtureError(f"{where}emulate: only makes sense with needs: cuda")
    try:
        steps = int(values["steps"])
    except ValueError:
        raise FixtureError(f"{where}steps must be an integer") from None
    if steps < 1:
        raise FixtureError(f"{where}steps must be >= 1")
    expect = Expectation.parse(values["expect"], where)
    stages = []
    for stage_rules, stage_text in values["expect-after"]:
        unknown = [r for r in stage_rules if r not in rules]
        if unknown:
            raise FixtureError(f"{where}expect-after names rules not in 'rule:': {unknown}")
        stages.append(Stage(tuple(stage_rules), Expectation.parse(stage_text, where)))
    try:
        args = tuple(shlex.split(values.get("args", "")))
    except ValueError as exc:
        raise FixtureError(f"{where}args: {exc}") from None

    files = tuple(f for f in re.split(r"[\s,]+", values.get("files", "")) if f)
    fixes = values.get("fixes", "safe").strip()
    if fixes not in FIXES:
        raise FixtureError(f"{where}fixes must be one of {', '.join(FIXES)}, got {fixes!r}")
    if files:
        path = entry.parent
        for name in files:
            if not (path / name).is_file():
                raise FixtureError(f"{where}files: {name} not found next to the entry script")
        others = [p for p in path.rglob("*.py") if p != entry and has_header(p)]
        if others:
            raise FixtureError(f"{where}fixture folder also contains fixture {others[0]}")
    else:
        path = entry

    name_path = path if files else entry.with_suffix("")
    name = None
    if root is not None:
        try:
            name = name_path.relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            name = None
    if name is None:
        name = f"{name_path.parent.name}/{name_path.name}"
    return Fixture(
        name=name, path=path, entry=entry, rules=rules, needs=needs, device=device,
        emulate=emulate, expect=expect, stages=tuple(stages), args=args, steps=steps,
        story=values.get("story", ""), files=files, fixes=fixes,
    )


def discover(paths: Iterable, root: Optional[Path] = None) -> list:
    """Fixtures under ``paths`` (files or folders), sorted by name, without duplicates."""
    found = {}
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise FixtureError(f"{p}: no such file or directory")
        if p.is_file():
            if not has_header(p):
                raise FixtureError(f"{p}: not a fixture (first line is not {HEADER_MARK!r})")
            candidates = [p]
        else:
            candidates = sorted(q for q in p.rglob("*.py") if has_header(q))
        for entry in candidates:
            fixture = load_fixture(entry, root)
            found.setdefault(fixture.entry, fixture)
    return sorted(found.values(), key=lambda f: f.name)
