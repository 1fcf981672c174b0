"""``%%writefile train.py`` cells: the modules a notebook writes, checked as those modules.

Kaggle and Colab users often write their training script from a cell and run it
with ``!python train.py`` or ``!accelerate launch train.py``, or import it in a
later cell. That body is not code of the notebook's kernel: it is the module
``train``. So it is checked as its own module (its own names, its own findings),
takes part in the project join under that name (a cell's ``from train import
build_model`` finds it, as the kernel would find the file it wrote in its working
directory), and is kept out of the notebook's own module.

How, without a second copy of anything: the notebook's joined text (``notebook.py``)
holds each such body verbatim. Here

- :func:`modules` cuts the bodies out of the joined text as they are now (also after
  fixes), one module per written file: a ``%%writefile`` starts it, each later
  ``%%writefile -a`` of the same file appends a *segment* (from its own cell);
- :func:`masked` is the joined text with those bodies blanked to comments of the same
  length, what the notebook's own module is read from: every offset, line and column
  of the rest stays what it is in the joined text;
- :class:`Remapper` moves the findings of a written module to the notebook: a position in
  the module is the same character in its cell of the joined text (a shift by the
  segment's offset), so fixes edit the cell in place, and the reporters, ``--add-noqa``
  and the language server see a finding in ``cell N, line L`` like any other.

A ``%%writefile config.yaml`` cell (``.yml``, ``.json``, ``.toml``) is a config file the same
way: its lines are comments of the same length in the joined text, and
:func:`config_files` hands its text to ``configfiles.ConfigFiles``, so a script that loads
``config.yaml`` by that literal path reads the cell (before any file on disk), and a value
found there points into the cell.

The file itself is never read or written. A file written twice (``%%writefile
train.py`` in two cells) is two versions: the last one is the module ``train``; an
earlier one is checked under a name no import finds. A ``train.py`` found on disk where
the notebook writes it (left by an earlier run) is still checked as the file it is, but
imports find the cell's module: running the notebook overwrites that file.
"""
from __future__ import annotations

import dataclasses
import os
import re
from .._dataclass import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .configfiles import is_config_file
from ..diagnostics import Diagnostic, Edit, Fix, Related, Span
from .notebook import _OTHER_FILE, Notebook, blank_line, boundary_lines, cell_position, cell_references
from .sources import SourceFile


@dataclass(frozen=True)
class Segment:
    """One cell's body: where it is in the joined text and where in the module's text."""

    cell: int  # code cell number
    start: int  # offset of the body's first character in the joined text
    line: int  # 1-based line of the body's first line in the joined text
    module_start: int  # offset of the same character in the module's text
    module_line: int  # its 1-based line in the module's text
    length: int  # characters


@dataclass(frozen=True)
class WrittenModule:
    """A module a notebook writes with ``%%writefile``: its text cut out of the joined cells and
    the segments that map each of its offsets back to its cell, so it is checked as the module
    it becomes and its findings land in the notebook."""

    notebook: str  # the notebook's path
    path: str  # the module's own path in the run: ``nb.ipynb:cell3:train.py`` (no space: messages name it as a file)
    target: str  # the file the cells write, as written
    naming: Tuple[str, bool, str]  # (module name, is a package, root), as discovery.module_name
    text: str
    segments: Tuple[Segment, ...]
    # The file on disk the notebook leaves behind (the last version of it), where the notebook
    # has a place on disk: a file found there is a stale copy, never the module imports find.
    file: Optional[str] = None

    @property
    def is_config(self) -> bool:
        return is_config(self.target)

    def segment_at(self, offset: int, end: bool = False) -> Optional[Segment]:
        """The segment holding module offset ``offset`` (an end offset may close a segment)."""
        for seg in self.segments:
            if seg.module_start <= offset < seg.module_start + seg.length or (
                end and offset == seg.module_start + seg.length
            ):
                return seg
        if self.segments and offset == len(self.text):  # an insertion at the very end
            return self.segments[-1]
        return None


