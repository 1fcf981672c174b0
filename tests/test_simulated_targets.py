"""Proof by simulated targets: every fixed module runs a valid precision plan on every GPU.

Each script below is fixed with every rule (``--fix``, MP101 included), then executed —
the original and the fixed text — on four simulated machines: CPU only, a T4
(sm75), an A100 (sm80) with the flash-attn package and an A100 without it (Colab's,
where transformers raises ``ImportError: FlashAttention2 has been toggled on ...``). The capability queries are patched
(``torch.cuda.is_available``, ``get_device_capability``, ``get_device_properties``,
``is_bf16_supported`` — the latter answering for native bf16, as torch did before it
counted emulation) and the Hugging Face entry points are replaced by recorders, so no
model is loaded: what is read back is the plan the script asks for — weights dtype,
``fp16``/``bf16`` flags (TRL's bf16 default applied), attention implementation,
autocast dtype, 4-bit compute dtype, Accelerate's mixed precision.

A plan is valid when it never puts fp16 weights under fp16 loss scaling, never asks
for bf16 or FlashAttention-2 below sm80, never asks for fp16 mixed precision without
CUDA (nor bf16 ``TrainingArguments`` on a CPU), and the fixed plan on sm80 is the
original plan: the fix changes nothing where the original worked.
"""
import contextlib
import sys
import types
from unittest import mock

import pytest

from conftest import config, dedent, fix, lint

torch = pytest.importorskip("torch")

MACHINES = {"cpu": None, "sm75": (7, 5), "sm80": (8, 0), "sm80-no-flash-attn": (8, 0)}
FLASH_ATTN_INSTALLED = {"sm80"}
TRL_CONFIGS = ("SFTConfig", "DPOConfig", "GRPOConfig")


class Plan:
    """What a script asked for, read from the recorders."""

    def __init__(self):
        self.weights = []  # dtypes models were loaded/cast to
        self.train_flags = []  # (fp16, bf16) of TrainingArguments / TRL configs
        self.attention = []
        self.autocast = []
        self.bnb = []
        self.accelerate = []
        self.trained = False

    def summary(self):
        return (
            tuple(map(str, self.weights)),
            tuple(self.train_flags),
            tuple(self.attention),
            tuple(map(str, self.autocast)),
            tuple(map(str, self.bnb)),
            tuple(self.accelerate),
        )


class FakeModel:
    def __init__(self, plan):
        self._plan = plan

    def to(self, *args, **kwargs):
        dtype = kwargs.get("dtype") or next((a for a in args if isinstance(a, torch.dtype)), None)
        if dtype is not None:
            self._plan.weights.append(dtype)
        return self

    def bfloat16(self):
        self._plan.weights.append(torch.bfloat16)
        return self

    def half(self):
        self._plan.weights.append(torch.float16)
        return self

    def parameters(self):
        return iter([torch.nn.Parameter(torch.zeros(1))])

    def __call__(self, *args, **kwargs):
        return None

    def __getattr__(self, name):
        return lambda *a, **k: None


def _fake_modules(plan, flash_attn=True):
    def loader(*args, **kwargs):
        dtype = kwargs.get("torch_dtype", kwargs.get("dtype"))
        if isinstance(dtype, str):
            dtype = getattr(torch, dtype) if dtype != "auto" else "auto"
        plan.weights.append(dtype if dtype is not None else torch.float32)
        if kwargs.get("attn_implementation") is not None:
            plan.attention.append(kwargs["attn_implementation"])
        if kwargs.get("use_flash_attention_2"):
            plan.attention.append("flash_attention_2")
        return FakeModel(plan)

    class AutoModel:
        from_pretrained = staticmethod(loader)
        from_config = staticmethod(loader)

    def training_args(name):
        def make(*args, **kwargs):
            fp16, bf16 = bool(kwargs.get("fp16")), kwargs.get("bf16")
            if bf16 is None:
                bf16 = name in TRL_CONFIGS and not fp16  # TRL >= 0.19
            plan.train_flags.append((fp16, bool(bf16)))
            return types.SimpleNamespace(**kwargs)

        return make

    def trainer(*args, **kwargs):
        plan.trained = True
        return FakeModel(plan)

    def bnb_config(**kwargs):
        plan.bnb.append(kwargs.get("bnb_4bit_compute_dtype"))
        return types.SimpleNamespace(**kwargs)

    def accelerator(**kwargs):
        plan.accelerate.append(kwargs.get("mixed_precision", "no"))
        return FakeModel(plan)

    transformers = types.ModuleType("transformers")
    for name in ("AutoModel", "AutoModelForCausalLM", "AutoModelForSeq2SeqLM"):
        setattr(transformers, name, AutoModel)
    transformers.AutoTokenizer = AutoModel
    transformers.TrainingArguments = training_args("TrainingArguments")
    transformers.Trainer = trainer
    transformers.BitsAndBytesConfig = bnb_config
    trl = types.ModuleType("trl")
    for name in TRL_CONFIGS:
        setattr(trl, name, training_args(name))
    trl.SFTTrainer = trainer
    accelerate = types.ModuleType("accelerate")
    accelerate.Accelerator = accelerator
    utils = types.ModuleType("transformers.utils")
    utils.is_flash_attn_2_available = lambda: flash_attn
    transformers.utils = utils
    return {"transformers": transformers, "transformers.utils": utils, "trl": trl, "accelerate": accelerate}


