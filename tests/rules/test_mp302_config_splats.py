"""MP302 / MP304: removed keys of a config file's table spread into a class of the table.

``cfg = yaml.safe_load(open("config.yaml"))`` then ``Seq2SeqTrainingArguments(**cfg["training"])``
hands every key of the file's ``training`` table to the class as a keyword: on transformers 5
a file that still says ``evaluation_strategy: steps`` stops the run with the class's own
``TypeError: Seq2SeqTrainingArguments.__init__() got an unexpected keyword argument
'evaluation_strategy'``. The finding is in the configuration file, at the key, with the call
as related location; no fix (the engine rewrites Python files only)."""
import json

import pytest
from conftest import config, dedent, write_tree

from precision_lint.engine import Engine

SCRIPT = """
    import yaml
    from transformers import Seq2SeqTrainingArguments

    cfg = yaml.safe_load(open("config.yaml"))
    args = Seq2SeqTrainingArguments(**cfg["training"])
    """
YAML = "training:\n  output_dir: out\n  evaluation_strategy: steps\n  fp16: true\n"
ERROR = "TypeError: Seq2SeqTrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'"


def _run(root, monkeypatch, codes=("MP302", "MP304"), cfg=None):
    monkeypatch.chdir(root)
    return Engine(cfg or config(), list(codes), jobs=1).run_paths(["."]).diagnostics


def _at_key(d, text: str, key: str) -> bool:
    line = text.splitlines()[d.span.line - 1]
    return line[d.span.col : d.span.end_col] in (key, f'"{key}"')


def _tree(tmp_path, script=SCRIPT, files=None, pin="transformers>=5.0\n"):
    write_tree(tmp_path, {"train.py": script, "config.yaml": YAML, "requirements.txt": pin, **(files or {})})


def test_a_removed_key_of_a_spread_table_is_reported_at_its_key_with_the_class_own_error(tmp_path, monkeypatch):
    _tree(tmp_path)
    (d,) = _run(tmp_path, monkeypatch)
    assert d.code == "MP302" and d.path == "config.yaml" and (d.span.line, d.span.col) == (3, 2)
    assert _at_key(d, YAML, "evaluation_strategy")
    assert f"raises `{ERROR}`" in d.message and "HfArgumentParser" not in d.message
    assert "train.py passes the `training` table of this file to `Seq2SeqTrainingArguments` as keywords" in d.message
    assert '(`**cfg["training"]`, line 5)' in d.message
    assert "(every version transformers>=5.0 in requirements.txt allows)" in d.message
    assert d.message.endswith("rename the key to `eval_strategy`")
    assert d.fix is None  # the engine rewrites Python files only
    assert [(r.path, r.span.line) for r in d.related] == [("train.py", 5)]


def test_a_pin_that_only_deprecates_the_key_warns_and_an_older_one_says_nothing(tmp_path, monkeypatch):
    _tree(tmp_path, pin="transformers>=4.41,<4.51\n")
    (d,) = _run(tmp_path, monkeypatch)
    assert d.code == "MP304" and "is deprecated since transformers 4.41" in d.message and ERROR in d.message
    _tree(tmp_path, pin="transformers==4.40.0\n")
    assert _run(tmp_path, monkeypatch) == []  # `eval_strategy` does not exist there yet


TABLES = {
    "a-variable": 'train_cfg = cfg["training"]\n    args = Seq2SeqTrainingArguments(**train_cfg)',
    "get": 'args = Seq2SeqTrainingArguments(**cfg.get("training", {}))',
    "dict-copy": 'args = Seq2SeqTrainingArguments(**dict(cfg["training"]))',
    "copy-method": 'train_cfg = cfg["training"].copy()\n    args = Seq2SeqTrainingArguments(**train_cfg)',
    "deepcopy": 'args = Seq2SeqTrainingArguments(**copy.deepcopy(cfg["training"]))',
    "in-a-function": 'def main():\n        args = Seq2SeqTrainingArguments(**cfg["training"], report_to="none")',
}


@pytest.mark.parametrize("how", sorted(TABLES))
def test_the_table_is_followed_through_variables_gets_and_copies(tmp_path, monkeypatch, how):
    script = SCRIPT.replace('args = Seq2SeqTrainingArguments(**cfg["training"])', TABLES[how]).replace(
        "import yaml", "import copy\n    import yaml"
    )
    _tree(tmp_path, dedent(script))
    (d,) = _run(tmp_path, monkeypatch)
    assert d.code == "MP302" and d.path == "config.yaml" and d.span.line == 3 and ERROR in d.message


OMEGACONF = {
    "attribute": "args = Seq2SeqTrainingArguments(**cfg.training)",
    "to-container": "train_cfg = OmegaConf.to_container(cfg.training, resolve=True)\n    args = Seq2SeqTrainingArguments(**train_cfg)",
}


