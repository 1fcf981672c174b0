"""Object identity in the semantic layer (issue #24).

An alias is the same object (``unet = pipe.unet``, ``trainable = unet``); an attribute path of
a known object (``pipe.unet``) is an object of its own, a part of that object: what trains a
part trains the whole's weights there, what trains the whole trains its parts, and two parts
of one whole are two objects. Kinds come from uses, never from names.
"""
import ast

from conftest import dedent

from precision_lint.semantic.evaluate import Evaluator
from precision_lint.semantic.index import build_index
from precision_lint.semantic.kinds import object_kinds
from precision_lint.semantic.training_state import TrainedObjects, flat, meets

SRC = """
import torch
from diffusers import StableDiffusionPipeline

def main():
    pipe = StableDiffusionPipeline.from_pretrained("sd")
    pipe.vae.to(dtype=torch.float16)
    pipe.unet.to(dtype=torch.float16)
    unet = pipe.unet
    trainable = unet
    opt = torch.optim.AdamW(trainable.parameters(), lr=1e-4)
"""


def _setup(src=SRC):
    index = build_index(dedent(src), "m")
    return index, TrainedObjects(index, Evaluator(index))


def _site(index, method, receiver):
    return next(s for s in index.calls if s.method == method and s.receiver is not None and index.text(s.receiver) == receiver)


def test_two_parts_of_one_whole_are_two_objects():
    index, objects = _setup()
    vae, unet = _site(index, "to", "pipe.vae"), _site(index, "to", "pipe.unet")
    vae_keys = objects.keys(vae.node, vae.scope)
    unet_keys = objects.keys(unet.node, unet.scope)
    assert not meets(vae_keys, unet_keys)
    assert flat(vae_keys) & flat(unet_keys)  # the same pipeline, across functions
    assert objects.trained_here(unet_keys)[0].startswith("`torch.optim.AdamW(...)`")
    assert objects.trained_here(vae_keys) == ("", "")


def test_a_whole_meets_its_parts_and_names_the_trained_ones():
    index, objects = _setup()
    load = next(s for s in index.calls if s.method == "from_pretrained")
    keys = objects.keys(load.node, load.scope)
    assert objects.trained_here(keys)[0]
    assert objects.trained_parts(keys) == ("unet",)
    opt = next(s for s in index.calls if (s.qualname or "").endswith("AdamW"))
    assert objects.trainers(keys) == (index.span(opt.node).start,)


def test_a_trained_whole_trains_a_part_cast_alone():
    index, objects = _setup(SRC.replace("trainable.parameters()", "pipe.parameters()"))
    vae = _site(index, "to", "pipe.vae")
    keys = objects.keys(vae.node, vae.scope)
    assert objects.trained_here(keys)[0]
    load = next(s for s in index.calls if s.method == "from_pretrained")
    assert objects.trained_parts(objects.keys(load.node, load.scope)) == ()  # the whole itself


def test_aliases_and_paths_are_models_by_their_uses():
    index, _ = _setup()
    kinds = object_kinds(index)
    unet, vae = _site(index, "to", "pipe.unet"), _site(index, "to", "pipe.vae")
    assert kinds.is_model(unet.receiver, unet.scope)  # `trainable.parameters()`, trainable = unet = pipe.unet
    assert not kinds.is_model(vae.receiver, vae.scope)  # nothing uses `pipe.vae` as a module


def test_a_name_is_no_model_by_its_spelling():
    index, _ = _setup("""
    import torch

    def main(cfg):
        unet = cfg.unet
        unet.to(dtype=torch.float16)
    """)
    site = _site(index, "to", "unet")
    assert not object_kinds(index).is_model(site.receiver, site.scope)


def _value_of(src, name):
    index = build_index(dedent(src), "m")
    ev = Evaluator(index)
    node = next(
        s.node.args[0] for s in index.calls if s.method == "to"
    )
    assert isinstance(node, ast.Name) and node.id == name
    return sorted(v.value for v in ev.values(node, index.scope_of(node)))


RUN = """
import torch
from accelerate import Accelerator

def main(m):
    accelerator = Accelerator(mixed_precision=MP)
    dtype = torch.float32
    if accelerator.mixed_precision == "fp16":
        dtype = torch.float16
    elif accelerator.mixed_precision == "bf16":
        dtype = torch.bfloat16
    m.to(dtype)
"""


def test_the_accelerators_precision_decides_a_dtype_chosen_by_it():
    assert _value_of(RUN.replace("MP", '"no"'), "dtype") == ["float32"]
    assert _value_of(RUN.replace("MP", '"bf16"'), "dtype") == ["bfloat16", "float32"]
    assert _value_of(RUN.replace("MP", '"fp16"'), "dtype") == ["float16", "float32"]
    # the launch's precision (no keyword): any branch
    assert _value_of(RUN.replace("MP", "None"), "dtype") == ["bfloat16", "float16", "float32"]
    assert _value_of(RUN.replace("(mixed_precision=MP)", "()"), "dtype") == ["bfloat16", "float16", "float32"]


def test_the_other_spellings_of_an_object_in_its_code():
    from precision_lint.semantic.kinds import same_names

    index = build_index(dedent("""
    def main(accelerator, pipe, teacher, student):
        unet = pipe.unet
        unet, opt = accelerator.prepare(unet, opt)
        trainable = unet
        p = pipe
        model = teacher
        model = student
    """), "m")
    scope = index.functions["m.main"]
    assert set(same_names(("pipe.unet",), scope)) == {"pipe.unet", "unet", "trainable", "p.unet"}
    # a name bound to two objects spells neither
    assert same_names(("teacher",), scope) == ("teacher",)


def test_none_true_and_false_are_no_objects():
    """Two variables that start as ``None`` are not one object through it, and ``x = None``
    aliases nothing: a constant holds no model."""
    from precision_lint.semantic.kinds import same_names

    src = """
    import torch

    def main(load):
        teacher = None
        student = None
        teacher = load("t")
        student = load("s")
        flag = True
        other = True
        return teacher, student, flag, other
    """
    index, trained = _setup(src)
    scope = index.functions["m.main"]
    ret = next(n for n in ast.walk(index.module) if isinstance(n, ast.Return)).value.elts
    teacher, student, flag, other = (trained.keys(e, scope) for e in ret)
    assert not (teacher & student) and not (flag & other)
    assert same_names(("teacher",), scope) == ("teacher",)
    nothing = index.functions["m.main"]
    assert same_names(("None",), nothing) == ("None",)
