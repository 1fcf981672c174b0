"""Facts about code that needs an Ampere GPU (read by MP201, MP202).

The precision extractor already records ``bf16=``/``torch.autocast(dtype=)``/
``Accelerator``/Lightning sites and the weights extractor ``torch_dtype=``,
``.bfloat16()`` and ``.to(torch.bfloat16)``. This one adds what only matters
for compute-capability checks:

- ``BitsAndBytesConfig(bnb_4bit_compute_dtype=...)`` (the QLoRA compute dtype);
- ``attn_implementation=`` (or ``_attn_implementation=``) / ``use_flash_attention_2=`` given to a model loader
  or a config (``from_pretrained``, ``from_config``, ``AutoConfig``, ``*Config``, a TRL
  config's ``model_init_kwargs``), with the weights dtype passed to the same call, and
  ``config._attn_implementation = ...`` set on a config object; and whether each runs only
  once ``flash_attn`` has been imported (``try: import flash_attn; ... except ImportError:``),
  where transformers' missing-package ImportError cannot arise;
- calls that sit inside an ``if`` whose test consults the GPU's capability
  (``if torch.cuda.is_bf16_supported(): args = TrainingArguments(bf16=True)``);
- TRL ``*Config`` calls: whether a ``**kwargs`` splat of unknown content may pass
  ``fp16``/``bf16`` (TRL turns bf16 on when neither is given);
- where argparse options are declared, so that a value only reached when the
  user opts in on the command line (``--bf16``, ``choices=``) is told apart from
  a ``default=`` that selects bf16 by itself;
- whether the module trains at all (``.backward()``, an optimizer, a Trainer);
- the hardware it is written for (read by the rules' ``hardware_targets``): what its comments
  and docstrings state (``workspace/hardware.py``), FP8/FP4 *compute* (not an fp8 cast of the
  weights), a non-CUDA device it is written for (``torch_xla``, Gaudi, XPU, NPU, MPS, a CPU
  script), and calls under test decorators that skip below Ampere (``@require_torch_bf16_gpu``,
  ``@pytest.mark.skipif(not ampere())``), which count as guarded.
"""
from __future__ import annotations

import ast
import io
import re
import shlex
import tokenize
import dataclasses
from ..._dataclass import dataclass
from typing import List, Optional, Set, Tuple

from ...diagnostics import Span
from ...semantic.evaluate import Evaluator, is_capability_callee
from ...semantic.index import FUNCTION_DEFS, CallSite, ModuleIndex, build_index, first_argument, keyword, literal_key, positional, unstarred
from ...semantic.kinds import object_kinds
from ...semantic.names import dotted
from ...semantic.queries import position, reaching, reaching_at
from ...workspace import hardware
from ...semantic.values import CONST, DTYPE, SYMBOLIC, Possible, dtypes as dtype_atoms
from ...semantic.values import replace as replace_fields
from .precision import Arg, is_training_args, key_span
from .weights import bitsandbytes_load
from . import sagemaker
from ..._regex import lazy

SECTION = "capability"

BNB_CONFIGS = ("transformers.BitsAndBytesConfig", "transformers.utils.quantization_config.BitsAndBytesConfig")
ATTN_KEYS = ("attn_implementation", "use_flash_attention_2")
LOADER_METHODS = ("from_pretrained", "from_config", "from_single_file")
DTYPE_KWARGS = ("torch_dtype", "dtype")
TRAINER_PREFIXES = ("transformers.", "trl.", "lightning.", "pytorch_lightning.")


@dataclass(frozen=True)
class BnbSite:
    """A ``BitsAndBytesConfig(...)`` call and the ``bnb_4bit_compute_dtype`` it passes: a bf16
    compute dtype is QLoRA's Ampere requirement, even where the weights are never cast."""

    span: Span  # the BitsAndBytesConfig(...) call
    arg: Arg  # bnb_4bit_compute_dtype
    # bound to names the module never reads: quantizes nothing, unless another module imports it
    unread: bool = False
    # a call that runs the model it quantizes outside any fp16 autocast (``model.generate(...)``,
    # ``model(**batch)`` after ``trainer.train()``): there the layers compute in the config's dtype
    # whatever the Trainer's ``fp16=True`` does for its own steps (:func:`_run_outside_autocast`)
    run_outside: Optional[Span] = None
    # every model loaded with it computes nothing: only merged with an adapter and saved
    # (`PeftModel.from_pretrained(base, adapter).merge_and_unload()` then `save_pretrained`): no
    # 4-bit layer runs a matmul in the compute dtype (:func:`_loads_compute_nothing`)
    computes_nothing: bool = False


@dataclass(frozen=True)
class AttentionSite:
    """A call that asks for an attention kernel (``attn_implementation=``,
    ``use_flash_attention_2=``) with the dtypes given to the same call: FlashAttention needs
    Ampere and half-precision weights, so the pair is judged together."""

    span: Span  # the call
    callee: str
    key: str  # "attn_implementation" or "use_flash_attention_2"
    arg: Arg
    other_key: bool  # both keys are passed
    dtypes: Tuple[Possible, ...]  # dtype atoms given to the same call (torch_dtype=/dtype=)
    loader: bool  # a weights loader (from_pretrained / from_config), not a config
    # it runs only after `import flash_attn` succeeded, in a `try` whose handler catches the
    # ImportError (:func:`_after_flash_attn_import`): the package is installed wherever it runs
    package_imported: bool = False


@dataclass(frozen=True)
class ArgparseOption:
    """``add_argument(...)``: values written inside it but outside ``default=`` are opt-ins."""

    span: Span
    default: Optional[Span]


