"""Fixes a careful engineer would write: no shadowed name, no import below code, no new lint.

Before/after tables for the name of the inserted probe, where the probe and a missing
``import torch`` go, and MP202's check that flash-attn imports; then every program of the
test-suite and every fixture is fixed and checked with ``ruff check`` (its default rules):
the fixed text has no finding the original did not have.
"""
from __future__ import annotations

import ast
import collections
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO, config, dedent, fix, lint

# The precision rules' edits, with `torch_dtype=` left as written: MP304's rename to `dtype=`
# (transformers >= 4.56) is tested on its own.
PRECISION_ONLY = config(transformers_version="5.23", ignore=["MP304"])
from precision_lint.engine import fix_source

PROBE = "# bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back."
EXPR = "torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8"

HYGIENE = [
    pytest.param(  # the user's own BF16_OK means something else: the probe takes a free name
        """
        import torch
        from transformers import AutoModelForCausalLM

        BF16_OK = args.bf16
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16)
        model.eval()
        """,
        f"""
        import torch
        from transformers import AutoModelForCausalLM

        {PROBE}
        NATIVE_BF16 = {EXPR}

        BF16_OK = args.bf16
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16 if NATIVE_BF16 else torch.float16)
        model.eval()
        """,
        id="user-BF16_OK-not-shadowed",
    ),
    pytest.param(  # a parameter or a local of that name counts too, and so does the next candidate
        """
        import torch
        from transformers import AutoModelForCausalLM


        def load(BF16_OK, NATIVE_BF16=False):
            return AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16).eval()
        """,
        f"""
        import torch
        from transformers import AutoModelForCausalLM

        {PROBE}
        BF16_SUPPORTED = {EXPR}


        def load(BF16_OK, NATIVE_BF16=False):
            return AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16 if BF16_SUPPORTED else torch.float16).eval()
        """,
        id="parameter-names-not-shadowed",
    ),
    pytest.param(  # the whole import block: environment set-up and a try/except import stay above the probe
        """
        import os

        os.environ["TOKENIZERS_PARALLELISM"] = "false"
        import torch
        from transformers import AutoModelForCausalLM

        try:
            import wandb
        except ImportError:
            wandb = None
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16).eval()
        """,
        f"""
        import os

        os.environ["TOKENIZERS_PARALLELISM"] = "false"
        import torch
        from transformers import AutoModelForCausalLM

        try:
            import wandb
        except ImportError:
            wandb = None

        {PROBE}
        BF16_OK = {EXPR}

        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16 if BF16_OK else torch.float16).eval()
        """,
        id="probe-after-the-whole-import-block",
    ),
    pytest.param(  # a block that runs code is not stepped over: the probe stays above it
        """
        import torch
        from transformers import AutoModelForCausalLM

        if torch.cuda.is_available():
            model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16).eval()
        import json
        """,
        f"""
        import torch
        from transformers import AutoModelForCausalLM

        {PROBE}
        BF16_OK = {EXPR}

        if torch.cuda.is_available():
            model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16 if BF16_OK else torch.float16).eval()
        import json
        """,
        id="block-with-code-not-stepped-over",
    ),
    pytest.param(  # `import torch` in sorted place: third-party plain imports, by name
        """
        import argparse

        import numpy as np
        import wandb
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype="bfloat16").eval()
        """,
        f"""
        import argparse

        import numpy as np
        import torch
        import wandb
        from transformers import AutoModelForCausalLM

        {PROBE}
        BF16_OK = {EXPR}

        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype="bfloat16" if BF16_OK else "float16").eval()
        """,
        id="import-torch-sorted-among-plain-imports",
    ),
    pytest.param(  # MP202: transformers' own check that flash-attn imports, its import in sorted place
        """
        import torch
        from peft import LoraConfig
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_2", torch_dtype=torch.float16)
        """,
        f"""
        import torch
        from peft import LoraConfig
        from transformers import AutoModelForCausalLM
        from transformers.utils import is_flash_attn_2_available

        {PROBE}
        BF16_OK = {EXPR}

        model = AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_2" if BF16_OK and is_flash_attn_2_available() else "sdpa", torch_dtype=torch.float16)
        """,
        id="mp202-checks-flash-attn-importable",
    ),
    pytest.param(  # MP202: the module's own import of the check is reused, under its alias
        """
        import torch
        from transformers import AutoModelForCausalLM
        from transformers.utils import is_flash_attn_2_available as have_fa2

        print(have_fa2())
        model = AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_2", torch_dtype=torch.float16)
        """,
        f"""
        import torch
        from transformers import AutoModelForCausalLM
        from transformers.utils import is_flash_attn_2_available as have_fa2

        {PROBE}
        BF16_OK = {EXPR}

        print(have_fa2())
        model = AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_2" if BF16_OK and have_fa2() else "sdpa", torch_dtype=torch.float16)
        """,
        id="mp202-reuses-the-users-check",
    ),


    pytest.param(  # MP101: float16 only fails under the user's own --fp16: kept where that is off
        """
        import argparse

        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        p = argparse.ArgumentParser()
        p.add_argument("--fp16", action="store_true")
        args = p.parse_args()
        model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.float16)
        Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=args.fp16)).train()
        """,
        """
        import argparse

        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        p = argparse.ArgumentParser()
        p.add_argument("--fp16", action="store_true")
        args = p.parse_args()
        model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.float32 if args.fp16 else torch.float16)
        Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=args.fp16)).train()
        """,
        id="mp101-conditioned-on-the-users-fp16-switch",
    ),
    pytest.param(  # ... and an explicit --dtype choice is kept whenever --fp16 is off
        """
        import argparse

        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        p = argparse.ArgumentParser()
        p.add_argument("--dtype", default="float32", choices=["float32", "float16"])
        p.add_argument("--fp16", action="store_true")
        args = p.parse_args()
        model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=getattr(torch, args.dtype))
        Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=args.fp16)).train()
        """,
        """
        import argparse

        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        p = argparse.ArgumentParser()
        p.add_argument("--dtype", default="float32", choices=["float32", "float16"])
        p.add_argument("--fp16", action="store_true")
        args = p.parse_args()
        model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.float32 if args.fp16 else getattr(torch, args.dtype))
        Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=args.fp16)).train()
        """,
        id="mp101-dtype-choice-kept-without-fp16",
    ),
    pytest.param(  # a second, unconditional scaler: the switch is not what the crash needs
        """
        import argparse

        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        args = argparse.ArgumentParser().parse_args()
        model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.float16)
        Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=args.fp16)).train()
        Trainer(model=model, args=TrainingArguments(output_dir="p", fp16=True)).train()
        """,
        """
        import argparse

        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        args = argparse.ArgumentParser().parse_args()
        model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.float32)
        Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=args.fp16)).train()
        Trainer(model=model, args=TrainingArguments(output_dir="p", fp16=True)).train()
        """,
        id="mp101-two-scalers-plain-float32",
    ),
    pytest.param(  # `from torch import float16` used only for the dtype: float32 imported in its place (no F401)
        """
        from torch import float16
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        m = AutoModelForCausalLM.from_pretrained("x", torch_dtype=float16)
        Trainer(model=m, args=TrainingArguments("o", fp16=True)).train()
        """,
        """
        from torch import float32
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        m = AutoModelForCausalLM.from_pretrained("x", torch_dtype=float32)
        Trainer(model=m, args=TrainingArguments("o", fp16=True)).train()
        """,
        id="mp101-from-torch-import-float16-renamed",
    ),
]


