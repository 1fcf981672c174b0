"""The rule registry: every ``mpNNN_*.py`` module here defines one rule class.

A newcomer finds rule MP301 as ``rules/mp301_*.py`` here, its page as
``rules/MP301.md`` at the top of the repository, its fixtures under
``fixtures/MP301/`` and its tests as ``tests/rules/test_mp301.py``.
"""
from __future__ import annotations

import importlib
import pkgutil
import re
from functools import lru_cache
from typing import Dict, List, Optional, Sequence

from ..workspace.config import Config, ConfigError
from .base import Rule

_RULE_MODULE = re.compile(r"^mp\d{3}_")


@lru_cache(maxsize=None)
def all_rules() -> Dict[str, type]:
    found: Dict[str, type] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if not _RULE_MODULE.match(info.name):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value.code and value.__module__ == module.__name__:
                found[value.code] = value
    return dict(sorted(found.items()))


def get_rule(code: str) -> Optional[type]:
    return all_rules().get(code.upper())


def _matches(code: str, selector: str) -> bool:
    return selector == "ALL" or code.startswith(selector)


def unknown_selectors(selectors: Sequence[str]) -> List[str]:
    """The codes or prefixes in ``selectors`` that name no rule (``MP999``, ``MP9``), as ruff
    rejects them: a typo must not turn into a silent "All checks passed!"."""
    codes = all_rules()
    return [s for s in selectors if not any(_matches(code, s) for code in codes)]


def check_selectors(config: Config) -> None:
    """Raise ConfigError for a code in the configuration's select/ignore/extend-select or
    per-file-ignores that names no rule."""
    where = str(config.path) if config.path is not None else "configuration"
    lists = [("select", config.select or []), ("ignore", config.ignore), ("extend-select", config.extend_select)]
    lists += [(f"per-file-ignores.{k}", v) for k, v in config.per_file_ignores.items()]
    for key, selectors in lists:
        unknown = unknown_selectors(selectors)
        if unknown:
            raise ConfigError(
                f"{where}: `{key}` has unknown rule code(s) {', '.join(unknown)} (see `precision-lint rule --all`)"
            )


def selected_codes(
    config: Config,
    select: Optional[Sequence[str]] = None,
    ignore: Sequence[str] = (),
    extend_select: Sequence[str] = (),
) -> List[str]:
    """Codes enabled by config and command line (the command line wins), like ruff.
    Raises ConfigError for a code that names no rule."""
    check_selectors(config)
    for flag, given in (("--select", select or []), ("--ignore", ignore), ("--extend-select", extend_select)):
        unknown = unknown_selectors(given)
        if unknown:
            raise ConfigError(f"{flag}: unknown rule code(s) {', '.join(unknown)} (see `precision-lint rule --all`)")
    chosen = select if select is not None else config.select
    extra = list(config.extend_select) + list(extend_select)
    ignored = list(config.ignore) + list(ignore)
    out = []
    for code in all_rules():
        on = chosen is None or any(_matches(code, s) for s in chosen)
        on = on or any(_matches(code, s) for s in extra)
        if on and not any(_matches(code, s) for s in ignored):
            out.append(code)
    return out
