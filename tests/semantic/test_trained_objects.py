"""Trained = the parameters reach an optimizer (semantic/training_state.TrainedObjects).

Each test asks one module whether the object a weights site casts or loads is trained there,
and which symbolic answers (``TrainRef``) would make it trained in another function. The
answer comes from the bindings a use reaches, never from a variable's name.
"""
import libcst as cst
import pytest
from conftest import dedent

from precision_lint.semantic.evaluate import Evaluator
from precision_lint.semantic.index import build_index
from precision_lint.semantic.training_state import TrainRef, TrainedObjects


def _objects(src):
    index = build_index(dedent(src), "m")
    return index, TrainedObjects(index, Evaluator(index))


def _cast(index, method="half", nth=0):
    """The ``nth`` call of ``.method(...)`` (or of a loader, for "from_pretrained")."""
    found = [s for s in index.calls if s.method == method]
    return found[nth]


def trained(src, method="half", nth=0):
    index, objects = _objects(src)
    site = _cast(index, method, nth)
    text, _ = objects.trained_here(objects.keys(site.node, site.scope, site.klass))
    return text


def sources(src, method="half", nth=0):
    index, objects = _objects(src)
    site = _cast(index, method, nth)
    return objects.sources(objects.keys(site.node, site.scope, site.klass))


@pytest.mark.parametrize(
    "optimizer",
    [
        "opt = torch.optim.AdamW(m.parameters(), lr=1e-4)",
        "opt = torch.optim.AdamW(filter(lambda p: p.requires_grad, m.parameters()))",
        "params = list(m.parameters()) + list(other.parameters())\nopt = torch.optim.Adam(params)",
        'opt = torch.optim.AdamW([{"params": m.parameters(), "lr": 1e-4}, {"params": other.parameters()}])',
        "opt = torch.optim.SGD([p for p in m.parameters() if p.requires_grad], lr=0.1)",
        "import bitsandbytes as bnb\nopt = bnb.optim.AdamW8bit(m.parameters())",
        "from transformers import Trainer\nTrainer(model=m, args=args).train()",
        "wrapped = torch.nn.parallel.DistributedDataParallel(m)\nopt = torch.optim.AdamW(wrapped.parameters())",
        "m = torch.compile(m)\nopt = torch.optim.AdamW(m.parameters())",
        "opt = torch.optim.AdamW(m.module.parameters())",
        "m, opt = accelerator.prepare(m, torch.optim.AdamW(m.parameters()))",
        "import deepspeed\nengine, opt, _, _ = deepspeed.initialize(model=m, model_parameters=m.parameters())",
    ],
)
def test_parameters_that_reach_an_optimizer_are_trained(optimizer):
    src = f"""
    import torch
    from transformers import AutoModelForCausalLM
    m = AutoModelForCausalLM.from_pretrained("x")
    other = AutoModelForCausalLM.from_pretrained("y")
    m.half()
    {optimizer}
    """
    src = "\n".join(line if i < 7 else "    " + line for i, line in enumerate(src.splitlines()))
    assert trained(src) != ""


def test_the_name_does_not_matter():
    for name in ("m", "model", "thing"):
        assert trained(f"""
        import torch
        {name} = build()
        {name}.half()
        opt = torch.optim.AdamW({name}.parameters())
        """)


@pytest.mark.parametrize(
    "other",
    [
        # the optimizer takes another model's parameters
        "opt = torch.optim.AdamW(student.parameters())",
        # only a freeze loop reads them
        "for p in m.parameters():\n    p.requires_grad = False\nopt = torch.optim.AdamW(student.parameters())",
        # called (outside no_grad), never optimized: an inference model beside a trained one
        "scores = m(ids).logits\nopt = torch.optim.AdamW(student.parameters())",
        # a Trainer loads a model by name: not this one
        "from transformers import Trainer\nTrainer(model='gpt2', args=args).train()",
    ],
)
def test_parameters_that_reach_no_optimizer_are_not_trained(other):
    src = """
    import torch
    from transformers import AutoModelForCausalLM
    student = AutoModelForCausalLM.from_pretrained("s")
    m = AutoModelForCausalLM.from_pretrained("x")
    m.half()
    """.rstrip(" ") + "\n".join("    " + line for line in other.splitlines())
    assert trained(src) == ""


def test_a_cast_to_float32_on_the_way_ends_the_float16_object():
    src = """
    import torch
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM, Trainer
    model = AutoModelForCausalLM.from_pretrained("x", torch_dtype=torch.float16)
    if use_lora:
        model = get_peft_model(model, cfg)
    else:
        model = model.float()
    Trainer(model=model, args=args).train()
    """
    assert trained(src, "from_pretrained") == ""
    # without the upcast the full fine-tune path trains the float16 load
    assert trained(src.replace("model = model.float()", "pass"), "from_pretrained") != ""


def test_a_peft_wrap_trains_the_adapters_not_the_base_unless_they_keep_its_dtype():
    src = """
    import torch
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM
    m = AutoModelForCausalLM.from_pretrained("x", torch_dtype=torch.float16)
    m = get_peft_model(m, cfg{flag})
    opt = torch.optim.AdamW(m.parameters())
    """
    assert trained(src.format(flag=""), "from_pretrained") == ""
    assert trained(src.format(flag=", autocast_adapter_dtype=False"), "from_pretrained") != ""