@pytest.mark.parametrize("how", sorted(OMEGACONF))
def test_an_omegaconf_table(tmp_path, monkeypatch, how):
    script = SCRIPT.replace("import yaml", "from omegaconf import OmegaConf").replace(
        'yaml.safe_load(open("config.yaml"))', 'OmegaConf.load("config.yaml")'
    ).replace('args = Seq2SeqTrainingArguments(**cfg["training"])', OMEGACONF[how])
    _tree(tmp_path, dedent(script))
    (d,) = _run(tmp_path, monkeypatch)
    assert d.code == "MP302" and d.span.line == 3 and ERROR in d.message
    assert f"`**{'cfg.training' if how == 'attribute' else 'train_cfg'}`" in d.message


def test_a_nested_table_is_read_at_its_path(tmp_path, monkeypatch):
    script = SCRIPT.replace('**cfg["training"]', '**cfg["experiment"]["training"]')
    nested = (
        "experiment:\n  name: run1\n  training:\n    output_dir: out\n    per_gpu_train_batch_size: 8\n"
        "evaluation_strategy: steps\n"  # a key of another table: not spread into the call
    )
    _tree(tmp_path, script, {"config.yaml": nested})
    (d,) = _run(tmp_path, monkeypatch)
    assert d.code == "MP302" and (d.span.line, d.span.col) == (5, 4) and _at_key(d, nested, "per_gpu_train_batch_size")
    assert "the `experiment.training` table of this file" in d.message
    assert "rename the key to `per_device_train_batch_size`" in d.message


def test_a_json_file_and_a_whole_file_spread(tmp_path, monkeypatch):
    data = {"training": {"output_dir": "out", "evaluation_strategy": "steps"}}
    text = json.dumps(data, indent=2) + "\n"
    script = """
        import json
        from transformers import TrainingArguments

        with open("train.json") as fh:
            cfg = json.load(fh)
        args = TrainingArguments(**cfg["training"])
        """
    _tree(tmp_path, script, {"train.json": text})
    (d,) = _run(tmp_path, monkeypatch)
    assert d.path == "train.json" and d.span.line == 4 and _at_key(d, text, "evaluation_strategy")
    assert "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'" in d.message
    # the whole file spread into the call: its top-level keys
    whole = """
        import yaml
        from transformers import TrainingArguments

        args = TrainingArguments(**yaml.safe_load(open("args.yaml")))
        """
    _tree(tmp_path, whole, {"args.yaml": "output_dir: out\nevaluation_strategy: epoch\n"})
    (d,) = _run(tmp_path, monkeypatch)
    assert d.path == "args.yaml" and d.span.line == 2 and "the keys of this file" in d.message


def test_from_pretrained_given_a_table_of_load_options(tmp_path, monkeypatch):
    script = """
        import yaml
        from transformers import AutoModelForCausalLM

        cfg = yaml.safe_load(open("config.yaml"))
        model = AutoModelForCausalLM.from_pretrained(cfg["model_name"], **cfg["load"])
        """
    text = "model_name: gpt2\nload:\n  load_in_8bit: true\n"
    _tree(tmp_path, script, {"config.yaml": text})
    (d,) = _run(tmp_path, monkeypatch)
    assert d.code == "MP302" and d.path == "config.yaml" and d.span.line == 3
    assert "`AutoModelForCausalLM.from_pretrained`" in d.message and "load_in_8bit" in d.message


NOT_THE_FILE_S = {
    # the call passes the key itself: its own finding, in the Python file, not the file's
    "passed-explicitly": 'args = Seq2SeqTrainingArguments(evaluation_strategy="no", **cfg["training"])',
    # keys the code drops before the call
    "popped": 'cfg["training"].pop("evaluation_strategy", None)\n    args = Seq2SeqTrainingArguments(**cfg["training"])',
    "deleted": 'train_cfg = cfg["training"]\n    del train_cfg["evaluation_strategy"]\n    args = Seq2SeqTrainingArguments(**train_cfg)',
    "renamed": (
        'train_cfg = cfg["training"]\n    train_cfg["eval_strategy"] = train_cfg.pop("evaluation_strategy")\n'
        "    args = Seq2SeqTrainingArguments(**train_cfg)"
    ),
    # a key dropped by a name the code computes: which keys are left is not known
    "popped-by-a-computed-name": (
        'for name in list(cfg["training"]):\n        if name not in FIELDS:\n            cfg["training"].pop(name)\n'
        '    args = Seq2SeqTrainingArguments(**cfg["training"])'
    ),
    # mappings whose keys are not known
    "filtered-copy": 'args = Seq2SeqTrainingArguments(**{k: v for k, v in cfg["training"].items() if k in FIELDS})',
    "a-computed-table": 'args = Seq2SeqTrainingArguments(**cfg[SECTION])',
    "the-command-line": "import argparse\n    args = Seq2SeqTrainingArguments(**vars(argparse.ArgumentParser().parse_args()))",
    # the TypeError is expected
    "caught": 'try:\n        args = Seq2SeqTrainingArguments(**cfg["training"])\n    except TypeError:\n        args = None',
    # a class of no row of the table
    "another-class": 'args = dict(**cfg["training"])',
}


