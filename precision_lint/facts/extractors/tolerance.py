"""Whether code is written to survive a failure it may meet on another library version.

A renamed keyword or a removed attribute is no bug in code that expects the failure: a call
inside a ``try`` whose handlers catch the error (``TypeError`` for a keyword, ``AttributeError``
for an attribute, ``ImportError`` for an import), a use in an ``except`` block (a fallback), a
branch of a version check (``if transformers.__version__ >= ...``, ``is_transformers_version``:
read by what it compares, ``semantic/version_tests.py``), of a signature check (``if
"processing_class" in inspect.signature(Trainer).parameters``) or of a ``hasattr`` check of the
name or its replacement. Read by the migration and trainer extractors alike. A keyword that only
warns raises nothing: a ``try`` around it changes nothing (``MigrationCall.warning_tolerated``
counts the checks and the handlers only).
"""
from __future__ import annotations

import ast
from functools import lru_cache
from typing import Dict, FrozenSet, List, Optional, Tuple


from ...knowledge import migrations
from ...semantic.index import ModuleIndex, names_read
from ...semantic.names import dotted
from ...semantic.queries import reaching, reaching_values
from ...semantic.version_tests import version_tests_of
from ..._regex import lazy

# The exceptions whose handler expects each kind of failure (a try whose handler catches one of them).
IMPORT_FAILURES = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError", "Exception", "BaseException", "*", "<handler>"})
CALL_FAILURES = frozenset({"TypeError", "Exception", "BaseException", "*", "<handler>"})
ATTR_FAILURES = frozenset({"AttributeError", "Exception", "BaseException", "*", "<handler>"})
SIGNATURE_CHECK = lazy(r"\b(?:signature|getfullargspec|getargspec|co_varnames|__dataclass_fields__)\b|\.parameters\b")
# an attribute read under `hasattr(x, "processing_class")` / `hasattr(x, "tokenizer")`
HASATTR = lazy(r"\bhasattr\s*\(")


def tolerates(index: ModuleIndex, guards, caught, failures, names=(), keywords=None) -> bool:
    """Whether a use under ``guards`` (tests, each with its polarity) and inside handlers of
    ``caught`` survives one of ``failures``. ``names``: for an attribute, a ``hasattr`` check
    of one of them (the name or what replaced it) is a guard as well. A version check is one
    by what it compares (``semantic/version_tests.py``), never by the word "version".
    ``keywords``: for a call, the keywords judged and the names they were renamed from or to; a
    signature check that names parameters guards the call only where it names one of them
    (review 30a: ``if "completion_only_loss" not in inspect.signature(SFTConfig.__init__)
    .parameters: sys.exit(...)`` asks for a newer TRL, and says nothing of ``warmup_ratio``)."""
    if failures.intersection(caught):
        return True
    tests = version_tests_of(index)
    for test, positive in guards:
        text = index.text(test)
        if tests.test(test, positive) is not None:
            return True
        if _signature_check(index, test, text) and _names_any(test, keywords):
            return True
        if _import_probe_fallback(index, test, positive):
            return True
        if names and HASATTR().search(text) and any(f"'{n}'" in text or f'"{n}"' in text for n in names):
            return True
    return False


def _signature_check(index: ModuleIndex, test, text: str) -> bool:
    """Whether the test (``text``: its source) reads a callable's signature, inline or through
    a variable bound to one."""
    return bool(SIGNATURE_CHECK().search(text)) or _reads_a_signature(index, test)


