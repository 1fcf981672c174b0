"""Facts about the deprecated ``torch.cuda.amp`` and ``torch.cpu.amp`` APIs (read by MP303).

Recorded per file, unjudged: every call of ``torch.cuda.amp.GradScaler`` /
``autocast`` / ``custom_fwd`` / ``custom_bwd`` and every bare decorator
``@torch.cuda.amp.custom_fwd`` — reached through ``torch``, a module alias
(``from torch.cuda import amp``, ``import torch.cuda.amp as amp``) or a name
imported from ``torch.cuda.amp`` — with what a rewrite to ``torch.amp`` needs:
the callee's text, where the arguments start, which arguments are positional;
and the import statements that bind names to ``torch.cuda.amp``. The same for
``torch.cpu.amp.autocast`` / ``GradScaler`` (deprecated with them in torch 2.4: ``FutureWarning:
`torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu',
args...)` instead.``), each use with its device.

``references``: the deprecated callables used as values, to be called elsewhere
(``autocast = torch.cuda.amp.autocast if use_fp16 else nullcontext`` entered as
``with autocast():``, ``return torch.cuda.amp.autocast``, ``partial(torch.cuda.amp.
autocast, dtype=d)``): each call warns as a direct one does. Not a reference: a type
test or comparison (``isinstance(s, torch.cuda.amp.GradScaler)``, ``type(s) is ...``),
an annotation, an ``except`` clause, an attribute of the class (``GradScaler.step``), an
alias the module never calls (see ``_references``).
A rewrite of a reference is not the call's (``torch.amp.autocast`` wants the device
first, where the reference's callers pass ``enabled`` by position), so they are a
list of their own (``AmpUse.is_call`` False, ``reference`` True).
"""
from __future__ import annotations

from ..._dataclass import dataclass
from typing import Dict, FrozenSet, Optional, Tuple

import ast

from ...diagnostics import Span
from ...semantic.evaluate import Evaluator
from ...semantic.index import FUNCTION_DEFS, ModuleIndex, Scope, call_args, names_read, nodes_of, positional
from ...semantic.names import dotted
from ...semantic.queries import binding_scope, is_builtin, position, qualified_name, reaching
from ...semantic.version_tests import HelperCall, VersionTests, version_tests_of
from .precision import after_open_paren

SECTION = "cuda_amp"
EMPTY = {"uses": (), "imports": (), "references": ()}

OLD = "torch.cuda.amp"
NEW = "torch.amp"
NAMES = ("GradScaler", "autocast", "custom_fwd", "custom_bwd")
# each deprecated module, with the device its callables stand for and the names it has
OLD_MODULES = {"torch.cuda.amp": ("cuda", NAMES), "torch.cpu.amp": ("cpu", ("GradScaler", "autocast"))}
_TRY = (ast.Try, *(c for c in (getattr(ast, "TryStar", None),) if c is not None))


@dataclass(frozen=True)
class AmpUse:
    """One use of a deprecated ``torch.cuda.amp`` callable."""

    name: str  # GradScaler, autocast, custom_fwd, custom_bwd
    func_span: Span  # the callee expression (`torch.cuda.amp.GradScaler`, `amp.autocast`, `GradScaler`)
    func_text: str
    head: str  # the first name of the callee expression (`torch`, `amp`, `GradScaler`)
    head_binds: str  # what that name is bound to (`torch`, `torch.cuda`, `torch.cuda.amp`, `torch.cuda.amp.X`)
    is_call: bool  # False: a bare decorator `@torch.cuda.amp.custom_fwd`
    open_paren: int  # offset just after `(` (calls only)
    # (start offset, keyword or None, end offset) for each argument, in order; keyword "*" / "**" for splats
    args: Tuple[Tuple[int, Optional[str], int], ...] = ()
    # the use sits in a branch chosen by the torch version or by what torch has
    # (`if is_torch_version(">=", "2.3"): torch.amp... else: torch.cuda.amp...`): compatibility code
    version_gated: bool = False
    # calls of other modules' functions in the tests around it (`if new_torch("2.3"):` with
    # `new_torch` imported from the project's utils): the join reads whether one tests torch's
    # version (their `version_gates` predicates)
    version_helpers: Tuple[HelperCall, ...] = ()
    # a reference to the callable, called elsewhere (`ctx = torch.cuda.amp.autocast if fp16 else
    # nullcontext`), neither a call nor a decorator
    reference: bool = False
    # called through a variable (`amp_autocast = suppress` ... `if amp: amp_autocast =
    # torch.cuda.amp.autocast` ... `with amp_autocast():`): it warns where the variable holds the
    # deprecated callable; a rewrite of the call would call the new one where it holds another,
    # and leave the binding behind where it holds only this one
    through_variable: bool = False
    device: str = "cuda"  # the device of the deprecated module: "cuda" (`torch.cuda.amp`) or "cpu"
    # a base class (`class LoggingScaler(torch.cuda.amp.GradScaler):`) whose subclass runs its
    # `__init__` (it defines none, or calls `super().__init__(...)`) and is made in the module:
    # each instance warns
    base_class: bool = False


