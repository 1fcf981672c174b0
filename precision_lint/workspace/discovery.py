"""Finding the files to lint, the way ruff does.

Folders are walked recursively for Python files and Jupyter notebooks;
``.gitignore`` files, configured ``exclude`` patterns, VCS folders, virtual
environments, caches and build output are skipped. A file named explicitly on
the command line is always checked.
"""
from __future__ import annotations

import fnmatch
import os
from functools import lru_cache
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple


@lru_cache(maxsize=None)
def _pathspec():
    """pathspec, imported where a ``.gitignore`` is read (a tenth of a small file's check on a
    busy machine): None where it is missing."""
    try:
        import pathspec
    except ImportError:  # pragma: no cover - pathspec is a declared dependency
        return None
    return pathspec

SUFFIXES = (".py", ".ipynb")  # notebooks: see notebook.py
SKIPPED_DIRS = {
    ".git", ".hg", ".svn", ".bzr", "__pycache__", ".venv", "venv", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".precision-lint-cache", "node_modules",
    "build", "dist", "site-packages", ".eggs", ".ipynb_checkpoints",
}


def _is_virtualenv(folder) -> bool:
    return os.path.isfile(os.path.join(folder, "pyvenv.cfg")) or os.path.isdir(os.path.join(folder, "conda-meta"))


def _spec(pathspec, lines: List[str]):
    """The ``.gitignore`` ``lines`` as one spec. A pattern git refuses (one that ends in a lone
    backslash: ``configs/user.jsonnet\\``, 48c's smes_ppo) never matches in git, which ignores
    it and reads the rest; pathspec raises on it (``GitIgnorePatternError``), so such a line is
    left out here too, never a traceback that checks nothing."""
    try:
        return pathspec.PathSpec.from_lines("gitwildmatch", lines)
    except ValueError:  # GitIgnorePatternError derives from ValueError
        kept = []
        for line in lines:
            try:
                pathspec.PathSpec.from_lines("gitwildmatch", [line])
            except ValueError:
                continue
            kept.append(line)
        return pathspec.PathSpec.from_lines("gitwildmatch", kept)


class _GitIgnores:
    def __init__(self) -> None:
        self._specs: List[Tuple[Path, object]] = []

    def add_folder(self, folder: Path) -> None:
        if os.path.isfile(os.path.join(folder, ".gitignore")):
            ignore = folder / ".gitignore"
            pathspec = _pathspec()
            if pathspec is None:
                return
            try:
                lines = ignore.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                return
            self._specs.append((folder, _spec(pathspec, lines)))

    def active(self) -> bool:
        """Whether a ``.gitignore`` was read (else nothing is ignored by one)."""
        return bool(self._specs)

    def ignored(self, path: Path, is_dir: bool) -> bool:
        for base, spec in self._specs:
            try:
                rel = path.relative_to(base).as_posix()
            except ValueError:
                continue
            if spec.match_file(rel + "/" if is_dir else rel):
                return True
        return False


def _excluded(path: Path, patterns: Sequence[str], root: Optional[Path]) -> bool:
    if not patterns:
        return False
    candidates = [path.name, path.as_posix()]
    if root is not None:
        try:
            candidates.append(path.resolve().relative_to(root.resolve()).as_posix())
        except ValueError:
            pass
    return any(fnmatch.fnmatch(c, p.rstrip("/")) for p in patterns for c in candidates)


def is_excluded(path: str, patterns: Sequence[str], root: Optional[Path] = None) -> bool:
    """Whether a file matches the configured ``exclude`` patterns (for ``--force-exclude``)."""
    p = Path(path)
    if _excluded(p, patterns, root):
        return True
    return any(_excluded(parent, patterns, root) for parent in p.parents if parent.name)


def discover(
    paths: Iterable[str],
    exclude: Sequence[str] = (),
    root: Optional[Path] = None,
    suffixes: Sequence[str] = SUFFIXES,
) -> List[str]:
    found: List[str] = []
    seen = set()

    def add(shown: str, real: str) -> None:
        """``shown`` (the path as found) once per file it really is (``real``, resolved)."""
        key = os.path.normcase(real)
        if key not in seen:
            seen.add(key)
            found.append(shown)

    for raw in paths:
        start = Path(raw)
        if start.is_file():
            add(str(start), str(start.resolve()))  # named explicitly: always checked
            continue
        if not start.is_dir():
            raise FileNotFoundError(raw)
        ignores = _GitIgnores()
        # .gitignore files above the starting folder, up to the repository root
        for parent in reversed(start.resolve().parents):
            ignores.add_folder(parent)
            if (parent / ".git").exists():
                ignores = _GitIgnores()
                ignores.add_folder(parent)
        resolved_of: Dict[str, Path] = {}  # a folder the walk goes into → its resolved path, made above
        for folder, dirs, files in os.walk(start):
            here = Path(folder)
            resolved = resolved_of.pop(folder, None) or here.resolve()  # only links need their own
            ignores.add_folder(resolved)
            keep = []
            for d in sorted(dirs):
                if d in SKIPPED_DIRS or d.endswith(".egg-info"):
                    continue
                below = os.path.join(folder, d)  # as os.walk names it when it goes in
                if _is_virtualenv(below):
                    continue
                real = Path(below).resolve() if os.path.islink(below) else resolved / d
                if ignores.ignored(real, True) or _excluded(here / d, exclude, root):
                    continue
                keep.append(d)
                resolved_of[below] = real
            dirs[:] = keep
            # each file's path as ``here / f`` spells it, joined as text (a Path per file costs
            # more than the walk: transformers has 2,860)
            shown, resolved_text = str(here), str(resolved)
            for f in sorted(files):
                if os.path.splitext(f)[1] not in suffixes:  # as Path.suffix
                    continue
                text = f if shown == "." else os.path.join(shown, f)
                real = Path(text).resolve() if os.path.islink(text) else None  # only links need their own
                if ignores.active() and ignores.ignored(real or resolved / f, False):
                    continue
                if exclude and _excluded(Path(text), exclude, root):
                    continue
                add(text, str(real) if real is not None else os.path.join(resolved_text, f))
    return found


