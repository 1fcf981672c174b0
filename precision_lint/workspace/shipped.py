"""Hardware stated by the files shipped beside the code (read by MP201, MP202).

A training script's GPU is often stated outside it: the SLURM script that launches it
(``#SBATCH --gres=gpu:a100:8``, ``--partition=hopper-prod``), or the README of its folder
("tested on 8xH100 80GB"). Only files that speak about *this* module count:

- a launcher (``*.sh``, ``*.slurm``, ``*.sbatch``, a notebook) in the module's folder or up
  to two folders above it, or their ``scripts/``, ``jobs/``, ``slurm/``, ``notebooks/`` folders, that names the module's file (``python scripts/train.py``,
  ``!torchrun scripts/train.py``); a script's ``#SBATCH`` requests and comments are read, not
  its commands, a notebook's metadata and markdown cells;
- a command of such a launcher, or of a fenced shell block of a README from the module's folder
  up to the project's root, that runs the module with ``--tf32 True``: TF32 exists from Ampere
  on (``TrainingArguments`` raises below it), so that run is written for sm80+;
- the architectures the project's container builds for (``TORCH_CUDA_ARCH_LIST=8.9`` in a
  ``Dockerfile`` or compose file from the module's folder up to the project's root): kernels
  built for those run on no other GPU;
- the commands of a shell launcher that run the module and the options they pass it
  (``torchrun train.py --torch_dtype bfloat16``): :meth:`ShippedFiles.launches_for`, the
  values of the script's command-line options in the shipped run (``project/options.py``);
- the versions a launcher installs (``pip install transformers==4.30.0`` before ``python
  train.py``): :meth:`ShippedFiles.pins_for`, what the launched script and its imports target;
- a README anywhere in the project (under its root marker, else under the folder the check runs
  from) that links to the module's file (``[tune.py](../training/tune.py)``) or runs it in a
  fenced shell command: what its prose states speaks for the module (a workshop's module page
  that walks through a script in another folder);
- the nearest README that states a GPU: the module's folder's, else the one above it, up to
  the project's root ("This code has been tested up to 1024 A100s"). A folder whose README
  states a GPU is described by that one, not by the repository's; one whose README states
  none is described by the documentation pages it links to (``[Getting started](GETTING_STARTED.md)``,
  where its requirements list "A100 GPUs"), else by the README above it;
- where no README up to the project's root states one, the project's documentation: the pages
  of ``docs/`` (or ``doc/``, ``documentation/``) beside the root's ``pyproject.toml`` / ``setup.py`` / ``.git``, and
  of the folders directly in it ("We ran SFT on 1 node of 8 NVIDIA H100 GPUs"). They speak
  for the whole project as its root README does; a project without a root marker has none.
  A sub-project on the way up (a folder with its own README and its own requirements file or
  ``environment.yml``: research code that ships its own environment) has its own documentation
  too: where its README states no GPU, its ``docs/`` pages speak for the code under it before
  any README above it ("results ... on a 8xA100 machine" in ``<sub-project>/docs/evaluation.md``).
  Each folder's documentation is read once, and only for a folder the walk reaches.

A module whose file is not on disk (an editor's buffer, standard input) has no neighbours.
Every file looked at is reported as a side file of the run, so a cached result is used only
while they are unchanged.
"""
from __future__ import annotations

import functools
import os
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

if TYPE_CHECKING:  # pragma: no cover
    from .launches import Launch
    from .versions import Allowed

from .._regex import lazy
from .hardware import (
    NATIVE_BF16, advised_switches, compute_capabilities, markdown_prose, names_an_apple_machine, notebook_capability, notebook_markdown, notebook_outputs, recorded_gpus,
    space_card_hardware, stated_in_text, summarise,
)

LAUNCH_SUFFIXES = (".sh", ".slurm", ".sbatch", ".bash", ".ipynb")
# The records of a project's runs: the files of its log folders, a committed W&B run's metadata
_RUN_LOG_FOLDER = lazy(r"^(?:logs?(?:[_-]\w+)?|outputs?|runs|reports?|experiments?)$", re.IGNORECASE)
_LOG_SUFFIXES = (".log", ".out", ".txt")
# the experiment logs a project writes by hand in its report folders (`reports/experiment_log.md`:
# "- GPU: NVIDIA GeForce RTX 4070 12GB", held-out 30u); a run's output folder's Markdown is the
# text it generated, not a record of the machine
_REPORT_FOLDER = lazy(r"^(?:reports?|experiments?)$", re.IGNORECASE)
_REPORT_SUFFIXES = (*_LOG_SUFFIXES, ".md")
# the keys of a configuration's precision settings, and a note at the end of such a line
# (`bf16: true  # A100 native bfloat16`, `"mixed_precision": "bf16"` has no comment in JSON)
_PRECISION_KEYS = ("bf16", "fp16", "bfloat16", "float16", "mixed_precision", "precision", "dtype")
_PRECISION_NOTE = lazy(
    r"^[ \t]*-?[ \t]*[\"']?[\w.-]*(?:bf16|fp16|bfloat16|float16|mixed_precision|precision|dtype)[\w.-]*[\"']?[ \t]*:"
    r"[^#\n]*#([^\n]*)$",
    re.IGNORECASE | re.MULTILINE,
)
RECORDS = 50  # run records read of one project
RECORD_DEPTH = 3  # folders below the project's root looked in for its log folders
RECORD_BYTES = 256 * 1024  # read of each run record
_NOT_RECORDS = frozenset({"node_modules", "site-packages", "venv", "env", "__pycache__", "build", "dist"})
# A job's YAML runs commands too: an AzureML command job's `command:`, SkyPilot's `run:`, a
# workflow step's `run:`. It is read for launches as a shell script is, but stays a
# configuration file for where its findings stand (``is_launch_document``).
JOB_SUFFIXES = (".yml", ".yaml")
READMES = ("README.md", "README.rst", "README.txt", "README", "readme.md")
# `flash-attn>=2.5.8` (or `flash_attn`, an extra, a marker) as a line of a requirements file or a
# dependency of pyproject.toml: group 1 its version specifier
_FLASH_ATTN_LINE = lazy(r"^[ \t]*flash[-_]attn[ \t]*(?:\[[^\]]*\])?[ \t]*([^#;\n]*)", re.IGNORECASE | re.MULTILINE)
# `pip install flash-attn --no-build-isolation`, `pip install "flash_attn==2.5.8"`
_PIP_FLASH_ATTN = lazy(r"\bpip3?\s+install\b[^\n]*?(?<![\w./-])[\"']?flash[-_]attn\b([^\s\"']*)", re.IGNORECASE)
MAX_BYTES = 4 * 1024 * 1024
LEVELS = 2  # folders above the module searched for its launch scripts
# the levels whose other folders that hold a launcher are read whatever is above (the module's own
# folder's); above it, such a folder (``exp/run.sh`` beside the module's ``code/``) is read only where
# a root marker, or the folder the check runs from, at or above that level says it is the project's
BESIDE_LEVELS = 0
README_LEVELS = 6  # folders above the module searched for its README
# another README of a folder: `README_TRAINING.md`, `README-zh.md`, `readme.ja.md`
_OTHER_README = lazy(r"readme[-_.][^/\\]*\.(?:md|rst|txt)$", re.IGNORECASE)
PROJECT_ROOT = (".git", "pyproject.toml", "setup.py", "setup.cfg")
# and these folders of each, with the folders directly in them (`scripts/train/run.sh`)
# (`notebooks/`: the Colab notebook that clones the project and runs `!python train.py`, its
# metadata's `gpuType` the run's GPU)
LAUNCH_FOLDERS = ("scripts", "jobs", "slurm", "launch", "launchers", "notebooks", "notebook", "bash", "shell", "sh")
# a launch folder's name: one of them, alone or with a qualifier before or after it
# (`jobs_local`, `slurm-jobs`, `run_scripts`, `scripts_v2`)
_LAUNCH_FOLDER = lazy(r"^(?:[A-Za-z0-9]+[_-])?(?:" + "|".join(LAUNCH_FOLDERS) + r"|script|job)(?:[_-][A-Za-z0-9]+)?$", re.IGNORECASE)
DOCS_FOLDERS = ("docs", "doc", "documentation")  # a project's documentation, beside its root marker
DOCS_SUFFIXES = (".md", ".mdx", ".rst")
DOCS_MAX_PAGES = 200  # pages read of one project's documentation (a site's thousands are not)
PROJECT_READMES = 300  # READMEs of one project read for the files they link to or run
LINKED_PAGES = 20  # documentation pages read of those one README links to
CONFIG_SUFFIXES = (".json", ".yaml", ".yml")  # the configuration files a parser may be given
CONFIG_DEPTH = 3  # folders below the top one searched for them
CONFIG_MAX_FILES = 2000  # files listed per top folder (a data folder's thousands are not read)
CONFIG_MAX_BYTES = 1_000_000  # as configfiles.MAX_BYTES: larger is data, not configuration


# a Slurm job script's directive line (`#SBATCH --gres=gpu:a100:1`)
_SBATCH_LINE = lazy(r"^#SBATCH\s", re.MULTILINE)


