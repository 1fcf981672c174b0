"""Facts about the deprecated ``torch.cuda.amp`` API (read by MP303).

Recorded per file, unjudged: every call of ``torch.cuda.amp.GradScaler`` /
``autocast`` / ``custom_fwd`` / ``custom_bwd`` and every bare decorator
``@torch.cuda.amp.custom_fwd`` — reached through ``torch``, a module alias
(``from torch.cuda import amp``, ``import torch.cuda.amp as amp``) or a name
imported from ``torch.cuda.amp`` — with what a rewrite to ``torch.amp`` needs:
the callee's text, where the arguments start, which arguments are positional;
and the import statements that bind names to ``torch.cuda.amp``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple

import libcst as cst

from ...diagnostics import Span
from ...semantic.evaluate import Evaluator
from ...semantic.index import ModuleIndex
from ...semantic.names import dotted

SECTION = "cuda_amp"
EMPTY = {"uses": (), "imports": ()}

OLD = "torch.cuda.amp"
NAMES = ("GradScaler", "autocast", "custom_fwd", "custom_bwd")


@dataclass(frozen=True)
class AmpUse:
    """One use of a deprecated ``torch.cuda.amp`` callable."""

    name: str  # GradScaler, autocast, custom_fwd, custom_bwd
    func_span: Span  # the callee expression (`torch.cuda.amp.GradScaler`, `amp.autocast`, `GradScaler`)
    func_text: str
    head: str  # the first name of the callee expression (`torch`, `amp`, `GradScaler`)
    head_binds: str  # what that name is bound to (`torch`, `torch.cuda`, `torch.cuda.amp`, `torch.cuda.amp.X`)
    is_call: bool  # False: a bare decorator `@torch.cuda.amp.custom_fwd`
    open_paren: int  # offset just after `(` (calls only)
    # (start offset, keyword or None, end offset) for each argument, in order; keyword "*" / "**" for splats
    args: Tuple[Tuple[int, Optional[str], int], ...] = ()
    # the use sits in a branch chosen by the torch version or by what torch has
    # (`if is_torch_version(">=", "2.3"): torch.amp... else: torch.cuda.amp...`): compatibility code
    version_gated: bool = False


@dataclass(frozen=True)
class AmpImport:
    """An import statement that binds names to ``torch.cuda.amp`` or something inside it."""

    module_span: Optional[Span]  # `torch.cuda.amp` in `from torch.cuda.amp import ...` (or `torch.cuda`)
    module_text: str
    kind: str  # "from" or "import"
    # (local name, qualified name) it binds
    bindings: Tuple[Tuple[str, str], ...]
    alias_spans: Tuple[Span, ...] = ()  # `import torch.cuda.amp as amp`: the dotted name `torch.cuda.amp`
    text: str = ""  # the whole statement


def _target(qualname: Optional[str]) -> Optional[str]:
    if not qualname or not qualname.startswith(OLD + "."):
        return None
    rest = qualname[len(OLD) + 1 :]
    # `torch.cuda.amp.autocast_mode.autocast` is the same object
    last = rest.rsplit(".", 1)[-1]
    return last if last in NAMES else None


_VERSION_TEST = re.compile(r"version|hasattr\(\s*torch|TORCH_\w*\d", re.IGNORECASE)


def _version_gated(index: ModuleIndex, guards) -> bool:
    return any(_VERSION_TEST.search(index.text(test)) for test, _ in guards)


def _head_binding(index: ModuleIndex, expr: cst.BaseExpression, scope) -> Tuple[str, str]:
    text = dotted(expr) or ""
    head = text.partition(".")[0]
    bound = index.resolve_name(head, scope, index.order_of.get(id(expr), (None,))[0], 0) or ""
    return head, bound


def _args(index: ModuleIndex, call: cst.Call) -> Tuple[Tuple[int, Optional[str], int], ...]:
    out = []
    for arg in call.args:
        span = index.span(arg.value)
        if arg.star:
            start = span.start - len(arg.star)
            out.append((start, arg.star, span.end))
        elif arg.keyword is not None:
            out.append((index.span(arg.keyword).start, arg.keyword.value, span.end))
        else:
            out.append((span.start, None, span.end))
    return tuple(out)


def extract(index: ModuleIndex, evaluator: Evaluator):
    uses = []
    for site in index.calls:
        name = _target(site.qualname)
        if name is None or dotted(site.node.func) is None:
            continue
        func_span = index.span(site.node.func)
        paren = index.source.index("(", func_span.end) + 1
        head, bound = _head_binding(index, site.node.func, site.scope)
        uses.append(
            AmpUse(name, func_span, index.text(site.node.func), head, bound, True, paren, _args(index, site.node),
                   _version_gated(index, site.guards))
        )
    for scope in index.functions.values():
        outer = scope.parent or index.root
        for decorator in scope.node.decorators:
            expr = decorator.decorator
            if not isinstance(expr, (cst.Name, cst.Attribute)):
                continue  # calls were recorded above
            name = _target(index.qualify(expr, outer))
            if name is None:
                continue
            head, bound = _head_binding(index, expr, outer)
            uses.append(AmpUse(name, index.span(expr), index.text(expr), head, bound, False, -1))
    imports = []
    for node in index.import_statements:
        if isinstance(node, cst.ImportFrom):
            if node.relative or isinstance(node.names, cst.ImportStar) or node.module is None:
                continue
            module = dotted(node.module) or ""
            if module not in (OLD, "torch.cuda") and not module.startswith(OLD + "."):
                continue
            bindings = tuple(
                (a.asname.name.value if a.asname is not None else (dotted(a.name) or ""), f"{module}.{dotted(a.name)}")
                for a in node.names
            )
            if not any(full == OLD or full.startswith(OLD + ".") for _, full in bindings):
                continue
            imports.append(AmpImport(index.span(node.module), module, "from", bindings, (), index.text(node)))
        else:
            for alias in node.names:
                full = dotted(alias.name) or ""
                if alias.asname is not None and (full == OLD or full.startswith(OLD + ".")):
                    imports.append(
                        AmpImport(
                            None, full, "import", ((alias.asname.name.value, full),), (index.span(alias.name),),
                            index.text(node),
                        )
                    )
    uses.sort(key=lambda u: u.func_span.start)
    return {"uses": tuple(uses), "imports": tuple(imports)}
