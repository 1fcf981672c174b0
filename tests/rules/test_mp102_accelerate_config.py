"""MP102 across sources: the accelerate config a launch command passes vs the script's precision.

Each case is a small project: ``launch.py`` runs ``accelerate launch --config_file ... train.py``,
the accelerate YAML, and ``train.py`` before (a finding) and after (the two agree: none).
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import run_cli
from precision_lint.engine import check_paths
from precision_lint.facts.extractors.accelerate_launch import parse_launch

CODE = "MP102"

LAUNCH = """
import subprocess

subprocess.run(["accelerate", "launch", "--config_file", "configs/accelerate.yaml", "train.py", "--epochs", "1"], check=True)
"""

YAML = """\
compute_environment: LOCAL_MACHINE
distributed_type: MULTI_GPU
mixed_precision: {mp}
num_machines: 1
num_processes: 2
"""


def _findings(tree, train, mp="fp16", launch=LAUNCH, yaml=None, extra=None):
    root = tree({"launch.py": launch, "train.py": train, **(extra or {})})
    (root / "configs").mkdir(exist_ok=True)
    (root / "configs" / "accelerate.yaml").write_text(yaml if yaml is not None else YAML.format(mp=mp))
    return [d for d in check_paths([str(root)], select=[CODE]) if d.path.endswith("train.py")]


@pytest.mark.parametrize(
    "before, after, what",
    [
        (  # an explicit argument wins over ACCELERATE_MIXED_PRECISION
            'from accelerate import Accelerator\naccelerator = Accelerator(mixed_precision="bf16")\n',
            'from accelerate import Accelerator\naccelerator = Accelerator()\n',
            "silently bf16",
        ),
        (
            'from accelerate import Accelerator\naccelerator = Accelerator(mixed_precision="no")\n',
            'from accelerate import Accelerator\naccelerator = Accelerator(mixed_precision="fp16")\n',
            "silently full precision (fp32)",
        ),
        (  # TrainingArguments reads the variable only when both flags are off
            'from transformers import TrainingArguments\nargs = TrainingArguments("o", bf16=True)\n',
            'from transformers import TrainingArguments\nargs = TrainingArguments("o", fp16=True)\n',
            "silently bf16",
        ),
        (  # TRL: bf16 defaults to `not fp16`
            'from trl import SFTConfig\nargs = SFTConfig(output_dir="o")\n',
            'from trl import SFTConfig\nargs = SFTConfig(output_dir="o", fp16=True)\n',
            "TRL turns it on when fp16 is off",
        ),
        (  # `fp16=False` does not turn the launch's fp16 off
            'from transformers import TrainingArguments\nargs = TrainingArguments("o", fp16=False)\n',
            'from transformers import TrainingArguments\nargs = TrainingArguments("o")\n',
            "`fp16=False` does not turn fp16 off",
        ),
    ],
)
def test_script_against_the_accelerate_config(tree, before, after, what):
    (d,) = _findings(tree, before)
    assert what in d.message and d.fix is None
    yaml_rel, launch_rel = d.related
    assert yaml_rel.path.endswith("accelerate.yaml") and yaml_rel.span.line == 3  # `mixed_precision: fp16`
    assert launch_rel.path.endswith("launch.py") and launch_rel.span.line == 3
    assert _findings(tree, after) == []


def test_the_launch_files_are_never_edited(tree):
    train = 'from accelerate import Accelerator\naccelerator = Accelerator(mixed_precision="bf16")\n'
    assert _findings(tree, train)
    root = tree({})
    before = {p: (root / p).read_bytes() for p in ("launch.py", "train.py", "configs/accelerate.yaml")}
    run = run_cli("check", "--fix", "--select", CODE, "--no-cache", str(root))
    assert run.returncode == 1 and "MP102" in run.stdout  # reported, nothing to fix
    assert {p: (root / p).read_bytes() for p in before} == before


@pytest.mark.parametrize(
    "launch",
    [
        # one string, through the shell
        'import os\nos.system("accelerate launch --config_file configs/accelerate.yaml train.py")\n',
        # run from another folder: the paths are read from there
        'import subprocess\nsubprocess.run(["accelerate", "launch", "--config_file", "accelerate.yaml", "../train.py"], cwd="configs")\n',
        # a list named once, `python -m accelerate.commands.launch`, `--config_file=...`
        'import subprocess, sys\ncmd = [sys.executable, "-m", "accelerate.commands.launch", "--config_file=configs/accelerate.yaml", "--num_processes", "2", "train.py"]\nsubprocess.check_call(cmd)\n',
    ],
)
def test_launch_commands(tree, launch):
    train = 'from transformers import TrainingArguments\nargs = TrainingArguments("o", bf16=True)\n'
    (d,) = _findings(tree, train, launch=launch)
    assert "ACCELERATE_MIXED_PRECISION=fp16" in d.message


def test_a_script_path_that_names_two_files_ties_none(tree, monkeypatch):
    """`train.py` next to the launcher and in the working directory: which one runs depends on
    where the command is started, so neither is tied."""
    train = 'from transformers import TrainingArguments\nargs = TrainingArguments("o", bf16=True)\n'
    root = tree({"scripts/launch.py": LAUNCH.replace("configs/", "../configs/"), "scripts/train.py": train, "train.py": train})
    (root / "configs").mkdir()
    (root / "configs" / "accelerate.yaml").write_text(YAML.format(mp="fp16"))
    assert len(check_paths([str(root / "scripts")], select=[CODE])) == 1  # only scripts/ is linted
    monkeypatch.chdir(root)
    assert check_paths([str(root)], select=[CODE]) == []


def test_command_line_mixed_precision_wins_over_the_config(tree):
    train = 'from transformers import TrainingArguments\nargs = TrainingArguments("o", bf16=True)\n'
    agree = LAUNCH.replace('"train.py"', '"--mixed_precision", "bf16", "train.py"')
    assert _findings(tree, train, launch=agree) == []
    disagree = LAUNCH.replace('"train.py"', '"--mixed_precision", "fp16", "train.py"')
    (d,) = _findings(tree, train, mp="bf16", launch=disagree)
    assert "`--mixed_precision fp16` of the launch command" in d.message
    assert d.related[0].path.endswith("launch.py") and d.related[0].span.col > 0


@pytest.mark.parametrize(
    "train, launch, yaml",
    [
        # the config asks for no mixed precision (the default answer of `accelerate config`)
        ('from transformers import TrainingArguments\nargs = TrainingArguments("o", bf16=True)\n', LAUNCH, YAML.format(mp="no")),
        # no mixed precision in the config: accelerate launches with "no"
        ('from accelerate import Accelerator\nacc = Accelerator(mixed_precision="bf16")\n', LAUNCH, "distributed_type: NO\n"),
        # not an accelerate config (accelerate refuses one without distributed_type)
        ('from transformers import TrainingArguments\nargs = TrainingArguments("o", bf16=True)\n', LAUNCH, "mixed_precision: fp16\n"),
        # SageMaker: another launcher
        ('from transformers import TrainingArguments\nargs = TrainingArguments("o", bf16=True)\n', LAUNCH,
         "compute_environment: AMAZON_SAGEMAKER\ndistributed_type: NO\nmixed_precision: fp16\n"),
        # the precision is the user's or the machine's
        ('import sys\nfrom accelerate import Accelerator\nacc = Accelerator(mixed_precision=sys.argv[1])\n', LAUNCH, None),
        ('import torch\nfrom transformers import TrainingArguments\n'
         'args = TrainingArguments("o", bf16=torch.cuda.is_bf16_supported(including_emulation=False))\n', LAUNCH, None),
        # no flag at all: the launch decides (how an accelerate config is meant to be used)
        ('from transformers import TrainingArguments\nargs = TrainingArguments("o")\n', LAUNCH, None),
        ('from accelerate import Accelerator\nacc = Accelerator()\n', LAUNCH, None),
        # a project subclass of a TRL config: its bf16 default is not judged
        ('from trl import SFTConfig\nclass MyConfig(SFTConfig):\n    pass\nargs = MyConfig(output_dir="o")\n', LAUNCH, None),
        # another script is launched
        ('from transformers import TrainingArguments\nargs = TrainingArguments("o", bf16=True)\n',
         LAUNCH.replace('"train.py"', '"eval.py"'), None),
        # without --config_file accelerate reads the user's default config: not the project's
        ('from transformers import TrainingArguments\nargs = TrainingArguments("o", bf16=True)\n',
         'import subprocess\nsubprocess.run(["accelerate", "launch", "train.py"])\n', None),
        # a `cwd` that is not known: the paths cannot be read
        ('from transformers import TrainingArguments\nargs = TrainingArguments("o", bf16=True)\n',
         'import subprocess, sys\nsubprocess.run(["accelerate", "launch", "--config_file", "configs/accelerate.yaml", "train.py"], cwd=sys.argv[1])\n', None),
        # a word of the command is not known before the script: it might be another --config_file
        ('from transformers import TrainingArguments\nargs = TrainingArguments("o", bf16=True)\n',
         'import subprocess, sys\nsubprocess.run(["accelerate", "launch", sys.argv[1], "configs/accelerate.yaml", "train.py"])\n', None),
    ],
)
def test_negatives(tree, train, launch, yaml):
    assert _findings(tree, train, launch=launch, yaml=yaml) == []


DS_YAML = """\
compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: configs/ds_zero2.json
  zero3_init_flag: false
