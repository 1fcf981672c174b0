"""MP304 deprecated-hf-api: names that warn on the targeted version and crash later,
gated both ways, and never renamed to a name the targeted version does not have."""
import pytest

from conftest import config, dedent, fix, lint

CODE = "MP304"


def lint304(src, **versions):
    return lint(src, CODE, config(**versions))


def fix304(src, **versions):
    return fix(src, CODE, config(**versions))


TORCH_DTYPE = """
    import torch
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16)
    """


def test_torch_dtype_is_renamed_where_dtype_exists():
    (d,) = lint304(TORCH_DTYPE, transformers_version="5.23")
    assert "deprecated since transformers 4.56" in d.message
    assert "`torch_dtype` is deprecated! Use `dtype` instead!" in d.message
    assert d.fix is not None and d.fix.applicability == "safe"
    assert fix304(TORCH_DTYPE, transformers_version="4.56") == dedent(TORCH_DTYPE).replace("torch_dtype=", "dtype=")


@pytest.mark.parametrize("version", ["4.46", "4.55.4"])
def test_torch_dtype_is_left_alone_before_dtype_exists(version):
    assert lint304(TORCH_DTYPE, transformers_version=version) == []
    assert fix304(TORCH_DTYPE, transformers_version=version) == dedent(TORCH_DTYPE)


@pytest.mark.parametrize(
    "version, code",
    [("4.46", None), ("5.0", "MP304"), ("5.14", "MP304"), ("5.15", "MP302"), ("5.23", "MP302")],
)
def test_announced_removal_is_deprecated_then_removed(version, code):
    src = "from transformers import TrainingArguments\nTrainingArguments('o', warmup_ratio=0.1)\n"
    found = [d.code for d in lint(src, None, config(transformers_version=version)) if d.code in ("MP302", "MP304")]
    assert found == ([code] if code else [])
    if code == "MP304":
        (d,) = lint304(src, transformers_version=version)
        assert "raises `TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'warmup_ratio'` from transformers 5.15 on" in d.message
        assert fix304(src, transformers_version=version).endswith("warmup_steps=0.1)\n")


def test_trl_config_rename_during_its_deprecation():
    src = "from trl import SFTConfig\nSFTConfig('o', max_seq_length=256)\n"
    assert lint304(src, trl_version="0.15") == []  # before the deprecation: nothing to say
    (d,) = lint304(src, trl_version="0.16")
    assert fix304(src, trl_version="0.16").endswith("max_length=256)\n")
    assert lint304(src, trl_version="0.20") == []  # removed there: MP302's


def test_the_experimental_kto_path_is_deprecated_and_the_stable_one_is_not():
    (d,) = lint304("from trl.experimental.kto import KTOTrainer\n", trl_version="1.16")
    assert "from trl import KTOTrainer, KTOConfig" in d.message and d.fix is None
    assert lint304("from trl import KTOTrainer\n", trl_version="1.16") == []
    assert lint304("from trl.experimental.kto import KTOTrainer\n", trl_version="0.29") == []


def test_pipeline_torch_dtype_too():
    src = "import torch\nfrom transformers import pipeline\npipe = pipeline('text-generation', model='m', torch_dtype=torch.float16)\n"
    (d,) = lint304(src, transformers_version="5.23")
    assert "passed to `pipeline`" in d.message
    assert "dtype=torch.float16)" in fix304(src, transformers_version="5.23")
    assert lint304(src, transformers_version="4.55") == []
