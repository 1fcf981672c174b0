"""MP302 / MP304: removed TrainingArguments keys in the JSON/YAML files an HfArgumentParser reads.

``HfArgumentParser((ModelArguments, DataArguments, Seq2SeqTrainingArguments)).parse_json_file(
json_file=os.path.abspath(sys.argv[1]))`` hands every key of the file to the dataclasses as a
keyword; on transformers 4.51 and later a file that still says ``"evaluation_strategy": "steps"``
stops the run with ``ValueError: Some keys are not used by the HfArgumentParser:
['evaluation_strategy']`` (``allow_extra_keys`` is False by default). The finding is in the
configuration file, at the key; which files a parse reads: ``project/parsed_files.py``."""
import json

import pytest
from conftest import config, run_cli, write_tree

from precision_lint.engine import Engine

SCRIPT = """
    import os
    import sys
    from dataclasses import dataclass, field

    from transformers import HfArgumentParser, Seq2SeqTrainer, Seq2SeqTrainingArguments


    @dataclass
    class ModelArguments:
        model_name_or_path: str = field(default="t5-small")


    @dataclass
    class DataArguments:
        dataset_name: str = field(default="xsum")


    def main():
        parser = HfArgumentParser((ModelArguments, DataArguments, Seq2SeqTrainingArguments))
        if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
            model_args, data_args, training_args = parser.parse_json_file(json_file=os.path.abspath(sys.argv[1]))
        else:
            model_args, data_args, training_args = parser.parse_args_into_dataclasses()
        Seq2SeqTrainer(model=None, args=training_args).train()


    if __name__ == "__main__":
        main()
    """

CONFIG = {
    "model_name_or_path": "t5-small",
    "dataset_name": "xsum",
    "output_dir": "out",
    "evaluation_strategy": "steps",
    "per_device_train_batch_size": 8,
}
ERROR = "ValueError: Some keys are not used by the HfArgumentParser: ['evaluation_strategy']"


def _json(data) -> str:
    return json.dumps(data, indent=2) + "\n"


def _run(root, monkeypatch, codes=("MP302", "MP304"), cfg=None):
    monkeypatch.chdir(root)
    return Engine(cfg or config(), list(codes), jobs=1).run_paths(["."]).diagnostics


def _at_key(d, text: str, key: str) -> bool:
    line = text.splitlines()[d.span.line - 1]
    return line[d.span.col : d.span.end_col] == f'"{key}"' or line[d.span.col : d.span.end_col] == key


def test_a_shipped_config_of_the_scripts_own_fields_is_reported_at_its_key(tmp_path, monkeypatch):
    # nothing shipped launches the script: the file given as sys.argv[1] is the user's, and
    # configs/summarize.json, which holds the script's own fields, is the one shipped for it
    write_tree(tmp_path, {"train.py": SCRIPT, "configs/summarize.json": _json(CONFIG), "requirements.txt": "transformers==4.53.0\n"})
    (d,) = _run(tmp_path, monkeypatch)
    assert d.code == "MP302" and d.path == "configs/summarize.json"
    assert _at_key(d, (tmp_path / "configs/summarize.json").read_text(), "evaluation_strategy")
    assert ERROR in d.message and "was removed in transformers 4.51" in d.message
    # the pin's file is named from the JSON file's folder
    assert "transformers==4.53.0 in ../requirements.txt" in d.message and "rename the key to `eval_strategy`" in d.message
    assert "train.py reads this file as `Seq2SeqTrainingArguments` (`parse_json_file`, line 21" in d.message
    assert d.fix is None  # the engine rewrites Python files only
    assert [(r.path, r.span.line) for r in d.related] == [("train.py", 21)]


