"""A project class's own loader decides what its keywords are (MP202, MP302/MP304).

``CaptionLM.from_pretrained(path, use_flash_attention_2=True)``, where the project's class
defines ``from_pretrained(cls, path, use_flash_attention_2=False)``, passes the class's own
switch: transformers never sees it, so it is neither transformers' deprecated keyword (MP304)
nor a FlashAttention-2 load that raises ImportError (MP202), and MP202's rewrite to
``attn_implementation=`` would hand that method a keyword it does not take (review 22d's FP:
a captioning model whose switch falls back to eager attention without flash-attn). An
override that takes ``**kwargs`` and hands them to transformers' loader is still judged."""
import pytest

from conftest import findings_in, write_tree

PYPROJECT = '[project]\nname = "x"\nversion = "0"\ndependencies = ["torch==2.2.2", "transformers==4.37.1"]\n'
OWN = """\
from transformers import GPTNeoXConfig, GPTNeoXForCausalLM, GPTNeoXPreTrainedModel


class CaptionLM(GPTNeoXPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.lm = GPTNeoXForCausalLM(config)

    @classmethod
    def from_pretrained(cls, name, use_flash_attention_2: bool = False):
        config = GPTNeoXConfig.from_pretrained(name)
        config._attn_implementation = "eager"
        return cls(config)


net = CaptionLM.from_pretrained("m", use_flash_attention_2=True)
"""
FORWARDING = """\
from transformers import GPTNeoXForCausalLM


class CaptionLM(GPTNeoXForCausalLM):
    @classmethod
    def from_pretrained(cls, *args, **kwargs):
        return super().from_pretrained(*args, **kwargs)


net = CaptionLM.from_pretrained("m", use_flash_attention_2=True)
"""
INHERITED = """\
from transformers import GPTNeoXForCausalLM


class CaptionLM(GPTNeoXForCausalLM):
    pass


net = CaptionLM.from_pretrained("m", use_flash_attention_2=True)
"""
LIBRARY = """\
from transformers import AutoModelForCausalLM

net = AutoModelForCausalLM.from_pretrained("m", use_flash_attention_2=True)
"""


def _codes(tmp_path, source):
    root = write_tree(tmp_path, {".git/HEAD": "", "pyproject.toml": PYPROJECT, "captioner.py": source})
    return sorted(d.code for d in findings_in(root, ["MP202", "MP302", "MP304"]))


def test_the_projects_own_loader_switch_is_no_transformers_keyword(tmp_path):
    assert _codes(tmp_path, OWN) == []


@pytest.mark.parametrize("source", [FORWARDING, INHERITED, LIBRARY], ids=["kwargs-handed-on", "inherited", "library"])
def test_a_keyword_that_reaches_transformers_loader_is_judged(tmp_path, source):
    assert _codes(tmp_path, source) == ["MP202", "MP304"]
