"""``[tool.precision-lint]`` settings: loading and validation.

Unknown keys and bad values raise :class:`ConfigError` with a message naming the
file and key; the CLI turns it into exit code 2.
"""
from __future__ import annotations

import fnmatch
from functools import lru_cache
import re
import sys
from dataclasses import field
from .._dataclass import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..knowledge import tomllib_module
from .._regex import lazy


class ConfigError(Exception):
    pass


# Compute capability (major*10+minor) of the GPUs users name in `target-gpus`.
GPU_CAPABILITY = {
    "k80": 37, "m60": 52, "p4": 61, "p40": 61, "p100": 60, "gtx1080": 61, "gtx1080ti": 61,
    "v100": 70, "titan-v": 70, "t4": 75, "titan-rtx": 75, "rtx2060": 75, "rtx2070": 75,
    "rtx2080": 75, "rtx2080ti": 75, "quadro-rtx6000": 75, "rtx6000": 75,
    "a100": 80, "a30": 80, "a10": 86, "a10g": 86, "a40": 86, "rtx3060": 86, "rtx3070": 86,
    "rtx3080": 86, "rtx3090": 86, "rtx-a6000": 86, "l4": 89, "l40": 89, "l40s": 89,
    "rtx4090": 89, "rtx4080": 89, "h100": 90, "h200": 90, "gh200": 90, "b100": 100, "b200": 100,
}
# What Kaggle and Colab hand out: every CUDA GPU from the P100 (sm60) upward.
DEFAULT_TARGETS = ("sm60",)

KNOWN_KEYS = {
    "select", "ignore", "extend-select", "exclude", "extend-exclude", "per-file-ignores",
    "target-gpus", "transformers-version", "trl-version", "rules", "test-files", "src",
    "max-file-size",
}
# Files with more code than this are not read (MP002 names each: never a silent pass): a generated 5 MB module costs
# minutes and gigabytes to parse, and is not where a training script's precision is set.
DEFAULT_MAX_FILE_SIZE = 1_000_000
# Test code is not a training entry point: it runs on CI hardware chosen for it, behind skip
# decorators. The portability rules (MP2xx) stay silent there unless `test-files = []`.
# The default patterns say it by a file's place (a tests/ folder, pytest's conftest.py) or by
# its name alone (test_*.py, *_test.py): a file the default patterns match is still a program
# of the run where a shipped launcher runs it, or, matched by its name alone, where it is
# written as a program and not as a test (``project/test_code.py``). Patterns the user
# configures are taken as written.
DEFAULT_TEST_PLACES = ("tests/*", "test/*", "*/tests/*", "*/test/*", "conftest.py")
DEFAULT_TEST_NAMES = ("test_*.py", "*_test.py")
DEFAULT_TEST_FILES = ("tests/*", "test/*", "*/tests/*", "*/test/*", "test_*.py", "*_test.py", "conftest.py")
TEST_FILE_IGNORES = ("MP2",)
CODE = lazy(r"^MP\d{0,3}$")


def parse_gpu(name: str) -> int:
    """``"t4"`` → 75, ``"sm80"`` → 80, ``"sm_86"`` → 86."""
    key = str(name).strip().lower().replace(" ", "-").replace("nvidia-", "")
    match = re.fullmatch(r"sm_?(\d+)(\d)", key)  # the last digit is the minor version
    if match:
        return int(match.group(1)) * 10 + int(match.group(2))
    if key in GPU_CAPABILITY:
        return GPU_CAPABILITY[key]
    raise ConfigError(
        f"unknown GPU {name!r} in target-gpus (use a name such as t4, v100, p100, a100, h100, or smXY)"
    )


def parse_version(text: Optional[str]) -> Optional[Tuple[int, ...]]:
    if text is None:
        return None
    parts = re.findall(r"\d+", str(text))[:3]
    if not parts:
        raise ConfigError(f"cannot read version {text!r}")
    return tuple(int(p) for p in parts)


def installed_version(dist: str) -> Optional[Tuple[int, ...]]:
    """The version of an installed distribution, from its metadata (nothing is imported)."""
    found = _metadata_version(dist)
    if found is _ASK_IMPORTLIB:
        try:
            from importlib.metadata import PackageNotFoundError, version
        except ImportError:  # pragma: no cover
            return None
        try:
            found = version(dist)
        except PackageNotFoundError:
            return None
    try:
        return parse_version(found)
    except ConfigError:
        return None


