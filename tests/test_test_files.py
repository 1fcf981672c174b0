"""Test code is not a training entry point: the portability rules (MP2xx) stay silent in test
files by default (`test-files`), every other rule still reports there."""
import pytest

from conftest import config, dedent

from precision_lint.workspace.config import ConfigError, from_table, parse_gpu
from precision_lint.engine import check_source

BF16_AND_TOKENIZER = """
    import torch
    from transformers import Trainer, TrainingArguments
    args = TrainingArguments(output_dir="o", bf16=True)
    Trainer(model=m, args=args, tokenizer=tok)
    """


def _codes(path, cfg=None):
    cfg = cfg or config(transformers_version="5.23")
    return sorted(d.code for d in check_source(dedent(BF16_AND_TOKENIZER), path=path, config=cfg))


@pytest.mark.parametrize("path", ["tests/test_train.py", "pkg/tests/helpers.py", "test_bf16.py", "trainer_test.py", "conftest.py"])
def test_portability_rules_are_silent_in_test_files(path):
    assert _codes(path) == ["MP301"]


def test_training_scripts_are_judged_as_before():
    assert _codes("scripts/train.py") == ["MP201", "MP301"]


def test_test_files_can_be_linted_like_any_code():
    cfg = from_table({"test-files": [], "transformers-version": "5.23"}, "test")
    assert _codes("tests/test_train.py", cfg) == ["MP201", "MP301"]


def test_test_files_must_be_strings():
    with pytest.raises(ConfigError, match="test-files"):
        from_table({"test-files": 3}, "test")


@pytest.mark.parametrize(
    "name, capability",
    [("sm80", 80), ("sm_86", 86), ("sm75", 75), ("sm100", 100), ("sm_120", 120), ("t4", 75), ("b200", 100)],
)
def test_gpu_names_parse_to_their_capability(name, capability):  # A10: sm100 was read as 10
    assert parse_gpu(name) == capability
