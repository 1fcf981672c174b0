"""The model of what code states about its hardware (workspace/hardware.py, shipped.py)."""
import pytest

from conftest import config

from precision_lint.engine import Engine
from precision_lint.facts.extractors.capability import other_device
from precision_lint.workspace.hardware import markdown_prose, notebook_capability, space_card_hardware, split_source, stated_capability, stated_in_text, summarise


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Tested on 8xH100 80GB.", [90]),
        ("We trained on 4 A100s and one L4.", [80, 89]),
        ("Runs on a p4d.24xlarge", [80]),
        ("#SBATCH --gres=gpu:a100:8", [80]),
        ("#SBATCH --partition=hopper-prod  # Adjust this for your cluster", [90]),
        ("#SBATCH --partition=lovelace", [89]),  # Ada Lovelace (review 19d)
        # a partition named after its GPUs, long or short (review 27b), and a constraint
        ("#SBATCH -p gpu_a100", [80]),
        ("#SBATCH --partition=gpu_v100", [70]),
        ("SBATCH -p gpu_h100", [90]),  # a launcher's `#` line as its comments are read
        ("#SBATCH -C a100", [80]),
        ("#SBATCH -p gpu", []),
        ("Trained on one 4090 (24 GB).", [89]),  # a card's memory beside its number (review 27b)
        # a hyphen in a card's name, and "only" that counts the run's GPUs (review 32)
        ("Tested on hardware with only one 16GB RTX-4080 GPU.", [89]),
        ("We trained on one GeForce-RTX-3090.", [86]),
        ("Runs on an RTX-A6000.", [86]),
        ("bf16 only works on an A100.", []),  # still a condition
        # the word GPU right before the number, whatever follows (review 31a)
        ("platform：all scripts work on GPU 4090 with 24G mem,ubuntu linux", [89]),
        ("GPU: 3090 Ti, CUDA 12.1", [86]),
        ("GPU 0 runs the teacher.", []),  # a device index
        ("A batch of 4090 (tokens).", []),
        ("python train.py -p 4090", []),
        ("## Example: 70B model 4-A100 40GB Training", [80]),  # a count joined by a hyphen
        ("Fine-tuned llama-2-7b, compared with gpt-4-turbo.", []),
        ("#SBATCH --gres=gpu:4", []),
        ("Set bf16 to True with an A100.", []),
        ("If you have an A100, use bf16.", []),
        ("FlashAttention is only available for Ampere (A10, A40, A100, ...) GPUs.", []),
        ("Tested on an A100; on a T4 set fp16 instead.", [80, 75]),
        ("created for consumer GPUs, e.g. NVIDIA A10G, but can be adapted to bigger GPUs", [86]),
        ("a t4-based sampler", []),
        ("bf16 (requires an A100)", []),
        ("Tested on an H100 in bf16.", [90]),
        # an architecture from Ampere on, in a sentence about GPUs (review 23e)
        ("Note: This code requires a GPU with NVIDIA Ampere architecture or newer.", [80]),
        ("Tested on Hopper GPUs.", [90]),
        ("On pre-Ampere GPUs, use fp16 instead.", []),
        # what the authors ran, said with "we can" (review 23e)
        ("- 4 x A40 48G: we can train Gemma-7B-it with max_length 4096 by Deepspeed Zero-3;", [86]),
        ("If you have two A100s, we can train the 7B model.", []),
        ("You can train it on a single A100.", []),
        ("This was only run on 80GB A100 GPUs.", [80]),  # review 23k
        # a test plan's item labels are not GPUs (review 24a): "T4)" heading its line, or T1..T3 beside it
        ("Test plan:\n- T1) empty body -> 400\n- T2) bad token -> 401\n- T4) two requests -> 423", []),
        ("Cases T1, T2, T3 and T4 cover the upload.", []),
        ("- T4: 16 GB, use fp16 there", [75]),  # a list item about the GPU
        ("Kaggle T4 x2; T1 weighting of the loss", [75]),  # one other label is no enumeration
        # a GPU set apart from this code's run: the machine an original was written for (review 24b)
        ("Reimplemented for one GPU instead of 2xT4, with twice the accumulation.", []),
        ("- Single GPU, not 2xT4.", []),
        ("Ported to an A100 rather than the V100 of the paper.", [80]),
        ("Trained on an RTX 3050 laptop GPU.", [86]),  # the 50-class cards
        ("Tested on an RTX 5050.", [120]),
        ("* All scripts can run on a single A100-80GB GPU and have two variants.", [80]),  # review 23h
        ("Only tested on H100 GPUs.", [90]),
        ("bf16 only works on an A100.", []),  # what bf16 needs, not where the code ran
        ("If you have an Ampere GPU, use bf16.", []),
        ("The Ampere release notes say nothing of it.", []),  # no GPU in the sentence
        # a link names a GPU without stating anything (a FLOPs table citing its datasheets)
        ("source: https://images.nvidia.com/content/volta/pdf/volta-v100-datasheet.pdf", []),
        ("see www.nvidia.com/t4-tensor-core-datasheet for T4 numbers", [75]),
        # a memory size or form factor after the name
        ("All runs used 8 NVIDIA A100-40GB GPUs.", [80]),
        ("Trained on H100-SXM nodes.", [90]),
        ("a t4-tuned kernel", []),
        # a GeForce card by its number alone, in a sentence about a GPU
        ("A `3090` graphics card (24 GB) is enough.", [86]),
        ("训练设备：`4台3090`", [86]),
        ("有个`3090`显卡即可", [86]),
        ("the 2080 Ti GPU", [75]),
        ("--master_port 3090 on each GPU", []),  # an option's value
        ("We used 3090 samples per GPU", []),  # a count
        ("released in 2080", []),  # no GPU in the sentence
        # Blackwell's GeForce cards, and a sentence about running out of a GPU's memory (review 26a)
        ("This script suffers from OOM on 5090", [120]),
        ("We ran out of memory on a 4090.", [89]),
        ("a `5080` card", [120]),
        ("listening on 5090", []),  # no GPU in the sentence
        # a speed figure names the machine it was measured on, not the code's target
        ("Fast: the model runs with a real-time factor of ~2x on an RTX 4090.", []),
        ("Generation reaches 45 tokens/s on a single H100.", []),
        ("Inference latency is 30 ms on an A100.", []),
        ("Trained on 8xA100 at 3,000 tokens/s per GPU.", [80]),
        ("Runs at 12 it/s on a T4.", [75]),  # a pre-Ampere GPU named at all counts
        # GeForce cards of every generation, the "Ti" written with or without a space
        ("Tested on a GTX 1080TI.", [61]),
        ("Trained on a GTX 1660 Super and an RTX 2070.", [75, 75]),
        ("Tested on an RTX 3060 12GB.", [86]),
        ("We ran it on an RTX 4070 Ti.", [89]),
        # the Ada workstation cards by their generation; a Quadro RTX 4000 alone is Turing
        ("Trained on an RTX 4000 Ada Generation.", [89]),
        ("Trained on an NVIDIA RTX 6000 Ada.", [89]),
        ("Trained on a Quadro RTX 4000.", []),
        # the DGX Spark's Blackwell chip (review 21e: a project trained in its container)
        ("Training runs on an NVIDIA DGX Spark (GB10).", [121, 121]),  # the machine and its chip
        # the machine by its product name alone (review 25a: "a fine-tuning environment for the
        # NVIDIA DGX Spark™")
        ("A small fine-tuning environment for the **NVIDIA DGX Spark™**: every script runs in its container.", [121]),
        ("Trained on a DGX-Spark.", [121]),
        # an AWS instance by its size; a task's number is none ("P2.1")
        ("Runs on a p3.2xlarge.", [70]),
        ("| P2.1 | Make pytest tests executable |", []),
        # inline data is no text (review 25b: "T4" among the letters of a base64 PNG)
        ("![loss](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ0bm+T4/z0nlX95W)", []),
        # a run the authors tell in the past tense, or say the project can make
        ("Training ran on Colab with an L4.", [89]),
        ("Can be trained on Google Colab with A100 40GB GPU runtime.", [80]),
        ("You can run it on an A100.", []),  # advice to the reader
        # the TITAN cards by name, never "Titans", a memory architecture's and its paper's (hunt 42:
        # a RetNet distillation README; its stated cards are an RTX 3090 to 5090)
        ("Trained on a TITAN RTX.", [75]),
        ("Trained on 2 TITAN RTXs.", [75]),
        ("We fuse the Memory-as-Context architecture (Titans) with retention, trained on one card.", []),
        ("Chasing bugs in the original Titans implementation, trained by us.", []),
        # NVIDIA's Jetson modules by their GPU (held-out 41u's F5: a LoRA project tested on an AGX
        # Orin, Ampere sm87); never "Orin" or "Xavier" alone, people's names too
        ("Tested on a Jetson AGX Orin Developer Kit.", [87]),
        ("Runs on a Jetson Orin Nano.", [87]),
        ("Trained on an AGX Xavier.", [72]),
        ("Tested on a Jetson TX2.", [62]),
        ("Thanks to Xavier and Orin for their help, trained by us.", []),
    ],
)
def test_statements_advice_and_requests(text, expected):
    assert stated_in_text(text) == expected


