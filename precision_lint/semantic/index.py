"""One pass over a parsed module that indexes what the fact extractors ask about.

The index is the only place that walks the LibCST tree. It records scopes and
their assignments (with the ``if`` guards around each), function returns and
parameters, imports, class definitions, every call (resolved callee, enclosing
``with`` contexts, guards, the names it is assigned to), argparse options and
``.attr`` uses of interest. Fact extractors then read the index; they never walk
the tree themselves. The index holds LibCST nodes and is therefore process-local:
what leaves a worker are the plain-data facts built from it.
"""
from __future__ import annotations

import bisect
import dataclasses
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ..diagnostics import Span
from .positions import Positions
from ..knowledge import migrated_names
from .names import ImportMap, dotted

# `.attr` names whose uses are recorded (receiver kind decides what they mean).
# Attribute reads recorded for the rules: `x.tokenizer` (MP301) and the removed names of the
# migration table (`tok.encode_plus`, `transformers.TRANSFORMERS_CACHE`).
TRACKED_ATTRS = frozenset({"tokenizer"}) | migrated_names("attribute") | migrated_names("import")

# (test expression, branch taken when the test is true)
GuardNode = Tuple[cst.BaseExpression, bool]


@dataclass
class Assignment:
    value: Optional[cst.BaseExpression]  # None: not statically known (loop target, +=, ...)
    guards: Tuple[GuardNode, ...]
    statement: cst.CSTNode
    unpack_index: Optional[int] = None  # for `a, b = value`: which element
    imported: Optional[str] = None  # an import binding: the qualified name it binds


@dataclass
class Scope:
    qualname: str
    kind: str  # "module", "function" or "class"
    parent: Optional["Scope"]
    node: cst.CSTNode
    assignments: Dict[str, List[Assignment]] = field(default_factory=dict)
    returns: List[Tuple[cst.BaseExpression, Tuple[GuardNode, ...]]] = field(default_factory=list)
    params: Dict[str, Optional[cst.BaseExpression]] = field(default_factory=dict)
    globals: set = field(default_factory=set)
    positional: Tuple[str, ...] = ()  # parameters a caller may fill by position, in order

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
    node: cst.Call
    qualname: Optional[str]  # import-resolved callee (None for method calls on values)
    method: Optional[str]  # `x.m(...)` → "m"
    receiver: Optional[cst.BaseExpression]  # `x.m(...)` → x
    scope: Scope
    guards: Tuple[GuardNode, ...]
    contexts: Tuple[str, ...]  # qualnames of enclosing `with` items, innermost last
    klass: Optional[str]  # enclosing class qualname
    assigned_to: Tuple[str, ...] = ()  # `a = b = call(...)` → ("a", "b")
    loops: Tuple["ForLoop", ...] = ()  # enclosing for-loops, innermost last
    statement: Optional[cst.CSTNode] = None
    # the enclosing `with` item expressions themselves (parallel to ``contexts``), so that
    # their arguments (`torch.autocast(..., enabled=False)`) can be evaluated
    context_items: Tuple[cst.BaseExpression, ...] = ()
    # exceptions caught around it: the names of enclosing `try` bodies' handlers ("*": a bare
    # `except:`), and "<handler>" inside an `except` block (code that runs only after a failure)
    caught: Tuple[str, ...] = ()


@dataclass
class ClassInfo:
    qualname: str
    name: str
    bases: Tuple[str, ...]  # resolved qualnames (unresolvable bases are left out)
    node: cst.ClassDef
    self_attrs: set = field(default_factory=set)  # attributes assigned on `self` in methods
    init_params: Optional[Tuple[str, ...]] = None  # parameters of its own __init__, if it defines one
    more_nodes: List[cst.ClassDef] = field(default_factory=list)  # other definitions of the same name
    # `self.x = value` in its methods: attribute → [(assignment, the method's scope)]
    self_attr_values: Dict[str, List[Tuple["Assignment", "Scope"]]] = field(default_factory=dict)


@dataclass
class AttrUse:
    node: cst.Attribute
    base: cst.BaseExpression
    attr: str
    scope: Scope
    klass: Optional[str]
    # the conditions it is read under (`if` statements, and `a if test else b` around it) and
    # the exceptions caught around it (see CallSite.caught)
    guards: Tuple[Tuple[cst.BaseExpression, bool], ...] = ()
    caught: Tuple[str, ...] = ()


@dataclass
class AttrAssign:
    """``x.attr = value`` (e.g. ``p.requires_grad = False`` inside a loop)."""

    target: cst.Attribute
    value: cst.BaseExpression
    scope: Scope
    loops: Tuple["ForLoop", ...]  # enclosing for-loops, innermost last
    guards: Tuple[GuardNode, ...] = ()  # the `if` conditions around it


@dataclass
class ItemAssign:
    """``d["k"] = value`` (a dict filled after it is built)."""

    key: cst.BaseExpression
    value: cst.BaseExpression
    scope: "Scope"
    guards: Tuple[GuardNode, ...]
    statement: cst.CSTNode


