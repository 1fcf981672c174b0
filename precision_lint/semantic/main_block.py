"""Where a module's ``if __name__ == "__main__":`` block lies.

That block runs only when the module itself is the script (``python netlib.py``); importing
the module runs everything else at its top level but skips it. A model library that ends with
a hand-run benchmark (a ``GradScaler``, an optimizer, a backward pass under ``__main__``)
therefore turns on nothing in the scripts that import it. The join (``callgraph.py``) keeps
that code apart: its sites run under their own scope, ``<module>.__main__``, which only the
module's own run executes.

Lines are found from the text (a top-level ``if`` at column 0 and every line up to the next
statement at column 0), so that files that are not parsed and the per-site spans of every
section can be placed without a positions pass.
"""
from __future__ import annotations

import re
from typing import Tuple

import libcst as cst

MAIN = "__main__"
_HEADER = re.compile(
    r"""^if[ \t(]+(?:__name__[ \t]*==[ \t]*(['"])__main__\1|(['"])__main__\2[ \t]*==[ \t]*__name__)[ \t)]*:"""
)
# a line that ends the block: any statement at column 0 (not a comment, not blank)
_TOP_LEVEL = re.compile(r"^[^\s#]")


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


def main_block_lines(source: str) -> Tuple[Tuple[int, int], ...]:
    """``(first, last)`` line numbers (1-based, inclusive) of every top-level
    ``if __name__ == "__main__":`` block, its header included; an ``else:`` that follows it
    runs on import, so it ends the block."""
    if "__main__" not in source:
        return ()
    lines = source.split("\n")
    out = []
    i = 0
    while i < len(lines):
        if _HEADER.match(lines[i]):
            start = i
            i += 1
            while i < len(lines) and not _TOP_LEVEL.match(lines[i]):
                i += 1
            last = i
            while last - 1 > start and not lines[last - 1].strip():
                last -= 1
            out.append((start + 1, last))
            continue
        i += 1
    return tuple(out)


def in_main_block(lines: Tuple[Tuple[int, int], ...], line: int) -> bool:
    return any(first <= line <= last for first, last in lines)


def is_main_test(test: cst.BaseExpression) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, cst.Equal):
        return False
    sides = (test.left, target.comparator)

    def is_name(node) -> bool:
        return isinstance(node, cst.Name) and node.value == "__name__"

    def is_main(node) -> bool:
        return isinstance(node, cst.SimpleString) and node.evaluated_value == MAIN

    return (is_name(sides[0]) and is_main(sides[1])) or (is_main(sides[0]) and is_name(sides[1]))


def main_block_orders(index) -> Tuple[Tuple[int, int], ...]:
    """The pre-order ranges (``index.order``) of the bodies of the top-level ``__main__``
    blocks of the indexed module: a call lies in one when its order falls inside."""
    out = []
    for stmt in index.module.body:
        if isinstance(stmt, cst.If) and is_main_test(stmt.test) and id(stmt.body) in index.order_of:
            out.append(index.order(stmt.body))
    return tuple(out)
