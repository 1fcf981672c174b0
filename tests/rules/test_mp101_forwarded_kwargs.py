"""MP101 through a loader that spreads its own ``**kwargs`` into ``from_pretrained``
(``def build(path, **hf_kwargs): return AutoModel.from_pretrained(path, **hf_kwargs)``): the
dtype the loaded weights get is what each caller passes as ``torch_dtype=`` or ``dtype=``. A
caller that picks float16 under ``--fp16`` and trains the model with a Trainer of the same
arguments raises ``ValueError: Attempting to unscale FP16 gradients.`` at the first optimizer
step (recall 26c: tevatron's ``DenseModel.build(..., **hf_kwargs)``). The fix belongs to the
caller's keyword, never to the spread: the finding offers none at the loader."""
import pytest

from conftest import findings_in, lint, write_tree

LOADER = """
from transformers import AutoModel


def build(path, **hf_kwargs):
    return AutoModel.from_pretrained(path, **hf_kwargs)
"""

CALLER = """
import torch
from transformers import HfArgumentParser, Trainer, TrainingArguments
{imports}
args, = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
if args.bf16:
    torch_dtype = torch.bfloat16
elif args.fp16:
    torch_dtype = torch.float16
else:
    torch_dtype = torch.float32
model = build("bert-base-uncased", {keyword}=torch_dtype)
Trainer(model=model, args=args).train()
"""


@pytest.mark.parametrize("keyword", ["torch_dtype", "dtype"])
def test_a_float16_passed_through_the_loaders_kwargs_is_reported_at_the_loader(keyword):
    found = lint(LOADER + CALLER.format(imports="", keyword=keyword), "MP101")
    assert len(found) == 1
    assert "`**hf_kwargs` loads trainable weights in float16" in found[0].message
    assert found[0].fix is None  # the caller's keyword decides: no edit of the spread


def test_the_loader_in_another_module_is_reported_in_it(tmp_path):
    write_tree(tmp_path, {
        "models.py": LOADER,
        "train.py": CALLER.format(imports="from models import build", keyword="torch_dtype"),
        "requirements.txt": "transformers==4.46.0\n",
    })
    found = [d for d in findings_in(tmp_path) if d.code == "MP101"]
    assert [d.path.rsplit("/", 1)[-1] for d in found] == ["models.py"]


@pytest.mark.parametrize(
    "call",
    [
        'build("bert-base-uncased", torch_dtype=torch.float32)',
        'build("bert-base-uncased")',  # nothing passed: the library's float32
        'build("bert-base-uncased", revision="main")',
    ],
    ids=["float32", "nothing", "other-keyword"],
)
def test_callers_that_pass_no_float16_are_silent(call):
    src = LOADER + CALLER.format(imports="", keyword="torch_dtype").replace(
        'build("bert-base-uncased", torch_dtype=torch_dtype)', call
    )
    assert call in src
    assert lint(src, "MP101") == []