def test_a_model_loaded_after_training_is_not_the_trained_one():
    src = """
    import torch
    from transformers import AutoModelForCausalLM, Trainer
    model = AutoModelForCausalLM.from_pretrained("x")
    Trainer(model=model, args=args).train()
    model = AutoModelForCausalLM.from_pretrained("out", torch_dtype=torch.float16)
    model.save_pretrained("merged")
    """
    assert trained(src, "from_pretrained", 0) != ""
    assert trained(src, "from_pretrained", 1) == ""


@pytest.mark.parametrize("params", ["self.parameters()", "self.model.parameters()"])
def test_a_lightning_module_trains_what_its_optimizer_takes(params):
    src = f"""
    import torch
    import lightning as L
    from transformers import AutoModelForCausalLM

    class Lit(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.model = AutoModelForCausalLM.from_pretrained("x", torch_dtype=torch.float16)
            self.judge = AutoModelForCausalLM.from_pretrained("j", torch_dtype=torch.float16)

        def configure_optimizers(self):
            return torch.optim.AdamW({params})
    """
    assert trained(src, "from_pretrained", 0) != ""
    # `self.parameters()` holds every submodule; `self.model.parameters()` only that one
    assert (trained(src, "from_pretrained", 1) != "") == (params == "self.parameters()")


def test_a_lightning_trainer_fit_trains_the_module():
    src = """
    import lightning as L
    net = LitNet()
    net.half()
    trainer = L.Trainer(precision="16-mixed")
    trainer.fit(net, loader)
    """
    assert trained(src) != ""


# --- across functions: the symbolic answers --------------------------------------------
def test_a_model_handed_to_a_project_function_is_trained_if_that_function_trains_it():
    src = """
    import torch
    from trainlib import train
    from transformers import AutoModel
    model = AutoModel.from_pretrained("x")
    model.half()
    train(model, loader)
    """
    assert trained(src) == ""
    assert TrainRef("param-in", "trainlib.train", "", 0, None) in sources(src)


def test_a_parameter_trained_inside_its_function_is_a_fact():
    index, objects = _objects("""
    import torch
    def train(model, loader, lr=1e-4):
        opt = torch.optim.AdamW(model.parameters(), lr=lr)
    """)
    facts, _ = objects.summary()
    assert [f[0] for f in facts] == [TrainRef("param-in", "m.train", "model", 0, None)]


def test_what_a_caller_trains_of_a_return_is_a_fact_and_a_helper_passes_it_on():
    index, objects = _objects("""
    import torch
    from lib import load_model, train
    def run(model):
        train(model)
    m, tok = load_model("x")
    Trainer(model=m, args=args).train()
    """)
    facts, edges = objects.summary()
    assert TrainRef("return", "lib.load_model", index=0) in [f[0] for f in facts]
    # `run` trains its parameter when `train` trains what it is given
    assert (TrainRef("param-in", "m.run", "model", 0, None), TrainRef("param-in", "lib.train", "", 0, None)) in [
        e[:2] for e in edges
    ]


def test_a_helper_that_casts_what_callers_pass_does_not_train_it():
    # `cast(vae)` and `cast(unet)`: what one caller trains says nothing of the other's model
    index, objects = _objects("""
    def cast(model, dtype):
        model.to(dtype=dtype)
        return model
    """)
    _, edges = objects.summary()
    assert not any(e[0].kind == "param-in" for e in edges)


def test_a_method_of_what_a_factory_function_returns_is_that_class_s():
    # `runner = make_runner(...)`; `runner.build(name)` runs `Runner.build`: the model it
    # returns is what the caller trains
    from precision_lint.semantic.callees import project_callee

    index = build_index(dedent("""
    class Runner:
        def build(self, name):
            return load(name)

    def make_runner(dtype):
        return Runner()

    def make_anything(kind):
        if kind:
            return Runner()
        return dict()

    runner = make_runner(1)
    model = runner.build("s")
    other = make_anything(1)
    thing = other.build("s")
    """), "m")
    built = [s for s in index.calls if s.method == "build"]
    assert project_callee(index, built[0]) == "m.Runner.build"
    assert project_callee(index, built[1]) is None  # not always a Runner


TRAINER_USES = """
    import torch
    from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments

    def run():
        model = AutoModelForSequenceClassification.from_pretrained("m", dtype=torch.float16)
        trainer = Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=True))
        USE
"""


@pytest.mark.parametrize("use", ["trainer.predict(ds)", "metrics = trainer.evaluate()\n        print(metrics)"])
def test_a_trainer_used_only_to_evaluate_trains_nothing(use):
    from conftest import lint

    assert lint(TRAINER_USES.replace("USE", use), "MP101") == []


@pytest.mark.parametrize(
    "use",
    ["trainer.evaluate()\n        trainer.train()", "return trainer", "launch(trainer)", "self_trainers = [trainer]"],
)
def test_a_trainer_that_trains_or_escapes_is_trained(use):
    from conftest import lint

    assert len(lint(TRAINER_USES.replace("USE", use), "MP101")) == 1