_ASK_IMPORTLIB = object()
# folder of sys.path → (its mtime, normalised distribution name → its metadata folders there)
_LISTINGS: Dict[str, Tuple[float, Dict[str, List[str]]]] = {}
_HEADER = lazy(r"[\041-\071\073-\176]*:")  # a header line of an email (email.feedparser)
_LINE = lazy(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")  # the lines as email splits them


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _metadata_version(dist: str):
    """``importlib.metadata.version(dist)`` where the distributions are folders of ``sys.path``
    (its usual case), found the way ``importlib.metadata`` finds them (the first
    ``*.dist-info``/``*.egg-info`` whose name normalises to ``dist``'s, in ``sys.path`` order) and
    read the way it reads them (the ``Version`` header of ``METADATA``, else ``PKG-INFO``), without
    importing it: ``importlib.metadata`` and the email package it parses headers with cost more
    than the rest of a small file's check. None: not installed. ``_ASK_IMPORTLIB`` where
    anything is unusual (a zip on ``sys.path``, another finder of distributions, an ``.egg``)."""
    import os
    from importlib.machinery import PathFinder

    if any(getattr(f, "find_distributions", None) is not None for f in sys.meta_path if f is not PathFinder):
        return _ASK_IMPORTLIB
    wanted = _normalized(dist)
    for entry in sys.path:
        if not isinstance(entry, str):
            return _ASK_IMPORTLIB
        folder = entry or "."
        try:
            mtime = os.stat(folder).st_mtime
        except OSError:
            continue  # importlib.metadata finds nothing there either (a path hook's name)
        if not os.path.isdir(folder) or folder.lower().endswith(".egg"):
            return _ASK_IMPORTLIB  # a zip file or an egg: importlib.metadata reads those
        kept = _LISTINGS.get(folder)
        if kept is None or kept[0] != mtime:
            try:
                children = os.listdir(folder)
            except OSError:
                continue
            infos: Dict[str, List[str]] = {}
            for child in children:
                low = child.lower()
                if low.endswith((".dist-info", ".egg-info")):
                    infos.setdefault(_normalized(low.rpartition(".")[0].partition("-")[0]), []).append(child)
            kept = _LISTINGS[folder] = (mtime, infos)
        for child in kept[1].get(wanted, ()):
            path = os.path.join(folder, child)
            for name in ("METADATA", "PKG-INFO", ""):
                text = _read(os.path.join(path, name) if name else path)
                if text is _ASK_IMPORTLIB or text:
                    return text if text is _ASK_IMPORTLIB else _version_header(text)
            return _ASK_IMPORTLIB  # no metadata: importlib.metadata says how that fails
    return None


def _read(path: str):
    """The text of a metadata file; None where ``importlib.metadata`` reads none either."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return None
    except (OSError, ValueError):  # importlib.metadata raises: let it
        return _ASK_IMPORTLIB


def _version_header(text: str) -> Optional[str]:
    """The ``Version`` header of a metadata text, as ``email`` parses it (compat32): the headers
    end at the first line that is not one (a blank line), a value continues on indented lines."""
    value = None
    for found in _LINE().finditer(text):  # up to the Version line, never the long description
        line = found.group()
        if value is not None:
            if line[:1] in (" ", "\t"):
                value += line
                continue
            break
        m = _HEADER().match(line)
        if m is None or line.startswith("From "):
            if line.startswith("From ") or line[:1] in (" ", "\t"):
                continue
            break
        if line[: m.end() - 1].lower() == "version":
            value = line[m.end():].lstrip(" \t")
    return None if value is None else value.rstrip("\r\n")


@dataclass
class Config:
    """The settings one check runs with, from ``pyproject.toml`` (or ``precision-lint.toml``)
    and the command line: which rules run on which files, and the GPUs and library versions
    the findings are judged for."""

    select: Optional[List[str]] = None  # None: every rule
    ignore: List[str] = field(default_factory=list)
    extend_select: List[str] = field(default_factory=list)
    exclude: List[str] = field(default_factory=list)
    per_file_ignores: Dict[str, List[str]] = field(default_factory=dict)
    target_gpus: Tuple[str, ...] = DEFAULT_TARGETS
    target_gpus_explicit: bool = False  # set in the configuration (else inferred from the code)
    transformers_version: Optional[Tuple[int, ...]] = None  # None: newest behaviour
    trl_version: Optional[Tuple[int, ...]] = None
    rule_options: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    test_files: Tuple[str, ...] = DEFAULT_TEST_FILES
    test_files_explicit: bool = False  # `test-files` set in the configuration: its patterns decide alone
    # where each library version came from: "configuration" (it wins for every file) or
    # "installed" (metadata of the installed distribution: the fallback where a file's project
    # pins nothing; versions.py reads the pins per file)
    version_sources: Dict[str, str] = field(default_factory=dict)
    # extra folders imports are resolved in (ruff's `src`), relative to the config's folder
    src: Tuple[Path, ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE  # bytes of code; 0: no limit
    path: Optional[Path] = None  # the file it came from
    root: Optional[Path] = None  # its folder: exclude patterns are relative to it

    @property
    def target_capabilities(self) -> Tuple[int, ...]:
        return tuple(parse_gpu(g) for g in self.target_gpus)

    @property
    def min_capability(self) -> int:
        return min(self.target_capabilities)

    def options_for(self, code: str) -> Dict[str, Any]:
        return self.rule_options.get(code, {})

    def ignored_for(self, path: str, test_code: Optional[bool] = None) -> List[str]:
        """The codes turned off in ``path``: its ``per-file-ignores``, and in test code the
        portability rules. ``test_code``: whether the file is test code, where the caller knows
        more than its name (``project/test_code.py``); None: as the patterns say."""
        out: List[str] = []
        rel = self._relative(path)
        for pattern, codes in self.per_file_ignores.items():
            if _matches(rel, (pattern,)):
                out.extend(codes)
        if self.is_test_file(path) if test_code is None else test_code:
            out.extend(TEST_FILE_IGNORES)
        return out

    def is_test_file(self, path: str) -> bool:
        """Whether the ``test-files`` patterns match ``path``."""
        return _matches(self._relative(path), tuple(self.test_files))

    def is_test_place(self, path: str) -> bool:
        """Whether ``path`` is test code by its place, not its name alone: the configured
        patterns (:attr:`test_files_explicit`) all count; of the defaults, a tests/ folder or
        a conftest.py (:data:`DEFAULT_TEST_PLACES`), never test_*.py or *_test.py alone."""
        patterns = tuple(self.test_files) if self.test_files_configured else DEFAULT_TEST_PLACES
        return _matches(self._relative(path), patterns)

    @property
    def test_files_configured(self) -> bool:
        """Whether the ``test-files`` patterns are the user's (set in the configuration, or
        other than the defaults): then they alone say what test code is."""
        return self.test_files_explicit or tuple(self.test_files) != DEFAULT_TEST_FILES

    def _relative(self, path: str) -> str:
        return _relative_to(path, self.root)


@lru_cache(maxsize=65536)
def _matches(rel: str, patterns: Tuple[str, ...]) -> bool:
    """Whether the relative path ``rel`` (``/``-separated), or its file name, matches one of
    ``patterns``. Once per path: the engine asks of every module, and the rules of MP2xx again."""
    name = rel.rpartition("/")[2]
    return any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) for p in patterns)


@lru_cache(maxsize=8192)
def _relative_to(path: str, root: Optional[Path]) -> str:
    """``path`` relative to ``root`` (both resolved), as the patterns of a configuration are
    written; ``path`` as given where it lies outside. Once per path: every rule's file asks
    (resolving walks the file system, a part at a time)."""
    if root is not None:
        try:
            return Path(path).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return Path(path).as_posix()


def _codes(value: Any, key: str, where: str) -> List[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of rule codes")
    out = []
    for v in value:
        code = v.strip().upper()
        if code != "ALL" and not CODE().match(code):
            raise ConfigError(f"{where}: `{key}` has {v!r}, which is not a rule code (like MP101 or MP1)")
        out.append(code)
    return out


_SIZE = lazy(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]?)b?\s*$", re.IGNORECASE)
_UNIT = {"": 1, "k": 1_000, "m": 1_000_000, "g": 1_000_000_000}


def parse_size(value: Any, where: str = "configuration") -> int:
    """``max-file-size``: bytes as an integer, or a string such as ``"500KB"`` or ``"2MB"``."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    match = _SIZE().match(value) if isinstance(value, str) else None
    if match is None:
        raise ConfigError(f"{where}: `max-file-size` must be a number of bytes or a size such as \"2MB\", not {value!r}")
    return int(float(match.group(1)) * _UNIT[match.group(2).lower()])


