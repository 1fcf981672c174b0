"""Launches that run a script from the folder a ``cd`` moved to, and a notebook's ``!python`` lines.

A Kaggle/Colab notebook in ``notebooks/`` that runs ``%cd ../code`` and then ``!python run.py
--fp16`` is the run its script is written for, as a shell launcher's command is: the options it
passes are what the script's run gets (``ShippedFiles.launches_for``). Before, a notebook's
lines were never read as launches, and ``run.py`` written after a ``cd`` was taken as the file
of the launcher's own folder (47c's note: ``!python ../code/run.py --fp16 false`` in an
experiment's notebook). A ``cd`` whose folder is not known (``cd $ROOT``, ``%cd /content/repo``)
leaves the script as written, named from wherever it runs."""
import json
import os

from conftest import findings_in, write_tree

from precision_lint.workspace.launches import launches
from precision_lint.workspace.shipped import ShippedFiles

# fp16 weights whose loss scaling is switched on by --fp16 (MP101: the unscale error)
SCRIPT = """\
import argparse
import torch

p = argparse.ArgumentParser()
p.add_argument("--fp16", action="store_true")
args = p.parse_args()
model = torch.nn.Linear(4, 4).half()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda", enabled=args.fp16)
x = torch.randn(2, 4, device="cuda", dtype=torch.float16)
with torch.autocast("cuda", dtype=torch.float16, enabled=args.fp16):
    loss = model(x).sum()
scaler.scale(loss).backward()
scaler.step(opt)
scaler.update()
"""


def notebook(*lines: str) -> str:
    cell = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": [f"{line}\n" for line in lines]}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def folders(text: str):
    return [(launch.script, launch.folder) for launch in launches(text)]


# --- the folder each command runs in ---------------------------------------------------------------


def test_cd_moves_the_commands_after_it():
    assert folders("cd ../code\npython run.py\npython two.py") == [("run.py", "../code"), ("two.py", "../code")]
    assert folders("cd src && python train.py --bf16") == [("train.py", "src")]
    assert folders("cd .. && cd ./scripts/\npython x.py") == [("x.py", "../scripts")]


def test_commands_after_a_semicolon_are_launches():
    # `source activate env; python train.py --fp16` was one command, never a launch
    assert [(l.script, l.args) for l in launches("source activate env; python train.py --fp16")] == [("train.py", ("--fp16",))]
    assert folders("cd ..; cd ./scripts/\npython x.py") == [("x.py", "../scripts")]


def test_pushd_and_popd_come_back():
    assert folders("pushd sub\npython a.py\npopd\npython b.py") == [("a.py", "sub"), ("b.py", "")]


def test_a_folder_not_known_leaves_the_script_as_written():
    for move in ("cd $ROOT/src", "cd /content/repo", "cd", "cd ~", "cd -", "%cd /kaggle/working/proj"):
        assert folders(f"{move}\npython train.py") == [("train.py", "")], move
    assert folders("cd $ROOT\ncd src\npython train.py") == [("train.py", "")]  # below an unknown one: unknown


def test_a_notebook_bang_line_moves_only_itself():
    text = "!cd src && python a.py\n!python b.py\n%cd ../code\n!python c.py\n!python d.py"
    assert folders(text) == [("a.py", "src"), ("b.py", ""), ("c.py", "../code"), ("d.py", "../code")]


# --- which file such a launch runs ------------------------------------------------------------------


def test_a_shell_launcher_beside_runs_the_script_it_moved_to(tmp_path):
    root = write_tree(tmp_path / "p", {
        ".git/HEAD": "", "code/run.py": SCRIPT, "exp/go.sh": "cd ../code\npython run.py --fp16\n",
        "other/run.py": SCRIPT,
    })
    shipped = ShippedFiles(str(root))
    [(launcher, launch)] = shipped.launches_for(str(root / "code" / "run.py"))
    assert os.path.basename(launcher) == "go.sh" and launch.args == ("--fp16",)
    assert shipped.launches_for(str(root / "other" / "run.py")) == []  # the same name elsewhere: not it


