"""MP101: ``torch_dtype or torch.float16`` of a parameter whose default is None loads float16
weights wherever a caller leaves the parameter out (review 25e: AnglE's embedder, trained with
``TrainingArguments(fp16=True)``, raises ``ValueError: Attempting to unscale FP16 gradients.``);
where every call passes a dtype, the float16 is no run's. The fix replaces the float16 written
inside, keeping what a caller passes."""
from conftest import fix, lint

EMBEDDER = """
import torch
from transformers import AutoModel, Trainer, TrainingArguments


class Embedder:
    def __init__(self, name, torch_dtype=None):
        self.backbone = AutoModel.from_pretrained(name, torch_dtype=torch_dtype or torch.float16)

    def fit(self, ds):
        args = TrainingArguments(output_dir="o", fp16=True)
        Trainer(model=self.backbone, args=args, train_dataset=ds).train()


Embedder({call}).fit(None)
"""


def test_the_float16_a_call_that_leaves_the_parameter_out_gets_is_reported():
    (d,) = lint(EMBEDDER.format(call='"gpt2"'), "MP101")
    assert "`torch_dtype or torch.float16` loads trainable weights in float16" in d.message


def test_no_run_gets_the_float16_where_every_call_passes_a_dtype():
    assert lint(EMBEDDER.format(call='"gpt2", torch_dtype=torch.float32'), "MP101") == []


def test_the_fix_keeps_what_a_caller_passes():
    fixed = fix(EMBEDDER.format(call='"gpt2"'), "MP101")
    assert "torch_dtype=torch_dtype or torch.float32)" in fixed
