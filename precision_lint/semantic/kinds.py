"""Object kinds: is this value a model (a ``torch.nn.Module``) or a tensor?

``x.half()`` and ``x.to(torch.float16)`` cast a model's parameters or make a new tensor:
only the first decides what an optimizer trains (MP101). The answer comes from what the
value *is*, never from what its variable is called:

- **how it is made**: a ``from_pretrained``/``from_config`` load, a ``torch.nn`` layer or a
  project class derived from ``torch.nn.Module`` (through the project's classes), a model
  factory (``get_peft_model``), or a chain of calls that starts with one of these; a tensor
  factory (``torch.randn``, ``torch.zeros``...) makes a tensor;
- **how it is used**, where it is made elsewhere (a parameter, a helper's return, an attribute
  set in ``__init__``): only a module has ``.parameters()``, ``.eval()``, ``.state_dict()``,
  ``.named_modules()``...; a value that is called (``m(x)``) and cast is a module too (a
  tensor cannot be called, a function cannot be cast);
- **for a parameter, what its callers do** (in this module): the argument they pass for it is
  a model, or the function returns it (``return model.to(dtype)``) and what they get back is
  used as one.

A value with no such evidence is no model: nothing is guessed.
"""
from __future__ import annotations

from typing import Optional, Set, Tuple

import ast

from ..knowledge import argument_parsers, instance_attributes, model_factories
from .index import (
    FUNCTION_DEFS, NOT_VALUE_BINDERS, CallSite, ModuleIndex, Scope, argument, keyword, mentions, parameters, positional,
)
from .names import dotted
from .._regex import lazy

LOADERS = ("from_pretrained", "from_config", "from_single_file")
MODEL_FACTORIES = (
    "peft.get_peft_model", "peft.mapping.get_peft_model", "peft.prepare_model_for_kbit_training",
    "peft.PeftModel.from_pretrained",
)
TENSOR_FACTORIES = frozenset(
    f"torch.{name}"
    for name in (
        "randn", "rand", "zeros", "ones", "empty", "full", "tensor", "as_tensor", "from_numpy", "arange",
        "randint", "stack", "cat", "randn_like", "zeros_like", "ones_like", "empty_like", "full_like", "linspace",
    )
)
# ``nn.Parameter``: a tensor, whose ``.to(dtype)`` makes a copy (a module's casts it in place)
PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
# Methods only an ``nn.Module`` (or a Hugging Face model) has; a tensor has none of them.
MODULE_METHODS = frozenset(
    {
        "parameters", "named_parameters", "eval", "train", "state_dict", "load_state_dict", "modules",
        "named_modules", "children", "named_children", "apply", "zero_grad", "buffers", "named_buffers",
        "register_forward_hook", "register_forward_pre_hook", "gradient_checkpointing_enable", "generate",
        "save_pretrained", "print_trainable_parameters", "get_input_embeddings", "resize_token_embeddings",
        "enable_input_require_grads", "merge_and_unload",
    }
)


# Libraries whose model classes follow Hugging Face's naming: `GPT2LMHeadModel`, `BertModel`,
# `LlamaForCausalLM`, `UNet2DConditionModel`, `PeftModel` are `torch.nn.Module`s (a
# `GPT2Config`, a tokenizer, a processor or a pipeline are not).
MODEL_LIBRARIES = ("transformers.", "diffusers.", "peft.", "sentence_transformers.", "timm.", "open_clip.")
_MODEL_CLASS = lazy(r"(?:Model|LMHeadModel|For[A-Z]\w*|Transformer|Encoder|Decoder)$")
_NOT_MODEL_CLASS = lazy(r"(?:Config|Tokenizer\w*|Processor|Pipeline|Output|Mixin|Trainer|Arguments)$")
# torch's containers of modules: an item of one is a module (``Sequential.__getitem__``)
CONTAINERS = frozenset({
    "torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict",
    "torch.nn.modules.container.Sequential", "torch.nn.modules.container.ModuleList", "torch.nn.modules.container.ModuleDict",
})
# Calls whose `model=` (or first) argument is a model they train or wrap.
TAKES_MODEL = ("Trainer", "get_peft_model", "prepare_model_for_kbit_training", "PeftModel")


