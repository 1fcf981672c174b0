"""Regular expressions compiled on first use, not at import (#23).

Compiling is most of what importing a module with a dozen patterns costs (0.1-0.6 ms a
pattern), and most patterns serve texts a given file does not have: a small file's check, as
pre-commit runs it, imported 70 patterns it never used. ``lazy(pattern, flags)`` is a getter:
``_URL().sub(...)`` compiles on the first call and returns the same compiled pattern after
that (a C-level cache, no Python frame).
"""
import re
from functools import lru_cache, partial
from typing import Callable


def lazy(pattern: str, flags: int = 0) -> Callable[[], "re.Pattern[str]"]:
    """A getter of ``re.compile(pattern, flags)``, compiled at its first call."""
    return lru_cache(maxsize=None)(partial(re.compile, pattern, flags))
