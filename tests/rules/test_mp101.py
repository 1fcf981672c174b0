"""MP101 fp16-weights-under-loss-scaling: every weights shape, every scaling shape,
negatives, cross-file joins and the three fix strategies."""
import json

import pytest

from conftest import config, dedent, fix, lint

CODE = "MP101"


def strategy(name):
    return config(transformers_version="5.23", rules={CODE: {"strategy": name}})


def _but_mp304():
    from precision_lint.rules import all_rules

    return [c for c in all_rules() if c != "MP304"]


def lint_others(src, cfg=None):
    """Every rule's findings but MP304's: these inputs spell `torch_dtype=` on purpose, the
    name transformers 4.56 deprecated, which MP304 reports in the input already (no fix makes it)."""
    assert not any(d.code == "MP304" for d in lint(src, None, cfg)) or "torch_dtype" in src
    return [d for d in lint(src, None, cfg) if d.code != "MP304"]


def fix_others(src, cfg=None):
    from conftest import config as _config
    from precision_lint.engine import fix_source

    return fix_source(dedent(src), path="train.py", config=cfg or _config(transformers_version="5.23"), select=_but_mp304())


# --- weights shapes (with TrainingArguments(fp16=True) as the scaler) -------------------
# the Trainer trains `m`: a model is trained only when its parameters reach an optimizer
TA = "args = TrainingArguments(output_dir='o', fp16=True)\nTrainer(model=m, args=args).train()\n"
HEAD = "import torch\nfrom transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n"


@pytest.mark.parametrize(
    "weights, fixed",
    [
        ("m = AutoModelForCausalLM.from_pretrained('x', torch_dtype=torch.float16)",
         "m = AutoModelForCausalLM.from_pretrained('x', torch_dtype=torch.float32)"),
        ("m = AutoModelForCausalLM.from_pretrained('x', dtype=torch.half)",
         "m = AutoModelForCausalLM.from_pretrained('x', dtype=torch.float32)"),
        ("m = AutoModelForCausalLM.from_pretrained('x', torch_dtype='float16')",
         "m = AutoModelForCausalLM.from_pretrained('x', torch_dtype='float32')"),
        ("m = AutoModelForCausalLM.from_pretrained('x', dtype=\"fp16\")",
         "m = AutoModelForCausalLM.from_pretrained('x', dtype=\"float32\")"),
        ("DT = torch.float16\nm = AutoModelForCausalLM.from_pretrained('x', torch_dtype=DT)",
         "DT = torch.float16\nm = AutoModelForCausalLM.from_pretrained('x', torch_dtype=torch.float32)"),
        ("DT = torch.float16 if torch.cuda.is_available() else torch.float32\n"
         "m = AutoModelForCausalLM.from_pretrained('x', torch_dtype=DT)",
         "DT = torch.float16 if torch.cuda.is_available() else torch.float32\n"
         "m = AutoModelForCausalLM.from_pretrained('x', torch_dtype=torch.float32)"),
        ("cfg = {'torch_dtype': torch.float16, 'device_map': 'auto'}\n"
         "m = AutoModelForCausalLM.from_pretrained('x', **cfg)",
         "cfg = {'torch_dtype': torch.float32, 'device_map': 'auto'}\n"
         "m = AutoModelForCausalLM.from_pretrained('x', **cfg)"),
        ("m = AutoModelForCausalLM.from_pretrained('x').half()",
         "m = AutoModelForCausalLM.from_pretrained('x').float()"),
        ("m = AutoModelForCausalLM.from_pretrained('x')\nm.half()",
         "m = AutoModelForCausalLM.from_pretrained('x')\nm.float()"),
        ("m = AutoModelForCausalLM.from_pretrained('x')\nm.to(torch.float16)",
         "m = AutoModelForCausalLM.from_pretrained('x')\nm.to(torch.float32)"),
        ("m = AutoModelForCausalLM.from_pretrained('x').to('cuda', torch.float16)",
         "m = AutoModelForCausalLM.from_pretrained('x').to('cuda', torch.float32)"),
        # a project class derived from torch.nn.Module (what makes `unet` a model, not its name)
        ("class UNet(torch.nn.Module):\n    pass\nweight_dtype = torch.float16\nunet = UNet()\n"
         "unet.to('cuda', dtype=weight_dtype)\nm = unet",
         "class UNet(torch.nn.Module):\n    pass\nweight_dtype = torch.float16\nunet = UNet()\n"
         "unet.to('cuda', dtype=torch.float32)\nm = unet"),
    ],
)
def test_weights_shapes_fp32_master(weights, fixed):
    src = HEAD + weights + "\n" + TA
    (d,) = lint(src, CODE)
    assert "Attempting to unscale FP16 gradients" in d.message
    assert d.related and d.related[0].span.line == src.count("\n") - 1  # the TrainingArguments line
    out = fix(src, CODE)
    assert out == HEAD + fixed + "\n" + TA
    assert lint_others(out) == []  # no MP101 and no new finding of another rule
    assert fix_others(out) == out


