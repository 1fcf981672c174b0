"""MP101 fp16-weights-under-loss-scaling: trainable float16 weights meet a GradScaler.

fp16 mixed precision keeps *master weights in float32*: autocast runs the matmuls
in float16, and the GradScaler multiplies the loss so small gradients survive,
then divides them back (``unscale_``) before the optimizer step. That division is
refused for float16 gradients, which is what float16 *parameters* produce::

    ValueError: Attempting to unscale FP16 gradients.

It happens at the first optimizer step (in the Trainer, inside gradient clipping)
whenever the parameters are float16 — ``from_pretrained(..., torch_dtype=torch.float16)``,
``model.half()``, ``model.to(torch.float16)`` — and loss scaling is on:
``TrainingArguments(fp16=True)`` (and TRL configs), ``GradScaler(...)``,
``Accelerator(mixed_precision="fp16")``, Lightning ``precision="16-mixed"``.
A Trainer that runs DeepSpeed (``deepspeed=`` set, in the call or in the configuration file
that fills it) is not torch loss scaling: DeepSpeed's fp16 keeps fp32 master weights and its
own loss scaler, and no GradScaler is made. The values of one configuration file are judged
together (``project/configurations.py``): its ``fp16``, its ``deepspeed`` and the fields that
decide whether the model is wrapped in PEFT adapters. So is a GradScaler that a project's own
Trainer builds under a test of the arguments its caller passes (``if args.fp16 and not
args.deepspeed: self.scaler = GradScaler()``, ``Trainer(args=training_args)``): the test is
judged in each configuration of the caller's run (``built_configurations``). The two halves are often in different files
(seed 001: the model is loaded in ``model_utils.py``, ``fp16=True`` is set in the
training script); files are joined along imports.

An ``Accelerator()`` without ``mixed_precision=`` takes the launch's: ``accelerate launch
--mixed_precision fp16 train.py`` (or a ``--config_file`` with ``mixed_precision: fp16``) sets
``ACCELERATE_MIXED_PRECISION``, which ``AcceleratorState`` reads only when the argument is None
(an explicit ``mixed_precision="no"`` wins), and a plain or multi-GPU run then builds torch's
GradScaler. A project's shipped launch command (``run.sh``) is that run, and the message names
it; DeepSpeed (its own loss scaler and fp32 master weights) and FSDP (``ShardedGradScaler``
unscales fp16 gradients; FSDP2 upcasts trainable parameters) do not fail
(``project/launched_precision.py``).

Trained means positive evidence: the model's parameters reach an optimizer in the run
(``AdamW(model.parameters())``, parameter groups, ``Trainer(model=model)``, a Lightning
module's ``configure_optimizers``, ``deepspeed.initialize``), in the function that casts it or
through the functions it is handed to or returned from (``semantic/training_state.py``,
``project/trained.py``). A model nobody is seen optimizing is not reported: a validation
pipeline, a frozen VAE, an inference model beside the trained one, a model handed to code that
cannot be read.

Not a finding: frozen models (teachers, VAEs, encoders with ``requires_grad_(False)``,
models only called under ``torch.no_grad()``), inference-only scripts, fp32
weights under fp16 AMP (the correct set-up), PEFT adapters on an fp16 base
(``get_peft_model`` keeps adapters in fp32 unless ``autocast_adapter_dtype=False``), a
halved model with one named part cast back to float32 below (``model.half();
model.transformer.prefix_encoder.float()``: P-tuning v2 trains that part, and the model's own
code freezes the rest).

Adapters injected in place are another matter: ``unet.add_adapter(LoraConfig(...))`` (diffusers,
transformers) and ``peft.inject_adapter_in_model`` make the LoRA layers in the dtype of the layer
they wrap and skip ``get_peft_model``'s float32 upcast (``training_state.adapter_injection``), so a
UNet frozen and cast to ``weight_dtype = torch.float16`` trains float16 adapters and the scaler
raises the error above. diffusers' LoRA scripts therefore run ``cast_training_params(unet,
dtype=torch.float32)`` after ``add_adapter`` (under ``if args.mixed_precision == "fp16":``); with
it, or the ``requires_grad`` upcast loop, nothing is reported. The fix writes that loop below the
injection: the frozen base keeps the dtype chosen for memory.

So are the modules a PEFT config lists in ``modules_to_save`` (``LoraConfig(modules_to_save=
["embed_tokens", "lm_head"])``): ``get_peft_model`` trains copies of them in the model's dtype and
upcasts only the adapters, so on a float16 model those copies raise the error above; the same
loop below ``get_peft_model`` makes them float32.

``get_peft_model``'s float32 upcast is peft 0.12's (``autocast_adapter_dtype=True``): peft 0.7 to
0.11 make LoRA adapters in the base layer's float dtype and keep them there
(``LoraLayer.update_layer`` ends with ``self.to(weight.device, dtype=weight.dtype)``;
``knowledge/libraries.toml`` ``[adapter_dtype]``). Where every peft version the file targets
(its project's pin, else the installed one) lies in that window, ``get_peft_model(model,
LoraConfig(...))`` on a float16 model trains float16 adapters and is reported like an injection,
the pin named; the fix writes the same loop below it. Not where ``prepare_model_for_kbit_training``
prepares the model (it casts float16 parameters to float32), nor where TRL wraps it
(``SFTTrainer(peft_config=...)``: TRL's own handling), unless the model is a PeftModel already and
the project allows TRL below 0.20, which keeps it as it is given (``knowledge`` ``peft_model_kept``).
"""
from __future__ import annotations

import ast
import dataclasses
import re
from typing import TYPE_CHECKING, Iterable, List, Optional, Tuple

from ..fixes import plan
from ..diagnostics import SAFE, UNSAFE, Edit, Fix, Related
from ..workspace.configfiles import is_config_file, shown_from
from ..workspace.versions import version_text
from ..knowledge import peft_model_kept
from ..facts.model import ModuleFacts
from ..semantic.literal_tests import chosen_apart, conjuncts
from ..semantic.values import CONST, DTYPE, Possible, dtype_of_string, may_be_true
from ..project.configurations import FALSY, alongside, builds_in, by_user_only, casts_in, casts_nowhere, conditions_apart, configurations, runs_deepspeed, wraps_adapters
from ..project.launched_precision import LaunchedPrecision, builds_no_grad_scaler, launched
from ..project.options import BY_HAND, from_launcher, launcher_shown, passed_by
from ..project.runs import half_in_run, run_name, trained_in_run, training_site, value_in_run
from .base import LIGHTNING_FP16, Option, Rule, RuleContext, base_dtype_adapters, base_dtype_note, insert, replace

