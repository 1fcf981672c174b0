"""precision-lint: find and fix mixed-precision misconfigurations in training code."""
from .diagnostics import Diagnostic, Edit, Fix, Related, Span
from .engine import check_paths, check_source, fix_source

__version__ = "0.1.0"

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
