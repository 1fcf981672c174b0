"""The library table is checked against the installed libraries, so it cannot rot."""
import importlib

import pytest

from precision_lint.knowledge import derives_from, library_bases, patched_keywords


def _resolve(qualname):
    module, _, name = qualname.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name, None)
    except Exception:  # noqa: BLE001 - optional heavy libraries (unsloth needs a GPU)
        return None


@pytest.mark.parametrize("library_class, bases", sorted(library_bases().items()))
def test_each_row_matches_the_installed_library(library_class, bases):
    pytest.importorskip(library_class.split(".")[0])
    cls = _resolve(library_class)
    if cls is None:
        pytest.skip(f"{library_class} is not in the installed version")
    for base in bases:
        base_cls = _resolve(base)
        if base_cls is None:
            pytest.skip(f"{base} is not in the installed version")
        assert issubclass(cls, base_cls), f"{library_class} does not derive from {base}"


def test_training_configs_and_other_configs():
    assert derives_from("trl.GRPOConfig", "transformers.TrainingArguments")
    assert derives_from("trl.trainer.gkd_config.GKDConfig", "transformers.TrainingArguments")
    assert not derives_from("trl.MergeConfig", "transformers.TrainingArguments")
    assert not derives_from("trl.ModelConfig", "transformers.TrainingArguments")


def test_patches_need_the_patching_library():
    assert patched_keywords(["unsloth", "trl"], "trl.SFTTrainer") == ("tokenizer",)
    assert patched_keywords(["trl"], "trl.SFTTrainer") == ()
    assert patched_keywords(["unsloth"], "transformers.Trainer") == ()


def test_bf16_defaults_match_the_installed_trl():
    """TRL configs listed as `bf16 = not fp16` have a None default that their __post_init__ turns
    on; TrainingArguments' own default is off; a project class is not judged."""
    import dataclasses

    from precision_lint.knowledge import _table, bf16_default_on

    pytest.importorskip("trl")
    listed = _table("libraries.toml")["bf16_defaults"]["not_fp16"]
    for name in listed:
        cls = _resolve(name)
        if cls is None:
            continue
        (field,) = [f for f in dataclasses.fields(cls) if f.name == "bf16"]
        assert field.default is None, f"{name}.bf16 defaults to {field.default!r}"
        assert bf16_default_on(name)
    assert bf16_default_on("trl.trainer.gkd_config.GKDConfig")  # a subclass of SFTConfig
    assert bf16_default_on("transformers.TrainingArguments") is False
    assert bf16_default_on("train.MyConfig") is None


def test_model_init_configs_match_the_installed_trl():
    """Every TRL config listed under [model_init] has the keyword the table names, and every
    TRL training config that has it is listed (or derives from one that is)."""
    import dataclasses

    from precision_lint.knowledge import _table, model_init_keyword

    trl = pytest.importorskip("trl")
    table = _table("libraries.toml")["model_init"]
    for name in table["configs"]:
        cls = _resolve(name)
        assert cls is not None, f"{name} is not in the installed trl"
        assert table["keyword"] in {f.name for f in dataclasses.fields(cls)}
        assert model_init_keyword(name) == "model_init_kwargs"
    for name in dir(trl):
        cls = getattr(trl, name, None)
        if name.endswith("Config") and dataclasses.is_dataclass(cls):
            if table["keyword"] in {f.name for f in dataclasses.fields(cls)}:
                assert model_init_keyword(f"trl.{name}"), f"trl.{name} takes model_init_kwargs"
    assert model_init_keyword("transformers.TrainingArguments") is None
    assert model_init_keyword("train.MyConfig") is None
