"""Claims that follow the targeted versions (MP201, MP203, MP303), the torch a pinned library
implies, and the pins of the shell / SLURM scripts that launch a file.

The facts (knowledge/torch.toml, read in the wheels): torch up to 2.2 answers
`is_bf16_supported()` for native bf16 only; from 2.3 it counts emulation, so torch's autocast,
accelerate and transformers >= 4.35 stop refusing a T4 and run bf16 emulated; transformers
before 4.35 refuses on every torch; `including_emulation=` exists from torch 2.4;
`torch.amp.GradScaler` from 2.3, `torch.amp.custom_fwd` from 2.4, torch.cuda.amp warns from 2.4.
Every shape has its negative beside it."""
import pytest

from conftest import write_tree

from precision_lint.engine import Engine
from precision_lint.workspace.config import from_table
from precision_lint.workspace.versions import Allowed, VersionResolver, implied_torch, parse_spec

TRAINING = "from transformers import TrainingArguments\nargs = TrainingArguments('out', bf16=True)\n"
AUTOCAST = "import torch\nwith torch.autocast('cuda', dtype=torch.bfloat16):\n    pass\n"
ACCELERATOR = "from accelerate import Accelerator\nacc = Accelerator(mixed_precision='bf16')\n"
PROBE = "import torch\ndtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16\nwith torch.autocast('cuda', dtype=dtype):\n    pass\n"
HF_PROBE = (
    "import torch\nfrom transformers.utils import is_torch_bf16_gpu_available\n"
    "dtype = torch.bfloat16 if is_torch_bf16_gpu_available() else torch.float16\n"
    "with torch.autocast('cuda', dtype=dtype):\n    pass\n"
)
SCALER = "import torch\nscaler = torch.cuda.amp.GradScaler()\nwith torch.cuda.amp.autocast():\n    pass\n"
ERROR = "ValueError: Your setup doesn't support bf16/gpu."
AUTOCAST_ERROR = "RuntimeError: Current CUDA Device does not support bfloat16."
EMULATED = "runs bf16 emulated (several times slower"


def run(root, codes):
    cfg = from_table({}, "defaults")  # nothing configured: the files' projects say (else the installed torch 2.13)
    found = Engine(cfg, list(codes), jobs=1).run_paths([str(root)]).diagnostics
    return sorted(found, key=lambda d: (d.path, d.span.start))


def project(tmp_path, requirements, files, name="p"):
    tree = {".git/HEAD": "", **files}
    if requirements is not None:
        tree["requirements.txt"] = requirements
    return write_tree(tmp_path / name, tree)


# --- MP201: the failure the targeted versions have ------------------------------------------
def test_transformers_before_4_35_refuses_on_every_torch(tmp_path):
    (d,) = run(project(tmp_path, "transformers==4.30.2\ntorch>=2.4\n", {"train.py": TRAINING}), ["MP201"])
    assert f"raises `{ERROR}`" in d.message and "emulated" not in d.message
    assert "transformers==4.30.2 in requirements.txt" in d.message


def test_transformers_and_torch_that_count_emulation_run_it_emulated(tmp_path):
    (d,) = run(project(tmp_path, "transformers>=4.40\ntorch>=2.4\n", {"train.py": TRAINING}), ["MP201"])
    assert EMULATED in d.message and "raises" not in d.message


def test_a_range_that_spans_both_names_the_versions_of_each(tmp_path):
    (d,) = run(project(tmp_path, "transformers>=4.40\ntorch>=2.0\n", {"train.py": TRAINING}), ["MP201"])
    assert f"raises `{ERROR}` with torch below 2.3" in d.message
    assert f"{EMULATED}" in d.message and "with torch 2.3 and later" in d.message


@pytest.mark.parametrize("pin, raises, emulated", [("torch==2.2.2", True, False), ("torch==2.3.0", False, True)])
def test_autocast_follows_torch(tmp_path, pin, raises, emulated):
    (d,) = run(project(tmp_path, pin + "\n", {"train.py": AUTOCAST}), ["MP201"])
    assert (AUTOCAST_ERROR in d.message) is raises
    assert (EMULATED in d.message) is emulated


