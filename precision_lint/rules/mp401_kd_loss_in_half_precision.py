"""MP401 kd-loss-in-half-precision: a distillation loss computed on float16 logits.

``softmax`` / ``log_softmax`` / ``kl_div`` on float16 tensors stay finite for logits in the
thousands, but a knowledge-distillation loss in half precision still breaks three ways
(measured with torch 2.13 on CPU):

- the ``batchmean`` / ``sum`` total passes float16's maximum, 65504: over 1,024 rows the half
  loss is ``inf`` where float32 gives 197.1;
- the loss is multiplied by a loss scale (``GradScaler`` starts at 65536): ``inf``;
- a logit already overflowed to ±inf in the fp16 forward: ``nan`` (``total_loss=nan``).

The usual workaround (seed stories 002 and 003) clamps the logits to ±5 or ±2.5. That keeps the
loss finite by flattening the teacher's distribution: a KL of 36288 became 16.6, so there is
little left to distil. The fix here upcasts the logits (``.float()``) before the temperature
division, so softmax, log_softmax and the KL run in float32: finite, and equal to the float64
loss within rounding. ``softmax(x).log()`` becomes ``log_softmax(x)`` on the way.

Not reported: logits upcast before the softmax, a softmax inside an enabled ``torch.autocast``
region (autocast runs softmax/log_softmax/kl_div in float32), logits with no float16 source.

Judged per run (``project/runs.py``): a loss helper shared by two scripts gets, in each script's
run, only the tensors that script passes, and only where the run reaches the loss. A message
whose run is another file's names it ("in the run of `distill.py`").
"""
from __future__ import annotations

from ..workspace.config import Config, ConfigError
from ..diagnostics import SAFE, UNSAFE, Edit, Fix, Related
from ..project.runs import run_name, value_in_run
from ..semantic.values import HALF, Possible
from .base import Option, Rule, RuleContext

UPCAST = "upcast"
UPCAST_AND_CLAMP = "upcast-and-clamp"
CLAMP = "clamp"
FP16_MAX = 65504.0


