"""MP304 deprecated-hf-api: a transformers / TRL name that warns now and crashes later.

The same table as MP302 (``knowledge/migrations.toml``), for rows that the targeted
version has deprecated but not yet removed, and only where a targeted version warns. The
best known is ``torch_dtype=``: transformers 4.56 renamed it ``dtype`` and warns::

    `torch_dtype` is deprecated! Use `dtype` instead!

5.x keeps warning for ``AutoModel*.from_pretrained``/``from_config``, ``pipeline()`` and
``config.torch_dtype``, but a model class's own ``from_pretrained`` takes it back silently (the
table's ``silent_since``): a file targeting only 5.x gets nothing there. A warning is judged on
the version the code plausibly targets, the newest its range admits (what a fresh install gets):
``>=4.31`` installs a silent 5.x, so nothing; ``>=4.31,<5`` gets 4.57 and is told which versions
warn.

Others are removals announced for a later version: on transformers 5.0–5.14
``TrainingArguments(warmup_ratio=)`` warns, on 5.15 it raises ``TypeError``. A library callable
may warn when called (the table's call rows): building ``transformers.AdamW`` warns from 4.16
below 4.50 unless given ``no_deprecation_warning=True``; its removal is the import's finding. The rule is
silent for versions older than the deprecation (so it is off for old pins), and its rename
is offered only where the targeted version has the new name: never the reverse.
"""
from __future__ import annotations

from ..diagnostics import SAFE
from .base import Rule, RuleContext
from .migration_findings import MigrationJudge


class DeprecatedHfApi(Rule):
    code = "MP304"
    name = "deprecated-hf-api"
    summary = "a transformers / TRL name the targeted version deprecates (warns now, removed later)"
    fix_availability = "sometimes"
    fix_applicability = SAFE
    stage = "deprecated"

    def check(self, ctx: RuleContext):
        for finding in MigrationJudge(ctx, self.stage).findings():
            yield ctx.diagnostic(self.code, finding.span, finding.message, finding.fix, finding.related, noqa_line=finding.noqa_line, path=finding.path)
