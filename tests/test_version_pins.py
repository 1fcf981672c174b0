"""The library versions a file targets (versions.py): ranges read from the file's own project
(requirements, pyproject in its dialects, setup.py/cfg, environment.yml), its own
`require_version` / `%pip install` lines, a vendored copy of the library; else the
configuration says, else the installed metadata."""
from pathlib import Path
import pytest

from conftest import config, write_tree

from precision_lint.workspace.config import load
from precision_lint.workspace.versions import Allowed, VersionResolver, in_file_requirements, parse_requirement, parse_spec, pip_requirements, resolver_for


def allowed(spec, dist="transformers"):
    return parse_spec(dist, spec, "test")


@pytest.mark.parametrize(
    "spec, inside, outside",
    [
        ("==4.36.2", [(4, 36, 2)], [(4, 36, 3), (4, 36, 1)]),
        (">=0.8.6,<=0.9.6", [(0, 8, 6), (0, 9, 6)], [(0, 9, 7), (0, 8, 5)]),
        ("<5.0", [(4, 99), (0, 1)], [(5, 0), (5, 0, 1)]),
        (">=4.36,<5.0", [(4, 36), (4, 57, 1)], [(5,), (4, 35, 9)]),
        (">=4.36 <5.0", [(4, 36)], [(5,)]),  # Poetry writes the clauses apart
        ("^4.36", [(4, 36), (4, 99)], [(5,), (4, 35)]),  # Poetry's caret
        ("^0.9.6", [(0, 9, 6), (0, 9, 99)], [(0, 10)]),
        ("~4.36", [(4, 36, 9)], [(4, 37)]),  # Poetry's tilde
        ("~=4.46.0", [(4, 46, 3)], [(4, 47)]),
        ("~=4.46", [(4, 99)], [(5,)]),
        ("==4.36.*", [(4, 36, 4)], [(4, 37)]),
        ("4.31.0", [(4, 31, 0)], [(4, 31, 1)]),  # Poetry's bare version is exact
        (">=4.30,!=4.34.0", [(4, 34, 0), (5, 1)], [(4, 29)]),  # one excluded version: still the range
    ],
)
def test_a_range_is_a_range(spec, inside, outside):
    r = allowed(spec)
    for v in inside:
        assert r.accepts_between(v, v + (0, 0, 0, 1)), (spec, v)
    for v in outside:
        assert not r.accepts_between(v, v + (0, 0, 0, 1)), (spec, v)


@pytest.mark.parametrize(
    "spec, low, high, inclusive",
    [
        ("==2.4.0.dev20240324", (2, 3), (2, 4, 0), False),  # a nightly before the release
        ("==4.40.0rc1", (4, 39), (4, 40, 0), False),
        (">=4.36.0.dev0", (4, 35), None, False),  # check_min_version("4.36.0.dev0")
        ("<=2.1.0a0", None, (2, 1, 0), False),
        ("==4.40.1rc1", (4, 40, 0), (4, 40, 1), False),
        ("==5.0.0.dev0", (4,), (5, 0, 0), False),
        ("==2.4.0", (2, 4, 0), (2, 4, 0), True),  # a release, and below, a local build of one
        ("==2.0.1+cu118", (2, 0, 1), (2, 0, 1), True),
        ("==2.0.1.post1", (2, 0, 1), (2, 0, 1), True),
    ],
)
def test_a_pre_release_is_below_its_release(spec, low, high, inclusive):
    """PEP 440 sorts ``2.4.0.dev20240324`` below ``2.4.0``: a nightly has what the releases
    before it have, not (all of) what its release adds."""
    r = allowed(spec, "torch")
    assert (r.low, r.high, r.high_inclusive) == (low, high, inclusive)
    assert r.described == f"torch{spec}"


def test_every_some_and_lowest():
    below_5 = allowed("<5.0")
    assert not below_5.every_at_least((5, 0)) and not below_5.some_at_least((5, 0))  # `<5.0` is no "4"
    assert below_5.some_at_least((4, 46)) and not below_5.every_at_least((4, 46))
    assert not below_5.has_since((4, 46))  # its lowest version is unknown: nothing new
    poetry = allowed(">=4.36,<5.0")
    assert poetry.some_at_least((4, 46)) and not poetry.some_at_least((5, 0))
    assert poetry.has_since((4, 33)) and not poetry.has_since((4, 46))
    assert allowed(">=5.0").every_at_least((5, 0))
    installed = Allowed.point("transformers", (5, 24), "installed")
    assert installed.every_at_least((5, 0)) and installed.has_since((4, 56))
    newest = Allowed.unknown("transformers")
    assert newest.every_at_least((99,)) and newest.has_since((99,))


@pytest.mark.parametrize(
    "line, dist, low, high",
    [
        ("transformers[torch]>=4.36,<5; python_version > '3.8'", "transformers", (4, 36), (5,)),
        ("trl==0.9.6  # the last with PPOTrainer v1", "trl", (0, 9, 6), (0, 9, 6)),
        ("git+https://github.com/huggingface/transformers@v4.31.0", "transformers", (4, 31, 0), (4, 31, 0)),
        ("Transformers >= 4.40", "transformers", (4, 40), None),
        ("peft>=0.7,<0.12", "peft", (0, 7), (0, 12)),  # the dtype of its LoRA adapters (MP101)
        ("git+https://github.com/huggingface/peft@v0.10.0", "peft", (0, 10, 0), (0, 10, 0)),
    ],
)
def test_requirement_lines(line, dist, low, high):
    found = parse_requirement(line, "requirements.txt")
    assert (found.dist, found.low, found.high) == (dist, low, high)


def test_requirement_lines_of_other_libraries_and_options_are_not_read():
    assert parse_requirement("transformers-stream-generator==0.0.4", "r") is None
    assert parse_requirement("-r base.txt", "r") is None
    assert parse_requirement("timm==0.9.2", "r") is None
    companion = parse_requirement("torchvision==0.16", "r")  # read for the torch it requires
    assert (companion.dist, companion.low) == ("torchvision", (0, 16))
    assert parse_requirement("torch-geometric==2.4", "r") is None
    torch = parse_requirement("torch==2.1.0+cu118", "r")  # torch is read now (MP201, MP203, MP303)
    assert (torch.dist, torch.low, torch.high) == ("torch", (2, 1, 0), (2, 1, 0))


def _targets(root, rel, source="", lines=()):
    return VersionResolver().targets(str(root / rel), in_file_requirements(source, Path(rel).name), lines)


def test_pep621_with_optional_dependencies(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "pyproject.toml": '[project]\nname = "x"\ndependencies = ["peft"]\n'
                          '[project.optional-dependencies]\ntrain = ["transformers>=4.36,<5.0", "trl>=0.8.6,<=0.9.6"]\n',
        "src/train.py": "",
    })
    t = _targets(root, "src/train.py")
    assert (t.of("transformers").low, t.of("transformers").high) == ((4, 36), (5, 0))
    assert (t.of("trl").low, t.of("trl").high) == ((0, 8, 6), (0, 9, 6))
    assert "pyproject.toml" in t.of("trl").source


def test_poetry_and_uv(tmp_path):
    root = write_tree(tmp_path, {
        "a/pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.10"\ntransformers = ">=4.36,<5.0"\n'
                            '[tool.poetry.group.rl.dependencies]\ntrl = {version = "^0.9.4", extras = ["peft"]}\n',
        "a/train.py": "",
        "b/pyproject.toml": '[project]\nname = "b"\n[dependency-groups]\ntrain = ["transformers==4.44.2"]\n',
        "b/train.py": "",
    })
    a = _targets(root, "a/train.py")
    assert (a.of("transformers").low, a.of("transformers").high) == ((4, 36), (5, 0))
    assert (a.of("trl").low, a.of("trl").high) == ((0, 9, 4), (0, 10))
    assert _targets(root, "b/train.py").of("transformers").is_point


def test_setup_py_setup_cfg_and_environment_yml(tmp_path):
    root = write_tree(tmp_path, {
        "p/setup.py": 'from setuptools import setup\nsetup(name="p", install_requires=["transformers==4.38.2", "torch"])\n',
        "p/m.py": "",
        "q/setup.cfg": "[options]\ninstall_requires =\n    trl>=0.7,<0.8\n",
        "q/m.py": "",
        "r/environment.yml": "name: r\ndependencies:\n  - python=3.10\n  - conda-forge::transformers=4.31\n  - pip:\n    - trl==0.4.7\n",
        "r/m.py": "",
    })
    assert _targets(root, "p/m.py").of("transformers").low == (4, 38, 2)
    assert _targets(root, "q/m.py").of("trl").high == (0, 8)
    r = _targets(root, "r/m.py")
    assert (r.of("transformers").low, r.of("transformers").high) == ((4, 31), (4, 32))  # conda's `=` is the series
    assert r.of("trl").is_point


def test_a_conda_environment_by_another_name_is_read_as_environment_yml(tmp_path):
    """``conda env create -f requirements.yaml``: a conda environment file (its text has
    ``dependencies:``) named otherwise; a YAML of another kind named alike is no environment."""
    env = "name: r\ndependencies:\n  - python=3.9\n  - pip:\n    - transformers==4.38.2\n"
    root = write_tree(tmp_path, {
        "a/requirements.yaml": env, "a/m.py": "",
        "b/env.yml": env, "b/m.py": "",
        "c/env.yaml": "lr: 1e-4\ncompare_with:\n  - transformers==4.38.2\n", "c/m.py": "",
    })
    assert _targets(root, "a/m.py").of("transformers").low == (4, 38, 2)
    assert _targets(root, "b/m.py").of("transformers").low == (4, 38, 2)
    assert _targets(root, "c/m.py").of("transformers").low != (4, 38, 2)  # not a pin: a config's value


