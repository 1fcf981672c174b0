"""MP301-MP304 judge the versions each file targets (a range from its own project, its own
`require_version` / `%pip install`, a vendored copy) and honour the project's own
compatibility code. Every shape has its negative beside it."""
import json

import pytest

from conftest import config, lint, write_tree

from precision_lint.workspace.config import from_table
from precision_lint.engine import Engine

NEWEST = config(transformers_version="5.23", trl_version="1.16")


def run(root, codes=("MP301", "MP302", "MP304", "MP201")):
    cfg = from_table({}, "defaults")  # nothing configured: the files' projects say
    found = Engine(cfg, list(codes), jobs=1).run_paths([str(root)]).diagnostics
    return sorted(found, key=lambda d: (d.path, d.span.start))


def by_file(found, name):
    return [d for d in found if d.path.endswith(name)]


TRAINER = """\
from transformers import Trainer
trainer = Trainer(model=model, tokenizer=tok)
"""

EVAL_STRATEGY = """\
from transformers import TrainingArguments
args = TrainingArguments("out", evaluation_strategy="steps")
"""


# --- a range is a range ---------------------------------------------------------------------
def test_poetry_range_below_5_is_a_deprecation_warning_without_a_fix(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "pyproject.toml": '[tool.poetry.dependencies]\ntransformers = ">=4.36,<5.0"\n',
        "train.py": TRAINER,
    })
    (d,) = run(root)
    assert d.code == "MP301"
    assert "deprecated since transformers 4.46" in d.message and "raises" in d.message
    assert "was removed" not in d.message
    assert d.fix is None  # 4.36, the lowest allowed, has no processing_class=


def test_every_allowed_version_removed_is_the_error_with_a_fix(tmp_path):
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers>=5.0,<6\n", "train.py": TRAINER})
    (d,) = run(root)
    assert "was removed in transformers 5.0" in d.message and "requirements.txt" in d.message
    assert d.fix is not None


def test_pep621_upper_bound_is_not_one_version(tmp_path):
    # `<5.0` allows 4.51+, which removed evaluation_strategy: a warning naming them, no fix
    # (the lowest allowed version is unknown: eval_strategy may not exist there)
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "pyproject.toml": '[project]\nname = "x"\ndependencies = ["transformers<5.0"]\n',
        "train.py": EVAL_STRATEGY,
    })
    (d,) = run(root)
    assert d.code == "MP304"
    assert "was removed in transformers 4.51" in d.message and "4.51 below 5.0" in d.message
    assert d.fix is None


def test_a_range_whose_every_version_still_has_the_name_is_silent(tmp_path):
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers>=4.30,<4.41\n", "train.py": EVAL_STRATEGY})
    assert run(root) == []


def test_torch_dtype_under_a_pin_that_allows_versions_without_dtype_gets_no_fix(tmp_path):
    src = "from transformers import AutoModel\nm = AutoModel.from_pretrained('x', torch_dtype='auto')\n"
    # below 5.0: `torch_dtype="auto"` is silent on 5.x, so a range reaching there targets a silent version
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers>=4.33,<5\n", "train.py": src})
    (d,) = run(root)
    assert d.code == "MP304" and d.fix is None
    newer = write_tree(tmp_path / "newer", {".git/HEAD": "", "requirements.txt": "transformers>=4.56,<5\n", "train.py": src})
    (d,) = run(newer)
    assert d.code == "MP304" and d.fix is not None


def test_warmup_ratio_is_not_renamed_where_4x_reads_warmup_steps_as_steps(tmp_path):
    src = "from transformers import TrainingArguments\nargs = TrainingArguments('o', warmup_ratio=0.03)\n"
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers>=4.40\n", "train.py": src})
    (d,) = run(root)
    assert d.code == "MP304" and d.fix is None
    newer = write_tree(tmp_path / "newer", {".git/HEAD": "", "requirements.txt": "transformers>=5.2\n", "train.py": src})
    (d,) = run(newer)
    assert d.fix is not None and "warmup_steps" in d.fix.message


