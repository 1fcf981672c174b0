"""The files an editor has open, as the linter sees them.

A :class:`Buffer` is a snapshot, taken on the server's event loop, of one open Python file
or one open notebook (its code cells, in order); the checks run on snapshots in a worker
thread, never on the live documents. :meth:`Buffer.source` turns it into the
:class:`SourceFile` the engine checks: the buffer's text in place of the file's.
"""
from __future__ import annotations

import os
from .._dataclass import dataclass
from typing import Dict, Optional, Tuple

from ..workspace.notebook import from_cells, is_notebook
from ..workspace.sources import SourceFile


@dataclass(frozen=True)
class Cell:
    """One code cell of an open notebook document, as the editor last sent it."""

    uri: str
    version: Optional[int]
    text: str


@dataclass(frozen=True)
class Buffer:
    """An open file: a text document, or a notebook document with its code cells."""

    uri: str  # the text document's URI, or the notebook's
    path: str  # absolute path of the file it will be saved to (a made-up name when it has none)
    version: Optional[int]
    text: str = ""  # a Python file's text (unused for a notebook)
    cells: Optional[Tuple[Cell, ...]] = None  # a notebook's code cells, in order
    on_disk: bool = True  # a file: URI (an untitled buffer is checked on its own)

    @property
    def is_notebook(self) -> bool:
        return self.cells is not None

    def uris(self) -> Tuple[str, ...]:
        """The documents its diagnostics are published to (a notebook's: its cells)."""
        return tuple(c.uri for c in self.cells) if self.cells is not None else (self.uri,)

    def source(self, path: str, disk: Optional[SourceFile] = None) -> SourceFile:
        """What the engine checks, named ``path``; ``disk``: the saved file, if any (a buffer
        that matches it is not "unsaved", so its facts may go to the disk cache)."""
        if self.cells is not None:
            raw = from_cells([c.text for c in self.cells])
        else:
            raw = self.text.encode("utf-8", "surrogatepass")
        src = SourceFile.from_bytes(path, raw, unsaved=True)
        if disk is not None and disk.text is not None and disk.text == src.text:
            src.unsaved = False
        return src


def text_buffer(uri: str, path: str, version: Optional[int], text: str, on_disk: bool = True) -> Buffer:
    return Buffer(uri, path, version, text=text, on_disk=on_disk)


def notebook_buffer(uri: str, path: str, version: Optional[int], cells, on_disk: bool = True) -> Buffer:
    return Buffer(uri, path, version, cells=tuple(cells), on_disk=on_disk)


class DiskFiles:
    """Reads the project's files, re-reading only those whose size or modification time
    changed since the last check (a check runs at every pause in typing)."""

    def __init__(self) -> None:
        self._files: Dict[str, Tuple[tuple, SourceFile]] = {}

    def read(self, path: str) -> SourceFile:
        key = os.path.abspath(path)
        try:
            st = os.stat(path)
        except OSError:
            self._files.pop(key, None)
            return SourceFile.read(path)
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        known = self._files.get(key)
        if known is not None and known[0] == stamp and known[1].path == path:
            return known[1]
        src = SourceFile.read(path)
        self._files[key] = (stamp, src)
        return src

    def saved(self, path: str) -> Optional[SourceFile]:
        """The file as saved, or None when there is none."""
        return self.read(path) if os.path.isfile(path) else None


def is_checked(path: str, language_id: Optional[str] = None) -> bool:
    """Whether the server checks a text document: Python files (and untitled Python buffers);
    a notebook opened as a text document (a client without notebook support) is not."""
    if is_notebook(path):
        return False
    return path.endswith(".py") or language_id == "python"
