"""Which functions return the parameters of one of their arguments (read by MP104).

``def lowrank_params(net): return [p for n, p in net.named_parameters() if "lora_" in n]``
hands its caller ``net``'s parameters: an optimizer built over what it returns
(``AdamW(lowrank_params(model))``) updates ``model``'s parameters, in whatever dtype ``model``
has. Recorded per function, as the references callers reach its parameters by; the optimizer's
module asks at the join, whatever module defines the helper.
"""
from __future__ import annotations

from typing import Tuple

from ...semantic.evaluate import Evaluator
from ...semantic.index import ModuleIndex
from ...semantic.values import ParamRef
from .optimizers import parameter_of, parameter_owners

SECTION = "parameter_returns"
EMPTY = ()


def extract(index: ModuleIndex, evaluator: Evaluator) -> Tuple[Tuple[str, Tuple[ParamRef, ...]], ...]:
    """``(function, the parameters whose parameters it returns)`` for each function that
    returns ``p.parameters()`` / ``p.named_parameters()`` of a parameter ``p`` (or a list,
    filter or comprehension over them)."""
    out = []
    for qualname, function in index.functions.items():
        if not function.returns:
            continue
        names = {o for value, _ in function.returns for o in parameter_owners(index, value, function)}
        refs = tuple(ref for n in sorted(names) if (ref := parameter_of(function, n)) is not None)
        if refs:
            out.append((qualname, refs))
    return tuple(out)
