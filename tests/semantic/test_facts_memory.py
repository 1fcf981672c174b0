"""What the facts of a large tree cost to hold (#23): equal parts are one object where nothing
can tell them apart, and the project's per-unit answers are compact."""
import pickle

from conftest import dedent

from precision_lint.engine import extract_facts
from precision_lint.facts.model import ModuleFacts
from precision_lint.project.model import Project
from precision_lint.semantic.values import PARAM

HELPER = dedent(
    """
    import torch
    from torch import nn

    def load(name, dtype):
        return build(name, dtype), build(name, dtype), cast(dtype)

    def build(name, dtype):
        return torch.zeros(2, dtype=dtype)

    def cast(dtype):
        return dtype

    class Head(nn.Module):
        def forward(self, x):
            return x
    """
)


def _facts(text: str, module: str) -> ModuleFacts:
    return extract_facts(text, f"pkg/{module}.py", f"pkg.{module}", False, ".")


def test_a_parameter_passed_on_is_one_value_in_its_module():
    facts = _facts(HELPER, "helper")
    passed = [v for call in facts.calls for arg in call.args for v in arg.values if v.kind == PARAM]
    # each argument: the value where it is written, and the tensor it may be (placed nowhere)
    dtypes = [v for v in passed if v.value.name == "dtype" and v.origin is None]
    assert len(dtypes) == 3 and dtypes[0] is dtypes[1] is dtypes[2]  # build twice, cast once
    refs = {id(v.value) for v in passed if v.value.name == "dtype"}
    assert len(refs) == 1 and dtypes[0].value.function == "pkg.helper.load"


def test_names_are_one_object_across_the_modules_a_process_unpickles():
    one = pickle.loads(pickle.dumps(_facts(HELPER, "a")))
    other = pickle.loads(pickle.dumps(_facts(HELPER, "b")))
    assert one.imports == other.imports and all(a is b for a, b in zip(one.imports, other.imports))
    base = [c for c in one.classes if c.qualname.endswith("Head")][0].bases
    assert base == [c for c in other.classes if c.qualname.endswith("Head")][0].bases == ("torch.nn.Module",)
    assert base[0] is [c for c in other.classes if c.qualname.endswith("Head")][0].bases[0]
    callees = {b for _, b in one.call_edges}
    assert any(b is c for _, b in other.call_edges for c in callees)
    assert set(one.sections) == set(other.sections) and all(
        a is b for a in one.sections for b in other.sections if a == b
    )
    assert one == pickle.loads(pickle.dumps(one))  # the facts themselves are unchanged


def test_a_unit_is_the_same_set_of_paths_kept_as_bits():
    texts = {
        "main": "import pkg.a\n",
        "a": "import pkg.b\n",
        "b": "import pkg.a\nimport pkg.c\n",
        "c": "x = 1\n",
        "other": "import pkg.c\n",
    }
    modules = [_facts(text, name) for name, text in texts.items()]
    project = Project(modules)
    by_name = {m.module.rpartition(".")[2]: m for m in modules}
    assert project.unit(by_name["main"]) == {f"pkg/{n}.py" for n in ("main", "a", "b", "c")}
    assert project.unit(by_name["c"]) == {"pkg/c.py"}
    assert project.in_unit(by_name["other"], "pkg/c.py") and not project.in_unit(by_name["other"], "pkg/a.py")
    assert not project.in_unit(by_name["main"], "pkg/elsewhere.py")
    assert [m.path for m in project.entries_among(by_name["c"], modules)] == [
        "pkg/main.py", "pkg/a.py", "pkg/b.py", "pkg/c.py", "pkg/other.py"
    ]
    assert project.importers_of(by_name["a"]) == {"pkg/main.py", "pkg/b.py", "pkg/a.py"}
