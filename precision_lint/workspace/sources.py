"""Reading and writing the files being linted, without losing a byte.

A :class:`SourceFile` keeps the exact bytes read, so a file that is not changed
is never rewritten, and one that cannot be decoded is reported and left alone.
A PEP 263 coding cookie (``# -*- coding: latin-1 -*-``) is honoured as Python
honours it: the file is read in that encoding and written back in it.
Writes are atomic: a temporary file in the same folder replaces the original in
one ``os.replace``, keeping its permission bits; through a symbolic link the
target is written and the link stays a link.
"""
from __future__ import annotations

import codecs
import hashlib
import io
import os
import stat
import sys
import tokenize
from .._dataclass import dataclass
from typing import TYPE_CHECKING, Dict, Iterable, Iterator, MutableMapping, Optional, Tuple, Union

if TYPE_CHECKING:  # pragma: no cover
    from .notebook import Notebook

BOM = b"\xef\xbb\xbf"


def held(text: Optional[str]) -> Union[str, bytes, None]:
    """How a text is kept while a run holds it: as its UTF-8 bytes where that is smaller than
    the string. A string takes 1, 2 or 4 bytes per character, by its widest one: one emoji in
    a docstring makes a file 4 bytes a character (transformers: 1,483 of its 2,860 files hold
    one, 93 MB as strings for 28 MB of UTF-8), and a run holds every text to its end (#23)."""
    if text is None or text.isascii():
        return text
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (an editor's buffer): kept as it is
        return text
    return data if sys.getsizeof(data) < sys.getsizeof(text) else text


def text_of(kept: Union[str, bytes, None]) -> Optional[str]:
    """The text :func:`held` kept."""
    return kept.decode("utf-8") if kept.__class__ is bytes else kept


class _HeldText:
    """``SourceFile.text``, kept as :func:`held` keeps it and decoded each time it is read:
    decoding every non-ASCII text of transformers takes 26 ms, and a run reads each a few
    times. ``SourceFile.kept_text`` is the text as kept (what a worker process is sent)."""

    def __get__(self, src, owner=None):
        if src is None:
            raise AttributeError("text")  # the field has no default
        return text_of(src.__dict__["kept_text"])

    def __set__(self, src, text: Optional[str]) -> None:
        src.__dict__["kept_text"] = held(text)


@dataclass
class SourceFile:
    """A file's bytes and text as one check reads them once (a notebook as its joined code
    cells, an editor's unsaved buffer): every stage and every fix works on this text, never
    re-reading the disk."""

    path: str
    # The bytes read; None for a UTF-8 Python file read whole, whose bytes are its text encoded
    # again (:meth:`content`): a tree's bytes are not held twice (53 MB of transformers).
    raw: Optional[bytes]
    # None when it cannot be decoded. Kept as ``held`` keeps it: a descriptor, not a default
    # (``SourceFile(path, raw)`` without a text is refused, as for any field without one).
    text: Optional[str] = _HeldText()
    error: Optional[str] = None
    bom: bool = False
    # The file's PEP 263 encoding when it is not UTF-8 (``iso-8859-1`` ...); None: UTF-8.
    encoding: Optional[str] = None
    # Why ``text`` is None: "read" (an OS error), "decode" (bytes not in its encoding) or
    # "syntax" (a notebook that is not valid notebook JSON).
    error_kind: Optional[str] = None
    # A Jupyter notebook: ``text`` is its code cells joined into one module (see notebook.py);
    # or a Databricks notebook in source form, whose text keeps the file's lines.
    notebook: Optional["Notebook"] = None
    # An editor's buffer (or stdin) whose text is not what the file on disk holds: its facts
    # are kept in memory only, never written to the disk cache.
    unsaved: bool = False
    # The SHA-1 of the bytes read (what a cached run is keyed by), and the file's stamp when
    # they were read (:func:`stamp`): a later run that finds the same stamp knows the digest
    # without reading the file.
    digest: str = ""
    stamp: Optional[Tuple[int, int, int, int]] = None

    @classmethod
    def read(cls, path: str) -> "SourceFile":
        try:
            with open(path, "rb") as fh:
                stamped = stamp(os.fstat(fh.fileno()))  # before reading: a write after it changes the stamp
                raw = fh.read()
        except OSError as exc:
            return cls(path, b"", None, f"cannot read file: {exc.strerror or exc}", error_kind="read")
        src = cls.from_bytes(path, raw)
        src.stamp = stamped
        return src

    @classmethod
    def from_bytes(cls, path: str, raw: bytes, unsaved: bool = False) -> "SourceFile":
        """A file's content as if read from ``path`` (a Python file or, by its suffix, a notebook)."""
        src = cls._decoded(path, raw, unsaved)
        src.digest = hashlib.sha1(raw).hexdigest()
        if src.has_text and src.notebook is None and src.encoding is None:
            src.raw = None  # UTF-8 decodes one way: encoding the text again gives these bytes
        return src

    def content(self) -> bytes:
        """The exact bytes the file held when it was read."""
        if self.raw is not None:
            return self.raw
        kept = self.kept_text
        data = kept if kept.__class__ is bytes else (kept or "").encode("utf-8")
        return BOM + data if self.bom else data

    def utf8(self) -> bytes:
        """The text encoded as UTF-8 (lone surrogates as they are: ``surrogatepass``); b"" for
        no text. Kept so already where the text is not ASCII."""
        kept = self.kept_text
        if kept.__class__ is bytes:
            return kept
        return (kept or "").encode("utf-8", "surrogatepass")

    @property
    def has_text(self) -> bool:
        """``self.text is not None``, without decoding it."""
        return self.kept_text is not None

    @classmethod
    def _decoded(cls, path: str, raw: bytes, unsaved: bool) -> "SourceFile":
        from .notebook import NotebookError, is_notebook, parse

        if is_notebook(path):
            try:
                nb = parse(raw)
            except NotebookError as exc:
                return cls(path, raw, None, str(exc), unsaved=unsaved, error_kind="syntax")
            return cls(path, raw, nb.text, None, False, notebook=nb, unsaved=unsaved)
        try:
            encoding = source_encoding(raw)
        except SyntaxError as exc:  # an unknown codec named in the cookie, or a cookie against the BOM
            if "invalid or missing" not in str(exc.msg):
                return cls(path, raw, None, f"bad coding cookie: {exc.msg}", unsaved=unsaved, error_kind="decode")
            encoding = "utf-8"  # no cookie, first lines not UTF-8: say where below
        bom = raw.startswith(BOM)
        try:
            text = raw[len(BOM) :].decode("utf-8") if bom else raw.decode(encoding)
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            name = "UTF-8" if encoding == "utf-8" else encoding
            hint = " and has no PEP 263 coding cookie" if encoding == "utf-8" else ""
            return cls(
                path,
                raw,
                None,
                f"cannot decode as {name} ({exc.reason} at byte {exc.start}, line {line}){hint}",
                unsaved=unsaved,
                error_kind="decode",
            )
        if text.startswith("# Databricks"):  # maybe one in source form (notebook.DATABRICKS_HEADER): imported only then
            from .notebook import is_databricks, parse_databricks

            if is_databricks(path, text):  # a Databricks notebook in source form: read as its cells
                nb = parse_databricks(raw, text, encoding, bom)
                return cls(path, raw, nb.text, None, bom, None if encoding == "utf-8" else encoding, notebook=nb, unsaved=unsaved)
        return cls(path, raw, text, None, bom, None if encoding == "utf-8" else encoding, unsaved=unsaved)

    def encode(self, text: str) -> bytes:
        """The bytes to write for ``text``; for a notebook, the notebook with its cells updated
        (raises ``notebook.NotebookError`` when the text cannot be mapped back to the cells)."""
        if self.notebook is not None:
            return self.notebook.encode(text)
        data = text.encode(self.encoding or "utf-8")
        return BOM + data if self.bom else data


def stamp(st: os.stat_result) -> Tuple[int, int, int, int]:
    """What changes whenever a file's content may have: its size, modification and change
    times (nanoseconds) and inode (ruff's cache trusts the modification time alone; the
    change time also catches a write that restores the old modification time)."""
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def source_encoding(raw: bytes) -> str:
    """The codec Python reads ``raw`` with: its PEP 263 cookie, else UTF-8 (normalised names:
    ``latin-1`` is ``iso-8859-1``). Raises SyntaxError as Python does for a bad cookie."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    encoding = codecs.lookup(encoding).name
    return "utf-8" if encoding in ("utf-8", "utf-8-sig") else encoding


def write_target(path: str) -> str:
    """The file a write to ``path`` lands in: through symbolic links, their final target
    (replacing the link itself would turn it into a copy)."""
    return os.path.realpath(path) if os.path.islink(path) else path


class WriteRefused(Exception):
    """Why fixed bytes were not written over a file (one line, for the user)."""


def write_over(src: SourceFile, data: bytes) -> str:
    """Write ``data`` over the file ``src`` was read from; returns the file written (a link's
    target). Refuses, leaving the file as it is, when it changed on disk since it was read
    (another editor or a formatter wrote it), is read-only, or cannot be written."""
    target = write_target(src.path)
    try:
        with open(target, "rb") as fh:
            now = fh.read()
        mode = os.stat(target).st_mode
    except OSError as exc:
        raise WriteRefused(f"cannot read it back: {exc.strerror or exc}") from None
    if hashlib.sha256(now).digest() != hashlib.sha256(src.content()).digest():
        raise WriteRefused("it changed on disk after it was read; run precision-lint again")
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(target, os.W_OK):
        raise WriteRefused("the file is read-only")
    try:
        atomic_write(target, data)
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename and exc.filename != target else ""
        raise WriteRefused(f"cannot write{where}: {exc.strerror or exc}") from None
    return target


def atomic_write(path: str, data: bytes) -> None:
    path = write_target(path)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = None
    import tempfile  # only a run that writes

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


class Texts(MutableMapping):
    """path → text of a run's files that have one, each decoded from its :class:`SourceFile`
    when asked: a dict of every text holds them all decoded at once, as strings (see
    :func:`held`), from the start of a run to its report. A text set here (a fix's) is held as
    given. Iterated in the order of the sources, as the dict it stands for."""

    def __init__(self, sources: Iterable[SourceFile]) -> None:
        self._sources: Dict[str, SourceFile] = {s.path: s for s in sources if s.has_text}
        self._set: Dict[str, str] = {}

    def __getitem__(self, path: str) -> str:
        found = self._set.get(path)
        return found if found is not None else self._sources[path].text

    def __setitem__(self, path: str, text: str) -> None:
        self._set[path] = text

    def __delitem__(self, path: str) -> None:
        if path not in self:
            raise KeyError(path)
        self._set.pop(path, None)
        self._sources.pop(path, None)

    def __contains__(self, path) -> bool:
        return path in self._set or path in self._sources

    def __iter__(self) -> Iterator[str]:
        yield from self._sources
        yield from (path for path in self._set if path not in self._sources)

    def __len__(self) -> int:
        return len(self._sources) + sum(1 for path in self._set if path not in self._sources)
