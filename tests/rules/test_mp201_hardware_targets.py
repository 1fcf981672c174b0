"""MP201/MP202 judge bf16 and FlashAttention-2 for the hardware the code targets: what it
states (not advice), FP8 compute (not storage) in its run, other devices' backends, CPU
autocast, notebook metadata, and the launch scripts and README shipped with it."""
import json
import textwrap

import pytest

from conftest import config, lint

from precision_lint.engine import Engine, check_source

HEAD = "import torch\nfrom transformers import AutoModelForCausalLM, TrainingArguments\n"
BF16_ARGS = 'args = TrainingArguments(output_dir="o", bf16=True)\n'
FA2 = 'model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16, attn_implementation="flash_attention_2")\n'


def _codes(body, cfg=None):
    return [d.code for d in lint(HEAD + textwrap.dedent(body), cfg=cfg) if d.code.startswith("MP2")]


def _run(root, codes=("MP201", "MP202"), cfg=None):
    found = Engine(cfg or config(transformers_version="5.23"), list(codes), jobs=1).run_paths([str(root)]).diagnostics
    return sorted((d.path.replace(str(root), "").lstrip("/"), d.code) for d in found)


# --- statements in comments and docstrings ---------------------------------------------------
@pytest.mark.parametrize(
    "body",
    [
        "# Tested on 8xH100 80GB\n" + BF16_ARGS,
        '"""Fine-tuning script; runs on 8×A100."""\n' + BF16_ARGS,
        "# We trained on 4 A100s.\n" + BF16_ARGS,
        "# Training takes 2h on a g5.2xlarge\n" + BF16_ARGS,  # AWS g5: A10G
        "# one a2-highgpu-1g node\n" + BF16_ARGS,  # Google Cloud a2: A100
        "# Tested on 8xH100 80GB\n" + FA2,
        # a note on the line that says whom its precision is for
        'args = TrainingArguments(output_dir="o", bf16=True)  # bf16 for A100\n',
        # tf32=True raises below Ampere (`--tf32 requires Ampere or a newer GPU arch`): the run
        # exists only on sm80 or newer (review 22e: 16 findings in two repositories)
        'args = TrainingArguments(output_dir="o", bf16=True, tf32=True)\n',
    ],
    ids=["comment-h100", "docstring-a100", "plural", "aws-g5", "gcp-a2", "fa2-h100", "line-note-for", "tf32"],
)
def test_a_stated_ampere_target_is_not_reported(body):
    assert _codes(body) == []


@pytest.mark.parametrize(
    "body",
    [
        # conditional advice: other GPUs are expected (a Colab T4 crashed on exactly this)
        "# set bf16 to True with an A100\n" + BF16_ARGS,
        "# If you have an A100, use bf16\n" + BF16_ARGS,
        "# bf16 is only supported on Ampere GPUs (A100, H100, ...)\n" + BF16_ARGS,
        "# For faster training use an H100\n" + BF16_ARGS,
        # a GPU name the code computes with states nothing
        'ON_A100 = "A100" in torch.cuda.get_device_name()\n' + BF16_ARGS,
        # a pre-Ampere instance or GPU, even in advice
        "# Training takes 2h on a g4dn.xlarge\n" + BF16_ARGS,
        "# Tested on an A100; on a T4 set fp16 instead\n" + BF16_ARGS,
        "# if you have an A100 set this to flash_attention_2\n" + FA2,
        # a note on the line itself says what the line needs
        'args = TrainingArguments(output_dir="o", bf16=True)  # A100\n',
        # tf32 off, or only where a switch turns it on: no GPU follows from it
        'args = TrainingArguments(output_dir="o", bf16=True, tf32=False)\n',
        'import sys\nargs = TrainingArguments(output_dir="o", bf16=True, tf32="--tf32" in sys.argv)\n',
    ],
    ids=["with-an-a100", "if-you-have", "only-supported", "advice", "code-string", "aws-g4dn", "a100-and-t4-advice", "fa2-advice", "line-note",
         "tf32-off", "tf32-switch"],
)
def test_advice_and_code_strings_state_no_target(body):
    assert _codes(body) in (["MP201"], ["MP202"])


def test_the_message_says_when_no_gpu_is_stated():
    (found,) = lint(HEAD + BF16_ARGS, "MP201")
    assert "no GPU stated: pre-Ampere assumed" in found.message
    (configured,) = lint(HEAD + BF16_ARGS, "MP201", cfg=config(target_gpus=["t4"], transformers_version="5.23"))
    assert "no GPU stated" not in configured.message and "sm75" in configured.message
    (named,) = lint(HEAD + "# Runs on a T4\n" + BF16_ARGS, "MP201")
    assert "the code names a GPU without native bf16" in named.message


# --- FP8 compute, not FP8 storage ---------------------------------------------------------------
@pytest.mark.parametrize(
    "body",
    [
        """
        import transformer_engine.pytorch as te
        with te.fp8_autocast(enabled=True):
            pass
        """,
        """
        from torchao.float8 import convert_to_float8_training
        convert_to_float8_training(model)
        """,
        """
        out = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
        """,
        """
        from accelerate import Accelerator
        accelerator = Accelerator(mixed_precision="fp8")
        """,
    ],
    ids=["transformer-engine", "torchao-float8", "scaled-mm", "accelerate-fp8"],
)
def test_fp8_compute_targets_ada_or_hopper(body):
    assert _codes(BF16_ARGS + textwrap.dedent(body)) == []


@pytest.mark.parametrize(
    "body",
    [
        "model = model.to(torch.float8_e4m3fn)  # fits a 16 GB card\n",
        "FP8 = torch.float8_e4m3fn\n",
        "import transformer_engine\n",
        """
        import transformer_engine.pytorch as te
        with te.fp8_autocast(enabled=False):
            pass
        """,
    ],
    ids=["fp8-storage-cast", "fp8-word", "te-import-alone", "fp8-autocast-disabled"],
)
def test_fp8_storage_or_a_word_silences_nothing(body):
    assert _codes(BF16_ARGS + textwrap.dedent(body)) == ["MP201"]


def test_fp8_compute_in_a_module_of_the_run_counts(tree):
    files = {
        "fp8_utils.py": "import transformer_engine.pytorch as te\n\ndef step(model, x):\n    with te.fp8_autocast(enabled=True):\n        return model(x)\n",
        "train.py": "from transformers import TrainingArguments\nfrom fp8_utils import step\nargs = TrainingArguments(output_dir='o', bf16=True)\n",
    }
    assert _run(tree(files)) == []


def test_fp8_compute_in_a_script_outside_the_run_does_not_count(tree):
    files = {
        "bench_fp8.py": "import transformer_engine.pytorch as te\nwith te.fp8_autocast(enabled=True):\n    pass\n",
        "train.py": "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='o', bf16=True)\n",
    }
    assert _run(tree(files)) == [("train.py", "MP201")]


# --- other devices ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "body",
    [
        "import torch_xla.core.xla_model as xm\ndevice = xm.xla_device()\n",
        "import habana_frameworks.torch.core as htcore\n",
        "import intel_extension_for_pytorch as ipex\n",
        'device = torch.device("mps")\n',
    ],
    ids=["xla", "hpu", "xpu", "mps"],
)
def test_code_written_for_another_device_is_not_judged_for_cuda_gpus(body):
    assert _codes(body + BF16_ARGS) == []
    assert _codes(body + FA2) == []


