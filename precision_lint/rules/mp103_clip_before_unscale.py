"""MP103 clip-before-unscale: gradient clipping on loss-scaled gradients.

Under ``torch.amp.GradScaler`` the loss is multiplied by the scale (65536 at
start) before ``backward()``, so every gradient is that much too large until
``scaler.unscale_(opt)`` divides it back — which ``scaler.step(opt)`` does for
you, *after* your clip. ``clip_grad_norm_(params, max_norm=1.0)`` between the
two therefore measures a norm tens of thousands of times too large and scales
every gradient down to ``max_norm / scale``: nothing raises, the clip just acts
on the wrong numbers (after unscaling, the update is ``scale`` times smaller
than intended, and clipping never does what its threshold says). PyTorch's AMP
recipe calls ``scaler.unscale_(optimizer)`` right before clipping. FSDP's own
clip (``FSDP(model).clip_grad_norm_(max_norm)``, under a ``ShardedGradScaler``)
clips the gradients as they are, scaled the same way.

The fix inserts ``scaler.unscale_(<the optimizer of scaler.step>)`` before the
clip (or moves an ``unscale_`` that comes too late). It is safe:
``scaler.step`` skips its own unscale for an optimizer already unscaled, so the
only change is that the clip sees the real gradients.

Under Accelerate the scaler is the ``Accelerator``'s: with fp16 and no DeepSpeed
or FSDP (``Accelerator(mixed_precision="fp16")``, or the ``accelerate launch
--mixed_precision fp16`` the project ships), ``accelerator.backward(loss)`` is
``scaler.scale(loss).backward()``, and the prepared optimizer's ``step()``
unscales. A torch clip between them clips scaled gradients the same way;
``accelerator.clip_grad_norm_`` unscales first. Its fix (unsafe: under DeepSpeed
``accelerator.clip_grad_norm_`` leaves clipping to DeepSpeed's config) is
offered only for a clip under ``if accelerator.sync_gradients:``: it unscales,
and an unscale on every accumulation micro-step raises ``RuntimeError:
unscale_() has already been called on this optimizer since the last update().``
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from ..diagnostics import SAFE, UNSAFE, Edit, Fix, Related
from ..project.configurations import builds_in, configurations
from ..project.options import BY_HAND
from .base import Rule, RuleContext
from .mp101_fp16_weights_under_loss_scaling import scaling_reason

# The keywords `accelerator.clip_grad_norm_` / `clip_grad_value_` take (accelerate 0.15 to
# 1.15): torch's `error_if_nonfinite=` and `foreach=` are not among them.
ACCELERATE_CLIPS = {
    "clip_grad_norm_": ("clip_grad_norm_", ("parameters", "max_norm", "norm_type")),
    "clip_grad_norm": ("clip_grad_norm_", ("parameters", "max_norm", "norm_type")),
    "clip_grad_value_": ("clip_grad_value_", ("parameters", "clip_value")),
}


def _prefix(short, long) -> bool:
    return tuple(long[: len(short)]) == tuple(short)



# What clipping scaled gradients does (the scale starts at 65536): the clip fires on nearly every
# step and leaves gradients of norm `max_norm / scale` once unscaled. SGD's update shrinks by the
# scale; an Adam-family optimizer divides the common factor out again (while eps stays below the
# gradients), so its steps become normalised-gradient steps: the threshold bounds nothing.
EFFECT = (
    "the clip fires on nearly every step and leaves gradients of norm `max_norm / scale` once unscaled "
    "(SGD's update shrinks by the scale; with Adam the step survives, but the threshold bounds nothing "
    "and the logged norm is multiplied by the scale)"
)

def _built_off(ctx: RuleContext, scaler: str) -> bool:
    """Whether every GradScaler of the module bound to ``scaler`` is built off in every
    configuration: each value its ``enabled=`` may take (the join's: a configuration file's key,
    what the shipped launches pass) is false. ``scale()`` then returns the loss as it is, and
    the clip sees true gradients (review 26d: LAVIS-style tasks whose shipped configs all set
    ``loss_scale: False``)."""
    built = [s for s in ctx.facts.section("precision") if s.kind == "grad-scaler" and scaler in s.targets]
    return bool(built) and all(s.built_on() is False or _off_in_shipped_runs(s.when) for s in built)


def _off_in_shipped_runs(when) -> bool:
    """Whether a GradScaler that a run by hand may turn on is off in every run the project
    ships: in each shipped launch's configuration one of the tests it is built or enabled under
    certainly fails (47c: ``GradScaler(enabled=(args.fp16 == "true"))`` where every launch
    passes ``--fp16 false``). A switch no shipped launch makes is the user's, as for MP101."""
    if not when:
        return False
    shipped = [c for c in configurations(*(s for s, _, _ in when)) if c.chosen and c.chosen[1] != BY_HAND]
    return bool(shipped) and all(builds_in(when, c) is None for c in shipped)


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
                if clip.never_runs():
                    continue  # under a switch every configuration turns off (`clip_grad_norm: False`)
                finding = self._judge(ctx, scope, clip, fixed_steps)
                if finding is None and scope.accelerators:
                    finding = self._judge_accelerated(ctx, scope, clip)
                if finding is not None:
                    yield finding

    # --- under Accelerate: `accelerator.backward(loss)`, a torch clip, `optimizer.step()` ---
    def _judge_accelerated(self, ctx: RuleContext, scope, clip):
        events = scope.events
        made = dict(scope.accelerators)
        backward = next(
            (e for e in reversed(events) if e.kind == "backward" and e.scaler in made and e.at < clip.at), None
        )
        if backward is None:
            return None
        accelerator = backward.scaler
        if any(e.kind == "unscale" and e.scaler == accelerator and e.at < clip.at for e in events):
            return None  # `accelerator.unscale_gradients()` before the clip
        if any(e.kind == "step" and backward.at < e.at < clip.at for e in events):
            return None  # stepped (and so unscaled) before the clip
        step = next((e for e in events if e.kind == "step" and e.at > clip.at and e.scaler != accelerator), None)
        if step is None:
            return None
        found = self._fp16_scaling(ctx, made[accelerator])
        if found is None:
            return None
        site, reason = found
        name, _ = ACCELERATE_CLIPS[clip.arg_text]
        message = (
            f"`{clip.arg_text}` clips gradients that `{accelerator}.backward(...)` (line {backward.span.line}) "
            f"multiplied by the fp16 loss scale, which {reason} (line {site.span.line}) turns on{self._when_fp16(site)}: "
            f"Accelerate unscales them only in `{step.scaler}.step()`, after the clip, so the threshold is "
            f"compared with scaled gradients: {EFFECT}; "
            f"clip with `{accelerator}.{name}(...)`, which unscales first (under `if {accelerator}.sync_gradients:`)"
        )
        related = (
            Related(ctx.path, backward.span, "gradients scaled here"),
            Related(ctx.path, site.span, "fp16 loss scaling switched on here"),
            Related(ctx.path, step.span, "unscaled only here, after the clip"),
        )
        return ctx.diagnostic(self.code, clip.span, message, self._accelerated_fix(ctx, clip, accelerator), related)

    @staticmethod
    def _fp16_scaling(ctx: RuleContext, offsets: Tuple[int, ...]):
        """(the ``Accelerator`` site, how it turns fp16 loss scaling on) for the first of the
        calls at ``offsets`` that does in a run of this module (its own ``mixed_precision``, or
        the launch's: ``scaling_reason``); None when none does, or none is known."""
        sites = [s for s in ctx.facts.section("precision") if s.kind == "accelerator" and s.span.start in offsets]
        for site in sites:
            for entry in ctx.project.units_containing(ctx.facts):
                reason = scaling_reason(site, ctx.facts, ctx.project, entry)
                if reason is not None:
                    return site, reason
        return None

    @staticmethod
    def _when_fp16(site) -> str:
        """`` whenever it is "fp16"`` for a ``mixed_precision`` that may also be something else."""
        mp = site.arg("mixed_precision")
        if mp is None or all(v.value == "fp16" for v in mp.values):
            return ""
        return ' whenever it is "fp16"'

    @staticmethod
    def _accelerated_fix(ctx: RuleContext, clip, accelerator: str) -> Optional[Fix]:
        """``accelerator.clip_grad_norm_(...)`` in place of torch's, for a clip that runs once per
        optimizer step (under ``sync_gradients``) and passes only what Accelerate's takes."""
        name, accepted = ACCELERATE_CLIPS[clip.arg_text]
        if not clip.synced or not 0 <= clip.positionals <= len(accepted) or not set(clip.keywords) <= set(accepted):
            return None
        edit = Edit(clip.span.start, clip.callee_end, f"{accelerator}.{name}")
        return Fix(UNSAFE, f"Clip with `{accelerator}.{name}`, which unscales the gradients first", (edit,))

    def _judge(self, ctx: RuleContext, scope, clip, fixed_steps):
        events = scope.events
        step = next((e for e in events if e.kind == "step" and e.at > clip.at), None)
        if step is None:
            return None
        scaler = step.scaler
        if scaler not in scope.scalers and not any(e.kind == "update" and e.scaler == scaler for e in events):
            return None  # not known to be a GradScaler
        if _built_off(ctx, scaler):
            return None  # `GradScaler(enabled=cfg["loss_scale"])` off in every configuration: nothing is scaled
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
            f"scaled gradients: {EFFECT}; call {shown} before it"
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
        if any(not set(step.guards) <= set(clip.guards) for step in steps):
            # the step runs under a test the clip does not (`if (i + 1) % accum == 0:`): the clip
            # runs on micro-batches with no step, and an `unscale_` there would run twice before
            # `update()` (`RuntimeError: unscale_() has already been called on this optimizer
            # since the last update()`; review 26b)
            return None
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
