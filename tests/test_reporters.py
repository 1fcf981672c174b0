"""Output formats: SARIF validated against the official 2.1.0 schema, GitHub workflow-command
escaping, full/concise layout with related locations, colour rules, and the progress bar."""
import io
import json

import pytest

from conftest import REPO, run_cli
from precision_lint.diagnostics import Diagnostic, Edit, Fix, Related, Span
from precision_lint.engine import Engine
from precision_lint.workspace.config import from_table
from precision_lint.reporters import Report, render
from precision_lint.reporters.github import escape_data, escape_property
from precision_lint.reporters.progress import THRESHOLD, ProgressBar, render_bar, wanted
from precision_lint.reporters.style import want_color
from precision_lint.rules import all_rules
from precision_lint.workspace.sources import SourceFile

jsonschema = pytest.importorskip("jsonschema")

SCHEMA = json.loads((REPO / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
BAD = "from transformers import Trainer\ntrainer = Trainer(model=m, tokenizer=tok)\n"
PYPROJECT = '[tool.precision-lint]\ntransformers-version = "5.23"\n'

TRAIN = "import torch\nscaler = torch.cuda.amp.GradScaler()\nmodel = load_model()\n"
MODELS = "import torch\n\ndef load_model():\n    return Net().half()\n"


def span_of(text: str, needle: str) -> Span:
    start = text.index(needle)
    line = text.count("\n", 0, start) + 1
    col = start - (text.rfind("\n", 0, start) + 1)
    return Span(line, col, line, col + len(needle), start, start + len(needle))


def cross_file_report(tmp_path=None, color=False) -> Report:
    """A finding with a related location in another file and a fix (what MP101-style rules emit)."""
    train = "train, with: comma.py"  # a name that needs escaping in GitHub properties
    d = Diagnostic(
        "MP301",
        "GradScaler with an fp16 model: 100% sure to fail\nValueError: Attempting to unscale FP16 gradients.",
        train,
        span_of(TRAIN, "torch.cuda.amp.GradScaler()"),
        Fix("unsafe", "Keep the master weights in fp32", (Edit(TRAIN.index("load_model()"), TRAIN.index("load_model()"), "_fp32("),)),
        (Related("models.py", span_of(MODELS, ".half()"), "the model is made fp16 here"),),
    )
    return Report(
        diagnostics=[d],
        texts={train: TRAIN, "models.py": MODELS},
        color=color,
        rules=dict(all_rules()),
    )


def validate(sarif: dict) -> None:
    validator = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(sarif), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def test_schema_is_the_official_one():
    assert SCHEMA["id"].endswith("/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    with pytest.raises(jsonschema.ValidationError):  # it really checks
        jsonschema.validate({"version": "2.1.0", "runs": [{"tool": {}}]}, SCHEMA, cls=jsonschema.Draft4Validator)


def test_sarif_from_the_cli_validates(tmp_path):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "bad.py").write_text(BAD)
    out = run_cli("--output-format", "sarif", ".", cwd=tmp_path)
    assert out.returncode == 1
    sarif = json.loads(out.stdout)
    validate(sarif)
    run = sarif["runs"][0]
    driver = run["tool"]["driver"]
    assert {r["id"] for r in driver["rules"]} == set(all_rules())  # every rule, not just those found
    mp301 = next(r for r in driver["rules"] if r["id"] == "MP301")
    assert mp301["name"] == "trainer-tokenizer-argument"
    assert mp301["helpUri"].endswith("/rules/MP301.md")
    assert "transformers 5" in mp301["fullDescription"]["text"]  # from the page's "What fails"
    assert mp301["help"]["markdown"].startswith("# MP301")
    (result,) = run["results"]
    assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"] == "MP301"
    loc = result["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "bad.py", "uriBaseId": "%SRCROOT%"}
    assert loc["region"] == {"startLine": 2, "startColumn": 28, "endLine": 2, "endColumn": 37}
    (change,) = result["fixes"][0]["artifactChanges"]
    assert change["replacements"] == [
        {
            "deletedRegion": {"startLine": 2, "startColumn": 28, "endLine": 2, "endColumn": 37},
            "insertedContent": {"text": "processing_class"},
        }
    ]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"


def test_sarif_related_locations_and_no_findings_validate():
    sarif = json.loads(render("sarif", cross_file_report()))
    validate(sarif)
    (result,) = sarif["runs"][0]["results"]
    (related,) = result["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"] == "models.py"
    assert related["physicalLocation"]["region"]["startLine"] == 4
    assert related["message"]["text"] == "the model is made fp16 here"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "train,%20with%3A%20comma.py"  # no `:` in a relative URI's first segment
    empty = json.loads(render("sarif", Report(diagnostics=[], rules=dict(all_rules()))))
    validate(empty)
    assert empty["runs"][0]["results"] == []


def test_sarif_for_a_notebook_validates(tmp_path):
    from test_notebooks import kaggle_notebook, nbformat_bytes

    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "train.ipynb").write_bytes(nbformat_bytes(kaggle_notebook()))
    sarif = json.loads(run_cli("--output-format", "sarif", ".", cwd=tmp_path).stdout)
    validate(sarif)
    (result,) = sarif["runs"][0]["results"]
    assert result["properties"] == {"cell": 4, "cellLine": 2, "cellColumn": 43}
    assert result["message"]["text"].startswith("cell 4, line 2, column 43: ")
    assert "region" not in result["locations"][0]["physicalLocation"]  # cell lines are not file lines


def test_github_escaping_follows_the_spec():
    assert escape_data("100%\r\nnext") == "100%25%0D%0Anext"
    assert escape_property("a:b,c%d\n") == "a%3Ab%2Cc%25d%0A"
    assert escape_data("%0A") == "%250A"  # `%` first: nothing is escaped twice
    (line,) = render("github", cross_file_report()).splitlines()
    head, message = line.split("::", 2)[1:]
    assert head == (
        "error file=train%2C with%3A comma.py,line=2,col=10,endLine=2,endColumn=37,title=MP301"
    )
    assert message == (
        "MP301 GradScaler with an fp16 model: 100%25 sure to fail%0AValueError: Attempting to unscale "
        "FP16 gradients.%0ARelated: models.py:4:17: the model is made fp16 here"
    )


def test_github_from_the_cli(tmp_path):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "bad.py").write_text(BAD)
    out = run_cli("--output-format", "github", "bad.py", cwd=tmp_path)
    assert out.returncode == 1
    assert out.stdout.startswith(
        "::error file=bad.py,line=2,col=28,endLine=2,endColumn=37,title=MP301::MP301 `tokenizer=` passed"
    )
    assert out.stdout.count("\n") == 1  # one command, no summary lines
    env = {"PRECISION_LINT_OUTPUT_FORMAT": "github"}
    assert run_cli("bad.py", cwd=tmp_path, env=env).stdout == out.stdout


def test_full_shows_excerpt_caret_fix_hint_and_related_location():
    text = render("full", cross_file_report())
    lines = text.splitlines()
    assert lines[0] == (
        "train, with: comma.py:2:10: MP301 GradScaler with an fp16 model: 100% sure to fail"
    )
    assert "2 | scaler = torch.cuda.amp.GradScaler()" in text
    caret = next(l for l in lines if "^" in l)
    assert caret.index("^") == lines[lines.index(next(l for l in lines if l.startswith("2 |")))].index("torch")
    assert caret.count("^") == len("torch.cuda.amp.GradScaler()") and caret.endswith("MP301")
    assert "  ::: models.py:4:17: the model is made fp16 here" in text
    assert "  4 |     return Net().half()" in text  # the related excerpt
    assert any(l.strip().endswith("------- related") for l in lines)
    assert "  = help: Keep the master weights in fp32 (unsafe: needs `--unsafe-fixes`)" in text
    assert "\x1b[" not in text
    concise = render("concise", cross_file_report()).splitlines()
    assert concise[0].startswith("train, with: comma.py:2:10: MP301 GradScaler")
    assert concise[-1] == "Found 1 error."


def test_colour_only_on_a_tty_and_never_with_no_color(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    assert want_color(Tty()) is True
    assert want_color(io.StringIO()) is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert want_color(Tty()) is False
    assert "\x1b[31m" in render("full", cross_file_report(color=True))


def test_cli_output_has_no_colour_when_piped(tmp_path):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "bad.py").write_text(BAD)
    out = run_cli("bad.py", cwd=tmp_path, env={"NO_COLOR": ""})  # stdout is a pipe here
    assert out.returncode == 1 and "\x1b[" not in out.stdout and "^^^" in out.stdout
    forced = run_cli("bad.py", cwd=tmp_path, env={"NO_COLOR": "", "FORCE_COLOR": "1"})
    assert "\x1b[" in forced.stdout


# --- progress ---------------------------------------------------------------------------------
class FakeTty(io.StringIO):
    def isatty(self):
        return True


def test_progress_decision(monkeypatch):
    monkeypatch.delenv("PRECISION_LINT_NO_PROGRESS", raising=False)
    assert wanted(FakeTty(), THRESHOLD + 1)
    assert not wanted(FakeTty(), THRESHOLD)  # small runs: no bar
    assert not wanted(io.StringIO(), 10_000)  # not a terminal: no bar
    assert not wanted(None, 10_000)
    monkeypatch.setenv("PRECISION_LINT_NO_PROGRESS", "1")
    assert not wanted(FakeTty(), 10_000)
    assert render_bar(5, 10, width=10) == "[#####.....] 5/10 files"


def test_progress_bar_draws_and_erases_through_the_engine(monkeypatch):
    monkeypatch.delenv("PRECISION_LINT_NO_PROGRESS", raising=False)
    sources = [SourceFile(f"m{i}.py", b"", f"x = {i}\n") for i in range(THRESHOLD + 5)]
    names = {s.path: (s.path[:-3], False, "") for s in sources}
    tty = FakeTty()
    bar = ProgressBar(tty)
    Engine(from_table({}, "test"), jobs=1, progress=bar).run_sources(sources, names=names)
    bar.close()
    shown = tty.getvalue()
    assert bar.drawn >= 2
    assert f"] {THRESHOLD + 5}/{THRESHOLD + 5} files" in shown and shown.endswith("\r\x1b[K")
    quiet = io.StringIO()  # the same run on a pipe: nothing at all
    Engine(from_table({}, "test"), jobs=1, progress=ProgressBar(quiet)).run_sources(sources, names=names)
    assert quiet.getvalue() == ""
    small = FakeTty()  # a small run on a terminal: nothing either
    Engine(from_table({}, "test"), jobs=1, progress=ProgressBar(small)).run_sources(sources[:20], names=names)
    assert small.getvalue() == ""


def test_cli_prints_no_progress_when_stderr_is_not_a_tty(tmp_path):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    for i in range(THRESHOLD + 10):
        (tmp_path / f"m{i:03}.py").write_text(f"x = {i}\n")
    out = run_cli("--jobs", "1", ".", cwd=tmp_path)
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout == "All checks passed!\n"


@pytest.mark.skipif(not hasattr(__import__("os"), "openpty"), reason="needs a pseudo-terminal")
def test_cli_draws_the_bar_on_a_terminal_stderr_only(tmp_path):
    import os
    import subprocess
    import sys

    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    for i in range(THRESHOLD + 10):
        (tmp_path / f"m{i:03}.py").write_text(f"x = {i}\n")
    master, slave = os.openpty()
    env = dict(os.environ, PYTHONPATH=str(REPO), NO_COLOR="1")
    env.pop("PRECISION_LINT_NO_PROGRESS", None)
    proc = subprocess.run(
        [sys.executable, "-m", "precision_lint", "--jobs", "1", "."],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=slave, timeout=120,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    stderr = b"".join(chunks).decode()
    assert proc.returncode == 0
    assert proc.stdout.decode() == "All checks passed!\n"  # stdout stays clean
    assert f"{THRESHOLD + 10}/{THRESHOLD + 10} files" in stderr and stderr.endswith("\r\x1b[K")
