"""One pass over a parsed module that indexes what the fact extractors ask about.

The index is the only place that walks the module's tree (CPython's ``ast``). It records
scopes and their assignments (with the ``if`` guards around each), function returns and
parameters, imports, class definitions, every call (resolved callee, enclosing ``with``
contexts, guards, the names it is assigned to), argparse options and ``.attr`` uses of
interest. Fact extractors then read the index; they never walk the tree themselves. The index
holds ``ast`` nodes and is therefore process-local: what leaves a worker are the plain-data
facts built from it.
"""
from __future__ import annotations

import ast
import bisect
import dataclasses
import re
from dataclasses import field
from .._dataclass import dataclass
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Set, Tuple, Union

from ..diagnostics import Span
from .positions import Positions
from .tree import call_order, children, nodes_of, ordered  # noqa: F401  (children, nodes_of: the index's API)
from ..knowledge import migrated_names
from .names import ImportMap, dotted
from .._regex import lazy

FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_TRY_STAR = getattr(ast, "TryStar", None)
_TRIES = (ast.Try, _TRY_STAR) if _TRY_STAR is not None else (ast.Try,)

# `.attr` names whose uses are recorded (receiver kind decides what they mean).
# Attribute reads recorded for the rules: `x.tokenizer` (MP301) and the removed names of the
# migration table (`tok.encode_plus`, `transformers.TRANSFORMERS_CACHE`).
TRACKED_ATTRS = frozenset({"tokenizer"}) | migrated_names("attribute") | migrated_names("import")

# (test expression, branch taken when the test is true)
GuardNode = Tuple[ast.expr, bool]


@dataclass
class Assignment:
    """One binding of a name (an assignment, an import, a ``def``, a loop target), with the
    conditions it is made under: the evaluator reads a name's possible values from them."""

    value: Optional[ast.expr]  # None: not statically known (loop target, +=, ...)
    guards: Tuple[GuardNode, ...]
    # the innermost simple statement (``ast.Assign``, ``ast.Import``...), or the ``def``/``class``,
    # ``for``, ``with`` item or walrus that binds
    statement: ast.AST
    unpack_index: Optional[int] = None  # for `a, b = value`: which element
    imported: Optional[str] = None  # an import binding: the qualified name it binds


# The statements that bind a name without giving it a value an analysis can follow: a loop
# target, a ``def``, a ``class`` (for ``Assignment.statement``).
NOT_VALUE_BINDERS = (ast.For, ast.AsyncFor, *FUNCTION_DEFS, ast.ClassDef)


@dataclass
class Scope:
    """A module, class or function body and the names it binds: the look-up follows Python's
    own rules (class bodies are not seen from methods, ``global`` goes to the module)."""

    qualname: str
    kind: str  # "module", "function" or "class"
    parent: Optional["Scope"]
    node: ast.AST  # ast.Module, ast.FunctionDef/AsyncFunctionDef, ast.ClassDef (ast.Lambda)
    assignments: Dict[str, List[Assignment]] = field(default_factory=dict)
    returns: List[Tuple[ast.expr, Tuple[GuardNode, ...]]] = field(default_factory=list)
    params: Dict[str, Optional[ast.expr]] = field(default_factory=dict)
    globals: set = field(default_factory=set)
    positional: Tuple[str, ...] = ()  # parameters a caller may fill by position, in order
    var_keyword: str = ""  # the name of its ``**kwargs`` parameter
    # name → its ``ParamRef``, made once (``evaluate.param_ref``)
    param_refs: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def lookup_scope(self, name: str) -> Optional["Scope"]:
        """The scope whose binding of ``name`` a use in this scope sees.

        One walk outwards, never back in: ``global x`` in a function sends the look-up
        straight to the module scope (and ends there); at module level, where ``global``
        is legal and means nothing, it is ignored. So the walk always ends.
        """
        if name in self.globals and self.kind != "module":
            root = self.module_scope()
            return root if (name in root.assignments or name in root.params) else None
        scope: Optional[Scope] = self
        first = True
        while scope is not None:
            # class bodies are not visible from methods (Python's rule)
            if first or scope.kind != "class":
                if name in scope.assignments or name in scope.params:
                    return scope
            first = False
            scope = scope.parent
        return None

    def is_import(self, name: str) -> bool:
        """Whether every binding of ``name`` in this scope is an import."""
        bindings = self.assignments.get(name)
        return bool(bindings) and name not in self.params and all(b.imported is not None for b in bindings)

    def code_scope(self) -> "Scope":
        """The function or module whose code runs here (a class body belongs to its surroundings)."""
        scope = self
        while scope.kind == "class" and scope.parent is not None:
            scope = scope.parent
        return scope

    def module_scope(self) -> "Scope":
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope


@dataclass
class CallSite:
    """A call with what the extractors ask of it: the resolved callee, the scope, the
    conditions, ``with`` contexts, loops and ``try`` handlers around it."""

    node: ast.Call
    qualname: Optional[str]  # import-resolved callee (None for method calls on values)
    method: Optional[str]  # `x.m(...)` → "m"
    receiver: Optional[ast.expr]  # `x.m(...)` → x
    scope: Scope
    guards: Tuple[GuardNode, ...]
    contexts: Tuple[str, ...]  # qualnames of enclosing `with` items, innermost last
    klass: Optional[str]  # enclosing class qualname
    assigned_to: Tuple[str, ...] = ()  # `a = b = call(...)` → ("a", "b")
    loops: Tuple["ForLoop", ...] = ()  # enclosing for-loops, innermost last
    # the innermost simple statement around the call (``ast.Expr``, ``ast.Assign``...); None
    # in a compound statement's header (an ``if`` test, a ``for`` iterable, a decorator)
    statement: Optional[ast.stmt] = None
    # the enclosing `with` item expressions themselves (parallel to ``contexts``), so that
    # their arguments (`torch.autocast(..., enabled=False)`) can be evaluated
    context_items: Tuple[ast.expr, ...] = ()
    # exceptions caught around it: the names of enclosing `try` bodies' handlers ("*": a bare
    # `except:`), and "<handler>" inside an `except` block (code that runs only after a failure)
    caught: Tuple[str, ...] = ()
    # the tests of the conditional expressions it is a branch of (`autocast(...) if args.bf16
    # else nullcontext()`): it runs only where they hold, as under an `if`; kept apart from
    # ``guards``, which most questions read as the statement's conditions
    expression_guards: Tuple[GuardNode, ...] = ()

    @property
    def every_guard(self) -> Tuple[GuardNode, ...]:
        """The tests the call runs under: its statements' and its conditional expressions'."""
        return (*self.guards, *self.expression_guards)


@dataclass
class ClassInfo:
    """A class defined in the module: its resolved bases, its own ``__init__`` parameters and
    the attributes its methods set on ``self``, for reading ``self.x`` in its methods."""

    qualname: str
    name: str
    bases: Tuple[str, ...]  # resolved qualnames (unresolvable bases are left out)
    node: ast.ClassDef
    self_attrs: set = field(default_factory=set)  # attributes assigned on `self` in methods
    init_params: Optional[Tuple[str, ...]] = None  # parameters of its own __init__, if it defines one
    more_nodes: List[ast.ClassDef] = field(default_factory=list)  # other definitions of the same name
    # `self.x = value` in its methods: attribute → [(assignment, the method's scope)]
    self_attr_values: Dict[str, List[Tuple["Assignment", "Scope"]]] = field(default_factory=dict)


@dataclass
class AttrUse:
    """An attribute read with the scope, class and conditions around it, so that extractors
    can ask what its receiver is where it is read."""

    node: ast.Attribute
    base: ast.expr
    attr: str
    scope: Scope
    klass: Optional[str]
    # the conditions it is read under (`if` statements, and `a if test else b` around it) and
    # the exceptions caught around it (see CallSite.caught)
    guards: Tuple[Tuple[ast.expr, bool], ...] = ()
    caught: Tuple[str, ...] = ()


@dataclass
class AttrAssign:
    """``x.attr = value`` (e.g. ``p.requires_grad = False`` inside a loop)."""

    target: ast.Attribute
    value: ast.expr
    scope: Scope
    loops: Tuple["ForLoop", ...]  # enclosing for-loops, innermost last
    guards: Tuple[GuardNode, ...] = ()  # the `if` conditions around it


@dataclass
class ItemAssign:
    """``d["k"] = value`` (a dict filled after it is built)."""

    key: ast.expr
    value: ast.expr
    scope: "Scope"
    guards: Tuple[GuardNode, ...]
    statement: ast.stmt  # the assignment


@dataclass
class ItemDelete:
    """``del d["k"]``: a key taken out of a dict after it is built."""

    key: ast.expr
    scope: "Scope"
    guards: Tuple[GuardNode, ...]
    statement: ast.stmt  # the ``del``


@dataclass
class HalfMisfit:
    """A numeric literal that float16 cannot hold (beyond ±65504, or so small that it rounds
    to 0), written as an operand of arithmetic (``(1 - mask) * -1e9``, ``norm + 1e-8``) or
    assigned into a subscript (``x[mask] = -1e20``). Calls with such arguments
    (``masked_fill(mask, -1e9)``) are found through :attr:`ModuleIndex.calls`."""

    node: ast.AST  # the BinOp, or the Assign
    literal: ast.expr  # the literal (with its minus sign)
    value: float
    other: ast.expr  # the other operand, or the subscript target's base
    kind: str  # "binary" or "subscript"
    scope: "Scope"
    klass: Optional[str]
    context_items: Tuple[ast.expr, ...]  # enclosing `with` items, innermost last


@dataclass
class MatmulSite:
    """An ``a @ b``: where it is, and the ``with`` items around it (autocast runs it in
    float16 like ``torch.matmul``)."""

    node: ast.BinOp
    scope: "Scope"
    contexts: Tuple[str, ...]  # qualnames of enclosing `with` items, innermost last
    context_items: Tuple[ast.expr, ...]


@dataclass
class InplaceUpdate:
    """An augmented assignment ``x += v``, ``x[i] -= v``, ``self.x *= v``: on a tensor it
    updates the tensor in place, and what it computes is cast back to the target's dtype
    (``scores += (1.0 - mask) * -1e9`` rounds a float32 -1e9 into a float16 ``scores``)."""

    node: ast.AugAssign
    scope: "Scope"
    klass: Optional[str]
    guards: Tuple[GuardNode, ...]
    context_items: Tuple[ast.expr, ...]  # enclosing `with` items, innermost last


