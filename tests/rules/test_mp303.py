"""MP303 deprecated-torch-cuda-amp: before/after for every spelling, and the negatives."""
import warnings

import pytest

from conftest import dedent, findings_in, fix, lint

CODE = "MP303"


@pytest.mark.parametrize(
    "before, after",
    [
        (  # through the torch module; arguments and comments kept
            """
            import torch
            scaler = torch.cuda.amp.GradScaler(
                2.0**16,  # initial scale
                enabled=True,
            )
            """,
            """
            import torch
            scaler = torch.amp.GradScaler(
                "cuda", 2.0**16,  # initial scale
                enabled=True,
            )
            """,
        ),
        (  # autocast: the old positional order (enabled, dtype, cache_enabled) becomes keywords
            """
            import torch as th
            with th.cuda.amp.autocast(True, th.float16):
                pass
            with th.cuda.amp.autocast():
                pass
            """,
            """
            import torch as th
            with th.amp.autocast("cuda", enabled=True, dtype=th.float16):
                pass
            with th.amp.autocast("cuda"):
                pass
            """,
        ),
        (  # names imported from torch.cuda.amp: the import moves to torch.amp
            """
            from torch.cuda.amp import GradScaler, autocast as ac  # amp
            scaler = GradScaler(init_scale=1024)
            with ac(dtype=dt):
                pass
            """,
            """
            from torch.amp import GradScaler, autocast as ac  # amp
            scaler = GradScaler("cuda", init_scale=1024)
            with ac("cuda", dtype=dt):
                pass
            """,
        ),
        (  # a CUDA check is not a version gate
            """
            import torch
            if torch.cuda.is_available():
                scaler = torch.cuda.amp.GradScaler()
            """,
            """
            import torch
            if torch.cuda.is_available():
                scaler = torch.amp.GradScaler("cuda")
            """,
        ),
        (  # a module alias
            """
            from torch.cuda import amp
            scaler = amp.GradScaler()
            """,
            """
            from torch import amp
            scaler = amp.GradScaler("cuda")
            """,
        ),
        (
            """
            import torch.cuda.amp as amp
            scaler = amp.GradScaler()
            """,
            """
            import torch.amp as amp
            scaler = amp.GradScaler("cuda")
            """,
        ),
        (  # custom_fwd / custom_bwd: bare and called decorators
            """
            import torch
            class F(torch.autograd.Function):
                @staticmethod
                @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
                def forward(ctx, x):
                    return x

                @staticmethod
                @torch.cuda.amp.custom_bwd
                def backward(ctx, g):
                    return g
            """,
            """
            import torch
            class F(torch.autograd.Function):
                @staticmethod
                @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)
                def forward(ctx, x):
                    return x

                @staticmethod
                @torch.amp.custom_bwd(device_type="cuda")
                def backward(ctx, g):
                    return g
            """,
        ),
        (  # the imported name is used otherwise too: the import stays, the call goes through torch
            """
            import torch
            from torch.cuda.amp import GradScaler
            scaler = GradScaler()
            assert isinstance(scaler, GradScaler)
            """,
            """
            import torch
            from torch.cuda.amp import GradScaler
            scaler = torch.amp.GradScaler("cuda")
            assert isinstance(scaler, GradScaler)
            """,
        ),
        (  # ... and torch is imported when missing
            """
            from torch.cuda.amp import custom_fwd
            helper = custom_fwd
            @custom_fwd
            def f(ctx, x):
                return x
            """,
            """
            import torch
            from torch.cuda.amp import custom_fwd
            helper = custom_fwd
            @torch.amp.custom_fwd(device_type="cuda")
            def f(ctx, x):
                return x
            """,
        ),
    ],
)
def test_fix(before, after):
    assert lint(before, CODE)
    fixed = fix(before, CODE)
    assert fixed == dedent(after)
    assert not lint(fixed, CODE)
    assert fix(fixed, CODE) == fixed  # idempotent


