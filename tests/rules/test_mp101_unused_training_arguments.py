"""MP101: training arguments that nothing takes scale no loss. ``fp16=True`` (or ``--fp16``)
turns on the GradScaler of the Trainer or Accelerator the arguments are given to; an object the
code only reads (``training_args.local_rank``) builds none, so float16 weights stepped by a
plain optimizer raise nothing (review 27e: a LightSeq script parses ``TrainingArguments`` for its
local rank). Handing the object on in any way (to a Trainer, a function, a container) keeps it."""
import pytest

from conftest import lint

SRC = """
import torch
import transformers
from transformers import HfArgumentParser, Trainer, TrainingArguments

{arguments}
model = transformers.AutoModelForCausalLM.from_config(transformers.AutoConfig.from_pretrained("gpt2"))
model = model.to(device="cuda", dtype=torch.float16)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, eps=1e-4)
torch.cuda.set_device(training_args.local_rank)
{use}
"""
PARSED = "(training_args,) = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()"
BUILT = 'training_args = TrainingArguments(output_dir="o", fp16=True)'


@pytest.mark.parametrize("arguments", [PARSED, BUILT], ids=["parsed", "built"])
@pytest.mark.parametrize(
    "use, found",
    [
        ("print(training_args.output_dir)", 0),
        ("Trainer(model=model, args=training_args).train()", 1),
        ("run(model, training_args)", 1),  # a function of the project's may build the Trainer
        ("config = {'args': training_args}", 1),
    ],
    ids=["only-read", "trainer", "handed-to-a-function", "in-a-container"],
)
def test_training_arguments_scale_the_loss_only_where_something_takes_them(arguments, use, found):
    assert len(lint(SRC.format(arguments=arguments, use=use), "MP101")) == found