# --- where the versions come from -----------------------------------------------------------
def test_require_version_in_the_file_keeps_trl_09(tmp_path):
    src = """\
    from transformers.utils.versions import require_version
    from trl import PPOConfig, PPOTrainer
    require_version("trl>=0.8.6,<=0.9.6", "pip install trl==0.9.6")
    config = PPOConfig(model_name="gpt2", learning_rate=1e-5)

    class MyPPO(PPOTrainer):
        def decode(self, ids):
            return self.tokenizer.decode(ids)
    """
    root = write_tree(tmp_path, {".git/HEAD": "", "train.py": src})
    assert run(root) == []  # no bf16= added to a TRL 0.9 PPOConfig, no `.tokenizer` renamed
    unpinned = write_tree(tmp_path / "new", {".git/HEAD": "", "train.py": src.replace('require_version("trl>=0.8.6,<=0.9.6", "pip install trl==0.9.6")', "")})
    # PPO gone in TRL 0.29: its imports fail (MP302), so no bf16 default of a PPOConfig that never runs
    found = {d.code for d in run(unpinned)}
    assert found >= {"MP301", "MP302"} and "MP201" not in found


def test_trl_trainer_tokenizer_is_judged_by_trls_pin(tmp_path):
    src = "from trl import SFTTrainer\nt = SFTTrainer(model=m, tokenizer=tok)\n"
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "trl==0.9.6\ntransformers>=5.0\n", "train.py": src})
    assert run(root) == []  # TRL 0.9's SFTTrainer takes tokenizer=
    newer = write_tree(tmp_path / "n", {".git/HEAD": "", "requirements.txt": "trl>=0.16\n", "train.py": src})
    (d,) = run(newer)
    assert d.code == "MP301" and "TRL 0.16" in d.message and d.fix is not None


@pytest.mark.parametrize("pins, expected", [
    # TRL removed the `tokenizer=` keyword, never the property of transformers' Trainer its
    # trainers inherit: on transformers 4.56 it warns (held-out 28's fine-tune-gpt-oss)
    ("transformers==4.56.2\ntrl==0.21.0\n", "is deprecated since transformers 4.46 and raises"),
    ("transformers>=5.0\ntrl==0.21.0\n", "was removed in transformers 5.0"),
    ("transformers==4.44.2\ntrl==0.21.0\n", None),  # (before the property's deprecation)
])
def test_trl_trainer_tokenizer_attribute_is_judged_by_transformers_pin(tmp_path, pins, expected):
    src = "from trl import SFTTrainer\nt = SFTTrainer(model=m, processing_class=tok)\nprint(t.tokenizer)\n"
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": pins, "train.py": src})
    found = [d for d in run(root) if d.code == "MP301"]
    if expected is None:
        assert found == []
    else:
        (d,) = found
        assert ".tokenizer`" in d.message and expected in d.message and "TRL" not in d.message


def test_notebook_pip_install_pins_the_version(tmp_path):
    def notebook(pip):
        cells = [pip, EVAL_STRATEGY]
        return json.dumps({
            "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": c} for c in cells],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
        })

    root = write_tree(tmp_path, {".git/HEAD": "", "old.ipynb": notebook("!pip install -q transformers==4.31.0 accelerate\n")})
    assert run(root) == []
    new = write_tree(tmp_path / "new", {".git/HEAD": "", "new.ipynb": notebook("!pip install -q transformers==4.52.0\n")})
    (d,) = run(new)
    assert d.code == "MP302" and d.fix is not None


def test_a_sub_projects_own_requirements_win(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "requirements.txt": "transformers>=5.0\n",
        "examples/legacy/requirements.txt": "transformers==4.38.0\n",
        "examples/legacy/run.py": TRAINER,
        "examples/current/run.py": TRAINER,
    })
    found = run(root)
    assert by_file(found, "legacy/run.py") == []
    assert [d.code for d in by_file(found, "current/run.py")] == ["MP301"]


def test_a_downloaded_zip_has_its_requirements_read(tmp_path):
    root = write_tree(tmp_path, {"requirements.txt": "transformers==4.38.0\n", "train.py": TRAINER})
    assert run(root) == []


def test_a_vendored_copy_of_transformers_is_library_code(tmp_path):
    library = """\
    class Trainer:
        def __init__(self, model=None, tokenizer=None):
            self.model = model

        def log(self):
            return self.tokenizer
    """
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "vendor_transformers/setup.py": 'setup(name="transformers", version="4.36.0")\n',
        "vendor_transformers/src/transformers/__init__.py": '__version__ = "4.36.0"\n',
        "vendor_transformers/src/transformers/trainer.py": library,
        "vendor_transformers/src/transformers/args.py": EVAL_STRATEGY,
        "train.py": TRAINER,
    })
    found = run(root)
    assert [d for d in found if "vendor_transformers" in d.path] == []
    assert by_file(found, "train.py") == []  # the scripts beside it target the copy's 4.36


