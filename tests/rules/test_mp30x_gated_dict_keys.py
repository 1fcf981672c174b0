"""A key put in a **kwargs dict only under a version check of its own (``if version.parse(
transformers.__version__) <= version.parse("4.36"): attn["use_flash_attention_2"] = True``) is
written for the versions that take it, whatever the call's other keys are (FlagEmbedding's
activation beacon, seen when dicts that start empty became readable); the same key set
unconditionally is reported."""
import pytest

from conftest import lint

SRC = """
import transformers
from packaging import version
from transformers import AutoModelForCausalLM

attn = {{}}
extra = {{}}
if scale is not None:
    extra["max_position_embeddings"] = scale
{gate}attn["use_flash_attention_2"] = True
model = AutoModelForCausalLM.from_pretrained("m", **attn, **extra)
"""


@pytest.mark.parametrize(
    "gate, found",
    [('if version.parse(transformers.__version__) <= version.parse("4.36"):\n    ', 0), ("", 1)],
    ids=["version-gated", "unconditional"],
)
def test_a_key_set_under_its_own_version_check_is_written_for_those_versions(gate, found):
    hits = [d for d in lint(SRC.format(gate=gate)) if d.code in ("MP302", "MP304") and "use_flash_attention_2" in d.message]
    assert len(hits) == found
