"""Findings for removed and renamed transformers / TRL / peft names (shared by MP302 and MP304).

The facts (``facts/extractors/migrations.py``) say which table names a file uses and on
what; the table (``knowledge/migrations.toml``) says which library class owns each name,
when it was deprecated and removed, and what replaces it. This module joins the two with
the project's class hierarchy (a ``TrainingArguments`` subclass, a ``trainer`` variable,
``AutoModelForCausalLM.from_pretrained``) and the targeted library versions, and builds the
fixes: renames, and keywords moved from a TRL trainer into the config it is given.
"""
from __future__ import annotations

import dataclasses
import os
from .._dataclass import dataclass
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from ..diagnostics import SAFE, UNSAFE, Edit, Fix, Related, Span
from ..knowledge import Migration, migrations, older_spelling, patch_accepts, removed_module
from ..project.configurations import builds_in, configurations
from ..semantic.values import CONST, SYMBOL
from ..workspace.versions import Allowed, compare, newest_admitted
from .base import RuleContext, replace
from .._regex import lazy
from dataclasses import replace as replace_fields

# the defaults of a redeclared field that ask for nothing: the run without the field is the same
NO_EFFECT = (None, False, 0, "", "no", "none")
VERSION_TEXT = {"transformers": "transformers", "trl": "TRL", "peft": "peft", "accelerate": "accelerate"}
# the libraries whose dataclasses an HfArgumentParser fills that the tables know (a class of
# another library may declare any field)
_PARSED_LIBRARIES = frozenset({"transformers", "trl", "peft", "sentence_transformers", "dataclasses"})
CONFIG_CLASS = "transformers.PretrainedConfig"  # what `model.config` is


def version_text(version: Optional[Tuple[int, ...]]) -> str:
    return ".".join(map(str, version)) if version else "?"


def allowed_versions(ctx: RuleContext, row: Migration) -> Allowed:
    """The versions of the row's library the file targets (a range: versions.py)."""
    return ctx.targets.of(row.library)


def own_library(ctx: RuleContext, row: Migration) -> bool:
    """Whether the file is part of the library the row is about (a vendored copy of
    transformers, or its repository): its code defines the API at its own version."""
    library = ctx.library_code
    return library is not None and library.dist == row.library


def stage_of(row: Migration, allowed: Allowed, silent: bool = False) -> Optional[str]:
    """``"removed"`` where every allowed version has removed the name (it crashes: MP302),
    ``"removed-in-some"`` where only the newer ones have (a warning that names them: MP304),
    ``"deprecated"`` where some allowed version warns, else None (nothing to say). ``silent``:
    the call is one that the row's ``silent_since`` and later accept without a warning, so only
    an allowed version from ``deprecated_in`` up to below ``silent_since`` warns; and a warning
    that is all it does is a finding only where it fires on the version the code plausibly
    targets, the newest its range admits (a fresh install of ``>=4.31`` gets a silent 5.x, though
    4.56 and 4.57 are admitted and warn): an exact pin, the newest known version below an upper
    bound, the newest known release for none (``versions.newest_admitted``)."""
    if silent and row.silent_since is not None:
        if not allowed.accepts_between(row.deprecated_in, row.silent_since):
            return None
        top = newest_admitted(allowed)
        if top is not None and not Allowed.point(allowed.dist, top, "").accepts_between(row.deprecated_in, row.silent_since):
            return None
        return "deprecated"
    if allowed.every_at_least(row.removed_in):
        return "removed"
    if allowed.some_at_least(row.removed_in):
        return "removed-in-some"
    if allowed.some_at_least(row.deprecated_in):
        return "deprecated"
    return None


def _quiet(row: Migration, use) -> bool:
    """Whether every value the code gives the keyword is one the row's deprecated versions
    accept without a warning (``KeywordUse.code_values``, as Python writes a constant:
    ``False``, ``0.1``, ``'keep_end'``; a value not known is none of them)."""
    if not row.quiet_values:
        return False
    given = _given_by_code(use)
    return bool(given) and all(v.kind == CONST and repr(v.value) in row.quiet_values for v in given)


def _given_by_code(use) -> List:
    """The values the code gives a keyword (``KeywordUse.code_values``), less those the user
    passes on the command line (after the join too); [] where they are not read."""
    return [v for v in getattr(use, "code_values", None) or () if not any(g.on_command_line for g in v.guards)]


def removed_value(row: Migration, use) -> Optional[str]:
    """For a row of removed ``values`` (``optim='adamw_hf'``): the one of them the use gives, as
    the row writes it; None where it gives none of them, or where that is not known. A keyword
    of code is judged by the values the code gives it (``KeywordUse.code_values``: a parameter's
    are its callers', substituted at the join; not a value the user passes on the command
    line), else by its text (a file's key, a launch's option, a literal)."""
    if not row.values:
        return None
    if getattr(use, "code_values", None):
        return next((repr(v.value) for v in _given_by_code(use) if v.kind == CONST and repr(v.value) in row.values), None)
    text = _unquoted(use.value_text)
    return next((v for v in row.values if _unquoted(v) == text), None)


def _unquoted(text: str) -> str:
    text = text.strip()
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" else text


def valued(row: Migration, use, subject: str) -> str:
    """``subject`` (how a message names the keyword) with the removed value it is given, for a
    row of removed ``values``: `` `optim='adamw_hf'` ``."""
    value = removed_value(row, use)
    if value is None:
        return subject
    if subject == f"`{use.name}=`":
        return f"`{use.name}={value}`"
    return f"{subject} (`{_unquoted(value)}`)"


def default_advice(row: Migration, value_text: str) -> Optional[str]:
    """For a removed keyword given the value it defaulted to (``group_by_length=False``, YAML's
    ``false`` alike): remove it, the run is the same; its replacement would turn on what the
    value kept off. None otherwise."""
    if row.default is None or row.removed_in is None:
        return None
    if _unquoted(value_text).lower() != row.default.lower():
        return None
    return f"remove it (`{value_text.strip()}` is what it defaulted to: the run is the same without it)"


def never_runs(call) -> bool:
    """Whether a call runs in no configuration: one of the tests it runs under
    (``MigrationCall.when``, substituted at the join) certainly fails in each (``elif
    load_in_8bit:`` of a parameter every caller seen leaves at its default ``False``)."""
    when = call.when
    return bool(when) and all(builds_in(when, probe) is None for probe in configurations(*(s for s, _, _ in when)))


def rule_stage(stage: Optional[str]) -> Optional[str]:
    """The stage of the rule that reports a row's stage (MP302 "removed", MP304 the rest)."""
    return "deprecated" if stage == "removed-in-some" else stage


def new_name_exists(row: Migration, allowed: Allowed) -> bool:
    """Whether the lowest allowed version has what the fix writes (never the reverse rename;
    a version of unknown age has nothing newer than the oldest)."""
    return allowed.has_since(row.move_since if row.fix == "move" else row.rename_since)


def move_spelling(row: Migration, allowed: Allowed) -> Optional[str]:
    """The keyword a moved name is written as in its config in every allowed version: the
    row's ``move_as`` where the lowest allowed version has it; where no allowed version has it
    yet, the config's older name of it (``knowledge.older_spelling``: ``SFTConfig(max_seq_length=)``
    below TRL 0.16), from the version the trainer points at the config (``deprecated_in``) on;
    None where no one spelling holds (a range across the rename) or for a row that moves nothing."""
    if row.fix != "move":
        return None
    if new_name_exists(row, allowed):
        return row.move_as
    older = older_spelling(row)
    if older is not None and not allowed.some_at_least(row.move_since) and allowed.has_since(row.deprecated_in):
        return older.name
    return None


def advice(row: Migration, allowed: Allowed) -> str:
    """What the message tells the user to do: the row's replacement where the targeted versions
    have it; where none of them has a config keyword's newer spelling yet, the spelling they
    have (or, none known, that the replacement is newer); across the rename, both."""
    replacement = row.replacement
    if replacement.startswith("remove"):
        return replacement
    if row.fix != "move" or new_name_exists(row, allowed):
        return f"use {replacement}"
    config = row.move_to.rsplit(".", 1)[-1]
    lib = VERSION_TEXT[row.library]
    since = version_text(row.move_since)
    older = older_spelling(row)
    # the versions that warn have the config's older name (TRL 0.9 to 0.15: SFTConfig(max_seq_length=))
    if older is not None and allowed.some_at_least(row.deprecated_in):
        if not allowed.some_at_least(row.move_since):
            return f"use {config}({older.name}=...) ({lib} {since} renames it `{row.move_as}`)"
        return f"use {config}({older.name}=...) below {lib} {since}, {replacement} from it on"
    if not allowed.some_at_least(row.move_since):
        return f"its replacement, {replacement}, is new in {lib} {since}: {allowed.where()} has no such keyword"
    return f"use {replacement}"


def no_fix_reason(row: Migration, allowed: Allowed) -> str:
    """Why a rename or move is not offered: the new spelling is newer than the lowest version
    the file allows."""
    since = row.move_since if row.fix == "move" else row.rename_since
    new = f"{row.move_to.rsplit('.', 1)[-1]}({row.move_as}=)" if row.fix == "move" else row.rename_to
    lib = VERSION_TEXT[row.library]
    why = row.since_note or f"`{new}` is new in {lib} {version_text(since)}"
    older = f"{allowed.where()} is older" if allowed.is_point else f"{allowed.where()} allows older versions"
    return f"{why}, and {older}" if row.fix == "move" else f"no fix: {why}, and {older}"


