"""Per-file precision facts: plain, picklable data.

A :class:`ModuleFacts` is everything the rules may know about one file. It is
computed from the file's text alone (so it can be cached by content hash and
built in worker processes) and joined with the facts of other files in
``project.py``. Domain extractors (``facts/extractors/*.py``) fill ``sections``.
"""
from __future__ import annotations

import dataclasses
import sys
from dataclasses import field
from .._dataclass import dataclass
from typing import Any, Callable, Dict, FrozenSet, Optional, Tuple

from ..diagnostics import Span
from ..semantic.records import CallArg, CallRecord, ParseError  # noqa: F401  (part of the facts' data)

STAR_EXPORT = "*"  # the prefix of an export entry that stands for a `from x import *`


@dataclass(frozen=True, slots=True)
class ClassFact:
    """A class as other files see it: its bases and members, so that the join can tell a
    project subclass of a library class (a Trainer, a TrainingArguments) from an unrelated one.
    (``slots=True``: one per class of the tree, 15,000 in transformers, #23.)"""

    qualname: str
    bases: Tuple[str, ...]
    self_attrs: Tuple[str, ...]
    init_params: Optional[Tuple[str, ...]] = None  # its own __init__'s parameters, if defined
    # names its body defines: fields (`x: int = 0`), class attributes, methods and properties
    members: Tuple[str, ...] = ()
    # its annotated fields (`x: Optional[str] = None`): a dataclass's __init__ takes them
    fields: Tuple[str, ...] = ()


@dataclass(frozen=True)
class ProbeFact:
    """A module-level capability probe such as ``BF16_OK = ... >= 8``."""

    name: str
    span: Span


@dataclass(frozen=True)
class Layout:
    """Where module-level code can be inserted, and what is already imported."""

    insert_at: int  # offset after the docstring / __future__ / leading imports
    torch_name: Optional[str]  # local name bound to the torch module (None: not imported)
    probes: Tuple[ProbeFact, ...] = ()
    newline: str = "\n"
    blank_after: bool = True  # a blank line (or the end of the file) follows insert_at
    # The name a new capability probe takes: ``BF16_OK`` unless the module already uses it.
    probe_name: str = "BF16_OK"
    # The top-level import lines of the import block, in order: where a missing import goes
    # in sorted position (plan.import_edit).
    imports: Tuple["ImportLine", ...] = ()
    # The name of a new cached probe function (``bf16_ok``), and the module's own name for
    # ``functools`` ("" when it is not imported): see plan.capability_probe(lazy=True).
    lazy_probe_name: str = "bf16_ok"
    functools_name: str = ""
    blank_lines_after: int = 1  # blank lines between insert_at and the code that follows (2: none follows)


@dataclass(frozen=True, slots=True)
class ImportLine:
    """One top-level import line as isort/ruff sort it. (``slots=True``: 25,000 in transformers, #23.)"""

    start: int
    end: int  # after its newline
    section: str  # "future", "stdlib", "third" (any other absolute import) or "local" (relative)
    plain: bool  # ``import x`` (sorted before ``from x import y`` within a section)
    key: str  # the module name, lower-cased
    blank_after: bool = False  # a blank line (or the end of the file) follows it


