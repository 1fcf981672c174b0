"""The options a shipped launch passes to a parse of ``HfArgumentParser`` that reads the command line.

``parser.parse_args_into_dataclasses()`` (TRL's ``parse_args_and_config()`` too) reads
``sys.argv[1:]``: every ``--option`` the launch writes after the script (``torchrun
--nproc_per_node 8 train.py --evaluation_strategy "steps" --bf16``) is looked up among the
options of the parser's dataclasses (``--field`` and ``--field-with-dashes``, ``--no_field`` for a
bool field that defaults to True) and those the code adds (``parser.add_argument``). argparse's
``parse_known_args`` leaves an option it does not know, and the words after it up to the next
option, over; ``parse_args_into_dataclasses`` then raises ``ValueError: Some specified
arguments are not used by the HfArgumentParser: ['--evaluation_strategy', 'steps']`` (or, with
``return_remaining_strings=True``, hands them back and the run goes on without them).

argparse accepts a unique prefix of an option as that option (``allow_abbrev``, on by
default): ``--use_liger`` is ``--use_liger_kernel`` where that is the only option it begins.
The library's own options that a removed name abbreviates are data (the ``abbreviates`` of a
migration row); an option that begins one of the project's own fields' options is left alone
(accepted as that field, or refused as ambiguous: no ValueError either way).

The scripts whose launches count are the module itself and the scripts whose runs hold it (a
helper module's parse runs in the scripts that import it); the launches are the shell
commands a project ships (``ShippedFiles.launches_for``, ``workspace/launches.py``).
"""
from __future__ import annotations

import re
from .._dataclass import dataclass
from typing import List, Optional, Tuple

from ..diagnostics import Span
from ..workspace.launches import Launch, option_words

_SHELL_OPERATOR = re.compile(r"^\d*[<>]|^[&|]")  # `> train.log`, `2>&1`, `&`: the shell's, not the script's


@dataclass(frozen=True)
class PassedOption:
    """One long option a shipped launch passes the script."""

    script: str  # the path of the script module the launch runs
    launcher: str  # the launcher's absolute path
    launch: Launch
    field: str  # the field it names (`--evaluation-strategy`: ``evaluation_strategy``)
    written: str  # the option as written (``--evaluation-strategy``)
    words: Tuple[str, ...]  # what argparse leaves over where the parser does not know it
    span: Span  # the option (and its value on the same line) in the launcher


def launch_options(project, scripts) -> List[PassedOption]:
    """Every long option the shipped launches of ``scripts`` (modules) pass, in launch order."""
    out: List[PassedOption] = []
    for script in scripts:
        out.extend(project.memo(("launched-options", script.path), lambda s=script: _of_script(project, s.path)))
    return out


def _of_script(project, path: str) -> Tuple[PassedOption, ...]:
    out = []
    for launcher, launch in project.shipped.launches_for(path):
        text = project.shipped.command_text(launcher)
        if text is None:
            continue
        for i, (line, col, start, end) in option_words(text, launch):
            word = launch.args[i]
            name = word[2:].partition("=")[0]
            words = [word]
            if "=" not in word:
                for following in launch.args[i + 1 :]:
                    if following.startswith("-") and not _number(following) or _SHELL_OPERATOR.match(following):
                        break
                    words.append(following)
            span = _with_value(text, line, col, start, end, words[1] if len(words) > 1 else "")
            out.append(PassedOption(path, launcher, launch, name.replace("-", "_"), f"--{name}", tuple(words), span))
    return tuple(out)


def _number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def _with_value(text: str, line: int, col: int, start: int, end: int, value: str) -> Span:
    """The option's span, up to its value where that follows it on the same line
    (``--evaluation_strategy "steps"``)."""
    line_end = text.find("\n", end)
    rest = text[end : line_end if line_end >= 0 else len(text)]
    if value:
        at = rest.find(value)
        if at >= 0 and not rest[:at].strip(" =\"'"):
            stop = end + at + len(value)
            if stop < len(text) and text[stop] in "\"'" and text[end + at - 1] == text[stop]:
                stop += 1  # the closing quote
            end = stop
    return Span(line, col, line, col + (end - start), start, end)


def shown_words(words: Tuple[str, ...]) -> str:
    """The words as the ValueError lists them (a Python list); a shell variable's value is not
    known and shows as ``<$NAME>``."""
    return "[" + ", ".join(f"<{w}>" if "$" in w or "`" in w else repr(w) for w in words) + "]"


def option_strings(field: str, boolean_true: bool = True) -> Tuple[str, ...]:
    """The options ``HfArgumentParser`` makes of a dataclass field: ``--name``, ``--name-with-
    dashes``, and (``boolean_true``: maybe a bool field that defaults to True) their ``--no_``
    forms."""
    names = [field, field.replace("_", "-")]
    if boolean_true:
        names += [f"no_{field}", f"no-{field.replace('_', '-')}"]
    return tuple(f"--{n}" for n in dict.fromkeys(names))


def accepted_by(written: str, options: Tuple[str, ...]) -> Optional[str]:
    """The option of ``options`` that argparse reads ``written`` as, exactly or as a prefix of
    one (the first of several: then argparse refuses it as ambiguous); None for none."""
    if written in options:
        return written
    return next((o for o in options if o.startswith(written)), None)