def test_a_conda_environment_under_any_yaml_name_says_what_only_conda_says(tmp_path):
    """``conda env create --file vlm_pref.yaml``: a YAML file of the project's folder whose text
    is a conda environment (``dependencies:`` with its ``channels:``, a ``- pip:`` list or a
    ``- python=`` item) is one, whatever its name; a training configuration with a
    ``dependencies:`` key is not."""
    env = "name: vlm\ndependencies:\n  - python=3.10\n  - pip:\n    - transformers==4.31.0\n"
    root = write_tree(tmp_path, {
        "a/vlm_pref.yaml": env, "a/m.py": "",
        "b/train.yaml": "dependencies:\n  - transformers==4.31.0\nlr: 1e-4\n", "b/m.py": "",
    })
    assert _targets(root, "a/m.py").of("transformers").low == (4, 31, 0)
    assert _targets(root, "b/m.py").of("transformers").low != (4, 31, 0)


def test_two_pins_stay_two_versions_when_a_cap_cuts_between_them():
    """``transformers==4.31.0`` in one file and ``==4.37.2`` in another: the versions are those
    two, not every version between (a cap below 4.35 leaves 4.31.0 alone, where nothing of 4.34
    applies)."""
    both = allowed("==4.31.0").hull(allowed("==4.37.2"))
    assert both.some_at_least((4, 34)) and not both.every_at_least((4, 34))
    assert not both.accepts_between((4, 33), (4, 36))  # neither pin is in [4.33, 4.36)
    capped = both.intersect(allowed("<4.35"))
    assert capped.is_point and capped.low == (4, 31, 0)
    assert not capped.some_at_least((4, 34))
    assert allowed("==4.37.2").hull(allowed("==4.31.0")).intersect(allowed(">=4.40")).is_empty
    three = both.hull(allowed("==4.46.0")).intersect(allowed(">=4.35"))
    assert three.points == ((4, 37, 2), (4, 46, 0)) and not three.accepts_between((4, 38), (4, 46))
    ranged = allowed("==4.31.0").hull(allowed(">=4.36,<4.40"))  # a range joined: an interval
    assert ranged.points == () and ranged.accepts_between((4, 33), (4, 35))


def test_setup_cfg_requirements_are_its_options_only(tmp_path):
    """isort's ``known_third_party`` (or any other tool's list) in setup.cfg names packages, it
    requires none: only ``install_requires`` and ``extras_require`` are requirements there, and
    the pin of the setup.py beside it is the one the message names."""
    root = write_tree(tmp_path, {
        "p/setup.py": 'from setuptools import setup\nsetup(name="p", install_requires=["transformers>=4.53.3"])\n',
        "p/setup.cfg": "[isort]\nknown_third_party =\n    transformers\n    trl\n",
        "p/m.py": "",
        "q/setup.cfg": "[isort]\nknown_third_party = transformers\n[options]\ninstall_requires =\n    torch\n"
                       "[options.extras_require]\nrl =\n    trl==0.9.6\n",
        "q/m.py": "",
    })
    p = _targets(root, "p/m.py").of("transformers")
    assert p.low == (4, 53, 3) and p.where() == "transformers>=4.53.3 in setup.py"
    assert _targets(root, "p/m.py").of("trl").low is None  # isort's list pins nothing
    q = _targets(root, "q/m.py")
    assert q.of("trl").is_point and q.of("trl").low == (0, 9, 6)
    assert q.of("transformers").low is None


def test_a_sub_project_uses_its_own_pins_not_the_repository_root(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "requirements.txt": "transformers>=5.0\n",
        "examples/old_example/requirements.txt": "transformers==4.38.0\n",
        "examples/old_example/run.py": "",
        "examples/other/run.py": "",
    })
    assert _targets(root, "examples/old_example/run.py").of("transformers").low == (4, 38, 0)
    assert _targets(root, "examples/other/run.py").of("transformers").low == (5, 0)


def test_a_downloaded_zip_without_markers_still_has_its_requirements_read(tmp_path):
    root = write_tree(tmp_path, {"proj/requirements.txt": "transformers==4.38.0\n", "proj/train.py": ""})
    assert _targets(root, "proj/train.py").of("transformers").low == (4, 38, 0)


def test_the_walk_stops_at_the_repository_root(tmp_path):
    root = write_tree(tmp_path, {"requirements.txt": "transformers==4.38.0\n", "repo/.git/HEAD": "", "repo/train.py": ""})
    installed = Allowed.point("transformers", (5, 24), "installed")
    found = VersionResolver(installed={"transformers": installed}).targets(str(root / "repo/train.py"))
    assert found.of("transformers") == installed


def test_a_bare_requirement_is_the_newest_not_the_roots_pin(tmp_path):
    root = write_tree(tmp_path, {
        "requirements.txt": "transformers==4.38.0\n",
        "sub/requirements.txt": "transformers\n",
        "sub/run.py": "",
    })
    assert _targets(root, "sub/run.py").of("transformers").newest


def test_a_vendored_copy_is_that_library_at_its_own_version_and_library_code(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "requirements.txt": "transformers>=5.0\n",
        "third_party/transformers/setup.py": 'setup(name="transformers", version="4.36.0")\n',
        "third_party/transformers/src/transformers/__init__.py": '__version__ = "4.36.0"\n',
        "third_party/transformers/src/transformers/trainer.py": "",
        "train.py": "",
    })
    inside = _targets(root, "third_party/transformers/src/transformers/trainer.py")
    assert inside.library_code is not None and inside.library_code.dist == "transformers"
    assert inside.of("transformers").low == (4, 36, 0)
    outside = _targets(root, "train.py")
    assert outside.library_code is None and outside.of("transformers").low == (5, 0)  # its own pin wins


def test_a_vendored_copy_beside_unpinned_code_is_its_version(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "transformers/__init__.py": '__version__ = "4.36.2"\n',
        "scripts/train.py": "",
    })
    found = _targets(root, "scripts/train.py").of("transformers")
    assert found.is_point and found.low == (4, 36, 2) and "copy of transformers" in found.source


def test_require_version_and_check_min_version_in_the_file():
    found = in_file_requirements(
        'from transformers.utils.versions import require_version\nrequire_version("trl>=0.8.6,<=0.9.6", "pip install trl==0.9.6")\n'
        'from transformers.utils import check_min_version\ncheck_min_version("4.36.0.dev0")\n'
    )
    assert {(a.dist, a.low, a.high) for a in found} == {("trl", (0, 8, 6), (0, 9, 6)), ("transformers", (4, 36, 0), None)}
    # diffusers' check_min_version is about diffusers
    assert in_file_requirements('from diffusers.utils import check_min_version\ncheck_min_version("0.21.0")\n') == []


def test_a_commented_out_version_check_states_nothing():
    """``# check_min_version("4.12.0.dev0")``: the example's floor, turned off by its author;
    the same on a line of code still counts."""
    src = (
        "from transformers.utils import check_min_version\n"
        '# check_min_version("4.12.0.dev0")\n'
        '    #require_version("trl>=0.8.6")\n'
        'x = 1  # check_min_version("4.40.0")\n'
    )
    assert in_file_requirements(src) == []
    found = in_file_requirements(src + 'if True: check_min_version("4.36.0")\n')
    assert [(a.dist, a.low) for a in found] == [("transformers", (4, 36, 0))]


def test_the_file_and_its_project_are_intersected(tmp_path):
    root = write_tree(tmp_path, {"requirements.txt": "transformers>=4.30,<4.40\n", "run.py": ""})
    found = _targets(root, "run.py", 'check_min_version("4.36.0")\n').of("transformers")
    assert (found.low, found.high) == ((4, 36, 0), (4, 40))


def test_notebook_pip_lines():
    found = pip_requirements([
        "!pip install -q -U transformers==4.31.0 accelerate",
        "%pip install 'trl>=0.7,<0.8' --no-deps",
        "!pip install -r requirements.txt",
    ])
    found = [a for a in found if a.low or a.high]  # a bare `accelerate` allows any version
    assert {(a.dist, a.low, a.high) for a in found} == {("transformers", (4, 31, 0), (4, 31, 0)), ("trl", (0, 7), (0, 8))}


def test_notebook_pip_lines_continued_with_a_backslash():
    found = pip_requirements(["%pip install  --upgrade \\\n", '  "transformers[sentencepiece]==4.37.2" \\\n', '  "trl==0.7.11" \\\n', '  "pillow"\n'])
    assert {(a.dist, a.low) for a in found} == {("transformers", (4, 37, 2)), ("trl", (0, 7, 11))}


def test_the_configuration_wins_over_pins(tmp_path):
    root = write_tree(tmp_path, {
        "requirements.txt": "transformers==4.44.2\n",
        "pyproject.toml": '[tool.precision-lint]\ntransformers-version = "5.0"\n',
        "train.py": 'require_version("transformers<4.40")\n',
    })
    cfg = load(start=[str(root / "train.py")])
    assert cfg.transformers_version == (5, 0)
    found = resolver_for(cfg).targets(str(root / "train.py"), in_file_requirements('require_version("transformers<4.40")\n', "train.py"))
    assert found.of("transformers").is_point and found.of("transformers").low == (5, 0)


