"""An internal error (a bug of ours) on one file never aborts the run: the file gets MP003,
naming the stage and the exception, every other file is linted as usual, the run exits 2, the
file is never rewritten and never cached as checked.

No source we know of crashes precision-lint today (deep nesting is MP000/MP002, see
test_bad_input.py), so the failure is injected: in this process with pytest's monkeypatch on
one extractor, rule or join step; in subprocesses (the command line, worker processes, the
language server) by a ``sitecustomize`` module that makes the ``cuda_amp`` extractor recurse
without end on a module named ``crashy``: a real ``RecursionError`` raised inside the
analysis of that one file.
"""
import json
import multiprocessing
import os
import re


from conftest import REPO, config, dedent, run_cli

from precision_lint.engine import Engine
from precision_lint.facts.extractors import cuda_amp

GOOD = """
import torch
scaler = torch.cuda.amp.GradScaler()
"""
# MP303 with a safe fix: what --fix would rewrite in it
CRASHY = """
import torch
scaler = torch.cuda.amp.GradScaler()
"""
QUIET = "import os\nprint(os.getcwd())\n"

INJECT = '''
from precision_lint.facts.extractors import cuda_amp

_extract = cuda_amp.extract


def _deeper(n):
    return _deeper(n + 1)


def extract(index, evaluator):
    if index.module_name.rsplit(".", 1)[-1] == "crashy":
        _deeper(0)
    return _extract(index, evaluator)


cuda_amp.extract = extract
'''

MESSAGE = re.compile(
    r"internal error while analysing crashy\.py \(reading facts: extractor cuda_amp(, at [\w/.]+:\d+)?\): "
    r"RecursionError: maximum recursion depth exceeded[^;]*; please report it"
)


def _crash_on_crashy(monkeypatch):
    real = cuda_amp.extract

    def extract(index, evaluator):
        if index.module_name.rsplit(".", 1)[-1] == "crashy":
            def deeper(n):
                return deeper(n + 1)

            deeper(0)
        return real(index, evaluator)

    monkeypatch.setattr(cuda_amp, "extract", extract)


def _project(tmp_path, quiet=0):
    root = tmp_path / "proj"
    root.mkdir()
    files = {"good.py": GOOD, "other.py": GOOD, "crashy.py": CRASHY}
    files.update({f"quiet{i:02}.py": QUIET for i in range(quiet)})
    for name, text in files.items():
        (root / name).write_text(dedent(text))
    return root


def _by_file(diagnostics):
    out = {}
    for d in diagnostics:
        out.setdefault(os.path.basename(d.path), []).append(d)
    return out


def _engine(tmp_path=None, **kw):
    cache = str(tmp_path / "cache") if tmp_path is not None else None
    return Engine(config(), None, jobs=kw.pop("jobs", 1), cache_dir=cache, **kw)


def _inject_env(tmp_path):
    folder = tmp_path / "inject"
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(INJECT)
    return {"PYTHONPATH": f"{folder}{os.pathsep}{REPO}"}


# --- the engine, in this process -------------------------------------------------------------
def test_a_crashing_file_gets_mp003_and_every_other_file_is_linted(tmp_path, monkeypatch):
    root = _project(tmp_path)
    before = _by_file(_engine().run_paths([str(root)]).diagnostics)
    assert [d.code for d in before["crashy.py"]] == ["MP303"]
    _crash_on_crashy(monkeypatch)
    after = _by_file(_engine().run_paths([str(root)]).diagnostics)
    assert after["good.py"] == before["good.py"] and after["other.py"] == before["other.py"]
    [found] = after["crashy.py"]  # its MP303 was not found: nothing else is said of it
    assert found.code == "MP003" and (found.span.line, found.span.col) == (1, 0)
    assert MESSAGE.fullmatch(found.message), found.message


