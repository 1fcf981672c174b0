"""Whether a file the ``test-files`` patterns match is test code, or a program of the run.

The portability rules (MP2xx: bf16, FlashAttention-2 and the capability guards) stay silent in
test code (``config.TEST_FILE_IGNORES``): a test runs on CI hardware chosen for it, behind skip
decorators, not on the GPU the user trains on. The default patterns tell test code by a file's
place (a ``tests/`` or ``test/`` folder, pytest's ``conftest.py``) or by its name alone
(``test_*.py``, ``*_test.py``). A name is weak evidence: ``scripts/test_infer.py`` is the
evaluation a shipped Kaggle notebook runs (``!python scripts/test_infer.py``) on its P100, and
``train_fold2_test.py`` trains fold 2 ("test": a trial run). So a file the *default* patterns
match is still a program of the run, judged like any script, where

(a) a shipped launcher runs it: a shell/SLURM launcher or job YAML near it, a fenced command of
    a README that speaks about it (``ShippedFiles.launches_for``), or a notebook's ``!python`` /
    ``%run`` line (a notebook the check lints, or one near the file:
    ``ShippedFiles.notebooks_running``) — whatever its place, a ``tests/`` folder included; or
(b) it is matched by its name alone (not under a test folder, not a ``conftest.py``) and it
    is written to be run (:func:`runs_as_program`): its top level acts (``semantic/programs.py``),
    it has an ``if __name__ == "__main__":`` block, or its top level loads a model, sets a
    precision or trains (``model = AutoModel.from_pretrained(...)`` at module level);

and in both cases it is not *written as a test* (:func:`written_as_test`): it defines nothing a
test runner collects (a top-level ``def test_*``; a class pytest collects — ``Test*`` without
an ``__init__`` that has ``test*`` methods — or a ``unittest.TestCase`` subclass) and imports no
test framework (pytest, unittest, hypothesis, nose, ``absl.testing``, the libraries' own test
utilities). A file written as a test stays test code whoever runs it: ``python
tests/test_x.py`` whose ``__main__`` calls ``unittest.main()`` runs tests, behind the same skip
decorators. A module of definitions only (``tests/helpers.py``, a ``*_test.py`` of fixtures)
that nothing launches stays test code: it runs only as a part of the tests that import it.

Where the user configures ``test-files`` (or a caller sets other patterns), the patterns are
taken as written: they are the user's statement of what test code is, as ``per-file-ignores``
is, and ``test-files = []`` is the way to lint every file.

Decided from the module's facts (its imports, definitions, classes, whether it acts) and from
what the join already reads (the launchers and READMEs, side files of the run, and the linted
notebooks' command lines): a check that reuses findings sees an edit of any of them. As for the
hardware launchers state, a launcher *added* to a folder after a cached check is not seen by a
warm run (folder listings are no side files). Not read as launches: a Python file that runs the
file with ``subprocess`` (its commands are facts only where it states a GPU,
``CapabilityFacts.launches``), a console script that names one of its functions.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Tuple

from ..facts.model import ModuleFacts

if TYPE_CHECKING:  # pragma: no cover
    from ..workspace.config import Config

# The modules whose import marks test code: the runners and their helpers, and the test
# utilities of the libraries this linter reads (imported only by their own and their users' tests)
TEST_FRAMEWORKS = (
    "pytest", "_pytest", "unittest", "hypothesis", "nose", "nose2", "doctest", "parameterized",
    "absl.testing", "torch.testing._internal", "transformers.testing_utils", "diffusers.utils.testing_utils",
    "accelerate.test_utils", "peft.tests", "trl.testing_utils",
)


def is_test_code(project, module: ModuleFacts, config: "Config") -> bool:
    """Whether ``module`` is test code, where the portability rules stay silent (see the
    module's docstring). Asked once per module of the run; the patterns first, so a file they
    do not match costs nothing more."""
    if not config.is_test_file(module.path):
        return False
    if config.test_files_configured or not module.parsed:
        return True  # the user's patterns; a file no rule of them judges
    return project.memo(("test code", module.path), lambda: _test_code(project, module, config))


def _test_code(project, module: ModuleFacts, config: "Config") -> bool:
    if written_as_test(module):
        return True
    if not config.is_test_place(module.path) and runs_as_program(module):
        return False  # (b): named like a test, written as a program
    return not launched(project, module)


# the sections whose sites are the work of a run: a model's weights loaded or cast, a precision
# set (``TrainingArguments(bf16=True)``, autocast, a GradScaler), a trainer built or stepped
_RUN_WORK = ("weights", "precision", "training")


def runs_as_program(module: ModuleFacts) -> bool:
    """Whether the module is written to be run: its top level acts (a call statement, a loop, a
    ``with``: ``semantic/programs.py``), it has an ``if __name__ == "__main__":`` block, or its
    top level does a run's work in an assignment (``model = AutoModel.from_pretrained(...)``,
    ``args = TrainingArguments(bf16=True)``), which ``acts`` leaves out (an assignment binds a
    name for the call graph, but this one loads a model when the file runs). A top level of
    imports, definitions and other assignments (``logger = logging.getLogger(...)``) is a
    module's, imported by the tests beside it."""
    if module.acts or module.main_lines:
        return True
    return any(getattr(site, "scope", None) == module.module for name in _RUN_WORK for site in module.section(name))


