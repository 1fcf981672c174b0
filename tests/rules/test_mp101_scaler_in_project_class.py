"""MP101: a GradScaler that a project's own Trainer builds under a test of the arguments its
caller hands it (``if args.fp16 and not args.deepspeed: self.scaler = GradScaler()``) is
judged in each configuration of the caller's run, as ``TrainingArguments(fp16=...)`` is.

``args`` is a parameter: the join gives it what the call ``Trainer(args=training_args)``
passes, an instance ``HfArgumentParser`` fills from the script's command line, whose
``--fp16`` and ``--deepspeed`` are what each shipped launch passes (the defaults where it
passes none). The test is joined with the one the float16 cast runs under
(``if model_args.pre_seq_len is not None: model = model.half()``) launch by launch: a launch
that casts but passes no ``--fp16``, and one that passes ``--fp16`` with ``--deepspeed``
(DeepSpeed's own loss scaler: no GradScaler), never build the scaler and the float16 weights
together; a user passing both options by hand is not a run the project ships."""
from conftest import config, dedent, write_tree

from precision_lint.engine import Engine

TRAINER = """
    import torch
    from torch.amp import GradScaler, autocast


    class LoopTrainer:
        def __init__(self, model, args, batches=()):
            self.model = model
            self.args = args
            self.batches = batches
            self.use_amp = False
            if {test}:
                self.use_amp = True
                self.scaler = GradScaler("cuda")
            self.optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)

        def train(self):
            for batch in self.batches:
                if self.use_amp:
                    with autocast("cuda"):
                        loss = self.model(**batch).loss
                    self.scaler.scale(loss).backward()
                    self.scaler.step(self.optimizer)
                    self.scaler.update()
                else:
                    self.model(**batch).loss.backward()
                    self.optimizer.step()
                self.optimizer.zero_grad()
    """

PTUNING = """
    from dataclasses import dataclass, field
    from typing import Optional

    from transformers import AutoModel, HfArgumentParser, Seq2SeqTrainingArguments

    from loop import LoopTrainer


    @dataclass
    class PromptOptions:
        checkpoint: str = field(default="tiny-glm")
        prefix_tokens: Optional[int] = field(default=None)


    def run():
        parser = HfArgumentParser((PromptOptions, Seq2SeqTrainingArguments))
        opts, targs = parser.parse_args_into_dataclasses()
        net = AutoModel.from_pretrained(opts.checkpoint)
        if opts.prefix_tokens is not None:
            net = net.half()
        else:
            net = net.float()
        LoopTrainer(model=net, args=targs).train()


    if __name__ == "__main__":
        run()
    """

SCALED = "args.fp16 and not args.deepspeed"


def _run(tmp_path, files):
    write_tree(tmp_path, {name: dedent(text) for name, text in files.items()})
    return Engine(config(), ["MP101"], jobs=1).run_paths([str(tmp_path)]).diagnostics


def _ptuning(tmp_path, prompt_launch):
    return _run(tmp_path, {
        "loop.py": TRAINER.format(test=SCALED),
        "tune.py": PTUNING,
        "prompt.sh": prompt_launch,
        "full.sh": "deepspeed --num_gpus=4 tune.py --deepspeed ds.json --fp16 --do_train --output_dir out\n",
    })


def test_no_shipped_launch_builds_the_scaler_with_the_cast(tmp_path):
    # prompt.sh casts (`--prefix_tokens`) without `--fp16`: no scaler; full.sh passes `--fp16`
    # under DeepSpeed (`not args.deepspeed` fails) and does not cast
    assert _ptuning(tmp_path, "python3 tune.py --do_train --prefix_tokens 128 --output_dir out\n") == []


def test_a_launch_that_casts_and_passes_fp16_without_deepspeed_fails(tmp_path):
    (d,) = _ptuning(tmp_path, "python3 tune.py --do_train --prefix_tokens 128 --fp16 --output_dir out\n")
    assert d.code == "MP101" and "net.half()" in d.message
    built = [r for r in d.related if r.path.endswith("loop.py")]
    assert built and f"built when `{SCALED}`, as in the run prompt.sh (line 1) launches" in built[0].message