if TYPE_CHECKING:  # the extractors (and LibCST) are loaded by the facts they made, never for the rule
    from ..project.model import Project
    from ..facts.extractors.precision import PrecisionSite
    from ..facts.extractors.weights import WeightsSite

ERROR = "ValueError: Attempting to unscale FP16 gradients."
# accelerate's own class (a project subclass may set its precision in its own __init__)
LIBRARY_ACCELERATORS = ("accelerate.Accelerator", "accelerate.accelerator.Accelerator")
STRATEGIES = ("fp32-master", "bf16-if-supported", "disable-scaler")
FP16_WORDS = ("float16", "fp16", "half")


def _may_enable(arg) -> bool:
    """Whether a flag may be true on some machine, unless it checks the parameters' dtype.

    ``enabled=use_scaler and not any(p.dtype == torch.float16 ...)`` and the seed-000
    form (``if has_fp16_params: use_scaler = False``) are already guarded.
    """
    if arg.checks_param_dtype:
        return False
    return may_be_true(v for v in arg.possible() if not any(g.param_dtype for g in v.guards))


def _opt_in(atoms) -> bool:
    """Whether every one of ``atoms`` is chosen only by the user (a command-line choice)."""
    atoms = list(atoms)
    return bool(atoms) and all(any(g.user_choice for g in v.guards) for v in atoms)


def _switched_by_user(site: PrecisionSite) -> bool:
    """Whether fp16 loss scaling at ``site`` is on only when the user switches it on: its
    ``fp16=`` / ``enabled=``, or an ``Accelerator(mixed_precision=...)`` whose "fp16" is only
    ever the user's choice (``--mixed_precision fp16`` of an option that defaults to "no")."""
    if site.kind == "accelerator":
        mp = site.arg("mixed_precision")
        return mp is not None and _opt_in(v for v in mp.possible() if v.kind == CONST and v.value == "fp16")
    flag = site.arg("fp16") if site.kind in ("training-args", "training-args-class") else site.arg("enabled")
    return flag is not None and _opt_in(v for v in flag.possible() if may_be_true((v,)))


_SWITCH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def scaling_switch(site: PrecisionSite) -> Optional[str]:
    """The user's own switch that turns this site's loss scaling on (``fp16=args.fp16``,
    ``GradScaler(enabled=use_amp)``): a name or attribute, not a literal."""
    arg = site.arg("fp16") if site.kind == "training-args" else site.arg("enabled") if site.kind == "grad-scaler" else None
    if arg is None or arg.checks_param_dtype:
        return None
    text = arg.value_text.strip()
    if not _SWITCH.fullmatch(text) or text in ("True", "False", "None"):
        return None
    return text


def scaling_condition(site: PrecisionSite) -> str:
    """`` whenever `args.amp` is on`` when the site's loss scaling follows the user's switch
    (``GradScaler(enabled=args.amp)``, ``fp16=cfg.fp16``), which may also be off; else ""."""
    arg = site.arg("fp16") if site.kind == "training-args" else site.arg("enabled") if site.kind == "grad-scaler" else None
    if arg is None or not arg.switch or arg.via == "command-line":
        return ""
    values = arg.possible()
    if all(may_be_true((v,)) for v in values):
        return ""  # on whatever the switch is
    return f" whenever `{arg.switch}` is on"


def _chosen_when(value, on: bool, switch: Optional[str], option: str = "") -> bool:
    """Whether a value is only chosen when ``switch`` is ``on`` (on: ``torch.float16 if
    args.fp16 else torch.float32``; off: ``... if args.fp16 else torch.float16``), or the
    command-line switch ``option`` (``targs.fp16`` of the parse that fills the Trainer's
    ``--fp16``)."""
    return any(
        (switch is not None and ((g.text == switch and g.positive == on) or (g.text == f"not {switch}" and g.positive != on)))
        or (option and g.option == option and g.positive == on)
        for g in value.guards
    )


def scaling_option(site: PrecisionSite) -> str:
    """The TrainingArguments switch of the command line (``--fp16``: "fp16") that turns this
    site's loss scaling on, where that is the only way it is on; else ""."""
    arg = site.arg("fp16") if site.kind == "training-args" else None
    if arg is None or arg.via != "command-line" or not arg.value_text.startswith("--"):
        return ""
    return arg.value_text[2:]  # (the values' `option` is cleared at the join, by what launches pass)


def _dtype_of(v) -> Optional[str]:
    if v.kind == DTYPE:
        return v.value
    return dtype_of_string(v.value) if v.kind == CONST else None


def _renamed_import(ctx: RuleContext, text: str) -> Optional[Edit]:
    """For ``torch_dtype=float16`` bound by ``from torch import float16`` and used nowhere else:
    the edit that imports ``float32`` in its place (writing ``torch.float32`` would leave that
    import unused, ruff's F401). None when the name has other uses or another origin."""
    name = text.strip()
    if not re.fullmatch(r"[A-Za-z_]\w*", name) or dict(ctx.facts.exports).get(name) != "torch.float16":
        return None
    source = ctx.source
    if len(re.findall(rf"\b{name}\b", source)) != 2 or re.search(r"\bfloat32\b", source):
        return None  # used elsewhere too (or float32 already bound): leave the imports alone
    line = re.search(rf"(?m)^from[ \t]+torch[ \t]+import[ \t]+[^\n#]*?\b({name})\b(?![ \t]+as\b)", source)
    if line is None:
        return None
    return Edit(line.start(1), line.end(1), "float32")


def _adapters_upcast(ctx: RuleContext, weights: WeightsSite) -> List[Edit]:
    """For ``model.half()`` of a PEFT model: the trainable parameters (the adapters) cast back to
    float32 on the lines below, the frozen base left float16. ``.float()`` would upcast the base
    too: twice its memory (a 7B base on a 16 GB T4 no longer fits), where only the adapters'
    gradients needed fp32 for the GradScaler. Only for a cast that is a statement of its own
    (``model.half()``, ``model = model.half()``): [] otherwise (no fix).

    For adapters injected into a float16 model (``unet.add_adapter(config)``): the same loop
    below the injection, the one diffusers' ``cast_training_params(unet, dtype=torch.float32)``
    runs (written out: it needs no import, and transformers' ``add_adapter`` has no diffusers).
    The frozen base keeps the dtype the user chose for memory."""
    if weights.injected:
        # below the later of the two: a cast after `add_adapter` casts the adapters too
        later = weights.injected_span if weights.injected_span.end > weights.span.end else weights.span
        return _upcast_below(ctx, later, weights.injected_into)
    return _upcast_below(ctx, weights.span, weights.targets[0] if weights.targets else "")


