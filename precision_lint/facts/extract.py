"""Text of one file → :class:`ModuleFacts`.

Steps: honour ``# precision-lint: skip-file``; skip parsing when the text holds
none of the evidence the selected rules need; parse with LibCST; build the
index; record imports, classes, layout and ``# noqa`` comments; then let every
domain extractor in ``facts/extractors`` add its section.
"""
from __future__ import annotations

import importlib
import pkgutil
import re
from functools import lru_cache
from typing import Iterable, Optional

import libcst as cst

from . import extractors as _extractors_pkg
from .evaluate import Evaluator
from .index import ModuleIndex, build_index
from .model import ClassFact, Layout, ModuleFacts, ParseError, ProbeFact
from .values import CAPABILITY, COND

SKIP_FILE = re.compile(r"#\s*precision-lint:\s*skip-file\b", re.IGNORECASE)
NOQA = re.compile(
    r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE
)


@lru_cache(maxsize=None)
def extractors():
    """The domain extractors: every module of ``facts/extractors`` with ``SECTION`` and ``extract``."""
    found = []
    for info in sorted(pkgutil.iter_modules(_extractors_pkg.__path__), key=lambda i: i.name):
        mod = importlib.import_module(f"{_extractors_pkg.__name__}.{info.name}")
        if hasattr(mod, "SECTION") and hasattr(mod, "extract"):
            found.append(mod)
    return tuple(found)


def parse_noqa(source: str):
    out = {}
    if "noqa" not in source.lower():
        return out
    for lineno, line in enumerate(source.splitlines(), start=1):
        if "#" not in line:
            continue
        match = NOQA.search(line)
        if match:
            codes = match.group("codes")
            out[lineno] = frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c) if codes else None
    return out


def may_hold_evidence(source: str, evidence: Optional[Iterable[str]]) -> bool:
    if evidence is None:
        return True
    return any(word in source for word in evidence)


def extract_facts(
    source: str,
    path: str,
    module: str = "",
    is_package: bool = False,
    root: str = "",
    evidence: Optional[Iterable[str]] = None,
) -> ModuleFacts:
    facts = ModuleFacts(path=path, module=module, is_package=is_package, root=root)
    facts.noqa = parse_noqa(source)
    if SKIP_FILE.search(source):
        facts.skip_file = True
        return facts
    if not may_hold_evidence(source, evidence):
        return facts
    try:
        index = build_index(source, module, is_package)
    except cst.ParserSyntaxError as exc:
        facts.parse_error = ParseError(_first_line(exc.message), exc.raw_line, exc.raw_column)
        return facts
    except (RecursionError, ValueError) as exc:  # pathological input; still never a traceback
        facts.parse_error = ParseError(str(exc) or type(exc).__name__, 1, 0)
        return facts
    facts.parsed = True
    evaluator = Evaluator(index)
    facts.imports = tuple(sorted(m for m in index.imports.imported_modules if m))
    facts.called = frozenset(_called(index))
    facts.classes = tuple(
        ClassFact(c.qualname, c.bases, tuple(sorted(c.self_attrs)), index.span(c.node), c.init_params)
        for c in index.classes.values()
    )
    facts.layout = _layout(index, evaluator)
    for extractor in extractors():
        facts.sections[extractor.SECTION] = extractor.extract(index, evaluator)
    return facts


def _called(index: ModuleIndex):
    """Qualnames of what this module calls, through simple aliases (``load = mu.load_model``)."""
    for site in index.calls:
        if site.qualname:
            yield site.qualname
        elif isinstance(site.node.func, cst.Name):
            owner = site.scope.lookup_scope(site.node.func.value)
            bound = owner.assignments.get(site.node.func.value, []) if owner else []
            for a in bound:
                if isinstance(a.value, (cst.Name, cst.Attribute)):
                    target = index.qualify(a.value)
                    if target:
                        yield target


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else "invalid syntax"


def _is_import_line(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
    )


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _line_after(index: ModuleIndex, node: cst.CSTNode) -> int:
    end = index.span(node).end
    newline = index.source.find("\n", end)
    return len(index.source) if newline < 0 else newline + 1


def _layout(index: ModuleIndex, evaluator: Evaluator) -> Layout:
    body = index.module.body
    insert_at = 0
    torch_import_end = None
    for i, stmt in enumerate(body):
        if i == 0 and _is_docstring(stmt):
            insert_at = _line_after(index, stmt)
            continue
        if _is_import_line(stmt):
            insert_at = _line_after(index, stmt)
            continue
        break
    for stmt in body:
        if _is_import_line(stmt) and any(
            isinstance(s, cst.Import) and any((a.evaluated_name == "torch") for a in s.names)
            for s in stmt.body
        ):
            torch_import_end = _line_after(index, stmt)
            break
    if torch_import_end is not None and torch_import_end > insert_at:
        insert_at = torch_import_end
    torch_name = None
    for local, full in index.imports.aliases.items():
        if full == "torch":
            torch_name = local
            break
    probes = []
    for name, assignments in index.root.assignments.items():
        if len(assignments) != 1 or assignments[0].value is None or assignments[0].guards:
            continue
        if assignments[0].unpack_index is not None:
            continue
        value = assignments[0].value
        vals = evaluator.values(value, index.root)
        boolean = isinstance(value, (cst.Comparison, cst.BooleanOperation, cst.UnaryOperation)) or (
            isinstance(value, cst.Call) and (index.qualify(value.func) or "").rsplit(".", 1)[-1].startswith("is_")
        )
        if boolean and vals and all(v.kind == CAPABILITY or (v.kind == COND and v.capability) for v in vals):
            probes.append(ProbeFact(name, index.span(assignments[0].statement)))
    newline = "\r\n" if "\r\n" in index.source[:2000] else "\n"
    return Layout(insert_at, torch_name, tuple(sorted(probes, key=lambda p: p.span.start)), newline)
