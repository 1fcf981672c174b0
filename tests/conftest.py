import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
REPO = Path(__file__).resolve().parent.parent

from precision_lint.workspace.config import from_table  # noqa: E402
from precision_lint.engine import check_source, fix_source  # noqa: E402


def dedent(src: str) -> str:
    return textwrap.dedent(src).lstrip("\n")


def config(**table):
    """A Config from keyword arguments spelled with underscores (target_gpus=...)."""
    table = {k.replace("_", "-"): v for k, v in table.items()}
    return from_table(table, "test")


_ALONE = None


def _alone():
    """An empty project folder (a ``.git`` marks its root) in which :func:`lint` and :func:`fix`
    check their source: a relative ``path`` resolves there, so what a check reads beside the
    file (a README's GPU, a requirements pin) is never this repository's own files, and a
    test's answer does not change with them."""
    global _ALONE
    if _ALONE is None:
        import tempfile

        _ALONE = tempfile.mkdtemp(prefix="precision-lint-alone-")
        os.mkdir(os.path.join(_ALONE, ".git"))
    return _ALONE


class _in_alone:
    def __enter__(self):
        self.cwd = os.getcwd()
        os.chdir(_alone())

    def __exit__(self, *exc):
        os.chdir(self.cwd)


def lint(src: str, code: str = None, cfg=None, path: str = "train.py"):
    with _in_alone():
        diags = check_source(dedent(src), path=path, config=cfg or config(**{"transformers_version": "5.23"}))
    return [d for d in diags if code is None or d.code == code]


def fix(src: str, code: str = None, cfg=None, unsafe: bool = False, path: str = "train.py") -> str:
    with _in_alone():
        return fix_source(
            dedent(src),
            path=path,
            config=cfg or config(**{"transformers_version": "5.23"}),
            unsafe=unsafe,
            select=[code] if code else None,
        )


def findings_in(root, codes=None):
    """The findings of a check of ``root`` with nothing configured, so that what the folder's own
    files state (its pins, its README, its notebooks' metadata) is all the check knows of its
    targets; ``codes``: the rules to report (None: the default selection)."""
    from precision_lint.engine import Engine

    return Engine(from_table({}, "defaults"), codes, jobs=1).run_paths([str(root)]).diagnostics


def check_folder(root, cache=None, settings=None, jobs: int = 1):
    """The findings of ``precision-lint .`` run in ``root`` (with a cache folder, or none), as
    comparable tuples: what the cache tests compare between a cached and an uncached check."""
    from precision_lint.engine import Engine

    engine = Engine(settings or config(transformers_version="5.23"), jobs=jobs, cache_dir=str(cache) if cache else None)
    return checked_by(engine, root)


def checked_by(engine, root):
    """:func:`check_folder` with an engine of the test's own (to look at what it kept)."""
    cwd = os.getcwd()
    os.chdir(root)
    try:
        result = engine.run_paths(["."])
    finally:
        os.chdir(cwd)
    return [(d.path, d.code, d.span, d.message, d.fix) for d in result.diagnostics]


@pytest.fixture
def judged(monkeypatch):
    """How many times the project was judged (a full check judges once or more; a check
    answered from the run cache or the ledger, none)."""
    from precision_lint.engine import Engine

    calls = []
    original = Engine.judge

    def counting(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Engine, "judge", counting)
    return calls


def run_cli(*args, cwd=None, env=None):
    """Run the real command line in a subprocess."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.pop("FORCE_COLOR", None)
    full_env["NO_COLOR"] = "1"
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "precision_lint", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def write_tree(root: Path, files: dict) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(dedent(text))
    return root


@pytest.fixture
def tree(tmp_path):
    return lambda files: write_tree(tmp_path, files)
