"""Launch commands written in the files a project ships: which Python script or module runs.

``python train.py``, ``python -m pkg.train``, ``accelerate launch --num_processes 8 train.py``,
``torchrun --nproc_per_node 8 train.py`` (and ``python -m torch.distributed.run``),
``deepspeed --num_gpus 8 train.py``, in shell scripts, SLURM jobs, Makefiles, CI and job YAML
(a ``run:`` block is shell too) and notebooks' ``!`` lines. A line continued with ``\\`` is one
command; ``FOO=1 python x.py``, ``srun``/``uv run``/``CUDA_VISIBLE_DEVICES=0`` prefixes are
stepped over; a script path that is a shell variable (``python $SCRIPT``) is not known and
names nothing. Nothing is run: the text is split with ``shlex``.

The launcher's own options are stepped over by knowing which of them take a value
(``--nproc_per_node 8``); an option of theirs this table does not know is assumed to be a
flag, the safe reading for the words that follow (a value would be read as the script only
when it ends in ``.py``), and a word after it that is no ``.py`` file is its value
(``--fsdp_version 2 train.py``). The launcher and its own words are kept
(``Launch.launcher_args``): ``accelerate launch --mixed_precision fp16`` is the run's precision.
"""
from __future__ import annotations

import os
import re
from dataclasses import replace

from .._dataclass import dataclass
from typing import Dict, Iterable, List, Optional, Tuple
from .._regex import lazy

PYTHONS = lazy(r"^python(\d+(\.\d+)?)?$")
# python's own options that take a value (``python -W ignore x.py``)
_PYTHON_VALUED = frozenset({"-W", "-X", "-c"})
# launchers' options that take a value, when written apart from it (`--nproc_per_node 8`)
_TORCHRUN_VALUED = frozenset({
    "--nnodes", "--nproc_per_node", "--nproc-per-node", "--node_rank", "--node-rank", "--master_addr", "--master-addr",
    "--master_port", "--master-port", "--rdzv_backend", "--rdzv-backend", "--rdzv_endpoint", "--rdzv-endpoint",
    "--rdzv_id", "--rdzv-id", "--rdzv_conf", "--rdzv-conf", "--max_restarts", "--max-restarts", "--monitor_interval",
    "--monitor-interval", "--start_method", "--start-method", "--role", "--log_dir", "--log-dir", "-r", "--redirects",
    "-t", "--tee", "--local_addr", "--local-addr", "--logs_specs", "--logs-specs", "--local-ranks-filter",
})
_ACCELERATE_VALUED = frozenset({
    "--config_file", "--config-file", "--num_processes", "--num-processes", "--num_machines", "--num-machines",
    "--machine_rank", "--machine-rank", "--main_process_ip", "--main-process-ip", "--main_process_port",
    "--main-process-port", "--mixed_precision", "--mixed-precision", "--gpu_ids", "--gpu-ids", "--dynamo_backend",
    "--deepspeed_config_file", "--zero_stage", "--gradient_accumulation_steps", "--offload_optimizer_device",
    "--offload_param_device", "--deepspeed_multinode_launcher", "--fsdp_sharding_strategy", "--fsdp_state_dict_type",
    "--fsdp_auto_wrap_policy", "--fsdp_transformer_layer_cls_to_wrap", "--num_cpu_threads_per_process", "--rdzv_backend",
    "--rdzv_conf", "--max_restarts", "--monitor_interval", "--tpu_name", "--tpu_zone", "--main_training_function",
    "--downcast_bf16", "--deepspeed_hostfile", "--deepspeed_exclusion_filter", "--deepspeed_inclusion_filter",
    "--fsdp_offload_params", "--fsdp_min_num_params", "--fsdp_backward_prefetch", "--fsdp_cpu_ram_efficient_loading",
    "--fsdp_sync_module_states", "--fsdp_use_orig_params", "--use_fsdp_version",
})
_DEEPSPEED_VALUED = frozenset({
    "--num_gpus", "--num_nodes", "--hostfile", "-H", "--include", "-i", "--exclude", "-e", "--master_port",
    "--master_addr", "--node_rank", "--launcher", "--launcher_args", "--module", "--ssh_port", "--bind_core_list",
})
# the words HfArgumentParser's `string_to_bool` reads as True / False (`--use_peft True`)
TRUE_WORDS = ("true", "yes", "t", "y", "1")
FALSE_WORDS = ("false", "no", "f", "n", "0")
_DISTRIBUTED_MODULES = ("torch.distributed.run", "torch.distributed.launch", "accelerate.commands.launch")
# prefixes that run the command after them (their options are stepped over as flags)
_WRAPPERS = frozenset({"srun", "exec", "time", "nohup", "env", "sudo", "mpirun", "xvfb-run"})


