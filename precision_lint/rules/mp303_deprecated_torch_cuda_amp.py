"""MP303 deprecated-torch-cuda-amp: ``torch.cuda.amp.*`` (or ``torch.cpu.amp.*``) instead of ``torch.amp.*``.

torch 2.4 deprecated the device-specific AMP entry points in favour of the
device-generic ones, and every call now warns::

    FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated. Please use
    `torch.amp.GradScaler('cuda', args...)` instead.

(the same for ``autocast`` and ``custom_fwd``/``custom_bwd``, which want
``device_type='cuda'``, and for ``torch.cpu.amp.autocast`` / ``GradScaler``, which become
``torch.amp.autocast('cpu', ...)``). The old names are thin wrappers slated for removal.
The fix rewrites each use to ``torch.amp`` with the device made explicit,
keeping every argument and comment: ``torch.cuda.amp.autocast(True,
torch.float16)`` becomes ``torch.amp.autocast("cuda", enabled=True,
dtype=torch.float16)`` because the new signature puts ``dtype`` before
``enabled``.

Both depend on the torch the file targets (``workspace/versions.py``: its project's torch
pin, else the torch of the time of its pinned transformers / accelerate / TRL, else the
installed one, ended before 2.0 where the file must import ``torch._six``, directly or through
a module of its tree; the versions are data in ``knowledge/torch.toml``, read in the wheels):

- torch 2.3 and older warn about nothing: where no allowed torch is 2.4 or later (a project
  pinning ``transformers==4.27.1`` and ``torch>=1.10`` targets torch below 2.1) nothing is
  reported; where only some are, the finding names them;
- the new spellings are younger than the old ones: ``torch.amp.autocast`` exists from
  torch 1.12, ``torch.amp.GradScaler`` from 2.3, ``torch.amp.custom_fwd``/``custom_bwd``
  from 2.4. The fix is offered only where the *lowest* allowed torch has it (on torch 2.2
  ``torch.amp.GradScaler("cuda")`` is an ``AttributeError``).

A use in a branch chosen by torch's version or by what torch has is the fallback for old torch,
meant to be there, and is not reported: ``if version.parse(torch.__version__) >= ...``, a torch
version helper (``is_torch_version("<", "2.3")``, a function of the project that returns such a
test), ``hasattr(torch.amp, "GradScaler")``, or a variable bound to one of them. The test is read
from its tree, never from its words: ``if args.version == 2:`` is no such test, nor a comment
that says "torch version". So is a use in an ``except`` handler of a ``try`` whose body calls the
same entry point of ``torch.amp`` (``try: torch.amp.GradScaler(device=d)`` / ``except
AttributeError: torch.cuda.amp.GradScaler()``): the handler runs only on a torch without it. And
so is a use after ``if hasattr(torch.amp, "GradScaler"):`` whose body is a ``try`` returning the
new spelling on every path, its handlers falling through (``cuda_amp._after_tried``).
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from ..diagnostics import SAFE, Edit, Fix
from ..fixes.plan import ensure_torch
from ..knowledge import amp_facts
from .base import Rule, RuleContext, insert, replace

AUTOCAST_POSITIONAL = ("enabled", "dtype", "cache_enabled")  # torch.cuda/cpu.amp.autocast's order


class DeprecatedTorchCudaAmp(Rule):
    code = "MP303"
    name = "deprecated-torch-cuda-amp"
    summary = "`torch.cuda.amp.GradScaler/autocast/custom_fwd/custom_bwd` (and `torch.cpu.amp`'s) are deprecated: use `torch.amp` with the device"
    fix_availability = "sometimes"
    fix_applicability = SAFE

    def check(self, ctx: RuleContext):
        section = ctx.facts.section("cuda_amp")
        if not section:
            return
        uses = section["uses"]
        # the fallbacks for torch versions without torch.amp are meant to be there; where every
        # use is one (or there is none: every module has the section), the versions the file
        # targets are not asked
        # a reference to the callable, called elsewhere (`ctx = torch.cuda.amp.autocast if fp16 else
        # nullcontext` ... `with ctx():`), warns at each call as a call does
        reported = [
            use for use in (*uses, *section.get("references", ()))
            if not use.version_gated and not any(t.dist == "torch" for t in ctx.project.helper_tests(ctx.facts, use.version_helpers))
        ]
        if not reported:
            return
        torch = ctx.targets.of("torch")
        if not torch.some_at_least(amp_facts()["cuda_amp_deprecated_in"]):
            return  # no torch the file targets warns (torch.cuda.amp is the API of its time)
        rewritable = self._rewritable_imports(ctx, section["imports"], uses)
        for use in reported:
            yield self._finding(ctx, use, rewritable, torch)

    @staticmethod
    def new_since(name: str):
        """The first torch that has ``torch.amp.<name>``."""
        amp = amp_facts()
        if name in ("custom_fwd", "custom_bwd"):
            return amp["custom_fwd_since"]
        return amp["grad_scaler_since"] if name == "GradScaler" else amp["autocast_since"]

    # --- imports ----------------------------------------------------------------
    def _rewritable_imports(self, ctx: RuleContext, imports, uses) -> Dict[str, Edit]:
        """Local names whose import can move to ``torch.amp`` as it is (every mention of the
        name in the file is the import itself or a use this rule rewrites), with that edit."""
        out: Dict[str, Edit] = {}
        for imp in imports:
            edit = self._import_edit(imp)
            if edit is None:
                continue
            locals_ = [local for local, _ in imp.bindings]
            if all(self._only_rewritten_mentions(ctx, local, imp, uses) for local in locals_):
                for local in locals_:
                    out[local] = edit
        return out

    @staticmethod
    def _import_edit(imp) -> Optional[Edit]:
        from ..facts.extractors.cuda_amp import OLD_MODULES

        if imp.kind == "import":
            span = imp.alias_spans[0]
            if imp.module_text not in OLD_MODULES:
                return None
            return replace(span, "torch.amp")
        if imp.module_text in OLD_MODULES and all(
            full.rsplit(".", 1)[-1] in OLD_MODULES[imp.module_text][1] for _, full in imp.bindings
        ):
            return replace(imp.module_span, "torch.amp")
        if imp.module_text in ("torch.cuda", "torch.cpu") and all(full == f"{imp.module_text}.amp" for _, full in imp.bindings):
            return replace(imp.module_span, "torch")
        return None

    @staticmethod
    def _only_rewritten_mentions(ctx: RuleContext, local: str, imp, uses) -> bool:
        word = re.compile(rf"\b{re.escape(local)}\b")
        mine = [u for u in uses if u.head == local]
        if any(u.func_text not in (local, f"{local}.{u.name}") for u in mine):
            return False
        expected = len(word.findall(imp.text)) + sum(len(word.findall(u.func_text)) for u in uses)
        return len(word.findall(ctx.source)) == expected

    # --- uses -------------------------------------------------------------------
    def _callee(self, ctx: RuleContext, use, rewritable) -> Tuple[str, Tuple[Edit, ...]]:
        """The new callee text, with the edits (an import) it needs."""
        if use.head_binds == "torch" and use.func_text.startswith(f"{use.head}.{use.device}.amp."):
            return f"{use.head}.amp.{use.name}", ()
        if use.head in rewritable and use.head_binds.startswith(_old(use)):
            return use.func_text, (rewritable[use.head],)
        torch, edits = ensure_torch(ctx.facts)
        return f"{torch}.amp.{use.name}", edits

    def _argument_edits(self, use) -> Optional[List[Edit]]:
        edits: List[Edit] = []
        device = f'"{use.device}"'
        if use.name in ("custom_fwd", "custom_bwd"):
            keyword = f"device_type={device}"
            if not use.args:
                return [insert(use.open_paren, keyword)]
            first_kw = next((a for a in use.args if a[1] is not None and a[1] != "*"), None)
            if first_kw is not None:
                return [insert(first_kw[0], f"{keyword}, ")]
            return [insert(use.args[-1][2], f", {keyword}")]
        if not use.args:
            return [insert(use.open_paren, device)]
        if _passes_device_type(use):
            return []  # `torch.amp.autocast(device_type="cuda", ...)` as written (see _finding)
        if use.name == "autocast":
            position = 0
            for start, kw, _ in use.args:
                if kw == "*":
                    return None  # positions after a splat are unknown
                if kw is None:
                    if position >= len(AUTOCAST_POSITIONAL):
                        return None
                    edits.append(insert(start, f"{AUTOCAST_POSITIONAL[position]}="))
                    position += 1
        first = use.args[0][0]
        if edits and edits[0].start == first:
            edits[0] = insert(first, f"{device}, {edits[0].content}")
        else:
            edits.insert(0, insert(first, f"{device}, "))
        return edits

    def _finding(self, ctx: RuleContext, use, rewritable, torch):
        from ..workspace.versions import version_text

        old = f"{_old(use)}.{use.name}"
        if use.name in ("custom_fwd", "custom_bwd"):
            new = f"torch.amp.{use.name}(..., device_type='{use.device}')"
        else:
            new = f"torch.amp.{use.name}('{use.device}', ...)"
        deprecated = amp_facts()["cuda_amp_deprecated_in"]
        message = (
            f"`{old}` is deprecated (`FutureWarning: `{old}(args...)` is deprecated`) and will be "
            f"removed; use `{new}`"
        )
        if _passes_device_type(use):
            # `torch.cuda.amp.autocast(enabled, dtype, cache_enabled)` has no such parameter: the
            # call fails on every torch, at the first batch (review 32; torch 2.13 says
            # `autocast.__new__()`, the releases before the deprecation `autocast.__init__()`)
            message = (
                f"`{old}` takes no `device_type=` (`TypeError: autocast.__new__() got an unexpected keyword "
                f"argument 'device_type'` on every torch): the `with` fails at the first batch; use "
                f"`torch.amp.autocast(device_type=...)`, which takes it"
            )
        elif not torch.every_at_least(deprecated):
            message = (
                f"`{old}` is deprecated from torch {version_text(deprecated)} (`FutureWarning`), which "
                f"{torch.where()} allows ({torch.from_version(deprecated)}); use `{new}`"
            )
        since = self.new_since(use.name)
        if not torch.has_since(since):
            why = f"`torch.amp.{use.name}` does not exist before torch {version_text(since)}, which {torch.where()} allows"
            return ctx.diagnostic(self.code, use.func_span, f"{message} (no fix: {why})")
        if use.base_class:
            why = (
                f"a base class, whose `__init__` each instance runs; derive from `torch.amp.{use.name}` "
                f"and pass '{use.device}' to it"
            )
            return ctx.diagnostic(self.code, use.func_span, f"{message} (no fix: {why})")
        if use.reference:
            why = "a reference, called elsewhere"
            if use.name in ("autocast", "GradScaler"):
                why += (
                    f"; `functools.partial(torch.amp.{use.name}, '{use.device}')` takes the same keywords, "
                    "not the same positional arguments"
                )
            return ctx.diagnostic(self.code, use.func_span, f"{message} (no fix: {why})")
        if use.through_variable:
            why = (
                f"called through the variable `{use.func_text}`: where it holds another callable a rewrite of "
                f"this call would call `{new.split('(')[0]}` there too; change what it is assigned"
            )
            return ctx.diagnostic(self.code, use.func_span, f"{message} (no fix: {why})")
        callee, extra = self._callee(ctx, use, rewritable)
        if use.is_call:
            arg_edits = self._argument_edits(use)
            if arg_edits is None:
                return ctx.diagnostic(self.code, use.func_span, message + " (no fix: arguments through `*args`)")
            edits = [replace(use.func_span, callee)] if callee != use.func_text else []
            edits += arg_edits
        else:
            edits = [replace(use.func_span, f'{callee}(device_type="{use.device}")')]
        fix = Fix(SAFE, f"Use `{new}`", tuple(edits) + tuple(extra))
        return ctx.diagnostic(self.code, use.func_span, message, fix)


def _passes_device_type(use) -> bool:
    """Whether a call of ``torch.cuda.amp.autocast`` passes ``device_type=`` (``torch.autocast``'s
    keyword, which it does not take)."""
    return use.name == "autocast" and use.is_call and any(kw == "device_type" for _, kw, _ in use.args)


def _old(use) -> str:
    """The deprecated module of a use: ``torch.cuda.amp`` or ``torch.cpu.amp``."""
    return f"torch.{use.device}.amp"
