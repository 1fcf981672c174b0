"""Facts about Adam-family optimizers and their ``eps`` (read by MP104).

Recorded per file, unjudged: each construction of an Adam-family optimizer
(torch, transformers, bitsandbytes) with the possible values of its ``eps``
(its default when not given), where a fix edits or adds it, the names whose
``.parameters()`` it updates (``model.parameters()``, a list or param groups built
from ``model.named_parameters()``), and whether apex's ``amp.initialize`` gives it
float32 master weights (``opt_level="O2"``, or ``master_weights=True``): apex then
points the optimizer at float32 copies of the float16 parameters, so its eps is
used in float32. Whether those parameters are float16 is judged with the weights
facts.
"""
from __future__ import annotations

from ..._dataclass import dataclass
from typing import List, Optional, Tuple

import ast

from ...diagnostics import Span
from ...semantic.evaluate import Evaluator, param_ref
from ...semantic.index import ModuleIndex, keyword, nodes_of, positional, unstarred
from ...semantic.literal_tests import guards_text
from ...semantic.names import dotted
from ...semantic.queries import binding_scope, reaching_values
from ...semantic.values import CONST, ParamRef
from .precision import _insertion, is_training_args, keyword_text

SECTION = "optimizers"
EMPTY = ()

DEFAULT_EPS = 1e-8
ADAM_FAMILY = frozenset(
    {
        "torch.optim.Adam", "torch.optim.AdamW", "torch.optim.adam.Adam", "torch.optim.adamw.AdamW",
        "torch.optim.NAdam", "torch.optim.RAdam", "torch.optim.Adamax",
        "transformers.AdamW", "transformers.optimization.AdamW",
        "bitsandbytes.optim.Adam", "bitsandbytes.optim.AdamW", "bitsandbytes.optim.Adam32bit",
        "bitsandbytes.optim.AdamW32bit", "bitsandbytes.optim.PagedAdam", "bitsandbytes.optim.PagedAdamW",
        "bitsandbytes.optim.PagedAdamW32bit",
    }
)
EPS_POSITION = 3  # (params, lr, betas, eps, ...) in every optimizer above
PARAMETER_METHODS = frozenset({"parameters", "named_parameters"})


@dataclass(frozen=True)
class AdamSite:
    """An Adam-family optimizer and the ``eps`` it uses: ``1e-8`` rounds to zero in float16,
    so Adam's update over float16 state can divide by zero; the parameters' dtype is judged with
    the weights facts."""

    callee: str
    span: Span  # the call
    func_span: Span
    eps: Tuple[Optional[float], ...]  # possible values (None: not a known number)
    eps_span: Optional[Span]  # the eps value as written (None: the default is used)
    eps_text: str
    insert_at: int  # where `eps=` can be added
    insert_style: str  # see PrecisionSite.keyword_text
    owners: Tuple[str, ...]  # `model` for `model.parameters()`
    scope: str
    fp32_master: bool = False  # handed to apex `amp.initialize` with float32 master weights
    # the owners that are parameters of the function the optimizer is built in (`def fit(net):
    # AdamW(net.parameters())`): what its callers pass is judged at the join
    owner_params: Tuple[ParamRef, ...] = ()
    # the project calls its params come from (`params = lowrank_params(net)`): (callee, its
    # arguments as (position, keyword, the name passed, that name's reference where it is a
    # parameter of the optimizer's function)); the join asks the callee what it returns
    owner_calls: Tuple[Tuple[str, Tuple[Tuple[Optional[int], Optional[str], str, Optional[ParamRef]], ...]], ...] = ()
    # the keyword that sets eps where a fix writes it: `eps` of the optimizer's call, or
    # `adam_epsilon` of the TrainingArguments a Trainer builds its own AdamW from (there
    # `insert_at` is in that call: -1 where the Trainer is given none, and no fix is written)
    eps_keyword: str = "eps"
    # the optimizer a Trainer makes itself (`Trainer(model=model, args=args)`): its call
    trainer: str = ""
    # (owner, the scope whose binding of it the optimizer reads) for each owner that is a plain
    # name: a function's own `model` is not a `model` the module binds (a later notebook cell's)
    owner_scopes: Tuple[Tuple[str, str], ...] = ()
    # the tests it is built under, as written (``opt.optim == "adam"``): weights made float16
    # only under a test they contradict are never its parameters (``semantic.literal_tests``)
    built_if: str = ""
    # `fused=True` of torch's Adam/AdamW: one kernel that computes in float32 whatever the
    # parameters' dtype (eps 1e-8 is a float32 there) and takes a GradScaler's scale itself
    # (`_step_supports_amp_scaling`: `scaler.step` unscales nothing, so float16 gradients raise
    # nothing unless the code calls `scaler.unscale_`)
    fused: bool = False
    # a Trainer's own AdamW with no `optim` given: fused where the targeted transformers and torch
    # make that the default (knowledge `trainer_fused_default`: transformers 4.54 with torch 2.8)
    default_optim: bool = False
    # the receivers of the `x.step(optimizer)` calls that step it (`scaler.step(optimizer)`): a
    # GradScaler that is on unscales its float16 gradients first (MP101's ValueError)
    stepped_by: Tuple[str, ...] = ()

    def keyword_text(self, name: str, value: str) -> str:
        return keyword_text(self.insert_style, name, value)


