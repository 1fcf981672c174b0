"""Facts about ``accelerate launch`` commands written in the code (read by MP102).

An accelerate config file (the YAML ``accelerate config`` writes) is tied to a training
script only by the command that launches it: ``accelerate launch --config_file
configs/fp16.yaml train.py``. accelerate itself never looks for one in a project: without
``--config_file`` it reads ``default_config.yaml`` under ``$HF_HOME/accelerate`` (or
``$XDG_CACHE_HOME/huggingface/accelerate``, ``~/.cache/huggingface/accelerate``), which is
the user's, not the project's. Shell scripts and READMEs are not linted, so what is
recorded here is a launch command built in Python: ``subprocess.run([...])``,
``subprocess.Popen``, ``check_call``, ``check_output``, ``call`` and ``os.system``, with the
command a list of strings or one string, every word up to the script known, and a ``cwd=``
the paths are then read from (a ``cwd`` that is not known: not recorded). Nothing is judged
here: the rule reads the config file and the script.
"""
from __future__ import annotations

import ast
import os
import shlex
from ..._dataclass import dataclass
from typing import List, Optional, Sequence, Tuple

from ...diagnostics import Span
from ...semantic.evaluate import Evaluator
from ...semantic.index import ModuleIndex, positional
from ...semantic.queries import sole_binding
from ...semantic.values import CONST

SECTION = "accelerate_launches"
EMPTY = ()

RUNNERS = (
    "subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
    "subprocess.Popen", "os.system",
)
LAUNCH_MODULE = "accelerate.commands.launch"


@dataclass(frozen=True)
class AccelerateLaunch:
    """``accelerate launch [options] script.py [script args]`` run from this module."""

    span: Span  # the runner's call
    script: str  # the training script as written (relative to where the command runs)
    config_file: Optional[str]  # `--config_file X`
    config_span: Optional[Span]  # where that path is written (None: inside one command string)
    mixed_precision: Optional[str]  # `--mixed_precision X`: wins over the config file
    mixed_precision_span: Optional[Span]


def _word(evaluator: Evaluator, expr: ast.expr, scope) -> Optional[str]:
    values = evaluator.values(expr, scope)
    if len(values) == 1 and values[0].kind == CONST and isinstance(values[0].value, str) and not values[0].guards:
        return values[0].value
    return None


def command_words(index: ModuleIndex, evaluator: Evaluator, expr: ast.expr, scope):
    """The command's words with the span of each (None when a word is not known), or None."""
    if isinstance(expr, ast.Name):  # `cmd = [...]` once, then `subprocess.run(cmd)`
        binding = sole_binding(index, expr, scope)
        if binding is not None and isinstance(binding.value, (ast.List, ast.Tuple)) and not binding.guards:
            expr = binding.value
    if isinstance(expr, (ast.List, ast.Tuple)):
        words: List[Tuple[Optional[str], Optional[Span]]] = []
        for element in expr.elts:
            if isinstance(element, ast.Starred):  # `*extra`: its words are not known
                words.append((None, None))
                continue
            words.append((_word(evaluator, element, scope), index.span(element)))
        return words
    text = _word(evaluator, expr, scope)
    if text is None:
        return None
    try:
        return [(w, None) for w in shlex.split(text)]
    except ValueError:
        return None


def runner_command(index: ModuleIndex, evaluator: Evaluator, site):
    """The words of the command a runner call runs (``subprocess.run([...])``, ``os.system("...")``:
    :func:`command_words`), or None for another call or a command not known."""
    if site.qualname not in RUNNERS:
        return None
    given = positional(site.node) or [k.value for k in site.node.keywords if k.arg == "args"]
    return command_words(index, evaluator, given[0], site.scope) if given else None


def _launch_words(words) -> Optional[int]:
    """Where the launcher's own options start: after ``accelerate launch`` or
    ``python -m accelerate.commands.launch``."""
    for i, (word, _) in enumerate(words[:-1]):
        if word is None:
            continue  # `sys.executable`: the interpreter's path is not needed
        if word.rsplit("/", 1)[-1] == "accelerate" and words[i + 1][0] == "launch":
            return i + 2
        if word == "-m" and words[i + 1][0] == LAUNCH_MODULE:
            return i + 2
    return None


def parse_launch(words: Sequence[Tuple[Optional[str], Optional[Span]]]):
    """(script, config, config span, mixed precision, its span) of a launch command, or None."""
    start = _launch_words(list(words))
    if start is None:
        return None
    found = {"--config_file": (None, None), "--mixed_precision": (None, None)}
    i = start
    while i < len(words):
        word = words[i][0]
        if word is None:
            return None  # an unknown option before the script: it might be --config_file
        if word in ("-m", "--module"):
            return None  # a module, not a script file
        name, eq, value = word.partition("=")
        if name in found:
            if eq:
                found[name] = (value, None)
            elif i + 1 < len(words) and words[i + 1][0] is not None:
                found[name] = words[i + 1]
                i += 1
            else:
                return None
        elif not word.startswith("-") and word.endswith(".py"):
            (config, config_span), (precision, precision_span) = found["--config_file"], found["--mixed_precision"]
            return word, config, config_span, precision, precision_span
        i += 1
    return None


def extract(index: ModuleIndex, evaluator: Evaluator):
    out = []
    for site in index.calls:
        words = runner_command(index, evaluator, site)
        if not words:
            continue
        parsed = parse_launch(words)
        if parsed is None:
            continue
        script, config, config_span, precision, precision_span = parsed
        cwd = next((k for k in site.node.keywords if k.arg == "cwd"), None)
        if cwd is not None:  # `cwd="examples"`: the command's paths are read from there
            folder = _word(evaluator, cwd.value, site.scope)
            if folder is None:
                continue
            script = os.path.join(folder, script)
            config = os.path.join(folder, config) if config else config
        out.append(AccelerateLaunch(index.span(site.node), script, config, config_span, precision, precision_span))
    return tuple(out)