# --- fixes never mix old and new API --------------------------------------------------------
def test_tokenizer_is_not_renamed_alone_on_an_old_trl_sft_call():
    src = """\
    from trl import SFTTrainer
    from transformers import TrainingArguments
    trainer = SFTTrainer(model=m, tokenizer=tok, max_seq_length=512, packing=True, args=TrainingArguments("o"))
    """
    found = lint(src, "MP301", NEWEST)
    (d,) = found
    assert d.fix is None and "max_seq_length" in d.message


def test_a_fallback_version_is_not_written_as_a_pin(tmp_path):
    """Nothing pins transformers: the version judged is the installed one, said as such (review
    21c: "no version of transformers==5.24.0 (installed)" read as the project's own pin)."""
    src = 'from transformers import TrainingArguments\nTrainingArguments("o", logging_dir="l", gradient_checkpointing=True)\n'
    root = write_tree(tmp_path / "p", {".git/HEAD": "", "train.py": src})
    (d,) = [f for f in run(root, ("MP304",)) if "gradient_checkpointing" in f.message]
    assert "transformers==" not in d.message and "(installed; the project pins none) does not take both" in d.message


def test_tokenizer_alone_on_a_trl_call_is_renamed():
    src = "from trl import SFTTrainer\ntrainer = SFTTrainer(model=m, tokenizer=tok, train_dataset=ds)\n"
    (d,) = lint(src, "MP301", NEWEST)
    assert d.fix is not None


# --- the project's own compatibility code ----------------------------------------------------
MIXIN_FIELD = """\
from dataclasses import dataclass
from typing import Optional
from transformers import TrainingArguments

@dataclass
class LegacyArgsMixin:
    evaluation_strategy: Optional[str] = None

    def __post_init__(self):
        if self.evaluation_strategy is not None:
            self.eval_strategy = self.evaluation_strategy
        super().__post_init__()

@dataclass
class MyArgs(LegacyArgsMixin, TrainingArguments):
    pass

args = MyArgs(output_dir="o", evaluation_strategy="steps")
"""


def test_a_mixin_that_redeclares_a_removed_field_is_honoured():
    assert lint(MIXIN_FIELD, "MP302", NEWEST) == []
    without = MIXIN_FIELD.replace("    evaluation_strategy: Optional[str] = None\n", "    pass\n")
    assert [d.code for d in lint(without, "MP302", NEWEST)] == ["MP302"]


TOKENIZER_PROPERTY = """\
from transformers import Trainer

class CompatMixin:
    @property
    def tokenizer(self):
        return self.processing_class

class MyTrainer(CompatMixin, Trainer):
    def save(self):
        self.tokenizer.save_pretrained("out")
"""


def test_a_trainer_mixin_with_a_tokenizer_property_is_honoured():
    assert lint(TOKENIZER_PROPERTY, "MP301", NEWEST) == []
    without = TOKENIZER_PROPERTY.replace("class MyTrainer(CompatMixin, Trainer)", "class MyTrainer(Trainer)")
    assert [d.code for d in lint(without, "MP301", NEWEST)] == ["MP301"]


def test_a_signature_check_is_a_guard():
    src = """\
    import inspect
    from transformers import Trainer
    if "processing_class" in inspect.signature(Trainer.__init__).parameters:
        trainer = Trainer(model=m, processing_class=tok)
    else:
        trainer = Trainer(model=m, tokenizer=tok)
    """
    assert lint(src, "MP301", NEWEST) == []
    plain = src.replace('"processing_class" in inspect.signature(Trainer.__init__).parameters', "use_new_api")
    assert [d.code for d in lint(plain, "MP301", NEWEST)] == ["MP301"]


SIGNATURE_CHOSEN_KEY = """\
    import inspect
    from transformers import Trainer
    kwargs = {{"model": m}}
    {bound}if "processing_class" in {params}:
        kwargs["processing_class"] = tok
    else:
        kwargs["tokenizer"] = tok
    trainer = Trainer(**kwargs)
    """
SIGNATURE = "inspect.signature(Trainer.__init__).parameters"


@pytest.mark.parametrize(
    "bound, params, plain",
    [
        ("", SIGNATURE, ('"processing_class" in ' + SIGNATURE, "use_new_api")),
        # review 25a: SparkTransformer's prompt improver binds the parameters to a variable first
        (f"params = {SIGNATURE}\n    ", "params", (SIGNATURE, "{'processing_class': 1}")),
    ],
    ids=["inline", "through-a-variable"],
)
def test_a_keyword_put_in_the_arguments_only_under_a_signature_check_is_guarded(bound, params, plain):
    """The check may choose the dict's key rather than the call (review 25a): ``kwargs`` gets
    ``processing_class`` where the installed trainer takes it and ``tokenizer`` only otherwise,
    and the trainer is called once with ``**kwargs``; the signature may be bound to a variable
    first (``params = inspect.signature(...).parameters``). The old name is then passed only
    where it is taken; put there unconditionally, it is still reported."""
    src = SIGNATURE_CHOSEN_KEY.format(bound=bound, params=params)
    assert lint(src, "MP301", NEWEST) == []
    assert [d.code for d in lint(src.replace(*plain), "MP301", NEWEST)] == ["MP301"]


