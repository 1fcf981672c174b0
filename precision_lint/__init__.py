"""precision-lint: find and fix mixed-precision misconfigurations in training code."""
from ._version import __version__
from .diagnostics import Diagnostic, Edit, Fix, Related, Span
_LAZY = {"check_paths", "check_source", "fix_source"}


def __getattr__(name: str):
    """The library API, imported on first use: ``precision-lint --version`` and ``--help``
    need neither LibCST nor the rules."""
    if name in _LAZY:
        from . import engine

        return getattr(engine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "Diagnostic",
    "Edit",
    "Fix",
    "Related",
    "Span",
    "check_paths",
    "check_source",
    "fix_source",
    "__version__",
]
