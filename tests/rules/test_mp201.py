"""MP201 bf16-without-capability-guard: before/after for every site, the guards, the negatives."""
import pytest

from conftest import config, dedent, fix, lint

CODE = "MP201"


FIXES = [
    pytest.param(  # seed 004: bf16 weights trained by a Trainer fall back to fp32 master weights
        """
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.bfloat16)
        trainer = Trainer(model=model, args=TrainingArguments(output_dir="out"))
        trainer.train()
        """,
        """
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.bfloat16 if BF16_OK else torch.float32)
        trainer = Trainer(model=model, args=TrainingArguments(output_dir="out"))
        trainer.train()
        """,
        id="weights_trained",
    ),
    pytest.param(  # inference-only weights fall back to float16 (fast, no scaler needed)
        """
        import torch
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained("gpt2", dtype=torch.bfloat16, device_map="auto")
        model.eval()
        with torch.no_grad():
            out = model.generate(ids)
        """,
        """
        import torch
        from transformers import AutoModelForCausalLM

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        model = AutoModelForCausalLM.from_pretrained("gpt2", dtype=torch.bfloat16 if BF16_OK else torch.float16, device_map="auto")
        model.eval()
        with torch.no_grad():
            out = model.generate(ids)
        """,
        id="weights_inference",
    ),
    pytest.param(  # `.bfloat16()` on a model that an optimizer trains
        """
        import torch
        from transformers import AutoModel

        model = AutoModel.from_pretrained("bert-base-uncased").bfloat16()
        optimizer = torch.optim.AdamW(model.parameters())
        """,
        """
        import torch
        from transformers import AutoModel

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        model = AutoModel.from_pretrained("bert-base-uncased").to(torch.bfloat16 if BF16_OK else torch.float32)
        optimizer = torch.optim.AdamW(model.parameters())
        """,
        id="bfloat16_method",
    ),
    pytest.param(  # a dtype string, and no `import torch` yet: the fix adds it
        """
        from transformers import AutoModel, Trainer

        model = AutoModel.from_pretrained("bert-base-uncased", torch_dtype="bfloat16")
        Trainer(model=model).train()
        """,
        """
        import torch
        from transformers import AutoModel, Trainer

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        model = AutoModel.from_pretrained("bert-base-uncased", torch_dtype="bfloat16" if BF16_OK else "float32")
        Trainer(model=model).train()
        """,
        id="to_dtype_string_no_torch",
    ),
    pytest.param(  # bf16=True: bf16 where native, fp16 mixed precision on other GPUs, fp32 on CPU
        """
        from transformers import TrainingArguments

        args = TrainingArguments(output_dir="out", bf16=True, per_device_train_batch_size=8)
        """,
        """
        import torch
        from transformers import TrainingArguments

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        args = TrainingArguments(output_dir="out", bf16=BF16_OK, per_device_train_batch_size=8, fp16=torch.cuda.is_available() and not BF16_OK)
        """,
        id="training_args_true",
    ),
    pytest.param(  # fp16 already set: only bf16 is guarded (trailing-comma layout kept)
        """
        from transformers import TrainingArguments

        args = TrainingArguments(
            output_dir="out",
            bf16=True,
            fp16=False,
        )
        """,
        """
        import torch
        from transformers import TrainingArguments

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        args = TrainingArguments(
            output_dir="out",
            bf16=BF16_OK,
            fp16=False,
        )
        """,
        id="training_args_with_fp16",
    ),
    pytest.param(  # `bf16=torch.cuda.is_available()` still picks bf16 on a T4
        """
        import torch
        from transformers import TrainingArguments

        args = TrainingArguments(output_dir="out", bf16=torch.cuda.is_available())
        """,
        """
        import torch
        from transformers import TrainingArguments

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        args = TrainingArguments(output_dir="out", bf16=BF16_OK, fp16=torch.cuda.is_available() and not BF16_OK)
        """,
        id="training_args_cuda",
    ),
    pytest.param(  # a **kwargs dict feeding TrainingArguments
        """
        from transformers import TrainingArguments

        kwargs = dict(output_dir="out", bf16=True)
        args = TrainingArguments(**kwargs)
        """,
        """
        import torch
        from transformers import TrainingArguments

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        kwargs = dict(output_dir="out", bf16=BF16_OK)
        args = TrainingArguments(**kwargs, fp16=torch.cuda.is_available() and not BF16_OK)
        """,
        id="dict_splat",
    ),
    pytest.param(  # an argparse default that turns bf16 on
        """
        import argparse
        from transformers import TrainingArguments

        parser = argparse.ArgumentParser()
        parser.add_argument("--bf16", action="store_true", default=True)
        args = parser.parse_args()
        training_args = TrainingArguments(output_dir="out", bf16=args.bf16)
        """,
        """
        import argparse
        import torch
        from transformers import TrainingArguments

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        parser = argparse.ArgumentParser()
        parser.add_argument("--bf16", action="store_true", default=True)
        args = parser.parse_args()
        training_args = TrainingArguments(output_dir="out", bf16=args.bf16 and BF16_OK, fp16=args.bf16 and torch.cuda.is_available() and not BF16_OK)
        """,
        id="argparse_default",
    ),
    pytest.param(  # an argparse default dtype read with getattr(torch, ...)
        """
        import argparse
        import torch
        from transformers import AutoModelForCausalLM

        parser = argparse.ArgumentParser()
        parser.add_argument("--dtype", default="bfloat16")
        args = parser.parse_args()
        model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=getattr(torch, args.dtype))
        """,
        """
        import argparse
        import torch
        from transformers import AutoModelForCausalLM

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        parser = argparse.ArgumentParser()
        parser.add_argument("--dtype", default=("bfloat16" if BF16_OK else "float16"))
        args = parser.parse_args()
        model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=getattr(torch, args.dtype))
        """,
        id="argparse_dtype_default",
    ),
    pytest.param(  # a TRL config with neither flag turns bf16 on by itself (TRL >= 0.19)
        """
        from trl import SFTConfig, SFTTrainer

        config = SFTConfig(
            output_dir="out",
            learning_rate=2e-5,
        )
        SFTTrainer(model="Qwen/Qwen2.5-0.5B", args=config).train()
        """,
        """
        import torch
        from trl import SFTConfig, SFTTrainer

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        config = SFTConfig(
            output_dir="out",
            learning_rate=2e-5,
            bf16=BF16_OK,
            fp16=torch.cuda.is_available() and not BF16_OK,
        )
        SFTTrainer(model="Qwen/Qwen2.5-0.5B", args=config).train()
        """,
        id="sft_no_flags",
    ),
    pytest.param(  # TRL: fp16=False means bf16=True
        """
        from trl import DPOConfig

        config = DPOConfig(output_dir="out", fp16=False)
        """,
        """
        import torch
        from trl import DPOConfig

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        config = DPOConfig(output_dir="out", fp16=False, bf16=BF16_OK)
        """,
        id="sft_fp16_false",
    ),
    pytest.param(  # a TrainingArguments subclass (HfArgumentParser) defaulting bf16 to True
        """
        from dataclasses import dataclass
        from transformers import TrainingArguments

        @dataclass
        class MyArguments(TrainingArguments):
            bf16: bool = True
        """,
        """
        from dataclasses import dataclass
        import torch
        from transformers import TrainingArguments

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        @dataclass
        class MyArguments(TrainingArguments):
            bf16: bool = BF16_OK
        """,
        id="args_class",
    ),
    pytest.param(  # the same default written as a dataclass field (review 22d's miss)
        """
        from dataclasses import dataclass, field
        from transformers import TrainingArguments

        @dataclass
        class MyArguments(TrainingArguments):
            bf16: bool = field(default=True, metadata={"help": "train in bf16"})
        """,
        """
        from dataclasses import dataclass, field
        import torch
        from transformers import TrainingArguments

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        @dataclass
        class MyArguments(TrainingArguments):
            bf16: bool = field(default=BF16_OK, metadata={"help": "train in bf16"})
        """,
        id="args_class_field",
    ),
    pytest.param(  # bf16 autocast in a loop with a GradScaler: fp16 autocast on other GPUs
        """
        import torch

        scaler = torch.amp.GradScaler("cuda")
        for batch in loader:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(batch)
            scaler.scale(loss).backward()
        """,
        """
        import torch

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        scaler = torch.amp.GradScaler("cuda")
        for batch in loader:
            with torch.autocast("cuda", dtype=torch.bfloat16 if BF16_OK else torch.float16):
                loss = model(batch)
            scaler.scale(loss).backward()
        """,
        id="autocast_scaler",
    ),
    pytest.param(  # device not known statically: CPU keeps bf16 autocast
        """
        import torch

        def evaluate(model, batch, device):
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
                return model(batch)
        """,
        """
        import torch

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        def evaluate(model, batch, device):
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16 if BF16_OK or not torch.cuda.is_available() else torch.float16):
                return model(batch)
        """,
        id="autocast_device_var",
    ),
    pytest.param(  # Accelerate: fp16 on pre-Ampere GPUs, bf16 kept on CPU
        """
        from accelerate import Accelerator

        accelerator = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=4)
        """,
        """
        import torch
        from accelerate import Accelerator

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        accelerator = Accelerator(mixed_precision="bf16" if BF16_OK or not torch.cuda.is_available() else "fp16", gradient_accumulation_steps=4)
        """,
        id="accelerator",
    ),
    pytest.param(  # Lightning precision string
        """
        import lightning as L

        trainer = L.Trainer(max_epochs=3, precision="bf16-mixed")
        """,
        """
        import lightning as L
        import torch

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        trainer = L.Trainer(max_epochs=3, precision="bf16-mixed" if BF16_OK or not torch.cuda.is_available() else "16-mixed")
        """,
        id="lightning",
    ),
    pytest.param(  # QLoRA compute dtype: float16 on GPUs without bf16
        """
        import torch
        from transformers import AutoModelForCausalLM, BitsAndBytesConfig

        bnb_config = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_compute_dtype=torch.bfloat16,
        )
        model = AutoModelForCausalLM.from_pretrained("m", quantization_config=bnb_config)
        """,
        """
        import torch
        from transformers import AutoModelForCausalLM, BitsAndBytesConfig

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        bnb_config = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_compute_dtype=torch.bfloat16 if BF16_OK else torch.float16,
        )
        model = AutoModelForCausalLM.from_pretrained("m", quantization_config=bnb_config)
        """,
        id="bnb",
    ),
    pytest.param(  # an existing module-level probe is reused; it then picks bf16, so the plan
        # also makes it strict (MP203's fix of the finding the reuse creates, whatever is selected)
        """
        '''Fine-tune.'''
        import torch
        from transformers import TrainingArguments

        HAS_BF16 = torch.cuda.is_bf16_supported()
        args = TrainingArguments(output_dir="out", bf16=True)
        """,
        """
        '''Fine-tune.'''
        import torch
        from transformers import TrainingArguments

        HAS_BF16 = torch.cuda.is_bf16_supported(including_emulation=False)
        args = TrainingArguments(output_dir="out", bf16=HAS_BF16, fp16=torch.cuda.is_available() and not HAS_BF16)
        """,
        id="user_probe",
    ),
    pytest.param(  # `.to(device, dtype=torch.bfloat16)` on a model trained by hand
        """
        import torch
        from transformers import AutoModelForSeq2SeqLM

        model = AutoModelForSeq2SeqLM.from_pretrained("t5-small")
        model.to("cuda", dtype=torch.bfloat16)
        model.train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        """,
        """
        import torch
        from transformers import AutoModelForSeq2SeqLM

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        model = AutoModelForSeq2SeqLM.from_pretrained("t5-small")
        model.to("cuda", dtype=torch.bfloat16 if BF16_OK else torch.float32)
        model.train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        """,
        id="to_device_dtype",
    ),
    pytest.param(  # the legacy CUDA autocast, inference: fp16 autocast is safe
        """
        import torch

        with torch.cuda.amp.autocast(dtype=torch.bfloat16):
            logits = model(inputs)
        """,
        """
        import torch

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        with torch.cuda.amp.autocast(dtype=torch.bfloat16 if BF16_OK else torch.float16):
            logits = model(inputs)
        """,
        id="cuda_amp_autocast",
    ),
    pytest.param(  # Lightning true-bf16 weights: fp16 mixed precision (fp32 weights) below sm80
        """
        from pytorch_lightning import Trainer

        trainer = Trainer(accelerator="gpu", precision="bf16-true")
        """,
        """
        import torch
        from pytorch_lightning import Trainer

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        trainer = Trainer(accelerator="gpu", precision="bf16-true" if BF16_OK or not torch.cuda.is_available() else "16-mixed")
        """,
        id="lightning_bf16_true",
    ),
]


