"""Which tensors are *certainly* float16, as values of the shared domain.

``tensors.py`` answers what a tensor or model *may* be (any binding, any branch: a float16
student for a KD loss). A constant that float16 cannot hold (``t.std() + 1e-9``) is reported
only where the tensor it meets certainly is float16, so this domain is narrower. An answer is
a tuple of atoms, all of which must hold for the tensor to be float16 (every binding that
reaches a name, both operands of ``a - b``), or ``()`` when the dtype is not certain:

- ``HALF``: float16 here; ``value`` says why: ``x.half()``, ``x.to(torch.float16)``,
  ``torch.ones(..., dtype=torch.float16)``, the output of a ``torch.nn`` layer whose weights
  are cast to float16 called on a float16 input (a layer keeps its input's dtype; a float32
  input to float16 weights raises, which is no float16 tensor);
- ``PARAM``: the tensor has the dtype of a parameter of the enclosing function (``t`` in
  ``def normalize(t): ... t.std() + 1e-9``), its reference marked ``fp16``: the join
  substitutes the certain values each call passes (``CallArg.fp16``), so a helper is judged
  with the arguments of each of its calls.

It follows the ops that keep their input's dtype in eager code and under autocast alike (views,
``std``/``mean``/``max``, ``a - b`` of two float16 tensors or of one and a Python number);
anything else (``.float()``, ``sum`` and ``norm``, which autocast runs in float32, a scalar
divided by a tensor, a model of the project, a library call) ends the walk with ``()``. A
name updated in place (``x += y``) keeps the dtype of what it held (``ModuleIndex.bindings_kept``).
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Tuple

import ast

from ..knowledge import autocast_ops
from .evaluate import Evaluator, param_ref
from .index import ModuleIndex, Scope, keyword, positional
from .tensors import cast_dtypes, half_tensors
from .values import DTYPE, HALF, PARAM, Possible

_DEPTH = 10
# tensor methods that keep their receiver's dtype, besides autocast's dtype-keeping list
_KEEPING = frozenset({"std", "var", "cuda", "cpu", "masked_fill", "view_as", "narrow", "repeat", "flip", "roll"})
# torch factories that make a tensor of the dtype they are given
_FACTORIES = frozenset(
    f"torch.{f}"
    for f in (
        "zeros", "ones", "empty", "full", "rand", "randn", "randint", "tensor", "as_tensor", "arange",
        "linspace", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
    )
)
# `torch.zeros_like(x)`: the dtype of ``x`` when no dtype is given
_LIKE = frozenset(f for f in _FACTORIES if f.endswith("_like"))
# containers and wrappers of torch.nn: what they compute is their contents' business
_NOT_LAYERS = frozenset(
    {"Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "DataParallel", "DistributedDataParallel"}
)
# in-place calls on a module that keep its dtype (`.to(device)` is checked on its own)
_MODULE_KEEPING = frozenset({"cuda", "cpu", "eval", "train", "requires_grad_"})


def float16_tensors(index: ModuleIndex, evaluator: Evaluator) -> "Float16Tensors":
    """The module's analysis, built once per module (its answers are worked out on demand)."""
    memo = evaluator.analyses
    if "float16" not in memo:
        memo["float16"] = Float16Tensors(index, evaluator)
    return memo["float16"]


def _all(*parts: Optional[List[Possible]]) -> Optional[List[Possible]]:
    """Atoms that must all hold: None when one part is not certain; a single parameter
    stands for the whole (float16 exactly when it is), two different ones are not followed."""
    out: List[Possible] = []
    for part in parts:
        if part is None:
            return None
        out.extend(part)
    params = list(dict.fromkeys(v for v in out if v.kind == PARAM))
    if len(params) > 1:
        return None
    return params if params else list(dict.fromkeys(out))[:2]


