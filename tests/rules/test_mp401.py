"""MP401 kd-loss-in-half-precision: before/after for every KD shape, the negatives, the modes."""
import pytest

from conftest import config, dedent, fix, lint
from precision_lint.workspace.config import ConfigError
from precision_lint.diagnostics import SAFE, UNSAFE

CODE = "MP401"

HEAD = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import AutoModelForCausalLM
"""


def case(body: str) -> str:
    return dedent(HEAD) + dedent(body)


FIXES = [
    pytest.param(  # a helper in the project; an fp16 teacher, the student's logits from fp16 autocast
        """
        teacher = AutoModelForCausalLM.from_pretrained("big", torch_dtype=torch.float16)
        student = AutoModelForCausalLM.from_pretrained("small")

        def kd_loss(s_logits, t_logits, T=2.0):
            log_p = F.log_softmax(s_logits / T, dim=-1)
            q = F.softmax(t_logits / T, dim=-1)
            return F.kl_div(log_p, q, reduction="batchmean") * T * T

        for batch in loader:
            with torch.no_grad():
                t_out = teacher(**batch)
            with torch.autocast("cuda", dtype=torch.float16):
                s_out = student(**batch)
            loss = kd_loss(s_out.logits, t_out.logits)
        """,
        """
        teacher = AutoModelForCausalLM.from_pretrained("big", torch_dtype=torch.float16)
        student = AutoModelForCausalLM.from_pretrained("small")

        def kd_loss(s_logits, t_logits, T=2.0):
            log_p = F.log_softmax(s_logits.float() / T, dim=-1)
            q = F.softmax(t_logits.float() / T, dim=-1)
            return F.kl_div(log_p, q, reduction="batchmean") * T * T

        for batch in loader:
            with torch.no_grad():
                t_out = teacher(**batch)
            with torch.autocast("cuda", dtype=torch.float16):
                s_out = student(**batch)
            loss = kd_loss(s_out.logits, t_out.logits)
        """,
        id="kl_div-helper-fp16-teacher-autocast-student",
    ),
    pytest.param(  # both models `.half()`; the full module path; `.to(torch.float16)` tensors
        """
        student = build().half()
        teacher = build()
        teacher.half()
        s = student(x)
        t = teacher(x).to(torch.float16)
        loss = torch.nn.functional.kl_div(
            torch.nn.functional.log_softmax(s / 4.0, dim=-1),
            torch.nn.functional.softmax(t / 4.0, dim=-1),
            reduction="batchmean",
        )
        """,
        """
        student = build().half()
        teacher = build()
        teacher.half()
        s = student(x)
        t = teacher(x).to(torch.float16)
        loss = torch.nn.functional.kl_div(
            torch.nn.functional.log_softmax(s.float() / 4.0, dim=-1),
            torch.nn.functional.softmax(t.float() / 4.0, dim=-1),
            reduction="batchmean",
        )
        """,
        id="kl_div-half-models",
    ),
    pytest.param(  # nn.KLDivLoss: called inline and through a variable; softmax(...).log() → log_softmax
        """
        s = logits_s.half()
        t = logits_t.half()
        crit = nn.KLDivLoss(reduction="batchmean")
        a = crit(F.softmax(s / T, dim=-1).log(), F.softmax(t / T, dim=-1))
        b = nn.KLDivLoss(reduction="sum")(torch.log(F.softmax(s / T, -1)), F.softmax(t / T, -1))
        """,
        """
        s = logits_s.half()
        t = logits_t.half()
        crit = nn.KLDivLoss(reduction="batchmean")
        a = crit(F.log_softmax(s.float() / T, dim=-1), F.softmax(t.float() / T, dim=-1))
        b = nn.KLDivLoss(reduction="sum")(F.log_softmax(s.float() / T, -1), F.softmax(t.float() / T, -1))
        """,
        id="KLDivLoss-and-log-of-softmax",
    ),
    pytest.param(  # a manual KL with an epsilon that fp16 loses
        """
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)
        s = model(**a).logits
        t = model(**b).logits.detach()
        p_t = F.softmax(t / T, dim=-1)
        kl = (p_t * (torch.log(p_t + 1e-8) - F.log_softmax(s / T, dim=-1))).sum(-1).mean()
        """,
        """
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)
        s = model(**a).logits
        t = model(**b).logits.detach()
        p_t = F.softmax(t.float() / T, dim=-1)
        kl = (p_t * (F.log_softmax(t.float() / T, dim=-1) - F.log_softmax(s.float() / T, dim=-1))).sum(-1).mean()
        """,
        id="manual-kl",
    ),
    pytest.param(  # soft-target cross entropy, by hand and with F.cross_entropy
        """
        s = student_logits.to(dtype=torch.float16)
        t = teacher_logits.half()
        ce1 = -(F.softmax(t / T, dim=-1) * F.log_softmax(s / T, dim=-1)).sum(-1).mean()
        ce2 = F.cross_entropy(s / T, F.softmax(t / T, dim=-1))
        """,
        """
        s = student_logits.to(dtype=torch.float16)
        t = teacher_logits.half()
        ce1 = -(F.softmax(t.float() / T, dim=-1) * F.log_softmax(s.float() / T, dim=-1)).sum(-1).mean()
        ce2 = F.cross_entropy(s.float() / T, F.softmax(t.float() / T, dim=-1))
        """,
        id="soft-target-cross-entropy",
    ),
]


# Only the target of a kl_div is float16 (a frozen fp16 teacher's probabilities) and the
# student's log-probabilities are not: kl_div computes in the promoted dtype, float32 (finite,
# ~2e-5 relative from the float32 loss). Not a finding, and "runs in float16" would be false.
PROMOTED = [
    pytest.param(  # a helper in the project; the teacher is loaded in fp16, the student is fp32
        """
        teacher = AutoModelForCausalLM.from_pretrained("big", torch_dtype=torch.float16)
        student = AutoModelForCausalLM.from_pretrained("small")

        def kd_loss(s_logits, t_logits, T=2.0):
            log_p = F.log_softmax(s_logits / T, dim=-1)
            q = F.softmax(t_logits / T, dim=-1)
            return F.kl_div(log_p, q, reduction="batchmean") * T * T

        for batch in loader:
            with torch.no_grad():
                t_out = teacher(**batch)
            loss = kd_loss(student(**batch).logits, t_out.logits)
        """,
        id="kl_div-helper-fp16-teacher",
    ),
    pytest.param(  # a criterion held on self, tensor methods, log_target=True
        """
        class Distiller(nn.Module):
            def __init__(self, teacher):
                super().__init__()
                self.teacher = teacher.half()
                self.kl = nn.KLDivLoss(reduction="batchmean", log_target=True)

            def forward(self, x, s_logits):
                t_logits = self.teacher(x)
                return self.kl((s_logits / self.T).log_softmax(-1), (t_logits / self.T).log_softmax(-1))
        """,
        id="self-criterion-log_target-methods",
    ),
    pytest.param(  # an expression as logits gets parentheses
        """
        t = teacher_out.half()
        q = F.softmax((t - t.max()) / T, dim=-1)
        loss = F.kl_div(F.log_softmax(s / T, -1), q)
        """,
        id="parenthesised-logits",
    ),
    pytest.param(  # CLIP: clip.load returns fp16 weights on CUDA
        """
        import clip
        model, preprocess = clip.load("ViT-B/32", device="cuda")
        logits_per_image, _ = model(images, texts)
        loss = F.kl_div(F.log_softmax(student_logits / T, -1), F.softmax(logits_per_image / T, -1))
        """,
        id="clip-load",
    ),
    pytest.param(  # teacher logits computed under fp16 autocast, the loss outside it
        """
        model = build().cuda()
        with torch.autocast("cuda", dtype=torch.float16):
            t = model(x)
        loss = F.kl_div(F.log_softmax(s / T, -1), F.softmax(t / T, -1))
        """,
        id="autocast-output-used-outside",
    ),
    pytest.param(  # a Trainer subclass: the fp16 teacher reaches compute_loss through __init__
        """
        from transformers import Trainer

        class DistillTrainer(Trainer):
            def __init__(self, *args, teacher_model=None, temperature=2.0, **kwargs):
                super().__init__(*args, **kwargs)
                self.teacher = teacher_model
                self.T = temperature

            def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
                out = model(**inputs)
                with torch.no_grad():
                    t_logits = self.teacher(**inputs).logits
                kd = F.kl_div(
                    F.log_softmax(out.logits / self.T, dim=-1),
                    F.softmax(t_logits / self.T, dim=-1),
                    reduction="batchmean",
                )
                return kd

        teacher = AutoModelForCausalLM.from_pretrained("big", torch_dtype=torch.float16)
        trainer = DistillTrainer(model=student, args=args, teacher_model=teacher)
        """,
        id="trainer-compute_loss",
    ),
]


@pytest.mark.parametrize("src", PROMOTED)
def test_a_half_target_of_kl_div_with_float32_log_probabilities_is_promoted(src):
    assert lint(case(src), CODE) == []


@pytest.mark.parametrize("before, after", FIXES)
def test_fix(before, after):
    before, after = case(before), case(after)
    assert lint(before, CODE), "expected a finding"
    fixed = fix(before, CODE)
    assert fixed == after
    assert lint(fixed, CODE) == []  # a second run finds nothing
    assert fix(fixed, CODE) == fixed  # idempotent


NEGATIVES = [
    pytest.param(  # logits upcast before the softmax, three spellings
        """
        teacher = AutoModelForCausalLM.from_pretrained("big", torch_dtype=torch.float16)
        t = teacher(**batch).logits
        a = F.kl_div(F.log_softmax(s / T, -1), F.softmax(t.float() / T, -1))
        b = F.kl_div(F.log_softmax(s / T, -1), F.softmax(t.to(torch.float32) / T, -1))
        t64 = t.double()
        c = F.kl_div(F.log_softmax(s / T, -1), F.softmax(t64 / T, -1))
        """,
        id="upcast",
    ),
    pytest.param(  # fp32 weights under fp16 autocast: autocast runs softmax/kl_div in fp32
        """
        scaler = torch.cuda.amp.GradScaler()
        with torch.autocast("cuda", dtype=torch.float16):
            s = student(x)
            t = teacher(x)
            loss = F.kl_div(F.log_softmax(s / T, -1), F.softmax(t / T, -1), reduction="batchmean")
        """,
        id="autocast-region",
    ),
    pytest.param(  # no fp16 anywhere
        """
        teacher = AutoModelForCausalLM.from_pretrained("big")
        t = teacher(**batch).logits
        loss = F.kl_div(F.log_softmax(s / T, -1), F.softmax(t / T, -1))
        """,
        id="no-fp16",
    ),
    pytest.param(  # bf16 has fp32's range: not this rule's business
        """
        teacher = AutoModelForCausalLM.from_pretrained("big", torch_dtype=torch.bfloat16)
        t = teacher(**batch).logits
        loss = F.kl_div(F.log_softmax(s / T, -1), F.softmax(t / T, -1))
        """,
        id="bf16",
    ),
    pytest.param(  # hard labels: an ordinary cross entropy, not distillation
        """
        logits = model(x).half()
        loss = F.cross_entropy(logits, labels)
        """,
        id="hard-label-ce",
    ),
    pytest.param(  # a reassigned model: the last assignment wins
        """
        teacher = AutoModelForCausalLM.from_pretrained("big", torch_dtype=torch.float16)
        teacher = teacher.float()
        t = teacher(**batch).logits
        loss = F.kl_div(F.log_softmax(s / T, -1), F.softmax(t / T, -1))
        """,
        id="reassigned-to-fp32",
    ),
    pytest.param(  # a helper whose callers pass fp32 logits
        """
        def kd(s, t, T):
            return F.kl_div(F.log_softmax(s / T, -1), F.softmax(t / T, -1))
        kd(student(x), teacher(x).float(), 2.0)
        """,
        id="helper-fp32-callers",
    ),
    pytest.param(  # the entropy of one distribution: no student meets the teacher (review 26b)
        """
        teacher = AutoModelForCausalLM.from_pretrained("big", torch_dtype=torch.float16)
        t = teacher(**batch).logits
        probs = F.softmax(t, dim=-1)
        entropy = -torch.sum(probs * F.log_softmax(t, dim=-1), dim=-1)
        """,
        id="entropy-of-one-distribution",
    ),
]


@pytest.mark.parametrize("src", NEGATIVES)
def test_negatives(src):
    assert lint(case(src), CODE) == []


def test_message_says_why_and_where():
    src = case(FIXES[0].values[0])
    (d,) = lint(src, CODE)
    assert d.span.line == 11  # the kl_div call in the helper
    assert "`t_logits` may be half" in d.message
    assert "torch_dtype=torch.float16" in d.message and "(line 5)" in d.message
    assert ("train.py", 5) in [(r.path, r.span.line) for r in d.related]
    assert "65504" in d.message and "NaN" in d.message
    assert d.fix.applicability == SAFE


COMPUTE_LOSS = """
    from transformers import Trainer

    class DistillTrainer(Trainer):
        def __init__(self, *args, teacher_model=None, temperature=2.0, **kwargs):
            super().__init__(*args, **kwargs)
            self.teacher = teacher_model
            self.T = temperature

        def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
            out = model(**inputs)
            with torch.no_grad():
                t_logits = self.teacher(**inputs).logits
            p_t = F.softmax(t_logits / self.T, dim=-1)
            return (p_t * (p_t.log() - F.log_softmax(out.logits / self.T, dim=-1))).sum(-1).mean()

    teacher = AutoModelForCausalLM.from_pretrained("big", torch_dtype=torch.float16)
    trainer = DistillTrainer(model=student, args=args, teacher_model=teacher)
