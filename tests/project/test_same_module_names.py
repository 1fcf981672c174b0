"""Two scripts of one repository named alike (``a_pref/train.py`` and ``copilot/train.py``, each
run by its path, each its own module ``train``) each call their own ``main(opts)`` from their
``__main__`` block: what one script's launch passes its ``main`` is no argument of the other's.
The join tells the two ``train.main`` apart by the module that defines each
(``interproc.CallGraphValues._calls_to``): a value reaches a parameter only from calls that
resolve to that parameter's function."""
from conftest import config, write_tree

from precision_lint.engine import Engine

SCRIPT = """
from dataclasses import dataclass, field
import torch
from transformers import AutoModelForCausalLM, HfArgumentParser, TrainingArguments


@dataclass
class Opts:
    model_name_or_path: str = field(default="gpt2")
    compute: str = field(default="float16")


def main(opts, targs):
    return AutoModelForCausalLM.from_pretrained(opts.model_name_or_path, dtype=getattr(torch, opts.compute)).to("cuda")


if __name__ == "__main__":
    opts, targs = HfArgumentParser((Opts, TrainingArguments)).parse_args_into_dataclasses()
    main(opts, targs)
"""


def run(tmp_path, files):
    root = write_tree(tmp_path, {".git/HEAD": "", **files})
    found = Engine(config(), ["MP201"], jobs=1).run_paths([str(root)]).diagnostics
    return sorted((d.path.replace("\\", "/").split(str(tmp_path.name) + "/")[-1], d.message) for d in found)


def test_a_launch_of_one_script_passes_nothing_to_the_other_scripts_function_of_the_same_name(tmp_path):
    found = run(tmp_path, {
        "a_pref/train.py": SCRIPT,
        "a_pref/run.sh": "python train.py --output_dir out --compute bfloat16\n",
        "copilot/train.py": SCRIPT,
        "copilot/run.sh": "python train.py --output_dir out\n",
    })
    assert [path for path, _ in found] == ["a_pref/train.py"]
    assert "passed by run.sh (line 1), the shipped launch" in found[0][1]


def test_each_script_takes_what_its_own_launch_passes(tmp_path):
    launch = "python train.py --output_dir out --compute bfloat16\n"
    found = run(tmp_path, {
        "a_pref/train.py": SCRIPT, "a_pref/run.sh": launch, "copilot/train.py": SCRIPT, "copilot/run.sh": launch,
    })
    assert [path for path, _ in found] == ["a_pref/train.py", "copilot/train.py"]
    assert all("passed by run.sh (line 1)" in message for _, message in found)
