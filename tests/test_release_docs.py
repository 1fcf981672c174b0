"""The pre-commit and GitHub Action examples never tell users to pin a release that does not
exist: pre-commit clones exactly the `rev:` given, and fails on a tag nobody pushed."""
import re
import subprocess

import pytest

from conftest import REPO

DOCS = ("README.md", ".pre-commit-hooks.yaml", "action.yml")
# `rev: v0.1.0` (pre-commit) and `precision-lint/precision-lint@v0.1.0` (the Action)
PINNED = re.compile(r"\brev:\s*[\"']?(v\d[\w.\-]*)|precision-lint/precision-lint@(v\d[\w.\-]*)")


def _tags():
    out = subprocess.run(["git", "tag", "--list"], cwd=REPO, capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    return set(out.stdout.split())


def test_every_pinned_release_is_a_tag_that_exists():
    tags = _tags()
    pinned = {
        (name, a or b) for name in DOCS for a, b in PINNED.findall((REPO / name).read_text(encoding="utf-8"))
    }
    missing = sorted(p for p in pinned if p[1] not in tags)
    assert not missing, f"these examples pin a release that is not tagged: {missing}"


def test_the_hooks_say_how_to_pin_before_a_release():
    hooks = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert "commit SHA" in hooks and "must name a tag or commit that exists" in hooks