@dataclass
class HalfMisfit:
    """A numeric literal that float16 cannot hold (beyond ±65504, or so small that it rounds
    to 0), written as an operand of arithmetic (``(1 - mask) * -1e9``, ``norm + 1e-8``) or
    assigned into a subscript (``x[mask] = -1e20``). Calls with such arguments
    (``masked_fill(mask, -1e9)``) are found through :attr:`ModuleIndex.calls`."""

    node: cst.CSTNode  # the BinaryOperation, or the Assign
    literal: cst.BaseExpression  # the literal (with its minus sign)
    value: float
    other: cst.BaseExpression  # the other operand, or the subscript target's base
    kind: str  # "binary" or "subscript"
    scope: "Scope"
    klass: Optional[str]
    context_items: Tuple[cst.BaseExpression, ...]  # enclosing `with` items, innermost last


@dataclass
class MatmulSite:
    """An ``a @ b``: where it is, and the ``with`` items around it (autocast runs it in
    float16 like ``torch.matmul``)."""

    node: cst.BinaryOperation
    scope: "Scope"
    contexts: Tuple[str, ...]  # qualnames of enclosing `with` items, innermost last
    context_items: Tuple[cst.BaseExpression, ...]


FP16_MAX = 65504.0
FP16_ROUNDS_TO_ZERO = 2.0 ** -25  # half of float16's smallest subnormal (2**-24)


def number(node: Optional[cst.BaseExpression]) -> Optional[float]:
    """The value of a numeric literal, optionally negated (``-1e9``), else None."""
    sign = 1.0
    while isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        if isinstance(node.operator, cst.Minus):
            sign = -sign
        node = node.expression
    if isinstance(node, (cst.Float, cst.Integer)):
        try:
            return sign * float(node.evaluated_value)
        except (OverflowError, ValueError, TypeError):
            return None
    return None


def misfits_half(value: Optional[float]) -> bool:
    """Whether float16 turns ``value`` into ±inf or 0."""
    return value is not None and (abs(value) > FP16_MAX or 0 < abs(value) < FP16_ROUNDS_TO_ZERO)


@dataclass
class ForLoop:
    target: cst.BaseExpression
    iter: cst.BaseExpression
    scope: Scope


@dataclass
class ArgOption:
    """One ``parser.add_argument(...)`` call."""

    dest: str
    call: cst.Call


