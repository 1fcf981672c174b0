"""Render ``verify train.py`` results: plain text for people, JSON for machines."""
from __future__ import annotations

import math

from .script import BROKE, FIXED, NOTHING_TO_FIX, OFFLINE, STILL_FAILS, WORKS, all_losses, offline_download, relative_differences, run_problem, skipped_steps, step_losses, steps_made


def offline_message(outcome) -> str:
    what = f"`{outcome.loading}`" if outcome.loading else "a model or file"
    return (f"the script downloads {what} from the Hugging Face Hub and this machine is offline "
            "(or HF_HUB_OFFLINE is set), and it is not in the local cache: run the script once "
            "where it can download, or point it at a local copy, then verify again")


def _loss(value) -> str:
    if value is None:
        return "-"
    if not math.isfinite(value):
        return str(value)
    return f"{value:.4g}"


def _dtype_shares(dtypes: dict) -> str:
    """``float16``, or ``float32 (75%), float16 (25%)`` by share of elements."""
    total = sum(d["numel"] for d in dtypes.values()) or 1
    return ", ".join(f"{name} ({d['numel'] / total:.0%})" if len(dtypes) > 1 else name
                     for name, d in sorted(dtypes.items(), key=lambda kv: -kv[1]["numel"]))


def plan_text(outcome) -> str:
    """The precision plan in force, in one line."""
    probe = (outcome.probe or {}) if outcome else {}
    parts = []
    plan = probe.get("plan") or {}
    dtypes = plan.get("param_dtypes") or {}
    if dtypes:
        weights = _dtype_shares(dtypes)
        devices = "/".join(sorted(plan.get("param_devices") or {})) or "?"
        parts.append(f"trainable weights {weights} on {devices} ({plan.get('optimizer')})")
        frozen = plan.get("frozen_param_dtypes") or {}
        if frozen:  # a PEFT model's base, a frozen encoder: a fix must not upcast them
            parts.append(f"frozen weights {_dtype_shares(frozen)}")
    else:
        parts.append("no optimizer seen")
    autocast = probe.get("autocast") or []
    parts.append("autocast " + ", ".join(f"{d} {t}" for d, t in autocast) if autocast else "no autocast")
    scalers = probe.get("scalers") or []
    if scalers:
        parts.append(", ".join(f"GradScaler('{s['device']}') {'enabled' if s['enabled'] else 'disabled'}"
                               for s in scalers))
    else:
        parts.append("no GradScaler")
    for args in probe.get("training_args") or []:
        in_force = args.get("in_force") or {}
        flags = []
        for k in ("fp16", "bf16"):
            if k in in_force and k in args and in_force[k] != args[k]:
                flags.append(f"{k}={in_force[k]} (the script asked {args[k]})")
            elif k in in_force or k in args:
                flags.append(f"{k}={in_force.get(k, args.get(k))}")
        parts.append(f"{args.get('class', 'TrainingArguments')}({', '.join(flags)})")
    for tiny in probe.get("tiny_models") or []:
        parts.append(f"--tiny: {tiny['name']} is a 2-layer {tiny['class']} built in code "
                     f"({tiny['parameters']:,} random weights, {tiny['dtype']})")
    cuda = plan.get("cuda")
    if cuda:
        parts.append(f"{cuda['name']} {cuda['capability']}")
    if outcome is not None and outcome.emulation_installed:
        parts.append("cpu-emulated: the Trainer's CUDA fp16 scaler path, emulated on CPU")
    return "; ".join(parts)


def run_text(outcome, steps: int) -> str:
    """What a run did, in one line: the error, or the steps with their losses."""
    problem = run_problem(outcome, steps)
    made = steps_made(outcome)
    losses = ", ".join(_loss(v) for v in step_losses(outcome))
    if outcome.status == "exception":
        where = outcome.where
        at = ""
        if where and "cell" in where:
            at = f" at {where['file']} cell {where['cell']}, line {where['line']}"
        elif where:
            at = f" at {where['file']}:{where['line']}"
        text = f"failed{at} after {made} steps: {outcome.exc_type}: {outcome.exc_message}"
        pending = [_loss(v) for v in (outcome.probe or {}).get("pending_losses", [])]
        if pending:
            text += f" (loss before the failure: {', '.join(pending)})"
        return text
    if problem is not None and not problem.startswith("non-finite"):
        return problem + (f"; losses {losses}" if losses else "")
    how = "stopped after" if outcome.stopped else "the script ended after"
    text = f"{how} {made} steps, losses {losses or '-'}"
    text += ": finite" if problem is None else f": NOT finite ({problem})"
    skipped = skipped_steps(outcome)
    if skipped:
        text += f"; {skipped} of {made} steps skipped by GradScaler (inf/nan gradients"
        text += (": it lowers its scale until they fit, usual in the first steps)" if problem is None
                 else ")")
    return text