def is_library_model_class(qualname: str) -> bool:
    """A model class of a library that names its model classes by Hugging Face's convention."""
    if not qualname.startswith(MODEL_LIBRARIES):
        return False
    last = qualname.rsplit(".", 1)[-1]
    return bool(_MODEL_CLASS().search(last)) and not _NOT_MODEL_CLASS().search(last)


def is_library_model_factory(qualname: str) -> bool:
    """A library call that builds a model (``knowledge`` ``model_factories``):
    ``timm.create_model``, a torchvision builder (``torchvision.models.resnet18``), a
    ``segmentation_models_pytorch`` class."""
    if not qualname or "." not in qualname:
        return False
    table = model_factories()
    if qualname in table["functions"]:
        return True
    module, _, name = qualname.rpartition(".")
    if name[:1].isupper():
        return module in table["class_modules"]
    if name.startswith(("get_", "list_", "_")):
        return False
    return any(module == m or module.startswith(m + ".") for m in table["builder_modules"])


def is_loader(site: CallSite) -> bool:
    return site.method in LOADERS


def constructs_module(index: ModuleIndex, site: CallSite) -> bool:
    """A call that builds a ``torch.nn.Module``: a ``torch.nn`` layer or container
    (``nn.Linear``, ``nn.Sequential``), or a class of this module derived from one."""
    q = site.qualname or ""
    seen = set()
    while q and q not in seen:
        seen.add(q)
        if q in PARAMETER_CLASSES:
            return False  # `nn.Parameter(...)`: a tensor of `torch.nn`, whose `.to()` returns a copy
        if q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper():
            return True
        info = index.classes.get(q)
        if info is None:
            return False
        q = next((b for b in info.bases if b.startswith("torch.nn.") or b in index.classes), "")
    return False


