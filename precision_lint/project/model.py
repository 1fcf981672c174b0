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

import contextlib
import dataclasses
import os
from itertools import compress
from typing import Any, Callable, Dict, FrozenSet, Hashable, Iterable, List, Optional, Sequence, Set, Tuple

from ..workspace.configfiles import ConfigFiles
from ..semantic.main_block import in_main_block, main_scope
from ..facts.model import FactsAsked, ModuleFacts
from .callgraph import CallGraph
from .entries import programs_and_entries
from ..workspace.declared import DeclaredEntries
from .interproc import CallGraphValues
from .removed_imports import removal_ceilings
from ..workspace.shipped import ShippedFiles
from .symbols import ProjectSymbols
from .trained import TrainedJoin
from ..workspace.versions import Allowed, Targets, VersionResolver, version_text


# whether paths are case-normalised (Windows): names are then looked up as their paths spell them
_CASE_FOLDS = os.path.normcase("A") != "A"
# a unit's flags as the digits of its bits (see Project._unit_bits), and back
_AS_DIGITS = bytes.maketrans(b"\x00\x01", b"01")
_AS_FLAGS = bytes.maketrans(b"01", b"\x00\x01")


def _container_pins(launcher: str, job) -> List[Allowed]:
    """The versions a SageMaker estimator's container holds (``transformers_version="4.26"``:
    transformers 4.26.x), as the pins of the run of the script it launches."""
    from ..workspace.versions import parse_spec

    where = f"the SageMaker estimator of {os.path.basename(launcher)} (line {job.span.line}), which runs it"
    return [parse_spec(dist, f"=={version}.*", where) for dist, version in job.versions]


def _settled(found: Targets, dist: str, allowed: Allowed) -> bool:
    """Whether what the code imports cannot narrow the versions of ``dist`` a file targets: the
    configuration sets them, or the file is that library's own code (its own version)."""
    return allowed.source == "configuration" or (found.library_code is not None and found.library_code.dist == dist)


