"""MP003 internal-error: precision-lint itself failed while analysing a file, so it was not checked.

An exception raised by precision-lint's own code on one file (a ``RecursionError`` on an
expression deeper than an analysis step expects, an ``IndexError`` in an extractor, a rule
that meets a shape it was not written for) is a bug of ours, never the user's. As ruff reports
a panic on the file it happened in and checks every other file, the file gets this finding,
naming the stage and the exception, and the rest of the run goes on::

    train.py:1:1: MP003 internal error while analysing train.py (reading facts): RecursionError: maximum recursion depth exceeded; please report it

The finding cannot be ignored, selected away or silenced with ``# noqa`` (what was not checked
is never a pass); the run exits 2, as ruff does on an internal error; the file is never
rewritten, and its facts are not cached, so the next run analyses it again.
"""
from __future__ import annotations

from typing import Optional

from ..diagnostics import Diagnostic, Span
from .base import Rule, RuleContext

CODE = "MP003"
INTERNAL = "internal"  # ParseError.kind of facts that an internal error stopped


def message(path: str, stage: str, exc: BaseException) -> str:
    """``internal error while analysing x.py (stage): Type: text; please report it``."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    shown = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return f"internal error while analysing {name} ({stage}): {shown}; please report it"


def diagnostic(path: str, text: str) -> Diagnostic:
    """The finding at 1:1 of ``path`` (ruff puts its panic diagnostic there too)."""
    return Diagnostic(CODE, text, path, Span(1, 0, 1, 0, 0, 0))


class InternalErrorRule(Rule):
    code = CODE
    name = "internal-error"
    summary = "precision-lint failed while analysing the file (a bug of ours): it was not checked; please report it"
    judges_unparsed = True
    # never ignored, deselected or silenced: a file that was not checked is never a pass
    always = True

    def check(self, ctx: RuleContext):
        error: Optional[object] = ctx.facts.parse_error
        if error is not None and error.kind == INTERNAL:
            yield diagnostic(ctx.path, error.message)
