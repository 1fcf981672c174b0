"""A branch runs on another device than a CUDA GPU (``Guard.other_device``) when its test
selects that device, read from the test's tree: a comparison with a string that is a device, a
backend's availability check found by its qualified name, a variable bound to either. Words in
the test's text (a variable's name, a comment, a string that mentions a device) say nothing
(issue #23)."""
import textwrap

import pytest
from conftest import lint

from precision_lint.semantic.evaluate import Evaluator
from precision_lint.semantic.index import build_index
from precision_lint.semantic.names import dotted
from precision_lint.semantic.values import COND, CUDA

HEAD = """\
import torch
import torch_npu
import habana_frameworks.torch as htorch
import intel_extension_for_pytorch as ipex
from transformers import AutoModelForCausalLM, TrainingArguments
from transformers.utils import is_torch_xpu_available, is_torch_npu_available
from accelerate.utils import is_mps_available, is_tpu_available
"""


def _other_device(program: str):
    """Guard.other_device of each test around the ``marker()`` call, outermost first."""
    ix = build_index(HEAD + textwrap.dedent(program), "m", False)
    (site,) = [s for s in ix.calls if dotted(s.node.func) == "marker"]
    evaluator = Evaluator(ix)
    return [evaluator.guard(test, positive, site.scope).other_device for test, positive in site.guards]


@pytest.mark.parametrize(
    "test",
    [
        'args.device == "xpu"',
        'args.device in ("mps", "cpu")',
        'device.type == "npu"',
        'str(device).startswith("xla")',
        'args.device.startswith(("xla", "tpu"))',
        '"xla" in str(device)',
        'args.device == "xla:0"',
        'device == torch.device("cpu")',
        'device == torch.device(type="xpu")',
        'torch_xla.runtime.device_type() == "TPU"',
        "torch.backends.mps.is_available()",
        "torch.xpu.is_available()",
        "torch_npu.npu.is_available()",
        "htorch.hpu.is_available()",
        "ipex.xpu.is_available()",
        "is_torch_xpu_available()",
        "is_torch_npu_available()",
        "is_mps_available()",
        "is_tpu_available()",
        "is_torch_xla_available()",  # neither defined nor imported: its name is all there is
        'hasattr(torch, "xpu") and torch.xpu.is_available()',
        'args.device == "mps" or args.device == "cpu"',
        '(args.device == "hpu")',
    ],
)
def test_a_test_that_selects_another_device_is_another_device(test):
    program = f"if {test}:\n    marker()\n"
    assert _other_device(program) == [True]


@pytest.mark.parametrize(
    "test",
    [
        "use_mps_fallback",
        "args.use_mps_fallback",
        "cfg.xla_compat_mode",
        "is_xpu_build_of_the_docs",
        'args.note == "use cuda not xla"',
        'args.backend == "mps_graph"',
        '(\n    args.bf16  # not on xla or mps\n)',
        'hasattr(torch, "xpu")',
        'args.device == "cuda"',
        'device == torch.device("cuda")',
        'len(set(model.hf_device_map.values()) & {"cpu", "disk"}) > 0',
        'args.device != "xpu"',
        'args.device not in ("mps", "cpu")',
        "not torch.backends.mps.is_available()",
        'args.device == "mps" or args.device == "cuda"',
        'args.device in ("cuda", "mps")',
        "args.xla",
        "args.no_cuda",
    ],
)
def test_words_in_a_test_are_not_another_device(test):
    program = f"if {test}:\n    marker()\n"
    assert _other_device(program) == [False]


def test_only_the_branch_the_device_test_selects_is_another_device():
    program = """
        if torch.backends.mps.is_available():
            pass
        else:
            marker()
        """
    assert _other_device(program) == [False]


def test_a_variable_bound_to_a_device_test():
    program = """
        on_mps = torch.backends.mps.is_available()
        if on_mps:
            marker()
        """
    assert _other_device(program) == [True]


def test_a_variable_bound_to_something_else_is_not_a_device_test():
    program = """
        on_mps = args.mps_fallback
        if on_mps:
            marker()
        """
    assert _other_device(program) == [False]


def test_only_the_reaching_binding_counts():
    program = """
        on_xpu = torch.xpu.is_available()
        on_xpu = args.fallback
        if on_xpu:
            marker()
        """
    assert _other_device(program) == [False]


def test_a_device_string_bound_to_a_variable():
    program = """
        XLA = "xla"
        if args.device == XLA:
            marker()
        """
    assert _other_device(program) == [True]
    # the variable read twice in one test
    assert _other_device(program.replace("args.device == XLA", "args.device == XLA or args.backend == XLA")) == [True]


def test_a_variable_named_like_a_device_holding_another_string_is_not():
    program = """
        xla = "fast"
        if args.mode == xla:
            marker()
        """
    assert _other_device(program) == [False]


