"""``--output-format github``: GitHub Actions workflow commands (annotations).

``::error file=F,line=L,col=C,endLine=L2,endColumn=C2,title=CODE::message``.
GitHub's escaping: in the message (data) ``%``, ``\\r`` and ``\\n`` become
``%25``, ``%0D`` and ``%0A``; in property values ``:`` and ``,`` also become
``%3A`` and ``%2C`` (``%`` first, so nothing is escaped twice).

GitHub places annotations on lines of the file itself; the lines of a notebook
cell are not lines of the ``.ipynb`` file, so a notebook finding is annotated
on the file and its message starts with ``cell N, line L, column C``.
"""
from __future__ import annotations

from . import Report


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(report: Report, d) -> str:
    w = report.locate(d.path, d.span.line, d.span.col)
    props = [f"file={escape_property(report.shown(d.path))}"]
    message = d.message
    if w.cell is None:
        props += [
            f"line={d.span.line}",
            f"col={d.span.col + 1}",
            f"endLine={d.span.end_line}",
            f"endColumn={d.span.end_col + 1}",
        ]
    else:
        message = f"cell {w.cell}, line {w.row}, column {w.column}: {message}"
    props.append(f"title={escape_property(d.code)}")
    for r in d.related:
        message += f"\nRelated: {report.where(r.path, r.span.line, r.span.col)}: {r.message}"
    return f"::error {','.join(props)}::{escape_data(f'{d.code} {message}')}"


def render(report: Report) -> str:
    lines = [command(report, d) for d in report.diagnostics]
    return "\n".join(lines) + ("\n" if lines else "")
