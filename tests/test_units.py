"""Units across files: which modules an import joins, and the unit of a named file found on disk.

`precision-lint train.py` (what pre-commit and editors run) must see the same cross-file
conflicts as `precision-lint .`; an import never joins a same-named module of an unrelated
folder; and the join is computed once, not once per module.
"""
import random

import pytest

from conftest import config, write_tree
from precision_lint.workspace.discovery import ImportRoots, module_name
from precision_lint.engine import Engine
from precision_lint.facts.extract import extract_facts
from precision_lint.facts.model import ModuleFacts
from precision_lint.project.model import Project

MODELS = """
import torch
from transformers import AutoModelForCausalLM

def load_model(name):
    return AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.float16)
"""
TRAIN = """
from transformers import Trainer, TrainingArguments
from models import load_model

model = load_model("m")
args = TrainingArguments(output_dir="o", fp16=True)
Trainer(model=model, args=args).train()
"""


def _git_project(root, files):
    write_tree(root, files)
    (root / ".git").mkdir()  # the project root, as a repository marks it
    return root


# --- which module an import joins ----------------------------------------------------------
def _facts(root, rel):
    path = str(root / rel)
    text = (root / rel).read_text()
    return extract_facts(text, path, *module_name(path))


def _project(root, rels, src=()):
    roots = ImportRoots(src)
    facts = [_facts(root, r) for r in rels]
    return Project(facts, lambda m: roots(m.path, m.root)), {r: f for r, f in zip(rels, facts)}


def test_imports_never_join_a_same_named_module_of_an_unrelated_folder(tmp_path):
    root = _git_project(
        tmp_path / "proj",
        {
            "exp1/utils.py": MODELS,
            "exp1/helpers.py": MODELS,
            "exp1/train.py": TRAIN.replace("from models import", "from utils import"),
            "exp2/utils.py": "def load_model(name):\n    return name\n",
            "exp2/train.py": TRAIN.replace("from models import", "from helpers import"),
            "exp3/train.py": TRAIN.replace("from models import", "from utils import"),
        },
    )
    rels = ["exp1/utils.py", "exp1/helpers.py", "exp1/train.py", "exp2/utils.py", "exp2/train.py", "exp3/train.py"]
    for order in (rels, list(reversed(rels))):
        project, f = _project(root, order)
        assert project.module_named("utils", f["exp1/train.py"]) is f["exp1/utils.py"]
        assert project.module_named("utils", f["exp3/train.py"]) is None  # exp1 and exp2 are not its folders
        assert project.module_named("helpers", f["exp2/train.py"]) is None  # only exp1 has one
        assert project.module_named("utils") is None  # a name means nothing without the importing module
        assert [m.path for m in project.imported_modules(f["exp2/train.py"])] == []
    engine = Engine(config(), ["MP101"])
    diags = engine.run_paths([str(root)]).diagnostics
    assert sorted((d.path.split("proj/", 1)[1], d.related[0].path.split("proj/", 1)[1]) for d in diags) == [
        ("exp1/utils.py", "exp1/train.py")
    ]


