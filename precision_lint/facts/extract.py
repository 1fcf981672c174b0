"""Text of one file → :class:`ModuleFacts`.

Steps: honour ``# precision-lint: skip-file``; skip analysis of a file whose unit
imports none of the libraries the rules are about (``gate.py``); parse with LibCST; build the
index; record imports, classes, layout and ``# noqa`` comments; then let every
domain extractor in ``facts/extractors`` add its section.
"""
from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import sys
from functools import lru_cache
from typing import TYPE_CHECKING, Optional, Tuple

from ..workspace.notebook import CELL_ERROR_PREFIX, boundary_lines, is_notebook
from . import extractors as _extractors_pkg
from ..semantic import syntax
from ..semantic.main_block import main_block_lines
from ..semantic.programs import top_level_acts
from ..semantic.queries import qualified_name
from .model import ClassFact, ImportLine, Layout, ModuleFacts, ParseError, ProbeFact
from ..semantic.values import CAPABILITY, COND, awaits_join

if TYPE_CHECKING:
    import libcst as cst

    from ..semantic.index import ModuleIndex


def _load_analysis() -> None:
    """LibCST and the analysis on it, imported when the first file is analysed: a run that
    analyses none (every file answered from the cache, or none in a unit that imports a
    library the rules are about) never loads them. Bound as this module's globals, which the
    helpers below read."""
    if "build_index" in globals():
        return
    import libcst

    from ..semantic.calls import call_edges, call_records, registered_commands, return_summaries
    from ..semantic.evaluate import Evaluator
    from ..semantic.index import ModuleIndex, build_index, children

    globals().update(
        cst=libcst, call_edges=call_edges, call_records=call_records, registered_commands=registered_commands,
        return_summaries=return_summaries,
        Evaluator=Evaluator, ModuleIndex=ModuleIndex, build_index=build_index, children=children,
    )

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


def extract_facts(
    source: str,
    path: str,
    module: str = "",
    is_package: bool = False,
    root: str = "",
    analyse: bool = True,
) -> ModuleFacts:
    """The facts of one file. ``analyse`` (see ``gate.py``) is False for a file of no unit that
    imports a library the rules are about: only its imports, exports and classes are read."""
    facts = ModuleFacts(path=path, module=module, is_package=is_package, root=root)
    facts.noqa = parse_noqa(source)
    if SKIP_FILE.search(source):
        facts.skip_file = True
        return facts
    # CPython's verdict first: a file it refuses is MP000 at once, whatever it mentions
    if is_notebook(path):  # each cell compiled on its own, as IPython does
        tree, error = syntax.cpython_tree(source, path, syntax.CELL_FLAGS, boundary_lines(source))
    else:
        tree, error = syntax.cpython_tree(source, path)
    if error is not None:
        facts.parse_error = error
        return facts
    facts.main_lines = main_block_lines(tree)
    facts.cell_errors = notebook_cell_errors(source, path)
    facts.acts = top_level_acts(tree)
    if not analyse:
        # Not parsed, but its imports still link the files around it (a package
        # `__init__.py` that re-exports `load_model` from the module that loads fp16).
        facts.imports, facts.exports = _imports_from_text(source, module, is_package)
        facts.classes, facts.definitions = _classes_from_text(tree, module, dict(facts.exports))
        return facts
    depth, line, col = syntax.nesting_depth(tree)
    if depth > syntax.MAX_DEPTH:
        facts.parse_error = syntax.too_deep(depth, line, col)
        return facts
    # a notebook's tree may hold top-level `await` (CELL_FLAGS): the positions pass pairs with
    # ast.parse's tree, which refuses it, so it parses a notebook's text itself
    paired = None if is_notebook(path) else tree
    return syntax.run_deep(depth, _extract_parsed, facts, source, path, module, is_package, paired)


