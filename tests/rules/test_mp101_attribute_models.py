"""MP101 and MP104 follow the object that trains, under any name (issue #24).

DDPO-style fine-tuning of Stable Diffusion reaches the UNet as a part of a pipeline
(``pipe.unet``), through aliases (``unet = pipe.unet``, ``trainable = unet``) and through a
switch that picks what trains (``trainable = make_lora_layers(unet)`` or ``trainable = unet``).
An attribute path of a known object is an object of its own, tracked like a local name; an
alias is the same object; two parts of one pipeline are two objects. Each program is ours.
"""
import pytest
from conftest import lint

HEAD = """
import argparse
import torch
from accelerate import Accelerator
from diffusers import StableDiffusionPipeline


def make_lora_layers(unet):
    return torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(3)])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mixed_precision", default="fp16", choices=["no", "fp16", "bf16"])
    p.add_argument("--lora", action="store_true")
    p.add_argument("--no_lora", action="store_true")
    p.add_argument("--fp16", action="store_true")
    args = p.parse_args()
    accelerator = Accelerator(mixed_precision=args.mixed_precision)
"""
LOOP = """
    trainable, optimizer = accelerator.prepare(trainable, optimizer)
    for batch in range(10):
        loss = trainable(batch).sum()
        accelerator.backward(loss)
        optimizer.step()


if __name__ == "__main__":
    main()
"""


def program(body: str, head: str = HEAD) -> str:
    return head + body + LOOP


def codes(src):
    return sorted((d.code, d.span.line) for d in lint(src) if d.code in ("MP101", "MP104"))


PATH = """
    pipeline = StableDiffusionPipeline.from_pretrained("sd")
    pipeline.unet.to(accelerator.device, dtype=torch.float16)
    optimizer = torch.optim.AdamW(pipeline.unet.parameters(), lr=1e-4)
    trainable = pipeline.unet
"""


def test_an_attribute_path_cast_and_trained_is_reported():
    src = program(PATH)
    assert codes(src) == [("MP101", 21), ("MP104", 22)]
    (d,) = lint(src, "MP101")
    assert "`.to(torch.float16)` makes trainable weights float16" in d.message


def test_a_pipeline_loaded_in_float16_whose_unet_trains_is_reported():
    src = program("""
    pipeline = StableDiffusionPipeline.from_pretrained("sd", torch_dtype=torch.float16)
    optimizer = torch.optim.AdamW(pipeline.unet.parameters(), lr=1e-4)
    trainable = pipeline.unet
""")
    assert codes(src) == [("MP101", 20), ("MP104", 21)]
    (d,) = lint(src, "MP104")
    assert "float16 parameters of `pipeline.unet`" in d.message


def test_a_pipeline_loaded_in_float16_whose_unet_is_frozen_is_not():
    src = program("""
    pipeline = StableDiffusionPipeline.from_pretrained("sd", torch_dtype=torch.float16)
    pipeline.unet.requires_grad_(False)
    trainable = make_lora_layers(pipeline.unet)
    optimizer = torch.optim.AdamW(trainable.parameters(), lr=1e-4)
""")
    assert codes(src) == []


def test_aliases_of_the_unet_are_the_same_object():
    src = program("""
    pipeline = StableDiffusionPipeline.from_pretrained("sd")
    unet = pipeline.unet
    unet.to(accelerator.device, dtype=torch.float16)
    trainable = unet
    optimizer = torch.optim.AdamW(trainable.parameters(), lr=1e-4)
""")
    assert codes(src) == [("MP101", 22), ("MP104", 24)]
    (d,) = lint(src, "MP104")
    assert "float16 parameters of `trainable`" in d.message


def test_another_part_of_the_pipeline_is_another_object():
    """The VAE is cast to float16 beside the trained float32 UNet: nothing is trained in
    float16 (before, `pipe.vae` and `pipe.unet` were both "the pipeline")."""
    src = program("""
    pipeline = StableDiffusionPipeline.from_pretrained("sd")
    pipeline.vae.requires_grad_(False)
    pipeline.vae.to(accelerator.device, dtype=torch.float16)
    pipeline.vae.eval()
    optimizer = torch.optim.AdamW(pipeline.unet.parameters(), lr=1e-4)
    trainable = pipeline.unet
""")
    assert codes(src) == []