FP16_MAX = 65504.0
FP16_ROUNDS_TO_ZERO = 2.0 ** -25  # half of float16's smallest subnormal (2**-24)


def number(node: Optional[ast.expr]) -> Optional[float]:
    """The value of a numeric literal, optionally negated (``-1e9``), else None. An ``int`` or
    a ``float`` constant: never a ``bool`` (``True`` is an ``int`` to Python, not a number
    written in the code) nor a complex."""
    sign = 1.0
    while type(node) is ast.UnaryOp and type(node.op) in (ast.USub, ast.UAdd):
        if type(node.op) is ast.USub:
            sign = -sign
        node = node.operand
    if type(node) is ast.Constant and type(node.value) in (int, float):
        try:
            return sign * float(node.value)
        except (OverflowError, ValueError, TypeError):
            return None
    return None


def misfits_half(value: Optional[float]) -> bool:
    """Whether float16 turns ``value`` into ±inf or 0."""
    return value is not None and (abs(value) > FP16_MAX or 0 < abs(value) < FP16_ROUNDS_TO_ZERO)


@dataclass
class ForLoop:
    """A ``for`` loop around a call (``CallSite.loops``): a call inside runs once per
    iteration, and order within a loop body is not order in time."""

    target: ast.expr
    iter: ast.expr
    scope: Scope
    body: Tuple[ast.stmt, ...] = ()  # its statements (an `if ...: continue` in them skips the rest)


@dataclass
class ArgOption:
    """One ``parser.add_argument(...)`` call."""

    dest: str
    call: ast.Call


# bindings_at's memo while the index is being built: never filled (see ModuleIndex._bindings_memo)
_BUILDING: Dict[tuple, tuple] = {}