@dataclass(frozen=True)
class CapabilityFacts:
    """What one file says about the GPU it needs and the GPU it is written for: the sites that
    need Ampere, the calls a capability test already guards, and the hardware, device and
    training evidence that decides whether a finding is due there."""

    bnb: Tuple[BnbSite, ...]
    attention: Tuple[AttentionSite, ...]
    # (start, end) of calls inside a capability `if`, or inside an `if` on the user's own switch
    guarded_calls: Tuple[Tuple[int, int], ...]
    opaque_splats: Tuple[Tuple[int, int], ...]  # training-args calls with an unresolvable `**kwargs`
    options: Tuple[ArgparseOption, ...]
    trains: bool
    # The GPUs the code says it is written for (comments, docstrings, SLURM `--gres=gpu:a100`,
    # a notebook's metadata; see workspace/hardware.py): the lowest compute capability stated; 0
    # when a GPU without native bf16 is named (P100, V100, T4...); None when it states none.
    stated_capability: Optional[int] = None
    fp8_compute: bool = False  # computes in FP8/FP4 (TransformerEngine, torchao float8, _scaled_mm)
    device: Optional[str] = None  # the non-CUDA device it is written for ("xla", "hpu", ...)
    keeps_to_cpu: bool = False  # names no device and places nothing on a GPU (keeps_to_cpu())
    saves_model: bool = False  # writes a model out: save_pretrained, torch.save, save_file
    # The checkpoint names of each load placed whole on one GPU, unquantized (`from_pretrained(
    # name, ...).cuda()`): the join gives a parameter's its callers' (`self.model_name`)
    one_gpu_loads: Tuple[Tuple[Possible, ...], ...] = ()
    # The same, for a load whose checkpoint is a command-line option's default (`--model`
    # default "Qwen/QwQ-32B"): the run the script makes when no one picks another, read where
    # nothing states a GPU (a statement may be about a smaller checkpoint the user passes)
    default_one_gpu_loads: Tuple[Tuple[Possible, ...], ...] = ()
    # The files a module that states a GPU launches from its code (`subprocess.run([sys.
    # executable, "train/fit.py"])` in a Modal function that requests an H100), as written:
    # the GPU is theirs too (read where something is stated only)
    launches: Tuple[str, ...] = ()
    # The values of a `TrainingArguments(tf32=...)` the join decides (`tf32=config.tf32` of a
    # parameter, a config file's key): where every one is True, the run exists only on Ampere
    # or newer, as a literal `tf32=True` says (``_asks_tf32``). () where the file decides it.
    tf32: Tuple[Possible, ...] = ()
    cuda_code: bool = False  # uses CUDA (_tree_marks): `.cuda()`, `torch.cuda...`, "cuda:0"
    # Each load bitsandbytes quantizes (`from_pretrained(..., quantization_config=
    # BitsAndBytesConfig(...))`, `load_in_4bit=True`) as (start, end) of the call, with the first
    # call that runs its model outside every fp16 autocast region (None: none,
    # :func:`_model_run_outside_autocast`): its `torch_dtype` reaches the layers left unquantized
    # (embeddings, norms, the head), whose matmuls a Trainer's fp16 autocast runs in float16 as it
    # does the 4-bit layers' (tune 45's F1)
    quantized_loads: Tuple[Tuple[int, int, Optional[Span]], ...] = ()
    # A notebook's rows (first, last) of the code cells right below a markdown cell that states
    # GPUs with native bf16 only ("This cell will only work on an A100"): those cells are
    # written for that GPU, whatever runtime the notebook was saved with (tune 46's F1). Added
    # on each run from the notebook (``engine._with_notebook_targets``), as its metadata is.
    newer_stated_rows: Tuple[Tuple[int, int], ...] = ()
    # reads a path under a macOS home folder, or says in its comments and docstrings that it
    # runs on an Apple machine ("Runs on MPS (Apple Silicon)"), and uses no CUDA: run with
    # modules that use none either, it runs on a Mac (MPS or the CPU), not on a CUDA GPU
    macos_home: bool = False

    def states(self) -> Optional[int]:
        """The lowest compute capability the module states (``stated_capability``, with sm80 of a
        ``tf32=True`` the join resolved), or sm80 where it places a checkpoint on one GPU that
        only an 80 GB card holds: no GPU without native bf16 can run it, whatever its words say."""
        stated = self.stated_capability
        if self.tf32 and all(v.kind == CONST and v.value is True and not v.guards for v in self.tf32):
            stated = hardware.summarise(c for c in (stated, hardware.NATIVE_BF16) if c is not None)
        if stated is not None and stated >= hardware.NATIVE_BF16:
            return stated
        if any(_only_on_80gb(names) for names in self.one_gpu_loads):
            return hardware.NATIVE_BF16
        if stated is None and any(_only_on_80gb(names) for names in self.default_one_gpu_loads):
            return hardware.NATIVE_BF16  # the script's own default run (review 30a: a 32B checkpoint)
        return stated

    def stated_newer_at(self, line: int) -> bool:
        """Whether the markdown just above the code cell holding ``line`` states that it runs on
        GPUs with native bf16 only (see ``newer_stated_rows``)."""
        return any(first <= line <= last for first, last in self.newer_stated_rows)

    def quantized_load(self, span: Span) -> Optional[Tuple[int, int, Optional[Span]]]:
        """The quantized load whose call is ``span`` (see ``quantized_loads``); None: not one."""
        return next((q for q in self.quantized_loads if (q[0], q[1]) == (span.start, span.end)), None)

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
        key_span(index, src.key),
        index.span(src.value),
        index.text(src.value),
        src.via,
    )


def _opaque_splat(evaluator: Evaluator, site: CallSite) -> bool:
    for arg in site.node.keywords:
        if arg.arg is None and not evaluator._dict_entries(arg.value, site.scope, set()):  # `**kwargs`
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
BACKEND_IMPORTS = {"torch_xla": "xla", "habana_frameworks": "hpu", "optimum.habana": "hpu", "intel_extension_for_pytorch": "xpu", "torch_npu": "npu"}
OTHER_DEVICES = ("xla", "hpu", "xpu", "mps", "npu")
# Lightning's accelerators and strategies for a TPU (``from lightning.fabric.strategies import
# XLAFSDPStrategy``): the module builds its Fabric/Trainer for XLA devices.
_LIGHTNING_XLA = re.compile(r"^(?:lightning(?:\.fabric|\.pytorch)?|lightning_fabric|pytorch_lightning)\.(?:accelerators|strategies|plugins)(?:\.\w+)*\.XLA\w*$")
# Modules whose use is CUDA code: torch's CUDA API (``torch.cuda.*``, ``torch.backends.cuda``)
# and FlashAttention's package, which has CUDA kernels only.
CUDA_MODULES = ("torch.cuda", "torch.backends.cuda", "flash_attn")
# Strings that are a CUDA device or the CUDA collective backend as values, not as words of a text.
CUDA_STRING = re.compile(r"(?:cuda(?::\d+)?|nccl)", re.IGNORECASE)
XLA_DEVICE_CALLS = ("torch_xla.core.xla_model.xla_device", "torch_xla.device")
# accelerate's calls that place a model on the GPUs it finds.
ACCELERATE_PLACERS = ("Accelerator", "PartialState", "dispatch_model", "load_checkpoint_and_dispatch")
ENV_READS = ("os.environ.get", "os.getenv")
# A device name quoted somewhere in the text: no argument can evaluate to that device without
# it. Only a shortcut (a module with none evaluates no device argument); it never decides.
_DEVICE_QUOTED = re.compile(r"""["'](xla|hpu|xpu|mps|npu|cpu)(?::\d+)?["']""")


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


def _under(name: Optional[str], prefixes) -> bool:
    return bool(name) and any(name == p or name.startswith(p + ".") for p in prefixes)


def _imported_modules(node) -> List[str]:
    """The modules an import statement names (``from torch import cuda`` names ``torch.cuda``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level or node.module is None:
        return []  # a module of the project itself
    module = node.module
    names = [] if node.names[0].name == "*" else [f"{module}.{a.name}" for a in node.names]
    return [module, *names]


def _backend_import(index: ModuleIndex) -> Optional[str]:
    """The device of a backend the module imports unconditionally: an import statement of the
    module's own body. One under ``try:``, ``if`` or in a function is optional: the module runs
    without it (``try: import torch_xla except ImportError: pass``)."""
    for small in index.module.body:
        if isinstance(small, (ast.Import, ast.ImportFrom)):
            for module in _imported_modules(small):
                if _LIGHTNING_XLA.match(module):
                    return "xla"
                for prefix, device in BACKEND_IMPORTS.items():
                    if _under(module, (prefix,)):
                        return device
    return None


def _string(node: Optional[ast.AST]) -> Optional[str]:
    """The text of a string literal (implicit concatenation included; an f-string is none)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _device_arguments(index: ModuleIndex, site: CallSite):
    """(expression, whether it is a ``.to(...)`` positional argument) for each argument of a
    call that names a device: ``torch.device(x)``, ``x.to(d)``, any ``device=`` keyword."""
    q = site.qualname or dotted(site.node.func)
    if q == "torch.device":
        first = positional(site.node)
        if first:
            yield first[0], False
        kind = keyword(site.node, "type")
        if kind is not None:
            yield kind.value, False
    elif site.method == "to":
        first = positional(site.node)
        if first:
            yield first[0], True
    found = keyword(site.node, "device")
    if found is not None:
        yield found.value, False


