"""MP203 bf16-guard-counts-emulation: weak guards that pick bf16, their fixes, the negatives."""
import pytest

from conftest import dedent, fix, lint

CODE = "MP203"


@pytest.mark.parametrize(
    "before, after",
    [
        (  # the nanoGPT-style autocast dtype
            """
            import torch
            with torch.autocast("cuda", dtype=torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16):
                pass
            """,
            """
            import torch
            with torch.autocast("cuda", dtype=torch.bfloat16 if torch.cuda.is_bf16_supported(including_emulation=False) else torch.float16):
                pass
            """,
        ),
        (  # a flag assigned first, then TrainingArguments(bf16=...)
            """
            import torch
            from transformers import TrainingArguments
            use_bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()  # Ampere?
            args = TrainingArguments("out", bf16=use_bf16, fp16=torch.cuda.is_available() and not use_bf16)
            """,
            """
            import torch
            from transformers import TrainingArguments
            use_bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported(including_emulation=False)  # Ampere?
            args = TrainingArguments("out", bf16=use_bf16, fp16=torch.cuda.is_available() and not use_bf16)
            """,
        ),
        (  # weights dtype chosen in an assignment, then loaded; an argument is kept
            """
            import torch
            from transformers import AutoModelForCausalLM
            dtype = torch.bfloat16 if torch.cuda.is_bf16_supported(0) else torch.float32
            model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=dtype)
            """,
            """
            import torch
            from transformers import AutoModelForCausalLM
            dtype = torch.bfloat16 if torch.cuda.is_bf16_supported(0) else torch.float32
            model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=dtype)
            """,
        ),
    ],
)
def test_fix(before, after):
    fixed = fix(before, CODE)
    assert fixed == dedent(after)
    if before != after:
        assert lint(before, CODE)
    assert not lint(fixed, CODE)
    assert fix(fixed, CODE) == fixed


ATTRIBUTE_STORE = """
import argparse
import torch
from transformers import AutoModelForCausalLM

args = argparse.ArgumentParser().parse_args()
{store}
model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=args.weight_dtype)
"""


@pytest.mark.parametrize(
    "store, found",
    [
        ("args.weight_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16", 1),
        # under a test, or in a loop: not what every read sees
        ("if args.fp16:\n    args.weight_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16", 0),
        ("args.weight_dtype = torch.float16", 0),
    ],
    ids=["stored", "stored-under-a-test", "stored-float16"],
)
def test_a_guard_stored_in_an_attribute_reaches_the_read_after_it(store, found):
    """Review 27a: flymyai-lora-trainer keeps the guard's choice in ``args.weight_dtype``."""
    assert len(lint(ATTRIBUTE_STORE.format(store=store), CODE)) == found


def test_keyword_only_argument_form():
    src = """
    import torch
    from transformers import AutoModelForCausalLM
    dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float32
    model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=dtype)
    """
    (d,) = lint(src, CODE)
    assert d.span.line == 3 and d.related[0].span.line == 3
    assert "T4" in d.message and "including_emulation=False" in d.message
    assert "is_bf16_supported(including_emulation=False) else" in fix(src, CODE)


def test_transformers_helper_gets_the_plan_probe_as_an_unsafe_fix():
    src = """
    import torch
    from transformers import TrainingArguments
    from transformers.utils import is_torch_bf16_gpu_available

    args = TrainingArguments("out", bf16=is_torch_bf16_gpu_available())
    """
    (d,) = lint(src, CODE)
    assert d.fix is not None and d.fix.applicability == "unsafe"
    assert fix(src, CODE) == dedent(src)  # safe fixes only: unchanged
    fixed = fix(src, CODE, unsafe=True)
    assert "bf16=BF16_OK" in fixed
    assert "BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8" in fixed
    assert not lint(fixed, CODE)


def test_the_probe_itself_is_rewritten_inline():
    src = """
    import torch
    from accelerate.utils import is_bf16_available
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained("m")
    BF16_OK = is_bf16_available()
    model = model.to(torch.bfloat16 if BF16_OK else torch.float32)
    """
    fixed = fix(src, CODE, unsafe=True)
    # the user's BF16_OK now names the plan's strict probe (under a free name of its own, as
    # the fix never takes over a name the user already binds)
    assert "BF16_OK = is_bf16_available()" not in fixed
    assert "torch.cuda.get_device_capability()[0] >= 8" in fixed
    assert "BF16_OK = NATIVE_BF16" in fixed or "BF16_OK = (torch.cuda.is_available()" in fixed
    assert not lint(fixed, CODE)


