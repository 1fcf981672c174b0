"""Counting findings and fixes: ``--statistics`` and ``--show-fixes``.

Both say what ``--unsafe-fixes`` would add: an unsafe fix may change results where the
original code worked (see the rule pages), so it is never applied by plain ``--fix``, and a
team adopting the linter needs to see how many findings only such a fix would resolve.

Marks follow ruff's ``[*]``: ``[*]`` fixable with the options given (``--fix``, or
``--fix --unsafe-fixes`` when that was passed), ``[-]`` fixable only with
``--unsafe-fixes``, ``[ ]`` no fix.
"""
from __future__ import annotations

from typing import Dict, List, Mapping

from ..diagnostics import SAFE, Diagnostic
from . import Report


def _applicable(d: Diagnostic, unsafe: bool) -> bool:
    return d.fix is not None and bool(d.fix.edits) and (d.fix.applicability == SAFE or unsafe)


def _hidden(d: Diagnostic, unsafe: bool) -> bool:
    return d.fix is not None and bool(d.fix.edits) and d.fix.applicability != SAFE and not unsafe


def _name(report: Report, code: str) -> str:
    rule = report.rules.get(code)
    return rule.name if rule else ""


def _plural(n: int, word: str, suffix: str = "s") -> str:
    return f"{n} {word}{suffix * (n != 1)}"


def statistics(report: Report, unsafe: bool = False) -> str:
    """One line per rule code: count, code, fix mark, name (and fixes hidden behind
    ``--unsafe-fixes``), most frequent first; a closing line counts the hidden fixes."""
    by_code: Dict[str, List[Diagnostic]] = {}
    for d in report.diagnostics:
        by_code.setdefault(d.code, []).append(d)
    lines = []
    total_hidden = 0
    for code, found in sorted(by_code.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        hidden = sum(_hidden(d, unsafe) for d in found)
        total_hidden += hidden
        mark = "[*]" if any(_applicable(d, unsafe) for d in found) else "[-]" if hidden else "[ ]"
        line = f"{len(found):>5}\t{code}\t{mark} {_name(report, code)}"
        if hidden:
            line += f"\t({hidden} fixable with `--unsafe-fixes`)"
        lines.append(line)
    if total_hidden:
        lines.append(f"{_plural(total_hidden, 'hidden fix', 'es')} can be enabled with the `--unsafe-fixes` option.")
    return "".join(l + "\n" for l in lines)


def _listing(report: Report, counts: Mapping[str, Mapping[str, int]]) -> List[str]:
    lines = []
    for path in sorted(counts, key=report.shown):
        lines.append(f"- {report.shown(path)}:")
        for code, n in sorted(counts[path].items()):
            lines.append(f"    {n} × {code} ({_name(report, code)})")
    return lines


def _count(report: Report, keep) -> Dict[str, Dict[str, int]]:
    out: Dict[str, Dict[str, int]] = {}
    for d in report.diagnostics:
        if keep(d):
            per = out.setdefault(d.path, {})
            per[d.code] = per.get(d.code, 0) + 1
    return out


def show_fixes(report: Report, fixed: Mapping[str, Mapping[str, int]], unsafe: bool = False) -> str:
    """Per file and code: the fixes applied (``fixed``: path → code → count), those still
    available with the options given, and those hidden behind ``--unsafe-fixes``."""
    sections = []
    n_fixed = sum(sum(c.values()) for c in fixed.values())
    if n_fixed:
        sections.append([f"Fixed {_plural(n_fixed, 'error')}:", *_listing(report, fixed)])
    available = _count(report, lambda d: _applicable(d, unsafe))
    n_available = sum(sum(c.values()) for c in available.values())
    if n_available:
        option = "`--fix --unsafe-fixes`" if unsafe else "`--fix`"
        sections.append([f"{n_available} fixable with the {option} option:", *_listing(report, available)])
    hidden = _count(report, lambda d: _hidden(d, unsafe))
    n_hidden = sum(sum(c.values()) for c in hidden.values())
    if n_hidden:
        sections.append(
            [f"{_plural(n_hidden, 'hidden fix', 'es')} can be enabled with the `--unsafe-fixes` option:", *_listing(report, hidden)]
        )
    if not sections:
        return "No fixes available.\n"
    return "\n".join("\n".join(s) + "\n" for s in sections)
