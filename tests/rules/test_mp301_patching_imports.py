"""A patching library patches only the runs that import it: unsloth makes TRL's trainers take
``tokenizer=`` (the library table's ``[[patches]]``), but imported only under ``if
args.use_unsloth:`` it patches the runs that pass the flag, and every other run raises
``TypeError: SFTTrainer.__init__() got an unexpected keyword argument 'tokenizer'`` on TRL 0.16
and later."""
from __future__ import annotations

import pytest

from conftest import findings_in, write_tree


LOADERS = """
from transformers import AutoModelForCausalLM, AutoTokenizer


def load(opts):
    IMPORT
    return AutoModelForCausalLM.from_pretrained(opts.path), AutoTokenizer.from_pretrained(opts.path)
"""
TRAIN = """
from trl import SFTTrainer
from loaders import load


def run(opts, args, data):
    net, tok = load(opts)
    SFTTrainer(model=net, tokenizer=tok, args=args, train_dataset=data).train()
"""


def codes(tmp_path, import_line):
    write_tree(tmp_path, {
        ".git/HEAD": "", "requirements.txt": "trl==0.19.0\n", "train.py": TRAIN,
        "loaders.py": LOADERS.replace("IMPORT", import_line),
    })
    return [d.code for d in findings_in(tmp_path, ["MP301"])]


def test_an_import_under_a_users_flag_patches_only_the_runs_that_pass_it(tmp_path):
    assert codes(tmp_path, "if opts.fast_kernels:\n        from unsloth import FastLanguageModel") == ["MP301"]


@pytest.mark.parametrize(
    "import_line",
    [
        "from unsloth import FastLanguageModel",  # in the function, every call runs it
        "try:\n        import unsloth\n    except ImportError:\n        pass",  # runs wherever unsloth is installed
    ],
    ids=["unconditional", "try"],
)
def test_an_import_every_run_makes_patches_the_trainer(tmp_path, import_line):
    assert codes(tmp_path, import_line) == []


@pytest.mark.parametrize("import_line, found", [("import unsloth", []), ("pass", ["MP302"])])
def test_unslothed_trainers_take_any_keyword(tmp_path, import_line, found):
    """unsloth's trainers take ``**kwargs`` (``Unsloth<Trainer>.__init__``): ``dataset_text_field=``,
    gone from ``SFTTrainer`` in TRL 0.13, raises nothing where unsloth is imported in every run
    (review 21e's MP302 FP: a Colab notebook whose saved output shows the trainer built)."""
    write_tree(tmp_path, {
        ".git/HEAD": "", "requirements.txt": "trl==0.19.0\n", "loaders.py": LOADERS.replace("IMPORT", import_line),
        "train.py": TRAIN.replace("tokenizer=tok", "processing_class=tok, dataset_text_field=\"text\""),
    })
    assert [d.code for d in findings_in(tmp_path, ["MP302"])] == found


@pytest.mark.parametrize("import_line, found", [("import unsloth", []), ("pass", ["MP302", "MP302"])])
def test_unslothed_configs_filter_what_trl_no_longer_takes(tmp_path, import_line, found):
    """unsloth's configs (``Unsloth<Config>.__init__(..., **kwargs)``) move a renamed field across
    and drop a removed one with a notice (``rl_config_compat.py``): ``GRPOConfig(max_prompt_length=)``,
    gone in TRL 0.28, raises nothing where unsloth is imported in every run (review 23h)."""
    write_tree(tmp_path, {
        ".git/HEAD": "", "requirements.txt": "trl==1.16.0\ntransformers==5.23.0\n",
        "loaders.py": LOADERS.replace("IMPORT", import_line),
        "train.py": "from trl import GRPOConfig\nfrom loaders import load\n\n\n"
                    "def run(opts):\n    net, tok = load(opts)\n"
                    "    return GRPOConfig(output_dir='out', warmup_ratio=0.1, max_prompt_length=256)\n",
    })
    assert [d.code for d in findings_in(tmp_path, ["MP302"])] == found

