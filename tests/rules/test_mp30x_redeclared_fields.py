"""MP302 / MP304: a project subclass of ``TrainingArguments`` that declares a field transformers
removed (``warmup_ratio``, gone in 5.15). The subclass's dataclass takes the field, so nothing
raises (a keyword to ``TrainingArguments`` itself raises ``TypeError``), but nothing of
transformers reads it there: the run silently trains without warmup. Review 21b's miss
(llm_alpaca: ``warmup_ratio=0.03`` as a field of its arguments class)."""
import pytest
from conftest import findings_in, write_tree


SCRIPT = """\
from dataclasses import dataclass, field

from transformers import HfArgumentParser, Trainer, TrainingArguments


@dataclass
class RunArgs(TrainingArguments):
    output_dir: str = field(default="out")
    warmup_ratio: float = field(default=0.05)


@dataclass
class Unrelated:
    warmup_ratio: float = 0.1


def main():
    (args,) = HfArgumentParser((RunArgs,)).parse_args_into_dataclasses()
    Trainer(model=None, args=args).train(){extra}


if __name__ == "__main__":
    main()
"""


def findings(tmp_path, pin, extra=""):
    root = write_tree(tmp_path / "p", {".git/HEAD": "", "requirements.txt": f"{pin}\n", "train.py": SCRIPT.format(extra=extra)})
    found = findings_in(root, ["MP302", "MP304"])
    return [(d.code, d.span.line, d.message) for d in found]


def test_a_field_the_library_no_longer_reads_is_reported_where_declared(tmp_path):
    ((code, line, message),) = findings(tmp_path, "transformers==5.15.0")
    assert (code, line) == ("MP302", 9)
    assert message.startswith("`RunArgs` declares `warmup_ratio`, a field `TrainingArguments` no longer has from transformers 5.15 on")
    assert "silently goes without it" in message and "warmup_steps" in message


def test_versions_that_reach_the_removal_are_told(tmp_path):
    ((code, _, message),) = findings(tmp_path, "transformers>=4.40")
    assert code == "MP304" and "which transformers>=4.40 in requirements.txt allows" in message


@pytest.mark.parametrize("pin", ["transformers==5.14.1", "transformers==4.46.0"])
def test_where_the_library_still_reads_it_nothing(tmp_path, pin):
    assert findings(tmp_path, pin) == []


def test_a_field_the_projects_code_reads_itself_is_left_alone(tmp_path):
    extra = "\n    print(args.warmup_ratio * 100)"
    assert findings(tmp_path, "transformers==5.15.0", extra=extra) == []


def test_the_old_field_kept_and_converted_by_the_class_itself_is_left_alone(tmp_path):
    script = SCRIPT.replace(
        "    warmup_ratio: float = field(default=0.05)\n",
        "    warmup_ratio: float = field(default=0.05)\n\n    def __post_init__(self):\n"
        "        self.warmup_steps = self.warmup_ratio\n        super().__post_init__()\n",
    )
    root = write_tree(tmp_path / "p", {".git/HEAD": "", "requirements.txt": "transformers==5.15.0\n", "train.py": script.format(extra="")})
    assert findings_in(root, ["MP302", "MP304"]) == []


def test_a_field_whose_rows_are_about_some_values_is_no_removed_field(tmp_path):
    """``optim`` is still a field: the table's rows are about values it no longer takes
    (``"adamw_hf"``, gone in 4.50); a subclass that declares ``optim`` declares a live field."""
    script = SCRIPT.replace("    warmup_ratio: float = field(default=0.05)\n", '    optim: str = field(default="adamw_torch")\n', 1)
    root = write_tree(tmp_path / "p", {".git/HEAD": "", "requirements.txt": "transformers==5.15.0\n", "train.py": script.format(extra="")})
    assert findings_in(root, ["MP302", "MP304"]) == []


@pytest.mark.parametrize("declared", [
    'warmup_ratio: float = field(default=0.0)',  # asks for no warmup: the run without it is the same
    "warmup_ratio: float = field(default_factory=lambda: 0.05)",  # no literal: not known
    "warmup_ratio: float = WARMUP",
])
def test_a_default_that_asks_for_nothing_or_is_not_known_loses_nothing_said(tmp_path, declared):
    script = "WARMUP = 0.05\n" + SCRIPT.replace("    warmup_ratio: float = field(default=0.05)\n", f"    {declared}\n", 1)
    root = write_tree(tmp_path / "p", {".git/HEAD": "", "requirements.txt": "transformers==5.15.0\n", "train.py": script.format(extra="")})
    assert findings_in(root, ["MP302", "MP304"]) == []
