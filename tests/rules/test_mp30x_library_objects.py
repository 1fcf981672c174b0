"""MP302 / MP304 on attributes of library objects known by how they are made: accelerate's
``use_fp16`` (gone in accelerate 1.0) on an ``Accelerator`` or its ``AcceleratorState``, TRL's
``ModelConfig.torch_dtype`` (renamed ``dtype``, gone in TRL 0.27) on a ``ModelConfig`` that an
annotation, a constructor or a parser's dataclass list says it is; and TRL's removed
``setup_chat_format`` import. Never by a variable's name: a project's own ``use_fp16`` or
``torch_dtype`` field is not the library's."""
import pytest

from conftest import config, dedent, fix, lint, write_tree

NEW = config(transformers_version="5.23", trl_version="1.16")


def found(src, code="MP302", cfg=NEW, path="train.py"):
    return [(d.span.line, d.message.split("`")[1]) for d in lint(src, code, cfg, path=path)]


@pytest.fixture
def accelerate_1(tmp_path):
    """A file of a project that requires accelerate 1.x (accelerate has no configuration key:
    a file of this repository would target its own pin)."""
    write_tree(tmp_path, {"setup.py": "", "requirements.txt": "accelerate>=1.0\n"})
    return str(tmp_path / "train.py")


def run_tree(tmp_path, files, select=("MP302", "MP304")):
    from precision_lint.engine import Engine
    from precision_lint.workspace.config import load

    root = write_tree(tmp_path, {"setup.py": "", **files})
    cfg = load(start=[str(root)])
    return [(d.code, d.span.line) for d in Engine(cfg, list(select), jobs=1).run_paths([str(root)]).diagnostics]


# --- accelerate: use_fp16 -------------------------------------------------------------------------
ACCELERATE = """
    import torch
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState

    accelerator = Accelerator()
    pad_to = 8 if accelerator.use_fp16 else None
    if accelerator.state.use_fp16:
        pass
    print(AcceleratorState().use_fp16)

    class Runner:
        def __init__(self):
            self.accelerator = Accelerator(mixed_precision="fp16")

        def go(self):
            return self.accelerator.use_fp16

    def helper(acc: Accelerator):
        return acc.use_fp16
    """


def test_use_fp16_on_every_way_an_accelerator_is_made(accelerate_1):
    assert found(ACCELERATE, path=accelerate_1) == [
        (6, "accelerator.use_fp16"), (7, "accelerator.state.use_fp16"), (9, "AcceleratorState().use_fp16"),
        (16, "self.accelerator.use_fp16"), (19, "acc.use_fp16"),
    ]
    (first, state) = [d.message for d in lint(ACCELERATE, "MP302", NEW, path=accelerate_1)][:2]
    assert "was removed in accelerate 1.0" in first
    assert "AttributeError: 'Accelerator' object has no attribute 'use_fp16'" in first
    assert "AttributeError: 'AcceleratorState' object has no attribute 'use_fp16'" in state
    assert 'mixed_precision == "fp16"' in first


def test_use_fp16_is_report_only(accelerate_1):
    """use_fp16 was true under bf16 too (`mixed_precision != "no"`): no rename to the replacement."""
    assert fix(ACCELERATE, "MP302", NEW, unsafe=True, path=accelerate_1) == dedent(ACCELERATE)


def test_use_fp16_of_other_objects_is_not_accelerates(accelerate_1):
    src = """
        import argparse
        from dataclasses import dataclass

        @dataclass
        class TrainConfig:
            use_fp16: bool = True

        class Accelerator:  # the project's own class of that name
            use_fp16 = False

        parser = argparse.ArgumentParser()
        parser.add_argument("--use_fp16", action="store_true")
        args = parser.parse_args()
        cfg = TrainConfig()
        mine = Accelerator()
        print(args.use_fp16, cfg.use_fp16, mine.use_fp16)

        def helper(accelerator):
            return accelerator.use_fp16  # a parameter nothing says is an Accelerator
        """
    assert [d for d in lint(src, None, NEW, path=accelerate_1) if d.code in ("MP302", "MP304")] == []


ACCELERATE_SCRIPT = "from accelerate import Accelerator\naccelerator = Accelerator()\nprint(accelerator.use_fp16)\n"


@pytest.mark.parametrize(
    "pin, expected",
    [
        ("accelerate>=1.0", [("MP302", 3)]),
        ("accelerate", [("MP302", 3)]),  # unpinned: the installed (1.x) or the newest
        ("accelerate==0.34.2", [("MP304", 3)]),  # warns (FutureWarning) from 0.17 on
        ("accelerate<1.0", [("MP304", 3)]),  # never crashes there; warns from 0.17 on
        ("accelerate>=0.20", [("MP304", 3)]),  # crashes only from 1.0 on
        ("accelerate==0.15.0", []),  # before the deprecation
    ],
)
def test_use_fp16_gated_on_the_projects_accelerate_pin(tmp_path, pin, expected):
    assert run_tree(tmp_path, {"requirements.txt": f"{pin}\n", "train.py": ACCELERATE_SCRIPT}) == expected


