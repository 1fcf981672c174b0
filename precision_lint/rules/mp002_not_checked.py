"""MP002 not-checked: something the run had to read was not checked, so no finding is no pass.

A file with more code than ``max-file-size``, one nested deeper than the analysis goes, or
one that LibCST cannot parse although CPython compiles it, was not analysed; nor was a file, or
a notebook's cell, that this interpreter refuses only for an f-string Python 3.12 compiles
(``syntax.newer_fstrings``: no syntax error, MP000, where its authors run it); a config file
the code names (a DeepSpeed JSON, a YAML config, an accelerate config) that is there but
cannot be read — too large, not UTF-8, or invalid (DeepSpeed's own ``json.load`` fails on a
trailing comma: ``json.decoder.JSONDecodeError: Expecting property name enclosed in double
quotes``) — gave the rules that needed it nothing to compare. Each is reported here, as ruff
reports what it cannot parse, so that "All checks passed!" always means checked and passed.
"""
from __future__ import annotations

from ..diagnostics import Span
from .base import Rule, RuleContext

_NOT_ANALYSED = ("size", "depth", "unsupported")


class NotChecked(Rule):
    code = "MP002"
    name = "not-checked"
    summary = "A file, or a config file the code names, could not be read or analysed: it was not checked"
    evidence = ()  # judges what was not read: never the reason to parse a file
    judges_unparsed = True
    # the config files a run could not read are known once the other rules have asked for them
    after_others = True

    def check(self, ctx: RuleContext):
        error = ctx.facts.parse_error
        if error is not None and error.kind in _NOT_ANALYSED:
            line = max(error.line, 1)
            yield ctx.diagnostic(self.code, _at(ctx.source, line, max(error.col, 0)), f"Not checked: {error.message}")
        for cell_error in ctx.facts.cell_errors:  # a notebook's cell not read; its other cells were checked
            if cell_error.kind in _NOT_ANALYSED:
                yield ctx.diagnostic(self.code, _at(ctx.source, max(cell_error.line, 1), max(cell_error.col, 0)), f"Not checked: {cell_error.message}")
        for relative, shown, why in ctx.project.configs.problems_for(ctx.path):
            yield ctx.diagnostic(
                self.code,
                _naming(ctx.source, relative),
                f"`{shown}` was not checked: {why}",
            )


def _at(source: str, line: int, col: int) -> Span:
    lines = source.splitlines(keepends=True)
    if line > len(lines):
        line, col = 1, 0
    start = sum(len(l) for l in lines[: line - 1])
    col = min(col, len(lines[line - 1].rstrip("\r\n"))) if lines else 0
    return Span(line, col, line, col, start + col, start + col)


def _naming(source: str, relative: str) -> Span:
    """Where the code writes the path: its string literal (else the first mention, else 1:1)."""
    for needle in (f'"{relative}"', f"'{relative}'", relative):
        at = source.find(needle)
        if at >= 0:
            line = source.count("\n", 0, at) + 1
            col = at - (source.rfind("\n", 0, at) + 1)
            return Span(line, col, line, col + len(needle), at, at + len(needle))
    return Span(1, 0, 1, 0, 0, 0)
