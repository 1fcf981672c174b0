"""MP304 deprecated-hf-api: names that warn on the targeted version and crash later,
gated both ways, and never renamed to a name the targeted version does not have."""
import pytest

from conftest import config, dedent, findings_in, fix, lint, write_tree

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


# The release whose own source first warns (read in the wheels; rows that said "4.0" and the
# audit of review 22): a pin just below it is silent, a pin at it is told.
ARGS = "from transformers import TrainingArguments\nTrainingArguments('o', {})\n"


@pytest.mark.parametrize(
    "library, src, silent, warns",
    [
        ("transformers", ARGS.format("fp16_backend='amp'"), "4.12", "4.13"),
        ("transformers", ARGS.format("adafactor=True"), "4.15", "4.16"),
        ("transformers", ARGS.format("push_to_hub_model_id='m'"), "4.10", "4.11"),
        ("transformers", ARGS.format("tpu_metrics_debug=True"), "4.5", "4.6"),
        ("transformers", ARGS.format("no_cuda=True"), "4.31", "4.32"),
        ("trl", "from trl import SFTConfig\nSFTConfig('o', use_liger=True)\n", "0.15", "0.16"),
        ("trl", "from trl import GRPOConfig\nGRPOConfig('o', wandb_log_unique_prompts=True)\n", "0.25", "0.26"),
        ("trl", "from trl import DPOConfig\nDPOConfig('o', max_target_length=64)\n", "0.10", "0.11"),
        ("trl", "from trl import PPOTrainer\n", "0.23", "0.24"),
    ],
)
def test_a_name_is_deprecated_from_the_release_that_warns(library, src, silent, warns):
    assert lint304(src, **{f"{library}_version": silent}) == []
    (d,) = lint304(src, **{f"{library}_version": warns})
    assert f"deprecated since {'TRL' if library == 'trl' else library} {warns}" in d.message


def test_importing_transformers_adamw_warns_on_no_version_and_fails_from_4_50():
    """Building transformers' AdamW warns from 4.16; importing it never does (review 22's tune
    repository importing it in files that build nothing): the import is told only where it fails."""
    src = "from transformers import AdamW\n"
    assert lint(src, None, config(transformers_version="4.18")) == []
    assert [d.code for d in lint(src, None, config(transformers_version="4.50"))] == ["MP302"]


@pytest.mark.parametrize("version, codes", [("4.21", []), ("4.38.1", ["MP304"]), ("5.0", ["MP302"])])
def test_a_processors_as_target_processor_warns_from_4_22_and_is_gone_from_5(version, codes):
    """Wav2Vec2Processor's context manager for labels, as the tokenizers' as_target_tokenizer
    (the held-out misses of review 22: a pinned 4.38.1 and an unpinned CTC fine-tune)."""
    src = """
        from transformers import Wav2Vec2Processor
        proc = Wav2Vec2Processor.from_pretrained("m")
        with proc.as_target_processor():
            labels = proc("hello").input_ids
        """
    found = lint(src, None, config(transformers_version=version))
    assert [d.code for d in found if d.code in ("MP302", "MP304")] == codes


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



# `load_in_8bit=` / `load_in_4bit=` reach from_pretrained through a **kwargs dict under an
# in-file `require_version` pin (the shape of a model builder pinned to transformers 4.37.2).
# 4.37.2 pops them and builds a BitsAndBytesConfig without any warning; the "arguments are
# deprecated" warning first appears in 4.38.0 (read in both wheels' modeling_utils.py).
LOAD_IN_8BIT_PINNED = """\
import torch
from transformers import AutoModelForCausalLM
from transformers.utils.versions import require_version

require_version("transformers=={version}")


def load(path, load_8bit=False, load_4bit=False):
    kwargs = {{"device_map": "auto"}}
    if load_8bit:
        kwargs["load_in_8bit"] = True
    elif load_4bit:
        kwargs["load_in_4bit"] = True
    return AutoModelForCausalLM.from_pretrained(path, low_cpu_mem_usage=True, **kwargs)


model = load("some/model", load_8bit=True)
"""


