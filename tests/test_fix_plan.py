"""One plan of fixes, checked whole (``fixes/checked.py``): the fixes of a run are applied to a copy,
the copy is linted again with every rule and the config files it reads, and a fix that hides a
finding, creates one, or does not converge is refused: its finding keeps no fix (no ``[*]``)
and says why."""
from conftest import config, dedent, fix, lint

from precision_lint.engine import Engine

DS_TRAIN = """
from transformers import Trainer, TrainingArguments

args = TrainingArguments(output_dir="o", bf16=True, deepspeed="ds.json")
Trainer(model=None, args=args).train()
"""
DS_JSON = '{"bf16": {"enabled": false}, "zero_optimization": {"stage": 2}}\n'


def _run(tmp_path, monkeypatch, codes=None, fix=False):
    (tmp_path / "train.py").write_text(dedent(DS_TRAIN))
    (tmp_path / "ds.json").write_text(DS_JSON)
    monkeypatch.chdir(tmp_path)
    cfg = config(transformers_version="5.23")
    return Engine(cfg, codes, jobs=1).run_paths(["."], fix=fix)


def test_a_fix_that_silences_a_deepspeed_conflict_is_not_safe(tmp_path, monkeypatch):
    """MP201's guard `bf16=BF16_OK` makes MP102's DeepSpeed check fall silent, but on an Ampere
    GPU BF16_OK is True and the JSON's `bf16.enabled: false` still fails the run."""
    found = {d.code: d for d in _run(tmp_path, monkeypatch).diagnostics}
    assert set(found) == {"MP102", "MP201"}
    assert found["MP201"].fix is None
    assert "no automatic fix: applying it would silence MP102 on line 3" in found["MP201"].message
    result = _run(tmp_path, monkeypatch, fix=True)
    assert not result.changed  # nothing written: the conflict stays in sight
    assert sorted(d.code for d in result.diagnostics) == ["MP102", "MP201"]


def test_the_plan_is_checked_with_every_rule_whatever_is_selected(tmp_path, monkeypatch):
    result = _run(tmp_path, monkeypatch, codes=["MP201"], fix=True)
    assert not result.changed
    (only,) = result.diagnostics
    assert only.code == "MP201" and only.fix is None and "silence MP102" in only.message


def test_without_the_conflict_the_same_fix_is_safe(tmp_path, monkeypatch):
    (tmp_path / "train.py").write_text(dedent(DS_TRAIN))
    (tmp_path / "ds.json").write_text('{"bf16": {"enabled": "auto"}}\n')
    monkeypatch.chdir(tmp_path)
    result = Engine(config(transformers_version="5.23"), None, jobs=1).run_paths(["."], fix=True)
    (text,) = result.fixed_texts.values()
    assert "bf16=BF16_OK" in text
    assert result.diagnostics == []


# --- exclusive conditions: the precision plan's own pair is not a conflict --------------------

FLAG_VARIABLE = """
import torch
from transformers import Trainer, TrainingArguments

bf16 = True  # mixed precision
args = TrainingArguments(output_dir="o", bf16=bf16)
Trainer(model=None, args=args).train()
"""


def test_bf16_variable_fix_is_exclusive_and_converges():
    fixed = fix(FLAG_VARIABLE)
    assert "bf16 = BF16_OK  # mixed precision\n" in fixed  # a name needs no parentheses
    assert "fp16=torch.cuda.is_available() and not BF16_OK" in fixed
    assert lint(fixed) == []  # MP102 sees `X` and `... and not X` as exclusive
    assert fix(fixed) == fixed


def test_exclusive_through_names_and_parentheses():
    src = """
    import torch
    from transformers import TrainingArguments

    OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8
    use_bf16 = (OK)
    args = TrainingArguments(output_dir="o", bf16=use_bf16, fp16=torch.cuda.is_available() and not OK)
    """
    assert lint(src, "MP102") == []


def test_not_exclusive_when_the_negation_is_of_something_else():
    src = """
    import torch
    from transformers import TrainingArguments

    OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8
    OTHER = torch.cuda.is_available() and torch.cuda.device_count() > 1
    args = TrainingArguments(output_dir="o", bf16=OK, fp16=torch.cuda.is_available() and not OTHER)
    """
    assert [d.code for d in lint(src, "MP102")] == ["MP102"]


# --- [*] means converges ------------------------------------------------------------------------

DATACLASS_DEFAULT = """
from dataclasses import dataclass

import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments


@dataclass
class Config:
    model_name: str = "gpt2"
    weights_dtype: str = "float16"
    fp16: bool = True


cfg = Config()
model = AutoModelForCausalLM.from_pretrained(cfg.model_name, dtype=getattr(torch, cfg.weights_dtype))
args = TrainingArguments(output_dir="o", fp16=cfg.fp16)
Trainer(model=model, args=args).train()
"""


def test_a_dataclass_default_dtype_fix_converges():
    (found,) = lint(DATACLASS_DEFAULT)
    assert found.code == "MP101" and found.fix is not None
    fixed = fix(DATACLASS_DEFAULT)
    assert "dtype=torch.float32 if cfg.fp16 and getattr(torch, cfg.weights_dtype) == torch.float16 else" in fixed
    assert lint(fixed) == []
    assert fix(fixed) == fixed


def test_a_switch_and_a_dtype_test_narrow_the_else_branch():
    """`X if S and E == float16 else E`: E is float16 there only where S is off."""
    src = """
    import argparse

    import torch
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

    p = argparse.ArgumentParser()
    p.add_argument("--dtype", default="float16")
    p.add_argument("--fp16", action="store_true")
    args = p.parse_args()
    dtype = getattr(torch, args.dtype)
    model = AutoModelForCausalLM.from_pretrained("m", dtype=torch.float32 if args.fp16 and dtype == torch.float16 else dtype)
    Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=args.fp16)).train()
    """
    assert lint(src, "MP101") == []
    # without the switch in the test, float16 stays possible under fp16
    assert lint(src.replace("args.fp16 and dtype == torch.float16", "args.bf16"), "MP101")


def test_a_finding_that_stood_before_the_fix_is_left_to_its_own_rule():
    # `--select MP202 --fix` guards FlashAttention-2 and leaves the unguarded bf16 weights, which
    # MP201 reported before the fix, to MP201: the plan fixes only the findings its fixes create
    from conftest import fix, lint

    src = """
        import torch
        from transformers import AutoModelForCausalLM
        model = AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_2", torch_dtype=torch.float16)
        judge = AutoModelForCausalLM.from_pretrained("j", torch_dtype=torch.bfloat16)
        """
    assert {d.code for d in lint(src)} >= {"MP201", "MP202"}
    fixed = fix(src, "MP202")
    assert "is_flash_attn_2_available()" in fixed and "torch_dtype=torch.bfloat16)" in fixed
    assert [d.code for d in lint(fixed) if d.code in ("MP201", "MP202")] == ["MP201"]