def _upcast_below(ctx: RuleContext, span, target: str) -> List[Edit]:
    """The loop that makes ``target``'s trainable parameters float32, on the line below the
    statement that ``span`` is (all of it, save an assignment of its value); [] otherwise."""
    source = ctx.source
    if span is None or not target:
        return []
    start = source.rfind("\n", 0, span.start) + 1
    end = source.find("\n", span.end)
    end = len(source) if end < 0 else end
    if end > 0 and source[end - 1] == "\r":
        end -= 1
    head, tail = source[start : span.start], source[span.end : end]
    indent = head[: len(head) - len(head.lstrip())]
    bound = re.fullmatch(r"[ \t]*(?:[A-Za-z_][\w.]*[ \t]*=[ \t]*)?", head)
    if bound is None or (tail.strip() and not tail.strip().startswith("#")):
        return []
    name = next(n for n in ("param", "parameter", "adapter_param", "p_") if not re.search(rf"\b{n}\b", source))
    nl = "\r\n" if source[end : end + 2] == "\r\n" else "\n"
    loop = (
        f"{nl}{indent}for {name} in {target}.parameters():  # the adapters train in float32; the frozen base stays float16"
        f"{nl}{indent}    if {name}.requires_grad:"
        f"{nl}{indent}        {name}.data = {name}.data.float()"
    )
    return [insert(end, loop)]


def _whole_argument(source: str, span) -> bool:
    """Whether ``source[span]`` is a whole call argument or keyword value (``f(x)``, ``k=x,``):
    a conditional expression put there needs no parentheses (ruff's UP034 flags them)."""
    before = source[: span.start].rstrip()
    after = source[span.end :].lstrip()
    if not before.endswith(("(", ",")) and not (before.endswith("=") and not before.endswith(("==", "!=", "<=", ">="))):
        return False
    return after.startswith((")", ","))


def _paren(text: str) -> str:
    """``x`` stays ``x``; ``a or b`` becomes ``(a or b)`` before it is combined with ``and``."""
    return text if re.fullmatch(r"[\w.]+(\([^()]*\))?", text.strip()) else f"({text})"


def _written_in_config(arg, key: str, near: str, among=None) -> str:
    """``; `fp16: true` is set in config.yaml (line 5)`` for a value read from a config file
    (with ``among``: the first of those values that is read from one)."""
    for v in (among if among is not None else arg.values if arg is not None else ()):
        if v.where and is_config_file(v.where) and v.origin is not None and may_be_true((v,)):
            return f"; `{key}: {str(v.value).lower()}` is set in {shown_from(v.where, near)} (line {v.origin.line})"
    return ""


def launched_scaling(site: PrecisionSite, project: Project, entry, weights: Optional[WeightsSite] = None) -> Optional[LaunchedPrecision]:
    """For an ``Accelerator`` that takes its mixed precision from the launch (no
    ``mixed_precision=``, or one that may be None: accelerate reads ACCELERATE_MIXED_PRECISION
    only then, an explicit value wins): the first shipped ``accelerate launch`` of the run's
    script (``entry``) that makes it fp16 under torch's GradScaler
    (``project/launched_precision.py``: not DeepSpeed, FSDP or bf16) and, for ``weights``, in
    whose configuration they are float16 and trained: not where that launch's own options wrap
    the model in fp32 adapters (``--use_lora`` of ``if args.use_lora: get_peft_model(...)``) or
    leave the cast out; None otherwise."""
    if site.kind != "accelerator" or entry is None or site.opaque or site.callee not in LIBRARY_ACCELERATORS:
        return None
    mp = site.arg("mixed_precision")
    if mp is not None and not any(v.kind == CONST and v.value is None for v in mp.values):
        return None
    return next(
        (p for p in launched(project, entry.path) if p.loss_scaling and (weights is None or _scaled_in_launch(p, weights))),
        None,
    )


def _scaled_in_launch(launch: LaunchedPrecision, weights: WeightsSite) -> bool:
    """Whether, in the configuration of one shipped launch, the weights are cast and trained as
    they are (not wrapped in fp32 adapters): the launch's options are the values of the cast's and
    the wrap's tests that carry its mark (``project/options.py``)."""
    mark = f"{launch.launcher}:{launch.launch.line}"
    probe = Possible(CONST, True)
    for subject, _, _ in (*weights.peft_when, *weights.cast_when):
        chosen = next((v.chosen for v in subject if v.chosen and v.chosen[1] == mark), None)
        if chosen is not None:
            probe = Possible(CONST, True, chosen=chosen)
            break
    return not wraps_adapters(weights.peft_when, probe) and casts_in(weights.cast_when, probe)


def _launched_reason(site: PrecisionSite, module: ModuleFacts, found: LaunchedPrecision) -> str:
    mp = site.arg("mixed_precision")
    name = site.callee.rsplit(".", 1)[-1]
    shown = launcher_shown(found.launcher, module.path)
    how = f"as `{shown}` launches it: `{found.command}`"
    if found.key:
        line = f" (line {found.where[1].line})" if found.where[1] is not None else ""
        how += f", whose `{found.key}` is set in {shown_from(found.where[0], module.path)}{line}"
    if mp is None:
        return f"`{name}` (no `mixed_precision=`: the launch's precision, {how})"
    return f"`{name}(mixed_precision={mp.value_text})` (None: the launch's precision, {how})"


