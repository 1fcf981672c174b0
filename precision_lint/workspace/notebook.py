"""Jupyter notebooks (``.ipynb``): one Python module made of the code cells, and back.

Kaggle and Colab users train in notebooks. A notebook is linted as one module:
its code cells joined in cell order, each after a *boundary line* (a comment)
that names the cell, so positions and fixed texts can always be mapped back to
cells — also after fixes have added or removed lines.

IPython syntax that is not Python (``%pip install``, ``!nvidia-smi``,
``files = !ls``, ``obj?``, ``%%bash`` cells) is replaced, line for line, by a
neutral placeholder (``pass`` or a comment) so the module parses; placeholders
are put back when the cells are written. Columns of the other lines never move.

A cell is compiled as IPython compiles it: after IPython's cleanup (its first line's
indentation and pasted ``>>> ``/``... `` prompts removed, see :func:`ipython_cleaned`), a cell
that compiles only then runs in Jupyter and is no error (it becomes comments, not read).

A ``%%writefile train.py`` cell (also ``-a``/``--append``, and its alias ``%%file``)
keeps its body as written: that body is the Python module the notebook writes, not
code the kernel runs. The joined text holds it verbatim (so positions and fixes
land in the cell as for any other cell), and ``written.py`` checks it as the module
``train`` instead of as part of the notebook's own code. A ``%%writefile config.yaml``
cell becomes comments of the same length (its columns stay where they are): a script
that loads that file reads the cell (``written.py``).

Writing back keeps everything but the changed cells' ``source``: outputs,
metadata, key order, indentation, ``ensure_ascii`` behaviour and the trailing
newline. A notebook with no change is never rewritten.

Cell numbers follow ruff: ``cell 3`` is the third *code* cell (markdown cells do
not count).
"""
from __future__ import annotations

import re
from .._dataclass import dataclass
from typing import List, Optional, Sequence, Tuple

from . import fstring_mask
from .configfiles import is_config_file
from .hardware import notebook_outputs
from .._regex import lazy

# The first line of a Databricks notebook exported as source (see is_databricks)
DATABRICKS_HEADER = "# Databricks notebook source"

SUFFIX = ".ipynb"
BOUNDARY = "# precision-lint: notebook cell {n} #"
_BOUNDARY_RE = lazy(r"^# precision-lint: notebook cell (\d+) #$")
PLACEHOLDER = "pass  # precision-lint: IPython line"
CONTINUATION = "# precision-lint: IPython line"
COMMENTED = "# precision-lint: IPython cell: "
# A cell that does not compile is masked line for line like an IPython cell; the line of its
# error says where and why (the column, then CPython's message): that cell is its own MP000,
# and the notebook's other cells are still checked.
CELL_ERROR_PREFIX = "# precision-lint: cell does not parse at column "
# A cell this interpreter refuses only for an f-string Python 3.12 compiles (PEP 701) is masked
# the same way, but is no error: it was not read (MP002), and the other cells are still checked.
CELL_UNREAD_PREFIX = "# precision-lint: cell not read at column "

# Cell magics whose body is Python: only their first line is IPython syntax.
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug", "memit", "pypy"}
# Cell magics that write their body to a file (``%%file`` is IPython's alias of ``%%writefile``).
WRITEFILE_MAGICS = {"writefile", "file"}
# IPython line syntax: %magic, %%cellmagic, !shell, ?help / help?, x = !cmd, x = %magic
_MAGIC_LINE = lazy(r"^\s*(?:[%!?]|\?\?)")
_MAGIC_ASSIGN = lazy(r"^\s*[A-Za-z_][\w.,\s\[\]]*=\s*[%!]")
_HELP_SUFFIX = lazy(r"^\s*[A-Za-z_][\w.]*\?{1,2}\s*$")
# IPython's automagic: `pip install x` without `%` runs `%pip` (on by default)
_AUTOMAGIC = lazy(r"^\s*(?:pip|conda|mamba)\s+(?:install|uninstall|list|show|freeze|download)\b")
# IPython's line magics (IPython 8, with ipykernel's) and its default shell aliases on POSIX
# (`ls`, `cat`, `mkdir` ...), which automagic also runs without `%`: a cell whose only line is
# `cd ..` runs `%cd ..` in Jupyter (when no variable of that name shadows it).
AUTOMAGIC_NAMES = frozenset(
    """
    alias alias_magic autoawait autocall automagic bookmark cd colors conda config debug dhist dirs
    doctest_mode ed edit env gui hist history killbgscripts load load_ext loadpy logoff logon
    logstart logstate logstop lsmagic macro magic mamba matplotlib micromamba notebook page pastebin
    pdb pdef pdoc pfile pinfo pinfo2 pip popd pprint precision prun psearch psource pushd pwd pycat
    pylab quickref recall rehashx reload_ext rep rerun reset reset_selective run save sc set_env sx
    system tb time timeit unalias unload_ext who who_ls whos xdel xmode
    clear less more man autosave connect_info qtconsole
    mkdir rmdir mv rm cp cat ls ll lf lk ldir lx
    """.split()
)
_AUTOMAGIC_CELL = lazy(r"^\s*([A-Za-z_]\w*)(?:\s|$)")


class NotebookError(Exception):
    """A notebook that cannot be read, or fixed text that cannot be mapped back to its cells."""


def is_notebook(path: str) -> bool:
    return str(path).lower().endswith(SUFFIX)