def flash_attn_2(spec: str) -> bool:
    """Whether a version specifier of flash-attn allows only FlashAttention-2 or newer: none
    (the newest release), or one that no 1.x release meets (`==1.0.9`, `<2`, `~=1.0` name
    FlashAttention-1, which runs on Turing too)."""
    spec = spec.strip().strip("\"'")
    return not re.search(r"(?:==|~=|<=?|===)\s*v?1(?:\.|\b)|<\s*2(?:\.0)*(?![\d.])", spec)


class ShippedFiles:
    """The launch scripts and READMEs of one run, each read once."""

    def __init__(self, within: str = "") -> None:
        # the folder the check runs from: where no root marker is found above a module, the
        # project's root when the walk up from the module meets it (a checkout without `.git`)
        self._within = os.path.abspath(within) if within else ""
        self._texts: Dict[str, Optional[str]] = {}
        self._listings: Dict[str, List[str]] = {}
        self._launch_folders: Dict[str, List[str]] = {}  # a launch folder → it and the folders in it
        self._launch_parents: Dict[str, List[str]] = {}  # a folder → the launch folders in it
        self._wheres: Dict[str, List[str]] = {}  # a folder → it and its launch folders (_launch_wheres)
        self._besides: Dict[str, List[str]] = {}  # a folder → its other folders that hold a launcher
        self._beside: Set[str] = set()  # the folders of those that are beside, not launch folders
        self._launch_set: Set[str] = set()  # the launch folders among them, and the folders in those
        self._stated: Dict[Tuple[str, bool], Optional[int]] = {}
        self._advised: Dict[str, FrozenSet[str]] = {}  # folder → the switches its READMEs advise
        self._flash_attn: Dict[str, bool] = {}  # folder → whether its install takes flash-attn 2
        # README path → what it states: read once per README, not once per module beneath it
        # (every module of a package asks for the repository's README)
        self._readme_stated: Dict[str, List[int]] = {}
        self._readme_mac: Dict[str, bool] = {}  # README -> it names an Apple machine (names_a_mac)
        self._other_readmes: Dict[str, List[str]] = {}  # folder -> its README_*.md (_other_readmes_statement)
        self._readme_scoped: Dict[str, List[Tuple[List[int], Set[str]]]] = {}
        self._docs_stated: Dict[str, List[int]] = {}  # project root → what its docs/ state
        self._subprojects: Dict[str, bool] = {}  # folder → whether it ships its own environment
        self._pins: Dict[str, List["Allowed"]] = {}
        self._readme_shell: Dict[str, str] = {}  # README path → its fenced shell lines
        self._readmes: Dict[str, List[str]] = {}  # project root → its READMEs
        self._notebooks: Dict[str, List[str]] = {}  # project root → its notebooks
        self._linked_stated: Dict[str, List[int]] = {}  # README → what the pages it links to state
        self._readme_indexes: Dict[str, Dict[str, list]] = {}  # project root → _readme_index
        self._folder_archs: Dict[str, List[int]] = {}  # folder → the TORCH_CUDA_ARCH_LIST of its container files
        self._roots: Dict[str, Tuple[List[str], Optional[str]]] = {}  # folder → _up_to_root
        self._launches: Dict[str, List[Tuple[str, "Launch"]]] = {}
        self._naming: Dict[str, List[Tuple[str, str, str]]] = {}  # path → _launchers_naming
        self._siblings: Dict[str, List[int]] = {}  # folder → _siblings_launched
        self._configs: Dict[str, List[str]] = {}  # top folder → the configuration files under it
        self._config_holds: Dict[Tuple[str, Tuple[str, ...]], bool] = {}  # (file, words) → holds one
        self._cells: Dict[str, Optional[str]] = {}  # notebook → its cells' sources (see _searched)
        self._python_folders: Dict[str, bool] = {}  # folder → holds a `.py` file (a config beside it is its code's)
        self._config_read: Dict[str, None] = {}  # configuration files read (side files of the run)
        self._recorded: Dict[str, List[int]] = {}  # project root → the GPUs its run records name
        self._notebook_recorded: Dict[Tuple[str, str], List[int]] = {}  # (root, folder) → the GPUs its notebooks' outputs name
        self._notes_by_root: Dict[str, List[int]] = {}  # project root → the GPUs its config notes name
        self._records_read: Dict[str, None] = {}  # the run records read (side files of the run)

    def looked_for(self) -> List[str]:
        return [*self._texts, *self._cells, *self._config_read, *self._records_read]

    def _read(self, path: str) -> Optional[str]:
        if path not in self._texts:
            self._texts[path] = _file_text(path)
        return self._texts[path]

    def _searched(self, path: str) -> Optional[str]:
        """The text of a launcher that names the files it runs: a script's own, a notebook's
        cells (their sources, not its outputs and metadata: a notebook of plots is megabytes of
        images, and each module near it looked for its name there; the outputs of malaya-speech's
        789 notebooks are 338 MB, their cells 4.5 MB). Read once; a notebook's whole text is read
        again only where its cells name the module (:meth:`_launchers_naming`)."""
        if not path.endswith(".ipynb"):
            return self._read(path)
        if path not in self._cells:  # (a side file of the run as any file read: looked_for)
            text = _file_text(path)
            self._cells[path] = _cell_sources(text) if text is not None else None
        return self._cells[path]

    def _exactly(self, where: str, name: str, text: str, path: str) -> bool:
        """Whether a launcher may run ``path``: any of a launch folder or a folder above the
        file; one of a folder beside them only by a path from there that is the file's own
        (``python ../code/train.py``), never by a bare name another folder's file shares."""
        if not self._is_beside(where, path):
            return True
        target = os.path.normcase(path)
        launched = _notebook_commands(text) if name.endswith(".ipynb") else text
        return any(
            os.path.normcase(os.path.abspath(os.path.join(where, f))) == target
            for launch in _launches(launched)
            for f in launch_files(where, launch)
        )

    def _is_beside(self, where: str, path: str) -> bool:
        """Whether the launcher folder ``where`` is only beside the file ``path``'s folders: not
        one of them, nor a launch folder (``scripts/``) of one."""
        if where not in self._beside or where in self._launch_set:
            return False
        return not os.path.abspath(path).startswith(os.path.join(os.path.abspath(where), ""))

    def _launch_wheres(self, here: str, beside: bool = True) -> List[str]:
        """``here``, its launch folders and the folders directly in those, then (``beside``) the
        other folders directly in ``here`` that hold a launcher. Listed once per folder. A
        launcher of such a folder runs a file only by a path that leads to it from there
        (``_runs_launch``)."""
        found = self._wheres.get(here)
        if found is None:
            launch = [f for d in self._launch_folders_in(here) for f in self._launch_folder(d)]
            self._launch_set.update(launch)
            found = self._wheres[here] = [here, *launch]
        if not beside:
            return found
        others = self._besides.get(here)
        if others is None:
            try:
                with os.scandir(here) as entries:
                    listed = sorted(e.path for e in entries if not e.name.startswith(".") and e.is_dir())
            except OSError:
                listed = []
            taken = set(found)
            others = self._besides[here] = [f for f in listed if f not in taken and self._listing(f)]
            self._beside.update(others)
        return [*found, *others]

    def _launch_folders_in(self, folder: str) -> List[str]:
        """The launch folders directly in ``folder``: a name of :data:`LAUNCH_FOLDERS`, alone or
        with a qualifier (``scripts/``, ``jobs_local/``, ``slurm-jobs/``, ``run_scripts/``). Listed once."""
        found = self._launch_parents.get(folder)
        if found is None:
            try:
                with os.scandir(folder) as entries:
                    found = sorted(e.path for e in entries if _LAUNCH_FOLDER().match(e.name) and e.is_dir())
            except OSError:
                found = []
            self._launch_parents[folder] = found
        return found

    def _launch_folder(self, folder: str) -> List[str]:
        """A launch folder and the folders directly in it (``scripts/``, ``scripts/train/``);
        [] where there is none. Listed once."""
        found = self._launch_folders.get(folder)
        if found is None:
            try:
                with os.scandir(folder) as entries:
                    inner = sorted(e.path for e in entries if e.is_dir() and not e.name.startswith("."))
                found = [folder, *inner]
            except OSError:
                found = []
            self._launch_folders[folder] = found
        return found

    def _listing(self, folder: str) -> List[str]:
        if folder not in self._listings:
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                names = []
            self._listings[folder] = [n for n in names if n.endswith(LAUNCH_SUFFIXES + JOB_SUFFIXES)]
        return self._listings[folder]

    def _nearest_readme(self, folder: str, module: str = "") -> List[int]:
        """What the nearest README above the module that states a GPU states: its folder's,
        else its parent's, up to the project's root (a folder with ``.git``, ``pyproject.toml``
        or ``setup.py``). Where the module's own folder's README states none, the runs its
        folder's notebooks recorded come first (:meth:`_own_notebook_runs`): they are nearer
        than any README above. A README that states none (a usage page of ``train/``) does not hide
        the project's ("all experiments ran on 8 NVIDIA A100-40GB GPUs"). A sub-project's
        documentation (:meth:`_is_subproject`) speaks after its own README, before the README
        above it; the project root's, after every README."""
        here = folder
        for _ in range(README_LEVELS):
            has_readme = False
            for name in READMES:
                readme = os.path.join(here, name)
                text = self._read(readme)
                if text is None:
                    continue
                has_readme = True
                stated = self._readme_statement(readme, module)
                if stated:
                    return stated
                break
            stated = self._other_readmes_statement(here, module)
            if stated:
                return stated
            if any(os.path.exists(os.path.join(here, marker)) for marker in PROJECT_ROOT):
                return self._project_docs(here)
            if here == folder:
                recorded = self._own_notebook_runs(folder)
                if recorded:
                    return recorded
            if has_readme and self._is_subproject(here):
                stated = self._project_docs(here)
                if stated:
                    return list(stated)
            parent = os.path.dirname(here)
            if parent == here:
                return []
            here = parent
        return []

    def _other_readmes_statement(self, folder: str, module: str = "") -> List[int]:
        """What the other READMEs of ``folder`` state, where its README states nothing: a
        ``README_TRAINING.md`` beside a ``README.md`` of the paper ("GPU: NVIDIA TITAN RTX (24GB,
        Turing 7.5)", tune review 35), a ``README_zh.md`` copy. Other pages of the folder
        (``CHANGES.md``, notes) do not speak for its code. Listed once per folder."""
        names = self._other_readmes.get(folder)
        if names is None:
            try:
                listed = sorted(os.listdir(folder))
            except OSError:
                listed = []
            names = self._other_readmes[folder] = [
                n for n in listed if n not in READMES and _OTHER_README().match(n) and os.path.isfile(os.path.join(folder, n))
            ]
        found: List[int] = []
        for name in names:
            found.extend(self._readme_statement(os.path.join(folder, name), module))
        return found

    def _own_notebook_runs(self, folder: str) -> List[int]:
        """The GPUs that the notebooks of ``folder`` itself (not of a folder above it) recorded
        their runs on (:meth:`_notebook_runs`): the machine that folder's code ran on. A
        repository's README that thanks a cloud of V100s for its first models does not speak
        for a folder whose checkpoint notebook printed ``nvidia-smi``'s RTX 3090 Ti (held-out
        review 34: malaya-speech's ``session/dia-tts``)."""
        root = self._up_to_root(folder)[1]
        if root is None:
            return []
        here = os.path.normpath(folder)
        if not any(os.path.dirname(p) == here for p in self._project_notebooks(root)):
            return []
        return self._notebook_runs(root, folder)

    def names_a_mac(self, module_path: str) -> bool:
        """Whether the nearest README above the module (its folder's, else a parent's, up to the
        project's root) names an Apple machine in its prose (``hardware.names_an_apple_machine``:
        "Mac Studio M3 Ultra", "Apple Silicon", "the MPS backend"). Read once per README."""
        here = os.path.dirname(os.path.abspath(module_path))
        for _ in range(README_LEVELS):
            for name in READMES:
                readme = os.path.join(here, name)
                found = self._readme_mac.get(readme)
                if found is None:
                    text = self._read(readme)
                    if text is None:
                        continue
                    found = self._readme_mac[readme] = names_an_apple_machine(text if readme.endswith((".rst", ".txt")) else markdown_prose(text))
                if found:
                    return True
                break
            parent = os.path.dirname(here)
            if parent == here or any(os.path.exists(os.path.join(here, marker)) for marker in PROJECT_ROOT):
                return False
            here = parent
        return False

    def _is_subproject(self, folder: str) -> bool:
        """Whether a folder below the project's root ships its own environment: a requirements
        file (``requirements.txt``, ``requirements-train.txt``) or a conda ``environment.yml``
        of its own (asked only of a folder with its own README; once per folder)."""
        found = self._subprojects.get(folder)
        if found is None:
            from .versions import is_requirements_file

            try:
                names = os.listdir(folder)
            except OSError:
                names = []
            found = self._subprojects[folder] = any(
                is_requirements_file(n) or n in ("environment.yml", "environment.yaml") for n in names
            )
        return found

    def _project_docs(self, root: str) -> List[int]:
        """What the pages of the project's documentation folder state (``docs/*.md`` and
        ``docs/*/*.md``, at most :data:`DOCS_MAX_PAGES`, in name order), read once per project:
        the GPUs its runs were made on where the root README names none ("We ran training for
        the 1B model on 1 node of 8 NVIDIA H100 GPUs")."""
        found = self._docs_stated.get(root)
        if found is not None:
            return found
        found = []
        pages = 0
        for folder in DOCS_FOLDERS:
            top = os.path.join(root, folder)
            if not os.path.isdir(top):
                continue
            try:
                names = sorted(os.listdir(top))
            except OSError:
                continue
            paths = [os.path.join(top, n) for n in names]
            for sub in [p for p in paths if os.path.isdir(p)]:
                try:
                    paths.extend(os.path.join(sub, n) for n in sorted(os.listdir(sub)))
                except OSError:
                    continue
            for path in paths:
                if pages >= DOCS_MAX_PAGES:
                    break
                if not path.endswith(DOCS_SUFFIXES) or not os.path.isfile(path):
                    continue
                pages += 1
                found.extend(self._page_statement(path))
        self._docs_stated[root] = found
        return found

    def _page_statement(self, page: str) -> List[int]:
        """What one documentation page states (its prose: a Markdown page's fenced blocks are
        commands; a reStructuredText page is read whole)."""
        text = self._read(page)
        if text is None:
            return []
        return stated_in_text(text if page.endswith(".rst") else markdown_prose(text))

    def _installs_flash_attn(self, folder: str) -> List[int]:
        """[sm80] where the project installs flash-attn 2, in a folder from ``folder`` up to the
        project's root: its ``requirements.txt``, its ``pyproject.toml``'s dependencies, or a
        ``pip install`` line of its README's fenced blocks. FlashAttention-2 (every release
        since July 2023, and what an unpinned install gets) builds its kernels for Ampere and
        newer GPUs only ("FlashAttention-2 currently supports Ampere, Ada, or Hopper GPUs";
        Turing needs flash-attn 1.x): a project whose install takes it is written for those
        GPUs, as one whose SLURM script requests an A100. An optional extra states nothing."""
        for here in self._up_to_root(folder)[0]:
            found = self._flash_attn.get(here)
            if found is None:
                found = self._flash_attn[here] = self._folder_installs_flash_attn(here)
            if found:
                return [NATIVE_BF16]
        return []

    def _folder_installs_flash_attn(self, here: str) -> bool:
        for name in ("requirements.txt", "requirement.txt"):
            text = self._read(os.path.join(here, name))
            if text and any(flash_attn_2(m.group(1)) for m in _FLASH_ATTN_LINE().finditer(text)):
                return True
        text = self._read(os.path.join(here, "pyproject.toml"))
        if text and "flash" in text:
            from ..knowledge import tomllib_module

            try:
                project = tomllib_module().loads(text).get("project") or {}
            except Exception:  # a file that does not parse states nothing (config.py reports it)
                project = {}
            for dependency in project.get("dependencies") or ():
                match = _FLASH_ATTN_LINE().match(dependency) if isinstance(dependency, str) else None
                if match is not None and flash_attn_2(match.group(1)):
                    return True
        for name in READMES:
            readme = os.path.join(here, name)
            if self._read(readme) is not None:
                if any(flash_attn_2(m.group(1)) for m in _PIP_FLASH_ATTN().finditer(self._shell(readme))):
                    return True
                break
        return False

    def advised_for(self, module_path: str) -> FrozenSet[str]:
        """The switches the READMEs above the module, up to its project's root, tell the users of
        a GPU without native bf16 to set (``hardware.advised_switches``: "If you are on a T4,
        set `use_bf16` to `False`"); read once per folder."""
        folder = os.path.dirname(os.path.abspath(module_path))
        found = self._advised.get(folder)
        if found is None:
            advised: Set[str] = set()
            for here in self._up_to_root(folder)[0]:
                for name in READMES:
                    text = self._read(os.path.join(here, name))
                    if text is not None:
                        advised |= advised_switches(text if name.endswith((".rst", ".txt")) else markdown_prose(text))
            found = self._advised[folder] = frozenset(advised)
        return found

    def stated_for(self, module_path: str, readme: bool = True) -> Optional[int]:
        """What the module's launch scripts and (with ``readme``) the nearest README above it
        state (as :func:`hardware.summarise`): None when they state nothing. Without
        ``readme``, the launchers alone: for code that states its own GPU (a notebook's
        markdown, a script's docstring), which a README written for a whole folder of recipes
        does not override."""
        key = (module_path, readme)
        if key in self._stated:  # each spelling made absolute once (asked per root of a run)
            return self._stated[key]
        path = os.path.abspath(module_path)
        if (path, readme) in self._stated:
            self._stated[key] = self._stated[(path, readme)]
            return self._stated[key]
        found: List[int] = []
        if os.path.isfile(path):
            if readme:
                found.extend(self._nearest_readme(os.path.dirname(path), path))
                found.extend(self._installs_flash_attn(os.path.dirname(path)))
                root = self._up_to_root(os.path.dirname(path))[1]
                if root is not None:
                    found.extend(self._recorded_runs(root))
                found.extend(self._config_notes(path))
                for where, readme_path, commands, above in self._readmes_about(path):
                    found.extend(_stated_by_launches(where, commands, path))
                    if not above:  # a README elsewhere that links to the file or runs it
                        found.extend(self._readme_statement(readme_path, path))
            found.extend(self._container_archs(os.path.dirname(path)))
            for where, name, text in self._launchers_naming(path):
                found.extend(_stated_by_launcher(name, text))
                if not name.endswith(".ipynb"):
                    found.extend(_stated_by_launches(where, text, path))
                    # a launcher another one runs (`sbatch.sh` with `#SBATCH --partition=...` runs
                    # `./inference.sh`, which runs the script): the outer one's request holds too
                    inner = os.path.join(where, name)
                    for _, outer_name, outer_text in self._launchers_naming(inner):
                        if not outer_name.endswith(".ipynb") and outer_text is not text:
                            found.extend(_stated_by_launcher(outer_name, outer_text))
            if readme and not found and not self._launchers_naming(path):
                found.extend(self._siblings_launched(os.path.dirname(path)))
            if readme and not found and root is not None:
                found.extend(self._notebook_runs(root, os.path.dirname(path)))
        self._stated[(path, readme)] = self._stated[key] = summarise(found)
        return self._stated[key]

    def _config_notes(self, module_path: str) -> List[int]:
        """The GPUs the notes on precision settings of the project's configuration files name,
        as a note on a line of code does (``bf16: true  # A100 native bfloat16``: the card the
        setting was chosen for; a bare ``# A100`` says what the line needs): the YAML files of
        the project's root (:meth:`_config_listing`), each read once per root."""
        folder = os.path.dirname(module_path)
        root = self._up_to_root(folder)[1] or folder
        found = self._notes_by_root.get(root)
        if found is None:
            found = []
            for path in self._config_listing(root):
                if not path.lower().endswith((".yaml", ".yml")):
                    continue
                text = self._config_text(path)
                if text and "#" in text and any(k in text for k in _PRECISION_KEYS):
                    for match in _PRECISION_NOTE().finditer(text):
                        found.extend(stated_in_text(match.group(1), note=True))
            self._notes_by_root[root] = found
        return found

    def _container_archs(self, folder: str) -> List[int]:
        """The GPU architectures the project's container builds for: ``TORCH_CUDA_ARCH_LIST``
        in a ``Dockerfile`` or compose file from ``folder`` up to the project's root
        (``ENV TORCH_CUDA_ARCH_LIST=8.9``, ``- TORCH_CUDA_ARCH_LIST=8.0;9.0``): kernels built only
        for those run on no other GPU, so the lowest is the run's, as a SLURM request is. Each
        folder read once."""
        found: List[int] = []
        for here in self._up_to_root(folder)[0]:
            archs = self._folder_archs.get(here)
            if archs is None:
                archs = self._folder_archs[here] = [
                    a for name in self._container_files(here) for a in cuda_arch_list(self._read(os.path.join(here, name)) or "")
                ]
            found.extend(archs)
        return [min(found)] if found else []

    def _up_to_root(self, folder: str) -> Tuple[List[str], Optional[str]]:
        """(the folders from ``folder`` up to the project's root, nearest first; that root, or
        None where the walk ends first): the root is the first folder with a root marker
        (:data:`PROJECT_ROOT`), else the folder the check runs from when the walk meets it; at
        most :data:`README_LEVELS` folders. Walked once per folder (a module's README, container
        files and run records all ask): read it, never change it."""
        found = self._roots.get(folder)
        if found is not None:
            return found
        folders: List[str] = []
        here, root = folder, None
        for _ in range(README_LEVELS):
            folders.append(here)
            if any(os.path.exists(os.path.join(here, marker)) for marker in PROJECT_ROOT) or here == self._within:
                root = here
                break
            parent = os.path.dirname(here)
            if parent == here:
                break
            here = parent
        found = self._roots[folder] = (folders, root)
        return found

    def _recorded_runs(self, root: str) -> List[int]:
        """The GPUs the records of the project's own runs name, as a README's "we trained on
        8xA100" does: the ``"gpu"`` of a committed Weights & Biases run
        (``wandb/run-*/files/wandb-metadata.json``), and the device lines of the log files in
        its log folders (``logs/``, ``script/logs/``, ``outputs/``: a library's "Your device 'NVIDIA
        H100 PCIe' ...", a printed ``torch.cuda.get_device_name()``) and of the experiment logs
        in its report folders (``reports/experiment_log.md``: "- GPU: NVIDIA GeForce RTX 4070"). At most
        :data:`RECORDS` files, the head of each (:meth:`_head`)."""
        if root in self._recorded:
            return self._recorded[root]
        import json

        from .versions import wandb_runs

        found: List[int] = []
        files: List[str] = []
        for folder, name in self._record_folders(root):
            if name == "wandb":
                files.extend(os.path.join(folder, run, "files", "wandb-metadata.json") for run in wandb_runs(folder)[:RECORDS])
                continue
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                continue
            suffixes = _REPORT_SUFFIXES if _REPORT_FOLDER().match(name) else _LOG_SUFFIXES
            files.extend(os.path.join(folder, f) for f in names if f.endswith(suffixes))
        for path in files[:RECORDS]:
            text = self._head(path)
            if not text:
                continue
            if path.endswith(".json"):
                try:
                    gpu = json.loads(text).get("gpu")
                except (ValueError, AttributeError):
                    gpu = None
                found.extend(recorded_gpus(f"GPU: {gpu}") if isinstance(gpu, str) else ())
            else:
                found.extend(recorded_gpus(text))
        self._recorded[root] = found
        return found

    def _notebook_runs(self, root: str, folder: str) -> List[int]:
        """The GPUs the saved outputs of the project's own notebooks record their runs on (a
        library's "You are using a CUDA device ('NVIDIA RTX A6000') ...", ``nvidia-smi``'s table,
        a printed ``torch.cuda.get_device_name()``): the machine its author runs the project's
        code on, for the code in ``folder`` that nothing else states a GPU for (a README, a
        launcher, a log says more: review 30b, a LoRA project whose example notebook ran on an
        RTX A6000 and whose scripts were read as pre-Ampere). Where the folder or one above it
        holds notebooks of its own, the nearest such folder's notebooks speak for it, not those
        of other folders (review 32: a course's assignments, one notebook run on an RTX 3090,
        another on Colab). At most :data:`RECORDS` notebooks, each of at most :data:`MAX_BYTES`."""
        notebooks = self._project_notebooks(root)
        folders = {os.path.dirname(p) for p in notebooks}
        here = os.path.normpath(folder)
        scope = root
        while True:
            if here in folders:
                scope = here
                break
            parent = os.path.dirname(here)
            if here == os.path.normpath(root) or parent == here:
                break
            here = parent
        key = (root, scope)
        if key in self._notebook_recorded:
            return self._notebook_recorded[key]
        import json

        found: List[int] = []
        inside = [p for p in notebooks if scope == root or p.startswith(scope + os.sep)]
        for path in inside[:RECORDS]:
            text = self._read(path)
            if not text or not _may_hold_outputs(text):
                continue
            try:
                data = json.loads(text)
            except (ValueError, RecursionError):
                continue
            if isinstance(data, dict):
                for output in notebook_outputs(data):
                    found.extend(recorded_gpus(output))
        self._notebook_recorded[key] = found
        return found

    def _head(self, path: str) -> Optional[str]:
        """The first :data:`RECORD_BYTES` of a run record (a log may be gigabytes: what device
        the run is on is said at its start), read once and not kept; a side file of the run."""
        self._records_read[path] = None
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                return fh.read(RECORD_BYTES)
        except OSError:
            return None

    @staticmethod
    def _record_folders(root: str) -> List[Tuple[str, str]]:
        """``(folder, name)`` of the project's log folders and W&B folders, at most
        :data:`RECORD_DEPTH` folders below its root (``logs/``, ``script/logs/``), in name order;
        hidden folders, virtual environments and installed packages are not entered."""
        out: List[Tuple[str, str]] = []
        level = [root]
        for _ in range(RECORD_DEPTH):
            following = []
            for parent in level:
                try:
                    names = sorted(os.listdir(parent))
                except OSError:
                    continue
                for name in names:
                    folder = os.path.join(parent, name)
                    if name.startswith(".") or name in _NOT_RECORDS or not os.path.isdir(folder):
                        continue
                    if name == "wandb" or _RUN_LOG_FOLDER().match(name):
                        out.append((folder, name))
                    else:
                        following.append(folder)
            level = following[:200]  # (a tree of thousands of folders is not walked whole)
        return out

    def _container_files(self, folder: str) -> List[str]:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return []
        return [n for n in names if _CONTAINER_FILE().match(n)]

    def _launchers_naming(self, path: str) -> List[Tuple[str, str, str]]:
        """(folder, name, text) of each launcher near ``path`` (an absolute file) whose text
        names the file: in its folder or up to :data:`LEVELS` above, or their launch folders
        and the folders directly in those (``scripts/train/``). Found once per file (its stated
        hardware, pins and launches all ask)."""
        found = self._naming.get(path)
        if found is not None:
            return found
        base, stem = os.path.basename(path), _module_stem(path)
        runs = None  # compiled at the first launcher that holds the name (most files: none)
        found = []
        for where, name, text in self._launchers_near(os.path.dirname(path)):
            # the plain substring first: a pattern that opens with a look-behind is tried
            # at every offset of the text (a script's, a notebook's cells, once per module)
            if base not in text and (stem is None or stem not in text):
                continue
            if runs is None:
                runs = _naming(base, stem)
            if not runs.search(text):
                continue
            if name.endswith(".ipynb"):
                text = self._read(os.path.join(where, name))  # its metadata and outputs too
                if text is None:
                    continue
            if self._exactly(where, name, text, path):
                found.append((where, name, text))
        self._naming[path] = found
        return found

    def _launchers_near(self, folder: str) -> Iterator[Tuple[str, str, str]]:
        """(folder, name, text) of each launcher in ``folder`` or up to :data:`LEVELS` above,
        or their launch folders and the folders directly in those, or another folder directly in
        one of them that holds launchers (47c: ``exp/run.sh`` beside ``code/``, running
        ``python ../code/train.py``; such a folder's launcher names a file only by a path that
        leads to it from there: :meth:`_exactly`), up to the repository's root. Above ``folder``
        such other folders count only where :meth:`_up_to_root` finds the project's root (a
        marker, or the folder the check runs from): see :data:`BESIDE_LEVELS`."""
        here = folder
        seen = set()  # a folder beside one level's is the level below's own: read once
        for level in range(LEVELS + 1):
            # above the code's own folder, in a checkout with no root marker up the way, only the
            # launch folders: the folders beside it there may be other projects (or a test run's
            # other trees, thousands, each check reading them all)
            beside = level <= BESIDE_LEVELS or self._up_to_root(here)[1] is not None
            for where in self._launch_wheres(here, beside=beside):
                if where in seen:
                    continue
                seen.add(where)
                for name in self._listing(where):
                    text = self._searched(os.path.join(where, name))
                    if text is not None:
                        yield where, name, text
            parent = os.path.dirname(here)
            if parent == here or os.path.exists(os.path.join(here, ".git")):
                break  # the repository's own launchers: none of a folder that holds it
            here = parent

    def _siblings_launched(self, folder: str) -> List[int]:
        """What the shell launchers that run scripts of ``folder`` state (their ``#SBATCH``
        requests, their comments, their names): the machines the folder's code is written for,
        read for a file of it that no launcher names and no README speaks for (review 27a: the
        study scripts beside Slurm jobs that all request an A100). A Slurm job in the folder
        itself that runs no Python file requests the cluster's GPUs for the folder all the same
        (review 35: ``#SBATCH --gres=gpu:h100:2`` above ``vllm serve``, beside the merge scripts
        it serves); one that runs another folder's script speaks of that one. Found once per
        folder."""
        found = self._siblings.get(folder)
        if found is None:
            found = []
            for where, name, text in self._launchers_near(folder):
                if name.endswith(".ipynb"):
                    continue
                scripts = [f for launch in _launches(text) for f in launch_files(where, launch) if f.endswith(".py")]
                runs_here = any(runs_file(where, f, os.path.join(folder, os.path.basename(f))) for f in scripts) and (
                    not self._is_beside(where, os.path.join(folder, "_"))
                    or any(os.path.dirname(os.path.abspath(os.path.join(where, f))) == os.path.abspath(folder) for f in scripts)
                )
                # a job of the folder itself that runs no Python file (`vllm serve`): the cluster
                serves = not scripts and os.path.normpath(where) == os.path.normpath(folder) and _SBATCH_LINE().search(text)
                if runs_here or serves:
                    found.extend(_stated_by_launcher(name, text))
            self._siblings[folder] = found
        return found

    def _readmes_about(self, path: str) -> List[Tuple[str, str, str, bool]]:
        """``(folder, README, its fenced shell lines, whether it is above the file)`` of each
        README that speaks about the file ``path``: one from its folder up to the project's
        root (:data:`README_LEVELS` at most) whose commands name the file, and, in a project
        with a root marker (or, failing one, under the folder the check runs from, when the
        walk meets it), a README anywhere in it (a workshop's ``module5/README.md``) that
        links to the file (``[tune.py](../training/tune.py)``) or runs it in a fenced shell
        command (``markdown.shell_text``, read as a launch script's), but in a folder above the
        file (``README_zh.md`` beside the project's ``README.md``: the nearest README above the
        file speaks for it, and one nearer overrides it)."""
        base, stem = os.path.basename(path), _module_stem(path)
        found = []
        folders, root = self._up_to_root(os.path.dirname(path))
        ancestors = set(folders)  # the folders on the way up
        for here in folders:
            for name in READMES:
                readme = os.path.join(here, name)
                if name.endswith((".rst", ".txt")) or self._read(readme) is None:
                    continue
                commands = self._shell(readme)
                if base in commands or stem is not None and stem in commands and _naming(base, stem).search(commands):
                    found.append((here, readme, commands, True))
                break
        if root is None:
            return found
        for readme, linked, scripts in self._readme_index(root).get(base, ()):
            folder = os.path.dirname(readme)
            if folder in ancestors:
                # a README of a folder above the file (another language's copy of the project's
                # README beside it): what it states is the nearest README's to say, not a link's
                continue
            if path in linked or any(runs_file(folder, script, path) for script in scripts):
                found.append((folder, readme, self._shell(readme), False))
        return found

    def _readme_index(self, root: str) -> Dict[str, List[Tuple[str, Tuple[str, ...], Tuple[str, ...]]]]:
        """The project's READMEs by the names of the files they point at: file name →
        ``(README, the files it links to, the scripts its fenced shell commands run)``; each
        README read once per project, so a module asks by its name, not by reading them all."""
        index = self._readme_indexes.get(root)
        if index is None:
            index = self._readme_indexes[root] = {}
            for readme in self._project_readmes(root):
                text = self._read(readme)
                if text is None:
                    continue
                linked = tuple(_linked(os.path.dirname(readme), text))
                scripts = tuple(f for launch in _launches(self._shell(readme)) for f in launch.files())
                for name in {os.path.basename(t) for t in (*linked, *scripts)}:
                    index.setdefault(name, []).append((readme, linked, scripts))
        return index

    def _shell(self, readme: str) -> str:
        """A README's fenced shell lines (``markdown.shell_text``), read once."""
        commands = self._readme_shell.get(readme)
        if commands is None:
            from .markdown import shell_text

            commands = self._readme_shell[readme] = shell_text(self._read(readme) or "")
        return commands

    def _readme_statement(self, readme: str, module: str = "") -> List[int]:
        """What a README's prose states (its fenced blocks are commands, not prose; a ``.rst``
        or ``.txt`` one is read whole) and, for a Hugging Face Space's README, the hardware its
        card suggests; read once per README. For ``module``, without the older GPUs a line names
        for other scripts it links to (:meth:`_scoped_lines`)."""
        stated = self._readme_stated.get(readme)
        if stated is None:
            text = self._read(readme) or ""
            if readme.endswith((".rst", ".txt")):
                stated = stated_in_text(text)
            else:
                stated = stated_in_text(markdown_prose(text)) + space_card_hardware(text)
            self._readme_stated[readme] = stated
        stated = list(stated)
        for capabilities, scripts in self._scoped_lines(readme) if module and stated else ():
            if not self._in_scope(os.path.abspath(module), scripts):
                for capability in capabilities:
                    if capability in stated:
                        stated.remove(capability)
        if not stated and not readme.endswith((".rst", ".txt")):
            # its pages say it instead ("See [Getting started](GETTING_STARTED.md)"), also where
            # what it states is about other scripts than this one
            stated = list(self._linked_pages_statement(readme))
        return stated

    def _in_scope(self, module: str, scripts: Set[str]) -> bool:
        """Whether a README line that names ``scripts`` speaks about ``module``: one of them, or a
        script one of those notebooks runs (``!python train.py`` in the Colab notebook)."""
        if _one_of(module, scripts):
            return True
        return any(
            name.endswith(".ipynb") and _one_of(os.path.normpath(os.path.join(where, name)), scripts)
            for where, name, _ in self._launchers_naming(module)
        )

    def _scoped_lines(self, readme: str) -> List[Tuple[List[int], Set[str]]]:
        """``(capabilities, scripts)`` of each paragraph, list item or table row of a Markdown README
        that names GPUs without native bf16 for the scripts it links to or names in a code span ("The
        small checkpoint runs on older cards such as a GTX 1080 Ti: see [the demo](infer/demo.py)",
        "| v1 | `notebook/v1.ipynb` | Kaggle T4 |", or a row's cell naming a notebook by its title,
        `` `v0.2-llama-qlora` ``): what that script runs on, not every file of the project. (A newer
        GPU a line names holds for the project, as it did.)"""
        found = self._readme_scoped.get(readme)
        if found is None:
            found = []
            text = (self._read(readme) or "") if readme.endswith(".md") else ""
            folder = os.path.dirname(readme)
            hosted = _HOSTED_NOTEBOOKS().search(text) is not None
            for block in _blocks(markdown_prose(text)) if hosted or _SCRIPT_LINK().search(text) or _ARTIFACT_CELL().search(text) else ():
                scripts = {p for p in _linked(folder, block) + _named(folder, block) if p.endswith(_SCRIPT_SUFFIXES)}
                if block.lstrip().startswith("|"):  # a table row names its artifact as a whole cell
                    scripts.update(_artifacts(folder, block))
                if not scripts and hosted and _HOSTED_NOTEBOOKS().search(block):
                    # "| Google Colab | yes | a stronger GPU (T4 16GB) |": the run of the project's
                    # notebooks there (and of what they run), where it has any
                    scripts = set(self._project_notebooks(folder))
                if not scripts:
                    continue
                older = [c for c in stated_in_text(block) if c < NATIVE_BF16]
                if older:
                    found.append((older, scripts))
            self._readme_scoped[readme] = found
        return found

    def _linked_pages_statement(self, readme: str) -> List[int]:
        """What the documentation pages a README links to state (``[Getting started](docs/train.md)``:
        Markdown or reStructuredText files of the tree, at most :data:`LINKED_PAGES`): a README
        that leaves installation and training to such a page leaves it their hardware too
        ("- A100 GPUs" under its "Requirements"). Another README linked is its folder's own.
        Read once per README."""
        found = self._linked_stated.get(readme)
        if found is not None:
            return found
        found = []
        pages = [
            p for p in dict.fromkeys(_linked(os.path.dirname(readme), self._read(readme) or ""))
            if p.endswith(DOCS_SUFFIXES) and os.path.basename(p) not in READMES and p != readme
        ]
        for page in pages[:LINKED_PAGES]:
            if os.path.isfile(page):
                found.extend(self._page_statement(page))
        self._linked_stated[readme] = found
        return found

    def _project_notebooks(self, folder: str) -> List[str]:
        """The notebooks of the project ``folder`` is in (as discovery finds files), listed once
        per project."""
        root = self._up_to_root(folder)[1] or folder
        listed = self._notebooks.get(root)
        if listed is None:
            from .discovery import discover

            listed = self._notebooks[root] = [os.path.normpath(p) for p in discover([root], suffixes=(".ipynb",))]
        return listed

    def _project_readmes(self, root: str) -> List[str]:
        """The READMEs of the project at ``root`` as discovery finds files (``.gitignore``, VCS
        folders, virtual environments and build output skipped), the first
        :data:`PROJECT_READMES` in name order; listed once per project."""
        listed = self._readmes.get(root)
        if listed is None:
            from .discovery import discover

            names = {n.lower() for n in READMES if n.endswith(".md")}
            listed = self._readmes[root] = [
                p for p in discover([root], suffixes=(".md",)) if os.path.basename(p).lower() in names
            ][:PROJECT_READMES]
        return listed

    def pins_for(self, module_path: str) -> List["Allowed"]:
        """What the shell launchers that run ``module_path`` install (``run.sh``: ``pip install
        transformers==4.30.0`` then ``python train.py``), read as a notebook's ``%pip`` cells are
        (``versions.pip_requirements`` / ``launched_scripts``). The launched path is read from
        the launcher's folder, or, as a path relative to wherever it is started, by its tail
        (``python src/train.py`` run from the repository's root)."""
        from .versions import launched_scripts, module_load_pythons, pip_requirements

        path = os.path.abspath(module_path)
        if path in self._pins:
            return self._pins[path]
        found: List["Allowed"] = []
        if os.path.isfile(path):
            for where, name, text in self._launchers_naming(path):
                if name.endswith(".ipynb"):
                    continue  # a linted notebook's own cells say (project.notebook_lines)
                lines = text.splitlines()
                if not any(runs_file(where, s, path) for s in launched_scripts(lines, "")):
                    continue  # it names the file without running it (a comment, another script's argument)
                shown = os.path.relpath(os.path.join(where, name), os.path.dirname(path))
                found.extend(replace(a, source=f"{a.source}, which runs it") for a in pip_requirements(lines, shown))
                found.extend(replace(a, source=f"{a.source}, which runs it") for a in module_load_pythons(lines, shown))
                if name.endswith(JOB_SUFFIXES):
                    found.extend(self._built_pins(where, text, shown))
        self._pins[path] = found
        return found

    def _built_pins(self, where: str, text: str, shown: str) -> List["Allowed"]:
        """What the container a job's YAML builds for its command installs: the requirements
        files of each build context it names (an AzureML environment's ``build: path:
        ../docker-context``, a compose service's ``build: context: .`` or ``build: ./app``)
        and the ``pip install`` lines of the Dockerfile there."""
        from pathlib import Path

        from .versions import dockerfile_requirements, folder_requirements

        out: List["Allowed"] = []
        for context in dict.fromkeys(m.group(1) or m.group(2) for m in _BUILD_CONTEXT().finditer(text)):
            folder = os.path.normpath(os.path.join(where, context))
            if not os.path.isdir(folder):
                continue
            built = f"the build context {context} of {shown}, which runs it"
            out.extend(replace(a, source=f"{a.source} in {built}") for a, _ in folder_requirements(Path(folder)))
            for name in self._container_files(folder):
                if not name.lower().endswith((".yml", ".yaml")):  # a Dockerfile, not a compose file
                    text = self._read(os.path.join(folder, name)) or ""
                    out.extend(replace(a, source=f"{a.source} ({built})") for a in dockerfile_requirements(text, name))
        return out

    def launches_for(self, module_path: str) -> List[Tuple[str, "Launch"]]:
        """``(launcher, launch)`` for each command that runs the file ``module_path``
        (``torchrun --nproc_per_node 2 train.py --bf16``, ``python -m pkg.train --config
        c.yaml``): its ``args`` are what the shipped run passes the script. The commands are
        those of a shell launcher near the file (found as :meth:`stated_for` finds them) and
        those of a README's fenced shell blocks that speak about it (:meth:`_readmes_about`:
        the documented run is the run the code is written for), where the command names the
        file itself: from the README's folder, or by a path with a folder in it
        (``python src/train.py``, ``python -m pkg.train``), never by a bare name another
        folder's file shares. ``launcher`` is the launcher's (or README's) absolute path."""
        path = os.path.abspath(module_path)
        if path in self._launches:
            return self._launches[path]
        found: List[Tuple[str, "Launch"]] = []
        if os.path.isfile(path):
            for where, name, text in self._launchers_naming(path):
                if name.endswith(".ipynb"):  # its `!` and `%run` lines, naming the file exactly
                    found.extend((os.path.join(where, name), launch) for launch in _notebook_launches(where, text, path))
                    continue
                for launch in _launches(text):
                    if _runs_launch(where, launch, path):
                        found.append((os.path.join(where, name), launch))
            for folder, readme, commands, _ in self._readmes_about(path):
                for launch in _launches(commands):
                    if any(_names_exactly(folder, f, path) for f in launch_files(folder, launch)):
                        found.append((readme, launch))
        self._launches[path] = found
        return found

    def run_beside(self, module_path: str) -> List[str]:
        """The other files that the README shell blocks and the shell launchers which run
        ``module_path`` run too (``python train.py`` then ``python merge.py`` then ``python
        infer.py``): one sequence, one machine. Absolute paths of files that exist, as each
        command names them from its launcher's folder."""
        path = os.path.abspath(module_path)
        if not os.path.isfile(path):
            return []
        texts = [(where, commands) for where, _, commands, _ in self._readmes_about(path)]
        texts += [(where, text) for where, name, text in self._launchers_naming(path) if not name.endswith(".ipynb")]
        found: List[str] = []
        for where, text in texts:
            launched = list(_launches(text))
            if not any(_runs_launch(where, launch, path) for launch in launched):
                continue
            for launch in launched:
                for written in launch_files(where, launch):
                    other = os.path.normpath(os.path.join(where, written))
                    if other != path and other not in found and os.path.isfile(other):
                        found.append(other)
        return found

    def notebooks_running(self, module_path: str) -> List[str]:
        """The notebooks near the file ``module_path`` (found as :meth:`_launchers_naming` finds
        launchers: its folder, up to :data:`LEVELS` above, their launch folders) whose ``!``
        and ``%run`` lines run it (:func:`lines_run`); absolute paths. A notebook that only
        names the file (its markdown, another command's argument) does not run it. The
        notebooks the check lints say it themselves (``project.notebook_lines``); these are read
        for a check of the file without them."""
        path = os.path.abspath(module_path)
        found: List[str] = []
        if not os.path.isfile(path):
            return found
        for where, name, text in self._launchers_naming(path):
            if name.endswith(".ipynb") and _notebook_launches(where, text, path):
                found.append(os.path.join(where, name))
        return found

    def config_files_near(self, module_path: str, words: Tuple[str, ...], within: str) -> List[str]:
        """The JSON/YAML files the project ships around ``module_path`` whose text holds one of
        ``words`` (absolute paths, in name order): under the module's folder, or the folder up to
        :data:`LEVELS` above it where no folder on the way marks the project's root (a script in
        ``scripts/training/`` and its ``configs/`` at the repository's top), never above
        ``within`` (the folder the check runs from: a checkout without a root marker is not
        left for its neighbours), at most :data:`CONFIG_DEPTH` folders down, skipping what
        discovery skips (``.gitignore``, VCS folders, virtual environments, caches, build
        output: an ignored ``output/`` holding the arguments a run dumped is no configuration
        the project ships) and hidden folders. Each file is read once; the files read are side
        files of the run."""
        here = os.path.dirname(os.path.abspath(module_path))
        within = os.path.abspath(within)
        if not os.path.isdir(here):
            return []
        top = here
        for _ in range(LEVELS):
            if top == within or not top.startswith(os.path.join(within, "")):
                break
            if any(os.path.exists(os.path.join(top, marker)) for marker in PROJECT_ROOT):
                break
            parent = os.path.dirname(top)
            if parent == top:
                break
            top = parent
        found = []
        for path in self._config_listing(top):
            if self._beside_other_code(os.path.dirname(path), here, top):
                continue
            key = (path, words)
            if key not in self._config_holds:
                text = self._config_text(path)
                self._config_holds[key] = text is not None and any(w in text for w in words)
            if self._config_holds[key]:
                found.append(path)
        return found

    def _beside_other_code(self, folder: str, here: str, top: str) -> bool:
        """Whether a configuration file in ``folder`` belongs to other code than the module's
        (in ``here``; ``top``: the folder searched from): a folder between ``top`` and it that is
        not on the module's way up holds Python files of its own (``stt/pretrain/config.json``
        beside ``stt/pretrain/pretrain.py``, which its README runs with it). Another script's
        configuration is that script's, though its keys fit the module's copy of the same
        dataclasses (a repository of many scripts grown from one Hugging Face example); a
        ``configs/`` folder holds no code, and its files may be any script's."""
        while folder != top and folder.startswith(os.path.join(top, "")):
            on_the_way = here == folder or here.startswith(os.path.join(folder, ""))
            if not on_the_way and self._holds_python(folder):
                return True
            folder = os.path.dirname(folder)
        return False

    def _holds_python(self, folder: str) -> bool:
        """Whether ``folder`` holds Python code: a ``.py`` file other than a package's
        ``__init__.py`` (a ``configs/`` package of JSON files is still configuration). Read once
        per folder."""
        found = self._python_folders.get(folder)
        if found is None:
            try:
                found = any(name.endswith(".py") and name != "__init__.py" for name in os.listdir(folder))
            except OSError:
                found = False
            self._python_folders[folder] = found
        return found

    def _config_text(self, path: str) -> Optional[str]:
        """A configuration file's text, read to be searched, not kept (a project's data files may
        be many); the file is a side file of the run."""
        self._config_read.setdefault(path, None)
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                return fh.read()
        except OSError:
            return None

    def _config_listing(self, top: str) -> List[str]:
        """The JSON/YAML files under ``top`` as discovery finds files (``.gitignore``, VCS
        folders, virtual environments, caches and build output skipped), not in a hidden folder
        nor deeper than :data:`CONFIG_DEPTH` folders, nor larger than :data:`CONFIG_MAX_BYTES`;
        the first :data:`CONFIG_MAX_FILES` in name order."""
        listed = self._configs.get(top)
        if listed is not None:
            return listed
        from .discovery import discover

        listed = []
        for path in discover([top], suffixes=CONFIG_SUFFIXES):
            parts = os.path.relpath(path, top).split(os.sep)
            if len(parts) > CONFIG_DEPTH + 1 or any(p.startswith(".") for p in parts[:-1]):
                continue
            try:
                if os.path.getsize(path) > CONFIG_MAX_BYTES:
                    continue
            except OSError:
                continue
            listed.append(path)
            if len(listed) >= CONFIG_MAX_FILES:
                break
        self._configs[top] = listed
        return listed

    def text_of(self, launcher: str) -> Optional[str]:
        """The text of a launcher :meth:`launches_for` found (read once)."""
        return self._read(launcher)

    def command_text(self, launcher: str) -> Optional[str]:
        """The text the lines and columns of a launch of ``launcher`` (:meth:`launches_for`)
        stand in: a shell launcher's or README's own; None for a notebook, whose launches are
        read from its IPython lines, not from the JSON file a finding would point into."""
        return None if launcher.lower().endswith(".ipynb") else self._read(launcher)


