"""Facts about constants that float16 cannot hold (read by MP402).

Recorded per file, unjudged: ``masked_fill(mask, -1e9)`` (method, in-place and
``torch.masked_fill``), ``torch.where(m, x, -1e10)``, ``x[mask] = -1e20``,
additive masks ``(1 - mask) * -1e9``, such a constant added in place into a tensor
(``scores += (1 - mask) * -1e9``, judged by the tensor updated) and tiny eps terms
``norm + 1e-8`` — each
with the tensor whose dtype a fix would read, and the local evidence that the
tensor may be float16: an fp16 autocast region around it, or a tensor made
float16 (``.half()``, ``dtype=torch.float16``) in the same function.
Whether model code runs in fp16 through the rest of the project is judged later.
"""
from __future__ import annotations

import ast
from ..._dataclass import dataclass
from typing import List, Optional, Tuple

from ...diagnostics import Span
from ...semantic.autocast import autocast_half
from ...semantic.float16 import float16_tensors
from ...semantic.evaluate import Evaluator
from ...semantic.index import FP16_MAX, CallSite, ModuleIndex, argument, is_constant, keyword, misfits_half, names_read, nodes_of, number, positional, unstarred
from ...semantic.names import dotted
from ...semantic.queries import binding_scope, position, reaching, reaching_kept
from ...semantic.tensors import CAST_METHODS, WIDE_DTYPES, cast_dtypes
from ...semantic.training_state import walked_call
from ...semantic.values import CONST, PARAM, Possible, dtypes
from .precision import argument_text, paren_extent, value_text

SECTION = "half_constants"
EMPTY = {"constants": (), "half_casts": ()}

AUTOCAST_NAMES = ("torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.amp.autocast_mode.autocast")
# The calls that may give an additive mask the model's dtype: `.to(...)`, `.type(...)`,
# `.type_as(t)`, and CAST_METHODS' casts to a dtype -1e9 overflows (`.half()`); `.float()` and the
# other wide casts make a mask -1e9 fits.
CASTING = frozenset({"to", "type", "type_as"}) | {m for m, d in CAST_METHODS.items() if d not in WIDE_DTYPES}


@dataclass(frozen=True)
class HalfConstant:
    """A constant float16 cannot hold (``-1e9`` fills overflow to ``-inf``, ``1e-8`` eps terms
    round to zero) where it meets a tensor, with the local evidence that the tensor may be float16
    and what a fix needs to write ``torch.finfo(x.dtype).min`` in its place."""

    kind: str  # "masked_fill", "where", "subscript", "additive", "eps", "inplace", "clamp-one", "clamp-zero"
    value: float
    span: Span  # the constant (or the name holding it) as written at the use
    text: str
    tensor: str  # the tensor whose dtype a fix reads (a plain dotted name), or ""
    evidence: Tuple[str, ...]  # local reasons the tensor may be float16
    klass: Optional[str]  # the enclosing class (model code)
    scope: str
    cast: bool = False  # the other operand is cast to some dtype (`mask.to(dtype)`), for additive masks
    autocast_op: str = ""  # why the tensor is certainly a float16 result of fp16 autocast, or ""
    # written where autocast is switched off (`@torch.cuda.amp.autocast(enabled=False)` on its
    # function, `with autocast(enabled=False):`): the run's fp16 autocast makes nothing half here
    autocast_off: bool = False
    # why the tensor is certainly float16 where no local evidence says so (``semantic/float16.py``):
    # ``HALF`` atoms, or a parameter of the function that the join replaces with what each
    # call passes (a helper called with a float16 tensor)
    fp16: Tuple[Possible, ...] = ()
    # an "inplace" constant: the update that writes it into ``tensor`` ("`scores += ...` (line 7)")
    update: str = ""  # (its ``value`` is the constant with the sign the update adds it with)
    # a "clamp-one"/"clamp-zero" bound: the name the clamp's value is assigned to (what the log reads)
    clamped: str = ""


def _simple(index: ModuleIndex, expr: Optional[ast.expr]) -> str:
    return index.text(expr) if expr is not None and dotted(expr) else ""


def _autocast_off(index: ModuleIndex, items, scope) -> bool:
    """Whether code of ``scope`` under the ``with`` items ``items`` runs with autocast switched
    off: an item, or a decorator of its function or of one around it, is an autocast with
    ``enabled=False`` written as a literal."""
    calls = [item for item in items if isinstance(item, ast.Call)]
    where = scope
    while where is not None:
        node = where.node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            calls.extend(d for d in node.decorator_list if isinstance(d, ast.Call))
        where = where.parent
    return any(
        (index.qualify(call.func, scope) or "") in AUTOCAST_NAMES
        and (enabled := keyword(call, "enabled")) is not None
        and is_constant(enabled.value, False)
        for call in calls
    )


def _autocast_half(index: ModuleIndex, evaluator: Evaluator, items, scope) -> bool:
    for item in items:
        if not isinstance(item, ast.Call):
            continue
        q = index.qualify(item.func, scope) or ""
        if q not in AUTOCAST_NAMES:
            continue
        dtype = keyword(item, "dtype")
        if dtype is not None:
            if any(d.value == "float16" for d in dtypes(evaluator.values(dtype.value, scope))):
                return True
            continue
        if q == "torch.cuda.amp.autocast":
            return True
        device = keyword(item, "device_type")
        args = positional(item)
        device_expr = device.value if device is not None else (args[0] if args else None)
        values = evaluator.values(device_expr, scope) if device_expr is not None else ()
        if values and all(v.kind == CONST and v.value != "cuda" for v in values):
            continue  # autocast on another device ("cpu" defaults to bfloat16)
        return True  # CUDA autocast defaults to float16
    return False


def _made_half(index: ModuleIndex, evaluator: Evaluator, expr: ast.AST, scope) -> bool:
    """``x.half()``, ``torch.zeros(..., dtype=torch.float16)``, ``x.to(torch.float16)``."""
    if not isinstance(expr, ast.Call):
        return False
    site = index.call_of(expr)
    if site is not None and site.method == "half":
        return True
    for value in _argument_values(expr, "dtype"):
        if evaluator.mentions_dtype(value, scope):
            if any(d.value == "float16" for d in dtypes(evaluator.values(value, scope))):
                return True
    return False


