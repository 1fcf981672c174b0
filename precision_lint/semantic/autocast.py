"""Which tensors an fp16 autocast certainly computes in float16.

``torch.autocast("cuda")`` (float16 by default) runs the matrix products of its "lower
precision" list in float16 and returns float16, whatever the inputs' dtype: ``q @ k.T``,
``torch.einsum(...)``, ``torch.bmm``, ``F.linear``. What is computed from such a result with
ops autocast leaves alone keeps float16: ``scores.max(-1).values``, ``a - b`` of two of them,
``x * 0.5``, indexing, ``transpose``, an in-place update (``s += bias``). A float16 result
then meets constants that float16 cannot hold: ``(hi - lo + 1e-8)`` adds 0, and
``masked_fill(mask, -1e9)`` raises.

This module answers, for one expression, whether it is such a tensor and why (the product and
the autocast region it runs in), or None. The answer is certain or absent: an op of autocast's
"float32" list (``sum``, ``norm``, ``softmax``, ``log``, ``exp``, ``pow``, the losses) makes
its result float32; a binary operation with an operand of unknown dtype may promote to float32;
a scalar divided by a tensor (``__rtruediv__``) is on the float32 list; a parameter, a model's
output or a library call is of unknown dtype. Each of these ends the walk with None.

A function's code runs under autocast where it is written inside an enabled fp16 ``with
torch.autocast(...)`` region, or where this module calls it from inside one: ``step(x)``,
``self.score(q, d)``, and a module's ``forward`` through an instance of its class built here
(``loss_fn = Distillation(model)`` ... ``loss_fn(q, d)`` under autocast). The op lists are data
(``knowledge/torch.toml``, ``[autocast]``).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import ast

from ..knowledge import autocast_ops
from .evaluate import Evaluator
from .index import ModuleIndex, Scope, positional
from .tensors import AUTOCAST, enclosing_class, half_tensors
from .values import CONST

_DEPTH = 8  # bindings and ops followed back from the expression
_MOVES = frozenset({"cuda", "cpu", "to", "eval", "train", "requires_grad_", "float"})  # a module's own methods that return it
_CALLERS = 3  # callers followed up from a function to an autocast region


def autocast_half(index: ModuleIndex, evaluator: Evaluator) -> "AutocastHalf":
    """The module's analysis, built once per module (its answers are worked out on demand)."""
    memo = evaluator.analyses
    if "autocast_half" not in memo:
        memo["autocast_half"] = AutocastHalf(index, evaluator)
    return memo["autocast_half"]


