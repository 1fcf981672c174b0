"""Watch an ordinary training script from inside its process, without editing it.

``launch.py --probe STATE.json --steps N`` loads this file by path before it runs the
user's script, so the script needs no header and no special prints. What it does:

- **counts optimizer steps** with torch's global optimizer step hooks (every optimizer,
  whoever calls it: a custom loop, ``GradScaler.step``, accelerate, the ``Trainer``), plus
  the steps a ``GradScaler`` skipped because the gradients held inf/nan (the optimizer is
  not called then, but the script made a step). After the N-th it raises :class:`StopRun`,
  a ``BaseException`` so that the script's own ``except Exception`` does not swallow it;
  ``launch.py`` records the run as completed, stopped after N steps;
- **records each step's loss**: the scalar tensor passed to ``GradScaler.scale`` (the loss
  before scaling) or to ``backward``; several backward calls in one step (gradient
  accumulation) are kept as a list;
- **records the precision plan in force** at the first step: the dtypes of the parameters
  the optimizers train, the dtypes of the frozen parameters of the models they belong to
  (a PEFT model's base: a fix must leave it as it was), the autocast contexts entered (device, dtype), each ``GradScaler``
  (device, enabled) and the ``TrainingArguments`` precision flags, with the device
  (CUDA name and capability, or CPU);
- **seeds** ``random``, numpy and torch with 0 before the script starts, so that the runs
  of one script (original, fixed, fp32 reference) start from the same weights and data
  unless the script seeds itself;
- **caps the Trainer**: ``TrainingArguments`` get ``max_steps=N``, no saving, no
  evaluation, no reporting integrations, no hub push, before their own checks run;
- where CUDA is absent, installs the ``trainer-fp16-scaler`` emulation given by
  ``launch.py`` on ``Trainer.train`` (labelled ``cpu-emulated`` in the report);
- for the **fp32 reference** run (``--fp32``): autocast contexts are entered disabled,
  every ``GradScaler`` is disabled, ``module.half()`` / ``.bfloat16()`` / ``.to(half dtype)``
  keep the module's dtype, ``from_pretrained`` loads float32 and ``TrainingArguments`` get
  ``fp16=bf16=False`` -- the same script and data, in float32, to compare losses with;
- with ``--tiny``: ``from_pretrained`` (Auto classes and model classes) reads only the
  config and builds a 2-layer, narrow model of the same class with random weights, in the
  dtype the script asked for -- the precision plan runs without the weights (reported).

The state is written to STATE.json after every step and at the end, so a run that times
out or crashes still reports the steps it made. ``transformers`` is patched only if the
script imports it (an import hook on its submodules), so a plain torch script pays nothing
for it. This file imports nothing from ``precision_lint``.
"""
import importlib.abc
import json
import math
import os
import sys
import time

STATE_VERSION = 1


class StopRun(BaseException):
    """Raised after the requested number of optimizer steps: ends the script on purpose."""


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _frozen_dtypes(torch, trainable):
    """The dtypes of the frozen parameters (``requires_grad=False``) of every model that holds
    one of the ``trainable`` tensors: {dtype: [tensors, numel]}. The optimizer knows only what
    it trains; the models are found among the live modules (``gc``), their roots being the
    modules no other module holds as a child. Read once, at the first step."""
    import gc
    import warnings

    # isinstance() reads ``__class__`` of every live object; some deprecated proxies warn on
    # that read (torch 2.11 on CUDA: "FutureWarning: `torch.distributed.reduce_op` is
    # deprecated"), which would land in the user's run as if their script had caused it.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        modules = [o for o in gc.get_objects() if isinstance(o, torch.nn.Module)]
    children = {id(c) for m in modules for c in m._modules.values() if c is not None}
    wanted = {id(p) for p in trainable}
    seen, dtypes = set(), {}
    for root in modules:
        if id(root) in children:
            continue
        params = list(root.parameters())
        if not any(id(p) in wanted for p in params):
            continue
        for p in params:
            if p.requires_grad or id(p) in seen:
                continue
            seen.add(id(p))
            entry = dtypes.setdefault(_dtype_name(p.dtype), [0, 0])
            entry[0] += 1
            entry[1] += p.numel()
    return dtypes


