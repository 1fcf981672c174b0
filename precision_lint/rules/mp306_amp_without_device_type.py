"""MP306 amp-without-device-type: ``torch.amp.autocast(...)`` / ``torch.autocast(...)`` (or
``torch.amp.custom_fwd``) called without the device it requires.

``torch.cuda.amp.autocast(enabled=use_amp)`` knew its device. The device-generic spellings that
replace it (torch 2.4 deprecated the old ones: MP303) take the device as their first
parameter, ``device_type``, with no default, so code moved to the new name with its old
arguments stops at the first ``with``, on every torch and every machine::

    TypeError: autocast.__init__() missing 1 required positional argument: 'device_type'

``torch.amp.custom_fwd`` / ``custom_bwd`` (torch 2.4) take it as a required keyword, and a bare
``@torch.amp.custom_fwd`` passes the function where the device should be::

    TypeError: custom_fwd() missing 1 required keyword-only argument: 'device_type'

A call that spreads ``*args`` or ``**kw`` into it may pass the device and is not reported, nor is
one in a branch that never runs. The fix passes ``"cuda"`` (``torch.amp.autocast("cuda",
enabled=use_amp)``, ``@torch.amp.custom_fwd(device_type="cuda")``): the original never runs, so
the fix changes behaviour only where it fails; it is safe where the module's code itself uses
CUDA (``.cuda()``, a ``"cuda"`` device, ``torch.cuda``: the capability facts' ``cuda_code``; a
docstring that mentions CUDA is not code), and unsafe elsewhere (code meant for another device
names its own).
"""
from __future__ import annotations

from ..diagnostics import SAFE, UNSAFE, Fix
from .base import Rule, RuleContext, insert
from .mp201_bf16_without_capability_guard import capability_facts

AUTOCAST_ERROR = "TypeError: autocast.__init__() missing 1 required positional argument: 'device_type'"
DECORATOR_ERROR = "TypeError: {name}() missing 1 required keyword-only argument: 'device_type'"


class AmpWithoutDeviceType(Rule):
    code = "MP306"
    name = "amp-without-device-type"
    summary = "`torch.amp.autocast(...)` / `torch.autocast(...)` / `torch.amp.custom_fwd` without the `device_type` they require (crashes)"
    fix_availability = "always"
    fix_applicability = SAFE

    def check(self, ctx: RuleContext):
        section = ctx.facts.section("amp_device")
        if not section:
            return
        capability = capability_facts(ctx.facts)
        safety = SAFE if capability is not None and capability.cuda_code else UNSAFE
        for call in section.get("calls", ()):
            yield ctx.diagnostic(self.code, call.span, _message(call), _fix(call, safety))


def _message(call) -> str:
    if call.kind == "autocast":
        return (
            f"`{call.written}(...)` names no device and raises `{AUTOCAST_ERROR}` on every torch "
            f"(`torch.cuda.amp.autocast` knew its device, the generic one does not); pass it: "
            f'`{call.written}("cuda", ...)`'
        )
    shown = f"@{call.written}" if call.bare else f"`{call.written}(...)`"
    return (
        f"{shown} names no device and raises `{DECORATOR_ERROR.format(name=call.written.rsplit('.', 1)[-1])}` when the function is defined "
        f"(torch 2.4 and later: older torch has no `{call.written}`); pass it: `device_type=\"cuda\"`"
    )


def _fix(call, safety) -> Fix:
    if call.kind == "autocast":
        text = '"cuda"' if call.empty else '"cuda", '
        return Fix(safety, 'Pass the device: `"cuda"`', (insert(call.insert_at, text),))
    if call.bare:
        return Fix(safety, 'Pass the device: `device_type="cuda"`', (insert(call.insert_at, '(device_type="cuda")'),))
    text = 'device_type="cuda"' if call.empty else 'device_type="cuda", '
    return Fix(safety, 'Pass the device: `device_type="cuda"`', (insert(call.insert_at, text),))
