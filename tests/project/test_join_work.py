"""Work the join does once, counted (never timed): the pins of the scripts that import a
module, and what a README shared by many modules states."""
import random

import pytest

from precision_lint.facts.model import ModuleFacts
from precision_lint.facts.extract import stated_requirements
from precision_lint.project.model import Project
from precision_lint.workspace import shipped


def _graph(seed: int, size: int):
    rng = random.Random(seed)
    modules = []
    for i in range(size):
        targets = rng.sample(range(size), k=rng.randint(0, 3))
        imports = tuple(sorted(f"m{t}" for t in targets if t != i))
        path = f"/p/m{i}.py"
        text = ""
        if rng.random() < 0.3:  # a script that pins what it imports
            text = f'from transformers.utils.versions import require_version\nrequire_version("transformers>=4.{i}.0")\n'
        facts = ModuleFacts(path=path, module=f"m{i}", is_package=False, root="/p", imports=imports)
        facts.requirements = stated_requirements(text, path)
        modules.append(facts)
    return modules


def _by_walking_back(project: Project, module: ModuleFacts):
    """What the importers pin, found as the join found it before: walking back from the module."""
    found = []
    for path in sorted(project.importers_of(module)):
        if path != module.path:
            found.extend(project._importer_pins(path))
    return found


@pytest.mark.parametrize("seed", range(8))
def test_importers_pins_are_those_of_every_script_that_reaches_the_module(seed, monkeypatch):
    """The scripts whose pins hold for a module are found forward, from the scripts that pin
    anything, along their units; the answer is the one the walk back from each module gave
    (same pins, same order), and no module walks back to all its importers for it."""
    from precision_lint.workspace import versions

    modules = _graph(seed, 30)
    project = Project(modules)
    seen = []
    monkeypatch.setattr(versions, "any_of", lambda found: seen.append(list(found)) or found)
    walks = []
    original = Project._walk_importers
    monkeypatch.setattr(Project, "_walk_importers", lambda self, m: walks.append(m.path) or original(self, m))
    for m in project.modules:
        project._run_requirements(m)
    assert walks == []  # none walked back
    found = list(seen)
    fresh = Project(modules)
    fresh._run_requirements(modules[0])  # its launches read
    assert found == [_by_walking_back(fresh, m) for m in modules]
    assert any(found)


def test_a_readme_shared_by_many_modules_is_read_for_hardware_once(tmp_path, monkeypatch):
    """Every module of a package asks what the repository's README states: it is worked out
    once per README, not once per module (diffusers: a thousand modules under one README)."""
    (tmp_path / "setup.py").write_text("")
    (tmp_path / "README.md").write_text("Tested on 8x A100 80GB.\n")
    package = tmp_path / "pkg"
    package.mkdir()
    for i in range(20):
        (package / f"m{i}.py").write_text("")
    asked = []
    original = shipped.stated_in_text
    monkeypatch.setattr(shipped, "stated_in_text", lambda text: asked.append(text) or original(text))
    files = shipped.ShippedFiles()
    stated = {files.stated_for(str(package / f"m{i}.py")) for i in range(20)}
    assert stated == {80}
    assert len(asked) == 1
