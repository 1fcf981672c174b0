"""MP402 fp16-overflowing-constant: positives with fixes, report-only shapes, negatives."""
import pytest

from conftest import dedent, fix, lint

CODE = "MP402"

MODEL = """
import torch
from torch import nn

class Attention(nn.Module):
    def forward(self, q, k, mask):
        scores = q @ k.transpose(-1, -2)
        {line}
        return scores.softmax(-1)
"""


@pytest.mark.parametrize(
    "before, after",
    [
        (  # model code in a run with fp16 autocast (in another function of the file)
            MODEL.format(line="scores = scores.masked_fill(mask, -1e9)  # hide padding")
            + "\ndef train(model, x):\n    with torch.autocast('cuda', dtype=torch.float16):\n        return model(x)\n",
            MODEL.format(line="scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)  # hide padding")
            + "\ndef train(model, x):\n    with torch.autocast('cuda', dtype=torch.float16):\n        return model(x)\n",
        ),
        (  # in-place, a keyword value, a half model
            MODEL.format(line="scores.masked_fill_(mask, value=-1e20)") + "\nmodel = Attention().half()\n",
            MODEL.format(line="scores.masked_fill_(mask, value=torch.finfo(scores.dtype).min)") + "\nmodel = Attention().half()\n",
        ),
        (  # a positive constant becomes .max; a module constant is replaced at the use
            MODEL.format(line="scores = torch.masked_fill(scores, mask, BIG)")
            + "\nBIG = 1e9\nscaler = torch.amp.GradScaler('cuda')\n",
            MODEL.format(line="scores = torch.masked_fill(scores, mask, torch.finfo(scores.dtype).max)")
            + "\nBIG = 1e9\nscaler = torch.amp.GradScaler('cuda')\n",
        ),
        (  # torch.where and subscript assignment inside a CUDA autocast region (default dtype: fp16)
            """
            import torch as th
            def run(x, m):
                with th.autocast("cuda"):
                    y = x @ x
                    y = th.where(m, y, -1e10)
                    y[m] = -1e20
                return y
            """,
            """
            import torch as th
            def run(x, m):
                with th.autocast("cuda"):
                    y = x @ x
                    y = th.where(m, y, th.finfo(y.dtype).min)
                    y[m] = th.finfo(y.dtype).min
                return y
            """,
        ),
        (  # an explicitly float16 tensor; torch imported by the fix when missing
            """
            from torch import zeros, float16
            s = zeros(4, dtype=float16)
            s2 = s.masked_fill(s > 0, -1e9)
            """,
            """
            import torch
            from torch import zeros, float16
            s = zeros(4, dtype=float16)
            s2 = s.masked_fill(s > 0, torch.finfo(s.dtype).min)
            """,
        ),
    ],
)
def test_fix(before, after):
    assert lint(before, CODE)
    fixed = fix(before, CODE)
    assert fixed == dedent(after)
    assert not lint(fixed, CODE)
    assert fix(fixed, CODE) == fixed


def test_a_masking_helper_called_from_model_code():
    src = """
    import torch
    from torch import nn

    def hide(scores, mask):
        return scores.masked_fill(mask, -1e9)

    class Attention(nn.Module):
        def forward(self, q, k, mask):
            return hide(q @ k.transpose(-1, -2), mask).softmax(-1)

    model = Attention().half()
    """
    (d,) = lint(src, CODE)
    assert d.span.line == 5 and "model code" in d.message
    assert "torch.finfo(scores.dtype).min" in fix(src, CODE)
    # the same helper, called only from code that is not a model: silent
    assert not lint(src.replace("class Attention(nn.Module)", "class Attention"), CODE)


def test_additive_mask_and_eps_are_reported_without_a_fix():
    src = """
    import torch
    from torch import nn
    class Encoder(nn.Module):
        def forward(self, x, mask):
            ext = (1.0 - mask.to(x.dtype)) * -1e9
            return x + ext
    def normalise(x):
        h = x.half()
        n = h.norm()
        return h / (n + 1e-8)
    model = Encoder().half()
    """
    found = lint(src, CODE)
    assert [(d.span.line, d.fix) for d in found] == [(5, None), (10, None)]
    assert "-inf" in found[0].message and "adds 0" in found[1].message
    assert found[0].related and found[0].related[0].span.line == 11  # the float16 weights


def test_masked_fill_message_names_the_runtime_error():
    (d,) = lint(MODEL.format(line="scores = scores.masked_fill(mask, -1e9)") + "\nm = Attention().half()\n", CODE)
    assert "value cannot be converted to type c10::Half without overflow" in d.message