_WRITTEN_PATH = re.compile(r":cell\d+:[^/\\:]+$")  # the tail :func:`written_path` writes


def written_path(notebook: str, cell: int, target: str) -> str:
    """:attr:`WrittenModule.path` of the module cell ``cell`` of ``notebook`` writes to
    ``target``: ``nb.ipynb:cell3:train.py``."""
    return f"{notebook}:cell{cell}:{os.path.basename(target)}"


def is_written_module(path: str) -> bool:
    """Whether ``path`` names a module a notebook writes (:func:`written_path`), which is
    checked apart from the notebook's own cells."""
    return _WRITTEN_PATH.search(path) is not None


def is_config(target: str) -> bool:
    """A written config file (``config.yaml``), not a module."""
    return is_config_file(target)


def _chunks(text: str) -> List[Tuple[int, int, str]]:
    """(offset, 1-based first line, chunk) of each cell's part of a joined text."""
    out: List[Tuple[int, int, str]] = []
    bounds = set(boundary_lines(text))
    offset, start, start_line, lines = 0, 0, 1, []
    for n, line in enumerate(text.splitlines(keepends=True), start=1):
        if n in bounds:
            out.append((start, start_line, "".join(lines)))
            start, start_line, lines = offset + len(line), n + 1, []
        else:
            lines.append(line)
        offset += len(line)
    out.append((start, start_line, "".join(lines)))
    return out


def modules(path: str, notebook: Notebook, text: str, naming: Tuple[str, bool, str]) -> List[WrittenModule]:
    """The Python modules and config files the ``%%writefile`` cells of ``notebook`` write, cut
    from its joined ``text``; ``naming`` is the notebook's own (its root is theirs: the
    kernel's folder). A config file's lines are comments in ``text``, of the same length: its
    text is the cell's as written."""
    writers = [c for c in notebook.cells if c.written is not None]
    if not writers:
        return []
    chunks = _chunks(text)
    if len(chunks) != len(notebook.cells):
        return []
    versions: List[Tuple[str, List[Tuple[int, int, int, str]]]] = []  # (target, [(cell, offset, line, body)])
    current: Dict[str, int] = {}  # normalised target → index in versions
    for cell in writers:
        offset, line, chunk = chunks[cell.number - 1]
        first = chunk.splitlines(keepends=True)[:1]
        skip = len(first[0]) if first else 0
        key = os.path.normpath(cell.written.target)
        body = chunk[skip:]
        if cell.written.is_config:
            original = "".join(cell.source.splitlines(keepends=True)[1:])
            body = original if len(original) == len(body) else original + "\n"
        if cell.written.append and key in current:
            versions[current[key]][1].append((cell.number, offset + skip, line + 1, body))
        else:  # a new file (appending to a file the notebook never wrote: it starts here)
            current[key] = len(versions)
            versions.append((cell.written.target, [(cell.number, offset + skip, line + 1, body)]))
    out = []
    for index, (target, bodies) in enumerate(versions):
        latest = current[os.path.normpath(target)] == index
        first_cell = bodies[0][0]
        segments, parts, at, at_line = [], [], 0, 1
        for cell_number, offset, line, body in bodies:
            segments.append(Segment(cell_number, offset, line, at, at_line, len(body)))
            parts.append(body)
            at += len(body)
            at_line += len(body.splitlines())
        out.append(
            WrittenModule(
                notebook=path,
                path=written_path(path, first_cell, target),
                target=target,
                naming=_naming(path, target, naming, None if latest else first_cell),
                text="".join(parts),
                segments=tuple(segments),
                file=_file(path, target) if latest and (naming[2] or is_config(target)) else None,
            )
        )
    return out


