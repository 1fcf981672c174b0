"""Reading and writing the files being linted, without losing a byte.

A :class:`SourceFile` keeps the exact bytes read, so a file that is not changed
is never rewritten, and one that cannot be decoded is reported and left alone.
Writes are atomic: a temporary file in the same folder replaces the original in
one ``os.replace``, keeping its permission bits.
"""
from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # pragma: no cover
    from .notebook import Notebook

BOM = b"\xef\xbb\xbf"


@dataclass
class SourceFile:
    path: str
    raw: bytes
    text: Optional[str]  # None when it cannot be decoded
    error: Optional[str] = None
    bom: bool = False
    # A Jupyter notebook: ``text`` is its code cells joined into one module (see notebook.py).
    notebook: Optional["Notebook"] = None
    # An editor's buffer (or stdin) whose text is not what the file on disk holds: its facts
    # are kept in memory only, never written to the disk cache.
    unsaved: bool = False

    @classmethod
    def read(cls, path: str) -> "SourceFile":
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
        except OSError as exc:
            return cls(path, b"", None, f"cannot read file: {exc.strerror or exc}")
        return cls.from_bytes(path, raw)

    @classmethod
    def from_bytes(cls, path: str, raw: bytes, unsaved: bool = False) -> "SourceFile":
        """A file's content as if read from ``path`` (a Python file or, by its suffix, a notebook)."""
        from .notebook import NotebookError, is_notebook, parse

        if is_notebook(path):
            try:
                nb = parse(raw)
            except NotebookError as exc:
                return cls(path, raw, None, str(exc), unsaved=unsaved)
            return cls(path, raw, nb.text, None, False, nb, unsaved)
        bom = raw.startswith(BOM)
        try:
            text = raw[len(BOM) :].decode("utf-8") if bom else raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return cls(path, raw, None, f"cannot decode as UTF-8 ({exc.reason} at byte {exc.start})", unsaved=unsaved)
        return cls(path, raw, text, None, bom, unsaved=unsaved)

    def encode(self, text: str) -> bytes:
        """The bytes to write for ``text``; for a notebook, the notebook with its cells updated
        (raises ``notebook.NotebookError`` when the text cannot be mapped back to the cells)."""
        if self.notebook is not None:
            return self.notebook.encode(text)
        data = text.encode("utf-8")
        return BOM + data if self.bom else data


def atomic_write(path: str, data: bytes) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = None
    fd, tmp = tempfile.mkstemp(prefix=".precision-lint-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