def scaled_configurations(site: PrecisionSite, weights: WeightsSite) -> Optional[List]:
    """For a Trainer configuration: the values of its ``fp16`` that turn on torch loss scaling
    for these float16 weights, each judged with the rest of its own configuration
    (``project/configurations.py``): not where that configuration sets ``deepspeed`` (the
    Trainer then runs DeepSpeed, whose fp16 keeps fp32 master weights and its own loss scaler,
    and creates no GradScaler), nor where it wraps the model in PEFT adapters (fp32 trained
    parameters), nor where its weights are not float16 or the cast that makes them so does not
    run (a shipped launch that passes ``--fp16`` but not the option the cast is under). None for
    other sites."""
    fp16 = site.arg("fp16")
    if site.kind not in ("training-args", "training-args-class") or fp16 is None:
        return None
    ds = site.arg("deepspeed")
    half = [v for v in weights.values if _dtype_of(v) == "float16"]
    return [
        v
        for v in fp16.possible()
        if may_be_true((v,))
        and not any(g.param_dtype for g in v.guards)
        and alongside(half, v)
        and not (ds is not None and runs_deepspeed(ds.values, v))
        and not wraps_adapters(weights.peft_when, v)
        and casts_in(weights.cast_when, v)
        and not _by_hand_only(v)
    ]


def built_configurations(site: PrecisionSite, weights: WeightsSite, project: Project, paths) -> Optional[List]:
    """For a GradScaler built under tests (``PrecisionSite.when``: ``if args.fp16 and not
    args.deepspeed: self.scaler = GradScaler()`` in a project's Trainer, ``args`` what its
    callers pass) or enabled by a configuration's switch (``GradScaler(enabled=args.fp16)``,
    what each launch passes): the values that build it in a configuration where these weights are float16,
    each configuration (the defaults, each shipped launch, a run by hand) judged on its own as
    :func:`scaled_configurations` judges a Trainer's ``fp16``: not where a test certainly fails
    (no ``--fp16``; ``--deepspeed`` set), nor where the cast does not run or the model is wrapped
    in fp32 adapters, nor where the scaler and the float16 weights each hold only by the user's
    own choice (by hand, where the project ships the launches that run it). Only the values the
    run of ``paths`` passes count (a caller in another script has its own). None for a site
    built under no such test."""
    if site.kind != "grad-scaler":
        return None
    tests = site.when
    enabled = site.arg("enabled")
    if enabled is not None and not enabled.checks_param_dtype and any(v.chosen for v in enabled.values):
        # `GradScaler(enabled=args.fp16)`: on where the configuration turns the switch on
        tests += ((enabled.values, FALSY, False),)
    if not tests:
        return None
    when = _conditions_in_run(project, tests, paths)
    half = [v for v in weights.values if _dtype_of(v) == "float16"]
    out: List = []
    for probe in configurations(*(s for s, _, _ in when), *(s for s, _, _ in weights.cast_when), half):
        holding = builds_in(when, probe)
        if holding is None or not alongside(half, probe):
            continue  # no scaler in this configuration, or no float16 weights
        user = by_user_only(when, probe)
        chosen = dataclasses.replace(probe, guards=user.guards) if user is not None else probe
        if _by_hand_only(chosen) or (user is not None and _opt_in(alongside(half, probe)) and _apart_choices(user, half)):
            continue  # both only by the user's own choices: not a run the code ships or defaults to
        if wraps_adapters(weights.peft_when, probe) or not casts_in(weights.cast_when, chosen):
            continue
        out.extend(v for v in holding if v not in out)
    return out


def _stepped_fused(ctx: RuleContext, weights: WeightsSite, site: PrecisionSite) -> bool:
    """Whether a GradScaler's float16 weights are stepped only by fused torch optimizers
    (``AdamW(params, fused=True)``) and nothing in the run calls ``scaler.unscale_``: such an
    optimizer takes the scale itself (``_step_supports_amp_scaling``), so ``scaler.step`` unscales
    no gradient and nothing raises ``Attempting to unscale FP16 gradients`` (review 26b: FlagPerf;
    an explicit ``unscale_``, for a clip, still raises)."""
    if site.kind != "grad-scaler" or not weights.trained_by:
        return False
    optimizers = {o.span.start: o for o in ctx.facts.section("optimizers") or ()}
    if not all(start in optimizers and optimizers[start].fused for start in weights.trained_by):
        return False
    return not any(
        event.kind == "unscale"
        for module in ctx.project.joined_modules(ctx.facts, "clipping")
        for scope in (module.section("clipping") or {}).get("scopes", ())
        for event in scope.events
    )


def _steps_others(ctx: RuleContext, weights: WeightsSite, module: ModuleFacts, site: PrecisionSite) -> bool:
    """Whether a GradScaler of this file steps only optimizers made here that are none of those
    given these weights' parameters (``PrecisionSite.steps`` against ``WeightsSite.trained_by``):
    ``scaler.step(opt)`` unscales the gradients of ``opt``'s parameters alone, so float16 weights
    another optimizer steps never meet it (held-out 40u: a course's notebook that halves ``net``
    and trains it with plain SGD, then makes a new float32 ``net`` and its own SGD for the
    GradScaler cell). Where what it steps, or what trains the weights, is not known here, it may
    be theirs."""
    return (
        site.kind == "grad-scaler" and module.path == ctx.path and bool(site.steps) and bool(weights.trained_by)
        and not set(site.steps) & set(weights.trained_by)
    )


def _conditions_in_run(project: Project, conditions, paths):
    """Conditions (``WeightsSite.cast_when``, ``PrecisionSite.when``) with the values their tests
    read as the run of ``paths`` passes them: ``train(..., precision="half")`` in a notebook is
    not a value of the script that calls ``train(...)`` with its default (``value_in_run``)."""
    return tuple(
        (tuple(v for v in subject if value_in_run(project, v, paths)), literals, wanted)
        for subject, literals, wanted in conditions
    )


def _tested_apart(weights: WeightsSite, site: PrecisionSite, scaled) -> bool:
    """Whether every float16 value of the weights is chosen under a test that contradicts the
    tests the loss scaling is switched on under (``semantic.literal_tests``): weights made
    float16 where ``opt.optim == "legacy"`` and a GradScaler built where ``opt.optim == "adam"``
    (or its Trainer's ``fp16=`` chosen so) never meet; nor a cast under ``args.precision in
    ("fp16", "pure_fp16")`` and ``GradScaler() if args.precision == "amp" else None``."""
    if conditions_apart(weights.cast_when, site.when):
        return True  # the cast's test and the scaler's read one option, for values apart
    half = weights.float16_values()
    built = [site.built_if] if site.built_if else []
    switched = [[g.text for g in v.guards if g.positive] for v in scaled] if scaled else [[]]
    return all(chosen_apart(half, built + texts) for texts in switched)


