"""Facts about knowledge-distillation losses and where their logits come from (read by MP401).

Recorded per file, unjudged:

- every KD-shaped loss: ``F.kl_div`` / ``torch.kl_div`` / ``nn.KLDivLoss()(...)`` (also through a
  variable or ``self.attr`` holding the criterion), ``F.cross_entropy`` / ``nn.CrossEntropyLoss``
  with soft (softmax) targets, and manual sums ``(p * (log p - log q)).sum()`` /
  ``-(p * log q).sum()``, whose operands are (directly or through variables) ``softmax``,
  ``log_softmax``, ``softmax(...).log()`` or ``torch.log(softmax(...))``;
- for each operand: the logits inside the softmax, a text template for rewriting it, and the
  *paths* its logits may take (see :class:`Path`): which ones may be float16 and why, which pass
  through an upcast or a clamp, which come from a parameter of the enclosing function;
- tiny float literals inside those losses (``+ 1e-8``), which vanish in float16;
- calls that pass possibly-half values (or parameters) to other functions, so that the project
  join can follow logits into helper functions defined in other files.

Nothing here decides whether a finding is due: the rule does, with its options and the project.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import libcst as cst

from ...diagnostics import Span
from ..evaluate import Evaluator
from ..index import ModuleIndex, Scope, keyword, positional
from ..values import CONST, dtypes

SECTION = "kd"

# Text a module must contain to hold a KD loss or a half-precision logits source; the
# analysis (which walks every function's returns) is skipped for every other module.
EVIDENCE = re.compile(r"kl_div|KLDivLoss|softmax|cross_entropy|CrossEntropyLoss|half|float16|fp16|clip\.load")
EMPTY = {"losses": (), "flows": (), "returns": ()}
# Placeholder for the (rewritten) logits inside an operand template.
LOGITS = "\x00LOGITS\x00"

SOFTMAX = frozenset({"torch.nn.functional.softmax", "torch.softmax", "torch.special.softmax"})
LOG_SOFTMAX = frozenset(
    {"torch.nn.functional.log_softmax", "torch.log_softmax", "torch.special.log_softmax"}
)
KL_DIV = frozenset({"torch.nn.functional.kl_div", "torch.kl_div"})
KL_LOSS = frozenset({"torch.nn.KLDivLoss", "torch.nn.modules.loss.KLDivLoss"})
CROSS_ENTROPY = frozenset({"torch.nn.functional.cross_entropy"})
CE_LOSS = frozenset({"torch.nn.CrossEntropyLoss", "torch.nn.modules.loss.CrossEntropyLoss"})
TORCH_LOG = frozenset({"torch.log"})
TORCH_REDUCE = frozenset({"torch.sum", "torch.mean"})
TORCH_CLAMP = frozenset({"torch.clamp", "torch.clip", "torch.nan_to_num"})
CLIP_LOAD = frozenset({"clip.load"})
AUTOCAST = frozenset(
    {"torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.amp.autocast_mode.autocast"}
)
# Tensor methods that keep the dtype of their receiver.
TRANSPARENT = frozenset(
    {
        "detach", "contiguous", "view", "reshape", "squeeze", "unsqueeze", "permute", "transpose",
        "flatten", "clone", "cuda", "cpu", "expand", "expand_as", "view_as", "narrow", "masked_fill",
        "softmax", "log_softmax", "requires_grad_", "eval", "train", "squeeze_", "unsqueeze_",
    }
)
UPCAST_METHODS = frozenset({"float", "double"})
CLAMP_METHODS = frozenset({"clamp", "clip", "clamp_", "clip_", "nan_to_num", "nan_to_num_"})
MODEL_METHODS = frozenset({"forward", "generate", "get_text_features", "get_image_features", "encode_image", "encode_text"})
# Callees that are never project code.
LIBRARIES = ("torch.", "transformers.", "builtins.", "numpy.", "clip.", "accelerate.", "peft.", "trl.")
FP16_SMALLEST = 2.0 ** -24  # float16's smallest positive (subnormal) value; below half of it → 0


@dataclass(frozen=True)
class ParamRef:
    """A value that is a parameter of ``function`` (a class qualname for ``__init__``)."""

    function: str
    name: str
    index: int  # position among the positional parameters (``self`` not counted); -1: keyword-only


@dataclass(frozen=True)
class Path:
    """One way a value may be computed.

    ``reason`` says why it may be float16 (None when it comes from ``param`` instead); ``upcast``
    and ``clamped`` say whether an fp32 upcast / a two-sided clamp lies between that source and
    the softmax.
    """

    reason: Optional[str]
    param: Optional[ParamRef]
    upcast: bool = False
    clamped: bool = False
    returns_of: Optional[str] = None  # what a function of another project file returns
    origin: Optional[Span] = None  # where the float16 comes from (for `reason`)
    origin_path: str = ""  # the file of ``origin`` when it is not the linted one (set when joined)


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
    paths: Tuple[Path, ...]
    tiny: Tuple[TinyConstant, ...] = ()  # float literals in it that vanish in float16 (`+ 1e-8`)


@dataclass(frozen=True)
class KDLoss:
    kind: str  # how it is shown: "F.kl_div", "nn.KLDivLoss", "manual KL", ...
    span: Span
    function: str  # qualname of the enclosing scope
    klass: Optional[str]
    operands: Tuple[Operand, ...]


@dataclass(frozen=True)
class ArgFlow:
    """A call passing values of interest: ``callee`` with (position or -1, keyword or "", paths)."""

    callee: str
    args: Tuple[Tuple[int, str, Tuple[Path, ...]], ...]
    # called inside an enabled torch.autocast region: autocast is dynamically scoped, so the
    # callee's softmax runs in float32 there
    protected: bool = False


def _half_roundtrip(value: float) -> float:
    try:
        return struct.unpack("e", struct.pack("e", value))[0]
    except (OverflowError, struct.error):
        return float("inf")


def _line(index: ModuleIndex, node: cst.CSTNode) -> int:
    return index.span(node).line


def _param_names(scope: Scope) -> Tuple[List[str], List[str]]:
    node = scope.node
    if not isinstance(node, cst.FunctionDef):
        return [], []
    p = node.params
    pos = [x.name.value for x in (*p.posonly_params, *p.params)]
    if scope.parent is not None and scope.parent.kind == "class" and pos:
        pos = pos[1:]  # self / cls
    return pos, [x.name.value for x in p.kwonly_params]


def _function_ref(scope: Scope) -> str:
    """What callers call: the class for ``__init__``, else the function's qualname."""
    if scope.qualname.endswith(".__init__") and scope.parent is not None and scope.parent.kind == "class":
        return scope.parent.qualname
    return scope.qualname