@pytest.mark.parametrize("before, after", HYGIENE)
def test_fix_hygiene(before, after):
    # with the unsafe fixes: a float16 fallback for inference-only bf16 weights is one (MP201)
    fixed = fix(before, cfg=PRECISION_ONLY, unsafe=True)
    assert fixed == dedent(after)
    assert lint(fixed, cfg=PRECISION_ONLY) == []  # the fixed form is not reported again
    assert fix(fixed, cfg=PRECISION_ONLY, unsafe=True) == fixed


# --- ruff on every fixed program ------------------------------------------------------------

RUFF = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))


def _programs():
    """Every program of the test-suite (each string constant of tests/ that is a Python module
    with imports) and every fixture, as (name, text)."""
    seen = {}
    for path in sorted((REPO / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.count("\n") >= 2):
                continue
            text = textwrap.dedent(node.value).lstrip("\n")
            if "import" not in text:
                continue
            try:
                ast.parse(text)
            except SyntaxError:
                continue
            seen.setdefault(text, f"{path.relative_to(REPO)}:{node.lineno}")
    for path in sorted((REPO / "fixtures").rglob("*.py")):
        seen.setdefault(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)))
    return [(name, text) for text, name in seen.items()]


def _ruff_counts(folder: Path):
    out = subprocess.run(
        [RUFF, "check", "--isolated", "--no-cache", "--exit-zero", "--output-format", "json", str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    counts = collections.defaultdict(collections.Counter)
    for item in json.loads(out.stdout):
        counts[Path(item["filename"]).name][item["code"]] += 1
    return counts


def _introduced(tmp_path, programs):
    before, after = tmp_path / "before", tmp_path / "after"
    before.mkdir()
    after.mkdir()
    names = {}
    for i, (name, text) in enumerate(programs):
        fixed = fix_source(text, path="train.py", unsafe=True)
        if fixed == text:
            continue
        names[f"p{i}.py"] = name
        (before / f"p{i}.py").write_text(text, encoding="utf-8")
        (after / f"p{i}.py").write_text(fixed, encoding="utf-8")
    old, new = _ruff_counts(before), _ruff_counts(after)
    return names, {f"{names[f]} ({f})": dict(new[f] - old[f]) for f in names if new[f] - old[f]}


@pytest.mark.slow  # ruff over every fixed program of the suite, one process each (27-65 s)
@pytest.mark.skipif(not Path(RUFF).exists(), reason="ruff is in the `test` extra")
def test_fixed_programs_have_no_new_ruff_findings(tmp_path):
    programs = _programs()
    assert len(programs) > 100  # the suite's programs were found
    names, introduced = _introduced(tmp_path, programs)
    assert len(names) > 50  # and most of them are fixed
    assert introduced == {}




# --- comments a fix makes stale -----------------------------------------------------------------

STALE_BEFORE = """\
import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

# load in fp16 to save memory
model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)  # half precision
note = "# fp16 in a string is no comment"
args = TrainingArguments("o", fp16=True)  # fp16 AMP stays true
Trainer(model=model, args=args).train()
"""


def test_stale_comments_are_the_ones_next_to_a_removed_precision():
    from precision_lint.fixes.stale import stale_comments

    after = STALE_BEFORE.replace("torch.float16", "torch.float32")
    assert stale_comments(STALE_BEFORE, after) == [(4, "# load in fp16 to save memory"), (5, "# half precision")]
    # float16 still chosen somewhere on the line (a conditioned fix): nothing is stale
    kept = STALE_BEFORE.replace("torch.float16", "torch.float32 if args.fp16 else torch.float16")
    assert stale_comments(STALE_BEFORE, kept) == []


def test_fix_points_out_stale_comments(tmp_path, monkeypatch, capsys):
    from precision_lint import cli

    (tmp_path / "pyproject.toml").write_text('[tool.precision-lint]\ntransformers-version = "5.23"\n')
    (tmp_path / "train.py").write_text(STALE_BEFORE)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--fix", "--no-cache", "train.py"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "precision-lint: note: train.py:4: this comment may be stale after the fix: # load in fp16 to save memory",
        "precision-lint: note: train.py:5: this comment may be stale after the fix: # half precision",
    ]
    # comments untouched (MP304 renames the deprecated `torch_dtype=` too)
    expected = STALE_BEFORE.replace("torch.float16", "torch.float32").replace("torch_dtype=", "dtype=")
    assert (tmp_path / "train.py").read_text() == expected
