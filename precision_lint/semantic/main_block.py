"""Where a module's ``if __name__ == "__main__":`` block lies.

That block runs only when the module itself is the script (``python netlib.py``); importing
the module runs everything else at its top level but skips it. A model library that ends with
a hand-run benchmark (a ``GradScaler``, an optimizer, a backward pass under ``__main__``)
therefore turns on nothing in the scripts that import it. The join (``callgraph.py``) keeps
that code apart: its sites run under their own scope, ``<module>.__main__``, which only the
module's own run executes.

Its lines come from CPython's tree of the module (``main_block_lines``), which every file
CPython compiles has before anything else is read: a top-level ``If`` whose test compares
``__name__`` with ``"__main__"`` (either way round), never the text of a string or of a
comment, never an ``if`` nested in another block. The per-site spans of every section are
then placed by line number, without a positions pass.
"""
from __future__ import annotations

import ast
from typing import Tuple

MAIN = "__main__"


def main_scope(module_name: str) -> str:
    """The scope name of ``module_name``'s ``__main__`` block (``netlib.__main__``)."""
    return f"{module_name}.{MAIN}" if module_name else MAIN


def module_of_main(scope: str) -> str:
    """The module whose ``__main__`` block ``scope`` names ("" when it names none)."""
    if scope == MAIN:
        return ""
    return scope[: -len(MAIN) - 1] if scope.endswith(f".{MAIN}") else ""


def is_main_scope(scope: str) -> bool:
    return scope == MAIN or scope.endswith(f".{MAIN}")


def main_block_lines(tree: ast.AST) -> Tuple[Tuple[int, int], ...]:
    """``(first, last)`` line numbers (1-based, inclusive) of every top-level
    ``if __name__ == "__main__":`` block of CPython's ``tree`` of a module: from its header to
    the end of its body's last statement; an ``else:`` that follows it runs on import, so it is
    not part of the block."""
    return tuple(
        (stmt.lineno, stmt.body[-1].end_lineno or stmt.lineno)
        for stmt in getattr(tree, "body", ())
        if type(stmt) is ast.If and _is_main_comparison(stmt.test)
    )


def _is_main_comparison(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` or ``"__main__" == __name__``."""
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) is not ast.Eq:
        return False
    sides = (test.left, test.comparators[0])

    def is_name(node: ast.expr) -> bool:
        return type(node) is ast.Name and node.id == "__name__"

    def is_main(node: ast.expr) -> bool:
        return type(node) is ast.Constant and node.value == MAIN and type(node.value) is str

    return (is_name(sides[0]) and is_main(sides[1])) or (is_main(sides[0]) and is_name(sides[1]))


def in_main_block(lines: Tuple[Tuple[int, int], ...], line: int) -> bool:
    return any(first <= line <= last for first, last in lines)


def is_main_test(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    return _is_main_comparison(test)


def main_block_orders(index) -> Tuple[Tuple[int, int], ...]:
    """The pre-order ranges (``index.order``) of the bodies of the top-level ``__main__``
    blocks of the indexed module: a call lies in one when its order falls inside."""
    out = []
    for stmt in index.module.body:
        if type(stmt) is ast.If and _is_main_comparison(stmt.test) and id(stmt.body) in index.order_of:
            out.append(index.order(stmt.body))
    return tuple(out)
