"""The pre-commit hooks, through the real `pre-commit try-repo` on this repository.

pre-commit clones this repository (with its uncommitted changes to tracked files), pip-installs
it into an isolated environment (libcst and pathspec come from the package index: no torch) and
runs the hook on a temporary git repository holding a bad script and a bad notebook.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

BAD = "from transformers import Trainer\ntrainer = Trainer(model=m, tokenizer=tok)\n"
GOOD = BAD.replace("tokenizer=tok", "processing_class=tok")
# pip's words for a package index it cannot reach (an install error of ours fails the test)
NO_NETWORK = ("Failed to establish a new connection", "Temporary failure in name resolution", "Network is unreachable")
PYPROJECT = '[tool.precision-lint]\ntransformers-version = "5.23"\nexclude = ["legacy"]\n'


def _pre_commit():
    exe = shutil.which("pre-commit") or shutil.which("pre-commit", path=os.path.dirname(sys.executable))
    return [exe] if exe else None


def _git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


pytestmark = [
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.skipif(_pre_commit() is None, reason="pre-commit is not installed (it is in the `test` extra)"),
]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    if subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True).returncode != 0:
        pytest.skip("this checkout is not a git repository with a commit: try-repo needs one")
    if not (REPO / ".pre-commit-hooks.yaml").is_file():
        pytest.fail(".pre-commit-hooks.yaml is missing")
    home = tmp_path_factory.mktemp("pre-commit-home")
    e = dict(os.environ)
    e.update(PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never", NO_COLOR="1", GIT_AUTHOR_NAME="t",
             GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    e.pop("PYTHONPATH", None)  # the hook must run the copy pre-commit installed, not this checkout
    e.pop("VIRTUAL_ENV", None)
    return e


def _project(root: Path) -> Path:
    from test_notebooks import kaggle_notebook, nbformat_bytes

    root.mkdir()
    _git("init", "-q", cwd=root)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "train.py").write_text(BAD)
    (root / "train.ipynb").write_bytes(nbformat_bytes(kaggle_notebook()))
    (root / "legacy").mkdir()
    (root / "legacy" / "old.py").write_text(BAD)  # excluded by config: skipped although pre-commit names it
    (root / "README.md").write_text("tokenizer=tok\n")  # not python: never passed to the hook
    _git("add", "-A", cwd=root)
    return root


def _try_repo(env, cwd, hook):
    return subprocess.run(
        [*_pre_commit(), "try-repo", str(REPO), hook, "--all-files", "--verbose"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow  # pre-commit builds the hook's environment: a pip install of precision-lint (27-71 s)
def test_check_fails_fix_rewrites_rerun_passes(env, tmp_path):
    project = _project(tmp_path / "proj")
    notebook_before = (project / "train.ipynb").read_bytes()

    check = _try_repo(env, project, "precision-lint")
    out = check.stdout + check.stderr
    if check.returncode != 0 and any(s in out for s in NO_NETWORK):
        pytest.skip("pre-commit could not reach the package index to install the hook's environment")
    assert check.returncode == 1, out
    assert "precision-lint" in out and "Failed" in out
    assert "train.py:2:28: MP301" in out
    assert "train.ipynb:cell 4:2:43: MP301" in out
    assert "legacy/old.py" not in out
    assert (project / "train.py").read_text() == BAD  # the check hook writes nothing

    fix = _try_repo(env, project, "precision-lint-fix")
    out = fix.stdout + fix.stderr
    assert fix.returncode == 1, out  # pre-commit fails a hook that modified files
    assert "files were modified by this hook" in out
    assert (project / "train.py").read_text() == GOOD
    assert (project / "train.ipynb").read_bytes() == notebook_before.replace(
        b"tokenizer=tok)", b"processing_class=tok)", 1
    )
    assert (project / "legacy" / "old.py").read_text() == BAD

    again = _try_repo(env, project, "precision-lint")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Passed" in again.stdout


def test_hooks_manifest():
    import yaml  # pre-commit depends on PyYAML

    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"precision-lint", "precision-lint-fix"}
    for h in hooks.values():
        assert h["language"] == "python"
        assert h["types_or"] == ["python", "jupyter"]
        assert h["require_serial"] is True  # files are joined along imports: one process sees all
    assert "--fix" in hooks["precision-lint-fix"]["entry"].split()
    assert "--fix" not in hooks["precision-lint"]["entry"].split()


def test_composite_action_runs_the_installed_cli(tmp_path):
    """action.yml: a composite action whose steps, run by bash as GitHub would, lint a tree."""
    import yaml

    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == {"src", "args", "output-format", "sarif-file"}
    install, run = action["runs"]["steps"]
    for step in (install, run):
        assert step["shell"] == "bash" and "${{" not in step["run"]  # inputs reach bash via env only
    # Run the second step with a stand-in for the venv made by the first.
    venv_bin = tmp_path / "runner" / "precision-lint-venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "precision-lint").write_text(
        f"#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} -m precision_lint \"$@\"\n"
    )
    (venv_bin / "precision-lint").chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    (work / "pyproject.toml").write_text(PYPROJECT)
    (work / "train.py").write_text(BAD)
    e = dict(os.environ, RUNNER_TEMP=str(tmp_path / "runner"), NO_COLOR="1", PL_SRC=".", PL_ARGS="--select MP3",
             PL_FORMAT="github", PL_SARIF="out.sarif")
    done = subprocess.run(["bash", "-e", "-c", run["run"]], cwd=work, env=e, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("::error file=train.py,line=2,col=28,")
    import json

    assert json.loads((work / "out.sarif").read_text())["runs"][0]["results"][0]["ruleId"] == "MP301"