def _argument_values(call: ast.Call, *names: str) -> List[ast.expr]:
    """The values of a call's arguments: positional ones (the value of a ``*x``), ``**x``, and
    the keywords among ``names`` (every keyword when none is named)."""
    values = [unstarred(a) for a in call.args]
    values += [k.value for k in call.keywords if not names or k.arg is None or k.arg in names]
    return values


def _made_wide(index: ModuleIndex, evaluator: Evaluator, expr: Optional[ast.expr], scope, depth: int = 0) -> bool:
    """The tensor is certainly made float32 (or float64, bf16) where the constant meets it:
    ``scores.float()``, ``x.to(torch.float32)``, ``torch.zeros_like(m, dtype=torch.float32)``,
    or a name every reaching binding of which is one. Masking such a tensor with -1e9 is fine
    under any autocast (``masked_fill``/``where`` are not autocast ops); an operation on it
    that autocast runs in float16 (``a.float() @ b``) is not a cast, and is not followed."""
    if expr is None or depth > 4:
        return False
    if isinstance(expr, ast.Name):
        values = [b.value for b in _kept_bindings(index, scope, expr)]
        return bool(values) and all(v is not None and v is not expr and _made_wide(index, evaluator, v, scope, depth + 1) for v in values)
    if isinstance(expr, ast.BinOp):
        return _promoted(index, expr, scope)
    if not isinstance(expr, ast.Call):
        return False
    site = index.call_of(expr)
    made = cast_dtypes(evaluator, expr, site.method if site is not None else None, scope)
    return bool(made) and made <= WIDE_DTYPES


def _float_literal(expr: ast.expr) -> bool:
    """A Python float written as a literal (``1.0``, ``-0.5``): :func:`number`'s, of type float."""
    while isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        expr = expr.operand
    return isinstance(expr, ast.Constant) and type(expr.value) is float


def _promoted(index: ModuleIndex, expr: ast.BinOp, scope) -> bool:
    """Type promotion makes the result a float32 tensor whatever the model's dtype: a bool or
    integer tensor with a Python float (``mask * 1.0``, ``1.0 - (ids == pad)``), or one divided
    by a Python number (``count / 2``, true division): PyTorch gives such a result the default
    dtype (float32), so ``(mask * 1.0).masked_fill(mask, -1e9)`` never meets a float16 tensor.
    A module that changes the default dtype (calls ``torch.set_default_dtype``) is not judged so."""
    if not isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        return False
    if any(site.qualname == "torch.set_default_dtype" for site in index.calls):
        return False
    for mine, other in ((expr.left, expr.right), (expr.right, expr.left)):
        by_number = isinstance(expr.op, ast.Div) and mine is expr.left and number(other) is not None
        if (by_number or _float_literal(other)) and _integral(index, mine, scope):
            return True
    return False


def _integral(index: ModuleIndex, expr: ast.expr, scope, depth: int = 0) -> bool:
    """The operand is certainly a bool or integer tensor (or number): what :func:`_integer`
    knows (a comparison, an integer cast, a count), a bitwise operation (``a | b``, ``~m``:
    float tensors have none), or a name that the same scope passes, with the same bindings,
    as the mask of a ``masked_fill`` or the condition of ``torch.where`` (both demand a bool
    mask)."""
    if depth > 4:
        return False
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.BitOr, ast.BitAnd, ast.BitXor)):
        return True
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Invert):
        return True
    if _integer(index, expr, scope):
        return True
    if not isinstance(expr, ast.Name):
        return False
    values = [b.value for b in _bindings(index, scope, expr)]
    if values and all(v is not None and v is not expr and _integral(index, v, scope, depth + 1) for v in values):
        return True
    return _used_as_mask(index, expr, scope)


def _used_as_mask(index: ModuleIndex, name: ast.Name, scope) -> bool:
    """``name`` is, with the bindings that reach it here, the mask of a ``masked_fill`` (method
    or ``torch.masked_fill``) or the condition of ``torch.where`` in the same scope."""
    here = {id(b) for b in _bindings(index, scope, name)}
    for site in index.calls:
        if site.scope is not scope:
            continue
        args = positional(site.node)
        mask = None
        if site.method in ("masked_fill", "masked_fill_") and site.qualname is None:
            given = keyword(site.node, "mask")
            mask = given.value if given is not None else (args[0] if args else None)
        elif site.qualname == "torch.masked_fill":
            given = keyword(site.node, "mask")
            mask = given.value if given is not None else (args[1] if len(args) > 1 else None)
        elif site.qualname == "torch.where" and len(args) == 3:
            mask = args[0]
        if (
            isinstance(mask, ast.Name)
            and mask.id == name.id
            and {id(b) for b in _bindings(index, scope, mask)} == here
        ):
            return True
    return False


def _bindings(index: ModuleIndex, scope, name: ast.Name):
    """The bindings that reach the use ``name``."""
    return reaching(index, name, scope).bindings


def _kept_bindings(index: ModuleIndex, scope, name: ast.Name):
    """The bindings that give the tensor ``name`` its dtype at the use: an in-place update
    (``x += y``) keeps the dtype of what it updates (:meth:`ModuleIndex.bindings_kept`)."""
    return reaching_kept(index, name, scope).bindings


def _half_tensor(index: ModuleIndex, evaluator: Evaluator, expr: Optional[ast.expr], scope, depth: int = 0) -> bool:
    """The expression is a tensor made float16 here, or computed from one (``n = h.norm()``)."""
    if expr is None or depth > 4:
        return False
    if _made_half(index, evaluator, expr, scope):
        return True
    if isinstance(expr, ast.Name):
        return any(
            b.value is not None and b.value is not expr and _half_tensor(index, evaluator, b.value, scope, depth + 1)
            for b in _kept_bindings(index, scope, expr)
        )
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        # `x.half().masked_fill(...)`, `h.norm()` of a float16 `h`
        return _half_tensor(index, evaluator, expr.func.value, scope, depth + 1)
    return False