def consequence(row: Migration, stage: str, error: str, allowed: Allowed, silent: bool = False, told: Optional[str] = None) -> str:
    """``was removed in X and raises `E`; use R`` and its deprecated forms, with the versions
    the file targets where its project states them (``silent``: the versions that warn).
    ``told``: what to do, where not the row's :func:`advice`."""
    lib = VERSION_TEXT[row.library]
    pinned = allowed.source not in ("configuration", "installed", "newest")
    if stage == "removed":
        said = f"was removed in {lib} {version_text(row.removed_in)} and raises `{error}`"
        if pinned:
            said += f" ({allowed.where()})" if allowed.is_point else f" (every version {allowed.where()} allows)"
    elif stage == "removed-in-some":
        said = (
            f"was removed in {lib} {version_text(row.removed_in)} and raises `{error}` there: "
            f"{allowed.where()} allows {lib} {allowed.from_version(row.removed_in)}"
        )
    elif row.removed_in:
        said = (
            f"is deprecated since {lib} {version_text(row.deprecated_in)} and raises `{error}` "
            f"from {lib} {version_text(row.removed_in)} on"
        )
    elif silent and row.silent_since is not None:
        said = (
            f"is deprecated since {lib} {version_text(row.deprecated_in)} and warns below {lib} "
            f"{version_text(row.silent_since)} ({error.removeprefix('warning: ')}); {lib} "
            f"{version_text(row.silent_since)} and later "
            + (f"take it without a word and ignore it ({row.silent_effect})" if row.silent_effect else "accept it silently")
        )
    else:
        said = f"is deprecated since {lib} {version_text(row.deprecated_in)} (it warns: {error.removeprefix('warning: ')})"
    if pinned and stage != "removed" and stage != "removed-in-some":
        said += f" ({allowed.where()})"
    return f"{said}; {told if told is not None else advice(row, allowed)}"


def store_consequence(row: Migration, stage: str, allowed: Allowed) -> str:
    """What a store of a removed attribute does (the row's ``on_store``: ``"ignored"``, the
    library no longer reads it; ``"fails"``, a later library call raises), with the versions
    it does so on: no AttributeError, a store looks nothing up."""
    lib = VERSION_TEXT[row.library]
    since = f"{lib} {version_text(row.removed_in)}"
    what = "is ignored" if row.on_store == "ignored" else "is refused later"
    said = f"{what} from {since} on, which no longer has the attribute: {row.store_effect}"
    if stage == "removed":
        if allowed.source not in ("configuration", "installed", "newest"):
            said += f" ({allowed.where()})" if allowed.is_point else f" (every version {allowed.where()} allows)"
    elif stage == "removed-in-some":
        said += f"; {allowed.where()} allows {lib} {allowed.from_version(row.removed_in)}"
    return f"{said}; {advice(row, allowed)}"


def stated_range(allowed: Allowed) -> bool:
    """Whether the allowed versions are ones the code's project states (a pin, a floor, a cap, a
    ``require_version``, the configuration's ``transformers-version``), not the installed or
    newest version taken for want of one, nor a range implied from another library's pin."""
    return (
        (allowed.low is not None or allowed.high is not None)
        and not allowed.fallback and not allowed.commit and not allowed.note
    )


def filled_error(error: str, row: Migration, shown: Optional[str], project_class: bool) -> str:
    """A row's error with its placeholders filled for a call of ``shown``: ``{model}`` is the
    class ``from_pretrained`` builds, named where the call names it (a transformers model class
    of the library itself, ``GPT2LMHeadModel``), else ``<model class>`` (an Auto class builds
    the class the checkpoint's config names; a project subclass's ``__init__``, or its
    library base's, raises; ``shown`` None: one of several classes the code picks)."""
    short = shown.rsplit(".", 1)[-1] if shown else ""
    named = shown is not None and shown.startswith(f"{row.library}.") and not project_class and not short.startswith("Auto")
    return (
        error.replace("{model}", short if named else "<model class>")
        .replace("{tokenizer}", "<tokenizer class>")
        .replace("{config}", "<config class>")
    )


def too_new_message(row: Migration, use, shown: str, allowed: Allowed, library_class: str, project_class: bool) -> str:
    """``processing_class=`` passed to `Trainer` is new in transformers 4.46 and raises ... on
    every version transformers<4.46 (in setup.py) allows. ``library_class``: the first
    library class of ``shown``'s MRO; ``project_class``: ``shown`` is the project's own."""
    lib = VERSION_TEXT[row.library]
    short = shown.rsplit(".", 1)[-1]
    target = f"`{short}.{row.method}`" if row.method else f"`{short}`"
    error = filled_error(row.older_error, row, shown, project_class)
    # raised by the library class's own `__init__` (a subclass's name is not in it)
    if row.method is None and f"{row.owner_short}.__init__()" in error:
        error = error.replace(f"{row.owner_short}.__init__()", f"{library_class.rsplit('.', 1)[-1]}.__init__()")
    kind = f"key `{use.name}` of the **kwargs dict" if use.via != "keyword" else f"`{use.name}=`"
    since = version_text(row.rename_since)
    # (reported only where none of the allowed versions has it: ``MigrationJudge.too_new``)
    where = f"on every version {allowed.where()} allows" if not allowed.is_point else f"on {allowed.where()}"
    return (
        f"{kind} passed to {target} is new in {lib} {since} and raises `{error}` {where}; "
        f"no fix: the old `{row.name}=` {old_fate(row)}, so require {lib} {since} or later "
        f"(or choose the keyword by a version check)"
    )


def old_fate(row: Migration) -> str:
    lib = VERSION_TEXT[row.library]
    if row.removed_in is not None:
        return f"fails from {lib} {version_text(row.removed_in)} on"
    if row.silent_since is not None and not (row.silent_values or row.silent_with):
        return (
            f"warns from {lib} {version_text(row.deprecated_in)} to below {version_text(row.silent_since)} "
            f"and is accepted silently from {version_text(row.silent_since)} on"
        )
    return f"warns from {lib} {version_text(row.deprecated_in)} on"


def receiver_classes(call) -> Tuple[str, ...]:
    """The classes the receiver of ``cls.m(...)`` may be (its ``SYMBOL`` atoms, parameters
    substituted by what callers pass), or () unless every value is a known class: an unknown
    value, or a parameter no caller is seen to fill, may be any class."""
    values = getattr(call, "receiver_values", ())
    if not values or any(v.kind != SYMBOL for v in values):
        return ()
    return tuple(dict.fromkeys(v.value for v in values))


# library functions that build an instance of a library class (peft 0.21.2 `get_peft_model`
# returns a `PeftModel`, or one of its task subclasses)
_BUILDERS = {"peft.get_peft_model": "peft.PeftModel"}


def _instance_class(source: str) -> str:
    """What a call assigned to a variable builds: ``X.from_pretrained`` builds an ``X``,
    ``get_peft_model(...)`` a ``PeftModel``."""
    head, _, last = source.partition(".")
    built = _BUILDERS.get(f"{head}.{source.rpartition('.')[2]}")
    if built is not None:
        return built
    for suffix in (".from_pretrained", ".from_config"):
        if source.endswith(suffix):
            return source[: -len(suffix)]
    return source


@dataclass(frozen=True)
class _Forwarded:
    """The library call inside a forwarding helper, shaped like a call fact."""

    callee: Optional[str]
    method: Optional[str]
    klass: Optional[str]
    sources: Tuple[str, ...]
    keywords: Tuple[str, ...] = ()  # what the helper's call and the caller pass, together


@dataclass(frozen=True)
class Finding:
    """A use that a row of the migration table hits, before it becomes a diagnostic: the rule
    still adjusts it with the whole call in view (a rename that would leave the call no allowed
version loses its fix and says why)."""

    row: Migration
    stage: str  # "removed" or "deprecated"
    span: Span
    message: str
    fix: Optional[Fix]
    path: Optional[str] = None  # the file it is in, where not the module's (a configuration file)
    related: Tuple[Related, ...] = ()
    noqa_line: Optional[int] = None  # where a `# noqa` comment turns it off, where not its line


@dataclass(frozen=True)
class _KeyUse:
    """A key of a configuration file, as a keyword use is seen by the table's lookups."""

    name: str
    value_text: str


