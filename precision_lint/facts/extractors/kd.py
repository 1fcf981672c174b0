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

import dataclasses

import struct
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import libcst as cst

from ...diagnostics import Span
from ...semantic.evaluate import Evaluator
from ...semantic.index import ModuleIndex, Scope, element, keyword, positional
from ...semantic.queries import reaching
from ...semantic.tensors import LOG_SOFTMAX, SOFTMAX, HalfTensors, enclosing_class, half_tensors
from ...semantic.values import Possible

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
    span: Span
    text: str
    value: float


@dataclass(frozen=True)
class Operand:
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
        self._torch_functional = None
        for local, full in index.imports.aliases.items():
            if full == "torch.nn.functional" and self._torch_functional is None:
                self._torch_functional = local
        if self._torch_functional is None:
            for local, full in index.imports.aliases.items():
                if full == "torch":
                    self._torch_functional = f"{local}.nn.functional"
                    break

    def qual(self, call: cst.Call) -> Optional[str]:
        site = self.ix.call_of(call)
        return site.qualname if site is not None else self.ix.qualify(call.func)

    def _resolve(self, expr: cst.BaseExpression, scope: Scope) -> List[Tuple[cst.BaseExpression, Scope]]:
        """``expr`` itself, or the values of the variable it names (one level); a call of a
        function of this module stands for what it returns (``soft_targets(t, T)`` returning
        a softmax: its logits are the helper's, which its callers' arguments fill)."""
        values = [(expr, scope)]
        if isinstance(expr, cst.Name):
            owner, found = reaching(self.ix, expr, scope)
            if owner is not None and expr.value not in owner.params:
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
            function = self.an.local_function(value.func, owner) if isinstance(value, cst.Call) else None
            if function is not None:
                out.extend((returned, function) for returned, _ in function.returns)
        return out

    def softmax_call(self, expr, scope, log: bool) -> Optional[Tuple[cst.Call, cst.BaseExpression]]:
        """(call, logits) when ``expr`` is ``softmax(logits...)`` (``log_softmax`` when ``log``)."""
        if not isinstance(expr, cst.Call):
            return None
        q = self.qual(expr)
        wanted = LOG_SOFTMAX if log else SOFTMAX
        method = "log_softmax" if log else "softmax"
        if q in wanted:
            args = positional(expr)
            kw = keyword(expr, "input")
            arg = args[0].value if args else (kw.value if kw is not None else None)
            return (expr, _logits_of(arg)) if arg is not None else None
        if q is None and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == method:
            return expr, _logits_of(expr.func.value)
        return None

    def _log_of(self, expr, scope):
        """``torch.log(P)`` / ``P.log()`` (optionally ``P + eps``, ``P.clamp(min=eps)``) → (P, eps nodes)."""
        if not isinstance(expr, cst.Call):
            return None
        q = self.qual(expr)
        inner = None
        if q in TORCH_LOG:
            args = positional(expr)
            inner = args[0].value if args else None
        elif q is None and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "log" and not expr.args:
            inner = expr.func.value
        if inner is None:
            return None
        eps: List[cst.BaseExpression] = []
        if isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, cst.Add):
            if _is_number(inner.right):
                eps.append(inner.right)
                inner = inner.left
            elif _is_number(inner.left):
                eps.append(inner.left)
                inner = inner.right
        elif isinstance(inner, cst.Call):
            iq = self.qual(inner)
            if iq in ("torch.clamp", "torch.clamp_min", "torch.clip") and positional(inner):
                bound = [a.value for a in inner.args[1:] if a.keyword is None or a.keyword.value == "min"]
                if len(bound) == 1 and _is_number(bound[0]):
                    eps.append(bound[0])
                    inner = positional(inner)[0].value
            elif iq is None and isinstance(inner.func, cst.Attribute) and inner.func.attr.value in ("clamp", "clamp_min", "clip"):
                bound = [a.value for a in inner.args if a.keyword is None or a.keyword.value == "min"]
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

    def _operand(self, role, call, logits, value, owner, rewrite, log_root=None) -> Operand:
        ix = self.ix
        lspan, ltext, atomic = _logits_site(ix, logits)
        site = ix.call_of(call)
        protected = self.an.autocast_enabled(site) is not None
        values = self.an.values(logits, site.scope if site is not None else owner)
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

    def _log_softmax_text(self, call: cst.Call, lspan: Span) -> Optional[str]:
        """The text of ``call`` (a softmax) as a log_softmax, with LOGITS in place of its logits."""
        ix = self.ix
        cspan = ix.span(call)
        func = call.func
        edits = [(lspan.start, lspan.end, LOGITS)]
        if isinstance(func, cst.Attribute):
            name = ix.span(func.attr)
            edits.append((name.start, name.end, "log_softmax"))
        elif isinstance(func, cst.Name) and self._torch_functional:
            fs = ix.span(func)
            edits.append((fs.start, fs.end, f"{self._torch_functional}.log_softmax"))
        else:
            return None
        text = ix.source[cspan.start : cspan.end]
        for start, end, new in sorted(edits, reverse=True):
            text = text[: start - cspan.start] + new + text[end - cspan.start :]
        return text


