"""MP306: torch.amp.autocast / torch.autocast / torch.amp.custom_fwd without the device they
require (``TypeError: autocast.__init__() missing 1 required positional argument:
'device_type'`` on every torch)."""
import pytest
from conftest import dedent, fix, lint

from precision_lint.facts.extractors import amp_device
from precision_lint.semantic.evaluate import Evaluator
from precision_lint.semantic.index import build_index

CODE = "MP306"


@pytest.mark.parametrize(
    "imports, call",
    [
        ("import torch", "torch.amp.autocast(enabled=use_amp)"),
        ("import torch", "torch.autocast(dtype=torch.bfloat16)"),
        ("from torch import autocast", "autocast(enabled=use_amp, dtype=torch.float16)"),
        ("from torch.amp import autocast as amp_autocast", "amp_autocast()"),
    ],
)
def test_an_autocast_without_device_is_reported_and_given_cuda(imports, call):
    src = f"{imports}\nimport torch\nuse_amp = torch.cuda.is_available()\nwith {call}:\n    pass\n"
    (d,) = lint(src, CODE)
    assert d.span.line == 4 and "missing 1 required positional argument: 'device_type'" in d.message
    assert d.fix is not None and d.fix.applicability == "safe"  # the module names CUDA
    fixed = fix(src, CODE)
    head, _, rest = call.partition("(")
    assert f'{head}("cuda"{", " if rest != ")" else ""}{rest}' in fixed
    assert lint(fixed, CODE) == []


@pytest.mark.parametrize(
    "call",
    [
        'torch.amp.autocast("cuda", enabled=True)',
        "torch.autocast(device_type='cpu')",
        "torch.amp.autocast(device, dtype=torch.float16)",  # its first argument is the device
        "torch.amp.autocast(*amp_args)",  # may carry it
        "torch.amp.autocast(**amp_kwargs)",
        "torch.cuda.amp.autocast(enabled=True)",  # knows its device (MP303's)
    ],
)
def test_what_names_or_may_name_the_device_is_not_reported(call):
    src = f"import torch\ndevice, amp_args, amp_kwargs = 'cuda', ('cuda',), {{'device_type': 'cuda'}}\nwith {call}:\n    pass\n"
    assert lint(src, CODE) == []


def test_a_branch_that_never_runs_is_not_reported():
    assert lint("import torch\nif False:\n    with torch.amp.autocast(enabled=True):\n        pass\n", CODE) == []


def test_without_cuda_in_the_module_the_fix_is_unsafe():
    src = "import torch\nwith torch.amp.autocast(dtype=torch.bfloat16):\n    pass\n"
    (d,) = lint(src, CODE)
    assert d.fix.applicability == "unsafe"
    assert fix(src, CODE) == src  # not applied without --unsafe-fixes
    assert 'torch.amp.autocast("cuda", dtype=torch.bfloat16)' in fix(src, CODE, unsafe=True)


DECORATED = """
import torch

class Scale(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd
    def forward(ctx, x):
        return x.cuda() * 2

    @staticmethod
    @torch.amp.custom_bwd()
    def backward(ctx, g):
        return g * 2
"""


def test_custom_fwd_and_bwd_without_device():
    found = lint(DECORATED, CODE)
    assert [(d.span.line, "custom_fwd()" in d.message, "custom_bwd()" in d.message) for d in found] == [(5, True, False), (10, False, True)]
    fixed = fix(DECORATED, CODE)
    assert '@torch.amp.custom_fwd(device_type="cuda")\n' in fixed and '@torch.amp.custom_bwd(device_type="cuda")\n' in fixed
    assert lint(fixed, CODE) == []


def test_the_fact_records_where_the_device_goes():
    source = dedent("""
        import torch
        with torch.amp.autocast(  # a comment
                enabled=True):
            pass
    """)
    index = build_index(source, "train")
    (call,) = amp_device.extract(index, Evaluator(index))["calls"]
    assert source[call.insert_at - 1] == "(" and call.kind == "autocast" and not call.empty and not call.bare


def test_a_docstring_that_mentions_cuda_is_no_cuda_code():
    """The fix assumes CUDA only where the module's code uses it (the capability facts' `cuda_code`)."""
    src = '"""Trains on cuda when there is one."""\nimport torch\nwith torch.amp.autocast(dtype=torch.bfloat16):\n    pass\n'
    (d,) = lint(src, CODE)
    assert d.fix.applicability == "unsafe"
    (d,) = lint(src.replace("import torch\n", "import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"), CODE)
    assert d.fix.applicability == "safe"


def test_the_device_goes_after_the_opening_parenthesis_whatever_comes_between():
    src = "import torch\nx = torch.ones(1).cuda()\nwith (torch.amp.autocast)  (  # why\n        enabled=True):\n    pass\n"
    assert "with (torch.amp.autocast)  (\"cuda\",   # why\n" in fix(src, CODE)
