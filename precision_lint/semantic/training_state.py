"""The training state of a model at the place its weights get a dtype: order matters.

A model's parameters are trained by what runs *after* it is made: ``Trainer(model=model)``
written before ``model = AutoPeftModel.from_pretrained(out, dtype=torch.float16)`` (a merge
after training, in the same function) trains the earlier model, not this one. And a freeze
holds only until something re-enables it: ``unet.requires_grad_(False)`` followed by
``unet.requires_grad_(True)`` (or ``p.requires_grad = True`` over its parameters) leaves the
parameters trainable, so a later cast to ``weight_dtype`` makes *trainable* weights float16.

``.parameters()`` after a freeze does not re-enable anything (a LoRA script hands
``filter(lambda p: p.requires_grad, unet.parameters())`` — the adapters — to the optimizer).

A freeze in a loop over the parameters freezes the whole model only when nothing between the
loop and it picks parameters: ``for n, p in model.named_parameters(): if "ln_" in n:
p.requires_grad_(False)`` freezes the LayerNorms, and the rest (the adapters ``get_peft_model``
added) still train. It is no event. A test that lets every parameter through but the names it
mentions is read as a freeze of the model's own weights all the same, the part it names left as
it was: the adapters (``if "lora_" not in n:``, the ``else:`` of ``if "lora" in n:``, the loop
written as ``p.requires_grad = "lora" in n``), or a part a wrapper made its own (``if not
n.startswith("language_model."):``). An unfreeze under a test (``if "lora" in n:
p.requires_grad_(True)``) still makes parameters trainable: it stays an event. A freeze that
lets the adapters' names through (``FreezeEvent.keeps_adapters``) leaves what ``get_peft_model``
adds trainable, before or after it: on peft 0.7 to 0.11 those adapters are float16 on a float16
base, and a GradScaler raises ``ValueError: Attempting to unscale FP16 gradients.``.
"""
from __future__ import annotations

from .._dataclass import dataclass
from itertools import product
from typing import Dict, FrozenSet, Iterable, List, NamedTuple, Optional, Set, Tuple

import ast

from .index import NOT_VALUE_BINDERS, ModuleIndex, Scope, argument, arguments, first_argument, identifiers, keyword, literal_key
from .index import is_constant, nodes_of, positional, string_value, unstarred
from .main_block import main_block_orders, main_scope
from .names import dotted, spelled
from .parts import anchored, outermost, relation, spelled_path, split_path
from .values import TrainRef
from .._regex import lazy


def runs_before(index: ModuleIndex, node: ast.AST, node_scope: Scope, made: Optional[ast.AST], made_scope: Scope) -> bool:
    """Whether ``node`` (code of ``node_scope``) is written before ``made``, the call that makes
    a new model, in the same scope: it ran before that model existed (loops aside), so it does
    not use it."""
    if made is None or node_scope is not made_scope:
        return False
    if id(node) not in index.order_of or id(made) not in index.order_of:
        return False
    return index.order(node)[0] < index.order(made)[0]


def _flag(node: ast.Call) -> Optional[bool]:
    """``requires_grad_(False)`` → False; ``requires_grad_(True)`` / ``requires_grad_()`` → True."""
    if not node.args and not node.keywords:
        return True
    arg = first_argument(node)
    if isinstance(arg, ast.Constant) and isinstance(arg.value, bool):
        return arg.value
    return None


def freeze_events(index: ModuleIndex, names: Tuple[str, ...], truth=None) -> List[FreezeEvent]:
    """A ``FreezeEvent`` for each ``requires_grad_`` call on one of ``names`` (also
    at the end of the chain that makes it: ``te = Model.from_pretrained(...).requires_grad_(x)``)
    and each ``p.requires_grad = …`` in a loop over their parameters, in source order.

    ``truth``: what a flag that is no literal (``requires_grad_(args.train_text_encoder)``) is
    in the runs asked about (``expr -> True / False / None``): the runs that reach a cast under
    ``if not args.train_text_encoder:`` freeze the model there. Without it, or where it cannot
    tell, such a call is no event."""
    out = []
    for site in index.calls:
        if site.method != "requires_grad_":
            continue
        chained = isinstance(site.receiver, ast.Call) and bool(set(site.assigned_to) & set(names))
        if site.receiver is not None and (chained or spelled(site.receiver) in names):
            written = _flag(site.node)
            flag = truth(first_argument(site.node), site) if written is None and truth is not None else written
            if flag is not None:
                shown = spelled(site.receiver) or site.assigned_to[0]
                at = index.order(site.node)[1] if chained else index.order(site.node)[0]
                out.append(FreezeEvent(at, flag, f"`{shown}.requires_grad_({flag})`" + (" in these runs" if written is None else "")))
        else:  # `p.requires_grad_()` in a loop (or a comprehension) over the parameters: True
            flag = _flag(site.node)
            loops = site.loops if _owning_loop(site.loops, names) is not None else _comprehensions_around(index, site)
            loop = _owning_loop(loops, names)
            if flag is not None and loop is not None:
                what = f"parameters of `{_owner(loop)}` set to requires_grad_({flag})"
                at = index.order(site.node)[0]
                event = _whole_model_event(index, loop, loops, site.every_guard, at, flag, what)
                if event is not None:
                    out.append(FreezeEvent(at, *event))
    for assign in index.attr_assigns:
        if assign.target.attr != "requires_grad":
            continue
        keeps_adapters = False
        if isinstance(assign.value, ast.Constant) and isinstance(assign.value.value, bool):
            flag, shown = assign.value.value, str(assign.value.value)
        elif _selects_by_name(assign.value, assign.loops) and _names_adapters(assign.value):
            # `p.requires_grad = ("lora_A" in n or "lora_B" in n)`: the loop freezes the model's
            # own parameters, only the adapters it names train (review 27a: BLIP-2's LoRA runs;
            # a test that names the model's own layers, `"attn1" in n`, trains those)
            flag, shown, keeps_adapters = False, f"{index.text(assign.value)} (only the adapters it names train)", True
        else:
            continue
        loop = _owning_loop(assign.loops, names)
        if loop is not None and id(assign.target) in index.order_of:
            what = f"parameters of `{_owner(loop)}` set to requires_grad={shown}"
            at = index.order(assign.target)[0]
            event = _whole_model_event(index, loop, assign.loops, assign.guards, at, flag, what, keeps_adapters)
            if event is not None:
                out.append(FreezeEvent(at, *event))
    return sorted(out, key=lambda e: e.at)


def _whole_model_event(
    index: ModuleIndex, loop, loops, guards, at: int, flag: bool, what: str, keeps_adapters: bool = False,
) -> Optional[Tuple[bool, str, bool]]:
    """``(trainable, what, keeps_adapters)``: what a ``requires_grad`` write in ``loop`` (over the model's
    parameters; ``loops``: the loops around the write; ``at``: its pre-order number) does to the
    model as a whole, given the tests ``guards`` it runs under; None when it changes nothing of
    that.

    A test between the loop and a freeze that picks parameters by name (``if "ln_" in n or
    ".bias" in n:``) freezes only those: the others keep their state, and after
    ``get_peft_model`` the adapters train (review 29a: a CLIP LoRA run whose loop froze
    LayerNorms and biases read as a frozen model). A test that lets every parameter through but
    the names it mentions freezes the model's own weights, the part it names left as it was:
    the adapters (``p.requires_grad = "lora" in n``), or a part of the model a wrapper made
    its own (``if not n.startswith("language_model."):`` around a ``language_model`` that
    ``get_peft_model`` wrapped, whose base it froze: review 27a's BLIP-2 AdaLoRA script). An
    unfreeze under a test still makes the parameters it picks trainable. A test around the
    whole loop (``if not args.train_text_encoder:``) is none of these: the loop freezes
    everything in the runs that take it (``truth`` in ``freeze_events`` reads such tests)."""
    inside = _tests_in_loop(index, loop, guards, at)
    if flag or not inside:
        return flag, what, keeps_adapters
    if all(_refuses_names(test, positive, loops) for test, positive in inside):
        if all(_names_adapters(test) for test, _ in inside):
            return False, f"{what} for all but the adapters (only the adapters train)", True
        # the names it lets through may be the adapters' among others (`"lora" not in n and
        # "head" not in n`): those train as well
        return False, f"{what} for all but the parameters it names", any(_mentions_adapters(test) for test, _ in inside)
    return None


def _tests_in_loop(index: ModuleIndex, loop, guards, at: int) -> List[Tuple[ast.expr, bool]]:
    """The tests of ``guards`` written inside ``loop`` (after its iterable: the ``if`` of its
    body, a comprehension's ``if`` clauses), and those of the ``if ...: continue`` lines of its
    body above the write at pre-order number ``at`` (the write runs where they are false), each
    with the branch taken (True: the test holds)."""
    start = index.order_of.get(id(loop.iter))
    inside = [(test, True) for test in getattr(loop, "ifs", ())]
    if start is not None:
        inside += [(t, p) for t, p in guards if index.order_of.get(id(t), (-1,))[0] > start[0]]
    for stmt in getattr(loop, "body", ()):
        first, last = index.order_of.get(id(stmt), (at, at))
        if last > at:
            break  # the write's own line, or one below it
        if isinstance(stmt, ast.If) and not stmt.orelse and isinstance(stmt.body[-1], (ast.Continue, ast.Break)):
            inside.append((stmt.test, False))
    return inside


def _refuses_names(test: ast.expr, positive: bool, loops) -> bool:
    """Whether the branch ``positive`` of a test of the parameter's name takes every parameter
    but those it names: ``"lora_" not in n``, ``not n.startswith("language_model.")``, the
    ``else:`` of ``if "lora_A" in n or "lora_B" in n:``. A test that picks the names it
    mentions (``if "ln_" in n:``) takes only some of the model."""
    return _selects_by_name(test, loops) if not positive else _refuses_by_name(test, loops)


def _refuses_by_name(value: ast.expr, loops) -> bool:
    """Whether ``value`` is a test that is false for the names it mentions, true for the rest:
    ``"lora" not in n``, ``not n.startswith("lora")`` (the negation of a ``_selects_by_name``
    test), joined with ``and``."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
        return _selects_by_name(value.operand, loops)
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And):
        return all(_refuses_by_name(v, loops) for v in value.values)
    if isinstance(value, ast.Compare) and all(isinstance(op, (ast.NotIn, ast.NotEq)) for op in value.ops):
        return bool({n.id for n in ast.walk(value) if isinstance(n, ast.Name)} & _name_variables(loops))
    return False


def _mentions_adapters(value: ast.expr) -> bool:
    """Whether a test compares with an adapter's name among others (``"lora" in n or "head" in n``)."""
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str) and "lora" in n.value.lower() for n in ast.walk(value))


