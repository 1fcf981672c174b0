"""Facts about where model weights get a dtype (read by MP101, MP201, MP401).

A *weights site* is a call that decides the dtype of a model's parameters:
``from_pretrained(..., torch_dtype=X)`` / ``dtype=X`` (and ``from_config``),
``model.half()``, ``model.bfloat16()``, ``model.float()``, ``model.to(torch.float16)``,
``model.to(device, dtype=...)``. For each, the possible dtypes (through variables,
ternaries, argparse options, config dicts), the variables the model is bound to,
and whether those parameters are trained at all: a teacher frozen with
``requires_grad_(False)``, or a model only ever called under ``torch.no_grad()``,
never has its gradients unscaled, so fp16 weights are fine there.
"""
from __future__ import annotations

import dataclasses
import functools
from ..._dataclass import dataclass
from typing import Any, Dict, List, Optional, Tuple

import ast

from ...diagnostics import Span
from ...semantic.evaluate import Evaluator
from ...semantic.callees import project_class
from ...semantic.index import CallSite, ModuleIndex, Scope, argument, arguments, is_constant, keyword, mentions, positional, string_value, unstarred
from ...semantic.kinds import TENSOR_FACTORIES, constructs_module, is_loader, object_kinds, same_names
from ...semantic.tensors import CAST_METHODS, WIDE_DTYPES, cast_dtypes
from ...semantic.names import dotted, spelled
from ...semantic.literal_tests import guards_text
from ...semantic.parts import spelled_path
from ...semantic.queries import binding_position, bound_before, is_parameter, only_parameter, position, reaching
from ...semantic.training_state import (
    TrainRef, adapter_injection, attached_after, adapters_at_end, after_training_cast, frozen_at_end, last_freeze, no_grad_function,
    peft_config_builds, runs_before, save_time_cast, computes_nothing_after, saved_modules, trained_objects, unfrozen_after, unfrozen_by_choice, without_grad,
)
from ...semantic.values import CONST, DTYPE, PARAM, SYMBOLIC, Possible, dtypes as dtype_atoms

SECTION = "weights"

