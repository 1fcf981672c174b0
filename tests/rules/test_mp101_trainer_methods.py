"""MP101: a trainer that makes its model in a method of its own (``self.model =
self._create_model()``) and hands the optimizer what another method returns (``def
trainable(self): return self.model.parameters()``; ``AdamW(self.trainable())``). The model class
lives in another module of the project, and ``_create_model`` builds it in one statement and
casts it in another (``model = MyNet(); model.to(torch.float16); return model``): the name is
followed to the constructor that binds it (a project class derived from ``torch.nn.Module``,
which the join decides), so the cast is a model's. With a GradScaler or ``Accelerator(
mixed_precision="fp16")`` in the same run, the first step raises ``ValueError: Attempting to
unscale FP16 gradients.``."""
import pytest

from conftest import findings_in, write_tree

NET = """
import torch
from torch import nn


class MyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return self.fc(x)
"""

NOT_A_MODULE = """
class MyNet:
    def __init__(self):
        self.weights = [0.0] * 8

    def to(self, dtype):
        return self
"""

TRAINER = """
import torch
from accelerate import Accelerator

from net import MyNet


class Trainer:
    def __init__(self):
        self.accelerator = Accelerator(mixed_precision="{precision}")
        self.model = self._create_model()
        self.opt = {optimizer}
        self.model, self.opt = self.accelerator.prepare(self.model, self.opt)

    def _create_model(self):
        model = MyNet()
        {cast}
        return model

    def _create_optimizer(self):
        return torch.optim.AdamW(self.trainable(), lr=1e-4)

    def trainable(self):
        return self.model.parameters()

    def train(self, loader):
        for x in loader:
            loss = self.model(x).mean()
            self.accelerator.backward(loss)
            self.opt.step()
"""

MAIN = """
from trainer import Trainer

if __name__ == "__main__":
    Trainer().train([])
"""

SCALER = """
import torch

from net import MyNet


class Trainer:
    def __init__(self):
        self.model = self._create_model()
        self.scaler = torch.cuda.amp.GradScaler({scaler})
        self.opt = torch.optim.AdamW(self.trainable(), lr=1e-4)

    def _create_model(self):
        model = MyNet().cuda()
        {cast}
        return model

    def trainable(self):
        return self.model.parameters()

    def train(self, loader):
        for x in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(x).mean()
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()
"""


def mp101(tmp_path, trainer, net=NET):
    root = write_tree(tmp_path, {"net.py": net, "trainer.py": trainer, "main.py": MAIN})
    return [(d.path.rsplit("/", 1)[-1], d.span.line) for d in findings_in(root, ["MP101"]) if d.code == "MP101"]


@pytest.mark.parametrize("cast", ["model.to(torch.float16)", "model = model.half()", "model.half()"])
@pytest.mark.parametrize("optimizer", ["torch.optim.AdamW(self.trainable(), lr=1e-4)", "self._create_optimizer()"])
def test_a_model_cast_in_a_method_and_trained_through_another_is_reported(tmp_path, cast, optimizer):
    trainer = TRAINER.format(precision="fp16", cast=cast, optimizer=optimizer)
    assert mp101(tmp_path, trainer) == [("trainer.py", 16)]


@pytest.mark.parametrize("cast", ["model.to(torch.float16)", "model = model.half()"])
def test_under_a_grad_scaler_too(tmp_path, cast):
    assert mp101(tmp_path, SCALER.format(cast=cast, scaler="")) == [("trainer.py", 14)]


@pytest.mark.parametrize("precision, cast", [
    ("bf16", "model.to(torch.float16)"),  # bf16 mixed precision: no GradScaler
    ("no", "model.to(torch.float16)"),
    ("fp16", "model.to(torch.bfloat16)"),  # bf16 weights: nothing to unscale in fp16
    ("fp16", "model.half()\n        model.requires_grad_(False)"),  # frozen
])
def test_no_fp16_loss_scaling_of_fp16_trained_weights_is_silent(tmp_path, precision, cast):
    trainer = TRAINER.format(precision=precision, cast=cast, optimizer="torch.optim.AdamW(self.trainable(), lr=1e-4)")
    assert mp101(tmp_path, trainer) == []


def test_a_scaler_switched_off_is_silent(tmp_path):
    assert mp101(tmp_path, SCALER.format(cast="model.half()", scaler="enabled=False")) == []


def test_an_optimizer_over_something_else_is_silent(tmp_path):
    """fp16 inference of the model: the optimizer trains a head of its own."""
    trainer = SCALER.format(cast="model.half()", scaler="").replace(
        "torch.optim.AdamW(self.trainable(), lr=1e-4)", "torch.optim.AdamW(torch.nn.Linear(8, 1).parameters(), lr=1e-4)"
    )
    assert mp101(tmp_path, trainer) == []


def test_a_project_class_that_is_no_module_is_silent(tmp_path):
    """``MyNet`` derives from nothing in torch: its ``.to(torch.float16)`` casts no parameters."""
    trainer = TRAINER.format(precision="fp16", cast="model.to(torch.float16)", optimizer="None")
    assert mp101(tmp_path, trainer, net=NOT_A_MODULE) == []