_INTEGER_CASTS = ("long", "int", "short", "bool", "count_nonzero", "numel", "argmax", "argmin")
_COUNTS = ("sum", "count_nonzero")


def _integer(index: ModuleIndex, expr: Optional[ast.expr], scope, depth: int = 0) -> bool:
    """The operand is an integer tensor or number: a count of a mask (``(ids != pad).sum(-1)``,
    ``mask.long().sum()``), an integer cast, ``len(...)``. ``count + 1e-8`` then promotes to
    float32 whatever the model's dtype: the eps is not added in float16."""
    if expr is None or depth > 4:
        return False
    if isinstance(expr, ast.Compare) or (
        isinstance(expr, ast.Constant) and isinstance(expr.value, int) and not isinstance(expr.value, bool)
    ):
        return True
    if isinstance(expr, ast.Name):
        values = [b.value for b in _bindings(index, scope, expr)]
        return bool(values) and all(v is not None and _integer(index, v, scope, depth + 1) for v in values)
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Name) and func.id == "len":
            return True
        if isinstance(func, ast.Attribute):
            method = func.attr
            if method in _INTEGER_CASTS:
                return True
            if method in _COUNTS and not any(k.arg == "dtype" for k in expr.keywords):
                return _integer(index, func.value, scope, depth + 1)  # a sum of booleans or integers
    return False


def _casts(tree: ast.AST) -> bool:
    """Whether ``tree`` makes a call that may give a tensor another dtype (see CASTING)."""
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CASTING
        for node in nodes_of(tree)
    )


def _cast(index: ModuleIndex, expr: ast.expr, scope) -> bool:
    """The operand, or a variable it reads, is cast to some dtype (``mask.to(dtype=self.dtype)``;
    ``m = mask.to(h.dtype)`` reaching ``(1 - m) * -1e9``). Read from the tree: an attribute's
    name, a string or a comment that mentions ``.to(`` is no cast."""
    if _casts(expr):
        return True
    return any(
        b.value is not None and _casts(b.value)
        for name in names_read(expr)
        for b in _bindings(index, scope, name)
    )


def _call_constant(index: ModuleIndex, evaluator: Evaluator, site: CallSite):
    """(kind, constant expression, tensor expression) for a masking call with a constant, or None."""
    args = positional(site.node)
    if site.method in ("masked_fill", "masked_fill_") and site.qualname is None:
        value = keyword(site.node, "value")
        expr = value.value if value is not None else (args[1] if len(args) > 1 else None)
        return ("masked_fill", expr, site.receiver) if expr is not None else None
    if site.qualname == "torch.masked_fill":
        value = keyword(site.node, "value")
        expr = value.value if value is not None else (args[2] if len(args) > 2 else None)
        return ("masked_fill", expr, args[0] if args else None) if expr is not None else None
    if site.qualname == "torch.where" and len(args) == 3:
        for mine, other in ((args[2], args[1]), (args[1], args[2])):
            if _constant_value(evaluator, mine, site.scope) is not None:
                return ("where", mine, other)
    return None


def _constant_value(evaluator: Evaluator, expr: ast.expr, scope) -> Optional[float]:
    """A number beyond float16's range written as a literal or held by a name of one value."""
    value = _number_of(evaluator, expr, scope)
    return value if misfits_half(value) and abs(value) > FP16_MAX else None


# the words of a test that picks a fill by the precision it runs in (`-1e4 if x.dtype ==
# torch.float16 else -1e9`, `-65504 if cfg.fp16 else -1e9`): its float16 branch is the one that fits
_PRECISION_WORDS = frozenset({
    "dtype", "float16", "half", "fp16", "bfloat16", "bf16", "amp", "autocast", "is_autocast_enabled", "finfo",
    "precision", "mixed_precision", "use_amp",
})


def _unguarded_branch(evaluator: Evaluator, expr: ast.IfExp, scope) -> Optional[ast.expr]:
    """The branch of a conditional fill (``-1e9 if self.causal else -1e4``) that float16
    cannot hold, where the test is not about precision: that branch runs whenever its test
    holds, whatever the dtype (49a). None where no branch misfits, or the test reads the dtype
    or a precision switch (its float16 branch is chosen to fit)."""
    words = {n.id for n in ast.walk(expr.test) if isinstance(n, ast.Name)}
    words |= {n.attr for n in ast.walk(expr.test) if isinstance(n, ast.Attribute)}
    if any(word.lower() in _PRECISION_WORDS or "fp16" in word.lower() or "dtype" in word.lower() for word in words):
        return None
    for branch in (expr.body, expr.orelse):
        inner = _unguarded_branch(evaluator, branch, scope) if isinstance(branch, ast.IfExp) else branch
        if inner is not None and _constant_value(evaluator, inner, scope) is not None:
            return inner
    return None


def _number_of(evaluator: Evaluator, expr: ast.expr, scope, defaults: bool = False) -> Optional[float]:
    """A number written as a literal or held by a name of one value (``eps = 1e-7``); with
    ``defaults``, also a parameter's default where the parameter is what holds it (``def
    __init__(self, eps=1e-7)`` ... ``self.eps``: the value of every caller that leaves it)."""
    value = number(expr)
    if value is None and isinstance(expr, (ast.Name, ast.Attribute)):
        values = evaluator.values(expr, scope)
        nums = {v.value for v in values if v.kind == CONST and isinstance(v.value, (int, float)) and not isinstance(v.value, bool)}
        kinds = (CONST, PARAM) if defaults else (CONST,)
        if len(nums) == 1 and all(v.kind in kinds for v in values):
            value = float(nums.pop())
    return value


