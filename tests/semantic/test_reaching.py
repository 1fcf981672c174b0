"""Reaching definitions: the one policy that decides which bindings a name's use sees.

Every question "what does this name hold here" goes through ``ModuleIndex.bindings_of``: the
evaluator, the tensor-dtype walk, KD's operands and import resolution. These tests pin the
policy itself; the rule tests at the bottom are the repros that three policies got wrong.
"""
import ast

import pytest

from conftest import dedent, lint

from precision_lint.semantic.index import build_index, nodes_of


def _uses(ix, name):
    """Every load of ``name`` (targets of assignments and loops left out), in source order."""
    return [n for n in nodes_of(ix.module) if type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load]


def _seen(src, name, which=-1, session=False):
    """The first lines of the statements whose bindings reach the ``which``-th use of ``name``
    (``session``: the text is a notebook's)."""
    ix = build_index(dedent(src), "m", session=session)
    use = _uses(ix, name)[which]
    _, bindings = ix.bindings_of(use, ix.scope_of(use))
    return [ix.text(b.statement).strip().splitlines()[0] for b in bindings]


def test_a_later_assignment_does_not_reach_an_earlier_use():
    assert _seen(
        """
        dtype = torch.float32
        load(dtype=dtype)
        dtype = torch.float16
        """,
        "dtype",
    ) == ["dtype = torch.float32"]


def test_an_unconditional_assignment_hides_the_older_ones():
    assert _seen(
        """
        dtype = torch.float16
        dtype = torch.float32
        load(dtype=dtype)
        """,
        "dtype",
    ) == ["dtype = torch.float32"]


def test_a_guarded_assignment_adds_to_the_one_before_it():
    assert _seen(
        """
        dtype = torch.float32
        if args.half:
            dtype = torch.float16
        load(dtype=dtype)
        """,
        "dtype",
    ) == ["dtype = torch.float16", "dtype = torch.float32"]


def test_both_branches_of_an_if_else_reach_and_hide_what_was_bound_before():
    # the name is bound on every path through the `if`/`else`: the first value never reaches
    assert _seen(
        """
        dtype = None
        if a:
            dtype = torch.float16
        else:
            dtype = torch.bfloat16
        load(dtype=dtype)
        """,
        "dtype",
    ) == ["dtype = torch.bfloat16", "dtype = torch.float16"]


def test_an_elif_chain_with_an_else_hides_what_was_bound_before_and_one_without_does_not():
    chain = """
        dtype = None
        if a:
            dtype = torch.float16
        elif b:
            dtype = torch.bfloat16
        {last}
        load(dtype=dtype)
        """
    full = chain.format(last="else:\n            dtype = torch.float32")
    assert _seen(full, "dtype") == ["dtype = torch.float32", "dtype = torch.bfloat16", "dtype = torch.float16"]
    assert _seen(chain.format(last=""), "dtype") == ["dtype = torch.bfloat16", "dtype = torch.float16", "dtype = None"]


def test_an_if_without_else_does_not_hide_what_was_bound_before():
    assert _seen(
        """
        dtype = None
        if a:
            dtype = torch.float16
        load(dtype=dtype)
        """,
        "dtype",
    ) == ["dtype = torch.float16", "dtype = None"]


def test_inside_the_same_branch_the_branch_assignment_hides_the_older_one():
    assert _seen(
        """
        dtype = torch.float32
        if args.half:
            dtype = torch.float16
            load(dtype=dtype)
        """,
        "dtype",
    ) == ["dtype = torch.float16"]


def test_a_loop_body_may_not_run_so_it_hides_nothing():
    assert _seen(
        """
        scale = 1.0
        for step in steps:
            scale = step.scale
        use(scale)
        """,
        "scale",
    ) == ["scale = step.scale", "scale = 1.0"]


def test_a_binding_later_in_the_loop_reaches_the_next_iteration():
    assert _seen(
        """
        prev = None
        for x in xs:
            use(prev)
            prev = x
        """,
        "prev",
    ) == ["prev = None", "prev = x"]


def test_the_value_of_an_assignment_sees_the_previous_binding():
    assert _seen(
        """
        x = torch.randn(3)
        x = x.half()
        """,
        "x",
    ) == ["x = torch.randn(3)"]


def test_an_except_handler_and_a_try_body_may_not_run():
    assert _seen(
        """
        try:
            from apex import amp
        except ImportError:
            amp = None
        amp.initialize(model)
        """,
        "amp",
    ) == ["amp = None", "from apex import amp"]