def format_sizes(size: int, limit: int) -> Tuple[str, str]:
    """``size`` and ``limit`` as a message shows them, in bytes where rounding would show a size
    just over the limit as the limit itself ("1.0 MB, more than 1 MB")."""
    shown, limit_shown = format_size(size), format_size(limit)
    if float(shown.split()[0]) <= float(limit_shown.split()[0]) and shown.split()[1] == limit_shown.split()[1]:
        return f"{size:,} bytes", f"{limit:,} bytes"
    return shown, limit_shown


def format_size(n: int) -> str:
    for unit, size in (("GB", 1_000_000_000), ("MB", 1_000_000), ("KB", 1_000)):
        if n >= size:
            return f"{n // size} {unit}" if n % size == 0 else f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def _strings(value: Any, key: str, where: str) -> List[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings")
    return list(value)


def from_table(table: Dict[str, Any], where: str = "configuration", path: Optional[Path] = None) -> Config:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [tool.precision-lint] must be a table")
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)} in [tool.precision-lint] "
            f"(known: {', '.join(sorted(KNOWN_KEYS))})"
        )
    cfg = Config(path=path, root=path.parent if path else None)
    if "select" in table:
        cfg.select = _codes(table["select"], "select", where)
    if "ignore" in table:
        cfg.ignore = _codes(table["ignore"], "ignore", where)
    if "extend-select" in table:
        cfg.extend_select = _codes(table["extend-select"], "extend-select", where)
    cfg.exclude = _strings(table.get("exclude", []), "exclude", where) + _strings(
        table.get("extend-exclude", []), "extend-exclude", where
    )
    cfg.src = tuple((cfg.root or Path.cwd()) / s for s in _strings(table.get("src", []), "src", where))
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"{where}: `per-file-ignores` must be a table of pattern = [codes]")
    cfg.per_file_ignores = {k: _codes(v, f"per-file-ignores.{k}", where) for k, v in pfi.items()}
    if "max-file-size" in table:
        cfg.max_file_size = parse_size(table["max-file-size"], where)
    if "test-files" in table:
        cfg.test_files = tuple(_strings(table["test-files"], "test-files", where))
        cfg.test_files_explicit = True
    if "target-gpus" in table:
        gpus = _strings(table["target-gpus"], "target-gpus", where)
        if not gpus:
            raise ConfigError(f"{where}: `target-gpus` must name at least one GPU")
        for g in gpus:
            try:
                parse_gpu(g)
            except ConfigError as exc:
                raise ConfigError(f"{where}: {exc}") from None
        cfg.target_gpus = tuple(gpus)
        cfg.target_gpus_explicit = True
    for key, attr, dist in (
        ("transformers-version", "transformers_version", "transformers"),
        ("trl-version", "trl_version", "trl"),
    ):
        if key in table:
            if not isinstance(table[key], str):
                raise ConfigError(f"{where}: `{key}` must be a string such as \"4.45\"")
            try:
                setattr(cfg, attr, parse_version(table[key]))
            except ConfigError as exc:
                raise ConfigError(f"{where}: `{key}`: {exc}") from None
            cfg.version_sources[dist] = "configuration"
        else:
            setattr(cfg, attr, installed_version(dist))
            cfg.version_sources[dist] = "installed"
    rules = table.get("rules", {})
    if not isinstance(rules, dict) or not all(isinstance(v, dict) for v in rules.values()):
        raise ConfigError(f"{where}: [tool.precision-lint.rules.MPxxx] must be tables of options")
    cfg.rule_options = {k.upper(): dict(v) for k, v in rules.items()}
    return cfg


