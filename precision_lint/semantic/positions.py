"""Where an ``ast`` node is in the text, in characters.

CPython's parser gives every expression and statement its range (``lineno``, ``col_offset``,
``end_lineno``, ``end_col_offset``), with columns counted in UTF-8 bytes of the line. A
:class:`~precision_lint.diagnostics.Span` counts characters (its offsets cut the text a fix
edits), so a column on a line that is not ASCII is converted; an ASCII file (nearly every one)
takes the columns as they are.

Lines are counted as the tokenizer counts them (``index.line_starts``: at ``\\n``, ``\\r\\n`` and a
lone ``\\r``); ``str.splitlines`` also splits at form feeds, ``\\x1c``-``\\x1e``, ``\\x85``,
``\\u2028``..., which a comment may hold, and must not be used to find a line's text.

A few nodes have no range of their own in ``ast`` and are placed from their parts (and an
import's alias, which has one from Python 3.10, by its text in its statement): a ``with``
item (its expression to its ``as`` target), a function's ``arguments`` and a comprehension's
``for`` clause (first to last part), a ``match`` case (its pattern to its body's end), a block
of statements (a Python list: first to last statement) and the module (the whole text).
"""
from __future__ import annotations

import ast
import bisect
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ..diagnostics import Span
from .tree import children  # source order (defaults after their parameters)


class Positions:
    """``span(node)`` for the nodes of one parsed module."""

    __slots__ = ("_source", "_line_starts", "_ascii", "_lines", "_alias", "_spans")

    def __init__(self, source: str, line_starts: Sequence[int], alias: Optional[Callable[[ast.alias], Span]] = None) -> None:
        self._source = source
        self._alias = alias  # places an import alias where ``ast`` has no range for it (Python 3.9)
        self._line_starts = line_starts
        self._ascii = source.isascii()
        self._lines: Dict[int, Optional[bytes]] = {}  # line → its UTF-8 bytes (None: ASCII)
        # id(node) → (node, its span): a node's span is asked again and again (each argument of a
        # call asks for the call's), and a Span is a frozen dataclass of six fields, slow to make.
        # The node is held with it, so that its id is never another node's meanwhile
        self._spans: Dict[int, Tuple[object, Span]] = {}

    def span(self, node) -> Span:
        found = self._spans.get(id(node))
        if found is not None and found[0] is node:
            return found[1]
        line = getattr(node, "lineno", None)
        if line is None:
            return self._composite(node)
        span = self._span(node, line)
        self._spans[id(node)] = (node, span)
        return span

    def _span(self, node, line: int) -> Span:
        end_line = node.end_lineno
        col, end_col = node.col_offset, node.end_col_offset
        if not self._ascii:
            col = self.column(line, col)
            end_col = self.column(end_line, end_col)
        starts = self._line_starts
        return Span(line, col, end_line, end_col, starts[line - 1] + col, starts[end_line - 1] + end_col)

    def between(self, first, last) -> Span:
        """From the start of ``first`` to the end of ``last``."""
        a, b = self.span(first), self.span(last)
        return Span(a.line, a.col, b.end_line, b.end_col, a.start, b.end)

    def column(self, line: int, byte_col: int) -> int:
        """The character column of UTF-8 byte column ``byte_col`` on (1-based) ``line``."""
        lines = self._lines
        if line in lines:
            data = lines[line]
        else:
            starts = self._line_starts
            end = starts[line] if line < len(starts) else len(self._source)
            text = self._source[starts[line - 1] : end] if line - 1 < len(starts) else ""
            data = lines[line] = None if text.isascii() else text.encode("utf-8")
        if data is None:
            return byte_col
        return len(data[:byte_col].decode("utf-8", "replace"))

    def offsets_span(self, start: int, end: int) -> Span:
        starts = self._line_starts
        line = bisect.bisect_right(starts, start)
        end_line = bisect.bisect_right(starts, end)
        return Span(line, start - starts[line - 1], end_line, end - starts[end_line - 1], start, end)

    def _composite(self, node) -> Span:
        if isinstance(node, ast.withitem):
            return self.between(node.context_expr, node.optional_vars or node.context_expr)
        if isinstance(node, ast.alias) and self._alias is not None:
            return self._alias(node)
        if type(node).__name__ == "match_case":
            return self.between(node.pattern, node.body[-1])
        if isinstance(node, list):
            if not node:
                raise ValueError("an empty block has no place")
            return self.between(node[0], node[-1])
        if isinstance(node, ast.Module):
            return self.offsets_span(0, len(self._source))
        if isinstance(node, (ast.arguments, ast.comprehension)):
            parts = _parts(node)
            if not parts:
                raise ValueError("empty arguments have no place of their own")
            return self.between(parts[0], parts[-1])
        raise ValueError(f"no position for {type(node).__name__}")


def _parts(node) -> List[ast.AST]:
    return [c for c in children(node) if hasattr(c, "lineno")]
