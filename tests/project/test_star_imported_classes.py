"""The call graph across ``from losses import *``: a class the importing module calls by the
name the star import binds is built there, and a class named in its own ``super(Cls,
self).__init__()`` is not built by itself (tune 44's M1: a hand-written loss with a clamp the
run's fp16 autocast rounds to 0 went unreported with both)."""
import pytest

from conftest import config, dedent, write_tree
from precision_lint.engine import Engine
from precision_lint.facts.extract import extract_facts

LOSSES = """
import torch
import torch.nn as nn


class ClampedLogLoss(nn.Module):
    def __init__(self, eps=1e-8):
        {init}
        self.eps = eps

    def forward(self, x, y):
        p = torch.sigmoid(x)
        return -(y * torch.log(p.clamp(min=self.eps))).sum()
"""

TRAIN = """
import torch
import torch.nn as nn
{imported}


def fit(model, criterion, opt, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()


model = nn.Linear(16, 1)
fit(model, ClampedLogLoss(), torch.optim.AdamW(model.parameters()), [])
"""


@pytest.mark.parametrize("imported", ["from losses import *", "from losses import ClampedLogLoss"])
@pytest.mark.parametrize("init", ["super(ClampedLogLoss, self).__init__()", "super().__init__()"])
def test_a_loss_built_through_a_star_import_runs_under_the_runs_autocast(tmp_path, imported, init):
    write_tree(tmp_path, {"losses.py": dedent(LOSSES.format(init=init)), "train.py": dedent(TRAIN.format(imported=imported))})
    found = Engine(config(), ["MP402"], jobs=1).run_paths([str(tmp_path)]).diagnostics
    assert [(d.path.rsplit("/", 1)[-1], d.code) for d in found] == [("losses.py", "MP402")]


def test_a_class_named_in_super_or_isinstance_is_no_callee():
    src = dedent(LOSSES.format(init="super(ClampedLogLoss, self).__init__()")) + (
        "\n\ndef count(m):\n    return isinstance(m, ClampedLogLoss)\n"
    )
    edges = extract_facts(src, "losses.py", "losses").call_edges
    assert not any(callee == "losses.ClampedLogLoss" for _, callee in edges)


def test_a_name_a_star_import_binds_is_called_as_this_modules_own_and_a_builtin_is_not():
    src = "from losses import *\nfrom torch.nn import *\n\nloss = ClampedLogLoss()\nprint(len([]))\n"
    edges = extract_facts(src, "train.py", "train").call_edges
    assert ("train", "train.ClampedLogLoss") in edges
    assert not any(callee.endswith((".print", ".len")) for _, callee in edges)
    # a library's star import alone names no project code
    assert not any(c == "train.Linear" for _, c in extract_facts("from torch.nn import *\nLinear(2, 2)\n", "t.py", "t").call_edges)


# --- the library classes a star-imported project class derives from (48c's miss) ---------------
HELPERS = """
from transformers import Trainer, TrainingArguments


class LoggingTrainer(Trainer):
    def log_more(self):
        pass


class RunArguments(TrainingArguments):
    pass


def build(**kwargs):
    return dict(kwargs)
"""

CALLS = """
{imported}

args = RunArguments(output_dir="out", evaluation_strategy="steps")
trainer = LoggingTrainer(model=None, args=args, tokenizer=None)
options = build(tokenizer=None, evaluation_strategy="steps")
"""


@pytest.mark.parametrize("imported", ["from helpers import *", "from helpers import LoggingTrainer, RunArguments, build"])
def test_a_star_imported_trainer_subclass_takes_its_bases_keywords(tmp_path, imported):
    """`from helpers import *` then `LoggingTrainer(..., tokenizer=tok)`: the class is the
    project's Trainer subclass, as with a named import, so `tokenizer=` raises on transformers 5
    (MP301) and so does `evaluation_strategy=` of a TrainingArguments subclass (MP302). A
    function of the same module taking the same keywords is no trainer (its negative)."""
    write_tree(tmp_path, {".git/HEAD": "", "helpers.py": dedent(HELPERS), "train.py": dedent(CALLS.format(imported=imported))})
    cfg = config(transformers_version="5.0")
    found = Engine(cfg, ["MP301", "MP302"], jobs=1).run_paths([str(tmp_path)]).diagnostics
    assert sorted((d.path.rsplit("/", 1)[-1], d.span.line, d.code) for d in found) == [
        ("train.py", 3, "MP302"), ("train.py", 4, "MP301"),
    ]


def test_a_library_star_import_names_no_project_class(tmp_path):
    """`from torch.nn import *` binds library names only: a call of an unbound name there is
    not looked up among the project's modules."""
    write_tree(tmp_path, {".git/HEAD": "", "helpers.py": dedent(HELPERS), "train.py": dedent(CALLS.format(imported="from torch.nn import *"))})
    found = Engine(config(transformers_version="5.0"), ["MP301", "MP302"], jobs=1).run_paths([str(tmp_path)]).diagnostics
    assert found == []
