"""MP101 and a model halved with one named part made float32 again.

P-tuning v2 (and prefix tuning) halves the whole model, then casts the part that trains back
to float32: ``model = model.half(); model.transformer.prefix_encoder.float()``. The rest is
frozen by the model's own code (ChatGLM freezes every parameter but the prefix encoder when
``pre_seq_len`` is set), and an optimizer over the parameters with ``requires_grad`` holds only
float32 ones: ``GradScaler.unscale_`` sees float32 gradients and nothing fails. Which
parameters stay trainable is decided in code the linter does not see, so a halved model with a
part cast back is not called trainable float16. A part cast back only under a test of its own,
or cast to another name, leaves the model as it was. Each test is a small program of that shape.
"""
from conftest import lint

CODE = "MP101"

PTUNING = """
import torch
from transformers import AutoModel

model = AutoModel.from_pretrained("glm", trust_remote_code=True)
model = model.half()
{after}
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
scaler = torch.cuda.amp.GradScaler()
for batch in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(**batch).loss
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
"""


def test_the_fp16_model_under_loss_scaling_fires():
    assert [f.code for f in lint(PTUNING.replace("{after}", ""), CODE)] == [CODE]


def test_a_part_cast_back_to_float32_is_what_trains():
    assert lint(PTUNING.replace("{after}", "model.transformer.prefix_encoder.float()"), CODE) == []


def test_a_part_moved_to_float32_with_to_is_what_trains_too():
    after = "model.transformer.prefix_encoder.to(torch.float32)"
    assert lint(PTUNING.replace("{after}", after), CODE) == []


def test_a_part_cast_back_only_under_a_test_of_its_own_still_fires():
    after = "if use_prefix:\n    model.transformer.prefix_encoder.float()"
    assert [f.code for f in lint(PTUNING.replace("{after}", after), CODE)] == [CODE]


def test_a_part_cast_for_another_name_still_fires():
    after = "head = model.lm_head.float()"
    assert [f.code for f in lint(PTUNING.replace("{after}", after), CODE)] == [CODE]


def test_a_part_made_bfloat16_still_fires():
    after = "model.transformer.prefix_encoder.to(torch.bfloat16)"
    assert [f.code for f in lint(PTUNING.replace("{after}", after), CODE)] == [CODE]


def test_another_models_part_does_not_count():
    after = "other = AutoModel.from_pretrained('x')\nother.transformer.prefix_encoder.float()"
    assert [f.code for f in lint(PTUNING.replace("{after}", after), CODE)] == [CODE]


def test_a_part_moved_to_its_device_and_float32_is_what_trains_too():
    """``.to(device, dtype=torch.float32)``: beside ``dtype=`` the positional argument is the
    device (review 21's held-out MP101 FP: LoRA layers moved back with the accelerator's
    device first)."""
    after = 'model.transformer.prefix_encoder.to(accelerator.device, dtype=torch.float32)'
    assert lint(PTUNING.replace("{after}", after), CODE) == []
    after = 'model.transformer.prefix_encoder.to(accelerator.device, dtype=torch.float16)'
    assert [f.code for f in lint(PTUNING.replace("{after}", after), CODE)] == [CODE]