def _device_strings(evaluator: Evaluator, expr: ast.expr, scope) -> List[str]:
    """The device names an argument may evaluate to (``"xla:0"`` -> ``"xla"``): a string
    written there, or what a variable holds (``device = "mps"; x.to(device)``)."""
    literal = _string(expr)
    if literal is not None:
        found = [literal]
    elif isinstance(expr, (ast.Name, ast.Attribute, ast.IfExp, ast.Subscript)):
        found = [v.value for v in evaluator.values(expr, scope) if v.kind == CONST and isinstance(v.value, str)]
    else:
        found = []
    return [f.split(":", 1)[0].lower() for f in found]


@dataclass(frozen=True)
class _TreeMarks:
    """What one walk of the module's tree finds for the device questions below."""

    uses_cuda: bool  # see _tree_marks
    gpu_library: bool  # imports a library that runs on the GPU (GPU_LIBRARIES)
    local_rank: bool  # reads `args.local_rank` or `os.environ["LOCAL_RANK"]`
    macos_home: bool = False  # uses no CUDA and reads a path under a macOS home folder


def _tree_marks(index: ModuleIndex) -> _TreeMarks:
    """Whether the module's code uses CUDA: it imports torch's CUDA API or FlashAttention,
    reads ``torch.cuda...``/``torch.backends.cuda...`` or ``dist.Backend.NCCL``, calls
    ``.cuda()``, or computes with the strings ``"cuda"``, ``"cuda:N"`` or ``"nccl"`` (a device,
    a comparison against one, a ``--device`` default, ``backend="nccl"``). Read from the tree:
    comments, docstrings, other strings that mention CUDA (``"runs on cuda"``) and identifiers
    (``use_cuda_graph``, ``args.cuda``) are not CUDA code. The same walk notes a GPU library
    imported and the local rank of a distributed launch read, and, in a module that uses no
    CUDA, a path under a macOS home folder (``"/Users/me/models/phi"``, ``f"/Users/{user}/..."``:
    :data:`_MACOS_HOME`) its code reads."""
    cuda = gpu_library = local_rank = False
    for node in index.import_statements:
        modules = _imported_modules(node)
        cuda = cuda or any(_under(m, CUDA_MODULES) for m in modules)
        gpu_library = gpu_library or any(_under(m, GPU_LIBRARIES) for m in modules)
    # the nodes the index's walk noted: each mark is whether some node shows it
    cuda = cuda or any(type(site.node.func) is ast.Attribute and site.node.func.attr == "cuda" for site in index.calls)  # `model.cuda()`
    for node in index.attributes:
        if node.attr in ("cuda", "NCCL") and not cuda:
            q = index.qualify(node) or dotted(node) or ""
            cuda = _under(q, CUDA_MODULES) or q.endswith(".Backend.NCCL")
        elif node.attr == "local_rank":
            local_rank = True  # `args.local_rank`, `training_args.local_rank`
    # an f-string's own text (its literal parts, its format specs) is not a string of its own
    specs = {id(v.format_spec) for v in index.formatted_values if v.format_spec is not None}
    text_parts = {id(v) for s in index.joined_strs for v in s.values if isinstance(v, ast.Constant)}
    for node in index.constants:
        if cuda:
            break
        if id(node) not in text_parts:
            value = _string(node)
            if value is not None and CUDA_STRING.fullmatch(value) is not None:
                cuda = True
            elif value is not None and _MENTIONS_CUDA.search(value):
                cuda = _cuda_literal(index.text(node))  # `"cuda" "..."`: one of the literals
    for node in index.joined_strs:
        if cuda:
            break
        if id(node) not in specs and any(isinstance(v, ast.Constant) and _MENTIONS_CUDA.search(str(v.value)) for v in node.values):
            cuda = _cuda_literal(index.text(node))  # f"cuda:{rank}"
    for node in index.subscripts:
        if local_rank:
            break
        if literal_key(node) == "LOCAL_RANK":
            local_rank = (index.qualify(node.value) or dotted(node.value)) == "os.environ"
    words = {id(s.value) for s in index.string_statements} if not cuda else ()  # a docstring is no path read
    mac = not cuda and any(
        type(node.value) is str and node.value.startswith(_MACOS_HOME) and id(node) not in words for node in index.constants
    )
    return _TreeMarks(cuda, gpu_library, local_rank, mac)


# The start of a path under a macOS user's home folder, written in the code: the script reads
# its files on a Mac, where torch has no CUDA (MPS or the CPU). A Windows path has a drive
# (``C:/Users/...``), a Linux home is ``/home/...``.
_MACOS_HOME = "/Users/"


_MENTIONS_CUDA = re.compile(r"cuda|nccl", re.IGNORECASE)