# the folder a job's YAML builds its container from: `build:` then `path:` (AzureML) or `context:`
# (compose) on a line below it, or `build: ./app` on its own line
_BUILD_CONTEXT = lazy(
    r"^[ \t]*build[ \t]*:[ \t]*(?:['\"]?([.\w/-]+)['\"]?[ \t]*$|\n(?:[ \t]+[\w-]+[ \t]*:.*\n)*?[ \t]+(?:path|context)[ \t]*:[ \t]*['\"]?([.\w/-]+))",
    re.MULTILINE,
)
# a container's build and run files: `Dockerfile`, `Dockerfile.gpu`, `docker-compose.yml`, `compose.yaml`
_CONTAINER_FILE = lazy(r"^(?:Dockerfile(?:\.[\w-]+)?|[\w-]*\.Dockerfile|(?:docker-)?compose(?:\.[\w-]+)?\.ya?ml)$", re.IGNORECASE)
_ARCH_LIST = lazy(r"TORCH_CUDA_ARCH_LIST\s*[=:]\s*[\"']?([0-9][0-9.;, +PTXptx]*)")


def _may_hold_outputs(text: str) -> bool:
    """Whether a notebook's text may hold a saved output that names a GPU (most notebooks are
    committed without outputs, or with none naming a device): parsed only then."""
    return '"outputs": [\n' in text or '"outputs":[{' in text or '"outputs": [{' in text


