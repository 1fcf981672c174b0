"""MP202 flash-attention-2-without-capability-guard: before/after, guards, float32 weights, negatives."""
import pytest

from conftest import config, dedent, fix, lint

CODE = "MP202"

FIXES = [
    pytest.param(  # seed 001's model loading, written on an A100
        """
        import torch
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained(
            "Qwen/Qwen2-Audio-7B",
            torch_dtype=torch.float16,
            attn_implementation="flash_attention_2",
        )
        """,
        """
        import torch
        from transformers import AutoModelForCausalLM
        from transformers.utils import is_flash_attn_2_available

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        model = AutoModelForCausalLM.from_pretrained(
            "Qwen/Qwen2-Audio-7B",
            torch_dtype=torch.float16,
            attn_implementation="flash_attention_2" if BF16_OK and is_flash_attn_2_available() else "sdpa",
        )
        """,
        id="from_pretrained",
    ),
    pytest.param(  # the pre-4.36 spelling becomes the attn_implementation it stands for; import torch added
        """
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained("m", use_flash_attention_2=True, torch_dtype="auto")
        """,
        """
        import torch
        from transformers import AutoModelForCausalLM
        from transformers.utils import is_flash_attn_2_available

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        model = AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_2" if BF16_OK and is_flash_attn_2_available() else "sdpa", torch_dtype="auto")
        """,
        # `torch_dtype=` (MP304) was reported before the fix too: with MP202 alone selected it is
        # left to MP304 (the plan fixes only what its own fixes create: fixes/checked.py)
        id="use_flash_attention_2",
    ),
    pytest.param(  # a config, from_config, a single-quoted literal and a variable
        """
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM

        ATTN = 'flash_attention_2'
        config = AutoConfig.from_pretrained("m", attn_implementation=ATTN)
        model = AutoModelForCausalLM.from_config(config, attn_implementation='flash_attention_2', torch_dtype=torch.bfloat16)
        """,
        """
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM
        from transformers.utils import is_flash_attn_2_available

        # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
        BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

        ATTN = ('flash_attention_2' if BF16_OK and is_flash_attn_2_available() else 'sdpa')
        config = AutoConfig.from_pretrained("m", attn_implementation=ATTN)
        model = AutoModelForCausalLM.from_config(config, attn_implementation='flash_attention_2' if BF16_OK and is_flash_attn_2_available() else 'sdpa', torch_dtype=torch.bfloat16 if BF16_OK else torch.float16)
        """,
        # the bf16 weights of the load are not MP201's before the fix: below sm80 the load fails
        # at FlashAttention-2 whatever its dtype. The fix lets that load run there, in bf16, which
        # MP201 then reports: the plan fixes what its own fixes create (fixes/checked.py), here with
        # MP201's float16 fallback, an unsafe fix (without --unsafe-fixes the plan offers none:
        # test_the_attention_fix_waits_for_the_unsafe_dtype_fallback)
        id="config_and_variable",
    ),
]


@pytest.mark.parametrize("before, after", FIXES)
def test_fix(before, after):
    assert lint(before, CODE)
    fixed = fix(before, CODE, unsafe=True)
    assert fixed == dedent(after)
    assert lint(fixed, CODE) == []
    assert fix(fixed, CODE, unsafe=True) == fixed


def test_the_attention_fix_waits_for_the_unsafe_dtype_fallback():
    """FlashAttention-2 and bf16 inference weights in one load: the attention fix lets the load
    run below sm80, in emulated bf16 (MP201's finding, whose float16 fallback is unsafe). Without
    --unsafe-fixes the plan applies neither, and says why."""
    src = "import torch\nfrom transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_2', torch_dtype=torch.bfloat16)\n"
    assert fix(src, CODE) == dedent(src)
    (d,) = lint(src, CODE)
    assert "its result has a new MP201 finding" in d.message


