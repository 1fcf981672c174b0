"""The pipeline: discover → read → facts → project → rules → fixes.

Per-file work (read, parse, facts) is independent and produces plain data, so it
is cached by content hash and can run in worker processes. The project join and
the rules run in the parent. With ``fix=True`` the fixes are applied to the
in-memory texts and the pipeline repeats until no fix is left; the caller
(the CLI) decides whether to write files or print a diff.

Editors and ``--stdin-filename`` check text that is not on disk yet:
:meth:`Engine.run_buffers` puts each buffer in its file's place in the project on
disk, joins them all, and judges only the buffers.
"""
from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
import os
import re
from dataclasses import field
from ._dataclass import dataclass
from typing import Callable, Collection, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from .workspace.cache import FactsCache, ImportsIndex, RunCache, StampCache, collector_paused, file_states, fingerprint, oldest_generation_paused
from .workspace import ledger as ledgers
from .workspace.config import Config, from_table
from .workspace.configfiles import ConfigFiles
from .diagnostics import SAFE, Diagnostic
from .workspace.discovery import ImportRoots, discover, module_name
from .workspace import hardware
from .facts.model import NOTHING_ASKED, FactsAsked, ModuleFacts, ParseError, same_facts
from .rules import all_rules, selected_codes
from .rules.base import RuleContext, TextReads
from .rules import mp003_internal_error as internal
from .workspace.versions import installed_fallbacks, resolver_for
from .workspace.sources import SourceFile, Texts, stamp, text_of

PARALLEL_THRESHOLD = 48  # below this many files to parse, worker start-up costs more than it saves
# at most this many changed files are read on their own to reuse the last check's findings
# (``workspace/ledger.py``); more, and a full check costs little more than reading them
MAX_REUSED_EDITS = 8
# from this many files to extract in one batch, their call summaries are DEFERRED
# (``facts/model.py``): worked out only for the modules the join reads them of, again. That
# pays where most modules are never read (a library's tree: the join read those of 34 of
# transformers' 2,860 modules, and the cold check took 0.8x the time), and costs where the
# check is the densely called core of one (20 of the benchmark's 59-file slice of
# transformers, its largest: 1.18x); a repository of a few dozen scripts gains or loses a
# little either way (53 to 195 files: 0.6x to 1.05x)
DEFER_SUMMARIES_FROM = 200
# from this many modules whose deferred summaries the join will read, they are worked out in
# worker processes (fewer: in this one, as each is asked)
PARALLEL_SUMMARIES = 4
_UNREAD = object()  # imports not read yet (see Engine._known_imports)


class _Pools(contextlib.ExitStack):
    """The worker processes of one ``Engine.facts`` call, started by its first batch of files
    large enough and used by the next batches too (``pool``: None until then)."""

    def __init__(self, pool=None) -> None:
        super().__init__()
        self.pool = pool


class InternalError(Exception):
    """A bug in precision-lint itself, with the file it happened on."""


@dataclass
class RunResult:
    """What one check of a set of files leaves for the command line and the language server:
    the findings that remain, the files as read and as fixed, and the counts behind the summary
    line (fixed, remaining, unsafe fixes held back)."""

    diagnostics: List[Diagnostic] = field(default_factory=list)  # what remains
    sources: Dict[str, SourceFile] = field(default_factory=dict)
    fixed_texts: Dict[str, str] = field(default_factory=dict)  # path → text after fixes
    fixes_applied: Dict[str, int] = field(default_factory=dict)
    fixed_codes: Dict[str, Dict[str, int]] = field(default_factory=dict)  # path → code → fixes applied
    unsafe_held_back: int = 0
    found_first: Dict[str, int] = field(default_factory=dict)  # path → findings before any fix
    rejected: List[Tuple[str, str]] = field(default_factory=list)  # (path, why a fix was refused)
    files: int = 0

    def errors_fixed(self) -> int:
        """How many findings the applied fixes resolved, per file the more of: the fixes applied,
        and the findings the check found before fixing less those that remain. One fix may
        resolve several findings (MP102's and MP201's on one ``bf16=True``): "Found 3 errors
        (2 fixed, 1 remaining)", as ruff counts, never "Found 1 error (1 fixed)"."""
        remaining: Dict[str, int] = {}
        for d in self.diagnostics:
            remaining[d.path] = remaining.get(d.path, 0) + 1
        return sum(
            max(applied, self.found_first.get(path, 0) - remaining.get(path, 0))
            for path, applied in self.fixes_applied.items()
            if applied
        )

    @property
    def changed(self) -> Dict[str, Tuple[str, str]]:
        out = {}
        for path, new in self.fixed_texts.items():
            old = self.sources[path].text
            if old is not None and new != old:
                out[path] = (old, new)
        return out


def extract_facts(*args, **kwargs) -> ModuleFacts:
    """``facts.extract.extract_facts``, imported on first use: a run answered from its cache
    never loads the parser."""
    from .facts.extract import extract_facts as extract

    return extract(*args, **kwargs)


def _applicable(d: Diagnostic, unsafe: bool) -> bool:
    """Whether this run may apply the fix of ``d`` (safe, or unsafe with ``--unsafe-fixes``)."""
    return d.fix is not None and bool(d.fix.edits) and (d.fix.applicability == SAFE or unsafe)


def _with_notebook_targets(facts: ModuleFacts, notebook) -> ModuleFacts:
    """A notebook's facts with what its metadata (Colab's ``gpuType``, Kaggle's accelerator, a
    TPU session), its markdown cells and its saved outputs state about its hardware: not in the
    code cells the facts are read (and cached) from, so added on each run. Where its outputs
    record the GPU it ran on, that run's GPU is not lowered by what its code's comments name."""
    cap = facts.sections.get("capability") if notebook is not None else None
    if not cap:
        return facts
    metadata = notebook.data.get("metadata") or {}
    markdown = hardware.notebook_markdown(notebook.data)
    outputs = notebook.outputs
    stated = hardware.notebook_capability(metadata, markdown, outputs)
    device = hardware.notebook_device(metadata, markdown)
    scoped = _newer_stated_rows(notebook) if markdown else ()
    if scoped:
        cap = dataclasses.replace(cap, newer_stated_rows=scoped)
        facts = dataclasses.replace(facts, sections={**facts.sections, "capability": cap})
    if stated is None and device is None:
        return facts
    # what its code's comments name counts beside, never over, the GPU its saved outputs record
    # it ran on: Unsloth's template note "Float16 for Tesla T4, V100, Bfloat16 for Ampere+" is
    # advice, and the banner it printed names the RTX A5000 of the run (review 29c)
    recorded = any(hardware.recorded_gpus(text) for text in outputs)
    if stated is not None and cap.stated_capability is not None and not recorded:
        stated = hardware.summarise((stated, cap.stated_capability))
    new = dataclasses.replace(
        cap, stated_capability=cap.stated_capability if stated is None else stated, device=cap.device or device
    )
    out = dataclasses.replace(facts, sections={**facts.sections, "capability": new})
    return out


def _newer_stated_rows(notebook) -> Tuple[Tuple[int, int], ...]:
    """The rows of the code cells between a markdown cell that states GPUs with native bf16
    only ("The FLUX cells below will only work on an A100") and the next markdown cell: the
    notebook says those cells need that GPU (the user switches the runtime for them), though its
    metadata records the T4 it was saved with."""
    rows = notebook.code_cell_rows()
    by_index = {cell.index: row for cell, row in zip(notebook.cells, rows)}
    out = []
    current = None
    for index, cell in enumerate(notebook.data.get("cells") or ()):
        if not isinstance(cell, dict):
            continue
        if cell.get("cell_type") == "markdown":
            source = cell.get("source")
            text = "".join(source) if isinstance(source, list) else str(source or "")
            found = hardware.section_gpus(hardware.markdown_prose(text))
            current = min(found) if found and min(found) >= hardware.NATIVE_BF16 else None
        elif index in by_index and current is not None:
            out.append(by_index[index])
    return tuple(out)


