"""``Project.joined_modules``: the modules that share a unit with a module, worked out from the
root units alone, equal the union of every unit that contains it — on import graphs with
cycles, chains, diamonds and modules nothing imports."""
import random

import pytest

from precision_lint.facts.model import ModuleFacts
from precision_lint.project.model import Project


def _graph(seed: int, size: int):
    rng = random.Random(seed)
    modules = []
    for i in range(size):
        targets = rng.sample(range(size), k=rng.randint(0, 3))
        imports = tuple(sorted(f"m{t}" for t in targets if t != i))
        modules.append(ModuleFacts(path=f"/p/m{i}.py", module=f"m{i}", is_package=False, root="/p", imports=imports))
    return modules


def _by_units(project: Project, module: ModuleFacts):
    paths = set()
    for entry in project.units_containing(module):
        paths |= project.unit(entry)
    return sorted(paths)


@pytest.mark.parametrize("seed", range(40))
def test_joined_modules_are_the_union_of_the_units_that_contain_a_module(seed):
    project = Project(_graph(seed, size=3 + seed % 17))
    for module in project.modules:
        assert [m.path for m in project.joined_modules(module)] == _by_units(project, module)


def test_a_cycle_nothing_imports_is_its_own_root():
    # a ⇄ b, and c imported by b: no module is imported from outside the cycle
    modules = [
        ModuleFacts(path="/p/a.py", module="a", is_package=False, root="/p", imports=("b",)),
        ModuleFacts(path="/p/b.py", module="b", is_package=False, root="/p", imports=("a", "c")),
        ModuleFacts(path="/p/c.py", module="c", is_package=False, root="/p", imports=()),
        ModuleFacts(path="/p/d.py", module="d", is_package=False, root="/p", imports=()),
    ]
    project = Project(modules)
    c = project.by_path["/p/c.py"]
    assert [m.path for m in project.joined_modules(c)] == ["/p/a.py", "/p/b.py", "/p/c.py"]
    assert [m.path for m in project.joined_modules(project.by_path["/p/d.py"])] == ["/p/d.py"]


def _cycles_back(project: Project, module: ModuleFacts) -> bool:
    return any(module.path in project.unit(dep) for dep in project.imported_modules(module))


@pytest.mark.parametrize("seed", range(40))
def test_roots_and_importers_are_those_of_the_units(seed):
    # the roots of a module's runs (worked out down the graph of import groups) and its importers
    # (one walk per group), against every module's unit listed path by path
    project = Project(_graph(seed, size=3 + seed % 17))
    units = {m.path: project.unit(m) for m in project.modules}
    reaching = {m.path: {e for e, unit in units.items() if m.path in unit} for m in project.modules}
    roots = []
    for m in sorted(project.modules, key=lambda m: m.path):
        group = {p for p in units[m.path] if m.path in units[p]}
        if min(group) == m.path and reaching[m.path] <= group:
            roots.append(m.path)
    for module in project.modules:
        assert project.root_paths(module) == tuple(r for r in roots if module.path in units[r])
        expected = {p for p in reaching[module.path] if p != module.path}
        if _cycles_back(project, module):
            expected.add(module.path)
        assert project.importers_of(module) == expected


@pytest.mark.parametrize("seed", range(20))
def test_entries_among_on_a_fresh_project(seed):
    # in_unit asked before any unit was made (the modules are numbered as units are made)
    modules = _graph(seed, size=3 + seed % 17)
    units = {m.path: Project(modules).unit(m) for m in Project(modules).modules}
    for module in modules:
        project = Project(modules)
        module = project.by_path[module.path]
        expected = [c.path for c in project.modules if c.path == module.path or module.path in units[c.path]]
        assert [c.path for c in project.entries_among(module, project.modules)] == expected


@pytest.mark.parametrize("seed", range(40))
def test_unit_holds_is_any_module_of_the_unit(seed):
    # worked out once down the graph of import groups, against each unit listed path by path
    project = Project(_graph(seed, size=3 + seed % 17))
    rng = random.Random(seed)
    marked = {m.path for m in project.modules if rng.random() < 0.2}
    for module in project.modules:
        expected = any(p in marked for p in project.unit(module))
        assert project.unit_holds(module, "marked", lambda m: m.path in marked) == expected