@dataclass
class ModuleFacts:
    """Everything the analysis keeps of one file: each extractor's section and what the join
    needs (imports, classes, calls, summaries). Plain data, so a worker process returns it and
    the cache stores it; rules judge it, never the syntax tree."""

    path: str
    module: str
    is_package: bool = False
    root: str = ""  # the folder the module name is relative to
    parse_error: Optional[ParseError] = None
    # a notebook's code cells that do not compile, each its own MP000 (the others are checked)
    cell_errors: Tuple[ParseError, ...] = ()
    parsed: bool = False  # False also when the text cannot hold any finding
    skip_file: bool = False
    imports: Tuple[str, ...] = ()  # dotted names of modules this one may import
    # those of them imported only for a type checker (`if TYPE_CHECKING:`): named, never run
    type_checking_imports: Tuple[str, ...] = ()
    # those of them imported only under an `if` (`if args.use_unsloth: from unsloth import ...`):
    # run in some runs, not all (a patching library patches only those)
    conditional_imports: Tuple[str, ...] = ()
    classes: Tuple[ClassFact, ...] = ()
    layout: Optional[Layout] = None
    noqa: Dict[int, Optional[FrozenSet[str]]] = field(default_factory=dict)
    sections: Dict[str, Any] = field(default_factory=dict)
    # the sections holding a value the join substitutes (``values.awaits_join``): the rest are
    # final as extracted, and each run's join passes them by
    to_join: FrozenSet[str] = frozenset()
    # what the join will ask of other modules to substitute them (``values.join_questions``):
    # the functions whose callers' records and the callees whose return summaries they name
    asks: Tuple[Tuple[str, ...], Tuple[str, ...]] = ((), ())
    # module-level names bound to something defined elsewhere: (local name, qualified name),
    # from imports and simple aliases (re-exports through a package `__init__`)
    exports: Tuple[Tuple[str, str], ...] = ()
    definitions: FrozenSet[str] = frozenset()  # names of module-level functions and classes
    calls: Tuple[CallRecord, ...] = ()  # calls of project code, for values across calls (see call_records)
    call_callees: Tuple[str, ...] = ()  # each call record's callee, in order: what the join indexes them by
    functions: Tuple[str, ...] = ()  # qualified names of every function and method defined here
    call_edges: Tuple[Tuple[str, str], ...] = ()  # (calling function or module, callee)
    # (object, command): a function a decorator registers with a project object that runs one
    # of its commands per process when called (`@app.command()`, `@cli.command()`)
    registered: Tuple[Tuple[str, str], ...] = ()
    # per-function summaries: what a function may return, for callers in other files
    # (function qualname, Possible atoms; parameters, config values and calls stay symbolic)
    returns: Tuple[Tuple[str, Tuple[Any, ...]], ...] = ()
    # (first, last) lines of its top-level `if __name__ == "__main__":` blocks: code that runs
    # only when this module is the script, never when it is imported (``facts/main_block.py``)
    main_lines: Tuple[Tuple[int, int], ...] = ()
    # its top level does something besides binding names (a call statement, a loop, a `with`):
    # it is written to be run, so a function of it nothing calls may be run by a hand-over the
    # join cannot see; a module of imports, definitions and assignments only is not (``programs.py``)
    acts: bool = False
    # names its top level reads that nothing in it binds (``semantic/programs.session_names``):
    # a piece of a session, run after another piece bound them; and the names its top level binds
    session_names: Tuple[str, ...] = ()
    top_names: FrozenSet[str] = frozenset()
    # the modules its top level imports outside any `try`/`if` that the join follows: those of
    # the tree, and library modules a release removed (``extract._top_imports``)
    top_imports: Tuple[str, ...] = ()
    # the versions its own text states (``require_version("trl>=0.8")``, ``check_min_version``:
    # ``versions.in_file_requirements``): they hold for it and for what it imports, so the join
    # reads them here, never the text again (a run that reuses the findings of unchanged files
    # must know every way one file's text reaches another's findings, ``workspace/ledger.py``)
    requirements: Tuple[Any, ...] = ()
    # Where ``calls`` and ``returns`` are DEFERRED (a check of many files: see DEFERRED), what
    # works them out when the join first asks (set by the engine; never pickled or compared)
    summarise: Optional[Callable[[], Tuple[tuple, tuple]]] = field(default=None, compare=False, repr=False)

    def section(self, name: str):
        value = self.sections.get(name, ())
        if type(value) is PackedSection:  # unpickled on first use (see PACKED)
            value = self.sections[name] = value.unpacked()
        return value

    def exports_map(self) -> Dict[str, str]:
        """Each exported name's target. Asked at each step of every name the join resolves
        through this module: kept beside the tuple it was made from (as ``class_named``'s
        table; never pickled, see ``__getstate__``). Read it, never change it."""
        cached = self.__dict__.get("_exports_by_name")
        if cached is None or cached[0] is not self.exports:
            cached = self._exports_by_name = (self.exports, dict(self.exports))
        return cached[1]

    def defines(self, name: str) -> bool:
        return name in self.definitions

    def call_records(self) -> Tuple[CallRecord, ...]:
        """Its call records (``calls``), made into objects on first use where they were
        unpickled packed (see PACKED)."""
        return self._unpacked("calls")

    def _unpacked(self, name: str):
        """The field ``name`` (one of PACKED_FIELDS), made into its objects on first use, and
        worked out on first use where it was DEFERRED."""
        value = getattr(self, name)
        if value is DEFERRED:
            self.complete_summaries()
            value = getattr(self, name)
        if type(value) is PackedSection:
            value = value.unpacked()
            setattr(self, name, value)
        return value

    @property
    def summaries_deferred(self) -> bool:
        return self.calls is DEFERRED or self.returns is DEFERRED

    def complete_summaries(self) -> None:
        """Its call records and return summaries, where they were DEFERRED: worked out now."""
        if not self.summaries_deferred:
            return
        if self.summarise is None:
            raise RuntimeError(f"the call summaries of {self.path} were deferred and nothing can work them out")
        self.calls, self.returns = self.summarise()

    def returns_of(self, qualname: str) -> Optional[Tuple[Any, ...]]:
        for name, values in self._unpacked("returns"):
            if name == qualname:
                return values
        return None

    def class_named(self, qualname: str) -> Optional[ClassFact]:
        # asked for every name the join resolves (ancestry, init_owner): a lookup, not a scan;
        # kept beside the tuple it was made from, never pickled (see __getstate__)
        cached = self.__dict__.get("_classes_by_name")
        if cached is None or cached[0] is not self.classes:
            by_name: Dict[str, ClassFact] = {}
            for c in self.classes:
                by_name.setdefault(c.qualname, c)  # the first, as the scan found it
            cached = self._classes_by_name = (self.classes, by_name)
        return cached[1].get(qualname)

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("summarise", None)
        state.pop("_classes_by_name", None)
        state.pop("_exports_by_name", None)
        for name in PACKED_FIELDS:
            if state.get(name) and state[name] is not DEFERRED:
                state[name] = PackedSection.of(state[name])
        sections = state.get("sections")
        if sections and any(name in sections and name not in self.to_join for name in PACKED):
            state["sections"] = {
                name: PackedSection.of(value) if name in PACKED and name not in self.to_join else value
                for name, value in sections.items()
            }
        return state

    def __setstate__(self, state) -> None:
        self.__dict__.update(_interned_names(state))
        self.__dict__.setdefault("summarise", None)