class ObjectKinds:
    """Answers "is this expression a model?" for one module (built once, on first use)."""

    def __init__(self, index: ModuleIndex) -> None:
        self.ix = index
        self._used_as_module: Optional[Set[Tuple[str, str]]] = None

    # --- how it is made ---------------------------------------------------------
    def made_as(self, expr: Optional[ast.expr]) -> Optional[str]:
        """"model" or "tensor" for a call chain that makes one, else None."""
        node = expr
        while isinstance(node, ast.Call):
            site = self.ix.call_of(node)
            if site is not None:
                q = site.qualname or ""
                if (
                    is_loader(site) or constructs_module(self.ix, site) or q in MODEL_FACTORIES or is_library_model_class(q)
                    or is_library_model_factory(q)
                ):
                    return "model"
                if q in TENSOR_FACTORIES or q in PARAMETER_CLASSES:
                    return "tensor"
            node = node.func.value if isinstance(node.func, ast.Attribute) else None
        return None

    # --- how it is used -----------------------------------------------------------
    def _uses(self) -> Set[Tuple[str, str]]:
        """(where, text) of every receiver of a module-only method, and of every called name
        that is also cast; ``where`` is the class for ``self.x``, else the code scope."""
        if self._used_as_module is None:
            called: Set[Tuple[str, str]] = set()
            used: Set[Tuple[str, str]] = set()
            cast: Set[Tuple[str, str]] = set()
            for site in self.ix.calls:
                taken = _model_argument(site)
                if taken is not None:  # `Trainer(model=m)`, `get_peft_model(m, cfg)`
                    used.update(self._same_objects(taken, site.scope, site.klass))
                if site.method in MODULE_METHODS and site.receiver is not None:
                    # `trainable.parameters()` with `trainable = unet` and `unet = pipe.unet`:
                    # `unet` and `pipe.unet` are that module too
                    used.update(self._same_objects(site.receiver, site.scope, site.klass))
                elif site.method in ("half", "to", "bfloat16", "float") and site.receiver is not None:
                    key = self._key(site.receiver, site.scope, site.klass)
                    if key:
                        cast.add(key)
                elif site.method is None or isinstance(site.node.func, ast.Attribute):
                    key = self._key(site.node.func, site.scope, site.klass)
                    if key:
                        called.add(key)
            self._used_as_module = used | (called & cast)
        return self._used_as_module

    def _key(self, expr: ast.expr, scope: Scope, klass: Optional[str]) -> Optional[Tuple[str, str]]:
        text = _spelled(expr)
        return None if text is None else _text_key(text, scope, klass)

    def _same_objects(self, expr: ast.expr, scope: Scope, klass: Optional[str]) -> Set[Tuple[str, str]]:
        """The keys of ``expr`` and of every name or attribute path it is an alias of: for
        ``trainable`` bound by ``trainable = unet`` (on some path) and ``unet = pipe.unet``,
        ``trainable``, ``unet`` and ``pipe.unet`` (one object, three names)."""
        out: Set[Tuple[str, str]] = set()
        for node, where in _aliased(self.ix, expr, scope):
            key = self._key(node, where, klass)
            if key:
                out.add(key)
        return out

    # --- a parameter: what the callers of its function do ---------------------------------
    def _parameter_is_model(self, name: str, function: Scope, depth: int) -> bool:
        index = self.ix
        position = function.positional.index(name) if name in function.positional else None
        returned = any(_base_name(value) == name for value, _ in function.returns)
        for site in index.calls:
            if site.qualname != function.qualname:
                continue
            given = keyword(site.node, name)
            arg = given.value if given is not None else None
            if arg is None and position is not None:
                plain = positional(site.node)
                arg = plain[position] if position < len(plain) else None
            if arg is not None and self.is_model(arg, site.scope, site.klass, depth + 1):
                return True
            if returned and any(_text_key(t, site.scope, site.klass) in self._uses()
                                for t in site.assigned_to if "." not in t):
                return True
        return False

    # --- the question ---------------------------------------------------------------
    def is_model(self, expr: ast.expr, scope: Scope, klass: Optional[str] = None, depth: int = 0) -> bool:
        """Whether ``expr`` (the receiver of ``.half()``/``.to(dtype)``) is a model."""
        if depth > 3:
            return False
        made = self.made_as(expr)
        if made is not None:
            return made == "model"
        if isinstance(expr, ast.Name):
            owner, reached = self.ix.bindings_of(expr, scope)
            if owner is not None and owner.kind == "function" and expr.id in owner.params:
                if self._parameter_is_model(expr.id, owner, depth):
                    return True
            kinds = {self.made_as(b.value) for b in reached}
            if "tensor" in kinds and "model" not in kinds:
                return False
            if "model" in kinds:
                return True
            for b in reached:  # `unet = pipe.unet`: what the alias names is that object
                if _alias_value(b) is not None and self.is_model(b.value, owner, klass, depth + 1):
                    return True
        elif isinstance(expr, ast.Attribute) and dotted(expr) and klass and dotted(expr).startswith("self."):
            info = self.ix.classes.get(klass)
            values = info.self_attr_values.get(dotted(expr)[5:], []) if info is not None else []
            kinds = {self.made_as(a.value) for a, _ in values}
            if "model" in kinds:
                return True
            if "tensor" in kinds:
                return False
        if isinstance(expr, (ast.Attribute, ast.Subscript)) and self.is_part_model(expr, scope, klass):
            return True
        return bool(self._same_objects(expr, scope, klass) & self._uses())

    # --- a named part of a model ------------------------------------------------------
    def builders(self, expr: Optional[ast.expr], scope: Scope, klass: Optional[str] = None, depth: int = 0) -> Set[str]:
        """The qualified names of the constructors that make the object ``expr`` holds
        (``constructor_calls``; ``depth``: how deep that walk is already)."""
        out: Set[str] = set()
        for call in self.constructor_calls(expr, scope, klass, depth):
            site = self.ix.call_of(call)
            if site is not None and site.qualname:
                out.add(site.qualname)
        return out

    def constructor_calls(self, expr: Optional[ast.expr], scope: Scope, klass: Optional[str] = None, depth: int = 0) -> Tuple[ast.Call, ...]:
        """The calls that make the object ``expr`` holds: the call a chain of calls starts with
        (``Net().cuda()``: ``Net()``; a method of a value, ``.cuda()``, ``.half()``, gives back
        that value), through every binding that reaches a name (one that binds no value, a
        parameter or a loop variable, leaves the object unknown: ()) and the ``self.x``
        attributes a class of this module sets (``model.encoder`` of ``model = Net()``: what
        ``Net.__init__`` assigns to ``self.encoder``)."""
        if expr is None or depth > 4:
            return ()
        node = expr
        while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            site = self.ix.call_of(node)
            if site is None or site.qualname:
                break
            node = node.func.value  # `.cuda()`, `.half()`: the same object
        if isinstance(node, ast.Call):
            return (node,)
        if isinstance(node, ast.Name):
            owner, reached = self.ix.bindings_of(node, scope)
            if owner is not None and owner.kind == "function" and node.id in owner.params:
                return ()
            out: list = []
            for b in reached:
                if b.value is None or b.imported is not None or b.unpack_index is not None or isinstance(b.statement, NOT_VALUE_BINDERS):
                    return ()
                made = self.constructor_calls(b.value, owner or scope, klass, depth + 1)
                if not made:
                    return ()
                out.extend(made)
            return tuple(out)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self" and klass:
                wholes = {klass}
            else:
                # (the walk's depth goes on through the whole's builders: `self.x = self.x.y`
                # made it endless, miles-credit's trainer, review 25e)
                wholes = self.builders(node.value, scope, klass, depth + 1) if depth < 4 else set()
            out = []
            for value, where in self._attribute_values(wholes, node.attr):
                out.extend(self.constructor_calls(value, where, _class_of(where), depth + 1))
            return tuple(out)
        return ()

    def _attribute_values(self, classes: Set[str], attr: str):
        """``(value, scope)`` of each ``self.<attr> = value`` of ``classes`` (of this module)
        and of their bases in this module."""
        seen: Set[str] = set()
        stack = list(classes)
        while stack:
            name = stack.pop()
            info = self.ix.classes.get(name)
            if info is None or name in seen:
                continue
            seen.add(name)
            for assignment, where in info.self_attr_values.get(attr, ()):
                yield assignment.value, where
            stack.extend(info.bases)

    def is_part_model(self, expr: ast.expr, scope: Scope, klass: Optional[str] = None) -> bool:
        """Whether ``expr`` names a submodule of a model by how the model is built, never by
        its name: ``model.encoder`` where ``model = Net()`` and ``Net.__init__`` sets
        ``self.encoder = nn.Linear(...)`` (a module); ``model[0]`` of a ``torch.nn.Sequential``
        / ``ModuleList`` / ``ModuleDict`` (their items are modules). ``model[0].half()`` and
        ``model.encoder.half()`` then cast those parameters in place."""
        if isinstance(expr, ast.Subscript):
            return bool(self.builders(expr.value, scope, klass) & CONTAINERS)
        if isinstance(expr, ast.Attribute):
            if isinstance(expr.value, ast.Name) and expr.value.id == "self":
                return False  # `self.x`: read above from the class's own assignments
            wholes = self.builders(expr.value, scope, klass)
            return any(self.made_as(value) == "model" for value, _ in self._attribute_values(wholes, expr.attr))
        return False


