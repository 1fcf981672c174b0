"""MP302 on Flax (JAX) and TensorFlow code: the table's rows are about transformers' PyTorch
classes. A Flax or TensorFlow model (``FlaxAutoModelForSeq2SeqLM``, a project class derived
from ``FlaxPreTrainedModel``) is not one: its ``.config.max_length`` or ``use_auth_token=`` is
not the PyTorch row's, and transformers 5 has no Flax or TensorFlow at all (the import fails,
not the attribute). The same reads on a PyTorch model are still reported."""
import pytest

from conftest import config, lint, write_tree

from precision_lint.engine import check_paths
from precision_lint.knowledge import framework_of

CODE = "MP302"
NEW = config(transformers_version="5.23", trl_version="1.16")

CONFIG_READS = """
    import jax
    from transformers import {cls}

    model, params = {cls}.from_pretrained("m", _do_init=False)
    max_len = model.config.max_length
    beams = model.config.num_beams
    """


def _attribute_findings(src):
    return [d for d in lint(src, CODE, NEW) if ".config." in d.message]


@pytest.mark.parametrize("cls", ["FlaxAutoModelForSeq2SeqLM", "FlaxWhisperForConditionalGeneration", "TFAutoModelForSeq2SeqLM"])
def test_the_config_of_a_flax_or_tensorflow_model_is_not_the_pytorch_rows(cls):
    assert _attribute_findings(CONFIG_READS.format(cls=cls)) == []


def test_the_same_reads_on_a_pytorch_model_are_reported():
    src = CONFIG_READS.format(cls="AutoModelForSeq2SeqLM").replace("model, params = ", "model = ")
    found = _attribute_findings(src)
    assert [d.span.line for d in found] == [5, 6]


def test_a_removed_keyword_of_a_flax_from_pretrained_is_not_the_pytorch_rows():
    src = """
        from transformers import AutoModelForCausalLM, FlaxAutoModelForCausalLM

        flax_model = FlaxAutoModelForCausalLM.from_pretrained("m", use_auth_token="t")
        torch_model = AutoModelForCausalLM.from_pretrained("m", use_auth_token="t")
        """
    found = [d for d in lint(src, CODE, NEW) if "use_auth_token" in d.message]
    assert [d.span.line for d in found] == [4]


# (a modeling module is parsed when it mentions a precision: its classes' bases are then known)
def test_a_project_flax_model_in_another_module(tmp_path):
    root = write_tree(tmp_path, {
        "speech/__init__.py": "from .modeling import FlaxSpeechModel\n",
        "speech/modeling.py": (
            "from transformers.modeling_flax_utils import FlaxPreTrainedModel\n\n"
            "class FlaxSpeechPreTrainedModel(FlaxPreTrainedModel):\n    pass\n\n"
            "class FlaxSpeechModel(FlaxSpeechPreTrainedModel):\n    \"\"\"Checkpoints hold float16 weights.\"\"\"\n"
        ),
        "run.py": (
            "from speech import FlaxSpeechModel\n\n"
            "def main():\n"
            "    student, params = FlaxSpeechModel.from_pretrained('m', _do_init=False)\n"
            "    return student.config.max_length\n\n"
            "main()\n"
        ),
    })
    assert [d for d in check_paths([str(root)], NEW) if d.path.endswith("run.py") and d.code == CODE] == []


def test_a_project_pytorch_model_in_another_module_is_still_reported(tmp_path):
    root = write_tree(tmp_path, {
        "speech/__init__.py": "from .modeling import SpeechModel\n",
        "speech/modeling.py": (
            "from transformers import PreTrainedModel\n\n"
            "class SpeechModel(PreTrainedModel):\n    \"\"\"Checkpoints hold float16 weights.\"\"\"\n"
        ),
        "run.py": (
            "from speech import SpeechModel\n\n"
            "def main():\n"
            "    student = SpeechModel.from_pretrained('m')\n"
            "    return student.config.max_length\n\n"
            "main()\n"
        ),
    })
    found = [d for d in check_paths([str(root)], NEW) if d.path.endswith("run.py") and d.code == CODE]
    assert [d.span.line for d in found] == [5]


@pytest.mark.parametrize("qualname, framework", [
    ("transformers.FlaxAutoModel", "jax"),
    ("transformers.modeling_flax_utils.FlaxPreTrainedModel", "jax"),
    ("transformers.TFPreTrainedModel", "tensorflow"),
    ("transformers.AutoModelForCausalLM", None),
    ("transformers.PretrainedConfig", None),
    ("trl.SFTTrainer", None),
])
def test_the_framework_of_a_library_class(qualname, framework):
    assert framework_of(qualname) == framework
