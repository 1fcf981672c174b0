"""Facts about ``tokenizer`` reaching Trainer-like constructors (read by MP301).

Recorded per file, unjudged: every call that receives a ``tokenizer`` keyword
(directly or through a ``**dict`` splat), ``super().__init__(..., tokenizer=...)``
inside a class, and ``.tokenizer`` attribute uses with what their receiver is.
Whether the callee really is a Trainer is decided later, with the whole
project's class hierarchy.
"""
from __future__ import annotations

from ..._dataclass import dataclass
from typing import Optional, Tuple

import ast

from ...diagnostics import Span
from ...semantic.callees import assigned_callees, is_super_init, star_imported_callee
from ...semantic.evaluate import Evaluator
from ...semantic.index import ModuleIndex
from .precision import key_span, key_text
from .tolerance import CALL_FAILURES, attr_tolerated, call_tolerated, handler_caught

SECTION = "trainer"
KEY = "tokenizer"


@dataclass(frozen=True)
class KeywordUse:
    """A ``tokenizer`` keyword passed to a call (directly, or as a key of a splatted dict):
    what MP301's fix renames to ``processing_class``."""

    key_span: Span  # what names the keyword: the name of `tokenizer=`, or a dict's string key
    key_text: str  # its source text (e.g. `tokenizer` or `'tokenizer'`)
    via: str  # "keyword", "dict-call", "dict-literal"
    value_text: str
    from_processor: bool  # value is `<processor>.tokenizer` of a multimodal processor


@dataclass(frozen=True)
class TokenizerCall:
    """A call that receives ``tokenizer``: whether it is a Trainer, which renamed the keyword
    to ``processing_class``, is decided at the join with the project's classes."""

    callee: Optional[str]  # resolved qualname; "super" for super().__init__
    klass: Optional[str]  # enclosing class (for super().__init__)
    span: Span
    uses: Tuple[KeywordUse, ...]
    keywords: Tuple[str, ...]  # every keyword the call receives (splats included)
    tolerated: bool = False  # under a version or signature check, or where a TypeError is caught


@dataclass(frozen=True)
class TokenizerAttr:
    """``x.tokenizer``: renamed when ``x`` is a Trainer (``self`` in a subclass, or a variable)."""

    name_span: Span  # the `tokenizer` name after the dot
    receiver: str  # "self" or "name"
    klass: Optional[str]  # enclosing class when receiver is self
    sources: Tuple[str, ...]  # qualnames of the calls the receiver variable was assigned from
    tolerated: bool = False  # under a version / signature / hasattr check, or AttributeError caught


def _from_processor(index: ModuleIndex, evaluator: Evaluator, value: ast.expr, scope) -> bool:
    """``x.tokenizer`` where ``x`` holds what a processor class builds (``AutoProcessor.
    from_pretrained(...)``, a ``*Processor``): known from the calls that reach ``x``, never
    from how the variable is named."""
    if not (isinstance(value, ast.Attribute) and value.attr == "tokenizer"):
        return False
    base = value.value
    if isinstance(base, ast.Name):
        return any("Processor" in q for q in assigned_callees(index, base, scope))
    return False


def extract(index: ModuleIndex, evaluator: Evaluator):
    calls = []
    for site in index.calls:
        node = site.node
        every = evaluator.kwarg_sources(node, site.scope)
        sources = [s for s in every if s.name == KEY]
        if not sources:
            continue
        callee = "super" if is_super_init(site) else site.qualname or star_imported_callee(index, site)
        if callee is None:
            continue
        uses = tuple(
            KeywordUse(
                key_span(index, s.key),
                key_text(index, s.key),
                s.via,
                index.text(s.value),
                _from_processor(index, evaluator, s.value, site.scope),
            )
            for s in sources
        )
        keywords = tuple(sorted({s.name for s in every}))
        caught = handler_caught(index, site, {s.name for s in sources if s.via == "keyword"})
        tolerated = call_tolerated(index, site, sources, CALL_FAILURES, caught)
        calls.append(TokenizerCall(callee, site.klass, index.span(node), uses, keywords, tolerated))
    attrs = []
    for use in index.attr_uses:
        if use.attr != KEY:
            continue
        if isinstance(use.node.ctx, ast.Store):
            # `trainer.tokenizer = tok` looks nothing up: no AttributeError on 5.x (a plain
            # attribute there; a store into `self` makes the class declare it: see MP301)
            continue
        if isinstance(use.base, ast.Name) and use.base.id == "self":
            attrs.append(TokenizerAttr(index.name_span(use.node), "self", use.klass, (), attr_tolerated(index, use)))
        elif isinstance(use.base, ast.Name):
            sources = assigned_callees(index, use.base, use.scope)
            if sources:
                attrs.append(TokenizerAttr(index.name_span(use.node), "name", use.klass, sources, attr_tolerated(index, use)))
    return {"calls": tuple(calls), "attrs": tuple(attrs)}
