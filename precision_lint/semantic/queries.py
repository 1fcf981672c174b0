"""The questions extractors and rules ask about a name, answered by the binder.

Outside ``semantic/`` nothing looks a name up by hand (``ModuleIndex.bindings_of``,
``resolve_name``, ``order_of``, a scope's ``assignments``): it asks one of these.

One policy answers "which bindings does this use see" everywhere: **reaching definitions at
the use, with their guards** (:meth:`ModuleIndex.bindings_at`). Walking back from the use,
each binding reaches it until one that runs whenever the use runs hides the older ones; a
binding later in a loop that holds the use reaches it on the next iteration; a use in a
nested function sees its enclosing scope as it is at the end of that scope's code. Where no
binding precedes a use (a name read before it is assigned), every binding is returned.

Which scope binds a name is Python's rule (:meth:`Scope.lookup_scope`): a name assigned
anywhere in a function is local there throughout; class bodies are not visible from their
methods; ``global x`` sends the look-up to the module.

A use is an ``ast.Name`` of the module's tree, or a name and a position (``at``: a pre-order
number from :func:`position`; None: the end of the scope's code, where a function called
later, or an importer, sees it).
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Collection, List, NamedTuple, Optional

if TYPE_CHECKING:
    from .index import Assignment, CallSite, ModuleIndex, Scope


class Reach(NamedTuple):
    """The scope that binds a use's name (None: a builtin, or a name never bound) and the
    bindings of it that reach the use, latest first."""

    owner: Optional["Scope"]
    bindings: List["Assignment"]


def position(index: ModuleIndex, node: ast.AST) -> Optional[int]:
    """Where ``node`` is in the module's code: its pre-order number (``a`` is written before
    ``b`` when ``position(a) < position(b)``), or None for a node that is not part of the
    module's tree (one a rule built)."""
    found = index.order_of.get(id(node))
    return found[0] if found is not None else None


def binding_position(index: ModuleIndex, binding: Assignment) -> Optional[int]:
    """Where the statement that makes ``binding`` starts (see :func:`position`)."""
    return position(index, binding.statement)


def reaching(index: ModuleIndex, use: ast.Name, scope: Scope) -> Reach:
    """Which bindings reach the use ``use`` (reaching definitions at the use, with their
    guards; see the module's docstring), and the scope that binds its name. A node outside
    the module's tree is a use at the end of its scope's code."""
    return Reach(*index.bindings_of(use, scope))


def reaching_kept(index: ModuleIndex, use: ast.Name, scope: Scope) -> Reach:
    """:func:`reaching` for a question about the tensor's dtype: an in-place update of the name
    (``x += y``) keeps the dtype of what it updates, so the bindings that reach it stand for it
    (:meth:`ModuleIndex.bindings_kept`)."""
    return Reach(*index.bindings_kept(use, scope))


def reaching_at(index: ModuleIndex, name: str, scope: Scope, at: Optional[int]) -> Reach:
    """:func:`reaching` for a name read at pre-order number ``at`` (None: at the end of the
    scope's code)."""
    return Reach(*index.bindings_at(name, scope, at))


def reaching_values(index: ModuleIndex, use: ast.Name, scope: Scope, unpack: bool = False) -> List[ast.expr]:
    """The values this name may hold at ``use``: the value of each binding that reaches it
    (reaching definitions at the use), latest first. Bindings whose value is not written
    (a loop target, ``+=``, a parameter's caller) are left out. ``unpack``: for ``a, b = x``
    the element the name takes (the binding is left out where the element is not written);
    otherwise the whole value."""
    from .index import element

    out = []
    for binding in index.bindings_of(use, scope)[1]:
        value = binding.value
        if unpack and value is not None and binding.unpack_index is not None:
            value = element(value, binding.unpack_index)
        if value is not None:
            out.append(value)
    return out


def sole_binding(index: ModuleIndex, use: ast.Name, scope: Scope) -> Optional[Assignment]:
    """The one binding that reaches ``use`` (reaching definitions at the use), or None where
    several may (``if``/``else``, a loop) or none is known."""
    bindings = index.bindings_of(use, scope)[1]
    return bindings[0] if len(bindings) == 1 else None


