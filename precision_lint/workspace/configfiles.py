"""Config files that a script names by a literal path, read at the join: the one reader.

The most common real shape of a precision bug in issue threads is a value that lives in
a YAML file: ``fp16: true`` or ``torch_dtype: bfloat16`` in ``config.yaml``, loaded with
``yaml.safe_load(open("config.yaml"))`` and passed on as ``cfg["fp16"]``. The evaluator
(``facts/evaluate.py``) records such a value as a symbolic ``CONFIG`` atom (the path as
written and the keys); here, when files are joined, the atom becomes the value written in
the file, with the line it is written on, so that a finding can point there. Rules read the
files their calls name the same way: the DeepSpeed JSON of ``TrainingArguments(deepspeed=
"ds.json")`` (MP101, MP102), the accelerate config of a launch command (MP102). One policy for
all of them: where a file is looked for, which suffixes are read, how large a file may be,
how its path is shown, and which files a cached result depends on (:meth:`looked_for`).

Reading never executes anything: YAML through the safe loader, JSON through ``json``, TOML
through ``tomllib``; each value keeps the span it is written at (YAML's marks; for JSON and
TOML, the text read again along the grammar, a key found in its own table). A file is
looked up next to the module that loads it and in the working directory, as a script run
from either place would find it. A missing file, and a key that is not in it, give no value
(``unknown``): nothing is guessed. A file that is there but cannot be read — larger than
``max-file-size``, not UTF-8, or invalid (a trailing comma in a DeepSpeed JSON, which
DeepSpeed's own ``json.load`` refuses too) — gives no value either, and is remembered
(:meth:`ConfigFiles.problems_for`): MP002 reports it where the code names it, so that what a
rule could not check is never a silent pass.
"""
from __future__ import annotations

import bisect
import os
from .._dataclass import dataclass
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from ..diagnostics import Span
from .._regex import lazy

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


@dataclass(frozen=True)
class ConfigEntry:
    """A key of a config file's top-level table, where it is written: the key itself
    (``key_span``: with its quotes, as written) and its value."""

    key: str
    key_span: Span
    value: Any  # a scalar; None for a table or a list
    value_span: Span
    value_text: str  # the value as written


class _Node:
    """A parsed config value with its position: scalar, dict of _Node, or list of _Node;
    a table's entry also has the span of its key (``key``)."""

    __slots__ = ("value", "span", "key")

    def __init__(self, value: Any, span: Span, key: Optional[Span] = None) -> None:
        self.value = value
        self.span = span
        self.key = key


