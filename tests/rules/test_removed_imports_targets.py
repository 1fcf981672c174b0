"""The torch a module targets ends before the release that removed a module it must import
(``project/removed_imports.py``): a helper that imports ``torch._six`` at its top level, outside
any ``try`` or ``if``, runs only on torch below 2.0, and so does every script that imports the
helper the same way. There ``torch.cuda.amp`` warns about nothing (MP303 is silent), and its
fix would write ``torch.amp.GradScaler``, which that torch lacks. Every shape has its negative."""
import pytest

from conftest import write_tree

from precision_lint.workspace.config import from_table
from precision_lint.engine import Engine
from precision_lint.facts.model import ModuleFacts
from precision_lint.knowledge import removed_modules
from precision_lint.project.removed_imports import removal_ceilings

SIX = "from torch._six import inf\n"
HELPERS = """\
import torch
{six}

def worst(values):
    return max(values) if values else -inf
"""
TRAIN = """\
import torch
{imports}

def fit(model, batches, optimizer):
    scaler = torch.cuda.amp.GradScaler()
    for x in batches:
        with torch.cuda.amp.autocast():
            loss = model(x)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
"""


def run(root):
    cfg = from_table({}, "defaults")  # nothing configured: the files' projects say
    found = Engine(cfg, ["MP303"], jobs=1).run_paths([str(root)]).diagnostics
    return sorted((d.path.rsplit("/", 1)[-1], d.span.line) for d in found)


def project(tmp_path, six=SIX, imports="import helpers", requirements=None):
    files = {".git/HEAD": "", "helpers.py": HELPERS.format(six=six), "train.py": TRAIN.format(imports=imports)}
    if requirements is not None:
        files["requirements.txt"] = requirements
    return write_tree(tmp_path, files)


def test_a_script_importing_a_helper_that_imports_torch_six_targets_torch_below_2(tmp_path):
    assert run(project(tmp_path)) == []


def test_without_the_removed_import_the_newest_torch_warns(tmp_path):
    assert run(project(tmp_path, six="from math import inf")) == [("train.py", 5), ("train.py", 7)]


def test_an_import_under_try_is_compatibility_code_not_a_statement(tmp_path):
    six = "try:\n    from torch._six import inf\nexcept ImportError:\n    from math import inf"
    assert len(run(project(tmp_path, six=six))) == 2


def test_a_helper_imported_inside_a_function_or_under_if_does_not_end_the_scripts_torch(tmp_path):
    assert len(run(project(tmp_path, imports="import sys\nif sys.argv[1:]:\n    import helpers"))) == 2


def test_a_stated_range_is_cut_at_the_removal(tmp_path):
    assert run(project(tmp_path, requirements="torch>=1.7\n")) == []


def test_pins_that_leave_nothing_below_the_removal_stay_what_is_installed(tmp_path):
    assert len(run(project(tmp_path, requirements="torch>=2.4\n"))) == 2


def test_the_chain_of_unconditional_imports_is_followed_and_cycles_end():
    a = ModuleFacts("a.py", "a", top_imports=("b",))
    b = ModuleFacts("b.py", "b", top_imports=("c", "a"))
    c = ModuleFacts("c.py", "c", top_imports=("torch._six", "torch._six.inf", "b"))
    other = ModuleFacts("other.py", "other", top_imports=("a_missing",))
    modules = [a, b, c, other]
    named = {m.module: m for m in modules}
    ends = removal_ceilings(modules, lambda name, near: named.get(name))
    assert set(ends) == {"a.py", "b.py", "c.py"}
    row, where = ends["a.py"]["torch"]
    assert (row.module, row.removed_in) == ("torch._six", (2, 0)) and where == "`torch._six`, imported by c.py"


def test_nothing_is_worked_out_where_no_module_imports_a_removed_one():
    calls = []
    modules = [ModuleFacts("a.py", "a", top_imports=("b",))]
    assert removal_ceilings(modules, lambda name, near: calls.append(name)) == {}
    assert calls == []


def test_every_removed_import_of_the_table_is_gone_from_the_installed_library():
    """Neither ``import module.name`` nor ``from module import name`` works on the installed
    libraries, which are at or past each removal."""
    import importlib.metadata

    from precision_lint.workspace.versions import compare, read_version

    assert {row.dist for row in removed_modules().values()} >= {"torch", "transformers"}
    for name, row in removed_modules().items():
        assert compare(read_version(importlib.metadata.version(row.dist)), row.removed_in) >= 0, name
        if "*" in name:  # a pattern: nothing of the library's top level matches it
            parent, _, pattern = name.rpartition(".")
            import fnmatch
            assert not fnmatch.filter(dir(importlib.import_module(parent)), pattern), name
            continue
        assert not _importable(name), name


