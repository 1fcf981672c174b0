"""The command line, through a real subprocess: exit codes, formats, --fix, --diff, noqa, config."""
import json

import pytest
from conftest import run_cli

BAD = """\
from transformers import Trainer
trainer = Trainer(model=m, tokenizer=tok)
"""
GOOD = """\
from transformers import Trainer
trainer = Trainer(model=m, processing_class=tok)
"""
PYPROJECT = '[tool.precision-lint]\ntransformers-version = "5.23"\n'


def project(tmp_path, files):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def test_exit_codes(tmp_path):
    project(tmp_path, {"bad.py": BAD, "good.py": GOOD})
    assert run_cli("good.py", cwd=tmp_path).returncode == 0
    bad = run_cli("bad.py", cwd=tmp_path)
    assert bad.returncode == 1
    assert "bad.py:2:28: MP301" in bad.stdout
    assert run_cli("--exit-zero", "bad.py", cwd=tmp_path).returncode == 0
    assert run_cli("check", ".", cwd=tmp_path).returncode == 1  # folder, explicit subcommand
    assert run_cli(cwd=tmp_path).returncode == 1  # default path: .
    usage = run_cli("--no-such-flag", cwd=tmp_path)
    assert usage.returncode == 2 and "unrecognized arguments" in usage.stderr
    missing = run_cli("nope.py", cwd=tmp_path)
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_json_schema(tmp_path):
    project(tmp_path, {"bad.py": BAD})
    out = run_cli("--output-format", "json", "bad.py", cwd=tmp_path)
    assert out.returncode == 1
    (item,) = json.loads(out.stdout)
    assert set(item) == {
        "code", "message", "filename", "cell", "location", "end_location", "fix", "noqa_row", "url", "related",
    }
    assert item["code"] == "MP301"
    assert item["cell"] is None  # a notebook finding has its 1-based code cell here (ruff's convention)
    assert item["filename"] == str(tmp_path / "bad.py")
    assert item["location"] == {"row": 2, "column": 28}
    assert item["end_location"] == {"row": 2, "column": 37}
    assert item["noqa_row"] == 2
    assert item["url"].endswith("/rules/MP301.md")
    assert item["related"] == []
    assert item["fix"]["applicability"] == "safe"
    assert item["fix"]["edits"] == [
        {"content": "processing_class", "cell": None, "location": {"row": 2, "column": 28}, "end_location": {"row": 2, "column": 37}}
    ]
    clean = run_cli("--output-format", "json", "bad.py", "--select", "MP1", cwd=tmp_path)
    assert clean.returncode == 0 and json.loads(clean.stdout) == []


def test_diff_writes_nothing(tmp_path):
    project(tmp_path, {"bad.py": BAD})
    out = run_cli("--diff", "bad.py", cwd=tmp_path)
    assert out.returncode == 1
    assert "-trainer = Trainer(model=m, tokenizer=tok)" in out.stdout
    assert "+trainer = Trainer(model=m, processing_class=tok)" in out.stdout
    assert (tmp_path / "bad.py").read_text() == BAD
    assert run_cli("--diff", "bad.py", "--select", "MP2", cwd=tmp_path).returncode == 0