@pytest.mark.parametrize("before, after", FIXES)
def test_fix(before, after):
    assert len(lint(before, CODE)) == 1
    # with the unsafe fixes: the float16 fallback of inference-only weights is one
    fixed = fix(before, CODE, unsafe=True)
    assert fixed == dedent(after)
    # the guarded form is not reported again, and a second --fix changes nothing
    assert lint(fixed, CODE) == []
    assert fix(fixed, CODE, unsafe=True) == fixed


def test_the_float16_fallback_of_inference_weights_is_offered_not_applied():
    """Below sm80 the bf16 original runs, emulated; float16 there may overflow for a checkpoint
    trained in bf16 (inf, then NaN logits): the fix changes results where the original was only
    slow, so it is unsafe. Trained weights fall back to float32, which holds every bf16 value."""
    src = "import torch\nfrom transformers import AutoModel\nm = AutoModel.from_pretrained('m', torch_dtype=torch.bfloat16).cuda().eval()\n"
    (d,) = lint(src, CODE)
    assert d.fix.applicability == "unsafe" and "may overflow float16's range" in d.message
    assert fix(src, CODE) == dedent(src)


def test_message_names_the_failure_and_targets():
    # transformers 5.23 with torch 2.13 (this repository's pin): torch counts emulation, so
    # TrainingArguments does not raise and bf16 runs emulated (tests/rules/test_mp20x_claims.py
    # has the versions that raise)
    (d,) = lint(
        """
        from transformers import TrainingArguments
        args = TrainingArguments(output_dir="out", bf16=True)
        """,
        CODE,
    )
    assert "runs bf16 emulated (several times slower" in d.message
    assert "Your setup doesn't support bf16/gpu" not in d.message
    assert "sm60" in d.message
    assert (d.span.line, d.span.col) == (2, 43)  # the `bf16` keyword


