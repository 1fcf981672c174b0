"""``--output-format full`` (the default): ruff-like, with the source excerpt,
a caret under the finding, the fix hint and each related location (with its own
excerpt: the other half of a cross-file conflict)."""
from __future__ import annotations

from typing import List

from . import Report, summary_lines
from .concise import line_for, location
from .style import Style

CONTEXT = 1  # lines shown above and below the finding's line


def _excerpt(report: Report, path: str, span, label: str, style: Style, marker: str = "^") -> List[str]:
    text = report.display_texts.get(path) or report.texts.get(path)
    if not text:
        return []
    lines = text.splitlines()
    if not (1 <= span.line <= len(lines)):
        return []
    w = report.locate(path, span.line, span.col)
    shift = w.row - span.line  # notebook: rows within the cell
    first = max(1, span.line - CONTEXT)
    last = min(len(lines), span.line + CONTEXT)
    if w.cell is not None:  # never show another cell's lines (or the cell boundary)
        first = max(first, span.line - (w.row - 1))
        # the line after a cell's last line is the next cell's boundary line
        while last > span.line and report.locate(path, last + 1, 0).cell != w.cell:
            last -= 1
    width = len(str(last + shift))
    gutter = " " * width
    bar = style.blue("|")
    out = [f"{gutter} {bar}"]
    for n in range(first, last + 1):
        line = lines[n - 1]
        out.append(f"{style.blue(str(n + shift).rjust(width))} {bar} {line}".rstrip())
        if n == span.line:
            end_col = span.end_col if span.end_line == span.line else len(line)
            carets = marker * max(1, end_col - span.col)
            out.append(f"{gutter} {bar} {' ' * span.col}{style.red(carets)} {style.red(label)}".rstrip())
    out.append(f"{gutter} {bar}")
    return out


def render(report: Report) -> str:
    style = Style(report.color)
    out = []
    for d in report.diagnostics:
        out.append(line_for(report, d, style))
        out.extend(_excerpt(report, d.path, d.span, d.code, style))
        for r in d.related:
            out.append(f"  ::: {location(report, r.path, r.span, style)} {r.message}")
            out.extend("  " + l for l in _excerpt(report, r.path, r.span, "related", style, "-"))
        if d.fix is not None:
            unsafe = " (unsafe: needs `--unsafe-fixes`)" if d.fix.applicability != "safe" else ""
            out.append(f"  = help: {d.fix.message}{unsafe}")
        out.append("")
    return "\n".join(out + summary_lines(report)) + "\n"
