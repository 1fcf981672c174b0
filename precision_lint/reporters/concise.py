"""``--output-format concise``: one line a finding."""
from __future__ import annotations

from . import Report, summary_lines
from .style import Style


def location(report: Report, path: str, span, style: Style) -> str:
    """``path:12:5:`` (``nb.ipynb:cell 3:12:5:``), the separators dimmed in colour."""
    w = report.locate(path, span.line, span.col)
    sep = style.cyan(":")
    cell = f"{sep}cell {w.cell}" if w.cell is not None else ""
    return f"{style.bold(report.shown(path))}{cell}{sep}{w.row}{sep}{w.column}{sep}"


def line_for(report: Report, d, style: Style) -> str:
    mark = " [*]" if d.fix is not None and d.fix.applicability == "safe" else ""
    return f"{location(report, d.path, d.span, style)} {style.red(style.bold(d.code))}{mark} {d.message}"


def render(report: Report) -> str:
    style = Style(report.color)
    lines = [line_for(report, d, style) for d in report.diagnostics]
    return "\n".join(lines + summary_lines(report)) + "\n"
