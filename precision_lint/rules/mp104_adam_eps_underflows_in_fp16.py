"""MP104 adam-eps-underflows-in-fp16: Adam's eps is 0 for float16 parameters.

Adam divides by ``sqrt(v) + eps``. For float16 parameters, torch keeps the moment
estimates in float16 too, and float16's smallest positive value is 2**-24 ≈ 6e-8:
the default ``eps=1e-8`` rounds to exactly 0. Wherever a gradient is 0 (an
embedding row not in the batch, a masked position) or so small that its square
underflows, the update is ``0 / 0`` or ``m / 0``: NaN or inf in the parameters
after the first ``optimizer.step()``, and ``loss=nan`` from the next step on.
Nothing raises. This reproduces on CPU with a ``.half()`` model and
``torch.optim.AdamW``.

apex's ``amp.initialize(model, opt, opt_level="O2")`` (or ``master_weights=True``)
is not this: it hands the optimizer float32 master copies of the float16 weights.

Two ways out, both changing the run (so the fix is unsafe): keep float32 master
weights (MP101's ``fp32-master`` plan: weights in float32, fp16 only under
autocast), or an eps float16 can hold — the fix writes ``eps=1e-4``.
"""
from __future__ import annotations

import ast
from typing import Optional

from ..diagnostics import UNSAFE, Fix, Related
from ..knowledge import trainer_fused_default
from ..semantic.literal_tests import chosen_apart, conjuncts, never_together, values_tested
from ..semantic.values import HALF
from ..project.configurations import casts_nowhere, wrapped_in_shipped_runs
from .base import Rule, RuleContext, base_dtype_adapters, base_dtype_note, insert, replace

FP16_SMALLEST = 2.0 ** -24  # smallest positive float16 (subnormal)
SAFE_EPS = "1e-4"


def _half_owners(ctx: RuleContext):
    """Names bound to float16 models in this file whose parameters an optimizer updates, with
    where they become float16: (name → [(Related, the weights site or None, its scope)]). A
    frozen model (``requires_grad_(False)``, only called under ``no_grad``) has no gradients,
    so Adam never updates it; a model wrapped by ``get_peft_model`` trains its float32 adapters
    only, save on the peft that makes them in the base's dtype (:func:`_float16_adapters`)."""
    found = {}
    untrained = set()
    judged = set()  # the casts a weights site stands for (the same `.half()` the casts below list)
    for site in ctx.facts.section("weights"):
        if "float16" not in site.dtypes:
            continue
        judged.add(site.span.start)
        if casts_nowhere(site.cast_when):
            continue
        if not site.trainable or _adapters_only(ctx, site):
            untrained.update((t, site.scope) for t in site.targets)
            continue
        for target in site.targets + site.parts:  # `pipe.unet` of a float16 `pipe`, trained
            found.setdefault(target, []).append((Related(ctx.path, site.span, "float16 parameters made here"), site, site.scope))
    casts = ctx.facts.section("half_constants")
    for _, span, targets, scope in casts["half_casts"] if casts else ():
        if span.start in judged:
            continue  # judged with its weights site (trained or not, made after the optimizer or not)
        for target in targets:
            if (target, scope) not in untrained:
                found.setdefault(target, []).append((Related(ctx.path, span, "float16 parameters made here"), None, scope))
    return found


def _trained_by(ctx: RuleContext, optimizer):
    """``(name, where)`` for trainable float16 weights whose object this optimizer is seen
    taking under another name (``AdamW(trainable.parameters())`` with ``trainable = unet`` and
    ``unet.to(dtype=torch.float16)``: ``WeightsSite.trained_by``); None otherwise."""
    for site in ctx.facts.section("weights"):
        if "float16" in site.dtypes and site.trainable and optimizer.span.start in site.trained_by:
            if not _adapters_only(ctx, site) and not _made_after(site, optimizer) and not casts_nowhere(site.cast_when):
                return optimizer.owners[0], Related(ctx.path, site.span, "float16 parameters made here"), site
    return None