@dataclass(frozen=True)
class Launch:
    """One launch: a script file (as written, relative to where the command runs) or a module
    (``python -m pkg.train``), and the words after it (the script's own arguments)."""

    script: Optional[str]
    module: Optional[str]
    args: Tuple[str, ...]
    line: int  # 1-based line of the command in its file
    # the launcher that runs it ("python", "accelerate", "torchrun", "deepspeed"; "" for a
    # notebook's ``%run``) and the launcher's own words before the script
    # (``accelerate launch --mixed_precision fp16 train.py``: ``("--mixed_precision", "fp16")``)
    launcher: str = ""
    launcher_args: Tuple[str, ...] = ()
    # the folder the command runs in, relative to the launcher's, where a `cd` / `%cd` / `pushd`
    # above it moved there (`%cd ../code` then `!python run.py`); "" where none did or where it
    # is not known (`cd $ROOT`, `cd /content/repo`): the script is then read as written
    folder: str = ""

    @property
    def written(self) -> Optional[str]:
        """The word of the command that names what it runs: the script, else the module."""
        return self.script if self.script is not None else self.module

    def files(self) -> Tuple[str, ...]:
        """The file the launch runs, relative to the folder the command runs in: the script as
        written, or the file ``python -m`` finds for the module (``pkg.train``: ``pkg/train.py``,
        or a package's ``pkg/train/__main__.py``)."""
        if self.script is not None:
            return (self.script,)
        parts = (self.module or "").split(".")
        if not all(part.isidentifier() for part in parts):
            return ()  # `python -m $MODULE`: not known
        return (os.path.join(*parts) + ".py", os.path.join(*parts, "__main__.py"))


# A YAML key whose value is a folded block (`command: >`, `>-`, `>+`): the lines below it, more
# indented, are one line joined by spaces (an AzureML job's `command:` written over lines).
_FOLDED_KEY = lazy(r"^(\s*)(?:-\s+)?[\w.-]+\s*:\s*>[-+]?\d*\s*(?:#.*)?$")


def commands(text: str) -> List[Tuple[int, str]]:
    """``(line, command)`` of a shell-like text: ``\\`` continuations joined, comments dropped,
    ``;``/``&&``/``||``/``|`` separating commands; a YAML folded block is one line."""
    return [(first, command) for first, _, command in _commands(text)]


def _commands(text: str) -> List[Tuple[int, int, str]]:
    """``(first line, last line, command)`` of :func:`commands`."""
    out: List[Tuple[int, int, str]] = []
    pending, first = "", 0
    folded: Optional[int] = None  # the indentation of the key of the folded block being read
    written = 0  # the last line of the folded block that holds words

    def flush(last: int) -> None:
        for part in re.split(r"\s(?:&&|\|\||;|\|)\s|;\s+|;\s*$", pending):
            out.append((first, last, part))

    number = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if folded is not None:
            if not line.strip() or len(line) - len(line.lstrip()) > folded:
                if line.strip():
                    first = first if pending else number
                    pending += line.strip() + " "
                    written = number
                continue
            folded = None  # the block ends at a line indented no deeper than its key
            if pending:
                flush(written)
                pending = ""
        if not pending and ">" in line:
            key = _FOLDED_KEY().match(line)
            if key is not None:
                folded = len(key.group(1))
                continue
        if not pending:
            first = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        pending += line
        flush(number)
        pending = ""
    if pending:
        flush(written if folded is not None else number)
    return out


