"""The versions of a library a project targets are narrowed by what it pins of the libraries
beside it (knowledge/requires.toml: what each release line requires of torch, tokenizers and
of each other). A project that pins `torch==1.13.0` and `tokenizers==0.12.1` and installs
transformers from a git clone targets the transformers of that time, not the installed one:
the deprecations of transformers 4.56 are not its problem, and `dtype=` would break it.
Every shape has its negative beside it."""
import json

import pytest

from conftest import config, write_tree

from precision_lint.engine import Engine
from precision_lint.knowledge import requirement_rows
from precision_lint.workspace.config import from_table
from precision_lint.workspace.versions import Allowed, VersionResolver, compatible_range, parse_spec, resolver_for


def run(root, codes=("MP301", "MP304")):
    cfg = from_table({}, "defaults")  # nothing configured: the files' projects say
    found = Engine(cfg, list(codes), jobs=1).run_paths([str(root)]).diagnostics
    return sorted(found, key=lambda d: (d.path, d.span.start))


TORCH_DTYPE = """\
import torch
from transformers import AutoModelForCausalLM
model = AutoModelForCausalLM.from_pretrained("base", torch_dtype=torch.float16)
"""

TRAINER = """\
from transformers import Trainer
trainer = Trainer(model=model, tokenizer=tok)
"""

GIT_CLONE_README = """\
# A model

## Install
```bash
pip install torch==1.13.0+cu116 --extra-index-url https://download.pytorch.org/whl/cu116
git clone https://github.com/huggingface/transformers.git
cd transformers && pip install -e .
pip install -r requirements.txt
```
"""


def _installed_transformers():
    found = resolver_for(config()).installed.get("transformers")
    if found is None or found.low < (4, 56):
        pytest.skip("the installed transformers predates torch_dtype's deprecation")
    return found


# --- the shape of review 11 (C1): old companions, transformers from a clone --------------------
def test_old_torch_and_tokenizers_pins_rule_out_the_installed_transformers(tmp_path):
    _installed_transformers()
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "README.md": GIT_CLONE_README,
        "requirements.txt": "tokenizers==0.12.1\nsentencepiece\n",
        "apply_delta.py": TORCH_DTYPE,
        "train.py": TRAINER,
    })
    assert run(root) == []
    allowed = resolver_for(config()).targets(str(root / "train.py")).of("transformers")
    assert allowed.source != "installed" and allowed.high is not None and allowed.high < (4, 46)
    assert "tokenizers==0.12.1 in requirements.txt" in allowed.where()


def test_current_companion_pins_keep_the_installed_transformers(tmp_path):
    _installed_transformers()
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "requirements.txt": "torch>=2.6\ntokenizers>=0.21\n",
        "apply_delta.py": TORCH_DTYPE,
    })
    (d,) = run(root)
    assert d.code == "MP304" and "deprecated since transformers 4.56" in d.message
    allowed = resolver_for(config()).targets(str(root / "apply_delta.py")).of("transformers")
    assert allowed.source == "installed"


def test_without_pins_nothing_changes(tmp_path):
    _installed_transformers()
    root = write_tree(tmp_path, {".git/HEAD": "", "apply_delta.py": TORCH_DTYPE, "train.py": TRAINER})
    assert [d.code for d in run(root)] == ["MP304", "MP301"]
    assert resolver_for(config()).targets(str(root / "train.py")).of("transformers").source == "installed"


def test_an_old_torch_pin_alone_rules_out_the_installed_transformers(tmp_path):
    _installed_transformers()
    root = write_tree(tmp_path, {".git/HEAD": "", "README.md": GIT_CLONE_README, "apply_delta.py": TORCH_DTYPE})
    assert run(root) == []
    allowed = resolver_for(config()).targets(str(root / "apply_delta.py")).of("transformers")
    assert "torch==1.13.0+cu116 in `pip install` in README.md" in allowed.where()


def test_a_readme_that_only_mentions_an_old_torch_pins_nothing(tmp_path):
    """What counts as a pin is what counted before: prose is not an install line."""
    _installed_transformers()
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "README.md": "We trained with torch==1.13.0 and tokenizers==0.12.1 on A100s.\n\n```bash\npip install -r requirements.txt\n```\n",
        "apply_delta.py": TORCH_DTYPE,
    })
    assert [d.code for d in run(root)] == ["MP304"]


