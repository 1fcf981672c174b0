"""One plan of fixes, checked whole before anything is written (or marked ``[*]``).

A fix is judged by what the *whole run* looks like after it, not by its own finding alone.
The fixes of a run are applied together to a copy of the texts (passes to a fixpoint, as
``fixer.py`` applies them), and the copy is linted again with every rule — whatever
``--select`` says — and with the config files the project reads (a DeepSpeed JSON, an
accelerate config). A fix is refused, and its finding keeps no fix, when the copy shows that it

- **hides** a finding it does not resolve: ``bf16=True`` with a DeepSpeed JSON saying
  ``bf16.enabled: false`` is a conflict (MP102, no fix); MP201's guard ``bf16=BF16_OK``
  makes the flag unknown, so MP102 falls silent, yet on every Ampere GPU ``BF16_OK`` is True
  and the run still raises ``ValueError: Please correct the following DeepSpeed config values
  that mismatch TrainingArguments values``;
- **creates** a finding (its output trips another rule, or its own);
- leaves **its own finding** in place, or must rewrite its own output again pass after pass
  (it does not converge);
- makes a file that **does not parse** (or a notebook whose cells cannot be written back).

The finding then reads "... (no automatic fix: <why>)" and is not counted as fixable: ``[*]``
means the fix was built and the result re-linted clean. The other fixes are planned again
without the refused ones (a few rounds; each refuses at least one fix).

A finding that disappears is *resolved*, not hidden, when it had a fix of its own that the run
could apply (two rules fixing one flag: the first fix resolves both). Findings are matched
across the change by code, file and message (numbers aside: lines move), else by their position
carried through the edits.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import field
from .._dataclass import dataclass
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple
from .._regex import lazy

from ..diagnostics import Diagnostic, Edit, Fix

MAX_FIX_PASSES = 10
MAX_ROUNDS = 6

Key = Tuple[str, str, int, int, str]


def key(d: Diagnostic) -> Key:
    return (d.code, d.path, d.span.start, d.span.end, d.message)


_NUMBER = re.compile(r"\d+")


def _loose(d: Diagnostic) -> Tuple[str, str, str]:
    """What names a finding across an edit: its lines move, its words stay."""
    return (d.code, d.path, _NUMBER.sub("#", d.message))


# --- positions through edits ---------------------------------------------------------------------
def _forward(edits: Sequence[Edit], offset: int) -> int:
    """``offset`` of the text before ``edits`` (sorted, disjoint) in the text after them."""
    shift = 0
    for e in edits:
        if e.end <= offset and not (e.start == e.end == offset):
            shift += len(e.content) - (e.end - e.start)
        elif e.start < offset < e.end:
            return e.start + shift
        elif e.start >= offset:
            break
    return offset + shift


def _backward(edits: Sequence[Edit], offset: int) -> int:
    """``offset`` of the text after ``edits`` in the text before them (inside written text:
    where it was written)."""
    shift = 0
    for e in edits:
        new_start = e.start + shift
        new_end = new_start + len(e.content)
        if offset < new_start:
            break
        if offset < new_end or (offset == new_start == new_end):
            return e.start
        shift += len(e.content) - (e.end - e.start)
    return offset - shift


@dataclass
class Trial:
    """The plan applied to a copy: the texts as left and what every rule finds in them."""

    texts: Dict[str, str]
    diagnostics: List[Diagnostic] = field(default_factory=list)
    fixes_applied: Dict[str, int] = field(default_factory=dict)
    fixed_codes: Dict[str, Dict[str, int]] = field(default_factory=dict)
    rejected: List[Tuple[str, str]] = field(default_factory=list)  # (path, why its result was refused)
    problems: Dict[Key, str] = field(default_factory=dict)  # finding of the original texts → why its fix is refused
    passes: Dict[str, List[List[Edit]]] = field(default_factory=dict)  # path → the edits of each pass
    planned: Dict[Key, Diagnostic] = field(default_factory=dict)  # findings whose fix the first pass applied

    def to_original(self, path: str, offset: int, upto: Optional[int] = None) -> int:
        passes = self.passes.get(path, [])
        for edits in reversed(passes[:upto] if upto is not None else passes):
            offset = _backward(edits, offset)
        return offset

    def to_final(self, path: str, offset: int) -> int:
        for edits in self.passes.get(path, []):
            offset = _forward(edits, offset)
        return offset


def _overlaps(start: int, end: int, edits: Iterable[Edit]) -> bool:
    return any(e.start <= end and start <= e.end for e in edits)


def run_trial(
    judge: Callable[[Dict[str, str]], List[Diagnostic]],
    texts: Dict[str, str],
    first: List[Diagnostic],
    wanted: Callable[[Diagnostic], bool],
    refused: Dict[Key, str],
    valid: Callable[[str, str, str], Optional[str]],
    applicable: Optional[Callable[[Diagnostic], bool]] = None,
) -> Trial:
    """Apply the fixes of ``first`` (the findings of ``texts``) that are ``wanted`` and not
    ``refused``, then the fixes of what the result shows, to a fixpoint; stop at the first pass
    with a problem (its fixes named in ``problems``). A finding the plan itself created is fixed
    when its fix is ``applicable``, whatever rules are selected (reusing the user's
    ``is_bf16_supported()`` probe brings MP203 with it, and MP203's fix with it). ``valid(path, old, new)`` says why a
    result cannot be kept (None: it can)."""
    from .fixer import apply_edits, select_fixes

    trial = Trial(dict(texts))
    diagnostics = first
    refused_loose = {_loose(d) for d in first if key(d) in refused}
    refused_first = [d for d in first if key(d) in refused]
    known = {_loose(d) for d in first}

    def is_refused(d: Diagnostic, n: int) -> bool:
        """A refused finding stays refused in the texts the plan rewrites (its words, or its place)."""
        if n == 0:
            return key(d) in refused
        if _loose(d) in refused_loose:
            return True
        start, end = trial.to_original(d.path, d.span.start, n), trial.to_original(d.path, d.span.end, n)
        return any(o.code == d.code and o.path == d.path and o.span.start <= end and start <= o.span.end for o in refused_first)
    def stood_before(d: Diagnostic, n: int) -> bool:
        """The finding was in the texts before the plan (its words, or its place): not one the
        plan created, so it is fixed only if its rule is selected (``--select MP202 --fix``
        leaves the unguarded bf16 of MP201 to MP201)."""
        if _loose(d) in known:
            return True
        start, end = trial.to_original(d.path, d.span.start, n), trial.to_original(d.path, d.span.end, n)
        # the same text at the same place (a span inside text a fix wrote maps only roughly)
        return any(o.code == d.code and o.path == d.path and (o.span.start, o.span.end) == (start, end) for o in first)

    # per path: (code, start, end) of the text each fix of the previous pass wrote
    written: Dict[str, List[Tuple[str, int, int, Diagnostic]]] = {}
    for n in range(MAX_FIX_PASSES):
        by_path: Dict[str, List[Diagnostic]] = {}
        for d in diagnostics:
            if d.fix is None or not d.fix.edits or is_refused(d, n):
                continue
            created = n > 0 and applicable is not None and not stood_before(d, n)
            if not (wanted(d) or (created and applicable(d))):
                continue
            by_path.setdefault(d.path, []).append(d)
        # A fix that must rewrite its own output again is not converging (it would nest
        # itself pass after pass): the fix that wrote that output is refused.
        for path, found in by_path.items():
            for d in found:
                for code, start, end, author in written.get(path, ()):
                    if code == d.code and any(e.start < end and e.end > start for e in d.fix.edits):
                        _blame(trial, path, author, n - 1, "it does not converge (its finding comes back after it)")
        if trial.problems:
            break
        written = {}
        progressed = False
        for path, found in sorted(by_path.items()):
            fix_of: Dict[Fix, Diagnostic] = {}
            for d in found:
                fix_of.setdefault(d.fix, d)
            chosen = select_fixes(list(fix_of))
            text = trial.texts[path]
            new = apply_edits(text, (e for f in chosen for e in f.edits))
            problem = valid(path, text, new)
            if problem is not None:
                trial.rejected.append((path, problem))
                alone = [f for f in chosen if valid(path, text, apply_edits(text, f.edits)) is not None]
                for f in alone or chosen:
                    _blame(trial, path, fix_of[f], n, f"its result would not parse ({problem})")
                continue
            if new == text:
                continue
            applied = sorted(set(e for f in chosen for e in f.edits), key=lambda e: (e.start, e.end))
            trial.passes.setdefault(path, []).extend([[]] * (n - len(trial.passes.get(path, []))))
            trial.passes[path].append(applied)
            written[path] = _written(chosen, fix_of)
            trial.texts[path] = new
            trial.fixes_applied[path] = trial.fixes_applied.get(path, 0) + len(chosen)
            counts = trial.fixed_codes.setdefault(path, {})
            for f in chosen:
                counts[fix_of[f].code] = counts.get(fix_of[f].code, 0) + 1
                if n == 0:
                    trial.planned[key(fix_of[f])] = fix_of[f]
            progressed = True
        if trial.problems or not progressed:
            break
        diagnostics = judge(trial.texts)
    for path, passes in trial.passes.items():  # one entry per pass for every changed path
        passes.extend([[]] * (max(len(p) for p in trial.passes.values()) - len(passes)))
    if not trial.problems:  # the findings of the texts as left: each change above was judged at once
        trial.diagnostics = diagnostics
    return trial


def _written(chosen: Sequence[Fix], fix_of: Dict[Fix, Diagnostic]) -> List[Tuple[str, int, int, Diagnostic]]:
    """(code, start, end, finding) of the text each applied edit wrote, in the new text.

    An edit two fixes share (both add ``import torch`` and the capability probe) is written
    once, so it is placed once and belongs to both: the shift of the text after it counts it
    once, for every later edit alike (counting it once per owner would place the second
    owner's copy, and everything after, past text that other fixes wrote)."""
    owners: Dict[Edit, List[Diagnostic]] = {}
    for f in chosen:
        for e in f.edits:
            owners.setdefault(e, []).append(fix_of[f])
    out, shift = [], 0
    for e in sorted(owners, key=lambda e: (e.start, e.end)):
        start = e.start + shift
        out.extend((d.code, start, start + max(len(e.content), 1), d) for d in owners[e])
        shift += len(e.content) - (e.end - e.start)
    return out


def _blame(trial: Trial, path: str, d: Diagnostic, n: int, why: str) -> None:
    """Refuse the fix of ``d``, a finding of pass ``n``: a finding of the original texts is
    refused itself; a later one is blamed on the original fixes whose edits made its place."""
    if n <= 0:
        trial.problems.setdefault(key(d), why)
        return
    start = trial.to_original(path, d.span.start, n)
    end = trial.to_original(path, d.span.end, n)
    culprits = [p for p in trial.planned.values() if p.path == path and _overlaps(start, end, p.fix.edits)]
    for p in culprits or [p for p in trial.planned.values() if p.path == path] or list(trial.planned.values()):
        trial.problems.setdefault(key(p), why)


def compare(
    before: List[Diagnostic],
    trial: Trial,
    resolvable: Callable[[Diagnostic], bool],
    texts: Dict[str, str],
    judge: Callable[[Dict[str, str]], List[Diagnostic]],
) -> Dict[Key, str]:
    """The fixes the trial's result refuses: (finding whose fix is refused → why) for every
    finding the plan hid, created, or left in place after its own fix. ``texts``: the original
    texts; ``judge``: every rule's findings of other texts."""
    after = list(trial.diagnostics)
    unmatched_after = list(range(len(after)))
    by_loose: Dict[tuple, List[int]] = {}
    for i, d in enumerate(after):
        by_loose.setdefault(_loose(d), []).append(i)
    taken: Set[int] = set()
    left: List[Diagnostic] = []
    survived: List[Diagnostic] = []
    # findings the plan did not fix are paired first: an identical twin that was fixed is the one gone
    for d in sorted(before, key=lambda d: key(d) in trial.planned):
        pool = [i for i in by_loose.get(_loose(d), ()) if i not in taken]
        if pool:
            taken.add(pool[0])
            if key(d) in trial.planned:
                survived.append(d)
        else:
            left.append(d)
    rest = [i for i in unmatched_after if i not in taken]
    gone: List[Diagnostic] = []
    for d in left:  # the same finding with other words (a flag it quotes was rewritten): by position
        start, end = trial.to_final(d.path, d.span.start), trial.to_final(d.path, d.span.end)
        match = next(
            (i for i in rest if after[i].code == d.code and after[i].path == d.path
             and after[i].span.start <= end and start <= after[i].span.end),
            None,
        )
        if match is None:
            gone.append(d)
            continue
        rest.remove(match)
        if key(d) in trial.planned:
            survived.append(d)
    problems: Dict[Key, str] = {}
    for d in survived:
        problems.setdefault(key(d), "the finding remains after its fix")
    hidden = [d for d in gone if key(d) not in trial.planned and not resolvable(d)]
    if hidden:
        # Hidden: the finding is back on some GPU. A fix that guards with the capability probe
        # makes a value the rule cannot judge (``bf16=True`` made ``bf16=BF16_OK``: the DeepSpeed
        # check falls silent), yet on an Ampere GPU BF16_OK is True and the run fails as before.
        # So the copy is linted again with the probe fixed True, then False; a finding gone in the
        # copy but present in either is hidden, not resolved (gone in both: its cause was
        # removed, as float32 weights end the fp16 eps underflow that MP104 reports).
        back = set()
        for variant in hardware_variants(trial):
            back.update(_loose(v) for v in judge(variant))
        for d in hidden:
            if _loose(d) not in back:
                continue
            text = texts.get(d.path, "")
            why = f"applying it would silence {d.code} on line {d.span.line}, which still fails on some GPUs"
            for p in _culprits(trial, d.path, [_lines(text, d.span.start, d.span.end)]) or _fallback(trial, d.path):
                problems.setdefault(key(p), why)
    for i in rest:
        d = after[i]
        spans = [(trial.to_original(d.path, d.span.start), trial.to_original(d.path, d.span.end))]
        why = f"its result has a new {d.code} finding ({_short(d.message)})"
        for p in _culprits(trial, d.path, spans) or _fallback(trial, d.path):
            problems.setdefault(key(p), why)
    return problems


# The capability tests a fix writes or reuses: what differs between GPUs in a fixed text.
_PROBES = (
    lazy(r"\b(\w+)\.cuda\.is_available\(\) and \1\.cuda\.get_device_capability\(\)\[0\] >= 8"),
    lazy(r"\b\w+\.cuda\.is_bf16_supported\([^()]*\)"),
)


def hardware_variants(trial: Trial) -> List[Dict[str, str]]:
    """The fixed texts as they run on an Ampere-or-newer GPU and on an older one: each
    capability test in the files the plan changed replaced by True, then by False."""
    out = []
    for value in ("True", "False"):
        variant = dict(trial.texts)
        for path in trial.passes:
            text = trial.texts[path]
            for probe in (get() for get in _PROBES):
                text = probe.sub(value, text)
            variant[path] = text
        out.append(variant)
    return out


def _lines(text: str, start: int, end: int) -> Tuple[int, int]:
    """The offsets of the whole lines holding ``text[start:end]``: what a finding points at
    (``bf16=True`` is reported at ``bf16``, and the fix edits ``True``)."""
    first = text.rfind("\n", 0, start) + 1
    last = text.find("\n", end)
    return first, len(text) if last < 0 else last


def _culprits(trial: Trial, path: str, spans: Sequence[Tuple[int, int]]) -> List[Diagnostic]:
    """The planned fixes whose edits touch one of ``spans`` (of the original text of ``path``)."""
    return [
        p for p in trial.planned.values()
        if p.path == path and any(_overlaps(s, e, p.fix.edits) for s, e in spans)
    ]


def _fallback(trial: Trial, path: str) -> List[Diagnostic]:
    """No fix edited near it: every fix of its file, else every fix of the run (an effect
    across files)."""
    return [p for p in trial.planned.values() if p.path == path] or list(trial.planned.values())


def _short(message: str, limit: int = 100) -> str:
    return message if len(message) <= limit else message[: limit - 1].rstrip() + "…"


def refuse(d: Diagnostic, why: str) -> Diagnostic:
    """``d`` without its fix, saying why it has none."""
    return dataclasses.replace(d, fix=None, message=f"{d.message} (no automatic fix: {why})")


def with_refusals(
    diagnostics: Iterable[Diagnostic], refused: Dict[Key, str], original: Dict[Key, Diagnostic], trial: Optional[Trial] = None
) -> List[Diagnostic]:
    """``diagnostics`` with the fix of each refused finding taken away (found by key, or in a
    fixed text by code, words and position)."""
    if not refused:
        return list(diagnostics)
    loose: Dict[tuple, str] = {}
    for k, why in refused.items():
        d = original.get(k)
        if d is not None:
            loose.setdefault(_loose(d), why)
    out = []
    for d in diagnostics:
        why = refused.get(key(d))
        if why is None and trial is not None and d.fix is not None:
            why = loose.get(_loose(d))
            if why is None:
                for k, w in refused.items():
                    o = original.get(k)
                    if o is not None and o.code == d.code and o.path == d.path:
                        s, e = trial.to_final(o.path, o.span.start), trial.to_final(o.path, o.span.end)
                        if d.span.start <= e and s <= d.span.end:
                            why = w
                            break
        out.append(refuse(d, why) if why is not None and d.fix is not None else d)
    return out
