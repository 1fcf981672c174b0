"""``pipeline(model_kwargs={...})`` (review 24b, M3): where the pipeline loads the model by name,
the dict's keys are keywords of ``<Auto class>.from_pretrained(model, **model_kwargs)``
(``pipelines/base.py`` ``load_model``, 4.57.1 and 5.24.0): the from_pretrained rows judge them."""
from __future__ import annotations

import pytest
from conftest import findings_in, write_tree

CHAT = """
import torch
import transformers

pipe = transformers.pipeline(
    "text-generation",
    model=MODEL,
    model_kwargs=KWARGS,
)
"""


def found(tmp_path, kwargs, model='"org/lm-8b"', pin=None, prelude=""):
    files = {".git/HEAD": "", "chat.py": prelude + CHAT.replace("KWARGS", kwargs).replace("MODEL", model)}
    if pin:
        files["requirements.txt"] = pin + "\n"
    write_tree(tmp_path, files)
    return sorted((d.code, d.message.split("`")[1]) for d in findings_in(tmp_path, ["MP302", "MP304"]))


def test_the_keys_reach_from_pretrained(tmp_path):
    assert found(tmp_path, '{"torch_dtype": torch.float16, "load_in_4bit": True}') == [("MP302", "load_in_4bit"), ("MP304", "torch_dtype")]


def test_a_dict_built_elsewhere(tmp_path):
    prelude = "kw = dict(load_in_8bit=True)\n"
    assert found(tmp_path, "kw", prelude=prelude) == [("MP302", "load_in_8bit")]


def test_before_the_removal_it_warns_and_before_the_warning_nothing(tmp_path):
    assert found(tmp_path, '{"load_in_4bit": True}', pin="transformers==4.40.2") == [("MP304", "load_in_4bit")]
    assert found(tmp_path, '{"load_in_4bit": True}', pin="transformers==4.37.2") == []


def test_the_new_spellings_are_silent(tmp_path):
    assert found(tmp_path, '{"dtype": torch.float16, "device_map": "auto"}') == []


def test_a_model_built_already_loads_nothing(tmp_path):
    prelude = "from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('org/lm', dtype='auto')\n"
    assert found(tmp_path, '{"load_in_4bit": True}', model="m", prelude=prelude) == []


def test_the_message_names_the_pipeline_and_the_fix_renames_the_key(tmp_path):
    write_tree(tmp_path, {".git/HEAD": "", "chat.py": CHAT.replace("KWARGS", '{"torch_dtype": torch.float16}').replace("MODEL", '"org/lm"')})
    (d,) = findings_in(tmp_path, ["MP304"])
    assert "pipeline(model_kwargs=...)" in d.message
    assert [e.content for e in d.fix.edits] == ['"dtype"']


ENCODER = """
import torch
from sentence_transformers import CLASS

model = CLASS(ARGS, model_kwargs={"torch_dtype": torch.float16})
"""


@pytest.mark.parametrize("cls", ["CrossEncoder", "SentenceTransformer"])
@pytest.mark.parametrize("args, loads", [('"org/encoder"', True), ('model_name_or_path="org/encoder"', True), ("built", False)])
def test_sentence_transformers_hand_their_model_kwargs_to_from_pretrained(tmp_path, cls, args, loads):
    """Held-out 39u's M1: a reranker's `CrossEncoder(name, model_kwargs={"torch_dtype": ...})`
    (sentence-transformers 5.7.0 loads with `AutoModel*.from_pretrained(name, **model_kwargs)`)."""
    prelude = "from transformers import AutoModel\nbuilt = AutoModel.from_pretrained('org/encoder')\n" if not loads else ""
    write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers>=4.44,<5\n",
                          "rank.py": prelude + ENCODER.replace("CLASS", cls).replace("ARGS", args)})
    found = findings_in(tmp_path, ["MP302", "MP304"])
    assert [(d.code, f"{cls}(model_kwargs=...)" in d.message) for d in found] == ([("MP304", True)] if loads else [])
