"""The one precision plan every fix follows.

Rules that rewrite precision (MP101, MP201, MP202) build their replacement code
here, so that their fixes agree: one capability probe per module, named
``BF16_OK``, true only where bf16 runs natively (compute capability 8.0+, i.e.
Ampere and newer), reused by every guarded form:

- weights that are trained under fp16 autocast: ``torch.float32`` (fp32 master
  weights), or ``torch.bfloat16 if BF16_OK else torch.float32``;
- ``bf16=BF16_OK, fp16=torch.cuda.is_available() and not BF16_OK``;
- ``"flash_attention_2" if BF16_OK else "sdpa"``.

Why a strict probe: in recent torch, ``torch.cuda.is_bf16_supported()`` also
returns True on GPUs that only *emulate* bf16 (pre-Ampere), so transformers and
accelerate accept ``bf16=True`` on a T4 and the job runs, very slowly, instead of
using the fp16 tensor cores the card has.
Two rules that add the probe to the same module produce the identical edit,
which the fixer applies once.
"""
from __future__ import annotations

from typing import Tuple

from .diagnostics import Edit
from .facts.model import ModuleFacts

PROBE_NAME = "BF16_OK"
PROBE_COMMENT = "# bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back."


def torch_name(facts: ModuleFacts) -> str:
    layout = facts.layout
    return layout.torch_name if layout is not None and layout.torch_name else "torch"


def _newline(facts: ModuleFacts) -> str:
    return facts.layout.newline if facts.layout is not None else "\n"


def ensure_torch(facts: ModuleFacts) -> Tuple[str, Tuple[Edit, ...]]:
    """The local name of the torch module, with an ``import torch`` edit if it is missing."""
    layout = facts.layout
    if layout is not None and layout.torch_name:
        return layout.torch_name, ()
    at = layout.insert_at if layout is not None else 0
    return "torch", (Edit(at, at, f"import torch{_newline(facts)}"),)


def probe_expression(torch: str) -> str:
    return f"{torch}.cuda.is_available() and {torch}.cuda.get_device_capability()[0] >= 8"


def capability_probe(facts: ModuleFacts) -> Tuple[str, Tuple[Edit, ...]]:
    """The module's bf16 probe name, with the edits that create it (and ``import torch``) if missing.

    An existing module-level probe the user wrote (``BF16_OK = torch.cuda.is_bf16_supported()``,
    ``use_bf16 = major >= 8`` ...) is reused as it is.
    """
    layout = facts.layout
    if layout is not None and layout.probes:
        return layout.probes[0].name, ()
    torch, edits = ensure_torch(facts)
    nl = _newline(facts)
    at = layout.insert_at if layout is not None else 0
    text = f"{nl}{PROBE_COMMENT}{nl}{PROBE_NAME} = {probe_expression(torch)}{nl}"
    if at == 0:
        text = text[len(nl):] + nl
    elif layout is not None and not layout.blank_after:
        text += nl  # keep the probe apart from the code that follows the imports
    if edits:  # one insertion: the import, then the probe
        return PROBE_NAME, (Edit(at, at, edits[0].content + text),)
    return PROBE_NAME, (Edit(at, at, text),)


def fp32(torch: str, like: str = "") -> str:
    """``torch.float32``, or ``"float32"`` when the original was a string."""
    if like[:1] in ("'", '"'):
        return f'{like[0]}float32{like[0]}'
    return f"{torch}.float32"


def guarded_bf16_weights(torch: str, probe: str, fallback: str = "float32") -> str:
    """bf16 weights where bf16 runs natively; ``fallback`` (float32 for trained weights,
    float16 for inference-only ones) elsewhere."""
    return f"{torch}.bfloat16 if {probe} else {torch}.{fallback}"


def guarded_bf16_mode(torch: str, probe: str, bf16: str, fallback: str) -> str:
    """A bf16 *mode* that also runs on CPU (autocast dtype, ``Accelerator(mixed_precision=)``,
    Lightning ``precision=``): kept on Ampere+ and on CPU, ``fallback`` on pre-Ampere GPUs."""
    return f"{bf16} if {probe} or not {torch}.cuda.is_available() else {fallback}"


def guarded_fp16_flag(torch: str, probe: str) -> str:
    return f"{torch}.cuda.is_available() and not {probe}"


def guarded_attention(probe: str, fallback: str = "sdpa", quote: str = '"') -> str:
    return f'{quote}flash_attention_2{quote} if {probe} else {quote}{fallback}{quote}'


def no_fp16_params(model: str, torch: str) -> str:
    return f"not any(p.dtype == {torch}.float16 for p in {model}.parameters())"
