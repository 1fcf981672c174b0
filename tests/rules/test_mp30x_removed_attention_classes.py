"""An import of a name transformers removed, in a file that can run only before the removal.

``from transformers.models.llama.modeling_llama import LLAMA_ATTENTION_CLASSES`` (FSDP QLoRA
trainers that patch Llama's attention) raises ``ImportError`` from transformers 4.48, which
moved every model to one attention class. Where the project's range allows 4.48 the import is
reported (MP302); everything else in the file is judged on the versions before (its
``[[removed_module]]`` row): a ``torch_dtype=`` that warns only from 4.56 never runs where it
would (review 21's held-out: fsdp_qlora's two MP304 FPs beside its missed import)."""
import pytest
from conftest import findings_in, write_tree


SCRIPT = """\
import torch
from transformers import AutoModelForCausalLM
{imports}

def main():
    model = AutoModelForCausalLM.from_pretrained("some/llama", torch_dtype=torch.bfloat16)
    print(model)


if __name__ == "__main__":
    main()
"""
PATCHED = "from transformers.models.llama.modeling_llama import LLAMA_ATTENTION_CLASSES\n"


def findings(tmp_path, pin, imports=PATCHED):
    root = write_tree(tmp_path / "p", {".git/HEAD": "", "requirements.txt": f"{pin}\n", "train.py": SCRIPT.format(imports=imports)})
    found = findings_in(root, ["MP302", "MP304"])
    return [(d.code, d.span.line, d.message) for d in found]


def test_the_import_is_reported_and_the_rest_judged_before_the_removal(tmp_path):
    ((code, line, message),) = findings(tmp_path, "transformers")
    assert (code, line) == ("MP302", 3)
    assert "ImportError: cannot import name 'LLAMA_ATTENTION_CLASSES'" in message and "4.48" in message


def test_without_the_import_the_newest_versions_warning_is_told(tmp_path):
    assert [c for c, *_ in findings(tmp_path, "transformers", imports="")] == ["MP304"]


def test_a_pin_before_the_removal_says_nothing(tmp_path):
    assert findings(tmp_path, "transformers==4.46.0") == []


@pytest.mark.parametrize("pin, codes", [("transformers", ["MP302"]), ("transformers==4.57.1", [])])
def test_a_bitsandbytes_helper_moved_out_of_integrations(tmp_path, pin, codes):
    imports = "from transformers.integrations import get_keys_to_not_convert\n"
    script = SCRIPT.replace(", torch_dtype=torch.bfloat16", "")
    root = write_tree(tmp_path / "p", {".git/HEAD": "", "requirements.txt": f"{pin}\n", "train.py": script.format(imports=imports)})
    found = findings_in(root, ["MP302", "MP304"])
    assert [d.code for d in found] == codes


@pytest.mark.parametrize("how, error", [
    ("from transformers.modeling_utils import shard_checkpoint\n", "ImportError: cannot import name 'shard_checkpoint'"),
    ("import transformers.modeling_utils\nshard_checkpoint = transformers.modeling_utils.shard_checkpoint\n",
     "AttributeError: module transformers.modeling_utils has no attribute shard_checkpoint"),
])
def test_the_checkpoint_sharder_gone_in_4_47(tmp_path, how, error):
    root = write_tree(tmp_path / "p", {".git/HEAD": "", "requirements.txt": "transformers>=4.50\n", "export.py": how})
    (found,) = findings_in(root, ["MP302", "MP304"])
    assert found.code == "MP302" and error in found.message and "split_torch_state_dict_into_shards" in found.message


@pytest.mark.parametrize("pin, reported", [("transformers", True), ("transformers==4.52.4", False), ("transformers>=4.53", True)])
def test_every_models_attention_table_has_its_own_removal(tmp_path, pin, reported):
    """Held-out 30u: a Whisper fine-tune that patches ``WHISPER_ATTENTION_CLASSES``, gone from
    transformers 4.53 (each model moved on its own release: attention_classes.toml, read from
    the wheels)."""
    imports = "from transformers.models.whisper.modeling_whisper import WHISPER_ATTENTION_CLASSES\n"
    found = [(c, line, m) for c, line, m in findings(tmp_path, pin, imports=imports) if c == "MP302"]
    assert bool(found) == reported
    if reported:
        ((_, line, message),) = found
        assert line == 3 and "4.53" in message and "WHISPER_ATTENTION_CLASSES" in message