@dataclass(frozen=True)
class AmpImport:
    """An import statement that binds names to ``torch.cuda.amp`` or something inside it."""

    module_span: Optional[Span]  # `torch.cuda.amp` in `from torch.cuda.amp import ...` (or `torch.cuda`)
    module_text: str
    kind: str  # "from" or "import"
    # (local name, qualified name) it binds
    bindings: Tuple[Tuple[str, str], ...]
    alias_spans: Tuple[Span, ...] = ()  # `import torch.cuda.amp as amp`: the dotted name `torch.cuda.amp`
    text: str = ""  # the whole statement


def _target(qualname: Optional[str]) -> Optional[Tuple[str, str]]:
    """``(device, name)`` of a deprecated callable ``qualname`` is (``torch.cuda.amp.autocast``:
    ``("cuda", "autocast")``), else None."""
    module = old_module(qualname)
    if module is None or qualname == module:
        return None
    device, names = OLD_MODULES[module]
    # `torch.cuda.amp.autocast_mode.autocast` is the same object
    last = qualname.rsplit(".", 1)[-1]
    return (device, last) if last in names else None


def old_module(qualname: Optional[str]) -> Optional[str]:
    """The deprecated module ``qualname`` is or lies in (``torch.cuda.amp``, ``torch.cpu.amp``)."""
    if not qualname:
        return None
    for module in OLD_MODULES:
        if qualname == module or qualname.startswith(module + "."):
            return module
    return None


def _version_gated(index: ModuleIndex, guards) -> Tuple[bool, Tuple[HelperCall, ...]]:
    """Whether one of the ``if`` tests around a use chooses by torch's version or by what torch
    has (compatibility code: the ``torch.cuda.amp`` branch is the one for old torch); where none
    does here, the calls of other modules' functions in the tests, for the join to read."""
    tests = version_tests_of(index)
    helpers = []
    for test, positive in guards:
        found = tests.test(test, positive)
        if found is not None and found.dist == "torch":
            return True, ()
        if _asks_torch(index, tests, test, index.scope_of(test), set(), positive=positive):
            return True, ()
        helpers.extend(tests.helper_calls(test, positive))
    return False, tuple(helpers)


def _new_name(qualname: Optional[str]) -> Optional[str]:
    """The name of a device-generic AMP entry point ``qualname`` is (``torch.amp.GradScaler``,
    ``torch.amp.grad_scaler.GradScaler``, ``torch.autocast``), else None."""
    if qualname == "torch.autocast":
        return "autocast"
    if not qualname or not qualname.startswith(NEW + "."):
        return None
    last = qualname.rsplit(".", 1)[-1]
    return last if last in NAMES else None


def _fallbacks(index: ModuleIndex) -> Dict[int, FrozenSet[str]]:
    """id(node) → the names of ``torch.amp`` the ``try`` body above calls, for each node inside
    an ``except`` handler of a ``try`` whose body calls the device-generic spelling::

        try:
            scaler = torch.amp.GradScaler(device=device)
        except (AttributeError, TypeError):
            scaler = torch.cuda.amp.GradScaler()  # runs only where torch.amp has no GradScaler

    The handler is the fallback for a torch without ``torch.amp.GradScaler`` (before 2.3),
    where ``torch.cuda.amp`` is not deprecated; wherever the deprecated call would warn, the
    ``try`` body succeeds and the handler never runs. Read from the tree: the callee of each
    call in the body, resolved through the imports, never its text."""
    found: Dict[int, FrozenSet[str]] = {}
    for node in ast.walk(index.root.node):
        if not isinstance(node, _TRY) or not node.handlers:
            continue
        frozen = _new_names_called(index, node.body)
        if not frozen:
            continue
        for handler in node.handlers:
            for inner in ast.walk(handler):
                found[id(inner)] = found.get(id(inner), frozenset()) | frozen
    return found