class ModuleIndex:
    def __init__(self, source: str, module: ast.Module, module_name: str, is_package: bool) -> None:
        self.source = source
        self.module = module
        self.module_name = module_name
        # whether the top level has a `from x import *` of project code (``callees.py``): worked out once
        self.star_imports: Optional[bool] = None
        self.imports = ImportMap(module_name, is_package)
        self.root = Scope(module_name, "module", None, module)
        self.scopes: Dict[str, Scope] = {module_name: self.root}  # by qualname
        self.functions: Dict[str, Scope] = {}
        self.classes: Dict[str, ClassInfo] = {}
        self.calls: List[CallSite] = []
        self.calls_by_node: Dict[int, CallSite] = {}
        self.attr_uses: List[AttrUse] = []
        self.arg_options: Dict[str, List[ArgOption]] = {}
        self.attr_assigns: List[AttrAssign] = []
        self.item_assigns: Dict[str, List[ItemAssign]] = {}  # by the dict's variable name
        self.item_deletes: Dict[str, List[ItemDelete]] = {}  # by the dict's variable name
        self.half_misfits: List[HalfMisfit] = []
        self.matmuls: Dict[int, MatmulSite] = {}  # id(BinOp) → its site
        self.inplace_updates: List[InplaceUpdate] = []  # augmented assignments, in source order
        # `a + name` / `name - b`: the operations whose operand a name is, for named constants
        self.name_operands: List[HalfMisfit] = []
        self._named_misfits: Optional[List[HalfMisfit]] = None
        # id(node) → (pre-order number, number after its last descendant): source order and
        # containment without a positions pass. A block of statements (a function's ``body``,
        # an ``if``'s ``orelse``: a Python list in ``ast``) is numbered like a node.
        self.order_of: Dict[int, Tuple[int, int]] = {}
        # id of the test of each dominating guard whose failing path raises or ends the program
        # (``assert ok``; ``if bad: raise ...`` / ``sys.exit()`` with no ``else``): code after it
        # is not a path that skips something and goes on, it is no path at all
        self.raising_guards: Set[int] = set()
        # (id(test), polarity) of each guard that an early exit above the code sets (``if not ok:
        # sys.exit(1)`` guards what follows with ``ok``): where it fails nothing after it runs
        self.exit_guards: Set[Tuple[int, bool]] = set()
        self.for_loops: List[ForLoop] = []
        self.import_statements: List[ast.stmt] = []
        # statements that are a string alone (`"""docstring"""`, `"note"`, `f"..."`): the
        # docstrings the hardware statements read (workspace/hardware.prose_of)
        self.string_statements: List[ast.Expr] = []
        # every node of these kinds, in source order, noted by the one walk so that no reader
        # walks the whole module again for them (the capability extractor's CUDA marks)
        self.attributes: List[ast.Attribute] = []
        self.constants: List[ast.Constant] = []
        self.joined_strs: List[ast.JoinedStr] = []
        self.formatted_values: List[ast.FormattedValue] = []
        self.subscripts: List[ast.Subscript] = []
        # id(import statement) → (its guards, the exceptions caught around it; see CallSite.caught)
        self.import_context: Dict[int, Tuple[Tuple[GuardNode, ...], Tuple[str, ...]]] = {}
        # (start, end, key, parent index) of every conditional region, by start (see flow_at)
        self._flow_nodes: List[tuple] = []
        self._flow_ranges: List[Tuple[int, int, tuple, int]] = []
        self._flow_starts: List[int] = []
        self._flow_memo: Dict[int, frozenset] = {}
        # id(test) → the test of an `if` or of a dominating early exit (the guards of flow_at)
        self.flow_tests: Dict[int, ast.expr] = {}
        self._covers_memo: Dict[Tuple[frozenset, int], bool] = {}
        # (name, id(scope), at) → (scope, owner, bindings) of bindings_at: asked again and again
        # (each walk through a variable, each qualify of a name); kept once the walk of the
        # tree has bound every name (build_index), never while bindings are still being added
        self._bindings_memo: Dict[tuple, tuple] = _BUILDING
        self.session = False  # a notebook's text (build_index)
        self._session_names: Optional[Dict[str, Optional[List[int]]]] = None
        self.callee_memo: Dict[int, tuple] = {}  # id(call site) → (site, callees.project_callee's answer)
        self._tries_memo: Dict[int, Tuple[ast.Try, ...]] = {}  # id(code scope's node) → tries_in's answer
        self._resolved: Dict[tuple, tuple] = {}  # (name, id(scope), at, depth) → (scope, resolve_name's answer)
        self._scope_spans = None
        self._scope_starts = []
        self._line_starts = line_starts(source)
        self._positions = Positions(source, self._line_starts, self._alias_span)
        self._defaults: Dict[int, ast.expr] = {}  # id(ast.arg) → its default (see param_span)
        self._version_tests = None  # version_tests.version_tests_of: made once, kept here
        # how deep the tree nests, in the walk's nodes (the module is 1; an expression's context
        # and an operator, which CPython's tree holds as nodes too, are not walked)
        self.depth = 0

    @property
    def built(self) -> bool:
        """Whether every binding is known (answers about names may be kept from here on)."""
        return self._bindings_memo is not _BUILDING

    # --- positions ---------------------------------------------------------
    def span(self, node) -> Span:
        """Where ``node`` is, in characters (see ``positions.py``). ``ast`` ranges leave a
        node's parentheses out, except a parenthesized ``Tuple``'s, which are its own."""
        return self._positions.span(node)

    def statement_span(self, stmt: ast.stmt) -> Span:
        """The range of a simple statement (``x = f(a)``, ``clip(...)``, ``n += 1``): CPython
        gives it directly, from its first target to the end of its value."""
        return self._positions.span(stmt)

    def param_span(self, arg: ast.arg) -> Span:
        """A parameter with its annotation and default, ``name: annotation = default``
        (``ast.arg`` alone stops before the ``=``)."""
        default = self._defaults.get(id(arg))
        if default is None:
            return self._positions.span(arg)
        return self._positions.between(arg, default)

    def name_span(self, node) -> Span:
        """The range of the name a node holds as a string in ``ast``: an attribute's name
        (``x.attr``), a keyword argument's name (``f(dtype=...)``), a ``def``'s or a
        ``class``'s name, a parameter's name, an import alias's dotted name (``a.b`` of
        ``import a.b as c``), an ``ImportFrom``'s module (``a.b`` of ``from ..a.b import c``).
        Where the text does not hold the name as ``ast`` spells it (an identifier CPython
        normalized, NFKC): a keyword's name as written, any other node's whole range."""
        whole = self._positions.span(node)
        source = self.source
        start = None
        name = None
        if isinstance(node, ast.Attribute):
            name = node.attr
            start = whole.end - len(name)
        elif isinstance(node, ast.keyword):
            name = node.arg
            start = whole.start
            if name is not None and not source.startswith(name, start):
                # written otherwise (`ｆｐ16=x` is `fp16` to CPython): the identifier as written
                end = start
                while end < whole.end and source[start : end + 1].isidentifier():
                    end += 1
                return self._positions.offsets_span(start, end)
        elif isinstance(node, ast.arg):
            name = node.arg
            start = whole.start
        elif isinstance(node, (*FUNCTION_DEFS, ast.ClassDef)):
            name = node.name
            found = _DEF_HEAD().match(source, whole.start)
            start = found.end() if found else None
        elif isinstance(node, ast.alias):
            found = _dotted_pattern(node.name).match(source, whole.start)
            if found:
                return self._positions.offsets_span(found.start(), found.end())
        elif isinstance(node, ast.ImportFrom) and node.module:
            found = re.compile(r"from\s*(?:\\\r?\n\s*)?[.\s\\]*(" + _dotted_pattern(node.module).pattern + ")").match(source, whole.start)
            if found:
                return self._positions.offsets_span(found.start(1), found.end(1))
        if name is None or start is None or source[start : start + len(name)] != name:
            return whole
        return self._positions.offsets_span(start, start + len(name))

    def _alias_span(self, alias: ast.alias) -> Span:
        """An import's alias where ``ast`` gives it no range (Python 3.9): found in the text of
        its statement, each alias after the one before it."""
        for stmt in self.import_statements:
            if any(a is alias for a in stmt.names):
                break
        else:
            raise ValueError("an alias of no import of this module")
        whole = self._positions.span(stmt)
        source = self.source
        at = source.find("import", whole.start, whole.end) + len("import")
        for a in stmt.names:
            pattern = _dotted_pattern(a.name).pattern + (r"\s+as\s+" + re.escape(a.asname) if a.asname else "")
            found = re.compile(pattern).search(source, at, whole.end)
            if found is None:
                return whole  # not found: the statement's range
            if a is alias:
                return self._positions.offsets_span(found.start(), found.end())
            at = found.end()
        return whole

    def offsets_span(self, start: int, end: int) -> Span:
        """The span of the text between two offsets."""
        return self._positions.offsets_span(start, end)

    def order(self, node) -> Tuple[int, int]:
        """(first, last + 1) in a pre-order numbering of the tree in source order: ``a`` comes
        before ``b`` in the source when ``order(a)[0] < order(b)[0]``; ``b`` lies inside ``a``
        when ``order(a)[0] <= order(b)[0] < order(a)[1]``. Blocks (``fn.body``) are numbered too."""
        return self.order_of[id(node)]

    def offset_line(self, offset: int) -> int:
        return bisect.bisect_right(self._line_starts, offset)

    def text(self, node) -> str:
        """The node's source text: the text its span covers (its own parentheses left out,
        a parenthesized tuple's kept)."""
        span = self.span(node)
        return self.source[span.start : span.end]

    def type_checking_imports(self) -> Tuple[str, ...]:
        """The modules this module imports only under a test that holds for a type checker,
        ``if TYPE_CHECKING:`` or ``if TYPE_CHECKING or SLOW_IMPORT:`` (the lazy ``__init__`` of
        diffusers and transformers: at run time the package imports a submodule only when one
        of its names is first read, never all of them). Such an import binds names for tools;
        it does not run the module. An import in the ``else:`` of such a test runs."""
        return self._imported_only_where(lambda guards: any(positive and _type_checking(test) for test, positive in guards))

    def conditional_imports(self) -> Tuple[str, ...]:
        """The modules this module imports only under an ``if`` a run may not take (``if
        args.use_unsloth: from unsloth import FastLanguageModel``): imported in some runs, not in
        every one. An import in a ``try`` runs wherever the module is installed; one under
        ``TYPE_CHECKING`` never runs (:meth:`type_checking_imports`). The test of an early exit
        above it (``if not os.path.exists(path): sys.exit(1)``) is no such ``if``: where it
        exits, nothing after it runs either (review 27e: unsloth imported in ``main()`` after its
        input check)."""
        return self._imported_only_where(lambda guards: any(not self.exit_guard(test, positive) for test, positive in guards))

    def _imported_only_where(self, holds: Callable[[tuple], bool]) -> Tuple[str, ...]:
        """The modules every import statement of which sits under ``if`` tests (``(test,
        positive)`` pairs, outermost first) that ``holds`` accepts."""
        from .names import import_bindings

        only, run = set(), set()
        for node in self.import_statements:
            guards, _ = self.import_context.get(id(node), ((), ()))
            _, modules = import_bindings(node, self.module_name, self.imports.is_package)
            (only if holds(guards) else run).update(m for m in modules if m)
        return tuple(sorted(only - run))

    def exit_guard(self, test: ast.expr, positive: bool) -> bool:
        """Whether the guard ``(test, positive)`` is an early exit's above the code it guards
        (``if not ok: sys.exit(1)``), not the test of a branch the code is in."""
        return (id(test), positive) in self.exit_guards

    def named_half_misfits(self) -> List[HalfMisfit]:
        """The operations that add or subtract a name holding a constant float16 cannot hold
        (``epsilon = 1e-8`` ... ``(hi - lo + epsilon)``): every binding of the name that
        reaches the use is that literal. Shaped as :attr:`half_misfits` (``literal`` is the
        name at the use). Only names some scope binds to such a literal are looked up."""
        if self._named_misfits is None:
            holding = {
                name
                for scope in self.scopes.values()
                for name, assigned in scope.assignments.items()
                if any(misfits_half(number(a.value)) for a in assigned if a.value is not None)
            }
            found = []
            for op in self.name_operands:
                if type(op.literal) is ast.Attribute:
                    value = self._instance_constant(op.literal.attr, op.klass)
                    if value is not None and misfits_half(value):
                        found.append(dataclasses.replace(op, value=value))
                    continue
                if op.literal.id not in holding:
                    continue
                _, reached = self.bindings_of(op.literal, op.scope)
                values = {number(b.value) for b in reached if b.value is not None}
                if reached and len(values) == 1 and all(b.value is not None for b in reached):
                    value = values.pop()
                    if misfits_half(value):
                        found.append(dataclasses.replace(op, value=value))
            self._named_misfits = found
        return self._named_misfits

    def _instance_constant(self, attr: str, klass: Optional[str]) -> Optional[float]:
        """The number every ``self.<attr> = <literal>`` of class ``klass`` sets, where each of
        its assignments sets that one literal (``self.epsilon = 1e-8`` in ``__init__``); None
        otherwise."""
        info = self.classes.get(klass) if klass else None
        assigned = info.self_attr_values.get(attr, ()) if info is not None else ()
        values = {number(a.value) for a, _ in assigned}
        return values.pop() if assigned and len(values) == 1 else None

    def dismantle(self) -> None:
        """Drop every table of the index and of its scopes, once a file's facts are made.

        The index, its scopes (each names its parent, the parent its children) and the memos
        that hold them are reference cycles, tens of thousands of objects a file: left to the
        cyclic collector, the first collection after the file traversed each of them (8% of
        transformers' ``trainer.py``, 0.12 s of 1.45 s). Dropped here, reference counts free
        them at once, and the collection sees only the facts that live on (0.004 s). The index
        answers nothing afterwards."""
        for scope in self.scopes.values():
            scope.__dict__.clear()
        self.__dict__.clear()

    def local_function(self, func: ast.expr, scope: Scope) -> Optional[Scope]:
        """The function of this module a call's ``func`` names where it is seen from ``scope``
        (``convert(...)``, ``make_kwargs(...)``), or None."""
        if isinstance(func, ast.Name):
            owner = scope.lookup_scope(func.id)
            if owner is not None:
                return self.functions.get(f"{owner.qualname}.{func.id}" if owner.qualname else func.id)
        return None

    def tries_in(self, scope: Scope) -> Tuple[ast.Try, ...]:
        """The ``try`` statements written in ``scope``'s code (its nested functions' too), in
        the order of a walk of its tree: the questions of ``facts/extractors/tolerance.py`` ask
        them of each call judged, and walk the scope once."""
        found = self._tries_memo.get(id(scope.node))
        if found is None:
            found = self._tries_memo[id(scope.node)] = tuple(t for t in ast.walk(scope.node) if type(t) is ast.Try)
        return found

    def scope_of(self, node) -> Scope:
        """The innermost scope whose code contains ``node`` (a function's own scope for
        nodes in its body; its parameters' defaults and decorators belong outside)."""
        if self._scope_spans is None:
            spans = []
            for scope in self.scopes.values():
                if scope.kind != "module":
                    body = scope.node.body
                    spans.append((*self.order(body), scope))
            spans.sort(key=lambda t: t[0])
            self._scope_spans = spans
            self._scope_starts = [t[0] for t in spans]
        at = self.order(node)[0]
        i = bisect.bisect_right(self._scope_starts, at) - 1
        while i >= 0:
            start, end, scope = self._scope_spans[i]
            if start <= at < end:
                return scope
            i -= 1
        return self.root

    def qualify(self, node: ast.expr, scope: Optional[Scope] = None) -> Optional[str]:
        """The fully qualified name a dotted expression refers to, or None.

        Goes through the binding the use sees (ruff's ``resolve_qualified_name``): an
        import binds a qualified name, a module-level ``def``/``class`` its own
        ``<module>.<name>``, a simple alias (``T = transformers.Trainer``) what it
        aliases; a parameter or any other local shadows them all (None).
        """
        text = dotted(node)
        if text is None:
            return None
        if scope is None:
            scope = self.scope_of(node) if id(node) in self.order_of else self.root
        at = self.order_of.get(id(node), (None,))[0]
        head, _, rest = text.partition(".")
        full = self.resolve_name(head, scope, at, 0)
        if full is None:
            return None
        return f"{full}.{rest}" if rest else full

    def resolve_name(self, name: str, scope: Scope, at: Optional[int], depth: int) -> Optional[str]:
        key = (name, id(scope), at, depth)
        found = self._resolved.get(key)
        if found is not None and found[0] is scope:
            return found[1]
        resolved = self._resolve_name(name, scope, at, depth)
        if self.built:  # as bindings_at's answers: once every name is bound
            self._resolved[key] = (scope, resolved)
        return resolved

    def _resolve_name(self, name: str, scope: Scope, at: Optional[int], depth: int) -> Optional[str]:
        owner, bindings = self.bindings_at(name, scope, at)
        if owner is None or name in owner.params or depth > 8:
            return None
        for binding in bindings:
            if binding.imported is not None:
                return binding.imported
            stmt = binding.statement
            if isinstance(stmt, (*FUNCTION_DEFS, ast.ClassDef)) and stmt.name == name:
                return f"{owner.qualname}.{name}" if owner.qualname else name
            value = binding.value
            if type(value) is ast.Constant and value.value is None:
                continue  # `except ImportError: amp = None`: the import is what is used
            if isinstance(value, (ast.Name, ast.Attribute)) and binding.unpack_index is None:
                # `Trainer = transformers.Trainer`, `load = mu.load_model`
                text = dotted(value)
                if text and text.partition(".")[0] != name:
                    head, _, rest = text.partition(".")
                    full = self.resolve_name(head, owner, self.order_of.get(id(value), (None,))[0], depth + 1)
                    if full is not None:
                        return f"{full}.{rest}" if rest else full
                return None
            return None
        return None

    # --- which bindings a use sees: the one policy ------------------------------
    def bindings_of(self, node: ast.Name, scope: Scope) -> Tuple[Optional[Scope], List[Assignment]]:
        """The scope that binds the name ``node`` uses, and the bindings that reach the use.

        See :meth:`bindings_at`. A node that is not part of this module's tree (built by a
        rule) is treated as a use at the end of its scope's code."""
        return self.bindings_at(node.id, scope, self.order_of.get(id(node), (None,))[0])

    def bindings_at(self, name: str, scope: Scope, at: Optional[int]) -> Tuple[Optional[Scope], List[Assignment]]:
        """The scope whose binding of ``name`` a use in ``scope`` sees, and the bindings that
        reach the use, latest first (reaching definitions with their guards).

        - A use in the binding scope's own code (``at`` its pre-order number) sees the bindings
          written before it: walking back from the use, each binding reaches it until one that
          runs whenever the use runs (its ``if`` branches, loops and ``try`` blocks all enclose
          the use too) hides the older ones. A binding later in a loop that also holds the use
          reaches it on the next iteration. ``x = f(x)``: the ``x`` on the right sees the
          previous ``x``.
        - A use in a nested function sees the enclosing scope as it is when its code has run to
          the end (functions are called after the module has executed: pyright's binder
          order): the last binding that always runs, and the conditional ones after it. In a
          notebook (``session``), which nothing imports, a function of the module's own that
          only the notebook's own code calls runs where it is last named there
          (``notebook_launcher(training_function)``): a module variable rebound in a later cell
          (``predictor = Predictor()`` for inference) is not what it reads (review 26d).

        Where no binding precedes a use (a name used before any assignment, which would raise
        at run time unless a loop brings it round), every binding is returned.
        """
        key = (name, id(scope), at)
        found = self._bindings_memo.get(key)
        if found is not None and found[0] is scope:
            return found[1], list(found[2])
        owner = scope.lookup_scope(name)
        if owner is None:
            reached: List[Assignment] = []
        else:
            bindings = owner.assignments.get(name, [])
            if not bindings:
                reached = []
            elif owner is scope and at is not None:
                reached = self._reaching_use(bindings, at)
            elif owner is self.root and self.session and (last := self._last_named(scope)) is not None:
                reached = self._reaching_use(bindings, last)
            else:
                reached = self._reaching_end(bindings, owner)
        if self._bindings_memo is not _BUILDING:
            # the scope is kept with the answer: its id is never another scope's while it lives
            self._bindings_memo[key] = (scope, owner, tuple(reached))
        return owner, reached

    def bindings_kept(self, node: ast.Name, scope: Scope) -> Tuple[Optional[Scope], List[Assignment]]:
        """:meth:`bindings_of` for a question about a tensor's dtype: an augmented assignment
        of the name (``x += y``, which binds it with no value) updates a tensor in place and
        keeps its dtype, so it stands for the bindings that reach it (``scores = q @ k`` ...
        ``scores += bias`` ... ``scores`` here: the matmul's dtype); where none does (a
        parameter updated in place), for nothing, and a parameter's walk then sees the
        parameter. ``@=`` is no in-place tensor update, and a binding reached again (a loop)
        is taken once."""
        owner, reached = self.bindings_of(node, scope)
        if owner is None or not any(type(b.statement) is ast.AugAssign for b in reached):
            return owner, reached
        out: List[Assignment] = []
        seen: Set[int] = set()
        todo = list(reached)
        while todo:
            b = todo.pop(0)
            if id(b) in seen:
                continue
            seen.add(id(b))
            statement = b.statement
            if (
                type(statement) is ast.AugAssign
                and type(statement.target) is ast.Name
                and type(statement.op) is not ast.MatMult
                and len(seen) < 64
            ):
                at = self.order_of.get(id(statement), (None,))[0]
                if at is not None:
                    before = self.bindings_at(node.id, owner, at)[1]
                    # none written before it (a parameter updated in place): bindings_at then
                    # answers every binding, later ones too; none of them is the value updated
                    if any(self.order_of.get(id(p.statement), (at,))[0] < at for p in before):
                        todo.extend(before)
                    continue
            out.append(b)
        return owner, out

    def bindings_anywhere(self, name: str, scope: Scope) -> Tuple[Optional[Scope], List[Assignment]]:
        """Every binding of ``name`` in the scope a use in ``scope`` sees, whatever the use's
        place: only for flow-insensitive questions asked once per variable ("may a dtype ever
        reach this name?", "is it always made by one call?"), whose answer must hold for every
        use. Which bindings reach one use is :meth:`bindings_of`'s question."""
        owner = scope.lookup_scope(name)
        return owner, (owner.assignments.get(name, []) if owner is not None else [])

    def _reaching_use(self, bindings: List[Assignment], at: int) -> List[Assignment]:
        use_flow = self.flow_at(at)
        use_loops = {key for key in use_flow if key[0] == "loop"}
        before: List[Assignment] = []
        later: List[Assignment] = []
        for b in bindings:
            start = self.order_of.get(id(b.statement), (None,))[0]
            if start is None:
                continue
            if start < at:
                if b.value is not None and id(b.value) in self.order_of:
                    first, after = self.order_of[id(b.value)]
                    if first <= at < after:
                        continue  # `x = f(x)`: the use is in the value
                if isinstance(b.statement, (ast.ClassDef, *FUNCTION_DEFS)) and at < self.order_of[id(b.statement)][1]:
                    continue  # `class Dataset(Dataset)`: a def binds its name once its bases, decorators and defaults ran
                before.append(b)
            elif use_loops and use_loops & self.flow_of(b):
                later.append(b)
        out: List[Assignment] = []
        seen: Set[frozenset] = set()
        # whether the bindings so far cover the use together (see _covered): what each distinct
        # condition among them needs beyond the use's conditions
        live: List[frozenset] = []
        for b in reversed(before):
            out.append(b)
            flow = self.flow_of(b)
            if flow <= use_flow:
                break
            if flow in seen:
                continue  # the same conditions again: covered no more than before
            seen.add(flow)
            rest = _needed(flow, use_flow)
            if rest is not None:  # else it never runs whenever the use does: covered no more
                live.append(rest)
                if len(live) > 1 and self._covered(live, _COVER_DEPTH):
                    break
        out.extend(reversed(later))
        return out or list(reversed(bindings))

    def _covered(self, flows: List[frozenset], budget: int) -> bool:
        """Whether bindings bind a name whenever the code of a use runs, together: one of them
        runs whenever the use does, or for some ``if`` test each of its two branches is covered
        (``if peft: m = wrap(m)`` / ``else: m = m.float()`` hides the ``m`` bound before the
        ``if``; an ``elif`` chain ending in ``else`` too), splitting on at most ``budget`` tests
        one inside the other. ``flows``: what each binding needs beyond the use's conditions,
        only ``if`` tests (:func:`_needed`).

        A binding that needs more tests than ``budget`` never covers a branch in reach; a
        binding under ``t`` where no other is under ``not t`` is never needed (whatever covers
        the ``not t`` side holds whichever way ``t`` goes): both are dropped, until every test
        left is one some binding is under on *both* sides, the only tests worth splitting on.
        Each question is answered once per module (a name bound in many branches asks it
        often)."""
        while True:
            flows = [f for f in flows if len(f) <= budget]
            if any(not f for f in flows):
                return True
            sides: Dict[int, int] = {}
            for flow in flows:
                for test, positive in flow:
                    sides[test] = sides.get(test, 0) | (1 if positive else 2)
            kept = [f for f in flows if all(sides[t] == 3 for t, _ in f)]
            if len(kept) == len(flows):
                break
            flows = kept
        if not flows:
            return False
        key = (frozenset(flows), budget)
        found = self._covers_memo.get(key)
        if found is not None:
            return found
        found = any(
            self._covered(_assume(flows, test, True), budget - 1)
            and self._covered(_assume(flows, test, False), budget - 1)
            for test in sides
        )
        self._covers_memo[key] = found
        return found

    def _last_named(self, scope: Scope) -> Optional[int]:
        """For code in a function defined once at the module's top (or nested in one), where
        the module's own code names that function last (its pre-order number): a call, or a
        launcher handed it. None where the function is named in any function's code (it may
        run later), named nowhere, or defined more than once."""
        top = scope
        while top.parent is not None and top.parent is not self.root:
            top = top.parent
        if top.parent is not self.root or top.kind != "function" or not isinstance(top.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        name = top.node.name
        if len(self.root.assignments.get(name, ())) != 1:
            return None
        if self._session_names is None:
            self._session_names = _module_code_names(self.module, self.order_of)
        places = self._session_names.get(name)
        return places[-1] if places else None

    def _reaching_end(self, bindings: List[Assignment], owner: Scope) -> List[Assignment]:
        base = self.flow_at(self.order_of[id(owner.node.body)][0]) if owner.kind != "module" else frozenset()
        out: List[Assignment] = []
        for b in reversed(bindings):
            out.append(b)
            if self.flow_of(b) <= base:
                break
        return out

    def flow_of(self, binding: Assignment) -> frozenset:
        """The conditions under which a binding's statement runs (see :meth:`flow_at`)."""
        start = self.order_of.get(id(binding.statement), (None,))[0]
        return self.flow_at(start) if start is not None else frozenset()

    def flow_at(self, at: int) -> frozenset:
        """The conditions under which code at pre-order number ``at`` runs: the ``if`` branches
        (with their polarity) and dominating early exits around it, the loops it is in, and
        the ``try`` bodies or ``except`` handlers it is in (code there may not run to its end).
        Keys are ``(id(test), polarity)`` for guards, ``("loop", id)``, ``("try", id)`` and
        ``("handler", id)`` for the rest."""
        memo = self._flow_memo
        found = memo.get(at)
        if found is not None:
            return found
        ranges = self._flow_ranges
        i = bisect.bisect_right(self._flow_starts, at) - 1
        keys = []
        while i >= 0:
            start, end, key, parent = ranges[i]
            if start <= at < end:
                keys.append(key)
                i = parent
            else:
                i = parent if parent >= 0 and ranges[parent][1] > at else i - 1
        found = memo[at] = frozenset(keys)
        return found

    def call_of(self, node) -> Optional[CallSite]:
        return self.calls_by_node.get(id(node))


# How many tests, one inside the other, the question whether bindings cover a use may split on.
_COVER_DEPTH = 4


def _needed(flow: frozenset, base: frozenset) -> Optional[frozenset]:
    """What a binding under the conditions ``flow`` needs beyond the conditions ``base`` of a
    use: ``if`` tests only; None when no split on tests makes it run whenever the use does (it
    is in a loop, a ``try`` body or a handler the use is not in, or in a test's other branch)."""
    rest = flow - base
    if all(isinstance(p, bool) and (t, not p) not in base for t, p in rest):
        return rest
    return None


def _assume(flows: List[frozenset], test: int, positive: bool) -> List[frozenset]:
    """The conditions ``flows`` once ``test`` is known to go the ``positive`` way: a binding
    under its other branch never runs, the others need one test less."""
    known, other = (test, positive), (test, not positive)
    return [f - {known} for f in flows if other not in f]


_DEF_HEAD = lazy(r"(?:async\s+)?(?:def|class)\s+")


def _dotted_pattern(name: str):
    """``a.b`` as it may be written (``a . b``, ``a.\\`` and a new line)."""
    return re.compile(r"\s*(?:\\\r?\n\s*)?\.\s*(?:\\\r?\n\s*)?".join(re.escape(part) for part in name.split(".")))


def line_starts(source: str) -> List[int]:
    """The offset where each line starts, as Python's tokenizer splits lines: at ``\\n``,
    ``\\r\\n`` and a lone ``\\r`` (never at the form feeds and separators ``str.splitlines``
    also breaks at)."""
    starts = [0]
    find = source.find
    i = find("\r")
    if i < 0:  # the common case: only "\n"
        i = find("\n")
        while i >= 0:
            starts.append(i + 1)
            i = find("\n", i + 1)
        return starts
    for i, ch in enumerate(source):
        if ch == "\n" or (ch == "\r" and source[i + 1 : i + 2] != "\n"):
            starts.append(i + 1)
    return starts


def build_index(
    source: str, module_name: str = "", is_package: bool = False, tree: Optional[ast.Module] = None, session: bool = False
) -> ModuleIndex:
    """Index ``source``. ``tree``: CPython's tree of it (``syntax.cpython_tree``'s), which the
    caller has parsed already; only without one is the text parsed here (``ast.parse``:
    raises ``SyntaxError`` on bad input). ``session``: the text is a notebook's, run cell by
    cell and never imported (see :meth:`ModuleIndex.bindings_at`)."""
    if tree is None:
        tree = ast.parse(source)
    index = ModuleIndex(source, tree, module_name, is_package)
    index.session = session
    _walk(tree, _Indexer(index))
    index._bindings_memo = {}  # every binding is known from here on
    _resolve_names(index)
    return index


def _module_code_names(module: ast.Module, order_of: dict) -> Dict[str, Optional[List[int]]]:
    """Name -> the pre-order numbers where the module's own code (not a function's, nor a
    lambda's) reads it, in order; None for a name some function or lambda reads."""
    out: Dict[str, Optional[List[int]]] = {}
    todo: List[Tuple[ast.AST, bool]] = [(node, False) for node in reversed(module.body)]
    while todo:
        node, nested = todo.pop()
        if type(node) is ast.Name and type(node.ctx) is ast.Load:
            if nested:
                out[node.id] = None
            elif out.get(node.id, []) is not None:
                out.setdefault(node.id, []).append(order_of.get(id(node), (0,))[0])
            continue
        inner = nested or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        todo.extend((child, inner) for child in reversed(list(ast.iter_child_nodes(node))))
    for places in out.values():
        if places:
            places.sort()
    return out


def _type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING``, ``typing.TYPE_CHECKING``, or an ``or`` with one of them."""
    if type(test) is ast.BoolOp and type(test.op) is ast.Or:
        return any(_type_checking(value) for value in test.values)
    return dotted(test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def _qualified_contexts(index: ModuleIndex, items, scope) -> Tuple[str, ...]:
    return tuple(
        index.qualify(item.func if isinstance(item, ast.Call) else item, scope)
        or dotted(item.func if isinstance(item, ast.Call) else item)
        or ""
        for item in items
    )


def _resolve_names(index: ModuleIndex) -> None:
    """Qualify callees, ``with`` contexts and class bases once every binding is known.

    Function bodies run after the module has been executed, so a use inside a function
    sees the module's bindings as they are at its end (pyright's binder order); a use
    in the module's own code sees the bindings written before it.
    """
    for site in index.calls:
        site.qualname = index.qualify(site.node.func, site.scope)
        site.contexts = _qualified_contexts(index, site.context_items, site.scope)
    for matmul in index.matmuls.values():
        matmul.contexts = _qualified_contexts(index, matmul.context_items, matmul.scope)
    for info in index.classes.values():
        scope = index.scopes[info.qualname].parent or index.root
        info.bases = tuple(
            dict.fromkeys(
                q
                for node in (info.node, *info.more_nodes)
                for q in (index.qualify(base, scope) or dotted(base) for base in node.bases)
                if q
            )
        )




def call_args(call: ast.Call) -> List[Union[ast.expr, ast.keyword]]:
    """A call's arguments in the order they are written: positional expressions (``Starred``
    for ``*a``) and ``ast.keyword``s (``arg=None`` for ``**kw``) interleaved as in the source."""
    return call_order(call, False)[1:]


class Argument(NamedTuple):
    """One argument of a call as written, whichever of ``ast.Call``'s two lists holds it.

    ``value``: its expression, without the star of ``*x`` / ``**x``; ``keyword``: the name of
    ``name=value`` (None for a positional argument and for both splats); ``star``: "", "*" or
    "**"; ``node``: the ``ast`` node that holds it (the expression itself, the ``ast.Starred``
    or the ``ast.keyword``), whose range is the whole argument."""

    value: ast.expr
    keyword: Optional[str]
    star: str
    node: ast.AST


def _argument(item: Union[ast.expr, ast.keyword]) -> Argument:
    if type(item) is ast.keyword:
        return Argument(item.value, item.arg, "" if item.arg is not None else "**", item)
    if type(item) is ast.Starred:
        return Argument(item.value, None, "*", item)
    return Argument(item, None, "", item)


def arguments(call: ast.Call) -> List[Argument]:
    """A call's arguments in source order (see :func:`call_args`), each as an :class:`Argument`:
    for a question about every argument alike, where ``ast`` keeps the positional ones (``*x``
    among them) apart from the keywords (``**x`` among them)."""
    return [_argument(item) for item in call_args(call)]


def first_argument(call: ast.Call) -> Optional[ast.expr]:
    """The value of a call's first argument as written, positional or keyword
    (``requires_grad_(requires_grad=False)``, ``skipif(condition=...)``), a splat's value
    included; None for a call without arguments."""
    items = call_args(call)
    return _argument(items[0]).value if items else None


def is_constant(node, value) -> bool:
    """``node`` is the literal ``True``, ``False`` or ``None`` given as ``value``, compared by
    identity (``1 == True``, ``0 == False``: a number is none of them)."""
    return isinstance(node, ast.Constant) and node.value is value


def unstarred(node: ast.expr) -> ast.expr:
    """The expression of a starred element or argument (``models`` of ``*models``), else the
    node itself: for a question about each element of ``[a, *rest]`` alike."""
    return node.value if type(node) is ast.Starred else node


def identifiers(node) -> Tuple[str, ...]:
    """The identifiers a node is written with, whether ``ast`` holds them as ``Name`` nodes
    (a variable) or as plain strings: an attribute's or a keyword's name, a parameter's, a
    definition's, each part of an import's dotted name and its ``as`` name, a ``global``'s, an
    ``except ... as`` name, a pattern's capture; ``True``/``False``/``None`` as those words.
    For questions about the words of the code (is a name mentioned at all), not its variables
    (see :func:`names_read`)."""
    cls = type(node)
    if cls is ast.Name:
        return (node.id,)
    if cls is ast.Attribute:
        return (node.attr,)
    if cls is ast.keyword or cls is ast.arg:
        return (node.arg,) if node.arg else ()
    if cls is ast.Constant:
        value = node.value
        return (repr(value),) if value is None or type(value) is bool else ()
    if cls in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        return (node.name,)
    if cls is ast.alias:
        return (*node.name.split("."), *((node.asname,) if node.asname else ()))
    if cls is ast.ImportFrom:
        return tuple(node.module.split(".")) if node.module else ()
    if cls is ast.Global or cls is ast.Nonlocal:
        return tuple(node.names)
    if cls is ast.ExceptHandler:
        return (node.name,) if node.name else ()
    name = getattr(node, "name", None)  # MatchAs, MatchStar
    rest = getattr(node, "rest", None)  # MatchMapping
    attrs = getattr(node, "kwd_attrs", ())  # MatchClass
    return tuple(n for n in (name, rest, *attrs) if isinstance(n, str))


def mentions(expr, names) -> bool:
    """Whether any name under ``expr`` is one of ``names``: a variable, an attribute's name
    or a keyword alike (see :func:`names_read` for the variables only)."""
    if not names:
        return False
    for node in nodes_of(expr):
        cls = type(node)
        if cls is ast.Name:
            if node.id in names:
                return True
        elif any(n in names for n in identifiers(node)):
            return True
    return False


def names_read(root) -> List[ast.Name]:
    """The variables an expression reads, in source order: its ``Name`` nodes. Not an
    attribute's name (``x.mask``), a keyword (``f(mask=...)``), a name a lambda or a
    comprehension binds (its parameters, its ``for`` targets, and their uses inside it), a
    walrus target, nor anything inside a string."""
    bound = set()
    out: List[ast.Name] = []
    todo: list = [root]
    while todo:
        node = todo.pop()
        cls = type(node)
        if cls is ast.Name:
            out.append(node)
            continue
        if cls is ast.NamedExpr:
            todo.append(node.value)
            continue
        if cls is ast.arg:
            bound.add(node.arg)
            if node.annotation is not None:
                todo.append(node.annotation)
            continue
        if cls is ast.comprehension:
            bound.update(n.id for n in nodes_of(node.target) if type(n) is ast.Name)
            todo.extend(reversed([node.iter, *node.ifs]))
            continue
        todo.extend(reversed(ordered(node, False)))
    return [n for n in out if n.id not in bound]


# --- arguments, literals, parameters -----------------------------------------------
def keyword(call: ast.Call, name: str) -> Optional[ast.keyword]:
    """The keyword argument ``name=`` of a call (its ``.value`` is the expression)."""
    for kw in call.keywords:
        if kw.arg == name:
            return kw
    return None


def positional(call: ast.Call) -> List[ast.expr]:
    """The positional arguments' expressions, without starred ones (``*args``)."""
    return [a for a in call.args if type(a) is not ast.Starred]