def _held_back(diagnostics: Sequence[Diagnostic], unsafe: bool) -> int:
    """How many findings have an unsafe fix that this run does not apply."""
    return sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability != SAFE and not unsafe)


def _read_job(args) -> Tuple[bool, Optional[Tuple[str, ...]], ModuleFacts]:
    """A new text's imports and facts from one parse (``read_imports``), in a worker process
    too: ``(True, imports, facts)``, the facts analysed where the imports alone decide that the
    gate analyses the file (it imports a library the rules are about, or does not parse); a file
    the gate analyses for its links only is read again once every file's imports are known.
    ``(False, None, facts)``: reading its imports failed (MP003)."""
    from .facts.extract import read_imports
    from .semantic.gate import seen_library

    kept, path, module, is_package, root, summaries = args
    text = text_of(kept)  # sent as the source keeps it (``sources.held``)
    try:
        imports, parsed = read_imports(text, path, module, is_package)
    except Exception as exc:
        return False, None, _internal_facts(path, (module, is_package, root), "reading imports", exc)
    analyse = imports is None or seen_library(imports)
    try:
        return True, imports, extract_facts(text, path, module, is_package, root, analyse, parsed, summaries=summaries)
    except Exception as exc:
        return True, imports, _internal_facts(path, (module, is_package, root), "reading facts", exc)


def _facts_job(args) -> ModuleFacts:
    """The facts of one file; in a worker process too. An exception of ours on it (a bug:
    ``RecursionError`` in an extractor, anything) gives facts that say so (MP003), never the
    end of the run: every other file is still read."""
    kept, path, module, is_package, root, analyse, *deferring = args
    text = text_of(kept)  # sent as the source keeps it (``sources.held``)
    try:
        return extract_facts(text, path, module, is_package, root, analyse, summaries=not deferring)
    except Exception as exc:
        return _internal_facts(path, (module, is_package, root), "reading facts", exc)


class _Summaries:
    """What works out the DEFERRED call summaries of one file's facts (``facts/model.py``):
    before the join, in a batch of the modules it will read (:meth:`Engine._summarise_many`,
    which settles each), or when the join first asks, here; the file's text is analysed again
    for them alone, and the engine keeps them with the facts (:meth:`Engine._summarised`).
    Copies of the facts (``dataclasses.replace``) share it, and so its one answer."""

    __slots__ = ("engine", "key", "kept", "unsaved", "answer")

    def __init__(self, engine: "Engine", key: tuple, kept, unsaved: bool) -> None:
        self.engine, self.key, self.kept, self.unsaved = engine, key, kept, unsaved
        self.answer: Optional[Tuple[tuple, tuple]] = None

    def __call__(self) -> Tuple[tuple, tuple]:
        if self.answer is None:
            try:
                answer = _summaries_of(self.job())
            except Exception as exc:  # a bug of ours, named by the join's stage (MP003)
                exc.precision_lint_stage = "working out deferred call summaries"
                raise
            self.settle(answer)
        return self.answer

    def job(self) -> tuple:
        """What :func:`_summaries_job` works them out from (the text first, as the jobs of
        ``Engine._run_jobs``)."""
        path, _, naming, analyse = self.key
        return (self.kept, path, naming, analyse)

    def settle(self, answer: Tuple[tuple, tuple]) -> None:
        self.answer = answer
        self.engine._summarised(self.key, self.unsaved, answer)


def _summaries_of(job: tuple) -> Tuple[tuple, tuple]:
    """The call records and return summaries of a file's text, worked out alone
    (``extract_facts(only_summaries=True)``)."""
    kept, path, naming, analyse = job
    full = extract_facts(text_of(kept), path, *naming, analyse, only_summaries=True)
    if full.summaries_deferred or full.parse_error is not None:
        raise RuntimeError(f"the call summaries of {path} could not be worked out again")
    return full.calls, full.returns


def _summaries_job(job: tuple) -> Optional[Tuple[tuple, tuple]]:
    """:func:`_summaries_of`, in a worker process; None where it fails (the module is then
    worked out alone when the join asks, and the failure reported there)."""
    try:
        return _summaries_of(job)
    except Exception:
        return None


def _internal_facts(path: str, naming: tuple, stage: str, exc: BaseException) -> ModuleFacts:
    """Facts of a file an internal error stopped: not parsed, judged only by MP003 (and the
    other rules of unchecked files), never cached."""
    facts = ModuleFacts(path, naming[0], naming[1], naming[2])
    facts.parse_error = ParseError(internal.message(path, _stage_where(stage, exc), exc), 1, 0, internal.INTERNAL)
    return facts


def _stage_where(stage: str, exc: BaseException) -> str:
    """The stage, and the last line of precision-lint's own code the exception passed through
    (``reading facts, at facts/extractors/precision.py:120``): what a bug report needs."""
    package = os.path.dirname(os.path.abspath(__file__))
    where = ""
    tb = exc.__traceback__
    while tb is not None:  # the innermost frame in our package, without formatting the others
        filename = tb.tb_frame.f_code.co_filename
        if os.path.abspath(filename).startswith(package + os.sep):
            where = f"{os.path.relpath(filename, package).replace(os.sep, '/')}:{tb.tb_lineno}"
        tb = tb.tb_next
    inner = getattr(exc, "precision_lint_stage", None)  # the step that raised, where it named itself
    stage = f"{stage}: {inner}" if inner else stage
    return f"{stage}, at {where}" if where else stage


def _is_internal(facts: ModuleFacts) -> bool:
    return facts.parse_error is not None and facts.parse_error.kind == internal.INTERNAL