def parameter_of(function, name: str) -> Optional[ParamRef]:
    """The reference callers reach ``name`` by, where it is a parameter of ``function`` (a
    function's scope; ``self`` and ``cls`` are none); None otherwise."""
    if function.kind != "function" or name not in function.params or name in ("self", "cls"):
        return None
    return param_ref(function, name)


def _owner_params(owners: Tuple[str, ...], function) -> Tuple[ParamRef, ...]:
    """The references of the owners that are parameters of ``function``."""
    return tuple(ref for o in owners if (ref := parameter_of(function, o)) is not None)


def _owner_calls(index: ModuleIndex, expr: Optional[ast.expr], scope, code):
    """The calls of functions the optimizer's params are, or a name bound to them is, with the
    names they pass (``AdamW(lowrank_params(net))``, ``params = lowrank_params(net)``)."""
    if expr is None:
        return ()
    values = [expr, *(reaching_values(index, expr, scope) if isinstance(expr, ast.Name) else ())]
    out = []
    for value in values:
        site = index.call_of(value) if isinstance(value, ast.Call) else None
        if site is None or not site.qualname:
            continue
        args = []
        passed = [(i, None, a) for i, a in enumerate(value.args)] + [(None, k.arg, k.value) for k in value.keywords if k.arg]
        for position, name, arg in passed:
            text = dotted(arg) if not isinstance(arg, ast.Starred) else None
            if text:
                args.append((position, name, text, parameter_of(code, text)))
        if args:
            out.append((site.qualname, tuple(args)))
    return tuple(out)


def parameter_owners(index: ModuleIndex, expr: Optional[ast.expr], scope) -> Tuple[str, ...]:
    """The receivers of the ``.parameters()`` / ``.named_parameters()`` calls the optimizer's
    params are built from, as dotted names, in the order written: in the expression itself
    (``model.parameters()``, ``chain(a.parameters(), b.parameters())``, ``[{"params": ...}]``,
    ``filter(lambda p: ..., model.parameters())``, a comprehension), or, for a name, in the
    values of its bindings that reach the call (``params = [p for p in model.parameters() if
    ...]``). Read from the tree: a comment or a string that mentions ``.parameters(`` is none."""
    if expr is None:
        return ()
    trees = [expr]
    if isinstance(expr, ast.Name):
        trees.extend(reaching_values(index, expr, scope))
    found: List[str] = []
    for tree in trees:
        for node in nodes_of(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in PARAMETER_METHODS
            ):
                owner = dotted(node.func.value)
                if owner is not None and owner not in found:
                    found.append(owner)
    return tuple(found)


