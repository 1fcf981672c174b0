"""The syntactic walks of the evaluator (``Evaluator._reached``) read a variable through the
bindings that reach the read, as every other question does (issue #23: one policy for what a use
sees). What they answer is evidence: whether a guard consults the GPU's capability or CUDA, whether
it is the user's own switch, whether a dtype may reach an argument. A binding made after the read
(or hidden by a later one) is never part of it.

The cheap pre-filter built on the same walk (``mentions_dtype`` / ``may_carry``) answers "no" only
where no dtype can reach: whenever the evaluator finds a dtype at an expression, it says yes."""
import ast

import pytest
from conftest import dedent, lint

from precision_lint.semantic.evaluate import Evaluator
from precision_lint.semantic.index import build_index, nodes_of
from precision_lint.semantic.values import dtypes


def _test_of_if(src):
    """The index, an evaluator and the test of the (last) ``if`` / conditional expression."""
    ix = build_index(dedent(src), "train")
    tests = [n.test for n in nodes_of(ix.module) if isinstance(n, (ast.If, ast.IfExp))]
    return ix, Evaluator(ix), tests[-1]


CONSULTS = {
    # (source, what the test consults: (capability, cuda, param_dtype))
    "a capability probe bound after the test": (
        """
        ok = torch.cuda.is_available()
        dtype = torch.bfloat16 if ok else torch.float32
        ok = torch.cuda.get_device_capability()[0] >= 8
        """,
        (False, True, False),
    ),
    "a capability probe hidden by a later binding": (
        """
        ok = torch.cuda.get_device_capability()[0] >= 8
        ok = torch.cuda.is_available()
        dtype = torch.bfloat16 if ok else torch.float32
        """,
        (False, True, False),
    ),
    "a capability probe that reaches the test": (
        """
        ok = torch.cuda.is_available()
        ok = ok and torch.cuda.get_device_capability()[0] >= 8
        dtype = torch.bfloat16 if ok else torch.float32
        """,
        (True, True, False),
    ),
    "a probe in one branch reaches the test": (
        """
        ok = False
        if torch.cuda.is_available():
            ok = torch.cuda.get_device_capability()[0] >= 8
        dtype = torch.bfloat16 if ok else torch.float32
        """,
        (True, False, False),
    ),
    "a function reads the module's variable as it is at the end": (
        """
        ok = torch.cuda.is_available()
        def pick():
            return torch.bfloat16 if ok else torch.float32
        ok = torch.cuda.get_device_capability()[0] >= 8
        """,
        (True, False, False),
    ),
}


@pytest.mark.parametrize("shape", sorted(CONSULTS))
def test_what_a_test_consults_is_what_reaches_it(shape):
    src, expected = CONSULTS[shape]
    ix, ev, test = _test_of_if("import torch\n" + dedent(src))
    assert ev.consults(test, ix.scope_of(test), set()) == expected


def test_a_switch_bound_after_the_test_is_not_the_users_choice():
    src = """
        import argparse
        import torch
        parser = argparse.ArgumentParser()
        parser.add_argument("--bf16", action="store_true")
        args = parser.parse_args()
        use_bf16 = torch.cuda.device_count() > 0
        dtype = torch.bfloat16 if use_bf16 else torch.float32
        use_bf16 = args.bf16
        """
    ix, ev, test = _test_of_if(src)
    assert not ev.guard(test, True, ix.scope_of(test)).user_choice
    # the option itself reaching the test: the user's switch
    lines = dedent(src).splitlines()
    lines[5], lines[7] = lines[7], lines[5]
    ix, ev, test = _test_of_if("\n".join(lines))
    assert ev.guard(test, True, ix.scope_of(test)).user_choice


# the rules' repros: MP201 took a capability probe (or the user's option) bound after the load as
# the guard of the load's bf16
MP201_REPROS = {
    "a probe bound after the load": """
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        def main():
            bf16_ok = torch.cuda.is_available()
            dtype = torch.bfloat16 if bf16_ok else torch.float32
            model = AutoModelForCausalLM.from_pretrained("gpt2", dtype=dtype)
            Trainer(model=model, args=TrainingArguments(output_dir="out")).train()
            bf16_ok = torch.cuda.get_device_capability()[0] >= 8
            return bf16_ok
        """,
    "the user's option bound after the load": """
        import argparse
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        parser = argparse.ArgumentParser()
        parser.add_argument("--bf16", action="store_true")
        args = parser.parse_args()
        use_bf16 = torch.cuda.device_count() > 0
        dtype = torch.bfloat16 if use_bf16 else torch.float32
        model = AutoModelForCausalLM.from_pretrained("gpt2", dtype=dtype)
        Trainer(model=model, args=TrainingArguments(output_dir="out")).train()
        use_bf16 = args.bf16
        """,
}