def test_argparse_choice_is_guarded_not_replaced():
    src = dedent(
        """
        import argparse
        import torch
        from transformers import AutoModelForCausalLM
        p = argparse.ArgumentParser()
        p.add_argument("--model_dtype", default="float32", choices=["float16", "bfloat16", "float32"])
        args = p.parse_args()
        student = AutoModelForCausalLM.from_pretrained("s", torch_dtype=getattr(torch, args.model_dtype))
        opt = torch.optim.AdamW(student.parameters())
        scaler = torch.amp.GradScaler("cuda", enabled=torch.cuda.is_available())
        scaler.scale(student(**batch).loss).backward()
        """
    )
    (d,) = lint(src, CODE)
    out = fix(src, CODE)
    assert (
        "torch_dtype=torch.float32 if getattr(torch, args.model_dtype) == torch.float16 "
        "else getattr(torch, args.model_dtype))\n" in out  # a whole keyword value: no parentheses (UP034)
    )
    assert lint(out, CODE) == [] or all(d.code != CODE for d in lint(out))


# --- scaling shapes -------------------------------------------------------------------
# the run trains: fp16 gradients are unscaled only where an optimizer steps, on the
# parameters it is given
STEP = "opt = torch.optim.AdamW(model.parameters())\nloss = model(**batch).loss\nloss.backward()\n"
W = "import torch\nmodel = AutoModelForCausalLM.from_pretrained('x', torch_dtype=torch.float16)\n"


@pytest.mark.parametrize(
    "scaling",
    [
        "from transformers import TrainingArguments\nTrainingArguments('o', fp16=True)",
        "from transformers import Seq2SeqTrainingArguments\nSeq2SeqTrainingArguments('o', fp16=True)",
        "from trl import SFTConfig\nSFTConfig(output_dir='o', fp16=True)",
        "from transformers import TrainingArguments\nTrainingArguments('o', fp16=torch.cuda.is_available())",
        "from transformers import TrainingArguments\nuse_fp16 = True\nTrainingArguments('o', fp16=use_fp16)",
        "import argparse\nfrom transformers import TrainingArguments\np = argparse.ArgumentParser()\n"
        "p.add_argument('--fp16', action='store_true')\nargs = p.parse_args()\nTrainingArguments('o', fp16=args.fp16)",
        "from transformers import TrainingArguments\nkw = dict(output_dir='o', fp16=True)\nTrainingArguments(**kw)",
        "from dataclasses import dataclass\nfrom transformers import TrainingArguments, HfArgumentParser\n"
        "@dataclass\nclass Args(TrainingArguments):\n    fp16: bool = True\n",
        "scaler = torch.amp.GradScaler('cuda')",
        "scaler = torch.cuda.amp.GradScaler()",
        "from torch.cuda.amp import GradScaler\nscaler = GradScaler(enabled=torch.cuda.is_available())",
        "from accelerate import Accelerator\nacc = Accelerator(mixed_precision='fp16')",
        "import lightning as L\ntrainer = L.Trainer(precision='16-mixed')",
        "import pytorch_lightning as pl\ntrainer = pl.Trainer(precision=16)",
    ],
)
def test_scaling_shapes(scaling):
    src = "from transformers import AutoModelForCausalLM\n" + W + scaling + "\n" + STEP
    (d,) = lint(src, CODE)
    assert d.span.line == 3
    assert lint(fix(src, CODE), CODE) == []


def test_a_deepspeed_config_is_not_torch_loss_scaling(tmp_path):
    """`TrainingArguments(deepspeed=...)`: the Trainer runs DeepSpeed, whose fp16 (enabled in its
    JSON, or "auto" with `fp16=True`) keeps fp32 master weights and scales the loss itself; no
    GradScaler is made, so float16 weights never meet `unscale_`. Without `deepspeed`, the same
    `fp16=True` is reported."""
    from precision_lint.engine import Engine

    (tmp_path / "ds.json").write_text(json.dumps({"fp16": {"enabled": True}, "zero_optimization": {"stage": 2}}))
    (tmp_path / "ds_auto.json").write_text(json.dumps({"fp16": {"enabled": "auto"}}))
    head = "import torch\nfrom transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n" + W
    train = "Trainer(model=model, args=TrainingArguments('o', {}))\n"
    (tmp_path / "a.py").write_text(head + train.format("deepspeed='ds.json'"))
    (tmp_path / "b.py").write_text(head + train.format("deepspeed='ds_auto.json', fp16=True"))
    (tmp_path / "c.py").write_text(head + train.format("fp16=True"))
    (tmp_path / "d.py").write_text(head + train.format("fp16=True, deepspeed=None"))
    diags = Engine(config(), [CODE]).run_paths([str(tmp_path)]).diagnostics
    assert sorted(d.path.rsplit("/", 1)[-1] for d in diags) == ["c.py", "d.py"]


