"""A job's YAML launches its script as a shell script does.

An AzureML command job writes its launch as the job's ``command:``, often as a folded block
(``command: >`` and the words on the lines below it, joined by spaces); SkyPilot's ``run: |``
and a workflow step's ``run:`` are shell lines. The options such a command passes are the run
the project ships, as a ``run.sh``'s are (review 22b's miss: a ``--bf16 True`` job on a
cluster the README states as V100s, silent because the YAML was never read as a launcher).
The YAML stays a configuration file for where its own findings stand."""
import os

import pytest
from conftest import findings_in, write_tree

from precision_lint.workspace.hardware import compute_capabilities
from precision_lint.workspace.launches import command_end, commands, launches

SFT = """\
from dataclasses import dataclass, field

from transformers import HfArgumentParser, Trainer, TrainingArguments


@dataclass
class Opts:
    model_path: str = field(default="base")


def run():
    opts, targs = HfArgumentParser((Opts, TrainingArguments)).parse_args_into_dataclasses()
    Trainer(model=None, args=targs).train()


if __name__ == "__main__":
    run()
"""
FOLDED_JOB = """\
type: command
code: ./
command: >
  accelerate launch
  --num_processes 4
  sft.py
  --model_path ${{inputs.base}}
  --bf16 True
compute: azureml:gpu-cluster
"""
README_V100 = "# SFT job\n\nRuns on 2 nodes with 2 NVIDIA V100 (16 GB) each.\n"


def test_a_folded_block_is_one_command_from_its_first_line_to_its_last():
    assert commands(FOLDED_JOB) == [
        (1, "type: command"),
        (2, "code: ./"),
        (4, "accelerate launch --num_processes 4 sft.py --model_path ${{inputs.base}} --bf16 True "),
        (9, "compute: azureml:gpu-cluster"),
    ]
    assert command_end(FOLDED_JOB, 4) == 8
    (launch,) = launches(FOLDED_JOB)
    assert (launch.script, launch.launcher, launch.line) == ("sft.py", "accelerate", 4)
    assert launch.launcher_args == ("--num_processes", "4")
    assert launch.args == ("--model_path", "${{inputs.base}}", "--bf16", "True")


def test_a_folded_block_ends_at_a_line_no_deeper_than_its_key_and_keeps_its_separators():
    text = "steps:\n  - cmd: >-\n      pip install -r req.txt &&\n\n      python train.py --fp16\n  - name: next\n"
    assert commands(text)[1:4] == [(3, "pip install -r req.txt"), (3, "python train.py --fp16 "), (6, "  - name: next")]
    assert command_end(text, 3) == 5


def test_shell_lines_and_continuations_are_read_as_before():
    text = "run: |\n  python a.py \\\n    --x 1\n  echo done > log.txt\n"
    assert commands(text) == [(1, "run: |"), (2, "  python a.py      --x 1"), (4, "  echo done > log.txt")]
    assert command_end(text, 2) == 3
    assert command_end(text, 4) == 4


def _mp201(root):
    return [(d.code, os.path.basename(d.path), d.message) for d in findings_in(root, ["MP201", "MP102"])]


def test_a_job_yaml_passes_its_options_to_the_script_it_launches(tmp_path):
    root = write_tree(tmp_path / "job", {".git/HEAD": "", "README.md": README_V100, "sft.py": SFT, "job.yml": FOLDED_JOB})
    ((code, path, message),) = _mp201(root)
    assert (code, path) == ("MP201", "sft.py")
    assert "`--bf16` (passed by job.yml (line 8)" in message
    # the same command in a shell script: the same finding
    shell = write_tree(tmp_path / "sh", {
        ".git/HEAD": "", "README.md": README_V100, "sft.py": SFT,
        "run.sh": "accelerate launch --num_processes 4 sft.py --model_path base --bf16 True\n",
    })
    ((code, _, message),) = _mp201(shell)
    assert code == "MP201" and "`--bf16` (passed by run.sh (line 1)" in message


def test_a_yaml_that_launches_nothing_passes_nothing(tmp_path):
    config = "model_path: base\nbf16: true\nnotes: >\n  trained with sft.py\n  on the cluster\n"
    root = write_tree(tmp_path, {".git/HEAD": "", "README.md": README_V100, "sft.py": SFT, "train.yml": config})
    assert _mp201(root) == []