GUARDED = [
    pytest.param(  # seed 001: the user's own detection switches bf16 off below sm80
        """
        import argparse
        import torch
        from transformers import TrainingArguments

        parser = argparse.ArgumentParser()
        parser.add_argument("--fp16", action="store_true")
        args = parser.parse_args()
        use_bf16 = not args.fp16
        use_fp16 = args.fp16
        major, _ = torch.cuda.get_device_capability()
        if use_bf16 and major < 8:
            use_bf16 = False
            use_fp16 = True
        training_args = TrainingArguments(output_dir="out", bf16=use_bf16, fp16=use_fp16)
        """,
        id="seed001_detection",
    ),
    pytest.param(
        """
        import torch
        from transformers import TrainingArguments
        if torch.cuda.is_bf16_supported():
            args = TrainingArguments(output_dir="out", bf16=True)
        else:
            args = TrainingArguments(output_dir="out", fp16=True)
        """,
        id="if_block_around_the_call",
    ),
    pytest.param(
        """
        import torch
        from transformers import AutoModelForCausalLM
        dtype = torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=dtype)
        """,
        id="get_device_capability_ternary",
    ),
    pytest.param(
        """
        import torch
        from transformers import TrainingArguments
        props = torch.cuda.get_device_properties(0)
        args = TrainingArguments(output_dir="out", bf16=props.major >= 8)
        """,
        id="get_device_properties_major",
    ),
    pytest.param(
        """
        from transformers import TrainingArguments
        from transformers.utils import is_torch_bf16_gpu_available
        args = TrainingArguments(output_dir="out", bf16=is_torch_bf16_gpu_available())
        """,
        id="is_torch_bf16_gpu_available",
    ),
    pytest.param(
        """
        from unsloth import is_bfloat16_supported
        from trl import SFTConfig
        cfg = SFTConfig(output_dir="out", fp16=not is_bfloat16_supported(), bf16=is_bfloat16_supported())
        """,
        id="unsloth_is_bfloat16_supported",
    ),
    pytest.param(  # a ComfyUI node: the host's capability check picks bf16 (recall 27c)
        """
        import torch
        import comfy.model_management as mm
        dtype = torch.bfloat16 if mm.should_use_bf16() else torch.float16
        with torch.autocast("cuda", dtype=dtype):
            y = model(x)
        """,
        id="comfyui_should_use_bf16",
    ),
    pytest.param(
        """
        import torch
        from transformers import TrainingArguments
        native = torch.cuda.is_bf16_supported()
        use_bf16 = native and not debug
        args = TrainingArguments(output_dir="out", bf16=use_bf16, fp16=not use_bf16)
        """,
        id="derived_variable",
    ),
    pytest.param(  # seed 004's own fix
        """
        import torch
        from transformers import AutoModelForCausalLM, TrainingArguments
        model = AutoModelForCausalLM.from_pretrained(
            "m",
            torch_dtype=torch.bfloat16 if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else torch.float16,
        )
        args = TrainingArguments(output_dir="out", bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(), fp16=False)
        """,
        id="seed004_fixed",
    ),
    pytest.param(  # bf16 only when the user asks for it on the command line
        """
        import argparse
        import torch
        from transformers import AutoModelForCausalLM, TrainingArguments
        parser = argparse.ArgumentParser()
        parser.add_argument("--bf16", action="store_true")
        parser.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
        args = parser.parse_args()
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=getattr(torch, args.dtype))
        training_args = TrainingArguments(output_dir="out", bf16=args.bf16)
        """,
        id="command_line_opt_in",
    ),
    pytest.param(  # CPU autocast runs bf16 on every CPU
        """
        import torch
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = model(x)
        """,
        id="cpu_autocast",
    ),
    pytest.param(  # the device the autocast names is made for Apple's GPU: a CUDA scaler beside it is off there
        """
        import torch
        DEVICE = torch.device("mps")
        scaler = torch.amp.GradScaler("cuda", enabled=DEVICE.type == "cuda")
        with torch.autocast(device_type=DEVICE.type, dtype=torch.bfloat16):
            loss = model(x).mean()
        scaler.scale(loss).backward()
        """,
        id="mps_device_type",
    ),
    pytest.param(  # a tensor, not a model
        """
        import torch
        x = torch.randn(4, 4)
        y = x.bfloat16()
        """,
        id="tensor_cast",
    ),
    pytest.param(
        """
        from trl import SFTConfig
        cfg = SFTConfig(output_dir="out", fp16=True)
        """,
        id="trl_fp16_true",
    ),
    pytest.param(  # an unknown **kwargs may carry the flags
        """
        from trl import SFTConfig
        def make(**overrides):
            return SFTConfig(output_dir="out", **overrides)
        """,
        id="trl_opaque_kwargs",
    ),
    pytest.param(
        """
        from transformers import TrainingArguments
        args = TrainingArguments(output_dir="out", bf16=False, fp16=True)
        """,
        id="bf16_false",
    ),
    pytest.param(
        """
        from transformers import TrainingArguments
        args = TrainingArguments(output_dir="out", bf16=True)  # noqa: MP201
        """,
        id="noqa",
    ),
]


