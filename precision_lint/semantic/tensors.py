"""Which tensors and models may be float16, as values of the shared domain.

The evaluator (``evaluate.py``) answers what a *configuration* expression may be: a dtype, a
flag, a config value. This module answers the same question for the tensors and models a
training script computes with: may ``teacher(**batch).logits`` be float16, and why? The
answer is a tuple of :class:`~.values.Possible` atoms:

- ``HALF``: the value may be float16; ``value`` says why (``teacher.half()`` on line 12, a
  ``from_pretrained(torch_dtype=torch.float16)``, a forward pass under an fp16
  ``torch.autocast``, ``clip.load`` on CUDA) and ``origin`` points there;
- ``PARAM``: it is a parameter of the enclosing function, so its callers' arguments decide
  (the call records carry these values too, and the join substitutes them);
- ``RETURN``: it is what a function of another module returns (its summary, at the join).

Every atom carries the casts met on the way from its source: ``upcast`` (``.float()``,
``.to(torch.float32)``, a binary operation with an fp32 operand) and ``clamped`` (a two-sided
``clamp``/``nan_to_num``). The substitution at the join keeps them, so a parameter that a
helper upcasts stays upcast whatever its callers pass.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import ast

from .evaluate import Evaluator, param_ref
from .index import CallSite, ModuleIndex, Scope, element, keyword, positional, string_value, unstarred
from .values import CONST, HALF, PARAM, RETURN, SYMBOLIC, Possible, ReturnRef, dtypes
from .values import replace as replace_fields

# Text a module must contain to hold a float16 tensor source or a softmax over one (``dtype=``:
# a model made with a dtype that its callers or a config file choose; ``teacher``: a
# distillation step that passes a teacher's logits on to a loss elsewhere).

# The dtype each argument-less cast method gives a tensor or an ``nn.Module`` (in place).
CAST_METHODS = {"half": "float16", "bfloat16": "bfloat16", "float": "float32", "double": "float64"}
# Floating dtypes with float32's exponent range or more: -1e9 and 1e-8 fit, gradients unscale.
WIDE_DTYPES = frozenset({"float32", "float64", "bfloat16"})


def cast_dtypes(evaluator: Evaluator, call: ast.Call, method: Optional[str], scope: Scope) -> Optional[frozenset]:
    """The dtypes a call makes its tensor or model: ``x.float()`` {float32}, ``x.to(torch.float32)``
    / ``x.to(device, dtype=d)`` / ``x.type(d)`` every dtype ``d`` may be, ``torch.zeros_like(m,
    dtype=d)`` likewise; an empty set for a ``.to``/``.type`` that names no dtype (``.to(device)``).
    None when the call makes no dtype, or an argument naming one may be a dtype not known here."""
    if method in CAST_METHODS:
        return None if call.args or call.keywords else frozenset({CAST_METHODS[method]})
    if method in ("to", "type"):
        # every positional argument (a starred one's value too), `dtype=` and a `**kw` spread;
        # beside a `dtype=` a positional one is the device (`.to(accelerator.device,
        # dtype=torch.float32)`: torch's `to(device, dtype)`), never a dtype
        given = keyword(call, "dtype") if method == "to" else None
        named = [] if given is not None else [unstarred(a) for a in call.args]
        named += [k.value for k in call.keywords if k.arg is None or k.arg == "dtype"]
    else:
        given = keyword(call, "dtype")
        if given is None:
            return None
        named = [given.value]
    found = set()
    for expr in named:
        if not evaluator.mentions_dtype(expr, scope):
            continue
        these = {d.value for d in dtypes(evaluator.values(expr, scope))}
        if not these:
            return None
        found |= these
    if method not in ("to", "type") and not found:
        return None
    return frozenset(found)


SOFTMAX = frozenset({"torch.nn.functional.softmax", "torch.softmax", "torch.special.softmax"})
LOG_SOFTMAX = frozenset(
    {"torch.nn.functional.log_softmax", "torch.log_softmax", "torch.special.log_softmax"}
)
TORCH_CLAMP = frozenset({"torch.clamp", "torch.clip", "torch.nan_to_num"})
CLIP_LOAD = frozenset({"clip.load"})
AUTOCAST = frozenset(
    {"torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.amp.autocast_mode.autocast"}
)
# Context managers that do nothing: the other branch of `nullcontext() if cpu else autocast(...)`
NULL_CONTEXTS = frozenset({"contextlib.nullcontext", "contextlib.suppress"})


def _cpu_test(test: ast.expr) -> bool:
    """Whether a test chooses by the device: it names ``"cpu"`` or ``"cuda"``, a device's
    ``.type``, or asks ``torch.cuda.is_available()`` (``device == "cpu"``, ``dev.type != "cuda"``,
    ``not torch.cuda.is_available()``)."""
    return any(
        type(node) is ast.Constant and node.value in ("cpu", "cuda")
        or type(node) is ast.Attribute and node.attr in ("type", "is_available")
        for node in ast.walk(test)
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
_MAX_ACTIVE = 40


def half_tensors(index: ModuleIndex, evaluator: Evaluator) -> Optional["HalfTensors"]:
    """The module's tensor analysis, built once per module (its answers are worked out on demand)."""
    memo = evaluator.analyses
    if "tensors" not in memo:
        memo["tensors"] = HalfTensors(index, evaluator)
    return memo["tensors"]


