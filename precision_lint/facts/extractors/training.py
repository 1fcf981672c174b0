"""Facts about where a run trains: what makes parameters get gradients and updates.

fp16 loss scaling fails only where an optimizer steps on parameters (``unscale_`` runs on
their gradients); a script that loads a model in float16 and builds an
``Accelerator(mixed_precision="fp16")`` to generate images never steps, so it never fails.
Recorded per file, unjudged; the join (``training.py`` of the project layer) decides which
run each belongs to. A *training site* is one of:

- ``optimizer``: an optimizer is built (``torch.optim.*``, bitsandbytes' and timm's
  optimizers, ``create_optimizer``, ``deepspeed.initialize``);
- ``trainer``: a trainer that trains what it is given is built (transformers' ``Trainer``
  and its subclasses, TRL's trainers, Lightning's ``Trainer`` — any class named ``*Trainer``);
- ``backward``: a backward pass (``loss.backward()``, ``accelerator.backward(loss)``,
  ``fabric.backward(loss)``, ``self.manual_backward(loss)``);
- ``lightning-hook``: a ``configure_optimizers`` or ``training_step`` method (the Lightning
  or Fabric loop calls it).
"""
from __future__ import annotations

from ..._dataclass import dataclass
from typing import List

from ...diagnostics import Span
from ...semantic.evaluate import Evaluator
from ...semantic.index import ModuleIndex
from ...semantic.names import dotted
from ...semantic.training_state import is_optimizer, is_trainer

SECTION = "training"
EMPTY = ()

HOOKS = ("configure_optimizers", "training_step")


@dataclass(frozen=True)
class TrainingSite:
    """Evidence that the code trains (an optimizer, a trainer, a backward pass, a Lightning
    hook): fp16 loss scaling only fails where an optimizer steps."""

    kind: str  # "optimizer", "trainer", "backward", "lightning-hook"
    span: Span
    scope: str  # the function (or module) whose code it is
    text: str  # what it is, as written (`torch.optim.AdamW`, `loss.backward()`)


def extract(index: ModuleIndex, evaluator: Evaluator):
    out: List[TrainingSite] = []
    for site in index.calls:
        q = site.qualname or ""
        named = q or dotted(site.node.func) or ""  # a project subclass `DistillTrainer(...)` too
        kind = ""
        if q and is_optimizer(q):
            kind = "optimizer"
        elif named and is_trainer(named):
            kind = "trainer"
        elif site.method in ("backward", "manual_backward") or q.endswith((".backward", ".manual_backward")):
            kind = "backward"
        if kind:
            text = named or site.method or ""
            out.append(TrainingSite(kind, index.span(site.node), site.scope.code_scope().qualname, text))
    for qualname, scope in index.functions.items():
        if qualname.rsplit(".", 1)[-1] in HOOKS and "." in qualname:
            out.append(TrainingSite("lightning-hook", index.name_span(scope.node), qualname, qualname.rsplit(".", 1)[-1]))
    return tuple(out)

