"""MP302/MP304 on a STORE of a removed attribute (`config.rope_theta = 1e6`): a store looks
nothing up, so it never raises AttributeError. What it does instead is the row's `on_store`
(knowledge/migrations.toml, checked by tests/test_migrations_table.py): ignored by the library
(a silent degradation: reported, with what happens), refused by a later call (reported), or a
plain attribute that works (nothing). `+=` and `del` look the name up: AttributeError as a read.
A config loaded with `trust_remote_code=True` is the hub's own class, which may define the name."""
from conftest import config, lint

V5 = config(transformers_version="5.23")
V4 = config(transformers_version="4.44.2")


def codes(src, cfg=V5):
    return [d for d in lint(src, None, cfg) if d.code in ("MP302", "MP304")]


STOCK = """
    from transformers import AutoConfig
    config = AutoConfig.from_pretrained("m")
    {line}
    """


def test_a_rope_theta_store_is_a_silent_degradation_not_an_attribute_error():
    (d,) = codes(STOCK.format(line="config.rope_theta = 1e6"))
    assert d.code == "MP302"
    assert "AttributeError" not in d.message
    assert "`config.rope_theta = ...` is ignored from transformers 5.0 on" in d.message
    assert 'rope_parameters[\\"rope_theta\\"]' not in d.message and 'rope_parameters["rope_theta"]' in d.message
    assert d.fix is None


def test_a_rope_theta_read_still_raises():
    (d,) = codes(STOCK.format(line="base = config.rope_theta"))
    assert "raises `AttributeError: 'LlamaConfig' object has no attribute 'rope_theta'`" in d.message


def test_augmented_store_and_del_look_the_name_up():
    for line in ("config.rope_theta += 1.0", "del config.rope_theta"):
        (d,) = codes(STOCK.format(line=line))
        assert "AttributeError" in d.message, line


def test_a_store_before_the_removal_is_nothing():
    assert codes(STOCK.format(line="config.rope_theta = 1e6"), V4) == []


def test_a_generation_parameter_store_names_the_later_value_error():
    src = """
        from transformers import AutoModelForCausalLM
        model = AutoModelForCausalLM.from_pretrained("m")
        model.config.max_length = 64
        """
    (d,) = codes(src)
    assert "AttributeError" not in d.message
    assert "`save_pretrained` then raises `ValueError: Some generation parameters are set in the model config." in d.message


def test_a_store_of_an_attribute_without_on_store_is_nothing():
    # `language_model` on a removed-attribute row without `on_store`: the store makes a plain attribute
    src = """
        from transformers import LlavaForConditionalGeneration
        model = LlavaForConditionalGeneration.from_pretrained("m")
        model.language_model = None
        """
    assert codes(src) == []
    assert len(codes(src.replace("model.language_model = None", "lm = model.language_model"))) == 1


def test_a_torch_dtype_store_warns_as_a_read_does():
    src = """
        import torch
        from transformers import AutoConfig
        config = AutoConfig.from_pretrained("m")
        config.torch_dtype = torch.bfloat16
        """
    (d,) = codes(src)
    assert d.code == "MP304" and "`torch_dtype` is deprecated! Use `dtype` instead!" in d.message


REMOTE = """
    from transformers import AutoConfig
    config = AutoConfig.from_pretrained("m", trust_remote_code={flag})
    {line}
    """


def test_a_remote_code_config_may_define_rope_theta_itself():
    for line in ("config.rope_theta = 1e6", "base = config.rope_theta"):
        assert codes(REMOTE.format(flag="True", line=line)) == [], line
        assert len(codes(REMOTE.format(flag="False", line=line))) == 1, line


def test_a_remote_code_model_config_too_but_not_a_generation_parameter():
    src = """
        from transformers import AutoModelForCausalLM
        model = AutoModelForCausalLM.from_pretrained("m", trust_remote_code=True)
        a = model.config.rope_theta
        b = model.config.max_length
        """
    (d,) = codes(src)
    assert "max_length" in d.message


def test_a_trainer_tokenizer_store_is_no_attribute_error():
    src = """
        from transformers import Trainer
        trainer = Trainer(model=model, processing_class=tok)
        trainer.tokenizer = tok
        """
    assert lint(src, "MP301", V5) == []
    assert len(lint(src.replace("trainer.tokenizer = tok", "t = trainer.tokenizer"), "MP301", V5)) == 1


def test_a_read_after_a_store_of_the_same_attribute_returns_what_was_stored():
    """``model.language_model = llm`` then ``model.language_model.model``: the read returns the
    module set just above on every version, not the attribute 5.0 removed (review 26a:
    llavalearn). A read before the store, or after a store under another test, still raises."""
    head = (
        "from transformers import LlavaConfig, LlavaForConditionalGeneration\n"
        "model = LlavaForConditionalGeneration(LlavaConfig())\n"
    )

    def raising(body):
        return [d.span.line for d in codes(head + body) if "raises" in d.message]

    assert raising("model.language_model = llm\nprint(model.language_model.model)\n") == []
    assert raising("print(model.language_model.model)\nmodel.language_model = llm\n") == [3]
    assert raising("if swap:\n    model.language_model = llm\nprint(model.language_model.model)\n") == [5]
