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
    "dict-call": 'kwargs = dict(base, fp16=True)',
    "bit-or": 'kwargs = base | {"fp16": True}',
    "splat": 'kwargs = {**base, "fp16": True}',
    "item": 'kwargs = dict(base)\nkwargs["fp16"] = True',
    "update-keyword": 'kwargs = dict(**base)\nkwargs.update(fp16=True)',
    "update-dict": 'kwargs = {**base}\nkwargs.update({"fp16": True})',
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