class Engine:
    def __init__(
        self,
        config: Optional[Config] = None,
        codes: Optional[Sequence[str]] = None,
        jobs: Optional[int] = None,
        progress: Optional[Callable[[int, int], None]] = None,
        cache_dir: Optional[str] = None,
        mp_context=None,
        one_shot: bool = False,
    ) -> None:
        self.progress = progress  # called as progress(files parsed, files to parse)
        # A process that checks once and exits (the command line): the facts of its run live
        # until it ends (see :meth:`facts`). The language server lives on: never set there.
        self.one_shot = one_shot
        # How worker processes start: the language server, a process with threads, spawns them.
        self.mp_context = mp_context
        self.config = config or from_table({}, "defaults")
        self.codes = list(codes) if codes is not None else selected_codes(self.config)
        # what is reported whatever the selection (MP003: a file not checked is never a pass)
        always = [code for code, rule in all_rules().items() if rule.always]
        self.codes = sorted({*self.codes, *always})
        # Every rule judges: the selected ones are reported, and all of them check that a plan of
        # fixes neither hides nor creates a finding (``checked.py``), whatever --select says.
        self._selected_codes = frozenset(self.codes)
        self.rules = [rule() for rule in all_rules().values()]
        self.options = {r.code: type(r).resolve_options(self.config) for r in self.rules}
        self.jobs = jobs if jobs is not None else (os.cpu_count() or 1)
        # path → (key, facts) of its latest text: a long-lived engine (the language server) sees
        # a new text at every keystroke and must not keep the facts of each.
        self._cache: Dict[str, Tuple[tuple, ModuleFacts]] = {}
        self._imports_of: Dict[str, tuple] = {}  # path → (digest, naming, imported modules): see _imports
        self.disk = FactsCache(cache_dir) if cache_dir else None
        self.runs = RunCache(cache_dir) if cache_dir else None
        self.index = ImportsIndex(cache_dir) if cache_dir else None  # imports read before the facts
        self.stamps = StampCache(cache_dir) if cache_dir else None  # each file's digest by its stamp
        self.ledger = ledgers.Ledger(cache_dir) if cache_dir else None  # what the last checks read
        # what the current check read: each file's facts key and gate imports (``_facts``), and
        # what the rules read of the texts (``_judged``); None outside a check
        self._reads: Optional[TextReads] = None
        self._asked: Optional[FactsAsked] = None  # what this check's joins ask of the facts read by question (the ledger's)
        self._facts_keys: Dict[str, tuple] = {}
        # files named in the current check (read one by one for their neighbours, ``_run_named``):
        # as many, and each one's call summaries are deferred as in a batch of that size
        self._named_files = 0
        self._gate_imports: Dict[str, Optional[Tuple[str, ...]]] = {}
        self._side_files: Tuple[str, ...] = ()  # the config files the last judge's join read
        self.import_roots = ImportRoots(self.config.src)  # renewed by each run: it caches the file system

    # --- facts ------------------------------------------------------------------
    def _imports(self, src: SourceFile, naming) -> Tuple[str, Optional[Tuple[str, ...]]]:
        """(the text's digest, the modules it imports: ``gate.imported_modules``), kept per path
        while the text is unchanged: a run asks again for the files its neighbour search read,
        the language server at every keystroke for the files that did not change."""
        from .semantic import gate

        digest, imports = self._known_imports(src, naming)
        if imports is _UNREAD:
            imports = gate.imported_modules(src.text, *naming[:2])
            self._keep_imports(src, naming, digest, imports)
        return digest, imports

    def _known_imports(self, src: SourceFile, naming):
        """(the text's digest, its imports where this engine or the disk index has read them,
        else ``_UNREAD``)."""
        digest = hashlib.sha1(src.utf8()).hexdigest()
        kept = self._imports_of.get(src.path)
        if kept is not None and kept[:2] == (digest, naming):
            return digest, kept[2]
        imports = self.index.get(("gate", src.path, digest, naming), False) if self.index is not None else False
        if imports is False:  # not read before (None: the text does not parse)
            return digest, _UNREAD
        self._imports_of[src.path] = (digest, naming, imports)
        return digest, imports

    def _keep_imports(self, src: SourceFile, naming, digest: str, imports) -> None:
        if self.index is not None and not src.unsaved:
            self.index.put(("gate", src.path, digest, naming), imports)
        self._imports_of[src.path] = (digest, naming, imports)

    def _facts_imports(self, src: SourceFile) -> Sequence[str]:
        """The imports the facts of ``src`` alone record (what ``facts([src])`` gives), from
        the facts kept in memory or the disk index when its text was read before: the neighbour
        search of a named file then loads no facts to follow its imports."""
        if not src.has_text:
            return ()
        from .semantic import gate

        naming = module_name(src.path)
        digest, imports = self._known_imports(src, naming)
        if imports is _UNREAD:  # read with its facts, from one parse
            return self.facts([src])[0].imports
        key = (src.path, digest, naming, src.path in gate.analysed({src.path: (naming[0], naming[2], imports)}))
        latest = self._cache.get(src.path)
        if latest is not None and latest[0] == key:
            return latest[1].imports
        found = self.index.get(("facts", key)) if self.index is not None else None
        if found is not None:
            return found
        return self.facts([src])[0].imports

    def facts(self, sources: Sequence[SourceFile], names: Optional[Dict[str, tuple]] = None) -> List[ModuleFacts]:
        out: Dict[str, ModuleFacts] = {}
        naming_of = {src.path: (names or {}).get(src.path) or module_name(src.path) for src in sources}
        read = {}
        unread = []  # (source, digest) of new texts: their imports are read with their facts, from one parse
        for src in sources:
            if not src.has_text:
                continue
            digest, imports = self._known_imports(src, naming_of[src.path])
            if imports is _UNREAD:
                unread.append((src, digest))
            else:
                read[src.path] = (digest, imports)
        with _Pools() as pools:
            found = self._facts(sources, naming_of, read, unread, out, pools)
        if self.one_shot:
            # Every fact of the run lives until the process ends (transformers: 1.2 million
            # objects, none garbage): frozen, the cyclic collections the join and the rules
            # trigger no longer traverse them (one file edited: the collector's time 2.5 s ->
            # 1.0 s). A long-lived process would never free what it froze: one-shot only.
            gc.freeze()
        return found

    def _facts(self, sources, naming_of, read, unread, out, pools: "_Pools") -> List[ModuleFacts]:
        """:meth:`facts`, once the imports known already are read (``read``; ``unread``: the
        texts, with their digests, whose imports are read with their facts)."""
        from .semantic import gate

        todo = []
        first: Dict[str, Tuple[bool, ModuleFacts]] = {}  # path → (analysed, facts) read with the imports
        summaries = not self._defers(len(unread))
        jobs = [(src.kept_text, src.path, *naming_of[src.path], summaries) for src, _ in unread]
        for (src, digest), (ok, imports, facts) in zip(unread, self._run_jobs(_read_job, jobs, pools)):
            if not ok:  # an internal error while reading its imports
                out[src.path] = facts
                continue
            self._keep_imports(src, naming_of[src.path], digest, imports)
            read[src.path] = (digest, imports)
            first[src.path] = (imports is None or gate.seen_library(imports), facts)
        analysed = gate.analysed(
            {path: (naming_of[path][0], naming_of[path][2], imports) for path, (_, imports) in read.items()}
        )
        made = []  # (key, path, unsaved, facts) of the facts made by this run
        # the cached facts unpickled with no collection between them, and in a one-shot process
        # frozen as they are (cache.py; ``facts`` freezes the rest at its end)
        with collector_paused(freeze=self.one_shot):
            for src in sources:
                naming = naming_of[src.path]
                if src.path in out:  # an internal error while reading its imports
                    continue
                if not src.has_text:
                    facts = ModuleFacts(src.path, naming[0], naming[1], naming[2])
                    line = _error_line(src.error or "")
                    facts.parse_error = ParseError(src.error or "cannot read file", line, 0, src.error_kind or "read")
                    out[src.path] = facts
                    continue
                key = (src.path, read[src.path][0], naming, src.path in analysed)
                self._facts_keys[src.path] = key
                self._gate_imports[src.path] = read[src.path][1]
                if src.path in first and first[src.path][0] == key[3]:
                    out[src.path] = first[src.path][1]
                    made.append((key, src.path, src.unsaved, out[src.path]))
                    continue
                cached = self._kept_facts(src.path, key, src.unsaved)
                if cached is not None:
                    out[src.path] = cached
                else:
                    todo.append((key, (src.kept_text, src.path, *naming, src.path in analysed), src.unsaved))
        deferring = (True,) if self._defers(len(todo)) else ()
        results = self._run_jobs(_facts_job, [args + deferring for _, args, _ in todo], pools)
        made += [(key, args[1], unsaved, facts) for (key, args, unsaved), facts in zip(todo, results)]
        for key, path, unsaved, facts in made:
            out[path] = facts
            self._keep_facts(key, path, unsaved, facts)
        for src in sources:
            self._completable(out[src.path], self._facts_keys.get(src.path), src)
        return [_with_notebook_targets(out[s.path], s.notebook) for s in sources]

    def _completable(self, facts: Optional[ModuleFacts], key: Optional[tuple], src: SourceFile) -> None:
        """Facts of ``src`` (kept under ``key``) whose call summaries are DEFERRED, given what
        works them out when asked (:class:`_Summaries`)."""
        if facts is not None and facts.summaries_deferred and facts.summarise is None:
            facts.summarise = _Summaries(self, key, src.kept_text, src.unsaved)

    def _summarise_many(self, modules: List[ModuleFacts]) -> None:
        """The DEFERRED call summaries of ``modules`` worked out at once, before the join
        reads them (``Project``, ``CallGraphValues.prefetch_summaries``): in worker processes
        where there are enough of them, as the facts were."""
        todo: Dict[int, _Summaries] = {}
        for module in modules:
            work = module.summarise
            if module.summaries_deferred and isinstance(work, _Summaries) and work.answer is None:
                todo[id(work)] = work
        works = list(todo.values())
        if len(works) >= PARALLEL_SUMMARIES and self.jobs > 1:
            from concurrent.futures import ProcessPoolExecutor

            works.sort(key=lambda w: -len(w.kept))  # the largest first: no worker is left with one at the end
            with ProcessPoolExecutor(max_workers=min(self.jobs, len(works)), mp_context=self.mp_context) as pool:
                for work, answer in zip(works, pool.map(_summaries_job, [w.job() for w in works])):
                    if answer is not None:
                        work.settle(answer)
        for module in modules:
            if module.summaries_deferred and isinstance(module.summarise, _Summaries) and module.summarise.answer is not None:
                module.complete_summaries()

    def _defers(self, batch: int) -> bool:
        """Whether the facts of a batch of this many files leave their call summaries DEFERRED
        (``facts/model.py``): in a check of many files, where the join asks for few of them."""
        return max(batch, self._named_files) >= DEFER_SUMMARIES_FROM

    def _kept_facts(self, path: str, key: tuple, unsaved: bool) -> Optional[ModuleFacts]:
        """The facts kept for ``key`` (path, digest, naming, analysed): this engine's latest of
        the path, else the disk cache's (then kept in memory too); None when neither has them."""
        latest = self._cache.get(path)
        cached = latest[1] if latest is not None and latest[0] == key else None
        if cached is None and self.disk is not None:
            cached = self.disk.get(key)
        if cached is not None:
            self._cache[path] = (key, cached)
            if self.index is not None and not unsaved:
                self.index.put(("facts", key), cached.imports)
        return cached

    def _summarised(self, key: tuple, unsaved: bool, summaries: Tuple[tuple, tuple]) -> None:
        """The deferred call summaries of the facts of ``key``, worked out when the join asked
        (:class:`_Summaries`): kept with them, so that no later check works them out again."""
        latest = self._cache.get(key[0])
        if latest is None or latest[0] != key or not latest[1].summaries_deferred:
            return
        facts = latest[1]
        facts.calls, facts.returns = summaries
        self._keep_facts(key, key[0], unsaved, facts)

    def _keep_facts(self, key: tuple, path: str, unsaved: bool, facts: ModuleFacts) -> None:
        """Facts made by this run, kept in memory and (for a saved file) on disk, with their
        imports in the index."""
        if _is_internal(facts):  # never kept: the next run (a fixed precision-lint) reads it again
            self._cache.pop(path, None)
            return
        self._cache[path] = (key, facts)
        if self.disk is not None and not unsaved:
            self.disk.put(key, facts)
            if self.index is not None:
                self.index.put(("facts", key), facts.imports)

    def _run_jobs(self, job, args: list, pools: Optional["_Pools"] = None) -> list:
        """``job`` of each of ``args`` (a file's text first), in worker processes when there are
        enough of them, or where ``pools`` holds workers started for the jobs before (the files
        read again once every file's imports are known); the results in the order asked."""
        pool = getattr(pools, "pool", None)
        if pool is None and len(args) >= PARALLEL_THRESHOLD and self.jobs > 1:
            from concurrent.futures import ProcessPoolExecutor  # only when there are files to parse

            pool = ProcessPoolExecutor(max_workers=self.jobs, mp_context=self.mp_context)
            if pools is None:
                with pool:
                    return self._run_jobs(job, args, _Pools(pool))
            pools.pool = pools.enter_context(pool)
        if pool is not None and len(args) > 1:
            # largest files first, one at a time: no worker is left with the one huge module at
            # the end while the others wait (the results come back in the order asked)
            order = sorted(range(len(args)), key=lambda i: -len(args[i][0]))
            done = list(self._report(pool.map(job, [args[i] for i in order]), len(args)))
            results = [None] * len(args)
            for i, found in zip(order, done):
                results[i] = found
            return results
        return list(self._report((job(a) for a in args), len(args)))

    def _report(self, results: Iterable[ModuleFacts], total: int) -> Iterator[ModuleFacts]:
        if self.progress is None or not total:
            yield from results
            return
        self.progress(0, total)
        for done, facts in enumerate(results, start=1):
            yield facts
            self.progress(done, total)

    # --- judging ------------------------------------------------------------------
    def judge(
        self,
        facts: Sequence[ModuleFacts],
        texts: Dict[str, str],
        only: Optional[Collection[str]] = None,
        related: bool = False,
        configs: Optional[ConfigFiles] = None,
        notebook_lines: Optional[Dict[str, Tuple[str, ...]]] = None,
        written_files: Optional[Dict[str, str]] = None,
        kernels: Optional[Dict[str, str]] = None,
        notebook_rows: Optional[Dict[str, Tuple[Tuple[int, str], ...]]] = None,
    ) -> List[Diagnostic]:
        """Diagnostics of every module (or of the paths in ``only``), the project joined from all;
        with ``related``, also those of other modules that name a path of ``only``, unfixed.
        ``notebook_lines``: a notebook's IPython lines (``%pip install``), which say the
        versions it installs; ``written_files``: the file on disk each module a notebook writes
        (``%%writefile``) becomes, which the notebook's commands run; ``kernels``: the Python
        version each notebook's metadata records (``Notebook.kernel_python``); ``notebook_rows``:
        the same lines with their rows, where a later cell installs other versions (each part of
        such a notebook is judged on what it runs with: ``Project.install_parts``)."""
        with oldest_generation_paused():  # its tables live to its end (workspace/cache.py)
            return self._judge(facts, texts, only, related, configs, notebook_lines, written_files, kernels, notebook_rows)

    def _judge(self, facts, texts, only, related, configs, notebook_lines, written_files, kernels, notebook_rows) -> List[Diagnostic]:
        """:meth:`judge`, with the collector's full collections held back."""
        # one order whatever order the files came in
        from .project.model import Project  # the join: only when something is judged
        from .project.test_code import is_test_code

        if configs is None:
            configs = ConfigFiles(max_bytes=self.config.max_file_size)
        ordered = sorted(facts, key=lambda m: m.path)
        try:
            project = Project(ordered, lambda m: self.import_roots(m.path, m.root), configs, self._summarise_many, self._asked)
        except Exception as exc:  # a bug of ours in the whole-project join: no file can be judged
            self._side_files = ()
            stage = _stage_where("joining the project", exc)
            return [
                internal.diagnostic(m.path, internal.message(m.path, stage, exc))
                for m in ordered
                if not m.skip_file and (only is None or m.path in only)
            ]
        project.versions = resolver_for(self.config)
        project.notebook_lines = dict(notebook_lines or {})
        project.notebook_rows = dict(notebook_rows or {})
        project.written_files = dict(written_files or {})
        project.kernels = dict(kernels or {})
        out: List[Diagnostic] = []
        for path, (stage, exc) in project.failed.items():  # its own step of the join failed
            if only is None or path in only or related:
                out.append(internal.diagnostic(path, internal.message(path, _stage_where(stage, exc), exc)))
        first = [r for r in self.rules if not r.after_others]
        for rules in (first, [r for r in self.rules if r.after_others]):
            for module in project.modules:  # with parameters substituted across calls
                context = only is not None and module.path not in only
                if module.skip_file or (context and not related) or module.path in project.failed:
                    continue
                # a file named like a test that a launcher runs, or written as a program, is judged
                # as one (project/test_code.py)
                ignored = self.config.ignored_for(module.path, is_test_code(project, module, self.config))
                source = texts.get(module.path) or ""
                judging = [
                    rule for rule in rules
                    if (rule.always or not any(rule.code.startswith(i) for i in ignored))
                    and (module.parsed or rule.judges_unparsed)
                ]
                parts = project.install_parts(module)
                if not parts:
                    for rule in judging:
                        out.extend(self._judged(rule, module, source, project, only, context))
                    continue
                for first, last, lines in parts:  # a notebook whose later cells install other versions
                    with project.installed_until(module, lines):
                        for rule in judging:
                            out.extend(
                                d for d in self._judged(rule, module, source, project, only, context)
                                if _in_part(d, module.path, first, last)
                            )
        self._side_files = project.side_files()  # after the rules: they read config files too
        out.sort(key=Diagnostic.sort_key)
        return _unfixed_where_unchecked(_dedupe(out))

    def _judged(self, rule, module, source: str, project, only, context: bool) -> List[Diagnostic]:
        """One rule's findings in one module, after ``# noqa``; for a neighbour read only for
        context, those that concern the named files, unfixed."""
        ctx = RuleContext(module, source, project, self.config, self.options[rule.code], reads=self._reads)
        try:
            found = list(rule.check(ctx))
        except Exception as exc:  # a bug of ours: this rule on this file is MP003, the rest goes on
            stage = _stage_where(f"rule {rule.code}", exc)
            return [internal.diagnostic(module.path, internal.message(module.path, stage, exc))]
        out = [  # a run whose judging raised: the other runs' findings stand
            internal.diagnostic(module.path, internal.message(module.path, _stage_where(f"rule {rule.code} in {what}", exc), exc))
            for what, exc in ctx.failures
        ]
        for d in found:
            if d.path != module.path:  # a finding in a file the module reads (a configuration's key)
                if not rule.always and self._suppressed_in(d, project):
                    continue
            else:
                codes = module.noqa.get(d.noqa_row, frozenset())
                if (codes is None or d.code in codes) and not rule.always:
                    continue
            if context:  # a neighbour read from disk: only what concerns the named files
                if not any(r.path in only for r in d.related):
                    continue
                d = dataclasses.replace(d, fix=None)
            elif any(e.kind != "ipython" for e in module.cell_errors) and d.fix is not None:
                # a notebook with a cell that does not compile (or was not read: a Python 3.12
                # f-string) is checked, never rewritten: as a file that does not parse, it is left
                # as it is until it compiles
                d = dataclasses.replace(d, fix=None)
            out.append(d)
        return out

    def _suppressed_in(self, d: Diagnostic, project) -> bool:
        """Whether a finding a module makes in another file (a key of a JSON/YAML configuration
        it reads, an option a shell launcher passes it, a key of a dict another module of the run
        binds: MP302) is turned off there: that file
        matches ``exclude``, its ``per-file-ignores`` name the code, or, in YAML, a ``# noqa``
        comment ends its line; in a shell launcher or a README's fenced command, the line that
        ends the option's command (a line continued with ``\\`` can hold no comment). A JSON file holds no comments:
        per-file-ignores is its way (the module's own ``# noqa`` lines are about the module's
        lines, never the other file's)."""
        from .project.test_code import is_test_code
        from .workspace.discovery import is_excluded
        from .workspace.shipped import is_launch_document

        if is_excluded(d.path, self.config.exclude, self.config.root):
            return True
        other = project.by_path.get(d.path)  # a module of the run: test code as its own findings are
        test_code = None if other is None else is_test_code(project, other, self.config)
        if any(d.code.startswith(i) for i in self.config.ignored_for(d.path, test_code)):
            return True
        if other is not None:  # a key of a dict another module spreads: that module's `# noqa`
            codes = other.noqa.get(d.noqa_row, frozenset())
            if codes is None or d.code in codes:
                return True
        text = None
        if d.path.lower().endswith((".yaml", ".yml")):  # a configuration file, or a job's YAML that launches
            text = project.configs.text_of(d.path) or project.shipped.text_of(os.path.abspath(d.path))
        elif is_launch_document(d.path):  # an option a launch passes: its command's last line
            text = project.shipped.text_of(os.path.abspath(d.path))
        if text:
            from .facts.extract import parse_noqa

            codes = parse_noqa(text).get(d.noqa_row, frozenset())
            return codes is None or d.code in codes
        return False

    # --- whole runs --------------------------------------------------------------------
    def run_sources(
        self,
        sources: Sequence[SourceFile],
        fix: bool = False,
        unsafe: bool = False,
        names: Optional[Dict[str, tuple]] = None,
        only: Optional[Collection[str]] = None,
        related: bool = False,
    ) -> RunResult:
        """Check (and with ``fix``, fix) ``sources`` as one project; ``only``: the paths to judge
        and fix (the others still join with them); with ``related``, a finding in another file
        is reported too where it names one of ``only`` (never fixed there)."""
        # A one-shot check (no fixes: no trial joins made and dropped) ends with its process:
        # its join, dropped once judged, is never worth a full collection (0.25-0.35 s on
        # transformers, each traversing every object of the join to free it)
        paused = oldest_generation_paused() if self.one_shot and not fix else contextlib.nullcontext()
        try:
            with paused:
                return self._run_sources(sources, fix, unsafe, names, only, related)
        finally:
            if self.index is not None:
                self.index.save()

    def _run_sources(self, sources, fix, unsafe, names, only, related) -> RunResult:
        result = RunResult(sources={s.path: s for s in sources}, files=len(sources))
        texts = Texts(sources)
        run_key = ledger_key = None
        if not fix and self.runs is not None and not any(s.unsaved for s in sources):
            contents = {s.path: _content_key(s) for s in sources}
            run_key, ledger_key = self._keys_of_files(contents, names, only, related)
            by_path = {s.path: s for s in sources}
            cached = self._cached_run(run_key, ledger_key, contents, by_path.__getitem__)
            if cached is not None:
                result.diagnostics = cached
                result.fixed_texts = texts
                result.unsafe_held_back = _held_back(cached, unsafe)
                return result
        self._reads, self._asked, self._facts_keys, self._gate_imports = TextReads(), FactsAsked(), {}, {}
        try:
            first = self._vendored(self._judge_texts(sources, names, only, related), result.sources)
            keys, gate = dict(self._facts_keys), dict(self._gate_imports)  # the check's own, not its fixes' trials
            self._finish_run(result, sources, texts, first, fix, unsafe, names, only, related)
        finally:
            (reads, asked), self._reads, self._asked = (self._reads, self._asked), None, None
        if run_key is not None and not any(d.code == internal.CODE for d in result.diagnostics):
            side_files = file_states(self._side_files)
            self.runs.put(run_key, side_files, result.diagnostics)
            self._keep_ledger(ledger_key, sources, contents, side_files, result.diagnostics, keys, gate, reads, asked)
        return result

    def _finish_run(self, result, sources, texts, first, fix, unsafe, names, only, related) -> None:
        """The rest of a run once its files are judged: the plan of its fixes, checked whole."""
        if fix:  # what a check finds, for the summary ("Found 3 errors (2 fixed, 1 remaining)")
            for d in self._reported(first):
                result.found_first[d.path] = result.found_first.get(d.path, 0) + 1
        wanted = lambda d: _applicable(d, unsafe) and d.code in self._selected_codes
        if not any(wanted(d) for d in first):
            result.diagnostics = self._reported(first)
            result.fixed_texts = texts
        else:
            side = self._side_files  # what the findings reported read; the copies the plan checks may read less
            self._plan(result, sources, texts, first, wanted, fix, unsafe, names, only, related)
            self._side_files = tuple(sorted({*side, *self._side_files}))
        result.unsafe_held_back = _held_back(result.diagnostics, unsafe)

    # --- a check after an edit that changed no fact: the last check's findings (ledger.py) ---
    def _cached_run(self, run_key: str, ledger_key: str, contents: Dict[str, str], source_of) -> Optional[List[Diagnostic]]:
        """The findings of a check of these contents (path → content key) from the caches: the
        check of the same contents, else the ledger of the last check of the same files where
        what changed changed nothing its findings read (``source_of(path)``: a changed file's
        source). None when neither holds."""
        cached = self.runs.get(run_key)
        if cached is None:
            reused = self._reused_run(ledger_key, contents, source_of)
            if reused is not None:
                cached = reused.diagnostics
                self.runs.put(run_key, reused.side_files, cached)  # as they still are
                if self.index is not None:  # the edited files' imports, for the next check; this
                    self.index.save(whole=False)  # run saw no other file's (nothing is added after it)
        return cached

    def _keep_ledger(self, ledger_key: str, sources, contents, side_files, diagnostics, keys, gate, reads: TextReads, asked: FactsAsked) -> None:
        if self.ledger is None or any(s.notebook is not None and s.notebook.writes_files for s in sources):
            return  # a notebook's written modules are named and read apart: always checked whole
        texts = {s.path: s.text for s in sources if s.path in reads.by_path and s.has_text}
        entry = ledgers.Entry(
            contents=contents,
            gate=gate,
            facts_keys=keys,
            reads=ledgers.ranges_read(reads.by_path, texts),
            side_files=side_files,
            diagnostics=diagnostics,
            asked=asked.kept(),
        )
        self.ledger.put(ledger_key, entry)

    def _reused_run(self, key: str, contents: Dict[str, str], source_of) -> Optional["ledgers.Entry"]:
        """The ledger ``key`` of the last check of these files, brought up to date, where every
        file that changed since changed nothing its findings read (``workspace/ledger.py``): its
        findings are this check's. None otherwise."""
        if self.ledger is None or self.disk is None:
            return None
        entry = self.ledger.get(key)
        if entry is None:
            return None
        changed = [path for path, content in contents.items() if entry.contents.get(path) != content]
        if not changed or len(changed) > MAX_REUSED_EDITS or not entry.side_files_hold():
            return None
        new_keys = {}
        for path in changed:
            new_keys[path] = self._unchanged_for_findings(entry, source_of(path))
            if new_keys[path] is None:
                return None
        for path in changed:
            entry.contents[path] = contents[path]
            entry.facts_keys[path] = new_keys[path]
        self.ledger.put(key, entry)
        return entry

    def _unchanged_for_findings(self, entry: "ledgers.Entry", src: SourceFile) -> Optional[tuple]:
        """The key of the facts of ``src``, a file changed since the ledger's check, when its
        findings and every other file's read nothing that changed: its text imports the same
        modules (the gate decides the same), its facts are equal and the ranges of its text the
        rules read hold the same text (a finding with a fix read it whole: ``_vendored``). None
        otherwise."""
        if src.notebook is not None or not src.has_text or src.unsaved:
            return None
        before_key = entry.facts_keys.get(src.path)
        if before_key is None or src.path not in entry.gate:
            return None
        naming = before_key[2]  # the ledger's key holds each file's naming
        digest, imports = self._imports(src, naming)
        if imports != entry.gate[src.path]:
            return None
        key = (src.path, digest, naming, before_key[3])
        before = self.disk.get(before_key)
        if before is None:
            return None
        now = self._kept_facts(src.path, key, src.unsaved)
        self._completable(now, key, src)
        if now is None:
            now = _facts_job((src.kept_text, src.path, *naming, key[3]))
            self._keep_facts(key, src.path, src.unsaved, now)
        if _is_internal(now) or not same_facts(before, now, entry.asked.get(src.path, NOTHING_ASKED)) or not entry.reads_hold(src.path, src.text):
            return None
        return key

    def _plan(self, result, sources, texts, first, wanted, fix, unsafe, names, only, related) -> None:
        """The fixes of the run planned together and checked whole (``checked.py``): refused
        fixes leave their findings without a fix; with ``fix``, the texts as the plan leaves them."""
        from .fixes import checked
        from .fixes.fixer import still_valid

        by_path = {s.path: s for s in sources}

        def judge(now: Dict[str, str]) -> List[Diagnostic]:
            current = [dataclasses.replace(s, text=now.get(s.path, s.text)) for s in sources]
            return self._vendored(self._judge_texts(current, names, only, related), result.sources)

        def valid(path: str, old: str, new: str) -> Optional[str]:
            return still_valid(old, new, path) or _notebook_problem(by_path.get(path), new)

        original = {checked.key(d): d for d in first}
        refused: Dict[checked.Key, str] = {}
        trial = None
        for _ in range(checked.MAX_ROUNDS):
            trial = checked.run_trial(judge, texts, first, wanted, refused, valid, lambda d: _applicable(d, unsafe))
            found = dict(trial.problems)
            if not found:
                resolvable = lambda d: _applicable(d, unsafe) and checked.key(d) not in refused
                found = checked.compare(first, trial, resolvable, texts, judge)
            found = {k: why for k, why in found.items() if k not in refused}
            if not found and trial.problems:  # blamed on fixes refused already: refuse what it applied
                found = {k: "no fix plan of this run re-lints clean" for k in trial.planned if k not in refused}
            if not found:
                break
            refused.update(found)
            result.rejected.extend(p for p in trial.rejected if p not in result.rejected)
        else:  # no clean plan in a few rounds: nothing is applied
            refused.update({checked.key(d): "no fix plan of this run re-lints clean" for d in first if wanted(d)})
            trial = checked.run_trial(judge, texts, first, wanted, refused, valid, lambda d: _applicable(d, unsafe))
        if not fix:
            result.diagnostics = self._reported(checked.with_refusals(first, refused, original))
            result.fixed_texts = texts
            return
        result.diagnostics = self._reported(checked.with_refusals(trial.diagnostics, refused, original, trial))
        result.fixed_texts = {p: t for p, t in trial.texts.items() if p in result.sources}
        result.fixes_applied = dict(trial.fixes_applied)
        result.fixed_codes = {p: dict(c) for p, c in trial.fixed_codes.items()}

    def _vendored(self, diagnostics: List[Diagnostic], sources: Dict[str, SourceFile]) -> List[Diagnostic]:
        """The findings of vendored third-party files without their fixes (``vendored.py``)."""
        from .fixes.checked import refuse
        from .workspace.vendored import vendored_reason

        root = str(self.config.root) if self.config.root is not None else None
        why: Dict[str, Optional[str]] = {}
        out = []
        for d in diagnostics:
            if d.fix is not None:
                if d.path not in why:
                    if self._reads is not None:  # its header says whether it is vendored
                        self._reads.whole(d.path)
                    src = sources.get(d.path)
                    why[d.path] = vendored_reason(d.path, src.text if src is not None else None, root)
                if why[d.path] is not None:
                    d = refuse(d, why[d.path])
            out.append(d)
        return out

    def _reported(self, diagnostics: Iterable[Diagnostic]) -> List[Diagnostic]:
        """The findings of the selected rules (every rule judges, to check the plan of fixes)."""
        return [d for d in diagnostics if d.code in self._selected_codes]

    def _keys_of_files(self, contents: Dict[str, str], names, only, related) -> Tuple[str, str]:
        """(the run key, the ledger key) of a check of ``contents`` (path → content key; each
        file named by ``names`` or by default). A whole check's findings depend on each file's
        path, name and bytes (its text, a decoding error, a notebook's cells and metadata, the
        size limit's verdict), the configuration, the rules and their options, and where the
        run starts from: the run key. The ledger's is the same without the contents."""
        run, files = hashlib.sha1(), hashlib.sha1()
        for digest in (run, files):
            digest.update(repr((fingerprint(), os.getcwd(), repr(self.config), self.codes, repr(self.options))).encode())
            digest.update(repr(installed_fallbacks()).encode())  # an unpinned project targets them
            digest.update(repr((sorted(only) if only is not None else None, related)).encode())
        for path in sorted(contents):
            naming = repr((path, (names or {}).get(path) or module_name(path)))
            run.update(f"{naming}{contents[path]!r}".encode("utf-8", "surrogatepass"))
            files.update(naming.encode("utf-8", "surrogatepass"))
        return run.hexdigest(), files.hexdigest()

    def _unchanged_run(self, files: Sequence[str], unsafe: bool) -> Optional[RunResult]:
        """The cached findings of a check of ``files`` (found in folders, none named) when
        every file's stamp is the one its digest was recorded at, or the few whose stamp is not
        (edited: read here, :data:`MAX_REUSED_EDITS` at most) changed nothing the last check's
        findings read (``workspace/ledger.py``): the run is keyed by stat calls, and only the
        edited files and the files with findings are read (their lines are shown). None when
        a file cannot be stat'ed or the caches cannot answer."""
        contents: Dict[str, str] = {}
        edited: Dict[str, SourceFile] = {}
        for path in files:
            try:
                stamped = stamp(os.stat(path))
            except OSError:
                return None
            digest = self.stamps.digest(os.path.abspath(path), stamped)
            if digest is None:
                if len(edited) == MAX_REUSED_EDITS:
                    return None
                edited[path] = self._within_size([SourceFile.read(path)])[0]
                digest = _content_key(edited[path])
            contents[path] = digest

        def source_of(path: str) -> SourceFile:
            # a file the ledger's check saw otherwise may keep the stamp another check of the
            # same file recorded (the folder named by another path): read it here
            if path not in edited:
                edited[path] = self._within_size([SourceFile.read(path)])[0]
            return edited[path]

        diagnostics = self._cached_run(*self._keys_of_files(contents, None, None, False), contents, source_of)
        if diagnostics is None:
            return None
        self._remember_stamps(edited.values())
        sources = self._within_size([SourceFile.read(p) for p in sorted({d.path for d in diagnostics})])
        result = RunResult(sources={s.path: s for s in sources}, files=len(files), diagnostics=diagnostics)
        result.fixed_texts = Texts(sources)
        result.unsafe_held_back = _held_back(diagnostics, unsafe)
        return result

    def _remember_stamps(self, sources: Sequence[SourceFile]) -> None:
        if self.stamps is None:
            return
        for src in sources:
            if src.stamp is not None and src.digest and not src.unsaved:
                self.stamps.put(os.path.abspath(src.path), src.stamp, src.digest)
        self.stamps.save()

    def _judge_texts(
        self,
        current: Sequence[SourceFile],
        names: Optional[Dict[str, tuple]],
        only: Optional[Collection[str]],
        related: bool,
    ) -> List[Diagnostic]:
        """Facts and findings of the sources as they are now. A notebook's ``%%writefile x.py``
        cells are checked as the modules they write (``written.py``): the notebook's own module
        is read without them, and their findings are moved into their cells. A config file it
        writes (``%%writefile config.yaml``) is read from its cell by a script that loads it."""
        texts = Texts(current)
        lines = {
            s.path: s.notebook.command_lines
            for s in current
            if s.notebook is not None
        }
        kernels = {s.path: s.notebook.kernel_python for s in current if s.notebook is not None and s.notebook.kernel_python}
        rows = {s.path: s.notebook.command_rows for s in current if s.notebook is not None}
        if not any(s.notebook is not None and s.text is not None and s.notebook.writes_files for s in current):
            return self.judge(self.facts(current, names), texts, only, related, notebook_lines=lines, kernels=kernels, notebook_rows=rows)
        from .workspace import written

        sources: List[SourceFile] = []
        names = dict(names or {})
        found: List[written.WrittenModule] = []
        judged = dict(texts)
        for src in current:
            modules = []
            if src.notebook is not None and src.text is not None and src.notebook.writes_files:
                naming = names.get(src.path) or module_name(src.path)
                modules = written.modules(src.path, src.notebook, src.text, naming)
            if not modules:
                sources.append(src)
                continue
            judged[src.path] = written.masked(src.text, modules)
            sources.append(dataclasses.replace(src, text=judged[src.path]))
            sources.extend(written.sources(src, modules))
            for m in modules:
                if not m.is_config:
                    judged[m.path] = m.text
                    names[m.path] = m.naming
            found.extend(modules)
        if only is not None:
            only = set(only) | {m.path for m in found if m.notebook in only}
        # a copy on disk of a file a notebook writes is not what imports find: the cell's is
        overwritten = {_same_file(m.file) for m in found if m.file and not m.is_config}
        for src in current:
            if src.notebook is None and _same_file(src.path) in overwritten:
                name, is_package, root = names.get(src.path) or module_name(src.path)
                names[src.path] = (f"{name}-overwritten", is_package, root)
        configs = written.config_files(found)
        configs = ConfigFiles(written=configs, max_bytes=self.config.max_file_size) if configs else None
        files = {m.path: m.file for m in found if m.file and not m.is_config}
        diagnostics = self.judge(self.facts(sources, names), judged, only, related, configs, lines, files, kernels, rows)
        if not found:
            return diagnostics
        remap = written.Remapper(found, texts)
        moved = sorted((remap.diagnostic(d) for d in diagnostics), key=Diagnostic.sort_key)
        return _dedupe(moved)

    def run_paths(self, paths: Sequence[str], fix: bool = False, unsafe: bool = False) -> RunResult:
        self.import_roots = ImportRoots(self.config.src)
        files = discover(paths, self.config.exclude, self.config.root)
        if not fix and self.runs is not None and self.stamps is not None and all(os.path.isdir(p) for p in paths):
            unchanged = self._unchanged_run(files, unsafe)  # folders only: no file is named, none joins from outside
            if unchanged is not None:
                return unchanged
        read = [SourceFile.read(p) for p in files]
        self._remember_stamps(read)
        sources = self._within_size(read)
        return self._run_named(paths, sources, fix, unsafe)

    def _run_named(self, paths: Sequence[str], sources: List[SourceFile], fix: bool, unsafe: bool) -> RunResult:
        named = [s.path for s in sources if os.path.isfile(s.path) and any(_same_file(s.path) == _same_file(p) for p in paths)]
        if not named:
            return self.run_sources(sources, fix=fix, unsafe=unsafe)
        # files named one by one (pre-commit, an editor): read their unit on disk as well
        self._named_files = len(named)
        try:
            neighbours = self._neighbours(sources, named)
        finally:
            self._named_files = 0
        if not neighbours:
            return self.run_sources(sources, fix=fix, unsafe=unsafe)
        result = self.run_sources(
            [*sources, *neighbours], fix=fix, unsafe=unsafe, only={s.path for s in sources}, related=True
        )
        result.files = len(sources)
        return result

    def run_piped(self, src: SourceFile, fix: bool = False, unsafe: bool = False) -> RunResult:
        """Text piped in as the file ``src.path`` where no configuration marks its project: it is
        joined with the files it would join on disk when named alone (``_neighbours``: the local
        modules it imports, also from the project root above a ``scripts/`` folder, and the
        modules that import it), and only it is judged and fixed."""
        self.import_roots = ImportRoots(self.config.src)
        neighbours = self._neighbours([src], [src.path])
        return self.run_sources([src, *neighbours], fix=fix, unsafe=unsafe, only={src.path})

    def _neighbours(self, sources: Sequence[SourceFile], named: Sequence[str]) -> List[SourceFile]:
        """The files the named files join with on disk (``neighbours.py``): the local modules
        they import, and the modules of their projects that import them."""
        from .workspace import neighbours

        have = {_same_file(s.path) for s in sources}
        read: Dict[str, SourceFile] = {}

        def source(path: str) -> SourceFile:
            if path not in read:
                read[path] = next((s for s in sources if s.path == path), None) or SourceFile.read(path)
            return read[path]

        def imports_of(path: str) -> Sequence[str]:
            return self._facts_imports(source(path))

        def roots_of(path: str) -> Sequence[str]:
            return self.import_roots(path, module_name(path)[2])

        roots = {p: self.import_roots.project_root(p) for p in named}
        importers = neighbours.importer_candidates(named, roots, self.config.exclude, self.config.root)
        # the local modules the named files and their importers import: every unit they are in
        found = importers + neighbours.imported_closure([*named, *importers], imports_of, roots_of)
        out, seen = [], set(have)
        for path in found:
            key = _same_file(path)
            if key not in seen:
                seen.add(key)
                out.append(source(_shown_path(path)))
        return out

    def _within_size(self, sources: Sequence[SourceFile]) -> List[SourceFile]:
        """The sources, those with more code than ``max-file-size`` without their text: they are
        not read further, and MP002 says so (a notebook counts its code cells, not its outputs)."""
        from .workspace.config import format_sizes

        limit = self.config.max_file_size
        out: List[SourceFile] = []
        for src in sources:
            size = len(src.utf8()) if src.has_text and limit else 0
            if limit and size > limit:
                shown, limit_shown = format_sizes(size, limit)
                why = (
                    f"{shown} of code is more than max-file-size ({limit_shown}); "
                    "raise `max-file-size` in [tool.precision-lint] to check it"
                )
                src = dataclasses.replace(src, raw=src.content(), text=None, error=why, error_kind="size", notebook=None)
            out.append(src)
        return out

    def run_buffers(
        self,
        buffers: Sequence[SourceFile],
        root: Optional[str],
        fix: bool = False,
        unsafe: bool = False,
        read: Callable[[str], SourceFile] = SourceFile.read,
        only: Optional[Collection[str]] = None,
    ) -> RunResult:
        """Check texts that are not saved yet (an editor's buffers, stdin) as the files they name.

        The project is what ``precision-lint ROOT`` would check; each buffer takes its file's
        place (or joins it, for a new file), so an unsaved ``train.py`` meets the model loader
        it imports as it would on disk. Only the buffers (or the paths in ``only``) are judged
        and fixed. ``read`` reads the other files (the language server passes one that
        remembers unchanged files).
        """
        mine = {_same_file(b.path) for b in buffers}
        on_disk = discover([root], self.config.exclude, self.config.root) if root and os.path.isdir(root) else []
        others = self._within_size([read(p) for p in on_disk if _same_file(p) not in mine])
        judged = set(only) if only is not None else {b.path for b in buffers}
        return self.run_sources([*buffers, *others], fix=fix, unsafe=unsafe, only=judged)


