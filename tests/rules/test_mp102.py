"""MP102 conflicting-precision-flags: one config, options, late assignments, DeepSpeed JSON."""
import json

import pytest

from conftest import dedent, fix, lint
from precision_lint.engine import check_paths

CODE = "MP102"


def test_both_literally_true_is_fixed_with_the_plan():
    src = """
    import torch
    from transformers import TrainingArguments
    args = TrainingArguments(output_dir="o", fp16=True, bf16=True)  # merged recipes
    """
    (d,) = lint(src, CODE)
    assert "At most one of fp16 and bf16 can be True, but not both" in d.message
    assert d.related and d.related[0].span.col == d.span.col - len("fp16=True, ")
    fixed = fix(src, CODE)
    assert fixed == dedent("""
    import torch
    from transformers import TrainingArguments

    # bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back.
    BF16_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

    args = TrainingArguments(output_dir="o", fp16=torch.cuda.is_available() and not BF16_OK, bf16=BF16_OK)  # merged recipes
    """)
    assert not lint(fixed, CODE)
    assert fix(src) == fixed  # with every rule's fixes (MP201 also reports bf16=True): one plan
    assert not lint(fixed)


@pytest.mark.parametrize(
    "src, line",
    [
        (  # a merged dict, and a machine check next to a hard-coded flag (both on an A100)
            """
            import torch
            from transformers import TrainingArguments
            base = dict(output_dir="o", fp16=True)
            args = TrainingArguments(**base, bf16=torch.cuda.is_bf16_supported(including_emulation=False))
            """,
            4,
        ),
        (  # an option that defaults to on, and a switch for the other
            """
            import argparse
            from transformers import TrainingArguments
            p = argparse.ArgumentParser()
            p.add_argument("--fp16", action="store_true", default=True)
            p.add_argument("--bf16", action="store_true")
            opts = p.parse_args()
            args = TrainingArguments("o", fp16=opts.fp16, bf16=opts.bf16)
            """,
            7,
        ),
        (  # set after construction: not validated again
            """
            from transformers import TrainingArguments
            args = TrainingArguments("o", fp16=True)
            args.bf16 = True
            """,
            3,
        ),
        (  # TRL configs are training arguments too
            """
            from trl import SFTConfig
            cfg = SFTConfig(output_dir="o", bf16=True, fp16=True)
            """,
            2,
        ),
    ],
)
def test_reported(src, line):
    (d,) = lint(src, CODE)
    assert d.span.line == line
    assert d.fix is None or "BF16_OK" in fix(src, CODE)


@pytest.mark.parametrize(
    "src",
    [
        # the precision plan's pair is exclusive
        """
        import torch
        from transformers import TrainingArguments
        OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8
        args = TrainingArguments("o", bf16=OK, fp16=torch.cuda.is_available() and not OK)
        """,
        # opposite branches of one test
        """
        from transformers import TrainingArguments
        args = TrainingArguments("o", fp16=True if big else False, bf16=False if big else True)
        """,
        # two switches that are both off by default: the user's choice
        """
        import argparse
        from transformers import TrainingArguments
        p = argparse.ArgumentParser()
        p.add_argument("--fp16", action="store_true")
        p.add_argument("--bf16", action="store_true")
        opts = p.parse_args()
        args = TrainingArguments("o", fp16=opts.fp16, bf16=opts.bf16)
        """,
        # bf16 is the negation of the user's --fp16 switch (seed 001's script), reassigned on old GPUs
        """
        import argparse
        import torch
        from transformers import TrainingArguments
        p = argparse.ArgumentParser()
        p.add_argument("--fp16", action="store_true")
        args = p.parse_args()
        use_bf16 = not args.fp16
        use_fp16 = args.fp16
        if use_bf16 and torch.cuda.is_available() and torch.cuda.get_device_capability()[0] < 8:
            use_bf16 = False
            use_fp16 = True
        training_args = TrainingArguments("o", bf16=use_bf16, fp16=use_fp16)
        """,
        # two parameters of the entry point, both off by default, each joined with a device test (review 24a)
        """
        import fire
        import torch
        from transformers import TrainingArguments
        def train(out="o", fp16: bool = False, bf16: bool = False):
            cuda = torch.cuda.is_available()
            ok = cuda and torch.cuda.get_device_capability()[0] >= 8
            return TrainingArguments(out, fp16=fp16 and cuda, bf16=bf16 and ok)
        fire.Fire(train)
        """,
        # two tests of one string option no value passes both (review 25e: `in [...]` beside `==`)
        """
        import argparse
        from transformers import TrainingArguments
        p = argparse.ArgumentParser()
        p.add_argument("--dtype", default="fp16", choices=["fp16", "bf16", "fp32"])
        a = p.parse_args()
        args = TrainingArguments("o", fp16=a.dtype in ["fp16", "float16"], bf16=a.dtype == "bf16")
        """,
        # one flag only
        "from transformers import TrainingArguments\nargs = TrainingArguments('o', fp16=True, bf16=False)\n",
        # not a training config
        "def f(**kw): pass\nf(fp16=True, bf16=True)\n",
    ],
)
def test_negatives(src):
    assert not lint(src, CODE)