def test_a_pin_older_than_the_removal_is_the_deprecation_and_older_than_that_nothing(tmp_path, monkeypatch):
    files = {"train.py": SCRIPT, "configs/summarize.json": _json(CONFIG)}
    write_tree(tmp_path, {**files, "requirements.txt": "transformers==4.40.0\n"})
    assert _run(tmp_path, monkeypatch) == []  # `eval_strategy` does not exist there yet
    write_tree(tmp_path, {**files, "requirements.txt": "transformers>=4.41,<4.51\n"})
    (d,) = _run(tmp_path, monkeypatch)
    assert d.code == "MP304" and "is deprecated since transformers 4.41" in d.message and ERROR in d.message
    write_tree(tmp_path, {**files, "requirements.txt": "transformers>=4.30\n"})
    (d,) = _run(tmp_path, monkeypatch)
    assert d.code == "MP304" and "allows transformers 4.51 and later" in d.message
    assert "no fix: " not in d.message and "`eval_strategy` is new in transformers 4.41" in d.message


def test_allow_extra_keys_drops_the_key_without_a_word(tmp_path, monkeypatch):
    script = SCRIPT.replace("json_file=os.path.abspath(sys.argv[1]))", "json_file=os.path.abspath(sys.argv[1]), allow_extra_keys=True)")
    write_tree(tmp_path, {"train.py": script, "configs/summarize.json": _json(CONFIG), "requirements.txt": "transformers==4.53.0\n"})
    (d,) = _run(tmp_path, monkeypatch)
    assert d.code == "MP302" and "ValueError" not in d.message
    assert "`parse_json_file(..., allow_extra_keys=True)` drops it without a word and the run goes on without it" in d.message


def test_files_that_are_no_configuration_of_the_script_are_not_read_as_one(tmp_path, monkeypatch):
    # a DeepSpeed JSON, a data file and another tool's JSON holding the key but none of the
    # script's own fields; a YAML file, which `parse_json_file` never reads
    other = {"output_dir": "out", "evaluation_strategy": "steps"}
    write_tree(
        tmp_path,
        {
            "train.py": SCRIPT,
            "configs/ds_zero2.json": _json({"zero_optimization": {"stage": 2}, "fp16": {"enabled": "auto"}}),
            "data/dev.json": _json([{"text": "evaluation_strategy"}]),
            "configs/other_tool.json": _json(other),
            "configs/summarize.yaml": "model_name_or_path: t5-small\nevaluation_strategy: steps\n",
        },
    )
    assert _run(tmp_path, monkeypatch) == []


def test_a_parse_of_library_classes_only_ties_no_file_by_its_keys(tmp_path, monkeypatch):
    script = SCRIPT.replace("(ModelArguments, DataArguments, Seq2SeqTrainingArguments)", "(Seq2SeqTrainingArguments,)").replace(
        "model_args, data_args, training_args =", "(training_args,) ="
    )
    write_tree(tmp_path, {"train.py": script, "configs/summarize.json": _json(CONFIG)})
    assert _run(tmp_path, monkeypatch) == []


def test_a_yaml_file_the_code_names_is_read_whatever_its_keys(tmp_path, monkeypatch):
    script = """
        from transformers import HfArgumentParser, TrainingArguments

        (args,) = HfArgumentParser(TrainingArguments).parse_yaml_file("recipes/train.yaml")
        """
    yaml_text = "output_dir: out\nper_gpu_train_batch_size: 4   # per GPU\n\"evaluation_strategy\": epoch\n"
    write_tree(tmp_path, {"train.py": script, "recipes/train.yaml": yaml_text})
    found = _run(tmp_path, monkeypatch)
    assert [(d.path, d.span.line, d.span.col) for d in found] == [("recipes/train.yaml", 2, 0), ("recipes/train.yaml", 3, 0)]
    assert "reads this file as `TrainingArguments` (`parse_yaml_file`, line 3)" in found[1].message
    assert "rename the key to `eval_strategy`" in found[1].message


