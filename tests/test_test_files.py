"""Test code is not a training entry point: the portability rules (MP2xx) stay silent in test
files by default (`test-files`), every other rule still reports there. A file the default
patterns match by its name alone is still a program of the run where it is written as one, and
any file they match is one where a shipped launcher runs it (`project/test_code.py`)."""
import json

import pytest

from conftest import config, dedent

from precision_lint.workspace.config import ConfigError, from_table, parse_gpu
from precision_lint.engine import check_source

BF16_AND_TOKENIZER = """
    import torch
    from transformers import Trainer, TrainingArguments
    args = TrainingArguments(output_dir="o", bf16=True)
    Trainer(model=m, args=args, tokenizer=tok)
    """


def _codes(path, cfg=None):
    cfg = cfg or config(transformers_version="5.23")
    return sorted(d.code for d in check_source(dedent(BF16_AND_TOKENIZER), path=path, config=cfg))


@pytest.mark.parametrize("path", ["tests/test_train.py", "pkg/tests/helpers.py", "tests/train.py", "conftest.py"])
def test_portability_rules_are_silent_in_test_files(path):
    # by its place (a tests/ folder, conftest.py), a file is test code unless a launcher runs it
    assert _codes(path) == ["MP301"]


PYTEST_FILE = """
    import pytest
    import torch
    from transformers import Trainer, TrainingArguments

    def test_bf16_training():
        args = TrainingArguments(output_dir="o", bf16=True)
        Trainer(model=m, args=args, tokenizer=tok)
    """


@pytest.mark.parametrize("path", ["test_bf16.py", "trainer_test.py", "pkg/test_x.py"])
def test_a_pytest_file_named_as_one_stays_test_code(path):
    assert sorted(d.code for d in check_source(dedent(PYTEST_FILE), path=path, config=config(transformers_version="5.23"))) == ["MP301"]


@pytest.mark.parametrize(
    "text",
    [
        # a test function pytest collects, without importing pytest
        """
        import torch
        from transformers import TrainingArguments
        args = TrainingArguments(output_dir="o", bf16=True)
        def test_args():
            assert args.bf16
        """,
        # a unittest.TestCase, run as a script
        """
        import unittest
        import torch
        from transformers import TrainingArguments
        class BF16(unittest.TestCase):
            def runTest(self):
                TrainingArguments(output_dir="o", bf16=True)
        if __name__ == "__main__":
            unittest.main()
        """,
        # a pytest class with test methods
        """
        import torch
        from transformers import TrainingArguments
        class TestArgs:
            def test_bf16(self):
                TrainingArguments(output_dir="o", bf16=True)
        TestArgs().test_bf16()
        """,
        # a test framework imported, top-level code
        """
        from hypothesis import given
        import torch
        from transformers import TrainingArguments
        args = TrainingArguments(output_dir="o", bf16=True)
        print(args)
        """,
    ],
    ids=["test-function", "unittest-main", "pytest-class", "hypothesis"],
)
def test_a_file_written_as_a_test_stays_test_code(text):
    found = check_source(dedent(text), path="test_args.py", config=config(transformers_version="5.23"))
    assert [d.code for d in found if d.code.startswith("MP2")] == []


PROGRAM = """
    import torch
    from transformers import AutoModelForCausalLM, TrainingArguments

    def main():
        args = TrainingArguments(output_dir="o", bf16=True)
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16, attn_implementation="flash_attention_2")

    if __name__ == "__main__":
        main()
    """


@pytest.mark.parametrize("path", ["train_fold2_test.py", "scripts/test_infer.py"])
def test_a_program_named_like_a_test_is_judged(path):
    # a __main__ block, no test function, no test framework: a script of the run (review 24b M7)
    found = check_source(dedent(PROGRAM), path=path, config=config(transformers_version="5.23"))
    assert sorted(d.code for d in found if d.code.startswith("MP2")) == ["MP201", "MP202"]


