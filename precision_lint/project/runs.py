"""Runs: which code executes together in one process, and whether that process trains.

A *run* is an entry (a script, a console-script function, a notebook, a test file), the
module-level code of every module it imports — never their ``if __name__ == "__main__":``
blocks — and what is reachable from the entry (``callgraph.py``). A rule that joins facts of
several files asks its questions per run: a float16 model and a GradScaler crash together
only when one run holds both *and steps an optimizer* (``ValueError: Attempting to unscale
FP16 gradients.`` is raised by ``unscale_`` before ``optimizer.step()``). An inference
script that builds ``Accelerator(mixed_precision="fp16")`` to generate, a LoRA merge CLI
and a benchmark of a model library train nothing.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Tuple

from ..facts.model import ModuleFacts
from .options import from_launcher
from ..semantic.values import CONST, DTYPE, dtype_of_string

if TYPE_CHECKING:  # the extractor (and LibCST) is loaded by the facts it made, never to judge
    from ..facts.extractors.training import TrainingSite

TRAINING = "training"  # training.SECTION


def training_site(
    project, entry: ModuleFacts, module: ModuleFacts, scope: str, line: int, paths=None
) -> Optional[Tuple[ModuleFacts, TrainingSite]]:
    """Where the run of ``entry`` trains, in a way that runs together with the code of
    ``scope`` (at ``line`` of ``module``): an optimizer built, a trainer built, a backward
    pass, a Lightning hook; or a Trainer's configuration (``TrainingArguments``), which is
    only ever built to train. None when the run trains nothing there.

    Without ``paths`` (the entry's own unit) the answer depends on the entry, the module and
    the scope the line runs under alone: it is worked out once for them (the weights sites of
    one function are asked about in every run that holds them)."""
    here = project.run_scope(module, scope, line)
    if paths is None:
        return project.memo(
            ("training site", entry.path, module.path, here),
            lambda: _training_site(project, entry, module, here, project.unit_view(entry)),
        )
    return _training_site(project, entry, module, here, paths)


def _training_site(project, entry: ModuleFacts, module: ModuleFacts, here: str, paths) -> Optional[Tuple[ModuleFacts, TrainingSite]]:
    if not project.callgraph.entries(here, paths, entry.path):
        # the code at `here` never runs in this run (a method of a class it never builds):
        # nothing runs together with it, and no training site need be asked about
        return None
    runs_together = project.callgraph.runs_together
    for other in project.joined_modules(module, TRAINING, "precision"):
        if other.path not in paths:
            continue
        for site in other.section(TRAINING):
            if runs_together(paths, here, project.run_scope(other, site.scope, site.span.line), entry.path):
                return other, site
        for site in other.section("precision"):
            if site.kind not in ("training-args", "training-args-class"):
                continue
            if runs_together(paths, here, project.run_scope(other, site.scope, site.span.line), entry.path):
                from ..facts.extractors.training import TrainingSite

                return other, TrainingSite("trainer", site.span, site.scope, site.callee)
    return None


def run_name(entry: ModuleFacts) -> str:
    """How a message names the run of ``entry``: its file name (``train.py``)."""
    return entry.path.replace("\\", "/").rsplit("/", 1)[-1]


def value_in_run(project, value, paths) -> bool:
    """Whether ``value`` (an atom substituted at the join) is one the run of ``paths`` passes:
    a value a caller in another linted module passes reaches the helper only in runs that hold
    that caller (``load_vae(path, torch.float16)`` in the caching script and
    ``load_vae(path, torch.float32)`` in the training script: each run has its own). A value
    passed through callers (``via``) needs every one of them in the run: a float16 model that a
    shared loader makes with the dtype an export script passes is that script's."""
    # a value a shipped launch passes is written in its launcher (a notebook the check may lint
    # too): it is the run of the script that launch runs
    written = "" if from_launcher(value) else getattr(value, "where", "")
    for where in (written, *sorted(getattr(value, "via", ()))):
        module = project.module_at(where) if where else None
        if module is not None and module.path not in paths:
            return False  # a config file, or code written here, is in every run
    return True


def half_in_run(project, values, paths) -> bool:
    """Whether one of the float16 ``values`` of a weights site is passed in the run of ``paths``."""
    return any(
        value_in_run(project, v, paths)
        for v in values
        if v.kind in (DTYPE, CONST) and (v.value == "float16" if v.kind == DTYPE else dtype_of_string(v.value) == "float16")
    )


def trained_in_run(project, module: ModuleFacts, weights, entry: ModuleFacts, paths=None) -> str:
    """What trains the object a weights site of ``module`` casts or loads, in the run of
    ``entry``: the code that hands its parameters to an optimizer in this module, or a
    derivation across functions (``project/trained.py``) whose code all runs in this run;
    "" when nothing in the run is seen training it."""
    if paths is None:
        paths = project.unit_view(entry)

    def runs(witnesses) -> bool:
        for path, scope in witnesses:
            if path not in paths:
                return False
            other = project.by_path.get(path)
            if other is None or not project.callgraph.entries(scope, paths, entry.path):
                return False
        return True

    if weights.trained and runs({(module.path, weights.trained_scope)}):
        return weights.trained
    return project.trained.trained(weights.trained_if, module, runs)