@pytest.mark.parametrize(
    "src",
    [
        # not deciding any bf16 choice
        "import torch\nprint(torch.cuda.is_bf16_supported())\n",
        # the caller already decided
        "import torch\nd = torch.bfloat16 if torch.cuda.is_bf16_supported(including_emulation=False) else torch.float16\n"
        "m = AutoModel.from_pretrained('x', torch_dtype=d)\nfrom transformers import AutoModel\n",
        "import torch\nwith torch.autocast('cuda', dtype=torch.bfloat16 if torch.cuda.is_bf16_supported(True) else torch.float16):\n    pass\n",
        # a strict probe
        "import torch\nok = torch.cuda.get_device_capability()[0] >= 8\nwith torch.autocast('cuda', dtype=torch.bfloat16 if ok else torch.float16):\n    pass\n",
        # the weak call picks fp16, not bf16 (a different statement)
        "import torch\nx = torch.cuda.is_bf16_supported()\nwith torch.autocast('cuda', dtype=torch.float16):\n    pass\n",
    ],
)
def test_negatives(src):
    assert not lint(src, CODE)


# (the versions each file targets: tests/rules/test_mp20x_claims.py; here the repository's
# own pin, torch==2.13.0, where every guard counts emulation)


def test_installed_torch_accepts_the_fixed_call():
    torch = pytest.importorskip("torch")
    assert torch.cuda.is_bf16_supported(including_emulation=False) in (True, False)


@pytest.mark.parametrize(
    "imports, kept",
    [
        ("from transformers.utils import is_torch_bf16_gpu_available\n", ""),
        ("from transformers.utils import is_torch_bf16_gpu_available, logging\n", "from transformers.utils import logging\n"),
        ("from transformers.utils import logging, is_torch_bf16_gpu_available\n", "from transformers.utils import logging\n"),
    ],
)
def test_the_helpers_import_goes_with_its_only_use(imports, kept):
    src = "import torch\n" + imports + "from transformers import TrainingArguments\n\nargs = TrainingArguments(output_dir='o', bf16=is_torch_bf16_gpu_available())\n"
    fixed = fix(src, CODE, unsafe=True)
    assert "is_torch_bf16_gpu_available" not in fixed
    if kept:
        assert kept in fixed
    compile(fixed, "fixed", "exec")


LOOKED_UP = """
    import torch

    name = "bfloat16" if torch.cuda.is_available() and {probe} else "float16"
    dtype = {{"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}}[name]
    model = torch.nn.Linear(8, 8).cuda()
    with torch.autocast(device_type="cuda", dtype=dtype):
        loss = model(torch.randn(2, 8, device="cuda")).sum()
    """


def test_a_dtype_name_the_probe_picks_and_a_table_turns_into_the_dtype():
    """The emulation-counting guard decides the *name*; a dict literal maps it to the dtype
    autocast gets: the same choice as `torch.bfloat16 if is_bf16_supported() else ...`."""
    (finding,) = lint(LOOKED_UP.format(probe="torch.cuda.is_bf16_supported()"), "MP203")
    assert finding.span.line == 3 and finding.related[0].span.line == 3
    assert "including_emulation=False" in fix(LOOKED_UP.format(probe="torch.cuda.is_bf16_supported()"), "MP203")


def test_the_table_lookup_with_a_native_check_is_fine():
    assert lint(LOOKED_UP.format(probe="torch.cuda.is_bf16_supported(including_emulation=False)"), "MP203") == []
    assert lint(LOOKED_UP.format(probe="torch.cuda.get_device_capability()[0] >= 8"), "MP203") == []


def test_a_bf16_choice_in_the_body_of_the_probes_if_statement_is_the_probes():
    """``if torch.cuda.is_bf16_supported(): with torch.autocast(..., dtype=torch.bfloat16):``: the
    autocast's dtype is written as a literal, with no condition of its own, in the code that runs
    where the probe says yes: on a T4 that is every run (emulated bf16)."""
    src = """
    import torch

    def speak(net, tokens):
        if torch.cuda.is_available() and torch.cuda.is_bf16_supported():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return net(tokens)
        return net(tokens)
    """
    (d,) = lint(src, CODE)
    assert "is_bf16_supported()" in d.message
    assert "including_emulation=False" in fix(src, CODE)


def test_a_bf16_choice_where_the_probe_says_no_is_not_the_probes():
    src = """
    import torch

    def speak(net, tokens):
        if not torch.cuda.is_bf16_supported():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return net(tokens)
        return net(tokens)
    """
    assert not lint(src, CODE)


def test_an_autocast_bound_with_partial_is_an_autocast():
    """``partial(torch.cuda.amp.autocast, dtype=torch.bfloat16)`` under the probe's ``if``: the
    context every later ``with amp_ctx():`` enters is bf16 wherever the probe says yes."""
    src = """
    import functools
    import torch

    if torch.cuda.is_available() and torch.cuda.is_bf16_supported():
        amp_ctx = functools.partial(torch.autocast, "cuda", dtype=torch.bfloat16)
    else:
        amp_ctx = functools.partial(torch.autocast, "cuda", enabled=False)
    """
    (d,) = lint(src, CODE)
    assert "is_bf16_supported()" in d.message


