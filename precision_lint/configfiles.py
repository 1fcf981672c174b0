"""Config files that a script loads from a literal path, read at the join.

The most common real shape of a precision bug in issue threads is a value that lives in
a YAML file: ``fp16: true`` or ``torch_dtype: bfloat16`` in ``config.yaml``, loaded with
``yaml.safe_load(open("config.yaml"))`` and passed on as ``cfg["fp16"]``. The evaluator
(``facts/evaluate.py``) records such a value as a symbolic ``CONFIG`` atom (the path as
written and the keys); here, when files are joined, the atom becomes the value written in
the file, with the line it is written on, so that a finding can point there.

Reading never executes anything: YAML through the safe loader, JSON, TOML. A file is
looked up next to the module that loads it and in the working directory, as a script run
from either place would find it. A missing, unreadable, too large or invalid file, and a
key that is not in it, give no value (``unknown``): nothing is guessed.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .diagnostics import Span

MAX_BYTES = 1_000_000  # a config file is small; anything larger is data, not configuration
SUFFIXES = (".yaml", ".yml", ".json", ".toml")


@dataclass(frozen=True)
class ConfigValue:
    """A value found in a config file: a scalar (``value``) or a table/list (``keys``: the
    names a table holds, so that ``**table`` can be spread into a call)."""

    path: str
    value: Any
    span: Span
    keys: Optional[Tuple[str, ...]] = None  # for a table: its keys, in order


def is_config_file(path: str) -> bool:
    return path.lower().endswith(SUFFIXES)


def shown_from(path: str, module_path: str) -> str:
    """``path`` as a message shows it to the reader of ``module_path``: relative to the
    module's folder when it lies inside it (``config.yaml``, ``configs/train.yaml``)."""
    relative = os.path.relpath(os.path.abspath(path), os.path.dirname(os.path.abspath(module_path)))
    return path if relative.startswith("..") else relative


class _Node:
    """A parsed config value with its position: scalar, dict of _Node, or list of _Node."""

    __slots__ = ("value", "span")

    def __init__(self, value: Any, span: Span) -> None:
        self.value = value
        self.span = span


class ConfigFiles:
    """The config files of one run, each read once."""

    def __init__(self, cwd: Optional[str] = None, written: Optional[Dict[str, Tuple[str, str]]] = None) -> None:
        """``written``: files a notebook's ``%%writefile config.yaml`` cell writes, file on disk →
        (the cell's path in the run, the text); read from the cell before the disk (running the
        notebook writes them there), their values pointing into the cell."""
        self._cwd = cwd or os.getcwd()
        self._parsed: Dict[str, Optional[_Node]] = {}
        self._written = {os.path.normpath(k): v for k, v in (written or {}).items()}
        self._shown: Dict[str, str] = {}  # the path locate() gave → the key of its parse

    def lookup(self, near: str, relative: str, keys: Sequence[Any]) -> Optional[ConfigValue]:
        """The value at ``keys`` in the config file ``relative`` as loaded by the module at
        ``near``; None when the file or the key is not there."""
        path = self.locate(near, relative)
        if path is None:
            return None
        node = self._parsed[self._shown[path]]
        for key in keys:
            value = node.value
            if isinstance(value, dict) and isinstance(key, str) and key in value:
                node = value[key]
            elif isinstance(value, list) and isinstance(key, int) and -len(value) <= key < len(value):
                node = value[key]
            else:
                return None
        if isinstance(node.value, dict):
            return ConfigValue(path, None, node.span, tuple(node.value))
        if isinstance(node.value, list):
            return ConfigValue(path, None, node.span, ())
        return ConfigValue(path, node.value, node.span)

    def looked_for(self) -> List[str]:
        """The files on disk looked for so far, found or not (a notebook's written files aside)."""
        return [p for p in self._parsed if p not in self._written]

    def locate(self, near: str, relative: str) -> Optional[str]:
        """The readable config file ``relative`` names, seen from the module at ``near``."""
        if not isinstance(relative, str) or not relative.lower().endswith(SUFFIXES):
            return None
        bases = (os.path.dirname(os.path.abspath(near)), self._cwd)
        for base in bases:
            path = os.path.normpath(os.path.join(base, os.path.expanduser(relative)))
            if path not in self._parsed:
                self._parsed[path] = _parse(path, self._written[path][1]) if path in self._written else _read(path)
            if self._parsed[path] is not None:
                shown = self._written[path][0] if path in self._written else _shown(path, self._cwd)
                self._shown[shown] = path
                return shown
        return None


def _shown(path: str, cwd: str) -> str:
    """A path as reports show it: relative to the working directory when inside it."""
    relative = os.path.relpath(path, cwd)
    return path if relative.startswith("..") else relative


def _read(path: str) -> Optional[_Node]:
    try:
        if os.path.getsize(path) > MAX_BYTES:
            return None
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return None
    return _parse(path, text)


def _parse(path: str, text: str) -> Optional[_Node]:
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        return None
    try:
        if path.lower().endswith(".toml"):
            return _toml(text)
        if path.lower().endswith(".json"):
            json.loads(text)  # JSON's own verdict first: YAML accepts more than JSON does
        return _yaml(text)
    except Exception:  # any parse error: the file gives no values
        return None


def _line_starts(text: str):
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def _yaml(text: str) -> Optional[_Node]:
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None

        def convert(node) -> _Node:
            start, end = node.start_mark, node.end_mark
            span = Span(start.line + 1, start.column, end.line + 1, end.column, start.index, end.index)
            if isinstance(node, yaml.MappingNode):
                table = {}
                for key_node, value_node in node.value:
                    key = loader.construct_object(key_node, deep=True)
                    if isinstance(key, str):
                        table[key] = convert(value_node)
                return _Node(table, span)
            if isinstance(node, yaml.SequenceNode):
                return _Node([convert(item) for item in node.value], span)
            return _Node(loader.construct_object(node, deep=True), span)

        return convert(root)
    finally:
        loader.dispose()


_TOML_KEY = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*=")


def _toml(text: str) -> Optional[_Node]:
    """TOML through the standard library (3.11); each key's line found by its ``key =``."""
    import tomllib

    data = tomllib.loads(text)
    starts = _line_starts(text)
    lines = text.splitlines()

    def span_of(key: str, after: int) -> Span:
        for number in range(after, len(lines)):
            match = _TOML_KEY.match(lines[number])
            if match and match.group(1) == key:
                offset = starts[number] + match.start(1)
                return Span(number + 1, match.start(1), number + 1, len(lines[number]), offset, starts[number] + len(lines[number]))
        return Span(1, 0, 1, 0, 0, 0)

    def convert(value: Any, span: Span, after: int) -> _Node:
        if isinstance(value, dict):
            return _Node({k: convert(v, span_of(k, after), after) for k, v in value.items()}, span)
        if isinstance(value, list):
            return _Node([convert(v, span, after) for v in value], span)
        return _Node(value, span)

    return convert(data, Span(1, 0, 1, 0, 0, 0), 0)
