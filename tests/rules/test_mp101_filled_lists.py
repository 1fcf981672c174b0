"""MP101 on parameters gathered into a list by a loop (review 24c): ``params.append(p)`` for
``p`` of ``unet.named_parameters()``, then ``unet`` cast to float16 and ``AdamW(params)`` under
fp16 loss scaling: the gathered parameters are the cast ones, and their float16 gradients are
refused (``ValueError: Attempting to unscale FP16 gradients.``)."""
from conftest import lint

SRC = """
import torch
from accelerate import Accelerator
from diffusers import UNet2DConditionModel
from transformers import CLIPTextModel

accelerator = Accelerator(mixed_precision="fp16")
unet = UNet2DConditionModel.from_pretrained("org/sd", subfolder="unet")
text_encoder = CLIPTextModel.from_pretrained("org/sd", subfolder="text_encoder")
params = []
for name, param in {gathered}.named_parameters():
    param.requires_grad = "attn1" in name
    if param.requires_grad:
        params.{add}
unet = unet.to(accelerator.device, dtype=torch.float16)
optimizer = torch.optim.AdamW(params, lr=1e-5)
unet, text_encoder, optimizer = accelerator.prepare(unet, text_encoder, optimizer)
"""


def test_parameters_appended_from_the_cast_model_are_trained_in_float16():
    (d,) = lint(SRC.format(gathered="unet", add="append(param)"), "MP101")
    assert d.span.line == 14  # the cast


def test_parameters_extended_from_the_cast_model_are_trained_in_float16():
    assert len(lint(SRC.format(gathered="unet", add="extend([param])"), "MP101")) == 1


def test_parameters_of_another_model_gathered_are_not_the_cast_ones():
    assert lint(SRC.format(gathered="text_encoder", add="append(param)"), "MP101") == []