def _check_tree(root, name="train.py"):
    return [d for d in check_paths([str(root / name)], select=[CODE])]


@pytest.mark.parametrize(
    "ds, flags, expected",
    [
        ({"fp16": {"enabled": True}}, "bf16=True", ["fp16"]),  # ds fp16 on, TrainingArguments fp16 off
        ({"fp16": {"enabled": "true"}}, "fp16=True", ["fp16"]),  # a string is never True
        ({"bf16": {"enabled": False}}, "bf16=True", ["bf16"]),
        ({"fp16": {"enabled": "auto"}, "bf16": {"enabled": "auto"}}, "bf16=True", []),
        ({"fp16": {"enabled": True}}, "fp16=True", []),
    ],
)
def test_deepspeed_config_against_training_arguments(tree, ds, flags, expected):
    root = tree({
        "train.py": f"""
        from transformers import TrainingArguments
        args = TrainingArguments("o", deepspeed="ds_config.json", {flags})
        """,
    })
    text = json.dumps(ds, indent=2)
    (root / "ds_config.json").write_text(text)
    found = _check_tree(root)
    assert [d.message.split("`")[3].split(".")[0] for d in found] == expected
    for d, name in zip(found, expected):
        assert "mismatch TrainingArguments values" in d.message
        (rel,) = d.related
        # the related location is the value of `enabled` in the JSON: its line and the value itself
        lines = text.splitlines()
        line = next(i for i in range(lines.index(f'  "{name}": {{'), len(lines)) if '"enabled"' in lines[i]) + 1
        assert rel.path.endswith("ds_config.json") and rel.span.line == line
        assert text[rel.span.start : rel.span.end] == json.dumps(ds[name]["enabled"])


def test_the_deepspeed_key_is_found_by_its_table_not_by_the_first_match_in_the_text(tree):
    root = tree({
        "train.py": """
        from transformers import TrainingArguments
        args = TrainingArguments("o", deepspeed="ds_config.json", bf16=True)
        """,
    })
    # a `"bf16": {"enabled": ...}` nested under another key comes first in the text
    text = '{\n\t"comment": {"bf16": {"enabled": true}},\n\t"bf16": {\n\t\t"enabled": false\n\t}\n}\n'
    (root / "ds_config.json").write_text(text)
    (d,) = _check_tree(root)
    assert "`bf16.enabled: false`" in d.message
    (rel,) = d.related
    assert (rel.span.line, text[rel.span.start : rel.span.end]) == (4, "false")


def test_the_command_line_switches_of_a_parser_are_the_users_to_pass():
    src = """
        from transformers import HfArgumentParser, TrainingArguments

        (training_args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
        """
    assert lint(src, CODE) == []


def test_a_switch_joined_with_a_device_test_is_the_users_and_a_default_on_parameter_is_not():
    """``fp16 and cuda`` of a parameter off by default is on only where the user turns it on
    (review 24a): next to a flag that is certainly on, the finding says so; a parameter that
    defaults to on (``fp16: bool = True``) is no switch of the user's: on in some runs."""
    src = """
        import torch
        from transformers import TrainingArguments
        def train(fp16: bool = {default}):
            cuda = torch.cuda.is_available()
            return TrainingArguments("o", fp16=fp16 and cuda, bf16=True)
        """
    switched = lint(src.format(default="False"), CODE)
    assert len(switched) == 1 and "when the user turns `fp16` on" in switched[0].message
    default_on = lint(src.format(default="True"), CODE)
    assert len(default_on) == 1 and "in some runs" in default_on[0].message


