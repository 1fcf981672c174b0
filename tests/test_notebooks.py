"""Jupyter notebooks: code cells linted as one module, positions per cell, fixes written back
into the cells with outputs, metadata and the JSON formatting untouched."""
import json

import pytest

from conftest import findings_in, run_cli
from precision_lint.workspace.discovery import discover
from precision_lint.engine import check_source
from precision_lint.workspace.notebook import COMMENTED, CONTINUATION, PLACEHOLDER, NotebookError, boundary_lines, cell_position, from_cells, parse, to_python

PYPROJECT = '[tool.precision-lint]\ntransformers-version = "5.23"\n'
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def kaggle_notebook() -> dict:
    """An nbformat 4.5 notebook as Kaggle/Colab users write them: installs, shell lines,
    outputs (stream, image, error), markdown, and the MP301 problem in the 4th code cell."""
    return {
        "cells": [
            {
                "cell_type": "markdown",
                "id": "intro",
                "metadata": {},
                "source": ["# Fine-tuning BERT on a T4 — ×2 faster with fp16\n", "Run all cells."],
            },
            {
                "cell_type": "code",
                "execution_count": 1,
                "id": "install",
                "metadata": {"_kg_hide-output": True, "trusted": True},
                "outputs": [{"name": "stdout", "output_type": "stream", "text": ["Successfully installed transformers\n"]}],
                "source": ["%pip install -q transformers==4.46.0 accelerate\n", "!nvidia-smi"],
            },
            {
                "cell_type": "code",
                "execution_count": 2,
                "id": "imports",
                "metadata": {},
                "outputs": [],
                "source": [
                    "import torch\n",
                    "from transformers import AutoTokenizer, Trainer, TrainingArguments\n",
                    "gpus = !nvidia-smi -L\n",
                    "if torch.cuda.is_available():\n",
                    "    !nvidia-smi --query-gpu=name --format=csv\n",
                    "%env TOKENIZERS_PARALLELISM=false",
                ],
            },
            {
                "cell_type": "code",
                "execution_count": 3,
                "id": "plot",
                "metadata": {},
                "outputs": [
                    {
                        "data": {"image/png": PNG, "text/plain": ["<Figure size 640x480 with 1 Axes>"]},
                        "metadata": {"needs_background": "light"},
                        "output_type": "display_data",
                    }
                ],
                "source": ["tok = AutoTokenizer.from_pretrained('bert-base-uncased')\n", "AutoTokenizer?"],
            },
            {
                "cell_type": "code",
                "execution_count": 4,
                "id": "train",
                "metadata": {"scrolled": True},
                "outputs": [
                    {
                        "ename": "TypeError",
                        "evalue": "Trainer.__init__() got an unexpected keyword argument 'tokenizer'",
                        "output_type": "error",
                        "traceback": ["\u001b[0;31mTypeError\u001b[0m: unexpected keyword argument 'tokenizer'"],
                    }
                ],
                "source": [
                    "args = TrainingArguments('out', fp16=True)  # café: non-ASCII stays as is\n",
                    "trainer = Trainer(model=model, args=args, tokenizer=tok)\n",
                    "trainer.train()",
                ],
            },
            {
                "cell_type": "code",
                "execution_count": None,
                "id": "shell",
                "metadata": {},
                "outputs": [],
                "source": ["%%bash\n", "python train.py --tokenizer=tok\n", "  echo done"],
            },
        ],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python", "version": "3.10.12", "mimetype": "text/x-python"},
            "accelerator": "GPU",
            "kaggle": {"accelerator": "gpu", "isGpuEnabled": True},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def nbformat_bytes(nb: dict) -> bytes:
    """What nbformat / Jupyter writes: sorted keys, indent 1, no ASCII escaping, final newline."""
    return (json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    return tmp_path


def test_lint_reports_cell_positions(project):
    (project / "train.ipynb").write_bytes(nbformat_bytes(kaggle_notebook()))
    out = run_cli("--output-format", "concise", "train.ipynb", cwd=project)
    assert out.returncode == 1, out.stderr
    lines = [l for l in out.stdout.splitlines() if "MP" in l]
    # 4th code cell (markdown does not count), its 2nd line, column of `tokenizer=`
    assert lines == [l for l in lines if l.startswith("train.ipynb:cell 4:2:43: MP301 [*] ")] and len(lines) == 1
    full = run_cli("train.ipynb", cwd=project)
    assert "train.ipynb:cell 4:2:43: MP301" in full.stdout
    # the excerpt quotes the cell as written, numbered within the cell
    assert "2 | trainer = Trainer(model=model, args=args, tokenizer=tok)" in full.stdout
    assert "3 | trainer.train()" in full.stdout
    assert "precision-lint: notebook cell" not in full.stdout  # the boundary lines are internal
    (item,) = json.loads(run_cli("--output-format", "json", "train.ipynb", cwd=project).stdout)
    assert item["cell"] == 4
    assert item["location"] == {"row": 2, "column": 43} and item["end_location"] == {"row": 2, "column": 52}
    assert item["noqa_row"] == 2
    assert item["fix"]["edits"][0]["location"] == {"row": 2, "column": 43} and item["fix"]["edits"][0]["cell"] == 4


def test_fix_round_trip_keeps_everything_but_the_fixed_line(project):
    nb = kaggle_notebook()
    before = nbformat_bytes(nb)
    path = project / "train.ipynb"
    path.write_bytes(before)
    out = run_cli("--fix", "train.ipynb", cwd=project)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 fixed, 0 remaining" in out.stdout
    after = path.read_bytes()
    # byte-for-byte: only the keyword changed (indent, key order, "café", outputs, newline kept)
    assert after == before.replace(b"tokenizer=tok)", b"processing_class=tok)", 1)
    fixed = json.loads(after)
    assert fixed["cells"][4]["outputs"] == nb["cells"][4]["outputs"]
    assert fixed["cells"][3]["outputs"][0]["data"]["image/png"] == PNG
    assert fixed["metadata"] == nb["metadata"]
    assert fixed["cells"][1]["source"] == nb["cells"][1]["source"]  # magics untouched
    assert fixed["cells"][5]["source"] == nb["cells"][5]["source"]  # %%bash cell untouched
    assert run_cli("train.ipynb", cwd=project).returncode == 0


def test_real_nbformat_round_trip(project):
    nbformat = pytest.importorskip("nbformat", reason="nbformat is in the `test` extra")
    nb = nbformat.from_dict(kaggle_notebook())
    nbformat.validate(nb)
    path = project / "train.ipynb"
    nbformat.write(nb, str(path))
    written = path.read_bytes()
    assert run_cli("--fix", "train.ipynb", cwd=project).returncode == 0
    fixed = nbformat.read(str(path), as_version=4)
    nbformat.validate(fixed)
    assert "processing_class=tok" in fixed.cells[4].source
    assert fixed.cells[4].outputs == nb.cells[4].outputs
    # nbformat itself writes the fixed notebook to the very bytes precision-lint wrote
    assert nbformat.writes(fixed).encode("utf-8") + b"\n" == path.read_bytes()
    assert path.read_bytes() == written.replace(b"tokenizer=tok)", b"processing_class=tok)", 1)


def test_a_parsed_notebook_keeps_the_text_of_its_outputs_not_their_images():
    # what the checks read of outputs (a stream's text, a result's text/plain) is kept; an
    # image is not held for the whole check (the fix round trip writes it back from the bytes)
    nb = parse(nbformat_bytes(kaggle_notebook()))
    assert "Successfully installed transformers\n" in nb.outputs
    assert "<Figure size 640x480 with 1 Axes>" in nb.outputs
    assert not any("outputs" in cell for cell in nb.data["cells"])
    assert json.loads(nb.raw)["cells"][3]["outputs"][0]["data"]["image/png"] == PNG


def test_notebook_without_fix_is_never_rewritten(project):
    nb = kaggle_notebook()
    nb["cells"][4]["source"][1] = "trainer = Trainer(model=model, args=args, processing_class=tok)\n"
    # odd formatting on purpose: would not survive a re-serialisation
    raw = json.dumps(nb, indent=3, ensure_ascii=True).encode("ascii")
    path = project / "clean.ipynb"
    path.write_bytes(raw)
    mtime = path.stat().st_mtime_ns
    out = run_cli("--fix", ".", cwd=project)
    assert out.returncode == 0 and "All checks passed!" in out.stdout, out.stdout + out.stderr
    assert path.read_bytes() == raw and path.stat().st_mtime_ns == mtime


def test_other_json_styles_are_kept(project):
    nb = kaggle_notebook()
    for indent, ascii_ in ((2, True), (None, False)):
        raw = json.dumps(nb, indent=indent, ensure_ascii=ascii_).encode("utf-8")  # no final newline
        path = project / "colab.ipynb"
        path.write_bytes(raw)
        assert run_cli("--fix", "colab.ipynb", cwd=project).returncode == 0
        assert path.read_bytes() == raw.replace(b"tokenizer=tok)", b"processing_class=tok)", 1)


def test_diff_is_per_cell_and_writes_nothing(project):
    raw = nbformat_bytes(kaggle_notebook())
    (project / "train.ipynb").write_bytes(raw)
    out = run_cli("--diff", "train.ipynb", cwd=project)
    assert out.returncode == 1
    assert "--- a/train.ipynb:cell 4\n+++ b/train.ipynb:cell 4\n" in out.stdout
    assert "-trainer = Trainer(model=model, args=args, tokenizer=tok)\n" in out.stdout
    assert "+trainer = Trainer(model=model, args=args, processing_class=tok)\n" in out.stdout
    assert (project / "train.ipynb").read_bytes() == raw


def test_broken_notebooks_are_mp000_and_untouched(project):
    (project / "bad_json.ipynb").write_bytes(b'{"cells": [')
    nb = kaggle_notebook()
    nb["cells"][5]["source"] = ["import torch\n", "x = = 1"]
    broken_cell = nbformat_bytes(nb)
    (project / "bad_cell.ipynb").write_bytes(broken_cell)
    out = run_cli("--fix", "--output-format", "concise", ".", cwd=project)
    assert out.returncode == 1
    lines = sorted(l for l in out.stdout.splitlines() if "MP000" in l)
    assert len(lines) == 2
    assert lines[0].startswith("bad_cell.ipynb:cell 5:")
    assert lines[1].startswith("bad_json.ipynb:1:1: MP000") and "invalid notebook JSON" in lines[1]
    assert (project / "bad_json.ipynb").read_bytes() == b'{"cells": ['
    assert (project / "bad_cell.ipynb").read_bytes() == broken_cell
    assert "Traceback" not in out.stderr


def test_a_future_import_opening_a_later_cell_compiles_as_ipython_compiles_it(project):
    """IPython compiles each top-level statement of a cell as a module of its own
    (``run_ast_nodes``): ``from __future__`` at the top of cell 3 (after its docstring) is legal
    there, and so is one after other statements of a cell (IPython 7.34, 8.39 and 9.18 run
    ``x = 1`` then ``from __future__ import annotations``; an earlier note said it was refused)."""
    opening = _code_notebook(
        "import torch\n",
        "x = torch.ones(2)\n",
        '"""Cell docstring."""\nfrom __future__ import annotations\nfrom __future__ import division\ny: int = 1\n',
    )
    (project / "opening.ipynb").write_bytes(opening)
    middle = _code_notebook("import torch\n", "x = 1\nfrom __future__ import annotations\n")
    (project / "middle.ipynb").write_bytes(middle)
    first = _code_notebook('import os\nimport re\nfrom __future__ import annotations\n\ndef f(x: "Undefined") -> int:\n    return 1\n')
    (project / "first.ipynb").write_bytes(first)
    out = run_cli("--output-format", "concise", "opening.ipynb", "middle.ipynb", "first.ipynb", cwd=project)
    assert "MP000" not in out.stdout, out.stdout


@pytest.mark.parametrize(
    "cell, row, col, message",
    [
        # nested in a block: not the first statement of the module IPython compiles
        ("x = 1\nif x:\n    from __future__ import annotations\n", 3, 5, "from __future__ imports must occur at the beginning of the file"),
        ("import os\nfrom __future__ import nonexistent_feature\n", 2, 1, "future feature nonexistent_feature is not defined"),
        ("x = 1\nfrom __future__ import braces\n", 2, 1, "not a chance"),
    ],
)
def test_a_future_import_ipython_refuses_is_still_mp000_at_its_line(project, cell, row, col, message):
    """Every IPython refuses these (7.34, 8.39 and 9.18, checked): MP000 at the import, in its cell."""
    (project / "nb.ipynb").write_bytes(_code_notebook("import torch\n", cell))
    out = run_cli("--output-format", "concise", "nb.ipynb", cwd=project)
    found = [l for l in out.stdout.splitlines() if "MP000" in l]
    assert len(found) == 1 and found[0].startswith(f"nb.ipynb:cell 2:{row}:{col}: MP000") and message in found[0], out.stdout


def test_noqa_in_a_cell(project):
    nb = kaggle_notebook()
    nb["cells"][4]["source"][1] = "trainer = Trainer(model=model, args=args, tokenizer=tok)  # noqa: MP301\n"
    (project / "train.ipynb").write_bytes(nbformat_bytes(nb))
    assert run_cli("train.ipynb", cwd=project).returncode == 0


def test_discovery_finds_notebooks_but_not_checkpoints(project):
    (project / "nb").mkdir()
    (project / "nb" / "a.ipynb").write_text("{}")
    (project / "nb" / ".ipynb_checkpoints").mkdir()
    (project / "nb" / ".ipynb_checkpoints" / "a-checkpoint.ipynb").write_text("{}")
    found = [p.replace("\\", "/") for p in discover([str(project / "nb")])]
    assert found == [str(project / "nb" / "a.ipynb").replace("\\", "/")]


def test_non_python_kernels_are_skipped(project):
    nb = kaggle_notebook()
    nb["metadata"]["kernelspec"] = {"display_name": "R", "language": "R", "name": "ir"}
    nb["metadata"]["language_info"] = {"name": "R"}
    (project / "r.ipynb").write_bytes(nbformat_bytes(nb))
    out = run_cli("--fix", "r.ipynb", cwd=project)
    assert out.returncode == 0 and (project / "r.ipynb").read_bytes() == nbformat_bytes(nb)


# --- the IPython-line transformation itself -----------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        "%pip install transformers",
        "!nvidia-smi",
        "    !ls -la",
        "files = !ls",
        "x = %time f()",
        "?Trainer",
        "Trainer?",
        "torch.cuda??",
        "%matplotlib inline",
        "pip install transformers==4.40",  # automagic: runs as %pip
        "conda install -y pytorch",
    ],
)
def test_ipython_lines_become_placeholders(line):
    head = "if torch:" if line.startswith(" ") else "import torch"
    python, magics = to_python(f"{head}\n{line}\nprint(1)")
    lines = python.splitlines()
    assert lines[0] == head and lines[2] == "print(1)"
    assert lines[1].strip() == PLACEHOLDER
    assert lines[1].startswith(line[: len(line) - len(line.lstrip())])  # indentation kept
    assert magics == ((1, line + "\n"),)
    compile(python, "cell", "exec")