def _names_adapters(value: ast.expr) -> bool:
    """Whether every name a test compares with is an adapter's (``lora_A``, ``"lora_"``): peft's
    layers, never the model's own weights."""
    words = [n.value for n in ast.walk(value) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return bool(words) and all("lora" in w.lower() for w in words)


def _selects_by_name(value: ast.expr, loops) -> bool:
    """Whether ``value`` is a test that selects parameters by the name a loop over
    ``named_parameters()`` binds (``"lora" in n``, ``n.startswith("head.")``, ``any(k in n for k
    in keys)``, joined with ``and``/``or``): true for the few it names, false for the rest. A
    test that refuses names (``"lora" not in n``, ``not ...``) trains all the others: no freeze."""
    names = _name_variables(loops)
    if not names:
        return False
    if isinstance(value, ast.BoolOp):
        return all(_selects_by_name(v, loops) for v in value.values)
    if isinstance(value, ast.Compare):
        positive = all(isinstance(op, (ast.In, ast.Eq)) for op in value.ops)
    elif isinstance(value, ast.Call):
        method = value.func.attr if isinstance(value.func, ast.Attribute) else dotted(value.func)
        positive = method in ("startswith", "endswith", "any")
    else:
        return False
    reads = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
    return positive and bool(reads & names)


def _name_variables(loops) -> Set[str]:
    """The names a loop over ``named_parameters()`` binds to each parameter's name (``n`` in
    ``for n, p in model.named_parameters()``)."""
    return {
        loop.target.elts[0].id
        for loop in loops
        if (call := walked_call(loop)) is not None and call.func.attr == "named_parameters"
        and isinstance(loop.target, ast.Tuple) and loop.target.elts and isinstance(loop.target.elts[0], ast.Name)
    }


def unfrozen_by_choice(index: ModuleIndex, names: Tuple[str, ...], values, after: int = -1) -> str:
    """``shown`` of the last ``requires_grad_(flag)`` on one of ``names`` (below ``after``) when
    the flag is the user's switch that the code's own runs keep off: every value that
    unfreezes the model is a choice the user makes by hand (``not args.no_lora`` false only with
    ``--no_lora``), and some value that freezes it is not (the default). The model is then
    trained only in a run the user picks, which ``freeze_events`` leaves undecided. ``values``:
    ``expr, scope -> the evaluator's values``. "" otherwise."""
    last = None
    for site in index.calls:
        if site.method != "requires_grad_" or site.receiver is None or dotted(site.receiver) not in names:
            continue
        if index.order(site.node)[0] > after:
            last = site
    if last is None or not (last.node.args or last.node.keywords) or _flag(last.node) is not None:
        return ""
    found = values(first_argument(last.node), last.scope)
    if not found or any(v.kind != "const" for v in found):
        return ""
    chosen = lambda v: any(g.user_choice for g in v.guards)  # noqa: E731
    unfreezing = [v for v in found if v.value not in (False, None, 0, "")]
    freezing = [v for v in found if v.value in (False, None, 0, "")]
    if unfreezing and freezing and all(chosen(v) for v in unfreezing) and not all(chosen(v) for v in freezing):
        return f"`{index.text(last.node)}`"
    return ""


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _comprehensions_around(index: ModuleIndex, site) -> List[ast.comprehension]:
    """The ``for`` clauses of the comprehensions of its statement that hold the call
    (``[p.requires_grad_() for n, p in model.named_parameters() if "norm" in n]``)."""
    if id(site.node) not in index.order_of or site.statement is None:
        return []
    at = index.order(site.node)[0]
    out: List[ast.comprehension] = []
    for node in nodes_of(site.statement):
        if isinstance(node, _COMPREHENSIONS) and id(node) in index.order_of:
            first, last = index.order(node)
            if first <= at < last:
                out.extend(node.generators)
    return out


def _owning_loop(loops, names: Tuple[str, ...]):
    """The loop of ``loops`` over the parameters of the model bound to ``names``, or None."""
    for loop in loops:
        it = walked_call(loop)
        if it is not None and spelled(it.func.value) in names:
            return loop
    return None


def _owner(loop) -> str:
    """The model a loop of ``_owning_loop`` walks the parameters of, as the code spells it."""
    return spelled(walked_call(loop).func.value) or ""


def walked_call(loop, methods: Optional[frozenset] = None) -> Optional[ast.Call]:
    """The ``m.parameters()`` call (or of another of ``methods``: ``modules()``) a loop iterates,
    a ``for`` statement or a comprehension's generator; None for any other iterable."""
    it = loop.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr in (methods or PARAMETER_METHODS):
        return it
    return None



class FreezeEvent(NamedTuple):
    """A ``requires_grad`` write that changes the model as a whole, at pre-order number ``at``.
    ``keeps_adapters``: a freeze that lets the adapters' names through (``if "lora_" not in n:``,
    ``p.requires_grad = "lora" in n``) leaves what ``get_peft_model`` adds trainable."""

    at: int
    trainable: bool
    what: str
    keeps_adapters: bool = False


def unfrozen_after(index: ModuleIndex, names: Tuple[str, ...], after: int) -> str:
    """What makes parameters of the model trainable below pre-order number ``after``
    (``[p.requires_grad_() for n, p in model.named_parameters() if "norm" in n]``), "" when
    nothing does: a 4/8-bit base whose norms or embeddings are unfrozen trains those in the
    dtype the load gave them."""
    return next((e.what for e in freeze_events(index, names) if e.trainable and e.at > after), "")


def frozen_at_end(index: ModuleIndex, names: Tuple[str, ...], after: int = -1, truth=None) -> str:
    """Why the model is frozen once the code has run: the last freeze, unless a later
    ``requires_grad_(True)`` or an adapter injection (``adapters_at_end``) re-enabled it ("" when
    it ends trainable or nothing freezes it). ``after``: only events later than this pre-order
    number count (a model made there). ``truth``: as in ``freeze_events``."""
    last = last_freeze(index, names, after, truth)
    return last.what if last is not None else ""


def last_freeze(index: ModuleIndex, names: Tuple[str, ...], after: int = -1, truth=None) -> Optional[FreezeEvent]:
    """The freeze that holds once the code has run (``frozen_at_end``'s), None where the model
    ends trainable or nothing freezes it."""
    last = None
    for event in freeze_events(index, names, truth):
        if event.at > after:
            last = None if event.trainable else event
    if last is not None and adapters_at_end(index, names, after) is not None:
        return None  # adapters injected after the freeze: they train (in the model's dtype)
    return last


def adapter_injection(index: ModuleIndex, site) -> Optional[ast.expr]:
    """The model a call injects PEFT adapters into *in place*, or None.

    ``X.add_adapter(config)`` (diffusers' ``PeftAdapterMixin.add_adapter``, transformers'
    ``integrations.peft.PeftAdapterMixin.add_adapter``: both call ``peft.inject_adapter_in_model``)
    and ``inject_adapter_in_model(config, X)`` itself. The injected layers take the base layer's
    dtype: ``BaseTunerLayer._move_adapter_to_device_of_base_layer`` (peft/tuners/tuners_utils.py,
    called by ``LoraLayer.update_layer``) moves each new adapter ``.to(device, dtype=<the base
    weight's float dtype>)``, and ``inject_adapter_in_model`` (peft/mapping.py) builds the tuner
    (``BaseTuner.__init__``, which marks only the adapters trainable) and returns the mutated
    model without the float32 upcast that ``get_peft_model`` does: that one is
    ``PeftModel.__init__`` → ``BaseTuner._cast_adapter_dtype`` → ``cast_adapter_dtype`` (fp16 /
    bf16 adapters to fp32), taken when ``autocast_adapter_dtype=True``, its default (peft/
    mapping_func.py). Checked in peft 0.21.2 and transformers 5.24. So adapters added to a float16
    model are trainable float16 parameters, unless the script upcasts them (diffusers'
    ``training_utils.cast_training_params(unet, dtype=torch.float32)``)."""
    q = site.qualname or dotted(site.node.func) or ""
    if site.method == "add_adapter" and site.receiver is not None and (site.node.args or site.node.keywords):
        return site.receiver
    if q.rsplit(".", 1)[-1] == "inject_adapter_in_model":
        return argument(site.node, 1, "model")
    if q.rsplit(".", 1)[-1] == "get_peft_model" and saved_modules(index, site) is not None:
        return argument(site.node, 0, "model")
    return None


def peft_config_builds(index: ModuleIndex, site) -> List[Optional[ast.expr]]:
    """What the config of a ``get_peft_model(model, config)`` call is built by: the expression
    in the call, or, for a name, the value of each binding that reaches it (None where a
    binding has no value, a loop variable or an import); [] without a config."""
    given = keyword(site.node, "peft_config")
    args = positional(site.node)
    config = given.value if given is not None else args[1] if len(args) > 1 else None
    if config is None:
        return []
    if isinstance(config, ast.Name):
        _, bindings = index.bindings_of(config, site.scope)
        return [b.value for b in bindings]
    return [config]


def saved_modules(index: ModuleIndex, site) -> Optional[ast.expr]:
    """The ``modules_to_save=[...]`` of the PEFT config a ``get_peft_model(model, config)`` call
    wraps the model with (the config built in the call, or bound to a name by such a call on
    every path), when it names modules; else None.

    PEFT trains those modules as copies: ``ModulesToSaveWrapper`` (peft/utils/other.py) deep-copies
    the original module, in its dtype, and marks the copy trainable; ``get_peft_model``'s float32
    upcast (``cast_adapter_dtype``) covers only the tuner layers' adapters, never these copies. On
    a float16 model they are trainable float16 parameters, and torch's GradScaler raises
    ``ValueError: Attempting to unscale FP16 gradients.`` (reproduced with peft 0.21.2 on CPU,
    ``GradScaler("cpu")``)."""
    builds = peft_config_builds(index, site)
    if not builds:
        return None
    found = None
    for built in builds:
        modules = keyword(built, "modules_to_save") if isinstance(built, ast.Call) else None
        value = modules.value if modules is not None else None
        if not (
            isinstance(value, (ast.List, ast.Tuple, ast.Set)) and value.elts
            or string_value(value)
        ):
            return None  # a path whose config saves no module, or one not written here
        found = value
    return found


def adapters_at_end(index: ModuleIndex, names: Tuple[str, ...], after: int = -1, guards=()) -> Optional[ast.Call]:
    """The last call that injects adapters into the model bound to ``names`` (``unet.add_adapter(
    config)``), when nothing after it freezes the model or makes all of it trainable again
    (``requires_grad_(False)`` / ``requires_grad_(True)``): what trains is then those adapters,
    in the dtype the model has. None otherwise. ``after`` as in ``frozen_at_end``; ``guards``:
    the tests the site asking is under, whose other branch holds no injection of its run (a
    script that injects peft's adapters under ``if provider == "hf":`` and AdapterHub's in the
    ``else:``: the ``else:`` one is not the last injection of the ``if`` branch's run)."""
    found = None
    apart = {(id(expr), not positive) for expr, positive in guards}
    for site in index.calls:
        target = adapter_injection(index, site)
        if target is None or dotted(target) not in names or id(site.node) not in index.order_of:
            continue
        if apart and any((id(expr), positive) in apart for expr, positive in site.guards):
            continue  # the other branch of a test the site is under
        at = index.order(site.node)[0]
        if at > after and (found is None or at > index.order(found)[0]):
            found = site.node
    if found is None:
        return None
    at = index.order(found)[0]
    if any(e.at > at for e in freeze_events(index, names)):
        return None  # frozen again, or the whole model trainable again, after it
    return found


SAVES = ("save_pretrained", "save_model", "push_to_hub", "save", "save_file", "save_state_dict", "export")
TRAINING_CALLS = ("train", "fit", "backward", "step", "manual_backward", "training_step")


# what gives a module a new submodule: `attn.to_q.set_lora_layer(LoRALinearLayer(...))`
_SETTER_PREFIX = "set_"
_DTYPE_KEYWORDS = ("dtype", "torch_dtype")
_CASTS = frozenset({"half", "to", "float16", "bfloat16", "type", "cuda"})


def attached_after(index: ModuleIndex, part: str, at: int) -> bool:
    """Whether the trained part ``part`` (an attribute path, ``unet.to_q.lora_layer``) is a module
    made and attached below ``at`` (the source order of a cast): ``x.set_lora_layer(LoRALinearLayer(...))`` or
    ``x.lora_layer = LoRALinearLayer(...)``, built without a dtype and not cast on the way. Such
    a module is made in float32 after the cast, whatever the cast did to the rest (review 26d:
    diffusers' DreamBooth-LoRA scripts freeze and cast the UNet, then attach LoRA layers)."""
    last = part.rsplit(".", 1)[-1]
    if not last or last == part:
        return False

    def fresh(value) -> bool:  # a constructor's call, no dtype given, not cast on the way
        return (
            isinstance(value, ast.Call)
            and not (isinstance(value.func, ast.Attribute) and value.func.attr in _CASTS)
            and not any(keyword(value, k) is not None for k in _DTYPE_KEYWORDS)
        )

    for site in index.calls:
        if site.method == _SETTER_PREFIX + last and id(site.node) in index.order_of and index.order(site.node)[0] > at:
            given = positional(site.node)
            if given and fresh(given[0]):
                return True
    for assign in index.attr_assigns:
        if assign.target.attr == last and id(assign.target) in index.order_of and index.order(assign.target)[0] > at and fresh(assign.value):
            return True
    return False


def save_time_cast(index: ModuleIndex, names: Tuple[str, ...], cast: ast.Call, scope: Scope) -> str:
    """Why a cast of a model is an export, not training: in its scope, the model is saved after
    the cast (``model.half().save_pretrained(out)``, ``torch.save(model.state_dict(), p)``) and
    nothing trains after it (no ``.train()``, ``.fit()``, backward pass or optimizer step). A
    float16 export after training never has its gradients unscaled; "" otherwise."""
    if id(cast) not in index.order_of:
        return ""
    at = index.order(cast)[0]
    saved = trains_after = False
    for site in index.calls:
        if site.scope.code_scope() is not scope or id(site.node) not in index.order_of:
            continue
        first, last = index.order(site.node)
        method = site.method or (site.qualname or "").rsplit(".", 1)[-1]
        if first <= at < last and site.node is not cast:
            # `torch.save(model.half().state_dict(), p)`: the cast made for the save around it
            saved = saved or method in SAVES
            continue
        if first <= at:
            continue
        if method in TRAINING_CALLS or (site.qualname or "").rsplit(".", 1)[-1].endswith("Trainer"):
            trains_after = True
            break
        if method in SAVES and _mentions(site, names, cast):
            saved = True
    return "cast for saving after training (nothing trains after it)" if saved and not trains_after else ""


# what a cast model may be asked below a cast that only prepares it to be saved: its
# configuration and names, and being put in eval mode or on the CPU (nothing computes)
_INERT_ATTRIBUTES = frozenset({"config", "generation_config", "name_or_path", "dtype", "eval", "cpu", "tie_weights"})
# what a model may be asked without computing with it: its size, its parameters and modules
# (listed, counted, printed), and the callables that only show a value
_INSPECTIONS = frozenset({
    "get_memory_footprint", "num_parameters", "parameters", "named_parameters", "modules", "named_modules",
    "children", "named_children", "buffers", "named_buffers", "print_trainable_parameters", "get_nb_trainable_parameters",
})
_SHOWN_BY = frozenset({"print", "display", "repr", "str", "type", "len", "id", "isinstance", "pprint"})
# what only counts what it is given (`sum(p.numel() for p in model.parameters())`), shown in turn
_COUNTED_BY = frozenset({"sum", "len", "list", "sorted", "tuple", "max", "min", "any", "all"})


def computes_nothing_after(index: ModuleIndex, names: Tuple[str, ...], cast: ast.Call, scope: Scope, depth: int = 0) -> bool:
    """Whether a model loaded or cast in ``scope`` computes nothing after it: the call sits in no
    loop, and below it every mention of the model (``names``: its spellings here) saves it
    (``model.save_pretrained(out)``, ``torch.save(model.state_dict(), p)``, ``save_file``), reads
    its configuration, or inspects it (``print(model.lm_head)``, ``model.get_memory_footprint()``,
    ``model.named_parameters()``, a notebook cell's bare ``model``); at least one does. A
    conversion script that casts the weights to the dtype they are stored in, or a notebook that
    loads a model to look at its modules, runs nothing in that dtype on any GPU. Returned, passed
    on, called, moved, or read as a module that is then called: it may compute (held-out 33u:
    but not where a function of the module only copies its weights or reads its configuration,
    ``dst.load_state_dict(src.model.state_dict())``, nor a cast returned from a function each of
    whose callers in the module only saves what it returns)."""
    site_of_cast = index.call_of(cast)
    if site_of_cast is None or site_of_cast.loops or id(cast) not in index.order_of:
        return False
    if isinstance(site_of_cast.statement, ast.Return) and site_of_cast.statement.value is cast:
        return _returned_to_saves(index, scope, depth)
    if not names or depth > 2:
        return False
    # another spelling of the model through an object (`model = pipe.unet`: `pipe.unet`): any
    # mention of that object below may compute with it
    through = {name.partition(".")[0] for name in names if "." in name}
    at = index.order(cast)[1]  # past the whole cast
    names, merged_from = _merged_copies(index, names, scope, at)
    saves = set()
    for site in index.calls:
        if site.scope.code_scope() is not scope or id(site.node) not in index.order_of or site.node is cast:
            continue
        method = site.method or (site.qualname or "").rsplit(".", 1)[-1]
        if index.order(site.node)[0] >= at and method in SAVES and _mentions(site, names, cast):
            saves.add(id(site.node))
    parents = {}
    mentions = []
    for node in ast.walk(scope.node):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and (node.id in names or node.id in through):
            mentions.append(node)
    seen = bool(saves)
    for node in mentions:
        order = index.order_of.get(id(node))
        if order is None or order[0] < at:
            continue
        if node.id in through:
            return False
        if _inspected(node, parents):
            seen = True
            continue
        if id(node) in merged_from:
            continue  # `PeftModel.from_pretrained(model, adapter).merge_and_unload()`: saved as `merged`
        if index.scope_of(node).code_scope() is not scope:
            return False  # used by a function defined here: it may compute
        parent = parents.get(id(node))
        if isinstance(parent, ast.Attribute):
            call = parents.get(id(parent))
            if parent.attr in _INERT_ATTRIBUTES:
                continue
            if parent.attr == "state_dict" and isinstance(call, ast.Call) and id(parents.get(id(call))) in saves:
                continue  # `torch.save(model.state_dict(), p)`
            if isinstance(call, ast.Call) and call.func is parent and id(call) in saves:
                continue  # `model.save_pretrained(out)`
            return False
        if isinstance(parent, ast.Return) and _returned_to_saves(index, scope, depth):
            seen = True
            continue  # `return model`, and every caller saves it
        if isinstance(parent, (ast.Call, ast.keyword)):
            call = parent if isinstance(parent, ast.Call) else parents.get(id(parent))
            if id(call) in saves and (not isinstance(parent, ast.Call) or parent.func is not node):
                continue  # `torch.save(model, p)`, `save_model(model=model)`
            if isinstance(call, ast.Call) and call.func is not node and _reads_only_weights(index, call, parent, node, scope):
                seen = True
                continue  # `convert(src)`, whose `src` only gives `src.model.state_dict()`
        return False
    return seen


def _parents(tree: ast.AST) -> Dict[int, ast.AST]:
    """id(node) → the node it is written in, for every node under ``tree``."""
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _reads_only_weights(index: ModuleIndex, call: ast.Call, parent: ast.AST, arg: ast.Name, scope: Scope) -> bool:
    """Whether a function of the module, given the model ``arg`` (``parent``: the call, or a
    keyword of it), only reads its weights or its configuration: each mention of the parameter
    is ``p.state_dict()`` (also of a part, ``p.model.state_dict()``: a copy of the weights, no
    computation) or an inert attribute (``p.config``). Anything else may compute."""
    function = index.local_function(call.func, scope)
    if function is None or not isinstance(function.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    params = [a.arg for a in (*function.node.args.posonlyargs, *function.node.args.args)]
    name = None
    if isinstance(parent, ast.keyword):
        name = parent.arg
    elif not any(isinstance(a, ast.Starred) for a in call.args):
        position = next((i for i, a in enumerate(call.args) if a is arg), None)
        name = params[position] if position is not None and position < len(params) else None
    if name is None:
        return False
    parents = _parents(function.node)
    for node in ast.walk(function.node):
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        if not isinstance(node.ctx, ast.Load):
            return False  # bound anew: another value under its name
        child, up = node, parents.get(id(node))
        while isinstance(up, ast.Attribute) and up.value is child and up.attr not in _INERT_ATTRIBUTES and up.attr != "state_dict":
            child, up = up, parents.get(id(up))
        if not isinstance(up, ast.Attribute) or up.value is not child:
            return False
        if up.attr == "state_dict":
            called = parents.get(id(up))
            if not (isinstance(called, ast.Call) and called.func is up):
                return False
    return True


def _returned_to_saves(index: ModuleIndex, scope: Scope, depth: int) -> bool:
    """Whether what the function ``scope`` returns (a cast, ``return dst.to(dtype=
    torch.bfloat16)``, or the model it is bound to) is only saved: the function is called in
    the module, and each call's result is saved at once (``convert(src).save_pretrained(out)``)
    or bound to a name that computes nothing after it (:func:`computes_nothing_after`)."""
    if depth > 2 or scope.kind != "function":
        return False
    callers = [s for s in index.calls if index.local_function(s.node.func, s.scope) is scope]
    if not callers:
        return False
    parents_in: Dict[int, Dict[int, ast.AST]] = {}  # id(caller's code scope) → its parent map
    for caller in callers:
        code = caller.scope.code_scope()
        if id(code) not in parents_in:
            parents_in[id(code)] = _parents(code.node)
        up = parents_in[id(code)].get(id(caller.node))
        if isinstance(up, ast.Attribute) and up.attr in SAVES:
            called = parents_in[id(code)].get(id(up))
            if isinstance(called, ast.Call) and called.func is up:
                continue  # `convert(src).save_pretrained(out)`
            return False
        if len(caller.assigned_to) == 1 and isinstance(up, ast.Assign) and computes_nothing_after(
            index, caller.assigned_to, caller.node, code, depth + 1
        ):
            continue
        return False
    return True


def _inspected(node: ast.Name, parents: dict) -> bool:
    """Whether a mention of a model only looks at it: shown whole or in part (``print(model)``,
    ``print(model.model.embed_tokens.weight[:, :2])``, a bare ``model`` statement), or asked its
    size, parameters or modules (``model.get_memory_footprint()``, ``model.named_parameters()``).
    A part that is called (``model.lm_head(x)``) computes."""
    child, parent = node, parents.get(id(node))
    while isinstance(parent, (ast.Attribute, ast.Subscript)) and (parent.value is child):
        if isinstance(parent, ast.Attribute):
            call = parents.get(id(parent))
            if isinstance(call, ast.Call) and call.func is parent:
                # `model.named_parameters()` looked at, not handed to an optimizer
                return parent.attr in _INSPECTIONS and child is node and _shown(call, parents, loop=True)
        child, parent = parent, parents.get(id(parent))
    return _shown(child, parents)


def _shown(expr: ast.expr, parents: dict, loop: bool = False) -> bool:
    """Whether the value of ``expr`` is only shown: a bare expression statement (a notebook
    displays it), an argument of ``print``/``len``..., an f-string's part, counted first
    (``sum(p.numel() for p in ...)``); with ``loop``, also the iterable of a ``for`` (``for n, p
    in model.named_parameters(): print(n)``). Bound to a name, passed to anything else: used."""
    parent = parents.get(id(expr))
    while True:
        if isinstance(parent, ast.comprehension) and parent.iter is expr:
            expr = parents.get(id(parent))  # the comprehension's expression
        elif isinstance(parent, ast.Call) and expr is not parent.func and isinstance(parent.func, ast.Name) and parent.func.id in _COUNTED_BY:
            expr = parent
        elif isinstance(parent, (ast.BinOp, ast.UnaryOp)):
            expr = parent  # `model.get_memory_footprint() / 2**20`
        else:
            break
        parent = parents.get(id(expr))
    if isinstance(parent, (ast.Expr, ast.FormattedValue)):
        return True
    if isinstance(parent, ast.Call) and expr is not parent.func:
        return isinstance(parent.func, ast.Name) and parent.func.id in _SHOWN_BY
    return loop and isinstance(parent, ast.For) and parent.iter is expr


# loads of adapters onto a base model, whose merge (`merge_and_unload()`) gives the base's weights
# with the adapters folded in: the same conversion, saved under another name
_ADAPTER_LOADS = frozenset({"peft.PeftModel.from_pretrained", "peft.peft_model.PeftModel.from_pretrained"})
_UNWRAPS = frozenset({"merge_and_unload", "unload"})


def _merged_copies(index: ModuleIndex, names: Tuple[str, ...], scope: Scope, at: int):
    """``names`` with the names a merge of the model's adapters is bound to below ``at``
    (``merged = PeftModel.from_pretrained(model, adapter).merge_and_unload()``, ``model =
    model.merge_and_unload()``), and the ids of the mentions of the model those merges read."""
    out = list(names)
    sources = set()
    assigns = sorted(
        (index.order_of[id(n)][0], n) for n in ast.walk(scope.node)
        if isinstance(n, ast.Assign) and id(n) in index.order_of and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
    )
    for order, assign in assigns:
        if order < at or index.scope_of(assign).code_scope() is not scope:
            continue
        value, unwrapped = assign.value, False
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _UNWRAPS:
            value, unwrapped = value.func.value, True
        if isinstance(value, ast.Call) and value.args and isinstance(value.args[0], ast.Name) and value.args[0].id in out:
            site = index.call_of(value)
            if site is not None and site.qualname in _ADAPTER_LOADS:
                sources.add(id(value.args[0]))
                out.append(assign.targets[0].id)
        elif unwrapped and isinstance(value, ast.Name) and value.id in out:
            sources.add(id(value))
            out.append(assign.targets[0].id)
    return tuple(dict.fromkeys(out)), sources


STEPS = ("step", "backward", "train", "fit")


def after_training_cast(index: ModuleIndex, names: Tuple[str, ...], cast: ast.Call, scope: Scope) -> str:
    """Why a cast of a model is made after its training, not for it: in its scope, the model
    was trained above (an optimizer step, a backward pass, ``trainer.train()``), the cast sits
    in no loop, and below it nothing trains (no step, backward, ``train``/``fit``, trainer)
    nor hands the model to a project function that might. ``model.half()`` then
    ``torch.jit.trace(model, ...)`` for inference never has its gradients unscaled; "" otherwise."""
    from .callees import project_callee

    if id(cast) not in index.order_of:
        return ""
    site_of_cast = index.call_of(cast)
    if site_of_cast is None or site_of_cast.loops:
        return ""
    at = index.order(cast)[0]
    trained_before = False
    for site in index.calls:
        if site.scope.code_scope() is not scope or id(site.node) not in index.order_of or site.node is cast:
            continue
        first, last = index.order(site.node)
        method = site.method or (site.qualname or "").rsplit(".", 1)[-1]
        if first <= at < last and site.receiver is not cast:
            return ""  # the cast is an argument of this call (`train(model.half(), loader)`)
        if first < at:
            trained_before = trained_before or method in STEPS
            continue
        if method in TRAINING_CALLS or method.endswith("Trainer"):
            return ""
        if project_callee(index, site) is not None and _mentions(site, names, cast):
            return ""  # `evaluate(model)` of the project: it might train what it is given
    return "cast after training (nothing trains it below)" if trained_before else ""


def _mentions(site, names: Tuple[str, ...], cast: ast.Call) -> bool:
    """Whether a save call is on the model: its receiver, or an argument, is one of ``names``
    (or ``names[i].state_dict()``), or the cast itself heads its chain."""
    node = site.receiver
    while isinstance(node, ast.Call):
        if node is cast:
            return True
        node = node.func.value if isinstance(node.func, ast.Attribute) else None
    if node is not None and dotted(node) in names:
        return True
    for arg in arguments(site.node):
        value = arg.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            value = value.func.value  # `model.state_dict()`
        if dotted(value) in names:
            return True
    return False


NO_GRAD = ("no_grad", "inference_mode")


def no_grad_function(scope: Scope) -> str:
    """The ``@torch.no_grad()`` / ``@torch.inference_mode()`` decorator of the function whose
    code ``scope`` is, or of a function around it ("" when none): nothing in it builds a graph,
    so no gradient of a model made or called there is ever unscaled."""
    while scope is not None and scope.kind != "module":
        node = scope.node
        for decorator in getattr(node, "decorator_list", ()):
            expr = decorator
            if isinstance(expr, ast.Call):
                expr = expr.func
            name = dotted(expr) or ""
            if name.rsplit(".", 1)[-1] in NO_GRAD:
                return f"@{name}()" if isinstance(decorator, ast.Call) else f"@{name}"
        scope = scope.parent
    return ""


def without_grad(site) -> bool:
    """Whether a call runs with gradients off: inside ``with torch.no_grad()`` /
    ``inference_mode()``, or in a function decorated with one."""
    if any(c.rsplit(".", 1)[-1] in NO_GRAD for c in site.contexts):
        return True
    return bool(no_grad_function(site.scope.code_scope()))


# --- trained: the objects whose parameters reach an optimizer ---------------------------
#
# "Trained" is positive evidence, never the absence of a freeze: a model is trained when its
# parameters reach an optimizer (``AdamW(model.parameters())``, parameter groups, a filtered or
# concatenated list of them), a trainer that builds one (``Trainer(model=m)``, TRL's trainers,
# ``lightning.Trainer.fit(m)``), ``deepspeed.initialize(model=m, ...)``, or a Lightning module
# whose optimizer takes ``self.parameters()``. Which object an expression holds is answered by
# the index's reaching bindings (``bindings_of``), followed through what keeps the object:
# in-place casts and moves (``.to()``, ``.cuda()``, ``.half()``), wrappers (DDP,
# ``torch.compile``, ``accelerator.prepare``), ``self.x`` attributes. An expression's object is
# a set of *keys*: the calls that make or wrap it, a parameter of a function, an attribute of a
# class's instances, an instance itself, what a project function returns. Two expressions hold
# the same object when their keys meet.
#
# Across functions the answer is symbolic (``TrainRef``) and joined in ``project/trained.py``:
# a parameter trained inside its function (``def train(model): AdamW(model.parameters())``),
# a parameter its callers train, what a function returns trained by its callers
# (``model = load_model(); Trainer(model=model)``), an instance of a class trained (its
# ``self.x`` modules are).
#
# A cast to another dtype on the way (``model = model.float()``) ends the walk: the optimizer
# then trains float32 parameters, whatever the object was loaded as. A PEFT wrap
# (``get_peft_model``) ends it too: what trains is the adapters (float32), not the wrapped base.
# Adapters injected in place (``unet.add_adapter(config)``, ``inject_adapter_in_model(config,
# unet)``) do not end it: they are the same object's new parameters, in its dtype
# (``adapter_injection``), and they make a frozen model trainable again (``adapters_at_end``).

OPTIMIZER_PREFIXES = ("torch.optim.", "bitsandbytes.optim.", "timm.optim.", "apex.optimizers.", "torch_optimizer.")
OPTIMIZER_FUNCTIONS = (
    "transformers.create_optimizer",
    "transformers.optimization.create_optimizer",
    "transformers.AdamW",
    "transformers.Adafactor",
    "transformers.optimization.Adafactor",
    "deepspeed.initialize",
)
# not optimizers, though they live under torch.optim
_NOT_OPTIMIZERS = lazy(r"\.(lr_scheduler|swa_utils)\.|\.Optimizer$")


def is_optimizer(qualname: str) -> bool:
    """An optimizer (or a function that builds one) of torch, bitsandbytes, timm, apex,
    ``torch_optimizer``, transformers or DeepSpeed."""
    if qualname in OPTIMIZER_FUNCTIONS or qualname.endswith(".create_optimizer"):
        return True
    if not qualname.startswith(OPTIMIZER_PREFIXES) or _NOT_OPTIMIZERS().search(qualname):
        return False
    last = qualname.rsplit(".", 1)[-1]
    return last[:1].isupper() or last.startswith("create_optimizer")


def is_trainer(qualname: str) -> bool:
    """A trainer class (transformers' ``Trainer`` and subclasses, TRL's, Lightning's): any
    class named ``*Trainer`` but an abstract base."""
    last = qualname.rsplit(".", 1)[-1]
    return last.endswith("Trainer") and not last.startswith(("Base", "Abstract"))


IN_PLACE = frozenset({"to", "cuda", "cpu", "half", "float", "bfloat16", "double", "train", "eval", "requires_grad_", "type", "xpu", "npu"})
NOT_HALF_CASTS = frozenset({"float", "bfloat16", "double"})
PARAMETER_METHODS = frozenset({"parameters", "named_parameters"})
# Calls whose result holds the object given to them (its parameters are the same tensors).
WRAPPER_METHODS = frozenset({"prepare", "prepare_model", "unwrap_model", "setup", "setup_module", "wrap"})
WRAPPER_FUNCTIONS = (
    "torch.nn.parallel.DistributedDataParallel", "torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel", "torch.compile",
    "torch.distributed.fsdp.FullyShardedDataParallel", "deepspeed.initialize",
)
ITERABLES = ("list", "tuple", "iter", "filter", "sorted", "set", "itertools.chain", "itertools.chain.from_iterable")
PEFT_WRAPS = ("get_peft_model", "prepare_model_for_kbit_training", "PeftModel.from_pretrained")


@dataclass(frozen=True)
class Use:
    """A place an object is trained, handed to a project function, or returned."""

    kind: str  # "train", "pass", "return"
    keys: FrozenSet[tuple]
    ref: Optional[TrainRef]  # pass: the callee's parameter; return: the function's return
    evidence: str = ""  # train: what trains it, as written
    scope: str = ""
    line: int = 0
    at: int = -1  # train: where the call that trains it starts in the source


class TrainedObjects:
    """Which objects of one module are trained, and how they travel to other functions."""

    MAX_DEPTH = 24

    def __init__(self, index: ModuleIndex, evaluator=None) -> None:
        self.ix = index
        self.ev = evaluator
        self._memo: Dict[Tuple[int, Optional[str]], FrozenSet[tuple]] = {}
        self._uses: Optional[List[Use]] = None
        self._filled: Optional[Dict[Tuple[int, str], List[Tuple[ast.expr, Scope]]]] = None

    # --- which object an expression holds ----------------------------------------
    def keys(self, expr: Optional[ast.expr], scope: Scope, klass: Optional[str] = None) -> FrozenSet[tuple]:
        """The keys of the object ``expr`` holds (see the section's comment)."""
        if expr is None:
            return frozenset()
        memo_key = (id(expr), klass)
        if memo_key not in self._memo:
            out: Set[tuple] = set()
            self._walk(expr, scope, klass, out, set(), 0)
            self._memo[memo_key] = frozenset(out)
        return self._memo[memo_key]

    def _scope(self, node, scope: Scope) -> Scope:
        return self.ix.scope_of(node) if id(node) in self.ix.order_of else scope

    def _walk(self, node, scope: Scope, klass, out: Set[tuple], seen: Set[int], depth: int) -> None:
        if node is None or id(node) in seen or depth > self.MAX_DEPTH:
            return
        seen.add(id(node))
        walk = lambda n, s=scope: self._walk(n, s, klass, out, seen, depth + 1)  # noqa: E731
        if isinstance(node, ast.Name):
            self._name(node, scope, klass, out, seen, depth)
        elif isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self" and klass:
                self._self_attr(node.attr, klass, out, seen, depth)
            else:
                # `pipe.unet`, `model.module`: a part of that object, an object of its own
                # (``part_keys``): `pipe.unet` and `pipe.vae` are two objects, and a cast of
                # one says nothing of what trains the other
                # (walked afresh: `m.head` and `m.backbone` of one list each reach `m`'s value)
                whole: Set[tuple] = set()
                self._walk(node.value, scope, klass, whole, set(seen), depth + 1)
                out.update(("part", key, node.attr) for key in whole)
        elif isinstance(node, ast.Call):
            self._call(node, scope, klass, out, seen, depth)
        elif isinstance(node, ast.BinOp):
            walk(node.left)
            walk(node.right)
        elif isinstance(node, ast.BoolOp):
            # `ast` keeps `a or b or c` flat: each operand is walked at its depth in the nested
            # form `(a or b) or c` (one level deeper for each operator to its right), the tree
            # MAX_DEPTH was set for (LibCST's), so the limit cuts the same walks
            n = len(node.values)
            for i, value in enumerate(node.values):
                self._walk(value, scope, klass, out, seen, depth + n - max(i, 1))
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            for element in node.elts:
                walk(unstarred(element))
        elif isinstance(node, ast.Dict):
            for value in node.values:
                walk(value)  # `[{"params": model.parameters(), "lr": lr}]`; `**d` too
        elif isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            for comp in node.generators:
                walk(comp.iter)
        elif isinstance(node, ast.Subscript):
            if self._item(node, scope, klass, out, seen, depth):
                pass
            elif type(node.slice) is ast.Constant and type(node.slice.value) in (int, str):
                # `model[0]` of an `nn.Sequential`, `blocks["enc"]` of a `ModuleDict`: one item,
                # a part of its own as `model.encoder` is (two items share no parameters)
                whole: Set[tuple] = set()
                self._walk(node.value, scope, klass, whole, set(seen), depth + 1)
                out.update(("part", key, f"[{node.slice.value!r}]") for key in whole)
            else:
                walk(node.value)
        elif isinstance(node, ast.IfExp):
            walk(node.body)
            walk(node.orelse)
        elif isinstance(node, (ast.Starred, ast.Await)):
            walk(node.value)
        elif isinstance(node, ast.NamedExpr):
            walk(node.value)

    def _name(self, node: ast.Name, scope: Scope, klass, out, seen, depth) -> None:
        scope = self._scope(node, scope)
        if node.id == "self" and klass:
            out.add(("instance", klass))
            info = self.ix.classes.get(klass)
            for attr in (info.self_attr_values if info is not None else ()):
                self._self_attr(attr, klass, out, seen, depth)  # `self.parameters()`: every submodule's
            return
        owner, reached = self.ix.bindings_of(node, scope)
        if owner is None:
            out.add(("name", scope.qualname, node.id))  # bound nowhere here (a global of another file)
            return
        at = self.ix.order_of.get(id(node), (None,))[0]
        if owner.kind == "function" and node.id in owner.params:
            before = [b for b in reached if at is not None and self.ix.order_of.get(id(b.statement), (at,))[0] < at]
            if owner is not scope or not before:
                from .evaluate import param_ref

                out.add(("param", param_ref(owner, node.id)))
        for binding in reached:
            if binding.imported is not None:
                out.add(("name", binding.imported, node.id))
                continue
            value = binding.value
            if value is None or isinstance(binding.statement, NOT_VALUE_BINDERS):
                out.add(("bind", id(binding.statement), node.id))
                looped = _parameters_looped(binding.statement)
                if looped is not None:  # `for name, p in unet.named_parameters():`: a parameter of unet
                    self._walk(looped, owner, klass, out, seen, depth + 1)
                continue
            if isinstance(value, ast.List):
                # `params = []` filled by `params.append(p)` / `params.extend(...)` in its scope
                for added, where in self._filled_lists().get((id(owner), node.id), ()):
                    self._walk(added, where, klass, out, seen, depth + 1)
            if binding.unpack_index is not None:
                element = self._element(value, binding.unpack_index)
                if element is None:
                    out.add(("bind", id(binding.statement), node.id))
                    callee = self._project_callee(value)
                    if callee is not None:  # `model, tokenizer = load_model_and_tokenizer(name)`
                        out.add(("ret", callee, binding.unpack_index))
                    continue
                value = element
            self._walk(value, owner, klass, out, seen, depth + 1)

    def _filled_lists(self) -> Dict[Tuple[int, str], List[Tuple[ast.expr, Scope]]]:
        """What ``name.append(x)`` / ``name.extend(xs)`` add to a list variable, by (the scope
        that binds the name, the name): indexed once per module."""
        if self._filled is None:
            self._filled = {}
            for site in self.ix.calls:
                receiver = site.receiver
                if site.method not in ("append", "extend") or not isinstance(receiver, ast.Name) or len(site.node.args) != 1:
                    continue
                owner = site.scope.lookup_scope(receiver.id)
                if owner is not None:
                    self._filled.setdefault((id(owner), receiver.id), []).append((site.node.args[0], site.scope))
        return self._filled

    def _item(self, node: ast.Subscript, scope: Scope, klass, out, seen, depth) -> bool:
        """``parts["model"]`` of ``parts = {"model": m, "ref": r}`` or of ``parts = load(...)``
        (a project function returning such a dict): that entry's object only, not the others
        the dict holds (a frozen reference model returned beside the trained one). False when
        the key or the container is not one of those (the whole container is then walked)."""
        key = literal_key(node)
        if key is None or not isinstance(node.value, ast.Name):
            return False
        owner, reached = self.ix.bindings_of(node.value, self._scope(node.value, scope))
        if owner is None or not reached or any(b.imported is not None or b.unpack_index is not None for b in reached):
            return False
        found = []
        for binding in reached:
            value = binding.value
            entries = _string_keys(value) if isinstance(value, ast.Dict) else None
            callee = self._project_callee(value) if isinstance(value, ast.Call) else None
            if entries is not None:
                if key not in entries:
                    return False
                found.append(("walk", entries[key]))
            elif callee is not None:
                found.append(("ret", callee))
            else:
                return False
        for how, what in found:
            if how == "walk":
                self._walk(what, owner, klass, out, seen, depth + 1)
            else:
                out.add(("ret", what, key))
        return True

    def _element(self, value, position: int):
        """What ``a, b = value`` binds to its ``position``: an element of a tuple written out, or
        the matching argument of a wrapper that gives back what it was given in order
        (``model, opt = accelerator.prepare(model, opt)``, ``fabric.setup(model, opt)``,
        ``engine, opt, _, _ = deepspeed.initialize(model=model, ...)``)."""
        if isinstance(value, (ast.Tuple, ast.List)):
            elements = value.elts
            return elements[position] if position < len(elements) and not isinstance(elements[position], ast.Starred) else None
        if isinstance(value, ast.Call):
            site = self.ix.call_of(value)
            q = (site.qualname or "") if site is not None else ""
            if q.endswith("deepspeed.initialize") or q == "deepspeed.initialize":
                given = positional(value)
                model = keyword(value, "model")
                return (model.value if model is not None else given[0] if given else None) if position == 0 else None
            if site is not None and site.method in ("prepare", "setup"):
                args = positional(value)
                return args[position] if position < len(args) else None
        return None

    def _self_attr(self, attr: str, klass: str, out, seen, depth) -> None:
        out.add(("self", klass, attr))
        info = self.ix.classes.get(klass)
        for assignment, scope in (info.self_attr_values.get(attr, ()) if info is not None else ()):
            self._walk(assignment.value, scope, klass, out, seen, depth + 1)

    def _call(self, node: ast.Call, scope: Scope, klass, out, seen, depth) -> None:
        walk = lambda n: self._walk(n, scope, klass, out, seen, depth + 1)  # noqa: E731
        site = self.ix.call_of(node)
        if site is None:
            out.add(("node", id(node)))
            return
        q = site.qualname or ""
        method = site.method
        if method in PARAMETER_METHODS and site.receiver is not None:
            walk(site.receiver)  # the parameters of that object
            return
        out.add(("node", id(node)))
        if q.rsplit(".", 1)[-1] == "inject_adapter_in_model":
            # the same model, adapters injected in place in its dtype (`adapter_injection`)
            walk(adapter_injection(self.ix, site))
            return
        if q.endswith(PEFT_WRAPS):
            # a PEFT model: its adapters train, not the base it wraps; they are float32 unless
            # `autocast_adapter_dtype=False` makes them in the base's dtype (the base's cast
            # then decides the dtype of what trains), and so are copies of its `modules_to_save`
            flag = keyword(node, "autocast_adapter_dtype")
            if (flag is not None and is_constant(flag.value, False)) or (
                q.rsplit(".", 1)[-1] == "get_peft_model" and saved_modules(self.ix, site) is not None
            ):
                walk(argument(node, 0, "model"))
            return
        if method in IN_PLACE and site.receiver is not None and not q:
            if not self._not_half_cast(site):
                walk(site.receiver)  # the same module, moved or cast in place
            return
        if q in WRAPPER_FUNCTIONS or (method in WRAPPER_METHODS and not q.startswith(("torch.", "transformers."))):
            args = positional(node)
            walk(argument(node, 0, "model", "module"))
            if method in ("prepare", "setup") and len(args) > 1:
                for arg in args[1:]:
                    walk(arg)  # `accelerator.prepare(model, optimizer)` given back as one
            return
        if q in ITERABLES or q.startswith("builtins.") or (site.method is None and dotted(node.func) in ITERABLES):
            for arg in arguments(node):
                walk(arg.value)
            return
        callee = self._project_callee(node)
        if callee is not None:
            out.add(("ret", callee, None))
        elif method is not None and site.receiver is not None and not q:
            # a method of a project class's instance (`self.model.trainable_params()`, the
            # instance made by `Composite()`): what that method returns, as the join answers it
            # (`return self.backbone.parameters()`: the instance's parts)
            made: Set[tuple] = set()
            self._walk(site.receiver, scope, klass, made, set(seen), depth + 1)
            for key in made:
                if key[0] == "ret" and key[2] is None:
                    out.add(("ret", f"{key[1]}.{method}", None))

    def _project_callee(self, node) -> Optional[str]:
        """The project function or class a call runs (``callees.project_callee``), or None."""
        from .callees import project_callee

        site = self.ix.call_of(node) if isinstance(node, ast.Call) else None
        return project_callee(self.ix, site) if site is not None else None

    def _not_half_cast(self, site) -> bool:
        """A cast that makes the parameters a dtype other than float16 (``.float()``,
        ``.to(torch.float32)``): past it, the object is trained in that dtype."""
        if site.method in NOT_HALF_CASTS:
            return True
        if site.method not in ("to", "type") or self.ev is None:
            return False
        given = keyword(site.node, "dtype")
        args = [given.value] if given is not None else positional(site.node)
        from .values import DTYPE

        for arg in args:
            try:
                values = self.ev.values(arg, site.scope)
            except RecursionError:
                return False
            dtypes = {v.value for v in values if v.kind == DTYPE}
            if dtypes and "float16" not in dtypes and all(v.kind == DTYPE for v in values):
                return True
        return False

    # --- where objects are trained, handed over, returned ------------------------
    def run_scope(self, node, scope: Scope) -> str:
        """The scope ``node`` runs under in the call graph: its function, or the module, or
        ``<module>.__main__`` for module-level code under ``if __name__ == "__main__":``."""
        code = scope.code_scope()
        if code.kind == "module" and id(node) in self.ix.order_of:
            at = self.ix.order(node)[0]
            if any(first <= at < last for first, last in main_block_orders(self.ix)):
                return main_scope(code.qualname)
        return code.qualname

    def uses(self) -> List[Use]:
        if self._uses is None:
            self._uses = self._collect()
        return self._uses

    def _made_by(self, expr, scope: Scope) -> str:
        """The qualified name of what made the object ``expr`` holds, when one call always does
        (``trainer = L.Trainer(...)``): "" otherwise."""
        if isinstance(expr, ast.Call):
            site = self.ix.call_of(expr)
            return (site.qualname or dotted(expr.func) or "") if site is not None else ""
        if isinstance(expr, ast.Name):
            _, reached = self.ix.bindings_of(expr, self._scope(expr, scope))
            if len(reached) == 1 and isinstance(reached[0].value, ast.Call) and reached[0].unpack_index is None:
                return self._made_by(reached[0].value, scope)
        return ""

    def _never_trains(self, site) -> bool:
        """Whether a Hugging Face trainer built at ``site`` certainly never trains: it is bound
        to names that are used in the binding scope, and only to read attributes other than
        ``train`` (``trainer.evaluate()``, ``trainer.predict(ds)``). Such a Trainer makes no optimizer and
        no gradient scaler, so its ``fp16=True`` only autocasts evaluation. A trainer that is
        returned, passed on, stored or used any other way may be trained elsewhere; Lightning's
        trainers are judged by ``fit`` instead."""
        if not site.assigned_to or (site.qualname or "").startswith(("lightning", "pytorch_lightning")):
            return False
        for name in site.assigned_to:
            owner = site.scope.lookup_scope(name)
            if owner is None:
                return False
            reads = _attribute_reads(owner.node, name)
            if not reads or "train" in reads:
                return False  # used otherwise, trained, or never used here (a module's
                # trainer that nothing reads may be another module's import)
        return True

    def _collect(self) -> List[Use]:
        from .callees import project_callee

        ix = self.ix
        out: List[Use] = []

        def add(kind, expr, site, ref=None, evidence=""):
            keys = self.keys(expr, site.scope, site.klass)
            if keys:
                span = ix.span(site.node)
                out.append(Use(kind, keys, ref, evidence, self.run_scope(site.node, site.scope), span.line if evidence else 0, span.start))

        for site in ix.calls:
            node = site.node
            q = site.qualname or ""
            named = q or dotted(node.func) or ""
            if q and is_optimizer(q):
                text = f"`{named}(...)`"
                for arg in arguments(node):
                    if arg.keyword is None or arg.keyword in ("params", "model", "model_parameters", "parameters"):
                        add("train", arg.value, site, evidence=text)
                continue
            if named and is_trainer(named) and not q.startswith("torch."):
                model = argument(node, 0, "model")
                if self._never_trains(site):
                    pass  # built for `evaluate()` / `predict()` only: it never makes an optimizer
                elif model is not None and not _string_literal(model):
                    add("train", model, site, evidence=f"`{named}(model=...)`")
                else:
                    # given a model's name, the trainer loads it with its config's
                    # `model_init_kwargs` and trains it: the config's load is trained
                    config = keyword(node, "args")
                    if config is not None:
                        add("train", config.value, site, evidence=f"`{named}(model=<name>, args=...)`")
            if site.method == "add_param_group" and (node.args or node.keywords):
                add("train", first_argument(node), site, evidence=f"`{dotted(node.func) or 'add_param_group'}(...)`")
            if site.method == "fit" and site.receiver is not None and is_trainer(self._made_by(site.receiver, site.scope)):
                model = argument(node, 0, "model")
                add("train", model, site, evidence=f"`{dotted(node.func) or 'fit'}(...)`")
            callee = project_callee(ix, site)
            if callee is not None:
                position = 0
                for arg in arguments(node):
                    if arg.star:
                        if arg.star == "*":
                            break
                        continue
                    if arg.keyword is None:
                        add("pass", arg.value, site, TrainRef("param", callee, "", position, None))
                        position += 1
                    else:
                        add("pass", arg.value, site, TrainRef("param", callee, "", None, arg.keyword))
        for qualname, function in ix.functions.items():
            klass = _klass_of(function)
            for value, _ in function.returns:
                if value is None:
                    continue
                if isinstance(value, ast.Tuple):
                    parts = list(enumerate(unstarred(e) for e in value.elts))
                elif isinstance(value, ast.Dict) and _string_keys(value) is not None:
                    parts = list(_string_keys(value).items())  # `return {"model": m, "ref": r}`
                else:
                    parts = [(None, value)]
                for position, part in parts:
                    keys = self.keys(part, function, klass)
                    if keys:
                        out.append(Use("return", keys, TrainRef("return", _caller_name(function), index=position), "", qualname))
        return out

    # --- the questions ---------------------------------------------------------------
    def trained_here(self, keys: FrozenSet[tuple]) -> Tuple[str, str]:
        """What trains the object of ``keys`` in this module, and the scope that code runs in
        (``("", "")`` when nothing here does): an optimizer given that object, a part of it
        (``AdamW(pipe.unet.parameters())`` for a cast of ``pipe``) or a whole it is part of
        (``AdamW(model.parameters())`` for a cast of ``model.encoder``), never another part of
        the same whole (``pipe.vae`` for ``pipe.unet``). Where both are known by how this
        module binds them, that decides: two calls of ``Net()`` or of one loader make two
        objects, whatever the callee returns (:func:`same_object`)."""
        for use in self.uses():
            if use.kind == "train" and same_object(use.keys, keys):
                return f"{use.evidence} (line {use.line})", use.scope
        return "", ""

    def trainers(self, keys: FrozenSet[tuple]) -> Tuple[int, ...]:
        """Where each call of this module that trains the object of ``keys`` (as
        ``trained_here`` judges it) starts in the source: the optimizers given its parameters
        under any name (``AdamW(trainable.parameters())`` with ``trainable = unet``). Keys of
        what a project function returns are left out: two calls of ``Net()`` (or of a loader
        function) make two objects, which only the join across callers tells apart."""
        own = frozenset(k for k in keys if _root(k)[0] != "ret")
        return tuple(sorted({u.at for u in self.uses() if u.kind == "train" and meets(u.keys, own)}))

    def trained_parts(self, keys: FrozenSet[tuple]) -> Tuple[str, ...]:
        """The attribute paths below the object of ``keys`` that an optimizer of this module
        trains when the object itself reaches none (``unet`` of ``pipe`` for
        ``AdamW(pipe.unet.parameters())``): the parts whose freezes and uses decide whether
        the weights cast or loaded with ``pipe`` are trained. () where the object itself (or a
        whole it is part of) is trained, or nothing is."""
        found: List[str] = []
        for use in self.uses():
            if use.kind != "train":
                continue
            if use.keys & keys or _wholes(keys) & use.keys:
                return ()
            for key in use.keys:
                path: List[str] = []
                while key[0] == "part":
                    path.insert(0, key[2])
                    key = key[1]
                    if key in keys and spelled_path(path) not in found:
                        found.append(spelled_path(path))
        return tuple(found)

    def sources(self, keys: FrozenSet[tuple]) -> Tuple[TrainRef, ...]:
        """The symbolic answers that make the object of ``keys`` trained elsewhere: a project
        function it is handed to trains that parameter, the function that returns it has
        callers that train it, it is a parameter whose callers train what they pass, it is an
        attribute of a class whose instances are trained."""
        found = set()
        mine = [anchored(key) for key in keys]
        for root, path, _ in mine:
            found.add(_with_part(_key_source(root), path))
        whole = flat(keys)
        for use in self.uses():
            if use.kind == "train" or not flat(use.keys) & whole:
                continue
            # the part of that use's object this one is (or all of it): its answers, for that part
            theirs = [anchored(key) for key in use.keys]
            rest = relation(mine, theirs)
            if rest is None:
                continue  # another part of one whole (`model.decoder` handed on, `model.encoder` cast)
            found.add(_with_part(_source_of(use), rest))
            for root, path, _ in theirs:
                found.add(_with_part(_key_source(root), (*path, *rest)))
        return tuple(sorted((r for r in found if r is not None), key=repr))

    @staticmethod
    def _trained_parts_of(i: int, uses: List[Use], every: List[FrozenSet[tuple]], by_key) -> List[TrainRef]:
        """What the train use ``uses[i]`` makes trained, each with the part of it
        (``TrainRef.part``): the sinks of its own keys (``return(Net)``, part ``head``, for
        ``AdamW(self.model.head.parameters())`` with ``self.model = Net()``), and those of the
        uses that hold its object, or a whole it is part of (``helper(model)``: what callers pass
        to ``helper``, part ``head``); not those of another part of the same whole."""
        use = uses[i]
        mine = [anchored(key) for key in use.keys]
        out = [_with_part(_key_sink(root), path) for root, path, sinkable in mine if sinkable]
        met = sorted({j for key in every[i] for j in by_key[key]} - {i})
        for j in met:
            other = uses[j]
            if other.kind == "train":
                continue  # its own facts
            theirs = [anchored(key) for key in other.keys]
            rest = relation(mine, theirs)
            if rest is None:
                continue
            out.append(_with_part(_sink_of(other), rest))
            out.extend(_with_part(_key_sink(root), (*path, *rest)) for root, path, sinkable in theirs if sinkable)
        return [ref for ref in dict.fromkeys(out) if ref is not None]

    def summary(self) -> Tuple[Tuple[Tuple[TrainRef, str, str, int], ...], Tuple[Tuple[TrainRef, TrainRef, str], ...]]:
        """``(facts, edges)`` of this module for the join: each fact a ``(ref, evidence, scope,
        line)`` trained here; each edge ``(ref, because, scope)``: ``ref`` is trained when
        ``because`` is."""
        facts, (refs, scopes, n) = self.numbered_summary()
        return facts, tuple((refs[a], refs[b], scopes[s]) for a, b, s in zip(n[0::3], n[1::3], n[2::3]))

    def numbered_summary(self) -> Tuple[Tuple[Tuple[TrainRef, str, str, int], ...], Tuple[Tuple[TrainRef, ...], Tuple[str, ...], Tuple[int, ...]]]:
        """:meth:`summary` with its edges numbered (what the facts keep; see :func:`_sorted_edges`)."""
        facts = {}
        uses = self.uses()
        # across functions an object and its parts are one (``flat``): a function that trains
        # `pipe.unet.parameters()` of its parameter `pipe` trains what its callers pass.
        # Two uses meet where their keys share one; each pair that meets links what becomes
        # trained (the sinks of either's keys, and what the other use hands on) to what makes it
        # so (the sources of either's keys, and what this use hands on). The pairs' products are
        # taken apart into what one use brings and what all the uses it meets bring, gathered per
        # key: linear in the uses where the pairs are quadratic (a module with thousands of uses).
        # References are numbered while the products are taken (one hash of each).
        number: Dict[TrainRef, int] = {}
        refs: List[TrainRef] = []

        def numbered(found: Iterable[Optional[TrainRef]]) -> FrozenSet[int]:
            out = set()
            for ref in found:
                if ref is not None:
                    n = number.get(ref)
                    if n is None:
                        n = number[ref] = len(refs)
                        refs.append(ref)
                    out.add(n)
            return frozenset(out)

        every = [flat(use.keys) for use in uses]
        by_key: Dict[tuple, List[int]] = {}
        for i, keys in enumerate(every):
            for key in keys:
                by_key.setdefault(key, []).append(i)
        # each use's keys anchored at their outermost whole, with the part below it
        # (``parts.py``): `train(model.head)` hands on the `head` of what `load()` returns. A
        # use's parts are its own: within the use (its keys' sinks, what it hands on, its keys'
        # sources) an object is linked at the part it holds; across two uses that meet, at its
        # whole, as it met the other (``outermost``: a use holding a whole, `self` with every
        # `self.x` it stands for, links that whole only). A part named on both sides of every
        # pair made each `self.x` of a class a source of every sink its `self` uses meet.
        anchors = [outermost(anchored(key) for key in use.keys) for use in uses]
        key_sinks_of = [
            numbered(_with_part(_key_sink(root), path) for root, path, sinkable in mine if sinkable) for mine in anchors
        ]
        key_sources_of = [numbered(_with_part(_key_source(root), path) for root, path, _ in mine) for mine in anchors]
        whole_sources_of = [numbered(_key_source(root) for root, _, _ in mine) for mine in anchors]
        # the wholes a use holds only a part of: their sinks are named at that part, never at
        # the whole another use brings (`helper(model.head)` trains the head of `model`, whatever
        # else meets `model`)
        part_sinks_of = [
            numbered(_key_sink(root) for root, path, sinkable in mine if sinkable and path) for mine in anchors
        ]
        handed_sink = [numbered((_sink_of(use),)) for use in uses]
        handed_source = [numbered((_source_of(use),)) for use in uses]
        # what each use brings as the other one of a pair (what it hands on, its keys' sinks and
        # sources at the whole), and its own pair's product (at its parts)
        sinks_of = [handed_sink[i] | key_sinks_of[i] for i in range(len(uses))]
        brought_sinks = [handed_sink[i] | numbered(_key_sink(root) for root, _, s in mine if s) for i, mine in enumerate(anchors)]
        sources_of = key_sources_of
        sinks_meeting = {key: frozenset().union(*(brought_sinks[j] for j in js)) for key, js in by_key.items()}
        sources_meeting = {key: frozenset().union(*(whole_sources_of[j] for j in js)) for key, js in by_key.items()}
        pairs: Dict[str, Set[Tuple[int, int]]] = {}  # scope → (sink, source)
        met_by_scope: Dict[str, Set[int]] = {}
        for i, a in enumerate(uses):
            keys = every[i]
            if not keys:
                continue  # meets no use
            own_sinks = key_sinks_of[i]
            if a.kind == "train":
                for sink in self._trained_parts_of(i, uses, every, by_key):
                    facts.setdefault(sink, (sink, a.evidence, a.scope, a.line))
                continue
            other_sinks = frozenset().union(*(sinks_meeting[k] for k in keys)) - part_sinks_of[i]
            other_sources = frozenset().union(*(sources_meeting[k] for k in keys))
            linked = pairs.setdefault(a.scope, set())
            linked.update(product(own_sinks, handed_source[i] | key_sources_of[i] | other_sources))
            linked.update(product(other_sinks, handed_source[i] | whole_sources_of[i]))
            met = met_by_scope.setdefault(a.scope, set())
            for k in keys:
                met.update(by_key[k])
        # the pairs' own products: what the other use brings on both sides (once for uses that
        # bring the same)
        for scope, met in met_by_scope.items():
            linked = pairs[scope]
            for sinks, sources in {(sinks_of[j], sources_of[j]) for j in met}:
                linked.update(product(sinks, sources))
        return tuple(sorted(facts.values(), key=repr)), _sorted_edges(refs, pairs)


def _sorted_edges(refs: List[TrainRef], pairs: Dict[str, Set[Tuple[int, int]]]) -> Tuple[Tuple[TrainRef, ...], Tuple[str, ...], Tuple[int, ...]]:
    """The edges ``(sink, source, scope)`` of ``pairs`` (scope → pairs of numbers in ``refs``),
    in the order of their reprs ``(sink, source, scope)`` (the order the join meets them in,
    which decides the evidence it keeps), numbered: ``(refs, scopes, numbers)``, the references
    and scopes the edges name (each once) and three numbers per edge into them. A module may
    have tens of thousands of edges between a few dozen references (92 references and 37 scopes
    in transformers' ``training_args.py``, 42,505 edges): written out, they were most of its
    facts, pickled from a worker and read by the join one by one.

    The reprs are long and share long beginnings: they are ordered by number instead. Where no
    reference's repr begins another's (a ``TrainRef``'s repr ends at its one closing
    parenthesis), comparing two edges' reprs is comparing their sinks' reprs, then their
    sources', then their scopes' reprs with the closing parenthesis after them: each is ranked
    once, and the edge's key is one number."""
    text = [repr(ref) for ref in refs]
    kept = [
        (sink, source, scope)
        for scope, linked in pairs.items()
        for sink, source in linked
        if sink != source and not _same_parameter(refs[sink], refs[source])
    ]
    ordered = sorted(set(text))
    if any(b.startswith(a) for a, b in zip(ordered, ordered[1:])):  # never, for TrainRef: the reprs themselves
        kept.sort(key=lambda e: f"({text[e[0]]}, {text[e[1]]}, {e[2]!r})")  # repr of the edge
    else:
        rank = {t: i for i, t in enumerate(ordered)}
        ranks = [rank[t] for t in text]
        scope_rank = {scope: i for i, scope in enumerate(sorted(pairs, key=lambda scope: f"{scope!r})"))}
        width, depth = len(ordered), len(scope_rank)
        kept.sort(key=lambda e: (ranks[e[0]] * width + ranks[e[1]]) * depth + scope_rank[e[2]])
    # the references and scopes the edges name, numbered in the order the edges first name them
    ref_number: Dict[int, int] = {}
    scope_number: Dict[str, int] = {}
    numbers: List[int] = []
    for sink, source, scope in kept:
        numbers.append(ref_number.setdefault(sink, len(ref_number)))
        numbers.append(ref_number.setdefault(source, len(ref_number)))
        numbers.append(scope_number.setdefault(scope, len(scope_number)))
    return tuple(refs[n] for n in ref_number), tuple(scope_number), tuple(numbers)


def _wholes(keys: Iterable[tuple]) -> Set[tuple]:
    """The keys of the objects that the ``("part", whole, attribute)`` keys among ``keys`` are
    parts of, through every level (``pipe`` and ``pipe.unet`` for ``pipe.unet.conv_in``)."""
    out: Set[tuple] = set()
    for key in keys:
        while key[0] == "part":
            key = key[1]
            out.add(key)
    return out


def _root(key: tuple) -> tuple:
    """The key of the outermost whole a part key belongs to (the key itself for a whole)."""
    while key[0] == "part":
        key = key[1]
    return key


def flat(keys: Iterable[tuple]) -> FrozenSet[tuple]:
    """``keys`` with the wholes their parts belong to: an object and its parts as one."""
    keys = frozenset(keys)
    return keys | _wholes(keys)


def meets(a: FrozenSet[tuple], b: FrozenSet[tuple]) -> bool:
    """Whether the objects of key sets ``a`` and ``b`` share parameters: the same object, or
    one is a part of the other (``pipe`` and ``pipe.unet``). Two parts of one whole
    (``pipe.unet`` and ``pipe.vae``) share none."""
    return bool(a & b) or bool(_wholes(a) & b) or bool(a & _wholes(b))


def same_object(a: FrozenSet[tuple], b: FrozenSet[tuple]) -> bool:
    """:func:`meets` where a key of what a project function returns (``("ret", "Net")``) is
    left out whenever both sides are also known by their own bindings here: ``teacher =
    load("big")`` and ``student = load("small")`` share the key of ``load``'s return and are
    two objects; so are a notebook's trained ``predictor = Predictor()`` and a later cell's
    ``predictor = Predictor()`` cast for inference (review 26d)."""
    own_a = frozenset(k for k in a if _root(k)[0] != "ret")
    own_b = frozenset(k for k in b if _root(k)[0] != "ret")
    if own_a and own_b:
        return meets(own_a, own_b)
    return meets(a, b)


def _klass_of(function: Scope) -> Optional[str]:
    parent = function.parent
    return parent.qualname if parent is not None and parent.kind == "class" else None


def _caller_name(function: Scope) -> str:
    """How callers name a function (``Class`` for ``__init__``: what ``param_ref`` uses)."""
    key = function.qualname
    parent = function.parent
    if parent is not None and parent.kind == "class" and key.endswith(".__init__"):
        return parent.qualname
    return key


def _parameters_looped(statement) -> Optional[ast.expr]:
    """The ``m.parameters()`` / ``m.named_parameters()`` call a ``for`` loop iterates (its
    variable then holds parameters of ``m``); None for any other binder."""
    return walked_call(statement) if isinstance(statement, (ast.For, ast.AsyncFor)) else None


def _with_part(ref: Optional[TrainRef], path) -> Optional[TrainRef]:
    """``ref`` about the part ``path`` (attribute names, below any part it names) of its object."""
    if ref is None or not path:
        return ref
    part = spelled_path((*split_path(ref.part), *path))
    return TrainRef(ref.kind, ref.function, ref.name, ref.index, ref.keyword, part)


def _source_of(use: Use) -> Optional[TrainRef]:
    """What makes the object of a use trained elsewhere: handed to ``f`` → ``f`` trains that
    parameter; returned from ``f`` → ``f``'s callers train what they get."""
    if use.kind == "pass":
        return TrainRef("param-in", use.ref.function, use.ref.name, use.ref.index, use.ref.keyword)
    if use.kind == "return":
        return use.ref
    return None


def _sink_of(use: Use) -> Optional[TrainRef]:
    """What becomes trained when the object of a use is: handed to ``f`` → what ``f``'s
    callers pass for that parameter (``param-out``)."""
    if use.kind == "pass":
        return TrainRef("param-out", use.ref.function, use.ref.name, use.ref.index, use.ref.keyword)
    return None


def _key_source(key: tuple) -> Optional[TrainRef]:
    """A parameter is trained when its callers train what they pass; ``self.x`` when the
    class's instances are trained."""
    if key[0] == "param":
        ref = key[1]
        return TrainRef("param-out", ref.function, ref.name, ref.index, None)
    if key[0] in ("self", "instance"):
        return TrainRef("instance", key[1])
    return None


def _key_sink(key: tuple) -> Optional[TrainRef]:
    """A parameter trained here: its function trains what it is given; an object a project
    function returned, trained here: that function's callers train what it returns; an
    instance trained here: its class's instances are."""
    if key[0] == "param":
        ref = key[1]
        return TrainRef("param-in", ref.function, ref.name, ref.index, None)
    if key[0] == "ret":
        return TrainRef("return", key[1], index=key[2])
    if key[0] == "instance":
        return TrainRef("instance", key[1])
    return None


def _same_parameter(sink: TrainRef, source: TrainRef) -> bool:
    """``param-in(f, p)`` because ``param-out(f, ...)`` or ``return(f)``: what one caller does
    with its object says nothing of what ``f`` does with another caller's. A helper that casts
    (and returns) both a frozen VAE and a trained UNet does not train the VAE because the UNet's
    caller trains what it passes or gets back."""
    return sink.kind == "param-in" and source.kind in ("param-out", "return") and sink.function == source.function


def trained_objects(index: ModuleIndex, evaluator=None) -> TrainedObjects:
    """The module's trained objects, built once per index."""
    found = getattr(index, "_trained_objects", None)
    if found is None:
        found = index._trained_objects = TrainedObjects(index, evaluator)
    return found


def _string_keys(node: ast.Dict) -> Optional[Dict[str, ast.expr]]:
    """``{"model": m, "ref": r}`` → its entries; None when a key is not a string literal or
    the dict splats another (``{**base, ...}``)."""
    out: Dict[str, ast.expr] = {}
    for key_node, value in zip(node.keys, node.values):
        key = string_value(key_node) if key_node is not None else None  # None: `**base`
        if key is None:
            return None
        out[key] = value
    return out


def _string_literal(node: ast.expr) -> bool:
    """A string (or bytes) literal, f-strings included: a model's name, not a model."""
    return isinstance(node, ast.JoinedStr) or isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))