class AutocastHalf:
    def __init__(self, index: ModuleIndex, evaluator: Evaluator) -> None:
        self.ix = index
        self.ev = evaluator
        self.tensors = half_tensors(index, evaluator)
        ops = autocast_ops()
        self._functions = ops["float16_functions"]
        self._methods = ops["float16_methods"]
        self._keeping = ops["dtype_keeping_methods"]
        self._torch_keeping = frozenset(f"torch.{m}" for m in self._keeping) | ops["dtype_keeping_functions"]
        self._modules = ops["float16_modules"]
        self._under: Dict[str, Optional[str]] = {}  # function qualname → why it runs under autocast

    # --- public -------------------------------------------------------------------
    def produced(self, expr: Optional[ast.expr], scope: Scope) -> Optional[str]:
        """Why ``expr`` is certainly a float16 result of autocast ("`torch.einsum(...)` (line
        12) runs in float16 under fp16 autocast (line 30)"), or None."""
        return self._half(expr, scope, 0) if expr is not None else None

    # --- the walk back from the expression ----------------------------------------
    def _half(self, expr: ast.expr, scope: Scope, depth: int) -> Optional[str]:
        if depth > _DEPTH:
            return None
        if isinstance(expr, ast.Name):
            owner, reached = self.ix.bindings_kept(expr, scope)  # `x += y` keeps x's dtype
            if owner is None or not reached or (owner.kind == "function" and expr.id in owner.params):
                return None
            found = None
            for binding in reached:
                if binding.value is None or binding.unpack_index is not None:
                    return None
                found = self._half(binding.value, owner, depth + 1)
                if found is None:
                    return None  # one binding of unknown dtype reaches the use
            return found
        if isinstance(expr, ast.Attribute):
            if expr.attr in ("values", "T", "mT"):
                return self._half(expr.value, scope, depth + 1)  # `x.max(-1).values`, `x.T`
            return None
        if isinstance(expr, ast.Subscript):
            return self._half(expr.value, scope, depth + 1)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
            return self._half(expr.operand, scope, depth + 1)
        if isinstance(expr, ast.BinOp):
            return self._binary(expr, scope, depth)
        if isinstance(expr, ast.Call):
            return self._call(expr, scope, depth)
        return None

    def _binary(self, expr: ast.BinOp, scope: Scope, depth: int) -> Optional[str]:
        op = expr.op
        if isinstance(op, ast.MatMult):
            site = self.ix.matmuls.get(id(expr))
            if site is None:
                return None
            region = self._region(site.contexts, site.context_items, site.scope)
            return f"`{self._short(expr)}` (line {self._line(expr)}) {region}" if region else None
        if not isinstance(op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            return None  # `**` is on autocast's float32 list; `//`, `%` are not float math here
        left = self._half(expr.left, scope, depth + 1)
        if isinstance(op, ast.Div) and left is None:
            return None  # `1 / x` (__rtruediv__) runs in float32 under autocast
        right = self._half(expr.right, scope, depth + 1)
        if left is not None and (right is not None or self._number(expr.right, scope)):
            return left
        if right is not None and self._number(expr.left, scope):
            return right
        return None

    def _call(self, expr: ast.Call, scope: Scope, depth: int) -> Optional[str]:
        site = self.ix.call_of(expr)
        if site is None:
            return None
        qual = site.qualname or ""
        if qual in self._functions or (site.method in self._methods and not qual):
            region = self._region(site.contexts, site.context_items, site.scope)
            return f"`{self._short(expr.func)}(...)` (line {self._line(expr)}) {region}" if region else None
        if site.method in self._keeping and not qual and site.receiver is not None:
            return self._half(site.receiver, scope, depth + 1)  # `scores.max(-1, keepdim=True)`
        if qual in self._torch_keeping:
            args = positional(expr)
            return self._half(args[0], scope, depth + 1) if args else None  # `torch.abs(x)`
        made = self._module_made(expr.func, scope)
        if made is not None:  # `self.head(x)` of `self.head = nn.Linear(...)`
            region = self._region(site.contexts, site.context_items, site.scope)
            return f"`{self._short(expr.func)}(...)` (a `{made.rsplit('.', 1)[-1]}`, line {self._line(expr)}) {region}" if region else None
        return None

    def _module_made(self, func: ast.expr, scope: Scope) -> Optional[str]:
        """The class of autocast's float16 list (``float16_modules``) that every binding of the
        called name, or of ``self.<attr>`` in the methods of its class, constructs; None
        otherwise."""
        made = self._bound_values(func, scope)
        if made is None:
            return None
        names = set()
        for value, where in made:
            value = _made(value) if isinstance(value, ast.Call) else value  # `nn.Conv2d(...).cuda()`
            if not isinstance(value, ast.Call):
                return None
            names.add(self.ix.qualify(value.func, where))
        return names.pop() if len(names) == 1 and next(iter(names)) in self._modules else None

    def _number(self, expr: ast.expr, scope: Scope) -> bool:
        """A Python number: it keeps a float16 tensor float16 (``x * 0.5``, ``x - 1``)."""
        if _real_literal(expr):
            return True
        if isinstance(expr, ast.UnaryOp) and _real_literal(expr.operand):
            return True
        if isinstance(expr, ast.Name):
            values = self.ev.values(expr, scope)
            return bool(values) and all(
                v.kind == CONST and isinstance(v.value, (int, float)) and not isinstance(v.value, bool) for v in values
            )
        return False

    # --- where autocast is on -----------------------------------------------------
    def _region(self, contexts, items, scope: Scope) -> Optional[str]:
        """How code in ``scope`` under the ``with`` items ``items`` runs under an enabled fp16
        autocast ("runs in float16 under fp16 autocast (line N)"), or None."""
        region = self.tensors.autocast_region(contexts, items, scope)
        if region is not None and region[0] == "float16":
            return f"runs in float16 under fp16 autocast (line {self._line(region[1])})"
        function = scope.code_scope()
        if function.kind != "function":
            return None
        decorated = self._decorated(function)
        if decorated is not None:  # `@torch.autocast("cuda", enabled=False)` on the function itself
            return decorated or None
        return self._called_under(function, 0)

    def _decorated(self, function: Scope) -> Optional[str]:
        """For a function decorated with an autocast: why it runs in float16 there, "" where
        that autocast is off or of another dtype (the caller's region ends at it); None for a
        function with no such decorator."""
        node = function.node
        decorators = [d for d in getattr(node, "decorator_list", ()) if isinstance(d, ast.Call)]
        items = tuple(decorators)
        contexts = tuple(self.ix.qualify(d.func, function.parent or function) or "" for d in decorators)
        if not any(q in AUTOCAST or q.rsplit(".", 1)[-1] == "autocast" for q in contexts):
            return None
        region = self.tensors.autocast_region(contexts, items, function.parent or function)
        if region is not None and region[0] == "float16":
            return f"runs in float16 under fp16 autocast (line {self._line(region[1])})"
        return ""

    def _called_under(self, function: Scope, depth: int) -> Optional[str]:
        """Why ``function`` runs under an enabled fp16 autocast: a call of it in this module
        inside such a region (or inside a function that runs under one), else None."""
        key = function.qualname
        if key in self._under:
            return self._under[key]
        if depth > _CALLERS:
            return None
        self._under[key] = None  # a recursive call asks again: no answer through itself
        found = None
        for site in self.ix.calls:
            if not self._calls(site, function):
                continue
            region = self.tensors.autocast_region(site.contexts, site.context_items, site.scope)
            if region is not None and region[0] == "float16":
                found = f"runs in float16 under fp16 autocast (the call on line {self._line(site.node)}, autocast on line {self._line(region[1])})"
                break
            caller = site.scope.code_scope()
            if caller.kind == "function" and caller is not function:
                found = self._called_under(caller, depth + 1)
                if found is not None:
                    break
        self._under[key] = found
        return found

    def _calls(self, site, function: Scope) -> bool:
        """Whether the call ``site`` runs ``function``: by name, as ``self.method(...)``, or as
        the ``forward`` of an instance of its class built in this module."""
        if self.tensors.local_function(site.node.func, site.scope) is function:
            return True
        if function.qualname.rsplit(".", 1)[-1] != "forward":
            return False
        klass = function.parent
        if klass is None or klass.kind != "class":
            return False
        values = self._bound_values(site.node.func, site.scope)
        return values is not None and any(isinstance(v, ast.Call) and self._builds(_made(v), klass) for v, _ in values)

    def _bound_values(self, func: ast.expr, scope: Scope) -> Optional[List[Tuple[ast.expr, Scope]]]:
        """``(value, the scope it is read in)`` for each binding of the called name that reaches
        the call, or of ``self.<attr>`` in the methods of its class; None for another callee."""
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            klass = enclosing_class(scope)
            info = self.ix.classes.get(klass.qualname) if klass is not None else None
            assigned = info.self_attr_values.get(func.attr, ()) if info is not None else ()
            return [(a.value, where) for a, where in assigned]
        if isinstance(func, ast.Name):
            owner, reached = self.ix.bindings_of(func, scope)
            return [(b.value, owner) for b in reached] if owner is not None else []
        return None

    def _builds(self, call: ast.expr, klass: Scope) -> bool:
        if not isinstance(call, ast.Call):
            return False
        func = call.func
        if not isinstance(func, ast.Name) or func.id != klass.qualname.rsplit(".", 1)[-1]:
            return False
        site = self.ix.call_of(call)
        owner = site.scope.lookup_scope(func.id) if site is not None else None
        return owner is not None and not owner.is_import(func.id) and owner is klass.parent

    # --- text ---------------------------------------------------------------------
    def _line(self, node: ast.AST) -> int:
        return self.ix.span(node).line

    def _short(self, node: ast.AST) -> str:
        text = self.ix.text(node)
        return text if len(text) <= 40 else text[:37] + "..."


def _made(value: ast.Call) -> ast.expr:
    """The constructor call under a module's moves (``Net(64).cuda()``, ``.to(device)``)."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _MOVES:
        value = value.func.value
    return value


def _real_literal(expr: ast.expr) -> bool:
    """An int or float literal: not a bool (``True`` is an int to Python), not a complex."""
    return isinstance(expr, ast.Constant) and type(expr.value) in (int, float)
