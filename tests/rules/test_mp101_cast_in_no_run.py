"""MP101: a cast under a test of its function's parameter (``if precision == "half":
model.half()`` of ``def fit(..., precision="full")``) runs only where a caller passes a value
the test accepts. Where every call leaves the default, or passes literals the test refuses, no
run makes the weights float16 (held-out 40u's F1 shape: a course's ``train()`` whose only
caller never asks for "half", beside a ``train_amp()`` with a GradScaler)."""
import pytest

from conftest import config, dedent, write_tree
from precision_lint.engine import Engine

TRAIN = '''
import torch
from torch import nn


def fit(model, optimizer, loader, precision="full"):
    if precision {test}:
        model.half()
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()


def fit_amp(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
'''

MAIN = '''
import torch
from torch import nn

from train import fit, fit_amp

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
fit({call})
fit_amp(model, optimizer, [])
'''


@pytest.mark.parametrize(
    "test, call, reported",
    [
        ('== "half"', "model, optimizer, []", False),  # the default, "full": never halved
        ('== "half"', 'model, optimizer, [], precision="full"', False),
        ('in ("half", "fp16")', 'model, optimizer, [], "full"', False),
        ('== "half"', 'model, optimizer, [], precision="half"', True),  # halved, then scaled
        ('!= "full"', "model, optimizer, []", False),
        ('!= "full"', 'model, optimizer, [], precision="half"', True),
        ('== "half"', "model, optimizer, [], precision=mode", True),  # not known: it may be
    ],
)
def test_a_cast_under_a_parameter_test_no_call_passes_is_in_no_run(tmp_path, test, call, reported):
    files = {"train.py": TRAIN.format(test=test), "main.py": "mode = input()\n" + MAIN.format(call=call)}
    write_tree(tmp_path, {name: dedent(text) for name, text in files.items()})
    found = Engine(config(), ["MP101"], jobs=1).run_paths([str(tmp_path)]).diagnostics
    assert bool(found) is reported


ADAM = '''
import torch
from torch import nn


def fit(model, loader, precision="full"):
    if precision == "half":
        model.half()
    optimizer = torch.optim.AdamW(model.parameters())
    for x, y in loader:
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()


fit(nn.Linear(4, 2), []{passed})
'''


@pytest.mark.parametrize("passed, reported", [("", False), (', precision="half"', True)])
def test_adam_on_weights_cast_in_no_run_is_not_reported(tmp_path, passed, reported):
    """MP104 asks the same: Adam's eps underflows only on parameters some run makes float16."""
    write_tree(tmp_path, {"fit.py": dedent(ADAM.format(passed=passed))})
    found = Engine(config(), ["MP104"], jobs=1).run_paths([str(tmp_path)]).diagnostics
    assert bool(found) is reported


def test_a_value_another_run_passes_casts_in_that_run_only(tmp_path):
    """``fit(..., precision="half")`` in a notebook of its own casts in the notebook's run; the
    script that calls ``fit`` with its default, beside its GradScaler, casts nothing."""
    from precision_lint.workspace.notebook import from_cells

    notebook = from_cells(["from train import fit\nfrom torch import nn\nimport torch\n",
                           "net = nn.Linear(4, 2)\nfit(net, torch.optim.SGD(net.parameters()), [], precision='half')\n"])
    files = {"train.py": TRAIN.format(test='== "half"'), "main.py": MAIN.format(call="model, optimizer, []")}
    write_tree(tmp_path, {name: dedent(text) for name, text in files.items()})
    (tmp_path / "explore.ipynb").write_bytes(notebook)
    found = Engine(config(), ["MP101"], jobs=1).run_paths([str(tmp_path)]).diagnostics
    assert found == []
    # the notebook's own run asks for "half" and scales: reported there
    (tmp_path / "explore.ipynb").write_bytes(from_cells([
        "from train import fit, fit_amp\nfrom torch import nn\nimport torch\n",
        "net = nn.Linear(4, 2)\nopt = torch.optim.SGD(net.parameters())\nfit(net, opt, [], precision='half')\nfit_amp(net, opt, [])\n",
    ]))
    assert [d.code for d in Engine(config(), ["MP101"], jobs=1).run_paths([str(tmp_path)]).diagnostics] == ["MP101"]