def test_fix_writes_and_second_run_is_clean(tmp_path):
    project(tmp_path, {"src/bad.py": BAD, "src/good.py": GOOD})
    before_good = (tmp_path / "src/good.py").stat().st_mtime_ns
    out = run_cli("--fix", "src", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 fixed, 0 remaining" in out.stdout
    assert (tmp_path / "src/bad.py").read_text() == GOOD
    assert (tmp_path / "src/good.py").stat().st_mtime_ns == before_good  # untouched
    again = run_cli("src", cwd=tmp_path)
    assert again.returncode == 0 and "All checks passed!" in again.stdout


def test_noqa_and_skip_file(tmp_path):
    project(
        tmp_path,
        {
            "a.py": BAD.replace("tok)\n", "tok)  # noqa: MP301\n"),
            "b.py": BAD.replace("tok)\n", "tok)  # noqa\n"),
            "c.py": BAD.replace("tok)\n", "tok)  # noqa: MP101\n"),
            "d.py": "# precision-lint: skip-file\n" + BAD,
        },
    )
    out = run_cli("--output-format", "concise", ".", cwd=tmp_path)
    assert out.returncode == 1
    flagged = [line.split(":")[0] for line in out.stdout.splitlines() if "MP301" in line]
    assert flagged == ["c.py"]


def test_syntax_error_is_reported_and_left_untouched(tmp_path):
    broken = "from transformers import Trainer\nTrainer(tokenizer=tok\n"
    project(tmp_path, {"broken.py": broken, "bad.py": BAD})
    out = run_cli("--fix", "--output-format", "json", ".", cwd=tmp_path)
    assert out.returncode == 1
    items = json.loads(out.stdout)
    assert [i["code"] for i in items] == ["MP000"]
    assert items[0]["filename"].endswith("broken.py")
    assert (tmp_path / "broken.py").read_bytes() == broken.encode()
    assert (tmp_path / "bad.py").read_text() == GOOD  # the rest is still fixed
    assert "Traceback" not in out.stderr


def test_undecodable_file_is_mp001(tmp_path):
    project(tmp_path, {})
    (tmp_path / "latin.py").write_bytes(b"x = '\xff tokenizer'\n")
    out = run_cli("--output-format", "concise", ".", cwd=tmp_path)
    assert out.returncode == 1 and "MP001" in out.stdout and "UTF-8" in out.stdout


def test_config_errors_exit_2(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.precision-lint]\nselct = ["MP301"]\n')
    (tmp_path / "a.py").write_text(GOOD)
    out = run_cli("a.py", cwd=tmp_path)
    assert out.returncode == 2 and "unknown key(s) selct" in out.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.precision-lint]\ntarget-gpus = ["gtx9999"]\n')
    out = run_cli("a.py", cwd=tmp_path)
    assert out.returncode == 2 and "unknown GPU 'gtx9999'" in out.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.precision-lint.rules.MP301]\nfoo = 1\n')
    out = run_cli("a.py", cwd=tmp_path)
    assert out.returncode == 2 and "unknown option(s) foo for MP301" in out.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.precision-lint\n")
    out = run_cli("a.py", cwd=tmp_path)
    assert out.returncode == 2 and "invalid TOML" in out.stderr
    missing = run_cli("--config", "nope.toml", "a.py", cwd=tmp_path)
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_config_select_ignore_and_per_file_ignores(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        PYPROJECT + '[tool.precision-lint.per-file-ignores]\n"legacy/*.py" = ["MP301"]\n'
    )
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "old.py").write_text(BAD)
    (tmp_path / "new.py").write_text(BAD)
    out = run_cli("--output-format", "concise", ".", cwd=tmp_path)
    assert "new.py" in out.stdout and "old.py" not in out.stdout
    assert run_cli("--ignore", "MP3", ".", cwd=tmp_path).returncode == 0
    assert run_cli("--select", "MP301", "new.py", cwd=tmp_path).returncode == 1


def test_discovery_honours_gitignore_and_skips_venvs(tmp_path):
    project(tmp_path, {"kept.py": BAD, "generated/out.py": BAD, "venv2/lib.py": BAD, "build/x.py": BAD})
    (tmp_path / ".gitignore").write_text("generated/\n")
    (tmp_path / "venv2" / "pyvenv.cfg").write_text("home = /usr\n")
    out = run_cli("--output-format", "concise", ".", cwd=tmp_path)
    files = sorted({line.split(":")[0] for line in out.stdout.splitlines() if "MP301" in line})
    assert files == ["kept.py"]
    # named explicitly: always checked
    assert run_cli("generated/out.py", cwd=tmp_path).returncode == 1


