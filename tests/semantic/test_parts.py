"""The parts of a trained object (``semantic/parts.py``): anchored keys, how one object lies
in another, and what a trained part says of an asked one."""
import pytest

from precision_lint.semantic import parts


def test_a_key_is_anchored_at_its_outermost_whole():
    ret = ("ret", "blocks.Net", None)
    assert parts.anchored(("part", ("part", ret, "encoder"), "[0]")) == (ret, ("encoder", "[0]"), True)
    assert parts.anchored(("part", ("self", "Net", "backbone"), "layer")) == (("instance", "Net"), ("backbone", "layer"), False)
    assert parts.anchored(ret) == (ret, (), True)


def test_paths_are_spelled_as_the_code_writes_them():
    assert parts.spelled_path(("blocks", "[0]", "attn")) == "blocks[0].attn"
    assert parts.split_path("blocks[0].attn") == ("blocks", "[0]", "attn")
    assert parts.split_path("") == ()


def test_how_one_object_lies_in_another():
    model = ("ret", "load", None)
    head = [(model, ("head",), True)]
    whole = [(model, (), True)]
    tail = [(model, ("tail",), True)]
    assert parts.relation(head, whole) == ("head",)  # the head of the whole
    assert parts.relation(whole, head) == ()  # the whole holds all of the head
    assert parts.relation(head, tail) is None  # two parts of one whole share nothing
    assert parts.relation(head, [(("ret", "other", None), (), True)]) is None


@pytest.mark.parametrize("trained, asked, shared", [
    ("", "backbone", True),
    ("backbone", "", True),
    ("backbone", "backbone.layer", True),
    ("backbone.layer", "backbone", True),
    ("head", "backbone", False),
    ("blocks[0]", "blocks[1]", False),
])
def test_a_trained_part_shares_parameters_with_an_asked_one(trained, asked, shared):
    assert parts.shares(trained, asked) is shared


@pytest.mark.parametrize("sink, source, trained, carried", [
    ("head", "", "", "head"),  # `train(model.head)`, `train` trains all it is given
    ("head", "", "fc", "head.fc"),  # ... or the `fc` of it
    ("", "encoder", "", ""),  # the linked part lies in what is trained
    ("", "encoder", "encoder.layer", "layer"),
    ("", "encoder", "decoder", None),  # another part is trained: not the one linked
])
def test_a_trained_part_is_carried_across_an_edge(sink, source, trained, carried):
    assert parts.carried(sink, source, trained) == carried