def _after_tried(index: ModuleIndex) -> Dict[int, FrozenSet[str]]:
    """id(node) → the names of ``torch.amp`` tried first, for each node of the statements that
    follow, in the same block, an ``if`` on what torch has whose body is one ``try`` that returns
    the device-generic spelling on every path and whose handlers fall through::

        if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
            try:
                return torch.amp.GradScaler("cuda")
            except Exception:
                pass
        return torch.cuda.amp.GradScaler()  # runs where torch.amp has none (before 2.3)

    What follows runs only where torch lacks the name or where calling it raised: on a torch
    that has it (where the old spelling is deprecated) the ``try`` returns (review 29c: a DDPM
    project's ``make_grad_scaler``). A plain ``if hasattr(...): return ...`` is the index's exit
    guard already; the ``try`` is what keeps the body from always leaving."""
    found: Dict[int, FrozenSet[str]] = {}
    for node in ast.walk(index.root.node):
        for block in (getattr(node, "body", None), getattr(node, "orelse", None), getattr(node, "finalbody", None)):
            if not isinstance(block, list):
                continue
            for i, statement in enumerate(block):
                names = _tried_and_returned(index, statement)
                if not names:
                    continue
                for later in block[i + 1:]:
                    for inner in ast.walk(later):
                        found[id(inner)] = found.get(id(inner), frozenset()) | names
    return found


def _tried_and_returned(index: ModuleIndex, statement: ast.stmt) -> FrozenSet[str]:
    """The ``torch.amp`` names an ``if hasattr(torch..., ...):`` whose body is one ``try``
    returning on every path calls there (see :func:`_after_tried`); empty for any other
    statement."""
    if not isinstance(statement, ast.If) or statement.orelse or len(statement.body) != 1:
        return frozenset()
    attempt = statement.body[0]
    if not isinstance(attempt, _TRY) or attempt.orelse or attempt.finalbody or not _always_returns(attempt.body):
        return frozenset()
    if any(_leaves(handler.body) for handler in attempt.handlers):
        return frozenset()  # a handler that returns or raises: nothing falls through it
    scope = index.scope_of(statement)
    negated = _under_not(statement.test)
    if not any(
        isinstance(n, ast.Call) and id(n) not in negated and _has_torch(index, n, scope) for n in nodes_of(statement.test)
    ):
        return frozenset()
    return _new_names_called(index, attempt.body)


def _new_names_called(index: ModuleIndex, statements: list) -> FrozenSet[str]:
    """The names of ``torch.amp`` (its device-generic spellings) that ``statements`` call, by
    each call's callee resolved through the imports, never its text."""
    names = set()
    for statement in statements:
        for inner in ast.walk(statement):
            if isinstance(inner, ast.Call):
                site = index.call_of(inner)
                name = _new_name(site.qualname if site is not None else None)
                if name is not None:
                    names.add(name)
    return frozenset(names)


def _always_returns(body: list) -> bool:
    """Whether a block of statements returns on every path (its last statement a ``return``, or
    an ``if`` whose branches both do)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _always_returns(last.body) and _always_returns(last.orelse)


def _leaves(body: list) -> bool:
    """Whether a handler's block leaves the function or raises on its last statement."""
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def _asks_torch(
    index: ModuleIndex, tests: VersionTests, expr: ast.expr, scope: Scope, seen: set, depth: int = 0, positive: bool = True
) -> bool:
    """Whether ``expr`` reads torch's installed version anywhere in its tree (``torch.__version__``,
    ``importlib.metadata.version("torch")``, through ``version.parse``: ``torch.__version__.
    startswith("2")``, ``int(torch.__version__.split(".")[0]) >= 2``), calls a torch version
    helper (``is_torch_version(">=", "2.3")``) or asks what torch has (``hasattr(torch.amp,
    "GradScaler")``) — itself, through a variable bound to such an expression (``TORCH_GE_2 =
    version.parse(torch.__version__) >= ...``) or through a function of this module that returns
    one. Names are read as variables, never as words: ``args.version == 2`` asks none of this.

    ``positive``: whether the code in question runs where ``expr`` holds. What torch *has* gates
    only where it runs without it (``if not hasattr(torch, "amp"):``, the ``else`` of ``if
    hasattr(...)``): a branch that runs where torch has a name runs on every newer torch too."""
    if depth > 4:
        return False
    negated = _under_not(expr)
    for node in nodes_of(expr):
        if isinstance(node, (ast.Attribute, ast.Call)) and tests.library_version(node, scope) == "torch":
            return True
        if not isinstance(node, ast.Call):
            continue
        if _has_torch(index, node, scope) and not (positive ^ (id(node) in negated)):
            return True  # runs where torch lacks the name: older torch
        found = tests.test(node, True, scope)
        if found is not None and found.dist == "torch":
            return True
        function = index.functions.get(index.qualify(node.func, scope) or "")
        if function is not None and id(function.node) not in seen:
            seen.add(id(function.node))
            if any(
                _asks_torch(index, tests, value, function, seen, depth + 1, positive ^ (id(node) in negated))
                for value, _ in function.returns if value is not None
            ):
                return True
    for name in names_read(expr):
        if tests.library_version(name, scope) == "torch":  # `from torch import __version__`
            return True
        for binding in reaching(index, name, scope).bindings:
            value = binding.value
            if value is None or id(value) in seen or position(index, value) is None:
                continue
            seen.add(id(value))
            if _asks_torch(index, tests, value, index.scope_of(value), seen, depth + 1, positive ^ (id(name) in negated)):
                return True
    return False


