"""A shipped launch command's option values are the run the code targets (project/options.py).

``train.py`` reads ``--torch_dtype`` (a dataclass field defaulting to "float16") and the
``TrainingArguments`` switches through ``HfArgumentParser``; ``scripts/run_sft.sh`` runs it.
What every shipped launch passes is the shipped run's value; the default stays possible only as
the user's own choice (a run by hand). A switch a launch passes is on in that run."""
import pytest

from conftest import write_tree
from precision_lint.engine import Engine
from precision_lint.project.configurations import alongside
from precision_lint.project.options import BY_HAND, as_launched, launch_choice
from precision_lint.semantic.values import CONST, Guard, Possible
from precision_lint.workspace.config import from_table
from precision_lint.workspace.launches import launches, passed_options
from precision_lint.workspace.shipped import ShippedFiles

TRAIN = """
from dataclasses import dataclass, field

import torch
from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments


@dataclass
class ModelArguments:
    model_name: str = field(default="gpt2")
    torch_dtype: str = field(default="float16")


def main():
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    dtype = getattr(torch, model_args.torch_dtype)
    model = AutoModelForCausalLM.from_pretrained(model_args.model_name, torch_dtype=dtype)
    Trainer(model=model, args=training_args).train()


if __name__ == "__main__":
    main()
"""


def launcher(*args: str, script: str = "train.py") -> str:
    return "#!/bin/bash\ntorchrun --nproc_per_node 2 " + script + " \\\n    " + " \\\n    ".join(args) + "\n"


def run(root, codes):
    cfg = from_table({}, "defaults")
    found = Engine(cfg, list(codes), jobs=1).run_paths([str(root)]).diagnostics
    return sorted(found, key=lambda d: (d.path, d.span.start))


def project(tmp_path, files):
    return write_tree(tmp_path / "p", {".git/HEAD": "", "train.py": TRAIN, **files})


# --- MP101 -----------------------------------------------------------------------------------
def test_without_a_launcher_the_float16_default_under_the_users_fp16_is_reported(tmp_path):
    (d,) = run(project(tmp_path, {}), ["MP101"])
    assert "`--fp16` (a command-line switch of the `TrainingArguments` that the parser fills)" in d.message
    assert "run_sft.sh" not in d.message


def test_a_launcher_of_another_script_changes_nothing(tmp_path):
    root = project(tmp_path, {"scripts/run_sft.sh": launcher("--torch_dtype bfloat16", "--bf16", script="other.py")})
    (d,) = run(root, ["MP101"])
    assert "a command-line switch" in d.message


def test_a_shipped_bfloat16_and_bf16_run_does_not_crash(tmp_path):
    root = project(tmp_path, {"scripts/run_sft.sh": launcher("--torch_dtype bfloat16", "--bf16", "--output_dir out")})
    assert run(root, ["MP101"]) == []


def test_the_equals_spelling_and_dashes_are_the_same_option(tmp_path):
    root = project(tmp_path, {"scripts/run_sft.sh": launcher("--torch-dtype=bfloat16", "--bf16")})
    assert run(root, ["MP101"]) == []


def test_a_shipped_fp16_switch_with_the_float16_default_is_reported_naming_the_launcher(tmp_path):
    root = project(tmp_path, {"scripts/run_sft.sh": launcher("--fp16", "--output_dir out")})
    (d,) = run(root, ["MP101"])
    assert "`--fp16` (passed by scripts/run_sft.sh (line 3) to the `TrainingArguments`" in d.message
    assert any(r.path.endswith("run_sft.sh") and r.span.line == 3 for r in d.related)


def test_a_shipped_float16_is_the_runs_even_where_the_default_is_bfloat16(tmp_path):
    root = project(tmp_path, {
        "train.py": TRAIN.replace('default="float16"', 'default="bfloat16"'),
        "scripts/run_sft.sh": launcher("--torch_dtype float16", "--fp16"),
    })
    (d,) = run(root, ["MP101"])
    assert "passed by scripts/run_sft.sh" in d.message


