"""MP101 where ``Accelerator()`` takes its mixed precision from the shipped ``accelerate launch``.

``Accelerator()`` with no ``mixed_precision=`` reads ACCELERATE_MIXED_PRECISION, which ``accelerate
launch`` sets from ``--mixed_precision`` or its ``--config_file``'s ``mixed_precision``; a plain or
multi-GPU run then builds torch's GradScaler, and float16 trainable weights fail at the first step.
Each case is a small project: ``train.py`` and the ``run.sh`` that launches it."""
import pytest

from conftest import run_cli, write_tree
from precision_lint.engine import check_paths

TRAIN = """
import torch
from accelerate import Accelerator
from transformers import AutoModelForSequenceClassification


def train(batches):
    accelerator = Accelerator({accelerator_args})
    net = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", torch_dtype=torch.float16)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    net, optimizer = accelerator.prepare(net, optimizer)
    for batch in batches:
        accelerator.backward(net(**batch).loss)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    train([])
"""

# a frozen float16 encoder beside a trained float32 head: nothing float16 is ever unscaled
FROZEN = """
import torch
from accelerate import Accelerator
from transformers import AutoModel


def train(batches):
    accelerator = Accelerator()
    encoder = AutoModel.from_pretrained("bert-base-uncased", torch_dtype=torch.float16)
    encoder.requires_grad_(False)
    head = torch.nn.Linear(768, 2)
    optimizer = torch.optim.AdamW(head.parameters(), lr=1e-4)
    head, optimizer = accelerator.prepare(head, optimizer)
    for features, labels in batches:
        with torch.no_grad():
            hidden = encoder(**features).last_hidden_state[:, 0]
        loss = torch.nn.functional.cross_entropy(head(hidden.float()), labels)
        accelerator.backward(loss)
        optimizer.step()


if __name__ == "__main__":
    train([])
"""

CONFIG = """\
compute_environment: LOCAL_MACHINE
distributed_type: {kind}
mixed_precision: {mp}
num_machines: 1
num_processes: 2
"""


def _run_sh(*options: str, script: str = "train.py") -> str:
    return "#!/bin/bash\nset -e\naccelerate launch --num_processes 2 " + " ".join(options) + f" {script} --epochs 1\n"


def _project(tmp_path, run_sh=None, accelerator_args="", train=None, extra=None):
    files = {".git/HEAD": "", "train.py": train or TRAIN.format(accelerator_args=accelerator_args)}
    if run_sh is not None:
        files["run.sh"] = run_sh
    files.update(extra or {})
    return write_tree(tmp_path / "p", files)


def _findings(root):
    return [d for d in check_paths([str(root)], select=["MP101"]) if d.path.endswith("train.py")]


def test_an_fp16_launch_of_a_bare_accelerator_is_reported_naming_the_launcher(tmp_path):
    (d,) = _findings(_project(tmp_path, _run_sh("--mixed_precision fp16")))
    assert "as `run.sh` launches it: `accelerate launch --mixed_precision fp16`" in d.message
    assert "Attempting to unscale FP16 gradients" in d.message
    assert "(line 7)" in d.message  # the Accelerator() line
    assert any(r.path.endswith("run.sh") and r.span.line == 3 for r in d.related)


def test_the_equals_spelling_and_the_module_launcher_are_the_same_launch(tmp_path):
    run_sh = "#!/bin/bash\npython -m accelerate.commands.launch --mixed_precision=fp16 train.py\n"
    (d,) = _findings(_project(tmp_path, run_sh))
    assert "accelerate launch --mixed_precision fp16" in d.message


def test_an_fp16_config_file_of_the_launch_is_reported_naming_its_key(tmp_path):
    root = _project(
        tmp_path,
        _run_sh("--config_file configs/ddp_fp16.yaml"),
        extra={"configs/ddp_fp16.yaml": CONFIG.format(kind="MULTI_GPU", mp="fp16")},
    )
    (d,) = _findings(root)
    assert "as `run.sh` launches it: `accelerate launch --config_file configs/ddp_fp16.yaml`" in d.message
    assert "`mixed_precision: fp16` is set in configs/ddp_fp16.yaml (line 3)" in d.message
    assert any(r.path.endswith("ddp_fp16.yaml") and r.span.line == 3 for r in d.related)


def test_a_config_file_read_from_the_folder_the_launcher_runs_the_script_from(tmp_path):
    # scripts/run.sh runs `src/train.py` from the root: the config path is the root's too
    root = write_tree(
        tmp_path / "p",
        {
            ".git/HEAD": "",
            "src/train.py": TRAIN.format(accelerator_args=""),
            "scripts/run.sh": _run_sh("--config_file configs/fp16.yaml", script="src/train.py"),
            "configs/fp16.yaml": CONFIG.format(kind="'NO'", mp="fp16")  # accelerate writes it quoted (YAML's NO is false),
        },
    )
    (d,) = [d for d in check_paths([str(root)], select=["MP101"]) if d.path.endswith("train.py")]
    assert "`mixed_precision: fp16`" in d.message


def test_the_command_line_precision_wins_over_the_config_file(tmp_path):
    root = _project(
        tmp_path,
        _run_sh("--config_file fp16.yaml --mixed_precision bf16"),
        extra={"fp16.yaml": CONFIG.format(kind="MULTI_GPU", mp="fp16")},
    )
    assert _findings(root) == []


