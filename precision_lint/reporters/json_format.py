"""``--output-format json``: one JSON array, ruff's fields plus ``related``.

For a notebook, ``cell`` is the 1-based code cell (as in ruff) and every row is
a row within that cell; for a Python file ``cell`` is null. Each edit of a fix
carries its own ``cell`` too: the capability probe a fix adds can land in another
cell than the finding.
"""
from __future__ import annotations

import json
import os

from . import Report, row_col, url


def _point(report: Report, path: str, line: int, col: int) -> dict:
    w = report.locate(path, line, col)
    return {"row": w.row, "column": w.column}


def _edit(report: Report, path: str, edit) -> dict:
    text = report.texts.get(path)
    r0, c0 = row_col(text, edit.start)
    r1, c1 = row_col(text, edit.end)
    return {
        "content": edit.content,
        "cell": report.locate(path, r0, c0 - 1).cell,
        "location": _point(report, path, r0, c0 - 1),
        "end_location": _point(report, path, r1, c1 - 1),
    }


def as_dicts(report: Report) -> list:
    out = []
    for d in report.diagnostics:
        fix = None
        if d.fix is not None:
            fix = {
                "applicability": d.fix.applicability,
                "message": d.fix.message,
                "edits": [_edit(report, d.path, e) for e in d.fix.edits],
            }
        where = report.locate(d.path, d.span.line, d.span.col)
        out.append(
            {
                "code": d.code,
                "message": d.message,
                "filename": os.path.abspath(d.path),
                "cell": where.cell,
                "location": {"row": where.row, "column": where.column},
                "end_location": _point(report, d.path, d.span.end_line, d.span.end_col),
                "fix": fix,
                "noqa_row": report.locate(d.path, d.noqa_row, 0).row,
                "url": url(d.code),
                "related": [
                    {
                        "filename": os.path.abspath(r.path),
                        "cell": report.locate(r.path, r.span.line, r.span.col).cell,
                        "location": _point(report, r.path, r.span.line, r.span.col),
                        "message": r.message,
                    }
                    for r in d.related
                ],
            }
        )
    return out


def render(report: Report) -> str:
    return json.dumps(as_dicts(report), indent=2) + "\n"