def _cuda_literal(text: str) -> bool:
    """Whether one of the string literals a string expression is written as (``"cuda" ":0"``,
    ``"dev: " f"cuda:{rank}"``: CPython joins them into one node) is a CUDA string by itself: a
    plain literal whose value is one (:data:`CUDA_STRING`), or an f-string whose text starts
    with ``cuda:``. Each literal is read on its own, as written."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(f"({text})").readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    depth = 0  # open f-strings (Python 3.12+ tokenizes an f-string's parts)
    for i, token in enumerate(tokens):
        kind = token.type
        if kind == _FSTRING_START:
            depth += 1
            after = tokens[i + 1] if i + 1 < len(tokens) else None
            if depth == 1 and after is not None and after.type == _FSTRING_MIDDLE and after.string.lower().startswith("cuda:"):
                return True
        elif kind == _FSTRING_END:
            depth -= 1
        elif kind == tokenize.STRING and depth == 0:
            literal = token.string
            prefix = literal[: len(literal) - len(literal.lstrip("rRbBuUfF"))]
            if "f" in prefix.lower():
                body = literal[len(prefix) :]
                quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
                if body[len(quote) :].lower().startswith("cuda:"):
                    return True
                continue
            try:
                value = ast.literal_eval(literal)
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, str) and CUDA_STRING.fullmatch(value):
                return True
    return False


_FSTRING_START = getattr(tokenize, "FSTRING_START", -1)
_FSTRING_MIDDLE = getattr(tokenize, "FSTRING_MIDDLE", -1)
_FSTRING_END = getattr(tokenize, "FSTRING_END", -1)


def _places_on_gpu(index: ModuleIndex, evaluator: Evaluator, marks: _TreeMarks) -> bool:
    """Whether the module places a model on a GPU by other means than naming CUDA:
    ``device_map=``, a GPU index (``device=0``, ``.to(0)``), accelerate's ``Accelerator``/
    ``dispatch_model``, or the local rank of a distributed launch (``args.local_rank``,
    ``os.environ["LOCAL_RANK"]``)."""
    for site in index.calls:
        q = site.qualname or dotted(site.node.func) or ""
        device_map = keyword(site.node, "device_map")
        if device_map is not None and _string(device_map.value) != "cpu":
            return True  # `device_map="auto"`, a dict, a variable: `"cpu"` keeps it there
        if q.startswith("accelerate.") and q.rsplit(".", 1)[-1] in ACCELERATE_PLACERS:
            return True
        if q in ENV_READS:
            first = positional(site.node)
            if first and _string(first[0]) == "LOCAL_RANK":
                return True
        for expr, _ in _device_arguments(index, site):
            if isinstance(expr, ast.Constant) and type(expr.value) is int:
                return True
            if isinstance(expr, (ast.Name, ast.Attribute)) and any(
                v.kind == CONST and type(v.value) is int for v in evaluator.values(expr, site.scope)
            ):
                return True
    return marks.local_rank


def other_device(index, evaluator: Optional[Evaluator] = None, trains: bool = True, marks: Optional[_TreeMarks] = None) -> Optional[str]:
    """The non-CUDA device a module is written for (``xla``, ``hpu``, ``xpu``, ``npu``,
    ``mps``): it imports that backend in its own body, or passes the device to torch
    (``torch.device("xla")``, ``.to("mps")``, ``device="hpu"``, ``xm.xla_device()``), and its
    code uses no CUDA (:func:`_tree_marks`). A module that has both picks at run time: None.
    ``"cpu"`` for a module that does not train (``trains``), passes ``"cpu"`` as its device
    (``torch.device("cpu")``, ``device="cpu"``, ``.to(device)`` of a variable that holds it: a
    literal ``.to("cpu")`` moves a result back) and places nothing on a GPU
    (:func:`_places_on_gpu`): a conversion or inference script on the CPU, where bf16 always
    works. Read from the tree (``index``; a source text is parsed): comments, docstrings and
    words in strings or identifiers say nothing here."""
    if isinstance(index, str):
        index = build_index(index)
    if evaluator is None:
        evaluator = Evaluator(index)
    device = _backend_import(index)
    cpu = False
    if device is None:
        # no value can be a device unless its name is quoted somewhere in the module
        quoted = {m.group(1) for m in _DEVICE_QUOTED.finditer(index.source)}
        wanted = quoted & set(OTHER_DEVICES) | (quoted & {"cpu"} if not trains else set())
        for site in index.calls:
            q = site.qualname or ""
            if q in XLA_DEVICE_CALLS or (q.startswith("torch_xla.") and q.endswith(".xla_device")):
                device = "xla"
                break
            if not wanted:
                continue
            for expr, moved in _device_arguments(index, site):
                names = _device_strings(evaluator, expr, site.scope)
                device = next((n for n in names if n in OTHER_DEVICES), None)
                if device is not None:
                    break
                # a literal `.to("cpu")` moves a result back; a variable holding "cpu" is the device
                cpu = cpu or ("cpu" in names and not (moved and _string(expr) is not None))
            if device is not None:
                break
    if device is None and not (cpu and not trains):
        return None
    marks = marks or _tree_marks(index)
    if marks.uses_cuda:
        return None
    if device is not None:
        return device
    return None if _places_on_gpu(index, evaluator, marks) else "cpu"


# Test decorators that skip unless the GPU has what bf16/FlashAttention need (transformers'
# and accelerate's testing utilities): matched on the decorator's own function name.
REQUIRE_CAPABILITY = lazy(r"^require_\w*(?:bf16|bfloat16|flash_?attn|ampere|hopper|fp8|tf32|capability)\w*$")
# The name of a helper whose body this module does not have (imported from a package, from
# another module, or not defined anywhere it can see: `skipif(not is_ampere())`), or of a flag
# of a known testing module (`SM80OrLater`, `PLATFORM_SUPPORTS_BF16` of torch's tests): what it
# is called is all there is to read. Only ever matched against such a name, never a text.
CAPABILITY_NAME = lazy(r"ampere|hopper|bf16|bfloat16|capability|sm_?[89]\d|flash", re.IGNORECASE)
TESTING_MODULES = ("torch.testing", "transformers.testing_utils", "accelerate.test_utils", "transformers.utils", "accelerate.utils")
SKIP_IF = ("skipif", "skipIf")
SKIP_UNLESS = ("skipUnless",)
_HELPER_DEPTH = 4


def _checks_capability(evaluator: Evaluator, expr, scope, seen: set, depth: int = 0) -> bool:
    """Whether a skip condition consults the GPU's capability: through its variables and the
    returns of local functions (``Evaluator.consults``), the whole body of a function this
    module defines (``def ampere(): if get_device_capability()[0] < 8: return False ...``),
    a capability flag of a known testing module, or the name of a called helper whose body is
    not here (:data:`CAPABILITY_NAME`). ``expr``: an expression, or a function's body (a list
    of statements)."""
    ix = evaluator.ix
    start = [(statement, scope) for statement in expr] if isinstance(expr, list) else None
    for node, here in evaluator._reached(expr, scope, seen, start=start):
        if isinstance(node, ast.Call):
            site = ix.call_of(node)
            qual = site.qualname if site is not None else ix.qualify(node.func, here)
            if is_capability_callee(qual, node.func):
                return True
            function = ix.local_function(node.func, here) or ix.functions.get(qual or "")
            if function is not None:
                if depth < _HELPER_DEPTH and ("body", id(function)) not in seen:
                    seen.add(("body", id(function)))
                    if _checks_capability(evaluator, function.node.body, function, seen, depth + 1):
                        return True
                continue
            if qual is None and isinstance(node.func, ast.Name):
                qual = node.func.id  # a helper the module does not define or import
            if qual and CAPABILITY_NAME().search(qual.rsplit(".", 1)[-1]):
                return True
        elif isinstance(node, (ast.Name, ast.Attribute)):
            qual = ix.qualify(node, here)
            if _under(qual, TESTING_MODULES) and CAPABILITY_NAME().search(qual.rsplit(".", 1)[-1]):
                return True
    return False


def _skip_test(evaluator: Evaluator, decorator: ast.expr, scope) -> bool:
    """Whether a decorator skips the test it decorates unless the GPU runs bf16 natively."""
    func = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = dotted(func) or ""
    last = name.rsplit(".", 1)[-1]
    if REQUIRE_CAPABILITY().match(last):
        return True
    if last not in SKIP_IF + SKIP_UNLESS or not isinstance(decorator, ast.Call):
        return False
    condition = first_argument(decorator)
    if condition is None:
        return False
    if evaluator.consults(condition, scope, set())[0]:
        return True
    return _checks_capability(evaluator, condition, scope, set())


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
            if isinstance(node, (*FUNCTION_DEFS, ast.ClassDef)):
                outer = here.parent or here
                found = any(_skip_test(evaluator, d, outer) for d in node.decorator_list)
            elif here.parent is None:
                # pytest reads the module's `pytestmark` once the module has run
                marks = reaching_at(evaluator.ix, "pytestmark", here, None).bindings
                found = any(
                    a.value is not None and any(_skip_test(evaluator, e, here) for e in _marks(a.value)) for a in marks
                )
            here = here.parent
        evaluator.analyses[key] = found
    return found


def _marks(value: ast.expr):
    if isinstance(value, (ast.List, ast.Tuple)):
        return [unstarred(e) for e in value.elts]
    return [value]


def _chosen_or_checked(guard) -> bool:
    """A call under a capability test, under the user's own switch, or in a branch for another
    device is not hard-coded bf16 for every CUDA GPU."""
    return guard.capability or guard.user_choice or guard.other_device


# Libraries whose use puts the work on a GPU without the module naming a device.
GPU_LIBRARIES = ("vllm", "deepspeed", "bitsandbytes", "xformers", "apex", "triton", "tensorrt_llm", "auto_gptq", "awq", "exllamav2", "flash_attn")
# Keywords of a load that quantizes on the GPU (bitsandbytes, GPTQ, AWQ kernels).
GPU_LOAD_KEYWORDS = ("load_in_8bit", "load_in_4bit", "quantization_config")


# Calls that write a model out: what a conversion, merge or export script exists to do.
SAVE_CALLS = ("save_pretrained", "torch.save", "save_file", "save_model", "push_to_hub")  # by name or last part


def _saves(site: CallSite) -> bool:
    q = site.qualname or ""
    return q in SAVE_CALLS or q.rsplit(".", 1)[-1] in SAVE_CALLS or site.method in ("save_pretrained", "push_to_hub")


def keeps_to_cpu(index: ModuleIndex, evaluator: Evaluator, trains: bool, marks: Optional[_TreeMarks] = None) -> bool:
    """Whether nothing the module does leaves the CPU: it does not train, names no device at
    all (no ``device=``, ``.to(device)``, ``torch.device(...)``, ``device_map=``; a
    ``.to(torch.bfloat16)`` is a cast), places nothing on a GPU by other means
    (:func:`_places_on_gpu`), uses no CUDA (:func:`_tree_marks`), builds no
    ``transformers.pipeline`` (which picks an accelerator itself), loads nothing quantized and
    imports no library that runs on the GPU (vLLM, DeepSpeed, bitsandbytes, ...).

    A conversion or merge script of this kind (``from_pretrained(path,
    torch_dtype=torch.bfloat16)``, then ``save_pretrained``: :func:`_saves`) runs where torch's
    default device is, the CPU, and bf16 works there on every machine. Whether the modules it
    imports leave the CPU is the rule's question (their own ``keeps_to_cpu``)."""
    marks = marks or _tree_marks(index)
    if trains or marks.uses_cuda or marks.gpu_library:
        return False
    for site in index.calls:
        q = site.qualname or ""
        if q in XLA_DEVICE_CALLS or q.startswith("torch_xla.") or q == "transformers.pipeline" or q.endswith(".pipelines.pipeline"):
            return False
        if any(keyword(site.node, k) is not None for k in GPU_LOAD_KEYWORDS):
            return False
        for expr, moved in _device_arguments(index, site):
            if moved and (_is_dtype(evaluator, expr, site.scope) or (isinstance(expr, ast.Attribute) and expr.attr == "dtype")):
                continue  # `.to(torch.bfloat16)`, `.to(other.dtype)`: a cast, no device
            if moved and isinstance(expr, ast.Attribute) and expr.attr == "device" and object_kinds(index).is_model(expr.value, site.scope, site.klass):
                continue  # `.to(lm.device)`: where the module's model already is, no new device
            names = _device_strings(evaluator, expr, site.scope)
            if names and all(n == "cpu" for n in names):
                continue  # `.to("cpu")`, `device="cpu"`
            return False
    return not _places_on_gpu(index, evaluator, marks)