def _lint_pinned(tmp_path, version):
    """The file alone in its repository: its own `require_version` is the only pin."""

    root = write_tree(tmp_path, {".git/HEAD": "", "builder.py": LOAD_IN_8BIT_PINNED.format(version=version)})
    found = findings_in(root, ["MP302", "MP304"])
    return sorted(found, key=lambda d: d.span.start)


@pytest.mark.parametrize("version", ["4.36.2", "4.37.0", "4.37.2"])
def test_load_in_8bit_is_not_deprecated_before_4_38(tmp_path, version):
    assert _lint_pinned(tmp_path, version) == []


@pytest.mark.parametrize("version", ["4.38.0", "4.57.6"])
def test_load_in_8bit_is_deprecated_from_4_38(tmp_path, version):
    found = _lint_pinned(tmp_path, version)
    assert [(d.code, d.message.split("`")[1]) for d in found] == [("MP304", "load_in_8bit"), ("MP304", "load_in_4bit")]
    for d in found:
        assert "deprecated since transformers 4.38 and raises" in d.message
        assert f"(transformers=={version} in require_version(...) in builder.py)" in d.message


# `torch_dtype=` is silent in transformers 5.x where the library pops it "kept for BC" without a
# warning: a model class's own from_pretrained (modeling_utils.py 5.0.0:3902/3932, 5.24.0:
# 4156/4184), and an Auto class's when the value is "auto" (popped before the config is loaded)
# or config= is given (no config is loaded). An Auto class's other calls still warn in 5.24 (the
# config it loads reads its deprecated `torch_dtype` property), as do from_config, pipeline() and
# `config.torch_dtype`. Run in the wheels of 4.55.4, 4.56.0, 4.57.6, 5.0.0, 5.10.0 and 5.24.0.
MODEL_CLASS_DTYPE = """
    import torch
    from transformers import LlamaForCausalLM
    model = LlamaForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16)
    """

AUTO_DTYPE_AUTO = """
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained("m", torch_dtype="auto")
    """

AUTO_DTYPE_WITH_CONFIG = """
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    config = AutoConfig.from_pretrained("m")
    model = AutoModelForCausalLM.from_pretrained("m", config=config, torch_dtype=torch.float16)
    """


@pytest.mark.parametrize("src", [MODEL_CLASS_DTYPE, AUTO_DTYPE_AUTO, AUTO_DTYPE_WITH_CONFIG])
@pytest.mark.parametrize("version", ["4.56", "4.57.1", "4.57.6"])
def test_silently_accepted_torch_dtype_still_warns_on_4_56_and_4_57(src, version):
    (d,) = lint304(src, transformers_version=version)
    assert "deprecated since transformers 4.56 and warns below transformers 5.0" in d.message
    assert "transformers 5.0 and later accept it silently" in d.message
    assert fix304(src, transformers_version=version) == dedent(src).replace("torch_dtype=", "dtype=")


@pytest.mark.parametrize("src", [MODEL_CLASS_DTYPE, AUTO_DTYPE_AUTO, AUTO_DTYPE_WITH_CONFIG])
@pytest.mark.parametrize("version", ["5.0", "5.10.0", "5.23", "5.24"])
def test_silently_accepted_torch_dtype_is_no_finding_on_5_x(src, version):
    assert lint304(src, transformers_version=version) == []


@pytest.mark.parametrize("src", [MODEL_CLASS_DTYPE, AUTO_DTYPE_AUTO])
def test_silently_accepted_torch_dtype_unpinned_with_5_24_installed(tmp_path, src, monkeypatch):
    from precision_lint.workspace import config as config_module

    monkeypatch.setattr(config_module, "installed_version", lambda dist: (5, 24, 0) if dist == "transformers" else None)
    root = write_tree(tmp_path, {".git/HEAD": "", "train.py": dedent(src)})
    found = findings_in(root, [CODE])
    assert found == []


