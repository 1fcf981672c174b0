"""MP104 adam-eps-underflows-in-fp16: positives with the unsafe fix, negatives, the numerics."""
import pytest

from conftest import dedent, fix, lint

CODE = "MP104"


@pytest.mark.parametrize(
    "before, after",
    [
        (  # the default eps, a model cast with .half() in a chain
            """
            import torch
            from transformers import GPT2LMHeadModel
            model = GPT2LMHeadModel(config).half().to("cuda")
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
            """,
            """
            import torch
            from transformers import GPT2LMHeadModel
            model = GPT2LMHeadModel(config).half().to("cuda")
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, eps=1e-4)
            """,
        ),
        (  # an explicit tiny eps; float16 weights from from_pretrained; parameter groups
            """
            import torch
            from torch.optim import Adam
            from transformers import AutoModelForCausalLM
            student = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)
            groups = [{"params": [p for n, p in student.named_parameters() if "bias" not in n]}]
            opt = Adam(groups, lr=1e-4, eps=1e-10)
            """,
            """
            import torch
            from torch.optim import Adam
            from transformers import AutoModelForCausalLM
            student = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)
            groups = [{"params": [p for n, p in student.named_parameters() if "bias" not in n]}]
            opt = Adam(groups, lr=1e-4, eps=1e-4)
            """,
        ),
        (  # a project module cast in place; one argument per line
            """
            import torch
            from torch import nn
            class Net(nn.Module):
                pass
            net = Net()
            net.half()
            opt = torch.optim.AdamW(
                net.parameters(),
                lr=1e-3
            )
            """,
            """
            import torch
            from torch import nn
            class Net(nn.Module):
                pass
            net = Net()
            net.half()
            opt = torch.optim.AdamW(
                net.parameters(),
                lr=1e-3,
                eps=1e-4
            )
            """,
        ),
    ],
)
def test_unsafe_fix(before, after):
    (d,) = lint(before, CODE)
    assert d.fix.applicability == "unsafe"
    assert fix(before, CODE) == dedent(before)  # never applied without --unsafe-fixes
    fixed = fix(before, CODE, unsafe=True)
    assert fixed == dedent(after)
    assert not lint(fixed, CODE)
    assert fix(fixed, CODE, unsafe=True) == fixed


def test_message_and_related_location():
    src = """
    import torch
    model = MyModel().half()
    opt = torch.optim.Adam(model.parameters())
    """
    (d,) = lint(src, CODE)
    assert "default eps=1e-8" in d.message and "rounds to 0" in d.message and "fp32-master" in d.message
    assert d.related[0].span.line == 2


@pytest.mark.parametrize(
    "src",
    [
        # float32 parameters
        "import torch\nmodel = Net()\nopt = torch.optim.AdamW(model.parameters())\n",
        # float16 model, but an eps float16 can hold
        "import torch\nmodel = Net().half()\nopt = torch.optim.AdamW(model.parameters(), eps=1e-6)\n",
        "import torch\nmodel = Net().half()\nopt = torch.optim.Adam(model.parameters(), 1e-3, (0.9, 0.999), 1e-4)\n",
        # another model is float16; this optimizer updates the float32 one
        "import torch\nteacher = Net().half()\nstudent = Net()\nopt = torch.optim.AdamW(student.parameters())\n",
        # not the Adam family
        "import torch\nmodel = Net().half()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n",
        # an eps that is not a known number
        "import torch\nmodel = Net().half()\nopt = torch.optim.AdamW(model.parameters(), eps=args.eps)\n",
    ],
)
def test_negatives(src):
    assert not lint(src, CODE)


def test_default_eps_gives_nan_parameters_on_cpu():
    """The failure the rule is about, and what eps=1e-4 changes, with float16 tensors on CPU."""
    torch = pytest.importorskip("torch")

    def step(eps):
        torch.manual_seed(0)
        emb = torch.nn.Embedding(8, 4).half()
        opt = torch.optim.AdamW(emb.parameters(), lr=1e-3, eps=eps)
        emb(torch.tensor([1, 2])).float().sum().backward()  # rows 0, 3..7 get zero gradients
        opt.step()
        return emb.weight

    assert torch.isnan(step(1e-8)).any()
    assert torch.isfinite(step(1e-4)).all()


