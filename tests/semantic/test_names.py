"""Qualified names: a use resolves through the binding it sees (imports are bindings of the
scope they run in; parameters and locals shadow them; aliases are followed)."""
import pytest

from conftest import dedent, lint

from precision_lint.semantic.index import build_index


def _callees(src: str, module: str = "train"):
    ix = build_index(dedent(src), module)
    return [(site.scope.qualname, site.qualname) for site in ix.calls]


def test_an_import_inside_a_function_binds_only_there():  # A3
    src = """
        from transformers import Trainer
        def build_rl():
            from rl_toolkit import Trainer
            return Trainer(policy=p)
        Trainer(model=m, tokenizer=tok)
        """
    assert _callees(src) == [("train.build_rl", "rl_toolkit.Trainer"), ("train", "transformers.Trainer")]
    assert [d.code for d in lint(src, "MP301")] == ["MP301"]


def test_a_parameter_shadows_an_import():  # A4
    src = """
        from transformers import Trainer
        def main(Trainer, tok):
            return Trainer(tokenizer=tok)
        """
    assert _callees(src) == [("train.main", None)]
    assert lint(src, "MP301") == []


def test_module_level_imports_under_try_and_if_are_bindings():
    src = """
        try:
            from transformers import Trainer
        except ImportError:
            Trainer = None
        if USE_TRL:
            import trl as t
        Trainer(model=m, tokenizer=tok)
        t.SFTTrainer(model=m, tokenizer=tok)
        """
    assert [q for _, q in _callees(src)] == ["transformers.Trainer", "trl.SFTTrainer"]
    assert len(lint(src, "MP301")) == 2


def test_a_conditional_import_joins_files():
    ix = build_index(dedent(
        """
        try:
            from .models import load_student
        except ImportError:
            from models import load_student
        """
    ), "pkg.train")
    assert {"pkg.models", "pkg.models.load_student", "models"} <= ix.imports.imported_modules


def test_simple_aliases_are_followed_and_a_rebinding_shadows():
    src = """
        import transformers
        import my_loaders as mu
        T = transformers.Trainer
        load = mu.load_model
        T(model=m)
        load("x")
        T = make_trainer_class()
        T(model=m)
        """
    # make_trainer_class() is bound nowhere (None); the second T(...) sees the rebinding
    assert [q for _, q in _callees(src)] == ["transformers.Trainer", "my_loaders.load_model", None, None]


def test_function_bodies_see_the_module_bindings_at_its_end():
    src = """
        def train():
            return Trainer(model=m)
        from transformers import Trainer
        """
    assert _callees(src) == [("train.train", "transformers.Trainer")]


def test_module_code_sees_the_bindings_before_it():
    src = """
        from transformers import Trainer
        Trainer(model=m)
        from rl_toolkit import Trainer
        Trainer(policy=p)
        """
    assert [q for _, q in _callees(src)] == ["transformers.Trainer", "rl_toolkit.Trainer"]


@pytest.mark.parametrize("kind", ["def", "class"])
def test_a_local_definition_resolves_to_the_module(kind):
    src = f"""
        from transformers import Trainer
        {kind} Trainer{'()' if kind == 'def' else ''}:
            pass
        Trainer(tokenizer=tok)
        """
    assert _callees(src)[-1] == ("train", "train.Trainer")
    assert lint(src, "MP301") == []


def test_unconditional_imports_are_the_top_levels_own_outside_try_if_and_functions():
    import ast

    from precision_lint.semantic.names import unconditional_imports

    tree = ast.parse(
        "import os, torch._six as six\n"
        "from . import helpers\n"
        "from .util import inf\n"
        "try:\n    import apex\nexcept ImportError:\n    apex = None\n"
        "if True:\n    import fast\n"
        "def f():\n    import lazy\n"
    )
    assert unconditional_imports(tree, "pkg.train", False) == (
        "os", "torch._six", "pkg", "pkg.helpers", "pkg.util", "pkg.util.inf",
    )


@pytest.mark.parametrize("expr, expected", [
    ('getattr(torch.cuda, "is_bf16_supported", lambda: False)', "torch.cuda.is_bf16_supported"),
    ('getattr(torch, "cuda").amp', "torch.cuda.amp"),
    ('getattr(torch.cuda, name)', None),  # a name not written: not known
    ('getattr(torch.cuda, "not an identifier")', None),
])
def test_an_attribute_read_with_getattr_and_a_written_name_is_that_attribute(expr, expected):
    import ast

    from precision_lint.semantic.names import dotted

    found = dotted(ast.parse(expr, mode="eval").body)
    assert found == (None if expected is None else expected)
