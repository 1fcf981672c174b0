"""Project symbols: what a qualified name refers to, through the linted modules only.

``from pkg import load_teacher`` names ``pkg.load_teacher``; when ``pkg/__init__.py``
re-exports it from ``pkg.models``, the definition is ``pkg.models.load_teacher``. A
name is resolved by the longest prefix that is a linted module (in the importing
module's own root), then through that module's definitions and exports, with a
visited set (pyright's ``resolveAliasDeclaration``). A prefix that is no linted module
is a library's name and stays as it is. Nothing is ever matched by short name, so an
unrelated ``class Trainer`` elsewhere in the tree changes no finding.
"""
from __future__ import annotations

import re
from typing import Callable, Dict, Hashable, Iterator, List, Optional, Set, Tuple

from ..facts.model import STAR_EXPORT, ClassFact, FactsAsked, ModuleFacts
from ..knowledge import library_bases

_MAX_HOPS = 16
# a dotted name of ASCII identifiers: each of its prefixes is one too (see ``may_be_module``)
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\Z").match


class ProjectSymbols:
    def __init__(
        self,
        module_named: Callable[[str, Optional[ModuleFacts]], Optional[ModuleFacts]],
        import_roots: Optional[Callable[[ModuleFacts], Hashable]] = None,
        module_in: Optional[Callable[[str, Hashable], Optional[ModuleFacts]]] = None,
        asked: Optional[FactsAsked] = None,
        may_be_module: Optional[Callable[[str], bool]] = None,
    ) -> None:
        """``import_roots(module)``: all that ``module_named`` reads of the importer (its import
        roots), so that the modules sharing them share each answer; without it, per module.
        ``module_in(name, roots)``: ``module_named`` asked with those roots directly (each step
        of a resolution then reads the importer's roots once, not once per prefix).
        ``may_be_module(name)``, asked only of a dotted name of ASCII identifiers: False where
        no importer's ``module_named`` can find a module so named. A resolution tries the
        longest prefix first, and most names called are a module's ``Class.method``: their
        longer prefixes are then passed over without a look-up each (transformers: 110,000 call
        edges resolved, 67,000 look-ups of names no module has)."""
        self._module_named = module_named
        self._may_be_module = may_be_module
        self._asked = asked if asked is not None else FactsAsked()  # what it asks of top-level names
        self._scope = import_roots or (lambda m: m.path)
        self._module_in = module_in if import_roots is not None else None
        self._memo: Dict[Tuple[str, Hashable], Tuple[Optional[ModuleFacts], str]] = {}
        # (name, the importer's scope) → ancestry's answer: it reads the importer only through
        # its scope (each base is resolved from the module defining its class), and the join
        # asks it for every call edge of the project (a class's __init__ owner)
        self._ancestry: Dict[Tuple[str, Hashable], Tuple[Tuple[str, Optional[ModuleFacts], Optional[ClassFact]], ...]] = {}
        # (callee, the caller's scope) → :meth:`callee`'s answer: the call graph and the index of
        # call records both ask it of every call of the project
        self._callees: Dict[Tuple[str, Hashable], Tuple[Optional[ModuleFacts], str, Optional[ModuleFacts], Optional[ClassFact]]] = {}

    def scope(self, near: Optional[ModuleFacts]) -> Hashable:
        """All that the answers about names read of the importer ``near`` (its import roots):
        a key for what a caller keeps of them."""
        return self._scope(near) if near is not None else ""

    def resolve(self, qualname: str, near: Optional[ModuleFacts]) -> Tuple[Optional[ModuleFacts], str]:
        """(the linted module that defines it, its canonical qualified name); the module is
        None for a library name (returned unchanged) or a name no linted module defines."""
        return self.resolve_in(qualname, near, self._scope(near) if near is not None else "")

    def resolve_in(self, qualname: str, near: Optional[ModuleFacts], scope: Hashable) -> Tuple[Optional[ModuleFacts], str]:
        """:meth:`resolve`, with ``near``'s :meth:`scope` already known."""
        key = (qualname, scope)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._resolve(qualname, near, set(), scope)
        return found

    def _resolve(self, qualname: str, near: Optional[ModuleFacts], seen: Set[str], scope: Hashable = None) -> Tuple[Optional[ModuleFacts], str]:
        if qualname in seen or len(seen) > _MAX_HOPS:
            return None, qualname
        seen.add(qualname)
        parts = qualname.split(".")
        if self._module_in is not None and near is not None:
            if scope is None:
                scope = self._scope(near)
            module_in = self._module_in
            lookup = lambda name: module_in(name, scope)  # noqa: E731
        else:
            lookup = lambda name: self._module_named(name, near)  # noqa: E731
        may_be = self._may_be_module if self._may_be_module is not None and _PLAIN(qualname) else None
        for i in range(len(parts), 0, -1):
            name = ".".join(parts[:i])
            if may_be is not None and not may_be(name):
                continue
            module = lookup(name)
            if module is None:
                continue
            rest = parts[i:]
            if not rest:
                return module, qualname
            exports = module.exports_map()
            target = exports.get(rest[0])
            if target is not None and not module.defines(rest[0]):
                return self._resolve(".".join([target, *rest[1:]]), module, seen)
            if target is None and not module.defines(rest[0]):
                # `from .helpers import *`: a name the starred module's top level binds (its
                # variables, its imports), as that module resolves it: a library's name too
                # (`DTYPE = torch.float16` there is `torch.float16`)
                for star in (t for name, t in exports.items() if name.startswith(STAR_EXPORT)):
                    starred = self._module_named(star, module)
                    if starred is not None and starred is not module and self._asked.binds_at_top(starred, frozenset((rest[0],))):
                        return self._resolve(".".join([star, *rest]), module, seen)
            return module, ".".join([module.module, *rest]) if module.module else ".".join(rest)
        return None, qualname

    def canonical(self, qualname: Optional[str], near: Optional[ModuleFacts]) -> Optional[str]:
        if not qualname:
            return qualname
        return self.resolve(qualname, near)[1]

    def find_class(self, qualname: Optional[str], near: Optional[ModuleFacts]) -> Tuple[Optional[ModuleFacts], Optional[ClassFact]]:
        """The project class a name refers to, with the module that defines it."""
        if not qualname:
            return None, None
        module, canonical = self.resolve(qualname, near)
        if module is None:
            return None, None
        return module, module.class_named(canonical)

    def ancestry(self, qualname: Optional[str], near: Optional[ModuleFacts]) -> Iterator[Tuple[str, Optional[ModuleFacts], Optional[ClassFact]]]:
        """The class and every base it derives from (project classes through their modules,
        library classes through the library table), each once: ``(canonical name, defining
        module or None, ClassFact or None)``."""
        if not qualname:
            return iter(())
        return iter(self._ancestry_in(qualname, near, self._scope(near) if near is not None else ""))

    def _ancestry_in(self, qualname: str, near: Optional[ModuleFacts], scope: Hashable) -> Tuple[Tuple[str, Optional[ModuleFacts], Optional[ClassFact]], ...]:
        """:meth:`ancestry` of a non-empty name, with ``near``'s :meth:`scope` already known."""
        key = (qualname, scope)
        found = self._ancestry.get(key)
        if found is None:
            found = self._ancestry[key] = tuple(self._ancestry_of(qualname, near, scope))
        return found

    def _ancestry_of(self, qualname: str, near: Optional[ModuleFacts], scope: Hashable) -> Iterator[Tuple[str, Optional[ModuleFacts], Optional[ClassFact]]]:
        seen: Set[str] = set()
        stack: List[Tuple[str, Optional[ModuleFacts]]] = [(qualname, near)]
        first = True
        while stack:
            name, where = stack.pop()
            if first:  # the name itself, from ``near`` (its scope known); its bases from their modules
                module, canonical = self.resolve_in(name, where, scope)
                first = False
            else:
                module, canonical = self.resolve(name, where)
            if canonical in seen:
                continue
            seen.add(canonical)
            cls = module.class_named(canonical) if module is not None else None
            yield canonical, module, cls
            if cls is not None:
                stack.extend((b, module) for b in reversed(cls.bases))
            elif module is None:
                stack.extend((b, None) for b in reversed(library_bases().get(_short_library_name(canonical), ())))

    def class_inherits(self, qualname: Optional[str], predicate: Callable[[str], bool], near: Optional[ModuleFacts]) -> bool:
        """Whether ``qualname`` is, or derives from, a class ``predicate`` accepts."""
        return any(predicate(name) for name, _, _ in self.ancestry(qualname, near))

    def init_owner(self, qualname: Optional[str], near: Optional[ModuleFacts]) -> Optional[ClassFact]:
        """The project class whose own ``__init__`` a call of ``qualname`` runs (None: a library's)."""
        return self.init_owner_in(qualname, near)[1]

    def init_owner_in(self, qualname: Optional[str], near: Optional[ModuleFacts]) -> Tuple[Optional[ModuleFacts], Optional[ClassFact]]:
        """:meth:`init_owner`, with the module that defines it: ``(None, None)`` for a library's."""
        for _, module, cls in self.ancestry(qualname, near):
            if cls is not None and cls.init_params is not None:
                return module, cls
        return None, None

    def callee(self, qualname: str, near: ModuleFacts, scope: Hashable) -> Tuple[Optional[ModuleFacts], str, Optional[ModuleFacts], Optional[ClassFact]]:
        """What a call of ``qualname`` written in ``near`` (whose :meth:`scope` is ``scope``)
        runs: ``(the module defining it, its canonical name, the module defining the class
        whose own __init__ it runs, that class)``, the last two None where no project class's
        does (:meth:`resolve`, :meth:`init_owner_in`)."""
        key = (qualname, scope)
        found = self._callees.get(key)
        if found is None:
            where, canonical = self.resolve_in(qualname, near, scope)
            owner_module = owner = None
            for _, module, cls in self._ancestry_in(qualname, near, scope) if qualname else ():
                if cls is not None and cls.init_params is not None:
                    owner_module, owner = module, cls
                    break
            found = self._callees[key] = (where, canonical, owner_module, owner)
        return found


def _short_library_name(qualname: str) -> str:
    """``trl.trainer.sft_trainer.SFTTrainer`` -> ``trl.SFTTrainer`` (the table's spelling)."""
    parts = qualname.split(".")
    return f"{parts[0]}.{parts[-1]}" if len(parts) > 2 else qualname
