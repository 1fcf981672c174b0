"""MP401 per run: a KD loss is judged with the tensors that reach it in each run.

A loss helper shared by several scripts runs in each script's process with that script's
tensors: a float16 student in one script does not make the loss half in another, a half value
produced only by a run that never calls the loss reaches nothing, and the promotion rule
(a half target with float32 log-probabilities) and autocast are judged run by run. A message
that spans files names the run. Every shape has a positive and a negative case.
"""
from conftest import config

from precision_lint.engine import Engine

CODE = "MP401"

LOSSES = """
    import torch.nn.functional as F

    def kd_loss(student_logits, teacher_logits, T=2.0):
        return F.kl_div(
            F.log_softmax(student_logits / T, dim=-1),
            F.softmax(teacher_logits / T, dim=-1),
            reduction="batchmean",
        ) * T * T
"""

# a distillation script: the student and the teacher loaded with the dtypes given
DISTILL = """
    import torch
    from transformers import AutoModelForCausalLM
    from losses import kd_loss

    student = AutoModelForCausalLM.from_pretrained("small", torch_dtype={student})
    teacher = AutoModelForCausalLM.from_pretrained("big", torch_dtype={teacher})
    teacher.eval()
    opt = torch.optim.AdamW(student.parameters(), lr=1e-4)
    for batch in loader:
        with torch.no_grad():
            t = teacher(**batch).logits
        s = student(**batch).logits
        loss = kd_loss(s, t)
        loss.backward()
        opt.step()
        opt.zero_grad()
"""

F16, F32 = "torch.float16", "torch.float32"


def _lint(tree, files, fix=False):
    root = tree(files)
    return root, Engine(config(), [CODE]).run_paths([str(root / "proj")], fix=fix)


def _name(d) -> str:
    return d.path.replace("\\", "/").rsplit("/", 1)[-1]


# --- one helper, two scripts: each run has its own tensors -------------------------------
def test_a_loss_helper_is_reported_for_the_run_that_passes_half_logits(tree):
    files = {
        "proj/losses.py": LOSSES,
        "proj/distill_fp16.py": DISTILL.format(student=F16, teacher=F16),
        "proj/distill_fp32.py": DISTILL.format(student=F32, teacher=F32),
    }
    root, result = _lint(tree, files)
    (d,) = result.diagnostics
    assert _name(d) == "losses.py" and d.span.line == 4
    assert "runs in float16 in the run of `distill_fp16.py`" in d.message
    assert "distill_fp32.py" not in d.message
    assert {_name_of(r.path) for r in d.related} == {"distill_fp16.py"}