def test_a_removed_keyword_put_in_the_arguments_only_under_a_signature_check_is_guarded():
    src = """\
    import inspect
    from transformers import TrainingArguments
    kwargs = {"output_dir": "out"}
    if "eval_strategy" in inspect.signature(TrainingArguments.__init__).parameters:
        kwargs["eval_strategy"] = "steps"
    else:
        kwargs["evaluation_strategy"] = "steps"
    args = TrainingArguments(**kwargs)
    """
    assert lint(src, "MP302", NEWEST) == []
    plain = src.replace('"eval_strategy" in inspect.signature(TrainingArguments.__init__).parameters', "use_new_api")
    assert [d.code for d in lint(plain, "MP302", NEWEST)] == ["MP302"]


def test_a_version_check_is_a_guard_for_mp301():
    src = """\
    import transformers
    from packaging import version
    from transformers import Trainer
    if version.parse(transformers.__version__) >= version.parse("4.46"):
        trainer = Trainer(model=m, processing_class=tok)
    else:
        trainer = Trainer(model=m, tokenizer=tok)
    """
    assert lint(src, "MP301", NEWEST) == []


def test_another_librarys_own_code_is_still_judged_against_its_transformers_pin(tmp_path):
    # a copy of a library built on transformers is that library, not transformers: its calls
    # of transformers are judged against the transformers its own setup.py pins
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "third_party/peft/setup.py": 'setup(name="peft", install_requires=["transformers>=5.0"])\n',
        "third_party/peft/src/peft/__init__.py": '__version__ = "0.7.0"\n',
        "third_party/peft/src/peft/tuners.py": TRAINER,
    })
    (d,) = run(root)
    assert d.code == "MP301" and "was removed in transformers 5.0" in d.message


def test_a_keyword_deprecated_after_the_new_name_came_does_not_hold_a_rename_back():
    src = "from transformers import TrainingArguments\nargs = TrainingArguments('o', evaluation_strategy='steps', logging_dir='logs')\n"
    (d,) = [d for d in lint(src, "MP302", NEWEST) if "evaluation_strategy" in d.message]
    assert d.fix is not None


def _notebook(*cells):
    return json.dumps({
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": c} for c in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    })


def test_a_script_a_notebook_launches_targets_the_notebooks_pins(tmp_path):
    helper = "from transformers import TrainingArguments\ndef make():\n    return TrainingArguments('o', evaluation_strategy='steps')\n"
    script = "from helpers import make\nfrom transformers import Trainer\nargs = make()\nTrainer(model=m, args=args, tokenizer=tok)\n"
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "run.ipynb": _notebook('%pip install --upgrade \\\n  "transformers==4.38.2" \\\n  "datasets"\n', "!torchrun --nproc_per_node 2 scripts/train.py --epochs 1\n"),
        "scripts/train.py": script,
        "scripts/helpers.py": helper,
        "other/train.py": script,
        "other/helpers.py": helper,
    })
    found = run(root)
    assert [d for d in found if "scripts/" in d.path] == []  # run by the notebook, on 4.38.2
    assert sorted(d.code for d in found if "other/" in d.path) == ["MP301", "MP302"]  # nothing runs these


def test_the_require_version_of_the_script_holds_for_the_modules_it_imports(tmp_path):
    helper = "from transformers import TrainingArguments\ndef make():\n    return TrainingArguments('o', evaluation_strategy='steps')\n"
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "a/train.py": 'from transformers.utils.versions import require_version\nrequire_version("transformers>=4.30,<4.40")\nfrom helpers import make\nmake()\n',
        "a/helpers.py": helper,
        "b/train.py": "from helpers import make\nmake()\n",
        "b/helpers.py": helper,
    })
    found = run(root)
    assert by_file(found, "a/helpers.py") == []
    assert [d.code for d in by_file(found, "b/helpers.py")] == ["MP302"]


