"""MP201/MP202 and what a load itself says about its GPU.

- A checkpoint too large for any GPU without native bf16, placed whole on one GPU (a 33B
  model's 16-bit weights are 67 GB; the largest pre-Ampere card holds 48 GB), runs only on an
  80 GB A100 or newer: bf16 and FlashAttention-2 cannot fail there.
- A load that asks for FlashAttention-2 on every GPU fails below sm80 at the attention kernel
  (MP202's finding): a fallback dtype on the same call rescues nothing, so MP201 leaves it.
- ``_attn_implementation=``, the keyword's own spelling in transformers, is read as
  ``attn_implementation=`` is.
"""
import textwrap

import pytest

from conftest import lint

HEAD = "import argparse\nimport torch\nfrom transformers import AutoModelForCausalLM, BitsAndBytesConfig\n"


def _codes(body):
    return sorted(d.code for d in lint(HEAD + textwrap.dedent(body)) if d.code in ("MP201", "MP202"))


@pytest.mark.parametrize(
    "body",
    [
        'net = AutoModelForCausalLM.from_pretrained("org/coder-33b", torch_dtype=torch.bfloat16).cuda()\n',
        'net = AutoModelForCausalLM.from_pretrained("org/coder-33b", torch_dtype=torch.bfloat16).eval().to("cuda:0")\n',
        'NAME = "org/chat-70b-hf"\nnet = AutoModelForCausalLM.from_pretrained(NAME, torch_dtype=torch.bfloat16)\nnet.to("cuda")\n',
        'net = AutoModelForCausalLM.from_pretrained("org/mixer-8x7b", torch_dtype=torch.bfloat16, device_map={"": 0})\n',
        'net = AutoModelForCausalLM.from_pretrained("org/coder-33b", torch_dtype=torch.bfloat16, device_map="cuda:0")\n',
        # FlashAttention-2 as well: MP202 is silent for the same reason
        'net = AutoModelForCausalLM.from_pretrained("org/coder-33b", torch_dtype=torch.bfloat16, attn_implementation="flash_attention_2").cuda()\n',
    ],
    ids=["chained-cuda", "chained-eval-to", "bound-then-moved", "moe-device-map-dict", "device-map-cuda", "with-fa2"],
)
def test_a_model_only_an_80gb_gpu_holds_is_not_judged_for_older_gpus(body):
    assert _codes(body) == []


@pytest.mark.parametrize(
    "body",
    [
        # 14 GB: a T4 holds it
        'net = AutoModelForCausalLM.from_pretrained("org/coder-7b", torch_dtype=torch.bfloat16).cuda()\n',
        # "auto" may spread the layers over several older GPUs, or offload them to the CPU
        'net = AutoModelForCausalLM.from_pretrained("org/coder-33b", torch_dtype=torch.bfloat16, device_map="auto")\n',
        # 4-bit weights: 17 GB
        'q = BitsAndBytesConfig(load_in_4bit=True)\n'
        'net = AutoModelForCausalLM.from_pretrained("org/coder-33b", torch_dtype=torch.bfloat16, quantization_config=q).cuda()\n',
        # a quantized checkpoint
        'net = AutoModelForCausalLM.from_pretrained("org/coder-33b-gptq", torch_dtype=torch.bfloat16).cuda()\n',
        # the user chooses the model, and its default is one a T4 holds
        'p = argparse.ArgumentParser()\np.add_argument("--model", default="org/coder-7b")\nargs = p.parse_args()\n'
        'net = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.bfloat16).cuda()\n',
        # moved to the GPU before a later load of the large one (another variable)
        'small = AutoModelForCausalLM.from_pretrained("org/coder-7b", torch_dtype=torch.bfloat16)\nsmall.cuda()\n'
        'big = AutoModelForCausalLM.from_pretrained("org/coder-33b", torch_dtype=torch.bfloat16, device_map="auto")\n',
        # the variable is bound again, to a model a T4 holds, before it is moved
        'net = AutoModelForCausalLM.from_pretrained("org/coder-33b", torch_dtype=torch.bfloat16)\n'
        'net = AutoModelForCausalLM.from_pretrained("org/coder-7b", torch_dtype=torch.bfloat16)\nnet.cuda()\n',
    ],
    ids=["fits-a-t4", "device-map-auto", "quantized-load", "quantized-checkpoint", "user-chosen", "other-variable-moved", "bound-again"],
)
def test_a_model_an_older_gpu_holds_is_still_judged(body):
    assert "MP201" in _codes(body)


OPTION_DEFAULT = """\
p = argparse.ArgumentParser()
p.add_argument("--model", default="org/coder-33b")
p.add_argument("--device_map", default="{'': 0}")
args = p.parse_args()
net = AutoModelForCausalLM.from_pretrained(
    args.model, torch_dtype=torch.bfloat16, device_map=DEVICE_MAP, attn_implementation="flash_attention_2")
"""


