"""MP201/MP202 judge bf16 for the GPUs the code runs on: branches for other devices, CPU-only
training and GPUs the code itself names (target-gpus in the configuration overrides)."""
import textwrap

import pytest

from conftest import config, lint

HEAD = "import torch\nfrom transformers import AutoModelForCausalLM, TrainingArguments\n"


def _codes(body, cfg=None):
    return [d.code for d in lint(HEAD + textwrap.dedent(body), cfg=cfg) if d.code.startswith("MP2")]


@pytest.mark.parametrize(
    "body",
    [
        """
        if device == "xpu":
            model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16)
        """,
        """
        if is_torch_xla_available():
            args = TrainingArguments(output_dir="o", bf16=True)
        """,
        """
        dtype = torch.bfloat16 if args.device.startswith("hpu") else torch.float16
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=dtype)
        """,
        """
        args = TrainingArguments(output_dir="o", bf16=True, use_cpu=True)
        """,
        '''
        """Fine-tunes the model on one H100 80GB."""
        args = TrainingArguments(output_dir="o", bf16=True)
        ''',
        """
        # SBATCH --gres=gpu:a100:8
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16)
        """,
        """
        import transformer_engine.pytorch as te
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16)
        with te.fp8_autocast(enabled=True):
            loss = model(x).loss
        """,
    ],
    ids=["xpu-branch", "xla-branch", "hpu-ternary", "use-cpu", "h100-docstring", "slurm-a100", "fp8-compute"],
)
def test_other_devices_and_stated_gpus_are_not_reported(body):
    assert _codes(body) == []


@pytest.mark.parametrize(
    "body",
    [
        # a T4 is named as well: bf16 must still be guarded
        '''
        """Runs on an A100, or a Colab T4."""
        args = TrainingArguments(output_dir="o", bf16=True)
        ''',
        # the CUDA branch of a device switch
        """
        if device == "cuda":
            model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16)
        """,
        """
        args = TrainingArguments(output_dir="o", bf16=True, use_cpu=False)
        """,
        # a float8 dtype named (fp8 storage, or no use at all) says nothing about the GPU
        """
        scale_dtype = torch.float8_e4m3fn
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16)
        """,
    ],
    ids=["a100-and-t4", "cuda-branch", "use-cpu-false", "fp8-word"],
)
def test_cuda_code_for_every_gpu_is_still_reported(body):
    assert _codes(body) == ["MP201"]


def test_configured_targets_override_what_the_code_states():
    body = '''
        """Fine-tunes the model on one H100 80GB."""
        args = TrainingArguments(output_dir="o", bf16=True)
        '''
    assert _codes(body, config(target_gpus=["t4"], transformers_version="5.23")) == ["MP201"]


def test_gpus_named_by_an_imported_library_module_do_not_count(tree):
    from precision_lint.engine import Engine

    root = tree(
        {
            "mylib/__init__.py": '"""Tuned on H100 80GB nodes."""\n',
            "train.py": "import mylib\nfrom transformers import TrainingArguments\nTrainingArguments(output_dir='o', bf16=True)\n",
        }
    )
    found = Engine(config(transformers_version="5.23"), ["MP201"], jobs=1).run_paths([str(root)]).diagnostics
    assert [d.path.endswith("train.py") for d in found] == [True]


def test_weights_loaded_on_the_cpu_need_no_capability_check():
    src = """
        import torch
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained("m", device_map="cpu", torch_dtype=torch.bfloat16)
        print(model.generate(torch.ones(1, 4, dtype=torch.long)))
        """
    assert lint(src, "MP201") == []
    on_gpu = src.replace('device_map="cpu"', 'device_map="auto"')
    assert [d.code for d in lint(on_gpu, "MP201")] == ["MP201"]
    # on the GPU and only saved (a conversion): nothing computes in bf16 there either
    saved = on_gpu.replace("print(model.generate(torch.ones(1, 4, dtype=torch.long)))", 'model.save_pretrained("out")')
    assert lint(saved, "MP201") == []


CONVERT = """
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16)
    state = {k: v.to(torch.bfloat16) for k, v in model.state_dict().items()}
    torch.save(state, "out/model.ckpt")
    """


@pytest.mark.parametrize(
    "change,reported",
    [
        ((), False),  # loads, converts and saves on the CPU: bf16 works on every machine
        (('torch.save(state, "out/model.ckpt")', "print(len(state))"), True),  # saves nothing: not a conversion script
        (('torch_dtype=torch.bfloat16)', 'torch_dtype=torch.bfloat16).cuda()'), True),
        (('torch_dtype=torch.bfloat16)', 'torch_dtype=torch.bfloat16, device_map="auto")'), True),
        (('torch_dtype=torch.bfloat16)', 'torch_dtype=torch.bfloat16).to(args.device)'), True),
        (("import torch\n", "import torch\nimport deepspeed\n"), True),
        (('torch_dtype=torch.bfloat16)', 'torch_dtype=torch.bfloat16, device_map="cpu").to("cpu")'), False),
        (("v.to(torch.bfloat16)", "v.to(model.dtype)"), False),
        # where the model already is (review 23k: a vocabulary trimmed on the CPU, then saved)
        (("v.to(torch.bfloat16)", "v.to(model.device)"), False),
    ],
    ids=["cpu-conversion", "no-save", "cuda", "device-map", "to-device", "gpu-library", "cpu-named", "to-a-dtype", "to-its-device"],
)
def test_a_conversion_script_that_never_leaves_the_cpu_needs_no_capability_check(change, reported):
    src = textwrap.dedent(CONVERT)
    if change:
        src = src.replace(*change)
    assert [d.code for d in lint(src, "MP201")] == (["MP201"] if reported else [])


def test_a_conversion_script_whose_helper_moves_the_model_to_the_gpu_is_reported(tree):
    from precision_lint.engine import Engine

    script = textwrap.dedent(CONVERT).replace("import torch\n", "import torch\nfrom helpers import prepare\n", 1)
    script = script.replace("state = {", "model = prepare(model)\nstate = {")
    root = tree({"helpers.py": "def prepare(model):\n    return model.cuda()\n", "convert.py": script})
    found = Engine(config(transformers_version="5.23"), ["MP201"], jobs=1).run_paths([str(root)]).diagnostics
    assert [d.path.rsplit("/", 1)[-1] for d in found] == ["convert.py"]
    silent = tree({"helpers.py": "def prepare(model):\n    return model\n", "convert.py": script})
    assert Engine(config(transformers_version="5.23"), ["MP201"], jobs=1).run_paths([str(silent)]).diagnostics == []
