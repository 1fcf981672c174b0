"""Runs: which code executes together in one process, and what a rule may join.

A run is its entry (a script, a console-script function, a notebook, a test file), the
module-level code of every module it imports — never their ``if __name__ == "__main__":``
blocks — and what is reachable from the entry. Each shape has a positive and a negative case.
"""
from conftest import config

from precision_lint.engine import Engine

NETLIB = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


if __name__ == "__main__":
    net = Net().cuda(){cast}
    opt = torch.optim.SGD(net.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        loss = net(torch.randn(2, 4, device="cuda")).sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
"""
INFER = """
import torch
from netlib import Net

net = Net().cuda().half()
out = net(torch.randn(2, 4, device="cuda").half())
print(out)
"""


def _lint(tree, files, *codes):
    root = tree(files)
    return Engine(config(), list(codes)).run_paths([str(root / "proj")]).diagnostics


def test_an_imported_modules_main_block_is_not_joined_into_its_importers(tree):
    files = {"proj/netlib.py": NETLIB.format(cast=""), "proj/infer.py": INFER}
    assert _lint(tree, files, "MP101") == []


def test_a_main_block_still_runs_in_its_own_modules_run(tree):
    files = {"proj/netlib.py": NETLIB.format(cast=".half()"), "proj/infer.py": INFER}
    found = _lint(tree, files, "MP101")
    assert [d.path.rsplit("/", 1)[-1] for d in found] == ["netlib.py"]
    assert found[0].span.line == 15


def test_module_level_loss_scaling_of_an_imported_module_is_joined(tree):
    lib = NETLIB.format(cast="").replace('if __name__ == "__main__":', "if True:")
    files = {"proj/netlib.py": lib, "proj/infer.py": INFER}
    assert [d.path.rsplit("/", 1)[-1] for d in _lint(tree, files, "MP101")] == ["infer.py"]
