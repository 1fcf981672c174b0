"""``a or b`` of a parameter (evaluate._boolean): what the callers pass stays symbolic for the
join, the parameter's falsy default gives the right side, and an unknown value the parameter
gets on another path stays unknown (not dropped with the symbolic one's stand-in)."""
import ast
import textwrap

from precision_lint.semantic.evaluate import Evaluator
from precision_lint.semantic.index import build_index
from precision_lint.semantic.values import DTYPE, PARAM, UNKNOWN


def _returned(body):
    index = build_index(textwrap.dedent(body))
    (ret,) = [n for n in ast.walk(index.module) if isinstance(n, ast.Return)]
    return {(v.kind, v.value if v.kind == DTYPE else None) for v in Evaluator(index).values(ret.value, index.functions["load"])}


def test_a_parameter_or_a_dtype_is_the_callers_value_or_the_dtype():
    found = _returned("""
        import torch
        def load(dtype=None):
            return dtype or torch.float16
    """)
    assert found == {(PARAM, None), (DTYPE, "float16")}


def test_an_unknown_value_the_parameter_gets_on_another_path_stays_unknown():
    found = _returned("""
        import os, torch
        def load(dtype=None):
            if os.environ.get("DT"):
                dtype = getattr(torch, os.environ["DT"])
            return dtype or torch.float16
    """)
    assert found == {(PARAM, None), (DTYPE, "float16"), (UNKNOWN, None)}