def _names_any(test, keywords) -> bool:
    """Whether a signature check may speak of ``keywords`` (None: of anything): it names none
    of the parameters it tests (``len(params) > 3``), or one of them."""
    if keywords is None:
        return True
    quoted = {n.value for n in ast.walk(test) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return not quoted or bool(quoted & keywords)


def related_keywords(names) -> frozenset:
    """``names`` and the names the migration table renames them from or to
    (``tokenizer`` / ``processing_class``)."""
    renames = _keyword_renames()
    return frozenset(n for name in names for n in (name, *renames.get(name, ())))


@lru_cache(maxsize=None)
def _keyword_renames() -> Dict[str, FrozenSet[str]]:
    """Each keyword the migration table renames, and each new name, to the other side of its
    renames: read once, not once per call judged."""
    out: Dict[str, set] = {}
    for m in migrations():
        if m.kind == "keyword" and m.rename_to:
            out.setdefault(m.name, set()).add(m.rename_to)
            out.setdefault(m.rename_to, set()).add(m.name)
    return {name: frozenset(others) for name, others in out.items()}


def _import_probe_fallback(index: ModuleIndex, test, positive: bool) -> bool:
    """Whether the branch ``positive`` of the test is the fallback of an import check: the test
    reads a flag bound to a bool in the body of a ``try`` that imports (``from trl import
    SFTConfig; HAVE_CFG = True``) whose handler catches the import's failure (``except
    ImportError: HAVE_CFG = False``), every binding that reaches the test a bool literal, and the
    branch runs where the flag is not what the ``try`` set: only where the import fails, on
    versions the code is written to survive (review 30a: removed ``SFTTrainer`` keywords in the
    branch for a TRL without ``SFTConfig``, under a pin that has it). The other branch runs on
    the versions that have the name, and is judged as any code is."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    node = test.operand if negated else test
    if not isinstance(node, ast.Name):
        return False
    bound_in, bindings = reaching(index, node, index.scope_of(test))
    if bound_in is None or not bindings:
        return False
    if not all(isinstance(b.value, ast.Constant) and isinstance(b.value.value, bool) for b in bindings):
        return False
    probes = [t for t in index.tries_in(bound_in) if _probes_an_import(t)]
    imported = {b.value.value for b in bindings for t in probes if _within(b.statement, t.body)}
    return len(imported) == 1 and (positive != negated) not in imported


def _probes_an_import(node: ast.Try) -> bool:
    """A ``try`` whose body imports and whose handlers catch the import's failure."""
    imports = any(isinstance(n, (ast.Import, ast.ImportFrom)) for stmt in node.body for n in ast.walk(stmt))
    return imports and bool(IMPORT_FAILURES.intersection(_caught_by(node)))


def _caught_by(node: ast.Try) -> Tuple[str, ...]:
    """The exception names a ``try``'s handlers catch (last component; "*" for ``except:``)."""
    return tuple(name for handler in node.handlers for name in _handler_types(handler))


def _handler_types(handler: ast.ExceptHandler) -> List[str]:
    """The exception names one handler catches (last component; "*" for ``except:`` or a name
    not written out)."""
    if handler.type is None:
        return ["*"]
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return [(dotted(t) or "*").rsplit(".", 1)[-1] for t in types]


def _within(statement: ast.AST, body) -> bool:
    """Whether ``statement`` is written in the statements ``body`` (at any depth)."""
    return any(statement is n for stmt in body for n in ast.walk(stmt))


def _reads_a_signature(index: ModuleIndex, test) -> bool:
    """Whether the test reads a variable bound to a signature's parameters (``params =
    inspect.signature(Trainer.__init__).parameters`` ... ``if "processing_class" in params:``)."""
    names = names_read(test)
    if not names:
        return False
    scope = index.scope_of(test)
    return any(SIGNATURE_CHECK().search(index.text(value)) for name in names for value in reaching_values(index, name, scope))


def handler_caught(index: ModuleIndex, site, names) -> Tuple[str, ...]:
    """What is caught around ``site``, less the mark of an ``except`` block (``"<handler>"``)
    where that block calls the same callable with one of the same keywords ``names`` as its
    ``try`` did: a retry of the same call (``except Exception:`` loading again without
    ``attn_implementation=``), not a fallback written for another version; and less what each
    ``try`` around it catches with a handler that catches any error and does not carry on the
    call's work (:func:`_falls_back`): the call's failure is then swallowed, not expected."""
    caught = site.caught
    if "<handler>" in caught and names and _retries(index, site, names):
        caught = tuple(c for c in caught if c != "<handler>")
    swallowed = [
        name for tried in _enclosing_tries(index, site) for handler in tried.handlers
        if not _falls_back(index, handler, tried, site) for name in _handler_types(handler)
    ]
    if not swallowed:
        return caught
    kept = []
    for name in caught:
        if name in swallowed:
            swallowed.remove(name)  # one handler's name, once: another try's catch of it is kept
            continue
        kept.append(name)
    return tuple(kept)


_ANY_ERROR = frozenset({"Exception", "BaseException", "*"})
# builtins that build a record, not the call's object (``trainer = dict(status="failed")``)
_RECORDS = frozenset({"dict", "list", "tuple", "set", "str", "repr", "format"})


def _falls_back(index: ModuleIndex, handler: ast.ExceptHandler, tried: ast.Try, site) -> bool:
    """Whether a handler of ``tried`` (whose body holds the call ``site``) is a fallback for
    the call's failure. One that names the error a version raises (``except TypeError:``)
    expects it. One that catches any error (``except Exception:``, a bare ``except:``) expects
    it where it carries on the call's work another way (it calls the same callable again,
    ``Trainer(..., processing_class=tok)``; binds what the call's statement binds to another
    call's result, ``trainer = build_legacy_trainer()``; returns another call's result; or
    chooses by a version or signature test), where it stops with an error of its own (the
    author's message for the versions it does not run on), or where it falls through to the
    code after the ``try`` (an optional step skipped; a name it leaves unbound is
    ``CallSite.caught``'s business). One that leaves with nothing of the work (``return``,
    ``continue``, ``break``) swallows the failure and abandons what the ``try`` was for:
    held-out 30u's evaluation loader with ``load_in_4bit=`` returning ``None`` on transformers
    5; held-out 31u's runner whose every experiment was written out ``{"status": "failed",
    "error": str(e)}`` at ``Trainer(tokenizer=...)``, the handler cleaning up and saving the
    record first."""
    if not all(name in _ANY_ERROR for name in _handler_types(handler)) or not handler.body:
        return True
    last = handler.body[-1]
    if isinstance(last, ast.Raise):
        return last.exc is not None  # an error of its own (``raise SystemExit("use transformers<5")``)
    if not isinstance(last, (ast.Return, ast.Continue, ast.Break)):
        return True
    if isinstance(last, ast.Return) and isinstance(last.value, ast.Call) and dotted(last.value.func) not in _RECORDS:
        return True
    callee = _callee_name(site.qualname, site.node)
    bound = set(site.assigned_to) or _bound_by(site.statement)
    tests = version_tests_of(index)
    for node in (n for stmt in handler.body for n in ast.walk(stmt)):
        if isinstance(node, ast.Call) and callee and _callee_name(None, node) == callee:
            return True
        rebinds = isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call) and bound & _bound_by(node)
        if rebinds and dotted(node.value.func) not in _RECORDS:
            return True
        chooses = isinstance(node, (ast.If, ast.IfExp)) and (
            tests.test(node.test, True) is not None or _signature_check(index, node.test, index.text(node.test))
        )
        if chooses:
            return True
    return False