def test_message_names_the_runtime_errors():
    (d,) = lint(
        """
        from transformers import AutoModel
        m = AutoModel.from_pretrained("m", attn_implementation="flash_attention_2")
        """,
        CODE,
    )
    assert "FlashAttention only supports Ampere GPUs or newer" in d.message
    assert "FlashAttention2 has been toggled on" in d.message
    assert (d.span.line, d.span.col) == (2, 35)


def test_float32_weights_without_mixed_precision():
    src = """
    import torch
    from transformers import AutoModelForCausalLM
    native = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8
    model = AutoModelForCausalLM.from_pretrained(
        "m",
        torch_dtype=torch.float32,
        attn_implementation="flash_attention_2" if native else "eager",
    )
    """
    (d,) = lint(src, CODE)
    assert "FlashAttention only support fp16 and bf16 data type" in d.message
    assert d.fix is None
    # under AMP the kernels see fp16/bf16 activations: fine
    trained = dedent(src) + "from transformers import TrainingArguments\n" + 'args = TrainingArguments(output_dir="o", bf16=native)\n'
    assert lint(trained, CODE) == []


def test_unguarded_and_float32_says_both():
    (d,) = lint(
        """
        import torch
        from transformers import AutoModel
        m = AutoModel.from_pretrained("m", attn_implementation="flash_attention_2", dtype=torch.float32)
        """,
        CODE,
    )
    assert "Ampere" in d.message and "fp16 and bf16 data type" in d.message


NEGATIVES = [
    pytest.param(
        """
        import torch
        from transformers import AutoModel
        attn = "flash_attention_2" if torch.cuda.get_device_capability()[0] >= 8 else "sdpa"
        m = AutoModel.from_pretrained("m", attn_implementation=attn, torch_dtype=torch.bfloat16)
        """,
        id="capability_ternary",
    ),
    pytest.param(
        """
        import torch
        from transformers import AutoModel
        if torch.cuda.is_bf16_supported():
            m = AutoModel.from_pretrained("m", attn_implementation="flash_attention_2")
        """,
        id="if_block",
    ),
    pytest.param(
        """
        from transformers import AutoModel
        m = AutoModel.from_pretrained("m", attn_implementation="sdpa")
        n = AutoModel.from_pretrained("m", use_flash_attention_2=False)
        """,
        id="other_attention",
    ),
    pytest.param(
        """
        import argparse
        from transformers import AutoModel
        p = argparse.ArgumentParser()
        p.add_argument("--attn", default="sdpa", choices=["eager", "sdpa", "flash_attention_2"])
        a = p.parse_args()
        m = AutoModel.from_pretrained("m", attn_implementation=a.attn)
        """,
        id="command_line_opt_in",
    ),
    pytest.param(
        """
        from transformers import AutoModel
        m = AutoModel.from_pretrained("m", attn_implementation="flash_attention_2")  # noqa: MP202
        """,
        id="noqa",
    ),
    pytest.param(
        # the `else:` of a switch the code sets on: loaded in no run as shipped (review 24b)
        """
        import torch
        from transformers import AutoModelForCausalLM
        USE_LORA = False
        USE_QLORA = True
        if USE_QLORA or USE_LORA:
            m = AutoModelForCausalLM.from_pretrained("m", dtype=torch.float16)
        else:
            m = AutoModelForCausalLM.from_pretrained("m", dtype=torch.float16, attn_implementation="flash_attention_2")
        """,
        id="branch_switched_off",
    ),
]


@pytest.mark.parametrize("src", NEGATIVES)
def test_not_reported(src):
    assert lint(src, CODE) == []


def test_the_branch_a_switch_selects_is_still_reported():
    """The control of ``branch_switched_off``: with the switch off, the FlashAttention-2 load runs."""
    src = """
        import torch
        from transformers import AutoModelForCausalLM
        USE_QLORA = False
        if USE_QLORA:
            m = AutoModelForCausalLM.from_pretrained("m", dtype=torch.float16)
        else:
            m = AutoModelForCausalLM.from_pretrained("m", dtype=torch.float16, attn_implementation="flash_attention_2")
        """
    assert [d.code for d in lint(src, CODE)] == [CODE]


