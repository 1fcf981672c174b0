"""MP101: the values of one configuration file are judged together, and DeepSpeed is not torch
loss scaling.

``HfArgumentParser((Opts, TrainingArguments)).parse_json_file(json_file=a.args_file)`` fills
every field from one file: ``fp16``, ``deepspeed`` and the script's own ``train_mode`` are that
file's keys, else the fields' defaults. The option's default and each file a shipped launch
passes are configurations of their own: one file's ``fp16: true`` is never combined with
another file's ``train_mode``. A configuration that wraps the model with ``get_peft_model``
trains fp32 adapters; one that sets ``deepspeed`` hands fp16 to DeepSpeed (fp32 master weights,
its own loss scaler, no GradScaler): neither raises ``Attempting to unscale FP16 gradients``."""
import json

from conftest import config, dedent, write_tree

from precision_lint.engine import Engine

TRAIN = """
    import argparse
    from dataclasses import dataclass, field

    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments


    @dataclass
    class RunOptions:
        base: str = field(default="tiny-model")
        mode: str = field(default="adapters")  # whole | adapters


    def read_options():
        cli = argparse.ArgumentParser()
        cli.add_argument("--options_file", type=str, default="configs/adapters.json")
        given = cli.parse_args()
        opts, targs = HfArgumentParser((RunOptions, TrainingArguments)).parse_json_file(json_file=given.options_file)
        return opts, targs


    def build(opts, targs):
        weights_dtype = torch.float16 if targs.fp16 else torch.float32
        net = AutoModelForCausalLM.from_pretrained(opts.base, torch_dtype=weights_dtype)
        if opts.mode in ("adapters",):
            net = get_peft_model(net, LoraConfig(r=4))
        return net


    def run():
        opts, targs = read_options()
        Trainer(model=build(opts, targs), args=targs).train()


    if __name__ == "__main__":
        run()
    """


def _tree(tmp_path, default, launched=None):
    files = {"train.py": dedent(TRAIN), "configs/adapters.json": json.dumps(default)}
    if launched is not None:
        files["configs/whole.json"] = json.dumps(launched)
        files["launch.sh"] = "deepspeed train.py --options_file configs/whole.json\npython train.py\n"
    write_tree(tmp_path, files)
    return tmp_path


def _run(root):
    return Engine(config(), ["MP101"], jobs=1).run_paths([str(root)]).diagnostics


def test_adapters_by_default_and_the_whole_model_under_deepspeed_is_silent(tmp_path):
    # the default file leaves `mode` at "adapters": fp32 adapters train; the launched file
    # trains the whole float16 model, but under DeepSpeed (fp32 master weights)
    root = _tree(
        tmp_path,
        {"output_dir": "out", "fp16": True},
        {"output_dir": "out", "mode": "whole", "fp16": True, "deepspeed": "configs/ds.json"},
    )
    assert _run(root) == []


def test_the_default_file_training_the_whole_model_without_deepspeed_is_reported(tmp_path):
    root = _tree(tmp_path, {"output_dir": "out", "mode": "whole", "fp16": True})
    (d,) = _run(root)
    assert d.span.line == 25 and "`fp16: true` is set in configs/adapters.json (line 1)" in d.message


def test_one_launched_file_alone_training_the_whole_model_with_fp16_is_reported(tmp_path):
    # the default file trains adapters; the launched one trains the whole model with fp16 and
    # no DeepSpeed: that configuration fails, and the message names its file
    root = _tree(tmp_path, {"output_dir": "out", "fp16": True}, {"output_dir": "out", "mode": "whole", "fp16": True})
    (d,) = _run(root)
    assert "`fp16: true` is set in configs/whole.json (line 1)" in d.message


def test_fp16_of_one_file_is_never_combined_with_the_mode_of_another(tmp_path):
    # the whole model trains only under the launched file, which has no fp16; the default
    # file's fp16 trains adapters: no configuration has both
    root = _tree(tmp_path, {"output_dir": "out", "fp16": True}, {"output_dir": "out", "mode": "whole"})
    assert _run(root) == []


