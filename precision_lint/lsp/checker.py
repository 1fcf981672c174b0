"""Checking open files with their project: the language server's use of the engine.

Everything here runs in the server's one worker thread, on snapshots (:class:`Buffer`), and
knows nothing of LSP. A check of a buffer:

1. reads the configuration that applies to its file (the nearest ``pyproject.toml`` with
   ``[tool.precision-lint]``, as the CLI does) and applies the editor's ``select``/``ignore``
   settings on top, as the command line's ``--select``/``--ignore`` would;
2. finds its project root (:func:`discovery.project_root`) and checks every open buffer of
   that project together with the project's files on disk (:meth:`Engine.run_buffers`), from
   the root, as ``precision-lint .`` run there would: paths in messages are relative to it,
   JSON configs named by the code are found from it, and the facts cache is the CLI's.

One :class:`Engine` is kept per configuration and settings, so its in-memory facts survive
from one keystroke to the next, and unchanged files are neither re-read nor re-parsed.
"""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from dataclasses import field
from .._dataclass import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from ..workspace.cache import default_cache_dir
from ..workspace.config import CODE, Config, ConfigError, load
from ..diagnostics import Diagnostic
from ..workspace.discovery import is_excluded, project_root
from ..engine import Engine, RunResult
from ..rules import selected_codes
from ..workspace.sources import SourceFile
from .documents import Buffer, DiskFiles

_CWD_LOCK = threading.Lock()


def _spawn():
    import multiprocessing

    return multiprocessing.get_context("spawn")


class SettingsError(ValueError):
    pass


@dataclass(frozen=True)
class Settings:
    """The editor's settings (``workspace/configuration``, section ``precision-lint``)."""

    select: Optional[Tuple[str, ...]] = None  # None: the configuration's
    ignore: Tuple[str, ...] = ()
    extend_select: Tuple[str, ...] = ()

    @classmethod
    def from_json(cls, value) -> "Settings":
        """From what the client sends: ``{"select": [...], "ignore": [...], "extendSelect": [...]}``
        (``extend-select``/``extend_select`` also accepted); null or missing keys: defaults."""
        if value is None:
            return cls()
        if not isinstance(value, dict):
            raise SettingsError(f"settings must be an object, not {value!r}")
        found = {}
        for attr, names in (
            ("select", ("select",)),
            ("ignore", ("ignore",)),
            ("extend_select", ("extendSelect", "extend-select", "extend_select")),
        ):
            for name in names:
                if value.get(name) is not None:
                    found[attr] = _codes(value[name], name)
        return cls(**found)


def _codes(value, name: str) -> Tuple[str, ...]:
    if isinstance(value, str):
        value = [v for v in value.split(",")]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"`{name}` must be a list of rule codes, not {value!r}")
    out = []
    for v in value:
        code = v.strip().upper()
        if code and code != "ALL" and not CODE().match(code):
            raise SettingsError(f"`{name}` has {v!r}, which is not a rule code (like MP101 or MP1)")
        if code:
            out.append(code)
    return tuple(out)


@dataclass
class Checked:
    """One buffer's findings from a check."""

    buffer: Buffer
    source: SourceFile  # what was checked: the linted text (a notebook's joined cells)
    diagnostics: List[Diagnostic] = field(default_factory=list)  # paths absolute


@dataclass
class Outcome:
    """A check of the open buffers of one project."""

    root: Optional[str]
    checked: Dict[str, Checked] = field(default_factory=dict)  # buffer URI → findings
    sources: Dict[str, SourceFile] = field(default_factory=dict)  # absolute path → every file read
    error: Optional[str] = None  # a configuration error: nothing was checked


@contextmanager
def _working_folder(folder: Optional[str]) -> Iterator[None]:
    """Run from ``folder`` (the checks run one at a time, in one thread; nothing else in the
    server depends on the working folder)."""
    if folder is None:
        yield
        return
    with _CWD_LOCK:
        before = os.getcwd()
        os.chdir(folder)
        try:
            yield
        finally:
            os.chdir(before)