def test_a_file_a_shipped_launch_passes_is_read_whatever_its_keys(tmp_path, monkeypatch):
    # the launcher names the file: it needs none of the script's own fields; the file beside it
    # that holds them is another run's input of the same parse (no launch of it is shipped)
    write_tree(
        tmp_path,
        {
            "src/train.py": SCRIPT,
            "scripts/run.sh": "python src/train.py configs/base.json\n",
            "configs/base.json": _json({"output_dir": "out", "evaluation_strategy": "steps"}),
            "configs/large.json": _json(CONFIG),
            "configs/other.json": _json({"output_dir": "out", "evaluation_strategy": "steps"}),  # none of its fields
        },
    )
    launched, beside = _run(tmp_path, monkeypatch)
    assert launched.path == "configs/base.json" and "scripts/run.sh (line 1) passes it" in launched.message
    assert beside.path == "configs/large.json" and "passes it" not in beside.message


def test_an_argparse_option_that_names_the_file_and_its_default(tmp_path, monkeypatch):
    script = """
        import argparse
        from transformers import HfArgumentParser, TrainingArguments

        cli = argparse.ArgumentParser()
        cli.add_argument("--train_args_file", default="configs/default.json")
        given = cli.parse_args()
        (targs,) = HfArgumentParser((TrainingArguments,)).parse_json_file(json_file=given.train_args_file)
        """
    write_tree(
        tmp_path,
        {
            "train.py": script,
            "run.sh": "python train.py --train_args_file configs/launched.json\n",
            "configs/default.json": _json({"output_dir": "o", "evaluation_strategy": "no"}),
            "configs/launched.json": _json({"output_dir": "o", "no_cuda": True}),
        },
    )
    found = _run(tmp_path, monkeypatch)
    assert sorted((d.path, d.message.split("where key ")[1].split("`")[1]) for d in found) == [
        ("configs/default.json", "evaluation_strategy"),
        ("configs/launched.json", "no_cuda"),
    ]


@pytest.mark.parametrize(
    "shape",
    [
        # the script's own subclass keeps the old field (and converts it itself)
        "compat",
        # the script expects the failure
        "caught",
    ],
)
def test_code_written_for_the_old_key_is_left_alone(tmp_path, monkeypatch, shape):
    script = SCRIPT
    if shape == "compat":
        script = script.replace(
            "def main():",
            "@dataclass\n    class Args(Seq2SeqTrainingArguments):\n        evaluation_strategy: str = field(default=None)\n\n"
            "        def __post_init__(self):\n            self.eval_strategy = self.evaluation_strategy or self.eval_strategy\n"
            "            super().__post_init__()\n\n\n    def main():",
        ).replace("(ModelArguments, DataArguments, Seq2SeqTrainingArguments)", "(ModelArguments, DataArguments, Args)")
    else:
        script = script.replace(
            "            model_args, data_args, training_args = parser.parse_json_file(json_file=os.path.abspath(sys.argv[1]))",
            "            try:\n                model_args, data_args, training_args = parser.parse_json_file(json_file=os.path.abspath(sys.argv[1]))\n"
            "            except ValueError:\n                model_args, data_args, training_args = parser.parse_json_file(sys.argv[1], allow_extra_keys=True)",
        )
    write_tree(tmp_path, {"train.py": script, "configs/summarize.json": _json(CONFIG)})
    compile((tmp_path / "train.py").read_text(), "train.py", "exec")
    assert _run(tmp_path, monkeypatch, codes=("MP302",)) == [], shape


def test_a_field_of_the_scripts_own_dataclass_is_not_a_removed_keyword(tmp_path, monkeypatch):
    # `DataArguments.evaluation_strategy` takes the key: the parser hands it there
    script = SCRIPT.replace('dataset_name: str = field(default="xsum")', 'dataset_name: str = field(default="xsum")\n        evaluation_strategy: str = "steps"')
    write_tree(tmp_path, {"train.py": script, "configs/summarize.json": _json(CONFIG)})
    compile((tmp_path / "train.py").read_text(), "train.py", "exec")
    assert _run(tmp_path, monkeypatch) == []