def test_fixture_header_fixes_unsafe(tmp_path):
    from precision_lint.verify.fixture import FixtureError, load_fixture

    head = "# precision-lint fixture\n# rule: MP104\n# needs: cpu\n# expect: non-finite loss\n# steps: 2\n"
    path = tmp_path / "fx.py"
    path.write_text(head + "# fixes: unsafe\nprint(1)\n")
    assert load_fixture(path).fixes == "unsafe"
    path.write_text(head + "print(1)\n")
    assert load_fixture(path).fixes == "safe"
    path.write_text(head + "# fixes: maybe\nprint(1)\n")
    with pytest.raises(FixtureError, match="fixes must be"):
        load_fixture(path)


APEX_LOOP = """
    import torch
    from apex import amp

    model = torch.nn.Linear(4, 4).cuda().half()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model, optimizer = amp.initialize(model, optimizer, INIT)
    loss = model(torch.randn(2, 4).cuda().half()).sum()
    with amp.scale_loss(loss, optimizer) as scaled:
        scaled.backward()
    optimizer.step()
"""


@pytest.mark.parametrize(
    "init",
    ['opt_level="O2"', 'opt_level="O1", master_weights=True', 'opt_level=LEVEL'],
)
def test_apex_float32_master_weights_are_not_float16_for_the_optimizer(init):
    src = APEX_LOOP.replace("INIT", init)
    if "LEVEL" in init:
        src = src.replace("from apex import amp\n", 'from apex import amp\n    LEVEL = "O2"\n')
    assert lint(src, "MP104") == []


@pytest.mark.parametrize("init", ['opt_level="O1"', 'opt_level="O3"', 'opt_level="O2", master_weights=False'])
def test_apex_levels_that_step_the_float16_parameters_themselves(init):
    assert len(lint(APEX_LOOP.replace("INIT", init), "MP104")) == 1


def test_apex_with_the_optimizer_written_in_place():
    src = """
        import torch
        from apex import amp

        model = torch.nn.Linear(4, 4).half()
        model, optimizer = amp.initialize(model, torch.optim.Adam(model.parameters()), opt_level="O2")
    """
    assert lint(src, "MP104") == []


FP16_OPTIMIZER = """
    import torch
    from apex.fp16_utils import FP16_Optimizer

    def build(model):
        {build}

    model = torch.nn.Linear(4, 4).cuda().half()
    optimizer = build(model)
    optimizer = FP16_Optimizer({wrapped}, dynamic_loss_scale=True)
    loss = model(torch.randn(2, 4).cuda().half()).sum()
    optimizer.backward(loss)
    optimizer.step()
"""


@pytest.mark.parametrize(
    "build",
    ["return torch.optim.Adam(model.parameters(), lr=1e-4)", "opt = torch.optim.Adam(model.parameters())\n        return opt"],
    ids=["returned-call", "returned-name"],
)
def test_apex_fp16_optimizer_steps_float32_master_copies(build):
    """``FP16_Optimizer(opt)`` replaces the float16 parameters of ``opt`` by float32 master copies
    that Adam steps (review 22e's FP: Transformer-XL's ``--fp16``, its Adam built by a helper)."""
    assert lint(FP16_OPTIMIZER.format(build=build, wrapped="optimizer"), "MP104") == []
    # another optimizer wrapped: this one still steps the float16 parameters
    other = FP16_OPTIMIZER.format(build=build, wrapped="torch.optim.SGD(model.parameters(), lr=0.1)")
    assert [d.code for d in lint(other, "MP104")] == ["MP104"]


TWO_FUNCTIONS = """
    import torch


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)


    def evaluate(path):
        model = Net().half().eval()
        model.load_state_dict(torch.load(path))
        return model


    def train():
        model = NET
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        return opt
"""


def test_an_fp16_model_of_another_function_is_another_object():
    """`evaluate`'s float16 `model` is not the float32 `model` that `train` optimizes."""
    assert lint(TWO_FUNCTIONS.replace("NET", "Net()"), "MP104") == []


