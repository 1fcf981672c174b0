"""Facts about knowledge-distillation losses and where their logits come from (read by MP401).

Recorded per file, unjudged:

- every KD-shaped loss: ``F.kl_div`` / ``torch.kl_div`` / ``nn.KLDivLoss()(...)`` (also through a
  variable or ``self.attr`` holding the criterion), ``F.cross_entropy`` / ``nn.CrossEntropyLoss``
  with soft (softmax) targets, and manual sums ``(p * (log p - log q)).sum()`` /
  ``-(p * log q).sum()``, whose operands are (directly or through variables) ``softmax``,
  ``log_softmax``, ``softmax(...).log()`` or ``torch.log(softmax(...))``;
- for each operand: the logits inside the softmax, a text template for rewriting it, and what
  its logits may be, as values of the shared domain (``facts/tensors.py``): ``HALF`` sources
  with their reasons, and the parameters and other modules' returns that the join substitutes
  through the project's call records, upcasts and clamps included;
- tiny float literals inside those losses (``+ 1e-8``), which vanish in float16.

Nothing here decides whether a finding is due: the rule does, with its options and the project.
"""
from __future__ import annotations

import ast
import dataclasses

import struct
from ..._dataclass import dataclass
from typing import Dict, List, NamedTuple, Optional, Tuple

from ...diagnostics import Span
from ...semantic.evaluate import Evaluator
from ...semantic.index import ModuleIndex, Scope, argument, call_args, element, keyword, nodes_of, positional
from ...semantic.queries import name_for, position, reaching
from ...semantic.tensors import LOG_SOFTMAX, SOFTMAX, HalfTensors, enclosing_class, half_tensors
from ...semantic.values import Possible
from .precision import argument_extents, key_span, paren_extent

SECTION = "kd"

# The analysis (which walks every function's returns) is skipped for modules whose text
# holds no KD loss and no half-precision logits source.
EMPTY = {"losses": ()}
# Placeholder for the (rewritten) logits inside an operand template.
LOGITS = "\x00LOGITS\x00"

KL_DIV = frozenset({"torch.nn.functional.kl_div", "torch.kl_div"})
KL_LOSS = frozenset({"torch.nn.KLDivLoss", "torch.nn.modules.loss.KLDivLoss"})
CROSS_ENTROPY = frozenset({"torch.nn.functional.cross_entropy"})
CE_LOSS = frozenset({"torch.nn.CrossEntropyLoss", "torch.nn.modules.loss.CrossEntropyLoss"})
TORCH_LOG = frozenset({"torch.log"})
TORCH_REDUCE = frozenset({"torch.sum", "torch.mean"})
FP16_SMALLEST = 2.0 ** -24  # float16's smallest positive (subnormal) value; below half of it → 0


@dataclass(frozen=True)
class TinyConstant:
    """A float literal inside a distillation loss that rounds to zero in float16 (``+ 1e-8``):
    the guard against ``log(0)`` the author meant is gone there."""

    span: Span
    text: str
    value: float


@dataclass(frozen=True)
class Operand:
    """One side of a distillation loss: the softmax (or log-softmax) over logits that may be
    float16, and how a fix rewrites it to compute in float32 (a template, with LOGITS where the
    logits go)."""

    role: str  # "log-probabilities", "probabilities" or "logits"
    logits_text: str  # the logits expression inside the softmax (what gets `.float()`)
    logits_atomic: bool  # `.float()` can be appended without parentheses
    root: Span  # the source range the template replaces
    template: str  # replacement for ``root``, with LOGITS where the logits go
    rewrites_log: bool  # the template turns `softmax(...).log()` into `log_softmax(...)`
    protected: bool  # the softmax runs inside an enabled torch.autocast region (fp32 there)
    # what the logits may be: HALF atoms, and PARAM/RETURN atoms substituted at the join
    values: Tuple[Possible, ...]
    tiny: Tuple[TinyConstant, ...] = ()  # float literals in it that vanish in float16 (`+ 1e-8`)
    side: str = ""  # of a kl_div: "input" (the student's log-probabilities) or "target"