def test_a_project_subclass_of_a_model_class_is_silent_on_5_x():
    src = """
        import torch
        from transformers import LlamaForCausalLM
        class MyModel(LlamaForCausalLM):
            pass
        model = MyModel.from_pretrained("m", torch_dtype=torch.bfloat16)
        """
    assert lint304(src, transformers_version="5.24") == []
    assert len(lint304(src, transformers_version="4.57.1")) == 1


def _lint_in_project(root, files):

    write_tree(root, {".git/HEAD": "", **files})
    return findings_in(root, [CODE])


def test_a_range_whose_newest_version_warns_names_the_versions_that_warn(tmp_path):
    files = {"requirements.txt": "transformers>=4.56,<5\n", "train.py": MODEL_CLASS_DTYPE}
    (d,) = _lint_in_project(tmp_path, files)
    assert "warns below transformers 5.0" in d.message and "5.0 and later accept it silently" in d.message
    assert "transformers>=4.56,<5 in requirements.txt" in d.message
    files = {"requirements.txt": "transformers>=5.0,<6\n", "train.py": MODEL_CLASS_DTYPE}
    assert _lint_in_project(tmp_path / "five", files) == []


# A warning-only finding needs the warning on the version the code plausibly targets: the newest
# its range admits (what a fresh install gets). A range with no upper bound, or one reaching into
# 5.x, installs a silent 5.x today, though older versions it admits (4.56, 4.57) warn.
@pytest.mark.parametrize("src", [MODEL_CLASS_DTYPE, AUTO_DTYPE_AUTO, AUTO_DTYPE_WITH_CONFIG])
@pytest.mark.parametrize("spec", ["transformers>=4.31.0", "transformers>=4.56,<6", "transformers>=4.55.0,<=5.8.0"])
def test_a_range_whose_newest_version_is_silent_is_no_finding(tmp_path, src, spec):
    files = {"pyproject.toml": f'[project]\nname = "p"\ndependencies = ["{spec}"]\n', "train.py": src}
    assert _lint_in_project(tmp_path, files) == []


@pytest.mark.parametrize("src", [MODEL_CLASS_DTYPE, AUTO_DTYPE_AUTO, AUTO_DTYPE_WITH_CONFIG])
@pytest.mark.parametrize("spec", ["transformers>=4.31,<5", "transformers==4.57.1", "transformers>=4.31,<=4.57.6"])
def test_a_range_whose_newest_version_warns_is_a_finding(tmp_path, src, spec):
    files = {"pyproject.toml": f'[project]\nname = "p"\ndependencies = ["{spec}"]\n', "train.py": src}
    (d,) = _lint_in_project(tmp_path, files)
    assert "warns below transformers 5.0" in d.message and "5.0 and later accept it silently" in d.message


def test_a_lower_bound_still_reports_what_the_newest_version_warns_for(tmp_path):
    """An Auto class without `config=` loads a config that warns in 5.24 too: the finding stays."""
    files = {"pyproject.toml": '[project]\nname = "p"\ndependencies = ["transformers>=4.31.0"]\n', "train.py": TORCH_DTYPE}
    (d,) = _lint_in_project(tmp_path, files)
    assert "(it warns: `torch_dtype` is deprecated! Use `dtype` instead!)" in d.message


@pytest.mark.parametrize("version", ["5.0", "5.24"])
def test_auto_class_torch_dtype_still_warns_on_5_x(version):
    (d,) = lint304(TORCH_DTYPE, transformers_version=version)
    assert "(it warns: `torch_dtype` is deprecated! Use `dtype` instead!)" in d.message
    assert "silently" not in d.message


@pytest.mark.parametrize("version", ["4.57.1", "5.24"])
def test_pipeline_and_from_config_torch_dtype_warn_on_5_24(version):
    src = """
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM, pipeline
        pipe = pipeline("text-generation", model="m", torch_dtype=torch.float16)
        config = AutoConfig.from_pretrained("m")
        model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16)
        """
    found = lint304(src, transformers_version=version)
    assert ["`pipeline`" in found[0].message, "`AutoModelForCausalLM.from_config`" in found[1].message] == [True, True]
    assert all("silently" not in d.message for d in found)
    assert lint304(src, transformers_version="4.55.4") == []