def test_the_failed_file_is_not_cached_as_checked(tmp_path, monkeypatch):
    """Facts cache, run cache and the engine's memory: the next run analyses it again."""
    root = _project(tmp_path)
    with monkeypatch.context() as m:
        _crash_on_crashy(m)
        engine = _engine(tmp_path)
        assert [d.code for d in _by_file(engine.run_paths([str(root)]).diagnostics)["crashy.py"]] == ["MP003"]
    # the bug fixed (the extractor as it is): a new process on the same cache, and the same engine
    for engine in (_engine(tmp_path), engine):
        again = _by_file(engine.run_paths([str(root)]).diagnostics)
        assert [d.code for d in again["crashy.py"]] == ["MP303"]


def test_worker_processes_report_the_crash_and_read_the_other_files(tmp_path, monkeypatch):
    """Over PARALLEL_THRESHOLD files, the facts are read in a pool: the crash is caught in the
    worker (forked here, so it inherits the patched extractor)."""
    from precision_lint import engine as engine_module

    root = _project(tmp_path, quiet=engine_module.PARALLEL_THRESHOLD)
    _crash_on_crashy(monkeypatch)
    found = _by_file(_engine(jobs=2, mp_context=multiprocessing.get_context("fork")).run_paths([str(root)]).diagnostics)
    assert [d.code for d in found["good.py"]] == ["MP303"] and [d.code for d in found["other.py"]] == ["MP303"]
    assert [d.code for d in found["crashy.py"]] == ["MP003"]
    assert MESSAGE.fullmatch(found["crashy.py"][0].message)


def test_a_rule_that_raises_on_one_file_stops_only_that_rule_there(tmp_path, monkeypatch):
    """MP303 raising on crashy.py: MP003 there names the rule; its other rules still judge it,
    but its fixes are dropped (--fix never rewrites a file that was not checked whole)."""
    from precision_lint.rules import mp303_deprecated_torch_cuda_amp as mp303

    rule = next(v for v in vars(mp303).values() if isinstance(v, type) and getattr(v, "code", "") == "MP303")
    real = rule.check

    def check(self, ctx):
        if ctx.path.endswith("crashy.py"):
            raise KeyError("scaler")
        return real(self, ctx)

    monkeypatch.setattr(rule, "check", check)
    root = _project(tmp_path)
    (root / "crashy.py").write_text(dedent(CRASHY) + "from transformers import Trainer\nTrainer(model, args, tokenizer=tok)\n")
    found = _by_file(_engine().run_paths([str(root)]).diagnostics)
    assert [d.code for d in found["good.py"]] == ["MP303"]
    codes = [d.code for d in found["crashy.py"]]
    assert codes == ["MP003", "MP301"], codes
    assert re.fullmatch(
        r"internal error while analysing crashy\.py \(rule MP303, at [\w/.]+:\d+\): KeyError: 'scaler'; please report it",
        found["crashy.py"][0].message,
    )
    assert all(d.fix is None for d in found["crashy.py"])  # MP301's fix is held back
    result = _engine().run_paths([str(root)], fix=True)
    assert str(root / "crashy.py") not in result.changed
    assert str(root / "good.py") in result.changed


def test_a_join_step_that_raises_on_one_module_stops_only_that_module(tmp_path, monkeypatch):
    from precision_lint.project import interproc

    real = interproc.CallGraphValues.resolve_facts

    def resolve_facts(self, module):
        if module.path.endswith("crashy.py"):
            raise ValueError("no such scope")
        return real(self, module)

    monkeypatch.setattr(interproc.CallGraphValues, "resolve_facts", resolve_facts)
    found = _by_file(_engine().run_paths([str(_project(tmp_path))]).diagnostics)
    assert [d.code for d in found["good.py"]] == ["MP303"] and [d.code for d in found["other.py"]] == ["MP303"]
    [crash] = found["crashy.py"]
    assert crash.code == "MP003" and "(joining the project, at project/" in crash.message
    assert crash.message.endswith("ValueError: no such scope; please report it")


