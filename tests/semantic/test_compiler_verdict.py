"""CPython's verdict on a file is the compiler's, not only the parser's: a file the parser
accepts but the compiler refuses (``return`` outside a function, ``nonlocal`` at module level)
never runs, so it is MP000. The tree is parsed once and compiled; compiling the tree must give
exactly what compiling the text gives."""
import ast
import sys

import pytest

from precision_lint.engine import check_source, fix_source
from precision_lint.semantic.syntax import cpython_tree

REFUSED = {
    "return-outside-function": ("import torch\nreturn 1\n", "'return' outside function", 2, 0),
    "yield-outside-function": ("import torch\nyield 1\n", "'yield' outside function", 2, 0),
    "break-outside-loop": ("import torch\nbreak\n", "'break' outside loop", 2, 0),
    "nonlocal-at-module-level": ("import torch\nnonlocal x\n", "nonlocal declaration not allowed at module level", 2, 0),
    "no-binding-for-nonlocal": ("import torch\ndef f():\n    nonlocal y\n", "no binding for nonlocal 'y' found", 3, 4),
    "assigned-before-global": (
        "import torch\ndef f():\n    x = 1\n    global x\n", "name 'x' is assigned to before global declaration", 4, 4,
    ),
    "return-value-in-async-generator": (
        "async def f():\n    yield 1\n    return 2\n", "'return' with value in async generator", 3, 4,
    ),
    "late-future-import": ("x = 1\nfrom __future__ import annotations\n", "from __future__ imports must occur at the beginning of the file", 2, 0),
}


@pytest.mark.parametrize("src,message,line,col", REFUSED.values(), ids=REFUSED.keys())
def test_what_only_the_compiler_refuses_is_MP000(src, message, line, col):
    found = [(d.code, d.message, d.span.line, d.span.col) for d in check_source(src, "a.py")]
    assert found == [("MP000", f"Cannot parse file: SyntaxError: {message}", line, col)]


@pytest.mark.parametrize("src", [s for s, *_ in REFUSED.values()])
def test_compiling_the_tree_gives_the_verdict_of_compiling_the_text(src):
    try:
        compile(src, "a.py", "exec", dont_inherit=True)
    except SyntaxError as err:
        expected = (f"SyntaxError: {err.msg}", err.lineno, err.offset - 1)
    tree, error = cpython_tree(src, "a.py")
    assert tree is None and (error.message, error.line, error.col) == expected


@pytest.mark.parametrize(
    "src",
    [
        "import torch\nx = 1\nif x is 1:\n    pass\nassert (x, 'why')\n",  # warnings, not errors
        "import torch\nx = " + " + ".join(["a"] * 1500) + "\n",  # too deep to hand the tree back: the text compiles
        "import torch\ndef f():\n    return 1\nfor i in range(3):\n    break\n",
    ],
    ids=["syntax-warnings", "deep-expression", "ordinary"],
)
def test_what_the_compiler_accepts_is_no_MP000(src):
    tree, error = cpython_tree(src, "a.py")
    assert error is None and isinstance(tree, ast.Module)
    assert [d.code for d in check_source(src, "a.py") if d.code == "MP000"] == []


PEP_701 = 'rows = {"a": 1}\nprint(f"{"on" if rows else "off"}: {len(rows)}")\nprint(f"{\'\\t\'.join(rows)}")\n'


TRAINER = "from transformers import Trainer\nTrainer(model=m, tokenizer=tok)\n"
OLDER_PYTHON = pytest.mark.skipif(
    sys.version_info >= (3, 12), reason="Python 3.12 parses PEP 701 f-strings itself: nothing is put aside"
)


@OLDER_PYTHON
def test_a_file_of_f_strings_only_python_3_12_compiles_is_read_with_them_put_aside():
    """Review 27's held-out tools: f-strings with a quote of their own kind or a backslash in a
    replacement field run on 3.12 and later, and this interpreter refuses them. The rest of the
    file is still read (``workspace/fstring_mask.py``): the Trainer call after them is MP301 at
    its own column, and its fix leaves the f-strings as written. Never MP000; an f-string wrong on
    every version stays MP000."""
    found = [(d.code, d.span.line, d.span.col) for d in check_source(PEP_701 + TRAINER, "report.py")]
    assert found == [("MP301", 5, 17)]
    fixed = fix_source(PEP_701 + TRAINER, "report.py")
    assert fixed == PEP_701 + TRAINER.replace("tokenizer=", "processing_class=")
    assert [d.code for d in check_source('x = f"{1 +}"\n', "bad.py")] == ["MP000"]


@OLDER_PYTHON
def test_an_f_string_no_padded_replacement_keeps_in_place_leaves_the_file_unread():
    """A single-quoted f-string whose replacement field spans lines (3.11: "unterminated string
    literal"), outside brackets, with code after it on its last line: put aside, its line break
    would end the statement there. Such a file is not read and says so (MP002), never MP000
    and never a pass; inside brackets the same f-string is put aside and the file read."""
    found = check_source('import torch\nx = f"{"a"\n} " + y\n' + TRAINER, "report.py")
    assert [(d.code, d.span.line) for d in found] == [("MP002", 2)]
    assert "only Python 3.12 and later compile (PEP 701)" in found[0].message
    found = check_source('import torch\nx = (f"{"a"\n} " + y)\n' + TRAINER, "report.py")
    assert [(d.code, d.span.line) for d in found] == [("MP301", 5)]


PEP_701_CELL = 'def pair_to_token(pair):\n    return f"{pair[0]}{pair[1].lstrip("#")}"\n'


@OLDER_PYTHON
def test_a_notebook_cell_of_f_strings_only_python_3_12_compiles_is_read_with_them_put_aside():
    """Review 29's notebook (its kernel recorded Python 3.12.8): a cell this interpreter refuses
    only for a PEP 701 f-string is read as a file of such text is, and the notebook's fix
    writes the f-string's cell back as it was."""
    from precision_lint.workspace.notebook import boundary_lines, cell_position, from_cells, parse

    raw = from_cells([PEP_701_CELL + "import torch\nt = torch.zeros(1).cuda()\n", TRAINER])
    found = check_source(raw.decode(), "tokens.ipynb")
    boundaries = boundary_lines(parse(raw).text)  # the findings' lines are the joined module's
    where = [(d.code, cell_position(boundaries, d.span.line), d.span.col) for d in found]
    assert where == [("MP301", (2, 2), 17)], [d.message for d in found]
    fixed = parse(fix_source(raw.decode(), "tokens.ipynb").encode())
    assert [c.source for c in fixed.cells] == [
        PEP_701_CELL + "import torch\nt = torch.zeros(1).cuda()\n", TRAINER.replace("tokenizer=", "processing_class=")
    ]


@pytest.mark.parametrize("cell", ['x = f"{1 +}"\n', 'x = f"{pair[0}"\n', 'x = f"{a!z}"\n'])
def test_a_notebook_cell_whose_f_string_is_wrong_on_every_version_is_MP000(cell):
    """LibCST refuses these too: no Python runs them, so the cell is MP000 as before."""
    from precision_lint.workspace.notebook import from_cells

    found = check_source(from_cells(["import torch\n", cell]).decode(), "nb.ipynb")
    assert [d.code for d in found] == ["MP000"] and "f-string" in found[0].message, [d.message for d in found]
