"""``--output-format full`` (the default): ruff-like, with the source excerpt,
a caret under the finding, the fix hint and the related location."""
from __future__ import annotations

from . import Report, summary_lines
from .concise import line_for
from .style import Style


def _excerpt(text: str, d, style: Style) -> list:
    lines = text.splitlines()
    if not (1 <= d.span.line <= len(lines)):
        return []
    line = lines[d.span.line - 1]
    width = len(str(d.span.line))
    gutter = " " * width
    end_col = d.span.end_col if d.span.end_line == d.span.line else len(line)
    carets = "^" * max(1, end_col - d.span.col)
    return [
        f"{gutter} {style.blue('|')}",
        f"{style.blue(str(d.span.line))} {style.blue('|')} {line}",
        f"{gutter} {style.blue('|')} {' ' * d.span.col}{style.red(carets)} {style.red(d.code)}",
        f"{gutter} {style.blue('|')}",
    ]


def render(report: Report) -> str:
    style = Style(report.color)
    out = []
    for d in report.diagnostics:
        out.append(line_for(report, d, style))
        text = report.texts.get(d.path)
        if text:
            out.extend(_excerpt(text, d, style))
        if d.fix is not None:
            unsafe = " (unsafe: needs `--unsafe-fixes`)" if d.fix.applicability != "safe" else ""
            out.append(f"  = help: {d.fix.message}{unsafe}")
        for r in d.related:
            out.append(f"  ::: {report.shown(r.path)}:{r.span.line}:{r.span.col + 1}: {r.message}")
        out.append("")
    return "\n".join(out + summary_lines(report)) + "\n"