def test_python_lines_are_left_alone():
    source = 'x = 3 % 2\ns = """\n%not a magic inside a string\n!nor this\n"""\nd = {"a": 1}\nprint(x != 2)\npip = 1\npip_install = pip + 1'
    python, magics = to_python(source)
    assert python == source and magics == ()


@pytest.mark.parametrize(
    "source",
    [
        # a comparison continued inside parentheses: `!=` opens the line, not a shell escape
        'LIMIT = 3\nif (\n    float("2.5")\n    != LIMIT\n):\n    print("over")',
        # `%` continuing an expression inside brackets, and after a backslash
        "x = (7\n     % 2)\ny = 7 \\\n    % 3",
        # a `?` line inside a call's arguments is Python's (a conditional written across lines is not, but a dict is)
        "d = dict(\n    a=1,\n)\nprint(d)",
        # brackets and quotes inside strings and comments do not open anything
        's = "(" # [\nt = \'{\'\nprint(s, t)',
    ],
    ids=["not-equal-in-parentheses", "modulo-continued", "call-arguments", "brackets-in-strings"],
)
def test_an_operator_continuing_a_statement_is_python(source):
    python, magics = to_python(source)
    assert python == source and magics == ()
    compile(python, "cell", "exec")


def test_an_escape_after_a_closed_statement_is_ipython_again():
    source = 'x = (1,\n     2)\n!nvidia-smi\ny = """(\n"""\n%ls\nz = 1 \\\n    + 2\n!pwd'
    python, magics = to_python(source)
    assert [i for i, _ in magics] == [2, 5, 8]
    compile(python, "cell", "exec")


