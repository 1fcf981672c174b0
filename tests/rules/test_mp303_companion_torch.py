"""MP303 judges the torch a project runs: a pinned companion library (torchvision, torchaudio,
torchdata, torchtext) requires one torch, so an open ``torch>=2.0.1`` beside ``torchdata==0.6.1``
is torch 2.0, where ``torch.cuda.amp`` warns about nothing (``knowledge/companions.toml``)."""
from __future__ import annotations

import pytest

from precision_lint.engine import Engine
from precision_lint.workspace.config import from_table

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