def _under_not(expr: ast.expr) -> set:
    """The ids of the nodes of ``expr`` under an odd number of ``not``."""
    odd: set = set()

    def walk(node, flipped: bool) -> None:
        if flipped:
            odd.add(id(node))
        for child in ast.iter_child_nodes(node):
            walk(child, flipped ^ (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)))
    walk(expr, False)
    return odd


def _has_torch(index: ModuleIndex, call: ast.Call, scope: Scope) -> bool:
    """``hasattr(torch, "amp")``, ``hasattr(torch.amp, "GradScaler")``: a test of what the
    installed torch has (the builtin ``hasattr``, not a function of the project so named)."""
    func = call.func
    if not isinstance(func, ast.Name) or func.id != "hasattr" or not is_builtin(index, func, scope):
        return False
    args = positional(call)
    owner = index.qualify(args[0], scope) if args else None
    return owner is not None and (owner == "torch" or owner.startswith("torch."))


def _through_variable(index: ModuleIndex, func: ast.expr, scope: Scope) -> bool:
    """Whether a callee is a variable assigned the deprecated callable (``amp_autocast()``),
    not a name an import binds (``autocast()`` from ``torch.cuda.amp``)."""
    if not isinstance(func, ast.Name):
        return False
    owner, bindings = reaching(index, func, scope)
    return owner is not None and bool(bindings) and all(b.imported is None for b in bindings)


def _head_binding(index: ModuleIndex, expr: ast.expr, scope) -> Tuple[str, str]:
    text = dotted(expr) or ""
    head = text.partition(".")[0]
    bound = qualified_name(index, head, scope, position(index, expr)) or ""
    return head, bound


def _args(index: ModuleIndex, call: ast.Call) -> Tuple[Tuple[int, Optional[str], int], ...]:
    """Each argument's range, in the order written: a splat from its star (an ``ast.Starred``'s
    range starts there, and a ``**kw`` keyword's), a keyword from its name."""
    out = []
    for arg in call_args(call):
        if isinstance(arg, ast.keyword):
            out.append((index.span(arg).start, arg.arg if arg.arg is not None else "**", index.span(arg.value).end))
        elif isinstance(arg, ast.Starred):
            out.append((index.span(arg).start, "*", index.span(arg.value).end))
        else:
            span = index.span(arg)
            out.append((span.start, None, span.end))
    return tuple(out)