@contextlib.contextmanager
def simulated(machine, plan):
    cap = MACHINES[machine]

    def capability(*args, **kwargs):
        if cap is None:
            raise RuntimeError("Found no NVIDIA driver on your system.")
        return cap

    @contextlib.contextmanager
    def autocast(device_type=None, dtype=None, enabled=True, **kwargs):
        if enabled and (device_type != "cuda" or cap is not None):
            plan.autocast.append(dtype)
        yield

    with contextlib.ExitStack() as stack:
        stack.enter_context(_swapped_modules(_fake_modules(plan, machine in FLASH_ATTN_INSTALLED)))
        stack.enter_context(mock.patch.object(torch.cuda, "is_available", lambda: cap is not None))
        stack.enter_context(mock.patch.object(torch.cuda, "get_device_capability", capability))
        stack.enter_context(
            mock.patch.object(
                torch.cuda, "get_device_properties", lambda *a: types.SimpleNamespace(major=capability()[0], minor=capability()[1])
            )
        )
        stack.enter_context(
            mock.patch.object(torch.cuda, "is_bf16_supported", lambda *a, **k: cap is not None and cap >= (8, 0))
        )
        stack.enter_context(mock.patch.object(torch, "autocast", autocast))
        stack.enter_context(mock.patch.object(sys, "argv", ["train.py"]))
        yield


@contextlib.contextmanager
def _swapped_modules(fakes):
    """Put fake modules in sys.modules and restore exactly those names afterwards.

    ``mock.patch.dict(sys.modules, ...)`` restores the whole dict, which also drops torch
    submodules first imported meanwhile; importing those again later fails
    ("Only a single TORCH_LIBRARY can be used to register the namespace ...").
    """
    missing = object()
    saved = {name: sys.modules.get(name, missing) for name in fakes}
    sys.modules.update(fakes)
    try:
        yield
    finally:
        for name, previous in saved.items():
            if previous is missing:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous


def run_plan(source: str, machine: str) -> Plan:
    plan = Plan()
    with simulated(machine, plan):
        exec(compile(source, "train.py", "exec"), {"__name__": "__main__"})
    return plan


def problems(plan: Plan, machine: str):
    cap = MACHINES[machine]
    found = []
    for fp16, bf16 in plan.train_flags:
        if fp16 and bf16:
            found.append("fp16 and bf16 both on")
        if cap is None and (fp16 or bf16):
            found.append("mixed precision flags on a CPU machine")
        if cap is not None and cap < (8, 0) and bf16:
            found.append("bf16=True below sm80")
        if fp16 and torch.float16 in plan.weights and plan.trained:
            found.append("fp16 weights under fp16 loss scaling")
    below = cap is not None and cap < (8, 0)
    if below and torch.bfloat16 in plan.weights:
        found.append("bf16 weights below sm80")
    if (cap is None or below) and "flash_attention_2" in plan.attention:
        found.append("FlashAttention-2 without an Ampere GPU")
    elif machine not in FLASH_ATTN_INSTALLED and "flash_attention_2" in plan.attention:
        found.append("FlashAttention-2 without the flash-attn package")
    if below and torch.bfloat16 in plan.autocast:
        found.append("bf16 autocast below sm80")
    if below and torch.bfloat16 in plan.bnb:
        found.append("bf16 4-bit compute below sm80")
    if below and "bf16" in plan.accelerate:
        found.append("Accelerate bf16 below sm80")
    if cap is None and "fp16" in plan.accelerate:
        found.append("Accelerate fp16 without CUDA")
    return found