def extract(index: ModuleIndex, evaluator: Evaluator):
    out: List[HalfConstant] = []
    for site in index.calls:
        if site.method not in ("masked_fill", "masked_fill_", "where") or evaluator.dead(site.guards, site.scope):
            continue
        found = _call_constant(index, evaluator, site)
        if found is None:
            continue
        kind, expr, tensor = found
        if isinstance(expr, ast.IfExp):
            expr = _unguarded_branch(evaluator, expr, site.scope)
            if expr is None:
                continue
        value = _constant_value(evaluator, expr, site.scope)
        if value is None or _made_wide(index, evaluator, tensor, site.scope):
            continue
        evidence = []
        if _autocast_half(index, evaluator, site.context_items, site.scope):
            evidence.append("autocast")
        if _half_tensor(index, evaluator, tensor, site.scope):
            evidence.append("half-tensor")
        produced = "" if evidence else autocast_half(index, evaluator).produced(tensor, site.scope) or ""
        certain = () if evidence or produced else float16_tensors(index, evaluator).values(tensor, site.scope)
        out.append(
            HalfConstant(kind, value, index.span(expr), _argument_text(index, site.node, expr), _simple(index, tensor), tuple(evidence),
                         site.klass, site.scope.code_scope().qualname, autocast_op=produced,
                         autocast_off=_autocast_off(index, site.context_items, site.scope), fp16=certain)
        )
    # a named eps (`epsilon = 1e-8` ... `hi - lo + epsilon`) as well as a literal one
    named = [m for m in index.named_half_misfits() if abs(m.value) <= FP16_MAX]
    for misfit in (*index.half_misfits, *named):
        big = abs(misfit.value) > FP16_MAX
        if misfit.kind == "subscript":
            kind = "subscript"
        elif big:
            kind = "additive"
        elif isinstance(misfit.node.op, (ast.Add, ast.Sub)):
            kind = "eps"
        else:
            continue
        if kind == "subscript" and (not big or _mapping_item(index, misfit) or _read_only_by_max(index, misfit)):
            continue
        if kind == "eps" and _integer(index, misfit.other, misfit.scope):
            continue  # an integer count: `count + 1e-8` is float32
        if _made_wide(index, evaluator, misfit.other, misfit.scope):
            continue  # `x.float()[mask] = -1e20`, `n.float() + 1e-8`: float32 there
        evidence = []
        if kind != "eps" and _autocast_half(index, evaluator, misfit.context_items, misfit.scope):
            evidence.append("autocast")
        if _half_tensor(index, evaluator, misfit.other, misfit.scope):
            evidence.append("half-tensor")
        produced = ""
        if not evidence and kind in ("eps", "subscript"):
            produced = autocast_half(index, evaluator).produced(misfit.other, misfit.scope) or ""
        certain = () if evidence or produced or _divided_by(misfit) else float16_tensors(index, evaluator).values(misfit.other, misfit.scope)
        out.append(
            HalfConstant(
                kind, misfit.value, index.span(misfit.literal), _misfit_text(index, misfit),
                _simple(index, misfit.other) if kind == "subscript" else "", tuple(evidence),
                misfit.klass, misfit.scope.code_scope().qualname,
                cast=kind == "additive" and _cast(index, misfit.other, misfit.scope),
                autocast_op=produced,
                autocast_off=_autocast_off(index, misfit.context_items, misfit.scope),
                fp16=certain,
            )
        )
    out.extend(_inplace_constants(index, evaluator))
    out.extend(_clamp_bounds(index, evaluator))
    # the same constant as an additive mask and in an in-place update: the additive one first
    out.sort(key=lambda c: (c.span.start, c.kind == "inplace"))
    return {
        "constants": tuple(out),
        "half_casts": _half_casts(index, evaluator) + _data_casts(index, evaluator) + _apex_casts(index, evaluator),
    }


# A clamp that keeps a probability off 0 and 1 before a log (``p.clamp(eps, 1 - eps)`` then
# ``log(p)`` and ``log(1 - p)``: focal and binary cross-entropy losses written by hand) keeps
# nothing off in float16 where its bound rounds onto what it avoids: the float16 just below 1 is
# 1 - 2**-11, so ``1 - c`` is 1.0 for ``0 < c <= 2**-12`` (eps = 1e-6, 1e-7), and ``c`` is 0.0
# below half its smallest subnormal (eps = 1e-8). Then p can be 1 (or 0) and the log is -inf: the
# loss is inf or NaN.
_ONE_ROUNDS_FROM = 2.0 ** -12
_ZERO_ROUNDS_BELOW = 2.0 ** -25
_CLAMPS = frozenset({"clamp", "clamp_", "clip", "clip_"})
_CLAMP_FUNCTIONS = frozenset({"torch.clamp", "torch.clip", "torch.clamp_"})
_LOGS = frozenset({"log", "log_", "log2", "log10", "log1p"})


def _clamp_bounds(index: ModuleIndex, evaluator: Evaluator) -> List[HalfConstant]:
    """The bounds of clamps whose value a log reads where float16 rounds the bound onto 0 or 1
    (see _ONE_ROUNDS_FROM), each with the evidence that the clamped tensor may be float16, as
    for an eps term: the tensor made float16 here, a float16 result of fp16 autocast, or one the
    join finds float16. An autocast region alone makes no clamp float16 (``clamp`` is no
    autocast op: it runs in its input's dtype)."""
    out: List[HalfConstant] = []
    logged = None
    for site in index.calls:
        if site.qualname is None and site.method in _CLAMPS and site.receiver is not None:
            tensor, low, high = site.receiver, argument(site.node, 0, "min"), argument(site.node, 1, "max")
        elif site.qualname in _CLAMP_FUNCTIONS:
            args = positional(site.node)
            tensor, low, high = (args[0] if args else None), argument(site.node, 1, "min"), argument(site.node, 2, "max")
        else:
            continue
        if tensor is None or _made_wide(index, evaluator, _through_elementwise(tensor), site.scope):
            continue
        half = _half_tensor(index, evaluator, tensor, site.scope)
        if not half and _autocast_float32(tensor):
            continue  # `softmax(...)` under fp16 autocast is float32 (an op autocast runs in float32)
        found = []
        if high is not None and (c := _one_minus(evaluator, high, site.scope)) is not None and 0 < c <= _ONE_ROUNDS_FROM:
            found.append(("clamp-one", high, 1.0 - c))
        if low is not None and (c := _number_of(evaluator, low, site.scope, defaults=True)) is not None and 0 < c < _ZERO_ROUNDS_BELOW:
            found.append(("clamp-zero", low, c))
        if not found:
            continue
        if logged is None:
            logged = _logged_names(index)
        if not _read_by_a_log(index, site, logged):
            continue
        evidence = ("half-tensor",) if half else ()
        produced = "" if evidence else autocast_half(index, evaluator).produced(tensor, site.scope) or ""
        certain = () if evidence or produced else float16_tensors(index, evaluator).values(tensor, site.scope)
        for kind, bound, value in found:
            out.append(HalfConstant(
                kind, value, index.span(bound), _argument_text(index, site.node, bound), _simple(index, tensor), evidence,
                site.klass, site.scope.code_scope().qualname, autocast_op=produced,
                autocast_off=_autocast_off(index, site.context_items, site.scope), fp16=certain,
                clamped=(site.assigned_to or ("",))[0],
            ))
    return out


