"""Values that live in config files: ``fp16: true`` or ``torch_dtype: float16`` in a YAML,
JSON or TOML file that the script loads from a literal path. The file is read (never run)
when files are joined; findings name its line, and fixes never edit it."""
import json
import os

import pytest
from conftest import config, dedent, write_tree

from precision_lint.engine import Engine

LOAD_AND_TRAIN = """
    import torch
    {imports}
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

    {load}
    model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype={dtype})
    args = TrainingArguments(output_dir="out", {flags})
    Trainer(model=model, args=args).train()
    """

YAML = """\
model:
  torch_dtype: float16
training:
  fp16: true
  learning_rate: 1.0e-4
"""


def _run(root, code="MP101", *names):
    engine = Engine(config(), [code], jobs=1)
    paths = [str(root / n) for n in names] if names else [str(root)]
    return engine.run_paths(paths).diagnostics


def _script(load, dtype, flags, imports="import yaml"):
    return dedent(LOAD_AND_TRAIN.format(imports=imports, load=load, dtype=dtype, flags=flags))


LOADS = {
    "with-open": 'with open("config.yaml") as fh:\n        cfg = yaml.safe_load(fh)',
    "open-inline": 'cfg = yaml.safe_load(open("config.yaml"))',
    "path-read-text": 'cfg = yaml.safe_load((Path(__file__).parent / "config.yaml").read_text())',
    "os-path-join": 'cfg = yaml.load(open(os.path.join(os.path.dirname(__file__), "config.yaml")), Loader=yaml.SafeLoader)',
    "omegaconf": 'cfg = OmegaConf.load("config.yaml")',
}
IMPORTS = {
    "path-read-text": "import yaml\n    from pathlib import Path",
    "os-path-join": "import os\n    import yaml",
    "omegaconf": "from omegaconf import OmegaConf",
}


@pytest.mark.parametrize("how", sorted(LOADS))
def test_fp16_and_a_float16_dtype_both_written_in_a_yaml_file(tmp_path, how):
    script = _script(LOADS[how], 'cfg["model"]["torch_dtype"]', 'fp16=cfg["training"]["fp16"]', IMPORTS.get(how, "import yaml"))
    write_tree(tmp_path, {"train.py": script, "config.yaml": YAML})
    (finding,) = _run(tmp_path)
    loads_line = next(i for i, line in enumerate(script.splitlines(), 1) if "from_pretrained" in line)
    assert finding.code == "MP101" and finding.span.line == loads_line
    assert "`fp16: true` is set in config.yaml (line 4)" in finding.message
    assert "float16 is set in config.yaml (line 2)" in finding.message
    assert {(r.path.rsplit("/", 1)[-1], r.span.line) for r in finding.related} >= {("config.yaml", 4), ("config.yaml", 2)}


def test_attribute_access_on_an_omegaconf_config(tmp_path):
    script = _script('cfg = OmegaConf.load("config.yaml")', "torch.float16", "fp16=cfg.training.fp16", "from omegaconf import OmegaConf")
    write_tree(tmp_path, {"train.py": script, "config.yaml": YAML})
    assert [d.code for d in _run(tmp_path)] == ["MP101"]


def test_the_same_script_with_fp16_false_in_its_config_is_clean(tmp_path):
    script = _script(LOADS["with-open"], 'cfg["model"]["torch_dtype"]', 'fp16=cfg["training"]["fp16"]')
    write_tree(tmp_path, {"train.py": script, "config.yaml": YAML.replace("fp16: true", "fp16: false")})
    assert _run(tmp_path) == []


def test_a_float32_dtype_in_the_config_is_clean(tmp_path):
    script = _script(LOADS["with-open"], 'cfg["model"]["torch_dtype"]', 'fp16=cfg["training"]["fp16"]')
    write_tree(tmp_path, {"train.py": script, "config.yaml": YAML.replace("float16", "float32")})
    assert _run(tmp_path) == []


def test_a_missing_config_file_or_key_is_unknown_never_guessed(tmp_path):
    script = _script(LOADS["with-open"], "torch.float16", 'fp16=cfg["training"]["fp16"]')
    write_tree(tmp_path, {"train.py": script})  # no config.yaml next to it
    assert _run(tmp_path) == []
    write_tree(tmp_path, {"config.yaml": "training:\n  learning_rate: 1.0\n"})
    assert _run(tmp_path) == []


def test_get_with_a_default_gives_the_default_when_the_key_is_absent(tmp_path):
    script = _script(LOADS["with-open"], "torch.float16", 'fp16=cfg["training"].get("fp16", True)')
    write_tree(tmp_path, {"train.py": script, "config.yaml": "training:\n  learning_rate: 1.0\n"})
    assert [d.code for d in _run(tmp_path)] == ["MP101"]
    write_tree(tmp_path, {"config.yaml": "training:\n  fp16: false\n"})
    assert _run(tmp_path) == []


def test_a_json_table_spread_into_training_arguments(tmp_path):
    script = _script(
        'cfg = json.load(open("cfg.json"))', "torch.float16", '**cfg["train"]', "import json"
    )
    write_tree(tmp_path, {"train.py": script, "cfg.json": json.dumps({"train": {"fp16": True, "seed": 1}}, indent=1)})
    (finding,) = _run(tmp_path)
    assert "`TrainingArguments(**cfg[\"train\"])`" in finding.message
    assert "`fp16: true` is set in cfg.json (line 3)" in finding.message
    # a table without the key: TrainingArguments' default (fp16 off)
    write_tree(tmp_path, {"cfg.json": json.dumps({"train": {"seed": 1}})})
    assert _run(tmp_path) == []


