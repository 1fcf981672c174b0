"""Findings and fixes in LSP's terms: diagnostics per document, edits per document.

A Python buffer is one document. A notebook's findings are positioned in its joined text
(the code cells with boundary lines, see ``notebook.py``): each is published to the cell it
lies in, at the row within that cell; edits are computed per cell from the fixed text put
back into the cells. A related location in a file that is not open points at the file on
disk (for a closed notebook: its first line, the cell named in the message).
"""
from __future__ import annotations

import os
from typing import Dict, List, Optional, Sequence, Tuple

from lsprotocol import types as lsp
from pygls.uris import from_fs_path

from ..diagnostics import Diagnostic, Edit
from ..workspace.notebook import boundary_lines, cell_position
from ..reporters import url
from ..workspace.sources import SourceFile
from .checker import Checked
from .documents import Buffer
from .text import LineIndex, diff_edits

SOURCE = "precision-lint"


class Locator:
    """Offsets of a checked text → (document URI, LSP range)."""

    def __init__(self, uri: str, text: str, encoding: str, cells: Optional[Sequence[str]] = None) -> None:
        self.uri = uri
        self.index = LineIndex(text, encoding)
        self.cells = list(cells) if cells is not None else None  # cell URIs of a notebook
        self.boundaries = boundary_lines(text) if cells is not None else []

    def _point(self, offset: int) -> Tuple[Optional[int], lsp.Position]:
        line, column = self.index.position(offset)
        if self.cells is None:
            return None, lsp.Position(line, column)
        cell, row = cell_position(self.boundaries, line + 1)
        return cell, lsp.Position(row - 1, column)

    def location(self, start: int, end: int) -> Tuple[str, lsp.Range]:
        cell, first = self._point(start)
        end_cell, last = self._point(max(start, end))
        if cell is None:
            return self.uri, lsp.Range(first, last)
        if end_cell != cell:  # never across a cell boundary: stop at the end of the first line
            last = lsp.Position(first.line, first.character)
        uri = self.cells[cell - 1] if 1 <= cell <= len(self.cells) else self.cells[-1]
        return uri, lsp.Range(first, last)


def locator(checked: Checked, encoding: str) -> Locator:
    b = checked.buffer
    cells = [c.uri for c in b.cells] if b.cells is not None else None
    return Locator(b.uri, checked.source.text or "", encoding, cells)


class Related:
    """Locations of related findings, in open buffers or in files on disk."""

    def __init__(self, open_buffers: Dict[str, Checked], sources: Dict[str, SourceFile], encoding: str) -> None:
        self.encoding = encoding
        self.sources = sources
        self.open = {os.path.normcase(c.buffer.path): c for c in open_buffers.values()}
        self._locators: Dict[str, Locator] = {}

    def location(self, path: str, start: int, end: int, line: int, col: int) -> Tuple[lsp.Location, str]:
        """(where, prefix for the message)."""
        key = os.path.normcase(path)
        if key in self.open:
            if key not in self._locators:
                self._locators[key] = locator(self.open[key], self.encoding)
            uri, rng = self._locators[key].location(start, end)
            return lsp.Location(uri, rng), ""
        uri = from_fs_path(path) or path
        src = self.sources.get(path)
        if src is not None and src.notebook is not None and not src.notebook.keeps_lines:
            cell, row = cell_position(boundary_lines(src.text or ""), line)
            return lsp.Location(uri, lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0))), f"cell {cell}, line {row}: "
        if src is not None and src.text is not None:
            if path not in self._locators:
                self._locators[path] = Locator(uri, src.text, self.encoding)
            uri, rng = self._locators[path].location(start, end)
            return lsp.Location(uri, rng), ""
        pos = lsp.Position(max(line - 1, 0), col)
        return lsp.Location(uri, lsp.Range(pos, pos)), ""


def diagnostic(d: Diagnostic, where: Locator, related: Related) -> Tuple[str, lsp.Diagnostic]:
    """(document URI, the LSP diagnostic) of one finding."""
    uri, rng = where.location(d.span.start, d.span.end)
    info = []
    for r in d.related:
        loc, prefix = related.location(r.path, r.span.start, r.span.end, r.span.line, r.span.col)
        info.append(lsp.DiagnosticRelatedInformation(loc, prefix + r.message))
    fix = d.fix.applicability if d.fix is not None and d.fix.edits else None
    return uri, lsp.Diagnostic(
        range=rng,
        message=d.message,
        severity=lsp.DiagnosticSeverity.Error,
        code=d.code,
        code_description=lsp.CodeDescription(href=url(d.code)),
        source=SOURCE,
        related_information=info or None,
        data={"fix": fix, "noqa_row": d.noqa_row},
    )


def diagnostics(checked: Checked, open_buffers: Dict[str, Checked], sources, encoding: str) -> Dict[str, List[lsp.Diagnostic]]:
    """Every document of a checked buffer (a notebook: every code cell) → its diagnostics."""
    where = locator(checked, encoding)
    related = Related(open_buffers, sources, encoding)
    out: Dict[str, List[lsp.Diagnostic]] = {uri: [] for uri in checked.buffer.uris()}
    for d in checked.diagnostics:
        uri, item = diagnostic(d, where, related)
        out.setdefault(uri, []).append(item)
    return out


# --- edits --------------------------------------------------------------------------------------
def document_edits(buffer: Buffer, source: SourceFile, new_text: str, encoding: str) -> Dict[str, List[lsp.TextEdit]]:
    """URI → edits that turn the buffer's documents into ``new_text`` (the linted text after a
    fix: a notebook's joined cells). Raises NotebookError when it cannot be put into the cells."""
    if buffer.cells is None or source.notebook is None:
        old = source.text or ""
        if source.notebook is not None and source.notebook.keeps_lines:  # a Databricks source notebook
            old, new_text = source.notebook.file_text(old), source.notebook.file_text(new_text)
        return {buffer.uri: _text_edits(old, diff_edits(old, new_text), encoding)}
    cell_sources = source.notebook.cell_sources(new_text)
    out = {}
    for cell, new in zip(buffer.cells, cell_sources):
        if new != cell.text:
            out[cell.uri] = _text_edits(cell.text, diff_edits(cell.text, new), encoding)
    return out


def _text_edits(text: str, edits: Sequence[Edit], encoding: str) -> List[lsp.TextEdit]:
    index = LineIndex(text, encoding)
    out = []
    for e in edits:
        (l0, c0), (l1, c1) = index.position(e.start), index.position(e.end)
        out.append(lsp.TextEdit(lsp.Range(lsp.Position(l0, c0), lsp.Position(l1, c1)), e.content))
    return out


def workspace_edit(
    changes: Dict[str, List[lsp.TextEdit]], versions: Dict[str, Optional[int]], document_changes: bool
) -> lsp.WorkspaceEdit:
    """Versioned document changes where the client supports them (it refuses an edit made for
    a text that has changed since), else plain changes."""
    if document_changes:
        return lsp.WorkspaceEdit(
            document_changes=[
                lsp.TextDocumentEdit(lsp.OptionalVersionedTextDocumentIdentifier(uri, versions.get(uri)), edits)
                for uri, edits in changes.items()
            ]
        )
    return lsp.WorkspaceEdit(changes=dict(changes))