@pytest.mark.parametrize(
    "src",
    [
        # no float16 anywhere in the run: float32 masking is fine
        MODEL.format(line="scores = scores.masked_fill(mask, -1e9)"),
        # constants float16 holds, or -inf itself
        MODEL.format(line="scores = scores.masked_fill(mask, -1e4)") + "\nm = Attention().half()\n",
        MODEL.format(line="scores = scores.masked_fill(mask, float('-inf'))") + "\nm = Attention().half()\n",
        MODEL.format(line="scores = scores.masked_fill(mask, -65504.0)") + "\nm = Attention().half()\n",
        MODEL.format(line="scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)") + "\nm = Attention().half()\n",
        # an int mask times -1e9 is float32, whatever the model runs in
        MODEL.format(line="ext = (1 - mask) * -1e9") + "\nm = Attention().half()\n",
        # autocast on CPU (bfloat16) or explicitly bf16
        """
        import torch
        with torch.autocast("cpu"):
            y = torch.where(m, x @ x, -1e10)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            y = torch.where(m, x @ x, -1e10)
        """,
        # eps added to a float32 tensor; plain numbers
        "import torch\nn = x.float().norm()\ny = x / (n + 1e-8)\nz = 1e-9 + 2\nbig = 10 ** 12\n",
    ],
)
def test_negatives(src):
    assert not lint(src, CODE)


def test_the_failures_and_the_fix_on_cpu():
    torch = pytest.importorskip("torch")
    scores = torch.randn(2, 3).half()
    mask = torch.tensor([[True, False, True], [True, True, True]])
    with pytest.raises(RuntimeError, match="without overflow"):
        scores.masked_fill(mask, -1e9)
    assert torch.isnan(torch.where(mask, -1e10, scores).softmax(-1)[1]).all()  # a fully masked row
    fixed = scores.masked_fill(mask, torch.finfo(scores.dtype).min).softmax(-1)
    assert torch.isfinite(fixed).all() and fixed[0, 1] == 1


SCALED_LOOP = """
    import torch
    import torch.nn as nn


    class Scores(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8)

        def forward(self, x, mask):
            h = self.fc(x)
            w = h @ h.transpose(-1, -2)
            return w.masked_fill(mask == 0, -1e9).softmax(-1).sum()


    model = Scores().cuda()
    opt = torch.optim.AdamW(model.parameters())
    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast("cuda", dtype=DTYPE):
        loss = model(torch.randn(2, 4, 8).cuda(), torch.ones(2, 4, 4).cuda())
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
"""


def test_a_grad_scaler_beside_bf16_autocast_makes_nothing_float16():
    """bf16 holds -1e9 (float32's exponent range); the scaler beside it is redundant, not fp16."""
    assert lint(SCALED_LOOP.replace("DTYPE", "torch.bfloat16"), "MP402") == []


def test_the_same_loop_under_fp16_autocast_is_reported():
    found = lint(SCALED_LOOP.replace("DTYPE", "torch.float16"), "MP402")
    assert len(found) == 1 and "fp16 autocast" in found[0].message


FLOAT32_SCORES = """
    import torch
    import torch.nn as nn


    class Scores(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8)

        def forward(self, x, mask):
            h = self.fc(x)
            SCORES
            return scores.softmax(-1).type_as(x).sum()


    model = Scores().cuda()
    with torch.autocast("cuda", dtype=torch.float16):
        out = model(torch.randn(2, 4, 8).cuda(), torch.ones(2, 4, 4).cuda())
"""


@pytest.mark.parametrize(
    "scores",
    [
        "scores = (h @ h.transpose(-1, -2)).float()\n            scores = scores.masked_fill(mask == 0, -1e9)",
        "scores = (h @ h.transpose(-1, -2)).to(torch.float32).masked_fill(mask == 0, -1e9)",
        "bias = torch.zeros_like(mask, dtype=torch.float32).masked_fill(mask == 0, -1e9)\n            scores = h @ h.transpose(-1, -2) + bias.to(h.dtype) * 0",
        "scores = torch.where(mask == 0, (h @ h.transpose(-1, -2)).float(), -1e9)",
    ],
)
def test_a_constant_that_meets_a_float32_tensor_fits(scores):
    """Masking is not an autocast op: a tensor cast to float32 stays float32 under fp16 autocast."""
    assert lint(FLOAT32_SCORES.replace("SCORES", scores), "MP402") == []


def test_the_same_scores_without_the_cast_are_float16_under_autocast():
    src = FLOAT32_SCORES.replace("SCORES", "scores = (h @ h.transpose(-1, -2)).masked_fill(mask == 0, -1e9)")
    (d,) = lint(src, "MP402")
    assert "torch.finfo(<the tensor>.dtype).min" in d.message  # no plain name to fix with


def test_a_cast_to_float16_is_not_wide():
    src = FLOAT32_SCORES.replace("SCORES", "scores = (h @ h.transpose(-1, -2)).to(torch.float16)\n            scores = scores.masked_fill(mask == 0, -1e9)")
    assert len(lint(src, "MP402")) == 1


# --- an additive mask cast to the model's dtype: read from the tree, never from the text ---------
ADDITIVE = """
import torch
from torch import nn

class Encoder(nn.Module):
    def forward(self, x, mask, batch):
        LINES
        return x + ext

model = Encoder().half()
"""


