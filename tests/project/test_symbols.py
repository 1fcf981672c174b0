"""Resolution across files: a name means what its imports say, through re-exports, and never
what an unrelated file that happens to share a short name defines."""
from conftest import config

from precision_lint.engine import Engine

CFG = {"transformers_version": "5.0"}


def _codes(root, *names, code="MP301"):
    engine = Engine(config(**CFG), [code], jobs=1)
    paths = [str(root / n) for n in names] if names else [str(root)]
    return sorted((d.path.replace(str(root) + "/", ""), d.code) for d in engine.run_paths(paths).diagnostics)


def test_an_unrelated_class_with_the_same_short_name_changes_nothing(tree):  # A1
    root = tree(
        {
            "mypkg/__init__.py": "",
            "mypkg/loops.py": """
                class Trainer:
                    def __init__(self, model, tokenizer):
                        self.tokenizer = tokenizer
                """,
            "train.py": """
                from transformers import Trainer
                Trainer(model=m, args=a, tokenizer=tok)
                """,
        }
    )
    assert _codes(root) == [("train.py", "MP301")]
    assert _codes(root, "train.py") == [("train.py", "MP301")]


def test_a_third_party_class_is_not_a_project_subclass_of_the_same_name(tree):  # A2
    root = tree(
        {
            "distill.py": """
                import transformers
                class Distiller(transformers.Trainer):
                    pass
                """,
            "other_script.py": """
                from rl_toolkit import Distiller
                Distiller(policy=p, tokenizer=tok)
                """,
        }
    )
    assert _codes(root) == []


def test_a_project_subclass_is_found_through_its_import_and_a_reexport(tree):
    root = tree(
        {
            "pkg/__init__.py": "from .trainers import MyTrainer\n",
            "pkg/trainers.py": """
                from transformers import Trainer
                class MyTrainer(Trainer):
                    pass
                """,
            "a.py": """
                from pkg import MyTrainer
                MyTrainer(model=m, tokenizer=tok)
                """,
            "b.py": """
                from pkg.trainers import MyTrainer
                MyTrainer(model=m, tokenizer=tok)
                """,
        }
    )
    assert _codes(root) == [("a.py", "MP301"), ("b.py", "MP301")]


def test_two_classes_with_one_qualname_in_two_roots_are_not_confused(tree):
    root = tree(
        {
            "one/models.py": """
                from transformers import Trainer
                class Custom(Trainer):
                    pass
                """,
            "one/train.py": """
                from models import Custom
                Custom(model=m, tokenizer=tok)
                """,
            "two/models.py": """
                class Custom:
                    def __init__(self, model, tokenizer):
                        pass
                """,
            "two/train.py": """
                from models import Custom
                Custom(model=m, tokenizer=tok)
                """,
        }
    )
    assert _codes(root) == [("one/train.py", "MP301")]


def test_library_bases_come_from_the_knowledge_table(tree):
    from precision_lint.facts.extract import extract_facts
    from precision_lint.project.model import Project

    root = tree({"train.py": "from unsloth import UnslothTrainer\nclass MyTrainer(UnslothTrainer):\n    pass\n"})
    facts = extract_facts((root / "train.py").read_text(), str(root / "train.py"), "train", False, str(root))
    names = [n for n, _, _ in Project([facts]).symbols.ancestry("train.MyTrainer", facts)]
    assert names == ["train.MyTrainer", "unsloth.UnslothTrainer", "trl.SFTTrainer", "transformers.Trainer"]


def test_a_patching_library_in_the_unit_silences_what_it_makes_true(tree):
    # unsloth maps `tokenizer=` to `processing_class=` on TRL trainers: no TypeError there.
    files = {
        "train.py": """
            from trl import SFTTrainer
            import helpers
            SFTTrainer(model=m, tokenizer=tok)
            """,
        "helpers.py": "import os\n",
    }
    assert _codes(tree(files)) == [("train.py", "MP301")]
    files["helpers.py"] = "from unsloth import FastLanguageModel\n"
    assert _codes(tree(files)) == []


def test_a_class_defined_twice_under_one_name_keeps_both_bases():
    from conftest import lint

    src = """
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        try:
            from fast_args import FastArguments as Base
        except ImportError:
            Base = None

        if Base is None:
            class RunArguments(TrainingArguments):
                pass
        else:
            class RunArguments(Base):
                pass

        model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.float16)
        Trainer(model=model, args=RunArguments(output_dir="o", fp16=True)).train()
        """
    assert [d.code for d in lint(src, "MP101")] == ["MP101"]
