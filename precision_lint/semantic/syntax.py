"""Whether CPython compiles a text, and how deeply it nests: asked before the analysis reads it.

CPython's verdict is the one that matters: a file it refuses never runs, so it is MP000
whatever else it holds (also a file that mentions no precision at all: ``def f(:``), and it
is refused at once (300 nested parentheses: CPython says ``too many nested parentheses``; a
200,000-term ``a + a + ...``, for which CPython gives up with ``RecursionError`` in
milliseconds). The tree CPython gives is the one the analysis reads (``index.build_index``).

A file CPython compiles must be checked, however deep it nests: a 2,000-term ``a + a + ...``
is a tree 2,000 nodes deep. The index walks it without recursion, but the analysis that
follows an expression into its parts (the evaluator, the tensor walk) recurses over such
trees, past Python's recursion limit. :func:`run_deep` runs the analysis of a deep file on a
thread with a large stack and a recursion limit sized to the file; a file deeper than
:data:`MAX_DEPTH` is not analysed at all and says so (MP002), never a crash and never a pass.
"""
from __future__ import annotations

import ast
import sys
import threading
import warnings
from typing import Any, Callable, Optional, Sequence, Tuple

from ..workspace import fstring_mask
from .records import ParseError

# Deeper than this (the tree's nesting, see nesting_depth), a file is analysed on a thread of
# its own with room for the recursion; at most MAX_DEPTH, beyond which it is not analysed.
SHALLOW = 100
MAX_DEPTH = 25_000
FRAMES_PER_LEVEL = 12  # Python frames the analysis may stack per level of nesting
STACK_BYTES = 512 * 1024 * 1024  # reserved, not used: a thread's stack is mapped as it grows

# How IPython compiles a cell: `await` at the top level is allowed there.
CELL_FLAGS = ast.PyCF_ONLY_AST | getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)


def cpython_tree(
    source: str, path: str, flags: int = ast.PyCF_ONLY_AST, cell_starts: Optional[Sequence[int]] = None
) -> Tuple[Optional[ast.AST], Optional[ParseError]]:
    """CPython's tree of ``source``, or why CPython refuses it (as MP000 reports it).

    The tree is parsed once and then compiled to bytecode: the parser alone accepts what only
    the compiler refuses (``return`` or ``yield`` outside a function, ``break`` outside a loop,
    ``nonlocal`` at module level, a name assigned before its ``global``), and such a file never
    runs either. Compiling the tree gives the compiler's verdict, message and place exactly as
    compiling the text does, without parsing again; a tree too deep to hand back to the
    compiler (``RecursionError`` while converting it, where the text compiles) is judged by
    compiling the text.

    ``cell_starts``: for a notebook's joined cells, the lines where cells 2, 3... begin (empty
    for a notebook of one cell; None for a file). IPython parses a cell whole but compiles each
    of its top-level statements as a module of its own (``InteractiveShell.run_ast_nodes``), so
    a ``from __future__`` import at a cell's top level is legal anywhere in it, also after other
    statements (IPython 7.34, 8.39 and 9.18 run ``import os`` then ``from __future__ import
    annotations``); one nested in a block, or naming no feature, is refused there as in a file."""
    tree, error = parsed_tree(source, path, flags, cell_starts)
    return (None, error) if error is not None else (tree, None)


def parsed_tree(
    source: str, path: str, flags: int = ast.PyCF_ONLY_AST, cell_starts: Optional[Sequence[int]] = None
) -> Tuple[Optional[ast.AST], Optional[ParseError]]:
    """:func:`cpython_tree`'s verdict, with the parser's tree wherever the parser accepts the
    text (also where the compiler then refuses it): what the gate reads the imports from
    (``gate.imported_modules``), from the same parse."""
    tree = None
    try:
        tree = compile(source, path, "exec", flags, dont_inherit=True)
        with warnings.catch_warnings():  # `x is 1`, `assert (a, b)`: warnings, the user's business
            warnings.simplefilter("ignore")
            try:
                rest, futures = _cell_futures(tree, cell_starts)
                for future in futures:  # each on its own, as IPython compiles it: `braces`, an unknown feature
                    compile(ast.Module(body=[future], type_ignores=[]), path, "exec", flags & ~ast.PyCF_ONLY_AST, dont_inherit=True)
                compile(rest, path, "exec", flags & ~ast.PyCF_ONLY_AST, dont_inherit=True)
            except (RecursionError, MemoryError):  # the tree's conversion, not CPython's verdict
                compile(source, path, "exec", flags & ~ast.PyCF_ONLY_AST, dont_inherit=True)
        return tree, None
    except SyntaxError as err:
        line = err.lineno or 1
        return tree, ParseError(f"SyntaxError: {err.msg}", line, max((err.offset or 1) - 1, 0))
    except RecursionError:
        # Python itself fails the same way before running a line of it
        return tree, ParseError(
            "RecursionError: maximum recursion depth exceeded during ast construction "
            "(CPython cannot compile it either: it nests too deeply)",
            1,
            0,
        )
    except MemoryError:
        return tree, ParseError("MemoryError: CPython runs out of memory compiling it", 1, 0)
    except ValueError as err:  # a NUL byte in the source
        return tree, ParseError(f"ValueError: {err}", 1, 0)