# --- negatives -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "src",
    [
        # inference only: fp16 weights, no scaler
        """
        import torch
        from transformers import AutoModelForCausalLM
        m = AutoModelForCausalLM.from_pretrained("x", torch_dtype=torch.float16)
        out = m.generate(ids)
        """,
        # fp32 weights + fp16 AMP: the correct set-up
        """
        import torch
        from transformers import AutoModelForCausalLM, TrainingArguments
        m = AutoModelForCausalLM.from_pretrained("x", torch_dtype=torch.float32)
        TrainingArguments("o", fp16=True)
        """,
        # bf16 weights + bf16 AMP
        """
        import torch
        from transformers import AutoModelForCausalLM, TrainingArguments
        m = AutoModelForCausalLM.from_pretrained("x", torch_dtype=torch.bfloat16)
        TrainingArguments("o", bf16=True)
        """,
        # LoRA on an fp16 base: adapters are fp32
        """
        import torch
        from peft import LoraConfig, get_peft_model
        from transformers import AutoModelForCausalLM, TrainingArguments
        m = AutoModelForCausalLM.from_pretrained("x", torch_dtype=torch.float16)
        m = get_peft_model(m, LoraConfig(r=8))
        TrainingArguments("o", fp16=True)
        """,
        # frozen fp16 teacher: requires_grad_(False)
        """
        import torch
        from transformers import AutoModelForCausalLM
        teacher = AutoModelForCausalLM.from_pretrained("t", torch_dtype=torch.float16)
        teacher.requires_grad_(False)
        student = AutoModelForCausalLM.from_pretrained("s")
        scaler = torch.amp.GradScaler("cuda")
        """,
        # frozen fp16 teacher: a requires_grad=False loop
        """
        import torch
        from transformers import AutoModelForCausalLM
        teacher = AutoModelForCausalLM.from_pretrained("t", torch_dtype=torch.float16)
        for p in teacher.parameters():
            p.requires_grad = False
        scaler = torch.amp.GradScaler("cuda")
        """,
        # frozen fp16 teacher: a requires_grad_(False) loop
        """
        import torch
        from transformers import AutoModelForCausalLM
        teacher = AutoModelForCausalLM.from_pretrained("t", torch_dtype=torch.float16)
        for p in teacher.parameters():
            p.requires_grad_(False)
        scaler = torch.amp.GradScaler("cuda")
        """,
        # fp16 teacher only used under no_grad
        """
        import torch
        from transformers import AutoModelForCausalLM
        teacher = AutoModelForCausalLM.from_pretrained("t", torch_dtype=torch.float16)
        scaler = torch.amp.GradScaler("cuda")
        with torch.no_grad():
            t_logits = teacher(ids).logits
        """,
        # scaler disabled
        """
        import torch
        model = AutoModelForCausalLM.from_pretrained("x", torch_dtype=torch.float16)
        scaler = torch.amp.GradScaler("cuda", enabled=False)
        """,
        # seed 000's own guard: the scaler is switched off when parameters are fp16
        """
        import torch
        model = AutoModelForCausalLM.from_pretrained("x", torch_dtype=torch.float16)
        use_scaler = torch.cuda.is_available()
        has_fp16_params = any(p.dtype == torch.float16 for p in model.parameters())
        if has_fp16_params and use_scaler:
            use_scaler = False
        scaler = torch.amp.GradScaler("cuda", enabled=use_scaler)
        """,
        # the same guard through a variable that reads the parameters' dtype, in a helper (review 26b)
        """
        import torch
        def configure_amp(model):
            param_dtype = next(model.parameters()).dtype
            enabled = torch.cuda.is_available() and param_dtype == torch.float32
            return enabled, torch.amp.GradScaler("cuda", enabled=enabled)
        model = AutoModelForCausalLM.from_pretrained("x", torch_dtype=torch.float16)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, eps=1e-4)
        amp_on, scaler = configure_amp(model)
        scaler.scale(model(x).loss).backward()
        scaler.step(optimizer)
        """,
        # a loader function nobody calls
        """
        import torch
        from transformers import AutoModelForCausalLM, TrainingArguments
        def export_half(path):
            m = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float16)
            m.save_pretrained("out")
        TrainingArguments("o", fp16=True)
        """,
        # tensors, not models
        """
        import torch
        x = torch.randn(3).half()
        logits = out.logits.half()
        scaler = torch.amp.GradScaler("cuda")
        """,
    ],
)
def test_negatives(src):
    assert lint(src, CODE) == []