def test_a_partial_of_anything_else_is_no_autocast():
    src = """
    import functools
    import torch

    if torch.cuda.is_bf16_supported():
        cast = functools.partial(torch.zeros, 3, dtype=torch.bfloat16)
    """
    assert not lint(src, CODE)


def test_a_check_read_with_getattr_is_the_check():
    """``getattr(torch.cuda, "is_bf16_supported", lambda: False)()`` is the emulation-counting
    check (review 23's held-out gemma-local), fixed as the plain call is."""
    src = """
    import torch
    from transformers import TrainingArguments

    use_bf16 = getattr(torch.cuda, "is_bf16_supported", lambda: False)()
    args = TrainingArguments("out", bf16=use_bf16, fp16=not use_bf16)
    """
    (d,) = lint(src, "MP203")
    assert d.fix is not None
    assert 'getattr(torch.cuda, "is_bf16_supported", lambda: False)(including_emulation=False)' in fix(src, "MP203")


UNSLOTH_RUN = """
{imports}
import torch
from transformers import TrainingArguments
{later}
args = TrainingArguments(output_dir="o", fp16=not torch.cuda.is_bf16_supported(), bf16=torch.cuda.is_bf16_supported())
"""


@pytest.mark.parametrize(
    "imports, later, found",
    [
        ("from unsloth import FastLanguageModel", "", 0),
        ("import unsloth", "", 0),
        ("", "", 2),
        ("import argparse", "if argparse.Namespace().fast:\n    import unsloth", 2),  # only the runs that pass the switch
    ],
    ids=["from-unsloth", "import-unsloth", "no-unsloth", "unsloth-under-if"],
)
def test_unsloth_replaces_the_check_with_a_native_one(imports, later, found):
    """``import unsloth`` replaces ``torch.cuda.is_bf16_supported`` with a check for native bf16
    (``including_emulation=False``; ``major >= 8`` on older torch): the guard is right after it
    (review 26a: four findings in unsloth notebooks)."""
    assert len(lint(UNSLOTH_RUN.format(imports=imports, later=later), CODE)) == found


GUARDED_AMP = """
import torch


def amp_dtype():
    if torch.cuda.is_available() and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float16  # older cards


net = torch.nn.Conv2d(4, 4, 3).cuda()
with torch.autocast(device_type="cuda", dtype=amp_dtype()):
    out = net(torch.randn(2, 4, 8, 8, device="cuda"))
"""
INSTALL_CHOICES = """\
# Distiller

```bash
# CUDA 12.1 wheel (most current Ampere/Ada/Hopper GPUs)
pip install --index-url https://download.pytorch.org/whl/cu121 torch
# CUDA 11.8 wheel (older GPUs / drivers)
# pip install --index-url https://download.pytorch.org/whl/cu118 torch
```
"""


def test_a_readmes_install_choices_name_no_target(tmp_path):
    """Review 28b's sd-distill-prune-quant: the comment above each wheel's install says which
    build fits which card; it states no GPU the code runs on, and the guard that counts emulation
    is reported as without a README."""
    from conftest import findings_in, write_tree

    write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "torch>=2.4\n", "train.py": GUARDED_AMP, "README.md": INSTALL_CHOICES})
    assert [d.code for d in findings_in(tmp_path) if d.code == "MP203"] == ["MP203"]


@pytest.mark.parametrize("head, tail", [
    ("args = TrainingArguments(", ")\n    return args"),
    ("return TrainingArguments(", ")"),  # review 41a's O2: the same call returned at once
    ("trainer = Trainer(model=None, args=TrainingArguments(", "))\n    return trainer"),
])
def test_both_choices_of_one_call_are_reported_and_fixed_however_it_is_held(head, tail):
    """``bf16=True if probe() else False, fp16=False if probe() else True``: each probe chooses
    bf16 (the second by turning fp16 off), however the call's value is held, and the two fixes
    go together (one alone would leave the pair for MP102 to doubt)."""
    src = (
        "import torch\nfrom transformers import Trainer, TrainingArguments\n\n\ndef make():\n    " + head
        + "\n        output_dir='o',\n        bf16=True if torch.cuda.is_bf16_supported() else False,"
        + "\n        fp16=False if torch.cuda.is_bf16_supported() else True,\n    " + tail + "\n"
    )
    found = lint(src, "MP203")
    assert [d.span.line for d in found] == [8, 9] and all(d.fix is not None for d in found)
    assert fix(src, "MP203").count("is_bf16_supported(including_emulation=False)") == 2
