"""Object kinds: a model is known by how it is made and used, never by its variable's name.

``x.half()`` casts a model's parameters (MP101's business) or makes a float16 tensor (not).
"""
import pytest
from conftest import dedent, lint

from precision_lint.semantic.index import build_index
from precision_lint.semantic.kinds import object_kinds

LOOP = """
    import torch
    {made}
    {name}.half()
    opt = torch.optim.AdamW({name}.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    """


@pytest.mark.parametrize("name", ["m", "model", "thing"])
def test_a_model_used_as_one_is_a_model_whatever_its_name(name):
    # A8: MP101 fired for `model` and said nothing for `m` (a regex on variable names).
    src = LOOP.format(made=f"{name} = build()", name=name)
    (d,) = lint(src, "MP101")
    assert d.span.line == 3


def test_a_tensor_named_like_a_model_is_a_tensor():
    src = """
        import torch
        model_input = torch.randn(4, 8)
        model_input.half()
        teacher = torch.zeros(3)
        teacher.half()
        scaler = torch.amp.GradScaler("cuda")
        """
    assert lint(src, "MP101") == []


def test_an_unknown_value_with_no_module_use_is_no_model():
    src = """
        import torch
        model = make_something()
        model.half()
        scaler = torch.amp.GradScaler("cuda")
        """
    assert lint(src, "MP101") == []


def _receivers(src):
    ix = build_index(dedent(src), "m")
    kinds = object_kinds(ix)
    return {
        ix.text(site.receiver): kinds.is_model(site.receiver, site.scope, site.klass)
        for site in ix.calls
        if site.method in ("half", "to") and site.receiver is not None
    }


def test_kinds_from_how_values_are_made():
    assert _receivers(
        """
        import torch
        from transformers import AutoModel
        class Net(torch.nn.Module):
            pass
        a = AutoModel.from_pretrained("x")
        b = Net()
        c = torch.nn.Linear(2, 2).cuda()
        t = torch.ones(3)
        a.half(); b.half(); c.half(); t.half()
        """
    ) == {"a": True, "b": True, "c": True, "t": False}


def test_library_model_factories_make_models():
    # 49a: `timm.create_model(...).half()` under a GradScaler gave no MP101 (nothing said what
    # the factory returns); torchvision's builders and segmentation_models_pytorch's classes too
    assert _receivers(
        """
        import timm
        import torch
        import segmentation_models_pytorch as smp
        from torchvision import models
        a = timm.create_model("resnet18", num_classes=10)
        b = models.resnet18(weights=None)
        c = models.detection.fasterrcnn_resnet50_fpn()
        d = smp.Unet("resnet34")
        e = torch.hub.load("pytorch/vision", "resnet50")
        w = models.get_weight("ResNet18_Weights.DEFAULT")
        a.half(); b.half(); c.half(); d.half(); e.half(); w.half()
        """
    ) == {"a": True, "b": True, "c": True, "d": True, "e": True, "w": False}


def test_a_cast_chained_on_a_library_factory_is_trained_in_float16():
    src = """
        import timm
        import torch

        def main(loader):
            model = timm.create_model("resnet18", num_classes=10).half().cuda()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            scaler = torch.amp.GradScaler("cuda")
            for x, y in loader:
                with torch.autocast("cuda", dtype=torch.float16):
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()

        main([])
        """
    (d,) = lint(src, "MP101")
    assert d.span.line == 5 and "timm.create_model" in d.message


def test_a_called_and_cast_value_is_a_module_a_cast_alone_is_not():
    assert _receivers(
        """
        def step(net, x, batch):
            net.half()
            batch.half()
            return net(x)
        """
    ) == {"net": True, "batch": False}


def test_an_attribute_on_self_is_known_by_what_init_sets_or_how_it_is_used():
    assert _receivers(
        """
        import torch
        class Wrapper:
            def __init__(self):
                self.body = torch.nn.Linear(2, 2)
                self.buf = torch.zeros(2)
                self.other = load()
            def cast(self):
                self.body.half()
                self.buf.half()
                self.other.half()
            def freeze(self):
                self.other.eval()
        """
    ) == {"self.body": True, "self.buf": False, "self.other": True}


