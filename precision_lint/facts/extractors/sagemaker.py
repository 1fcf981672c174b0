"""Training jobs a SageMaker estimator launches: the script, its container's versions, its GPU.

``HuggingFace(entry_point="train.py", source_dir="./scripts", transformers_version="4.26",
pytorch_version="1.13", instance_type="ml.p3.2xlarge").fit()`` runs ``scripts/train.py`` in
Hugging Face's training container of transformers 4.26 and torch 1.13, on a V100. The script
states none of it: the estimator, in a notebook or a launcher script beside it, is the run it
is written for. SageMaker's toolkit installs the ``requirements.txt`` of ``source_dir`` with
``pip install -r`` (no ``--upgrade``), so a library that file leaves unpinned stays at the
container's version, and one it pins is what the file says (the join intersects both).
``PyTorch(entry_point=..., framework_version="2.1")`` is the same with torch alone. Either's
``py_version="py38"`` is the container's Python, which caps what pip installs there (transformers
4.46.3 is the last release for Python 3.8).

Recorded: the script as the estimator names it (relative to the launcher's folder), the
versions each keyword gives (only literal strings), and the capability of the instance's GPU
(``hardware.instance_capability``). Nothing is judged here: the join reads the versions as
the run's pins, and the capability extractor reads the script and the GPU as a launch.
"""
from __future__ import annotations

import os
from typing import List, Optional, Tuple

from ..._dataclass import dataclass
from ...diagnostics import Span
from ...semantic.evaluate import Evaluator
from ...semantic.index import ModuleIndex, keyword
from ...semantic.values import CONST
from ...workspace import hardware

SECTION = "estimators"
EMPTY = ()

# estimator class -> {keyword: the library whose version it names}
ESTIMATORS = {
    "sagemaker.huggingface.HuggingFace": {"transformers_version": "transformers", "pytorch_version": "torch"},
    "sagemaker.huggingface.estimator.HuggingFace": {"transformers_version": "transformers", "pytorch_version": "torch"},
    "sagemaker.pytorch.PyTorch": {"framework_version": "torch"},
    "sagemaker.pytorch.estimator.PyTorch": {"framework_version": "torch"},
}


@dataclass(frozen=True)
class EstimatorLaunch:
    """One estimator of this module and the job it runs."""

    span: Span  # the estimator's call
    script: str  # `source_dir/entry_point`, as written (relative to where the notebook runs)
    versions: Tuple[Tuple[str, str], ...]  # (library, version) of the container: ("transformers", "4.26")
    capability: Optional[int]  # the GPU of `instance_type`; None: none named, or not known


def extract(index: ModuleIndex, evaluator: Evaluator) -> Tuple[EstimatorLaunch, ...]:
    if not any((site.qualname or "").startswith("sagemaker.") for site in index.calls):
        return EMPTY
    return tuple(launch for launch in map(lambda site: _launch(index, evaluator, site), index.calls) if launch is not None)


def _launch(index: ModuleIndex, evaluator: Evaluator, site) -> Optional[EstimatorLaunch]:
    versioned = ESTIMATORS.get(site.qualname or "")
    if versioned is None:
        return None
    entry = _string(evaluator, site, "entry_point")
    if entry is None or not entry.endswith(".py"):
        return None  # a shell entry point, or one not known
    folder = _string(evaluator, site, "source_dir")
    if folder is None and keyword(site.node, "source_dir") is not None:
        return None  # a source folder not known (an S3 tarball, a variable)
    script = os.path.normpath(os.path.join(folder, entry)) if folder else entry
    versions: List[Tuple[str, str]] = []
    for name, dist in versioned.items():
        version = _string(evaluator, site, name)
        if version is not None and version[:1].isdigit():
            versions.append((dist, version))
    python = _string(evaluator, site, "py_version")  # `py_version="py38"`: the container's Python 3.8
    if python is not None and python[:3] == "py3" and python[3:].isdigit():
        versions.append(("python", f"3.{python[3:]}"))
    instance = _string(evaluator, site, "instance_type")
    capability = hardware.instance_capability(instance) if instance else None
    return EstimatorLaunch(index.span(site.node), script, tuple(versions), capability)


def _string(evaluator: Evaluator, site, name: str) -> Optional[str]:
    """The one literal string the keyword ``name`` of the call is given, else None."""
    given = keyword(site.node, name)
    if given is None:
        return None
    values = evaluator.values(given.value, site.scope)
    if len(values) == 1 and values[0].kind == CONST and isinstance(values[0].value, str):
        return values[0].value
    return None
