"""Plain data shared by rules, the fixer and the reporters.

Everything here is a frozen dataclass of primitives, so diagnostics and fixes can
cross process boundaries and be cached. Positions are in characters: ``line`` is
1-based and ``col`` is 0-based; reporters convert columns to 1-based.
"""
from __future__ import annotations

from dataclasses import field
from ._dataclass import dataclass
from typing import Optional, Tuple

SAFE = "safe"
UNSAFE = "unsafe"


@dataclass(frozen=True, slots=True)
class Span:
    """A source range: line/col for humans, character offsets for edits. (``slots=True``: a
    run over transformers holds 88,000 in its facts, and a ``__dict__`` each doubled them, #23.)"""

    line: int
    col: int
    end_line: int
    end_col: int
    start: int
    end: int


@dataclass(frozen=True)
class Edit:
    """Replace ``source[start:end]`` with ``content`` (an insertion when start == end)."""

    start: int
    end: int
    content: str


@dataclass(frozen=True)
class Fix:
    """The edits that resolve one finding, applied together or not at all. ``applicability``
    is ruff's: a safe fix keeps what the code means and ``--fix`` applies it; an unsafe one may
    change behaviour and waits for ``--unsafe-fixes``."""

    applicability: str  # SAFE or UNSAFE
    message: str
    edits: Tuple[Edit, ...]


@dataclass(frozen=True)
class Related:
    """The other half of a finding, possibly in another file (e.g. the GradScaler)."""

    path: str
    span: Span
    message: str


@dataclass(frozen=True)
class Diagnostic:
    """One finding as every reporter, the fixer, the cache and ``--add-noqa`` see it: plain,
    frozen data, so it crosses a worker process and is cached as extracted."""

    code: str
    message: str
    path: str
    span: Span
    fix: Optional[Fix] = None
    related: Tuple[Related, ...] = field(default_factory=tuple)
    # Where a `# noqa` comment suppresses this finding (defaults to span.line).
    noqa_line: Optional[int] = None

    @property
    def noqa_row(self) -> int:
        return self.noqa_line or self.span.line

    def sort_key(self):
        return (self.path, self.span.start, self.code, self.message)
