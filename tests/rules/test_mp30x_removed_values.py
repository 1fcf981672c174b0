"""A value a keyword no longer takes (``values`` in ``knowledge/migrations.toml``): the keyword
stays, the value left its choices. ``TrainingArguments(optim="adamw_hf")`` works up to
transformers 4.49 and raises ``ValueError: adamw_hf is not a valid OptimizerNames, please
select one of [...]`` from 4.50 on; ``--optim adamw_hf`` on a command line is refused by
argparse first (``invalid choice``, exit status 2). Only a use that gives such a value is a
finding: the code's own value (a literal, a default, what callers pass), a config file's key,
a launch's option."""
from __future__ import annotations

import pytest

from conftest import findings_in, write_tree



def findings(tmp_path, files, pin="transformers>=4.45"):
    write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": pin + "\n", **files})
    found = findings_in(tmp_path, ["MP302", "MP304"])
    return sorted((d.path.rsplit("/", 1)[-1], d.span.line, d.code, d.message) for d in found)


SCRIPT = """
from transformers import TrainingArguments

args = TrainingArguments(output_dir="out", optim=VALUE)
"""


@pytest.mark.parametrize(
    "pin, code",
    [("transformers>=4.50", "MP302"), ("transformers==4.52.0", "MP302"), ("transformers>=4.45", "MP304")],
    ids=["floor-past-removal", "pinned-past-removal", "range-across-removal"],
)
def test_a_removed_value_is_reported_where_a_targeted_version_refuses_it(tmp_path, pin, code):
    (hit,) = findings(tmp_path, {"train.py": SCRIPT.replace("VALUE", '"adamw_hf"')}, pin)
    assert hit[2] == code
    assert "`optim='adamw_hf'` passed to `TrainingArguments` was removed in transformers 4.50" in hit[3]
    assert "ValueError: adamw_hf is not a valid OptimizerNames" in hit[3]
    assert "optim='adamw_torch'" in hit[3]


@pytest.mark.parametrize("pin", ["transformers==4.49.0", "transformers<4.50"])
def test_versions_that_still_take_the_value_are_told_it_warns(tmp_path, pin):
    # 'adamw_hf' builds transformers' own AdamW, whose __init__ warns from 4.16 (read in the wheels)
    (hit,) = findings(tmp_path, {"train.py": SCRIPT.replace("VALUE", '"adamw_hf"')}, pin)
    assert hit[2] == "MP304"
    assert "`optim='adamw_hf'` passed to `TrainingArguments` is deprecated since transformers 4.16" in hit[3]


@pytest.mark.parametrize("value", ['"adamw_torch"', '"adamw_apex_fused"', "user_choice()"], ids=["kept", "removed-later", "unknown"])
def test_other_values_and_values_not_known_say_nothing(tmp_path, value):
    # adamw_apex_fused leaves in 5.8: transformers<5 never meets that
    script = "def user_choice():\n    return input()\n" + SCRIPT.replace("VALUE", value)
    assert findings(tmp_path, {"train.py": script}, "transformers>=4.45,<5") == []


def test_the_value_a_parameter_gets_from_its_default_or_its_callers(tmp_path):
    script = (
        "from transformers import Seq2SeqTrainingArguments\n\n"
        "def make(optim='adamw_torch'):\n"
        "    return Seq2SeqTrainingArguments(output_dir='o', optim=optim)\n\n"
        "make()\n"
        "make(optim='adamw_hf')\n"
    )
    (hit,) = findings(tmp_path, {"train.py": script}, "transformers>=4.50")
    assert hit[1] == 4 and "`optim='adamw_hf'` passed to `Seq2SeqTrainingArguments`" in hit[3]


def test_an_argparse_default_is_the_codes_value_and_what_the_user_passes_is_theirs(tmp_path):
    script = (
        "import argparse\nfrom transformers import TrainingArguments\n\n"
        "ap = argparse.ArgumentParser()\nap.add_argument('--optim', default=DEFAULT)\nopts = ap.parse_args()\n"
        "TrainingArguments(output_dir='o', optim=opts.optim)\n"
    )
    assert [h[2] for h in findings(tmp_path, {"train.py": script.replace("DEFAULT", "'adamw_hf'")}, "transformers>=4.50")] == ["MP302"]
    assert findings(tmp_path, {"train.py": script.replace("DEFAULT", "'adamw_torch'")}, "transformers>=4.50") == []


def test_a_keyword_of_the_projects_own_function_is_not_the_librarys(tmp_path):
    script = "def train(optim='adamw_hf'):\n    return optim\n\ntrain(optim='adamw_hf')\n"
    assert findings(tmp_path, {"train.py": script}, "transformers>=4.50") == []


PARSED = """
import sys
from transformers import HfArgumentParser, TrainingArguments

parser = HfArgumentParser(TrainingArguments)
if sys.argv[1].endswith(".yaml"):
    (args,) = parser.parse_yaml_file(sys.argv[1], allow_extra_keys=True)
else:
    (args,) = parser.parse_args_into_dataclasses(return_remaining_strings=True)[:1]
"""


def test_a_config_files_key_and_a_launchs_option_are_refused_not_dropped(tmp_path):
    files = {
        "train.py": PARSED,
        "run.sh": "python train.py --output_dir out --optim adamw_hf\npython train.py conf.yaml\npython train.py --output_dir o --optim adamw_torch\n",
        "conf.yaml": "output_dir: out\noptim: adamw_apex_fused\n",
    }
    hits = findings(tmp_path, files, "transformers>=5.8")
    assert [(h[0], h[1], h[2]) for h in hits] == [("conf.yaml", 2, "MP302"), ("run.sh", 1, "MP302")]
    key, option = hits[0][3], hits[1][3]
    # a value the field's check refuses is no extra key, nor a remaining string: the run stops
    assert "key `optim` (`adamw_apex_fused`) was removed in transformers 5.8 and raises `ValueError: adamw_apex_fused" in key
    assert "without a word" not in key
    assert "its value `adamw_hf` was removed in transformers 4.50" in option
    assert "SystemExit: 2 (argparse: argument --optim: invalid choice: 'adamw_hf'" in option
    assert "pass `--optim adamw_torch` instead" in option and "remaining strings" not in option
