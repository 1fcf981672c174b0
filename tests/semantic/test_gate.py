"""Gating by imports: which files are analysed depends on what their units import, never on
a word in a comment, the selected rules or the order files come in."""
import random

from conftest import config, dedent, write_tree
from hypothesis import given, settings
from hypothesis import strategies as st

from precision_lint.engine import Engine
from precision_lint.semantic.gate import analysed, imported_modules

# A9's shape: a KD loss in losses.py, an fp16 reference model loaded in models.py, and the
# script that joins them, whose text holds no precision word at all (whether MP401 should fire
# here is the run's question: the student is fp32; that the answer is the same is this file's).
KD_PROJECT = {
    "models.py": """
        import torch
        from transformers import AutoModelForCausalLM

        def load_ref():
            return AutoModelForCausalLM.from_pretrained("r", torch_dtype=torch.float16)
        """,
    "losses.py": """
        import torch.nn.functional as F

        def kd(s, t):
            return F.kl_div(F.log_softmax(s, -1), F.softmax(t, -1), reduction="batchmean")
        """,
    "train.py": """
        import torch
        from losses import kd
        from models import load_ref

        ref = load_ref()
        student = torch.nn.Linear(8, 8)
        x = torch.randn(2, 8)
        loss = kd(student(x), ref(x).logits)
        """,
}


def _findings(root, codes=None, paths=None):
    engine = Engine(config(), codes, jobs=1)
    return sorted(
        (d.path.rsplit("/", 1)[-1], d.code, d.span.line)
        for d in engine.run_paths([str(p) for p in (paths or [root])]).diagnostics
    )


def test_a_comment_does_not_change_the_findings(tmp_path):
    # A9: a comment "the reference model is fp16" in train.py made MP401 appear in losses.py.
    plain = _findings(write_tree(tmp_path / "plain", KD_PROJECT))
    commented = dict(KD_PROJECT, **{"train.py": "# the reference model is fp16 (half): teacher\n" + dedent(KD_PROJECT["train.py"])})
    with_comment = _findings(write_tree(tmp_path / "commented", commented))
    assert with_comment == [(p, c, line + 1 if p == "train.py" else line) for p, c, line in plain]


def test_selecting_one_rule_gives_that_rule_s_findings_of_all_rules(tmp_path):
    root = write_tree(tmp_path, KD_PROJECT)
    everything = _findings(root)
    for code in sorted({c for _, c, _ in everything}):
        assert _findings(root, [code]) == [f for f in everything if f[1] == code]


def test_a_helper_module_with_no_library_import_is_analysed_with_its_unit():
    files = {
        "a.py": ("a", "", ("torch", "b")),
        "b.py": ("b", "", ("yaml",)),
        "c.py": ("c", "", ("b",)),  # linked through b
        "lone.py": ("lone", "", ("os",)),
        "broken.py": ("broken", "", None),  # does not parse: analysed, so MP000 is reported
    }
    assert analysed(files) == {"a.py", "b.py", "c.py", "broken.py"}


def test_a_file_whose_unit_imports_no_library_is_not_analysed():
    # `AutoModelForCausalLM` is a name this file never binds: the code raises NameError before
    # any precision matters, and nothing here is PyTorch code (the fix hygiene case of "only the
    # standard library imported" went with text gating).
    from conftest import lint

    src = """
        import os
        model = AutoModelForCausalLM.from_pretrained(os.environ["M"], torch_dtype="bfloat16").eval()
        """
    assert lint(src) == []
    assert [d.code for d in lint("import torch\n" + dedent(src))] == ["MP201"]


def test_imports_are_read_from_the_tree_not_the_text():
    text = '"""\nimport torch\n"""\n# import transformers\nimport os\nfrom . import sibling\n'
    assert imported_modules(text, "pkg.mod", False) == ("os", "pkg", "pkg.sibling")


def test_a_launch_command_is_a_use_of_its_launcher():
    assert "accelerate" in imported_modules('import subprocess\nsubprocess.run(["accelerate", "launch", "t.py"])\n')
    assert "torch.distributed.run" in imported_modules('cmd = [sys.executable, "-m", "torch.distributed.run", "t.py"]\n')
    assert "torch" in imported_modules('import os\nos.system(f"torchrun --nproc_per_node 2 {script}")\n')
    assert imported_modules('print("accelerate is great")\nwords = ["a", "b"]\n') == ()


COMMENTS = st.lists(
    st.sampled_from(["# fp16", "# half precision teacher", "# bf16 on A100", "# kl_div softmax", "# GradScaler", "#"]),
    min_size=1,
    max_size=4,
)


@settings(max_examples=8, deadline=None)
@given(comments=COMMENTS, seed=st.integers(0, 1000))
def test_comments_selects_and_order_never_change_findings(tmp_path_factory, comments, seed):
    rng = random.Random(seed)
    base = tmp_path_factory.mktemp("base")
    write_tree(base, KD_PROJECT)
    expected = _findings(base)
    # the same files with comment lines appended (line numbers unchanged), in a shuffled order
    changed = tmp_path_factory.mktemp("changed")
    files = {name: dedent(text).rstrip() + "\n" + "\n".join(comments) + "\n" for name, text in KD_PROJECT.items()}
    write_tree(changed, files)
    paths = [changed / name for name in files]
    rng.shuffle(paths)
    assert _findings(changed, paths=paths) == expected
    codes = sorted({c for _, c, _ in expected})
    subset = rng.sample(codes, rng.randint(1, len(codes))) if codes else None
    assert _findings(changed, subset, paths=paths) == [f for f in expected if subset is None or f[1] in subset]
