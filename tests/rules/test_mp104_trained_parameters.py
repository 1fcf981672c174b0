"""MP104 judges the optimizer's own parameters: float16 parameters it updates, not a frozen
model's, not a PEFT base whose trainable parameters are float32 adapters, not a model loaded
after the optimizer was built."""
import pytest

from conftest import findings_in, lint

CODE = "MP104"
HEAD = "import torch\nfrom transformers import AutoModelForCausalLM\nfrom peft import get_peft_model\n"


def test_float16_parameters_in_adam_are_reported():
    src = HEAD + (
        "model = AutoModelForCausalLM.from_pretrained('m', torch_dtype=torch.float16)\n"
        "opt = torch.optim.AdamW(model.parameters(), lr=1e-4)\n"
    )
    (d,) = lint(src, CODE)
    assert "`model`" in d.message


@pytest.mark.parametrize(
    "src",
    [
        # a PEFT model: the trainable parameters are float32 adapters
        "model = AutoModelForCausalLM.from_pretrained('m', torch_dtype=torch.float16)\n"
        "model = get_peft_model(model, cfg)\n"
        "opt = torch.optim.AdamW(model.parameters(), lr=1e-4)\n",
        # frozen: no gradients, Adam never updates it
        "model = AutoModelForCausalLM.from_pretrained('m', torch_dtype=torch.float16)\n"
        "model.requires_grad_(False)\n"
        "opt = torch.optim.AdamW(model.parameters(), lr=1e-4)\n",
        # loaded after the optimizer was built (for a merge): a new model
        "def main():\n"
        "    model = AutoModelForCausalLM.from_pretrained('m')\n"
        "    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)\n"
        "    train(model, opt)\n"
        "    model = AutoModelForCausalLM.from_pretrained('out', torch_dtype=torch.float16)\n"
        "    model.save_pretrained('merged')\n",
    ],
)
def test_parameters_adam_does_not_update_in_float16(src):
    assert lint(HEAD + src, CODE) == []


SELECTED = (
    "from transformers import Blip2ForConditionalGeneration\n"
    "model = Blip2ForConditionalGeneration.from_pretrained('m', torch_dtype=torch.float16)\n"
    "model.language_model = get_peft_model(model.language_model, cfg)\n"
    "for n, p in model.named_parameters():\n"
    "    p.requires_grad = {test}\n"
    "opt = torch.optim.AdamW(filter(lambda p: p.requires_grad, model.parameters()), lr=1e-4)\n"
)


@pytest.mark.parametrize(
    "test, reported",
    [
        ('("lora_A" in n or "lora_B" in n)', False),  # review 27a: only the adapters train
        ('n.startswith("base_model.model.lora")', False),
        ('any(k in n for k in ("lora_A", "lora_B"))', False),
        ('("q_proj" in n)', True),  # the model's own float16 layers train
        ('("lora_A" not in n)', True),  # everything but the adapters: the float16 base trains
        ('not n.startswith("lora")', True),
    ],
)
def test_a_requires_grad_test_of_the_parameters_name_selects_those_it_names(test, reported):
    """``p.requires_grad = (<a test of the name>)`` over ``named_parameters()`` freezes every
    parameter but those the test names, as the same loop written with ``if``/``else`` (the
    language model wrapped in adapters, the vision tower still float16 in ``model``)."""
    assert bool(lint(HEAD + SELECTED.format(test=test), CODE)) == reported


@pytest.mark.parametrize(
    "body, reported",
    [
        ('if "lora_A" not in n and "lora_B" not in n:\n        p.requires_grad = False', False),
        ('if not n.startswith("base_model.model.lora"):\n        p.requires_grad_(False)', False),
        ('if "lora" in n:\n        p.requires_grad = True\n    else:\n        p.requires_grad = False', False),
        ("p.requires_grad = False", False),  # everything frozen
        # review 29a: a freeze of the parameters a test picks leaves the others training
        ('if "layernorm" in n or ".bias" in n:\n        p.requires_grad_(False)', True),
        ('if "lora" in n:\n        p.requires_grad = False', True),
    ],
)
def test_a_freeze_under_a_name_test_freezes_what_the_test_picks(body, reported):
    """The same loop written with ``if``: a freeze of all but the adapters leaves only them
    training (float32, made by the wrap); a freeze of the parameters a test picks leaves the
    rest of the float16 model trainable, handed to AdamW by ``filter(requires_grad)``."""
    src = HEAD + SELECTED.replace("p.requires_grad = {test}", body)
    assert bool(lint(src, CODE)) == reported


LORA_STEP = """\
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("lm", torch_dtype=torch.float16)
model = get_peft_model(model, LoraConfig(r=8, target_modules=["q_proj"]))
opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
"""


@pytest.mark.parametrize("pin, reported", [("peft~=0.11.1", True), ("peft==0.7.0", True), ("peft>=0.12", False), ("peft==0.6.2", False), (None, False)])
def test_adapters_peft_makes_in_the_bases_float16_are_stepped_in_float16(tmp_path, pin, reported):
    """peft 0.7 to 0.11 make LoRA adapters in the base layer's dtype (``[adapter_dtype]``): on a
    float16 model AdamW steps float16 adapters, where eps=1e-8 is 0 (lora_B starts at zero, so
    lora_A's first gradient is 0: 0/0, NaN at the first step). 0.6 and 0.12 on make them
    float32; an unpinned project targets the installed peft."""
    from conftest import write_tree

    files = {".git/HEAD": "", "train.py": LORA_STEP}
    if pin is not None:
        files["requirements.txt"] = f"{pin}\n"
    root = write_tree(tmp_path, files)
    found = findings_in(root, [CODE])
    assert bool(found) == reported
    if reported:
        (d,) = found
        assert "float16 LoRA adapters that `get_peft_model(...)` (line 6) adds to `model`" in d.message
        assert f"{pin} (requirements.txt) makes LoRA adapters in the base's float16 dtype" in d.message