def test_the_fp16_model_of_the_optimizers_own_function_is_reported():
    assert len(lint(TWO_FUNCTIONS.replace("NET", "Net().half()"), "MP104")) == 1


def test_a_module_level_fp16_model_is_the_one_a_function_optimizes():
    src = """
        import torch

        model = torch.nn.Linear(4, 4).half()

        def train():
            return torch.optim.AdamW(model.parameters())
    """
    assert len(lint(src, "MP104")) == 1


@pytest.mark.parametrize("cast", ["model.float()", "model.to(torch.float32)", "model.to(dtype=torch.float32)"])
def test_an_in_place_cast_back_to_float32_before_training(cast):
    src = f"""
        import torch
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)
        {cast}
        opt = torch.optim.AdamW(model.parameters())
        scaler = torch.amp.GradScaler("cuda")
    """
    assert lint(src, "MP104") == [] and lint(src, "MP101") == []


def test_a_cast_back_only_in_some_runs_leaves_the_fp16_run():
    src = """
        import torch
        from transformers import AutoModelForCausalLM

        def main(keep_half):
            model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)
            if not keep_half:
                model.float()
            opt = torch.optim.AdamW(model.parameters())
            scaler = torch.amp.GradScaler("cuda")
    """
    assert len(lint(src, "MP104")) == 1


# --- which model's parameters the optimizer updates: read from the tree, never from the text ----
OWNERS = """
import itertools
import torch

model = torch.nn.Linear(4, 4).half()
head = torch.nn.Linear(4, 2)
PARAMS
opt = torch.optim.AdamW(ARGS, lr=1e-3)
"""


@pytest.mark.parametrize(
    "params, args",
    [
        ("", "model.parameters()"),
        ("", '[{"params": model.parameters(), "weight_decay": 0.0}, {"params": head.parameters()}]'),
        ("", "filter(lambda p: p.requires_grad, model.parameters())"),
        ("", "itertools.chain(head.parameters(), model.parameters())"),
        ("params = [p for n, p in model.named_parameters() if 'bias' not in n]", "params"),
        ("groups = [{'params': [p for p in model.parameters() if p.requires_grad]}]", "groups"),
        # a receiver written over two lines
        ("", "(model\n    .parameters())"),
    ],
)
def test_the_float16_models_parameters_are_found_in_any_shape(params, args):
    assert len(lint(OWNERS.replace("PARAMS", params).replace("ARGS", args), CODE)) == 1


@pytest.mark.parametrize(
    "params, args",
    [
        ("", "head.parameters()"),
        # `.parameters(` in a comment inside the call, or in a string
        ("", "head.parameters()  # not model.parameters(): the backbone stays frozen\n"),
        ("", "[\n    head.parameters(),  # not model.parameters(): the backbone stays frozen\n]"),
        ("", '[{"params": head.parameters(), "name": "model.parameters()"}]'),
        ("params = [\n    p for p in head.parameters()  # was: model.parameters()\n    if p.requires_grad\n]", "params"),
        # a function named like the method is no call of it
        ("", "parameters_of(head)"),
    ],
)
def test_text_that_mentions_another_models_parameters_is_no_owner(params, args):
    assert lint(OWNERS.replace("PARAMS", params).replace("ARGS", args), CODE) == []


def test_a_model_reloaded_and_cast_after_the_optimizer_is_another_object():
    """A later notebook cell reloads the model for chatting and casts that one (review 24c): the
    optimizer holds the first model's float32 parameters; an in-place cast of the optimizer's own
    model after it is still its parameters made float16."""
    reloaded = (
        "import torch\nfrom transformers import AutoModel\nmodel = AutoModel.from_pretrained('m')\n"
        "optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)\nfor batch in loader:\n"
        "    model(**batch).loss.backward()\n    optimizer.step()\n"
        "model = AutoModel.from_pretrained('m')\nmodel.half().cuda().eval()\n"
    )
    assert lint(reloaded, "MP104") == []
    same = reloaded.replace("model = AutoModel.from_pretrained('m')\nmodel.half()", "model.half()")
    assert [d.code for d in lint(same, "MP104")] == ["MP104"]
