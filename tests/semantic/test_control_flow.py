"""Control flow that matters: dominating guards (``assert``, early exits) and entry points
(code that runs although nothing in the project calls it, and code that never runs)."""
import pytest

from conftest import lint

MAIN_BODY = (
    'model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)\n'
    'args = TrainingArguments(output_dir="o", fp16=True)\n'
    "Trainer(model=model, args=args).train()\n"
)
HEADER = "import torch\nfrom transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n"


def _in_main(decorator: str = "", tail: str = "") -> str:
    body = "".join(f"    {line}\n" for line in MAIN_BODY.splitlines())
    return f"{HEADER}{decorator}def main():\n{body}{tail}"


@pytest.mark.parametrize(
    "src",
    [
        _in_main(tail='\nif __name__ == "__main__":\n    main()\n'),
        _in_main(tail="\nimport fire\nfire.Fire(main)\n"),
        "import typer\napp = typer.Typer()\n" + _in_main("@app.command()\n"),
        "import click\n" + _in_main("@click.command()\n"),
        _in_main(),  # nobody calls it here: a console script or a notebook does
    ],
    ids=["__main__", "fire", "typer", "click", "uncalled"],
)
def test_an_entry_function_body_is_analysed(src):
    assert [d.code for d in lint(src, "MP101")] == ["MP101"]


def test_a_main_imported_from_another_file_runs(tree):
    from conftest import config
    from precision_lint.engine import Engine

    root = tree(
        {
            "pkg/__init__.py": "",
            "pkg/cli.py": HEADER + "def main():\n" + "".join(f"    {line}\n" for line in MAIN_BODY.splitlines()),
            "run.py": 'from pkg.cli import main\nif __name__ == "__main__":\n    main()\n',
        }
    )
    found = Engine(config(), ["MP101"], jobs=1).run_paths([str(root)]).diagnostics
    assert [(d.code, d.path.endswith("cli.py")) for d in found] == [("MP101", True)]


def test_two_separate_entry_functions_do_not_run_together():
    src = HEADER + (
        "def export(path):\n"
        "    m = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float16)\n"
        "    upload(m)\n"
        "def train():\n"
        "    return TrainingArguments(output_dir='o', fp16=True)\n"
    )
    assert lint(src, "MP101") == []


@pytest.mark.parametrize(
    "guard",
    [
        "assert torch.cuda.is_bf16_supported()",
        "if not torch.cuda.is_bf16_supported():\n    raise SystemExit('needs an Ampere GPU')",
        "if torch.cuda.get_device_capability()[0] < 8:\n    sys.exit(1)",
        "if not torch.cuda.is_bf16_supported(): raise RuntimeError('bf16')",
    ],
)
def test_a_dominating_capability_check_guards_what_follows(guard):
    src = (
        "import sys\nimport torch\nfrom transformers import AutoModelForCausalLM, TrainingArguments\n"
        f"{guard}\n"
        "model = AutoModelForCausalLM.from_pretrained('m', torch_dtype=torch.bfloat16)\n"
        "args = TrainingArguments(output_dir='o', bf16=True)\n"
    )
    assert lint(src, "MP201") == []


@pytest.mark.parametrize(
    "not_a_guard",
    [
        # the exit is conditional on something else, or does not leave
        "if not torch.cuda.is_bf16_supported():\n    print('slow')",
        "if not torch.cuda.is_bf16_supported():\n    warn()\nelse:\n    raise SystemExit(0)",
        # the check comes after the site
        None,
    ],
)
def test_what_does_not_dominate_does_not_guard(not_a_guard):
    site = (
        "model = AutoModelForCausalLM.from_pretrained('m', torch_dtype=torch.bfloat16)\n"
        "args = TrainingArguments(output_dir='o', bf16=True)\n"
    )
    head = "import sys\nimport torch\nfrom transformers import AutoModelForCausalLM, TrainingArguments\n"
    if not_a_guard is None:
        src = head + site + "assert torch.cuda.is_bf16_supported()\n"
    else:
        src = head + not_a_guard + "\n" + site
    assert len(lint(src, "MP201")) == 2


def test_an_early_return_in_a_function_guards_only_that_function():
    src = (
        "import torch\nfrom transformers import TrainingArguments\n"
        "def fast_args():\n"
        "    if not torch.cuda.is_bf16_supported():\n"
        "        return None\n"
        "    return TrainingArguments(output_dir='o', bf16=True)\n"
        "def plain_args():\n"
        "    return TrainingArguments(output_dir='o', bf16=True)\n"
        "fast_args(); plain_args()\n"
    )
    (d,) = lint(src, "MP201")
    assert d.span.line == 8