@pytest.mark.parametrize("src", GUARDED)
def test_not_reported(src):
    assert lint(src, CODE) == []


def test_ampere_only_targets_get_nothing():
    src = """
    import torch
    from transformers import AutoModelForCausalLM, TrainingArguments
    model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16)
    args = TrainingArguments(output_dir="out", bf16=True)
    """
    assert len(lint(src, CODE)) == 2
    assert lint(src, CODE, cfg=config(target_gpus=["a100", "h100"])) == []
    assert len(lint(src, CODE, cfg=config(target_gpus=["a100", "t4"]))) == 2
    (d, _) = lint(src, CODE, cfg=config(target_gpus=["a100", "t4"]))
    assert "sm75" in d.message and "sm60" not in d.message


def test_trl_default_depends_on_trl_version():
    src = """
    from trl import SFTConfig
    cfg = SFTConfig(output_dir="out")
    """
    assert len(lint(src, CODE, cfg=config(trl_version="0.19.0"))) == 1
    assert lint(src, CODE, cfg=config(trl_version="0.18.2")) == []


def test_unsloth_puts_its_own_config_in_place_of_trls():
    """Importing unsloth replaces TRL's configs with its own (bf16 and fp16 off by default) and its
    trainer picks bf16 only where the GPU has it: TRL's default bf16 is not what the run gets. A
    bf16 asked for explicitly still is (unsloth keeps it, on a T4 too)."""
    default = """
    from unsloth import FastLanguageModel
    from trl import SFTConfig
    cfg = SFTConfig(output_dir="out")
    """
    assert lint(default, CODE, cfg=config(trl_version="0.19.0")) == []
    asked = default.replace('output_dir="out"', 'output_dir="out", bf16=True')
    assert len(lint(asked, CODE, cfg=config(trl_version="0.19.0"))) == 1
    unpatched = default.replace("from unsloth import FastLanguageModel", "from peft import LoraConfig")
    assert len(lint(unpatched, CODE, cfg=config(trl_version="0.19.0"))) == 1