def test_a_local_function_that_returns_a_device_check():
    program = """
        def on_tpu():
            return is_tpu_available()

        def on_tpu_docs():
            return args.tpu_docs

        if on_tpu():
            marker()
        """
    assert _other_device(program) == [True]
    assert _other_device(program.replace("if on_tpu():", "if on_tpu_docs():")) == [False]


def test_a_variable_that_reads_itself_is_no_device_test():
    program = """
        on_xpu = False
        for _ in range(3):
            on_xpu = on_xpu or args.retry
        if on_xpu:
            marker()
        """
    assert _other_device(program) == [False]


def test_a_local_function_named_like_a_check_is_read_by_its_body():
    program = """
        def is_torch_xla_available():
            return args.compile

        if is_torch_xla_available():
            marker()
        """
    assert _other_device(program) == [False]


def test_training_arguments_on_the_cpu():
    program = """
        training_args = TrainingArguments(output_dir="o", use_cpu=True)
        if training_args.use_cpu:
            marker()
        """
    assert _other_device(program) == [True]
    # the same switch of an object that is no TrainingArguments is a word
    assert _other_device(program.replace("TrainingArguments(", "make_options(")) == [False]


# --- MP201 over such branches ------------------------------------------------------------------
RULE_HEAD = "import torch\nfrom transformers import AutoModelForCausalLM\n"
BF16 = '    model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16)\n'


def _mp201(test: str):
    return [d.code for d in lint(RULE_HEAD + f"if {test}:\n" + BF16) if d.code.startswith("MP2")]


@pytest.mark.parametrize(
    "test",
    ["torch.backends.mps.is_available()", 'args.device == "xpu"', 'str(device).startswith("xla")'],
)
def test_mp201_is_silent_in_a_branch_for_another_device(test):
    assert _mp201(test) == []


@pytest.mark.parametrize(
    "test",
    ["use_mps_fallback", "cfg.xla_compat_mode", "args.xla", 'args.note == "use cuda not xla"', "(\n    args.fast  # not on xla\n)"],
)
def test_mp201_reports_bf16_under_a_test_that_only_mentions_a_device(test):
    assert _mp201(test) == ["MP201"]


def _values(expression: str):
    ix = build_index(f"import torch\ndef f(device, flag):\n    return {expression}\n", "m", False)
    evaluator = Evaluator(ix)
    scope = ix.functions["m.f"] if "m.f" in ix.functions else next(iter(ix.functions.values()))
    (value, _), = scope.returns
    return evaluator.values(value, scope)


@pytest.mark.parametrize(
    "test",
    ['device == "cuda"', '"cuda" == device.type', 'str(device).startswith("cuda")', '"cuda" in str(device)', 'device is "cuda:0"'],
)
def test_a_test_that_a_device_not_known_here_is_a_cuda_gpu_holds_where_the_run_is_on_one(test):
    """As ``torch.cuda.is_available()``: what a switch like ``GradScaler(enabled=flag and
    device.startswith("cuda"))`` is on a GPU (review 22d's miss: an fp16 model whose scaler is
    switched on that way, silent)."""
    assert [v.kind for v in _values(test)] == [CUDA]
    assert [(v.kind, v.cuda) for v in _values(f"flag and {test}")] == [(COND, True)]


@pytest.mark.parametrize("test", ['device == "cpu"', 'device.startswith("xla")', '"cuda" == "cuda"'])
def test_other_comparisons_of_devices_are_not_cuda_tests(test):
    assert all(v.kind != CUDA and not v.cuda for v in _values(test))


# --- `torch.device(...).type`: the type the device was made with -----------------------------------
def _values_of_marker_argument(program: str):
    ix = build_index(HEAD + textwrap.dedent(program), "m", False)
    (site,) = [s for s in ix.calls if dotted(s.node.func) == "marker"]
    return sorted(str(v.value) for v in Evaluator(ix).values(site.node.args[0], site.scope))


@pytest.mark.parametrize(
    "made, expected",
    [
        ('torch.device("mps")', ["mps"]),
        ('torch.device("cuda:1")', ["cuda"]),
        ('torch.device(type="xpu", index=0)', ["xpu"]),
        ('torch.device("cuda" if torch.cuda.is_available() else "cpu")', ["cpu", "cuda"]),
    ],
    ids=["mps", "indexed", "keyword", "either"],
)
def test_a_device_s_type_is_the_type_it_was_made_with(made, expected):
    assert _values_of_marker_argument(f"device = {made}\nmarker(device.type)\n") == expected


@pytest.mark.parametrize("made", ["torch.device(0)", "torch.device(args.device)", "get_device()"])
def test_a_device_of_unknown_type_stays_unknown(made):
    assert _values_of_marker_argument(f"device = {made}\nmarker(device.type)\n") in (["None"], [])
