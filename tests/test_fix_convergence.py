"""A fix after which its own finding comes back is not converging: without a guard the fix
loop would nest it into itself pass after pass. The fix is refused (the file keeps its text),
the finding is still reported, without a fix, and says why."""
from conftest import config, dedent

from precision_lint.diagnostics import SAFE, Edit, Fix, Span
from precision_lint.engine import Engine
from precision_lint.rules.base import Rule
from precision_lint.workspace.sources import SourceFile


class _WrapsForever(Rule):
    """A deliberately broken rule: reports `x = ...` and 'fixes' it by wrapping the value."""

    code = "MP999"
    name = "wraps-forever"
    summary = "test rule"

    def check(self, ctx):
        start = ctx.source.find("x = ") + 4
        if start < 4:
            return
        end = ctx.source.index("\n", start)
        line = ctx.source[:start].count("\n") + 1
        where = Span(line, 4, line, 4 + end - start, start, end)
        fix = Fix(SAFE, "wrap", (Edit(start, end, f"({ctx.source[start:end]})"),))
        yield ctx.diagnostic(self.code, where, "x is set", fix)


def test_a_fix_whose_finding_comes_back_is_rolled_back(monkeypatch):
    from precision_lint import engine as engine_module

    monkeypatch.setattr(engine_module, "all_rules", lambda: {"MP999": _WrapsForever})
    src = dedent("""
        import torch
        x = 1
        """)
    engine = Engine(config(), ["MP999"], jobs=1)
    result = engine.run_sources([SourceFile("t.py", src.encode(), src)], fix=True)
    text = result.fixed_texts["t.py"]
    assert text == src  # refused whole: never nested ten deep, nor left half-way
    assert [d.code for d in result.diagnostics] == ["MP999"]
    (found,) = result.diagnostics
    assert found.fix is None and "no automatic fix: it does not converge" in found.message
    # and a plain check does not mark it fixable
    (checked,) = engine.run_sources([SourceFile("t.py", src.encode(), src)]).diagnostics
    assert checked.fix is None and "does not converge" in checked.message