# A requirement of hardware states the target even where the sentence also names a precision
# or a library: the GPU is what the code or its run needs (review 11, S1).
@pytest.mark.parametrize(
    "text,expected",
    [
        ("You can train a model with the script [train.sh](./train.sh), please note that the training process requires 8*A100 80GB GPUs, bf16 and FSDP.", [80]),
        ("Fine-tuning the 13B model needs at least 4 H100 GPUs with bf16 and DeepSpeed ZeRO-3.", [90]),
        ("Training requires bf16, FSDP and 8 A100 GPUs.", [80]),  # the GPU last in the list
        ("- Requires 2x A6000 (48GB), bf16 mixed precision and flash-attention.", [86]),  # a bullet without a subject
        ("* **Hardware:** 8 × H100 80GB, bf16, FlashAttention-2", [90]),
        ("Minimum: 1 x A10G 24GB with bf16 and LoRA.", [86]),
        ("8 A100-80GB GPUs are required to train the 65B model in bfloat16.", [80]),
        ("We use 8 NVIDIA A800 GPUs, bf16 and DeepSpeed for all experiments.", [80]),
        ("You must have 4 L40S GPUs (bf16, FSDP) to reproduce the paper.", [89]),
        ("The demo needs a single RTX 4090 (24GB), fp16 weights and xformers.", [89]),
        ("The script only needs one A100 40GB, bf16 and LoRA.", [80]),  # "only" is no condition here
        ("训练需要 8 张 A100 显卡、bf16 和 FSDP。", [80]),
        ("| Hardware | 8x A100 80GB, bf16, FSDP |", [80]),  # a table's first cell as the label
        ("| Model | GPUs | Precision |\n|---|---|---|\n| 7B | 8x A100 | bf16 |\n| 13B | 16x H100 | bf16 |", [80, 90]),
        ("| Model | Precision | Training hardware |\n|:--|:-:|--:|\n| 7B | bf16 | 8 x A800 |", [80]),
    ],
)
def test_a_requirement_of_hardware_states_the_target_beside_a_precision(text, expected):
    assert stated_in_text(markdown_prose(text)) == expected