def test_one_launch_leaving_the_dtype_out_runs_the_float16_default(tmp_path):
    root = project(tmp_path, {
        "scripts/run_sft.sh": launcher("--torch_dtype bfloat16", "--bf16"),
        "scripts/run_fp16.sh": launcher("--fp16"),
    })
    (d,) = run(root, ["MP101"])
    assert "run_fp16.sh" in d.message


def test_a_dtype_from_a_shell_variable_is_not_known(tmp_path):
    # every shipped launch picks the dtype from $DTYPE: the float16 default is a run by hand,
    # and the shipped run's --fp16 alone does not make float16 weights
    root = project(tmp_path, {"scripts/run_sft.sh": launcher("--torch_dtype $DTYPE")})
    assert run(root, ["MP101"]) == []


# --- MP201 -----------------------------------------------------------------------------------
def test_a_shipped_bf16_switch_is_judged_as_the_runs_own_naming_the_launcher(tmp_path):
    root = project(tmp_path, {"scripts/run_sft.sh": launcher("--torch_dtype bfloat16", "--bf16")})
    found = run(root, ["MP201"])
    flag = [d for d in found if d.message.startswith("`--bf16`")]
    assert len(flag) == 1 and "passed by scripts/run_sft.sh (line 4)" in flag[0].message
    weights = [d for d in found if "makes the weights bf16" in d.message]
    assert len(weights) == 1 and "the bfloat16 is passed by scripts/run_sft.sh (line 3)" in weights[0].message


def test_the_users_own_bf16_switch_stays_an_opt_in(tmp_path):
    assert run(project(tmp_path, {}), ["MP201"]) == []


def test_a_launcher_that_requests_an_a100_runs_bf16_natively(tmp_path):
    sh = "#!/bin/bash\n#SBATCH --gres=gpu:a100:2\n" + launcher("--torch_dtype bfloat16", "--bf16").split("\n", 1)[1]
    assert run(project(tmp_path, {"scripts/run_sft.sh": sh}), ["MP201"]) == []


# --- the parts ----------------------------------------------------------------------------------
def test_passed_options():
    (launch,) = launches("accelerate launch --num_processes 2 train.py --a 1 --b-c=x --flag --d $D pos --e\n")
    assert passed_options(launch.args) == {"a": "1", "b_c": "x", "flag": "", "d": None, "e": ""}


def test_bool_fields_take_true_and_false_words(tmp_path):
    root = write_tree(tmp_path, {
        "train.py": "",
        "run.sh": "python train.py --use_peft True --packing false --lr 2\n",
    })
    shipped = ShippedFiles()
    script = str(root / "train.py")
    off = Possible(CONST, False, option="use_peft")
    (on, by_hand) = as_launched((off,), shipped, lambda v: script)
    assert (on.value, on.guards, on.where.endswith("run.sh"), on.origin.line) == (True, (), True, 1)
    assert by_hand.value is False and any(g.user_choice for g in by_hand.guards)
    (packing, _) = as_launched((Possible(CONST, True, option="packing"),), shipped, lambda v: script)
    assert packing.value is False
    (lr, _) = as_launched((Possible(CONST, 1, option="lr"),), shipped, lambda v: script)
    assert lr.value == 2
    # an option the launch does not pass: its default in that launch, and the same by hand
    untouched = Possible(CONST, 8, guards=(Guard("x", True, False, False),), option="batch")
    (launched, hand) = as_launched((untouched,), shipped, lambda v: script)
    assert (launched.value, launched.guards, hand.value, hand.guards) == (8, untouched.guards, 8, untouched.guards)
    assert launched.chosen[0] == hand.chosen[0] == launch_choice(script)
    assert launched.chosen[1].endswith("run.sh:1") and hand.chosen[1] == BY_HAND
    # no shipped launch runs the script: its values as they are
    assert as_launched((untouched,), shipped, lambda v: str(root / "other.py")) == (Possible(CONST, 8, guards=untouched.guards),)


