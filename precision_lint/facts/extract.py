"""Text of one file → :class:`ModuleFacts`.

Steps: honour ``# precision-lint: skip-file``; skip analysis of a file whose unit
imports none of the libraries the rules are about (``gate.py``); parse once with CPython's
``ast`` (the tree that judged whether the file compiles is the one analysed); build the index;
record imports, classes, layout and ``# noqa`` comments; then let every domain extractor in
``facts/extractors`` add its section.
"""
from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import sys
from functools import lru_cache
from typing import TYPE_CHECKING, List, Optional, Tuple

from ..workspace import fstring_mask
from ..workspace.cache import collector_paused
from ..workspace.notebook import CELL_ERROR_PREFIX, CELL_UNREAD_PREFIX, boundary_lines, is_notebook_text
from . import extractors as _extractors_pkg
from ..semantic import syntax
from ..semantic.main_block import main_block_lines
from ..semantic.programs import reads_command_line, session_names, top_level_acts, top_names
from ..semantic.queries import name_for, position, qualified_name
from .model import DEFERRED, STAR_EXPORT, ClassFact, ImportLine, Layout, ModuleFacts, ParseError, ProbeFact
from ..semantic.records import run_by_python_note
from ..semantic.values import CAPABILITY, COND, awaits_join, join_questions
from .._regex import lazy

if TYPE_CHECKING:
    from ..semantic.evaluate import Evaluator
    from ..semantic.index import ModuleIndex


def _load_analysis() -> None:
    """The analysis, imported when the first file is analysed: a run that analyses none (every
    file answered from the cache, or none in a unit that imports a library the rules are about)
    never loads it. Bound as this module's globals, which the helpers below read."""
    if "build_index" in globals():
        return
    from ..semantic.calls import call_edges, call_records, recorded_callees, registered_commands, return_summaries
    from ..semantic.evaluate import Evaluator
    from ..semantic.index import ModuleIndex, build_index, nodes_of

    globals().update(
        call_edges=call_edges, call_records=call_records, registered_commands=registered_commands,
        return_summaries=return_summaries, recorded_callees=recorded_callees,
        Evaluator=Evaluator, ModuleIndex=ModuleIndex, build_index=build_index, nodes_of=nodes_of,
    )

SKIP_FILE = re.compile(r"#\s*precision-lint:\s*skip-file\b", re.IGNORECASE)
NOQA = lazy(
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
        match = NOQA().search(line)
        if match:
            codes = match.group("codes")
            out[lineno] = frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c) if codes else None
    return out


def stated_requirements(source: str, path: str) -> tuple:
    """The versions ``source`` states itself (``versions.in_file_requirements``), named by
    its file's name as its findings word them; read whatever the gate decides and whether it
    compiles (a script that pins and imports: its pins hold for what it imports)."""
    if "require_version" not in source and "check_min_version" not in source and not ("pip" in source and "install" in source):
        return ()
    import os

    from ..workspace.versions import in_file_requirements

    return tuple(in_file_requirements(source, os.path.basename(path)))


def read_imports(source: str, path: str, module: str = "", is_package: bool = False):
    """The modules a text imports (``gate.imported_modules``: None when it does not parse) and
    CPython's tree and verdict of it (``syntax.cpython_tree``'s), from one parse: the engine
    reads a new text's imports for the gate and its facts together, and hands the tree on to
    :func:`extract_facts`. A notebook's cells are compiled as IPython compiles them, apart from
    the gate's reading of the text: its tree is not handed on (None)."""
    from ..semantic import gate

    if is_notebook_text(path, source):
        return gate.imported_modules(source, module, is_package), None
    tree, error = syntax.parsed_tree(source, path)
    if error is not None:
        masked = ipython_masked(source, error)
        if masked is not None:  # parsed again by extract_facts, which records the refusal
            return gate.imported_modules(masked[0], module, is_package, masked[1]), None
        readable = fstring_mask.masked(source) if fstring_mask.refused_for_fstring(error.message) else None
        if readable is not None:  # masked again by extract_facts
            return gate.imported_modules(readable, module, is_package), None
    imports = gate.imported_modules(source, module, is_package, tree) if tree is not None else None
    return imports, ((None, error) if error is not None else (tree, None))