def test_per_file_ignores_and_exclude_turn_a_finding_in_a_json_file_off(tmp_path, monkeypatch):
    write_tree(tmp_path, {"train.py": SCRIPT, "configs/summarize.json": _json(CONFIG)})
    assert len(_run(tmp_path, monkeypatch)) == 1
    assert _run(tmp_path, monkeypatch, cfg=config(per_file_ignores={"configs/*.json": ["MP302"]})) == []
    assert _run(tmp_path, monkeypatch, cfg=config(per_file_ignores={"train.py": ["MP302"]})) == []  # the rule is off for the script
    assert _run(tmp_path, monkeypatch, cfg=config(exclude=["configs"])) == []


def test_a_noqa_comment_of_the_script_is_not_about_the_json_file(tmp_path, monkeypatch):
    # the finding is on line 5 of the JSON file; line 5 of the script has a noqa comment
    script = SCRIPT.replace("Seq2SeqTrainingArguments\n", "Seq2SeqTrainingArguments  # noqa: MP302\n", 1)
    write_tree(tmp_path, {"train.py": script, "configs/summarize.json": _json(CONFIG)})
    assert (tmp_path / "train.py").read_text().splitlines()[4].endswith("# noqa: MP302")
    (d,) = _run(tmp_path, monkeypatch)
    assert d.span.line == 5


def test_a_noqa_comment_in_a_yaml_file(tmp_path, monkeypatch):
    script = """
        from transformers import HfArgumentParser, TrainingArguments

        (args,) = HfArgumentParser(TrainingArguments).parse_yaml_file("train.yaml")
        """
    write_tree(tmp_path, {"train.py": script, "train.yaml": "output_dir: out\nevaluation_strategy: epoch  # noqa: MP302\nno_cuda: true\n"})
    assert [d.span.line for d in _run(tmp_path, monkeypatch)] == [3]