@dataclass(frozen=True)
class KDLoss:
    """A KL-divergence or soft-target loss and its operands: where teacher and student logits
    meet, the place a float16 softmax underflows and the loss goes to ``inf`` or ``nan``."""

    kind: str  # how it is shown: "F.kl_div", "nn.KLDivLoss", "manual KL", ...
    span: Span
    function: str  # qualname of the enclosing scope
    klass: Optional[str]
    operands: Tuple[Operand, ...]


def _half_roundtrip(value: float) -> float:
    try:
        return struct.unpack("e", struct.pack("e", value))[0]
    except (OverflowError, struct.error):
        return float("inf")


# --- the shapes of a KD loss ----------------------------------------------------------------
class _Shapes:
    def __init__(self, index: ModuleIndex, analysis: HalfTensors) -> None:
        self.ix = index
        self.an = analysis

    def qual(self, call: ast.Call) -> Optional[str]:
        site = self.ix.call_of(call)
        return site.qualname if site is not None else self.ix.qualify(call.func)

    def _resolve(self, expr: ast.expr, scope: Scope) -> List[Tuple[ast.expr, Scope]]:
        """``expr`` itself, or the values of the variable it names (one level); a call of a
        function of this module stands for what it returns (``soft_targets(t, T)`` returning
        a softmax: its logits are the helper's, which its callers' arguments fill)."""
        values = [(expr, scope)]
        if isinstance(expr, ast.Name):
            owner, found = reaching(self.ix, expr, scope)
            if owner is not None and expr.id not in owner.params:
                # `p_s, p_t = log_softmax(s / T, -1), softmax(t / T, -1)`: the element it takes
                bound = [
                    (a.value if a.unpack_index is None else element(a.value, a.unpack_index), owner)
                    for a in found
                    if a.value is not None
                ]
                values = [(v, o) for v, o in bound if v is not None] or values
        out = []
        for value, owner in values:
            out.append((value, owner))
            function = self.an.local_function(value.func, owner) if isinstance(value, ast.Call) else None
            if function is not None:
                out.extend((returned, function) for returned, _ in function.returns)
        return out

    def softmax_call(self, expr, scope, log: bool) -> Optional[Tuple[ast.Call, "_Logits"]]:
        """(call, logits) when ``expr`` is ``softmax(logits...)`` (``log_softmax`` when ``log``)."""
        if not isinstance(expr, ast.Call):
            return None
        q = self.qual(expr)
        wanted = LOG_SOFTMAX if log else SOFTMAX
        method = "log_softmax" if log else "softmax"
        if q in wanted:
            args = positional(expr)
            kw = keyword(expr, "input")
            arg = args[0] if args else (kw.value if kw is not None else None)
            return (expr, _logits_of(self.ix, _Logits(arg, *_slot(self.ix, expr, arg)))) if arg is not None else None
        if q is None and isinstance(expr.func, ast.Attribute) and expr.func.attr == method:
            return expr, _logits_of(self.ix, _Logits(expr.func.value, self.ix.span(expr.func).start))
        return None

    def _log_of(self, expr, scope):
        """``torch.log(P)`` / ``P.log()`` (optionally ``P + eps``, ``P.clamp(min=eps)``) → (P, eps nodes)."""
        if not isinstance(expr, ast.Call):
            return None
        q = self.qual(expr)
        inner = None
        if q in TORCH_LOG:
            args = positional(expr)
            inner = args[0] if args else None
        elif q is None and isinstance(expr.func, ast.Attribute) and expr.func.attr == "log" and not (expr.args or expr.keywords):
            inner = expr.func.value
        if inner is None:
            return None
        eps: List[ast.expr] = []
        if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Add):
            if _is_number(inner.right):
                eps.append(inner.right)
                inner = inner.left
            elif _is_number(inner.left):
                eps.append(inner.left)
                inner = inner.right
        elif isinstance(inner, ast.Call):
            iq = self.qual(inner)
            if iq in ("torch.clamp", "torch.clamp_min", "torch.clip") and positional(inner):
                bound = _lower_bounds(call_args(inner)[1:])
                if len(bound) == 1 and _is_number(bound[0]):
                    eps.append(bound[0])
                    inner = positional(inner)[0]
            elif iq is None and isinstance(inner.func, ast.Attribute) and inner.func.attr in ("clamp", "clamp_min", "clip"):
                bound = _lower_bounds(call_args(inner))
                if len(bound) == 1 and _is_number(bound[0]):
                    eps.append(bound[0])
                    inner = inner.func.value
        return inner, eps

    def operands(self, expr, scope, role: str) -> List[Operand]:
        """Operands of ``role`` ("probabilities", "log-probabilities") found in ``expr``."""
        out: List[Operand] = []
        for value, owner in self._resolve(expr, scope):
            if role == "probabilities":
                found = self.softmax_call(value, owner, log=False)
                if found:
                    out.append(self._operand(role, found[0], found[1], value, owner, rewrite=False))
                continue
            found = self.softmax_call(value, owner, log=True)
            if found:
                out.append(self._operand(role, found[0], found[1], value, owner, rewrite=False))
                continue
            log = self._log_of(value, owner)
            if log is None:
                continue
            inner, eps = log
            for p_value, p_owner in self._resolve(inner, owner):
                sm = self.softmax_call(p_value, p_owner, log=False)
                if not sm:
                    continue
                # rewriting to log_softmax drops the eps: only where fp16 had already lost it
                vanished = all(_half_roundtrip(_number(e)) == 0.0 for e in eps)
                rewrite = vanished
                out.append(self._operand(role, sm[0], sm[1], value, owner, rewrite=rewrite, log_root=value))
        return out

    def _operand(self, role, call, logits: "_Logits", value, owner, rewrite, log_root=None) -> Operand:
        ix = self.ix
        lspan, ltext, atomic = _logits_site(ix, logits)
        site = ix.call_of(call)
        protected = self.an.autocast_enabled(site) is not None
        values = self.an.values(logits.node, site.scope if site is not None else owner)
        template = None
        root = lspan
        if rewrite and log_root is not None:
            template = self._log_softmax_text(call, lspan)
            if template is not None:
                root = ix.span(log_root)
        if template is None:
            template = LOGITS
            rewrite = False
            root = lspan
        tiny = _tiny_constants(ix, [log_root if log_root is not None else value])
        return Operand(role, ltext, atomic, root, template, rewrite, protected, values, tiny)

    def _log_softmax_text(self, call: ast.Call, lspan: Span) -> Optional[str]:
        """The text of ``call`` (a softmax) as a log_softmax, with LOGITS in place of its logits."""
        ix = self.ix
        cspan = ix.span(call)
        func = call.func
        edits = [(lspan.start, lspan.end, LOGITS)]
        if isinstance(func, ast.Attribute):
            name = ix.name_span(func)
            edits.append((name.start, name.end, "log_softmax"))
        elif isinstance(func, ast.Name):
            site = ix.call_of(call)
            functional = name_for(ix, "torch.nn.functional", site.scope, position(ix, call)) if site is not None else None
            if functional is None:
                return None  # no name refers to torch's functional module there
            fs = ix.span(func)
            edits.append((fs.start, fs.end, f"{functional}.log_softmax"))
        else:
            return None
        text = ix.source[cspan.start : cspan.end]
        for start, end, new in sorted(edits, reverse=True):
            text = text[: start - cspan.start] + new + text[end - cspan.start :]
        return text