def test_peft_then_half_is_a_finding():
    src = """
    import torch
    from peft import get_peft_model
    from transformers import Trainer, TrainingArguments
    m = get_peft_model(base, cfg)
    m.half()
    Trainer(model=m, args=TrainingArguments("o", fp16=True))
    """
    assert len(lint(src, CODE)) == 1
    src2 = """
    import torch
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
    m = AutoModelForCausalLM.from_pretrained("x", torch_dtype=torch.float16)
    m = get_peft_model(m, cfg, autocast_adapter_dtype=False)
    Trainer(model=m, args=TrainingArguments("o", fp16=True))
    """
    assert len(lint(src2, CODE)) == 1


# --- across files ---------------------------------------------------------------------
HELPER = """
import torch
from transformers import AutoModelForCausalLM

def load_model(name):
    model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.float16, device_map="auto")
    return model
"""
SCRIPT = """
import argparse
import torch
from transformers import Trainer, TrainingArguments
{import_line}

parser = argparse.ArgumentParser()
parser.add_argument("--fp16", action="store_true")
args = parser.parse_args()
use_bf16 = not args.fp16
use_fp16 = args.fp16
major, _ = torch.cuda.get_device_capability()
if use_bf16 and major < 8:
    use_bf16 = False
    use_fp16 = True
model = load_model("m")
training_args = TrainingArguments(output_dir="o", bf16=use_bf16, fp16=use_fp16)
Trainer(model=model, args=training_args).train()
"""


@pytest.mark.parametrize(
    "layout, import_line",
    [
        ({"proj/pkg/__init__.py": "", "proj/pkg/model_utils.py": HELPER}, "from .model_utils import load_model"),
        ({"proj/pkg/__init__.py": "", "proj/pkg/model_utils.py": HELPER}, "from pkg.model_utils import load_model"),
        ({"proj/pkg/__init__.py": "", "proj/pkg/model_utils.py": HELPER}, "import pkg.model_utils as mu\nload_model = mu.load_model"),
        ({"proj/model_utils.py": HELPER}, "from model_utils import load_model"),
        (  # re-exported by the package
            {"proj/pkg/__init__.py": "from .model_utils import load_model\n", "proj/pkg/model_utils.py": HELPER},
            "from pkg import load_model",
        ),
    ],
)
def test_seed_001_across_files(tree, layout, import_line):
    from precision_lint.engine import Engine

    script_path = "proj/pkg/train.py" if "proj/pkg/__init__.py" in layout else "proj/train.py"
    files = dict(layout)
    files[script_path] = SCRIPT.format(import_line=import_line)
    root = tree(files)
    engine = Engine(config(), [CODE])
    result = engine.run_paths([str(root / "proj")])
    (d,) = result.diagnostics
    script = dedent(files[script_path]).splitlines()
    args_line = next(i for i, l in enumerate(script, 1) if l.startswith("training_args ="))
    assert d.path.endswith("model_utils.py") and d.span.line == 5
    assert d.related[0].path.endswith("train.py") and d.related[0].span.line == args_line
    assert "train.py" in d.message
    fixed = engine.run_paths([str(root / "proj")], fix=True)
    helper = [p for p in fixed.fixed_texts if p.endswith("model_utils.py")][0]
    assert "torch_dtype=torch.float32" in fixed.fixed_texts[helper]
    assert fixed.diagnostics == []


def test_unrelated_scripts_are_not_joined(tree):
    from precision_lint.engine import Engine

    root = tree(
        {
            "scripts/infer.py": "import torch\nm = AutoModelForCausalLM.from_pretrained('x', torch_dtype=torch.float16)\n",
            "scripts/train.py": "import torch\nfrom transformers import TrainingArguments\n"
            "m = AutoModelForCausalLM.from_pretrained('x')\nTrainingArguments('o', fp16=True)\n",
        }
    )
    assert Engine(config(), [CODE]).run_paths([str(root / "scripts")]).diagnostics == []


