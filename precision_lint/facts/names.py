"""Import-aware names: what does ``tf.Trainer`` or ``T`` really refer to?

``import transformers as tf`` makes ``tf.Trainer`` mean ``transformers.Trainer``;
``from torch import float16`` makes ``float16`` mean ``torch.float16``; a relative
import inside a package resolves against the module's own dotted name. A name
defined in the module itself (``class Trainer: ...``) resolves to
``<module>.Trainer``, so a look-alike is never mistaken for the library's class.
"""
from __future__ import annotations

from typing import Dict, Optional

import libcst as cst


def dotted(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` as a string, or None when the expression is not a plain dotted name."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr.value}" if head else None
    return None


def module_dotted(node) -> str:
    """The text of an import's module (``ImportFrom.module``)."""
    if node is None:
        return ""
    return dotted(node) or ""


def resolve_relative(module: str, is_package: bool, level: int, name: str) -> str:
    """Resolve ``from ..x import y`` (level 2, name ``x``) inside ``module``."""
    if level == 0:
        return name
    parts = module.split(".") if module else []
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    base = ".".join(parts)
    if name:
        return f"{base}.{name}" if base else name
    return base


class ImportMap:
    """Local name → fully qualified name, from the module's imports and definitions."""

    def __init__(self, module: str, is_package: bool = False) -> None:
        self.module = module
        self.is_package = is_package
        self.aliases: Dict[str, str] = {}
        self.imported_modules: set = set()

    def add_import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted(alias.name) or ""
            self.imported_modules.add(full)
            if alias.asname is not None:
                self.aliases[alias.asname.name.value] = full
            else:
                head = full.split(".")[0]
                self.aliases.setdefault(head, head)

    def add_import_from(self, node: cst.ImportFrom) -> None:
        level = len(node.relative)
        base = resolve_relative(self.module, self.is_package, level, module_dotted(node.module))
        if isinstance(node.names, cst.ImportStar):
            self.imported_modules.add(base)
            return
        for alias in node.names:
            name = dotted(alias.name) or ""
            local = alias.asname.name.value if alias.asname is not None else name
            full = f"{base}.{name}" if base else name
            self.aliases[local] = full
            # `from pkg import mod` may import a module: remember both candidates.
            self.imported_modules.add(full)
            self.imported_modules.add(base)

    def define(self, local: str) -> None:
        """A def/class at module level shadows imports of the same name."""
        self.aliases[local] = f"{self.module}.{local}" if self.module else local

    def qualify(self, node: cst.BaseExpression) -> Optional[str]:
        text = dotted(node)
        if text is None:
            return None
        head, _, rest = text.partition(".")
        if head not in self.aliases:
            return None
        full = self.aliases[head]
        return f"{full}.{rest}" if rest else full
