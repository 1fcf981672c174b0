"""The join of a shipped ``accelerate launch`` with the script it runs (project/launched_precision.py):
the mixed precision an ``Accelerator()`` without ``mixed_precision=`` takes, and whether that run
scales the loss with torch's GradScaler."""
import pytest

from conftest import write_tree
from precision_lint.project.launched_precision import launched
from precision_lint.project.model import Project
from precision_lint.workspace.launches import parse

CONFIG = "compute_environment: LOCAL_MACHINE\ndistributed_type: {kind}\nmixed_precision: {mp}\n"


def _launched(tmp_path, command, files=None):
    root = write_tree(tmp_path / "p", {".git/HEAD": "", "train.py": "print(1)\n", "run.sh": command + "\n", **(files or {})})
    return launched(Project([]), str(root / "train.py"))


def test_the_launcher_and_its_own_words_are_kept_apart_from_the_script_s():
    launch = parse("accelerate launch --num_processes 2 --mixed_precision fp16 train.py --lr 1e-5")
    assert launch.launcher == "accelerate"
    assert launch.launcher_args == ("--num_processes", "2", "--mixed_precision", "fp16")
    assert launch.args == ("--lr", "1e-5")


def test_an_unknown_launcher_option_s_value_is_not_the_script():
    launch = parse("accelerate launch --use_fsdp --fsdp_version 2 train.py")
    assert launch.script == "train.py" and launch.launcher_args == ("--use_fsdp", "--fsdp_version", "2")


def test_the_command_line_precision_is_the_run_s(tmp_path):
    (found,) = _launched(tmp_path, "accelerate launch --mixed_precision FP16 train.py")
    assert (found.precision, found.scaler, found.loss_scaling) == ("fp16", "grad-scaler", True)
    assert found.command == "accelerate launch --mixed_precision fp16"
    assert found.where[0].endswith("run.sh") and found.where[1].line == 1


@pytest.mark.parametrize(
    "kind, scaler",
    [("MULTI_GPU", "grad-scaler"), ("'NO'", "grad-scaler"), ("DEEPSPEED", "deepspeed"), ("FSDP", "fsdp"), ("XLA", "other")],
)
def test_the_config_s_distributed_type_decides_the_scaler(tmp_path, kind, scaler):
    files = {"accel.yaml": CONFIG.format(kind=kind, mp="fp16")}
    (found,) = _launched(tmp_path, "accelerate launch --config_file accel.yaml train.py", files)
    assert (found.precision, found.scaler, found.key) == ("fp16", scaler, "mixed_precision: fp16")
    assert found.loss_scaling == (scaler == "grad-scaler")


def test_the_legacy_fp16_key_and_a_missing_key(tmp_path):
    legacy = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nfp16: true\n"
    (found,) = _launched(tmp_path, "accelerate launch --config_file a.yaml train.py", {"a.yaml": legacy})
    assert (found.precision, found.key) == ("fp16", "fp16: true")
    plain = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\n"
    (found,) = _launched(tmp_path, "accelerate launch --config_file b.yaml train.py", {"b.yaml": plain})
    assert found.precision == "no" and not found.loss_scaling


def test_launcher_switches_win_over_the_config_s_type(tmp_path):
    files = {"accel.yaml": CONFIG.format(kind="MULTI_GPU", mp="fp16")}
    (found,) = _launched(tmp_path, "accelerate launch --use_deepspeed --config_file accel.yaml train.py", files)
    assert found.scaler == "deepspeed"


@pytest.mark.parametrize(
    "command",
    [
        "accelerate launch --multi_gpu train.py",  # the user's default config decides
        "accelerate launch --mixed_precision $MP train.py",  # not known
        "accelerate launch --config_file missing.yaml train.py",  # not readable here
        "torchrun --nproc_per_node 2 train.py --mixed_precision fp16",  # not accelerate's launcher
    ],
)
def test_unknown_precisions_are_left_out(tmp_path, command):
    assert _launched(tmp_path, command) == []


def test_a_config_without_distributed_type_is_refused_by_accelerate(tmp_path):
    files = {"accel.yaml": "mixed_precision: fp16\n"}
    assert _launched(tmp_path, "accelerate launch --config_file accel.yaml train.py", files) == []