def cuda_arch_list(text: str) -> List[int]:
    """The compute capabilities a text's ``TORCH_CUDA_ARCH_LIST`` settings name (``8.0;8.6+PTX``:
    80 and 86)."""
    if "TORCH_CUDA_ARCH_LIST" not in text:
        return []
    out = []
    for match in _ARCH_LIST().finditer(text):
        for word in re.split(r"[;, ]+", match.group(1)):
            major, _, minor = word.upper().removesuffix("+PTX").partition(".")
            if major.isdigit() and (minor.isdigit() or not minor):
                out.append(int(major) * 10 + int(minor or 0))
    return out


def is_launch_document(path: str) -> bool:
    """Whether findings in ``path`` are about the commands it holds: a shell launcher or
    notebook (:data:`LAUNCH_SUFFIXES`), or a README whose fenced shell blocks run a script
    (:meth:`ShippedFiles.launches_for`)."""
    return path.lower().endswith(LAUNCH_SUFFIXES) or os.path.basename(path) in READMES


def launch_files(where: str, launch: "Launch") -> Tuple[str, ...]:
    """The files ``launch`` (written in a launcher in the folder ``where``) runs, relative to
    ``where``: in the folder a ``cd`` above it moved to (``Launch.folder``: ``cd ../code`` then
    ``python run.py``), where that folder is there; else as written (``%cd`` into a folder the
    notebook clones first: the clone is the project itself, named from wherever it is)."""
    files = launch.files()
    if launch.folder and os.path.isdir(os.path.join(where, launch.folder)):
        return tuple(os.path.join(launch.folder, f) for f in files)
    return files