def _class_of(scope: Scope) -> Optional[str]:
    """The class whose method ``scope`` is (what ``self`` is an instance of there), or None."""
    while scope is not None and scope.kind not in ("function", "module"):
        scope = scope.parent
    parent = scope.parent if scope is not None else None
    return parent.qualname if parent is not None and parent.kind == "class" else None


def object_kinds(index: ModuleIndex) -> ObjectKinds:
    """The module's object kinds, built once per index."""
    found = getattr(index, "_object_kinds", None)
    if found is None:
        found = index._object_kinds = ObjectKinds(index)
    return found


def _text_key(text: str, scope: Scope, klass: Optional[str]) -> Optional[Tuple[str, str]]:
    """(where, text) of a dotted name: the class for ``self.x``, else the scope that binds its
    first name (``pipe.unet`` where ``pipe`` is bound); None for ``self.x`` outside a class."""
    if text.startswith("self.") and klass:
        return (klass, text)
    root = text.split(".", 1)[0]
    if root == "self":
        return None
    # `pipe.unet`: an attribute path of a name, keyed where that name is bound (its uses as a
    # module are the evidence, as for a plain name)
    owner = scope.lookup_scope(root)
    return ((owner or scope).qualname, text)


def _alias_value(binding) -> Optional[ast.expr]:
    """The name or attribute path a plain assignment makes its target another name for
    (``unet = pipe.unet``, ``trainable = unet``), else None."""
    value = binding.value
    if binding.imported is not None or binding.unpack_index is not None or value is None:
        return None
    if isinstance(binding.statement, NOT_VALUE_BINDERS):
        return None
    if isinstance(value, (ast.Name, ast.Attribute)) and _spelled(value) and not _spelled(value).startswith("self."):
        return value
    return None


