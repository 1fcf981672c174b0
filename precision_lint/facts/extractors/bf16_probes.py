"""Facts about bf16 capability checks that also accept emulated bf16 (read by MP203).

Recorded per file, unjudged: every call of ``torch.cuda.is_bf16_supported()``
(unless it passes ``including_emulation``), transformers'
``is_torch_bf16_gpu_available()`` and accelerate's ``is_bf16_available()``,
with the names its result is assigned to (``use_bf16 = ... and
torch.cuda.is_bf16_supported()``), so a rule can tell which bf16 choices of the
file's precision and weights facts it decides.
"""
from __future__ import annotations

import ast
import dataclasses
import re
from ..._dataclass import dataclass
from typing import Optional, Tuple

from ...diagnostics import Span
from ...semantic.evaluate import Evaluator
from ...semantic.index import ModuleIndex, keyword, nodes_of, positional
from ...semantic.index import _target_names
from ...semantic.queries import every_binding
from ...semantic.values import CONST, DTYPE

SECTION = "bf16_probes"
EMPTY = ()

TORCH = ("torch.cuda.is_bf16_supported",)
LIBRARIES = (
    "transformers.is_torch_bf16_gpu_available",
    "transformers.utils.is_torch_bf16_gpu_available",
    "transformers.utils.import_utils.is_torch_bf16_gpu_available",
    "accelerate.utils.is_bf16_available",
    "accelerate.utils.imports.is_bf16_available",
)


@dataclass(frozen=True)
class WeakProbe:
    """A call of a bf16 check that also says yes on a GPU that only emulates bf16, with what
    its answer decides (the names it is assigned to, the code it chooses between) and what a fix
    that passes ``including_emulation=False`` or replaces it needs."""

    callee: str
    library: str  # "torch" or the library whose helper calls torch's check
    span: Span  # the call
    text: str
    close: int  # offset of the closing parenthesis
    has_args: bool
    names: Tuple[str, ...]  # names (or `self.x`) the statement holding the call assigns
    # that statement, when it assigns a name or returns (or is) the value it builds:
    # `return TrainingArguments(bf16=... if probe() else ..., fp16=... if probe() else ...)`
    # writes both choices as `args = TrainingArguments(...)` does (review 41a's O2)
    statement: Optional[Span]
    # (start, end) of the text that removes the helper's import when this call is its only
    # use (a fix that replaces the call would leave an unused import: ruff's F401)
    only_use_import: Optional[Tuple[int, int]] = None
    # The code the probe's answer chooses between: the `if` statement or the ternary whose test
    # holds the call (`if is_bf16_supported(): return torch.bfloat16` in a helper), so that a
    # choice made there decides the bf16 a caller uses (`from_pretrained(dtype=default_dtype())`).
    governs: Optional[Span] = None
    # (start, end) of the code that runs where the probe says yes: the body of the `if` (or the
    # ternary's first value) whose test holds the call, not under a `not`. A bf16 choice written
    # there is the probe's whatever its own value's conditions (`if ok(): with autocast(bf16):`).
    says_yes: Optional[Tuple[int, int]] = None
    returned: bool = False  # the call is (part of) what a function returns: `return is_bf16_supported()`
    # A helper returning bf16 where the probe says yes: where that bf16 is written (the helper
    # makes a bf16 choice for its callers, in whatever file they are).
    returns_bf16: Optional[Span] = None


def _assigned(index: ModuleIndex, site) -> Tuple[Tuple[str, ...], Optional[Span]]:
    stmt = site.statement
    if stmt is None:
        return (), None
    first, last = index.order(stmt)
    if not first <= index.order(site.node)[0] < last:
        return (), None
    names = []
    targets = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, ast.AnnAssign):
        targets = [stmt.target]
    for target in targets:
        names.extend(n for n, _ in _target_names(target))
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            names.append(f"{target.value.id}.{target.attr}")
    if isinstance(stmt, (ast.Return, ast.Expr)):
        return (), index.span(stmt)
    return tuple(names), (index.span(stmt) if names else None)


def extract(index: ModuleIndex, evaluator: Evaluator):
    found = []
    for site in index.calls:
        q = site.qualname or ""
        if q in TORCH:
            if keyword(site.node, "including_emulation") is not None or positional(site.node):
                continue  # the caller decided
            library = "torch"
        elif q in LIBRARIES:
            library = q.split(".")[0]
        else:
            continue
        span = index.span(site.node)
        close = index.source.rfind(")", span.start, span.end)
        names, statement = _assigned(index, site)
        only = _only_use_import(index, site) if library != "torch" else None
        has_args = bool(site.node.args or site.node.keywords)
        found.append((site, WeakProbe(q, library, span, index.text(site.node), close, has_args, names, statement, only)))
    if not found:
        return EMPTY
    governs, says_yes, returned, chooses = _surroundings(index, evaluator, {id(site.node): site.scope for site, _ in found})
    return tuple(
        dataclasses.replace(
            probe, governs=governs.get(id(site.node)), says_yes=says_yes.get(id(site.node)),
            returned=id(site.node) in returned, returns_bf16=chooses.get(id(site.node)),
        )
        for site, probe in found
    )


