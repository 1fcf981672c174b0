"""The mixed precision an ``Accelerator()`` takes from the ``accelerate launch`` that runs it.

``Accelerator()`` without a ``mixed_precision`` argument does not mean full precision: the
state it builds reads the launch's choice from the environment. In accelerate 1.15's
``AcceleratorState.__init__`` (``accelerate/state.py``)::

    mixed_precision = (
        parse_choice_from_env("ACCELERATE_MIXED_PRECISION", "no")
        if mixed_precision is None
        else mixed_precision.lower()
    )

so an explicit ``Accelerator(mixed_precision="no")`` wins over the launcher, and ``None`` (the
default) takes it. ``accelerate launch`` sets ``ACCELERATE_MIXED_PRECISION`` from its
``--mixed_precision``, else from the ``mixed_precision`` of the ``--config_file`` it is given
(``_validate_launch_command`` in ``accelerate/commands/launch.py``: the command line first; a
legacy ``fp16: true`` reads as fp16). Without ``--config_file`` it reads the user's own default
config (under ``~/.cache/huggingface/accelerate``), which is not the project's: only a command
line ``--mixed_precision`` is then known.

Whether that precision builds torch's ``GradScaler`` is the launch's distributed type
(``Accelerator.__init__``: fp16, a device that is not the CPU, and not DeepSpeed or Megatron-LM):

- ``distributed_type: NO`` / ``MULTI_GPU`` (``--multi_gpu``, or no config): ``get_grad_scaler``
  gives ``torch.amp.GradScaler``, whose ``unscale_`` refuses float16 gradients (``"grad-scaler"``);
- ``DEEPSPEED`` (``--use_deepspeed``): ``AcceleratorState`` sets its own mixed precision to "no";
  DeepSpeed's engine keeps fp32 master weights and its own loss scaler (``"deepspeed"``);
- ``FSDP`` (``--use_fsdp``): FSDP1 gets ``ShardedGradScaler``, whose ``unscale_`` calls
  ``_unscale_grads_(..., allow_fp16=True)`` (``torch/distributed/fsdp/sharded_grad_scaler.py``),
  and FSDP2 upcasts every trainable parameter to float32 when it prepares the model
  (``accelerate/utils/fsdp_utils.py``): no error either way (``"fsdp"``);
- Megatron-LM, XLA/TPU, ``--cpu`` / ``use_cpu: true``: no torch GradScaler on a GPU (``"other"``).

Launches are the shell commands a project ships beside the script
(``ShippedFiles.launches_for``, ``workspace/launches.py``). A config file is read from the
launcher's folder, else from the folder the command runs the script from (``accelerate launch
--config_file configs/fp16.yaml src/train.py`` in ``scripts/run.sh``, run at the root); a config
the linter cannot read, or whose ``distributed_type`` is missing (accelerate refuses it), or a
SageMaker config, gives no precision.
"""
from __future__ import annotations

import os
from .._dataclass import dataclass
from typing import TYPE_CHECKING, List, Optional, Tuple

from ..diagnostics import Span
from ..workspace.launches import Launch, option_span, passed_options

if TYPE_CHECKING:  # pragma: no cover
    from .model import Project

GRAD_SCALER_TYPES = ("NO", "MULTI_GPU")


@dataclass(frozen=True)
class LaunchedPrecision:
    """The mixed precision one shipped ``accelerate launch`` gives the script it runs."""

    launcher: str  # the launcher file's absolute path
    launch: Launch
    precision: str  # "no", "fp16", "bf16", "fp8"
    scaler: str  # "grad-scaler" (torch's GradScaler), "deepspeed", "fsdp", "other"
    command: str  # as a message shows it: "accelerate launch --mixed_precision fp16"
    where: Tuple[str, Optional[Span]]  # where the precision is written: (file, span)
    key: str = ""  # "mixed_precision: fp16" when the config file decides, else ""

    @property
    def loss_scaling(self) -> bool:
        """Whether the run scales an fp16 loss with torch's GradScaler (which refuses fp16
        gradients)."""
        return self.precision == "fp16" and self.scaler == "grad-scaler"


def _truthy(value: Optional[str]) -> bool:
    return value is not None and value.lower() not in ("false", "no", "0", "f", "n")


def _span(text: Optional[str], launch: Launch, name: str, value: str) -> Optional[Span]:
    found = option_span(text, launch, name, value) if text is not None else None
    if found is None:
        return None
    line, col, start, end = found
    return Span(line, col, line, col + (end - start), start, end)


def _run_folder(script_path: str, launch: Launch) -> Optional[str]:
    """The folder the command runs the script from: where the file it names (``launch.files``)
    is ``script_path`` (``src/train.py`` of ``/p/src/train.py``, ``-m src.train`` too: ``/p``)."""
    here = os.path.normpath(os.path.abspath(script_path))
    for file in launch.files():
        written = os.path.normpath(file)
        if not os.path.isabs(written) and not written.startswith("..") and here.endswith(os.sep + written):
            return here[: -len(written) - 1]
    return None


