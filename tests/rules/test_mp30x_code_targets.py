"""What the code itself targets, for MP302/MP304: the class a receiver holds (a dict of Auto
classes, a `self.` attribute, a parameter its callers fill), and the versions a module runs
under when its importers import it only under a version test. Every shape has its negative."""
from conftest import write_tree

from precision_lint.workspace.config import from_table
from precision_lint.engine import Engine


def run(root, codes=("MP302", "MP304")):
    cfg = from_table({}, "defaults")  # nothing configured: the files' projects say
    found = Engine(cfg, list(codes), jobs=1).run_paths([str(root)]).diagnostics
    return sorted(found, key=lambda d: (d.path, d.span.start))


def lines(found):
    return [(d.path.rsplit("/", 1)[-1], d.span.line, d.code) for d in found]


# --- the class a receiver holds ---------------------------------------------------------------
KINDS = """\
import torch
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification

KINDS = {"lm": AutoModelForCausalLM, "scorer": AutoModelForSequenceClassification}
"""


def test_a_class_taken_from_a_dict_of_auto_classes(tmp_path):
    src = KINDS + """\

def by_literal(path):
    cls = KINDS["lm"]
    return cls.from_pretrained(path, torch_dtype=torch.float32)


def by_any_key(path, kind):
    return KINDS[kind].from_pretrained(path, load_in_8bit=True)
"""
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers>=4.56\n", "load.py": src})
    found = run(root)
    assert lines(found) == [("load.py", 8, "MP304"), ("load.py", 12, "MP304")]
    assert "`cls.from_pretrained` (`AutoModelForCausalLM`)" in found[0].message
    assert found[0].fix is not None  # dtype= exists in every allowed version
    assert "(`AutoModelForCausalLM` or `AutoModelForSequenceClassification`)" in found[1].message
    assert "load_in_8bit" in found[1].message and "5.0" in found[1].message


def test_a_class_taken_from_a_table_of_tables(tmp_path):
    """Held-out 39u's M2: ``MODEL_CLASSES[model_type]["model"].from_pretrained(...)`` with the model
    type not known here: the ``"model"`` entry of any of the table's dicts; a key a dict lacks
    gives nothing of it, and a table whose values are not all dicts gives nothing."""
    src = """\
from transformers import AutoModelForCausalLM, T5ForConditionalGeneration

MODEL_CLASSES = {
    "llama": {"model": AutoModelForCausalLM, "peft": True},
    "t5": {"model": T5ForConditionalGeneration},
}
MIXED = {"llama": {"model": AutoModelForCausalLM}, "other": object}


def load(model_type, path):
    return MODEL_CLASSES[model_type]["model"].from_pretrained(path, load_in_8bit=True)


def load_mixed(model_type, path):
    return MIXED[model_type]["model"].from_pretrained(path, load_in_8bit=True)
"""
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers>=5\n", "load.py": src})
    found = run(root)
    assert lines(found) == [("load.py", 11, "MP302")]
    assert "(`AutoModelForCausalLM` or `T5ForConditionalGeneration`)" in found[0].message


def test_a_class_kept_on_self_and_passed_to_a_helper(tmp_path):
    src = KINDS + """\

class Wrapper:
    def __init__(self, kind, path):
        self.model_cls = KINDS[kind]
        self.net = self._load(path, self.model_cls)
        self.twin = self.model_cls.from_pretrained(path, torch_dtype=torch.bfloat16)

    def _load(self, path, model_cls):
        return model_cls.from_pretrained(path, torch_dtype=torch.bfloat16)


Wrapper("lm", "org/m")
"""
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers>=4.56\n", "wrap.py": src})
    found = run(root)
    assert lines(found) == [("wrap.py", 10, "MP304"), ("wrap.py", 13, "MP304")]
    assert "`self.model_cls.from_pretrained`" in found[0].message
    assert "`model_cls.from_pretrained`" in found[1].message