SWITCH = """
    use_lora = {use_lora}
    pipeline = StableDiffusionPipeline.from_pretrained("sd")
    pipeline.unet.requires_grad_(not use_lora)
    pipeline.unet.to(accelerator.device, dtype=torch.float16)
    unet = pipeline.unet
    if use_lora:
        trainable = make_lora_layers(unet)
    else:
        trainable = unet
    optimizer = torch.optim.AdamW(trainable.parameters(), lr=1e-4)
"""


def test_a_switch_whose_default_trains_the_float16_unet_is_reported():
    src = program(SWITCH.format(use_lora="args.lora"))
    assert codes(src) == [("MP101", 23), ("MP104", 29)]
    (d,) = lint(src, "MP101")
    assert "unfreezes" not in d.message  # the default run trains it


def test_a_switch_the_user_must_flip_to_train_it_is_reported_under_default_fp16():
    """``use_lora = not args.no_lora``: the UNet trains only with ``--no_lora``; fp16 loss
    scaling is the default, so that one choice of the user's fails (as a cast under a
    condition only the user meets is judged, ``configurations.casts_in``)."""
    src = program(SWITCH.format(use_lora="not args.no_lora"))
    (d,) = lint(src, "MP101")
    assert "in the runs where `pipeline.unet.requires_grad_(not use_lora)` unfreezes them" in d.message


BY_HAND = HEAD.replace(
    "Accelerator(mixed_precision=args.mixed_precision)", 'Accelerator(mixed_precision="fp16" if args.fp16 else "no")'
).replace('p.add_argument("--mixed_precision", default="fp16", choices=["no", "fp16", "bf16"])', 'p.add_argument("--seed", type=int)')


def test_a_switch_the_user_must_flip_with_fp16_also_by_hand_is_silent():
    src = program(SWITCH.format(use_lora="not args.no_lora"), BY_HAND)
    assert lint(src, "MP101") == []


RUN_DTYPE = """
    pipeline = StableDiffusionPipeline.from_pretrained("sd")
    inference_dtype = torch.float32
    if accelerator.mixed_precision == "fp16":
        inference_dtype = torch.float16
    elif accelerator.mixed_precision == "bf16":
        inference_dtype = torch.bfloat16
    pipeline.unet.to(accelerator.device, dtype=inference_dtype)
    optimizer = torch.optim.AdamW(pipeline.unet.parameters(), lr=1e-4)
    trainable = pipeline.unet
"""


def test_a_dtype_chosen_by_the_runs_precision_is_float16_under_fp16():
    assert codes(program(RUN_DTYPE)) == [("MP101", 26), ("MP104", 27)]


@pytest.mark.parametrize("accelerator", ['Accelerator(mixed_precision="no")', 'Accelerator(mixed_precision="bf16")'])
def test_a_dtype_chosen_by_a_precision_that_is_never_fp16_is_not(accelerator):
    src = program(RUN_DTYPE).replace("Accelerator(mixed_precision=args.mixed_precision)", accelerator)
    assert codes(src) == []


def test_fp16_chosen_by_hand_for_both_the_dtype_and_the_scaling_is_silent():
    """fp16 only with the user's own ``--fp16``: float16 weights and fp16 loss scaling both
    come by hand (MP101's choices by hand, as for ``GradScaler(enabled=args.amp)``)."""
    assert lint(program(RUN_DTYPE, BY_HAND), "MP101") == []


def test_a_choice_among_an_options_choices_is_no_opt_in():
    """``--mixed_precision`` defaults to "no" but lists "fp16" among its ``choices=``: as a
    ``--dtype float16`` choice is (test_fix_hygiene's ``mp101-dtype-choice-kept-without-fp16``),
    a listed choice is a run the script offers, and it fails."""
    src = program(RUN_DTYPE, HEAD.replace('default="fp16"', 'default="no"'))
    assert [c for c, _ in codes(src)] == ["MP101", "MP104"]