APEX_INITIALIZE = frozenset({"apex.amp.initialize", "apex.amp.frontend.initialize"})
# wrappers that step float32 master copies of a float16 model's parameters (apex's legacy
# `fp16_utils`, as Megatron and Transformer-XL vendor it)
MASTER_WEIGHT_WRAPPERS = frozenset({
    "apex.fp16_utils.FP16_Optimizer", "apex.fp16_utils.fp16_optimizer.FP16_Optimizer", "apex.optimizers.FP16_Optimizer",
})
# apex's opt levels that keep float32 master weights unless ``master_weights=`` says otherwise
MASTER_WEIGHTS_LEVELS = frozenset({"O2"})


def _keeps_master_weights(call: ast.Call, evaluator: Evaluator, scope) -> bool:
    """Whether ``amp.initialize(...)`` certainly keeps float32 master weights: ``O2`` (its
    default) without ``master_weights=False``, or ``master_weights=True`` (O1 and O3 step the
    model's own parameters: a float16 model stays float16 for the optimizer)."""
    def consts(arg):
        values = evaluator.values(arg.value, scope)
        return {v.value for v in values} if values and all(v.kind == CONST for v in values) else None

    master = keyword(call, "master_weights")
    if master is not None:
        return consts(master) == {True}
    level = keyword(call, "opt_level")
    return level is not None and consts(level) is not None and consts(level) <= MASTER_WEIGHTS_LEVELS


def _returned_calls(index: ModuleIndex, call) -> set:
    """The ids of the calls a function of this module returns, where ``call`` calls one
    (``optimizer = get_optimizer(model, args)`` with ``return optim.Adam(...)`` or ``opt =
    Adam(...); return opt``): the optimizer it builds is the one handed over."""
    if not isinstance(call, ast.Call):
        return set()
    site = index.call_of(call)
    function = index.functions.get(site.qualname) if site is not None and site.qualname else None
    if function is None:
        return set()
    out = set()
    for value, _ in function.returns:
        if isinstance(value, ast.Call):
            out.add(id(value))
        elif isinstance(value, ast.Name):
            out.update(id(v) for v in reaching_values(index, value, function))
    return out


def _master_weight_optimizers(index: ModuleIndex, evaluator: Evaluator) -> set:
    """The ids of the optimizer constructions apex gives float32 master weights:
    ``amp.initialize(model, opt, opt_level="O2")`` with ``opt = AdamW(...)`` (or the call
    written in place, or a list of them), and an optimizer wrapped by apex's (or Megatron's)
    ``FP16_Optimizer``."""
    found = set()
    for site in index.calls:
        if site.qualname in MASTER_WEIGHT_WRAPPERS:
            # `FP16_Optimizer(opt, ...)`: it swaps every float16 parameter of `opt` for a float32
            # master copy (`param.detach().clone().float()`) that the optimizer steps
            args = positional(site.node)
            given = keyword(site.node, "init_optimizer")
            expr = given.value if given is not None else (args[0] if args else None)
        elif site.qualname in APEX_INITIALIZE and _keeps_master_weights(site.node, evaluator, site.scope):
            args = positional(site.node)
            given = keyword(site.node, "optimizers")
            expr = given.value if given is not None else (args[1] if len(args) > 1 else None)
        else:
            continue
        items = [unstarred(e) for e in expr.elts] if isinstance(expr, (ast.List, ast.Tuple)) else [expr]
        for item in items:
            values = [item] if isinstance(item, ast.Call) else reaching_values(index, item, site.scope) if isinstance(item, ast.Name) else []
            for value in values:
                found.add(id(value))
                found.update(_returned_calls(index, value))
    return found