class ConfigFiles:
    """The config files of one run, each read once."""

    def __init__(
        self,
        cwd: Optional[str] = None,
        written: Optional[Dict[str, Tuple[str, str]]] = None,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        """``written``: files a notebook's ``%%writefile config.yaml`` cell writes, file on disk →
        (the cell's path in the run, the text); read from the cell before the disk (running the
        notebook writes them there), their values pointing into the cell. ``max_bytes``: the
        largest file read (the configuration's ``max-file-size``; 0: no limit)."""
        self._cwd = cwd or os.getcwd()
        self._max_bytes = max_bytes
        self._parsed: Dict[str, Optional[_Node]] = {}
        self._texts: Dict[str, str] = {}  # a file parsed → its text (the positions of its values)
        self._problems: Dict[str, str] = {}  # a file that is there but gives no values → why
        # (module that named it, the path as written, the file as shown, why): in asking order
        self._unread: Dict[Tuple[str, str, str], str] = {}
        self._written = {os.path.normpath(k): v for k, v in (written or {}).items()}
        self._shown: Dict[str, str] = {}  # the path locate() gave → the key of its parse
        self._listed: Set[str] = set()  # the folders listed for their files (``files_under``)

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
        return [p for p in self._parsed if p not in self._written] + sorted(self._listed)

    def locate(self, near: str, relative: str, quiet: bool = False) -> Optional[str]:
        """The readable config file ``relative`` names, seen from the module at ``near``.
        ``quiet``: a file looked at on no one's word (a shipped file that may be a
        configuration): one that cannot be read is not the module's to report (MP002)."""
        if not isinstance(relative, str) or not relative.lower().endswith(SUFFIXES):
            return None
        bases = (os.path.dirname(os.path.abspath(near)), self._cwd)
        for base in bases:
            path = os.path.normpath(os.path.join(base, os.path.expanduser(relative)))
            if path not in self._parsed:
                if path in self._written:
                    text = self._written[path][1]
                    self._parsed[path], problem = _parse(path, text, self._max_bytes)
                else:
                    self._parsed[path], problem, text = _read(path, self._max_bytes)
                if self._parsed[path] is not None and text is not None:
                    self._texts[path] = text
                if problem is not None:
                    self._problems[path] = problem
            shown = self._written[path][0] if path in self._written else _shown(path, self._cwd)
            if self._parsed[path] is not None:
                self._shown[shown] = path
                return shown
            if path in self._problems and not quiet:
                self._unread.setdefault((near, relative, shown), self._problems[path])
        return None

    def entries(self, near: str, relative: str, quiet: bool = False, keys: Sequence[Any] = ()) -> Optional[List[ConfigEntry]]:
        """The keys of the top-level table of the JSON/YAML file ``relative`` (as the module at
        ``near`` names it), each where it is written, in file order; None when the file is not
        there or holds no table (a list, a scalar). What a parser that fills dataclasses from
        the whole file (``HfArgumentParser.parse_json_file``) reads as keywords. ``quiet``: as
        for :meth:`locate`. ``keys``: of the table at that path in the file instead
        (``("training",)``: what ``**cfg["training"]`` spreads into a call); None where the
        file has no table there."""
        path = self.locate(near, relative, quiet)
        if path is None:
            return None
        real = self._shown[path]
        node = self._parsed[real]
        if real.lower().endswith(".toml"):
            return None
        for key in keys:
            value = node.value
            if isinstance(value, dict) and isinstance(key, str) and key in value:
                node = value[key]
            elif isinstance(value, list) and isinstance(key, int) and not isinstance(key, bool) and -len(value) <= key < len(value):
                node = value[key]
            else:
                return None
        if not isinstance(node.value, dict):
            return None
        text = self._texts.get(real, "")
        out = []
        for key, child in node.value.items():
            if child.key is None:
                continue
            scalar = None if isinstance(child.value, (dict, list)) else child.value
            out.append(ConfigEntry(key, child.key, scalar, child.span, text[child.span.start : child.span.end]))
        return out

    def targets(self, near: str, relative: str) -> List[Tuple[Tuple[str, ...], str]]:
        """Every table of the YAML/JSON file ``relative`` (as the module at ``near`` names it)
        that names a class to build (Hydra's ``_target_: transformers.TrainingArguments``), as
        (its keys from the top, the class's qualified name), in file order."""
        path = self.locate(near, relative, quiet=True)
        if path is None or path.lower().endswith(".toml"):
            return []
        out: List[Tuple[Tuple[str, ...], str]] = []
        # depth first, each table's entries pushed in reverse: a table comes before the tables in
        # it, and those in the order written (file order)
        stack: List[Tuple[Tuple[str, ...], _Node]] = [((), self._parsed[self._shown[path]])]
        while stack:
            keys, node = stack.pop()
            if not isinstance(node.value, dict):
                continue
            target = node.value.get("_target_")
            if target is not None and isinstance(target.value, str) and target.value:
                out.append((keys, target.value))
            stack.extend(((*keys, k), child) for k, child in reversed(list(node.value.items())) if isinstance(k, str))
        return out

    def files_under(self, folder: str, limit: int = 400) -> List[str]:
        """The YAML files under ``folder`` (an absolute path), sorted, at most ``limit``: the
        config groups a Hydra app composes from. Each folder listed is a side file of the run
        (its listing is its state, ``cache.file_state``): a config added there is seen."""
        out: List[str] = []
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            self._listed.add(os.path.normpath(root))
            out.extend(os.path.join(root, f) for f in sorted(files) if f.lower().endswith((".yaml", ".yml")))
            if len(out) >= limit:
                break
        return out[:limit]

    @property
    def cwd(self) -> str:
        """The folder the check runs from (files are looked for there too)."""
        return self._cwd

    def found(self, near: str, relative: str) -> Optional[str]:
        """The file on disk :meth:`locate` finds (normalised, absolute), or None."""
        shown = self.locate(near, relative)
        return self._shown[shown] if shown is not None else None

    def written_by_notebook(self, path: str) -> bool:
        """Whether the file at the absolute ``path`` is one a notebook's ``%%writefile`` cell
        writes (its values point into the cell)."""
        return os.path.normpath(path) in self._written

    def shown(self, path: str) -> str:
        """How reports show the file at the absolute ``path`` (relative to the working folder,
        or a notebook's cell that writes it)."""
        return self._written[path][0] if path in self._written else _shown(path, self._cwd)

    def text_of(self, shown: str) -> Optional[str]:
        """The text of a file :meth:`locate` gave as ``shown``, as it was read."""
        real = self._shown.get(shown)
        return self._texts.get(real) if real is not None else None

    def problems_for(self, near: str) -> List[Tuple[str, str, str]]:
        """(the path as the module ``near`` writes it, the file as shown, why it gave no values)
        for each file that module's code names and that is there but could not be read."""
        return [(relative, shown, why) for (module, relative, shown), why in self._unread.items() if module == near]


def _shown(path: str, cwd: str) -> str:
    """A path as reports show it: relative to the working directory when inside it."""
    relative = os.path.relpath(path, cwd)
    return path if relative.startswith("..") else relative


def _read(path: str, max_bytes: int = MAX_BYTES) -> Tuple[Optional[_Node], Optional[str], Optional[str]]:
    """The file's values, or None and why (None: the file is not there, nothing to say), and
    its text."""
    if not os.path.isfile(path):
        return None, None, None
    try:
        size = os.path.getsize(path)
        if max_bytes and size > max_bytes:
            return None, _too_large(size, max_bytes), None
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError as exc:
        return None, f"it is not UTF-8 ({exc.reason} at byte {exc.start})", None
    except OSError as exc:
        return None, f"it cannot be read ({exc.strerror or exc})", None
    return (*_parse(path, text, max_bytes), text)


def _parse(path: str, text: str, max_bytes: int = MAX_BYTES) -> Tuple[Optional[_Node], Optional[str]]:
    size = len(text.encode("utf-8", "surrogatepass"))
    if max_bytes and size > max_bytes:
        return None, _too_large(size, max_bytes)
    try:
        if path.lower().endswith(".toml"):
            return _toml(text), None
        if path.lower().endswith(".json"):
            return _json(text), None
        return _yaml(text), None  # an empty file: no values, nothing wrong
    except RecursionError:
        return None, "it nests too deeply to be read"
    except Exception as exc:  # any parse error: the file gives no values, and says why
        return None, f"it is not valid {_format(path)} ({_first_line(exc)})"


def _too_large(size: int, limit: int) -> str:
    from .config import format_sizes

    shown, limit_shown = format_sizes(size, limit)
    return (
        f"it is {shown}, more than max-file-size ({limit_shown}); raise `max-file-size` "
        "in [tool.precision-lint] to check it"
    )


def _format(path: str) -> str:
    lowered = path.lower()
    return "TOML" if lowered.endswith(".toml") else "JSON" if lowered.endswith(".json") else "YAML"


def _first_line(exc: Exception) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


class _Lines:
    """Character offsets of ``text`` → spans with 1-based lines and 0-based columns."""

    def __init__(self, text: str) -> None:
        self._starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]

    def span(self, start: int, end: int) -> Span:
        line = bisect.bisect_right(self._starts, start)
        end_line = bisect.bisect_right(self._starts, end)
        return Span(line, start - self._starts[line - 1], end_line, end - self._starts[end_line - 1], start, end)