# ops that keep their input's dtype, looked through to what they are given (`torch.sigmoid(x.float())`)
_ELEMENTWISE = frozenset({"sigmoid", "tanh", "abs", "relu", "neg", "clone", "detach", "squeeze", "unsqueeze", "view", "reshape", "flatten"})
# ops fp16 autocast runs in float32 (PyTorch's list), that a probability is often made with
_AUTOCAST_FLOAT32 = frozenset({"softmax", "softmin", "log_softmax", "exp", "expm1", "softplus", "normalize", "cosine_similarity", "pow"})


def _called_name(expr: ast.expr) -> str:
    """The last name of the function or method an expression calls ("" for no call)."""
    if isinstance(expr, ast.Call):
        return expr.func.attr if isinstance(expr.func, ast.Attribute) else expr.func.id if isinstance(expr.func, ast.Name) else ""
    return ""


def _through_elementwise(expr: ast.expr) -> ast.expr:
    """``expr`` with the dtype-keeping ops around its input taken away (``torch.sigmoid(x)`` → ``x``,
    ``x.sigmoid()`` → ``x``)."""
    for _ in range(8):
        if _called_name(expr) not in _ELEMENTWISE:
            return expr
        func = expr.func
        if isinstance(func, ast.Attribute) and not (isinstance(func.value, ast.Name) and func.value.id in ("torch", "F")) and not expr.args:
            expr = func.value  # a method of the tensor
        elif expr.args:
            expr = expr.args[0]
        else:
            return expr
    return expr


def _autocast_float32(expr: ast.expr) -> bool:
    """Whether the clamped tensor is the result of an op fp16 autocast runs in float32."""
    return _called_name(expr) in _AUTOCAST_FLOAT32


