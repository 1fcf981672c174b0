"""Tests of an installed library's version, read by what they compare, never by their words.

A branch written for several versions (``if version.parse(transformers.__version__) >=
version.parse("4.46"):``) is the project's own compatibility code, and a module imported only
under such a test runs only on the versions it admits. A test is a comparison one side of
which is a library's version and the other a version written in the code:

- the version: ``<lib>.__version__`` (also imported: ``from torch import __version__``),
  ``importlib.metadata.version("<lib>")``, ``pkg_resources.get_distribution("<lib>").version``,
  any of those through ``packaging.version.parse`` / ``Version`` / ``LooseVersion`` (and their
  ``.base_version``), or a variable bound to one;
- the version written: a string literal, or one of the parsers applied to it;
- or a call of a library's own version helper (``knowledge/libraries.toml``
  ``[[version_helpers]]``: ``is_torch_greater_or_equal("2.1")``, ``is_transformers_version(">=",
  "4.46")``), or of a project function that returns such a comparison of its parameters
  (``def at_least(name, v): return Version(metadata.version(name)) >= Version(v)``; see
  :func:`version_predicates`, read across files at the join).

A variable merely named ``version`` is none of these. ``not``, ``and`` and ``or`` combine tests.
"""
from __future__ import annotations

from .._dataclass import dataclass
from typing import Dict, List, Optional, Tuple

import ast

from ..knowledge import version_helpers
from ..workspace.versions import Allowed, normalize, parse_spec, read_version
from .index import FUNCTION_DEFS, ModuleIndex, Scope, parameters, positional, string_value

_METADATA_VERSION = frozenset({"importlib.metadata.version", "importlib_metadata.version"})
_DISTRIBUTION = frozenset({"pkg_resources.get_distribution", "pkg_resources.require"})
_PARSERS = frozenset(
    {
        "packaging.version.parse", "packaging.version.Version", "packaging.version.LegacyVersion",
        "pkg_resources.parse_version", "distutils.version.LooseVersion", "distutils.version.StrictVersion",
        "looseversion.LooseVersion", "pkg_resources.extern.packaging.version.Version",
    }
)
_OPS = {ast.GtE: ">=", ast.Gt: ">", ast.LtE: "<=", ast.Lt: "<", ast.Eq: "==", ast.NotEq: "!="}
_FLIP = {">=": "<=", ">": "<", "<=": ">=", "<": ">", "==": "==", "!=": "!="}
_NEGATE = {">=": "<", ">": "<=", "<=": ">", "<": ">=", "==": "!=", "!=": "=="}


@dataclass(frozen=True)
class VersionTest:
    """A test of ``dist``'s installed version; ``allowed``: the versions where the branch runs
    (None where that is not a range: ``!=``, or an ``or`` of two libraries)."""

    dist: str
    allowed: Optional[Allowed]


@dataclass(frozen=True)
class HelperCall:
    """A call of a project function in a test, for the join to read (``at_least("transformers",
    "4.35")`` of ``utils/vers.py``): its qualified name as this module names it, its literal
    positional arguments, and the branch (``positive``: the test is true there)."""

    callee: str
    args: Tuple[Optional[str], ...]
    positive: bool


def admitted(dist: str, op: str, version: str, text: str = "") -> Optional[Allowed]:
    """The versions of ``dist`` where ``<its version> op version`` holds (None for ``!=``)."""
    if op == "!=" or read_version(version) is None:
        return None
    return parse_spec(normalize(dist), f"{op}{version}", "", text or f"{normalize(dist)}{op}{version}")


def _literal(node: Optional[ast.expr]) -> Optional[str]:
    return string_value(node) if node is not None else None


