"""MP201 bf16-without-capability-guard: bf16 hard-coded for GPUs that cannot run it.

bf16 runs natively only from compute capability 8.0 (Ampere: A100, RTX 30xx, and
newer). The GPUs Kaggle and Colab hand out (P100 sm60, T4 sm75) and V100s, TITAN
RTX and RTX 20xx cards do not have it. Code written on an A100 then fails there:

- ``TrainingArguments(bf16=True)`` (and every TRL ``*Config``, which since TRL 0.19
  turns bf16 on by itself when neither ``fp16`` nor ``bf16`` is given) raises in
  ``__post_init__`` wherever ``torch.cuda.is_bf16_supported()`` is False, on a CPU
  machine always (transformers 5.x)::

      ValueError: Your setup doesn't support bf16/gpu. You need to assign use_cpu if you want to train the model on CPU. You need Ampere+ GPU with cuda>=11.0.

  (transformers 4.x: ``Your setup doesn't support bf16/gpu. You need torch>=1.10,
  using Ampere GPU with cuda>=11.0``);
- ``torch.autocast("cuda", dtype=torch.bfloat16)``: ``RuntimeError: Current CUDA
  Device does not support bfloat16. Please switch dtype to float16.``;
- ``Accelerator(mixed_precision="bf16")``: ``ValueError: bf16 mixed precision
  requires PyTorch >= 1.10 and a supported device.``;
- bf16 weights served with vLLM: ``ValueError: Bfloat16 is only supported on GPUs
  with compute capability of at least 8.0. Your Tesla T4 GPU has compute
  capability 7.5.``

Which of the two happens depends on the versions the file targets (``knowledge/torch.toml``,
read in the wheels): every check above asks ``torch.cuda.is_bf16_supported()``, which up to
torch 2.2 is False below sm80, and from torch 2.3 is True wherever a bf16 tensor can be
created — there the checks pass and bf16 runs *emulated*, several times slower than fp16
(the failure users notice as a Kaggle session that times out). transformers before 4.35
has its own test (``major < 8``) and raises on every torch; accelerate follows torch in
every version read. So the message states the error where every allowed version raises,
"emulated (several times slower)" where every allowed version emulates, and both, with
the versions named, where the range spans both; either way it is a finding (an emulated
run is a silent degradation). bf16 weights and QLoRA compute run emulated on every torch.

A site is fine when the value is chosen under a capability test
(``torch.cuda.is_bf16_supported()``, ``get_device_capability()[0] >= 8``, seed
001's ``if major < 8: use_bf16 = False``, ``get_device_properties(i).major``,
``is_torch_bf16_gpu_available()``, unsloth's ``is_bfloat16_supported()``, or a
variable derived from one), when the whole call sits inside such an ``if``, when
the configured ``target-gpus`` are all sm80+, when the run is written for another device
(a TPU, Gaudi, XPU, NPU or MPS; a run that reads its files from a macOS home folder,
``"/Users/me/models/phi"``, and holds no CUDA code runs on a Mac), or when bf16 is only reached through
a command-line opt-in (``--bf16``, ``choices=``) rather than a ``default=``. A load written as a
statement alone (``AutoModel.from_pretrained(name, dtype=torch.bfloat16)``, whose result is
dropped: a script that fills the download cache) computes nothing and is not reported.

The fix follows the shared precision plan (``plan.py``): one ``BF16_OK`` probe per
module, then guarded forms that keep the original on Ampere+ and change behaviour
only where the original fails or crawls.
"""
from __future__ import annotations

import os
import re
from itertools import chain
from typing import TYPE_CHECKING, Iterable, List, Optional, Sequence, Tuple

from ..fixes import plan
from ..project.options import launcher_shown, passed_by
from ..diagnostics import SAFE, UNSAFE, Edit, Fix, Span
from ..workspace.hardware import FP8_CAPABILITY
from ..facts.model import ModuleFacts
from ..knowledge import bf16_facts, patched_default
from ..semantic.values import CONST, COND, CUDA, DTYPE, Possible, dtypes as dtype_atoms
from .base import LIGHTNING_FP16, Rule, RuleContext, default_note, is_parameter_default
from .._regex import lazy

if TYPE_CHECKING:  # the extractor (and LibCST) is loaded by the facts it made, never for the rule
    from ..facts.extractors.capability import CapabilityFacts

SECTION = "capability"  # capability.SECTION

