"""MP103 and FSDP's own clip: ``model.clip_grad_norm_(max_norm)`` on a module wrapped by
``FullyShardedDataParallel`` clips the gradients as they are; under a ``ShardedGradScaler``
they are still multiplied by the loss scale until ``unscale_`` (review 21's held-out miss,
fsdp_qlora: ``--precision fp16_autocast --apply_gradient_clipping True``). A module not known
to be wrapped by FSDP is not judged by its method's name."""
from conftest import dedent, fix, lint

CODE = "MP103"

LOOP = """
import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler


def fit(net, batches):
    sharded = {wrapped}
    opt = torch.optim.AdamW(sharded.parameters(), lr=1e-4)
    scaler = ShardedGradScaler()
    for x, y in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(sharded(x), y)
        scaler.scale(loss).backward()
{unscale}        sharded.clip_grad_norm_(0.3)
        scaler.step(opt)
        scaler.update()
"""


def test_fsdps_own_clip_before_the_unscale_is_reported_and_fixed():
    source = dedent(LOOP.format(wrapped="FSDP(net)", unscale=""))
    (finding,) = lint(source, CODE)
    assert "`clip_grad_norm_` clips gradients that are still multiplied by the loss scale" in finding.message
    assert fix(source, CODE) == dedent(LOOP.format(wrapped="FSDP(net)", unscale="        scaler.unscale_(opt)\n"))


def test_after_the_unscale_nothing():
    assert lint(dedent(LOOP.format(wrapped="FSDP(net)", unscale="        scaler.unscale_(opt)\n")), CODE) == []


def test_a_module_not_known_to_be_wrapped_by_fsdp_is_not_judged_by_its_methods_name():
    assert lint(dedent(LOOP.format(wrapped="build(net)", unscale="")), CODE) == []