def test_statistics_and_version(tmp_path):
    project(tmp_path, {"bad.py": BAD + BAD.splitlines()[1] + "\n"})
    out = run_cli("--statistics", "bad.py", cwd=tmp_path)
    assert out.returncode == 1
    assert out.stdout.split() == ["2", "MP301", "[*]", "trainer-tokenizer-argument"]
    assert run_cli("--version").stdout.startswith("precision-lint ")


def test_rule_command():
    out = run_cli("rule", "MP301")
    assert out.returncode == 0 and out.stdout.startswith("# MP301")
    assert "unexpected keyword argument 'tokenizer'" in out.stdout
    listing = run_cli("rule", "--all")
    assert listing.returncode == 0 and "MP301" in listing.stdout and "trainer-tokenizer-argument" in listing.stdout
    assert run_cli("rule", "MP999").returncode == 2


def test_empty_folder_is_a_clean_silent_success(tmp_path):
    out = run_cli("--fix", "--quiet", str(tmp_path))
    assert out.returncode == 0 and out.stdout == "" and out.stderr == ""


def test_facts_cache_is_used_and_invalidated_by_content(tmp_path):
    project(tmp_path, {"bad.py": BAD})
    cache = tmp_path / "cache"
    first = run_cli("--cache-dir", str(cache), "--output-format", "json", "bad.py", cwd=tmp_path)
    # the file's facts, and those of its fixed copy (a fix is marked [*] once its result is re-linted)
    entries = sorted(p for p in cache.rglob("*.pickle") if "runs" not in p.parts and "imports" not in p.parts and "ledgers" not in p.parts and p.name != "stamps.pickle")
    assert first.returncode == 1 and len(entries) == 2
    assert (cache / ".gitignore").read_text().strip().endswith("*")
    again = run_cli("--cache-dir", str(cache), "--output-format", "json", "bad.py", cwd=tmp_path)
    assert again.stdout == first.stdout  # answered from the cache, same findings
    entries[0].write_bytes(b"not a pickle")  # a damaged entry is recomputed, never trusted
    assert run_cli("--cache-dir", str(cache), "--output-format", "json", "bad.py", cwd=tmp_path).stdout == first.stdout
    (tmp_path / "bad.py").write_text(GOOD)  # new content, new key
    assert run_cli("--cache-dir", str(cache), "bad.py", cwd=tmp_path).returncode == 0
    no_cache = tmp_path / "unused"
    run_cli("--no-cache", "--cache-dir", str(no_cache), "bad.py", cwd=tmp_path)
    assert not no_cache.exists()


def test_a_run_answered_by_its_stamps_shows_what_the_first_run_showed(tmp_path):
    """A warm run over a folder reads only the files with findings again, and reads them as
    the first run did: a file over max-file-size is still shown without its text."""
    project(tmp_path, {"bad.py": BAD, "big.py": "x = 1\n" * 600})
    (tmp_path / "pyproject.toml").write_text(PYPROJECT + 'max-file-size = "2KB"\n')
    cache = tmp_path / "cache"
    first = run_cli("--cache-dir", str(cache), ".", cwd=tmp_path)
    assert "big.py:1:1: MP002" in first.stdout and first.returncode == 1
    again = run_cli("--cache-dir", str(cache), ".", cwd=tmp_path)
    assert again.stdout == first.stdout and again.returncode == first.returncode


def test_version_and_help_import_neither_libcst_nor_the_rules():
    """`--version` and `--help` start fast: LibCST, the engine and the rules are imported only
    by the commands that run them (`python -X importtime`: ~0.15 s instead of ~0.6 s)."""
    import subprocess
    import sys

    from conftest import REPO

    for args in (["--version"], ["--help"], ["check", "--help"], ["check", "--no-such-flag"]):
        code = (
            "import sys\nfrom precision_lint.cli import main\n"
            f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
            "heavy = sorted(m for m in sys.modules if m == 'libcst' or m.startswith(('precision_lint.engine', 'precision_lint.rules')))\n"
            "print('HEAVY', heavy)\n"
        )
        out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
        assert "HEAVY []" in out.stdout, (args, out.stdout, out.stderr)
    help_text = subprocess.run([sys.executable, "-m", "precision_lint", "--help"], cwd=REPO, capture_output=True, text=True, timeout=60).stdout
    assert "--fix" in help_text and "--select" in help_text  # the top-level help shows the check options


