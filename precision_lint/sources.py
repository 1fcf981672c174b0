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
from typing import Optional

BOM = b"\xef\xbb\xbf"


@dataclass
class SourceFile:
    path: str
    raw: bytes
    text: Optional[str]  # None when it cannot be decoded
    error: Optional[str] = None
    bom: bool = False

    @classmethod
    def read(cls, path: str) -> "SourceFile":
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
        except OSError as exc:
            return cls(path, b"", None, f"cannot read file: {exc.strerror or exc}")
        bom = raw.startswith(BOM)
        try:
            text = raw[len(BOM) :].decode("utf-8") if bom else raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return cls(path, raw, None, f"cannot decode as UTF-8 ({exc.reason} at byte {exc.start})")
        return cls(path, raw, text, None, bom)

    def encode(self, text: str) -> bytes:
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