def test_an_unsloth_import_elsewhere_in_the_run_patches_the_config(tmp_path):
    from conftest import findings_in, write_tree
    root = write_tree(tmp_path, {
        "loader.py": "from unsloth import FastModel\ndef make():\n    return FastModel.from_pretrained('m')\n",
        "options.py": "from trl import SFTConfig\ndef opts():\n    return SFTConfig(output_dir='out')\n",
        "run.py": "from loader import make\nfrom options import opts\nmodel = make()\nargs = opts()\n",
        "requirements.txt": "trl==0.19.0\n",
    })
    assert findings_in(root, [CODE]) == []
    (root / "run.py").write_text("from options import opts\nargs = opts()\n")
    assert [d.code for d in findings_in(root, [CODE])] == [CODE]


def test_autocast_without_scaler_in_training_is_an_unsafe_fix():
    src = """
    import torch
    for batch in loader:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(batch)
        loss.backward()
    """
    (d,) = lint(src, CODE)
    assert d.fix is not None and d.fix.applicability == "unsafe"
    assert fix(src, CODE) == dedent(src)  # held back without --unsafe-fixes
    fixed = fix(src, CODE, unsafe=True)
    assert 'dtype=torch.bfloat16 if BF16_OK else torch.float16' in fixed


def test_bf16_from_an_unfixable_expression_is_reported_without_fix():
    src = """
    from transformers import TrainingArguments
    args = TrainingArguments(output_dir="out", bf16=True if resume else torch.cuda.is_available())
    """
    (d,) = lint(src, CODE)
    assert d.fix is None


def test_across_files_weights_are_trained_by_the_importing_script(tree):
    from precision_lint.engine import Engine

    root = tree(
        {
            "model_utils.py": """
                import torch
                from transformers import AutoModelForCausalLM

                def load():
                    return AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16)
                """,
            "train.py": """
                from transformers import Trainer, TrainingArguments
                from model_utils import load

                Trainer(model=load(), args=TrainingArguments(output_dir="out", fp16=True)).train()
                """,
        }
    )
    result = Engine(config(), ["MP201"], jobs=1).run_paths([str(root)], fix=True)
    fixed = result.fixed_texts[str(root / "model_utils.py")]
    # a module the script imports: the probe is a cached function, run at its first use, never at import
    assert "torch_dtype=torch.bfloat16 if bf16_ok() else torch.float32" in fixed


def test_capability_facts_are_plain_picklable_data():
    import pickle

    from precision_lint.facts.extract import extract_facts

    src = dedent(
        """
        import torch
        from transformers import AutoModel, BitsAndBytesConfig
        if torch.cuda.is_bf16_supported():
            q = BitsAndBytesConfig(bnb_4bit_compute_dtype=torch.bfloat16)
        m = AutoModel.from_pretrained("m", attn_implementation="flash_attention_2", dtype=torch.float32)
        """
    )
    facts = extract_facts(src, "t.py", "t")
    cap = pickle.loads(pickle.dumps(facts)).sections["capability"]
    (bnb,) = cap.bnb
    assert cap.call_guarded(bnb.span)
    (attn,) = cap.attention
    assert attn.key == "attn_implementation" and attn.loader
    assert [d.value for d in attn.dtypes] == ["float32"]
    assert not cap.call_guarded(attn.span)


