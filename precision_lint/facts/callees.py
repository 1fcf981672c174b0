"""Which calls may reach project code, and under which name.

``load_student(...)`` imported from ``loaders`` names ``loaders.load_student``; a call into
a library (``torch``, ``transformers``, ``os``...) never reaches project code, and neither
does a method of an object the module cannot name. Both the call records (``calls.py``)
and the evaluator (what a project function returns) ask this.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from .index import CallSite, ModuleIndex

# Calls into these libraries never reach project code.
LIBRARIES = frozenset(
    {
        "torch", "transformers", "trl", "accelerate", "peft", "datasets", "numpy", "np", "os", "sys",
        "json", "yaml", "re", "math", "random", "logging", "time", "argparse", "pathlib", "typing",
        "collections", "itertools", "functools", "dataclasses", "bitsandbytes", "deepspeed", "lightning",
        "pytorch_lightning", "tqdm", "wandb", "evaluate", "sklearn", "pandas", "tokenizers", "safetensors",
        "diffusers", "huggingface_hub", "builtins", "subprocess", "shutil", "copy", "warnings",
    }
)


def project_callee(index: ModuleIndex, site: CallSite) -> Optional[str]:
    """The callee as a qualified name in this module's namespace, or None (a library, a builtin,
    an unknown object)."""
    if site.qualname:
        return None if site.qualname.split(".")[0] in LIBRARIES else site.qualname
    receiver = site.receiver
    if site.method and isinstance(receiver, cst.Name):
        if receiver.value == "self" and site.klass:
            return f"{site.klass}.{site.method}"
        owner = site.scope.lookup_scope(receiver.value)
        bindings = owner.assignments.get(receiver.value, []) if owner is not None else []
        if len(bindings) == 1 and isinstance(bindings[0].value, cst.Call):  # d = Distiller(...); d.setup(x)
            made = index.call_of(bindings[0].value)
            if made is not None and made.qualname and made.qualname.split(".")[0] not in LIBRARIES:
                return f"{made.qualname}.{site.method}"
    return None
