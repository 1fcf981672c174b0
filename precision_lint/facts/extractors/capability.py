"""Facts about code that needs an Ampere GPU (read by MP201, MP202).

The precision extractor already records ``bf16=``/``torch.autocast(dtype=)``/
``Accelerator``/Lightning sites and the weights extractor ``torch_dtype=``,
``.bfloat16()`` and ``.to(torch.bfloat16)``. This one adds what only matters
for compute-capability checks:

- ``BitsAndBytesConfig(bnb_4bit_compute_dtype=...)`` (the QLoRA compute dtype);
- ``attn_implementation=`` / ``use_flash_attention_2=`` given to a model loader
  or a config (``from_pretrained``, ``from_config``, ``AutoConfig``, ``*Config``, a TRL
  config's ``model_init_kwargs``), with the weights dtype passed to the same call, and
  ``config._attn_implementation = ...`` set on a config object;
- calls that sit inside an ``if`` whose test consults the GPU's capability
  (``if torch.cuda.is_bf16_supported(): args = TrainingArguments(bf16=True)``);
- TRL ``*Config`` calls: whether a ``**kwargs`` splat of unknown content may pass
  ``fp16``/``bf16`` (TRL turns bf16 on when neither is given);
- where argparse options are declared, so that a value only reached when the
  user opts in on the command line (``--bf16``, ``choices=``) is told apart from
  a ``default=`` that selects bf16 by itself;
- whether the module trains at all (``.backward()``, an optimizer, a Trainer);
- the hardware it is written for (read by the rules' ``hardware_targets``): what its comments
  and docstrings state (``facts/hardware.py``), FP8/FP4 *compute* (not an fp8 cast of the
  weights), a non-CUDA device it is written for (``torch_xla``, Gaudi, XPU, NPU, MPS, a CPU
  script), and calls under test decorators that skip below Ampere (``@require_torch_bf16_gpu``,
  ``@pytest.mark.skipif(not ampere())``), which count as guarded.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Tuple


import libcst as cst

from ...diagnostics import Span
from ...semantic.evaluate import Evaluator
from ...semantic.index import CallSite, ModuleIndex, keyword
from ...semantic.names import dotted
from .. import hardware
from ...semantic.values import CONST, Possible, dtypes as dtype_atoms
from .precision import Arg, is_training_args

SECTION = "capability"

BNB_CONFIGS = ("transformers.BitsAndBytesConfig", "transformers.utils.quantization_config.BitsAndBytesConfig")
ATTN_KEYS = ("attn_implementation", "use_flash_attention_2")
LOADER_METHODS = ("from_pretrained", "from_config", "from_single_file")
DTYPE_KWARGS = ("torch_dtype", "dtype")
TRAINER_PREFIXES = ("transformers.", "trl.", "lightning.", "pytorch_lightning.")


@dataclass(frozen=True)
class BnbSite:
    span: Span  # the BitsAndBytesConfig(...) call
    arg: Arg  # bnb_4bit_compute_dtype


@dataclass(frozen=True)
class AttentionSite:
    span: Span  # the call
    callee: str
    key: str  # "attn_implementation" or "use_flash_attention_2"
    arg: Arg
    other_key: bool  # both keys are passed
    dtypes: Tuple[Possible, ...]  # dtype atoms given to the same call (torch_dtype=/dtype=)
    loader: bool  # a weights loader (from_pretrained / from_config), not a config


@dataclass(frozen=True)
class ArgparseOption:
    """``add_argument(...)``: values written inside it but outside ``default=`` are opt-ins."""

    span: Span
    default: Optional[Span]


@dataclass(frozen=True)
class CapabilityFacts:
    bnb: Tuple[BnbSite, ...]
    attention: Tuple[AttentionSite, ...]
    # (start, end) of calls inside a capability `if`, or inside an `if` on the user's own switch
    guarded_calls: Tuple[Tuple[int, int], ...]
    opaque_splats: Tuple[Tuple[int, int], ...]  # training-args calls with an unresolvable `**kwargs`
    options: Tuple[ArgparseOption, ...]
    trains: bool
    # The GPUs the code says it is written for (comments, docstrings, SLURM `--gres=gpu:a100`,
    # a notebook's metadata; see facts/hardware.py): the lowest compute capability stated; 0
    # when a GPU without native bf16 is named (P100, V100, T4...); None when it states none.
    stated_capability: Optional[int] = None
    fp8_compute: bool = False  # computes in FP8/FP4 (TransformerEngine, torchao float8, _scaled_mm)
    device: Optional[str] = None  # the non-CUDA device it is written for ("xla", "hpu", ...)

    def call_guarded(self, span: Span) -> bool:
        return (span.start, span.end) in self.guarded_calls

    def opaque(self, span: Span) -> bool:
        return (span.start, span.end) in self.opaque_splats

    def command_line_opt_in(self, origin: Optional[Span]) -> bool:
        """Whether a value written at ``origin`` is only chosen when the user passes an option."""
        if origin is None:
            return False
        for option in self.options:
            if option.span.start <= origin.start and origin.end <= option.span.end:
                inside_default = option.default is not None and (
                    option.default.start <= origin.start and origin.end <= option.default.end
                )
                return not inside_default
        return False


def _arg(index: ModuleIndex, evaluator: Evaluator, site: CallSite, name: str) -> Optional[Arg]:
    # or `SFTConfig(model_init_kwargs={"attn_implementation": ...})`: what its trainer loads with
    sources = evaluator.kwarg(site.node, site.scope, name) or [
        s for s in evaluator.model_init_entries(site) if s.name == name
    ]
    if not sources:
        return None
    src = sources[-1]
    return Arg(
        evaluator.source_values(src, site.scope),
        index.span(src.key),
        index.span(src.value),
        index.text(src.value),
        src.via,
    )


def _opaque_splat(evaluator: Evaluator, site: CallSite) -> bool:
    for arg in site.node.args:
        if arg.star == "**" and not evaluator._dict_entries(arg.value, site.scope, set()):
            return True
    return False


def _is_config_call(site: CallSite) -> bool:
    q = site.qualname or ""
    last = q.rsplit(".", 1)[-1] if q else (site.method or "")
    return last.endswith("Config") or (site.method in LOADER_METHODS and "Config" in (q or ""))


def _trains(site: CallSite) -> bool:
    q = site.qualname or ""
    if site.method in ("backward", "zero_grad"):
        return True
    if q.startswith("torch.optim.") or q.startswith("bitsandbytes.optim."):
        return True
    return q.startswith(TRAINER_PREFIXES) and q.endswith("Trainer")


# Calls that compute in FP8/FP4 (tensor cores of sm89+): a run that makes them targets Ada,
# Hopper or newer. Casting weights to a float8 dtype is storage, not compute: it is how models
# are made to fit consumer GPUs, and says nothing about the GPU.
FP8_COMPUTE_CALLS = ("fp8_autocast", "fp8_model_init", "convert_to_float8_training", "float8_dynamic_activation_float8_weight", "Float8DynamicActivationFloat8WeightConfig", "_scaled_mm", "_scaled_grouped_mm")
FP8_COMPUTE_PREFIXES = ("transformer_engine.", "torchao.", "torch._scaled")
MX_PREFIX = "torchao.prototype.mx_formats."
# Imports that put a module on a device other than a CUDA GPU (module prefix -> device).
BACKEND_IMPORTS = re.compile(
    r"^(?:import|from)[ \t]+(torch_xla|habana_frameworks|optimum\.habana|intel_extension_for_pytorch|torch_npu)\b",
    re.MULTILINE,
)
BACKEND_DEVICE = {"torch_xla": "xla", "habana_frameworks": "hpu", "optimum.habana": "hpu", "intel_extension_for_pytorch": "xpu", "torch_npu": "npu"}
# The device itself, not a word compared against (`if args.device == "xla":` is a branch).
DEVICE_LITERAL = re.compile(
    r"""(?:torch\.device\(\s*|\.to\(\s*|\bdevice\s*=\s*)["'](xla|hpu|xpu|mps|npu)(?::\d+)?["']|\bxla_device\("""
)
CPU_DEVICE = re.compile(r"""(?:torch\.device\(\s*|\bdevice\s*=\s*)["']cpu["']""")
GPU_PLACEMENT = re.compile(r"""device_map\s*=|\bdevice\s*=\s*\d|\.to\(\s*\d|accelerate|Accelerator|local_rank""")
CUDA_WORD = re.compile(r"\bcuda\b|\bnccl\b|\bflash_attn", re.IGNORECASE)


def _fp8_compute(site: CallSite, evaluator: Evaluator) -> bool:
    """Whether a call computes in FP8/FP4 (not where it is switched off by a literal)."""
    q = site.qualname or ""
    last = q.rsplit(".", 1)[-1]
    if q.startswith(MX_PREFIX):
        return True
    if q.startswith(FP8_COMPUTE_PREFIXES) and last in FP8_COMPUTE_CALLS:
        enabled = evaluator.kwarg_values(site.node, site.scope, "enabled")
        return not (enabled and all(v.kind == CONST and not v.value for v in enabled))
    if q.startswith("accelerate.") and last == "Accelerator":
        mode = evaluator.kwarg_values(site.node, site.scope, "mixed_precision")
        return bool(mode) and all(v.kind == CONST and v.value == "fp8" for v in mode)
    return False


def other_device(source: str, code: Optional[str] = None, trains: bool = True) -> Optional[str]:
    """The non-CUDA device a module is written for (``xla``, ``hpu``, ``xpu``, ``npu``,
    ``mps``): it imports that backend at the top level or names the device, and nothing in its
    code (comments aside, ``code``) says ``cuda``. A module that has both picks at run time: None.
    ``"cpu"`` for a module that does not train (``trains``), names ``"cpu"`` as its device and
    nothing that places a model on a GPU (``device_map="auto"``, ``device=0``): a conversion or
    inference script on the CPU, where bf16 always works."""
    if code is None:
        code = hardware.split_source(source)[1]
    if CUDA_WORD.search(code):
        return None
    imported = BACKEND_IMPORTS.search(source)
    if imported is not None:
        return BACKEND_DEVICE[imported.group(1)]
    literal = DEVICE_LITERAL.search(code)
    if literal is not None:
        return literal.group(1) or "xla"
    if not trains and CPU_DEVICE.search(code) and not GPU_PLACEMENT.search(code):
        return "cpu"
    return None


# Test decorators that skip unless the GPU has what bf16/FlashAttention need (transformers'
# and accelerate's testing utilities), and skip conditions that read as a capability check
# through a helper defined elsewhere (`@pytest.mark.skipif(not ampere())`).
REQUIRE_CAPABILITY = re.compile(r"^require_\w*(?:bf16|bfloat16|flash_?attn|ampere|hopper|fp8|tf32|capability)\w*$")
CAPABILITY_WORDS = re.compile(r"ampere|hopper|bf16|bfloat16|capability|sm_?[89]\d|flash", re.IGNORECASE)
SKIP_IF = ("skipif", "skipIf")
SKIP_UNLESS = ("skipUnless",)


def _skip_test(evaluator: Evaluator, decorator: cst.BaseExpression, scope) -> bool:
    """Whether a decorator skips the test it decorates unless the GPU runs bf16 natively."""
    func = decorator.func if isinstance(decorator, cst.Call) else decorator
    name = dotted(func) or ""
    last = name.rsplit(".", 1)[-1]
    if REQUIRE_CAPABILITY.match(last):
        return True
    if last not in SKIP_IF + SKIP_UNLESS or not isinstance(decorator, cst.Call) or not decorator.args:
        return False
    condition = decorator.args[0].value
    if evaluator.consults(condition, scope, set())[0]:
        return True
    return bool(CAPABILITY_WORDS.search(evaluator.ix.text(condition)))


def decorator_guarded(evaluator: Evaluator, scope) -> bool:
    """Whether code in ``scope`` runs only where a test decorator (on its function or class, or
    the module's ``pytestmark``) found a GPU with native bf16: a guard in any file, not only in
    files named like tests."""
    key = ("decorator guarded", id(scope))
    found = evaluator.analyses.get(key)
    if found is None:
        found = False
        here = scope
        while here is not None and not found:
            node = here.node
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                outer = here.parent or here
                found = any(_skip_test(evaluator, d.decorator, outer) for d in node.decorators)
            elif here.parent is None:
                # pytest reads the module's `pytestmark` once the module has run
                _, marks = evaluator.ix.bindings_at("pytestmark", here, None)
                found = any(
                    a.value is not None and any(_skip_test(evaluator, e, here) for e in _marks(a.value)) for a in marks
                )
            here = here.parent
        evaluator.analyses[key] = found
    return found


def _marks(value: cst.BaseExpression):
    if isinstance(value, (cst.List, cst.Tuple)):
        return [e.value for e in value.elements]
    return [value]


def _chosen_or_checked(guard) -> bool:
    """A call under a capability test, under the user's own switch, or in a branch for another
    device is not hard-coded bf16 for every CUDA GPU."""
    return guard.capability or guard.user_choice or guard.other_device


def extract(index: ModuleIndex, evaluator: Evaluator) -> CapabilityFacts:
    bnb: List[BnbSite] = []
    attention: List[AttentionSite] = []
    guarded: List[Tuple[int, int]] = []
    opaque: List[Tuple[int, int]] = []
    trains = fp8 = False
    for site in index.calls:
        q = site.qualname or ""
        trains = trains or _trains(site)
        fp8 = fp8 or _fp8_compute(site, evaluator)
        if (site.guards and any(_chosen_or_checked(evaluator.guard(t, p, site.scope)) for t, p in site.guards)) or (
            decorator_guarded(evaluator, site.scope)
        ):
            span = index.span(site.node)
            guarded.append((span.start, span.end))
        if is_training_args(q) and _opaque_splat(evaluator, site):
            span = index.span(site.node)
            opaque.append((span.start, span.end))
        if q in BNB_CONFIGS or q.endswith(".BitsAndBytesConfig"):
            arg = _arg(index, evaluator, site, "bnb_4bit_compute_dtype")
            if arg is not None:
                bnb.append(BnbSite(index.span(site.node), arg))
            continue
        loader = site.method in LOADER_METHODS
        if not (loader or _is_config_call(site)):
            continue
        given = {key: _arg(index, evaluator, site, key) for key in ATTN_KEYS}
        given = {k: a for k, a in given.items() if a is not None}
        if not given:
            continue
        dtypes: List[Possible] = []
        for name in DTYPE_KWARGS:
            for src in evaluator.kwarg(site.node, site.scope, name):
                dtypes.extend(dtype_atoms(evaluator.source_values(src, site.scope)))
        for key, arg in given.items():
            attention.append(
                AttentionSite(
                    span=index.span(site.node),
                    callee=q or (site.method or ""),
                    key=key,
                    arg=arg,
                    other_key=len(given) > 1,
                    dtypes=tuple(dtypes),
                    loader=loader and "Config" not in q,
                )
            )
    for assign in index.attr_assigns:
        # `config._attn_implementation = "flash_attention_2"` before `from_config(config)`
        if assign.target.attr.value.lstrip("_") != "attn_implementation":
            continue
        span = index.span(assign.target)
        if (assign.guards and any(_chosen_or_checked(evaluator.guard(t, p, assign.scope)) for t, p in assign.guards)) or (
            decorator_guarded(evaluator, assign.scope)
        ):
            guarded.append((span.start, span.end))
        value = index.span(assign.value)
        arg = Arg(evaluator.values(assign.value, assign.scope), index.span(assign.target.attr), value, index.text(assign.value), "attribute")
        attention.append(AttentionSite(span, index.text(assign.target), "attn_implementation", arg, False, (), False))
    prose, code = hardware.split_source(index.source)
    options = []
    for found in index.arg_options.values():
        for option in found:
            default = keyword(option.call, "default")
            options.append(ArgparseOption(index.span(option.call), index.span(default.value) if default else None))
    return CapabilityFacts(
        stated_capability=hardware.stated_capability(prose),
        fp8_compute=fp8,
        device=other_device(index.source, code, trains),
        bnb=tuple(bnb),
        attention=tuple(attention),
        guarded_calls=tuple(guarded),
        opaque_splats=tuple(opaque),
        options=tuple(options),
        trains=trains,
    )

