"""The cuda_amp facts record the deprecated callables used as values, called elsewhere
(``autocast = torch.cuda.amp.autocast if use_fp16 else nullcontext`` then ``with autocast():``,
``return torch.cuda.amp.autocast``): each later call warns on torch >= 2.4 as a direct call does.
Type tests, comparisons, annotations, ``except`` clauses, base classes and attributes of the
class call nothing; a reference in a branch chosen by torch's version is compatibility code."""
from conftest import dedent

from precision_lint.facts.extractors import cuda_amp
from precision_lint.semantic.evaluate import Evaluator
from precision_lint.semantic.index import build_index


def _facts(src: str):
    index = build_index(dedent(src))
    return cuda_amp.extract(index, Evaluator(index))


def _references(src: str):
    return [(u.name, u.func_span.line, u.func_text, u.version_gated) for u in _facts(src)["references"]]


def test_a_reference_bound_by_a_conditional_or_returned_is_recorded():
    src = """
        import functools
        from contextlib import nullcontext
        import torch
        from torch.cuda import amp
        from torch.cuda.amp import GradScaler


        def step(model, x, use_fp16):
            autocast = torch.cuda.amp.autocast if use_fp16 else nullcontext
            with autocast():
                return model(x)


        def pick(precision):
            if precision == "amp":
                return torch.cuda.amp.autocast
            table = {"fp16": amp.autocast, "bf16": functools.partial(torch.cuda.amp.autocast, dtype=torch.bfloat16)}
            return table, GradScaler
        """
    assert _references(src) == [
        ("autocast", 9, "torch.cuda.amp.autocast", False),
        ("autocast", 16, "torch.cuda.amp.autocast", False),
        ("autocast", 17, "amp.autocast", False),
        ("autocast", 17, "torch.cuda.amp.autocast", False),
        ("GradScaler", 18, "GradScaler", False),
    ]
    # the calls stay calls: `with autocast():` calls a local name, nothing of torch.cuda.amp
    assert _facts(src)["uses"] == ()


def test_mentions_that_call_nothing_are_no_references():
    src = """
        from typing import Optional
        import torch
        from torch.cuda.amp import GradScaler


        class Scaler(torch.cuda.amp.GradScaler):
            pass


        def check(s: Optional[torch.cuda.amp.GradScaler] = None) -> torch.cuda.amp.GradScaler:
            if isinstance(s, (torch.cuda.amp.GradScaler, GradScaler)) or type(s) is GradScaler:
                return s
            step = torch.cuda.amp.GradScaler.step
            with torch.cuda.amp.autocast():
                return torch.amp.autocast
        """
    assert _references(src) == []
    assert [(u.name, u.func_span.line) for u in _facts(src)["uses"]] == [("autocast", 14)]


def test_a_reference_in_a_branch_chosen_by_torch_version_is_compatibility_code():
    src = """
        import torch

        if hasattr(torch, "amp"):
            factory = torch.amp.autocast
        else:
            factory = torch.cuda.amp.autocast
        other = torch.amp.GradScaler if hasattr(torch.amp, "GradScaler") else torch.cuda.amp.GradScaler
        plain = torch.cuda.amp.GradScaler if factory else None
        scalers = [other(), plain()]
        with factory("cuda"):
            pass
        """
    # (`factory("cuda")` resolves through its bindings: a call, not this list's business)
    assert _references(src) == [
        ("GradScaler", 7, "torch.cuda.amp.GradScaler", True),
        ("GradScaler", 8, "torch.cuda.amp.GradScaler", False),
    ]


def test_an_alias_is_a_reference_only_where_a_call_of_it_does_not_resolve_to_the_callable():
    src = """
        import torch

        scaler_cls = torch.cuda.amp.GradScaler
        ctx = torch.cuda.amp.autocast
        run = torch.cuda.amp.autocast if torch.cuda.is_available() else None
        scaler = scaler_cls()
        handlers = {"amp": ctx}
        with run():
            pass
        """
    # `scaler_cls()` resolves through its binding and is recorded as a call; `ctx` is never
    # called here (an alias is no use; `{"amp": ctx}` hands on a variable, not a mention);
    # `run()` may call None or the deprecated callable: its binding is the reference
    assert [(u.name, u.func_span.line) for u in _facts(src)["uses"]] == [("GradScaler", 6)]
    assert _references(src) == [("autocast", 5, "torch.cuda.amp.autocast", False)]


def test_a_reference_through_any_import_of_torch_cuda_is_found_and_other_modules_are_not_walked():
    """Each import that can reach ``torch.cuda.amp`` without the text ``cuda.amp`` (``from torch
    import cuda``, ``import torch.cuda as tc``, ``from torch.cuda import amp``) still gives its
    references; a module that imports none and writes no ``cuda.amp`` has none to give."""
    for head, mention in (
        ("from torch import cuda", "cuda.amp.autocast"),
        ("import torch.cuda as tc", "tc.amp.autocast"),
        ("from torch.cuda import amp as mixed", "mixed.autocast"),
        ("import torch", "torch.cuda.amp.autocast"),
    ):
        src = f"""
            from contextlib import nullcontext
            {head}


            def step(model, x, use_fp16):
                ctx = {mention} if use_fp16 else nullcontext
                with ctx():
                    return model(x)
            """
        assert _references(src) == [("autocast", 6, mention, False)], head
    quiet = """
        import torch
        from contextlib import nullcontext


        def sample(model, x, amp):  # amp, example, clamp: no import of torch.cuda
            ctx = torch.autocast if amp else nullcontext
            with ctx("cuda"):
                return model(x).clamp(0, 1)
        """
    index = build_index(dedent(quiet))
    assert not cuda_amp._may_reference(index) and _references(quiet) == []


def test_a_subclass_made_in_the_module_runs_the_deprecated_init():
    """``class LoggingScaler(torch.cuda.amp.GradScaler)`` whose ``__init__`` calls
    ``super().__init__(...)`` (or that defines none) runs the deprecated constructor, and its
    ``FutureWarning``, at each instance the module makes (review 25a: CO-DETR's scaler). A class
    that never runs it (its own ``__init__`` without ``super()``), or one never made here, warns
    of nothing."""
    src = """
        import torch
        from torch.cuda import amp


        class LoggingScaler(torch.cuda.amp.GradScaler):
            def __init__(self, path, **kwargs):
                super().__init__(**kwargs)
                self.path = path


        class Plain(amp.GradScaler):
            pass


        class OwnInit(torch.cuda.amp.GradScaler):
            def __init__(self):
                self.scale_value = 1.0


        class NeverMade(torch.cuda.amp.autocast):
            pass


        scaler = LoggingScaler("log.csv", init_scale=2.0**16)
        plain = Plain()
        own = OwnInit()
        """
    found = [(u.name, u.func_span.line, u.base_class) for u in _facts(src)["references"]]
    assert found == [("GradScaler", 5, True), ("GradScaler", 11, True)]