def _callee_name(qualname: Optional[str], call: ast.Call) -> Optional[str]:
    """The last component of what a call calls (``Trainer``, ``from_pretrained``): the same
    callable whether imported or reached through its module, and any class's loader."""
    name = qualname or dotted(call.func)
    return name.rsplit(".", 1)[-1] if name else None


def _bound_by(statement: Optional[ast.AST]) -> set:
    """The plain names an assignment statement binds (``a = b = ...``, ``a, b = ...``)."""
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AnnAssign):
        targets = [statement.target]
    else:
        return set()
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def handler_of_a_version_test(index: ModuleIndex, statement: ast.AST) -> bool:
    """Whether ``statement`` is written in an ``except`` block of a ``try`` whose body chooses
    by a version or signature test (``if "processing_class" in inspect.signature(...)
    .parameters: ... else: ...``): the handler is the same choice for a version the test could
    not read (held-out 31u: ``kwargs["tokenizer"] = tok`` under ``except Exception:``)."""
    tests = version_tests_of(index)
    for node in index.tries_in(index.scope_of(statement).code_scope()):
        if not any(_within(statement, h.body) for h in node.handlers):
            continue
        for inner in (n for stmt in node.body for n in ast.walk(stmt)):
            if isinstance(inner, (ast.If, ast.IfExp)):
                if tests.test(inner.test, True) is not None or _signature_check(index, inner.test, index.text(inner.test)):
                    return True
    return False