# --- IPython lines -----------------------------------------------------------------------
def is_ipython_line(line: str) -> bool:
    """Whether a line is IPython's, not Python's: ``!pip install x``, ``%cd``, ``x = !ls``,
    ``obj?``, an automagic ``pip install x``."""
    return bool(_MAGIC_LINE().match(line) or _MAGIC_ASSIGN().match(line) or _HELP_SUFFIX().match(line) or _AUTOMAGIC().match(line))


@dataclass(frozen=True)
class WriteFile:
    """What a ``%%writefile [-a] PATH`` cell writes: the path as given, and whether it appends."""

    target: str
    append: bool

    @property
    def is_python(self) -> bool:
        return self.target.lower().endswith(".py")

    @property
    def is_config(self) -> bool:
        """A config file a script may load by its path (``configfiles.py`` reads it from the cell)."""
        return is_config_file(self.target)


def blank_line(line: str) -> str:
    """A line as a comment of the same length (``#`` and spaces), its line ending kept: a
    placeholder whose every column is where the original's is."""
    content = line.rstrip("\r\n")
    return ("#" + " " * (len(content) - 1) if content else "") + line[len(content) :]


def write_target(first_line: str) -> Optional[WriteFile]:
    """The file a cell's first line writes (``%%writefile -a src/train.py``), else None
    (another cell magic, or a line IPython would refuse: no file name, an unknown option)."""
    line = first_line.strip()
    if not line.startswith("%%"):
        return None
    import shlex

    try:
        words = shlex.split(line[2:])
    except ValueError:  # an unclosed quote: IPython's argument parser refuses it too
        return None
    if not words or words[0] not in WRITEFILE_MAGICS:
        return None
    append = False
    names = []
    for word in words[1:]:
        if word in ("-a", "--append"):
            append = True
        elif word.startswith("-"):
            return None
        else:
            names.append(word)
    return WriteFile(names[0], append) if len(names) == 1 else None


