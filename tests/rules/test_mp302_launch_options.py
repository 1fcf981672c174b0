"""MP302 / MP304: removed TrainingArguments options that a shipped launcher passes a script.

``HfArgumentParser((ModelArguments, DataArguments, TrainingArguments)).parse_args_into_dataclasses()``
reads the script's command line: an option none of the dataclasses has is left over by argparse,
and the parse stops the run with ``ValueError: Some specified arguments are not used by the
HfArgumentParser: ['--evaluation_strategy', 'steps']`` (transformers 4.51 and later, where
``evaluation_strategy`` is gone). The finding is in the launcher, at the option; which options a
launch passes: ``project/launched_options.py``."""
import json

import pytest
from conftest import config, run_cli, write_tree

from precision_lint.engine import Engine

SCRIPT = """
    from dataclasses import dataclass, field

    from transformers import HfArgumentParser, Trainer, TrainingArguments


    @dataclass
    class ModelArguments:
        model_name_or_path: str = field(default="gpt2")


    @dataclass
    class DataArguments:
        data_path: str = field(default=None)


    def main():
        parser = HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
        model_args, data_args, training_args = parser.parse_args_into_dataclasses()
        Trainer(model=None, args=training_args).train()


    if __name__ == "__main__":
        main()
    """
PARSE_LINE = 18

LAUNCHER = """
    #!/bin/bash
    STRAT=steps
    torchrun --nproc_per_node=8 train.py \\
        --model_name_or_path gpt2 \\
        --output_dir out \\
        --evaluation_strategy "steps" \\
        --learning_rate 2e-5 \\
        --per_gpu_train_batch_size=4 \\
        --bf16 True
    """
ERROR = (
    "ValueError: Some specified arguments are not used by the HfArgumentParser: "
    "['--evaluation_strategy', 'steps', '--per_gpu_train_batch_size=4']"
)


def _run(root, monkeypatch, codes=("MP302", "MP304"), cfg=None):
    monkeypatch.chdir(root)
    return Engine(cfg or config(), list(codes), jobs=1).run_paths(["."]).diagnostics


def _text_at(root, d) -> str:
    return (root / d.path).read_text()[d.span.start : d.span.end]


def test_a_removed_option_a_launcher_passes_is_reported_there(tmp_path, monkeypatch):
    write_tree(tmp_path, {"train.py": SCRIPT, "train.sh": LAUNCHER, "requirements.txt": "transformers==5.2.0\n"})
    found = _run(tmp_path, monkeypatch)
    assert [(d.code, d.path, d.span.line) for d in found] == [("MP302", "train.sh", 6), ("MP302", "train.sh", 8)]
    first, second = found
    assert _text_at(tmp_path, first) == '--evaluation_strategy "steps"'
    assert _text_at(tmp_path, second) == "--per_gpu_train_batch_size"
    assert first.message.startswith(
        f"train.py reads `--evaluation_strategy` as a field of `TrainingArguments` (`parse_args_into_dataclasses`, line {PARSE_LINE}), "
        "where it was removed in transformers 4.51 and raises "
    )
    # the words the parser leaves over, as the ValueError lists them (every removed option of the launch)
    assert f"`{ERROR}`" in first.message and f"`{ERROR}`" in second.message
    assert "(transformers==5.2.0 in requirements.txt)" in first.message and first.message.endswith("pass `--eval_strategy` instead")
    assert second.message.endswith("pass `--per_device_train_batch_size` instead")
    assert first.fix is None  # the engine rewrites Python files only
    assert [(r.path, r.span.line) for r in first.related] == [("train.py", PARSE_LINE)]


def test_a_pin_below_the_removal_is_the_deprecation_and_below_that_nothing(tmp_path, monkeypatch):
    files = {"train.py": SCRIPT, "train.sh": LAUNCHER}
    write_tree(tmp_path, {**files, "requirements.txt": "transformers==4.45.2\n"})
    found = _run(tmp_path, monkeypatch)
    # per_gpu_train_batch_size is deprecated since 2.11 (removed in 5.0), evaluation_strategy since 4.41
    assert [(d.code, d.span.line) for d in found] == [("MP304", 6), ("MP304", 8)]
    assert "is deprecated since transformers 4.41 and raises `ValueError: Some specified arguments are not used by the HfArgumentParser: ['--evaluation_strategy', 'steps']` from transformers 4.51 on" in found[0].message
    write_tree(tmp_path, {"requirements.txt": "transformers==2.10.0\n"})  # before either was deprecated
    assert _run(tmp_path, monkeypatch) == []


