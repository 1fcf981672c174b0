"""MP101: an optimizer given what a method of a project class's instance returns
(``AdamW(self.model.trainable_params())``, the method defined in another module as ``return
self.backbone.parameters()``) trains what that method hands out, as
``AdamW(self.model.parameters())`` trains the instance: a float16 backbone the class casts itself
(``self.core = self.core.half()``) under the GradScaler of an ``--amp`` run raises ``ValueError:
Attempting to unscale FP16 gradients.`` at the first ``scaler.unscale_``."""
import pytest

from conftest import findings_in, write_tree

BLOCKS = """
import torch
from torch import nn


class HalfCore(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.core = nn.Linear(width, width)
        self.core = self.core.half()


class Composite(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.backbone = HalfCore(width)
        self.head = nn.Linear(width, 1)

    def trainable_params(self):
        return {returned}
"""

TRAIN = """
import argparse
import torch
from blocks import Composite


class Runner:
    def __init__(self, args):
        self.model = Composite().to("cuda")
        self.opt = torch.optim.AdamW({given}, lr=1e-4)
        self.scaler = torch.amp.GradScaler("cuda") if args.amp else None

    def step(self, x):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler is not None):
            loss = self.model(x).mean()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.opt)
        self.scaler.update()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--amp", action="store_true")
    Runner(p.parse_args()).step(torch.randn(2, 8))
"""


@pytest.mark.parametrize("given, returned, reported", [
    ("self.model.trainable_params()", "self.backbone.parameters()", True),
    ("self.model.parameters()", "self.backbone.parameters()", True),
    ("self.model.trainable_params()", "[p for p in self.parameters() if p.requires_grad]", True),
    ("self.model.some_other_name()", "self.backbone.parameters()", False),  # no such method: nothing known
])
def test_what_a_project_method_hands_the_optimizer_is_trained(tmp_path, given, returned, reported):
    root = write_tree(tmp_path, {"blocks.py": BLOCKS.format(returned=returned), "train.py": TRAIN.format(given=given)})
    found = [d for d in findings_in(root, ["MP101"]) if d.code == "MP101"]
    assert bool(found) == reported
    if reported:
        assert found[0].path.endswith("blocks.py") and "self.core.half()" in found[0].message
