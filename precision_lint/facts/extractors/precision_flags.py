"""Facts about how the fp16/bf16 flags of a training config are set (read by MP102).

The precision facts (``precision.py``) hold the possible values of ``fp16=`` and
``bf16=``. This adds what those values cannot say: whether a flag follows a
command-line option and what the option defaults to (``--fp16`` with
``default=True`` is on unless the user turns it off; two ``store_true`` options
are the user's choice), and flags set on the arguments object after it is built
(``args.bf16 = True``).
"""
from __future__ import annotations

import ast
from ..._dataclass import dataclass

from ...diagnostics import Span
from ...semantic.evaluate import Evaluator
from ...semantic.index import ModuleIndex, keyword
from ...semantic.names import dotted
from ...semantic.queries import reaching_values
from ...semantic.values import CONST, Values
from .precision import is_training_args

SECTION = "precision_flags"
EMPTY = {"options": (), "overrides": ()}
FLAGS = ("fp16", "bf16")


@dataclass(frozen=True)
class OptionFlag:
    """``fp16=args.fp16`` where ``args`` comes from argparse: what the option defaults to."""

    site: Span  # the TrainingArguments call
    flag: str
    option: str  # the option's dest
    default_on: bool
    text: str = ""  # the expression that reads it (`args.fp16`)


@dataclass(frozen=True)
class FlagOverride:
    """``targs.bf16 = True`` after ``targs = TrainingArguments(...)``."""

    site: Span  # the TrainingArguments call the target was built by
    flag: str
    values: Values
    span: Span  # the assignment's value
    text: str
    statement: Span


def _default_on(evaluator: Evaluator, call: ast.Call, scope) -> bool:
    action = keyword(call, "action")
    default = keyword(call, "default")
    if default is not None:
        values = evaluator.values(default.value, scope)
        return any(v.kind == CONST and bool(v.value) and v.value not in ("false", "False", "no", "0") for v in values)
    if action is not None and isinstance(action.value, ast.Constant):
        return action.value.value == "store_false"
    return False


def extract(index: ModuleIndex, evaluator: Evaluator):
    options = []
    built = {}  # target text -> the call's span
    for site in index.calls:
        if not is_training_args(site.qualname):
            continue
        span = index.span(site.node)
        for target in site.assigned_to:
            built[target] = span
        for source in evaluator.kwarg_sources(site.node, site.scope):
            if source.name not in FLAGS:
                continue
            # `fp16=args.fp16`, or `use_fp16 = args.fp16` ... `fp16=use_fp16`
            candidates = [source.value]
            if isinstance(source.value, ast.Name):
                candidates += reaching_values(index, source.value, site.scope)
            for value in candidates:
                if not isinstance(value, ast.Attribute):
                    continue
                found = index.arg_options.get(value.attr)
                if found:
                    default_on = _default_on(evaluator, found[0].call, site.scope)  # argparse: the first option's default
                    options.append(OptionFlag(span, source.name, value.attr, default_on, index.text(value)))
                    break
    overrides = []
    for assign in index.attr_assigns:
        target = assign.target
        if target.attr not in FLAGS:
            continue
        base = dotted(target.value)
        if base not in built:
            continue
        stmt_span = index.span(assign.target)
        overrides.append(
            FlagOverride(
                built[base], target.attr, evaluator.values(assign.value, assign.scope),
                index.span(assign.value), index.text(assign.value), stmt_span,
            )
        )
    return {"options": tuple(options), "overrides": tuple(overrides)}