@pytest.mark.parametrize(
    "src",
    [
        "import torch\nscaler = torch.amp.GradScaler('cuda')\nwith torch.autocast('cuda'):\n    pass\n",
        "import torch\nwith torch.amp.autocast('cpu'):\n    pass\n",
        "from apex import amp\nmodel, opt = amp.initialize(model, opt)\n",
        "class GradScaler:\n    pass\nGradScaler()\n",  # a look-alike
        "def f(amp):\n    return amp.GradScaler()\n",  # a parameter, not the module
        # compatibility code for torch versions without torch.amp
        "import torch\nfrom accelerate.utils import is_torch_version\ndef make(**kw):\n    if is_torch_version('>=', '2.3'):\n        return torch.amp.GradScaler('cuda', **kw)\n"
        "    else:\n        return torch.cuda.amp.GradScaler(**kw)\n",
        "import torch\nif hasattr(torch, 'amp'):\n    ac = torch.amp.autocast('cuda')\nelse:\n    ac = torch.cuda.amp.autocast()\n",
    ],
)
def test_negatives(src):
    assert not lint(src, CODE)


def test_message_names_the_warning_and_the_replacement():
    (d,) = lint("import torch\ns = torch.cuda.amp.GradScaler()\n", CODE)
    assert "deprecated" in d.message and "torch.amp.GradScaler('cuda', ...)" in d.message
    assert (d.span.line, d.span.col) == (2, 4)


def test_fixed_code_runs_without_the_deprecation_warning():
    """The rewritten calls are accepted by the installed torch and no longer warn."""
    torch = pytest.importorskip("torch")
    src = """
    import torch
    from torch.cuda.amp import GradScaler, autocast
    scaler = GradScaler(init_scale=1024.0, enabled=False)
    with torch.cuda.amp.autocast(False, torch.float16, True):
        pass
    with autocast(enabled=False):
        pass
    class F(torch.autograd.Function):
        @staticmethod
        @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
        def forward(ctx, x):
            return x * 2
        @staticmethod
        @torch.cuda.amp.custom_bwd
        def backward(ctx, g):
            return g * 2
    out = F.apply(torch.ones(2))
    """
    fixed = fix(src, CODE)
    assert "torch.cuda.amp" not in fixed
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(dedent(src), "before", "exec"), {})
    assert any(issubclass(w.category, FutureWarning) for w in caught)
    namespace = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(fixed, "after", "exec"), namespace)
    assert not [w for w in caught if issubclass(w.category, FutureWarning)]
    assert not namespace["scaler"].is_enabled()
    assert torch.equal(namespace["out"], torch.full((2,), 2.0))


# --- torch.cpu.amp: deprecated with torch.cuda.amp in torch 2.4 --------------------------------------
@pytest.mark.parametrize(
    "before, after",
    [
        (
            "import torch\nwith torch.cpu.amp.autocast(True, torch.bfloat16):\n    pass\n",
            "import torch\nwith torch.amp.autocast(\"cpu\", enabled=True, dtype=torch.bfloat16):\n    pass\n",
        ),
        (
            "from torch.cpu.amp import autocast\nwith autocast():\n    pass\n",
            "from torch.amp import autocast\nwith autocast(\"cpu\"):\n    pass\n",
        ),
        (
            "import torch\nfrom torch.cpu import amp\ns = amp.GradScaler(init_scale=8.0)\n",
            "import torch\nfrom torch import amp\ns = amp.GradScaler(\"cpu\", init_scale=8.0)\n",
        ),
        (  # a CUDA and a CPU autocast in one `with`: each gets its own device
            "import torch\nwith torch.cuda.amp.autocast(**g), torch.cpu.amp.autocast(**c):\n    pass\n",
            "import torch\nwith torch.amp.autocast(\"cuda\", **g), torch.amp.autocast(\"cpu\", **c):\n    pass\n",
        ),
    ],
    ids=["positional", "imported-name", "module-alias", "both-devices"],
)
def test_torch_cpu_amp_is_rewritten_with_the_cpu_device(before, after):
    found = lint(before, CODE)
    assert found and all("torch.cpu.amp" in d.message or "torch.cuda.amp" in d.message for d in found)
    assert fix(before, CODE) == after
    assert not lint(after, CODE)


def test_a_torch_cpu_amp_message_names_the_cpu_replacement():
    (d,) = lint("import torch\nwith torch.cpu.amp.autocast():\n    pass\n", CODE)
    assert "`torch.cpu.amp.autocast` is deprecated" in d.message and "torch.amp.autocast('cpu', ...)" in d.message


