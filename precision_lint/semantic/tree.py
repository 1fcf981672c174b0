"""CPython's tree in the order of the source: a node's children, and every node below it.

``ast.iter_child_nodes`` gives a node's children in the order of its class's fields, which is
not the order of the text for a few classes (``a if test else b``, a dict's keys and values, a
call's positional and keyword arguments, a definition's decorators and body, a parameter's
default). The index numbers nodes in source order with :func:`ordered` (``order_of``: which
comes first, which lies inside which), and positions place an ``ast.arguments`` from its
first and last child; both ask this module, which asks nothing of either.
"""
from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Tuple

# Fields that never hold code: an expression's context, an operator (``ast.Add()``...), and the
# identifiers, numbers and flags ``ast`` keeps as plain values (the gate's walk skips them too).
SKIPPED_FIELDS = frozenset(
    {"ctx", "op", "ops", "id", "attr", "arg", "asname", "module", "level", "kind", "conversion", "is_async",
     "type_comment", "simple", "tag", "kwd_attrs", "rest"}
)
# Fields that hold a block of statements (a Python list): numbered by the walk like a node.
_BLOCK_FIELDS = frozenset({"body", "orelse", "finalbody"})
_PLAN: Dict[type, Tuple[Tuple[str, bool], ...]] = {}


def _plan(cls: type) -> Tuple[Tuple[str, bool], ...]:
    """(field, holds a block of statements) for the fields of ``cls`` that may hold nodes, in
    ``_fields`` order (source order, but for the classes of ``_ORDERED``)."""
    plan = _PLAN.get(cls)
    if plan is None:
        expression = cls in (ast.IfExp, ast.Lambda)  # their body/orelse are expressions
        skipped = SKIPPED_FIELDS
        if cls is ast.Constant:
            skipped = frozenset(cls._fields)
        elif cls in (ast.Global, ast.Nonlocal):
            skipped = skipped | {"names"}
        elif cls.__name__ != "TypeAlias":  # its name is a Name; elsewhere a string
            skipped = skipped | {"name"}
        plan = _PLAN[cls] = tuple(
            (name, not expression and name in _BLOCK_FIELDS) for name in cls._fields if name not in skipped
        )
    return plan


def _by_position(nodes: List[ast.AST]) -> List[ast.AST]:
    """Arguments (positional, starred, keywords) in the order they are written."""
    return sorted(nodes, key=lambda n: (n.lineno, n.col_offset))


def call_order(node: ast.Call, blocks: bool) -> list:
    args, keywords = node.args, node.keywords
    if not keywords:
        return [node.func, *args]
    if not args:
        return [node.func, *keywords]
    last, first = args[-1], keywords[0]
    if (last.lineno, last.col_offset) < (first.lineno, first.col_offset):
        return [node.func, *args, *keywords]
    return [node.func, *_by_position([*args, *keywords])]


def _def_order(node, blocks: bool) -> list:
    out = [*node.decorator_list, *getattr(node, "type_params", ())]
    if type(node) is ast.ClassDef:
        out.extend(_by_position([*node.bases, *node.keywords]) if node.keywords and node.bases else (*node.bases, *node.keywords))
    else:
        out.append(node.args)
        if node.returns is not None:
            out.append(node.returns)
    if blocks:
        out.append(node.body)
    else:
        out.extend(node.body)
    return out


def _arguments_order(node: ast.arguments, blocks: bool) -> list:
    out: list = []
    positional = [*node.posonlyargs, *node.args]
    defaults = node.defaults
    first = len(positional) - len(defaults)
    for i, arg in enumerate(positional):
        out.append(arg)
        if i >= first:
            out.append(defaults[i - first])
    if node.vararg is not None:
        out.append(node.vararg)
    for arg, default in zip(node.kwonlyargs, node.kw_defaults):
        out.append(arg)
        if default is not None:
            out.append(default)
    if node.kwarg is not None:
        out.append(node.kwarg)
    return out


def _dict_order(node: ast.Dict, blocks: bool) -> list:
    out: list = []
    for key, value in zip(node.keys, node.values):
        if key is not None:  # None: `**d`
            out.append(key)
        out.append(value)
    return out


def _mapping_order(node, blocks: bool) -> list:
    out: list = []
    for key, pattern in zip(node.keys, node.patterns):
        out += [key, pattern]
    return out


# Classes whose ``_fields`` order is not the order of the source.
_ORDERED = {
    ast.IfExp: lambda node, blocks: [node.body, node.test, node.orelse],
    ast.Dict: _dict_order,
    ast.Call: call_order,
    ast.FunctionDef: _def_order,
    ast.AsyncFunctionDef: _def_order,
    ast.ClassDef: _def_order,
    ast.arguments: _arguments_order,
}
if hasattr(ast, "MatchMapping"):  # Python 3.10+
    _ORDERED[ast.MatchMapping] = _mapping_order


def ordered(node, blocks: bool) -> list:
    """The children of ``node`` in source order; with ``blocks``, a block of statements is one
    child (the list itself), else its statements are."""
    cls = type(node)
    special = _ORDERED.get(cls)
    if special is not None:
        return special(node, blocks)
    plan = _PLAN.get(cls)
    if plan is None:
        plan = _plan(cls)
    if not plan:
        return []
    out: list = []
    for name, block in plan:
        value = getattr(node, name, None)
        if type(value) is list:
            if block and blocks:
                out.append(value)
            else:
                out.extend(v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


def children(node) -> List[ast.AST]:
    """A node's children in **source order** (``ast.iter_child_nodes`` is field order, which
    differs for ``IfExp``, ``Dict``, ``Call``, definitions and ``arguments``). Operators and
    expression contexts (``ast.Add()``, ``ast.Load()``) are never children. A block of
    statements (a list) has its statements as children."""
    if type(node) is list:
        return list(node)
    return ordered(node, False)


def nodes_of(root) -> Iterator[ast.AST]:
    """``root`` and every node below it, in source order (pre-order): for the extractors'
    questions about one expression's own tree (which calls it makes, which names it reads),
    never about the words of its text. A block of statements (a list) gives its statements'."""
    todo = list(reversed(root)) if type(root) is list else [root]
    pop, extend = todo.pop, todo.extend
    while todo:
        node = pop()
        yield node
        extend(reversed(ordered(node, False)))