def test_a_py_file_of_notebook_code_keeps_its_continued_operators(tmp_path):
    # a `.py` export with a shell line: the shell line is IPython's, the `!=` continuing the
    # condition is Python's, and the file's other lines are checked
    (tmp_path / "train.py").write_text(
        "!pip install -q transformers\n"
        "from transformers import Trainer\n"
        "LIMIT = 3\n"
        "if (\n"
        "    float('2.5')\n"
        "    != LIMIT\n"
        "):\n"
        "    Trainer(model=None, tokenizer=None).train()\n"
    )
    # (notebook code, which IPython runs: no MP000; had `!= LIMIT` been read as an IPython line,
    # the file would not compile and nothing in it would be checked)
    found = findings_in(tmp_path)
    assert [d.code for d in found] == ["MP301"]
    assert found[0].span.line == 8


def test_continued_shell_lines_and_cell_magics():
    python, magics = to_python("!pip install a \\\n   b \\\n   c\nimport torch")
    assert python.splitlines() == [PLACEHOLDER, CONTINUATION, CONTINUATION, "import torch"]
    assert [i for i, _ in magics] == [0, 1, 2]
    bash, magics = to_python("%%bash\nfor x in 1 2; do\n  echo $x\ndone")
    assert all(l.startswith("#") for l in bash.splitlines()) and len(magics) == 4
    timed, magics = to_python("%%time\nimport torch\nx = torch.ones(2)")
    assert timed.splitlines() == [PLACEHOLDER, "import torch", "x = torch.ones(2)"] and len(magics) == 1


def test_positions_map_back_to_cells():
    nb = parse(nbformat_bytes(kaggle_notebook()))
    text = nb.text
    b = boundary_lines(text)
    assert len(b) == len(nb.cells) - 1 == 4
    lines = text.splitlines()
    row = lines.index("trainer = Trainer(model=model, args=args, tokenizer=tok)") + 1
    assert cell_position(b, row) == (4, 2)
    assert cell_position(b, 1) == (1, 1)
    # unchanged text maps back to the original sources
    assert nb.cell_sources(text) == [c.source for c in nb.cells]
    assert nb.encode(text) == nb.raw


def test_a_fix_that_touches_an_ipython_line_is_refused():
    nb = parse(nbformat_bytes(kaggle_notebook()))
    text = nb.text
    assert PLACEHOLDER in text
    with pytest.raises(NotebookError):
        nb.cell_sources(text.replace("    " + PLACEHOLDER, "    x = 1", 1))
    with pytest.raises(NotebookError):  # a fix that removed a cell boundary
        nb.cell_sources(text.replace("# precision-lint: notebook cell 3 #\n", ""))


def test_a_notebook_never_shadows_the_script_beside_it(project):
    from precision_lint.workspace.discovery import module_name

    assert module_name(str(project / "train.ipynb"))[0] == "train-ipynb"
    assert module_name(str(project / "train.py"))[0] == "train"
    (project / "train.py").write_text("from transformers import Trainer\n\nclass MyTrainer(Trainer):\n    pass\n")
    nb = kaggle_notebook()
    nb["cells"][4]["source"] = ["from train import MyTrainer\n", "t = MyTrainer(model=model, tokenizer=tok)"]
    (project / "train.ipynb").write_bytes(nbformat_bytes(nb))
    out = run_cli("--output-format", "concise", ".", cwd=project)
    # the notebook imports the script's Trainer subclass: joined along the import, found in cell 4
    assert "train.ipynb:cell 4:2:28: MP301" in out.stdout, out.stdout + out.stderr


def _code_notebook(*cells: str) -> bytes:
    nb = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [], "source": c.splitlines(True)}
            for i, c in enumerate(cells)
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return nbformat_bytes(nb)


def test_messages_related_and_every_edit_say_cell_and_line(project):
    """`(line 7)` of the joined cells would point nowhere a user can see: every position a
    finding names is `cell N, line L`, and an edit that lands in another cell (the capability
    probe after the imports of cell 1) carries that cell."""
    (project / "train.ipynb").write_bytes(
        _code_notebook(
            "import torch\nfrom transformers import AutoModelForCausalLM, Trainer, TrainingArguments",
            "%pip install -q transformers\nmodel = AutoModelForCausalLM.from_pretrained('gpt2', torch_dtype=torch.float16)",
            "args = TrainingArguments(output_dir='out', fp16=True)\ntrainer = Trainer(model=model, args=args)",
            "model = AutoModelForCausalLM.from_pretrained('gpt2', torch_dtype=torch.bfloat16)\nTrainer(model=model).train()",
        )
    )
    out = run_cli("--output-format", "json", "train.ipynb", cwd=project)
    items = {i["code"]: i for i in json.loads(out.stdout)}
    mp101 = items["MP101"]
    assert mp101["cell"] == 2 and mp101["location"] == {"row": 2, "column": 66}
    assert "`TrainingArguments(fp16=True)` (cell 3, line 1) turns on fp16 loss scaling" in mp101["message"]
    assert "(line " not in mp101["message"]
    assert [(r["cell"], r["location"]["row"]) for r in mp101["related"]] == [(3, 1)]
    mp201 = items["MP201"]
    assert mp201["cell"] == 4
    cells = sorted({(e["cell"], e["location"]["row"]) for e in mp201["fix"]["edits"]})
    assert cells == [(1, 3), (4, 1)]  # the probe goes below cell 1's two import lines; the dtype in cell 4
    concise = run_cli("--output-format", "concise", "train.ipynb", cwd=project).stdout
    assert "train.ipynb:cell 2:2:66: MP101" in concise and "(cell 3, line 1)" in concise


def test_cell_references_leave_other_files_alone():
    from precision_lint.workspace.notebook import cell_references, join

    text = join(["import torch\n", "x = 1\ny = 2\n", "z = 3\n"])
    line_of_z = text.splitlines().index("z = 3") + 1
    message = f"set here (line {line_of_z}); a loader in models.py (line 4); caller (models.py, line 9)"
    assert cell_references(message, text) == "set here (cell 3, line 1); a loader in models.py (line 4); caller (models.py, line 9)"