# Advice stays advice though it has a requirement's words: the feature needs the GPU (it is the
# subject, or the GPU is for it), or the sentence is a condition, examples or a FLOPs figure.
@pytest.mark.parametrize(
    "text,expected",
    [
        ("bf16 requires an A100 or newer.", []),
        ("FlashAttention-2 requires an A100, H100 or RTX 4090.", []),
        ("Mixed precision (bf16) requires at least one A100 GPU.", []),
        ("FP8 training requires a Hopper GPU (H100/H200).", []),
        ("We use flash-attention, which requires an A100 or H100.", []),  # the nearest verb's subject
        ("If you train in bf16, the training process requires an A100.", []),
        ("Training requires an A100 if you enable bf16.", []),
        ("You need an A100 to use bf16.", []),
        ("The training script needs an H100 for fp8.", []),
        ("An A100 is required for bf16.", []),
        ("If you have an A100 you can use bf16.", []),
        ("bf16 is only supported on Ampere GPUs such as the A100.", []),
        ("On a V100 use fp16 instead; bf16 needs an A100.", [70]),  # the V100 is named all the same
        ("- bf16: needs an A100 (use fp16 on older GPUs)", []),
        ("Training needs a GPU with bf16 support, for example an A100.", []),
        # "e.g." and "i.e." end no sentence: "an A100." alone would read as a statement
        ("Training needs a GPU with bf16 support, e.g. an A100.", []),
        ("bf16 needs a recent GPU (i.e. an A100 or newer).", []),
        ("For bf16 you want an Ampere card, E.g. an RTX 3090.", []),
        ("we use the A100 bfloat16 peak flops of 312 TFLOPS for MFU", []),
        ("bf16 需要 A100 显卡。", []),
        ("| bf16 | requires an A100 or newer |", []),
        ("| Precision | Minimum GPU |\n|---|---|\n| bf16 | A100 |\n| fp16 | V100 |", [70]),  # the row is the feature's
        ("| Feature | Supported GPUs |\n|---|---|\n| bf16 | A100, H100 |", []),
    ],
)
def test_a_features_requirement_stays_advice(text, expected):
    assert stated_in_text(markdown_prose(text)) == expected