def test_a_run_answered_from_its_cache_imports_no_libcst(tmp_path):
    """LibCST (a second and more to import on a busy machine) is never loaded where CPython
    compiles what a run fixes: CPython judges the fixed text (``fixer.still_valid``). A re-run
    over an unchanged tree reads one cached entry and gives the findings of the first; a
    changed file, whose fix is checked again, gives them again."""
    import subprocess
    import sys

    from conftest import REPO

    project(tmp_path, {"bad.py": BAD})
    cache = tmp_path / "cache"
    code = (
        "import sys\nfrom precision_lint.cli import main\n"
        f"try:\n    main(['--cache-dir', {str(cache)!r}, '--output-format', 'concise', 'bad.py'])\n"
        "except SystemExit:\n    pass\n"
        "print('LIBCST', 'libcst' in sys.modules)\n"
    )

    def run():
        env = dict(__import__("os").environ, PYTHONPATH=str(REPO), NO_COLOR="1")
        return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)

    first = run()
    assert "MP301" in first.stdout and "[*]" in first.stdout and "LIBCST False" in first.stdout, first.stderr
    again = run()
    assert again.stdout == first.stdout, again.stderr
    (tmp_path / "bad.py").write_text(BAD + "\n# edited\n")
    assert run().stdout == first.stdout


def test_libcst_judges_a_fixed_text_only_where_cpython_cannot():
    """A fixed text CPython compiles parses: LibCST is not loaded for it. It is asked where the
    original does not compile with this interpreter (newer syntax: the fixed text must still
    parse), and gives the reason where the fixed text does not compile."""
    import subprocess
    import sys

    from conftest import REPO

    code = (
        "import sys\nfrom precision_lint.fixes.fixer import still_valid\n"
        "print('OK', still_valid('x = 1\\n', 'import torch\\nx = 1\\n'), 'libcst' in sys.modules)\n"
        "print('BROKEN', still_valid('x = 1\\n', 'x = (1\\n'), 'libcst' in sys.modules)\n"
        "print('NEWER', still_valid('x = 1 +\\n', 'x = 2\\n'))\n"
    )
    env = dict(__import__("os").environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines())
    assert lines["OK"] == "None False", out.stderr
    assert lines["BROKEN"].startswith("Syntax Error") and lines["BROKEN"].endswith("True"), out.stdout
    assert lines["NEWER"] == "None", out.stdout


def test_a_fix_of_notebook_code_in_a_py_file_is_judged_without_its_ipython_lines():
    """A Colab export (``!pip install -q peft`` among its lines) compiles only once its IPython
    lines are quieted (``notebook.quieted_ipython_lines``), as IPython runs it: a fixed text is
    judged the same way, without LibCST (which reads no IPython line and refused every fix of
    such a file, ``Syntax Error @ 1:1``). A fix that breaks its Python lines is still refused."""
    from precision_lint.fixes.fixer import still_valid

    head = '"""nb.ipynb\n\nAutomatically generated by Colab.\n"""\n!pip install -q peft\n'
    original = head + "import torch\nx = torch.bfloat16\n"
    assert still_valid(original, head + "import torch\nx = torch.float16\n") is None
    assert still_valid(original, head + "import torch\nx = (torch.float16\n").startswith("SyntaxError: ")
    # an IPython line the fix wrote, where a statement of Python was: refused as well
    assert still_valid(original, head + "import torch\nx = 1 if ok else\n").startswith("SyntaxError: ")


