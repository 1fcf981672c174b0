"""The device a module is written for and the skips that guard a test are read from the code's
tree (capability.other_device, capability._skip_test): comments, docstrings, words in strings
and identifiers never change a finding (issue #23)."""
import textwrap

import pytest

from conftest import lint

from precision_lint.facts.extractors.capability import other_device

HEAD = "import torch\nfrom transformers import AutoModelForCausalLM, TrainingArguments\n"
BF16_ARGS = 'args = TrainingArguments(output_dir="o", bf16=True)\n'
XLA = "import torch_xla.core.xla_model as xm\n"


def _codes(body, path="train.py"):
    return sorted(d.code for d in lint(HEAD + textwrap.dedent(body), path=path) if d.code.startswith("MP2"))


# --- a backend's device: words about CUDA are not CUDA code ---------------------------------------
@pytest.mark.parametrize(
    "extra",
    [
        '"""Trains on a TPU; the cuda version of this script is train_gpu.py."""\n',
        "# on cuda use train_gpu.py\n",
        'print("not for cuda: run train_gpu.py")\n',
        "cuda_graphs = False\n",
        "use_cuda = args.cuda\n",
        'parser.add_argument("--flash_attn_note", default="see the nccl docs")\n',
    ],
    ids=["docstring", "comment", "string", "identifier", "attribute", "words-in-strings"],
)
def test_words_about_cuda_do_not_make_a_tpu_module_cuda_code(extra):
    source = XLA + extra
    assert other_device(source) == "xla"
    assert _codes(XLA + extra + BF16_ARGS) == []


@pytest.mark.parametrize(
    "extra",
    [
        "torch.cuda.synchronize()\n",
        "from torch.cuda.amp import GradScaler\n",
        "torch.backends.cuda.matmul.allow_tf32 = True\n",
        'torch.distributed.init_process_group(backend="nccl")\n',
        'device = f"cuda:{rank}"\n',
        'if args.device == "cuda":\n    pass\n',
        "from flash_attn import flash_attn_func\n",
    ],
    ids=["torch-cuda-call", "torch-cuda-import", "backends-cuda", "nccl-backend", "cuda-fstring", "cuda-compared", "flash-attn-import"],
)
def test_cuda_code_beside_a_backend_is_a_choice_at_run_time(extra):
    assert other_device(XLA + extra) is None
    assert _codes(XLA + extra + BF16_ARGS) == ["MP201"]


def test_an_import_written_in_a_docstring_is_no_backend():
    source = '"""Usage on a TPU host:\n\nimport torch_xla\n"""\nimport torch\n'
    assert other_device(source) is None
    assert _codes(source + BF16_ARGS) == ["MP201"]


def test_a_backend_imported_in_the_module_body_counts_beside_a_docstring():
    assert other_device('"""Fine-tunes on one host."""\n' + XLA) == "xla"


@pytest.mark.parametrize(
    "source,expected",
    [
        ('dev = "hpu"\nmodel = model.to(dev)\n', "hpu"),  # a variable holding the device, by its value
        ('x = torch.ones(2, device="mps")\n', "mps"),
        ("try:\n    import torch_xla.core.xla_model as xm\nexcept ImportError:\n    xm = None\ndevice = xm.xla_device()\n", "xla"),
        ('print("works on xla and mps too")\n', None),  # words in a string are not a device
        ('"""Runs on an Apple M2 (mps)."""\nx = 1\n', None),
        ('hpu = "hpu"\n', None),  # a string no call takes as its device
    ],
)
def test_a_device_is_a_value_passed_as_one(source, expected):
    assert other_device(source) == expected


# --- a CPU script: what places a model on a GPU is code, not words -----------------------------
CPU = 'device = "cpu"\nmodel = model.to(device)\n'


@pytest.mark.parametrize(
    "extra,expected",
    [
        ('print("with accelerate, pass --device_map=auto and --local_rank")\n', "cpu"),
        ("# Accelerator() would place it on the GPUs\n", "cpu"),
        ("from accelerate import Accelerator\naccelerator = Accelerator()\n", None),
        ("rank = args.local_rank\n", None),
        ('rank = int(os.environ["LOCAL_RANK"])\n', None),
        ('rank = os.environ.get("LOCAL_RANK")\n', None),
        ('pipe = pipeline("text-generation", device=0)\n', None),
        ("gpu = 1\nother = model.to(gpu)\n", None),
    ],
    ids=["words-in-a-string", "comment", "accelerator", "local-rank-arg", "local-rank-env", "local-rank-get", "device-index", "to-index-variable"],
)
def test_gpu_placement_is_read_from_calls(extra, expected):
    assert other_device(CPU + extra, trains=False) == expected


# --- test skips: what the condition consults, not the words in it --------------------------------
CHECK = """
    import os, unittest
    import pytest
    {helper}
    {decorator}
    def check_training():
        args = TrainingArguments(output_dir="o", bf16=True)
    """


def _check(helper, decorator):
    src = textwrap.dedent(CHECK).replace("{helper}", textwrap.dedent(helper).strip())
    return _codes(src.replace("{decorator}", decorator), path="checks/bf16_smoke.py")


def test_a_local_helper_whose_body_checks_the_capability_guards():
    helper = """
        def gpu_ok():
            major, _ = torch.cuda.get_device_capability()
            if major < 8:
                return False
            return True
        """
    assert _check(helper, "@pytest.mark.skipif(not gpu_ok(), reason='needs a newer GPU')") == []
    assert _check(helper, "") == ["MP201"]


def test_a_helper_called_by_a_helper_guards():
    helper = """
        def newer():
            major, _ = torch.cuda.get_device_capability()
            if major < 8:
                return False
            return True
        def gpu_ok():
            if not newer():
                return False
            return True
        """
    assert _check(helper, "@unittest.skipUnless(gpu_ok(), 'needs a newer GPU')") == []
    assert _check(helper, "") == ["MP201"]


@pytest.mark.parametrize(
    "helper,decorator",
    [
        # a local helper is read by its body, never by its name
        ("def is_ampere():\n    return torch.cuda.is_available()\n", "@pytest.mark.skipif(not is_ampere(), reason='needs Ampere')"),
        # a string naming a GPU generation is the user's environment, not the GPU's capability
        ("", "@pytest.mark.skipif(os.environ.get('GPU_ARCH') != 'ampere', reason='needs bf16')"),
        # a flag named like torch's testing flags, defined here
        ("SM80OrLater = True\n", "@unittest.skipIf(not SM80OrLater, 'needs sm80')"),
    ],
    ids=["local-helper-named-ampere", "string-ampere", "local-flag"],
)
def test_words_in_a_skip_condition_guard_nothing(helper, decorator):
    assert _check(helper, decorator) == ["MP201"]


@pytest.mark.parametrize(
    "helper,decorator",
    [
        ("from torch.testing._internal.common_cuda import SM80OrLater\n", "@unittest.skipIf(not SM80OrLater, 'needs sm80')"),
        ("from transformers.utils import is_torch_bf16_gpu_available\n", "@pytest.mark.skipif(not is_torch_bf16_gpu_available(), reason='bf16')"),
        # a helper of a package or another module: its name is all this module can read
        ("from gpu_utils import is_ampere_or_newer\n", "@pytest.mark.skipif(not is_ampere_or_newer(), reason='needs Ampere')"),
    ],
    ids=["torch-testing-flag", "transformers-probe", "imported-helper-name"],
)
def test_known_testing_flags_and_imported_helpers_guard(helper, decorator):
    assert _check(helper, decorator) == []
    assert _check(helper, "") == ["MP201"]
