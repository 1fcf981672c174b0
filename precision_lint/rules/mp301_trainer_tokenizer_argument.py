"""MP301 trainer-tokenizer-argument: ``Trainer(tokenizer=...)`` after its removal.

transformers 4.46 deprecated ``Trainer(tokenizer=...)`` in favour of
``processing_class=`` (a tokenizer, image processor, feature extractor or
processor). transformers 5 removed it, and TRL's trainers followed (0.12 renamed,
0.13 warned; removed from 0.13 to 0.16, each trainer in its own release: one TRL row
of the table per group)::

    TypeError: Trainer.__init__() got an unexpected keyword argument 'tokenizer'

``trainer.tokenizer`` is gone as well. Which versions a file targets is read as for
MP302/MP304 (``versions.py``, one mechanism): a transformers trainer is judged by the
transformers row of the migration table, a TRL trainer by the TRL row of its trainer. Removed in every
allowed version: "raises"; in some: a warning naming them; deprecated only: a warning.

The fix renames the keyword (or the key of the ``**kwargs`` dict that feeds the
constructor) and the attribute. It is offered only where the *lowest* allowed version
has ``processing_class`` (a TRL 0.9 ``PPOTrainer`` has ``self.tokenizer`` and no
``processing_class``), and not where the call keeps keywords of the old API that no
version taking ``processing_class=`` accepts (``SFTTrainer(tokenizer=t,
max_seq_length=512)`` on a current TRL). Compatibility code is honoured: a call under a
version or signature check, a ``tokenizer`` property of a project class in the MRO.
"""
from __future__ import annotations

import re

from typing import Optional

from ..diagnostics import SAFE, Fix
from ..knowledge import Migration, migrations, patch_accepts
from .base import Rule, RuleContext, replace
from .migration_findings import MigrationJudge, consequence, declared_by_project, new_name_exists, no_fix_reason, own_library, stage_of

# The rule's row of the migration table (knowledge/migrations.toml, checked against the
# installed transformers): the keyword's versions, its new name and the exact error.
ROW = next(m for m in migrations() if m.code == "MP301" and m.kind == "keyword" and m.owner == "transformers.Trainer")
ATTR_ROW = next(m for m in migrations() if m.code == "MP301" and m.kind == "attribute" and m.owner == "transformers.Trainer")
# TRL's trainers each remove `tokenizer=` in their own release: one row per group of trainers;
# the SFTTrainer row (`also = ["trl.*Trainer"]`) is every trainer no other row names
TRL_ROWS = tuple(m for m in migrations() if m.code == "MP301" and m.kind == "keyword" and m.library == "trl")
TRL_ROW = next(m for m in TRL_ROWS if m.owner == "trl.SFTTrainer")
NEW = ROW.rename_to
DEPRECATED_IN = ROW.deprecated_in
REMOVED_IN = ROW.removed_in
ERROR = ROW.error


def is_library_trainer(qualname: str) -> bool:
    """``transformers.Trainer``/``Seq2SeqTrainer`` and every TRL ``*Trainer``."""
    parts = qualname.split(".")
    if parts[0] == "transformers" and parts[-1] in ("Trainer", "Seq2SeqTrainer"):
        return True
    return parts[0] == "trl" and parts[-1].endswith("Trainer") and len(parts[-1]) > len("Trainer")