def _finite_or_text(value):
    return value if math.isfinite(value) else str(value)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs ``hooks[name](module)`` right after the module ``name`` is executed."""

    def __init__(self, hooks):
        self.hooks = dict(hooks)

    def find_spec(self, name, path=None, target=None):
        hook = self.hooks.get(name)
        if hook is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        original = loader.exec_module

        def exec_module(module):
            original(module)
            self.hooks.pop(name, None)
            hook(module)

        loader.exec_module = exec_module
        return spec


class Probe:
    def __init__(self, steps, state_path, emulate_trainer=None, root=None, fp32=False, tiny=False):
        self.limit = int(steps)
        self.fp32 = bool(fp32)  # the fp32 reference run: half precision switched off
        self.tiny = bool(tiny)  # from_pretrained builds a 2-layer model of the config's class
        self.tiny_models = []  # [{"name", "class", "config", "dtype"}]
        self.root = os.path.abspath(root) + os.sep if root else None
        self.state_path = state_path
        self.emulate_trainer = emulate_trainer  # callable(Trainer class, record) or None
        self.started = time.monotonic()
        self.optimizer_steps = 0
        self.steps = []  # [{"step", "losses", "skipped"}]
        self.pending = []  # losses recorded since the last step
        self.plan = {}
        self.autocast = []  # [[device, dtype]] in the order first entered
        self.scalers = []  # [{"device", "enabled"}]
        self.training_args = []  # [{"class", "fp16", "bf16", ...}]
        self.emulation_installed = False
        self.stopped = False
        self.notes = []
        self.optimizers = []  # every optimizer the script created (the process ends soon)

    # -- state -------------------------------------------------------------------------
    def state(self):
        return {
            "version": STATE_VERSION,
            "limit": self.limit,
            "stopped": self.stopped,
            "steps": self.steps,
            "pending_losses": self.pending,
            "plan": self.plan,
            "autocast": self.autocast,
            "scalers": self.scalers,
            "training_args": self.training_args,
            "emulation_installed": self.emulation_installed,
            "fp32_reference": self.fp32,
            "tiny_models": self.tiny_models,
            "notes": self.notes,
            "local_modules": self.local_modules(),
            "duration_s": round(time.monotonic() - self.started, 3),
        }

    def local_modules(self):
        """The script's own modules it imported: files under ``root`` (the copied folder)."""
        if not self.root:
            return []
        found = set()
        for module in list(sys.modules.values()):
            filename = getattr(module, "__file__", None)
            if isinstance(filename, str):
                filename = os.path.abspath(filename)
                if (filename.startswith(self.root) and filename.endswith(".py")
                        and os.path.isfile(filename)):
                    found.add(filename[len(self.root):])
        return sorted(found)

    def write(self):
        tmp = self.state_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.state(), f)
        os.replace(tmp, self.state_path)

    # -- events ------------------------------------------------------------------------
    def record_loss(self, tensor):
        try:
            value = float(tensor.detach().float().item())
        except Exception:  # noqa: BLE001 - a tensor we cannot read is not a loss we report
            return
        self.pending.append(_finite_or_text(value))

    def record_plan(self, optimizer):
        if self.plan:
            return
        import torch

        dtypes, devices, trainable = {}, {}, []
        for group in optimizer.param_groups:
            for p in group["params"]:
                if not isinstance(p, torch.Tensor) or not p.requires_grad:
                    continue
                trainable.append(p)
                entry = dtypes.setdefault(_dtype_name(p.dtype), [0, 0])
                entry[0] += 1
                entry[1] += p.numel()
                devices[str(p.device.type)] = devices.get(str(p.device.type), 0) + 1
        cuda = None
        if torch.cuda.is_available():
            index = torch.cuda.current_device()
            major, minor = torch.cuda.get_device_capability(index)
            cuda = {"name": torch.cuda.get_device_name(index), "capability": f"sm{major}{minor}",
                    "bf16_supported": bool(torch.cuda.is_bf16_supported())}
        try:
            frozen = {k: {"tensors": v[0], "numel": v[1]} for k, v in _frozen_dtypes(torch, trainable).items()}
        except Exception as exc:  # noqa: BLE001 - the run goes on; the report says what is missing
            frozen = {}
            self.notes.append(f"frozen weights not readable: {type(exc).__name__}: {exc}")
        self.plan = {
            "optimizer": type(optimizer).__name__,
            "param_dtypes": {k: {"tensors": v[0], "numel": v[1]} for k, v in dtypes.items()},
            "frozen_param_dtypes": frozen,
            "param_devices": devices,
            "cuda": cuda,
        }

    def finish(self):
        """At the end of the run: the plan of the first optimizer, if no step recorded it."""
        if not self.plan:
            for optimizer in self.optimizers[:1]:
                try:
                    self.record_plan(optimizer)
                except Exception as exc:  # noqa: BLE001 - report what we could not read
                    self.notes.append(f"plan not readable: {type(exc).__name__}: {exc}")
        self.write()

    def on_step(self, optimizer, skipped=False):
        self.record_plan(optimizer)
        self.steps.append({"step": len(self.steps) + 1, "losses": self.pending, "skipped": skipped})
        self.pending = []
        self.write()
        if len(self.steps) >= self.limit:
            self.stopped = True
            self.write()
            raise StopRun(f"precision-lint verify: stopped after {self.limit} optimizer steps")

    # -- torch -------------------------------------------------------------------------
    def install_torch(self):
        import torch
        from torch.amp import autocast_mode, grad_scaler
        from torch.optim import optimizer as optimizer_module

        probe = self

        def post_hook(optimizer, args, kwargs):
            probe.optimizer_steps += 1
            probe.on_step(optimizer)

        optimizer_module.register_optimizer_step_post_hook(post_hook)

        Optimizer = optimizer_module.Optimizer
        original_optimizer_init = Optimizer.__init__

        def optimizer_init(self, *args, **kwargs):
            original_optimizer_init(self, *args, **kwargs)
            probe.optimizers.append(self)

        Optimizer.__init__ = optimizer_init

        original_backward = torch.autograd.backward

        def backward(tensors, *args, **kwargs):
            loss = tensors
            if isinstance(loss, (list, tuple)) and len(loss) == 1:
                loss = loss[0]
            if (isinstance(loss, torch.Tensor) and loss.numel() == 1
                    and not getattr(loss, "_precision_lint_scaled", False)):
                probe.record_loss(loss)
            return original_backward(tensors, *args, **kwargs)

        torch.autograd.backward = backward

        GradScaler = grad_scaler.GradScaler
        original_init, original_scale, original_step = GradScaler.__init__, GradScaler.scale, GradScaler.step
        original_unscale = GradScaler.unscale_

        def scaler_init(self, *args, **kwargs):
            original_init(self, *args, **kwargs)
            if probe.fp32:
                self._enabled = False  # the fp32 reference: no loss scaling
            probe.scalers.append({"class": type(self).__name__, "device": str(getattr(self, "_device", "?")),
                                  "enabled": bool(getattr(self, "_enabled", False))})

        def scale(self, outputs):
            if isinstance(outputs, torch.Tensor) and outputs.numel() == 1:
                probe.record_loss(outputs)
            scaled = original_scale(self, outputs)
            if isinstance(scaled, torch.Tensor) and scaled is not outputs:
                try:
                    scaled._precision_lint_scaled = True
                except Exception:  # noqa: BLE001
                    pass
            return scaled

        def step(self, optimizer, *args, **kwargs):
            before = probe.optimizer_steps
            result = original_step(self, optimizer, *args, **kwargs)
            if probe.optimizer_steps == before and self.is_enabled():
                probe.on_step(optimizer, skipped=True)  # inf/nan gradients: step skipped
            return result

        def unscale_(self, optimizer):
            probe.record_plan(optimizer)  # before it may raise: the plan that made it fail
            return original_unscale(self, optimizer)

        GradScaler.__init__, GradScaler.scale, GradScaler.step = scaler_init, scale, step
        GradScaler.unscale_ = unscale_

        autocast = autocast_mode.autocast
        original_enter = autocast.__enter__

        def enter(self):
            if probe.fp32 and getattr(self, "_enabled", False):
                self._enabled = False  # the fp32 reference: autocast off
            if getattr(self, "_enabled", False):
                key = [str(getattr(self, "device", "?")), _dtype_name(getattr(self, "fast_dtype", "?"))]
                if key not in probe.autocast:
                    probe.autocast.append(key)
            return original_enter(self)

        autocast.__enter__ = enter

        if self.fp32:
            self._keep_modules_fp32(torch)

    def _keep_modules_fp32(self, torch):
        """The fp32 reference: ``module.half()``, ``.bfloat16()``, ``.to(torch.float16)`` keep
        the module's dtype (the device part of ``.to`` still applies)."""
        Module = torch.nn.Module
        half_dtypes = (torch.float16, torch.bfloat16)
        original_to = Module.to

        def keep(self, *args, **kwargs):
            return self

        def to(self, *args, **kwargs):
            try:
                device, dtype, non_blocking, _ = torch._C._nn._parse_to(*args, **kwargs)
            except Exception:  # noqa: BLE001 - let torch report its own argument error
                return original_to(self, *args, **kwargs)
            if dtype in half_dtypes:
                return original_to(self, device, non_blocking=non_blocking) if device is not None else self
            return original_to(self, *args, **kwargs)

        Module.half = keep
        Module.bfloat16 = keep
        Module.to = to

    # -- transformers --------------------------------------------------------------------
    def patch_training_args(self, module):
        TrainingArguments = getattr(module, "TrainingArguments", None)
        if TrainingArguments is None or not hasattr(TrainingArguments, "__post_init__"):
            return
        original = TrainingArguments.__post_init__
        probe = self
        caps = {"max_steps": self.limit, "save_strategy": "no", "eval_strategy": "no",
                "do_eval": False, "load_best_model_at_end": False, "report_to": "none",
                "push_to_hub": False}

        def __post_init__(self, *args, **kwargs):
            asked = {"class": type(self).__name__}
            for name in ("fp16", "bf16", "tf32", "use_cpu", "max_steps", "save_strategy",
                         "eval_strategy", "report_to", "gradient_accumulation_steps"):
                if hasattr(self, name):
                    value = getattr(self, name)
                    asked[name] = value if isinstance(value, (bool, int, float, type(None))) else str(value)
            probe.training_args.append(asked)
            for name, value in caps.items():
                if hasattr(self, name):
                    setattr(self, name, value)
            if probe.fp32:
                self.fp16 = self.bf16 = False
            result = original(self, *args, **kwargs)
            asked["in_force"] = {name: getattr(self, name) for name in ("fp16", "bf16", "max_steps")
                                 if isinstance(getattr(self, name, None), (bool, int))}
            return result

        TrainingArguments.__post_init__ = __post_init__

    def patch_trainer(self, module):
        Trainer = getattr(module, "Trainer", None)
        if Trainer is None or self.emulate_trainer is None:
            return
        probe = self

        class Record(dict):
            def __setitem__(self, key, value):
                super().__setitem__(key, value)
                if key == "emulation_installed" and value:
                    probe.emulation_installed = True

        self.emulate_trainer(Trainer, Record())

    def tiny_model(self, build, config, name, kwargs):
        """``--tiny``: a 2-layer, narrow model of ``config``'s class, random weights, built in
        code, in the dtype the script asked ``from_pretrained`` for."""
        import torch

        small = shrink_config(config)
        dtype = kwargs.get("dtype", kwargs.get("torch_dtype"))
        if isinstance(dtype, str) and dtype != "auto":
            dtype = getattr(torch, dtype, None)
        if dtype == "auto" or dtype is None:
            dtype = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
            dtype = getattr(torch, dtype, None) if isinstance(dtype, str) else dtype
        if self.fp32 or not isinstance(dtype, torch.dtype):
            dtype = torch.float32
        model = build(small).to(dtype)
        self.tiny_models.append({"name": str(name), "class": type(model).__name__,
                                 "config": type(config).__name__, "dtype": _dtype_name(dtype),
                                 "parameters": sum(p.numel() for p in model.parameters())})
        return model

    def patch_tiny_auto(self, module):
        Base = getattr(module, "_BaseAutoModelClass", None)
        if Base is None:
            return
        probe = self

        def from_pretrained(cls, pretrained_model_name_or_path, *model_args, **kwargs):
            from transformers import AutoConfig

            config = kwargs.get("config")
            if config is None or isinstance(config, (str, os.PathLike)):
                config = AutoConfig.from_pretrained(
                    config or pretrained_model_name_or_path,
                    trust_remote_code=kwargs.get("trust_remote_code", False))
            return probe.tiny_model(lambda c: cls.from_config(c), config, pretrained_model_name_or_path, kwargs)

        Base.from_pretrained = classmethod(from_pretrained)

    def patch_from_pretrained(self, module):
        """The fp32 reference: every ``from_pretrained`` loads float32 weights; ``--tiny``:
        builds the 2-layer model instead."""
        PreTrainedModel = getattr(module, "PreTrainedModel", None)
        if PreTrainedModel is None:
            return
        import torch

        original = PreTrainedModel.__dict__["from_pretrained"].__func__
        probe = self

        def from_pretrained(cls, *args, **kwargs):
            if probe.tiny:
                name = args[0] if args else kwargs.get("pretrained_model_name_or_path")
                config = kwargs.get("config")
                if config is None or isinstance(config, (str, os.PathLike)):
                    config = cls.config_class.from_pretrained(config or name)
                return probe.tiny_model(lambda c: cls(c), config, name, kwargs)
            kwargs.pop("torch_dtype", None)
            kwargs["dtype"] = torch.float32
            return original(cls, *args, **kwargs)

        PreTrainedModel.from_pretrained = classmethod(from_pretrained)

    def install_transformers(self):
        hooks = {"transformers.training_args": self.patch_training_args,
                 "transformers.trainer": self.patch_trainer}
        if self.fp32 or self.tiny:
            hooks["transformers.modeling_utils"] = self.patch_from_pretrained
        if self.tiny:
            hooks["transformers.models.auto.auto_factory"] = self.patch_tiny_auto
        already = {name: hook for name, hook in hooks.items() if name in sys.modules}
        for name, hook in already.items():
            hook(sys.modules[name])
        pending = {name: hook for name, hook in hooks.items() if name not in already}
        if pending:
            sys.meta_path.insert(0, _AfterImport(pending))


