"""Dicts of keyword arguments as real code builds them: ``dict(base, k=v)``, ``base | {...}``,
``{**base, k: v}``, ``d[k] = v`` and ``d.update(...)`` after the dict is built, a later key
overriding an earlier one unless it is set under a condition of its own."""
import pytest
from conftest import lint

HEAD = """
    import torch
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

    model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.float16)
    base = {"output_dir": "o", "fp16": False}
    """
TAIL = """
    Trainer(model=model, args=TrainingArguments(**kwargs)).train()
    """

TURNS_FP16_ON = {
    # a function of the module that builds the dict and returns it (held-out 31u)
    "returned-by-a-helper": 'def make():\n    kwargs = {"output_dir": "o"}\n    kwargs["fp16"] = True\n    return kwargs\nkwargs = make()',
    "literal-returned": 'def make():\n    return {"output_dir": "o", "fp16": True}\nkwargs = make()',
    # one element of the tuple it returns (held-out 31u: model and processor kwargs built together)
    "unpacked-from-a-returned-tuple": 'def make():\n    kwargs = {"output_dir": "o", "fp16": True}\n    return "o", kwargs\nout, kwargs = make()',
    "unpacked-from-a-tuple": 'kwargs, n = {"output_dir": "o", "fp16": True}, 2',
    "dict-call": 'kwargs = dict(base, fp16=True)',
    "bit-or": 'kwargs = base | {"fp16": True}',
    "splat": 'kwargs = {**base, "fp16": True}',
    "item": 'kwargs = dict(base)\nkwargs["fp16"] = True',
    "update-keyword": 'kwargs = dict(**base)\nkwargs.update(fp16=True)',
    "update-dict": 'kwargs = {**base}\nkwargs.update({"fp16": True})',
    # a dict that starts empty holds what is put in it after (held-out 26: EAGLE's `extra = {}`)
    "empty-then-update": 'kwargs = {}\nkwargs.update(base)\nkwargs.update(fp16=True)',
    "empty-call-then-item": 'kwargs = dict()\nkwargs.update(base)\nkwargs["fp16"] = True',
    # what the caller gave, else an empty dict (tweetnlp's `{} if x is None else x`, recall 26c)
    "none-default-then-update": 'given = None\nkwargs = {} if given is None else given\nkwargs.update(base)\nkwargs.update(fp16=True)',
    "or-empty-then-item": 'given = None\nkwargs = given or {}\nkwargs.update(base)\nkwargs["fp16"] = True',
}


@pytest.mark.parametrize("how", sorted(TURNS_FP16_ON))
def test_a_later_key_turns_fp16_on(how):
    src = HEAD + TURNS_FP16_ON[how].replace("\n", "\n    ") + TAIL
    assert [d.code for d in lint(src, "MP101")] == ["MP101"]


@pytest.mark.parametrize("how", sorted(TURNS_FP16_ON))
def test_a_later_key_turns_fp16_off(how):
    src = (HEAD.replace('"fp16": False', '"fp16": True') + TURNS_FP16_ON[how].replace("\n", "\n    ") + TAIL).replace(
        "fp16=True)", "fp16=False)"
    ).replace('"fp16": True}', '"fp16": False}').replace('kwargs["fp16"] = True', 'kwargs["fp16"] = False')
    assert "True" not in src.split("kwargs", 1)[1].split("Trainer")[0]
    assert lint(src, "MP101") == []


def test_a_key_set_under_a_condition_joins_the_earlier_value():
    src = HEAD + 'kwargs = dict(base)\n    if torch.cuda.is_available():\n        kwargs["fp16"] = True' + TAIL
    assert [d.code for d in lint(src, "MP101")] == ["MP101"]
    src = HEAD.replace('"fp16": False', '"fp16": True') + 'kwargs = dict(base)\n    if not torch.cuda.is_available():\n        kwargs["fp16"] = False' + TAIL
    assert [d.code for d in lint(src, "MP101")] == ["MP101"]  # still True on a GPU


