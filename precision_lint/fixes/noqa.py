"""Writing ``# noqa: CODE`` comments: ``--add-noqa`` and the editor's "disable for this line".

A team adopting precision-lint on an existing codebase runs ``precision-lint --add-noqa``
once: every line with a finding today gets ``# noqa: CODE`` (ruff's convention), so the
pre-commit hook can be switched on at once and fails only on new findings.

A comment is added at the end of the line the finding is suppressed from
(:attr:`Diagnostic.noqa_row`); codes already listed in a ``# noqa:`` comment there are kept
and the new ones appended (``# noqa: MP101, MP301``); nothing else on the line changes. A
line that ends inside a multi-line string or with a backslash continuation cannot hold a
comment: it is left alone and reported, never broken.
"""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import field
from .._dataclass import dataclass
from typing import Dict, Iterable, List, Optional, Set

from ..diagnostics import Diagnostic, Edit
from ..facts.extract import NOQA  # the one definition of what a noqa comment looks like
from .fixer import apply_edits, still_valid
from ..workspace.configfiles import is_config_file
from ..workspace.shipped import is_launch_document

_ENDING = re.compile(r"\r\n|\r|\n")


@dataclass
class NoqaEdits:
    """What adding noqa comments to one text does."""

    text: str  # the text with the comments added (the original when nothing could be added)
    added: int = 0  # lines that got a comment or new codes in one
    skipped: List[int] = field(default_factory=list)  # lines that cannot hold a comment
    problem: Optional[str] = None  # why nothing was added to this text at all


def _lines(text: str) -> List[tuple]:
    """(start offset, end of content, line ending) for each line, 1-based by list index + 1."""
    out = []
    pos = 0
    for m in _ENDING.finditer(text):
        out.append((pos, m.start(), m.group()))
        pos = m.end()
    if pos < len(text):
        out.append((pos, len(text), ""))
    return out


def commentable_lines(text: str) -> Set[int]:
    """1-based lines whose end lies outside strings and continuations (a comment may follow).

    Those are the lines on which the tokenizer ends a logical or physical line (NEWLINE, NL)
    or sees a comment."""
    out: Set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT):
                out.add(tok.start[0])
    except (tokenize.TokenError, SyntaxError):
        return set()
    return out


def line_edit(text: str, row: int, codes: Iterable[str], lines: Optional[List[tuple]] = None) -> Optional[Edit]:
    """The edit that makes line ``row`` (1-based) carry ``# noqa`` for ``codes``; None when it
    already does."""
    lines = lines if lines is not None else _lines(text)
    if not 1 <= row <= len(lines):
        return None
    start, end, _ending = lines[row - 1]
    line = text[start:end]
    wanted = sorted({c.upper() for c in codes})
    match = NOQA().search(line) if "#" in line else None
    if match is not None:
        listed = match.group("codes")
        if listed is None:  # a bare `# noqa` already silences every code
            return None
        have = [c.upper() for c in re.split(r"[\s,]+", listed) if c]
        missing = [c for c in wanted if c not in have]
        if not missing:
            return None
        return Edit(start + match.start("codes"), start + match.end("codes"), ", ".join(have + missing))
    content_end = start + len(line.rstrip(" \t"))
    return Edit(content_end, end, f"  # noqa: {', '.join(wanted)}")


def add_noqa(text: str, rows: Dict[int, Set[str]]) -> NoqaEdits:
    """``text`` with a noqa comment for ``codes`` on each of ``rows`` (line → codes)."""
    lines = _lines(text)
    allowed = commentable_lines(text)
    edits: List[Edit] = []
    result = NoqaEdits(text)
    for row in sorted(rows):
        if row not in allowed:
            result.skipped.append(row)
            continue
        edit = line_edit(text, row, rows[row], lines)
        if edit is not None:
            edits.append(edit)
    if not edits:
        return result
    new = apply_edits(text, edits)
    problem = still_valid(text, new)
    if problem is not None:
        result.problem = problem
        return result
    result.text, result.added = new, len(edits)
    return result


# Files whose text was never checked: a syntax error (MP000), bytes that are not text (MP001),
# an internal error of ours (MP003: it cannot be silenced, and nothing is written into the file).
UNCHECKED = ("MP000", "MP001", "MP003")


def rows_by_path(diagnostics: Iterable[Diagnostic]) -> Dict[str, Dict[int, Set[str]]]:
    """path → line → codes to silence there (files that do not parse are left out: a comment
    cannot be placed safely in a file that is reported as MP000 or MP001)."""
    out: Dict[str, Dict[int, Set[str]]] = {}
    broken = set()
    for d in diagnostics:
        if d.code in UNCHECKED:
            broken.add(d.path)
            continue
        out.setdefault(d.path, {}).setdefault(d.noqa_row, set()).add(d.code)
    return {p: rows for p, rows in out.items() if p not in broken}


def write_noqa(result, display=str, err=None) -> int:
    """``--add-noqa``: write the comments for every finding of a run (an engine ``RunResult``)
    into its file, atomically; say what was added and what could not be. Returns lines changed."""
    import sys

    from ..workspace.notebook import NotebookError
    from ..workspace.sources import WriteRefused, write_over

    err = err or sys.stderr
    total = 0
    for path, rows in sorted(rows_by_path(result.diagnostics).items()):
        src = result.sources.get(path)
        if src is None or is_config_file(path):  # a JSON/YAML key a script reads (MP302)
            if is_launch_document(path):  # an option a shell launcher (or a README's command) passes a script
                err.write(
                    f"precision-lint: warning: {display(path)}: no noqa comments added: a launch script "
                    "(turn a finding there off with per-file-ignores, or a `# noqa: CODE` comment on the line "
                    "that ends its command)\n"
                )
                continue
            err.write(
                f"precision-lint: warning: {display(path)}: no noqa comments added: a configuration file "
                "(turn a finding there off with per-file-ignores, or a `# noqa: CODE` comment in YAML)\n"
            )
            continue
        done = add_noqa(src.text or "", rows)
        for row in done.skipped:
            err.write(
                f"precision-lint: warning: {display(path)}: no noqa comment added to {_where(src, row)}: "
                "it ends inside a string or a backslash continuation\n"
            )
        if done.problem is not None:
            err.write(f"precision-lint: warning: {display(path)}: noqa comments not added: the result would not parse ({done.problem})\n")
            continue
        if not done.added:
            continue
        try:
            data = src.encode(done.text)
        except NotebookError as exc:
            err.write(f"precision-lint: warning: {display(path)}: noqa comments not added: {exc}\n")
            continue
        try:
            write_over(src, data)
        except WriteRefused as exc:
            err.write(f"precision-lint: warning: {display(path)}: noqa comments not added: {exc}\n")
            continue
        total += done.added
    for path, code in sorted({(d.path, d.code) for d in result.diagnostics if d.code in UNCHECKED}):
        why = {"MP000": "does not parse", "MP001": "cannot be read as text"}.get(code, "was not checked (internal error)")
        err.write(f"precision-lint: warning: {display(path)}: {why}; no noqa comments added\n")
    err.write(f"Added {total} noqa directive{'s' * (total != 1)}.\n")
    return total


def _where(src, row: int) -> str:
    if src.notebook is None or src.notebook.keeps_lines:
        return f"line {row}"
    from ..workspace.notebook import boundary_lines, cell_position

    cell, line = cell_position(boundary_lines(src.text or ""), row)
    return f"cell {cell}, line {line}"