def _runs_launch(where: str, launch: "Launch", path: str) -> bool:
    """Whether ``launch``, written in a launcher in ``where``, runs the file ``path``
    (:func:`runs_file`; a module's file as ``python -m`` finds it)."""
    return any(runs_file(where, f, path) for f in launch_files(where, launch))


def _file_text(path: str) -> Optional[str]:
    """A shipped file's text, None where it cannot be read or is over :data:`MAX_BYTES`."""
    try:
        if os.path.getsize(path) <= MAX_BYTES:
            with open(path, encoding="utf-8", errors="replace") as fh:
                return fh.read()
    except OSError:
        pass
    return None


def _cell_sources(text: str) -> str:
    """The sources of a notebook's cells (its JSON text ``text``), one after another; "" for a
    notebook that does not parse (it launches nothing: :func:`_notebook_commands`)."""
    import json

    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return ""
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        return ""
    sources = (cell.get("source", "") for cell in cells if isinstance(cell, dict))
    return "\n".join("".join(s) if isinstance(s, list) else str(s) for s in sources)


def _notebook_commands(text: str) -> str:
    """The IPython lines of a notebook (its JSON text ``text``), one per line: what its launches
    are read from (``Notebook.command_lines``); "" for a notebook that does not parse."""
    from .notebook import NotebookError, parse

    try:
        lines = parse(text.encode("utf-8")).command_lines
    except (NotebookError, RecursionError):
        return ""
    return _joined(lines)


