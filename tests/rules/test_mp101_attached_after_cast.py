"""MP101: a frozen model cast to float16, whose only trained parameters belong to modules made
and attached after the cast (``attn.to_q.set_lora_layer(LoRALinearLayer(...))``), trains float32
parameters: nothing it unscales is float16 (review 26d: diffusers' DreamBooth-LoRA scripts in
HyperDreamBooth, ziplora, Anti-DreamBooth: 7 findings). A LoRA layer made in float16, or attached
before the cast, is the float16 case."""
import pytest

from conftest import lint

DREAMBOOTH = """
import torch
from accelerate import Accelerator
from diffusers import UNet2DConditionModel
from diffusers.models.lora import LoRALinearLayer

accelerator = Accelerator(mixed_precision="fp16")
unet = UNet2DConditionModel.from_pretrained("sd", subfolder="unet")
unet.requires_grad_(False)
{before}unet.to(accelerator.device, dtype=torch.float16)
lora_params = []
for name, _ in unet.attn_processors.items():
    attn = unet
    for n in name.split(".")[:-1]:
        attn = getattr(attn, n)
    {after}
    lora_params.extend(attn.to_q.lora_layer.parameters())
optimizer = torch.optim.AdamW(lora_params, lr=1e-4)
unet, optimizer = accelerator.prepare(unet, optimizer)
unet.train()
"""
SET = "attn.to_q.set_lora_layer(LoRALinearLayer(attn.to_q.in_features, attn.to_q.out_features, rank=4{dtype}))"


@pytest.mark.parametrize(
    "before, after, found",
    [
        ("", SET.format(dtype=""), 0),
        ("", SET.format(dtype=", dtype=torch.float16"), 1),  # made float16
        ("", "attn.to_q.lora_layer = LoRALinearLayer(4, 4, rank=4)", 0),
        ("", "pass", 1),  # nothing attached: the cast UNet's own parameters
    ],
    ids=["set-after", "set-after-float16", "assigned-after", "none"],
)
def test_modules_attached_after_the_cast_train_in_float32(before, after, found):
    assert len(lint(DREAMBOOTH.format(before=before, after=after), "MP101")) == found