def test_check_source_and_fix_source_take_a_cell_or_a_notebook():
    """The library API skips IPython lines as `check` does: with a `.ipynb` path, the text is
    one cell's code (magics and all) or a whole notebook's JSON."""
    from conftest import config
    from precision_lint import check_source, fix_source

    cfg = config(transformers_version="5.23")
    cell = "%pip install -q transformers\n!nvidia-smi\nfrom transformers import Trainer\ntrainer = Trainer(model=m, tokenizer=tok)"
    (d,) = check_source(cell, "cell.ipynb", config=cfg)
    assert (d.code, d.span.line, d.span.col) == ("MP301", 4, 27)
    assert fix_source(cell, "cell.ipynb", config=cfg) == cell.replace("tokenizer=", "processing_class=")
    # a `.py` file of notebook code: its Python lines are checked as IPython runs them (no MP000:
    # nothing runs it with Python) and fixed around its IPython lines
    assert [d.code for d in check_source(cell, "cell.py", config=cfg)] == ["MP301"]
    assert fix_source(cell, "cell.py", config=cfg) == cell.replace("tokenizer=", "processing_class=")
    text = nbformat_bytes(kaggle_notebook()).decode("utf-8")
    assert [d.code for d in check_source(text, "train.ipynb", config=cfg)] == ["MP301"]
    fixed = fix_source(text, "train.ipynb", config=cfg)
    assert fixed == text.replace("args=args, tokenizer=tok", "args=args, processing_class=tok")  # not the %%bash cell
    assert fix_source(fixed, "train.ipynb", config=cfg) == fixed


# --- %%writefile cells: the module a notebook writes ------------------------------------------
LOADER = "import torch\nfrom transformers import AutoModelForCausalLM\n\ndef load(name):\n    return AutoModelForCausalLM.from_pretrained(name, dtype=torch.float16)\n"
FP16_SCRIPT = (
    "import torch\nfrom transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n"
    "model = AutoModelForCausalLM.from_pretrained('gpt2', dtype=torch.float16)\n"
    "Trainer(model=model, args=TrainingArguments(output_dir='out', fp16=True)).train()\n"
)
USES_LOADER = (
    "from transformers import Trainer, TrainingArguments\nmodel = load('gpt2')\n"
    "args = TrainingArguments(output_dir='out', fp16=True)\nTrainer(model=model, args=args).train()\n"
)


SFT_SCRIPT = (
    "import torch\nfrom transformers import AutoModelForCausalLM\nfrom trl import SFTConfig, setup_chat_format\n"
    "lm = AutoModelForCausalLM.from_pretrained('m', torch_dtype=torch.float32)\n"
    "cfg = SFTConfig(output_dir='o', warmup_ratio=0.1)\n"
)


@pytest.mark.parametrize("runs", ["!accelerate launch --num_processes 2 sft.py", "!python sft.py"])
def test_a_written_module_the_notebook_runs_takes_the_notebooks_pins(tmp_path, runs):
    """`!pip install transformers==4.54.0 trl==0.20.0`, then `%%writefile sft.py` and a command
    that runs it: the script runs with the notebook's pins, as a file on disk the notebook
    launches does (review 22f's CTX: judged against the newest releases instead)."""
    from conftest import findings_in, write_tree

    pins = "!pip install -q transformers==4.54.0 trl==0.20.0 datasets"
    root = write_tree(tmp_path / "run", {".git/HEAD": ""})
    (root / "run.ipynb").write_bytes(_code_notebook(pins, "%%writefile sft.py\n" + SFT_SCRIPT, runs))
    assert findings_in(root, ["MP302", "MP304"]) == []
    # unpinned, the newest releases: torch_dtype= warns, warmup_ratio= and setup_chat_format are gone
    bare = write_tree(tmp_path / "bare", {".git/HEAD": ""})
    (bare / "run.ipynb").write_bytes(_code_notebook("!pip install -q transformers trl", "%%writefile sft.py\n" + SFT_SCRIPT, runs))
    assert sorted(d.code for d in findings_in(bare, ["MP302", "MP304"])) == ["MP302", "MP302", "MP304"]


@pytest.mark.parametrize(
    "name, cells, expected",
    [
        # (code, cell, line within the cell): the body's line 3 is the cell's line 4
        ("writefile", ["!pip install -q transformers", "%%writefile train.py\n" + FP16_SCRIPT, "!python train.py"], [("MP101", 2, 4)]),
        ("file alias", ["%%file train.py\n" + FP16_SCRIPT, "!accelerate launch train.py"], [("MP101", 1, 4)]),
        ("quoted name", ['%%writefile "train.py"\n' + FP16_SCRIPT], [("MP101", 1, 4)]),
        # the module's names are its own: the notebook's Trainer never sees the module's model
        ("own namespace", ["%%writefile m.py\nimport torch\nfrom transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained('gpt2', dtype=torch.float16)\n",
                           "from transformers import Trainer, TrainingArguments\nTrainer(model=model, args=TrainingArguments(output_dir='o', fp16=True)).train()"], []),
        # `import` of the module it writes joins the two, as the kernel finds the file it wrote
        ("imported", ["%%writefile model_utils.py\n" + LOADER, "from model_utils import load\n" + USES_LOADER], [("MP101", 1, 6)]),
        ("imported as module", ["%%writefile model_utils.py\n" + LOADER, "import model_utils\nload = model_utils.load\n" + USES_LOADER], [("MP101", 1, 6)]),
        # -a appends: the two cells are one module (loader in cell 1, its use in cell 2)
        ("append", ["%%writefile train.py\n" + LOADER, "%%writefile -a train.py\n" + USES_LOADER], [("MP101", 1, 6)]),
        ("append long option", ["%%writefile train.py\n" + LOADER, "%%writefile --append train.py\n" + USES_LOADER], [("MP101", 1, 6)]),
        # written again without -a: a new file, the loader is gone from it
        ("overwritten", ["%%writefile train.py\n" + LOADER, "%%writefile train.py\n" + USES_LOADER], []),
        # the body is written verbatim: an IPython line in it is a syntax error of train.py
        ("shell line in body", ["%%writefile train.py\nimport torch\nmodel = model.half()\n!nvidia-smi\n"], [("MP000", 1, 4)]),
        ("syntax error", ["import torch", "%%writefile train.py\nimport torch\nmodel = model.half()\nx = = 1\n"], [("MP000", 2, 4)]),
        ("noqa in body", ["%%writefile train.py\n" + FP16_SCRIPT.replace("float16)\n", "float16)  # noqa: MP101\n")], []),
        # not Python files, and cell magics whose body is not Python: skipped
        ("yaml", ["%%writefile config.yaml\nfp16: true\nx = = 1\n"], []),
        ("bash", ["%%bash\npython - <<EOF\nx = = 1\nEOF"], []),
        ("no file name", ["%%writefile\nx = = 1\n"], []),
        # %%capture runs its body in the kernel: it is the notebook's own code
        ("capture", ["%%capture out\n" + FP16_SCRIPT], [("MP101", 1, 4)]),
        ("time", ["import torch", "%%time\n" + FP16_SCRIPT], [("MP101", 2, 4)]),
    ],
)
def test_writefile_cells_are_the_modules_they_write(name, cells, expected):
    from conftest import config
    from precision_lint import check_source
    from precision_lint.workspace.notebook import boundary_lines, cell_position

    text = _code_notebook(*cells).decode("utf-8")
    found = check_source(text, "nb.ipynb", config=config(transformers_version="5.23"), select=["MP000", "MP101"])
    joined = parse(text.encode("utf-8")).text
    where = [(d.code, *cell_position(boundary_lines(joined), d.span.line)) for d in found]
    assert where == expected, [d.message for d in found]
    for d in found:
        assert d.path == "nb.ipynb" and "(line " not in d.message and "nb.ipynb:cell" not in d.message
        assert all(r.path == "nb.ipynb" for r in d.related)