class TrainerTokenizerArgument(Rule):
    code = "MP301"
    name = "trainer-tokenizer-argument"
    summary = "`tokenizer=` passed to a Trainer: removed in transformers 5, use `processing_class=`"
    fix_availability = "sometimes"
    fix_applicability = SAFE

    def _is_trainer(self, ctx: RuleContext, qualname: Optional[str]) -> bool:
        return bool(qualname) and ctx.project.symbols.class_inherits(qualname, is_library_trainer, ctx.facts)

    def _is_trl(self, ctx: RuleContext, qualname: Optional[str]) -> bool:
        return bool(qualname) and ctx.project.symbols.class_inherits(
            qualname, lambda q: q.startswith("trl.") and is_library_trainer(q), ctx.facts
        )

    def _row(self, ctx: RuleContext, qualname: Optional[str]) -> Migration:
        """For a TRL trainer, the TRL row of the nearest TRL trainer of its ancestry that a row
        names (``GKDTrainer``, an ``SFTTrainer``, by its own; a project subclass by its base's),
        else the ``trl.*Trainer`` row; else transformers'."""
        if not self._is_trl(ctx, qualname):
            return ROW
        for name, _, _ in ctx.project.symbols.ancestry(qualname, ctx.facts):
            if name.startswith("trl.") and is_library_trainer(name):
                row = next((r for r in TRL_ROWS if r is not TRL_ROW and r.matches_owner(name)), None)
                if row is not None:
                    return row
        return TRL_ROW

    def _patched(self, ctx: RuleContext, qualname: str) -> bool:
        """Whether a library imported in every run of this file patches the trainer to accept
        ``tokenizer=`` (a row of the library table); one imported only under an ``if`` patches
        only the runs that take it, and the others fail."""
        imported = ctx.project.always_imported(ctx.facts)
        return any(
            patch_accepts(imported, name, "tokenizer")
            for name, _, _ in ctx.project.symbols.ancestry(qualname, ctx.facts)
        )

    def check(self, ctx: RuleContext):
        judge = MigrationJudge(ctx, "removed")
        for finding in judge.too_new(self.code):  # `processing_class=` below the version that brought it
            yield ctx.diagnostic(self.code, finding.span, finding.message, finding.fix)
        section = ctx.facts.section("trainer")
        if not section:
            return
        migration_calls = {c.span: c for c in (ctx.facts.section("migrations") or {}).get("calls", ())}
        for call in section["calls"]:
            if getattr(call, "tolerated", False):
                continue  # under a version or signature check, or where the TypeError is caught
            if call.callee == "super":
                if not (call.klass and self._is_trainer(ctx, call.klass)):
                    continue
                shown = f"{call.klass.rsplit('.', 1)[-1]}'s base class"
                row = self._row(ctx, call.klass)
                called = call.klass
            elif self._is_trainer(ctx, call.callee):
                if self._patched(ctx, call.callee):
                    continue  # e.g. unsloth maps `tokenizer=` to `processing_class=`: no TypeError
                if ctx.never_imported(call.callee):
                    continue  # `trl.PPOTrainer` on TRL 0.29+: its import fails first (MP302)
                owner = ctx.project.symbols.init_owner(call.callee, ctx.facts)
                if owner is not None and "tokenizer" in owner.init_params:
                    continue  # the user's own __init__ takes `tokenizer`: their signature, not ours
                if declared_by_project(ctx, call.callee, "tokenizer"):
                    continue  # a project class of its MRO declares the field itself
                shown = f"`{call.callee.rsplit('.', 1)[-1]}`"
                row = self._row(ctx, call.callee)
                called = call.callee
            else:
                continue
            allowed = ctx.targets.of(row.library)
            stage = None if own_library(ctx, row) else stage_of(row, allowed)
            if stage is None:
                continue
            kept = None
            migration_call = migration_calls.get(call.span)
            if migration_call is not None:
                kept = judge.kept_old_keywords(migration_call, "tokenizer", row)
            clash = NEW in call.keywords
            for use in call.uses:
                yield self._keyword_finding(ctx, row, stage, allowed, shown, use, clash, kept, self._error(ctx, called, row))
        for attr in section["attrs"]:
            if getattr(attr, "tolerated", False):
                continue  # `x.processing_class if hasattr(x, "processing_class") else x.tokenizer`
            if attr.receiver == "self":
                cls = ctx.facts.class_named(attr.klass or "")
                if cls is None or not self._is_trainer(ctx, attr.klass):
                    continue
                if declared_by_project(ctx, attr.klass, "tokenizer", attribute=True):
                    continue  # set or defined by the project's own classes (a compatibility property)
                shown, klass = "self.tokenizer", attr.klass
            else:
                klass = next((s for s in attr.sources if self._is_trainer(ctx, s)), None)
                if klass is None or declared_by_project(ctx, klass, "tokenizer", attribute=True):
                    continue
                shown = "trainer.tokenizer"
            yield from self._attr_finding(ctx, attr, shown, klass)

    def _attr_finding(self, ctx: RuleContext, attr, shown: str, klass: str):
        """``.tokenizer`` of a trainer is transformers' ``Trainer`` property (deprecated from
        4.46, gone in 5.0), a TRL trainer's too: TRL removed the ``tokenizer=`` keyword of its
        trainers (0.13 to 0.16), never the property they inherit (SFTTrainer of TRL 0.21 on
        transformers 4.56 reads it with a warning; held-out 28's fine-tune-gpt-oss). Its
        versions are transformers'. A TRL older than the rename (0.12) has trainers of its own
        making (0.9's ``PPOTrainer`` is no transformers Trainer, and keeps ``self.tokenizer``):
        nothing to say there."""
        row = ATTR_ROW
        if self._is_trl(ctx, klass) and not ctx.targets.of(TRL_ROW.library).some_at_least(TRL_ROW.rename_since):
            return
        allowed = ctx.targets.of(ROW.library)
        if own_library(ctx, ROW) or own_library(ctx, row):
            return  # the library's own code (a vendored copy): it defines `.tokenizer` itself
        stage = stage_of(row, allowed)
        if stage is None:
            return
        message = f"`{shown}` {consequence(row, stage, ATTR_ROW.error, allowed)}"
        message = message.replace("; use trainer.processing_class", f"; use `.{NEW}`")
        fix = None
        if new_name_exists(ROW, allowed):
            fix = Fix(SAFE, f"Rename `.tokenizer` to `.{NEW}`", (replace(attr.name_span, NEW),))
        else:
            message += f" ({no_fix_reason(ROW, allowed)})"
        yield ctx.diagnostic(self.code, attr.name_span, message, fix)

    def _error(self, ctx: RuleContext, qualname: str, row: Migration) -> str:
        """The row's TypeError as the library class the call reaches words it: TRL's trainers each
        have their own ``__init__`` (``DPOTrainer.__init__()``, not ``SFTTrainer.__init__()``)."""
        for name, _, _ in ctx.project.symbols.ancestry(qualname, ctx.facts):
            if is_library_trainer(name):
                return re.sub(r"\w+\.__init__\(\)", f"{name.rsplit('.', 1)[-1]}.__init__()", row.error, count=1)
        return row.error

    def _keyword_finding(self, ctx, row, stage, allowed, shown, use, clash, kept, error=None):
        kind = "key `tokenizer` of the **kwargs dict" if use.via != "keyword" else "`tokenizer=`"
        message = f"{kind} passed to {shown} {consequence(row, stage, error or row.error, allowed)}"
        message = message.replace(f"; use {row.replacement}", f"; use `{NEW}=`")
        if use.from_processor:
            message += (
                f" (`{use.value_text}` is the tokenizer of a multimodal processor: the processor "
                f"itself is usually what belongs in `{NEW}`)"
            )
        fix = None
        if clash:
            message += f"; `{NEW}` is passed as well, so remove one of them"
        elif not new_name_exists(row, allowed):
            message += f" ({no_fix_reason(row, allowed)})"
        elif kept:
            message += f" ({kept})"
        else:
            new_key = use.key_text.replace("tokenizer", NEW)
            fix = Fix(SAFE, f"Rename `tokenizer` to `{NEW}`", (replace(use.key_span, new_key),))
        return ctx.diagnostic(self.code, use.key_span, message, fix)