def _has_parens(node: cst.CSTNode) -> bool:
    return bool(getattr(node, "lpar", ()))


def _logits_site(index: ModuleIndex, node: cst.BaseExpression) -> Tuple[Span, str, bool]:
    """(span, text, atomic) of the logits, with their own parentheses when they have some.

    Positions exclude a node's parentheses; ``(t - t.max())`` is taken whole so that the fix
    reads ``(t - t.max()).float()``.
    """
    span = index.span(node)
    src = index.source
    if _has_parens(node):
        start, end = span.start, span.end
        for _ in node.lpar:
            start = src.rfind("(", 0, start)
        for _ in node.rpar:
            end = src.find(")", end) + 1
        if 0 <= start and 0 < end and src[start] == "(" and src[end - 1] == ")":
            line = index.offset_line(start)
            col = start - (src.rfind("\n", 0, start) + 1)
            end_line = index.offset_line(end)
            end_col = end - (src.rfind("\n", 0, end) + 1)
            return Span(line, col, end_line, end_col, start, end), src[start:end], True
    atomic = isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript))
    return span, index.text(node), atomic


def _logits_of(arg: cst.BaseExpression) -> cst.BaseExpression:
    """The logits in ``logits / T`` (or ``logits`` itself)."""
    while isinstance(arg, cst.BinaryOperation) and isinstance(arg.operator, (cst.Divide, cst.Multiply)):
        arg = arg.left
    return arg


def _is_number(node) -> bool:
    return isinstance(node, (cst.Float, cst.Integer))


def _number(node) -> float:
    return float(node.evaluated_value)


def _tiny_constants(index: ModuleIndex, nodes) -> Tuple[TinyConstant, ...]:
    found: Dict[int, TinyConstant] = {}

    class Visitor(cst.CSTVisitor):
        def visit_Float(self, node: cst.Float) -> None:
            value = float(node.evaluated_value)
            if 0.0 < value < FP16_SMALLEST and _half_roundtrip(value) == 0.0:
                span = index.span(node)
                found[span.start] = TinyConstant(span, index.text(node), value)

    for node in nodes:
        node.visit(Visitor())
    return tuple(found[k] for k in sorted(found))


