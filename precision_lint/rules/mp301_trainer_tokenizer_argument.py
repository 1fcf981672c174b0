"""MP301 trainer-tokenizer-argument: ``Trainer(tokenizer=...)`` after its removal.

transformers 4.46 deprecated ``Trainer(tokenizer=...)`` in favour of
``processing_class=`` (a tokenizer, image processor, feature extractor or
processor). transformers 5 removed it, and TRL followed (0.16)::

    TypeError: Trainer.__init__() got an unexpected keyword argument 'tokenizer'

``trainer.tokenizer`` is gone as well. The fix renames the keyword (or the key of
the ``**kwargs`` dict that feeds the constructor) and the attribute. It is safe:
for transformers ≥ 4.46 both names mean the same thing, and before 4.46 the rule
stays silent because ``processing_class`` does not exist there.
"""
from __future__ import annotations

from typing import Optional, Tuple

from ..diagnostics import SAFE, Fix
from ..knowledge import migrations, patched_keywords
from .base import Rule, RuleContext, replace

# The rule's row of the migration table (knowledge/migrations.toml, checked against the
# installed transformers): the keyword's versions, its new name and the exact error.
ROW = next(m for m in migrations() if m.code == "MP301" and m.kind == "keyword" and m.owner == "transformers.Trainer")
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
    # A `tokenizer` keyword, key or attribute; or a class deriving from a *Trainer (a subclass
    # defined in another file is only known if that file is parsed).
    evidence = (r"\btokenizer\s*=", r"[\"']tokenizer[\"']", r"\.tokenizer\b", r"class\s+\w+\s*\([^)]*Trainer")
    fix_availability = "always"
    fix_applicability = SAFE

    def _stage(self, ctx: RuleContext) -> Optional[str]:
        version: Optional[Tuple[int, ...]] = ctx.config.transformers_version
        return ROW.stage(version)

    def _is_trainer(self, ctx: RuleContext, qualname: Optional[str]) -> bool:
        return bool(qualname) and ctx.project.symbols.class_inherits(qualname, is_library_trainer, ctx.facts)

    def _patched(self, ctx: RuleContext, qualname: str) -> bool:
        """Whether a library imported in this file's training run patches the trainer to
        accept ``tokenizer=`` (a row of the library table)."""
        imported = ctx.project.joined_imports(ctx.facts)
        return any(
            "tokenizer" in patched_keywords(imported, name)
            for name, _, _ in ctx.project.symbols.ancestry(qualname, ctx.facts)
        )

    def check(self, ctx: RuleContext):
        stage = self._stage(ctx)
        if stage is None:
            return
        section = ctx.facts.section("trainer")
        if not section:
            return
        for call in section["calls"]:
            if call.callee == "super":
                if not (call.klass and self._is_trainer(ctx, call.klass)):
                    continue
                shown = f"{call.klass.rsplit('.', 1)[-1]}'s base class"
                called = call.klass
            elif self._is_trainer(ctx, call.callee):
                if self._patched(ctx, call.callee):
                    continue  # e.g. unsloth maps `tokenizer=` to `processing_class=`: no TypeError
                owner = ctx.project.symbols.init_owner(call.callee, ctx.facts)
                if owner is not None and "tokenizer" in owner.init_params:
                    continue  # the user's own __init__ takes `tokenizer`: their signature, not ours
                shown = f"`{call.callee.rsplit('.', 1)[-1]}`"
                called = call.callee
            else:
                continue
            clash = NEW in call.keywords
            error = self._error(ctx, called)
            for use in call.uses:
                yield self._keyword_finding(ctx, stage, shown, use, clash, error)
        for attr in section["attrs"]:
            if attr.receiver == "self":
                cls = ctx.facts.class_named(attr.klass or "")
                if cls is None or "tokenizer" in cls.self_attrs or not self._is_trainer(ctx, attr.klass):
                    continue
                shown = "self.tokenizer"
            elif any(self._is_trainer(ctx, s) for s in attr.sources):
                shown = "trainer.tokenizer"
            else:
                continue
            when = "was removed in transformers 5" if stage == "removed" else "is deprecated since transformers 4.46"
            message = f"`{shown}` {when} (AttributeError in 5.x); use `.{NEW}`"
            fix = Fix(SAFE, f"Rename `.tokenizer` to `.{NEW}`", (replace(attr.name_span, NEW),))
            yield ctx.diagnostic(self.code, attr.name_span, message, fix)

    def _error(self, ctx: RuleContext, qualname: str) -> str:
        """The TypeError as the library class the call reaches words it: ``SFTTrainer.__init__()``
        for TRL's SFTTrainer (and a subclass of it), ``Trainer.__init__()`` for transformers'."""
        for name, _, _ in ctx.project.symbols.ancestry(qualname, ctx.facts):
            if is_library_trainer(name):
                return ERROR.replace("Trainer.__init__()", f"{name.rsplit('.', 1)[-1]}.__init__()", 1)
        return ERROR

    def _keyword_finding(self, ctx, stage, shown, use, clash, error=ERROR):
        kind = "key `tokenizer` of the **kwargs dict" if use.via != "keyword" else "`tokenizer=`"
        if stage == "removed":
            message = f"{kind} passed to {shown} was removed in transformers 5 and raises `{error}`; use `{NEW}=`"
        else:
            message = (
                f"{kind} passed to {shown} is deprecated since transformers 4.46 and raises "
                f"`{error}` in transformers 5; use `{NEW}=`"
            )
        if use.from_processor:
            message += (
                f" (`{use.value_text}` is the tokenizer of a multimodal processor: the processor "
                f"itself is usually what belongs in `{NEW}`)"
            )
        fix = None
        if clash:
            message += f"; `{NEW}` is passed as well, so remove one of them"
        else:
            new_key = use.key_text.replace("tokenizer", NEW)
            fix = Fix(SAFE, f"Rename `tokenizer` to `{NEW}`", (replace(use.key_span, new_key),))
        return ctx.diagnostic(self.code, use.key_span, message, fix)
