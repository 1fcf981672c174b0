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