def _extract_parsed(
    facts: ModuleFacts, source: str, path: str, module: str, is_package: bool, tree: Optional[ast.AST] = None
) -> ModuleFacts:
    """The facts of a file CPython compiles, read from LibCST's tree of it (``tree``: CPython's
    tree of the same text, handed to the positions pass)."""
    _load_analysis()
    try:
        index = build_index(source, module, is_package, tree)
    except cst.ParserSyntaxError as exc:  # CPython compiles it: syntax LibCST cannot read
        error = _parse_error(source, path, exc)
        facts.parse_error = ParseError(
            f"LibCST, the parser precision-lint reads code with, cannot parse it ({error.message}); "
            "CPython compiles it, but it was not checked",
            error.line,
            error.col,
            "unsupported",
        )
        return facts
    except (RecursionError, ValueError) as exc:  # pathological input; still never a traceback
        message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        facts.parse_error = ParseError(f"the analysis failed on it ({message}); it was not checked", 1, 0, "unsupported")
        return facts
    facts.parsed = True
    evaluator = Evaluator(index)
    facts.imports = tuple(sorted(m for m in index.imports.imported_modules if m))
    facts.type_checking_imports = index.type_checking_imports()
    facts.exports, facts.definitions = _exports(index)
    facts.calls = call_records(index, evaluator)
    facts.functions = tuple(index.functions)
    facts.call_edges = call_edges(index)
    facts.registered = registered_commands(index)
    facts.returns = return_summaries(index, evaluator)
    facts.classes = tuple(
        ClassFact(c.qualname, c.bases, tuple(sorted(c.self_attrs)), c.init_params, *_members(c.node, *c.more_nodes))
        for c in index.classes.values()
    )
    facts.layout = _layout(index, evaluator)
    for extractor in extractors():
        try:
            facts.sections[extractor.SECTION] = extractor.extract(index, evaluator)
        except Exception as exc:  # a bug of ours: the engine names the extractor (MP003)
            exc.precision_lint_stage = f"extractor {extractor.SECTION}"
            raise
    facts.to_join = frozenset(name for name, value in facts.sections.items() if awaits_join(value))
    return facts


_CELL_ERROR = re.compile(r"^" + re.escape(CELL_ERROR_PREFIX) + r"(\d+): (.*)$", re.MULTILINE)


def notebook_cell_errors(source: str, path: str) -> Tuple[ParseError, ...]:
    """The code cells of a notebook that do not compile (``notebook.to_python`` masks each and
    leaves the error on the line it is on): each is its own MP000, the other cells are checked."""
    if not is_notebook(path) or CELL_ERROR_PREFIX not in source:
        return ()
    out = []
    for match in _CELL_ERROR.finditer(source):
        line = source.count("\n", 0, match.start()) + 1
        out.append(ParseError(match.group(2), line, int(match.group(1))))
    return tuple(out)


_IMPORT_LINE = re.compile(
    r"^[ \t]*(?:from[ \t]+(?P<base>\.*[\w.]*)[ \t]+import[ \t]+\(?(?P<names>[^#\n]*)|import[ \t]+(?P<mods>[^#\n]+))",
    re.MULTILINE,
)


def _imports_from_text(source: str, module: str, is_package: bool):
    """The modules a file imports and the names its unindented imports bind, read from its
    text alone (for files that are not parsed): ``(modules, exports)``."""
    from ..semantic.gate import resolve_relative

    found = set()
    exports = {}
    for match in _IMPORT_LINE.finditer(source):
        top_level = not match.group(0)[:1].isspace()
        if match.group("mods"):
            for part in match.group("mods").split(","):
                name, _, alias = (p.strip() for p in part.strip().partition(" as "))
                if re.fullmatch(r"[\w.]+", name):
                    found.add(name)
                    if top_level and alias:
                        exports[alias] = name
            continue
        raw = match.group("base")
        level = len(raw) - len(raw.lstrip("."))
        base = resolve_relative(module, is_package, level, raw.lstrip("."))
        if base:
            found.add(base)
        for part in (match.group("names") or "").replace(")", "").split(","):
            name, _, alias = (p.strip() for p in part.strip().partition(" as "))
            if re.fullmatch(r"\w+", name):
                full = f"{base}.{name}" if base else name
                found.add(full)
                if top_level:
                    exports[alias or name] = full
    return tuple(sorted(found)), tuple(sorted(exports.items()))