# a shebang's interpreter that is a shell (`#!/bin/bash`, `#!/usr/bin/env zsh`)
_SHELLS = frozenset({"sh", "bash", "zsh", "ksh", "dash", "fish", "csh", "tcsh"})


def shell_script(source: str) -> Optional[str]:
    """The shell a text's shebang names (``#!/bin/bash``: "bash"), or None: a shell script kept
    with a ``.py`` name (a SLURM job beside the code), which Python never runs."""
    if not source.startswith("#!"):
        return None
    words = source[2:].split("\n", 1)[0].split()
    if words and words[0].rsplit("/", 1)[-1] == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
    name = words[0].rsplit("/", 1)[-1] if words else ""
    return name if name in _SHELLS else None


def ipython_masked(source: str, error: ParseError) -> Optional[Tuple[str, ast.AST]]:
    """A ``.py`` file of notebook code (cells pasted into it, or exported by hand: ``!pip install
    -q peft transformers`` among its lines), which CPython refuses at an IPython line: its text
    with each IPython line made a statement of the same length that does nothing
    (``pass#ip install ...``), and CPython's tree of that, where it compiles. The file runs only
    where IPython runs it, and MP000 says so; its other lines are what such a run executes, and
    are checked (at their own lines and columns: nothing else moves). None where the refusal is
    not at an IPython line, or the file does not compile without them either."""
    from ..workspace.notebook import quieted_ipython_lines

    if error.kind != "syntax":
        return None
    masked, ipython = quieted_ipython_lines(source)
    if error.line - 1 not in ipython:
        return None
    tree, refused = syntax.cpython_tree(masked, "<ipython>")
    return (masked, tree) if refused is None else None


def _ipython_refusal(error: ParseError, tree: ast.AST) -> ParseError:
    """What MP000 may say of a ``.py`` file CPython refuses only at its IPython lines
    (``!pip install -q peft``). Such lines are written for IPython: the file is a notebook's
    cells kept as a file, fine where it is meant to run, unless Python runs it as a program:
    an ``if __name__ == "__main__":`` block or a read of its command line (``parse_args()``,
    ``sys.argv``) says so here (kind "syntax", MP000); otherwise it is of kind "ipython", which
    MP000 reports only where the project runs the file with Python (an import of it, a
    launcher's ``python file.py``: ``rules/mp000_syntax_error.py``)."""
    if main_block_lines(tree):
        why = "its `if __name__ == \"__main__\":` block runs it as a program"
    elif reads_command_line(tree):
        why = "it reads the command line of a program run as `python file.py`"
    else:
        return ParseError(error.message, error.line, error.col, "ipython")
    return ParseError(error.message + run_by_python_note(why), error.line, error.col)


def exported_notebook(source: str) -> bool:
    """Whether the file is a notebook saved as Python by Colab ("Download .py": its docstring
    says "Automatically generated by Colab", and its ``!pip`` lines are kept as they were): a
    record of a notebook, which IPython runs, not a script with a syntax error."""
    head = source[:2000]
    return "Automatically generated by Colab" in head


