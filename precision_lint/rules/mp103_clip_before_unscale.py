"""MP103 clip-before-unscale: gradient clipping on loss-scaled gradients.

Under ``torch.amp.GradScaler`` the loss is multiplied by the scale (65536 at
start) before ``backward()``, so every gradient is that much too large until
``scaler.unscale_(opt)`` divides it back — which ``scaler.step(opt)`` does for
you, *after* your clip. ``clip_grad_norm_(params, max_norm=1.0)`` between the
two therefore measures a norm tens of thousands of times too large and scales
every gradient down to ``max_norm / scale``: nothing raises, the clip just acts
on the wrong numbers (after unscaling, the update is ``scale`` times smaller
than intended, and clipping never does what its threshold says). PyTorch's AMP
recipe calls ``scaler.unscale_(optimizer)`` right before clipping.

The fix inserts ``scaler.unscale_(<the optimizer of scaler.step>)`` before the
clip (or moves an ``unscale_`` that comes too late). It is safe:
``scaler.step`` skips its own unscale for an optimizer already unscaled, so the
only change is that the clip sees the real gradients.
"""
from __future__ import annotations

from typing import List, Optional

from ..diagnostics import SAFE, Edit, Fix, Related
from .base import Rule, RuleContext


def _prefix(short, long) -> bool:
    return tuple(long[: len(short)]) == tuple(short)


class ClipBeforeUnscale(Rule):
    code = "MP103"
    name = "clip-before-unscale"
    summary = "gradients clipped between `scaler.scale(loss).backward()` and `scaler.step(opt)` without `scaler.unscale_(opt)`"
    fix_availability = "sometimes"
    fix_applicability = SAFE

    def check(self, ctx: RuleContext):
        section = ctx.facts.section("clipping")
        if not section:
            return
        for scope in section["scopes"]:
            fixed_steps = set()
            for clip in (e for e in scope.events if e.kind == "clip"):
                finding = self._judge(ctx, scope, clip, fixed_steps)
                if finding is not None:
                    yield finding

    def _judge(self, ctx: RuleContext, scope, clip, fixed_steps):
        events = scope.events
        step = next((e for e in events if e.kind == "step" and e.at > clip.at), None)
        if step is None:
            return None
        scaler = step.scaler
        if scaler not in scope.scalers and not any(e.kind == "update" and e.scaler == scaler for e in events):
            return None  # not known to be a GradScaler
        backward = next(
            (
                e
                for e in events
                if e.kind == "backward"
                and e.scaler == scaler
                and (e.at < clip.at or set(e.loops) & set(clip.loops))
            ),
            None,
        )
        if backward is None:
            return None
        earlier = [e for e in events if e.kind == "unscale" and e.scaler == scaler and e.at < clip.at]
        if earlier:
            return None  # unscaled before (a branch of its own counts: not judged)
        update = next((e for e in events if e.kind == "update" and e.scaler == scaler and e.at > clip.at), None)
        steps = [e for e in events if e.kind == "step" and e.scaler == scaler and e.at > clip.at and (update is None or e.at < update.at)]
        optimizers: List[str] = []
        for s in steps:
            if s.arg_text not in optimizers:
                optimizers.append(s.arg_text)
        shown = " / ".join(f"`{scaler}.unscale_({o})`" for o in optimizers if o) or f"`{scaler}.unscale_(optimizer)`"
        message = (
            f"`{clip.arg_text}` clips gradients that are still multiplied by the loss scale "
            f"(`{scaler}.scale(...).backward()`, line {backward.span.line}): the threshold is compared with "
            f"scaled gradients, so the clip silently shrinks the update (to `max_norm / scale`) instead of "
            f"clipping it; call {shown} before it"
        )
        late = next((e for e in events if e.kind == "unscale" and e.scaler == scaler and clip.at < e.at < step.at), None)
        related = (
            Related(ctx.path, backward.span, "gradients scaled here"),
            Related(ctx.path, (late or step).span, "unscaled only here, after the clip"),
        )
        fix = None
        if step.at not in fixed_steps:
            fix = self._fix(scope, clip, scaler, optimizers, steps, events)
            if fix is not None:
                fixed_steps.add(step.at)
        return ctx.diagnostic(self.code, clip.span, message, fix, related)

    def _fix(self, scope, clip, scaler, optimizers, steps, events) -> Optional[Fix]:
        if clip.line is None or not optimizers or "" in optimizers:
            return None
        if not _prefix(steps[0].loops, clip.loops) or len(clip.loops) != len(steps[0].loops):
            return None  # a clip in a loop of its own: one unscale_ per step cannot go there
        line_start, _, indent = clip.line
        edits: List[Edit] = []
        late = [
            e for e in events if e.kind == "unscale" and e.scaler == scaler and clip.at < e.at < steps[-1].at
        ]
        for e in late:
            if e.line is None or e.arg_text not in optimizers:
                return None
            edits.append(Edit(e.line[0], e.line[1], ""))
        text = "".join(f"{indent}{scaler}.unscale_({o}){scope.newline}" for o in optimizers)
        edits.insert(0, Edit(line_start, line_start, text))
        verb = "Move" if late else "Insert"
        return Fix(SAFE, f"{verb} `{scaler}.unscale_(...)` before the clip", tuple(edits))