def test_an_attribute_read_under_hasattr_or_where_attributeerror_is_caught_is_honoured():
    src = """\
    from transformers import Trainer
    trainer = Trainer(model=m, processing_class=tok)
    a = trainer.processing_class if hasattr(trainer, "processing_class") else trainer.tokenizer
    if not hasattr(trainer, "processing_class"):
        b = trainer.tokenizer
    try:
        c = trainer.tokenizer
    except AttributeError:
        c = trainer.processing_class
    """
    assert lint(src, "MP301", NEWEST) == []
    unrelated = src.replace('hasattr(trainer, "processing_class")', 'hasattr(trainer, "model")').replace("AttributeError", "KeyError")
    assert len(lint(unrelated, "MP301", NEWEST)) == 3


def test_a_tokenizer_property_does_not_make_the_constructor_take_tokenizer():
    src = TOKENIZER_PROPERTY + "trainer = MyTrainer(model=m, tokenizer=tok)\n"
    found = lint(src, "MP301", NEWEST)
    assert len(found) == 1 and "tokenizer=" in found[0].message  # the keyword: still a TypeError


def test_a_move_whose_new_spelling_is_newer_than_the_pin_says_so():
    src = """\
    from trl import SFTTrainer
    from transformers import TrainingArguments
    trainer = SFTTrainer(model=m, max_seq_length=512, args=TrainingArguments("o"))
    """
    (d,) = lint(src, "MP304", config(transformers_version="4.44", trl_version="0.9.6"))
    assert "deprecated since TRL 0.9" in d.message and "use SFTConfig(max_seq_length=...) (TRL 0.16 renames it `max_length`)" in d.message
    assert "SFTConfig(max_length=" not in d.message  # TRL 0.9.6 has no such keyword
    (d,) = lint(src, "MP302", NEWEST)
    assert "is new in" not in d.message


# --- an extra does not narrow the project ------------------------------------------------------
EXTRA_LOAD = """\
import torch
from transformers import AutoModelForCausalLM
def load(p):
    return AutoModelForCausalLM.from_pretrained(p, torch_dtype=torch.float16)
"""


def test_an_extras_exact_pin_does_not_open_a_rename_below_the_declared_floor(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "pyproject.toml": '[project]\nname = "p"\ndependencies = ["transformers>=4.55.0,<=5.8.0"]\n',
        "requirements/special-model.txt": "transformers==4.57.1\n",
        "tools/load.py": EXTRA_LOAD,
    })
    (d,) = run(root)
    assert d.code == "MP304" and d.fix is None
    assert "no fix: `dtype` is new in transformers 4.56" in d.message and "allows older versions" in d.message


def test_a_declared_floor_with_the_new_name_keeps_the_rename_beside_an_extra(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "pyproject.toml": '[project]\nname = "p"\ndependencies = ["transformers>=4.56"]\n',
        "requirements/special-model.txt": "transformers==4.57.1\n",
        "tools/load.py": EXTRA_LOAD,
    })
    (d,) = run(root)
    assert d.code == "MP304" and d.fix is not None


def test_a_requirements_folder_alone_still_pins_the_project(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "requirements/base.txt": "transformers==4.57.1\n",
        "tools/load.py": EXTRA_LOAD,
    })
    (d,) = run(root)
    assert d.code == "MP304" and d.fix is not None and "requirements/base.txt" in d.message


def test_a_range_reaching_below_the_deprecation_is_told_the_spelling_of_the_versions_that_warn(tmp_path):
    """``trl<0.12`` allows TRL 0.2 to 0.11: where it warns (0.9 on), SFTConfig has the keyword
    under its older name; below 0.9 nothing warns. The advice is the older name, not "the
    replacement is new in 0.16: the range has no such keyword"."""
    from conftest import write_tree
    from precision_lint.engine import Engine

    write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "trl<0.12\ntransformers==4.43.3\n", "tune.py": (
        "from transformers import TrainingArguments\nfrom trl import SFTTrainer\n"
        "SFTTrainer(model=m, args=TrainingArguments('o'), max_seq_length=2048)\n"
    )})
    (d,) = Engine(config(), ["MP304"], jobs=1).run_paths([str(tmp_path)]).diagnostics
    assert "use SFTConfig(max_seq_length=...) (TRL 0.16 renames it `max_length`)" in d.message
    assert "has no such keyword" not in d.message


# --- a deprecation only the docstring states ---------------------------------------------------
# `encode_plus` / `batch_encode_plus`: 4.x says "deprecated" in the docstring alone and no 4.x
# release warns; 5.0 removed them (review 19's F3). Below 5.0 nothing happens at all.
ENCODE = """\
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained("base")
batch = tok.batch_encode_plus(["a", "b"], padding=True)
"""


