"""``--output-format concise``: one line a finding."""
from __future__ import annotations

from . import Report, summary_lines
from .style import Style


def line_for(report: Report, d, style: Style) -> str:
    mark = " [*]" if d.fix is not None and d.fix.applicability == "safe" else ""
    where = f"{style.bold(report.shown(d.path))}{style.cyan(':')}{d.span.line}{style.cyan(':')}{d.span.col + 1}{style.cyan(':')}"
    return f"{where} {style.red(style.bold(d.code))}{mark} {d.message}"


def render(report: Report) -> str:
    style = Style(report.color)
    lines = [line_for(report, d, style) for d in report.diagnostics]
    return "\n".join(lines + summary_lines(report)) + "\n"
