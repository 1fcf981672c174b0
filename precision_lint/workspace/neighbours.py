"""The files a named file is joined with, found on disk.

pre-commit and editors pass only the changed files. A commit that turns on
``fp16=True`` in ``train.py`` while an unchanged ``models.py`` loads float16 weights is
the same conflict as when the whole tree is checked, so the run must read ``models.py``
too. For each named file this finds, within its project:

- the modules that import it, directly or through other modules (a named ``models.py``
  meets the ``train.py`` that trains what it loads), found by a cheap text search of the
  import statements and confirmed by the join itself, and
- the local modules that it and those importers import, transitively (as ``Project`` would
  join them): every unit the named file is part of, whole, so that its findings are those of
  a run over the whole tree.

They are read for their facts only: findings are reported for the named files, and for
a neighbour only where the finding names a named file (``related``); a neighbour is never
fixed. Both searches are bounded, so a huge tree costs a bounded amount.
"""
from __future__ import annotations

import os
import re
from typing import Callable, Dict, Iterable, List, Sequence, Set

from .discovery import discover, module_name

MAX_NEIGHBOURS = 400  # files read beyond the named ones
MAX_SCANNED = 20_000  # files of a project searched for importers


def module_files(name: str, roots: Sequence[str]) -> List[str]:
    """The files an import of ``name`` (``pkg.mod`` or ``pkg.mod.attr``) may load, in the
    first root that holds one."""
    parts = name.split(".")
    for root in roots:
        if not root:
            continue
        for n in range(len(parts), 0, -1):
            base = os.path.join(root, *parts[:n])
            found = [p for p in (base + ".py", os.path.join(base, "__init__.py")) if os.path.isfile(p)]
            if found:
                # a package's __init__ runs on the way: its re-exports are part of the name
                inits = [os.path.join(root, *parts[:i], "__init__.py") for i in range(1, n)]
                return [p for p in inits if os.path.isfile(p)] + found[:1]
    return []


def imported_closure(
    named: Iterable[str], imports_of: Callable[[str], Sequence[str]], roots_of: Callable[[str], Sequence[str]]
) -> List[str]:
    """Local files the named files import, transitively (the named files excluded)."""
    named_set = {_same(p) for p in named}
    seen: Set[str] = set(named_set)
    out: List[str] = []
    stack = list(named)
    while stack and len(out) < MAX_NEIGHBOURS:
        path = stack.pop()
        for name in imports_of(path):
            for found in module_files(name, roots_of(path)):
                key = _same(found)
                if key not in seen:
                    seen.add(key)
                    out.append(found)
                    stack.append(found)
    return out


_IMPORT_STATEMENT = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([^#\n]*)|import[ \t]+([^#\n]*))", re.MULTILINE)


def _imported_words(text: str) -> Set[str]:
    """The names a file's import statements mention (``from pkg.models import load`` →
    pkg, models, load): a module whose last name is among them may be imported by it."""
    words: Set[str] = set()
    for match in _IMPORT_STATEMENT.finditer(text):
        for part in match.groups():
            if part:
                words.update(re.findall(r"\w+", part))
    return words


def importer_candidates(named: Sequence[str], project_roots: Dict[str, str], exclude, config_root) -> List[str]:
    """Files of the named files' projects whose imports may reach one of them, directly or
    through other modules (``import models``, ``from . import models``, ``from .models
    import``, and the scripts that import those): every unit a named file belongs to starts
    at one of them, and each unit's own imports are then read too."""
    out: List[str] = []
    named_set = {_same(p) for p in named}
    by_root: Dict[str, Set[str]] = {}
    for path in named:
        last = _last_name(path)
        if last:
            by_root.setdefault(project_roots[path], set()).add(last)
    for root, names in by_root.items():
        files = discover([root], exclude, config_root)
        if len(files) > MAX_SCANNED:
            continue  # too large to search: only the imports of the named files are followed
        words: Dict[str, Set[str]] = {}
        for path in files:
            if _same(path) in named_set:
                continue
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    words[path] = _imported_words(fh.read())
            except OSError:
                continue
        found = True
        while found:  # importers of importers, until no new file joins (bounded by the files)
            found = False
            for path in [p for p, w in words.items() if w & names]:
                del words[path]
                out.append(path)
                if len(out) >= MAX_NEIGHBOURS:
                    return out
                last = _last_name(path)
                if last and last not in names:
                    names.add(last)
                    found = True
    return out


def _last_name(path: str) -> str:
    """The last part of a file's module name (a package's own name for its ``__init__``)."""
    name = module_name(path)[0]
    parts = name.split(".")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return parts[-1] if parts else ""


def _same(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))