class VersionTests:
    """The version tests of one module (see the module's docstring)."""

    def __init__(self, index: ModuleIndex, predicates: Optional[Dict[str, Tuple]] = None) -> None:
        self.ix = index
        self._predicates = predicates  # this module's own helpers, found on first use

    # --- what a test admits -------------------------------------------------------------
    def test(self, test: ast.expr, positive: bool, scope: Optional[Scope] = None) -> Optional[VersionTest]:
        """The library version test ``test`` is, on its ``positive`` (or negative) branch."""
        scope = scope or self._scope(test)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self.test(test.operand, not positive, scope)
        if isinstance(test, ast.BoolOp):
            # `a and b and c` is one flat operation in `ast`: combined pairwise from the left,
            # as `(a and b) and c`
            both_hold = isinstance(test.op, ast.And) == positive  # `a and b` true, `a or b` false
            found = self.test(test.values[0], positive, scope)
            for operand in test.values[1:]:
                found = _combined(found, self.test(operand, positive, scope), both_hold)
            return found
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            return self._comparison(test, positive, scope)
        if isinstance(test, ast.Call):
            return self._helper(test, positive, scope)
        if isinstance(test, ast.Name):  # `NEW_TRANSFORMERS = version.parse(...) >= ...`
            value = self._single_value(test, scope)
            return self.test(value, positive, self._scope(value)) if value is not None else None
        return None

    def is_test(self, test: ast.expr) -> bool:
        """Whether ``test`` tests a library's version (either branch)."""
        return self.test(test, True) is not None

    def _scope(self, node: ast.AST) -> Scope:
        return self.ix.scope_of(node) if id(node) in self.ix.order_of else self.ix.root

    def _comparison(self, test: ast.Compare, positive: bool, scope: Scope) -> Optional[VersionTest]:
        op = _OPS.get(type(test.ops[0]))
        if op is None:
            return None
        left, right = test.left, test.comparators[0]
        dist = self.library_version(left, scope)
        written = self._written(right, scope)
        if dist is None:
            dist, written, op = self.library_version(right, scope), self._written(left, scope), _FLIP[op]
        if dist is None:
            return None
        if not positive:
            op = _NEGATE[op]
        if written is None:
            return VersionTest(dist, None)
        return VersionTest(dist, admitted(dist, op, written, f"{dist}{op}{written}"))

    def _written(self, node: ast.expr, scope: Scope) -> Optional[str]:
        """A version written in the code: ``"4.35"``, ``version.parse("4.35")``."""
        literal = _literal(node)
        if literal is not None:
            return literal
        if isinstance(node, ast.Call) and self.ix.qualify(node.func, scope) in _PARSERS:
            args = positional(node)
            return _literal(args[0]) if args else None
        return None

    def library_version(self, node: ast.expr, scope: Scope, depth: int = 0) -> Optional[str]:
        """The library whose installed version ``node`` is, or None."""
        if depth > 6:
            return None
        if isinstance(node, ast.Attribute):
            if node.attr == "__version__":
                module = self.ix.qualify(node.value, scope)
                return normalize(module.split(".")[0]) if module else None
            if node.attr in ("base_version", "public"):
                return self.library_version(node.value, scope, depth + 1)
            if node.attr == "version" and isinstance(node.value, ast.Call):
                if self.ix.qualify(node.value.func, scope) in _DISTRIBUTION:
                    args = positional(node.value)
                    name = _literal(args[0]) if args else None
                    return normalize(name) if name else None
            return None
        if isinstance(node, ast.Call):
            qual = self.ix.qualify(node.func, scope)
            args = positional(node)
            if qual in _METADATA_VERSION:
                name = _literal(args[0]) if args else None
                return normalize(name) if name else None
            if qual in _PARSERS and args:
                return self.library_version(args[0], scope, depth + 1)
            return None
        if isinstance(node, ast.Name):
            qual = self.ix.qualify(node, scope)
            if qual and qual.endswith(".__version__"):  # `from transformers import __version__`
                return normalize(qual.split(".")[0])
            value = self._single_value(node, scope)
            return self.library_version(value, self._scope(value), depth + 1) if value is not None else None
        return None

    def _single_value(self, node: ast.Name, scope: Scope) -> Optional[ast.expr]:
        owner, bindings = self.ix.bindings_of(node, scope)
        if owner is None or node.id in owner.params or len(bindings) != 1:
            return None
        binding = bindings[0]
        if binding.imported is not None or binding.unpack_index is not None:
            return None
        return binding.value

    # --- helpers ----------------------------------------------------------------------
    def _helper(self, call: ast.Call, positive: bool, scope: Scope) -> Optional[VersionTest]:
        qual = self.ix.qualify(call.func, scope)
        if not qual:
            return None
        literals = [_literal(a) for a in positional(call)]
        known = version_helpers().get(qual)
        if known is not None:
            return _applied(known[0], known[1], literals, positive)
        if qual in self.predicates():
            return _applied(*self.predicates()[qual], literals, positive)
        return None

    def helper_calls(self, test: ast.expr, positive: bool) -> Tuple[HelperCall, ...]:
        """Calls of functions this module does not define or know in ``test`` (``not``,
        ``and``, ``or`` walked): a project helper of another module may be a version test."""
        scope = self._scope(test)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self.helper_calls(test.operand, not positive)
        if isinstance(test, ast.BoolOp):
            return tuple(call for operand in test.values for call in self.helper_calls(operand, positive))
        if isinstance(test, ast.Call):
            qual = self.ix.qualify(test.func, scope)
            if qual and qual not in version_helpers() and qual not in self.predicates() and qual.split(".")[0] not in _NOT_PROJECT:
                return (HelperCall(qual, tuple(_literal(a) for a in positional(test)), positive),)
        return ()

    def predicates(self) -> Dict[str, Tuple]:
        """This module's functions that test a version of their parameters: qualified name ->
        (library, op, where the library and version are among the arguments)."""
        if self._predicates is None:
            self._predicates = {}
            self._predicates = dict(version_predicates(self.ix, self))
        return self._predicates


