"""A deprecated keyword that the deprecated versions accept without a word for some values
(``quiet_values`` in ``knowledge/migrations.toml``): transformers 4.36 to 4.52 pop
``from_pretrained(use_flash_attention_2=False)`` and warn only ``if use_flash_attention_2:``,
and ``use_auth_token`` only ``if use_auth_token is not None:``. A call whose code gives only
such values warns nowhere before the removal; from the removal on every value raises
``TypeError: ... got an unexpected keyword argument``."""
from __future__ import annotations

import pytest

from conftest import findings_in, write_tree


SCRIPT = """
import argparse
import torch
from transformers import AutoModelForSpeechSeq2Seq

ap = argparse.ArgumentParser()
ap.add_argument("--fa2", type=lambda s: s.lower() == "true", default=DEFAULT)
opts = ap.parse_args()
model = AutoModelForSpeechSeq2Seq.from_pretrained("m", torch_dtype=torch.float16, KEYWORD)
"""


def codes(tmp_path, keyword, pin="transformers==4.51.3", default="False"):
    write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": pin + "\n", "serve.py": SCRIPT.replace("KEYWORD", keyword).replace("DEFAULT", default)})
    found = findings_in(tmp_path, ["MP302", "MP304"])
    name = keyword.split("=")[0]
    return sorted(d.code for d in found if f"`{name}" in d.message)


@pytest.mark.parametrize(
    "keyword",
    ["use_flash_attention_2=False", "use_flash_attention_2=opts.fa2", "use_auth_token=None", "load_in_8bit=False"],
    ids=["literal-false", "option-defaulting-false", "auth-none", "load-in-8bit-false"],
)
def test_a_value_the_deprecated_versions_pop_silently_is_no_finding(tmp_path, keyword):
    assert codes(tmp_path, keyword) == []


@pytest.mark.parametrize(
    "keyword, default",
    [
        ("use_flash_attention_2=True", "False"),
        ("use_flash_attention_2=opts.fa2", "True"),  # on by default
        ("use_auth_token='hf_xxx'", "False"),
        ("use_flash_attention_2=torch.cuda.is_available()", "False"),  # not known: may be true
    ],
    ids=["literal-true", "option-defaulting-true", "auth-token", "not-known"],
)
def test_a_value_that_warns_is_reported(tmp_path, keyword, default):
    assert codes(tmp_path, keyword, default=default) == ["MP304"]


@pytest.mark.parametrize("pin, code", [("transformers==4.53.0", "MP302"), ("transformers>=4.40,<5", "MP304")])
def test_where_an_allowed_version_removed_the_name_every_value_raises(tmp_path, pin, code):
    assert codes(tmp_path, "use_flash_attention_2=False", pin) == [code]


def test_a_choice_the_code_makes_from_its_own_flag_may_be_true(tmp_path):
    """``True if model_args.use_flash_attn else False`` in a helper: the flag is a field whose
    default the code sets (``True`` in the project that had it), not a value a user passes:
    the true branch is the code's, and warns."""
    write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers==4.41.0\n", "load.py": (
        "from transformers import AutoModelForCausalLM\n\n\n"
        "def load(model_args):\n"
        "    return AutoModelForCausalLM.from_pretrained('m', use_flash_attention_2=True if model_args.use_flash_attn else False)\n"
    )})
    found = findings_in(tmp_path, ["MP304"])
    assert [d.code for d in found if "`use_flash_attention_2" in d.message] == ["MP304"]


# --- TRL 0.9 to 0.12: a trainer keyword warns only where it is not the trainer's default -----
TRL_PIN = "trl>=0.9.6,<0.12\ntransformers==4.44.2\n"
WRAPPER = '''
from trl import DPOTrainer


class PairTrainer(DPOTrainer):
    def __init__(self, model=None, args=None, beta=0.1, label_pad_token_id=-100, reference_free=False, cutoff=None):
        super().__init__(model=model, args=args, beta=beta, label_pad_token_id=label_pad_token_id,
                         reference_free=reference_free, max_length=cutoff)
'''


def _trl_codes(tmp_path, files):
    write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": TRL_PIN, **files})
    found = findings_in(tmp_path, ["MP302", "MP304"])
    return sorted(d.message.split("`")[1] for d in found)


@pytest.mark.parametrize("call, expected", [
    ("DPOTrainer(m, args=cfg, beta=0.1, label_pad_token_id=-100, disable_dropout=True)", []),
    ("DPOTrainer(m, args=cfg, beta=0.2, truncation_mode='keep_start')", ["beta=", "truncation_mode="]),
], ids=["defaults", "other-values"])
def test_a_trl_trainer_keyword_at_its_default_warns_nowhere(tmp_path, call, expected):
    script = "from trl import DPOConfig, DPOTrainer\ncfg = DPOConfig(output_dir='o')\nm = None\n" + call + "\n"
    assert _trl_codes(tmp_path, {"go.py": script}) == expected


@pytest.mark.parametrize("call, expected", [
    # every keyword left to the subclass's defaults, which are TRL's: nothing warns
    ("PairTrainer(m, args=cfg)", []),
    # a value of its own (`cutoff` becomes `max_length=`, whose default is None)
    ("PairTrainer(m, args=cfg, beta=0.5, cutoff=512)", ["beta=", "max_length="]),
    # a splat may pass any of them
    ("PairTrainer(m, **extra)", ["beta=", "label_pad_token_id=", "max_length=", "reference_free="]),
], ids=["defaults", "own-values", "splat"])
def test_a_subclass_forwarding_trl_keywords_is_judged_by_what_its_callers_pass(tmp_path, call, expected):
    script = (
        "from trl import DPOConfig\nfrom wrapped import PairTrainer\ncfg = DPOConfig(output_dir='o')\nm = None\n"
        "extra = load_options()\n" + call + "\n"
    )
    assert _trl_codes(tmp_path, {"wrapped.py": WRAPPER, "go.py": script}) == expected


@pytest.mark.parametrize("pin, expected", [
    ("transformers==4.31.0", ["MP304", "MP304"]),  # both warn from 4.31 on, where `token=` is new
    ("transformers==4.30.2", []),  # nothing warns yet
    ("transformers>=5.0", ["MP302"]),  # the model rejects it; the tokenizer takes it silently
], ids=["4.31", "4.30", "5.x"])
def test_use_auth_token_warns_from_4_31_for_models_and_tokenizers(tmp_path, pin, expected):
    write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": pin + "\n", "prep.py": (
        "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
        "AUTH = False\n"
        "tok = AutoTokenizer.from_pretrained('m', use_auth_token=AUTH)\n"
        "net = AutoModelForCausalLM.from_pretrained('m', use_auth_token=AUTH)\n"
    )})
    found = findings_in(tmp_path, ["MP302", "MP304"])
    assert sorted(d.code for d in found) == expected