_LAYERS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers", "decoder_layers", "encoder_layers")
_WIDTH = (("hidden_size", 64), ("n_embd", 64), ("d_model", 64), ("dim", 64),
          ("intermediate_size", 128), ("n_inner", 128), ("ffn_dim", 128), ("hidden_dim", 128),
          ("num_attention_heads", 4), ("n_head", 4), ("encoder_attention_heads", 4),
          ("decoder_attention_heads", 4), ("head_dim", 16))


def shrink_config(config):
    """A copy of ``config`` with 2 layers and, where the names are the usual ones, a width of
    64 (4 heads of 16); the vocabulary is kept so the script's token ids still fit."""
    import copy

    small = copy.deepcopy(config)
    for name in _LAYERS:
        if isinstance(getattr(small, name, None), int):
            setattr(small, name, min(getattr(small, name), 2))
    for name, value in _WIDTH:
        if isinstance(getattr(small, name, None), int):
            setattr(small, name, min(getattr(small, name), value))
    kv = getattr(small, "num_key_value_heads", None)
    if isinstance(kv, int):
        heads = getattr(small, "num_attention_heads", 4)
        small.num_key_value_heads = kv if kv <= heads and heads % kv == 0 else heads
    if isinstance(getattr(small, "layer_types", None), list):
        small.layer_types = small.layer_types[:2]
    return small


