"""MP402 fp16-overflowing-constant: a mask or eps constant that float16 cannot hold.

float16's largest finite value is 65504 and its smallest positive one about
6e-8. Masking code written for float32 uses -1e9 or -1e20 as "minus infinity",
and normalisation code adds eps = 1e-8; on a float16 tensor (a ``.half()``
model, fp16 weights, an fp16 autocast region):

- ``scores.masked_fill(mask, -1e9)`` raises
  ``RuntimeError: value cannot be converted to type c10::Half without overflow``;
- ``torch.where(mask, scores, -1e10)``, ``scores[mask] = -1e20`` and an additive
  mask ``(1.0 - mask) * -1e9`` (mask cast to the model's dtype) silently give
  ``-inf``: a fully masked row then softmaxes to NaN;
- ``scores += (1.0 - mask) * -1e9`` (``-=``, ``add_``, ``sub_``, ``torch.add(..., out=)``):
  the float32 mask term is written back into the float16 ``scores`` an in-place update keeps,
  so it becomes ``-inf`` too (out of place the sum is float32, and fine);
- ``x / (norm + 1e-8)`` adds 0 — eps rounds away, and a zero norm gives inf;
- ``p.clamp(1e-8, 1 - 1e-7)`` before ``log(p)`` / ``log(1 - p)`` keeps nothing off 0 and 1:
  both bounds round onto them (the float16 just below 1 is 1 - 2**-11), so p can be 0 or 1 and
  the log is -inf.

The fix for the masking calls and assignments is ``torch.finfo(<tensor>.dtype).min``
(``.max`` for a positive constant): the most negative value of the tensor's own
dtype, what transformers' models use. Additive masks, in-place updates and eps
terms are reported without a fix (the operand's dtype may be an integer one;
adding ``finfo.min`` in place still overflows below -16; a larger eps changes
float32 results).
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

from ..diagnostics import SAFE, Fix, Related
from ..fixes.plan import ensure_torch
from ..knowledge import trainer_facts
from .base import Rule, RuleContext, replace
from .migration_findings import same_library_class
from ..project.runs import value_in_run
from ..semantic.values import HALF
from .mp101_fp16_weights_under_loss_scaling import scaling_reason

OVERFLOW = "RuntimeError: value cannot be converted to type c10::Half without overflow"
MODEL_BASES = ("torch.nn.Module", "torch.nn.modules.module.Module")
LIBRARY_MODEL_PACKAGES = ("transformers.", "diffusers.")


def _calls_unknown(project, module, paths) -> bool:
    """Whether a module of the run that imports ``module`` was not parsed (its text held no
    evidence of the selected rules): its calls are unknown, so whether it runs the evidence
    is too — counted as running, as before runs were modelled."""
    return any(
        not other.parsed and other.parse_error is None and not other.skip_file
        for path in project.importers_of(module)
        if path in paths and (other := project.by_path.get(path)) is not None
    )


def _is_model_class(name: str) -> bool:
    return name in MODEL_BASES or name.startswith("transformers.") and name.rsplit(".", 1)[-1].endswith(
        ("Model", "PreTrainedModel", "Attention", "Layer", "Block", "MLP")
    )


def _clamp_what(const, shown: str) -> str:
    """What a clamp's bound that float16 rounds onto 1 or 0 does to the log that reads it."""
    name = f"`{const.clamped}`" if const.clamped else "the clamped value"
    if const.kind == "clamp-one":
        return (
            f"the clamp's upper bound `{shown}` is 1.0 in float16 (the float16 just below 1 is 0.99951): it keeps "
            f"{name} below 1 in float32 only, and the log of `1 - {const.clamped or 'p'}` is -inf where it reaches 1 "
            "(the loss is inf or NaN)"
        )
    return (
        f"the clamp's lower bound `{shown}` is 0 in float16 (its smallest positive value is about 6e-8): it keeps "
        f"{name} above 0 in float32 only, and its log is -inf where it reaches 0 (the loss is inf or NaN)"
    )