BF16_STRINGS = ("bf16", "bf16-mixed", "bf16-true", "bfloat16")


def _surroundings(index: ModuleIndex, evaluator: Evaluator, calls: dict) -> Tuple[dict, dict, set, dict]:
    """For the probe calls ``calls`` (id → scope): the span of the innermost `if` statement or
    ternary whose test holds each; which of them lie in a ``return`` value; and, for a helper
    that returns bf16 where the probe says yes (``if is_bf16_supported(): return
    torch.bfloat16``, ``return torch.bfloat16 if is_bf16_supported() else ...``), where that
    bf16 is written."""
    governs: dict = {}
    says_yes: dict = {}
    returned: set = set()
    chooses: dict = {}

    def inside(node):
        return [n for n in nodes_of(node) if id(n) in calls]

    def chosen_bf16(call, branch) -> Optional[Span]:
        """Where the function holding ``call`` returns bf16 written in ``branch`` (what the
        probe's `if`/ternary picks when it says yes), directly or through a variable."""
        function = calls[id(call)].code_scope()
        if function.kind != "function":
            return None
        region = index.span(branch)  # an expression, or a block of statements
        for value, _ in function.returns:
            for v in evaluator.values(value, function):
                bf16 = (v.kind == DTYPE and v.value == "bfloat16") or (
                    v.kind == CONST and isinstance(v.value, str) and v.value.lower() in BF16_STRINGS
                )
                if bf16 and v.origin is not None and region.start <= v.origin.start and v.origin.end <= region.end:
                    return v.origin
        return None

    def governed(node, test, branch) -> None:
        negated = {id(n) for sub in nodes_of(test) if isinstance(sub, ast.UnaryOp) and isinstance(sub.op, ast.Not) for n in nodes_of(sub.operand)}
        body = branch if isinstance(branch, list) else [branch]
        for call in (n for n in inside(test) if id(n) in calls):
            governs[id(call)] = index.span(node)
            if id(call) not in negated and body:
                says_yes[id(call)] = (index.span(body[0]).start, index.span(body[-1]).end)
            found = chosen_bf16(call, branch)
            if found is not None:
                chooses[id(call)] = found

    # outer statements before the ones inside them: the innermost `if` or ternary is the last word
    for node in nodes_of(index.module):
        if isinstance(node, (ast.If, ast.IfExp)):
            governed(node, node.test, node.body)
        elif isinstance(node, ast.Return) and node.value is not None:
            returned.update(id(n) for n in inside(node.value) if id(n) in calls)
    return governs, says_yes, returned, chooses


def _only_use_import(index: ModuleIndex, site) -> Optional[Tuple[int, int]]:
    """The text to delete so that ``from lib import helper`` goes with its only use."""
    func = site.node.func
    if not isinstance(func, ast.Name):
        return None
    bound = every_binding(index, func.id, site.scope)  # the import must be its only binding
    if len(bound) != 1 or bound[0].imported is None or not isinstance(bound[0].statement, ast.ImportFrom):
        return None
    statement = bound[0].statement
    if statement.names[0].name == "*":
        return None
    uses = len(re.findall(rf"\b{re.escape(func.id)}\b", index.source))
    if uses != 2:  # the import and this call, nothing else
        return None
    aliases = list(statement.names)
    if len(aliases) == 1:
        if not _alone_at_top(index.module.body, statement):
            return None
        span = index.span(statement)
        end = span.end + 1 if index.source[span.end : span.end + 1] == "\n" else span.end
        start = span.start - span.col
        return (start, end)
    i = next(i for i, a in enumerate(aliases) if (a.asname or a.name) == func.id)
    here = index.span(aliases[i])
    if i + 1 < len(aliases):  # `helper, other` → `other`
        return (here.start, index.span(aliases[i + 1]).start)
    return (index.span(aliases[i - 1]).end, here.end)  # `other, helper` → `other`


def _alone_at_top(body, statement: ast.stmt) -> bool:
    """Whether ``statement`` is a statement of the module's own body with no other statement
    on its lines (``import a; import b`` shares one)."""
    for i, stmt in enumerate(body):
        if stmt is statement:
            before = body[i - 1] if i else None
            after = body[i + 1] if i + 1 < len(body) else None
            return (before is None or before.end_lineno != stmt.lineno) and (after is None or after.lineno != stmt.end_lineno)
    return False
