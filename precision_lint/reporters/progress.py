"""A dependency-free progress bar on stderr, for long runs only.

Shown when stderr is a terminal and more than :data:`THRESHOLD` files are to be
parsed (never in CI logs, pipes or files); it draws on one line and erases
itself when done, so the findings on stdout are never mixed with it.
"""
from __future__ import annotations

import os
import sys
import time
from typing import Optional, TextIO

THRESHOLD = 200
WIDTH = 30
MIN_INTERVAL = 0.1  # seconds between redraws


def wanted(stream: Optional[TextIO], files: int, threshold: int = THRESHOLD) -> bool:
    """Whether a run over ``files`` files gets a progress bar on ``stream``."""
    if stream is None or files <= threshold:
        return False
    if os.environ.get("PRECISION_LINT_NO_PROGRESS"):
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


def render_bar(done: int, total: int, width: int = WIDTH) -> str:
    total = max(total, 1)
    done = max(0, min(done, total))
    filled = width * done // total
    return f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} files"


class ProgressBar:
    """A callback ``bar(done, total)`` for :class:`~precision_lint.engine.Engine`.

    The decision is taken when a run starts (its first call), from the number of
    files it has to parse; ``close()`` erases the bar.
    """

    def __init__(self, stream: Optional[TextIO] = None, threshold: int = THRESHOLD) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.threshold = threshold
        self.active = False
        self._total = None
        self._last = 0.0
        self.drawn = 0  # how many times it drew (for tests)

    def __call__(self, done: int, total: int) -> None:
        if total != self._total:  # a new run (or fix pass): decide again
            self.close()
            self._total = total
            self.active = wanted(self.stream, total, self.threshold)
        if not self.active:
            return
        now = time.monotonic()
        if done < total and now - self._last < MIN_INTERVAL:
            return
        self._last = now
        self.stream.write("\r" + render_bar(done, total))
        self.stream.flush()
        self.drawn += 1

    def close(self) -> None:
        if self.active:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.active = False