def _apart_choices(user, half) -> bool:
    """Whether the user's choice that builds the scaler (``user``) is not the one that makes
    the weights float16: two switches the user must both pass (``--half`` and ``--amp``), not
    one that does both (``torch.float16 if opt.fp16 ...`` and ``GradScaler() if opt.fp16``)."""
    switches = {g.option or g.text.lstrip("-") for g in user.guards if g.user_choice}
    for v in half:
        for g in v.guards:
            if g.user_choice and g.positive and (g.option in switches or switches & _attributes_tested(g.text)):
                return False
    return True


def _attributes_tested(text: str) -> set:
    """The attribute names a test's conjuncts read (``opt.fp16 and opt.optim == "adam"``: fp16, optim)."""
    out = set()
    for term in conjuncts(text):
        for node in ast.walk(term):
            if isinstance(node, ast.Attribute):
                out.add(node.attr)
    return out


def _by_hand_only(v) -> bool:
    """Whether ``v`` is the user's own switch in a run of the script by hand, where the project
    ships the launches that run it: those launches are the runs the code targets (each judged
    as its own configuration), and a switch none of them passes is not one of them."""
    return bool(v.chosen) and v.chosen[1] == BY_HAND and any(g.user_choice for g in v.guards)


def scaling_reason(site: PrecisionSite, module: ModuleFacts, project: Project, entry=None, scaled=None, weights=None) -> Optional[str]:
    """A short description of how ``site`` may switch fp16 loss scaling on, or None. ``entry``:
    the run's script, whose shipped launches give an ``Accelerator()`` its precision;
    ``scaled``: the values of its ``fp16`` that scale these weights' loss (the launch named is
    one of theirs)."""
    if site.kind == "grad-scaler":
        enabled = site.arg("enabled")
        built = ""
        if site.built_if and scaled:
            shipped = passed_by(scaled, module.path)
            built = f" (built when `{site.built_if}`" + (f", as in the run {shipped} launches)" if shipped else ")")
        if enabled is None:
            return f"`GradScaler`{built}"
        if _may_enable(enabled):
            return (f"`GradScaler(enabled={enabled.value_text})`" if enabled.switch else "`GradScaler`") + built
        return None
    if site.kind in ("training-args", "training-args-class"):
        name = site.callee.rsplit(".", 1)[-1]
        fp16 = site.arg("fp16")
        if fp16 is not None and _may_enable(fp16):
            if fp16.via == "parsed":
                return f"`{name}` filled by `{fp16.value_text}`"
            if fp16.via == "command-line":
                shipped = passed_by(scaled if scaled else [v for v in fp16.values if may_be_true((v,))], module.path)
                if shipped:  # the shipped launch turns it on: that run scales the loss
                    return f"`--fp16` (passed by {shipped} to the `{name}` that the parser fills)"
                return f"`--fp16` (a command-line switch of the `{name}` that the parser fills)"
            if not fp16.in_code:
                return f"`{name}({fp16.value_text})`"
            if site.kind == "training-args":
                return f"`{name}(fp16={fp16.value_text})`"
            return f"`{name}.fp16` defaulting to `{fp16.value_text}`"
        # A DeepSpeed config's fp16 (`deepspeed="ds.json"` with `"fp16": {"enabled": true}`)
        # is no torch loss scaling: DeepSpeed keeps fp32 master weights and its own scaler.
        return None
    if site.kind == "accelerator":
        mp = site.arg("mixed_precision")
        if mp is not None and any(v.kind == CONST and v.value == "fp16" for v in mp.values):
            if entry is not None and builds_no_grad_scaler(project, entry.path):
                return None  # every shipped launch runs DeepSpeed/FSDP: no torch GradScaler
            return f"`Accelerator(mixed_precision={mp.value_text})`"
        found = launched_scaling(site, project, entry, weights)
        return _launched_reason(site, module, found) if found is not None else None
    if site.kind == "lightning":
        precision = site.arg("precision")
        if precision is not None and any(
            v.kind == CONST and v.value in LIGHTNING_FP16 for v in precision.values
        ):
            name = site.callee.rsplit(".", 1)[-1]  # `Trainer`, `Fabric`
            return f"Lightning `{name}(precision={precision.value_text})`"
        return None
    return None


def _float16_written_inside(weights: WeightsSite):
    """The span of the one ``torch.float16`` written inside the dtype expression and not the
    whole of it (``torch_dtype or torch.float16``), else None."""
    span = weights.edit_span
    found = {
        (v.origin.start, v.origin.end): v.origin for v in weights.values
        if v.kind == DTYPE and v.value == "float16" and v.origin is not None and span is not None
        and span.start <= v.origin.start and v.origin.end <= span.end and (v.origin.start, v.origin.end) != (span.start, span.end)
    }
    return next(iter(found.values())) if len(found) == 1 else None


def _fix_stays_in_runs(ctx: RuleContext, weights: WeightsSite, conflicts) -> bool:
    """Whether rewriting this weights site touches only models the failing runs train. A helper
    (``load_vae(path, dtype)``) given float16 by a caller outside every failing run — a caching
    or inference script that trains nothing — would be rewritten for that caller too: the
    finding is then reported without a fix."""
    runs = [ctx.project.unit_view(entry) for *_, entry in conflicts]
    for v in weights.values:
        if _dtype_of(v) == "float16" and not any(value_in_run(ctx.project, v, run) for run in runs):
            return False
    return True


