"""Markdown's fenced code blocks, read as CommonMark reads them: what a README's prose is, and
which of its lines are commands.

A fence opens with three or more backticks or tildes; an opening backtick fence's info string
holds no backtick, so ```` ```--lr 1e-4``` ```` on one line is an inline code span, not a
fence (taken as one, it turned the rest of a README into code, and hid the GPUs it states). A
fence closes with the same character, at least as many times, and nothing after it but
blanks: ```` ```python ```` inside a block is a line of the block. An unclosed block ends
with the text. Fences indented inside list items count (CommonMark allows three spaces; READMEs
indent them under their items).
"""
from __future__ import annotations

from typing import Iterator, Optional, Sequence, Tuple

from .._regex import lazy

_OPENING = lazy(r"^\s*(`{3,}|~{3,})(.*)$")
_CLOSING = lazy(r"^\s*(`{3,}|~{3,})[ \t]*$")


def opening_fence(line: str) -> Optional[str]:
    """The fence ``line`` opens (its characters), or None."""
    found = _OPENING().match(line)
    if found is None or (found.group(1)[0] == "`" and "`" in found.group(2)):
        return None
    return found.group(1)


def closes(line: str, fence: str) -> bool:
    """Whether ``line`` closes the block ``fence`` opened."""
    found = _CLOSING().match(line)
    return found is not None and found.group(1)[0] == fence[0] and len(found.group(1)) >= len(fence)


def fenced_lines(lines: Sequence[str]) -> Iterator[Tuple[int, str, bool]]:
    """``(index, line, whether it is code of a fenced block)`` for each line of ``lines`` but
    the fences themselves."""
    for i, line, info in _blocks(lines):
        yield i, line, info is not None


def _blocks(lines: Sequence[str]) -> Iterator[Tuple[int, str, Optional[str]]]:
    """``(index, line, the info string of the fenced block it is code of, else None)`` for each
    line of ``lines`` but the fences themselves (a bare fence's info string is "")."""
    fence: Optional[str] = None
    info = ""
    for i, line in enumerate(lines):
        if fence is None:
            fence = opening_fence(line)
            if fence is None:
                yield i, line, None
            else:
                info = line.strip()[len(fence):].strip()
        elif closes(line, fence):
            fence = None
        else:
            yield i, line, info


# the info strings of a fenced block that holds shell commands (none: a bare block)
# The prompt before a command in a README (`$ `, `% `, `> `, `>> `, `>>> `), with a conda
# environment's name before it (`(base) $ python train.py`): cut, the rest is the command. A
# `# ` is a root prompt only where a comment cannot be meant (versions.py's pins); in a shell
# block it is a comment, and what follows it is not run.
PROMPT_SIGNS = r"\$|>{1,3}|%"
PROMPT_ENVIRONMENT = r"(?:\([\w.-]+\)\s*)?"
_PROMPT = lazy(rf"^\s*{PROMPT_ENVIRONMENT}(?:{PROMPT_SIGNS})\s+")

SHELL_INFO = frozenset({"", "bash", "sh", "shell", "zsh", "console", "shell-session", "shellsession"})


def shell_text(text: str) -> str:
    """The lines of ``text``'s fenced shell blocks (a bare block, ``bash``, ``sh``, ``console``),
    every other line blank (so a command keeps its line), a console prompt (``$ ``,
    ``(base) $ ``, ``% ``, ``>> ``) cut: the commands a README documents, to be read as a launch
    script's."""
    lines = text.splitlines()
    out = [""] * len(lines)
    for i, line, info in _blocks(lines):
        words = (info or "").split()
        if info is not None and (words[0].lower().strip("{}.") if words else "") in SHELL_INFO:
            out[i] = _PROMPT().sub("", line, count=1)
        elif info is None and (bare := _BARE_COMMAND().match(line)) is not None:
            out[i] = line[bare.end(1):]  # a README written as a list of commands, unfenced
    return "\n".join(out)


# A line outside any fence that is a command running a Python file (a README written as the
# commands it runs, review 31a: "python main_qwen.py" then "python merge_qwen.py"), a list's
# marker or a prompt before it; never prose that mentions one inline
_BARE_COMMAND = lazy(
    rf"^(\s*(?:(?:\d+[.)]|[-*+])\s+)?{PROMPT_ENVIRONMENT}(?:(?:{PROMPT_SIGNS})\s+)?)"
    r"(?:python3?|accelerate\s+launch|torchrun|deepspeed)\s+(?:--?[\w.-]+(?:[= ](?!-)(?!\S+\.py\b)\S+)?\s+)*[\w./\\-]+\.py\b"
)