def test_accelerator_on_torch_that_emulates_claims_no_valueerror(tmp_path):
    # accelerate asks torch.cuda.is_bf16_supported(): with torch 2.6 a T4 passes and runs emulated
    (d,) = run(project(tmp_path, "accelerate==1.6.0\ntorch==2.6.0\n", {"train.py": ACCELERATOR}), ["MP201"])
    assert "ValueError" not in d.message and EMULATED in d.message
    (old,) = run(project(tmp_path, "accelerate==0.20.3\ntorch==2.0.1\n", {"train.py": ACCELERATOR}, "old"), ["MP201"])
    assert "ValueError: bf16 mixed precision requires PyTorch >= 1.10 and a supported device." in old.message
    assert "emulated" not in old.message


def test_the_torch_a_pinned_transformers_implies_decides_the_claim(tmp_path):
    # transformers==4.27.1 beside torch>=1.10: the torch of its time (below 2.1), where autocast raises
    (d,) = run(project(tmp_path, "torch>=1.10\ntransformers==4.27.1\n", {"train.py": AUTOCAST}), ["MP201"])
    assert AUTOCAST_ERROR in d.message and "emulated" not in d.message
    assert "transformers 4.28 came out" in d.message


# --- MP203: the guard counts emulation only where the targeted versions do -------------------
def test_mp203_is_silent_where_torch_answers_for_native_bf16(tmp_path):
    assert run(project(tmp_path, "torch==2.2.2\n", {"train.py": PROBE}), ["MP203"]) == []
    assert run(project(tmp_path, "torch>=1.10\ntransformers==4.27.1\n", {"train.py": PROBE}, "implied"), ["MP203"]) == []


def test_mp203_fix_only_where_including_emulation_exists(tmp_path):
    (new,) = run(project(tmp_path, "torch>=2.4\n", {"train.py": PROBE}, "new"), ["MP203"])
    assert new.fix is not None and "including_emulation=False" in new.fix.edits[0].content
    (old,) = run(project(tmp_path, "torch==2.3.0\n", {"train.py": PROBE}, "old"), ["MP203"])
    assert old.fix is None and "does not exist before torch 2.4" in old.message
    (span,) = run(project(tmp_path, "torch>=2.0\n", {"train.py": PROBE}, "span"), ["MP203"])
    assert "only with torch 2.3 and later" in span.message and span.fix is None


def test_mp203_transformers_helper_follows_transformers(tmp_path):
    assert run(project(tmp_path, "transformers==4.33.3\ntorch>=2.4\n", {"train.py": HF_PROBE}), ["MP203"]) == []
    (d,) = run(project(tmp_path, "transformers>=4.40\ntorch>=2.4\n", {"train.py": HF_PROBE}, "new"), ["MP203"])
    assert "is_torch_bf16_gpu_available" in d.message


# --- MP303: the torch a file targets, and fixes that exist there ------------------------------
def test_mp303_silent_for_the_torch_of_a_pinned_transformers(tmp_path):
    # torch>=1.10 with transformers==4.27.1: below 2.1, where torch.cuda.amp warns about nothing
    assert run(project(tmp_path, "torch>=1.10\ntransformers==4.27.1\n", {"train.py": SCALER}), ["MP303"]) == []
    assert run(project(tmp_path, "transformers<4.30\n", {"train.py": SCALER}, "capped"), ["MP303"]) == []
    assert run(project(tmp_path, "accelerate==0.20.3\n", {"train.py": SCALER}, "acc"), ["MP303"]) == []
    assert run(project(tmp_path, "torch<2.4\n", {"train.py": SCALER}, "own"), ["MP303"]) == []


def test_mp303_reports_where_every_allowed_torch_warns(tmp_path):
    found = run(project(tmp_path, "torch>=2.4\n", {"train.py": SCALER}), ["MP303"])
    assert len(found) == 2 and all(d.fix is not None for d in found)
    # the project's own torch pin wins over the torch a transformers pin implies
    own = run(project(tmp_path, "torch>=2.4\ntransformers==4.27.1\n", {"train.py": SCALER}, "own"), ["MP303"])
    assert len(own) == 2