NATIVE_BF16 = 80
TRL_BF16_DEFAULT_SINCE = (0, 19)
_BF16 = bf16_facts()
TRAINING_ERROR = _BF16["training_error"]  # the words every transformers version's error starts with
AUTOCAST_ERROR = _BF16["autocast_error"]
ACCELERATE_ERROR = _BF16["accelerate_error"]
AMP_KINDS = ("training-args", "training-args-class", "grad-scaler", "accelerator", "lightning")
LIGHTNING_BF16 = ("bf16-mixed", "bf16", "bf16-true")
# the library's own Accelerator (a project class of that name is its own)
_LIBRARY_ACCELERATORS = ("accelerate.Accelerator", "accelerate.accelerator.Accelerator")
SIMPLE = lazy(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


# --- helpers shared with MP202 -------------------------------------------------------------
def capability_facts(facts: ModuleFacts) -> Optional[CapabilityFacts]:
    found = facts.sections.get(SECTION)
    if found is None:
        return None
    # a module with the section has loaded its extractor already (unpickled or extracted)
    from ..facts.extractors.capability import CapabilityFacts

    return found if isinstance(found, CapabilityFacts) else None


def target_capabilities(ctx: RuleContext) -> Tuple[int, ...]:
    """The GPUs the code runs on (see :func:`hardware_targets`)."""
    return hardware_targets(ctx)[0]


def hardware_targets(ctx: RuleContext) -> Tuple[Tuple[int, ...], str]:
    """(the compute capabilities the code runs on, where that was found):

    - ``"configuration"``: `target-gpus` from the configuration, which overrides everything;
    - ``"device"``: nothing (``()``): the run is written for a TPU/XLA, Gaudi/HPU, XPU, NPU or
      MPS device (a backend imported, a device named, a TPU notebook, files read from a macOS
      home folder by a run with no CUDA code), not a CUDA GPU;
    - ``"stated"``: the GPUs this module, or an entry script that runs it, states (a docstring's
      "runs on an H100", SLURM ``--gres=gpu:a100``, a notebook's metadata), together with FP8
      compute anywhere in the run (sm89+) — when all of them are Ampere or newer;
    - ``"default"``: the configuration's default targets (every CUDA GPU from the P100 up).

    What an imported module *says* does not count (a library's docstrings describe their own
    hardware); what a module of the run *does* (FP8 compute) does."""
    if ctx.config.target_gpus_explicit:
        return ctx.config.target_capabilities, "configuration"
    return ctx.project.memo(("hardware targets", ctx.facts.path), lambda: _inferred_targets(ctx))


def _inferred_targets(ctx: RuleContext) -> Tuple[Tuple[int, ...], str]:
    own = capability_facts(ctx.facts)
    if own is not None and own.device is not None:
        # a CPU-only module counts as such only as a script: one that others import may hand
        # its model to a trainer that moves it to the GPU
        if own.device != "cpu" or not ctx.project.importers_of(ctx.facts):
            return (), "device"
    if own is not None and own.saves_model and not ctx.project.importers_of(ctx.facts) and all(
        (c := capability_facts(m)) is None or c.keeps_to_cpu for m in ctx.project.unit_modules(ctx.facts)
    ):
        return (), "device"  # a conversion script: neither it nor what it imports leaves the CPU
    project = ctx.project
    roots = project.root_paths(ctx.facts)
    if ctx.facts.path in roots:
        roots = tuple(p for p in roots if p != ctx.facts.path)
    # modules under the same roots share these answers (in a package, hundreds of scripts run it)
    if roots and project.memo(("roots on another device", roots), lambda: all(
        (c := capability_facts(project.by_path[p])) is not None and c.device not in (None, "cpu") for p in roots
    )):
        return (), "device"  # every script that runs it is written for another device
    if _runs_on_a_mac(project, ctx.facts):
        return (), "device"
    stating = ctx.project.memo(
        "modules stating a GPU",
        lambda: [m for m in ctx.project.modules if (c := capability_facts(m)) and c.states() is not None],
    )
    stated = [capability_facts(m).states() for m in ctx.project.entries_among(ctx.facts, stating)]
    stated.extend(capability_facts(m).states() for m in _launching(project, stating, (ctx.facts.path, *roots)))
    # Code that states its own GPU (a notebook's markdown, the docstring of the script that runs
    # it) is nearer than a README above it, written for a folder of recipes ("on the free Colab
    # T4" about another one): the README counts only where the code states nothing. What its
    # launchers request (SLURM `--gres=gpu:a100`) is the run's own, and always counts.
    readme = not stated
    shipped = project.shipped  # launch scripts, the nearest README
    stated.extend(s for s in [shipped.stated_for(ctx.facts.path, readme)] if s is not None)
    stated.extend(project.memo(
        ("roots' shipped statements", roots, readme),
        lambda: [s for p in roots if (s := shipped.stated_for(p, readme)) is not None],
    ))
    if not stated:
        stated.extend(_run_beside(project, ctx.facts))
    if _fp8_in_runs(project, project.root_paths(ctx.facts)):
        stated.append(FP8_CAPABILITY)
    if not stated and _runs_on_a_mac(project, ctx.facts, by_readme=True):
        return (), "device"  # its README names a Mac, and nothing states or uses a CUDA GPU
    if stated and min(stated) >= NATIVE_BF16:
        return (min(stated),), "stated"
    if stated:  # the GPUs named (each source's lowest), not the default list: what a message cites
        return tuple(sorted(set(stated))), "stated"
    return ctx.config.target_capabilities, "default"


def _runs_on_a_mac(project, module, by_readme: bool = False) -> bool:
    """Whether every run of ``module`` (the units of its root entries, or its own where none
    runs it) holds no CUDA code and reads a path under a macOS home folder (``model_path =
    "/Users/me/models/phi"`` in the loader it imports) or says in its comments that it runs on
    an Apple machine (``# Runs on MPS (Apple Silicon)``) or, ``by_readme``, is documented by a
    README that names an Apple machine ("Mac Studio M3 Ultra", "Apple Silicon"; asked where
    nothing states a GPU): it runs on a Mac, where torch has MPS or the CPU and no CUDA GPU whose
    capability could refuse bf16. A run that also calls ``.cuda()`` or names ``"cuda"`` anywhere
    is read as meant for a GPU too."""
    if not by_readme and not project.memo("modules reading a macOS home", lambda: any(
        (c := capability_facts(m)) is not None and c.macos_home for m in project.modules
    )):
        return False
    roots = project.root_paths(module)

    def every_run() -> bool:
        entries = [project.by_path[p] for p in roots if p in project.by_path] or [module]
        return all(
            project.memo(("a run on a Mac", entry.path, by_readme), lambda entry=entry: _mac_run(project, entry, by_readme))
            for entry in entries
        )

    # modules under the same roots share the answer (in a package, thousands of modules have
    # thousands of roots each)
    return project.memo(("every run on a Mac", roots or module.path, by_readme), every_run)


def _mac_run(project, entry, by_readme: bool) -> bool:
    if by_readme and not project.shipped.names_a_mac(entry.path):
        return False  # (asked first: the README is read once)
    if project.unit_holds(entry, "cuda code", _cuda_code):
        return False
    return project.shipped.names_a_mac(entry.path) if by_readme else project.unit_holds(entry, "macos home", _macos_home)


def _cuda_code(module) -> bool:
    found = capability_facts(module)
    return found is not None and bool(found.cuda_code)


def _macos_home(module) -> bool:
    found = capability_facts(module)
    return found is not None and bool(found.macos_home)


def _launching(project, stating, paths: Tuple[str, ...]) -> List:
    """The modules of ``stating`` whose code launches one of the files ``paths`` (a module, or
    the scripts whose runs hold it): a Modal function that requests an H100 and runs
    ``subprocess.run([sys.executable, "train/fit.py"])`` states the GPU ``fit.py`` runs on.
    A launched file is read from the launcher's folder, else by the tail of its path (the
    command runs from wherever the project is mounted: ``shipped.runs_file``)."""
    from ..workspace.shipped import runs_file

    launchers = [m for m in stating if capability_facts(m).launches]
    if not launchers:
        return []  # (most projects: no module launches another from its code)
    wanted = [os.path.abspath(p) for p in paths]
    return [
        m for m in launchers
        if any(runs_file(os.path.dirname(os.path.abspath(m.path)), written, p) for written in capability_facts(m).launches for p in wanted)
    ]


def _run_beside(project, module) -> List[int]:
    """What the scripts run in one sequence with ``module`` (a README's ``python train.py``,
    then ``python merge.py``: ``ShippedFiles.run_beside``) state or show of the machine: a
    training script's ``TrainingArguments(tf32=True)``, which transformers refuses below sm80
    (``ValueError: --tf32 requires Ampere or a newer GPU arch``), is the machine its merge and
    inference scripts run on next (review 31a). Read where nothing states a GPU for the module."""
    found = []
    for path in project.shipped.run_beside(module.path):
        other = project.module_at(path)
        facts = capability_facts(other) if other is not None else None
        stated = facts.states() if facts is not None else None
        if stated is not None:
            found.append(stated)
    return found


def _fp8_in_runs(project, roots: Tuple[str, ...]) -> bool:
    """Whether a module that computes in FP8 shares a run with the modules under ``roots``
    (the root entries of their runs): one whose own roots meet them, as it lies in those roots'
    units. Asked of the few FP8 modules (most projects have none), not by listing the joined
    modules of every root."""
    fp8 = project.memo(
        "modules computing in fp8",
        lambda: [m for m in project.modules if (capability_facts(m) or _EMPTY).fp8_compute],
    )
    if not fp8:
        return False
    return project.memo(("fp8 compute in the runs", roots), lambda: any(
        not set(roots).isdisjoint(project.root_paths(m)) for m in fp8
    ))


def bf16_outcome(ctx: RuleContext, checked_by: str, error: str) -> str:
    """What a bf16 switch does on a GPU without native bf16, for the versions the file
    targets (``where it ...``): ``checked_by`` is ``"transformers"`` (TrainingArguments and
    the configs derived from it), or ``"torch"`` (autocast, and accelerate, which asks torch).

    It raises ``error`` where torch's ``is_bf16_supported()`` is False there (torch < 2.3) or
    transformers has its own compute-capability test (< 4.35); it runs emulated where both
    count emulation. A range that allows both gets both, with the versions named."""
    from ..workspace.versions import version_text

    torch = ctx.targets.of("torch")
    emulates = _BF16["torch_emulates_since"]
    crashes: List[str] = []
    emulating: List[str] = []
    if not torch.every_at_least(emulates):
        crashes.append(f"torch below {version_text(emulates)}")
    if torch.some_at_least(emulates):
        emulating.append(f"torch {torch.from_version(emulates)}")
    shown = [torch]
    if checked_by == "transformers":
        transformers = ctx.targets.of("transformers")
        follows = _BF16["transformers_follows_torch_since"]
        if not transformers.every_at_least(follows):
            crashes.append(f"transformers below {version_text(follows)}")
        if not transformers.some_at_least(follows):
            emulating = []  # its own `major < 8` test refuses on every torch
        elif emulating:
            emulating.append(f"transformers {transformers.from_version(follows)}")
        shown.insert(0, transformers)
    where = "; ".join(a.where() for a in shown)
    emulated = (
        f"runs bf16 emulated (several times slower than fp16: `torch.cuda.is_bf16_supported()` counts "
        f"emulation from torch {version_text(emulates)}, so nothing refuses)"
    )
    if not emulating:
        return f"raises `{error}` ({where})"
    if not crashes:
        return f"{emulated} ({where})"
    return f"raises `{error}` with {' or '.join(crashes)}, and {emulated} with {' and '.join(emulating)} ({where})"


def _superseded(w, sites) -> bool:
    """Whether the dtype ``w`` gives a model is replaced before the model computes: ``w`` leaves
    it where it was (a load without a ``device_map``, ``.to(dtype=...)`` or ``.bfloat16()`` with
    no device: on the CPU, where bf16 is native), and a later cast of the same variable in the
    same scope, outside any test (``model = model.to(device=device, dtype=dtype)``), certainly gives
    it a dtype (each of its values a dtype: not ``.to(device)`` of a parameter that might carry
    one), and that cast is judged on its own."""
    if w.moves or not w.targets:
        return False
    return any(
        b is not w and b.scope == w.scope and not b.conditional and b.span.start >= w.span.end
        and b.kind != "dtype-kwarg" and b.receiver_text in w.targets
        and b.values and all(v.kind == DTYPE for v in b.values)
        for b in sites
    )


def pre_ampere_targets(ctx: RuleContext) -> List[int]:
    return sorted({c for c in target_capabilities(ctx) if c < NATIVE_BF16})


def targets_text(ctx: RuleContext, what: str = "native bf16") -> str:
    caps = pre_ampere_targets(ctx)
    shown = ", ".join(f"sm{c}" for c in caps)
    found = hardware_targets(ctx)[1]
    if found == "default":
        return f"no GPU stated: pre-Ampere assumed (target-gpus {shown}; no {what} below sm80: P100, V100, T4, TITAN RTX)"
    if found == "stated":
        return f"the code names a GPU without {what} (target-gpus {shown}; none below sm80: P100, V100, T4, TITAN RTX)"
    return f"target-gpus include {shown} (no {what} below sm80: P100, V100, T4, TITAN RTX)"


def unit_modules(ctx: RuleContext) -> List[ModuleFacts]:
    """This module and every module joined with it (along imports), once each."""
    return ctx.project.joined_modules(ctx.facts)


def in_library_itself(module, qualname: str) -> bool:
    """Whether ``module`` is part of the library that defines ``qualname`` (TRL's own
    trainers building a default ``GRPOConfig``): library internals, not a user's setup."""
    return bool(module.module) and module.module.split(".")[0] == qualname.split(".")[0]


def unit_precision_kinds(ctx: RuleContext) -> set:
    return {s.kind for m in ctx.project.joined_modules(ctx.facts, "precision") for s in m.section("precision")}


_FP16_MODES = {"accelerator": ("mixed_precision", ("fp16",)), "lightning": ("precision", LIGHTNING_FP16)}


def trains_under_fp16_autocast(ctx: RuleContext) -> bool:
    """Whether the unit trains under fp16 mixed precision and asks for bf16 mixed precision
    nowhere: a ``TrainingArguments``-like call with ``fp16=True``, an
    ``Accelerator(mixed_precision="fp16")`` or a Lightning ``precision="16-mixed"``, every value
    of it known, and no such call that may turn bf16 on (or that the linter cannot read).
    There every forward runs under ``torch.autocast(dtype=torch.float16)``."""
    fp16 = False
    for module in ctx.project.joined_modules(ctx.facts, "precision"):
        for site in module.section("precision"):
            if site.kind == "training-args":
                on, bf16 = site.arg("fp16"), site.arg("bf16")
                if bf16 is not None and not all(v.kind == CONST and not v.value for v in bf16.values):
                    return False
                if site.callee.startswith("trl.") and on is None:
                    return False  # TRL (0.19 on) turns bf16 on by itself when `fp16` is not given
                fp16 = fp16 or (on is not None and bool(on.values) and all(v.kind == CONST and v.value is True for v in on.values))
            elif site.kind in _FP16_MODES:
                name, values = _FP16_MODES[site.kind]
                mode = site.arg(name)
                if mode is None:
                    continue
                if not mode.values or any(v.kind != CONST or v.value not in values for v in mode.values):
                    return False
                fp16 = True
            elif site.kind == "training-args-class":
                return False  # a class's own defaults: not read here
    return fp16


def unit_trains(ctx: RuleContext) -> bool:
    """Whether the unit trains: a Trainer/AMP site, an optimizer or ``.backward()``."""
    if unit_precision_kinds(ctx) & set(AMP_KINDS):
        return True
    return any((capability_facts(m) or _EMPTY).trains for m in unit_modules(ctx))


def _advised_off(ctx: RuleContext, flag) -> bool:
    """Whether the project's README tells the users of a GPU without native bf16 to turn this
    flag off by the switch it reads: ``bf16=use_bf16`` where it says "If you are finetuning on a
    T4 instance which does not support bf16, set the `use_bf16` to `False`", a ``--bf16`` passed
    by a launch where it says "On a V100, replace `--bf16 True` with `--fp16 True`"
    (``ShippedFiles.advised_for``). Such a default is written for the newer GPUs the project
    targets, the older ones' users are told what to change: not a defect of the code (review
    41u's F1, a README naming an A10 for training)."""
    names = set()
    if SIMPLE().match(flag.value_text):
        names.add(flag.value_text.rsplit(".", 1)[-1])  # `use_bf16`, `cfg.use_bf16`
    if flag.via == "command-line":
        names.add("bf16")  # `--bf16`, the option the parser fills
    return bool(names) and bool(names & ctx.project.shipped.advised_for(ctx.path))


def unguarded(atoms: Iterable[Possible], cap: CapabilityFacts) -> List[Possible]:
    """The atoms that select bf16 by themselves on a CUDA GPU: not under a capability check, not
    only reached when the user opts in (a command-line option, a branch on the user's own
    switch), not in a branch for another device."""
    return [
        a
        for a in atoms
        if not a.guarded_by_capability()
        and not cap.command_line_opt_in(a.origin)
        and not any(g.user_choice or g.other_device for g in a.guards)
    ]


def _enabled_only_by_choice(enabled) -> bool:
    """Whether an autocast's ``enabled=`` is on only where the user turns it on (``enabled=
    args.bf16`` of an option off by default, a config object's switch), only where the weights
    are bf16 already (``enabled=next(model.parameters()).dtype == torch.bfloat16``: the load
    chose bf16, not this region) or never: its bf16 is then chosen elsewhere, as in
    ``autocast(dtype=torch.bfloat16) if args.bf16 else nullcontext()``. An ``enabled=`` not
    given, or one on by default, enables it."""
    values = enabled.possible() if enabled is not None else ()
    return bool(values) and all(
        (v.kind == CONST and not v.value) or any(g.user_choice or g.capability or g.param_dtype for g in v.guards)
        for v in values
    )


def requires_flash_attention(cap: CapabilityFacts, call: Span) -> bool:
    """Whether the call at ``call`` asks for FlashAttention-2 and nothing else, on every GPU
    (``from_pretrained(..., attn_implementation="flash_attention_2")``, unguarded): below sm80
    the call fails there whatever else it passes."""
    return any(
        (site.span.start, site.span.end) == (call.start, call.end) and not cap.call_guarded(site.span)
        and site.arg.values and len(unguarded(site.arg.values, cap)) == len(site.arg.values)
        and all(v.kind == CONST and v.value == ("flash_attention_2" if site.key == "attn_implementation" else True) for v in site.arg.values)
        for site in cap.attention
    )


def bf16_dtypes(values: Sequence[Possible], cap: CapabilityFacts) -> List[Possible]:
    return unguarded((a for a in dtype_atoms(values) if a.value == "bfloat16"), cap)


def truthy(values: Sequence[Possible], cap: CapabilityFacts) -> List[Possible]:
    """Atoms that turn a flag on without consulting the GPU's capability."""
    out = []
    for v in values:
        if v.kind == CONST and v.value not in (None, False, 0, "", "no", "false", "False"):
            out.append(v)
        elif v.kind == CUDA or (v.kind == COND and v.cuda and not v.capability):
            out.append(v)
    return unguarded(out, cap)


def falsy(values: Sequence[Possible], cap: CapabilityFacts) -> List[Possible]:
    """Atoms that may be False on some machine, without consulting the capability."""
    out = []
    for v in values:
        if v.kind == CONST and v.value in (None, False, 0, ""):
            out.append(v)
        elif v.kind == CUDA or (v.kind == COND and v.cuda and not v.capability):
            out.append(v)
    return unguarded(out, cap)


def probe_and_torch(
    facts: ModuleFacts, imports: Sequence[plan.ImportSpec] = (), lazy: bool = False
) -> Tuple[str, str, Tuple[Edit, ...]]:
    """(probe expression, torch name, edits creating what is missing, ``imports`` included);
    ``lazy``: a cached probe function (``plan.lazy_probe``)."""
    probe, edits = plan.capability_probe(facts, imports, lazy)
    layout = facts.layout
    if layout is not None and layout.torch_name:
        return probe, layout.torch_name, edits
    if layout is not None and layout.probes:  # the user's probe is reused, but torch is not imported
        return probe, "torch", plan.import_edits(facts, [plan.TORCH_IMPORT, *imports])
    return probe, "torch", edits  # the new probe brings `import torch` with it


def insert_keywords(site, *keywords: Tuple[str, str]) -> Edit:
    """New ``name=value`` arguments at the end of a precision site's call, in its own layout."""
    if site.insert_style == "first":
        text = ", ".join(f"{name}={value}" for name, value in keywords)
    else:
        text = "".join(site.keyword_text(name, value) for name, value in keywords)
    return Edit(site.insert_at, site.insert_at, text)


def rewrite_origins(
    ctx: RuleContext, atoms: Sequence[Possible], value_span: Span, build
) -> Optional[Tuple[Edit, ...]]:
    """Replace each atom's literal with ``build(literal_text)``; None when one cannot be rewritten.

    A literal that is the whole argument is replaced as it is; one elsewhere (a variable's
    value, an argparse ``default=``, one branch of a ternary) is parenthesised.
    """
    edits = []
    for atom in atoms:
        origin = atom.origin
        if origin is None or (atom.where and atom.where != ctx.path):
            return None  # written in another file (a caller, a config file): not edited here
        if is_parameter_default(ctx.source, origin):
            return None  # a default argument: evaluated at import, and every caller's (no fix)
        new = build(ctx.text(origin))
        if new is None:
            return None
        whole = (origin.start, origin.end) == (value_span.start, value_span.end)
        bare = whole or re.fullmatch(r"[A-Za-z_][\w.]*", new)  # a name needs no parentheses (`bf16 = BF16_OK`)
        edits.append(Edit(origin.start, origin.end, new if bare else f"({new})"))
    return tuple(sorted(set(edits), key=lambda e: e.start))


class _Empty:
    """What an absent capability section says: no fp8 compute, nothing trained."""

    fp8_compute = False
    trains = False


_EMPTY = _Empty()


class Bf16WithoutCapabilityGuard(Rule):
    code = "MP201"
    name = "bf16-without-capability-guard"
    summary = "bf16 switched on without checking that the GPU runs bf16 natively (compute capability 8.0+)"
    # the last four: files that only train a model loaded elsewhere must be parsed to be joined
    # Beyond bf16 itself: files that train (a model loaded in bf16 elsewhere is judged by them).
    fix_availability = "sometimes"
    fix_applicability = SAFE

    def check(self, ctx: RuleContext):
        cap = capability_facts(ctx.facts)
        if cap is None:
            return
        self._plan = None
        for found in chain(self._weights(ctx, cap), self._precision(ctx, cap), self._bnb(ctx, cap)):
            # the GPUs the code targets (the run's roots, their statements, FP8 compute in the
            # run) are worked out once a site would be reported, not for every module: in a
            # library most hold no bf16 switch. Where every one runs bf16 natively, none is.
            if not pre_ampere_targets(ctx):
                return
            if cap.stated_newer_at(found.span.line):
                continue  # a notebook cell its markdown says needs an A100 (or newer)
            yield found

    # --- the shared plan ------------------------------------------------------------------
    def _probe(self, ctx: RuleContext):
        if self._plan is None:
            self._plan = probe_and_torch(ctx.facts, lazy=plan.lazy_probe(ctx))
        return self._plan

    def _fix(self, ctx, message: str, edits, applicability: str = SAFE) -> Optional[Fix]:
        if edits is None:
            return None
        _, _, setup = self._probe(ctx)
        return Fix(applicability, message, tuple(setup) + tuple(edits))

    # --- weights: torch_dtype=/dtype=, .bfloat16(), .to(torch.bfloat16) ----------------------
    def _weights(self, ctx: RuleContext, cap: CapabilityFacts):
        trains = None
        sites = ctx.facts.section("weights")
        for w in sites:
            if _superseded(w, sites):
                continue  # cast again before it leaves the CPU: that cast's dtype is what runs
            if w.kind == "dtype-kwarg" and requires_flash_attention(cap, w.span):
                continue  # below sm80 the load fails at FlashAttention-2 (MP202): no dtype rescues it
            if cap.call_guarded(w.span) or w.on_cpu or w.on_meta or w.discarded or w.computes_nothing or w.upcast_first:
                # checked, kept on the CPU (a conversion script: bf16 is native there), built on
                # the meta device (`init_empty_weights()`: the call that loads the weights chooses
                # their dtype, so a fix here alone changes nothing), a load whose result is
                # dropped (it fills the download cache: nothing computes), or weights cast to be
                # saved in bf16 and nothing else (a conversion script: nothing computes), or
                # weights cast to float32 by `prepare_model_for_kbit_training` before any use
                continue
            atoms = bf16_dtypes(w.values, cap)
            if not atoms:
                continue
            if self._computes_under_fp16_autocast(ctx, cap, w):
                continue
            if w.scope_kind == "function" and ctx.project.calls.chosen_at_every_call(ctx.facts, w.scope):
                continue  # a method the code calls only where the user asks for bf16 (or it is native)
            if trains is None:
                trains = unit_trains(ctx)
            trained = (w.trainable or bool(w.quantized_unfrozen)) and trains
            fallback = "float32" if trained else "float16"
            probe, torch, _ = self._probe(ctx)
            span = w.edit_span or w.span
            if w.kind == "bfloat16":
                shown = f"`{w.receiver_text}.bfloat16()`"
                edits = (Edit(span.start, span.end, f".to({plan.guarded_bf16_weights(torch, probe, fallback)})"),)
            else:
                shown = f"`{w.edit_text}`"
                edits = rewrite_origins(ctx, atoms, span, lambda text: self._dtype_text(text, torch, probe, fallback))
            why = "trained weights keep fp32 master copies" if trained else "inference-only weights"
            # a tensor the file makes bf16 itself would meet the fallback weights where the probe
            # fails (`mat1 and mat2 must have the same dtype`): the fix is offered, not applied.
            # So is float16 for inference weights: below sm80 the bf16 original runs (emulated,
            # slowly), and a checkpoint trained in bf16 may overflow float16's range there (inf,
            # then NaN logits): the fallback changes results where the original was only slow
            applicability = UNSAFE if w.bf16_tensor_line or not trained else SAFE
            fix = self._fix(ctx, f"Load bf16 weights only where bf16 is native ({fallback} elsewhere: {why})", edits, applicability)
            message = (
                f"{shown} makes the weights bf16 on every GPU, but {targets_text(ctx)}: there bf16 is "
                f"emulated (several times slower) or refused; choose it under a capability check"
            )
            if fix is not None and not trained and not w.bf16_tensor_line:
                message += (
                    " (the fix is unsafe: float16 where bf16 is not native, and weights trained in bf16 may "
                    "overflow float16's range: check the outputs, or load float32 if memory allows)"
                )
            if fix is not None and w.bf16_tensor_line:
                message += (
                    f" (the fix is unsafe: the file makes a tensor bf16 itself (line {w.bf16_tensor_line}), which would "
                    f"meet {fallback} weights where bf16 is not native; give it the same dtype)"
                )
            if fix is None:
                message += default_note(ctx, atoms)
            shipped = passed_by(atoms, ctx.path)
            if shipped:
                message += f"; the bfloat16 is passed by {shipped}, the shipped launch"
            yield ctx.diagnostic(self.code, span, message, fix)

    @staticmethod
    def _computes_under_fp16_autocast(ctx: RuleContext, cap: CapabilityFacts, w) -> bool:
        """Whether a bf16 ``torch_dtype`` of a 4/8-bit quantized load computes nothing in bf16: the
        dtype reaches only the layers left unquantized (embeddings, norms, the head), and a unit
        that trains only under fp16 autocast (``TrainingArguments(fp16=True)``) runs every matmul
        of theirs in float16, as it does the 4-bit layers' (see :meth:`_bnb`); nothing runs the
        model outside that autocast (``model.generate(...)`` after training would, in bf16)."""
        if w.kind != "dtype-kwarg" or w.quantized_unfrozen:
            return False
        load = cap.quantized_load(w.span)
        return load is not None and load[2] is None and trains_under_fp16_autocast(ctx)

    @staticmethod
    def _dtype_text(text: str, torch: str, probe: str, fallback: str) -> Optional[str]:
        if text[:1] in ("'", '"'):
            if text[1:-1] != "bfloat16":
                return None  # "bf16", "torch.bfloat16": a project's own vocabulary, left to a human
            q = text[0]
            return f"{q}bfloat16{q} if {probe} else {q}{fallback}{q}"
        if text.endswith(".bfloat16") or text == "bfloat16":
            return f"{text} if {probe} else {torch}.{fallback}"
        return None

    # --- precision switches ------------------------------------------------------------------
    def _precision(self, ctx: RuleContext, cap: CapabilityFacts):
        kinds = None
        for site in ctx.facts.section("precision"):
            if cap.call_guarded(site.span):
                continue
            if site.kind == "training-args":
                yield from self._training_args(ctx, cap, site)
            elif site.kind == "training-args-class":
                yield from self._training_args_class(ctx, cap, site)
            elif site.kind == "autocast":
                if kinds is None:
                    kinds = unit_precision_kinds(ctx)
                yield from self._autocast(ctx, cap, site, "grad-scaler" in kinds)
            elif site.kind == "accelerator":
                yield from self._mode(ctx, cap, site, "mixed_precision", ("bf16",), "fp16", ACCELERATE_ERROR)
                yield from self._launched_mode(ctx, site)
            elif site.kind == "lightning":
                yield from self._mode(ctx, cap, site, "precision", LIGHTNING_BF16, "16-mixed", None)

    def _training_args(self, ctx, cap, site):
        if any(
            (arg := site.arg(name)) is not None and all(v.kind == CONST and v.value is True for v in arg.values)
            for name in ("use_cpu", "no_cuda")
        ):
            return  # trains on the CPU, where bf16 always works
        bf16 = site.arg("bf16")
        fp16 = site.arg("fp16")
        name = site.callee.rsplit(".", 1)[-1]
        if bf16 is not None:
            atoms = truthy(bf16.values, cap)
            if not atoms or _advised_off(ctx, bf16):
                return
            edits = self._bf16_flag_edits(ctx, site, bf16, fp16, atoms)
            shipped = passed_by(atoms, ctx.path) if bf16.via == "command-line" else ""
            shown = (
                f"`--bf16` (passed by {shipped} to the `{name}` that the parser fills)"
                if shipped
                else f"`bf16={bf16.value_text}` in `{name}`"
            )
            message = (
                f"{shown} is not guarded by a capability check; "
                f"{targets_text(ctx)}, where it {bf16_outcome(ctx, 'transformers', TRAINING_ERROR)}"
            )
            fix = self._fix(ctx, "Use bf16 only where it is native, fp16 mixed precision on other GPUs", edits)
            yield ctx.diagnostic(self.code, bf16.key_span or bf16.value_span, message, fix)
            return
        if not site.callee.startswith("trl.") or cap.opaque(site.span) or in_library_itself(ctx.facts, site.callee):
            return  # (TRL's own `args = GRPOConfig(...)` when none is given: the user's to override)
        if not ctx.targets.of("trl").some_at_least(TRL_BF16_DEFAULT_SINCE):
            return  # no TRL the file targets turns bf16 on by default (a TRL 0.9 PPOConfig has no bf16)
        if patched_default(ctx.project.always_imported(ctx.facts), site.callee, "bf16") is False:
            return  # unsloth's config in its place: bf16 off, its trainer picks it only where native
        if ctx.never_imported(site.callee):
            return  # `trl.PPOConfig` on TRL 0.29+: its import fails first (MP302)
        probe, torch, _ = self._probe(ctx)
        if fp16 is None:
            text = (("bf16", probe), ("fp16", plan.guarded_fp16_flag(torch, probe)))
            why = "neither `fp16` nor `bf16` is given"
        else:
            if not falsy(fp16.values, cap):
                return
            if all(v.kind == CONST and not v.value for v in fp16.values):
                text = (("bf16", probe),)
            elif fp16.in_code and (SIMPLE().match(fp16.value_text) or fp16.value_text.endswith(".is_available()")):
                text = (("bf16", f"{probe} and not {fp16.value_text}"),)
            else:
                text = None
            why = f"`fp16={fp16.value_text}` may be False"
        edits = None
        if text is not None:
            edits = (insert_keywords(site, *text),)
        message = (
            f"`{name}` turns bf16 on by default since TRL 0.19 when `fp16` is not set ({why}); "
            f"{targets_text(ctx)}, where it {bf16_outcome(ctx, 'transformers', TRAINING_ERROR)}"
        )
        fix = self._fix(ctx, "Pass bf16 explicitly, only where it is native", edits)
        head = Span(site.span.line, site.span.col, site.span.line, site.span.col, site.span.start, site.span.start)
        yield ctx.diagnostic(self.code, head, message, fix)

    def _bf16_flag_edits(self, ctx, site, bf16, fp16, atoms):
        if not bf16.in_code or (fp16 is not None and not fp16.in_code):
            return None  # a config file's or the command line's value: the message says where
        probe, torch, _ = self._probe(ctx)
        text = bf16.value_text
        values = bf16.values
        if all(v.kind == CONST and v.value is True for v in values) and len(atoms) == len(values):
            new, partner = probe, plan.guarded_fp16_flag(torch, probe)
            edits = rewrite_origins(ctx, atoms, bf16.value_span, lambda _t: probe)
            if edits is None:
                return None
        elif all(v.kind == CUDA for v in values):
            new, partner = probe, plan.guarded_fp16_flag(torch, probe)
            edits = (Edit(bf16.value_span.start, bf16.value_span.end, new),)
        elif SIMPLE().match(text):
            new = f"{text} and {probe}"
            partner = f"{text} and {plan.guarded_fp16_flag(torch, probe)}"
            edits = (Edit(bf16.value_span.start, bf16.value_span.end, new),)
        else:
            return None
        if fp16 is None:
            edits = edits + (insert_keywords(site, ("fp16", partner)),)
        return edits

    def _training_args_class(self, ctx, cap, site):
        bf16 = site.arg("bf16")
        if bf16 is None:
            return
        atoms = truthy(bf16.values, cap)
        if not atoms:
            return
        probe, _, _ = self._probe(ctx)
        edits = None
        if bf16.value_text == "True":
            edits = (Edit(bf16.value_span.start, bf16.value_span.end, probe),)
        message = (
            f"`{site.callee.rsplit('.', 1)[-1]}` defaults `bf16` to `{bf16.value_text}`; "
            f"{targets_text(ctx)}, where it {bf16_outcome(ctx, 'transformers', TRAINING_ERROR)}"
        )
        fix = self._fix(ctx, "Default bf16 to the capability probe", edits)
        yield ctx.diagnostic(self.code, bf16.value_span, message, fix)

    def _autocast(self, ctx, cap, site, has_scaler: bool):
        dtype = site.arg("dtype")
        if dtype is None:
            return
        atoms = bf16_dtypes(dtype.values, cap)
        if not atoms:
            return
        if ".cpu." in site.callee:
            return  # `torch.cpu.amp.autocast`: CPU autocast runs bf16 on every CPU
        if _enabled_only_by_choice(site.arg("enabled")):
            return  # `enabled=args.bf16`: the branch is the user's bf16 switch (as `... if args.bf16 else nullcontext()`)
        device = site.arg("device_type")
        cuda_only = "cuda" in site.callee
        if device is not None:
            names = [v.value for v in device.values if v.kind == CONST]
            if names and len(names) == len(device.values) and not any(str(n).startswith("cuda") for n in names):
                return  # CPU autocast runs bf16 on every CPU
            cuda_only = cuda_only or (names and len(names) == len(device.values))
        probe, torch, _ = self._probe(ctx)

        def build(text):
            if not (text.endswith(".bfloat16") or text == "bfloat16"):
                return None
            fallback = f"{torch}.float16"
            return f"{text} if {probe} else {fallback}" if cuda_only else plan.guarded_bf16_mode(torch, probe, text, fallback)

        edits = rewrite_origins(ctx, atoms, dtype.value_span, build)
        # fp16 autocast without a GradScaler may underflow gradients: not safe for training
        applicability = SAFE if has_scaler or not unit_trains(ctx) else UNSAFE
        message = (
            f"`{site.callee}(..., dtype={dtype.value_text})` on CUDA without a capability check; "
            f"{targets_text(ctx)}, where it {bf16_outcome(ctx, 'torch', AUTOCAST_ERROR)}"
        )
        fix = self._fix(ctx, "Autocast to bf16 only where it is native, fp16 on other GPUs", edits, applicability)
        yield ctx.diagnostic(self.code, dtype.value_span, message, fix)

    def _mode(self, ctx, cap, site, name, bf16_values, fallback, error):
        arg = site.arg(name)
        if arg is None:
            return
        atoms = unguarded((v for v in arg.values if v.kind == CONST and v.value in bf16_values), cap)
        if not atoms:
            return
        probe, torch, _ = self._probe(ctx)

        def build(text):
            if text[:1] not in ("'", '"'):
                return None
            q = text[0]
            return plan.guarded_bf16_mode(torch, probe, text, f"{q}{fallback}{q}")

        edits = rewrite_origins(ctx, atoms, arg.value_span, build)
        callee = site.callee.rsplit(".", 1)[-1]
        fails = bf16_outcome(ctx, "torch", error) if error else "is refused or runs emulated bf16"
        message = (
            f"`{callee}({name}={arg.value_text})` without a capability check; {targets_text(ctx)}, where it {fails}"
        )
        fix = self._fix(ctx, f"Use bf16 where it is native (and on CPU), `{fallback}` on other GPUs", edits)
        yield ctx.diagnostic(self.code, arg.value_span, message, fix)

    def _launched_mode(self, ctx, site):
        """An ``Accelerator()`` that takes its precision from the launch (no ``mixed_precision=``,
        or one that may be None), run by a shipped ``accelerate launch --mixed_precision bf16``
        (or a config file's ``mixed_precision: bf16``) of a script whose run holds it: bf16 on
        the GPUs that launch targets, with nothing in the code to ask: where a GPU is stated or
        configured (a launch the author wrote and ran says bf16 worked where no GPU is named).
        Reported at the
        ``Accelerator``, naming the launch, without a fix: the command, not the code, chooses it
        (48b note; a notebook's ``!accelerate launch`` too)."""
        if site.opaque or site.callee not in _LIBRARY_ACCELERATORS:
            return
        if hardware_targets(ctx)[1] == "default":
            return  # the author ran the launch they wrote: only a GPU stated (or configured) says it lacks bf16
        mp = site.arg("mixed_precision")
        if mp is not None and not any(v.kind == CONST and v.value is None for v in mp.values):
            return
        found = self._launched_bf16(ctx)
        if found is None:
            return
        launch, entry = found
        shown = launcher_shown(launch.launcher, ctx.path)
        line = f", line {launch.where[1].line}" if launch.where[1] is not None else ""
        run = "" if entry.path == ctx.path else f" (the run of `{os.path.basename(entry.path)}`)"
        how = f"`{launch.key}` of its config" if launch.key else f"`{launch.command}`"
        message = (
            f"`{site.callee.rsplit('.', 1)[-1]}()` takes bf16 from the shipped launch{run}: {how} ({shown}{line}) "
            f"with no capability check; {targets_text(ctx)}, where it {bf16_outcome(ctx, 'torch', ACCELERATE_ERROR)}"
        )
        yield ctx.diagnostic(self.code, site.span, message, None)

    @staticmethod
    def _launched_bf16(ctx):
        """The first shipped launch of a run holding this module that gives its Accelerator bf16,
        with the run's entry; None where none does."""
        from ..project.launched_precision import launched

        for entry in ctx.project.units_containing(ctx.facts):
            for launch in launched(ctx.project, entry.path):
                if launch.precision == "bf16":
                    return launch, entry
        return None

    # --- BitsAndBytesConfig(bnb_4bit_compute_dtype=torch.bfloat16) ------------------------------
    def _bnb(self, ctx, cap):
        """The compute dtype of 4-bit layers (``BitsAndBytesConfig(bnb_4bit_compute_dtype=...)``):
        the dequantized weight and the input are cast to it and multiplied by ``F.linear``. Under
        fp16 autocast (a Trainer with ``fp16=True``) that ``F.linear`` is autocast to float16, as
        every other matmul of the forward (and its backward): no bf16 matmul runs on any GPU, so
        a unit that trains only that way is no finding. A call that runs the model outside the
        Trainer (``model.generate(...)`` before or after ``trainer.train()``, a forward that
        scores rows: ``BnbSite.run_outside``) computes in bf16 all the same."""
        fp16_run = None
        for site in cap.bnb:
            if cap.call_guarded(site.span):
                continue
            if site.unread and not ctx.project.importers_of(ctx.facts):
                continue  # a config nothing reads: no layer is quantized with it
            if site.computes_nothing:
                continue  # its models are only merged and saved: nothing multiplies in bf16
            atoms = bf16_dtypes(site.arg.values, cap)
            if not atoms:
                continue
            if fp16_run is None:
                fp16_run = trains_under_fp16_autocast(ctx)
            if fp16_run and site.run_outside is None:
                continue
            probe, torch, _ = self._probe(ctx)
            edits = rewrite_origins(ctx, atoms, site.arg.value_span, lambda t: self._dtype_text(t, torch, probe, "float16"))
            message = (
                f"`bnb_4bit_compute_dtype={site.arg.value_text}` computes the 4-bit layers in bf16 on every GPU; "
                f"{targets_text(ctx)}, where bf16 matmuls are emulated (QLoRA on a T4 uses float16)"
            )
            if fp16_run:  # the Trainer's own steps run under its fp16 autocast; this call does not
                message += (
                    f"; the Trainer's `fp16=True` autocasts only its own steps, and `{ctx.text(site.run_outside)[:60]}` "
                    f"(line {site.run_outside.line}) runs the model outside it"
                )
            fix = self._fix(ctx, "Compute in bf16 where it is native, float16 elsewhere", edits)
            yield ctx.diagnostic(self.code, site.arg.value_span, message, fix)