def _strip(expr: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    return expr


def _criterion(index: ModuleIndex, expr: cst.BaseExpression, scope: Scope, wanted, depth: int = 0) -> bool:
    """Whether ``expr`` is (or holds) an instance of one of the ``wanted`` loss classes."""
    if depth > 8:
        return False
    if isinstance(expr, cst.Call):
        site = index.call_of(expr)
        return bool(site and site.qualname in wanted)
    if isinstance(expr, cst.Name):
        owner, reached = reaching(index, expr, scope)
        if owner is None:
            return False
        return any(a.value is not None and _criterion(index, a.value, owner, wanted, depth + 1) for a in reached)
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        klass = enclosing_class(scope)
        info = index.classes.get(klass.qualname) if klass is not None else None
        if info is None:
            return False
        return any(
            a.value is not None and _criterion(index, a.value, s, wanted, depth + 1)
            for a, s in info.self_attr_values.get(expr.attr.value, [])
        )
    return False


def _arg(call: cst.Call, position: int, name: str) -> Optional[cst.BaseExpression]:
    kw = keyword(call, name)
    if kw is not None:
        return kw.value
    args = positional(call)
    return args[position].value if len(args) > position else None


def extract(index: ModuleIndex, evaluator: Evaluator):
    shapes = _Shapes(index, half_tensors(index, evaluator))
    losses: List[KDLoss] = []
    for site in index.calls:
        found = _kd_loss(index, shapes, site)
        if found is None:
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
    if q in KL_DIV or (isinstance(call.func, cst.Call) and _criterion(index, call.func, scope, KL_LOSS)) or (
        q is None and site.method is None and isinstance(call.func, cst.Name) and _criterion(index, call.func, scope, KL_LOSS)
    ) or (
        site.method is not None and isinstance(site.receiver, cst.Name) and site.receiver.value == "self"
        and _criterion(index, call.func, scope, KL_LOSS)
    ):
        functional = q in KL_DIV
        inp = _arg(call, 0, "input")
        target = _arg(call, 1, "target")
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
        (isinstance(call.func, (cst.Call, cst.Name)) or (isinstance(site.receiver, cst.Name) and site.receiver.value == "self"))
        and _criterion(index, call.func, scope, CE_LOSS)
    )
    if is_ce:
        inp = _arg(call, 0, "input")
        target = _arg(call, 1, "target")
        if inp is None or target is None:
            return None
        soft = shapes.operands(target, scope, "probabilities")
        if not soft:
            return None  # hard labels: an ordinary cross entropy
        logits = _logits_of(inp)
        ops = soft + [_plain_operand(index, shapes, logits, site)]
        kind = index.text(call.func) if q in CROSS_ENTROPY else "nn.CrossEntropyLoss"
        return f"{kind} with soft targets", ops
    # manual sums: (p * (log p - log q)).sum(), -(p * log q).sum(-1)
    reduced = None
    if q in TORCH_REDUCE:
        args = positional(call)
        reduced = args[0].value if args else None
    elif q is None and site.method in ("sum", "mean") and site.receiver is not None:
        reduced = site.receiver
    if reduced is None:
        return None
    product = _strip(reduced)
    if not (isinstance(product, cst.BinaryOperation) and isinstance(product.operator, cst.Multiply)):
        return None
    for p_side, other in ((product.left, product.right), (product.right, product.left)):
        probs = shapes.operands(_strip(p_side), scope, "probabilities")
        if not probs:
            continue
        other = _strip(other)
        if isinstance(other, cst.BinaryOperation) and isinstance(other.operator, cst.Subtract):
            a = shapes.operands(other.left, scope, "log-probabilities")
            b = shapes.operands(other.right, scope, "log-probabilities")
            if a and b:
                return "manual KL divergence", probs + a + b
        else:
            logs = shapes.operands(other, scope, "log-probabilities")
            if logs:
                return "soft-target cross entropy", probs + logs
    return None


def _plain_operand(index: ModuleIndex, shapes: _Shapes, logits, site) -> Operand:
    """The raw logits a cross entropy turns into log-probabilities itself."""
    span, text, atomic = _logits_site(index, logits)
    protected = shapes.an.autocast_enabled(site) is not None
    return Operand("logits", text, atomic, span, LOGITS, False, protected, shapes.an.values(logits, site.scope))