def test_a_parameter_its_callers_in_another_file_fill_with_a_class(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "requirements.txt": "transformers>=4.56,<5\n",  # 4.57 warns for "auto" (5.x is silent)
        "loader.py": "def load(model_cls, path):\n    return model_cls.from_pretrained(path, torch_dtype='auto')\n",
        "train.py": "from transformers import AutoModelForCausalLM\nfrom loader import load\nm = load(AutoModelForCausalLM, 'org/m')\n",
    })
    assert lines(run(root)) == [("loader.py", 2, "MP304")]


def test_a_class_the_row_does_not_cover_keeps_the_call_silent(tmp_path):
    # every class the receiver may hold must be one the row is about: a tokenizer, a project
    # class with its own from_pretrained, or a diffusers model may be the one that runs
    src = """\
import torch
from diffusers import UNet2DConditionModel
from transformers import AutoModelForCausalLM, AutoTokenizer


class Local:
    @classmethod
    def from_pretrained(cls, path, torch_dtype=None):
        return cls()


MIXED = {"lm": AutoModelForCausalLM, "tok": AutoTokenizer}
OURS = {"a": Local}
OTHER = {"unet": UNet2DConditionModel}


def load(kind, path):
    MIXED[kind].from_pretrained(path, torch_dtype=torch.float16)
    OURS[kind].from_pretrained(path, torch_dtype=torch.float16)
    return OTHER[kind].from_pretrained(path, torch_dtype=torch.float16)
"""
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers>=4.56\n", "load.py": src})
    assert run(root) == []


def test_a_parameter_nobody_is_seen_to_fill_or_an_unknown_receiver_is_silent(tmp_path):
    src = """\
import torch


def load(model_cls, path):
    return model_cls.from_pretrained(path, torch_dtype=torch.float16)


def pick(registry, name, path):
    cls = registry.get(name)
    return cls.from_pretrained(path, torch_dtype=torch.float16)
"""
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers>=4.56\n", "load.py": src})
    assert run(root) == []


# --- a module imported only under a version test ------------------------------------------------
LEGACY = """\
from transformers import Trainer


class OldTrainer(Trainer):
    def reconfigure(self):
        from transformers.deepspeed import HfTrainerDeepSpeedConfig
        return HfTrainerDeepSpeedConfig(self.args.deepspeed)
"""
HELPER = """\
from importlib import metadata
from packaging.version import Version


def at_least(name, wanted):
    try:
        if Version(metadata.version(name)) < Version(wanted):
            return False
    except metadata.PackageNotFoundError:
        return False
    return True
"""


def _gated(tmp_path, registry, **more):
    return write_tree(tmp_path, {
        ".git/HEAD": "",
        "requirements.txt": "transformers>=4.31.0\n",
        "pkg/__init__.py": "",
        "pkg/vers.py": HELPER,
        "pkg/legacy.py": LEGACY,
        "pkg/registry.py": registry,
        **more,
    })


def test_a_module_imported_only_under_a_project_helpers_version_test_runs_below_it(tmp_path):
    root = _gated(tmp_path, 'from pkg.vers import at_least\n\nif not at_least("transformers", "4.35.0"):\n    from pkg.legacy import OldTrainer\n')
    (d,) = run(root)
    # removed in 4.46, which the gate never reaches: only 4.33's deprecation is left
    assert "was removed" not in d.message and "deprecated since transformers 4.33" in d.message
    assert "transformers<4.35.0 where registry.py imports it" in d.message


def test_a_library_version_test_in_the_importer_narrows_too(tmp_path):
    registry = (
        "import transformers\nfrom packaging import version\n\n"
        'if version.parse(transformers.__version__) < version.parse("4.33"):\n    from pkg.legacy import OldTrainer\n'
    )
    assert run(_gated(tmp_path, registry)) == []  # 4.31 and 4.32: nothing deprecated yet (4.33 warns)


def test_one_importer_without_a_test_keeps_the_whole_range(tmp_path):
    gated = 'from pkg.vers import at_least\n\nif not at_least("transformers", "4.35.0"):\n    from pkg.legacy import OldTrainer\n'
    root = _gated(tmp_path, gated, **{"pkg/cli.py": "from pkg.legacy import OldTrainer\n"})
    (d,) = run(root)
    assert "was removed in transformers 4.46" in d.message


