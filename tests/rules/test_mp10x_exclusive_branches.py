"""MP101/MP104: weights made float16 only under a test that contradicts the test the loss
scaling (or the Adam optimizer) is switched on under never meet it (review 26b: OpenNMT-py casts
to float16 only for its legacy optimizer, which keeps fp32 masters, and builds torch's Adam and
GradScaler only for the others; finetune-clip casts for ``--precision fp16`` and scales for
``--precision amp``). Tests of one option against disjoint values (``semantic.literal_tests``)."""
import pytest

from conftest import lint

LEGACY = """
import argparse
import torch

p = argparse.ArgumentParser()
p.add_argument("--optim", default="adam", choices=["adam", "legacy"])
p.add_argument("--fp16", action="store_true")
opt = p.parse_args()
model = torch.nn.Linear(16, 4).cuda()
precision = torch.float16 if (opt.fp16 and opt.optim == "{cast_for}") else torch.float32
model.to(precision)
if opt.optim == "adam":
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda") if opt.fp16 else None
else:
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    scaler = None
loss = model(torch.randn(2, 16).cuda()).sum()
scaler.scale(loss).backward()
scaler.step(optimizer)
scaler.update()
"""

PRECISION = """
import argparse
import torch

p = argparse.ArgumentParser()
p.add_argument("--precision", default="amp", choices=["amp", "fp16", "pure_fp16", "fp32"])
args = p.parse_args()
model = torch.nn.Linear(8, 8)
if args.precision in ({cast_for}):
    dtype = torch.float16
    model.to(device="cuda", dtype=dtype)
scaler = torch.amp.GradScaler("cuda") if args.precision == "amp" else None
optimizer = torch.optim.SGD(model.parameters(), lr=1e-5)
loss = model(torch.randn(2, 8).cuda()).float().mean()
scaler.scale(loss).backward()
scaler.step(optimizer)
scaler.update()
"""


@pytest.mark.parametrize("cast_for, found", [("legacy", []), ("adam", ["MP101", "MP104"])])
def test_a_cast_and_a_scaler_under_opposite_choices_of_one_option(cast_for, found):
    assert sorted(d.code for d in lint(LEGACY.format(cast_for=cast_for)) if d.code in ("MP101", "MP104")) == found


@pytest.mark.parametrize("cast_for, found", [('"fp16", "pure_fp16"', 0), ('"fp16", "amp"', 1)])
def test_a_cast_for_one_precision_and_a_scaler_chosen_by_a_conditional_expression_for_another(cast_for, found):
    assert len(lint(PRECISION.format(cast_for=cast_for), "MP101")) == found


FUSED = """
import torch

model = torch.nn.Linear(8, 8).cuda().half()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4{fused})
scaler = torch.amp.GradScaler("cuda")
loss = model(torch.randn(2, 8).cuda().half()).float().mean()
scaler.scale(loss).backward()
{unscale}scaler.step(optimizer)
scaler.update()
"""


@pytest.mark.parametrize(
    "fused, unscale, found",
    [
        (", fused=True", "", []),
        (", fused=True", "scaler.unscale_(optimizer)\ntorch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n", ["MP101"]),
        ("", "", ["MP101"]),  # (the scaler's unscale_ raises before Adam's eps matters: no MP104)
    ],
    ids=["fused", "fused-but-unscaled", "not-fused"],
)
def test_a_fused_optimizer_takes_the_scale_itself(fused, unscale, found):
    """``AdamW(fused=True)`` over float16 parameters: ``scaler.step`` hands it the scale and
    unscales nothing (``_step_supports_amp_scaling``; checked on CPU, torch 2.13), and its kernel
    computes in float32 (eps is no float16 there). An explicit ``scaler.unscale_`` still raises
    ``ValueError: Attempting to unscale FP16 gradients.`` (review 26b: FlagPerf)."""
    codes = sorted(d.code for d in lint(FUSED.format(fused=fused, unscale=unscale)) if d.code in ("MP101", "MP104"))
    assert codes == found


ELSE_BRANCH = """
import argparse
import torch

p = argparse.ArgumentParser()
p.add_argument("--optim", default="adam", choices=["adam", "fusedadam"])
opt = p.parse_args()
model = torch.nn.Linear(16, 4).cuda()
precision = torch.float16 if opt.optim == "{cast_for}" else torch.float32
model.to(precision)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
if opt.optim == "fusedadam":
    scaler = None
else:
    scaler = torch.amp.GradScaler("cuda")
scaler.scale(model(torch.randn(2, 16).cuda()).sum()).backward()
scaler.step(optimizer)
"""


@pytest.mark.parametrize("cast_for, found", [("fusedadam", 0), ("adam", 1)])
def test_a_scaler_in_the_else_branch_of_the_casts_own_test(cast_for, found):
    """The scaler is built where ``not (opt.optim == "fusedadam")``: weights made float16 only for
    ``"fusedadam"`` never meet it (OpenNMT-py's legacy FusedAdam path, in one file)."""
    assert len(lint(ELSE_BRANCH.format(cast_for=cast_for), "MP101")) == found


INLINE = """
import argparse
import torch

p = argparse.ArgumentParser()
p.add_argument("--precision", default="amp", choices=["amp", "fp32", "pure_fp16", "pure_bf16"])
args = p.parse_args()
{body}
optimizer = torch.optim.SGD(model.parameters(), lr=1e-5)
scaler = torch.amp.GradScaler("cuda") if args.precision == "amp" else None
scaler.scale(model(torch.randn(2, 8).cuda()).float().mean()).backward()
scaler.step(optimizer)
"""
IN_THE_SCOPE = """
model = torch.nn.Linear(8, 8)
if args.precision in ({cast_for}):
    model.to(device="cuda", dtype=torch.float16)
"""
THROUGH_A_FACTORY = """
def create_model(precision="fp32"):
    model = torch.nn.Linear(8, 8)
    if precision in ({cast_for}):
        model.to(device="cuda", dtype=torch.float16)
    return model

model = create_model(precision=args.precision)
"""


@pytest.mark.parametrize("body", [IN_THE_SCOPE, THROUGH_A_FACTORY], ids=["in-the-scope", "through-a-factory"])
@pytest.mark.parametrize("cast_for, found", [('"pure_fp16", "pure_bf16"', 0), ('"pure_fp16", "amp"', 1)])
def test_a_cast_statement_under_one_precision_and_a_scaler_under_another(body, cast_for, found):
    """Review 27a: open_clip's factory casts under ``precision in ("pure_fp16", ...)`` and its
    training builds the scaler for ``"amp"``; the cast's dtype is written in the call, so the
    test is the statement's, and through the factory's parameter its text is another's
    (``project.configurations.conditions_apart``: the literals of one option)."""
    src = INLINE.format(body=body.format(cast_for=cast_for))
    assert len(lint(src, "MP101")) == found


def test_tests_of_two_options_with_the_same_values_are_not_one_value():
    src = INLINE.replace(
        'args = p.parse_args()', 'p.add_argument("--cast", default="amp", choices=["amp", "pure_fp16"])\nargs = p.parse_args()'
    ).format(body=IN_THE_SCOPE.replace("args.precision", "args.cast").format(cast_for='"pure_fp16",'))
    assert len(lint(src, "MP101")) == 1
