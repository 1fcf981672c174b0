"""MP302/MP304 for the keys of the tables a Hydra app builds (``project/hydra_configs.py``).

``hydra.utils.instantiate(cfg.training_args)`` calls the class a table's ``_target_`` names
with the table's other keys as keywords: ``overwrite_output_dir: true`` under ``_target_:
transformers.TrainingArguments`` raises ``TypeError: TrainingArguments.__init__() got an
unexpected keyword argument 'overwrite_output_dir'`` on transformers 5 before anything runs
(review 28a's fine-tune-clip). Each test is a small app of that shape."""
import os

import pytest
from conftest import check_folder, findings_in, write_tree

APP = """
import hydra
from hydra.utils import instantiate


@hydra.main(version_base=None, config_path="configs", config_name="config")
def main(cfg):
    args = instantiate(cfg.training_args)
    print(args.output_dir)


if __name__ == "__main__":
    main()
"""
CONFIG = """
training_args:
  _target_: transformers.TrainingArguments
  output_dir: outputs
  overwrite_output_dir: true
  eval_strategy: epoch
"""


def _found(root):
    return sorted(
        (os.path.relpath(d.path, root).replace(os.sep, "/"), d.span.line, d.code)
        for d in findings_in(root) if d.code in ("MP302", "MP304")
    )


def test_a_removed_key_of_a_target_table_is_reported_where_it_is_written(tmp_path):
    write_tree(tmp_path, {"requirements.txt": "transformers==5.2.0\nhydra-core==1.3.2\n", "train.py": APP, "configs/config.yaml": CONFIG})
    assert _found(tmp_path) == [("configs/config.yaml", 4, "MP302")]
    (d,) = [d for d in findings_in(tmp_path) if d.code == "MP302"]
    assert "train.py builds the `training_args` table of this file as `TrainingArguments`" in d.message
    assert "got an unexpected keyword argument 'overwrite_output_dir'" in d.message
    assert [r.path.endswith("train.py") for r in d.related] == [True]


def test_the_same_key_on_a_version_that_still_takes_it_is_none(tmp_path):
    write_tree(tmp_path, {"requirements.txt": "transformers==4.57.1\n", "train.py": APP, "configs/config.yaml": CONFIG})
    assert _found(tmp_path) == []


def test_an_app_that_builds_nothing_reads_values_only(tmp_path):
    """No ``instantiate``: the tables are values the code reads, no class is called with them."""
    write_tree(tmp_path, {
        "requirements.txt": "transformers==5.2.0\n",
        "train.py": APP.replace("from hydra.utils import instantiate\n", "").replace("instantiate(cfg.training_args)", "cfg.training_args"),
        "configs/config.yaml": CONFIG,
    })
    assert _found(tmp_path) == []


GROUP_APP_CONFIG = """
defaults:
  - trainer/args: default
  - _self_
hydra:
  searchpath:
    - pkg://tuner/configs
"""
GROUP_TRAINER = """
_target_: tuner.trainer.ClipTrainer
_recursive_: true
args:
  _target_: transformers.TrainingArguments
  _partial_: false
  output_dir: out
  save_safetensors: false
  per_device_train_batch_size: 8
"""


def test_a_config_group_of_a_package_on_the_search_path(tmp_path):
    """The app's primary config adds ``pkg://tuner/configs`` to Hydra's search path; a config
    group there holds the trainer, whose ``args`` child is built first (recursively). Hydra's
    own keys (``_recursive_``, ``_partial_``) are no keywords of anything."""
    write_tree(tmp_path, {
        ".git/HEAD": "",  # the project's root: the folder a package on the search path is found in
        "requirements.txt": "transformers==5.2.0\n",
        "tuner/__init__.py": "",
        "tuner/trainer.py": "from transformers import Trainer\n\n\nclass ClipTrainer(Trainer):\n    pass\n",
        "tuner/configs/trainer/args/default.yaml": GROUP_TRAINER,
        "exps/exp1/main.py": APP.replace("cfg.training_args", "cfg.trainer"),
        "exps/exp1/configs/config.yaml": GROUP_APP_CONFIG,
    })
    assert _found(tmp_path) == [("tuner/configs/trainer/args/default.yaml", 7, "MP302")]


@pytest.mark.parametrize("target", ["${trainer_class}", "mypkg.NotALibraryClass"])
def test_a_target_no_row_is_about_is_left_alone(tmp_path, target):
    write_tree(tmp_path, {
        "requirements.txt": "transformers==5.2.0\n",
        "train.py": APP,
        "configs/config.yaml": CONFIG.replace("transformers.TrainingArguments", target),
    })
    assert _found(tmp_path) == []


def test_a_config_added_to_the_folder_is_seen_by_a_cached_check(tmp_path):
    """The config folders are side files of the run: their listing is their state."""
    root = write_tree(tmp_path / "project", {
        "requirements.txt": "transformers==5.2.0\n",
        "train.py": APP,
        "configs/config.yaml": CONFIG.replace("  overwrite_output_dir: true\n", ""),
    })
    cache = tmp_path / "cache"
    assert [code for _, code, *_ in check_folder(root, cache) if code == "MP302"] == []
    write_tree(root, {"configs/alt/config.yaml": CONFIG})
    now = check_folder(root, cache)
    assert now == check_folder(root)
    assert [code for _, code, *_ in now if code == "MP302"] == ["MP302"]
