"""The training state of a model at the place its weights get a dtype: order matters.

A model's parameters are trained by what runs *after* it is made: ``Trainer(model=model)``
written before ``model = AutoPeftModel.from_pretrained(out, dtype=torch.float16)`` (a merge
after training, in the same function) trains the earlier model, not this one. And a freeze
holds only until something re-enables it: ``unet.requires_grad_(False)`` followed by
``unet.requires_grad_(True)`` (or ``p.requires_grad = True`` over its parameters) leaves the
parameters trainable, so a later cast to ``weight_dtype`` makes *trainable* weights float16.

``.parameters()`` after a freeze does not re-enable anything (a LoRA script hands
``filter(lambda p: p.requires_grad, unet.parameters())`` — the adapters — to the optimizer).
"""
from __future__ import annotations

from typing import Iterable, Optional, Tuple

import libcst as cst

from .index import ModuleIndex, Scope
from .names import dotted


def runs_before(index: ModuleIndex, node: cst.CSTNode, node_scope: Scope, made: Optional[cst.CSTNode], made_scope: Scope) -> bool:
    """Whether ``node`` (code of ``node_scope``) is written before ``made``, the call that makes
    a new model, in the same scope: it ran before that model existed (loops aside), so it does
    not use it."""
    if made is None or node_scope is not made_scope:
        return False
    if id(node) not in index.order_of or id(made) not in index.order_of:
        return False
    return index.order(node)[0] < index.order(made)[0]


def _flag(node: cst.Call) -> Optional[bool]:
    """``requires_grad_(False)`` → False; ``requires_grad_(True)`` / ``requires_grad_()`` → True."""
    if not node.args:
        return True
    arg = node.args[0].value
    if isinstance(arg, cst.Name) and arg.value in ("True", "False"):
        return arg.value == "True"
    return None


def freeze_events(index: ModuleIndex, names: Tuple[str, ...]) -> Iterable[Tuple[int, bool, str]]:
    """``(order, trainable, what)`` for each ``requires_grad_`` call on one of ``names`` and
    each ``p.requires_grad = …`` in a loop over their parameters, in source order."""
    out = []
    for site in index.calls:
        if site.method == "requires_grad_" and site.receiver is not None and dotted(site.receiver) in names:
            flag = _flag(site.node)
            if flag is not None:
                out.append((index.order(site.node)[0], flag, f"`{dotted(site.receiver)}.requires_grad_({flag})`"))
        elif site.method == "requires_grad_" and site.loops and site.node.args:
            flag = _flag(site.node)
            owner = _loop_owner(site.loops, names)
            if flag is not None and owner:
                out.append((index.order(site.node)[0], flag, f"parameters of `{owner}` set to requires_grad_({flag})"))
    for assign in index.attr_assigns:
        if assign.target.attr.value != "requires_grad" or not isinstance(assign.value, cst.Name):
            continue
        if assign.value.value not in ("True", "False"):
            continue
        owner = _loop_owner(assign.loops, names)
        if owner and id(assign.target) in index.order_of:
            flag = assign.value.value == "True"
            out.append((index.order(assign.target)[0], flag, f"parameters of `{owner}` set to requires_grad={flag}"))
    return sorted(out, key=lambda e: e[0])


def _loop_owner(loops, names: Tuple[str, ...]) -> str:
    for loop in loops:
        it = loop.iter
        if (
            isinstance(it, cst.Call)
            and isinstance(it.func, cst.Attribute)
            and it.func.attr.value in ("parameters", "named_parameters")
            and dotted(it.func.value) in names
        ):
            return dotted(it.func.value) or ""
    return ""


def frozen_at_end(index: ModuleIndex, names: Tuple[str, ...], after: int = -1) -> str:
    """Why the model is frozen once the code has run: the last freeze, unless a later
    ``requires_grad_(True)`` re-enabled it ("" when it ends trainable or nothing freezes it).
    ``after``: only events later than this pre-order number count (a model made there)."""
    last = ""
    for at, trainable, what in freeze_events(index, names):
        if at > after:
            last = "" if trainable else what
    return last


SAVES = ("save_pretrained", "save_model", "push_to_hub", "save", "save_file", "save_state_dict", "export")
TRAINING_CALLS = ("train", "fit", "backward", "step", "manual_backward", "training_step")


def save_time_cast(index: ModuleIndex, names: Tuple[str, ...], cast: cst.Call, scope: Scope) -> str:
    """Why a cast of a model is an export, not training: in its scope, the model is saved after
    the cast (``model.half().save_pretrained(out)``, ``torch.save(model.state_dict(), p)``) and
    nothing trains after it (no ``.train()``, ``.fit()``, backward pass or optimizer step). A
    float16 export after training never has its gradients unscaled; "" otherwise."""
    if id(cast) not in index.order_of:
        return ""
    at = index.order(cast)[0]
    saved = trains_after = False
    for site in index.calls:
        if site.scope.code_scope() is not scope or id(site.node) not in index.order_of:
            continue
        first, last = index.order(site.node)
        method = site.method or (site.qualname or "").rsplit(".", 1)[-1]
        if first <= at < last and site.node is not cast:
            # `torch.save(model.half().state_dict(), p)`: the cast made for the save around it
            saved = saved or method in SAVES
            continue
        if first <= at:
            continue
        if method in TRAINING_CALLS or (site.qualname or "").rsplit(".", 1)[-1].endswith("Trainer"):
            trains_after = True
            break
        if method in SAVES and _mentions(site, names, cast):
            saved = True
    return "cast for saving after training (nothing trains after it)" if saved and not trains_after else ""


def _mentions(site, names: Tuple[str, ...], cast: cst.Call) -> bool:
    """Whether a save call is on the model: its receiver, or an argument, is one of ``names``
    (or ``names[i].state_dict()``), or the cast itself heads its chain."""
    node = site.receiver
    while isinstance(node, cst.Call):
        if node is cast:
            return True
        node = node.func.value if isinstance(node.func, cst.Attribute) else None
    if node is not None and dotted(node) in names:
        return True
    for arg in site.node.args:
        value = arg.value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
            value = value.func.value  # `model.state_dict()`
        if dotted(value) in names:
            return True
    return False


NO_GRAD = ("no_grad", "inference_mode")


def no_grad_function(scope: Scope) -> str:
    """The ``@torch.no_grad()`` / ``@torch.inference_mode()`` decorator of the function whose
    code ``scope`` is, or of a function around it ("" when none): nothing in it builds a graph,
    so no gradient of a model made or called there is ever unscaled."""
    while scope is not None and scope.kind != "module":
        node = scope.node
        for decorator in getattr(node, "decorators", ()):
            expr = decorator.decorator
            if isinstance(expr, cst.Call):
                expr = expr.func
            name = dotted(expr) or ""
            if name.rsplit(".", 1)[-1] in NO_GRAD:
                return f"@{name}()" if isinstance(decorator.decorator, cst.Call) else f"@{name}"
        scope = scope.parent
    return ""


def without_grad(site) -> bool:
    """Whether a call runs with gradients off: inside ``with torch.no_grad()`` /
    ``inference_mode()``, or in a function decorated with one."""
    if any(c.rsplit(".", 1)[-1] in NO_GRAD for c in site.contexts):
        return True
    return bool(no_grad_function(site.scope.code_scope()))