def _members(*nodes: cst.ClassDef):
    """The names a class body defines (fields, class attributes, methods, properties), and
    its annotated fields: ``(members, fields)``."""
    out, fields = set(), set()
    for node in nodes:
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        for item in body:
            if isinstance(item, (cst.FunctionDef, cst.ClassDef)):
                out.add(item.name.value)
            elif isinstance(item, cst.SimpleStatementLine):
                for small in item.body:
                    if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                        out.add(small.target.value)
                        fields.add(small.target.value)
                    elif isinstance(small, cst.Assign):
                        out.update(t.target.value for t in small.targets if isinstance(t.target, cst.Name))
    return tuple(sorted(out)), tuple(sorted(fields))


def _classes_from_text(tree: ast.Module, module: str, imported: dict):
    """The module-level classes of a file that is not parsed, with their bases and their own
    ``__init__``'s parameters, and the names it defines: ``(classes, definitions)``. A model
    class in a file that mentions no precision (``class Net(Block)``) is still a model where
    another file builds and casts it. Read from CPython's ``ast`` (nothing runs)."""
    own = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))}
    prefix = f"{module}." if module else ""

    def qualified(base: ast.expr) -> Optional[str]:
        parts = []
        while isinstance(base, ast.Attribute):
            parts.append(base.attr)
            base = base.value
        if not isinstance(base, ast.Name):
            return None
        head = imported.get(base.id) or (f"{prefix}{base.id}" if base.id in own else None)
        return ".".join([head, *reversed(parts)]) if head else None

    classes = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        bases = tuple(q for q in map(qualified, node.bases) if q)
        init = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
        params = None
        if init is not None:
            names = [a.arg for a in (*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs)]
            params = tuple(names)
        members, fields = set(), set()
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                members.add(item.name)
            elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                members.add(item.target.id)
                fields.add(item.target.id)
            elif isinstance(item, ast.Assign):
                members.update(t.id for t in item.targets if isinstance(t, ast.Name))
        classes.append(ClassFact(f"{prefix}{node.name}", bases, (), params, tuple(sorted(members)), tuple(sorted(fields))))
    return tuple(classes), frozenset(own)


def _exports(index: ModuleIndex):
    """Module-level names bound to something defined elsewhere (imports, simple aliases),
    and the names of the module's own functions and classes."""
    exports = []
    definitions = set()
    own = f"{index.module_name}." if index.module_name else ""
    for name, bindings in index.root.assignments.items():
        if any(isinstance(b.statement, (cst.FunctionDef, cst.ClassDef)) for b in bindings):
            definitions.add(name)
            continue
        target = qualified_name(index, name, index.root)  # as an importer sees it: at the module's end
        if target is not None and target != f"{own}{name}":
            exports.append((name, target))
    return tuple(sorted(exports)), frozenset(definitions)


def _parse_error(source: str, path: str, exc: "cst.ParserSyntaxError") -> ParseError:
    """Where and why the file does not parse, in CPython's words when it agrees.

    LibCST's native parser often places the error at the start of a line; CPython's
    own parser names the exact column and a readable reason (``'(' was never closed``).
    """
    try:
        compile(source, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as err:
        if err.lineno:
            return ParseError(f"SyntaxError: {err.msg}", err.lineno, max((err.offset or 1) - 1, 0))
    except (ValueError, RecursionError, MemoryError):
        pass
    return ParseError(_first_line(exc.message), exc.raw_line, exc.raw_column)


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


def _statement_ends(index: ModuleIndex, upto: int):
    """Offsets just after each of the first ``upto`` top-level statements.

    Module code is its header followed by each statement's own code (leading
    comment lines and trailing newline included), so the offsets come from
    generating code for those statements only, without a positions pass.
    """
    module = index.module
    offset = sum(len(module.code_for_node(line)) for line in module.header)
    ends = []
    for stmt in module.body[:upto]:
        offset += len(module.code_for_node(stmt))
        ends.append(offset)
    return ends


# Top-level statements that do not end a module's import block for pycodestyle/ruff (E402):
# changes of sys.path and the environment made before the imports they affect.
_E402_EXEMPT = re.compile(r"^\s*(?:sys\.path\b|os\.environ\b|os\.putenv\b|os\.unsetenv\b)")
# Candidate names of a new capability probe, in order of preference.
PROBE_NAMES = ("BF16_OK", "NATIVE_BF16", "BF16_SUPPORTED")
# ... and of a cached probe function (a module that others import).
LAZY_PROBE_NAMES = ("bf16_ok", "native_bf16", "bf16_supported")
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) or frozenset(
    "abc argparse ast asyncio collections contextlib copy dataclasses functools glob importlib io itertools "
    "json logging math os pathlib pickle random re shutil subprocess sys tempfile time typing warnings".split()
)