class Checker:
    def __init__(self, folders: Sequence[str] = (), settings: Settings = Settings()) -> None:
        self.folders = list(folders)  # the editor's workspace folders
        self.settings = settings
        self.disk = DiskFiles()
        self._engines: Dict[tuple, Engine] = {}

    # --- configuration ------------------------------------------------------------------
    def config_for(self, buffer: Buffer) -> Config:
        start = os.path.dirname(buffer.path) if buffer.on_disk else (self.folders[0] if self.folders else os.getcwd())
        return load(None, [start if os.path.isdir(start) else os.getcwd()])

    def engine_for(self, config: Config, root: Optional[str]) -> Engine:
        codes = tuple(selected_codes(config, self.settings.select, self.settings.ignore, self.settings.extend_select))
        stamp = None
        if config.path is not None:
            try:
                stamp = os.stat(config.path).st_mtime_ns
            except OSError:
                pass
        key = (str(config.path), stamp, codes, root)
        engine = self._engines.get(key)
        if engine is None:
            # a new configuration (or settings): engines made for the old one are never used again
            self._engines = {k: e for k, e in self._engines.items() if k[0] != key[0] or k[3] != root}
            cache = default_cache_dir(config.root or (Path(root) if root else None))
            # a project's first check parses all of it: in worker processes, spawned (never forked
            # from a process with threads); later checks parse only what changed
            engine = Engine(
                config, list(codes), cache_dir=cache if root or config.root else None, mp_context=_spawn()
            )
            self._engines[key] = engine
        return engine

    def root_for(self, buffer: Buffer, config: Config) -> Optional[str]:
        if not buffer.on_disk:
            return None
        return project_root(buffer.path, config.root, self.folders)

    # --- checking -------------------------------------------------------------------------
    def _project(self, buffers: Sequence[Buffer], trigger: str):
        """(engine, root, the open buffers checked with ``trigger``, trigger first); raises
        ConfigError."""
        first = next(b for b in buffers if b.uri == trigger)
        config = self.config_for(first)
        root = self.root_for(first, config)
        engine = self.engine_for(config, root)
        mates = [first]
        if root is not None:
            mates += [b for b in buffers if b.uri != trigger and self._same_project(b, config, root)]
        mates = [b for b in mates if not (b.on_disk and is_excluded(b.path, config.exclude, config.root))]
        return engine, root, mates

    def _sources(self, mates: Sequence[Buffer], root: Optional[str]) -> List[SourceFile]:
        """The buffers as the engine checks them, named relative to the root (call from it)."""
        return [b.source(self._relative(b.path, root), self.disk.saved(b.path) if b.on_disk else None) for b in mates]

    def _run(self, engine: Engine, sources: List[SourceFile], root: Optional[str], fix: bool = False, only=None) -> RunResult:
        if root is None:  # an untitled buffer: checked on its own
            names = {s.path: (os.path.splitext(os.path.basename(s.path))[0], False, "") for s in sources}
            return engine.run_sources(sources, fix=fix, only=only, names=names)
        return engine.run_buffers(sources, ".", fix=fix, read=self.disk.read, only=only)

    def check(self, buffers: Sequence[Buffer], trigger: str) -> Outcome:
        """Check the buffer ``trigger`` (a URI) and every open buffer of its project
        (``buffers``: all the open ones)."""
        try:
            engine, root, mates = self._project(buffers, trigger)
        except ConfigError as exc:
            return Outcome(None, error=str(exc))
        outcome = Outcome(root)
        if not mates or mates[0].uri != trigger:  # excluded by the configuration, as `--force-exclude` would
            first = next(b for b in buffers if b.uri == trigger)
            outcome.checked[trigger] = Checked(first, first.source(first.path))
        if not mates:
            return outcome
        with _working_folder(root):
            sources = self._sources(mates, root)
            result = self._run(engine, sources, root)
        outcome.sources = {self._absolute(p, root): s for p, s in result.sources.items()}
        by_path: Dict[str, List[Diagnostic]] = {}
        for d in result.diagnostics:
            by_path.setdefault(d.path, []).append(_absolute_diagnostic(d, root))
        for b, src in zip(mates, sources):
            outcome.checked[b.uri] = Checked(b, src, by_path.get(src.path, []))
        return outcome

    def fix_all(self, buffers: Sequence[Buffer], uri: str) -> Optional[Tuple[SourceFile, str]]:
        """(the buffer as checked, its text with every safe fix applied), or None when no fix
        applies (the other open buffers of its project join in, unchanged)."""
        try:
            engine, root, mates = self._project(buffers, uri)
        except ConfigError:
            return None
        if not mates:
            return None
        with _working_folder(root):
            sources = self._sources(mates, root)
            result = self._run(engine, sources, root, fix=True, only={sources[0].path})
        new = result.fixed_texts.get(sources[0].path)
        if new is None or new == sources[0].text:
            return None
        return sources[0], new

    def _same_project(self, buffer: Buffer, config: Config, root: str) -> bool:
        if not buffer.on_disk:
            return False
        try:
            mine = self.config_for(buffer)
        except ConfigError:
            return False
        return mine.path == config.path and project_root(buffer.path, mine.root, self.folders) == root

    @staticmethod
    def _relative(path: str, root: Optional[str]) -> str:
        if root is None:
            return path
        rel = os.path.relpath(path, root)
        return path if rel.startswith("..") else rel

    @staticmethod
    def _absolute(path: str, root: Optional[str]) -> str:
        return os.path.normpath(os.path.join(root, path)) if root is not None else path


def _absolute_diagnostic(d: Diagnostic, root: Optional[str]) -> Diagnostic:
    if root is None:
        return d
    from dataclasses import replace

    related = tuple(replace(r, path=Checker._absolute(r.path, root)) for r in d.related)
    return replace(d, path=Checker._absolute(d.path, root), related=related)
