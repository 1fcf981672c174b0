"""Call records: what each call of project code passes, for parameters resolved at the join.

A parameter's value is unknown inside its function (``def load_student(name, dtype)``);
its callers know it (``load_student("s", torch.float16)`` in another file). Each file
records, for the calls that may reach project code, the arguments that can carry a
precision: anything a dtype may reach, literals, and parameters passed on as they are
(so chains of helpers are followed). ``interproc.py`` substitutes them at the join.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional

import ast

from .callees import LIBRARIES, installed_package_name, project_callee
from .evaluate import Evaluator
from .float16 import float16_tensors
from .index import FUNCTION_DEFS, ModuleIndex, arguments
from .main_block import main_block_orders, main_scope
from .queries import reaching_values
from .records import CallArg, CallRecord
from .tensors import half_tensors
from .values import HALF, PARAM, SYMBOL, UNKNOWN, ParamRef, Possible


# arguments that are never a tensor or a model
_NO_TENSOR = (ast.Constant, ast.JoinedStr, ast.Lambda, ast.Dict, ast.Compare)


def call_records(index: ModuleIndex, evaluator: Evaluator) -> tuple:
    tensors = half_tensors(index, evaluator)
    certain = float16_tensors(index, evaluator)
    out: List[CallRecord] = []
    # A parameter passed on as it is, the same value at each call that passes it: one object
    # (transformers: 18,000 of its call records' values were copies of another, #23).
    passed: Dict[Possible, Possible] = {}

    def shared(values: tuple) -> tuple:
        return tuple([passed.setdefault(v, v) if _passed_on(v) else v for v in values])
    for site in index.calls:
        callee = project_callee(index, site)
        if callee is None:
            continue
        args: List[CallArg] = []
        position = 0
        written = arguments(site.node)
        for arg in written:  # in the order written
            if arg.star == "**":
                continue  # `**kw`: its entries come below, with the dict's own keys
            if arg.star == "*":
                break  # `*args`: the positions after it are unknown
            keyword, value = arg.keyword, arg.value
            values = evaluator.values(value, site.scope) if evaluator.worth_passing(value, site.scope) else ()
            if tensors is not None and not isinstance(value, _NO_TENSOR):  # a float16 tensor or model handed over
                values = tuple(dict.fromkeys((*values, *tensors.values(value, site.scope))))
            if not any(v.kind != UNKNOWN for v in values) and isinstance(value, (ast.Name, ast.Attribute, ast.Subscript)):
                # a class handed over (`self._load(path, self.model_cls)`): what the callee's
                # parameter is, for the receiver of its `model_cls.from_pretrained(...)`
                named = evaluator.symbols(value, site.scope)
                if any(v.kind == SYMBOL for v in named):
                    values = named
            fp16 = () if isinstance(value, _NO_TENSOR) else _placed(certain.values(value, site.scope), index.span(value))
            fields = evaluator.namespace_fields() if _namespace(index, value, site.scope, values) else ()
            if values or fp16 or fields:
                args.append(CallArg(position if keyword is None else None, keyword, shared(values), shared(fp16), fields))
            if keyword is None:
                position += 1
        if any(kw.arg is None for kw in site.node.keywords):
            for source in evaluator.kwarg_sources(site.node, site.scope):
                if source.via != "keyword" and evaluator.worth_passing(source.value, site.scope):
                    args.append(CallArg(None, source.name, shared(evaluator.values(source.value, site.scope))))
        # the conditions it runs under: what a parameter's value holds under, and whether every
        # call of the callee is the user's choice (`if args.precision == "bf16": model.to_bf16()`)
        guards = evaluator.guards_of(site.guards, site.scope) if args or site.guards else ()
        autocast = tensors is not None and tensors.autocast_enabled(site) is not None
        out.append(CallRecord(
            callee, tuple(args), guards, autocast,
            keywords=tuple(a.keyword for a in written if a.keyword is not None),
            positionals=sum(1 for a in written if a.keyword is None and not a.star),
            splat=any(a.star for a in written),
        ))
    return tuple(out)


def recorded_callees(index: ModuleIndex) -> tuple:
    """The callee of each record :func:`call_records` makes, in its order (one per call that
    may reach project code): what the join indexes a module's callers by, without the records."""
    return tuple(callee for callee in (project_callee(index, site) for site in index.calls) if callee is not None)


_PARSES = frozenset({"parse_args", "parse_known_args"})


def _namespace(index: ModuleIndex, value: ast.expr, scope, values: tuple) -> bool:
    """Whether ``value`` is a name that holds what an argparse parser of this module parses
    (``args = parser.parse_args()``), known as nothing else: its options are its fields."""
    if not isinstance(value, ast.Name) or not index.arg_options or any(v.kind != UNKNOWN for v in values):
        return False
    made = reaching_values(index, value, scope)
    return bool(made) and all(
        isinstance(m, ast.Call) and isinstance(m.func, ast.Attribute) and m.func.attr in _PARSES for m in made
    )


def _passed_on(atom: Possible) -> bool:
    """A parameter's value with no table or keys in it: its fields are names, flags and
    positions, so equal ones are interchangeable (``1`` and ``True``, equal in Python, cannot
    be two of its fields)."""
    ref = atom.value
    return atom.kind == PARAM and isinstance(ref, ParamRef) and not atom.lookup and not ref.keys and not ref.missing


def _placed(atoms, span) -> tuple:
    """Certainly float16 atoms of an argument, each placed at the argument (the call that
    passes the float16 tensor is what a finding in the callee names)."""
    return tuple(dataclasses.replace(v, origin=span) if v.kind == HALF else v for v in atoms)


