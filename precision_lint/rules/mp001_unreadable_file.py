"""MP001 unreadable-file: the file's bytes could not be read as text, so nothing in it was checked.

Python itself refuses such a file before running a line of it::

    SyntaxError: (unicode error) 'utf-8' codec can't decode byte 0xe9 in position 5: invalid continuation byte

A source file is UTF-8 unless its first or second line carries a PEP 263 coding cookie
(``# -*- coding: latin-1 -*-``), which precision-lint honours exactly as Python does (the
file is then checked, and fixed in its own encoding). A file that is neither, or that names
a codec Python does not know, is reported here, apart from syntax errors (MP000), and is
never rewritten.
"""
from __future__ import annotations

from ..diagnostics import Span
from .base import Rule, RuleContext


class UnreadableFile(Rule):
    code = "MP001"
    name = "unreadable-file"
    summary = "File is not UTF-8 and has no PEP 263 coding cookie (or cannot be read); it was not checked and is never rewritten"
    judges_unparsed = True

    def check(self, ctx: RuleContext):
        error = ctx.facts.parse_error
        if error is None or error.kind not in ("read", "decode"):
            return
        line = max(error.line, 1)
        span = Span(line, 0, line, 0, 0, 0)
        yield ctx.diagnostic(self.code, span, f"Cannot check file: {error.message}")