def _joined(lines) -> str:
    return "\n".join(line.rstrip("\r\n") for line in lines)


def _notebook_launches(where: str, text: str, path: str) -> List["Launch"]:
    """The launches of a notebook in the folder ``where`` (its text ``text``) that run the file
    ``path`` (:func:`_names_exactly`)."""
    return _running(where, _notebook_commands(text), path)


def _running(where: str, commands: str, path: str) -> List["Launch"]:
    return [launch for launch in _launches(commands) if any(_names_exactly(where, f, path) for f in launch_files(where, launch))]


def lines_run(where: str, lines, path: str) -> bool:
    """Whether the command lines of a notebook in the folder ``where`` (``!python
    scripts/test_infer.py``, ``%run x.py``: ``Notebook.command_lines``) run the file ``path``:
    by its name from that folder (or the folder a ``%cd`` above it moved to), or by a path with a
    folder in it whose tail is the file's (:func:`_names_exactly`: ``%cd`` into a clone, then
    ``!python scripts/x.py``)."""
    return bool(_running(where, _joined(lines), path))


def _names_exactly(where: str, script: str, path: str) -> bool:
    """:func:`runs_file` where the command's file is known: named from ``where``, or by a path with
    a folder in it whose tail is the file's (a bare ``train.py`` run from a README's folder is
    that folder's, not another folder's file of the same name)."""
    if os.path.normcase(os.path.abspath(os.path.join(where, script))) == os.path.normcase(path):
        return True
    return os.path.dirname(os.path.normpath(script)) != "" and runs_file(where, script, path)