def _is_dtype(evaluator: Evaluator, expr, scope) -> bool:
    values = evaluator.values(expr, scope)
    return bool(values) and all(v.kind == DTYPE for v in values)


FLASH_ATTN = "flash_attn"
# the handlers that make an import an availability test (a missing package is caught)
_MISSING_PACKAGE = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "*"})


def _guarded_imports(index: ModuleIndex) -> List[Tuple[int, frozenset, object]]:
    """(pre-order number, conditions, scope) of each ``import flash_attn`` / ``from flash_attn...
    import`` in a ``try`` body one of whose handlers catches its ImportError."""
    out = []
    for statement in index.import_statements:
        if isinstance(statement, ast.ImportFrom):
            names = [statement.module or ""] if not statement.level else []
        else:
            names = [alias.name for alias in statement.names]
        if not any(n == FLASH_ATTN or n.startswith(FLASH_ATTN + ".") for n in names):
            continue
        _, caught = index.import_context.get(id(statement), ((), ()))
        if not _MISSING_PACKAGE.intersection(caught):
            continue
        at = position(index, statement)
        if at is None:
            continue
        flow = index.flow_at(at)
        if any(isinstance(key, tuple) and key[:1] == ("try",) for key in flow):
            out.append((at, flow, index.scope_of(statement)))
    return out


def _after_flash_attn_import(index: ModuleIndex, imports, node, scope) -> bool:
    """Whether ``node`` (in ``scope``) runs only after one of ``imports`` (:func:`_guarded_imports`)
    succeeded: in the same scope, after it, under every condition it is under (the same ``try``
    body or its ``else``, the same branches), so an ImportError there skips ``node``."""
    at = position(index, node)
    if at is None:
        return False
    flow = index.flow_at(at)
    return any(start < at and scope is owner and conditions <= flow for start, conditions, owner in imports)


# A model placed on one GPU: `.cuda()`, `.to("cuda:0")`, `device_map="cuda"`, `device_map={"": rank}`.
_ONE_GPU_METHODS = ("cuda", "to")
# What a load passes to quantize its weights: 8 or 4 bits a weight fit far smaller GPUs.
_QUANTIZING_KWARGS = ("load_in_8bit", "load_in_4bit", "quantization_config", "gguf_file")
# The methods a loaded model may be chained through before it is placed (`...).eval().cuda()`).
_CHAINED = ("eval", "train", "half", "bfloat16", "float", "requires_grad_", "cuda", "to")


def _one_gpu(index: ModuleIndex, evaluator: Evaluator, site: CallSite) -> bool:
    """Whether ``site`` (``x.cuda()``, ``x.to(d)``) places ``x`` on a CUDA GPU (``.to(torch.bfloat16)``,
    a dtype alone, does not)."""
    if site.method == "cuda":
        return True
    return any(
        (isinstance(device, ast.Constant) and isinstance(device.value, int) and not isinstance(device.value, bool))  # `.to(0)`
        or "cuda" in _device_strings(evaluator, device, site.scope)
        for device, _ in _device_arguments(index, site)
    )


def _device_map_one_gpu(index: ModuleIndex, evaluator: Evaluator, site: CallSite) -> bool:
    """``device_map="cuda"``/``"cuda:0"``/``0``/``{"": rank}``: the whole model on one GPU
    (``"auto"`` may spread it over several GPUs, or offload it to the CPU)."""
    passed = keyword(site.node, "device_map")
    if passed is None:
        return False
    if isinstance(passed.value, ast.Dict):
        return bool(passed.value.keys) and all(_string(k) == "" for k in passed.value.keys)
    parsed = _parsed_text(index, passed.value)
    values = [v for v in evaluator.values(parsed if parsed is not None else passed.value, site.scope) if not _passed_by_user(v)]
    if parsed is not None:
        values = [_literal(v) for v in values]
    return bool(values) and all(
        v is not None and v.kind == CONST and (
            (isinstance(v.value, int) and not isinstance(v.value, bool))
            or (isinstance(v.value, str) and CUDA_STRING.fullmatch(v.value) is not None and v.value.lower() != "nccl")
            or (isinstance(v.value, dict) and bool(v.value) and all(k == "" for k in v.value))
        )
        for v in values
    )


# calls that read a literal out of a string (`ast.literal_eval(args.device_map)` of an option
# whose default is "{'': 0}")
_LITERAL_READERS = frozenset({"ast.literal_eval", "json.loads"})


def _parsed_text(index: ModuleIndex, expr: ast.expr) -> Optional[ast.expr]:
    """The string ``expr`` reads a literal out of (``ast.literal_eval(text)``), else None."""
    if isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords:
        site = index.call_of(expr)
        if site is not None and site.qualname in _LITERAL_READERS:
            return expr.args[0]
    return None


