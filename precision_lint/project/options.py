"""Command-line options as the project's shipped launches pass them.

A script reads options (``argparse``, ``HfArgumentParser`` dataclass fields such as
``torch_dtype: str = field(default="float16")``, ``TrainingArguments``' ``--fp16``/``--bf16``)
and the evaluator models each as "the default, or whatever the user passes": a switch such as
``--fp16`` is on only when the user opts in. A project often ships the command that runs the
script (``scripts/run_sft.sh``: ``torchrun --nproc_per_node 2 train.py --torch_dtype bfloat16
--bf16``); that command is the run the code targets. Here, at the join, the values of an
option of a script (the atoms the evaluator marks with ``Possible.option``) become what the
script's shipped launches pass (``ShippedFiles.launches_for``, commands read by
``workspace/launches.py``):

- every launch passes ``--torch_dtype bfloat16``: ``"bfloat16"`` is the value of the shipped
  run (its position in the launcher is the value's origin); the default, and any other value
  the code allows, stays possible only as the user's own choice (someone running the script by
  hand), as an option's non-default choices are today;
- a launch passes the switch ``--fp16``: it is on in that run (no longer only the user's
  opt-in); ``--use_peft True`` / ``--use_peft false`` give a bool field its value;
- some launches pass it and some do not: the passed values join the option's own values;
- no shipped launch runs the script: nothing changes.

Each shipped launch is a configuration of its own (``Possible.chosen``, as each configuration
file a parse reads is): the value it passes, or the option's default where it passes none, holds
together with the other options of that launch and never with another launch's. Running the
script by hand is one more configuration, whose values are the option's own (the default, the
user's choices). So ``--fp16`` of a DeepSpeed launch and ``--pre_seq_len 128`` of a P-tuning
launch of one script are two runs, never one.

A value that is a shell variable (``--torch_dtype $DTYPE``) is not known: unknown.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ..diagnostics import Span
from ..semantic.values import CONST, UNKNOWN, Guard, Possible
from ..workspace.launches import FALSE_WORDS, TRUE_WORDS, Launch, option_span, passed_options



def as_launched(values: Sequence[Possible], shipped, script_of: Callable[[Possible], str]) -> Tuple[Possible, ...]:
    """``values`` with the atoms of each command-line option (``Possible.option``) replaced by
    what the shipped launches of their script (``script_of(atom)``, a file) pass; every atom's
    ``option`` is cleared. The rest keep their place."""
    if not any(v.option for v in values):
        return tuple(values)
    groups: Dict[Tuple[str, str], List[Possible]] = {}
    out: List[Possible] = []
    for v in values:
        if not v.option:
            out.append(v)
        else:
            groups.setdefault((v.option, script_of(v)), []).append(dataclasses.replace(v, option=""))
    for (option, script), own in groups.items():
        launches = shipped.launches_for(script) if script else []
        out.extend(_launched(own, option, launches, shipped, script))
    return tuple(dict.fromkeys(out))


BY_HAND = "by hand"  # the configuration of a run of the script that no shipped launch makes


_LAUNCHED = ": launched"


def launch_choice(script: str) -> str:
    """The first part of ``Possible.chosen`` of the values the shipped launches of ``script``
    pass: one choice among its launches (and a run by hand)."""
    return f"{script}{_LAUNCHED}"


def _launched(own: List[Possible], option: str, launches, shipped, script: str) -> List[Possible]:
    passed: List[Possible] = []
    left_out = False
    choice = launch_choice(script)
    defaults = [v for v in own if not any(g.user_choice for g in v.guards)]
    for launcher, launch in launches:
        given = passed_options(launch.args)
        run = (choice, f"{launcher}:{launch.line}")
        if option not in given:
            left_out = True
            passed.extend(dataclasses.replace(v, chosen=run) for v in defaults if not v.chosen)
            continue
        passed.append(dataclasses.replace(_atom(given[option], own, option, launcher, launch, shipped.command_text(launcher)), chosen=run))
    if not launches:
        return own  # nothing ships a command for the script: the code's default, the user's choices
    hand = (choice, BY_HAND)
    if left_out or not any(from_launcher(v) for v in passed):
        # the launches without it run the default; by hand, the code's own values
        return passed + [v if v.chosen else dataclasses.replace(v, chosen=hand) for v in own]
    # every shipped run passes it: the code's own values are a run by hand, the user's choice
    by_hand = Guard(f"--{option} other than the shipped launch's", True, False, False, user_choice=True, on_command_line=True)
    return passed + [
        dataclasses.replace(
            v if any(g.user_choice for g in v.guards) else dataclasses.replace(v, guards=v.guards + (by_hand,)),
            chosen=v.chosen or hand,
        )
        for v in own
    ]


def _atom(word: Optional[str], own: List[Possible], option: str, launcher: str, launch: Launch, text: Optional[str]) -> Possible:
    """The value a launch passes (``word``: None for a shell variable, "" for a bare switch), as
    the option's own values are typed (bool, int, float, else the string)."""
    origin = _origin(text, launch, option, word or "") if text is not None else None
    if word is None:
        return Possible(UNKNOWN, where=launcher, origin=origin)
    consts = [v.value for v in own if v.kind == CONST and v.value is not None]
    value: object = word
    if word == "":
        value = True
    elif consts and all(isinstance(c, bool) for c in consts):
        value = _bool_word(word)
        if value is None:
            return Possible(UNKNOWN, where=launcher, origin=origin)
    elif consts and all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in consts):
        try:
            value = int(word) if all(isinstance(c, int) for c in consts) else float(word)
        except ValueError:
            return Possible(UNKNOWN, where=launcher, origin=origin)
    return Possible(CONST, value, origin=origin, where=launcher)