def test_config_torch_dtype_read_warns_from_4_56():
    src = """
        import torch
        from transformers import AutoModelForCausalLM
        model = AutoModelForCausalLM.from_pretrained("m", dtype=torch.bfloat16)
        print(model.config.torch_dtype)
        """
    (d,) = lint304(src, transformers_version="5.24")
    assert d.message.startswith("`model.config.torch_dtype` is deprecated since transformers 4.56")
    assert fix304(src, transformers_version="5.24") == dedent(src).replace("config.torch_dtype", "config.dtype")
    assert lint304(src, transformers_version="4.55.4") == []


# --- a fallback that never runs -----------------------------------------------------------------
# `x if args.x is not None else model.config.max_length`: an option no run leaves None makes the
# test always true, so the config is never read there (`Evaluator.certainly`).
FALLBACK = """
    import argparse
    from transformers import AutoModelForSeq2SeqLM

    parser = argparse.ArgumentParser()
    parser.add_argument("--max_length", {option})
    args = parser.parse_args()
    model = AutoModelForSeq2SeqLM.from_pretrained("t5-small")
    {use}
    """
TERNARY = "max_len = args.max_length if args.max_length is not None else model.config.max_length"
IF_NONE = "if args.max_length is None:\n        max_len = model.config.max_length"


def _across_5_0(text):
    """MP304 of ``text`` in a project allowing transformers before and after 5.0 (which removed
    ``config.max_length``): the versions that raise are named, the others warn nothing."""
    import tempfile
    from pathlib import Path


    with tempfile.TemporaryDirectory() as folder:
        root = write_tree(Path(folder), {".git/HEAD": "", "requirements.txt": "transformers>=4.30\n", "train.py": text})
        return findings_in(root, [CODE])


def _fallback(option, use=TERNARY, extra=""):
    return _across_5_0(dedent(FALLBACK.format(option=option, use=use)) + dedent(extra))


@pytest.mark.parametrize("use", [TERNARY, IF_NONE, TERNARY.replace("is not None", "!= None")])
def test_config_max_length_in_a_fallback_an_int_option_never_takes_is_not_reported(use):
    assert _fallback("type=int, default=128", use) == []


@pytest.mark.parametrize(
    "option",
    [
        "type=int, default=None",  # the default leaves it None
        "type=int",  # no default: None
        "type=int, default=128, nargs='?'",  # `--max_length` alone stores const (None)
        "type=lambda v: None if v == 'none' else int(v), default=128",  # a converter may give None
    ],
)
def test_the_fallback_that_may_run_is_still_reported(option):
    (d,) = _fallback(option)
    assert "config.max_length" in d.message


def test_the_fallback_is_reported_where_the_script_sets_the_option_itself():
    assert len(_fallback("type=int, default=128", extra="if args.max_length == 0:\n    args.max_length = None\n")) == 1
    assert len(_fallback("type=int, default=128", extra="parser.set_defaults(max_length=None)\n")) == 1


def test_an_always_true_test_keeps_its_own_branch():
    src = FALLBACK.format(option="type=int, default=128", use="max_len = model.config.max_length if args.max_length is not None else 0")
    assert len(_across_5_0(dedent(src))) == 1


HF_FIELD = """
    from dataclasses import dataclass, field
    from typing import Optional
    from transformers import AutoModelForSeq2SeqLM, HfArgumentParser


    @dataclass
    class DataArguments:
        max_label_length: {annotation} = field(default={default})


    parser = HfArgumentParser((DataArguments,))
    (data_args,) = parser.parse_args_into_dataclasses()
    model = AutoModelForSeq2SeqLM.from_pretrained("t5-small")
    max_len = data_args.max_label_length if data_args.max_label_length is not None else model.config.max_length
    """


def test_a_dataclass_field_the_parser_fills_never_none_keeps_the_fallback_dead():
    assert _across_5_0(dedent(HF_FIELD.format(annotation="int", default="448"))) == []
    assert len(_across_5_0(dedent(HF_FIELD.format(annotation="Optional[int]", default="448")))) == 1
    assert len(_across_5_0(dedent(HF_FIELD.format(annotation="int", default="None")))) == 1