def _short(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _reason(value: Possible, path: str) -> str:
    """Why ``value`` may be float16; a reason found in another file names it:
    `(line 5)` → `(models.py, line 5)`."""
    if value.where and value.where != path:
        return value.value.replace("(line ", f"({_short(value.where)}, line ")
    return value.value


def _bound(value: float) -> str:
    text = f"{value:g}"
    return text if any(c in text for c in ".e") else f"{text}.0"


class KDLossInHalfPrecision(Rule):
    code = "MP401"
    name = "kd-loss-in-half-precision"
    summary = (
        "knowledge-distillation loss computed on float16 logits: inf/NaN once sums pass 65504 or a "
        "loss scale multiplies it; upcast the logits instead of clamping them"
    )
    fix_availability = "always"
    fix_applicability = SAFE
    options = {
        "mode": Option(
            UPCAST,
            (UPCAST, UPCAST_AND_CLAMP, CLAMP),
            str,
            "upcast: `.float()` on the logits (safe); upcast-and-clamp: also `.clamp(-B, B)` for "
            "forwards that overflow to ±inf; clamp: clamp only, the seeds' behaviour (unsafe)",
        ),
        "logit-clamp": Option(
            FP16_MAX,
            None,
            float,
            "B for the clamp modes; the default, float16's largest finite value, leaves every "
            "finite half logit untouched",
        ),
    }

    @classmethod
    def resolve_options(cls, config: Config):
        options = super().resolve_options(config)
        if not options["logit-clamp"] > 0:
            raise ConfigError(f"rules.{cls.code}.logit-clamp must be positive, not {options['logit-clamp']!r}")
        return options

    # --- judging ----------------------------------------------------------------------
    def check(self, ctx: RuleContext):
        section = ctx.facts.section("kd")
        if not section or not section["losses"]:
            return
        mode = ctx.options.get("mode", UPCAST)
        bound = float(ctx.options.get("logit-clamp", FP16_MAX))
        for loss in section["losses"]:
            failing = _failing_runs(ctx, loss, mode)
            if not failing:
                continue
            # the fix edits the loss itself, so it covers every failing run's operands (an
            # upcast is a no-op for a run whose logits are already float32)
            todo = _merged([t for _, t in failing])
            yield self._finding(ctx, loss, failing[0], todo, mode, bound)
            tinies = {t.span: t for op, *_ in todo for t in op.tiny}
            for tiny in sorted(tinies.values(), key=lambda t: t.span.start):
                yield ctx.diagnostic(
                    self.code,
                    tiny.span,
                    f"`{tiny.text}` in this float16 KD loss rounds to 0 in half precision "
                    f"(its smallest positive value is 2**-24 ≈ 6e-08), so it no longer keeps `log` "
                    f"away from -inf; it takes effect once the loss is upcast (line {loss.span.line})",
                )

    def _finding(self, ctx: RuleContext, loss, run, todo, mode: str, bound: float):
        """``run``: the first failing run, (its entry, its half operands), which the message
        and the related locations show; ``todo``: every failing run's, which the fix edits."""
        entry, shown_todo = run
        shown = []
        related = {}
        for op, bad, _, _ in shown_todo:
            if op.logits_text not in [s for s, _ in shown]:
                shown.append((op.logits_text, _reason(bad[0], ctx.path)))
            for v in bad:
                if v.origin is not None and len(related) < 3:
                    key = (v.where or ctx.path, v.origin)
                    related.setdefault(key, Related(key[0], v.origin, f"float16 from here: {_reason(v, ctx.path)}"))
        sources = "; ".join(f"`{text}` may be half: {reason}" for text, reason in shown[:3])
        in_run = f" in the run of `{run_name(entry)}`" if entry.path != ctx.path else ""
        message = (
            f"{loss.kind} runs in float16{in_run} ({sources}): the loss is inf once its batchmean/sum total "
            f"passes 65504 or a loss scale multiplies it, and NaN once a logit is ±inf"
        )
        if loss.function.endswith(".compute_loss"):
            message += " (a Trainer's autocast does not cover a teacher called in compute_loss)"
        edits = []
        rewrites = False
        for op, _bad, need_upcast, need_clamp in todo:
            logits = op.logits_text if op.logits_atomic else f"({op.logits_text})"
            if need_upcast:
                logits += ".float()"
            if need_clamp:
                logits += f".clamp(-{_bound(bound)}, {_bound(bound)})"
            rewrites = rewrites or op.rewrites_log
            from ..facts.extractors.kd import LOGITS  # loaded by the facts that hold the operation

            edits.append(Edit(op.root.start, op.root.end, op.template.replace(LOGITS, logits)))
        edits = tuple(sorted(set(edits), key=lambda e: (e.start, e.end)))
        if mode == UPCAST:
            what, applicability = "Upcast the logits with `.float()` before the softmax", SAFE
        elif mode == UPCAST_AND_CLAMP:
            what = f"Upcast the logits with `.float()` and clamp them to ±{_bound(bound)}"
            applicability = SAFE if bound >= FP16_MAX else UNSAFE
        else:
            what, applicability = f"Clamp the logits to ±{_bound(bound)} (stays in float16)", UNSAFE
        if rewrites:
            what += "; use `log_softmax` instead of `softmax(...).log()`"
        message += f"; {what[0].lower()}{what[1:]}"
        return ctx.diagnostic(
            self.code, loss.span, message, Fix(applicability, what, edits), related=tuple(related.values())
        )


def _failing_runs(ctx: RuleContext, loss, mode: str):
    """The runs that compute ``loss`` in float16, each as (its entry, its half operands), the
    runs of scripts nothing imports first (the one a message names). A helper shared by several
    scripts runs in each with that script's tensors (``value_in_run``): a float16 student of one
    script is not another's, and a run that never reaches the loss (an export CLI that builds
    the same objects in float16) gives it nothing. Autocast and the promotion of a half target
    are judged per run too."""
    project = ctx.project
    scope = project.run_scope(ctx.facts, loss.function, loss.span.line)
    found = []

    def judge(entry) -> None:
        paths = project.unit_view(entry)
        if not project.callgraph.entries(scope, paths, entry.path):
            return  # the loss does not run in this run
        if _only_called_under_autocast(loss.function, project, paths):
            return  # autocast is dynamically scoped: softmax/log_softmax/kl_div run in fp32
        todo = _half_operands(loss, mode, lambda v: value_in_run(project, v, paths))
        if todo and not _promoted_to_fp32(loss, todo):
            found.append((entry, todo))

    ctx.each_run(project.units_containing(ctx.facts), judge)
    scripts = {m.path for m in project.roots_of(ctx.facts)}
    return sorted(found, key=lambda run: run[0].path not in scripts)


def _half_operands(loss, mode: str, in_run):
    """The operands of ``loss`` that the values ``in_run`` keeps make float16, as (operand,
    its half values, whether it needs an upcast, whether it needs a clamp) for ``mode``."""
    todo = []
    for op in loss.operands:
        if op.protected:
            continue
        # the join has substituted parameters and other modules' returns; a value
        # handed over by a call under autocast is softmaxed in float32 there
        half = [v for v in op.values if v.kind == HALF and not v.autocast and in_run(v)]
        if mode == UPCAST:
            bad = [p for p in half if not p.upcast]
            need_upcast, need_clamp = bool(bad), False
        elif mode == UPCAST_AND_CLAMP:
            bad = [p for p in half if not (p.upcast and p.clamped)]
            need_upcast = any(not p.upcast for p in bad)
            need_clamp = any(not p.clamped for p in bad)
        else:
            bad = [p for p in half if not (p.upcast or p.clamped)]
            need_upcast, need_clamp = False, bool(bad)
        if bad:
            todo.append((op, bad, need_upcast, need_clamp))
    return todo


def _merged(todos):
    """One operand list from several runs' (operand, half values, upcast, clamp): an operand
    half in any run is rewritten, and upcast or clamped where any run needs it."""
    merged = {}
    for op, bad, upcast, clamp in (item for todo in todos for item in todo):
        _, first, was_upcast, was_clamped = merged.get(id(op), (op, bad, False, False))
        merged[id(op)] = (op, first, was_upcast or upcast, was_clamped or clamp)
    return list(merged.values())


def _promoted_to_fp32(loss, todo) -> bool:
    """A ``kl_div`` whose only float16 operands are its target (a frozen teacher's
    probabilities) while the student's log-probabilities are not float16: the KL is computed
    in the promoted dtype, float32 — finite, within ~2e-5 relative of the float32 loss
    (the teacher's fp16 softmax rounds each probability by at most 2**-11). Not a finding,
    and "runs in float16" would be false."""
    sides = {op.side for op, *_ in todo}
    return sides == {"target"} and any(op.side == "input" for op in loss.operands)


def _only_called_under_autocast(function: str, project, paths) -> bool:
    """Whether every known call of ``function`` in the run of ``paths`` runs inside an enabled
    autocast region (another run may call it outside one: that run is judged on its own)."""
    calls = project.calls.calls_of(function, paths)
    return bool(calls) and all(c.autocast for c in calls)