def extract(index: ModuleIndex, evaluator: Evaluator):
    uses = []
    fallbacks: Optional[Dict[int, FrozenSet[str]]] = None
    tried: Optional[Dict[int, FrozenSet[str]]] = None
    for site in index.calls:
        found = _target(site.qualname)
        if found is None or dotted(site.node.func) is None or evaluator.dead(site.guards, site.scope):
            continue  # a call in a branch no run takes (`if mode == "amp":` of `mode = "fp32"`) never warns
        device, name = found
        func_span = index.span(site.node.func)
        paren = after_open_paren(index, site.node)
        head, bound = _head_binding(index, site.node.func, site.scope)
        gated, helpers = _version_gated(index, site.guards)
        if not gated and "<handler>" in site.caught:
            if fallbacks is None:
                fallbacks = _fallbacks(index)  # only in a file with a deprecated call in a handler
            gated = name in fallbacks.get(id(site.node), ())
        if not gated:
            if tried is None:
                tried = _after_tried(index)
            gated = name in tried.get(id(site.node), ())
        uses.append(
            AmpUse(name, func_span, index.text(site.node.func), head, bound, True, paren, _args(index, site.node),
                   gated, helpers, through_variable=_through_variable(index, site.node.func, site.scope), device=device)
        )
    for scope in index.functions.values():
        if not isinstance(scope.node, FUNCTION_DEFS):
            continue  # a lambda has no decorators
        outer = scope.parent or index.root
        for expr in scope.node.decorator_list:
            if not isinstance(expr, (ast.Name, ast.Attribute)):
                continue  # calls were recorded above
            found = _target(index.qualify(expr, outer))
            if found is None:
                continue
            head, bound = _head_binding(index, expr, outer)
            uses.append(AmpUse(found[1], index.span(expr), index.text(expr), head, bound, False, -1, device=found[0]))
    imports = []
    references = _references(index) if _may_reference(index) else ()
    for node in index.import_statements:
        if isinstance(node, ast.ImportFrom):
            if node.level or node.names[0].name == "*" or node.module is None:
                continue
            module = node.module
            if module not in ("torch.cuda", "torch.cpu") and old_module(module) is None:
                continue
            bindings = tuple(
                (a.asname if a.asname is not None else a.name, f"{module}.{a.name}")
                for a in node.names
            )
            if not any(old_module(full) is not None for _, full in bindings):
                continue
            imports.append(AmpImport(index.name_span(node), module, "from", bindings, (), index.text(node)))
        else:
            for alias in node.names:
                full = alias.name
                if alias.asname is not None and old_module(full) is not None:
                    imports.append(
                        AmpImport(
                            None, full, "import", ((alias.asname, full),), (index.name_span(alias),),
                            index.text(node),
                        )
                    )
    uses.sort(key=lambda u: u.func_span.start)
    return {"uses": tuple(uses), "imports": tuple(imports), "references": references}


# fields that hold no value handed on to be called: annotations, `except` clauses, base classes
# and decorators (a bare decorator is recorded as such), comparisons' operands
_SKIPPED_FIELDS = {
    ast.AnnAssign: ("annotation", "target"), ast.arg: ("annotation",), ast.ExceptHandler: ("type",),
    ast.FunctionDef: ("returns", "decorator_list"), ast.AsyncFunctionDef: ("returns", "decorator_list"),
    ast.ClassDef: ("bases", "keywords", "decorator_list"), ast.Compare: ("left", "comparators"),
}
_TYPE_TESTS = frozenset({"isinstance", "issubclass", "type"})
# expressions a value passes through unchanged on its way to where it is handed on
_THROUGH = (ast.IfExp, ast.BoolOp, ast.Starred)
# where a value is handed on to be called by others: returned, passed, put in a container, a default
_HANDED_ON = (ast.Return, ast.Yield, ast.YieldFrom, ast.Lambda, ast.Call, ast.keyword, ast.Dict, ast.List,
              ast.Tuple, ast.Set, ast.arguments)


def _runs_base_init(node: ast.ClassDef) -> bool:
    """Whether an instance of the class runs its base's ``__init__``: the class defines none,
    or its own calls ``super().__init__(...)`` (or ``Base.__init__(self, ...)``)."""
    init = next((s for s in node.body if isinstance(s, FUNCTION_DEFS) and s.name == "__init__"), None)
    if init is None:
        return True
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__"
        for n in ast.walk(init)
    )


def _instantiated(index: ModuleIndex, node: ast.ClassDef) -> bool:
    """Whether the module makes an instance of the class (a call of its name): defining a
    subclass warns of nothing, making one runs the deprecated ``__init__``."""
    return any(
        isinstance(site.node.func, ast.Name) and site.node.func.id == node.name for site in index.calls
    )


def _may_reference(index: ModuleIndex) -> bool:
    """Whether the module can mention a deprecated callable through an import at all: it writes
    ``cuda.amp`` (``torch.cuda.amp.autocast``, an import of ``torch.cuda.amp``) or imports
    ``torch.cuda`` itself (``from torch.cuda import amp``, ``from torch import cuda``, ``import
    torch.cuda as tc``). Every other module's tree is not walked for references: they were the
    walk of nearly every file that imports torch (the word ``amp`` is in ``sample``)."""
    if "cuda.amp" in index.source or "cpu.amp" in index.source:
        return True
    devices = ("torch.cuda", "torch.cpu")
    for node in index.import_statements:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                continue
            if node.module in devices or (node.module or "").startswith(("torch.cuda.", "torch.cpu.")):
                return True
            if node.module == "torch" and any(a.name in ("cuda", "cpu") for a in node.names):
                return True
        elif any(a.name in devices or a.name.startswith(("torch.cuda.", "torch.cpu.")) for a in node.names):
            return True
    return False


