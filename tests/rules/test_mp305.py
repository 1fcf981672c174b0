"""MP305 override-misses-new-argument: the overrides a Trainer's loop crashes on, the fix, and
the negatives (signatures that take the argument, classes that are no Trainer, versions that do
not pass it, a subclass that replaces the method making the call)."""
import pytest

from conftest import config, dedent, fix, lint, write_tree

from precision_lint.engine import Engine

CODE = "MP305"


def _codes(src, version="5.23"):
    return [(d.span.line, d.message) for d in lint(src, CODE, config(transformers_version=version))]


# --- positives -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "head, signature, error",
    [
        ("from transformers import Trainer\nclass T(Trainer):", "def compute_loss(self, model, inputs, return_outputs=False):",
         "TypeError: T.compute_loss() got an unexpected keyword argument 'num_items_in_batch'"),
        ("import transformers\nclass T(transformers.Seq2SeqTrainer):", "def compute_loss(self, model, inputs):",
         "TypeError: T.compute_loss() got an unexpected keyword argument 'num_items_in_batch'"),
        ("from trl import SFTTrainer\nclass T(SFTTrainer):", "def training_step(self, model, inputs):",
         "TypeError: T.training_step() takes 3 positional arguments but 4 were given"),
        ("from transformers import Trainer as HF\nclass T(HF):", "def log(self, logs):",
         "TypeError: T.log() takes 2 positional arguments but 3 were given"),
        ("from transformers import Trainer\nclass T(Trainer):", "def log(self, logs=None):",
         "TypeError: T.log() takes from 1 to 2 positional arguments but 3 were given"),
        ("from transformers import Trainer\nclass T(Trainer):", "def compute_loss(self, model, inputs, *, return_outputs=False):",
         "TypeError: T.compute_loss() got an unexpected keyword argument 'num_items_in_batch'"),
    ],
)
def test_an_override_with_the_old_signature_crashes_in_the_loop(head, signature, error):
    src = f"{head}\n    {signature}\n        return 0\n"
    found = _codes(src)
    assert len(found) == 1 and found[0][0] == 3
    assert f"`{error}`" in found[0][1]


def test_a_project_base_class_in_another_file_makes_the_subclass_a_trainer(tmp_path):
    root = write_tree(
        tmp_path / "proj",
        {
            "pyproject.toml": '[tool.precision-lint]\ntransformers-version = "5.23"\n',
            "base.py": "from transformers import Trainer\n\nclass Base(Trainer):\n    pass\n",
            "train.py": (
                "import transformers\nfrom base import Base\n\n"
                "class Mine(Base):\n    def compute_loss(self, model, inputs, return_outputs=False):\n        return 0\n"
            ),
        },
    )
    found = Engine(config(), [CODE]).run_paths([str(root)]).diagnostics
    assert [(d.path.rsplit("/", 1)[-1], d.span.line) for d in found] == [("train.py", 5)]


def test_a_training_step_that_calls_its_base_still_runs_the_librarys_call():
    src = """
        from transformers import Trainer
        class T(Trainer):
            def training_step(self, model, inputs, num_items_in_batch=None):
                return super().training_step(model, inputs, num_items_in_batch)

            def compute_loss(self, model, inputs, return_outputs=False):
                return 0
        """
    assert [line for line, _ in _codes(src)] == [6]


# --- negatives -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "signature",
    [
        "def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):",
        "def compute_loss(self, model, inputs, return_outputs=False, **kwargs):",
        "def compute_loss(self, model, inputs, *, num_items_in_batch=None, return_outputs=False):",
        "def training_step(self, model, inputs, num_items_in_batch=None):",
        "def training_step(self, *args, **kwargs):",
        "def log(self, logs, start_time=None):",
        "def log(self, logs, *args):",
        "def evaluate(self, eval_dataset=None):",
    ],
)
def test_a_signature_that_takes_the_argument_is_fine(signature):
    assert _codes(f"from transformers import Trainer\nclass T(Trainer):\n    {signature}\n        return 0\n") == []


def test_a_class_that_is_no_trainer_is_not_judged():
    src = """
        import torch
        class Trainer:
            def compute_loss(self, model, inputs):
                return 0
        class Mine(Trainer):
            def log(self, logs):
                pass
        """
    assert _codes(src) == []


@pytest.mark.parametrize(
    "version, lines",
    [
        ("4.45.2", []),  # passes neither
        ("4.46.1", [3]),  # compute_loss only: `log` gets its start time from 4.47
        ("4.47.1", [5]),  # compute_loss gets it only for some models there; `log` always
        ("4.49.0", [3, 5]),
        ("5.23", [3, 5]),
    ],
)
def test_the_targeted_version_decides(version, lines):
    src = """
        from transformers import Trainer
        class T(Trainer):
            def compute_loss(self, model, inputs, return_outputs=False):
                return 0
            def log(self, logs):
                pass
        """
    assert [line for line, _ in _codes(src, version)] == lines


def test_a_pin_in_the_project_decides(tmp_path):
    src = "from transformers import Trainer\n\nclass T(Trainer):\n    def compute_loss(self, model, inputs):\n        return 0\n"
    old = write_tree(tmp_path / "old", {"requirements.txt": "transformers==4.40.2\n", "train.py": src})
    new = write_tree(tmp_path / "new", {"requirements.txt": "transformers>=4.30\n", "train.py": src})
    assert Engine(config(), [CODE]).run_paths([str(old)]).diagnostics == []
    found = Engine(config(), [CODE]).run_paths([str(new)]).diagnostics
    assert len(found) == 1 and "transformers>=4.30 in requirements.txt" in found[0].message


def test_a_subclass_that_replaces_the_calling_method_is_not_judged():
    src = """
        from transformers import Trainer
        class T(Trainer):
            def training_step(self, model, inputs, num_items_in_batch=None):
                loss = self.compute_loss(model, inputs)
                self.accelerator.backward(loss)
                return loss.detach()

            def compute_loss(self, model, inputs, return_outputs=False):
                return 0
        """
    assert _codes(src) == []


# --- the fix ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "before, after",
    [
        (
            """
            from transformers import Trainer
            class T(Trainer):
                def compute_loss(self, model, inputs, return_outputs=False):  # the ranking loss
                    return 0
            """,
            """
            from transformers import Trainer
            class T(Trainer):
                def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):  # the ranking loss
                    return 0
            """,
        ),
        (
            """
            from transformers import Trainer
            class T(Trainer):
                def log(
                    self,
                    logs: dict,  # what the loop logged
                ) -> None:
                    super().log(logs)
            """,
            """
            from transformers import Trainer
            class T(Trainer):
                def log(
                    self,
                    logs: dict, start_time=None,  # what the loop logged
                ) -> None:
                    super().log(logs)
            """,
        ),
        (
            """
            from transformers import Trainer
            class T(Trainer):
                def training_step(self, model, inputs, *, extra=1):
                    return 0
            """,
            """
            from transformers import Trainer
            class T(Trainer):
                def training_step(self, model, inputs, num_items_in_batch=None, *, extra=1):
                    return 0
            """,
        ),
    ],
)
def test_the_fix_adds_the_parameter_with_a_default(before, after):
    assert fix(before, CODE) == dedent(after)
    assert lint(dedent(after), CODE) == []