SCRIPTS = [
    pytest.param(  # seed 001, as it was on the A100: bf16 weights + FlashAttention-2, detection for the flags
        """
        import argparse
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        parser = argparse.ArgumentParser()
        parser.add_argument("--fp16", action="store_true")
        args = parser.parse_args()
        model = AutoModelForCausalLM.from_pretrained(
            "Qwen/Qwen2-Audio-7B",
            torch_dtype=torch.bfloat16,
            attn_implementation="flash_attention_2",
        )
        use_bf16 = not args.fp16
        use_fp16 = args.fp16
        major = torch.cuda.get_device_capability()[0] if torch.cuda.is_available() else 0
        if use_bf16 and major < 8:
            use_bf16 = False
            use_fp16 = torch.cuda.is_available()
        training_args = TrainingArguments(output_dir="out", bf16=use_bf16, fp16=use_fp16)
        Trainer(model=model, args=training_args).train()
        """,
        id="seed001_a100_script",
    ),
    pytest.param(  # seed 001 after its manual bf16 -> fp16 edit: MP101's case
        """
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)
        training_args = TrainingArguments(output_dir="out", fp16=torch.cuda.is_available())
        Trainer(model=model, args=training_args).train()
        """,
        id="seed001_fp16_edit",
    ),
    pytest.param(  # seed 004, the A100 version
        """
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.bfloat16, device_map="auto")
        training_args = TrainingArguments(
            output_dir="out",
            bf16=True,
        )
        Trainer(model=model, args=training_args).train()
        """,
        id="seed004_bf16",
    ),
    pytest.param(  # TRL with its bf16 default, and a QLoRA config
        """
        import torch
        from transformers import AutoModelForCausalLM, BitsAndBytesConfig
        from trl import SFTConfig, SFTTrainer

        bnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)
        model = AutoModelForCausalLM.from_pretrained("m", quantization_config=bnb, use_flash_attention_2=True)
        config = SFTConfig(output_dir="out", learning_rate=2e-4)
        SFTTrainer(model=model, args=config).train()
        """,
        id="trl_qlora",
    ),
    pytest.param(  # an Accelerate loop
        """
        import torch
        from accelerate import Accelerator
        from transformers import AutoModel

        accelerator = Accelerator(mixed_precision="bf16")
        model = AutoModel.from_pretrained("m")
        optimizer = torch.optim.AdamW(model.parameters())
        """,
        id="accelerate",
    ),
    pytest.param(  # inference: bf16 weights and bf16 autocast
        """
        import torch
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained("m").bfloat16()
        model.eval()
        with torch.no_grad():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                model.generate(None)
        """,
        id="inference",
    ),
]


@pytest.mark.parametrize("script", SCRIPTS)
def test_fixed_plan_is_valid_on_every_machine(script):
    original = dedent(script)
    # with the unsafe fixes: the float16 fallback of inference-only weights is one (MP201)
    fixed = fix(script, cfg=config(transformers_version="5.23"), unsafe=True)
    assert fixed != original
    # the original was broken somewhere below Ampere (or on CPU): that is why it is here
    assert any(problems(run_plan(original, m), m) for m in ("cpu", "sm75"))
    for machine in MACHINES:
        assert problems(run_plan(fixed, machine), machine) == [], (machine, fixed)
    # where the original worked, the fix changes nothing
    if not problems(run_plan(original, "sm80"), "sm80"):
        assert run_plan(fixed, "sm80").summary() == run_plan(original, "sm80").summary()
    # and a second run finds nothing, from any rule
    assert lint(fixed) == []
    assert fix(fixed, unsafe=True) == fixed


def test_simulation_catches_an_unguarded_plan():
    """The checker itself can fail: bf16 hard-coded is invalid on a T4, fine on an A100."""
    src = dedent(
        """
        import torch
        from transformers import AutoModelForCausalLM, TrainingArguments
        AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16, attn_implementation="flash_attention_2")
        TrainingArguments(output_dir="out", bf16=True)
        """
    )
    assert problems(run_plan(src, "sm80"), "sm80") == []
    t4 = problems(run_plan(src, "sm75"), "sm75")
    assert "bf16=True below sm80" in t4 and "bf16 weights below sm80" in t4
    assert "FlashAttention-2 without an Ampere GPU" in t4
    assert "mixed precision flags on a CPU machine" in problems(run_plan(src, "cpu"), "cpu")
    assert problems(run_plan(src, "sm80-no-flash-attn"), "sm80-no-flash-attn") == [
        "FlashAttention-2 without the flash-attn package"
    ]
