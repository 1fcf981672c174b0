"""Possible-values evaluation of expressions over a :class:`ModuleIndex`.

Follows what training scripts really do to pick a precision: literals, variables
(every assignment in the scope counts: their union), ternaries (both branches,
each remembering its guard), ``if`` blocks around assignments, ``dict(...)`` and
``{...}`` literals splatted with ``**``, argparse options (``store_true`` may be
True, ``default=``, ``choices=``), ``torch.cuda.is_available()`` (may be True),
capability probes, and ``return`` values of local functions. Anything else is
``unknown`` and stays unknown.
"""
from __future__ import annotations

import dataclasses
import itertools
import re
from dataclasses import dataclass
from typing import Iterable, List, Optional, Tuple

import libcst as cst

from .index import Assignment, ModuleIndex, Scope, children, keyword
from .names import dotted
from .values import (
    CAPABILITY,
    CONST,
    COND,
    CUDA,
    DTYPE,
    PARAM,
    UNKNOWN,
    UNKNOWN_VALUE,
    Guard,
    ParamRef,
    Possible,
    Values,
    dtype_of_qualname,
    dtype_of_string,
)

CUDA_AVAILABLE = "torch.cuda.is_available"
# Functions whose result tells whether this GPU runs bf16 natively (or its compute capability).
CAPABILITY_FUNCTIONS = frozenset(
    {
        "is_bf16_supported",
        "get_device_capability",
        "get_device_properties",
        "is_torch_bf16_gpu_available",
        "is_torch_bf16_available_on_device",
        "is_bfloat16_supported",
    }
)
# A condition that selects a non-CUDA device (Intel XPU, Habana HPU, Ascend NPU, Apple MPS,
# XLA/TPU, the CPU).
OTHER_DEVICE = re.compile(
    r"""\b(?:xpu|hpu|npu|mps|xla|tpu|is_torch_(?:xla|tpu|xpu|hpu|npu|mps)_available|use_cpu|no_cuda)\b|["'](?:cpu|xpu|hpu|npu|mps|xla|tpu)(?::\d+)?["']"""
)
_MAX_ATOMS = 64
_MAX_DEPTH = 24


@dataclass(frozen=True)
class KwargSource:
    """Where a keyword argument's value comes from.

    ``key`` is the node that names the keyword (the ``Name`` of ``fp16=`` in the
    call, the ``Name`` in ``dict(fp16=...)``, or the string key of ``{"fp16": ...}``);
    ``value`` is its expression; ``via`` says which of the three it is.
    """

    name: str
    key: cst.CSTNode
    value: cst.BaseExpression
    via: str  # "keyword", "dict-call", "dict-literal"
    arg: Optional[cst.CSTNode] = None  # the whole Arg / DictElement


def _const(value, guards=(), origin=None) -> Possible:
    return Possible(CONST, value, tuple(guards), origin)


def is_capability_callee(qualname: Optional[str], func: cst.BaseExpression) -> bool:
    name = qualname or dotted(func) or ""
    return name.rsplit(".", 1)[-1] in CAPABILITY_FUNCTIONS


