"""TRL's ``parse_args_and_config()`` reads the YAML its command line names with ``--config``:
each key is the default of the field of that name, and a key no dataclass has any more raises
``ValueError: Unknown arguments from config file: ['--key', 'value']. ...`` (trl 1.16
``TrlParser.parse_args_and_config``), unless the call keeps or ignores unknown arguments. The
file is the one a shipped launch passes (review 20's held-out misses M6-M9)."""
import pytest

from conftest import findings_in, write_tree

SCRIPT = """\
from trl import ModelConfig, ScriptArguments, SFTConfig, SFTTrainer, TrlParser


def main():
    parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))
    script_args, training_args, model_args = parser.parse_args_and_config({call})
    SFTTrainer(model=model_args.model_name_or_path, args=training_args).train()


if __name__ == "__main__":
    main()
"""


def findings(tmp_path, pin="transformers==5.15.0", call="", launch="python sft.py --config configs/sft.yaml"):
    root = write_tree(tmp_path, {
        ".git/HEAD": "", "requirements.txt": f"{pin}\ntrl==1.9.0\n", "sft.py": SCRIPT.format(call=call),
        "configs/sft.yaml": "learning_rate: 2.0e-5\nwarmup_ratio: 0.03\nbf16: true\n",
        "run.sh": f"#!/bin/bash\n{launch}\n",
    })
    found = findings_in(root, ["MP302", "MP304"])
    return [(d.code, d.path.replace("\\", "/").rsplit("/", 2)[-2:], d.span.line, d.message) for d in found]


def test_a_removed_key_of_the_config_the_launch_passes_stops_the_run(tmp_path):
    ((code, where, line, message),) = findings(tmp_path)
    assert (code, where, line) == ("MP302", ["configs", "sft.yaml"], 2)
    assert "ValueError: Unknown arguments from config file: ['--warmup_ratio', '0.03']" in message
    assert "run.sh (line 2) passes it" in message


def test_a_deprecated_key_on_the_pinned_version_is_told_of(tmp_path):
    ((code, _, _, message),) = findings(tmp_path, pin="transformers==5.14.1")
    assert code == "MP304" and "deprecated since transformers 5.0" in message


@pytest.mark.parametrize("call", ["return_remaining_strings=True", "fail_with_unknown_args=False"])
def test_a_parse_that_keeps_or_ignores_unknown_keys_does_not_stop(tmp_path, call):
    found = findings(tmp_path, call=call)
    assert all("Unknown arguments from config file" not in m for *_, m in found)


def test_no_launch_passes_a_config(tmp_path):
    assert findings(tmp_path, launch="python sft.py --output_dir out") == []


def test_configs_no_launch_names_are_not_paired_with_each_script(tmp_path):
    """Two TRL scripts and their YAML files, run only by hand: which reads which is not known
    (each file holds the fields both scripts' dataclasses share), so no key is reported."""
    shared = "from dataclasses import dataclass\n\n\n@dataclass\nclass RunArgs:\n    dataset_path: str = 'data'\n"
    script = SCRIPT.replace("(ScriptArguments, SFTConfig, ModelConfig)", "(RunArgs, SFTConfig, ModelConfig)").replace(
        "from trl import", "from args import RunArgs\nfrom trl import"
    )
    root = write_tree(tmp_path, {
        ".git/HEAD": "", "requirements.txt": "transformers==5.15.0\ntrl==1.9.0\n", "args.py": shared,
        "sft.py": script.format(call=""), "dpo.py": script.format(call=""),
        "configs/sft.yaml": "dataset_path: a\nwarmup_ratio: 0.03\n", "configs/dpo.yaml": "dataset_path: b\nwarmup_ratio: 0.1\n",
    })
    assert findings_in(root, ["MP302", "MP304"]) == []