def test_a_backend_beside_cuda_code_is_a_choice_at_run_time():
    body = """
        try:
            import torch_xla.core.xla_model as xm
        except ImportError:
            xm = None
        device = "cuda"
        """
    assert _codes(textwrap.dedent(body) + BF16_ARGS) == ["MP201"]


def test_a_module_run_only_by_a_tpu_script_is_not_judged_for_cuda(tree):
    model = "import torch\nfrom transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained('m', torch_dtype=torch.bfloat16)\n"
    tpu = "import torch_xla.core.xla_model as xm\nimport model\n"
    assert _run(tree({"model.py": model, "train_tpu.py": tpu})) == []
    gpu = "import model\nmodel.model.to('cuda')\n"
    assert _run(tree({"model.py": model, "train_tpu.py": tpu, "train_gpu.py": gpu})) == [("model.py", "MP201")]


def test_a_conversion_script_on_the_cpu_is_not_judged_for_cuda():
    src = """
        device = "cpu"
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16).to(device)
        model.save_pretrained("out")
        print(model(torch.ones(1, 4, dtype=torch.long)))
        """
    assert _codes(src) == []
    assert _codes(src.replace('"cpu"', '"cuda"')) == ["MP201"]
    # only saved, on the GPU: a conversion computes nothing in bf16 (training_state.computes_nothing_after)
    assert _codes(src.replace('"cpu"', '"cuda"').replace("print(model(torch.ones(1, 4, dtype=torch.long)))\n", "")) == []


def test_a_cpu_module_imported_by_a_trainer_is_still_judged(tree):
    model = "import torch\nfrom transformers import AutoModelForCausalLM\ndevice = 'cpu'\nmodel = AutoModelForCausalLM.from_pretrained('m', torch_dtype=torch.bfloat16).to(device)\n"
    train = "from transformers import Trainer\nfrom model import model\nTrainer(model=model).train()\n"
    assert _run(tree({"model.py": model})) == []
    assert _run(tree({"model.py": model, "train.py": train})) == [("model.py", "MP201")]


# --- CPU autocast -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call",
    ["torch.cpu.amp.autocast(dtype=torch.bfloat16)", 'torch.autocast("cpu", dtype=torch.bfloat16)'],
    ids=["torch-cpu-amp", "positional-cpu"],
)
def test_cpu_autocast_is_not_cuda(call):
    assert _codes(f"with {call}:\n    y = model(x)\n") == []
    assert _codes(f"with {call.replace('cpu', 'cuda')}:\n    y = model(x)\n") == ["MP201"]


# --- notebooks ----------------------------------------------------------------------------------
def _notebook(code, metadata=None, markdown=()):
    cells = [{"cell_type": "markdown", "metadata": {}, "source": m} for m in markdown]
    cells.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": code})
    return json.dumps({"cells": cells, "metadata": metadata or {}, "nbformat": 4, "nbformat_minor": 5})


def _notebook_codes(code, metadata=None, markdown=()):
    found = check_source(_notebook(code, metadata, markdown), path="nb.ipynb", config=config(transformers_version="5.23"))
    return [d.code for d in found if d.code.startswith("MP2")]


@pytest.mark.parametrize(
    "metadata,markdown",
    [
        ({"accelerator": "GPU", "colab": {"gpuType": "A100"}}, ()),
        ({"kaggle": {"accelerator": "tpu1vmV38"}}, ()),
        ({"accelerator": "TPU"}, ()),
        ({}, ("_Note: this notebook was tested on an NVIDIA H100 80GB._",)),
        # the session's accelerator as its settings name it, beside a T4 it explains away
        # (review 21e: "Why a TPU and not T4×2")
        ({}, ("- Accelerator: TPU v5e-8 (pick it in the notebook settings)\n\nWhy a TPU and not T4×2: ...",)),
    ],
    ids=["colab-a100", "kaggle-tpu", "colab-tpu", "markdown-h100", "markdown-tpu-session"],
)
def test_a_notebook_states_its_hardware_in_metadata_and_markdown(metadata, markdown):
    assert _notebook_codes(HEAD + BF16_ARGS, metadata, markdown) == []


@pytest.mark.parametrize(
    "metadata,markdown",
    [
        ({"accelerator": "GPU", "colab": {"gpuType": "T4"}}, ()),
        ({"kaggle": {"accelerator": "nvidiaTeslaT4"}}, ()),
        ({"accelerator": "GPU"}, ()),
        ({"accelerator": "GPU", "colab": {"gpuType": "T4"}}, ("Set bf16 to True with an A100.",)),
        ({}, ("If you have an A100 you can use bf16.",)),
        ({}, ("This also runs on a TPU accelerator: see below.",)),  # a TPU mentioned, not the session's
    ],
    ids=["colab-t4", "kaggle-t4", "colab-default-gpu", "t4-with-advice", "markdown-advice", "tpu-mentioned"],
)
def test_a_pre_ampere_notebook_or_advice_is_still_reported(metadata, markdown):
    assert _notebook_codes(HEAD + "# set bf16 to True with an A100\n" + BF16_ARGS, metadata, markdown) == ["MP201"]