def _one_minus(evaluator: Evaluator, expr: ast.expr, scope) -> Optional[float]:
    """``c`` of a bound written ``1 - c`` (``1.0 - eps``, ``1 - 1e-7``)."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Sub) and number(expr.left) == 1:
        return _number_of(evaluator, expr.right, scope, defaults=True)
    return None


def _logged_names(index: ModuleIndex):
    """(the nodes inside the arguments of each log, the names those arguments read, by scope)."""
    inside, names = set(), {}
    for site in index.calls:
        if site.method not in _LOGS and (site.qualname or "").rsplit(".", 1)[-1] not in _LOGS:
            continue
        operands = [site.receiver] if site.qualname is None and site.receiver is not None else positional(site.node)[:1]
        for operand in operands:
            for node in ast.walk(operand):
                inside.add(id(node))
            names.setdefault(id(site.scope.code_scope()), set()).update(n.id for n in names_read(operand))
    return inside, names


def _read_by_a_log(index: ModuleIndex, site: CallSite, logged) -> bool:
    """Whether a log reads the clamp's value: the clamp is inside a log's operand, or a name it
    is assigned to is read by one in the same code (``p = x.clamp(...)`` ... ``torch.log(1 - p)``)."""
    inside, names = logged
    if id(site.node) in inside:
        return True
    return bool(set(site.assigned_to or ()) & names.get(id(site.scope.code_scope()), set()))


# methods that give back their receiver's values reshaped, moved or cast: a constant the
# receiver carries is still in what they give (``((1.0 - m) * -1e9).unsqueeze(1)``)
_CARRYING = frozenset({
    "unsqueeze", "squeeze", "view", "view_as", "reshape", "reshape_as", "expand", "expand_as", "repeat",
    "transpose", "permute", "contiguous", "flatten", "to", "type", "type_as", "float", "double", "half",
    "bfloat16", "cuda", "cpu", "clone", "detach",
})
_UPDATES = {ast.Add: "+=", ast.Sub: "-="}
_UPDATE_METHODS = frozenset({"add_", "sub_"})
_OUT_FUNCTIONS = ("torch.add", "torch.sub")


def _carried(index: ModuleIndex, evaluator: Evaluator, expr: Optional[ast.expr], scope, depth: int = 0, sign: float = 1.0) -> List[Tuple[ast.expr, float]]:
    """The constants beyond float16's range (±65504) that ``expr`` keeps in its value, each with
    the sign it adds with (``-(m * 1e9)`` and ``x - m * 1e9`` add a -1e9; other factors, such as
    a 0/1 mask, are taken to be non-negative): the operand of ``+``, ``-``, ``*``
    (``(1.0 - mask) * -1e9``), the dividend of ``/``, through a unary sign, indexing, an ``if``
    expression, the methods of _CARRYING and the local variables that hold such an expression
    (``ext = (1 - m) * -1e9`` ... ``ext``). A divisor (``x / 1e9``) makes a value smaller, and any
    other call (``torch.sin(t * 1e4)``, ``.long()``, ``.clamp(...)``) gives another value: neither
    is followed."""
    if expr is None or depth > 6:
        return []
    more = depth + 1
    if isinstance(expr, ast.Name):  # the literal a local variable holds is where the constant is written
        found = _carried_by_name(index, evaluator, expr, scope, more, sign)
        if found:
            return found
    value = _constant_value(evaluator, expr, scope)
    if value is not None:
        return [(expr, sign * value)]
    if isinstance(expr, ast.BinOp):
        if isinstance(expr.op, (ast.Add, ast.Sub)):
            right = -sign if isinstance(expr.op, ast.Sub) else sign
            return _carried(index, evaluator, expr.left, scope, more, sign) + _carried(index, evaluator, expr.right, scope, more, right)
        if isinstance(expr.op, ast.Mult):  # `-(1 - m) * 1e9`: a negated factor flips the other
            left = -sign if _negated(expr.right) else sign
            right = -sign if _negated(expr.left) else sign
            return _carried(index, evaluator, expr.left, scope, more, left) + _carried(index, evaluator, expr.right, scope, more, right)
        if isinstance(expr.op, ast.Div):
            return _carried(index, evaluator, expr.left, scope, more, sign)
        return []
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        return _carried(index, evaluator, expr.operand, scope, more, -sign if isinstance(expr.op, ast.USub) else sign)
    if isinstance(expr, ast.Subscript):
        return _carried(index, evaluator, expr.value, scope, more, sign)
    if isinstance(expr, ast.IfExp):
        return _carried(index, evaluator, expr.body, scope, more, sign) + _carried(index, evaluator, expr.orelse, scope, more, sign)
    if isinstance(expr, ast.Call):
        site = index.call_of(expr)
        if site is not None and site.qualname is None and site.method in _CARRYING and site.receiver is not None:
            return _carried(index, evaluator, site.receiver, scope, more, sign)
        return []
    return []


def _carried_by_name(index: ModuleIndex, evaluator: Evaluator, expr: ast.Name, scope, depth: int, sign: float) -> List[Tuple[ast.expr, float]]:
    owner, reached = reaching(index, expr, scope)
    found: List[Tuple[ast.expr, float]] = []
    for b in reached:
        if b.value is not None and b.unpack_index is None and b.value is not expr and owner is not None:
            found += _carried(index, evaluator, b.value, owner, depth, sign)
    return found


def _negated(expr: ast.expr) -> bool:
    return isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub)


def _updated(expr: Optional[ast.expr]) -> Optional[ast.expr]:
    """The tensor an in-place update writes: ``scores`` of ``scores[..., -n:] += v``."""
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    return expr if isinstance(expr, (ast.Name, ast.Attribute)) else None


def _inplace_updates(index: ModuleIndex):
    """The in-place additions and subtractions of the module: (the tensor written, the values
    added, the sign they are added with, the update as the message names it, scope, class,
    guards, ``with`` items).
    ``x += v`` and ``x -= v`` (of ``x``, ``x[i]``, ``self.x``), ``x.add_(v)``, ``x.sub_(v)`` and
    ``torch.add(a, b, out=x)``: each computes in the promoted dtype and writes the result back
    into ``x``'s own dtype."""
    for update in index.inplace_updates:
        node = update.node
        symbol = _UPDATES.get(type(node.op))
        tensor = _updated(node.target)
        if symbol is None or tensor is None:
            continue
        text = f"`{_short(index.text(node.target))} {symbol} ...` (line {index.span(node).line})"
        sign = -1.0 if symbol == "-=" else 1.0
        yield tensor, (node.value,), sign, text, update.scope, update.klass, update.guards, update.context_items
    for site in index.calls:
        if site.qualname is None and site.method in _UPDATE_METHODS and site.receiver is not None:
            tensor = _updated(site.receiver)
            given = keyword(site.node, "other")
            args = positional(site.node)
            values = (given.value,) if given is not None else tuple(args[:1])
            text = f"`{_short(index.text(site.receiver))}.{site.method}(...)` (line {index.span(site.node).line})"
            sign = -1.0 if site.method == "sub_" else 1.0
        elif site.qualname in _OUT_FUNCTIONS and (out := keyword(site.node, "out")) is not None:
            tensor = _updated(out.value)
            values = tuple(positional(site.node)[:2])
            sign = -1.0 if site.qualname == "torch.sub" else 1.0  # (the subtrahend's sign: taken for both)
            text = f"`{site.qualname}(..., out={_short(index.text(out.value))})` (line {index.span(site.node).line})"
        else:
            continue
        if tensor is not None and values:
            yield tensor, values, sign, text, site.scope, site.klass, site.guards, site.context_items


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def _number_valued(index: ModuleIndex, evaluator: Evaluator, expr: ast.expr, scope) -> bool:
    """The name or attribute may hold a Python number or an integer (a counter, a running
    total: ``total += n * 1e6`` is no tensor, or no float one, updated in place)."""
    if isinstance(expr, ast.Name):
        values = [b.value for b in _kept_bindings(index, scope, expr)]
        return any(v is not None and (number(v) is not None or _integer(index, v, scope)) for v in values)
    return any(
        v.kind == CONST and isinstance(v.value, (int, float)) and not isinstance(v.value, bool)
        for v in evaluator.values(expr, scope)
    )


def _inplace_constants(index: ModuleIndex, evaluator: Evaluator) -> List[HalfConstant]:
    """Constants beyond float16's range added or subtracted in place into a tensor: the sum is
    computed in the promoted dtype (float32 for ``(1.0 - mask) * -1e9``), then written back in
    the updated tensor's dtype, so a float16 ``scores`` gets ``-inf`` where an out-of-place
    ``scores + ...`` would be float32. The tensor's dtype is judged as a masking call's is
    (an fp16 autocast region, a tensor made float16, an autocast product, a certainly float16
    value, the run of model code); a tensor made float32 (``.float()``) is left out."""
    out: List[HalfConstant] = []
    seen = set()
    for tensor, values, sign, text, scope, klass, guards, items in _inplace_updates(index):
        carried = [c for v in values for c in _carried(index, evaluator, v, scope, sign=sign)]
        if not carried or evaluator.dead(guards, scope):
            continue
        if _made_wide(index, evaluator, tensor, scope) or _number_valued(index, evaluator, tensor, scope):
            continue
        off = _autocast_off(index, items, scope)
        evidence = []
        if not off and _autocast_half(index, evaluator, items, scope):
            evidence.append("autocast")
        if _half_tensor(index, evaluator, tensor, scope):
            evidence.append("half-tensor")
        produced = "" if evidence else autocast_half(index, evaluator).produced(tensor, scope) or ""
        certain = () if evidence or produced else float16_tensors(index, evaluator).values(tensor, scope)
        for expr, value in carried:
            if id(expr) in seen:
                continue  # a constant bound once (`ext = ... * -1e9`), added in place twice
            seen.add(id(expr))
            out.append(
                HalfConstant(
                    "inplace", value, index.span(expr), index.text(expr), _simple(index, tensor), tuple(evidence),
                    klass, scope.code_scope().qualname, autocast_op=produced, autocast_off=off, fp16=certain, update=text,
                )
            )
    return out