# top-level modules that are never the project's own (a call of theirs is no project helper)
_NOT_PROJECT = frozenset({"builtins", "torch", "transformers", "trl", "accelerate", "peft", "os", "sys", "importlib", "packaging"})


def _applied(dist: str, op: str, literals: List[Optional[str]], positive: bool) -> Optional[VersionTest]:
    """A helper's test from its literal arguments: (library?) (op?) version."""
    rest = list(literals)
    if not dist:
        if not rest or rest[0] is None:
            return None
        dist = normalize(rest.pop(0))
    if not op:
        if not rest or rest[0] not in _OPS.values():
            return VersionTest(dist, None)
        op = rest.pop(0)
    version = rest[0] if rest else None
    if not positive:
        op = _NEGATE[op]
    return VersionTest(dist, admitted(dist, op, version) if version else None)


def _combined(left: Optional[VersionTest], right: Optional[VersionTest], both_hold: bool) -> Optional[VersionTest]:
    """Two operands' tests joined by ``and``/``or`` (``both_hold``: the branch is the one where
    both hold, ``a and b`` true or ``a or b`` false)."""
    if left is None or right is None:
        found = left or right
        # `version_ok and cuda`: where it holds, the version test holds too
        return found if both_hold or found is None else VersionTest(found.dist, None)
    if left.dist != right.dist:
        return left if both_hold else VersionTest(left.dist, None)
    if left.allowed is None or right.allowed is None:
        return VersionTest(left.dist, (left.allowed or right.allowed) if both_hold else None)
    return VersionTest(left.dist, left.allowed.intersect(right.allowed) if both_hold else left.allowed.hull(right.allowed))


def version_predicates(index: ModuleIndex, tests: Optional[VersionTests] = None) -> Tuple[Tuple[str, Tuple], ...]:
    """Functions of this module that return a version test of their parameters, as
    ``(qualname, (library, op, ...))`` in :func:`_applied`'s terms: the function's positional
    parameters are the library's name (unless fixed), the operator (unless fixed) and the
    version. Two shapes: ``return <test>``, and ``if <test>: return False`` (or True) with the
    other outcome returned after it; a ``return`` in an ``except`` handler (the library is not
    installed) says nothing about versions."""
    tests = tests or VersionTests(index, {})
    out = []
    for qualname, function in index.functions.items():
        node = function.node
        if not isinstance(node, FUNCTION_DEFS):
            continue
        params = [p.name for p in parameters(node) if p.kind == "normal"]  # neither `/`-only nor `*`-only
        found = _predicate(index, tests, function, params)
        if found is not None:
            out.append((qualname, found))
    return tuple(out)