def module_name(path: str) -> Tuple[str, bool, str]:
    """(dotted module name, is a package ``__init__``, the folder the name is relative to)."""
    if os.path.islink(path):
        folder, name = os.path.split(os.path.realpath(path))
    else:  # the folder resolved once for its files (a part at a time: a stat per part)
        folder, name = _real_folder(os.path.dirname(path)), os.path.basename(path)
    stem, suffix = os.path.splitext(name)
    if suffix == ".":  # `a.` has no suffix to Path either
        stem, suffix = name, ""
    is_package = stem == "__init__" and suffix == ".py"
    # A notebook cannot be imported: its name must never shadow `train.py` beside `train.ipynb`.
    parts = [] if is_package else [stem + "-ipynb" if suffix == ".ipynb" else stem]
    packages, top = _package_chain(folder)
    return ".".join([*packages, *parts]), is_package, top


@lru_cache(maxsize=4096)
def _real_folder(folder: str) -> str:
    """``os.path.realpath(folder)``, once per folder of a run (``ImportRoots`` forgets it)."""
    return os.path.realpath(folder)


@lru_cache(maxsize=4096)
def _package_chain(folder: str) -> Tuple[Tuple[str, ...], str]:
    """The package names a folder is inside (``("transformers", "models")``) and the folder
    above the outermost one; asked once per folder of a run (``ImportRoots``, made once per
    run, forgets the answers)."""
    if not os.path.isfile(os.path.join(folder, "__init__.py")):
        return (), folder
    parent = os.path.dirname(folder)
    if parent == folder:
        return (), folder
    packages, top = _package_chain(parent)
    return (*packages, os.path.basename(folder)), top


# What marks the top of a project, as ruff and pyright look for it.
PROJECT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")


class ImportRoots:
    """Where an import written in a module may find a local module, nearest first.

    A module is imported relative to a folder on ``sys.path``; for a file being linted
    those are, in order: the folder its own name is relative to (``module_name``), its
    project root and the project's ``src`` folder (ruff's default ``src = [".", "src"]``),
    then the configured ``src`` folders. A module elsewhere, such as a same-named
    ``utils.py`` in an unrelated folder, is never what the import means.

    File-system answers are cached per instance: make one per run.
    """

    def __init__(self, src: Sequence[Path] = ()) -> None:
        _package_chain.cache_clear()  # a new run sees the file system anew (packages made since)
        _real_folder.cache_clear()
        self.src = tuple(str(Path(s).resolve()) for s in src)
        self._marked: Dict[str, Optional[str]] = {}
        self._roots: Dict[Tuple[str, str], Tuple[str, ...]] = {}

    def project_root(self, path: str) -> str:
        """The nearest folder at or above the file's own that holds a project marker
        (pyproject.toml, setup.cfg, setup.py, .git); without one, the folder the file's
        module name is relative to (its own folder for a script, the top of its package)."""
        folder = str(Path(path).resolve().parent)
        found = self._marked_folder(folder)
        return found if found is not None else module_name(path)[2]

    def _marked_folder(self, folder: str) -> Optional[str]:
        trail = []
        current: Optional[str] = folder
        found = None
        while current is not None:
            if current in self._marked:
                found = self._marked[current]
                break
            trail.append(current)
            if any(os.path.exists(os.path.join(current, m)) for m in PROJECT_MARKERS):
                found = current
                break
            parent = os.path.dirname(current)
            current = parent if parent != current else None
        for f in trail:
            self._marked[f] = found
        return found

    def __call__(self, path: str, module_root: str) -> Tuple[str, ...]:
        """The folders, in order, where an import in the file ``path`` (whose module name is
        relative to ``module_root``) finds local modules."""
        if not module_root:  # text given without a place on disk: only its own name space
            return (module_root,)
        key = (os.path.dirname(os.path.abspath(path)), module_root)
        if key not in self._roots:
            project = self.project_root(path)
            roots = [module_root, project, os.path.join(project, "src"), *self.src]
            self._roots[key] = tuple(dict.fromkeys(roots))
        return self._roots[key]


def project_root(path: str, config_root: Optional[Path] = None, folders: Sequence[str] = ()) -> str:
    """The folder whose files are joined with ``path`` when it is checked on its own (an editor's
    buffer, stdin): the folder of the configuration that applies to it, else the innermost of
    ``folders`` (an editor's workspace folders) holding it, else the folder its import name is
    relative to (the folder a script's own imports are found in)."""
    target = Path(path).resolve()
    candidates = [config_root] if config_root is not None else []
    candidates += sorted((Path(f) for f in folders), key=lambda f: len(f.resolve().parts), reverse=True)
    for folder in candidates:
        folder = folder.resolve()
        if folder == target or folder in target.parents:
            return str(folder)
    return module_name(str(target))[2]
