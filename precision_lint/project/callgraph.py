"""Which code runs in one training run: the project call graph and its entry points.

Module-level code of every module in a unit runs (importing a module runs it), and with it
every function it calls, transitively. A function that nothing in the project calls is an
entry point of its own when something outside the project may call it: a function of a
script (a ``main`` behind ``fire``/``typer``/``click``, one a notebook calls), or a method
of a class the unit creates (a Trainer method the library calls, ``forward``), or a function
a console script names (``entries.py``). A function of an imported module that nothing calls,
a function of a module of definitions only that no launcher or console script runs, or a
method of a class nobody creates, does not run. Code under a module's ``if __name__ == "__main__":`` has its own scope
(``<module>.__main__``, ``facts/main_block.py``): it runs only in the run whose entry is that
module, never in the runs of the scripts that import it. Two sites run in one training run when
the module-level code reaches both, when one is reached from module-level code and the
other from any entry, or when one entry function reaches both.
"""
from __future__ import annotations

from typing import Any, Dict, FrozenSet, Hashable, Iterable, List, Set, Tuple

from ..semantic.names import installed_package_name
from ..semantic.main_block import is_main_scope, module_of_main
from ..facts.model import ModuleFacts

MODULE_LEVEL = "<module-level>"
# Class methods that build an instance of their class (a project model's `from_pretrained`).
ALTERNATE_CONSTRUCTORS = frozenset({"from_pretrained", "from_config", "from_single_file", "from_checkpoint", "load_from_checkpoint"})


