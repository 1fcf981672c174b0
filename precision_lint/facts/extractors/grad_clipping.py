"""Facts about gradient clipping in a GradScaler loop (read by MP103).

Recorded per function (or module code), in source order, unjudged: the events of
a loss-scaled optimizer step — ``scaler.scale(loss).backward()``,
``torch.nn.utils.clip_grad_norm_/clip_grad_value_(...)``,
``scaler.unscale_(opt)``, ``scaler.step(opt)`` and ``scaler.update()`` — with the
``if`` branches and loops each runs under (as source positions, so a rule can
compare them) and what a fix needs to insert or move a statement.
"""
from __future__ import annotations

from ..._dataclass import dataclass
from typing import Dict, List, Optional, Tuple

import ast

from ...diagnostics import Span
from ...semantic.evaluate import Evaluator
from ...semantic.index import CallSite, ModuleIndex, keyword, positional
from ...semantic.names import dotted
from ...semantic.queries import position, reaching_at, sole_binding
from .precision import GRAD_SCALERS

SECTION = "clipping"
EMPTY = {"scopes": ()}

CLIPS = {
    "torch.nn.utils.clip_grad_norm_": "clip_grad_norm_",
    "torch.nn.utils.clip_grad_norm": "clip_grad_norm",
    "torch.nn.utils.clip_grad_value_": "clip_grad_value_",
    "torch.nn.utils.clip_grad.clip_grad_norm_": "clip_grad_norm_",
    "torch.nn.utils.clip_grad.clip_grad_value_": "clip_grad_value_",
}
SCALER_METHODS = ("unscale_", "step", "update")


@dataclass(frozen=True)
class StepEvent:
    """One step of a loss-scaled update (backward, clip, unscale, step, update) in source order,
    with the branches and loops it runs under: MP103 compares their order, and a fix moves or
    inserts whole statements, so each keeps the line it stands on."""

    kind: str  # "backward", "clip", "unscale", "step", "update"
    scaler: str  # the scaler's text (`scaler`, `self.scaler`); "" for a clip
    at: int  # source order
    span: Span  # the call
    guards: Tuple[Tuple[int, bool], ...]  # (source order of the `if` test, branch)
    loops: Tuple[int, ...]  # source order of the enclosing for-loops
    arg_text: str = ""  # the optimizer passed to unscale_/step; the clip's name for a clip
    # the statement holding the call, when it stands alone on its own line(s):
    # (offset of its line's start, offset after its line break, indentation)
    line: Optional[Tuple[int, int, str]] = None


@dataclass(frozen=True)
class ScopeEvents:
    """The step events of one function (or of module code), in order, with the receivers known
    to be GradScalers: order only means something inside one scope."""

    scope: str
    events: Tuple[StepEvent, ...]
    scalers: Tuple[str, ...]  # receivers known to be a GradScaler (bound to a GradScaler call)
    newline: str


def _own_line(index: ModuleIndex, site: CallSite) -> Optional[Tuple[int, int, str]]:
    stmt = site.statement
    if stmt is None:
        return None
    first, last = index.order(stmt)
    if not first <= index.order(site.node)[0] < last:
        return None  # the call is not in this statement
    span = index.statement_span(stmt)
    source = index.source
    line_start = source.rfind("\n", 0, span.start) + 1
    indent = source[line_start : span.start]
    if indent.strip():
        return None  # `if x: clip(...)`, `a = 1; clip(...)`: the line holds more than the call
    after = source.find("\n", span.end)
    end = len(source) if after < 0 else after + 1
    rest = source[span.end : end].strip()
    if rest.startswith(";"):
        rest = rest[1:].strip()
    if rest and not rest.startswith("#"):
        return None  # `clip(...); x = 1`: another statement on its line
    return (line_start, end, indent)


def _scale_receiver(index: ModuleIndex, site: CallSite) -> Optional[str]:
    """``scaler`` for ``scaler.scale(loss).backward()`` (or ``s = scaler.scale(loss); s.backward()``)."""
    receiver = site.receiver
    if isinstance(receiver, ast.Name):
        binding = sole_binding(index, receiver, site.scope)
        if binding is not None and isinstance(binding.value, ast.Call):
            receiver = binding.value
    if not isinstance(receiver, ast.Call):
        return None
    made = index.call_of(receiver)
    if made is None or made.method != "scale" or made.receiver is None:
        return None
    return dotted(made.receiver)


def _is_grad_scaler(index: ModuleIndex, text: str, site: CallSite) -> bool:
    head, _, rest = text.partition(".")
    if head == "self" and rest and site.klass in index.classes:
        values = [a.value for a, _ in index.classes[site.klass].self_attr_values.get(rest, [])]
    elif not rest:
        values = [b.value for b in reaching_at(index, head, site.scope, position(index, site.node)).bindings]
    else:
        return False
    for value in values:
        if isinstance(value, ast.Call):
            made = index.call_of(value)
            if made is not None and made.qualname in GRAD_SCALERS:
                return True
    return False


def extract(index: ModuleIndex, evaluator: Evaluator):
    by_scope: Dict[str, List[StepEvent]] = {}
    scalers: Dict[str, set] = {}
    for site in index.calls:
        kind = scaler = None
        arg_text = ""
        if site.qualname in CLIPS:
            kind, scaler, arg_text = "clip", "", CLIPS[site.qualname]
        elif site.method == "backward":
            scaler = _scale_receiver(index, site)
            kind = "backward" if scaler else None
        elif site.method in SCALER_METHODS and site.receiver is not None and dotted(site.receiver):
            scaler = dotted(site.receiver)
            kind = {"unscale_": "unscale", "step": "step", "update": "update"}[site.method]
            args = positional(site.node)
            if kind != "update" and args:
                arg_text = index.text(args[0])
            elif kind != "update":
                optimizer = keyword(site.node, "optimizer")
                arg_text = index.text(optimizer.value) if optimizer is not None else ""
        if kind is None:
            continue
        scope = site.scope.code_scope().qualname
        guards = tuple((index.order(test)[0], branch) for test, branch in site.guards)
        loops = tuple(index.order(loop.iter)[0] for loop in site.loops)
        line = _own_line(index, site) if kind in ("clip", "unscale") else None
        by_scope.setdefault(scope, []).append(
            StepEvent(kind, scaler or "", index.order(site.node)[0], index.span(site.node), guards, loops, arg_text, line)
        )
        if scaler and _is_grad_scaler(index, scaler, site):
            scalers.setdefault(scope, set()).add(scaler)
    newline = "\r\n" if "\r\n" in index.source[:2000] else "\n"
    out = []
    for scope, events in by_scope.items():
        if not any(e.kind == "clip" for e in events):
            continue
        events.sort(key=lambda e: e.at)
        out.append(ScopeEvents(scope, tuple(events), tuple(sorted(scalers.get(scope, ()))), newline))
    return {"scopes": tuple(out)}