class Fp16OverflowingConstant(Rule):
    code = "MP402"
    name = "fp16-overflowing-constant"
    summary = "masking/eps constant outside float16's range (-1e9, 1e-8) on a tensor that may be float16"
    fix_availability = "sometimes"
    fix_applicability = SAFE

    def check(self, ctx: RuleContext):
        section = ctx.facts.section("half_constants")
        if not section:
            return
        evidence = None
        reported = set()  # the constants reported: one finding per constant
        for const in section["constants"]:
            if const.kind == "inplace" and const.span.start in reported:
                continue  # already reported as an additive mask (cast to the model's dtype)
            reason, related = self._why_half(ctx, const)
            if reason is None and const.fp16:
                reason, related = self._certainly_half(ctx, const)
            model_class = const.klass or self._called_from_model(ctx, const.scope)
            if reason is None and model_class and (const.kind != "additive" or const.cast) and not _computed_at_construction(const):
                if evidence is None:
                    evidence = self._run_evidence(ctx)
                if self._model_code(ctx, model_class):
                    found = self._in_a_run(ctx, const, model_class, evidence)
                    if found is not None:
                        reason, related = f"model code, and {found[0]}", found[1]
            if reason is None:
                continue
            reported.add(const.span.start)
            yield self._finding(ctx, const, reason, related)

    # --- may the tensor be float16? --------------------------------------------------
    def _why_half(self, ctx: RuleContext, const) -> Tuple[Optional[str], Optional[Related]]:
        if "half-tensor" in const.evidence:
            return "the tensor is float16", None
        if "autocast" in const.evidence and (const.kind != "additive" or const.cast):
            return "inside an fp16 autocast region", None
        if const.autocast_op:
            return f"the tensor is float16: {const.autocast_op}", None
        return None, None

    @staticmethod
    def _certainly_half(ctx: RuleContext, const) -> Tuple[Optional[str], Optional[Related]]:
        """Why the tensor is certainly float16 (``HalfConstant.fp16``, substituted at the
        join): made float16 here, or passed float16 by a call of the constant's function. A
        helper called from several runs is judged in each with that run's calls: the call must
        lie in a run in which the constant's code runs. The first reason, best first: made
        here, then the call sites in file order."""
        project = ctx.project
        half = [v for v in const.fp16 if v.kind == HALF and not v.upcast]
        for v in half:
            if not v.where:
                return f"the tensor is float16: {v.value}", None
        if not any(v.origin is not None for v in half):
            return None, None
        there = project.run_scope(ctx.facts, const.scope, const.span.line)
        # the runs of this file, listed once for all its constants (in a package imported by
        # thousands of modules, the list is as long)
        units = project.memo(
            ("unit views", ctx.facts.path),
            lambda: [(entry.path, project.unit_view(entry)) for entry in project.units_containing(ctx.facts)],
        )
        runs_there: Dict[str, bool] = {}  # entry → whether the constant's code runs in its run

        def passed_in_a_run(v) -> bool:
            # the cheap test first: in a package imported by hundreds of scripts, the call
            # graph is asked only about the runs that hold the call site
            for entry, paths in units:
                if value_in_run(project, v, paths):
                    if entry not in runs_there:
                        runs_there[entry] = bool(project.callgraph.entries(there, paths, entry))
                    if runs_there[entry]:
                        return True
            return False

        for v in sorted(half, key=lambda v: (v.where, v.origin.start if v.origin is not None else 0)):
            if v.origin is None or not passed_in_a_run(v):
                continue
            where = f"{v.where.replace(chr(92), '/').rsplit('/', 1)[-1]}:{v.origin.line}"
            function = const.scope.rsplit(".", 1)[-1] or "the code"
            text = f"`{function}` is called with a float16 tensor at {where}: {v.value}"
            return text, Related(v.where, v.origin, "a float16 tensor passed here")
        return None, None

    @staticmethod
    def _called_from_model(ctx: RuleContext, function: str) -> str:
        """A class of this file whose methods call ``function`` (a masking helper of model code)."""
        for caller, callee in ctx.facts.call_edges:
            if callee == function and caller.count(".") >= 1:
                klass = caller.rsplit(".", 1)[0]
                if ctx.facts.class_named(klass) is not None:
                    return klass
        return ""

    def _model_code(self, ctx: RuleContext, klass: str) -> bool:
        return ctx.project.symbols.class_inherits(klass, _is_model_class, ctx.facts)

    @staticmethod
    def _made_by_a_trainer(ctx: RuleContext, klass: str, paths) -> bool:
        """Whether the model-code class ``klass`` is made, in the run of ``paths``, only by
        methods of ``Trainer`` subclasses (``self.loss_fct = FocalLoss()`` in ``__init__``,
        ``ClampedBCE()(out.logits, y)`` in ``compute_loss``; held-out 36u's F2) on a transformers
        that runs only the model's ``forward`` under fp16 autocast: from 4.35 the Trainer leaves
        autocast to accelerate, which wraps the prepared model's ``forward`` and converts its
        outputs to float32, so a loss computed on them in ``compute_loss`` is float32 (4.34 and
        older entered ``torch.cuda.amp.autocast`` around ``compute_loss`` itself). A test of
        another run that builds the class does not count."""
        if not ctx.targets.of("transformers").every_at_least(trainer_facts()["trainer_leaves_autocast_since"]):
            return False
        creators = ctx.project.callgraph.creators(klass, paths)
        symbols = ctx.project.symbols
        return bool(creators) and all(
            symbols.class_inherits(c.rpartition(".")[0], lambda n: same_library_class(n, "transformers.Trainer"), ctx.facts)
            for c in creators
        )

    def _in_a_run(self, ctx: RuleContext, const, klass: str, evidence):
        """The first piece of ``evidence`` that runs in a run holding the constant's model code
        (never an imported module's ``__main__`` block, never an uncalled helper of an
        imported module): (description, related location), or None.

        An eps (``x / (norm + 1e-8)``) is judged by the dtype of what it meets: only a cast of
        its own model class to float16 (``Net().half()``) makes that float16. A frozen float16
        VAE elsewhere in the run, fp16 autocast (which runs ``norm``/``sum`` reductions in
        float32) or an integer count (``token_counts + 1e-8`` is float32) are not evidence.
        Masking constants meet attention scores, which fp16 autocast and float16 weights of
        the run make float16. The run must build the model, too: a class the project builds
        only in another script (a conversion CLI) runs no method in this one, though an eager
        package ``__init__`` imports its module here."""
        project = ctx.project
        library_code = None  # whether the model is library model code: asked once, where needed
        for rank, text, where, kind, cast_class, module, scope in evidence:
            if const.kind == "eps" and not (
                cast_class and project.symbols.class_inherits(cast_class, lambda n: n == klass, module)
            ):
                continue
            if kind in ("amp", "forward-amp") and const.autocast_off:
                continue  # written where autocast is switched off: the run's fp16 autocast stops there
            if kind == "loaded":
                if library_code is None:
                    library_code = self._library_model_code(ctx, klass)
                if not library_code:
                    continue  # a library model's float16 weights are not this plain module's tensors
            # a model's methods run wherever its instances are called (often built through a
            # registry or config): the evidence must run in a run that holds the model's module
            there = project.run_scope(module, scope, where.span.line)
            running = project.executed_importers_of(ctx.facts)
            for entry in project.units_containing(ctx.facts):
                if entry.path != ctx.facts.path and entry.path not in running:
                    continue  # the model's module is imported there only for a type checker
                paths = project.unit_view(entry)
                if module.path not in paths or not project.callgraph.builds(klass, paths, entry.path):
                    continue  # the evidence runs elsewhere, or this run never builds the model
                if kind == "forward-amp" and self._made_by_a_trainer(ctx, klass, paths):
                    continue  # a Trainer's loss module: it meets the model's float32 outputs, outside autocast
                if project.callgraph.entries(there, paths, entry.path) or _calls_unknown(project, module, paths):
                    return text, where
        return None

    @staticmethod
    def _library_model_code(ctx: RuleContext, klass: str) -> bool:
        """Whether ``klass`` is code a library's loader builds: it derives from a transformers or
        diffusers class, or its module defines one that does (a modeling file, remote code, whose
        plain ``nn.Module`` layers the pretrained class builds). Float16 weights a library
        loads (``from_pretrained(..., torch_dtype=torch.float16)``) make those tensors float16;
        a plain ``torch.nn.Module`` of the project's own (a NeRF renderer beside a frozen fp16
        guidance pipeline) is another object, float32 unless it is itself cast."""
        symbols = ctx.project.symbols
        library = lambda n: n.startswith(LIBRARY_MODEL_PACKAGES)  # noqa: E731
        if symbols.class_inherits(klass, library, ctx.facts):
            return True
        return any(symbols.class_inherits(cls.qualname, library, ctx.facts) for cls in ctx.facts.classes)

    def _run_evidence(self, ctx: RuleContext):
        """How the runs this file belongs to may make model tensors float16, best first:
        (rank, description, related location, "loaded" (a loader's float16 weights), "weights"
        (a cast) or "amp", the class cast to float16
        or "", its module, its scope); float16 weights first, then fp16 autocast, then the
        switches that turn it on (``fp16=True``, ``mixed_precision="fp16"``, a ``GradScaler``)."""
        found = []
        autocast_dtypes = []  # whether each autocast region of the joined code may be float16
        project = ctx.project
        for module in project.joined_modules(ctx.facts, "weights", "half_constants", "precision"):
            # each module's own evidence, worked out once for every file whose runs hold it
            evidence, dtypes = project.memo(("mp402 evidence", module.path), lambda module=module: _module_evidence(project, module))
            found.extend(evidence)
            autocast_dtypes.extend(dtypes)
        if autocast_dtypes and not any(autocast_dtypes):
            # a GradScaler makes no tensor float16: the autocast regions do, and every one of
            # them is bf16 here (a scaler beside bf16 autocast is redundant, not fp16)
            found = [f for f in found if f[0] != 3]
        return sorted(found, key=lambda f: (f[0], f[2].path, f[2].span.start))

    # --- the finding ------------------------------------------------------------------
    def _finding(self, ctx: RuleContext, const, reason: str, related: Optional[Related]):
        shown = const.text
        if const.kind == "masked_fill":
            what = f"`masked_fill(..., {shown})` raises `{OVERFLOW}` on a float16 tensor"
        elif const.kind == "where":
            what = f"`torch.where(..., {shown})` turns into -inf on a float16 tensor (a fully masked row softmaxes to NaN)"
        elif const.kind == "subscript":
            what = f"`{const.tensor}[...] = {shown}` stores -inf in a float16 tensor (a fully masked row softmaxes to NaN)"
        elif const.kind == "additive":
            what = f"the additive mask constant `{shown}` overflows to -inf in float16 (a fully masked row softmaxes to NaN)"
        elif const.kind == "inplace":
            into = f"`{const.tensor}`" if const.tensor else "the tensor"
            subtracted = "-=" in const.update or ".sub_(" in const.update or "torch.sub(" in const.update
            inf = "-inf" if const.value < 0 else "inf"  # the sign it is added with
            then = "a fully masked row softmaxes to NaN" if inf == "-inf" else "inf - inf gives NaN"
            verb = "subtracts" if subtracted else "adds"
            what = (
                f"{const.update} {verb} `{shown}` in place: the result is written back in {into}'s own dtype, "
                f"float16, where it becomes {inf} ({then})"
            )
        elif const.kind in ("clamp-one", "clamp-zero"):
            what = _clamp_what(const, shown)
        else:
            named = "" if shown.lstrip("-+").replace(".", "", 1).replace("e-", "", 1).isdigit() else f" ({const.value:g})"
            what = f"`+ {shown}`{named} adds 0 in float16 (its smallest positive value is about 6e-8), so it guards nothing"
        message = f"{what} ({reason})" + ("; float16 holds at most ±65504" if const.kind not in ("eps", "clamp-one", "clamp-zero") else "")
        fix = None
        if const.kind in ("masked_fill", "where", "subscript") and const.tensor:
            torch, edits = ensure_torch(ctx.facts)
            bound = "min" if const.value < 0 else "max"
            new = f"{torch}.finfo({const.tensor}.dtype).{bound}"
            message += f"; use `{new}`"
            fix = Fix(SAFE, f"Use `{new}`", (replace(const.span, new),) + tuple(edits))
        elif const.kind == "inplace":
            name = const.tensor or "<the tensor>"
            bound = "min" if inf == "-inf" else "max"
            beyond = "below -16" if bound == "min" else "above 16"
            message += (
                f"; replace the masked positions instead: `{name}.masked_fill(<mask>, torch.finfo({name}.dtype).{bound})` "
                f"(adding `finfo.{bound}` in place still overflows where a value is {beyond})"
            )
        elif const.kind in ("additive", "masked_fill", "where", "subscript"):
            bound = "min" if const.value < 0 else "max"
            message += f"; use `torch.finfo(<the tensor>.dtype).{bound}`"
        elif const.kind in ("clamp-one", "clamp-zero"):
            held = "1 - 1e-3" if const.kind == "clamp-one" else "1e-4"
            into = f"`{const.tensor}.float().clamp(...)`" if const.tensor else "`.float()` before the clamp"
            message += f"; clamp and take the log in float32 ({into}), or use a bound float16 holds (`{held}`)"
        else:
            message += "; compute in float32 or use an eps float16 can hold (1e-4 … 1e-6)"
        return ctx.diagnostic(self.code, const.span, message, fix, (related,) if related else ())