def binding_scope(name: str, scope: Scope) -> Optional[Scope]:
    """The scope whose binding of ``name`` a use in ``scope`` sees (Python's scoping rule), or
    None where no scope of the module binds it: a builtin, or a name never bound."""
    return scope.lookup_scope(name)


def is_builtin(index: ModuleIndex, use: ast.Name, scope: Scope) -> bool:
    """Whether ``use`` reads a builtin (``hasattr``, ``getattr``) and not a function, import or
    variable of the module so named. Python's rule, with reaching definitions at the use: a
    name assigned anywhere in a function is that function's local throughout (never the
    builtin); in a module's or class body's own code the builtin is what a use sees until a
    binding reaches it (``hasattr(...)`` above a later ``def hasattr``; a binding later in a
    loop around the use reaches it on the next iteration); a function sees the module as it is
    at its end."""
    owner = scope.lookup_scope(use.id)
    if owner is None:
        return True
    at = position(index, use)
    if owner is not scope or owner.kind == "function" or at is None or use.id in owner.params:
        return False
    use_loops = {key for key in index.flow_at(at) if key[0] == "loop"}
    for binding in index.bindings_at(use.id, scope, at)[1]:
        start = binding_position(index, binding)
        if start is not None and (start < at or use_loops & index.flow_of(binding)):
            return False  # a binding written before the use, or carried round a loop to it
    return True  # only bindings below the use: the reaching set's "every binding" fallback


def is_parameter(name: str, scope: Scope) -> bool:
    """Whether a use of ``name`` in ``scope`` reads a parameter of the function that binds it
    (it may be rebound too; see :func:`only_parameter`)."""
    owner = scope.lookup_scope(name)
    return owner is not None and name in owner.params


def only_parameter(name: str, scope: Scope) -> bool:
    """Whether ``name`` is a parameter of the function a use in ``scope`` sees it in, never
    rebound there: every use reads what the caller passed."""
    owner = scope.lookup_scope(name)
    return owner is not None and name in owner.params and not owner.assignments.get(name)


def qualified_name(index: ModuleIndex, name: str, scope: Scope, at: Optional[int] = None) -> Optional[str]:
    """The fully qualified name ``name`` refers to where it is read (``at``; None: the end of
    the scope's code, as an importer of the module sees it): through the bindings that reach
    it (reaching definitions), an import's qualified name, a module-level ``def``/``class``'s
    own, or what a simple alias (``T = transformers.Trainer``) aliases. None for a parameter,
    any other local value, or a name no scope binds."""
    return index.resolve_name(name, scope, at, 0)


def bound_before(index: ModuleIndex, use: ast.Name, scope: Scope, at: int) -> bool:
    """Whether a binding of ``use``'s name written before ``at`` reaches ``at`` (reaching
    definitions at ``at``): the name already holds an earlier object there."""
    return any(
        start is not None and start < at
        for start in (binding_position(index, b) for b in index.bindings_at(use.id, scope, at)[1])
    )


def every_binding(index: ModuleIndex, name: str, scope: Scope) -> List[Assignment]:
    """Every binding of ``name`` in the scope a use in ``scope`` sees, wherever it is written
    (:meth:`ModuleIndex.bindings_anywhere`). Not a question of what one use sees (that is
    :func:`reaching`): of what an edit that deletes a binding (an unused import) leaves, which
    must hold for every use."""
    return list(index.bindings_anywhere(name, scope)[1])


