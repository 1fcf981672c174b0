"""MP203 bf16-guard-counts-emulation: a bf16 guard that is also true on T4/V100.

Since torch 2.3, ``torch.cuda.is_bf16_supported()`` takes
``including_emulation=True`` by default: on a GPU below compute capability 8.0
(P100, V100, T4, TITAN RTX) it returns True as soon as a bfloat16 tensor can be
*allocated*. transformers' ``is_torch_bf16_gpu_available()`` and accelerate's
``is_bf16_available()`` call it, so transformers no longer raises
``ValueError: Your setup doesn't support bf16/gpu.`` either. The guard most code
writes — ``torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16``
— therefore picks bf16 on a T4: the run is emulated (several times slower than
fp16 on the same card), and convolutions fail, since cuDNN has no bf16 engines
below sm80.

The fix asks for native bf16: ``torch.cuda.is_bf16_supported(including_emulation=False)``
(safe: identical on Ampere+, on CPU and on ROCm), or, for the library helpers,
the precision plan's capability probe (unsafe: those helpers also answer for
XPU/NPU/MPS, where the probe is False).

A run that imports unsloth is not reported: its import replaces ``torch.cuda.is_bf16_supported``
with a check for native bf16 (``including_emulation=False``, or ``major >= 8`` on older torch),
which every helper above calls at run time (``knowledge/libraries.toml``).

Emulation happens only below sm80: code whose run states only Ampere-or-newer GPUs, or is
written for another device, is not reported (the hardware targets of MP201).

It also happens only on the versions that count it (``knowledge/torch.toml``, read in the
wheels): torch up to 2.2 answers ``is_bf16_supported()`` with ``major >= 8``, and
transformers before 4.35 has its own ``major < 8`` test, so there the guard is right. The
torch range is the file's own (``workspace/versions.py``: its project's pin, else the torch
of its pinned transformers / accelerate / TRL, else the installed one): nothing is reported
where no allowed version emulates, and the finding names the versions where some do. The
``including_emulation=`` keyword exists only from torch 2.4 (a ``TypeError`` on 2.3): that
fix is offered only where the lowest allowed torch has it.
"""
from __future__ import annotations

import re
from typing import Iterable

from ..diagnostics import SAFE, UNSAFE, Edit, Fix, Related
from ..fixes.plan import capability_probe, ensure_torch, lazy_probe, probe_expression
from ..semantic.values import CAPABILITY, COND, CONST, DTYPE
from .base import Rule, RuleContext, insert, replace
from ..knowledge import bf16_facts, patched_native_only
from ..workspace.versions import version_text
from .mp201_bf16_without_capability_guard import pre_ampere_targets

_BF16 = bf16_facts()
EMULATION_SINCE = _BF16["torch_emulates_since"]  # torch versions before it answer for native bf16 only
KEYWORD_SINCE = _BF16["including_emulation_since"]  # is_bf16_supported(including_emulation=...)
TRANSFORMERS_SINCE = _BF16["transformers_follows_torch_since"]  # is_torch_bf16_gpu_available() asks torch
BF16_STRINGS = ("bf16", "bf16-mixed", "bf16-true", "bfloat16")


def _selections(ctx: RuleContext) -> Iterable[tuple]:
    """Every bf16 choice of the file: (the texts that decide it, the expression that makes it,
    where the chosen value is written, what it is)."""
    for site in ctx.facts.section("precision"):
        for name, arg in site.args:
            for v in arg.values:
                texts = tuple(g.text for g in v.guards)
                shown = f"`{name}={arg.value_text}`"
                if v.kind == DTYPE and v.value == "bfloat16":
                    yield texts, arg.value_span, v.origin, shown
                elif v.kind == CONST and isinstance(v.value, str) and v.value.lower() in BF16_STRINGS:
                    yield texts, arg.value_span, v.origin, shown
                elif name == "bf16" and (v.kind in (CAPABILITY, COND) or (v.kind == CONST and v.value is True)):
                    yield texts + (v.text,), arg.value_span, v.origin, shown
    for site in ctx.facts.section("weights"):
        for v in site.values:
            if v.kind == DTYPE and v.value == "bfloat16":
                yield tuple(g.text for g in v.guards), site.edit_span or site.span, v.origin, "bfloat16 weights"


def _within(inner, outer) -> bool:
    return inner is not None and outer is not None and outer.start <= inner.start and inner.end <= outer.end


