"""Which code runs in one training run: the project call graph and its entry points.

Module-level code of every module in a unit runs (importing a module runs it), and with it
every function it calls, transitively. A function that nothing in the project calls is an
entry point of its own when something outside the project may call it: a function of a
script (a ``main`` behind ``fire``/``typer``/``click``, one a notebook calls), or a method
of a class the unit creates (a Trainer method the library calls, ``forward``). A function
of an imported module that nothing calls, or a method of a class nobody creates, does
not run. Two sites run in one training run when
the module-level code reaches both, when one is reached from module-level code and the
other from any entry, or when one entry function reaches both.
"""
from __future__ import annotations

from typing import Dict, FrozenSet, Iterable, List, Set, Tuple

from .facts.model import ModuleFacts

MODULE_LEVEL = "<module-level>"


class CallGraph:
    def __init__(self, modules: List[ModuleFacts], symbols) -> None:
        self._modules = modules
        self._symbols = symbols
        self._callers: Dict[str, Set[str]] = {}  # canonical callee -> callers (functions or module names)
        self._called: Set[str] = set()
        self._modules_named: Set[str] = set()
        self._entries: Dict[Tuple[str, str], FrozenSet[str]] = {}
        self._unit_key: Tuple[str, ...] = ()
        self._created: Set[str] = set()
        self._imported: Set[str] = set()
        self._classes: Set[str] = set()
        self._module_of: Dict[str, ModuleFacts] = {}
        self._names_key = None
        self._names: tuple = (set(), set())
        for module in modules:
            if module.module:
                self._modules_named.add(module.module)
            for caller, callee in module.call_edges:
                target = symbols.canonical(callee, module)
                owner = symbols.init_owner(callee, module)
                for name in {target, f"{owner.qualname}.__init__" if owner is not None else target}:
                    self._callers.setdefault(name, set()).add(caller)
                    self._called.add(name)

    def entries(self, scope: str, unit: Iterable[ModuleFacts], unit_key: str = "") -> FrozenSet[str]:
        """The entries from which code in ``scope`` runs, within ``unit``: ``MODULE_LEVEL``
        and/or the qualified names of uncalled functions that reach it."""
        unit = list(unit)
        unit_key = unit_key or "|".join(sorted(m.path for m in unit))
        key = (scope, unit_key)
        if key in self._entries:
            return self._entries[key]
        names, functions = self._unit_names(unit, unit_key)
        found: Set[str] = set()
        seen = {scope}
        stack = [scope]
        while stack:
            node = stack.pop()
            if node in names:
                found.add(MODULE_LEVEL)
                continue
            callers = self._callers.get(node, ())
            if node in functions and node not in self._called and self._runs_uncalled(node, unit, unit_key):
                found.add(node)
            if not callers and node not in functions and node not in names:
                # a function of a module outside the unit: whoever runs it is outside too
                continue
            for caller in callers:
                if caller not in seen:
                    seen.add(caller)
                    stack.append(caller)
        result = frozenset(found)
        self._entries[key] = result
        return result

    def _unit_names(self, unit: List[ModuleFacts], unit_key: str):
        """(module names, function names) of a unit, kept for the unit asked about last."""
        if self._names_key != unit_key:
            self._names_key = unit_key
            self._names = ({m.module for m in unit}, {f for m in unit for f in m.functions})
        return self._names

    def _runs_uncalled(self, function: str, unit: List[ModuleFacts], unit_key: str) -> bool:
        """Whether a function that no code of the unit calls still runs: a method of a class
        the unit creates (the library calls ``compute_loss``, ``forward``, callbacks), or a
        function of a script (``main`` behind ``fire``), but not a function of a module
        the script imports (its API, unused) nor a method of a class nobody creates."""
        key = (unit_key,)
        if self._unit_key != key:
            self._unit_key = key
            self._created = self._created_classes(unit)
            self._imported = {name for m in unit for name in m.imports}
            self._classes = {c.qualname for m in unit for c in m.classes}
            self._module_of = {f: m for m in unit for f in m.functions}
        owner, _, _ = function.rpartition(".")
        if owner in self._classes:
            return owner in self._created
        module = self._module_of.get(function)
        return module is None or module.module not in self._imported

    def _created_classes(self, unit: List[ModuleFacts]) -> Set[str]:
        """Classes of the unit that are created (called, or passed on to be called), with every
        project class they derive from."""
        out: Set[str] = set()
        for module in unit:
            for cls in module.classes:
                if cls.qualname in self._called or f"{cls.qualname}.__init__" in self._called:
                    out.update(name for name, _, _ in self._symbols.ancestry(cls.qualname, module))
        return out

    def runs_together(self, unit: List[ModuleFacts], a: str, b: str, unit_key: str = "") -> bool:
        """Whether code in scope ``a`` and code in scope ``b`` run in one run of ``unit``
        (``unit_key``: a name for the unit, its entry's path, saving the work of naming it)."""
        ea = self.entries(a, unit, unit_key)
        eb = self.entries(b, unit, unit_key)
        if not ea or not eb:
            return False
        return MODULE_LEVEL in ea or MODULE_LEVEL in eb or bool(ea & eb)