@pytest.mark.parametrize(
    "markdown,expected",
    [
        # a traced graph printed in a code block: `t4` is a variable, not the GPU
        ("# Thunder\n\n```python\nt0, t1, t2, t3, t4 = inputs\n```\n", []),
        ("```bash\npython train.py --a10 3\n```\nTested on 4x A100 80GB.\n", [80]),
        # a block's comments are the author's words
        ("```bash\n#SBATCH --gres=gpu:h100:8\nsrun python train.py\n```\n", [90]),
        ("~~~\nx = t4\n~~~\nWe ran it on a T4.\n", [75]),
    ],
)
def test_the_code_of_a_readmes_fenced_blocks_states_nothing(markdown, expected):
    assert stated_in_text(markdown_prose(markdown)) == expected
    assert notebook_capability({}, [markdown]) == summarise(expected)


def test_only_comments_and_docstrings_state_a_target():
    def stated(source):
        return stated_capability(split_source(source)[0])

    assert stated('"""Runs on an H100."""\n# on 8xA100\n') == 80
    # a note at the end of a line says what the line needs, not where the code runs
    assert stated('"""Runs on an H100."""\nx = 1  # on 8xA100\n') == 90
    assert stated("args = make(bf16=True)  # A100\n") is None
    assert stated("args = make(bf16=True)  # not on a T4\n") == 75
    assert stated('name = "A100"\nif "H100" in gpu: pass\n') is None
    assert stated("# Runs on an H100 or a T4\n") == 75  # the lowest: the GPU a message names
    assert split_source('x = "cuda"  # not on xla\n')[1].rstrip() == 'x = "cuda"'


@pytest.mark.parametrize(
    "line, expected",
    [
        # the note says whom the line's precision is set for: the author's GPUs (reviews 21e, 22b)
        ("dtype=torch.bfloat16,  # bf16 weights for A100/H100\n", 80),
        ("args = make(bf16=True,  # Use bfloat16 for A100\n)\n", 80),
        ("args = make(bf16=True)  # bf16 for the H100 nodes\n", 90),
        # "on" a GPU too, and a GeForce number alone in such a note (review 27b)
        ("args = make(bf16=True)  # Use BF16 (Native on RTX 4090)\n", 89),
        ("args = make(bf16=True)  # Use BF16 (native on 4090)\n", 89),
        ("args = make(bf16=True)  # bf16, batch 4090\n", None),
        # a bare GPU, a condition or a comparison says what the line needs, not where it runs
        ("args = make(bf16=True)  # A100\n", None),
        ("args = make(bf16=True)  # bf16 if on an A100\n", None),
        ("args = make(bf16=True)  # bf16 is faster for A100\n", None),
        ("args = make(bf16=True)  # for A100\n", None),  # no precision named
        # a pre-Ampere GPU a note names still counts
        ("args = make(bf16=True)  # bf16 for A100, fp16 for T4\n", 75),
        # the machine the line ran with, in the author's language (review 33a: Russian "с", with)
        ("args = make(bf16=True)  # bf16 [i9 185H с RTX 4000ada]\n", 89),
        ("args = make(bf16=True)  # bf16 with an RTX 6000 Ada\n", 89),
        ("args = make(bf16=True)  # bf16 @A100\n", 80),
        # the computer beside the GPU: the author's machine
        ("args = make(bf16=True)  # bf16 [Core Ultra 9 laptop + RTX 4000 Ada]\n", 89),
        ("args = make(bf16=True)  # bf16, i9-13900K + RTX 4090 desktop\n", 89),
    ],
)
def test_a_note_that_says_whom_its_precision_is_for_states_the_target(line, expected):
    assert stated_capability(split_source(line)[0]) == expected


@pytest.mark.parametrize(
    "metadata,expected",
    [
        ({"accelerator": "GPU", "colab": {"gpuType": "A100"}}, 80),
        ({"accelerator": "GPU", "colab": {"gpuType": "L4"}}, 89),
        ({"accelerator": "GPU"}, 75),  # Colab's default GPU, a T4
        ({"kaggle": {"accelerator": "nvidiaTeslaT4"}}, 75),
        ({"kaggle": {"accelerator": "gpu"}}, 60),  # a P100 or a T4
        ({"instance_type": "ml.g4dn.xlarge"}, 75),  # SageMaker Studio's instance: a T4
        ({"instance_type": "ml.m5.2xlarge"}, None),  # no GPU (notebook_device: the CPU)
        ({}, None),
    ],
)
def test_notebook_metadata(metadata, expected):
    assert notebook_capability(metadata) == expected