def half(reason: str, origin) -> Possible:
    return Possible(HALF, reason, origin=origin)


def marked(values, upcast: bool = False, clamped: bool = False) -> List[Possible]:
    """``values`` with an upcast / a clamp between their sources and here."""
    return [
        v if (v.upcast or not upcast) and (v.clamped or not clamped)
        else replace_fields(v, upcast=v.upcast or upcast, clamped=v.clamped or clamped)
        for v in values
    ]


class HalfTensors:
    def __init__(self, index: ModuleIndex, evaluator: Evaluator) -> None:
        self.ix = index
        self.ev = evaluator
        self._memo: Dict[Tuple[int, int], Tuple[Possible, ...]] = {}
        self._active: set = set()
        # in-place casts as statements: (scope qualname, dotted receiver) → (reason, span)
        self.inplace: Dict[Tuple[str, str], List[Tuple[str, object]]] = {}
        for site in index.calls:
            if site.method in ("half", "to") and site.receiver is not None and _is_statement(site):
                name = _dotted_receiver(site.receiver)
                if not name:
                    continue
                if site.method == "half" or self._cast_dtype(site.node, site.scope) == "float16":
                    owner = site.klass if name.startswith("self.") and site.klass else self._owner(name, site.scope)
                    reason = f"`{index.text(site.node)}` (line {self._line(site.node)}) casts it to float16"
                    self.inplace.setdefault((owner, name), []).append((reason, index.span(site.node)))

    # --- public -----------------------------------------------------------------------
    def values(self, expr: Optional[ast.expr], scope: Scope) -> Tuple[Possible, ...]:
        """Where the tensor ``expr`` may come from: ``HALF``, ``PARAM`` and ``RETURN`` atoms."""
        if expr is None:
            return ()
        key = (id(expr), id(scope))
        if key in self._memo:
            return self._memo[key]
        if key in self._active or len(self._active) > _MAX_ACTIVE:
            return ()
        self._active.add(key)
        try:
            out = tuple(dict.fromkeys(self._values(expr, scope)))
        finally:
            self._active.discard(key)
        self._memo[key] = out
        return out

    def returned(self, function: Scope, position: Optional[int] = None) -> List[Possible]:
        """What ``function`` may return (``position``: one element of the tuple it returns)."""
        out: List[Possible] = []
        for value, _guards in function.returns:
            if position is not None:
                value = element(value, position)
            out.extend(self.values(value, function))
        return out

    def autocast_enabled(self, site: Optional[CallSite]) -> Optional[str]:
        """The dtype of the innermost autocast region around ``site`` that is certainly
        enabled (None: none; a region whose ``enabled=`` may be False does not count)."""
        if site is None:
            return None
        return self.autocast_enabled_at(site.contexts, site.context_items, site.scope)

    def autocast_enabled_at(self, contexts: Tuple[str, ...], items, scope: Scope) -> Optional[str]:
        """:meth:`autocast_enabled` for code under the ``with`` items ``items`` (qualified as
        ``contexts``) in ``scope``."""
        region = self.autocast_region(contexts, items, scope)
        return region[0] if region is not None else None

    def autocast_region(self, contexts: Tuple[str, ...], items, scope: Scope) -> Optional[Tuple[str, ast.expr]]:
        """The innermost certainly enabled autocast region around code under the ``with``
        items ``items``: (its dtype, its ``with`` item), or None. A region certainly switched
        off (``enabled=False``) inside it ends it: autocast makes nothing half there."""
        for qual, item in zip(reversed(contexts), reversed(items)):
            if type(item) is ast.Name:  # `amp = torch.autocast(...)` once, then `with amp:`
                qual, item = self._bound_context(item, scope) or (qual, item)
            if not (qual in AUTOCAST or qual.rsplit(".", 1)[-1] == "autocast") or "cpu" in qual:
                continue
            if isinstance(item, ast.Call):
                enabled = self.ev.kwarg_values(item, scope, "enabled")
                device = positional(item)[:1] or [k.value for k in item.keywords if k.arg == "device_type"]
                if (
                    enabled and all(v.kind == CONST and v.value is False for v in enabled)
                    and not (device and string_value(device[0]) == "cpu")
                ):
                    return None  # `with autocast(enabled=False):` inside an fp16 region
                if enabled is not None and any(v.kind == CONST and not v.value for v in enabled):
                    # `enabled=args.amp` that may be False protects nothing on the runs where
                    # it is (seed 003: the loss in fp16 because autocast was switched off)
                    continue
                dtype_values = self.ev.kwarg_values(item, scope, "dtype")
                if dtype_values is not None:
                    names = {v.value for v in dtypes(dtype_values)}
                    return ("float16" if "float16" in names or not names else sorted(names)[0]), item
                args = positional(item)
                if args and string_value(args[0]) == "cpu":
                    continue
            return "float16", item
        return None

    def _bound_context(self, name: ast.Name, scope: Scope) -> Optional[Tuple[str, ast.Call]]:
        """The context-manager call a ``with`` item's name holds (its one reaching binding), as
        ``(qualified callee, call)``: ``amp = torch.autocast("cuda", dtype=torch.float16)``. Of
        ``nullcontext() if device == "cpu" else torch.autocast(...)`` the autocast: the null
        branch is the CPU run's, and a GPU run is the one judged. Any other test may choose the
        null context on a GPU run: the region is not certainly there (None)."""
        from .queries import binding_scope, sole_binding

        binding = sole_binding(self.ix, name, scope)
        owner = binding_scope(name.id, scope)
        if binding is None or owner is None or binding.value is None:
            return None
        value = binding.value
        if type(value) is ast.IfExp:
            branches = [b for b in (value.body, value.orelse) if not self._null_context(b, owner)]
            if len(branches) != 1 or not _cpu_test(value.test):
                return None
            value = branches[0]
        if type(value) is not ast.Call:
            return None
        return self.ix.qualify(value.func, owner) or "", value

    def _null_context(self, expr: ast.expr, scope: Scope) -> bool:
        return type(expr) is ast.Call and self.ix.qualify(expr.func, scope) in NULL_CONTEXTS

    # --- helpers ----------------------------------------------------------------------
    def _line(self, node: ast.AST) -> int:
        return self.ix.span(node).line

    def _owner(self, name: str, scope: Scope) -> str:
        owner = scope.lookup_scope(name.split(".")[0])
        return (owner or scope.module_scope()).qualname

    def _cast_dtype(self, call: ast.Call, scope: Scope) -> Optional[str]:
        """The dtype a ``.to(...)`` / ``.type(...)`` call casts to, if it names one."""
        exprs = list(positional(call))
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

    def _created(self, call: ast.Call, scope: Scope) -> Optional[List[Possible]]:
        """A tensor or model made with ``torch_dtype=``/``dtype=``: a ``HALF`` atom when that
        may be float16 here, and the symbolic dtypes (a parameter, a config value) that the
        join turns into one; None when the call names no dtype."""
        for name in ("torch_dtype", "dtype"):
            sources = self.ev.kwarg(call, scope, name)
            if not sources:
                continue
            if not any(self.ev.passes_dtype(src.value, scope) or self.ev.may_carry(src.value, scope) for src in sources):
                return []  # `dtype=x.dtype`: neither a dtype nor a caller's or a config's value reaches it
            values = self.ev.kwarg_values(call, scope, name) or ()
            func = self.ix.text(call.func)
            func = func if len(func) <= 60 else "..." + func[-57:]
            reason = f"created by `{func}(...)` with `{name}={self.ix.text(sources[0].value)}` (line {self._line(call)})"
            span = self.ix.span(call)
            out: List[Possible] = []
            if any(v.value == "float16" for v in dtypes(values)) and any(
                self.ev.mentions_dtype(src.value, scope) for src in sources  # not `dtype=x.dtype`
            ):
                out.append(half(reason, span))
            out += [
                replace_fields(v, tensor_of=reason, origin=span)
                for v in values
                if v.kind in SYMBOLIC
            ]
            return out
        return None

    # --- where a value comes from -----------------------------------------------------
    def _values(self, expr: ast.expr, scope: Scope) -> List[Possible]:
        if isinstance(expr, ast.Name):
            return self._name(expr, scope)
        if isinstance(expr, ast.Attribute):
            if isinstance(expr.value, ast.Name) and expr.value.id == "self":
                return self._self_attr(expr, scope)
            return list(self.values(expr.value, scope))
        if isinstance(expr, ast.Subscript):
            return list(self.values(expr.value, scope))
        if isinstance(expr, ast.UnaryOp):
            return list(self.values(expr.operand, scope))
        if isinstance(expr, ast.BinOp):
            both = [*self.values(expr.left, scope), *self.values(expr.right, scope)]
            if any(v.upcast for v in both):  # type promotion: one fp32 tensor makes the result fp32
                both = marked(both, upcast=True)
            return both
        if isinstance(expr, ast.IfExp):
            return [*self.values(expr.body, scope), *self.values(expr.orelse, scope)]
        if isinstance(expr, ast.Call):
            return self._call(expr, scope)
        return []

    def _name(self, expr: ast.Name, scope: Scope) -> List[Possible]:
        owner, reached = self.ix.bindings_of(expr, scope)
        if owner is None:
            return []
        out: List[Possible] = [
            half(f"`{expr.id}`: {reason}", span) for reason, span in self.inplace.get((owner.qualname, expr.id), ())
        ]
        if expr.id in owner.params and owner.kind == "function":
            out.append(Possible(PARAM, param_ref(owner, expr.id)))
            default = owner.params[expr.id]
            if default is not None:
                out.extend(self.values(default, owner.parent or owner))
        for assignment in reached:
            value = assignment.value
            if value is None:
                continue
            if assignment.unpack_index is not None:
                out.extend(self._unpacked(value, assignment.unpack_index, owner))
                continue
            out.extend(self.values(value, owner))
        return out

    def _unpacked(self, value: ast.expr, position: int, scope: Scope) -> List[Possible]:
        """The ``position``-th name of ``a, b = value``: an element of a literal tuple, of
        what a local function returns, or the model of ``model, preprocess = clip.load(...)``."""
        item = element(value, position)
        if item is not None:
            return list(self.values(item, scope))
        if not isinstance(value, ast.Call):
            return []
        site = self.ix.call_of(value)
        if site is not None and site.qualname in CLIP_LOAD:
            return [half(self._clip_reason(value), self.ix.span(value))] if position == 0 else []
        function = self.local_function(value.func, scope)
        if function is not None:
            return self.returned(function, position)
        return list(self.values(value, scope))  # `logits, hidden = teacher(x)`: the model's outputs

    def local_function(self, func: ast.expr, scope: Scope) -> Optional[Scope]:
        """The function of this module a call runs: ``helper(...)`` or ``self.method(...)``."""
        if isinstance(func, ast.Name):
            owner = scope.lookup_scope(func.id)
            if owner is not None and not owner.is_import(func.id):
                return self.ix.functions.get(f"{owner.qualname}.{func.id}" if owner.qualname else func.id)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            klass = enclosing_class(scope)
            if klass is not None:
                return self.ix.functions.get(f"{klass.qualname}.{func.attr}")
        return None

    def _clip_reason(self, call: ast.Call) -> str:
        return f"`{self.ix.text(call)}` (line {self._line(call)}) returns a float16 model on CUDA"

    def _self_attr(self, expr: ast.Attribute, scope: Scope) -> List[Possible]:
        klass = enclosing_class(scope)
        info = self.ix.classes.get(klass.qualname) if klass is not None else None
        if info is None:
            return []
        name = expr.attr
        out = [half(f"`self.{name}`: {reason}", span) for reason, span in self.inplace.get((klass.qualname, f"self.{name}"), ())]
        for assignment, method_scope in info.self_attr_values.get(name, []):
            out.extend(self.values(assignment.value, method_scope))
        return out

    def _call(self, expr: ast.Call, scope: Scope) -> List[Possible]:
        ix = self.ix
        site = ix.call_of(expr)
        qual = site.qualname if site is not None else ix.qualify(expr.func)
        func = expr.func
        # --- functions of torch and friends
        if qual in TORCH_CLAMP:
            args = positional(expr)
            inner = self.values(args[0], scope) if args else ()
            return marked(inner, clamped=qual == "torch.nan_to_num" or _two_sided(expr, 1))
        if qual in CLIP_LOAD:
            return [half(self._clip_reason(expr), ix.span(expr))]
        if qual in SOFTMAX or qual in LOG_SOFTMAX:
            args = positional(expr)
            return list(self.values(args[0], scope)) if args else []
        made = self._created(expr, scope)
        if made:
            return made
        # --- methods on a value
        if isinstance(func, ast.Attribute) and (qual is None or not qual.startswith(("torch.", "transformers."))):
            return self._method(expr, func, scope)
        # --- a local function: what it returns
        if isinstance(func, ast.Name):
            owner = scope.lookup_scope(func.id)
            if owner is not None and not owner.is_import(func.id):
                qualname = f"{owner.qualname}.{func.id}" if owner.qualname else func.id
                if qualname in ix.functions:
                    return self.returned(ix.functions[qualname])
                if qualname in ix.classes:
                    return []
                # a variable holding a model: its outputs have its weights' dtype
                return self._model_output(expr, self.values(func, scope))
            if qual is None:  # defined elsewhere (a notebook cell, a star import): still autocast's
                return self._model_output(expr, [])
            if not qual.startswith(LIBRARIES):  # `from helpers import load_teacher`
                returned = ReturnRef(qual, args=self.ev.call_arguments(expr, scope))
                return self._model_output(expr, [Possible(RETURN, returned)])
            return []
        if isinstance(func, ast.Call):  # `AutoModel.from_pretrained(...).half()(x)`
            return self._model_output(expr, self.values(func, scope))
        return []

    def _method(self, expr: ast.Call, func: ast.Attribute, scope: Scope) -> List[Possible]:
        ix = self.ix
        method = func.attr
        receiver = func.value
        if isinstance(receiver, ast.Name) and receiver.id == "self":
            function = self.local_function(func, scope)
            if function is not None:
                return self.returned(function)
            return self._model_output(expr, self._self_attr(func, scope))
        if method in UPCAST_METHODS:
            return marked(self.values(receiver, scope), upcast=True)
        if method == "half":
            return [half(f"`{ix.text(expr)}` (line {self._line(expr)}) casts to float16", ix.span(expr))]
        if method in ("to", "type"):
            dtype = self._cast_dtype(expr, scope)
            if dtype == "float16":
                return [half(f"`{ix.text(expr)}` (line {self._line(expr)}) casts to float16", ix.span(expr))]
            if dtype == "float32":
                return marked(self.values(receiver, scope), upcast=True)
            if dtype == "bfloat16":
                return []
            return list(self.values(receiver, scope))
        if method in CLAMP_METHODS:
            return marked(self.values(receiver, scope), clamped=method.startswith("nan_to_num") or _two_sided(expr, 0))
        if method in TRANSPARENT:
            return list(self.values(receiver, scope))
        if method in MODEL_METHODS:
            return self._model_output(expr, self.values(receiver, scope))
        return []

    def _model_output(self, call: ast.Call, model) -> List[Possible]:
        out = list(model)
        if self.autocast_enabled(self.ix.call_of(call)) == "float16":
            out.append(
                half(
                    f"`{self.ix.text(call.func)}(...)` runs under torch.autocast (line "
                    f"{self._line(call)}), which returns float16 logits",
                    self.ix.span(call),
                )
            )
        return out


def _is_statement(site: CallSite) -> bool:
    stmt = site.statement  # the innermost simple statement around the call
    return isinstance(stmt, ast.Expr) and stmt.value is site.node


def enclosing_class(scope: Scope) -> Optional[Scope]:
    s: Optional[Scope] = scope
    while s is not None:
        if s.kind == "class":
            return s
        s = s.parent
    return None


def _two_sided(call: ast.Call, first: int) -> bool:
    """``clamp(x, lo, hi)`` / ``x.clamp(lo, hi)`` / ``min=`` and ``max=``: both bounds given."""
    args = positional(call)
    bounds = len(args) - first
    names = {k.arg for k in call.keywords if k.arg is not None}
    return bounds >= 2 or (bounds >= 1 and "max" in names) or {"min", "max"} <= names


def _dotted_receiver(node: ast.expr) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None