class MigrationJudge:
    """Which table rows a file's uses hit, for one stage."""

    def __init__(self, ctx: RuleContext, stage: str) -> None:
        self.ctx = ctx
        self.stage = stage
        self._imported = None

    # --- classes --------------------------------------------------------------------------
    def _ancestry(self, qualname: Optional[str]) -> List[str]:
        if not qualname:
            return []
        return [name for name, _, _ in self.ctx.project.symbols.ancestry(qualname, self.ctx.facts)]

    def _is_project_class(self, qualname: str) -> bool:
        return self.ctx.project.symbols.find_class(qualname, self.ctx.facts)[1] is not None

    def _always_imported(self):
        """The modules every run of the file imports (``Project.always_imported``): a patching
        library imported only under an ``if`` patches only some runs."""
        if self._imported is None:
            ctx = self.ctx
            self._imported = ctx.project.always_imported(ctx.facts)
        return self._imported

    def _allowed(self, row: Migration) -> Allowed:
        """The versions ``row`` is judged on: the file's, but for the import of a removed module
        (``[[removed_module]]``), the versions before that removal ends them (the file runs only
        before it: every other row is judged there; the import itself fails from it on)."""
        if row.kind == "import" and removed_module(f"{row.owner}.{row.name}") is not None:
            return self.ctx.project.targets_before_removals(self.ctx.facts).of(row.library)
        return allowed_versions(self.ctx, row)

    def _stage(self, row: Migration) -> Optional[str]:
        return stage_of(row, self._allowed(row))

    def _applies(self, row: Migration) -> bool:
        return row.code is None and not own_library(self.ctx, row) and rule_stage(self._stage(row)) == self.stage

    def _new_name_exists(self, row: Migration) -> bool:
        return new_name_exists(row, self._allowed(row))

    def _rows(self, kind: str, name: str, any_stage: bool = False) -> List[Migration]:
        """The rows of a name that this rule reports (``any_stage``: that any rule reports)."""
        return [r for r in self._named_rows(kind, name) if self._reports(r, any_stage)]

    def _named_rows(self, kind: str, name: str) -> List[Migration]:
        """The rows of a name that may judge this file (not the library's own code), whatever the
        versions say: what :meth:`_rows` keeps without asking the file's versions."""
        return [r for r in migrations() if r.kind == kind and r.name == name and r.code is None and not own_library(self.ctx, r)]

    def _reports(self, row: Migration, any_stage: bool = False) -> bool:
        """Whether this rule (``any_stage``: any rule) reports ``row`` on the versions the file targets."""
        return self._stage(row) is not None if any_stage else rule_stage(self._stage(row)) == self.stage

    # --- keywords -------------------------------------------------------------------------
    def _call_targets(self, call) -> List[Tuple[str, Optional[str], bool]]:
        """(class, method, skip_first) pairs a call may run: a constructor, or a method."""
        if call.callee == "super":
            return [(call.klass, None, True)] if call.klass else []
        out = []
        if call.callee:
            out.append((call.callee, None, False))
            head, _, last = call.callee.rpartition(".")
            if head:
                out.append((head, last, False))
        for source in call.sources:
            out.append((_instance_class(source), call.method, False))
        return out

    def _silent(self, row: Migration, use, keywords) -> bool:
        """Whether the call is one the row's ``silent_since`` accepts silently (a literal
        ``"auto"``, or ``config=`` beside it, where the table says so), also where the value is
        not written as a literal but every value the code gives it is one (a parameter whose
        default is ``"auto"`` and that no caller passes: held-out 44u's F2)."""
        if row.silent_for(use.value_text, keywords):
            return True
        given = _given_by_code(use)
        return bool(given) and all(
            v.kind == CONST and isinstance(v.value, str) and row.silent_for(repr(v.value), keywords) for v in given
        )

    def _still_warns(self, found, call, use, any_stage: bool) -> Optional[Tuple[Migration, str]]:
        """``found``, unless the call is one that every allowed version that warns for other
        calls accepts silently (backward compatibility kept without a warning), or one whose
        code gives only values the deprecated versions accept without a word (``quiet_values``:
        ``use_flash_attention_2=False``) where no allowed version has removed the name."""
        if found is not None and _quiet(found[0], use) and stage_of(found[0], self._allowed(found[0])) == "deprecated":
            return None
        if found is None or not self._silent(found[0], use, getattr(call, "keywords", ())):
            return found
        stage = stage_of(found[0], self._allowed(found[0]), silent=True)
        if stage is None or (not any_stage and rule_stage(stage) != self.stage):
            return None
        return found

    def _keyword_row(self, call, use, any_stage: bool = False) -> Optional[Tuple[Migration, str]]:
        return self._still_warns(self._keyword_row_any(call, use, any_stage), call, use, any_stage)

    def _keyword_row_any(self, call, use, any_stage: bool = False) -> Optional[Tuple[Migration, str]]:
        # the rows of the name first, the versions only of a row whose class the call runs (the
        # file's targets are its runs' pins and its importers' tests: a module of a library
        # passes `max_length=` to its own classes, never TRL's)
        rows = [r for r in self._named_rows("keyword", use.name) if not r.values or removed_value(r, use) is not None]
        if not rows:
            return None
        reports = lambda row: self._reports(row, any_stage)
        found = self._row_for_targets(self._call_targets(call), use, rows, reports)
        if found is not None:
            return found
        classes = receiver_classes(call)
        if not classes:
            return None
        # `cls.from_pretrained(...)` with `cls` one of several classes: the row must hold for
        # every one of them (a class it does not apply to may be the one that runs)
        each = [self._row_for_targets([(c, call.method, False)], use, rows, reports) for c in classes]
        if any(e is None for e in each) or len({e[0] for e in each}) != 1:
            return None
        return each[0]

    def _row_for_targets(self, targets, use, rows, reports=None) -> Optional[Tuple[Migration, str]]:
        """The first of ``rows`` (``reports``: of those it holds for) whose class and method a
        call of ``targets`` runs, with the class."""
        symbols = self.ctx.project.symbols
        for cls, method, skip_first in targets:
            if method is not None and taken_by_project_method(self.ctx, cls, method, use.name, skip_first):
                continue  # the project's own `from_pretrained(..., use_flash_attention_2=False)`
            ancestry = self._ancestry(cls)
            if skip_first:
                ancestry = ancestry[1:]
            for row in rows:
                if row.method != method or not any(row.matches_owner(a) for a in ancestry):
                    continue
                if reports is not None and not reports(row):
                    continue
                if method is None:
                    owner = symbols.init_owner(cls, self.ctx.facts)
                    if skip_first and owner is not None and owner.qualname == cls:
                        owner = None  # super().__init__ runs the base's __init__, not this one
                    if owner is not None and owner.init_params and use.name in owner.init_params:
                        break  # the project's own __init__ takes it: their signature, not the library's
                    if self._declared_by_project(cls, use.name):
                        break  # a project class of its MRO declares it (a compatibility field)
                    if any(patch_accepts(self._always_imported(), a, use.name) for a in ancestry):
                        break  # a patching library (unsloth) translates it
                if skip_first:  # super().__init__: the library base it reaches
                    return row, next((a for a in ancestry if not self._is_project_class(a)), cls)
                return row, cls
        return None

    def calls(self) -> Iterator[Finding]:
        """One finding per keyword use and row: a dict whose key several calls receive
        (``kwargs["torch_dtype"] = ...`` then ``AModel.from_pretrained(**kwargs)`` or
        ``BModel.from_pretrained(**kwargs)``) is reported once, at its key, naming the other
        calls: one edit of the key answers them all."""
        found: Dict[Tuple[int, Span], Finding] = {}
        also: Dict[Tuple[int, Span], List[str]] = {}
        for call in self.ctx.facts.section("migrations").get("calls", ()) if self._has_section() else ():
            if call.tolerated and call.warning_tolerated:
                continue  # written for several versions: a version check, or a fallback
            if never_runs(call):
                continue  # under a test no configuration passes (a parameter every caller leaves False)
            hits = []
            for use in call.uses:
                if use.tolerated:
                    continue  # its key is set only under a version check of its own
                hit = self._keyword_row(call, use)
                if hit is not None and call.tolerated and self._stage(hit[0]) != "deprecated":
                    continue  # the TypeError the versions that removed it raise is caught
                if hit is not None:
                    hits.append((use, hit[0], hit[1]))
            moves = self._moves(call, hits)
            for use, row, shown in hits:
                key = (id(row), use.key_span)
                if key in found:
                    target = f"`{shown.rsplit('.', 1)[-1]}.{row.method}`" if row.method else f"`{shown.rsplit('.', 1)[-1]}`"
                    also[key].append(f"{target} (line {call.span.line})")
                    continue
                finding = self._keyword_finding(call, use, row, shown, moves)
                if finding.fix is not None and row.fix == "rename":
                    kept = self.kept_old_keywords(call, use.name, row, moves)
                    if kept:
                        finding = Finding(row, finding.stage, finding.span, f"{finding.message} ({kept})", None)
                found[key], also[key] = finding, []
        for key, finding in found.items():
            others = list(dict.fromkeys(also[key]))
            if others:
                finding = dataclasses.replace(finding, message=f"{finding.message} (the dict goes to {' and '.join(others)} too)")
            yield finding

    def kept_old_keywords(self, call, renamed: str, row: Migration, moves=None) -> Optional[str]:
        """Why renaming ``renamed`` on ``call`` alone would give a call no allowed version
        accepts, or None: the call keeps a keyword of the API the new name replaces (deprecated
        by the time the new name came) that no fix changes, and every allowed version that has
        the new name has removed it. ``SFTTrainer(tokenizer=t, max_seq_length=512)`` on a current
        TRL: ``processing_class=`` with ``max_seq_length=`` fails there as the original does. A
        keyword deprecated later (``logging_dir=`` beside ``evaluation_strategy=``) is another
        migration: it does not hold the rename back."""
        moves = moves if moves is not None else {}
        allowed = self._allowed(row)
        until, which = None, None
        for use in call.uses:
            if use.name == renamed:
                continue
            found = self._keyword_row(call, use, any_stage=True)
            if found is None:
                continue
            other = found[0]
            if other.library != row.library or other.removed_in is None:
                continue
            if other.fix == "move" and use.name in moves:
                continue  # moved out of the call by its own fix
            if other.fix == "rename" and self._new_name_exists(other):
                continue  # renamed by its own fix
            if compare(other.deprecated_in or other.removed_in, row.rename_since or (0,)) > 0:
                continue  # on its way out only after the new name came: not the API it replaces
            if until is None or compare(other.removed_in, until) < 0:
                until, which = other.removed_in, use.name
        if until is None or allowed.accepts_between(row.rename_since, until):
            return None
        lib = VERSION_TEXT[row.library]
        both = f"`{which}=` and `{row.rename_to}=`"
        takes = f"{allowed.where()} does not take both {both}" if allowed.is_point else f"no version of {allowed.where()} takes both {both}"
        return f"not renamed alone: the call keeps `{which}=`, removed in {lib} {version_text(until)}, and {takes}"

    def _declared_by_project(self, qualname: Optional[str], name: str, attribute: bool = False) -> bool:
        """Whether a project class in the MRO of ``qualname`` declares ``name`` itself: for a
        keyword, a (dataclass) field; for an ``attribute``, also a class attribute, property
        or method, or one its methods assign on ``self``. A mixin that re-declares a removed
        field and converts it in ``__post_init__`` keeps the old name working."""
        return declared_by_project(self.ctx, qualname, name, attribute)

    def forwarded(self) -> Iterator[Finding]:
        """Table keywords passed to a project function that hands its ``**kwargs`` to a library
        call (``make_args("o", evaluation_strategy="steps")``), also in another file."""
        if not self._has_section():
            return
        symbols = self.ctx.project.symbols
        for call in self.ctx.facts.section("migrations").get("project_calls", ()):
            module, function = symbols.resolve(call.callee, self.ctx.facts)
            if module is None:
                continue
            section = module.section("migrations")
            forwards = [f for f in section.get("forwards", ()) if f.function == function] if section else []
            helper = function.rsplit(".", 1)[-1]
            where = "" if module.path == self.ctx.facts.path else " of " + module.path  # (the join's copy of the same file)
            for use in call.uses:
                # (row, the library calls that take it, with their classes), one finding per row: a
                # helper that picks one of several classes (`LlamaX.from_pretrained(**kw)` or
                # `MistralX.from_pretrained(**kw)`) hands the keyword on once, whichever it picks
                reached: List[Tuple[Migration, list]] = []
                for forward in forwards:
                    if use.name in forward.own_params or use.name in forward.keywords:
                        continue
                    passed = tuple(dict.fromkeys((*call.keywords, *forward.keywords)))
                    inner = _Forwarded(forward.callee, forward.method, forward.klass, forward.sources, passed)
                    found = self._keyword_row(inner, use)
                    if found is None:
                        continue
                    calls = next((c for r, c in reached if r is found[0]), None)
                    if calls is None:
                        calls = []
                        reached.append((found[0], calls))
                    calls.append((found[1], forward, inner))
                for row, calls in reached:
                    targets = list(dict.fromkeys(
                        f"`{shown.rsplit('.', 1)[-1]}.{row.method}` (line {forward.span.line}{where})" if row.method
                        else f"`{shown.rsplit('.', 1)[-1]}` (line {forward.span.line}{where})"
                        for shown, forward, _ in calls
                    ))
                    shown, _, inner = calls[0]
                    error = self._error(row, shown, several=len({c[0] for c in calls}) > 1, use=use)
                    message = (
                        f"{valued(row, use, f'`{use.name}=`')} passed to `{helper}`, which hands its **kwargs to {' or '.join(targets)}, "
                        f"{self._consequence(row, error, self._silent(row, use, inner.keywords))}"
                    )
                    fix = None
                    passed = set(call.keywords).union(*(f.keywords for _, f, _ in calls))
                    if row.fix == "rename" and self._new_name_exists(row) and row.rename_to not in passed:
                        edit = replace(use.key_span, use.key_text.replace(use.name, row.rename_to))
                        fix = Fix(_safety(row), f"Rename `{use.name}` to `{row.rename_to}`", (edit,))
                    yield Finding(row, self.stage, use.key_span, message, fix)

    def _builds_a_model(self, source: str) -> bool:
        """Whether a call builds a transformers model (``AutoModelForCausalLM.from_pretrained``,
        ``GPT2LMHeadModel(config)``): the classes the table's ``from_pretrained`` rows cover."""
        model_rows = [r for r in migrations() if r.method == "from_pretrained"]
        cls = _instance_class(source)
        return any(r.matches_owner(a) for r in model_rows[:1] for a in self._ancestry(cls))

    def _has_section(self) -> bool:
        return bool(self.ctx.facts.section("migrations"))

    def _entries(self, name: str) -> tuple:
        """The entries ``name`` (``"splats"``, ``"hydra"``...) of the module's migrations section;
        () where it has none."""
        section = self.ctx.facts.section("migrations")
        return section.get(name, ()) if section else ()

    def _error(self, row: Migration, shown: str, several: bool = False, use=None) -> str:
        """The row's error for a call of ``shown`` (``several``: the code picks one of several
        classes, so none is named), given ``use``'s removed value for a row of ``values``."""
        project = self._is_project_class(shown)
        error = filled_error(row.error, row, None if several else shown, project)
        value = removed_value(row, use) if use is not None else None
        if value is not None:
            error = error.replace("{value}", _unquoted(value))
        short = shown.rsplit(".", 1)[-1]
        if not project and f"{row.owner_short}.__init__()" in error:
            error = error.replace(f"{row.owner_short}.__init__()", f"{short}.__init__()")
        return error

    def _consequence(self, row: Migration, error: str, silent: bool = False, told: Optional[str] = None) -> str:
        stage = stage_of(row, self._allowed(row), silent) or self.stage
        return consequence(row, stage, error, self._allowed(row), silent, told=told)

    def _keyword_finding(self, call, use, row, shown, moves) -> Finding:
        short = shown.rsplit(".", 1)[-1]
        target = f"`{short}.{row.method}`" if row.method else f"`{short}`"
        classes = receiver_classes(call) if not call.callee and not call.sources else ()
        if classes and row.method:  # `cls.from_pretrained` with `cls` a class the code picks
            shorts = list(dict.fromkeys(c.rsplit(".", 1)[-1] for c in classes))
            target = f"`{call.receiver_text}.{row.method}` ({' or '.join(f'`{c}`' for c in shorts)})"
        through = getattr(call, "through", "")
        if through:  # `pipeline(model_kwargs={...})`: the Auto class the task picks
            target = f"{target} by `{through}`"
        kind = valued(row, use, f"key `{use.name}` of the **kwargs dict" if use.via != "keyword" else f"`{use.name}=`")
        silent = self._silent(row, use, call.keywords)
        error = self._error(row, shown, several=len(classes) > 1, use=use)
        message = f"{kind} passed to {target} {self._consequence(row, error, silent, default_advice(row, use.value_text))}"
        fix = None
        if row.fix == "rename" and not self._new_name_exists(row):
            message += f" ({no_fix_reason(row, self._allowed(row))})"
        if row.fix == "rename" and self._new_name_exists(row):
            if row.rename_to in call.keywords:
                message += f"; `{row.rename_to}` is passed as well, so remove one of them"
            else:
                new_key = use.key_text.replace(use.name, row.rename_to)
                fix = Fix(_safety(row), f"Rename `{use.name}` to `{row.rename_to}`", (replace(use.key_span, new_key),))
        elif row.fix == "move":
            fix = moves.get(use.name)
            if fix is None:
                why = self._why_not_moved(call, use, row)
                message += f" ({why})"
                if (
                    not self._new_name_exists(row) and self._allowed(row).some_at_least(row.move_since)
                    and "allows older" not in why and " has no " not in why and " is older" not in why
                ):
                    message += f" ({no_fix_reason(row, self._allowed(row))})"  # the spelling the message names is newer
        return Finding(row, self.stage, use.key_span, message, fix)

    def _config_ok(self, call, row) -> bool:
        """Whether ``args=`` is the config class the keyword moves into (or a subclass)."""
        if call.config is None:
            return False
        return any(same_library_class(a, row.move_to) for a in self._ancestry(call.config.callee))

    def _why_not_moved(self, call, use, row) -> str:
        config_name = row.move_to.rsplit(".", 1)[-1]
        if use.via != "keyword":
            return f"move it from the **kwargs dict into the `{config_name}` given as `args=`"
        if call.config is None:
            return f"not moved automatically: the call passes no `{config_name}(...)` built in this file as `args=`"
        if not self._config_ok(call, row):
            return f"not moved automatically: `args=` is not a `{config_name}`"
        allowed = self._allowed(row)
        spelling = move_spelling(row, allowed) or row.move_as
        if spelling in call.config.keywords:
            return f"`{config_name}` already sets `{spelling}`: remove this one"
        lib = VERSION_TEXT[row.library]
        if allowed.is_point:
            return f"not moved automatically: {lib} {version_text(allowed.low)} has no `{config_name}({row.move_as}=)`"
        return (
            f"not moved automatically: `{config_name}({row.move_as}=)` is new in {lib} "
            f"{version_text(row.move_since)}, and {allowed.where()} allows older versions"
        )

    def _moves(self, call, hits) -> dict:
        """One fix for every keyword of the call that moves into its config: deleting them all
        and inserting them all at once, so that a call with several is fixed in one pass (each
        finding carries the same edits)."""
        movable = []
        for use, row, _ in hits:
            if row.fix != "move" or use.via != "keyword" or use.position is None:
                continue
            spelling = move_spelling(row, self._allowed(row))
            if spelling is None or not self._config_ok(call, row) or spelling in call.config.keywords:
                continue
            movable.append((use, row, spelling))
        if not movable:
            return {}
        config = call.config
        names = {spelling for _, _, spelling in movable}
        if len(names) != len(movable):
            return {}
        items = [f"{spelling}={use.value_text}" for use, _, spelling in movable]
        if config.lead:
            text = "".join(f"{config.lead}{item}{config.trail}" for item in items)
        else:  # an empty call
            text = ", ".join(items)
        edits = [Edit(config.insert_at, config.insert_at, text)]
        edits.extend(_deletions(call.arg_spans, {use.position for use, _, _ in movable}))
        safety = SAFE if config.same_scope and all(r.safety == "safe" for _, r, _ in movable) else UNSAFE
        moved = ", ".join(f"`{use.name}`" for use, _, _ in movable)
        config_name = movable[0][1].move_to.rsplit(".", 1)[-1]
        edits = tuple(sorted(edits, key=lambda e: e.start))
        fix = Fix(safety, f"Move {moved} into the `{config_name}(...)` passed as `args=`", edits)
        return {use.name: fix for use, _, _ in movable}

    # --- attributes -----------------------------------------------------------------------
    def attrs(self) -> Iterator[Finding]:
        if not self._has_section():
            return
        for attr in self.ctx.facts.section("migrations")["attrs"]:
            if getattr(attr, "tolerated", False):
                continue  # written for several versions: a version / hasattr check, or the error caught
            rows = self._rows("attribute", attr.name)
            if not rows:
                continue
            if attr.receiver == "self":
                cls = self.ctx.facts.class_named(attr.klass or "")
                if cls is None or self._declared_by_project(attr.klass, attr.name, attribute=True):
                    continue
                classes = [attr.klass]
            elif attr.receiver == "config":  # `model.config`: a model's config is a PretrainedConfig
                classes = [CONFIG_CLASS] if any(self._builds_a_model(s) for s in attr.sources) else []
            else:
                classes = [_instance_class(s) for s in attr.sources]
            for cls in classes:
                if self._declared_by_project(cls, attr.name, attribute=True):
                    break  # the project's class (or a mixin of it) defines the name itself
                ancestry = self._ancestry(cls)
                # only library classes match the table (a project's own `class DecisionConfig:`
                # is no PretrainedConfig, whatever its name)
                library = [a for a in ancestry if not self._is_project_class(a)]
                row = next((r for r in rows if any(r.matches_owner(a) for a in library)), None)
                if row is None:
                    continue
                if row.hub_may_define and getattr(attr, "remote", False):
                    break  # `trust_remote_code=True`: the hub's own class, which may define it
                store = getattr(attr, "store", False)
                if store and row.on_store is None:
                    break  # a plain attribute: the store works, and the code's own reads find it
                shown = attr.receiver_text
                known = cls.rsplit(".", 1)[-1] if cls and cls != CONFIG_CLASS else None
                if known and known.startswith("Auto"):
                    known = None  # an Auto class loads the class the checkpoint names
                error = (
                    row.error.replace("{tokenizer}", "<tokenizer class>").replace("{config}", known or "<config class>")
                    .replace("{processor}", known or "<processor class>").replace("{model}", known or "<model class>")
                )
                if store and row.on_store != "warns":
                    stage = self._stage(row)
                    if stage not in ("removed", "removed-in-some"):
                        break  # where the attribute is still there, the store works as it did
                    message = f"`{shown}.{attr.name} = ...` {store_consequence(row, stage, self._allowed(row))}"
                    yield Finding(row, self.stage, attr.name_span, message, None)
                    break
                message = f"`{shown}.{attr.name}` {self._consequence(row, error)}"
                fix = None
                if row.fix == "rename" and self._new_name_exists(row):
                    edit = replace(attr.name_span, row.rename_to)
                    fix = Fix(_safety(row), f"Rename `.{attr.name}` to `.{row.rename_to}`", (edit,))
                yield Finding(row, self.stage, attr.name_span, message, fix)
                break

    # --- fields a subclass declares -------------------------------------------------------------
    def fields(self) -> Iterator[Finding]:
        """A field a project subclass declares under a keyword its library class no longer has
        (``warmup_ratio: float = 0.05`` in a ``TrainingArguments`` subclass, on transformers 5.15
        and later): the dataclass takes it, so nothing raises, but nothing of the library reads
        it any more: the run silently goes without what it set (no warmup). Not where the
        project's own code reads the attribute (it may use the value itself)."""
        if not self._has_section():
            return
        for declared in self.ctx.facts.section("migrations").get("fields", ()):
            rows = [r for r in self._named_rows("keyword", declared.name) if r.removed_in is not None and not r.values]
            if not rows:
                continue
            library = [a for a in self._ancestry(declared.klass) if not self._is_project_class(a)]
            row = next((r for r in rows if any(r.matches_owner(a) for a in library)), None)
            stage = self._stage(row) if row is not None else None
            if stage not in ("removed", "removed-in-some") or not self._applies(row):
                continue  # where the library still has the field, it reads it
            if not declared.known or declared.default in NO_EFFECT or self._read_by_project(declared.name):
                continue  # a default that turns nothing on (`evaluation_strategy = "no"`) loses nothing
            allowed = self._allowed(row)
            lib = VERSION_TEXT[row.library]
            owner = row.owner.rsplit(".", 1)[-1]
            if stage == "removed-in-some":
                where = f", which {allowed.where()} allows"
            else:
                where = f" ({allowed.where()})" if allowed.source not in ("configuration", "installed", "newest") else ""
            message = (
                f"`{declared.klass.rsplit('.', 1)[-1]}` declares `{declared.name}`, a field `{owner}` no longer has "
                f"from {lib} {version_text(row.removed_in)} on{where}: the dataclass takes it, so nothing raises, "
                f"but nothing of {lib} reads it there and the run silently goes without it; {advice(row, allowed)}"
            )
            yield Finding(row, self.stage, declared.span, message, None)

    def _read_by_project(self, name: str) -> bool:
        """Whether a module of the project reads the attribute ``name`` (``args.warmup_ratio``)."""
        return self.ctx.project.memo(("attribute read", name), lambda: any(
            attr.name == name and not getattr(attr, "store", False)
            for m in self.ctx.project.modules
            for attr in ((m.sections.get("migrations") or {}).get("attrs") or ())
        ))

    # --- imports --------------------------------------------------------------------------
    def imports(self) -> Iterator[Finding]:
        if not self._has_section():
            return
        for imp in self.ctx.facts.section("migrations")["imports"]:
            if imp.tolerated:
                continue  # a fallback import, or one under a version check
            row = next(
                (r for r in self._rows("import", imp.name) if r.owner == imp.module),
                None,
            )
            if row is None:
                continue
            shown = f"{imp.module}.{imp.name}" if imp.name else imp.module
            error = row.error
            if imp.how == "qualified" and error.startswith("ImportError: cannot import name"):
                error = f"AttributeError: module {imp.module} has no attribute {imp.name}"
            elif imp.how == "from-import" and not imp.name and error.startswith("ModuleNotFoundError"):
                # `from transformers import deepspeed`: the package is found, the name is not
                package, _, module = imp.module.rpartition(".")
                error = f"ImportError: cannot import name '{module}' from '{package}'"
            message = f"`{shown}` {self._consequence(row, error)}"
            fix = None
            if row.fix == "rename" and imp.how == "import" and self._new_name_exists(row):
                edit = replace(imp.span, self.ctx.text(imp.span).replace(row.owner, row.rename_to, 1))
                fix = Fix(_safety(row), f"Import `{row.rename_to}` instead", (edit,))
            yield Finding(row, self.stage, imp.span, message, fix)

    # --- calls of a library callable ----------------------------------------------------------
    def called(self) -> Iterator[Finding]:
        """A call of a callable that warns when called (``kind = "call"``: ``transformers.AdamW``
        from 4.16): MP304's only, where no targeted version has removed the callable and some
        warns; where one has, the import (or the qualified use) fails before any call, and the
        import row says so. Not a call that gives a silencing keyword (``unless``) its value,
        nor one whose value there, or a splat that may hold it, is not known."""
        if self.stage != "deprecated" or not self._has_section():
            return
        for use in self.ctx.facts.section("migrations").get("called", ()):
            if use.tolerated or use.opaque:
                continue
            row = next(
                (r for r in migrations() if r.kind == "call" and r.code is None and not own_library(self.ctx, r) and r.matches_owner(use.callee)),
                None,
            )
            if row is None or self._stage(row) != "deprecated":
                continue
            given = dict(use.given)
            if any(name in given and (not given[name] or set(given[name]) == {value}) for name, value in row.unless):
                continue  # silenced, or given a value the code does not fix
            allowed = self._allowed(row)
            lib = VERSION_TEXT[row.library]
            below = f" below {lib} {version_text(row.removed_in)}" if row.removed_in else ""
            where = f" ({allowed.where()})" if allowed.source not in ("configuration", "installed", "newest") else ""
            shown = self.ctx.text(use.span)
            named = f"`{shown}`" if shown == use.callee else f"`{shown}` (`{use.callee}`)"
            message = (
                f"{named} warns when called, from {lib} {version_text(row.deprecated_in)}{below}{where}: "
                f"\"{row.warning}\"; use {row.replacement}"
            )
            yield Finding(row, self.stage, use.span, message, None)

    # --- configuration files -----------------------------------------------------------------
    def configured(self) -> Iterator[Finding]:
        """Keys of the JSON/YAML files that a parse of ``HfArgumentParser`` hands to
        ``TrainingArguments`` (or another class of the table) as keywords
        (``parser.parse_json_file(json_file=os.path.abspath(sys.argv[1]))`` with the
        ``configs/*.json`` the project ships): each at its place in that file
        (``project/parsed_files.py`` says which files a parse reads). What fails there is the
        parser, not the class: ``ValueError: Some keys are not used by the HfArgumentParser:
        ['evaluation_strategy']``. With ``allow_extra_keys=True`` the parser drops the key
        without a word and the run goes on without it (it does not evaluate, keeps the default
        batch size...): said so instead. No fix: the engine rewrites Python files only; the
        message names the new key."""
        parses = [p for p in self._entries("parses") if not p.tolerated and p.extra_keys is not None]
        if not parses:
            return
        from ..project.parsed_files import tied_files

        configs = self.ctx.project.configs
        words = tuple(sorted({r.name for r in migrations() if r.kind == "keyword" and r.method is None and self._applies(r)}))
        if not words:
            return
        done = set()
        for parse in parses:
            for tied in tied_files(self.ctx.project, self.ctx.facts, parse, words):
                if configs.written_by_notebook(tied.path):
                    continue  # its keys' positions are in a notebook's cell, not in a file
                entries = configs.entries(self.ctx.path, tied.path) or ()
                keys = tuple(e.key for e in entries)
                for entry in entries:
                    found = self._parsed_key_row(parse, entry.key, entry.value_text, keys)
                    if found is None or (tied.path, entry.key_span.start) in done:
                        continue
                    done.add((tied.path, entry.key_span.start))
                    row, shown = found
                    yield self._key_finding(parse, tied, entry, row, shown)

    def splatted(self) -> Iterator[Finding]:
        """Keys of a table of a JSON/YAML file that the code loads by a literal path and spreads
        into a call of a class of the table (``Seq2SeqTrainingArguments(**cfg["training"])`` of
        ``cfg = yaml.safe_load(open("config.yaml"))``, :attr:`MigrationCall.splats`): each key
        of that table is a keyword of the call, so a removed one raises the class's own
        ``TypeError: ... got an unexpected keyword argument 'evaluation_strategy'`` and a
        deprecated one warns. Each is reported at its place in the file, the call related (as
        :meth:`configured` does); no fix: the engine rewrites Python files only, the message
        names the new key. Keys the call also passes itself, and keys the code pops or deletes
        from the table, are not the file's to report."""
        calls = self._entries("splats")
        if not calls:
            return
        configs = self.ctx.project.configs
        done = set()
        for call in calls:
            if (call.tolerated and call.warning_tolerated) or never_runs(call):
                continue
            for path, keys in call.splats:
                found = configs.found(self.ctx.path, path)
                if found is None or configs.written_by_notebook(found):
                    continue
                entries = configs.entries(self.ctx.path, path, keys=keys) or ()
                names = tuple(e.key for e in entries)
                each = dataclasses.replace(call, keywords=tuple(sorted({*call.keywords, *names})))
                for entry in entries:
                    if entry.key in call.keywords or entry.key in call.dropped or (found, entry.key_span.start) in done:
                        continue  # passed by the code as well (its own finding), or dropped before the call
                    use = _KeyUse(entry.key, entry.value_text)
                    hit = self._keyword_row(each, use)
                    if hit is None or (call.tolerated and self._stage(hit[0]) != "deprecated"):
                        continue
                    done.add((found, entry.key_span.start))
                    yield self._splat_finding(each, keys, found, entry, *hit)
            for qualname in call.module_tables:
                yield from self._table_findings(call, qualname, done)

    def _table_findings(self, call, qualname: str, done: set) -> Iterator[Finding]:
        """Keys of a dict another project module binds at its top level that the call spreads
        (``TrainingArguments(**settings.TRAINING_ARGS)``: ``keyword_tables.py``), each reported
        at its place in that module, the call related, as a config file's keys are (no fix:
        the module's other importers may pass it elsewhere)."""
        project = self.ctx.project
        module, canonical = project.symbols.resolve(qualname, self.ctx.facts)
        if module is None or not module.module or not canonical.startswith(module.module + "."):
            return
        name = canonical[len(module.module) + 1 :]
        section = module.section("keyword_tables")
        table = next((t for t in (section or {}).get("tables", ()) if t.name == name), None)
        if table is None:
            return
        names = tuple(k.name for k in table.keys)
        each = dataclasses.replace(call, keywords=tuple(sorted({*call.keywords, *names})))
        for key in table.keys:
            if key.name in call.keywords or (module.path, key.span.start) in done:
                continue  # passed by the call as well: the call's own finding
            hit = self._keyword_row(each, _KeyUse(key.name, key.value_text))
            if hit is None or (call.tolerated and self._stage(hit[0]) != "deprecated"):
                continue
            done.add((module.path, key.span.start))
            yield self._table_finding(each, name, module.path, key, *hit)

    def _table_finding(self, call, name: str, path: str, key, row: Migration, shown: str) -> Finding:
        """``train.py passes `TRAINING_ARGS` of this module to `TrainingArguments` as keywords
        (`**settings.TRAINING_ARGS`, line 5), where key `evaluation_strategy` was removed in
        transformers 4.51 and raises `TypeError: ...`; use eval_strategy=``."""
        ctx = self.ctx
        short = shown.rsplit(".", 1)[-1]
        target = f"`{short}.{row.method}`" if row.method else f"`{short}`"
        script = ctx.path.replace(os.sep, "/")
        whence = f"{script} passes `{name}` of this module to {target} as keywords (`{call.splat_text}`, line {call.span.line})"
        message = self._spread_key_message(whence, row, shown, _KeyUse(key.name, key.value_text), call.keywords, path)
        related = (Related(ctx.path, call.span, f"`{call.splat_text}` passes it here"),)
        return Finding(row, self.stage, key.span, message, None, path, related)

    def _splat_finding(self, call, keys, found: str, entry, row: Migration, shown: str) -> Finding:
        """``train.py spreads this file's `training` table into `Seq2SeqTrainingArguments`
        (`**cfg["training"]`, line 5), where key `evaluation_strategy` was removed in
        transformers 4.51 and raises `TypeError: ...`; rename the key to `eval_strategy```."""
        ctx = self.ctx
        short = shown.rsplit(".", 1)[-1]
        target = f"`{short}.{row.method}`" if row.method else f"`{short}`"
        script = ctx.path.replace(os.sep, "/")
        if all(isinstance(k, str) for k in keys):
            table = ".".join(keys)  # `training`, `experiment.training`
        else:
            table = "".join(f"[{k!r}]" for k in keys)
        what = f"the `{table}` table of this file" if keys else "the keys of this file"
        whence = f"{script} passes {what} to {target} as keywords (`{call.splat_text}`, line {call.span.line})"
        message = self._spread_key_message(whence, row, shown, _KeyUse(entry.key, entry.value_text), call.keywords, found)
        related = (Related(ctx.path, call.span, f"`{call.splat_text}` passes it here"),)
        return Finding(row, self.stage, entry.key_span, message, None, ctx.project.configs.shown(found), related)

    def instantiated(self) -> Iterator[Finding]:
        """Keys of the ``_target_`` tables a Hydra app of the module builds
        (``project/hydra_configs.py``): ``hydra.utils.instantiate`` calls the class the table
        names with its other keys as keywords (``_target_: transformers.TrainingArguments`` and
        ``overwrite_output_dir: true``), so a removed one raises the class's own ``TypeError``
        when the app builds it, a deprecated one warns. Each is reported at its place in the
        file, the app's ``instantiate`` call related; no fix (the engine rewrites Python files
        only; the message names the new key). Hydra's own keys (``_partial_``, ``_recursive_``,
        ``_convert_``, ``_args_``) are no keywords."""
        mains = self._entries("hydra")
        if not mains:
            return
        from ..project.hydra_configs import built_tables

        configs = self.ctx.project.configs
        done = set()
        for main in mains:
            for path, keys, target in built_tables(self.ctx.project, self.ctx.facts, main):
                entries = [e for e in configs.entries(self.ctx.path, path, keys=keys) or () if not e.key.startswith("_")]
                names = tuple(e.key for e in entries)
                for entry in entries:
                    if (path, entry.key_span.start) in done or self._declared_by_project(target, entry.key):
                        continue
                    use = _KeyUse(entry.key, entry.value_text)
                    hit = self._keyword_row(_Forwarded(target, None, None, (), names), use)
                    if hit is None:
                        continue
                    done.add((path, entry.key_span.start))
                    yield self._built_finding(main, keys, path, entry, names, *hit)

    def _built_finding(self, main, keys, path: str, entry, names, row: Migration, shown: str) -> Finding:
        """``train.py builds this file's `training_args` table as `TrainingArguments` (Hydra's
        `_target_`, `instantiate(...)`, line 12), where key `overwrite_output_dir` was removed in
        transformers 5.0 and raises `TypeError: ...`; remove it (...)``."""
        ctx = self.ctx
        short = shown.rsplit(".", 1)[-1]
        script = ctx.path.replace(os.sep, "/")
        what = f"the `{'.'.join(keys)}` table of this file" if keys else "this file"
        whence = f"{script} builds {what} as `{short}` (Hydra's `_target_`, `{main.built_text}`, line {main.built.line})"
        message = self._spread_key_message(whence, row, shown, _KeyUse(entry.key, entry.value_text), names, path)
        related = (Related(ctx.path, main.built, f"`{main.built_text}` builds it here"),)
        return Finding(row, self.stage, entry.key_span, message, None, ctx.project.configs.shown(path), related)

    def _spread_key_message(self, whence: str, row: Migration, shown: str, use: "_KeyUse", keywords, path: str) -> str:
        """What a key of the file at ``path`` that a call takes as a keyword of ``shown`` (beside
        ``keywords``) meets there: ``whence``, then what the row says of the key on the versions
        the module targets, with its advice."""
        allowed = _rebased(self._allowed(row), self.ctx.path, path)
        told = default_advice(row, use.value_text) or self._key_advice(row, allowed)
        silent = self._silent(row, use, keywords)
        error = self._error(row, shown, use=use)
        stage = stage_of(row, allowed, silent) or self.stage
        key = valued(row, use, f"key `{use.name}`")
        return f"{whence}, where {key} {consequence(row, stage, error, allowed, silent, told=told)}"

    def _parsed_key_row(self, parse, name: str, value_text: str, keys, any_stage: bool = False) -> Optional[Tuple[Migration, str]]:
        """The row a key ``name`` of a file ``parse`` reads hits, and the class it is a keyword of; None
        where another dataclass of the parse has a field of that name (the parser hands it
        there) or no row holds for it. ``any_stage``: a row any rule reports."""
        use = _KeyUse(name, value_text)
        found = None
        for qualname in parse.classes:
            if not qualname:
                continue
            if self._declared_by_project(qualname, name):
                return None  # a field of the script's own dataclass (or a compatibility field)
            if found is None:
                found = self._keyword_row(_Forwarded(qualname, None, None, (), keys), use, any_stage)
        return found

    def _key_finding(self, parse, tied, entry, row: Migration, shown: str) -> Finding:
        """``train.py reads this file as `Seq2SeqTrainingArguments` (`parse_json_file`, line
        21), where key `evaluation_strategy` was removed in transformers 4.51 and raises
        `ValueError: ...`; rename the key to `eval_strategy```, with why the file is thought to
        be read there (a launch that passes it, or its keys)."""
        ctx = self.ctx
        short = shown.rsplit(".", 1)[-1]
        script = ctx.path.replace(os.sep, "/")
        how = f"`{parse.method}`, line {parse.span.line}"
        if tied.how == "launch":
            how += f"; {_shown_path(tied.launcher)} (line {tied.line}) passes it"
        elif tied.how == "project":
            given = f"`sys.argv[{parse.argv}]`" if parse.argv is not None else f"`--{parse.option}`"
            how += f", the file given as {given}: this one holds fields of that script's own dataclasses"
        whence = f"{script} reads this file as `{short}` ({how})"
        allowed = _rebased(self._allowed(row), ctx.path, tied.path)
        told = default_advice(row, entry.value_text) or self._key_advice(row, allowed)
        use = _KeyUse(entry.key, entry.value_text)
        key = valued(row, use, f"key `{entry.key}`")
        if parse.extra_keys and not row.values:  # (a removed value is no extra key: the field's check refuses it)
            message = f"{whence}, where {key} {self._dropped(row, allowed, parse.method)}; {told}"
        else:
            error = f"ValueError: Some keys are not used by the HfArgumentParser: ['{entry.key}']"
            if parse.method == "parse_args_and_config":  # TRL hands the key back as an option
                error = f"ValueError: Unknown arguments from config file: ['--{entry.key}', '{entry.value_text}']"
            if "unexpected keyword argument" not in row.error:
                error = self._error(row, shown, use=use)  # the field is still there: its own check fails
            stage = stage_of(row, allowed) or self.stage
            message = f"{whence}, where {key} {consequence(row, stage, error, allowed, told=told)}"
        related = (Related(ctx.path, parse.span, f"`{parse.method}` reads it here"),)
        return Finding(row, self.stage, entry.key_span, message, None, ctx.project.configs.shown(tied.path), related)

    def _key_advice(self, row: Migration, allowed: Allowed) -> str:
        """What to do with a key: rename it where the targeted versions have the new name."""
        if row.fix == "rename" and row.rename_to:
            if new_name_exists(row, allowed):
                return f"rename the key to `{row.rename_to}`"
            return f"rename the key to `{row.rename_to}` ({no_fix_reason(row, allowed).removeprefix('no fix: ')})"
        return advice(row, allowed)

    def _dropped(self, row: Migration, allowed: Allowed, method: str, drop: str = "") -> str:
        """What ``allow_extra_keys=True`` makes of a removed key: dropped without a word
        (``drop``: what drops it, where not that)."""
        lib = VERSION_TEXT[row.library]
        drop = drop or f"`{method}(..., allow_extra_keys=True)` drops it without a word and the run goes on without it"
        stage = stage_of(row, allowed) or self.stage
        if stage == "removed":
            pinned = allowed.source not in ("configuration", "installed", "newest")
            where = f" ({allowed.where()})" if pinned and allowed.is_point else f" (every version {allowed.where()} allows)" if pinned else ""
            return f"was removed in {lib} {version_text(row.removed_in)}{where}: {drop}"
        if stage == "removed-in-some":
            return (
                f"was removed in {lib} {version_text(row.removed_in)}, where {drop}: {allowed.where()} allows "
                f"{lib} {allowed.from_version(row.removed_in)}"
            )
        return f"is deprecated since {lib} {version_text(row.deprecated_in)}; from {lib} {version_text(row.removed_in)} on, {drop}"

    # --- options a shipped launch passes -----------------------------------------------------
    def launched(self) -> Iterator[Finding]:
        """Options a shipped launch passes the script (``torchrun train.py --evaluation_strategy
        "steps"``) where the script fills ``TrainingArguments`` (or another class of the table)
        from its command line (``parser.parse_args_into_dataclasses()``): each at its place in
        the launcher (``project/launched_options.py``). What fails there is the parser, not the
        class: ``ValueError: Some specified arguments are not used by the HfArgumentParser:
        ['--evaluation_strategy', 'steps']``. With ``return_remaining_strings=True`` the words
        are handed back and the run goes on without them: said so instead. An option one of
        the parse's classes declares itself (a field of the script's ``ModelArguments``), the
        code adds (``parser.add_argument``), or that argparse reads as another option it
        abbreviates, is accepted. No fix: the engine rewrites Python files only."""
        parses = [
            p for p in self._entries("argv_parses")
            if not p.tolerated and p.remaining is not None and p.options is not None
        ]
        if not parses:
            return
        from ..project.launched_options import launch_options

        project = self.ctx.project
        scripts = [self.ctx.facts, *[m for m in project.roots_of(self.ctx.facts) if m.path != self.ctx.path]]
        passed = launch_options(project, scripts)
        if not passed:
            return
        done = set()
        for parse in parses:
            own = self._parser_options(parse)
            if own is None:
                continue  # a class of it is not known: any option may be its
            launches = {}
            for option in passed:
                launches.setdefault((option.launcher, option.launch.line, option.launch.script), []).append(option)
            for options in launches.values():
                keys = tuple(o.field for o in options)
                hits = []
                for option in options:
                    found = self._option_row(parse, option, own, keys)
                    if found is not None:
                        hits.append((option, *found))
                # the words the parser leaves over in this launch, as the ValueError lists them
                left = tuple(
                    w for o, row, _ in hits if stage_of(row, self._allowed(row)) == "removed" and not row.values for w in o.words
                )
                for option, row, shown in hits:
                    if not self._applies(row) or (option.launcher, option.span.start) in done:
                        continue
                    done.add((option.launcher, option.span.start))
                    yield self._option_finding(parse, option, row, shown, left or option.words)

    def _parser_options(self, parse) -> Optional[Tuple[str, ...]]:
        """The options of the parse's parser that the project declares: its own dataclasses'
        fields (and those its subclasses of a library class add), as ``HfArgumentParser`` makes
        options of them, and what the code adds with ``add_argument``; None where a class of the
        parse is not known (a library the tables do not know may declare any field)."""
        from ..project.launched_options import option_strings

        out = list(parse.options)
        for qualname in parse.classes:
            if not qualname:
                return None
            for name, module, cls in self.ctx.project.symbols.ancestry(qualname, self.ctx.facts):
                if cls is not None:
                    for field in cls.fields:
                        out.extend(option_strings(field))
                elif module is not None or name.split(".", 1)[0] not in _PARSED_LIBRARIES:
                    return None
        return tuple(dict.fromkeys(out))

    def _option_row(self, parse, option, own, keys) -> Optional[Tuple[Migration, str]]:
        """The row an option a launch passes hits (any rule's), and the class it is a field of;
        None where the parser takes it: a field or option the project declares, or one it is a
        prefix of, or a library option it abbreviates (``row.abbreviates``)."""
        from ..project.launched_options import accepted_by

        if accepted_by(option.written, own) is not None:
            return None
        value = option.words[1] if len(option.words) > 1 else option.written.partition("=")[2]
        found = self._parsed_key_row(parse, option.field, value, keys, any_stage=True)
        if found is None or found[0].abbreviates:
            return None
        return found

    def _option_finding(self, parse, option, row: Migration, shown: str, left: Tuple[str, ...]) -> Finding:
        """``train.py reads `--evaluation_strategy` as a field of `TrainingArguments`
        (`parse_args_into_dataclasses`, line 282), where it was removed in transformers 4.51 and
        raises `ValueError: Some specified arguments are not used by the HfArgumentParser:
        ['--evaluation_strategy', 'steps']`; pass `--eval_strategy` instead``."""
        from ..project.launched_options import shown_words
        from ..workspace.launches import command_end

        ctx = self.ctx
        short = shown.rsplit(".", 1)[-1]
        script = ctx.path.replace(os.sep, "/")
        how = f"`{parse.method}`, line {parse.span.line}"
        if option.script != ctx.path:  # a helper module's parse, in the run of the script launched
            how += f", in the run of {_shown_path(option.script)}"
        whence = f"{script} reads `{option.written}` as a field of `{short}` ({how})"
        allowed = _rebased(self._allowed(row), ctx.path, option.launcher)
        told = self._option_advice(row, allowed)
        stage = stage_of(row, allowed) or self.stage
        if row.values:  # the option is the field's: its check refuses the value
            value = option.words[1] if len(option.words) > 1 else option.written.partition("=")[2]
            error = self._error(row, shown, use=_KeyUse(option.field, value))
            if row.option_error:  # argparse refuses it first (an Enum field's choices)
                error = row.option_error.replace("{value}", _unquoted(value))
            message = f"{whence}, where its value `{_unquoted(value)}` {consequence(row, stage, error, allowed, told=told)}"
        elif parse.remaining:
            drop = (
                f"`{parse.method}(return_remaining_strings=True)` hands it back among the remaining strings "
                "and the run goes on without it"
            )
            message = f"{whence}, where it {self._dropped(row, allowed, parse.method, drop)}; {told}"
        else:
            words = left if stage == "removed" else option.words
            error = f"ValueError: Some specified arguments are not used by the HfArgumentParser: {shown_words(words)}"
            if "unexpected keyword argument" not in row.error:
                error = self._error(row, shown)  # the field is still there: its own check fails
            message = f"{whence}, where it {consequence(row, stage, error, allowed, told=told)}"
        related = (Related(ctx.path, parse.span, f"`{parse.method}` reads it here"),)
        text = ctx.project.shipped.text_of(option.launcher) or ""
        end = command_end(text, option.launch.line)
        return Finding(
            row, self.stage, option.span, message, None, ctx.project.configs.shown(option.launcher), related,
            noqa_line=end if end != option.span.line else None,
        )

    def _option_advice(self, row: Migration, allowed: Allowed) -> str:
        """What to pass instead: the new option where the targeted versions have it, or the
        row's own words for a command line (``option_replacement``)."""
        if row.option_replacement:
            return f"pass {row.option_replacement} instead"
        if row.fix == "rename" and row.rename_to:
            said = f"pass `--{row.rename_to}` instead"
            note = row.replacement.removeprefix(f"{row.rename_to}=").strip()
            if note.startswith("(") and note.endswith(")"):  # `warmup_steps= (a float below 1 is a ratio)`
                said += f" {note}"
            if new_name_exists(row, allowed):
                return said
            return f"{said} ({no_fix_reason(row, allowed).removeprefix('no fix: ')})"
        return advice(row, allowed)

    # --- new names below the versions that brought them -------------------------------------
    def too_new(self, code: Optional[str] = None) -> Iterator[Finding]:
        """Keywords written in their NEW spelling (``Trainer(processing_class=)``, new in
        transformers 4.46) where no version the code states it runs on has it (a pin, a cap, a
        stated version: never the default targets): ``transformers==4.45.2`` or
        ``transformers<4.46`` (a cap alone: every version below it) raises the row's
        ``older_error`` at every install. A range that admits the release
        (``transformers>=4.44.2``) is not reported: the code's own use of the
        new name says its authors run a version that has it, and every install that resolves the
        range afresh gets the newest (reviews 24a, 27e and 28b judged such floors stale, not the
        code wrong). Only rows that know that release (``older_error``) and that ``code``
        reports (None: MP302). No fix: the old spelling fails on the newer versions (or warns)."""
        if not self._has_section():
            return
        for call in self.ctx.facts.section("migrations").get("calls", ()):
            if call.tolerated:
                continue  # written for several versions: a version check, or the TypeError is caught
            for use in call.uses:
                rows = [
                    r for r in migrations()
                    if r.kind == "keyword" and r.older_error and r.rename_to == use.name and r.code == code
                    and not own_library(self.ctx, r)
                ]
                if not rows:
                    continue
                found = self._row_for_targets(self._call_targets(call), use, rows)
                if found is None:
                    continue
                row, shown = found
                nearest = next(
                    (a for a in self._ancestry(shown) if not self._is_project_class(a) and a.split(".", 1)[0] in VERSION_TEXT),
                    shown,
                )  # the first class of a library the table knows in its MRO (`ABC` beside it holds no `__init__`)
                if nearest.split(".", 1)[0] != row.library:
                    continue  # another library's class (TRL's `DPOTrainer`): its own signature, its own versions
                allowed = self._allowed(row)
                if not stated_range(allowed) or allowed.some_at_least(row.rename_since):
                    continue  # a version the range admits has it (see the docstring)
                if any(u.name == row.name for u in call.uses):
                    continue  # the old spelling beside it: the other finding's business
                message = too_new_message(row, use, shown, allowed, nearest, self._is_project_class(shown))
                yield Finding(row, "removed", use.key_span, message, None)

    def findings(self) -> Iterator[Finding]:
        if self.stage == "removed":
            yield from self.too_new()
        yield from self.calls()
        yield from self.forwarded()
        yield from self.attrs()
        yield from self.fields()
        yield from self.imports()
        yield from self.called()
        yield from self.configured()
        yield from self.splatted()
        yield from self.instantiated()
        yield from self.launched()