@pytest.mark.parametrize(
    "shape",
    [
        "model_field",  # a field of the script's own ModelArguments takes the option
        "add_argument",  # the code adds the option to the parser itself
        "prefix",  # the option begins a field of the script's own: argparse reads it as that one
        "caught",  # the script expects the failure
        "own_args",  # the parse reads a list of its own, not the command line
        "other_script",  # the launcher runs another script
    ],
)
def test_options_the_parser_takes_or_never_sees_are_left_alone(tmp_path, monkeypatch, shape):
    script, launcher = SCRIPT, LAUNCHER.replace("    --per_gpu_train_batch_size=4 \\\n", "")
    if shape == "model_field":
        script = script.replace('model_name_or_path: str = field(default="gpt2")', 'model_name_or_path: str = field(default="gpt2")\n        evaluation_strategy: str = "no"')
    elif shape == "add_argument":
        script = script.replace("        model_args, data_args", '        parser.add_argument("--evaluation_strategy", type=str)\n        model_args, data_args')
    elif shape == "prefix":
        script = script.replace('data_path: str = field(default=None)', 'data_path: str = field(default=None)\n        evaluation_strategy_for_data: str = "no"')
    elif shape == "caught":
        script = script.replace(
            "        model_args, data_args, training_args = parser.parse_args_into_dataclasses()",
            "        try:\n            model_args, data_args, training_args = parser.parse_args_into_dataclasses()\n"
            "        except ValueError:\n            raise SystemExit('old options: see the README')",
        )
    elif shape == "own_args":
        script = script.replace("parser.parse_args_into_dataclasses()", 'parser.parse_args_into_dataclasses(args=["--output_dir", "out"])')
    else:
        launcher = launcher.replace(" train.py ", " evaluate.py ")
    assert "--evaluation_strategy" in launcher
    write_tree(tmp_path, {"train.py": script, "evaluate.py": "print(1)\n", "train.sh": launcher})
    compile((tmp_path / "train.py").read_text(), "train.py", "exec")
    assert _run(tmp_path, monkeypatch) == [], shape


def test_the_command_line_handed_over_as_it_is(tmp_path, monkeypatch):
    script = SCRIPT.replace("from dataclasses", "import sys\n    from dataclasses").replace(
        "parser.parse_args_into_dataclasses()", "parser.parse_args_into_dataclasses(args=sys.argv[1:])"
    )
    write_tree(tmp_path, {"train.py": script, "train.sh": LAUNCHER})
    assert [d.span.line for d in _run(tmp_path, monkeypatch)] == [6, 8]


def test_return_remaining_strings_hands_the_option_back_and_the_run_goes_on(tmp_path, monkeypatch):
    script = SCRIPT.replace(
        "model_args, data_args, training_args = parser.parse_args_into_dataclasses()",
        "model_args, data_args, training_args, rest = parser.parse_args_into_dataclasses(return_remaining_strings=True)",
    )
    write_tree(tmp_path, {"train.py": script, "train.sh": LAUNCHER})
    found = _run(tmp_path, monkeypatch)
    assert [d.span.line for d in found] == [6, 8]
    assert "ValueError" not in found[0].message
    assert (
        "where it was removed in transformers 4.51: `parse_args_into_dataclasses(return_remaining_strings=True)` hands it back "
        "among the remaining strings and the run goes on without it; pass `--eval_strategy` instead"
    ) in found[0].message
    # not known whether the strings are handed back: nothing said
    write_tree(tmp_path, {"train.py": script.replace("return_remaining_strings=True", "return_remaining_strings=KEEP").replace("def main():", "KEEP = bool(len(__name__))\n\n\n    def main():")})
    assert _run(tmp_path, monkeypatch) == []


def test_spellings_of_an_option_and_a_shell_variable_for_its_value(tmp_path, monkeypatch):
    launcher = """
        STRAT=$1
        python train.py --output_dir out --evaluation-strategy $STRAT --no_cuda
        """
    write_tree(tmp_path, {"train.py": SCRIPT, "run.sh": launcher})
    found = _run(tmp_path, monkeypatch)
    assert [(d.span.line, _text_at(tmp_path, d)) for d in found] == [(2, "--evaluation-strategy $STRAT"), (2, "--no_cuda")]
    assert "`ValueError: Some specified arguments are not used by the HfArgumentParser: ['--evaluation-strategy', <$STRAT>, '--no_cuda']`" in found[0].message
    assert "reads `--evaluation-strategy` as a field of `TrainingArguments`" in found[0].message


def test_library_options_a_removed_name_abbreviates_are_accepted(tmp_path, monkeypatch):
    # TRL's SFTConfig: `--use_liger` is a unique prefix of `--use_liger_kernel` (argparse takes it as
    # that one); `--max_seq_length` begins no option of it (removed in TRL 0.20)
    script = """
        from dataclasses import dataclass

        from trl import SFTConfig, TrlParser


        @dataclass
        class ScriptArguments:
            dataset_name: str = "imdb"


        parser = TrlParser((ScriptArguments, SFTConfig))
        script_args, training_args = parser.parse_args_and_config()
        """
    launcher = "accelerate launch sft.py --dataset_name imdb --use_liger true --max_seq_length 512\n"
    write_tree(tmp_path, {"sft.py": script, "run.sh": launcher, "requirements.txt": "trl==0.21.0\n"})
    (d,) = _run(tmp_path, monkeypatch)
    assert _text_at(tmp_path, d) == "--max_seq_length 512" and "was removed in TRL 0.20" in d.message
    assert "['--max_seq_length', '512']" in d.message and "reads `--max_seq_length` as a field of `SFTConfig` (`parse_args_and_config`" in d.message


