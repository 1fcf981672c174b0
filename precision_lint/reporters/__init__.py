"""Reporters turn diagnostics into text: one module per ``--output-format``."""
from __future__ import annotations

from dataclasses import field
from .._dataclass import dataclass
from typing import Dict, List, Mapping, NamedTuple, Optional, Sequence, Set

from ..diagnostics import Diagnostic, Span
from ..workspace.notebook import boundary_lines, cell_position

FORMATS = ("full", "concise", "json", "github", "sarif")
DOCS_URL = "https://github.com/precision-lint/precision-lint/blob/main/rules/{code}.md"


@dataclass
class Report:
    """What a reporter may show: the findings and the context of the run."""

    diagnostics: Sequence[Diagnostic]
    texts: Dict[str, str] = field(default_factory=dict)  # path → text the positions refer to
    fixes_applied: int = 0
    unsafe_held_back: int = 0
    fix_mode: bool = False
    color: bool = False
    rules: Dict[str, type] = field(default_factory=dict)  # code → rule class (names, summaries)
    display_paths: Mapping[str, str] = field(default_factory=dict)  # path → how to show it
    notebooks: Set[str] = field(default_factory=set)  # paths whose text is a notebook's joined cells
    # Texts to quote in excerpts where they differ from ``texts`` (same lines): a notebook's
    # cells with their IPython lines (``%pip``, ``!nvidia-smi``) as written.
    display_texts: Dict[str, str] = field(default_factory=dict)
    _boundaries: Dict[str, List[int]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def shown(self, path: str) -> str:
        return self.display_paths.get(path, path)

    def locate(self, path: str, line: int, col: int) -> "Where":
        """Where a position (1-based line, 0-based column of the linted text) is, for humans:
        in a notebook, the code cell and the line within it."""
        if path not in self.notebooks:
            return Where(None, line, col + 1)
        if path not in self._boundaries:
            self._boundaries[path] = boundary_lines(self.texts.get(path) or "")
        cell, row = cell_position(self._boundaries[path], line)
        return Where(cell, row, col + 1)

    def where(self, path: str, line: int, col: int) -> str:
        """``train.py:12:5`` or ``notebook.ipynb:cell 3:12:5``."""
        w = self.locate(path, line, col)
        cell = f":cell {w.cell}" if w.cell is not None else ""
        return f"{self.shown(path)}{cell}:{w.row}:{w.column}"


class Where(NamedTuple):
    cell: Optional[int]  # 1-based code cell of a notebook; None for a Python file
    row: int  # 1-based, within the cell for a notebook
    column: int  # 1-based


def url(code: str) -> str:
    return DOCS_URL.format(code=code)


def row_col(text: Optional[str], offset: int) -> tuple:
    """1-based (row, column) of a character offset."""
    if not text:
        return (1, 1)
    offset = max(0, min(offset, len(text)))
    row = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return (row, col)


def start(span: Span) -> dict:
    return {"row": span.line, "column": span.col + 1}


def end(span: Span) -> dict:
    return {"row": span.end_line, "column": span.end_col + 1}


_MODULES = {"full": "full", "concise": "concise", "json": "json_format", "github": "github", "sarif": "sarif"}


def render(fmt: str, report: Report) -> str:
    """``report`` in the format ``fmt``; only that format's module is imported."""
    from importlib import import_module

    return import_module(f"{__name__}.{_MODULES[fmt]}").render(report)


def summary_lines(report: Report) -> List[str]:
    """ruff-style closing lines: counts, fixes applied, fixes available."""
    remaining = len(report.diagnostics)
    lines: List[str] = []
    if report.fix_mode and report.fixes_applied:
        total = remaining + report.fixes_applied
        lines.append(f"Found {total} error{'s' * (total != 1)} ({report.fixes_applied} fixed, {remaining} remaining).")
    elif remaining:
        lines.append(f"Found {remaining} error{'s' * (remaining != 1)}.")
    elif not report.fix_mode or not report.fixes_applied:
        lines.append("All checks passed!")
    fixable = sum(1 for d in report.diagnostics if d.fix is not None and d.fix.applicability == "safe")
    if fixable and not report.fix_mode:
        hidden = report.unsafe_held_back
        extra = f" ({hidden} hidden fix{'es' * (hidden != 1)} can be enabled with the `--unsafe-fixes` option)" if hidden else ""
        lines.append(f"[*] {fixable} fixable with the `--fix` option{extra}.")
    elif report.unsafe_held_back:
        n = report.unsafe_held_back
        lines.append(
            f"No fixes available ({n} hidden fix{'es' * (n != 1)} can be enabled with the `--unsafe-fixes` option)."
            if not fixable
            else f"{n} hidden fix{'es' * (n != 1)} can be enabled with the `--unsafe-fixes` option."
        )
    return lines