@pytest.mark.parametrize(
    "metadata,expected",
    [
        ({"instance_type": "ml.m5.2xlarge"}, "cpu"),  # review 25d: a FLAN-T5 notebook run on it
        ({"instance_type": "ml.t3.medium"}, "cpu"),
        ({"instance_type": "ml.g5.2xlarge"}, None),  # an A10G
        ({"accelerator": "TPU"}, "tpu"),
        ({}, None),
    ],
)
def test_notebook_session_device(metadata, expected):
    from precision_lint.workspace.hardware import notebook_device

    assert notebook_device(metadata) == expected


@pytest.mark.parametrize(
    "source,expected",
    [
        ("import torch_xla.core.xla_model as xm\n", "xla"),
        ("import habana_frameworks.torch.core as htcore\n", "hpu"),
        ('device = torch.device("mps")\n', "mps"),
        ("import torch_xla.core.xla_model as xm\nx = x.cuda()\n", None),
        ("try:\n    import torch_xla\nexcept ImportError:\n    pass\n", None),  # indented: optional
        ("x = 1  # runs on xla\n", None),
        ('if args.device == "xla":\n    pass\n', None),  # a branch, not the device
        # Lightning's TPU accelerator or strategy, imported by the module itself
        ("from lightning.fabric.strategies import XLAFSDPStrategy\n", "xla"),
        ("from lightning.pytorch.accelerators import XLAAccelerator\n", "xla"),
        ("from lightning.fabric.strategies import FSDPStrategy\n", None),
        ("from lightning.fabric.accelerators import XLAAccelerator\nx = x.cuda()\n", None),
    ],
)
def test_other_device(source, expected):
    assert other_device(source) == expected


@pytest.mark.parametrize(
    "source,trains,expected",
    [
        ('device = "cpu"\nm = m.to(device)\n', False, "cpu"),
        ('device = torch.device("cpu")\n', False, "cpu"),
        ('pipe = pipeline("text-generation", device="cpu")\n', False, "cpu"),
        ('device = "cpu"\nm = m.to(device)\n', True, None),  # a trainer places the model itself
        ('device = "cpu"\nm = m.to(device)\nm = load(device_map="auto")\n', False, None),
        ('device = "cpu"\nm = m.to(device)\ny = x.to("cuda")\n', False, None),
        ('y = x.to("cpu")\n', False, None),  # moving a result back is not the device
        # a variable is not a device by its name: only where it is passed as one
        ('device = "cpu"\n', False, None),
    ],
)
def test_a_cpu_script(source, trains, expected):
    assert other_device(source, trains=trains) == expected


def test_a_changed_launch_script_is_not_answered_from_the_run_cache(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.py").write_text("from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='o', bf16=True)\n")
    launcher = src / "launch.slurm"
    launcher.write_text("#!/bin/bash\n#SBATCH --gres=gpu:a100:8\npython train.py\n")
    cache = tmp_path / "cache"

    def codes():
        engine = Engine(config(transformers_version="5.23"), ["MP201"], jobs=1, cache_dir=str(cache))
        return [d.code for d in engine.run_paths([str(src)]).diagnostics]

    assert codes() == []
    launcher.write_text("#!/bin/bash\n#SBATCH --gres=gpu:t4:1\npython train.py\n")
    assert codes() == ["MP201"]


def test_the_note_precision_lint_writes_above_its_probe_states_no_gpu():
    """A file fixed once carries the probe's note, which names the GPUs the probe falls back
    on (T4, V100, P100): it is precision-lint's own text, not what the code targets. Read as a
    statement, the next run would judge the fixed file for a T4 and report what the first
    did not."""
    from precision_lint.workspace.hardware import PROBE_COMMENT, split_source, stated_capability

    fixed = f"import torch\n\n{PROBE_COMMENT}\nBF16_OK = torch.cuda.is_available()\n"
    prose, code = split_source(fixed)
    assert prose == [] and stated_capability(prose) is None
    assert "T4" not in code  # still cut out of the code
    stated = fixed.replace(PROBE_COMMENT, "# trained on a T4")
    assert stated_capability(split_source(stated)[0]) == 75