class _Logits(NamedTuple):
    """The logits expression, and what :func:`paren_extent` needs to find the parentheses
    written around it (CPython's ranges leave them out): where the code in front of it that
    is not its own ends, and how many ``(`` there are its parent's."""

    node: ast.expr
    before: int
    own: int = 0


def _slot(index: ModuleIndex, call: ast.Call, value: ast.expr) -> Tuple[int, int]:
    """(before, own) of ``value``, a positional argument or a keyword's value of ``call``."""
    items = call_args(call)
    for i, item in enumerate(items):
        if isinstance(item, ast.keyword):
            if item.value is value:
                return key_span(index, item).end, 0
        elif item is value:
            if i == 0:
                return index.span(call.func).end, 1  # the call's own "(" comes first
            return argument_extents(index, call, items)[i - 1][1], 0
    return index.span(value).start, 0  # not an argument of it: no parentheses are read


def _logits_site(index: ModuleIndex, logits: _Logits) -> Tuple[Span, str, bool]:
    """(span, text, atomic) of the logits, with their own parentheses when they have some.

    Positions exclude a node's parentheses; ``(t - t.max())`` is taken whole so that the fix
    reads ``(t - t.max()).float()``.
    """
    node = logits.node
    span = index.span(node)
    src = index.source
    start, end = paren_extent(src, span.start, span.end, logits.before, logits.own)
    if (start, end) != (span.start, span.end):
        return index.offsets_span(start, end), src[start:end], True
    if isinstance(node, ast.Tuple) and src[span.start : span.start + 1] == "(":
        return span, index.text(node), True  # a parenthesized tuple's range holds its parentheses
    atomic = isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
    return span, index.text(node), atomic