def test_mp303_names_the_versions_and_fixes_only_what_the_lowest_torch_has(tmp_path):
    scaler, autocast = run(project(tmp_path, "torch>=2.0\n", {"train.py": SCALER}), ["MP303"])
    assert "deprecated from torch 2.4" in scaler.message and "2.4 and later" in scaler.message
    assert scaler.fix is None and "does not exist before torch 2.3" in scaler.message
    assert autocast.fix is not None  # torch.amp.autocast exists from 1.12
    (from23,) = [d for d in run(project(tmp_path, "torch>=2.3\n", {"train.py": SCALER}, "t23"), ["MP303"]) if "GradScaler" in d.message]
    assert from23.fix is not None


# --- the range: the torch a library pin implies ------------------------------------------------
@pytest.mark.parametrize(
    "dist, spec, high",
    [
        ("transformers", "==4.27.1", (2, 1)),  # current until 4.28 (2023-04-13): torch 2.0
        ("transformers", "<4.30", (2, 1)),  # 4.29, current until 4.30 (2023-06-08): torch 2.0
        ("transformers", "<=4.36.2", (2, 2)),  # 4.36, until 4.37 (2024-01-22): torch 2.1
        ("accelerate", "==0.20.3", (2, 1)),
        ("trl", "==0.9.6", (2, 5)),  # 0.9, until 0.10 (2024-08-29): torch 2.4
    ],
)
def test_the_torch_of_a_pinned_librarys_time(dist, spec, high):
    found = implied_torch(None, {dist: parse_spec(dist, spec, "requirements.txt")})
    assert found.low is None and found.high == high and not found.high_inclusive


def test_no_cap_without_an_upper_bound_or_from_the_installed_version():
    assert implied_torch(None, {"transformers": parse_spec("transformers", ">=4.27", "requirements.txt")}) is None
    assert implied_torch(None, {"transformers": Allowed.point("transformers", (4, 27, 1), "installed")}) is None
    own = parse_spec("torch", ">=2.2", "requirements.txt")  # contradicts the cap: the pin wins
    assert implied_torch(own, {"transformers": parse_spec("transformers", "==4.27.1", "requirements.txt")}) == own


def test_conda_pytorch_is_torch(tmp_path):
    root = write_tree(tmp_path, {".git/HEAD": "", "environment.yml": "dependencies:\n  - pytorch=2.1\n  - pip:\n    - transformers==4.36.2\n", "train.py": ""})
    torch = VersionResolver().targets(str(root / "train.py")).of("torch")
    assert torch.low == (2, 1) and torch.high == (2, 2)


# --- the pins of a shell or SLURM launcher ----------------------------------------------------
RUN_SH = "#!/bin/bash\npip install torch==2.2.0 transformers==4.38.2\npython train.py --epochs 1\n"


def test_a_shell_launchers_pins_are_what_the_launched_script_and_its_imports_target(tmp_path):
    root = project(tmp_path, None, {
        "run.sh": RUN_SH,
        "train.py": "import helpers\n" + SCALER,
        "helpers.py": SCALER,
    })
    assert run(root, ["MP303"]) == []  # torch 2.2.0 warns about nothing (installed: 2.13)


def test_a_launcher_that_runs_another_script_says_nothing_about_this_one(tmp_path):
    root = project(tmp_path, None, {
        "run.sh": "pip install torch==2.2.0\npython other.py  # not train.py\n",
        "other.py": "",
        "train.py": SCALER,
    })
    assert len(run(root, ["MP303"])) == 2  # the installed torch 2.13: it warns


def test_a_slurm_script_run_from_the_repository_root(tmp_path):
    root = project(tmp_path, None, {
        "slurm/train.sbatch": "#!/bin/bash\n#SBATCH --gres=gpu:1\npip install 'torch==2.2.2'\nsrun python src/train.py\n",
        "src/train.py": AUTOCAST,
    })
    (d,) = run(root, ["MP201"])
    assert AUTOCAST_ERROR in d.message and "train.sbatch, which runs it" in d.message