def parse(command: str, line: int = 0) -> Optional[Launch]:
    """The script or module a command launches, or None."""
    text = command.strip().lstrip("!").strip()
    if text.startswith("- "):  # a YAML list item: `- python train.py`
        text = text[2:]
    text = re.sub(r"^(?:run|script|command|cmd)\s*:\s*", "", text)  # a YAML key holding one command
    if text.startswith("%run "):
        words = _split(text[5:])
        return Launch(words[0], None, tuple(words[1:]), line) if words and words[0].endswith(".py") else None
    words = _split(text)
    i = 0
    # env-var assignments and wrappers before the command (`CUDA_VISIBLE_DEVICES=0 srun python x.py`)
    while i < len(words) and (re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[i]) or words[i] in _WRAPPERS):
        wrapper = words[i] in _WRAPPERS
        i += 1
        while wrapper and i < len(words) and words[i].startswith("-"):  # `srun --gres=gpu:8 python x.py`
            i += 1
    if i + 1 < len(words) and words[i] == "uv" and words[i + 1] == "run":
        i += 2
    if i >= len(words):
        return None
    head = os.path.basename(words[i])
    if PYTHONS().match(head):
        return _after_python(words, i + 1, line)
    if head == "accelerate" and i + 1 < len(words) and words[i + 1] == "launch":
        return _after_options(words, i + 2, _ACCELERATE_VALUED, line, "accelerate")
    if head == "torchrun":
        return _after_options(words, i + 1, _TORCHRUN_VALUED, line, "torchrun")
    if head == "deepspeed":
        return _after_options(words, i + 1, _DEEPSPEED_VALUED, line, "deepspeed")
    return None


def _split(text: str) -> List[str]:
    import shlex  # only where a launch command is read

    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return text.split()


def _after_python(words: List[str], i: int, line: int) -> Optional[Launch]:
    while i < len(words):
        word = words[i]
        if word == "-m" and i + 1 < len(words):
            module = words[i + 1]
            if module in _DISTRIBUTED_MODULES:  # `python -m torch.distributed.run [opts] train.py`
                accelerate = module.startswith("accelerate")
                valued = _ACCELERATE_VALUED if accelerate else _TORCHRUN_VALUED
                return _after_options(words, i + 2, valued, line, "accelerate" if accelerate else "torchrun")
            return Launch(None, module, tuple(words[i + 2:]), line, "python")
        if word == "-c":
            return None
        if word.startswith("-"):
            i += 2 if word in _PYTHON_VALUED else 1
            continue
        return _script(words, i, line, "python")
    return None


def _after_options(words: List[str], i: int, valued: frozenset, line: int, launcher: str) -> Optional[Launch]:
    start = i
    flag = False  # the word before is an option of theirs this table does not know
    while i < len(words):
        word = words[i]
        if word in ("-m", "--module") and i + 1 < len(words):  # `torchrun -m pkg.train`
            return Launch(None, words[i + 1], tuple(words[i + 2:]), line, launcher, tuple(words[start:i]))
        if word.startswith("-"):
            flag = word not in valued and "=" not in word
            i += 2 if word in valued else 1
            continue
        if flag and not word.endswith(".py"):  # `--fsdp_version 2`: the unknown option's value
            flag = False
            i += 1
            continue
        return _script(words, i, line, launcher, tuple(words[start:i]))
    return None


def _script(words: List[str], i: int, line: int, launcher: str, launcher_args: Tuple[str, ...] = ()) -> Optional[Launch]:
    script = words[i]
    script = _ROOT_VARIABLE().sub("/", script, count=1)  # `$ROOT/train/sft.py`: a path under some folder
    if "$" in script or not script.endswith(".py"):
        return None  # `python $SCRIPT`: not known
    return Launch(script, None, tuple(words[i + 1:]), line, launcher, launcher_args)


def passed_options(args: Iterable[str]) -> Dict[str, Optional[str]]:
    """The long options a launch passes its script, by name (``--torch-dtype`` and
    ``--torch_dtype`` are one name: ``torch_dtype``): ``--name value`` and ``--name=value``
    give the value, a bare ``--flag`` (followed by another option or nothing) gives "" (a
    ``store_true`` switch, or a bool dataclass field, turned on); a value that is a shell
    variable (``--lr $LR``) is not known: None. Words that are not options (positional
    arguments) are stepped over; an option passed twice keeps its last value, as argparse
    does."""
    words = list(args)
    out: Dict[str, Optional[str]] = {}
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not word.startswith("--") or word == "--":
            continue
        name, eq, value = word[2:].partition("=")
        if not name or "$" in name:
            continue
        name = name.replace("-", "_")
        if not eq:
            if i < len(words) and not words[i].startswith("--"):
                value = words[i]
                i += 1
            else:
                value = ""
        out[name] = None if "$" in value or "`" in value else value
    return out