@pytest.mark.parametrize(
    "kind",
    [
        "DEEPSPEED",  # DeepSpeed's own loss scaler and fp32 master weights; accelerate's precision is "no"
        "FSDP",  # ShardedGradScaler unscales fp16 gradients (allow_fp16=True); FSDP2 upcasts
    ],
)
def test_a_deepspeed_or_fsdp_config_builds_no_torch_grad_scaler(tmp_path, kind):
    root = _project(
        tmp_path, _run_sh("--config_file accel.yaml"), extra={"accel.yaml": CONFIG.format(kind=kind, mp="fp16")}
    )
    assert _findings(root) == []


@pytest.mark.parametrize("flag", ["--use_deepspeed", "--use_fsdp --fsdp_version 2", "--cpu"])
def test_launcher_switches_for_deepspeed_fsdp_or_the_cpu_are_silent(tmp_path, flag):
    assert _findings(_project(tmp_path, _run_sh(flag, "--mixed_precision fp16"))) == []


def test_a_bf16_launch_is_no_fp16_loss_scaling(tmp_path):
    assert _findings(_project(tmp_path, _run_sh("--mixed_precision bf16"))) == []


def test_a_config_file_without_mixed_precision_is_full_precision(tmp_path):
    config = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_processes: 2\n"
    root = _project(tmp_path, _run_sh("--config_file accel.yaml"), extra={"accel.yaml": config})
    assert _findings(root) == []


def test_an_explicit_mixed_precision_argument_wins_over_the_launcher(tmp_path):
    root = _project(tmp_path, _run_sh("--mixed_precision fp16"), accelerator_args='mixed_precision="no"')
    assert _findings(root) == []


def test_mixed_precision_none_written_out_takes_the_launch_s(tmp_path):
    (d,) = _findings(_project(tmp_path, _run_sh("--mixed_precision fp16"), accelerator_args="mixed_precision=None"))
    assert "`Accelerator(mixed_precision=None)` (None: the launch's precision" in d.message


def test_keyword_arguments_that_cannot_be_read_may_hold_the_precision(tmp_path):
    train = TRAIN.format(accelerator_args="**accelerator_kwargs").replace(
        "def train(batches):", "def train(batches, **accelerator_kwargs):"
    )
    assert _findings(_project(tmp_path, _run_sh("--mixed_precision fp16"), train=train)) == []


def test_no_shipped_launcher_is_silent(tmp_path):
    assert _findings(_project(tmp_path)) == []


def test_a_launch_without_precision_or_config_is_the_users_default_config(tmp_path):
    # accelerate then reads ~/.cache/huggingface/accelerate/default_config.yaml: not the project's
    assert _findings(_project(tmp_path, _run_sh("--multi_gpu"))) == []


def test_a_launch_of_another_script_changes_nothing(tmp_path):
    assert _findings(_project(tmp_path, _run_sh("--mixed_precision fp16", script="evaluate.py"))) == []


def test_a_torchrun_launch_sets_no_accelerate_precision(tmp_path):
    run_sh = "#!/bin/bash\ntorchrun --nproc_per_node 2 train.py --mixed_precision fp16\n"
    assert _findings(_project(tmp_path, run_sh)) == []


def test_a_frozen_fp16_model_under_an_fp16_launch_is_silent(tmp_path):
    assert _findings(_project(tmp_path, _run_sh("--mixed_precision fp16"), train=FROZEN)) == []


def test_the_fix_keeps_float32_weights_and_a_second_run_finds_nothing(tmp_path):
    root = _project(tmp_path, _run_sh("--mixed_precision fp16"))
    first = run_cli("--no-cache", ".", "--select", "MP101", "--fix", cwd=root)
    assert first.returncode == 0, first.stdout + first.stderr
    assert 'from_pretrained("bert-base-uncased", torch_dtype=torch.float32)' in (root / "train.py").read_text()
    again = run_cli("--no-cache", ".", "--select", "MP101", cwd=root)
    assert again.returncode == 0 and "All checks passed" in again.stdout, again.stdout


@pytest.mark.parametrize("kind", ["DEEPSPEED", "FSDP"])
def test_an_explicit_fp16_accelerator_launched_only_under_deepspeed_or_fsdp(tmp_path, kind):
    """`Accelerator(mixed_precision="fp16")` whose every shipped launch is DeepSpeed (its own
    loss scaler, fp32 master weights) or FSDP (a scaler that unscales fp16 gradients)."""
    root = _project(
        tmp_path,
        _run_sh("--config_file accel.yaml"),
        accelerator_args='mixed_precision="fp16"',
        extra={"accel.yaml": CONFIG.format(kind=kind, mp="fp16")},
    )
    assert _findings(root) == []


@pytest.mark.parametrize("run_sh", [None, "#!/bin/bash\naccelerate launch --num_processes 2 train.py\npython train.py\n"])
def test_an_explicit_fp16_accelerator_with_no_or_a_plain_launch_is_reported(tmp_path, run_sh):
    root = _project(tmp_path, run_sh, accelerator_args='mixed_precision="fp16"')
    assert len(_findings(root)) == 1
