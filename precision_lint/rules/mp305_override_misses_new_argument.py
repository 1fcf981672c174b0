"""MP305 override-misses-new-argument: a Trainer subclass's method that the targeted
transformers calls with an argument the override does not take.

A ``Trainer`` calls some of its own methods from its training loop, and a subclass overrides
them to change the loss or the logging. transformers 4.46 began to pass the number of items
in the batch to ``compute_loss`` and ``training_step`` (so that a loss summed over gradient
accumulation is divided once), and 4.47 the start time to ``log``. An override written for
4.45 or older, with the old signature, crashes on the first step of ``trainer.train()``::

    TypeError: RRHFTrainer.compute_loss() got an unexpected keyword argument 'num_items_in_batch'
    TypeError: MyTrainer.training_step() takes 3 positional arguments but 4 were given
    TypeError: MyTrainer.log() takes 2 positional arguments but 3 were given

The methods, the arguments, the versions that pass them and the exact errors are data
(``knowledge/overrides.toml``, checked against the installed wheels). A finding needs:

- the class derives from the library class that makes the call (``transformers.Trainer``
  directly, through a project base class, or through a library subclass: ``Seq2SeqTrainer``,
  TRL's trainers, ``libraries.toml``);
- the override takes no such argument (no parameter of that name, no ``**kwargs`` for a
  keyword, too few positional parameters and no ``*args`` for a positional one);
- the project's classes replace none of the library methods that make the call (a
  ``training_step`` of its own that never calls ``super().training_step`` calls
  ``compute_loss`` however it likes);
- the version a fresh install of what the file targets gets passes the argument on every
  call: ``transformers==4.45.2`` is silent; 4.47-4.48 passed ``num_items_in_batch`` to
  ``compute_loss`` only for models whose ``forward`` takes no ``**kwargs``, so a file pinned
  there is not reported either (the crash depends on the model).

The fix (safe) adds the parameter with a default, after the last positional one:
``def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None)``. It
changes nothing where the library does not pass it, and ends the crash where it does.
"""
from __future__ import annotations

from typing import Dict, List, Optional

from ..diagnostics import SAFE, Edit, Fix
from ..knowledge import Override, overrides
from ..workspace.versions import Allowed, compare, newest_admitted, version_text
from .base import Rule, RuleContext
from .migration_findings import same_library_class


class OverrideMissesNewArgument(Rule):
    code = "MP305"
    name = "override-misses-new-argument"
    summary = "a Trainer subclass overrides `compute_loss` / `training_step` / `log` without the argument the targeted transformers passes (crashes)"
    fix_availability = "sometimes"
    fix_applicability = SAFE

    def check(self, ctx: RuleContext):
        found = ctx.facts.section("overrides")
        if not found:
            return
        rows: Dict[str, List[Override]] = {}
        for row in overrides():
            rows.setdefault(row.method, []).append(row)
        targets = None  # asked at the first override that misses an argument (most modules have none)
        for override in found:
            for row in rows.get(override.method, ()):
                if _accepts(override, row) or not self._derives(ctx, override, row):
                    continue
                if targets is None:
                    targets = ctx.targets
                if targets.library_code is not None and row.library == targets.library_code.dist:
                    continue  # the library's own code (a vendored copy) defines the signatures
                allowed = targets.of(row.library)
                if _crashes(row, allowed):
                    yield ctx.diagnostic(self.code, override.name_span, _message(override, row, allowed), _fix(override, row))

    @staticmethod
    def _derives(ctx: RuleContext, override, row: Override) -> bool:
        """Whether the class derives from ``row.owner`` and leaves the library methods that make
        the call to the library (one replaced by the project makes the call its own way)."""
        ancestry = list(ctx.project.symbols.ancestry(override.klass, ctx.facts))
        if not any(same_library_class(name, row.owner) for name, _, _ in ancestry):
            return False
        replaced = set()  # the callers a project class defines without calling its base's
        for name, module, cls in ancestry:
            if cls is None or module is None:
                continue
            for method in module.section("overrides") or ():
                if method.klass == name and method.method in row.callers and not method.calls_super:
                    replaced.add(method.method)
        return not replaced


def _accepts(override, row: Override) -> bool:
    """Whether the override takes the argument as the library passes it."""
    if row.passed == "keyword":
        return override.star_kwargs or row.argument in override.positional or row.argument in override.keyword_only
    return override.star_args or len(override.positional) > row.position


def _crashes(row: Override, allowed: Allowed) -> bool:
    """Whether the version a fresh install of ``allowed`` gets passes the argument on every call
    (nothing stated: the newest release, which does; a commit or an unknown version: not known)."""
    if allowed.commit:
        return False
    if allowed.newest:
        return True
    version = newest_admitted(allowed)
    if version is None or compare(version, row.since) < 0:
        return False
    return not (
        row.conditional_from is not None and compare(version, row.conditional_from) >= 0
        and (row.conditional_until is None or compare(version, row.conditional_until) < 0)
    )


def _error(override, row: Override) -> str:
    cls = override.klass.rpartition(".")[2]
    if row.passed == "keyword":
        return row.error.format(cls=cls)
    takes = len(override.positional)
    if override.defaults:
        takes = f"from {takes - override.defaults} to {takes}"
    return row.error.format(cls=cls, takes=takes, given=row.position + 1)


def _message(override, row: Override, allowed: Allowed) -> str:
    cls = override.klass.rpartition(".")[2]
    lib = row.library
    how = f"`{row.argument}=`" if row.passed == "keyword" else f"`{row.argument}` as argument {row.position + 1}"
    callers = " and ".join(f"`{row.owner.rpartition('.')[2]}.{c}`" for c in row.callers)
    on = allowed.where()
    return (
        f"`{cls}.{override.method}` does not take `{row.argument}`, which {lib} {version_text(row.since)} and later "
        f"pass from {callers} ({how}; the file targets {on}): `trainer.train()` raises `{_error(override, row)}`; "
        f"add `{row.argument}={row.default}` to the signature"
    )


def _fix(override, row: Override) -> Optional[Fix]:
    if override.insert_at < 0 or row.argument in override.keyword_only:
        return None  # no positional parameter to follow, or the name is taken
    text = f", {row.argument}={row.default}"
    return Fix(SAFE, f"add `{row.argument}={row.default}` to `{override.method}`", (Edit(override.insert_at, override.insert_at, text),))
