"""Versions ended by a module the code must import: what old code says of its own torch.

A module whose top level imports ``torch._six`` outside any ``try`` or ``if`` cannot be
imported on torch 2.0 or later (``ModuleNotFoundError: No module named 'torch._six'``), and
neither can a script that imports that module the same way: the code was written for, and
runs on, the torch before. A project that pins nothing would otherwise be judged on the
newest torch, where a deprecation (MP303) fires and its fix writes spellings the torch it
runs on lacks. The removals are data (``knowledge/libraries.toml``, ``[[removed_module]]``); the
unconditional imports are each module's facts (``ModuleFacts.top_imports``).
"""
from __future__ import annotations

import os
from collections import deque
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ..facts.model import ModuleFacts
from ..knowledge import RemovedModule, removed_module

# path -> {dist: (the removal, "`torch._six`, imported by utils.py")}
Ceilings = Dict[str, Dict[str, Tuple[RemovedModule, str]]]


def removal_ceilings(
    modules: Sequence[ModuleFacts], module_named: Callable[[str, ModuleFacts], Optional[ModuleFacts]]
) -> Ceilings:
    """For each module that imports a removed module unconditionally, directly or through
    modules of the tree it imports the same way, the earliest removal per library and where
    it is imported. Worked out once per join, forward from the few modules that import a
    removed module, along the importers (nothing to do where none does)."""
    removals = {name: removed_module(name) for m in modules for name in m.top_imports}
    direct = [(m, removals[name]) for m in modules for name in m.top_imports if removals[name] is not None]
    if not direct:
        return {}
    importers: Dict[str, List[ModuleFacts]] = {}
    for m in modules:
        for name in m.top_imports:
            if removals[name] is not None:
                continue
            target = module_named(name, m)
            if target is not None and target.path != m.path:
                importers.setdefault(target.path, []).append(m)
    out: Ceilings = {}
    for start, row in direct:
        where = f"`{row.module}`, imported by {os.path.basename(start.path)}"
        queue, seen = deque([start]), {start.path}
        while queue:
            m = queue.popleft()
            known = out.setdefault(m.path, {}).get(row.dist)
            if known is None or row.removed_in < known[0].removed_in:
                out[m.path][row.dist] = (row, where)
            for importer in importers.get(m.path, ()):
                if importer.path not in seen:
                    seen.add(importer.path)
                    queue.append(importer)
    return out