# Sections that only a question about a few modules reads, kept as the bytes they were pickled
# to until one is asked for (``ModuleFacts.section``): the trained-object summaries are a fifth
# of a module's pickled facts on transformers (11 of 55 MB), and only ``project/trained.py``
# reads them, when a rule asks what trains a model; a run with one file edited unpickled all of
# them for nothing (#23). A section the join substitutes (``to_join``) is never packed. So are
# a module's call records (``calls``, read through ``call_records`` where the join asks what
# its callers pass a function: 33 of transformers' 2,860 modules, 1.3 s of unpickling for the
# others; the join indexes them by ``call_callees``) and its return summaries (``returns``,
# read only through ``returns_of``, when the join substitutes a call of one of its functions:
# never, on transformers, 0.3 s).
PACKED = frozenset({"trained"})
PACKED_FIELDS = ("calls", "returns")


class _Deferred:
    """DEFERRED: a module's call records and return summaries (``calls``, ``returns``) not
    worked out when its other facts were. They are two fifths of extracting a module (#23: the
    taint walks of every argument and return value), and the join reads them only where it
    substitutes a parameter or a call across files: on transformers, those of 34 of its 2,860
    modules. A check of many files defers them; before the join the engine works out those its
    questions will read (``ModuleFacts.asks``, ``CallGraphValues.prefetch_summaries``), and a
    question that reaches one another way works it out then (``ModuleFacts.summarise``, the
    engine's), once; the engine keeps the completed facts. One object, pickled by name."""

    __slots__ = ()

    def __reduce__(self):
        return "DEFERRED"

    def __repr__(self) -> str:
        return "DEFERRED"

    def __bool__(self) -> bool:
        return True


DEFERRED = _Deferred()


class PackedSection:
    """A section's value pickled on its own: made into its objects on first use."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    @classmethod
    def of(cls, value) -> "PackedSection":
        if type(value) is cls:
            return value
        import pickle

        return cls(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))

    def unpacked(self):
        import pickle

        return pickle.loads(self.data)

    def __reduce__(self):
        return (PackedSection, (self.data,))

    def __eq__(self, other) -> bool:
        return type(other) is PackedSection and other.data == self.data

    def __hash__(self) -> int:
        return hash(self.data)


class FactsAsked:
    """What the joins of one check asked of the facts that are read by question: the return
    summaries asked of each module (``returns_of``: a function's, a module variable's) and the
    names asked of what its top level binds (a starred import's, a session piece's). Every other
    fact is read whole. A later check whose edited file changed only entries nobody asked (a
    module constant nothing imports: a summary and a top-level name more) asks the same
    questions and gets the same answers: the ledger keeps the findings (``workspace/ledger.py``,
    :func:`same_facts`). Every read of those two facts by the join goes through here."""

    __slots__ = ("returns", "top")

    def __init__(self) -> None:
        self.returns: Dict[str, set] = {}  # path → the qualified names asked of its summaries
        self.top: Dict[str, set] = {}  # path → the names asked of what its top level binds

    def returns_of(self, module: "ModuleFacts", qualname: str) -> Optional[Tuple[Any, ...]]:
        """``module.returns_of(qualname)``, noted."""
        self.returns.setdefault(module.path, set()).add(qualname)
        return module.returns_of(qualname)

    def binds_at_top(self, module: "ModuleFacts", names: FrozenSet[str]) -> FrozenSet[str]:
        """The names of ``names`` that ``module``'s top level binds, noted."""
        self.top.setdefault(module.path, set()).update(names)
        return (module.top_names or frozenset()) & names

    def of(self, path: str) -> "Asked":
        """What was asked of the module at ``path``: (summaries, top-level names)."""
        return frozenset(self.returns.get(path, ())), frozenset(self.top.get(path, ()))

    def kept(self) -> Dict[str, "Asked"]:
        """Every module's :meth:`of`, where anything was asked: what a ledger keeps."""
        return {path: self.of(path) for path in {*self.returns, *self.top}}