TRL_SFT = """\
from transformers import AutoTokenizer
from trl import SFTConfig, SFTTrainer

tok = AutoTokenizer.from_pretrained("m")
SFTTrainer(model="m", args=SFTConfig(output_dir="o", fp16=True), tokenizer=tok).train()
"""


def test_the_build_context_of_a_job_is_the_runs_environment(tmp_path):
    """An AzureML job builds its environment from a folder (`build: path: ./docker-context`):
    the requirements installed there are the pins of the script its command runs."""
    job = "type: command\ncode: ./\ncommand: python sft.py\nenvironment:\n  build:\n    path: ./docker-context\n"
    files = {
        ".git/HEAD": "", "sft.py": TRL_SFT, "job.yml": job,
        "docker-context/requirements.txt": "transformers==4.46.3\ntrl==0.13.0\n",
        "docker-context/Dockerfile": "FROM base\nCOPY requirements.txt .\nRUN pip install -r requirements.txt\n",
    }
    (finding,) = findings_in(write_tree(tmp_path / "job", files), ["MP301"])
    assert "deprecated since TRL 0.13" in finding.message
    assert "(trl==0.13.0 in requirements.txt in the build context ./docker-context of job.yml, which runs it)" in finding.message
    # TRL 0.12.x renames the keyword without a word (review 22b's jobs): nothing to say there
    files["docker-context/requirements.txt"] = "transformers==4.46.3\ntrl==0.12.1\n"
    assert findings_in(write_tree(tmp_path / "job012", files), ["MP301"]) == []
    # a Dockerfile's own `pip install` lines count as well
    files["docker-context/requirements.txt"] = "datasets\n"
    files["docker-context/Dockerfile"] = "FROM base\nRUN pip install trl==0.13.0 transformers==4.46.3\n"
    (finding,) = findings_in(write_tree(tmp_path / "dockerfile", files), ["MP301"])
    assert "deprecated since TRL 0.13" in finding.message and "Dockerfile (the build context ./docker-context" in finding.message
    # without the job, the script is unpinned: the newest TRL has no `tokenizer=`
    del files["job.yml"]
    (finding,) = findings_in(write_tree(tmp_path / "alone", files), ["MP301"])
    assert "was removed in TRL 0.16" in finding.message


def test_a_pin_several_runs_share_is_written_once():
    from precision_lint.workspace.versions import parse_spec

    a, b = parse_spec("trl", "==0.12.1", "one.yml"), parse_spec("trl", "==0.12.1", "two.yml")
    assert a.hull(b).described == "trl==0.12.1"
    assert a.hull(parse_spec("trl", "==0.13.0", "three.yml")).described == "trl==0.12.1 or trl==0.13.0"


@pytest.mark.parametrize(
    "line, expected",
    [
        ("compute: azureml:nc40h100", [90]),  # an AzureML cluster named for its GPU
        ("compute: azureml:gpu-cluster-t4", [75]),
        ("instance_type: ml.g4dn.xlarge", [75]),  # SageMaker
        ("machine_type: a2-highgpu-1g", [80]),  # Google Cloud
        ("accelerator: nvidia-tesla-v100", [70]),
        ("compute: azureml:cpu-cluster", []),
        ("compute: gpt4-endpoint", []),  # "t4" inside a longer word names no GPU
        ("description: runs on nc40h100 later", []),  # not a compute key
    ],
)
def test_the_machine_a_job_requests_names_its_gpu(line, expected):
    assert compute_capabilities(f"type: command\n{line}\n") == expected


def test_a_job_on_an_h100_cluster_runs_its_bf16_natively(tmp_path):
    job = FOLDED_JOB.replace("azureml:gpu-cluster", "azureml:nc40h100")
    root = write_tree(tmp_path / "h100", {".git/HEAD": "", "sft.py": SFT, "job.yml": job})
    assert _mp201(root) == []
    t4 = write_tree(tmp_path / "t4", {".git/HEAD": "", "sft.py": SFT, "job.yml": FOLDED_JOB.replace("azureml:gpu-cluster", "azureml:nc-t4-cluster")})
    ((code, _, message),) = _mp201(t4)
    assert code == "MP201" and "sm75" in message