def declared_by_project(ctx: RuleContext, qualname: Optional[str], name: str, attribute: bool = False) -> bool:
    """See :meth:`MigrationJudge._declared_by_project` (MP301 asks the same). For a keyword,
    only a field counts (a dataclass's ``__init__`` takes it; a property does not)."""
    if not qualname:
        return False
    for _, _, cls in ctx.project.symbols.ancestry(qualname, ctx.facts):
        if cls is None:
            continue
        if name in cls.fields or (attribute and (name in cls.members or name in cls.self_attrs)):
            return True
    return False


def taken_by_project_method(ctx: RuleContext, qualname: Optional[str], method: str, name: str, skip_first: bool = False) -> bool:
    """Whether a call of ``qualname.method(..., name=...)`` runs a project class's own ``method``
    that keeps the keyword from the library's: the first class of the ancestry that defines
    ``method`` is the project's, and its signature names ``name`` (``def from_pretrained(cls,
    path, use_flash_attention_2=False)``: the class's own switch) or takes no ``**kwargs`` (the
    keyword fails there, in the project's code). One that takes ``**kwargs`` hands it on.
    ``skip_first``: the call is ``super().method(...)`` of ``qualname``'s body."""
    ancestry = list(ctx.project.symbols.ancestry(qualname, ctx.facts)) if qualname else []
    for _, module, cls in ancestry[1:] if skip_first else ancestry:
        if cls is None or module is None:
            return False  # a library class's method (or a class not known): the library's keywords
        if method not in cls.members:
            continue
        own = next((o for o in module.section("overrides") if o.klass == cls.qualname and o.method == method), None)
        return own is not None and (name in own.positional or name in own.keyword_only or not own.star_kwargs)
    return False


