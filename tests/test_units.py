"""Units across files: which modules an import joins, and the unit of a named file found on disk.

`precision-lint train.py` (what pre-commit and editors run) must see the same cross-file
conflicts as `precision-lint .`; an import never joins a same-named module of an unrelated
folder; and the join is computed once, not once per module.
"""
import random

import pytest

from precision_lint.facts.model import ModuleFacts
from precision_lint.project import Project


# --- joins are linear -------------------------------------------------------------------
def _synthetic(n, seed):
    """n modules in one folder, each importing a few others (cycles included)."""
    rng = random.Random(seed)
    modules = []
    for i in range(n):
        deps = rng.sample(range(n), rng.randint(0, 3))
        m = ModuleFacts(f"/p/m{i}.py", f"m{i}", False, "/p")
        # `import m3` and `from m5 import func` (which also names m5.func)
        m.imports = tuple(sorted({f"m{d}" for d in deps[1:]} | {f"m{d}.func" for d in deps[:1]}))
        modules.append(m)
    return modules


def _old_units_containing(project, module):
    """The definition before: every module whose unit holds ``module``, itself first."""
    return [module] + [o for o in project.modules if o.path != module.path and module.path in project.unit(o)]


@pytest.mark.parametrize("seed", range(5))
def test_units_containing_equals_its_definition(seed):
    modules = _synthetic(60, seed)
    project = Project(modules)
    reference = Project(modules)
    for m in modules:
        assert [x.path for x in project.units_containing(m)] == [x.path for x in _old_units_containing(reference, m)]


def test_units_containing_computes_each_unit_once(monkeypatch):
    modules = _synthetic(200, 7)
    project = Project(modules)
    calls = []
    original = Project.unit

    def counting(self, module):
        calls.append(module.path)
        return original(self, module)

    monkeypatch.setattr(Project, "unit", counting)
    for m in modules:
        project.units_containing(m)
    assert sorted(calls) == sorted(m.path for m in modules)  # n calls, not n * n