def test_ddpo_shape_the_unet_cast_only_when_it_is_frozen_is_silent():
    """The unet is frozen exactly when LoRA trains (``requires_grad_(not use_lora)``) and only
    then cast; LoRA layers made after the cast train in float32."""
    src = program("""
    use_lora = not args.no_lora
    pipeline = StableDiffusionPipeline.from_pretrained("sd")
    pipeline.vae.requires_grad_(False)
    pipeline.unet.requires_grad_(not use_lora)
    pipeline.vae.to(accelerator.device, dtype=torch.float16)
    if use_lora:
        pipeline.unet.to(accelerator.device, dtype=torch.float16)
    if use_lora:
        trainable = make_lora_layers(pipeline.unet)
    else:
        trainable = pipeline.unet
    optimizer = torch.optim.AdamW(trainable.parameters(), lr=1e-4)
""")
    assert codes(src) == []


def test_an_optimizer_class_held_in_a_variable_trains_the_pipelines_unet():
    src = program("""
    pipeline = StableDiffusionPipeline.from_pretrained("sd", torch_dtype=torch.float16)
    if args.lora:
        import bitsandbytes as bnb
        optimizer_cls = bnb.optim.AdamW8bit
    else:
        optimizer_cls = torch.optim.AdamW
    optimizer = optimizer_cls(pipeline.unet.parameters(), lr=1e-4)
    trainable = pipeline.unet
""")
    assert [c for c, _ in codes(src)] == ["MP101", "MP104"]


def test_an_inference_script_is_silent():
    src = """
    import torch
    from diffusers import StableDiffusionPipeline


    def main():
        pipeline = StableDiffusionPipeline.from_pretrained("sd", torch_dtype=torch.float16)
        pipeline.unet.to("cuda", dtype=torch.float16)
        unet = pipeline.unet
        with torch.no_grad():
            images = pipeline("a dog").images
        images[0].save("a.png")


    if __name__ == "__main__":
        main()
    """
    assert codes(src) == []


def test_a_local_unet_under_a_precision_that_is_never_fp16_is_not_float16():
    """The same ``inference_dtype`` for a UNet of its own: ``Accelerator(mixed_precision="no")``
    never takes the fp16 branch (MP104 reported float16 parameters there before)."""
    src = program(RUN_DTYPE.replace(
        'pipeline = StableDiffusionPipeline.from_pretrained("sd")',
        'unet = UNet2DConditionModel.from_pretrained("sd", subfolder="unet")',
    ).replace("pipeline.unet", "unet"), HEAD.replace("import StableDiffusionPipeline", "import UNet2DConditionModel"))
    assert "unet.to(accelerator.device, dtype=inference_dtype)" in src
    assert [c for c, _ in codes(src)] == ["MP101", "MP104"]
    assert codes(src.replace("Accelerator(mixed_precision=args.mixed_precision)", 'Accelerator(mixed_precision="no")')) == []


ADAPTERS = """
    pipeline = StableDiffusionPipeline.from_pretrained("sd", torch_dtype=torch.float16)
    unet = pipeline.unet
    unet.requires_grad_(False)
    unet.add_adapter(LoraConfig(r=4, target_modules=["to_q", "to_v"]))
    {upcast}
    optimizer = torch.optim.AdamW(filter(lambda p: p.requires_grad, pipeline.unet.parameters()), lr=1e-4)
    trainable = unet
"""
ADAPTERS_HEAD = HEAD.replace(
    "from diffusers import StableDiffusionPipeline",
    "from diffusers import StableDiffusionPipeline\nfrom diffusers.training_utils import cast_training_params\nfrom peft import LoraConfig",
)


def test_adapters_injected_through_an_alias_of_the_float16_unet_are_reported():
    src = program(ADAPTERS.format(upcast="pass"), ADAPTERS_HEAD)
    (d,) = lint(src, "MP101")
    assert "the adapters that `unet.add_adapter(...)`" in d.message


def test_adapters_upcast_through_an_alias_are_not():
    """The freeze, the injection and the upcast name `unet`, the optimizer `pipeline.unet`:
    one object, whose trainable parameters are float32."""
    src = program(ADAPTERS.format(upcast="cast_training_params(unet, dtype=torch.float32)"), ADAPTERS_HEAD)
    assert codes(src) == []