def test_a_notebook_runs_the_script_after_its_cd(tmp_path):
    root = write_tree(tmp_path / "p", {
        ".git/HEAD": "", "code/run.py": SCRIPT,
        "notebooks/train.ipynb": notebook("!pip install torch", "%cd ../code", "!python run.py --fp16"),
    })
    [(launcher, launch)] = ShippedFiles(str(root)).launches_for(str(root / "code" / "run.py"))
    assert launcher.endswith("train.ipynb") and launch.args == ("--fp16",) and launch.folder == "../code"


def test_a_notebook_that_clones_first_names_the_script_from_the_clone(tmp_path):
    # `%cd repo` into the clone it makes: no such folder here, the notebook's own project is the clone
    root = write_tree(tmp_path / "p", {
        ".git/HEAD": "", "run.py": SCRIPT,
        "colab.ipynb": notebook("!git clone https://example.invalid/repo", "%cd repo", "!python run.py --fp16"),
    })
    [(_, launch)] = ShippedFiles(str(root)).launches_for(str(root / "run.py"))
    assert launch.args == ("--fp16",)


# --- what the rules read from it --------------------------------------------------------------------


def mp101(root, where="."):
    return [os.path.relpath(d.path, root).replace(os.sep, "/") for d in findings_in(root / where, ("MP101",))]


def test_the_notebook_launch_switches_loss_scaling_on(tmp_path):
    root = write_tree(tmp_path / "p", {
        ".git/HEAD": "", "code/run.py": SCRIPT,
        "notebooks/train.ipynb": notebook("%cd ../code", "!python run.py --fp16"),
    })
    assert mp101(root) == ["code/run.py"]  # the notebook linted with the script
    assert mp101(root, "code") == ["code/run.py"]  # the script alone, its notebook beside


def test_a_notebook_launch_without_the_switch_scales_nothing(tmp_path):
    # the only shipped run leaves --fp16 out: the GradScaler is disabled there (a run by hand
    # that passes --fp16 is the user's own choice)
    root = write_tree(tmp_path / "p", {
        ".git/HEAD": "", "code/run.py": SCRIPT,
        "notebooks/train.ipynb": notebook("%cd ../code", "!python run.py"),
    })
    assert mp101(root) == []
    assert mp101(root, "code") == []


# --- how far up the folders beside the code are read ------------------------------------------------
DEEP = {"src/code/run.py": SCRIPT, "exp/go.sh": "cd ../src/code\npython run.py --fp16\n"}


def test_a_launcher_beside_the_code_s_grandparent_is_read_in_a_marked_project(tmp_path):
    """`exp/go.sh` in the repository's root runs `src/code/run.py`: two folders above the script,
    inside the project its `.git` marks, a folder beside the code's own is the project's."""
    root = write_tree(tmp_path / "p", {".git/HEAD": "", **DEEP})
    [(launcher, launch)] = ShippedFiles(str(root)).launches_for(str(root / "src" / "code" / "run.py"))
    assert os.path.basename(launcher) == "go.sh" and launch.args == ("--fp16",)


def test_without_a_root_marker_the_folders_above_the_code_are_not_read(tmp_path):
    """With no marker up the way, and the check run from elsewhere, the folders above the script
    may hold other projects (a downloads folder, a test run's thousands of temporary trees, each
    of which a check used to list and read): there only their launch folders are read, and
    `exp/go.sh` beside the code is not. A check run from the project's folder reads it as the
    project's root, as a marker says (47c's `exp/` beside `code/`)."""
    root = write_tree(tmp_path / "p", DEEP)
    assert ShippedFiles().launches_for(str(root / "src" / "code" / "run.py")) == []
    [(launcher, _)] = ShippedFiles(str(root)).launches_for(str(root / "src" / "code" / "run.py"))
    assert os.path.basename(launcher) == "go.sh"
    near = write_tree(tmp_path / "q", {"code/run.py": SCRIPT, "exp/go.sh": "cd ../code\npython run.py --fp16\n"})
    assert ShippedFiles().launches_for(str(near / "code" / "run.py")) == []
    [(launcher, _)] = ShippedFiles(str(near)).launches_for(str(near / "code" / "run.py"))
    assert os.path.basename(launcher) == "go.sh"
