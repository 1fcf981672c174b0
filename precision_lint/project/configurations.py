"""Values of one configuration are judged together.

A run that ``HfArgumentParser`` fills from a configuration file (``parse_json_file(json_file=
a.train_args_file)``) takes every field from that one file: ``fp16``, ``deepspeed`` and the
script's own fields (``train_mode``) are that file's keys, else the fields' defaults. Where a
default or a shipped launch picks among several files, each file is a configuration of its own:
the evaluator marks each value read so with the file (``Possible.chosen``), and values of two
different files of one parse never hold together (``values.exclusive``).

Here a rule asks, for one value that switches something on (``fp16: true`` of one file), what
else holds in the same configuration: whether that configuration hands fp16 to DeepSpeed (a
``deepspeed`` that is set), wraps the model for adapter training (``if args.train_mode in
["lora", "qlora"]: model = get_peft_model(...)``, ``WeightsSite.peft_when``) or casts it at all
(``if model_args.pre_seq_len is not None: model = model.half()``, ``WeightsSite.cast_when``).
Each shipped launch of a script is a configuration too (``project/options.py``): the options it
passes, and the defaults of those it does not, hold together.
"""
from __future__ import annotations

from typing import Any, Iterable, List, Optional, Sequence, Tuple

from ..semantic.values import CONST, Possible, exclusive


def alongside(values: Iterable[Possible], chosen: Possible) -> List[Possible]:
    """The ``values`` that may hold in a run where ``chosen`` does (not another file's)."""
    return [v for v in values if not exclusive(v, chosen)]


def _set(v: Possible) -> bool:
    """A ``deepspeed`` value that is set: a config path (or a dict), never None or empty."""
    return v.kind == CONST and v.value not in (None, False, "", 0)


def runs_deepspeed(values: Sequence[Possible], chosen: Possible) -> bool:
    """Whether every ``deepspeed`` value of the configuration of ``chosen`` is set: the Trainer
    then runs DeepSpeed, whose fp16 keeps fp32 master weights and scales the loss itself."""
    here = alongside(values, chosen)
    return bool(here) and all(_set(v) for v in here)


def wraps_adapters(conditions: Sequence[Tuple[Sequence[Possible], Tuple[Any, ...], bool]], chosen: Possible) -> bool:
    """Whether, in the configuration of ``chosen``, every condition of a conditional PEFT wrap
    (``WeightsSite.peft_when``) certainly holds: each value its subject may take there is a
    literal the test accepts (an unknown value, or one the test refuses, leaves the weights
    trained as loaded)."""
    if not conditions:
        return False
    for subject, literals, wanted in conditions:
        here = alongside(subject, chosen)
        if not here or not all(v.kind == CONST and (v.value in literals) == wanted for v in here):
            return False
    return True


def wrapped_in_shipped_runs(conditions: Sequence[Tuple[Sequence[Possible], Tuple[Any, ...], bool]]) -> bool:
    """Whether a conditional PEFT wrap (``WeightsSite.peft_when``: ``if args.use_lora:
    get_peft_model(...)``) runs in every run the project ships: each shipped launch's
    configuration wraps the model (``--use_lora``); a run by hand without the switch is the
    user's own choice, not one the code ships. False where nothing ships a launch (the
    defaults are the run)."""
    from .options import BY_HAND

    if not conditions:
        return False
    shipped = [p for p in configurations(*(s for s, _, _ in conditions)) if p.chosen and p.chosen[1] != BY_HAND]
    return bool(shipped) and all(wraps_adapters(conditions, p) for p in shipped)


def _user_choice(v: Possible) -> bool:
    return any(g.user_choice for g in v.guards)


def casts_nowhere(conditions: Sequence[Tuple[Sequence[Possible], Tuple[Any, ...], bool]]) -> bool:
    """Whether a cast under ``conditions`` (``WeightsSite.cast_when``) runs in no configuration:
    a test of its function's parameter that every call leaves at, or passes, a literal the test
    refuses (``if precision == "half": model.half()`` of ``precision="full"`` no caller changes)."""
    return bool(conditions) and not casts_in(conditions, Possible(CONST, True))


def casts_in(conditions: Sequence[Tuple[Sequence[Possible], Tuple[Any, ...], bool]], chosen: Possible) -> bool:
    """Whether a cast under ``conditions`` (``WeightsSite.cast_when``) may run in the
    configuration of ``chosen``: no condition certainly fails there (every value its subject may
    take there is a literal the test refuses). Where ``chosen`` is itself the user's choice (a
    switch passed by hand) and a condition holds only by another choice of theirs, the cast and
    ``chosen`` meet only when the user picks both: not a run the code ships or defaults to."""
    for subject, literals, wanted in conditions:
        holding = _holding(subject, literals, wanted, chosen)
        if holding is None:
            continue
        if not holding:
            return False
        if _user_choice(chosen) and all(_user_choice(v) for v in holding):
            return False
    return True