def test_a_name_removed_without_a_warning_period_is_nothing_below_the_removal(tmp_path):
    def codes(pin):
        root = write_tree(tmp_path / pin.replace("=", "").replace("<", "").replace(">", ""), {
            ".git/HEAD": "", "requirements.txt": f"{pin}\n", "embed.py": ENCODE,
        })
        return [d.code for d in run(root)]

    assert codes("transformers==4.37.2") == []
    assert codes("transformers>=4.30") == ["MP304"]  # the range reaches 5.0, where it raises
    assert codes("transformers>=5.0") == ["MP302"]


# accelerate's `Accelerator(logging_dir=)`: warned from 0.16, a TypeError from 0.20 (review 19b)
def test_accelerators_logging_dir_by_the_accelerate_targeted(tmp_path):
    def codes(pin):
        root = write_tree(tmp_path / pin.replace("=", "").replace("<", "").replace(">", ""), {
            ".git/HEAD": "", "requirements.txt": f"{pin}\n",
            "train.py": "from accelerate import Accelerator\nacc = Accelerator(logging_dir='logs', log_with='tensorboard')\n",
        })
        return [d.code for d in run(root)]

    assert codes("accelerate==0.15.0") == []
    assert codes("accelerate==0.18.0") == ["MP304"]
    assert codes("accelerate>=0.20") == ["MP302"]


# --- alternatives and listings: what the code may run with ------------------------------------
CUSTOM_FWD = """\
import torch
class Offload(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd
    def forward(ctx, x):
        return x
"""


def test_an_other_accelerators_extra_does_not_pin_the_cuda_install(tmp_path):
    """`[gpu]` takes torch>=1.13.1, `[npu]` torch==2.1.0: the CUDA install may have torch 2.4+,
    where `torch.cuda.amp.custom_fwd` warns."""
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "setup.py": 'setup(name="p", extras_require={"gpu": ["torch>=1.13.1"], "npu": ["torch==2.1.0"]})\n',
        "ckpt.py": CUSTOM_FWD,
    })
    (d,) = run(root, ("MP303",))
    assert d.code == "MP303" and "custom_fwd" in d.message and d.fix is None


def test_the_environment_a_readme_lists_is_what_the_code_targets(tmp_path):
    """A README's block lists `pytorch==1.13.1`: `torch.cuda.amp` warns only from torch 2.4."""
    listed = "# t\n## Installation environment\n```\npython==3.10.9\npytorch==1.13.1\ntorchvision==0.14.1\n```\n"
    root = write_tree(tmp_path, {".git/HEAD": "", "README.md": listed, "ckpt.py": CUSTOM_FWD})
    assert run(root, ("MP303",)) == []
    unlisted = write_tree(tmp_path / "other", {".git/HEAD": "", "README.md": "# t\n", "ckpt.py": CUSTOM_FWD})
    assert [d.code for d in run(unlisted, ("MP303",))] == ["MP303"]


RETRY = """\
import torch
from transformers import AutoModelForCausalLM
try:
    model = AutoModelForCausalLM.from_pretrained("m", {tried}, attn_implementation="sdpa")
except {caught}:
    model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)
"""


def test_a_retry_of_the_same_call_in_an_except_block_is_no_fallback():
    """``except Exception:`` loading again with the same ``torch_dtype=`` the ``try`` passed
    (held-out 25: PGG-finetuning's model loaders) retries the call: both warn on transformers
    4.56+. A handler that passes the old name where the ``try`` passes the new one is the
    project's fallback for older versions, and stays silent."""
    retry = lint(RETRY.format(tried="torch_dtype=torch.float16", caught="Exception"), "MP304")
    assert [d.span.line for d in retry] == [4, 6]
    fallback = lint(RETRY.format(tried="dtype=torch.float16", caught="TypeError"), "MP304")
    assert [d.span.line for d in fallback] == []


IMPORT_PROBE = """\
from transformers import TrainingArguments
{probe}

def build(model, tok, ds):
    base = dict(output_dir="out", learning_rate=1e-4)
    if HAVE_CFG:
        kw = dict(model=model, args=SFTConfig(**base), train_dataset=ds, processing_class=tok)
    else:
        kw = dict(model=model, args=TrainingArguments(**base), train_dataset=ds, tokenizer=tok, max_seq_length=512)
    return SFTTrainer(**kw)
"""
TRIED = """\
try:
    from trl import SFTConfig, SFTTrainer
    HAVE_CFG = True
except ImportError:
    from trl import SFTTrainer
    HAVE_CFG = False"""


