"""MP201 reports *hard-coded* bf16. bf16 that only follows the user's own switch (an option that
is off by default, an arguments or config object, a parameter) is not hard-coded; a switch
whose default selects bf16 is."""
import pytest

from conftest import lint

CODE = "MP201"
HEAD = """
import argparse
import contextlib
import torch
from transformers import AutoModelForCausalLM, HfArgumentParser, TrainingArguments
parser = argparse.ArgumentParser()
"""


@pytest.mark.parametrize(
    "body",
    [
        # diffusers' shape: the weights dtype mirrors Accelerate's mixed precision
        """
        weight_dtype = torch.float32
        if accelerator.mixed_precision == "fp16":
            weight_dtype = torch.float16
        elif accelerator.mixed_precision == "bf16":
            weight_dtype = torch.bfloat16
        vae.to("cuda", dtype=weight_dtype)
        """,
        # a store_true option
        """
        parser.add_argument("--bf16", action="store_true")
        args = parser.parse_args()
        dtype = torch.bfloat16 if args.bf16 else torch.float32
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=dtype)
        """,
        # the Trainer's own flag, parsed from the command line
        """
        (training_args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
        model = AutoModelForCausalLM.from_pretrained("m")
        if training_args.bf16:
            model.to(torch.bfloat16)
        """,
        # a parameter: the caller decides
        """
        def load(name, use_bf16):
            return AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.bfloat16 if use_bf16 else torch.float32)
        """,
        # through a variable
        """
        parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
        args = parser.parse_args()
        wants_bf16 = cfg.mixed_precision == "bf16"
        if wants_bf16:
            model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16)
        """,
        # the autocast is one branch of a conditional expression on the switch
        """
        parser.add_argument("--bf16", action="store_true")
        args = parser.parse_args()
        amp = torch.autocast("cuda", dtype=torch.bfloat16) if args.bf16 else contextlib.nullcontext()
        with amp:
            model(inputs)
        with (torch.autocast("cuda", dtype=torch.bfloat16) if args.bf16 else contextlib.nullcontext()):
            model(inputs)
        """,
    ],
    ids=["accelerate-mixed-precision", "store-true", "training-args-flag", "parameter", "config-variable", "conditional-expression"],
)
def test_bf16_that_follows_the_users_switch_is_not_reported(body):
    import textwrap

    assert lint(HEAD + textwrap.dedent(body), CODE) == []


@pytest.mark.parametrize(
    "body",
    [
        # the option's default selects bf16
        """
        parser.add_argument("--bf16", type=bool, default=True)
        args = parser.parse_args()
        dtype = torch.bfloat16 if args.bf16 else torch.float32
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=dtype)
        """,
        # bf16 is the else-branch: chosen unless the user opts out
        """
        parser.add_argument("--fp32", action="store_true")
        args = parser.parse_args()
        dtype = torch.float32 if args.fp32 else torch.bfloat16
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=dtype)
        """,
        # a negated opt-out flag: on by default
        """
        parser.add_argument("--no_bf16", action="store_true")
        args = parser.parse_args()
        if not args.no_bf16:
            model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16)
        """,
        # a literal switch is no user choice
        """
        use_bf16 = True
        if use_bf16:
            model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16)
        """,
        # the conditional expression's other branch, or a test that is no choice of precision
        """
        parser.add_argument("--fp32", action="store_true")
        args = parser.parse_args()
        with (contextlib.nullcontext() if args.fp32 else torch.autocast("cuda", dtype=torch.bfloat16)):
            model(inputs)
        """,
        """
        with (torch.autocast("cuda", dtype=torch.bfloat16) if torch.cuda.is_available() else contextlib.nullcontext()):
            model(inputs)
        """,
    ],
    ids=["default-true", "else-branch", "negated-opt-out", "literal-switch", "conditional-else-branch", "conditional-on-cuda"],
)
def test_bf16_selected_by_default_is_still_reported(body):
    import textwrap

    assert [d.code for d in lint(HEAD + textwrap.dedent(body), CODE)] == [CODE]


def test_a_switch_about_something_else_does_not_excuse_bf16():
    import textwrap

    body = """
        def compute_loss(self, model, inputs):
            if self.args.skip_empty_batches:
                with torch.amp.autocast(device_type="cuda", dtype=torch.bfloat16):
                    return model(**inputs).loss
        """
    assert [d.code for d in lint(HEAD + textwrap.dedent(body), CODE)] == [CODE]


def test_a_libraries_own_default_config_is_not_a_users_setup(tmp_path):
    from conftest import config, write_tree

    from precision_lint.engine import Engine

    trainer = """
        from trl import GRPOConfig

        class GRPOTrainer:
            def __init__(self, model, args=None):
                if args is None:
                    args = GRPOConfig(f"{model}-GRPO")
        """
    write_tree(tmp_path, {"trl/__init__.py": "", "trl/trainer/__init__.py": "", "trl/trainer/grpo_trainer.py": trainer, "mytrainer.py": trainer})
    cfg = config(transformers_version="5.23", trl_version="1.16")
    found = Engine(cfg, [CODE], jobs=1).run_paths([str(tmp_path)]).diagnostics
    assert [d.path.rsplit("/", 1)[-1] for d in found] == ["mytrainer.py"]


