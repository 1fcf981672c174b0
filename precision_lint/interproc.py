"""Values across calls: parameters are substituted by what their callers pass.

Each file's facts keep a parameter as a symbolic ``PARAM`` atom and record the calls it
makes to project code (``facts/calls.py``); both stay file-local, so the per-file cache
keeps working. Here, at the join, every ``PARAM`` atom in a module's facts is replaced
by the union of the matching arguments of every recorded call of that function, class
or method in the project (classic summary-based substitution), with the guards the call
runs under. It is bounded: chains of helpers are followed a few calls deep, and a
parameter nobody is seen to call stays unknown.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Tuple

from .facts.model import CallRecord, ModuleFacts
from .facts.values import CONST, DTYPE, PARAM, UNKNOWN, Possible, ParamRef, dtype_of_string

MAX_DEPTH = 4
_MAX_ATOMS = 64


class CallGraphValues:
    def __init__(self, modules: List[ModuleFacts], symbols) -> None:
        self._symbols = symbols
        self._modules = modules
        self._by_callee: Optional[Dict[str, List[Tuple[ModuleFacts, CallRecord]]]] = None
        self._memo: Dict[ParamRef, Tuple[Possible, ...]] = {}

    def _callers(self) -> Dict[str, List[Tuple[ModuleFacts, CallRecord]]]:
        if self._by_callee is None:
            index: Dict[str, List[Tuple[ModuleFacts, CallRecord]]] = {}
            for module in self._modules:
                for record in module.calls:
                    for key in self._keys(record.callee, module):
                        index.setdefault(key, []).append((module, record))
            self._by_callee = index
        return self._by_callee

    def _keys(self, callee: str, module: ModuleFacts) -> Tuple[str, ...]:
        """The names a parameter reference may use for this callee: its canonical name, and
        for a class without its own ``__init__``, the class whose ``__init__`` runs."""
        canonical = self._symbols.canonical(callee, module)
        owner = self._symbols.init_owner(callee, module)
        if owner is not None and owner.qualname != canonical:
            return (canonical, owner.qualname)
        return (canonical,)

    def arguments(self, ref: ParamRef, depth: int = 0) -> Tuple[Possible, ...]:
        """What callers pass for ``ref``, substituted in turn; ``(UNKNOWN,)`` when no call is seen."""
        if ref in self._memo:
            return self._memo[ref]
        self._memo[ref] = (Possible(UNKNOWN),)  # a recursive chain ends here
        out: List[Possible] = []
        for module, record in self._callers().get(ref.function, ()):
            for arg in record.args:
                if arg.keyword == ref.name or (arg.keyword is None and ref.index is not None and arg.index == ref.index):
                    for v in self.substitute(arg.values, depth + 1):
                        if ref.excluded and _dtype_name(v) in ref.excluded:
                            continue  # ruled out where the parameter is used
                        out.append(dataclasses.replace(v, guards=tuple(record.guards) + v.guards, where=v.where or module.path))
        result = _dedupe(out) if out else (Possible(UNKNOWN),)
        self._memo[ref] = result
        return result

    def substitute(self, values, depth: int = 0) -> Tuple[Possible, ...]:
        if not any(v.kind == PARAM for v in values):
            return tuple(values)
        out: List[Possible] = []
        for v in values:
            if v.kind != PARAM:
                out.append(v)
            elif depth >= MAX_DEPTH:
                out.append(Possible(UNKNOWN))
            else:
                out.extend(dataclasses.replace(a, guards=v.guards + a.guards) for a in self.arguments(v.value, depth))
        return _dedupe(out)

    # --- facts with parameters substituted ---------------------------------------------
    def resolve_facts(self, module: ModuleFacts) -> ModuleFacts:
        """``module`` with every ``PARAM`` atom of its sections substituted (a copy: cached
        facts are shared and never changed)."""
        sections = {name: self._resolve(value) for name, value in module.sections.items()}
        if all(sections[name] is module.sections[name] for name in sections):
            return module
        return dataclasses.replace(module, sections=sections)

    def _resolve(self, obj):
        if isinstance(obj, Possible):
            return obj
        if isinstance(obj, tuple):
            if obj and all(isinstance(v, Possible) for v in obj):
                return self.substitute(obj) if any(v.kind == PARAM for v in obj) else obj
            new = tuple(self._resolve(v) for v in obj)
            return obj if all(a is b for a, b in zip(new, obj)) else new
        if isinstance(obj, list):
            new = [self._resolve(v) for v in obj]
            return obj if all(a is b for a, b in zip(new, obj)) else new
        if isinstance(obj, dict):
            new = {k: self._resolve(v) for k, v in obj.items()}
            return obj if all(new[k] is obj[k] for k in obj) else new
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            changes = {}
            for f in dataclasses.fields(obj):
                value = getattr(obj, f.name)
                new = self._resolve(value)
                if new is not value:
                    changes[f.name] = new
            if not changes:
                return obj
            resolved = dataclasses.replace(obj, **changes)
            hook = getattr(resolved, "after_substitution", None)
            return hook() if hook is not None else resolved
        return obj


def _dedupe(values) -> Tuple[Possible, ...]:
    out, seen = [], set()
    for v in values:
        if v not in seen:
            seen.add(v)
            out.append(v)
            if len(out) >= _MAX_ATOMS:
                break
    return tuple(out)


def _dtype_name(v: Possible) -> Optional[str]:
    if v.kind == DTYPE:
        return v.value
    return dtype_of_string(v.value) if v.kind == CONST else None