class ModuleIndex:
    def __init__(self, source: str, module: cst.Module, module_name: str, is_package: bool) -> None:
        self.source = source
        self.module = module
        self.module_name = module_name
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
        self.half_misfits: List[HalfMisfit] = []
        self.matmuls: Dict[int, MatmulSite] = {}  # id(BinaryOperation) → its site
        # `a + name` / `name - b`: the operations whose operand a name is, for named constants
        self.name_operands: List[HalfMisfit] = []
        self._named_misfits: Optional[List[HalfMisfit]] = None
        # id(node) → (pre-order number, number after its last descendant): source order and
        # containment without a positions pass
        self.order_of: Dict[int, Tuple[int, int]] = {}
        # id of the test of each dominating guard whose failing path raises or ends the program
        # (``assert ok``; ``if bad: raise ...`` / ``sys.exit()`` with no ``else``): code after it
        # is not a path that skips something and goes on, it is no path at all
        self.raising_guards: Set[int] = set()
        self.for_loops: List[ForLoop] = []
        self.import_statements: List[cst.CSTNode] = []
        # id(import statement) → (its guards, the exceptions caught around it; see CallSite.caught)
        self.import_context: Dict[int, Tuple[Tuple[GuardNode, ...], Tuple[str, ...]]] = {}
        self._positions: Optional[Positions] = None
        self.cpython_tree = None  # CPython's tree of the same text, when the caller parsed it already
        # (start, end, key, parent index) of every conditional region, by start (see flow_at)
        self._flow_nodes: List[tuple] = []
        self._flow_ranges: List[Tuple[int, int, tuple, int]] = []
        self._flow_starts: List[int] = []
        self._flow_memo: Dict[int, frozenset] = {}
        self._covers_memo: Dict[Tuple[frozenset, frozenset], bool] = {}
        self._scope_spans = None
        self._scope_starts = []
        self._line_starts = line_starts(source)
        self._version_tests = None  # version_tests.version_tests_of: made once, kept here

    # --- positions ---------------------------------------------------------
    def _placer(self) -> Positions:
        if self._positions is None:
            # computed on first use only: a file with nothing to report never pays for them
            self._positions = Positions(self.source, self.module, self._line_starts, self.cpython_tree)
            self.cpython_tree = None
        return self._positions

    def span(self, node: cst.CSTNode) -> Span:
        return self._placer().span(node)

    def statement_span(self, line: cst.SimpleStatementLine) -> Span:
        """The range of a one-statement line (see ``Positions.statement_span``)."""
        return self._placer().statement_span(line)

    def order(self, node: cst.CSTNode) -> Tuple[int, int]:
        """(first, last + 1) in a pre-order numbering of the tree: ``a`` comes before ``b`` in
        the source when ``order(a)[0] < order(b)[0]``; ``b`` lies inside ``a`` when
        ``order(a)[0] <= order(b)[0] < order(a)[1]``."""
        return self.order_of[id(node)]

    def offset_line(self, offset: int) -> int:
        return bisect.bisect_right(self._line_starts, offset)

    def text(self, node: cst.CSTNode) -> str:
        """The node's source text (generated from the node: no positions pass needed)."""
        return self.module.code_for_node(node)

    def type_checking_imports(self) -> Tuple[str, ...]:
        """The modules this module imports only under a test that holds for a type checker,
        ``if TYPE_CHECKING:`` or ``if TYPE_CHECKING or SLOW_IMPORT:`` (the lazy ``__init__`` of
        diffusers and transformers: at run time the package imports a submodule only when one
        of its names is first read, never all of them). Such an import binds names for tools;
        it does not run the module. An import in the ``else:`` of such a test runs."""
        from .names import import_bindings

        only, run = set(), set()
        for node in self.import_statements:
            guards, _ = self.import_context.get(id(node), ((), ()))
            _, modules = import_bindings(node, self.module_name, self.imports.is_package)
            typed = any(positive and _type_checking(test) for test, positive in guards)
            (only if typed else run).update(m for m in modules if m)
        return tuple(sorted(only - run))

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
                if op.literal.value not in holding:
                    continue
                _, reached = self.bindings_of(op.literal, op.scope)
                values = {number(b.value) for b in reached if b.value is not None}
                if reached and len(values) == 1 and all(b.value is not None for b in reached):
                    value = values.pop()
                    if misfits_half(value):
                        found.append(dataclasses.replace(op, value=value))
            self._named_misfits = found
        return self._named_misfits

    def scope_of(self, node: cst.CSTNode) -> Scope:
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

    def qualify(self, node: cst.BaseExpression, scope: Optional[Scope] = None) -> Optional[str]:
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
        owner, bindings = self.bindings_at(name, scope, at)
        if owner is None or name in owner.params or depth > 8:
            return None
        for binding in bindings:
            if binding.imported is not None:
                return binding.imported
            stmt = binding.statement
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and stmt.name.value == name:
                return f"{owner.qualname}.{name}" if owner.qualname else name
            value = binding.value
            if isinstance(value, cst.Name) and value.value == "None":
                continue  # `except ImportError: amp = None`: the import is what is used
            if isinstance(value, (cst.Name, cst.Attribute)) and binding.unpack_index is None:
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
    def bindings_of(self, node: cst.Name, scope: Scope) -> Tuple[Optional[Scope], List[Assignment]]:
        """The scope that binds the name ``node`` uses, and the bindings that reach the use.

        See :meth:`bindings_at`. A node that is not part of this module's tree (built by a
        rule) is treated as a use at the end of its scope's code."""
        return self.bindings_at(node.value, scope, self.order_of.get(id(node), (None,))[0])

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
          order): the last binding that always runs, and the conditional ones after it.

        Where no binding precedes a use (a name used before any assignment, which would raise
        at run time unless a loop brings it round), every binding is returned.
        """
        owner = scope.lookup_scope(name)
        if owner is None:
            return None, []
        bindings = owner.assignments.get(name, [])
        if not bindings:
            return owner, []
        if owner is scope and at is not None:
            return owner, self._reaching_use(bindings, at)
        return owner, self._reaching_end(bindings, owner)

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
                if isinstance(b.statement, (cst.ClassDef, cst.FunctionDef)) and at < self.order_of[id(b.statement)][1]:
                    continue  # `class Dataset(Dataset)`: a def binds its name once its bases, decorators and defaults ran
                before.append(b)
            elif use_loops and use_loops & self.flow_of(b):
                later.append(b)
        out: List[Assignment] = []
        for b in reversed(before):
            out.append(b)
            if self.flow_of(b) <= use_flow or (len(out) > 1 and self._covers(out, use_flow)):
                break
        out.extend(reversed(later))
        return out or list(reversed(bindings))

    def _covers(self, bindings: List[Assignment], base: frozenset) -> bool:
        """Whether, together, ``bindings`` bind the name whenever code under the conditions
        ``base`` runs: one of them runs under ``base`` alone, or for some ``if`` test each of its
        two branches is covered (``if peft: m = wrap(m)`` / ``else: m = m.float()`` hides the
        ``m`` bound before the ``if``; an ``elif`` chain ending in ``else`` too)."""
        return self._covered(frozenset(self.flow_of(b) for b in bindings), base, 0)

    def _covered(self, flows: frozenset, base: frozenset, depth: int) -> bool:
        """:meth:`_covers` of the bindings' conditions ``flows``. Only a test some binding is
        under on *both* sides can split the question: a side no binding names is covered only
        by bindings that do not depend on the test at all, which cover ``base`` already. Each
        question is answered once per module (a name bound in many branches asks it often)."""
        if any(f <= base for f in flows):
            return True
        if depth >= 4:
            return False
        key = (flows, base)
        found = self._covers_memo.get(key)
        if found is not None:
            return found
        sides: Dict[int, set] = {}
        for flow in flows:
            for test, positive in flow - base:
                if isinstance(positive, bool):  # not a loop, a `try` body or a handler: no two sides
                    sides.setdefault(test, set()).add(positive)
        found = any(
            len(polarities) == 2
            and self._covered(flows, base | {(test, True)}, depth + 1)
            and self._covered(flows, base | {(test, False)}, depth + 1)
            for test, polarities in sides.items()
        )
        self._covers_memo[key] = found
        return found

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

    def call_of(self, node: cst.CSTNode) -> Optional[CallSite]:
        return self.calls_by_node.get(id(node))


def line_starts(source: str) -> List[int]:
    """The offset where each line starts, as Python's tokenizer splits lines: at ``\n``,
    ``\r\n`` and a lone ``\r`` (never at the form feeds and separators ``str.splitlines``
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


def build_index(source: str, module_name: str = "", is_package: bool = False, cpython_tree=None) -> ModuleIndex:
    """Parse ``source`` and index it. Raises ``libcst.ParserSyntaxError`` on bad input.
    ``cpython_tree``: CPython's tree of ``source`` (``ast.parse``'s), when the caller has it: the
    positions are paired with it instead of parsing the text again."""
    tree = cst.parse_module(source)
    index = ModuleIndex(source, tree, module_name, is_package)
    index.cpython_tree = cpython_tree
    _walk(tree, _Indexer(index))
    _resolve_names(index)
    return index


def _type_checking(test: cst.BaseExpression) -> bool:
    """``TYPE_CHECKING``, ``typing.TYPE_CHECKING``, or an ``or`` with one of them."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return _type_checking(test.left) or _type_checking(test.right)
    return dotted(test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def _qualified_contexts(index: ModuleIndex, items, scope) -> Tuple[str, ...]:
    return tuple(
        index.qualify(item.func if isinstance(item, cst.Call) else item, scope)
        or dotted(item.func if isinstance(item, cst.Call) else item)
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
                for q in (index.qualify(arg.value, scope) or dotted(arg.value) for arg in node.bases)
                if q
            )
        )


# Fields that only hold whitespace, comments and punctuation: never walked.
_SKIPPED_FIELDS = frozenset(
    {
        "leading_lines", "lines_after_decorators", "header", "footer", "lpar", "rpar", "comma",
        "semicolon", "trailing_whitespace", "equal", "colon", "operator", "dot", "star_tok",
    }
)
_PLAN: Dict[type, Tuple[str, ...]] = {}


def _fields(cls: type) -> Tuple[str, ...]:
    names = _PLAN.get(cls)
    if names is None:
        names = _PLAN[cls] = tuple(
            f.name
            for f in dataclasses.fields(cls)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
        )
    return names


def children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """A node's children that can hold code (no whitespace or punctuation), in source order.

    Much cheaper than ``CSTNode.children``, which rebuilds the node to list them.
    """
    out: List[cst.CSTNode] = []
    for attr in _fields(type(node)):
        value = getattr(node, attr)
        if isinstance(value, cst.CSTNode):
            out.append(value)
        elif isinstance(value, (list, tuple)):
            out.extend(c for c in value if isinstance(c, cst.CSTNode))
    return out


def nodes_of(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``root`` and every node below it that can hold code, in source order (pre-order): for
    the extractors' questions about one expression's own tree (which calls it makes, which
    names it reads), never about the words of its text."""
    todo = [root]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(reversed(children(node)))


def mentions(expr: cst.CSTNode, names) -> bool:
    """Whether any ``Name`` node under ``expr`` is one of ``names``: a variable, an attribute's
    name or a keyword alike (see :func:`names_read` for the variables only)."""
    if not names:
        return False
    found = []

    class _Find(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            if node.value in names:
                found.append(node)

    expr.visit(_Find())
    return bool(found)


def names_read(root: cst.CSTNode) -> List[cst.Name]:
    """The variables an expression reads, in source order: its ``Name`` nodes in load position.
    Not an attribute's name (``x.mask``), a keyword (``f(mask=...)``), a name a lambda or a
    comprehension binds (its parameters, its ``for`` targets, and their uses inside it), a
    walrus target, nor anything inside a string."""
    bound = set()
    out: List[cst.Name] = []
    todo: List[cst.CSTNode] = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, cst.Name):
            out.append(node)
            continue
        if isinstance(node, cst.Attribute):
            todo.append(node.value)
            continue
        if isinstance(node, cst.Arg):
            todo.append(node.value)
            continue
        if isinstance(node, cst.NamedExpr):
            todo.append(node.value)
            continue
        if isinstance(node, cst.Param):
            bound.add(node.name.value)
            todo.extend(n for n in (node.annotation, node.default) if n is not None)
            continue
        if isinstance(node, cst.CompFor):
            bound.update(n.value for n in nodes_of(node.target) if isinstance(n, cst.Name))
            todo.extend(reversed([node.iter, *node.ifs, *([node.inner_for_in] if node.inner_for_in else [])]))
            continue
        todo.extend(reversed(children(node)))
    return [n for n in out if n.value not in bound]


def _walk(root: cst.CSTNode, visitor: "_Indexer") -> None:
    """A depth-first walk in source order calling the visitor's ``visit_X``/``leave_X``
    (and ``visit_If_body``-style hooks), like ``CSTNode.visit`` but without rebuilding
    each node on the way back up: about four times faster on large modules.

    The walk keeps its own stack instead of recursing: a chain of 2,000 operators
    (``a + a + ...``, which CPython compiles) nests 2,000 LibCST nodes deep, past
    Python's recursion limit, and ``x and y and ...`` is nested by LibCST however long
    it is (CPython keeps it flat)."""
    hooks: Dict[type, tuple] = {}
    order = visitor.ix.order_of
    flow_nodes = visitor.ix._flow_nodes
    counter = 0
    # (action, node, extra): _ENTER a node; _LEAVE it (extra: its pre-order number and hook);
    # _CALL a hook (extra) with node; _GUARD after a block's statement (extra: the block, the
    # statement's index, the block's count of pushed guards); _UNGUARD at the end of a block
    stack: List[tuple] = [(_ENTER, root, None)]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        action, node, extra = pop()
        if action is _ENTER:
            cls = type(node)
            entry = hooks.get(cls)
            if entry is None:
                name = cls.__name__
                entry = hooks[cls] = (getattr(visitor, f"visit_{name}", None), getattr(visitor, f"leave_{name}", None))
            visit, leave = entry
            push((_LEAVE, node, (counter, leave)))
            counter += 1
            if visit is not None and visit(node) is False:
                continue
            if cls in _FLOW_NODES:
                flow_nodes.append(node)
            if cls is cst.If:
                todo = [(_ENTER, node.test, None), (_CALL, node, visitor.visit_If_body), (_ENTER, node.body, None), (_CALL, node, visitor.leave_If_body)]
                if node.orelse is not None:
                    todo += [(_CALL, node, visitor.visit_If_orelse), (_ENTER, node.orelse, None), (_CALL, node, visitor.leave_If_orelse)]
            elif cls is cst.Module or cls is cst.IndentedBlock:
                # statements in order; an early exit or an `assert` guards the rest of the block
                pushed = [0]
                todo = []
                for i, stmt in enumerate(node.body):
                    todo.append((_ENTER, stmt, None))
                    todo.append((_GUARD, stmt, (node, i, pushed)))
                todo.append((_UNGUARD, node, pushed))
            elif cls is cst.Try:
                todo = [(_CALL, _caught_names(node), visitor.caught.append), (_ENTER, node.body, None), (_CALL, None, _pop_caught(visitor))]
                todo += [(_ENTER, part, None) for part in (*node.handlers, node.orelse, node.finalbody) if part is not None]
            elif cls is cst.IfExp:
                todo = [
                    (_ENTER, node.test, None), (_CALL, node, visitor.visit_IfExp_body), (_ENTER, node.body, None),
                    (_CALL, node, visitor.leave_IfExp_body), (_CALL, node, visitor.visit_IfExp_orelse),
                    (_ENTER, node.orelse, None), (_CALL, node, visitor.leave_IfExp_orelse),
                ]
            elif cls is cst.With:
                todo = [(_ENTER, item, None) for item in node.items]
                todo += [(_CALL, node, visitor.visit_With_body), (_ENTER, node.body, None), (_CALL, node, visitor.leave_With_body)]
            else:
                todo = []
                for attr in _fields(cls):
                    value = getattr(node, attr)
                    if isinstance(value, cst.CSTNode):
                        todo.append((_ENTER, value, None))
                    elif isinstance(value, (list, tuple)):
                        todo.extend((_ENTER, child, None) for child in value if isinstance(child, cst.CSTNode))
            todo.reverse()
            extend(todo)
        elif action is _LEAVE:
            pre, leave = extra
            order[id(node)] = (pre, counter)
            if leave is not None:
                leave(node)
        elif action is _CALL:
            extra(node)
        elif action is _GUARD:
            guard = _dominating_guard(node)
            if guard is not None and _raises(node):
                visitor.ix.raising_guards.add(id(guard[0]))
            if guard is not None:  # the list of the scope the block is in (a function has its own)
                block, i, pushed = extra
                visitor.guards.append(guard)
                pushed[0] += 1
                if i + 1 < len(block.body):
                    flow_nodes.append((block, block.body[i + 1], guard))
        else:  # _UNGUARD
            del visitor.guards[len(visitor.guards) - extra[0]:]
    _flow_ranges(visitor.ix)


_ENTER, _LEAVE, _CALL, _GUARD, _UNGUARD = "enter", "leave", "call", "guard", "unguard"


def _pop_caught(visitor: "_Indexer"):
    return lambda _: visitor.caught.pop()


_FLOW_NODES = frozenset({cst.If, cst.For, cst.While, cst.Try, cst.TryStar})


def _flow_ranges(index: "ModuleIndex") -> None:
    """The conditional regions of the module as nested pre-order ranges (see ``flow_at``)."""
    order = index.order_of
    ranges: List[Tuple[int, int, tuple]] = []
    for item in index._flow_nodes:
        if isinstance(item, tuple):  # an early exit guards the rest of its block
            block, first, (test, positive) = item
            ranges.append((order[id(first)][0], order[id(block)][1], (id(test), positive)))
            continue
        node = item
        if isinstance(node, cst.If):
            ranges.append((*order[id(node.body)], (id(node.test), True)))
            if node.orelse is not None:
                ranges.append((*order[id(node.orelse)], (id(node.test), False)))
        elif isinstance(node, (cst.For, cst.While)):
            ranges.append((*order[id(node)], ("loop", id(node))))
        else:  # try / try*: the body and its else may stop part-way; a handler may not run
            ranges.append((*order[id(node.body)], ("try", id(node))))
            if node.orelse is not None:
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


def _caught_names(node: cst.Try) -> Tuple[str, ...]:
    """The exception names a ``try``'s handlers catch (last component; "*" for ``except:``)."""
    out = []
    for handler in node.handlers:
        if handler.type is None:
            out.append("*")
            continue
        types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
        for t in types:
            value = t.value if isinstance(t, cst.Element) else t
            name = dotted(value)
            out.append(name.rsplit(".", 1)[-1] if name else "*")
    return tuple(out)


def _dominating_guard(stmt: cst.CSTNode) -> Optional[GuardNode]:
    """The condition that holds after ``stmt`` for the rest of its block, if any:
    ``assert ok`` (ok holds), ``if not ok: return/raise/sys.exit()`` with no ``else``
    (``not ok`` is false)."""
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, cst.Assert):
                return (small.test, True)
        return None
    if isinstance(stmt, cst.If) and stmt.orelse is None and _exits(stmt.body):
        return (stmt.test, False)
    return None