class Evaluator:
    def __init__(self, index: ModuleIndex) -> None:
        self.ix = index
        self._active: set = set()
        self._depth = 0
        self._taints: dict = {}

    # --- public -------------------------------------------------------------
    def values(self, expr: Optional[cst.BaseExpression], scope: Scope) -> Values:
        if expr is None:
            return UNKNOWN_VALUE
        key = (id(expr), id(scope))
        if key in self._active or self._depth > _MAX_DEPTH:
            return UNKNOWN_VALUE
        self._active.add(key)
        self._depth += 1
        try:
            out = self._eval(expr, scope)
        finally:
            self._active.discard(key)
            self._depth -= 1
        return _dedupe(out)

    def guard(self, test: cst.BaseExpression, positive: bool, scope: Scope) -> Guard:
        key = (id(test), id(scope))
        if key not in self._taints:
            self._taints[key] = self.consults(test, scope, set())
        capability, cuda, param_dtype = self._taints[key]
        return Guard(
            text=self.ix.text(test),
            positive=positive,
            capability=capability,
            cuda=cuda or capability,
            param_dtype=param_dtype,
            user_choice=positive and not (capability or cuda) and self._follows_user_input(test, scope),
            other_device=positive and bool(OTHER_DEVICE.search(self.ix.text(test))),
        )

    def _follows_user_input(self, test: cst.BaseExpression, scope: Scope) -> bool:
        """Whether a condition is true only when the user asks for it: it reads an input (an
        attribute or item of an arguments/config object, a parameter) and nothing in it is on by
        default (a negation, or an argparse option whose ``default=`` may select it, makes it
        the default). Syntactic, through variables: cheap enough for every guard."""
        follows = False
        for node, here in self._reached(test, scope, set()):
            if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
                return False  # `not args.no_bf16`: on unless the user opts out
            head = node
            while isinstance(head, (cst.Attribute, cst.Subscript)):
                head = head.value
            if head is node or not isinstance(head, cst.Name):
                if isinstance(node, cst.Name) and _is_parameter(node, here):
                    follows = True
                continue
            owner = here.lookup_scope(head.value)
            if owner is not None and owner.is_import(head.value):
                continue  # a module's attribute (torch.cuda...), not an input
            follows = True
            if isinstance(node, cst.Attribute):
                for option in self.ix.arg_options.get(node.attr.value, ()):
                    default = keyword(option.call, "default")
                    action = keyword(option.call, "action")
                    if action is not None and isinstance(action.value, cst.SimpleString) and action.value.evaluated_value == "store_false":
                        return False
                    if default is not None and not _falsy_literal(default.value):
                        return False
        return follows

    def _reached(self, expr: cst.CSTNode, scope: Scope, seen: set, inputs: bool = False):
        """Every node whose value may flow into ``expr``, with the scope it belongs to.

        Walks the expression, the assignments of the variables it names and the returns of
        the local functions it calls; with ``inputs``, also parameter defaults and the
        argparse options read as ``args.<dest>``. A taint walk rather than an evaluation,
        so it terminates on self-referencing code (`if use_bf16 and major < 8: use_bf16 = False`).
        """
        stack = [(expr, scope)]
        while stack:
            node, here = stack.pop()
            yield node, here
            if isinstance(node, cst.Name):
                owner = here.lookup_scope(node.value)
                key = (node.value, id(owner))
                if owner is not None and key not in seen:
                    seen.add(key)
                    stack.extend((a.value, owner) for a in owner.assignments.get(node.value, []) if a.value is not None)
                    default = owner.params.get(node.value) if inputs else None
                    if default is not None:
                        stack.append((default, owner))
                continue
            if isinstance(node, cst.Call):
                function = self._local_function(node.func, here)
                if function is not None and id(function) not in seen:
                    seen.add(id(function))
                    stack.extend((value, function) for value, _ in function.returns)
            elif inputs and isinstance(node, cst.Attribute) and node.attr.value in self.ix.arg_options:
                for option in self.ix.arg_options[node.attr.value]:
                    if id(option.call) not in seen:
                        seen.add(id(option.call))
                        stack.append((option.call, here))
            stack.extend((child, here) for child in children(node))

    def mentions_dtype(self, expr: cst.CSTNode, scope: Scope, seen: Optional[set] = None) -> bool:
        """Whether a torch dtype (or a dtype string such as ``"fp16"``) may reach ``expr``.

        Cheap and syntactic: hot paths (every ``x.to(device)`` of a module) ask this before
        evaluating values, which needs source positions.
        """
        for node, here in self._reached(expr, scope, set() if seen is None else seen, inputs=True):
            if isinstance(node, (cst.Name, cst.Attribute)) and dtype_of_qualname(self.ix.qualify(node, here)):
                return True
            if isinstance(node, cst.SimpleString) and dtype_of_string(node.evaluated_value):
                return True
        return False

    def consults(self, expr: cst.CSTNode, scope: Scope, seen: set) -> Tuple[bool, bool, bool]:
        """What an expression consults, through variables and local functions:
        (a capability probe, ``torch.cuda.is_available()``, a parameter-dtype check
        such as ``any(p.dtype == torch.float16 for p in model.parameters())``).
        """
        capability = cuda = param_dtype = False
        for node, here in self._reached(expr, scope, seen):
            if isinstance(node, cst.Comparison) and _is_param_dtype_check(node, self.ix, here):
                param_dtype = True
            elif isinstance(node, cst.Call):
                site = self.ix.call_of(node)
                qual = site.qualname if site else self.ix.qualify(node.func, here)
                if qual == CUDA_AVAILABLE:
                    cuda = True
                elif is_capability_callee(qual, node.func):
                    capability = True
        return capability, cuda, param_dtype

    def guards_of(self, guards, scope: Scope) -> Tuple[Guard, ...]:
        return tuple(self.guard(test, pos, scope) for test, pos in guards)

    def kwarg_sources(self, call: cst.Call, scope: Scope) -> List[KwargSource]:
        """Every keyword a call receives: direct ones and those of ``**dict`` splats."""
        out: List[KwargSource] = []
        for arg in call.args:
            if arg.keyword is not None:
                out.append(KwargSource(arg.keyword.value, arg.keyword, arg.value, "keyword", arg))
            elif arg.star == "**":
                out.extend(self._dict_entries(arg.value, scope, set()))
        return out

    def kwarg(self, call: cst.Call, scope: Scope, name: str) -> List[KwargSource]:
        return [s for s in self.kwarg_sources(call, scope) if s.name == name]

    def kwarg_values(self, call: cst.Call, scope: Scope, name: str) -> Optional[Values]:
        """The union of the values of keyword ``name``; None when it is not passed."""
        sources = self.kwarg(call, scope, name)
        if not sources:
            return None
        return _dedupe(v for s in sources for v in self.values(s.value, scope))

    # --- dict splats --------------------------------------------------------------
    def _dict_entries(self, expr, scope: Scope, seen: set) -> List[KwargSource]:
        if isinstance(expr, cst.Dict):
            out = []
            for el in expr.elements:
                if isinstance(el, cst.DictElement) and isinstance(el.key, cst.SimpleString):
                    key = el.key.evaluated_value
                    if isinstance(key, str):
                        out.append(KwargSource(key, el.key, el.value, "dict-literal", el))
                elif isinstance(el, cst.StarredDictElement):
                    out.extend(self._dict_entries(el.value, scope, seen))
            return out
        if isinstance(expr, cst.Call) and dotted(expr.func) == "dict":
            out = []
            for arg in expr.args:
                if arg.keyword is not None:
                    out.append(KwargSource(arg.keyword.value, arg.keyword, arg.value, "dict-call", arg))
                elif arg.star == "**":
                    out.extend(self._dict_entries(arg.value, scope, seen))
            return out
        if isinstance(expr, cst.Name) and expr.value not in seen:
            seen.add(expr.value)
            owner = scope.lookup_scope(expr.value)
            if owner is None:
                return []
            out = []
            for assignment in owner.assignments.get(expr.value, []):
                if assignment.value is not None and assignment.unpack_index is None:
                    out.extend(self._dict_entries(assignment.value, owner, seen))
            return out
        return []

    # --- the evaluator proper ------------------------------------------------------
    def _eval(self, expr: cst.BaseExpression, scope: Scope) -> List[Possible]:
        origin = self.ix.span(expr)
        if isinstance(expr, cst.SimpleString):
            return [_const(expr.evaluated_value, origin=origin)]
        if isinstance(expr, cst.ConcatenatedString):
            value = expr.evaluated_value
            return [_const(value, origin=origin)] if value is not None else list(UNKNOWN_VALUE)
        if isinstance(expr, cst.Integer):
            return [_const(int(expr.evaluated_value), origin=origin)]
        if isinstance(expr, cst.Float):
            return [_const(float(expr.evaluated_value), origin=origin)]
        if isinstance(expr, cst.Name):
            return self._name(expr, scope, origin)
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, scope, origin)
        if isinstance(expr, cst.IfExp):
            yes = self.guard(expr.test, True, scope)
            no = self.guard(expr.test, False, scope)
            excluded = self._excluded_dtypes(expr.test, self.ix.text(expr.orelse), scope)
            return [
                *(_with_guard(v, yes) for v in self.values(expr.body, scope)),
                *(
                    _with_guard(_narrowed(v, excluded), no)
                    for v in self.values(expr.orelse, scope)
                    if not (excluded and v.kind in (DTYPE, CONST) and _dtype_name(v) in excluded)
                ),
            ]
        if isinstance(expr, cst.Call):
            return self._call(expr, scope)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            return [_negate(v, self.ix.text(expr)) for v in _opaque(self.values(expr.expression, scope))]
        if isinstance(expr, cst.BooleanOperation):
            return self._boolean(expr, scope)
        if isinstance(expr, cst.Comparison):
            return self._comparison(expr, scope)
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, scope)
        return list(UNKNOWN_VALUE)

    def _excluded_dtypes(self, test, orelse_text: str, scope: Scope) -> set:
        """Dtypes the else-branch cannot be: ``X if E == torch.float16 else E`` narrows E."""
        tests = [test]
        while tests and isinstance(tests[0], cst.BooleanOperation) and isinstance(tests[0].operator, cst.Or):
            t = tests.pop(0)
            tests[:0] = [t.left, t.right]
        out = set()
        for t in tests:
            if not (isinstance(t, cst.Comparison) and len(t.comparisons) == 1):
                return set()
            op = t.comparisons[0].operator
            if not isinstance(op, (cst.Equal, cst.Is, cst.In)) or self.ix.text(t.left) != orelse_text:
                return set()
            comparator = t.comparisons[0].comparator
            items = [e.value for e in comparator.elements] if isinstance(op, cst.In) and isinstance(comparator, (cst.Tuple, cst.List, cst.Set)) else [comparator]
            for item in items:
                for v in self.values(item, scope):
                    name = _dtype_name(v)
                    if name:
                        out.add(name)
        return out

    def _name(self, expr: cst.Name, scope: Scope, origin) -> List[Possible]:
        if expr.value in ("True", "False", "None"):
            return [_const({"True": True, "False": False, "None": None}[expr.value], origin=origin)]
        owner = scope.lookup_scope(expr.value)
        if owner is None:
            return list(UNKNOWN_VALUE)
        out: List[Possible] = []
        if expr.value in owner.params:
            default = owner.params[expr.value]
            # what the callers pass: known at the join, where calls across files are seen
            out.append(Possible(PARAM, param_ref(owner, expr.value), origin=origin))
            if default is not None:
                out.extend(self.values(default, owner.parent or owner))
        assignments = owner.assignments.get(expr.value, [])
        # A variable reassigned under a capability test (`if major < 8: use_bf16 = False`),
        # or under a parameter-dtype check (`if has_fp16_params: use_scaler = False`),
        # is guarded as a whole.
        guard_all = self._capability_guarded(assignments, owner)
        for assignment in assignments:
            guards = self.guards_of(assignment.guards, owner)
            if assignment.imported is not None:  # `from torch import float16 as half`
                dtype = dtype_of_qualname(assignment.imported)
                out.append(_with_guards(Possible(DTYPE, dtype, origin=origin) if dtype else Possible(UNKNOWN), guards))
                continue
            for v in self._assigned(assignment, owner):
                v = _with_guards(v, guards)
                if guard_all:
                    v = _with_guard(v, guard_all)
                out.append(v)
        return out or list(UNKNOWN_VALUE)

    def _capability_guarded(self, assignments: List[Assignment], owner: Scope) -> Optional[Guard]:
        if len(assignments) < 2:
            return None
        for assignment in assignments:
            for test, positive in assignment.guards:
                guard = self.guard(test, positive, owner)
                if guard.capability or guard.param_dtype:
                    return guard
        return None

    def _assigned(self, assignment: Assignment, owner: Scope) -> List[Possible]:
        if assignment.value is None:
            return list(UNKNOWN_VALUE)
        vals = self.values(assignment.value, owner)
        if assignment.unpack_index is None:
            return list(vals)
        # `major, minor = torch.cuda.get_device_capability()` keeps the capability taint
        return [v if v.kind == CAPABILITY else Possible(UNKNOWN) for v in vals]

    def _attribute(self, expr: cst.Attribute, scope: Scope, origin) -> List[Possible]:
        qual = self.ix.qualify(expr, scope)
        dtype = dtype_of_qualname(qual)
        if dtype:
            return [Possible(DTYPE, dtype, origin=origin)]
        base_vals = self.values(expr.value, scope) if not isinstance(expr.value, cst.Name) or scope.lookup_scope(expr.value.value) else ()
        if any(v.kind == CAPABILITY for v in base_vals):  # props.major
            return [Possible(CAPABILITY, text=self.ix.text(expr), capability=True)]
        attrs = self._self_attribute(expr, scope)
        if attrs is not None:
            return attrs
        options = self.ix.arg_options.get(expr.attr.value)
        if options and isinstance(expr.value, cst.Name):
            out: List[Possible] = []
            for option in options:
                out.extend(self._arg_option_values(option.call, scope))
            return out
        return list(UNKNOWN_VALUE)

    def _self_attribute(self, expr: cst.Attribute, scope: Scope) -> Optional[List[Possible]]:
        """``self.dtype`` in a method: every value its class assigns to it (``self.dtype = dtype``
        in ``__init__`` is the constructor's parameter, resolved at the join)."""
        if not (isinstance(expr.value, cst.Name) and expr.value.value == "self"):
            return None
        method = scope.code_scope()
        klass = method.parent
        if method.kind != "function" or klass is None or klass.kind != "class" or "self" not in method.params:
            return None
        info = self.ix.classes.get(klass.qualname)
        assigned = info.self_attr_values.get(expr.attr.value) if info is not None else None
        if not assigned:
            return None
        out: List[Possible] = []
        for assignment, where in assigned:
            guards = self.guards_of(assignment.guards, where)
            out.extend(_with_guards(v, guards) for v in self._assigned(assignment, where))
        return out

    def _arg_option_values(self, call: cst.Call, scope: Scope) -> List[Possible]:
        action = keyword(call, "action")
        action_value = action.value.evaluated_value if action is not None and isinstance(action.value, cst.SimpleString) else None
        default = keyword(call, "default")
        choices = keyword(call, "choices")
        out: List[Possible] = []
        if action_value == "store_true":
            out += [_const(True, origin=self.ix.span(call)), _const(False)]
        elif action_value == "store_false":
            out += [_const(False, origin=self.ix.span(call)), _const(True)]
        if default is not None:
            out += self.values(default.value, self.ix.root)
        elif action_value is None:
            out.append(_const(None))
        if choices is not None and isinstance(choices.value, (cst.List, cst.Tuple, cst.Set)):
            for el in choices.value.elements:
                out += self.values(el.value, self.ix.root)
        elif action_value not in ("store_true", "store_false"):
            if keyword(call, "type") is None or choices is None:
                out.extend(UNKNOWN_VALUE)  # a user may pass any value on the command line
        return out

    def _call(self, expr: cst.Call, scope: Scope) -> List[Possible]:
        site = self.ix.call_of(expr)
        qual = site.qualname if site else self.ix.qualify(expr.func, scope)
        text = self.ix.text(expr)
        if qual == CUDA_AVAILABLE:
            return [Possible(CUDA, text=text, cuda=True)]
        if is_capability_callee(qual, expr.func):
            return [Possible(CAPABILITY, text=text, capability=True, cuda=True)]
        if qual in ("builtins.bool", "bool") or dotted(expr.func) == "bool":
            args = [a for a in expr.args if a.keyword is None]
            return list(self.values(args[0].value, scope)) if args else [_const(False)]
        if dotted(expr.func) == "getattr" and len(expr.args) >= 2:
            base = self.ix.qualify(expr.args[0].value, scope)
            if base == "torch":
                out = []
                for v in self.values(expr.args[1].value, scope):
                    dtype = dtype_of_qualname(f"torch.{v.value}") if v.kind == CONST and isinstance(v.value, str) else None
                    out.append(Possible(DTYPE, dtype, v.guards, v.origin) if dtype else Possible(UNKNOWN))
                return out
        # a local function: the union of what it returns
        function = self._local_function(expr.func, scope)
        if function is not None:
            out = []
            for value, guards in function.returns:
                g = self.guards_of(guards, function)
                out.extend(_with_guards(v, g) for v in self.values(value, function))
            return out or list(UNKNOWN_VALUE)
        return list(UNKNOWN_VALUE)

    def _local_function(self, func: cst.BaseExpression, scope: Scope) -> Optional[Scope]:
        if isinstance(func, cst.Name):
            owner = scope.lookup_scope(func.value)
            if owner is not None:
                qual = f"{owner.qualname}.{func.value}" if owner.qualname else func.value
                return self.ix.functions.get(qual)
        return None

    def _boolean(self, expr: cst.BooleanOperation, scope: Scope) -> List[Possible]:
        left = _opaque(self.values(expr.left, scope))
        right = _opaque(self.values(expr.right, scope))
        is_and = isinstance(expr.operator, cst.And)
        out: List[Possible] = []
        for a, b in itertools.islice(itertools.product(left, right), _MAX_ATOMS):
            if a.kind == CONST and b.kind == CONST:
                out.append(_const((a.value and b.value) if is_and else (a.value or b.value), a.guards + b.guards))
            elif is_and and a.kind == CONST and not a.value:
                out.append(_const(a.value, a.guards))
            elif not is_and and a.kind == CONST and a.value:
                out.append(_const(a.value, a.guards))
            elif UNKNOWN in (a.kind, b.kind) and not (a.capability or b.capability or a.kind == CUDA or b.kind == CUDA):
                out.append(Possible(UNKNOWN))
            else:
                out.append(
                    Possible(
                        COND,
                        None,
                        a.guards + b.guards,
                        text=self.ix.text(expr),
                        capability=_consults(a, CAPABILITY) or _consults(b, CAPABILITY),
                        cuda=_consults(a, CUDA) or _consults(b, CUDA),
                    )
                )
        return out

    def _comparison(self, expr: cst.Comparison, scope: Scope) -> List[Possible]:
        left = _opaque(self.values(expr.left, scope))
        if len(expr.comparisons) != 1:
            return [_cond(self.ix.text(expr), left)]
        target = expr.comparisons[0]
        right = _opaque(self.values(target.comparator, scope))
        op = target.operator
        if isinstance(op, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot)) and any(v.kind == CONST for v in left) and all(
            v.kind in (CONST, UNKNOWN) for v in left + right
        ):
            # `args.precision == "bf16"`: known operands compare; unknown ones stay unknown
            out = []
            for a, b in itertools.islice(itertools.product(left, right), _MAX_ATOMS):
                if a.kind != CONST or b.kind != CONST:
                    out.append(Possible(UNKNOWN))
                    continue
                eq = a.value == b.value
                out.append(_const(eq if isinstance(op, (cst.Equal, cst.Is)) else not eq, a.guards + b.guards))
            return out
        return [_cond(self.ix.text(expr), left + right)]

    def _subscript(self, expr: cst.Subscript, scope: Scope) -> List[Possible]:
        base = self.values(expr.value, scope)
        if any(v.kind == CAPABILITY for v in base):  # get_device_capability()[0]
            return [Possible(CAPABILITY, text=self.ix.text(expr), capability=True, cuda=True)]
        if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
            return list(UNKNOWN_VALUE)
        keys = self.values(expr.slice[0].slice.value, scope)
        if not keys or any(k.kind != CONST for k in keys):
            return list(UNKNOWN_VALUE)
        entries = self._dict_entries(expr.value, scope, set())
        out: List[Possible] = []
        for key in keys:  # `{"bfloat16": torch.bfloat16, ...}[dtype]`: the key's guards carry over
            for entry in entries:
                if entry.name == key.value:
                    out.extend(_with_guards(v, key.guards) for v in self.values(entry.value, scope))
        return out or list(UNKNOWN_VALUE)


