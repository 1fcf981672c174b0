"""Tests that compare one expression with values written in the code: ``x == "fp16"``,
``x in ("fp16", "pure_fp16")``, ``dtype == torch.float16``. Two such tests of the same expression
that accept no value in common never hold together: a GradScaler built under
``if opt.optim == "adam":`` never meets weights made float16 under ``opt.optim == "legacy"``
(review 26b: OpenNMT-py), nor a ``--precision amp`` scaler the ``fp16`` cast. Read from the
texts of the tests (a guard keeps its test as written), each conjunct of an ``and`` on its own."""
from __future__ import annotations

import ast
from typing import FrozenSet, Iterable, List, Optional, Tuple

from .names import dotted


TRUTHY = frozenset({("truthy", True)})  # the values a bare test passes


def values_tested(test: ast.expr) -> Optional[Tuple[str, FrozenSet[Tuple[str, object]], bool]]:
    """``(the expression tested, the values, whether it passes for every value but those)`` of
    ``x == v`` or ``x in (v, w)`` (False) and of ``x != v``, ``x not in (v, w)``, ``not (x == v)``
    (True), each value a literal or a dotted name (``torch.float16``); None for any other test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = values_tested(test.operand)
        return (inner[0], inner[1], not inner[2]) if inner is not None else None
    if isinstance(test, (ast.Name, ast.Attribute)) and dotted(test):
        # a switch read bare (`if args.fp16:`): it passes for what is true, `not` for the rest
        return ast.dump(test), TRUTHY, False
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    op, right = test.ops[0], test.comparators[0]
    if isinstance(op, (ast.Eq, ast.NotEq)):
        items = [right]
    elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.List, ast.Tuple, ast.Set)):
        items = list(right.elts)
    else:
        return None
    values = []
    for item in items:
        if isinstance(item, ast.Constant):
            values.append(("literal", item.value))
        elif isinstance(item, (ast.Name, ast.Attribute)) and dotted(item):
            values.append(("name", dotted(item)))
        else:
            return None
    return (ast.dump(test.left), frozenset(values), isinstance(op, (ast.NotEq, ast.NotIn))) if values else None


def conjuncts(text: str) -> List[ast.expr]:
    """The parts of a test written as text that must each hold (``a and (b and c)``: a, b, c);
    [] for a text that is no expression."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return []
    out, stack = [], [node]
    while stack:
        item = stack.pop()
        if isinstance(item, ast.BoolOp) and isinstance(item.op, ast.And):
            stack.extend(reversed(item.values))
        else:
            out.append(item)
    return out


def guards_text(index, guards) -> str:
    """The tests a call runs under as one text (``args.fp16 and not (args.deepspeed)``): the
    guards of its statements and of the conditional expressions it is a branch of."""
    return " and ".join(index.text(test) if positive else f"not ({index.text(test)})" for test, positive in guards)


def never_together(these: Iterable[str], those: Iterable[str]) -> bool:
    """Whether the tests ``these`` (all holding) and ``those`` (all holding) contradict each
    other: some conjunct of one and some of the other test the same expression against values
    that have none in common (``x == "a"``, ``x in ("b", "c")``), or one passes only for values
    the other refuses (``x == "a"``, ``not (x == "a")``)."""
    mine = [t for text in these if text for t in map(values_tested, conjuncts(text)) if t is not None]
    if not mine:
        return False
    theirs = [t for text in those if text for t in map(values_tested, conjuncts(text)) if t is not None]
    return any(a[0] == b[0] and _apart(a, b) for a in mine for b in theirs)


def chosen_apart(values, tests: Iterable[str]) -> bool:
    """Whether each of ``values`` (``Possible`` atoms) is chosen under a test (its positive
    guards) that contradicts ``tests`` (:func:`never_together`); False for no values."""
    tests = list(tests)
    return bool(values) and all(never_together([g.text for g in v.guards if g.positive], tests) for v in values)


def _apart(a, b) -> bool:
    (_, these, a_but), (_, those, b_but) = a, b
    if (these == TRUTHY) != (those == TRUTHY):
        return False  # `x` and `x == "fp16"`: a value may be both true and that literal
    if a_but and b_but:
        return False  # two refusals: some other value passes both
    if a_but or b_but:
        accepted, refused = (those, these) if a_but else (these, those)
        return accepted <= refused
    return not these & those
