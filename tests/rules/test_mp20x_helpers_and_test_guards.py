"""Choices and guards made through helpers (MP201, MP203): a helper's returned choice and the
probe around it, `is None` / `or` defaults (the code's default, not the user's switch),
parameter defaults no call leaves in place; and test decorators as guards in any file."""
import textwrap

import pytest

from conftest import lint


def _codes(src, path="train.py"):
    return [(d.code, d.span.line) for d in lint(textwrap.dedent(src), path=path) if d.code.startswith("MP2")]


# --- a helper's choice and the guard around it ------------------------------------------------
HELPERS = {
    "if-return": """
        def default_dtype():
            if torch.cuda.is_bf16_supported():
                return torch.bfloat16
            return torch.float16
        """,
    "if-else-variable": """
        def default_dtype():
            if torch.cuda.is_bf16_supported():
                dtype = torch.bfloat16
            else:
                dtype = torch.float16
            return dtype
        """,
    "ternary": """
        def default_dtype():
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        """,
}


@pytest.mark.parametrize("helper", list(HELPERS.values()), ids=list(HELPERS))
def test_a_helpers_emulation_counting_guard_is_reported_where_it_chooses(helper):
    src = "import torch\nfrom transformers import AutoModelForCausalLM\n" + textwrap.dedent(helper)
    src += 'model = AutoModelForCausalLM.from_pretrained("m", dtype=default_dtype())\n'
    found = _codes(src)
    assert [c for c, _ in found] == ["MP203"]
    assert "is_bf16_supported" in src.splitlines()[found[0][1] - 1]


def test_a_helper_returning_the_probe_decides_the_bf16_flag():
    src = """
        import torch
        from transformers import TrainingArguments
        def use_bf16():
            return torch.cuda.is_bf16_supported()
        args = TrainingArguments(output_dir="o", bf16=use_bf16(), fp16=not use_bf16())
        """
    assert _codes(src) == [("MP203", 4)]


@pytest.mark.parametrize(
    "helper",
    [
        # the probe chooses something else than the precision
        """
        def batch_size():
            if torch.cuda.is_bf16_supported():
                return 16
            return 8
        """,
        # native bf16 asked for: nothing to report
        """
        def default_dtype():
            if torch.cuda.is_bf16_supported(including_emulation=False):
                return torch.bfloat16
            return torch.float16
        """,
    ],
    ids=["probe-chooses-batch-size", "native-probe"],
)
def test_a_helper_whose_probe_does_not_count_emulation_for_bf16_is_silent(helper):
    src = "import torch\nfrom transformers import AutoModelForCausalLM\n" + textwrap.dedent(helper)
    src += 'model = AutoModelForCausalLM.from_pretrained("m", dtype=torch.float16)\nbs = batch_size() if "batch_size" in dir() else 1\n'
    assert _codes(src) == []


# --- the code's own defaults are not the user's switch --------------------------------------------
@pytest.mark.parametrize(
    "body",
    [
        """
        def main(precision=None):
            if precision is None:
                precision = "bf16-mixed"
            return L.Trainer(precision=precision)
        """,
        """
        def main(args):
            precision = args.precision or "bf16-mixed"
            return L.Trainer(precision=precision)
        """,
        """
        def main(precision):
            precision = precision or "bf16-mixed"
            return L.Trainer(precision=precision)
        """,
    ],
    ids=["is-none", "or-default-of-args", "or-default-of-parameter"],
)
def test_a_default_filled_in_by_the_code_is_reported(body):
    assert [c for c, _ in _codes("import lightning as L\n" + textwrap.dedent(body))] == ["MP201"]


@pytest.mark.parametrize(
    "body",
    [
        """
        def main(precision=None):
            if precision == "bf16":
                precision = "bf16-mixed"
            return L.Trainer(precision=precision)
        """,
        """
        def main(args):
            precision = args.precision or "16-mixed"
            return L.Trainer(precision=precision)
        """,
    ],
    ids=["users-switch", "or-default-fp16"],
)
def test_the_users_switch_and_non_bf16_defaults_are_not_reported(body):
    assert _codes("import lightning as L\n" + textwrap.dedent(body)) == []


# --- parameter defaults count only where a call can leave them -------------------------------------
LOADER = """
    import torch
    from transformers import AutoModelForCausalLM
    def load(dtype=torch.bfloat16):
        return AutoModelForCausalLM.from_pretrained("m", torch_dtype=dtype)
    major, _ = torch.cuda.get_device_capability()
    model = load(torch.bfloat16 if major >= 8 else torch.float16)
    """


