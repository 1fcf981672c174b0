"""Files named one by one (pre-commit, editors) are joined with their unit on disk: the local
modules they import and the modules that import them are read for their facts. A finding in
such a neighbour is reported when it names a named file, and never fixed there."""
from conftest import config, dedent, write_tree

from precision_lint.engine import Engine

TREE = {
    "models.py": """
        import torch
        from transformers import AutoModelForCausalLM

        def load_student(name):
            return AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.float16)
        """,
    "train.py": """
        from transformers import Trainer, TrainingArguments
        from models import load_student

        model = load_student("gpt2")
        Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=True)).train()
        """,
    "eval.py": """
        from models import load_student

        load_student("gpt2").eval()
        """,
}


def _run(tmp_path, *names, fix=False):
    write_tree(tmp_path, TREE)
    engine = Engine(config(), ["MP101"], jobs=1)
    return engine.run_paths([str(tmp_path / n) for n in names], fix=fix)


def test_the_commit_that_switches_fp16_on_fails_the_hook(tmp_path):
    result = _run(tmp_path, "train.py")
    (d,) = result.diagnostics
    assert d.path.endswith("models.py") and d.fix is None
    assert any(r.path.endswith("train.py") for r in d.related)


def test_the_loader_named_alone_meets_the_script_that_imports_it(tmp_path):
    (d,) = _run(tmp_path, "models.py").diagnostics
    assert d.path.endswith("models.py") and d.fix is not None


def test_a_neighbour_is_never_fixed(tmp_path):
    result = _run(tmp_path, "train.py", fix=True)
    assert (tmp_path / "models.py").read_text() == dedent(TREE["models.py"])
    assert not result.fixes_applied


def test_a_file_whose_unit_has_no_conflict_stays_clean(tmp_path):
    assert _run(tmp_path, "eval.py").diagnostics == []


def test_a_helper_named_alone_is_read_with_every_unit_it_is_part_of(tmp_path):
    # losses.py is imported by a package module that distill.py imports; the student's dtype
    # comes from a loader that only distill.py imports: all of it is the unit losses.py is in
    write_tree(
        tmp_path,
        {
            "kd/__init__.py": "",
            "kd/losses.py": """
                import torch.nn.functional as F

                def kd_loss(s_logits, t_logits):
                    return F.kl_div(F.log_softmax(s_logits, -1), F.softmax(t_logits, -1), reduction="batchmean")
                """,
            "kd/step.py": """
                from kd.losses import kd_loss

                def step(student, teacher, batch):
                    return kd_loss(student(**batch).logits, teacher(**batch).logits)
                """,
            "loaders.py": """
                from transformers import AutoModelForCausalLM

                def load(name, dtype):
                    return AutoModelForCausalLM.from_pretrained(name, dtype=dtype)
                """,
            "distill.py": """
                import torch
                from kd.step import step
                from loaders import load

                step(load("s", torch.float16), load("t", torch.float32), batch)
                """,
            "unrelated.py": "import torch\nx = torch.zeros(2, dtype=torch.float16)\n",
        },
    )
    engine = Engine(config(), ["MP401"], jobs=1)
    alone = engine.run_paths([str(tmp_path / "kd" / "losses.py")]).diagnostics
    whole = engine.run_paths([str(tmp_path)]).diagnostics
    assert [(d.path, d.span.line) for d in alone] == [(d.path, d.span.line) for d in whole]
    assert [(d.path.rsplit("/", 1)[-1], d.span.line) for d in alone] == [("losses.py", 4)]
    assert "float16 as given in distill.py, line 5" in alone[0].message
