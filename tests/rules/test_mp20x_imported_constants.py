"""A precision held in another module's module-level variable (``configs/train_config.py``:
``MODEL_DTYPE = torch.bfloat16``) and read through an import (``from configs.train_config import
MODEL_DTYPE``, or ``train_config.MODEL_DTYPE`` of ``from configs import train_config``) is the
value the run uses: the join reads the module's summary of it (review 25b: fine-tune-paligemma
trained pure bf16 with a dtype from its config module; the same load written inline was
reported)."""
import pytest

from conftest import findings_in, write_tree

CONFIG = "import torch\nMODEL_ID = 'google/paligemma'\nMODEL_DTYPE = torch.{dtype}\nUSE_BF16 = {bf16}\n"
LOAD = """
import torch
from transformers import AutoModelForCausalLM
{imports}

model = AutoModelForCausalLM.from_pretrained({model_id}, dtype={dtype})
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
model(torch.ones(1, 4, dtype=torch.long)).logits.sum().backward()
optimizer.step()
"""
IMPORTS = {
    "from-import": ("from configs.train_config import MODEL_DTYPE, MODEL_ID", "MODEL_ID", "MODEL_DTYPE"),
    "module-attribute": ("from configs import train_config", "train_config.MODEL_ID", "train_config.MODEL_DTYPE"),
    "import-as": ("import configs.train_config as tc", "tc.MODEL_ID", "tc.MODEL_DTYPE"),
}


def _codes(root, prefix="MP2"):
    return sorted((d.path.rsplit("/", 1)[-1], d.code) for d in findings_in(root) if d.code.startswith(prefix))


@pytest.mark.parametrize("dtype, found", [("bfloat16", [("train.py", "MP201")]), ("float32", [])])
@pytest.mark.parametrize("how", sorted(IMPORTS))
def test_an_imported_dtype_constant_is_the_runs_dtype(tmp_path, how, dtype, found):
    imports, model_id, written = IMPORTS[how]
    root = write_tree(tmp_path, {
        "configs/__init__.py": "",
        "configs/train_config.py": CONFIG.format(dtype=dtype, bf16="False"),
        "train.py": LOAD.format(imports=imports, model_id=model_id, dtype=written),
    })
    assert _codes(root) == found


@pytest.mark.parametrize("bf16, found", [("True", [("train.py", "MP201")]), ("False", [])])
def test_an_imported_switch_is_its_value(tmp_path, bf16, found):
    root = write_tree(tmp_path, {
        "configs/__init__.py": "",
        "configs/train_config.py": CONFIG.format(dtype="float32", bf16=bf16),
        "train.py": "from transformers import TrainingArguments\nfrom configs.train_config import USE_BF16\n"
        "args = TrainingArguments(output_dir='o', bf16=USE_BF16)\n",
    })
    assert _codes(root) == found


def test_a_key_of_an_imported_configuration_table_is_the_files_value(tmp_path):
    root = write_tree(tmp_path, {
        "settings.py": "import yaml\nCFG = yaml.safe_load(open('c.yaml'))\n",
        "c.yaml": "bf16: true\n",
        "train.py": "from transformers import TrainingArguments\nfrom settings import CFG\n"
        "args = TrainingArguments(output_dir='o', bf16=CFG['bf16'])\n",
    })
    assert _codes(root) == [("train.py", "MP201")]


def test_an_imported_float16_constant_trained_under_fp16_is_mp101(tmp_path):
    root = write_tree(tmp_path, {
        "consts.py": "import torch\nDTYPE = torch.float16\n",
        "train.py": "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments\nfrom consts import DTYPE\n"
        "model = AutoModelForCausalLM.from_pretrained('gpt2', dtype=DTYPE)\n"
        "Trainer(model=model, args=TrainingArguments(output_dir='o', fp16=True)).train()\n",
    })
    assert _codes(root, "MP101") == [("train.py", "MP101")]


def test_an_imported_function_passed_as_a_value_is_no_dtype(tmp_path):
    """``from helpers import pick`` handed on uncalled is the function, not what it returns."""
    root = write_tree(tmp_path, {
        "helpers.py": "import torch\ndef pick():\n    return torch.bfloat16\n",
        "train.py": "from transformers import AutoModelForCausalLM\nfrom helpers import pick\n"
        "model = AutoModelForCausalLM.from_pretrained('gpt2', dtype=pick)\nmodel.generate()\n",
    })
    assert _codes(root) == []