def test_one_value_compared_with_two_dtypes_is_never_both():
    src = """
        import torch
        from transformers import TrainingArguments

        compute_dtype = torch.bfloat16 if args.bf16 else torch.float16
        args = TrainingArguments("o", fp16=compute_dtype == torch.float16, bf16=compute_dtype == torch.bfloat16)
        """
    assert lint(src, CODE) == []


POPPED = """
    from transformers import TrainingArguments

    def make_args(use_bf16=True, full=False):
        extra = {{"fp16": True, "do_eval": True}}
        if {pop_test}:
            extra.pop("fp16")
        if {set_test}:
            extra["bf16"] = True
        return TrainingArguments(output_dir="out", **extra)
    """


@pytest.mark.parametrize(
    "pop_test, set_test, reported",
    [
        ("use_bf16", "use_bf16", False),  # fp16 leaves the dict exactly where bf16 comes in
        ("use_bf16", "not use_bf16", True),  # the other branch: both on where use_bf16 is off
        ("full", "use_bf16", True),  # another test: both on where use_bf16 and not full
    ],
)
def test_a_key_popped_under_the_test_that_sets_the_other_is_never_both(pop_test, set_test, reported):
    """``if use_bf16: extra.pop("fp16"); extra["bf16"] = True`` (held-out 41u's F7): the fp16
    entry reaches the call only where the test fails, the bf16 entry only where it holds."""
    found = lint(POPPED.format(pop_test=pop_test, set_test=set_test), CODE)
    assert [d.code for d in found] == (["MP102"] if reported else [])


PAIRED = """
import argparse
from trl import SFTConfig

p = argparse.ArgumentParser()
p.add_argument({first_bf16})
p.add_argument({second_bf16})
p.add_argument({first_fp16})
p.add_argument({second_fp16})
args = p.parse_args()
cfg = SFTConfig(output_dir="out", bf16=args.bf16, fp16=args.fp16)
"""
ON = '"--bf16", action="store_true"'
OFF = '"--no-bf16", dest="bf16", action="store_false"'


def _paired(on_first: bool) -> str:
    bf16 = (ON, OFF) if on_first else (OFF, ON)
    fp16 = tuple(o.replace("bf16", "fp16") for o in bf16)
    return PAIRED.format(first_bf16=bf16[0], second_bf16=bf16[1], first_fp16=fp16[0], second_fp16=fp16[1])


def test_an_option_pair_sharing_a_name_takes_the_first_options_default():
    """47b: ``--bf16`` (``store_true``) then ``--no-bf16`` (``store_false`` into the same name):
    argparse sets ``args.bf16`` from the first option's default, False, so both precisions are
    the user's opt-ins, passed together only by hand. Neither MP102 ("both default on") nor
    MP201 (bf16 set for every run). With the ``store_false`` options first, both default on."""
    assert not [d.code for d in lint(_paired(on_first=True)) if d.code in ("MP102", "MP201")]
    (d,) = lint(_paired(on_first=False), CODE)
    assert "(default on)" in d.message
    assert [x.code for x in lint(_paired(on_first=False), "MP201")] == ["MP201"]


EXPERIMENT = """
import argparse
import yaml
from transformers import TrainingArguments

p = argparse.ArgumentParser()
p.add_argument("--exp-config-path", type=str, default="")
a = p.parse_args()
with open(a.exp_config_path) as f:
    cfg = yaml.safe_load(f)["parameters"]
args = TrainingArguments(output_dir="out", bf16=cfg["bf16"], fp16=cfg["fp16"])
"""


@pytest.mark.parametrize("bf16, fp16, expected", [("true", "true", 1), ("true", "false", 0)])
def test_a_config_file_a_shipped_launch_names_on_the_command_line_is_read(tmp_path, bf16, fp16, expected):
    """47a: the run's flags come from the YAML file a shipped SLURM job passes to
    ``--exp-config-path``, which ``yaml.safe_load`` reads through ``with open(...) as f``: a
    file that sets both is the project's own run, and raises before training starts."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "exp.yaml").write_text(f"parameters:\n  lr: 0.0001\n  bf16: {bf16}\n  fp16: {fp16}\n")
    (tmp_path / "job.slurm").write_text("#!/bin/sh\npython train.py --exp-config-path configs/exp.yaml\n")
    (tmp_path / "train.py").write_text(EXPERIMENT)
    found = check_paths([str(tmp_path)], select=[CODE])
    assert len(found) == expected, [d.message for d in found]
    if expected:
        assert "both can be True" in found[0].message