def _adapters_only(ctx: RuleContext, site) -> bool:
    """Whether only float32 adapters of this float16 model train: it is wrapped by
    ``get_peft_model`` (in every run, or in every run the project ships: ``--use_lora`` of
    ``if args.use_lora:``, ``project/configurations.py``), by a peft that keeps them float32."""
    if site.peft:
        return not _float16_adapters(ctx, site)
    return wrapped_in_shipped_runs(site.peft_when) and base_dtype_adapters(ctx) is None


def _float16_adapters(ctx: RuleContext, site) -> bool:
    """Whether the LoRA adapters ``get_peft_model`` adds to this float16 model are float16 too:
    the wrap is all that would keep them float32 (``WeightsSite.lora_wrap``) and every peft the
    file targets makes them in the base layer's dtype (0.7 to 0.11: ``base_dtype_adapters``)."""
    return bool(site.lora_wrap) and base_dtype_adapters(ctx) is not None


def _visible(name: str, made_in: str, used_in: str, bound_in: Optional[str] = None) -> bool:
    """Whether a name bound to a float16 model in scope ``made_in`` is the one the optimizer
    in ``used_in`` reads: the same code, a module-level or enclosing function's binding, or
    ``self.x`` set in another method of the same class. Two functions that each bind their own
    ``model`` (an fp16 evaluation and an fp32 training) hold two objects; where the optimizer's
    code reads the name from ``bound_in`` (its own local), a binding elsewhere is another object
    (a later notebook cell's ``model`` for inference)."""
    if bound_in is not None and made_in != bound_in:
        return False
    if made_in == used_in or used_in.startswith(made_in + "."):
        return True
    return name.startswith("self.") and made_in.rsplit(".", 1)[0] == used_in.rsplit(".", 1)[0]


def _through_helpers(ctx: RuleContext, optimizer):
    """The names (and, for parameters of the optimizer's function, their references) whose
    parameters a project helper returns to the optimizer (``AdamW(lowrank_params(net))`` with
    ``def lowrank_params(m): return [p for n, p in m.named_parameters() if "lora_" in n]``, in
    this module or another): the helper's ``parameter_returns`` facts, matched to the call's
    arguments by position or keyword."""
    names, refs = [], []
    for callee, args in optimizer.owner_calls:
        module, canonical = ctx.project.symbols.resolve(callee, ctx.facts)
        if module is None:
            continue
        returned = dict(module.section("parameter_returns") or ()).get(canonical, ())
        for helper_ref in returned:
            for position, keyword, name, ref in args:
                if (position is not None and position == helper_ref.index) or keyword == helper_ref.name:
                    names.append(name)
                    if ref is not None:
                        refs.append(ref)
    return tuple(names), tuple(refs)


def _passed_by_callers(ctx: RuleContext, owner_params):
    """``(name, where, None)`` where the optimizer's parameters are those of a parameter of its
    function (``def fit(net): AdamW(net.parameters())``) and a call of that function, in this
    file or another, passes a float16 model (``fit(AutoModelForCausalLM.from_pretrained(...,
    torch_dtype=torch.float16))``): the join's values of the parameter (``project/interproc.py``),
    where the caller's weights facts make that model float16 and trained (not frozen, not cast
    back in place, not wrapped by a peft that keeps float32 adapters) and no later binding of
    its name there makes it another dtype (``net = net.to(torch.float32)``); None otherwise."""
    for ref in owner_params:
        for v in ctx.project.calls.arguments(ref, near=ctx.path):
            if v.kind != HALF or v.origin is None:
                continue
            caller = ctx.project.module_at(v.where or ctx.path)
            weights = _trained_half_at(ctx, caller, v.origin) if caller is not None else None
            if weights is not None:
                where = Related(caller.path, v.origin, f"float16 parameters made here, passed to `{ref.function.rsplit('.', 1)[-1]}` as `{ref.name}`")
                return ref.name, where, None
    return None


