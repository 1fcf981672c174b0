"""``--output-format json``: one JSON array, ruff's fields plus ``related``."""
from __future__ import annotations

import json
import os

from . import Report, end, row_col, start, url


def _edit(text, edit) -> dict:
    r0, c0 = row_col(text, edit.start)
    r1, c1 = row_col(text, edit.end)
    return {
        "content": edit.content,
        "location": {"row": r0, "column": c0},
        "end_location": {"row": r1, "column": c1},
    }


def as_dicts(report: Report) -> list:
    out = []
    for d in report.diagnostics:
        text = report.texts.get(d.path)
        fix = None
        if d.fix is not None:
            fix = {
                "applicability": d.fix.applicability,
                "message": d.fix.message,
                "edits": [_edit(text, e) for e in d.fix.edits],
            }
        out.append(
            {
                "code": d.code,
                "message": d.message,
                "filename": os.path.abspath(d.path),
                "location": start(d.span),
                "end_location": end(d.span),
                "fix": fix,
                "noqa_row": d.noqa_row,
                "url": url(d.code),
                "related": [
                    {"filename": os.path.abspath(r.path), "location": start(r.span), "message": r.message}
                    for r in d.related
                ],
            }
        )
    return out


def render(report: Report) -> str:
    return json.dumps(as_dicts(report), indent=2) + "\n"
