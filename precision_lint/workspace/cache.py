"""Disk caches: per-file facts keyed by content, so a re-run parses only what changed; and
whole runs, so a re-run over an unchanged tree answers from one file.

Facts depend only on a file's text, its module name, whether its unit is analysed and
precision-lint's own fact-extraction code: all of those are in the key (the code by a
fingerprint of the ``facts`` package's sources, the interpreter and LibCST versions). Rules
are never cached, so changing configuration or rule options needs no invalidation. Entries
are written atomically; an unreadable or stale entry is simply recomputed.
"""
from __future__ import annotations

import gc
import hashlib
import os
import sys
from functools import lru_cache
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional, Tuple

CACHE_DIR_NAME = ".precision-lint-cache"


@lru_cache(maxsize=None)
def fingerprint() -> str:
    """Changes whenever the code that computes facts (or what it runs on, or the library
    tables it reads) changes."""
    from .._version import __version__

    digest = hashlib.sha1(f"{__version__}|{sys.version}|{_libcst_version()}".encode())
    package = Path(__file__).resolve().parent.parent
    # what reads the code (semantic/, facts/) and what judges it (project/, rules/): a cached
    # run's findings depend on both
    for part in ("semantic", "facts", "project", "rules", "workspace"):
        folder = package / part
        for path in sorted(folder.rglob("*.py")):
            digest.update(path.relative_to(package).as_posix().encode())
            digest.update(path.read_bytes())
    # how the facts pickle: the span class and the dataclass maker (``slots=True`` classes
    # pickle as their fields, #23), read from a cache written by other code as nothing
    for name in ("diagnostics.py", "_dataclass.py"):
        digest.update(name.encode())
        digest.update((package / name).read_bytes())
    # the library tables decide what facts record (the migration table's names, for one)
    knowledge_dir = package / "knowledge"
    for path in sorted(knowledge_dir.glob("*.toml")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _libcst_version() -> str:
    """LibCST's version, read without importing it (a second and a half on a busy machine; a
    run answered from its caches never parses): its ``_version.py``, else its metadata."""
    from importlib.util import find_spec

    try:
        spec = find_spec("libcst")
    except (ImportError, ValueError):  # pragma: no cover
        spec = None
    if spec is None:  # pragma: no cover
        return ""
    for folder in spec.submodule_search_locations or ():
        try:
            return (Path(folder) / "_version.py").read_text(encoding="utf-8")
        except OSError:
            continue
    return _dist_version("libcst")  # pragma: no cover


def _dist_version(name: str) -> str:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:  # pragma: no cover - metadata missing
        return ""


class FactsCache:
    def __init__(self, root: str) -> None:
        self.folder = Path(root) / fingerprint()

    def _path(self, key: tuple) -> Path:
        name = hashlib.sha1(repr(key).encode("utf-8", "surrogatepass")).hexdigest()
        return self.folder / name[:2] / f"{name}.pickle"

    def get(self, key: tuple):
        entry = _load(self._path(key))
        if entry is None:
            return None
        stored_key, facts = entry
        return facts if stored_key == key else None

    def put(self, key: tuple, facts) -> None:
        _store(self._path(key), (key, facts), self.folder.parent)


def _load(path: Path):
    """A pickled entry, or None when it is missing, damaged or from other code."""
    import pickle  # here: a run without a cache never loads it

    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    with collector_paused():
        try:
            return pickle.loads(data)
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError, TypeError):
            return None