@pytest.mark.parametrize(
    "removal, reported",
    [
        ('kwargs.pop("fp16")', False),
        ('kwargs.pop("fp16", None)', False),
        ('del kwargs["fp16"]', False),
        ('renamed = kwargs.pop("fp16")', False),
        # a removal under a test of its own leaves the key where the test fails
        ('if torch.cuda.is_available():\n        kwargs.pop("fp16")', True),
        # another dict's key, or another key
        ('other = dict(base)\n    other.pop("fp16")', True),
        ('kwargs.pop("output_dir")', True),
    ],
)
def test_a_key_removed_after_the_dict_is_built_is_not_passed(removal, reported):
    """``d.pop("k")`` and ``del d["k"]`` between the dict and the call take the key out of what
    ``**d`` passes (review 30a: ``kw["eval_strategy"] = kw.pop("evaluation_strategy")``)."""
    src = HEAD.replace('"fp16": False', '"fp16": True') + "kwargs = dict(base)\n    " + removal + TAIL
    assert bool(lint(src, "MP101")) == reported


RENAMED = """\
    import inspect
    from transformers import TrainingArguments

    def make_args(out):
        kw = {"output_dir": out, "evaluation_strategy": "steps", "eval_steps": 50}
        accepted = inspect.signature(TrainingArguments.__init__).parameters
        if "eval_strategy" in accepted and "evaluation_strategy" in kw:
            kw["eval_strategy"] = kw.pop("evaluation_strategy")
        return TrainingArguments(**kw)
    """


def test_a_key_renamed_under_a_signature_check_is_the_old_name_only_where_the_check_fails():
    """The old key stays only where the installed ``TrainingArguments`` lacks ``eval_strategy``:
    written for both versions. Renamed unconditionally, it is never passed; renamed under the
    user's own switch, the old key still reaches the call."""
    from conftest import config

    newest = config(transformers_version="5.23")
    assert lint(RENAMED, "MP302", newest) == []
    unconditional = RENAMED.replace('if "eval_strategy" in accepted and "evaluation_strategy" in kw:\n            ', "")
    assert 'kw["eval_strategy"] = kw.pop' in unconditional and "if " not in unconditional
    assert lint(unconditional, None, newest) == []  # nothing: no MP302, no MP000 either
    switched = RENAMED.replace('"eval_strategy" in accepted and "evaluation_strategy" in kw', "out.endswith('new')")
    assert [d.code for d in lint(switched, "MP302", newest)] == ["MP302"]


@pytest.mark.parametrize("call", ["cache.get(key='a')", "cache.get(*names)", "cache.get()", "store.get(**opts)"])
def test_get_calls_that_are_not_a_dicts_get_are_unknown_never_an_error(call):
    src = f"""
        import torch
        cache = {{"a": torch.float16}}
        dtype = {call}
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=dtype)
        """
    assert lint(src, "MP101") == []


def test_a_key_set_under_the_users_own_switch_keeps_that_condition():
    src = """
        import torch
        import transformers

        def load(config):
            extra = {"trust_remote_code": True}
            if config.use_flash_attention:
                extra["attn_implementation"] = "flash_attention_2"
                extra["torch_dtype"] = torch.bfloat16
            return transformers.AutoModelForCausalLM.from_pretrained(config.model, **extra)
        """
    assert lint(src, "MP201") == [] and lint(src, "MP202") == []
    hard_coded = src.replace("if config.use_flash_attention:", "if True:")
    assert [d.code for d in lint(hard_coded, "MP202")] == ["MP202"]


def test_dicts_that_update_each_other_end():
    # each dict's `.update` names the other: followed once, never round and round
    src = HEAD + 'kwargs = {**base, "fp16": True}\n    extra = {"seed": 1}\n    kwargs.update(extra)\n    extra.update(kwargs)\n    kwargs.update(kwargs)' + TAIL
    assert [d.code for d in lint(src, "MP101")] == ["MP101"]


# --- which changes in place reach a use: the bindings of the dict's variable that reach it ----
def _fp16_at(src, call_text="TrainingArguments"):
    """The values keyword ``fp16`` gets at the (only) call ``call_text(...)`` of ``src``."""
    from conftest import dedent

    from precision_lint.semantic.evaluate import Evaluator
    from precision_lint.semantic.index import build_index

    index = build_index(dedent(src), "train")
    (site,) = [s for s in index.calls if index.text(s.node.func) == call_text]
    return sorted(repr(v.value) for v in Evaluator(index).kwarg_values(site.node, site.scope, "fp16") or ())