DTYPE_KWARGS = ("torch_dtype", "dtype")
KBIT_PREPARES = ("prepare_model_for_kbit_training", "prepare_model_for_int8_training")
NO_GRAD = ("torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "no_grad", "inference_mode")


@dataclass(frozen=True)
class WeightsSite:
    """A call that gives a model's parameters their dtype, with the dtypes it may give and
    whether those parameters are trained: float16 weights under a GradScaler fail only where
    an optimizer steps on them."""

    kind: str  # "dtype-kwarg", "half", "bfloat16", "float", "double", "to-dtype"
    span: Span  # the whole call
    edit_span: Optional[Span]  # what a fix rewrites: the dtype expression, or `.half()` incl. the dot
    dtypes: Tuple[str, ...]  # possible canonical dtypes
    values: Tuple[Possible, ...]
    targets: Tuple[str, ...]  # names (or `self.x`) the model is bound to
    scope: str  # qualname of the enclosing function, or the module name
    scope_kind: str  # "module", "function"
    trainable: bool
    frozen: str  # why not trainable ("" when trainable)
    peft: bool  # wrapped by get_peft_model afterwards (adapters default to fp32)
    returned: bool  # a target is returned from the enclosing function
    via: str = "keyword"  # for dtype-kwarg: "keyword", "dict-call", "dict-literal"
    edit_text: str = ""  # source text of edit_span
    receiver_text: str = ""  # `.half()` etc.: the text before the dot
    on_cpu: bool = False  # loaded with `device_map="cpu"`: no GPU capability matters
    # built under accelerate's `init_empty_weights()`: on the meta device, with no weights; the
    # call that loads them (`load_checkpoint_and_dispatch(..., dtype=)`, the load on the rank that
    # broadcasts them) is where their dtype on the GPU is chosen
    on_meta: bool = False
    # the call also puts the model on a device: `.to(device, dtype=...)` (a device positional or
    # `device=` besides the dtype), a load with a `device_map` other than "cpu". A site that does
    # not leaves the model where it was (the CPU, after a load): a later cast of it decides the
    # dtype it computes in (MP201's ``superseded``)
    moves: bool = False
    # under a test it may not pass and go on (`if`, a loop's condition; not an `assert` or an
    # early exit before it, whose failing path ends the program): it may not run
    conditional: bool = False
    # a load written as a statement alone (`AutoModel.from_pretrained(name, dtype=...)`): its
    # result is dropped, so nothing computes with these weights (a script that fills the cache);
    # or a new object bound to names no read sees before they are bound again (_dead_store)
    discarded: bool = False
    # a bf16 cast or load whose model is then only saved (`model.to(torch.bfloat16)`, then
    # `model.save_pretrained(out)`): a conversion that runs nothing in that dtype
    # (``training_state.computes_nothing_after``)
    computes_nothing: bool = False
    # the model's first use below the load or cast hands it to `prepare_model_for_kbit_training`
    # (`prepare_model_for_int8_training`), which casts every float16 and bfloat16 parameter to
    # float32 (:func:`_upcast_first`): nothing computes in the dtype chosen here
    upcast_first: bool = False
    # a 4/8-bit base (frozen: its quantized layers never train) some of whose own parameters the
    # code makes trainable below (``[p.requires_grad_() for n, p in model.named_parameters() if
    # "norm" in n]``): those train in the dtype the load gives them (what makes them trainable;
    # "" when nothing does). Which of them the names pick is not read: only MP201's fallback
    # dtype (float32, not float16) follows it
    quantized_unfrozen: str = ""
    # the line of the first tensor of the file cast or made in bf16 by a dtype written as such
    # (`x.to(dtype=torch.bfloat16)`, `emb.bfloat16()`, `torch.zeros(n, dtype=torch.bfloat16)`;
    # 0: none): a fallback dtype given to the weights alone meets that bf16 tensor
    # (`RuntimeError: mat1 and mat2 must have the same dtype`), so MP201's fix is unsafe
    bf16_tensor_line: int = 0
    # the same for float16, outside autocast (`x.to(dtype=weight_dtype)` of a dtype that may be
    # float16, `x.half()`): weights MP101's fix keeps in float32 would meet that float16 tensor
    # where nothing autocasts (`RuntimeError: mat1 and mat2 must have the same dtype, but got Half
    # and Float`), so that fix is unsafe (review 26b, 26d: fp16 inputs of a cast module)
    fp16_tensor_line: int = 0
    # `Net(cfg).half()` with `Net` a class of another project module: a model only if that
    # class derives from a torch.nn.Module, which the join decides (``join``); "" otherwise
    builds: str = ""
    # `.half()` of a PEFT model (bound to `get_peft_model(...)` above): the base is frozen, only
    # the adapters train, so only they need float32 (upcasting the base doubles its memory)
    adapters: bool = False
    # Positive evidence that the object cast or loaded here is trained (its parameters reach an
    # optimizer, training_state.TrainedObjects): what trains it in this module ("" when nothing
    # here does) and the scope that code runs in; and the symbolic answers that make it trained
    # elsewhere (handed to a function that trains it, returned to callers that do...), joined in
    # project/trained.py. Neither: nobody is seen training it, and MP101 says nothing.
    trained: str = ""
    trained_scope: str = ""
    trained_if: Tuple[TrainRef, ...] = ()
    # A wrap for adapter training taken only under conditions of the form ``x == "lit"``,
    # ``x in ("a", "b")`` (``if args.train_mode in ["lora", "qlora"]:``): for each condition,
    # ``(values of x, the literals, whether the wrap needs x among them)``. Where ``x`` is a
    # configuration's value (a file's key, a field's default), the rule asks each
    # configuration whether it wraps the model (``project/configurations.py``).
    peft_when: Tuple[Tuple[Tuple[Possible, ...], Tuple[Any, ...], bool], ...] = ()
    # The tests of that form the cast itself runs under (``if model_args.pre_seq_len is not
    # None: model = model.half()``): a configuration where one certainly fails never casts.
    cast_when: Tuple[Tuple[Tuple[Possible, ...], Tuple[Any, ...], bool], ...] = ()
    # Those tests as written (``semantic.literal_tests.guards_text``): an optimizer built in the
    # other branch of the cast's ``if`` never steps the weights it casts (review 27d)
    cast_if: str = ""
    # Adapters injected in place into this model (``unet.add_adapter(config)``,
    # ``inject_adapter_in_model(config, unet)``) after its last freeze: what trains is those
    # adapters, made in the model's dtype (``training_state.adapter_injection``). The call as
    # written, its span (MP101's fix upcasts the adapters below it) and the model's name there.
    injected: str = ""
    injected_span: Optional[Span] = None
    injected_into: str = ""
    # ``get_peft_model(model, LoraConfig(modules_to_save=["lm_head"]))``: PEFT trains copies of
    # those modules in the model's dtype (``training_state.saved_modules``); their list as written.
    injected_copies: str = ""
    # ``model = get_peft_model(model, LoraConfig(...))`` when it is what keeps the trained
    # parameters float32 (``peft``) and nothing else does (no ``prepare_model_for_kbit_training``,
    # no upcast loop below, no ``autocast_adapter_dtype=``): peft 0.7 to 0.11 make those adapters
    # in the base layer's float dtype (``knowledge/libraries.toml`` ``[adapter_dtype]``), so the
    # rule asks which peft the file targets (a project's, not a file's fact). The call as
    # written, its span (the fix upcasts the adapters below it) and the model's name there.
    lora_wrap: str = ""
    lora_wrap_span: Optional[Span] = None
    lora_wrap_into: str = ""
    # The trained parts of the object (``pipe.unet`` of a pipeline loaded here with
    # ``torch_dtype=torch.float16``, trained by ``AdamW(pipe.unet.parameters())``), as paths of
    # ``targets``: the names an optimizer's parameters come from (MP104). () where the object
    # itself is what trains, or nothing does.
    parts: Tuple[str, ...] = ()
    # Where the calls of this file that train the object start (``TrainedObjects.trainers``):
    # an optimizer given its parameters under another name (``trainable = unet``) updates
    # these weights too (MP104).
    trained_by: Tuple[int, ...] = ()
    # ``pipe.unet.requires_grad_(not use_lora)`` with ``use_lora`` on unless the user passes
    # ``--no_lora``: the model trains only in a run the user picks (the call as written; ""
    # otherwise). Like float16 chosen by hand, that run meets loss scaling the user must also
    # switch on by hand only by a second choice of theirs (MP101).
    trained_by_choice: str = ""
    # a TRL trainer given the model with `peft_config=` after `get_peft_model` made it a
    # PeftModel already (the call as written, and its line; "" otherwise): below TRL 0.20 the
    # trainer keeps the PeftModel as it is, adapters and all, and makes no float32 ones (MP101)
    kept_peft: str = ""

    def float16_values(self) -> Tuple[Possible, ...]:
        """The values that make these weights float16 (``torch.float16``, ``"fp16"``), with the
        guards they are chosen under."""
        return tuple(v for v in dtype_atoms(self.values) if v.value == "float16")

    def after_substitution(self) -> "WeightsSite":
        """Once parameters are replaced by what callers pass (the join), the dtypes follow."""
        return dataclasses.replace(self, dtypes=_dtype_names(self.values))


def _dtype_names(values) -> Tuple[str, ...]:
    return tuple(sorted({v.value for v in dtype_atoms(values) if v.value}))


def _chain_targets(index: ModuleIndex) -> Dict[int, Tuple[str, ...]]:
    """Call node id → names bound to its result, through method chains.

    ``m = AutoModel.from_pretrained(...).half()`` binds ``m`` to both calls.
    """
    out: Dict[int, Tuple[str, ...]] = {}
    for site in index.calls:
        if not site.assigned_to:
            continue
        node: Optional[ast.expr] = site.node
        while isinstance(node, ast.Call):
            out[id(node)] = site.assigned_to
            func = node.func
            node = func.value if isinstance(func, ast.Attribute) else None
    return out


def _pipeline(site) -> str:
    """Why weights loaded into an inference pipeline are not trained: a diffusers
    ``DiffusionPipeline`` or a transformers ``pipeline(...)`` is no ``nn.Module`` an optimizer
    can take (it generates under ``no_grad``); "" for any other loader."""
    q = site.qualname or ""
    owner = q.rsplit(".", 1)[0] if site.method in ("from_pretrained", "from_single_file") else q
    if owner.rsplit(".", 1)[-1].endswith("Pipeline") or q in ("transformers.pipeline", "transformers.pipelines.pipeline"):
        return "an inference pipeline (not an nn.Module an optimizer trains)"
    return ""


def _chained_on_loader(index: ModuleIndex, receiver) -> bool:
    """``AutoModel.from_pretrained(...).cuda()``, ``nn.Linear(2, 2).to(device)``: a chain of
    calls that starts by loading or building a model."""
    node = receiver
    while isinstance(node, ast.Call):
        site = index.call_of(node)
        if site is not None and (is_loader(site) or constructs_module(index, site)):
            return True
        node = node.func.value if isinstance(node.func, ast.Attribute) else None
    return False


def _imported_class(index: ModuleIndex, receiver, kinds=None, scope: Optional[Scope] = None, klass: Optional[str] = None) -> str:
    """The class of another project module that a chain starts by building
    (``Net(cfg).cuda()``): its qualified name, or "" for anything else.

    With ``kinds`` (``semantic/kinds.py``), a name is followed to the constructors bound to it
    (``model = Net(); model.to(torch.float16); return model`` in a trainer's ``_create_model``):
    every binding that reaches it must build that one class (the constructor says what the
    object is, never the name). Whether the class is a ``torch.nn.Module`` is the join's
    question (``join``)."""
    node = receiver
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        node = node.func.value
    if isinstance(node, ast.Name) and kinds is not None:
        found = {project_class(index, call) for call in kinds.constructor_calls(node, scope, klass)}
        made = found.pop() if len(found) == 1 else None
        return made if made and made not in index.classes else ""
    made = project_class(index, node) if isinstance(node, ast.Call) else None
    return made if made and made not in index.classes else ""


def _to_dtype_arg(site: CallSite, evaluator: Evaluator):
    """The dtype argument of ``.to(...)``: ``dtype=`` or a positional dtype.

    A value known only at the join (a config file's ``dtype:``, what a function of another
    module returns) is taken from the dtype's own place — ``.to(dtype)``, ``.to(device, dtype)``
    — so that ``.to(cfg["device"], ...)`` is not read as the dtype; a written dtype or a
    parameter from any place."""
    kw = keyword(site.node, "dtype")
    if kw is not None:
        return kw.value
    args = positional(site.node)
    slot = 1 if len(args) > 1 else 0
    for i, arg in enumerate(args):
        joined = i == slot and evaluator.may_carry(arg, site.scope)
        if not (joined or evaluator.mentions_dtype(arg, site.scope) or _is_parameter(arg, site.scope)):
            continue  # `.to(device)`: no dtype can reach it (a parameter's callers may pass one)
        vals = evaluator.values(arg, site.scope)
        if any(v.kind in (DTYPE, PARAM) or (i == slot and v.kind in SYMBOLIC) for v in vals):
            return arg
    return None


def _is_parameter(expr, scope: Scope) -> bool:
    if not isinstance(expr, ast.Name):
        return False
    return is_parameter(expr.id, scope)


def _same(a: ast.AST, b: ast.AST) -> bool:
    """Whether two expressions are the same code (the same test written twice): the same
    tree, compared by ``ast.dump``, which leaves positions out, and so parentheses and spacing,
    which change nothing a test asks."""
    return a is b or (type(a) is type(b) and ast.dump(a) == ast.dump(b))


def _peft_config_trainer(qualname: str, site: CallSite) -> bool:
    """Whether the call (its qualified or dotted name ``qualname``) is a trainer given
    ``peft_config=`` (TRL's ``SFTTrainer``): one that wraps the model it is given for adapters."""
    return qualname.rsplit(".", 1)[-1].endswith("Trainer") and _given(keyword(site.node, "peft_config"))


class _Uses:
    """How the names bound to a model are used in the module."""

    def __init__(self, index: ModuleIndex) -> None:
        self.ix = index

    def _refers(self, node, name: str) -> bool:
        return spelled(node) == name

    def adapters_escape_freeze(
        self, names: Tuple[str, ...], reason: str, wrap: CallSite, call: Optional[ast.Call] = None, fresh: bool = False, truth=None,
    ) -> bool:
        """Whether the adapters ``wrap`` (``peft_wrap``) adds train though ``reason``
        (``frozen_reason``'s answer, with the same arguments) froze the model: the freeze was
        written before the wrap (``get_peft_model`` adds trainable adapters to a frozen base), or
        it lets the adapters' names through (``if "lora_" not in n: p.requires_grad = False``
        freezes what the wrap froze already)."""
        at = position(self.ix, call) if fresh and call is not None else None
        last = last_freeze(self.ix, names, -1 if at is None else at, truth)
        if last is None or last.what != reason:
            return False
        if last.keeps_adapters:
            return True
        if (wrap.qualname or dotted(wrap.node.func) or "").endswith(KBIT_PREPARES):
            return False  # it adds no adapters (and freezes the base itself)
        wrapped_at = position(self.ix, wrap.node)
        return wrapped_at is not None and last.at < wrapped_at

    def frozen_reason(
        self, names: Tuple[str, ...], scope: Scope, call: Optional[ast.Call] = None, fresh: bool = False, truth=None,
        optimized: bool = False,
    ) -> str:
        """Why the model bound to ``names`` is not trained ("" when it may be). ``fresh``: the
        call makes a new model (a loader), so code of its scope written before it uses an
        earlier one; a cast (``.half()``) changes the model in place, whose uses all count.
        ``truth``: what a test is in the runs that reach the call (``truth_in``). ``optimized``:
        an optimizer of the module is seen taking the object (through another name for it,
        ``trainable = unet``), so a local none of ``names`` hands on is trained all the same."""
        if not names:
            return ""
        made = call if fresh else None
        after = (position(self.ix, call) if fresh and call is not None else None)
        after = -1 if after is None else after
        # the last freeze wins, unless `requires_grad_(True)` comes after it (training_state.py);
        # `requires_grad_(flag)` freezes it in the runs where the call's own tests make flag false
        frozen = frozen_at_end(self.ix, names, after, truth)
        if frozen:
            return frozen
        decorated = no_grad_function(scope)
        if decorated and not self.returned(names, scope, call):
            return f"made inside `{decorated}` (no gradients there)"
        calls_under_no_grad = calls_outside = 0
        trained = prepared = False
        evaled = False
        escapes = any("." in n for n in names)  # `self.model = ...`: used wherever self is
        pipeline = ""  # handed to an inference pipeline as one of its components (why)
        for site in self.ix.calls:
            node = site.node
            recv = site.receiver
            if runs_before(self.ix, node, site.scope.code_scope(), made, scope):
                continue  # ran before this model was made: uses an earlier one
            for name in names:
                if recv is not None and self._refers(recv, name):
                    if site.method == "requires_grad_":
                        pass  # judged in order above
                    elif site.method == "eval":
                        evaled = True
                    elif site.method == "train":
                        trained = True
                    elif site.method in ("parameters", "named_parameters"):
                        if not self._in_freeze_loop(node):
                            trained = True
                    elif site.method in ("forward", "generate", "__call__", "encode", "get_text_features", "get_image_features"):
                        if without_grad(site):
                            calls_under_no_grad += 1
                        else:
                            calls_outside += 1
                if self._refers(node.func, name):
                    if without_grad(site):
                        calls_under_no_grad += 1
                    else:
                        calls_outside += 1
                for arg in arguments(node):  # a splat's value (`*models`, `**kwargs`) too
                    if self._refers(arg.value, name):
                        callee = site.qualname or dotted(node.func) or ""
                        component_of = _pipeline(site)
                        if component_of:
                            # `XPipeline.from_pretrained(..., transformer=model)`, `pipeline(model=model)`:
                            # a component the pipeline generates with (under no_grad)
                            pipeline = pipeline or component_of
                        elif arg.keyword == "model" or callee.endswith("Trainer"):
                            trained = True
                        elif callee.endswith("get_peft_model"):
                            trained = True
                        elif callee.endswith(("prepare", "prepare_model")):
                            # `accelerator.prepare(student, teacher, optimizer)` wraps a frozen
                            # teacher too: trained unless its use says otherwise (below)
                            prepared = True
                        else:
                            escapes = True  # handed to code that may train it
        if trained:
            return ""
        if pipeline and not escapes and not calls_outside:
            return f"a component of {pipeline}"
        if calls_under_no_grad and not calls_outside:
            return "only used under `torch.no_grad()`"
        if evaled:
            return "put in `.eval()` and never trained"
        if prepared:
            return ""
        if scope.kind == "function" and not optimized and not escapes and not calls_outside and not self.returned(names, scope, call):
            # A local that is loaded, perhaps cast and saved, and dies with the function: its
            # parameters never reach an optimizer. (A module-level model may be used by any
            # code that imports it, so it is not judged this way.)
            return "never trained: a local that is not called, returned or handed to other code"
        return ""

    def _in_freeze_loop(self, node: ast.Call) -> bool:
        return any(loop.iter is node for loop in self.ix.for_loops) and any(
            a.target.attr == "requires_grad" for a in self.ix.attr_assigns
        )

    def peft_wrap(self, names: Tuple[str, ...], after: int, guards=()) -> Optional[CallSite]:
        """The call that wraps the model for adapter training after ``after`` on every path: a
        ``get_peft_model(model, ...)`` / ``prepare_model_for_kbit_training(model)`` or a
        trainer given ``model=model`` with ``peft_config=`` (TRL's ``SFTTrainer``), run under no
        condition the weights site itself is not under. A wrap taken only when ``use_peft``
        leaves the full fine-tune path training the float16 weights themselves."""
        mine = {(id(expr), positive) for expr, positive in guards}
        for site in self.ix.calls:
            q = site.qualname or dotted(site.node.func) or ""
            if q.endswith(("get_peft_model", "prepare_model_for_kbit_training")):
                if saved_modules(self.ix, site) is not None:
                    continue  # trainable copies of `modules_to_save` in the model's dtype (adapter_injection)
                first = argument(site.node, 0, "model")
            elif _peft_config_trainer(q, site):
                first = argument(site.node, 0, "model")
                if first is not None and self._peft_model_before(names, self.ix.span(site.node).start):
                    continue  # a PeftModel already: TRL keeps it, adapters and all (see _peft_model_before)
            else:
                continue
            if first is None or not any(self._refers(first, n) for n in names):
                continue
            if self.ix.span(site.node).start < after:
                continue
            flag = keyword(site.node, "autocast_adapter_dtype")
            if flag is not None and is_constant(flag.value, False):
                continue
            if any((id(expr), positive) not in mine for expr, positive in site.guards):
                continue  # only on some paths (`if args.use_peft:`): the others train the weights
            return site
        return None

    def trainer_keeps_peft(self, names: Tuple[str, ...], after: int) -> str:
        """The TRL trainer below ``after`` given the model bound to ``names`` with ``peft_config=``
        where the model is a PeftModel already (:meth:`_peft_model_before`), as written with its
        line; "" where there is none."""
        for site in self.ix.calls:
            q = site.qualname or dotted(site.node.func) or ""
            if not _peft_config_trainer(q, site):
                continue
            start = self.ix.span(site.node).start
            first = argument(site.node, 0, "model")
            if start > after and first is not None and any(self._refers(first, n) for n in names) and self._peft_model_before(names, start):
                return f"`{q.rsplit('.', 1)[-1]}(..., peft_config=...)` (line {self.ix.span(site.node).line})"
        return ""

    def _peft_model_before(self, names: Tuple[str, ...], at: int) -> bool:
        """Whether the model bound to ``names`` is made a PeftModel before ``at``
        (``get_peft_model(model, ...)``): a TRL trainer given it with ``peft_config=`` then makes
        no float32 adapters of its own below TRL 0.20. TRL 0.11.4, 0.12.2, 0.16.1, 0.17.0, 0.18.2
        and 0.19.1 return a PeftModel as it is (``if isinstance(model, PeftModel): return
        model``): its adapters train in the dtype the code gave them. 0.20.0 and 0.21.0 hand it to
        ``get_peft_model`` again, which makes the adapters anew (float32 on peft 0.21: checked on
        CPU); TRL 1.x refuses the pair (``ValueError: You passed a `PeftModel` instance together
        with a `peft_config` ...``). The rule reads the TRL versions (MP101)."""
        for site in self.ix.calls:
            q = site.qualname or dotted(site.node.func) or ""
            if not q.endswith("get_peft_model") or self.ix.span(site.node).start >= at:
                continue
            first = argument(site.node, 0, "model")
            if first is not None and any(self._refers(first, n) for n in names) or set(site.assigned_to or ()) & set(names):
                return True  # the model wrapped, or a name bound to the PeftModel (`model = get_peft_model(...)`)
        return False

    def kbit_prepared(self, names: Tuple[str, ...], after: int) -> bool:
        """Whether the model is handed to ``prepare_model_for_kbit_training`` /
        ``prepare_model_for_int8_training`` after ``after`` (they cast its float16 and bf16
        parameters to float32)."""
        for site in self.ix.calls:
            q = site.qualname or dotted(site.node.func) or ""
            if q.rsplit(".", 1)[-1] not in KBIT_PREPARES or self.ix.span(site.node).start <= after:
                continue
            first = argument(site.node, 0, "model")
            if first is not None and any(self._refers(first, n) for n in names):
                return True
        return False

    def lora_wrap(self, evaluator: Evaluator, names: Tuple[str, ...], after: int, guards=()) -> Optional[CallSite]:
        """The ``get_peft_model(model, config)`` below ``after`` that ``peft_wrap`` counts, when
        ``config`` is a LoRA config on every path (built in the call, or bound to a name by such a
        call) and it alone decides the adapters' dtype: not where the model is also handed to
        ``prepare_model_for_kbit_training`` / ``prepare_model_for_int8_training`` (they cast its
        float16 parameters to float32, adapters included) or to a trainer with ``peft_config=``
        (TRL's own wrap), not where the call passes ``autocast_adapter_dtype=`` (peft 0.12's
        keyword), and not where the trainable parameters are upcast below it. None otherwise."""
        from ...knowledge import adapter_dtype

        table = adapter_dtype()
        mine = {(id(expr), positive) for expr, positive in guards}
        found = None
        for site in self.ix.calls:
            q = site.qualname or dotted(site.node.func) or ""
            short = q.rsplit(".", 1)[-1]
            wraps_trl = _peft_config_trainer(q, site) and not self._peft_model_before(names, self.ix.span(site.node).start)
            if short in KBIT_PREPARES or wraps_trl:
                first = argument(site.node, 0, "model")
                if first is not None and any(self._refers(first, n) for n in names) and self.ix.span(site.node).start > after:
                    return None
                continue
            if short != table.wrap or self.ix.span(site.node).start < after or keyword(site.node, "autocast_adapter_dtype") is not None:
                continue
            first = argument(site.node, 0, "model")
            if first is None or not any(self._refers(first, n) for n in names):
                continue
            if any((id(expr), positive) not in mine for expr, positive in site.guards):
                continue  # a conditional wrap: `peft_when`'s
            if saved_modules(self.ix, site) is not None or not self._lora_config(site, table.configs):
                return None
            found = found or site
        if found is None:
            return None
        wrapped = tuple(dict.fromkeys(names + tuple(found.assigned_to)))
        if self.trainable_upcast_after(wrapped, self.ix.span(found.node).end, evaluator, guards):
            return None
        return found

    def _lora_config(self, site: CallSite, configs: Tuple[str, ...]) -> bool:
        """Whether the config a ``get_peft_model`` call wraps the model with is built by one of
        ``configs`` on every path (in the call, or bound to a name by such calls)."""
        builds = peft_config_builds(self.ix, site)
        for built in builds:
            made = self.ix.call_of(built) if isinstance(built, ast.Call) else None
            q = (made.qualname if made is not None else None) or ""
            parts = q.split(".")
            if not q or f"{parts[0]}.{parts[-1]}" not in configs:
                return False
        return bool(builds)

    def peft_conditions(self, evaluator: Evaluator, names: Tuple[str, ...], after: int, guards=()):
        """For a wrap that ``peft_wrap`` refuses because it runs only under conditions of its
        own: those conditions when each compares one expression with literals (``x == "a"``,
        ``x != "a"``, ``x in ["a", "b"]``, ``x not in (...)``, also under ``not``/``else``) or tests
        one switch (``if args.use_lora:``), as ``WeightsSite.peft_when`` holds them; () for any
        other wrap."""
        mine = {(id(expr), positive) for expr, positive in guards}
        for site in self.ix.calls:
            q = site.qualname or dotted(site.node.func) or ""
            if not q.endswith("get_peft_model"):
                continue
            first = argument(site.node, 0, "model")
            if first is None or not any(self._refers(first, n) for n in names) or self.ix.span(site.node).start < after:
                continue
            flag = keyword(site.node, "autocast_adapter_dtype")
            if flag is not None and is_constant(flag.value, False):
                continue
            own = [term for expr, positive in site.guards if (id(expr), positive) not in mine for term in _conjuncts(expr, positive)]
            # (`if args.use_lora:` too: a bare switch, as a cast's conditions read it)
            conditions = [
                _membership(evaluator, expr, positive, site.scope) or _truthiness(evaluator, expr, positive, site.scope)
                for expr, positive in own
            ]
            if own and all(c is not None for c in conditions):
                return tuple(_as_option(self.ix, expr, c) for (expr, _), c in zip(own, conditions))
        return ()

    def adapters_before(self, names: Tuple[str, ...], before: int) -> bool:
        """Whether one of ``names`` is bound to ``get_peft_model(...)`` above ``before``."""
        for site in self.ix.calls:
            q = site.qualname or dotted(site.node.func) or ""
            if q.endswith("get_peft_model") and set(site.assigned_to) & set(names) and self.ix.span(site.node).start < before:
                return True
        return False

    def trainable_upcast_after(self, names: Tuple[str, ...], after: int, evaluator: Optional[Evaluator] = None, guards=()) -> bool:
        """The trainable parameters are made float32 again below ``after``, on every path that
        gets there with fp16 on: ``for p in model.parameters(): if p.requires_grad: p.data =
        p.data.float()`` (what MP101's fix writes; the frozen base stays float16), or diffusers'
        ``cast_training_params(model)`` / ``cast_training_params([unet, text_encoder],
        dtype=torch.float32)`` (``diffusers.training_utils``: ``param.data = param.to(dtype)``
        for each parameter with ``requires_grad``; float32 by default).

        An upcast under a condition of its own (one the site's ``guards`` are not under) counts
        only when that condition holds whenever fp16 is chosen (``if args.mixed_precision ==
        "fp16":``, ``if weight_dtype == torch.float16:``): the scripts upcast exactly when fp16
        loss scaling is on, or when it is the very test the site is under, written again. Under
        any other condition a path skips it with float16 adapters.

        The models a ``cast_training_params`` call upcasts are its list literal's, or those a
        list variable holds at the call (``Evaluator.list_elements``: ``models = [unet]`` and the
        ``models.append(...)`` / ``.extend(...)`` / ``+=`` after it), each under the tests it
        was added under too."""
        mine = {(id(expr), positive) for expr, positive in guards}

        def on_every_fp16_path(own, loop_names=()) -> bool:
            for expr, positive in own:
                if (id(expr), positive) in mine or mentions(expr, loop_names):
                    continue  # the site's own condition, or `if p.requires_grad:` inside the loop
                if id(expr) in self.ix.raising_guards:
                    continue  # `assert ok` / `if bad: raise` above it: a run failing it ends there
                if any(p == positive and _same(e, expr) for e, p in guards):
                    continue  # the same test written again: `if args.train_text_encoder:` around
                    # the adapters and around the upcast (or the `models.append(...)` it upcasts)
                if not all(_fp16_test(e, p) for e, p in _conjuncts(expr, positive)):
                    return False
            return True

        for a in self.ix.attr_assigns:
            if a.target.attr != "data" or not a.loops or self.ix.span(a.target).start < after:
                continue
            if not _upcast_value(a.value, evaluator, a.scope):
                continue
            for loop in a.loops:
                owner = _parameters_owner(loop, a.target.value)
                if owner is None:
                    continue
                held = [(owner, ())]
                outer = [o for o in a.loops if o is not loop and isinstance(owner, ast.Name) and owner.id in _bound_names(o.target)]
                if outer and evaluator is not None:  # `for model in models: for p in model.parameters():`
                    held = evaluator.list_elements(outer[0].iter, a.scope)
                loop_names = tuple(n for o in a.loops for n in _bound_names(o.target))
                if any(self._refers(m, n) and on_every_fp16_path(a.guards + added, loop_names) for m, added in held for n in names):
                    return True
        for site in self.ix.calls:
            q = site.qualname or dotted(site.node.func) or ""
            if q.rsplit(".", 1)[-1] != "cast_training_params" or self.ix.span(site.node).start < after:
                continue
            model = argument(site.node, 0, "model")
            if model is None:
                continue
            # `cast_training_params([unet, te])`, or a list built up before the call: `models =
            # [unet]` then `models.extend([te_1, te_2])` under `if args.train_text_encoder:`
            held = evaluator.list_elements(model, site.scope) if evaluator is not None else []
            if not held and isinstance(model, (ast.List, ast.Tuple)):
                held = [(unstarred(e), ()) for e in model.elts]
            held = held or [(model, ())]
            if not any(self._refers(m, n) and on_every_fp16_path(added) for m, added in held for n in names):
                continue
            dtype = argument(site.node, 1, "dtype")
            if dtype is not None:
                if evaluator is None:
                    continue
                values = evaluator.values(dtype, site.scope)
                if not values or any(v.kind != DTYPE or v.value != "float32" for v in values):
                    continue  # not (always) float32
            if on_every_fp16_path(site.guards):
                return True
        return False

    def _casts_after(self, evaluator: Evaluator, methods: Tuple[str, ...], after: int, scope: Scope, guards):
        """The in-place casts ``x.<method>(...)`` written as statements below ``after`` in the
        code of ``scope``, under no test the site is not under (``if not fp16: model.float()``
        is not in every run of the load), each with the dtypes it makes (``cast_dtypes``).
        ``other = model.float()`` makes the cast for another name, and is not one; a chain of
        in-place module calls after it is the same statement (``model.float().cpu()``: review 27d)."""
        mine = {(id(expr), positive) for expr, positive in guards}
        for site in self.ix.calls:
            if site.receiver is None or site.method not in methods or site.scope.code_scope() is not scope:
                continue
            line = site.statement
            if not (isinstance(line, ast.Expr) and _in_place_chain(line.value, site.node)):
                continue
            if any((id(expr), positive) not in mine and not self.ix.exit_guard(expr, positive) for expr, positive in site.guards):
                continue  # (an early exit's test above it is none: where it exits, nothing trains)
            if self.ix.span(site.node).start < after:
                continue
            yield site, cast_dtypes(evaluator, site.node, site.method, site.scope)

    def recast_after(self, evaluator: Evaluator, names: Tuple[str, ...], after: int, scope: Scope, guards) -> bool:
        """``model.float()`` (or ``.double()``, ``.bfloat16()``, ``.to(torch.float32)``) as a
        statement below ``after`` in the same code, under no test the load is not under: an
        ``nn.Module`` cast is in place, so whatever trains the model trains it in that dtype."""
        return any(
            made and made <= WIDE_DTYPES and any(self._refers(site.receiver, n) for n in names)
            for site, made in self._casts_after(evaluator, ("float", "double", "bfloat16", "to"), after, scope, guards)
        )

    def part_upcast_after(self, evaluator: Evaluator, names: Tuple[str, ...], after: int, scope: Scope, guards) -> str:
        """A part of the model cast back to float32 below ``after``, as a statement in the same
        code under no test the cast is not under: ``model = model.half()`` then
        ``model.transformer.prefix_encoder.float()``. The text of that part, else "".

        Code halves a model and then makes one named part of it float32 again when that part is
        what trains: P-tuning v2 and prefix tuning freeze every other parameter (ChatGLM's own
        modeling code does it when ``pre_seq_len`` is set, code this linter does not see) and
        the optimizer takes only those with ``requires_grad``, all float32: ``GradScaler``
        unscales float32 gradients and nothing fails. Which parameters stay trainable is
        decided where we cannot look, so the weights are not called trainable float16."""
        for site, made in self._casts_after(evaluator, ("float", "to"), after, scope, guards):
            path = dotted(site.receiver) if isinstance(site.receiver, ast.Attribute) else ""
            if path and any(path.startswith(n + ".") for n in names) and made and made <= {"float32", "float64"}:
                return path
        return ""

    def returned(self, names: Tuple[str, ...], scope: Scope, call: Optional[ast.Call] = None) -> bool:
        """Whether a name bound to the model, or the call itself (``return model.to(dtype)``,
        also at the head of a method chain), is returned from ``scope``."""
        for value, _ in scope.returns:
            parts = value.elts if isinstance(value, ast.Tuple) else [value]
            for node in parts:  # a starred element (`return *models,`) is neither
                if any(self._refers(node, n) for n in names):
                    return True
                while call is not None and isinstance(node, ast.Call):
                    if node is call:
                        return True
                    node = node.func.value if isinstance(node.func, ast.Attribute) else None
        return False


FALSY = (False, None, 0, "")
_KEEPS_DTYPE = frozenset({"cpu", "cuda", "xpu", "npu", "train", "eval", "requires_grad_"})


# The classes whose `from_pretrained` makes no weights: a tokenizer, a processor, a feature
# extractor (a `torch_dtype=` given to one lands in its init kwargs and changes nothing)
_NO_WEIGHTS = ("Tokenizer", "TokenizerFast", "Processor", "FeatureExtractor")


def _loads_no_weights(site: CallSite) -> bool:
    """``AutoTokenizer.from_pretrained(name, torch_dtype=torch.bfloat16)``: the receiver is a
    tokenizer, processor or feature extractor class (held-out 45u: a perplexity script that
    passes the model's dtype to its tokenizer too). A config is not one: a model loaded with it
    may take its ``torch_dtype`` (``dtype="auto"``)."""
    klass = (site.qualname or "").rpartition(".")[0].rsplit(".", 1)[-1]
    return bool(klass) and klass.endswith(_NO_WEIGHTS)


def _dead_store(index: ModuleIndex, site: CallSite, targets: Tuple[str, ...]) -> bool:
    """Whether the model a load or a cast of a new object makes (``down = Smooth(5).cuda().to(
    dtype=torch.bfloat16)``) is bound only to plain names that no read sees: each is bound
    again (``down = Smooth(5).cuda()``) before any use, so nothing computes with it (tune 46's
    F2/F3, a scratch ``__main__`` block). A cast of a module a name holds (``m = model.half()``)
    changes that module in place: not a new object, never a dead store."""
    statement = site.statement
    if not targets or not isinstance(statement, ast.Assign) or not _in_place_chain(statement.value, site.node):
        return False
    if not all(isinstance(t, ast.Name) for t in statement.targets):
        return False
    if not is_loader(site):
        root = site.receiver
        while isinstance(root, ast.Call) and isinstance(root.func, ast.Attribute) and isinstance(root.func.value, ast.Call):
            root = root.func.value  # `Smooth(5).cuda().to(...)`: down to `Smooth(5)`
        if not isinstance(root, ast.Call) or (
            isinstance(root.func, ast.Attribute) and root.func.attr in (*_KEEPS_DTYPE, *CAST_METHODS, "to")
        ):
            return False  # `model.cuda().half()`: the module `model` holds, cast in place
    scope = site.scope
    for target in statement.targets:
        bindings = scope.assignments.get(target.id, ())
        if len(bindings) < 2 or target.id in scope.globals:
            return False  # bound once (or a global another function may read): it may be read
    names = {t.id for t in statement.targets}
    for node in ast.walk(scope.node):
        if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load):
            seen = reaching(index, node, index.scope_of(node))
            if seen.owner is None or any(b.statement is statement for b in seen.bindings):
                return False  # read where this binding may reach, or not known
    return True