def test_the_installed_version_is_the_fallback(tmp_path):
    root = write_tree(tmp_path, {".git/HEAD": "", "train.py": ""})
    cfg = config()
    found = resolver_for(cfg).targets(str(root / "train.py"))
    assert found.of("transformers").source == "installed"


def test_peft_is_pinned_by_the_project_else_installed(tmp_path):
    """peft, which has no configuration key, reads its pins like the others and falls back to
    the installed metadata (a cached run's key holds that version: ``installed_fallbacks``)."""
    from importlib.metadata import version

    from precision_lint.workspace.versions import installed_fallbacks

    pinned = write_tree(tmp_path / "a", {".git/HEAD": "", "setup.py": 'setup(install_requires=["peft==0.10.0"])', "train.py": ""})
    found = resolver_for(config()).targets(str(pinned / "train.py")).of("peft")
    assert (found.low, found.high, found.source) == ((0, 10, 0), (0, 10, 0), "setup.py")
    bare = write_tree(tmp_path / "b", {".git/HEAD": "", "train.py": ""})
    found = resolver_for(config()).targets(str(bare / "train.py")).of("peft")
    pytest.importorskip("peft")
    assert found.source == "installed" and found.low == tuple(int(p) for p in version("peft").split(".")[:3])
    assert dict(installed_fallbacks())["peft"] == found.low


def test_an_mp301_project_pinned_before_the_rename_is_silent(tmp_path):
    from precision_lint.engine import Engine

    root = write_tree(
        tmp_path,
        {
            "requirements.txt": "transformers==4.38.0\n",
            "setup.py": "",
            "train.py": "from transformers import Trainer\nTrainer(model=m, tokenizer=tok)\n",
        },
    )
    cfg = load(start=[str(root)])
    assert Engine(cfg, ["MP301"], jobs=1).run_paths([str(root)]).diagnostics == []


def test_a_checkout_of_the_library_among_unrelated_downloads_is_not_a_vendored_copy(tmp_path):
    root = write_tree(tmp_path, {
        "downloads/transformers/setup.py": 'setup(name="transformers")\n',
        "downloads/transformers/src/transformers/__init__.py": '__version__ = "4.20.0"\n',
        "downloads/someproject/scripts/train.py": "",
    })
    found = _targets(root, "downloads/someproject/scripts/train.py").of("transformers")
    assert found.newest  # nothing known: not the neighbour's 4.20
    beside = write_tree(tmp_path / "p", {
        "requirements.txt": "torch\n",
        "transformers/setup.py": 'setup(name="transformers")\n',
        "transformers/src/transformers/__init__.py": '__version__ = "4.20.0"\n',
        "scripts/train.py": "",
    })
    assert _targets(beside, "scripts/train.py").of("transformers").low == (4, 20, 0)


def test_requirements_folders_and_includes(tmp_path):
    root = write_tree(tmp_path, {
        "a/requirements.txt": "-r requirements/base.txt\ntorch\n",
        "a/requirements/base.txt": "transformers==4.38.2\n",
        "a/train.py": "",
        "b/requirements/train.txt": "trl>=0.7,<0.8\n",
        "b/train.py": "",
    })
    a = _targets(root, "a/train.py").of("transformers")
    assert a.low == (4, 38, 2) and a.source.endswith("base.txt")
    assert _targets(root, "b/train.py").of("trl").high == (0, 8)


def test_requirement_txt_singular_and_dashed_variants_are_pin_files(tmp_path):
    root = write_tree(tmp_path, {
        "a/requirement.txt": "transformers==4.31.0\n",
        "a/train.py": "",
        "b/requirements-gpu.txt": "trl>=0.7,<0.8\n",
        "b/train.py": "",
        "c/requirements_old.txt": "transformers<4.40\n",
        "c/train.py": "",
        "d/requirementsfoo.txt": "transformers==4.31.0\n",  # not a requirements file's name
        "d/requirement.md": "transformers==4.31.0\n",
        "d/train.py": "",
    })
    assert _targets(root, "a/train.py").of("transformers").is_point
    assert _targets(root, "a/train.py").of("transformers").source == "requirement.txt"
    assert _targets(root, "b/train.py").of("trl").high == (0, 8)
    assert _targets(root, "c/train.py").of("transformers").high == (4, 40)
    assert _targets(root, "d/train.py").of("transformers").newest


README_PINNED = """\
# Demo

Tested with transformers 4.20 and any recent trl.

```bash
conda create -n demo python=3.10
pip install transformers==4.31.0 "trl>=0.7,<0.8"
```

    pip install transformers==4.99.0
"""


def test_a_readme_code_block_pins_what_no_requirement_file_names(tmp_path):
    root = write_tree(tmp_path, {".git/HEAD": "", "sub/README.md": README_PINNED, "sub/train.py": ""})
    t = _targets(root, "sub/train.py")
    assert t.of("transformers").is_point and t.of("transformers").low == (4, 31, 0)
    assert "README.md" in t.of("transformers").source
    assert (t.of("trl").low, t.of("trl").high) == ((0, 7), (0, 8))


def test_a_listing_under_a_heading_in_another_language_pins(tmp_path):
    # 49 held-out: "## 环境" ("environment") then a fenced block of `pkg==version` lines, the word
    # "install" nowhere: the README was never read, and a project written for trl 0.16 and
    # transformers 4.48.2 was judged on the newest releases (53 findings false)
    readme = "# 大模型微调\n\n## 环境\n\n```bash\ntorch==2.5.0\ntransformers==4.48.2\ntrl==0.16.0\ndeepspeed==0.16.2  # 可选\n```\n"
    root = write_tree(tmp_path, {".git/HEAD": "", "README.md": readme, "sft/train.py": ""})
    t = _targets(root, "sft/train.py")
    assert t.of("transformers").is_point and t.of("transformers").low == (4, 48, 2)
    assert t.of("trl").low == (0, 16, 0) and "README.md" in t.of("trl").source


def test_a_readme_is_below_the_requirement_files_of_its_folder(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "sub/README.md": README_PINNED,
        "sub/requirements.txt": "transformers>=4.36\n",
        "sub/train.py": "",
    })
    t = _targets(root, "sub/train.py")
    assert t.of("transformers").low == (4, 36) and t.of("transformers").source == "requirements.txt"
    assert t.of("trl").high == (0, 8)  # the README still states what the requirements do not name


def test_a_nearer_readme_wins_over_the_roots_requirements(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "requirements.txt": "transformers>=4.31\n",
        "experimental/x/README.md": "```\npip install transformers==4.36.2\n```\n",
        "experimental/x/requirement.txt": "diffusers\n",
        "experimental/x/train.py": "",
    })
    assert _targets(root, "experimental/x/train.py").of("transformers").low == (4, 36, 2)


SETUP_ENV = (
    '#!/bin/bash\n#SBATCH -J setup_env\nTRANSFORMERS_VERSION="4.41.2"\nTRL_VERSION="0.8.6"\n'
    'python -m venv "$HOME/envs/ft" && source "$HOME/envs/ft/bin/activate"\n'
    'python -m pip install "transformers==${TRANSFORMERS_VERSION}" "trl==$TRL_VERSION" datasets\n'
)


@pytest.mark.parametrize("where", ["setup_env.sh", "install.sh", "environment_setup/create.sbatch", "env/make.bash"])
def test_an_environment_setup_script_pins_what_nothing_else_names(tmp_path, where):
    """Review 27b: a project's environment script installs its versions, through shell
    variables too."""
    root = write_tree(tmp_path, {".git/HEAD": "", where: SETUP_ENV, "train/sft.py": ""})
    t = _targets(root, "train/sft.py")
    assert t.of("transformers").is_point and t.of("transformers").low == (4, 41, 2)
    assert t.of("trl").is_point and t.of("trl").low == (0, 8, 6)
    assert "`pip install` in" in t.of("transformers").source and where.rsplit("/", 1)[-1] in t.of("transformers").source


def test_a_shell_script_that_installs_and_launches_nothing_is_a_setup_script_whatever_its_name(tmp_path):
    """47b: a root ``scripts.sh`` of ``pip install "transformers==4.34.0" ...`` and a capability
    check pins the project's versions (the ``dtype=`` that MP304 offers would raise there)."""
    script = 'pip install "transformers==4.34.0" "peft==0.4.0" --upgrade\npython -c "import torch; print(torch.__version__)"\n'
    root = write_tree(tmp_path, {".git/HEAD": "", "scripts.sh": script, "evaluation/evaluate.py": ""})
    t = _targets(root, "evaluation/evaluate.py")
    assert t.of("transformers").is_point and t.of("transformers").low == (4, 34, 0)
    assert "scripts.sh" in t.of("transformers").source


@pytest.mark.parametrize(
    "files",
    [
        {"run_train.sh": SETUP_ENV + "python train/dpo.py\n"},  # a launcher: read only where it runs the file
        {"scripts/setup_env.sh": SETUP_ENV},  # a folder not named for the environment
        {"setup_env.sh": SETUP_ENV, "requirements.txt": "transformers>=4.46\n"},  # the requirements decide
    ],
    ids=["other-name", "other-folder", "requirements-first"],
)
def test_shell_scripts_that_are_no_setup_script_of_the_folder_pin_nothing(tmp_path, files):
    root = write_tree(tmp_path, {".git/HEAD": "", **files, "train/sft.py": ""})
    allowed = _targets(root, "train/sft.py").of("transformers")
    assert not (allowed.is_point and allowed.low == (4, 41, 2))


