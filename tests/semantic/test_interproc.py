"""Values across calls: a parameter is what its callers pass (constructors, helpers in other
files, `self.` attributes, chains of helpers), substituted at the join."""
from conftest import config, lint, write_tree

from precision_lint.engine import Engine


# A loader whose dtype is a parameter; its only caller, in another file, passes float16.
LOADER_IN_ANOTHER_FILE = {
    "loaders.py": """
        from transformers import AutoModelForCausalLM

        def load_student(name, dtype):
            return AutoModelForCausalLM.from_pretrained(name, torch_dtype=dtype)
        """,
    "train.py": """
        import torch
        from transformers import Trainer, TrainingArguments
        from loaders import load_student

        model = load_student("s", torch.float16)
        Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=True)).train()
        """,
}


def _findings(root, code="MP101", *names):
    engine = Engine(config(), [code], jobs=1)
    paths = [str(root / n) for n in names] if names else [str(root)]
    return sorted((d.path.replace(str(root) + "/", ""), d.span.line) for d in engine.run_paths(paths).diagnostics)


def test_seed000_dtype_passed_to_a_constructor_and_used_in_init():
    src = """
        import torch
        from transformers import AutoModelForCausalLM

        class Distiller:
            def __init__(self, name, dtype):
                self.student = AutoModelForCausalLM.from_pretrained(name, torch_dtype=dtype)
                self.opt = torch.optim.AdamW(self.student.parameters())

        distiller = Distiller("s", torch.float16)
        scaler = torch.amp.GradScaler("cuda")
        """
    (d,) = lint(src, "MP101")
    assert d.span.line == 6 and "float16" in d.message


def test_the_same_constructor_called_with_float32_is_not_a_finding():
    src = """
        import torch
        from transformers import AutoModelForCausalLM

        class Distiller:
            def __init__(self, name, dtype=torch.float32):
                self.student = AutoModelForCausalLM.from_pretrained(name, torch_dtype=dtype)

        distiller = Distiller("s", dtype=torch.float32)
        scaler = torch.amp.GradScaler("cuda")
        """
    assert lint(src, "MP101") == []


def test_a_loader_in_another_file_gets_float16_from_its_caller(tree):
    root = tree(dict(LOADER_IN_ANOTHER_FILE))
    assert _findings(root) == [("loaders.py", 4)]
    # with float32 at the only call, nothing
    (root / "train.py").write_text((root / "train.py").read_text().replace("float16", "float32"))
    assert _findings(root) == []


def test_a_chain_of_helpers_and_a_self_attribute():
    src = """
        import torch
        from transformers import AutoModelForCausalLM

        class Runner:
            def __init__(self, precision):
                self.dtype = precision

            def build(self, name):
                return AutoModelForCausalLM.from_pretrained(name, torch_dtype=self.dtype)

        def make_runner(dtype):
            return Runner(dtype)

        runner = make_runner(torch.float16)
        model = runner.build("s")
        optimizer = torch.optim.AdamW(model.parameters())
        scaler = torch.amp.GradScaler()
        """
    (d,) = lint(src, "MP101")
    assert d.span.line == 9


def test_to_with_a_parameter_dtype_and_a_guarded_call():
    src = """
        import torch

        def prepare(model, dtype):
            return model.to(dtype)

        net = prepare(build_net(), torch.float16 if args.half else torch.float32)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler()
        """
    (d,) = lint(src, "MP101")
    assert d.span.line == 4


def test_a_parameter_nobody_passes_float16_to_stays_silent():
    src = """
        import torch

        def prepare(model, device):
            return model.to(device)

        net = prepare(build_net(), "cuda")
        scaler = torch.amp.GradScaler()
        """
    assert lint(src, "MP101") == []


