"""A class-level ``field(...)`` is a default only when it is a field specifier, named through
the module's imports: ``dataclasses.field`` (any alias), pydantic's ``Field`` (``default=`` or
its first argument) and attrs' ``field``/``attr.ib``. A project's own ``field()`` — a local
``def field``, or one from the project's ``utils/dataclasses.py`` — is a call like any other:
its ``default=`` is not the field's value."""
import pytest
from conftest import config, lint, write_tree

from precision_lint.engine import Engine

ATTENTION = """
    from dataclasses import dataclass
    {imports}
    from transformers import AutoModelForCausalLM, HfArgumentParser

    @dataclass
    class ModelArguments:
        attn_implementation: str = {field}(default="{default}")

    (model_args,) = HfArgumentParser(ModelArguments).parse_args_into_dataclasses()
    model = AutoModelForCausalLM.from_pretrained("gpt2", attn_implementation=model_args.attn_implementation)
    """
SPELLINGS = {
    "from-import": ("from dataclasses import field", "field"),
    "module-alias": ("import dataclasses as dc", "dc.field"),
    "short-alias": ("from dataclasses import field as F", "F"),
    "other-name": ("from dataclasses import field as option", "option"),
}
OWN_FIELD = "import os\n\n    def field(default=None, env=None):\n        return os.environ.get(env, 'sdpa')\n"


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_dataclasses_field_however_it_is_imported(spelling):
    imports, name = SPELLINGS[spelling]
    src = ATTENTION.format(imports=imports, field=name, default="flash_attention_2")
    assert [(d.code, d.span.line) for d in lint(src, "MP202")] == [("MP202", 10)]
    assert lint(ATTENTION.format(imports=imports, field=name, default="sdpa"), "MP202") == []


def test_a_local_function_named_field_is_not_a_dataclass_field():
    src = ATTENTION.format(imports=OWN_FIELD, field="field", default="flash_attention_2")
    assert lint(src, "MP202") == []


def _run(tmp_path, files, code):
    write_tree(tmp_path, files)
    found = Engine(config(), [code], jobs=1).run_paths([str(tmp_path)]).diagnostics
    return [(d.path.replace(str(tmp_path) + "/", ""), d.span.line) for d in found]


def test_a_field_from_the_projects_own_dataclasses_module_is_not_a_dataclass_field(tmp_path):
    own = {"utils/__init__.py": "", "utils/dataclasses.py": OWN_FIELD.replace("\n    ", "\n")}
    src = ATTENTION.format(imports="from utils.dataclasses import field", field="field", default="flash_attention_2")
    assert _run(tmp_path / "own", {**own, "train.py": src}, "MP202") == []
    # the same class with the standard library's field: its default is the value
    src = ATTENTION.format(imports="from dataclasses import field", field="field", default="flash_attention_2")
    assert _run(tmp_path / "std", {**own, "train.py": src}, "MP202") == [("train.py", 10)]


CONFIG_CLASS = """
    {imports}
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

    {decorator}
    class RunConfig{base}:
        weights_dtype: str = {field}
        fp16: bool = True

    cfg = RunConfig()
    model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=cfg.weights_dtype)
    Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=cfg.fp16)).train()
    """
PYDANTIC = {"imports": "from pydantic import BaseModel, Field", "decorator": "", "base": "(BaseModel)"}
ATTRS = {"imports": "import attrs", "decorator": "@attrs.define", "base": ""}
ATTR = {"imports": "import attr", "decorator": "@attr.s(auto_attribs=True)", "base": ""}


@pytest.mark.parametrize(
    "kind, field",
    [
        (PYDANTIC, 'Field(default="{dtype}", description="weights")'),
        (PYDANTIC, 'Field("{dtype}", description="weights")'),
        (ATTRS, 'attrs.field(default="{dtype}")'),
        (ATTR, 'attr.ib(default="{dtype}")'),
    ],
    ids=["pydantic-keyword", "pydantic-positional", "attrs-field", "attr-ib"],
)
def test_pydantic_and_attrs_field_defaults(kind, field):
    found = lint(CONFIG_CLASS.format(field=field.format(dtype="float16"), **kind), "MP101")
    assert [(d.code, d.span.line) for d in found] == [("MP101", 10)]
    assert lint(CONFIG_CLASS.format(field=field.format(dtype="float32"), **kind), "MP101") == []


@pytest.mark.parametrize(
    "kind, field",
    [
        (PYDANTIC, 'Field(..., description="float16 or float32")'),  # required: the caller's
        (PYDANTIC, 'Field(default_factory=lambda: "float16")'),
        ({"imports": "from mylib.schema import Model, Field", "decorator": "", "base": "(Model)"}, 'Field("float16")'),
    ],
    ids=["pydantic-required", "default-factory", "another-librarys-Field"],
)
def test_fields_whose_default_is_not_written_are_unknown(kind, field):
    assert lint(CONFIG_CLASS.format(field=field, **kind), "MP101") == []


# --- classes whose class-level values are their instances' defaults ------------------------------
DECLARED = """
    {imports}
    from transformers import AutoModelForCausalLM

    {decorator}
    class ModelConfig{bases}:
        name_or_path: str
        attn_implementation: str = "{default}"

    class Factory:
        def __init__(self, config):
            self.config = config

        def create_model(self):
            return AutoModelForCausalLM.from_pretrained(
                self.config.name_or_path, attn_implementation=self.config.attn_implementation
            )

    model = Factory(ModelConfig(name_or_path="Qwen/Qwen2.5-0.5B")).create_model()
    """
DECLARING = {
    "dataclass": ("from dataclasses import dataclass", "@dataclass", ""),
    "pydantic": ("from pydantic import BaseModel", "", "(BaseModel)"),
    "pydantic-settings": ("from pydantic_settings import BaseSettings", "", "(BaseSettings)"),
    "attrs-define": ("from attrs import define", "@define", ""),
    "attr-s": ("import attr", "@attr.s(auto_attribs=True)", ""),
}


@pytest.mark.parametrize("kind", sorted(DECLARING))
def test_a_config_class_default_reaches_the_loader_through_an_instance_passed_on(kind):
    """recall 27c: ArcticTraining's pydantic ``ModelConfig`` defaulted ``attn_implementation``
    to FlashAttention-2, read as ``self.config.attn_implementation`` of a factory given a
    ``ModelConfig(...)`` built in the call."""
    imports, decorator, bases = DECLARING[kind]
    src = DECLARED.format(imports=imports, decorator=decorator, bases=bases, default="flash_attention_2")
    assert [d.code for d in lint(src, "MP202")] == ["MP202"]
    assert lint(DECLARED.format(imports=imports, decorator=decorator, bases=bases, default="sdpa"), "MP202") == []