def test_a_default_every_call_overrides_with_a_capability_check_is_not_reported():
    assert _codes(LOADER) == []


@pytest.mark.parametrize("extra", ["other = load()\n", "other = load(dtype=None) if False else load()\n"], ids=["call-without", "second-call-without"])
def test_a_default_some_call_leaves_is_reported(extra):
    assert [c for c, _ in _codes(LOADER + extra)] == ["MP201"]


def test_a_default_of_a_function_nobody_calls_is_reported():
    src = """
        import torch
        from transformers import AutoModelForCausalLM
        def load(dtype=torch.bfloat16):
            return AutoModelForCausalLM.from_pretrained("m", torch_dtype=dtype)
        """
    assert [c for c, _ in _codes(src)] == ["MP201"]


# --- tests by shape, not by file name ------------------------------------------------------------
CHECK = """
    import torch, pytest, unittest
    from transformers import AutoModelForCausalLM, TrainingArguments
    from transformers.testing_utils import require_torch_bf16_gpu, require_torch_gpu, require_flash_attn
    from accelerate.test_utils import require_bf16
    def ampere():
        return torch.cuda.get_device_capability()[0] >= 8
    {decorator}
    def check_training():
        args = TrainingArguments(output_dir="o", bf16=True)
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16, attn_implementation="flash_attention_2")
    """


@pytest.mark.parametrize(
    "decorator",
    [
        "@pytest.mark.skipif(not ampere(), reason='needs Ampere')",
        "@pytest.mark.skipif(not is_ampere_or_newer(), reason='needs Ampere')",  # a helper of another file
        "@unittest.skipUnless(torch.cuda.get_device_capability()[0] >= 8, 'needs Ampere')",
        "@require_torch_bf16_gpu\n@require_flash_attn",
        "@require_bf16\n@require_flash_attn",
        "@require_torch_gpu_capability(8, 0)",
        "pytestmark = pytest.mark.skipif(not ampere(), reason='needs Ampere')",
    ],
    ids=["skipif-local-helper", "skipif-named-helper", "skip-unless", "transformers-require", "accelerate-require", "capability-require", "pytestmark"],
)
def test_capability_skip_decorators_guard_in_any_file(decorator):
    src = textwrap.dedent(CHECK).replace("{decorator}", decorator)
    assert sorted(c for c, _ in _codes(src.replace(decorator, ""), path="checks/bf16_smoke.py")) == ["MP201", "MP202"]
    assert _codes(src, path="checks/bf16_smoke.py") == []


@pytest.mark.parametrize(
    "decorator",
    ["", "@require_torch_gpu", "@pytest.mark.skipif(not torch.cuda.is_available(), reason='needs a GPU')"],
    ids=["none", "require-gpu", "skipif-cuda"],
)
def test_skips_that_do_not_check_the_capability_guard_nothing(decorator):
    src = textwrap.dedent(CHECK).replace("{decorator}", decorator)
    assert sorted(c for c, _ in _codes(src, path="checks/bf16_smoke.py")) == ["MP201", "MP202"]


@pytest.mark.parametrize("decorators,expected", [("@require_torch_bf16_gpu\n@require_flash_attn\n", []), ("", ["MP201", "MP202"])], ids=["decorated", "bare"])
def test_a_class_decorator_guards_its_methods(decorators, expected):
    src = textwrap.dedent(CHECK).replace("{decorator}\ndef check_training():", decorators + "class BF16Checks:\n    def check_training(self):")
    src = src.replace("\n    args", "\n        args").replace("\n    model", "\n        model")
    assert "class BF16Checks" in src
    assert sorted(c for c, _ in _codes(src, path="checks/bf16_smoke.py")) == expected


# --- a helper of another module chooses the dtype ----------------------------------------------------
TRAIN = "import torch\nfrom transformers import AutoModelForCausalLM\nfrom utils import default_dtype\nmodel = AutoModelForCausalLM.from_pretrained('m', torch_dtype=default_dtype())\n"