@pytest.mark.parametrize("device_map", ['{"": 0}', "ast.literal_eval(args.device_map)", '"cuda:0"'])
def test_the_default_run_of_an_option_is_the_scripts_where_nothing_is_stated(device_map):
    """Review 30a: a 32B checkpoint as ``--model``'s default, placed whole on one GPU (its
    ``device_map`` read from an option's default string), with FlashAttention-2: the run the
    script makes as shipped needs an 80 GB GPU. Where the project states a GPU, the statement
    may be about a smaller checkpoint the user passes: it is judged by the statement."""
    body = "import ast\n" + OPTION_DEFAULT.replace("DEVICE_MAP", device_map)
    assert _codes(body) == []
    assert "MP202" in _codes("# Tested on a Tesla T4\n" + body)
    # the device map the user passes by default may spread the model: judged for older GPUs
    assert "MP202" in _codes(body.replace("'': 0", "auto").replace('"cuda:0"', '"auto"').replace('{"": 0}', '"auto"'))


@pytest.mark.parametrize(
    "path, billions",
    [
        ("/data/ckpt/QwQ-32B-lora-ds/final-0708", 32.0),  # a fine-tune's output under its base's name
        ("./runs/llama-70b/checkpoint-500", 70.0),
        ("/data/ckpt/run-3/final", None),
        ("org/coder-7b", 7.0),  # a hub name: its name alone
        ("output/Qwen-14B-sft/merged-7b", 7.0),  # the nearest folder that states one
    ],
)
def test_a_local_checkpoint_path_states_its_size_in_its_nearest_folder(path, billions):
    from precision_lint.workspace.hardware import billions_of_parameters

    assert billions_of_parameters(path) == billions


def test_a_memory_statement_also_covers_the_modules_the_script_runs(tmp_path):
    from conftest import config
    from precision_lint.engine import Engine

    (tmp_path / "helpers.py").write_text(
        "from transformers import TrainingArguments\n"
        "def arguments():\n    return TrainingArguments(output_dir='o', bf16=True)\n"
    )
    (tmp_path / "run.py").write_text(
        HEAD + "from helpers import arguments\n"
        'net = AutoModelForCausalLM.from_pretrained("org/coder-33b", torch_dtype=torch.bfloat16).cuda()\n'
        "args = arguments()\n"
    )
    found = Engine(config(transformers_version="5.23"), ["MP201"], jobs=1).run_paths([str(tmp_path)]).diagnostics
    assert found == []


def test_flash_attention_2_on_every_gpu_leaves_the_dtype_of_the_same_load_to_mp202():
    found = lint(HEAD + 'net = AutoModelForCausalLM.from_pretrained("org/vlm", torch_dtype=torch.bfloat16, attn_implementation="flash_attention_2").cuda()\n')
    assert [d.code for d in found if d.code.startswith("MP20")] == ["MP202"]


def test_flash_attention_2_only_where_the_gpu_has_it_leaves_the_dtype_judged():
    found = lint(HEAD + textwrap.dedent('''\
        ok = torch.cuda.get_device_capability()[0] >= 8
        net = AutoModelForCausalLM.from_pretrained("org/vlm", torch_dtype=torch.bfloat16, attn_implementation="flash_attention_2" if ok else "sdpa").cuda()
    '''))
    assert [d.code for d in found if d.code.startswith("MP20")] == ["MP201"]


def test_the_private_spelling_of_the_attention_keyword_is_read():
    found = lint(HEAD + 'net = AutoModelForCausalLM.from_pretrained("org/vlm", torch_dtype=torch.bfloat16, _attn_implementation="flash_attention_2").cuda()\n')
    assert [d.code for d in found if d.code.startswith("MP20")] == ["MP202"]
    assert "`_attn_implementation=\"flash_attention_2\"`" in next(d.message for d in found if d.code == "MP202")


def test_the_fixes_of_both_rules_converge_on_the_private_spelling():
    from conftest import fix

    fixed = fix(HEAD + 'net = AutoModelForCausalLM.from_pretrained("org/vlm", torch_dtype=torch.bfloat16, _attn_implementation="flash_attention_2").cuda()\n', unsafe=True)
    assert 'dtype=torch.bfloat16 if BF16_OK else torch.float16' in fixed
    assert '_attn_implementation="flash_attention_2" if BF16_OK and is_flash_attn_2_available() else "sdpa"' in fixed


CLASS_LOAD = '''
import torch
from transformers import AutoModelForCausalLM

MODEL_NAME = "org/coder-33b-instruct"


class Gen:
    def __init__(self, model_name, batch_size):
        self.model_name = model_name
        self.batch_size = batch_size

    def load(self):
        self.model = AutoModelForCausalLM.from_pretrained(self.model_name, torch_dtype=torch.bfloat16).cuda()


if __name__ == "__main__":
    Gen(model_name=NAME, batch_size=4).load()
'''


@pytest.mark.parametrize("name, codes", [("MODEL_NAME", []), ('"org/coder-7b"', ["MP201"])], ids=["33b-constant", "7b-literal"])
def test_the_checkpoint_a_constructor_is_given_is_the_one_its_method_loads(name, codes):
    """The name reaches the load through the constructor's parameter and an attribute: what the
    callers pass, at the join (a module constant is passed as the literal it names)."""
    assert _codes(CLASS_LOAD.replace("NAME, batch", f"{name}, batch")) == codes
