"""MP201: the GPU architectures a project's container builds for are the run's hardware.
``TORCH_CUDA_ARCH_LIST=8.9`` in its ``Dockerfile`` or compose file builds kernels for sm89
alone, which run on no other GPU: the run is on an Ada card, where bf16 is native (review 21d's
FP: a bf16 fine-tune in a project whose Dockerfile and compose file set 8.9)."""
import pytest
from conftest import config, write_tree

from precision_lint.engine import Engine
from precision_lint.workspace.shipped import cuda_arch_list

TRAIN = """\
import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("some/lm", torch_dtype=torch.bfloat16)
"""


def messages(tmp_path, files):
    root = write_tree(tmp_path / "p", {".git/HEAD": "", "requirements.txt": "torch==2.5.1\n", "src/train.py": TRAIN, **files})
    return [d.message for d in Engine(config(), ["MP201"], jobs=1).run_paths([str(root)]).diagnostics]


@pytest.mark.parametrize("files", [
    {"Dockerfile": "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\nENV TORCH_CUDA_ARCH_LIST=8.9\n"},
    {"docker-compose.yml": "services:\n  trainer:\n    environment:\n      - TORCH_CUDA_ARCH_LIST=8.0;9.0+PTX\n"},
    {"src/Dockerfile.gpu": 'ENV TORCH_CUDA_ARCH_LIST="8.6"\n'},
], ids=["dockerfile", "compose", "suffixed-beside-the-code"])
def test_a_container_built_for_ampere_or_newer_states_the_gpu(tmp_path, files):
    assert messages(tmp_path, files) == []


def test_a_list_with_a_pre_ampere_arch_names_that_gpu(tmp_path):
    (message,) = messages(tmp_path, {"Dockerfile": "ENV TORCH_CUDA_ARCH_LIST=7.5;8.0\n"})
    assert "the code names a GPU without native bf16" in message


def test_no_container_leaves_the_default_targets(tmp_path):
    (message,) = messages(tmp_path, {"Dockerfile": "FROM python:3.11\nRUN pip install torch\n"})
    assert "no GPU stated" in message


def test_cuda_arch_list():
    assert cuda_arch_list("ENV TORCH_CUDA_ARCH_LIST=8.0;8.6+PTX") == [80, 86]
    assert cuda_arch_list('TORCH_CUDA_ARCH_LIST: "7.0 7.5 8.0"') == [70, 75, 80]
    assert cuda_arch_list("ENV TORCH_CUDA_ARCH_LIST=$ARCHS") == [] and cuda_arch_list("nothing") == []