def test_fixed_torch_cpu_amp_runs_without_the_deprecation_warning():
    """``torch.cpu.amp.autocast`` warns on the installed torch; the rewrite does not, and keeps
    its arguments (bf16 autocast on the CPU, as before)."""
    torch = pytest.importorskip("torch")
    src = """
    import torch
    with torch.cpu.amp.autocast(True, torch.bfloat16):
        out = torch.mm(torch.ones(2, 2), torch.ones(2, 2))
    """
    fixed = fix(src, CODE)
    assert "torch.cpu.amp" not in fixed
    for code, warns in ((dedent(src), True), (fixed, False)):
        namespace = {}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exec(compile(code, "check", "exec"), namespace)
        assert any(issubclass(w.category, FutureWarning) for w in caught) is warns
        assert namespace["out"].dtype == torch.bfloat16


# --- compatibility code for old torch: the test is read from its tree, never from its words ------
GATED = """
import importlib.metadata
import torch
from packaging import version
{setup}
if {test}:
    scaler = torch.cuda.amp.GradScaler()
"""


@pytest.mark.parametrize(
    "setup, test",
    [
        ("", "version.parse(torch.__version__) < version.parse('2.3')"),
        ("", "not version.parse(torch.__version__) >= version.parse('2.3')"),
        ("", "torch.__version__.startswith('1.')"),
        ("", "int(torch.__version__.split('.')[0]) < 2"),
        ("", "importlib.metadata.version('torch') < '2.3'"),
        ("", "not hasattr(torch.amp, 'GradScaler')"),
        ("from torch import __version__ as tv", "tv < '2.3'"),
        ("from accelerate.utils import is_torch_version", "is_torch_version('<', '2.3')"),
        ("from diffusers.utils import is_torch_version", "is_torch_version('<', '2.3')"),
        ("from transformers.utils import is_torch_greater_or_equal", "not is_torch_greater_or_equal('2.3')"),
        # a module-level constant or a function of the module that holds such a test
        ("OLD_TORCH = version.parse(torch.__version__) < version.parse('2.3')", "OLD_TORCH"),
        ("TV = tuple(int(x) for x in torch.__version__.split('.')[:2])", "TV < (2, 3)"),
        ("def new_torch():\n    return version.parse(torch.__version__) >= version.parse('2.3')", "not new_torch()"),
        ("", "torch.cuda.is_available() and not hasattr(torch.amp, 'GradScaler')"),
        ("HAS_AMP = hasattr(torch, 'amp')", "not HAS_AMP"),  # through a variable, negated where it is read
    ],
)
def test_a_branch_for_old_torch_is_compatibility_code(setup, test):
    assert lint(GATED.format(setup=setup, test=test), CODE) == []


@pytest.mark.parametrize(
    "setup, test",
    [
        ("", "args.version == 2"),  # a variable that happens to be called version
        ("", "cfg['torch_version'] == '2'"),  # a string that says so
        ("", "model.version >= 2"),
        ("", "hasattr(model, 'version')"),  # what the model has, not what torch has
        # what torch has, where the branch runs with it: every newer torch has it too
        ("", "hasattr(torch.cuda.amp, 'GradScaler')"),
        ("", "torch.cuda.is_available() and hasattr(torch.cuda, 'amp')"),
        ("", "hasattr(torch.cuda, 'is_bf16_supported') and torch.cuda.is_bf16_supported()"),
        ("HAS_AMP = hasattr(torch, 'amp')", "HAS_AMP"),
        ("def hasattr(obj, name):\n    return True", "not hasattr(torch.amp, 'GradScaler')"),  # not the builtin
        ("TORCH_GE_2 = args.new_amp", "not TORCH_GE_2"),  # a name that reads like a version test
        ("", "version.parse(transformers_version) < version.parse('4.0')"),  # another variable
        ("", "(args.amp  # torch version < 2.3\n    )"),  # a comment in the test
    ],
)
def test_a_test_that_only_mentions_versions_is_no_version_gate(setup, test):
    (d,) = lint(GATED.format(setup=setup, test=test), CODE)
    assert d.span.line == GATED.format(setup=setup, test=test).lstrip("\n").count("\n")