def _shipped(project: "Project", script_path: str) -> Tuple[Tuple[str, Optional[LaunchedPrecision]], ...]:
    """Each shipped launch of ``script_path``: (its launcher program, what it gives the script,
    None where that is not known or it is no ``accelerate launch``), read once per run."""

    def compute():
        return tuple(
            (launch.launcher, _precision(project, launcher, launch, script_path) if launch.launcher == "accelerate" else None)
            for launcher, launch in project.shipped.launches_for(script_path)
        )

    return project.memo(("launched-precision", script_path), compute)


def launched(project: "Project", script_path: str) -> List[LaunchedPrecision]:
    """The precision each shipped ``accelerate launch`` of ``script_path`` gives it (launches
    whose precision is not known left out)."""
    return [found for _, found in _shipped(project, script_path) if found is not None]


def _precision(project: "Project", launcher: str, launch: Launch, script_path: str) -> Optional[LaunchedPrecision]:
    given = passed_options(launch.launcher_args)
    text = project.shipped.command_text(launcher)
    flags = {name for name in ("use_deepspeed", "use_fsdp", "use_megatron_lm", "cpu", "tpu", "multi_gpu") if name in given and (given[name] == "" or _truthy(given[name]))}
    config_file = given.get("config_file")
    command = "accelerate launch"
    kind: Optional[str] = None
    cpu = "cpu" in flags
    config_value = None
    if "config_file" in given:
        if not config_file:
            return None  # `--config_file $CFG`: not known
        configs = project.configs
        near = [launcher]
        folder = _run_folder(script_path, launch)
        if folder is not None:
            near.append(os.path.join(folder, os.path.basename(script_path)))
        at = next((n for n in near if configs.lookup(n, config_file, ()) is not None), None)
        if at is None:
            return None  # not readable here: its distributed type and precision are not known
        top = configs.lookup(at, config_file, ())
        if top.keys is None or "distributed_type" not in top.keys:
            return None  # accelerate refuses a config without distributed_type
        env = configs.lookup(at, config_file, ("compute_environment",))
        if env is not None and env.value not in (None, "LOCAL_MACHINE"):
            return None  # SageMaker: another launcher
        distributed = configs.lookup(at, config_file, ("distributed_type",))
        kind = str(distributed.value).upper() if distributed is not None and distributed.value is not None else None
        use_cpu = configs.lookup(at, config_file, ("use_cpu",))
        cpu = cpu or (use_cpu is not None and use_cpu.value is True)
        config_value = configs.lookup(at, config_file, ("mixed_precision",))
        if config_value is None or config_value.value is None:
            legacy = configs.lookup(at, config_file, ("fp16",))
            config_value = legacy if legacy is not None and legacy.value is True else None
        command += f" --config_file {config_file}"
    # the launcher's own switches win over the config's distributed type
    if flags & {"use_deepspeed"}:
        kind = "DEEPSPEED"
    elif flags & {"use_fsdp"}:
        kind = "FSDP"
    elif flags & {"use_megatron_lm"}:
        kind = "MEGATRON_LM"
    elif flags & {"tpu"}:
        kind = "XLA"
    elif flags & {"multi_gpu"}:
        kind = "MULTI_GPU"
    elif kind is None:
        kind = "NO"  # no config: the shipped command is a plain (or DDP) run
    if kind == "DEEPSPEED":
        scaler = "deepspeed"
    elif kind == "FSDP":
        scaler = "fsdp"
    elif kind in GRAD_SCALER_TYPES and not cpu:
        scaler = "grad-scaler"
    else:
        scaler = "other"
    option = given.get("mixed_precision")
    if "mixed_precision" in given:
        if not option:
            return None  # `--mixed_precision $MP`: not known
        precision = option.lower()
        command = command.replace("accelerate launch", f"accelerate launch --mixed_precision {precision}", 1)
        where = (launcher, _span(text, launch, "mixed_precision", option))
        return LaunchedPrecision(launcher, launch, precision, scaler, command, where)
    if "config_file" not in given:
        return None  # the user's own default config decides: not the project's
    if config_value is None:
        return LaunchedPrecision(launcher, launch, "no", scaler, command, (launcher, None))
    if config_value.value is True:  # legacy `fp16: true`
        precision, key = "fp16", "fp16: true"
    else:
        precision = str(config_value.value).lower()
        key = f"mixed_precision: {precision}"
    return LaunchedPrecision(launcher, launch, precision, scaler, command, (config_value.path, config_value.span), key)


def builds_no_grad_scaler(project: "Project", script_path: str) -> bool:
    """Whether the script is launched only by shipped ``accelerate launch`` commands, every one
    known and none building torch's GradScaler (DeepSpeed, FSDP, XLA, Megatron-LM, CPU): an
    ``Accelerator(mixed_precision="fp16")`` there scales the loss with DeepSpeed's own scaler
    (fp32 master weights) or FSDP's ShardedGradScaler, which unscales fp16 gradients. False
    where no launcher is shipped, or one is not an accelerate launch, or is not readable."""
    launches = _shipped(project, script_path)
    return bool(launches) and all(
        program == "accelerate" and found is not None and found.scaler != "grad-scaler" for program, found in launches
    )