class Fp16WeightsUnderLossScaling(Rule):
    code = "MP101"
    name = "fp16-weights-under-loss-scaling"
    summary = "Trainable float16 weights with fp16 loss scaling: `ValueError: Attempting to unscale FP16 gradients.`"
    fix_availability = "sometimes"
    fix_applicability = SAFE
    options = {
        "strategy": Option(
            "fp32-master",
            STRATEGIES,
            doc="fp32-master: weights in float32 under fp16 autocast (default); "
            "bf16-if-supported: bf16 weights and bf16 AMP on Ampere+, fp32 + fp16 AMP elsewhere; "
            "disable-scaler: keep fp16 weights and turn the scaler off (pure fp16, NaN-prone)",
        )
    }

    def check(self, ctx: RuleContext) -> Iterable:
        candidates = [
            w for w in ctx.facts.section("weights")
            if "float16" in w.dtypes and (w.quantized_unfrozen or (w.trainable and (not w.peft or w.lora_wrap)))
        ]
        pin = base_dtype_adapters(ctx) if any(w.peft and not w.quantized_unfrozen for w in candidates) else None
        kept = peft_model_kept()
        for weights in candidates:
            if casts_nowhere(weights.cast_when):
                continue  # cast in no run: every call leaves the parameter its test reads at a value it refuses
            if weights.kept_peft and ctx.targets.of(kept.library).every_at_least(kept.until):
                continue  # the trainer wraps the PeftModel again: float32 adapters (or refuses it)
            if weights.peft and not weights.quantized_unfrozen:
                if pin is None:
                    continue  # get_peft_model upcasts the adapters to float32 on the peft targeted
                # the wrap is an injection of adapters in the model's dtype (as `add_adapter`)
                weights = dataclasses.replace(
                    weights, injected=weights.lora_wrap, injected_span=weights.lora_wrap_span, injected_into=weights.lora_wrap_into,
                )
            conflicts = self._conflicts(ctx, weights)
            if weights.trained_by_choice or _opt_in(v for v in weights.values if _dtype_of(v) == "float16"):
                # float16 weights only when the user picks them (a command-line choice), or
                # trained only when they unfreeze them (`requires_grad_(not use_lora)` with
                # `--no_lora`): a crash needs a second choice of theirs as well, `--fp16`;
                # unless that one switch picks both (`torch.float16 if a.fp16 else ...` with
                # `fp16=a.fp16`): then every run with it on crashes
                conflicts = [
                    c for c in conflicts
                    if not _switched_by_user(c[1]) or (not weights.trained_by_choice and self._switched(ctx, weights, c[0], c[1], on=True))
                ]
            if conflicts:
                yield self._finding(ctx, weights, conflicts, pin if weights.peft else None)

    @staticmethod
    def _switched(ctx: RuleContext, weights: WeightsSite, module: ModuleFacts, site: PrecisionSite, on: bool) -> bool:
        """float16 weights chosen only when the site's own switch is ``on``: off (``torch.float32
        if args.fp16 else torch.float16`` with ``fp16=args.fp16``), never together; on
        (``torch.float16 if args.fp16 else torch.float32``), one choice of the user's turns on
        both, so every run it makes crashes. The switch as written, in one scope (a variable's
        name means the same only there), or the command line's ``--fp16`` read as
        ``targs.fp16`` anywhere."""
        switch, option = scaling_switch(site), scaling_option(site)
        if module.path != ctx.path or site.scope != weights.scope:
            switch = None
        if switch is None and not option:
            return False
        half = [v for v in weights.values if _dtype_of(v) == "float16"]
        return bool(half) and all(_chosen_when(v, on, switch, option) for v in half)

    def _conflicts(self, ctx: RuleContext, weights: WeightsSite) -> List[Tuple[ModuleFacts, PrecisionSite, str, ModuleFacts]]:
        """Every scaling site in a training run that also runs this weights site (a run that
        trains: an optimizer, a trainer or a backward pass runs with the weights site)."""
        found = {}
        runs_together = ctx.project.callgraph.runs_together
        run_scope = ctx.project.run_scope
        weights_scope = run_scope(ctx.facts, weights.scope, weights.span.line)
        scaling = ctx.project.joined_modules(ctx.facts, "precision")
        # the runs that hold a precision site: the site's module and the modules importing it
        running = {m.path: ctx.project.importers_of(m) | {m.path} for m in scaling}

        def judge(entry: ModuleFacts) -> None:
            here = [m for m in scaling if entry.path in running[m.path]]
            if not here:
                return  # no precision site in this run: nothing to join with
            paths = ctx.project.unit_view(entry)
            if not half_in_run(ctx.project, weights.values, paths):
                return  # the float16 comes from another run's call (each run has its own arguments)
            if casts_nowhere(_conditions_in_run(ctx.project, weights.cast_when, paths)):
                return  # cast only where a call of another run passes what its test accepts
            if training_site(ctx.project, entry, ctx.facts, weights.scope, weights.span.line) is None:  # (its unit: kept)
                return  # this run steps no optimizer: no gradients are ever unscaled
            if not trained_in_run(ctx.project, ctx.facts, weights, entry, paths):
                return  # nothing in this run hands these parameters to an optimizer
            for module in here:
                for site in module.section("precision"):
                    key = (module.path, site.span.start)
                    if key in found:
                        continue
                    scope = run_scope(module, site.scope, site.span.line)
                    if not runs_together(paths, weights_scope, scope, entry.path):
                        continue
                    if site.unused or self._switched(ctx, weights, module, site, on=False):
                        continue  # (training arguments only read: nothing scales with them)
                    scaled = scaled_configurations(site, weights)
                    if scaled is None:
                        scaled = built_configurations(site, weights, ctx.project, paths)
                    if scaled is not None and not scaled:
                        continue  # no configuration scales the loss of these float16 weights
                    if scaled is None and wraps_adapters(weights.peft_when, Possible(CONST, True)):
                        continue  # every configuration wraps the model in fp32 adapters
                    if _tested_apart(weights, site, scaled):
                        continue  # `opt.optim == "legacy"` makes them float16, `opt.optim == "adam"` scales
                    if _stepped_fused(ctx, weights, site):
                        continue  # the fused optimizer takes the scale itself: nothing is unscaled
                    if _steps_others(ctx, weights, module, site):
                        continue  # the scaler steps optimizers of other weights: these are never unscaled
                    reason = scaling_reason(site, module, ctx.project, entry, scaled, weights)
                    if reason is not None:
                        found[key] = (module, site, reason, entry)

        ctx.each_run(ctx.project.units_containing(ctx.facts), judge)
        # the one to name first: in this file, then a Trainer configuration, then the earliest
        return sorted(
            found.values(),
            key=lambda c: (c[0].path != ctx.path, c[1].kind != "training-args", c[0].path, c[1].span.start),
        )

    # --- reporting ---------------------------------------------------------------------
    def _finding(self, ctx: RuleContext, weights: WeightsSite, conflicts, pin=None):
        module, site, reason, entry = conflicts[0]
        where = "" if module.path == ctx.path else f" in {module.path}"
        if entry.path not in (ctx.path, module.path):
            where += f" in the run of `{run_name(entry)}`"  # a third file joins the two
        what = {
            "dtype-kwarg": f"`{weights.edit_text}` loads trainable weights in float16",
            "half": f"`{weights.receiver_text}.half()` makes trainable weights float16",
            "to-dtype": f"`.to({weights.edit_text})` makes trainable weights float16",
        }.get(weights.kind, "trainable weights become float16")
        if weights.quantized_unfrozen and not weights.trainable:
            # a 4/8-bit base: its unquantized parameters (norms, embeddings) take the load's dtype
            what = (
                f"`{weights.edit_text}` loads the unquantized parameters of the 4/8-bit base in float16, and the "
                f"{weights.quantized_unfrozen} below train in that dtype"
            )
        if weights.injected:
            made = {
                "dtype-kwarg": f"`{weights.edit_text}`",
                "half": f"`{weights.receiver_text}.half()`",
                "to-dtype": f"`.to({weights.edit_text})`",
            }.get(weights.kind, "its cast")
            what = (
                f"the adapters that {weights.injected} (line {weights.injected_span.line}) adds to "
                f"`{weights.injected_into}` take its float16 dtype ({made}) and are trained"
            )
            if weights.injected_copies:
                what = (
                    f"the copies of `modules_to_save={weights.injected_copies}` that {weights.injected} "
                    f"(line {weights.injected_span.line}) trains keep `{weights.injected_into}`'s float16 dtype "
                    f"({made}; PEFT upcasts only the adapters to float32)"
                )
        if weights.trained_by_choice:
            what += f" in the runs where {weights.trained_by_choice} unfreezes them (a choice the user makes by hand)"
        more = f" (and {len(conflicts) - 1} more place{'s' * (len(conflicts) > 2)})" if len(conflicts) > 1 else ""
        message = (
            f"{what}, and {reason}{where} (line {site.span.line}){more} turns on fp16 loss scaling"
            f"{scaling_condition(site)}: "
            f"`{ERROR}` at the first optimizer step"
            f"{_written_in_config(site.arg('fp16'), 'fp16', module.path, scaled_configurations(site, weights))}"
        )
        related = tuple(
            Related(m.path, s.span, f"fp16 loss scaling switched on here: {r}") for m, s, r, _ in conflicts
        ) + tuple(
            Related(v.where, v.origin, "fp16 switched on here")
            for v in (scaled_configurations(site, weights) or (site.arg("fp16").values if site.arg("fp16") is not None else ()))
            if v.where and is_config_file(v.where) and v.origin is not None and may_be_true((v,))
        ) + tuple(
            Related(v.where, v.origin, "the shipped launch passes `--fp16` here")
            for v in (site.arg("fp16").values if site.arg("fp16") is not None else ())
            if from_launcher(v) and v.origin is not None and may_be_true((v,))
        )
        launch = launched_scaling(site, ctx.project, entry, weights)
        if launch is not None:
            if launch.key:
                related += (Related(launch.where[0], launch.where[1], f"`{launch.key}` here: the launch's fp16"),)
            elif launch.where[1] is not None:
                related += (Related(launch.where[0], launch.where[1], f"the launch sets fp16 here: `{launch.command}`"),)
        run = ctx.project.unit_view(entry)
        callers = [
            v for v in weights.values
            if v.where and v.origin is not None and "float16" in (_dtype_of(v),) and value_in_run(ctx.project, v, run)
        ]
        if callers:
            first = callers[0]
            shown = "" if first.where == ctx.path else f"{shown_from(first.where, ctx.path)}, "
            if is_config_file(first.where):
                message += f"; float16 is set in {shown_from(first.where, ctx.path)} (line {first.origin.line})"
            else:
                message += f"; the float16 comes from {shown}line {first.origin.line}"
            related += tuple(
                Related(v.where, v.origin, "float16 set here" if is_config_file(v.where) else "the float16 comes from here")
                for v in callers
            )
        if pin is not None:
            message += f"; {base_dtype_note(pin)}"
        if weights.kept_peft:
            kept = peft_model_kept()
            message += (
                f" ({weights.kept_peft} makes no adapters of its own: below TRL {version_text(kept.until)} a trainer keeps "
                "the PeftModel it is given, adapters and all)"
            )
        fix = self._fix(ctx, weights, module, site, conflicts) if _fix_stays_in_runs(ctx, weights, conflicts) else None
        # Reported where the fix edits: the dtype expression (or `.half()`), not the whole call.
        span = weights.edit_span or weights.span
        return ctx.diagnostic(self.code, span, message, fix, related)

    # --- fixes ----------------------------------------------------------------------------
    @staticmethod
    def _failing_switch(ctx: RuleContext, weights: WeightsSite, conflicts) -> Optional[str]:
        """The user's switch the crash needs, when the only loss scaling is behind it and it can
        be read where the weights are set (same file and scope, bound above them): the fix then
        keeps float16 where the switch is off, where the original never failed."""
        if len(conflicts) != 1:
            return None
        module, site, _, _ = conflicts[0]
        switch = scaling_switch(site)
        if switch is None or module.path != ctx.path or site.scope != weights.scope:
            # the command line's `--fp16`, read where the weights are chosen (`targs.fp16`)
            option = scaling_option(site)
            half = [v for v in weights.values if _dtype_of(v) == "float16"]
            texts = {g.text for v in half for g in v.guards if option and g.option == option and g.positive}
            if len(texts) != 1 or not _SWITCH.fullmatch(next(iter(texts))):
                return None
            switch = texts.pop()
        root = re.escape(switch.split(".")[0])
        before = ctx.source[: weights.span.start]
        # (`x = ...`, `x: T = ...`, or one of the targets of `a, x = ...` / `x, = ...`)
        bound = re.search(rf"(?m)^[ \t]*(?:[\w, ()\[\]*]*[,(\[][ \t]*)?\b{root}\b[ \t]*(?:[,)\]][\w, ()\[\]*]*)?(?::[^=\n]*)?=(?!=)", before) or re.search(
            rf"\bdef\s+\w+\s*\([^)]*\b{root}\b", before
        )
        return switch if bound else None

    def _fix(self, ctx: RuleContext, weights: WeightsSite, module: ModuleFacts, site: PrecisionSite, conflicts=()) -> Optional[Fix]:
        strategy = ctx.options.get("strategy", "fp32-master")
        if strategy == "fp32-master":
            edits = self._weights_edits(ctx, weights, bf16=False, when=self._failing_switch(ctx, weights, conflicts))
            if not edits:
                return None
            if weights.fp16_tensor_line:
                # a float16 input the file makes itself outside autocast meets the float32 weights
                return Fix(
                    UNSAFE,
                    f"Keep trainable weights in float32 (unsafe: line {weights.fp16_tensor_line} casts a tensor to float16 "
                    f"outside autocast; where it reaches these weights: `RuntimeError: mat1 and mat2 must have the same dtype`)",
                    tuple(edits),
                )
            return Fix(SAFE, "Keep trainable weights in float32 (fp16 autocast still does the fast math)", tuple(edits))
        if strategy == "bf16-if-supported":
            edits = self._weights_edits(ctx, weights, bf16=True)
            if not edits:
                return None
            if module.path == ctx.path and site.kind == "training-args":
                edits += self._args_edits(ctx, site)
            return Fix(SAFE, "Use bf16 weights where the GPU supports bf16, float32 elsewhere", tuple(edits))
        return self._disable_scaler(ctx, weights, module, site)

    def _weights_edits(self, ctx: RuleContext, weights: WeightsSite, bf16: bool, when: Optional[str] = None) -> List[Edit]:
        torch, torch_edits = plan.ensure_torch(ctx.facts)
        probe = None
        if bf16:
            probe, probe_edits = plan.capability_probe(ctx.facts, lazy=plan.lazy_probe(ctx))
            torch_edits = probe_edits  # the probe brings `import torch` with it when needed
            torch = plan.torch_name(ctx.facts)
        target = plan.guarded_bf16_weights(torch, probe) if bf16 else None
        if weights.injected:
            # never the frozen base's dtype (the user's choice for memory): only the adapters
            return _adapters_upcast(ctx, weights)
        if weights.kind in ("half",):
            if weights.adapters and not bf16:
                return _adapters_upcast(ctx, weights)
            new = f".to({target})" if bf16 else ".float()"
            return [replace(weights.edit_span, new), *(torch_edits if bf16 else ())]
        if weights.edit_span is None:
            return []
        text = weights.edit_text
        # A dtype a caller passes in keeps its other values: only float16 is replaced.
        simple = set(weights.dtypes) <= {"float16", "float32"} and not any(v.where for v in weights.values)
        string_like = text[:1] in ("'", '"')
        inner = _float16_written_inside(weights)
        if simple and inner is not None and not bf16 and when is None:
            # `torch_dtype or torch.float16`: the float16 written inside is replaced, what a
            # caller passes is kept
            return [replace(inner, plan.fp32(torch)), *torch_edits]
        if simple:
            if bf16:
                return [replace(weights.edit_span, target), *torch_edits]
            renamed = None if string_like or when is not None else _renamed_import(ctx, text)
            if renamed is not None:  # `from torch import float16` used only here: import float32 instead
                return [replace(weights.edit_span, "float32"), renamed]
            fp32 = plan.fp32(torch, text) if string_like else plan.fp32(torch)
            if when is not None:  # float32 only where the switch turns scaling on
                fp32 = f"{fp32} if {when} else {_paren(text)}"
                if not _whole_argument(ctx.source, weights.edit_span):
                    fp32 = f"({fp32})"
            return [replace(weights.edit_span, fp32), *(() if string_like else torch_edits)]
        # Several dtypes are possible (e.g. an argparse choice): replace only float16.
        strings = sorted({v.value for v in weights.values if v.kind == CONST and isinstance(v.value, str) and v.value.lower() in FP16_WORDS})
        tests = []
        if any(v.kind == DTYPE and v.value == "float16" for v in weights.values):
            tests.append(f"{_paren(text)} == {torch}.float16")
        if strings:
            tests.append(f"{_paren(text)} in ({', '.join(repr(s) for s in strings)},)")
        if not tests:
            return []
        test = " or ".join(tests)
        if when is not None:
            test = f"{when} and ({test})" if len(tests) > 1 else f"{when} and {test}"
        new = f"{target or plan.fp32(torch)} if {test} else {_paren(text)}"
        if not _whole_argument(ctx.source, weights.edit_span):
            new = f"({new})"
        return [replace(weights.edit_span, new), *torch_edits]

    def _args_edits(self, ctx: RuleContext, site: PrecisionSite) -> List[Edit]:
        if any(a is not None and not a.in_code for a in (site.arg("fp16"), site.arg("bf16"))):
            return []  # the flags are a config file's (`**cfg["training"]`): edited there, by hand
        probe, _ = plan.capability_probe(ctx.facts, lazy=plan.lazy_probe(ctx))
        torch = plan.torch_name(ctx.facts)
        edits: List[Edit] = []
        fp16 = site.arg("fp16")
        if fp16 is not None:
            # `True` and `torch.cuda.is_available()` both mean "mixed precision on every GPU"
            literal = fp16.value_text.strip() in ("True", f"{torch}.cuda.is_available()")
            value = _paren(fp16.value_text)
            new = plan.guarded_fp16_flag(torch, probe) if literal else f"{value} and not {probe}"
            edits.append(replace(fp16.value_span, new))
            bf16_value = probe if literal else f"{value} and {probe}"
        else:
            bf16_value = probe
        bf16 = site.arg("bf16")
        if bf16 is None:
            edits.append(insert(site.insert_at, site.keyword_text("bf16", bf16_value)))
        elif bf16.value_text.strip() == "False":
            edits.append(replace(bf16.value_span, bf16_value))
        return edits

    def _disable_scaler(self, ctx: RuleContext, weights: WeightsSite, module: ModuleFacts, site: PrecisionSite) -> Optional[Fix]:
        if module.path != ctx.path or not weights.targets:
            return None
        same_scope = weights.scope_kind == "module" or weights.scope == site.scope
        if not same_scope or weights.span.start > site.span.start:
            return None
        torch, torch_edits = plan.ensure_torch(ctx.facts)
        guard = plan.no_fp16_params(weights.targets[0], torch)
        edits: List[Edit] = list(torch_edits)
        if site.kind == "grad-scaler":
            enabled = site.arg("enabled")
            if enabled is None:
                edits.append(insert(site.insert_at, site.keyword_text("enabled", guard)))
            else:
                edits.append(replace(enabled.value_span, f"{_paren(enabled.value_text)} and {guard}"))
        elif site.kind == "training-args" and site.arg("fp16") is not None:
            fp16 = site.arg("fp16")
            edits.append(replace(fp16.value_span, f"{_paren(fp16.value_text)} and {guard}"))
        else:
            return None
        return Fix(SAFE, "Turn loss scaling off while the weights are float16 (pure fp16 training)", tuple(edits))
