"""``--output-format github``: GitHub Actions workflow commands (annotations)."""
from __future__ import annotations

from . import Report


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(report: Report) -> str:
    lines = []
    for d in report.diagnostics:
        props = ",".join(
            [
                f"file={escape_property(report.shown(d.path))}",
                f"line={d.span.line}",
                f"col={d.span.col + 1}",
                f"endLine={d.span.end_line}",
                f"endColumn={d.span.end_col + 1}",
                f"title={escape_property(d.code)}",
            ]
        )
        message = d.message
        for r in d.related:
            message += f"\nRelated: {report.shown(r.path)}:{r.span.line}:{r.span.col + 1}: {r.message}"
        lines.append(f"::error {props}::{escape_data(f'{d.code} {message}')}")
    return "\n".join(lines) + ("\n" if lines else "")
