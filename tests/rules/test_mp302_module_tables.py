"""MP302 / MP304: keys of a dict another project module binds, spread into a class of the table.

A project keeps its settings in a module of constants (``TRAINING_ARGS = {...}`` in
``src/settings.py``) and a training script spreads it: ``TrainingArguments(output_dir="out",
**settings.TRAINING_ARGS)``. Each key is a keyword of the call, so on transformers 4.51 and later
a key ``evaluation_strategy`` stops the run with ``TypeError: TrainingArguments.__init__() got an
unexpected keyword argument 'evaluation_strategy'`` (review 30a's M1). The finding is at the key
in the settings module, the call related; no fix (the module's other importers may pass the dict
to something else)."""
import pytest
from conftest import config, write_tree

from precision_lint.engine import Engine
from precision_lint.facts.extractors import keyword_tables
from precision_lint.semantic.evaluate import Evaluator
from precision_lint.semantic.index import build_index

SETTINGS = 'TRAINING_ARGS = {\n    "per_device_train_batch_size": 1,\n    "evaluation_strategy": "steps",\n}\n'
ERROR = "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'"


def _run(root, monkeypatch, codes=("MP302", "MP304")):
    monkeypatch.chdir(root)
    return Engine(config(), list(codes), jobs=1).run_paths(["."]).diagnostics


def _tree(tmp_path, script: str, settings: str = SETTINGS, pin: str = "transformers==4.53.2\n"):
    write_tree(tmp_path, {
        ".git/HEAD": "", "requirements.txt": pin, "src/__init__.py": "", "src/settings.py": settings,
        "src/train.py": script,
    })


@pytest.mark.parametrize(
    "imports, spread",
    [
        ("import src.settings as settings", "settings.TRAINING_ARGS"),
        ("from src import settings", "settings.TRAINING_ARGS"),
        ("from src.settings import TRAINING_ARGS", "TRAINING_ARGS"),
        ("from .settings import TRAINING_ARGS as ARGS", "ARGS"),
    ],
)
def test_a_removed_key_of_another_modules_dict_is_reported_at_its_key(tmp_path, monkeypatch, imports, spread):
    script = f"from transformers import TrainingArguments\n{imports}\n\ndef make():\n    return TrainingArguments(output_dir='o', **{spread})\n"
    _tree(tmp_path, script)
    (d,) = _run(tmp_path, monkeypatch)
    assert d.code == "MP302" and d.path.replace("\\", "/") == "src/settings.py" and (d.span.line, d.span.col) == (3, 4)
    assert f"raises `{ERROR}`" in d.message
    assert "passes `TRAINING_ARGS` of this module to `TrainingArguments` as keywords" in d.message
    assert d.message.endswith("rename the key to `eval_strategy`")
    assert d.fix is None
    assert [(r.path.replace("\\", "/"), r.span.line) for r in d.related] == [("src/train.py", 5)]


SCRIPT = "from transformers import TrainingArguments\nfrom src import settings\n\nTrainingArguments(output_dir='o', **settings.TRAINING_ARGS)\n"


def test_a_dict_call_is_a_table_and_an_older_pin_says_nothing(tmp_path, monkeypatch):
    _tree(tmp_path, SCRIPT, settings="TRAINING_ARGS = dict(evaluation_strategy='steps', fp16=True)\n")
    (d,) = _run(tmp_path, monkeypatch)
    assert d.code == "MP302" and (d.span.line, d.span.col) == (1, 21)
    _tree(tmp_path, SCRIPT, settings="TRAINING_ARGS = dict(evaluation_strategy='steps', fp16=True)\n", pin="transformers==4.40.0\n")
    assert _run(tmp_path, monkeypatch) == []


@pytest.mark.parametrize(
    "settings",
    [
        SETTINGS + 'TRAINING_ARGS.pop("evaluation_strategy")\n',  # changed in place: its keys are not the literal's
        SETTINGS + 'TRAINING_ARGS["eval_strategy"] = TRAINING_ARGS.pop("evaluation_strategy")\n',
        SETTINGS + "TRAINING_ARGS = {}\n",  # bound twice
        SETTINGS + 'def fix():\n    global TRAINING_ARGS\n    TRAINING_ARGS = {"eval_strategy": "steps"}\n',
    ],
)
def test_a_dict_the_module_changes_is_no_table(tmp_path, monkeypatch, settings):
    _tree(tmp_path, SCRIPT, settings=settings)
    assert _run(tmp_path, monkeypatch) == []


def test_a_key_the_call_passes_itself_is_the_calls_finding_and_noqa_at_the_key_holds(tmp_path, monkeypatch):
    script = SCRIPT.replace("output_dir='o',", "output_dir='o', evaluation_strategy='no',").replace("**settings", "**settings")
    _tree(tmp_path, script.replace("evaluation_strategy='no', **settings.TRAINING_ARGS", "**settings.TRAINING_ARGS, evaluation_strategy='no'"))
    found = _run(tmp_path, monkeypatch)
    assert [d.path.replace("\\", "/") for d in found] == ["src/train.py"]  # the call's own keyword, not the table's
    _tree(tmp_path, SCRIPT, settings=SETTINGS.replace('"steps",', '"steps",  # noqa: MP302'))
    assert _run(tmp_path, monkeypatch) == []


def test_the_table_fact():
    source = SETTINGS + "OTHER = {**TRAINING_ARGS}\nSHAPES = {1: 'a'}\nFLAGS = dict(fp16=True)\n"
    index = build_index(source, "src.settings")
    tables = keyword_tables.extract(index, Evaluator(index))["tables"]
    assert [(t.name, [k.name for k in t.keys]) for t in tables] == [
        ("TRAINING_ARGS", ["per_device_train_batch_size", "evaluation_strategy"]),
        ("FLAGS", ["fp16"]),
    ]
    assert [k.value_text for k in tables[0].keys] == ["1", '"steps"']