@pytest.mark.parametrize(
    "source",
    [
        '"""Runs on an H100."""\n# on 8xA100\nx = 1  # on a T4\n',
        'x = "# not a comment"  # a comment\ny = \'#\' + "\'#\'"\n',
        'def f():\n    """Doc with # and \'quotes\'."""\n    return 1  # note\n',
        'class A:\n    "one"\n    x = 1; "not alone"\n    if x: "after a colon"\n',
        '("parenthesized")\n"a" "b"\n"alone"  # with a note\nb"bytes"\nf"{x:>8} on an A100"\n',
        "s = '''\n# inside a string\n'''\n# outside: H100\n",
        's = """a \\""" # still inside\n"""\n# T4\n',
        "x = 'it\\'s # inside'  # outside\n",
        "r'\\'' # raw: the quote is escaped for the tokenizer too\n",
        "x = 1\r\n# on an A100\r\n\"\"\"doc\"\"\"\r\n",
        "x = (1 +  # a note inside brackets\n     2)\n\"doc\"\n",
        "x = 1 + \\\n    2\n\"doc after a continued line\"\n",
        "x = 1; \\\n\"continued: no docstring\"\n",
        "\"doc\" \\\n\n# then a comment\n",
        "if True:\n    pass\n\fx = 1  # a form feed\n# H100\n",
        "x = 1\r# a lone carriage return\n",
        "## several hashes: on an A100\n#!shebang-like\n",
        'x = f"{y}" "# in an f-string"  # A100\n"""end"""',
    ],
)
def test_the_prose_read_from_the_tree_is_the_tokenizer_s(source):
    """prose_of finds comments with one scan for strings and comments and docstrings among
    the tree's string statements: the same prose as tokenizing the whole text."""
    import ast

    from precision_lint.semantic.index import build_index
    from precision_lint.workspace.hardware import prose_of

    compile(source, "<test>", "exec")
    index = build_index(source, "m", False, ast.parse(source))
    statements = [(span.start, span.end) for span in map(index.span, index.string_statements)]
    assert prose_of(source, statements) == split_source(source)[0]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("---\ntitle: x\nsdk: gradio\nsuggested_hardware: a10g-large\n---\n# x\n", [86]),
        ("---\nsuggested_hardware: t4-small  # the free tier\n---\n", [75]),
        ("---\nsuggested_hardware: zero-a10g\n---\n", [86]),
        ("---\nsuggested_hardware: h100x8\n---\n", [90]),
        ("---\nsuggested_hardware: cpu-upgrade\n---\n", []),
        ("# x\n\nsuggested_hardware: a10g-large\n", []),  # no card: prose, not a Space's setting
        ("---\ntitle: x\n---\n\nsuggested_hardware: t4-small\n", []),  # after the card
    ],
)
def test_a_spaces_card_suggests_its_hardware(text, expected):
    assert space_card_hardware(text) == expected


# --- the memory a checkpoint's weights need --------------------------------------------------
@pytest.mark.parametrize(
    "name,billions",
    [
        ("org/coder-33b-instruct", 33.0),
        ("org/Llama-70b-hf", 70.0),
        ("org/Mixer-8x7B-v0.1", 56.0),  # eight experts of 7B: all of them are in memory
        ("org/Chat-30B-A3B", 30.0),  # 3B active of 30B stored
        ("org/model_34B_v2", 34.0),
        ("org/small-1.3b", 1.3),
        ("bert-base-uncased", None),
        ("org/Llama-70B-GPTQ", None),  # quantized: its size says little of its memory
        ("org/llama-13b-4bit", None),
        ("org/llama-7b-int8", None),
        ("org/coder-7b1", None),
    ],
)
def test_a_checkpoint_name_states_its_size(name, billions):
    from precision_lint.workspace.hardware import billions_of_parameters

    assert billions_of_parameters(name) == billions


def test_only_weights_beyond_the_largest_pre_ampere_card_need_an_80gb_gpu():
    from precision_lint.workspace.hardware import needs_an_80gb_gpu

    assert needs_an_80gb_gpu(33) and needs_an_80gb_gpu(24)
    assert not needs_an_80gb_gpu(13)  # 26 GB: a V100 32GB holds it
    assert not needs_an_80gb_gpu(20)  # 40 GB: a 48 GB Turing card (Quadro RTX 8000) holds it
    assert needs_an_80gb_gpu(13, bytes_per_parameter=4)  # float32: 52 GB