class CallGraph:
    def __init__(self, modules: List[ModuleFacts], symbols, programs=None, entry_functions=frozenset()) -> None:
        self._modules = modules
        # paths of the modules run as programs, and the functions a console script names
        # (``entries.py``); without them every module counts as a program (a bare call graph)
        self._programs = programs
        self._entry_functions = entry_functions
        self._symbols = symbols
        self._callers: Dict[str, Tuple[str, ...]] = {}  # canonical callee -> callers (functions or module names)
        self._called: Set[str] = set()
        self._entries: Dict[Tuple[str, str], FrozenSet[str]] = {}
        # where each name is defined, by module path: a unit is then just a set of paths
        self._module_paths: Dict[str, Tuple[str, ...]] = {}
        self._function_paths: Dict[str, Tuple[str, ...]] = {}
        self._class_paths: Dict[str, Tuple[str, ...]] = {}
        self._importer_paths: Dict[str, Tuple[str, ...]] = {}  # module name → paths of modules importing it
        self._name_of_path: Dict[str, str] = {}
        self._holders: Set[str] = set()  # objects commands are registered with (`app`)
        self._holders_asked: Set[str] = set()  # the holders whose entries are being worked out
        classes = {cls.qualname for module in modules for cls in module.classes}
        # the top-level packages (and modules) of the linted tree: a call of an installed
        # package's name runs the tree's code only where the tree is that package (its own
        # repository, a top-level copy); elsewhere it is the library's, never an edge
        tops = {module.module.partition(".")[0] for module in modules if module.module}
        # the caller's scope → callee → the names a call edge adds callers to: all that they
        # read of the calling module is its scope (transformers: 110,000 edges, most of them
        # to a name other modules of the same roots call too)
        callees: Dict[Hashable, Dict[str, Tuple[str, ...]]] = {}
        # Built, these tables are only read: each holds tuples of paths or names. Nearly all
        # hold one (a function is defined in one module): a set of one is 216 bytes, a tuple of
        # one 48, and transformers has 170,000 of them (34 MB at the peak of a run, #23). A
        # name's callers are a tuple of one, a set from the second (a function called from many
        # modules), made a tuple at the end; so are the path tables' entries, grown as lists
        # (``_add_path``).
        callers: Dict[str, Any] = self._callers
        grown: List[str] = []  # the names whose callers became a set
        listed: List[Tuple[dict, str]] = []  # (path table, name) whose paths became a list
        for module in modules:
            path = module.path
            if module.module:
                _add_path(self._module_paths, listed, module.module, path)
                self._name_of_path[path] = module.module
            for function in module.functions:
                _add_path(self._function_paths, listed, function, path)
            for cls in module.classes:
                _add_path(self._class_paths, listed, cls.qualname, path)
            for name in module.imports:
                _add_path(self._importer_paths, listed, name, path)
            for holder, command in module.registered:
                # an object commands are registered with (`app` of `@app.command()`): it runs,
                # uncalled, as a function of its module would (a console script may name it:
                # `pkg.cli:app`); its commands run one per process (``entries``)
                holder = symbols.canonical(holder, module)
                _add_path(self._function_paths, listed, holder, path)
                self._holders.add(holder)
                _add_caller(callers, grown, command, holder)
            scope = symbols.scope(module)
            named = callees.get(scope)
            if named is None:
                named = callees[scope] = {}
            for caller, callee in module.call_edges:
                names = named.get(callee)
                if names is None:
                    names = named[callee] = self._callee_names(callee, module, scope, tops, classes)
                for name in names:
                    _add_caller(callers, grown, name, caller)
        for name in grown:
            callers[name] = tuple(callers[name])
        for table, name in listed:
            table[name] = tuple(table[name])
        self._called.update(callers)  # every name called: those with callers
        # class (or a project class it derives from) → paths of modules with a created subclass
        self._created_in: Dict[str, Set[str]] = {}
        self._created_as: Dict[str, Set[str]] = {}  # class → the created classes derived from it
        for module in modules:
            for cls in module.classes:
                if cls.qualname in self._called or f"{cls.qualname}.__init__" in self._called:
                    for name, _, _ in symbols.ancestry(cls.qualname, module):
                        self._created_in.setdefault(name, set()).add(module.path)
                        self._created_as.setdefault(name, set()).add(cls.qualname)
        self._asking: Set[Tuple[str, str]] = set()
        for table in (self._created_in, self._created_as):
            for key, found in table.items():
                table[key] = tuple(found)
        # equal answers of entries() share one set (transformers: 59,268 answers, all empty)
        self._entry_sets: Dict[FrozenSet[str], FrozenSet[str]] = {}
        # how many questions have been cut as asked while being answered: an answer whose walk
        # cut one holds only under the question that cut it, so it is not kept (``entries``)
        self._cuts = 0

    def _callee_names(self, callee: str, module: ModuleFacts, scope: Hashable, tops: Set[str], classes: Set[str]) -> Tuple[str, ...]:
        """The canonical names a call of ``callee`` written in ``module`` (whose scope is
        ``scope``) runs (none for an installed package's name outside the tree): the callee,
        the ``__init__`` of the class whose ``__init__`` runs, and the class an alternate
        constructor builds."""
        if installed_package_name(callee) and callee.partition(".")[0] not in tops:
            return ()
        _, target, _, owner = self._symbols.callee(callee, module, scope)
        names = {target, f"{owner.qualname}.__init__" if owner is not None else target}
        klass, _, method = target.rpartition(".")
        if method in ALTERNATE_CONSTRUCTORS and klass in classes:
            names.add(klass)  # `Net.from_pretrained(...)` builds a Net
        return tuple(names)

    def entries(self, scope: str, unit: Iterable, unit_key: str = "") -> FrozenSet[str]:
        """The entries from which code in ``scope`` runs, within ``unit`` (its modules, or the
        set of their paths): ``MODULE_LEVEL`` and/or the qualified names of uncalled functions
        that reach it."""
        # a list of modules, or anything that answers `path in unit` (a set, a project's unit view)
        paths = {m.path for m in unit} if isinstance(unit, (list, tuple)) else unit
        key = (scope, unit_key or "|".join(sorted(paths)))
        if key in self._entries:
            return self._entries[key]
        cuts = self._cuts
        found: Set[str] = set()
        seen = {scope}
        stack = [scope]
        while stack:
            node = stack.pop()
            if is_main_scope(node) and not _within(self._module_paths.get(node), paths):
                # (a package's `__main__.py` is the module `pkg.__main__`, not a block of `pkg`)
                # `if __name__ == "__main__":` code runs in its own module's run only
                if self._main_runs(node, paths, unit_key):
                    found.add(node)
                continue
            is_module = _within(self._module_paths.get(node), paths)
            if is_module:
                found.add(MODULE_LEVEL)
                continue
            callers = self._callers.get(node, ())
            is_function = _within(self._function_paths.get(node), paths)
            if is_function and (node not in self._called or node in self._entry_functions) and self._runs_uncalled(node, paths, unit_key):
                found.add(node)
            if not callers and not is_function:
                # a function of a module outside the unit: whoever runs it is outside too
                continue
            for caller in callers:
                if caller in self._holders:
                    # a command of an app: one command runs per process, so the command is an
                    # entry of its own wherever its app runs (never joined with its siblings);
                    # an app asked about again on the way (a holder among its own callers) adds nothing
                    if caller not in self._holders_asked:
                        self._holders_asked.add(caller)
                        try:
                            if self.entries(caller, unit, unit_key):
                                found.add(node)
                        finally:
                            self._holders_asked.discard(caller)
                    continue
                if caller not in seen:
                    seen.add(caller)
                    stack.append(caller)
        result = frozenset(found)
        result = self._entry_sets.setdefault(result, result)
        if self._cuts == cuts or not self._asking:
            # kept only when no question was cut on the way, or when this is the outermost
            # question (then the walk is the same whichever question came first): a nested
            # answer that took a cut question as "no" is wrong once that question is answered
            self._entries[key] = result
        return result

    def _runs_uncalled(self, function: str, paths, unit_key: str = "") -> bool:
        """Whether a function that no code of the unit calls still runs: a method of a class
        the run creates (the library calls ``compute_loss``, ``forward``, callbacks), or a
        function of a script (``main`` behind ``fire``), but not a function of a module
        the script imports (its API, unused) nor a method of a class nobody creates. A class
        is created in the run when code that runs in it calls the class (or a class derived
        from it): a ``Trainer`` that only an uncalled helper of an imported package builds
        (a copy of a library in the repository) runs none of its methods."""
        owner, _, _ = function.rpartition(".")
        if _within(self._class_paths.get(owner), paths):
            return _within(self._created_in.get(owner), paths) and self._created_by_running_code(owner, paths, unit_key)
        defined = sorted(p for p in self._function_paths.get(function, ()) if p in paths)
        if not defined:
            return True
        module = self._module_name(defined[-1])
        if module and _within(self._importer_paths.get(module), paths):
            return False  # the API of a module the run imports: run only if called
        if not module or self._programs is None or function in self._entry_functions:
            return True
        return defined[-1] in self._programs  # a module of definitions only runs nothing itself

    def builds(self, klass: str, paths, unit_key: str = "") -> bool:
        """Whether the run of ``paths`` (``unit_key``: its entry's path) may build an instance of
        the project class ``klass`` (or of a class derived from it), so that its methods run:
        code of the run calls the class, a derived one, or one of their alternate constructors
        (``from_pretrained``). A class the project builds nowhere the call graph sees (through a
        registry, a config, a hub checkpoint) may be built by any run that holds it."""
        if not self._created_as.get(klass):
            return True
        return _within(self._created_in.get(klass), paths) and self._created_by_running_code(klass, paths, unit_key)

    def creators(self, klass: str, paths) -> Tuple[str, ...]:
        """The scopes of the run of ``paths`` whose code calls the project class ``klass`` itself
        (or its ``__init__``): where its instances are made (a loss module built by a Trainer
        subclass's method; a test of another run that builds it does not count)."""
        found = {c for callee in (klass, f"{klass}.__init__") for c in self._callers.get(callee, ())}
        return tuple(sorted(
            c for c in found if _within(self._function_paths.get(c) or self._module_paths.get(c), paths)
        ))

    def _created_by_running_code(self, owner: str, paths, unit_key: str) -> bool:
        """Whether code that runs in this run calls ``owner`` or a class derived from it (a
        question asked while it is being answered counts as no)."""
        for cls in sorted(self._created_as.get(owner, ())):
            for callee in (cls, f"{cls}.__init__"):
                for caller in sorted(self._callers.get(callee, ())):
                    key = (caller, unit_key or "|".join(sorted(paths)))
                    if key in self._asking:
                        self._cuts += 1
                        continue
                    self._asking.add(key)
                    try:
                        if self.entries(caller, paths, unit_key):
                            return True
                    finally:
                        self._asking.discard(key)
        return False

    def _main_runs(self, scope: str, paths, unit_key: str) -> bool:
        """Whether the ``__main__`` block ``scope`` runs in the run of ``paths``: when its module
        is the run's entry (``unit_key``, the entry's path), or, with no entry named, when no
        module of the run imports it."""
        module = module_of_main(scope)
        defined = [p for p in self._module_paths.get(module, ()) if p in paths]
        if not defined:
            return False
        if unit_key:
            return unit_key in defined
        return not _within(self._importer_paths.get(module), paths)

    def _module_name(self, path: str) -> str:
        return self._name_of_path.get(path, "")

    def runs_together(self, unit, a: str, b: str, unit_key: str = "") -> bool:
        """Whether code in scope ``a`` and code in scope ``b`` run in one run of ``unit`` (its
        modules or their paths; ``unit_key``: a name for it, its entry's path)."""
        ea = self.entries(a, unit, unit_key)
        eb = self.entries(b, unit, unit_key)
        if not ea or not eb:
            return False
        return MODULE_LEVEL in ea or MODULE_LEVEL in eb or bool(ea & eb)


def _add_path(table: Dict[str, Any], grown: List[Tuple[dict, str]], name: str, path: str) -> None:
    """``path`` added to the paths of ``name`` in ``table``, once: a tuple of one, a list from
    the second (noted in ``grown``, made a tuple at the end). A module adds all its entries
    before the next module adds any, so its path, added before, is the last."""
    found = table.get(name)
    if found is None:
        table[name] = (path,)
    elif type(found) is tuple:
        if found[0] != path:
            table[name] = [found[0], path]
            grown.append((table, name))
    elif found[-1] != path:
        found.append(path)


def _add_caller(callers: Dict[str, Any], grown: List[str], name: str, caller: str) -> None:
    """``caller`` added to the callers of ``name`` (a tuple of one, then a set: see ``CallGraph``)."""
    found = callers.get(name)
    if found is None:
        callers[name] = (caller,)
    elif type(found) is tuple:
        if found[0] != caller:
            callers[name] = {found[0], caller}
            grown.append(name)
    else:
        found.add(caller)


def _within(defined, paths) -> bool:
    """Whether one of the paths a name is defined in is in the unit."""
    return bool(defined) and any(p in paths for p in defined)
