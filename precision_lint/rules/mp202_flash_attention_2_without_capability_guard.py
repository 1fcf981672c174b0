"""MP202 flash-attention-2-without-capability-guard: FlashAttention-2 hard-coded.

FlashAttention-2 kernels exist only for Ampere and newer GPUs (compute capability
8.0+). ``from_pretrained(..., attn_implementation="flash_attention_2")`` (or the
older ``use_flash_attention_2=True``) written on an A100 fails on a Kaggle P100, a
Colab T4, a V100 or a TITAN RTX. Where the ``flash-attn`` package cannot be
installed (no wheel for that GPU, or a CPU machine) transformers refuses at load
time::

    ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: the package for FlashAttention2 doesn't seem to be installed.

and where it is installed, the first forward pass dies in the kernel::

    RuntimeError: FlashAttention only supports Ampere GPUs or newer.

FlashAttention-2 also computes only in fp16/bf16: with float32 weights and no
autocast, transformers warns ``Flash Attention 2 only supports torch.float16 and
torch.bfloat16 dtypes, but the current dype in ... is torch.float32`` and the
kernel raises ``RuntimeError: FlashAttention only support fp16 and bf16 data
type``. That is reported as well (no fix: which dtype to use is a choice).

The fix follows the shared plan (``plan.py``): ``"flash_attention_2" if BF16_OK
and is_flash_attn_2_available() else "sdpa"`` — the same attention where it works,
PyTorch's fused scaled-dot-product attention (available on every GPU and CPU) where
it cannot. The second test is transformers' own (``transformers.utils``): an Ampere
GPU without the ``flash-attn`` package (a Colab A100) still raises the ImportError
above, so the capability alone is not enough.

Where the setting runs only after ``import flash_attn`` succeeded (``try: import flash_attn;
config._attn_implementation = "flash_attention_2" except ImportError: pass``), the package is
installed wherever it takes effect: the message names only the kernel's RuntimeError. So where
the value is chosen only in the branch of a test that found the package
(``"flash_attention_2" if importlib.util.find_spec("flash_attn") is not None else "sdpa"``,
transformers' ``is_flash_attn_2_available()``): that test asks nothing of the GPU.
"""
from __future__ import annotations

from ..fixes import plan
from ..diagnostics import SAFE, Edit, Fix
from ..semantic.values import CONST
from .base import Rule, RuleContext, default_note, is_parameter_default
from .migration_findings import taken_by_project_method
from .mp201_bf16_without_capability_guard import (
    capability_facts,
    pre_ampere_targets,
    probe_and_torch,
    targets_text,
    unguarded,
    unit_precision_kinds,
)

FA2 = "flash_attention_2"
LOAD_ERROR = (
    "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: "
    "the package for FlashAttention2 doesn't seem to be installed."
)
KERNEL_ERROR = "RuntimeError: FlashAttention only supports Ampere GPUs or newer."
DTYPE_ERROR = "RuntimeError: FlashAttention only support fp16 and bf16 data type"
AMP_KINDS = ("training-args", "training-args-class", "accelerator", "lightning", "autocast")


