"""Config values one lookup deeper: nested dicts written in the script (``CONFIG["model"]["dtype"]``,
``**CONFIG["train"]``), a dtype table looked up by a command-line option
(``DTYPES[args.precision]``: a ``choices=`` opt-in stays an opt-in, a ``default=`` is the
script's own choice), and a config file whose switch is off, for every way of loading it."""
import pytest
from conftest import config, dedent, lint, write_tree

from precision_lint.engine import Engine

NESTED = """
    import torch
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

    CONFIG = {{
        "model": {{"name": "gpt2", "dtype": {dtype}}},
        "train": {{"output_dir": "o", "fp16": {fp16}}},
    }}
    model = AutoModelForCausalLM.from_pretrained(CONFIG["model"]["name"], torch_dtype={lookup})
    Trainer(model=model, args=TrainingArguments(**CONFIG["train"])).train()
    """


@pytest.mark.parametrize("lookup", ['CONFIG["model"]["dtype"]', 'CONFIG["model"].get("dtype")'])
def test_a_dtype_and_fp16_in_nested_dicts_of_the_script(lookup):
    (d,) = lint(NESTED.format(dtype="torch.float16", fp16="True", lookup=lookup), "MP101")
    assert d.span.line == 8


@pytest.mark.parametrize("dtype, fp16", [("torch.float32", "True"), ("torch.float16", "False")])
def test_nested_dicts_with_float32_weights_or_fp16_off_are_clean(dtype, fp16):
    assert lint(NESTED.format(dtype=dtype, fp16=fp16, lookup='CONFIG["model"]["dtype"]'), "MP101") == []


def test_a_nested_dict_bound_to_its_own_name():
    src = """
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        MODEL = {"dtype": torch.float16}
        CONFIG = {"model": MODEL, "train": {"fp16": True}}
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=CONFIG["model"]["dtype"])
        args = TrainingArguments(output_dir="o", fp16=CONFIG["train"]["fp16"])
        Trainer(model=model, args=args).train()
        """
    assert [d.span.line for d in lint(src, "MP101")] == [6]
    assert lint(src.replace('"fp16": True', '"fp16": False'), "MP101") == []


def test_an_item_set_inside_a_nested_dict():
    src = """
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        cfg = {"model": {}, "train": {"fp16": True}}
        cfg["model"]["dtype"] = torch.float16
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=cfg["model"]["dtype"])
        args = TrainingArguments(output_dir="o", fp16=cfg["train"]["fp16"])
        Trainer(model=model, args=args).train()
        """
    assert [d.span.line for d in lint(src, "MP101")] == [6]
    # the key set to float32 afterwards, or set in another nested dict: no float16 weights
    assert lint(src.replace('cfg["model"]["dtype"] = torch.float16', 'cfg["model"]["dtype"] = torch.float32'), "MP101") == []
    assert lint(src.replace('cfg["model"]["dtype"] = torch.float16', 'cfg["train"]["dtype"] = torch.float16'), "MP101") == []



@pytest.mark.parametrize(
    "where",
    [
        'model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=cfg["model"]["dtype"])\ncfg["model"]["dtype"] = torch.float16',
        'cfg["model"]["dtype"] = torch.float16\ncfg = {"model": {"dtype": torch.float32}, "train": {"fp16": True}}\n'
        'model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=cfg["model"]["dtype"])',
    ],
    ids=["set-after-the-load", "set-on-a-dict-rebound-before-the-load"],
)
def test_an_item_set_inside_a_nested_dict_that_does_not_reach_the_load(where):
    src = (
        "import torch\n"
        "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n\n"
        'cfg = {"model": {"dtype": torch.float32}, "train": {"fp16": True}}\n'
        + where
        + '\nargs = TrainingArguments(output_dir="o", fp16=cfg["train"]["fp16"])\n'
        "Trainer(model=model, args=args).train()\n"
    )
    assert lint(src, "MP101") == []
    # the same float16 set before the load (and after the binding) is what the load reads
    before = src.replace(where, 'cfg["model"]["dtype"] = torch.float16\nmodel = AutoModelForCausalLM.from_pretrained("m", torch_dtype=cfg["model"]["dtype"])')
    assert [d.code for d in lint(before, "MP101")] == ["MP101"]


KEYED = """
    import argparse
    import torch
    from transformers import AutoModelForCausalLM, TrainingArguments

    DTYPES = {{"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}}
    parser = argparse.ArgumentParser()
    parser.add_argument("--precision", default="{default}", choices={choices})
    args = parser.parse_args()
    model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=DTYPES[args.precision])
    optimizer = torch.optim.AdamW(model.parameters())
    """