def seed_everything(seed=0):
    """The same seeds in every run, so that runs of one script are comparable (a script that
    seeds itself keeps its own seeds: its calls come later)."""
    import random

    random.seed(seed)
    try:
        import numpy
        numpy.random.seed(seed)
    except ImportError:
        pass
    import torch

    torch.manual_seed(seed)


def install(steps, state_path, emulate_trainer=None, root=None, fp32=False, tiny=False):
    """Install the probe in this interpreter; returns it (``StopRun`` is ``probe.StopRun``)."""
    probe = Probe(steps, state_path, emulate_trainer, root, fp32, tiny)
    try:
        probe.install_torch()
        seed_everything()
    except ImportError:
        probe.notes.append("torch is not importable: optimizer steps cannot be counted")
    probe.install_transformers()
    probe.write()
    return probe


def failure_context(exc, root):
    """Where the script failed (its last frame under ``root``) and which model it was loading.

    Read from the traceback: the deepest frame in a file under ``root`` (the script's own
    code), and, for a failure inside ``from_pretrained``, the name or path it was given.
    """
    where, loading = None, None
    tb = exc.__traceback__
    root = os.path.abspath(root) + os.sep
    while tb is not None:
        frame = tb.tb_frame
        filename = os.path.abspath(frame.f_code.co_filename)
        if filename.startswith(root):
            where = {"file": filename[len(root):], "line": tb.tb_lineno}
        if frame.f_code.co_name == "from_pretrained" and loading is None:
            for name in ("pretrained_model_name_or_path", "model_id", "repo_id"):
                value = frame.f_locals.get(name)
                if isinstance(value, (str, os.PathLike)):
                    loading = str(value)
                    break
        tb = tb.tb_next
    return where, loading