def _spelled(node) -> Optional[str]:
    """``dotted(node)``: how a name or attribute path is written. ``None``, ``True`` and
    ``False`` are constants, not names: ``x = None`` aliases no object, and two variables
    bound to ``None`` are not one object."""
    return dotted(node)


def same_names(names: Tuple[str, ...], scope: Scope) -> Tuple[str, ...]:
    """``names`` and every other spelling of their objects in ``scope``'s own code, through its
    plain alias assignments (of names bound to nothing else there): ``unet`` for ``pipe.unet``
    with ``unet = pipe.unet``, and ``trainable`` too with ``trainable = unet``; a path below one
    follows it (``t.unet`` for ``pipe.unet`` with ``t = pipe``). For questions asked by how a
    model is written at its uses (freezes, upcasts, adapters injected): each spelling is the
    one object."""
    edges = []
    for name, bound in scope.assignments.items():
        # only a name that is never anything else here: `model = teacher` then `model =
        # student` makes no teacher of the student
        spelled = {
            _spelled(v) if (v := _alias_value(b)) is not None else None
            for b in bound
            if not _passes_on(b, name)  # `unet, opt = accelerator.prepare(unet, opt)`: the same object
        }
        if len(spelled) == 1 and None not in spelled:
            edges.append((name, spelled.pop()))
    found = list(dict.fromkeys(names))
    grown = True
    while grown and len(found) < 32:
        grown = False
        for a, b in edges:
            for n in list(found):
                for one, other in ((a, b), (b, a)):
                    if n == one:
                        new = other
                    elif n.startswith(one + "."):
                        new = other + n[len(one):]
                    else:
                        continue
                    if new not in found:
                        found.append(new)
                        grown = True
    return tuple(found)


def _passes_on(binding, name: str) -> bool:
    """Whether a binding of ``name`` gives it a value made from its own object (``x =
    accelerator.prepare(x)``, ``x = x.to(device)``): a wrapper or the same module, not another
    object."""
    value = binding.value
    if value is None or binding.imported is not None or _alias_value(binding) is not None:
        return False
    return mentions(value, (name,))