IN_PLACE = {
    "nested, set after the use": """
        cfg = {"train": {"fp16": False}}
        TrainingArguments(**cfg["train"])
        cfg["train"]["fp16"] = True
        """,
    "nested, set on a dict rebound before the use": """
        cfg = {"train": {"fp16": False}}
        cfg["train"]["fp16"] = True
        cfg = {"train": {"fp16": False}}
        TrainingArguments(**cfg["train"])
        """,
    "nested, set on a dict rebound to another before the use": """
        other = {"train": {"fp16": False}}
        cfg = {"train": {"fp16": False}}
        cfg["train"]["fp16"] = True
        cfg = other
        TrainingArguments(**cfg["train"])
        """,
    "flat, set after the use": """
        kwargs = {"fp16": False}
        TrainingArguments(**kwargs)
        kwargs["fp16"] = True
        """,
    "flat, updated after the use": """
        kwargs = {"fp16": False}
        TrainingArguments(**kwargs)
        kwargs.update(fp16=True)
        """,
    "flat, set on a dict rebound before the use": """
        kwargs = {"fp16": True}
        kwargs["fp16"] = True
        kwargs = {"fp16": False}
        TrainingArguments(**kwargs)
        """,
    "a loop that builds the dict anew before each use": """
        for seed in range(3):
            kwargs = {"fp16": False}
            TrainingArguments(**kwargs)
            kwargs["fp16"] = True
        """,
}


@pytest.mark.parametrize("shape", sorted(IN_PLACE))
def test_a_change_in_place_that_does_not_reach_the_use_is_not_its_value(shape):
    # flow-insensitively (every binding of `cfg`, every `cfg[...][...] = v` of the scope) the
    # later or older `= True` overrode the dict the call reads
    assert _fp16_at(IN_PLACE[shape]) == ["False"]


@pytest.mark.parametrize(
    "src",
    [
        # the next iteration reads the dict the previous one changed
        """
        kwargs = {"fp16": False}
        for seed in range(3):
            TrainingArguments(**kwargs)
            kwargs["fp16"] = True
        """,
        """
        cfg = {"train": {"fp16": False}}
        for seed in range(3):
            TrainingArguments(**cfg["train"])
            cfg["train"]["fp16"] = True
        """,
        # a function runs once the module has: it sees the dict as changed
        """
        cfg = {"train": {"fp16": False}}
        def main():
            TrainingArguments(**cfg["train"])
        cfg["train"]["fp16"] = True
        """,
        """
        cfg = {"train": {"fp16": False}}
        cfg["train"]["fp16"] = True
        TrainingArguments(**cfg["train"])
        """,
    ],
)
def test_a_change_in_place_that_reaches_the_use_is_its_value(src):
    assert "True" in _fp16_at(src)


def test_an_entry_knows_the_test_its_dict_was_bound_under():
    """``if new: kw = dict(processing_class=tok)`` / ``else: kw = dict(tokenizer=tok)``: each
    entry that reaches ``Trainer(**kw)`` carries the test its dict's binding is under
    (``KwargSource.bound_under``, read by the migrations' tolerance), not as its values' own
    conditions (``guards``)."""
    from conftest import dedent
    from precision_lint.semantic.evaluate import Evaluator
    from precision_lint.semantic.index import build_index

    src = dedent(
        """
        kw = dict(output_dir="o")
        if new:
            kw = dict(model=m, processing_class=tok)
        else:
            kw = dict(model=m, tokenizer=tok)
        Trainer(**kw)
        """
    )
    index = build_index(src, "m")
    call = next(site.node for site in index.calls if getattr(site.node.func, "id", "") == "Trainer")
    sources = {s.name: s for s in Evaluator(index).kwarg_sources(call, index.root)}
    assert set(sources) == {"model", "processing_class", "tokenizer"}  # the first binding is hidden
    assert [(index.text(t), p) for t, p in sources["processing_class"].bound_under] == [("new", True)]
    assert [(index.text(t), p) for t, p in sources["tokenizer"].bound_under] == [("new", False)]
    assert sources["tokenizer"].guards == ()


@pytest.mark.parametrize("method", ["get", "pop"])
def test_a_dicts_get_or_pop_is_the_keys_value_else_the_default(method):
    """Review 30b: ``kwargs.pop("torch_dtype", torch.bfloat16)`` reads a dict built in the code
    as ``.get`` does: the key's value where the dict holds it, else the default."""
    src = f"""
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
        extra = {{"trust_remote_code": True}}
        dtype = extra.{method}("torch_dtype", torch.float16)
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=dtype)
        Trainer(model=model, args=TrainingArguments("o", fp16=True)).train()
        """
    assert [d.code for d in lint(src, "MP101")] == ["MP101"]
    held = src.replace('{"trust_remote_code": True}', '{"torch_dtype": torch.float32}')
    assert lint(held, "MP101") == []