def test_readme_prose_indented_text_and_bare_installs_are_not_pins(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "sub/README.md": "Use transformers==4.31.0.\n\n    pip install transformers==4.30.0\n\n"
                         "```\npip install transformers trl\n```\n",
        "sub/train.py": "",
    })
    t = _targets(root, "sub/train.py")
    assert t.of("transformers").newest and t.of("trl").newest


def test_a_restructuredtext_code_block_pins(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "README.rst": "Install\n=======\n\n.. code-block:: bash\n\n    $ pip install trl==0.9.6\n\nThen run.\n",
        "train.py": "",
    })
    assert _targets(root, "train.py").of("trl").low == (0, 9, 6)


@pytest.mark.parametrize(
    "line",
    [
        "transformers @ git+https://github.com/huggingface/transformers.git@0dcb46e7a4a9e587ba84ff35778ab4233a184c11",
        "git+https://github.com/huggingface/transformers.git@0dcb46e",
        "transformers @ git+https://github.com/huggingface/transformers@e45e756d22",
    ],
)
def test_a_commit_of_the_repository_is_one_version_not_known_here(line):
    """A commit is a version, not the newest: nothing about what it has is established (its
    digits are not a release: `@0dcb46e` is not transformers 0)."""
    found = parse_requirement(line, "requirements.txt")
    assert found.dist == "transformers" and found.commit and found.low is None and found.high is None
    assert not found.every_at_least((4, 0)) and not found.some_at_least((4, 0))
    assert not found.accepts_between((4, 0), (5, 0)) and not found.has_since((4, 0))
    # beside another statement (two requirement files), still not known
    other = parse_requirement("transformers>=4.30", "requirements-dev.txt")
    assert found.intersect(other).commit and other.hull(found).commit


def test_a_tag_in_a_requirement_url_is_its_release():
    found = parse_requirement("transformers @ git+https://github.com/huggingface/transformers.git@v4.30.2", "r.txt")
    assert (found.low, found.high, found.commit) == ((4, 30, 2), (4, 30, 2), "")


def test_removals_are_not_claimed_for_a_project_pinned_to_a_commit(tmp_path):
    """``transformers @ git+...@<commit>`` pins a 2023 development version; ``load_in_8bit=``
    was removed in 5.0, which a pinned commit may or may not be: no MP302. The main branch
    (no commit) is the newest, where it was removed."""
    from precision_lint.engine import Engine

    pin = "transformers @ git+https://github.com/huggingface/transformers.git@0dcb46e7a4a9e587ba84ff35778ab4233a184c11\n"
    src = "from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('x', load_in_8bit=True)\n"
    root = write_tree(tmp_path, {"requirements.txt": pin, "setup.py": "", "infer.py": src})
    cfg = load(start=[str(root)])
    assert Engine(cfg, ["MP302"], jobs=1).run_paths([str(root)]).diagnostics == []
    (root / "requirements.txt").write_text("transformers @ git+https://github.com/huggingface/transformers.git\n")
    (d,) = Engine(load(start=[str(root)]), ["MP302"], jobs=1).run_paths([str(root)]).diagnostics
    assert "load_in_8bit" in d.message


@pytest.mark.parametrize("name", ["get_started.md", "INSTALL.md", "installation.rst", "GETTING_STARTED.md"])
def test_an_installation_document_pins_like_a_readme(tmp_path, name):
    """A project without a requirements file writes its environment's commands in an
    installation document: ``conda install pytorch==1.8.0`` in a code block there pins torch,
    so a torch.cuda.amp deprecation (from 2.4) is not claimed for it."""
    from precision_lint.engine import Engine

    block = ".. code-block:: bash\n\n    conda install pytorch==1.8.0 torchvision==0.9.0 -c pytorch\n" if name.endswith(".rst") else (
        "Install PyTorch:\n\n```bash\nconda install pytorch==1.8.0 torchvision==0.9.0 cudatoolkit=10.2 -c pytorch\n```\n"
    )
    src = "import torch\nscaler = torch.cuda.amp.GradScaler()\n"
    root = write_tree(tmp_path, {".git/HEAD": "", name: block, "train.py": src})
    t = _targets(root, "train.py")
    assert t.of("torch").is_point and t.of("torch").low == (1, 8, 0) and name in t.of("torch").source
    assert Engine(load(start=[str(root)]), ["MP303"], jobs=1).run_paths([str(root)]).diagnostics == []


def test_other_documents_and_prose_in_an_installation_document_are_not_pins(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "CHANGELOG.md": "```\npip install torch==1.8.0\n```\n",
        "INSTALL.md": "We used PyTorch 1.8.0 and transformers==4.31.0 for the paper.\n",
        "train.py": "",
    })
    t = _targets(root, "train.py")
    assert not t.of("torch").is_point and not t.of("transformers").is_point


def test_the_installed_versions_are_read_as_importlib_metadata_reads_them():
    """``installed_version`` reads the metadata files itself (importlib.metadata and the email
    package cost more than the rest of a small file's configuration): the same answer for every
    installed distribution, and for one that is not installed."""
    import importlib.metadata as metadata

    from precision_lint.workspace.config import _ASK_IMPORTLIB, _metadata_version

    names = {d.metadata["Name"] for d in metadata.distributions() if d.metadata["Name"]} | {"no-such-dist-xyz"}
    for name in sorted(names):
        try:
            expected = metadata.version(name)
        except metadata.PackageNotFoundError:
            expected = None
        got = _metadata_version(name)
        assert got is _ASK_IMPORTLIB or got == expected, name


def test_the_version_header_as_email_reads_it():
    from precision_lint.workspace.config import _version_header

    assert _version_header("Metadata-Version: 2.1\nName: x\nVersion: 1.2.3\n\nVersion: 9\n") == "1.2.3"
    assert _version_header("Name: x\r\nVersion:  4.5\r\nSummary: s\r\n") == "4.5"
    assert _version_header("Name: x\n\nVersion: 1.0\n") is None  # in the body
    assert _version_header("Name: x\nversion: 2.0") == "2.0"  # names are case-insensitive, no newline at the end
    assert _version_header("Name: x\nnot a header\nVersion: 1.0\n") is None


# An extra's requirements file (requirements/<extra>.txt, requirements-<extra>.txt) beside a
# pyproject.toml / setup.py that declares the library itself is one optional install of the
# project: its exact pin (transformers==4.57.1 for one model family) does not narrow what the
# project declares for everything else. Where such files are the only declaration, they are it.
def test_an_extras_exact_pin_does_not_narrow_the_declared_range(tmp_path):
    root = write_tree(tmp_path, {
        "a/pyproject.toml": '[project]\nname = "a"\ndependencies = ["transformers>=4.55.0,<=5.8.0"]\n',
        "a/requirements/special-model.txt": "transformers==4.57.1\n",
        "a/tools/load.py": "",
        "b/setup.py": 'setup(name="b", install_requires=["transformers>=4.40"])\n',
        "b/requirements-extra.txt": "transformers==4.57.1\n",
        "b/train.py": "",
    })
    a = _targets(root, "a/tools/load.py").of("transformers")
    assert (a.low, a.high, a.high_inclusive) == ((4, 55, 0), (5, 8, 0), True) and a.source.endswith("pyproject.toml")
    b = _targets(root, "b/train.py").of("transformers")
    assert (b.low, b.high) == ((4, 40), None) and b.source == "setup.py"


def test_a_side_installs_pin_does_not_narrow_the_folders_own_requirements(tmp_path):
    """requirements.txt names torch without a pin; requirements_onnx_export.txt, one optional
    install of the same folder, pins torch==1.13.1: the code targets what requirements.txt admits."""
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "requirements.txt": "numpy\ntorch\n",
        "requirements_onnx_export.txt": "onnx\ntorch==1.13.1\n",
        "train.py": "",
    })
    assert not _targets(root, "train.py").of("torch").is_point
    alone = write_tree(tmp_path / "alone", {".git/HEAD": "", "requirements_onnx_export.txt": "torch==1.13.1\n", "train.py": ""})
    assert _targets(alone, "train.py").of("torch").is_point  # the only statement there is: it decides


def test_requirement_files_without_a_declaring_package_still_pin(tmp_path):
    root = write_tree(tmp_path, {
        "a/requirements/base.txt": "transformers==4.57.1\n",
        "a/train.py": "",
        "b/pyproject.toml": '[project]\nname = "b"\ndependencies = ["torch"]\n',  # declares no transformers
        "b/requirements/special-model.txt": "transformers==4.57.1\n",
        "b/train.py": "",
        "c/pyproject.toml": '[project]\nname = "c"\ndependencies = ["transformers>=4.55.0"]\n',
        "c/requirements.txt": "transformers==4.57.1\n",  # the project's own environment, not an extra
        "c/train.py": "",
    })
    for name in ("a", "b", "c"):
        assert _targets(root, f"{name}/train.py").of("transformers").is_point, name


# Where a folder's files state one library several times, the message names the file the
# deciding statement is in: the pin of requirements.txt, not pyproject.toml's looser range
# beside it (the first file of the folder, by name).
def test_the_pin_is_shown_in_the_file_that_writes_it(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "pyproject.toml": '[project]\nname = "p"\ndependencies = ["transformers>=5.4.0"]\n',
        "requirements.txt": "transformers==5.4.0\n",
        "pkg/train.py": "",
    })
    t = _targets(root, "pkg/train.py").of("transformers")
    assert t.is_point and t.where() == "transformers==5.4.0 in ../requirements.txt"