def _decides(probe, selection) -> bool:
    """Whether the probe call decides this bf16 choice: the choice's condition is the call itself
    (written in the choice, or in the assignment that also writes the chosen value), or a name
    the call's result is assigned to, or the branches of the `if` whose test holds the call
    (a helper's ``if is_bf16_supported(): return torch.bfloat16``), or the code that runs where
    the probe says yes (``if is_bf16_supported(): with torch.autocast("cuda", dtype=torch.bfloat16):``)."""
    texts, region, origin, _ = selection
    yes = probe.says_yes
    if yes is not None and origin is not None and yes[0] <= origin.start and origin.end <= yes[1]:
        return True  # written in the code that runs where the probe says yes
    for text in texts:
        if not text:
            continue
        if probe.text in text and (
            _within(probe.span, region)
            or _within(origin, probe.statement)
            # chosen in the branch the probe's `if` (or ternary) picks: in a helper too
            or _within(origin, probe.governs)
            # the probe's own answer returned by a helper (`bf16=use_bf16()`)
            or (origin is None and probe.returned)
            # a condition followed through a name (`bf16=use_bf16`) to the assignment of the call
            or (origin is None and probe.statement is not None)
        ):
            return True
        if any(re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", text) for n in probe.names):
            return True
    return False


class Bf16GuardCountsEmulation(Rule):
    code = "MP203"
    name = "bf16-guard-counts-emulation"
    summary = "bf16 chosen by `torch.cuda.is_bf16_supported()` / `is_torch_bf16_gpu_available()`, which are True on T4/V100 (emulated bf16)"
    fix_availability = "always"
    fix_applicability = SAFE

    def check(self, ctx: RuleContext):
        probes = ctx.facts.section("bf16_probes")
        if not probes or not pre_ampere_targets(ctx):
            return  # (emulation only happens below sm80: code for Ampere+ or another device is fine)
        torch = ctx.targets.of("torch")
        if not torch.some_at_least(EMULATION_SINCE):
            return  # is_bf16_supported() still required compute capability 8.0 there
        transformers = ctx.targets.of("transformers")
        selections = list(_selections(ctx))
        imported = ctx.project.always_imported(ctx.facts)
        for probe in probes:
            if probe.callee.startswith("transformers.") and not transformers.some_at_least(TRANSFORMERS_SINCE):
                continue  # its own `major < 8` test: native bf16 only
            if patched_native_only(imported, probe.callee):
                continue  # `import unsloth` replaced the check with one for native bf16
            chosen = next((sel for sel in selections if _decides(probe, sel)), None)
            if chosen is not None:
                yield self._finding(ctx, probe, chosen[2] or chosen[1], chosen[3])
            elif probe.returns_bf16 is not None:  # a helper's choice, for callers in any file
                yield self._finding(ctx, probe, probe.returns_bf16, "bf16 returned to the helper's callers")

    def _finding(self, ctx: RuleContext, probe, span, what):
        shown = probe.callee.rsplit(".", 1)[-1]
        message = (
            f"`{shown}()` also returns True where bf16 is only emulated (T4, V100, P100: compute capability "
            f"< 8.0), so this guard picks bf16 there: a run several times slower than fp16, and convolutions "
            f"fail (cuDNN has no bf16 engines below sm80)"
        )
        torch = ctx.targets.of("torch")
        transformers = ctx.targets.of("transformers")
        counted, shown = [], []
        if not torch.every_at_least(EMULATION_SINCE):
            counted.append(f"torch {torch.from_version(EMULATION_SINCE)}")
            shown.append(torch.where())
        if probe.callee.startswith("transformers.") and not transformers.every_at_least(TRANSFORMERS_SINCE):
            counted.append(f"transformers {transformers.from_version(TRANSFORMERS_SINCE)}")
            shown.append(transformers.where())
        if counted:  # some allowed versions answer for native bf16 only: name those that do not
            message += f" (only with {' and '.join(counted)}: {'; '.join(shown)}; older versions answer for native bf16)"
        related = (Related(ctx.path, span, f"bf16 chosen here: {what}"),)
        if probe.library == "torch" and not torch.has_since(KEYWORD_SINCE):
            message += (
                f"; check the compute capability (`{probe_expression('torch')}`): `including_emulation=` "
                f"does not exist before torch {version_text(KEYWORD_SINCE)}, which {torch.where()} allows"
            )
            return ctx.diagnostic(self.code, probe.span, message, None, related)
        if probe.library == "torch":
            added = ", including_emulation=False" if probe.has_args else "including_emulation=False"
            fix = Fix(SAFE, "Ask for native bf16: `including_emulation=False`", (insert(probe.close, added),))
            message += "; pass `including_emulation=False`"
        else:
            name, edits = capability_probe(ctx.facts, lazy=lazy_probe(ctx))
            layout = ctx.facts.layout
            own = next((p for p in (layout.probes if layout else ()) if p.name == name), None)
            if name in probe.names or (own is not None and own.span.start <= probe.span.start < own.span.end):
                # the call defines the probe itself: write the check in its place
                torch, edits = ensure_torch(ctx.facts)
                name = f"({probe_expression(torch)})"
            if probe.only_use_import is not None:  # the helper's import goes with its only use
                edits = tuple(edits) + (Edit(*probe.only_use_import, ""),)
            fix = Fix(UNSAFE, f"Use the native-bf16 probe `{name}`", (replace(probe.span, name),) + tuple(edits))
            message += f"; check the compute capability instead (`{probe_expression('torch')}`)"
        return ctx.diagnostic(self.code, probe.span, message, fix, related)