def _name_of(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def test_the_fix_upcasts_inside_the_helper_which_leaves_float32_runs_alone(tree):
    files = {
        "proj/losses.py": LOSSES,
        "proj/distill_fp16.py": DISTILL.format(student=F16, teacher=F16),
        "proj/distill_fp32.py": DISTILL.format(student=F32, teacher=F32),
    }
    root, result = _lint(tree, files, fix=True)
    assert sorted(_name_of(p) for p in result.fixes_applied) == ["losses.py"]
    fixed = result.fixed_texts[str(root / "proj" / "losses.py")]
    assert "F.log_softmax(student_logits.float() / T, dim=-1)" in fixed
    assert "F.softmax(teacher_logits.float() / T, dim=-1)" in fixed


def test_a_float32_run_alone_gives_no_finding(tree):
    files = {"proj/losses.py": LOSSES, "proj/distill_fp32.py": DISTILL.format(student=F32, teacher=F32)}
    assert _lint(tree, files)[1].diagnostics == []


def test_a_script_calling_its_own_loss_is_not_named_as_a_run(tree):
    # the finding lies in the script whose run it is: nothing to name
    script = DISTILL.format(student=F16, teacher=F16).replace(
        "from losses import kd_loss", "import torch.nn.functional as F\n\n    " + LOSSES.strip().split("\n", 2)[2].strip()
    )
    (d,) = _lint(tree, {"proj/distill.py": script})[1].diagnostics
    assert "in the run of" not in d.message


# --- a half value only an unrelated run produces ------------------------------------------
DISTILLER = """
    import torch.nn.functional as F

    class Distiller:
        def __init__(self, student, teacher, T=2.0):
            self.student = student
            self.teacher = teacher
            self.T = T

        def loss(self, batch):
            t = self.teacher(**batch).logits
            s = self.student(**batch).logits
            return F.kl_div(F.log_softmax(s / self.T, -1), F.softmax(t / self.T, -1), reduction="batchmean")
"""

TRAIN_DISTILLER = """
    import torch
    from transformers import AutoModelForCausalLM
    from distiller import Distiller

    student = AutoModelForCausalLM.from_pretrained("small", torch_dtype={dtype})
    teacher = AutoModelForCausalLM.from_pretrained("big", torch_dtype={dtype})
    distiller = Distiller(student, teacher)
    opt = torch.optim.AdamW(student.parameters(), lr=1e-4)
    for batch in loader:
        loss = distiller.loss(batch)
        loss.backward()
        opt.step()
"""

# an export CLI of the same package: builds the distiller in float16 to save its student, and
# never computes the loss
EXPORT = """
    import torch
    from transformers import AutoModelForCausalLM
    from distiller import Distiller

    student = AutoModelForCausalLM.from_pretrained("ckpt", torch_dtype=torch.float16)
    teacher = AutoModelForCausalLM.from_pretrained("big", torch_dtype=torch.float16)
    distiller = Distiller(student, teacher)
    distiller.student.save_pretrained("export-fp16")
"""


def test_a_half_value_only_a_run_that_never_calls_the_loss_produces_is_not_the_losss(tree):
    files = {
        "proj/distiller.py": DISTILLER,
        "proj/train.py": TRAIN_DISTILLER.format(dtype=F32),
        "proj/export.py": EXPORT,
    }
    assert _lint(tree, files)[1].diagnostics == []


def test_the_same_package_whose_training_run_is_half_is_reported(tree):
    files = {
        "proj/distiller.py": DISTILLER,
        "proj/train.py": TRAIN_DISTILLER.format(dtype=F16),
        "proj/export.py": EXPORT,
    }
    (d,) = _lint(tree, files)[1].diagnostics
    assert _name(d) == "distiller.py" and "in the run of `train.py`" in d.message
    assert "export.py" not in d.message


# --- the promotion rule per run ----------------------------------------------------------
def test_a_half_teacher_target_with_float32_student_log_probabilities_is_promoted_in_its_run(tree):
    files = {"proj/losses.py": LOSSES, "proj/distill_a.py": DISTILL.format(student=F32, teacher=F16)}
    assert _lint(tree, files)[1].diagnostics == []


def test_promotion_is_judged_per_run(tree):
    # run a: only the teacher's target is half (promoted to float32, no finding);
    # run b: the student is half: reported for run b, with run b's tensors
    files = {
        "proj/losses.py": LOSSES,
        "proj/distill_a.py": DISTILL.format(student=F32, teacher=F16),
        "proj/distill_b.py": DISTILL.format(student=F16, teacher=F32),
    }
    (d,) = _lint(tree, files)[1].diagnostics
    assert "in the run of `distill_b.py`" in d.message
    assert "`student_logits` may be half" in d.message and "`teacher_logits` may be half" not in d.message
    assert {_name_of(r.path) for r in d.related} == {"distill_b.py"}
    root, result = _lint(tree, files, fix=True)
    fixed = result.fixed_texts[str(root / "proj" / "losses.py")]
    # run b's student is upcast; run a's half target already meets float32 log-probabilities
    assert "F.log_softmax(student_logits.float() / T, dim=-1)" in fixed
    assert "F.softmax(teacher_logits / T, dim=-1)" in fixed


# --- autocast per run --------------------------------------------------------------------
# the fp16 models reach the method through __init__; whether the method runs under autocast
# is decided by each run's call
TRAIN_AUTOCAST = """
    import torch
    from transformers import AutoModelForCausalLM
    from distiller import Distiller

    student = AutoModelForCausalLM.from_pretrained("small", torch_dtype={dtype})
    teacher = AutoModelForCausalLM.from_pretrained("big", torch_dtype={dtype})
    distiller = Distiller(student, teacher)
    opt = torch.optim.AdamW(student.parameters(), lr=1e-4)
    for batch in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = distiller.loss(batch)
        loss.backward()
        opt.step()
"""


def test_a_loss_only_called_under_autocast_in_its_run_is_not_half_there(tree):
    # the autocast run has half models; the other run calls the loss outside autocast with
    # float32 models: neither run computes the loss in float16
    files = {
        "proj/distiller.py": DISTILLER,
        "proj/train_amp.py": TRAIN_AUTOCAST.format(dtype=F16),
        "proj/train_plain.py": TRAIN_DISTILLER.format(dtype=F32),
    }
    assert _lint(tree, files)[1].diagnostics == []


def test_a_loss_called_without_autocast_in_another_run_is_reported_for_that_run(tree):
    files = {
        "proj/distiller.py": DISTILLER,
        "proj/train_amp.py": TRAIN_AUTOCAST.format(dtype=F16),
        "proj/train_plain.py": TRAIN_DISTILLER.format(dtype=F16),
    }
    (d,) = _lint(tree, files)[1].diagnostics
    assert "in the run of `train_plain.py`" in d.message
    assert "train_amp.py" not in d.message


# --- a loss that runs in no run -----------------------------------------------------------
KD_TRAINER = """
    import torch
    import torch.nn.functional as F
    from transformers import AutoModelForCausalLM, Trainer

    class KD(Trainer):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.teacher = AutoModelForCausalLM.from_pretrained("t", dtype=torch.float16)

        def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
            s = model(**inputs).logits.half()
            t = self.teacher(**inputs).logits
            return F.kl_div(F.log_softmax(s / 2, -1), F.softmax(t / 2, -1), reduction="batchmean")
"""


def test_a_kd_trainer_that_a_run_creates_is_judged(tree):
    train = """
        from kd import KD
        KD(model=student, args=args, train_dataset=data).train()
    """
    (d,) = _lint(tree, {"proj/kd.py": KD_TRAINER, "proj/train.py": train})[1].diagnostics
    assert _name(d) == "kd.py" and "in the run of `train.py`" in d.message


def test_a_kd_trainer_that_no_run_creates_runs_nowhere(tree):
    # its compute_loss is a method of a class nobody creates: it never runs (the runs model of
    # MP101 and MP402 too)
    train = """
        from kd import KD
        print(KD.__name__)
    """
    assert _lint(tree, {"proj/kd.py": KD_TRAINER, "proj/train.py": train})[1].diagnostics == []


# --- a float16 made in a shared module from the dtype one run passes ----------------------
# the model is made in models.py (in every run) with the dtype that the Distiller's caller
# passes: which run it is half in is the run of that caller, not of the file that makes it
LOADER = """
    from transformers import AutoModelForCausalLM

    def load(name, dtype):
        return AutoModelForCausalLM.from_pretrained(name, torch_dtype=dtype)
"""

DISTILLER_LOADS = """
    import torch.nn.functional as F
    from models import load

    class Distiller:
        def __init__(self, dtype, T=2.0):
            self.student = load("s", dtype)
            self.teacher = load("t", dtype)
            self.T = T

        def loss(self, batch):
            t = self.teacher(**batch).logits
            s = self.student(**batch).logits
            return F.kl_div(F.log_softmax(s / self.T, -1), F.softmax(t / self.T, -1), reduction="batchmean")
"""

TRAIN_LOADS = """
    import torch
    from distiller import Distiller

    distiller = Distiller({dtype})
    opt = torch.optim.AdamW(distiller.student.parameters(), lr=1e-4)
    for batch in loader:
        loss = distiller.loss(batch)
        loss.backward()
        opt.step()
"""

EXPORT_LOADS = """
    import torch
    from distiller import Distiller

    distiller = Distiller(torch.float16)
    distiller.student.save_pretrained("export-fp16")
"""


def test_a_model_a_shared_loader_makes_half_for_another_run_is_not_this_runs(tree):
    files = {
        "proj/models.py": LOADER,
        "proj/distiller.py": DISTILLER_LOADS,
        "proj/train.py": TRAIN_LOADS.format(dtype=F32),
        "proj/export.py": EXPORT_LOADS,
    }
    assert _lint(tree, files)[1].diagnostics == []


def test_a_model_a_shared_loader_makes_half_for_this_run_is_reported(tree):
    files = {
        "proj/models.py": LOADER,
        "proj/distiller.py": DISTILLER_LOADS,
        "proj/train.py": TRAIN_LOADS.format(dtype=F16),
        "proj/export.py": EXPORT_LOADS.replace("torch.float16", "torch.float32"),
    }
    (d,) = _lint(tree, files)[1].diagnostics
    assert "in the run of `train.py`" in d.message and "float16 as given in train.py" in d.message
