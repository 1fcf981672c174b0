"""``--output-format sarif``: SARIF 2.1.0 for GitHub code scanning."""
from __future__ import annotations

import json
import os
from pathlib import Path

from . import Report, row_col, url

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _uri(path: str) -> str:
    p = Path(path)
    if p.is_absolute():
        try:
            return p.relative_to(Path.cwd()).as_posix()
        except ValueError:
            return p.as_uri()
    return p.as_posix()


def _region(span) -> dict:
    return {
        "startLine": span.line,
        "startColumn": span.col + 1,
        "endLine": span.end_line,
        "endColumn": span.end_col + 1,
    }


def _location(path: str, span, message: str = None, ident: int = None) -> dict:
    loc = {"physicalLocation": {"artifactLocation": {"uri": _uri(path)}, "region": _region(span)}}
    if message is not None:
        loc["message"] = {"text": message}
    if ident is not None:
        loc["id"] = ident
    return loc


def _fix(d, text) -> dict:
    replacements = []
    for e in d.fix.edits:
        r0, c0 = row_col(text, e.start)
        r1, c1 = row_col(text, e.end)
        replacements.append(
            {
                "deletedRegion": {"startLine": r0, "startColumn": c0, "endLine": r1, "endColumn": c1},
                "insertedContent": {"text": e.content},
            }
        )
    return {
        "description": {"text": f"{d.fix.message} ({d.fix.applicability})"},
        "artifactChanges": [{"artifactLocation": {"uri": _uri(d.path)}, "replacements": replacements}],
    }


def _rule_descriptor(code: str, rule) -> dict:
    from ..rule_docs import page_text  # the page is the rule's long description

    page = page_text(code) or ""
    summary = getattr(rule, "summary", "") or code
    return {
        "id": code,
        "name": getattr(rule, "name", code),
        "shortDescription": {"text": summary},
        "fullDescription": {"text": page.strip() or summary},
        "help": {"text": summary, "markdown": page or summary},
        "helpUri": url(code),
        "defaultConfiguration": {"level": "error"},
        "properties": {
            "fix": getattr(rule, "fix_availability", "never"),
            "fixApplicability": getattr(rule, "fix_applicability", "safe"),
        },
    }


def as_sarif(report: Report) -> dict:
    from .. import __version__

    codes = sorted(set(report.rules) | {d.code for d in report.diagnostics})
    index = {c: i for i, c in enumerate(codes)}
    results = []
    for d in report.diagnostics:
        result = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": "error",
            "message": {"text": d.message},
            "locations": [_location(d.path, d.span)],
        }
        if d.related:
            result["relatedLocations"] = [
                _location(r.path, r.span, r.message, i) for i, r in enumerate(d.related)
            ]
        if d.fix is not None:
            result["fixes"] = [_fix(d, report.texts.get(d.path))]
        results.append(result)
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "precision-lint",
                        "version": __version__,
                        "informationUri": "https://github.com/precision-lint/precision-lint",
                        "rules": [_rule_descriptor(c, report.rules.get(c)) for c in codes],
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path(os.getcwd()).as_uri() + "/"}},
                "results": results,
            }
        ],
    }


def render(report: Report) -> str:
    return json.dumps(as_sarif(report), indent=2) + "\n"