class FlashAttention2WithoutCapabilityGuard(Rule):
    code = "MP202"
    name = "flash-attention-2-without-capability-guard"
    summary = "FlashAttention-2 requested without checking for an Ampere+ GPU (or with float32 weights)"
    fix_availability = "sometimes"
    fix_applicability = SAFE

    def check(self, ctx: RuleContext):
        cap = capability_facts(ctx.facts)
        if cap is None or not cap.attention:
            return  # (before the GPUs are inferred: most modules ask for no attention kernel)
        if not pre_ampere_targets(ctx):
            return
        setup = None
        for site in cap.attention:
            if cap.call_guarded(site.span) or self._projects_own_switch(ctx, site) or cap.stated_newer_at(site.span.line):
                continue
            arg = site.arg
            if site.key == "attn_implementation":
                atoms = [v for v in arg.values if v.kind == CONST and v.value == FA2]
            else:
                atoms = [v for v in arg.values if v.kind == CONST and v.value is True]
            if not atoms:
                continue
            # as written: `_attn_implementation=` is read as `attn_implementation=` is
            key = ctx.text(arg.key_span) if arg.key_span is not None and arg.via == "keyword" else site.key
            shown = f"`{key}={arg.value_text}`"
            open_atoms = unguarded(atoms, cap)
            if open_atoms:
                if setup is None:
                    available, check_imports = plan.flash_attention_check(ctx.facts)
                    setup = (*probe_and_torch(ctx.facts, check_imports, plan.lazy_probe(ctx)), available)
                probe, _, probe_edits, available = setup
                edits = self._edits(ctx, site, open_atoms, probe, available)
                fix = None
                if edits is not None:
                    fix = Fix(
                        SAFE,
                        'Use FlashAttention-2 where the GPU and the flash-attn package have it, "sdpa" elsewhere',
                        tuple(probe_edits) + edits,
                    )
                # after a guarded `import flash_attn`, or in the branch of a test that found it
                # (`find_spec("flash_attn") is not None`), the package is there: only the kernel can refuse
                found = site.package_imported or all(any(g.package == "flash_attn" for g in a.guards) for a in open_atoms)
                errors = f"`{KERNEL_ERROR}`" if found else f"`{LOAD_ERROR}` or `{KERNEL_ERROR}`"
                message = f"{shown} without a capability check; {targets_text(ctx, 'FlashAttention-2')}, where it raises {errors}"
                if self._fp32_without_amp(ctx, site):
                    message += f"; with float32 weights and no mixed precision it also raises `{DTYPE_ERROR}`"
                if fix is None:
                    message += default_note(ctx, open_atoms)
                yield ctx.diagnostic(self.code, arg.key_span or arg.value_span, message, fix)
                continue
            # guarded, but on Ampere it still needs half-precision weights or autocast
            if self._fp32_without_amp(ctx, site):
                message = (
                    f"{shown} with float32 weights and no mixed precision: FlashAttention-2 computes only in "
                    f"fp16/bf16 and raises `{DTYPE_ERROR}`; load the weights in bf16/fp16 or train under autocast"
                )
                yield ctx.diagnostic(self.code, arg.key_span or arg.value_span, message)

    @staticmethod
    def _projects_own_switch(ctx: RuleContext, site) -> bool:
        """Whether the loader is a project class's own (``CaptionLM.from_pretrained(path,
        use_flash_attention_2=True)`` with ``def from_pretrained(cls, path,
        use_flash_attention_2=False)``): the keyword is the class's switch, which transformers
        never sees (it may fall back where flash-attn is missing), and a rewrite to
        ``attn_implementation=`` would pass that method a keyword it does not take."""
        if not site.loader or "." not in site.callee:
            return False
        owner, _, method = site.callee.rpartition(".")
        return taken_by_project_method(ctx, owner, method, site.key)

    @staticmethod
    def _fp32_without_amp(ctx: RuleContext, site) -> bool:
        if not (site.loader and site.dtypes and all(d.value == "float32" for d in site.dtypes)):
            return False
        return not (unit_precision_kinds(ctx) & set(AMP_KINDS))

    @staticmethod
    def _edits(ctx: RuleContext, site, atoms, probe: str, available: str):
        arg = site.arg
        if site.key == "attn_implementation":
            edits = []
            for atom in atoms:
                origin = atom.origin
                if origin is None or (atom.where and atom.where != ctx.path):
                    return None  # written in another file: not edited here
                if is_parameter_default(ctx.source, origin):
                    return None  # a default argument: evaluated at import, and every caller's
                text = ctx.text(origin)
                quote = text[:1] if text[:1] in ("'", '"') else '"'
                new = plan.guarded_attention(probe, quote=quote, available=available)
                whole = (origin.start, origin.end) == (arg.value_span.start, arg.value_span.end)
                edits.append(Edit(origin.start, origin.end, new if whole else f"({new})"))
            return tuple(sorted(set(edits), key=lambda e: e.start))
        # use_flash_attention_2=True → the attn_implementation it stands for
        if site.other_key or arg.key_span is None or arg.via != "keyword" or arg.value_text != "True":
            return None
        return (Edit(arg.key_span.start, arg.value_span.end, f"attn_implementation={plan.guarded_attention(probe, available=available)}"),)

