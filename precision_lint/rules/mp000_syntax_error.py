"""MP000 syntax-error: the file could not be parsed, so nothing in it was checked."""
from __future__ import annotations

from ..diagnostics import Span
from ..semantic.records import run_by_python_note
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
            if cell_error.kind == "ipython":  # notebook code kept as a `.py` file
                why = _run_by_python(ctx)
                if why:
                    yield self._diagnostic(ctx, cell_error, "Cannot parse file", run_by_python_note(why))
                continue
            if cell_error.kind != "syntax":  # a cell of Python 3.12's f-strings: not read (MP002)
                continue
            what = "Cannot parse cell" if is_notebook_text(ctx.path, ctx.source) else "Cannot parse file"
            yield self._diagnostic(ctx, cell_error, what)

    def _diagnostic(self, ctx: RuleContext, error, what: str, note: str = ""):
        line = max(error.line, 1)
        lines = ctx.source.splitlines(keepends=True)
        start = sum(len(l) for l in lines[: line - 1]) + max(error.col, 0)
        start = min(start, len(ctx.source))
        span = Span(line, max(error.col, 0), line, max(error.col, 0), start, start)
        return ctx.diagnostic(self.code, span, f"{what}: {error.message}{note}")


def _run_by_python(ctx: RuleContext) -> str:
    """Why Python runs a file of notebook code (its IPython lines, ``!pip install x``, are a
    ``SyntaxError`` there), or "": a notebook's ``%%writefile`` cell writes it (to be imported or
    run: IPython runs the notebook's own cells, never the file), another module imports it, or a
    launcher runs it (``python file.py`` in a shell script, a README's command, a notebook's
    ``!python file.py``). A file no such thing runs is a notebook's cells kept as a file, run
    where it was written to run: pasted into cells, or opened in Colab."""
    from ..project.test_code import launched
    from ..workspace.written import is_written_module

    if is_written_module(ctx.facts.path):
        return "a notebook writes it as a file (`%%writefile`), which Python imports or runs"
    importers = ctx.project.direct_importers(ctx.facts)
    if importers:
        name = importers[0].path.replace("\\", "/").rsplit("/", 1)[-1]
        return f"`{name}` imports it"
    if launched(ctx.project, ctx.facts):
        return "a launcher of the project runs it with Python"
    return ""
