"""Trained = the parameters reach an optimizer (semantic/training_state.TrainedObjects).

Each test asks one module whether the object a weights site casts or loads is trained there,
and which symbolic answers (``TrainRef``) would make it trained in another function. The
answer comes from the bindings a use reaches, never from a variable's name.
"""
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


# --- adapters injected in place (issue #24) -----------------------------------------------
def test_inject_adapter_in_model_trains_the_model_it_mutates_not_fp32_adapters_of_a_wrap():
    src = """
    import torch
    from peft import inject_adapter_in_model
    from transformers import AutoModelForCausalLM
    m = AutoModelForCausalLM.from_pretrained("x", torch_dtype=torch.float16)
    m = inject_adapter_in_model(cfg, m)
    opt = torch.optim.AdamW(m.parameters())
    """
    # the same module, its adapters in its float16 (no `autocast_adapter_dtype` upcast)
    assert trained(src, "from_pretrained") != ""
    assert trained(src.replace("inject_adapter_in_model(cfg, m)", "get_peft_model(cfg, m)")
                   .replace("import inject_adapter_in_model", "import get_peft_model"), "from_pretrained") == ""


def _state(src):
    from precision_lint.semantic.training_state import adapters_at_end, frozen_at_end

    index = build_index(dedent(src), "m")
    injection = adapters_at_end(index, ("unet",))
    return frozen_at_end(index, ("unet",)), index.text(injection) if injection is not None else None


@pytest.mark.parametrize(
    "injection",
    [
        "unet.add_adapter(LoraConfig(r=4))",
        "inject_adapter_in_model(LoraConfig(r=4), unet)",
        "unet = inject_adapter_in_model(LoraConfig(r=4), model=unet)",
    ],
)
def test_adapters_injected_after_a_freeze_make_the_model_trainable_through_them(injection):
    src = f"""
    from peft import LoraConfig, inject_adapter_in_model
    unet = load()
    unet.requires_grad_(False)
    {injection}
    """
    frozen, adapters = _state(src)
    assert frozen == "" and adapters is not None and "LoraConfig(r=4)" in adapters
    # a freeze after the injection freezes the adapters too
    frozen, adapters = _state(src.rstrip(" ") + "    unet.requires_grad_(False)\n")
    assert frozen and adapters is None
    # `requires_grad_(True)` after it trains the whole model, not only the adapters
    frozen, adapters = _state(src.rstrip(" ") + "    unet.requires_grad_(True)\n")
    assert frozen == "" and adapters is None


def test_no_injection_leaves_the_freeze_alone():
    frozen, adapters = _state("""
    unet = load()
    unet.requires_grad_(False)
    other.add_adapter(cfg)
    unet.add_adapter
    """)
    assert frozen and adapters is None


def _upcast(src, names=("unet",)):
    from precision_lint.facts.extractors.weights import _Uses

    index = build_index(dedent(src), "m")
    return _Uses(index).trainable_upcast_after(names, 0, Evaluator(index))


@pytest.mark.parametrize(
    "upcast, expected",
    [
        ("cast_training_params(unet, dtype=torch.float32)", True),
        ("cast_training_params(unet)", True),  # float32 is its default
        ("cast_training_params([unet, text_encoder], dtype=torch.float32)", True),
        ("cast_training_params(model=(text_encoder, unet))", True),
        ('if args.mixed_precision == "fp16":\n        cast_training_params(unet, dtype=torch.float32)', True),
        ("if weight_dtype == torch.float16:\n        cast_training_params(unet)", True),
        ("for n, p in unet.named_parameters():\n        pass\n    for p in unet.parameters():\n"
         "        if p.requires_grad:\n            p.data = p.data.float()", True),
        ("for name, p in unet.named_parameters():\n        if p.requires_grad:\n"
         "            p.data = p.data.to(torch.float32)", True),  # the pair's parameter (review 40u F3)
        ("for name, p in unet.named_parameters():\n        name.data = p.data.float()", False),
        ("for p in unet.parameters():\n        q = p.clone()\n        q.data = p.data.float()", False),  # a copy
        ("cast_training_params(unet, dtype=torch.bfloat16)", False),
        ("cast_training_params(text_encoder, dtype=torch.float32)", False),
        ("if args.upcast:\n        cast_training_params(unet, dtype=torch.float32)", False),
        ('if args.mixed_precision == "fp16" and args.upcast:\n        cast_training_params(unet)', False),
        ('if args.mixed_precision != "fp16":\n        cast_training_params(unet)', False),
        ("if args.upcast:\n        for p in unet.parameters():\n            p.data = p.data.float()", False),
    ],
)
def test_an_upcast_of_the_trainable_parameters_counts_on_every_fp16_path(upcast, expected):
    src = f"""
    import torch
    from diffusers.training_utils import cast_training_params
    unet = load()
    {upcast}
    """
    assert _upcast(src) is expected