"""


def test_compute_loss_message_mentions_trainer_autocast():
    # a manual KL: `p_t.log()` of an fp16 probability that rounded to 0 is -inf, and 0 * -inf is NaN
    (d,) = lint(case(COMPUTE_LOSS), CODE)
    assert "does not cover a teacher called in compute_loss" in d.message


def test_tiny_constants_reported_on_half_losses_only():
    src = case(
        """
        t = teacher_logits.half()
        p = F.softmax(t / T, -1)
        q = F.softmax(s / T, -1)
        kd = (p * (torch.log(p.clamp(min=1e-12)) - torch.log(q + 1e-8))).sum(-1).mean()
        """
    )
    found = lint(src, CODE)
    tiny = [d for d in found if "rounds to 0" in d.message]
    # 1e-12 guards the half teacher side; 1e-8 guards the fp32 student side and stays useful
    assert [d.span.line for d in tiny] == [8] and "`1e-12`" in tiny[0].message
    assert tiny[0].fix is None
    fixed = fix(src, CODE)
    assert "F.log_softmax(t.float() / T, -1)" in fixed and "1e-12" not in fixed
    assert "torch.log(q + 1e-8)" in fixed  # the student side is left alone
    assert lint(fixed, CODE) == []


def test_representable_epsilon_is_kept():
    # 1e-6 survives in fp16 (a subnormal): dropping it would change results, so only upcast
    src = case(
        """
        t = teacher_logits.half()
        p = F.softmax(t / T, -1)
        kd = (p * (torch.log(p + 1e-6) - F.log_softmax(s / T, -1))).sum(-1)
        """
    )
    fixed = fix(src, CODE)
    assert "torch.log(p + 1e-6)" in fixed and "F.softmax(t.float() / T, -1)" in fixed
    assert lint(fixed, CODE) == []


def test_helper_in_another_file(tree):
    from precision_lint.engine import Engine

    root = tree(
        {
            "losses.py": """
                import torch.nn.functional as F

                def distill(student_logits, teacher_logits, T=4.0):
                    return F.kl_div(
                        F.log_softmax(student_logits / T, dim=-1),
                        F.softmax(teacher_logits / T, dim=-1),
                        reduction="batchmean",
                    ) * T * T
            """,
            "train.py": """
                import torch
                from losses import distill
                from transformers import AutoModel
                teacher = AutoModel.from_pretrained("t", torch_dtype=torch.float16)
                loss = distill(student(x).half(), teacher(x))
            """,
            "other.py": """
                from losses import distill
                loss = distill(a, b)
            """,
        }
    )
    engine = Engine(config(), [CODE])
    result = engine.run_paths([str(root)], fix=True)
    assert sorted(root.joinpath(p).name for p in result.fixes_applied) == ["losses.py"]
    fixed = result.fixed_texts[str(root / "losses.py")]
    assert "F.softmax(teacher_logits.float() / T, dim=-1)" in fixed
    assert "F.log_softmax(student_logits.float() / T, dim=-1)" in fixed  # the student's are half too


def test_noqa():
    src = case(
        """
        t = logits.half()
        loss = F.kl_div(F.log_softmax(s / T, -1), F.softmax(t / T, -1))  # noqa: MP401
        """
    )
    assert lint(src, CODE) == []


SEED = """
s = student(x).half()
t = teacher(x).half()
loss = F.kl_div(F.log_softmax(s / T, -1), F.softmax(t / T, -1), reduction="batchmean")
"""


def test_mode_upcast_and_clamp():
    cfg = config(transformers_version="5.23", rules={CODE: {"mode": "upcast-and-clamp"}})
    src = case(SEED)
    (d,) = lint(src, CODE, cfg)
    assert d.fix.applicability == SAFE  # B = 65504 touches no finite half logit
    fixed = fix(src, CODE, cfg)
    assert (
        'F.kl_div(F.log_softmax(s.float().clamp(-65504.0, 65504.0) / T, -1), '
        'F.softmax(t.float().clamp(-65504.0, 65504.0) / T, -1), reduction="batchmean")'
    ) in fixed
    assert lint(fixed, CODE, cfg) == [] and fix(fixed, CODE, cfg) == fixed
    # code already upcast gets the clamp only
    upcast_only = fix(src, CODE)
    assert lint(upcast_only, CODE, cfg)
    assert "s.float().clamp(-65504.0, 65504.0) / T" in fix(upcast_only, CODE, cfg)


def test_small_clamp_bound_is_unsafe():
    cfg = config(transformers_version="5.23", rules={CODE: {"mode": "upcast-and-clamp", "logit-clamp": 30}})
    (d,) = lint(case(SEED), CODE, cfg)
    assert d.fix.applicability == UNSAFE
    assert fix(case(SEED), CODE, cfg) == case(SEED)  # held back without --unsafe-fixes
    assert "s.float().clamp(-30.0, 30.0)" in fix(case(SEED), CODE, cfg, unsafe=True)


def test_mode_clamp_is_seed_compatible_and_unsafe():
    cfg = config(transformers_version="5.23", rules={CODE: {"mode": "clamp", "logit-clamp": 5}})
    src = case(SEED)
    (d,) = lint(src, CODE, cfg)
    assert d.fix.applicability == UNSAFE
    assert fix(src, CODE, cfg) == src
    fixed = fix(src, CODE, cfg, unsafe=True)
    assert "F.log_softmax(s.clamp(-5.0, 5.0) / T, -1), F.softmax(t.clamp(-5.0, 5.0) / T, -1)" in fixed
    assert lint(fixed, CODE, cfg) == []
    # already-clamped seed code is what this mode wants; the default mode still reports it
    assert lint(fixed, CODE)


@pytest.mark.parametrize(
    "options, error",
    [
        ({"mode": "fp32"}, "must be one of upcast, upcast-and-clamp, clamp"),
        ({"logit-clamp": "big"}, "must be a float"),
        ({"logit-clamp": -1.0}, "must be positive"),
        ({"clamp": 5}, "unknown option"),
    ],
)
def test_option_validation(options, error):
    with pytest.raises(ConfigError, match=error):
        lint(case(SEED), CODE, config(rules={CODE: options}))


def test_fix_leaves_weight_dtypes_alone():
    # MP101 owns the weights' dtype; this rule only edits the loss expressions
    src = case(FIXES[0].values[0])
    fixed = fix(src, CODE)
    assert 'from_pretrained("big", torch_dtype=torch.float16)' in fixed
    changed = [(a, b) for a, b in zip(src.splitlines(), fixed.splitlines()) if a != b]
    assert changed == [
        ("    log_p = F.log_softmax(s_logits / T, dim=-1)", "    log_p = F.log_softmax(s_logits.float() / T, dim=-1)"),
        ("    q = F.softmax(t_logits / T, dim=-1)", "    q = F.softmax(t_logits.float() / T, dim=-1)"),
    ]


def test_seed_002_style_script():
    # seed 002: dtype from the command line, logits clamped to ±5, loss still in fp16
    src = dedent(
        """
        import argparse
        import torch
        import torch.nn.functional as F
        from transformers import AutoModelForCausalLM

        parser = argparse.ArgumentParser()
        parser.add_argument("--model_dtype", default="float16", choices=["float16", "float32"])
        args = parser.parse_args()
        dtype = getattr(torch, args.model_dtype)
        teacher = AutoModelForCausalLM.from_pretrained("t", torch_dtype=dtype).eval()
        student = AutoModelForCausalLM.from_pretrained("s", torch_dtype=dtype)

        def compute_losses(batch, T):
            logits = student(**batch).logits
            logits = torch.clamp(logits, -5, 5)  # Conservative range for stability
            with torch.no_grad():
                t_logits = teacher(**batch).logits
            kd = F.kl_div(F.log_softmax(logits / T, dim=-1), F.softmax(t_logits / T, dim=-1), reduction="batchmean")
            ce = F.cross_entropy(logits.view(-1, logits.size(-1)), batch["labels"].view(-1))
            return kd * T * T, ce
        """
    )
    (d,) = lint(src, CODE)
    assert d.span.line == 18 and "`torch_dtype=dtype` (line 10)" in d.message
    fixed = fix(src, CODE)
    assert (
        "F.kl_div(F.log_softmax(logits.float() / T, dim=-1), F.softmax(t_logits.float() / T, dim=-1), "
        in fixed
    )
    assert "torch.clamp(logits, -5, 5)" in fixed  # the user's own clamp is theirs to remove
    assert lint(fixed, CODE) == []


def test_together_with_the_other_rules():
    # a trainable fp16 student under a GradScaler (MP101's business) and a frozen fp16 teacher:
    # every rule's fixes apply in one run, and a second run reports nothing from MP101 or MP401
    src = dedent(
        """
        import torch
        import torch.nn.functional as F
        from transformers import AutoModelForCausalLM

        student = AutoModelForCausalLM.from_pretrained("s", torch_dtype=torch.float16).cuda()
        teacher = AutoModelForCausalLM.from_pretrained("t", torch_dtype=torch.float16).cuda().eval()
        teacher.requires_grad_(False)
        optimizer = torch.optim.AdamW(student.parameters(), lr=5e-5)
        scaler = torch.cuda.amp.GradScaler()
        for batch in loader:
            with torch.no_grad():
                t_logits = teacher(**batch).logits
            s_logits = student(**batch).logits
            loss = F.kl_div(F.log_softmax(s_logits / 2.0, dim=-1), F.softmax(t_logits / 2.0, dim=-1),
                            reduction="batchmean")
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
        """
    )
    assert lint(src, CODE)
    fixed = fix(src)  # every rule
    assert "F.softmax(t_logits.float() / 2.0, dim=-1)" in fixed  # the frozen teacher's softmax
    # the frozen fp16 teacher keeps its weights: only the loss expression is this rule's
    # (and MP304 spells the deprecated `torch_dtype` as `dtype`)
    assert 'from_pretrained("t", dtype=torch.float16)' in fixed
    assert [d for d in lint(fixed) if d.code in ("MP101", CODE)] == []
    assert fix(fixed) == fixed


def test_disabled_autocast_does_not_protect():
    src = case(
        """
        s = student_logits.half()
        t = teacher_logits.half()
        with torch.autocast("cuda", enabled=False):
            loss = F.kl_div(F.log_softmax(s / T, -1), F.softmax(t / T, -1))
        """
    )
    assert lint(src, CODE)
    enabled = src.replace("enabled=False", "enabled=True")
    assert lint(enabled, CODE) == []  # softmax under autocast runs in fp32


def test_cross_entropy_criterion_with_soft_targets():
    before = case(
        """
        ce = nn.CrossEntropyLoss()
        t = teacher(x).half()
        soft = ce(student_logits / T, F.softmax(t / T, dim=-1))
        hard = ce(t, labels)
        """
    )
    (d,) = lint(before, CODE)
    assert d.span.line == 7 and "nn.CrossEntropyLoss with soft targets" in d.message
    assert "F.softmax(t.float() / T, dim=-1)" in fix(before, CODE)


def test_log_of_softmax_imported_by_name():
    before = dedent(
        """
        import torch
        from torch.nn.functional import softmax, kl_div
        t = teacher(x).half()
        s = student(x).half()
        loss = kl_div(torch.log(softmax(s / 2, dim=-1)), softmax(t / 2, dim=-1))
        """
    )
    fixed = fix(before, CODE)
    assert (
        "kl_div(torch.nn.functional.log_softmax(s.float() / 2, dim=-1), softmax(t.float() / 2, dim=-1))"
        in fixed
    )
    assert lint(fixed, CODE) == []


def test_teacher_loaded_in_init_of_a_trainer_subclass():
    src = case(
        """
        from transformers import Trainer

        class KD(Trainer):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                self.teacher = AutoModelForCausalLM.from_pretrained("t", dtype=torch.float16)

            def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
                s = model(**inputs).logits
                t = self.teacher(**inputs).logits
                return (F.softmax(t / 2, -1) * (F.log_softmax(t / 2, -1) - F.log_softmax(s / 2, -1))).sum(-1).mean()

        KD(model=student, args=args, train_dataset=data).train()
        """
    )
    (d,) = lint(src, CODE)
    assert "manual KL divergence" in d.message and "`dtype=torch.float16`" in d.message
    fixed = fix(src, CODE)
    assert "(F.softmax(t.float() / 2, -1) * (F.log_softmax(t.float() / 2, -1) - F.log_softmax(s / 2, -1)))" in fixed


def test_only_constants_that_round_to_zero_are_reported():
    src = case(
        """
        t = teacher_logits.half()
        p = F.softmax(t / T, -1)
        a = (p * (torch.log(p + 1e-9) - torch.log(p.clamp(min=4e-8)))).sum(-1)
        """
    )
    tiny = [d for d in lint(src, CODE) if "rounds to 0" in d.message]
    assert [d.message.split("`")[1] for d in tiny] == ["1e-9"]  # 4e-8 rounds to 2**-24, not 0


def test_facts_are_picklable():
    import pickle

    from precision_lint.facts.extract import extract_facts

    facts = extract_facts(case(FIXES[-1].values[0]), "train.py", "train")
    again = pickle.loads(pickle.dumps(facts))
    assert again.sections["kd"] == facts.sections["kd"] and facts.sections["kd"]["losses"]


def test_odd_code_does_not_crash():
    src = case(
        """
        a = b
        b = a
        a(F.log_softmax(x.half(), -1), F.softmax(y.half(), -1))
        x = x
        loss = F.kl_div(F.log_softmax(x / T, -1), F.softmax((((y))) / T, -1), reduction="sum")
        weird = F.kl_div(F.log_softmax(), target=None)
        """
    )
    assert lint(src, CODE) == []


def test_helper_called_inside_autocast():
    # autocast is dynamically scoped: a helper called inside the region runs its softmax in fp32
    src = case(
        """
        def kd_loss(s, t, T=2.0):
            return F.kl_div(F.log_softmax(s / T, -1), F.softmax(t / T, -1), reduction="batchmean")

        with torch.autocast("cuda", dtype=torch.float16):
            s = student(x)
            t = teacher(x)
            loss = kd_loss(s, t)
        """
    )
    assert lint(src, CODE) == []
    # the same helper called after the region gets float16 logits (autocast's outputs)
    outside = src.replace("    loss = kd_loss(s, t)", "loss = kd_loss(s, t)")
    (d,) = lint(outside, CODE)
    assert "runs under torch.autocast" in d.message
    assert "F.log_softmax(s.float() / T, -1), F.softmax(t.float() / T, -1)" in fix(outside, CODE)


def test_rule_page_example_is_what_the_fix_does():
    import re

    from conftest import REPO

    page = (REPO / "rules" / f"{CODE}.md").read_text(encoding="utf-8")
    before = re.search(r"Before[^\n]*:\n\n```python\n(.*?)```", page, re.S).group(1)
    after = re.search(r"After `precision-lint --fix`:\n\n```python\n(.*?)```", page, re.S).group(1)
    assert lint(before, CODE)
    assert fix(before, CODE) == after
    assert fix(before) == after  # every rule: nothing else (MP101 included) touches this script


def test_models_and_logits_from_functions_in_other_files(tree):
    from precision_lint.engine import Engine

    root = tree(
        {
            "models.py": """
                import torch
                from transformers import AutoModelForCausalLM

                def load_teacher(name):
                    teacher = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.float16)
                    teacher.eval()
                    return teacher

                def student_logits(student, batch):
                    return student(**batch).logits.half()
            """,
            "train.py": """
                import torch.nn.functional as F
                from models import load_teacher, student_logits

                teacher = load_teacher("big")
                t = teacher(**batch).logits
                s = student_logits(student, batch)
                loss = F.kl_div(F.log_softmax(s / 2, -1), F.softmax(t / 2, -1), reduction="batchmean")
            """,
        }
    )
    engine = Engine(config(), [CODE])
    (d,) = engine.run_paths([str(root)]).diagnostics
    assert "`torch_dtype=torch.float16` (models.py, line 5)" in d.message
    assert "`student(**batch).logits.half()` (models.py, line 10) casts to float16" in d.message
    # the sources are related locations, in the file where they are
    assert {(r.path, r.span.line) for r in d.related} >= {
        (str(root / "models.py"), 5), (str(root / "models.py"), 10)
    }
    fixed = engine.run_paths([str(root)], fix=True).fixed_texts[str(root / "train.py")]
    assert "F.kl_div(F.log_softmax(s.float() / 2, -1), F.softmax(t.float() / 2, -1)" in fixed


LOADER = """
    import torch
    from transformers import AutoModel

    def load_teacher(name, dtype):
        return AutoModel.from_pretrained(name, torch_dtype=dtype)