def argument(call: ast.Call, position: int, *names: str) -> Optional[ast.expr]:
    """The value of a call's parameter: passed by one of its keyword ``names``, else the
    ``position``-th positional argument (``get_peft_model(model, ...)`` / ``model=model``);
    None when the call passes neither."""
    for name in names:
        given = keyword(call, name)
        if given is not None:
            return given.value
    args = positional(call)
    return args[position] if len(args) > position else None


def element(value: Optional[ast.expr], position: int) -> Optional[ast.expr]:
    """The expression a ``position``-th target takes from ``value`` when it is a literal tuple
    or list (``s, t = student(x), teacher(x)``); None when it is anything else, or when a
    starred element makes positions unknown."""
    if type(value) not in (ast.Tuple, ast.List) or any(type(e) is ast.Starred for e in value.elts):
        return None
    elements = value.elts
    return elements[position] if 0 <= position < len(elements) else None


def string_value(node) -> Optional[str]:
    """The text of a string literal (``"a" "b"`` is one constant); None for anything else,
    an f-string (``ast.JoinedStr``) and a bytes literal included."""
    if type(node) is ast.Constant and type(node.value) is str:
        return node.value
    return None


@dataclass
class Param:
    """One parameter of a function or lambda, in source order."""

    name: str
    arg: ast.arg
    default: Optional[ast.expr]
    kind: str  # "posonly", "normal", "vararg", "kwonly" or "kwarg"


