"""MP101 under a scaler the user switches on: ``GradScaler(enabled=args.amp)``,
``GradScaler(enabled=use_amp)``, ``enabled=cfg.fp16``. Unscaling float16 gradients fails
whenever the switch is on, so float16 weights meet it as soon as the user passes it. A
switch that no caller can turn on (``enabled=False``, only ``False`` passed, a config whose
default is off and nobody sets) is silent."""
import pytest

from conftest import findings_in, fix, lint

CODE = "MP101"

HALF_LINEAR = """
    import argparse
    import torch
    from torch import nn

    def main(use_amp):
        model = nn.Linear(8, 8).cuda().half()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        for x in [torch.randn(2, 8)]:
            scaler.scale(model(x).sum()).backward()
            scaler.step(optimizer)
            scaler.update()

    if __name__ == "__main__":
        p = argparse.ArgumentParser()
        p.add_argument("--amp", action="store_true")
        main(p.parse_args().amp)
    """


def test_a_parameter_switch_fed_by_a_command_line_option_is_a_finding():
    (d,) = lint(HALF_LINEAR, CODE)
    assert d.span.line == 6
    assert "`GradScaler(enabled=use_amp)` (line 8)" in d.message
    assert "whenever `use_amp` is on" in d.message


def test_an_option_passed_on_by_name_is_followed_to_the_parameter():
    src = HALF_LINEAR.replace('main(p.parse_args().amp)', 'args = p.parse_args()\n        main(args.amp)')
    (d,) = lint(src, CODE)
    assert "whenever `use_amp` is on" in d.message


def test_the_only_caller_passing_false_is_silent():
    src = HALF_LINEAR.replace(
        'p = argparse.ArgumentParser()\n        p.add_argument("--amp", action="store_true")\n        main(p.parse_args().amp)',
        "main(False)",
    )
    assert "main(False)" in src
    assert lint(src, CODE) == []


def test_a_literal_false_stays_silent():
    src = HALF_LINEAR.replace("enabled=use_amp", "enabled=False")
    assert lint(src, CODE) == []


def test_a_switch_that_checks_the_parameters_dtype_stays_silent():
    src = HALF_LINEAR.replace(
        "enabled=use_amp", "enabled=use_amp and not any(p.dtype == torch.float16 for p in model.parameters())"
    )
    assert lint(src, CODE) == []


def test_float32_weights_under_the_switch_are_the_correct_set_up():
    src = HALF_LINEAR.replace(".cuda().half()", ".cuda()")
    assert lint(src, CODE) == []


# `self.scaler = GradScaler(enabled=args.amp)` where `args` reaches the class from a parse
# the linter cannot read (an int option): the user's `--amp 1` turns it on.
CLASS_WITH_ARGS = """
    import argparse
    import torch
    from torch import nn

    class Runner:
        def __init__(self, args):
            self.model = nn.Linear(8, 8).cuda().half()
            self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
            self.scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

        def step(self, x):
            self.scaler.scale(self.model(x).sum()).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()

    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--amp", type=int, default=0)
        Runner(parser.parse_args()).step(torch.randn(2, 8))
    """


def test_an_unknown_attribute_of_an_arguments_object_is_the_users_switch():
    (d,) = lint(CLASS_WITH_ARGS, CODE)
    assert d.span.line == 7
    assert "whenever `args.amp` is on" in d.message


def test_the_fix_keeps_float32_weights():
    out = fix(CLASS_WITH_ARGS, CODE)
    assert "nn.Linear(8, 8).cuda().float()" in out
    assert lint(out, CODE) == []


# `enabled=cfg.fp16` of a config dataclass: what the callers build decides.
CONFIG_OBJECT = """
    from dataclasses import dataclass
    import torch
    from transformers import AutoModelForCausalLM

    @dataclass
    class RunConfig:
        fp16: bool = False
        lr: float = 1e-4

    def train(cfg):
        model = AutoModelForCausalLM.from_pretrained("m", dtype=torch.float16)
        optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
        scaler = torch.amp.GradScaler("cuda", enabled=cfg.fp16)
        for batch in []:
            scaler.scale(model(**batch).loss).backward()
            scaler.step(optimizer)
            scaler.update()

    if __name__ == "__main__":
        train(CALLER)
    """


def test_a_config_object_with_its_switch_on_is_a_finding():
    (d,) = lint(CONFIG_OBJECT.replace("CALLER", "RunConfig(fp16=True)"), CODE)
    # the one caller builds it with the switch on: the scaler is on in that run, not "whenever"
    assert d.span.line == 11 and "`GradScaler(enabled=cfg.fp16)` (line 13) turns on" in d.message
    assert "whenever" not in d.message


def test_a_config_object_left_at_its_default_off_is_silent():
    assert lint(CONFIG_OBJECT.replace("CALLER", "RunConfig()"), CODE) == []


def test_a_config_object_whose_default_is_on_is_a_finding():
    src = CONFIG_OBJECT.replace("fp16: bool = False", "fp16: bool = True").replace("CALLER", "RunConfig()")
    (d,) = lint(src, CODE)
    assert d.span.line == 11