def test_an_early_exit_guards_the_rest_of_the_block_for_binding_and_use_alike():
    assert _seen(
        """
        def f(ok):
            dtype = torch.float16
            if not ok:
                return
            dtype = torch.float32
            load(dtype=dtype)
        """,
        "dtype",
    ) == ["dtype = torch.float32"]


def test_a_function_sees_the_module_as_it_is_at_its_end():
    assert _seen(
        """
        dtype = torch.float32
        def load():
            return from_pretrained(dtype=dtype)
        dtype = torch.float16
        if args.bf16:
            dtype = torch.bfloat16
        """,
        "dtype",
    ) == ["dtype = torch.bfloat16", "dtype = torch.float16"]


NOTEBOOK = """
    predictor = Predictor()
    def training_function():
        opt = AdamW(predictor.parameters())
    notebook_launcher(training_function)
    predictor = Predictor()
    predictor.half()
    """


def test_in_a_notebook_a_function_sees_the_module_where_the_notebook_last_names_it():
    """Review 26d: the training cell's function runs at its launch; the inference cell after
    it rebinds the name to a new model."""
    assert _seen(NOTEBOOK, "predictor", which=0, session=True) == ["predictor = Predictor()"]
    ix = build_index(dedent(NOTEBOOK), "m", session=True)
    use = _uses(ix, "predictor")[0]
    (binding,) = ix.bindings_of(use, ix.scope_of(use))[1]
    assert ix.span(binding.statement).line == 1  # the first cell's, not the later one's


def test_in_a_script_a_function_sees_the_module_at_its_end():
    """A module another may import: its functions may run after its code has run to the end."""
    assert len(_seen(NOTEBOOK, "predictor", which=0)) == 1
    ix = build_index(dedent(NOTEBOOK), "m")
    use = _uses(ix, "predictor")[0]
    (binding,) = ix.bindings_of(use, ix.scope_of(use))[1]
    assert ix.span(binding.statement).line == 5


@pytest.mark.parametrize(
    "called",
    [
        "def later():\n    training_function()\n",  # named in another function: it may run later
        "",  # named nowhere: when it runs is not known
    ],
    ids=["named-in-a-function", "never-named"],
)
def test_in_a_notebook_a_function_named_elsewhere_sees_the_module_at_its_end(called):
    src = dedent(NOTEBOOK).replace("notebook_launcher(training_function)\n", "") + called
    if called.startswith("def later"):
        src += "notebook_launcher(training_function)\n"
    ix = build_index(src, "m", session=True)
    use = _uses(ix, "predictor")[0]
    lines = [ix.span(b.statement).line for b in ix.bindings_of(use, ix.scope_of(use))[1]]
    assert lines == [4]  # the rebinding after the function reaches it


def test_a_parameter_shadows_the_module_binding():
    ix = build_index(dedent(
        """
        import torch
        def f(torch):
            return torch.float16
        """
    ), "m")
    use = _uses(ix, "torch")[-1]
    owner, bindings = ix.bindings_of(use, ix.scope_of(use))
    assert owner is ix.functions["m.f"] and bindings == []


# --- the repros of three policies (one rule each) -----------------------------

def test_mp101_does_not_fire_on_a_float32_load_before_the_name_is_reassigned():
    # A6: the union of every assignment made this load "float16" and offered a safe fix that
    # would have rewritten a float32 load.
    src = """
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
        dtype = torch.float32
        model = AutoModelForCausalLM.from_pretrained("m", dtype=dtype)
        dtype = torch.float16
        args = TrainingArguments(output_dir="o", fp16=True)
        Trainer(model=model, args=args).train()
    """
    assert lint(src, "MP101") == []


def test_mp101_still_fires_when_the_float16_assignment_reaches_the_load():
    src = """
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
        dtype = torch.float32
        dtype = torch.float16
        model = AutoModelForCausalLM.from_pretrained("m", dtype=dtype)
        args = TrainingArguments(output_dir="o", fp16=True)
        Trainer(model=model, args=args).train()
    """
    assert [d.code for d in lint(src, "MP101")] == ["MP101"]


def test_mp401_does_not_call_a_tensor_half_because_a_later_line_assigns_float16():
    # A7: the tensor walk's own policy saw a later `dtype = torch.float16`.
    src = """
        import torch
        import torch.nn.functional as F
        dtype = torch.float32
        t = torch.randn(4, 10, dtype=dtype)
        s = torch.randn(4, 10)
        dtype = torch.float16
        loss = F.kl_div(F.log_softmax(s, -1), F.softmax(t, -1), reduction="batchmean")
    """
    assert lint(src, "MP401") == []


