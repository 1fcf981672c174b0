"""A removed dataclass field read on an instance (``knowledge._field_read``): the keyword rows of
``TrainingArguments`` and TRL's configs that a release removed are fields their instances no
longer have, so ``training_args.group_by_length`` raises ``AttributeError`` there, whether the
object was built in code or filled by ``HfArgumentParser`` (a project subclass too). Reading a
field warns on no version: only the removal is reported. Each case is a small project."""
import pytest

from conftest import config, findings_in, fix, lint, write_tree

SCRIPT = """\
from dataclasses import dataclass, field
from transformers import HfArgumentParser, TrainingArguments


@dataclass
class RunArguments(TrainingArguments):
    lr_mult: float = field(default=1.0){own}


def main():
    (args,) = HfArgumentParser((RunArguments,)).parse_args_into_dataclasses()
    if args.overwrite_output_dir:
        print("overwrite")
    print(args.logging_dir, args.group_by_length, args.evaluation_strategy, args.output_dir)
    args.overwrite_output_dir = True


if __name__ == "__main__":
    main()
"""


def findings(tmp_path, pin, own="", codes=("MP302", "MP304")):
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": f"{pin}\n", "run.py": SCRIPT.format(own=own)})
    found = findings_in(root, codes)
    return sorted((d.code, d.span.line, d.message.split("`")[1]) for d in found)


def test_a_range_that_reaches_the_removals_is_told_of_each_read(tmp_path):
    assert findings(tmp_path, "transformers>=4.35.1") == [
        ("MP304", 12, "args.overwrite_output_dir"),  # the read; the store below it makes a plain attribute
        ("MP304", 14, "args.evaluation_strategy"),
        ("MP304", 14, "args.group_by_length"),
        ("MP304", 14, "args.logging_dir"),
    ]


def test_a_pin_where_they_are_gone_is_a_crash_and_names_the_subclass(tmp_path):
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers==5.3.0\n", "run.py": SCRIPT.format(own="")})
    found = findings_in(root, ["MP302"])
    assert sorted(d.message.split("`")[1] for d in found) == ["args.evaluation_strategy", "args.group_by_length", "args.overwrite_output_dir"]
    first = next(d for d in found if "overwrite_output_dir" in d.message)
    assert "AttributeError: 'RunArguments' object has no attribute 'overwrite_output_dir'" in first.message


def test_a_pin_before_the_removals_is_silent(tmp_path):
    assert findings(tmp_path, "transformers==4.40.0") == []


def test_a_field_the_subclass_declares_itself_is_its_own(tmp_path):
    own = "\n    overwrite_output_dir: bool = field(default=False)"
    assert [f[2] for f in findings(tmp_path, "transformers==5.3.0", own)] == ["args.evaluation_strategy", "args.group_by_length"]


def test_a_renamed_field_reads_under_its_new_name_where_that_exists():
    src = "from transformers import TrainingArguments\n\nargs = TrainingArguments('out')\nprint(args.evaluation_strategy)\n"
    assert fix(src, "MP302", cfg=config(transformers_version="4.51")).endswith("print(args.eval_strategy)\n")
    (d,) = lint(src, "MP302", cfg=config(transformers_version="4.51"))
    assert "use `.eval_strategy`" in d.message


@pytest.mark.parametrize("pin, reported", [("trl==0.19.0", False), ("trl>=0.20", True)])
def test_a_trl_config_field_read(tmp_path, pin, reported):
    root = write_tree(tmp_path, {
        ".git/HEAD": "", "requirements.txt": f"{pin}\n",
        "sft.py": "from trl import SFTConfig\n\ncfg = SFTConfig(output_dir='out')\nprint(cfg.max_seq_length)\n",
    })
    found = findings_in(root, ["MP302", "MP304"])
    assert any("cfg.max_seq_length" in d.message for d in found) == reported