def automagic_name(source: str) -> Optional[str]:
    """The line magic a cell runs through IPython's automagic (``cd ..`` runs ``%cd ..``), or None.

    IPython applies automagic to a cell of one line only (its "dynamic transformations";
    ``cd ..`` under a comment is a SyntaxError), and only to a line that starts with a magic's
    name, alone or followed by a space. Only a line that does not compile as Python is taken
    for one: ``pwd`` alone, ``ls -la`` or ``cd /data`` do compile, and are read as the Python
    they are (nothing to check in them either way); an indented one does not (IPython dedents
    the cell first)."""
    lines = source.splitlines()
    if len(lines) != 1:
        return None
    match = _AUTOMAGIC_CELL().match(lines[0])
    if match is None or match.group(1) not in AUTOMAGIC_NAMES:
        return None
    rest = lines[0][match.end(1):].lstrip()
    if rest.startswith("=") and not rest.startswith("=="):
        return None  # `cd = ...`: IPython's assignment check keeps it Python
    import ast

    try:
        compile(lines[0], "<cell>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError):
        return match.group(1)
    return None


def to_python(source: str, shadowed: frozenset = frozenset()) -> Tuple[str, Tuple[Tuple[int, str], ...]]:
    """(Python text, ((line index, original line), ...)) for one cell's source.

    Each IPython line becomes one placeholder line (same number of lines, other
    lines untouched); the originals are returned so they can be put back. ``shadowed``: the
    names the notebook binds, which IPython's automagic does not take for magics.
    """
    lines = source.splitlines(keepends=True)
    name = automagic_name(source)
    if name is not None and name not in shadowed:
        body = lines[0].rstrip("\r\n")  # IPython dedents a cell: the placeholder has no indent
        return PLACEHOLDER + lines[0][len(body):], ((0, lines[0]),)
    replaced: List[Tuple[int, str]] = []
    out: List[str] = []

    def swap(i: int, line: str, placeholder: str) -> None:
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        replaced.append((i, line))
        out.append(placeholder + ending)

    first = lines[0].strip() if lines else ""
    written = write_target(first) if first.startswith("%%") else None
    if written is not None and written.is_python:  # the module it writes, verbatim (IPython lines and all)
        # a comment, not `pass`: the notebook's own module has no statement in this cell
        swap(0, lines[0], COMMENTED + "0")
        out.extend(lines[1:])
        return "".join(out), tuple(replaced)
    if written is not None and written.is_config:  # a config file: comments of the same length
        swap(0, lines[0], COMMENTED + "0")
        for i in range(1, len(lines)):
            swap(i, lines[i], blank_line(lines[i].rstrip("\r\n")))  # swap keeps the line ending
        return "".join(out), tuple(replaced)
    if first.startswith("%%"):
        name = first[2:].split(None, 1)[0] if len(first) > 2 else ""
        if name not in PYTHON_CELL_MAGICS:  # %%bash, %%writefile, %%html ...: not this module's code
            for i, line in enumerate(lines):
                swap(i, line, COMMENTED + f"{i}")
            return "".join(out), tuple(replaced)
        swap(0, lines[0], PLACEHOLDER)
        start = 1
    else:
        start = 0
    text, replaced_lines = _ipython_lines(lines, start, out, replaced, swap)
    return _masked_if_broken(text, replaced_lines, lines)


def _ipython_lines(lines, start, out, replaced, swap):
    """The cell's lines from ``start`` with each IPython line swapped for a placeholder."""
    for i, kind in line_kinds(lines, start):
        line = lines[i]
        if kind == "continuation":
            swap(i, line, CONTINUATION)
        elif kind == "ipython":
            indent = line[: len(line) - len(line.lstrip(" \t"))]
            swap(i, line, indent + PLACEHOLDER)
        else:
            out.append(line)
    return "".join(out), tuple(replaced)


def line_kinds(lines: Sequence[str], start: int = 0):
    """``(index, kind)`` of each line from ``start``: ``"ipython"`` (a line IPython reads as its
    own: :func:`is_ipython_line` where a logical line starts), ``"continuation"`` (a line such a
    line continues with a backslash) or ``"python"``. IPython reads an escape only where a
    logical line starts (its transformers take the cell's tokens line by line): `    != LIMIT`
    inside `if (...)`, `% 2` after `x = (a`, a `%` line inside a triple-quoted string, are
    Python's."""
    in_string: Optional[str] = None  # the triple-quoted string the lines above left open
    depth = 0  # brackets the Python lines above left open
    joined = False  # the Python line above ended with a backslash
    continued = False  # the IPython line above ended with a backslash
    for i in range(start, len(lines)):
        line = lines[i]
        if continued:
            continued = line.rstrip("\r\n").endswith("\\")
            yield i, "continuation"
        elif in_string is None and not depth and not joined and is_ipython_line(line):
            continued = line.rstrip("\r\n").endswith("\\")
            yield i, "ipython"
        else:
            depth, in_string, joined = _python_line_state(line, depth, in_string)
            yield i, "python"


def quieted_ipython_lines(source: str) -> Tuple[str, Tuple[int, ...]]:
    """``source`` (a ``.py`` file of notebook code: cells pasted into it, or a Colab export)
    with each line IPython reads as its own (:func:`line_kinds`: ``!pip install -q peft``) made
    a statement of the same length that does nothing (``pass#ip install -q peft``), each line
    such a line continues with a backslash a comment, and the indexes of the IPython lines.
    Nothing else moves: an offset, line or column of the quieted text is the same in the
    original, so what is found, or fixed, in one holds in the other."""
    lines = source.splitlines(keepends=True)
    kinds = [(i, kind) for i, kind in line_kinds(lines) if kind != "python"]
    if not kinds:
        return source, ()
    for i, kind in kinds:
        line = lines[i]
        body = line.rstrip("\r\n")
        indent = len(body) - len(body.lstrip(" \t"))
        rest = body[indent:]
        if kind == "continuation":  # a line `!python train.py \` continues: a comment
            quiet = "#" + rest[1:] if rest else rest
        else:
            quiet = "pass#" + rest[5:] if len(rest) >= 5 else "#" + rest[1:]
        lines[i] = body[:indent] + quiet + line[len(body):]
    return "".join(lines), tuple(i for i, kind in kinds if kind == "ipython")


def _python_line_state(line: str, depth: int, in_string: Optional[str]) -> Tuple[int, Optional[str], bool]:
    """(brackets open, the triple-quoted string open, whether the line continues with a
    backslash) after a line of Python, from those before it: strings, comments and brackets
    read as the tokenizer reads them, without tokenizing the cell (its IPython lines are no
    Python)."""
    body = line.rstrip("\r\n")
    i, n = 0, len(body)
    quote = in_string
    comment = False
    while i < n:
        ch = body[i]
        if quote is not None:
            if ch == "\\":
                i += 2
            elif body.startswith(quote, i):
                i += len(quote)
                quote = None
            else:
                i += 1
            continue
        if ch == "#":
            comment = True
            break
        if body.startswith(('"""', "'''"), i):
            quote = body[i : i + 3]
            i += 3
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        i += 1
    joined = not comment and body.endswith("\\") and (quote is None or len(quote) == 1)
    if quote is not None and len(quote) == 1 and not joined:
        quote = None  # a one-quote string ends with its line (unterminated: Python refuses it)
    return depth, (quote if quote is not None and len(quote) == 3 else None), joined


def _cell_error(text: str) -> Optional[Tuple[int, int, str]]:
    """(0-based line, 0-based column, message) of why a cell's Python does not compile as
    IPython compiles it (top-level ``await`` allowed), or None where it compiles."""
    import ast

    flags = ast.PyCF_ONLY_AST | getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)
    try:
        compile(text, "<cell>", "exec", flags, dont_inherit=True)
        return None
    except SyntaxError as err:
        return (err.lineno or 1) - 1, max((err.offset or 1) - 1, 0), f"SyntaxError: {err.msg}"
    except (RecursionError, MemoryError, ValueError) as err:
        return 0, 0, f"{type(err).__name__}: {err}"


