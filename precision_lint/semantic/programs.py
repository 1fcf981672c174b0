"""Whether a module is written to be run, or only to be imported.

A function that nothing in the project calls still runs when something outside the project
calls it: a runner hands it over (``fire``, a notebook, a console script, pytest). The join
can only guess at such hand-overs for a module that *acts* when it runs: its top level calls
something (``main()``, ``fire.Fire(main)``, ``app()``, ``trainer.train()``), loops, or enters a
``with``, or it has an ``if __name__ == "__main__":`` block. A module whose top level only
imports, defines and assigns (a model library, a helpers module) does nothing by itself: its
uncalled functions run only when something names them (a console script in
``pyproject.toml``, ``workspace/declared.py``), never because the file exists. Judging them anyway
joined a library's unused training helper with whatever else the library holds.
"""
from __future__ import annotations

import ast

# top-level statements that only bind names (or guard imports): importing runs them, but they
# hand nothing over to be run
_BINDING = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Pass, ast.Global, ast.Delete, ast.Assert)


def top_level_acts(tree: ast.AST) -> bool:
    """Whether a module's top level does more than bind names (see the module docstring)."""
    return any(_acts(stmt) for stmt in getattr(tree, "body", ()))


def _acts(stmt: ast.stmt) -> bool:
    if isinstance(stmt, _BINDING):
        return False
    if isinstance(stmt, ast.Expr):
        return not isinstance(stmt.value, ast.Constant)  # a docstring acts on nothing
    if isinstance(stmt, ast.If):  # `if TYPE_CHECKING:`, a version switch of imports
        return any(_acts(s) for s in (*stmt.body, *stmt.orelse))
    if isinstance(stmt, ast.Try):  # `try: import x except ImportError: x = None`
        return any(_acts(s) for s in (*stmt.body, *stmt.orelse, *stmt.finalbody, *(s for h in stmt.handlers for s in h.body)))
    return True  # a loop, a `with`, a `match`, a raise at import


def session_names(tree: ast.AST) -> tuple:
    """The names a module's top level reads that nothing in the module binds and Python does not
    provide (``model``, ``tokenizer``, ``ds`` of a notebook's step kept as a file): such a module
    is a piece of a session, run after another piece bound them (it raises ``NameError`` alone),
    so what that piece imported is imported in its run too. ``()`` for a module that binds what
    it reads (nearly every module)."""
    import builtins

    bound, read = set(), []
    todo = list(getattr(tree, "body", ()))
    while todo:
        node = todo.pop()
        kind = type(node)
        declared = _declared(node)
        if declared is not None:
            # (a def's or class's body is its own scope, not walked: a `global x` there is read as
            # unbound here, which only makes the module a session piece where its folder's files bind x)
            bound.update(declared)
            todo.extend(getattr(node, "decorator_list", ()))
            continue
        if kind is ast.Lambda:
            continue  # its own parameters
        if kind is ast.Name:
            (bound.add if type(node.ctx) is not ast.Load else read.append)(node.id)
            continue
        if kind is ast.arg:
            bound.add(node.arg)
        elif kind is ast.ExceptHandler or kind.__name__ in ("MatchAs", "MatchStar", "MatchMapping"):
            # `except E as err`, `case Point(x=px)`/`case [*rest]`/`case {**kw}` (Python 3.10 on: named, not imported)
            name = getattr(node, "name", None) or getattr(node, "rest", None)
            if name:
                bound.add(name)
        todo.extend(ast.iter_child_nodes(node))
    provided = set(dir(builtins))
    return tuple(sorted({n for n in read if n not in bound and n not in provided and not n.startswith("__")}))


def top_names(tree: ast.AST) -> frozenset:
    """The names a module's top level binds (assignments, loop and ``with`` targets, imports,
    functions and classes, also inside top-level ``if``/``try``/``for``/``with`` blocks): what a
    session's later piece may read (:func:`session_names`)."""
    out = set()
    todo = list(getattr(tree, "body", ()))
    while todo:
        stmt = todo.pop()
        kind = type(stmt)
        declared = _declared(stmt)
        if declared is not None:
            out.update(declared)
        else:
            targets = []
            if kind is ast.Assign:
                targets = stmt.targets
            elif kind in (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor):
                targets = [stmt.target]
            elif kind in (ast.With, ast.AsyncWith):
                targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
            for target in targets:
                out.update(n.id for n in ast.walk(target) if type(n) is ast.Name)
            for field in ("body", "orelse", "finalbody"):
                todo.extend(getattr(stmt, field, ()) or ())
            for handler in getattr(stmt, "handlers", ()) or ():
                todo.extend(handler.body)
    return frozenset(out)


def _declared(node: ast.AST):
    """The names a ``def``, ``class`` or import statement binds; None for any other node."""
    kind = type(node)
    if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        return (node.name,)
    if kind in (ast.Import, ast.ImportFrom):
        return tuple((a.asname or a.name).split(".")[0] for a in node.names)
    return None


# calls that read a program's command line: `parser.parse_args()`, HfArgumentParser's
# dataclass readers, `fire.Fire(main)`, `typer.run(main)`
_COMMAND_LINE_CALLS = frozenset({"parse_args", "parse_known_args", "parse_args_into_dataclasses", "parse_json_file", "parse_yaml_file", "Fire"})


def reads_command_line(tree: ast.AST) -> bool:
    """Whether a module reads the command line it is run with (``sys.argv``, an argument
    parser's ``parse_args()``, ``fire.Fire``): a program run as ``python file.py ARGS``, which
    only Python runs (IPython runs a notebook's cells, which take no arguments)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if node.attr == "argv" and isinstance(node.value, ast.Name) and node.value.id == "sys":
                return True
            continue
        if isinstance(node, ast.ImportFrom) and node.module == "sys" and any(a.name == "argv" for a in node.names):
            return True
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in _COMMAND_LINE_CALLS:
                return True
    return False