def _ran_with(*outputs, comment=""):
    """A notebook whose bf16 cell was run: ``outputs``, the text each of its output records
    (``nvidia-smi``'s table, a printed device name, a dataset's rows); ``comment``, a line of
    its code before it."""
    data = json.loads(_notebook(HEAD + comment + BF16_ARGS))
    data["cells"][-1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": text} for text in outputs]
    found = check_source(json.dumps(data), path="nb.ipynb", config=config(transformers_version="5.23"))
    return [(d.code, d.message) for d in found if d.code.startswith("MP2")]


def test_a_notebooks_saved_outputs_record_the_gpu_it_ran_on():
    """The outputs a notebook was saved with are the run it is (review 22e: a notebook run on an
    A100, told "no GPU stated"); only lines that speak of a device count."""
    assert _ran_with("| 0  NVIDIA A100-SXM4-80GB  On |\n") == []
    assert _ran_with(["Using device: cuda\n", "NVIDIA H100 80GB HBM3\n"]) == []
    ((code, message),) = _ran_with("| 0  Tesla T4  Off | 00000000:00:04.0 Off |\n")
    assert code == "MP201" and "sm75" in message
    # a row of data that names a GPU is no device
    ((code, message),) = _ran_with("The A100 launch price was high.\n")
    assert "no GPU stated" in message


def test_a_recorded_run_is_not_lowered_by_the_codes_advice_comment():
    """Review 29c: Unsloth's template note on ``dtype = None`` names a T4 and a V100 for float16;
    the banner the notebook printed names the RTX A5000 it ran on. The recorded run is the
    notebook's GPU; without a recorded one the comment still counts."""
    advice = "dtype = None  # None for auto detection. Float16 for Tesla T4, V100, Bfloat16 for Ampere+\n"
    assert _ran_with("==((====))==  Unsloth: GPU: NVIDIA RTX A5000. Max memory: 23.6 GB.\n", comment=advice) == []
    ((code, message),) = _ran_with(comment=advice)
    assert code == "MP201" and "sm70" in message


# --- launch scripts and READMEs shipped with the code ----------------------------------------------
def test_the_records_of_the_projects_runs_name_its_gpu(tmp_path):
    """A committed W&B run's metadata and the logs of a top-level log folder record the runs the
    project is (review 22e: runs on an H200 and an H100, told "no GPU stated")."""
    from conftest import write_tree

    train = "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='o', bf16=True)\n"
    wandb = write_tree(tmp_path / "wandb", {
        ".git/HEAD": "", "train.py": train,
        "wandb/run-20250101_000000-abc/files/wandb-metadata.json": '{"gpu": "NVIDIA H200", "gpu_count": 1}',
    })
    assert _run(wandb) == []
    logs = write_tree(tmp_path / "logs", {
        ".git/HEAD": "", "train.py": train,
        "logs_eval/gemma.log": "WARNING Your device 'NVIDIA H100 PCIe' (with compute capability 9.0) ...\n",
    })
    assert _run(logs) == []
    # a log folder below the root, as a job script's folder keeps its output (review 22's held-out FP)
    nested = write_tree(tmp_path / "nested", {
        ".git/HEAD": "", "train.py": train,
        "script/logs/finetune.sh.out": "|   0  NVIDIA L40S                    Off |   00000000:3B:00.0 Off |\n",
    })
    assert _run(nested) == []
    # a record is read at its head: a device named after it (deep in a long log) is not looked for
    from precision_lint.workspace.shipped import RECORD_BYTES

    deep = write_tree(tmp_path / "deep", {".git/HEAD": "", "train.py": train, "logs/train.log": "step\n" * (RECORD_BYTES // 5 + 1) + "GPU: NVIDIA H100\n"})
    assert _run(deep) == [("train.py", "MP201")]
    t4 = write_tree(tmp_path / "t4", {".git/HEAD": "", "train.py": train, "logs/train.log": "GPU 0: Tesla T4\n"})
    assert _run(t4) == [("train.py", "MP201")]
    # a log line that names a GPU without speaking of a device, or a log outside a log folder
    other = write_tree(tmp_path / "other", {
        ".git/HEAD": "", "train.py": train, "logs/notes.txt": "compare with A100 prices\n", "misc/run.log": "GPU: NVIDIA A100\n",
    })
    assert _run(other) == [("train.py", "MP201")]
    # an experiment log written by hand in a report folder (held-out 30u: QLoRA on an RTX 4070);
    # a run's output folder's Markdown is the text it generated
    report = write_tree(tmp_path / "report", {
        ".git/HEAD": "", "train.py": train, "reports/experiment_log.md": "## Run 1\n- GPU: NVIDIA GeForce RTX 4070 12GB\n- torch 2.12\n",
    })
    assert _run(report) == []
    generated = write_tree(tmp_path / "generated", {
        ".git/HEAD": "", "train.py": train, "outputs/answers.md": "Q: which GPU?\nA: the NVIDIA A100 GPU is fast.\n",
    })
    assert _run(generated) == [("train.py", "MP201")]


def _recorded_notebook(*outputs) -> str:
    cells = [{"cell_type": "code", "metadata": {}, "execution_count": 1, "source": "trainer.fit(model)\n", "outputs": [
        {"output_type": "stream", "name": "stderr", "text": text} for text in outputs
    ]}]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def test_the_projects_notebooks_record_the_gpu_its_code_runs_on(tmp_path):
    """Review 30b: a LoRA project whose example notebook printed Lightning's "You are using a
    CUDA device ('NVIDIA RTX A6000') that has Tensor Cores" (said only from sm80), its scripts'
    bf16 read as pre-Ampere. The project's recorded runs speak for code that nothing else
    states a GPU for."""
    from conftest import write_tree

    train = "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='o', bf16=True)\n"
    a6000 = "You are using a CUDA device ('NVIDIA RTX A6000') that has Tensor Cores. To properly utilize them, ...\n"
    ran = write_tree(tmp_path / "ran", {".git/HEAD": "", "train.py": train, "examples/estimate.ipynb": _recorded_notebook(a6000)})
    assert _run(ran) == []
    # a notebook saved without outputs, or whose outputs name no device, records nothing
    bare = write_tree(tmp_path / "bare", {".git/HEAD": "", "train.py": train, "examples/estimate.ipynb": _recorded_notebook()})
    assert _run(bare) == [("train.py", "MP201")]
    data = write_tree(tmp_path / "data", {
        ".git/HEAD": "", "train.py": train, "examples/estimate.ipynb": _recorded_notebook("price of an A100: $10,000\n"),
    })
    assert _run(data) == [("train.py", "MP201")]
    # a notebook run on a T4 records a pre-Ampere machine
    t4 = write_tree(tmp_path / "t4", {
        ".git/HEAD": "", "train.py": train, "examples/estimate.ipynb": _recorded_notebook("|   0  Tesla T4   Off | 00000000:00:04.0 Off |\n"),
    })
    ((path, code),) = _run(t4)
    assert (path, code) == ("train.py", "MP201")
    # what the code's own project says outranks them: a README that names a T4
    stated = write_tree(tmp_path / "stated", {
        ".git/HEAD": "", "train.py": train, "README.md": "# Fine-tuning\n\nTrained on one Tesla T4 (16 GB).\n",
        "examples/estimate.ipynb": _recorded_notebook(a6000),
    })
    assert _run(stated) == [("train.py", "MP201")]
    # a course's folders: one assignment's notebook ran on an RTX 3090; another folder with a
    # notebook of its own (a Colab one, no record) is judged by its own (review 32)
    rtx3090 = "You are using a CUDA device ('NVIDIA GeForce RTX 3090') that has Tensor Cores.\n"
    course = write_tree(tmp_path / "course", {
        ".git/HEAD": "", "S13/run.ipynb": _recorded_notebook(rtx3090), "S13/model.py": train,
        "S21/colab.ipynb": _recorded_notebook(), "S21/train.py": train,
    })
    assert _run(course) == [("S21/train.py", "MP201")]


def test_a_folders_own_notebooks_speak_before_a_readme_above_it(tmp_path):
    """Held-out review 34: a repository's README thanks a cloud of V100s for its first models; a
    folder of later work holds a notebook that printed ``nvidia-smi``'s RTX 3090 Ti. That
    folder's scripts ran there; a folder without a record of its own keeps the README's V100,
    and a README of the folder itself that states a GPU keeps its word."""
    from conftest import write_tree

    smi = "|   0  NVIDIA GeForce RTX 3090 Ti     Off | 00000000:01:00.0 Off |                  Off |\n"
    root = write_tree(tmp_path / "repo", {
        ".git/HEAD": "",
        "README.md": "# Speech toolkit\n\nThanks to our sponsor for the private V100s cloud used to train the models.\n",
        "session/tts/train.py": TRAIN,
        "session/tts/test-checkpoint.ipynb": _recorded_notebook(smi),
        "session/asr/train.py": TRAIN,
        "session/vc/train.py": TRAIN,
        "session/vc/README.md": "# Voice conversion\n\nTrained on one Tesla T4.\n",
        "session/vc/check.ipynb": _recorded_notebook(smi),
    })
    assert _run(root) == [("session/asr/train.py", "MP201"), ("session/vc/train.py", "MP201")]


def test_the_notebooks_searched_for_a_launch_are_side_files_of_the_run(tmp_path):
    """A notebook near the module is searched in its cells for a launch of it; whether it names
    the module or not, a change to it may change the answer, so a cached result depends on it."""
    from conftest import write_tree
    from precision_lint.workspace.shipped import ShippedFiles

    root = write_tree(tmp_path / "repo", {
        ".git/HEAD": "", "train.py": TRAIN,
        "run.ipynb": _notebook("!python train.py", {"colab": {"gpuType": "A100"}}),
        "plots.ipynb": _notebook("print(1)"),
    })
    shipped = ShippedFiles(str(root))
    assert shipped.stated_for(str(root / "train.py")) == 80
    assert {str(root / "run.ipynb"), str(root / "plots.ipynb")} <= set(shipped.looked_for())


def test_the_scripts_a_readme_runs_in_one_sequence_share_its_machine(tmp_path):
    """Review 31a: training with ``TrainingArguments(tf32=True)`` (refused below sm80) and then,
    as the README lists them, a merge and an inference script that load bf16 weights: they run
    on the machine that trained. A script the README does not run is judged alone."""
    from conftest import write_tree

    train = "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='o', bf16=True, tf32=True)\n"
    load = "import torch\nfrom transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('out', torch_dtype=torch.bfloat16).cuda()\n"
    readme = "# LoRA\n1. python train.py\n2. python merge.py\n"
    root = write_tree(tmp_path / "seq", {".git/HEAD": "", "README.md": readme, "train.py": train, "merge.py": load, "other.py": load})
    assert _run(root) == [("other.py", "MP201")]
    # without the TF32 run, nothing says which machine
    plain = write_tree(tmp_path / "plain", {
        ".git/HEAD": "", "README.md": readme, "train.py": train.replace(", tf32=True", ""), "merge.py": load,
    })
    assert _run(plain) == [("merge.py", "MP201"), ("train.py", "MP201")]


TRAIN = "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='o', bf16=True)\n"


@pytest.mark.parametrize(
    "files",
    [
        {"launch.slurm": "#!/bin/bash\n#SBATCH --gres=gpu:a100:8\nsrun python train.py\n"},
        {"../jobs/run.sh": "#!/bin/bash\n#SBATCH --partition=hopper-prod\ntorchrun src/train.py\n"},
        {"../scripts/train/run.sh": "#!/bin/bash\ntorchrun src/train.py --bf16 True --tf32 True\n"},
        {"README.md": "# Fine-tuning\n\nTested on 4x A100 80GB.\n"},
        {"../README.md": "This code has been tested up to 1024 A100s.\n"},
        # a nearer README that states no GPU (a usage page) leaves the project's statement standing
        {"README.md": "# Fine-tuning\n\nRun `bash run.sh`.\n", "../README.md": "All runs used 8 NVIDIA A100-40GB GPUs.\n"},
        # a variable `t4` in a code block is no T4 beside the A100 the prose states
        {"README.md": "Tested on 8 NVIDIA A100-40GB GPUs.\n\n```python\nt0, t1, t4 = inputs\n```\n"},
        # the project's README is the paper's; its training README beside it states the machine
        {"../README.md": "# A paper\n\nSee README_TRAINING.md.\n", "../README_TRAINING.md": "## Hardware\n\nGPU: NVIDIA A100 80GB.\n"},
        {"../walkthrough.ipynb": _notebook("!torchrun src/train.py", markdown=("Validated on NVIDIA A10G GPUs.",))},
        # the project's Colab notebook in a `notebooks/` folder beside the script's, its metadata's GPU
        {"../notebooks/run.ipynb": _notebook("%cd project\n!python src/train.py", {"accelerator": "GPU", "colab": {"gpuType": "L4"}})},
        # an install that takes flash-attn 2, whose kernels exist for Ampere and newer only
        {"../requirements.txt": "torch==2.3.1\nflash-attn>=2.5.8\n"},
        {"../pyproject.toml": '[project]\nname = "p"\ndependencies = ["torch", "flash_attn==2.6.3"]\n'},
        {"../README.md": "## Install\n\n```bash\npip install -r requirements.txt\npip install flash-attn --no-build-isolation\n```\n"},
    ],
    ids=["slurm-gres", "slurm-partition-above", "tf32-launch-in-a-launch-subfolder", "readme-own-folder", "readme-of-the-project", "silent-readme-below-the-projects", "readme-with-code", "another-readme-of-the-project", "notebook-launcher", "notebooks-folder", "flash-attn-requirement", "flash-attn-dependency", "flash-attn-readme-install"],
)
def test_launchers_and_the_folders_readme_state_the_target(tree, files):
    root = tree({"src/train.py": TRAIN, **{f"src/{k}": v for k, v in files.items()}})
    assert _run(root) == []
    assert _run(root, cfg=config(target_gpus=["t4"], transformers_version="5.23")) == [("src/train.py", "MP201")]


@pytest.mark.parametrize(
    "files",
    [
        # launches a script of another folder
        {"jobs/launch.slurm": "#!/bin/bash\n#SBATCH --gres=gpu:a100:8\nsrun python tools/other.py\n", "tools/other.py": ""},
        {"README.md": "Every example was tested on an A100.\n", "src/README.md": "# Examples\n\nWe ran these on a T4.\n"},  # a nearer README
        {"docs/README.md": "Tested on 4x A100 80GB.\n"},  # another folder's
        {"CHANGES.md": "Tested on 4x A100 80GB.\n"},  # a page of the project that is no README
        {"src/launch.sh": "#!/bin/bash\n# runs on a T4\npython train.py  # A100\n"},  # commands are not read
        {"requirements.txt": "flash-attn==1.0.9\n"},  # FlashAttention-1 runs on Turing too
        {"pyproject.toml": '[project]\nname = "p"\n[project.optional-dependencies]\nfast = ["flash-attn>=2"]\n'},  # an option
    ],
    ids=["slurm-other-folders-script", "nearer-readme", "other-folders-readme", "changes-page", "script-command", "flash-attn-1", "flash-attn-extra"],
)
def test_files_that_do_not_speak_about_the_module_state_nothing(tree, files):
    assert _run(tree({"src/train.py": TRAIN, **files})) == [("src/train.py", "MP201")]


@pytest.mark.parametrize(
    "launcher, reported",
    [
        ("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\npython main.py --steps 10\n", []),
        ("#!/bin/bash\n#SBATCH -p gpu_h100\npython src/main.py\n", []),
        ("#!/bin/bash\n#SBATCH --gres=gpu:v100:1\npython main.py\n", [("src/study.py", "MP201")]),
        ("#!/bin/bash\npython main.py\n", [("src/study.py", "MP201")]),  # states nothing
        # a Slurm job of the folder that serves a model (review 35): the cluster's GPUs still
        ("#!/bin/bash\n#SBATCH --gres=gpu:h100:2\nvllm serve ./merged --port 8000\n", []),
        # a plain shell script that runs none of the folder's files says nothing of them
        ("#!/bin/bash\n# on the H100 node\nvllm serve ./merged\n", [("src/study.py", "MP201")]),
    ],
    ids=["a100-sibling", "h100-partition-from-root", "v100-sibling", "nothing-stated", "slurm-serving-job", "shell-serving"],
)
def test_a_script_no_launcher_names_targets_what_its_siblings_launchers_request(tree, launcher, reported):
    """Review 27a: study scripts beside Slurm jobs that all request an A100 for the folder's
    main script are run on that cluster too; where a README states a GPU, it decides."""
    where = "src/run.sbatch" if "src/" not in launcher else "run.sbatch"
    root = tree({"src/main.py": "print('main')\n", "src/study.py": TRAIN, where: launcher})
    assert _run(root) == reported


def test_a_readme_that_states_a_gpu_outranks_the_siblings_launchers(tree):
    root = tree({
        "src/main.py": "print('main')\n", "src/study.py": TRAIN,
        "src/run.sbatch": "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\npython main.py\n",
        "src/README.md": "The study scripts run on a free Colab T4.\n",
    })
    assert _run(root) == [("src/study.py", "MP201")]


SPACE_CARD = "---\ntitle: Demo\nsdk: gradio\napp_file: app.py\nsuggested_hardware: {flavor}\n---\n\n# Demo\n"


@pytest.mark.parametrize("flavor, reported", [("a10g-large", False), ("l4x4", False), ("'a100-large'", False), ("t4-medium", True), ("cpu-basic", True)])
def test_a_hugging_face_spaces_card_states_the_hardware_of_its_app(tree, flavor, reported):
    """A Space's README opens with its card, whose `suggested_hardware:` is the GPU the app is
    written for and run on: it speaks for the folder before a README above it (a T4 the
    project's README names for another script)."""
    files = {
        "README.md": "# Project\n\nThe quantized demo runs on a free Colab T4.\n",
        "space/README.md": SPACE_CARD.format(flavor=flavor),
        "space/app.py": TRAIN,
    }
    assert _run(tree(files)) == ([("space/app.py", "MP201")] if reported else [])


def test_code_that_states_its_own_gpu_is_not_overridden_by_a_readme_above_it(tree):
    """A folder of recipes has one README; a recipe that names its own GPU (an A10 in its
    docstring) is judged by that, not by a sentence of the README about another recipe (a Colab
    T4). The README still speaks for a recipe that states nothing, and a recipe that names a T4
    itself is still reported."""
    readme = {"README.md": "# Recipes\n\nOn the free Colab T4 GPU the llama.cpp recipe takes 20 minutes.\n"}
    own_a10 = '"""Fine-tunes on a single GPU (e.g. A10 with 24GB)."""\n' + TRAIN
    assert _run(tree({"recipes/ft/train.py": own_a10, **readme})) == []
    assert _run(tree({"recipes/ft/train.py": TRAIN, **readme})) == [("recipes/ft/train.py", "MP201")]
    own_t4 = '"""Fine-tunes on a single T4."""\n' + TRAIN
    assert _run(tree({"recipes/ft/train.py": own_t4})) == [("recipes/ft/train.py", "MP201")]


def test_a_launcher_counts_beside_the_codes_own_statement(tree):
    """What a SLURM launcher of the script requests is the run's own: a V100 there is reported
    whatever the docstring says."""
    files = {
        "src/train.py": '"""Runs on an A100."""\n' + TRAIN,
        "src/launch.slurm": "#!/bin/bash\n#SBATCH --gres=gpu:v100:8\nsrun python train.py\n",
    }
    assert _run(tree(files)) == [("src/train.py", "MP201")]


# --- the project's documentation folder, where no README up to the project's root states a GPU ------
PROJECT = {"pyproject.toml": "[project]\nname = 'p'\n", "README.md": "# p\n\nTrain with 8 GPUs.\n", "src/train.py": TRAIN}


@pytest.mark.parametrize(
    "files",
    [
        {"docs/recipes.md": "# Recipes\n\nWe ran SFT for the 1B model on 1 node of 8 NVIDIA H100 GPUs.\n"},
        {"docs/algorithms/dpo.md": "## Train (1x8 H100, ~9.5 h)\n"},  # a folder directly in docs/
        {"doc/index.rst": "All experiments ran on 8 NVIDIA A100-80GB GPUs.\n"},
        {"docs/recipes.md": "We ran SFT on 8 H100s.\n", "docs/other.md": "# Other\n\nRun `make`.\n"},
        # review 29b: a guide under `documentation/` ("optimized for tuning on a single RTX 5080")
        {"documentation/TUNING.md": "This guide is optimized for tuning on a single RTX 5080.\n"},
    ],
    ids=["docs-page", "docs-subfolder", "doc-rst", "one-page-of-several", "documentation-folder"],
)
def test_the_projects_docs_state_the_target_where_its_readme_is_silent(tree, files):
    root = tree({**PROJECT, **files})
    assert _run(root) == []
    assert _run(root, cfg=config(target_gpus=["t4"], transformers_version="5.23")) == [("src/train.py", "MP201")]


@pytest.mark.parametrize(
    "files",
    [
        # the root README states a GPU: it speaks for the project, the docs are not read
        {"README.md": "# p\n\nWe trained on a T4.\n", "docs/recipes.md": "We ran SFT on 8 H100s.\n"},
        # advice, and a pre-Ampere GPU named anywhere in the docs
        {"docs/online.md": "For chat models you should use an 8xH100 node.\n"},
        {"docs/recipes.md": "We ran SFT on 8 H100s.\n", "docs/colab.md": "On a T4, use fp16.\n"},
        # deeper than one folder into docs/, or not a page
        {"docs/source/en/train.md": "We ran SFT on 8 H100s.\n"},
        {"docs/notes.txt": "We ran SFT on 8 H100s.\n"},
        # no project root: no project documentation
        {"pyproject.toml": None, "docs/recipes.md": "We ran SFT on 8 H100s.\n"},
    ],
    ids=["readme-states-t4", "docs-advice", "docs-name-a-t4", "docs-too-deep", "docs-not-a-page", "no-project-root"],
)
def test_docs_that_do_not_state_an_ampere_target_leave_it_reported(tree, files):
    merged = {k: v for k, v in {**PROJECT, **files}.items() if v is not None}
    assert _run(tree(merged)) == [("src/train.py", "MP201")]


# --- a sub-project's own documentation (review 13, S2) ---------------------------------------------
# A toolkit (root setup.py, a README stating no GPU) with research code in a sub-folder that ships its
# own README and environment; the sub-folder's docs/ page states the machine its results came from.
SUBPROJECT = {
    "setup.py": "from setuptools import setup\nsetup(name='kit', install_requires=['transformers>=4.44'])\n",
    "README.md": "# kit\n\nResearch code lives in sub-folders.\n",
    "lab/README.md": "# lab\n\nCreate the environment, then run `python src/train.py`.\n",
    "lab/environment.yaml": "name: lab\ndependencies:\n  - pip:\n      - transformers==4.34.1\n",
    "lab/docs/evaluation.md": "# Evaluation\n\nAll results were obtained on an 8xA100 machine.\n",
    "lab/src/train.py": TRAIN,
}


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"lab/environment.yaml": None, "lab/requirements.txt": "transformers==4.34.1\n"},  # a requirements file
        {"README.md": "# kit\n\nThe toolkit's tests run on a T4.\n"},  # nearer than the root README
    ],
    ids=["environment-yaml", "requirements-txt", "beats-the-root-readme"],
)
def test_a_subprojects_docs_state_the_target_of_its_code(tree, files):
    merged = {k: v for k, v in {**SUBPROJECT, **files}.items() if v is not None}
    root = tree(merged)
    assert _run(root) == []
    assert _run(root, cfg=config(target_gpus=["t4"], transformers_version="5.23")) == [("lab/src/train.py", "MP201")]


@pytest.mark.parametrize(
    "files",
    [
        # no environment of its own: a folder of the project, whose docs/ is not the project's documentation
        {"lab/environment.yaml": None},
        # no README of its own: not a sub-project
        {"lab/README.md": None},
        # its README states a GPU: that one speaks, not its docs
        {"lab/README.md": "# lab\n\nWe trained on a T4.\n"},
        # the code states its own GPU: neither README nor docs override it
        {"lab/src/train.py": '"""Fine-tunes on a single T4."""\n' + TRAIN},
        # another folder's code: the sub-project's docs do not speak for it
        {"lab/src/train.py": None, "other/train.py": TRAIN},
    ],
    ids=["no-own-environment", "no-own-readme", "readme-states-t4", "code-states-t4", "code-outside"],
)
def test_a_subprojects_docs_speak_only_for_its_code_and_after_its_readme(tree, files):
    merged = {k: v for k, v in {**SUBPROJECT, **files}.items() if v is not None}
    found = _run(tree(merged))
    assert len(found) == 1 and found[0][1] == "MP201"


# --- a README that states the GPUs a run needs, beside bf16 (review 11, S1) --------------------------
PARSED_TRAIN = textwrap.dedent(
    """\
    import transformers
    from dataclasses import dataclass, field


    @dataclass
    class Args(transformers.TrainingArguments):
        max_len: int = field(default=512)


    def main():
        (args,) = transformers.HfArgumentParser((Args,)).parse_args_into_dataclasses()
        model = transformers.AutoModelForCausalLM.from_pretrained("m")
        transformers.Trainer(model=model, args=args).train()


    if __name__ == "__main__":
        main()
    """
)
LAUNCH = "torchrun --nproc_per_node=8 train.py --output_dir out --bf16 True --fsdp 'full_shard auto_wrap'\n"


@pytest.mark.parametrize(
    "sentence,expected",
    [
        ("Run [train.sh](./train.sh) to train; note that a training run needs 8x A100 80GB GPUs, bf16 and FSDP.", []),
        ("You can train with train.sh, please note that the training process requires 4*H100 GPUs, bf16 and DeepSpeed.", []),
        ("- **Hardware**: 8 × A800 80GB (bf16, FlashAttention-2)", []),
        ("bf16 requires an A100 or newer; train.sh turns it on.", [("train.py", "MP201")]),
        ("If you use bf16, training requires an A100 80GB.", [("train.py", "MP201")]),
        ("Training needs an A100 to use bf16.", [("train.py", "MP201")]),
    ],
    ids=["needs-gpus-bf16-fsdp", "can-train-requires", "bullet-label", "bf16-requires", "if-bf16-requires", "a100-for-bf16"],
)
def test_a_readme_requirement_beside_bf16_states_the_target(tree, sentence, expected):
    root = tree({"train.py": PARSED_TRAIN, "train.sh": LAUNCH, "README.md": f"# ranker\n\n## Training\n{sentence}\n"})
    assert _run(root, codes=("MP201",)) == expected


def test_a_stated_pre_ampere_gpu_is_the_target_the_message_names(tree):
    """"Fine-tunes on a single T4": the finding names the T4's sm75, not the default list."""
    root = tree({"src/train.py": '"""Fine-tunes on a single T4."""\n' + TRAIN})
    (d,) = Engine(config(transformers_version="5.23"), ["MP201"], jobs=1).run_paths([str(root)]).diagnostics
    assert "target-gpus sm75;" in d.message and "sm60" not in d.message


# --- a shipped launch that asks for TF32: the run is written for Ampere -------------------------
TF32_LAUNCH = "torchrun --nproc_per_node=4 train.py --output_dir out --bf16 True --tf32 True\n"


@pytest.mark.parametrize(
    "files",
    [
        {"train.sh": TF32_LAUNCH},
        {"train.sh": TF32_LAUNCH.replace("--tf32 True", "--tf32")},
        {"README.md": f"# heads\n\n## Training\n\n```bash\n{TF32_LAUNCH}```\n"},
        {"README.md": f"# heads\n\n```console\n$ {TF32_LAUNCH}```\n"},
        {"README.md": f"# heads\n\n```bash\n(base) $ {TF32_LAUNCH}```\n"},  # markdown.PROMPT_SIGNS, as pins read them
        {"README.md": f"# heads\n\n```\n>> {TF32_LAUNCH}```\n"},
        # the README at the project's root documents the launch of a script in a package folder
        {"README.md": "# heads\n\n```\ntorchrun --nproc_per_node=4 heads/train.py \\\n    --bf16 True \\\n    --tf32 True\n```\n"},
    ],
    ids=["launcher", "launcher-switch", "readme-bash", "readme-console", "readme-conda-prompt", "readme-double-prompt", "root-readme-continued"],
)
def test_a_launch_that_passes_tf32_states_ampere(tree, files):
    """``--tf32 True`` asks for TF32 tensor cores, which exist from Ampere on (a
    ``TrainingArguments`` given it below raises ``ValueError: --tf32 requires Ampere or a newer
    GPU arch``): the shipped or documented run is written for sm80+, and its bf16 is no finding."""
    script = "heads/train.py" if "heads/train.py" in str(files) else "train.py"
    root = tree({script: PARSED_TRAIN.replace("from_pretrained(\"m\")", "from_pretrained(\"m\", torch_dtype=torch.bfloat16)").replace("import transformers\n", "import torch\nimport transformers\n", 1), ".git/HEAD": "", **files})
    assert _run(root, codes=("MP201",)) == []


@pytest.mark.parametrize(
    "files",
    [
        {"train.sh": TF32_LAUNCH.replace("--tf32 True", "--tf32 False")},
        {"train.sh": TF32_LAUNCH.replace("train.py", "other.py")},  # another script's run
        {"README.md": f"# heads\n\n```python\n# {TF32_LAUNCH}```\n"},  # not a shell block
        {"README.md": f"# heads\n\nWe ran `{TF32_LAUNCH.strip()}` once.\n"},  # prose, not a documented command
        {"README.md": f"# heads\n\n```bash\n# {TF32_LAUNCH}```\n"},  # a comment in a shell block is not run
    ],
    ids=["tf32-false", "other-script", "python-block", "inline-code", "shell-comment"],
)
def test_launches_that_do_not_ask_tf32_of_the_script_state_nothing(tree, files):
    body = PARSED_TRAIN.replace("from_pretrained(\"m\")", "from_pretrained(\"m\", torch_dtype=torch.bfloat16)").replace("import transformers\n", "import torch\nimport transformers\n", 1)
    root = tree({"train.py": body, ".git/HEAD": "", **files})
    assert set(_run(root, codes=("MP201",))) == {("train.py", "MP201")}


# --- a README elsewhere in the project that links to the script, or runs it ----------------------
@pytest.mark.parametrize(
    "readme",
    [
        "# Module 5\n\nGo to [train.py](../training/train.py): it tunes a 16B model on a single A6000 48GB GPU.\n",
        "# Module 5\n\nWe ran it on 8 A100s:\n\n```bash\ncd training && python train.py --output_dir out\n```\n",
        "# Module 5\n\nWe ran it on 8 A100s:\n\n```bash\npython training/train.py --output_dir out\n```\n",
    ],
    ids=["link", "command-in-folder", "command-from-root"],
)
def test_a_readme_of_another_folder_that_links_to_or_runs_the_script_states_its_gpu(tree, readme):
    """A workshop's ``module5/README.md`` that walks through ``training/train.py`` speaks about
    it as the README of its own folder would."""
    root = tree({".git/HEAD": "", "training/train.py": TRAIN, "module5/README.md": readme})
    assert _run(root, codes=("MP201",)) == []


@pytest.mark.parametrize(
    "readme",
    [
        "# Module 5\n\nThe training script, train.py, runs on an A100.\n",  # the name, no link to the file
        "# Module 5\n\nSee [the upstream train.py](https://github.com/org/repo/blob/main/train.py), tested on an A100.\n",
        "# Module 5\n\nGo to [train.py](../other/train.py): it runs on an A100.\n",  # another file of the name
    ],
    ids=["named-only", "url", "other-file"],
)
def test_a_readme_elsewhere_that_does_not_point_at_the_file_states_nothing_for_it(tree, readme):
    root = tree({".git/HEAD": "", "training/train.py": TRAIN, "other/train.py": "x = 1\n", "module5/README.md": readme})
    assert _run(root, codes=("MP201",)) == [("training/train.py", "MP201")]


def test_a_pre_ampere_gpu_in_a_readme_that_links_to_the_script_is_its_target(tree):
    root = tree({".git/HEAD": "", "training/train.py": TRAIN, "colab/README.md": "Open [train.py](../training/train.py) on the free Colab T4.\n"})
    (d,) = Engine(config(transformers_version="5.23"), ["MP201"], jobs=1).run_paths([str(root)]).diagnostics
    assert "target-gpus sm75;" in d.message


def test_without_a_root_marker_the_folder_the_check_runs_from_is_the_project(tree, monkeypatch):
    """An unpacked archive has no ``.git``: checked from its top folder, its READMEs elsewhere
    still speak about the files they link to; checked from another folder, they do not."""
    readme = "# Module 5\n\nGo to [train.py](../training/train.py): it tunes a 16B model on a single A6000 48GB GPU.\n"
    root = tree({"training/train.py": TRAIN, "module5/README.md": readme})
    monkeypatch.chdir(root)
    assert _run(root, codes=("MP201",)) == []
    monkeypatch.chdir(root / "training")
    assert _run(root, codes=("MP201",)) == [("training/train.py", "MP201")]


def test_a_readme_above_the_file_that_links_to_it_is_read_as_the_readme_above_it(tree):
    """Another language's copy of the project's README (``README_zh.md`` beside ``README.md``)
    links to a demo whose folder has its own README: that nearer README speaks for the demo (a
    Space card's A10G), not the project's T4 for another script, whichever copy links to it."""
    files = {
        ".git/HEAD": "",
        "README.md": "# Project\n\nThe quantized demo runs on a free Colab T4.\n",
        "README_zh.md": "# 项目\n\n[演示](demo/app.py)。The quantized demo runs on a free Colab T4.\n",
        "demo/README.md": SPACE_CARD.format(flavor="a10g-large"),
        "demo/app.py": TRAIN,
    }
    assert _run(tree({f"with/{k}": v for k, v in files.items()}), codes=("MP201",)) == []
    # without the nearer README, the project's README (either copy) speaks for it
    del files["demo/README.md"]
    assert _run(tree({f"without/{k}": v for k, v in files.items()}), codes=("MP201",)) == [("without/demo/app.py", "MP201")]


@pytest.mark.parametrize(
    "readme, expected",
    [
        # the README leaves setup and training to a page of its own: that page's requirements speak
        ("# pixels\n\nSee [Getting started](GETTING_STARTED.md) to install and train.\n", []),
        # a README that states its own GPU is nearer than the pages it links to
        ("# pixels\n\nRuns on a Colab T4. See [Getting started](GETTING_STARTED.md).\n", [("train/fit.py", "MP201")]),
        # a page that is not linked says nothing for the README
        ("# pixels\n\nA small image model.\n", [("train/fit.py", "MP201")]),
    ],
    ids=["linked-page", "readme-states-its-own", "not-linked"],
)
def test_a_documentation_page_the_readme_links_to_states_the_target(tree, readme, expected):
    root = tree({
        ".git/HEAD": "",
        "README.md": readme,
        "GETTING_STARTED.md": "## Requirements\n- Python >= 3.9\n- PyTorch >= 2.1\n- A100 GPUs\n",
        "train/fit.py": TRAIN,
    })
    assert _run(root, codes=("MP201",)) == expected


# --- a launcher that runs another launcher ------------------------------------------------------
QLORA_INFER = (
    "import torch\nfrom transformers import AutoModelForCausalLM, BitsAndBytesConfig\n\n"
    'qc = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)\n'
    'net = AutoModelForCausalLM.from_pretrained("m", quantization_config=qc)\n'
)


@pytest.mark.parametrize(
    "request_line, runs, said",
    [
        ("#SBATCH --partition=lovelace", "./run_infer.sh", None),  # Ada: bf16 native
        ("#SBATCH --gres=gpu:v100:2", "bash run_infer.sh", "the code names a GPU without native bf16"),
        ("#SBATCH --partition=lovelace", "./other.sh", "no GPU stated"),  # runs another script
    ],
    ids=["outer-ada", "outer-v100", "outer-runs-another"],
)
def test_the_request_of_a_launcher_that_runs_the_scripts_launcher_holds(tmp_path, request_line, runs, said):
    """`sbatch job.sh` with `#SBATCH --partition=lovelace` runs `./run_infer.sh`, which runs the
    script (review 19d's dpo folder): the outer request states the GPU the script runs on."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "infer.py").write_text(QLORA_INFER)
    (tmp_path / "scripts" / "run_infer.sh").write_text("#!/bin/bash\ncd ..\npython infer.py\n")
    (tmp_path / "scripts" / "job.sh").write_text(f"#!/bin/bash\n#SBATCH --gres=gpu:2\n{request_line}\n{runs}\n")
    found = Engine(config(transformers_version="5.23"), ["MP201"], jobs=1).run_paths([str(tmp_path)]).diagnostics
    if said is None:
        assert found == []
    else:
        (d,) = found
        assert said in d.message


TF32_CONFIG = """
from dataclasses import dataclass
import torch
from transformers import AutoModelForCausalLM, TrainingArguments


@dataclass
class TrainConfig:
    bf16: bool = True
    tf32: bool = {tf32}


def build(config: TrainConfig):
    model = AutoModelForCausalLM.from_pretrained("m", dtype=torch.bfloat16, attn_implementation="flash_attention_2")
    args = TrainingArguments(output_dir="out", bf16=config.bf16, tf32=config.tf32)
    return model, args


model, args = build(TrainConfig())
"""


def test_tf32_a_config_turns_on_makes_the_run_ampere_only(tmp_path):
    """``tf32=config.tf32`` with the field's default True (review 25b): TrainingArguments raises
    below Ampere (``--tf32 requires Ampere or a newer GPU arch``), so the run exists only on sm80
    or newer, as for a literal ``tf32=True``: its bf16 and FlashAttention-2 are native there. With
    the default False nothing is stated."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.py").write_text(TF32_CONFIG.replace("{tf32}", "True"))
    assert _run(tmp_path) == []
    (tmp_path / "train.py").write_text(TF32_CONFIG.replace("{tf32}", "False"))
    assert _run(tmp_path) == [("train.py", "MP201"), ("train.py", "MP202")]