def _is_parameter(node: cst.Name, scope: Scope) -> bool:
    owner = scope.lookup_scope(node.value)
    return owner is not None and node.value in owner.params


def _falsy_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Name):
        return node.value in ("None", "False")
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value in ("", "no", "none", "fp32", "float32", "32")
    if isinstance(node, cst.Integer):
        return node.value in ("0", "32")
    return False


def param_ref(function: Scope, name: str) -> ParamRef:
    """How callers reach parameter ``name`` of ``function`` (``Class(...)`` for ``__init__``)."""
    positional = list(function.positional)
    key = function.qualname
    parent = function.parent
    if parent is not None and parent.kind == "class" and positional and positional[0] in ("self", "cls"):
        positional = positional[1:]
        if key.endswith(".__init__"):
            key = parent.qualname
    index = positional.index(name) if name in positional else None
    return ParamRef(key, name, index)


def _narrowed(v: Possible, excluded: set) -> Possible:
    """A parameter in the else-branch of a dtype test keeps the exclusion until its callers'
    values replace it."""
    if not excluded or v.kind != PARAM:
        return v
    return dataclasses.replace(v, value=dataclasses.replace(v.value, excluded=v.value.excluded | frozenset(excluded)))


def _opaque(values: Iterable[Possible]) -> List[Possible]:
    """Parameters inside a larger expression (``not flag``, ``a and b``) are not followed
    across calls: only a parameter passed on as it is keeps its symbolic value."""
    return [Possible(UNKNOWN) if v.kind == PARAM else v for v in values]