Asked = Tuple[FrozenSet[str], FrozenSet[str]]  # (summaries asked, top-level names asked)
NOTHING_ASKED: Asked = (frozenset(), frozenset())


def same_facts(before: ModuleFacts, now: ModuleFacts, asked: Optional[Asked] = None) -> bool:
    """Whether two facts of a file are equal for the findings of a check that read
    ``before``, either of them unpickled packed (see PACKED): a file whose text changed where no
    fact of it is (a comment, a constant nothing reads) gives the same facts, and a run may keep
    the findings that read only them (``workspace/ledger.py``).

    Summaries ``before`` still has DEFERRED were never asked by that check's join (the engine
    keeps them once asked): its findings did not read them, and with every other fact the same
    the join asks the same questions of ``now``'s, so they are not compared. Otherwise
    ``now``'s are worked out and compared: whole, or, with ``asked`` (what that check's joins
    asked of the file, :class:`FactsAsked`), the return summaries and top-level names asked
    only. With every fact read whole the same, and the same answer to each question asked,
    the join asks the same questions again."""
    if before.summaries_deferred:
        now = dataclasses.replace(now, calls=before.calls, returns=before.returns)
    else:
        now.complete_summaries()
    if asked is not None:
        summaries, names = asked
        if (before.top_names or frozenset()) & names != (now.top_names or frozenset()) & names:
            return False
        if not before.summaries_deferred and any(before.returns_of(n) != now.returns_of(n) for n in summaries):
            return False
        now = dataclasses.replace(now, returns=before.returns, top_names=before.top_names)
    for facts in (before, now):
        for name in PACKED_FIELDS:
            if getattr(facts, name) is not DEFERRED:
                facts._unpacked(name)
        for name in list(facts.sections):
            facts.section(name)
    return before == now


def _interned_names(state: dict) -> dict:
    """A module's facts as unpickled (``state``: its ``__dict__``), with the names the join reads
    of every module (its imports, exports, functions, callers and callees, its classes' bases
    and members, its section names) one object across the modules of the process
    (``sys.intern``). Pickle keeps a name used twice in one module's facts as one object, but
    every module that names ``torch.nn.Module`` unpickles a copy of its own: on transformers,
    the parent that holds every module's facts held 25 MB of such copies (#23)."""
    for name in ("module", "root"):
        if name in state:
            state[name] = _name(state[name])
    for name in ("imports", "type_checking_imports", "conditional_imports", "functions", "top_imports", "call_callees"):
        if state.get(name):
            state[name] = _names(state[name])
    for name in ("exports", "call_edges", "registered"):
        if state.get(name):
            state[name] = _pairs(state[name])
    if state.get("definitions"):
        state["definitions"] = frozenset(_names(state["definitions"]))
    if state.get("sections"):
        state["sections"] = {_name(key): value for key, value in state["sections"].items()}
    for cls in state.get("classes", ()):  # a class's facts belong to its module: set in place
        for name in ("qualname", "bases", "self_attrs", "init_params", "members", "fields"):
            value = getattr(cls, name)
            object.__setattr__(cls, name, _names(value) if type(value) is tuple else _name(value))
    return state


def _name(value):
    return sys.intern(value) if type(value) is str else value


_intern = sys.intern


def _names(values) -> tuple:
    try:
        return tuple(map(_intern, values))  # all of them names (as nearly always): a loop in C
    except TypeError:  # one is not a str (None), or a subclass of it: kept as it is
        return tuple([_intern(v) if type(v) is str else v for v in values])


def _pairs(pairs) -> tuple:
    """``_names`` of each pair (a module's 40 call edges on average, 110,000 on transformers), in
    one loop where each is two names."""
    try:
        return tuple([(_intern(a), _intern(b)) for a, b in pairs])
    except (TypeError, ValueError):
        return tuple([_names(pair) for pair in pairs])
