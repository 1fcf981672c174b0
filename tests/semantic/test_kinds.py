"""What a value is: a project class derived from TrainingArguments, GradScaler or
Accelerator (in any module of the project) is one, and a chain that builds a
``torch.nn.Module`` is a model whatever its variable is called."""
from conftest import config, lint, write_tree

from precision_lint.engine import Engine

PACKAGE = {
    "pkg/__init__.py": "",
    "pkg/amp.py": """
        import torch

        class SafeScaler(torch.amp.GradScaler):
            pass

        class RunOptions:
            def __init__(self, fp16=False):
                self.fp16 = fp16
        """,
    "pkg/args.py": """
        from transformers import TrainingArguments

        class DistillArguments(TrainingArguments):
            pass
        """,
}

LOOP = """
    import torch
    from pkg.amp import {scaler}

    model = torch.nn.Linear(2, 2).cuda().half()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = {scaler}("cuda")
    for _ in range(3):
        loss = model(torch.randn(4, 2, device="cuda", dtype=torch.half)).sum()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    """


def _run(tmp_path, files, code="MP101"):
    write_tree(tmp_path, {**PACKAGE, **files})
    return Engine(config(), [code], jobs=1).run_paths([str(tmp_path)]).diagnostics


def test_a_grad_scaler_subclass_in_another_module_is_a_scaler(tmp_path):
    (d,) = _run(tmp_path, {"loop.py": LOOP.format(scaler="SafeScaler")})
    assert d.path.endswith("loop.py") and d.span.line == 4


def test_a_project_class_that_is_no_scaler_is_nothing(tmp_path):
    assert _run(tmp_path, {"loop.py": LOOP.format(scaler="RunOptions")}) == []


def test_a_training_arguments_subclass_in_another_module(tmp_path):
    train = """
        import torch
        from transformers import AutoModelForCausalLM, Trainer
        from pkg.args import DistillArguments

        model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.float16)
        Trainer(model=model, args=DistillArguments(output_dir="o", fp16={fp16})).train()
        """
    (d,) = _run(tmp_path, {"train.py": train.format(fp16="True")})
    assert "`DistillArguments(fp16=True)`" in d.message
    assert _run(tmp_path, {"train.py": train.format(fp16="False")}) == []


def test_a_chain_that_builds_a_module_is_a_model_whatever_its_name():
    src = """
        import torch

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(2, 2)

        device = "cuda"
        f = Net().to(device).to(torch.float16)
        opt = torch.optim.AdamW(f.parameters())
        scaler = torch.amp.GradScaler()
        """
    assert [d.span.line for d in lint(src, "MP101")] == [9]


def test_a_tensor_chain_is_no_model():
    src = """
        import torch

        x = torch.randn(4, 2).cuda().half()
        net = torch.nn.Linear(2, 2)
        opt = torch.optim.AdamW(net.parameters())
        scaler = torch.amp.GradScaler()
        """
    assert lint(src, "MP101") == []


MODELS = {
    "pkg/layers.py": """
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, dim)
        """,
    "pkg/net.py": """
        from pkg.layers import Block

        class Net(Block):
            pass

        class Batch:
            def __init__(self, cfg):
                self.cfg = cfg

            def half(self):
                return self
        """,
}

BUILT_ELSEWHERE = """
    import torch
    from {module} import {name}

    f = {name}(cfg).cuda().half()
    opt = torch.optim.AdamW(f.parameters())
    scaler = torch.amp.GradScaler("cuda")
    """


def test_a_class_of_another_module_derived_from_nn_module_builds_a_model(tmp_path):
    # `Net` derives from nn.Module through `Block` in a third module; the call chain is a model
    # whatever it is called, and the same finding comes when train.py is named alone
    (d,) = _run(tmp_path, {**MODELS, "train.py": BUILT_ELSEWHERE.format(module="pkg.net", name="Net")})
    assert d.path.endswith("train.py") and d.span.line == 4
    alone = Engine(config(), ["MP101"], jobs=1).run_paths([str(tmp_path / "train.py")]).diagnostics
    assert [(x.code, x.span.line) for x in alone] == [("MP101", 4)]


def test_a_class_of_another_module_that_is_no_module_builds_no_model(tmp_path):
    assert _run(tmp_path, {**MODELS, "train.py": BUILT_ELSEWHERE.format(module="pkg.net", name="Batch")}) == []
    # a class the project does not define (an uninstalled library): nothing is guessed
    assert _run(tmp_path, {**MODELS, "train.py": BUILT_ELSEWHERE.format(module="vendor.nets", name="Net")}) == []
