"""MP103 under Accelerate: a torch clip between ``accelerator.backward(loss)`` and the prepared
optimizer's ``step()`` clips loss-scaled gradients where the ``Accelerator`` runs fp16 with torch's
GradScaler (its own ``mixed_precision="fp16"``, or the shipped ``accelerate launch``'s);
``accelerator.clip_grad_norm_`` unscales first."""
import pytest

from conftest import dedent, fix, lint, write_tree
from precision_lint.engine import check_paths

CODE = "MP103"

LOOP = """
import torch
from accelerate import Accelerator


def train(model, optimizer, loader):
    accelerator = Accelerator({args})
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        loss = model(batch).mean()
        accelerator.backward(loss)
{clip}
        optimizer.step()
        optimizer.zero_grad()
"""

PLAIN_CLIP = "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)"
SYNCED_CLIP = (
    "        if accelerator.sync_gradients:\n"
    "            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)"
)


def _loop(args='mixed_precision="fp16"', clip=PLAIN_CLIP) -> str:
    return LOOP.format(args=args, clip=clip)


def test_a_torch_clip_after_an_fp16_accelerator_backward_is_reported():
    (d,) = lint(_loop(), CODE)
    assert d.span.line == 11
    assert "`accelerator.backward(...)` (line 10)" in d.message
    assert "which `Accelerator(mixed_precision=\"fp16\")` (line 6) turns on:" in d.message
    assert "`optimizer.step()`" in d.message
    assert "accelerator.clip_grad_norm_" in d.message
    assert d.fix is None  # on every accumulation micro-step: an unscale there would raise


def test_under_sync_gradients_the_fix_clips_with_the_accelerator():
    src = _loop(clip=SYNCED_CLIP)
    (d,) = lint(src, CODE)
    assert d.fix is not None and d.fix.applicability == "unsafe"
    assert fix(src, CODE) == dedent(src)  # unsafe: not applied without --unsafe-fixes
    fixed = fix(src, CODE, unsafe=True)
    assert "            accelerator.clip_grad_norm_(model.parameters(), 1.0)\n" in fixed
    assert "torch.nn.utils.clip_grad_norm_" not in fixed
    assert lint(fixed, CODE) == []


def test_a_value_clip_becomes_the_accelerators_value_clip():
    clip = (
        "        if accelerator.sync_gradients and step > 0:\n"
        "            torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.5)"
    )
    fixed = fix(_loop(clip=clip).replace("for batch in loader:", "for step, batch in enumerate(loader):"), CODE, unsafe=True)
    assert "accelerator.clip_grad_value_(model.parameters(), clip_value=0.5)" in fixed


def test_an_argument_accelerate_does_not_take_leaves_no_fix():
    clip = (
        "        if accelerator.sync_gradients:\n"
        "            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)"
    )
    (d,) = lint(_loop(clip=clip), CODE)
    assert d.fix is None  # accelerator.clip_grad_norm_(..., foreach=True) is a TypeError


@pytest.mark.parametrize(
    "clip",
    [
        "        accelerator.clip_grad_norm_(model.parameters(), 1.0)",  # unscales first
        "        accelerator.unscale_gradients()\n        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
    ],
)
def test_a_clip_of_unscaled_gradients_is_silent(clip):
    assert lint(_loop(clip=clip), CODE) == []


@pytest.mark.parametrize(
    "args",
    [
        'mixed_precision="bf16"',  # no loss scaling
        'mixed_precision="no"',
        "",  # the launch's precision, and no launch is shipped
        'mixed_precision="fp16", deepspeed_plugin=plugin',  # DeepSpeed keeps its own scaler
    ],
)
def test_no_torch_loss_scaling_is_silent(args):
    assert lint(_loop(args=args).replace("def train(", "plugin = None\n\n\ndef train("), CODE) == []


def test_a_clip_after_the_step_is_silent():
    src = """
        import torch
        from accelerate import Accelerator

        def train(model, optimizer, loader):
            accelerator = Accelerator(mixed_precision="fp16")
            for batch in loader:
                accelerator.backward(model(batch).mean())
                optimizer.step()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scheduler.step()
        """
    assert lint(src, CODE) == []


def test_an_accelerator_passed_in_by_its_caller_and_one_on_self():
    src = """
        import torch
        from accelerate import Accelerator

        def step(accelerator, model, optimizer, batch):
            accelerator.backward(model(batch).mean())
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()

        class Runner:
            def __init__(self):
                self.accelerator = Accelerator(mixed_precision="fp16")

            def update(self, model, optimizer, batch):
                self.accelerator.backward(model(batch).mean())
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()

        def main(model, optimizer, loader):
            accelerator = Accelerator(mixed_precision="fp16")
            for batch in loader:
                step(accelerator, model, optimizer, batch)
        """
    found = lint(src, CODE)
    assert [d.span.line for d in found] == [6, 15]
    assert "`self.accelerator.backward(...)`" in found[1].message


def test_a_user_choice_of_precision_says_when_it_fails():
    src = """
        import argparse
        import torch
        from accelerate import Accelerator

        parser = argparse.ArgumentParser()
        parser.add_argument("--mixed_precision", default="no", choices=["no", "fp16", "bf16"])
        args = parser.parse_args()
        accelerator = Accelerator(mixed_precision=args.mixed_precision)
        for batch in loader:
            accelerator.backward(model(batch).mean())
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        """
    (d,) = lint(src, CODE)
    assert 'whenever it is "fp16"' in d.message


def test_the_shipped_fp16_launch_of_a_bare_accelerator(tmp_path):
    root = write_tree(
        tmp_path / "p",
        {
            ".git/HEAD": "",
            "train.py": _loop(args="") + '\n\nif __name__ == "__main__":\n    train(None, None, [])\n',
            "run.sh": "#!/bin/bash\naccelerate launch --mixed_precision fp16 train.py\n",
        },
    )
    (d,) = [d for d in check_paths([str(root)], select=[CODE]) if d.path.endswith("train.py")]
    assert "as `run.sh` launches it" in d.message
    bf16 = write_tree(
        tmp_path / "q",
        {
            ".git/HEAD": "",
            "train.py": _loop(args="") + '\n\nif __name__ == "__main__":\n    train(None, None, [])\n',
            "run.sh": "#!/bin/bash\naccelerate launch --mixed_precision bf16 train.py\n",
        },
    )
    assert [d for d in check_paths([str(bf16)], select=[CODE])] == []