def test_check_source_and_fix_source_take_one_writefile_cell():
    from conftest import config
    from precision_lint import check_source, fix_source

    cell = "%%writefile train.py\n" + FP16_SCRIPT
    cfg = config(transformers_version="5.23")
    assert [(d.code, d.span.line, d.span.col) for d in check_source(cell, "cell.ipynb", config=cfg)] == [("MP101", 4, 59)]
    assert fix_source(cell, "cell.ipynb", config=cfg) == cell.replace("torch.float16", "torch.float32")


def test_writefile_finding_names_the_importing_cell():
    from conftest import config
    from precision_lint import check_source
    from precision_lint.workspace.notebook import boundary_lines, cell_position

    text = _code_notebook("%%writefile model_utils.py\n" + LOADER, "!ls", "from model_utils import load\n" + USES_LOADER).decode()
    (d,) = check_source(text, "nb.ipynb", config=config(transformers_version="5.23"), select=["MP101"])
    assert "`TrainingArguments(fp16=True)` (cell 3, line 4) turns on fp16 loss scaling" in d.message
    joined = parse(text.encode()).text
    assert [cell_position(boundary_lines(joined), r.span.line) for r in d.related] == [(3, 4)]


@pytest.mark.parametrize(
    "first_line, target, append",
    [
        ("%%writefile train.py", "train.py", False),
        ("%%file src/train.py", "src/train.py", False),
        ("%%writefile -a train.py", "train.py", True),
        ("%%writefile --append /kaggle/working/train.py", "/kaggle/working/train.py", True),
        ("%%writefile 'my script.py'", "my script.py", False),
        ("%%writefile config.yaml", "config.yaml", False),
        ("%%writefile", None, None),
        ("%%writefile -x train.py", None, None),
        ("%%writefile a.py b.py", None, None),
        ("%%writefile 'train.py", None, None),
        ("%%bash", None, None),
        ("%%capture out", None, None),
    ],
)
def test_writefile_first_lines(first_line, target, append):
    from precision_lint.workspace.notebook import write_target

    found = write_target(first_line + "\n")
    assert (found.target, found.append) == (target, append) if target else found is None
    python, magics = to_python(first_line + "\nimport torch\n!ls\n")
    if target and target.endswith(".py"):  # the body as written; only the magic line is swapped
        assert python == COMMENTED + "0\nimport torch\n!ls\n" and magics == ((0, first_line + "\n"),)
    elif not first_line.startswith("%%capture"):
        assert "import torch" not in python


def test_writefile_fix_edits_the_cell_in_place(project):
    """`--fix` on a finding in a `%%writefile` cell changes that cell's source (the rest of the
    notebook byte for byte) and never writes the file the cell writes."""
    before = _code_notebook(
        "!pip install -q transformers",
        "%%writefile train.py\n" + FP16_SCRIPT.replace("dtype=", "torch_dtype="),
        "!python train.py",
        "%%writefile model_utils.py\n" + LOADER,
        "from model_utils import load\n" + USES_LOADER,
    )
    path = project / "kaggle.ipynb"
    path.write_bytes(before)
    report = run_cli("--output-format", "concise", "kaggle.ipynb", cwd=project)
    assert report.returncode == 1
    assert sorted(l.split(" [")[0] for l in report.stdout.splitlines() if ": MP" in l) == [
        "kaggle.ipynb:cell 2:4:54: MP304",
        "kaggle.ipynb:cell 2:4:66: MP101",
        "kaggle.ipynb:cell 4:6:61: MP101",
    ]
    out = run_cli("--fix", "--unsafe-fixes", "kaggle.ipynb", cwd=project)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 fixed, 0 remaining" in out.stdout
    expected = before.replace(b"torch_dtype=torch.float16", b"dtype=torch.float32").replace(
        b"(name, dtype=torch.float16)", b"(name, dtype=torch.float32)"
    )
    assert path.read_bytes() == expected
    assert sorted(p.name for p in project.iterdir() if not p.name.startswith(".")) == ["kaggle.ipynb", "pyproject.toml"]  # no train.py
    assert run_cli("kaggle.ipynb", cwd=project).returncode == 0


@pytest.mark.parametrize("fmt", ["full", "concise", "json", "github", "sarif"])
def test_writefile_positions_in_every_output_format(project, fmt):
    (project / "nb.ipynb").write_bytes(_code_notebook("import os", "%%writefile train.py\n" + FP16_SCRIPT))
    out = run_cli("--output-format", fmt, "--select", "MP101", "nb.ipynb", cwd=project).stdout
    assert "nb.ipynb:cell2:train.py" not in out  # the path of the module in the run is never shown
    if fmt in ("full", "concise"):
        assert "nb.ipynb:cell 2:4:60: MP101" in out and "(cell 2, line 5)" in out
    elif fmt == "json":
        (item,) = json.loads(out)
        assert (item["cell"], item["location"], item["fix"]["edits"][0]["cell"]) == (2, {"row": 4, "column": 60}, 2)
        assert [(r["cell"], r["location"]["row"]) for r in item["related"]] == [(2, 5)]
    else:
        assert "cell 2, line 4, column 60: " in out
    if fmt == "full":  # the excerpt is the cell as written, the next cell's boundary never shown
        assert "4 | model = AutoModelForCausalLM.from_pretrained('gpt2', dtype=torch.float16)" in out
        assert "precision-lint:" not in out


def test_the_notebooks_own_fixes_stay_out_of_writefile_cells():
    """The notebook's own module sees a `%%writefile` cell as comments: `import torch` and the
    capability probe a fix adds go into the notebook's first code, never into the written file;
    an edit that would still land there is not offered."""
    from conftest import config
    from precision_lint import fix_source
    from precision_lint.diagnostics import Edit, Fix
    from precision_lint.workspace.written import Remapper, modules

    written = "%%writefile train.py\nimport os\nprint(os.getcwd())\n"
    text = _code_notebook(
        written,
        "from transformers import AutoModelForCausalLM, TrainingArguments\n"
        "model = AutoModelForCausalLM.from_pretrained('gpt2', dtype='bfloat16')\n",
    ).decode()
    fixed = json.loads(fix_source(text, "nb.ipynb", config=config(transformers_version="5.23"), unsafe=True))
    sources = ["".join(c["source"]) for c in fixed["cells"]]
    assert sources[0] == written
    assert sources[1].startswith("import torch\nfrom transformers import") and "BF16_OK" in sources[1]
    nb = parse(text.encode())
    (m,) = modules("nb.ipynb", nb, nb.text, ("nb-ipynb", False, ""))
    remap = Remapper([m], {"nb.ipynb": nb.text})
    inside = Fix("safe", "f", (Edit(m.segments[0].start + 3, m.segments[0].start + 3, "x"),))
    at_magic = Fix("safe", "f", (Edit(0, 0, "import torch\n"),))
    after = Fix("safe", "f", (Edit(len(nb.text), len(nb.text), "x"),))
    assert [remap.touches_cell("nb.ipynb", f) for f in (inside, at_magic, after)] == [True, True, False]