def _import_block(index: ModuleIndex) -> int:
    """The index of the last top-level statement of the module's import block (-1: none).

    The block is what pycodestyle's E402 treats as the top of the file: the docstring, the
    imports, ``try:``/``if``/``with`` blocks of imports (``try: import yaml`` / ``except
    ImportError: yaml = None``), and ``sys.path`` / ``os.environ`` changes between imports.
    Code inserted after it (the capability probe) never pushes a user's import below code.
    A block is only stepped over when it holds no call that a fix could rewrite.
    """
    body = index.module.body
    last = -1
    for i, stmt in enumerate(body):
        if (i == 0 and _is_docstring(stmt)) or _is_import_line(stmt):
            last = i
        elif isinstance(stmt, (cst.If, cst.Try, cst.With)) and _only_setup(stmt):
            if any(isinstance(n, (cst.Import, cst.ImportFrom)) for n in _nodes(stmt)):
                last = i
        elif isinstance(stmt, cst.SimpleStatementLine) and _E402_EXEMPT.match(index.module.code_for_node(stmt).lstrip("\n")):
            continue
        elif _is_ipython_line(index, stmt):
            continue  # `%pip install x` / `!nvidia-smi` in a notebook: no code for E402 either
        else:
            break
    return last


def _is_ipython_line(index: ModuleIndex, stmt: cst.CSTNode) -> bool:
    """A notebook's IPython line, as the notebook reader stands it in (``notebook.PLACEHOLDER``)."""
    from ..workspace.notebook import PLACEHOLDER

    return isinstance(stmt, cst.SimpleStatementLine) and index.module.code_for_node(stmt).strip().endswith(PLACEHOLDER)


def _only_setup(block: cst.CSTNode) -> bool:
    """Whether a compound statement holds only imports, constants and exempt setup (no call
    outside ``sys.path``/``os.environ``, no definitions): nothing a fix could rewrite."""
    nodes = _nodes(block)
    if any(isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.For, cst.While, cst.Lambda)) for n in nodes):
        return False
    for line in (n for n in nodes if isinstance(n, cst.SimpleStatementLine)):
        for small in line.body:
            if isinstance(small, (cst.Import, cst.ImportFrom, cst.Pass, cst.Raise)):
                continue
            code = cst.Module([]).code_for_node(small)
            if _E402_EXEMPT.match(code):
                continue
            if any(isinstance(n, cst.Call) for n in _nodes(small)):
                return False
    return True


def _nodes(root: cst.CSTNode) -> list:
    """``root`` and every node below it (the index's own child order)."""
    out, todo = [], [root]
    while todo:
        node = todo.pop()
        out.append(node)
        todo.extend(children(node))
    return out


def _probe_name(source: str, names: Tuple[str, ...] = PROBE_NAMES) -> str:
    """A name for a new probe that no binding or use in the module has (a user's own
    ``BF16_OK = args.bf16`` is never shadowed)."""
    for name in names:
        if not re.search(rf"\b{name}\b", source):
            return name
    n = 2
    while re.search(rf"\b{names[0]}_{n}\b", source):
        n += 1
    return f"{names[0]}_{n}"


