"""MP101: the parts of a project class's instance are distinct at the join.

``AdamW(self.model.head.parameters())`` in a trainer of another module trains the ``head`` of
the model class's instances, not all of them: a ``self.backbone`` the class casts to float16
and nobody hands to an optimizer (a feature extractor run in half precision) raises
nothing under the GradScaler. The part is named where the code names it (``semantic/parts.py``)
and carried across the functions and modules the object goes through (``project/trained.py``);
the whole model, or the backbone itself, handed to the optimizer is still reported."""
import pytest

from conftest import findings_in, write_tree

BLOCKS = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(8, 8)
        self.backbone.half()
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        return self.head(self.backbone(x.half()).float())
"""

FACTORY = """
from blocks import Net


def build_model():
    return Net().cuda()
"""

TRAIN = """
import torch
{imported}


class Runner:
    def __init__(self):
        self.model = {made}
        self.opt = torch.optim.AdamW({given}, lr=1e-4)
        self.scaler = torch.cuda.amp.GradScaler({scaler})

    def step(self, x):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(x).mean()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.opt)
        self.scaler.update()


if __name__ == "__main__":
    Runner().step(torch.randn(2, 8))
"""

DIRECT = {"imported": "from blocks import Net", "made": "Net().cuda()"}
BUILT = {"imported": "from factory import build_model", "made": "build_model()"}


def mp101(tmp_path, given, how=DIRECT, scaler=""):
    files = {"blocks.py": BLOCKS, "factory.py": FACTORY, "train.py": TRAIN.format(given=given, scaler=scaler, **how)}
    root = write_tree(tmp_path, files)
    return [(d.path.rsplit("/", 1)[-1], d.span.line) for d in findings_in(root, ["MP101"]) if d.code == "MP101"]


@pytest.mark.parametrize("how", [DIRECT, BUILT], ids=["made-here", "made-by-a-factory"])
@pytest.mark.parametrize("given", ["self.model.head.parameters()", "list(self.model.head.parameters())"])
def test_training_another_part_leaves_the_fp16_backbone_untrained(tmp_path, how, given):
    assert mp101(tmp_path, given, how) == []


@pytest.mark.parametrize("how", [DIRECT, BUILT], ids=["made-here", "made-by-a-factory"])
@pytest.mark.parametrize("given", [
    "self.model.parameters()",
    "self.model.backbone.parameters()",
    "[{'params': self.model.head.parameters()}, {'params': self.model.backbone.parameters(), 'lr': 1e-5}]",
])
def test_training_the_backbone_or_the_whole_model_is_reported(tmp_path, how, given):
    assert mp101(tmp_path, given, how) == [("blocks.py", 9)]


def test_the_whole_model_trained_under_a_scaler_that_is_off_is_silent(tmp_path):
    assert mp101(tmp_path, "self.model.parameters()", scaler="enabled=False") == []


HELPER = """
import torch


def make_optimizer(module):
    return torch.optim.AdamW(module.parameters(), lr=1e-4)
"""

HANDED = """
import torch
from blocks import Net
from helper import make_optimizer

model = Net().cuda()
opt = make_optimizer({given})
scaler = torch.cuda.amp.GradScaler()
for x in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(x).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
"""


@pytest.mark.parametrize("given, reported", [
    ("model.head", False),
    ("model.backbone", True),
    ("model", True),
])
def test_a_part_handed_to_a_helper_that_trains_it(tmp_path, given, reported):
    root = write_tree(tmp_path, {"blocks.py": BLOCKS, "helper.py": HELPER, "train.py": HANDED.format(given=given)})
    found = [d for d in findings_in(root, ["MP101"]) if d.code == "MP101"]
    assert bool(found) == reported


OTHER_HELPER = """

def evaluate(module):
    return module


def fit(module):
    return torch.optim.SGD(module.parameters(), lr=1e-3)
"""


@pytest.mark.parametrize("also, reported", [
    ("evaluate(model)", False),  # the whole handed elsewhere: still only the head trained
    ("fit(model)", True),
])
def test_a_part_trained_by_a_helper_beside_the_whole_handed_to_another(tmp_path, also, reported):
    # the uses of `model.head` and `model` meet at `model`: what trains the head is linked to
    # the head alone, not to the whole that `evaluate` is given
    handed = HANDED.format(given="model.head").replace("from helper import make_optimizer", "from helper import make_optimizer, evaluate, fit")
    handed = handed.replace("opt = make_optimizer(model.head)\n", f"opt = make_optimizer(model.head)\n{also}\n")
    root = write_tree(tmp_path, {"blocks.py": BLOCKS, "helper.py": HELPER + OTHER_HELPER, "train.py": handed})
    found = [d for d in findings_in(root, ["MP101"]) if d.code == "MP101"]
    assert bool(found) == reported