def test_imports_resolve_in_the_project_root_and_its_src_folders(tmp_path):
    root = write_tree(
        tmp_path / "proj",
        {
            "pyproject.toml": '[tool.precision-lint]\nsrc = ["lib"]\n',
            "src/mypkg/__init__.py": "",
            "src/mypkg/models.py": MODELS,
            "lib/vendored.py": MODELS,
            "shared.py": MODELS,
            "scripts/a.py": "from mypkg.models import load_model\n",
            "scripts/b.py": "import vendored\n",
            "scripts/c.py": "import shared\n",
            "scripts/shared.py": "x = 1\n",
        },
    )
    rels = ["src/mypkg/__init__.py", "src/mypkg/models.py", "lib/vendored.py", "shared.py",
            "scripts/a.py", "scripts/b.py", "scripts/c.py", "scripts/shared.py"]
    project, f = _project(root, rels, src=[root / "lib"])
    assert project.module_named("mypkg.models", f["scripts/a.py"]) is f["src/mypkg/models.py"]
    assert project.module_named("vendored", f["scripts/b.py"]) is f["lib/vendored.py"]
    # the importing file's own folder comes first, as on sys.path
    assert project.module_named("shared", f["scripts/c.py"]) is f["scripts/shared.py"]
    assert project.module_named("shared", f["src/mypkg/models.py"]) is f["shared.py"]
    # without the configured src folder, lib/ is not searched
    project, f = _project(root, rels)
    assert project.module_named("vendored", f["scripts/b.py"]) is None
    # the configuration's `src` reaches the engine
    from precision_lint.workspace.config import load

    cfg = load(None, [str(root)])
    assert ImportRoots(cfg.src)(str(root / "scripts" / "b.py"), str(root / "scripts"))[-1] == str(root / "lib")


def test_a_package_wins_over_a_module_of_the_same_name(tmp_path):
    root = _git_project(tmp_path / "p", {"m.py": "", "m/__init__.py": "", "t.py": "import m\n"})
    for order in (["m.py", "m/__init__.py", "t.py"], ["t.py", "m/__init__.py", "m.py"]):
        project, f = _project(root, order)
        assert project.module_named("m", f["t.py"]) is f["m/__init__.py"]


def test_a_namespace_package_finds_its_modules_by_their_dotted_names(tmp_path):
    # folders without __init__.py (PEP 420): a plain dotted name finds `a/b.py` before
    # `a/b/__init__.py`, and `a.b.__init__` is the package's own file; a folder whose name
    # is no identifier (`my-dir`) is found by no plain name
    root = _git_project(
        tmp_path / "p",
        {
            "comp/arg.py": "", "comp/both.py": "", "comp/both/__init__.py": "", "comp/sub/__init__.py": "",
            "comp/deep/er/mod.py": "", "my-dir/x.py": "", "comp/y.txt": "", "t.py": "import comp.arg\n",
        },
    )
    rels = ["comp/arg.py", "comp/both.py", "comp/both/__init__.py", "comp/sub/__init__.py",
            "comp/deep/er/mod.py", "my-dir/x.py", "t.py"]
    for order in (rels, list(reversed(rels))):
        project, f = _project(root, order)
        t = f["t.py"]
        assert project.module_named("comp.arg", t) is f["comp/arg.py"]
        assert project.module_named("comp.both", t) is f["comp/both.py"]
        assert project.module_named("comp.both.__init__", t) is f["comp/both/__init__.py"]
        assert project.module_named("comp.sub", t) is f["comp/sub/__init__.py"]
        assert project.module_named("comp.deep.er.mod", t) is f["comp/deep/er/mod.py"]
        assert project.module_named("comp.deep.er", t) is None  # a folder of no file of its own
        assert project.module_named("comp.missing", t) is None
        assert project.module_named("torch.nn", t) is None
        assert project.module_named("my-dir.x", t) is f["my-dir/x.py"]  # no identifier: joined as a path
        arg = f["comp/arg.py"]  # named `arg` (its folder has no __init__.py)
        assert project.symbols.resolve("comp.arg.f", t) == (arg, f"{arg.module}.f")


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


def test_units_containing_walks_back_without_computing_units(monkeypatch):
    modules = _synthetic(200, 7)
    project = Project(modules)
    expected = {
        m.path: [m.path, *(e.path for e in modules if e.path != m.path and m.path in project.unit(e))] for m in modules
    }
    calls = []
    original = Project.unit

    def counting(self, module):
        calls.append(module.path)
        return original(self, module)

    monkeypatch.setattr(Project, "unit", counting)
    fresh = Project(modules)
    for m in modules:
        assert [e.path for e in fresh.units_containing(m)] == expected[m.path]
    assert calls == []  # no module's unit: linear in the modules that import it, not n * n