def _logits_of(index: ModuleIndex, arg: _Logits) -> _Logits:
    """The logits in ``logits / T`` (or ``logits`` itself)."""
    node, before, own = arg
    while isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Mult)):
        before, own = index.span(node).start, 0  # a BinOp starts where its left operand's "(" do
        node = node.left
    return _Logits(node, before, own)


def _is_number(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)


def _number(node) -> float:
    return float(node.value)


def _lower_bounds(items) -> List[ast.expr]:
    """The values of a clamp's arguments that may be its lower bound: positional ones (the
    value of a ``*x``), ``min=`` and ``**x``."""
    return [
        a.value if isinstance(a, (ast.keyword, ast.Starred)) else a
        for a in items
        if not isinstance(a, ast.keyword) or a.arg is None or a.arg == "min"
    ]


def _tiny_constants(index: ModuleIndex, nodes) -> Tuple[TinyConstant, ...]:
    found: Dict[int, TinyConstant] = {}
    for root in nodes:
        for node in nodes_of(root):
            if isinstance(node, ast.Constant) and type(node.value) is float:
                value = node.value
                if 0.0 < value < FP16_SMALLEST and _half_roundtrip(value) == 0.0:
                    span = index.span(node)
                    found[span.start] = TinyConstant(span, index.text(node), value)
    return tuple(found[k] for k in sorted(found))


def _strip(expr: ast.expr) -> ast.expr:
    while isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        expr = expr.operand
    return expr


def _criterion(index: ModuleIndex, expr: ast.expr, scope: Scope, wanted, depth: int = 0) -> bool:
    """Whether ``expr`` is (or holds) an instance of one of the ``wanted`` loss classes."""
    if depth > 8:
        return False
    if isinstance(expr, ast.Call):
        site = index.call_of(expr)
        return bool(site and site.qualname in wanted)
    if isinstance(expr, ast.Name):
        owner, reached = reaching(index, expr, scope)
        if owner is None:
            return False
        return any(a.value is not None and _criterion(index, a.value, owner, wanted, depth + 1) for a in reached)
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        klass = enclosing_class(scope)
        info = index.classes.get(klass.qualname) if klass is not None else None
        if info is None:
            return False
        return any(
            a.value is not None and _criterion(index, a.value, s, wanted, depth + 1)
            for a, s in info.self_attr_values.get(expr.attr, [])
        )
    return False


def extract(index: ModuleIndex, evaluator: Evaluator):
    shapes = _Shapes(index, half_tensors(index, evaluator))
    losses: List[KDLoss] = []
    for site in index.calls:
        found = _kd_loss(index, shapes, site)
        if found is None or evaluator.dead(site.guards, site.scope):
            continue
        kind, operands = found
        if not operands:
            continue
        unique = tuple({(o.root, o.template, o.role): o for o in operands}.values())
        losses.append(KDLoss(kind, index.span(site.node), site.scope.qualname, site.klass, unique))
    return {"losses": tuple(losses)}