def test_ampere_only_targets_get_nothing():
    src = """
    from transformers import AutoModel
    m = AutoModel.from_pretrained("m", attn_implementation="flash_attention_2")
    """
    assert len(lint(src, CODE)) == 1
    assert lint(src, CODE, cfg=config(target_gpus=["sm80", "sm90"])) == []
    assert len(lint(src, CODE, cfg=config(target_gpus=["v100", "a100"]))) == 1


@pytest.mark.parametrize("code", ["MP201", "MP202"])
def test_rule_page_example_is_what_the_fix_does(code):
    import re

    from conftest import REPO

    page = (REPO / "rules" / f"{code}.md").read_text(encoding="utf-8")
    before = re.search(r"Before[^\n]*:\n\n```python\n(.*?)```", page, re.S).group(1)
    after = re.search(r"After `precision-lint --fix`:\n\n```python\n(.*?)```", page, re.S).group(1)
    assert lint(before, code)
    assert fix(before, code) == after


ON_A_CONFIG = """
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained("m")
    {setting}
    model = AutoModelForCausalLM.from_config(config)
"""


def test_flash_attention_set_on_a_config_object():
    src = ON_A_CONFIG.format(setting='config._attn_implementation = "flash_attention_2"')
    (d,) = lint(src, CODE)
    assert d.span.line == 5
    fixed = fix(src, CODE)
    assert 'config._attn_implementation = "flash_attention_2" if BF16_OK and is_flash_attn_2_available() else "sdpa"' in fixed
    assert lint(fixed, CODE) == []


@pytest.mark.parametrize(
    "setting",
    [
        'config._attn_implementation = "sdpa"',
        'if torch.cuda.get_device_capability()[0] >= 8:\n    config._attn_implementation = "flash_attention_2"',
        'config.attention_backend = "flash_attention_2"',  # another attribute: not the loader's
    ],
)
def test_a_config_object_without_unguarded_flash_attention(setting):
    src = dedent(ON_A_CONFIG).replace("{setting}", setting)
    assert lint(src, CODE) == []


TRL = """
    from trl import SFTConfig, SFTTrainer

    args = SFTConfig(output_dir="o", model_init_kwargs={{"attn_implementation": {attn}}})
    SFTTrainer(model="m", args=args, train_dataset=ds).train()
"""


def test_flash_attention_in_the_model_init_kwargs_of_a_trl_config():
    src = TRL.format(attn='"flash_attention_2"')
    (d,) = lint(src, CODE)
    assert d.span.line == 3
    assert '"attn_implementation": "flash_attention_2" if BF16_OK and is_flash_attn_2_available() else "sdpa"' in fix(src, CODE)
    assert lint(TRL.format(attn='"sdpa"'), CODE) == []


# --- FlashAttention-2 switched on once `import flash_attn` succeeded (review 13, S4) ----------------
@pytest.mark.parametrize(
    "src",
    [
        # a config class: the attribute set in the body of the try that imports the package
        """
        from transformers import PretrainedConfig


        class TinyConfig(PretrainedConfig):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                try:
                    import flash_attn  # noqa: F401

                    self._attn_implementation = "flash_attention_2"
                except ImportError:
                    pass
        """,
        # a loader in the try's else, after `from flash_attn import ...` (ModuleNotFoundError caught)
        """
        import torch
        from transformers import AutoModelForCausalLM

        try:
            from flash_attn.bert_padding import pad_input  # noqa: F401
        except ModuleNotFoundError:
            model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16)
        else:
            model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16, attn_implementation="flash_attention_2")
        """,
    ],
    ids=["config-in-try-body", "loader-in-try-else"],
)
def test_after_a_guarded_flash_attn_import_only_the_kernel_error_is_claimed(src):
    (d,) = lint(src, CODE)
    assert "FlashAttention only supports Ampere GPUs or newer" in d.message
    assert "toggled on" not in d.message and "doesn't seem to be installed" not in d.message


GUARDS = """
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained("m")
    use_fa = config.use_cache
    {body}
"""