def parameters(fn) -> List[Param]:
    """The parameters of a ``def``, ``async def`` or ``lambda`` (or of its ``ast.arguments``),
    in source order with their defaults (``defaults`` align to the last positional
    parameters; ``kw_defaults`` parallel the keyword-only ones, None for none)."""
    a = fn if type(fn) is ast.arguments else fn.args
    out: List[Param] = []
    positional_args = [*a.posonlyargs, *a.args]
    first = len(positional_args) - len(a.defaults)
    posonly = len(a.posonlyargs)
    for i, arg in enumerate(positional_args):
        default = a.defaults[i - first] if i >= first else None
        out.append(Param(arg.arg, arg, default, "posonly" if i < posonly else "normal"))
    if a.vararg is not None:
        out.append(Param(a.vararg.arg, a.vararg, None, "vararg"))
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        out.append(Param(arg.arg, arg, default, "kwonly"))
    if a.kwarg is not None:
        out.append(Param(a.kwarg.arg, a.kwarg, None, "kwarg"))
    return out


# --- the one walk ------------------------------------------------------------------------
# Statements that hold no other statement (the "small statements" of a line).
_SIMPLE = frozenset(
    cls
    for cls in (
        ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Delete, ast.Pass, ast.Break,
        ast.Continue, ast.Raise, ast.Assert, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal,
        getattr(ast, "TypeAlias", None),
    )
    if cls is not None
)