def _bool_word(word: str) -> Optional[bool]:
    """What a bool option's value word is (``True``/``yes``/``1``, ``false``/``no``/``0``, any
    case); None for another word."""
    lowered = word.lower()
    if lowered not in TRUE_WORDS + FALSE_WORDS:
        return None
    return lowered in TRUE_WORDS


def _origin(text: str, launch: Launch, option: str, word: str) -> Optional[Span]:
    found = option_span(text, launch, option, word)
    if found is None:
        return None
    line, col, start, end = found
    return Span(line, col, line, col + (end - start), start, end)


def switched_by_launches(values: Sequence[Possible], shipped, script_of: Callable[[Possible], str]) -> Tuple[Possible, ...]:
    """``values`` where a branch chosen by a command-line switch (``Guard.switch``) is switched
    off by every shipped launch of its script (``script_of(atom)``): such a value runs only when
    someone runs the script by hand without the launch's switch, the user's choice (a guard
    ``user_choice`` added). Every launch of a LLaVA-style ``finetune.sh`` passes
    ``--disable_flash_attn2 True`` to a script whose default is FlashAttention-2: the shipped runs
    use SDPA (review 29b, L1). A launch that leaves the switch out (its default runs), or passes a
    shell variable, decides nothing; neither does a script no launch runs."""
    out: List[Possible] = []
    changed = False
    for v in values:
        off = [g for g in v.guards if g.switch and _switched_off(g, shipped.launches_for(script_of(v)))]
        if off:
            by_hand = Guard(
                f"--{off[0].switch} other than every shipped launch's", True, False, False, user_choice=True, on_command_line=True,
            )
            v = dataclasses.replace(v, guards=v.guards + (by_hand,))
            changed = True
        out.append(v)
    return tuple(out) if changed else tuple(values)


def _switched_off(guard: Guard, launches) -> bool:
    """Whether every one of ``launches`` (at least one) passes ``guard``'s switch with the value
    under which its branch does not run."""
    if not launches:
        return False
    for _, launch in launches:
        given = passed_options(launch.args)
        if guard.switch in given:
            word = given[guard.switch]
            if word is None:
                return False  # a shell variable
            value = guard.switch_passed if word == "" else _bool_word(word)
            if value is None:
                return False
        elif given.get(f"no_{guard.switch}") == "":
            value = False  # `--no_flag` of a bool field that defaults to True
        else:
            return False  # left at its default
        if value == guard.switch_on:
            return False
    return True


def launcher_shown(path: str, near: str) -> str:
    """A launcher's path as a message shows it to the reader of ``near``: relative to the
    module's folder (``scripts/run_sft.sh``, ``../run.sh``)."""
    return os.path.relpath(os.path.abspath(path), os.path.dirname(os.path.abspath(near)))


def from_launcher(v: Possible) -> bool:
    """Whether ``v`` is a value a shipped launcher passes (:func:`as_launched` made it): one
    launch's choice, written in that launch's file (a shell script, a README's command, a
    job's YAML), not the script's default a launch leaves as it is."""
    if not (v.chosen and v.where and v.chosen[0].endswith(_LAUNCHED)):
        return False
    if v.origin is None and not v.where.lower().endswith(".ipynb"):
        return False  # (a notebook's launch has no span: its `!` line stands in a JSON string)
    return v.chosen[1].rpartition(":")[0] == v.where


def passed_by(values: Sequence[Possible], near: str) -> str:
    """``"scripts/run_sft.sh (line 3)"``: where a shipped launcher passes the first of
    ``values`` that one passes, as the reader of ``near`` finds it; "" for none."""
    for v in values:
        if from_launcher(v) and not any(g.user_choice for g in v.guards):
            line = f"line {v.origin.line}" if v.origin is not None else "its `!python` line"
            return f"{launcher_shown(v.where, near)} ({line})"
    return ""