def _raises(stmt: cst.CSTNode) -> bool:
    """Whether the dominating guard of ``stmt`` (``_dominating_guard``) fails only by raising or
    ending the program: ``assert``, ``if bad: raise ...`` / ``sys.exit()`` (not ``return``)."""
    if isinstance(stmt, cst.SimpleStatementLine):
        return True
    body = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else [stmt.body]
    last = body[-1] if body else None
    smalls = last.body if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else ()
    return any(
        isinstance(small, cst.Raise)
        or isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and dotted(small.value.func) in _EXIT_CALLS
        for small in smalls
    )


def _exits(block: cst.BaseSuite) -> bool:
    """Whether a block always leaves its function or the program (its last statement)."""
    body = block.body if isinstance(block, cst.IndentedBlock) else [block]
    if not body:
        return False
    last = body[-1]
    smalls = last.body if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else ()
    for small in smalls:
        if isinstance(small, (cst.Return, cst.Raise)):
            return True
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            if dotted(small.value.func) in _EXIT_CALLS:
                return True
    return False


def literal_key(node: cst.Subscript) -> Optional[str]:
    """The key of ``d["k"]`` when it is a string literal."""
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        key = node.slice[0].slice.value
        if isinstance(key, cst.SimpleString) and isinstance(key.evaluated_value, str):
            return key.evaluated_value
    return None