def _naming(notebook: str, target: str, naming: Tuple[str, bool, str], version: Optional[int]) -> Tuple[str, bool, str]:
    """The module name a written file is imported as, from the kernel's working directory
    (the notebook's folder): ``src/train.py`` is ``src.train`` where ``src`` is a package on
    disk, else ``train`` under ``src``; an absolute path (``/kaggle/working/train.py``) is taken
    as the working directory's. An earlier version of a file written again gets a name no
    import finds."""
    stem = os.path.splitext(os.path.basename(target))[0]
    if not naming[2] or os.path.isabs(target):  # no place on disk (a text checked alone)
        name, is_package, root = stem, False, naming[2]
    else:
        from .discovery import module_name

        name, is_package, root = module_name(os.path.join(os.path.dirname(os.path.abspath(notebook)), target))
    if version is not None:
        name = f"{name}-cell{version}"
    return name, is_package, root


def _file(notebook: str, target: str) -> str:
    """The file a cell writes, for a kernel started in the notebook's folder."""
    if os.path.isabs(target):
        target = os.path.basename(target)  # as _naming: the working directory stands for it
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(notebook)), target))


def sources(src: SourceFile, written: Sequence[WrittenModule]) -> List[SourceFile]:
    """The written modules as sources of a run (never read from or written to disk)."""
    return [SourceFile(m.path, b"", m.text, unsaved=src.unsaved) for m in written if not m.is_config]


def config_files(written: Iterable[WrittenModule]) -> Dict[str, Tuple[str, str]]:
    """The config files the notebooks write: file on disk → (its path in the run, its text);
    ``configfiles.ConfigFiles`` reads them from here before the disk (the last one written wins)."""
    return {m.file: (m.path, m.text) for m in written if m.is_config and m.file}


def masked(text: str, written: Iterable[WrittenModule]) -> str:
    """``text`` with every written module's body replaced by comments of the same length:
    what the notebook's own module is read from."""
    spans = sorted((s.start, s.start + s.length) for m in written if not m.is_config for s in m.segments)
    if not spans:
        return text
    parts, at = [], 0
    for start, end in spans:
        parts.append(text[at:start])
        parts.append(_blank(text[start:end]))
        at = end
    parts.append(text[at:])
    return "".join(parts)


def _blank(body: str) -> str:
    """Each line as a comment of the same length (``#`` and spaces); endings kept."""
    return "".join(blank_line(line) for line in body.splitlines(keepends=True))


