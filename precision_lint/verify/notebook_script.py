"""Run a Jupyter notebook as a script: its code cells, in order, as one Python file.

``verify finetune.ipynb`` lints and fixes the notebook itself (the linter reads notebooks),
but runs it as ``python``-runnable text written next to it in the scratch copy. IPython
syntax has no meaning outside IPython: a line magic or shell line (``%pip install x``,
``!nvidia-smi``, ``files = !ls``, ``obj?``) becomes ``pass`` at the same indentation, and a
cell magic cell other than ``%%time``-like ones (``%%bash``, ``%%writefile``) is left out.
Each cell starts with a comment naming it, and :func:`cell_of` maps a line of the text back
to (cell, line in cell), so a failure is reported where the user sees it.

Cell numbers count code cells only (as the linter's do).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun"}
_MAGIC = re.compile(r"^(\s*)(?:[%!?]|[A-Za-z_][\w.,\s\[\]]*=\s*[%!]|[A-Za-z_][\w.]*\?{1,2}\s*$)")
MARK = "# notebook cell {n}"
_MARK_RE = re.compile(r"^# notebook cell (\d+)$")


class NotebookScriptError(ValueError):
    """The notebook cannot be read."""


def _source(cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def to_script(notebook: Path) -> str:
    try:
        data = json.loads(Path(notebook).read_text(encoding="utf-8"))
        cells = [c for c in data.get("cells", []) if c.get("cell_type") == "code"]
    except (OSError, ValueError, AttributeError) as exc:
        raise NotebookScriptError(f"{notebook}: not a readable notebook ({exc})") from None
    out = []
    for number, cell in enumerate(cells, start=1):
        out.append(MARK.format(n=number))
        lines = _source(cell).splitlines()
        if lines and lines[0].lstrip().startswith("%%"):
            magic = lines[0].lstrip()[2:].split()[0] if lines[0].strip() != "%%" else ""
            if magic not in PYTHON_CELL_MAGICS:
                out.extend("# " + line for line in lines)  # %%bash etc.: not Python
                continue
            lines = ["pass"] + lines[1:]
        for line in lines:
            match = _MAGIC.match(line)
            out.append(f"{match.group(1)}pass" if match else line)
    return "\n".join(out) + "\n"


def cell_of(script_text: str, line: int):
    """(cell number, line within the cell) of ``line`` (1-based) of the script text."""
    lines = script_text.splitlines()
    cell, start = None, 0
    for index, text in enumerate(lines[:line], start=1):
        match = _MARK_RE.match(text)
        if match:
            cell, start = int(match.group(1)), index
    if cell is None:
        return None
    return cell, line - start