def _importable(name: str) -> bool:
    import importlib

    try:
        importlib.import_module(name)
        return True
    except ImportError:
        pass
    parent, _, last = name.rpartition(".")
    try:
        return hasattr(importlib.import_module(parent), last)
    except ImportError:
        return False


FLASH = "from transformers.utils import is_flash_attn_available\n"


def test_a_name_transformers_removed_ends_the_versions_of_what_imports_it(tmp_path):
    """``is_flash_attn_available`` left transformers in 4.39: a module that imports it at its top
    level, and a script that imports that module, run on 4.38 at most; a deprecation of 4.56
    (``torch_dtype=``) is not reached there. Guarded (``try``), the import says nothing."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["transformers>=4.34"]\n')
    (tmp_path / "model.py").write_text(FLASH + "import torch\nfrom transformers import AutoModelForCausalLM\n\n\ndef load(p):\n    return AutoModelForCausalLM.from_pretrained(p, torch_dtype=torch.float16)\n")
    (tmp_path / "serve.py").write_text("from model import load\n\nload('x')\n")
    assert _codes(tmp_path) == []
    (tmp_path / "model.py").write_text("try:\n    " + FLASH + "except ImportError:\n    pass\n" + (tmp_path / "model.py").read_text().split("\n", 1)[1])
    assert "MP304" in _codes(tmp_path)


def _codes(root):
    engine = Engine(from_table({}, "defaults"), jobs=1)
    return sorted(d.code for d in engine.run_paths([str(root)]).diagnostics)


RUNNER = """\
from transformers.trainer import {names}
from transformers.deepspeed import HfDeepSpeedConfig


def make(ds_config):
    return HfDeepSpeedConfig(ds_config), get_parameter_names
"""
ENV = "name: vlm\ndependencies:\n  - python=3.10\n  - pip:\n      - transformers==4.31.0\n"
PYPROJECT = '[project]\nname = "vlm"\nversion = "0.1"\ndependencies = ["transformers==4.37.2"]\n'


def test_a_removed_trainer_name_keeps_two_pins_to_the_one_it_imports_on(tmp_path):
    """LLaVA's trainer imports ``ShardedDDPOption``, gone from transformers 4.35: of the two pins
    (4.31.0 in the conda environment its README installs, 4.37.2 in an inherited pyproject) it
    runs on 4.31.0 only, where ``transformers.deepspeed`` warns of nothing (deprecated in 4.34);
    without that import, 4.37.2 is a version it runs on, and the deprecation is reported."""
    def found(names):
        root = write_tree(tmp_path / names.split(",")[0], {
            ".git/HEAD": "", "vlm_pref.yaml": ENV, "pyproject.toml": PYPROJECT,
            "pkg/runner.py": RUNNER.format(names=names),
        })
        cfg = from_table({}, "defaults")
        return [d.code for d in Engine(cfg, ["MP304"], jobs=1).run_paths([str(root)]).diagnostics]

    assert found("ShardedDDPOption, get_parameter_names") == []
    assert found("get_parameter_names") == ["MP304"]


@pytest.mark.parametrize("imported, found", [
    ("from transformers import FlaxAutoModelForSeq2SeqLM", []),  # transformers 5 has no Flax
    ("from transformers import TFAutoModel", ["MP304"]),  # nor TensorFlow (the table's row reports this import)
    ("from transformers import AutoModelForSeq2SeqLM", ["MP304"]),  # removed in 5.0, which the range allows
])
def test_flax_or_tensorflow_code_runs_on_transformers_4(tmp_path, imported, found):
    """A script that imports transformers' Flax or TensorFlow classes at its top level cannot run
    on transformers 5 (``ImportError``), so what 5.0 removed (``overwrite_output_dir``) is no
    finding there (the regression corpus: distil-whisper's Flax launchers)."""
    (tmp_path / "requirements.txt").write_text("transformers>=4.34\n")
    (tmp_path / "train.py").write_text(f"{imported}\nfrom transformers import TrainingArguments\n"
                                       "args = TrainingArguments('out', overwrite_output_dir=True)\n")
    assert _codes(tmp_path) == found
