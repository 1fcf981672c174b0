"""A file's findings never depend on what else is linted with it, nor on how.

For every file of the corpora (the harness fixtures, and small projects written for the
shapes that span files: a loader in another module, a package that re-exports it, a config
file, an unrelated in-house ``class Trainer``), its findings are the same whether it is named
alone (its unit is then read from disk), named with its unit, or checked as part of the whole
tree; in any order of the paths; serial or parallel; cold or from the facts cache.
"""
import random
import shutil

from conftest import REPO, config, write_tree

from precision_lint import engine as engine_module
from precision_lint.workspace.discovery import discover
from precision_lint.engine import Engine

PROJECTS = {
    "loader-elsewhere": {
        "pyproject.toml": '[tool.precision-lint]\ntransformers-version = "5.23"\n',
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
            Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=True), tokenizer=None).train()
            """,
        "legacy/trainer.py": """
            class Trainer:
                def __init__(self, tokenizer=None):
                    self.tokenizer = tokenizer

            Trainer(tokenizer=None)
            """,
    },
    "package-and-config": {
        "pyproject.toml": '[tool.precision-lint]\ntransformers-version = "5.23"\n',
        "kd/__init__.py": "from .loading import load_teacher\n",
        "kd/loading.py": """
            import yaml
            from transformers import AutoModelForCausalLM

            def load_teacher():
                cfg = yaml.safe_load(open("teacher.yaml"))
                return AutoModelForCausalLM.from_pretrained(cfg["name"], torch_dtype=cfg["dtype"])
            """,
        "kd/teacher.yaml": "name: gpt2\ndtype: bfloat16\n",
        "distill.py": """
            import torch
            from transformers import Trainer, TrainingArguments
            from kd import load_teacher

            teacher = load_teacher()
            args = TrainingArguments(output_dir="o", bf16=True)
            Trainer(model=teacher, args=args).train()
            """,
    },
    "kd-across-files": {
        "pyproject.toml": '[tool.precision-lint]\ntransformers-version = "5.23"\n',
        "kdlib/__init__.py": "",
        "kdlib/layers.py": """
            import torch.nn as nn

            class Head(nn.Module):
                def __init__(self, dim):
                    super().__init__()
                    self.fc = nn.Linear(dim, dim)
            """,
        "kdlib/models.py": """
            from transformers import AutoModelForCausalLM

            def load_teacher(name, dtype):
                return AutoModelForCausalLM.from_pretrained(name, dtype=dtype)
            """,
        "kdlib/losses.py": """
            import torch.nn as nn
            import torch.nn.functional as F

            class DistillLoss(nn.Module):
                def forward(self, s_logits, t_logits):
                    log_p = F.log_softmax(s_logits / 2, -1)
                    return F.kl_div(log_p, F.softmax(t_logits / 2, -1), reduction="batchmean")
            """,
        "distill.py": """
            import torch
            from kdlib.layers import Head
            from kdlib.losses import DistillLoss
            from kdlib.models import load_teacher

            teacher = load_teacher("big", torch.float16)
            head = Head(8).cuda().half()
            opt = torch.optim.AdamW(head.parameters(), lr=1e-4)
            scaler = torch.amp.GradScaler("cuda")
            criterion = DistillLoss()
            for batch in loader:
                s_logits, t_logits = head(batch["x"]), teacher(**batch).logits
                loss = criterion(s_logits, t_logits)
                scaler.scale(loss).backward()
            """,
    },
}


# what the whole-tree runs find, so that "the same findings" is never "none at all"
EXPECTED = {
    "fixtures": {"MP101", "MP201", "MP202", "MP301", "MP401"},
    "loader-elsewhere": {("models.py", "MP101"), ("train.py", "MP301")},
    "package-and-config": {("kd/loading.py", "MP201")},
    "kd-across-files": {("distill.py", "MP101"), ("kdlib/losses.py", "MP401")},
}


def _by_file(diagnostics, root):
    out = {}
    for d in diagnostics:
        rel = str(d.path).replace(str(root) + "/", "")
        out.setdefault(rel, []).append((d.code, d.span.line, d.span.col, d.message.replace(str(root) + "/", "")))
    return {k: sorted(v) for k, v in out.items()}


def _corpora(tmp_path):
    fixtures = tmp_path / "fixtures"
    shutil.copytree(REPO / "fixtures", fixtures)
    yield fixtures
    for name, files in PROJECTS.items():
        yield write_tree(tmp_path / name, files)


def _run(root, paths, **kwargs):
    engine = Engine(config(transformers_version="5.23"), jobs=kwargs.pop("jobs", 1), **kwargs)
    return _by_file(engine.run_paths([str(p) for p in paths]).diagnostics, root)


def test_findings_of_a_file_do_not_depend_on_what_is_linted_with_it(tmp_path, monkeypatch):
    for root in _corpora(tmp_path):
        monkeypatch.chdir(root)
        whole = _run(root, [root])
        found = {(rel, f[0]) for rel, fs in whole.items() for f in fs}
        expected = EXPECTED[root.name]
        assert expected <= (found if isinstance(next(iter(expected)), tuple) else {c for _, c in found}), root.name
        assert "legacy/trainer.py" not in whole  # an in-house Trainer with tokenizer= is no finding
        files = sorted(discover([str(root)], (), None))
        assert files, root
        for path in files:
            rel = path.replace(str(root) + "/", "")
            alone = _run(root, [path])
            assert alone.get(rel, []) == whole.get(rel, []), f"{rel} alone"
        shuffled = list(files)
        random.Random(7).shuffle(shuffled)
        assert _run(root, shuffled) == whole, f"{root.name}: the files named in another order"
        assert _run(root, list(reversed(shuffled))) == whole


def test_parallel_and_cached_runs_agree_with_a_serial_cold_run(tmp_path, monkeypatch):
    monkeypatch.setattr(engine_module, "PARALLEL_THRESHOLD", 2)  # worker processes even for small trees
    for root in _corpora(tmp_path):
        monkeypatch.chdir(root)
        whole = _run(root, [root])
        cache = tmp_path / f"cache-{root.name}"
        assert _run(root, [root], cache_dir=str(cache)) == whole  # cold, filling the cache
        assert _run(root, [root], cache_dir=str(cache)) == whole  # warm
        assert _run(root, [root], jobs=2) == whole