class _Analysis:
    def __init__(self, index: ModuleIndex, evaluator: Evaluator) -> None:
        self.ix = index
        self.ev = evaluator
        self._memo: Dict[Tuple[int, int], Tuple[Path, ...]] = {}
        self._active: set = set()
        # in-place casts as statements: (scope qualname, dotted receiver) → reasons
        self.inplace: Dict[Tuple[str, str], List[Tuple[str, Span]]] = {}
        for site in index.calls:
            if site.method in ("half", "to") and site.receiver is not None and self._is_statement(site):
                name = _dotted_receiver(site.receiver)
                if not name:
                    continue
                if site.method == "half" or self._cast_dtype(site.node, site.scope) == "float16":
                    owner = site.klass if name.startswith("self.") and site.klass else self._owner(name, site.scope)
                    reason = f"`{index.text(site.node)}` (line {_line(index, site.node)}) casts it to float16"
                    self.inplace.setdefault((owner, name), []).append((reason, index.span(site.node)))

    # --- helpers ---------------------------------------------------------------
    def _is_statement(self, site) -> bool:
        stmt = site.statement
        return (
            isinstance(stmt, cst.SimpleStatementLine)
            and any(isinstance(s, cst.Expr) and s.value is site.node for s in stmt.body)
        )

    def _owner(self, name: str, scope: Scope) -> str:
        head = name.split(".")[0]
        owner = scope.lookup_scope(head)
        return (owner or scope.module_scope()).qualname

    def _cast_dtype(self, call: cst.Call, scope: Scope) -> Optional[str]:
        """The dtype a ``.to(...)`` / ``.type(...)`` call casts to, if it names one."""
        exprs = [a.value for a in positional(call)]
        kw = keyword(call, "dtype")
        if kw is not None:
            exprs.append(kw.value)
        found = set()
        for e in exprs:
            if not self.ev.mentions_dtype(e, scope):
                continue  # `.to(device)`: no dtype can reach it
            for v in dtypes(self.ev.values(e, scope)):
                found.add(v.value)
        if "float16" in found:
            return "float16"
        if found & {"float32", "float64"}:
            return "float32"
        if "bfloat16" in found:
            return "bfloat16"
        return None

    def _dtype_kwarg_half(self, call: cst.Call, scope: Scope) -> Optional[str]:
        for name in ("torch_dtype", "dtype"):
            sources = self.ev.kwarg(call, scope, name)
            if not any(self.ev.mentions_dtype(src.value, scope) for src in sources):
                continue  # `dtype=x.dtype`: no literal dtype can reach it
            values = self.ev.kwarg_values(call, scope, name)
            if values is not None and any(v.value == "float16" for v in dtypes(values)):
                src = self.ev.kwarg(call, scope, name)[0]
                func = self.ix.text(call.func)
                func = func if len(func) <= 60 else "..." + func[-57:]
                return f"`{func}(...)` with `{name}={self.ix.text(src.value)}` (line {_line(self.ix, call)})"
        return None

    def autocast_enabled(self, site) -> Optional[str]:
        """The dtype of the innermost autocast region around ``site`` that is certainly
        enabled (None: none; a region whose ``enabled=`` may be False does not count)."""
        if site is None:
            return None
        for qual, item in zip(reversed(site.contexts), reversed(site.context_items)):
            if not (qual in AUTOCAST or qual.rsplit(".", 1)[-1] == "autocast") or "cpu" in qual:
                continue
            if isinstance(item, cst.Call):
                enabled = self.ev.kwarg_values(item, site.scope, "enabled")
                if enabled is not None and any(v.kind == CONST and not v.value for v in enabled):
                    # `enabled=args.amp` that may be False protects nothing on the runs where
                    # it is (seed 003: the loss in fp16 because autocast was switched off)
                    continue
                dtype_values = self.ev.kwarg_values(item, site.scope, "dtype")
                if dtype_values is not None:
                    names = {v.value for v in dtypes(dtype_values)}
                    return "float16" if "float16" in names or not names else sorted(names)[0]
                args = positional(item)
                if args and isinstance(args[0].value, cst.SimpleString) and args[0].value.evaluated_value == "cpu":
                    continue
            return "float16"
        return None

    # --- where a value comes from ------------------------------------------------
    def paths(self, expr: Optional[cst.BaseExpression], scope: Scope) -> Tuple[Path, ...]:
        if expr is None:
            return ()
        key = (id(expr), id(scope))
        if key in self._memo:
            return self._memo[key]
        if key in self._active or len(self._active) > 40:
            return ()
        self._active.add(key)
        try:
            out = _dedupe(self._paths(expr, scope))
        finally:
            self._active.discard(key)
        self._memo[key] = out
        return out

    def _paths(self, expr: cst.BaseExpression, scope: Scope) -> List[Path]:
        if isinstance(expr, cst.Name):
            return self._name(expr, scope)
        if isinstance(expr, cst.Attribute):
            if isinstance(expr.value, cst.Name) and expr.value.value == "self":
                return self._self_attr(expr, scope)
            return list(self.paths(expr.value, scope))
        if isinstance(expr, cst.Subscript):
            return list(self.paths(expr.value, scope))
        if isinstance(expr, cst.UnaryOperation):
            return list(self.paths(expr.expression, scope))
        if isinstance(expr, cst.BinaryOperation):
            left = self.paths(expr.left, scope)
            right = self.paths(expr.right, scope)
            both = list(left) + list(right)
            if any(p.upcast for p in both):  # type promotion: one fp32 tensor makes the result fp32
                both = [_mark(p, upcast=True) for p in both]
            return both
        if isinstance(expr, cst.IfExp):
            return list(self.paths(expr.body, scope)) + list(self.paths(expr.orelse, scope))
        if isinstance(expr, cst.Call):
            return self._call(expr, scope)
        return []

    def _name(self, expr: cst.Name, scope: Scope) -> List[Path]:
        owner = scope.lookup_scope(expr.value)
        if owner is None:
            return []
        out: List[Path] = []
        for reason in self.inplace.get((owner.qualname, expr.value), ()):
            out.append(Path(f"`{expr.value}`: {reason[0]}", None, origin=reason[1]))
        if expr.value in owner.params and owner.kind == "function":
            pos, kwonly = _param_names(owner)
            if expr.value in pos:
                out.append(Path(None, ParamRef(_function_ref(owner), expr.value, pos.index(expr.value))))
            elif expr.value in kwonly:
                out.append(Path(None, ParamRef(_function_ref(owner), expr.value, -1)))
            default = owner.params[expr.value]
            if default is not None:
                out.extend(self.paths(default, owner.parent or owner))
        use = self.ix.order(expr)[0]
        for assignment in _reaching(self.ix, owner.assignments.get(expr.value, []), use if owner is scope else None):
            value = assignment.value
            if value is None:
                continue
            if assignment.unpack_index == 0 and isinstance(value, cst.Call):
                site = self.ix.call_of(value)
                if site is not None and site.qualname in CLIP_LOAD:
                    out.append(Path(self._clip_reason(value), None, origin=self.ix.span(value)))
                    continue
            out.extend(self.paths(value, owner))
        return out

    def _clip_reason(self, call: cst.Call) -> str:
        return (
            f"`{self.ix.text(call)}` (line {_line(self.ix, call)}) returns a float16 model on CUDA"
        )

    def _self_attr(self, expr: cst.Attribute, scope: Scope) -> List[Path]:
        klass = _enclosing_class(scope)
        if klass is None:
            return []
        info = self.ix.classes.get(klass.qualname)
        if info is None:
            return []
        name = expr.attr.value
        out: List[Path] = []
        for reason in self.inplace.get((klass.qualname, f"self.{name}"), ()):
            out.append(Path(f"`self.{name}`: {reason[0]}", None, origin=reason[1]))
        for assignment, method_scope in info.self_attr_values.get(name, []):
            out.extend(self.paths(assignment.value, method_scope))
        return out

    def _call(self, expr: cst.Call, scope: Scope) -> List[Path]:
        ix = self.ix
        site = ix.call_of(expr)
        qual = site.qualname if site is not None else ix.qualify(expr.func)
        func = expr.func
        # --- functions of torch and friends
        if qual in TORCH_CLAMP:
            args = positional(expr)
            inner = self.paths(args[0].value, scope) if args else ()
            if qual == "torch.nan_to_num" or _two_sided(expr, 1):
                return [_mark(p, clamped=True) for p in inner]
            return list(inner)
        if qual in CLIP_LOAD:
            return [Path(self._clip_reason(expr), None, origin=ix.span(expr))]
        if qual in SOFTMAX or qual in LOG_SOFTMAX:
            args = positional(expr)
            return list(self.paths(args[0].value, scope)) if args else []
        half = self._dtype_kwarg_half(expr, scope)
        if half is not None:
            return [Path(f"created by {half}", None, origin=ix.span(expr))]
        # --- methods on a value
        if isinstance(func, cst.Attribute) and (qual is None or not qual.startswith(("torch.", "transformers."))):
            method = func.attr.value
            receiver = func.value
            if isinstance(receiver, cst.Name) and receiver.value == "self":
                klass = _enclosing_class(scope)
                if klass is not None and f"{klass.qualname}.{method}" in ix.functions:
                    return self._returns(ix.functions[f"{klass.qualname}.{method}"])
                return self._model_output(expr, self._self_attr(func, scope))
            if method in UPCAST_METHODS:
                return [_mark(p, upcast=True) for p in self.paths(receiver, scope)]
            if method == "half":
                return [Path(f"`{ix.text(expr)}` (line {_line(ix, expr)}) casts to float16", None, origin=ix.span(expr))]
            if method in ("to", "type"):
                dtype = self._cast_dtype(expr, scope)
                if dtype == "float16":
                    return [Path(f"`{ix.text(expr)}` (line {_line(ix, expr)}) casts to float16", None, origin=ix.span(expr))]
                if dtype == "float32":
                    return [_mark(p, upcast=True) for p in self.paths(receiver, scope)]
                if dtype == "bfloat16":
                    return []
                return list(self.paths(receiver, scope))
            if method in CLAMP_METHODS:
                inner = self.paths(receiver, scope)
                if method.startswith("nan_to_num") or _two_sided(expr, 0):
                    return [_mark(p, clamped=True) for p in inner]
                return list(inner)
            if method in TRANSPARENT:
                return list(self.paths(receiver, scope))
            if method in MODEL_METHODS:
                return self._model_output(expr, self.paths(receiver, scope))
            return []
        # --- a local function: what it returns
        if isinstance(func, cst.Name):
            owner = scope.lookup_scope(func.value)
            if owner is not None and not owner.is_import(func.value):
                qualname = f"{owner.qualname}.{func.value}" if owner.qualname else func.value
                if qualname in ix.functions:
                    return self._returns(ix.functions[qualname])
                if qualname in ix.classes:
                    return []
                # a variable holding a model: its outputs have its weights' dtype
                return self._model_output(expr, self.paths(func, scope))
            if qual is None:  # defined elsewhere (a notebook cell, a star import): still autocast's
                return self._model_output(expr, [])
            if not qual.startswith(LIBRARIES):  # `from helpers import load_teacher`
                return self._model_output(expr, [Path(None, None, returns_of=qual)])
            return []
        if isinstance(func, cst.Call):  # `AutoModel.from_pretrained(...).half()(x)`
            return self._model_output(expr, self.paths(func, scope))
        return []

    def _model_output(self, call: cst.Call, model_paths) -> List[Path]:
        out = list(model_paths)
        dtype = self.autocast_enabled(self.ix.call_of(call))
        if dtype == "float16":
            out.append(
                Path(
                    f"`{self.ix.text(call.func)}(...)` runs under torch.autocast (line "
                    f"{_line(self.ix, call)}), which returns float16 logits",
                    None,
                    origin=self.ix.span(call),
                )
            )
        return out

    def _returns(self, function: Scope) -> List[Path]:
        out: List[Path] = []
        for value, _guards in function.returns:
            out.extend(self.paths(value, function))
        return out