_JSON_SPACE = lazy(r"[ \t\n\r]*")


def _json(text: str) -> _Node:
    """JSON as ``json.loads`` reads it (its verdict and its values: YAML would accept more,
    and refuses the tabs many JSON files are indented with), each value with its own span."""
    import json  # only where a JSON file is read: most checks read none (#23)

    json.loads(text)  # invalid JSON raises here: the walk below only ever sees valid JSON
    lines = _Lines(text)
    scalars = json.JSONDecoder()

    def skip(i: int) -> int:
        return _JSON_SPACE().match(text, i).end()

    def value(i: int) -> Tuple[_Node, int]:
        opening = text[i]
        if opening == "{":
            table: Dict[str, _Node] = {}
            j = skip(i + 1)
            while text[j] != "}":
                opened = j
                key, j = json.decoder.scanstring(text, j + 1)  # text[j] is the key's opening quote
                key_span = lines.span(opened, j)
                j = skip(skip(j) + 1)  # past the ':'
                table[key], j = value(j)  # a repeated key: the last one, as json.loads
                table[key].key = key_span
                j = skip(j)
                if text[j] == ",":
                    j = skip(j + 1)
            return _Node(table, lines.span(i, j + 1)), j + 1
        if opening == "[":
            items: List[_Node] = []
            j = skip(i + 1)
            while text[j] != "]":
                item, j = value(j)
                items.append(item)
                j = skip(j)
                if text[j] == ",":
                    j = skip(j + 1)
            return _Node(items, lines.span(i, j + 1)), j + 1
        scalar, end = scalars.raw_decode(text, i)
        return _Node(scalar, lines.span(i, end)), end

    return value(skip(0))[0]


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
                # `<<: *defaults` (YAML's merge key, as PyYAML and OmegaConf read it): the merged
                # mapping's entries first, this one's own after them (held-out 44u's F1)
                loader.flatten_mapping(node)
                table = {}
                for key_node, value_node in node.value:
                    key = loader.construct_object(key_node, deep=True)
                    if isinstance(key, str):
                        table[key] = convert(value_node)
                        ks, ke = key_node.start_mark, key_node.end_mark
                        table[key].key = Span(ks.line + 1, ks.column, ke.line + 1, ke.column, ks.index, ke.index)
                return _Node(table, span)
            if isinstance(node, yaml.SequenceNode):
                return _Node([convert(item) for item in node.value], span)
            return _Node(loader.construct_object(node, deep=True), span)

        return convert(root)
    finally:
        loader.dispose()




