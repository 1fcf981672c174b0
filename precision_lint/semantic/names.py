"""Import-aware names: what does ``tf.Trainer`` or ``T`` really refer to?

``import transformers as tf`` makes ``tf.Trainer`` mean ``transformers.Trainer``;
``from torch import float16`` makes ``float16`` mean ``torch.float16``; a relative
import inside a package resolves against the module's own dotted name. A name
defined in the module itself (``class Trainer: ...``) resolves to
``<module>.Trainer``, so a look-alike is never mistaken for the library's class.
"""
from __future__ import annotations

import ast
from typing import Dict, Optional, Tuple

from .gate import resolve_relative  # noqa: F401  (pure text: the gate reads it without the index)


def dotted(node) -> Optional[str]:
    """``a.b.c`` as a string, or None when the expression is not a plain dotted name.

    Walked without recursion: a chain of thousands of attributes is legal Python. An attribute
    read with ``getattr`` and a written name is that attribute (``getattr(torch.cuda,
    "is_bf16_supported", lambda: False)``: ``torch.cuda.is_bf16_supported``, where it exists)."""
    parts = []
    while True:
        if type(node) is ast.Attribute:
            parts.append(node.attr)
            node = node.value
        elif _getattr_of(node) is not None:
            parts.append(node.args[1].value)
            node = node.args[0]
        else:
            break
    if type(node) is not ast.Name:
        return None
    if not parts:
        return node.id
    parts.append(node.id)
    return ".".join(reversed(parts))


def spelled(node) -> Optional[str]:
    """``dotted(node)``, or for a path through constant subscripts the text that spells it
    (``model[0]``, ``model.blocks[2].attn``): a named part of a container of modules, whose
    cast, freeze and optimizer are matched by how the code writes it. None otherwise."""
    found = dotted(node)
    if found is not None or type(node) not in (ast.Subscript, ast.Attribute):
        return found
    parts = []
    while True:
        if type(node) is ast.Attribute:
            parts.append("." + node.attr)
            node = node.value
        elif type(node) is ast.Subscript and type(node.slice) is ast.Constant and type(node.slice.value) in (int, str):
            parts.append(f"[{node.slice.value!r}]")
            node = node.value
        else:
            break
    if type(node) is not ast.Name:
        return None
    return node.id + "".join(reversed(parts))


def _getattr_of(node) -> Optional[ast.expr]:
    """The object of ``getattr(obj, "name")`` / ``getattr(obj, "name", default)`` (a written
    name that is an identifier), else None."""
    if (
        type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == "getattr"
        and 2 <= len(node.args) <= 3 and not node.keywords
        and type(node.args[1]) is ast.Constant and isinstance(node.args[1].value, str) and node.args[1].value.isidentifier()
    ):
        return node.args[0]
    return None


def module_dotted(node) -> str:
    """The text of an import's module (``ImportFrom.module``: a string, or None for ``from . import x``)."""
    if node is None:
        return ""
    return node if isinstance(node, str) else (dotted(node) or "")


def import_bindings(node, module: str, is_package: bool):
    """The names an import statement binds, with what each refers to.

    ``import a.b`` binds ``a`` (to the package ``a``); ``import a.b as c`` binds ``c``
    to ``a.b``; ``from .x import y as z`` binds ``z`` to ``<package>.x.y``. Returns
    ``(bindings, modules)``: ``[(local, qualified)]`` and the dotted names of every
    module the statement may import (``from pkg import mod`` may import a module).
    """
    bindings = []
    modules = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            full = alias.name
            modules.append(full)
            if alias.asname is not None:
                bindings.append((alias.asname, full))
            else:
                head = full.split(".")[0]
                bindings.append((head, head))
        return bindings, modules
    base = resolve_relative(module, is_package, node.level or 0, module_dotted(node.module))
    modules.append(base)
    if any(alias.name == "*" for alias in node.names):
        return bindings, modules
    for alias in node.names:
        name = alias.name
        local = alias.asname if alias.asname is not None else name
        full = f"{base}.{name}" if base else name
        bindings.append((local, full))
        modules.append(full)
    return bindings, modules


def unconditional_imports(tree, module: str, is_package: bool) -> Tuple[str, ...]:
    """The modules a module's own top level imports outside any ``try``, ``if`` or function:
    each must import for the module to import at all (``from torch._six import inf`` fails on
    a torch without it, and so does every module that imports this one the same way).
    ``from a import b`` names ``a`` and ``a.b`` (``b`` may be a module), in the order written."""
    found: Dict[str, None] = {}
    for stmt in getattr(tree, "body", ()):
        if type(stmt) is ast.Import or type(stmt) is ast.ImportFrom:
            found.update(dict.fromkeys(m for m in import_bindings(stmt, module, is_package)[1] if m))
    return tuple(found)


class ImportMap:
    """What a module imports: every module it may import (for joining files), and the
    aliases bound by its *module-level* imports (``torch`` bound as ``th``).

    Resolving a name used somewhere is the index's job (``ModuleIndex.qualify``): it
    goes through the binding the use sees, so parameters, locals and imports made
    inside a function shadow these.
    """

    def __init__(self, module: str, is_package: bool = False) -> None:
        self.module = module
        self.is_package = is_package
        self.aliases: Dict[str, str] = {}
        self.imported_modules: set = set()

    def add(self, node, module_level: bool):
        bindings, modules = import_bindings(node, self.module, self.is_package)
        self.imported_modules.update(m for m in modules if m)
        if module_level:
            for local, full in bindings:
                self.aliases.setdefault(local, full)
        return bindings


# The libraries whose calls never reach project code (``callees.project_callee``): the installed
# packages, which a repository may itself be (diffusers' own ``src/diffusers``) or carry a
# top-level copy of, and the standard library's modules (and ``np``, numpy's usual alias), which
# it never is. Where a tree is an installed package only the whole tree says, so the call graph
# records calls of those packages too and the join keeps the ones whose package is one of the
# linted tree (``project/callgraph.py``); every other reading (call records, values, the
# knowledge rows) goes on taking them as the library's.
INSTALLED_PACKAGES = frozenset(
    {
        "torch", "transformers", "trl", "accelerate", "peft", "datasets", "numpy", "yaml", "bitsandbytes",
        "deepspeed", "lightning", "pytorch_lightning", "tqdm", "wandb", "evaluate", "sklearn", "pandas",
        "tokenizers", "safetensors", "diffusers", "huggingface_hub",
    }
)
LIBRARIES = INSTALLED_PACKAGES | {
    "np", "os", "sys", "json", "re", "math", "random", "logging", "time", "argparse", "pathlib", "typing",
    "collections", "itertools", "functools", "dataclasses", "builtins", "subprocess", "shutil", "copy", "warnings",
}


def installed_package_name(qualname: Optional[str]) -> bool:
    """Whether ``qualname`` names a thing of one of :data:`INSTALLED_PACKAGES`."""
    return bool(qualname) and qualname.partition(".")[0] in INSTALLED_PACKAGES