@pytest.mark.parametrize(
    "probe, reported",
    [
        (TRIED, []),
        # the flag set False before the `try` and True in it
        ("from trl import SFTTrainer\nHAVE_CFG = False\ntry:\n    from trl import SFTConfig\n    HAVE_CFG = True\nexcept ModuleNotFoundError:\n    pass", []),
        # a flag the user sets (an option), or one that no import decides: the old keywords run
        ("import sys\nfrom trl import SFTConfig, SFTTrainer\nHAVE_CFG = '--new' in sys.argv", ["MP301", "MP302"]),
        ("from trl import SFTConfig, SFTTrainer\ntry:\n    HAVE_CFG = bool(int(open('f').read()))\nexcept ImportError:\n    HAVE_CFG = False", ["MP301", "MP302"]),
    ],
    ids=["try-flag", "flag-before-try", "option", "no-import-in-try"],
)
def test_a_branch_of_an_import_probe_flag_is_written_for_the_versions_it_names(probe, reported):
    """Review 30a: the removed ``SFTTrainer`` keywords sit in the branch a flag takes where
    ``from trl import SFTConfig`` failed (a TRL older than the pin); the pinned TRL takes the
    other branch. A flag carried out of an import's ``try`` is an import check."""
    found = lint(IMPORT_PROBE.format(probe=probe), cfg=NEWEST)
    assert sorted(d.code for d in found if d.code in ("MP301", "MP302")) == reported


def test_the_branch_an_import_check_takes_where_the_import_works_is_judged_as_any_code():
    """Review 30a (the first run of the flag's reading): ``SFTConfig(**common)`` with a
    deprecated ``warmup_ratio`` under ``if HAVE_CFG:`` runs on the pinned TRL, which has
    ``SFTConfig``: it warns (or fails) there. Only the fallback is written for other versions."""
    src = TRIED + """

def build(common):
    if HAVE_CFG:
        return SFTConfig(**common, warmup_ratio=0.03)
    return None
"""
    # (removed by transformers 5.15: MP302 under the newest versions)
    assert [d.code for d in lint(src, cfg=NEWEST) if d.code.startswith("MP30")] == ["MP302"]
    fallback = src.replace("if HAVE_CFG:", "if not HAVE_CFG:")
    assert [d.code for d in lint(fallback, cfg=NEWEST) if d.code.startswith("MP30")] == []


GIVES_UP = """\
import logging
from transformers import AutoModelForCausalLM


def load(path):
    try:
        model = AutoModelForCausalLM.from_pretrained(path, device_map="auto", load_in_4bit=True)
        return model
    except {caught} as e:
        logging.error(f"Failed to load model: {{e}}")
        {after}
"""


@pytest.mark.parametrize(
    "caught, after, reported",
    [
        ("Exception", "return None", True),
        ("Exception", "return None, None", True),
        # a record of the failure and nothing else (held-out 31u: every experiment "failed")
        ("Exception", 'return {"status": "failed", "error": str(e)}', True),
        ("Exception", 'return {"status": "failed", "error": f"load: {e}"}', True),
        ("BaseException", "return", True),
        # the error a removed keyword raises, caught by name: written for the versions without it
        ("TypeError", "return None", False),
        # anything else in the handler is a fallback of the project's own
        ("Exception", "return AutoModelForCausalLM.from_pretrained(path, device_map='auto')", False),
        ("Exception", "raise SystemExit('use transformers<5')", False),
        # a fallback that returns another loader's model, or binds one and returns it
        ("Exception", "return load_without_quantization(path)", False),
        ("Exception", "model = load_without_quantization(path)\n        return model", False),
        # a failure record built and returned, whatever else the handler does first
        ("Exception", 'record = {"status": "failed"}\n        print(record)\n        return record', True),
    ],
)
def test_a_handler_that_catches_any_error_and_gives_up_expects_no_version(caught, after, reported):
    """Held-out 30u: ``load_in_4bit=`` (removed in transformers 5.0) in a loader whose
    ``except Exception:`` logs and returns ``None``: on the targeted version every load fails
    and the evaluation reads "model not available". Swallowed is not expected."""
    found = lint(GIVES_UP.format(caught=caught, after=after), "MP302", NEWEST)
    assert bool(found) == reported


