"""Comments a fix makes stale: ``# load in fp16 to save memory`` above a dtype that is now float32.

A fix changes code, never comments. After ``--fix``, a comment next to a changed line that still
talks about the precision the fix took away would mislead the next reader, so the command line
points it out (it does not rewrite it: only the user knows what it meant).
"""
from __future__ import annotations

import difflib
import io
import re
import tokenize
from typing import Dict, List, Tuple

# Words of one precision: a comment using one of them is about that precision.
_GROUPS = {
    "float16": re.compile(r"\b(?:fp16|float16|half(?:[- ]precision)?|\.half\(\))", re.IGNORECASE),
    "bfloat16": re.compile(r"\b(?:bf16|bfloat16)\b", re.IGNORECASE),
    "flash-attention": re.compile(r"flash[ _-]?attention|\bfa2\b|flash_attn", re.IGNORECASE),
}
# How many lines above a changed line a comment may be and still be about it.
_ABOVE = 2


def _comments(text: str) -> Dict[int, str]:
    """1-based line → the comment on it (tokenized: a ``#`` inside a string is not one)."""
    out: Dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = tok.string
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return {}
    return out


def _groups(text: str) -> set:
    code = re.sub(r"#.*", "", text)
    return {name for name, pattern in _GROUPS.items() if pattern.search(code)}


def stale_comments(old: str, new: str) -> List[Tuple[int, str]]:
    """(line in ``new``, comment) for each comment next to a changed line that speaks of a
    precision the change removed from that code."""
    comments = _comments(new)
    if not comments:
        return []
    a, b = old.splitlines(), new.splitlines()
    found: Dict[int, str] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "replace":
            continue
        removed = _groups("\n".join(a[i1:i2])) - _groups("\n".join(b[j1:j2]))
        if not removed:
            continue
        for line in range(max(1, j1 + 1 - _ABOVE), j2 + 1):
            comment = comments.get(line)
            if comment and any(_GROUPS[g].search(comment) for g in removed):
                found[line] = comment
    return sorted(found.items())
