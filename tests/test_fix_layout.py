"""Where a fix writes: a comment stays on the line it was written on, the probe goes after a
notebook's whole import block (IPython lines included), and an added import goes where the
file's own sort order puts it."""
import json

from functools import partial

from conftest import config
from conftest import fix as _fix

from precision_lint.engine import fix_source as _fix_source

# with the unsafe fixes: where a fix writes is the question here, and the float16 fallback of
# inference-only weights (MP201) is one of them
fix = partial(_fix, unsafe=True)
fix_source = partial(_fix_source, unsafe=True)

PRECISION_ONLY = config(transformers_version="5.23", ignore=["MP304"])
PROBE = "# bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back."
EXPR = "torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8"
FP16 = "torch.cuda.is_available() and not BF16_OK"


def test_a_trailing_comment_stays_on_its_line_with_a_trailing_comma():
    fixed = fix(
        """
        import torch
        from transformers import TrainingArguments

        args = TrainingArguments(
            output_dir="o",
            bf16=True,  # use bf16
        )
        """,
        "MP201",
        PRECISION_ONLY,
    )
    assert f"    bf16=BF16_OK,  # use bf16\n    fp16={FP16},\n)" in fixed


def test_a_trailing_comment_stays_on_its_line_without_a_trailing_comma():
    fixed = fix(
        """
        import torch
        from transformers import TrainingArguments

        args = TrainingArguments(
            output_dir="o",
            bf16=True  # use bf16
        )
        """,
        "MP201",
        PRECISION_ONLY,
    )
    assert f"    output_dir=\"o\",\n    fp16={FP16},\n    bf16=BF16_OK  # use bf16\n)" in fixed
    compile(fixed, "t.py", "exec")


def test_a_positional_last_argument_keeps_the_keyword_after_it():
    fixed = fix(
        """
        import torch
        from transformers import TrainingArguments

        args = TrainingArguments(
            "o",
            bf16=True,
        )
        """,
        "MP201",
        PRECISION_ONLY,
    )
    assert f"    bf16=BF16_OK,\n    fp16={FP16},\n)" in fixed


def _notebook(*cells):
    return json.dumps(
        {
            "cells": [{"cell_type": "code", "metadata": {}, "source": c, "outputs": [], "execution_count": None} for c in cells],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def test_notebook_probe_after_the_whole_import_block_past_ipython_lines():
    nb = _notebook(
        "%pip install transformers\nimport os\nimport torch\nfrom transformers import AutoModelForCausalLM\n",
        "model = AutoModelForCausalLM.from_pretrained('m', torch_dtype=torch.bfloat16).eval()\n",
    )
    fixed = json.loads(fix_source(nb, path="nb.ipynb", config=PRECISION_ONLY))
    first = "".join(fixed["cells"][0]["source"])
    assert first.index("from transformers import") < first.index("BF16_OK =")  # no import below code (E402)
    assert first.startswith("%pip install transformers\n")


def test_added_import_follows_a_file_sorted_by_module_name_alone():
    fixed = fix(
        """
        import argparse

        import numpy as np
        from peft import LoraConfig
        from transformers import AutoModelForCausalLM
        import wandb

        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype="bfloat16").eval()
        """,
        "MP201",
        PRECISION_ONLY,
    )
    assert "from peft import LoraConfig\nimport torch\nfrom transformers import AutoModelForCausalLM\n" in fixed


def test_added_import_in_the_default_order_stays_plain_imports_first():
    fixed = fix(
        """
        import numpy as np
        import wandb
        from peft import LoraConfig
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype="bfloat16").eval()
        """,
        "MP201",
        PRECISION_ONLY,
    )
    assert fixed.startswith("import numpy as np\nimport torch\nimport wandb\nfrom peft import LoraConfig\n")


def test_notebook_probe_after_the_imports_of_a_later_cell():
    """`import torch` in a cell below code: the probe goes after that cell's imports, not
    between `import torch` and the next import (ruff checks E402 per cell)."""
    nb = _notebook(
        "from huggingface_hub import login\nlogin(token='')\n",
        "import torch\nfrom transformers import AutoModelForCausalLM\n\n"
        "model = AutoModelForCausalLM.from_pretrained('m', torch_dtype=torch.bfloat16).eval()\n",
    )
    fixed = json.loads(fix_source(nb, path="nb.ipynb", config=PRECISION_ONLY))
    second = "".join(fixed["cells"][1]["source"])
    assert second.startswith(f"import torch\nfrom transformers import AutoModelForCausalLM\n\n{PROBE}\nBF16_OK = {EXPR}\n")


def test_notebook_import_goes_into_the_import_cell_not_the_install_cell():
    nb = _notebook(
        '%pip install "transformers>=4.40"\n',
        "from transformers import AutoModelForCausalLM\n",
        "model = AutoModelForCausalLM.from_pretrained('m', torch_dtype='bfloat16').eval()\n",
    )
    fixed = json.loads(fix_source(nb, path="nb.ipynb", config=PRECISION_ONLY))
    assert "".join(fixed["cells"][0]["source"]) == '%pip install "transformers>=4.40"\n'  # installs first, untouched
    second = "".join(fixed["cells"][1]["source"])
    assert second.startswith("import torch\nfrom transformers import AutoModelForCausalLM\n\n")