def test_a_test_named_module_that_trains_at_its_top_level_is_judged():
    # review 24b M7's shape: the top level only assigns, but the assignments build the
    # training arguments and load the model
    text = """
        import torch
        from transformers import AutoModelForCausalLM, TrainingArguments
        args = TrainingArguments(output_dir="fold2", bf16=True)
        model = AutoModelForCausalLM.from_pretrained("m", dtype=torch.float16, attn_implementation="flash_attention_2")
        """
    found = check_source(dedent(text), path="train_fold2_test.py", config=config(transformers_version="5.23"))
    assert sorted(d.code for d in found if d.code.startswith("MP2")) == ["MP201", "MP202"]


def test_a_class_pytest_does_not_collect_and_lightning_test_hooks_make_no_test():
    # `class TestCollaterFn` has an __init__ (pytest skips it); `test_step` is a method
    text = """
        import torch
        from transformers import TrainingArguments
        class TestCollaterFn:
            def __init__(self, tok):
                self.tok = tok
            def test_batch(self, batch):
                return batch
        class Module:
            def test_step(self, batch):
                return batch
        def main():
            TrainingArguments(output_dir="o", bf16=True)
        if __name__ == "__main__":
            main()
        """
    found = check_source(dedent(text), path="test_infer.py", config=config(transformers_version="5.23"))
    assert [d.code for d in found if d.code.startswith("MP2")] == ["MP201"]


def test_a_helper_module_named_like_a_test_stays_test_code():
    # definitions only, nothing launches it: it runs as a part of the tests that import it
    text = """
        import logging
        import torch
        from transformers import TrainingArguments
        logger = logging.getLogger(__name__)
        def bf16_args():
            return TrainingArguments(output_dir="o", bf16=True)
        """
    found = check_source(dedent(text), path="test_utils.py", config=config(transformers_version="5.23"))
    assert [d.code for d in found if d.code.startswith("MP2")] == []


@pytest.mark.parametrize("path", ["tests/eval_speed.py", "tests/test_speed.py", "conftest.py"])
def test_a_program_in_a_tests_folder_stays_test_code_unless_launched(path):
    found = check_source(dedent(PROGRAM), path=path, config=config(transformers_version="5.23"))
    assert [d.code for d in found if d.code.startswith("MP2")] == []


# --- launched by a shipped launcher ------------------------------------------------------------
INFER = (
    "import torch\n"
    "from transformers import AutoModelForCausalLM\n"
    "model = AutoModelForCausalLM.from_pretrained('m', dtype=torch.bfloat16).cuda().eval()\n"
)


def _notebook(*cells, gpu="Tesla P100-PCIE-16GB"):
    first = {
        "cell_type": "code", "metadata": {}, "execution_count": 1, "source": ["!nvidia-smi --query-gpu=name --format=csv"],
        "outputs": [{"output_type": "stream", "name": "stdout", "text": ["name\n", gpu + "\n"]}],
    }
    code = [{"cell_type": "code", "metadata": {}, "execution_count": i + 2, "source": [c], "outputs": []} for i, c in enumerate(cells)]
    meta = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}, "kaggle": {"accelerator": "gpu"}}
    return json.dumps({"nbformat": 4, "nbformat_minor": 4, "metadata": meta, "cells": [first, *code]})


def _run(paths, cfg=None):
    from precision_lint.engine import Engine

    engine = Engine(cfg or config(transformers_version="5.23"), ["MP201", "MP202"], jobs=1)
    return sorted((d.path.rpartition("/")[2], d.code) for d in engine.run_paths([str(p) for p in paths]).diagnostics)


@pytest.mark.parametrize("lint_notebook", [True, False], ids=["notebook-linted", "script-alone"])
def test_a_test_named_script_a_shipped_notebook_runs_is_judged(tmp_path, lint_notebook):
    # review 24a: `scripts/test_infer.py`, the evaluation a Kaggle notebook runs on its P100. As a
    # module of definitions only it would be test code by its name; the notebook runs it.
    (tmp_path / ".git").mkdir()
    (tmp_path / "scripts").mkdir()
    script = tmp_path / "scripts" / "test_infer.py"
    script.write_text("import torch\nfrom transformers import AutoModelForCausalLM\n"
                      "def load():\n    return AutoModelForCausalLM.from_pretrained('m', dtype=torch.bfloat16).cuda()\n"
                      "model = load()\n")
    (tmp_path / "run.ipynb").write_text(_notebook("!python scripts/test_infer.py"))
    assert _run([tmp_path] if lint_notebook else [script]) == [("test_infer.py", "MP201")]