def test_statements_that_each_narrow_the_range_name_every_file(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "pyproject.toml": '[project]\nname = "p"\ndependencies = ["transformers>=4.40"]\n',
        "requirements.txt": "transformers<5\n",
        "train.py": "",
    })
    t = _targets(root, "train.py").of("transformers")
    assert (t.low, t.high) == ((4, 40), (5,))
    assert t.where() == "transformers>=4.40 and transformers<5 in pyproject.toml and requirements.txt"


def test_the_same_pin_in_two_files_names_both_and_one_file_names_itself(tmp_path):
    root = write_tree(tmp_path, {
        "a/pyproject.toml": '[project]\nname = "a"\ndependencies = ["transformers==4.57.1"]\n',
        "a/requirements.txt": "transformers==4.57.1\n",
        "a/train.py": "",
        "b/pyproject.toml": '[project]\nname = "b"\ndependencies = ["transformers==4.57.1"]\n',
        "b/requirements.txt": "torch>=2.1\n",
        "b/train.py": "",
    })
    assert _targets(root, "a/train.py").of("transformers").where() == "transformers==4.57.1 in pyproject.toml and requirements.txt"
    assert _targets(root, "b/train.py").of("transformers").where() == "transformers==4.57.1 in pyproject.toml"


def test_a_readme_pin_beside_a_looser_one_names_its_own_readme(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "INSTALL.md": "```bash\npip install transformers>=4.30\n```\n",  # read first, by name
        "README.md": "# x\n\n```bash\npip install transformers==4.44.2\n```\n",
        "train.py": "",
    })
    t = _targets(root, "train.py").of("transformers")
    assert t.is_point and t.where() == "transformers==4.44.2 in `pip install` in README.md"


# --- a README's requirements list (review 13, S3) ------------------------------------------------------
@pytest.mark.parametrize(
    "item, dist, low, high",
    [
        ("PyTorch 2.0", "torch", (2, 0), (2, 1)),  # a bare version: its series, as conda's pytorch=2.0
        ("PyTorch 1.9.0", "torch", (1, 9, 0), (1, 9, 1)),
        ("torch >= 1.12", "torch", (1, 12), None),
        ("transformers==4.30.0", "transformers", (4, 30, 0), (4, 30, 0)),
        ("`transformers>=4.30,<5`", "transformers", (4, 30), (5,)),
        ("PyTorch 2.0 (or newer)", "torch", (2, 0), None),
        ("accelerate 0.20+", "accelerate", (0, 20), None),
        ("trl version 0.7 and above", "trl", (0, 7), None),
        ("[PyTorch](https://pytorch.org) 1.13.1 with CUDA 11.7", "torch", (1, 13, 1), (1, 13, 2)),
        ("**HuggingFace Transformers**: 4.28.1", "transformers", (4, 28, 1), (4, 28, 2)),
        ("PyTorch 1.12.1, torchvision 0.13.1", "torch", (1, 12, 1), (1, 12, 2)),
    ],
)
def test_a_requirements_list_item_states_a_version(item, dist, low, high):
    from precision_lint.workspace.versions import listed_requirements

    python, found = listed_requirements(f"# demo\n\n## Requirements\n* Python 3.8 (or newer)\n* {item}\n* CUDA 11.8\n", "README.md")
    assert (python.dist, python.low, python.high) == ("python", (3, 8), None)  # a floor: it caps nothing
    assert (found.dist, found.low, found.high) == (dist, low, high)
    assert found.where().endswith("in the requirements list in README.md")


@pytest.mark.parametrize(
    "text",
    [
        "# demo\n\nWe used PyTorch 2.0.\n\n- PyTorch 2.0\n",  # a list under no heading about requirements
        "# demo\n\n## News\n- transformers 4.40 support\n- torch 2.1\n",  # another section's list
        "# demo\n\n## Requirements\n- PyTorch 1.13 or 2.0\n- torch 1.12-2.0\n- torch 1.x\n",  # not one version
        "# demo\n\n## Installation\n- Install PyTorch 2.0 from pytorch.org\n- CUDA 11.8\n",  # a sentence; not a library
        "# demo\n\n## Requirements\n```\n- torch 2.0\n```\n## Usage\n- torch 2.1\n",  # a code block; a later section
    ],
    ids=["no-heading", "news", "alternatives", "sentence", "fenced-and-later"],
)
def test_lists_that_state_no_version(text):
    from precision_lint.workspace.versions import listed_requirements

    assert listed_requirements(text, "README.md") == []


def test_a_requirements_list_pins_below_the_folders_requirement_files(tmp_path):
    """A list item is a README's statement: read after the folder's requirement files, as its
    fenced `pip install` lines are; and in a README that names no `install` at all."""
    readme = "# demo\n\n### Requirements\n* PyTorch 2.0\n* transformers 4.30\n"
    root = write_tree(tmp_path, {".git/HEAD": "", "sub/README.md": readme, "sub/requirements.txt": "transformers>=4.36\n", "sub/train.py": ""})
    t = _targets(root, "sub/train.py")
    assert t.of("transformers").low == (4, 36) and t.of("transformers").source == "requirements.txt"
    assert (t.of("torch").low, t.of("torch").high) == ((2, 0), (2, 1))
    assert t.of("torch").source == "the requirements list in README.md"




# --- torch's companion libraries (knowledge/companions.toml) -------------------------------------
@pytest.mark.parametrize(
    "pins, expected",
    [
        ("torch>=2.0.1\ntorchdata==0.6.1\n", ((2, 0, 1), (2, 1))),  # torchdata 0.6.1 requires torch==2.0.1
        ("torch\ntorchvision==0.19.1\n", ((2, 4), (2, 5))),
        ("torchvision>=0.15,<0.17\n", ((2, 0), (2, 2))),
        ("torchaudio==0.13.1\n", ((1, 13), (1, 14))),
        ("triton==2.2.0\n", ((2, 2), (2, 3))),  # torch 2.2.x requires triton==2.2.0
    ],
)
def test_a_pinned_companion_library_narrows_the_torch_a_project_targets(tmp_path, pins, expected):
    """Each release of torchvision, torchaudio, torchdata and torchtext requires one torch:
    a project that pins one runs that torch, whatever its own open ``torch>=`` says."""
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": pins, "train.py": ""})
    torch = VersionResolver(installed={"torch": Allowed.point("torch", (2, 13, 0), "installed")}).targets(str(root / "train.py")).of("torch")
    assert (torch.low, torch.high) == expected, torch


@pytest.mark.parametrize("pins", ["torchvision>=0.15\n", "torch>=2.0\ntorchvision\n", "torch==2.6.0\ntorchvision==0.15.2\n"])
def test_an_open_or_contradicted_companion_pin_leaves_torch_as_it_was(tmp_path, pins):
    """Open above, a companion admits releases newer than the table's (their torch unknown);
    a project's own exact torch pin wins over a companion pin that contradicts it."""
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": pins, "train.py": ""})
    resolver = VersionResolver(installed={"torch": Allowed.point("torch", (2, 13, 0), "installed")})
    torch = resolver.targets(str(root / "train.py")).of("torch")
    own = pins.split("\n")[0]
    if own.startswith("torch=="):
        assert (torch.low, torch.high) == ((2, 6, 0), (2, 6, 0))
    else:
        assert torch.high is None or torch.high == (2, 13, 0), torch


# --- the Python a project states narrows its libraries ------------------------------------------
# Each release line requires a Python (its Requires-Python, `knowledge/requires.toml`): transformers
# 4.47 requires python>=3.9, 5.0 python>=3.10. A project that states Python 3.8 cannot install them.
@pytest.mark.parametrize("files, high", [
    ({"environment.yml": "name: t5\ndependencies:\n  - python=3.8\n  - pip:\n    - transformers\n"}, (4, 47)),
    ({"README.md": "# t5\n\n```bash\nconda create -n t5 python=3.8\npip install transformers\n```\n"}, (4, 47)),
    ({"README.md": "# t5\n\n## Requirements\n- Python 3.9\n- transformers\n"}, (5, 0)),
    ({"environment.yml": "dependencies:\n  - python=3.11\n  - pip:\n    - transformers\n"}, None),  # every line admits it
    ({"README.md": "# t5\n\n## Requirements\n- Python >= 3.8\n"}, None),  # a floor caps nothing
    # the command that makes the environment (held-out 36u's F1: `virtualenv .venv -p python3.8`)
    ({"README.md": "```\nvirtualenv .venv -p python3.8\nsource .venv/bin/activate\npip install transformers\n```\n"}, (4, 47)),
    ({"README.md": "```bash\npython3.8 -m venv .venv\npip install transformers\n```\n"}, (4, 47)),
    ({"README.md": "```\nuv venv --python 3.9\nuv pip install transformers\n```\n"}, (5, 0)),
    ({"README.md": "```\npython -m venv .venv\n```\n"}, None),  # no version named
], ids=["environment-yml", "conda-create", "requirements-list", "newer-python", "floor", "virtualenv", "venv", "uv-venv", "plain-venv"])
def test_a_stated_python_caps_the_libraries_that_require_a_newer_one(tmp_path, files, high):
    root = write_tree(tmp_path, {".git/HEAD": "", "train.py": "", **files})
    allowed = _targets(root, "train.py").of("transformers")
    assert (allowed.high[:2] if allowed.high else None) == high, allowed.where()
    if high is not None:
        assert "requires python>=" in allowed.where()