def test_the_whole_project_join_raising_reports_every_file_it_stopped(tmp_path, monkeypatch):
    from precision_lint.project import model

    def broken(self, *args):
        raise AttributeError("'NoneType' object has no attribute 'scope'")

    monkeypatch.setattr(model.TrainedJoin, "__init__", broken)
    found = _by_file(_engine().run_paths([str(_project(tmp_path))]).diagnostics)
    assert sorted(found) == ["crashy.py", "good.py", "other.py"]
    for name, diagnostics in found.items():
        assert [d.code for d in diagnostics] == ["MP003"]
        assert diagnostics[0].message.startswith(f"internal error while analysing {name} (joining the project")


LIB = """
import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
scaler = torch.amp.GradScaler("cuda")
"""


def test_one_run_raising_keeps_the_findings_of_the_other_runs(tmp_path, monkeypatch):
    """lib.py's float16 model under a GradScaler runs in the runs of a.py and b.py; judging the
    run of a.py raises: MP101 is still found through the run of b.py, and MP003 names the run."""
    from precision_lint.rules import mp101_fp16_weights_under_loss_scaling as mp101

    root = tmp_path / "proj"
    root.mkdir()
    (root / "lib.py").write_text(dedent(LIB))
    (root / "a.py").write_text("import lib\nprint(lib.model)\n")
    (root / "b.py").write_text("import lib\nprint(lib.opt)\n")
    real = mp101.training_site

    def training_site(project, entry, *args, **kw):
        if entry.path.endswith("a.py"):
            raise IndexError("list index out of range")
        return real(project, entry, *args, **kw)

    monkeypatch.setattr(mp101, "training_site", training_site)
    found = Engine(config(), ["MP101"], jobs=1).run_paths([str(root)]).diagnostics
    assert [(os.path.basename(d.path), d.code) for d in found] == [("lib.py", "MP003"), ("lib.py", "MP101")]
    assert "(rule MP101 in the run of a.py, at rules/mp101" in found[0].message
    assert found[1].fix is None  # a file not checked whole is never rewritten


def test_mp003_is_never_ignored_deselected_or_silenced(tmp_path, monkeypatch):
    root = _project(tmp_path)
    (root / "crashy.py").write_text("import torch  # noqa\n" + dedent(CRASHY).split("\n", 1)[1])
    _crash_on_crashy(monkeypatch)
    cfg = config(per_file_ignores={"crashy.py": ["MP0"]}, ignore=["MP003"])
    found = _by_file(Engine(cfg, ["MP101"], jobs=1).run_paths([str(root)]).diagnostics)
    assert sorted(found) == ["crashy.py"] and [d.code for d in found["crashy.py"]] == ["MP003"]


# --- the command line, in a subprocess: a real RecursionError in the extractor -----------------
def test_cli_reports_the_crash_lints_the_rest_and_exits_2(tmp_path):
    root = _project(tmp_path)
    env = _inject_env(tmp_path)
    out = run_cli("--no-cache", "--output-format", "concise", str(root), cwd=tmp_path, env=env)
    assert out.returncode == 2, out.stderr
    lines = out.stdout.splitlines()
    assert [l.split()[1] for l in lines if l.startswith("proj/")] == ["MP003", "MP303", "MP303"]
    assert any(l.startswith("proj/crashy.py:1:1: MP003 ") and MESSAGE.search(l) for l in lines), out.stdout
    assert "proj/good.py:2:10: MP303" in out.stdout and "proj/other.py:2:10: MP303" in out.stdout
    assert "internal error stopped the analysis of 1 file (proj/crashy.py" in out.stderr
    assert "Traceback" not in out.stderr
    # --exit-zero never turns a file that was not checked into a pass
    assert run_cli("--no-cache", "--exit-zero", str(root), cwd=tmp_path, env=env).returncode == 2
    # the same run without the bug: exit 1 (findings), nothing said of an internal error
    clean = run_cli("--no-cache", str(root), cwd=tmp_path)
    assert clean.returncode == 1 and "MP003" not in clean.stdout