def test_mp401_fires_when_the_float16_dtype_reaches_the_tensor():
    src = """
        import torch
        import torch.nn.functional as F
        dtype = torch.float32
        dtype = torch.float16
        t = torch.randn(4, 10, dtype=dtype)
        s = torch.randn(4, 10, dtype=dtype)
        loss = F.kl_div(F.log_softmax(s, -1), F.softmax(t, -1), reduction="batchmean")
    """
    assert [d.code for d in lint(src, "MP401")] == ["MP401"]


def test_a_class_named_like_its_base_sees_the_imported_base():
    # `class Dataset(Dataset)`: the class's own name is bound after its bases are evaluated
    # (a cycle here sent the kind lookup into infinite recursion on a real diffusion repo).
    ix = build_index(dedent(
        """
        from torch.utils.data import Dataset
        class Dataset(Dataset):
            pass
        """
    ), "m")
    assert ix.classes["m.Dataset"].bases == ("torch.utils.data.Dataset",)


def test_a_module_with_a_class_named_like_its_base_is_linted():
    src = """
        import torch
        from torch.utils.data import Dataset
        class Dataset(Dataset):
            pass
        model = torch.nn.Linear(2, 2).half()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cuda")
        model(torch.randn(2, 2)).sum().backward()
        """
    assert [d.code for d in lint(src, "MP101")] == ["MP101"]


def test_an_elif_chain_holds_no_block_of_its_own():
    # `elif bad: raise` is a branch of the chain, not an early exit guarding what follows it
    ix = build_index(dedent(
        """
        if a:
            x = 1
        elif not ok:
            raise ValueError()
        else:
            if not ok2:
                raise ValueError()
            y = 2
        """
    ), "m")
    tests = {ix.text(ix.module.body[0].orelse[0].test), ix.text(ix.module.body[0].orelse[0].orelse[0].test)}
    assert tests == {"not ok", "not ok2"}
    raising = {ix.text(n) for n in nodes_of(ix.module) if id(n) in ix.raising_guards}
    assert raising == {"not ok2"}


def test_statements_on_one_line_guard_what_follows_the_line():
    ix = build_index(dedent(
        """
        def f(x):
            assert x; y = g(1)
            z = h(y)
        """
    ), "m")
    g, h = ix.calls
    assert g.guards == () and [ix.text(t) for t, _ in h.guards] == ["x"]
    assert isinstance(g.statement, ast.Assign) and ix.text(h.statement) == "z = h(y)"


def test_a_call_in_a_header_or_a_one_line_suite_has_no_statement():
    ix = build_index(dedent(
        """
        x = f()
        if g():
            h()
        if ok: k()
        """
    ), "m")
    f, g, h, k = ix.calls
    assert ix.text(f.statement) == "x = f()" and g.statement is None
    assert ix.text(h.statement) == "h()" and k.statement is None


def test_an_elif_chain_hides_what_was_bound_before_up_to_four_tests_deep():
    # each test of the chain is one more split of the question: four are looked at, no more
    def chain(n):
        branches = "".join(f"        {'if' if i == 0 else 'elif'} t{i}:\n            dtype = {i}\n" for i in range(n))
        return f"        dtype = None\n{branches}        else:\n            dtype = {n}\n        load(dtype=dtype)\n"

    assert _seen(chain(4), "dtype")[-1] == "dtype = 0"
    assert _seen(chain(5), "dtype")[-1] == "dtype = None"


def test_a_name_bound_in_every_branch_of_a_long_chain_is_answered_at_once():
    # whisper's English number normaliser: a loop over a 40-branch `elif` chain that binds and
    # reads the same names in most branches. Each use asks whether the bindings before it cover
    # it; the search over the chain's tests took seconds per module
    import time

    branches = "".join(
        f"    {'if' if i == 0 else 'elif'} w == {i}:\n"
        f"        if value is None:\n            value = {i}\n"
        f"        elif prev == {i}:\n            value = value + {i}\n            prev = value\n"
        f"        else:\n            out(value)\n            value = None\n"
        for i in range(40)
    )
    src = f"value = prev = None\nfor w in words:\n{branches}out(value)\n"
    start = time.perf_counter()
    ix = build_index(src, "m")
    for use in _uses(ix, "value") + _uses(ix, "prev"):
        ix.bindings_of(use, ix.scope_of(use))
    assert time.perf_counter() - start < 5
