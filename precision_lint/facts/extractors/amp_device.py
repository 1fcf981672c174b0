"""Facts about device-generic AMP entry points called without the device (read by MP306).

``torch.cuda.amp.autocast(...)`` knew its device; ``torch.amp.autocast`` and ``torch.autocast``
take it as their first parameter, ``device_type``, which has no default, and
``torch.amp.custom_fwd`` / ``custom_bwd`` (torch 2.4) as a required keyword. A call that moved to
the generic name and kept the old arguments (``torch.amp.autocast(enabled=use_amp)``, what a
migration from the deprecated spelling easily writes) raises on every torch::

    TypeError: autocast.__init__() missing 1 required positional argument: 'device_type'
    TypeError: custom_fwd() missing 1 required keyword-only argument: 'device_type'

Recorded: each such call (no positional argument, no ``device_type=``, nothing spread into it:
``*args`` / ``**kw`` may carry it) and each bare ``@torch.amp.custom_fwd`` decorator, with where a
fix inserts the device. Whether the module's code uses CUDA (the device a fix may assume) is the
capability facts' ``cuda_code``.
"""
from __future__ import annotations

import ast

from ..._dataclass import dataclass
from ...diagnostics import Span
from ...semantic.evaluate import Evaluator
from ...semantic.index import FUNCTION_DEFS, ModuleIndex
from .precision import after_open_paren

SECTION = "amp_device"
EMPTY = {"calls": ()}

AUTOCASTS = frozenset({"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast"})
DECORATORS = frozenset({"torch.amp.custom_fwd", "torch.amp.custom_bwd", "torch.amp.autocast_mode.custom_fwd", "torch.amp.autocast_mode.custom_bwd"})


@dataclass(frozen=True)
class DevicelessCall:
    """``torch.amp.autocast(enabled=...)`` (``kind`` "autocast") or ``torch.amp.custom_fwd(...)`` /
    a bare ``@torch.amp.custom_fwd`` ("decorator"), with no device."""

    kind: str
    written: str  # the callee as written (`torch.amp.autocast`, `autocast`)
    span: Span  # the call, or the decorator's name
    insert_at: int  # after the call's `(`; for a bare decorator, after its name
    bare: bool  # a decorator written without a call
    empty: bool  # no argument at all: nothing follows what is inserted


def extract(index: ModuleIndex, evaluator: Evaluator):
    calls = []
    for site in index.calls:
        kind = "autocast" if site.qualname in AUTOCASTS else "decorator" if site.qualname in DECORATORS else None
        if kind is None or evaluator.dead(site.guards, site.scope):
            continue
        node = site.node
        if node.args or any(kw.arg is None or kw.arg == "device_type" for kw in node.keywords):
            continue
        calls.append(DevicelessCall(kind, index.text(node.func), index.span(node), after_open_paren(index, node), False, not node.keywords))
    for scope in index.functions.values():
        node = scope.node
        if not isinstance(node, FUNCTION_DEFS):
            continue
        for decorator in node.decorator_list:
            if isinstance(decorator, (ast.Name, ast.Attribute)) and index.qualify(decorator) in DECORATORS:
                span = index.span(decorator)
                calls.append(DevicelessCall("decorator", index.text(decorator), span, span.end, True, True))
    return {"calls": tuple(sorted(calls, key=lambda c: c.span.start))}