def test_the_path_comes_from_an_argparse_default(tmp_path):
    load = (
        'parser = argparse.ArgumentParser()\n    parser.add_argument("--config", default="config.yaml")\n'
        "    options = parser.parse_args()\n    cfg = yaml.safe_load(open(options.config))"
    )
    script = _script(load, 'cfg["model"]["torch_dtype"]', 'fp16=cfg["training"]["fp16"]', "import argparse\n    import yaml")
    write_tree(tmp_path, {"train.py": script, "config.yaml": YAML})
    assert [d.code for d in _run(tmp_path)] == ["MP101"]


def test_a_toml_config(tmp_path):
    script = _script('cfg = tomllib.load(open("train.toml", "rb"))', "torch.float16", 'fp16=cfg["training"]["fp16"]', "import tomllib")
    write_tree(tmp_path, {"train.py": script, "train.toml": "[training]\nseed = 1\nfp16 = true\n"})
    (finding,) = _run(tmp_path)
    assert "`fp16: true` is set in train.toml (line 3)" in finding.message


def test_bf16_from_a_config_file_gets_no_fix_that_edits_the_python_file_at_the_yaml_offsets(tmp_path):
    script = dedent(
        """
        import yaml
        from transformers import TrainingArguments, Trainer

        cfg = yaml.safe_load(open("config.yaml"))
        args = TrainingArguments(output_dir="out", bf16=cfg["bf16"])
        Trainer(model=None, args=args).train()
        """
    )
    write_tree(tmp_path, {"train.py": script, "config.yaml": "bf16: true\n"})
    (finding,) = _run(tmp_path, "MP201")
    assert finding.code == "MP201"
    edits = [e for e in (finding.fix.edits if finding.fix else ())]
    # an edit, if any, is of the Python expression `cfg["bf16"]`, never at the YAML's offsets
    text = script
    for e in edits:
        assert text[e.start : e.end] in ('cfg["bf16"]', "") or e.start >= text.index("args =")


def test_an_invalid_or_huge_config_file_gives_no_values(tmp_path):
    script = _script(LOADS["with-open"], "torch.float16", 'fp16=cfg["training"]["fp16"]')
    write_tree(tmp_path, {"train.py": script, "config.yaml": "training: [unclosed\n"})
    assert _run(tmp_path) == []
    write_tree(tmp_path, {"config.yaml": "training:\n  fp16: true\n" + "# padding\n" * 200_000})
    assert _run(tmp_path) == []


def test_a_config_path_reaches_a_loader_in_another_file(tmp_path):
    write_tree(
        tmp_path,
        {
            "settings.py": """
                import yaml

                def load_settings():
                    with open("config.yaml") as fh:
                        return yaml.safe_load(fh)
                """,
            "train.py": """
                import torch
                from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
                from settings import load_settings

                cfg = load_settings()
                model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.float16)
                Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=cfg["training"]["fp16"])).train()
                """,
            "config.yaml": YAML,
        },
    )
    assert [d.code for d in _run(tmp_path)] == ["MP101"]


def test_a_config_table_passed_to_a_builder_in_another_file(tmp_path):
    write_tree(
        tmp_path,
        {
            "models.py": """
                from transformers import AutoModelForCausalLM

                def build_model(cfg):
                    return AutoModelForCausalLM.from_pretrained(cfg["name"], torch_dtype=cfg["dtype"])
                """,
            "train.py": """
                import yaml
                from transformers import Trainer, TrainingArguments
                from models import build_model

                cfg = yaml.safe_load(open("config.yaml"))
                model = build_model(cfg["model"])
                Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=True)).train()
                """,
            "config.yaml": "model:\n  name: gpt2\n  dtype: float16\n",
        },
    )
    (finding,) = _run(tmp_path)
    assert finding.path.endswith("models.py") and "float16 is set in" in finding.message
    write_tree(tmp_path, {"config.yaml": "model:\n  name: gpt2\n  dtype: float32\n"})
    assert _run(tmp_path) == []


def test_the_tables_a_file_names_a_class_for_in_file_order(tmp_path):
    from precision_lint.workspace.configfiles import ConfigFiles

    (tmp_path / "c.yaml").write_text(
        "trainer:\n  _target_: pkg.Trainer\n  args:\n    _target_: transformers.TrainingArguments\n    lr: 1\n"
        "model:\n  name: x\nopt:\n  _target_: torch.optim.AdamW\n  _partial_: true\nwhere: ${oc.env:X}\n"
    )
    configs = ConfigFiles(cwd=str(tmp_path))
    near = str(tmp_path / "train.py")
    assert configs.targets(near, "c.yaml") == [
        (("trainer",), "pkg.Trainer"), (("trainer", "args"), "transformers.TrainingArguments"), (("opt",), "torch.optim.AdamW"),
    ]
    assert configs.targets(near, "missing.yaml") == []
    (tmp_path / "confs" / "g").mkdir(parents=True)
    for name in ("b.yaml", "a.yml", "notes.txt"):
        (tmp_path / "confs" / name).write_text("x: 1\n")
    (tmp_path / "confs" / "g" / "c.yaml").write_text("x: 1\n")
    found = configs.files_under(str(tmp_path / "confs"))
    assert [os.path.relpath(f, tmp_path) for f in found] == ["confs/a.yml", "confs/b.yaml", "confs/g/c.yaml"]
    assert {os.path.relpath(p, tmp_path) for p in configs.looked_for() if os.path.isdir(p)} == {"confs", "confs/g"}