def test_a_refused_fix_is_news_only_where_fixes_were_asked_for(tmp_path, monkeypatch, capsys):
    """A check run tries each fix to tell which findings are fixable (``[*]``): a fix it refuses
    is shown without the mark, and no warning says fixes "were not applied" (a cold check printed
    one, a warm one, answered from the cache, none). Where fixes are asked for, the file's refusal
    is said once."""
    from precision_lint import cli
    from precision_lint.fixes import fixer

    project(tmp_path, {"bad.py": BAD})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(fixer, "still_valid", lambda old, new, path="<fixed>": "Syntax Error @ 1:1.")
    assert cli.main(["--no-cache", "--output-format", "concise", "bad.py"]) == 1
    out, err = capsys.readouterr()
    assert "bad.py:2:28: MP301 `tokenizer=`" in out and "not applied" not in err
    assert cli.main(["--no-cache", "--output-format", "concise", "--fix", "bad.py"]) == 1
    out, err = capsys.readouterr()
    assert err.count("fixes for bad.py were not applied: the result would not parse (Syntax Error @ 1:1.)") == 1, err
    assert (tmp_path / "bad.py").read_text() == BAD


def test_a_plain_check_of_one_script_imports_only_what_it_uses(tmp_path):
    """A pre-commit run on one script (findings with fixes, no cache, no notebook, no .gitignore,
    no pyproject.toml): importlib.metadata and the email package (the installed versions are read
    from the metadata files), pathspec, pickle, tempfile, configparser, difflib, the other
    reporters are each a few hundredths of a second of a cold start that never needs them."""
    import subprocess
    import sys

    from conftest import REPO

    (tmp_path / "train.py").write_text(
        "import torch\nfrom transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n\n"
        'model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.float16)\n'
        'args = TrainingArguments(output_dir="out", fp16=True)\n'
        "Trainer(model=model, args=args, tokenizer=None).train()\n"
    )
    unused = (
        "importlib.metadata", "email", "pathspec", "pickle", "tempfile", "configparser", "difflib", "zipfile",
        "precision_lint.reporters.sarif", "precision_lint.reporters.json_format", "precision_lint.reporters.github",
    )
    code = (
        "import sys\nfrom precision_lint.cli import main\n"
        "try:\n    main(['--no-cache', 'train.py'])\n"
        "except SystemExit:\n    pass\n"
        f"print('LOADED', [m for m in {unused!r} if m in sys.modules])\n"
    )
    env = dict(__import__("os").environ, PYTHONPATH=str(REPO), NO_COLOR="1")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert "MP101" in out.stdout and "[*]" in out.stdout, (out.stdout, out.stderr)  # judged, and a fix checked
    assert "LOADED []" in out.stdout, (out.stdout, out.stderr)


@pytest.mark.parametrize(
    "text,analysed",
    [
        ("import os\nprint(os.getcwd())\n", False),  # imports no library the rules are about: not analysed
        ("def f(:\n", False),  # CPython refuses it: MP000 without the analysis
        ("import torch\nx = torch.zeros(1)\n", True),  # analysed
    ],
    ids=["not-analysed", "syntax-error", "analysed"],
)
def test_libcst_is_loaded_only_to_check_a_fix(tmp_path, text, analysed):
    """The analysis reads CPython's `ast`: LibCST is loaded only to check that a fixed text
    still parses, and none of these files has a finding with a fix. A file that imports no
    library the rules are about, or that CPython refuses, is not analysed at all."""
    import subprocess
    import sys

    from conftest import REPO

    (tmp_path / "f.py").write_text(text)
    code = (
        "import sys\nfrom precision_lint.cli import main\n"
        "try:\n    main(['--no-cache', '--output-format', 'concise', 'f.py'])\n"
        "except SystemExit:\n    pass\n"
        "print('LIBCST', 'libcst' in sys.modules)\n"
        "print('ANALYSED', 'precision_lint.semantic.index' in sys.modules)\n"
    )
    env = dict(__import__("os").environ, PYTHONPATH=str(REPO), NO_COLOR="1")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert "LIBCST False" in out.stdout, (out.stdout, out.stderr)
    assert f"ANALYSED {analysed}" in out.stdout, (out.stdout, out.stderr)
    assert ("MP000" in out.stdout) == text.startswith("def f(:")
