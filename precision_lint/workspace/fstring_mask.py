"""A text written for Python 3.12's f-strings, made readable to an older CPython's parser.

PEP 701 (Python 3.12) lets an f-string's replacement field hold the string's own quote, a
backslash, a comment or a line break: ``f"{", ".join(names)}"``. CPython 3.11 refuses such a
file (``SyntaxError: f-string: expecting '}'``, or ``unterminated string literal`` for a field
that spans lines), yet it runs where its authors run it (Colab's kernel is Python 3.12), and
the rest of it is ordinary code that may load a model in bf16 or train under a
``GradScaler``. So that the analysis still reads it, :func:`masked` writes a blank f-string
over each f-string the running parser cannot read, of the same extent: every other node keeps
its line and its column, counted in characters and in UTF-8 bytes alike (findings, ``noqa``
comments and fixes are placed on the original text, which LibCST, the tree fixes are written
on, parses as it is). What the blanked f-strings held is not read: an f-string's value is
unknown to the evaluator either way, and a precision set inside a replacement field is not a
shape the rules look for.
"""
from __future__ import annotations

import ast
import re
import sys
from typing import List, Optional, Tuple

# (first line, first column, last line, end column) of a span, lines from 1, columns in characters
Span = Tuple[int, int, int, int]
# the line breaks LibCST counts lines by (str.splitlines also breaks at a form feed)
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
# an f-string opened with a triple quote (its prefix letters first: `rf"""`, `Fr'''`)
_TRIPLE = re.compile(r"[A-Za-z]{1,2}(\"\"\"|''')")
# what CPython 3.11 says of a PEP 701 f-string: its own words for one, and for one that spans lines
_REFUSALS = ("f-string", "unterminated string literal")


def refused_for_fstring(message: str) -> bool:
    """Whether CPython's refusal of a text may be for an f-string only Python 3.12 reads."""
    return any(words in message for words in _REFUSALS)


def masked(source: str) -> Optional[str]:
    """``source`` with each f-string the running parser refuses blanked as the module docstring
    says, or None where that does not give a text it parses into the same statements (LibCST
    refuses the text too, or an f-string spans lines in a way no blank one of its extent keeps)."""
    if sys.version_info >= (3, 12):
        return None
    spans = _unreadable_fstrings(source)
    if not spans:
        return None
    lines = _LINES.findall(source)
    for span in sorted(spans, reverse=True):  # from the end: earlier columns stay put
        if not _blank_over(lines, span):
            return None
    text = "".join(lines)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not all(_statement_holds(tree, span) for span in spans):
        return None
    return text


def _unreadable_fstrings(source: str) -> List[Span]:
    """The spans of the outermost f-strings of ``source`` that this CPython cannot parse on
    their own, as LibCST (whose grammar has PEP 701) places them."""
    import libcst  # only for such a file
    from libcst.metadata import MetadataWrapper, PositionProvider

    try:
        wrapper = MetadataWrapper(libcst.parse_module(source), unsafe_skip_copy=True)
    except Exception:  # LibCST refuses it too: not a 3.12 text, a broken one
        return []
    positions = wrapper.resolve(PositionProvider)
    spans: List[Span] = []

    class Outermost(libcst.CSTVisitor):
        def visit_FormattedString(self, node: libcst.FormattedString) -> bool:
            if not _parses(wrapper.module.code_for_node(node)):
                where = positions[node]
                spans.append((where.start.line, where.start.column, where.end.line, where.end.column))
            return False  # an f-string nested in it is blanked with it

    wrapper.visit(Outermost())
    return spans


def _parses(code: str) -> bool:
    try:
        ast.parse(f"({code})", mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _blank_over(lines: List[str], span: Span) -> bool:
    """Write a blank f-string of the same extent over ``span`` in ``lines``; False where none
    can be written there.

    On one line, ``f"`` spaces ``"``. Over several lines, a triple-quoted f-string keeps its
    line breaks inside a blank triple-quoted one (opened on the first line, closed on the last);
    a single-quoted one, whose replacement field spans lines (Python 3.12 allows it), becomes two
    blank f-strings side by side, one on its first line and one ending where it ended, which
    means the same only inside brackets (:func:`_statement_holds` checks). Characters outside
    ASCII stay where they are, as spaces would not: CPython counts columns in UTF-8 bytes."""
    first, col, last, end = span
    if first == last:
        line = lines[first - 1]
        if end - col < 3:
            return False
        lines[first - 1] = line[:col] + _blank(line[col:end], "f", '"') + line[end:]
        return True
    head, tail = lines[first - 1], lines[last - 1]
    head_end = len(head.rstrip("\r\n"))
    triple = _TRIPLE.match(head, col) is not None
    if head_end - col < (4 if triple else 3) or end < 3 or not tail[end - 3 : end].isascii():
        return False
    if triple:
        lines[first - 1] = head[:col] + _blank(head[col:head_end], 'f"""', "") + head[head_end:]
        lines[last - 1] = _blank(tail[:end], "", '"""') + tail[end:]
    else:
        lines[first - 1] = head[:col] + _blank(head[col:head_end], "f", '"') + head[head_end:]
        lines[last - 1] = _blank(tail[:end], "", 'f""') + tail[end:]
    for i in range(first, last - 1):
        body = lines[i].rstrip("\r\n")
        lines[i] = _blank(body, "", "") + lines[i][len(body):]
    return True


def _blank(text: str, start: str, stop: str) -> str:
    """``text`` with ``start`` over its first characters, ``stop`` over its last, and a space
    over every other ASCII character (one outside ASCII stays: its width in bytes is kept).
    ``f"`` is written over ``f"``/``rf``/``b"``-like openings, all ASCII, so nothing moves."""
    middle = "".join(" " if c.isascii() else c for c in text[len(start) : len(text) - len(stop)])
    if start == "f":  # the opening quote is the quote after the prefix letters
        return 'f"' + middle[1:] + stop
    return start + middle + stop


def _statement_holds(tree: ast.Module, span: Span) -> bool:
    """Whether the innermost statement that holds a blanked f-string's first line still runs
    to its last line (a line break outside brackets would have ended it there)."""
    first, _, last, _ = span
    if first == last:
        return True
    holding = [
        s for s in ast.walk(tree) if isinstance(s, ast.stmt) and s.lineno <= first <= (s.end_lineno or s.lineno)
    ]
    if not holding:
        return False
    innermost = max(holding, key=lambda s: (s.lineno, -(s.end_lineno or s.lineno)))
    return (innermost.end_lineno or innermost.lineno) >= last