def test_a_notebook_that_only_names_the_file_or_runs_pytest_launches_nothing(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "test_infer.py").write_text(
        "import torch\nfrom transformers import AutoModelForCausalLM\n"
        "def load():\n    return AutoModelForCausalLM.from_pretrained('m', dtype=torch.bfloat16).cuda()\n"
    )
    (tmp_path / "run.ipynb").write_text(_notebook("!pytest scripts/test_infer.py", "!python -m pytest scripts/test_infer.py", "# see scripts/test_infer.py"))
    assert _run([tmp_path]) == []


def test_a_program_in_a_tests_folder_that_a_launcher_runs_is_judged(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "eval_speed.py").write_text(dedent(PROGRAM))
    (tmp_path / "tests" / "test_model.py").write_text(dedent(PROGRAM))  # never launched: test code
    (tmp_path / "run.sh").write_text("#!/bin/bash\npython tests/eval_speed.py --steps 10\n")
    assert _run([tmp_path]) == [("eval_speed.py", "MP201"), ("eval_speed.py", "MP202")]


def test_a_launched_file_written_as_a_test_stays_test_code(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_model.py").write_text(
        "import unittest\nimport torch\nfrom transformers import TrainingArguments\n"
        "class T(unittest.TestCase):\n    def test_bf16(self):\n        TrainingArguments(output_dir='o', bf16=True)\n"
        "if __name__ == '__main__':\n    unittest.main()\n"
    )
    (tmp_path / "run_tests.sh").write_text("python tests/test_model.py\n")
    assert _run([tmp_path]) == []


def test_configured_test_files_are_taken_as_written(tmp_path):
    # the user's patterns say what test code is: neither a launcher nor a __main__ block overrides them
    (tmp_path / ".git").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "test_infer.py").write_text(INFER)
    (tmp_path / "train_fold2_test.py").write_text(dedent(PROGRAM))
    (tmp_path / "run.ipynb").write_text(_notebook("!python scripts/test_infer.py"))
    cfg = from_table({"test-files": ["test_*.py", "*_test.py"], "transformers-version": "5.23"}, "test")
    assert _run([tmp_path], cfg) == []
    assert _run([tmp_path]) == [("test_infer.py", "MP201"), ("train_fold2_test.py", "MP201"), ("train_fold2_test.py", "MP202")]


def test_training_scripts_are_judged_as_before():
    assert _codes("scripts/train.py") == ["MP201", "MP301"]


def test_test_files_can_be_linted_like_any_code():
    cfg = from_table({"test-files": [], "transformers-version": "5.23"}, "test")
    assert _codes("tests/test_train.py", cfg) == ["MP201", "MP301"]


def test_test_files_must_be_strings():
    with pytest.raises(ConfigError, match="test-files"):
        from_table({"test-files": 3}, "test")


@pytest.mark.parametrize(
    "name, capability",
    [("sm80", 80), ("sm_86", 86), ("sm75", 75), ("sm100", 100), ("sm_120", 120), ("t4", 75), ("b200", 100)],
)
def test_gpu_names_parse_to_their_capability(name, capability):  # A10: sm100 was read as 10
    assert parse_gpu(name) == capability


def test_a_warm_run_sees_a_launcher_edited_later(tmp_path):
    # whether a file named like a test is launched is read from the launchers: a cached result
    # holds only while they are as they were (a launcher *added* to a folder later is not seen
    # by a warm run, as for the hardware launchers state: the folder listings are no side files)
    (tmp_path / ".git").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "eval_speed.py").write_text(dedent(PROGRAM))
    (tmp_path / "run.sh").write_text("python -m pytest tests/\n")
    cache = tmp_path / ".cache-dir"

    def check():
        from precision_lint.engine import Engine

        engine = Engine(config(transformers_version="5.23"), ["MP201"], jobs=1, cache_dir=str(cache))
        return [d.code for d in engine.run_paths([str(tmp_path / "tests" / "eval_speed.py")]).diagnostics]

    assert check() == []
    (tmp_path / "run.sh").write_text("python tests/eval_speed.py\n")
    assert check() == ["MP201"]
    (tmp_path / "run.sh").write_text("python -m pytest tests/\n")
    assert check() == []