class Project:
    def __init__(
        self,
        modules: Iterable[ModuleFacts],
        import_roots: Optional[Callable[[ModuleFacts], Sequence[str]]] = None,
        configs: Optional[ConfigFiles] = None,
        summarise: Optional[Callable[[List[ModuleFacts]], None]] = None,
        asked: Optional[FactsAsked] = None,
    ) -> None:
        """``import_roots(module)``: the folders, nearest first, where an import written in
        ``module`` finds local modules (default: only the folder its own name is relative to);
        ``configs``: how config files named by a literal path are read (default: from disk);
        ``summarise(modules)``: works out the DEFERRED call summaries of those modules at once
        (the engine's, in its worker processes), before the join reads them; ``asked``: where
        what the join asks of the facts read by question is noted (``FactsAsked``: the ledger's)."""
        self.modules: List[ModuleFacts] = [m for m in modules]
        self.asked = asked if asked is not None else FactsAsked()
        self._import_roots = import_roots or (lambda m: (m.root,))
        self._index()
        self.symbols = ProjectSymbols(self.module_named, self.import_roots_of, self.module_in, self.asked, self.may_name_module)
        # The config files of the run (YAML/JSON/TOML at literal paths), each read once.
        self.configs = configs or ConfigFiles()
        # The launch scripts and READMEs beside the code (the hardware they state).
        self.shipped = ShippedFiles(self.configs.cwd)
        # Parameters become what their callers pass (interproc.py); rules see the result.
        self.calls = CallGraphValues(self.modules, self.symbols, self.configs, self.shipped, self.asked)
        # path → (stage, exception) of a module whose own step of the join raised (a bug of
        # ours): the engine reports it (MP003) and judges it no further; the others still join
        # with its facts as extracted
        self.failed: Dict[str, Tuple[str, Exception]] = {}
        if summarise is not None and any(m.summaries_deferred for m in self.modules):
            self.calls.prefetch_summaries(summarise)
        resolved = [self._resolved(m) for m in self.modules]
        if any(r is not m for r, m in zip(resolved, self.modules)):
            self.modules = resolved
            self._index()
        # what the project declares and launches (console scripts, shell and job files)
        self.declared = DeclaredEntries()
        programs, entry_functions = programs_and_entries(self.modules, self.symbols, self.declared)
        self.callgraph = CallGraph(self.modules, self.symbols, programs, entry_functions)
        # Which objects are trained across functions (trained.py): the weights sites' answers.
        self.trained = TrainedJoin(self.modules, self.symbols)
        # The library versions each file targets (versions.py); the engine gives the one that
        # knows the configuration and the installed versions, and the notebooks' `%pip` lines.
        self.versions = VersionResolver()
        self.notebook_lines: Dict[str, Tuple[str, ...]] = {}
        # each notebook's IPython lines with their rows, and the lines in force where the rules
        # judge one part of a notebook whose later cells install other versions (install_parts)
        self.notebook_rows: Dict[str, Tuple[Tuple[int, str], ...]] = {}
        self._installed_so_far: Dict[str, Tuple[str, ...]] = {}
        # the file on disk a module a notebook writes (`%%writefile`) becomes: what commands run
        self.written_files: Dict[str, str] = {}
        # the Python each notebook's kernel recorded (`language_info.version`): the run it was
        # written in, which caps the libraries that Python could install (transformers 4.30 on 3.7)
        self.kernels: Dict[str, str] = {}
        self._targets: Dict[Tuple[str, Optional[Tuple[str, ...]]], Targets] = {}  # (path, the part's lines)
        self._launches: Optional[Dict[str, List[Allowed]]] = None  # script → what its launchers pin
        self._pins_as_importer: Dict[str, List[Allowed]] = {}  # script → what it pins for its imports

    def _index(self) -> None:
        self.by_path: Dict[str, ModuleFacts] = {m.path: m for m in self.modules}
        self._by_name: Dict[str, Dict[str, ModuleFacts]] = {}  # name -> root -> module
        # a package `pkg/a/__init__.py` wins over a module `pkg/a.py`, as in Python
        for m in sorted(self.modules, key=lambda m: (not m.is_package, m.path)):
            if m.module:
                self._by_name.setdefault(m.module, {}).setdefault(m.root, m)
        self._importers: Optional[Dict[str, List[ModuleFacts]]] = None
        self._gates: Dict[Tuple[str, str], Optional[Tuple[Allowed, str]]] = {}
        self._importers_memo: Dict[str, Set[str]] = {}
        self._importer_sets: Dict[FrozenSet[str], Set[str]] = {}  # equal answers of _walk_importers: one set
        self._imports: Dict[str, List[ModuleFacts]] = {}
        self._closure: Dict[str, int] = {}  # path → its unit, as bits of module numbers (see _unit_bits)
        self._numbers: Dict[str, int] = {}  # path → its module number (the bit it is in a unit)
        self._numbered: List[str] = []  # module number → path
        self._imported_path_map: Optional[Dict[str, Tuple[str, ...]]] = None
        self._roots: Optional[Dict[str, Tuple[str, ...]]] = None
        self._memo: Dict[Hashable, Any] = {}
        self._by_file: Optional[Dict[str, ModuleFacts]] = None
        self._at: Dict[str, Optional[ModuleFacts]] = {}  # a path as given → module_at's answer
        self._under_root: Dict[str, Dict[str, ModuleFacts]] = {}  # an import root → _files_under
        self._absolute_roots: Dict[str, str] = {}  # an import root → its absolute spelling
        self._pinning: Optional[Dict[str, List[str]]] = None  # see _pinning_importers
        # (name, the importer's import roots) → module_named's answer: the same imports are
        # looked up from every module and rule (10,000 times for the slice, each joining
        # paths), and most modules of a tree share their roots
        self._named: Dict[Tuple[str, Tuple[str, ...]], Optional[ModuleFacts]] = {}
        self._import_roots_by_module: Dict[Tuple[str, str], Tuple[str, ...]] = {}  # (path, root) → import roots
        self._scripts: Optional[Set[str]] = None  # see _script_folders
        self._spellings: Optional[Set[str]] = None  # see may_name_module

    def _resolved(self, module: ModuleFacts) -> ModuleFacts:
        """``module`` with its parameters substituted and its extractors' join steps run; as it
        was, and in :attr:`failed`, when either raises."""
        try:
            return self._join_sections(self.calls.resolve_facts(module))
        except Exception as exc:
            self.failed[module.path] = ("joining the project", exc)
            return module

    def _join_sections(self, module: ModuleFacts) -> ModuleFacts:
        """Each extractor's own join step (``join(module, symbols)``), where its facts need the
        project's classes (a call of a project subclass of ``GradScaler`` is a scaler)."""
        if not module.sections:  # not analysed: no extractor (nor LibCST) to load
            return module
        from ..facts.extract import extractors

        for extractor in extractors():
            hook = getattr(extractor, "join", None)
            if hook is not None and module.sections.get(extractor.SECTION):
                module = hook(module, self.symbols)
        return module

    @staticmethod
    def run_scope(module: ModuleFacts, scope: str, line: int) -> str:
        """The scope a site of ``module`` runs under in the call graph: its own, except for
        module-level code inside ``if __name__ == "__main__":``, which runs only when the
        module is the script (``<module>.__main__``)."""
        if module.main_lines and scope == module.module and in_main_block(module.main_lines, line):
            return main_scope(scope)
        return scope

    # --- side files ----------------------------------------------------------------
    def side_files(self) -> Tuple[str, ...]:
        """Every file on disk the join and the rules looked for through :attr:`configs` (config
        files, DeepSpeed JSONs, accelerate configs), found or not: what a cached result of this
        run also depends on. Complete only once the rules have run: they read files too."""
        return tuple(sorted({*self.configs.looked_for(), *self.versions.looked_for(), *self.shipped.looked_for(), *self.declared.looked_for()}))

    def targets_of(self, module: ModuleFacts) -> Targets:
        """The library versions ``module`` targets (its configuration, its own
        ``require_version`` and ``%pip install`` lines, its project's requirements); in a
        notebook judged part by part, those of the part being judged (:meth:`installed_until`)."""
        key = (module.path, self._installed_so_far.get(module.path))
        found = self._targets.get(key)
        if found is None:
            found = self._ended_by_removed_imports(module, self.targets_before_removals(module))
            self._targets[key] = found
        return found

    def targets_before_removals(self, module: ModuleFacts) -> Targets:
        """:meth:`targets_of` before the removed modules ``module`` must import end them: what
        the import of such a module is judged on (its own removal is what it is told of)."""
        lines = self._installed_so_far.get(module.path)
        return self.memo(("targets before removals", module.path, lines), lambda: self._narrowed_by_importers(module, self.versions.targets(
            module.path, (*module.requirements, *self._kernel_requirements(module)),
            self.notebook_lines.get(module.path, ()) if lines is None else lines,
            self._run_requirements(module),
        )))

    def install_parts(self, module: ModuleFacts) -> Tuple[Tuple[int, int, Tuple[str, ...]], ...]:
        """``(first row, last row, IPython lines in force)`` of each part of a notebook whose
        later cells install other versions of a library it had installed
        (``versions.install_segments``: a pin in the first cell, ``--upgrade`` in the 47th): the
        rules judge each part on what it runs with. Empty for every other file."""
        from ..workspace.versions import install_segments

        rows = self.notebook_rows.get(module.path)
        if not rows:
            return ()
        parts = self.memo(("install parts", module.path), lambda: install_segments(rows, os.path.basename(module.path)))
        ends = [row - 1 for row, _ in parts[1:]] + [None]
        return tuple((row, end, lines) for (row, lines), end in zip(parts, ends))

    @contextlib.contextmanager
    def installed_until(self, module: ModuleFacts, lines: Tuple[str, ...]):
        """Within the block, ``module``'s targets are those of its IPython ``lines`` (one part
        of :meth:`install_parts`), not of all of them."""
        self._installed_so_far[module.path] = lines
        try:
            yield
        finally:
            del self._installed_so_far[module.path]

    def _kernel_requirements(self, module: ModuleFacts) -> Tuple[Allowed, ...]:
        """``python==3.7.12`` where ``module`` is a notebook whose kernel recorded that Python."""
        from ..workspace.versions import parse_spec

        found = self.kernels.get(module.path)
        if found is None:
            return ()
        where = f"the metadata of {os.path.basename(module.path)} (the Python its kernel last ran)"
        return (parse_spec("python", f"=={found}", where, f"Python {found}"),)

    def _ended_by_removed_imports(self, module: ModuleFacts, found: Targets) -> Targets:
        """``found`` ended before the release that removed a module ``module`` must import
        (``removed_imports.py``: ``from torch._six import inf`` in it, or in a module of the
        tree it imports at its top level): it cannot run on that release or later. A fallback
        (nothing stated: the installed or newest version) becomes the versions before it; a
        stated range is cut there, unless nothing of it is left (the pins are what is
        installed). The configuration's versions stay as they are."""
        ends = self.memo("removed imports", lambda: removal_ceilings(self.modules, self.module_named)).get(module.path)
        if not ends:
            return found
        versions = dict(found.versions)
        for dist, (row, where) in ends.items():
            allowed = versions.get(dist)
            if allowed is None or _settled(found, dist, allowed):
                continue
            if not allowed.fallback and not allowed.some_at_least(row.removed_in):
                continue  # the stated versions end before the removal: it says nothing more
            ceiling = Allowed(dist, high=row.removed_in, spec=f"{dist}<{version_text(row.removed_in)}", source="the code")
            gone = f"{where}, is gone from {dist} {version_text(row.removed_in)}"
            if allowed.fallback:
                versions[dist] = dataclasses.replace(ceiling, note=gone)
                continue
            both = allowed.intersect(ceiling)
            if not both.is_empty:
                versions[dist] = dataclasses.replace(both, note=f"{allowed.where()}; {gone}")
        return dataclasses.replace(found, versions=versions)

    # --- modules imported only under a version test ----------------------------------
    def _narrowed_by_importers(self, module: ModuleFacts, found: Targets) -> Targets:
        """``found`` narrowed to the versions under which ``module`` is imported at all: where
        every importer imports it only under a version test (``if not at_least("transformers",
        "4.35"): from .legacy import OldTrainer``), it runs only on the versions those tests
        admit (all importers: any of them). The configuration's versions stay as they are."""
        if not self.memo("version gates anywhere", lambda: any(m.section("version_gates") for m in self.modules)):
            return found  # (asked once per join, not once per module: each question walked every module)
        versions = dict(found.versions)
        changed = False
        for dist, allowed in found.versions.items():
            if _settled(found, dist, allowed):
                continue
            gate = self._import_gate(module, dist, set())
            if gate is None:
                continue
            both = allowed.intersect(gate[0]) if not allowed.newest else gate[0]
            if both.is_empty:
                continue  # the pins and the gate contradict: the pins are what is installed
            where = f"{gate[0].described} where {gate[1]} imports it"
            versions[dist] = dataclasses.replace(
                both, spec=allowed.described if not allowed.newest else gate[0].described,
                source=where if allowed.fallback else f"{allowed.source}; {where}",
            )
            changed = True
        return dataclasses.replace(found, versions=versions) if changed else found

    def _import_gate(self, module: ModuleFacts, dist: str, seen: Set[str]) -> Optional[Tuple[Allowed, str]]:
        """The versions of ``dist`` under which any importer imports ``module`` (and, in turn,
        is imported itself), with the importer's file; None when one imports it without a test
        of ``dist``, or nothing imports it (a script, a public module).

        Each module's answer is worked out once per library: a package that hundreds of
        scripts import is reached along every chain, and walking each chain again made this
        exponential in the depth of the import graph. A module met again while its own answer
        is being worked out (an import cycle) answers None, as an importer without a test."""
        key = (module.path, dist)
        if key in self._gates:
            return self._gates[key]
        if module.path in seen or len(seen) > 32:
            return None
        seen.add(module.path)
        try:
            found = self._gate_over_importers(module, dist, seen)
        finally:
            seen.discard(module.path)
        self._gates[key] = found
        return found

    def _gate_over_importers(self, module: ModuleFacts, dist: str, seen: Set[str]) -> Optional[Tuple[Allowed, str]]:
        importers = [m for m in self.direct_importers(module) if m.path != module.path]
        if not importers:
            return None
        out: Optional[Allowed] = None
        shown = ""
        for importer in importers:
            own = self._gate_in(importer, module, dist)
            if own is None:
                return None
            above = self._import_gate(importer, dist, seen)
            if own is True:  # imported freely: only what its importer is imported under
                if above is None:
                    return None
                own = above[0]
            elif above is not None:
                both = own.intersect(above[0])
                own = both if not both.is_empty else own
            out = own if out is None else out.hull(own)
            shown = shown or os.path.basename(importer.path)
        return (out, shown) if out is not None else None

    def _gate_in(self, importer: ModuleFacts, module: ModuleFacts, dist: str):
        """How ``importer`` imports ``module``: the versions of ``dist`` its version tests admit
        (an ``Allowed``), True where it imports it with no version test at all, None where its
        tests say nothing of ``dist`` (or where they cannot be read as a range)."""
        section = importer.section("version_gates")
        gates = section.get("imports", ()) if section else ()
        free = set(section.get("free", ())) if section else set()
        mine = [g for g in gates if any(self._names(importer, name, module) for name in g.modules)]
        if not mine:
            return True
        if any(self._names(importer, name, module) for name in free):
            return True
        out: Optional[Allowed] = None
        for gate in mine:
            admitted = None
            for test in (*gate.tests, *self.helper_tests(importer, gate.helpers)):
                if test.dist == dist and test.allowed is not None:
                    admitted = test.allowed if admitted is None else admitted.intersect(test.allowed)
            if admitted is None:
                return None
            out = admitted if out is None else out.hull(admitted)
        return out

    def _names(self, importer: ModuleFacts, name: str, module: ModuleFacts) -> bool:
        found = self.module_named(name, importer)
        if found is None and "." in name:
            found = self.module_named(name.rsplit(".", 1)[0], importer)
        return found is not None and found.path == module.path

    def helper_tests(self, importer: ModuleFacts, helpers) -> list:
        """Calls of another module's version test (its ``version_gates`` predicates), read as
        the tests they are with their literal arguments."""
        from ..semantic.version_tests import _applied

        out = []
        for helper in helpers:
            where, canonical = self.symbols.resolve(helper.callee, importer)
            section = where.section("version_gates") if where is not None else None
            shapes = dict(section.get("predicates", ())) if section else {}
            shape = shapes.get(canonical)
            if shape is not None:
                found = _applied(shape[0], shape[1], list(helper.args), helper.positive)
                if found is not None:
                    out.append(found)
        return out

    def _run_requirements(self, module: ModuleFacts) -> List["Allowed"]:
        """What the notebooks and shell launchers that run ``module`` install: a notebook whose
        ``%pip install`` lines pin versions and whose ``!python``/``!torchrun``/``!accelerate
        launch`` line runs the module, a ``run.sh`` / SLURM script that does the same
        (``shipped.pins_for``), or one that runs a script importing it (any of those runs,
        when several do)."""
        from ..workspace.versions import any_of, launched_scripts, pip_requirements

        if self._launches is None:
            self._launches = {}
            for path, lines in self.notebook_lines.items():
                name = os.path.basename(path)
                pins = pip_requirements(lines, name)
                if not pins:
                    continue
                pins = [dataclasses.replace(a, source=f"{a.source}, which runs it") for a in pins]
                for script in launched_scripts(lines, os.path.dirname(os.path.abspath(path))):
                    self._launches.setdefault(os.path.normcase(script), []).extend(pins)
            for launcher in self.modules:  # a SageMaker estimator's container (`extractors/sagemaker.py`)
                for job in launcher.section("estimators"):
                    script = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(launcher.path)), job.script))
                    self._launches.setdefault(os.path.normcase(script), []).extend(_container_pins(launcher.path, job))
        path = self.written_files.get(module.path, module.path)  # `!python train.py` after `%%writefile train.py`
        own = self._launches.get(os.path.normcase(os.path.abspath(path)), []) + self.shipped.pins_for(path)
        if own:
            return any_of(own)
        found = []
        for path in self._pinning_importers().get(module.path, ()):
            found.extend(self._importer_pins(path))
        return any_of(found)

    def _pinning_importers(self) -> Dict[str, List[str]]:
        """path → the scripts that import it, directly or through others, and pin versions
        (:meth:`_importer_pins`), in path order. Worked out once, forward from the few scripts
        that pin anything along their units: walking back from every module to all its
        importers (a library module of diffusers has a thousand) was quadratic in the project."""
        if self._pinning is None:
            found: Dict[str, List[str]] = {}
            for script in sorted(self.modules, key=lambda m: m.path):
                if self._importer_pins(script.path):
                    for path in self.unit(script):
                        if path != script.path:
                            found.setdefault(path, []).append(script.path)
            self._pinning = found
        return self._pinning

    def _importer_pins(self, path: str) -> List[Allowed]:
        """What the script at ``path`` pins for the modules it imports: its launchers' pins and
        its own ``require_version`` / ``check_min_version``. Read once per script: a library
        module imported by hundreds of scripts asks each of them."""
        found = self._pins_as_importer.get(path)
        if found is None:
            found = [*self._launches.get(os.path.normcase(os.path.abspath(path)), ()), *self.shipped.pins_for(path)]
            script = self.module_at(path)
            found.extend(  # the script that imports it: its own require_version / check_min_version
                dataclasses.replace(a, source=f"{a.source}, which imports it") for a in (script.requirements if script else ())
            )
            self._pins_as_importer[path] = found
        return found

    def module_at(self, path: str) -> Optional[ModuleFacts]:
        """The linted module whose file is ``path`` (any spelling of it: relative, absolute)."""
        if self._by_file is None:
            self._by_file = {os.path.normcase(os.path.abspath(m.path)): m for m in self.modules}
            self._at = {}
        if path not in self._at:  # each spelling made absolute once (module_named asks often)
            self._at[path] = self._by_file.get(os.path.normcase(os.path.abspath(path)))
        return self._at[path]

    # --- modules and imports ---------------------------------------------------
    def module_named(self, name: str, near: Optional[ModuleFacts] = None) -> Optional[ModuleFacts]:
        """The linted module ``name`` that an import written in ``near`` finds: the first of
        ``near``'s import roots that holds one. Without ``near`` nothing is found: which
        module a name means depends on where it is imported."""
        if near is None:
            return None
        return self.module_in(name, self.import_roots_of(near))  # the answer depends on the importer only through its roots

    def module_in(self, name: str, roots: Tuple[str, ...]) -> Optional[ModuleFacts]:
        """:meth:`module_named` for an importer whose import roots are ``roots``."""
        key = (name, roots)
        found = self._named.get(key, self)
        if found is self:
            found = self._named[key] = self._module_named(name, roots)
        return found

    def import_roots_of(self, module: ModuleFacts) -> Tuple[str, ...]:
        """The folders, nearest first, where an import written in ``module`` finds local
        modules: all that :meth:`module_named` (and so a name's resolution) reads of the importer."""
        roots = self._import_roots_by_module.get((module.path, module.root))
        if roots is None:
            roots = tuple(self._import_roots(module))
            own = os.path.dirname(os.path.abspath(module.path))
            if own not in roots and own in self._script_folders():
                roots += (own,)
            self._import_roots_by_module[(module.path, module.root)] = roots
        return roots

    def _script_folders(self) -> Set[str]:
        """The folders of the scripts of the tree (a module with a ``__main__`` block, or whose
        top level does more than bind names): run by its path (``python finetune/train.py``), a
        script in a package folder has its own folder first on ``sys.path``, so it and the
        modules beside it import their siblings by their own names (``from trainer import X``),
        which no folder its module name is relative to holds. Such a folder is the last of their
        import roots (:meth:`import_roots_of`): a name the folders before it hold means theirs."""
        if self._scripts is None:
            self._scripts = {os.path.dirname(os.path.abspath(m.path)) for m in self.modules if m.main_lines or m.acts}
        return self._scripts

    def _module_named(self, name: str, roots: Tuple[str, ...]) -> Optional[ModuleFacts]:
        by_root = self._by_name.get(name) or {}
        for root in roots:
            found = by_root.get(root)
            if found is not None:
                return found
        # an implicit namespace package (PEP 420): `from component.argument import X` where
        # `component/` has no `__init__.py` still imports `component/argument.py` when the
        # folder above it is on the path (a script's own folder always is)
        parts = name.split(".")
        scripts = self._script_folders() if len(parts) == 1 and name.isidentifier() else ()
        if scripts:
            # a sibling of a script in a package folder (`from trainer import X`), by its file
            for root in roots:
                if root in scripts:
                    found = self._files_under(root).get(os.path.normcase(name))
                    if found is not None:
                        return found
        if len(parts) > 1:
            plain = all(map(str.isidentifier, parts))
            if plain:  # identifiers: looked up in each root's table of the files under it
                dotted = os.path.normcase(name)
                for root in roots:
                    found = self._files_under(root).get(dotted)
                    if found is not None:
                        return found
                return None
            for root in roots:
                for candidate in (os.path.join(root, *parts) + ".py", os.path.join(root, *parts, "__init__.py")):
                    found = self.module_at(candidate)
                    if found is not None:
                        return found
        return None

    def may_name_module(self, name: str) -> bool:
        """Whether the dotted name of ASCII identifiers ``name`` may name a linted module from
        some importer (:meth:`module_in`): False where it is neither a module's name nor the
        tail of the path of a linted file (``a.b`` of ``.../a/b.py`` or ``.../a/b/__init__.py``),
        as every module found under an import root is (:meth:`_files_under`). What a name's
        resolution asks before looking each prefix up (``ProjectSymbols``)."""
        spellings = self._spellings
        if spellings is None:
            spellings = self._spellings = self._module_spellings()
        return name in spellings or (_CASE_FOLDS and os.path.normcase(name) in spellings)

    def _module_spellings(self) -> Set[str]:
        """Every module's name, and every tail of each linted file's path as a dotted name
        (case-normalised as :meth:`_files_under` spells them), its ``__init__`` dropped too."""
        found = set(self._by_name)
        for module in self.modules:
            path = os.path.normcase(os.path.abspath(module.path))
            if not path.endswith(".py"):
                continue
            parts = path[:-3].split(os.sep)
            if os.altsep:
                parts = [p for part in parts for p in part.split(os.altsep)]
            for tail in (parts, parts[:-1] if parts[-1] == "__init__" else ()):
                for i in range(len(tail)):
                    found.add(".".join(tail[i:]))
        return found

    def _files_under(self, root: str) -> Dict[str, ModuleFacts]:
        """The linted ``.py`` files under ``root`` by the dotted name a plain import spells them
        with (``a/b.py`` and ``a/b/__init__.py`` as ``a.b``, the module first, as an import
        finds it; ``a.b.__init__`` too), their parts case-normalised: made once per root, so
        that a name is looked up, not joined onto the root (the join asks for every prefix of
        every qualified name it resolves). Only paths whose every part is an identifier: no
        other is spelled by a plain dotted name."""
        found = self._under_root.get(root)
        if found is None:
            if self._by_file is None:
                self.module_at(root)  # builds _by_file
            base = os.path.join(self._absolute_root(root), "")
            modules: Dict[str, ModuleFacts] = {}
            packages: Dict[str, ModuleFacts] = {}
            for path, module in self._by_file.items():
                if not path.startswith(base) or not path.endswith(".py"):
                    continue
                parts = path[len(base):-3].split(os.sep)
                if os.altsep:
                    parts = [p for part in parts for p in part.split(os.altsep)]
                if not all(part.isidentifier() for part in parts):
                    continue
                modules[".".join(parts)] = module  # `base/a/b.py` is `a.b`
                if len(parts) > 1 and parts[-1] == "__init__":
                    packages[".".join(parts[:-1])] = module  # `base/a/b/__init__.py` is `a.b` too
            found = self._under_root[root] = {**packages, **modules}  # a module `a/b.py` wins
        return found

    def _absolute_root(self, root: str) -> str:
        """``root`` as :meth:`module_at` spells paths (absolute, case-normalised), made once."""
        found = self._absolute_roots.get(root)
        if found is None:
            found = self._absolute_roots[root] = os.path.normcase(os.path.abspath(root))
        return found

    def imported_modules(self, module: ModuleFacts) -> List[ModuleFacts]:
        """The linted modules that ``module`` imports directly."""
        if module.path not in self._imports:
            found = {}
            for name in module.imports:
                target = self._import_target(name, module)
                if target is not None and target.path != module.path:
                    found[target.path] = target
            self._imports[module.path] = list(found.values())
        return self._imports[module.path]

    def _import_target(self, name: str, module: ModuleFacts) -> Optional[ModuleFacts]:
        """The linted module an import name of ``module`` refers to: ``pkg.mod``, or for
        ``from pkg.mod import func`` (named ``pkg.mod.func``) its module."""
        target = self.module_named(name, module)
        if target is None and "." in name:
            target = self.module_named(name.rsplit(".", 1)[0], module)
        return target

    def executed_importers_of(self, module: ModuleFacts) -> Set[str]:
        """Paths of the modules whose import of ``module``, directly or through others, runs
        it: the import graph walked back without the imports made only for a type checker
        (``ModuleFacts.type_checking_imports``: a lazy package ``__init__`` names every
        submodule under ``if TYPE_CHECKING:`` and runs none of them)."""
        return self.memo(("executed-importers", module.path), lambda: self._shared(self._walk_importers(module, self._runs_import)))

    def _runs_import(self, importer: ModuleFacts, target: ModuleFacts) -> bool:
        """Whether ``importer`` imports ``target`` other than only for a type checker."""
        typed = set(importer.type_checking_imports)
        if not typed:
            return True
        return any(
            (found := self._import_target(name, importer)) is not None and found.path == target.path
            for name in importer.imports
            if name not in typed
        )

    def unit(self, module: ModuleFacts) -> Set[str]:
        """Paths of ``module`` and every linted module it imports, transitively."""
        return self._paths_of(self._unit_bits(module))

    def in_unit(self, entry: ModuleFacts, path: str) -> bool:
        """Whether ``path`` is in ``entry``'s unit (``path in self.unit(entry)``, without the set)."""
        bits = self._unit_bits(entry)  # first: making the unit numbers its modules
        number = self._numbers.get(path)
        return number is not None and bool(bits >> number & 1)

    def _unit_bits(self, module: ModuleFacts) -> int:
        """:meth:`unit`, kept as an integer whose bit ``n`` says whether the module numbered
        ``n`` is in it. A package's scripts each reach most of it: transformers has 355 units of
        about 2,500 paths, and as sets (131 kB each: a set's table is kept under two-thirds
        full) they were 44 MB of a run's peak (#23); as bits, 360 bytes each."""
        bits = self._closure.get(module.path)
        if bits is None:
            # breadth first, a level at a time, with set operations
            imported = self._imported_paths()
            seen = {module.path}
            level = {d.path for d in self.imported_modules(module)} - seen  # (a module outside the project too)
            seen |= level
            while level:
                reached = set()
                for path in level:
                    reached.update(imported[path])
                level = reached - seen
                seen |= level
            flags = bytearray(len(self._numbered) + len(seen))
            for path in seen:
                flags[self._number(path)] = 1
            bits = self._closure[module.path] = int(flags.translate(_AS_DIGITS)[::-1], 2)
        return bits

    def _number(self, path: str) -> int:
        number = self._numbers.get(path)
        if number is None:
            number = self._numbers[path] = len(self._numbered)
            self._numbered.append(path)
        return number

    def _paths_of(self, bits: int) -> Set[str]:
        """The paths of the modules whose bits are set in ``bits``."""
        return set(compress(self._numbered, bin(bits)[:1:-1].encode().translate(_AS_FLAGS)))

    def _shared(self, paths: Set[str]) -> Set[str]:
        """``paths``, or the set equal to it that an earlier walk over importers found: in a
        package whose modules import each other, most modules have the same importers
        (transformers: 130 answers of about 2,800 paths, 5 of them different). The sets are
        only read."""
        return self._importer_sets.setdefault(frozenset(paths), paths)

    def _imported_paths(self) -> Dict[str, Tuple[str, ...]]:
        """path → the paths of the linted modules it imports directly (:meth:`imported_modules`)."""
        if self._imported_path_map is None:
            self._imported_path_map = {m.path: tuple(d.path for d in self.imported_modules(m)) for m in self.modules}
        return self._imported_path_map

    def units_containing(self, module: ModuleFacts) -> List[ModuleFacts]:
        """Entry modules whose unit includes ``module``: itself first, then the others in
        the project's order (every module that imports it, directly or through others)."""
        reach = self.importers_of(module)
        return [module, *(m for m in self.modules if m.path in reach and m.path != module.path)]

    def unit_view(self, entry: ModuleFacts) -> "UnitView":
        """``entry``'s unit as a container of paths, answered by walking the import graph back
        from each path asked about, without listing the unit."""
        return UnitView(self, entry.path)

    def importers_of(self, module: ModuleFacts) -> Set[str]:
        """Paths of the modules that import ``module``, directly or through others: walked
        back along the import graph, without the unit of every module."""
        found = self._importers_memo.get(module.path)
        if found is None:
            group = self._import_group_of().get(module.path)
            if group is None:  # not a module of the project: its own walk
                found = self._shared(self._walk_importers(module))
            else:
                # every module of a group that imports itself round a cycle has the same importers
                # (the group's, itself among them), and a module alone is its own group: one walk
                # per group, not per module (transformers: a few walks instead of 130)
                found = self.memo(("importers of group", group), lambda: self._shared(self._walk_importers(module)))
            self._importers_memo[module.path] = found
        return found

    def _import_group_of(self) -> Dict[str, int]:
        """path → its strongly connected group of the import graph (:meth:`_import_groups`), made once."""
        return self.memo("import groups", self._import_groups)

    def direct_importers(self, module: ModuleFacts) -> List[ModuleFacts]:
        """The linted modules that import ``module`` directly, in the project's order."""
        if self._importers is None:
            importers: Dict[str, List[ModuleFacts]] = {}
            for m in self.modules:
                for dep in self.imported_modules(m):
                    importers.setdefault(dep.path, []).append(m)
            self._importers = importers
        return self._importers.get(module.path, [])

    def _walk_importers(self, module: ModuleFacts, runs=None) -> Set[str]:
        """The importers of ``module``, directly or through others; with ``runs(importer,
        imported)``, only along the imports it accepts."""
        seen: Set[str] = set()
        stack = [module]
        while stack:
            target = stack.pop()
            for m in self.direct_importers(target):
                if m.path not in seen and (runs is None or runs(m, target)):
                    seen.add(m.path)
                    stack.append(m)
        return seen

    def unit_modules(self, entry: ModuleFacts) -> List[ModuleFacts]:
        return [self.by_path[p] for p in sorted(self.unit(entry)) if p in self.by_path]

    def joined_modules(self, module: ModuleFacts, *sections: str) -> List[ModuleFacts]:
        """``module`` and every module that shares a unit with it (the union of the units that
        contain it), once each in path order; with ``sections``, only those that hold one of
        them.

        Worked out from the units of the *root* entries alone: every entry is imported, through
        some chain, from a group of modules nothing else imports (a script; files that import
        each other in a cycle), and its unit lies inside that root's. So the union is that of
        the few root units containing ``module``, and modules under the same roots share one
        answer: in a package where everything imports everything, one list, not one per module.
        """
        roots = self._roots_containing().get(module.path, ())

        def compute() -> List[ModuleFacts]:
            # a module lies in a root's unit exactly when that root is one of its own roots: the
            # union is the modules whose roots meet these, found class by class (the modules
            # under the same roots), without making any root's unit
            classes = self._root_classes()
            held = {id(paths): paths for root in roots for paths in classes[root]}
            if sections:
                holding = self._holding(sections)
                found = [p for paths in held.values() for p in paths if p in holding]
            else:
                found = [p for paths in held.values() for p in paths]
            return [self.by_path[p] for p in sorted(found) if p in self.by_path]

        return self.memo(("joined", roots, sections), compute)

    def _root_classes(self) -> Dict[str, List[List[str]]]:
        """root → the classes of modules (as lists of paths) whose roots include it, each class
        the modules under one tuple of roots (:meth:`_roots_containing`)."""

        def compute() -> Dict[str, List[List[str]]]:
            under: Dict[Tuple[str, ...], List[str]] = {}
            for path, roots in self._roots_containing().items():
                under.setdefault(roots, []).append(path)
            classes: Dict[str, List[List[str]]] = {}
            for roots, paths in under.items():
                for root in roots:
                    classes.setdefault(root, []).append(paths)
            return classes

        return self.memo("root classes", compute)

    def _holding(self, sections: Tuple[str, ...]) -> Set[str]:
        """The paths of the modules that hold one of ``sections`` (non-empty)."""
        return self.memo(("holding", sections), lambda: {m.path for m in self.modules if any(m.section(s) for s in sections)})

    def memo(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """A project-wide answer a rule works out once per run (``compute()``), under ``key``."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def entries_among(self, module: ModuleFacts, candidates: Iterable[ModuleFacts]) -> List[ModuleFacts]:
        """Those of ``candidates`` whose unit holds ``module`` (itself included when it is one)."""
        return [c for c in candidates if c.path == module.path or self.in_unit(c, module.path)]

    def roots_of(self, module: ModuleFacts) -> List[ModuleFacts]:
        """The root entries whose unit holds ``module`` (scripts nothing imports; see
        :meth:`joined_modules`): the runs it is part of."""
        return [self.by_path[p] for p in self._roots_containing().get(module.path, ()) if p in self.by_path]

    def root_paths(self, module: ModuleFacts) -> Tuple[str, ...]:
        """The paths of :meth:`roots_of`, without a list of modules made each time: modules
        under the same roots share the tuple (a memo key for what their roots answer)."""
        return self._roots_containing().get(module.path, ())

    def joined_imports(self, module: ModuleFacts) -> Set[str]:
        """Every name imported by ``module`` or a module joined with it."""
        roots = self._roots_containing().get(module.path, ())
        return self.memo(("imports", roots), lambda: {name for m in self.joined_modules(module) for name in m.imports})

    def always_imported(self, module: ModuleFacts) -> Set[str]:
        """The names of :meth:`joined_imports` that some module of the run imports outside an
        ``if`` (``ModuleFacts.conditional_imports``): imported in every run of it. What a
        patching library does (unsloth makes TRL's trainers take ``tokenizer=``) holds only
        where it is imported: an import under ``if args.use_unsloth:`` patches only the runs
        that pass the flag."""
        roots = self._roots_containing().get(module.path, ())
        found = self.memo(("always imported", roots), lambda: {
            name for m in self.joined_modules(module) for name in m.imports if name not in m.conditional_imports
        })
        pieces = self._session_pieces(module)
        return found | {name for m in pieces for name in m.imports if name not in m.conditional_imports} if pieces else found

    def _session_pieces(self, module: ModuleFacts) -> List[ModuleFacts]:
        """For a piece of a session (a file whose top level reads names it never binds:
        ``ModuleFacts.session_names``), the files of its folder whose top level binds some of
        them, where together they bind them all: the pieces run before it in the same process
        (a notebook's steps kept as files, run one after another in one kernel), whose imports
        (a patching library: unsloth) hold in its run too."""
        wanted = frozenset(module.session_names)
        if not wanted:
            return []

        def compute() -> List[ModuleFacts]:
            by_folder = self.memo("modules by folder", self._modules_by_folder)
            bound = [(m, self.asked.binds_at_top(m, wanted)) for m in by_folder.get(os.path.dirname(module.path), ()) if m is not module]
            pieces = [(m, names) for m, names in bound if names]
            return [m for m, _ in pieces] if wanted <= set().union(*(names for _, names in pieces)) else []

        return self.memo(("session pieces", module.path), compute)

    def _modules_by_folder(self) -> Dict[str, List[ModuleFacts]]:
        out: Dict[str, List[ModuleFacts]] = {}
        for m in self.modules:
            out.setdefault(os.path.dirname(m.path), []).append(m)
        return out

    def _roots_containing(self) -> Dict[str, Tuple[str, ...]]:
        """path → the root entries whose unit holds it (a root: one module, the first by path,
        of each group of modules that import each other and that no other module imports)."""
        if self._roots is None:
            groups = self._import_group_of()
            below = self._groups_below()
            waiting: Dict[int, int] = {}  # group → how many groups import it
            for deps in below.values():
                for theirs in deps:
                    waiting[theirs] = waiting.get(theirs, 0) + 1
            firsts: Dict[int, str] = {}
            for m in sorted(self.modules, key=lambda m: m.path):
                firsts.setdefault(groups[m.path], m.path)
            roots = [path for group, path in sorted(firsts.items(), key=lambda t: t[1]) if group not in waiting]
            # which roots reach each group, as bits of the roots' places, passed down the acyclic
            # graph of the groups from the roots (the groups nothing imports) in topological
            # order: no root's unit is listed path by path (350 units of 2,500 paths for
            # transformers, #23), nor made at all before a rule asks for it
            place = {groups[root]: 1 << i for i, root in enumerate(roots)}
            reached = dict(place)
            ready = list(place)
            while ready:
                group = ready.pop()
                bits = reached[group]
                for dep in below.get(group, ()):
                    reached[dep] = reached.get(dep, 0) | bits
                    waiting[dep] -= 1
                    if not waiting[dep]:
                        ready.append(dep)
            held: Dict[int, Tuple[str, ...]] = {}  # the same roots: one tuple
            for bits in set(reached.values()):
                held[bits] = tuple(root for i, root in enumerate(roots) if bits >> i & 1)
            self._roots = {m.path: held[reached[groups[m.path]]] for m in self.modules}
        return self._roots

    def _groups_below(self) -> Dict[int, Set[int]]:
        """group → the other groups its modules import (:meth:`_import_groups`), made once."""

        def compute() -> Dict[int, Set[int]]:
            groups = self._import_group_of()
            below: Dict[int, Set[int]] = {}
            for m in self.modules:
                mine = groups[m.path]
                for dep in self.imported_modules(m):
                    theirs = groups[dep.path]
                    if theirs != mine:
                        below.setdefault(mine, set()).add(theirs)
            return below

        return self.memo("groups below", compute)

    def unit_holds(self, entry: ModuleFacts, key: Hashable, test: Callable[[ModuleFacts], bool]) -> bool:
        """Whether some module of ``entry``'s unit (:meth:`unit`) passes ``test``, which ``key``
        names: asked of every module at once, along the import graph's groups (a group's unit
        is its modules and the units of the groups it imports), each module tested once. A
        rule asking it of each script's unit listed every unit: transformers' 350 scripts
        each reach about 2,500 modules."""
        return entry.path in self.memo(("units holding", key), lambda: self._units_holding(test))

    def _units_holding(self, test: Callable[[ModuleFacts], bool]) -> Set[str]:
        """The paths of the modules whose unit holds a module that passes ``test``."""
        groups = self._import_group_of()
        below = self._groups_below()
        passing: Set[int] = {groups[m.path] for m in self.modules if test(m)}
        holds: Dict[int, bool] = {}
        for start in set(groups.values()):
            stack = [start]
            while stack:  # depth first, each group answered once its groups below are
                group = stack[-1]
                if group in holds:
                    stack.pop()
                    continue
                todo = [g for g in below.get(group, ()) if g not in holds]
                if todo:
                    stack.extend(todo)
                    continue
                stack.pop()
                holds[group] = group in passing or any(holds[g] for g in below.get(group, ()))
        return {path for path, group in groups.items() if holds[group]}

    def _import_groups(self) -> Dict[str, int]:
        """Each module's strongly connected group of the import graph (Tarjan's algorithm,
        iterative: real import chains are deeper than Python's recursion limit)."""
        index: Dict[str, int] = {}
        low: Dict[str, int] = {}
        group: Dict[str, int] = {}
        on_stack: Set[str] = set()
        stack: List[str] = []
        counter = 0
        for start in self.modules:
            if start.path in index:
                continue
            work = [(start, iter(self.imported_modules(start)))]
            index[start.path] = low[start.path] = counter
            counter += 1
            stack.append(start.path)
            on_stack.add(start.path)
            while work:
                node, deps = work[-1]
                advanced = False
                for dep in deps:
                    if dep.path not in index:
                        index[dep.path] = low[dep.path] = counter
                        counter += 1
                        stack.append(dep.path)
                        on_stack.add(dep.path)
                        work.append((dep, iter(self.imported_modules(dep))))
                        advanced = True
                        break
                    if dep.path in on_stack:
                        low[node.path] = min(low[node.path], index[dep.path])
                if advanced:
                    continue
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent.path] = min(low[parent.path], low[node.path])
                if low[node.path] == index[node.path]:
                    while True:
                        path = stack.pop()
                        on_stack.discard(path)
                        group[path] = index[node.path]
                        if path == node.path:
                            break
        return group


class UnitView:
    """The paths of one entry's unit, as ``path in view``: a path is in it when the entry is
    that module or imports it, directly or through others."""

    def __init__(self, project: Project, entry: str) -> None:
        self._project = project
        self._entry = entry

    def __contains__(self, path: str) -> bool:
        if path == self._entry:
            return True
        module = self._project.by_path.get(path)
        return module is not None and self._entry in self._project.importers_of(module)