@pytest.mark.parametrize("python, high", [("3.7", (2, 0)), ("3.8", (2, 6)), ("3.10", (2, 15))])
def test_a_stated_python_caps_torch(tmp_path, python, high):
    """torch 2.0 requires python>=3.8, 2.6 python>=3.9 (its Requires-Python, `requires.toml`)."""
    root = write_tree(tmp_path, {".git/HEAD": "", "environment.yml": f"dependencies:\n  - python={python}\n  - pytorch\n", "train.py": ""})
    allowed = _targets(root, "train.py").of("torch")
    assert allowed.high is not None and allowed.high[:2] == high, allowed.where()


def test_a_readme_line_that_is_one_code_span_is_a_command():
    """```` ```pip install transformers huggingface_hub==0.9.0``` ```` on a line of its own (inline
    code to CommonMark: a fence's info string holds no backtick) is a command the reader copies,
    as `` `pip install trl==0.7.4` `` is; a code span inside a sentence is prose."""
    from precision_lint.workspace.versions import readme_requirements

    text = (
        "# x\n\n```pip install transformers huggingface_hub==0.9.0```\n"
        "`pip install trl==0.7.4`\n\nWe once used `pip install peft==0.3.0` for this.\n"
    )
    assert [(a.dist, a.spec) for a in readme_requirements(text, "README.md")] == [
        ("huggingface-hub", "huggingface_hub==0.9.0"), ("trl", "trl==0.7.4"),
    ]


@pytest.mark.parametrize(
    "line, pins",
    [
        ("* Install packages with allowed versions: `pip install transformers==4.45.1 peft==0.13.0`", ["peft==0.13.0", "transformers==4.45.1"]),
        ("1. Install the pinned release `pip install trl==0.7.4` first", ["trl==0.7.4"]),
        ("Then run `pip install peft==0.3.0` and `conda install pytorch=1.13`.", ["peft==0.3.0", "pytorch=1.13"]),
        ("We once used `pip install peft==0.3.0` for this.", []),  # a story, not an instruction
        ("* Install `sentencepiece` and `matplotlib` too.", []),  # no command
    ],
)
def test_an_install_command_in_an_instructions_code_span_is_a_command(line, pins):
    """A list item of a README's setup that tells the reader to run ``pip install`` with pins
    inside a code span (review 26a: NTU-ADL-HW3's "Install packages with allowed versions
    according to spec: `pip install transformers==4.45.1 bitsandbytes==0.44.1 peft==0.13.0`",
    whose transformers 4.45.1 has no ``dtype=``) states those pins."""
    from precision_lint.workspace.versions import readme_requirements

    assert sorted(a.spec for a in readme_requirements(f"# x\n\n## Setup\n{line}\n", "README.md")) == pins


@pytest.mark.parametrize("prompt", ["$ ", ">> ", ">>> ", "% ", "(base) $ ", "(asr) > "])
def test_a_command_after_a_prompt_is_a_command(prompt):
    """A README's commands are written after many prompts (review 25c: ``>> conda create -n asr
    python=3.8``, whose Python 3.8 caps transformers at 4.46): each is read as the command."""
    from precision_lint.workspace.versions import readme_requirements

    text = f"```\n{prompt}conda create -n asr python=3.8\n{prompt}pip install trl==0.7.4\n```\n"
    assert sorted((a.dist, a.spec) for a in readme_requirements(text, "README.md")) == [
        ("python", "python=3.8"), ("trl", "trl==0.7.4"),
    ]


def test_a_utf16_requirements_file_is_read_as_pip_reads_it(tmp_path):
    """``pip freeze > requirements.txt`` in Windows PowerShell writes UTF-16 with its byte-order
    mark; pip reads the pins by the mark, and so are they read here (a UTF-8 mark too)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "requirements.txt").write_bytes("transformers==4.47.1\r\ntorch==2.5.1\r\n".encode("utf-16"))
    (tmp_path / "a" / "m.py").write_text("")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "requirements.txt").write_bytes("\ufefftransformers==4.40.0\n".encode("utf-8"))
    (tmp_path / "b" / "m.py").write_text("")
    assert _targets(tmp_path, "a/m.py").of("transformers").low == (4, 47, 1)
    assert _targets(tmp_path, "b/m.py").of("transformers").low == (4, 40, 0)


# The extras of a package's declaration are alternatives: `pip install .[gpu]` or `.[npu]`, one
# of them. Where only extras name a library, the code runs with any of their versions (an
# Ascend extra's torch==2.1.0 does not make the CUDA install's torch 2.1.0); where the package
# names it for every install, an extra does not narrow that.
@pytest.mark.parametrize("files", [
    {"setup.py": 'setup(name="p", extras_require={"gpu": ["torch>=1.13.1"], "npu": ["torch==2.1.0", "torch-npu"]})\n'},
    {"setup.py": 'EXTRAS = {\n    "gpu": ["torch>=1.13.1"],\n    "npu": ["torch==2.1.0"],\n}\nsetup(name="p", extras_require=EXTRAS)\n'},
    {"pyproject.toml": '[project]\nname = "p"\n[project.optional-dependencies]\ngpu = ["torch>=1.13.1"]\nnpu = ["torch==2.1.0"]\n'},
    {"setup.cfg": "[metadata]\nname = p\n[options.extras_require]\ngpu =\n    torch>=1.13.1\nnpu =\n    torch==2.1.0\n"},
])
def test_extras_that_each_name_a_library_are_alternatives(tmp_path, files):
    root = write_tree(tmp_path, {".git/HEAD": "", "train.py": "", **files})
    torch = _targets(root, "train.py").of("torch")
    assert (torch.low, torch.high) == ((1, 13, 1), None)
    assert torch.some_at_least((2, 4)) and not torch.every_at_least((2, 1))


def test_an_extra_does_not_narrow_what_every_install_gets(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "setup.py": 'setup(name="p", install_requires=["torch>=1.13"], extras_require={"npu": ["torch==2.1.0"]})\n',
        "train.py": "",
    })
    torch = _targets(root, "train.py").of("torch")
    assert (torch.low, torch.high, torch.described) == ((1, 13), None, "torch>=1.13")


def test_one_extra_alone_still_states_its_range(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "setup.py": 'setup(name="p", extras_require={"train": ["transformers>=4.36,<5.0", "torch"]})\n',
        "train.py": "",
    })
    t = _targets(root, "train.py").of("transformers")
    assert (t.low, t.high) == ((4, 36), (5, 0))
    # an extra named after the library (`"trl": ["trl==0.8.0"]`): its name is no requirement
    named = write_tree(tmp_path / "named", {
        ".git/HEAD": "",
        "setup.py": 'EXTRAS = {"vllm": ["vllm"], "trl": ["trl==0.8.0"]}\nsetup(name="p", extras_require=EXTRAS)\n',
        "train.py": "",
    })
    assert _targets(named, "train.py").of("trl").is_point


# A README's fenced block that lists requirements and nothing else (the environment it was run
# in, a pasted `pip freeze`) states those versions, conda's names and `=` spelling included.
@pytest.mark.parametrize("block, low, high", [
    ("python==3.10.9\npytorch==1.13.1\ntorchvision==0.14.1\npytorch-cuda=11.6\n", (1, 13, 1), (1, 13, 1)),
    ("torch==1.13.1+cu116\ntransformers==4.30.2\n", (1, 13, 1), (1, 13, 1)),
    ("pytorch=1.13\n", (1, 13), (1, 14)),
    ("torch>=1.12,<2.0  # tested\n", (1, 12), (2, 0)),
])
def test_a_readme_block_listing_requirements_pins(tmp_path, block, low, high):
    root = write_tree(tmp_path, {".git/HEAD": "", "README.md": f"# t\n\n## Environment\n```\n{block}```\n", "train.py": ""})
    torch = _targets(root, "train.py").of("torch")
    assert (torch.low, torch.high) == (low, high) and "README.md" in torch.source


@pytest.mark.parametrize("block", [
    "x = torch==1.13\n",                              # code
    "torch==1.13.1\npython train.py\n",               # a command beside it: not a listing
    "conda activate env\n",
])
def test_a_readme_block_with_anything_else_lists_nothing(tmp_path, block):
    root = write_tree(tmp_path, {".git/HEAD": "", "README.md": f"# t\n\n```\n{block}```\n", "train.py": ""})
    assert _targets(root, "train.py").of("torch").fallback


# The container a project builds to run its code is the environment it targets: the pins of the
# `RUN pip install` commands of its Dockerfile (in the folder, or its docker/ folder), and the torch
# of an official pytorch/pytorch image it is built from. A requirements file of the folder says first.
@pytest.mark.parametrize("files, low", [
    ({"docker/pytorch.Dockerfile": "FROM nvidia/cuda:12.1.1-devel\nRUN apt-get update && \\\n    pip install torch==2.2.2 torchvision==0.17.2 --index-url https://x\n"}, (2, 2, 2)),
    ({"Dockerfile": "FROM ubuntu\nRUN pip install -U pip && pip install 'torch==2.1.0'\n"}, (2, 1, 0)),
    ({"Dockerfile.gpu": "FROM pytorch/pytorch:2.0.1-cuda11.7-cudnn8-runtime\nRUN pip install transformers\n"}, (2, 0, 1)),
])
def test_the_projects_container_pins_what_it_installs(tmp_path, files, low):
    root = write_tree(tmp_path, {".git/HEAD": "", "train.py": "", **files})
    torch = _targets(root, "train.py").of("torch")
    assert (torch.low, torch.high) == (low, low) and "Dockerfile" in torch.source


def test_a_requirements_file_says_before_the_container(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "", "train.py": "", "requirements.txt": "torch>=2.3\n",
        "Dockerfile": "FROM ubuntu\nRUN pip install torch==2.1.0\n",
    })
    torch = _targets(root, "train.py").of("torch")
    assert (torch.low, torch.high) == ((2, 3), None)


def test_a_container_of_another_folder_is_not_the_codes(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "", "src/train.py": "",
        "deploy/Dockerfile": "FROM ubuntu\nRUN pip install torch==2.1.0\n",
    })
    assert _targets(root, "src/train.py").of("torch").fallback


def test_the_environment_a_committed_wandb_run_recorded_is_a_target(tmp_path):
    """W&B saves each run's `pip freeze` (wandb/run-*/files/requirements.txt): the code in the
    folder the runs started from ran with those versions, any of the runs' (review 23h)."""
    root = write_tree(tmp_path, {
        ".git/HEAD": "", "bloom/ppo.py": "", "other/train.py": "",
        "bloom/wandb/run-20240221_035220-g5z9wmtx/files/requirements.txt": "numpy==1.26.4\ntrl==0.7.11\ntorch==2.2.0\n",
        "bloom/wandb/run-20240301_101010-abcd1234/files/requirements.txt": "trl==0.7.10\n",
        "bloom/wandb/debug.log": "",
    })
    t = _targets(root, "bloom/ppo.py")
    assert (t.of("trl").low, t.of("trl").high) == ((0, 7, 10), (0, 7, 11))
    assert "wandb/run-" in t.of("trl").source and (t.of("torch").low, t.of("torch").high) == ((2, 2, 0), (2, 2, 0))
    assert _targets(root, "other/train.py").of("trl").fallback  # another folder's runs are not its
    pinned = write_tree(tmp_path / "pinned", {
        ".git/HEAD": "", "ppo.py": "", "requirements.txt": "trl>=0.8\n",
        "wandb/run-20240221_035220-g5z9wmtx/files/requirements.txt": "trl==0.7.11\n",
    })
    assert _targets(pinned, "ppo.py").of("trl").low == (0, 8)  # a requirements file says first


