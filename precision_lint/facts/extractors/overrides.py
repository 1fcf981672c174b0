"""Facts about methods a project class overrides that its library base calls (read by MP305),
or whose keywords a library renamed (read by MP302/MP304 and MP202).

Recorded per file, unjudged: for every class defined here, each method whose name a row of
``knowledge/overrides.toml`` is about (``compute_loss``, ``training_step``, ``log``) or a
keyword row of ``knowledge/migrations.toml`` names (``from_pretrained``: a project model's own
``from_pretrained(cls, name, use_flash_attention_2=False)`` takes that keyword itself), with its
signature as a caller sees it (positional parameters, keyword-only ones, ``*args``,
``**kwargs``) and where a new parameter goes. Whether the class derives from the library class
that calls the method, and whether the targeted version passes the new argument, is decided
later, with the project's class hierarchy and the versions the file targets.
"""
from __future__ import annotations

import ast
from typing import Tuple

from ..._dataclass import dataclass
from ...diagnostics import Span
from ...knowledge import calling_methods, keyword_methods, overridden_methods
from ...semantic.evaluate import Evaluator
from ...semantic.index import ModuleIndex

SECTION = "overrides"
EMPTY: tuple = ()


@dataclass(frozen=True)
class MethodOverride:
    """A method of a project class, named as one its library base calls."""

    klass: str  # the class's qualified name
    method: str
    name_span: Span  # `def compute_loss`: where the finding is shown
    positional: Tuple[str, ...]  # positional parameters, `self` included
    defaults: int  # how many of them have a default
    keyword_only: Tuple[str, ...]
    star_args: bool
    star_kwargs: bool
    # where a new positional-or-keyword parameter goes: after the last positional one (its
    # default included), before `*args`, a bare `*`, keyword-only ones and `**kwargs`
    insert_at: int
    # its body calls the base's method of the same name (`super().training_step(...)`): the
    # library's own code still runs, with the calls it makes
    calls_super: bool = False


def extract(index: ModuleIndex, evaluator: Evaluator) -> Tuple[MethodOverride, ...]:
    names = overridden_methods() | calling_methods() | keyword_methods()
    found = []
    for info in index.classes.values():
        for node in (info.node, *info.more_nodes):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in names:
                    found.append(_override(index, info.qualname, item))
    return tuple(found)


def _override(index: ModuleIndex, klass: str, node) -> MethodOverride:
    args = node.args
    positional = (*args.posonlyargs, *args.args)
    return MethodOverride(
        klass,
        node.name,
        index.name_span(node),
        tuple(a.arg for a in positional),
        len(args.defaults),
        tuple(a.arg for a in args.kwonlyargs),
        args.vararg is not None,
        args.kwarg is not None,
        _insert_at(index, args, positional),
        _calls_super(node),
    )


def _calls_super(node) -> bool:
    """Whether the method calls its base's method of the same name: ``super().name(...)``,
    ``super(Cls, self).name(...)`` or ``Base.name(self, ...)`` (the class of its call is not
    resolved: any ``X.name(self, ...)``)."""
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Call) or not isinstance(sub.func, ast.Attribute) or sub.func.attr != node.name:
            continue
        owner = sub.func.value
        if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
            return True
        if sub.args and isinstance(sub.args[0], ast.Name) and sub.args[0].id == "self" and not (
            isinstance(owner, ast.Name) and owner.id == "self"
        ):
            return True
    return False


def _insert_at(index: ModuleIndex, args: ast.arguments, positional) -> int:
    """The offset just after the last positional parameter and its default (defaults belong to
    the last positional parameters); -1 where there is none (no fix is written there)."""
    if not positional:
        return -1
    end = index.span(positional[-1]).end
    if args.defaults:
        end = max(end, index.span(args.defaults[-1]).end)
    return end
