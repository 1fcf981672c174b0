"""Render verify results: a Markdown table for people, JSON for machines."""
from __future__ import annotations

import math
from collections import Counter

from .verify import BROKEN, ERROR, FAILED, PASSED, SKIPPED

COLUMNS = ("fixture", "device", "before", "after", "steps", "final loss", "verdict")
CELL = 46


def _loss(value) -> str:
    if value is None:
        return "-"
    if not math.isfinite(value):
        return str(value)
    return f"{value:.4g}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def row(result) -> tuple:
    before = result.before.summary(CELL) if result.before else "-"
    after = result.after.summary(CELL) if result.after else "-"
    steps = loss = "-"
    if result.after is not None:
        steps = f"{result.after.steps if result.after.steps is not None else '-'}/{result.fixture.steps}"
        loss = _loss(result.after.final_loss)
    return (result.fixture.name, result.device, before, after, steps, loss, result.verdict_text)


def summary(results) -> dict:
    counts = Counter(r.verdict for r in results)
    data = {k: counts.get(k, 0) for k in (PASSED, FAILED, BROKEN, SKIPPED, ERROR)}
    data["total"] = len(results)
    return data


def table(results) -> str:
    rows = [tuple(_cell(c) for c in row(r)) for r in results]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(COLUMNS)]

    def line(cells):
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"

    out = [line(COLUMNS), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(r) for r in rows]
    notes = []
    for r in results:
        for stage in r.stages:
            mark = "as declared" if stage["ok"] else f"declared {stage['expect']}"
            notes.append(f"- {r.fixture.name} ({r.device}): after fixing only "
                         f"{', '.join(stage['rules'])}: {stage['outcome'].summary(120)} ({mark})")
        if r.device == "cpu-emulated" and r.before is not None:
            notes.append(f"- {r.fixture.name} (cpu-emulated): CUDA code path emulated on CPU "
                         f"({r.fixture.emulate}); the real run needs CUDA")
    s = summary(results)
    out.append("")
    if notes:
        out += notes + [""]
    out.append(", ".join(f"{s[k]} {k}" for k in (PASSED, FAILED, BROKEN, SKIPPED, ERROR) if s[k])
               or "no fixtures")
    return "\n".join(out)


def to_json(results, cuda_available: bool, device: str) -> dict:
    items = []
    for r in results:
        fx = r.fixture
        items.append({
            "fixture": fx.name,
            "path": str(fx.path),
            "entry": str(fx.entry),
            "rules": list(fx.rules),
            "needs": fx.needs,
            "device": r.device,
            "emulation": fx.emulate if r.device == "cpu-emulated" else None,
            "declared": fx.expect.describe(),
            "steps_declared": fx.steps,
            "verdict": r.verdict,
            "reason": r.reason,
            "verdict_text": r.verdict_text,
            "before": r.before.to_json() if r.before else None,
            "stages": [
                {"rules": s["rules"], "expect": s["expect"], "ok": s["ok"],
                 "outcome": s["outcome"].to_json()}
                for s in r.stages
            ],
            "after": r.after.to_json() if r.after else None,
            "steps": r.after.steps if r.after else None,
            "final_loss": (None if not r.after or r.after.final_loss is None
                           else (r.after.final_loss if math.isfinite(r.after.final_loss)
                                 else str(r.after.final_loss))),
            "detected": r.detected,
            "remaining": r.remaining,
            "fix_diff": r.fix_diff,
            "duration_s": r.duration_s,
            "workdir": r.workdir,
        })
    return {
        "version": 1,
        "cuda_available": cuda_available,
        "device": device,
        "results": items,
        "summary": summary(results),
    }