def test_cli_json_and_sarif_carry_the_crash(tmp_path):
    root = _project(tmp_path)
    env = _inject_env(tmp_path)
    out = run_cli("--no-cache", "--output-format", "json", str(root), cwd=tmp_path, env=env)
    assert out.returncode == 2
    items = json.loads(out.stdout)
    assert sorted((os.path.basename(i["filename"]), i["code"]) for i in items) == [
        ("crashy.py", "MP003"), ("good.py", "MP303"), ("other.py", "MP303")
    ]
    crash = next(i for i in items if i["code"] == "MP003")
    assert MESSAGE.fullmatch(crash["message"]) and crash["fix"] is None
    assert crash["url"].endswith("/rules/MP003.md")
    out = run_cli("--no-cache", "--output-format", "sarif", str(root), cwd=tmp_path, env=env)
    assert out.returncode == 2
    run = json.loads(out.stdout)["runs"][0]
    assert "MP003" in [r["id"] for r in run["tool"]["driver"]["rules"]]
    results = [r for r in run["results"] if r["ruleId"] == "MP003"]
    assert len(results) == 1 and MESSAGE.fullmatch(results[0]["message"]["text"])
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("crashy.py")


def test_cli_fix_writes_the_other_files_and_never_the_crashing_one(tmp_path):
    root = _project(tmp_path)
    env = _inject_env(tmp_path)
    before = (root / "crashy.py").read_bytes()
    out = run_cli("--fix", str(root), cwd=tmp_path, env=env)  # with the cache: it must not keep the crash
    assert out.returncode == 2, out.stderr
    assert (root / "crashy.py").read_bytes() == before
    assert "torch.amp.GradScaler" in (root / "good.py").read_text()
    assert "MP003" in out.stdout
    # the next run, without the bug and on the same cache, analyses crashy.py and fixes it
    out = run_cli("--fix", str(root), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "torch.amp.GradScaler" in (root / "crashy.py").read_text()


def test_cli_jobs_pool_in_subprocess(tmp_path):
    """The worker pool of a real run (the sitecustomize is loaded by every process)."""
    from precision_lint.engine import PARALLEL_THRESHOLD

    root = _project(tmp_path, quiet=PARALLEL_THRESHOLD)
    out = run_cli("--no-cache", "--jobs", "2", "--output-format", "concise", str(root), cwd=tmp_path, env=_inject_env(tmp_path))
    assert out.returncode == 2, out.stderr
    assert re.search(r"^proj/crashy\.py:1:1: MP003 ", out.stdout, re.MULTILINE)
    assert out.stdout.count(" MP303 ") == 2


def test_add_noqa_writes_nothing_into_the_crashing_file_and_exits_2(tmp_path):
    root = _project(tmp_path)
    before = (root / "crashy.py").read_bytes()
    out = run_cli("--no-cache", "--add-noqa", str(root), cwd=tmp_path, env=_inject_env(tmp_path))
    assert out.returncode == 2
    assert (root / "crashy.py").read_bytes() == before
    assert "crashy.py: was not checked (internal error); no noqa comments added" in out.stderr
    assert "# noqa: MP303" in (root / "good.py").read_text()


# --- the language server ---------------------------------------------------------------------
def test_language_server_publishes_the_crash_as_a_diagnostic(tmp_path):
    from lsp_client import Editor, run

    root = _project(tmp_path)
    env = _inject_env(tmp_path)

    async def session():
        editor = Editor()
        await editor.start(root, env=env)
        crashy = editor.open(root / "crashy.py")
        good = editor.open(root / "good.py")
        await editor.until(lambda: editor.codes(crashy) == ["MP003"] and editor.codes(good) == ["MP303"])
        await editor.stop()

    run(session())
