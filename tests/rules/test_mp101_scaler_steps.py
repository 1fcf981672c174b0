"""MP101 and the optimizers a GradScaler steps: ``scaler.step(opt)`` unscales the gradients of
``opt``'s parameters alone, so float16 weights that another optimizer of the file trains never
meet it (held-out 40u: a course notebook halves ``net`` and trains it with plain SGD, then makes
a new float32 ``net`` with its own SGD for the GradScaler cell). Where the scaler steps the
weights' optimizer, or an optimizer made elsewhere (a parameter), it may be theirs."""
import pytest
from conftest import lint

HALF_THEN_NEW = """
    import torch
    import torch.nn as nn

    net = nn.Linear(16, 4).cuda()
    net.half()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for x in [torch.randn(8, 16, device="cuda")]:
        net(x.half()).float().sum().backward()
        opt.step()

    net = nn.Linear(16, 4).cuda()
    {second}
    scaler = torch.amp.GradScaler("cuda")
    for x in [torch.randn(8, 16, device="cuda")]:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = net(x).sum()
        scaler.scale(loss).backward()
        scaler.step({stepped})
        scaler.update()
    """


@pytest.mark.parametrize("second, stepped, reported", [
    ("opt2 = torch.optim.SGD(net.parameters(), lr=0.1)", "opt2", False),  # another optimizer, of the new net
    ("", "opt", True),  # the half net's own optimizer: unscaled
])
def test_a_scaler_that_steps_another_optimizer_leaves_the_half_weights_alone(second, stepped, reported):
    found = lint(HALF_THEN_NEW.format(second=second, stepped=stepped), "MP101")
    assert len(found) == (1 if reported else 0)


def test_a_scaler_stepping_an_optimizer_made_elsewhere_may_step_theirs():
    src = """
        import torch
        import torch.nn as nn

        def fit(net, opt, xs):
            net.half()
            opt2 = torch.optim.SGD(net.parameters(), lr=0.1)
            scaler = torch.amp.GradScaler("cuda")
            for x in xs:
                scaler.scale(net(x).float().sum()).backward()
                scaler.step(opt)
                scaler.update()
                opt2.step()

        net = nn.Linear(16, 4).cuda()
        fit(net, torch.optim.SGD(net.parameters(), lr=0.1), [torch.randn(8, 16, device="cuda")])
        """
    assert len(lint(src, "MP101")) == 1
