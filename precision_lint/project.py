"""Joining the facts of several files into one project.

Real bugs span files: the model is loaded in ``model_utils.py`` and
``TrainingArguments(fp16=True)`` is built in ``train.py``. Files are joined along
the import graph of the linted files: a *unit* is a module plus every local
module it imports, transitively. Two scripts in one folder that do not import
each other are never joined, and an import only ever finds a module in the folders
it could be imported from (``discovery.ImportRoots``): a same-named ``utils.py`` in
an unrelated folder is not the one it means.
"""
from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set

from .facts.model import ClassFact, ModuleFacts


class Project:
    def __init__(
        self,
        modules: Iterable[ModuleFacts],
        import_roots: Optional[Callable[[ModuleFacts], Sequence[str]]] = None,
    ) -> None:
        """``import_roots(module)``: the folders, nearest first, where an import written in
        ``module`` finds local modules (default: only the folder its own name is relative to)."""
        self.modules: List[ModuleFacts] = [m for m in modules]
        self.by_path: Dict[str, ModuleFacts] = {m.path: m for m in self.modules}
        self._import_roots = import_roots or (lambda m: (m.root,))
        self._by_name: Dict[str, Dict[str, ModuleFacts]] = {}  # name -> root -> module
        # a package `pkg/a/__init__.py` wins over a module `pkg/a.py`, as in Python
        for m in sorted(self.modules, key=lambda m: (not m.is_package, m.path)):
            if m.module:
                self._by_name.setdefault(m.module, {}).setdefault(m.root, m)
        self.classes: Dict[str, ClassFact] = {}
        for m in self.modules:
            for c in m.classes:
                self.classes.setdefault(c.qualname, c)
        self._by_short_name: Dict[str, List[ClassFact]] = {}
        for q, c in self.classes.items():
            self._by_short_name.setdefault(q.rsplit(".", 1)[-1], []).append(c)
        self._containing: Optional[Dict[str, List[ModuleFacts]]] = None
        self._imports: Dict[str, List[ModuleFacts]] = {}
        self._closure: Dict[str, Set[str]] = {}
        self._json: Dict[str, Any] = {}

    # --- side files ----------------------------------------------------------------
    def read_json(self, near: ModuleFacts, relative: str) -> Optional[Any]:
        """A JSON config named by a literal path (e.g. ``deepspeed="ds.json"``), or None.

        Looked up next to the module and in the working directory, as a script run
        from either place would; unreadable or invalid files give None.
        """
        for base in (os.path.dirname(os.path.abspath(near.path)), os.getcwd()):
            path = os.path.normpath(os.path.join(base, relative))
            if path not in self._json:
                try:
                    with open(path, encoding="utf-8") as fh:
                        self._json[path] = json.load(fh)
                except (OSError, ValueError):
                    self._json[path] = None
            if self._json[path] is not None:
                return self._json[path]
        return None

    # --- modules and imports ---------------------------------------------------
    def module_named(self, name: str, near: Optional[ModuleFacts] = None) -> Optional[ModuleFacts]:
        """The linted module ``name`` that an import written in ``near`` finds: the first of
        ``near``'s import roots that holds one. Without ``near`` nothing is found: which
        module a name means depends on where it is imported."""
        by_root = self._by_name.get(name)
        if not by_root or near is None:
            return None
        for root in self._import_roots(near):
            found = by_root.get(root)
            if found is not None:
                return found
        return None

    def imported_modules(self, module: ModuleFacts) -> List[ModuleFacts]:
        """The linted modules that ``module`` imports directly."""
        if module.path not in self._imports:
            found = {}
            for name in module.imports:
                target = self.module_named(name, module)
                if target is None and "." in name:
                    # `from pkg.mod import func` also names pkg.mod.func
                    target = self.module_named(name.rsplit(".", 1)[0], module)
                if target is not None and target.path != module.path:
                    found[target.path] = target
            self._imports[module.path] = list(found.values())
        return self._imports[module.path]

    def unit(self, module: ModuleFacts) -> Set[str]:
        """Paths of ``module`` and every linted module it imports, transitively."""
        if module.path not in self._closure:
            seen = {module.path}
            stack = [module]
            while stack:
                for dep in self.imported_modules(stack.pop()):
                    if dep.path not in seen:
                        seen.add(dep.path)
                        stack.append(dep)
            self._closure[module.path] = seen
        return self._closure[module.path]

    def units_containing(self, module: ModuleFacts) -> List[ModuleFacts]:
        """Entry modules whose unit includes ``module``: itself first, then the others in
        the project's order."""
        if self._containing is None:
            # every unit once, inverted: linear in the total size of the units
            containing: Dict[str, List[ModuleFacts]] = {}
            for entry in self.modules:
                for path in self.unit(entry):
                    if path != entry.path:
                        containing.setdefault(path, []).append(entry)
            self._containing = containing
        return [module, *self._containing.get(module.path, ())]

    def unit_modules(self, entry: ModuleFacts) -> List[ModuleFacts]:
        return [self.by_path[p] for p in sorted(self.unit(entry)) if p in self.by_path]

    # --- classes -----------------------------------------------------------------
    def class_inherits(self, qualname: Optional[str], predicate: Callable[[str], bool]) -> bool:
        """Whether ``qualname`` is, or derives (through project classes) from, a matching class."""
        seen: Set[str] = set()
        stack = [qualname] if qualname else []
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            if predicate(name):
                return True
            cls = self.find_class(name)
            if cls is not None:
                stack.extend(cls.bases)
        return False

    def find_class(self, qualname: Optional[str]) -> Optional[ClassFact]:
        """A project class by qualname, or by its unique short name when re-exported
        (``from pkg import MyTrainer`` names ``pkg.MyTrainer`` for ``pkg.trainers.MyTrainer``)."""
        if not qualname:
            return None
        return self.classes.get(qualname) or self._class_by_suffix(qualname)

    def init_owner(self, qualname: Optional[str]) -> Optional[ClassFact]:
        """The project class whose own ``__init__`` a call of ``qualname`` runs (None: a library's)."""
        seen: Set[str] = set()
        cls = self.find_class(qualname)
        while cls is not None and cls.qualname not in seen:
            seen.add(cls.qualname)
            if cls.init_params is not None:
                return cls
            bases = [self.find_class(b) for b in cls.bases]
            cls = next((b for b in bases if b is not None), None)
        return None

    def _class_by_suffix(self, name: str) -> Optional[ClassFact]:
        matches = self._by_short_name.get(name.rsplit(".", 1)[-1], ())
        return matches[0] if len(matches) == 1 else None