def extract_facts(
    source: str,
    path: str,
    module: str = "",
    is_package: bool = False,
    root: str = "",
    analyse: bool = True,
    parsed: Optional[Tuple[Optional[ast.AST], Optional[ParseError]]] = None,
    summaries: bool = True,
    only_summaries: bool = False,
) -> ModuleFacts:
    """The facts of one file. ``analyse`` (see ``gate.py``) is False for a file of no unit that
    imports a library the rules are about: only its imports, exports and classes are read.
    ``parsed``: ``syntax.cpython_tree``'s answer for the text, where :func:`read_imports` has
    it already (the text is parsed once). Without ``summaries``, its call records and return
    summaries are left ``DEFERRED`` (``facts/model.py``): worked out when the join asks; with
    ``only_summaries``, they alone are (what a module that deferred them is asked for)."""
    facts = ModuleFacts(path=path, module=module, is_package=is_package, root=root)
    facts.noqa = parse_noqa(source)
    facts.requirements = stated_requirements(source, path)
    if SKIP_FILE.search(source):
        facts.skip_file = True
        return facts
    # CPython's verdict first: a file it refuses is MP000 at once, whatever it mentions
    if parsed is not None and not is_notebook_text(path, source):
        tree, error = parsed
    elif is_notebook_text(path, source):  # each cell compiled on its own, as IPython does
        tree, error = syntax.cpython_tree(source, path, syntax.CELL_FLAGS, boundary_lines(source))
    else:
        tree, error = syntax.cpython_tree(source, path)
    if error is not None and not is_notebook_text(path, source):
        masked = ipython_masked(source, error)
        if masked is not None:
            if not exported_notebook(source):  # (an export of a notebook says IPython runs it)
                facts.cell_errors = (_ipython_refusal(error, masked[1]),)
            facts.requirements += _installed_by_ipython_lines(source, path)
            source, (tree, error) = masked[0], (masked[1], None)
    if error is not None and fstring_mask.refused_for_fstring(error.message) and not is_notebook_text(path, source):
        readable = fstring_mask.masked(source)  # Python 3.12's f-strings (PEP 701), each put aside
        if readable is not None:
            source, (tree, error) = readable, syntax.cpython_tree(readable, path)
    if error is not None:
        shell = shell_script(source) if error.kind == "syntax" else None
        if shell is not None:  # a SLURM job named `.py`: what runs it is the shell (MP002, not MP000)
            error = ParseError(f"a {shell} script (its first line names {shell}), not Python", 1, 0, "unsupported")
        elif error.kind == "syntax" and syntax.newer_fstrings(source, error):
            error = syntax.newer_fstrings_unread(error)
        facts.parse_error = error
        return facts
    facts.main_lines = main_block_lines(tree)
    facts.cell_errors = facts.cell_errors or notebook_cell_errors(source, path)
    facts.acts = top_level_acts(tree)
    if not is_notebook_text(path, source):  # (a notebook is the session itself)
        facts.session_names = session_names(tree)
    facts.top_names = top_names(tree)
    facts.top_imports = _top_imports(tree, module, is_package)
    if not analyse:
        # Not parsed, but its imports still link the files around it (a package
        # `__init__.py` that re-exports `load_model` from the module that loads fp16).
        facts.imports, facts.exports = _imports_from_text(source, module, is_package)
        facts.classes, facts.definitions = _classes_from_text(tree, module, dict(facts.exports))
        return facts
    # the tree CPython judged the file by is the one analysed (a notebook's, compiled with
    # CELL_FLAGS, may hold top-level `await`): the text is never parsed again. The index walks
    # it without recursion, however deep, and says how deep it is
    _load_analysis()
    with collector_paused():  # its objects all live until the file is done (cache.py)
        return _analyse(facts, source, module, is_package, tree, summaries, only_summaries)


def _analyse(
    facts: ModuleFacts, source: str, module: str, is_package: bool, tree, summaries: bool = True, only_summaries: bool = False
) -> ModuleFacts:
    """:func:`extract_facts` of a file CPython compiles and the gate analyses: its index, then
    its facts."""
    try:
        index = build_index(source, module, is_package, tree, session=is_notebook_text(facts.path, source))
    except (RecursionError, ValueError) as exc:  # pathological input; still never a traceback
        message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        facts.parse_error = ParseError(f"the analysis failed on it ({message}); it was not checked", 1, 0, "unsupported")
        return facts
    depth = index.depth + 1  # CPython's tree holds one level more at most (a context, an operator)
    if depth > syntax.SHALLOW:  # a deep file: CPython's own depth, and where it is deepest
        depth, line, col = syntax.nesting_depth(tree)
        if depth > syntax.MAX_DEPTH:
            facts.parse_error = syntax.too_deep(depth, line, col)
            return facts
    try:
        return syntax.run_deep(depth, _extract_parsed, facts, index, summaries, only_summaries)
    finally:
        index.dismantle()  # freed by reference counts, not by the collector (``ModuleIndex.dismantle``)


