"""Names resolved through imports, the near misses: an in-house ``Trainer`` that a file really
uses, a project ``class Trainer(transformers.Trainer)`` beside ``setfit.Trainer``, imports
under a module-level ``try:``/``if`` of a class that is not the library's, a project subclass
of ``Accelerator``, and project classes derived from library classes the knowledge table
lists (``trl.SFTConfig`` is TrainingArguments, ``trl.ModelConfig`` is not)."""
import pytest
from conftest import config, lint

from precision_lint.engine import Engine


def _codes(root, code, *names):
    engine = Engine(config(transformers_version="5.0"), [code], jobs=1)
    paths = [str(root / n) for n in names] if names else [str(root)]
    return sorted((d.path.replace(str(root) + "/", ""), d.code, d.span.line) for d in engine.run_paths(paths).diagnostics)


IN_HOUSE = {
    "mypkg/__init__.py": "",
    "mypkg/loops.py": """
        class Trainer:
            def __init__(self, model, tokenizer):
                self.tokenizer = tokenizer
        """,
    "ours.py": """
        from mypkg.loops import Trainer
        Trainer(model=m, tokenizer=tok)
        """,
    "theirs.py": """
        from transformers import Trainer
        Trainer(model=m, tokenizer=tok)
        """,
}


@pytest.mark.parametrize("names", [(), ("ours.py",), ("theirs.py",), ("ours.py", "theirs.py")])
def test_the_in_house_trainer_a_file_imports_takes_tokenizer(tree, names):
    root = tree(IN_HOUSE)
    expected = [("theirs.py", "MP301", 2)] if not names or "theirs.py" in names else []
    assert _codes(root, "MP301", *names) == expected


SETFIT = {
    "trainers.py": """
        import transformers

        class Trainer(transformers.Trainer):
            pass
        """,
    "fit.py": """
        from setfit import Trainer
        Trainer(model=m, tokenizer=tok)
        """,
    "distill.py": """
        from trainers import Trainer
        Trainer(model=m, tokenizer=tok)
        """,
}


@pytest.mark.parametrize("names", [(), ("fit.py",), ("fit.py", "trainers.py")])
def test_a_project_trainer_subclass_does_not_make_setfit_trainer_one(tree, names):
    root = tree(SETFIT)
    assert [f for f in _codes(root, "MP301", *names) if f[0] == "fit.py"] == []


def test_the_project_trainer_subclass_itself_is_a_transformers_trainer(tree):
    assert _codes(tree(SETFIT), "MP301") == [("distill.py", "MP301", 2)]


def test_imports_of_another_library_under_try_and_if_are_not_transformers():
    src = """
        try:
            from setfit import Trainer
        except ImportError:
            Trainer = None
        if HAVE_RL:
            from rl_toolkit import SFTTrainer
        else:
            SFTTrainer = None
        Trainer(model=m, tokenizer=tok)
        SFTTrainer(model=m, tokenizer=tok)
        """
    assert lint(src, "MP301") == []


def test_either_branch_of_a_conditional_import_may_be_the_one_that_runs():
    src = """
        if USE_SETFIT:
            from setfit import Trainer
        else:
            from transformers import Trainer
        Trainer(model=m, tokenizer=tok)
        """
    assert [(d.code, d.span.line) for d in lint(src, "MP301")] == [("MP301", 5)]


ACCELERATE = """
    import torch
    from accelerate import Accelerator
    from transformers import AutoModelForCausalLM
    {definition}
    accelerator = TrackedAccelerator(mixed_precision="{mixed}")
    model = AutoModelForCausalLM.from_pretrained("s", torch_dtype=torch.float16)
    optimizer = torch.optim.AdamW(model.parameters())
    model, optimizer = accelerator.prepare(model, optimizer)
    """
SUBCLASS = "class TrackedAccelerator(Accelerator):\n        pass\n"
LOOKALIKE = "class TrackedAccelerator:\n        def __init__(self, mixed_precision):\n            self.mixed_precision = mixed_precision\n"


def test_a_project_subclass_of_accelerator_is_an_accelerator():
    assert [(d.code, d.span.line) for d in lint(ACCELERATE.format(definition=SUBCLASS, mixed="fp16"), "MP101")] == [("MP101", 8)]
    assert lint(ACCELERATE.format(definition=SUBCLASS, mixed="no"), "MP101") == []
    (d,) = lint(ACCELERATE.format(definition=SUBCLASS, mixed="bf16"), "MP201")
    assert d.span.line == 7


def test_a_class_that_only_takes_mixed_precision_is_no_accelerator():
    assert lint(ACCELERATE.format(definition=LOOKALIKE, mixed="fp16"), "MP101") == []


def test_an_accelerator_subclass_in_another_module(tree):
    root = tree(
        {
            "pkg/__init__.py": "",
            "pkg/acc.py": "from accelerate import Accelerator\n\nclass TrackedAccelerator(Accelerator):\n    pass\n",
            "train.py": ACCELERATE.format(definition="from pkg.acc import TrackedAccelerator", mixed="fp16"),
        }
    )
    assert _codes(root, "MP101") == [("train.py", "MP101", 6)]
    assert _codes(root, "MP101", "train.py") == [("train.py", "MP101", 6)]


LIBRARY_BASE = """
    import torch
    from transformers import AutoModelForCausalLM
    from trl import SFTTrainer, {base}

    class RunConfig({base}):
        pass

    model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)
    cfg = RunConfig(output_dir="o", fp16=True)
    SFTTrainer(model=model, args=cfg).train()
    """


def test_a_subclass_of_a_trl_config_is_training_arguments():
    assert [(d.code, d.span.line) for d in lint(LIBRARY_BASE.format(base="SFTConfig"), "MP101")] == [("MP101", 8)]


def test_a_subclass_of_a_trl_config_that_is_no_training_arguments_is_nothing():
    assert lint(LIBRARY_BASE.format(base="ModelConfig"), "MP101") == []


def test_an_unsloth_trainer_takes_tokenizer_because_unsloth_patches_it():
    assert lint("from unsloth import UnslothTrainer\nUnslothTrainer(model=m, tokenizer=tok)\n", "MP301") == []
    (d,) = lint("from trl import SFTTrainer\nSFTTrainer(model=m, tokenizer=tok)\n", "MP301")
    assert d.span.line == 2