def test_comparison_with_an_argparse_default_that_selects_bf16():
    src = """
    import argparse
    from transformers import TrainingArguments
    p = argparse.ArgumentParser()
    p.add_argument("--precision", default="bf16")
    args = p.parse_args()
    TrainingArguments("o", bf16=(args.precision == "bf16"))
    """
    (d,) = lint(src, "MP201")
    assert "bf16=(args.precision == \"bf16\")" in d.message
    assert d.fix is None  # the flag is derived: no literal to guard in place
    fp32_default = src.replace('default="bf16"', 'default="fp32"')
    assert lint(fp32_default, "MP201") == []


# --- a load whose result is dropped: a script that fills the download cache ----------------------
CACHE = """
import torch
from transformers import AutoModelForCausalLM


def main(name):
    {line}


if __name__ == "__main__":
    main("gpt2")
"""


def test_a_load_written_as_a_statement_alone_computes_nothing():
    src = CACHE.format(line="AutoModelForCausalLM.from_pretrained(name, dtype=torch.bfloat16)")
    assert lint(src, CODE) == []


@pytest.mark.parametrize(
    "line",
    [
        # the model is kept: whatever uses it computes in bf16
        "model = AutoModelForCausalLM.from_pretrained(name, dtype=torch.bfloat16)\n    return model(torch.ones(1, 4, dtype=torch.long).cuda())",
        "return AutoModelForCausalLM.from_pretrained(name, dtype=torch.bfloat16)",
        # a statement of a call on the loaded model: the load's result is used
        "AutoModelForCausalLM.from_pretrained(name, dtype=torch.bfloat16).cuda().generate(torch.ones(1, 4, dtype=torch.long).cuda())",
    ],
)
def test_a_load_whose_result_is_used_is_reported(line):
    (d,) = lint(CACHE.format(line=line), CODE)
    assert d.code == CODE and d.span.line in (6, 7)


META_DEVICE = """
import torch
from accelerate import init_empty_weights, load_checkpoint_and_dispatch
from transformers import AutoModelForCausalLM

{opening}
    model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16)
model = load_checkpoint_and_dispatch(model, "ckpt", device_map="auto")
"""


def test_a_model_built_on_the_meta_device_takes_its_dtype_from_the_dispatch_not_here():
    # under `init_empty_weights()` there are no weights: the dispatch loads them, and a fix of
    # this `torch_dtype=` would change nothing on the GPU
    assert [d for d in lint(META_DEVICE.format(opening="with init_empty_weights():"), "MP201")] == []


def test_the_same_load_outside_it_is_reported():
    (d,) = lint(META_DEVICE.format(opening="if True:"), "MP201")
    assert "bf16" in d.message


TORCH_META = """
import torch
import torch.nn as nn
from safetensors.torch import load_file


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(64, 64)


def build(ckpt_path, device="cuda"):
    with torch.device({device}):
        net = Net().to(torch.bfloat16)
    if ckpt_path is not None:
        net.load_state_dict(load_file(ckpt_path), strict=False{assign})
    return net.to(device)
"""


@pytest.mark.parametrize("device", ['"meta"', '"meta" if ckpt_path is not None else device'])
def test_a_cast_on_the_meta_device_that_an_assigning_load_replaces_changes_nothing(device):
    """Under ``with torch.device("meta")`` the cast makes no weights; ``load_state_dict(...,
    assign=True)`` puts the checkpoint's tensors in place, their dtype with them (torch >= 2.1):
    the cast is not what runs, and a fix of it would change nothing."""
    assert lint(TORCH_META.format(device=device, assign=", assign=True"), "MP201") == []


@pytest.mark.parametrize(
    "device, assign",
    [('"meta"', ""), ('"cuda"', ", assign=True"), ("device", ", assign=True")],
    ids=["copying-load", "real-device", "device-not-meta"],
)
def test_a_cast_whose_parameters_stay_is_still_reported(device, assign):
    """A load without ``assign`` copies into the cast parameters (after ``to_empty()``): the
    cast's dtype runs; on a real device the cast makes real bf16 weights."""
    assert [d.code for d in lint(TORCH_META.format(device=device, assign=assign), "MP201")] == ["MP201"]


ADAPTER_INPUT = """
import torch
import torch.nn as nn


class Adapter:
    def __init__(self, device="cuda"):
        self.device = torch.device(device)
        self.proj = nn.Linear(32, 128).to(self.device, dtype=torch.bfloat16)

    @torch.no_grad()
    def embed(self, feats):
        return self.proj({input})
"""