"""

TRAIN_WITH_LOADER = """
    import torch
    import torch.nn.functional as F
    from models import load_teacher

    teacher = load_teacher("big", {dtype})
    t = teacher(**batch).logits
    s = student(**batch).logits
    loss = F.kl_div(F.log_softmax(t, -1), F.softmax(s, -1), reduction="batchmean")  # reverse KL
"""


def test_a_model_made_with_the_dtype_its_caller_passes_in_another_file(tree):
    # `load_teacher(name, dtype)` makes the model with its parameter: the call in train.py
    # passes torch.float16, and the join makes the teacher's logits float16 there
    from precision_lint.engine import Engine

    root = tree({"models.py": LOADER, "train.py": TRAIN_WITH_LOADER.format(dtype="torch.float16")})
    (d,) = Engine(config(), [CODE]).run_paths([str(root)]).diagnostics
    assert d.path == str(root / "train.py") and d.span.line == 8
    assert "`torch_dtype=dtype` (models.py, line 5), float16 as given in train.py, line 5" in d.message
    assert (str(root / "models.py"), 5) in {(r.path, r.span.line) for r in d.related}
    # named alone, train.py reads the loader it imports (the same finding)
    alone = Engine(config(), [CODE]).run_paths([str(root / "train.py")]).diagnostics
    assert [(x.code, x.span.line) for x in alone] == [(CODE, 8)]


@pytest.mark.parametrize("dtype", ["torch.float32", "torch.bfloat16", "args.dtype"])
def test_a_model_made_with_another_dtype_its_caller_passes_is_not_half(tree, dtype):
    from precision_lint.engine import Engine

    root = tree({"models.py": LOADER, "train.py": TRAIN_WITH_LOADER.format(dtype=dtype)})
    assert Engine(config(), [CODE]).run_paths([str(root)]).diagnostics == []


def test_a_model_made_with_the_dtype_of_a_yaml_config(tree):
    from precision_lint.engine import Engine

    train = """
        import torch
        import torch.nn.functional as F
        import yaml
        from transformers import AutoModel

        cfg = yaml.safe_load(open("kd.yaml"))
        teacher = AutoModel.from_pretrained("big", dtype=getattr(torch, cfg["teacher_dtype"]))
        t = teacher(**batch).logits
        loss = F.kl_div(F.log_softmax(t, -1), F.softmax(s, -1), reduction="batchmean")  # reverse KL
    """
    half = tree({"train.py": train, "kd.yaml": "teacher_dtype: float16\n"})
    (d,) = Engine(config(), [CODE]).run_paths([str(half)]).diagnostics
    assert d.span.line == 9 and "float16 as given in kd.yaml, line 1" in d.message


def test_a_model_made_with_a_float32_yaml_dtype_is_not_half(tmp_path):
    from conftest import write_tree
    from precision_lint.engine import Engine

    root = write_tree(
        tmp_path,
        {
            "train.py": """
                import torch
                import torch.nn.functional as F
                import yaml
                from transformers import AutoModel

                cfg = yaml.safe_load(open("kd.yaml"))
                teacher = AutoModel.from_pretrained("big", dtype=getattr(torch, cfg["teacher_dtype"]))
                t = teacher(**batch).logits
                loss = F.kl_div(F.log_softmax(s, -1), F.softmax(t, -1), reduction="batchmean")
            """,
            "kd.yaml": "teacher_dtype: float32\n",
        },
    )
    assert Engine(config(), [CODE]).run_paths([str(root)]).diagnostics == []


UNPACKED = [
    pytest.param(  # a literal tuple of both models' logits
        """
        teacher = AutoModelForCausalLM.from_pretrained("t", torch_dtype=torch.float16)
        s_logits, t_logits = student(**batch).logits, teacher(**batch).logits
        loss = F.kl_div(F.log_softmax(t_logits, -1), F.softmax(s_logits, -1), reduction="batchmean")
        """,
        "t_logits",
        id="literal-tuple",
    ),
    pytest.param(  # the tuple a local helper returns
        """
        teacher = AutoModelForCausalLM.from_pretrained("t", torch_dtype=torch.float16)

        def forward_both(batch):
            return student(**batch).logits, teacher(**batch).logits

        s_logits, t_logits = forward_both(batch)
        loss = F.kl_div(F.log_softmax(t_logits, -1), F.softmax(s_logits, -1), reduction="batchmean")
        """,
        "t_logits",
        id="helper-returns-a-tuple",
    ),
    pytest.param(  # the softmaxes themselves unpacked
        """
        teacher = AutoModelForCausalLM.from_pretrained("t", torch_dtype=torch.float16)
        t = teacher(**batch).logits
        q, log_p = F.softmax(s / 2, -1), F.log_softmax(t / 2, -1)  # reverse KL
        loss = F.kl_div(log_p, q, reduction="batchmean")
        """,
        "t",
        id="unpacked-softmaxes",
    ),
]


@pytest.mark.parametrize("body, logits", UNPACKED)
def test_logits_unpacked_from_a_tuple(body, logits):
    (d,) = lint(case(body), CODE)
    assert f"`{logits}` may be half" in d.message


@pytest.mark.parametrize("body, logits", UNPACKED)
def test_logits_unpacked_from_a_tuple_and_upcast_are_not_reported(body, logits):
    # the same shapes with the teacher's logits upcast where they are made
    upcast = body.replace("teacher(**batch).logits", "teacher(**batch).logits.float()")
    assert upcast != body
    assert lint(case(upcast), CODE) == []


def test_the_other_element_of_a_tuple_is_not_half():
    # only the teacher is float16; the student's logits (element 0) are what is softmaxed
    body = """
        teacher = AutoModelForCausalLM.from_pretrained("t", torch_dtype=torch.float16)
        s_logits, t_logits = student(**batch).logits, teacher(**batch).logits
        loss = F.cross_entropy(s_logits, F.softmax(s_logits.detach(), -1))
    """
    assert lint(case(body), CODE) == []


def test_method_of_a_project_object_called_inside_autocast():
    # the fp16 models reach the method through __init__; the method itself only runs
    # under autocast, where softmax/log_softmax/kl_div are computed in fp32
    body = """
        class Distiller:
            def __init__(self, student, teacher, T):
                self.student = student
                self.teacher = teacher
                self.T = T

            def loss(self, batch):
                with torch.no_grad():
                    t = self.teacher(**batch).logits
                s = self.student(**batch).logits
                return F.kl_div(F.log_softmax(s / self.T, -1), F.softmax(t / self.T, -1), reduction="batchmean")

        teacher = AutoModelForCausalLM.from_pretrained("t", torch_dtype=torch.float16)
        student = AutoModelForCausalLM.from_pretrained("s", torch_dtype=torch.float16)
        distiller = Distiller(student, teacher, 4.0)
        for batch in loader:
            {call}
        """
    inside = case(body.replace("{call}", 'with torch.autocast("cuda", dtype=torch.float16):\n                loss = distiller.loss(batch)'))
    assert lint(inside, CODE) == []
    outside = case(body.replace("{call}", "loss = distiller.loss(batch)"))
    (d,) = lint(outside, CODE)
    assert "F.log_softmax(s.float() / self.T, -1), F.softmax(t.float() / self.T, -1)" in fix(outside, CODE)


CRITERION = """
    class DistillLoss(nn.Module):
        def __init__(self, T=2.0):
            super().__init__()
            self.T = T

        def forward(self, s_logits, t_logits):  # reverse KL
            log_q = F.log_softmax(t_logits / self.T, -1)
            return F.kl_div(log_q, F.softmax(s_logits / self.T, -1), reduction="batchmean")

    teacher = AutoModelForCausalLM.from_pretrained("t", torch_dtype=torch.float16)