def _extract_parsed(facts: ModuleFacts, index: ModuleIndex, summaries: bool = True, only_summaries: bool = False) -> ModuleFacts:
    """The facts of a file CPython compiles, read from its index (``only_summaries``: its
    call records and return summaries alone, as the whole extraction makes them)."""
    facts.parsed = True
    evaluator = Evaluator(index)
    if only_summaries:  # what a module that deferred them is asked for: nothing else is read
        facts.calls = call_records(index, evaluator)
        facts.call_callees = tuple(record.callee for record in facts.calls)
        facts.returns = return_summaries(index, evaluator)
        return facts
    facts.imports = tuple(sorted(m for m in index.imports.imported_modules if m))
    facts.type_checking_imports = index.type_checking_imports()
    facts.conditional_imports = index.conditional_imports()
    facts.exports, facts.definitions = _exports(index)
    if summaries:
        facts.calls = call_records(index, evaluator)
        facts.call_callees = tuple(record.callee for record in facts.calls)
    else:  # what the join indexes the records by is known without them
        facts.calls = facts.returns = DEFERRED
        facts.call_callees = recorded_callees(index)
    facts.functions = tuple(index.functions)
    facts.call_edges = call_edges(index)
    facts.registered = registered_commands(index)
    if summaries:
        facts.returns = return_summaries(index, evaluator)
    facts.classes = tuple(
        ClassFact(c.qualname, c.bases, tuple(sorted(c.self_attrs)), c.init_params, *_members(index, c.node, *c.more_nodes))
        for c in index.classes.values()
    )
    facts.layout = _layout(index, evaluator)
    for extractor in extractors():
        try:
            facts.sections[extractor.SECTION] = extractor.extract(index, evaluator)
        except Exception as exc:  # a bug of ours: the engine names the extractor (MP003)
            exc.precision_lint_stage = f"extractor {extractor.SECTION}"
            raise
    for extractor in extractors():
        # a section whose answers are asked only about other sections' sites: worked out for them
        finish = getattr(extractor, "finish", None)
        if finish is not None and facts.sections.get(extractor.SECTION) is not None:
            try:
                facts.sections[extractor.SECTION] = finish(facts.sections[extractor.SECTION], facts.sections, index, evaluator)
            except Exception as exc:
                exc.precision_lint_stage = f"extractor {extractor.SECTION}"
                raise
    facts.to_join = frozenset(name for name, value in facts.sections.items() if awaits_join(value))
    if facts.to_join:
        params, returns = join_questions([facts.sections[name] for name in sorted(facts.to_join)])
        facts.asks = (tuple(sorted(params)), tuple(sorted(returns)))
    return facts


_CELL_ERROR = lazy(r"^(" + re.escape(CELL_ERROR_PREFIX) + "|" + re.escape(CELL_UNREAD_PREFIX) + r")(\d+): (.*)$", re.MULTILINE)


def _installed_by_ipython_lines(source: str, path: str) -> tuple:
    """The pins of a file's ``!pip install transformers==4.30.0`` lines, as a notebook's: what
    the IPython session that runs it installs."""
    import os

    from ..workspace.notebook import line_kinds
    from ..workspace.versions import pip_requirements

    every = source.splitlines()
    lines = [every[i].strip().lstrip("!%") for i, kind in line_kinds(every) if kind == "ipython"]
    return tuple(pip_requirements(lines, os.path.basename(path)))


def notebook_cell_errors(source: str, path: str) -> Tuple[ParseError, ...]:
    """The code cells of a notebook that do not compile (``notebook.to_python`` masks each and
    leaves the error on the line it is on): each is its own MP000, the other cells are checked.
    A cell refused only for a Python 3.12 f-string is one of kind ``unsupported``: not read (MP002)."""
    if (CELL_ERROR_PREFIX not in source and CELL_UNREAD_PREFIX not in source) or not is_notebook_text(path, source):
        return ()
    out = []
    for match in _CELL_ERROR().finditer(source):
        line = source.count("\n", 0, match.start()) + 1
        kind = "syntax" if match.group(1) == CELL_ERROR_PREFIX else "unsupported"
        out.append(ParseError(match.group(3), line, int(match.group(2)), kind))
    return tuple(out)


