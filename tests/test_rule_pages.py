"""Every registered rule has a page in rules/ and every page a rule; `rule` shows them."""
import re

import pytest

from conftest import REPO, run_cli
from precision_lint.rule_docs import documented_codes, page_text
from precision_lint.rules import all_rules

RULES = all_rules()
PAGES = sorted(p.stem for p in (REPO / "rules").glob("*.md"))


def test_every_rule_has_a_page_and_every_page_a_rule():
    assert RULES, "no rule registered"
    assert sorted(RULES) == PAGES, (
        f"rules without a page: {sorted(set(RULES) - set(PAGES))}; "
        f"pages without a rule: {sorted(set(PAGES) - set(RULES))}"
    )
    assert documented_codes() == PAGES


@pytest.mark.parametrize("code", sorted(RULES))
def test_page_heading_names_the_rule(code):
    rule = RULES[code]
    assert re.fullmatch(r"MP\d{3}", code)
    assert rule.name and rule.summary, f"{code} needs a name and a summary"
    first = page_text(code).splitlines()[0]
    assert first == f"# {code} {rule.name}", f"rules/{code}.md should start with '# {code} {rule.name}'"
    assert rule.fix_availability in ("always", "sometimes", "never")


def test_rule_command_prints_each_page():
    for code in RULES:
        out = run_cli("rule", code.lower())
        assert out.returncode == 0, out.stderr
        page = page_text(code)
        assert out.stdout == (page if page.endswith("\n") else page + "\n")


def test_rule_all_lists_code_name_fix_and_safety():
    out = run_cli("rule", "--all")
    assert out.returncode == 0
    header, *rows = out.stdout.splitlines()
    assert header.split() == ["code", "name", "fix", "safety"]
    assert [r.split()[0] for r in rows] == list(RULES)
    for row in rows:
        code, name, fix, safety = row.split()
        rule = RULES[code]
        assert name == rule.name and fix == rule.fix_availability
        assert safety == (rule.fix_applicability if rule.fix_availability != "never" else "-")


def test_wheel_ships_every_package_and_the_rule_pages(tmp_path):
    """`pip install .` must give `precision-lint rule CODE` its pages (and every subpackage)."""
    import shutil
    import subprocess
    import sys
    import zipfile

    pytest.importorskip("setuptools")
    # build from a clean copy: a stale build/ folder in the checkout could hide a missing package
    src = tmp_path / "src"
    shutil.copytree(
        REPO,
        src,
        ignore=shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".venv", "fixtures", "tests"),
    )
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if build.returncode != 0 and "No module named" in build.stderr:
        pytest.skip(f"cannot build a wheel here: {build.stderr.strip().splitlines()[-1]}")
    assert build.returncode == 0, build.stderr
    (wheel,) = tmp_path.glob("precision_lint-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for code in PAGES:
        assert f"precision_lint/rule_pages/{code}.md" in names
    for py in (REPO / "precision_lint").rglob("*.py"):
        rel = py.relative_to(REPO).as_posix()
        if "__pycache__" not in rel:
            assert rel in names, f"{rel} is missing from the wheel"