def _import_line(index: ModuleIndex, stmt: cst.SimpleStatementLine, start: int, end: int) -> ImportLine:
    """An import line with its isort section and sort key. In a notebook, an import that opens
    a cell starts after the cell's boundary: an import put before it lands in that cell, not at
    the end of the one above (an install cell)."""
    from ..workspace.notebook import BOUNDARY

    marker = BOUNDARY.split("{", 1)[0]
    boundary = index.source.rfind(marker, start, index.span(stmt.body[0]).start)
    if boundary >= 0:
        start = index.source.index("\n", boundary) + 1
    small = stmt.body[0]
    code = cst.Module([]).code_for_node
    if isinstance(small, cst.ImportFrom):
        name = code(small.module) if small.module is not None else ""
        section = "local" if small.relative else None
    else:
        name = code(small.names[0].name)
        section = None
    top = name.split(".")[0]
    if section is None:
        section = "future" if top == "__future__" else "stdlib" if top in _STDLIB else "third"
    following = index.source[end : end + 2]
    blank = not following or following.startswith(("\n", "\r\n"))
    return ImportLine(start, end, section, isinstance(small, cst.Import), name.lower(), blank)


def _layout(index: ModuleIndex, evaluator: Evaluator) -> Layout:
    body = index.module.body
    last_header = _import_block(index)
    torch_import = next(
        (
            i
            for i, stmt in enumerate(body)
            if _is_import_line(stmt)
            and any(isinstance(s, cst.Import) and any(a.evaluated_name == "torch" for a in s.names) for s in stmt.body)
        ),
        -1,
    )
    if torch_import > last_header:
        # `import torch` below code (a later notebook cell): the probe goes after the imports
        # that follow it too, never between two imports (E402, per cell in a notebook)
        while torch_import + 1 < len(body) and (
            _is_import_line(body[torch_import + 1]) or _is_ipython_line(index, body[torch_import + 1])
        ):
            torch_import += 1
    ends = _statement_ends(index, max(last_header, torch_import) + 1)
    header = "".join(index.module.code_for_node(h) for h in index.module.header)
    insert_at = ends[last_header] if last_header >= 0 else 0
    torch_import_end = ends[torch_import] if torch_import >= 0 else None
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
        if not evaluator.consults(value, index.root, set())[0]:
            continue  # cheap check first: only capability-derived values can be probes
        vals = evaluator.values(value, index.root)
        boolean = isinstance(value, (cst.Comparison, cst.BooleanOperation, cst.UnaryOperation)) or (
            isinstance(value, cst.Call) and (index.qualify(value.func) or "").rsplit(".", 1)[-1].startswith("is_")
        )
        if boolean and vals and all(v.kind == CAPABILITY or (v.kind == COND and v.capability) for v in vals):
            probes.append(ProbeFact(name, index.span(assignments[0].statement)))
    for qualname, function in index.functions.items():
        # a cached probe function (`def bf16_ok(): return ... >= 8`, what a fix writes in a
        # module others import): reused as `bf16_ok()`
        if function.parent is not index.root or function.params or len(function.returns) != 1:
            continue
        if function.returns[0][0] is None:
            continue
        value = function.returns[0][0]
        if not evaluator.consults(value, function, set())[0]:
            continue
        vals = evaluator.values(value, function)
        if vals and all(v.kind == CAPABILITY or (v.kind == COND and v.capability) for v in vals):
            probes.append(ProbeFact(f"{qualname.rsplit('.', 1)[-1]}()", index.span(function.node)))
    newline = "\r\n" if "\r\n" in index.source[:2000] else "\n"
    following = index.source[insert_at : insert_at + 2]
    blank_after = following in ("", "\n", "\r\n") or following.startswith("\n")
    rest = index.source[insert_at:]
    blank_lines = len(rest) - len(rest.lstrip("\r\n"))
    blank_lines = (rest[:blank_lines].count("\n")) if rest.strip() else 2
    return Layout(
        insert_at,
        torch_name,
        tuple(sorted(probes, key=lambda p: p.span.start)),
        newline,
        blank_after,
        _probe_name(index.source),
        tuple(
            _import_line(index, body[i], ends[i - 1] if i else len(header), ends[i])
            for i in range(last_header + 1)
            if _is_import_line(body[i])
        ),
        _probe_name(index.source, LAZY_PROBE_NAMES),
        next((local for local, full in index.imports.aliases.items() if full == "functools"), ""),
        blank_lines,
    )