def _in_place_chain(value: ast.expr, call: ast.Call) -> bool:
    """Whether ``value`` is ``call`` itself or ``call`` followed by module methods that move or
    switch the module in place and return it, its dtype kept (``.cpu()``, ``.cuda()``,
    ``.train()``, ``.eval()``, ``.requires_grad_()``)."""
    while value is not call:
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _KEEPS_DTYPE):
            return False
        value = value.func.value
    return True


def _as_option(index: ModuleIndex, test: ast.expr, condition):
    """A condition whose subject is an argparse option read as ``args.<dest>`` (``if
    args.use_lora:``, ``args.mode == "lora"``) with its values marked as that option's
    (``Possible.option``): the join replaces them with what each shipped launch of the script
    passes (``project/options.py``), so each launch is judged as the configuration it is."""
    test, _ = _unnegated(test, True)
    subject = test.left if isinstance(test, ast.Compare) else test
    if not (isinstance(subject, ast.Attribute) and subject.attr in index.arg_options):
        return condition
    values, literals, wanted = condition
    return (tuple(v if v.option else dataclasses.replace(v, option=subject.attr) for v in values), literals, wanted)


def _unnegated(test: ast.expr, positive: bool) -> Tuple[ast.expr, bool]:
    """``test`` without its ``not``s, with the polarity they flip (``not not x`` is ``x``)."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, positive = test.operand, not positive
    return test, positive


def truth_in(evaluator: Evaluator, guards, scope):
    """What a test is in every run that reaches code under ``guards``: a function ``(expr,
    site) -> True / False / None``. ``expr`` is decided by a guard that is the same test
    (``requires_grad_(args.train_te)`` read under ``if not args.train_te:``), or, as a
    configuration's values are judged (``_membership``, ``project/configurations.py``), where
    each value ``expr`` may take that would make it the other way is one a guard refuses (the
    same option's ``True``, read through another name). None where neither tells."""
    @functools.cache
    def conditions() -> Tuple[tuple, ...]:  # the guards' conditions, read when a flag first needs them
        return tuple(
            found
            for expr, positive in guards
            for term, wanted in _conjuncts(expr, positive)
            if (found := _membership(evaluator, term, wanted, scope) or _truthiness(evaluator, term, wanted, scope)) is not None
        )

    def refused(v: Possible) -> bool:
        return any(v in subject and (v.value in literals) != wanted for subject, literals, wanted in conditions())

    def truth(expr: ast.expr, site) -> Optional[bool]:
        expr, positive = _unnegated(expr, True)
        for test, held in guards:
            test, held = _unnegated(test, held)
            if _same(test, expr):
                return held == positive
        if not conditions():
            return None
        values = evaluator.values(expr, site.scope)
        if not values or any(v.kind != CONST for v in values):
            return None
        falsy = [v for v in values if v.value in FALSY]
        truthy = [v for v in values if v.value not in FALSY]
        if all(refused(v) for v in truthy):
            return not positive  # false in every run that gets here
        if all(refused(v) for v in falsy):
            return positive
        return None

    return truth


def _truthiness(evaluator: Evaluator, test: ast.expr, positive: bool, scope):
    """``(values of x, FALSY, not positive)`` for a bare test ``if x:`` / ``if not x:`` of a
    name or attribute (the branch runs when x is falsy exactly when the test is negated)."""
    test, positive = _unnegated(test, positive)
    if not isinstance(test, (ast.Name, ast.Attribute)):
        return None
    return (tuple(evaluator.values(test, scope)), FALSY, not positive)


def _narrowed_by_guards(evaluator: Evaluator, expr, vals, guards, scope) -> Tuple[Possible, ...]:
    """The values of a dtype that is a function's parameter (never rebound there), read where a
    test of it has failed: below ``if dtype == torch.float16: raise ...`` at the function's top,
    or in the ``else`` of ``if dtype in (torch.float16, torch.bfloat16):``. The dtypes the test
    names are ruled out there: a written one is dropped, and what callers pass is narrowed
    (``Possible.excluded``, dropped at the join as for ``X if dtype == torch.float16 else
    dtype``)."""
    if not isinstance(expr, ast.Name):
        return tuple(vals)
    if not only_parameter(expr.id, scope):
        return tuple(vals)
    excluded = set()
    for test, positive in guards:
        test, positive = _unnegated(test, positive)
        if not positive:
            excluded |= evaluator.excluded_dtypes(test, expr.id, scope)
    if not excluded:
        return tuple(vals)
    out = []
    for v in vals:
        if v.kind in SYMBOLIC:
            out.append(dataclasses.replace(v, excluded=v.excluded | frozenset(excluded)))
        elif not (v.kind == DTYPE and v.value in excluded):
            out.append(v)
    return tuple(out)


def _conjuncts(test: ast.expr, positive: bool) -> List[Tuple[ast.expr, bool]]:
    """The tests that must all hold for a branch to run: ``if a == "x" and b in [...]:`` runs
    when both do (its else branch, when either fails, is one test, kept whole)."""
    if positive and isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [term for value in test.values for term in _conjuncts(value, True)]  # `ast` keeps `and` flat
    return [(test, positive)]


def _membership(evaluator: Evaluator, test: ast.expr, positive: bool, scope):
    """``(values of x, literals, wanted)`` for a test ``x == lit`` / ``x != lit`` / ``x in
    [lits]`` / ``x not in [lits]`` / ``x is None`` / ``x is not None`` (``not`` and the else
    branch flip ``wanted``), literals being strings, integers, True, False or None: the branch
    runs when x is among the literals exactly when ``wanted``; None for any other test."""
    test, positive = _unnegated(test, positive)
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    op, right = test.ops[0], test.comparators[0]
    if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.List, ast.Tuple, ast.Set)):
        items = [unstarred(e) for e in right.elts]
    elif isinstance(op, (ast.Eq, ast.NotEq)):
        items = [right]
    elif isinstance(op, (ast.Is, ast.IsNot)) and is_constant(right, None):
        items = [right]
    else:
        return None
    literals = tuple(_literal(i) for i in items)
    if not items or _NOT_LITERAL in literals:
        return None
    wanted = positive if isinstance(op, (ast.In, ast.Eq, ast.Is)) else not positive
    return (tuple(evaluator.values(test.left, scope)), literals, wanted)