def test_the_fix_keeps_what_other_callers_pass_and_is_idempotent(tree):
    root = tree(dict(LOADER_IN_ANOTHER_FILE))
    engine = Engine(config(), ["MP101"], jobs=1)
    result = engine.run_paths([str(root)], fix=True)
    assert result.diagnostics == []
    fixed = result.fixed_texts[str(root / "loaders.py")]
    assert "torch_dtype=torch.float32 if dtype == torch.float16 else dtype" in fixed
    (root / "loaders.py").write_text(fixed)
    again = Engine(config(), ["MP101"], jobs=1).run_paths([str(root)], fix=True)
    assert again.diagnostics == [] and again.fixed_texts[str(root / "loaders.py")] == fixed


def test_a_dtype_returned_by_a_helper_in_another_file(tmp_path):
    write_tree(
        tmp_path,
        {
            "precision.py": """
                import torch

                def pick_dtype(fast):
                    return torch.float16 if fast else torch.float32
                """,
            "train.py": """
                import torch
                from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
                from precision import pick_dtype

                model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=pick_dtype(True))
                Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=True)).train()
                """,
        },
    )
    assert _findings(tmp_path) == [("train.py", 5)]


def test_a_helper_in_another_file_that_returns_float32_is_silent(tmp_path):
    write_tree(
        tmp_path,
        {
            "precision.py": """
                import torch

                def pick_dtype():
                    return torch.float32
                """,
            "train.py": """
                from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
                from precision import pick_dtype

                model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=pick_dtype())
                Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=True)).train()
                """,
        },
    )
    assert _findings(tmp_path) == []



def test_a_call_record_knows_which_parameters_it_certainly_leaves_out():
    """A parameter that no call seen passes takes its default alone at the join (not "unknown"):
    a call leaves it out unless it names it, fills its position, or splats arguments."""
    import ast

    from precision_lint.semantic.calls import call_records
    from precision_lint.semantic.evaluate import Evaluator
    from precision_lint.semantic.index import build_index

    src = "from helpers import load\nload('a')\nload('a', 'b')\nload('a', dtype='c')\nload(*xs)\nload('a', **kw)\n"
    index = build_index(src, "run")
    records = call_records(index, Evaluator(index))
    assert [r.omits("dtype", 1) for r in records] == [True, False, False, False, False]
    assert [r.omits("dtype", None) for r in records] == [True, True, False, False, False]


def test_a_signed_number_is_a_constant():
    import ast

    from precision_lint.semantic.evaluate import Evaluator
    from precision_lint.semantic.index import build_index

    src = "a = -100\nb = +0.5\nc = -x\n"
    index = build_index(src, "m")
    evaluator = Evaluator(index)
    values = {s.targets[0].id: [(v.kind, v.value) for v in evaluator.values(s.value, index.root)] for s in index.module.body}
    assert values["a"] == [("const", -100)] and values["b"] == [("const", 0.5)]
    assert values["c"][0][0] == "unknown"


def test_a_method_call_on_an_instance_made_through_module_methods_is_recorded_with_its_guards():
    """``model = Net(cfg).cuda().eval()`` holds the ``Net`` its constructor made (``nn.Module``'s
    ``to``/``cuda``/``eval``... return the module): ``model.convert()`` calls ``Net.convert``, and
    its record keeps the conditions it runs under even when it passes nothing (what makes every
    call of a method the user's choice, MP201)."""
    from precision_lint.semantic.calls import call_records
    from precision_lint.semantic.evaluate import Evaluator
    from precision_lint.semantic.index import build_index

    src = (
        "import sys\nfrom torch import nn\n\n"
        "class Net(nn.Module):\n    def convert(self):\n        pass\n\n"
        "model = Net(4).cuda().eval()\nother = Net(4).to('cuda').cpu()\n"
        "if sys.argv[1] == 'bf16':\n    model.convert()\nother.convert()\n"
    )
    index = build_index(src, "run")
    records = [r for r in call_records(index, Evaluator(index)) if r.callee == "run.Net.convert"]
    assert len(records) == 2
    assert [bool(r.guards) for r in records] == [True, False]
