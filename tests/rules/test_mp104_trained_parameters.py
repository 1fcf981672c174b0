"""MP104 judges the optimizer's own parameters: float16 parameters it updates, not a frozen
model's, not a PEFT base whose trainable parameters are float32 adapters, not a model loaded
after the optimizer was built."""
import pytest

from conftest import lint

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
