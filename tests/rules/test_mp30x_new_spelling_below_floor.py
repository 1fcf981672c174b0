"""A keyword written in its NEW spelling where no version the code states has it:
`Trainer(processing_class=)` (transformers 4.46) under `transformers==4.45.2` or
`transformers>=4.44.2,<4.46` raises TypeError at every install. A range that admits the release
(`transformers>=4.44.2`) is nothing: the code's use of the new name says its authors run a
version that has it (reviews 24a, 27e and 28b judged such floors stale, not the code wrong).
Only the table's rows that know that release (`older_error`), only for stated versions (a pin,
a cap, the configuration): never the default targets. The row's rule reports it (MP301 for the
Trainer's tokenizer, else MP302); no fix."""
import pytest

from conftest import config, lint, write_tree

from precision_lint.engine import Engine
from precision_lint.workspace.config import from_table

TRAINER = """\
from transformers import Trainer
trainer = Trainer(model=model, args=args, processing_class=tok)
"""
ARGS = """\
from transformers import TrainingArguments
args = TrainingArguments("out", eval_strategy="steps")
"""
SFT = """\
from trl import SFTConfig
args = SFTConfig("out", max_length=512)
"""
CODES = ("MP301", "MP302", "MP304")


def run(root):
    cfg = from_table({}, "defaults")  # nothing configured: the project says
    found = Engine(cfg, list(CODES), jobs=1).run_paths([str(root)]).diagnostics
    return sorted(found, key=lambda d: (d.path, d.span.start))


def project(tmp_path, pin, src, name="requirements.txt"):
    files = {".git/HEAD": "", "train.py": src}
    if pin is not None:
        files[name] = pin + "\n"
    return run(write_tree(tmp_path, files))


def test_processing_class_below_its_release_is_mp301(tmp_path):
    (d,) = project(tmp_path, "transformers>=4.44.2,<4.46", TRAINER)
    assert d.code == "MP301" and d.fix is None
    assert "`processing_class=` passed to `Trainer` is new in transformers 4.46" in d.message
    assert "TypeError: Trainer.__init__() got an unexpected keyword argument 'processing_class'" in d.message
    assert "on every version transformers>=4.44.2,<4.46 in requirements.txt allows" in d.message
    assert "so require transformers 4.46 or later" in d.message


@pytest.mark.parametrize("pin", ["transformers>=4.44.2", "transformers>=4.44.2,<6.0.0", "transformers>=4.36,<4.47"])
def test_an_open_floor_below_its_release_is_nothing(tmp_path, pin):
    """The range admits 4.46 and later: an install resolved afresh gets a version that has the
    keyword the code is written with (review 28b's `eval_strategy=` under `transformers>=4.30`)."""
    assert project(tmp_path, pin, TRAINER) == []
    assert project(tmp_path, pin.replace("4.44.2", "4.30"), ARGS) == []


@pytest.mark.parametrize("pin", ["transformers>=4.46", "transformers==4.46.0", "transformers", None])
def test_processing_class_from_its_release_or_without_a_floor_is_nothing(tmp_path, pin):
    assert project(tmp_path, pin, TRAINER) == []


def test_an_exact_old_pin_says_every_version_lacks_it(tmp_path):
    (d,) = project(tmp_path, "transformers==4.45.2", TRAINER)
    assert "on transformers==4.45.2 in requirements.txt" in d.message


def test_eval_strategy_below_4_41_is_mp302(tmp_path):
    (d,) = project(tmp_path, "transformers==4.40.2", ARGS)
    assert d.code == "MP302" and d.fix is None
    assert "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'eval_strategy'" in d.message
    assert project(tmp_path, "transformers>=4.41", ARGS) == []


def test_trl_config_keyword_below_its_release(tmp_path):
    (d,) = project(tmp_path, "trl>=0.14,<0.16", SFT)
    assert d.code == "MP302" and "new in TRL 0.16" in d.message
    assert project(tmp_path, "trl>=0.16", SFT) == []


def test_the_configured_version_is_a_statement_but_not_the_default():
    cfg = config(transformers_version="4.45")
    (d,) = lint(TRAINER, "MP301", cfg)
    assert "new in transformers 4.46" in d.message
    assert lint(TRAINER, "MP301") == []  # the default target (5.23): nothing


def test_a_version_check_or_a_caught_type_error_is_left_alone():
    guarded = """\
import transformers
from packaging import version
from transformers import Trainer
if version.parse(transformers.__version__) >= version.parse("4.46"):
    trainer = Trainer(model=model, processing_class=tok)
else:
    trainer = Trainer(model=model, tokenizer=tok)
"""
    assert [d for d in lint(guarded, "MP301", config(transformers_version="4.44.2")) if "processing_class=` passed" in d.message] == []


def test_a_trl_trainer_is_judged_by_trl_not_by_the_transformers_row(tmp_path):
    src = "from trl import DPOTrainer\ntrainer = DPOTrainer(model=model, args=args, processing_class=tok)\n"
    assert project(tmp_path, "transformers>=4.36,<4.46", src) == []
    sub = "from transformers import Trainer\nclass Mine(Trainer):\n    pass\nt = Mine(model=model, processing_class=tok)\n"
    (d,) = project(tmp_path, "transformers>=4.36,<4.46", sub)
    assert "`Mine`" in d.message and "Trainer.__init__() got an unexpected keyword argument" in d.message