def _notebook(*cells):
    return json.dumps({
        "cells": [{"cell_type": "code", "metadata": {}, "source": c, "outputs": [], "execution_count": None} for c in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    })


def test_a_notebook_pip_line_of_an_old_torch(tmp_path):
    _installed_transformers()
    old = write_tree(tmp_path / "old", {
        ".git/HEAD": "",
        "merge.ipynb": _notebook("%pip install -q torch==1.13.1 tokenizers==0.13.3\n!git clone https://github.com/huggingface/transformers", TORCH_DTYPE),
    })
    assert run(old) == []
    new = write_tree(tmp_path / "new", {
        ".git/HEAD": "",
        "merge.ipynb": _notebook("%pip install -q torch==2.7.0\n!git clone https://github.com/huggingface/transformers", TORCH_DTYPE),
    })
    assert [d.code for d in run(new)] == ["MP304"]


def test_a_stated_transformers_range_is_narrowed_by_the_companions(tmp_path):
    """`transformers>=4.20` allows 4.56 and later, but not beside `tokenizers==0.12.1`."""
    _installed_transformers()
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "requirements.txt": "transformers>=4.20\ntokenizers==0.12.1\n",
        "apply_delta.py": TORCH_DTYPE,
    })
    assert run(root) == []
    allowed = resolver_for(config()).targets(str(root / "apply_delta.py")).of("transformers")
    assert allowed.low == (4, 20) and allowed.high is not None
    assert "transformers>=4.20 in requirements.txt" in allowed.where() and "tokenizers==0.12.1" in allowed.where()
    loose = write_tree(tmp_path / "loose", {".git/HEAD": "", "requirements.txt": "transformers>=4.20\n", "apply_delta.py": TORCH_DTYPE})
    assert [d.code for d in run(loose)] == ["MP304"]


def test_the_configured_version_is_not_narrowed(tmp_path):
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "tokenizers==0.12.1\n", "train.py": ""})
    cfg = config(transformers_version="5.23")
    found = resolver_for(cfg).targets(str(root / "train.py")).of("transformers")
    assert found.is_point and found.low == (5, 23) and found.source == "configuration"


# --- compatible_range: both directions ----------------------------------------------------------
def pin(dist, spec, source="requirements.txt"):
    return parse_spec(dist, spec, source)


def test_a_pin_of_what_a_library_requires_caps_it():
    found = compatible_range("transformers", {"tokenizers": pin("tokenizers", "==0.12.1")})
    assert found is not None and found.high is not None
    rows = dict(requirement_rows("transformers"))
    # the first line above the range requires a tokenizers that 0.12.1 is not
    assert parse_spec("tokenizers", rows[found.high]["tokenizers"]).intersect(pin("tokenizers", "==0.12.1")).is_empty
    below = max(m for m in rows if m < found.high)
    assert not parse_spec("tokenizers", rows[below]["tokenizers"]).intersect(pin("tokenizers", "==0.12.1")).is_empty
    assert f"transformers {found.high[0]}.{found.high[1]} requires tokenizers" in found.note


def test_a_pin_of_a_library_that_requires_it_bounds_it_below():
    """trl 0.7 requires transformers>=4.18: a project pinning trl==0.7.4 runs no older one."""
    found = compatible_range("transformers", {"trl": pin("trl", "==0.7.4")})
    assert found is not None and found.low == (4, 18, 0) and found.high is None
    assert "trl==0.7.4 in requirements.txt, which requires transformers>=4.18.0" in found.note


def test_a_pin_of_one_release_reads_that_releases_own_requirements():
    """TRL 0.12.2 requires transformers<4.47.0 where 0.12.0 requires >=4.46.0: the line's row
    bounds neither end, and a project that pins exactly 0.12.2 runs a transformers below 4.47
    (review 25b: a Kaggle notebook's `pip install trl==0.12.2`, where `warmup_ratio=` is current).
    A pin of the line's first release, or of the line, keeps the line's row."""
    found = compatible_range("transformers", {"trl": pin("trl", "==0.12.2")})
    assert found is not None and found.high == (4, 47, 0) and found.low is None
    assert "trl==0.12.2 in requirements.txt, which requires transformers<4.47.0" in found.note
    first = compatible_range("transformers", {"trl": pin("trl", "==0.12.0")})
    assert first is not None and first.low == (4, 46, 0) and first.high is None
    assert compatible_range("transformers", {"trl": pin("trl", ">=0.12,<0.13")}) is None


def test_an_old_transformers_pin_caps_the_trl_it_targets(tmp_path):
    """The installed TRL requires a newer transformers than the project's pin: the TRL the
    project targets is one whose requirement admits that pin."""
    installed = resolver_for(config()).installed.get("trl")
    if installed is None or installed.low < (0, 20):
        pytest.skip("an old TRL is installed")
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers==4.36.2\n", "train.py": ""})
    found = resolver_for(config()).targets(str(root / "train.py")).of("trl")
    assert found.source == "requirements.txt" and found.high is not None and found.high < installed.low
    assert "transformers==4.36.2 in requirements.txt: trl" in found.where()


