"""MP201: a tokenizer, processor or feature extractor has no weights: a ``torch_dtype=`` passed
to its ``from_pretrained`` lands in its init kwargs and changes nothing on any GPU (held-out
45u: a perplexity script that passes the model's dtype to its tokenizer too). The model's own
load is judged."""
import pytest

from conftest import lint

SRC = """
import torch
from transformers import AutoModelForCausalLM, {klass}

extra = {klass}.from_pretrained("org/lm", torch_dtype=torch.bfloat16)
model = AutoModelForCausalLM.from_pretrained("org/lm", torch_dtype=torch.bfloat16).cuda()
print(model(torch.ones(1, 4, dtype=torch.long).cuda()).logits.float().mean())
"""


@pytest.mark.parametrize("klass", ["AutoTokenizer", "AutoProcessor", "LlamaTokenizerFast", "AutoFeatureExtractor"])
def test_only_the_models_load_makes_bf16_weights(klass):
    assert [d.span.line for d in lint(SRC.format(klass=klass), "MP201")] == [5]


def test_a_config_given_a_dtype_is_still_judged():
    """A config's ``torch_dtype`` is what a model loaded with it may take (``dtype="auto"``)."""
    assert [d.span.line for d in lint(SRC.format(klass="AutoModelForCausalLM"), "MP201")] == [4, 5]
