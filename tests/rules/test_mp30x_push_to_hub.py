"""``push_to_hub(use_auth_token=...)`` (review 24b, M1): PushToHubMixin.push_to_hub, the method of
every model, of an Auto class's model and of peft's PeftModel (``get_peft_model(...)``), and of
every tokenizer, config and processor (held-out 39u's M4), took
``use_auth_token`` as a parameter up to 4.31, popped it with a FutureWarning ``if use_auth_token
is not None`` from 4.32 to 4.57, and has no ``**kwargs`` from 5.0 (TypeError)."""
from __future__ import annotations

import pytest

from conftest import findings_in, write_tree

PEFT = """
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("org/lm-1b")
model = get_peft_model(model, LoraConfig(r=8))
model.push_to_hub("user/lm-1b-lora", KEYWORD)
"""

AUTO = """
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("org/lm-1b")
model.push_to_hub("user/lm-1b", KEYWORD)
"""


LOADED = """
from transformers import CLASS

loaded = CLASS.from_pretrained("org/lm-1b")
loaded.push_to_hub("user/lm-1b", KEYWORD)
"""


def codes(tmp_path, keyword, pin=None, script=PEFT):
    files = {".git/HEAD": "", "push.py": script.replace("KEYWORD", keyword)}
    if pin:
        files["requirements.txt"] = pin + "\n"
    write_tree(tmp_path, files)
    name = keyword.split("=")[0]
    return sorted(d.code for d in findings_in(tmp_path, ["MP302", "MP304"]) if f"`{name}=" in d.message)


@pytest.mark.parametrize("script", [PEFT, AUTO], ids=["peft-model", "auto-model"])
def test_use_auth_token_raises_on_transformers_5(tmp_path, script):
    assert codes(tmp_path, "use_auth_token=True", script=script) == ["MP302"]
    assert codes(tmp_path, "use_auth_token=True", "transformers==5.0.0", script=script) == ["MP302"]


@pytest.mark.parametrize("pin", ["transformers==4.40.2", "transformers==4.32.0", "transformers>=4.36,<5"])
def test_use_auth_token_warns_on_4_32_to_4_57(tmp_path, pin):
    assert codes(tmp_path, "use_auth_token=True", pin) == ["MP304"]


def test_a_none_is_popped_silently_where_it_warns(tmp_path):
    assert codes(tmp_path, "use_auth_token=None", "transformers==4.40.2") == []


def test_before_the_rename_it_is_the_parameter(tmp_path):
    assert codes(tmp_path, "use_auth_token=True", "transformers==4.31.0") == []


def test_token_is_silent(tmp_path):
    assert codes(tmp_path, "token=True") == []
    assert codes(tmp_path, "token=True", "transformers==4.40.2") == []


def test_the_fix_renames_it(tmp_path):
    write_tree(tmp_path, {".git/HEAD": "", "push.py": AUTO.replace("KEYWORD", "use_auth_token=True")})
    found = [d for d in findings_in(tmp_path, ["MP302"]) if "`use_auth_token=" in d.message]
    assert len(found) == 1 and found[0].fix is not None
    assert [e.content for e in found[0].fix.edits] == ["token"]


def test_a_trainer_push_to_hub_is_another_method(tmp_path):
    script = (
        "from transformers import Trainer\n"
        "trainer = Trainer(model=None)\n"
        "trainer.push_to_hub(organization='x')\n"
    )
    write_tree(tmp_path, {".git/HEAD": "", "push.py": script})
    assert [d for d in findings_in(tmp_path, ["MP302", "MP304"]) if "push_to_hub" in d.message] == []


@pytest.mark.parametrize("cls", ["AutoTokenizer", "LlamaTokenizerFast", "AutoConfig", "AutoProcessor", "AutoImageProcessor"])
def test_a_tokenizer_config_or_processor_pushes_with_the_same_method(tmp_path, cls):
    script = LOADED.replace("CLASS", cls)
    assert codes(tmp_path, "use_auth_token=True", script=script) == ["MP302"]
    assert codes(tmp_path, "use_auth_token=True", "transformers==4.40.2", script=script) == ["MP304"]
    assert codes(tmp_path, "organization='me'", "transformers==4.40.2", script=script) == ["MP304"]