def _holding(subject, literals, wanted: bool, chosen: Possible) -> Optional[List[Possible]]:
    """The values of ``subject`` that let the test ``(subject in literals) == wanted`` hold in
    the configuration of ``chosen`` (an unknown value holds): [] where it certainly fails there,
    None where ``subject`` has no value there."""
    here = alongside(subject, chosen)
    if not here:
        return None
    return [v for v in here if not (v.kind == CONST and (v.value in literals) != wanted)]


FALSY = (False, None, 0, "")  # the values a bare test `if x:` refuses


def conditions_apart(
    these: Sequence[Tuple[Sequence[Possible], Tuple[Any, ...], bool]],
    those: Sequence[Tuple[Sequence[Possible], Tuple[Any, ...], bool]],
) -> bool:
    """Whether two sets of conditions (a cast's ``WeightsSite.cast_when``, a GradScaler's
    ``PrecisionSite.when``) never hold together: one of each tests the same value, known as
    such because the literals it may take are the same ones written in the code (the default
    and the choices of one option, followed through a call's parameter), against values no
    configuration satisfies both ways (``precision in ("pure_fp16", "pure_bf16")`` and
    ``precision == "amp"``: review 27a's open_clip factories, whose tests read two texts)."""
    return any(_never_both(a, b) for a in these for b in those)


def _never_both(a, b) -> bool:
    (subject_a, literals_a, wanted_a), (subject_b, literals_b, wanted_b) = a, b
    known_a, known_b = _literals_of(subject_a), _literals_of(subject_b)
    if not known_a or known_a != known_b:
        return False  # not known to be one value
    closed = all(v.kind == CONST for v in (*subject_a, *subject_b))
    domain = {v.value for v in (*subject_a, *subject_b) if v.kind == CONST}
    if wanted_a and wanted_b:
        return not set(literals_a) & set(literals_b)
    if not closed:
        return False  # a value typed by hand may pass a test that refuses the others
    return not any((x in literals_a) == wanted_a and (x in literals_b) == wanted_b for x in domain)


def _literals_of(subject: Sequence[Possible]) -> set:
    """The literals a value may be, each as the value and where it is written (a value the join
    brought from the caller's file names that file, the same value read in its own file names
    none: the offsets are compared), a parameter's default apart (what a call that leaves the
    parameter out gets: not a value of the option the callers pass)."""
    return {
        (repr(v.value), v.origin.start, v.origin.end)
        for v in subject
        if v.kind == CONST and v.origin is not None and v.default_of is None
    }


def configurations(*groups: Iterable[Possible]) -> List[Possible]:
    """One atom for each configuration the values of ``groups`` name (``Possible.chosen``: each
    shipped launch of a script, each file a parse reads, a run by hand), that :func:`alongside`
    takes as that configuration; one atom of no configuration (every value holds with it) where
    none is named."""
    named = dict.fromkeys(v.chosen for group in groups for v in group if v.chosen)
    return [Possible(CONST, True, chosen=c) for c in named] or [Possible(CONST, True)]


def builds_in(conditions: Sequence[Tuple[Sequence[Possible], Tuple[Any, ...], bool]], chosen: Possible) -> Optional[Tuple[Possible, ...]]:
    """For an object built under tests (``PrecisionSite.when``: ``if args.fp16 and not
    args.deepspeed: GradScaler()``): None where, in the configuration of ``chosen``, one of them
    certainly fails (every value its subject may take there is a literal the test refuses: the
    launch passes no ``--fp16``, or passes ``--deepspeed``); else, for each test, the values
    that let it hold there (a subject with no value there, or an unknown one, holds)."""
    out: List[Possible] = []
    for subject, literals, wanted in conditions:
        holding = _holding(subject, literals, wanted, chosen)
        if holding is None:
            continue
        if not holding:
            return None
        out.extend(holding)
    return tuple(out)


def by_user_only(conditions: Sequence[Tuple[Sequence[Possible], Tuple[Any, ...], bool]], chosen: Possible) -> Optional[Possible]:
    """A value of one of ``conditions`` that holds in the configuration of ``chosen`` only by the
    user's own choice (``--fp16`` passed by hand, no shipped launch passing it); None when
    each holds without one."""
    for subject, literals, wanted in conditions:
        here = alongside(subject, chosen)
        holding = [v for v in here if not (v.kind == CONST and (v.value in literals) != wanted)]
        if holding and all(_user_choice(v) for v in holding):
            return holding[0]
    return None