def test_training_arguments_fed_by_an_unknown_switch_is_a_finding():
    src = """
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        def run(opts):
            model = AutoModelForCausalLM.from_pretrained("m", dtype=torch.float16)
            args = TrainingArguments(output_dir="o", fp16=opts.fp16)
            Trainer(model=model, args=args).train()
        """
    (d,) = lint(src, CODE)
    assert d.span.line == 5 and "whenever `opts.fp16` is on" in d.message


# One switch picks both: float16 weights only when `--fp16` is on, and `fp16=` follows the same
# switch. A run with it on always crashes; with it off nothing is float16 (review 19's M1).
ONE_SWITCH = """
    import argparse
    import torch
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

    p = argparse.ArgumentParser()
    p.add_argument("--fp16", action="store_true")
    a = p.parse_args()
    DTYPE
    lm = AutoModelForCausalLM.from_pretrained("base", torch_dtype=wdt)
    Trainer(model=lm, args=TrainingArguments(output_dir="o", FLAG)).train()
    """


def test_one_switch_choosing_float16_weights_and_loss_scaling_is_a_finding():
    for dtype in ("wdt = torch.float16 if a.fp16 else torch.float32", "wdt = torch.float32\n    if a.fp16:\n        wdt = torch.float16"):
        (d,) = lint(ONE_SWITCH.replace("DTYPE", dtype).replace("FLAG", "fp16=a.fp16"), CODE)
        assert "turns on fp16 loss scaling whenever `a.fp16` is on" in d.message
    fixed = fix(ONE_SWITCH.replace("DTYPE", "wdt = torch.float16 if a.fp16 else torch.float32").replace("FLAG", "fp16=a.fp16"), CODE)
    assert "torch_dtype=torch.float32 if a.fp16 else wdt" in fixed


def test_two_switches_each_the_users_need_two_choices_and_stay_silent():
    src = ONE_SWITCH.replace("DTYPE", "wdt = torch.float16 if a.half_weights else torch.float32").replace("FLAG", "fp16=a.fp16")
    src = src.replace('a = p.parse_args()', 'p.add_argument("--half_weights", action="store_true")\n    a = p.parse_args()')
    assert lint(src, CODE) == []


def test_the_switch_choosing_float16_when_off_stays_silent():
    src = ONE_SWITCH.replace("DTYPE", "wdt = torch.float32 if a.fp16 else torch.float16").replace("FLAG", "fp16=a.fp16")
    assert lint(src, CODE) == []


# The same switch read from the parsed TrainingArguments (`targs.fp16` of the parse that fills
# the Trainer's `--fp16`), the shape of scripts grown from the transformers examples.
PARSED_SWITCH = """
    import torch
    from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments

    def main():
        targs, = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
        wdt = torch.float16 if targs.fp16 else torch.float32
        lm = AutoModelForCausalLM.from_pretrained("base", torch_dtype=wdt)
        Trainer(model=lm, args=targs).train()

    main()
    """


def test_the_parsed_fp16_switch_choosing_float16_weights_is_a_finding():
    (d,) = lint(PARSED_SWITCH, CODE)
    assert "`--fp16` (a command-line switch of the `TrainingArguments` that the parser fills)" in d.message
    assert "torch_dtype=torch.float32 if targs.fp16 else wdt)" in fix(PARSED_SWITCH, CODE)  # float16 stays where --fp16 is off


def test_shipped_launches_that_never_pass_the_switch_leave_it_to_a_run_by_hand(tmp_path):
    from textwrap import dedent

    from conftest import write_tree

    def codes(launch):
        root = write_tree(tmp_path / launch.split()[-1].strip("-"), {
            ".git/HEAD": "", "train.py": dedent(PARSED_SWITCH), "run.sh": f"python train.py --output_dir o {launch}\n",
        })
        return [d.code for d in findings_in(root, [CODE])]

    assert codes("--bf16") == []
    assert codes("--fp16") == [CODE]


@pytest.mark.parametrize("on_gpu", ['device.startswith("cuda")', 'device == "cuda"', 'torch.cuda.is_available()'])
def test_a_scaler_switched_on_for_cuda_devices_is_on_for_every_gpu_run(on_gpu):
    """``GradScaler(enabled=amp and device.startswith("cuda"))`` with ``amp`` set: on every GPU
    the scaler unscales float16 gradients (review 22d's miss, read as is_available() is)."""
    src = f"""
        import torch
        from transformers import AutoModelForCausalLM

        def fit(model, device, amp=True):
            opt = torch.optim.AdamW(model.parameters(), lr=1e-5, eps=1e-4)
            scaler = torch.amp.GradScaler(enabled=amp and {on_gpu})
            loss = model(torch.ones(1, 4, dtype=torch.long, device=device)).logits.sum()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()

        model = AutoModelForCausalLM.from_pretrained("m", dtype=torch.float16).to("cuda")
        fit(model, "cuda")
        """
    (finding,) = lint(src, CODE)
    assert "Attempting to unscale FP16 gradients" in finding.message