# --- a config keyword's spelling in the targeted version ----------------------------------------
# `SFTTrainer(max_seq_length=)` moves into `SFTConfig`, whose keyword TRL 0.16 renamed `max_length`:
# under an older pin the message and the fix must write the spelling that version has.
SFT = """
    from trl import SFTConfig, SFTTrainer

    args = SFTConfig(output_dir="out")
    trainer = SFTTrainer("m", train_dataset=ds, args=args, max_seq_length=512)
    """


def _sft(tmp_path, pin, fix=False):
    from precision_lint.engine import Engine
    from precision_lint.workspace.config import from_table

    root = write_tree(tmp_path / pin.replace("=", "_").replace(">", "_").replace(",", "_").replace("<", "_"), {
        ".git/HEAD": "", "requirements.txt": f"trl{pin}\n", "train.py": dedent(SFT),
    })
    engine = Engine(from_table({}, "defaults"), [CODE], jobs=1)
    if fix:
        return "".join(engine.run_paths([str(root)], fix=True).fixed_texts.values())
    return engine.run_paths([str(root)]).diagnostics


def test_under_an_old_pin_the_config_keyword_is_spelled_as_that_version_has_it(tmp_path):
    (d,) = _sft(tmp_path, "==0.9.6")
    assert "use SFTConfig(max_seq_length=...) (TRL 0.16 renames it `max_length`)" in d.message
    assert "SFTConfig(max_length=...)" not in d.message and "is new in" not in d.message
    fixed = _sft(tmp_path, "==0.9.6", fix=True)
    assert 'SFTConfig(output_dir="out", max_seq_length=512)' in fixed and "args=args)" in fixed


def test_every_version_below_the_rename_takes_the_old_spelling(tmp_path):
    (d,) = _sft(tmp_path, "==0.12.2")
    assert "use SFTConfig(max_seq_length=...)" in d.message  # 0.12 lacks max_length too
    assert 'SFTConfig(output_dir="out", max_seq_length=512)' in _sft(tmp_path, "==0.12.2", fix=True)
    (d,) = _sft(tmp_path, ">=0.9,<1")  # some allowed versions have it: both are named
    assert "SFTConfig(max_length=...) from it on" in d.message


def test_across_the_rename_both_spellings_are_named_and_nothing_is_moved(tmp_path):
    (d,) = _sft(tmp_path, ">=0.9,<0.13")
    assert "SFTConfig(max_seq_length=...)" in d.message
    (d,) = _sft(tmp_path, ">=0.12,<0.20")
    assert "use SFTConfig(max_seq_length=...) below TRL 0.16, SFTConfig(max_length=...) from it on" in d.message
    assert d.fix is None


def test_a_replacement_newer_than_the_pin_with_no_older_spelling_is_not_suggested():
    from precision_lint.knowledge import Migration
    from precision_lint.rules.migration_findings import advice
    from precision_lint.workspace.versions import Allowed

    row = Migration(
        library="trl", kind="keyword", owner="trl.XTrainer", name="foo", replacement="XConfig(bar=...)", fix="move",
        error="", deprecated_in=(0, 9), removed_in=(0, 13), move_to="trl.XConfig", move_as="bar", move_since=(0, 16),
    )
    said = advice(row, Allowed.point("trl", (0, 9, 6), "requirements.txt"))
    assert said.startswith("its replacement, XConfig(bar=...), is new in TRL 0.16") and "use" not in said
    assert advice(row, Allowed.point("trl", (0, 16), "requirements.txt")) == "use XConfig(bar=...)"


def test_the_message_names_the_file_the_pin_is_in(tmp_path):
    """pyproject.toml's loose range and requirements.txt's pin: the pin decides, and is shown
    in requirements.txt (not in pyproject.toml, the folder's first file)."""
    files = {
        "pyproject.toml": '[project]\nname = "p"\ndependencies = ["transformers>=5.4.0"]\n',
        "requirements.txt": "transformers==5.4.0\n",
        "pkg/train.py": TORCH_DTYPE,
    }
    (d,) = _lint_in_project(tmp_path, files)
    assert "(transformers==5.4.0 in ../requirements.txt)" in d.message
    assert "pyproject.toml" not in d.message