def _trained_half_at(ctx: RuleContext, module, span):
    """The float16 weights site of ``module`` at ``span`` that trains as float16 there."""
    sites = module.section("weights") or ()
    for site in sites:
        if site.span.start > span.end or span.start > site.span.end or "float16" not in site.dtypes:
            continue
        if not site.trainable or _adapters_only(ctx, site) or casts_nowhere(site.cast_when):
            return None
        if any(
            w.scope == site.scope and set(w.targets) & set(site.targets) and w.span.start > site.span.end and "float16" not in w.dtypes
            for w in sites
        ):
            return None  # made another dtype again under the same name (`net = net.to(torch.float32)`)
        return site
    return None


def _made_after(weights, optimizer) -> bool:
    """A model made float16 after the optimizer was built, in the same scope, that is not the
    object whose parameters the optimizer holds: *loaded* in float16 there (a new object), or
    cast in place where nothing in the module trains what the cast reaches (the name bound
    again in between: a later notebook cell reloads the model for chatting and casts that one,
    ``training_state.TrainedObjects``; an in-place cast of the optimizer's own model is trained)."""
    if weights is None or weights.scope != optimizer.scope or weights.span.start <= optimizer.span.start:
        return False
    return weights.kind == "dtype-kwarg" or not (weights.trained or weights.trained_by or weights.trained_if)


def _tested_apart(weights, optimizer) -> bool:
    """Whether every float16 value of the weights is chosen under a test that contradicts the
    tests the optimizer is built under (``semantic.literal_tests``): float16 where
    ``opt.optim == "legacy"``, Adam where ``opt.optim == "adam"``."""
    if weights is None:
        return False
    if weights.cast_if and optimizer.built_if and never_together([weights.cast_if], [optimizer.built_if]):
        return True  # cast under `if args.fp16:`, the optimizer built under its `else:` (review 27d)
    return chosen_apart(weights.float16_values(), [optimizer.built_if])


def _stepped_by_a_scaler(ctx: RuleContext, optimizer, weights=None) -> bool:
    """Whether the optimizer is stepped through a GradScaler that is on (``scaler.step(optimizer)``
    of ``GradScaler()``, no ``enabled=`` that may be off), or on exactly where the weights are
    float16 (``enabled=(dtype == torch.float16)`` for weights cast ``.to(dtype)``: review 27d):
    the step unscales the float16 gradients first and raises ``ValueError: Attempting to
    unscale FP16 gradients.`` (MP101) before Adam runs, so no eps is ever used (review 26d:
    rl-knowledge-distillation), as a Trainer given ``fp16=True`` raises first."""
    if not optimizer.stepped_by:
        return False
    # (a scaler built under a test, `GradScaler() if args.fp16 else None`, leaves Adam stepped
    # alone where the test fails)
    return any(
        s.kind == "grad-scaler" and (s.built_on() is True or _on_where_float16(s, weights))
        and set(s.targets) & set(optimizer.stepped_by)
        for s in ctx.facts.section("precision")
    )


def _on_where_float16(scaler, weights) -> bool:
    """Whether a scaler built under no test is enabled by a comparison of the very expression
    that gives the weights their dtype with float16 (``enabled=(dtype == torch.float16)``,
    ``.to(dtype)``): on in every configuration where those weights are float16."""
    enabled = scaler.arg("enabled")
    if scaler.built_if or enabled is None or weights is None or not weights.edit_text:
        return False
    tests = [values_tested(t) for t in conjuncts(enabled.value_text)]
    if len(tests) != 1 or tests[0] is None:
        return False
    subject, values, refused = tests[0]
    dtype = conjuncts(weights.edit_text)
    return (
        not refused and len(dtype) == 1 and subject == ast.dump(dtype[0])
        and values <= {("name", "torch.float16"), ("name", "torch.half"), ("literal", "fp16"), ("literal", "float16")}
    )