# --- findings back into the notebook ------------------------------------------------------
class Remapper:
    """Moves positions of written modules into their notebooks' joined texts."""

    def __init__(self, written: Sequence[WrittenModule], texts: Dict[str, str]) -> None:
        self.by_path = {m.path: m for m in written}
        self.texts = texts  # notebook path → joined text
        # notebook path → offset ranges of its ``%%writefile`` cells (first line included)
        self.cells: Dict[str, List[Tuple[int, int]]] = {}
        for m in written:
            for seg in m.segments:
                text = texts[m.notebook]
                line_start = text.rfind("\n", 0, max(seg.start - 1, 0)) + 1  # the %%writefile line
                self.cells.setdefault(m.notebook, []).append((line_start, seg.start + seg.length))

    def span(self, module: WrittenModule, span: Span) -> Optional[Span]:
        seg = module.segment_at(span.start)
        if seg is None:
            return None
        shift = seg.start - seg.module_start
        lines = seg.line - seg.module_line
        end = min(span.end, seg.module_start + seg.length)
        end_line, end_col = (span.end_line, span.end_col) if end == span.end else _line_col(module.text, end)
        return Span(span.line + lines, span.col, end_line + lines, end_col, span.start + shift, end + shift)

    def edit(self, module: WrittenModule, edit: Edit) -> Optional[Edit]:
        seg = module.segment_at(edit.start)
        if seg is None or seg is not module.segment_at(edit.end, end=True) and edit.end != edit.start:
            return None
        if edit.end > seg.module_start + seg.length:
            return None
        shift = seg.start - seg.module_start
        return Edit(edit.start + shift, edit.end + shift, edit.content)

    def fix(self, module: WrittenModule, fix: Optional[Fix]) -> Optional[Fix]:
        if fix is None:
            return None
        edits = [self.edit(module, e) for e in fix.edits]
        if any(e is None for e in edits):  # across two appended cells: cannot be put in one
            return None
        return dataclasses.replace(fix, edits=tuple(edits))

    def message(self, message: str, path: str, module: Optional[WrittenModule] = None) -> str:
        """A finding's message as shown in ``path``: ``(line 7)`` of ``module`` (the finding's
        own written module) → ``(cell 4, line 2)``; ``in nb.ipynb:cell4:train.py (line 7)``
        (a written module named by a finding elsewhere) → ``(cell 4, line 2)`` in its notebook,
        ``in nb.ipynb (cell 4, line 2)`` in another file."""
        if "(line " not in message:
            return message
        if module is not None:

            def own(match: "re.Match") -> str:
                if _OTHER_FILE().search(message[: match.start()]):
                    return match.group(0)
                return f"(line {_joined_line(module, int(match.group(1)))}"

            message = cell_references(re.sub(r"\(line (\d+)", own, message), self.texts[module.notebook])
        for notebook, text in self.texts.items():  # `in nb.ipynb (line 11)`: a line of its joined text
            if f" in {notebook} (line " not in message:
                continue

            def joined(match: "re.Match", notebook: str = notebook, text: str = text) -> str:
                cell, row = cell_position(boundary_lines(text), int(match.group(1)))
                return (f" in {notebook}" if path != notebook else "") + f" (cell {cell}, line {row}"

            message = re.sub(re.escape(f" in {notebook} (line ") + r"(\d+)", joined, message)
        for m in self.by_path.values():
            name = os.path.basename(m.path)  # shown as given, or relative to the reader's folder
            if name not in message:
                continue

            def other(match: "re.Match", m: WrittenModule = m) -> str:
                boundaries = boundary_lines(self.texts[m.notebook])
                cell, row = cell_position(boundaries, _joined_line(m, int(match.group(1))))
                return (f" in {m.notebook}" if path != m.notebook else "") + f" (cell {cell}, line {row}"

            message = re.sub(r" in (?:\S*[/\\])?" + re.escape(f"{name} (line ") + r"(\d+)", other, message)
        return message

    def related(self, r: Related) -> Related:
        module = self.by_path.get(r.path)
        if module is None:
            return r
        span = self.span(module, r.span)
        if span is None:
            return r
        return Related(module.notebook, span, self.message(r.message, module.notebook, module))

    def touches_cell(self, path: str, fix: Optional[Fix]) -> bool:
        """Whether a fix of the notebook's own module edits a ``%%writefile`` cell."""
        if fix is None:
            return False
        return any(a <= e.start <= b or a <= e.end <= b or e.start <= a < e.end for e in fix.edits for a, b in self.cells.get(path, ()))

    def diagnostic(self, d: Diagnostic) -> Diagnostic:
        related = tuple(self.related(r) for r in d.related)
        module = self.by_path.get(d.path)
        if module is None:
            fix = None if self.touches_cell(d.path, d.fix) else d.fix
            message = self.message(d.message, d.path)
            if related == d.related and fix is d.fix and message == d.message:
                return d
            return dataclasses.replace(d, message=message, related=related, fix=fix)
        span = self.span(module, d.span)
        if span is None:  # an empty module's finding (MP000 of an empty file): its first cell
            seg = module.segments[0]
            span = Span(seg.line, 0, seg.line, 0, seg.start, seg.start)
        lines = span.line - d.span.line
        return dataclasses.replace(
            d,
            path=module.notebook,
            message=self.message(d.message, module.notebook, module),
            span=span,
            fix=self.fix(module, d.fix),
            related=related,
            noqa_line=None if d.noqa_line is None else d.noqa_line + lines,
        )


def _joined_line(module: WrittenModule, line: int) -> int:
    """The line of the notebook's joined text that holds line ``line`` of the module."""
    seg = next((s for s in reversed(module.segments) if s.module_line <= line), module.segments[0])
    return line + seg.line - seg.module_line


def _line_col(text: str, offset: int) -> Tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1)