def _content_key(src: SourceFile) -> str:
    """What a cached run knows a file's content by: the digest of its bytes (a file that could
    not be read has none: its error is the content); a text made in memory, by its text."""
    if src.error_kind == "read":
        return f"unreadable: {src.error}"
    if src.digest:
        return src.digest
    return "text:" + hashlib.sha1(src.utf8()).hexdigest()


def _shown_path(path: str) -> str:
    """A path found on disk as the named paths are usually given: relative to the working
    directory when it lies inside it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _error_line(message: str) -> int:
    """The line a decoding error names (``..., line 3)``), else 1."""
    match = re.search(r"\bline (\d+)\)", message)
    return int(match.group(1)) if match else 1


def _same_file(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))


def _notebook_problem(src: Optional[SourceFile], text: str) -> Optional[str]:
    """Why fixed text could not be written back into a notebook's cells (None: it can)."""
    if src is None or src.notebook is None:
        return None
    from .workspace.notebook import NotebookError

    try:
        src.notebook.cell_sources(text)
    except NotebookError as exc:
        return str(exc)
    return None


def _in_part(d: Diagnostic, path: str, first: int, last: Optional[int]) -> bool:
    """Whether a finding of one part of a notebook (rows ``first`` to ``last``, None: its end) is
    that part's: one in its rows, or, for the last part, one in another file (what the
    notebook ends with is what the files it reads are judged with)."""
    if d.path != path:
        return last is None
    return first <= d.span.line and (last is None or d.span.line <= last)