def _enclosing_class(scope: Scope) -> Optional[Scope]:
    s: Optional[Scope] = scope
    while s is not None:
        if s.kind == "class":
            return s
        s = s.parent
    return None


def _two_sided(call: cst.Call, first: int) -> bool:
    """``clamp(x, lo, hi)`` / ``x.clamp(lo, hi)`` / ``min=`` and ``max=``: both bounds given."""
    args = positional(call)
    bounds = len(args) - first
    names = {a.keyword.value for a in call.args if a.keyword is not None}
    return bounds >= 2 or (bounds >= 1 and "max" in names) or {"min", "max"} <= names


def _mark(p: Path, upcast: bool = False, clamped: bool = False) -> Path:
    return Path(p.reason, p.param, p.upcast or upcast, p.clamped or clamped, p.returns_of, p.origin, p.origin_path)


def _dedupe(paths) -> Tuple[Path, ...]:
    return tuple(dict.fromkeys(paths))


def _dotted_receiver(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        return f"{node.value.value}.{node.attr.value}"
    return None


def _reaching(index: ModuleIndex, assignments, use: Optional[int]):
    """The assignments a use may see: the last unconditional one before it, and guarded later ones.

    ``use`` is the use's pre-order number (``index.order(expr)[0]``), so no positions are needed.
    """
    ordered = sorted(assignments, key=lambda a: index.order(a.statement)[0])
    if use is not None:
        def sees(a) -> bool:
            if index.order(a.statement)[0] >= use:
                return False
            if a.value is not None:  # `x = f(x)`: the use on the right sees the previous x
                first, after = index.order(a.value)
                return not first <= use < after
            return True

        before = [a for a in ordered if sees(a)]
        ordered = before or ordered
    out = []
    for a in reversed(ordered):
        out.append(a)
        if not a.guards:
            break
    return out


# --- the shapes of a KD loss ----------------------------------------------------------------
class _Shapes:
    def __init__(self, index: ModuleIndex, analysis: _Analysis) -> None:
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
        """``expr`` itself, or the values of the variable it names (one level)."""
        if isinstance(expr, cst.Name):
            owner = scope.lookup_scope(expr.value)
            if owner is not None and expr.value not in owner.params:
                found = _reaching(self.ix, owner.assignments.get(expr.value, []), self.ix.order(expr)[0] if owner is scope else None)
                values = [(a.value, owner) for a in found if a.value is not None and a.unpack_index is None]
                if values:
                    return values
        return [(expr, scope)]

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
        paths = self.an.paths(logits, site.scope if site is not None else owner)
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
        return Operand(role, ltext, atomic, root, template, rewrite, protected, paths, tiny)

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
        owner = scope.lookup_scope(expr.value)
        if owner is None:
            return False
        return any(
            a.value is not None and _criterion(index, a.value, owner, wanted, depth + 1)
            for a in owner.assignments.get(expr.value, [])
        )
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        klass = _enclosing_class(scope)
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
    analysis = _Analysis(index, evaluator)
    shapes = _Shapes(index, analysis)
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
    returns = []
    for qualname, function in index.functions.items():
        paths = analysis._returns(function)
        if paths:
            returns.append((_function_ref(function), _dedupe(paths)))
    return {"losses": tuple(losses), "flows": tuple(_flows(index, analysis)), "returns": tuple(returns)}


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
        ops = shapes.operands(inp, scope, "log-probabilities")
        ops += shapes.operands(target, scope, "probabilities") + shapes.operands(target, scope, "log-probabilities")
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
    return Operand("logits", text, atomic, span, LOGITS, False, protected, shapes.an.paths(logits, site.scope))


def _flows(index: ModuleIndex, analysis: _Analysis) -> List[ArgFlow]:
    """Calls that hand possibly-half values (or parameters) to project functions and classes."""
    out: List[ArgFlow] = []
    for site in index.calls:
        callee = site.qualname
        if callee is None and isinstance(site.receiver, cst.Name) and site.receiver.value == "self" and site.klass:
            callee = f"{site.klass}.{site.method}"
        if callee is None and isinstance(site.receiver, cst.Name) and site.method:
            klass = _instance_class(index, site.receiver, site.scope)  # `distiller.loss(batch)`
            callee = f"{klass}.{site.method}" if klass else None
        if callee is None or callee.startswith(LIBRARIES):
            continue
        args = []
        position = 0
        for arg in site.node.args:
            if arg.star:
                break
            paths = analysis.paths(arg.value, site.scope)
            if arg.keyword is not None:
                if paths:
                    args.append((-1, arg.keyword.value, paths))
                continue
            if paths:
                args.append((position, "", paths))
            position += 1
        # Recorded even without arguments of interest: whether every call of a function runs
        # under autocast decides whether a KD loss inside it runs in float32.
        out.append(ArgFlow(callee, tuple(args), analysis.autocast_enabled(site) is not None))
    return out


def _instance_class(index: ModuleIndex, receiver: cst.Name, scope: Scope) -> Optional[str]:
    """The project class a variable was made from (``d = Distiller(...)`` → ``mod.Distiller``)."""
    owner = scope.lookup_scope(receiver.value)
    if owner is None:
        return None
    for a in owner.assignments.get(receiver.value, []):
        if isinstance(a.value, cst.Call):
            site = index.call_of(a.value)
            if site is not None and site.qualname in index.classes:
                return site.qualname
    return None