_IMPORT_LINE = lazy(
    r"^[ \t]*(?:from[ \t]+(?P<base>\.*[\w.]*)[ \t]+import[ \t]+\(?(?P<names>[^#\n]*)|import[ \t]+(?P<mods>[^#\n]+))",
    re.MULTILINE,
)


def _top_imports(tree, module: str, is_package: bool) -> Tuple[str, ...]:
    """What the join follows of a module's unconditional top-level imports
    (``names.unconditional_imports``): the library modules a release removed (``torch._six``)
    and whatever may be a module of the tree (not the standard library's, nor a known
    library's): the versions a module targets end where a module it must import is gone
    (``project/removed_imports.py``)."""
    from ..knowledge import removed_module
    from ..semantic.names import LIBRARIES, unconditional_imports

    return tuple(
        m for m in unconditional_imports(tree, module, is_package)
        if not (m.partition(".")[0] in LIBRARIES or m.partition(".")[0] in sys.stdlib_module_names) or removed_module(m) is not None
    )


def _imports_from_text(source: str, module: str, is_package: bool):
    """The modules a file imports and the names its unindented imports bind, read from its
    text alone (for files that are not parsed): ``(modules, exports)``."""
    from ..semantic.gate import resolve_relative

    found = set()
    exports = {}
    for match in _IMPORT_LINE().finditer(source):
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


def _members(index: ModuleIndex, *nodes: ast.ClassDef):
    """The names a class body defines (fields, class attributes, methods, properties), and
    its annotated fields: ``(members, fields)``. Only an indented body is read: ``class A: x = 1``
    on one line defines none here (kept from the analysis on LibCST's tree, which has no
    indented block there)."""
    out, fields = set(), set()
    for node in nodes:
        if _starts_line(index, node.body[0]):
            _add_members(node.body, out, fields)
    return tuple(sorted(out)), tuple(sorted(fields))


def _add_members(body, members: set, fields: set) -> None:
    """Add the names a class body defines to ``members``, its annotated fields to ``fields``."""
    for item in body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            members.add(item.name)
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            members.add(item.target.id)
            fields.add(item.target.id)
        elif isinstance(item, ast.Assign):
            members.update(t.id for t in item.targets if isinstance(t, ast.Name))


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
        _add_members(node.body, members, fields)
        classes.append(ClassFact(f"{prefix}{node.name}", bases, (), params, tuple(sorted(members)), tuple(sorted(fields))))
    return tuple(classes), frozenset(own)


def _exports(index: ModuleIndex):
    """Module-level names bound to something defined elsewhere (imports, simple aliases),
    and the names of the module's own functions and classes."""
    exports = []
    definitions = set()
    own = f"{index.module_name}." if index.module_name else ""
    for name, bindings in index.root.assignments.items():
        if any(isinstance(b.statement, _DEFINITIONS) for b in bindings):
            definitions.add(name)
            continue
        target = qualified_name(index, name, index.root)  # as an importer sees it: at the module's end
        if target is not None and target != f"{own}{name}":
            exports.append((name, target))
    # `from .helpers import *` at the top: the names that module binds are this one's too
    # (STAR_EXPORT entries, one per module, looked in by the join's name resolution)
    from ..semantic.gate import resolve_relative

    for node in index.module.body:
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            base = resolve_relative(index.module_name, index.imports.is_package, node.level, node.module or "")
            if base:
                exports.append((f"{STAR_EXPORT}{base}", base))
    return tuple(sorted(exports)), frozenset(definitions)


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# `match` (Python 3.10+) and `try ... except*` (3.11+), where this Python has them: Python 3.9
# is still supported, and its `ast` has neither class.
_MATCH = tuple(c for c in (getattr(ast, "Match", None),) if c is not None)
_TRY = (ast.Try, *(c for c in (getattr(ast, "TryStar", None),) if c is not None))
# Statements that hold blocks of statements; every other statement is a simple one.
_COMPOUND = (
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
    ast.With, ast.AsyncWith, *_TRY, *_MATCH,
)
# An "empty line" between statements: whitespace and at most a comment.
_EMPTY_LINE = lazy(r"[ \t\f]*(?:#[^\r\n]*)?")