def written_as_test(module: ModuleFacts) -> bool:
    """Whether the module imports a test framework or defines at its top level what a test runner
    collects (``definitions``: its top-level functions and classes; ``classes``' names are
    qualified by the module's)."""
    if any(_is_framework(name) for name in module.imports):
        return True
    if any(name.startswith("test_") for name in module.definitions):
        return True
    prefix = f"{module.module}." if module.module else ""
    return any(_collected(c, c.qualname[len(prefix):]) for c in module.classes if c.qualname.startswith(prefix) and "." not in c.qualname[len(prefix):])


_FRAMEWORK_SET = frozenset(TEST_FRAMEWORKS)


def _is_framework(name: str) -> bool:
    """Whether the dotted ``name`` is a test framework or a module of one (``unittest.mock``)."""
    parts = name.split(".")
    return any(".".join(parts[:i]) in _FRAMEWORK_SET for i in range(1, min(len(parts), 4) + 1))


def _collected(cls, name: str) -> bool:
    """A class a test runner collects: a ``unittest.TestCase`` (``absltest.TestCase``,
    ``IsolatedAsyncioTestCase``, a project's ``*TestCase`` base), or a pytest ``Test*`` class:
    no ``__init__`` (pytest warns and skips one that has it) and ``test*`` methods."""
    if any(base.rpartition(".")[2].endswith("TestCase") for base in cls.bases):
        return True
    return name.startswith("Test") and cls.init_params is None and any(m.startswith("test") for m in cls.members)


def launched(project, module: ModuleFacts) -> bool:
    """Whether a shipped launcher runs the module's file: a shell launcher or README command
    (``ShippedFiles.launches_for``), a notebook the check lints, or a notebook near the file."""
    from ..workspace.shipped import lines_run

    path = os.path.abspath(project.written_files.get(module.path, module.path))
    if project.shipped.launches_for(path):
        return True
    for folder, lines in _linted_notebooks(project):
        if lines_run(folder, lines, path):
            return True
    return bool(project.shipped.notebooks_running(path))


def _linted_notebooks(project) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    """(folder, command lines) of each notebook the check lints that launches anything."""

    def compute():
        return tuple(
            (os.path.dirname(os.path.abspath(path)), tuple(lines))
            for path, lines in sorted(project.notebook_lines.items())
            if any(("python" in line or "%run" in line or "torchrun" in line or "accelerate" in line or "deepspeed" in line) for line in lines)
        )

    return project.memo(("linted notebooks' launches",), compute)
