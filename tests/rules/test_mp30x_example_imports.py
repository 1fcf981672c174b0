"""Imports that scripts grown from the transformers examples, and modelling code copied from the
library, carry: ``send_example_telemetry`` (gone from ``transformers.utils`` in 4.57) and the
helpers of ``transformers.modeling_attn_mask_utils`` (a module 5.24 removed)."""
import pytest

from conftest import config, lint

SCRIPT = """\
from transformers.utils import check_min_version, send_example_telemetry
from transformers.modeling_attn_mask_utils import _prepare_4d_attention_mask

check_min_version("4.35.0")
"""


@pytest.mark.parametrize(
    "version, expected",
    [
        ("4.56", []),  # both still there
        ("4.57", [("MP302", 1, "send_example_telemetry")]),
        ("5.24", [("MP302", 1, "send_example_telemetry"), ("MP302", 2, "_prepare_4d_attention_mask")]),
    ],
)
def test_example_script_imports_fail_where_they_are_gone(version, expected):
    found = [d for d in lint(SCRIPT, cfg=config(transformers_version=version)) if d.code in ("MP302", "MP304")]
    assert sorted((d.code, d.span.line, d.message.split("`")[1].rsplit(".", 1)[-1]) for d in found) == expected
    if expected:
        assert "ImportError: cannot import name 'send_example_telemetry' from 'transformers.utils'" in found[0].message


def test_a_removal_under_try_is_compatibility_code():
    src = "try:\n    from transformers.utils import send_example_telemetry\nexcept ImportError:\n    send_example_telemetry = None\n"
    assert [d for d in lint(src, cfg=config(transformers_version="5.24")) if d.code == "MP302"] == []