def _literal(value: Possible) -> Optional[Possible]:
    """The literal a constant string spells (``"{'': 0}"`` → ``{"": 0}``), read as
    ``ast.literal_eval`` reads it; None where it spells none."""
    if value.kind != CONST or not isinstance(value.value, str):
        return None
    try:
        return replace_fields(value, value=ast.literal_eval(value.value))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _passed_by_user(value: Possible) -> bool:
    """A value the user passes on the command line (not the option's default)."""
    return any(g.on_command_line or g.user_choice for g in value.guards)


def _model_names(evaluator: Evaluator, site: CallSite, options: List[ArgparseOption]) -> Tuple[Tuple[Possible, ...], bool]:
    """The checkpoint names a loader may load (values: a parameter's are its callers', at the
    join), and whether one is written inside an option's declaration (``--model``'s default
    names one of many: the user chooses; the names are then the defaults only, the run the
    script makes when no one passes another)."""
    first = positional(site.node)
    expr = first[0] if first else (found.value if (found := keyword(site.node, "pretrained_model_name_or_path")) is not None else None)
    if expr is None:
        return (), False
    values = tuple(evaluator.values(expr, site.scope))
    if any(
        v.origin is not None and not v.where and any(o.span.start <= v.origin.start and v.origin.end <= o.span.end for o in options)
        for v in values
    ):
        return tuple(v for v in values if not _passed_by_user(v)), True
    return values, False


def _only_on_80gb(names: Tuple[Possible, ...]) -> bool:
    """Whether every checkpoint a load may load is one whose 16-bit weights only an 80 GB GPU
    holds (``hardware.needs_an_80gb_gpu``); a name the user passes on the command line is theirs."""
    for v in names:
        if v.kind != CONST or not isinstance(v.value, str) or v.option or _passed_by_user(v):
            return False
        billions = hardware.billions_of_parameters(v.value)
        if billions is None or not hardware.needs_an_80gb_gpu(billions):
            return False
    return bool(names)


def _made_by(index: ModuleIndex, expr: Optional[ast.expr], scope, loader: ast.Call, depth: int = 0) -> bool:
    """Whether ``expr`` is the model ``loader`` loads: the load itself, a method chained on it
    (``....eval()``), or a variable one of whose reaching bindings is either."""
    while isinstance(expr, ast.Call) and expr is not loader:
        func = expr.func
        expr = func.value if isinstance(func, ast.Attribute) and func.attr in _CHAINED else None
    if expr is loader:
        return True
    if not isinstance(expr, ast.Name) or depth > 2:
        return False
    return any(
        b.value is not None and _made_by(index, b.value, scope, loader, depth + 1)
        for b in reaching(index, expr, scope).bindings
    )


def _placed_on_one_gpu(index: ModuleIndex, evaluator: Evaluator, loader: CallSite, placers: List[CallSite]) -> bool:
    """Whether the model ``loader`` loads is placed whole on one GPU: by its ``device_map``, or
    by a ``.cuda()``/``.to("cuda")`` of the load itself or of a variable bound to it."""
    if _device_map_one_gpu(index, evaluator, loader):
        return True
    return any(
        p.scope is loader.scope and _made_by(index, p.receiver, p.scope, loader.node) and _one_gpu(index, evaluator, p)
        for p in placers
    )


def _one_gpu_loads(index: ModuleIndex, evaluator: Evaluator, options: List[ArgparseOption]):
    """The checkpoint names of each load the module places whole on one GPU, unquantized
    (:attr:`CapabilityFacts.one_gpu_loads`), and those of the loads whose checkpoint is an
    option's default (:attr:`CapabilityFacts.default_one_gpu_loads`): where they name a
    checkpoint whose weights fit no GPU without native bf16 (a 33B model's 16-bit weights, 67 GB,
    ``.cuda()``), every GPU that can run the module is an 80 GB A100 or newer, so bf16 and
    FlashAttention-2 cannot fail there. At least two bytes a weight: a load without a dtype
    reads the checkpoint's (16-bit) or float32 (transformers 4.x); one that quantizes
    (``load_in_4bit``, ``quantization_config``) or an 8-bit dtype is left out."""
    loaders = [s for s in index.calls if s.method in LOADER_METHODS and not (s.qualname or "").endswith("Config.from_pretrained")]
    if not loaders:
        return (), ()
    placers = [s for s in index.calls if s.method in _ONE_GPU_METHODS]
    out, defaults = [], []
    for site in loaders:
        if any(keyword(site.node, k) is not None for k in _QUANTIZING_KWARGS):
            continue
        dtypes = [d for name in DTYPE_KWARGS if (vals := evaluator.kwarg_values(site.node, site.scope, name)) for d in dtype_atoms(vals)]
        if any(d.value and ("float8" in d.value or d.value in ("int8", "uint8")) for d in dtypes):
            continue
        names, by_default = _model_names(evaluator, site, options)
        if names and any(v.kind != CONST or isinstance(v.value, str) for v in names) and _placed_on_one_gpu(index, evaluator, site, placers):
            (defaults if by_default else out).append(names)
    return tuple(out), tuple(defaults)


