"""Which modules run as programs and which functions a project declares as entries.

The call graph (``callgraph.py``) lets a function nothing in the project calls run when
something outside may call it. That is so for:

- a function a console script names (``[project.scripts] train = "pkg.train:main"``): it runs
  in a process of its own, as the entry of its module's run;
- the uncalled functions of a module run as a program: one whose top level acts
  (``semantic/programs.py``) or that has an ``if __name__ == "__main__":`` block, a notebook,
  a pytest file (pytest calls its functions) or a package's ``__main__.py``;
- every function of a module that is not a file on disk (standard input, an editor's buffer):
  nothing around it can be read, so it is judged as a program, as it always was.

A module of definitions only that nothing imports and no console script names is run by
nobody the join can see: its functions are not judged as if they ran. A launch command
(``python -m pkg.lib``, ``torchrun lib.py``) does not change that: running such a module runs
its top level, which calls none of them.
"""
from __future__ import annotations

import fnmatch
import os
from typing import Dict, FrozenSet, Iterable, List, Set, Tuple

from ..facts.model import ModuleFacts
from ..workspace.declared import DeclaredEntries, entries_of

# pytest's own discovery of test modules
_TEST_MODULES = ("test_*.py", "*_test.py", "conftest.py")


def programs_and_entries(modules: List[ModuleFacts], symbols, declared: DeclaredEntries) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """(paths of the modules run as programs, canonical names of the declared entry functions)."""
    programs: Set[str] = set()
    for m in modules:
        name = os.path.basename(m.path)
        if not os.path.isfile(m.path) or m.acts or m.main_lines or name.endswith(".ipynb") or name == "__main__.py" or any(
            fnmatch.fnmatch(name, p) for p in _TEST_MODULES
        ):
            programs.add(m.path)
    on_disk = [m for m in modules if os.path.isfile(m.path)]
    if not on_disk:
        return frozenset(programs), frozenset()
    scripts = entries_of(declared, (m.path for m in on_disk))
    by_name: Dict[str, List[ModuleFacts]] = {}
    for m in on_disk:
        by_name.setdefault(m.module, []).append(m)
    functions: Set[str] = set()
    for folder, target in scripts:
        module_name, _, attr = target.partition(":")
        for m in _under(by_name.get(module_name, ()), folder):
            functions.add(symbols.canonical(f"{module_name}.{attr}", m))
    return frozenset(programs), frozenset(functions)


def _under(modules: Iterable[ModuleFacts], folder: str) -> List[ModuleFacts]:
    prefix = os.path.join(folder, "")
    return [m for m in modules if os.path.abspath(m.path).startswith(prefix)]