def test_an_import_with_no_version_test_or_a_test_of_something_else_keeps_the_range(tmp_path):
    registry = (
        "import torch\nversion = '2'\n\n"
        "if version == '2' and torch.cuda.is_available():\n    from pkg.legacy import OldTrainer\n"
    )
    (d,) = run(_gated(tmp_path, registry))
    assert "was removed in transformers 4.46" in d.message


# --- a version branch in the file: by what it compares, not by the word --------------------------
def test_a_variable_named_version_is_no_version_branch(tmp_path):
    src = """\
from transformers import TrainingArguments

version = "v2"
if version == "v2":
    args = TrainingArguments("out", evaluation_strategy="steps")
"""
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers>=4.51\n", "train.py": src})
    (d,) = run(root)
    assert d.code == "MP302" or "removed" in d.message


def test_a_branch_on_another_modules_version_helper_is_compatibility_code(tmp_path):
    src = """\
from transformers import TrainingArguments
from pkg.vers import at_least

if at_least("transformers", "4.41"):
    args = TrainingArguments("out", eval_strategy="steps")
else:
    args = TrainingArguments("out", evaluation_strategy="steps")
"""
    root = write_tree(tmp_path, {
        ".git/HEAD": "", "requirements.txt": "transformers>=4.51\n",
        "pkg/__init__.py": "", "pkg/vers.py": HELPER, "train.py": src,
    })
    assert run(root) == []
    plain = src.replace('at_least("transformers", "4.41")', 'flag("transformers", "4.41")').replace(
        "from pkg.vers import at_least", "from pkg.vers import flag")
    other = write_tree(tmp_path / "other", {
        ".git/HEAD": "", "requirements.txt": "transformers>=4.51\n", "pkg/__init__.py": "",
        "pkg/vers.py": "def flag(name, wanted):\n    return name == wanted\n", "train.py": plain,
    })
    assert len(run(other)) == 1  # a helper that tests no version is no version branch


def test_a_class_from_a_table_keyed_by_a_parameter_passed_by_keyword_from_another_method(tmp_path):
    src = KINDS + """\

class Mixin:
    def __init__(self, model_args):
        self.model_cls = KINDS[model_args.kind]

    def activate(self):
        self._load(path="org/m", model_cls=self.model_cls)

    def _load(self, path, model_cls):
        return model_cls.from_pretrained(path, torch_dtype=torch.bfloat16)
"""
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers>=4.56\n", "mixin.py": src})
    assert lines(run(root)) == [("mixin.py", 14, "MP304")]


def test_each_import_edge_is_judged_once_however_many_chains_reach_it(tmp_path, monkeypatch):
    """Scripts that import a package along many chains (each layer's two modules import both of
    the layer below): 2**12 chains lead to the gated module, but each edge is asked once."""
    from precision_lint.project.model import Project

    layers = 12
    files = {}
    for i in range(layers):
        below = [f"pkg.l{i + 1}a", f"pkg.l{i + 1}b"] if i + 1 < layers else ["pkg.registry"]
        for side in "ab":
            files[f"pkg/l{i}{side}.py"] = "".join(f"import {name}\n" for name in below)
    files["train.py"] = "import pkg.l0a\nimport pkg.l0b\n"
    gated = 'from pkg.vers import at_least\n\nif not at_least("transformers", "4.35.0"):\n    from pkg.legacy import OldTrainer\n'
    root = _gated(tmp_path, gated, **files)
    asked = []
    original = Project._gate_in
    monkeypatch.setattr(Project, "_gate_in", lambda self, *a: asked.append(a) or original(self, *a))
    (d,) = run(root)
    assert "transformers<4.35.0 where registry.py imports it" in d.message
    edges = 4 * (layers - 1) + 2 + 2 + 1  # layer to layer, the last layer to registry, train.py, registry to legacy
    per_library = [a for a in asked if a[2] == "transformers"]
    assert 0 < len(per_library) <= edges, len(per_library)