def test_the_launchers_own_options_are_not_the_scripts(tmp_path, monkeypatch):
    # `accelerate launch --fsdp_transformer_layer_cls_to_wrap` is accelerate's; after the script, the script's
    launcher = "accelerate launch --use_fsdp --fsdp_transformer_layer_cls_to_wrap LlamaDecoderLayer train.py --fsdp_transformer_layer_cls_to_wrap LlamaDecoderLayer --output_dir o\n"
    write_tree(tmp_path, {"train.py": SCRIPT, "run.sh": launcher})
    (d,) = _run(tmp_path, monkeypatch)
    assert d.span.col == launcher.rindex("--fsdp_transformer_layer_cls_to_wrap") and "was removed in transformers 5.0" in d.message


def test_a_parse_in_a_helper_module_reads_what_the_launch_of_its_script_passes(tmp_path, monkeypatch):
    helper = """
        from transformers import HfArgumentParser, TrainingArguments


        def read_arguments():
            return HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()
        """
    script = """
        from helpers.arguments import read_arguments

        (targs,) = read_arguments()
        """
    write_tree(
        tmp_path,
        {"helpers/__init__.py": "", "helpers/arguments.py": helper, "train.py": script, "run.sh": "python train.py --output_dir o --no_cuda\n"},
    )
    (d,) = _run(tmp_path, monkeypatch)
    assert d.path == "run.sh" and d.message.startswith(
        "helpers/arguments.py reads `--no_cuda` as a field of `TrainingArguments` (`parse_args_into_dataclasses`, line 5, in the run of train.py)"
    )
    assert d.message.endswith("pass `--use_cpu` instead")


def test_noqa_on_the_line_that_ends_the_command_and_per_file_ignores(tmp_path, monkeypatch):
    write_tree(tmp_path, {"train.py": SCRIPT, "train.sh": LAUNCHER})
    assert len(_run(tmp_path, monkeypatch)) == 2
    assert _run(tmp_path, monkeypatch, cfg=config(per_file_ignores={"*.sh": ["MP302"]})) == []
    assert _run(tmp_path, monkeypatch, cfg=config(exclude=["train.sh"])) == []
    write_tree(tmp_path, {"train.sh": LAUNCHER.replace("--bf16 True", "--bf16 True  # noqa: MP302")})
    assert _run(tmp_path, monkeypatch) == []
    write_tree(tmp_path, {"train.sh": LAUNCHER.replace("--bf16 True", "--bf16 True  # noqa: MP201")})
    assert len(_run(tmp_path, monkeypatch)) == 2
    # a one-line command: its own line
    write_tree(tmp_path, {"train.sh": "python train.py --output_dir o --no_cuda  # noqa: MP302\n"})
    assert _run(tmp_path, monkeypatch) == []


def test_reporters_and_add_noqa_with_a_finding_in_a_launcher(tmp_path):
    write_tree(tmp_path, {"train.py": SCRIPT, "train.sh": LAUNCHER})
    full = run_cli(".", "--no-cache", "--select", "MP302", cwd=tmp_path)
    assert "train.sh:6:5: MP302" in full.stdout and '--evaluation_strategy "steps" \\' in full.stdout
    sarif = json.loads(run_cli(".", "--no-cache", "--select", "MP302", "--output-format", "sarif", cwd=tmp_path).stdout)
    result = sarif["runs"][0]["results"][0]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "train.sh" and location["region"]["startLine"] == 6
    assert result["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "train.py"
    before = (tmp_path / "train.sh").read_text()
    added = run_cli(".", "--no-cache", "--select", "MP302", "--add-noqa", cwd=tmp_path)
    assert added.returncode == 0 and "no noqa comments added: a launch script" in added.stderr
    assert (tmp_path / "train.sh").read_text() == before


@pytest.mark.parametrize("pin", ["4.28.1", "4.33.0"])
def test_a_deprecated_fsdp_option_is_told_what_a_command_line_passes_instead(tmp_path, monkeypatch, pin):
    """`--fsdp_transformer_layer_cls_to_wrap` warns from transformers 4.27 (FutureWarning: "using
    `--fsdp_transformer_layer_cls_to_wrap` is deprecated. Use fsdp_config instead"); on a command
    line `--fsdp_config` takes the path of a JSON file, and its key keeps the `fsdp_` prefix that
    4.27 to 4.29 read (later versions strip it). The advice names that key alone, not the other
    FSDP option's."""
    launcher = "torchrun train.py --fsdp 'full_shard auto_wrap' --fsdp_transformer_layer_cls_to_wrap LlamaDecoderLayer --output_dir o\n"
    write_tree(tmp_path, {"train.py": SCRIPT, "run.sh": launcher, "requirements.txt": f"transformers=={pin}\n"})
    (d,) = _run(tmp_path, monkeypatch)
    assert d.code == "MP304" and "deprecated since transformers 4.27" in d.message
    assert d.message.endswith(
        'pass `--fsdp_config` with the path of a JSON file holding {"fsdp_transformer_layer_cls_to_wrap": [...]} '
        "(new in transformers 4.27) instead"
    )
    assert "min_num_params" not in d.message