def test_deepspeed_in_the_training_arguments_call_is_not_torch_loss_scaling(tmp_path):
    src = """
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        net = AutoModelForCausalLM.from_pretrained("tiny-model", torch_dtype=torch.float16)
        targs = TrainingArguments(output_dir="out", fp16=True, DS)
        Trainer(model=net, args=targs).train()
        """
    write_tree(tmp_path, {"train.py": dedent(src.replace("DS", 'deepspeed="ds_config.json"'))})
    assert _run(tmp_path) == []
    write_tree(tmp_path, {"train.py": dedent(src.replace(", DS", ""))})
    assert len(_run(tmp_path)) == 1


def test_a_deepspeed_config_dict_is_deepspeed_and_an_empty_one_is_not(tmp_path):
    """``deepspeed=`` also takes the config as a dict (written in the call, built with
    ``dict(...)``, or bound to a name): the Trainer runs DeepSpeed with it. An empty dict is
    falsy, and the Trainer then runs without DeepSpeed, under torch's GradScaler."""
    src = """
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        ZERO = {"zero_optimization": {"stage": 2}, "fp16": {"enabled": "auto"}}
        net = AutoModelForCausalLM.from_pretrained("tiny-model", torch_dtype=torch.float16)
        targs = TrainingArguments(output_dir="out", fp16=True, deepspeed=DS)
        Trainer(model=net, args=targs).train()
        """
    for given in ('{"zero_optimization": {"stage": 3}}', "ZERO", "dict(zero_optimization=dict(stage=2))"):
        write_tree(tmp_path, {"train.py": dedent(src.replace("DS", given))})
        assert _run(tmp_path) == [], given
    write_tree(tmp_path, {"train.py": dedent(src.replace("DS", "{}"))})
    assert len(_run(tmp_path)) == 1


SPLIT_TRAIN = """
    import argparse

    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments

    from parts.options import RunOptions


    def read_options():
        cli = argparse.ArgumentParser()
        cli.add_argument("--options_file", type=str, default="configs/adapters.json")
        given = cli.parse_args()
        return HfArgumentParser((RunOptions, TrainingArguments)).parse_json_file(json_file=given.options_file)


    def build(opts, targs):
        load_kwargs = dict(torch_dtype=torch.float16 if targs.fp16 else torch.float32)
        net = AutoModelForCausalLM.from_pretrained(opts.base, **load_kwargs)
        if opts.mode in ("adapters",) and opts.stage in ("sft", "pretrain"):
            net = get_peft_model(net, LoraConfig(r=4))
        reference = AutoModelForCausalLM.from_pretrained(opts.base, **load_kwargs) if opts.mode == "whole" else None
        return {"net": net, "reference": reference}


    def run():
        opts, targs = read_options()
        built = build(opts, targs)
        Trainer(model=built["net"], args=targs).train()


    if __name__ == "__main__":
        run()
    """

OPTIONS = """
    from dataclasses import dataclass, field


    @dataclass
    class RunOptions:
        base: str = field(default="tiny-model")
        mode: str = field(default="adapters")  # whole | adapters
        stage: str = field(default="sft")
    """


def _split_tree(tmp_path, default):
    # `parts/` has no __init__.py: an implicit namespace package, as a script's own folder
    # makes it importable
    return write_tree(
        tmp_path,
        {"train.py": dedent(SPLIT_TRAIN), "parts/options.py": dedent(OPTIONS), "configs/adapters.json": json.dumps(default)},
    )


def test_options_of_a_namespace_package_module_wrapped_under_two_tests_and_a_returned_dict(tmp_path):
    """The fields' defaults come from `parts/options.py` (no `__init__.py`), the wrap runs under
    `mode in (...) and stage in (...)`, and the reference model returned beside the trained one
    in a dict is not trained: the default configuration trains fp32 adapters."""
    assert _run(_split_tree(tmp_path, {"output_dir": "out", "fp16": True})) == []


def test_the_same_split_program_training_the_whole_model_is_reported(tmp_path):
    (d,) = _run(_split_tree(tmp_path, {"output_dir": "out", "fp16": True, "mode": "whole"}))
    assert "`fp16: true` is set in configs/adapters.json" in d.message


def test_a_stage_that_skips_the_wrap_trains_the_loaded_weights(tmp_path):
    (d,) = _run(_split_tree(tmp_path, {"output_dir": "out", "fp16": True, "stage": "dpo"}))
    assert "`fp16: true` is set in configs/adapters.json" in d.message