def _aliased(index: ModuleIndex, expr: ast.expr, scope: Scope, depth: int = 0):
    """``(node, scope)`` of ``expr`` and of each name or attribute path it is an alias of,
    through the bindings that reach it: for ``trainable.parameters()`` with ``trainable =
    unet`` and ``unet = pipe.unet``, ``trainable``, ``unet`` and ``pipe.unet``; for
    ``t.unet`` with ``t = pipe``, ``pipe.unet`` too (the path below an alias follows it)."""
    yield expr, scope
    if depth > 4:
        return
    root = expr
    rest = []
    while isinstance(root, ast.Attribute):
        rest.insert(0, root.attr)
        root = root.value
    if not isinstance(root, ast.Name) or root.id == "self":
        return
    owner, reached = index.bindings_of(root, scope)
    for binding in reached:
        value = _alias_value(binding)
        if value is None:
            continue
        for attr in rest:
            value = ast.Attribute(value=value, attr=attr, ctx=ast.Load())  # a path of our own, never in the tree
        yield from _aliased(index, value, owner, depth + 1)


def _base_name(expr: Optional[ast.expr]) -> Optional[str]:
    """``model`` for ``model``, ``model.to(dtype)``, ``model.half().cuda()``: the name a chain of
    method calls starts from."""
    node = expr
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        node = node.func.value
    return node.id if isinstance(node, ast.Name) else None


def _model_argument(site: CallSite) -> Optional[ast.expr]:
    """The model a trainer or a PEFT wrapper is given: its ``model=`` argument, else its first."""
    callee = (site.qualname or "").rsplit(".", 1)[-1]
    if not callee.endswith(TAKES_MODEL) or not (site.qualname or "").split(".")[0] in ("transformers", "trl", "peft", "setfit"):
        return None
    return argument(site.node, 0, "model")


# --- which class an object is an instance of -------------------------------------------------
def instance_classes(index: ModuleIndex, expr: Optional[ast.expr], scope: Scope, klass: Optional[str] = None,
                     depth: int = 0) -> Tuple[str, ...]:
    """The classes (qualified names, library or project) whose instance ``expr`` may hold
    (:func:`made_instances`, without the calls)."""
    return tuple(dict.fromkeys(q for q, _ in made_instances(index, expr, scope, klass, depth)))


def made_instances(index: ModuleIndex, expr: Optional[ast.expr], scope: Scope, klass: Optional[str] = None,
                   depth: int = 0) -> Tuple[Tuple[str, Optional[ast.Call]], ...]:
    """The classes (qualified names, library or project) whose instance ``expr`` may hold, each
    with the call of this module that makes it (``Accelerator(...)``: what a rule reads the
    object's arguments from; None where no call of the class itself is seen: a parsed
    dataclass, a library object's attribute). From how it is made, never from what it is called:

    - a call of a class (``Accelerator()``, ``trl.ModelConfig(...)``), of its loader
      (``X.from_pretrained(...)`` makes an ``X``), or of a function of this module that returns
      one (``def make(): return Accelerator()``);
    - an element of what a library argument parser returns (``a, m = TrlParser((ScriptArguments,
      ModelConfig)).parse_args_and_config()``, also through a name bound to the parser, or
      subscripted: ``...parse_args_into_dataclasses()[1]``): the dataclass at that position
      (``knowledge/libraries.toml`` ``[argument_parsers]``);
    - a library object's attribute whose class the library table states (``accelerator.state``
      is an ``AcceleratorState``: ``[instance_attributes]``);
    - a name: what its bindings that reach the use hold (a plain alias followed); a parameter:
      its annotation (``model_args: ModelConfig``, ``Optional[...]`` too), else what every
      caller in this module passes for it;
    - ``self.x``: what the class's methods assign to ``self.x``.

    Every way the value may be made counts (one binding an ``Accelerator()`` is enough); a value
    with no such evidence has none: nothing is guessed."""
    if expr is None or depth > 4:
        return ()
    out: list = []
    cls = type(expr)
    if cls is ast.Call:
        out.extend(_made_by_call(index, expr, scope, depth))
    elif cls is ast.Subscript:
        at = expr.slice
        if type(at) is ast.Constant and type(at.value) is int and type(expr.value) is ast.Call:
            found = _parsed_classes(index, expr.value, scope, depth)
            if found and 0 <= at.value < len(found) and found[at.value]:
                out.append((found[at.value], None))
    elif cls is ast.Name:
        owner, reached = index.bindings_of(expr, scope)
        for binding in reached:
            out.extend(_bound_classes(index, binding, owner, klass, depth))
        if owner is not None and owner.kind == "function" and expr.id in owner.params and not reached:
            out.extend(_parameter_classes(index, expr.id, owner, depth))
    elif cls is ast.Attribute:
        text = dotted(expr)
        if text is not None and text.startswith("self.") and text.count(".") == 1 and klass:
            info = index.classes.get(klass)
            for assignment, where in (info.self_attr_values.get(expr.attr, []) if info is not None else []):
                out.extend(made_instances(index, assignment.value, where, klass, depth + 1))
            if info is not None and not info.self_attr_values.get(expr.attr):
                out.extend(_declared_field_class(index, info, expr.attr))
        else:
            held = instance_attributes()
            for owner_class in instance_classes(index, expr.value, scope, klass, depth + 1):
                found = held.get(f"{_library_short(owner_class)}.{expr.attr}")
                if found:
                    out.append((found, None))
    return tuple(dict.fromkeys(out))


