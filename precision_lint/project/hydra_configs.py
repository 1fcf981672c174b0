"""Which config tables a Hydra app builds: the ``_target_`` tables of its configuration.

A Hydra app (``@hydra.main(config_path="configs", config_name="config")``) composes its
configuration from the YAML files of its config folder: the primary ``config.yaml`` and the
config groups its ``defaults:`` list names, in the folders below it, and the folders the primary
config adds to the search path (``hydra: searchpath: [pkg://clip_tuner/configs]``, a package's
folder; ``file://conf``, a folder). ``hydra.utils.instantiate`` builds each table that holds a
``_target_`` (and, recursively, those below it) by calling that class with the table's other
keys as keywords: ``_target_: transformers.TrainingArguments`` beside ``overwrite_output_dir:
true`` raises ``TypeError: TrainingArguments.__init__() got an unexpected keyword argument
'overwrite_output_dir'`` on transformers 5. Which option of a group a run takes is chosen on the
command line (``trainer/args=fast``): every file of those folders is a configuration the app runs
with.
"""
from __future__ import annotations

import os
from typing import List, Tuple

from ..facts.model import ModuleFacts

# how many entries of `hydra.searchpath` are read
_MAX_SEARCH_PATHS = 16


def built_tables(project, module: ModuleFacts, main) -> List[Tuple[str, Tuple[str, ...], str]]:
    """(the file, the keys of the table in it, the class its ``_target_`` names) for each table
    the Hydra app ``main`` (``facts.extractors.migrations.HydraMain``) of ``module`` can build."""
    configs = project.configs
    out = []
    for path in config_files(project, module, main):
        for keys, target in configs.targets(module.path, path):
            if "${" not in target:  # an interpolation: decided when the run resolves it
                out.append((path, keys, target))
    return out


def config_files(project, module: ModuleFacts, main) -> List[str]:
    """The YAML files the app's configuration is composed from (absolute paths, each once)."""
    if main.config_path is None:
        return []  # no config folder: the config is the command line's alone
    configs = project.configs
    here = os.path.dirname(os.path.abspath(module.path))
    base = os.path.normpath(os.path.join(here, main.config_path))
    if not os.path.isdir(base):
        return []
    folders = [base]
    if main.config_name:
        primary = os.path.join(base, main.config_name if main.config_name.endswith((".yaml", ".yml")) else f"{main.config_name}.yaml")
        for at in range(_MAX_SEARCH_PATHS):
            entry = configs.lookup(module.path, primary, ("hydra", "searchpath", at))
            if entry is None:
                break
            if isinstance(entry.value, str):
                folders.extend(_search_folders(project, module, entry.value, here))
    seen, out = set(), []
    for folder in folders:
        for path in configs.files_under(folder):
            if path not in seen:
                seen.add(path)
                out.append(path)
    return out


def _search_folders(project, module: ModuleFacts, entry: str, here: str) -> List[str]:
    """The folders a ``hydra.searchpath`` entry names: ``pkg://pkg/configs`` (or
    ``pkg://pkg.configs``) under the module's import roots, ``file://conf`` from the module's
    folder or the working folder."""
    scheme, _, rest = entry.partition("://")
    if not rest:
        return []
    if scheme == "pkg":
        package, _, below = rest.partition("/")
        parts = [*package.split("."), *(p for p in below.split("/") if p)]
        bases = [os.path.abspath(root) for root in project.import_roots_of(module)]
    elif scheme == "file":
        parts = [rest]
        bases = [here, project.configs.cwd]
    else:
        return []
    found = [os.path.normpath(os.path.join(base, *parts)) for base in bases]
    return [folder for folder in dict.fromkeys(found) if os.path.isdir(folder)]