# --- strategies -------------------------------------------------------------------------
SEED_004 = """
import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained(
    MODEL_NAME,
    torch_dtype=torch.float16,
    device_map="auto",
)
training_args = TrainingArguments(
    output_dir="out",
    fp16=torch.cuda.is_available(),
)
trainer = Trainer(model=model, args=training_args)
"""


def test_strategy_fp32_master():
    out = fix(SEED_004, CODE, strategy("fp32-master"))
    assert "torch_dtype=torch.float32," in out
    assert "fp16=torch.cuda.is_available()," in out  # autocast still does the fast math


def test_strategy_bf16_if_supported():
    out = fix(SEED_004, CODE, strategy("bf16-if-supported"))
    assert out.startswith(
        "import torch\nfrom transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n\n"
        "# bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.\n"
        "BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8\n\n"
    )
    assert "bf16=BF16_OK" in out
    assert "torch_dtype=torch.bfloat16 if BF16_OK else torch.float32," in out
    assert "fp16=torch.cuda.is_available() and not BF16_OK," in out
    assert out.count("BF16_OK = ") == 1
    assert lint_others(out) == []  # in particular no unguarded bf16 (MP201) and no fp16+bf16 clash
    assert fix_others(out, strategy("bf16-if-supported")) == out


def test_strategy_disable_scaler():
    src = """
    import torch
    model = AutoModelForCausalLM.from_pretrained("x", torch_dtype=torch.float16)
    use_amp = torch.cuda.is_available()
    opt = torch.optim.AdamW(model.parameters())
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    s2 = torch.cuda.amp.GradScaler()
    scaler.scale(model(**batch).loss).backward()
    """
    out = fix(src, CODE, strategy("disable-scaler"))
    assert 'enabled=use_amp and not any(p.dtype == torch.float16 for p in model.parameters())' in out
    assert "GradScaler(enabled=not any(p.dtype == torch.float16 for p in model.parameters()))" in out
    assert "torch_dtype=torch.float16" in out  # weights kept
    assert lint(out, CODE, strategy("disable-scaler")) == []
    assert fix(out, CODE, strategy("disable-scaler")) == out


def test_strategy_option_is_validated():
    from precision_lint.workspace.config import ConfigError
    from precision_lint.engine import Engine

    with pytest.raises(ConfigError, match="must be one of fp32-master, bf16-if-supported, disable-scaler"):
        Engine(strategy("fp64"))


def test_import_torch_added_when_missing():
    src = """
    from torch import float16
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
    m = AutoModelForCausalLM.from_pretrained("x", torch_dtype=float16)
    print(float16)
    Trainer(model=m, args=TrainingArguments("o", fp16=True))
    """
    out = fix(src, CODE)
    # in isort's order: plain imports of the third-party section before its `from` imports
    assert out.startswith("import torch\nfrom torch import float16\nfrom transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n")
    assert "torch_dtype=torch.float32" in out


TRL_LOADS = """
    import torch
    from trl import SFTConfig, SFTTrainer

    args = SFTConfig(output_dir="o", fp16={fp16}, model_init_kwargs={kwargs})
    SFTTrainer(model="facebook/opt-350m", args=args, train_dataset=ds).train()
"""


@pytest.mark.parametrize(
    "kwargs, dtype",
    [
        ('{"dtype": torch.float16}', "torch.float16"),
        ('{"torch_dtype": "float16", "attn_implementation": "sdpa"}', '"float16"'),
        ('dict(dtype=torch.half)', "torch.half"),
    ],
)
def test_a_trl_config_that_loads_the_model_in_float16(kwargs, dtype):
    # given the model's name, the trainer loads it with model_init_kwargs: float16 weights,
    # trained under the config's own fp16 loss scaling
    src = TRL_LOADS.format(fp16="True", kwargs=kwargs)
    (d,) = lint(src, CODE)
    assert d.span.line == 4 and f"`{dtype}` loads trainable weights in float16" in d.message
    assert "SFTConfig(fp16=True)" in d.message
    fixed = fix(src, CODE)
    assert dtype not in fixed.splitlines()[3] and lint(fixed, CODE) == []


@pytest.mark.parametrize(
    "fp16, kwargs",
    [
        ("False", '{"dtype": torch.float16}'),  # no loss scaling
        ("True", '{"dtype": torch.float32}'),
        ("True", '{"attn_implementation": "sdpa"}'),  # no dtype: TRL loads float32
    ],
)
def test_a_trl_config_that_loads_the_model_in_float32_or_without_scaling(fp16, kwargs):
    assert lint(TRL_LOADS.format(fp16=fp16, kwargs=kwargs), CODE) == []