num_processes: 2
"""


@pytest.mark.parametrize(
    "ds, train, expected",
    [
        ({"fp16": {"enabled": True}}, 'args = TrainingArguments("o", bf16=True)', "cannot be set to `bf16` when `fp16`"),
        ({"bf16": {"enabled": "true"}}, 'args = TrainingArguments("o", fp16=True)', "cannot be set to `fp16` when `bf16`"),
        ({"fp16": {"enabled": True}}, 'args = SFTConfig(output_dir="o")', "cannot be set to `bf16` when `fp16`"),
        ({"fp16": {"enabled": True}}, 'args = TrainingArguments("o", fp16=True)', None),
        ({"fp16": {"enabled": "auto"}}, 'args = TrainingArguments("o", bf16=True)', None),
        ({"fp16": {"enabled": True}}, 'args = TrainingArguments("o")', None),  # the JSON decides
        # the script's own DeepSpeed config is the one accelerate checks (compared by the check above)
        ({"fp16": {"enabled": True}}, 'args = TrainingArguments("o", bf16=True, deepspeed=ds)', None),
    ],
)
def test_deepspeed_config_file_of_the_accelerate_config(tree, ds, train, expected):
    src = "from transformers import TrainingArguments\nfrom trl import SFTConfig\n" + train + "\n"
    json_text = json.dumps({**ds, "zero_optimization": {"stage": 2}}, indent=2)
    found = _findings(tree, src, yaml=DS_YAML, extra={"configs/ds_zero2.json": json_text})
    if expected is None:
        assert found == []
        return
    (d,) = found
    assert expected in d.message and "ValueError: `--mixed_precision` arg" in d.message
    assert d.related[0].path.endswith("ds_zero2.json") and d.related[0].span.line == 3


@pytest.mark.parametrize(
    "words, expected",
    [
        ("accelerate launch --config_file a.yaml train.py --lr 1", ("train.py", "a.yaml", None)),
        ("accelerate launch --mixed_precision bf16 scripts/train.py", ("scripts/train.py", None, "bf16")),
        ("/opt/bin/accelerate launch --config_file=a.yaml t.py", ("t.py", "a.yaml", None)),
        ("accelerate launch -m pkg.train", None),  # a module: not judged
        ("python train.py --config_file a.yaml", None),  # not a launch
        ("accelerate config", None),
    ],
)
def test_parse_launch(words, expected):
    parsed = parse_launch([(w, None) for w in words.split()])
    assert (parsed if parsed is None else (parsed[0], parsed[1], parsed[3])) == expected


def test_what_accelerate_and_transformers_really_do(tmp_path):
    """The behaviour the rule page states, run on the installed libraries (CPU): the variable
    `accelerate launch` sets from the config loses to an explicit argument, and wins over
    flags that are off; the DeepSpeed check raises the error quoted in the messages."""
    pytest.importorskip("trl")
    program = textwrap.dedent(f"""
        import os
        os.environ["ACCELERATE_MIXED_PRECISION"] = "fp16"
        from accelerate import Accelerator
        from accelerate.utils import DeepSpeedPlugin
        from transformers import TrainingArguments
        from trl import SFTConfig
        out = {{"o": {str(tmp_path)!r}, "use_cpu": True}}
        print(TrainingArguments(output_dir=out["o"], use_cpu=True, fp16=False).mixed_precision)
        print(TrainingArguments(output_dir=out["o"], use_cpu=True, bf16=True).mixed_precision)
        print(SFTConfig(output_dir=out["o"], use_cpu=True).mixed_precision)
        print(Accelerator(mixed_precision="bf16", cpu=True).mixed_precision)
        plugin = DeepSpeedPlugin(hf_ds_config={{"fp16": {{"enabled": True}}, "zero_optimization": {{"stage": 2}}}})
        try:
            plugin.set_mixed_precision("bf16")
        except ValueError as e:
            print(e)
        os.environ["ACCELERATE_CONFIG_DS_FIELDS"] = "zero3_init_flag,mixed_precision"
        try:
            DeepSpeedPlugin(hf_ds_config={{"zero_optimization": {{"stage": 2}}}})
        except ValueError as e:
            print(str(e).splitlines()[0])
    """)
    env = dict(os.environ, OMP_NUM_THREADS="1", ACCELERATE_USE_CPU="1")
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = run.stdout.strip().splitlines()
    assert lines[:-1] == [
        "fp16", "bf16", "bf16", "bf16",
        "`--mixed_precision` arg cannot be set to `bf16` when `fp16` is set in the DeepSpeed config file.",
    ]
    assert lines[-1].startswith("When using `deepspeed_config_file`, the following accelerate config variables will be ignored: [")
    assert lines[-1].endswith(", 'mixed_precision'].")


@pytest.mark.parametrize(
    "yaml_extra, launch_extra, found",
    [
        ("mixed_precision: bf16\n", "", True),  # hand-added next to the JSON: refused
        ("mixed_precision: 'no'\n", "", True),  # any value is passed on, 'no' too
        ("", "", False),  # what `accelerate config` writes with a DeepSpeed file: no mixed_precision
        ("mixed_precision: bf16\n", '"--mixed_precision", "bf16", ', False),  # the command's wins
    ],
)
def test_mixed_precision_next_to_a_deepspeed_config_file(tree, yaml_extra, launch_extra, found):
    launch = LAUNCH.replace('"train.py"', launch_extra + '"train.py"')
    root = tree({
        "launch.py": launch,
        "train.py": "from transformers import TrainingArguments\nargs = TrainingArguments('o')\n",
        "configs/accelerate.yaml": DS_YAML + yaml_extra,
        "configs/ds_zero2.json": json.dumps({"bf16": {"enabled": "auto"}, "zero_optimization": {"stage": 2}}),
    })
    diags = [d for d in check_paths([str(root)], select=[CODE])]
    if not found:
        assert diags == []
        return
    (d,) = diags
    assert d.path.endswith("launch.py") and d.span.line == 3
    assert "following accelerate config variables will be ignored" in d.message
    assert d.related[0].path.endswith("accelerate.yaml") and d.related[0].span.line == 7
    # a launched script that builds no Accelerator / TrainingArguments never meets the check
    (root / "train.py").write_text("import torch\nprint(torch.ones(2, dtype=torch.bfloat16))\n")
    assert check_paths([str(root)], select=[CODE]) == []
