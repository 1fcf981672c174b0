"""``semantic.literal_tests``: tests of one expression against values written in the code, and
whether two sets of tests can hold together."""
import pytest

from precision_lint.semantic.literal_tests import never_together


@pytest.mark.parametrize(
    "these, those, apart",
    [
        (['opt.optim == "legacy"'], ['opt.optim == "adam"'], True),
        (['opt.fp16 and opt.optim == "legacy"'], ['opt.optim == "adam"'], True),  # a conjunct decides
        (['args.precision in ("fp16", "pure_fp16")'], ['args.precision == "amp"'], True),
        (["dtype == torch.float16"], ["dtype == torch.bfloat16"], True),
        (['args.precision in ("fp16", "amp")'], ['args.precision == "amp"'], False),  # "amp" passes both
        (['opt.optim == "legacy"'], ['cfg.optim == "adam"'], False),  # two expressions
        (['opt.optim == "legacy" or opt.force'], ['opt.optim == "adam"'], False),  # an `or` may hold either way
        (['opt.optim != "adam"'], ['opt.optim == "adam"'], True),
        (['not (opt.optim == "fusedadam")'], ['opt.optim == "fusedadam"'], True),
        (['opt.optim not in ("adam", "sgd")'], ['opt.optim in ("adam", "sgd")'], True),
        (['opt.optim not in ("adam",)'], ['opt.optim in ("adam", "sgd")'], False),  # "sgd" passes both
        (['opt.optim != "adam"'], ['opt.optim != "sgd"'], False),
        (["opt.fp16"], ['opt.optim == "adam"'], False),
        # a switch read bare and its negation (review 27d: `if args.fp16: ... else: ...`)
        (["args.fp16"], ["not (args.fp16)"], True),
        (["args.fp16"], ["args.fp16"], False),
        (["not (args.fp16)"], ["not (args.fp16)"], False),
        (["args.fp16"], ['args.fp16 == "yes"'], False),  # true and that literal at once
        (["args.fp16"], ["not (args.bf16)"], False),
        ([""], ['opt.optim == "adam"'], False),
    ],
)
def test_tests_that_accept_no_value_in_common_never_hold_together(these, those, apart):
    assert never_together(these, those) is apart
    assert never_together(those, these) is apart
