"""MP201: the GPU a Modal function requests is the run's stated hardware, as a SLURM
``--gres=gpu:a100`` is: for the code in the function's module and its imports, and for the
scripts the module's code launches (``subprocess.run([sys.executable, "kd/fit.py"])`` inside
``@app.function(gpu="H100:8")``). Review 21's FP (distillKitPlus): bf16 QLoRA reported as
pre-Ampere where the only launcher asks Modal for eight H100s."""
import textwrap

import pytest
from conftest import config, write_tree

from precision_lint.engine import Engine
from precision_lint.workspace.hardware import requested_capability

FIT = """\
import torch
from transformers import AutoModelForCausalLM, BitsAndBytesConfig

quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)
model = AutoModelForCausalLM.from_pretrained("some/lm", quantization_config=quant, torch_dtype=torch.bfloat16)
"""


def launcher(gpu: str, script: str = "kd/fit.py") -> str:
    return textwrap.dedent(f"""\
        import subprocess
        import sys

        import modal

        app = modal.App("fit")


        @app.function(gpu={gpu}, timeout=3600)
        def fit_remote(cfg: str):
            subprocess.run([sys.executable, "{script}", "--cfg", cfg], check=True)
        """)


def findings(tmp_path, files):
    root = write_tree(tmp_path / "p", {".git/HEAD": "", "requirements.txt": "torch==2.5.1\ntransformers==4.49.0\n", **files})
    found = Engine(config(), ["MP201"], jobs=1).run_paths([str(root)]).diagnostics
    return [(d.path.replace(str(root), "").lstrip("/"), d.message) for d in found]


@pytest.mark.parametrize("gpu", ['"H100:8"', '"a100-80gb"', '["h100", "a100-80gb"]', 'modal.gpu.A100(size="80GB")'])
def test_a_modal_function_requesting_ampere_states_the_launched_scripts_gpu(tmp_path, gpu):
    assert findings(tmp_path, {"kd/fit.py": FIT, "cloud/run.py": launcher(gpu)}) == []


def test_a_pre_ampere_request_is_the_gpu_the_message_names(tmp_path):
    found = findings(tmp_path, {"kd/fit.py": FIT, "cloud/run.py": launcher('"T4"')})
    assert [p for p, _ in found] == ["kd/fit.py", "kd/fit.py"]
    assert all("T4" in m and "no GPU stated" not in m for _, m in found)


@pytest.mark.parametrize("files", [
    {"cloud/run.py": launcher('"any"')},  # any GPU: nothing stated
    {"cloud/run.py": launcher('"H100"', script="kd/other.py"), "kd/other.py": "print('x')\n"},  # another script
    {"cloud/run.py": launcher("GPU")},  # a value not known
], ids=["any", "another-script", "unknown"])
def test_no_request_for_this_script_leaves_the_default_targets(tmp_path, files):
    found = findings(tmp_path, {"kd/fit.py": FIT, **files})
    assert len(found) == 2 and all("no GPU stated" in m for _, m in found)


def test_the_functions_own_code_and_its_imports(tmp_path):
    remote = "import modal\n\nfrom kd.fit import model\n\napp = modal.App('x')\n\n\n@app.function(gpu='L40S')\ndef go():\n    model.train()\n"
    assert findings(tmp_path, {"kd/__init__.py": "", "kd/fit.py": FIT, "remote.py": remote}) == []


def test_requested_capability():
    assert requested_capability("H100:8") == 90
    assert requested_capability("a100-80gb") == requested_capability("A100-40GB") == 80
    assert requested_capability("H100!") == 90 and requested_capability("L40S") == 89
    assert requested_capability("T4") == 75
    assert requested_capability("any") is None and requested_capability("tpu-v5") is None


SPACE_APP = """\
import spaces
import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("some/lm", torch_dtype=torch.bfloat16).to("cuda")


{decorator}
def generate(prompt):
    return model.generate(prompt)
"""


@pytest.mark.parametrize(
    "decorator, reported",
    [
        ("@spaces.GPU", False),
        ("@spaces.GPU(duration=120)", False),
        ("", True),  # `import spaces` alone states nothing: a plain GPU Space or a local run
        ("@torch.no_grad()", True),
    ],
)
def test_a_zero_gpu_space_runs_on_the_gpu_zero_gpu_lends(tmp_path, decorator, reported):
    """A function under ``@spaces.GPU`` runs only on a ZeroGPU Space's GPU (an A100, an H200
    slice since 2025): bf16 is native there, as where a SLURM request names an A100."""
    found = findings(tmp_path, {"app.py": SPACE_APP.format(decorator=decorator)})
    assert bool(found) is reported


def test_a_function_wrapped_by_spaces_gpu_is_a_zero_gpu_spaces(tmp_path):
    app = SPACE_APP.format(decorator="") + "\ngenerate = spaces.GPU(generate)\n"
    assert findings(tmp_path, {"app.py": app}) == []
