"""Facts about gradient clipping in a GradScaler loop (read by MP103).

Recorded per function (or module code), in source order, unjudged: the events of
a loss-scaled optimizer step — ``scaler.scale(loss).backward()``,
``torch.nn.utils.clip_grad_norm_/clip_grad_value_(...)``,
``scaler.unscale_(opt)``, ``scaler.step(opt)`` and ``scaler.update()`` — with the
``if`` branches and loops each runs under (as source positions, so a rule can
compare them) and what a fix needs to insert or move a statement.

Accelerate hides the scaler: ``accelerator.backward(loss)`` is ``scaler.scale(loss).backward()``
under fp16, ``accelerator.unscale_gradients()`` its ``unscale_``, and the prepared optimizer's
``step()`` its ``scaler.step``. Those are events too (the receiver an ``Accelerator`` by how it
is made, ``semantic/kinds.py``), with the ``Accelerator(...)`` calls that make it, whose
precision the rule reads.
"""
from __future__ import annotations

from ..._dataclass import dataclass
from typing import Dict, List, Optional, Tuple

import ast
import dataclasses

from ...diagnostics import Span
from ...semantic.evaluate import Evaluator
from ...semantic.index import CallSite, ModuleIndex, keyword, positional
from ...semantic.kinds import made_instances
from ...semantic.names import dotted
from ...semantic.queries import position, reaching_at, sole_binding
from ...semantic.values import CONST, SYMBOLIC, Possible
from .precision import ACCELERATORS, GRAD_SCALERS

SECTION = "clipping"
EMPTY = {"scopes": ()}

# FSDP's own clip: a method of the wrapped module (`model.clip_grad_norm_(1.0)`)
FSDP_CLIPS = frozenset({"clip_grad_norm_"})
FSDP_CLASSES = frozenset({
    "torch.distributed.fsdp.FullyShardedDataParallel",
    "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel",
})
CLIPS = {
    "torch.nn.utils.clip_grad_norm_": "clip_grad_norm_",
    "torch.nn.utils.clip_grad_norm": "clip_grad_norm",
    "torch.nn.utils.clip_grad_value_": "clip_grad_value_",
    "torch.nn.utils.clip_grad.clip_grad_norm_": "clip_grad_norm_",
    "torch.nn.utils.clip_grad.clip_grad_value_": "clip_grad_value_",
}
SCALER_METHODS = ("unscale_", "step", "update")
# An `Accelerator(...)` given one of these scales no loss with torch's GradScaler (DeepSpeed keeps
# its own scaler; FSDP's sharded one, Megatron-LM's own): its precision is not read here.
OTHER_SCALING = ("deepspeed_plugin", "fsdp_plugin", "megatron_lm_plugin")


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
    # a clip that runs only where `accelerator.sync_gradients` holds (once per optimizer step)
    synced: bool = False
    # for a clip, what a fix that calls another clip in its place needs: where its callee ends,
    # how many positional arguments it passes (-1 for a `*args`) and its keywords ("**" for a
    # `**kwargs`)
    callee_end: int = 0
    positionals: int = 0
    keywords: Tuple[str, ...] = ()
    # for a clip, the tests around it whose values the join decides (a configuration file's key,
    # `if cfg["training"]["clip_grad_norm"]:`), each with the branch the clip is in: where every
    # value of one fails it, the clip never runs (``never_runs``)
    conditions: Tuple[Tuple[Tuple[Possible, ...], bool], ...] = ()

    def never_runs(self) -> bool:
        """Whether a test around the clip fails for every value the join gave it."""
        return any(
            values and all(v.kind == CONST and bool(v.value) != branch for v in values)
            for values, branch in self.conditions
        )


@dataclass(frozen=True)
class ScopeEvents:
    """The step events of one function (or of module code), in order, with the receivers known
    to be GradScalers: order only means something inside one scope."""

    scope: str
    events: Tuple[StepEvent, ...]
    scalers: Tuple[str, ...]  # receivers known to be a GradScaler (bound to a GradScaler call)
    newline: str
    # receivers known to be an accelerate `Accelerator`, each with the offsets of the
    # `Accelerator(...)` calls of this module that make it (the precision sites' spans)
    accelerators: Tuple[Tuple[str, Tuple[int, ...]], ...] = ()


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


def _on_fsdp(index: ModuleIndex, site: CallSite) -> bool:
    """Whether a call's receiver is a module wrapped by FSDP (``FSDP(model)``, made in this
    module): its own ``clip_grad_norm_(max_norm)`` clips the gradients as they are, scaled by a
    ``ShardedGradScaler`` until ``unscale_`` (torch's FSDP docs: unscale first)."""
    made = made_instances(index, site.receiver, site.scope, site.klass) if site.receiver is not None else ()
    return any(q in FSDP_CLASSES for q, _ in made)