def _module_stem(path: str) -> Optional[str]:
    """The last part of the module name ``python -m`` runs the file ``path`` by (a package's
    ``__main__.py``: its folder's name); None for a file no module name reaches."""
    folder, base = os.path.split(path)
    stem = os.path.basename(folder) if base == "__main__.py" else base[:-3] if base.endswith(".py") else ""
    return stem if stem.isidentifier() else None


@functools.lru_cache(maxsize=256)
def _naming(base: str, stem: Optional[str]) -> "re.Pattern[str]":
    """A launcher's text that names the file ``base`` (``train.py``) or runs its module
    (``-m pkg.train``, ``--module train``)."""
    pattern = rf"(?<![\w-]){re.escape(base)}(?![\w-])"
    if stem is not None:
        pattern += rf"|(?<!\S)(?:-m|--module)\s+(?:\w+\.)*{re.escape(stem)}(?![\w.])"
    return re.compile(pattern)


def runs_file(where: str, script: str, path: str) -> bool:
    """Whether ``script`` (as a launcher in the folder ``where`` writes it) is the file ``path``:
    from the launcher's folder, or, as a path relative to wherever it is started, by its tail
    (``python src/train.py`` run from the repository's root; an absolute path by its folder and
    file name)."""
    here = os.path.normcase(path)
    if os.path.normcase(os.path.abspath(os.path.join(where, script))) == here:
        return True
    if os.path.isabs(script):
        # an absolute path on the author's machine (`/home/me/proj/train/sft.py`, or `$ROOT/train/
        # sft.py` with the root unknown): its last folder and file name
        tail = os.path.join(*script.split(os.sep)[-2:]) if script.count(os.sep) >= 2 else ""
        return bool(tail) and here.endswith(os.sep + os.path.normcase(tail))
    return ".." not in script.split(os.sep) and here.endswith(os.sep + os.path.normcase(script))


