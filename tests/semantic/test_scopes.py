"""Scopes: which binding a name sees. ``global`` at module level is legal and must not hang."""
import subprocess
import textwrap
import sys

from conftest import REPO, dedent, lint

from precision_lint.semantic.index import build_index


def test_module_level_global_resolves_to_the_module_binding():
    ix = build_index(dedent(
        """
        import torch
        if __name__ == "__main__":
            global dtype
            dtype = torch.float16
        """
    ))
    assert ix.root.lookup_scope("dtype") is ix.root
    assert ix.root.lookup_scope("missing") is None


def test_global_in_a_function_sees_the_module_binding_and_nothing_else():
    ix = build_index(dedent(
        """
        dtype = None
        def outer():
            dtype = 1
            def setup():
                global dtype, other
                dtype = 2
        """
    ))
    setup = ix.functions["outer.setup"]
    assert setup.lookup_scope("dtype") is ix.root
    assert setup.lookup_scope("other") is None  # global, but never bound at module level


def test_a_file_with_a_module_level_global_is_linted_to_the_end():
    # The real shape (a worker script's `if __name__ == "__main__": global model`): the run must
    # end, with the finding that is there.
    src = dedent(
        """
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
        global model
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)
        args = TrainingArguments(output_dir="o", fp16=True)
        Trainer(model=model, args=args).train()
        """
    )
    code = (
        "import sys; from precision_lint.engine import check_source;"
        "print(sorted(d.code for d in check_source(sys.stdin.read(), 'train.py')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], input=src, capture_output=True, text=True, timeout=60,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert "MP101" in done.stdout
    assert [d.code for d in lint(src, "MP101")] == ["MP101"]


UNPACKED_DTYPE = """
    import torch
    from transformers import AutoModelForCausalLM

    {target} = {value}
    model = AutoModelForCausalLM.from_pretrained("m", dtype=dtype)
"""


def test_a_dtype_unpacked_from_a_literal_tuple_is_that_element():
    # `dtype, device = torch.bfloat16, "cuda"`: dtype is the first element
    src = UNPACKED_DTYPE.format(target="dtype, device", value='torch.bfloat16, "cuda"')
    assert [(d.code, d.span.line) for d in lint(src, "MP201")] == [("MP201", 5)]


def test_the_other_elements_of_an_unpacked_tuple_are_not_the_dtype():
    # the bf16 literal is bound to another name; `dtype` is float32
    src = UNPACKED_DTYPE.format(target="amp_dtype, dtype", value="torch.bfloat16, torch.float32")
    assert lint(src, "MP201") == []
    # a starred element makes positions unknown: nothing is guessed
    src = UNPACKED_DTYPE.format(target="dtype, device", value='*dtypes, torch.bfloat16')
    assert lint(src, "MP201") == []


def test_imports_made_only_for_a_type_checker():
    """``ModuleIndex.type_checking_imports``: what a module imports only under ``if
    TYPE_CHECKING`` (alone or in an ``or``, however deeply nested), never what it also imports
    at run time or in the ``else:`` branch."""
    from precision_lint.semantic.index import build_index

    index = build_index(textwrap.dedent("""
        import typing
        from typing import TYPE_CHECKING
        from .utils import SLOW

        if TYPE_CHECKING or SLOW:
            try:
                import torch
            except ImportError:
                pass
            else:
                from .attention import Attention
                from .loaders import load
        else:
            from .loaders import load
        if typing.TYPE_CHECKING:
            import numpy
        if not TYPE_CHECKING:
            import json
    """), "pkg", is_package=True)
    assert index.type_checking_imports() == ("numpy", "pkg.attention", "pkg.attention.Attention", "torch")


def test_the_try_statements_of_a_scope_are_listed_once():
    """``ModuleIndex.tries_in``: the ``try`` statements written in a scope's code, its nested
    functions' too, walked once and kept (the tolerance questions ask them for every call)."""
    ix = build_index(dedent(
        """
        try:
            import trl
        except ImportError:
            trl = None

        def load():
            try:
                x = 1
            except Exception:
                try:
                    x = 2
                finally:
                    pass
            def inner():
                try:
                    pass
                except TypeError:
                    pass
            return x
        """
    ))
    load = ix.functions["load"]
    assert [t.lineno for t in ix.tries_in(ix.root)] == [1, 7, 15, 10]
    assert [t.lineno for t in ix.tries_in(load)] == [7, 15, 10]
    assert ix.tries_in(load) is ix.tries_in(load)
