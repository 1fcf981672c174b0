"""MP104 and the AdamW a Trainer builds itself: ``Trainer(model=model, args=args).train()``
with no ``optimizers=`` makes ``torch.optim.AdamW`` (``optim="adamw_torch"``) with
``eps=args.adam_epsilon`` (1e-8 by default) over the model's parameters. Over a float16 model
and without fp16 loss scaling (which raises ``Attempting to unscale FP16 gradients.`` first:
MP101), the first step writes NaN/inf into the parameters (review 25e: pykoi's reward model)."""
import pytest

from conftest import config, fix, lint

PROGRAM = """
import torch
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments

model = AutoModelForSequenceClassification.from_pretrained("gpt2", num_labels=1, torch_dtype={dtype})
args = TrainingArguments(output_dir="out"{more})
trainer = Trainer(model=model, args=args{trainer})
trainer.{run}()
"""


def _codes(dtype="torch.float16", more="", trainer="", run="train"):
    return [d.code for d in lint(PROGRAM.format(dtype=dtype, more=more, trainer=trainer, run=run), "MP104")]


UNFUSED = ', optim="adamw_torch"'


def test_the_trainers_own_adamw_over_float16_weights_is_reported():
    (d,) = lint(PROGRAM.format(dtype="torch.float16", more=UNFUSED, trainer="", run="train"), "MP104")
    assert "`Trainer`'s own `AdamW` updates the float16 parameters of `model` with the default adam_epsilon=1e-8" in d.message


@pytest.mark.parametrize("transformers, reported", [("5.23", False), ("4.54", False), ("4.53", True)])
def test_the_default_optimizer_is_fused_from_transformers_4_54_on_torch_2_8(transformers, reported):
    """48a: with no ``optim`` given, transformers 4.54 and later build torch's fused AdamW where
    torch is 2.8 or newer (here the installed 2.13): one kernel that computes in float32, where
    eps 1e-8 is no 0. Before 4.54 the default is ``adamw_torch``, which divides by float16 zeros."""
    found = lint(PROGRAM.format(dtype="torch.float16", more="", trainer="", run="train"), "MP104",
                 cfg=config(transformers_version=transformers))
    assert len(found) == (1 if reported else 0)
    assert _codes(more=', optim="adamw_torch_fused"') == []


@pytest.mark.parametrize(
    "kwargs",
    [
        {"dtype": "torch.float32"},  # float32 weights
        {"dtype": "torch.bfloat16"},  # bf16 holds 1e-8
        {"more": ", adam_epsilon=1e-4"},  # an eps float16 holds
        {"more": ', optim="adafactor"'},  # another optimizer
        {"more": ", fp16=True"},  # the unscale error comes first (MP101)
        {"more": ', deepspeed="ds.json"'},  # DeepSpeed builds its own optimizer (held-out 26: elias_garden_elixir)
        {"trainer": ", optimizers=(opt, None)"},  # the user's own optimizer, judged where it is built
        {"run": "evaluate"},  # no training: no optimizer is built
    ],
)
def test_no_finding_where_the_trainers_adamw_is_not_the_float16_one(kwargs):
    assert _codes(**kwargs) == []


def test_the_fix_gives_the_arguments_an_eps_float16_holds():
    fixed = fix(PROGRAM.format(dtype="torch.float16", more=UNFUSED, trainer="", run="train"), "MP104", unsafe=True)
    assert 'TrainingArguments(output_dir="out", optim="adamw_torch", adam_epsilon=1e-4)' in fixed


def test_a_model_the_trainers_function_binds_itself_is_not_a_later_module_level_one():
    """A notebook trains inside ``main()`` with its own ``model`` (float32), and a later cell
    loads another ``model`` in float16 at the top level for inference (review of this rule on
    25d's qlora-finetune-colab): the Trainer's ``model`` is the function's own."""
    src = """
    import torch
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

    def main():
        model = AutoModelForCausalLM.from_pretrained("m")
        opt = torch.optim.AdamW(model.parameters())
        Trainer(model=model, args=TrainingArguments(output_dir="o")).train()
        opt.step()

    main()
    model = AutoModelForCausalLM.from_pretrained("merged", torch_dtype=torch.float16)
    print(model.generate(torch.ones(1, 4, dtype=torch.long)))
    """
    import textwrap

    assert lint(textwrap.dedent(src), "MP104") == []