def _toml(text: str) -> _Node:
    """TOML through the standard library (3.11): its verdict and its values; each value's span
    found by :class:`_TomlSpans`, which reads the text as TOML's grammar does, so that ``fp16``
    under ``[eval]`` points at the line in ``[eval]``, not at the first ``fp16 =`` of the file."""
    import tomllib

    data = tomllib.loads(text)  # invalid TOML raises here: the spans are only read of valid TOML
    spans = _TomlSpans(text).spans

    def convert(value: Any, path: Tuple[Any, ...], around: Span) -> _Node:
        span = spans.get(path, around)  # never missing for valid TOML; else the enclosing one
        if isinstance(value, dict):
            return _Node({k: convert(v, path + (k,), span) for k, v in value.items()}, span)
        if isinstance(value, list):
            return _Node([convert(v, path + (n,), span) for n, v in enumerate(value)], span)
        return _Node(value, span)

    return convert(data, (), Span(1, 0, 1, 0, 0, 0))


_TOML_VALUE_END = lazy(r"[,\]}#\n]")


class _TomlSpans:
    """Where each key path of a TOML file is written: ``spans[("eval", "fp16")]`` is the span of
    ``fp16 = false`` under ``[eval]``; ``("runs", 1, "fp16")`` is the key in the second
    ``[[runs]]``; a table's span is its header (an implicit one: where it first appears); an
    element of an inline array is its own span. Strings (multi-line ones included) and comments
    are stepped over, never searched. Only ever given text that ``tomllib`` accepted."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans: Dict[Tuple[Any, ...], Span] = {}
        self._lines = _Lines(text)
        self._arrays: Dict[Tuple[Any, ...], int] = {}  # an array of tables → its elements so far
        self._read()

    def _read(self) -> None:
        text, table, i = self.text, (), self._blank(0)
        while i < len(text):
            if text.startswith("[[", i):  # [[a.b]]: a new element of the array of tables a.b
                parts, end = self._key(i + 2, "]")
                span = self._lines.span(i, end + 2)
                path = self._resolve(parts[:-1]) + parts[-1:]
                n = self._arrays.get(path, 0)
                self._arrays[path] = n + 1
                self._implicit(path, span)
                table = path + (n,)
                self.spans[table] = span
                i = end + 2
            elif text[i] == "[":  # [a.b]
                parts, end = self._key(i + 1, "]")
                span = self._lines.span(i, end + 1)
                table = self._resolve(parts)
                self._implicit(table[:-1], span)
                self.spans[table] = span  # an explicit header wins over an implicit mention
                i = end + 1
            else:
                i = self._pair(i, table)
            i = self._blank(i)

    def _pair(self, i: int, table: Tuple[Any, ...]) -> int:
        """``key = value`` at ``i`` in ``table``; the offset after the value."""
        parts, equals = self._key(i, "=")
        path = table + parts
        end = self._value(self._blank(equals + 1, newlines=False), path)
        span = self._lines.span(i, end)
        self._implicit(path[:-1], span)  # a.b.c = 1 also writes the tables a and a.b here
        self.spans[path] = span
        return end

    def _resolve(self, parts: Tuple[str, ...]) -> Tuple[Any, ...]:
        """A header's key path: through an array of tables, its latest element."""
        path: Tuple[Any, ...] = ()
        for part in parts:
            path += (part,)
            if path in self._arrays:
                path += (self._arrays[path] - 1,)
        return path

    def _implicit(self, path: Tuple[Any, ...], span: Span) -> None:
        """The tables along ``path``, where first mentioned (unless already placed)."""
        for n in range(1, len(path) + 1):
            self.spans.setdefault(path[:n], span)

    def _blank(self, i: int, newlines: bool = True) -> int:
        """Past spaces, comments and (with ``newlines``) line ends."""
        text = self.text
        while i < len(text):
            ch = text[i]
            if ch in " \t" or (newlines and ch in "\r\n"):
                i += 1
            elif ch == "#":
                end = text.find("\n", i)
                i = len(text) if end < 0 else end
            else:
                break
        return i

    def _key(self, i: int, stop: str) -> Tuple[Tuple[str, ...], int]:
        """The (dotted, maybe quoted) key from ``i`` up to ``stop`` outside quotes: its parts
        and the offset of ``stop``."""
        text, j, quoted = self.text, i, False
        while text[j] != stop:
            if text[j] in "\"'":
                j, quoted = self._string_end(j), True
            else:
                j += 1
        raw = text[i:j].strip()
        if not quoted:
            return tuple(part.strip() for part in raw.split(".")), j
        import tomllib

        nested: Any = tomllib.loads(raw + " = 0")  # the quoted parts decoded as tomllib does
        parts = []
        while isinstance(nested, dict):
            ((part, nested),) = nested.items()
            parts.append(part)
        return tuple(parts), j

    def _string_end(self, i: int) -> int:
        """The offset after the string that opens at ``i`` (basic, literal, multi-line)."""
        text = self.text
        quote = text[i]
        if text.startswith(quote * 3, i):
            j = i + 3
            while True:
                if quote == '"' and text[j] == "\\":
                    j += 2
                elif text.startswith(quote * 3, j):
                    end = j + 3
                    while end < len(text) and end - j < 5 and text[end] == quote:
                        end += 1  # up to two quotes just before the closing three are content
                    return end
                else:
                    j += 1
        j = i + 1
        while text[j] != quote:
            j += 2 if quote == '"' and text[j] == "\\" else 1
        return j + 1

    def _value(self, i: int, path: Tuple[Any, ...]) -> int:
        """The offset after the value at ``i``; the keys of inline tables and the elements of
        arrays inside it placed under ``path``."""
        text = self.text
        if text[i] in "\"'":
            return self._string_end(i)
        if text[i] == "[":
            j, n = self._blank(i + 1), 0
            while text[j] != "]":
                end = self._value(j, path + (n,))
                self.spans[path + (n,)] = self._lines.span(j, end)
                j, n = self._blank(end), n + 1
                if text[j] == ",":
                    j = self._blank(j + 1)
            return j + 1
        if text[i] == "{":
            j = self._blank(i + 1)
            while text[j] != "}":
                j = self._blank(self._pair(j, path))
                if text[j] == ",":
                    j = self._blank(j + 1)
            return j + 1
        # a number, boolean or date-time (which may hold a space): up to what ends a value
        found = _TOML_VALUE_END().search(text, i)
        end = found.start() if found else len(text)
        while end > i and text[end - 1] in " \t\r":
            end -= 1
        return end