_NOT_LITERAL = object()


def _literal(node: ast.expr):
    """The value of a string, integer, True, False or None literal; ``_NOT_LITERAL`` else."""
    if isinstance(node, ast.Constant):
        value = node.value
        # a string (bytes too: `b"fp16"`), an integer, or
        # ``True``, ``False``, ``None`` (bools are ints); not a float, a complex or ``...``
        if value is None or isinstance(value, (str, bytes, int)):
            return value
    return _NOT_LITERAL


def cast_conditions(evaluator: Evaluator, guards, scope) -> Tuple[Tuple[Tuple[Possible, ...], Tuple[Any, ...], bool], ...]:
    """The conditions of the form :func:`_membership` reads among the tests a cast runs under
    (``if model_args.pre_seq_len is not None: model = model.half()``): each must hold for the
    cast to run, so a configuration where one of them certainly fails never casts (the other
    tests, of other forms, are left out: they only narrow it further)."""
    out = []
    for expr, positive in guards:
        for term, wanted in _conjuncts(expr, positive):
            found = _membership(evaluator, term, wanted, scope)
            if found is not None and found[0]:
                out.append(found)
    return tuple(out)


def built_conditions(evaluator: Evaluator, guards, scope) -> Tuple[Tuple[Tuple[Possible, ...], Tuple[Any, ...], bool], ...]:
    """As :func:`cast_conditions`, for the tests an object is built under, bare tests of a name
    or attribute included (``if args.fp16 and not args.deepspeed: self.scaler = GradScaler()``:
    ``args.fp16`` truthy, ``args.deepspeed`` falsy). A parameter's attribute stays symbolic: the
    join gives it what each caller passes, and a configuration where one test certainly fails
    never builds the object (``project/configurations.py``)."""
    out = []
    for expr, positive in guards:
        for term, wanted in _conjuncts(expr, positive):
            found = _membership(evaluator, term, wanted, scope) or _truthiness(evaluator, term, wanted, scope)
            if found is not None and found[0]:
                out.append(found)
    return tuple(out)