def _fused_by_default(ctx: RuleContext) -> bool:
    """Whether every transformers and torch the code targets make a Trainer's default optimizer
    torch's fused AdamW (transformers 4.54 with torch 2.8: ``knowledge.trainer_fused_default``),
    whose float32 arithmetic keeps eps 1e-8 (48a: an SFT notebook on unpinned libraries)."""
    fused = trainer_fused_default()
    return ctx.targets.of(fused.library).every_at_least(fused.since) and ctx.targets.of("torch").every_at_least(fused.torch_since)


class AdamEpsUnderflowsInFp16(Rule):
    code = "MP104"
    name = "adam-eps-underflows-in-fp16"
    summary = "Adam/AdamW updating float16 parameters with eps below float16's smallest value (default 1e-8): NaN parameters"
    fix_availability = "always"
    fix_applicability = UNSAFE

    def check(self, ctx: RuleContext):
        sites = ctx.facts.section("optimizers")
        if not sites:
            return
        owners = None
        for site in sites:
            if not (site.owners or site.owner_calls) or not all(e is not None and e < FP16_SMALLEST for e in site.eps):
                continue
            if site.fp32_master or site.fused or (site.default_optim and _fused_by_default(ctx)):
                # apex O2 steps float32 copies; a fused Adam computes in float32: eps is a float32 there
                continue
            if owners is None:
                owners = _half_owners(ctx)
            names, refs = _through_helpers(ctx, site)
            made = next(
                (
                    (o, where, weights)
                    for o in (*site.owners, *names)
                    for where, weights, scope in owners.get(o, ())
                    if _visible(o, scope, site.scope, dict(site.owner_scopes).get(o)) and not _made_after(weights, site)
                ),
                None,
            ) or _trained_by(ctx, site) or _passed_by_callers(ctx, (*site.owner_params, *refs))
            if made is None or _tested_apart(made[2], site) or _stepped_by_a_scaler(ctx, site, made[2]):
                continue
            yield self._finding(ctx, site, *made)

    def _finding(self, ctx: RuleContext, site, model: str, where: Related, weights=None):
        name = site.callee.rsplit(".", 1)[-1]
        eps = f"eps={site.eps_text}" if site.eps_span is not None else "the default eps=1e-8"
        if site.trainer:  # the AdamW a Trainer builds itself from its TrainingArguments
            name = f"{site.trainer}`'s own `AdamW"
            eps = f"adam_epsilon={site.eps_text}" if site.eps_span is not None else "the default adam_epsilon=1e-8"
        what, related, peft_note = f"the float16 parameters of `{model}`", (where,), ""
        if weights is not None and weights.peft:  # float16 adapters of a peft that makes them so
            what = f"the float16 LoRA adapters that {weights.lora_wrap} (line {weights.lora_wrap_span.line}) adds to `{model}`"
            related += (Related(ctx.path, weights.lora_wrap_span, "adapters made in the base's float16 dtype here"),)
            peft_note = f"; {base_dtype_note(base_dtype_adapters(ctx))}"
        message = (
            f"`{name}` updates {what} with {eps}, which rounds to 0 in float16 "
            f"(smallest value ≈ 6e-8): where a gradient is 0 or tiny, `sqrt(v) + eps` is 0 and the first "
            f"step writes NaN/inf into the parameters (`loss=nan` afterwards); keep float32 master weights "
            f"(MP101 `fp32-master`) or use `{site.eps_keyword}={SAFE_EPS}`{peft_note}"
        )
        if site.eps_span is not None:
            edit = replace(site.eps_span, SAFE_EPS)
        elif site.insert_at >= 0:
            edit = insert(site.insert_at, site.keyword_text(site.eps_keyword, SAFE_EPS))
        else:
            edit = None  # a Trainer given no TrainingArguments: nowhere to write it
        fix = Fix(UNSAFE, f"Use `{site.eps_keyword}={SAFE_EPS}` (representable in float16)", (edit,)) if edit is not None else None
        return ctx.diagnostic(self.code, site.func_span, message, fix, related)
