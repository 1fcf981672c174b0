"""Module-level dicts of keywords another module spreads into a call (read by the join).

A project often keeps its training settings in a module of constants::

    # src/settings.py
    TRAINING_ARGS = {"per_device_train_batch_size": 1, "evaluation_strategy": "steps"}
    # src/train.py
    from src import settings
    TrainingArguments(output_dir="out", **settings.TRAINING_ARGS)

Each key is a keyword of the call, so a key a transformers release removed raises the class's
own ``TypeError: TrainingArguments.__init__() got an unexpected keyword argument
'evaluation_strategy'`` in the other file. The spreading call is recorded by the migrations
extractor (``MigrationCall.module_tables``); this section records each table a module's top
level binds once, with string keys, and never changes afterwards: a dict literal
(``{"k": v}``) or a ``dict(k=v)`` call, each key with its place and its value as written. A
table the module adds to, deletes from or rebinds (``TRAINING_ARGS["fp16"] = True``,
``.update(...)``, ``.pop(...)``) has keys no literal shows: no fact.
"""
from __future__ import annotations

import ast
from typing import Dict, List, Set, Tuple

from ..._dataclass import dataclass
from ...diagnostics import Span
from ...semantic.evaluate import Evaluator
from ...semantic.index import ModuleIndex, string_value
from .precision import key_span, value_text

SECTION = "keyword_tables"
EMPTY = {"tables": ()}

# the methods that change a dict in place
_MUTATORS = frozenset({"update", "pop", "popitem", "setdefault", "clear", "__setitem__", "__delitem__"})


@dataclass(frozen=True)
class TableKey:
    name: str
    span: Span  # the string key of `{"name": v}`, the name of `dict(name=v)`
    value_text: str


@dataclass(frozen=True)
class KeywordTable:
    """``NAME = {...}`` at a module's top level: its keys as a call spreading it receives them."""

    name: str
    keys: Tuple[TableKey, ...]


def extract(index: ModuleIndex, evaluator: Evaluator):
    candidates: Dict[str, ast.expr] = {}
    bound: Dict[str, int] = {}
    for statement in index.module.body:
        targets: List[ast.expr] = []
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
            targets = [statement.target]
        for target in targets:
            if isinstance(target, ast.Name):
                bound[target.id] = bound.get(target.id, 0) + 1
                if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
                    candidates[target.id] = statement.value
    found = {name: keys for name, value in candidates.items() if bound.get(name) == 1 and (keys := _keys(index, value))}
    if not found:
        return {"tables": ()}  # most modules bind no such dict: nothing to walk for
    changed = _changed_in_place(index.module)
    return {"tables": tuple(KeywordTable(name, keys) for name, keys in found.items() if name not in changed)}


def _keys(index: ModuleIndex, value: ast.expr) -> Tuple[TableKey, ...]:
    """The keys of a dict literal with string keys, or of a ``dict(...)`` call's keywords;
    nothing for anything else (a ``**other`` inside: keys no literal shows)."""
    if isinstance(value, ast.Dict):
        if any(k is None for k in value.keys):
            return ()
        names = [string_value(k) for k in value.keys]
        if any(n is None for n in names):
            return ()
        return tuple(TableKey(n, key_span(index, k), value_text(index, v, k)) for n, k, v in zip(names, value.keys, value.values))
    if (
        isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict"
        and not value.args and all(kw.arg is not None for kw in value.keywords)
        and index.qualify(value.func) in (None, "dict", "builtins.dict")  # not a `dict` of its own
    ):
        return tuple(TableKey(kw.arg, key_span(index, kw), value_text(index, kw.value, kw)) for kw in value.keywords)
    return ()


def _changed_in_place(module: ast.Module) -> Set[str]:
    """Names whose dict the module changes anywhere: an item stored or deleted, a mutating
    method called, an augmented assignment (``|=``), a ``global`` rebinding in a function."""
    out: Set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) and isinstance(node.value, ast.Name):
            out.add(node.value.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
            if isinstance(node.func.value, ast.Name):
                out.add(node.func.value.id)
        elif isinstance(node, ast.Global):
            out.update(node.names)
    return out
