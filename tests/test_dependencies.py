"""Every third-party module the linter imports is a declared dependency of the package (the
harness and the language server name theirs as extras)."""
import ast
import re
import sys
import tomllib

from conftest import REPO

# import name → distribution name, where they differ
DISTRIBUTIONS = {"yaml": "pyyaml"}
# folders whose imports belong to an extra: (folder, extra)
EXTRAS = {"verify": "harness", "lsp": "lsp"}


def _imported(path):
    """Top-level names of the modules a file imports, except under ``try: ... except ImportError``
    (an optional module, such as numpy for the harness's seeds)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    optional = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
            isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError") for h in node.handlers
        ):
            optional.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    for node in ast.walk(tree):
        if id(node) in optional:
            continue
        if isinstance(node, ast.Import):
            yield from (a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0]


def _names(requirements):
    return {re.split(r"[<>=!~; \[]", r, 1)[0].strip().lower().replace("_", "-") for r in requirements}


def test_third_party_imports_are_declared():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = _names(project["dependencies"])
    extras = {k: _names(v) for k, v in project["optional-dependencies"].items()}
    missing = []
    for path in sorted((REPO / "precision_lint").rglob("*.py")):
        folder = path.relative_to(REPO / "precision_lint").parts[0]
        allowed = declared | extras.get(EXTRAS.get(folder, ""), set())
        for name in set(_imported(path)):
            if name in sys.stdlib_module_names or name in ("precision_lint", "tomli", "__future__"):
                continue
            if DISTRIBUTIONS.get(name, name).lower() not in allowed:
                missing.append(f"{path.relative_to(REPO)}: {name}")
    assert not missing, missing
