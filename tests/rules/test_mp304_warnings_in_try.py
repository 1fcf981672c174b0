"""MP304: a deprecation warns inside a ``try``. A call in a ``try`` whose handler catches the
``TypeError`` a removed keyword raises is written for the versions that removed it; a keyword
that only warns on the versions the code targets raises nothing, so the handler changes
nothing: ``from_pretrained(..., torch_dtype=...)`` in ``try: ... except Exception:`` still
prints "`torch_dtype` is deprecated! Use `dtype` instead!" on transformers 4.56 and later
(review 21d's misses: a checkpoint loader with a fallback, and peft's ``AutoPeftModelForCausalLM``,
which hands the keyword to transformers)."""
import textwrap

import pytest
from conftest import findings_in, write_tree



def findings(tmp_path, body, pin="transformers==4.57.1"):
    source = "import torch\nfrom transformers import AutoModelForCausalLM\nfrom peft import AutoPeftModelForCausalLM\n\n\n" + textwrap.dedent(body)
    root = write_tree(tmp_path / "p", {".git/HEAD": "", "requirements.txt": f"{pin}\npeft==0.13.0\n", "load.py": source})
    return [d.code for d in findings_in(root, ["MP302", "MP304"])]


@pytest.mark.parametrize("body", [
    """\
    def load(folder):
        try:
            return AutoModelForCausalLM.from_pretrained(folder, torch_dtype=torch.float16)
        except Exception as err:
            print("could not load", err)
    """,
    """\
    def load(folder):
        return AutoPeftModelForCausalLM.from_pretrained(folder, torch_dtype=torch.float16)
    """,
], ids=["try-except-exception", "peft-auto-model"])
def test_a_warning_is_told_wherever_the_call_runs(tmp_path, body):
    assert findings(tmp_path, body) == ["MP304"]


@pytest.mark.parametrize("body", [
    """\
    def load(folder):
        try:
            return AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float16)
        except TypeError:
            return AutoModelForCausalLM.from_pretrained(folder, torch_dtype=torch.float16)
    """,
    """\
    import transformers
    from packaging import version

    def load(folder):
        if version.parse(transformers.__version__) < version.parse("4.56"):
            return AutoModelForCausalLM.from_pretrained(folder, torch_dtype=torch.float16)
        return AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float16)
    """,
], ids=["fallback-in-the-handler", "version-check"])
def test_code_written_for_the_versions_that_warn_is_left_alone(tmp_path, body):
    assert findings(tmp_path, body) == []
