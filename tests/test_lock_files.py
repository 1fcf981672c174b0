"""A ``uv.lock`` / ``poetry.lock`` beside a project's pyproject.toml pins the exact version every
install of the project gets (review 24b, C1: pyproject says ``transformers>=4.46,<6``, the lock
5.14.1): read as a requirements file's ``==``, narrowing the pyproject's range."""
from __future__ import annotations

from conftest import findings_in, write_tree

from precision_lint.workspace.versions import lock_requirements

PYPROJECT = '[project]\nname = "reader"\nversion = "0.1.0"\ndependencies = ["torch>=2.7", "transformers>=4.46,<6"]\n'
UV_LOCK = '''version = 1
requires-python = "==3.11.*"

[[package]]
name = "reader"
version = "0.1.0"
source = { editable = "." }

[[package]]
name = "transformers"
version = "VERSION"
source = { registry = "https://pypi.org/simple" }
'''
POETRY_LOCK = '''[[package]]
name = "Transformers"
version = "VERSION"
description = "State-of-the-art Machine Learning for JAX, PyTorch and TensorFlow"
optional = false
'''
SCRIPT = (
    "import torch\nfrom transformers import AutoModelForMultipleChoice\n\n"
    "model = AutoModelForMultipleChoice.from_pretrained('org/encoder-large', dtype=torch.float32)\n"
)


def dtype_findings(tmp_path, lock_name=None, lock=None, version="5.14.1"):
    files = {".git/HEAD": "", "pyproject.toml": PYPROJECT, "src/train.py": SCRIPT}
    if lock_name:
        files[lock_name] = lock.replace("VERSION", version)
    write_tree(tmp_path, files)
    return [d for d in findings_in(tmp_path, ["MP302", "MP304"]) if "`dtype=`" in d.message]


def test_without_a_lock_the_open_pyproject_range_is_not_reported(tmp_path):
    """`transformers>=4.46,<6` admits 4.56, which has `dtype=`: an install resolved afresh gets a
    version the code is written for (the lock below 4.56 is what makes it fail)."""
    assert dtype_findings(tmp_path) == []


def test_a_uv_lock_on_5_pins_the_version(tmp_path):
    assert dtype_findings(tmp_path, "uv.lock", UV_LOCK) == []


def test_a_uv_lock_below_the_rename_is_named(tmp_path):
    found = dtype_findings(tmp_path, "uv.lock", UV_LOCK, "4.46.3")
    assert [d.code for d in found] == ["MP302"] and "uv.lock" in found[0].message


def test_a_poetry_lock_too(tmp_path):
    assert dtype_findings(tmp_path, "poetry.lock", POETRY_LOCK) == []
    assert [d.code for d in dtype_findings(tmp_path, "poetry.lock", POETRY_LOCK, "4.50.0")] == ["MP302"]


def test_lock_entries():
    text = UV_LOCK.replace("VERSION", "5.14.1") + '\n[[package]]\nname = "numpy"\nversion = "2.1.0"\n'
    (found,) = lock_requirements(text, "uv.lock")
    assert (found.dist, found.low, found.high, found.spec) == ("transformers", (5, 14, 1), (5, 14, 1), "transformers==5.14.1")


def test_a_library_locked_twice_allows_either():
    text = (UV_LOCK.replace("VERSION", "4.57.1") + UV_LOCK.split("\n\n", 1)[1].replace("VERSION", "5.2.0"))
    (found,) = lock_requirements(text, "uv.lock")
    assert found.accepts_between((4, 57, 1), (4, 57, 2)) and found.accepts_between((5, 2, 0), (5, 2, 1))