# Reductions for which -inf is what the fill means: the largest entry, its place, the k largest
_MAX_READS = frozenset({"max", "amax", "argmax", "topk", "sort", "argsort"})


def _read_only_by_max(index: ModuleIndex, misfit) -> bool:
    """Whether the tensor a subscript fill writes (``h[keep == 0] = -1e9``) is read below it only
    by a max (``h.max(1)``, ``torch.amax(h, dim=1)``): the fill pads a max-pooling, and the
    -inf float16 stores is the max's own neutral element, so every row with one real entry
    pools the same finite value (47c: a Kaggle DeBERTa's max-pool over padded tokens). No
    softmax sees the row; read any other way, or returned, it may (reported)."""
    if not isinstance(misfit.other, ast.Name):
        return False
    name, scope = misfit.other.id, misfit.scope.code_scope()
    after = max((at for n in ast.walk(misfit.node) if (at := position(index, n)) is not None), default=None)
    if after is None:  # past the whole fill (its target reads the tensor too)
        return False
    parents = {}
    reads = []
    for node in ast.walk(scope.node):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            at = position(index, node)
            if at is not None and at > after:
                reads.append(node)
    return bool(reads) and all(_reduced_by_max(read, parents) for read in reads)


def _reduced_by_max(read: ast.Name, parents) -> bool:
    parent = parents.get(id(read))
    if isinstance(parent, ast.Attribute) and parent.value is read and parent.attr in _MAX_READS:
        return isinstance(parents.get(id(parent)), ast.Call)  # `h.max(1)`
    if isinstance(parent, ast.Call) and parent.args and parent.args[0] is read:  # `torch.max(h, dim=1)`
        return isinstance(parent.func, ast.Attribute) and parent.func.attr in _MAX_READS
    return False


def _mapping_item(index: ModuleIndex, misfit) -> bool:
    """Whether ``x[k] = 128256`` stores into a mapping or a list, not a tensor: a string key
    (``config_args["vocab_size"]``: no tensor is indexed by a string), or a receiver bound to a
    dict, list or set display, a comprehension of one, or ``dict(...)``/``list(...)``."""
    target = next((t for t in getattr(misfit.node, "targets", ()) if isinstance(t, ast.Subscript) and t.value is misfit.other), None)
    if target is not None and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str):
        return True
    if not isinstance(misfit.other, ast.Name):
        return False
    values = [b.value for b in _kept_bindings(index, misfit.scope, misfit.other)]
    return bool(values) and all(_container(index, v, misfit.scope) for v in values)


_CONTAINERS = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)


def _container(index: ModuleIndex, value: Optional[ast.expr], scope) -> bool:
    if isinstance(value, _CONTAINERS):
        return True
    if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Dict):  # `{...}[name]`: one of its values
        return bool(value.value.values) and all(_container(index, v, scope) for v in value.value.values)
    if not isinstance(value, ast.Call):
        return False
    qual = index.qualify(value.func, scope)  # (None for a builtin: no binding names it)
    builtin = isinstance(value.func, ast.Name) and value.func.id in ("dict", "list", "set") and qual is None
    return builtin or qual in ("collections.OrderedDict", "collections.defaultdict")


def _divided_by(misfit) -> bool:
    """``x / 1e9``: a tensor divided by a large constant gets smaller, nothing overflows (the
    division runs in float32 and rounds the result to float16)."""
    node = misfit.node
    return isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and node.left is misfit.other


def _argument_text(index: ModuleIndex, call: ast.Call, expr: ast.expr) -> str:
    """An argument of ``call`` as written, with its own parentheses (``value=(-1e10)``)."""
    for kw in call.keywords:
        if kw.value is expr:
            return value_text(index, expr, kw)
    return argument_text(index, call, expr)


def _misfit_text(index: ModuleIndex, misfit) -> str:
    """The literal (or name) of a :class:`HalfMisfit` as written, with its own parentheses
    (``x + (1e-8)``): what follows the left operand, or the assignment's last target."""
    node, literal = misfit.node, misfit.literal
    if isinstance(node, ast.BinOp):
        before = index.span(node).start if literal is node.left else index.span(node.left).end
    elif isinstance(node, ast.Assign):
        before = index.span(node.targets[-1]).end
    else:
        return index.text(literal)
    span = index.span(literal)
    start, end = paren_extent(index.source, span.start, span.end, before)
    return index.source[start:end]


def _half_casts(index: ModuleIndex, evaluator: Evaluator):
    """``Model().half()``, ``model.half()``, ``model.to(torch.float16)`` where the receiver is
    built by a call of a named class or function: (its qualified name, the cast's span, the names
    the float16 model is bound to, the scope the cast runs in)."""
    out = []
    chained = {id(s.receiver): s for s in index.calls if isinstance(s.receiver, ast.Call)}
    for site in index.calls:
        if not _casts_to_float16(evaluator, site, ("to",)):
            continue
        if evaluator.dead(site.guards, site.scope):
            continue  # under a test that never holds: nothing is cast (asked of casts only: it
            # reads the values of every test above the site)
        receiver = site.receiver
        targets = tuple(site.assigned_to)
        outer = chained.get(id(site.node))
        while outer is not None:  # `m = Model().half().to(device)`
            targets += tuple(outer.assigned_to)
            outer = chained.get(id(outer.node))
        if isinstance(receiver, (ast.Name, ast.Attribute)) and dotted(receiver):
            targets += (dotted(receiver),)
        made = _builder(index, receiver, site.scope)
        if made is not None:
            out.append((made.qualname or "", index.span(site.node), targets, site.scope.code_scope().qualname))
    return tuple(out)