def extract(index: ModuleIndex, evaluator: Evaluator) -> CapabilityFacts:
    bnb: List[BnbSite] = []
    quantized: List[Tuple[int, int, Optional[Span]]] = []
    attention: List[AttentionSite] = []
    opaque: List[Tuple[int, int]] = []
    imports = None  # the guarded flash_attn imports, found where an attention site asks
    trains = fp8 = False
    tf32 = False  # TrainingArguments(tf32=True): a run that exists only on Ampere or newer
    tf32_joined: Tuple[Possible, ...] = ()  # its values, where the join decides them
    loaded: Optional[Set[str]] = None  # the names the module reads, worked out for its first config
    for site in index.calls:
        q = site.qualname or ""
        trains = trains or _trains(site)
        fp8 = fp8 or _fp8_compute(site, evaluator)
        if is_training_args(q) and _opaque_splat(evaluator, site):
            span = index.span(site.node)
            opaque.append((span.start, span.end))
        if is_training_args(q) and not tf32:
            tf32 = _asks_tf32(index, evaluator, site)
            if not tf32 and not tf32_joined:
                tf32_joined = _tf32_joined(index, evaluator, site)
        if q in BNB_CONFIGS or q.endswith(".BitsAndBytesConfig"):
            arg = _arg(index, evaluator, site, "bnb_4bit_compute_dtype")
            if loaded is None:
                loaded = _loaded_names(index)
            unread = _never_read(site, loaded)
            if (arg is not None and not _eight_bit(evaluator, site) and not (unread and site.scope.kind != "module")
                    and not evaluator.dead(site.guards, site.scope)):  # `if USE_QLORA:` of `USE_QLORA = False`: built in no run
                run = _run_outside_autocast(index, evaluator, site.node)
                bnb.append(BnbSite(index.span(site.node), arg, unread, run, run is None and _loads_compute_nothing(index, site.node)))
            continue
        loader = site.method in LOADER_METHODS
        if loader and bitsandbytes_load(index, evaluator, site):
            span = index.span(site.node)
            quantized.append((span.start, span.end, _model_run_outside_autocast(index, evaluator, {id(site.node)})))
        if not (loader or _is_config_call(site)):
            continue
        given = {key: _arg(index, evaluator, site, key) for key in ATTN_KEYS}
        if given["attn_implementation"] is None:
            # transformers' own spelling of the keyword, `_attn_implementation=`, is read as well
            given["attn_implementation"] = _arg(index, evaluator, site, "_attn_implementation")
        given = {k: a for k, a in given.items() if a is not None}
        if not given or evaluator.dead(site.guards, site.scope):
            continue  # (under a test that never holds, `else:` of `if USE_QLORA:` set True: loaded in no run)
        dtypes: List[Possible] = []
        for name in DTYPE_KWARGS:
            for src in evaluator.kwarg(site.node, site.scope, name):
                dtypes.extend(dtype_atoms(evaluator.source_values(src, site.scope)))
        if imports is None:
            imports = _guarded_imports(index)
        imported = _after_flash_attn_import(index, imports, site.node, site.scope)
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
                    package_imported=imported,
                )
            )
    for assign in index.attr_assigns:
        # `config._attn_implementation = "flash_attention_2"` before `from_config(config)`
        if assign.target.attr.lstrip("_") != "attn_implementation":
            continue
        if imports is None:
            imports = _guarded_imports(index)
        span = index.span(assign.target)
        value = index.span(assign.value)
        arg = Arg(evaluator.values(assign.value, assign.scope), index.name_span(assign.target), value, index.text(assign.value), "attribute")
        imported = _after_flash_attn_import(index, imports, assign.target, assign.scope)
        attention.append(AttentionSite(span, index.text(assign.target), "attn_implementation", arg, False, (), False, imported))
    prose = hardware.prose_of(index.source, [(span.start, span.end) for span in map(index.span, index.string_statements)])
    marks = _tree_marks(index)
    options = []
    for found in index.arg_options.values():
        for option in found:
            default = keyword(option.call, "default")
            options.append(ArgparseOption(index.span(option.call), index.span(default.value) if default else None))
    modal = any((site.qualname or "").startswith("modal.") for site in index.calls)
    requests = [_cloud_request(evaluator, site) for site in index.calls] if modal else []
    if _zero_gpu(index):
        requests.append(ZERO_GPU_CAPABILITY)
    # a SageMaker estimator's instance is the GPU of the script it launches (`sagemaker.py`)
    jobs = [job for job in sagemaker.extract(index, evaluator) if job.capability is not None]
    requests.extend(job.capability for job in jobs)
    if tf32:
        requests.append(hardware.NATIVE_BF16)
    stated = hardware.summarise(c for c in (hardware.stated_capability(prose), *requests) if c is not None)
    one_gpu, default_one_gpu = _one_gpu_loads(index, evaluator, options)
    return CapabilityFacts(
        stated_capability=stated,
        launches=(*_code_launches(index, evaluator), *(job.script for job in jobs)) if stated is not None else (),
        one_gpu_loads=one_gpu,
        default_one_gpu_loads=default_one_gpu,
        tf32=tf32_joined,
        fp8_compute=fp8,
        device=other_device(index, evaluator, trains, marks),
        keeps_to_cpu=keeps_to_cpu(index, evaluator, trains, marks),
        saves_model=any(_saves(site) for site in index.calls),
        cuda_code=marks.uses_cuda,
        quantized_loads=tuple(quantized),
        macos_home=marks.macos_home or (not marks.uses_cuda and hardware.names_an_apple_machine(" ".join(t for t, _ in prose))),
        bnb=tuple(bnb),
        attention=tuple(attention),
        guarded_calls=(),  # filled by finish(), once the sites that ask are known
        opaque_splats=tuple(opaque),
        options=tuple(options),
        trains=trains,
    )


def _eight_bit(evaluator: Evaluator, site: CallSite) -> bool:
    """A config that loads in 8 bits (``load_in_8bit=True``, no ``load_in_4bit``): its layers are
    ``Linear8bitLt``, which never read ``bnb_4bit_compute_dtype`` (transformers hands it to
    ``Linear4bit`` only, ``integrations/bitsandbytes.py``)."""
    def certainly(name: str, value: bool) -> bool:
        given = keyword(site.node, name)
        if given is None:
            return not value  # not given: False
        values = evaluator.values(given.value, site.scope)
        return bool(values) and all(v.kind == CONST and v.value is value for v in values)
    return certainly("load_in_8bit", True) and certainly("load_in_4bit", False)


# library calls that hand back the model they are given, wrapped or prepared (its layers, and so
# its compute dtype, as they were)
_MODEL_WRAPPERS = frozenset({
    "peft.get_peft_model", "peft.prepare_model_for_kbit_training", "peft.PeftModel.from_pretrained",
    "peft.PeftModel", "peft.PeftModelForCausalLM",
})


def _run_outside_autocast(index: ModuleIndex, evaluator: Evaluator, config: ast.Call) -> Optional[Span]:
    """The first call in the module that runs a model loaded with the ``BitsAndBytesConfig``
    call ``config`` (``from_pretrained(..., quantization_config=config)``, through a variable
    too, and what ``get_peft_model`` / ``prepare_model_for_kbit_training`` make of it) outside
    every fp16 autocast region: a forward (``model(**batch)``) or ``model.generate(...)``. A
    Trainer with ``fp16=True`` runs its own steps under autocast, where the 4-bit layers' matmuls
    are float16; such a call runs them in the compute dtype (review 26a: a Gemma QLoRA notebook
    generating before and after training on a Colab T4; 29b: a Kaggle notebook scoring every
    row after training). None where there is none, or every one runs under fp16 autocast."""
    made = {id(config)}
    models: Set[int] = set()
    for site in index.calls:  # in source order: a wrapper's argument is made before it
        if site.method in LOADER_METHODS:
            given = keyword(site.node, "quantization_config")
            if given is not None and _reaches(index, given.value, site.scope, made):
                models.add(id(site.node))
    return _model_run_outside_autocast(index, evaluator, models)


def _model_run_outside_autocast(index: ModuleIndex, evaluator: Evaluator, models: Set[int]) -> Optional[Span]:
    """The first call that runs one of the models the calls ``models`` make (by ``id``), or what
    ``get_peft_model`` / ``prepare_model_for_kbit_training`` make of them, outside every fp16
    autocast region (see :func:`_run_outside_autocast`). None where there is none."""
    models = set(models)
    for site in index.calls:  # in source order: a wrapper's argument is made before it
        if site.qualname in _MODEL_WRAPPERS:
            first = first_argument(site.node)
            if first is not None and _reaches(index, first, site.scope, models):
                models.add(id(site.node))
    if not models:
        return None
    tensors = None
    for site in index.calls:
        func = site.node.func
        runs = (type(func) is ast.Name and _reaches(index, func, site.scope, models)) or (
            site.method == "generate" and site.receiver is not None and _reaches(index, site.receiver, site.scope, models)
        )
        if not runs or evaluator.dead(site.guards, site.scope):
            continue
        if tensors is None:
            from ...semantic.tensors import half_tensors

            tensors = half_tensors(index, evaluator)
        if tensors is None or tensors.autocast_enabled(site) != "float16":
            return index.span(site.node)
    return None


def _loads_compute_nothing(index: ModuleIndex, config: ast.Call) -> bool:
    """Whether the module loads a model with the ``BitsAndBytesConfig`` call ``config``
    (``from_pretrained(..., quantization_config=config)``, through a variable too) and every such
    model computes nothing after its load (``training_state.computes_nothing_after``: saved,
    inspected, merged with an adapter and saved). A script that merges a QLoRA adapter into its
    4-bit base dequantizes each weight with its own quantization state and never multiplies in
    the compute dtype (review 41a: a self-rewarding pipeline's merge script)."""
    from ...semantic.training_state import computes_nothing_after

    made = {id(config)}
    loads = [
        site for site in index.calls
        if site.method in LOADER_METHODS and (given := keyword(site.node, "quantization_config")) is not None
        and _reaches(index, given.value, site.scope, made)
    ]
    return bool(loads) and all(
        site.assigned_to and computes_nothing_after(index, site.assigned_to, site.node, site.scope.code_scope())
        for site in loads
    )


