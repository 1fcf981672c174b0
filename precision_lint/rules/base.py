"""The rule interface.

A rule is a small class that *judges* facts: it reads the :class:`ModuleFacts`
of the file being checked (and, through the :class:`Project`, the facts of the
files joined with it) and yields diagnostics, each with an optional fix. Rules
never parse or walk source code themselves.
"""
from __future__ import annotations

import dataclasses
from dataclasses import field
from .._dataclass import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ..workspace.config import Config, ConfigError
from ..diagnostics import SAFE, Diagnostic, Edit, Fix, Related, Span
from ..facts.model import ModuleFacts
from ..workspace.notebook import cell_references, is_notebook
from .._regex import lazy
from ..knowledge import removed_import

if TYPE_CHECKING:  # pragma: no cover - the join is imported only when something is judged
    from ..project.model import Project
    from ..workspace.versions import Targets


@dataclass(frozen=True)
class Option:
    """A setting a rule reads from ``[tool.precision-lint.rules.<code>]``, with its default,
    type and allowed values: a configuration is checked against it, so a typo is an error,
    never a silently ignored key."""

    default: Any
    choices: Optional[Tuple[Any, ...]] = None
    kind: type = str
    doc: str = ""

    def validate(self, code: str, name: str, value: Any) -> Any:
        if self.kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, self.kind) or (self.kind is int and isinstance(value, bool)):
            raise ConfigError(f"rules.{code}.{name} must be a {self.kind.__name__}, not {value!r}")
        if self.choices is not None and value not in self.choices:
            raise ConfigError(
                f"rules.{code}.{name} must be one of {', '.join(map(str, self.choices))}, not {value!r}"
            )
        return value


class Rule:
    code: str = ""
    name: str = ""
    summary: str = ""
    # "always", "sometimes" or "never": whether findings come with a fix.
    fix_availability: str = "never"
    fix_applicability: str = SAFE
    options: Dict[str, Option] = {}
    # Judges files that were not parsed (MP000, MP001); every other rule needs a parsed module.
    judges_unparsed: bool = False
    # Judged once every other rule has judged every module (MP002: the config files the others
    # could not read are known only then).
    after_others: bool = False
    # Reported whatever --select/--ignore, per-file-ignores or ``# noqa`` say (MP003: a file an
    # internal error stopped was not checked, and that is never a pass).
    always: bool = False

    def check(self, ctx: "RuleContext") -> Iterable[Diagnostic]:
        raise NotImplementedError

    @classmethod
    def resolve_options(cls, config: Config) -> Dict[str, Any]:
        given = config.options_for(cls.code)
        unknown = sorted(set(given) - set(cls.options))
        if unknown:
            known = ", ".join(sorted(cls.options)) or "none"
            raise ConfigError(f"unknown option(s) {', '.join(unknown)} for {cls.code} (known: {known})")
        return {
            name: opt.validate(cls.code, name, given[name]) if name in given else opt.default
            for name, opt in cls.options.items()
        }


class TextReads:
    """What the rules of a run read of each file's text besides its facts: the whole text
    (``ctx.source``), or the ranges they took (``ctx.text(span)``). A later run whose file
    changed gives the same findings when its facts are the same and every range read holds
    the same text (``workspace/ledger.py``); a file nothing read the text of needs its facts
    alone."""

    WHOLE = None

    def __init__(self) -> None:
        # path → None (the whole text) or the (start, end) ranges read
        self.by_path: Dict[str, Optional[set]] = {}

    def whole(self, path: str) -> None:
        self.by_path[path] = self.WHOLE

    def span(self, path: str, start: int, end: int) -> None:
        found = self.by_path.setdefault(path, set())
        if found is not self.WHOLE:
            found.add((start, end))