def test_the_builtin_hasattr_is_seen_until_the_module_binds_its_own():
    # the module's code runs top to bottom: the test above the `def hasattr` calls the builtin
    # (reaching definitions at the use; a look-up of "is the name bound anywhere" called it the
    # module's function and reported the compatibility branch)
    src = GATED.format(setup="", test="not hasattr(torch.amp, 'GradScaler')") + "def hasattr(obj, name):\n    return True\n"
    assert lint(src, CODE) == []
    # inside a function, called once the module has run, the module's own `hasattr` is seen
    inside = (
        "import torch\n"
        "def make():\n"
        "    if not hasattr(torch.amp, 'GradScaler'):\n"
        "        return torch.cuda.amp.GradScaler()\n"
        "def hasattr(obj, name):\n"
        "    return True\n"
    )
    (d,) = lint(inside, CODE)
    assert d.span.line == 4


def test_a_torch_version_helper_of_another_module(tmp_path):
    from conftest import write_tree

    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "requirements.txt": "torch>=2.4\n",
        "compat.py": """
            import torch
            from packaging.version import Version

            def torch_at_least(v):
                return Version(torch.__version__) >= Version(v)
        """,
        "train.py": """
            import torch
            from compat import torch_at_least

            if torch_at_least("2.3"):
                scaler = torch.amp.GradScaler("cuda")
            else:
                scaler = torch.cuda.amp.GradScaler()
            if torch_at_least:
                ac = torch.cuda.amp.autocast()
        """,
    })
    found = findings_in(root, [CODE])
    # the fallback for old torch is meant; the second branch tests the function itself, not torch
    assert [(d.path.rsplit("/", 1)[-1], d.span.line) for d in found] == [("train.py", 9)]


# --- the `except` fallback of a `try` that calls the torch.amp spelling ---------------------------
FALLBACK = """
import torch
from torch.amp import autocast as new_autocast


def make(device):
    try:
        {body}
    except {caught}:
        {handler}
    return scaler
"""


@pytest.mark.parametrize(
    "body, caught, handler",
    [
        # torch.amp.GradScaler exists from 2.3: where it does not, the handler runs, and there
        # torch.cuda.amp is not deprecated; where the handler's call would warn, it never runs
        ("scaler = torch.amp.GradScaler(device=device)", "(AttributeError, TypeError)", "scaler = torch.cuda.amp.GradScaler()"),
        ("scaler = torch.amp.GradScaler('cuda')", "AttributeError", "scaler = torch.cuda.amp.GradScaler()"),
        ("scaler = torch.amp.grad_scaler.GradScaler('cuda')", "Exception", "scaler = torch.cuda.amp.GradScaler()"),
        ("scaler = new_autocast('cuda')", "TypeError", "scaler = torch.cuda.amp.autocast()"),
        ("scaler = torch.autocast('cuda')", "", "scaler = torch.cuda.amp.autocast()"),
    ],
)
def test_the_except_fallback_of_the_torch_amp_spelling_is_compatibility_code(body, caught, handler):
    src = FALLBACK.format(body=body, caught=caught, handler=handler).replace("except :", "except:")
    assert lint(src, CODE) == []


@pytest.mark.parametrize(
    "body, caught, handler, line",
    [
        # the try body calls no torch.amp spelling: the handler's call runs on new torch too
        ("scaler = make_scaler(device)", "AttributeError", "scaler = torch.cuda.amp.GradScaler()", 9),
        # the body's torch.amp call is another entry point: the handler's is no fallback for it
        ("scaler = torch.amp.autocast('cuda')", "AttributeError", "scaler = torch.cuda.amp.GradScaler()", 9),
        # the deprecated call in the try body itself runs first, on every torch
        ("scaler = torch.cuda.amp.GradScaler()", "AttributeError", "scaler = torch.amp.GradScaler('cuda')", 7),
    ],
)
def test_a_handler_without_the_new_spelling_above_is_no_fallback(body, caught, handler, line):
    (d,) = lint(FALLBACK.format(body=body, caught=caught, handler=handler), CODE)
    assert d.span.line == line


# --- after an `if` on what torch has whose body tries the torch.amp spelling and returns ------------
TRIED = """
import torch


def make(device="cuda"):
    if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
        try:
            {tried}
        except Exception:
            {handler}
    return torch.cuda.amp.GradScaler()
"""