def test_a_file_on_disk_that_the_notebook_writes_is_not_what_it_imports(project):
    """`train.py` left on disk by an earlier run is checked as itself, but the notebook's
    `from model_utils import load` finds the module its `%%writefile` cell writes (running the
    notebook overwrites the file) — whatever the names sort as."""
    (project / "model_utils.py").write_text(LOADER.replace("torch.float16", "torch.float32"))
    (project / "zz.ipynb").write_bytes(_code_notebook("%%writefile model_utils.py\n" + LOADER, "from model_utils import load\n" + USES_LOADER))
    out = run_cli("--output-format", "concise", "--select", "MP101", ".", cwd=project)
    assert [l.split(" [")[0] for l in out.stdout.splitlines() if ": MP" in l] == ["zz.ipynb:cell 1:6:61: MP101"], out.stdout + out.stderr


CONFIG_CELL = "%%writefile config.yaml\nmodel: gpt2\nfp16: true\n"
LOADS_CONFIG = (
    "import torch\nimport yaml\nfrom transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n"
    "cfg = yaml.safe_load(open('config.yaml'))\n"
    "model = AutoModelForCausalLM.from_pretrained(cfg['model'], dtype=torch.float16)\n"
    "args = TrainingArguments(output_dir='out', fp16=cfg['fp16'])\n"
    "Trainer(model=model, args=args).train()\n"
)


@pytest.mark.parametrize(
    "cells, finding",
    [
        # the script a cell writes loads the config a cell writes: both read from their cells
        ([CONFIG_CELL, "%%writefile train.py\n" + LOADS_CONFIG, "!python train.py"], (2, 6)),
        # the notebook's own code loads it
        ([CONFIG_CELL, LOADS_CONFIG], (2, 5)),
        ([CONFIG_CELL.replace("%%writefile", "%%file"), LOADS_CONFIG], (2, 5)),
    ],
)
def test_a_config_file_written_by_a_cell_is_read_from_the_cell(cells, finding):
    from conftest import config
    from precision_lint import check_source

    text = _code_notebook(*cells).decode()
    (d,) = check_source(text, "nb.ipynb", config=config(transformers_version="5.23"), select=["MP101"])
    joined = parse(text.encode()).text
    assert cell_position(boundary_lines(joined), d.span.line) == finding
    assert d.message.endswith("; `fp16: true` is set (cell 1, line 3)"), d.message
    places = [(r.path, cell_position(boundary_lines(joined), r.span.line), r.span.col, r.message) for r in d.related]
    assert ("nb.ipynb", (1, 3), 6, "fp16 switched on here") in places
    # the cell is comments of the same length in the joined text, and comes back as written
    nb = parse(text.encode())
    assert [len(l) for l in nb.cells[0].python.splitlines()[1:]] == [len(l) for l in CONFIG_CELL.splitlines()[1:]]
    assert nb.cell_sources(joined)[0] == cells[0] and nb.encode(joined) == nb.raw


def test_the_config_a_cell_writes_wins_over_the_file_on_disk(project):
    """`config.yaml` on disk (`fp16: false`, from an earlier run) is what the cell overwrites:
    the script reads the cell's `fp16: true`, and a script on disk that loads it too."""
    (project / "config.yaml").write_text("model: gpt2\nfp16: false\n")
    (project / "finetune.py").write_text(LOADS_CONFIG)
    (project / "nb.ipynb").write_bytes(_code_notebook(CONFIG_CELL, "!python finetune.py"))
    out = run_cli("--output-format", "concise", "--select", "MP101", ".", cwd=project)
    (line,) = [l for l in out.stdout.splitlines() if ": MP101" in l]
    assert line.startswith("finetune.py:5:") and line.endswith("`fp16: true` is set in nb.ipynb (cell 1, line 3)"), line
    (project / "nb.ipynb").write_bytes(_code_notebook("!python finetune.py"))
    assert "All checks passed!" in run_cli("--select", "MP101", ".", cwd=project).stdout