def test_an_older_gpu_a_readme_line_names_for_the_script_it_links_holds_for_that_script(tmp_path):
    """"The small checkpoint runs on older cards such as a GTX 1080 Ti: see [the demo](infer/demo.py)":
    the GTX 1080 Ti is demo.py's, not every file's (review 23g). A newer GPU a line names holds for
    the project as before."""
    from conftest import write_tree
    from precision_lint.workspace.shipped import ShippedFiles

    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "README.md": "# kit\n\nThe small checkpoint runs on older cards such as a GTX 1080 Ti: see [the demo](infer/demo.py).\n",
        "infer/demo.py": "", "tools/chain.py": "",
    })
    shipped = ShippedFiles()
    assert shipped.stated_for(str(root / "infer/demo.py")) == 61
    assert shipped.stated_for(str(root / "tools/chain.py")) is None
    # the sentence wrapped over lines of one list item, the link on another line of it
    wrapped = write_tree(tmp_path / "wrapped", {
        ".git/HEAD": "",
        "README.md": "# kit\n\n- 2024: a smaller model.\n  You can run it on older GPUs like `GTX 1080TI`. Please\n"
                     "  refer to [cli_demo](infer/demo.py) for the code.\n- 2025: nothing else.\n",
        "infer/demo.py": "", "tools/chain.py": "",
    })
    assert ShippedFiles().stated_for(str(wrapped / "infer/demo.py")) == 61
    assert ShippedFiles().stated_for(str(wrapped / "tools/chain.py")) is None
    newer = write_tree(tmp_path / "newer", {
        ".git/HEAD": "",
        "README.md": "# kit\n\nWe trained on 8 A100 GPUs with [the trainer](train.py).\n",
        "train.py": "", "tools/chain.py": "",
    })
    assert ShippedFiles().stated_for(str(newer / "tools/chain.py")) == 80


def test_an_older_gpu_of_a_readme_table_row_holds_for_the_script_the_row_names(tmp_path):
    """A README's table gives each artifact its machine: "| v1 | `notebook/v1.ipynb` | Kaggle T4 |"
    beside "| v2 | `train.py` | DGX Spark (GB10) |" (review 24a). The T4 is the notebook's (named in a
    code span, kept out of the tree or not), the GB10 the project's."""
    from conftest import write_tree
    from precision_lint.workspace.shipped import ShippedFiles

    readme = ("# clf\n\n| Version | Artifact | Where it runs |\n|---|---|---|\n"
              "| v1 | `notebook/v1.ipynb` | Kaggle T4 |\n| v2 | `train.py` | DGX Spark (GB10) |\n")
    root = write_tree(tmp_path, {".git/HEAD": "", "README.md": readme, "train.py": "", "notebook/v1.ipynb": "{}"})
    assert ShippedFiles().stated_for(str(root / "train.py")) == 121
    assert ShippedFiles().stated_for(str(root / "notebook/v1.ipynb")) == 75
    # a row's cell naming a notebook by its title (a Kaggle notebook, no suffix): that notebook's T4
    titled = write_tree(tmp_path / "titled", {
        ".git/HEAD": "", "train.py": "", "v0.2-llama-qlora.ipynb": "{}",
        "README.md": "# clf\n\n| Version | Notebook | Notes |\n|---|---|---|\n"
                     "| v0.2 | `v0.2-llama-qlora` | validation run on Kaggle T4 |\n",
    })
    assert ShippedFiles().stated_for(str(titled / "train.py")) is None
    assert ShippedFiles().stated_for(str(titled / "v0.2-llama-qlora.ipynb")) == 75
    # a row that names no script states the project's machine
    plain = write_tree(tmp_path / "plain", {
        ".git/HEAD": "", "train.py": "",
        "README.md": "# clf\n\n| Setting | Value |\n|---|---|\n| GPU | Kaggle T4 |\n| Epochs | 3 |\n",
    })
    assert ShippedFiles().stated_for(str(plain / "train.py")) == 75


