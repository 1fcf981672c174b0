"""MP000 syntax-error: the file could not be parsed, so nothing in it was checked."""
from __future__ import annotations

from ..diagnostics import Span
from .base import Rule, RuleContext


class ParseFailure(Rule):
    code = "MP000"
    name = "syntax-error"
    summary = "File could not be parsed; it was not checked and is never rewritten"
    judges_unparsed = True

    def check(self, ctx: RuleContext):
        error = ctx.facts.parse_error
        if error is None or error.kind != "syntax":  # bytes that never became text: MP001
            return
        line = max(error.line, 1)
        lines = ctx.source.splitlines(keepends=True)
        start = sum(len(l) for l in lines[: line - 1]) + max(error.col, 0)
        start = min(start, len(ctx.source))
        span = Span(line, max(error.col, 0), line, max(error.col, 0), start, start)
        yield ctx.diagnostic(self.code, span, f"Cannot parse file: {error.message}")