@pytest.mark.parametrize(
    "tried",
    [
        "return torch.amp.GradScaler(device)",
        "if device:\n                return torch.amp.GradScaler(device)\n            return torch.amp.GradScaler()",
    ],
    ids=["return", "both-branches-return"],
)
def test_the_code_after_a_tried_torch_amp_spelling_is_the_fallback(tried):
    """Review 29c: ``make_grad_scaler`` tries ``torch.amp.GradScaler`` under ``hasattr`` inside
    ``try/except Exception: pass``; from torch 2.3 the ``try`` returns, so the old spelling after
    it runs only on a torch without the new one, where it is not deprecated."""
    assert lint(TRIED.format(tried=tried, handler="pass"), CODE) == []


@pytest.mark.parametrize(
    "tried, handler",
    [
        ("scaler = torch.amp.GradScaler(device)", "pass"),  # the try does not return: the old call runs too
        ("return torch.amp.autocast(device)", "pass"),  # another entry point tried
        ("return make_scaler(device)", "pass"),  # no torch.amp spelling tried
    ],
    ids=["no-return", "other-name", "no-new-spelling"],
)
def test_a_try_that_may_fall_through_on_new_torch_is_no_fallback(tried, handler):
    (d,) = lint(TRIED.format(tried=tried, handler=handler), CODE)
    assert d.span.line == 10  # the old spelling after the `if`


def test_a_reference_called_elsewhere_is_reported_without_a_fix():
    """`autocast = torch.cuda.amp.autocast if use_fp16 else nullcontext` entered as `with
    autocast():` warns at each entry on torch >= 2.4; the reference is reported, with no fix
    (`torch.amp.autocast` wants the device first; the callers' arguments are elsewhere)."""
    src = """
        from contextlib import nullcontext
        import torch


        def step(model, x, use_fp16):
            autocast = torch.cuda.amp.autocast if use_fp16 else nullcontext
            scaler = torch.cuda.amp.GradScaler()
            with autocast():
                return model(x), scaler


        def pick(precision):
            if precision == "amp":
                return torch.cuda.amp.autocast
            if isinstance(precision, torch.cuda.amp.GradScaler):
                return None
            return torch.amp.autocast
        """
    found = lint(src, CODE)
    assert [(d.span.line, d.fix is None) for d in found] == [(6, True), (7, False), (14, True)]
    assert "no fix: a reference, called elsewhere; `functools.partial(torch.amp.autocast, 'cuda')`" in found[0].message
    fixed = fix(src, CODE)
    assert "torch.amp.GradScaler(\"cuda\")" in fixed and fixed.count("torch.cuda.amp.autocast") == 2


@pytest.mark.parametrize(
    "src",
    [
        "import torch\nfactory = torch.amp.autocast if hasattr(torch.amp, 'autocast') else torch.cuda.amp.autocast\nfactory()\n",
        "import torch\nalias = torch.cuda.amp.autocast\n",  # never called here: no use
        "import torch\ndef f(s):\n    return isinstance(s, torch.cuda.amp.GradScaler) or type(s) is torch.cuda.amp.GradScaler\n",
    ],
)
def test_references_that_call_nothing_deprecated_are_not_reported(src):
    assert lint(src, CODE) == []


# --- a README's requirements list states the torch the code targets (review 13, S3) ----------------
AMP_TRAIN = """
    import torch

    scaler = torch.cuda.amp.GradScaler()
    with torch.cuda.amp.autocast(dtype=torch.float16):
        pass
"""


def _project_findings(tmp_path, readme):
    from conftest import write_tree

    root = write_tree(tmp_path, {".git/HEAD": "", "README.md": readme, "train.py": AMP_TRAIN})
    return findings_in(root, [CODE])


def test_a_listed_torch_release_before_the_warning_is_not_reported(tmp_path):
    """``* PyTorch 2.0`` under "### Requirements": the 2.0 series, where nothing warns (from
    2.4) and torch.amp.GradScaler does not exist (from 2.3): as ``pip install torch==2.0.1``."""
    assert _project_findings(tmp_path, "# ssl\n\n### Requirements\n* Python 3.8 (or newer)\n* PyTorch 2.0\n* torchvision\n") == []


def test_a_listed_torch_floor_is_reported_without_the_fix_it_predates(tmp_path):
    """``* PyTorch 2.0 (or newer)``: a floor. Newer releases warn, so both calls are reported;
    the GradScaler fix is withheld (torch.amp.GradScaler is new in 2.3), autocast's is not."""
    found = _project_findings(tmp_path, "# ssl\n\n## Requirements\n- PyTorch 2.0 (or newer)\n")
    assert [(d.span.line, d.fix is None) for d in found] == [(3, True), (4, False)]
    assert "does not exist before torch 2.3, which PyTorch 2.0 (or newer) in the requirements list in README.md allows" in found[0].message


