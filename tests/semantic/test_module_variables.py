"""Module-level variables summarised for other files (Evaluator.module_variables), and what an
imported name evaluates to before the join: a ``bound`` ReturnRef of a project module's name,
unknown for a library's."""
import ast
import textwrap

import pytest
from conftest import findings_in, write_tree

from precision_lint.semantic.evaluate import Evaluator
from precision_lint.semantic.index import build_index
from precision_lint.semantic.values import CONFIG, CONST, DTYPE, RETURN, UNKNOWN


def _variables(source, module="configs.train"):
    index = build_index(textwrap.dedent(source), module_name=module)
    return {name: {(v.kind, v.value if v.kind in (CONST, DTYPE) else None) for v in values} for name, values in Evaluator(index).module_variables()}


def test_literals_dtypes_and_loaded_tables_are_summarised():
    found = _variables("""
        import torch, yaml
        MODEL_DTYPE = torch.bfloat16
        USE_FP16 = False
        NEG_INF = -1e9
        CFG = yaml.safe_load(open("c.yaml"))
    """)
    assert found["configs.train.MODEL_DTYPE"] == {(DTYPE, "bfloat16")}
    assert found["configs.train.USE_FP16"] == {(CONST, False)}
    assert found["configs.train.NEG_INF"] == {(CONST, -1e9)}
    assert found["configs.train.CFG"] == {(CONFIG, None)}


def test_a_small_choice_table_is_summarised_by_its_entries():
    """``DTYPES = {"bf16": torch.bfloat16, ...}``: each entry, as ``DTYPES[args.dtype]`` in
    another module reads it (held-out 27); a table of other keys or values is a registry."""
    found = _variables("""
        import torch
        DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
        LOADERS = {"a": load_a(), "b": load_b()}
    """)
    assert found == {"configs.train.DTYPES.bf16": {(DTYPE, "bfloat16")}, "configs.train.DTYPES.fp16": {(DTYPE, "float16")}}


def test_imports_definitions_loops_tables_and_unknowns_are_not():
    found = _variables("""
        import torch
        from torch import float16
        def load():
            return torch.float16
        class Config:
            pass
        for i in range(3):
            pass
        REGISTRY = {"a-b": torch.float16}
        HOME = input()
        logger = get_logger(__name__)
    """)
    assert found == {}


def test_a_variable_bound_twice_holds_both_values():
    found = _variables("""
        import torch, os
        DTYPE = torch.float32
        if os.environ.get("HALF"):
            DTYPE = torch.float16
    """)
    assert {v for k, v in found["configs.train.DTYPE"]} == {"float32", "float16"}


def _value_of(source, expression):
    index = build_index(textwrap.dedent(source) + f"\nresult = {expression}\n")
    (assign,) = [n for n in index.module.body if isinstance(n, ast.Assign) and n.targets[0].id == "result"]
    return Evaluator(index).values(assign.value, index.root)


def test_a_project_modules_name_is_read_at_the_join():
    (v,) = _value_of("from configs.train import MODEL_DTYPE", "MODEL_DTYPE")
    assert v.kind == RETURN and v.value.bound and v.value.callee == "configs.train.MODEL_DTYPE"
    (v,) = _value_of("from configs import train", "train.MODEL_DTYPE")
    assert v.kind == RETURN and v.value.bound and (v.value.callee, v.value.keys) == ("configs.train", ("MODEL_DTYPE",))


def test_a_librarys_name_stays_unknown():
    assert [v.kind for v in _value_of("from transformers import logging", "logging")] == [UNKNOWN]


TABLE_TRAIN = """
import argparse
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
from utils import DTYPES

p = argparse.ArgumentParser()
p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
args = p.parse_args()
model = AutoModelForCausalLM.from_pretrained("m").to(DTYPES[args.dtype])
Trainer(model=model, args=TrainingArguments("out", fp16=args.dtype == "fp16")).train()
"""
TABLE = """
import torch

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
"""


@pytest.mark.parametrize(
    "package",
    [
        {"utils/__init__.py": TABLE},
        {"utils/__init__.py": "from .helpers import *\n", "utils/helpers.py": TABLE},  # re-exported
    ],
    ids=["in-the-package", "star-re-export"],
)
def test_a_dtype_table_of_another_module_is_read_by_its_keys(tmp_path, package):
    """Held-out 27 (peft-da-llms): ``--torch_dtype fp16`` picks float16 from a table in the
    project's ``utils`` package, and the same flag sets ``fp16=``: the unscale raises."""
    write_tree(tmp_path, {".git/HEAD": "", "train.py": TABLE_TRAIN, **package})
    found = [d for d in findings_in(tmp_path) if d.code == "MP101"]
    assert [d.path.rsplit("/", 1)[-1] for d in found] == ["train.py"]


ALIAS_TRAIN = """
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
from utils import DTYPE

model = AutoModelForCausalLM.from_pretrained("m", dtype=DTYPE)
Trainer(model=model, args=TrainingArguments("out", fp16=True)).train()
"""


@pytest.mark.parametrize(
    "package, fires",
    [
        ({"utils/__init__.py": "import torch\nDTYPE = torch.float16\n"}, True),
        ({"utils/__init__.py": "from .helpers import *\n", "utils/helpers.py": "import torch\nDTYPE = torch.float16\n"}, True),
        # the starred module binds no DTYPE: the import fails, and nothing is claimed of it
        ({"utils/__init__.py": "from .helpers import *\n", "utils/helpers.py": "import torch\nOTHER = torch.float16\n"}, False),
    ],
    ids=["in-the-package", "star-re-export", "star-re-export-binds-no-such-name"],
)
def test_a_variable_naming_a_librarys_dtype_is_read_through_a_starred_re_export(tmp_path, package, fires):
    """``DTYPE = torch.float16`` in the starred module is the library's name: a name
    ``from .helpers import *`` binds is resolved as that module resolves it, a library's too."""
    write_tree(tmp_path, {".git/HEAD": "", "train.py": ALIAS_TRAIN, **package})
    found = [d.path.rsplit("/", 1)[-1] for d in findings_in(tmp_path) if d.code == "MP101"]
    assert found == (["train.py"] if fires else [])
