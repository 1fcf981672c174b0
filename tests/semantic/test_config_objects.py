"""Config objects: dataclass fields and their defaults, a constructor's keywords overriding
them, classes in other files, ``HfArgumentParser`` (whose TrainingArguments take ``--fp16``
and ``--bf16`` from the command line: the user's switches), and project subclasses of
``TrainingArguments``."""
from conftest import config, lint, write_tree

from precision_lint.engine import Engine

TRAIN = """
    model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype={dtype})
    Trainer(model=model, args=TrainingArguments(output_dir="o", fp16={fp16})).train()
    """

LOCAL_CONFIG = """
    from dataclasses import dataclass, field
    import torch
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

    @dataclass
    class RunConfig:
        weights_dtype: str = "{default}"
        fp16: bool = {fp16_default}

    cfg = RunConfig({keywords})
    """


def _local(default="float16", fp16_default="True", keywords=""):
    head = LOCAL_CONFIG.format(default=default, fp16_default=fp16_default, keywords=keywords)
    return head + TRAIN.format(dtype="cfg.weights_dtype", fp16="cfg.fp16")


def test_dataclass_field_defaults_are_the_values_of_an_instance():
    (d,) = lint(_local(), "MP101")
    assert "the float16 comes from line 7" in d.message


def test_a_default_of_float32_is_clean():
    assert lint(_local(default="float32"), "MP101") == []


def test_a_constructor_keyword_overrides_the_default():
    assert lint(_local(fp16_default="False"), "MP101") == []
    assert [d.code for d in lint(_local(fp16_default="False", keywords="fp16=True"), "MP101")] == ["MP101"]
    assert lint(_local(keywords='weights_dtype="float32"'), "MP101") == []


def test_positional_constructor_arguments_fill_the_fields_in_order():
    assert lint(_local(keywords='"float32", True'), "MP101") == []
    assert [d.code for d in lint(_local(default="float32", fp16_default="False", keywords='"float16", True'), "MP101")] == ["MP101"]


def _run(root, code="MP101"):
    return Engine(config(), [code], jobs=1).run_paths([str(root)]).diagnostics


def test_a_config_class_in_another_file_with_a_base_class(tmp_path):
    write_tree(
        tmp_path,
        {
            "configs.py": """
                from dataclasses import dataclass

                @dataclass
                class BaseConfig:
                    weights_dtype: str = "float16"

                @dataclass
                class RunConfig(BaseConfig):
                    fp16: bool = True
                """,
            "train.py": """
                from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
                from configs import RunConfig

                cfg = RunConfig()
                model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=cfg.weights_dtype)
                Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=cfg.fp16)).train()
                """,
        },
    )
    (d,) = _run(tmp_path)
    assert d.path.endswith("train.py") and "the float16 comes from configs.py, line 5" in d.message


def test_an_attribute_set_in_init_is_the_constructor_argument(tmp_path):
    src = """
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        class Settings:
            def __init__(self, dtype):
                self.dtype = dtype

        settings = Settings(torch.float16)
        model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=settings.dtype)
        Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=True)).train()
        """
    assert [d.span.line for d in lint(src, "MP101")] == [9]
    assert lint(src.replace("Settings(torch.float16)", "Settings(torch.float32)"), "MP101") == []


HF_PARSER = """
    from dataclasses import dataclass, field
    import torch
    from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments

    @dataclass
    class ModelArguments:
        name: str = "gpt2"
        torch_dtype: str = field(default="{default}", metadata={{"choices": ["float16", "bfloat16", "float32"]}})

    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = AutoModelForCausalLM.from_pretrained(model_args.name, torch_dtype=getattr(torch, model_args.torch_dtype))
    Trainer(model=model, args=training_args).train()
    """


def test_hf_argument_parser_fp16_is_a_command_line_switch():
    (d,) = lint(HF_PARSER.format(default="float16"), "MP101")
    assert "`--fp16`" in d.message and d.span.line == 12


def test_hf_argument_parser_with_a_float32_default_is_clean():
    # float16 is one of the choices: an opt-in on the command line, like --fp16 itself
    assert lint(HF_PARSER.format(default="float32"), "MP101") == []


def test_hf_argument_parser_bf16_switch_is_the_users_choice():
    src = HF_PARSER.format(default="float32")
    assert lint(src, "MP201") == []


def test_hf_argument_parser_with_a_bfloat16_default_is_hard_coded_bf16():
    assert [d.code for d in lint(HF_PARSER.format(default="bfloat16"), "MP201")] == ["MP201"]


def test_a_project_subclass_of_training_arguments_is_training_arguments():
    src = """
        from dataclasses import dataclass
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        @dataclass
        class MyArguments(TrainingArguments):
            teacher: str = "gpt2"

        model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.float16)
        Trainer(model=model, args=MyArguments(output_dir="o", fp16=True)).train()
        """
    assert [d.code for d in lint(src, "MP101")] == ["MP101"]
    assert lint(src.replace("fp16=True", "fp16=False"), "MP101") == []


POST_INIT = """
    from dataclasses import dataclass, field
    from transformers import AutoModelForCausalLM, HfArgumentParser

    @dataclass
    class ModelArguments:
        attn_implementation: str = field(default={default})
        attn_type: str = field(default=None)

        def __post_init__(self):
            if self.attn_type == "flash_attn_2":
                self.attn_implementation = "flash_attention_2"

    (model_args,) = HfArgumentParser(ModelArguments).parse_args_into_dataclasses()
    model = AutoModelForCausalLM.from_pretrained("gpt2", attn_implementation=model_args.attn_implementation)
    """


def test_an_attention_picked_by_a_command_line_field_is_the_users_choice():
    assert lint(POST_INIT.format(default="None"), "MP202") == []


def test_an_attention_field_defaulting_to_flash_attention_2_is_hard_coded():
    assert [d.code for d in lint(POST_INIT.format(default='"flash_attention_2"'), "MP202")] == ["MP202"]