class Float16Tensors:
    def __init__(self, index: ModuleIndex, evaluator: Evaluator) -> None:
        self.ix = index
        self.ev = evaluator
        self._keeping = autocast_ops()["dtype_keeping_methods"] | _KEEPING
        self._torch_keeping = frozenset(f"torch.{m}" for m in self._keeping)
        self._memo: Dict[Tuple[int, int], Optional[List[Possible]]] = {}
        self._active: set = set()

    # --- public -----------------------------------------------------------------------
    def values(self, expr: Optional[ast.expr], scope: Scope) -> Tuple[Possible, ...]:
        """Why ``expr`` is certainly float16 (``HALF`` and ``PARAM`` atoms), or ()."""
        if expr is None:
            return ()
        found = self._walk(expr, scope, 0)
        return tuple(found) if found else ()

    # --- the walk back from the expression ----------------------------------------------
    def _walk(self, expr: ast.expr, scope: Scope, depth: int) -> Optional[List[Possible]]:
        if depth > _DEPTH:
            return None
        key = (id(expr), id(scope))
        if key in self._memo:
            return self._memo[key]
        if key in self._active:
            return None
        self._active.add(key)
        try:
            found = self._expr(expr, scope, depth)
        finally:
            self._active.discard(key)
        self._memo[key] = found
        return found

    def _expr(self, expr: ast.expr, scope: Scope, depth: int) -> Optional[List[Possible]]:
        if isinstance(expr, ast.Name):
            return self._name(expr, scope, depth)
        if isinstance(expr, ast.Attribute):
            if expr.attr in ("values", "T", "mT", "data"):  # `x.max(-1).values`, `x.T`
                return self._walk(expr.value, scope, depth + 1)
            return None
        if isinstance(expr, ast.Subscript):
            return self._walk(expr.value, scope, depth + 1)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
            return self._walk(expr.operand, scope, depth + 1)
        if isinstance(expr, ast.BinOp):
            return self._binary(expr, scope, depth)
        if isinstance(expr, ast.IfExp):
            return _all(self._walk(expr.body, scope, depth + 1), self._walk(expr.orelse, scope, depth + 1))
        if isinstance(expr, ast.Call):
            return self._call(expr, scope, depth)
        return None

    def _name(self, expr: ast.Name, scope: Scope, depth: int) -> Optional[List[Possible]]:
        owner, reached = self.ix.bindings_kept(expr, scope)  # `x += y` keeps x's dtype
        if owner is None:
            return None
        if owner.kind == "function" and expr.id in owner.params:
            if reached:
                return None  # reassigned in the function: whether the argument still reaches is not known here
            return [Possible(PARAM, dataclasses.replace(param_ref(owner, expr.id), fp16=True))]
        if not reached:
            return None
        parts = []
        for binding in reached:
            if binding.value is None or binding.unpack_index is not None:
                return None
            parts.append(self._walk(binding.value, owner, depth + 1))
        return _all(*parts)

    def _binary(self, expr: ast.BinOp, scope: Scope, depth: int) -> Optional[List[Possible]]:
        if not isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.MatMult)):
            return None  # `**` runs in float32 under autocast
        left = self._walk(expr.left, scope, depth + 1)
        if left is None and isinstance(expr.op, (ast.Div, ast.MatMult)):
            return None  # `1 / x` (__rtruediv__) runs in float32 under autocast
        right = self._walk(expr.right, scope, depth + 1)
        if left is not None and right is not None:
            return _all(left, right)
        if isinstance(expr.op, ast.MatMult):
            return None
        if left is not None and _number(expr.right):
            return left
        if right is not None and _number(expr.left):
            return right
        return None

    def _call(self, expr: ast.Call, scope: Scope, depth: int) -> Optional[List[Possible]]:
        site = self.ix.call_of(expr)
        if site is None:
            return None
        qual = site.qualname or ""
        method = site.method
        if qual in _FACTORIES:
            return self._made(expr, qual, scope, depth)
        if qual in self._torch_keeping and keyword(expr, "dtype") is None:
            args = positional(expr)
            return self._walk(args[0], scope, depth + 1) if args else None  # `torch.std(x)`
        if isinstance(expr.func, ast.Name):
            return self._layer_output(expr, scope, depth)  # `head(x)`: a variable holding a layer
        if qual or method is None:
            return None
        receiver = site.receiver
        if receiver is None:
            return None
        if method in ("half", "to", "type"):
            made = cast_dtypes(self.ev, expr, method, scope)
            if made == frozenset({"float16"}):
                return [Possible(HALF, f"`{self._short(expr)}` (line {self._line(expr)}) casts to float16", origin=self.ix.span(expr))]
            if made == frozenset() and self._to_device(expr):
                return self._walk(receiver, scope, depth + 1)  # `.to(device)`
            return None
        if method in self._keeping and keyword(expr, "dtype") is None:
            return self._walk(receiver, scope, depth + 1)
        return None

    def _made(self, expr: ast.Call, qual: str, scope: Scope, depth: int) -> Optional[List[Possible]]:
        """``torch.ones(..., dtype=torch.float16)``; ``torch.zeros_like(x)`` of a float16 ``x``."""
        given = keyword(expr, "dtype")
        if given is None:
            args = positional(expr)
            return self._walk(args[0], scope, depth + 1) if qual in _LIKE and args else None
        if not self.ev.mentions_dtype(given.value, scope):
            return None
        values = self.ev.values(given.value, scope)
        if values and all(v.kind == DTYPE and v.value == "float16" for v in values):
            text = f"`{self._short(expr)}` (line {self._line(expr)}) makes a float16 tensor"
            return [Possible(HALF, text, origin=self.ix.span(expr))]
        return None

    def _to_device(self, call: ast.Call) -> bool:
        """``.to(device)`` / ``.to("cuda")`` / ``.to(0)``: arguments that name a device, never a
        tensor whose dtype ``.to(other)`` would take."""
        for arg in call.args:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, (str, int)) and not isinstance(arg.value, bool):
                continue
            if isinstance(arg, ast.Call) and (self.ix.qualify(arg.func) or "") == "torch.device":
                continue
            if isinstance(arg, (ast.Name, ast.Attribute)) and "device" in self.ix.text(arg).rsplit(".", 1)[-1].lower():
                continue
            return False
        return all(k.arg in ("device", "non_blocking", "copy", "memory_format") for k in call.keywords)

    # --- a torch.nn layer with float16 weights ------------------------------------------
    def _layer_output(self, call: ast.Call, scope: Scope, depth: int) -> Optional[List[Possible]]:
        """``head(x)``: a ``torch.nn`` layer whose weights are certainly float16 returns its
        input's dtype (a float32 input raises): float16 exactly when ``x`` is."""
        args = positional(call)
        if not args or not isinstance(call.func, ast.Name):
            return None
        cast = self._half_layer(call.func, scope)
        if cast is None:
            return None
        found = self._walk(args[0], scope, depth + 1)
        if found is None:
            return None
        text = f"`{self._short(call.func)}(...)` (line {self._line(call)}) runs float16 weights ({cast}) on a float16 input"
        return [Possible(HALF, text, origin=self.ix.span(call)) if v.kind == HALF else v for v in found]

    def _half_layer(self, name: ast.Name, scope: Scope) -> Optional[str]:
        """Where every binding of ``name`` makes a ``torch.nn`` layer float16 (``nn.Linear(16,
        1).to(torch.float16)``, ``.half()``, ``dtype=torch.float16``, or an in-place
        ``head.half()`` of a layer no other statement casts): that cast's line, else None."""
        owner, reached = self.ix.bindings_of(name, scope)
        if owner is None or not reached or (owner.kind == "function" and name.id in owner.params):
            return None
        inplace = self._inplace(owner, name.id)
        where = None
        for binding in reached:
            value = binding.value
            if not isinstance(value, ast.Call) or binding.unpack_index is not None:
                return None
            cast = self._layer_cast(value, owner)
            if cast is None and inplace:
                cast = inplace if self._is_layer(self._base(value), owner) else None
            if cast is None:
                return None
            where = where or cast
        return where

    def _layer_cast(self, value: ast.Call, scope: Scope) -> Optional[str]:
        """A chain ``torch.nn.X(...)[.to(device)|.cuda()|.eval()...].half()``: where it is
        made float16 (no later cast to another dtype), else None."""
        node: ast.expr = value
        cast = None
        while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            site = self.ix.call_of(node)
            if site is None or site.qualname:
                break
            method = node.func.attr
            if method in ("half", "to", "type"):
                made = cast_dtypes(self.ev, node, method, scope)
                if made == frozenset({"float16"}):
                    cast = cast or f"line {self._line(node)}"
                elif not (made == frozenset() and self._to_device(node)):
                    return None  # another dtype, or one not known here
            elif method not in _MODULE_KEEPING:
                return None  # `.float()`, or a call whose result is not the module
            node = node.func.value
        if not isinstance(node, ast.Call) or not self._is_layer(node, scope):
            return None
        given = keyword(node, "dtype")
        if given is not None and cast is None:
            values = self.ev.values(given.value, scope)
            if values and all(v.kind == DTYPE and v.value == "float16" for v in values):
                cast = f"line {self._line(node)}"
        return cast

    @staticmethod
    def _base(value: ast.expr) -> ast.expr:
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Call):
            value = value.func.value
        return value

    def _is_layer(self, call: ast.expr, scope: Scope) -> bool:
        if not isinstance(call, ast.Call):
            return False
        qual = self.ix.qualify(call.func, scope) or ""
        last = qual.rsplit(".", 1)[-1]
        return qual.startswith("torch.nn.") and last[:1].isupper() and last not in _NOT_LAYERS

    def _inplace(self, owner: Scope, name: str) -> Optional[str]:
        """``head.half()`` as a statement in ``owner`` (a module casts itself in place), when no
        statement casts ``name`` to another dtype: its line, else None."""
        casts = half_tensors(self.ix, self.ev).inplace.get((owner.qualname, name), ())
        if not casts:
            return None
        for site in self.ix.calls:
            if site.method in ("float", "double", "bfloat16", "to", "type") and isinstance(site.receiver, ast.Name) and site.receiver.id == name:
                if site.scope.lookup_scope(name) is not owner:
                    continue
                made = cast_dtypes(self.ev, site.node, site.method, site.scope)
                if made is None or (made and made != frozenset({"float16"})):
                    return None
        return f"line {casts[0][1].line}"

    # --- text ---------------------------------------------------------------------------
    def _line(self, node: ast.AST) -> int:
        return self.ix.span(node).line

    def _short(self, node: ast.AST) -> str:
        text = self.ix.text(node)
        return text if len(text) <= 50 else text[:47] + "..."


def _number(expr: ast.expr) -> bool:
    """A Python number literal (``x - 1``, ``x * 0.5``): it keeps a float16 tensor float16."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        expr = expr.operand
    return isinstance(expr, ast.Constant) and type(expr.value) in (int, float)
