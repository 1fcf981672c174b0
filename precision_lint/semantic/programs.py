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