def _verdict_text(result) -> str:
    n = result.steps
    if result.verdict == NOTHING_TO_FIX:
        if result.reason:
            return f"nothing to fix: precision-lint has no fix for this script (the original: {result.reason})"
        return "nothing to fix: the script trains and precision-lint changes nothing; no second run needed"
    if result.verdict == FIXED and result.reason:  # it ran, but the fp32 reference shows it trained wrong
        return f"fixed: {result.reason}; the fixed copy trains {n} steps with finite losses"
    if result.verdict == FIXED:
        return f"fixed: the original fails, the fixed copy trains {n} steps with finite losses"
    if result.verdict == WORKS:
        return "works before and after: the fix changed the script, and both train with finite losses"
    if result.verdict == STILL_FAILS:
        return f"still fails after the fix: {result.reason}"
    if result.verdict == OFFLINE:
        return f"not verified: {offline_message(result.original)}"
    if result.verdict == BROKE:
        return f"the fix broke it: the original trains, the fixed copy: {result.reason}"
    return f"error: {result.reason}"


def text(result) -> str:
    device = result.device
    if any(o is not None and o.emulation_installed for o in (result.original, result.fixed)):
        device = "cpu-emulated"
    args = (" " + " ".join(result.args)) if result.args else ""
    out = [f"precision-lint verify {result.script.name}{args}  "
           f"(device {device}, stops after {result.steps} optimizer steps)", ""]
    if result.original is not None:
        out.append(f"original: {run_text(result.original, result.steps)}")
        out.append(f"  plan in force: {plan_text(result.original)}")
        if offline_download(result.original):
            out.append(f"  offline: {offline_message(result.original)}")
    if result.linked:
        shown = ", ".join(result.linked[:5]) + (f" and {len(result.linked) - 5} more" if len(result.linked) > 5 else "")
        out.append(f"  linked into the scratch copies, not copied (links, or over 16 MB): {shown}")
    fixable = [f for f in result.findings_before if f["fixable"]]
    if result.findings_before:
        out.append("")
        out.append(f"findings ({len(result.findings_before)}, {len(fixable)} fixable):")
        for f in result.findings_before:
            mark = "[*]" if f["fixable"] else "[ ]"
            cell = f"cell {f['cell']}:" if f.get("cell") else ""
            out.append(f"  {f['file']}:{cell}{f['row']}:{f['column']}: {f['code']} {mark} {f['message']}")
    if result.fix_diff:
        out.append("")
        out.append("precision-lint check --fix changed:")
        out += ["  " + line for line in result.fix_diff.rstrip("\n").splitlines()]
        if result.findings_after:
            out.append(f"  still reported after --fix: "
                       f"{', '.join(sorted({f['code'] for f in result.findings_after}))}")
    if result.fixed is not None:
        out.append("")
        out.append(f"fixed:    {run_text(result.fixed, result.steps)}")
        out.append(f"  plan in force: {plan_text(result.fixed)}")
    if result.reference is not None:
        out.append("")
        out.append(f"fp32 reference ({result.reference_of} copy, half precision switched off): "
                   f"{run_text(result.reference, result.steps)}")
        out.append(f"  plan in force: {plan_text(result.reference)}")
        compared = [("fixed", result.fixed), ("original", result.original)] if result.reference_of == "fixed" else [("original", result.original)]
        for name, outcome in compared:
            if outcome is None or run_problem(outcome, result.steps) is not None:
                continue  # a run that failed has nothing to compare
            diffs = relative_differences(outcome, result.reference)
            if diffs:
                shown = ", ".join("-" if d is None else f"{d:.2e}" for d in diffs)
                out.append(f"  relative difference of the {name} run's losses: {shown} "
                           "(step 1: the forward pass alone; later steps also differ by the updates)")
    out.append("")
    out.append(f"verdict: {_verdict_text(result)}")
    return "\n".join(out)


def _outcome_json(outcome, steps):
    if outcome is None:
        return None
    data = outcome.to_json()
    data["steps_made"] = steps_made(outcome)
    data["losses"] = [None if v is None else (v if math.isfinite(v) else str(v))
                      for v in step_losses(outcome)]
    data["losses_finite"] = all(math.isfinite(v) for v in all_losses(outcome))
    data["skipped_steps"] = skipped_steps(outcome)
    data["problem"] = run_problem(outcome, steps)
    data["plan_text"] = plan_text(outcome)
    data["offline_download"] = offline_download(outcome)
    return data


def to_json(result) -> dict:
    return {
        "version": 1,
        "script": str(result.script),
        "args": list(result.args),
        "device": result.device,
        "steps": result.steps,
        "verdict": result.verdict,
        "reason": result.reason,
        "verdict_text": _verdict_text(result),
        "ok": result.ok,
        "original": _outcome_json(result.original, result.steps),
        "fixed": _outcome_json(result.fixed, result.steps),
        "reference": _outcome_json(result.reference, result.steps),
        "reference_of": result.reference_of or None,
        "reference_relative_differences": (
            relative_differences(result.fixed if result.reference_of == "fixed" else result.original,
                                 result.reference) if result.reference is not None else None),
        # the original against the same reference (when it ran): a silent bug drifts from it
        "reference_relative_differences_original": (
            relative_differences(result.original, result.reference)
            if result.reference is not None and result.original is not None
            and run_problem(result.original, result.steps) is None else None),
        "files": result.files,
        "findings_before": result.findings_before,
        "findings_after": result.findings_after,
        "fix_diff": result.fix_diff,
        "linked": result.linked,
        "duration_s": result.duration_s,
        "workdir": result.workdir,
    }