def _library_short(qualname: str) -> str:
    """``accelerate.Accelerator`` for ``accelerate.accelerator.Accelerator``: a library class
    as its package exports it (the table's spelling)."""
    parts = qualname.split(".")
    return f"{parts[0]}.{parts[-1]}" if len(parts) > 2 else qualname


def _is_class_name(index: ModuleIndex, qualname: str) -> bool:
    return qualname in index.classes or qualname.rsplit(".", 1)[-1][:1].isupper()


def _made_by_call(index: ModuleIndex, call: ast.Call, scope: Scope, depth: int) -> Tuple[Tuple[str, Optional[ast.Call]], ...]:
    site = index.call_of(call)
    q = site.qualname if site is not None else None
    if not q:
        return ()
    if site.method in LOADERS:
        head = q.rsplit(".", 1)[0]
        return ((head, call),) if _is_class_name(index, head) else ()
    function = index.functions.get(q)
    if function is not None:  # a function of this module: what it returns
        return tuple(c for value, _ in function.returns for c in made_instances(index, value, function, None, depth + 1))
    return ((q, call),) if _is_class_name(index, q) else ()


def _bound_classes(index: ModuleIndex, binding, owner: Optional[Scope], klass, depth: int) -> Tuple[Tuple[str, Optional[ast.Call]], ...]:
    value = binding.value
    if value is None or binding.imported is not None or isinstance(binding.statement, NOT_VALUE_BINDERS):
        return ()
    where = owner or index.root
    if binding.unpack_index is not None:
        statement = binding.statement
        targets = getattr(statement, "targets", ())
        if any(type(e) is ast.Starred for t in targets for e in getattr(t, "elts", ())):
            return ()  # `a, *rest = ...`: positions after the star are not the values'
        if type(value) is not ast.Call:
            return ()
        found = _parsed_classes(index, value, where, depth)
        i = binding.unpack_index
        return ((found[i], None),) if found and i < len(found) and found[i] else ()
    return made_instances(index, value, where, klass, depth + 1)


def _parameter_classes(index: ModuleIndex, name: str, function: Scope, depth: int) -> Tuple[Tuple[str, Optional[ast.Call]], ...]:
    """A parameter's classes: its annotation, else what the calls of its function in this
    module pass for it (only when every such call passes something known)."""
    node = function.node
    param = next((p for p in parameters(node) if p.name == name), None) if isinstance(node, FUNCTION_DEFS) else None
    if param is None:
        return ()
    annotation = param.arg.annotation
    if annotation is not None:
        named = _annotated_class(index, annotation, function.parent or index.root)
        return ((named, None),) if named else ()
    position = function.positional.index(name) if name in function.positional else None
    out: list = []
    calls = [s for s in index.calls if s.qualname == function.qualname]
    for site in calls:
        given = keyword(site.node, name)
        arg = given.value if given is not None else None
        if arg is None and position is not None:
            plain = positional(site.node)
            arg = plain[position] if position < len(plain) else None
        found = made_instances(index, arg, site.scope, site.klass, depth + 1)
        if not found:
            return ()  # a caller passes something else: the parameter is not known
        out.extend(found)
    return tuple(out)