def name_for(index: ModuleIndex, qualname: str, scope: Scope, at: Optional[int]) -> Optional[str]:
    """What code written at ``at`` in ``scope`` (None: the end of the scope's code) may spell to
    refer to ``qualname``: a name a module-level import binds to it, or to a module above it
    with the rest dotted on (``F`` for ``torch.nn.functional``, else ``torch.nn.functional``
    through ``torch``), where every binding of that name that reaches the place is that import,
    written before it (reaching definitions; an import written later reaches no earlier code,
    and a local, a parameter or a conditional ``F = make()`` of that name is not the module;
    ``except ImportError: F = None`` is passed over, as :func:`qualified_name` does: code that
    runs without the module is not what a fix for it is about). None where no name is. For a
    fix's text: it must run where it is written."""
    exact, above = [], []
    for local, full in index.imports.aliases.items():
        if full == qualname:
            exact.append((local, local))
        elif qualname.startswith(full + "."):
            above.append((f"{local}{qualname[len(full):]}", local))
    for spelled, local in exact + above:
        owner, bindings = index.bindings_at(local, scope, at)
        bindings = [b for b in bindings if not (type(b.value) is ast.Constant and b.value.value is None)]
        if not bindings or any(b.imported != index.imports.aliases[local] for b in bindings):
            continue
        if owner is scope and at is not None and any((binding_position(index, b) or at) >= at for b in bindings):
            continue  # no import written before the place reaches it
        return spelled
    return None


def _assigns_outside_loops(index: ModuleIndex, name: str, attr: str, code):
    """The assignments ``name.attr = ...`` of the code scope ``code`` made outside loops."""
    for a in index.attr_assigns:
        target = a.target
        if target.attr == attr and isinstance(target.value, ast.Name) and target.value.id == name:
            if not a.loops and a.scope.code_scope() is code:
                yield a


def attribute_set_before(index: ModuleIndex, use) -> bool:
    """Whether the attribute read ``use`` (an ``AttrUse``: ``model.language_model``) follows an
    assignment of the same attribute of the same name in the same code (``model.language_model =
    llm``), made outside loops and under no test the read is not under: the read returns the
    object assigned there, whatever the library's class defines."""
    if not isinstance(use.base, ast.Name) or id(use.node) not in index.order_of:
        return False
    at = index.order(use.node)[0]
    tests = {id(test) for test, _ in use.guards}
    return any(
        id(a.target) in index.order_of and index.order(a.target)[0] < at and {id(test) for test, _ in a.guards} <= tests
        for a in _assigns_outside_loops(index, use.base.id, use.attr, use.scope.code_scope())
    )


def attribute_stored_before(index: ModuleIndex, expr: ast.Attribute, scope) -> Optional[ast.expr]:
    """The value the last ``name.attr = value`` of the same code stored before the read ``expr``
    (``args.weight_dtype = torch.bfloat16 if ... else ...`` then ``torch_dtype=args.weight_dtype``),
    where it runs whenever the read does (outside loops and tests) and after every binding of
    ``name`` that reaches the read; None where there is none (``self`` apart: its attributes
    are the class's)."""
    base = expr.value
    if not isinstance(base, ast.Name) or base.id == "self" or id(expr) not in index.order_of:
        return None
    at = index.order(expr)[0]
    code = scope.code_scope()
    owner, bound = index.bindings_of(base, scope)
    bound_at = [index.order_of[id(b.statement)][0] for b in bound if id(b.statement) in index.order_of]
    found, last = None, -1
    for a in _assigns_outside_loops(index, base.id, expr.attr, code):
        if a.guards or id(a.value) not in index.order_of:
            continue
        stored, done = index.order(a.target)[0], index.order(a.value)[1]
        if done <= at and stored > last and all(b < stored for b in bound_at):
            found, last = a.value, stored
    return found


def calls_on(index: ModuleIndex, made: CallSite, methods: Optional[Collection[str]] = None) -> List[CallSite]:
    """The calls of methods (of ``methods``, else any) on the object the call ``made`` returns:
    chained on it (``HfArgumentParser(A).parse_dict(d)``), or on a name it is assigned to
    (``parser = H4ArgumentParser((A, B))`` ... ``parser.parse()``) in the scope that binds
    that name."""
    home = {name: made.scope.lookup_scope(name) for name in made.assigned_to}
    out = []
    for site in index.calls:
        receiver = site.receiver
        if site.method is None or receiver is None or (methods is not None and site.method not in methods):
            continue
        if receiver is made.node or (
            isinstance(receiver, ast.Name) and receiver.id in home and site.scope.lookup_scope(receiver.id) is home[receiver.id]
        ):
            out.append(site)
    return out