def test_a_dict_lookup_keeps_the_guard_of_its_key():
    # nanoGPT's shape: the key is chosen under a capability check, the dict maps it to a dtype
    src = (
        "import torch\n"
        "dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'\n"
        "ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]\n"
        "ctx = torch.amp.autocast(device_type='cuda', dtype=ptdtype)\n"
    )
    assert lint(src, "MP201") == []
    unguarded = src.replace(" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'", "")
    assert [d.code for d in lint(unguarded, "MP201")] == ["MP201"]


AUTOCAST_KD = """
    import argparse
    import torch
    import torch.nn.functional as F

    parser = argparse.ArgumentParser()
    parser.add_argument("--amp", action="store_true")
    args = parser.parse_args()

    def distill(student, teacher, batches):
        student.half()
        teacher.half()
        opt = torch.optim.SGD(student.parameters(), lr=0.1)
        for x in batches:
            with torch.autocast("cuda", dtype=torch.float16, enabled={enabled}):
                s = student(x)
                t = teacher(x)
                loss = F.kl_div(F.log_softmax(s, dim=-1), F.softmax(t, dim=-1), reduction="batchmean")
            loss.backward()
            opt.step()
    """


def test_autocast_that_may_be_switched_off_does_not_protect_a_half_kd_loss():
    # seed 003: the distillation loss ran in fp16 because autocast was off
    assert [d.code for d in lint(AUTOCAST_KD.format(enabled="args.amp"), "MP401")] == ["MP401"]
    assert [d.code for d in lint(AUTOCAST_KD.format(enabled="False"), "MP401")] == ["MP401"]


def test_autocast_that_is_always_on_protects_it():
    assert lint(AUTOCAST_KD.format(enabled="True"), "MP401") == []


def test_library_code_the_script_never_calls_does_not_run(tmp_path):
    # an inference script that imports a local library: the library's scaler factory and
    # the methods of a class the script never creates are not part of its run
    from conftest import config, write_tree

    from precision_lint.engine import Engine

    write_tree(
        tmp_path,
        {
            "mylib/__init__.py": "from .amp import get_scaler, Engine\nfrom .state import State\n",
            "mylib/state.py": "class State:\n    pass\n",
            "mylib/amp.py": """
                import torch

                def get_scaler():
                    return torch.amp.GradScaler()

                class Engine:
                    def __init__(self, fp16):
                        self.scaler = torch.amp.GradScaler(enabled=fp16)
                """,
            "infer.py": """
                import torch
                from transformers import AutoModelForCausalLM
                from mylib import State

                state = State()
                model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.float16)
                opt = torch.optim.AdamW(model.parameters())
                """,
        },
    )
    run = lambda: Engine(config(), ["MP101"], jobs=1).run_paths([str(tmp_path)]).diagnostics
    assert run() == []
    # once the script creates the Engine, its scaler is part of the run
    script = tmp_path / "infer.py"
    script.write_text(script.read_text().replace("from mylib import State", "from mylib import Engine, State") + "engine = Engine(True)\n")
    assert [d.code for d in run()] == ["MP101"]


def test_a_frozen_teacher_prepared_with_the_student_is_not_trained():
    src = """
        import torch
        from accelerate import Accelerator
        from transformers import AutoModelForCausalLM

        accelerator = Accelerator(mixed_precision="fp16")
        student = AutoModelForCausalLM.from_pretrained("s")
        teacher = AutoModelForCausalLM.from_pretrained("t", torch_dtype=torch.float16)
        optimizer = torch.optim.AdamW(student.parameters())
        student, teacher, optimizer = accelerator.prepare(student, teacher, optimizer)
        teacher.eval()
        for batch in []:
            with torch.no_grad():
                targets = teacher(**batch).logits
            loss = student(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
        """
    assert lint(src, "MP101") == []
    # `.train()` alone trains nothing: the optimizer takes the student's parameters only
    assert lint(src.replace("teacher.eval()", "teacher.train()"), "MP101") == []
    both = src.replace("teacher.eval()", "teacher.train()").replace(
        "AdamW(student.parameters())", "AdamW([*student.parameters(), *teacher.parameters()])"
    )
    assert [d.code for d in lint(both, "MP101")] == ["MP101"]


def test_a_hidden_state_cast_to_the_teacher_dtype_is_a_tensor_not_a_model():
    src = """
        import torch
        from accelerate import Accelerator

        accelerator = Accelerator(mixed_precision="fp16")
        teacher_dtype = torch.float16
        encoder_outputs = student_outputs.encoder_last_hidden_state.to(dtype=teacher_dtype)
        """
    assert lint(src, "MP101") == []


def test_a_pipeline_that_generates_class_images_is_not_trained():
    src = """
        import torch
        from accelerate import Accelerator
        from diffusers import DiffusionPipeline

        accelerator = Accelerator(mixed_precision="fp16")
        pipeline = DiffusionPipeline.from_pretrained("sd", torch_dtype=torch.float16)
        images = pipeline("a photo").images
        """
    assert lint(src, "MP101") == []