def test_a_parameter_is_a_model_when_its_callers_pass_or_get_back_one():
    assert _receivers(
        """
        import torch
        def cast(module, dtype):
            return module.to(dtype)
        def to_half(x):
            return x.half()
        net = cast(build(), torch.float16)
        net.train()
        y = to_half(torch.ones(2))
        """
    ) == {"module": True, "x": False}


def test_a_library_model_class_and_a_model_handed_to_a_trainer_are_models():
    # `GPT2LMHeadModel(config)` is built, not loaded; `Trainer(model=m)` and `get_peft_model(m, c)`
    # take a model (found by the slow verify test of a user's Trainer script, silent for a while)
    assert _receivers(
        """
        from transformers import GPT2Config, GPT2LMHeadModel, Trainer
        from peft import get_peft_model
        a = GPT2LMHeadModel(GPT2Config())
        cfg = GPT2Config()
        b = build()
        c = build()
        a.half(); cfg.half(); b.half(); c.half()
        Trainer(model=b)
        get_peft_model(c, lora)
        """
    ) == {"a": True, "cfg": False, "b": True, "c": True}


def test_mp101_on_a_built_library_model_cast_to_half_under_a_trainer():
    src = """
        from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments
        model = GPT2LMHeadModel(GPT2Config(n_layer=2))
        model.half()
        args = TrainingArguments(output_dir="out", fp16=True)
        Trainer(model=model, args=args).train()
        """
    (d,) = lint(src, "MP101")
    assert d.span.line == 3


# --- which class an object is an instance of (instance_classes) -----------------------------------
def _classes_of_reads(src, attr):
    """The classes instance_classes gives the receiver of each ``.attr`` read, in order."""
    from precision_lint.semantic.kinds import instance_classes

    ix = build_index(dedent(src), "m")
    return [instance_classes(ix, u.base, u.scope, u.klass) for u in ix.attr_uses if u.attr == attr]


def test_instance_classes_from_how_the_object_is_made():
    src = """
        from accelerate import Accelerator
        from accelerate.state import AcceleratorState
        from trl import ModelConfig, TrlParser, ScriptArguments

        def make():
            return Accelerator()

        acc = make()
        alias = acc
        print(alias.use_fp16, alias.state.use_fp16, AcceleratorState().use_fp16)
        parser = TrlParser((ScriptArguments, ModelConfig))
        script_args, model_args = parser.parse_args_and_config()
        print(script_args.torch_dtype, model_args.torch_dtype, parser.parse_args_and_config()[1].torch_dtype)

        def f(m: "ModelConfig", n: ModelConfig | None, o):
            return m.torch_dtype, n.torch_dtype, o.torch_dtype
        """
    assert _classes_of_reads(src, "use_fp16") == [
        ("accelerate.Accelerator",), ("accelerate.state.AcceleratorState",), ("accelerate.state.AcceleratorState",)
    ]
    assert _classes_of_reads(src, "torch_dtype") == [
        ("trl.ScriptArguments",), ("trl.ModelConfig",), ("trl.ModelConfig",), ("trl.ModelConfig",), ("trl.ModelConfig",), (),
    ]


@pytest.mark.parametrize("name", ["accelerator", "model_args", "x"])
def test_instance_classes_never_from_a_name(name):
    src = f"""
        def f({name}):
            return {name}.use_fp16
        {name} = load()
        print({name}.use_fp16)
        """
    assert _classes_of_reads(src, "use_fp16") == [(), ()]


def test_an_attribute_rebound_to_a_part_of_itself_ends_the_walk():
    """``self.model = self.model.module`` (an unwrapped DDP model, review 25e): what makes
    ``self.model`` is what makes ``self.model``'s ``module``, which asks what makes ``self.model``
    again. The walk's depth carries through, so it ends (it recursed until Python's limit and the
    file's analysis failed, MP003)."""
    src = (
        "import torch\n\n"
        "class Trainer:\n"
        "    def __init__(self, model, distributed):\n"
        "        self.model = model\n"
        "        if distributed:\n"
        "            self.model = self.model.module\n\n"
        "    def step(self, a, b):\n"
        "        return self.model.join(a, b).to(self.device)\n"
    )
    index = build_index(src, "t")
    kinds = object_kinds(index)
    site = next(s for s in index.calls if s.method == "to")
    assert kinds.constructor_calls(site.receiver, site.scope, site.klass) == ()
