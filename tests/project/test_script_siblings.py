"""A script in a package folder, run by its path (``python finetune/train.py``), has its own
folder first on ``sys.path``: it imports the modules beside it by their own names (``from
trainer import MyTrainer``) although ``finetune/__init__.py`` makes their module names
``finetune.trainer``. The join finds them there (``Project.import_roots_of``: a script's folder is
the last import root of the modules in it), so a finding that needs the sibling's class is made;
a folder with no script, and a name an earlier root holds, keep what they meant."""
from conftest import config, write_tree

from precision_lint.engine import Engine

TRAINER = """
from transformers import Trainer


class MyTrainer(Trainer):
    def log_step(self):
        return self.state.global_step
"""
SCRIPT = """
from transformers import AutoTokenizer, TrainingArguments
from trainer import MyTrainer

tok = AutoTokenizer.from_pretrained("gpt2")
MyTrainer(model=None, args=TrainingArguments("out"), tokenizer=tok).train()
"""
PLAIN_TRAINER = """
class MyTrainer:
    def __init__(self, model=None, args=None, tokenizer=None):
        self.tokenizer = tokenizer

    def train(self):
        return None
"""


def run(tmp_path, files):
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers==4.51.2\n", **files})
    found = Engine(config(), ["MP301"], jobs=1).run_paths([str(root)]).diagnostics
    return [(d.path.replace("\\", "/").split(str(tmp_path.name) + "/")[-1], d.span.line) for d in found]


def test_a_script_in_a_package_folder_imports_its_sibling_by_its_own_name(tmp_path):
    files = {"finetune/__init__.py": "", "finetune/trainer.py": TRAINER, "finetune/train.py": SCRIPT}
    assert run(tmp_path, files) == [("finetune/train.py", 5)]


def test_without_the_package_marker_the_sibling_was_found_already(tmp_path):
    files = {"finetune/trainer.py": TRAINER, "finetune/train.py": SCRIPT}
    assert run(tmp_path, files) == [("finetune/train.py", 5)]


def test_a_module_of_a_folder_with_no_script_does_not_see_its_folder(tmp_path):
    # `finetune/build.py` only defines a function: imported as `finetune.build`, its
    # `from trainer import MyTrainer` finds no `trainer` module, and nothing is made of it
    build = "from transformers import AutoTokenizer, TrainingArguments\nfrom trainer import MyTrainer\n\n\ndef build(tok):\n    return MyTrainer(model=None, args=TrainingArguments('o'), tokenizer=tok)\n"
    files = {"finetune/__init__.py": "", "finetune/trainer.py": TRAINER, "finetune/build.py": build}
    assert run(tmp_path, files) == []


def test_a_name_an_earlier_root_holds_keeps_meaning_that_module(tmp_path):
    # the project root's `trainer.py` (a plain class) is found before the script's sibling
    files = {
        "trainer.py": PLAIN_TRAINER,
        "finetune/__init__.py": "",
        "finetune/trainer.py": TRAINER,
        "finetune/train.py": SCRIPT,
    }
    assert run(tmp_path, files) == []