def item_owner(node: cst.BaseExpression) -> Optional[str]:
    """The key under which ``node[k] = v`` is indexed: the dict's name (``cfg``), or for a dict
    nested in one by literal keys (``cfg["model"]["dtype"] = v``) the name and the keys,
    ``cfg\x00model``; None for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Subscript):
        key = literal_key(node)
        outer = item_owner(node.value) if key is not None else None
        if outer is not None:
            return f"{outer}\x00{key}"
    return None


def _target_names(target: cst.BaseExpression) -> List[Tuple[str, Optional[int]]]:
    """Names bound by an assignment target, with their unpacking position."""
    if isinstance(target, cst.Name):
        return [(target.value, None)]
    if isinstance(target, (cst.Tuple, cst.List)):
        out = []
        for i, el in enumerate(target.elements):
            value = el.value
            if isinstance(value, cst.Name):
                out.append((value.value, i))
            elif isinstance(el, cst.StarredElement) and isinstance(value, cst.Name):
                out.append((value.value, None))
        return out
    return []


class _Indexer(cst.CSTVisitor):
    def __init__(self, index: ModuleIndex) -> None:
        super().__init__()
        self.ix = index
        self.scope = index.root
        self.guards: List[GuardNode] = []
        self.contexts: List[str] = []
        self.context_items: List[cst.BaseExpression] = []
        self.classes: List[ClassInfo] = []
        self.loops: List[ForLoop] = []
        self.statement: Optional[cst.CSTNode] = None
        self.caught: List[Tuple[str, ...]] = []  # per enclosing try body / except block
        self.expression_guards: List[Tuple[cst.BaseExpression, bool]] = []

    # --- statements ----------------------------------------------------------
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.statement = node

    def visit_Import(self, node: cst.Import) -> None:
        self._import(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
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

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            names = _target_names(target.target)
            for name, idx in names:
                self._bind(name, node.value, node, idx)
            sub = target.target
            owner = item_owner(sub.value) if isinstance(sub, cst.Subscript) else None
            if owner is not None and len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index):
                self.ix.item_assigns.setdefault(owner, []).append(
                    ItemAssign(sub.slice[0].slice.value, node.value, self.scope, tuple(self.guards), node)
                )
            if isinstance(target.target, cst.Subscript) and misfits_half(number(node.value)):
                self._half_misfit(node, node.value, target.target.value, "subscript")
            if not names and isinstance(target.target, cst.Attribute):
                self._self_attr(target.target, Assignment(node.value, tuple(self.guards), node))
                self.ix.attr_assigns.append(
                    AttrAssign(target.target, node.value, self.scope, tuple(self.loops), tuple(self.guards))
                )

    def _half_misfit(self, node, literal, other, kind) -> None:
        self.ix.half_misfits.append(
            HalfMisfit(node, literal, number(literal), other, kind, self.scope,
                       self.classes[-1].qualname if self.classes else None, tuple(self.context_items))
        )

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, (cst.Add, cst.Subtract)):
            for name, other in ((node.right, node.left), (node.left, node.right)):
                if isinstance(name, cst.Name):
                    self.ix.name_operands.append(
                        HalfMisfit(node, name, 0.0, other, "binary", self.scope,
                                   self.classes[-1].qualname if self.classes else None, tuple(self.context_items))
                    )
        if isinstance(node.operator, cst.MatrixMultiply):
            self.ix.matmuls[id(node)] = MatmulSite(node, self.scope, tuple(self.contexts), tuple(self.context_items))
        for literal, other in ((node.right, node.left), (node.left, node.right)):
            if misfits_half(number(literal)):
                self._half_misfit(node, literal, other, "binary")
                break

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        for name, idx in _target_names(node.target):
            self._bind(name, node.value, node, idx)
        if isinstance(node.target, cst.Attribute):
            self._self_attr(node.target, Assignment(node.value, tuple(self.guards), node))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        for name, _ in _target_names(node.target):
            self._bind(name, None, node)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        for name, idx in _target_names(node.target):
            self._bind(name, node.value, node, idx)

    def visit_For(self, node: cst.For) -> None:
        for name, _ in _target_names(node.target):
            self._bind(name, None, node)
        loop = ForLoop(node.target, node.iter, self.scope)
        self.ix.for_loops.append(loop)
        self.loops.append(loop)

    def leave_For(self, node: cst.For) -> None:
        self.loops.pop()

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            # `with open("c.yaml") as f`: f is what the context manager gives, followed no
            # further than its call (config loaders read the path from it)
            for name, idx in _target_names(node.asname.name):
                self._bind(name, node.item if idx is None else None, node)

    def visit_Global(self, node: cst.Global) -> None:
        self.scope.globals.update(n.name.value for n in node.names)

    def _self_attr(self, target: cst.Attribute, assignment: Optional[Assignment] = None) -> None:
        if self.classes and isinstance(target.value, cst.Name) and target.value.value == "self":
            self.classes[-1].self_attrs.add(target.attr.value)
            if assignment is not None:
                self.classes[-1].self_attr_values.setdefault(target.attr.value, []).append(
                    (assignment, self.scope)
                )

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self.scope.returns.append((node.value, tuple(self.guards)))

    # --- guards ----------------------------------------------------------------
    def _caught(self) -> Tuple[str, ...]:
        return tuple(name for names in self.caught for name in names)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self.caught.append(("<handler>",))

    def leave_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self.caught.pop()

    def visit_If_body(self, node: cst.If) -> None:
        self.guards.append((node.test, True))

    def leave_If_body(self, node: cst.If) -> None:
        self.guards.pop()

    # `a if test else b`: a condition for what each side reads (kept apart from `guards`, which
    # the rules read for calls)
    def visit_IfExp_body(self, node: cst.IfExp) -> None:
        self.expression_guards.append((node.test, True))

    def leave_IfExp_body(self, node: cst.IfExp) -> None:
        self.expression_guards.pop()

    def visit_IfExp_orelse(self, node: cst.IfExp) -> None:
        self.expression_guards.append((node.test, False))

    def leave_IfExp_orelse(self, node: cst.IfExp) -> None:
        self.expression_guards.pop()

    def visit_If_orelse(self, node: cst.If) -> None:
        self.guards.append((node.test, False))

    def leave_If_orelse(self, node: cst.If) -> None:
        self.guards.pop()

    def visit_With_body(self, node: cst.With) -> None:
        for item in node.items:
            self.contexts.append("")  # qualified once every binding is known (_resolve_names)
            self.context_items.append(item.item)

    def leave_With_body(self, node: cst.With) -> None:
        for _ in node.items:
            self.contexts.pop()
            self.context_items.pop()

    # --- scopes ----------------------------------------------------------------
    def _enter(self, name: str, kind: str, node: cst.CSTNode) -> Scope:
        qual = f"{self.scope.qualname}.{name}" if self.scope.qualname else name
        scope = Scope(qual, kind, self.scope, node)
        self.ix.scopes[qual] = scope
        self.scope = scope
        return scope

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope.assignments.setdefault(node.name.value, []).append(
            Assignment(None, tuple(self.guards), node)
        )
        if node.name.value == "__init__" and self.scope.kind == "class" and self.classes:
            p = node.params
            self.classes[-1].init_params = tuple(
                x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)
            )
        scope = self._enter(node.name.value, "function", node)
        self.ix.functions[scope.qualname] = scope
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            scope.params[param.name.value] = param.default
        scope.positional = tuple(p.name.value for p in (*params.posonly_params, *params.params))
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                scope.params[star.name.value] = None
        # guards do not flow into a function body from where it is defined
        self._saved_guards = getattr(self, "_saved_guards", [])
        self._saved_guards.append((self.guards, self.contexts, self.context_items, self.loops))
        self.guards, self.contexts, self.context_items, self.loops = [], [], [], []

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope = self.scope.parent
        self.guards, self.contexts, self.context_items, self.loops = self._saved_guards.pop()

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return True

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = ()  # qualified once every binding is known (_resolve_names)
        self.scope.assignments.setdefault(node.name.value, []).append(
            Assignment(None, tuple(self.guards), node)
        )
        scope = self._enter(node.name.value, "class", node)
        info = self.ix.classes.get(scope.qualname)
        if info is not None:  # defined twice (`try: class A(X) ... except: class A(Y)`): both count
            info.more_nodes.append(node)
        else:
            info = ClassInfo(scope.qualname, node.name.value, bases, node)
            self.ix.classes[scope.qualname] = info
        self.classes.append(info)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope = self.scope.parent
        self.classes.pop()

    # --- expressions --------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        method = receiver = None
        qualname = None  # qualified once every binding is known (_resolve_names)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
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
        )
        self.ix.calls.append(site)
        self.ix.calls_by_node[id(node)] = site
        if method == "add_argument":
            self._arg_option(node)

    def leave_Assign(self, node: cst.Assign) -> None:
        site = self.ix.calls_by_node.get(id(node.value))
        if site is not None:
            names = []
            for target in node.targets:
                names.extend(n for n, idx in _target_names(target.target) if idx is None)
                if isinstance(target.target, cst.Attribute) and dotted(target.target):
                    names.append(dotted(target.target))
            site.assigned_to = tuple(names)

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            site = self.ix.calls_by_node.get(id(node.value))
            if site is not None:
                site.assigned_to = tuple(n for n, idx in _target_names(node.target) if idx is None)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in TRACKED_ATTRS:
            self.ix.attr_uses.append(
                AttrUse(node, node.value, node.attr.value, self.scope,
                        self.classes[-1].qualname if self.classes else None,
                        (*self.guards, *self.expression_guards), self._caught())
            )

    def _arg_option(self, node: cst.Call) -> None:
        dest = None
        flags: List[str] = []
        for arg in node.args:
            if arg.keyword is not None:
                if arg.keyword.value == "dest" and isinstance(arg.value, cst.SimpleString):
                    dest = arg.value.evaluated_value
                continue
            if isinstance(arg.value, cst.SimpleString):
                flags.append(arg.value.evaluated_value)
        if dest is None:
            longs = [f for f in flags if isinstance(f, str) and f.startswith("--")]
            chosen = longs[0] if longs else (flags[0] if flags else None)
            if not isinstance(chosen, str):
                return
            dest = chosen.lstrip("-").replace("-", "_")
        self.ix.arg_options.setdefault(dest, []).append(ArgOption(dest, node))


def keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional(call: cst.Call) -> Sequence[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def argument(call: cst.Call, position: int, *names: str) -> Optional[cst.BaseExpression]:
    """The value of a call's parameter: passed by one of its keyword ``names``, else the
    ``position``-th positional argument (``get_peft_model(model, ...)`` / ``model=model``);
    None when the call passes neither."""
    for name in names:
        given = keyword(call, name)
        if given is not None:
            return given.value
    args = positional(call)
    return args[position].value if len(args) > position else None


def element(value: Optional[cst.BaseExpression], position: int) -> Optional[cst.BaseExpression]:
    """The expression a ``position``-th target takes from ``value`` when it is a literal tuple
    or list (``s, t = student(x), teacher(x)``); None when it is anything else, or when a
    starred element makes positions unknown."""
    if not isinstance(value, (cst.Tuple, cst.List)) or any(isinstance(e, cst.StarredElement) for e in value.elements):
        return None
    elements = value.elements
    return elements[position].value if 0 <= position < len(elements) else None
