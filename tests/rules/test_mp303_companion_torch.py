"""MP303 judges the torch a project runs: a pinned companion library (torchvision, torchaudio,
torchdata, torchtext) requires one torch, so an open ``torch>=2.0.1`` beside ``torchdata==0.6.1``
is torch 2.0, where ``torch.cuda.amp`` warns about nothing (``knowledge/companions.toml``)."""
from __future__ import annotations

import pytest

from precision_lint.engine import Engine
from precision_lint.workspace.config import from_table
from conftest import findings_in

CODE = '''import torch


def step(model, x):
    with torch.cuda.amp.autocast(dtype=torch.float16):
        return model(x)
'''


def _codes(root):
    engine = Engine(from_table({}, "defaults"), jobs=1)
    return sorted(d.code for d in engine.run_paths([str(root)]).diagnostics)


@pytest.mark.parametrize(
    "pins, reported",
    [
        ("torch>=2.0.1\ntorchdata==0.6.1\n", False),  # torchdata 0.6.1 requires torch==2.0.1
        ("torch>=2.0\ntorchvision==0.15.2\n", False),
        ("torch>=2.0\ntorchvision==0.19.1\n", True),  # torch 2.4: deprecated there
        ("torch>=2.0\ntorchvision>=0.15\n", True),  # open: the newest torch stays possible
    ],
)
def test_the_torch_a_companion_pin_requires_decides_mp303(tmp_path, pins, reported):
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text(pins)
    (tmp_path / "train.py").write_text(CODE)
    assert ("MP303" in _codes(tmp_path)) is reported


@pytest.mark.parametrize(
    "readme, reported",
    [
        ("pip install --pre torch==2.4.0.dev20240324 --index-url https://download.pytorch.org/whl/nightly/cu118", False),
        ("pip install torch==2.4.0", True),
    ],
)
def test_a_nightly_of_the_deprecating_release_is_not_that_release(tmp_path, readme, reported):
    """A README's nightly ``torch==2.4.0.dev20240324`` sorts below 2.4.0 (PEP 440): built
    before the deprecation, it warns about nothing, and ``torch.amp.custom_fwd`` is not in it
    (the fix would raise ``AttributeError``)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "README.md").write_text(f"# demo\n\n## Installation\n\n```bash\n{readme}\n```\n")
    (tmp_path / "train.py").write_text(CODE)
    assert ("MP303" in _codes(tmp_path)) is reported


@pytest.mark.parametrize("python, codes", [("3.7", []), ("3.8", ["MP303"])])
def test_a_stated_python_caps_the_torch_that_warns(tmp_path, python, codes):
    """A project made with `conda create -n env python=3.7` installs torch 1.13 at most, where
    `torch.cuda.amp.autocast` does not warn (from 2.4); with Python 3.8, torch 2.4 and 2.5 do."""
    from conftest import write_tree

    write_tree(tmp_path, {
        ".git/HEAD": "",
        "README.md": f"# seg\n\n```bash\nconda create -n seg python={python}\npip install torch\n```\n",
        "train.py": "import torch\n\ndef step(net, x):\n    with torch.cuda.amp.autocast():\n        return net(x)\n",
    })
    found = findings_in(tmp_path, ["MP303"])
    assert [d.code for d in found] == codes
