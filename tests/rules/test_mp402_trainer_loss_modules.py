"""MP402 and the loss modules a Trainer subclass builds (held-out 36u's F2).

From transformers 4.35 the Trainer leaves fp16 autocast to accelerate, which runs only the
prepared model's ``forward`` under it and converts the outputs to float32: a loss module a
``Trainer`` subclass builds and applies in ``compute_loss`` meets float32 logits outside autocast,
so a clamp at ``1e-8`` there holds. Up to 4.34 the Trainer entered ``torch.cuda.amp.autocast``
around ``compute_loss`` itself, and the same module is reported."""
import pytest
from conftest import findings_in, write_tree

LOSS = '''import torch
from torch import nn
from transformers import Trainer, TrainingArguments

class ClampedBCE(nn.Module):
    def __init__(self, eps=1e-8):
        super().__init__()
        self.eps = eps

    def forward(self, logits, y):
        p = torch.sigmoid(logits)
        return -(y * torch.log(p.clamp(min=self.eps))).mean()

class LossTrainer(Trainer):
{body}
trainer = LossTrainer(model=model, args=TrainingArguments("out", fp16=True), train_dataset=ds)
trainer.train()
'''
IN_COMPUTE_LOSS = '''    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        out = model(**inputs)
        return ClampedBCE()(out.logits, labels)
'''
IN_INIT = '''    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.loss_fct = ClampedBCE()

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        return self.loss_fct(model(**inputs).logits, labels)
'''


def _check(tmp_path, body, pin="transformers==4.56.0"):
    write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": pin + "\n", "train.py": LOSS.format(body=body)})
    return [d.span.line for d in findings_in(tmp_path, ["MP402"])]


@pytest.mark.parametrize("body", [IN_COMPUTE_LOSS, IN_INIT], ids=["compute_loss", "__init__"])
def test_a_loss_module_a_trainer_builds_meets_float32_outputs(tmp_path, body):
    assert _check(tmp_path, body) == []


@pytest.mark.parametrize("body", [IN_COMPUTE_LOSS, IN_INIT], ids=["compute_loss", "__init__"])
def test_up_to_4_34_the_trainer_ran_compute_loss_under_autocast(tmp_path, body):
    assert _check(tmp_path, body, pin="transformers==4.34.0") == [12]


def test_a_loss_module_the_model_builds_runs_in_its_forward(tmp_path):
    """Built by the model (its forward applies it under autocast): still reported."""
    src = LOSS.format(body=IN_COMPUTE_LOSS).replace(
        "class LossTrainer(Trainer):",
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.loss = ClampedBCE()\n\n"
        "model = Net()\n\nclass LossTrainer(Trainer):",
    )
    write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers==4.56.0\n", "train.py": src})
    assert [d.span.line for d in findings_in(tmp_path, ["MP402"])] == [12]


def test_a_test_of_another_run_that_builds_the_loss_does_not_count(tmp_path):
    write_tree(tmp_path, {
        ".git/HEAD": "", "requirements.txt": "transformers==4.56.0\n",
        "train.py": LOSS.format(body=IN_INIT).replace("trainer = ", "if __name__ == '__main__':\n    trainer = ").replace("trainer.train()", "    trainer.train()"),
        "tests/test_loss.py": "import torch\nfrom train import ClampedBCE\n\ndef test_loss():\n    ClampedBCE()(torch.zeros(2), torch.ones(2))\n",
    })
    assert [d.path for d in findings_in(tmp_path, ["MP402"])] == []