def option_conditions(index: ModuleIndex, evaluator: Evaluator, expr: ast.expr, scope) -> Tuple[Tuple[Tuple[Possible, ...], Tuple[Any, ...], bool], ...]:
    """:func:`built_conditions` of one test that must hold (a GradScaler's ``enabled=(args.fp16
    == "true")``), each whose subject is an argparse option marked as that option's
    (:func:`_as_option`): the join gives it what each shipped launch passes."""
    out = []
    for term, wanted in _conjuncts(expr, True):
        found = _membership(evaluator, term, wanted, scope) or _truthiness(evaluator, term, wanted, scope)
        if found is not None and found[0]:
            out.append(_as_option(index, term, found))
    return tuple(out)


FP16_LITERALS = ("fp16", "float16")


def _fp16_test(test: ast.expr, positive: bool) -> bool:
    """Whether a branch under ``test`` runs in every fp16 configuration: the test holds when
    the value compared is fp16's own (``x == "fp16"``, ``x in ("fp16", "bf16")``, ``x ==
    torch.float16``). Any other test (``!=``, ``not in``, another value) may skip fp16."""
    test, positive = _unnegated(test, positive)
    if not positive or not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return False
    op, right = test.ops[0], test.comparators[0]
    if isinstance(op, ast.In) and isinstance(right, (ast.List, ast.Tuple, ast.Set)):
        items = [unstarred(e) for e in right.elts]
    elif isinstance(op, ast.Eq):
        items = [right]
    else:
        return False
    for item in items:
        if string_value(item) in FP16_LITERALS:
            return True
        if dotted(item) in ("torch.float16", "torch.half"):
            return True
    return False