# the kinds of constant whose result is a value computed with it, not the constant stored
_COMPUTED_WITH = ("eps", "clamp-zero", "clamp-one")


def _computed_at_construction(const) -> bool:
    """Whether ``const`` is computed with in a class's ``__init__`` (``torch.log(var.clamp(min=
    1e-20))`` of a noise schedule, ``1 / (std + 1e-8)``): the module's construction, which no
    fp16 autocast of the run reaches and which runs before any ``.half()`` of the module, so
    its tensors are float32 there and the result (a finite ``-46.05``) keeps in float16 when
    the buffer is cast later. Review 29c: a DDPM schedule buffer read as model code under the
    run's fp16 autocast. A constant stored as it is (``torch.full(..., -1e9)`` as a buffer, a
    mask fill) is not: a later cast of the buffer overflows it. Local evidence that the tensor is
    float16 (a float16 factory, a region of autocast) is read before this, and still counts."""
    return const.kind in _COMPUTED_WITH and const.scope.rsplit(".", 1)[-1] == "__init__"


def _module_evidence(project, module):
    """One module's part of ``Fp16OverflowingConstant._run_evidence``: its float16 weights and
    casts of model classes, its fp16 autocast regions and switches, and whether each of its
    autocast regions may be float16."""
    found = []
    autocast_dtypes = []
    for site in module.section("weights"):
        if "float16" in site.dtypes:
            where = Related(module.path, site.span, "float16 weights here")
            # a loader's `torch_dtype=torch.float16`: a library model's weights
            kind = "loaded" if site.kind == "dtype-kwarg" and not site.builds else "weights"
            found.append((0, "the run loads float16 weights", where, kind, "", module, site.scope))
    casts = module.section("half_constants")
    for qualname, span, _, scope in casts["half_casts"] if casts else ():
        if qualname and project.symbols.class_inherits(qualname, _is_model_class, module):
            where = Related(module.path, span, "the model is cast to float16 here")
            found.append((0, "the run casts the model to float16", where, "weights", qualname, module, scope))
    for site in module.section("precision"):
        if site.kind == "autocast":
            dtype = site.arg("dtype")
            may_be_half = dtype is None or any(getattr(v, "value", None) in ("float16", None) for v in dtype.values)
            autocast_dtypes.append(may_be_half)
            if dtype is None or any(getattr(v, "value", None) == "float16" for v in dtype.values):
                where = Related(module.path, site.span, "fp16 autocast here")
                found.append((1, "the run uses fp16 autocast", where, "amp", "", module, site.scope))
            continue
        text = scaling_reason(site, module, project)
        if text:
            rank = 3 if site.kind == "grad-scaler" else 2
            where = Related(module.path, site.span, "fp16 switched on here")
            # a Trainer's fp16, or an Accelerator's (the one a Trainer makes, under an `accelerate
            # launch --mixed_precision fp16`): autocast around the prepared model's forward only
            kind = "forward-amp" if site.kind in ("training-args", "training-args-class", "accelerator") else "amp"
            found.append((rank, f"the run uses {text}", where, kind, "", module, site.scope))
    return found, autocast_dtypes