def _enclosing_tries(index: ModuleIndex, site) -> List[ast.Try]:
    """The ``try`` statements of the call's scope whose body (not a handler) holds the call."""
    node = site.node
    return [
        t for t in index.tries_in(site.scope.code_scope())
        if t.body and t.body[0].lineno <= node.lineno and node.end_lineno <= t.body[-1].end_lineno
    ]


def _retries(index: ModuleIndex, site, names) -> bool:
    node = site.node
    handlers = [
        (h, t) for t in index.tries_in(site.scope.code_scope()) for h in t.handlers
        if h.lineno <= node.lineno and node.end_lineno <= h.end_lineno
    ]
    if not handlers:
        return False
    _, tried = max(handlers, key=lambda pair: pair[0].lineno)  # the innermost
    first, last = tried.body[0].lineno, tried.body[-1].end_lineno
    return any(
        other.node is not node and first <= other.node.lineno <= last
        and (other.qualname or dotted(other.node.func)) == (site.qualname or dotted(node.func))
        and any(k.arg in names for k in other.node.keywords)
        for other in index.calls
    )


def call_tolerated(index: ModuleIndex, site, sources, failures, caught=None) -> bool:
    """Whether a call survives ``failures`` of the keywords ``sources`` (``KwargSource``) give
    it: the call itself is written for several versions (:func:`tolerates`), or each of those
    keywords is put in its dict only under a check of its own (``if "processing_class" in
    inspect.signature(Trainer.__init__).parameters: kwargs["processing_class"] = tok`` /
    ``else: kwargs["tokenizer"] = tok``): the old name is then passed only where it is taken.
    ``caught``: what is caught around it, where not ``site.caught`` (:func:`handler_caught`)."""
    keywords = related_keywords(s.name for s in sources) if sources else None
    if tolerates(index, site.guards, site.caught if caught is None else caught, failures, keywords=keywords):
        return True
    return bool(sources) and all(source_tolerated(index, s, failures) for s in sources)


def source_tolerated(index: ModuleIndex, source, failures) -> bool:
    """Whether a keyword's source (``KwargSource``) is put in its dict only under a check of its
    own (a version or signature test around ``kwargs["tokenizer"] = tok``), or the dict it is in
    is bound under one (``else: kw = dict(tokenizer=tok)`` of ``if HAVE_CFG:``)."""
    guards = tuple(source.guards) + tuple(source.bound_under)
    if guards and tolerates(index, guards, (), failures, keywords=related_keywords((source.name,))):
        return True
    return source.via == "item-assign" and source.arg is not None and handler_of_a_version_test(index, source.arg)


def attr_tolerated(index: ModuleIndex, use) -> bool:
    """Whether an attribute read is written for several versions: under a version, signature
    or ``hasattr`` check (an ``if`` or ``a if test else b``), or where AttributeError is caught."""
    names = {use.attr} | {m.rename_to for m in migrations() if m.kind == "attribute" and m.name == use.attr and m.rename_to}
    return tolerates(index, use.guards, use.caught, ATTR_FAILURES, names)