def _parameters_owner(loop: ast.For, receiver: ast.expr) -> Optional[ast.expr]:
    """The module whose parameters ``loop`` walks with ``receiver`` as each of them: ``for p in
    model.parameters():`` with ``p``, ``for name, p in model.named_parameters():`` with ``p`` (the
    pair's second). None for any other loop or name."""
    it = loop.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and isinstance(receiver, ast.Name)):
        return None
    target = loop.target
    if it.func.attr == "named_parameters" and isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == 2:
        target = target.elts[1]
    elif it.func.attr != "parameters":
        return None
    return it.func.value if isinstance(target, ast.Name) and target.id == receiver.id else None


def _bound_names(target: ast.expr) -> Tuple[str, ...]:
    """The names a ``for`` target binds (``p``, ``name, p``, ``first, *rest``)."""
    if isinstance(target, ast.Name):
        return (target.id,)
    if isinstance(target, (ast.Tuple, ast.List)):
        return tuple(n for e in target.elts for n in _bound_names(unstarred(e)))
    return ()


def _rebound_at(index: ModuleIndex, receiver: ast.Name, scope: Scope) -> int:
    """Where the object a cast ``x.to(dtype)`` casts was made, when every binding of ``x`` that
    reaches the cast makes a new one (``te_1, te_2 = load_text_encoders(...)`` for validation,
    a value that does not read ``x``): adapters injected into ``x`` before that went into the
    earlier object. -1 where a binding may pass the object on (``x = accelerator.prepare(x)``,
    ``x = x.to(...)``) or none is known."""
    owner, bound = reaching(index, receiver, scope)
    if owner is None or owner is not scope.code_scope() or not bound:
        return -1
    starts = []
    for b in bound:
        start = binding_position(index, b)
        if start is None or b.value is None or b.imported is not None or mentions(b.value, (receiver.id,)):
            return -1
        starts.append(start)
    return min(starts)


def _after_injections(index: ModuleIndex, names: Tuple[str, ...], at: int) -> int:
    """``at``, or the end of the last adapter injection into ``names`` below it: an upcast of
    the trainable parameters must come after it to reach the adapters it adds."""
    for site in index.calls:
        target = adapter_injection(index, site)
        if target is not None and dotted(target) in names:
            at = max(at, index.span(site.node).end)
    return at


def _given(arg) -> bool:
    """A keyword argument passed with a value other than ``None``."""
    return arg is not None and not is_constant(arg.value, None)


def _built_on_meta(index: ModuleIndex, evaluator: Evaluator, site, names: Tuple[str, ...], after: int, scope: Scope) -> bool:
    """Whether the weights are built on the meta device, with no data, and their dtype is the
    checkpoint's: under accelerate's ``init_empty_weights()`` (the call that loads them chooses
    it), or under torch's ``with torch.device("meta")`` (a device that may be "meta": ``"meta"
    if ckpt_path else device``) when a ``load_state_dict(..., assign=True)`` of the same object
    follows (``assign=True`` puts the checkpoint's tensors in place of the parameters, their
    dtype with them: a cast before it changes nothing). Without ``assign``, the parameters kept
    are the cast ones, filled by copy (after ``to_empty()``): the cast decides."""
    for qualname, item in zip(site.contexts, site.context_items):
        if qualname.startswith("accelerate.") and qualname.rsplit(".", 1)[-1] == "init_empty_weights":
            return True
        if qualname != "torch.device" or not isinstance(item, ast.Call) or not item.args:
            continue
        if not any(v.kind == CONST and v.value == "meta" for v in evaluator.values(item.args[0], site.scope)):
            continue
        if names and _loaded_in_place(index, names, after, scope):
            return True
    return False


def _loaded_in_place(index: ModuleIndex, names: Tuple[str, ...], after: int, scope: Scope) -> bool:
    """A ``name.load_state_dict(..., assign=True)`` of one of ``names`` after ``after`` in ``scope``."""
    for call in index.calls:
        node = call.node
        func = node.func
        if call.scope.code_scope() is not scope or index.span(node).start < after:
            continue
        if not (isinstance(func, ast.Attribute) and func.attr == "load_state_dict" and dotted(func.value) in names):
            continue
        assign = keyword(node, "assign")
        if assign is not None and is_constant(assign.value, True):
            return True
    return False


def _upcast_first(index: ModuleIndex, evaluator: Evaluator, site: CallSite, names: Tuple[str, ...], scope: Scope) -> bool:
    """Whether the first mention of the model below the load or cast ``site`` (``names``: its
    spellings here) is as the model handed to ``prepare_model_for_kbit_training`` /
    ``prepare_model_for_int8_training``. Every peft from 0.4 to 0.21 casts each float16 and
    bfloat16 parameter to float32 there (not a 4-bit ``Params4bit``, and nothing of a GPTQ,
    AQLM, EETQ, HQQ or torchao model: a ``quantization_config`` other than bitsandbytes' is not
    read so), so nothing computes in the dtype chosen at the load: ``dtype=torch.bfloat16`` then
    ``model = prepare_model_for_kbit_training(model)`` trains float32 weights on any GPU (review
    41a: a Gemma-2 classifier notebook). The site sits in no loop, and the call in its scope."""
    if not names or site.loops or position(index, site.node) is None:
        return False
    given = keyword(site.node, "quantization_config")
    if _given(given) and not _bitsandbytes_config(index, given.value, site.scope):
        return False
    at = index.order(site.node)[1]  # past the whole load
    first = None
    parents = {}
    for node in ast.walk(scope.node):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
            at_node = position(index, node)
            if at_node is not None and at_node >= at and (first is None or at_node < first[0]):
                first = (at_node, node)
    while first is not None and _sets_up(first[1], parents):
        # `model.gradient_checkpointing_enable()` before the prepare (47b): it computes nothing
        later = [
            (at_node, node) for node in ast.walk(scope.node)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id == first[1].id
            and (at_node := position(index, node)) is not None and at_node > first[0]
        ]
        first = min(later, key=lambda found: found[0]) if later else None
    if first is None:
        return False
    for call in index.calls:
        if call.scope.code_scope() is not scope or call.loops:
            continue
        if ((call.qualname or "").rsplit(".", 1)[-1] in KBIT_PREPARES and argument(call.node, 0, "model") is first[1]
                and not evaluator.dead(call.guards, call.scope)):
            return True
    return False