def _accelerator_calls(index: ModuleIndex, site: CallSite) -> Optional[Tuple[int, ...]]:
    """For a call on an ``Accelerator`` (``accelerator.backward(loss)``): the offsets of the
    ``Accelerator(...)`` calls of this module that make its receiver (() where it is one made
    elsewhere); None when the receiver is not known to be one."""
    if site.receiver is None:
        return None
    made = made_instances(index, site.receiver, site.scope, site.klass)
    if not any(q in ACCELERATORS for q, _ in made):
        return None
    return tuple(sorted({
        index.span(call).start for q, call in made
        if q in ACCELERATORS and call is not None and not any(k.arg in OTHER_SCALING for k in call.keywords)
    }))


def _synced(index: ModuleIndex, site: CallSite) -> bool:
    """Whether a call runs only where ``accelerator.sync_gradients`` holds (``if
    accelerator.sync_gradients:``, also joined with ``and``): once per optimizer step."""
    for test, branch in site.guards:
        parts = test.values if type(test) is ast.BoolOp and type(test.op) is ast.And else [test]
        if branch and any(type(p) is ast.Attribute and p.attr == "sync_gradients" for p in parts):
            return True
    return False


def _joined_conditions(evaluator: Evaluator, site: CallSite) -> Tuple[Tuple[Tuple[Possible, ...], bool], ...]:
    """The tests around ``site`` that read a value the join decides (a configuration file's key,
    a parameter), each as (its values, the branch ``site`` is in)."""
    out = []
    for test, branch in site.guards:
        if isinstance(test, (ast.Name, ast.Attribute, ast.Subscript)):
            values = tuple(evaluator.values(test, site.scope))
            if any(v.kind in SYMBOLIC for v in values):
                out.append((values, branch))
    return tuple(out)


def extract(index: ModuleIndex, evaluator: Evaluator):
    by_scope: Dict[str, List[StepEvent]] = {}
    scalers: Dict[str, set] = {}
    accelerators: Dict[str, Dict[str, Tuple[int, ...]]] = {}
    for site in index.calls:
        kind = scaler = None
        arg_text = ""
        if site.qualname in CLIPS:
            kind, scaler, arg_text = "clip", "", CLIPS[site.qualname]
        elif site.method in FSDP_CLIPS and _on_fsdp(index, site):
            kind, scaler, arg_text = "clip", "", site.method
        elif site.method in ("backward", "unscale_gradients") and (made := _accelerator_calls(index, site)) is not None:
            scaler = dotted(site.receiver)
            kind = ("backward" if site.method == "backward" else "unscale") if scaler else None
            if scaler:
                accelerators.setdefault(site.scope.code_scope().qualname, {})[scaler] = made
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
        if kind is None or evaluator.dead(site.guards, site.scope):
            continue  # a step no run takes (`if mode == "amp":` of `mode = "fp32"`) orders nothing
        scope = site.scope.code_scope().qualname
        guards = tuple((index.order(test)[0], branch) for test, branch in site.guards)
        loops = tuple(index.order(loop.iter)[0] for loop in site.loops)
        line = _own_line(index, site) if kind in ("clip", "unscale") else None
        event = StepEvent(kind, scaler or "", index.order(site.node)[0], index.span(site.node), guards, loops, arg_text, line)
        if kind == "clip":
            call = site.node
            event = dataclasses.replace(
                event,
                synced=_synced(index, site),
                callee_end=index.span(call.func).end,
                positionals=-1 if any(type(a) is ast.Starred for a in call.args) else len(call.args),
                keywords=tuple(k.arg or "**" for k in call.keywords),
                conditions=_joined_conditions(evaluator, site),
            )
        by_scope.setdefault(scope, []).append(event)
        if scaler and _is_grad_scaler(index, scaler, site):
            scalers.setdefault(scope, set()).add(scaler)
    newline = "\r\n" if "\r\n" in index.source[:2000] else "\n"
    out = []
    for scope, events in by_scope.items():
        if not any(e.kind == "clip" for e in events):
            continue
        events.sort(key=lambda e: e.at)
        made = tuple(sorted(accelerators.get(scope, {}).items()))
        out.append(ScopeEvents(scope, tuple(events), tuple(sorted(scalers.get(scope, ()))), newline, made))
    return {"scopes": tuple(out)}