def _masked_if_broken(text: str, replaced: Tuple[Tuple[int, str], ...], lines: List[str]):
    """A cell as :func:`to_python` gives it; one that does not compile as IPython compiles it
    (top-level ``await`` allowed) becomes comments, one per line, its error on its line.

    IPython cleans a cell up before it parses it (:func:`ipython_cleaned`): a cell that does
    not compile as written but compiles after the cleanup of some IPython version (its first
    line indented, ``>>> `` prompts) runs, and is no error: it becomes comments without one
    (its lines are not read: a finding there would have to be placed in lines whose columns
    IPython moved). Where every version refuses it, the error is the one of IPython <= 8's
    cleaned cell (what Colab and Kaggle run), put back at the line and column as written.

    A cell refused only for an f-string that Python 3.12 compiles (``syntax.newer_fstrings``:
    LibCST parses the text CPython was given) runs on a 3.12 kernel: like a ``.py`` file of such
    text, it is not read and says so at its error (MP002, never MP000 and never a pass)."""
    error = _cell_error(text)
    if error is None:
        return text, replaced
    readable = fstring_mask.masked(text) if fstring_mask.refused_for_fstring(error[2]) else None
    if readable is not None and _cell_error(readable) is None:  # Python 3.12's f-strings, each put aside
        changed = [(i, line) for i, (line, now) in enumerate(zip(lines, readable.splitlines(keepends=True))) if line != now]
        return readable, tuple(sorted({**dict(changed), **dict(replaced)}.items()))
    # each version's cleanup of the cell, its text, and why it still does not compile (None: it does)
    cleanups = {}
    for version in (8, 9):
        cleaned = ipython_cleaned(lines, version)
        if cleaned is not None:
            python = _python_lines(cleaned.lines)
            cleanups[version] = (cleaned, python, _cell_error(python))
    prefix = CELL_ERROR_PREFIX
    if any(refused is None for _, _, refused in cleanups.values()):
        where, col, message = -1, 0, ""
    else:
        where, col, message = error
        refused_text = text
        if 8 in cleanups:
            cleaned, refused_text, refused = cleanups[8]
            where, col, message = refused or error
            col += cleaned.removed(where)
            where += cleaned.dropped
        where = min(max(where, 0), max(len(lines) - 1, 0))
        prefix, message = _newer_fstrings_note(refused_text, message)
    originals = dict(replaced)
    out, masked = [], []
    for i, line in enumerate(lines):
        original = originals.get(i, line)
        body = line.rstrip("\r\n")
        note = f"{prefix}{col}: {message}" if i == where else COMMENTED + f"{i}"
        out.append(note.replace("\n", " ").replace("\r", " ") + line[len(body):])
        masked.append((i, original))
    return "".join(out), tuple(masked)


def _newer_fstrings_note(text: str, message: str) -> Tuple[str, str]:
    """(prefix, message) of the note on a refused cell's error line: CPython's refusal
    (:data:`CELL_ERROR_PREFIX`), or, for an f-string only Python 3.12 compiles, that the cell
    was not read (:data:`CELL_UNREAD_PREFIX`, worded as for a file)."""
    from ..semantic import syntax
    from ..semantic.records import ParseError

    refusal = ParseError(message, 1, 0)
    if not syntax.newer_fstrings(text, refusal):
        return CELL_ERROR_PREFIX, message
    return CELL_UNREAD_PREFIX, syntax.newer_fstrings_unread(refusal, "cell").message


def _python_lines(lines: List[str]) -> str:
    """A cell's lines (no cell magic on the first) with each IPython line a placeholder."""
    replaced: List[Tuple[int, str]] = []
    out: List[str] = []

    def swap(i: int, line: str, placeholder: str) -> None:
        out.append(placeholder + line[len(line.rstrip("\r\n")) :])

    return _ipython_lines(lines, 0, out, replaced, swap)[0]


# --- IPython's cleanup of a cell ------------------------------------------------------------
# Before it parses a cell, IPython's input transformer (IPython.core.inputtransformer2,
# TransformerManager.cleanup_transforms) drops the cell's leading blank lines, removes the
# first line's indentation (leading_indent) and strips pasted prompts (classic_prompt: the
# Python shell's ``>>> ``/``... ``, ipython_prompt: ``In [1]: ``/``   ...: ``). What it strips
# differs between versions (checked on IPython 7.34, 8.39 and 9.18):
# - IPython 7.x and 8.x (Colab ships 7.34, Kaggle 8.x): leading_indent removes the first line's
#   leading spaces/tabs from every line that starts with exactly them; a prompt stripper strips
#   its prompt from every line when the first line opens with the first prompt (``>>> ``,
#   ``In [1]: ``) or the second line with any of its prompts (so a cell of ``... `` lines under
#   an unprompted first line is stripped too).
# - IPython 9.x: leading_indent is textwrap.dedent (the indentation common to every non-blank
#   line); ``>>>``/``...`` prompts (indented or not, the space after optional) are stripped
#   only where some line of the cell opens with ``>>>``, and the stripped lines are dedented
#   again. (IPython 9 leaves prompts inside a triple-quoted string alone; that refinement is
#   not followed here: a cell is only ever let through when some version compiles it.)
_INDENT = lazy(r"^[ \t]+")
_PY_PROMPT_FIRST = lazy(r"^>>>( |$)")
_PY_PROMPT = lazy(r"^(>>>|\.\.\.)( |$)")
_IPY_PROMPT = lazy(r"^(((\[nav\]|\[ins\])? )?In \[\d+\]: |\s*\.{3,}: ?)")
_DOCTEST_OPENS = lazy(r"^\s*>>>")
_DOCTEST_PROMPT = lazy(r"^\s*(>>>|\.\.\.)[ \t]?")


@dataclass(frozen=True)
class Cleaned:
    """A cell's lines after IPython's cleanup: ``dropped`` leading blank lines are gone, and
    every other line lost a prefix (its indentation, a prompt), never anything else."""

    lines: List[str]
    dropped: int
    originals: Tuple[str, ...]

    def removed(self, line: int) -> int:
        """How many characters IPython took off the start of the cleaned text's ``line`` (0-based)."""
        if not 0 <= line < len(self.lines):
            return 0
        return len(self.originals[line + self.dropped]) - len(self.lines[line])