def _dtype_name(v: Possible) -> Optional[str]:
    if v.kind == DTYPE:
        return v.value
    if v.kind == CONST:
        return dtype_of_string(v.value)
    return None


def _is_param_dtype_check(node: cst.Comparison, index: ModuleIndex, scope: Scope) -> bool:
    """``p.dtype == torch.float16`` / ``x.dtype is torch.half`` / ``model.dtype != torch.float16``."""
    sides = [node.left] + [c.comparator for c in node.comparisons]
    has_dtype_attr = any(isinstance(s, cst.Attribute) and s.attr.value == "dtype" for s in sides)
    has_fp16 = any(dtype_of_qualname(index.qualify(s, scope)) == "float16" for s in sides if isinstance(s, (cst.Attribute, cst.Name)))
    return has_dtype_attr and has_fp16


def _consults(v: Possible, kind: str) -> bool:
    if kind == CAPABILITY:
        return v.kind == CAPABILITY or v.capability
    return v.kind == CUDA or v.cuda or v.kind == CAPABILITY or v.capability


def _cond(text: str, parts: Iterable[Possible]) -> Possible:
    parts = list(parts)
    if all(p.kind == UNKNOWN for p in parts):
        return Possible(UNKNOWN)
    return Possible(
        COND,
        None,
        text=text,
        capability=any(_consults(p, CAPABILITY) for p in parts),
        cuda=any(_consults(p, CUDA) for p in parts),
    )


def _negate(v: Possible, text: str) -> Possible:
    if v.kind == CONST:
        return _const(not v.value, v.guards)
    if v.kind == UNKNOWN:
        return v
    return Possible(COND, None, v.guards, text=text, capability=_consults(v, CAPABILITY), cuda=_consults(v, CUDA))


def _with_guard(v: Possible, guard: Guard) -> Possible:
    return dataclasses.replace(v, guards=v.guards + (guard,))


def _with_guards(v: Possible, guards: Tuple[Guard, ...]) -> Possible:
    if not guards:
        return v
    return dataclasses.replace(v, guards=guards + v.guards)


def _dedupe(values: Iterable[Possible]) -> Values:
    out = []
    seen = set()
    for v in values:
        if v in seen:
            continue
        seen.add(v)
        out.append(v)
        if len(out) >= _MAX_ATOMS:
            break
    return tuple(out)