def _stated_by_launcher(name: str, text: str) -> List[int]:
    """What a launcher states: a notebook's metadata and markdown (``!torchrun train.py`` in a
    notebook tested on an A10G), a shell script's ``#`` lines, and its name (``run-4x-rtx4090.sh``)."""
    if name.endswith(".ipynb"):
        import json  # only for a notebook that launches the file (#23)

        try:
            data = json.loads(text)
        except ValueError:
            return []
        if not isinstance(data, dict):
            return []
        stated = notebook_capability(data.get("metadata") or {}, notebook_markdown(data), notebook_outputs(data))
        return [] if stated is None else [stated]
    # the launcher's own name, which its author gave it after the run's machine (`run-4x-rtx4090.sh`)
    named = stated_in_text(re.sub(r"[-_.]+", " ", os.path.splitext(os.path.basename(name))[0]))
    if name.endswith(JOB_SUFFIXES):  # a job's YAML: its `#` lines and the machine it requests
        return named + stated_in_text(_comments(text)) + compute_capabilities(text)
    return named + stated_in_text(_comments(text))


def _launches(text: str):
    """``launches.launches(text)``, imported on first use (most runs read no launcher)."""
    from .launches import launches

    return launches(text)


# a Markdown link's target: `[tune.py](../training/tune.py)`, `[run](./run.sh "title")`
_LINK = lazy(r"\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'][^\"']*[\"'])?\s*\)")


# where a Markdown paragraph or list item ends: a blank line, or the next item's marker
_ITEM_START = lazy(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s")


def _blocks(prose: str) -> List[str]:
    """The paragraphs, list items and table rows of a Markdown text, each with its wrapped lines."""
    out: List[List[str]] = [[]]
    row = False
    for line in prose.splitlines():
        starts_row = line.lstrip().startswith("|")
        if not line.strip() or _ITEM_START().match(line) or starts_row or row:
            out.append([])
        row = starts_row
        if line.strip():
            out[-1].append(line)
    return ["\n".join(block) for block in out if block]


# a Markdown link to a script of the tree, `[the demo](infer/demo.py)`, or its path in a code span,
# `` `notebook/v1.ipynb` ``
_SCRIPT_SUFFIXES = (".py", ".ipynb", ".sh")
# a hosted notebook service a README line offers as a way to run the project: its GPU is that
# route's (the project's notebooks), not the GPU of every script
_HOSTED_NOTEBOOKS = lazy(r"\bcolab(?:oratory)?\b|\bkaggle\b", re.IGNORECASE)
_SCRIPT_LINK = lazy(r"\]\([^)\s]+\.(?:py|ipynb|sh)(?:#[^)]*)?\)|`[^`\s]+\.(?:py|ipynb|sh)`")
_SCRIPT_SPAN = lazy(r"`(?:\./)?([^`\s:]+\.(?:py|ipynb|sh))`")


# a table cell that is one code span naming an artifact: a notebook or script by its name, with or
# without its suffix (`` `v0.2-llama-qlora` ``, a Kaggle notebook's name); not an option (`--fp16`),
# nor a single word (`bf16`)
_ARTIFACT_CELL = lazy(r"\|\s*`([A-Za-z0-9][\w.-]*[-_.][\w.-]*)`\s*(?=\|)")


def _artifacts(folder: str, row: str) -> List[str]:
    """The artifacts a README table row names by a cell of one code span (absolute paths from
    ``folder``; a name without a suffix stays one, matched by stem: :func:`_one_of`)."""
    return [os.path.normpath(os.path.join(folder, name)) for name in _ARTIFACT_CELL().findall(row)]


def _one_of(module: str, scripts: Set[str]) -> bool:
    """Whether ``module`` is one of the scripts a README line names: the same path, or a name
    without a suffix that is the module's own (a notebook named in a table by its title)."""
    if module in scripts:
        return True
    return any(module.endswith(suffix) and module[: -len(suffix)] in scripts for suffix in _SCRIPT_SUFFIXES)


def _named(folder: str, text: str) -> List[str]:
    """The scripts a Markdown text in ``folder`` names by their path in a code span
    (`` `notebook/v1.ipynb` ``), as absolute paths: a notebook kept out of the tree is still
    another script than the module asking."""
    return [os.path.normpath(os.path.join(folder, target)) for target in _SCRIPT_SPAN().findall(text)]


def _linked(folder: str, text: str) -> List[str]:
    """The files of the tree a Markdown text in ``folder`` links to (absolute paths; a URL,
    an anchor and a mail address are no file)."""
    out = []
    for target in _LINK().findall(text):
        if "://" in target or target.startswith(("#", "mailto:")):
            continue
        target = target.split("#", 1)[0].split("?", 1)[0]
        if target:
            out.append(os.path.normpath(os.path.join(folder, target)))
    return out


def _stated_by_launches(where: str, text: str, path: str) -> List[int]:
    """What the commands of a launcher (or a README's) that run ``path`` state by the options
    they pass it: ``--tf32 True`` asks for TF32 tensor cores, which only Ampere and newer GPUs
    have (a ``TrainingArguments`` given it on an older one raises ``ValueError: --tf32 requires
    Ampere or a newer GPU arch, cuda>=11 and torch>=1.7``): the run is written for sm80 or
    newer, as a SLURM ``--gres=gpu:a100`` says."""
    from .launches import TRUE_WORDS, passed_options

    if "tf32" not in text and "config" not in text and ".yaml" not in text and ".yml" not in text and ".json" not in text:
        return []  # no option and no configuration file (_configuration_files) can ask for TF32
    for launch in _launches(text):
        if not _runs_launch(where, launch, path):
            continue
        options = passed_options(launch.args)
        word = options.get("tf32")  # "" for a bare `--tf32` switch
        if word is not None and (word == "" or word.lower() in TRUE_WORDS):
            return [NATIVE_BF16]
        if word is None and any(_tf32_in_file(where, f) for f in _configuration_files(launch.args, options)):
            return [NATIVE_BF16]
    return []


def _configuration_files(args, options) -> List[str]:
    """The configuration files a launch hands its script: ``--config recipe.yaml`` (TRL's
    ``TrlParser``), or a first argument that is one (``python train.py recipe.yaml``: an
    ``HfArgumentParser``'s ``parse_yaml_file(sys.argv[1])``)."""
    found = [v for k, v in options.items() if k in ("config", "config_file", "config_path") and v]
    if args and args[0].endswith((".yaml", ".yml", ".json")):
        found.append(args[0])
    return found


# `tf32: true` at the top level of a YAML file, `"tf32": true` in a JSON one
_TF32_KEY = lazy(r'^(?:tf32|"tf32"\s*):\s*(?:true|True|yes)\b|"tf32"\s*:\s*true\b', re.MULTILINE)


def _tf32_in_file(where: str, written: str) -> bool:
    """Whether the configuration file a launch passes (read from the launch's folder) sets
    ``tf32`` true: its arguments are the script's ``TrainingArguments``."""
    if "$" in written or "{" in written:
        return False
    try:
        with open(os.path.join(where, written), encoding="utf-8", errors="replace") as f:
            return bool(_TF32_KEY().search(f.read(200_000)))
    except OSError:
        return False


def _comments(script: str) -> str:
    """A shell script's ``#`` lines (``#SBATCH`` requests and comments), not its commands."""
    return "\n".join(line.strip()[1:] for line in script.splitlines() if line.strip().startswith("#") and not line.startswith("#!"))
