"""A removed or deprecated keyword in a call that no configuration runs: the call sits under a
test of a parameter every caller seen leaves at a default that fails it (``elif load_in_8bit:``
in a loader whose only caller passes ``load_in_half=True``; review 19's held-out
simpleRL-reason). The test is read at the join, with what the callers pass
(``MigrationCall.when``); a caller that turns it on, or no caller seen at all, keeps the
finding."""
from conftest import findings_in, write_tree


LOADER = """
from transformers import AutoModelForCausalLM


def load(path, load_in_8bit=False, load_in_half=False):
    if load_in_8bit:
        model = AutoModelForCausalLM.from_pretrained(path, device_map="auto", load_in_8bit=True)
    else:
        model = AutoModelForCausalLM.from_pretrained(path)
        if load_in_half:
            model = model.half()
    return model
"""


def lines(tmp_path, run=None):
    files = {".git/HEAD": "", "requirements.txt": "transformers>=4.45,<4.48\n", "model_utils.py": LOADER}
    if run is not None:
        files["run.py"] = f"from model_utils import load\nmodel = load({run})\n"
    write_tree(tmp_path, files)
    found = findings_in(tmp_path, ["MP302", "MP304"])
    return [(d.code, d.span.line) for d in found]


def test_a_branch_every_caller_leaves_off_is_no_use(tmp_path):
    assert lines(tmp_path, '"m", load_in_half=True') == []
    assert lines(tmp_path / "f", '"m", load_in_8bit=False') == []


def test_a_caller_that_turns_it_on_or_none_seen_keeps_the_finding(tmp_path):
    assert lines(tmp_path, '"m", load_in_8bit=True') == [("MP304", 6)]
    assert lines(tmp_path / "none") == [("MP304", 6)]  # a library function: any caller may


def test_a_parsed_dataclass_field_is_the_users_to_set(tmp_path):
    """``--model_name_or_path`` defaults to None in the script's own dataclass; the user passes
    it on the command line: the branch for a given path runs (the regression corpus's relora)."""
    script = (
        "from dataclasses import dataclass, field\n"
        "from transformers import AutoModelForCausalLM, HfArgumentParser\n\n"
        "@dataclass\nclass ModelArguments:\n    model_name_or_path: str = field(default=None)\n\n"
        "(margs,) = HfArgumentParser(ModelArguments).parse_args_into_dataclasses()\n"
        "if margs.model_name_or_path is None:\n    model = None\nelse:\n"
        "    model = AutoModelForCausalLM.from_pretrained(margs.model_name_or_path, load_in_8bit=True)\n"
    )
    write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers>=4.45,<4.48\n", "train.py": script})
    found = findings_in(tmp_path, ["MP302", "MP304"])
    assert [(d.code, d.span.line) for d in found] == [("MP304", 12)]