# A model's methods that set it up for training and compute nothing with its weights, nor
# change their dtype: called as a statement of their own between a load and peft's prepare
SET_UP_METHODS = frozenset({
    "gradient_checkpointing_enable", "gradient_checkpointing_disable", "enable_input_require_grads",
    "print_trainable_parameters", "train", "eval", "tie_weights", "requires_grad_",
})


def _sets_up(name: ast.Name, parents) -> bool:
    """Whether this mention of a model only sets it up: a statement that calls one of its
    :data:`SET_UP_METHODS` (``model.gradient_checkpointing_enable()``), assigns a field of its
    configuration (``model.config.use_cache = False``), or prints it."""
    parent = parents.get(id(name))
    if isinstance(parent, ast.Attribute) and parent.value is name:
        call = parents.get(id(parent))
        if parent.attr in SET_UP_METHODS and isinstance(call, ast.Call) and call.func is parent:
            return isinstance(parents.get(id(call)), ast.Expr)
        field = parents.get(id(parent))
        if parent.attr == "config" and isinstance(field, ast.Attribute) and isinstance(field.ctx, ast.Store):
            return True
    return isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "print"


def _bitsandbytes_config(index: ModuleIndex, value: ast.expr, scope: Scope) -> bool:
    """Whether a ``quantization_config=`` value is a ``BitsAndBytesConfig(...)`` call (or a
    name bound to one)."""
    return any(
        (made := index.call_of(call)) is not None and (made.qualname or "").endswith("BitsAndBytesConfig")
        for call in _assigned_calls(index, value, scope)
    )


def bitsandbytes_load(index: ModuleIndex, evaluator: Evaluator, site) -> bool:
    """A load quantized by bitsandbytes: ``quantization_config=BitsAndBytesConfig(...)``, or
    ``load_in_4bit=True`` / ``load_in_8bit=True``. Its 4/8-bit layers cast their input to the
    compute dtype (float16 by default, ``bnb_4bit_compute_dtype``); the dtype the load is given
    reaches only the layers left unquantized. The keyword may come through a dict the call
    spreads (``from_pretrained(name, **model_kwargs)``)."""
    given = keyword(site.node, "quantization_config")
    if _given(given):
        return _bitsandbytes_config(index, given.value, site.scope)
    if _quantized(index, evaluator, site):
        return True
    if not any(k.arg is None for k in site.node.keywords):
        return False
    return any(
        source.name == "quantization_config" and not is_constant(source.value, None) and _bitsandbytes_config(index, source.value, site.scope)
        for source in evaluator.kwarg_sources(site.node, site.scope)
    )


def _assigned_calls(index: ModuleIndex, value: ast.expr, scope: Scope) -> List[ast.Call]:
    """The calls ``value`` is: itself, or each call a name reaching it is bound to."""
    if isinstance(value, ast.Call):
        return [value]
    if isinstance(value, ast.Name):
        return [b.value for b in reaching(index, value, scope).bindings if isinstance(b.value, ast.Call)]
    return []


def _quantized(index: ModuleIndex, evaluator: Evaluator, site) -> bool:
    """``from_pretrained(..., quantization_config=...)`` or ``load_in_4bit=True`` /
    ``load_in_8bit=True``: the base weights are 4/8-bit integers no optimizer updates (only
    adapters on top of them train), whatever dtype the other parameters get."""
    if _given(keyword(site.node, "quantization_config")):
        return True
    for name in ("load_in_4bit", "load_in_8bit"):
        arg = keyword(site.node, name)
        if arg is not None and any(v.kind == CONST and v.value is True for v in evaluator.values(arg.value, site.scope)):
            return True
    return False


# peft's `PeftModel.from_pretrained(model, adapter_dir, ...)` (and its task classes) loads adapters
# into a model already made: no dtype keyword of its own (peft 0.3 to 0.17 hand the rest of their
# keywords to `load_adapter` and the hub download), so `torch_dtype=torch.float16` there casts
# nothing. (`AutoPeftModelForCausalLM.from_pretrained` loads the base model too, with its dtype.)
def _loads_adapters_only(site) -> bool:
    parts = (site.qualname or "").split(".")
    return parts[0] == "peft" and parts[-1] == "from_pretrained" and len(parts) >= 3 and parts[-2].startswith("PeftModel")


