"""Code under a test that never holds runs in no run: what it casts, loads, builds or computes
is not judged.

``if False:``, ``if DEBUG:`` of ``DEBUG = False``, ``a and b`` where one never holds, and
``if accelerator.mixed_precision == "fp16":`` of an ``Accelerator(mixed_precision="no")`` (also
``self.accelerator`` set in a method of the class) keep a ``model.half()`` out of every run: an
optimizer over that model updates float32 parameters (the false shape: MP104 "AdamW updates the
float16 parameters" of a model that is never cast). Each has a positive twin: the test that may
hold still reports.
"""
import ast

import pytest

from conftest import lint

from precision_lint.semantic.evaluate import Evaluator
from precision_lint.semantic.index import build_index

HALF_UNDER = """
import torch
{head}
model = torch.nn.Linear(4, 4)
if {test}:
    model = model.half()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
loss = model(torch.randn(2, 4)).sum()
loss.backward()
optimizer.step()
"""


@pytest.mark.parametrize(
    "head, test",
    [
        ("", "False"),
        ("", "0"),
        ("DEBUG = False", "DEBUG"),
        ("DEBUG = False", "DEBUG and torch.cuda.is_available()"),
        ("MP = 'no'", "MP == 'fp16' or MP == 'half'"),
        ("ON = True", "not ON"),
        ("from accelerate import Accelerator\naccelerator = Accelerator(mixed_precision='no')", "accelerator.mixed_precision == 'fp16'"),
    ],
)
def test_a_cast_under_a_test_that_never_holds_casts_nothing(head, test):
    assert lint(HALF_UNDER.format(head=head, test=test), "MP104") == []


@pytest.mark.parametrize(
    "head, test",
    [
        ("", "True"),
        ("import sys\nDEBUG = len(sys.argv) > 1", "DEBUG"),
        ("DEBUG = False", "DEBUG or torch.cuda.is_available()"),
        ("MP = 'fp16'", "MP == 'fp16' or MP == 'half'"),
        ("from accelerate import Accelerator\naccelerator = Accelerator(mixed_precision='fp16')", "accelerator.mixed_precision == 'fp16'"),
        ("from accelerate import Accelerator\naccelerator = Accelerator()", "accelerator.mixed_precision == 'fp16'"),
    ],
)
def test_a_cast_under_a_test_that_may_hold_is_still_judged(head, test):
    assert [d.code for d in lint(HALF_UNDER.format(head=head, test=test), "MP104")] == ["MP104"]


RUNNER = """
import torch
from accelerate import Accelerator


class Runner:
    def __init__(self, model):
        self.accelerator = Accelerator(mixed_precision={mp})
        self.model = model
        if self.accelerator.mixed_precision == "fp16":
            self.model = self.model.half()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-4)

    def step(self, batch):
        loss = self.model(batch).sum()
        self.accelerator.backward(loss)
        self.optimizer.step()


Runner(torch.nn.Linear(4, 4)).step(torch.randn(2, 4))
"""


@pytest.mark.parametrize("mp, found", [('"no"', []), ('"bf16"', []), ('"fp16"', ["MP104"])])
def test_an_accelerator_kept_on_self_decides_its_precision_test(mp, found):
    assert [d.code for d in lint(RUNNER.format(mp=mp), "MP104")] == found


def _never(src, test_text, positive=True):
    tree = ast.parse(src)
    index = build_index(src, "m", False, tree)
    test = next(n.test for n in ast.walk(tree) if isinstance(n, ast.If) and ast.unparse(n.test) == test_text)
    return Evaluator(index).never_holds(test, positive, index.root)


@pytest.mark.parametrize(
    "src, test, positive, never",
    [
        ("A = False\nB = True\nif A and B: pass\n", "A and B", True, True),
        ("A = False\nB = True\nif A and B: pass\n", "A and B", False, False),
        ("A = True\nB = True\nif A and B: pass\n", "A and B", False, True),
        ("A = False\nB = True\nif A or B: pass\n", "A or B", True, False),
        ("A = False\nB = False\nif A or B: pass\n", "A or B", True, True),
        ("A = False\nB = True\nif A or B: pass\n", "A or B", False, True),
        ("import os\nA = os.environ.get('X')\nif A: pass\n", "A", True, False),
        ("A = ''\nif A: pass\n", "A", True, True),
    ],
)
def test_never_holds_reads_and_or_and_truth(src, test, positive, never):
    assert _never(src, test, positive) is never