def ipython_cleaned(lines: List[str], version: int) -> Optional[Cleaned]:
    """The cell's lines as IPython ``version`` (8: IPython 7.x and 8.x; 9: 9.x) cleans them up
    before parsing, or None where its cleanup leaves them as they are."""
    import textwrap

    dropped = 0
    while dropped < len(lines) and not lines[dropped].strip():
        dropped += 1
    out = list(lines[dropped:])
    if not out:
        return None
    if version >= 9:
        out = textwrap.dedent("".join(out)).splitlines(keepends=True)
        if any(_DOCTEST_OPENS().match(l) for l in out):
            stripped = [_DOCTEST_PROMPT().sub("", l, count=1) for l in out]
            if stripped != out:
                out = textwrap.dedent("".join(stripped)).splitlines(keepends=True)
        out = _prompts_stripped(out, _IPY_PROMPT(), _IPY_PROMPT())
    else:
        indent = _INDENT().match(out[0])
        if indent is not None:
            space = indent.group(0)
            out = [l[len(space):] if l.startswith(space) else l for l in out]
        out = _prompts_stripped(out, _PY_PROMPT_FIRST(), _PY_PROMPT())
        out = _prompts_stripped(out, _IPY_PROMPT(), _IPY_PROMPT())
    out += [""] * (len(lines) - dropped - len(out))  # dedent empties a last line of spaces: it is still a line
    if dropped == 0 and out == list(lines):
        return None
    return Cleaned(out, dropped, tuple(lines))


def _prompts_stripped(lines: List[str], first: "re.Pattern", prompt: "re.Pattern") -> List[str]:
    """IPython <= 8's (and IPython 9's ``In [1]:``) prompt stripping: the prompt is removed from
    every line when the first line opens with the first prompt or the second with any prompt."""
    if lines and (first.match(lines[0]) or (len(lines) > 1 and prompt.match(lines[1]))):
        return [prompt.sub("", l, count=1) for l in lines]
    return lines


# --- the notebook ------------------------------------------------------------------------------
@dataclass(frozen=True)
class CodeCell:
    """A notebook code cell: its source as stored, the Python the checks read (IPython lines
    blanked to keep every offset), and what a fix needs to write it back in the same form."""

    index: int  # position in the notebook's "cells" list
    number: int  # 1-based among code cells
    source: str  # as in the notebook
    python: str  # with IPython lines replaced
    magics: Tuple[Tuple[int, str], ...]  # (line index, original line)
    as_list: bool  # "source" is stored as a list of lines

    @property
    def writes(self) -> Optional[WriteFile]:
        """The Python file a ``%%writefile x.py`` cell writes (its body is that module), else None."""
        written = self.written
        return written if written is not None and written.is_python else None

    @property
    def written(self) -> Optional[WriteFile]:
        """The file a ``%%writefile`` cell writes (Python or a config file), else None."""
        if not self.magics or self.magics[0][0] != 0:
            return None
        written = write_target(self.magics[0][1])
        return written if written is not None and (written.is_python or written.is_config) else None


@dataclass(frozen=True)
class JsonStyle:
    """How the notebook's JSON is laid out (indentation, separators, escaping, the final newline,
    a BOM): a fixed notebook is written back in that layout, so its diff holds only the fix."""

    indent: Optional[str]
    separators: Tuple[str, str]
    ensure_ascii: bool
    trailing_newline: bool
    bom: bool = False