def _pairwise_summary(objects):
    """The summary as the join defines it: every two uses whose keys meet link what becomes
    trained (the sinks of their keys, and what the other hands on) to what makes it so (the
    sources of their keys, and what this one hands on), each key anchored at its outermost
    whole with the part below it (``semantic/parts.py``). A use's parts are its own: its keys'
    sinks and sources, and what it hands on, are linked to each other at the parts it holds
    (a use holding a whole and parts of it holds the whole: ``parts.outermost``); across the
    two uses, what one brings to the other is its keys' wholes, and a whole this use holds only
    a part of is linked at that part alone. A use that trains makes trained the sinks of its
    own keys, and those of each other use that holds its object or a whole it is part of, for
    the part it trains (``TrainedObjects._trained_parts_of``); another part of one whole is not
    trained."""
    from precision_lint.semantic import parts
    from precision_lint.semantic import training_state as ts

    uses = objects.uses()
    every = [ts.flat(use.keys) for use in uses]
    anchors = [[parts.anchored(k) for k in use.keys] for use in uses]
    held = [parts.outermost(mine) for mine in anchors]

    def key_sinks(i, rest=(), of=anchors):
        return {ts._with_part(ts._key_sink(root), (*path, *rest)) for root, path, sinkable in of[i] if sinkable}

    def key_sources(i):
        return {ts._with_part(ts._key_source(root), path) for root, path, _ in held[i]}

    def whole_sinks(i):
        return {ts._key_sink(root) for root, _, sinkable in held[i] if sinkable}

    def whole_sources(i):
        return {ts._key_source(root) for root, _, _ in held[i]}

    def part_only_sinks(i):
        return {ts._key_sink(root) for root, path, sinkable in held[i] if sinkable and path}

    facts, edges = {}, set()
    for i, a in enumerate(uses):
        for j, b in enumerate(uses):
            if not every[i] & every[j]:
                continue
            if a.kind == "train":
                if j == i:
                    sinks = key_sinks(i)
                elif b.kind == "train":
                    continue
                else:
                    rest = parts.relation(anchors[i], anchors[j])
                    if rest is None:
                        continue
                    sinks = {ts._with_part(ts._sink_of(b), rest)} | key_sinks(j, rest)
                for sink in sinks - {None}:
                    facts.setdefault(sink, (sink, a.evidence, a.scope, a.line))
                continue
            linked = [
                (key_sinks(i, of=held), {ts._source_of(a)} | key_sources(i) | whole_sources(j)),
                (({ts._sink_of(b)} | whole_sinks(j)) - part_only_sinks(i), {ts._source_of(a)} | whole_sources(i)),
                ({ts._sink_of(b)} | key_sinks(j, of=held), key_sources(j)),
            ]
            edges.update(
                (sink, source, a.scope) for sinks, sources in linked for sink in sinks - {None} for source in sources - {None}
                if sink != source and not ts._same_parameter(sink, source)
            )
    return tuple(sorted(facts.values(), key=repr)), tuple(sorted(edges, key=repr))


def test_the_summary_links_every_two_uses_that_meet():
    # what each use brings is gathered per key, not per pair of uses (a module with thousands
    # of uses of one model): the same facts and edges as taking every pair
    helpers = "".join(
        f"""
    def step{i}(model, other, batch):
        out = model(batch)
        run{i}(model.encoder, other)
        if batch:
            return model
        return prepare{i}(other.head)
    """
        for i in range(12)
    )
    src = f"""
    import torch
    from lib import load_model, train, prepare
    {helpers}
    class Runner:
        def __init__(self, model):
            self.model = model
            self.opt = torch.optim.AdamW(self.model.parameters())
        def go(self, batch):
            return step3(self.model, self.model.decoder, batch)
    m, tok = load_model("x")
    Runner(m).go(None)
    train(step1(m, tok, None))
    opt = torch.optim.SGD(step2(m.encoder, m, None).parameters())
    """
    _, objects = _objects(src)
    assert objects.summary() == _pairwise_summary(objects)
    facts, edges = objects.summary()
    assert facts and len(edges) > 20
