"""Module-level variables summarised for other files (Evaluator.module_variables), and what an
imported name evaluates to before the join: a ``bound`` ReturnRef of a project module's name,
unknown for a library's."""
import ast
import textwrap

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
        TABLE = {"fp16": torch.float16}
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