def _declared_field_class(index: ModuleIndex, info, name: str) -> Tuple[Tuple[str, None], ...]:
    """``self.x`` of a class that declares ``x: Wav2Vec2Processor`` in its body (a dataclass's
    field, which its generated ``__init__`` sets): the annotated class, where no method assigns
    ``self.x`` (the HF CTC blog's ``DataCollatorCTCWithPadding``)."""
    for statement in info.node.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.target.id == name:
            named = _annotated_class(index, statement.annotation, index.scopes.get(info.qualname) or index.root)
            return ((named, None),) if named else ()
    return ()


def _annotated_class(index: ModuleIndex, annotation: ast.expr, scope: Scope) -> Optional[str]:
    """The class an annotation names: ``ModelConfig``, ``trl.ModelConfig``, ``"ModelConfig"``,
    ``Optional[ModelConfig]``, ``ModelConfig | None``."""
    node = annotation
    if type(node) is ast.Constant and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return None
        text = dotted(node)
        if text is None:
            return None
        head, _, rest = text.partition(".")
        full = index.resolve_name(head, scope, None, 0)
        return (f"{full}.{rest}" if rest else full) if full and _is_class_name(index, full) else None
    if type(node) is ast.Subscript and (index.qualify(node.value, scope) or "") in ("typing.Optional",):
        node = node.slice
    elif type(node) is ast.BinOp and type(node.op) is ast.BitOr:
        sides = [s for s in (node.left, node.right) if not (type(s) is ast.Constant and s.value is None)]
        if len(sides) != 1:
            return None
        node = sides[0]
    if type(node) not in (ast.Name, ast.Attribute):
        return None
    full = index.qualify(node, scope)
    return full if full and _is_class_name(index, full) else None


def _parsed_classes(index: ModuleIndex, call: ast.Call, scope: Scope, depth: int) -> Tuple[Optional[str], ...]:
    """What a library argument parser's parse method returns, by position: the dataclasses the
    parser was built with (``HfArgumentParser((ModelArguments, TrainingArguments))``); () for any
    other call."""
    parsers = argument_parsers()
    func = call.func
    if type(func) is not ast.Attribute or func.attr not in parsers["methods"]:
        return ()
    made = func.value
    if type(made) is ast.Name:  # `parser = TrlParser(...)`, one binding
        _, reached = index.bindings_of(made, scope)
        values = [b.value for b in reached if b.unpack_index is None and type(b.value) is ast.Call]
        if len(values) != 1 or len(reached) != 1:
            return ()
        made = values[0]
    if type(made) is not ast.Call or not _is_parser(index, index.call_of(made), parsers["classes"]):
        return ()
    given = keyword(made, "dataclass_types")
    types = given.value if given is not None else (positional(made)[0] if positional(made) else None)
    if types is None:
        return ()
    elements = types.elts if type(types) in (ast.Tuple, ast.List) else [types]
    if any(type(e) is ast.Starred for e in elements):
        return ()
    out = []
    for element in elements:
        full = index.qualify(element, scope) if type(element) in (ast.Name, ast.Attribute) else None
        out.append(full if full and _is_class_name(index, full) else None)
    return tuple(out)


def _is_parser(index: ModuleIndex, site: Optional[CallSite], classes) -> bool:
    """A call of a library argument parser, or of a class of this module derived from one."""
    stack = [site.qualname] if site is not None and site.qualname else []
    seen = set()
    while stack:
        q = stack.pop()
        if q in seen:
            continue
        seen.add(q)
        if _library_short(q) in classes:
            return True
        info = index.classes.get(q)
        stack.extend(info.bases if info is not None else ())
    return False
