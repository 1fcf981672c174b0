"""MP402 and what fp16 autocast certainly computes in float16.

Autocast runs matrix products (``@``, ``torch.matmul``, ``torch.einsum``, ``torch.bmm``,
``F.linear``) in float16 and returns float16. A result of one, followed through ops autocast
leaves alone (``max``/``min``, ``a - b`` of two such results, indexing, a Python number), is
float16 where an eps meets it: ``(hi - lo + 1e-8)`` adds 0 and a group of equal scores divides
by zero (NaN). A reduction autocast runs in float32 (``sum``, ``norm``), an operand of unknown
dtype, a cast to float32 or a bf16 / possibly disabled autocast leave nothing to report. Code
runs under autocast where it is written in the region or where this module calls it from one
(a function, ``self.method``, a module's ``forward`` through an instance built here).
Each test is a small program of that shape.
"""
import pytest
from conftest import lint

CODE = "MP402"

LOSS = """
import torch
from torch import nn


class Distillation(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, queries, documents, labels):
        q = self.model(queries)
        d = self.model(documents)
        scores = torch.einsum("qh,dh->qd", q, d)
        low = scores.min(dim=-1, keepdim=True).values
        high = scores.max(dim=-1, keepdim=True).values
        {eps}
        return nn.functional.kl_div(torch.log_softmax(scores, dim=-1), labels, reduction="batchmean")


def main():
    model = nn.Linear(16, 16).cuda()
    loss_fn = Distillation(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    for q, d, labels in batches:
        with {autocast}:
            loss = loss_fn(q, d, labels)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
"""

FP16 = 'torch.autocast("cuda", dtype=torch.float16)'


def _codes(eps: str, autocast: str = FP16):
    return [f.code for f in lint(LOSS.format(eps=eps, autocast=autocast), CODE)]


def test_a_named_eps_on_an_einsum_result_through_the_forward_fires():
    found = lint(LOSS.format(eps="epsilon = 1e-8\n        scores = (scores - low) / (high - low + epsilon)", autocast=FP16), CODE)
    assert [f.code for f in found] == [CODE]
    assert "einsum" in found[0].message and "1e-08" in found[0].message


def test_a_literal_eps_fires():
    assert _codes("scores = (scores - low) / (high - low + 1e-8)") == [CODE]


def test_cuda_autocast_of_torch_cuda_amp_fires():
    assert _codes("scores = (scores - low) / (high - low + 1e-8)", "torch.cuda.amp.autocast()") == [CODE]


@pytest.mark.parametrize(
    "eps",
    [
        "scores = scores / (scores.sum(dim=-1, keepdim=True) + 1e-8)",  # sum: float32 under autocast
        "scores = scores / (scores.norm(dim=-1, keepdim=True) + 1e-8)",  # norm: float32
        "scores = scores.float()\n        scores = scores / (scores.max() - scores.min() + 1e-8)",  # cast first
        "scores = scores / (high - labels + 1e-8)",  # an operand of unknown dtype may promote
        "epsilon = 1e-8 if labels is None else 1e-4\n        scores = scores / (high - low + epsilon)",  # not one constant
        "scores = scores / (high - low + 1e-4)",  # float16 holds 1e-4
    ],
)
def test_what_is_not_certainly_float16_or_fits_is_silent(eps):
    assert _codes(eps) == []


@pytest.mark.parametrize(
    "autocast",
    [
        'torch.autocast("cuda", dtype=torch.bfloat16)',  # bf16 holds 1e-8
        'torch.autocast("cpu")',  # CPU autocast is bf16
        'torch.autocast("cuda", enabled=use_amp)',  # may be off (no claim about the runs where it is on)
    ],
)
def test_a_region_that_is_not_certainly_fp16_is_silent(autocast):
    program = "use_amp = False\n" + LOSS
    assert [f.code for f in lint(program.format(eps="scores = (scores - low) / (high - low + 1e-8)", autocast=autocast), CODE)] == []


def test_no_autocast_around_any_call_is_silent():
    program = LOSS.replace("        with {autocast}:\n            loss = loss_fn(q, d, labels)", "        loss = loss_fn(q, d, labels)")
    assert [f.code for f in lint(program.format(eps="scores = (scores - low) / (high - low + 1e-8)"), CODE)] == []


def test_an_instance_of_another_class_does_not_run_this_forward():
    program = LOSS.replace("loss_fn = Distillation(model)", "loss_fn = nn.MSELoss()")
    assert [f.code for f in lint(program.format(eps="scores = (scores - low) / (high - low + 1e-8)", autocast=FP16), CODE)] == []


HELPER = """
import torch


def normalized(q, k):
    scores = q @ k.transpose(-1, -2)
    return scores / (scores.amax(-1, keepdim=True) - scores.amin(-1, keepdim=True) + 1e-8)


def step(q, k):
    return normalized(q, k).mean()


def train(batches):
    for q, k in batches:
        with torch.autocast("cuda"):
            loss = step(q, k)
        loss.backward()
"""


def test_a_helper_called_through_another_under_autocast_fires():
    found = lint(HELPER, CODE)
    assert [f.code for f in found] == [CODE]
    assert "`q @ k.transpose(-1, -2)`" in found[0].message


def test_masking_a_product_computed_under_autocast_raises():
    program = HELPER.replace(
        "    return scores / (scores.amax(-1, keepdim=True) - scores.amin(-1, keepdim=True) + 1e-8)",
        "    return scores.masked_fill(k.sum(-1) == 0, -1e9)",
    )
    found = lint(program, CODE)
    assert [f.code for f in found] == [CODE]
    assert "raises" in found[0].message


def test_an_instance_eps_added_to_a_product_in_a_forward_run_under_autocast():
    """Review 27c (T2T-ViT): the model is built moved (``.cuda()``) and called under fp16
    autocast; its ``forward`` adds ``self.epsilon = 1e-8`` to a float16 einsum."""
    src = """
import torch
from torch import nn

class Performer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.kqv = nn.Linear(dim, dim)
        self.epsilon = {eps}

    def forward(self, x):
        q = self.kqv(x)
        d = torch.einsum("bti,bi->bt", q, q.sum(dim=1)).unsqueeze(2)
        return q / (d + self.epsilon)

model = Performer(64).cuda()
with torch.autocast("cuda", dtype=torch.float16):
    y = model(torch.randn(2, 16, 64, device="cuda"))
"""
    (d,) = [d for d in lint(src.format(eps="1e-8")) if d.code == "MP402"]
    assert "`+ self.epsilon` (1e-08) adds 0 in float16" in d.message
    assert [d for d in lint(src.format(eps="1e-4")) if d.code == "MP402"] == []