@contextmanager
def collector_paused(freeze: bool = False) -> Iterator[None]:
    """Python's cyclic collector off while many objects are made that all live on, back on
    after; only where the collector is on (a caller that turned it off keeps it off). With
    ``freeze`` (a process that ends after one check), what is alive then is frozen before the
    collector is back on (``gc.freeze``): the first collection after would traverse every object
    made while it was off (a run with one file edited: 1.2 million, 0.1-0.15 s on transformers)
    only to find them alive, as the engine's ``gc.freeze`` after the facts then tells it.

    - Cached entries unpickled: a module's facts are thousands of small objects, none of them
      garbage, and the collections their allocations trigger traverse every entry read before:
      a run with one file edited reads 2,860 on transformers, 1.2 million objects in 4.5 s,
      2.3 s with the collector off across them all (off per entry only, the collections come as
      often between the entries).
    - One file analysed (``facts/extract.py``): hundreds of thousands of index entries, walk
      stacks and memo entries live until the file is done, and each collection of the young
      generations traversed them again (10-15% of a cold run); the file's cycles (scopes, the
      index and its evaluator) are garbage together at its end.

    The first collection after them sees their objects once."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        gc.enable()


# gen2's threshold while its collections are held back (``oldest_generation_paused``): never met
_NEVER = 1 << 30


@contextmanager
def oldest_generation_paused() -> Iterator[None]:
    """The collector's full collections held back, the young ones kept, while one check joins
    its files and judges them (``Engine.judge``). The join's tables and the rules' memos all
    live to the end of the check, and each full collection traversed every one of them made
    so far to find them alive: a run with one file edited on transformers made 8, 0.6 s of a
    4.8 s run. The young collections still free what a rule leaves in cycles; what was promoted
    and dies during the check (no such cycle was seen: the peak RSS is the same) waits for the
    first full collection after it. Only where the collector is on."""
    if not gc.isenabled():
        yield
        return
    young, middle, oldest = gc.get_threshold()
    gc.set_threshold(young, middle, _NEVER)
    try:
        yield
    finally:
        gc.set_threshold(young, middle, oldest)


def _store(path: Path, entry, cache_root: Path) -> None:
    """Write ``entry`` atomically; a read-only tree just runs without caching."""
    import pickle
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _ensure_gitignore(cache_root)
        fd, tmp = tempfile.mkstemp(dir=str(path.parent), suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(entry, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:
        pass


def _ensure_gitignore(folder: Path) -> None:
    marker = folder / ".gitignore"
    if not marker.exists():
        marker.write_text("# Automatically created by precision-lint.\n*\n")


def default_cache_dir(config_root: Optional[Path]) -> str:
    env = os.environ.get("PRECISION_LINT_CACHE_DIR")
    if env:
        return env
    return str((config_root or Path.cwd()) / CACHE_DIR_NAME)


_MISSING = object()


class _OneEntry:
    """A dictionary kept as one cache entry: read on first use, written back (atomically) by
    ``save`` when something was added (``_added``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._data: Optional[dict] = None
        self._added = False

    def _entries(self) -> dict:
        if self._data is None:
            loaded = _load(self.path)
            self._data = loaded if isinstance(loaded, dict) else {}
        return self._data


class ImportsIndex(_OneEntry):
    """What the project-wide steps read of each file before its facts, in one entry for the
    whole cache: the modules a text imports for the gate (``gate.imported_modules``, keyed by
    path, content digest and module name) and the imports its facts record (keyed as the facts
    are). A new process over a large tree with one file edited then parses that file alone for
    the gate, and the neighbour search of a named file reads no facts (nor LibCST) to follow
    imports. Read once, written once per run (atomically) when something was added; entries of
    texts a run did not see are dropped when they outnumber those it saw, by a run that read
    every file's imports (a run answered from a ledger reads those of the edited files only)."""

    KEEP_UNSEEN = 1000  # entries of texts a whole run did not see, kept beyond twice those it saw

    def __init__(self, root: str) -> None:
        super().__init__(Path(root) / fingerprint() / "imports" / "index.pickle")
        self._seen: set = set()

    def get(self, key: tuple, default=None):
        found = self._entries().get(key, _MISSING)
        if found is _MISSING:
            return default
        self._seen.add(key)
        return found

    def put(self, key: tuple, value) -> None:
        entries = self._entries()
        self._seen.add(key)
        if entries.get(key, _MISSING) != value:
            entries[key] = value
            self._added = True

    def save(self, whole: bool = True) -> None:
        """Written back when something was added; ``whole``: the run asked for every file's
        imports, so what it did not see is of texts gone (pruned past :attr:`KEEP_UNSEEN`)."""
        if not self._added or self._data is None:
            return
        if whole and len(self._data) > 2 * len(self._seen) + self.KEEP_UNSEEN:
            self._data = {k: v for k, v in self._data.items() if k in self._seen}
        _store(self.path, self._data, self.path.parent.parent.parent)
        self._added = False


class StampCache(_OneEntry):
    """The content digest of each file as of its stamp (size, times, inode: ``sources.stamp``),
    in one entry for the whole cache: a re-run over an unchanged tree keys its cached run by
    stat calls alone, reading no file (ruff's cache does the same with modification times).
    Read once, written once per run (atomically) when a stamp was added or changed."""

    def __init__(self, root: str) -> None:
        super().__init__(Path(root) / "stamps.pickle")  # digests of bytes: the same for every version of the code

    def digest(self, path: str, stamped) -> Optional[str]:
        """The digest recorded for ``path`` (absolute) at this stamp; None when none is."""
        found = self._entries().get(path)
        return found[1] if found is not None and found[0] == stamped else None

    def put(self, path: str, stamped, digest: str) -> None:
        entries = self._entries()
        if entries.get(path) != (stamped, digest):
            entries[path] = (stamped, digest)
            self._added = True

    def save(self) -> None:
        if self._added and self._data is not None:
            _store(self.path, self._data, self.path.parent)
            self._added = False


class RunCache:
    """The findings of a whole check, keyed by every file's content, the configuration and the
    rules: a re-run over an unchanged tree reads one entry instead of every file's facts and
    joining them again. The config files the join read (``train.yaml``, a DeepSpeed JSON) are
    not linted files: the entry keeps their content digests (or that they were missing) and is
    used only while they still match."""

    def __init__(self, root: str) -> None:
        self.folder = Path(root) / fingerprint() / "runs"

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.pickle"

    def get(self, key: str):
        entry = _load(self._path(key))
        if entry is None:
            return None
        stored_key, side_files, diagnostics = entry
        if stored_key != key or not states_hold(side_files):
            return None
        return diagnostics

    def put(self, key: str, side_files: "FileStates", diagnostics) -> None:
        """``side_files``: the states of the config files it read (:func:`file_states`)."""
        _store(self._path(key), (key, side_files, diagnostics), self.folder.parent.parent)


FileStates = Tuple[Tuple[str, Optional[str]], ...]  # (path, content digest or None), by path


def file_states(paths) -> FileStates:
    """The states of the side files at ``paths``, read now."""
    return tuple((p, file_state(p)) for p in sorted(paths))


def states_hold(states: FileStates) -> bool:
    """Whether each side file is still as ``states`` recorded it."""
    return all(file_state(p) == state for p, state in states)


def file_state(path: str) -> Optional[str]:
    """A side file's content digest; a folder's, of the names it holds (a file added or removed
    changes it); None when it cannot be read (missing counts too)."""
    if os.path.isdir(path):
        try:
            return "folder:" + hashlib.sha1("\0".join(sorted(os.listdir(path))).encode("utf-8", "surrogateescape")).hexdigest()
        except OSError:
            return None
    try:
        with open(path, "rb") as fh:
            return hashlib.sha1(fh.read()).hexdigest()
    except OSError:
        return None