class _ModuleText:
    """The module's top-level statements as lines of code, and where each one's code lies.

    The layout a fix writes into is read from the text and CPython's positions: a *line* is one
    top-level compound statement, or
    the simple statements written on one line (``import os; import sys``); its code starts
    after the code of the line before it (so it owns the comment and blank lines above it:
    ``# config\nimport yaml``) or, for the first line, after the module's header (every comment
    and blank line above it), and ends after its own newline (with its trailing comment). A
    compound statement also owns the comment lines after its last block that are indented at
    least as deep as that block (``    # end of the if``), and the blank lines among them."""

    def __init__(self, source: str, body) -> None:
        self.source = source
        lines: List[list] = []
        for stmt in body:
            if (
                lines
                and not isinstance(stmt, _COMPOUND)
                and not isinstance(lines[-1][-1], _COMPOUND)
                and lines[-1][-1].end_lineno == stmt.lineno  # `a; b`: one logical line
            ):
                lines[-1].append(stmt)
            else:
                lines.append([stmt])
        self.lines = lines
        self._starts = [0]  # where each physical line starts, found as far as needed
        self._cr = "\r" in source
        self._ends: List[int] = []

    # --- physical lines ------------------------------------------------------------
    def line_start(self, lineno: int) -> int:
        """The offset where physical line ``lineno`` (1-based) starts; the text's length past
        its last line. Lines end at ``\n``, ``\r\n`` and a lone ``\r``, as Python's tokenizer
        splits them."""
        starts, source = self._starts, self.source
        while len(starts) < lineno:
            at = starts[-1]
            if at >= len(source):
                return len(source)
            n = source.find("\n", at)
            r = source.find("\r", at, n if n >= 0 else len(source)) if self._cr else -1
            if r >= 0:
                starts.append(r + 2 if source.startswith("\r\n", r) else r + 1)
            else:
                starts.append(n + 1 if n >= 0 else len(source))
        return starts[lineno - 1]

    def _line_text(self, lineno: int) -> str:
        return self.source[self.line_start(lineno) : self.line_start(lineno + 1)].rstrip("\r\n")

    # --- lines of code -------------------------------------------------------------
    def header_end(self) -> int:
        """Where the module's header (the comment and blank lines above its first statement)
        ends."""
        if not self.lines:
            return len(self.source)
        first = self.lines[0][0]
        decorators = getattr(first, "decorator_list", None)
        return self.line_start(decorators[0].lineno if decorators else first.lineno)

    def end(self, i: int) -> int:
        """The offset just after the code of line ``i`` (see the class)."""
        while len(self._ends) <= i:
            self._ends.append(self._end_of(self.lines[len(self._ends)]))
        return self._ends[i]

    def start(self, i: int) -> int:
        return self.end(i - 1) if i else self.header_end()

    def code(self, i: int) -> str:
        """Line ``i``'s code, with the comment and blank lines above it and its newline."""
        return self.source[self.start(i) : self.end(i)]

    def _end_of(self, line: list) -> int:
        last = line[-1]
        end = self.line_start(last.end_lineno + 1)
        block = _last_block(self, last) if isinstance(last, _COMPOUND) else None
        if not block or not self.starts_line(block[0]):
            return end  # a simple line, or a last block on its header's line (`else: pass`)
        first = block[0]
        decorators = getattr(first, "decorator_list", None)
        indent = self._line_text(decorators[0].lineno if decorators else first.lineno)
        indent = indent[: len(indent) - len(indent.lstrip(" \t\f"))]
        lineno = last.end_lineno + 1
        while self.line_start(lineno) < len(self.source):
            text = self._line_text(lineno)
            if not _EMPTY_LINE().fullmatch(text):
                break  # the next statement (or the next clause of an enclosing one)
            lineno += 1
            if text.startswith(indent):
                end = self.line_start(lineno)  # the block's own trailing comment
        return end

    def starts_line(self, stmt: ast.stmt) -> bool:
        """Whether a statement is the first code of its line (a block's statement written
        indented under its header, not after the header's colon)."""
        if getattr(stmt, "decorator_list", None):
            return True  # a decorator starts its line
        start = self.line_start(stmt.lineno)
        # whitespace before it is ASCII, where byte and character columns agree; anything else
        # before it (`if x: `) is not whitespace however the column is counted
        return not self.source[start : start + stmt.col_offset].strip(" \t\f")


