"""A two-file project for the tests of unsaved text (the language server, ``--stdin-filename``,
``Engine.run_buffers``): ``train.py`` loads fp16 weights and passes the removed ``tokenizer=``
(MP301), and the fp16 loss scaling that makes the weights fail (MP101) is switched on in
``helpers.py``, so the MP101 is found only when both files are seen together."""

PYPROJECT = '[tool.precision-lint]\ntransformers-version = "5.23"\n'
HELPERS = """
from transformers import TrainingArguments


def make_args(out):
    return TrainingArguments(out, fp16=True)
"""
TRAIN = """
import torch
from transformers import AutoModelForCausalLM, Trainer

from helpers import make_args

model = AutoModelForCausalLM.from_pretrained("gpt2", dtype=torch.float16)
trainer = Trainer(model=model, args=make_args("out"), tokenizer=tok)
trainer.train()
"""
FIXED = TRAIN.replace("torch.float16", "torch.float32").replace("tokenizer=tok", "processing_class=tok")