def _attribute_reads(tree: ast.AST, name: str) -> Optional[Set[str]]:
    """Every use of ``name`` in ``tree``: the attributes read on it (``x.attr``), or None when
    it is used any other way (passed, returned, stored, compared) besides being assigned.

    Every identifier spelled ``name`` counts as a use, not only an ``ast.Name``: a parameter,
    a keyword argument, an attribute named ``name`` (``x.name``), an import of it. The answer
    errs towards "used otherwise", which keeps the trainer one that may train (see
    ``_never_trains``). Only the target of a plain assignment (``name = ...``) and the object of
    an attribute read on it (``name.attr``) are not uses; an import's dotted name is read as
    attribute reads (``import name.sub`` reads ``sub`` on ``name``)."""
    attributes: Set[str] = set()
    skip: Set[int] = set()
    for node in nodes_of(tree):
        if isinstance(node, ast.Name):
            if node.id == name and id(node) not in skip:
                return None
            continue
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name:
            attributes.add(node.attr)
            skip.add(id(node.value))
        elif isinstance(node, ast.Assign):
            skip.update(id(t) for t in node.targets if isinstance(t, ast.Name))
        if isinstance(node, (ast.alias, ast.ImportFrom)):
            dotted_name = node.name if isinstance(node, ast.alias) else node.module
            if dotted_name:
                first, *rest = dotted_name.split(".")
                if first == name:
                    if not rest:
                        return None
                    attributes.add(rest[0])
                if name in rest:
                    return None
            if getattr(node, "asname", None) == name:  # `import x as name`
                return None
        elif name in identifiers(node):
            return None
    return attributes