@pytest.mark.parametrize(
    "body",
    [
        # the handler swallows the failure and the setting runs after the try: the package may be missing
        'try:\n    import flash_attn  # noqa: F401\nexcept ImportError:\n    pass\nconfig._attn_implementation = "flash_attention_2"',
        # the setting comes before the import
        'try:\n    config._attn_implementation = "flash_attention_2"\n    import flash_attn  # noqa: F401\nexcept ImportError:\n    pass',
        # another package's import guards nothing about flash-attn
        'try:\n    import xformers  # noqa: F401\n\n    config._attn_implementation = "flash_attention_2"\nexcept ImportError:\n    pass',
        # the handler catches another error: the import's failure is not an availability test
        'try:\n    import flash_attn  # noqa: F401\n\n    config._attn_implementation = "flash_attention_2"\nexcept ValueError:\n    pass',
        # the import in one branch, the setting outside it
        'try:\n    if use_fa:\n        import flash_attn  # noqa: F401\n    config._attn_implementation = "flash_attention_2"\nexcept ImportError:\n    pass',
    ],
    ids=["after-the-try", "before-the-import", "other-package", "other-error", "other-branch"],
)
def test_a_setting_not_behind_the_flash_attn_import_keeps_the_import_error(body):
    (d,) = lint(dedent(GUARDS).replace("{body}", body), CODE)
    assert "FlashAttention2 has been toggled on" in d.message and "Ampere GPUs or newer" in d.message


# --- FlashAttention-2 chosen in the branch of a test that found the package (held-out review 34) ----
PACKAGE_TEST = """
    import importlib.util
    from importlib.util import find_spec

    import torch
    from transformers import AutoModelForCausalLM
    from transformers.utils import is_flash_attn_2_available

    use_fa = torch.cuda.device_count() > 1
    {setup}
    model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16, attn_implementation={choice})
"""


@pytest.mark.parametrize(
    "setup, choice",
    [
        ("", '"flash_attention_2" if importlib.util.find_spec("flash_attn") is not None else "sdpa"'),
        ("", '"flash_attention_2" if find_spec("flash_attn") else "sdpa"'),
        ("", '"sdpa" if find_spec("flash_attn") is None else "flash_attention_2"'),
        ("", '"sdpa" if not is_flash_attn_2_available() else "flash_attention_2"'),
        ("", '"flash_attention_2" if use_fa and is_flash_attn_2_available() else "sdpa"'),
        ('HAS_FA = find_spec("flash_attn") is not None', '"flash_attention_2" if HAS_FA else "sdpa"'),
    ],
    ids=["find-spec-is-not-none", "find-spec-truthy", "is-none-else", "not-available-else", "and", "a-name"],
)
def test_behind_a_test_that_found_the_package_only_the_kernel_error_is_claimed(setup, choice):
    (d,) = lint(dedent(PACKAGE_TEST).replace("{setup}", setup).replace("{choice}", choice), CODE)
    assert "FlashAttention only supports Ampere GPUs or newer" in d.message
    assert "doesn't seem to be installed" not in d.message


@pytest.mark.parametrize(
    "setup, choice",
    [
        # the branch where the package was not found
        ("", '"flash_attention_2" if find_spec("flash_attn") is None else "sdpa"'),
        # another package
        ("", '"flash_attention_2" if find_spec("xformers") is not None else "sdpa"'),
        # `or`: the branch runs also where the package is missing
        ("", '"flash_attention_2" if use_fa or is_flash_attn_2_available() else "sdpa"'),
        # a name bound twice: which binding reaches the test is not one package test
        ('HAS_FA = find_spec("flash_attn") is not None\nif use_fa:\n    HAS_FA = True', '"flash_attention_2" if HAS_FA else "sdpa"'),
    ],
    ids=["not-found-branch", "other-package", "or", "a-name-bound-twice"],
)
def test_a_test_that_does_not_find_the_package_keeps_the_import_error(setup, choice):
    (d,) = lint(dedent(PACKAGE_TEST).replace("{setup}", setup).replace("{choice}", choice), CODE)
    assert "FlashAttention2 has been toggled on" in d.message and "Ampere GPUs or newer" in d.message
