"""The library versions a project targets come from its own pins (requirements, pyproject,
setup.py), else the configuration says, else the installed metadata."""
import pytest

from conftest import write_tree

from precision_lint.config import _targeted, load, project_pins


@pytest.mark.parametrize(
    "spec, version",
    [("==4.36.2", (4, 36, 2)), (">=0.8.6,<=0.9.6", (0, 9, 6)), ("<0.10", (0, 9)), ("<5", (4,)), ("<5.0", (4,)), (">=4.40", None), ("~=4.46.0", (4, 46, 0))],
)
def test_what_a_requirement_targets(spec, version):
    assert _targeted(spec) == version


def test_pins_from_requirements_and_pyproject(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "requirements.txt": "torch>=2.0\ntransformers==4.44.2\n",
            "pyproject.toml": '[project]\nname = "x"\ndependencies = ["trl>=0.8.6,<=0.9.6", "peft"]\n',
            "src/train.py": "print(1)\n",
        },
    )
    assert project_pins(root / "src" / "train.py") == {"transformers": (4, 44, 2), "trl": (0, 9, 6)}
    cfg = load(start=[str(root / "src" / "train.py")])
    assert cfg.transformers_version == (4, 44, 2) and cfg.trl_version == (0, 9, 6)
    assert cfg.version_sources == {"transformers": "pin", "trl": "pin"}


def test_the_configuration_wins_over_pins(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "requirements.txt": "transformers==4.44.2\n",
            "pyproject.toml": '[tool.precision-lint]\ntransformers-version = "5.0"\n',
            "train.py": "print(1)\n",
        },
    )
    cfg = load(start=[str(root / "train.py")])
    assert cfg.transformers_version == (5, 0)


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