def _references(index: ModuleIndex) -> Tuple[AmpUse, ...]:
    """The deprecated callables used as values (module docstring), each with the ``if`` tests
    and conditional expressions around it (read as version gates as a call's are).

    Only a mention through an import (``torch.cuda.amp.autocast``, ``amp.autocast``,
    ``autocast`` imported from ``torch.cuda.amp``), not a variable holding one, and only where
    it is handed on to be called: returned, passed, put in a container, a parameter's default,
    or bound to a name that the module calls where the call does not resolve to the deprecated
    callable itself (``ctx = torch.cuda.amp.autocast if fp16 else nullcontext`` ... ``with
    ctx():``). A call that does resolve through the binding (``x = torch.cuda.amp.autocast``
    ... ``x()``) is recorded as a call, and an alias never called here is no use."""
    out = []
    fallbacks: Optional[Dict[int, FrozenSet[str]]] = None
    callees: Optional[Dict[str, bool]] = None

    def unresolved_call(target: ast.expr) -> bool:
        """Whether the module calls ``target`` (by its dotted text) somewhere the call's callee
        is not resolved to a deprecated callable (those calls are recorded themselves)."""
        nonlocal callees
        if callees is None:
            callees = {}
            for site in index.calls:
                text = dotted(site.node.func)
                if text is not None:
                    callees[text] = callees.get(text, False) or _target(site.qualname) is None
        text = dotted(target)
        return text is not None and callees.get(text, False)

    def handed_on(chain) -> bool:
        node = chain[-1]
        for parent in reversed(chain[:-1]):
            if isinstance(parent, _THROUGH) and getattr(parent, "test", None) is not node:
                node = parent
                continue
            if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
                targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
                return any(unresolved_call(t) for t in targets)
            return isinstance(parent, _HANDED_ON)
        return False

    def record(node: ast.expr, scope, guards, handler: bool, base_class: bool = False) -> None:
        nonlocal fallbacks
        found = _target(index.qualify(node, scope))
        if found is None:
            return
        device, name = found
        gated, helpers = _version_gated(index, guards)
        if not gated and handler:
            if fallbacks is None:
                fallbacks = _fallbacks(index)
            gated = name in fallbacks.get(id(node), ())
        head, bound = _head_binding(index, node, scope)
        out.append(AmpUse(name, index.span(node), index.text(node), head, bound, False, -1, (),
                          gated, helpers, reference=True, device=device, base_class=base_class))

    def imported(node: ast.AST, scope) -> bool:
        """A dotted name read through an import (not a variable that holds the callable)."""
        head = dotted(node).partition(".")[0]
        owner = binding_scope(head, scope)
        return owner is not None and owner.is_import(head)

    def visit(node: ast.AST, chain, guards, handler: bool) -> None:
        chain = chain + [node]
        if isinstance(node, ast.ClassDef) and _runs_base_init(node) and _instantiated(index, node):
            scope = index.scope_of(node)
            for base in node.bases:
                if isinstance(base, (ast.Name, ast.Attribute)) and dotted(base) is not None and imported(base, scope):
                    record(base, scope, guards, handler, base_class=True)
        if isinstance(node, (ast.Name, ast.Attribute)) and dotted(node) is not None:
            # a dotted name read whole: its parts (`torch.cuda.amp`, `torch`) are not visited
            if not isinstance(node.ctx, ast.Load):
                return
            scope = index.scope_of(node)
            if not imported(node, scope):
                return  # a variable that holds one: the mention that bound it is the reference
            if handed_on(chain):
                record(node, scope, guards, handler)
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _TYPE_TESTS:
            return  # `isinstance(s, torch.cuda.amp.GradScaler)`: nothing is called
        skipped = _SKIPPED_FIELDS.get(type(node), ())
        for field, value in ast.iter_fields(node):
            if field in skipped or (field == "func" and isinstance(node, ast.Call)):
                continue  # a callee is a call, recorded above (`torch.cuda.amp.autocast(...)`)
            inner = guards
            if isinstance(node, (ast.If, ast.IfExp, ast.While)) and field in ("body", "orelse"):
                inner = guards + ((node.test, field == "body"),)
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    visit(child, chain, inner, handler or isinstance(node, ast.ExceptHandler))

    visit(index.root.node, [], (), False)
    return tuple(sorted(out, key=lambda u: u.func_span.start))