"""


@pytest.mark.parametrize(
    "use",
    [
        pytest.param("criterion = DistillLoss()\nloss = criterion(student(**b).logits, {t})", id="a-variable"),
        pytest.param(
            "class Trainer:\n"
            "    def __init__(self):\n"
            "        self.kd = DistillLoss(4.0)\n\n"
            "    def step(self, b):\n"
            "        return self.kd(student(**b).logits, {t})\n\n"
            "Trainer().step(batch)",
            id="held-on-self",
        ),
    ],
)
def test_a_criterion_object_runs_its_forward(use):
    # calling an nn.Module instance runs its forward: the teacher's float16 logits reach it
    src = case(dedent(CRITERION) + dedent(use.format(t="teacher(**b).logits")))
    (d,) = lint(src, CODE)
    assert d.span.line == 12 and "`t_logits` may be half" in d.message
    assert "F.log_softmax(t_logits.float() / self.T, -1)" in fix(src, CODE)
    # the same objects given upcast logits
    assert lint(case(dedent(CRITERION) + dedent(use.format(t="teacher(**b).logits.float()"))), CODE) == []


SOFT_TARGETS = """
    def soft_targets(logits, T):
        return F.softmax(logits / T, -1)

    teacher = AutoModelForCausalLM.from_pretrained("t", torch_dtype=torch.float16)
    t = teacher(**b).logits{cast}
    loss = F.kl_div(F.log_softmax(s{cast} / 2, -1), soft_targets(t, 2), reduction="batchmean")
