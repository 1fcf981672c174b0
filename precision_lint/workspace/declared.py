"""The entry points a project declares, read from the files beside its code (never run).

- Console scripts: ``[project.scripts]`` / ``[project.gui-scripts]`` of ``pyproject.toml``
  (PEP 621), Poetry's ``[tool.poetry.scripts]``, ``[options.entry_points] console_scripts``
  / ``gui_scripts`` of ``setup.cfg``, and ``entry_points={"console_scripts": [...]}`` in
  ``setup.py``, read with CPython's ``ast`` (literal values only). ``name = "pkg.train:main"``
  makes ``pkg.train.main`` run in a process of its own, though nothing in the project calls it.

The project's folder is the nearest one above a module with ``pyproject.toml``, ``setup.py``
or ``setup.cfg`` (else ``.git``), at most a few levels up. Every file read is reported as a
side file, so a cached result is reused only while they are unchanged.
"""
from __future__ import annotations

import ast
import os
from typing import Dict, Iterable, List, Optional, Set, Tuple

from ..knowledge import tomllib_module


PROJECT_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
LEVELS = 4  # folders above a module searched for its project's folder
MAX_BYTES = 1024 * 1024


class DeclaredEntries:
    """The console scripts of the projects around the linted modules, each
    project folder read once."""

    def __init__(self) -> None:
        self._looked: Set[str] = set()
        self._roots: Dict[str, Optional[str]] = {}
        self._scripts: Dict[str, List[str]] = {}

    def looked_for(self) -> List[str]:
        return sorted(self._looked)

    def project_folder(self, module_path: str) -> Optional[str]:
        """The nearest folder above ``module_path`` that holds project metadata (or ``.git``)."""
        folder = os.path.dirname(os.path.abspath(module_path))
        if folder in self._roots:
            return self._roots[folder]
        found = None
        here = folder
        for _ in range(LEVELS + 1):
            for name in PROJECT_FILES:
                self._looked.add(os.path.join(here, name))
            if any(os.path.isfile(os.path.join(here, n)) for n in PROJECT_FILES) or os.path.isdir(os.path.join(here, ".git")):
                found = here
                break
            parent = os.path.dirname(here)
            if parent == here:
                break
            here = parent
        self._roots[folder] = found
        return found

    def console_scripts(self, folder: str) -> List[str]:
        """``module:attr`` targets of every console / GUI script the project at ``folder`` declares."""
        if folder not in self._scripts:
            found: List[str] = []
            found += _from_pyproject(self._read(os.path.join(folder, "pyproject.toml")))
            found += _from_setup_cfg(self._read(os.path.join(folder, "setup.cfg")))
            found += _from_setup_py(self._read(os.path.join(folder, "setup.py")))
            self._scripts[folder] = found
        return self._scripts[folder]

    def _read(self, path: str) -> Optional[str]:
        self._looked.add(path)
        try:
            if os.path.getsize(path) > MAX_BYTES:
                return None
            with open(path, encoding="utf-8", errors="replace") as fh:
                return fh.read()
        except OSError:
            return None


def _from_pyproject(text: Optional[str]) -> List[str]:
    if not text:
        return []
    tomllib = tomllib_module()
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return []
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    poetry = ((data.get("tool") or {}).get("poetry") or {}) if isinstance(data.get("tool"), dict) else {}
    tables = [project.get("scripts"), project.get("gui-scripts"), poetry.get("scripts") if isinstance(poetry, dict) else None]
    out = []
    for table in tables:
        if isinstance(table, dict):
            for value in table.values():
                if isinstance(value, dict):  # poetry: `name = { reference = "pkg.mod:f", type = "console" }`
                    value = value.get("reference") or value.get("callable")
                if isinstance(value, str):
                    out.append(_target(value))
    return [t for t in out if t]


def _from_setup_cfg(text: Optional[str]) -> List[str]:
    if not text:
        return []
    import configparser  # only where a setup.cfg is read

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    if not parser.has_section("options.entry_points"):
        return []
    out = []
    for group in ("console_scripts", "gui_scripts"):
        for line in parser.get("options.entry_points", group, fallback="").splitlines():
            _, eq, value = line.partition("=")
            if eq:
                out.append(_target(value))
    return [t for t in out if t]


def _from_setup_py(text: Optional[str]) -> List[str]:
    """``setup(entry_points={"console_scripts": ["name = pkg.mod:func"]})``, literal values or a
    dict bound once at the top level."""
    if not text:
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    names = {
        t.id: node.value
        for node in tree.body if isinstance(node, ast.Assign)
        for t in node.targets if isinstance(t, ast.Name)
    }
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for keyword in node.keywords:
            if keyword.arg != "entry_points":
                continue
            value = keyword.value
            if isinstance(value, ast.Name):
                value = names.get(value.id, value)
            if not isinstance(value, ast.Dict):
                continue
            for key, group in zip(value.keys, value.values):
                if not (isinstance(key, ast.Constant) and key.value in ("console_scripts", "gui_scripts")):
                    continue
                if isinstance(group, ast.Name):
                    group = names.get(group.id, group)
                items = group.elts if isinstance(group, (ast.List, ast.Tuple)) else [group]
                for item in items:
                    if isinstance(item, ast.Constant) and isinstance(item.value, str):
                        _, eq, target = item.value.partition("=")
                        if eq:
                            out.append(_target(target))
    return [t for t in out if t]


def _target(value: str) -> str:
    """``" pkg.mod:func [extra]"`` -> ``pkg.mod:func`` ("" when it names no function)."""
    value = value.split("[", 1)[0].strip()
    module, colon, attr = value.partition(":")
    return f"{module.strip()}:{attr.strip()}" if colon and module.strip() and attr.strip() else ""


def entries_of(declared: DeclaredEntries, paths: Iterable[str]) -> List[Tuple[str, str]]:
    """``(project folder, "module:attr")`` of every console script of the projects of the
    modules at ``paths``."""
    out = []
    for folder in sorted({f for f in (declared.project_folder(p) for p in paths) if f}):
        out.extend((folder, t) for t in declared.console_scripts(folder))
    return out
