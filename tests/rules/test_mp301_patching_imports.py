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
        # below an early exit: where it exits nothing trains (review 27e)
        "if not opts.path:\n        raise SystemExit(1)\n    from unsloth import FastLanguageModel",
        "if opts.path is None:\n        return None, None\n    import unsloth",
    ],
    ids=["unconditional", "try", "after-an-early-exit", "after-an-early-return"],
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



STEP_LOAD = """
from unsloth import FastLanguageModel

model, tokenizer = FastLanguageModel.from_pretrained("org/lm", max_seq_length=1024, load_in_4bit=True)
"""
STEP_TRAIN = """
from trl import SFTTrainer

trainer = SFTTrainer(model=model, tokenizer=tokenizer, train_dataset=ds, args=args)
"""


@pytest.mark.parametrize("binds, found", [
    ("ds, args = None, None\n", []),  # the pieces bind every name the step reads: one session
    ("ds = None\n", ["MP301"]),  # `args` bound by nothing: no session of these files runs it
])
def test_a_step_kept_as_a_file_runs_in_the_session_of_the_steps_that_bind_its_names(tmp_path, binds, found):
    """``step3_trainer.py`` reads ``model``, ``tokenizer``, ``ds`` it never binds (review 24u, a
    held-out repository's notebook steps kept as files): it runs in one session after the steps
    that bind them, and ``step1_load.py``'s unsloth import patches its trainer there."""
    write_tree(tmp_path, {
        ".git/HEAD": "", "requirements.txt": "trl==0.19.0\n",
        "step1_load.py": STEP_LOAD, "step2_data.py": binds, "step3_trainer.py": STEP_TRAIN,
    })
    assert [d.code for d in findings_in(tmp_path, ["MP301"])] == found


def test_session_names_are_what_a_top_level_reads_and_never_binds():
    import ast

    from precision_lint.semantic.programs import session_names, top_names

    tree = ast.parse(
        "import torch\nfrom x import y as z\nfor i in range(3):\n    print(i, z, torch, model)\n"
        "def f(a):\n    global g\n    return a + b\n"
        "k = [j for j in data]\nwith open(p) as fh:\n    fh.read()\ntry:\n    pass\nexcept OSError as err:\n    err\n"
        "print(__file__, lambda q: q)\n"
    )
    assert session_names(tree) == ("data", "model", "p")  # not i, z, torch, f, j, fh, err, q, builtins, dunders
    assert top_names(tree) == {"torch", "z", "i", "f", "k", "fh"}