# Trainers that build a torch AdamW themselves from their TrainingArguments (`optim` "adamw_torch"
# by default, "adamw_hf" before transformers 4.4x; `adam_epsilon` 1e-8 by default)
TRAINERS = frozenset({
    "transformers.Trainer", "transformers.trainer.Trainer", "transformers.Seq2SeqTrainer",
    "transformers.trainer_seq2seq.Seq2SeqTrainer", "trl.SFTTrainer", "trl.trainer.sft_trainer.SFTTrainer",
    "trl.RewardTrainer",
})
ADAMW_OPTIMS = frozenset({"adamw_torch", "adamw_hf", "adamw_torch_fused"})


def _eps_values(evaluator: Evaluator, expr, scope) -> Tuple[Optional[float], ...]:
    """The values an eps written as ``expr`` may take (None: not a known number); the default
    1e-8 where none is written."""
    if expr is None:
        return (DEFAULT_EPS,)
    return tuple(
        float(v.value) if v.kind == CONST and isinstance(v.value, (int, float)) and not isinstance(v.value, bool) else None
        for v in evaluator.values(expr, scope)
    ) or (None,)


def _owner_scopes(owners: Tuple[str, ...], code) -> Tuple[Tuple[str, str], ...]:
    """(owner, the scope whose binding of it ``code`` reads) for each owner that is a name."""
    out = []
    for owner in owners:
        if owner.isidentifier():
            bound = binding_scope(owner, code)
            if bound is not None:
                out.append((owner, bound.qualname))
    return tuple(out)


def _trained(index: ModuleIndex, site) -> bool:
    """Whether the module calls ``.train()`` on the Trainer ``site`` makes (``Trainer(...).train()``,
    or on a name it is bound to): only training builds the optimizer."""
    names = set(site.assigned_to)
    for other in index.calls:
        if other.method != "train" or other.receiver is None:
            continue
        if other.receiver is site.node or (isinstance(other.receiver, (ast.Name, ast.Attribute)) and dotted(other.receiver) in names):
            return True
    return False


def _trainer_optimizer(index: ModuleIndex, evaluator: Evaluator, site) -> Optional[AdamSite]:
    """The AdamW a Trainer builds itself (no ``optimizers=`` given): over the parameters of the
    model it trains, with ``adam_epsilon`` of its TrainingArguments (1e-8 by default), where
    those arguments are known here (the call bound to the name passed as ``args=``, or none
    given), turn on no fp16 loss scaling (that crashes first: MP101) and hand the step to no
    DeepSpeed config (``deepspeed=``: DeepSpeed builds its own optimizer). None otherwise."""
    call = site.node
    if keyword(call, "optimizers") is not None or any(k.arg is None for k in call.keywords) or any(
        isinstance(a, ast.Starred) for a in call.args
    ):
        return None
    if not _trained(index, site):
        return None  # `trainer.evaluate()`, `trainer.predict()`: no optimizer is built
    given = keyword(call, "model")
    model = given.value if given is not None else (call.args[0] if call.args else None)
    owner = dotted(model) if isinstance(model, (ast.Name, ast.Attribute)) else None
    if owner is None:
        return None
    given = keyword(call, "args")
    args_expr = given.value if given is not None else (call.args[1] if len(call.args) > 1 else None)
    made = None
    if args_expr is not None:
        if isinstance(args_expr, ast.Name):
            bound = reaching_values(index, args_expr, site.scope)
            made = bound[0] if len(bound) == 1 else None
        elif isinstance(args_expr, ast.Call):
            made = args_expr
        made_site = index.call_of(made) if isinstance(made, ast.Call) else None
        if made_site is None or not is_training_args(made_site.qualname, index) or any(k.arg is None for k in made.keywords):
            return None  # parsed from the command line, or built elsewhere: not known here

    def known(name, test) -> bool:  # not given, or every value of it passes `test`
        given = keyword(made, name) if made is not None else None
        if given is None:
            return True
        values = evaluator.values(given.value, site.scope)
        return bool(values) and all(v.kind == CONST and test(v.value) for v in values)

    if not known("fp16", lambda v: not v) or not known("optim", lambda v: v in ADAMW_OPTIMS):
        return None
    optim = keyword(made, "optim") if made is not None else None
    fused = optim is not None and known("optim", lambda v: v == "adamw_torch_fused")
    if not known("deepspeed", lambda v: v is None):
        return None  # DeepSpeed builds the optimizer (its config's, over fp32 master weights under fp16)
    written = keyword(made, "adam_epsilon") if made is not None else None
    eps = _eps_values(evaluator, written.value if written is not None else None, site.scope)
    insert_at, style = _insertion(index, made) if made is not None else (-1, "")
    code = site.scope.code_scope()
    return AdamSite(
        site.qualname, index.span(call), index.span(call.func), eps,
        index.span(written.value) if written is not None else None,
        index.text(written.value) if written is not None else "",
        insert_at, style, (owner,), code.qualname,
        owner_params=_owner_params((owner,), code), eps_keyword="adam_epsilon", trainer=index.text(call.func),
        owner_scopes=_owner_scopes((owner,), code), fused=fused, default_optim=optim is None,
    )