def test_the_accelerators_mixed_precision_is_the_users_switch():
    import textwrap

    src = textwrap.dedent(
        """
        import argparse
        import torch
        from accelerate import Accelerator

        parser = argparse.ArgumentParser()
        parser.add_argument("--mixed_precision", default=None, choices=["no", "fp16", "bf16"])
        parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
        args = parser.parse_args()

        def main(args, vae):
            accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps, mixed_precision=args.mixed_precision)
            weight_dtype = torch.float32
            if accelerator.mixed_precision == "fp16":
                weight_dtype = torch.float16
            elif accelerator.mixed_precision == "bf16":
                weight_dtype = torch.bfloat16
            vae.to(accelerator.device, dtype=weight_dtype)
        """
    )
    from conftest import lint as lint_

    assert lint_(src, CODE) == []


# autocast's own `enabled=` is the branch: `autocast(dtype=torch.bfloat16, enabled=args.bf16)` is
# `autocast(dtype=torch.bfloat16) if args.bf16 else nullcontext()` (review 19b's Bert-VITS2 shape)
@pytest.mark.parametrize(
    "enabled, reported",
    [
        ("args.bf16", False),  # a store_true option: off unless the user passes it
        ("cfg.use_bf16", False),  # a config object's switch, filled from the user's file
        ("False", False),  # never on
        ("True", True),
        ("args.on_by_default", True),  # an option whose default turns it on
        ("torch.cuda.is_available()", True),  # on wherever there is a GPU: no choice of the user's
        # on only where the weights are bf16 already: their load chose bf16, not this region
        # (transformers' esmfold2: `use_amp = next(self.esmc.parameters()).dtype == torch.bfloat16`)
        ("next(model.parameters()).dtype == torch.bfloat16", False),
        ("next(model.parameters()).dtype != torch.bfloat16", True),
    ],
)
def test_autocast_enabled_by_the_users_switch_is_the_users_bf16(enabled, reported):
    import textwrap

    body = f"""
        import json
        parser.add_argument("--bf16", action="store_true")
        parser.add_argument("--on_by_default", type=bool, default=True)
        args = parser.parse_args()

        class Cfg:
            def __init__(self, path):
                self.__dict__.update(json.load(open(path)))

        cfg = Cfg(args.config)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled={enabled}):
            model(inputs)
        with torch.cuda.amp.autocast(enabled={enabled}, dtype=torch.bfloat16):
            model(inputs)
        """
    found = [d.code for d in lint(HEAD + textwrap.dedent(body), CODE)]
    assert found == ([CODE, CODE] if reported else [])


METHOD = """
import argparse
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def to_bf16(self):
        self.proj.to(torch.bfloat16)


parser = argparse.ArgumentParser()
parser.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
parser.add_argument("--bf16", type=bool, default=True)
args = parser.parse_args()
model = Net().cuda()
{calls}
optimizer = torch.optim.AdamW(model.parameters())
"""


@pytest.mark.parametrize(
    "calls, reported",
    [
        ('if args.precision == "bf16":\n    model.to_bf16()', False),  # an opt-in the user passes
        ("if torch.cuda.is_bf16_supported():\n    model.to_bf16()", False),  # where bf16 is native
        ("model.to_bf16()", True),  # always
        ('if args.precision == "bf16":\n    model.to_bf16()\nmodel.to_bf16()', True),  # one call always
        ("if args.bf16:\n    model.to_bf16()", True),  # a switch on by default
    ],
    ids=["opt-in", "capability", "unconditional", "one-call-unconditional", "default-on"],
)
def test_a_method_the_code_calls_only_where_the_user_asks_for_bf16_is_the_users_bf16(calls, reported):
    """The bf16 cast inside a model's own conversion method (glide's ``convert_to_bf16``) runs
    only where a call of the method does: when every call is under the user's opt-in (or a
    capability check), the cast is the user's choice, as a cast written under that test is. A
    method called once unconditionally, or under a switch on by default, still casts on every
    GPU. The instance is found through ``Net().cuda()`` (``.cuda()`` returns the module)."""
    found = [d.code for d in lint(METHOD.format(calls=calls), CODE)]
    assert found == ([CODE] if reported else [])


def test_a_test_of_an_options_choice_is_the_users_opt_in():
    """``bf16=args.dtype == "bf16"`` with ``choices=["fp16", "bf16", "fp32"]`` and the default
    "fp16": True only where the user passes ``--dtype bf16`` (review 25e), as ``dtype = torch.
    bfloat16 if args.dtype == "bf16" else ...`` is; a default of "bf16" chooses it."""
    import textwrap

    body = """
        parser.add_argument("--dtype", default="{default}", choices=["fp16", "bf16", "fp32"])
        args = parser.parse_args()
        targs = TrainingArguments(output_dir="o", bf16=args.dtype == "bf16")
        """
    assert lint(HEAD + textwrap.dedent(body.format(default="fp16")), CODE) == []
    assert [d.code for d in lint(HEAD + textwrap.dedent(body.format(default="bf16")), CODE)] == [CODE]