def test_each_launch_is_a_configuration_of_its_own(tmp_path):
    """The values two launches of one script pass never hold together, nor with a run by
    hand; the values one launch passes hold with the defaults of what it does not pass."""
    root = write_tree(tmp_path, {
        "train.py": "",
        "full.sh": "torchrun train.py --fp16\n",
        "ptune.sh": "torchrun train.py --pre_seq_len 128\n",
    })
    shipped = ShippedFiles()
    script = str(root / "train.py")
    fp16 = as_launched((Possible(CONST, False, option="fp16"),), shipped, lambda v: script)
    seq = as_launched((Possible(CONST, None, option="pre_seq_len"),), shipped, lambda v: script)
    (on,) = [v for v in fp16 if v.value is True]
    with_fp16 = alongside(seq, on)
    assert [v.value for v in with_fp16] == [None]  # full.sh passes no --pre_seq_len
    (tuned,) = [v for v in seq if v.value == "128"]
    assert [v.value for v in alongside(fp16, tuned)] == [False]  # ptune.sh passes no --fp16


# --- MP102 -----------------------------------------------------------------------------------
def test_a_launcher_passing_bf16_does_not_conflict_with_the_users_fp16_switch(tmp_path):
    """The shipped command passes only ``--bf16``; both are on only if the user adds ``--fp16``
    to it by hand, which the TrainingArguments refuse at once: the user's choice, not a bug."""
    root = project(tmp_path, {"scripts/run_sft.sh": launcher("--torch_dtype bfloat16", "--bf16")})
    assert run(root, ["MP102"]) == []


def test_a_launcher_passing_both_fp16_and_bf16_is_reported_naming_it(tmp_path):
    root = project(tmp_path, {"scripts/run_sft.sh": launcher("--fp16", "--bf16")})
    (d,) = run(root, ["MP102"])
    assert "both can be True (as scripts/run_sft.sh (line" in d.message


def test_two_launchers_each_passing_one_flag_are_two_runs(tmp_path):
    root = project(
        tmp_path,
        {"scripts/run_fp16.sh": launcher("--fp16"), "scripts/run_bf16.sh": launcher("--torch_dtype bfloat16", "--bf16")},
    )
    assert run(root, ["MP102"]) == []


def test_two_launches_in_one_launcher_each_passing_one_flag_are_two_runs(tmp_path):
    """One script, two commands: the first passes ``--fp16``, the second ``--bf16`` (review 23f)."""
    both = launcher("--fp16") + launcher("--torch_dtype bfloat16", "--bf16").replace("#!/bin/bash\n", "")
    assert run(project(tmp_path, {"scripts/go.sh": both}), ["MP102"]) == []
    one = launcher("--fp16", "--bf16") + launcher("--fp16").replace("#!/bin/bash\n", "")
    (d,) = run(project(tmp_path / "one", {"scripts/go.sh": one}), ["MP102"])
    assert "both can be True (as scripts/go.sh (line 3)" in d.message  # where its --fp16 is


@pytest.mark.parametrize("folder, found", [
    ("jobs_local", 1), ("slurm-jobs", 1), ("run_scripts", 1), ("scripts_v2", 1), ("scripts", 1),
    ("bash", 1), ("shell", 1),  # `bash/train.sh` run from the repository's root (review 24c)
    ("data", 0), ("transcripts", 0), ("bashrc", 0),  # not a launch folder: its shell files are not read as launches
])
def test_a_launch_folder_is_known_by_its_name_with_a_qualifier(tmp_path, folder, found):
    """``jobs_local/train_kto.sh`` is a launch folder's launcher as ``jobs/`` is (review 23h)."""
    root = project(tmp_path, {f"{folder}/run.sh": launcher("--fp16", "--bf16")})
    assert len(run(root, ["MP102"])) == found
