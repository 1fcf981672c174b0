"""Vendored third-party code: reported, never fixed.

A project often carries a copy of someone else's code: a model implementation pasted from a
paper's repository, a library copied under ``third_party/``. Its findings are real (the copy runs
in the user's job) but a fix there is not the user's to make: the copy's own design decides
(forcing FlashAttention-2 may be the only attention the model implements, and an SDPA fallback
the fix adds would run a path the copy never supported), and the next update of the copy
overwrites it. So findings in such a file keep no fix, and say why.

A file is taken as vendored when, relative to the project root:

1. a folder on its path is named as vendored code is: ``site-packages``, ``dist-packages``,
   ``_vendor``, ``vendor``, ``vendored``, ``third_party``, ``third-party``, ``thirdparty``,
   ``3rdparty``;
2. a folder between it and the project root is a copy of a distribution: it has its own
   ``setup.py``, ``PKG-INFO``, or a ``*.egg-info`` / ``*.dist-info`` folder (the project's own
   root is never one);
3. its licence header (the comments and docstring at its top) names a copyright holder that the
   project's own ``LICENSE`` (``LICENSE*``, ``COPYING*`` at the root) does not: a header
   ``Copyright 2023 The HuggingFace Inc. team`` in a project licensed by someone else. Without
   a licence file that names a holder, a header alone decides nothing.

To have such a file fixed anyway, move it out of those folders; to not check it at all, list it
in ``exclude``.
"""
from __future__ import annotations

import functools
import os
import re
from typing import Optional, Tuple

VENDOR_FOLDERS = frozenset(
    {"site-packages", "dist-packages", "_vendor", "vendor", "vendored", "third_party", "third-party", "thirdparty", "3rdparty"}
)
_DIST_MARKERS = ("setup.py", "PKG-INFO")
_YEARS = r"\d{4}(?:\s*[-–,]\s*(?:\d{4}|present))*"
# a copyright *notice*: with a year or a (c)/© mark, never the word in a licence's prose
_COPYRIGHT = re.compile(
    rf"copyright\s*(?:(?:\(c\)|©)\s*(?:{_YEARS}\s*)?|{_YEARS}\s*(?:\(c\)|©)?\s*)(?:by\s+)?(?P<holder>[^\n]*)",
    re.IGNORECASE,
)
_HEADER_LINES = 40


def _words(holder: str) -> frozenset:
    """The words that name a copyright holder (``The HuggingFace Inc. team`` → huggingface)."""
    words = re.findall(r"[a-z0-9]+", holder.lower())
    common = {"the", "inc", "team", "all", "rights", "reserved", "and", "its", "affiliates", "authors", "ltd", "llc", "contributors", "c"}
    return frozenset(w for w in words if w not in common and not w.isdigit())


def _holders(text: str) -> Tuple[frozenset, ...]:
    return tuple(w for w in (_words(m.group("holder")) for m in _COPYRIGHT.finditer(text)) if w)


@functools.lru_cache(maxsize=256)
def _project_holders(root: str) -> Tuple[frozenset, ...]:
    """The copyright holders the project's own licence file names (empty: none found)."""
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return ()
    for name in names:
        if re.match(r"(?i)(licen[cs]e|copying)(\.(md|txt|rst))?$", name):
            try:
                with open(os.path.join(root, name), encoding="utf-8", errors="replace") as f:
                    found = _holders(f.read(20000))
            except OSError:
                continue
            if found:
                return found
    return ()


@functools.lru_cache(maxsize=4096)
def _distribution_folder(folder: str) -> bool:
    try:
        entries = os.listdir(folder)
    except OSError:
        return False
    return any(e in _DIST_MARKERS or e.endswith((".egg-info", ".dist-info")) for e in entries)


def _header(text: str) -> str:
    """The comments and the docstring at the top of a module, where a licence header is."""
    lines = []
    in_doc = None
    for line in text.splitlines()[:_HEADER_LINES]:
        stripped = line.strip()
        if in_doc:
            lines.append(stripped)
            if in_doc in stripped:
                in_doc = None
            continue
        if not stripped or stripped.startswith("#"):
            lines.append(stripped)
            continue
        quote = next((q for q in ('"""', "'''") if stripped.lstrip("rRuU").startswith(q)), None)
        if quote is None:
            break
        lines.append(stripped)
        if stripped.count(quote) < 2:
            in_doc = quote
    return "\n".join(lines)


def vendored_reason(path: str, text: Optional[str], root: Optional[str]) -> Optional[str]:
    """Why ``path`` is a vendored copy of third-party code (None: it is the project's own)."""
    root = os.path.abspath(root or os.getcwd())
    full = os.path.abspath(path)
    relative = os.path.relpath(full, root)
    if relative.startswith(".."):
        relative, root = full, os.path.dirname(full)
    folders = relative.split(os.sep)[:-1]
    for part in folders:
        if part.lower() in VENDOR_FOLDERS:
            return f"it lies in `{part}/`, vendored third-party code (fix the code it was copied from)"
    folder = os.path.dirname(full)
    while len(folder) > len(root) and folder.startswith(root):
        if _distribution_folder(folder):
            shown = os.path.relpath(folder, root)
            return f"`{shown}/` is a copy of another distribution (it has its own setup.py or package metadata)"
        folder = os.path.dirname(folder)
    if text:
        header = _holders(_header(text))
        own = _project_holders(root)
        if header and own and not any(h & o for h in header for o in own):
            return "its licence header names another copyright holder than the project's LICENSE: vendored third-party code"
    return None