# apex's opt levels that make the model's own weights float16 (O2 keeps float32 master copies in
# the optimizer, O3 none); O1 patches functions instead (as autocast does) and O0 is float32
APEX_HALF_LEVELS = frozenset({"O2", "O3"})


def _apex_casts(index: ModuleIndex, evaluator: Evaluator):
    """``model, optimizer = amp.initialize(model, optimizer, opt_level="O2")`` (or ``"O3"``): apex
    casts the model's weights to float16 (and its patched ``forward`` casts float inputs to
    half), recorded as :func:`_half_casts` records ``model.half()``. Only where every value the
    level may take is one of those: an option that defaults to ``"O1"`` casts nothing by itself."""
    from .optimizers import APEX_INITIALIZE

    out = []
    for site in index.calls:
        if site.qualname not in APEX_INITIALIZE:
            continue
        level = keyword(site.node, "opt_level")
        values = evaluator.values(level.value, site.scope) if level is not None else ()
        if not values or any(v.kind != CONST or v.value not in APEX_HALF_LEVELS for v in values):
            continue
        if evaluator.dead(site.guards, site.scope):
            continue
        given = keyword(site.node, "models")
        args = positional(site.node)
        model = given.value if given is not None else (args[0] if args else None)
        if not isinstance(model, (ast.Name, ast.Attribute)) or not dotted(model):
            continue  # a list of models: each is its own question
        made = _builder(index, model, site.scope)
        if made is not None:
            targets = (dotted(model), *site.assigned_to[:1])
            out.append((made.qualname or "", index.span(site.node), targets, site.scope.code_scope().qualname))
    return tuple(out)


def _casts_to_float16(evaluator: Evaluator, site: CallSite, methods) -> bool:
    """Whether the call casts its receiver to float16: ``.half()``, or one of ``methods``
    (``.to``, ``.type``) given ``torch.float16``."""
    if site.method == "half":
        return not site.node.args and not site.node.keywords
    return site.method in methods and any(
        d.value == "float16" for a in _argument_values(site.node) for d in dtypes(evaluator.values(a, site.scope))
    )


def _builder(index: ModuleIndex, receiver, scope):
    """The call that builds the model ``receiver`` holds (through the bindings of a name, and past
    ``.cuda()``-like calls of a chain), or None."""
    if isinstance(receiver, ast.Name):
        values = [b.value for b in _bindings(index, scope, receiver)]
        receiver = next((v for v in values if isinstance(v, ast.Call)), None)
    made = index.call_of(receiver) if isinstance(receiver, ast.Call) else None
    while made is not None and not made.qualname and isinstance(made.receiver, ast.Call):
        made = index.call_of(made.receiver)  # `Encoder().cuda()`: the class that builds it
    return made


def _data_casts(index: ModuleIndex, evaluator: Evaluator):
    """A model's parameters made float16 through their ``.data``, as :func:`_half_casts` records a
    cast: ``p.data = p.data.half()`` in a loop over ``model.parameters()``; ``m.weight.data =
    m.weight.data.half()`` in a loop over ``model.modules()`` (or a method's loop over
    ``self.body.modules()``: the model is each instance the method is called on, ``net.to_fp16()``),
    or in a function ``model.apply(fn)`` runs on every submodule (OpenAI's ``convert_module_to_f16``).
    The optimizer then holds float16 parameters as after ``model.half()``."""
    out = []
    applied = {}  # the functions `m.apply(fn)` runs: qualified name -> those calls
    for site in index.calls:
        if site.method == "apply" and site.receiver is not None and len(site.node.args) == 1 and isinstance(site.node.args[0], ast.Name):
            name = site.node.args[0].id
            owner = binding_scope(name, site.scope)
            if owner is not None:
                applied.setdefault(f"{owner.qualname}.{name}" if owner.qualname else name, []).append(site)
    seen = set()

    def add(model, call_site, span) -> None:
        made = _builder(index, model, call_site.scope) if dotted(model) else None
        key = (span.start, dotted(model))
        if made is not None and key not in seen:
            seen.add(key)
            out.append((made.qualname or "", span, (dotted(model),), call_site.scope.code_scope().qualname))

    for site in index.calls:
        receiver = site.receiver
        if not (isinstance(receiver, ast.Attribute) and receiver.attr == "data" and dotted(receiver) in site.assigned_to):
            continue  # `x.data = x.data.half()`: the same tensor's storage replaced
        if not _casts_to_float16(evaluator, site, ("to", "type")) or evaluator.dead(site.guards, site.scope):
            continue
        root = receiver.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            continue
        function = site.scope.code_scope()
        for binding in _bindings(index, site.scope, root):
            it = walked_call(binding.statement, _WALKS) if isinstance(binding.statement, (ast.For, ast.AsyncFor)) else None
            if it is None:
                continue
            model = it.func.value
            inner = model
            while isinstance(inner, ast.Attribute):
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id == "self" and function.parent is not None and function.parent.kind == "class":
                # a method's own loop (`for m in self.body.modules():`): each instance it is called on
                for call in index.calls:
                    if call.method == function.node.name and call.receiver is not None:
                        made = _builder(index, call.receiver, call.scope)
                        if made is not None and made.qualname == function.parent.qualname:
                            add(call.receiver, call, index.span(call.node))
            else:
                add(model, site, index.span(site.node))
        if root.id in function.params:
            for call in applied.get(function.qualname, ()):  # `layer.weight.data` of each submodule
                add(call.receiver, call, index.span(call.node))
    return tuple(out)


# what a loop walks to reach a model's parameters: them, or its submodules
_WALKS = frozenset({"parameters", "named_parameters", "modules", "named_modules", "children", "named_children"})