def _last_block(text: _ModuleText, stmt: ast.stmt):
    """The statements of a compound statement's last block (an ``elif``'s own last block)."""
    if isinstance(stmt, ast.If):
        orelse = stmt.orelse
        if len(orelse) == 1 and isinstance(orelse[0], ast.If):
            elif_ = orelse[0]
            at = text.line_start(elif_.lineno) + elif_.col_offset
            if text.source.startswith("elif", at):
                return _last_block(text, elif_)
        return orelse or stmt.body
    if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
        return stmt.orelse or stmt.body
    if isinstance(stmt, _TRY):
        return stmt.finalbody or stmt.orelse or stmt.handlers[-1].body
    if isinstance(stmt, _MATCH):
        return stmt.cases[-1].body
    return stmt.body



def _starts_line(index: ModuleIndex, stmt: ast.stmt) -> bool:
    """Whether ``stmt`` is the first code on its line: its block is indented under its header,
    not written after the header's colon (``class A: x = 1``)."""
    span = index.span(stmt)
    return not index.source[span.start - span.col : span.start].strip(" \t\f")


def _is_import_line(line: list) -> bool:
    return all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in line)


def _is_docstring(line: list) -> bool:
    return (
        len(line) == 1
        and isinstance(line[0], ast.Expr)
        and isinstance(line[0].value, ast.Constant)
        and isinstance(line[0].value.value, (str, bytes))
    )


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


def _import_block(index: ModuleIndex, text: _ModuleText) -> int:
    """The index of the last top-level line of the module's import block (-1: none).

    The block is what pycodestyle's E402 treats as the top of the file: the docstring, the
    imports, ``try:``/``if``/``with`` blocks of imports (``try: import yaml`` / ``except
    ImportError: yaml = None``), and ``sys.path`` / ``os.environ`` changes between imports.
    Code inserted after it (the capability probe) never pushes a user's import below code.
    A block is only stepped over when it holds no call that a fix could rewrite.
    """
    last = -1
    for i, line in enumerate(text.lines):
        stmt = line[0]
        if (i == 0 and _is_docstring(line)) or _is_import_line(line):
            last = i
        elif isinstance(stmt, (ast.If, ast.Try, ast.With, ast.AsyncWith)) and _only_setup(index, text, stmt):
            if any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in nodes_of(stmt)):
                last = i
        elif not isinstance(stmt, _COMPOUND) and _E402_EXEMPT.match(text.code(i).lstrip("\n")):
            continue
        elif _is_ipython_line(text, i):
            continue  # `%pip install x` / `!nvidia-smi` in a notebook: no code for E402 either
        else:
            break
    return last


def _is_ipython_line(text: _ModuleText, i: int) -> bool:
    """A notebook's IPython line, as the notebook reader stands it in (``notebook.PLACEHOLDER``)."""
    from ..workspace.notebook import PLACEHOLDER

    return not isinstance(text.lines[i][0], _COMPOUND) and text.code(i).strip().endswith(PLACEHOLDER)


def _only_setup(index: ModuleIndex, text: _ModuleText, block: ast.stmt) -> bool:
    """Whether a compound statement holds only imports, constants and exempt setup (no call
    outside ``sys.path``/``os.environ``, no definitions): nothing a fix could rewrite. The
    statements of its indented blocks are read; a block written after its header's colon
    (``except ImportError: yaml = None``) is not (kept from the analysis on LibCST's tree,
    which has no indented block there)."""
    nodes = list(nodes_of(block))
    if any(isinstance(n, _NOT_SETUP) for n in nodes):
        return False
    for node in nodes:
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if not isinstance(statements, list) or not statements or not isinstance(statements[0], ast.stmt):
                continue
            if not text.starts_line(statements[0]):
                continue
            for small in statements:
                if isinstance(small, _COMPOUND) or isinstance(small, (ast.Import, ast.ImportFrom, ast.Pass, ast.Raise)):
                    continue
                if _E402_EXEMPT.match(index.text(small)):
                    continue
                if any(isinstance(n, ast.Call) for n in nodes_of(small)):
                    return False
    return True


