"""``--output-format sarif``: SARIF 2.1.0 for GitHub code scanning.

One run; its tool driver lists every enabled rule (id, name, short and full
description and help from the rule's page, helpUri). Each result has its
physical location, the other halves of a cross-file conflict as related
locations, and its fix as artifact changes. Columns are Unicode code points
(``columnKind``), as in every other output format.

A notebook's cells are not lines of the ``.ipynb`` file, so a notebook result
is located on the file (no region), its message starts with the cell position,
and ``properties`` carries ``cell``, ``cellLine`` and ``cellColumn``; its fixes
are not expressed as replacements in the JSON file.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Optional

from . import Report, row_col, url

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"


def _uri(path: str) -> tuple:
    """(uri, uriBaseId or None): relative to the working directory where possible."""
    p = Path(path)
    if p.is_absolute():
        try:
            p = p.relative_to(Path.cwd())
        except ValueError:
            return p.as_uri(), None
    return "/".join(_quote(part) for part in p.as_posix().split("/")), SRCROOT


def _quote(part: str) -> str:
    from urllib.parse import quote

    return quote(part, safe="@!$&'()*+,;=-._~")


def _artifact(path: str) -> dict:
    uri, base = _uri(path)
    loc = {"uri": uri}
    if base:
        loc["uriBaseId"] = base
    return loc


def _region(span) -> dict:
    return {
        "startLine": span.line,
        "startColumn": span.col + 1,
        "endLine": span.end_line,
        "endColumn": span.end_col + 1,
    }


def _location(report: Report, path: str, span, message: Optional[str] = None, ident: Optional[int] = None) -> dict:
    physical = {"artifactLocation": _artifact(path)}
    w = report.locate(path, span.line, span.col)
    if w.cell is None:
        physical["region"] = _region(span)
    loc = {"physicalLocation": physical}
    if message is not None:
        if w.cell is not None:
            message = f"cell {w.cell}, line {w.row}, column {w.column}: {message}"
        loc["message"] = {"text": message}
    if ident is not None:
        loc["id"] = ident
    return loc


def _fix(d, text) -> dict:
    replacements = []
    for e in sorted(d.fix.edits, key=lambda e: (e.start, e.end)):
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
        "artifactChanges": [{"artifactLocation": _artifact(d.path), "replacements": replacements}],
    }


def _section(page: str, title: str) -> str:
    """The first paragraph of a ``## title`` section of a rule page, as plain text."""
    m = re.search(rf"^## {re.escape(title)}\s*\n(.*?)(?=^## |\Z)", page, re.S | re.M)
    if not m:
        return ""
    paragraph = m.group(1).strip().split("\n\n")[0]
    return " ".join(paragraph.split())


def _rule_descriptor(code: str, rule) -> dict:
    from ..rule_docs import page_text  # the page is the rule's long description

    page = page_text(code) or ""
    summary = getattr(rule, "summary", "") or code
    full = _section(page, "What fails") or summary
    descriptor = {
        "id": code,
        "name": getattr(rule, "name", "") or code,
        "shortDescription": {"text": summary},
        "fullDescription": {"text": full},
        "help": {"text": page.strip() or summary, "markdown": page.strip() or summary},
        "helpUri": url(code),
        "defaultConfiguration": {"level": "error"},
        "properties": {
            "fix": getattr(rule, "fix_availability", "never"),
            "fixApplicability": getattr(rule, "fix_applicability", "safe"),
        },
    }
    return descriptor


def as_sarif(report: Report) -> dict:
    from .._version import __version__

    codes = sorted(set(report.rules) | {d.code for d in report.diagnostics})
    index = {c: i for i, c in enumerate(codes)}
    results = []
    for d in report.diagnostics:
        w = report.locate(d.path, d.span.line, d.span.col)
        text = d.message if w.cell is None else f"cell {w.cell}, line {w.row}, column {w.column}: {d.message}"
        result = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": "error",
            "message": {"text": text},
            "locations": [_location(report, d.path, d.span)],
        }
        if w.cell is not None:
            result["properties"] = {"cell": w.cell, "cellLine": w.row, "cellColumn": w.column}
        if d.related:
            result["relatedLocations"] = [
                _location(report, r.path, r.span, r.message, i) for i, r in enumerate(d.related)
            ]
        if d.fix is not None and d.fix.edits and w.cell is None:
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
                "originalUriBaseIds": {SRCROOT: {"uri": Path(os.getcwd()).as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def render(report: Report) -> str:
    return json.dumps(as_sarif(report), indent=2) + "\n"
