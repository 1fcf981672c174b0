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
"""
from __future__ import annotations

from dataclasses import replace
from typing import Dict, Iterable, List

from ..config import Config, ConfigError
from ..diagnostics import SAFE, UNSAFE, Edit, Fix, Related
from ..facts.extractors.kd import LOGITS, Path
from .base import Option, Rule, RuleContext

UPCAST = "upcast"
UPCAST_AND_CLAMP = "upcast-and-clamp"
CLAMP = "clamp"
FP16_MAX = 65504.0
MAX_DEPTH = 8


def _short(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _located(paths, path: str):
    """Reasons found in another file name it: `(line 5)` → `(models.py, line 5)`."""
    where = _short(path)
    return tuple(
        replace(p, reason=p.reason.replace("(line ", f"({where}, line "), origin_path=p.origin_path or path)
        if p.reason
        else p
        for p in paths
    )


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
    evidence = (
        "softmax", "kl_div", "KLDivLoss", "cross_entropy", "CrossEntropyLoss",
        "float16", "half", "clip", "autocast",
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

    # --- following logits into helpers and constructors -----------------------------
    def _flows(self, ctx: RuleContext) -> Dict[str, list]:
        modules = {m.path: m for m in ctx.project.joined_modules(ctx.facts, "kd")}
        modules[ctx.facts.path] = ctx.facts
        by_callee: Dict[str, list] = {}
        returns: Dict[str, list] = {}
        for m in modules.values():
            section = m.section("kd")
            here = m.path == ctx.facts.path
            for flow in section["flows"] if section else ():
                if not here:
                    flow = replace(flow, args=tuple((i, k, _located(ps, m.path)) for i, k, ps in flow.args))
                by_callee.setdefault(flow.callee, []).append(flow)
            for function, paths in section.get("returns", ()) if section else ():
                returns.setdefault(function, []).extend(paths if here else _located(paths, m.path))
            # MP101's weights facts: a loader returning a float16 model (`def load_teacher(): ...`)
            for site in m.section("weights"):
                if site.returned and "float16" in site.dtypes:
                    returns.setdefault(site.scope, []).append(
                        Path(f"`{site.scope.rsplit('.', 1)[-1]}()` returns a model with float16 weights "
                             f"({_short(m.path)}, line {site.span.line})", None,
                             origin=site.span, origin_path=m.path)
                    )
        return {"calls": by_callee, "returns": returns}

    def _resolve(self, paths: Iterable[Path], flows, depth: int = 0, seen=()) -> List[Path]:
        out: List[Path] = []
        for p in paths:
            if p.returns_of is not None:
                if depth < MAX_DEPTH and p.returns_of not in seen:
                    for q in self._resolve(flows["returns"].get(p.returns_of, ()), flows, depth + 1, (*seen, p.returns_of)):
                        out.append(replace(q, upcast=q.upcast or p.upcast, clamped=q.clamped or p.clamped))
                continue
            if p.param is None:
                out.append(p)
                continue
            ref = p.param
            if depth >= MAX_DEPTH or ref in seen:
                continue
            for flow in flows["calls"].get(ref.function, ()):
                if flow.protected:  # called under autocast: the helper's softmax runs in fp32
                    continue
                for position, kw, arg_paths in flow.args:
                    if kw == ref.name or (position >= 0 and position == ref.index):
                        for q in self._resolve(arg_paths, flows, depth + 1, (*seen, ref)):
                            out.append(replace(q, upcast=q.upcast or p.upcast, clamped=q.clamped or p.clamped))
        return out

    # --- judging ----------------------------------------------------------------------
    def check(self, ctx: RuleContext):
        section = ctx.facts.section("kd")
        if not section or not section["losses"]:
            return
        mode = ctx.options.get("mode", UPCAST)
        bound = float(ctx.options.get("logit-clamp", FP16_MAX))
        flows = None
        for loss in section["losses"]:
            if flows is None:
                flows = self._flows(ctx)
            if _only_called_under_autocast(loss.function, flows):
                continue  # autocast is dynamically scoped: softmax/log_softmax/kl_div run in fp32
            todo = []
            for op in loss.operands:
                if op.protected:
                    continue
                half = [p for p in self._resolve(op.paths, flows) if p.reason]
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
            if not todo:
                continue
            yield self._finding(ctx, loss, todo, mode, bound)
            tinies = {t.span: t for op, *_ in todo for t in op.tiny}
            for tiny in sorted(tinies.values(), key=lambda t: t.span.start):
                yield ctx.diagnostic(
                    self.code,
                    tiny.span,
                    f"`{tiny.text}` in this float16 KD loss rounds to 0 in half precision "
                    f"(its smallest positive value is 2**-24 ≈ 6e-08), so it no longer keeps `log` "
                    f"away from -inf; it takes effect once the loss is upcast (line {loss.span.line})",
                )

    def _finding(self, ctx: RuleContext, loss, todo, mode: str, bound: float):
        shown = []
        related = {}
        for op, bad, _, _ in todo:
            if op.logits_text not in [s for s, _ in shown]:
                shown.append((op.logits_text, bad[0].reason))
            for p in bad:
                if p.origin is not None and len(related) < 3:
                    key = (p.origin_path or ctx.path, p.origin)
                    related.setdefault(key, Related(key[0], p.origin, f"float16 from here: {p.reason}"))
        sources = "; ".join(f"`{text}` may be half: {reason}" for text, reason in shown[:3])
        message = (
            f"{loss.kind} runs in float16 ({sources}): the loss is inf once its batchmean/sum total "
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


def _only_called_under_autocast(function: str, flows) -> bool:
    """Whether every known call of ``function`` runs inside an enabled autocast region."""
    calls = flows["calls"].get(function, ())
    return bool(calls) and all(c.protected for c in calls)
