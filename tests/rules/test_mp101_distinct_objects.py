"""MP101 judges the object a cast makes float16, not every object made the same way: two calls
of one project class (or loader) make two models, and an optimizer of one trains nothing of
the other. In a notebook, a later cell that rebinds the trained name to a new model cast for
inference casts an untrained object (review 26d: meta-learning-textual-inversion's playground,
whose "safe" float32 fix then broke the float16 inputs of that cell)."""
from conftest import findings_in, lint

from precision_lint.workspace.notebook import from_cells

CODE = "MP101"
LOADER = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Linear(width, width)


teacher = Net(64)
student = Net(16)
{cast}
optimizer = torch.optim.AdamW(student.parameters())
scaler = torch.amp.GradScaler("cuda")
for batch in []:
    with torch.autocast("cuda", dtype=torch.float16):
        loss = student(batch).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
"""


def test_a_teacher_of_the_same_class_as_the_student_is_another_object():
    assert lint(LOADER.format(cast="teacher.half()"), CODE) == []


def test_the_trained_student_cast_to_float16_is_reported():
    (d,) = lint(LOADER.format(cast="student.half()"), CODE)
    assert "`student.half()` makes trainable weights float16" in d.message


UTILS = """
from torch import nn


class Predictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Linear(16, 8)
"""
CELLS = [
    "import torch\nfrom accelerate import Accelerator, notebook_launcher\nimport utils",
    "predictor = utils.Predictor()",
    "def training_function():\n"
    "    accelerator = Accelerator(mixed_precision=\"fp16\")\n"
    "    optimizer = accelerator.prepare(torch.optim.AdamW(predictor.parameters()))\n"
    "    predictor.to(accelerator.device, dtype=torch.float16)\n"
    "    for x in []:\n"
    "        accelerator.backward(predictor(x).mean())\n"
    "        optimizer.step()",
    "notebook_launcher(training_function, num_processes=1)",
    "predictor = utils.Predictor()\npredictor.eval().to(\"cuda\", dtype=torch.float16)\n"
    "with torch.no_grad():\n    out = predictor(torch.randn(1, 16, dtype=torch.float16, device=\"cuda\"))",
]


def test_a_later_cell_that_rebinds_the_name_for_inference_casts_no_trained_weights(tmp_path):
    (tmp_path / "utils.py").write_text(UTILS)
    (tmp_path / "playground.ipynb").write_bytes(from_cells(CELLS))
    found = [d for d in findings_in(tmp_path) if d.code == CODE]
    # the training cell's cast only, not the inference cell's
    assert [(d.span.line, d.message.split(" makes")[0]) for d in found] == [
        (10, "`.to(torch.float16)`")
    ]