@pytest.mark.parametrize(
    "lines",
    [
        "ext = (1.0 - mask.to(x.dtype)) * -1e9",
        "ext = (1.0 - mask.type_as(x)) * -1e9",
        "ext = (1.0 - mask.half()) * -1e9",
        # a variable the operand reads, bound to a cast
        "m = mask.to(dtype=x.dtype)\n        ext = (1.0 - m) * -1e9",
        "m = batch['mask'].to(x.dtype)\n        ext = (1.0 - m[:, None]) * -1e9",
    ],
)
def test_an_additive_mask_cast_to_the_models_dtype_is_float16(lines):
    assert len(lint(ADDITIVE.replace("LINES", lines), CODE)) == 1


@pytest.mark.parametrize(
    "lines",
    [
        # `.to(` in a comment inside the operand: the int mask is still no cast
        "ext = (\n            1 - mask  # no mask.to(x.dtype): int * -1e9 is float32\n        ) * -1e9",
        # a string key that spells a local bound to a cast
        "m = mask.to(x.dtype)\n        ext = (1 - batch['m']) * -1e9",
        # an attribute of the same name as a local bound to a cast
        "m = mask.to(x.dtype)\n        ext = (1 - batch.m) * -1e9",
        # a keyword argument of the same name
        "m = mask.to(x.dtype)\n        ext = (1 - batch.get(m=0)) * -1e9",
        # `.float()` makes a mask -1e9 fits
        "ext = (1.0 - mask.float()) * -1e9",
    ],
)
def test_words_in_an_additive_masks_text_are_no_cast(lines):
    assert lint(ADDITIVE.replace("LINES", lines), CODE) == []


# A big number stored into a mapping or a list is no tensor's value: no string indexes a tensor,
# and a name bound to a dict, list or set display (or `dict(...)`) holds no float16 values.
@pytest.mark.parametrize("store", [
    'table = {}\n                table["vocab_size"] = 128256',
    'table = {"n": dict(layers=2)}["n"]\n                table["vocab_size"] = 128256',
    "rows = dict(a=1)\n                rows[0] = 1e6",
    "rows = []\n                rows[0] = 1e6",
    "rows = [0.0 for _ in range(3)]\n                rows[0] = 1e6",
])
def test_a_mapping_or_a_list_is_not_a_float16_tensor(store):
    src = f"""
    import torch

    class Net(torch.nn.Module):
        def forward(self, x, mask):
            with torch.autocast("cuda", dtype=torch.float16):
                scores = x @ x.transpose(-1, -2)
                scores[mask] = -1e9
                {store}
                return scores
    """
    (d,) = lint(src, CODE)
    assert "`scores[...] = -1e9`" in d.message


@pytest.mark.parametrize("read, reported", [
    ("return scores.max(1).values", False),  # 47c: a max-pool over padded tokens
    ("pooled, _ = torch.max(scores, dim=1)\n                return pooled", False),
    ("return scores.amax(dim=1) + scores.topk(2, dim=1).values.sum(1)", False),
    ("return scores.softmax(-1)", True),
    ("return scores.max(1).values, scores", True),  # handed on: a softmax may read it
    ("", True),  # read nowhere below: the caller's tensor, filled in place
])
def test_a_subscript_fill_read_only_by_a_max_pads_a_max_pool(read, reported):
    """-inf, what float16 stores for -1e9, is the max's own neutral element: a row with one real
    entry pools the same finite value, and no softmax sees the row."""
    src = f"""
    import torch

    class Pool(torch.nn.Module):
        def forward(self, x, keep):
            with torch.autocast("cuda", dtype=torch.float16):
                scores = x @ x.transpose(-1, -2)
                scores[keep == 0] = -1e9
                {read}
    """
    assert len(lint(src, CODE)) == (1 if reported else 0)


RUN = "\ndef train(model, x):\n    with torch.autocast('cuda', dtype=torch.float16):\n        return model(x)\n"


def test_a_conditional_fill_is_judged_by_the_branch_float16_cannot_hold():
    # 49a: `-1e9 if self.causal else -1e4` was never read (a conditional is no constant); its
    # -1e9 branch runs whenever the test holds, whatever the scores' dtype
    src = MODEL.format(line="scores = scores.masked_fill(mask, -1e9 if mask.dim() == 4 else -1e4)") + RUN
    (d,) = lint(src, CODE)
    assert "-1e9" in d.message and d.span.col == src.splitlines()[7].index("-1e9")
    fixed = fix(src, CODE)
    assert "torch.finfo(scores.dtype).min if mask.dim() == 4 else -1e4" in fixed


@pytest.mark.parametrize("test", ["scores.dtype == torch.float16", "self.fp16", "torch.is_autocast_enabled()"])
def test_a_conditional_fill_chosen_by_precision_is_left_alone(test):
    src = MODEL.format(line=f"scores = scores.masked_fill(mask, -1e4 if {test} else -1e9)") + RUN
    assert lint(src, CODE) == []


def test_a_conditional_fill_of_fitting_constants_is_left_alone():
    src = MODEL.format(line="scores = scores.masked_fill(mask, -1e4 if mask.dim() == 4 else -3e4)") + RUN
    assert lint(src, CODE) == []