def option_span(text: str, launch: Launch, name: str, value: str = "") -> Optional[Tuple[int, int, int, int]]:
    """``(line, column, start, end)`` (1-based line, 0-based column, offsets in ``text``) of
    ``--name`` (and its ``value`` when on the same line) in ``launch``'s command in ``text``,
    looked for from the command's first line on."""
    pattern = re.compile(r"(?<!\S)--" + "[-_]".join(re.escape(p) for p in name.split("_")) + r"(?=[=\s]|$)")
    offset = 0
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        if number >= launch.line:
            found = pattern.search(line)
            if found is not None:
                end = found.end()
                at = line.find(value, end) if value else -1
                if at >= 0 and not line[end:at].strip(" =\"'"):
                    end = at + len(value)
                return number, found.start(), offset + found.start(), offset + end
        offset += len(line)
    return None


def option_words(text: str, launch: Launch) -> List[Tuple[int, Tuple[int, int, int, int]]]:
    """``(i, (line, column, start, end))`` for each long option ``launch.args[i]`` passes its
    script (``--name``, ``--name=value``), where it is written in ``text``: looked for in
    order from the script's (or the ``-m`` module's) word of the command on (the launcher's own options before it, an
    ``accelerate launch --fsdp_transformer_layer_cls_to_wrap X`` of its own, are not the
    script's). The span is the option's word (up to ``=``). A word not found ends the search
    (its command is not written as read)."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    if launch.written is None or not 0 < launch.line < len(starts):
        return []
    cursor = starts[launch.line - 1]
    script = re.compile(r"(?<!\S)['\"]?" + re.escape(launch.written) + r"['\"]?(?=\s|$)")
    found = script.search(text, cursor)
    if found is None:
        return []
    cursor = found.end()
    out = []
    for i, word in enumerate(launch.args):
        if not word.startswith("--") or word == "--":
            continue
        name = word[2:].partition("=")[0]
        if not name or "$" in name:
            continue
        at = re.compile(r"(?<!\S)['\"]?(--" + re.escape(name) + r")(?=[=\s'\"]|$)").search(text, cursor)
        if at is None:
            break
        start, end = at.span(1)
        line = _line_at(starts, start)
        out.append((i, (line, start - starts[line - 1], start, end)))
        cursor = end
    return out


def command_end(text: str, line: int) -> int:
    """The last line of the command that begins on ``line`` (its ``\\`` continuations, the
    rest of its YAML folded block)."""
    return max((last for first, last, _ in _commands(text) if first == line), default=line)


def _line_at(starts: List[int], offset: int) -> int:
    import bisect

    return bisect.bisect_right(starts, offset)


def launches(text: str) -> List[Launch]:
    """Every launch in a shell-like text (a shell script, a Makefile's recipes, a YAML file's
    lines), with the shell variables assigned above it written out (``script=train/sft.py`` ...
    ``torchrun ${script} --bf16 True``; ``ARGS="--precision bf16"`` ... ``python x.py $ARGS``)."""
    found = []
    variables: Dict[str, str] = {}
    moves = _Moves()
    for line, command in commands(text):
        if "=" in command and _assigns(command, variables):
            continue
        if "$" in command and variables:
            command = _expanded(command, variables)
        if moves.read(line, command):
            continue
        launch = parse(command, line)
        if launch is not None:
            found.append(replace(launch, folder=moves.folder) if moves.folder else launch)
    return found


class _Moves:
    """The folder the commands of a launcher run in, as its ``cd`` / ``pushd`` / ``popd`` and a
    notebook's ``%cd`` leave it, relative to the launcher's folder (None: not known). A
    notebook's ``!`` line runs in a shell of its own: a ``cd`` in it (``!cd src && python
    train.py``) moves that line's later commands only."""

    def __init__(self) -> None:
        self.folder: Optional[str] = ""
        self._stack: List[Optional[str]] = []
        self._bang: Optional[Tuple[int, Optional[str]]] = None  # (the `!` line, the folder before it)

    def read(self, line: int, command: str) -> bool:
        """Follow ``command`` (on ``line``); whether it only moved the folder."""
        if self._bang is not None and line != self._bang[0]:
            self.folder, self._bang = self._bang[1], None
        text = command.strip()
        if text.startswith("!") and self._bang is None:
            self._bang = (line, self.folder)
        words = text.lstrip("!").split()
        if not words or words[0] not in ("cd", "%cd", "pushd", "popd"):
            return False
        if words[0] == "popd":
            self.folder = self._stack.pop() if self._stack else None
            return True
        if words[0] == "pushd":
            self._stack.append(self.folder)
        target = words[1].strip("\"'") if len(words) == 2 else None
        if target is None or self.folder is None or not _RELATIVE_FOLDER().match(target):
            self.folder = None  # `cd`, `cd ~`, `cd $ROOT/src`, `cd /content/repo`, `cd -`: not known
        else:
            self.folder = os.path.normpath(os.path.join(self.folder, target))
            self.folder = "" if self.folder == "." else self.folder
        return True