def test_a_fix_of_weights_whose_input_the_file_makes_bf16_is_unsafe():
    """The fix gives the weights a fallback dtype where bf16 is not native; a tensor the file
    casts to bf16 itself stays bf16 there, and the layer raises ``RuntimeError: mat1 and mat2
    must have the same dtype``: the fix is offered behind ``--unsafe-fixes``, and says why."""
    src = ADAPTER_INPUT.format(input="feats.to(self.device, dtype=torch.bfloat16)")
    (d,) = lint(src, "MP201")
    assert d.fix is not None and d.fix.applicability == "unsafe"
    assert "makes a tensor bf16 itself (line 12)" in d.message
    assert fix(src, "MP201") == dedent(src)  # nothing applied without --unsafe-fixes
    assert "BF16_OK else torch.float16" in fix(src, "MP201", unsafe=True)


@pytest.mark.parametrize("made", ["torch.zeros(4, 32, dtype=torch.bfloat16)", "feats.bfloat16()"])
def test_a_tensor_made_bf16_anywhere_in_the_file_makes_the_fix_unsafe(made):
    (d,) = lint(ADAPTER_INPUT.format(input=made), "MP201")
    assert d.fix.applicability == "unsafe"


@pytest.mark.parametrize("given", ["feats", "feats.to(self.device)", "feats.to(dtype=self.proj.weight.dtype)"])
def test_a_fix_of_weights_whose_input_follows_them_is_unsafe_only_for_its_float16(given):
    (d,) = lint(ADAPTER_INPUT.format(input=given), "MP201")
    assert d.fix.applicability == "unsafe" and "may overflow float16's range" in d.message
    assert "makes a tensor bf16 itself" not in d.message


CAST_AGAIN = """
import torch
from transformers import AutoModel

{load}
{recast}
model.eval()
"""
ON_CPU = 'model = AutoModel.from_pretrained("m").to(dtype=torch.bfloat16)'
RECAST = 'model = model.to(device="cuda", dtype=torch.float16)'


def test_a_bf16_cast_on_the_cpu_that_a_later_cast_replaces_is_not_what_runs():
    # the model computes in the dtype of the cast that moves it, judged on its own (a module's
    # `.to` casts it in place: `other = model.to(...)` replaces `model`'s dtype as well)
    assert lint(CAST_AGAIN.format(load=ON_CPU, recast=RECAST), "MP201") == []
    assert lint(CAST_AGAIN.format(load=ON_CPU, recast=RECAST.replace("model =", "other =")), "MP201") == []
    # an `assert` before it ends the program where it fails: the cast still runs wherever anything does
    assert lint(CAST_AGAIN.format(load=ON_CPU, recast="assert torch.cuda.is_available()\n" + RECAST), "MP201") == []


@pytest.mark.parametrize(
    "load, recast",
    [
        (ON_CPU, "if torch.cuda.is_available():\n    " + RECAST),  # the later cast may not run
        ('model = AutoModel.from_pretrained("m", torch_dtype=torch.bfloat16, device_map="auto")', RECAST),  # on the GPU already
        (ON_CPU, "pass"),  # nothing replaces it
    ],
)
def test_a_bf16_site_the_model_leaves_the_cpu_with_is_reported(load, recast):
    assert [d.code for d in lint(CAST_AGAIN.format(load=load, recast=recast), "MP201")] == ["MP201"]


def test_a_later_move_of_a_parameter_that_might_be_a_dtype_replaces_nothing():
    src = """
    import torch
    from transformers import AutoModel

    class Evaluator:
        def __init__(self, path, device):
            self.model = AutoModel.from_pretrained(path).eval()
            self.model = self.model.to(dtype=torch.bfloat16)
            self.model.to(device)
    """
    assert [d.code for d in lint(src, "MP201")] == ["MP201"]


@pytest.mark.parametrize(
    "call",
    ['torch.autocast("cuda", torch.bfloat16)', "torch.amp.autocast('cuda', torch.bfloat16, True)", "torch.cuda.amp.autocast(True, torch.bfloat16)"],
    ids=["device-generic", "torch-amp", "device-specific"],
)
def test_an_autocast_dtype_passed_by_position_is_read(call):
    """``torch.autocast(device_type, dtype, enabled)`` and ``torch.cuda.amp.autocast(enabled,
    dtype)``: the dtype is the second positional argument of both."""
    src = f"import torch\n\n\ndef step(model, x):\n    with {call}:\n        return model(x)\n"
    (d,) = lint(src, "MP201")
    assert "torch.bfloat16" in d.message
    assert "torch.bfloat16 if BF16_OK else torch.float16" in fix(src, "MP201")


def test_a_device_specific_autocast_enabled_by_position_is_not_its_device():
    """``torch.cuda.amp.autocast(use_amp)``: the first positional argument is ``enabled``, the
    dtype its default float16: nothing bf16 to report."""
    assert lint("import torch\n\n\ndef step(model, x, use_amp):\n    with torch.cuda.amp.autocast(use_amp):\n        return model(x)\n", "MP201") == []