class Notebook:
    """A parsed notebook, its code cells, and how to write it back exactly."""

    # Whether the text the checks read has the file's own lines (a Databricks source notebook)
    # rather than the joined cells of a JSON notebook, whose positions are shown as cells.
    keeps_lines = False

    @property
    def command_lines(self) -> Tuple[str, ...]:
        """The notebook's IPython lines (``%pip install x``, ``!python train.py``, a ``%%bash``
        cell's lines): what its installs and launches are read from."""
        return tuple(line for cell in self.cells for _, line in cell.magics)

    @property
    def command_rows(self) -> Tuple[Tuple[int, str], ...]:
        """Each IPython line of :attr:`command_lines` with the row of :attr:`text` it stands on:
        the code below it runs after it (a later cell's ``!pip install -U transformers``)."""
        return tuple(
            (first + i, line) for cell, (first, _) in zip(self.cells, self.code_cell_rows()) for i, line in cell.magics
        )

    def code_cell_rows(self) -> Tuple[Tuple[int, int], ...]:
        """The first and last row of :attr:`text` each code cell stands on, in cell order (one
        boundary line between two cells)."""
        out = []
        row = 1
        for n, cell in enumerate(self.cells):
            row += n > 0  # the boundary line before the cell
            lines = _terminated(cell.python).count("\n")
            out.append((row, row + max(lines, 1) - 1))
            row += lines
        return tuple(out)

    def __init__(self, raw: bytes, data: dict, cells: Sequence[CodeCell], style: JsonStyle, python: bool = True):
        self.raw = raw
        # what the checks read of the outputs (the record of the run it is), read once: the
        # outputs themselves are not held (a notebook of plots holds megabytes of images, and a
        # check holds every notebook it reads until the end: malaya-speech's 789 notebooks are
        # 338 MB of JSON). A fixed notebook is written back from its bytes (:meth:`encode`).
        self.outputs: Tuple[str, ...] = tuple(notebook_outputs(data))
        self.data = _without_outputs(data)
        self.cells = list(cells)
        self.style = style
        self.is_python = python

    # text ↔ cells
    @property
    def text(self) -> str:
        return join([c.python for c in self.cells]) if self.is_python else ""

    @property
    def kernel_python(self) -> Optional[str]:
        """The Python version the kernel that last ran the notebook recorded in its metadata
        (``language_info.version``: ``3.7.12`` for a Kaggle image of 2022): the run the notebook
        was written in. None where it records none (or not a Python kernel)."""
        if not self.is_python:
            return None
        info = (self.data.get("metadata") or {}).get("language_info") or {}
        found = info.get("version") if isinstance(info, dict) else None
        return found.strip() if isinstance(found, str) and re.match(r"^3\.\d+(?:\.\d+)?$", found.strip()) else None

    @property
    def writes_files(self) -> bool:
        """Whether a ``%%writefile`` cell writes a module or a config file (see ``written.py``)."""
        return any(c.written is not None for c in self.cells)

    def cell(self, number: int) -> CodeCell:
        return self.cells[number - 1]

    def cell_sources(self, fixed_text: str) -> List[str]:
        """Each code cell's source after fixes (IPython lines put back), in cell order."""
        chunks = split(fixed_text)
        if len(chunks) != len(self.cells) or not self.is_python:
            raise NotebookError("the fixed text no longer has one part per code cell")
        return [
            cell.source if chunk == _terminated(cell.python) else _restore(cell, chunk)
            for cell, chunk in zip(self.cells, chunks)
        ]

    def encode(self, fixed_text: str) -> bytes:
        """The notebook's bytes with ``fixed_text`` (a fixed joined module) put back into its cells.

        Only the ``source`` of changed cells is replaced; the original bytes come back when
        nothing changed."""
        sources = self.cell_sources(fixed_text)
        changed = [(cell, new) for cell, new in zip(self.cells, sources) if new != cell.source]
        if not changed:
            return self.raw
        import json

        data = json.loads(self.raw.decode("utf-8-sig"))
        for cell, new in changed:
            data["cells"][cell.index]["source"] = new.splitlines(keepends=True) if cell.as_list else new
        return dump(data, self.style)


def _without_outputs(data: dict) -> dict:
    """The notebook's JSON without its code cells' outputs (:attr:`Notebook.outputs` keeps what
    is read of them)."""
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        return data
    return {**data, "cells": [{k: v for k, v in c.items() if k != "outputs"} if isinstance(c, dict) else c for c in cells]}


def join(cells: Sequence[str]) -> str:
    parts = []
    for n, text in enumerate(cells, start=1):
        if n > 1:
            parts.append(BOUNDARY.format(n=n) + "\n")
        parts.append(_terminated(text))
    return "".join(parts)