# --- each shipped launch is a configuration: the options it passes hold together --------------
TUNE = """
    from dataclasses import dataclass, field
    from typing import Optional

    from transformers import AutoModelForCausalLM, HfArgumentParser, Seq2SeqTrainer, Seq2SeqTrainingArguments


    @dataclass
    class TuneOptions:
        base: str = field(default="tiny-model")
        prompt_tokens: Optional[int] = field(default=None)


    def main():
        opts, targs = HfArgumentParser((TuneOptions, Seq2SeqTrainingArguments)).parse_args_into_dataclasses()
        net = AutoModelForCausalLM.from_pretrained(opts.base)
        if opts.prompt_tokens is not None:
            net = net.half()  # prompt tuning: the base runs in half precision
        else:
            net = net.float()
        Seq2SeqTrainer(model=net, args=targs).train()


    if __name__ == "__main__":
        main()
    """


def _launched_tree(tmp_path, scripts, source=TUNE):
    return write_tree(tmp_path, {"tune.py": dedent(source), **scripts})


def test_fp16_of_one_launch_is_never_combined_with_the_cast_option_of_another(tmp_path):
    """``whole.sh`` passes ``--fp16`` (the float32 branch), ``prompt.sh`` passes
    ``--prompt_tokens`` (the half cast, no loss scaling): no shipped run has both."""
    root = _launched_tree(tmp_path, {
        "whole.sh": "torchrun --nproc-per-node 4 tune.py --output_dir out --fp16\n",
        "prompt.sh": "torchrun tune.py --output_dir out --prompt_tokens 64\n",
    })
    assert _run(root) == []


def test_one_launch_passing_both_the_cast_option_and_fp16_is_reported(tmp_path):
    root = _launched_tree(tmp_path, {
        "whole.sh": "torchrun --nproc-per-node 4 tune.py --output_dir out --fp16\n",
        "prompt.sh": "torchrun tune.py --output_dir out --prompt_tokens 64 \\\n    --fp16\n",
    })
    (d,) = _run(root)
    assert d.code == "MP101" and "prompt.sh (line 2)" in d.message


def test_deepspeed_passed_on_the_launch_command_line_is_not_torch_loss_scaling(tmp_path):
    """``--deepspeed ds.json --fp16``: the Trainer runs DeepSpeed's fp16 (fp32 master weights,
    its own loss scaler); no GradScaler unscales the half weights."""
    root = _launched_tree(tmp_path, {
        "prompt.sh": "deepspeed --num_gpus 4 tune.py --deepspeed ds.json --output_dir out --prompt_tokens 64 --fp16\n",
        "ds.json": json.dumps({"fp16": {"enabled": True}}),
    })
    assert _run(root) == []
    # the same launch without DeepSpeed scales the loss of the half weights with torch's GradScaler
    (tmp_path / "prompt.sh").write_text("torchrun tune.py --output_dir out --prompt_tokens 64 --fp16\n")
    (d,) = _run(root)
    assert d.code == "MP101" and "prompt.sh (line 1)" in d.message


def test_a_switch_no_shipped_launch_passes_is_not_a_shipped_run(tmp_path):
    """An unconditional ``net.half()`` whose only launch runs DeepSpeed: ``--fp16`` without
    ``--deepspeed`` is a run by hand the project does not ship. Without any launch, the user's
    own ``--fp16`` is still the one choice that makes it fail, and is reported."""
    always_half = TUNE.replace(
        "        if opts.prompt_tokens is not None:\n            net = net.half()  # prompt tuning: the base runs in half precision\n        else:\n            net = net.float()\n",
        "        net = net.half()\n",
    )
    assert always_half != TUNE
    root = _launched_tree(tmp_path, {
        "run.sh": "deepspeed tune.py --deepspeed ds.json --output_dir out --fp16\n",
        "ds.json": json.dumps({"fp16": {"enabled": True}}),
    }, always_half)
    assert _run(root) == []
    (tmp_path / "run.sh").unlink()
    (d,) = _run(root)
    assert d.code == "MP101" and "command-line switch" in d.message