# --- TRL: setup_chat_format -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "src, shown",
    [
        ("from trl import setup_chat_format\n", "trl.setup_chat_format"),
        ("from trl.models import setup_chat_format\n", "trl.models.setup_chat_format"),
        ("from trl.models.utils import setup_chat_format\n", "trl.models.utils.setup_chat_format"),
        ("import trl\nm, t = trl.setup_chat_format(m, t)\n", "trl.setup_chat_format"),
    ],
)
def test_setup_chat_format_is_gone_from_trl_0_26(src, shown):
    (d,) = lint(src, "MP302", NEW)
    assert d.message.split("`")[1] == shown and "removed in TRL 0.26" in d.message
    assert "clone_chat_template" in d.message


@pytest.mark.parametrize("version, code", [("0.21", None), ("0.22", "MP304"), ("0.25.1", "MP304"), ("0.26", "MP302")])
def test_setup_chat_format_by_trl_version(version, code):
    cfg = config(trl_version=version)
    src = "from trl import setup_chat_format\n"
    assert [d.code for d in lint(src, None, cfg) if d.code in ("MP302", "MP304")] == ([code] if code else [])


def test_setup_chat_format_under_a_trl_pin(tmp_path):
    src = "from trl import setup_chat_format\n"
    assert run_tree(tmp_path, {"requirements.txt": "trl==0.19.1\n", "sft.py": src}) == []
    assert run_tree(tmp_path / "b", {"requirements.txt": "trl>=0.19.1\n", "sft.py": src}) == [("MP304", 1)]


def test_a_projects_own_setup_chat_format_is_not_trls():
    src = """
        def setup_chat_format(model, tokenizer):
            return model, tokenizer
        from utils import setup_chat_format as other
        """
    assert lint(src, "MP302", NEW) == []


# --- TRL: ModelConfig.torch_dtype -------------------------------------------------------------------
MODEL_CONFIG = """
    import torch
    from transformers import HfArgumentParser
    from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser

    def model_dtype(model_args: ModelConfig):
        if model_args.torch_dtype in ("auto", None):
            return model_args.torch_dtype
        return getattr(torch, model_args.torch_dtype)

    def main(script_args, training_args, model_args):
        return model_args.torch_dtype

    built = ModelConfig(model_name_or_path="m")
    print(built.torch_dtype)
    parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))
    script_args, training_args, model_args = parser.parse_args_and_config()
    main(script_args, training_args, model_args)
    (only,) = HfArgumentParser((ModelConfig,)).parse_args_into_dataclasses()
    print(only.torch_dtype, HfArgumentParser([ScriptArguments, ModelConfig]).parse_args_into_dataclasses()[1].torch_dtype)
    """


def test_model_config_torch_dtype_by_annotation_construction_and_parser():
    got = found(MODEL_CONFIG)
    assert [line for line, _ in got] == [6, 7, 8, 11, 14, 19, 19]
    assert got[0] == (6, "model_args.torch_dtype")
    assert got[-1][1].endswith("parse_args_into_dataclasses()[1].torch_dtype")
    (d, *_) = lint(MODEL_CONFIG, "MP302", NEW)
    assert "was removed in TRL 0.27" in d.message
    assert "AttributeError: 'ModelConfig' object has no attribute 'torch_dtype'" in d.message


def test_model_config_torch_dtype_renamed_to_dtype():
    fixed = fix(MODEL_CONFIG, "MP302", NEW)
    assert ".torch_dtype" not in fixed and fixed.count(".dtype") == 7
    src = "from trl import ModelConfig\nm = ModelConfig(model_name_or_path='m', torch_dtype='bfloat16')\n"
    assert fix(src, "MP302", NEW) == "from trl import ModelConfig\nm = ModelConfig(model_name_or_path='m', dtype='bfloat16')\n"


@pytest.mark.parametrize("version, code", [("0.19.1", None), ("0.22", None), ("0.23", "MP304"), ("0.26.2", "MP304"), ("0.27", "MP302")])
def test_model_config_torch_dtype_by_trl_version(version, code):
    src = "from trl import ModelConfig\ndef f(model_args: ModelConfig):\n    return model_args.torch_dtype\n"
    cfg = config(trl_version=version)
    assert [d.code for d in lint(src, None, cfg) if d.code in ("MP302", "MP304")] == ([code] if code else [])


def test_a_projects_own_torch_dtype_field_is_not_model_configs():
    """The common shape of fine-tuning scripts: their own ``ModelArguments`` dataclass with a
    ``torch_dtype`` field, parsed by HfArgumentParser. Not TRL's ModelConfig, whatever the names."""
    src = """
        from dataclasses import dataclass, field
        from typing import Optional
        from transformers import HfArgumentParser, TrainingArguments
        from trl import ModelConfig, ScriptArguments, TrlParser

        @dataclass
        class ModelArguments:
            torch_dtype: Optional[str] = field(default=None)

        def load(model_args: ModelArguments, model_config):
            return model_args.torch_dtype, model_config.torch_dtype  # nothing says model_config is TRL's

        parser = HfArgumentParser((ModelArguments, TrainingArguments))
        model_args, training_args = parser.parse_args_into_dataclasses()
        print(model_args.torch_dtype)
        script_args, model_config = TrlParser((ScriptArguments, ModelConfig)).parse_args_and_config()
        print(script_args.torch_dtype)  # ScriptArguments, not ModelConfig
        load(model_args, something_else())
        first, *rest = TrlParser((ModelConfig, ScriptArguments)).parse_args_and_config()
        print(rest.torch_dtype)
        """
    assert lint(src, "MP302", NEW) == [] and lint(src, "MP304", NEW) == []