def _walk(root: ast.AST, visitor: "_Indexer") -> None:
    """A depth-first walk in source order calling the visitor's ``visit_X``/``leave_X``
    (and ``visit_If_body``-style hooks), numbering every node and every block of statements
    in pre-order (``ModuleIndex.order_of``).

    The walk keeps its own stack instead of recursing: a chain of 2,000 operators
    (``a + a + ...``, which CPython compiles) nests 2,000 nodes deep, past Python's
    recursion limit."""
    hooks: Dict[type, tuple] = {}
    order = visitor.ix.order_of
    flow_nodes = visitor.ix._flow_nodes
    ix = visitor.ix
    counter = 0
    # A node (or a block: a list of statements) is entered; a tuple is an action: (n, node, hook)
    # leaves ``node``, whose pre-order number is the int n; (_CALL, node, hook) calls a hook with
    # node; (_GUARD, line, (block, j, pushed)) follows a block's line of statements (j: the index
    # of its last statement; pushed: the block's count of guards); (_UNGUARD, block, pushed) ends
    # a block; (_ELIF, block, None) enters the one-`if` block of an `elif`.
    stack: list = [root]
    pop, push, extend = stack.pop, stack.append, stack.extend
    depth = deepest = 0  # nodes entered and not left (blocks not counted), and the most at once
    while stack:
        item = pop()
        cls = type(item)
        if cls is tuple:
            action, node, extra = item
            if type(action) is int:
                order[id(node)] = (action, counter)
                if type(node) is not list:
                    depth -= 1
                if extra is not None:
                    extra(node)
            elif action is _CALL:
                extra(node)
            elif action is _GUARD:
                guard = _dominating_guard(node)
                if guard is not None:  # the list of the scope the block is in (a function has its own)
                    ix.exit_guards.add((id(guard[0]), guard[1]))
                    if _raises(node):
                        ix.raising_guards.add(id(guard[0]))
                    block, j, pushed = extra
                    visitor.guards.append(guard)
                    pushed[0] += 1
                    if j + 1 < len(block):
                        flow_nodes.append((block, block[j + 1], guard))
            elif action is _UNGUARD:
                del visitor.guards[len(visitor.guards) - extra[0]:]
            else:  # _ELIF: `elif` is an `if` in the `if`'s else, no block of its own
                push((counter, node, None))
                counter += 1
                push(node[0])
            continue
        if cls is list:
            # a block: statements in order; an early exit or an `assert` guards the rest of it
            node = item
            push((counter, node, None))
            counter += 1
            if not node:
                continue
            if _is_suite(ix, node):
                # `if x: a(); b()`: statements on the header's line, which guard nothing after them
                # and are no statement of their own to the calls in them (CallSite.statement is
                # None there, as for a call in the header: the line is the header's, not theirs)
                extend([(_CALL, False, visitor.set_suite), *reversed(node), (_CALL, True, visitor.set_suite)])
                continue
            pushed = [0]
            todo: list = []
            n = len(node)
            i = 0
            while i < n:
                stmt = node[i]
                todo.append(stmt)
                j = i
                if type(stmt) in _SIMPLE:
                    # `a; b` on one line: a guard holds after the line, as for a one-line suite
                    while j + 1 < n and type(node[j + 1]) in _SIMPLE and node[j + 1].lineno == node[j].end_lineno:
                        j += 1
                        todo.append(node[j])
                todo.append((_GUARD, node[i : j + 1], (node, j, pushed)))
                i = j + 1
            todo.append((_UNGUARD, node, pushed))
            todo.reverse()
            extend(todo)
            continue
        node = item
        entry = hooks.get(cls)
        if entry is None:
            name = cls.__name__
            role = 1 if cls in _SIMPLE else 2 if issubclass(cls, ast.stmt) or cls in _HEADERS else 0
            entry = hooks[cls] = (getattr(visitor, f"visit_{name}", None), getattr(visitor, f"leave_{name}", None), role)
        visit, leave, role = entry
        push((counter, node, leave))
        counter += 1
        depth += 1
        if depth > deepest:
            deepest = depth
        if role:
            # the innermost simple statement; none in a compound statement's header
            visitor.statement = node if role == 1 and not visitor.in_suite else None
        if visit is not None and visit(node) is False:
            continue
        if cls in _SPECIAL_WALK:
            if cls in _FLOW_NODES:
                flow_nodes.append(node)
            if cls is ast.If:
                todo = [node.test, (_CALL, node, visitor.visit_If_body), node.body, (_CALL, node, visitor.leave_If_body)]
                orelse = node.orelse
                if orelse:
                    elif_ = len(orelse) == 1 and type(orelse[0]) is ast.If and _is_elif(ix, orelse[0])
                    todo += [(_CALL, node, visitor.visit_If_orelse), (_ELIF, orelse, None) if elif_ else orelse, (_CALL, node, visitor.leave_If_orelse)]
            elif cls is ast.Try:
                todo = [(_CALL, _caught_names(node, visitor.scope), visitor.caught.append), node.body, (_CALL, None, _pop_caught(visitor))]
                for handler in node.handlers:
                    todo += [(_CALL, ("<handler>",), visitor.caught.append), handler, (_CALL, None, _pop_caught(visitor))]
                todo += [node.orelse, node.finalbody]
            elif cls is ast.IfExp:
                todo = [
                    (_CALL, node, visitor.visit_IfExp_body), node.body, (_CALL, node, visitor.leave_IfExp_body),
                    node.test,
                    (_CALL, node, visitor.visit_IfExp_orelse), node.orelse, (_CALL, node, visitor.leave_IfExp_orelse),
                ]
            elif cls is ast.With or cls is ast.AsyncWith:
                todo = [*node.items, (_CALL, node, visitor.visit_With_body), node.body, (_CALL, node, visitor.leave_With_body)]
            else:
                todo = ordered(node, True)
        else:
            todo = ordered(node, True)
        if todo:
            todo.reverse()
            extend(todo)
    ix.depth = deepest
    _flow_ranges(visitor.ix)


_CALL, _GUARD, _UNGUARD, _ELIF = "call", "guard", "unguard", "elif"
# not statements, but headers of blocks: a call in them is in no simple statement
_HEADERS = tuple(c for c in (ast.ExceptHandler, getattr(ast, "match_case", None)) if c is not None)


def _is_suite(index: ModuleIndex, block: List[ast.stmt]) -> bool:
    """Whether a block is written on its header's line (``if x: return``): its first statement
    does not begin its line."""
    first = block[0]
    line_start = index._line_starts[first.lineno - 1]
    # in an indented block only spaces precede it, whose UTF-8 bytes are characters
    return bool(index.source[line_start : line_start + first.col_offset].strip(" \t\f\ufeff"))


def _is_elif(index: ModuleIndex, node: ast.If) -> bool:
    """Whether the one ``if`` of an ``else`` is written ``elif`` (CPython's ``If`` then starts at
    the ``elif``): a branch of the chain, not a block whose statements may guard each other."""
    return index.source.startswith("elif", index.span(node).start)


def _pop_caught(visitor: "_Indexer"):
    return lambda _: visitor.caught.pop()


_FLOW_NODES = frozenset({ast.If, ast.For, ast.AsyncFor, ast.While, *_TRIES})
_SPECIAL_WALK = _FLOW_NODES | {ast.IfExp, ast.With, ast.AsyncWith}


def _flow_ranges(index: "ModuleIndex") -> None:
    """The conditional regions of the module as nested pre-order ranges (see ``flow_at``)."""
    order = index.order_of
    tests = index.flow_tests
    ranges: List[Tuple[int, int, tuple]] = []
    for item in index._flow_nodes:
        if isinstance(item, tuple):  # an early exit guards the rest of its block
            block, first, (test, positive) = item
            ranges.append((order[id(first)][0], order[id(block)][1], (id(test), positive)))
            tests[id(test)] = test
            continue
        node = item
        cls = type(node)
        if cls is ast.If:
            tests[id(node.test)] = node.test
            ranges.append((*order[id(node.body)], (id(node.test), True)))
            if node.orelse:
                ranges.append((*order[id(node.orelse)], (id(node.test), False)))
        elif cls in (ast.For, ast.AsyncFor, ast.While):
            ranges.append((*order[id(node)], ("loop", id(node))))
        else:  # try / try*: the body and its else may stop part-way; a handler may not run
            ranges.append((*order[id(node.body)], ("try", id(node))))
            if node.orelse:
                ranges.append((*order[id(node.orelse)], ("try", id(node))))
            for handler in node.handlers:
                ranges.append((*order[id(handler)], ("handler", id(handler))))
    ranges.sort(key=lambda r: (r[0], -r[1]))
    out: List[Tuple[int, int, tuple, int]] = []
    stack: List[int] = []
    for start, end, key in ranges:
        while stack and not (out[stack[-1]][0] <= start and end <= out[stack[-1]][1]):
            stack.pop()
        out.append((start, end, key, stack[-1] if stack else -1))
        stack.append(len(out) - 1)
    index._flow_ranges = out
    index._flow_starts = [r[0] for r in out]
    index._flow_nodes = []