def test_pins_that_say_nothing_narrow_nothing():
    assert compatible_range("transformers", {}) is None
    assert compatible_range("transformers", {"torch": pin("torch", ">=2.6")}) is None  # every line allows it
    assert compatible_range("transformers", {"torch": pin("torch", "")}) is None  # named without a version
    commit = Allowed("tokenizers", spec="git+...@0dcb46e", source="requirements.txt", commit="0dcb46e")
    assert compatible_range("transformers", {"tokenizers": commit}) is None


def test_pins_that_no_release_line_admits_narrow_nothing():
    """torch==0.4 beside tokenizers==0.23: no line requires both; nothing is known."""
    assert compatible_range("transformers", {"torch": pin("torch", "==0.4.1"), "tokenizers": pin("tokenizers", "==0.23.1")}) is None


def test_an_installed_version_the_pins_admit_stays_the_target(tmp_path):
    installed = {"transformers": Allowed.point("transformers", (4, 30, 2), "installed")}
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "tokenizers==0.13.3\n", "train.py": ""})
    found = VersionResolver({}, installed).targets(str(root / "train.py")).of("transformers")
    assert found.source == "installed" and found.low == (4, 30, 2)
    nothing = VersionResolver({}, {}).targets(str(root / "train.py")).of("transformers")
    assert nothing.high is not None and not nothing.newest  # nothing installed: the lines the pin admits


FROM_CONFIG = """\
import torch
from transformers import AutoConfig, AutoModelForCausalLM

config = AutoConfig.from_pretrained("bigscience/bloom")
model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.float16)
"""


@pytest.mark.parametrize("hub, reported", [("huggingface_hub==0.9.0", False), ("huggingface_hub>=0.30", True)])
def test_a_hub_client_pin_narrows_the_transformers_of_a_bare_install(tmp_path, hub, reported):
    """``pip install transformers huggingface_hub==0.9.0`` (a README's setup): transformers 4.23
    requires huggingface-hub>=0.10.0 (its wheel's metadata), so the install resolves to 4.22 at
    most, where ``from_config(torch_dtype=)`` warns of nothing (deprecated in 4.56); a recent
    hub pin leaves the newest transformers."""
    root = write_tree(tmp_path, {
        ".git/HEAD": "", "README.md": f"# x\n\n## Setup\n\n```bash\npip install transformers {hub}\n```\n",
        "infer.py": FROM_CONFIG,
    })
    assert bool(run(root)) == reported
    if not reported:
        rows = dict(requirement_rows("transformers"))
        assert rows[(4, 23)]["huggingface-hub"].startswith(">=0.10.0")


# --- two environments in one folder (51 tune: a fork that adds an environment.yml for its own
# TRL work beside the original project's requirements.txt) --------------------------------------
TWO_ENVIRONMENTS = {
    ".git/HEAD": "",
    "requirements.txt": "transformers>=4.32.0,<4.38.0\naccelerate==0.28.0\n",
    "environment.yml": "name: fork\ndependencies:\n  - python=3.10\n  - pip:\n    - transformers==4.52.4\n    - trl==0.18.1\n",
    "train.py": TRAINER,
}


def test_a_neighbours_pin_of_one_environment_does_not_choose_between_two(tmp_path):
    """requirements.txt states transformers below 4.38 and environment.yml states 4.52.4 with
    trl 0.18.1, which requires transformers>=4.50: the TRL pin belongs to the second
    environment, and says nothing of the first. The file runs on either, so its range is both
    statements' (4.32 to 4.52.4), and `processing_class=` (new in 4.46) is no safe spelling."""
    root = write_tree(tmp_path, TWO_ENVIRONMENTS)
    found = resolver_for(config()).targets(str(root / "train.py")).of("transformers")
    assert (found.low, found.high) == ((4, 32, 0), (4, 52, 4)), found
    assert "which requires" not in found.where()
    diags = run(root, codes=("MP301",))
    assert [d.fix for d in diags] == [None] and "no fix" in diags[0].message


def test_one_environment_is_still_narrowed_by_its_neighbours_pins(tmp_path):
    """The negative: one requirements file that pins trl==0.18.1 and a loose transformers
    targets the transformers trl 0.18.1 requires (>=4.50), where `tokenizer=` warns and
    `processing_class=` exists: the fix is safe."""
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers>=4.32.0\ntrl==0.18.1\n", "train.py": TRAINER})
    found = resolver_for(config()).targets(str(root / "train.py")).of("transformers")
    assert found.low == (4, 50, 0) and "which requires" in found.where()
    diags = run(root, codes=("MP301",))
    assert len(diags) == 1 and diags[0].fix is not None