@pytest.mark.parametrize("tag, low, high", [
    ("22.11-py3", (1, 13), (2, 0)),   # NVIDIA: 1.13.0a0+936e930
    ("20.02-py3", (1, 4), (1, 5)),    # NVIDIA: 1.4.0a0+a5b4d78
    ("25.12-py3", (2, 9), (2, 10)),   # NVIDIA: 2.10.0a0+b4e4ee81d3
])
def test_an_ngc_image_is_the_torch_of_its_month(tmp_path, tag, low, high):
    """NGC's PyTorch images build the torch under development in the month of their tag: from
    the newest release by then to the next one (review 23i: 22.11 ships torch 1.13, where
    `torch.cuda.amp` does not warn)."""
    root = write_tree(tmp_path, {".git/HEAD": "", "train.py": "", "Dockerfile": f"FROM nvcr.io/nvidia/pytorch:{tag}\nRUN pip install wandb\n"})
    torch = _targets(root, "train.py").of("torch")
    assert (torch.low, torch.high, torch.high_inclusive) == (low, high, True)
    assert "nvcr.io/nvidia/pytorch" in torch.described


@pytest.mark.parametrize("dockerfile, low", [
    ("ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:22.10-py3\nFROM ${FROM_IMAGE_NAME}\n", (1, 13)),
    ('ARG BASE="pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime"\nFROM --platform=linux/amd64 $BASE AS train\n', (2, 1, 2)),
    ("FROM ${BASE:-nvcr.io/nvidia/pytorch:22.10-py3}\n", (1, 13)),
    ("FROM ubuntu:22.04\nARG BASE=nvcr.io/nvidia/pytorch:22.10-py3\nFROM ${BASE}\n", None),  # a stage's ARG: not the FROM's
    ("ARG BASE\nFROM ${BASE}\n", None),  # only a build command says which image
])
def test_a_dockerfile_names_its_image_through_a_global_argument(tmp_path, dockerfile, low):
    """Held-out review 40a: ``ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:22.10-py3`` then ``FROM
    ${FROM_IMAGE_NAME}`` builds on NGC 22.10 (torch 1.13, where ``torch.cuda.amp`` does not warn).
    Only an ``ARG`` before the first ``FROM`` is seen by a ``FROM`` line."""
    root = write_tree(tmp_path, {".git/HEAD": "", "train.py": "", "Dockerfile": dockerfile})
    torch = _targets(root, "train.py").of("torch")
    assert (torch.low if low else None) == low and torch.fallback == (low is None)


@pytest.mark.parametrize("readme, low", [
    ("# toy\n\nAll the code was run in a `nvidia/pytorch:22.08-py3` container.\n", (1, 12)),
    ("## Setup\n\n```bash\ndocker run --gpus all -it nvcr.io/nvidia/pytorch:22.08-py3\npython train.py\n```\n", (1, 12)),
    ("Use the image pytorch/pytorch:2.1.2-cuda12.1-cudnn8-devel.\n", (2, 1, 2)),
    ("Build with `FROM nvcr.io/nvidia/pytorch:<yy.mm>-py3`.\n", None),  # no tag: no image
    ("See github.com/someone/nvidia/pytorch:22.08 notes.\n", None),  # part of another path
])
def test_a_readme_names_the_image_it_ran_in(tmp_path, readme, low):
    """Held-out review 40a: a README that says the code ran in NGC's ``nvidia/pytorch:22.08-py3``
    (prose or a ``docker run`` command) states torch 1.12 to 1.13, read after the requirements
    files as its other statements are."""
    root = write_tree(tmp_path, {".git/HEAD": "", "train.py": "", "README.md": readme})
    torch = _targets(root, "train.py").of("torch")
    assert (torch.low if low else None) == low and torch.fallback == (low is None)
    if low:
        assert "the image named in README.md" in torch.source
    pinned = write_tree(tmp_path / "pinned", {".git/HEAD": "", "train.py": "", "README.md": readme, "requirements.txt": "torch==2.4.0\n"})
    assert _targets(pinned, "train.py").of("torch").low == (2, 4, 0)  # the requirements file says first


@pytest.mark.parametrize(
    "line, expected",
    [
        ("module load python/intel/3.8.6", ((3, 8, 6), (3, 8, 6))),
        ("module add Python/3.9.6-GCCcore-11.2.0", ((3, 9, 6), (3, 9, 6))),
        ("ml python3/3.10", ((3, 10), (3, 11))),
        ("  module load cuda/11.8 python/3.11.5", ((3, 11, 5), (3, 11, 5))),
        ("module load anaconda3/2020.07", None),
        ("module load pytorch/2.1", None),
        ("echo module load python/3.8.6", None),
    ],
)
def test_a_job_scripts_module_load_names_its_python(line, expected):
    """Review 27e: a cluster job loads Python 3.8.6 before it installs and runs the script."""
    from precision_lint.workspace.versions import module_load_pythons

    found = module_load_pythons([line], "job.sh")
    assert [(a.low, a.high) for a in found] == ([expected] if expected else [])


def test_the_python_a_launcher_loads_caps_the_libraries_of_the_script_it_runs(tmp_path):
    from conftest import findings_in

    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "run.sh": "#!/bin/bash\nmodule load python/intel/3.8.6\npip install transformers torch\npython train.py\n",
        "train.py": "from transformers import AdamW\nopt = AdamW(params, lr=1e-4)\n",
    })
    found = [d for d in findings_in(root) if d.code in ("MP302", "MP304")]
    # transformers 4.47 requires Python 3.9: on 3.8.6 the newest is 4.46.3, where AdamW exists
    assert [d.code for d in found] == ["MP304"] and "python==3.8.6" in found[0].message


@pytest.mark.parametrize(
    "line, kept",
    [
        ('!pip install -U "transformers>=4.37.0" trl==0.8.6', ["trl"]),  # review 27e: -U installs the newest
        ('%pip install --upgrade "transformers>=4.37,<4.45"', ["transformers"]),  # a ceiling still states one
        ('!pip install "transformers>=4.37.0"', ["transformers"]),  # no upgrade: the floor is a version it may get
        ("!pip install -q -U transformers==4.46.0", ["transformers"]),
    ],
)
def test_an_upgrade_install_of_a_floor_states_no_version(line, kept):
    from precision_lint.workspace.versions import pip_requirements

    found = pip_requirements([line])
    assert [a.dist for a in found if a.low is not None or a.high is not None] == kept
    assert "transformers" in [a.dist for a in found]  # named all the same: the newest


def test_a_wheels_exact_requirement_is_shown_as_a_pin():
    """Held-out 27's judge: "trl 0.1 requires transformers>=4.3.2,<=4.3.2" (the wheel's own
    metadata) reads as the pin it is."""
    from precision_lint.workspace.versions import _spec_text

    assert _spec_text(">=4.3.2,<=4.3.2") == "==4.3.2"
    assert _spec_text(">=4.18.0") == ">=4.18.0"
    assert _spec_text(">=4.3,<=4.4") == ">=4.3,<=4.4"