def _stepped_by(index: ModuleIndex, made) -> Tuple[str, ...]:
    """The receivers (as written) of calls ``x.step(o)`` in the optimizer's own code whose
    argument ``o`` is a name the optimizer call is bound to (``scaler.step(optimizer)``)."""
    if not made.assigned_to:
        return ()
    code = made.scope.code_scope()
    return tuple(dict.fromkeys(
        dotted(site.receiver)
        for site in index.calls
        if site.method == "step" and site.receiver is not None and dotted(site.receiver) and site.scope.code_scope() is code
        and (given := positional(site.node)) and isinstance(given[0], ast.Name) and given[0].id in made.assigned_to
    ))


def _fused(evaluator: Evaluator, site) -> bool:
    """Whether a torch optimizer is built ``fused=True`` (every value the keyword may take)."""
    given = keyword(site.node, "fused")
    if given is None or not (site.qualname or "").startswith("torch.optim."):
        return False
    values = evaluator.values(given.value, site.scope)
    return bool(values) and all(v.kind == CONST and v.value is True for v in values)


def extract(index: ModuleIndex, evaluator: Evaluator):
    out = []
    master = None
    for site in index.calls:
        if site.qualname in TRAINERS and not evaluator.dead(site.guards, site.scope):
            found = _trainer_optimizer(index, evaluator, site)
            if found is not None:
                out.append(found)
            continue
        if site.qualname not in ADAM_FAMILY or evaluator.dead(site.guards, site.scope):
            continue
        args = positional(site.node)
        given = keyword(site.node, "eps")
        eps_expr = given.value if given is not None else (args[EPS_POSITION] if len(args) > EPS_POSITION else None)
        eps = _eps_values(evaluator, eps_expr, site.scope)
        params = keyword(site.node, "params")
        params_expr = params.value if params is not None else (args[0] if args else None)
        insert_at, style = _insertion(index, site.node)
        owners, code = parameter_owners(index, params_expr, site.scope), site.scope.code_scope()
        if master is None:
            master = _master_weight_optimizers(index, evaluator)
        out.append(
            AdamSite(
                site.qualname,
                index.span(site.node),
                index.span(site.node.func),
                eps,
                index.span(eps_expr) if eps_expr is not None else None,
                index.text(eps_expr) if eps_expr is not None else "",
                insert_at,
                style,
                owners,
                code.qualname,
                id(site.node) in master,
                _owner_params(owners, code),
                _owner_calls(index, params_expr, site.scope, code),
                owner_scopes=_owner_scopes(owners, code),
                built_if=guards_text(index, site.every_guard),
                fused=_fused(evaluator, site),
                stepped_by=_stepped_by(index, site),
            )
        )
    return tuple(out)