def _reaches(index: ModuleIndex, expr: ast.expr, scope, made: Set[int]) -> bool:
    """Whether ``expr`` is one of the calls ``made`` (by ``id``), or a variable every binding of
    which that reaches it is one."""
    if id(expr) in made:
        return True
    if type(expr) is not ast.Name:
        return False
    bound = reaching(index, expr, scope).bindings
    return bool(bound) and all(a.value is not None and a.unpack_index is None and id(a.value) in made for a in bound)


def _never_read(site: CallSite, loaded: Set[str]) -> bool:
    """A config bound to names nothing in the module reads (``quant_cfg = BitsAndBytesConfig(...)``
    beside a load whose ``quantization_config=quant_cfg`` is commented out): no layer is
    quantized with it. A name bound at the module's top level may be read by an importer: the
    rule asks the project. ``loaded``: the names the module reads (:func:`_loaded_names`)."""
    names = set(site.assigned_to)
    return bool(names) and not names & loaded


def _loaded_names(index: ModuleIndex) -> Set[str]:
    """Every variable name the module reads somewhere (one walk, for all its configs)."""
    return {n.id for n in ast.walk(index.root.node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _asks_tf32(index: ModuleIndex, evaluator: Evaluator, site: CallSite) -> bool:
    """Whether a ``TrainingArguments`` (or a config derived from it) is given ``tf32=True``
    whatever the run: TF32 tensor cores exist from Ampere on, and below it (or without CUDA)
    transformers (4.13 on) refuses with ``ValueError: --tf32 requires Ampere or a newer GPU
    arch, cuda>=11 and torch>=1.7``, so the code is written for sm80 or newer, as a launch's
    ``--tf32 True`` says (``shipped._stated_by_launches``)."""
    arg = _arg(index, evaluator, site, "tf32")
    return arg is not None and bool(arg.values) and all(v.kind == CONST and v.value is True and not v.guards for v in arg.values)


def _tf32_joined(index: ModuleIndex, evaluator: Evaluator, site: CallSite) -> Tuple[Possible, ...]:
    """The values of ``tf32=`` (as :func:`_asks_tf32` reads it) where some are decided at the join
    (``tf32=config.tf32`` of a parameter whose callers pass a config whose field is True), else ()."""
    arg = _arg(index, evaluator, site, "tf32")
    if arg is None or not any(v.kind in SYMBOLIC for v in arg.values):
        return ()
    return tuple(arg.values)


# A Hugging Face Space on ZeroGPU: its functions run on the GPU Spaces lends them, an A10G in
# the beta, an A100 (40 GB) in 2024, an H200 slice since 2025 (hub docs "Spaces ZeroGPU"): all
# run bf16 natively. The lowest of them that is sm80 or more is the A100's.
ZERO_GPU = ("spaces.GPU", "spaces.zero.GPU")
ZERO_GPU_CAPABILITY = 80


def _zero_gpu(index: ModuleIndex) -> bool:
    """Whether the module is a ZeroGPU Space's code: a function decorated ``@spaces.GPU`` (or
    ``@spaces.GPU(duration=120)``), or a function wrapped by ``spaces.GPU(fn)``. Such a function
    only runs on the GPU ZeroGPU lends, so the module states that GPU as a SLURM request does."""
    for site in index.calls:
        if site.qualname in ZERO_GPU:
            return True
    for scope in index.functions.values():
        for decorator in getattr(scope.node, "decorator_list", ()):
            if index.qualify(decorator, scope.parent) in ZERO_GPU:
                return True
    return False


def _cloud_request(evaluator: Evaluator, site: CallSite) -> Optional[int]:
    """The GPU a Modal function or class requests in a module that uses Modal, as a SLURM
    ``--gres=gpu:a100`` does: the lowest capability of a call's ``gpu=``
    (``@app.function(gpu="H100:8")``, whose ``app`` is the module's ``modal.App``; a list of
    fallbacks ``["h100", "a100-80gb"]``), or of a ``modal.gpu.A100(size="80GB")``. None: no
    request, ``"any"``, or a value not known."""
    q = site.qualname or ""
    if q.startswith("modal.gpu."):
        return hardware.requested_capability(q.rsplit(".", 1)[-1])
    given = keyword(site.node, "gpu")
    if given is None or isinstance(given.value, ast.Call):
        return None  # a `modal.gpu.X()` is a call of its own
    names = []
    for element in given.value.elts if isinstance(given.value, (ast.List, ast.Tuple)) else [given.value]:
        values = evaluator.values(element, site.scope)
        if not values or any(v.kind != CONST or not isinstance(v.value, str) for v in values):
            return None
        names.extend(v.value for v in values)
    found = [hardware.requested_capability(n) for n in names]
    return None if not found or None in found else min(found)


def _code_launches(index: ModuleIndex, evaluator: Evaluator) -> Tuple[str, ...]:
    """The files the module's code runs as a command (``subprocess.run([sys.executable,
    "train/fit.py", "--cfg", path])``, ``os.system("accelerate launch fit.py")``), as written
    (``workspace/launches.py`` reads each command; a word that is not known, an interpreter's
    path or an argument, is kept as a shell variable)."""
    from ...workspace.launches import parse
    from .accelerate_launch import runner_command

    out: List[str] = []
    for site in index.calls:
        words = runner_command(index, evaluator, site)
        if not words:
            continue
        text = " ".join(("python" if i == 0 else "$ARG") if w is None else shlex.quote(w) for i, (w, _) in enumerate(words))
        launch = parse(text, site.node.lineno)
        if launch is not None:
            out.extend(launch.files())
    return tuple(dict.fromkeys(out))


def finish(cap: CapabilityFacts, sections: dict, index: ModuleIndex, evaluator: Evaluator) -> CapabilityFacts:
    """``cap`` with its ``guarded_calls``, once every extractor has run: whether a call (or a
    ``config._attn_implementation = ...``) sits under a capability test, the user's own switch
    or another device's branch is asked (``call_guarded``) only of the module's own weights,
    precision, bnb and attention sites, so it is worked out only for the calls at their spans
    (each guard is a walk through the variables its test reads: worked out for every call under
    an ``if``, most of them were never asked about)."""
    wanted = {
        (site.span.start, site.span.end)
        for name in ("weights", "precision")
        for site in (sections.get(name) or ())
    }
    wanted.update((site.span.start, site.span.end) for site in (*cap.bnb, *cap.attention))
    if not wanted:
        return cap
    def is_guarded(guards, scope) -> bool:
        return bool(guards) and any(_chosen_or_checked(evaluator.guard(t, p, scope)) for t, p in guards) or decorator_guarded(evaluator, scope)

    guarded: List[Tuple[int, int]] = []
    # a call that is one branch of a conditional expression runs only where its test holds
    sites = [(index.span(site.node), site.every_guard, site.scope) for site in index.calls]
    sites += [
        (index.span(assign.target), assign.guards, assign.scope)
        for assign in index.attr_assigns
        if assign.target.attr.lstrip("_") == "attn_implementation"
    ]
    for span, guards, scope in sites:
        key = (span.start, span.end)
        if key in wanted and is_guarded(guards, scope):
            guarded.append(key)
    return dataclasses.replace(cap, guarded_calls=tuple(guarded))

