"""Which calls may reach project code, and under which name.

``load_student(...)`` imported from ``loaders`` names ``loaders.load_student``; a call into
a library (``torch``, ``transformers``, ``os``...) never reaches project code, and neither
does a method of an object the module cannot name. Both the call records (``calls.py``)
and the evaluator (what a project function returns) ask this.
"""
from __future__ import annotations

from typing import Optional, Tuple

import ast
import builtins

from .index import CallSite, ModuleIndex
from .names import LIBRARIES, installed_package_name  # noqa: F401  (calls.py reads both from here)


def project_callee(index: ModuleIndex, site: CallSite) -> Optional[str]:
    """The callee as a qualified name in this module's namespace, or None (a library, a builtin,
    an unknown object). Calling an instance of a project class runs its ``forward``
    (``criterion = DistillLoss(); criterion(s, t)``; an ``nn.Module``'s ``__call__`` does).
    Asked of each call by the call records, the call graph, the trained objects and the
    evaluator: worked out once per call, once the index is built (its bindings are final)."""
    memo = index.callee_memo
    found = memo.get(id(site))
    if found is not None and found[0] is site:
        return found[1]
    callee = _project_callee(index, site)
    if index.built:
        memo[id(site)] = (site, callee)  # the site is held: its id is no other's meanwhile
    return callee


def _project_callee(index: ModuleIndex, site: CallSite) -> Optional[str]:
    receiver = site.receiver
    if isinstance(site.node.func, ast.Name):
        made = _instance_of(index, site.scope, site.node.func)
        if made is not None:
            return f"{made}.{_call_method(index, made)}"
    if site.qualname:
        return None if site.qualname.split(".")[0] in LIBRARIES else site.qualname
    starred = star_imported_callee(index, site)
    if starred is not None:
        return starred
    if site.method and isinstance(receiver, ast.Name):
        if receiver.id == "self" and site.klass:
            held = _held_on_self(index, site.klass, site.method)  # self.criterion = DistillLoss()
            return f"{held}.{_call_method(index, held)}" if held else f"{site.klass}.{site.method}"
        made = _instance_of(index, site.scope, receiver)  # d = Distiller(...); d.setup(x)
        if made is not None:
            return f"{made}.{site.method}"
    return None


def star_imported_callee(index: ModuleIndex, site: CallSite) -> Optional[str]:
    """``from losses import *`` then ``ClampedLogLoss()``: the name called, as if this module
    bound it (``train.ClampedLogLoss``), where a star import of project code may bind it; the
    join looks it up in the modules the module star-imports (``project/symbols.py``)."""
    if not isinstance(site.node.func, ast.Name) or not _star_imported(index, site.node.func, site.scope):
        return None
    name = site.node.func.id
    return f"{index.module_name}.{name}" if index.module_name else name


def _star_imported(index: ModuleIndex, name: ast.Name, scope) -> bool:
    """Whether ``name`` may come from a ``from x import *`` of project code at the module's top
    level: no scope binds it, it is no builtin, and such an import is there (a library's star
    import, ``from torch.nn import *``, names no project code)."""
    stars = index.star_imports
    if stars is None:
        stars = index.star_imports = any(
            isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
            and (node.level or (node.module or "").split(".")[0] not in LIBRARIES)
            for node in index.module.body
        )
    if not stars or name.id in _BUILTINS:
        return False
    owner, _ = index.bindings_at(name.id, scope, None)
    return owner is None


_BUILTINS = frozenset(dir(builtins))


def _instance_of(index: ModuleIndex, scope, name: ast.Name) -> Optional[str]:
    """The project class whose instance the variable ``name`` holds (its only binding is a call
    of that class), or None."""
    _, bindings = index.bindings_of(name, scope)
    if len(bindings) == 1 and isinstance(bindings[0].value, ast.Call) and bindings[0].unpack_index is None:
        call = _unchained(bindings[0].value)
        return project_class(index, call) or _returned_class(index, call)
    return None


# `nn.Module` methods that return the module itself: `model = Net().to(device)` holds the `Net`
# the constructor made (`to`, `cuda`, `cpu`, the dtype casts, `train`/`eval`, `requires_grad_`,
# `apply`, `share_memory`, `to_empty`, `type`)
_RETURNS_SELF = frozenset(
    ("to", "cuda", "cpu", "half", "float", "double", "bfloat16", "train", "eval", "requires_grad_",
     "apply", "share_memory", "to_empty", "type", "xpu", "ipu", "mtia")
)


def _unchained(call: ast.Call) -> ast.Call:
    """The constructor call under a chain of self-returning module methods
    (``Net(cfg).cuda().eval()`` -> ``Net(cfg)``); the call itself otherwise."""
    while (
        isinstance(call.func, ast.Attribute)
        and call.func.attr in _RETURNS_SELF
        and isinstance(call.func.value, ast.Call)
    ):
        call = call.func.value
    return call


def _returned_class(index: ModuleIndex, call: ast.Call) -> Optional[str]:
    """The project class a function of this module always returns an instance of
    (``def make_runner(dtype): return Runner(dtype)``), for a call of that function; else None."""
    made = index.call_of(call)
    function = index.functions.get(made.qualname or "") if made is not None else None
    if function is None or not function.returns:
        return None
    classes = {
        project_class(index, value) if isinstance(value, ast.Call) else None for value, _ in function.returns
    }
    return classes.pop() if len(classes) == 1 else None


def _held_on_self(index: ModuleIndex, klass: str, attr: str) -> Optional[str]:
    """The project class an attribute ``self.attr`` is always made from, or None."""
    info = index.classes.get(klass)
    bound = info.self_attr_values.get(attr, []) if info is not None else []
    classes = {project_class(index, a.value) if isinstance(a.value, ast.Call) else None for a, _ in bound}
    return classes.pop() if len(classes) == 1 else None


def project_class(index: ModuleIndex, call: ast.Call) -> Optional[str]:
    """The project class ``call`` makes an instance of (one of this module, or a capitalised
    name imported from project code), or None."""
    made = index.call_of(call)
    q = made.qualname if made is not None else None
    if not q or q.split(".")[0] in LIBRARIES or q in index.functions:
        return None
    if q in index.classes or q.rsplit(".", 1)[-1][:1].isupper():
        return q
    return None


def _call_method(index: ModuleIndex, klass: str) -> str:
    """What calling an instance runs: its own ``__call__`` when this module defines one, else
    ``forward`` (``nn.Module.__call__`` runs it)."""
    return "__call__" if f"{klass}.__call__" in index.functions else "forward"


def is_super_init(site) -> bool:
    """``super().__init__(...)``: a class handing keywords to its base's constructor."""
    return (
        site.method == "__init__"
        and isinstance(site.receiver, ast.Call)
        and isinstance(site.receiver.func, ast.Name)
        and site.receiver.func.id == "super"
    )


def assigned_callees(index: ModuleIndex, name: ast.Name, scope) -> Tuple[str, ...]:
    """The callees of the calls whose results reach the use ``name``."""
    owner, reached = index.bindings_of(name, scope)
    if owner is None:
        return ()
    out = []
    for assignment in reached:
        value = assignment.value
        while isinstance(value, ast.Call):
            site = index.call_of(value)
            if site is not None and site.qualname:
                out.append(site.qualname)
                break
            # `Trainer(...).something()` is not the trainer; `from_pretrained(...)` chains are
            if isinstance(value.func, ast.Attribute) and isinstance(value.func.value, (ast.Name, ast.Attribute)):
                q = index.qualify(value.func)
                if q:
                    out.append(q)
                break
            break
    return tuple(out)
