"""Offsets in a text ↔ LSP positions, and the edits that turn one text into another.

The linter works in character offsets; LSP positions are (line, column) with the column
counted in the code units the client and server agreed on (UTF-16 unless the client offers
UTF-8 or UTF-32), and lines ended by ``\\n``, ``\\r\\n`` or ``\\r`` only. Nothing here
imports pygls.
"""
from __future__ import annotations

import bisect
import difflib
import re
from typing import List, Tuple

from ..diagnostics import Edit

_LINE_END = re.compile(r"\r\n|\r|\n")
UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


def units(text: str, encoding: str = UTF16) -> int:
    """Length of ``text`` in the code units of ``encoding``."""
    if encoding == UTF32:
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class LineIndex:
    """Where the lines of a text start, to convert offsets to LSP positions and back."""

    def __init__(self, text: str, encoding: str = UTF16) -> None:
        self.text = text
        self.encoding = encoding
        self.starts = [0] + [m.end() for m in _LINE_END.finditer(text)]

    def line_text(self, line: int) -> str:
        """Line ``line`` (0-based) without its ending."""
        start = self.starts[line]
        end = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def position(self, offset: int) -> Tuple[int, int]:
        """(line, column in code units), both 0-based, of a character offset."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        return line, units(self.text[start:offset], self.encoding)

    def offset(self, line: int, column: int) -> int:
        """The character offset of an LSP position (clamped to the text, as LSP asks)."""
        if line >= len(self.starts):
            return len(self.text)
        text = self.line_text(max(line, 0))
        count = 0
        for i, ch in enumerate(text):
            if count >= column:
                return self.starts[line] + i
            count += units(ch, self.encoding)
        return self.starts[line] + len(text)


def diff_edits(old: str, new: str) -> List[Edit]:
    """Non-overlapping edits (offsets into ``old``) that turn ``old`` into ``new``, whole lines
    at a time, so an editor applies a fix without replacing the buffer (and the cursor stays)."""
    if old == new:
        return []
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    starts = [0]
    for line in a:
        starts.append(starts[-1] + len(line))
    edits = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            edits.append(Edit(starts[i1], starts[i2], "".join(b[j1:j2])))
    return edits