def _terminated(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def split(text: str) -> List[str]:
    """The per-cell chunks of a joined text (each newline-terminated, or empty)."""
    chunks: List[str] = [""]
    for line in text.splitlines(keepends=True):
        m = _BOUNDARY_RE().match(line.rstrip("\r\n"))
        if m and int(m.group(1)) == len(chunks) + 1:
            chunks.append("")
        else:
            chunks[-1] += line
    return chunks


def boundary_lines(text: str) -> List[int]:
    """1-based line numbers of the boundary lines of a joined text (cell 2's first, ...)."""
    out = []
    for i, line in enumerate(text.splitlines(), start=1):
        m = _BOUNDARY_RE().match(line)
        if m and int(m.group(1)) == len(out) + 2:
            out.append(i)
    return out


def cell_position(boundaries: Sequence[int], line: int) -> Tuple[int, int]:
    """(cell number, line within the cell) of a line of the joined text."""
    cell, first = 1, 1
    for n, b in enumerate(boundaries, start=2):
        if b < line:
            cell, first = n, b + 1
        else:
            break
    return cell, line - first + 1


_LINE_REF = lazy(r"\(line (\d+)")
_OTHER_FILE = lazy(r" in \S+ $")


def cell_references(message: str, text: str) -> str:
    """A message about a notebook with its ``(line N)`` references to the joined text made
    ``(cell C, line L)``, as its positions are shown; references to another file
    (``in models.py (line 5)``, ``(models.py, line 5)``) are left as they are."""
    if "(line " not in message:
        return message
    boundaries = boundary_lines(text)

    def swap(match: "re.Match") -> str:
        if _OTHER_FILE().search(message[: match.start()]):
            return match.group(0)
        cell, row = cell_position(boundaries, int(match.group(1)))
        return f"(cell {cell}, line {row}"

    return _LINE_REF().sub(swap, message)


def _restore(cell: CodeCell, chunk: str) -> str:
    """Put the IPython lines back into a fixed chunk; refuse when a fix touched one."""
    if not cell.source.endswith("\n") and chunk.endswith("\n"):
        chunk = chunk[:-1]
    if not cell.magics:
        return chunk
    old = cell.python.splitlines(keepends=True)
    new = chunk.splitlines(keepends=True)
    originals = dict(cell.magics)
    import difflib

    # compare without line endings: the last line may have lost its newline above
    matcher = difflib.SequenceMatcher(None, [l.rstrip("\r\n") for l in old], [l.rstrip("\r\n") for l in new], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                if i1 + k in originals:
                    original = originals[i1 + k]
                    body = original.rstrip("\r\n")
                    new[j1 + k] = body + new[j1 + k][len(new[j1 + k].rstrip("\r\n")) :]
        elif any(i in originals for i in range(i1, i2)):
            raise NotebookError(f"a fix would change an IPython line of cell {cell.number}")
    return "".join(new)


# --- reading and writing JSON -----------------------------------------------------------------
def detect_style(text: str) -> JsonStyle:
    trailing = text.endswith("\n")
    indent: Optional[str] = None
    m = re.match(r"\{\r?\n([ \t]+)\"", text)
    if m:
        indent = m.group(1)
    if indent is None:
        separators = (",", ":") if re.search(r'"\s*:\S', text[:200]) and '": ' not in text[:200] else (", ", ": ")
    else:
        separators = (",", ": ")
    ascii_only = all(ord(ch) < 128 for ch in text)
    escaped_non_ascii = re.search(r"\\u(?:00[89a-fA-F]|0[1-9a-fA-F]|[1-9a-fA-F])[0-9a-fA-F]{2}", text) is not None
    return JsonStyle(indent, separators, ascii_only and escaped_non_ascii, trailing)


def dump(data: dict, style: JsonStyle) -> bytes:
    import json

    indent = style.indent
    if indent is not None and set(indent) == {" "}:
        indent = len(indent)
    text = json.dumps(data, indent=indent, separators=style.separators, ensure_ascii=style.ensure_ascii)
    if style.trailing_newline:
        text += "\n"
    return (b"\xef\xbb\xbf" if style.bom else b"") + text.encode("utf-8")


def _python_kernel(data: dict) -> bool:
    meta = data.get("metadata") or {}
    lang = (meta.get("language_info") or {}).get("name") or (meta.get("kernelspec") or {}).get("language")
    return lang is None or str(lang).lower() in ("python", "python3", "ipython", "ipython3")


def parse(raw: bytes) -> Notebook:
    """A :class:`Notebook` from a file's bytes; :class:`NotebookError` if it is not one."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NotebookError(f"cannot decode notebook as UTF-8 ({exc.reason} at byte {exc.start})") from exc
    import json

    try:
        data = json.loads(text)
    except ValueError as exc:
        raise NotebookError(f"invalid notebook JSON: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError("not a notebook: no list of cells (only nbformat 4 is supported)")
    cells: List[CodeCell] = []
    for index, cell in enumerate(data["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        as_list = isinstance(source, list)
        if as_list:
            if not all(isinstance(s, str) for s in source):
                raise NotebookError(f"cell {len(cells) + 1}: source is not text")
            source = "".join(source)
        elif not isinstance(source, str):
            raise NotebookError(f"cell {len(cells) + 1}: source is not text")
        python, magics = to_python(source)
        cells.append(CodeCell(index, len(cells) + 1, source, python, magics, as_list))
    cells = _shadowed_automagic(cells)
    style = detect_style(text)
    if raw.startswith(b"\xef\xbb\xbf"):
        style = JsonStyle(style.indent, style.separators, style.ensure_ascii, style.trailing_newline, True)
    return Notebook(raw, data, cells, style, _python_kernel(data))


def _shadowed_automagic(cells: List[CodeCell]) -> List[CodeCell]:
    """The cells with a one-line automagic cell (``time model(x)``) read as Python again where
    the notebook binds that name (``import time``): IPython runs a magic without ``%`` only
    when no variable shadows its name, so such a line is the syntax error it looks like."""
    magical = [i for i, cell in enumerate(cells) if cell.magics and automagic_name(cell.source) is not None]
    if not magical:
        return cells
    bound = _bound_names(cells)
    out = list(cells)
    for i in magical:
        cell = cells[i]
        if automagic_name(cell.source) in bound:
            python, magics = to_python(cell.source, frozenset(bound))
            out[i] = CodeCell(cell.index, cell.number, cell.source, python, magics, cell.as_list)
    return out


def _bound_names(cells: Sequence[CodeCell]) -> set:
    """The names the cells bind (assignments, definitions, imports)."""
    import ast

    bound = set()
    for cell in cells:
        try:
            tree = ast.parse(cell.python)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.alias):
                bound.add((node.asname or node.name).split(".")[0])
    return bound


def from_cells(sources: Sequence[str]) -> bytes:
    """A minimal notebook holding these code cells, as file bytes: what an editor's open
    notebook (cell texts, no file yet) is checked as."""
    cells = [
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": s} for s in sources
    ]
    data = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    import json

    return json.dumps(data, indent=1).encode("utf-8")


# --- Databricks notebooks in source form ----------------------------------------------------
# A notebook exported from Databricks as source is a ``.py`` file whose first line is this
# header; its cells are separated by COMMAND lines, its markdown and shell cells are
# ``# MAGIC`` comments, and its Python cells run through IPython (``!deepspeed ...`` and
# ``%pip install x`` are IPython lines there, not syntax errors).
DATABRICKS_SEPARATOR = "# COMMAND ----------"


def is_databricks(path: str, text: Optional[str]) -> bool:
    """Whether a ``.py`` file is a Databricks notebook in source form: its first line is
    exactly the header (a cheap test, made on the text's first bytes)."""
    if text is None or not str(path).lower().endswith(".py") or not text.startswith(DATABRICKS_HEADER):
        return False
    rest = text[len(DATABRICKS_HEADER) : len(DATABRICKS_HEADER) + 1]
    return rest in ("", "\n", "\r")  # the whole first line, whatever its line ending


def is_notebook_text(path: str, text: Optional[str]) -> bool:
    """Whether the text of ``path`` is a notebook's (cells compiled one by one, as IPython
    compiles them): a ``.ipynb`` file, or a Databricks notebook in source form."""
    return is_notebook(path) or is_databricks(path, text)


def _is_separator(line: str) -> bool:
    return line.rstrip("\r\n").rstrip() == DATABRICKS_SEPARATOR


class DatabricksNotebook(Notebook):
    """A Databricks source notebook read as cells. Its text for the checks is the file's own,
    line for line and column for column: each COMMAND line stands as the boundary line of the
    cell it opens and each IPython line as its placeholder, so findings keep the file's
    positions (``keeps_lines``) and fixes are written back with the IPython lines as they were."""

    keeps_lines = True

    def __init__(self, raw: bytes, cells: Sequence[CodeCell], separators: Sequence[str], encoding: str, bom: bool):
        super().__init__(raw, {"metadata": {}, "cells": []}, cells, JsonStyle(None, (",", ":"), False, True), True)
        self.separators = list(separators)
        self.encoding = encoding
        self.bom = bom

    @property
    def command_lines(self) -> Tuple[str, ...]:
        """As for an ``.ipynb``, and the lines of its ``%pip`` and ``%sh`` cells, which the
        export writes as ``# MAGIC %pip install x`` comments."""
        return super().command_lines + tuple(_magic_cell_lines(self.cells))

    @property
    def command_rows(self) -> Tuple[Tuple[int, str], ...]:
        """None placed: a ``%pip`` cell's lines are comments of the file, read as the whole
        file's installs."""
        return ()

    @property
    def writes_files(self) -> bool:
        return False  # `%%writefile` cells are an .ipynb reading (written.py maps cells of a JSON notebook)

    def file_text(self, fixed_text: str) -> str:
        """The file's text for a checked (or fixed) text: IPython lines and COMMAND lines as
        written. Raises NotebookError when a fix touched an IPython line."""
        sources = self.cell_sources(fixed_text)
        parts = [sources[0]]
        for separator, source in zip(self.separators, sources[1:]):
            parts.append(separator)
            parts.append(source)
        return "".join(parts)

    def encode(self, fixed_text: str) -> bytes:
        sources = self.cell_sources(fixed_text)
        if all(new == cell.source for cell, new in zip(self.cells, sources)):
            return self.raw
        data = self.file_text(fixed_text).encode(self.encoding)
        return (b"\xef\xbb\xbf" if self.bom else b"") + data


_MAGIC_PREFIX = lazy(r"^# MAGIC ?")


def _magic_cell_lines(cells: Sequence[CodeCell]) -> List[str]:
    """The commands of the ``# MAGIC %pip`` / ``# MAGIC %sh`` cells (``%pip install x`` as
    written, a shell cell's commands without ``%sh``)."""
    out: List[str] = []
    for cell in cells:
        lines = [l.rstrip("\r\n") for l in cell.source.splitlines() if l.strip() and l.rstrip() != DATABRICKS_HEADER]
        if not lines or not all(_MAGIC_PREFIX().match(l) for l in lines):
            continue
        body = [_MAGIC_PREFIX().sub("", l, count=1) for l in lines]
        first = body[0].strip()
        if first.startswith("%pip ") or first == "%pip":
            out.extend(body)
        elif first.startswith("%sh ") or first == "%sh":
            out.extend([first[3:].strip()] + body[1:])
    return out


def _databricks_cell(number: int, source: str, shadowed: frozenset = frozenset()) -> CodeCell:
    """One cell, its IPython lines masked as in an ``.ipynb`` cell. The blank lines the export
    puts around a cell's code are not part of it (a one-line automagic cell stays one line)."""
    lines = source.splitlines(keepends=True)
    lead = 0
    while lead < len(lines) and not lines[lead].strip():
        lead += 1
    tail = len(lines)
    while tail > lead and not lines[tail - 1].strip():
        tail -= 1
    body = "".join(lines[lead:tail])
    python, magics = to_python(body, shadowed)
    if magics:
        python = "".join(lines[:lead]) + python + "".join(lines[tail:])
        magics = tuple((i + lead, line) for i, line in magics)
    else:
        python = source
    return CodeCell(number - 1, number, source, python, magics, False)


def parse_databricks(raw: bytes, text: str, encoding: str = "utf-8", bom: bool = False) -> DatabricksNotebook:
    """A :class:`DatabricksNotebook` of a source file's text (``is_databricks``): cells split
    at the COMMAND lines."""
    chunks: List[str] = [""]
    separators: List[str] = []
    for line in text.splitlines(keepends=True):
        if _is_separator(line):
            separators.append(line)
            chunks.append("")
        else:
            chunks[-1] += line
    cells = [_databricks_cell(n, chunk) for n, chunk in enumerate(chunks, start=1)]
    if any(cell.magics and automagic_name(cell.source.strip("\r\n")) is not None for cell in cells):
        # a one-line automagic cell (`time model(x)`) is Python where the notebook binds the name
        bound = frozenset(_bound_names(cells))
        cells = [_databricks_cell(n, chunk, bound) for n, chunk in enumerate(chunks, start=1)]
    return DatabricksNotebook(raw, cells, separators, encoding, bom)