def test_a_subclass_with_an_abc_mixin_first_is_still_the_transformers_trainer(tmp_path):
    src = (
        "from abc import ABC\nfrom transformers.trainer import Trainer\n"
        "class Base(ABC, Trainer):\n    pass\nclass Mine(Base):\n    pass\n"
        "t = Mine(model=model, processing_class=tok)\n"
    )
    (d,) = project(tmp_path, "transformers>=4.44.2,<4.46", src)
    assert d.code == "MP301" and "TypeError: Trainer.__init__()" in d.message


# `dtype=` of from_pretrained / from_config: new in transformers 4.56 (`torch_dtype=` before);
# 4.40.2 and 4.55.4 hand it on to the model class's `__init__`, which raises TypeError
LOAD = """\
import torch
from transformers import AutoModelForCausalLM
model = AutoModelForCausalLM.from_pretrained(name, dtype=torch.bfloat16)
"""


@pytest.mark.parametrize("pin", ["transformers>=4.40,<4.56", "transformers==4.45.0", "transformers<4.45"])
def test_dtype_below_4_56_is_mp302(tmp_path, pin):
    """A cap alone is every version below it (review 38: `transformers<4.45` in
    requirements-gpu.txt): none has `dtype=`."""
    (d,) = project(tmp_path, pin, LOAD)
    assert d.code == "MP302" and d.fix is None
    assert "`dtype=` passed to `AutoModelForCausalLM.from_pretrained` is new in transformers 4.56" in d.message
    # an Auto class builds the class the checkpoint names: not known here
    assert "TypeError: <model class>.__init__() got an unexpected keyword argument 'dtype'" in d.message
    assert d.span.line == 3


@pytest.mark.parametrize("pin", ["transformers>=4.56", "transformers==4.56.0", "transformers", None, "transformers<5"])
def test_dtype_from_4_56_or_without_a_version_or_under_a_cap_above_is_nothing(tmp_path, pin):
    assert project(tmp_path, pin, LOAD) == []


def test_dtype_of_a_model_class_names_its_init(tmp_path):
    src = "import torch\nfrom transformers import GPT2LMHeadModel\nm = GPT2LMHeadModel.from_pretrained(p, dtype=torch.float16)\n"
    (d,) = project(tmp_path, "transformers>=4.40,<4.56", src)
    assert "`GPT2LMHeadModel.from_pretrained`" in d.message
    assert "TypeError: GPT2LMHeadModel.__init__() got an unexpected keyword argument 'dtype'" in d.message
    # the model class's own from_pretrained takes `torch_dtype=` silently from 5.0 on
    assert "the old `torch_dtype=` warns from transformers 4.56 to below 5.0 and is accepted silently from 5.0 on" in d.message


def test_dtype_of_a_project_subclass_names_no_class(tmp_path):
    src = (
        "import torch\nfrom transformers import GPT2LMHeadModel\n"
        "class Mine(GPT2LMHeadModel):\n    pass\nm = Mine.from_pretrained(p, dtype=torch.float16)\n"
    )
    (d,) = project(tmp_path, "transformers>=4.40,<4.56", src)
    assert "`Mine.from_pretrained`" in d.message and "TypeError: <model class>.__init__()" in d.message


def test_dtype_of_from_config(tmp_path):
    src = "import torch\nfrom transformers import AutoModel\nm = AutoModel.from_config(cfg, dtype=torch.float16)\n"
    (d,) = project(tmp_path, "transformers>=4.40,<4.56", src)
    assert "`AutoModel.from_config` is new in transformers 4.56" in d.message


def test_dtype_under_a_version_check_or_a_caught_type_error_is_nothing(tmp_path):
    checked = """\
import torch, transformers
from packaging import version
from transformers import AutoModelForCausalLM
if version.parse(transformers.__version__) >= version.parse("4.56"):
    model = AutoModelForCausalLM.from_pretrained(name, dtype=torch.bfloat16)
else:
    model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.bfloat16)
"""
    caught = """\
import torch
from transformers import AutoModelForCausalLM
try:
    model = AutoModelForCausalLM.from_pretrained(name, dtype=torch.bfloat16)
except TypeError:
    model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.bfloat16)
"""
    for src in (checked, caught):
        assert [d for d in project(tmp_path, "transformers>=4.40,<4.56", src) if "`dtype=`" in d.message] == []


def test_dtype_of_a_torch_call_is_not_recorded_nor_reported(tmp_path):
    src = """\
import torch
x = torch.zeros(3, dtype=torch.float16)
y = x.to(dtype=torch.float32)
"""
    assert project(tmp_path, "transformers>=4.40,<4.56", src) == []
    from precision_lint.facts.extract import extract_facts

    calls = extract_facts(src + LOAD, "t.py", module="t").sections["migrations"]["calls"]
    assert [c.span.line for c in calls] == [6]  # only the from_pretrained call of LOAD
