"""The rule interface.

A rule is a small class that *judges* facts: it reads the :class:`ModuleFacts`
of the file being checked (and, through the :class:`Project`, the facts of the
files joined with it) and yields diagnostics, each with an optional fix. Rules
never parse or walk source code themselves.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, Iterable, Optional, Sequence, Tuple

from ..config import Config, ConfigError
from ..diagnostics import SAFE, Diagnostic, Edit, Fix, Related, Span
from ..facts.model import ModuleFacts
from ..notebook import cell_references, is_notebook

if TYPE_CHECKING:  # pragma: no cover - the join is imported only when something is judged
    from ..project import Project
    from ..versions import Targets


@dataclass(frozen=True)
class Option:
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


@dataclass
class RuleContext:
    facts: ModuleFacts
    source: str
    project: Project
    config: Config
    options: Dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> str:
        return self.facts.path

    def text(self, span: Span) -> str:
        return self.source[span.start : span.end]

    @property
    def targets(self) -> "Targets":
        """The library versions this file targets (``versions.py``): configuration, the file's
        own ``require_version`` / ``%pip install``, its project's requirements, else installed."""
        return self.project.targets_of(self.facts, self.source)

    def diagnostic(
        self,
        code: str,
        span: Span,
        message: str,
        fix: Optional[Fix] = None,
        related: Sequence[Related] = (),
        noqa_line: Optional[int] = None,
    ) -> Diagnostic:
        if is_notebook(self.path):  # "(line 7)" of the joined cells → "(cell 3, line 1)", as positions are shown
            message = cell_references(message, self.source)
            related = [
                dataclasses.replace(r, message=cell_references(r.message, self.source)) if r.path == self.path else r
                for r in related
            ]
        return Diagnostic(code, message, self.path, span, fix, tuple(related), noqa_line)


def replace(span: Span, content: str) -> Edit:
    return Edit(span.start, span.end, content)


def insert(offset: int, content: str) -> Edit:
    return Edit(offset, offset, content)
