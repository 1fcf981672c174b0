"""MP000 syntax-error: the file could not be parsed, so nothing in it was checked."""
from __future__ import annotations

from ..diagnostics import Span
from ..workspace.notebook import is_notebook_text
from .base import Rule, RuleContext


class ParseFailure(Rule):
    code = "MP000"
    name = "syntax-error"
    summary = "File could not be parsed; it was not checked and is never rewritten"
    judges_unparsed = True

    def check(self, ctx: RuleContext):
        error = ctx.facts.parse_error
        if error is not None and error.kind == "syntax":  # bytes that never became text: MP001
            yield self._diagnostic(ctx, error, "Cannot parse file")
        # a notebook's other cells are still checked; so are the Python lines of a `.py` file of
        # notebook code refused at an IPython line (`!pip install x`: facts/extract.ipython_masked)
        # (the text is read only where there is one: a rule that reads it is judged again at every edit)
        for cell_error in ctx.facts.cell_errors:
            if cell_error.kind != "syntax":  # a cell of Python 3.12's f-strings: not read (MP002)
                continue
            what = "Cannot parse cell" if is_notebook_text(ctx.path, ctx.source) else "Cannot parse file"
            yield self._diagnostic(ctx, cell_error, what)

    def _diagnostic(self, ctx: RuleContext, error, what: str):
        line = max(error.line, 1)
        lines = ctx.source.splitlines(keepends=True)
        start = sum(len(l) for l in lines[: line - 1]) + max(error.col, 0)
        start = min(start, len(ctx.source))
        span = Span(line, max(error.col, 0), line, max(error.col, 0), start, start)
        return ctx.diagnostic(self.code, span, f"{what}: {error.message}")