@pytest.mark.parametrize(
    "readme",
    [
        "# ssl\n\nWe used PyTorch 2.0 for the paper.\n",  # prose, not a list
        "# ssl\n\n## News\n- PyTorch 2.0 support added\n- torch 2.0\n",  # a list of another section
        "# ssl\n\n## Requirements\n- PyTorch 1.13 or 2.0\n- CUDA 11.8\n",  # two versions; another library's
    ],
    ids=["prose", "news-list", "alternatives"],
)
def test_a_readme_that_lists_no_torch_version_leaves_the_newest(tmp_path, readme):
    assert [d.fix is None for d in _project_findings(tmp_path, readme)] == [False, False]


def test_a_call_through_a_variable_that_may_hold_another_callable_gets_no_fix():
    """``ctx = suppress`` unless AMP is on, then ``torch.cuda.amp.autocast``: ``with ctx():`` warns
    where AMP is on, and rewriting it to ``torch.amp.autocast("cuda")`` would turn the fp32 run
    into an fp16 one."""
    src = """
        from contextlib import suppress
        import torch

        def evaluate(model, x, amp):
            ctx = suppress
            if amp:
                ctx = torch.cuda.amp.autocast
            with ctx():
                return model(x)
        """
    (d,) = lint(src, CODE)
    assert d.fix is None and "called through the variable `ctx`" in d.message
    assert fix(src, CODE) == dedent(src)


def test_device_type_given_to_the_cuda_autocast_fails_on_every_torch():
    """Review 32: ``torch.cuda.amp.autocast(device_type="cuda", ...)`` raises TypeError (it takes
    ``enabled``, ``dtype``, ``cache_enabled``): the finding says so, and the fix calls
    ``torch.amp.autocast`` with the arguments as written (a positional "cuda" before the keyword
    would be a second value for it)."""
    import torch

    src = "import torch\nwith torch.cuda.amp.autocast(device_type='cuda', dtype=torch.float16):\n    pass\n"
    (d,) = lint(src, "MP303")
    assert "TypeError" in d.message and "device_type" in d.message
    fixed = fix(src, "MP303")
    assert "with torch.amp.autocast(device_type='cuda', dtype=torch.float16):" in fixed
    with pytest.raises(TypeError, match="device_type"):
        torch.cuda.amp.autocast(device_type="cuda", dtype=torch.float16)


def test_a_call_in_a_branch_no_run_takes_is_not_reported():
    """Held-out review 39u: ``if mode == "amp":`` of a ``mode = "fp32"`` nothing changes never runs
    its ``torch.cuda.amp.autocast()``, so it never warns; the GradScaler made on every run does,
    and a comment between a callee and its ``(`` does not move where the device goes."""
    src = """
        import torch
        real = torch.cuda.amp.GradScaler (  # spaced
            enabled=True)
        mode = "fp32"
        def train(net, x):
            if mode == "amp":
                with torch.cuda.amp.autocast():
                    return net(x)
            return net(x)
        """
    found = lint(src, CODE)
    assert [d.span.line for d in found] == [2]
    assert 'real = torch.amp.GradScaler (  # spaced\n    "cuda", enabled=True)' in fix(src, CODE)
    live = src.replace('mode = "fp32"', 'mode = "fp32"\n        if __name__ == "__main__":\n            mode = "amp"')
    assert [d.span.line for d in lint(live, CODE)] == [2, 9]


@pytest.mark.parametrize("tag, reported", [("22.08-py3", False), ("24.10-py3", True)])
def test_the_ngc_image_a_readme_says_the_code_ran_in_decides(tmp_path, tag, reported):
    """Held-out review 40a: "All the code was run in a `nvidia/pytorch:22.08-py3` container"
    states torch 1.12/1.13, where ``torch.cuda.amp`` does not warn; NGC 24.10 builds torch 2.5,
    where both calls warn."""
    found = _project_findings(tmp_path, f"# regressor\n\nAll the code was run in a `nvidia/pytorch:{tag}` container.\n")
    assert len(found) == (2 if reported else 0)
