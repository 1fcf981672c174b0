"""A value chosen in the branch where the run is on no CUDA GPU (the false branch of
``torch.cuda.is_available()`` or ``device == "cuda"``, the true branch of their negation) is a
branch for another device (``Guard.other_device``): MP201 says nothing of bf16 chosen there
(held-out review 26: local-LORA-train-llm-script loads float16 on CUDA, bf16 on its CPU
fallback)."""
import pytest

from conftest import lint


@pytest.mark.parametrize(
    "choice, found",
    [
        ("torch.float16 if torch.cuda.is_available() else torch.bfloat16", 0),
        ("torch.bfloat16 if not torch.cuda.is_available() else torch.float16", 0),
        ('torch.float16 if device == "cuda" else torch.bfloat16', 0),
        ('torch.bfloat16 if device != "cuda" else torch.float16', 0),
        ('torch.float16 if on_gpu else torch.bfloat16', 0),  # a variable bound to the CUDA test
        ("torch.bfloat16 if torch.cuda.is_available() else torch.float32", 1),  # bf16 on every GPU
        ('torch.float16 if device == "cuda" and small else torch.bfloat16', 1),  # a GPU where `small` fails
    ],
)
def test_bf16_chosen_only_off_the_gpu_is_no_finding(choice, found):
    src = (
        "import torch\nfrom transformers import AutoModelForCausalLM\n"
        "device = \"cuda\" if torch.cuda.is_available() else \"cpu\"\n"
        "on_gpu = torch.cuda.is_available()\n"
        f"dtype = {choice}\n"
        "model = AutoModelForCausalLM.from_pretrained(\"m\", dtype=dtype).to(device)\n"
        "print(model.generate(torch.ones(1, 2, dtype=torch.long)))\n"
    )
    assert len(lint(src, "MP201")) == found


def test_a_variable_that_reads_itself_ends():
    """``flag = flag`` of a parameter, read in a nested function: the question ends there, never
    in a RecursionError (champ's attention module, once the CUDA test followed variables)."""
    src = (
        "import torch\nfrom transformers import AutoModelForCausalLM\n"
        "def make(flag, name):\n    flag = flag\n    def inner():\n"
        "        dtype = torch.float16 if flag else torch.bfloat16\n"
        "        return AutoModelForCausalLM.from_pretrained(name, dtype=dtype).generate(y)\n    return inner\n"
    )
    assert [d.code for d in lint(src) if d.code == "MP003"] == []