_NOT_SETUP = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.AsyncFor, ast.While, ast.Lambda)


def _probe_name(source: str, names: Tuple[str, ...] = PROBE_NAMES) -> str:
    """A name for a new probe that no binding or use in the module has (a user's own
    ``BF16_OK = args.bf16`` is never shadowed)."""
    for name in names:  # (a name the text does not hold at all is not searched for as a word)
        if name not in source or not re.search(rf"\b{name}\b", source):
            return name
    n = 2
    while f"{names[0]}_{n}" in source and re.search(rf"\b{names[0]}_{n}\b", source):
        n += 1
    return f"{names[0]}_{n}"


def _import_line(index: ModuleIndex, line: list, start: int, end: int) -> ImportLine:
    """An import line with its isort section and sort key. In a notebook, an import that opens
    a cell starts after the cell's boundary: an import put before it lands in that cell, not at
    the end of the one above (an install cell)."""
    from ..workspace.notebook import BOUNDARY

    marker = BOUNDARY.split("{", 1)[0]
    small = line[0]
    boundary = index.source.rfind(marker, start, index.span(small).start)
    if boundary >= 0:
        start = index.source.index("\n", boundary) + 1
    if isinstance(small, ast.ImportFrom):
        name = small.module or ""
        section = "local" if small.level else None
    else:
        name = small.names[0].name
        section = None
    top = name.split(".")[0]
    if section is None:
        section = "future" if top == "__future__" else "stdlib" if top in _STDLIB else "third"
    following = index.source[end : end + 2]
    blank = not following or following.startswith(("\n", "\r\n"))
    return ImportLine(start, end, section, isinstance(small, ast.Import), name.lower(), blank)


def _layout(index: ModuleIndex, evaluator: Evaluator) -> Layout:
    text = _ModuleText(index.source, index.module.body)
    body = text.lines
    last_header = _import_block(index, text)
    torch_import = next(
        (
            i
            for i, line in enumerate(body)
            if _is_import_line(line)
            and any(isinstance(s, ast.Import) and any(a.name == "torch" for a in s.names) for s in line)
        ),
        -1,
    )
    if torch_import > last_header:
        # `import torch` below code (a later notebook cell): the probe goes after the imports
        # that follow it too, never between two imports (E402, per cell in a notebook)
        while torch_import + 1 < len(body) and (
            _is_import_line(body[torch_import + 1]) or _is_ipython_line(text, torch_import + 1)
        ):
            torch_import += 1
    insert_at = text.end(last_header) if last_header >= 0 else 0
    torch_import_end = text.end(torch_import) if torch_import >= 0 else None
    if torch_import_end is not None and torch_import_end > insert_at:
        insert_at = torch_import_end
    # the names the probe, written at insert_at, may spell torch and functools with: those bound
    # to them where it goes (an import written below it, or rebound above it, is no such name)
    after = next((s for s in index.module.body if index.span(s).start >= insert_at), None)
    at = position(index, after) if after is not None else None
    torch_name = name_for(index, "torch", index.root, at)
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
        boolean = isinstance(value, (ast.Compare, ast.BoolOp, ast.UnaryOp)) or (
            isinstance(value, ast.Call) and (index.qualify(value.func) or "").rsplit(".", 1)[-1].startswith("is_")
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
            _import_line(index, body[i], text.start(i), text.end(i))
            for i in range(last_header + 1)
            if _is_import_line(body[i])
        ),
        _probe_name(index.source, LAZY_PROBE_NAMES),
        name_for(index, "functools", index.root, at) or "",
        blank_lines,
    )