def _predicate(index: ModuleIndex, tests: VersionTests, function: Scope, params: List[str]) -> Optional[Tuple]:
    returns = [(value, guards) for value, guards in function.returns]
    if not returns or len(params) > 3:
        return None
    comparison, holds = None, None
    for value, guards in returns:
        if isinstance(value, ast.Constant) and isinstance(value.value, bool):  # `return True` / `return False`
            version_guards = [(g, p) for g, p in guards if _param_comparison(index, tests, g, function, params)]
            if len(version_guards) > 1:
                return None
            if version_guards:
                g, p = version_guards[0]
                if comparison is not None and comparison is not g:
                    return None
                comparison, holds = g, value.value == p
            continue
        if _param_comparison(index, tests, value, function, params) and comparison is None:
            comparison, holds = value, True
            continue
        return None
    if comparison is None:
        return None
    return _shape(index, tests, comparison, holds, function, params)


def _param_comparison(index: ModuleIndex, tests: VersionTests, node, function: Scope, params) -> bool:
    return isinstance(node, ast.Compare) and _shape(index, tests, node, True, function, params) is not None


def _shape(index: ModuleIndex, tests: VersionTests, node: ast.Compare, holds: bool, function: Scope, params) -> Optional[Tuple]:
    """``(library, op)`` of ``version(<param or "lib">) <op> <param>`` where ``holds`` says the
    function returns True; the parameters' order must be (library, version)."""
    if len(node.ops) != 1:
        return None
    op = _OPS.get(type(node.ops[0]))
    if op is None or op == "!=":
        return None
    left, right = node.left, node.comparators[0]
    dist = _param_library(index, tests, left, function, params)
    version = _param_version(index, right, function, params)
    if dist is None or version is None:
        dist, version, op = _param_library(index, tests, right, function, params), _param_version(index, left, function, params), _FLIP[op]
    if dist is None or version is None:
        return None
    if not holds:
        op = _NEGATE[op]
    if dist == "<param>":  # (library, version)
        return ("", op) if len(params) >= 2 and params[1] == version else None
    return (dist, op) if params and params[0] == version else None  # (version)


def _param_version(index: ModuleIndex, node, function: Scope, params) -> Optional[str]:
    """The parameter ``node`` is (or one of the parsers applied to it)."""
    if isinstance(node, ast.Call) and index.qualify(node.func, function) in _PARSERS and positional(node):
        node = positional(node)[0]
    if isinstance(node, ast.Name) and node.id in params:
        return node.id
    return None


def _param_library(index: ModuleIndex, tests: VersionTests, node, function: Scope, params) -> Optional[str]:
    """``"<param>"`` where ``node`` is the installed version of the library a parameter names
    (``Version(metadata.version(name))``, ``pkg_resources.get_distribution(name).version``, or a
    local bound to one of them), the
    library where it names one, else None."""
    if isinstance(node, ast.Call) and index.qualify(node.func, function) in _PARSERS and positional(node):
        node = positional(node)[0]
    if isinstance(node, ast.Name) and node.id not in params:
        value = tests._single_value(node, function)
        if value is None:
            return None
        node = value
    if isinstance(node, ast.Call) and index.qualify(node.func, function) in _METADATA_VERSION and positional(node):
        arg = positional(node)[0]
        if isinstance(arg, ast.Name) and arg.id == params[0]:
            return "<param>"
    if isinstance(node, ast.Attribute) and node.attr == "version":  # pkg_resources.get_distribution(name).version
        call = node.value.value if isinstance(node.value, ast.Subscript) else node.value  # `require(name)[0]`
        if isinstance(call, ast.Call) and index.qualify(call.func, function) in _DISTRIBUTION and positional(call):
            arg = positional(call)[0]
            if isinstance(arg, ast.Name) and arg.id == params[0]:
                return "<param>"
    found = tests.library_version(node, function)
    return found


def version_tests_of(index: ModuleIndex) -> VersionTests:
    """The module's :class:`VersionTests`, made once per index and kept on it. (A weak-keyed
    table kept them before: each ``VersionTests`` holds its index, so no index was ever freed,
    and a worker process that read 1,000 files held every tree it had read: 3.6 GB on
    diffusers.)"""
    found = index._version_tests
    if found is None:
        found = index._version_tests = VersionTests(index)
    return found