def test_a_launcher_named_after_its_machine_states_it(tmp_path):
    """``scripts/run-4x-rtx4090.sh`` runs ``fit.py`` on four RTX 4090s (review 23k); a launcher
    whose name names no GPU states nothing by it."""
    from conftest import write_tree
    from precision_lint.workspace.shipped import ShippedFiles

    root = write_tree(tmp_path, {
        ".git/HEAD": "", "fit.py": "",
        "scripts/run-4x-rtx4090.sh": "torchrun --nproc-per-node=4 fit.py --lr 2e-5\n",
        "scripts/run-single.sh": "torchrun --nproc-per-node=1 fit.py\n",
    })
    assert ShippedFiles().stated_for(str(root / "fit.py")) == 89
    (root / "scripts/run-4x-rtx4090.sh").rename(root / "scripts/run-four.sh")
    assert ShippedFiles().stated_for(str(root / "fit.py")) is None


@pytest.mark.parametrize(
    "text, apple",
    [
        ("Fine-tuned on a Mac Studio M3 Ultra (128 GB unified memory).", True),
        ("Tested on Apple Silicon (M2 Max).", True),
        ("PyTorch 2.0+ with MPS support.", True),
        ("On macOS, install ffmpeg with brew first.", False),  # an install note for any OS
        ("max 3 pro tips", False),
    ],
)
def test_an_apple_machine_named_in_a_readme(text, apple):
    from precision_lint.workspace.hardware import names_an_apple_machine

    assert names_an_apple_machine(text) is apple


# A bullet that is a label of a run's setting (review 28a's speech-enhancement docs: "- BF16 on
# RTX 3090." among "- Effective batch size 48", "- AdamW, LR 3e-4") states the GPU the run used;
# a sentence that says more about the precision and the GPU stays advice.
@pytest.mark.parametrize(
    "text,expected",
    [
        ("Foundation optimization:\n\n- BF16 on RTX 3090.\n- Effective batch size 48.\n", [86]),
        ("- bf16 mixed precision on a single A100-80GB\n", [80]),
        ("* FP16 with 4x V100\n", [70]),
        ("- Use BF16 on an A100.\n", []),
        ("- BF16 is faster on A100.\n", []),
        ("- BF16 if you have an A100.\n", []),
        ("- BF16 on A100 (80 GB) gives the best throughput.\n", []),
        ("- FlashAttention and bf16 work best on an A100.\n", []),
    ],
)
def test_a_label_of_a_runs_precision_and_gpu_states_the_gpu(text, expected):
    assert stated_in_text(markdown_prose(text)) == expected


# A comment that heads an install of torch in a README's block says which build fits which card
# (review 28b's sd-distill-prune-quant: "# CUDA 12.1 (most current Ampere/Ada/Hopper GPUs)" above
# `pip install ... cu121 torch`, "# CUDA 11.8 (older GPUs / drivers)" above the other): no target.
@pytest.mark.parametrize(
    "markdown,expected",
    [
        ("```bash\n# CUDA 12.1 (most current Ampere/Ada/Hopper GPUs)\npip install --index-url https://download.pytorch.org/whl/cu121 torch\n"
         "# CUDA 11.8 (older GPUs)\n# pip install --index-url https://download.pytorch.org/whl/cu118 torch\n```\n", []),
        ("```bash\n# CUDA 12.1 (most current Ampere/Ada/Hopper GPUs)\npip install --index-url https://download.pytorch.org/whl/cu121 \\\n"
         "    torch torchvision\n```\n", []),  # the install continued on the next line
        ("```bash\n# we train on 8x A100\npython train.py\n```\n", [80]),  # a comment above a run: the author's
        ("```bash\n#SBATCH --gres=gpu:a100:4\npip install torch\n```\n", [80]),  # a job's request stays one
    ],
)
def test_a_comment_heading_a_torch_install_states_no_target(markdown, expected):
    assert stated_in_text(markdown_prose(markdown)) == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Indicative numbers on an A100 80 GB, batch=1, 512x512. Your numbers will vary.", []),
        ("Typical timings on a single H100: 2 s per step.", []),
        ("All numbers were measured on a T4.", [75]),  # a pre-Ampere card named counts anyway
    ],
)
def test_figures_measured_on_a_card_are_no_target(text, expected):
    """Review 28b's sd-distill-prune-quant: the machine a table of figures was measured on."""
    assert stated_in_text(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # 49 held-out: a README's only statement of its GPU, a count of cards by their number
        ("It takes 30-ish mins to make a pass on a 2x 4090 node", [89]),
        ("we used 4 x 3090 machines", [86]),
        ("the 4090 node is fast", []),  # no count, no word for a GPU: a number
        ("torchrun --master_port 3090 train.py", []),
    ],
)
def test_a_count_of_cards_named_by_their_number(text, expected):
    assert stated_in_text(text) == expected
