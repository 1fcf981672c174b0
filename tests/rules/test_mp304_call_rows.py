"""MP304 for the table's call rows (``kind = "call"``): building transformers' own AdamW warns
from 4.16 below 4.50 ("This implementation of AdamW is deprecated ..."), unless given
``no_deprecation_warning=True``; 4.15 has no warning, 4.50 no AdamW (the import row's removal,
reported once, at the import or the qualified use, never at the call too)."""
import pytest

from conftest import config, findings_in, lint, write_tree

BUILD = """
    import torch
    from transformers import AdamW
    net = torch.nn.Linear(4, 1)
    opt = AdamW(net.parameters(), lr=1e-5)
    """


def findings(src, version):
    return lint(src, None, config(transformers_version=version))


def test_a_call_warns_on_a_4_30_pin_with_the_warning_and_the_defaults_that_differ():
    (d,) = findings(BUILD, "4.30")
    assert d.code == "MP304"
    assert "`AdamW` (`transformers.AdamW`) warns when called, from transformers 4.16 below transformers 4.50" in d.message
    assert "This implementation of AdamW is deprecated and will be removed in a future version" in d.message
    assert "torch.optim.AdamW" in d.message and "eps=1e-8, weight_decay=0.01" in d.message and "eps=1e-6, weight_decay=0.0" in d.message
    assert d.fix is None
    assert (d.span.line, d.span.col) == (4, 6)  # the callee, as written


@pytest.mark.parametrize("version", ["4.15", "4.15.0", "4.10"])
def test_silent_before_the_warning(version):
    assert findings(BUILD, version) == []


@pytest.mark.parametrize("version", ["4.16", "4.30", "4.49.0"])
def test_warned_from_4_16_below_4_50(version):
    assert [d.code for d in findings(BUILD, version)] == ["MP304"]


@pytest.mark.parametrize("value, warned", [("True", False), ("False", True)])
def test_no_deprecation_warning_silences_it(value, warned):
    src = BUILD.replace("lr=1e-5)", f"lr=1e-5, no_deprecation_warning={value})")
    assert [d.code for d in findings(src, "4.30")] == (["MP304"] if warned else [])


def test_no_deprecation_warning_through_a_dict_splat():
    src = BUILD.replace("opt = AdamW(net.parameters(), lr=1e-5)", "kw = dict(lr=1e-5, no_deprecation_warning=True)\n    opt = AdamW(net.parameters(), **kw)")
    assert findings(src, "4.30") == []
    src = BUILD.replace("opt = AdamW(net.parameters(), lr=1e-5)", "kw = dict(lr=1e-5)\n    opt = AdamW(net.parameters(), **kw)")
    assert [d.code for d in findings(src, "4.30")] == ["MP304"]


def test_a_value_or_splat_not_known_is_not_judged():
    src = """
        from transformers import AdamW
        def build(params, quiet, **options):
            return AdamW(params, no_deprecation_warning=quiet), AdamW(params, **options)
        """
    assert findings(src, "4.30") == []


@pytest.mark.parametrize("version", ["4.50", "4.57", "5.23"])
def test_the_removal_is_only_the_import_rows(version):
    """From 4.50 the import fails before any call: one MP302 at the import, none at the call."""
    found = findings(BUILD, version)
    assert [(d.code, d.span.line) for d in found] == [("MP302", 2)]
    assert "ImportError: cannot import name 'AdamW' from 'transformers'" in found[0].message


def test_a_qualified_call_is_reported_once_either_side_of_the_removal():
    src = """
        import torch, transformers
        opt = transformers.AdamW(torch.nn.Linear(4, 1).parameters())
        """
    (d,) = findings(src, "4.30")
    assert d.code == "MP304" and d.message.startswith("`transformers.AdamW` warns when called")
    (d,) = findings(src, "4.50")
    assert d.code == "MP302" and "has no attribute AdamW" in d.message


@pytest.mark.parametrize("imports, call", [
    ("from transformers import AdamW as HFAdamW", "HFAdamW"),
    ("import transformers as tr", "tr.AdamW"),
    ("from transformers.optimization import AdamW", "AdamW"),
    ("from transformers import optimization", "optimization.AdamW"),
])
def test_aliases_and_module_paths(imports, call):
    src = f"import torch\n{imports}\nopt = {call}(torch.nn.Linear(4, 1).parameters())\n"
    found = [d for d in findings(src, "4.30") if d.code == "MP304"]
    assert len(found) == 1 and found[0].span.line == 3, found
    assert f"`{call}`" in found[0].message


def test_torch_adamw_and_other_adamws_are_silent():
    src = """
        import torch
        from torch.optim import AdamW
        import bitsandbytes as bnb
        net = torch.nn.Linear(4, 1)
        a = torch.optim.AdamW(net.parameters())
        b = AdamW(net.parameters())
        c = bnb.optim.AdamW(net.parameters())
        """
    assert findings(src, "4.30") == []


def test_a_version_check_around_the_call_is_the_codes_own_compatibility():
    src = """
        import torch, transformers
        from packaging import version
        net = torch.nn.Linear(4, 1)
        if version.parse(transformers.__version__) < version.parse("4.16"):
            opt = transformers.AdamW(net.parameters())
        else:
            opt = torch.optim.AdamW(net.parameters(), eps=1e-6, weight_decay=0.0)
        """
    assert [d for d in findings(src, "4.30") if d.code == "MP304"] == []


def test_a_pinned_repository_is_told_its_pin(tmp_path):
    write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": "transformers==4.30.2\ntorch\n", "train.py": BUILD})
    (d,) = findings_in(tmp_path, ["MP302", "MP304"])
    assert d.code == "MP304" and "(transformers==4.30.2 in requirements.txt)" in d.message


def test_the_import_from_the_optimization_module_is_removed_too():
    src = "import torch\nfrom transformers.optimization import AdamW\nopt = AdamW(torch.nn.Linear(4, 1).parameters())\n"
    found = findings(src, "4.50")
    assert [(d.code, d.span.line) for d in found] == [("MP302", 2)]
    assert "cannot import name 'AdamW' from 'transformers.optimization'" in found[0].message


LM_HEAD = """
    from transformers import AutoModelWithLMHead
    model = AutoModelWithLMHead.from_pretrained("microsoft/deberta-v3-large")
    """


@pytest.mark.parametrize("version, expected", [("2.11", []), ("4.30", ["MP304"]), ("5.0", ["MP302"])])
def test_auto_model_with_lm_head(version, expected):
    """Held-out 36u's M1: its `from_pretrained` warns from 3.0 (a FutureWarning); 5.0 has no such
    class, which the import reports (once: not the call as well)."""
    found = findings(LM_HEAD, version)
    assert [d.code for d in found] == expected
    if expected == ["MP304"]:
        assert "The class `AutoModelWithLMHead` is deprecated" in found[0].message and found[0].span.line == 2
    if expected == ["MP302"]:
        assert "cannot import name 'AutoModelWithLMHead' from 'transformers'" in found[0].message and found[0].span.line == 1