_EXIT_CALLS = frozenset({"sys.exit", "exit", "quit", "os._exit", "SystemExit"})


def _caught_names(node: ast.Try, scope: Optional[Scope] = None) -> Tuple[str, ...]:
    """The exception names a ``try``'s handlers catch (last component; "*" for ``except:``). A
    handler that ends by raising the same exception again (``except Exception: log(e); raise``)
    survives nothing: its exceptions are not caught in the sense a use needs (one that raises an
    error of its own, ``raise SystemExit("use the old options")``, expected the failure). Nor does
    a handler that only reports (``except Exception as e: print(e)``) where the ``try`` body binds
    a name bound nowhere before it (``scope``: the bindings the walk has met so far) and that the
    handler leaves unbound (``model = from_pretrained(..., load_in_8bit=True)``): the code after
    it reads that name and fails there (``NameError``), the error merely moved."""
    out = []
    bound = {n for n in _bound_names(node.body) if scope is None or scope.lookup_scope(n) is None}
    for handler in node.handlers:
        last = handler.body[-1] if handler.body else None
        if type(last) is ast.Raise and last.exc is None:
            continue
        if bound and all(reports(stmt) for stmt in handler.body) and bound - _bound_names(handler.body):
            continue
        if handler.type is None:
            out.append("*")
            continue
        types = handler.type.elts if type(handler.type) is ast.Tuple else [handler.type]
        for t in types:
            name = dotted(t)
            out.append(name.rsplit(".", 1)[-1] if name else "*")
    return tuple(out)


def _bound_names(block: List[ast.stmt]) -> set:
    """The variables a block's own statements assign (``x = ...``, ``x: T = ...``, ``a, b = ...``),
    not those of nested blocks, nor attributes or items (``self.x = ...`` binds no name)."""
    out = set()
    for stmt in block:
        targets = list(stmt.targets) if type(stmt) is ast.Assign else [stmt.target] if type(stmt) is ast.AnnAssign and stmt.value is not None else []
        while targets:  # (a copy: the tree's own lists are never changed)
            target = targets.pop()
            if type(target) is ast.Starred:
                target = target.value
            if type(target) is ast.Name:
                out.add(target.id)
            elif type(target) in (ast.Tuple, ast.List):
                targets.extend(target.elts)
    return out


# what a handler that only reports the error calls: `print(e)`, `logger.warning(...)`, `warnings.warn(...)`
_REPORTING = frozenset({"print", "warn", "warning", "error", "exception", "info", "debug", "critical", "print_exc", "log"})


def reports(stmt: ast.stmt) -> bool:
    """Whether a handler's statement only reports (a call of :data:`_REPORTING`, ``pass``)."""
    if type(stmt) is ast.Pass:
        return True
    if type(stmt) is not ast.Expr or type(stmt.value) is not ast.Call:
        return False
    func = stmt.value.func
    name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else ""
    return name in _REPORTING


def _last_line(block: List[ast.stmt]) -> List[ast.stmt]:
    """The statements of a block's last line (``a(); return``): none when it ends with a
    compound statement."""
    if not block or type(block[-1]) not in _SIMPLE:
        return []
    i = len(block) - 1
    while i > 0 and type(block[i - 1]) in _SIMPLE and block[i - 1].end_lineno == block[i].lineno:
        i -= 1
    return block[i:]


def _dominating_guard(line: List[ast.stmt]) -> Optional[GuardNode]:
    """The condition that holds after a line of statements for the rest of its block, if any:
    ``assert ok`` (ok holds), ``if not ok: return/raise/sys.exit()`` with no ``else``
    (``not ok`` is false)."""
    first = line[0]
    if type(first) is ast.If:
        if not first.orelse and _exits(first.body):
            return (first.test, False)
        return None
    for small in line:
        if type(small) is ast.Assert:
            return (small.test, True)
    return None


def _raises(line: List[ast.stmt]) -> bool:
    """Whether the dominating guard of a line (``_dominating_guard``) fails only by raising or
    ending the program: ``assert``, ``if bad: raise ...`` / ``sys.exit()`` (not ``return``)."""
    if type(line[0]) is not ast.If:
        return True
    return any(
        type(small) is ast.Raise
        or type(small) is ast.Expr and type(small.value) is ast.Call and dotted(small.value.func) in _EXIT_CALLS
        for small in _last_line(line[0].body)
    )


def _exits(block: List[ast.stmt]) -> bool:
    """Whether a block always leaves its function or the program (its last line)."""
    for small in _last_line(block):
        if type(small) in (ast.Return, ast.Raise):
            return True
        if type(small) is ast.Expr and type(small.value) is ast.Call:
            if dotted(small.value.func) in _EXIT_CALLS:
                return True
    return False


def literal_key(node: ast.Subscript) -> Optional[str]:
    """The key of ``d["k"]`` when it is a string literal."""
    return string_value(node.slice)


def item_owner(node: ast.expr) -> Optional[str]:
    """The key under which ``node[k] = v`` is indexed: the dict's name (``cfg``), or for a dict
    nested in one by literal keys (``cfg["model"]["dtype"] = v``) the name and the keys,
    ``cfg\\x00model``; None for anything else."""
    keys = []
    while type(node) is ast.Subscript:
        key = literal_key(node)
        if key is None:
            return None
        keys.append(key)
        node = node.value
    if type(node) is not ast.Name:
        return None
    return "\x00".join((node.id, *reversed(keys)))


def _branches(value: ast.expr) -> List[ast.expr]:
    """The expressions an assignment of ``value`` may bind: itself, or each branch of a
    conditional expression (``a if test else b``), nested ones too."""
    if type(value) is ast.IfExp:
        return [*_branches(value.body), *_branches(value.orelse)]
    return [value]


def _target_names(target: ast.expr) -> List[Tuple[str, Optional[int]]]:
    """Names bound by an assignment target, with their unpacking position (``a, *b = ...``:
    ``b`` at 1)."""
    cls = type(target)
    if cls is ast.Name:
        return [(target.id, None)]
    if cls is ast.Tuple or cls is ast.List:
        out = []
        for i, el in enumerate(target.elts):
            value = unstarred(el)
            if type(value) is ast.Name:
                out.append((value.id, i))
        return out
    return []


def subscript_key(index: ModuleIndex, node: ast.Subscript) -> Optional[ast.expr]:
    """The one key of ``d[key]``: None for a slice (``d[a:b]``) or several keys (``d[a, b]``,
    a tuple without parentheses of its own; ``d[(a, b)]`` has one key, the tuple). ``ast``
    gives both as a ``Tuple`` slice: the text tells them apart."""
    key = node.slice
    cls = type(key)
    if cls is ast.Slice:
        return None
    if cls is ast.Tuple and key.elts and not _parenthesized_tuple(index, key):
        return None
    return key


def _parenthesized_tuple(index: ModuleIndex, node: ast.Tuple) -> bool:
    """Whether a non-empty tuple is written in parentheses of its own (CPython's range then
    starts with them): more ``(`` before its first element than that element closes."""
    source = index.source
    span = index.span(node)
    first = index.span(node.elts[0])
    opened = source.count("(", span.start, first.start)
    if not opened:
        return False
    closed, i = 0, first.end
    while i < span.end:
        ch = source[i]
        if ch == ")":
            closed += 1
        elif ch == "#":
            i = source.find("\n", i)
            if i < 0:
                break
        elif ch not in " \t\f\r\n\\":
            break
        i += 1
    return opened > closed