_PATH_WORD = lazy(r"[^\s,;()`]+")


def _rebased(allowed: Allowed, module_path: str, file_path: str) -> Allowed:
    """``allowed`` with the files it names (``transformers==4.53 in ../requirements.txt``,
    written from the module's folder) named from the folder of ``file_path`` instead: a finding
    in a configuration file is read there. Only words that are files beside the module are
    rewritten."""
    here = os.path.dirname(os.path.abspath(module_path))
    there = os.path.dirname(os.path.abspath(file_path))
    if here == there or not (allowed.source or allowed.note):
        return allowed

    def swap(match) -> str:
        word = match.group(0)
        target = os.path.normpath(os.path.join(here, word))
        if ("/" not in word and "." not in word) or not os.path.isfile(target):
            return word
        return os.path.relpath(target, there).replace(os.sep, "/")

    return replace_fields(allowed, source=_PATH_WORD().sub(swap, allowed.source), note=_PATH_WORD().sub(swap, allowed.note))


def _shown_path(path: str) -> str:
    """A file as messages name it: relative to the working folder when inside it."""
    relative = os.path.relpath(path)
    return (path if relative.startswith("..") else relative).replace(os.sep, "/")


def same_library_class(qualname: str, table_name: str) -> bool:
    """``trl.trainer.sft_config.SFTConfig`` is the table's ``trl.SFTConfig``."""
    parts = qualname.split(".")
    return qualname == table_name or f"{parts[0]}.{parts[-1]}" == table_name


def _safety(row: Migration) -> str:
    return SAFE if row.safety == "safe" else UNSAFE


def _deletions(arg_spans: Sequence[Tuple[int, int, int]], positions: set) -> List[Edit]:
    """Edits that delete the arguments at ``positions`` and leave a well-formed call."""
    kept = [i for i in range(len(arg_spans)) if i not in positions]
    ranges = []
    for i in sorted(positions):
        later = [k for k in kept if k > i]
        earlier = [k for k in kept if k < i]
        if later:
            ranges.append((arg_spans[i][0], arg_spans[later[0]][0]))
        elif earlier:
            ranges.append((arg_spans[earlier[-1]][1], arg_spans[i][1]))
        else:
            ranges.append((arg_spans[i][0], arg_spans[i][2]))
    merged: List[List[int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [Edit(start, end, "") for start, end in merged]