# a folder named relative to where the command runs (`src`, `../code`, `./scripts/`)
_RELATIVE_FOLDER = lazy(r"^(?!-)(?:\.{1,2}|[\w.-]+)(?:/(?:\.{1,2}|[\w.-]+))*/?$")


def expanded_commands(text: str) -> List[str]:
    """The commands of a shell-like text (:func:`commands`) with the shell variables assigned
    above each written out (``TRANSFORMERS_VERSION="4.41.2"`` ... ``pip install
    "transformers==${TRANSFORMERS_VERSION}"``); the assignments themselves left out."""
    out = []
    variables: Dict[str, str] = {}
    for _, command in commands(text):
        if "=" in command and _assigns(command, variables):
            continue
        out.append(_expanded(command, variables) if "$" in command and variables else command)
    return out


# a variable that opens a path (`$ROOT/`, `${work_dir}/`): the folder the project is cloned to
_ROOT_VARIABLE = lazy(r"^\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)/")
_ASSIGNMENT = lazy(r"^(?:export\s+|readonly\s+|local\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)
_VARIABLE = lazy(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def _assigns(command: str, variables: Dict[str, str]) -> bool:
    """Whether ``command`` only assigns a shell variable (``script=$root/train.py``,
    ``export ARGS="--bf16 True"``); its value, with the variables known above it written out,
    is kept in ``variables``. A value made by a command (`` `...` ``, ``$(...)``) is not known:
    the variable is forgotten."""
    found = _ASSIGNMENT().match(command.strip())
    if found is None:
        return False
    name, value = found.group(1), found.group(2).strip()
    if re.search(r"\s", value) and not (value[:1] in ("'", '"') and value[-1:] == value[:1]):
        return False  # `FOO=1 python x.py`: a prefix of a command, not an assignment alone
    if "`" in value or "$(" in value:
        variables.pop(name, None)
        return True
    if value[:1] == "'" and value[-1:] == "'":
        variables[name] = value[1:-1]
        return True
    if value[:1] == '"' and value[-1:] == '"':
        value = value[1:-1]
    value = _expanded(value, variables)
    if "$" in _ROOT_VARIABLE().sub("/", value, count=1):
        variables.pop(name, None)  # `STRAT=$1`: what the script is given, not known here
    else:
        variables[name] = value
    return True


def _expanded(text: str, variables: Dict[str, str]) -> str:
    """``text`` with each ``$NAME`` / ``${NAME}`` whose value is known written out."""
    return _VARIABLE().sub(lambda m: variables.get(m.group(1) or m.group(2), m.group(0)), text)


def scripts_of(found: Iterable[Launch], folders: Iterable[str]) -> List[str]:
    """The absolute paths the launched script files may be, from each of ``folders`` (where
    the command may run: its file's folder, the project's root)."""
    out = []
    for launch in found:
        if launch.script is None:
            continue
        for folder in folders:
            out.append(os.path.normpath(os.path.join(folder, launch.script)))
    return out
