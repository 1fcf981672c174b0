"""Class 8's story: a teacher loaded in fp16 by a ``load_teacher()`` helper of another module
that freezes it (``requires_grad_(False)``) is not trained, whichever files are named; the same
helper without the freeze, its parameters given to the scaled optimizer, is a finding."""
import pytest
from conftest import config

from precision_lint.engine import Engine

MODELS = """
    import torch
    from transformers import AutoModelForCausalLM

    def load_teacher(name):
        teacher = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.float16)
        {freeze}
        return teacher
    """
TRAIN = """
    import torch
    from transformers import AutoModelForCausalLM
    from models import load_teacher

    teacher = load_teacher("big")
    student = AutoModelForCausalLM.from_pretrained("small")
    optimizer = torch.optim.AdamW(list(student.parameters()) + list(teacher.parameters()))
    scaler = torch.amp.GradScaler("cuda")
    """
NAMES = [(), ("train.py",), ("models.py",)]


def _run(tree, freeze, names):
    root = tree({"models.py": MODELS.format(freeze=freeze), "train.py": TRAIN})
    engine = Engine(config(), ["MP101"], jobs=1)
    paths = [str(root / n) for n in names] if names else [str(root)]
    return [(d.path.replace(str(root) + "/", ""), d.span.line) for d in engine.run_paths(paths).diagnostics]


@pytest.mark.parametrize("names", NAMES)
@pytest.mark.parametrize("freeze", ["teacher.requires_grad_(False)", "teacher.eval().requires_grad_(False)",
                                    "for p in teacher.parameters():\n            p.requires_grad = False"])
def test_a_teacher_frozen_inside_its_loader_is_not_trained(tree, freeze, names):
    assert _run(tree, freeze, names) == []


@pytest.mark.parametrize("names", NAMES)
def test_the_same_teacher_left_trainable_is_a_finding(tree, names):
    assert _run(tree, "teacher.train()", names) == [("models.py", 5)]