LAUNCHED_CONFIG = """
import torch
from transformers import AutoModelForCausalLM, TrainingArguments
from trl import TrlParser

parser = TrlParser((TrainingArguments,))
(training_args,) = parser.parse_args_and_config()
model = AutoModelForCausalLM.from_pretrained("m", dtype=torch.bfloat16)
"""


@pytest.mark.parametrize("tf32, found", [("true", []), ("false", [("train.py", "MP201")])])
def test_tf32_in_the_configuration_file_a_launch_passes_makes_the_run_ampere_only(tmp_path, tf32, found):
    """The README's launch passes ``--config ./config.yaml`` (TRL's ``TrlParser``), whose
    ``tf32: true`` reaches ``TrainingArguments``: it raises below Ampere, so the run exists only
    on sm80 or newer, as ``--tf32 True`` on the command line says (review 25c)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "README.md").write_text("```\ntorchrun --nproc_per_node=4 ./train.py --config ./config.yaml\n```\n")
    (tmp_path / "config.yaml").write_text(f"output_dir: out\nbf16: true\ntf32: {tf32}\n")
    (tmp_path / "train.py").write_text(LAUNCHED_CONFIG)
    assert _run(tmp_path, codes=("MP201",)) == found


@pytest.mark.parametrize("tf32, found", [("true", []), ("false", [("train.py", "MP201")])])
def test_tf32_in_a_json_configuration_file_passed_first_makes_the_run_ampere_only(tmp_path, tf32, found):
    """``python train.py args.json`` (an ``HfArgumentParser``'s ``parse_json_file``): a launch
    whose only sign of a configuration is the ``.json`` file it passes is read as the ``.yaml``
    one is."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "run.sh").write_text("python train.py args.json\n")
    (tmp_path / "args.json").write_text(f'{{"output_dir": "out", "bf16": true, "tf32": {tf32}}}\n')
    (tmp_path / "train.py").write_text(LAUNCHED_CONFIG)
    assert _run(tmp_path, codes=("MP201",)) == found


# --- a hosted notebook service a README offers: its GPU is the notebooks' --------------------------
HOSTED_README = """\
# p

| Environment | Supported | Notes |
|---|---|---|
| Linux (local) | yes | see [SETUP.md](SETUP.md) |
| Google Colab | yes | a stronger GPU (T4 16GB), suitable for full training |
"""
HOSTED = {
    "pyproject.toml": "[project]\nname = 'p'\n",
    "README.md": HOSTED_README,
    "SETUP.md": "# Setup\n\nTrained locally on an RTX 3070 (8GB).\n",
    "train/train.py": HEAD + BF16_ARGS,
}


def test_a_colab_row_names_the_gpu_of_the_notebooks_not_of_every_script(tree):
    """Review 29a: a README's environment table offers Colab with a T4; the scripts run on the
    local card its linked setup page states. The T4 is the run of the project's notebooks."""
    root = tree({**HOSTED, "notebooks/colab.ipynb": _notebook("print('train here')")})
    assert _run(root) == []


def test_a_colab_row_speaks_for_a_script_a_notebook_runs(tree):
    root = tree({**HOSTED, "notebooks/colab.ipynb": _notebook("!python train/train.py")})
    assert _run(root) == [("train/train.py", "MP201")]


def test_without_a_notebook_a_colab_row_speaks_for_the_project(tree):
    assert _run(tree(HOSTED)) == [("train/train.py", "MP201")]


FLAG = """\
from transformers import TrainingArguments


def train(use_bf16=True):
    return TrainingArguments(output_dir="o", bf16=use_bf16)


train()
"""

LAUNCHED = """\
from transformers import HfArgumentParser, TrainingArguments

(args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
"""


@pytest.mark.parametrize(
    "files, reported",
    [
        # the README tells T4 users which switch turns bf16 off (review 41u's F1)
        ({"train.py": FLAG, "README.md": "If you are finetuning on a T4 instance which does not support bf16, set the `use_bf16` to `False`.\n"}, False),
        ({"train.py": LAUNCHED, "run.sh": "torchrun train.py --bf16 True\n",
          "README.md": "Run `bash run.sh`. If you use V100, please replace `--bf16 True` with `--fp16 True`.\n"}, False),
        # the README names the T4 and another switch: the flag stays the code's own default
        ({"train.py": FLAG, "README.md": "If you are on a T4, set `batch_size` to 2.\n"}, True),
        # a statement, not advice: the README says the code ran on a T4 with that switch
        ({"train.py": FLAG, "README.md": "We trained on a T4 with `use_bf16` left as it is.\n"}, True),
        ({"train.py": FLAG.replace("bf16=use_bf16", "bf16=True"), "README.md": "If you are on a T4, set `use_bf16` to `False`.\n"}, True),
    ],
    ids=["advised-variable", "advised-launch-flag", "another-switch", "statement", "hard-coded"],
)
def test_a_bf16_flag_the_readme_tells_older_gpus_users_to_switch_off(tree, files, reported):
    root = tree({".git/HEAD": "", **files})
    assert bool(_run(root)) is reported


FA2_LOAD = """\
import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("org/lm", torch_dtype=torch.float16, attn_implementation="flash_attention_2").cuda()
"""


@pytest.mark.parametrize("requirements, reported", [("torch\nflash-attn\n", False), ("torch\n", True), ("flash-attn<2\n", True)])
def test_flash_attention_2_in_a_project_that_installs_flash_attn_2(tree, requirements, reported):
    """MP202 where the project's own install takes flash-attn 2: the kernels it installs exist
    for Ampere and newer only, so the project is written for those GPUs."""
    root = tree({".git/HEAD": "", "requirements.txt": requirements, "infer.py": FA2_LOAD})
    assert bool(_run(root, codes=("MP202",))) is reported


def _sections(*cells):
    """A Colab notebook saved on a T4 runtime, of (kind, source) cells."""
    out = [
        {"cell_type": kind, "metadata": {}, "source": text, **({"execution_count": None, "outputs": []} if kind == "code" else {})}
        for kind, text in cells
    ]
    meta = {"accelerator": "GPU", "colab": {"gpuType": "T4"}}
    return json.dumps({"cells": out, "metadata": meta, "nbformat": 4, "nbformat_minor": 5})


BF16_CELL = "import torch\nfrom transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('big', torch_dtype=torch.bfloat16).cuda()\n"


@pytest.mark.parametrize(
    "cells, reported",
    [
        # the markdown right above says the cell needs an A100 (tune 46's F1): the user switches runtimes
        ((("markdown", "## This cell will only work on an A100"), ("code", BF16_CELL)), False),
        ((("markdown", "## Big model (needs an H100 or an A100)"), ("code", "x = 1\n"), ("code", BF16_CELL)), False),
        # what the cells need, beside a T4 example it points to elsewhere
        ((("markdown", "## This next cell will only work on a big GPU like an A100\n\nBut at the bottom is an example that runs on a free T4!"), ("code", BF16_CELL)), False),
        ((("markdown", "Set bf16 to True with an A100."), ("code", BF16_CELL)), True),  # advice
        # the section ends at the next markdown cell
        ((("markdown", "## This cell will only work on an A100"), ("code", "x = 1\n"), ("markdown", "## Back to the demo"), ("code", BF16_CELL)), True),
        # a section that names a T4 too, or none
        ((("markdown", "## Runs on an A100; on a T4 it is slow"), ("code", BF16_CELL)), True),
        ((("markdown", "## Load the model"), ("code", BF16_CELL)), True),
    ],
    ids=["a100-section", "a100-section-two-cells", "needs-a100-t4-elsewhere", "advice", "section-ended", "t4-named-too", "no-gpu-named"],
)
def test_a_notebook_section_whose_markdown_names_a_newer_gpu(cells, reported):
    found = check_source(_sections(*cells), path="nb.ipynb", config=config(transformers_version="5.23"))
    assert any(d.code == "MP201" for d in found) is reported