def _kd_loss(index: ModuleIndex, shapes: _Shapes, site):
    """(kind, operands) when ``site`` is a KD loss."""
    call, scope, q = site.node, site.scope, site.qualname
    if q in KL_DIV or (isinstance(call.func, ast.Call) and _criterion(index, call.func, scope, KL_LOSS)) or (
        q is None and site.method is None and isinstance(call.func, ast.Name) and _criterion(index, call.func, scope, KL_LOSS)
    ) or (
        site.method is not None and isinstance(site.receiver, ast.Name) and site.receiver.id == "self"
        and _criterion(index, call.func, scope, KL_LOSS)
    ):
        functional = q in KL_DIV
        inp = argument(call, 0, "input")
        target = argument(call, 1, "target")
        if inp is None or target is None:
            return None
        ops = [dataclasses.replace(o, side="input") for o in shapes.operands(inp, scope, "log-probabilities")]
        ops += [
            dataclasses.replace(o, side="target")
            for o in shapes.operands(target, scope, "probabilities") + shapes.operands(target, scope, "log-probabilities")
        ]
        kind = (index.text(call.func) if functional else "nn.KLDivLoss")
        return kind, ops
    is_ce = q in CROSS_ENTROPY or (
        (isinstance(call.func, (ast.Call, ast.Name)) or (isinstance(site.receiver, ast.Name) and site.receiver.id == "self"))
        and _criterion(index, call.func, scope, CE_LOSS)
    )
    if is_ce:
        inp = argument(call, 0, "input")
        target = argument(call, 1, "target")
        if inp is None or target is None:
            return None
        soft = shapes.operands(target, scope, "probabilities")
        if not soft:
            return None  # hard labels: an ordinary cross entropy
        logits = _logits_of(index, _Logits(inp, *_slot(index, call, inp)))
        ops = soft + [_plain_operand(index, shapes, logits, site)]
        kind = index.text(call.func) if q in CROSS_ENTROPY else "nn.CrossEntropyLoss"
        return f"{kind} with soft targets", ops
    # manual sums: (p * (log p - log q)).sum(), -(p * log q).sum(-1)
    reduced = None
    if q in TORCH_REDUCE:
        args = positional(call)
        reduced = args[0] if args else None
    elif q is None and site.method in ("sum", "mean") and site.receiver is not None:
        reduced = site.receiver
    if reduced is None:
        return None
    product = _strip(reduced)
    if not (isinstance(product, ast.BinOp) and isinstance(product.op, ast.Mult)):
        return None
    for p_side, other in ((product.left, product.right), (product.right, product.left)):
        probs = shapes.operands(_strip(p_side), scope, "probabilities")
        if not probs:
            continue
        other = _strip(other)
        if isinstance(other, ast.BinOp) and isinstance(other.op, ast.Sub):
            a = shapes.operands(other.left, scope, "log-probabilities")
            b = shapes.operands(other.right, scope, "log-probabilities")
            if a and b:
                return "manual KL divergence", probs + a + b
        else:
            logs = shapes.operands(other, scope, "log-probabilities")
            if logs and not _one_distribution(probs, logs):
                return "soft-target cross entropy", probs + logs
    return None


def _one_distribution(probs: List[Operand], logs: List[Operand]) -> bool:
    """Whether the probabilities and the log-probabilities are taken of the same logits:
    ``-(softmax(x) * log_softmax(x)).sum(-1)`` is the entropy of one distribution (at most
    ``log(vocab)``), no teacher and no student meet in it (review 26b: an analysis script's
    uncertainty of the teacher's tokens)."""
    return {o.logits_text for o in probs} == {o.logits_text for o in logs}


def _plain_operand(index: ModuleIndex, shapes: _Shapes, logits: _Logits, site) -> Operand:
    """The raw logits a cross entropy turns into log-probabilities itself."""
    span, text, atomic = _logits_site(index, logits)
    protected = shapes.an.autocast_enabled(site) is not None
    return Operand("logits", text, atomic, span, LOGITS, False, protected, shapes.an.values(logits.node, site.scope))