EXPERIMENT_RUNNER = """\
import json, logging
from transformers import Seq2SeqTrainer, Trainer
log = logging.getLogger(__name__)


def run_experiment(exp, model, tok, ds):
    try:
        if exp["causal"]:
            trainer = Trainer(model=model, train_dataset=ds, tokenizer=tok)
        else:
            trainer = Seq2SeqTrainer(model=model, train_dataset=ds, tokenizer=tok)
        trainer.train()
        result = {{"name": exp["name"], "status": "success"}}
        return result
    except Exception as e:
        log.error("failed: %s", e)
        {cleanup}
        result = {{"name": exp["name"], "status": "failed", "error": str(e)}}
        with open(exp["name"] + ".json", "w") as f:
            json.dump(result, f)
        {leave}


def main(exps, model, tok, ds):
    for exp in exps:
        print(run_experiment(exp, model, tok, ds))
"""


@pytest.mark.parametrize(
    "cleanup, leave, reported",
    [
        ("del model", "return result", True),
        ("pass", "return result", True),
        # falls through to the code after the try: what the try did was optional
        ("pass", "pass", False),
    ],
)
def test_a_handler_that_cleans_up_and_records_the_failure_swallows_it(cleanup, leave, reported):
    """Held-out 31u's M2: an experiment runner's ``Trainer(tokenizer=...)`` inside a ``try``
    whose ``except Exception:`` logs, cleans up, writes ``{"status": "failed", ...}`` to a file
    and returns it: on transformers 5 every experiment is a recorded failure. Only a handler
    that carries the work on, or goes on after the ``try``, expects the failure."""
    found = lint(EXPERIMENT_RUNNER.format(cleanup=cleanup, leave=leave), "MP301", NEWEST)
    assert len(found) == (2 if reported else 0)


UNRELATED_PROBE = """\
import inspect, sys
from transformers import TrainingArguments

def make_args(out):
    common = dict(output_dir=out, evaluation_strategy="steps")
    if {probe} not in inspect.signature(TrainingArguments.__init__).parameters:
        sys.exit("transformers too old")
    return TrainingArguments(**common)
"""


@pytest.mark.parametrize(
    "probe, reported",
    [
        ('"average_tokens_across_devices"', True),  # asks for a newer release: says nothing of the key
        ('"eval_strategy"', False),  # the key's own new name: written for both
        ('"evaluation_strategy"', False),
    ],
)
def test_a_signature_check_guards_only_the_keywords_it_names(probe, reported):
    """Review 30a: an early exit unless ``SFTConfig`` takes ``completion_only_loss`` raised the
    floor, and hid a deprecated ``warmup_ratio`` of the same config (MP304 missed)."""
    found = lint(UNRELATED_PROBE.format(probe=probe), "MP302", NEWEST)
    assert bool(found) == reported


LOADERS = """\
from transformers import AutoConfig, AutoFeatureExtractor, AutoTokenizer
cfg = AutoConfig.from_pretrained("org/m", use_auth_token=True)
fe = AutoFeatureExtractor.from_pretrained("org/m", use_auth_token=True)
tok = AutoTokenizer.from_pretrained("org/m", use_auth_token=True)
"""


@pytest.mark.parametrize("pin, lines", [("transformers==4.33.2", [2, 3, 4]), ("transformers==4.30.2", [])])
def test_use_auth_token_of_every_loader_of_a_repository(tmp_path, pin, lines):
    """Review 32: ``use_auth_token=`` warns from 4.31 in a config's and a feature extractor's
    loader as in a tokenizer's (4.31.0's configuration_utils.py, feature_extraction_utils.py)."""
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": f"{pin}\n", "load.py": LOADERS})
    assert [d.span.line for d in run(root, ("MP304",))] == lines


SIGNATURE_TRY = """\
import inspect
from transformers import Trainer


def build(model, args, ds, tok):
    kwargs = {{"model": model, "args": args, "train_dataset": ds}}
    try:
        if {test}:
            kwargs["processing_class"] = tok
        else:
            kwargs["tokenizer"] = tok
    except Exception:
        kwargs["tokenizer"] = tok
    return Trainer(**kwargs)
"""


@pytest.mark.parametrize(
    "test, reported",
    [('"processing_class" in inspect.signature(Trainer.__init__).parameters', False), ("args.new_api", True)],
)
def test_the_handler_of_a_signature_test_is_the_same_choice(test, reported):
    """Held-out 31u: ``kwargs["tokenizer"] = tok`` in the ``except Exception:`` of a ``try`` whose
    body chooses the key by ``Trainer.__init__``'s signature is the choice for a Trainer the test
    could not read, as its ``else`` is; under a test of the user's own it is what it is."""
    found = lint(SIGNATURE_TRY.format(test=test), cfg=NEWEST)
    assert bool([d for d in found if d.code == "MP301"]) == reported