@dataclass
class RuleContext:
    """What a rule judges one file with: its facts and text, the project they were joined
    with, the configuration and the rule's options; and the runs whose judging failed, which the
    engine reports as MP003 without losing the other runs' findings."""

    facts: ModuleFacts
    file_text: str  # read through ``source`` and ``text``, which note what was read (``reads``)
    project: Project
    config: Config
    options: Dict[str, Any] = field(default_factory=dict)
    # (what failed, the exception) for each run whose judging raised (a bug of ours, see
    # :meth:`each_run`): the engine reports each as MP003; the other runs' findings stand
    failures: List[Tuple[str, Exception]] = field(default_factory=list)
    reads: Optional[TextReads] = None

    @property
    def source(self) -> str:
        """The file's whole text: a finding that reads it may change with any edit of it."""
        if self.reads is not None:
            self.reads.whole(self.facts.path)
        return self.file_text

    @property
    def path(self) -> str:
        return self.facts.path

    def each_run(self, entries: Iterable["ModuleFacts"], judge: Callable[["ModuleFacts"], None]) -> None:
        """``judge(entry)`` for the run of each entry. One that raises is recorded in
        :attr:`failures` (the engine reports it as MP003, naming the run) and the other runs are
        still judged: a bug met in one run never drops the findings of the others."""
        for entry in entries:
            try:
                judge(entry)
            except Exception as exc:
                name = entry.path.replace("\\", "/").rsplit("/", 1)[-1]
                self.failures.append((f"the run of {name}", exc))

    def text(self, span: Span) -> str:
        if self.reads is not None:
            self.reads.span(self.facts.path, span.start, span.end)
        return self.file_text[span.start : span.end]

    @property
    def library_code(self):
        """The library this file is part of (``Targets.library_code``), asked without the
        versions: whether a row about a library's API judges the library's own code is asked of
        every module with a migrated name, and the versions of few of them."""
        return self.project.versions.library_code(self.facts.path)

    @property
    def targets(self) -> "Targets":
        """The library versions this file targets (``versions.py``): configuration, the file's
        own ``require_version`` / ``%pip install``, its project's requirements, else installed."""
        return self.project.targets_of(self.facts)

    def never_imported(self, qualname: str) -> bool:
        """Whether the import of the library class ``qualname`` fails on every version this file
        targets (``trl.PPOTrainer``, gone from ``trl`` in 0.29, for unpinned TRL): a call of it
        never runs, and what MP302 says of its import is the finding, not what its keywords or
        defaults would do on versions that have it."""
        row = removed_import(qualname)
        return row is not None and self.targets.of(row.library).every_at_least(row.removed_in)

    def diagnostic(
        self,
        code: str,
        span: Span,
        message: str,
        fix: Optional[Fix] = None,
        related: Sequence[Related] = (),
        noqa_line: Optional[int] = None,
        path: Optional[str] = None,
    ) -> Diagnostic:
        """A finding of this file; ``path``: of another file it reads (a configuration file's
        key), whose own position ``span`` is (its message is this file's to word)."""
        if is_notebook(self.path):  # "(line 7)" of the joined cells → "(cell 3, line 1)", as positions are shown
            message = cell_references(message, self.source)
            related = [
                dataclasses.replace(r, message=cell_references(r.message, self.source)) if r.path == self.path else r
                for r in related
            ]
        # one place once, however many paths of values lead to it
        related = tuple(dict.fromkeys(related))
        return Diagnostic(code, message, path or self.path, span, fix, related, noqa_line)


_DEF_HEAD = lazy(r"(?:^|[\s;:])(?:async\s+)?def\s+\w+\s*(?:\[[^\]]*\])?\s*$")


# Lightning's `precision=` values that run fp16 autocast with a GradScaler (MP101's loss
# scaling, MP201's fp16-only training)
LIGHTNING_FP16 = (16, "16", "16-mixed")


def is_parameter_default(source: str, span: Span) -> bool:
    """Whether ``source[span]`` is a default value in a ``def`` line (``def load(dtype=torch.bfloat16)``).

    A fix never rewrites one: the default is evaluated once, when the module is imported, so a
    capability probe there runs at import time (it initialises CUDA, and ``notebook_launcher``
    and forked data-loader workers then refuse to start) and its value is frozen in whichever
    process imported first; and every caller that relies on the default changes with it.
    """
    before = source[: span.start].rstrip()
    if not before.endswith("=") or before.endswith(("==", "!=", "<=", ">=")):
        return False
    depth = 0
    for i in range(len(before) - 1, -1, -1):  # back to the bracket the default is inside
        c = before[i]
        if c in ")]}":
            depth += 1
        elif c in "([{":
            if depth == 0:
                return c == "(" and bool(_DEF_HEAD().search(before[:i]))
            depth -= 1
    return False


def default_note(ctx: "RuleContext", atoms) -> str:
    """Why a finding has no fix when its value is a parameter's default: appended to its message."""
    for atom in atoms:
        origin = getattr(atom, "origin", None)
        if origin is not None and not getattr(atom, "where", "") and is_parameter_default(ctx.source, origin):
            return (
                f" (no automatic fix: `{ctx.text(origin)}` is a default argument, evaluated at import and shared by "
                "every caller; choose the value where the function is called)"
            )
    return ""


def base_dtype_adapters(ctx: "RuleContext"):
    """The peft versions the file targets when every one of them makes LoRA adapters in the
    base layer's dtype (``knowledge/libraries.toml`` ``[adapter_dtype]``: 0.7 up to 0.12), else
    None (an unpinned project targets the installed peft; a range that allows 0.12 or 0.6 may
    upcast them): a float16 model's ``get_peft_model`` then trains float16 adapters."""
    from ..knowledge import adapter_dtype

    table = adapter_dtype()
    allowed = ctx.targets.of(table.library)
    if allowed.newest or not allowed.every_at_least(table.since) or allowed.some_at_least(table.until):
        return None
    return allowed


def base_dtype_note(pin) -> str:
    """What a message says of :func:`base_dtype_adapters`' versions."""
    from ..knowledge import adapter_dtype
    from ..workspace.versions import version_text

    table = adapter_dtype()
    return (
        f"{pin.described} ({pin.note or pin.source}) makes LoRA adapters in the base's float16 dtype; "
        f"float32 adapters came with {table.library} {version_text(table.until)}"
    )


def replace(span: Span, content: str) -> Edit:
    return Edit(span.start, span.end, content)


def insert(offset: int, content: str) -> Edit:
    return Edit(offset, offset, content)
