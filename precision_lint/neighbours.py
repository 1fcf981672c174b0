"""The files a named file is joined with, found on disk.

pre-commit and editors pass only the changed files. A commit that turns on
``fp16=True`` in ``train.py`` while an unchanged ``models.py`` loads float16 weights is
the same conflict as when the whole tree is checked, so the run must read ``models.py``
too. For each named file this finds, within its project:

- the local modules it imports, transitively (as ``Project`` would join them), and
- the modules that import it (a named ``models.py`` meets the ``train.py`` that trains
  what it loads), found by a cheap text search and confirmed by the join itself.

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


def importer_candidates(named: Sequence[str], project_roots: Dict[str, str], exclude, config_root) -> List[str]:
    """Files of the named files' projects whose text may import one of them (``import models``,
    ``from models import``, ``from . import models``, ``from .models import``)."""
    out: List[str] = []
    named_set = {_same(p) for p in named}
    by_root: Dict[str, Set[str]] = {}
    for path in named:
        name = module_name(path)[0]
        last = name.rsplit(".", 1)[-1]
        if last == "__init__" or not last:
            continue
        by_root.setdefault(project_roots[path], set()).add(last)
    for root, names in by_root.items():
        pattern = re.compile(
            r"^\s*(?:from\s+[\w.]*\b(?:%s)\b|from\s+[\w.]+\s+import\s+.*\b(?:%s)\b|import\s+.*\b(?:%s)\b)"
            % (("|".join(map(re.escape, sorted(names))),) * 3),
            re.MULTILINE,
        )
        files = discover([root], exclude, config_root)
        if len(files) > MAX_SCANNED:
            continue  # too large to search: only the imports of the named files are followed
        for path in files:
            if _same(path) in named_set:
                continue
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError:
                continue
            if pattern.search(text):
                out.append(path)
                if len(out) >= MAX_NEIGHBOURS:
                    return out
    return out


def _same(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))