def _unfixed_where_unchecked(diagnostics: List[Diagnostic]) -> List[Diagnostic]:
    """The findings, none with a fix in a file an internal error stopped (MP003) or MP000 says
    Python refuses: what was not checked whole is never rewritten, nor is what does not compile
    (a `.py` file of notebook code that the project runs with Python: ``rules/mp000_syntax_error.py``)."""
    stopped = {d.path for d in diagnostics if d.code in (internal.CODE, "MP000")}
    if not stopped:
        return diagnostics
    return [dataclasses.replace(d, fix=None) if d.path in stopped and d.fix is not None else d for d in diagnostics]


def _dedupe(diagnostics: Iterable[Diagnostic]) -> List[Diagnostic]:
    seen = set()
    out = []
    for d in diagnostics:
        key = (d.code, d.path, d.span, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


# --- the library API ---------------------------------------------------------------------
def _engine(config: Optional[Config], select: Optional[Sequence[str]]) -> Engine:
    config = config or from_table({}, "defaults")
    codes = selected_codes(config, select) if select is not None else None
    return Engine(config, codes, jobs=1)


def _text_source(source: str, path: str) -> Tuple[SourceFile, Optional[bool]]:
    """``source`` as the file ``path``: Python text; for a notebook path, the notebook's JSON or,
    when it is not JSON, the code of one cell (IPython lines such as ``%pip install`` or
    ``!nvidia-smi`` are skipped, as ``check`` skips them). The flag says which (None: Python)."""
    from .workspace.notebook import from_cells, is_databricks, is_notebook

    if is_databricks(path, source):  # a Databricks notebook in source form: read as its cells
        return SourceFile.from_bytes(path, source.encode("utf-8")), None
    if not is_notebook(path):
        return SourceFile(path, source.encode("utf-8"), source), None
    as_json = source.lstrip().startswith("{")
    raw = source.encode("utf-8") if as_json else from_cells([source])
    return SourceFile.from_bytes(path, raw), as_json


def check_source(source: str, path: str = "x.py", config: Optional[Config] = None, select=None) -> List[Diagnostic]:
    """Diagnostics for one module given as text (it is its own project). With a ``.ipynb`` path,
    ``source`` is a notebook's JSON or one cell's code, IPython lines and all."""
    name = os.path.splitext(os.path.basename(path))[0]
    src, _ = _text_source(source, path)
    return _engine(config, select).run_sources([src], names={path: (name, False, "")}).diagnostics


def fix_source(
    source: str, path: str = "x.py", config: Optional[Config] = None, unsafe: bool = False, select=None
) -> str:
    """``source`` with every applicable fix applied (to a fixpoint); for a notebook path, the
    notebook's JSON (or the cell's code) with the fixed cells."""
    name = os.path.splitext(os.path.basename(path))[0]
    src, as_json = _text_source(source, path)
    result = _engine(config, select).run_sources([src], fix=True, unsafe=unsafe, names={path: (name, False, "")})
    fixed = result.fixed_texts.get(path)
    if as_json is None and src.notebook is not None:  # a Databricks source notebook: its own text back
        from .workspace.notebook import NotebookError

        try:
            return src.notebook.file_text(fixed) if fixed is not None else source
        except NotebookError:
            return source
    if as_json is None:
        return fixed if fixed is not None else source
    if fixed is None or fixed == src.text or src.notebook is None:
        return source
    from .workspace.notebook import NotebookError

    try:
        if as_json:
            return src.notebook.encode(fixed).decode("utf-8")
        return src.notebook.cell_sources(fixed)[0]
    except NotebookError:  # the engine refuses such fixes first; never return a broken notebook
        return source


def check_paths(paths: Sequence[str], config: Optional[Config] = None, select=None) -> List[Diagnostic]:
    return _engine(config, select).run_paths(paths).diagnostics