@pytest.mark.parametrize("how", sorted(NOT_THE_FILE_S))
def test_keys_not_handed_to_the_class_or_mappings_not_known_are_silent(tmp_path, monkeypatch, how):
    script = SCRIPT.replace('args = Seq2SeqTrainingArguments(**cfg["training"])', NOT_THE_FILE_S[how]).replace(
        "import yaml", 'import yaml\n    FIELDS = {"output_dir"}\n    SECTION = input()'
    )
    _tree(tmp_path, dedent(script))
    found = [d for d in _run(tmp_path, monkeypatch) if d.path == "config.yaml"]
    assert found == []
    if how == "passed-explicitly":  # the code's own keyword is reported where it is written
        (d,) = _run(tmp_path, monkeypatch)
        assert d.path == "train.py" and "evaluation_strategy=" in d.message


def test_a_project_subclass_that_declares_the_key_takes_it(tmp_path, monkeypatch):
    script = """
        import yaml
        from dataclasses import dataclass
        from transformers import Seq2SeqTrainingArguments

        @dataclass
        class Args(Seq2SeqTrainingArguments):
            evaluation_strategy: str = "no"

        cfg = yaml.safe_load(open("config.yaml"))
        args = Args(**cfg["training"])
        """
    _tree(tmp_path, script)
    assert [d for d in _run(tmp_path, monkeypatch) if d.path == "config.yaml"] == []


def test_a_missing_file_or_table_is_silent(tmp_path, monkeypatch):
    write_tree(tmp_path, {"train.py": SCRIPT, "requirements.txt": "transformers>=5.0\n"})
    assert _run(tmp_path, monkeypatch) == []
    write_tree(tmp_path, {"config.yaml": "model:\n  evaluation_strategy: steps\n"})
    assert _run(tmp_path, monkeypatch) == []


# --- the precision rules read `fp16` / `bf16` of such a spread as before -------------------------------

PRECISION = """
    import torch
    import yaml
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

    cfg = yaml.safe_load(open("config.yaml"))
    model = AutoModelForCausalLM.from_pretrained("gpt2", dtype=torch.float16)
    args = TrainingArguments(**cfg["training"])
    Trainer(model=model, args=args).train()
    """


def test_the_precision_rules_still_read_fp16_and_bf16_of_the_spread_table(tmp_path, monkeypatch):
    flags = "training:\n  output_dir: out\n  evaluation_strategy: steps\n  fp16: true\n  bf16: true\n"
    write_tree(tmp_path, {"train.py": PRECISION, "config.yaml": flags, "requirements.txt": "transformers>=5.0\n"})
    found = _run(tmp_path, monkeypatch, codes=("MP101", "MP102", "MP302"), cfg=config(target_gpus=["T4"]))
    assert sorted((d.code, d.path) for d in found) == [("MP101", "train.py"), ("MP102", "train.py"), ("MP302", "config.yaml")]
    mp102 = next(d for d in found if d.code == "MP102")
    assert '**cfg["training"]' in mp102.message
    # bf16 alone, on a T4 (no bf16): MP201 reads it from the spread table
    write_tree(tmp_path, {"config.yaml": "training:\n  output_dir: out\n  bf16: true\n"})
    found = _run(tmp_path, monkeypatch, codes=("MP201", "MP302"), cfg=config(target_gpus=["T4"]))
    assert [d.code for d in found] == ["MP201"] and found[0].path == "train.py"


def test_a_key_dropped_from_another_table_or_another_key_dropped_leaves_the_key_reported(tmp_path, monkeypatch):
    script = SCRIPT.replace(
        'args = Seq2SeqTrainingArguments(**cfg["training"])',
        'cfg["training"].pop("fp16")\n    cfg["model"].pop("evaluation_strategy", None)\n    args = Seq2SeqTrainingArguments(**cfg["training"])',
    )
    _tree(tmp_path, dedent(script), {"config.yaml": YAML + "model:\n  evaluation_strategy: steps\n"})
    (d,) = _run(tmp_path, monkeypatch)
    assert d.path == "config.yaml" and d.span.line == 3
