"""MP402 and tensors that are certainly float16 where no local cast says so.

A helper's parameter has no dtype inside the helper: ``def normalize(t): ... (t.std() + 1e-9)``.
Its calls do: the join substitutes what each call certainly passes, so a helper called with a
``.half()`` tensor is reported (naming the call), one called only with float32 tensors (or with
``.float()``, or never called) is not. The output of a ``torch.nn`` layer whose weights are cast
to float16, called on a float16 input, is float16 too (views, ``std``, ``mean`` keep it).
Each test is a small program of that shape (``semantic/float16.py``).
"""
import pytest
from conftest import config, lint

from precision_lint.engine import Engine

CODE = "MP402"

HELPER = """
import torch

r = torch.randn(8).half()


def normalize(t):
    return (t - t.mean()) / (t.std() + 1e-9)


{call}
"""


def test_an_eps_in_a_helper_called_with_a_float16_tensor_is_reported():
    (d,) = lint(HELPER.format(call="adv = normalize(r)"), CODE)
    assert d.span.line == 7 and "adds 0" in d.message
    assert "`normalize` is called with a float16 tensor at train.py:10" in d.message
    assert d.related and d.related[0].span.line == 10


@pytest.mark.parametrize(
    "call",
    [
        "adv = normalize(torch.zeros(4, dtype=torch.float16))",  # made float16
        "adv = normalize(r[:4].view(2, 2))",  # a view of a float16 tensor
        "def outer(x):\n    return normalize(x)\n\n\nadv = outer(r)",  # through another helper
        "adv = normalize(torch.randn(8))\nadv16 = normalize(r)",  # one of two calls is float16
    ],
)
def test_each_call_that_passes_a_float16_tensor_counts(call):
    assert [d.code for d in lint(HELPER.format(call=call), CODE)] == [CODE]


@pytest.mark.parametrize(
    "call",
    [
        "adv = normalize(torch.randn(8))",  # float32 only
        "adv = normalize(r.float())",  # upcast before the call
        "adv = normalize(r.half().float())",
        "",  # nothing calls it
        "dtype = torch.float16 if use_fp16 else torch.float32\nadv = normalize(torch.zeros(4, dtype=dtype))",  # may be float32
        "def outer(x):\n    return normalize(x.float())\n\n\nadv = outer(r)",  # upcast on the way
    ],
)
def test_a_helper_never_called_with_a_certainly_float16_tensor_is_silent(call):
    assert lint("use_fp16 = False\n" + HELPER.format(call=call), CODE) == []


def test_a_large_constant_that_a_float16_tensor_is_divided_by_is_silent():
    """``t / 1e9`` gets smaller: nothing overflows. ``t * -1e9`` does (an additive mask)."""
    src = HELPER.format(call="adv = normalize(r)").replace("(t - t.mean()) / (t.std() + 1e-9)", "t / 1e9")
    assert lint(src, CODE) == []
    (d,) = lint(src.replace("t / 1e9", "t * -1e9"), CODE)
    assert "overflows to -inf" in d.message


def test_a_parameter_reassigned_in_the_helper_is_not_the_callers_tensor():
    src = HELPER.format(call="adv = normalize(r)").replace(
        "    return (t - t.mean())", "    t = t.float()\n    return (t - t.mean())"
    )
    assert lint(src, CODE) == []


def test_a_method_called_with_a_float16_tensor_is_reported():
    src = """
    import torch


    class Trainer:
        def advantages(self, rewards):
            return (rewards - rewards.mean()) / (rewards.std() + 1e-8)


    trainer = Trainer()
    adv = trainer.advantages(torch.ones(8, dtype=torch.float16))
    """
    (d,) = lint(src, CODE)
    assert d.span.line == 6 and "`advantages` is called with a float16 tensor" in d.message


HELPERS = """
import torch


def normalize(t):
    return (t - t.mean()) / (t.std() + 1e-9)
"""
SCRIPT = """
import torch
from helpers import normalize

rewards = {rewards}
adv = normalize(rewards)
"""


def _lint_tree(tree, files):
    root = tree(files)
    return Engine(config(), [CODE]).run_paths([str(root / "proj")]).diagnostics


def test_a_helper_of_another_module_is_judged_by_its_callers(tree):
    files = {"proj/helpers.py": HELPERS, "proj/train.py": SCRIPT.format(rewards="torch.randn(8).half()")}
    (d,) = _lint_tree(tree, files)
    assert d.path.endswith("helpers.py") and d.span.line == 5
    assert "called with a float16 tensor at train.py:5" in d.message


def test_a_helper_of_another_module_called_with_float32_is_silent(tree):
    files = {"proj/helpers.py": HELPERS, "proj/train.py": SCRIPT.format(rewards="torch.randn(8).half().float()")}
    assert _lint_tree(tree, files) == []


# --- the output of a layer with float16 weights ---------------------------------------------
HEAD = """
import torch

head = {head}
x = torch.ones(8, 16, dtype={input})
rewards = {rewards}
adv = (rewards - rewards.mean(-1, keepdim=True)) / (rewards.std(-1, keepdim=True) + 1e-9)
"""


def _head(head="torch.nn.Linear(16, 1).to(torch.float16)", input="torch.float16", rewards="head(x).squeeze(-1).reshape(-1, 4)"):
    return HEAD.format(head=head, input=input, rewards=rewards)


@pytest.mark.parametrize(
    "src",
    [
        _head(),
        _head(head="torch.nn.Linear(16, 1).half()"),
        _head(head="torch.nn.Linear(16, 1, dtype=torch.float16)"),
        _head(head="torch.nn.Linear(16, 1).cuda().half().eval()"),
        _head(head="torch.nn.Linear(16, 1)\nhead.half()"),
        _head(input="torch.half", rewards="head(x[:, :16]).view(-1, 4)"),
    ],
)
def test_a_float16_layer_on_a_float16_input_gives_a_float16_output(src):
    (d,) = lint(src, CODE)
    assert "+ 1e-9" in src.strip("\n").splitlines()[d.span.line - 1] and "float16 weights" in d.message


@pytest.mark.parametrize(
    "src",
    [
        _head(rewards="head(x).squeeze(-1).float().reshape(-1, 4)"),  # upcast before
        _head(head="torch.nn.Linear(16, 1)", input="torch.float32"),  # float32 throughout
        _head(input="torch.float32"),  # float16 weights, float32 input: raises, not MP402's
        _head(head="torch.nn.Linear(16, 1).half().float()"),  # cast back
        _head(head="torch.nn.Linear(16, 1)\nhead.half()\nhead.float()"),  # cast back in place
        _head(head="torch.nn.Sequential(torch.nn.Linear(16, 1)).half()"),  # a container: its contents decide
        _head(rewards="head(x).sum(-1, keepdim=True)"),  # sum: float32 under autocast, not followed
        _head(rewards="1 / head(x)"),  # __rtruediv__: float32 under autocast
    ],
)
def test_a_layer_output_that_is_not_certainly_float16_is_silent(src):
    assert lint(src, CODE) == []


def test_a_project_model_cast_to_float16_is_not_a_layer():
    """Its forward may return float32 (a final ``.float()``): the output's dtype is not known."""
    src = """
    import torch
    from torch import nn


    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(16, 1)

        def forward(self, x):
            return self.fc(x).float()


    head = Head().half()
    x = torch.ones(8, 16, dtype=torch.float16)
    rewards = head(x)
    adv = rewards / (rewards.std() + 1e-9)
    """
    assert lint(src, CODE) == []