def test_a_cell_that_does_not_compile_hides_nothing_in_the_other_cells(project):
    """Each broken cell is its own MP000 at its own position; the other cells are checked (the
    MP301 in cell 4 is found), and the notebook is not rewritten until every cell compiles."""
    nb = kaggle_notebook()
    nb["cells"][5]["source"] = ["import torch\n", "x = = 1"]
    nb["cells"].append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": "y = (\n"})
    raw = nbformat_bytes(nb)
    (project / "train.ipynb").write_bytes(raw)
    out = run_cli("--fix", "--output-format", "concise", "train.ipynb", cwd=project)
    assert out.returncode == 1, out.stderr
    lines = [l for l in out.stdout.splitlines() if ": MP" in l]
    assert [l.split(" [*]")[0].split(" `")[0] for l in lines] == [
        "train.ipynb:cell 4:2:43: MP301",
        "train.ipynb:cell 5:2:5: MP000 Cannot parse cell: SyntaxError: invalid syntax",
        "train.ipynb:cell 6:1:5: MP000 Cannot parse cell: SyntaxError: '(' was never closed",
    ]
    assert "[*]" not in out.stdout
    assert (project / "train.ipynb").read_bytes() == raw


def test_top_level_await_compiles_in_a_cell():
    """IPython runs `await` at the top of a cell: such a cell is code, not a syntax error."""
    python, magics = to_python("import asyncio\nawait asyncio.sleep(0)\n")
    assert python == "import asyncio\nawait asyncio.sleep(0)\n" and magics == ()
    cells = ["import asyncio\nfrom transformers import Trainer\nawait asyncio.sleep(0)\n", "Trainer(model=m, tokenizer=tok)\n"]
    found = check_source(from_cells(cells).decode(), "train.ipynb")
    assert [(d.code, d.span.line) for d in found] == [("MP301", 5)]  # the joined module: cell 2, line 1


@pytest.mark.parametrize("line", ["cd ..", "  cd /data/run", "time x = f()", "ls -F src/", "mkdir -p out/ckpt", "load_ext autoreload\n"])
def test_a_one_line_cell_that_automagic_runs_is_a_magic(line):
    """IPython's automagic (on by default) runs `cd ..` as `%cd ..`: a cell of that one line,
    which is not Python, is an IPython line like `%cd ..` and no MP000."""
    python, magics = to_python(line)
    assert python.strip() == PLACEHOLDER and magics == ((0, line),)
    assert check_source(from_cells(["import torch", line]).decode(), "nb.ipynb", select=["MP000"]) == []


@pytest.mark.parametrize(
    "cells",
    [
        ["# go up\ncd .."],  # automagic applies to one-line cells only: a SyntaxError in Jupyter
        ["cd ..\nimport torch"],
        ["docker run --gpus all image:tag"],  # a shell command, not a magic: needs `!`
        ["cd.. x"],  # no magic of that name
        ["import time", "time train(model) for model in models"],  # `time` is the module here
        ["x = dict(\n    a=1\n    b=2,\n)"],
    ],
)
def test_automagic_needs_one_line_a_magic_name_and_no_variable_of_that_name(cells):
    found = check_source(from_cells(cells).decode(), "nb.ipynb", select=["MP000"])
    assert [d.code for d in found] == ["MP000"]


def test_a_line_that_is_python_is_left_as_python():
    for source in ("pwd", "ls -la", "cd /data", "cd = '..'", "time.sleep(1)"):
        assert to_python(source) == (source, ())


# --- Databricks notebooks in source form (.py) ---------------------------------------------------
def _databricks(*cells: str, header: str = "# Databricks notebook source\n") -> str:
    """A notebook as Databricks exports it in source form: the header, cells separated by
    COMMAND lines with a blank line either side, markdown as `# MAGIC` comments."""
    return header + "\n\n# COMMAND ----------\n\n".join(cells) + "\n"


DBX_TRAIN = "from transformers import Trainer\ntrainer = Trainer(model=m, tokenizer=tok)"
DBX_MAIN = 'if __name__ == "__main__":\n    print("job")'


def test_a_databricks_notebooks_shell_line_is_ipython_and_the_rest_is_checked(project):
    """`!deepspeed ...` in a Python cell of a Databricks source notebook is an IPython shell
    escape, not MP000; the other cells are checked, at the file's own lines and columns, and a
    fix is written back with the IPython lines as they were."""
    text = _databricks(
        "# MAGIC %md\n# MAGIC Train the model.",
        "%pip install -q transformers\nsteps = 10",
        "!deepspeed --num_gpus 8 \\\n    --module train --steps {steps}",
        DBX_TRAIN,
    )
    (project / "train_job.py").write_text(text)
    out = run_cli("--output-format", "concise", "train_job.py", cwd=project)
    lines = [l for l in out.stdout.splitlines() if ": MP" in l]
    row = text.splitlines().index("trainer = Trainer(model=m, tokenizer=tok)") + 1
    assert [l.split(" [*]")[0] for l in lines] == [f"train_job.py:{row}:28: MP301"], out.stdout
    full = run_cli("train_job.py", cwd=project).stdout
    assert "precision-lint: notebook cell" not in full and "trainer = Trainer(model=m, tokenizer=tok)" in full
    run_cli("--fix", "train_job.py", cwd=project)
    assert (project / "train_job.py").read_text() == text.replace("tokenizer=tok", "processing_class=tok")


def test_a_databricks_cell_that_does_not_compile_is_still_mp000(project):
    text = _databricks("import os", "!nvidia-smi", "steps = 3\nif steps > 2\n    print(steps)", DBX_TRAIN)
    (project / "nb.py").write_text(text)
    out = run_cli("--output-format", "concise", "nb.py", cwd=project)
    lines = [l.split(" [*]")[0].split(" `")[0] for l in out.stdout.splitlines() if ": MP" in l]
    row = text.splitlines().index("if steps > 2") + 1
    mp301 = text.splitlines().index("trainer = Trainer(model=m, tokenizer=tok)") + 1
    assert lines == [f"nb.py:{row}:13: MP000 Cannot parse cell: SyntaxError: expected ':'", f"nb.py:{mp301}:28: MP301"]


def test_a_databricks_pip_install_sets_the_notebooks_versions(tmp_path):
    """`%pip install transformers==4.30.0` in a cell is the version the notebook's own code
    targets, as in an .ipynb: `tokenizer=` is Trainer's only spelling there."""
    from conftest import write_tree

    def run(root):
        return findings_in(root, ["MP301"])

    old = write_tree(tmp_path / "old", {".git/HEAD": "", "nb.py": _databricks("%pip install transformers==4.30.0", DBX_TRAIN)})
    assert run(old) == []
    new = write_tree(tmp_path / "new", {".git/HEAD": "", "nb.py": _databricks("%pip install transformers==4.46.0", DBX_TRAIN)})
    assert [d.code for d in run(new)] == ["MP301"]


@pytest.mark.parametrize(
    "text",
    [
        "import os\n" + _databricks("!nvidia-smi", DBX_MAIN),  # the header on line 2
        _databricks("!nvidia-smi", DBX_MAIN, header="# Databricks notebook source (copy)\n"),
        _databricks("!nvidia-smi", DBX_MAIN, header="#Databricks notebook source\n"),
    ],
)
def test_without_the_exact_header_on_line_1_a_py_file_is_python(project, text):
    # read as a program (its main block), not as a notebook's cells: the IPython line is MP000
    (project / "job.py").write_text(text)
    out = run_cli("--output-format", "concise", "job.py", cwd=project)
    lines = [l for l in out.stdout.splitlines() if ": MP" in l]
    assert len(lines) == 1 and ": MP000 Cannot parse file: SyntaxError" in lines[0], out.stdout


def test_check_source_and_fix_source_read_a_databricks_notebook():
    from conftest import config
    from precision_lint import check_source, fix_source

    cfg = config(transformers_version="5.23")
    text = _databricks("%pip install -q transformers\n!nvidia-smi", DBX_TRAIN)
    (d,) = check_source(text, "job.py", config=cfg)
    assert (d.code, d.span.line, d.span.col) == ("MP301", 8, 27)
    assert fix_source(text, "job.py", config=cfg) == text.replace("tokenizer=", "processing_class=")


def test_a_databricks_magic_pip_cell_sets_the_notebooks_versions(tmp_path):
    """Databricks exports a `%pip` cell as `# MAGIC %pip install ...` comments: its pins are
    the notebook's, as a bare `%pip install` line's are; a markdown cell naming pip is not."""
    from conftest import write_tree

    def run(root):
        return findings_in(root, ["MP301"])

    old = write_tree(tmp_path / "old", {".git/HEAD": "", "nb.py": _databricks("# MAGIC %pip install transformers==4.30.0", DBX_TRAIN)})
    assert run(old) == []
    md = write_tree(tmp_path / "md", {".git/HEAD": "", "nb.py": _databricks("# MAGIC %md\n# MAGIC %pip install transformers==4.30.0", DBX_TRAIN)})
    assert [d.code for d in run(md)] == ["MP301"]


def _kernel_notebook(version):
    cells = [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": 1, "source": [
            "import torch\n", "from transformers import AdamW\n",
            "net = torch.nn.Linear(4, 1).cuda()\n", "opt = AdamW(net.parameters(), lr=1e-5)\n",
            "scaler = torch.cuda.amp.GradScaler()\n",
        ]},
    ]
    meta = {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}}
    if version is not None:
        meta["language_info"] = {"name": "python", "version": version}
    return {"cells": cells, "metadata": meta, "nbformat": 4, "nbformat_minor": 4}


def test_the_python_a_notebooks_kernel_recorded_caps_its_libraries(tmp_path):
    """A Kaggle notebook last run on Python 3.7.12: no transformers after 4.30 nor torch after
    1.13 installs there, so `transformers.AdamW` (removed in 4.50) imports and
    `torch.cuda.amp.GradScaler` (deprecated in 2.4) does not warn. The same cells on a kernel that
    recorded Python 3.11, or none, are judged on the newest releases."""
    old = tmp_path / "old"
    old.mkdir()
    (old / "run.ipynb").write_bytes(nbformat_bytes(_kernel_notebook("3.7.12")))
    assert findings_in(old, ["MP302", "MP303"]) == []
    for name, version in (("new", "3.11.4"), ("none", None)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "run.ipynb").write_bytes(nbformat_bytes(_kernel_notebook(version)))
        assert sorted(d.code for d in findings_in(folder, ["MP302", "MP303"])) == ["MP302", "MP303"]


@pytest.mark.parametrize("meta, expected", [
    ({"language_info": {"name": "python", "version": "3.7.12"}}, "3.7.12"),
    ({"language_info": {"name": "python", "version": "3.10"}}, "3.10"),
    ({"language_info": {"name": "python"}}, None),
    ({"language_info": {"name": "python", "version": "unknown"}}, None),
    ({}, None),
])
def test_kernel_python_is_read_from_language_info(meta, expected):
    nb = {"cells": [], "metadata": meta, "nbformat": 4, "nbformat_minor": 4}
    assert parse(nbformat_bytes(nb)).kernel_python == expected