class _Indexer:
    def __init__(self, index: ModuleIndex) -> None:
        self.ix = index
        self.scope = index.root
        self.guards: List[GuardNode] = []
        self.contexts: List[str] = []
        self.context_items: List[ast.expr] = []
        self.classes: List[ClassInfo] = []
        self.loops: List[ForLoop] = []
        self.statement: Optional[ast.stmt] = None
        self.caught: List[Tuple[str, ...]] = []  # per enclosing try body / except block
        self.expression_guards: List[Tuple[ast.expr, bool]] = []
        self._saved_guards: list = []
        self.in_suite = False  # in the statements of a one-line suite (`if x: f()`)
        # nodes only noted (ModuleIndex.constants...): the walk calls the list's append itself
        self.visit_Constant = index.constants.append
        self.visit_JoinedStr = index.joined_strs.append
        self.visit_FormattedValue = index.formatted_values.append
        self.visit_Subscript = index.subscripts.append

    def set_suite(self, value: bool) -> None:
        self.in_suite = value

    # --- statements ----------------------------------------------------------
    def visit_Expr(self, node: ast.Expr) -> None:
        value = node.value
        if (type(value) is ast.Constant and isinstance(value.value, (str, bytes))) or type(value) is ast.JoinedStr:
            self.ix.string_statements.append(node)

    def visit_Import(self, node: ast.Import) -> None:
        self._import(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self._import(node)

    def _import(self, node) -> None:
        """An import binds names in the scope it runs in (a function's imports are its own;
        a module-level import under ``try:`` or ``if`` is a module binding with its guards)."""
        self.ix.import_statements.append(node)
        self.ix.import_context[id(node)] = (tuple(self.guards), self._caught())
        for local, full in self.ix.imports.add(node, self.scope.kind == "module"):
            self.scope.assignments.setdefault(local, []).append(
                Assignment(None, tuple(self.guards), node, imported=full)
            )

    def _bind(self, name: str, value, statement, unpack_index=None) -> None:
        self.scope.assignments.setdefault(name, []).append(
            Assignment(value, tuple(self.guards), statement, unpack_index)
        )

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            names = _target_names(target)
            for name, idx in names:
                self._bind(name, node.value, node, idx)
            cls = type(target)
            if cls is ast.Subscript:
                owner = item_owner(target.value)
                key = subscript_key(self.ix, target) if owner is not None else None
                if key is not None:
                    self.ix.item_assigns.setdefault(owner, []).append(
                        ItemAssign(key, node.value, self.scope, tuple(self.guards), node)
                    )
                if misfits_half(number(node.value)):
                    self._half_misfit(node, node.value, target.value, "subscript")
            if not names and cls is ast.Attribute:
                self._self_attr(target, Assignment(node.value, tuple(self.guards), node))
                self.ix.attr_assigns.append(
                    AttrAssign(target, node.value, self.scope, tuple(self.loops), tuple(self.guards))
                )

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            if type(target) is ast.Subscript:
                owner = item_owner(target.value)
                key = subscript_key(self.ix, target) if owner is not None else None
                if key is not None:
                    self.ix.item_deletes.setdefault(owner, []).append(ItemDelete(key, self.scope, tuple(self.guards), node))

    def _half_misfit(self, node, literal, other, kind) -> None:
        self.ix.half_misfits.append(
            HalfMisfit(node, literal, number(literal), other, kind, self.scope,
                       self.classes[-1].qualname if self.classes else None, tuple(self.context_items))
        )

    def visit_BinOp(self, node: ast.BinOp) -> None:
        op = type(node.op)
        if op is ast.Add or op is ast.Sub:
            for name, other in ((node.right, node.left), (node.left, node.right)):
                # a name, or an attribute of the instance (`D + self.epsilon`, review 27c)
                if type(name) is ast.Name or (type(name) is ast.Attribute and type(name.value) is ast.Name and name.value.id == "self"):
                    self.ix.name_operands.append(
                        HalfMisfit(node, name, 0.0, other, "binary", self.scope,
                                   self.classes[-1].qualname if self.classes else None, tuple(self.context_items))
                    )
        elif op is ast.MatMult:
            self.ix.matmuls[id(node)] = MatmulSite(node, self.scope, tuple(self.contexts), tuple(self.context_items))
        for literal, other in ((node.right, node.left), (node.left, node.right)):
            if misfits_half(number(literal)):
                self._half_misfit(node, literal, other, "binary")
                break

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        for name, idx in _target_names(node.target):
            self._bind(name, node.value, node, idx)
        if type(node.target) is ast.Attribute:
            self._self_attr(node.target, Assignment(node.value, tuple(self.guards), node))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        for name, _ in _target_names(node.target):
            self._bind(name, None, node)
        self.ix.inplace_updates.append(
            InplaceUpdate(node, self.scope, self.classes[-1].qualname if self.classes else None,
                          tuple(self.guards), tuple(self.context_items))
        )

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        for name, idx in _target_names(node.target):
            self._bind(name, node.value, node, idx)

    def visit_For(self, node) -> None:
        for name, _ in _target_names(node.target):
            self._bind(name, None, node)
        loop = ForLoop(node.target, node.iter, self.scope, tuple(node.body))
        self.ix.for_loops.append(loop)
        self.loops.append(loop)

    def leave_For(self, node) -> None:
        self.loops.pop()

    visit_AsyncFor = visit_For
    leave_AsyncFor = leave_For

    def visit_withitem(self, node: ast.withitem) -> None:
        if node.optional_vars is not None:
            # `with open("c.yaml") as f`: f is what the context manager gives, followed no
            # further than its call (config loaders read the path from it)
            for name, idx in _target_names(node.optional_vars):
                self._bind(name, node.context_expr if idx is None else None, node)

    def visit_Global(self, node: ast.Global) -> None:
        self.scope.globals.update(node.names)

    def _self_attr(self, target: ast.Attribute, assignment: Optional[Assignment] = None) -> None:
        if self.classes and type(target.value) is ast.Name and target.value.id == "self":
            self.classes[-1].self_attrs.add(target.attr)
            if assignment is not None:
                self.classes[-1].self_attr_values.setdefault(target.attr, []).append(
                    (assignment, self.scope)
                )

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None:
            self.scope.returns.append((node.value, tuple(self.guards)))

    # --- guards ----------------------------------------------------------------
    def _caught(self) -> Tuple[str, ...]:
        return tuple(name for names in self.caught for name in names)

    def visit_If_body(self, node: ast.If) -> None:
        self.guards.append((node.test, True))

    def leave_If_body(self, node: ast.If) -> None:
        self.guards.pop()

    # `a if test else b`: a condition for what each side reads (kept apart from `guards`, which
    # the rules read for calls)
    def visit_IfExp_body(self, node: ast.IfExp) -> None:
        self.expression_guards.append((node.test, True))

    def leave_IfExp_body(self, node: ast.IfExp) -> None:
        self.expression_guards.pop()

    def visit_IfExp_orelse(self, node: ast.IfExp) -> None:
        self.expression_guards.append((node.test, False))

    def leave_IfExp_orelse(self, node: ast.IfExp) -> None:
        self.expression_guards.pop()

    def visit_If_orelse(self, node: ast.If) -> None:
        self.guards.append((node.test, False))

    def leave_If_orelse(self, node: ast.If) -> None:
        self.guards.pop()

    def visit_With_body(self, node) -> None:
        for item in node.items:
            self.contexts.append("")  # qualified once every binding is known (_resolve_names)
            self.context_items.append(item.context_expr)

    def leave_With_body(self, node) -> None:
        for _ in node.items:
            self.contexts.pop()
            self.context_items.pop()

    # --- scopes ----------------------------------------------------------------
    def _enter(self, name: str, kind: str, node: ast.AST) -> Scope:
        qual = f"{self.scope.qualname}.{name}" if self.scope.qualname else name
        scope = Scope(qual, kind, self.scope, node)
        self.ix.scopes[qual] = scope
        self.scope = scope
        return scope

    def visit_arguments(self, node: ast.arguments) -> None:
        for param in parameters(node):
            if param.default is not None:
                self.ix._defaults[id(param.arg)] = param.default

    def visit_FunctionDef(self, node) -> None:
        self.scope.assignments.setdefault(node.name, []).append(
            Assignment(None, tuple(self.guards), node)
        )
        params = parameters(node)
        if node.name == "__init__" and self.scope.kind == "class" and self.classes:
            self.classes[-1].init_params = tuple(p.name for p in params if p.kind in _NAMED_KINDS)
        scope = self._enter(node.name, "function", node)
        self.ix.functions[scope.qualname] = scope
        for param in params:
            if param.kind in _NAMED_KINDS:
                scope.params[param.name] = param.default
        scope.positional = tuple(p.name for p in params if p.kind in ("posonly", "normal"))
        for param in params:
            if param.kind in ("vararg", "kwarg"):
                scope.params[param.name] = None
            if param.kind == "kwarg":
                scope.var_keyword = param.name
        # guards do not flow into a function body from where it is defined
        self._saved_guards.append((self.guards, self.contexts, self.context_items, self.loops))
        self.guards, self.contexts, self.context_items, self.loops = [], [], [], []

    def leave_FunctionDef(self, node) -> None:
        self.scope = self.scope.parent
        self.guards, self.contexts, self.context_items, self.loops = self._saved_guards.pop()

    visit_AsyncFunctionDef = visit_FunctionDef
    leave_AsyncFunctionDef = leave_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        bases = ()  # qualified once every binding is known (_resolve_names)
        self.scope.assignments.setdefault(node.name, []).append(
            Assignment(None, tuple(self.guards), node)
        )
        scope = self._enter(node.name, "class", node)
        info = self.ix.classes.get(scope.qualname)
        if info is not None:  # defined twice (`try: class A(X) ... except: class A(Y)`): both count
            info.more_nodes.append(node)
        else:
            info = ClassInfo(scope.qualname, node.name, bases, node)
            self.ix.classes[scope.qualname] = info
        self.classes.append(info)

    def leave_ClassDef(self, node: ast.ClassDef) -> None:
        self.scope = self.scope.parent
        self.classes.pop()

    # --- expressions --------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        method = receiver = None
        qualname = None  # qualified once every binding is known (_resolve_names)
        if type(func) is ast.Attribute:
            method = func.attr
            receiver = func.value
        site = CallSite(
            node=node,
            qualname=qualname,
            method=method,
            receiver=receiver,
            scope=self.scope,
            guards=tuple(self.guards),
            contexts=tuple(self.contexts),
            context_items=tuple(self.context_items),
            klass=self.classes[-1].qualname if self.classes else None,
            statement=self.statement,
            loops=tuple(self.loops),
            caught=self._caught(),
            expression_guards=tuple(self.expression_guards),
        )
        self.ix.calls.append(site)
        self.ix.calls_by_node[id(node)] = site
        if method == "add_argument":
            self._arg_option(node)

    def leave_Assign(self, node: ast.Assign) -> None:
        # the call assigned, or each call a conditional expression assigns in one branch
        # (`scaler = GradScaler(enabled=...) if cfg["amp"] else None`)
        sites = [s for s in map(self.ix.calls_by_node.get, map(id, _branches(node.value))) if s is not None]
        if sites:
            names = []
            for target in node.targets:
                names.extend(n for n, idx in _target_names(target) if idx is None)
                if type(target) is ast.Attribute and dotted(target):
                    names.append(dotted(target))
            for site in sites:
                site.assigned_to = tuple(names)

    def leave_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            site = self.ix.calls_by_node.get(id(node.value))
            if site is not None:
                site.assigned_to = tuple(n for n, idx in _target_names(node.target) if idx is None)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.ix.attributes.append(node)
        if node.attr in TRACKED_ATTRS:
            self.ix.attr_uses.append(
                AttrUse(node, node.value, node.attr, self.scope,
                        self.classes[-1].qualname if self.classes else None,
                        (*self.guards, *self.expression_guards), self._caught())
            )

    def _arg_option(self, node: ast.Call) -> None:
        dest = None
        flags: List[str] = []
        for kw in node.keywords:
            if kw.arg == "dest" and type(kw.value) is ast.Constant and isinstance(kw.value.value, (str, bytes)):
                dest = kw.value.value
        for arg in node.args:
            if type(arg) is ast.Constant and isinstance(arg.value, (str, bytes)):
                flags.append(arg.value)
        if dest is None:
            longs = [f for f in flags if isinstance(f, str) and f.startswith("--")]
            chosen = longs[0] if longs else (flags[0] if flags else None)
            if not isinstance(chosen, str):
                return
            dest = chosen.lstrip("-").replace("-", "_")
        self.ix.arg_options.setdefault(dest, []).append(ArgOption(dest, node))


_NAMED_KINDS = frozenset({"posonly", "normal", "kwonly"})
