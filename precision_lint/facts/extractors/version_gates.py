"""Facts about version tests that reach beyond the file (read by the join).

- ``predicates``: this module's functions that test a library's version of their parameters
  (``def at_least(name, v): return Version(metadata.version(name)) >= Version(v)``), so a
  call of one in another file is a version test there too;
- ``imports``: the imports of this module written under a version test (``if not
  at_least("transformers", "4.35"): from .legacy import OldTrainer``), with what each test
  admits, and the modules also imported without one. A module that its importers import
  only under such tests runs only on the versions they admit (``project/model.py``).
"""
from __future__ import annotations

from ..._dataclass import dataclass
from typing import Tuple

from ...semantic.evaluate import Evaluator
from ...semantic.index import ModuleIndex
from ...semantic.names import import_bindings
from ...semantic.version_tests import HelperCall, VersionTest, version_tests_of

SECTION = "version_gates"
EMPTY = {"predicates": (), "imports": (), "free": ()}


@dataclass(frozen=True)
class ImportGate:
    """An import statement under version tests: the modules it imports, the tests it runs
    under (each as the branch taken admits it) and project helpers called in them."""

    modules: Tuple[str, ...]
    tests: Tuple[VersionTest, ...]
    helpers: Tuple[HelperCall, ...]
    line: int


def extract(index: ModuleIndex, evaluator: Evaluator):
    tests = version_tests_of(index)
    gates, free = [], set()
    for statement in index.import_statements:
        guards, _ = index.import_context.get(id(statement), ((), ()))
        _, modules = import_bindings(statement, index.imports.module, index.imports.is_package)
        modules = tuple(m for m in modules if m)
        found, helpers = [], []
        for test, positive in guards:
            known = tests.test(test, positive)
            if known is not None:
                found.append(known)
            else:
                helpers.extend(tests.helper_calls(test, positive))
        if found or helpers:
            gates.append(ImportGate(modules, tuple(found), tuple(helpers), index.span(statement).line))
        else:
            free.update(modules)
    gated = {m for g in gates for m in g.modules}
    return {
        "predicates": tuple(tests.predicates().items()),
        "imports": tuple(gates),
        "free": tuple(sorted(gated & free)),  # also imported without a test
    }