@pytest.mark.parametrize("shape", sorted(MP201_REPROS))
def test_mp201_is_not_silenced_by_a_guard_bound_after_the_load(shape):
    src = MP201_REPROS[shape]
    assert [d.code for d in lint(src, "MP201")] == ["MP201"]
    # the same binding before the load guards it
    lines = dedent(src).rstrip("\n").splitlines()
    late = lines[-2] if lines[-1].strip().startswith("return") else lines[-1]
    moved = [line for line in lines if line is not late]
    at = next(i for i, line in enumerate(moved) if "dtype = torch.bfloat16" in line)
    moved.insert(at, late)
    assert lint("\n".join(moved) + "\n", "MP201") == []


# --- the pre-filter: "no" only where no dtype can reach -----------------------------------
PROGRAMS = [
    """
    import torch
    dtype = torch.float16
    x = torch.zeros(2, dtype=dtype)
    y = x.to(dtype)
    dtype = "cuda"
    z = x.to(dtype)
    """,
    """
    import torch
    def pick(half):
        if half:
            return torch.float16
        return torch.float32
    d = pick(True)
    t = torch.ones(1).to(d)
    """,
    """
    import torch
    TABLE = {"fp16": torch.float16, "fp32": torch.float32}
    key = "fp16"
    d = TABLE[key]
    e = TABLE.get("fp32")
    t = torch.ones(1, dtype=d).to(e)
    """,
    """
    import torch
    name = "float16"
    d = getattr(torch, name)
    s = "bf16"
    t = torch.ones(1).to(d)
    """,
    """
    import torch
    class Cfg:
        dtype = torch.bfloat16
        def __init__(self, half=False):
            self.dtype = torch.float16 if half else torch.float32
    c = Cfg()
    t = torch.ones(1).to(c.dtype)
    u = torch.ones(1).to(Cfg.dtype)
    """,
    """
    import argparse
    import torch
    p = argparse.ArgumentParser()
    p.add_argument("--dtype", default="float16")
    args = p.parse_args()
    d = getattr(torch, args.dtype)
    t = torch.ones(1, dtype=d)
    """,
    """
    import torch
    def f(dtype=torch.float16):
        x = torch.ones(1, dtype=dtype)
        dtype = torch.float32
        return x.to(dtype)
    for d in (torch.float16, torch.bfloat16):
        y = torch.ones(1).to(d)
    a, b = torch.float16, torch.float32
    z = torch.ones(1).to(a).to(b)
    """,
    """
    import torch
    d = torch.float32
    for i in range(3):
        t = torch.ones(1).to(d)
        d = torch.float16
    if i:
        d = torch.bfloat16
    u = torch.ones(1).to(d)
    w = torch.ones(1).to(d if i else torch.float16)
    """,
    """
    import torch
    class M(torch.nn.Module):
        def __init__(self, dtype=torch.float16, cast=None):
            super().__init__()
            self.dtype_ = dtype
            self.half_ = torch.float16
            self.cast = cast or torch.bfloat16
        def forward(self, x):
            y = x.to(self.half_).to(self.dtype_).to(self.cast)
            kind = self.half_
            self.half_ = torch.float32
            return y.to(kind)
    m = M(dtype=torch.bfloat16)
    z = m(torch.ones(1)).to(m.dtype_)
    """,
    """
    import torch
    from torch import float16 as half
    def make():
        return half
    m = make
    t = torch.ones(1).to(make())
    u = torch.ones(1).to(dtype=m())
    """,
]


@pytest.mark.parametrize("number", range(len(PROGRAMS)))
def test_the_pre_filter_says_yes_wherever_the_evaluator_finds_a_dtype(number):
    ix = build_index(dedent(PROGRAMS[number]), "train")
    ev = Evaluator(ix)
    checked = found = 0
    for node in nodes_of(ix.module):
        if not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.IfExp)):
            continue
        if isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
            continue
        scope = ix.scope_of(node)
        checked += 1
        if dtypes(ev.values(node, scope)):
            found += 1
            text = ix.text(node)
            assert Evaluator(ix).mentions_dtype(node, scope), text  # a fresh memo: no answer kept from another read
            assert ev.mentions_dtype(node, scope), text
            assert ev.may_carry(node, scope), text
    assert found and checked > found  # the programs hold both kinds of expression
