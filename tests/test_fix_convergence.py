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


def test_an_edit_two_fixes_share_is_placed_once_for_both():
    """Two fixes that both add ``import torch`` and the capability probe write them once; the
    text each fix wrote is placed with that one copy counted, so a third fix's later edit and
    the shared lines are where the new text has them (counting the shared edit once per owner
    put the second owner's copy, and everything after it, past other fixes' text: a finding
    on a line the first fix never touched then read as the second fix's 'finding coming back')."""
    from precision_lint.diagnostics import Diagnostic
    from precision_lint.fixes.checked import _written

    imports = Edit(0, 0, "import torch\n")
    first = Fix(SAFE, "a", (imports, Edit(10, 12, "AAAA")))
    second = Fix(SAFE, "b", (imports, Edit(20, 20, "BB")))
    span = Span(1, 0, 1, 1, 0, 1)
    owner = {f: Diagnostic("MP201", f.message, "t.py", span, f) for f in (first, second)}
    placed = sorted((start, end, d.message) for _, start, end, d in _written([first, second], owner))
    # "import torch\n" is 13 characters: 10 → 23, and "AAAA" replaces 2 → +2 more for 20 → 35
    assert placed == [(0, 13, "a"), (0, 13, "b"), (23, 27, "a"), (35, 37, "b")]


def test_fix_once_is_fix_twice_when_fixes_share_the_probe(tmp_path):
    """A bf16 ``.to()`` whose finding appears only once the load below it is guarded, beside a
    ``SFTConfig`` whose fix adds the same probe: one ``--fix`` pass fixes all of it, and a
    second finds nothing (the ``SFTConfig`` fix used to be refused as 'not converging' in the
    first pass and offered in the second)."""
    src = dedent("""
        from trl import SFTConfig, SFTTrainer

        model = model.to(torch.bfloat16)
        model = AutoModelForCausalLM.from_pretrained('gpt2', torch_dtype="bfloat16")
        cfg = SFTConfig(output_dir='out')
        SFTTrainer(model=model, args=cfg, tokenizer=tok).train()
        """)
    engine = Engine(config(), None, jobs=1)
    once = engine.run_sources([SourceFile("train.py", src.encode(), src)], fix=True)
    fixed = once.fixed_texts["train.py"]
    assert "bf16=BF16_OK" in fixed and "torch.bfloat16 if BF16_OK" in fixed
    assert not [d for d in once.diagnostics if "no automatic fix" in d.message]
    twice = engine.run_sources([SourceFile("train.py", fixed.encode(), fixed)], fix=True)
    assert twice.fixed_texts["train.py"] == fixed
    assert twice.diagnostics == []