def test_reporters_and_add_noqa_with_a_finding_in_a_json_file(tmp_path):
    write_tree(tmp_path, {"train.py": SCRIPT, "configs/summarize.json": _json(CONFIG)})
    full = run_cli(".", "--no-cache", "--select", "MP302", cwd=tmp_path)
    assert "configs/summarize.json:5:3: MP302" in full.stdout and '"evaluation_strategy": "steps"' in full.stdout
    sarif = json.loads(run_cli(".", "--no-cache", "--select", "MP302", "--output-format", "sarif", cwd=tmp_path).stdout)
    (result,) = sarif["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "configs/summarize.json" and location["region"]["startLine"] == 5
    assert result["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "train.py"
    (line,) = run_cli(".", "--no-cache", "--select", "MP302", "--output-format", "github", cwd=tmp_path).stdout.splitlines()
    assert line.startswith("::error file=configs/summarize.json,line=5,col=3,")
    (item,) = json.loads(run_cli(".", "--no-cache", "--select", "MP302", "--output-format", "json", cwd=tmp_path).stdout)
    assert item["filename"].endswith("configs/summarize.json") and item["location"]["row"] == 5
    before = (tmp_path / "configs/summarize.json").read_text()
    added = run_cli(".", "--no-cache", "--select", "MP302", "--add-noqa", cwd=tmp_path)
    assert added.returncode == 0 and "no noqa comments added: a configuration file" in added.stderr
    assert (tmp_path / "configs/summarize.json").read_text() == before


def test_a_parse_in_a_helper_module_reads_what_the_launch_of_its_script_passes(tmp_path, monkeypatch):
    helper = """
        import sys
        from transformers import HfArgumentParser, TrainingArguments


        def read_arguments():
            parser = HfArgumentParser((TrainingArguments,))
            return parser.parse_json_file(sys.argv[1])
        """
    script = """
        from helpers.arguments import read_arguments

        (targs,) = read_arguments()
        """
    write_tree(
        tmp_path,
        {
            "helpers/__init__.py": "",
            "helpers/arguments.py": helper,
            "train.py": script,
            "run.sh": "torchrun --nproc_per_node 2 train.py configs/base.json\n",
            "configs/base.json": _json({"output_dir": "o", "per_gpu_train_batch_size": 4}),
        },
    )
    (d,) = _run(tmp_path, monkeypatch)
    assert d.path == "configs/base.json" and "helpers/arguments.py reads this file" in d.message
    assert "run.sh (line 1) passes it" in d.message and "rename the key to `per_device_train_batch_size`" in d.message


def test_shipped_files_are_looked_for_up_to_the_folder_the_check_runs_from(tmp_path, monkeypatch):
    # the script in training/, its configs at the top; a file beside the checkout (two folders up,
    # the folder the check runs from) is not the project's
    write_tree(
        tmp_path,
        {
            "repo/training/train.py": SCRIPT,
            "repo/configs/summarize.json": _json(CONFIG),
            "elsewhere.json": _json(CONFIG),
        },
    )
    found = _run(tmp_path / "repo", monkeypatch)
    assert [d.path for d in found] == ["configs/summarize.json"]
    assert "training/train.py reads this file" in found[0].message


def test_a_config_beside_another_scripts_code_is_that_scripts(tmp_path, monkeypatch):
    # many scripts grown from one Hugging Face example share their dataclasses' fields: the JSON
    # beside `stt/pretrain/pretrain.py` is its file (its folder holds that code), not one for
    # `tts/finetune/train.py`, though its keys fit that script's copy of the dataclasses; a
    # `configs/` folder holds no code (a package's `__init__.py` is none), and a file under the
    # module's own folder is its own
    write_tree(
        tmp_path,
        {
            ".git/HEAD": "",
            "requirements.txt": "transformers==4.53.0\n",
            "stt/pretrain/pretrain.py": SCRIPT,
            "stt/pretrain/base.json": _json(CONFIG),
            "tts/finetune/train.py": SCRIPT,
            "configs/summarize.json": _json(CONFIG),
            "configs/__init__.py": "",
            "tts/finetune/runs/small.json": _json(CONFIG),
        },
    )
    found = _run(tmp_path, monkeypatch)
    readers = sorted((d.path, d.message.split(" reads this file")[0].rsplit(" ", 1)[-1]) for d in found)
    assert readers == [
        ("configs/summarize.json", "stt/pretrain/pretrain.py"),
        ("configs/summarize.json", "tts/finetune/train.py"),
        ("stt/pretrain/base.json", "stt/pretrain/pretrain.py"),
        ("tts/finetune/runs/small.json", "tts/finetune/train.py"),
    ]


def test_a_gitignored_folder_of_dumped_arguments_is_no_shipped_configuration(tmp_path, monkeypatch):
    # a run dumped every argument (the script's own fields too) into its ignored output folder
    write_tree(tmp_path, {"train.py": SCRIPT, ".gitignore": "runs/\n", "runs/summarize/all_args.json": _json(CONFIG)})
    assert _run(tmp_path, monkeypatch) == []
    (tmp_path / ".gitignore").write_text("")
    assert [d.path for d in _run(tmp_path, monkeypatch)] == ["runs/summarize/all_args.json"]


def test_an_invalid_shipped_file_no_one_names_is_not_reported_as_unchecked(tmp_path, monkeypatch):
    # looked at as a possible configuration, named by no code and no launch: not MP002's
    broken = _json(CONFIG).replace('"per_device_train_batch_size": 8', '"per_device_train_batch_size": 8,')
    write_tree(tmp_path, {"train.py": SCRIPT, "configs/summarize.json": broken})
    assert _run(tmp_path, monkeypatch, codes=("MP002", "MP302")) == []
    # a file a shipped launch passes is named: that one is reported as not checked
    write_tree(tmp_path, {"run.sh": "python train.py configs/summarize.json\n"})
    (d,) = _run(tmp_path, monkeypatch, codes=("MP002", "MP302"))
    assert d.code == "MP002" and d.path == "train.py" and "configs/summarize.json` was not checked" in d.message


# --- a subclass of HfArgumentParser that parses the file itself (the alignment handbook's) ---------
PARSER_MODULE = """
    import os
    import sys
    from dataclasses import dataclass, field

    from transformers import HfArgumentParser


    @dataclass
    class ModelArguments:
        model_name_or_path: str = field(default="gpt2")


    class YamlFirstParser(HfArgumentParser):
        def parse(self):
            if len(sys.argv) == 2 and sys.argv[1].endswith(".yaml"):
                return self.parse_yaml_file(os.path.abspath(sys.argv[1]))
            return self.parse_args_into_dataclasses()


    class QuietParser(YamlFirstParser):
        def describe(self):
            return "quiet"
    """
PREF_SCRIPT = """
    from dataclasses import dataclass

    from transformers import TrainingArguments

    from handbook import {parser}, ModelArguments


    @dataclass
    class PrefConfig(TrainingArguments):
        margin: float = 0.5


    def main():
        {call}


    if __name__ == "__main__":
        main()
    """
PREF_YAML = "model_name_or_path: gpt2\noutput_dir: out\nevaluation_strategy: steps\nmargin: 0.3\n"


@pytest.mark.parametrize(
    "parser, call",
    [
        ("YamlFirstParser", "parser = YamlFirstParser((ModelArguments, PrefConfig))\n        model_args, cfg = parser.parse()"),
        ("YamlFirstParser", "model_args, cfg = YamlFirstParser((ModelArguments, PrefConfig)).parse()"),
        ("QuietParser", "model_args, cfg = QuietParser((ModelArguments, PrefConfig)).parse()"),  # the method is inherited
    ],
    ids=["variable", "chained", "inherited-method"],
)
def test_a_parser_subclass_that_parses_the_file_itself_reads_it_as_its_dataclasses(tmp_path, monkeypatch, parser, call):
    """``self.parse_yaml_file(os.path.abspath(sys.argv[1]))`` in the ``parse()`` of a subclass
    of ``HfArgumentParser`` fills the dataclasses the parser is made with in another module:
    the shipped YAML that holds the script's own fields is read as them."""
    write_tree(tmp_path, {
        ".git/HEAD": "",
        "handbook/__init__.py": "from .parsing import ModelArguments, QuietParser, YamlFirstParser\n",
        "handbook/parsing.py": PARSER_MODULE,
        "scripts/train_pref.py": PREF_SCRIPT.format(parser=parser, call=call),
        "configs/pref.yaml": PREF_YAML,
        "requirements.txt": "transformers==4.44.2\n",
    })
    (d,) = _run(tmp_path, monkeypatch)
    assert d.code == "MP304" and d.path == "configs/pref.yaml" and d.span.line == 3
    assert "scripts/train_pref.py reads this file as `PrefConfig` (`parse`, through `parse_yaml_file`" in d.message


@pytest.mark.parametrize(
    "parser_module",
    [
        PARSER_MODULE.replace("class YamlFirstParser(HfArgumentParser):", "class YamlFirstParser:"),  # no parser of the library
        PARSER_MODULE.replace("self.parse_yaml_file(os.path.abspath(sys.argv[1]))", "self.parse_args_into_dataclasses()"),
    ],
    ids=["not-a-parser", "no-file-parse"],
)
def test_a_class_that_parses_no_file_into_the_dataclasses_ties_none(tmp_path, monkeypatch, parser_module):
    write_tree(tmp_path, {
        ".git/HEAD": "",
        "handbook/__init__.py": "from .parsing import ModelArguments, QuietParser, YamlFirstParser\n",
        "handbook/parsing.py": parser_module,
        "scripts/train_pref.py": PREF_SCRIPT.format(parser="YamlFirstParser", call="model_args, cfg = YamlFirstParser((ModelArguments, PrefConfig)).parse()"),
        "configs/pref.yaml": PREF_YAML,
        "requirements.txt": "transformers==4.44.2\n",
    })
    assert _run(tmp_path, monkeypatch) == []
