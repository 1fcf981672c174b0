"""``HfArgumentParser`` filling TrainingArguments from the code's own file, dict or argument
list: ``parser.parse_yaml_file("train.yaml")``, ``parse_json_file(json_file=...)``,
``parse_dict({...})``, ``parse_args_into_dataclasses(args=[...])``. The fields are what is
written there (a file's key with its line; a key that is absent is the field's default, off).
A file the user names on the command line (``sys.argv[1]``) is the user's, like ``--fp16``."""
import json

import pytest
from conftest import config, dedent, write_tree

from precision_lint.engine import Engine

SCRIPT = """
    import os
    import sys
    from dataclasses import dataclass, field

    import torch
    from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments


    @dataclass
    class ModelArguments:
        name: str = field(default="m")


    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    PARSE
    model = AutoModelForCausalLM.from_pretrained(model_args.name, dtype=DTYPE)
    Trainer(model=model, args=training_args).train()
    """


def _script(parse, dtype="torch.float16"):
    return dedent(SCRIPT.replace("PARSE", parse).replace("DTYPE", dtype))


def _run(root, code="MP101"):
    engine = Engine(config(), [code], jobs=1)
    return engine.run_paths([str(root)]).diagnostics


YAML_ON = "output_dir: out\nlearning_rate: 1.0e-4\nfp16: true\n"


def test_fp16_in_a_yaml_file_the_parser_reads(tmp_path):
    write_tree(tmp_path, {
        "train.py": _script('model_args, training_args = parser.parse_yaml_file("train.yaml")'),
        "train.yaml": YAML_ON,
    })
    (d,) = _run(tmp_path)
    assert d.span.line == 16
    assert '`TrainingArguments` filled by `parser.parse_yaml_file("train.yaml")` (line 15)' in d.message
    assert "`fp16: true` is set in train.yaml (line 3)" in d.message
    assert any(r.path.endswith("train.yaml") and r.span.line == 3 for r in d.related)


@pytest.mark.parametrize("yaml_text", ["output_dir: out\nfp16: false\n", "output_dir: out\n"])
def test_fp16_off_or_absent_in_the_file_is_silent(tmp_path, yaml_text):
    write_tree(tmp_path, {
        "train.py": _script('model_args, training_args = parser.parse_yaml_file("train.yaml")'),
        "train.yaml": yaml_text,
    })
    assert _run(tmp_path) == []


def test_a_missing_file_is_unknown_never_guessed(tmp_path):
    write_tree(tmp_path, {"train.py": _script('model_args, training_args = parser.parse_yaml_file("train.yaml")')})
    assert _run(tmp_path) == []


def test_a_json_file_named_by_keyword_next_to_the_script(tmp_path):
    parse = 'model_args, training_args = parser.parse_json_file(json_file=os.path.join(os.path.dirname(__file__), "args.json"))'
    write_tree(tmp_path, {
        "train.py": _script(parse),
        "args.json": json.dumps({"output_dir": "out", "fp16": True}, indent=1),
    })
    (d,) = _run(tmp_path)
    assert "`fp16: true` is set in args.json" in d.message


@pytest.mark.parametrize("flag, found", [("True", 1), ("False", 0)])
def test_a_dict_the_code_parses(tmp_path, flag, found):
    parse = f'model_args, training_args = parser.parse_dict({{"output_dir": "out", "fp16": {flag}}})'
    write_tree(tmp_path, {"train.py": _script(parse)})
    assert len(_run(tmp_path)) == found


@pytest.mark.parametrize("words, found", [
    ('["--output_dir", "out", "--fp16"]', 1),
    ('["--output_dir", "out", "--fp16", "true"]', 1),
    ('["--output_dir", "out", "--fp16", "False"]', 0),
    ('["--output_dir", "out"]', 0),
])
def test_a_literal_argument_list(tmp_path, words, found):
    parse = f"model_args, training_args = parser.parse_args_into_dataclasses(args={words})"
    write_tree(tmp_path, {"train.py": _script(parse)})
    assert len(_run(tmp_path)) == found


def test_a_file_the_user_names_on_the_command_line_is_the_users_choice(tmp_path):
    # `python train.py my.yaml` or `python train.py --fp16`: both are the user's; float16
    # weights written in the code meet the user's fp16 (as with a plain command line)
    parse = "\n    ".join([  # the template's own indentation
        'if len(sys.argv) == 2 and sys.argv[1].endswith(".yaml"):',
        "    model_args, training_args = parser.parse_yaml_file(os.path.abspath(sys.argv[1]))",
        "else:",
        "    model_args, training_args = parser.parse_args_into_dataclasses()",
    ])
    write_tree(tmp_path, {"train.py": _script(parse), "train.yaml": YAML_ON})
    (d,) = _run(tmp_path)
    assert "`--fp16` (a command-line switch" in d.message


def test_bf16_in_the_parsed_file_is_reported_by_mp201_and_off_is_not(tmp_path):
    parse = 'model_args, training_args = parser.parse_yaml_file("train.yaml")'
    write_tree(tmp_path, {"train.py": _script(parse, "torch.float32"), "train.yaml": "output_dir: out\nbf16: true\n"})
    (d,) = _run(tmp_path, "MP201")
    assert d.span.line == 15 and d.fix is None  # the value is the file's: no edit of the script
    write_tree(tmp_path, {"train.yaml": "output_dir: out\nbf16: false\n"})
    assert _run(tmp_path, "MP201") == []


def test_a_field_read_from_the_parsed_instance_takes_the_files_value(tmp_path):
    src = _script('model_args, training_args = parser.parse_yaml_file("train.yaml")').replace(
        "Trainer(model=model, args=training_args).train()",
        "optimizer = torch.optim.AdamW(model.parameters())\n"
        "scaler = torch.amp.GradScaler(\"cuda\", enabled=training_args.fp16)",
    )
    write_tree(tmp_path, {"train.py": src, "train.yaml": "output_dir: out\nfp16: false\n"})
    assert _run(tmp_path) == []
    write_tree(tmp_path, {"train.yaml": YAML_ON})
    (d,) = _run(tmp_path)
    assert "`fp16: true` is set in train.yaml (line 3)" in d.message


def test_a_dict_the_code_cannot_see_into_is_the_users_like_their_command_line(tmp_path):
    # `parse_dict(options)` of what a caller read from the user's own file: fp16 is theirs to
    # turn on, and float16 weights written in the code crash when they do
    src = _script("model_args, training_args = parser.parse_dict(load_options())").replace(
        "parser = HfArgumentParser", "from options import load_options\n\nparser = HfArgumentParser"
    )
    write_tree(tmp_path, {"train.py": src, "options.py": "import sys\nimport yaml\n\ndef load_options():\n    return yaml.safe_load(open(sys.argv[1]))\n"})
    (d,) = _run(tmp_path)
    assert "filled by `parser.parse_dict(load_options())` (line 17) turns on fp16 loss scaling whenever `fp16` is on" in d.message
    write_tree(tmp_path, {"train.py": src.replace("dtype=torch.float16", "dtype=torch.float32")})
    assert _run(tmp_path, "MP201") == []
