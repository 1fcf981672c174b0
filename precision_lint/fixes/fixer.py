"""Applying fixes to a text: without overlap, and never into a broken file.

Fixes are text edits (offsets into the source). One pass applies every fix that
does not overlap a fix already taken (identical edits, such as two rules adding
the same capability probe, count once); the engine repeats passes until no fix
is left (a fixpoint). A result that does not parse is rejected whole.
"""
from __future__ import annotations

import warnings
from typing import Iterable, List, Optional, Sequence, Tuple

from ..diagnostics import Edit, Fix


def _overlaps(a: Edit, b: Edit) -> bool:
    if a == b:
        return False
    if a.start == a.end and b.start == b.end:
        return a.start == b.start  # two different insertions at one point: order unclear
    return a.start < b.end and b.start < a.end or (a.start == a.end and b.start < a.start < b.end) or (
        b.start == b.end and a.start < b.start < a.end
    )


def select_fixes(fixes: Sequence[Fix]) -> List[Fix]:
    """The fixes of one pass: in source order, each skipped if it overlaps one already taken."""
    taken: List[Fix] = []
    taken_edits: List[Edit] = []
    for fix in sorted(fixes, key=lambda f: (min(e.start for e in f.edits), f.message)):
        if any(_overlaps(e, t) for e in fix.edits for t in taken_edits):
            continue
        taken.append(fix)
        taken_edits.extend(fix.edits)
    return taken


def apply_edits(source: str, edits: Iterable[Edit]) -> str:
    unique = sorted(set(edits), key=lambda e: (e.start, e.end))
    out: List[str] = []
    cursor = 0
    for edit in unique:
        out.append(source[cursor : edit.start])
        out.append(edit.content)
        cursor = max(cursor, edit.end)
    out.append(source[cursor:])
    return "".join(out)


def still_valid(original: str, fixed: str, filename: str = "<fixed>") -> Optional[str]:
    """None when ``fixed`` parses (and compiles, if the original did); else the reason.

    Where the original compiles, CPython judges the fixed text: compiled, it parses. LibCST (a
    second to import on a busy machine, and twelve times CPython's parse) is asked only where
    CPython cannot answer: an original written for a newer Python than this interpreter, whose
    fixed text must still parse, and a fixed text that does not compile, whose reason is
    LibCST's where it refuses the text too."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(original, filename, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            quiet = _notebook_code_problem(original, fixed, filename)
            if quiet is not None:  # notebook code: judged without its IPython lines, as IPython runs it
                return quiet or None
            return _libcst_problem(fixed)  # newer syntax than this interpreter: the LibCST parse must do
        try:
            compile(fixed, filename, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            return _libcst_problem(fixed) or f"{type(exc).__name__}: {exc}"
    return None


def _notebook_code_problem(original: str, fixed: str, filename: str) -> Optional[str]:
    """For an ``original`` that compiles once its IPython lines are quieted (a Colab export,
    ``!pip install -q peft`` among its lines: ``notebook.quieted_ipython_lines``), why ``fixed``,
    so quieted, does not compile, or "" where it does; None for any other original. Quieting
    moves nothing, so the fixes, found on the quieted text, apply to the original as they are;
    LibCST, which reads no IPython line, cannot judge such a text."""
    from ..workspace.notebook import quieted_ipython_lines

    quiet, lines = quieted_ipython_lines(original)
    if not lines:
        return None
    try:
        compile(quiet, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    try:
        compile(quieted_ipython_lines(fixed)[0], filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return ""


def _libcst_problem(text: str) -> Optional[str]:
    """Why LibCST does not parse ``text``, or None."""
    import libcst as cst

    try:
        cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        return str(exc).splitlines()[0]
    return None


def apply_fixes(source: str, fixes: Sequence[Fix], filename: str = "<fixed>") -> Tuple[str, List[Fix], Optional[str]]:
    """One pass: (new text, fixes applied, reason the result was rejected or None)."""
    chosen = select_fixes(fixes)
    if not chosen:
        return source, [], None
    fixed = apply_edits(source, (e for f in chosen for e in f.edits))
    problem = still_valid(source, fixed, filename)
    if problem is not None:
        return source, [], problem
    return fixed, chosen, None