PIPELINE_COMPONENT = {
    "app.py": """
import torch
from diffusers import CogVideoXPipeline, CogVideoXTransformer3DModel

from helper import Interp

transformer = CogVideoXTransformer3DModel.from_pretrained("org/video", subfolder="transformer", torch_dtype=torch.bfloat16)
TRAINED
pipe = CogVideoXPipeline.from_pretrained("org/video", transformer=transformer, torch_dtype=torch.bfloat16)
pipe.to("cuda")
interp = Interp()
""",
    # an optimizer in an imported helper the app never trains with
    "helper.py": """
import torch


class Interp:
    def __init__(self):
        self.net = torch.nn.Linear(4, 4)
        self.opt = torch.optim.AdamW(self.net.parameters())

    def update(self, x):
        self.net(x).sum().backward()
        self.opt.step()
""",
}


@pytest.mark.parametrize("trained, fallback", [
    ("", "torch.float16"),  # a component the pipeline generates with: the pipeline's own fallback
    ("optimizer = torch.optim.AdamW(transformer.parameters())", "torch.float32"),  # trained, then validated
], ids=["component", "trained-then-validated"])
def test_a_model_handed_to_an_inference_pipeline_takes_the_pipelines_fallback(tmp_path, trained, fallback):
    """One fallback for one pipeline below sm80: a float32 transformer would meet the pipeline's
    float16 latents (``Input type (c10::Half) and bias type (float) should be the same``)."""
    from conftest import write_tree
    from precision_lint.engine import Engine

    files = {k: v.replace("TRAINED", trained) for k, v in PIPELINE_COMPONENT.items()}
    write_tree(tmp_path, {".git/HEAD": "", **files})
    result = Engine(config(transformers_version="5.23"), ["MP201"], jobs=1).run_paths([str(tmp_path)], fix=True, unsafe=True)
    fixed = result.fixed_texts[next(p for p in result.fixed_texts if p.endswith("app.py"))]
    line = next(l for l in fixed.splitlines() if l.startswith("transformer = "))
    assert line.endswith(f"torch.bfloat16 if BF16_OK else {fallback})")


@pytest.mark.parametrize("config, load, found", [
    ("load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16", "quantization_config=q", 1),
    # 8-bit layers never read the 4-bit compute dtype (review 23j)
    ("load_in_8bit=True, bnb_4bit_compute_dtype=torch.bfloat16", "quantization_config=q", 0),
    # a config nothing reads quantizes no layer (its load's `quantization_config=` commented out)
    ("load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16", "device_map='cuda'", 0),
])
def test_a_4bit_compute_dtype_counts_where_4bit_layers_use_it(config, load, found):
    src = f"""
    import torch
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    def load():
        q = BitsAndBytesConfig({config})
        return AutoModelForCausalLM.from_pretrained("m", {load})
    """
    assert len(lint(src, CODE)) == found


def test_a_parameters_to_makes_a_copy_and_casts_nothing():
    """``self.pos.to(torch.bfloat16)`` of an ``nn.Parameter`` returns a new tensor (a module's
    ``.to`` works in place): as a statement it makes nothing bf16 (review 24u, glide's vendored
    model); the module's own ``self.lin.to(torch.bfloat16)`` still does."""
    src = """
        import torch
        from torch import nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.pos = nn.Parameter(torch.zeros(8, 16))
                self.lin = nn.Linear(16, 16)

            def cast(self):
                self.pos.to(torch.bfloat16)

        m = Model().cuda()
        m.cast()
        """
    assert lint(src, "MP201") == []
    assert [d.code for d in lint(src.replace("self.pos.to(", "self.lin.to("), "MP201")] == ["MP201"]


CONFIG_PARAMETER = """
import sys
import torch
import yaml
from transformers import AutoModelForCausalLM, BitsAndBytesConfig


def run(config):
    quant = config.get("quantization", {})
    compute_dtype = getattr(torch, quant.get("bnb_4bit_compute_dtype", "bfloat16"))
    bnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=compute_dtype)
    return AutoModelForCausalLM.from_pretrained("m", quantization_config=bnb)


if __name__ == "__main__":
    run(yaml.safe_load(open(sys.argv[1] if len(sys.argv) > 1 else "config.yaml")))
"""


@pytest.mark.parametrize("dtype, found", [("bfloat16", ["MP201"]), ("float16", [])])
def test_a_config_file_handed_to_a_function_gives_its_parameter_the_files_keys(tmp_path, dtype, found):
    """``run(yaml.safe_load(open("config.yaml")))``: the function's ``config`` holds the file's keys
    at the join, as a module-level ``cfg = yaml.safe_load(...)`` does (review 25b: a 4-bit compute
    dtype made by ``getattr(torch, ...)`` on a README's T4)."""
    from conftest import findings_in, write_tree

    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "README.md": "Runs on a single 16 GB T4 (Kaggle).\n",
        "config.yaml": f"quantization:\n  load_in_4bit: true\n  bnb_4bit_compute_dtype: {dtype}\n",
        "train.py": CONFIG_PARAMETER,
    })
    assert [d.code for d in findings_in(root, ["MP201"])] == found