def call_edges(index: ModuleIndex) -> tuple:
    """``(caller, callee)`` for the call graph: the function (or module) a call runs in, and
    what it calls or hands over to be called (``fire.Fire(main)``, ``Thread(target=run)``,
    ``app.command()(train)``): a function passed as an argument is a callee too. A call of an
    installed package's name (``diffusers.models.film.FilmLayer``) is an edge too: in the
    package's own repository it runs the tree's code (the join keeps it only there)."""
    edges = set()
    mains = main_block_orders(index)
    for site in index.calls:
        scope = site.scope.code_scope()
        caller = scope.qualname
        if mains and scope.kind == "module" and _inside(index.order(site.node)[0], mains):
            caller = main_scope(caller)  # runs only when this module is the script
        callee = project_callee(index, site)
        if callee is None and installed_package_name(site.qualname):
            callee = site.qualname
        if callee is not None:
            edges.add((caller, callee))
        if site.qualname is None and isinstance(site.node.func, ast.Name) and site.node.func.id in _NOT_CALLING:
            continue  # `super(Net, self)`, `isinstance(m, Block)`: the class is read, never called
        for arg in arguments(site.node):  # `*handlers` and `**kw` alike
            value = arg.value
            if isinstance(value, (ast.Name, ast.Attribute)):
                target = index.qualify(value, site.scope)
                if target is not None and (target.split(".")[0] not in LIBRARIES or installed_package_name(target)):
                    edges.add((caller, target))
    return tuple(sorted(edges))


# builtins whose arguments are classes they read, not callables they run (a class passed to
# one is not built there: ``super(Net, self).__init__()`` in Net's own ``__init__``, tune 44's M1)
_NOT_CALLING = frozenset({"super", "isinstance", "issubclass", "type", "hasattr", "getattr", "setattr", "vars", "id"})


def registered_commands(index: ModuleIndex) -> tuple:
    """``(object, function)`` for a function a decorator hands to a project object that runs it
    when called: ``@app.command()`` of ``app = typer.Typer()``, ``@cli.command()`` of a
    ``@click.group()`` function, ``@app.callback()``. Calling ``app()`` (in ``__main__.py``, a
    console script) dispatches to the command, so the command runs wherever ``app`` is called,
    like ``app.command()(train)`` does."""
    out = set()
    for qualname, scope in index.functions.items():
        node = scope.node
        if not isinstance(node, FUNCTION_DEFS):
            continue
        for call in node.decorator_list:
            func = call.func if isinstance(call, ast.Call) else call
            if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
                continue
            if func.attr in _PROPERTY_ACCESSORS:
                continue  # `@scaler.setter`: the property's own setter, no command of an app
            holder = _project_object(index, func.value, scope.parent or index.root)
            if holder is not None:
                out.add((holder, qualname))
    return tuple(sorted(out))


def _project_object(index: ModuleIndex, name: ast.Name, scope) -> Optional[str]:
    """The qualified name of a project object ``name`` refers to: a project import or
    definition (``index.qualify``), or a variable bound at the module's top level
    (``app = typer.Typer()``: ``<module>.app``); None for a library's name or a local."""
    target = index.qualify(name, scope)
    if target is None:
        owner, bindings = index.bindings_at(name.id, scope, None)
        if owner is None or owner.kind != "module" or name.id in owner.params or not bindings:
            return None
        target = f"{owner.qualname}.{name.id}" if owner.qualname else name.id
    return None if target.split(".")[0] in LIBRARIES or target.split(".")[0] in _DECORATOR_LIBRARIES else target


# a property's accessors (`@scaler.setter` under `@property def scaler`): the property's own
# methods, registered with no object that runs them
_PROPERTY_ACCESSORS = frozenset({"setter", "getter", "deleter"})


# libraries whose own decorators (``@click.command()``, ``@hydra.main()``) make the function
# itself the command: whoever calls it runs it, an edge the call already records
_DECORATOR_LIBRARIES = frozenset({"click", "typer", "hydra", "jsonargparse", "fire"})


def _inside(at: int, ranges) -> bool:
    return any(first <= at < last for first, last in ranges)


def return_summaries(index: ModuleIndex, evaluator: Evaluator) -> tuple:
    """``(function, values)`` for every function whose return value is known in part (a
    dtype, a literal, a config value, a parameter passed back, a float16 tensor): what a call of it in
    another file evaluates to, once the join substitutes the symbolic parts."""
    tensors = half_tensors(index, evaluator)
    out = []
    for qualname, function in index.functions.items():
        if not function.returns:
            continue
        values = evaluator.returned(function) if evaluator.worth_summarising(function) else ()
        if tensors is not None:  # a float16 model or logits (`def load_teacher(): ... return t`)
            values = tuple(dict.fromkeys((*values, *tensors.returned(function))))
        if any(v.kind != UNKNOWN for v in values):
            out.append((qualname, values))
    # an attribute of a class's instances (``Class.attr``): a dataclass field's default, or
    # what its methods assign to ``self.attr`` (a constructor's parameter, substituted at the join)
    for qualname in index.classes:
        for attr, values in evaluator.instance_attributes(qualname).items():
            if any(v.kind != UNKNOWN for v in values):
                out.append((f"{qualname}.{attr}", values))
    # a module-level variable (``MODEL_DTYPE = torch.bfloat16``): what another file's
    # ``from this_module import MODEL_DTYPE`` reads (a ``ReturnRef`` that is ``bound``)
    out.extend(evaluator.module_variables())
    return tuple(out)