# IPython cleans a cell up before parsing it (leading_indent, classic_prompt, ipython_prompt):
# each cell below was run through IPython 7.34, 8.39 and 9.18 (transform_cell, then the parse
# and the node-by-node compile of run_cell) for its verdict.
@pytest.mark.parametrize(
    "cell",
    [
        "    for i, q in enumerate(questions, start=1):\n        print(i, q)\n",  # every version
        " questions[0]\n",  # every version
        "\n\n    x = 1\n    y = 2\n",  # leading blank lines dropped first
        "    x = 1\n# a note\n    y = 2\n",  # 7.x/8.x strip the first line's indent where a line has it; 9.x refuses
        "    x = 1\ny = 2\n",  # the same
        '>>> ask({"question": "q"})\n',  # every version
        ">>> for i in range(2):\n...     print(i)\n",  # every version
        "    >>> x = 1\n",  # dedented, then stripped: every version
        'ask({\n...     "question": "q",\n... })\n',  # 7.x/8.x (prompt on the 2nd line); 9.x refuses
        "In [1]: x = 1\n   ...: y = 2\n",  # IPython's own prompts, every version
    ],
)
def test_a_cell_ipython_cleans_up_into_python_is_no_mp000(cell):
    """A cell that compiles once IPython (some version) has removed its first line's indentation
    or its pasted prompts runs in Jupyter: no MP000. Where versions differ (a `...`-only cell
    runs on IPython <= 8, which Colab and Kaggle ship, and not on 9.x), the linter stays silent."""
    assert check_source(from_cells(["questions = ['a']\ndef ask(d):\n    return d\n", cell]).decode(), "nb.ipynb", select=["MP000"]) == []


@pytest.mark.parametrize(
    "cell, row, col, message",
    [
        ("x = 1\n    y = 2\n", 2, 4, "unexpected indent"),  # first line unindented: nothing is dedented
        ("    x = 1\n  y = 2\n", 2, 2, "unexpected indent"),  # less indented than the first line
        ("\tx = 1\n    y = 2\n", 2, 4, "unexpected indent"),  # tab, then spaces
        ("    x = 1\n    y = (\n", 2, 9, "'(' was never closed"),  # dedented, still broken: at its `(` as written
        ("... x = 1\n", 1, 5, "invalid syntax"),  # `...` on the first line alone is no prompt
        (">>> x = (\n", 1, 9, "'(' was never closed"),  # prompt stripped, still broken
    ],
)
def test_a_cell_no_ipython_runs_is_mp000_where_ipython_says(cell, row, col, message):
    """Every IPython refuses these after its cleanup: MP000 at the error's line in the cell, its
    column counted in the cell as written (IPython <= 8's cleaned cell gives the error)."""
    found = check_source(from_cells(["import torch\n", cell]).decode(), "nb.ipynb", select=["MP000"])
    assert len(found) == 1 and message in found[0].message, [d.message for d in found]
    joined = parse(from_cells(["import torch\n", cell])).text
    boundaries = boundary_lines(joined)
    assert cell_position(boundaries, found[0].span.line) == (2, row)
    assert found[0].span.col + 1 == col


def test_a_cell_ipython_cleans_up_is_kept_as_written_and_hides_nothing_elsewhere(project):
    """The cleaned-up cell is not read (its columns moved under IPython) but written back as it
    is; the other cells keep their exact positions, and their fixes land."""
    nb = kaggle_notebook()
    indented = ["    for q in ['a', 'b']:\n", "        print(q)"]
    prompted = [">>> x = 1\n", "... "]
    nb["cells"].insert(2, {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": indented})
    nb["cells"].append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": prompted})
    path = project / "train.ipynb"
    before = nbformat_bytes(nb)
    path.write_bytes(before)
    out = run_cli("--output-format", "concise", "train.ipynb", cwd=project)
    lines = [l for l in out.stdout.splitlines() if ": MP" in l]
    # the MP301 of the 4th code cell is now in the 5th, at the same line and column
    assert len(lines) == 1 and lines[0].startswith("train.ipynb:cell 5:2:43: MP301"), out.stdout
    out = run_cli("--fix", "train.ipynb", cwd=project)
    assert out.returncode == 0, out.stdout + out.stderr
    assert path.read_bytes() == before.replace(b"tokenizer=tok)", b"processing_class=tok)", 1)


def test_the_cleanup_of_each_ipython_version():
    """What IPython 7.x/8.x (8) and 9.x (9) make of a cell's lines before parsing it."""
    from precision_lint.workspace.notebook import ipython_cleaned

    cleaned = ipython_cleaned(["\n", "    x = 1\n", "y = 2\n"], 8)
    assert cleaned.lines == ["x = 1\n", "y = 2\n"] and cleaned.dropped == 1 and cleaned.removed(0) == 4
    assert ipython_cleaned(["\n", "    x = 1\n", "y = 2\n"], 9).lines == ["    x = 1\n", "y = 2\n"]  # nothing common
    assert ipython_cleaned(["    x = 1\n", "      y\n"], 9).lines == ["x = 1\n", "  y\n"]
    assert ipython_cleaned(["f(\n", "... 1)\n"], 8).lines == ["f(\n", "1)\n"]
    assert ipython_cleaned(["f(\n", "... 1)\n"], 9) is None  # 9.x strips `...` only beside a `>>>` line
    assert ipython_cleaned(["y = 1\n", "z = 2\n", ">>> x\n"], 8) is None  # 8.x looks at the first two lines
    assert ipython_cleaned(["y = 1\n", "z = 2\n", ">>> x\n"], 9).lines == ["y = 1\n", "z = 2\n", "x\n"]
    assert ipython_cleaned(["x = 1\n"], 8) is None and ipython_cleaned(["x = 1\n"], 9) is None


EVALUATION_STRATEGY = (
    "from transformers import TrainingArguments\n"
    "args = TrainingArguments(output_dir='out', evaluation_strategy='steps')\n"
)


@pytest.mark.parametrize(
    "later, flagged",
    [
        # review 33a's M2: the cells before the upgrade ran on 4.38.2, the cells after on the newest
        ("!pip install --upgrade transformers", [9]),
        ("!pip install -q -U transformers accelerate", [9]),
        ("!pip install transformers==4.52.0", [9]),  # a version the pin does not satisfy replaces it
        # installs nothing more: "Requirement already satisfied"
        ("!pip install transformers peft", []),
        ("!pip install 'transformers>=4.30'", []),
    ],
)
def test_cells_after_a_later_install_are_judged_on_what_it_installs(tmp_path, later, flagged):
    """A notebook that pins ``transformers==4.38.2`` in its first cell and upgrades in a later
    one: each cell is judged on what it runs with, ``evaluation_strategy=`` (gone in 4.51) fine
    before the upgrade and a ``TypeError`` after it."""
    from conftest import write_tree

    root = write_tree(tmp_path, {".git/HEAD": ""})
    nb = _code_notebook("!pip install -q transformers==4.38.2", EVALUATION_STRATEGY, later, EVALUATION_STRATEGY)
    (root / "train.ipynb").write_bytes(nb)
    found = findings_in(root, ["MP302"])
    assert [d.span.line for d in found] == flagged
    assert all("evaluation_strategy" in d.message for d in found)


def test_a_notebook_installed_once_is_one_part():
    """Only a library installed again, differently, splits a notebook: a first install of
    another library later on changes nothing for the cells before it (they cannot import it)."""
    from precision_lint.workspace.versions import install_segments

    assert install_segments([(1, "!pip install transformers==4.38.2\n"), (9, "!pip install peft==0.10.0\n")]) == ()
    pin, upgrade = "!pip install transformers==4.38.2 trl\n", "!pip install -U transformers\n"
    assert install_segments([(1, pin), (9, "!nvidia-smi\n"), (20, upgrade)]) == (
        (1, (pin, "!nvidia-smi\n")),
        (20, (pin, "!nvidia-smi\n", upgrade)),
    )