LITERAL_CHOICES = '["fp32", "fp16", "bf16"]'


def test_a_bf16_choice_of_a_dtype_table_is_the_users_opt_in():
    # like `getattr(torch, args.dtype)` with `choices=`: bf16 only when the user asks for it
    assert lint(KEYED.format(default="fp32", choices=LITERAL_CHOICES), "MP201") == []


def test_a_bf16_default_of_a_dtype_table_is_the_scripts_choice():
    (d,) = lint(KEYED.format(default="bf16", choices=LITERAL_CHOICES), "MP201")
    assert d.span.line == 9


def test_choices_the_code_computes_keep_what_the_default_selects():
    computed = "sorted(DTYPES)"
    (d,) = lint(KEYED.format(default="bf16", choices=computed), "MP201")
    assert d.span.line == 9
    assert lint(KEYED.format(default="fp32", choices=computed), "MP201") == []
    # (arguments a Trainer takes: ones nothing takes scale no loss)
    scaled = KEYED + 'args_t = TrainingArguments(output_dir="o", fp16=True)\n    run(model, args_t)\n'
    assert [d.span.line for d in lint(scaled.format(default="fp16", choices=computed), "MP101")] == [9]
    assert lint(scaled.format(default="fp32", choices=computed), "MP101") == []


YAML_OFF = "model:\n  torch_dtype: float16\ntraining:\n  fp16: false\n"
LOADS = {
    "yaml": ("import yaml", 'cfg = yaml.safe_load(open("config.yaml"))', "config.yaml", YAML_OFF),
    "omegaconf": ("from omegaconf import OmegaConf", 'cfg = OmegaConf.load("config.yaml")', "config.yaml", YAML_OFF),
    "json": ("import json", 'cfg = json.load(open("config.json"))', "config.json",
             '{"model": {"torch_dtype": "float16"}, "training": {"fp16": false}}'),
}


@pytest.mark.parametrize("how", sorted(LOADS))
def test_a_config_file_with_fp16_off_is_clean_however_it_is_loaded(tmp_path, how):
    imports, load, name, text = LOADS[how]
    script = f"""
        import torch
        {imports}
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        {load}
        model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=cfg["model"]["torch_dtype"])
        Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=cfg["training"]["fp16"])).train()
        """
    write_tree(tmp_path, {"train.py": script, name: text})
    run = lambda: Engine(config(), ["MP101"], jobs=1).run_paths([str(tmp_path)]).diagnostics
    assert run() == []
    (tmp_path / name).write_text(text.replace("false", "true"))  # the same file switched on: found
    assert [(d.code, d.span.line) for d in run()] == [("MP101", 6)]
    assert dedent(script).splitlines()[5].startswith("model = ")


TABLE_BY_CONFIG = """
    import torch
    import yaml
    from transformers import AutoModelForCausalLM

    DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
    cfg = yaml.safe_load(open("train.yaml"))
    model = AutoModelForCausalLM.from_pretrained("m", dtype=DTYPES[cfg["dtype"]])
"""


def _table_run(tmp_path, yaml_text):
    from conftest import write_tree
    from precision_lint.engine import Engine

    files = {"train.py": TABLE_BY_CONFIG}
    if yaml_text is not None:
        files["train.yaml"] = yaml_text
    write_tree(tmp_path, files)
    return [(d.code, d.span.line) for d in Engine(config(), ["MP201"], jobs=1).run_paths([str(tmp_path)]).diagnostics]


def test_a_dtype_table_keyed_by_a_config_file_value(tmp_path):
    # the key is read from train.yaml at the join; the table is the script's
    assert _table_run(tmp_path, "dtype: bf16\n") == [("MP201", 7)]


@pytest.mark.parametrize("yaml_text", ["dtype: fp32\n", "dtype: fp16\n", "dtype: int8\n", "other: 1\n", None])
def test_a_dtype_table_keyed_by_a_config_value_that_picks_no_bf16(tmp_path, yaml_text):
    # another entry, a key the table lacks (KeyError in the code), a missing key or file: nothing
    assert _table_run(tmp_path, yaml_text) == []


TABLE_BY_PARAMETER = """
    import torch
    from transformers import AutoModelForCausalLM

    DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}

    def load(name, precision):
        return AutoModelForCausalLM.from_pretrained(name, dtype=DTYPES[precision])

    model = load("m", "{precision}")
"""


def test_a_dtype_table_keyed_by_what_a_caller_passes():
    assert [(d.code, d.span.line) for d in lint(TABLE_BY_PARAMETER.replace("{precision}", "bf16"), "MP201")] == [("MP201", 7)]
    assert lint(TABLE_BY_PARAMETER.replace("{precision}", "fp32"), "MP201") == []