def test_scaler_built_by_the_callers_dataclass_default(tmp_path):
    # the caller's own options class turns fp16 on by default; no TrainingArguments anywhere
    caller = """
        from dataclasses import dataclass, field
        from typing import Optional

        from transformers import AutoModel, HfArgumentParser

        from loop import LoopTrainer


        @dataclass
        class LoopOptions:
            checkpoint: str = field(default="tiny-glm")
            learning_rate: float = field(default=1e-4)
            fp16: bool = field(default=True)
            deepspeed: Optional[str] = field(default=None)


        def run():
            (opts,) = HfArgumentParser((LoopOptions,)).parse_args_into_dataclasses()
            net = AutoModel.from_pretrained(opts.checkpoint).half()
            LoopTrainer(model=net, args=opts).train()


        if __name__ == "__main__":
            run()
        """
    (d,) = _run(tmp_path, {"loop.py": TRAINER.format(test=SCALED), "tune.py": caller})
    assert d.code == "MP101" and f"`GradScaler` (built when `{SCALED}`) in " in d.message
    # the same class with fp16 off by default, launched as shipped: no scaler in that run
    off = caller.replace("fp16: bool = field(default=True)", "fp16: bool = field(default=False)")
    assert _run(tmp_path, {"tune.py": off, "run.sh": "python tune.py --checkpoint tiny-glm\n"}) == []


def test_scaler_built_from_training_arguments_made_in_code(tmp_path):
    caller = """
        from transformers import AutoModel, TrainingArguments

        from loop import LoopTrainer


        def run():
            targs = TrainingArguments(output_dir="out", fp16=True)
            net = AutoModel.from_pretrained("tiny-glm").half()
            LoopTrainer(model=net, args=targs).train()


        if __name__ == "__main__":
            run()
        """
    (d,) = _run(tmp_path, {"loop.py": TRAINER.format(test=SCALED), "tune.py": caller})
    # the instance's fields are not read across the call: the test may hold, and is named
    built = [r for r in d.related if r.path.endswith("loop.py")]
    assert d.code == "MP101" and built and f"built when `{SCALED}`" in built[0].message


UNCONDITIONAL = TRAINER.replace(
    "            if {test}:\n                self.use_amp = True\n                self.scaler = GradScaler(\"cuda\")\n",
    "            self.use_amp = True\n            self.scaler = GradScaler(\"cuda\")\n",
)


def test_an_unconditional_scaler_still_fails(tmp_path):
    assert "{test}" not in UNCONDITIONAL
    files = {
        "loop.py": UNCONDITIONAL,
        "tune.py": PTUNING,
        "prompt.sh": "python3 tune.py --do_train --prefix_tokens 128 --output_dir out\n",
    }
    (d,) = _run(tmp_path, files)
    assert d.code == "MP101" and "`GradScaler` in " in d.message and "loop.py (line 12)" in d.message


def test_scaler_enabled_by_the_callers_switch_is_judged_per_launch(tmp_path):
    trainer = UNCONDITIONAL.replace('GradScaler("cuda")', 'GradScaler("cuda", enabled=args.fp16)')
    files = {
        "loop.py": trainer,
        "tune.py": PTUNING,
        "prompt.sh": "python3 tune.py --do_train --prefix_tokens 128 --output_dir out\n",
    }
    assert _run(tmp_path, files) == []  # the launch that casts passes no --fp16
    files["prompt.sh"] = "python3 tune.py --do_train --prefix_tokens 128 --fp16 --output_dir out\n"
    (d,) = _run(tmp_path, files)
    assert d.code == "MP101"


def test_each_caller_of_the_trainer_is_judged_in_its_own_run(tmp_path):
    # full.py hands the same Trainer arguments its launch turns `--fp16` on in, and casts
    # nothing; tune.py casts, and its launch passes no `--fp16`: neither run builds both
    full = """
        from transformers import AutoModel, HfArgumentParser, TrainingArguments

        from loop import LoopTrainer


        def run():
            (targs,) = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()
            LoopTrainer(model=AutoModel.from_pretrained("tiny-glm"), args=targs).train()


        if __name__ == "__main__":
            run()
        """
    files = {
        "loop.py": TRAINER.format(test=SCALED),
        "tune.py": PTUNING,
        "full.py": full,
        "prompt.sh": "python3 tune.py --do_train --prefix_tokens 128 --output_dir out\n",
        "full.sh": "python3 full.py --fp16 --do_train --output_dir out\n",
    }
    assert _run(tmp_path, files) == []