def load_file(path: Path) -> Config:
    tomllib = tomllib_module()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("precision-lint", {})
    else:  # a dedicated precision-lint.toml / .precision-lint.toml
        table = data.get("tool", {}).get("precision-lint", data)
    return from_table(table, str(path), path)


def find_config(start: Path) -> Optional[Path]:
    """The nearest pyproject.toml with a [tool.precision-lint] table (or a precision-lint.toml)."""
    start = start.resolve()
    if start.is_file():
        start = start.parent
    for folder in (start, *start.parents):
        for name in (".precision-lint.toml", "precision-lint.toml"):
            if (folder / name).is_file():
                return folder / name
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                text = candidate.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if "precision-lint" not in text:  # no table of ours, whether the file parses or not
                continue
            tomllib = tomllib_module()
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:  # ours, but broken: say so rather than ignore it
                raise ConfigError(f"{candidate}: invalid TOML: {exc}") from None
            if "precision-lint" in data.get("tool", {}):
                return candidate
    return None


def load(config_file: Optional[str] = None, start: Optional[Sequence[str]] = None) -> Config:
    first = Path(start[0]) if start else Path.cwd()
    first = first if first.exists() else Path.cwd()
    if config_file:
        path = Path(config_file)
        if not path.is_file():
            raise ConfigError(f"config file {config_file} does not exist")
        cfg = load_file(path)
    else:
        found = find_config(first)
        cfg = from_table({}, "defaults") if found is None else load_file(found)
    # Versions a project pins are read per file, where its rules judge it (versions.py).
    return cfg