def test_a_keyword_a_helper_hands_to_one_of_several_classes_is_one_finding():
    """``load(path, **kw)`` builds ``LlamaTwin`` or ``MistralTwin`` by the checkpoint: the keyword
    reaches one ``from_pretrained`` whichever it picks, so it is reported once, naming both."""
    src = """
        from transformers import LlamaForCausalLM, MistralForCausalLM

        class LlamaTwin(LlamaForCausalLM):
            pass

        class MistralTwin(MistralForCausalLM):
            pass

        def load(path, **kw):
            if "mistral" in path:
                return MistralTwin.from_pretrained(path, **kw)
            return LlamaTwin.from_pretrained(path, **kw)

        model = load("m", load_in_8bit=True)
        """
    (d,) = lint304(src, transformers_version="4.45")
    assert "hands its **kwargs to `MistralTwin.from_pretrained` (line 11) or `LlamaTwin.from_pretrained` (line 12)" in d.message


SHARED_KWARGS = """
    import torch
    from transformers import LlamaForCausalLM, MistralForCausalLM

    def load(path, llama):
        kwargs = {"device_map": "auto"}
        kwargs["torch_dtype"] = torch.float16
        if llama:
            return LlamaForCausalLM.from_pretrained(path, **kwargs)
        return MistralForCausalLM.from_pretrained(path, **kwargs)
    """


def test_a_dict_key_several_calls_receive_is_one_finding_naming_them():
    """One key, one edit: the calls that receive the dict are named in the one finding."""
    (d,) = lint304(SHARED_KWARGS, transformers_version="4.56")
    assert d.span.line == 6 and "passed to `LlamaForCausalLM.from_pretrained`" in d.message
    assert d.message.endswith("(the dict goes to `MistralForCausalLM.from_pretrained` (line 9) too)")
    assert fix304(SHARED_KWARGS, transformers_version="4.56") == dedent(SHARED_KWARGS).replace('kwargs["torch_dtype"]', 'kwargs["dtype"]')


RETURN_ALL_SCORES = """\
from transformers import pipeline

classify = pipeline("text-classification", model="m", return_all_scores=True)
"""


@pytest.mark.parametrize("version, warns", [("4.20", False), ("4.25", True), ("4.48.2", True), ("4.57.1", True), ("5.0", False), ("5.24", False)])
def test_return_all_scores_warns_from_4_25_and_is_ignored_from_5(version, warns):
    """Held-out 27's SentimentAnalysis (transformers 4.48-4.50): the text-classification pipeline
    warns for `return_all_scores=` from 4.25 (read in the wheels), and from 5.0 takes it into the
    tokenizer's keywords: no warning, and only the top label comes back."""
    found = lint304(RETURN_ALL_SCORES, transformers_version=version)
    assert len(found) == (1 if warns else 0)
    if warns:
        (d,) = found
        assert "`return_all_scores=` passed to `pipeline` is deprecated since transformers 4.25" in d.message
        assert "ignore it (the pipeline gives the top label alone" in d.message and "top_k=None" in d.message
        assert d.fix is None


AUTO_BY_DEFAULT = """
from transformers import AutoModelForCausalLM


def load(name, torch_dtype="auto"):
    return AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch_dtype)


model = load("gpt2"{passed})
"""


@pytest.mark.parametrize("passed, reported", [("", False), (', torch_dtype="auto"', False), (", torch_dtype=torch.float16", True)])
def test_a_parameter_that_is_auto_in_every_call_is_auto(passed, reported):
    """``torch_dtype=torch_dtype`` of a parameter whose default is ``"auto"`` and that no caller
    passes otherwise: transformers 5.x pops ``"auto"`` silently, as the literal (held-out 44u's F2)."""
    src = ("import torch\n" if "torch." in passed else "") + AUTO_BY_DEFAULT.format(passed=passed)
    assert bool(lint304(src, transformers_version="5.24")) is reported
