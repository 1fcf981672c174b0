"""MP302 removed-hf-api: a transformers / TRL name the targeted version no longer has.

transformers 5 and TRL 1 removed many keywords, attributes and exports that fine-tuning
scripts (and the helper libraries that call Hugging Face for them) still use (peft 0.10 and
accelerate 1.0 removed a few too). Each one crashes before training starts, for example::

    TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'
    TypeError: SFTTrainer.__init__() got an unexpected keyword argument 'max_seq_length'
    TypeError: GPT2LMHeadModel.__init__() got an unexpected keyword argument 'load_in_8bit'
    ImportError: cannot import name 'DataCollatorForCompletionOnlyLM' from 'trl'
    AttributeError: 'Accelerator' object has no attribute 'use_fp16'

The names, the versions that removed them, the exact errors and the replacements are data
(``knowledge/migrations.toml``, checked against the installed wheels by the test suite).
A row is reported when the targeted version (``transformers-version`` / ``trl-version``,
else the project's pin, else the installed version) has reached its ``removed_in``.

Fixes: a rename where both names mean the same (``evaluation_strategy`` → ``eval_strategy``)
and the targeted version has the new one; keywords that TRL moved from the trainer into its
config are moved into the ``SFTConfig(...)`` / ``DPOConfig(...)`` the call passes as
``args=`` (safe when that config is built in the same scope, unsafe when it is shared);
everything else is reported with the replacement in the message. ``Trainer(tokenizer=)``
keeps its own code, MP301.
"""
from __future__ import annotations

from ..diagnostics import SAFE
from .base import Rule, RuleContext
from .migration_findings import MigrationJudge


class RemovedHfApi(Rule):
    code = "MP302"
    name = "removed-hf-api"
    summary = "a transformers / TRL keyword, attribute or import that the targeted version removed (crashes)"
    fix_availability = "sometimes"
    fix_applicability = SAFE
    stage = "removed"

    def check(self, ctx: RuleContext):
        for finding in MigrationJudge(ctx, self.stage).findings():
            yield ctx.diagnostic(self.code, finding.span, finding.message, finding.fix, finding.related, noqa_line=finding.noqa_line, path=finding.path)
