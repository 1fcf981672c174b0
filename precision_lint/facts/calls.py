"""Call records: what each call of project code passes, for parameters resolved at the join.

A parameter's value is unknown inside its function (``def load_student(name, dtype)``);
its callers know it (``load_student("s", torch.float16)`` in another file). Each file
records, for the calls that may reach project code, the arguments that can carry a
precision: anything a dtype may reach, literals, and parameters passed on as they are
(so chains of helpers are followed). ``interproc.py`` substitutes them at the join.
"""
from __future__ import annotations

from typing import List, Optional

import libcst as cst

from .evaluate import Evaluator
from .index import CallSite, ModuleIndex
from .model import CallArg, CallRecord

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
_LITERALS = (cst.SimpleString, cst.Integer, cst.Float, cst.ConcatenatedString)


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


def _worth_recording(evaluator: Evaluator, expr: cst.BaseExpression, site: CallSite) -> bool:
    if isinstance(expr, _LITERALS):
        return True
    if isinstance(expr, cst.Name):
        if expr.value in ("True", "False"):
            return True
        owner = site.scope.lookup_scope(expr.value)
        if owner is not None and expr.value in owner.params:
            return True  # passed on as it is: a chain of helpers
    return evaluator.mentions_dtype(expr, site.scope)


def call_records(index: ModuleIndex, evaluator: Evaluator) -> tuple:
    out: List[CallRecord] = []
    for site in index.calls:
        callee = project_callee(index, site)
        if callee is None:
            continue
        args: List[CallArg] = []
        position = 0
        for arg in site.node.args:
            if arg.star == "**":
                continue  # its entries come below, with the dict's own keys
            if arg.star:
                break  # `*args`: the positions after it are unknown
            if _worth_recording(evaluator, arg.value, site):
                values = evaluator.values(arg.value, site.scope)
                if arg.keyword is not None:
                    args.append(CallArg(None, arg.keyword.value, values))
                else:
                    args.append(CallArg(position, None, values))
            if arg.keyword is None:
                position += 1
        if any(arg.star == "**" for arg in site.node.args):
            for source in evaluator.kwarg_sources(site.node, site.scope):
                if source.via != "keyword" and _worth_recording(evaluator, source.value, site):
                    args.append(CallArg(None, source.name, evaluator.values(source.value, site.scope)))
        if args:
            out.append(CallRecord(callee, tuple(args), evaluator.guards_of(site.guards, site.scope)))
    return tuple(out)



def call_edges(index: ModuleIndex) -> tuple:
    """``(caller, callee)`` for the call graph: the function (or module) a call runs in, and
    what it calls or hands over to be called (``fire.Fire(main)``, ``Thread(target=run)``,
    ``app.command()(train)``): a function passed as an argument is a callee too."""
    edges = set()
    for site in index.calls:
        caller = site.scope.code_scope().qualname
        callee = project_callee(index, site)
        if callee is not None:
            edges.add((caller, callee))
        for arg in site.node.args:
            if isinstance(arg.value, (cst.Name, cst.Attribute)):
                target = index.qualify(arg.value, site.scope)
                if target is not None and target.split(".")[0] not in LIBRARIES:
                    edges.add((caller, target))
    return tuple(sorted(edges))