"""


def test_a_softmax_returned_by_a_helper():
    src = case("s = student_logits.half()\n" + dedent(SOFT_TARGETS).format(cast=""))
    (d,) = lint(src, CODE)
    assert d.span.line == 11 and "`logits` may be half" in d.message
    assert "return F.softmax(logits.float() / T, -1)" in fix(src, CODE)
    assert lint(case("s = student_logits.half()\n" + dedent(SOFT_TARGETS).format(cast=".float()")), CODE) == []


def test_each_call_of_a_loader_keeps_its_own_dtype(tree):
    # one loader, two calls: the student in float16, the teacher in float32. Only the student's
    # logits are half, so only they are upcast (what a call returns takes that call's arguments)
    from precision_lint.engine import Engine

    train = """
        import torch
        import torch.nn.functional as F
        from models import load_teacher

        student = load_teacher("small", torch.float16)
        teacher = load_teacher("big", torch.float32)
        s, t = student(**batch).logits, teacher(**batch).logits
        loss = F.kl_div(F.log_softmax(s, -1), F.softmax(t, -1), reduction="batchmean")
    """
    root = tree({"models.py": LOADER, "train.py": train})
    engine = Engine(config(), [CODE])
    (d,) = engine.run_paths([str(root)]).diagnostics
    assert "`s` may be half" in d.message and "`t` may be half" not in d.message
    fixed = engine.run_paths([str(root)], fix=True).fixed_texts[str(root / "train.py")]
    assert "F.kl_div(F.log_softmax(s.float(), -1), F.softmax(t, -1)" in fixed


def test_a_rewrite_spells_the_functional_module_with_a_name_bound_where_it_is_written():
    # `softmax` imported by itself: the log_softmax the fix writes needs a name for
    # torch.nn.functional, and `F` imported only further down is not bound yet there
    src = dedent(
        """
        import torch
        from torch.nn.functional import softmax, log_softmax
        from transformers import AutoModelForCausalLM

        T = 2.0
        batch = {"input_ids": torch.ones(1, 4, dtype=torch.long)}
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)
        s = model(**batch).logits
        t = model(**batch).logits.detach()
        p_t = softmax(t / T, dim=-1)
        kl = (p_t * (torch.log(p_t + 1e-8) - log_softmax(s / T, dim=-1))).sum(-1).mean()
        """
    )
    later = src + "import torch.nn.functional as F\n"
    (line,) = [l for l in fix(later, CODE).splitlines() if l.startswith("kl =")]
    assert line.startswith("kl = (p_t * (torch.nn.functional.log_softmax(t.float() / T")
    first = src.replace("import torch\n", "import torch\nimport torch.nn.functional as F\n", 1)
    (line,) = [l for l in fix(first, CODE).splitlines() if l.startswith("kl =")]
    assert line.startswith("kl = (p_t * (F.log_softmax(t.float() / T")