def test_a_requirements_file_a_readme_or_setup_script_installs_is_read(tmp_path):
    """``pip install -r configs/requirements.txt`` in the README (review 33a: its
    ``transformers==4.34.1`` unread, nine deprecations told on code written for that version),
    or in an environment setup script: the file the project's own install reads, though no
    folder of the code's walk holds it. A file nothing installs is not read."""
    pins = "torch==2.1.0\ntransformers==4.34.1\n"
    root = write_tree(tmp_path, {
        "a/.git/HEAD": "", "a/README.md": "## Setup\n```\npip install -r configs/requirements.txt\n```\n",
        "a/configs/requirements.txt": pins, "a/src/train.py": "",
        "b/.git/HEAD": "", "b/install.sh": "#!/bin/bash\npip install --requirement=env/reqs.txt\n",
        "b/env/reqs.txt": pins, "b/train.py": "",
        "c/.git/HEAD": "", "c/README.md": "## Setup\n```\npip install transformers\n```\n",
        "c/configs/requirements.txt": pins, "c/train.py": "",
    })
    read = _targets(root, "a/src/train.py").of("transformers")
    assert read.is_point and read.low == (4, 34, 1)
    assert "pip install -r configs/requirements.txt" in read.where()
    assert _targets(root, "b/train.py").of("transformers").low == (4, 34, 1)
    assert _targets(root, "c/train.py").of("transformers").low != (4, 34, 1)
@pytest.mark.parametrize(
    "installs, low, high",
    [
        # the run installs the newest: the project's pin, or the newest (review 33a, held-out 31u)
        (["!pip install -U transformers trl"], (4, 38, 2), None),
        (["!pip install -q transformers accelerate"], (4, 38, 2), None),
        (['!pip install -U "transformers>=4.37"'], (4, 38, 2), None),  # -U with a floor: the newest
        # a version the run installs holds for it
        (["!pip install transformers==4.40.0"], (4, 40, 0), (4, 40, 0)),
        # nothing installed: the project's pin
        ([], (4, 38, 2), (4, 38, 2)),
    ],
)
def test_a_run_that_installs_the_newest_reaches_past_the_projects_pin(tmp_path, installs, low, high):
    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers==4.38.2\n", "nb/train.py": ""})
    found = _targets(root, "nb/train.py", lines=installs).of("transformers")
    assert (found.low, found.high) == (low, high)


@pytest.mark.parametrize(
    "lines, low, high",
    [
        # a later upgrade is what the notebook has from then on (review 33a: a pin, then --upgrade)
        (["!pip install transformers==4.38.2", "!pip install --upgrade transformers"], None, None),
        (["!pip install transformers==4.38.2", "!pip install -U transformers==4.41.0"], (4, 41, 0), (4, 41, 0)),
        # a bare name, or a range the pin satisfies, installs nothing more
        (["!pip install transformers==4.38.2", "!pip install transformers peft"], (4, 38, 2), (4, 38, 2)),
        (["!pip install transformers==4.38.2", "!pip install 'transformers>=4.30'"], (4, 38, 2), (4, 38, 2)),
        # a version the first does not satisfy replaces it
        (["!pip install transformers==4.38.2", "!pip install transformers==4.40.0"], (4, 40, 0), (4, 40, 0)),
    ],
)
def test_a_notebooks_installs_in_order(lines, low, high):
    (found,) = [a for a in pip_requirements(lines, "nb.ipynb", sequential=True) if a.dist == "transformers"]
    assert (found.low, found.high) == (low, high)


def test_a_readmes_two_installs_are_alternatives():
    """A README's commands are choices the reader makes, not steps: both stay."""
    lines = ["pip install transformers==4.38.2", "pip install --upgrade transformers"]
    assert len([a for a in pip_requirements(lines, "README.md") if a.dist == "transformers"]) == 2


FREEZE = "accelerate==1.8.1\naiohttp==3.13.5\ntorch==2.6.0+cu124\ntransformers==5.5.4\ntrl @ git+https://github.com/huggingface/trl@abc\n"


@pytest.mark.parametrize("name", ["env/pipeline-rl-pip-freeze.txt", "docs/requirements.train.lock", "frozen_env.txt", "pinned-requirements.lock"])
def test_a_pip_freeze_the_project_keeps_is_its_environment_where_nothing_else_states_one(tmp_path, name):
    """Review 36a's F1 and held-out 33u's F1: the training run's `pip freeze`, kept in the
    repository under a name that says so and named by nothing, is what the code ran with."""
    root = write_tree(tmp_path, {".git/HEAD": "", name: FREEZE, "sft/train.py": ""})
    found = _targets(root, "sft/train.py").of("transformers")
    assert (found.low, found.high) == ((5, 5, 4), (5, 5, 4))
    assert found.where() == f"transformers==5.5.4 in the environment frozen in ../{name}"


@pytest.mark.parametrize(
    "files",
    [
        # a pin anywhere on the way up decides first
        {"requirements.txt": "transformers>=5.10\n"},
        # a list of requirements to install (a range, a bare name) is no freeze
        {"env/freeze.txt": FREEZE + "peft>=0.10\n"},
        {"env/freeze.txt": FREEZE + "datasets\n"},
        # other tools' lock files, and a freeze-like file with another name
        {"yarn.lock": FREEZE},
        {"env/versions.txt": FREEZE},
    ],
)
def test_what_is_no_frozen_environment(tmp_path, files):
    root = write_tree(tmp_path, {".git/HEAD": "", "sft/train.py": "", **files})
    found = _targets(root, "sft/train.py").of("transformers")
    assert found.low != (5, 5, 4)


def test_two_frozen_environments_are_either(tmp_path):
    root = write_tree(tmp_path, {
        ".git/HEAD": "", "docs/requirements.train.lock": FREEZE,
        "docs/requirements.vllm.lock": FREEZE.replace("transformers==5.5.4", "transformers==4.57.1"), "train.py": "",
    })
    found = _targets(root, "train.py").of("transformers")
    assert (found.low, found.high) == ((4, 57, 1), (5, 5, 4)) and found.some_at_least((5, 5, 4)) and not found.every_at_least((5, 0))


@pytest.mark.parametrize(
    "files, low, high",
    [
        # review 38's M1: the CPU phase installs the first, the Colab GPU phase the second
        ({"requirements-cpu.txt": "transformers\ntorch\n", "requirements-gpu.txt": "torch\ntransformers<4.45\npeft\n"}, None, (5, 24, 0)),
        ({"requirements_colab.txt": "transformers==4.41.2\n", "requirements_local.txt": "transformers==4.46.0\n"}, (4, 41, 2), (4, 46, 0)),
    ],
)
def test_requirements_files_of_two_environments_are_either(tmp_path, files, low, high):
    root = write_tree(tmp_path, {".git/HEAD": "", "nb/eval.py": "", **files})
    found = VersionResolver(installed={"transformers": Allowed.point("transformers", (5, 24, 0), "installed")}).targets(
        str(root / "nb/eval.py")
    ).of("transformers")
    assert (found.low, found.high) == (low, high)


def test_a_plain_requirements_file_beside_them_decides():
    """With a requirements.txt that names the library, the suffixed files are extras, as before."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = write_tree(Path(tmp), {
            ".git/HEAD": "", "requirements.txt": "transformers==4.46.0\n", "requirements-gpu.txt": "transformers<4.45\n",
            "requirements-cpu.txt": "transformers\n", "train.py": "",
        })
        found = _targets(root, "train.py").of("transformers")
        assert (found.low, found.high) == ((4, 46, 0), (4, 46, 0))


@pytest.mark.parametrize(
    "source, expected",
    [
        # held-out 36u's F1: a notebook's helper that runs pip with the packages it is given
        ('import subprocess, sys\ndef pip_install(pkgs):\n    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q"] + pkgs)\n'
         'pip_install(["transformers==4.41.2", "peft==0.10.0"])\n', [("transformers", (4, 41, 2)), ("peft", (0, 10, 0))]),
        ('import subprocess\nsubprocess.run(["pip", "install", "trl>=0.8,<0.9"])\n', [("trl", (0, 8))]),
        ('import os\nos.system("pip install -q transformers==4.41.2 trl")\n', [("transformers", (4, 41, 2))]),
        # no pip run: a quoted requirement is not an install
        ('MIN = "transformers==4.41.2"\n', []),
        ('# pip install transformers==4.41.2\n', []),
    ],
)
def test_pip_the_code_runs_itself(source, expected):
    found = in_file_requirements(source, "nb.ipynb")
    assert [(a.dist, a.low) for a in found if a.low is not None] == expected
    assert all(a.source == "`pip install` run by nb.ipynb" for a in found)


def test_a_software_section_of_lines_states_the_python_it_ran_on(tmp_path):
    """47c: a Kaggle solution's README states its environment as plain lines under "## SOFTWARE"
    (``Python 3.7.3`` / ``CUDA 11.0``): no torch 2 installs on Python 3.7, so nothing of torch
    2.4's deprecations is true of it. A sentence there states nothing."""
    readme = "# model\n\n## HARDWARE\n1 x RTX 3090  \n\n## SOFTWARE\nPython 3.7.3  \nCUDA 11.0  \nWe used PyTorch 1.10 with apex.\n"
    root = write_tree(tmp_path, {".git/HEAD": "", "README.md": readme, "train.py": ""})
    t = _targets(root, "train.py")
    assert t.of("torch").high == (2, 0) and "README.md" in t.of("torch").source  # torch 2.0 needs Python 3.8
    assert t.of("transformers").high == (4, 31)  # the last transformers for Python 3.7 is 4.30.2