@pytest.mark.parametrize(
    "utils,expected",
    [
        ("import torch\ndef default_dtype():\n    return torch.bfloat16\n", [("train.py", "MP201")]),
        ("import torch\ndef default_dtype():\n    if torch.cuda.get_device_capability()[0] >= 8:\n        return torch.bfloat16\n    return torch.float16\n", []),
        ("import torch\ndef default_dtype():\n    if torch.cuda.is_bf16_supported():\n        return torch.bfloat16\n    return torch.float16\n", [("utils.py", "MP203")]),
    ],
    ids=["unguarded", "capability-guarded", "emulation-counting-guard"],
)
def test_a_dtype_chosen_by_a_helper_of_another_module(tree, utils, expected):
    from precision_lint.engine import Engine
    from conftest import config

    root = tree({"utils.py": utils, "train.py": TRAIN})
    found = Engine(config(transformers_version="5.23"), ["MP201", "MP203"], jobs=1).run_paths([str(root)]).diagnostics
    assert sorted((d.path.rsplit("/", 1)[-1], d.code) for d in found) == expected


# --- a helper's choice for callers in other files ----------------------------------------------------
@pytest.mark.parametrize("helper", list(HELPERS.values()) + ['\n        def precision():\n            return "bf16-mixed" if torch.cuda.is_bf16_supported() else "16-mixed"\n        '], ids=[*HELPERS, "lightning-string"])
def test_a_helper_returning_bf16_under_an_emulation_counting_probe_is_reported_in_its_own_file(helper):
    src = "import torch\n" + textwrap.dedent(helper)
    found = _codes(src, path="utils.py")
    assert [c for c, _ in found] == ["MP203"]
    assert "is_bf16_supported" in textwrap.dedent(src).lstrip("\n").splitlines()[found[0][1] - 1]


@pytest.mark.parametrize(
    "helper",
    [
        "def batch_size():\n    if torch.cuda.is_bf16_supported():\n        return 16\n    return 8\n",
        "def report():\n    if torch.cuda.is_bf16_supported():\n        print('bf16 supported')\n    return None\n",
        "def default_dtype():\n    if not torch.cuda.is_bf16_supported():\n        return torch.float16\n    return torch.float32\n",
    ],
    ids=["batch-size", "no-return", "fp16-under-probe"],
)
def test_a_helper_whose_probe_returns_no_bf16_is_silent(helper):
    assert _codes("import torch\n" + helper, path="utils.py") == []


# --- MP203 follows the hardware targets ------------------------------------------------------------
PROBED = "import torch\nfrom transformers import AutoModelForCausalLM\n{head}dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16\nmodel = AutoModelForCausalLM.from_pretrained('m', torch_dtype=dtype)\n"


@pytest.mark.parametrize(
    "head,expected",
    [
        ("", ["MP203"]),
        ("# Tested on 8xH100 80GB\n", []),
        ("#SBATCH --gres=gpu:a100:8\n", []),
        ("# Tested on an H100 and a T4\n", ["MP203"]),
    ],
    ids=["nothing-stated", "h100-stated", "slurm-a100", "t4-stated"],
)
def test_emulation_matters_only_where_pre_ampere_gpus_are_targeted(head, expected):
    assert [c for c, _ in _codes(PROBED.replace("{head}", head))] == expected


def test_configured_ampere_targets_silence_mp203():
    from conftest import config

    src = PROBED.replace("{head}", "")
    assert [d.code for d in lint(src, "MP203", cfg=config(target_gpus=["a100"], transformers_version="5.23"))] == []
    assert [d.code for d in lint(src, "MP203", cfg=config(target_gpus=["a100", "t4"], transformers_version="5.23"))] == ["MP203"]


# --- an option's default decides only for the value the branch compares with ---------------------------
OPTION_BRANCHES = """
    import argparse, torch
    from transformers import AutoModelForCausalLM
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtype", choices=["float16", "float32", "bfloat16"], default="{default}")
    args = parser.parse_args()
    if args.dtype == "float16":
        dtype = torch.float16
    elif args.dtype {test}:
        dtype = torch.bfloat16
    else:
        dtype = torch.float32
    model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=dtype)
    """


@pytest.mark.parametrize(
    "default,test,expected",
    [
        ("float16", '== "bfloat16"', []),
        ("float32", 'in ("bf16", "bfloat16")', []),
        ("bfloat16", '== "bfloat16"', ["MP201"]),
        ("bf16", 'in ("bf16", "bfloat16")', ["MP201"]),
    ],
    ids=["default-fp16", "default-fp32-in", "default-bf16", "default-bf16-in"],
)
def test_a_branch_on_an_option_is_an_opt_in_unless_its_default_selects_it(default, test, expected):
    src = OPTION_BRANCHES.replace("{default}", default).replace("{test}", test)
    assert [c for c, _ in _codes(src)] == expected