def _cell_futures(tree: ast.Module, cell_starts: Optional[Sequence[int]]) -> Tuple[ast.Module, list]:
    """(``tree`` without its top-level ``from __future__`` imports, those imports) for a
    notebook's cells (``cell_starts`` not None): what the compiler is given to judge the rest,
    and the imports it judges one by one, each the first statement of its own module as IPython
    compiles it. A file's tree comes back whole: the compiler judges its imports in place."""
    if cell_starts is None:
        return tree, []
    futures = [s for s in tree.body if isinstance(s, ast.ImportFrom) and s.module == "__future__" and not s.level]
    if not futures:
        return tree, []
    return ast.Module(body=[s for s in tree.body if s not in futures], type_ignores=tree.type_ignores), futures


def newer_fstrings(source: str, error: ParseError) -> bool:
    """Whether a text the running CPython refuses for an f-string (before 3.12: a quote of the
    string's own kind or a backslash inside a replacement field, or a replacement field that
    spans lines, which 3.11 calls an ``unterminated string literal``) is Python 3.12's: LibCST,
    whose grammar has PEP 701's f-strings, parses it. Such a file runs where its authors run
    it (review 27's held-out tools written for 3.12); it is not a syntax error."""
    if sys.version_info >= (3, 12) or not fstring_mask.refused_for_fstring(error.message):
        return False
    import libcst  # only for such a file

    try:
        libcst.parse_module(source)
    except Exception:  # LibCST refuses it too: the f-string is wrong on every version
        return False
    return True


def newer_fstrings_unread(error: ParseError, what: str = "file") -> ParseError:
    """What MP002 says of a text :func:`newer_fstrings` finds Python 3.12's: ``what`` (a file, or
    a notebook's cell: ``notebook.to_python``) was not read, at CPython's place for its refusal."""
    return ParseError(
        f"{error.message.removeprefix('SyntaxError: ')}: an f-string only Python 3.12 and later compile (PEP 701); "
        f"this check runs on Python {sys.version_info[0]}.{sys.version_info[1]} and did not read the {what}",
        error.line, error.col, "unsupported",
    )


def nesting_depth(tree: ast.AST) -> Tuple[int, int, int]:
    """How deep CPython's tree of a module nests, and where (line, column) it is deepest.

    Walked without recursion; ``a and b and c`` is one level (CPython keeps a chain of
    ``and``/``or`` flat, as one ``BoolOp``)."""
    best, where = 0, (1, 0)
    stack = [(tree, 1)]
    pop, push = stack.pop, stack.append
    children = ast.iter_child_nodes
    while stack:
        node, depth = pop()
        if depth > best:
            best = depth
            where = (getattr(node, "lineno", where[0]), getattr(node, "col_offset", where[1]))
        for child in children(node):
            push((child, depth + 1))
    return best, where[0], where[1]


def too_deep(depth: int, line: int, col: int) -> ParseError:
    """What MP002 says about a file nested deeper than the analysis goes."""
    return ParseError(
        f"its code nests {depth:,} levels deep (line {line}), more than the {MAX_DEPTH:,} levels "
        "precision-lint analyses; CPython compiles it, but it was not checked",
        line,
        col,
        "depth",
    )


def run_deep(depth: int, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` with room for recursion ``depth`` levels deep: directly for an ordinary
    file, else on a thread with a large stack and a recursion limit to match (restored after)."""
    if depth <= SHALLOW:
        return fn(*args)
    result: list = []
    failure: list = []

    def target() -> None:
        try:
            result.append(fn(*args))
        except BaseException as exc:  # re-raised in the caller's thread
            failure.append(exc)

    limit = sys.getrecursionlimit()
    needed = depth * FRAMES_PER_LEVEL + 1000
    with _LOCK:
        if needed > limit:
            sys.setrecursionlimit(needed)
        old_size = threading.stack_size(STACK_BYTES)  # the size a thread gets when it starts
        try:
            thread = threading.Thread(target=target, name="precision-lint-deep-file")
            thread.start()
        finally:
            threading.stack_size(old_size)
        try:
            thread.join()
        finally:
            sys.setrecursionlimit(limit)
    if failure:
        raise failure[0]
    return result[0]


_LOCK = threading.Lock()