def extract(index: ModuleIndex, evaluator: Evaluator):
    chain = _chain_targets(index)
    uses = _Uses(index)
    kinds = object_kinds(index)
    objects = trained_objects(index, evaluator)
    out: List[WeightsSite] = []
    bf16_tensor_line = fp16_tensor_line = 0
    for site in index.calls:
        node = site.node
        kind = None
        edit_node = None
        on_cpu = False
        moves = False
        discarded = False
        via = "keyword"
        builds = ""
        vals: Tuple[Possible, ...] = ()
        if is_loader(site):
            if _loads_adapters_only(site) or _loads_no_weights(site):
                continue
            # `**kwargs` of the enclosing function spread there: each name's entry (the callers')
            sources = [s for s in evaluator.kwarg_sources(node, site.scope) if s.name in DTYPE_KWARGS] or [
                s for name in DTYPE_KWARGS for s in evaluator.forwarded(node, site.scope, name)
            ]
            if not sources:
                continue
            src = sources[-1]
            kind, edit_node, via = "dtype-kwarg", src.value, src.via
            vals = evaluator.source_values(src, site.scope)
            if via == "forwarded":  # what callers pass as `torch_dtype=` or as `dtype=`
                vals = tuple(v for s in sources for v in evaluator.source_values(s, site.scope))
            placed = evaluator.kwarg_values(node, site.scope, "device_map")
            on_cpu = bool(placed) and all(v.kind == CONST and v.value == "cpu" for v in placed)
            moves = bool(placed) and not on_cpu
            discarded = isinstance(site.statement, ast.Expr) and site.statement.value is node
        elif sources := [s for s in evaluator.model_init_entries(site) if s.name in DTYPE_KWARGS]:
            # `SFTConfig(model_init_kwargs={"dtype": torch.float16})`: the trainer loads the model
            src = sources[-1]
            kind, edit_node, via = "dtype-kwarg", src.value, src.via
            vals = evaluator.source_values(src, site.scope)
        elif site.method in CAST_METHODS and not node.args and not node.keywords and site.receiver is not None:
            if not kinds.is_model(site.receiver, site.scope, site.klass):
                builds = _imported_class(index, site.receiver, kinds, site.scope, site.klass)
                if not builds:
                    if site.method == "bfloat16" and not bf16_tensor_line:
                        bf16_tensor_line = index.span(node).line
                    if site.method == "half" and not fp16_tensor_line and not _autocast_around(site):
                        fp16_tensor_line = index.span(node).line
                    continue
            kind = site.method
            vals = (Possible(DTYPE, CAST_METHODS[site.method]),)
        elif site.method == "to" and site.receiver is not None:
            arg = _to_dtype_arg(site, evaluator)
            if arg is None:
                continue
            if not kinds.is_model(site.receiver, site.scope, site.klass):
                builds = _imported_class(index, site.receiver, kinds, site.scope, site.klass)
                if not builds:
                    if not bf16_tensor_line and _written_bf16(evaluator, arg, site.scope):
                        bf16_tensor_line = index.span(node).line
                    if not fp16_tensor_line and not _autocast_around(site) and _may_be_fp16(evaluator, arg, site.scope):
                        fp16_tensor_line = index.span(node).line
                    continue
            kind, edit_node = "to-dtype", arg
            vals = evaluator.values(arg, site.scope)
            moves = keyword(node, "device") is not None or any(a is not arg for a in positional(node))
        else:
            if site.qualname in TENSOR_FACTORIES and (made := keyword(node, "dtype")) is not None:
                if not bf16_tensor_line and _written_bf16(evaluator, made.value, site.scope):
                    bf16_tensor_line = index.span(node).line
                if not fp16_tensor_line and not _autocast_around(site) and _may_be_fp16(evaluator, made.value, site.scope):
                    fp16_tensor_line = index.span(node).line
            continue
        if edit_node is not None:
            vals = _narrowed_by_guards(evaluator, edit_node, vals, site.guards, site.scope)
        found = _dtype_names(vals)
        if not found and not any(v.kind in SYMBOLIC for v in vals):
            continue  # no dtype here, and none can come from a caller or a config file
        if evaluator.dead(site.guards, site.scope):
            continue  # under a test that never holds: cast and loaded in no run (asked last: the
            # question reads the values of every test above the site, and most calls are no cast)
        targets = chain.get(id(node), ())
        if not targets and site.receiver is not None and spelled(site.receiver) and kind != "dtype-kwarg":
            targets = (spelled(site.receiver),)  # `model.half()`, `model[0].half()` as a statement
        span = index.span(node)
        if kind in CAST_METHODS:
            # the `.half()` part: from the end of the receiver to the end of the call
            recv_end = index.span(site.receiver).end
            edit_span = Span(span.line, span.col, span.end_line, span.end_col, recv_end, span.end)
            edit_text = index.source[recv_end : span.end]
        elif via == "forwarded":  # the callers' keyword: a fix there is theirs, never the spread's
            edit_span, edit_text = None, f"**{index.text(edit_node.value)}"
        else:
            edit_span = index.span(edit_node)
            edit_text = index.text(edit_node)
        scope = site.scope.code_scope()
        keys = set(objects.keys(node, site.scope, site.klass))
        for target in targets:
            if target.startswith("self.") and site.klass and target.count(".") == 1:
                keys.add(("self", site.klass, target[5:]))  # `self.model = load(...)`
        remade = _rebound_at(index, site.receiver, site.scope) if isinstance(site.receiver, ast.Name) else -1
        if remade >= 0 and bound_before(index, site.receiver, site.scope, remade):
            # `te_1, te_2 = load_text_encoders(...)` again, after training, for a validation
            # pipeline: this call's result is a new object; the earlier call's, trained, is
            # another one, though both are "what load_text_encoders returns"
            keys = {k for k in keys if k[0] != "ret"}
        keys = frozenset(keys)
        trained, trained_scope = objects.trained_here(keys)
        # what an optimizer takes may be a part of the object cast or loaded here: the pipeline
        # loaded with `torch_dtype=torch.float16` whose `unet` is trained (`pipe.unet`). That
        # part's own freezes and uses then decide (a pipeline is no module, its unet is one)
        parts = tuple(spelled_path((t, p)) for t in targets for p in objects.trained_parts(keys)) if trained else ()
        # the same objects under their other names in this code (`unet = pipe.unet`): a freeze,
        # an upcast or an adapter written with either spelling is this object's
        judged = same_names(parts or targets, scope) if (parts or targets) else ()
        truth = truth_in(evaluator, site.guards, site.scope)
        frozen = ("" if parts else _pipeline(site)) or uses.frozen_reason(
            judged, scope, node, fresh=kind == "dtype-kwarg", truth=truth, optimized=bool(trained)
        )
        wrap = uses.peft_wrap(targets, span.end, site.guards)
        peft = wrap is not None
        if frozen and peft and uses.adapters_escape_freeze(judged, frozen, wrap, node, fresh=kind == "dtype-kwarg", truth=truth):
            frozen = ""  # the wrap's adapters train, in the dtype peft gives them (MP101 asks which)
        if not frozen and parts and all(attached_after(index, part, position(index, node) or -1) for part in parts):
            # the trained parts are modules attached after the cast (`set_lora_layer(LoRALinearLayer(...))`)
            frozen = f"only `{parts[0]}`, made in float32 after the cast, trains"
        if not frozen and kind != "dtype-kwarg":
            frozen = save_time_cast(index, judged, node, scope) or after_training_cast(index, judged, node, scope)
        quantized_unfrozen = ""
        if not frozen and is_loader(site) and _quantized(index, evaluator, site):
            frozen = "a 4/8-bit quantized base (only adapters on top of it train)"
            quantized_unfrozen = unfrozen_after(index, tuple(judged), position(index, node) or -1)
            if quantized_unfrozen and (
                uses.kbit_prepared(judged, span.end) or uses.trainable_upcast_after(judged, span.end, evaluator, site.guards)
            ):
                # `prepare_model_for_kbit_training` freezes the base and casts its float16/bf16
                # parameters to float32; an upcast loop does the latter: what is unfrozen trains in float32
                quantized_unfrozen = ""
        if not frozen and (kind == "half" or "float16" in found) and uses.trainable_upcast_after(judged, _after_injections(index, judged, span.end), evaluator, site.guards):
            frozen = "its trainable parameters are cast back to float32 below"
        if not frozen and "float16" in found and judged and uses.recast_after(evaluator, judged, span.end, scope, site.guards):
            frozen = "cast to another dtype below (in place), before anything trains it"
        if not frozen and "float16" in found and targets and (part := uses.part_upcast_after(evaluator, targets, span.end, scope, site.guards)):
            frozen = f"`{part}` is cast back to float32 below: the part that trains (P-tuning freezes the rest)"
        made_at = position(index, node) if kind == "dtype-kwarg" else None
        if made_at is None:
            made_at = remade  # adapters injected before the object was made went into another one
        injection = adapters_at_end(index, judged, made_at, site.guards) if judged and not frozen else None
        injected_site = index.call_of(injection) if injection is not None else None
        if injected_site is not None:
            upcast_after = max(span.end, index.span(injection).end)
            if uses.trainable_upcast_after(targets, upcast_after, evaluator, site.guards + injected_site.guards):
                frozen = "the adapters it trains are cast to float32 below"
        injected = ""
        if injected_site is not None and not frozen:
            head = index.text(injection.func)
            injected = f"`{head}(...)`"
        lora = uses.lora_wrap(evaluator, targets, span.end, site.guards) if peft and (not frozen or quantized_unfrozen) and not injected else None
        if lora is not None:
            # what trains the wrapped model trains these adapters (the walk of what an optimizer
            # trains stops at a PEFT wrap: its adapters are float32 on peft 0.12 and later), and
            # the base's own parameters a quantized base unfreezes
            keys = keys | objects.keys(lora.node, lora.scope, lora.klass)
            trained, trained_scope = objects.trained_here(keys)
        discarded = discarded or _dead_store(index, site, targets)
        out.append(
            WeightsSite(
                kind=kind,
                span=span,
                edit_span=edit_span,
                dtypes=found,
                values=tuple(vals),
                targets=targets,
                parts=parts,
                trained_by=objects.trainers(keys) if trained else (),
                trained_by_choice=unfrozen_by_choice(index, judged, evaluator.values, made_at) if not frozen else "",
                scope=scope.qualname,
                scope_kind=scope.kind,
                trainable=not frozen,
                frozen=frozen,
                peft=peft,
                kept_peft=uses.trainer_keeps_peft(targets, span.end) if not peft else "",
                peft_when=uses.peft_conditions(evaluator, targets, span.end, site.guards),
                cast_when=cast_conditions(evaluator, site.every_guard, site.scope),
                cast_if=guards_text(index, site.every_guard),
                returned=scope.kind == "function" and uses.returned(targets, scope, node),
                via=via,
                edit_text=edit_text,
                receiver_text=index.text(site.receiver) if site.receiver is not None else "",
                on_cpu=on_cpu,
                on_meta=_built_on_meta(index, evaluator, site, judged or targets, span.end, scope),
                moves=moves,
                conditional=any(id(test) not in index.raising_guards for test, _ in site.guards),
                discarded=discarded,
                computes_nothing="bfloat16" in found and computes_nothing_after(index, tuple(judged), node, scope),
                upcast_first=_upcast_first(index, evaluator, site, tuple(judged or targets), scope),
                quantized_unfrozen=quantized_unfrozen,
                builds=builds,
                adapters=kind == "half" and uses.adapters_before(targets, span.start),
                trained=trained,
                trained_scope=trained_scope,
                trained_if=objects.sources(keys),
                injected=injected,
                injected_span=index.span(injection) if injected else None,
                injected_into=index.text(adapter_injection(index, injected_site)) if injected else "",
                injected_copies=index.text(copies) if injected and (copies := saved_modules(index, injected_site)) is not None else "",
                lora_wrap=f"`{index.text(lora.node.func)}(...)`" if lora is not None else "",
                lora_wrap_span=index.span(lora.node) if lora is not None else None,
                lora_wrap_into=index.text(argument(lora.node, 0, "model")) if lora is not None else "",
            )
        )
    if bf16_tensor_line or fp16_tensor_line:
        out = [dataclasses.replace(w, bf16_tensor_line=bf16_tensor_line, fp16_tensor_line=fp16_tensor_line) for w in out]
    return tuple(out)


def _may_be_fp16(evaluator: Evaluator, value: ast.expr, scope: Scope) -> bool:
    """Whether a dtype argument may be float16 in some run (``weight_dtype`` of ``torch.float16
    if ... else torch.float32``)."""
    return any(v.kind == DTYPE and v.value == "float16" for v in evaluator.values(value, scope))


def _autocast_around(site: CallSite) -> bool:
    """Whether a call runs inside a ``with`` that autocasts (``torch.autocast(...)``,
    ``accelerator.autocast()``): there a float16 input meets float32 weights without error."""
    return any("autocast" in context for context in site.contexts)


def _written_bf16(evaluator: Evaluator, value: ast.expr, scope: Scope) -> bool:
    """Whether a dtype argument is bf16 in every run: each of its values the dtype
    ``torch.bfloat16`` written in the code (not a parameter or an option one run may set)."""
    vals = evaluator.values(value, scope)
    return bool(vals) and all(v.kind == DTYPE and v.value == "bfloat16" for v in vals)


def join(module, symbols):
    """At the join: a cast of what a class of another project module builds
    (``Net(cfg).half()``) is a model's only when that class derives, through any chain of
    project modules, from a ``torch.nn.Module``; other such casts are dropped."""
    sites = module.sections.get(SECTION)
    if not sites or not any(s.builds for s in sites):
        return module
    out = []
    for site in sites:
        if not site.builds:
            out.append(site)
        elif _derives_from_module(site.builds, module, symbols):
            out.append(dataclasses.replace(site, builds=""))
    return dataclasses.replace(module, sections={**module.sections, SECTION: tuple(out)})


def _derives_from_module(qualname: str, module, symbols) -> bool:
    return any(
        name.startswith("torch.nn.") or (name.startswith("transformers.") and name.endswith(("PreTrainedModel", "Model")))
        for name, _, _ in symbols.ancestry(qualname, module)
    )


def _upcast_value(value, evaluator: Optional[Evaluator], scope) -> bool:
    """``p.data.float()``, ``p.float()``, ``p.to(torch.float32)`` / ``p.to(dtype=torch.float32)``
    (diffusers' scripts write ``param.data = param.to(torch.float32)``): a float32 copy."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return False
    method = value.func.attr
    if method == "float" and not value.args and not value.keywords:
        return True
    if method not in ("to", "type") or evaluator is None:
        return False
    return cast_dtypes(evaluator, value, method, scope) == {"float32"}
