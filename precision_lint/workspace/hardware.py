"""What hardware a piece of code says it is written for (read by MP201, MP202).

bf16 and FlashAttention-2 fail only below compute capability 8.0, so whether a hard-coded
bf16 is a bug depends on the GPUs the code targets. Code states them in a few ways:

- a sentence in a comment, a docstring, a notebook's markdown or a README that *states* the
  target ("runs on 8xA100", "tested on an H100 80GB") — never conditional advice ("set bf16
  to True with an A100", "if you have an A100, use bf16"), which says the opposite: that other
  GPUs are expected. A pre-Ampere GPU named even in advice ("on a T4 use fp16") counts: the
  author has that GPU in mind;
- a SLURM request (``#SBATCH --gres=gpu:a100:8``, ``--constraint=h100``) in the code or a
  launch script shipped with it;
- a notebook's metadata (Colab's ``"accelerator": "GPU"`` with ``"gpuType": "A100"``,
  Kaggle's ``"accelerator": "nvidiaTeslaT4"``).

Only text is read here: plain functions, no parsing. What the *code* does (FP8 compute, a
TPU/Gaudi/XPU backend) is recorded by the capability extractor.
"""
from __future__ import annotations

import io
import re
import sys
import tokenize
from typing import FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple
from .._regex import lazy
from .markdown import fenced_lines

# GPUs a text may name, with their compute capability (major*10+minor).
GPU_CAPABILITY = {
    "a100": 80, "a800": 80, "a30": 80, "a10": 86, "a10g": 86, "a40": 86, "a6000": 86, "a5000": 86,
    "a4000": 86, "rtx3090": 86, "rtx3080": 86, "rtx4090": 89, "rtx4080": 89, "rtx5090": 120,
    "l4": 89, "l40": 89, "l40s": 89, "h100": 90, "h800": 90, "h200": 90, "h20": 90, "gh200": 90,
    "b100": 100, "b200": 100, "gb200": 100, "gb10": 121,  # GB10: the DGX Spark's Blackwell (sm121)
    "dgxspark": 121,  # the machine by its product name ("a fine-tuning environment for the NVIDIA DGX Spark")
    "p100": 60, "v100": 70, "t4": 75, "k80": 37, "p40": 61, "titan": 75, "rtx2080": 75,
    "rtx2080ti": 75, "gtx1080": 61, "gtx1080ti": 61,
    # the other GeForce cards of those generations: Pascal (sm61), Turing (sm75), Ampere (sm86),
    # Ada (sm89), Blackwell (sm120)
    "gtx1050": 61, "gtx1060": 61, "gtx1070": 61, "gtx1650": 75, "gtx1660": 75, "rtx2060": 75, "rtx2070": 75,
    "rtx3060": 86, "rtx3070": 86, "rtx4060": 89, "rtx4070": 89, "rtx5060": 120, "rtx5070": 120, "rtx5080": 120,
    "rtx2050": 86, "rtx3050": 86, "rtx4050": 89, "rtx5050": 120,  # the 50-class cards (the RTX 2050 is an Ampere laptop part)
    # the Ada workstation cards, named with their generation ("RTX 4000 Ada", "RTX 6000 Ada
    # Generation"): without it, a Quadro RTX 4000 / 6000 is Turing (sm75) and is not read
    "rtx2000ada": 89, "rtx3500ada": 89, "rtx4000ada": 89, "rtx4500ada": 89, "rtx5000ada": 89,
    "rtx5880ada": 89, "rtx6000ada": 89,
    # NVIDIA's Jetson modules, by their GPU: Orin (AGX, NX, Nano) is Ampere sm87, Xavier (AGX,
    # NX) Volta sm72, the TX2 Pascal sm62, the first Nano Maxwell sm53 (see _capability)
    "jetsonorin": 87, "jetsonxavier": 72, "jetsontx2": 62, "jetsonnano": 53,
}
NATIVE_BF16 = 80
FP8_CAPABILITY = 89  # Ada and Hopper: the first GPUs with FP8 tensor cores

_GPU_WORD_PATTERN = (
    r"(?<![\w-])(?:nvidia[ -]?|tesla[ -]?|geforce[ -]?|rtx[ -]?(?=a[456]000))*"
    r"(a100|a800|a30|a10g?|a40|a[456]000|rtx[ -]?(?:[2-6]000|3500|4500|5880)[ -]?ada|(?:rtx|gtx)[ -]?(?:[2345]0[5-9]0|10[5-8]0|16[56]0)(?: ?ti)?|l40s?|l4|h100|h800|h200|h20|gh200|gb200|gb10|dgx[ -]?spark|b[12]00|p100|v100|t4|k80|p40|titan(?!s\b|'s\b)"
    # a Jetson named by its module ("Jetson AGX Orin", "Jetson Orin Nano", "AGX Xavier", "Xavier
    # NX"): never "Orin" or "Xavier" alone, which are people's names too
    r"|jetson[ -]?(?:agx[ -]?)?(?:orin|xavier|tx2|nano)(?:[ -]?(?:nano|nx))?|agx[ -]?(?:orin|xavier)|(?:orin|xavier)[ -]?nx)"
    # a memory size or form factor may follow: "A100-40GB", "H100-SXM", "A100 80GB"; never
    # "Titans" alone, a model and a paper's name (the cards are "TITAN RTXs", "two Titans" is rare)
    r"s?(?:(?=-(?:\d+\s*gb?|sxm\d*|pcie|nvl)\b)|(?![\w-]))"
)
_GPU_WORD = lazy(_GPU_WORD_PATTERN, re.IGNORECASE)
# A GeForce card named by its number alone ("a `3090` is enough", "4台3090"): only in a
# sentence about a GPU, and never as part of a word, a path, a port or an option's value.
# Case-folding the CJK range makes it the costliest pattern a check compiles (3.5 ms of a small
# file's 0.3 s, #23): like every pattern here it is compiled where first used (``lazy``).
_BARE_GEFORCE = lazy(
    r"(?<![A-Za-z0-9_.:=/\\-])([2345]0[89]0(?:\s?ti)?)"
    r"(?=\s*(?:$|[`'\"*()\]，。、,.;:!（）]|[\u4e00-\u9fff]|(?:gpus?|cards?|nodes?|machines?|servers?|s)\b))",
    re.IGNORECASE,
)
# A GeForce card's number right after the word GPU, whatever follows ("all scripts work on GPU
# 4090 with 24G mem", "GPU: 3090", review 31a): the word names what the number is
_GPU_THEN_NUMBER = lazy(r"\bgpus?\s*[:：]?\s*([2345]0[89]0(?:\s?ti)?)(?![\w.])", re.IGNORECASE)
_OPTION_BEFORE = lazy(r"--?[\w-]+\s*$")  # `--master_port 3090`: an option's value
_NAMED_BEFORE = lazy(r"(?:rtx|gtx)\s?$", re.IGNORECASE)  # "RTX 4090": named whole already
# (a sentence about running out of a GPU's memory is one: "suffers from OOM on 5090")
# (a card's memory beside the number is one too: "Trained on one 4090 (24 GB)")
_GPU_CONTEXT = lazy(
    r"\bgpus?\b|\bcards?\b|\bgraphics\b|\bgeforce\b|\bvram\b|\booms?\b|out of memory|\b\d{1,3}\s?gb\b|显卡|显存|训练设备|设备|[0-9]\s*[台张块]"
    # a count of cards ("on a 2x 4090 node": 49 held-out, a README's only statement of its GPU)
    r"|\b\d{1,2}\s?[x×]\s?[2345]0[89]0\b",
    re.IGNORECASE,
)
_COUNT = lazy(r"(\d)\s*[x×]\s*(?=[a-zA-Z])|(?<![\w.-])(\d+)-(?=[a-zA-Z])")  # "8xA100", "4-A100" → "8 x A100", "4 x A100"
# A SLURM request for a GPU model: `--gres=gpu:a100:8`, `--gpus=h100:4`, `--constraint=a100`, a
# partition named after its GPUs (`--partition=gpu_a100`, `#SBATCH -p gpu_a100`, `-C a100`).
_SLURM = lazy(
    r"(?:--(?:gres|gpus(?:-per-node|-per-task)?|constraint|partition)[= ]|#?SBATCH[ \t]+-[pC][ \t]*)(?:gpu:)?([\w-]+)",
    re.IGNORECASE,
)
# GPU architectures as cluster partitions and constraints name them.
_ARCHITECTURES = {
    "pascal": 60, "volta": 70, "turing": 75, "ampere": 80, "ada": 89, "lovelace": 89, "hopper": 90, "blackwell": 100,
}
_ARCHITECTURE = lazy(r"(?<![a-z])(pascal|volta|turing|ampere|ada|lovelace|hopper|blackwell)(?![a-z])", re.IGNORECASE)
# What makes a sentence advice about a GPU rather than a statement of the one the code runs on.
# Words that make a GPU conditional, recommended or compared: shared by the reading of advice
# (``_CONDITIONAL``) and by what a requirement may not be (``_UNLESS``).
_CONDITION_WORDS = (
    r"if|when|whenever|unless|otherwise|whether|instead|recommend\w*|suggest\w*|should|could|might|may|"
    r"try|consider|depending|optional(?:ly)?|faster|slower|vs|versus|compared?|available|support\w*"
)
_CONDITIONAL = lazy(rf"\b(?:{_CONDITION_WORDS}|can|only)\b|\?", re.IGNORECASE)
# "... with an A100": a hypothetical GPU, as in "set bf16 to True with an A100".
_HYPOTHETICAL = lazy(r"\b(?:with|for)\s+an?\s+(?:nvidia\s+|tesla\s+)?$", re.IGNORECASE)
_IMPERATIVE = lazy(
    r"^\W*(?:set|use|change|enable|disable|switch|turn|uncomment|comment|pass|add|remove|replace|select|choose|pick)\b",
    re.IGNORECASE,
)
# A sentence ends at a full stop, but not at the stops of "e.g." and "i.e.": "bf16 needs a
# recent GPU, e.g. an A100" is one sentence (cut there, "an A100." read as a statement).
_SENTENCE = lazy(r"(?<=[.;!?])(?<!\b[eE]\.[gG]\.)(?<!\b[iI]\.[eE]\.)\s+|\n|,?\s+but\s+")
# Cloud instances by the GPU they carry: AWS (g4dn T4, p3 V100, g5 A10G, g6 L4, p4d A100, p5
# H100) and Google Cloud (a2 A100, a3 H100, g2 L4).
_INSTANCE_PATTERN = r"\b(g4dn|g4ad|p3dn|p3|p2|g5|g5g|g6e?|p4de?|p5e?n?|a2-\w+|a3-\w+|g2-\w+)\.?\w*"
_INSTANCE = lazy(_INSTANCE_PATTERN, re.IGNORECASE)
# an instance's size: `.xlarge`, `.metal`, `.2xlarge` (read as "2 x large" once _COUNT has spaced it)
_INSTANCE_SIZE = lazy(r"\.(?:\d+\s?x\s?)?(?:x?large|metal|medium)\b", re.IGNORECASE)
_INSTANCE_GPU = {"g4dn": 75, "g4ad": 0, "p3": 70, "p3dn": 70, "p2": 37, "g5": 86, "g5g": 75, "g6": 89, "g6e": 89, "p4d": 80, "p4de": 80, "p5": 90, "p5e": 90, "p5en": 90, "a2": 80, "a3": 90, "g2": 89}


def _capability(name: str) -> Optional[int]:
    key = name.lower().replace(" ", "").replace("dgx-", "dgx")
    if key.startswith(("rtx-", "gtx-")):
        key = key[:3] + key[4:]  # "RTX-4080" (review 32)
    key = key.replace("-ada", "ada")  # "RTX 4000-Ada"
    if key.startswith(("jetson", "agx")) or key.endswith("nx"):  # "Jetson AGX Orin", "Orin NX", "AGX Xavier"
        for module in ("orin", "xavier", "tx2"):
            if module in key:
                return GPU_CAPABILITY["jetson" + module]
    return GPU_CAPABILITY.get(key) or GPU_CAPABILITY.get(key[:-2] if key.endswith("ti") else key)


def requested_capability(name: str) -> Optional[int]:
    """The compute capability of a GPU a cloud function requests by name (Modal's
    ``gpu="H100:8"``, ``"a100-80gb"``, ``"H100!"``, ``modal.gpu.A100``): its count, memory size
    and ``!`` cut; None for ``"any"`` or a name not known."""
    key = name.strip().lower().rstrip("!").split(":", 1)[0]
    key = re.sub(r"-(?:\d+gb|sxm\d*|pcie|nvl)$", "", key)
    return _capability(key)


def instance_capability(name: str) -> Optional[int]:
    """The compute capability of the GPU of a cloud instance type a job requests by name
    (SageMaker's ``instance_type="ml.p3.2xlarge"``, a V100; ``"ml.g5.2xlarge"``, an A10G;
    Google Cloud's ``a2-highgpu-1g``, an A100):
    None for one without a GPU, or not known."""
    family = re.split(r"[.-]", name.strip().lower().removeprefix("ml."), maxsplit=1)[0]  # `a2-highgpu-1g`: a2
    capability = _INSTANCE_GPU.get(family)
    return capability or None  # (g4ad's AMD GPU is 0: no CUDA GPU)


# A job file's key that names the machine its command runs on: AzureML's `compute:
# azureml:nc40h100`, SageMaker's and Vertex's `instance_type:` / `machine_type:`, `accelerator:`.
_COMPUTE_KEY = lazy(
    r"^[ \t-]*(?:compute|instance[_-]type|machine[_-]type|accelerator(?:[_-]type)?|gpu[_-]type)[ \t]*:[ \t]*['\"]?([\w.:/-]+)",
    re.IGNORECASE | re.MULTILINE,
)
# GPU names a compute target's name holds among other words (`nc40h100`, `gpu-a100-cluster`):
# those a longer word does not hide. Two-character ones (T4, L4) only as a word of their own.
_IN_COMPUTE_NAME = lazy(r"(a100|a800|h100|h200|h800|v100|p100|b200|a10g|l40s|a6000|k80)|(?:^|[-_:./])(t4|l4|a10)(?=$|[-_:./])", re.IGNORECASE)


def compute_capabilities(text: str) -> List[int]:
    """The GPUs a job file's compute target or instance type names (``compute:
    azureml:nc40h100``: an H100; ``instance_type: ml.g4dn.xlarge``: a T4): the machine the
    job's command runs on, as a SLURM ``--gres=gpu:a100`` request is."""
    found: List[int] = []
    for match in _COMPUTE_KEY().finditer(text):
        name = match.group(1)
        capability = instance_capability(name) if _INSTANCE().match(name.lower().removeprefix("ml.")) else None
        if capability is not None:
            found.append(capability)
            continue
        for gpu in _IN_COMPUTE_NAME().finditer(name):
            known = _capability(gpu.group(1) or gpu.group(2))
            if known is not None:
                found.append(known)
    return found


# A sentence about a precision feature names GPUs to say what the feature needs ("bf16
# (requires an A100)"), unless it says the code was run there ("tested on an H100 in bf16").
_FEATURE_WORDS = r"bf16|bfloat16|fp16|float16|flash|tf32|fp8|precision|\bamp\b|mixed"
_FEATURE = lazy(_FEATURE_WORDS, re.IGNORECASE)
_RAN = lazy(r"\b(?:tested|trained|ran|runs|run on|validated|benchmarked|developed|created|written|designed|measured)\b", re.IGNORECASE)


# A link names a GPU without stating anything of the code (a datasheet cited for a FLOPs table:
# `# source: https://.../volta-v100-datasheet.pdf`); so does data written inline as a link
# (`![plot](data:image/png;base64,...)`: its letters are no words, though "T4" may be among them).
_URL = lazy(r"(?:\b[a-z][a-z0-9+.-]*://|\bwww\.|\bdata:[\w.+-]+/[\w.+-]+;base64,)\S+", re.IGNORECASE)


# A speed figure names the GPU it was measured on ("a real-time factor of ~2x on an RTX 4090",
# "30 tokens/s on an A100"): a benchmark's machine, which says how fast the code is there, not
# that other GPUs are out of scope. Unless the sentence also says the code was trained or
# tested there ("trained on 8xA100 at 3,000 tokens/s").
_PERFORMANCE = lazy(
    r"real[- ]?time|\brtf\b|latency|throughput|\b(?:tokens?|samples?|images?|it|steps?)\s*/\s*s(?:ec)?\b|"
    r"\b(?:tokens?|samples?|images?|iterations?|steps?) per second\b|\bfps\b|\bspeed(?:up)?s?\b|"
    # "Indicative numbers on an A100 80 GB ... your numbers will vary": figures measured there
    r"\b(?:indicative|typical|example|reference|approximate)\s+(?:numbers|timings?|figures|results)\b|\byour\s+numbers\s+will\s+vary\b",
    re.IGNORECASE,
)
_TRAINED_OR_TESTED = lazy(r"\b(?:trained|tested|validated|fine-?tuned)\b", re.IGNORECASE)


# A requirement of hardware states the target, though the sentence also names a precision or a
# library: "the training process requires 8*A100 80GB GPUs, bf16 and FSDP", "we use 8 A800s with
# bf16", "4 A100s are required to train the 13B model", "Hardware: 8x H100, bf16". The GPU is
# what the code or its run needs, the precision another thing it needs. Not where the feature
# needs the GPU: the feature is the requirement's subject ("bf16 requires an A100", "we use
# flash-attention, which needs an H100", "for bf16, you need an A100"), or the GPU is for it
# ("an A100 is required for bf16", "you need an A100 to use bf16"); nor where the sentence is
# still a condition, a recommendation, a set of examples or a FLOPs figure ("if you enable bf16,
# training requires an A100", "a GPU with bf16 support, e.g. an A100", "we use the A100's bf16
# peak FLOPs"). "can" and "only" cancel no requirement: "You can train with train.sh; note that
# training requires 8 A100s" and "needs only one A100" still state the GPU.
_NEED = lazy(
    r"\b(?:requires?|required|needs?|must\s+(?:have|use|run\s+on|be\s+run\s+on)|(?:we|i)\s+(?:use[ds]?|are\s+using))\b|需要|要求",
    re.IGNORECASE,
)
# "8 A100 GPUs are required ...": the GPU before the requirement, in the same clause.
_NEEDED = lazy(r"[^.;:()]*?\b(?:is|are|be)\s+(?:\w+\s+)?(?:required|needed|necessary|mandatory)\b", re.IGNORECASE)
# A label that heads the hardware a run needs: "Hardware:", "**GPUs**:", "- Minimum requirements:",
# a table's first cell ("| Hardware | 8x A100 |"), or a column's header written into its cell.
_HARDWARE_LABEL = lazy(
    r"(?:^|\|)[\s*_>#+-]*((?:[\w-]+\s+){0,3}?(?:hardware|gpus?|requirements?|minimum|compute|resources|devices?)\b)[\s*_]*(?:[:：]|\|)",
    re.IGNORECASE,
)
_UNLESS = lazy(
    rf"\b(?:{_CONDITION_WORDS}|such\s+as|for\s+(?:example|instance)|like|equivalent|similar|elsewhere|else|older|"
    r"peak|t?flops|mfu|datasheet)\b|\be\.g\.|\?|如果|若|建议|推荐|例如|比如|支持",
    re.IGNORECASE,
)
# The GPU is for the feature: "an A100 for bf16", "an H100 to use FP8".
_FOR_FEATURE = lazy(
    rf"\b(?:for|to\s+(?:use|enable|run|support|get))\s+(?:(?:the|a|an|native|full)\s+)?(?:{_FEATURE_WORDS})",
    re.IGNORECASE,
)


def _required(sentence: str, start: int) -> bool:
    """Whether the GPU named at ``start`` of ``sentence`` is hardware the code or its run is
    said to need (a verb or a label before it, "... are required" after it), where neither the
    requirement's subject nor its purpose is a precision feature."""
    if _UNLESS().search(sentence) or _IMPERATIVE().search(sentence) or _FOR_FEATURE().search(sentence, start):
        return False
    before = sentence[:start]
    row = sentence.lstrip().startswith("|")
    cell = before.rfind("|") + 1 if row else 0
    subject_end = None
    for need in _NEED().finditer(before):
        subject_end = need.start()
    for label in _HARDWARE_LABEL().finditer(before):
        if subject_end is None or label.start(1) > subject_end:
            subject_end = label.end(1)
    if subject_end is None and _NEEDED().match(sentence, start):
        subject_end = start
    if subject_end is None:
        return False
    if not row:
        return not _FEATURE().search(sentence[:subject_end])
    # A table row: its first cell (the key) says what the row is about, the GPU's own cell what
    # is needed. Other cells are the row's other columns ("| 7B | GPUs: 8x A100 | bf16 |").
    opened = sentence.find("|")
    key_end = sentence.find("|", opened + 1)
    key = sentence[opened + 1 : key_end] if key_end >= 0 else ""
    if subject_end < cell:
        key_label = _HARDWARE_LABEL().match(sentence)  # "| Hardware | 8x A100, bf16 |"
        if key_label is None or key_label.end(1) != subject_end:
            return False  # a requirement in another cell
        subject = key
    else:
        subject = (key if cell > key_end else "") + " " + sentence[cell:subject_end]
    return not _FEATURE().search(subject)


def _advice(sentence: str, start: int) -> bool:
    """Whether the GPU named at ``start`` of ``sentence`` is only named as a condition, as
    advice, or as the machine a speed figure was measured on."""
    if _required(sentence, start):
        return False
    # "with only one 16GB RTX-4080 GPU" counts the GPUs of the run, it sets no condition (review 32)
    plain = _ONLY_COUNT().sub(" ", sentence)
    ours = _OUR_RUN().search(sentence)
    if ours is not None and not _CONDITIONAL().search(sentence[: ours.start()] + sentence[ours.end():]):
        return False  # "4 x A40 48G: we can train Gemma-7B with max_length 4096": the authors' runs
    if _CONDITIONAL().search(plain) or _IMPERATIVE().search(sentence) or _HYPOTHETICAL().search(sentence[:start]):
        return True
    if _PERFORMANCE().search(sentence) and not _TRAINED_OR_TESTED().search(sentence):
        return True
    if _SETTING_ON().match(sentence, 0, start) and _LABEL_END().match(sentence, start):
        return False  # "- BF16 on RTX 3090.": a label of what the run used, in a list of its settings
    return bool(_FEATURE().search(sentence)) and not _RAN().search(sentence)


# A sentence that is a label of a run's setting and nothing more: "BF16 on RTX 3090.", "fp16
# mixed precision on a V100" (a bullet of a list of what a run used, beside its batch size and
# learning rate): the precision and the GPU it ran on, no verb. Advice says more ("use BF16 on
# an A100", "BF16 is faster on A100", "BF16 if you have an A100").
_SETTING_ON = lazy(
    rf"\W*(?:(?:{_FEATURE_WORDS})[\w-]*\s+)+(?:training\s+)?(?:on|with)\s+"
    r"(?:(?:an?\s+)?single\s+|an?\s+|one\s+|\d+\s*[x×]\s*)?(?:nvidia\s+|geforce\s+|tesla\s+)?$",
    re.IGNORECASE,
)
# ... and after the GPU's name, only its end ("RTX 3090.", "A100-80GB")
_LABEL_END = lazy(r"[\w -]{1,24}?[\W_]*$")


# "only" that counts GPUs ("with only one 16GB RTX-4080", "only a single T4"), not a condition
_ONLY_COUNT = lazy(r"\bonly\s+(?=(?:one|a|an|a\s+single|single|two|\d+)\b)", re.IGNORECASE)
# "we can train", "we were able to fine-tune", "only tested on": what the authors ran, not advice
# "only ran / was only run / only tested on", "tested only on": the one GPU the authors ran on
_OUR_RUN = lazy(
    r"\bwe\s+(?:can|could|were\s+able\s+to|are\s+able\s+to)\s+(?:train|fine-?tune|run|fit|pre-?train)\b|"
    r"\bonly\s+(?:been\s+)?(?:run|ran|tested|trained|validated|benchmarked)\b|"
    r"\b(?:run|ran|tested|trained|validated|benchmarked)\s+only\b|"
    # "All scripts can run on a single A100-80GB GPU": what the code was made to fit, not advice to
    # the reader ("you can run it on an A100" stays advice)
    r"\b(?:scripts?|code|models?|experiments?|everything)\s+(?:can|could)\s+(?:be\s+)?(?:run|trained|fine-?tuned|executed)\b|"
    # the same said of the project with no subject ("Can be trained on Google Colab with A100 40GB")
    r"^\W*(?:can|could)\s+be\s+(?:run|trained|fine-?tuned|executed)\b|"
    # a run told in the past tense: "Training ran on Colab with an L4", "was trained on 4 x A100"
    r"\b(?:ran|(?:was|were)\s+(?:run|trained|tested|fine-?tuned))\s+(?:on|with|using)\b",
    re.IGNORECASE,
)


# "... for A100", "... for the H100", "native on an RTX 4090": the GPU a note on a line of code
# says the line is set for.
# Also the machine a note says the line was run with ("bf16 [i9 185H с RTX 4000 Ada]", review
# 33a: Russian "с", with): "with", "using", "@" and their Russian and German words.
_FOR_GPU = lazy(
    r"(?:\b(?:for|on|with|using|mit|auf)|(?<![\w])(?:с|на)|@)\s*(?:the\s+|an?\s+|one\s+|my\s+)?(?:nvidia\s+|tesla\s+|geforce\s+)?$",
    re.IGNORECASE,
)


def _set_for(note: str, start: int) -> bool:
    """Whether a note on a line of code (``dtype=torch.bfloat16,  # bf16 weights for A100/H100``)
    says the line's precision is set for the GPU named at ``start``: it names a precision, and
    its GPUs follow a "for" (the first of them: "for A100/H100", "for A100 and H100"), with no
    condition or comparison ("bf16 if on an A100", "faster for A100"), or the GPU the note says
    has it natively ("A100 native bfloat16": the author chose it for that card). A bare GPU
    (``# A100``) says what the line needs, nothing of where the code runs."""
    if not _FEATURE().search(note) or _CONDITIONAL().search(note):
        return False
    matches = [m for m in (_GPU_WORD().search(note), _BARE_GEFORCE().search(note)) if m is not None]
    if not matches:
        return False
    first = min(matches, key=lambda m: m.start())
    if first.start() > start:
        return False
    if _MACHINE().search(note):
        return True  # the machine the line was set on: its processor, or the computer, beside the GPU
    return _FOR_GPU().search(note, 0, first.start()) is not None or _NATIVE_AFTER().match(note, first.end()) is not None


# A computer a note names beside its GPU ("bf16 [Core Ultra 9 laptop + RTX 4000 Ada]", "bf16 on
# my i9-13900K / 4090 desktop"): the author's machine, where the line was set and run (review 33a).
_MACHINE = lazy(
    r"\b(?:laptop|desktop|workstation|i[3579][ -]?\d{3,5}[a-z]{0,2}|i[3579]|core\s+(?:ultra|i[3579])|ryzen|threadripper|xeon|epyc)\b",
    re.IGNORECASE,
)


# "A100 native bfloat16", "H100 natively supports bf16": the GPU a note says has the precision natively
_NATIVE_AFTER = lazy(r"[\s,:;(-]*(?:gpus?\s+)?(?:has\s+|with\s+)?(?:native(?:ly)?\b|原生)", re.IGNORECASE)


# A markdown table's rule under its header row: "|---|:--:|".
_TABLE_RULE = lazy(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)+\|?\s*$")


def _labelled_rows(text: str) -> str:
    """A text whose markdown tables carry a hardware column's header in each of its cells:
    under "| Model | GPUs | Precision |", the row "| 7B | 8x A100 | bf16 |" reads
    "| 7B | GPUs: 8x A100 | bf16 |", a label of what the run needs (see _required). Other
    columns are left as they are: a header's words would change what a row says."""
    lines = text.split("\n")
    header: Optional[List[str]] = None
    for i, line in enumerate(lines):
        if not line.lstrip().startswith("|"):
            header = None
        elif i and _TABLE_RULE().match(line) and lines[i - 1].lstrip().startswith("|"):
            names = [c.strip(" *_`") for c in lines[i - 1].strip().strip("|").split("|")]
            labels = [bool(n) and _HARDWARE_LABEL().match("|" + n + "|") is not None and not _FEATURE().search(n) and not _UNLESS().search(n) for n in names]
            header = names if any(labels[1:]) else None
            if header is not None:
                header = [n if label and j else "" for j, (n, label) in enumerate(zip(names, labels))]
        elif header is not None:
            cells = line.strip().strip("|").split("|")
            if len(cells) == len(header):
                lines[i] = "| " + " | ".join(f"{h}: {c.strip()}" if h else c.strip() for h, c in zip(header, cells)) + " |"
    return "\n".join(lines)


def _spaced(text: str) -> str:
    """``text`` with its links cut out and its GPU counts spaced ("8xA100" → "8 x A100"), as
    every reading of GPUs in prose takes it."""
    return _COUNT().sub(lambda m: f"{m.group(1) or m.group(2)} x ", _URL().sub(" ", text))


def stated_in_text(text: str, note: bool = False) -> List[int]:
    """The capabilities of the GPUs a prose text states it runs on: every GPU named in a
    stating sentence, and every pre-Ampere GPU named at all (advice to a T4 user says T4
    users are expected). SLURM requests count as statements. A ``note`` (a comment at the end
    of a line of code: ``bf16=True,  # A100``) says what that line needs, not where the code
    runs: only the pre-Ampere GPUs it names count, unless it says whom the line's precision is
    for (``# bf16 weights for A100/H100``, ``# Use bfloat16 for A100``: the author set it for
    those GPUs, see :func:`_set_for`)."""
    found: List[int] = []

    def stated(capability: Optional[int], sentence: str, at: int) -> None:
        # every pre-Ampere GPU named; a newer one where the sentence states it (a note: where it
        # says the line is set for it)
        if capability is None:
            return
        if capability < NATIVE_BF16 or (_set_for(sentence, at) if note else not _advice(sentence, at)):
            found.append(capability)

    if _NEWER_ARCHITECTURES.search(text):
        found.extend(_stated_architectures(text, note))
    if "--" not in text and "SBATCH" not in text and not _may_name_a_gpu(text, exact=False):
        return found  # no SLURM request and no GPU name: not even the links are cut out
    text = _spaced(text)
    for match in _SLURM().finditer(text):
        requested = match.group(1).replace("_", " ")  # `gpu_a100`: the GPU after the underscore
        for gpu in _GPU_WORD().finditer(requested):
            capability = _capability(gpu.group(1))
            if capability is not None:
                found.append(capability)
        architecture = _ARCHITECTURE().search(requested)  # `--partition=hopper-prod`
        if architecture is not None:
            found.append(_ARCHITECTURES[architecture.group(1).lower()])
    if not _may_name_a_gpu(text):
        return found  # no sentence of it names one (most comments and docstrings)
    if "|" in text:
        text = _labelled_rows(text)
    for sentence in _SENTENCE().split(text):
        if ("--" in sentence or "SBATCH" in sentence) and _SLURM().search(sentence):
            continue  # read above
        for match in _INSTANCE().finditer(sentence):
            name = match.group(1).lower().split("-")[0]
            # `g5.2xlarge`, `a2-highgpu-1g`; not a task's number ("P2.1") or a section ("p3.")
            known = name in ("a2", "a3", "g2") or _INSTANCE_SIZE().match(sentence, match.end(1)) is not None
            if known:
                stated(_INSTANCE_GPU.get(name), sentence, match.start())
        for match in _GPU_WORD().finditer(sentence):
            if not _item_label(match, sentence, text) and not _SET_APART().search(sentence[: match.start()]):
                stated(_capability(match.group(1)), sentence, match.start())
        # a card's number alone: in a sentence about a GPU, or in a note that sets its line for
        # it ("bf16, native on 4090")
        if _GPU_CONTEXT().search(sentence) or (note and _FEATURE().search(sentence)):
            read = set()
            for match in _BARE_GEFORCE().finditer(sentence):
                before = sentence[: match.start()]
                read.add(match.start(1))
                if not _OPTION_BEFORE().search(before) and not _NAMED_BEFORE().search(before):
                    stated(_capability("rtx" + match.group(1)), sentence, match.start())
            for match in _GPU_THEN_NUMBER().finditer(sentence):
                if match.start(1) not in read:
                    stated(_capability("rtx" + match.group(1)), sentence, match.start(1))
    return found


# What a notebook's markdown says of the cells below it: they work only on, or need, a GPU
_ONLY_ON = lazy(r"\b(?:only\s+(?:works?|runs?)|(?:will|would|can)\s+only\s+(?:work|run)|needs?|requires?|required)\b", re.IGNORECASE)


def section_gpus(text: str) -> List[int]:
    """The GPUs a notebook's markdown cell says the code cells below it are written for: those
    it says the cells need or work only on ("This next cell will only work on an A100", even
    where another sentence points to a T4 example elsewhere: tune 46's F1); failing such a
    sentence, those it states and every older GPU it names at all. Advice ("Set bf16 to True
    with an A100") names no section's GPU."""
    if not _may_name_a_gpu(text, exact=False):
        return []
    text = _spaced(text)
    required: List[int] = []
    named: List[int] = []
    for sentence in _SENTENCE().split(text):
        needs = _ONLY_ON().search(sentence) is not None
        for match in _GPU_WORD().finditer(sentence):
            capability = _capability(match.group(1))
            if capability is None:
                continue
            if needs and not _HYPOTHETICAL().search(sentence[: match.start()]):
                required.append(capability)
            elif capability < NATIVE_BF16 or not _advice(sentence, match.start()):
                named.append(capability)
    return required or named


# What advice names in code: a code span (`use_bf16`, `--bf16 True`) or a command-line flag.
_CODE_SPAN = lazy(r"`([^`\n]+)`")
_FLAG = lazy(r"(?<![\w-])--([A-Za-z_][\w-]*)")
_IDENTIFIER = lazy(r"[A-Za-z_]\w*")
_NOT_A_SWITCH = frozenset({"True", "False", "None", "true", "false", "none"})


def advised_switches(text: str) -> FrozenSet[str]:
    """The switches a prose text tells the users of a GPU without native bf16 to set: the
    identifiers and flags a sentence of advice that names such a GPU writes as code ("If you are
    finetuning on a T4 instance which does not support bf16, set the `use_bf16` to `False`":
    use_bf16; "On a V100, replace `--bf16 True` with `--fp16 True`": bf16, fp16). A bf16 flag that
    reads one of them is the users' to turn off, as the project documents: its default is
    written for the newer GPUs the project names, not a defect of the code (review 41u's F1)."""
    if not _may_name_a_gpu(text, exact=False) or ("`" not in text and "--" not in text):
        return frozenset()
    text = _spaced(text)
    found: Set[str] = set()
    for sentence in _SENTENCE().split(text):
        if "`" not in sentence and "--" not in sentence:
            continue
        if not any(
            (capability := _capability(m.group(1))) is not None and capability < NATIVE_BF16 and _advice(sentence, m.start())
            for m in _GPU_WORD().finditer(sentence)
        ):
            continue
        for span in _CODE_SPAN().findall(sentence):
            words = _FLAG().sub(lambda m: " " + m.group(1), span).replace("-", "_")  # `--bf16 True`: bf16
            found.update(w for w in _IDENTIFIER().findall(words) if w not in _NOT_A_SWITCH)
        found.update(flag.replace("-", "_") for flag in _FLAG().findall(sentence))
    return frozenset(found)


# A GPU the sentence sets apart from the code's run: "one GPU instead of 2xT4", "a single GPU, not 2
# T4s", "rather than a V100": the machine an original was written for, not this code's.
_SET_APART = lazy(
    r"\b(?:instead\s+of|rather\s+than|not|in\s+place\s+of|replacing)\s+(?:(?:an?|the|two|one|\d+)\s+)?(?:x\s+)?"
    r"(?:nvidia\s+|tesla\s+)?$",
    re.IGNORECASE,
)
# A GPU name that is also a letter and a digit (T4, L4) labels an item of a test plan or an
# outline as often: "- T4) two concurrent requests -> 423" after T1) to T3). Such a name is a label
# where it heads its line and a bracket closes it ("T4)", "[T4]"), or where the text names the same
# letter with every lower number too ("T1", "T2", "T3" as words of their own). "- T4: 16 GB, use
# fp16" is the GPU.
_LABEL_HEAD = lazy(r"(?:^|\n)[ \t]*(?:[-*+>#]+[ \t]*|\(?\d+[.)][ \t]*)?\(?$")
_LABEL_CLOSE = lazy(r"^\s*[)\]]")


def _item_label(match: "re.Match", sentence: str, text: str) -> bool:
    """Whether a two-character GPU name (``T4``, ``L4``) is an item's label, not the GPU."""
    name = match.group(1)
    if len(name) != 2 or not name[1].isdigit():
        return False
    if _LABEL_HEAD().search(sentence[: match.start()]) and _LABEL_CLOSE().match(sentence[match.end():]):
        return True
    siblings = set(re.findall(rf"(?<![\w-]){name[0]}([0-9])(?![\w-])", text, re.IGNORECASE))
    return int(name[1]) > 1 and all(str(n) in siblings for n in range(1, int(name[1])))


# Architectures from Ampere on, as prose names them ("requires a GPU with NVIDIA Ampere
# architecture or newer", "tested on Hopper GPUs"); "Ada" alone is too common a word to be read.
_NEWER_ARCHITECTURES = re.compile(r"ampere|hopper|lovelace|blackwell", re.IGNORECASE)
_ARCHITECTURE_CONTEXT = lazy(r"\bgpus?\b|\barchitectures?\b|\barch\b|\bnvidia\b|\bcards?\b|\bsm_?\d", re.IGNORECASE)
# "pre-Ampere", "before Ampere", "older than Ampere", "non-Hopper": GPUs below it, not it
_BELOW_ARCHITECTURE = lazy(r"(?:\bpre-?|\bnon-?|\bbefore\s+|\bolder\s+than\s+|\bbelow\s+|\bprior\s+to\s+)$", re.IGNORECASE)


def _stated_architectures(text: str, note: bool) -> List[int]:
    """The capability of each architecture from Ampere on that a sentence about GPUs states
    the code runs on ("requires an NVIDIA Ampere GPU or newer"): never in advice ("if you have
    an Ampere GPU, use bf16"), never one it sets apart ("on pre-Ampere GPUs, use fp16"), and in a
    note only where it says whom the line is for (as for GPU names, :func:`stated_in_text`)."""
    out: List[int] = []
    for sentence in _SENTENCE().split(_URL().sub(" ", text)):
        if not _NEWER_ARCHITECTURES.search(sentence) or not _ARCHITECTURE_CONTEXT().search(sentence):
            continue
        for match in _ARCHITECTURE().finditer(sentence):
            capability = _ARCHITECTURES[match.group(1).lower()]
            if capability < NATIVE_BF16 or match.group(1).lower() == "ada" or _BELOW_ARCHITECTURE().search(sentence[: match.start()]):
                continue
            if _set_for(sentence, match.start()) if note else not _advice(sentence, match.start()):
                out.append(capability)
    return out


# Whether a text (after _COUNT and _URL) may name a GPU in any of its sentences: a match of
# _GPU_WORD or _INSTANCE in a sentence is one in the text (a sentence is bounded by spaces or a
# comma, which their lookarounds read as the sentence's ends), and a bare GeForce number holds
# these four digits. Most prose names none, and is not split into sentences. _NAMES_A_GPU scans
# slowly (a lookbehind at every character): first the cheap tests that every match passes, a
# digit (or a name without one) and, in the lowered text, one of the pairs that every name holds.
_NAMES_A_GPU = lazy(f"(?:{_GPU_WORD_PATTERN})|(?:{_INSTANCE_PATTERN})|[2345]0[89]0", re.IGNORECASE)


_DIGIT = re.compile(r"[0-9]")
# the names without a digit: "titan" (with an "i": sre folds "ı" to it), the DGX Spark and the Jetsons
_DIGITLESS = re.compile(r"titan|dgx[ -]?spark|jetson|agx|orin[ -]?nx|xavier[ -]?nx", re.IGNORECASE)
_NAME_PAIRS = re.compile(r"a[1-68]|[rg]tx|l4|h[128]|b[12]|p[1-5]|v1|t4|k8|g[2456]|0[89]0")


def _may_name_a_gpu(text: str, exact: bool = True) -> bool:
    """``exact``: also _NAMES_A_GPU. Without it, the test holds of a text before _COUNT and _URL
    too: neither makes a digit, a pair or a name without a digit (they insert " x " and " ")."""
    if _DIGITLESS.search(text):
        return True
    return bool(_DIGIT.search(text) and _NAME_PAIRS.search(text.lower()) and (not exact or _NAMES_A_GPU().search(text)))


# An Apple machine a text names (torch runs there on MPS or the CPU, never on CUDA): "Apple
# Silicon", "M3 Ultra", "MacBook Pro", "Mac Studio", "the MPS backend". macOS alone is not one:
# READMEs of GPU projects tell how to install on macOS too
_APPLE_MACHINE = lazy(
    r"\bapple\s+(?:silicon|m[1-5])\b|\bm[1-5]\s+(?:pro|max|ultra)\b|\bmac\s?book|\bmac\s+(?:studio|mini)\b|\bimac\b"
    r"|\bmps\s+(?:backend|device|support)|\b(?:runs?|running|tested|trained)\s+on\s+(?:an?\s+)?(?:mps|mac)\b|metal\s+performance\s+shaders",
    re.IGNORECASE,
)


# What every match of _APPLE_MACHINE holds, lowercased: a cheap test before the pattern.
_APPLE_WORDS = ("apple", "mac", "mps", "metal", "m1", "m2", "m3", "m4", "m5")


def names_an_apple_machine(text: str) -> bool:
    """Whether a text (a README's prose) names an Apple machine: Apple Silicon, an M-series
    chip, a MacBook, Mac Studio or Mac mini, or the MPS backend."""
    lowered = text.lower()
    if not any(word in lowered for word in _APPLE_WORDS):
        return False  # most texts (a module's whole prose): the pattern is never tried
    return _APPLE_MACHINE().search(text) is not None


def markdown_prose(text: str) -> str:
    """A markdown text without the code of its fenced blocks: a block's commands and
    variables (``t0, t1, ..., t4`` in a dump of a traced graph, ``--a10`` as an option) state no
    GPU. The ``#`` comments inside a block are kept (``#SBATCH --gres=gpu:a100:8``, ``# runs
    on 8xA100``): they are the author's words; but not a comment that heads an install of torch
    (``# CUDA 12.1 (most current Ampere/Ada/Hopper GPUs)`` above ``pip install ... cu121 torch``,
    beside ``# CUDA 11.8 (older GPUs)``): it says which build fits which card, for every reader."""
    out = []
    lines = list(fenced_lines(text.splitlines()))
    for n, (_, line, code) in enumerate(lines):
        if not code:
            out.append(line)
            continue
        at = line.find("#")
        if at < 0:
            continue
        if at == len(line) - len(line.lstrip()) and not _JOB_DIRECTIVE().match(line) and _TORCH_INSTALL().match(_command_after(lines, n)):
            continue  # "# CUDA 12.1 wheel (Ampere/Ada/Hopper GPUs)" above its `pip install torch`: which build fits which card
        out.append(line[at + 1:])
    return "\n".join(out)


def _command_after(lines, n: int) -> str:
    """The command on the code line after line ``n`` of a fenced block, with the lines it
    continues onto (``pip install --index-url ... \\`` then ``torch torchvision``); "" where
    the next line is no code."""
    parts = []
    for _, line, code in lines[n + 1 : n + 5]:
        if not code:
            break
        parts.append(line.rstrip().rstrip("\\").lstrip(" \t#"))
        if not line.rstrip().endswith("\\"):
            break
    return " ".join(parts)


# a command that installs torch (also commented out, an alternative the reader may choose:
# `_command_after` gives it without its `#`)
_TORCH_INSTALL = lazy(r"[!%]?(?:pip3?|uv\s+pip|conda|mamba|python3?\s+-m\s+pip)\s+install\b.*\b(?:torch|pytorch)\b", re.IGNORECASE)
# a scheduler's directive, not a comment (`#SBATCH --gres=gpu:a100`)
_JOB_DIRECTIVE = lazy(r"\s*#(?:SBATCH|PBS|\$|BSUB)\b")


# A Hugging Face Space's card, the YAML block that opens its README, names the hardware the
# Space runs on: `suggested_hardware: a10g-large` (the flavors `t4-small`, `l4x4`, `l40sx1`,
# `a100-large`, `h100x8`, `zero-a10g`; `cpu-basic` names no GPU).
_SPACE_HARDWARE = lazy(
    r"^suggested_hardware:[ \t]*[\"']?(?:zero-)?(t4|a10g|a100|h100|l40s|l4)(?:x\d+)?(?:-[a-z0-9]+)?[\"']?[ \t]*(?:#.*)?$",
    re.IGNORECASE | re.MULTILINE,
)


def space_card_hardware(text: str) -> List[int]:
    """The capability of the GPU a Hugging Face Space's card (the ``---`` YAML block a README
    opens with) suggests: the hardware the Space's app is written for and run on."""
    if not text.startswith("---"):
        return []
    end = text.find("\n---", 3)
    if end < 0:
        return []
    return [_capability(match.group(1)) for match in _SPACE_HARDWARE().finditer(text, 0, end)]


def summarise(capabilities: Iterable[int]) -> Optional[int]:
    """The lowest capability stated (a T4's 75 where a T4 and an A100 are named: the GPU a
    message names); None: none."""
    found = list(capabilities)
    return min(found) if found else None


# The note precision-lint's own fixes write above the bf16 probe (``fixes/plan.py``). It names
# GPUs to say where the probe falls back, not what the code targets: read as a statement, a
# fixed file would target a T4 and the next run would find more to fix than the first.
PROBE_COMMENT = "# bf16 runs natively from compute capability 8.0 (Ampere); T4, V100 and P100 fall back."


def split_source(source: str) -> Tuple[List[Tuple[str, bool]], str]:
    """(the comments and docstrings of a Python source, each with whether it is a note at the
    end of a line of code; its code with the comments cut out). Strings the code computes with
    are code, not prose: ``if "A100" in torch.cuda.get_device_name()`` states nothing, and
    ``"cuda"`` is a device."""
    prose: List[Tuple[str, bool]] = []
    lines = source.splitlines(keepends=True)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return (
            [(line.split("#", 1)[1], bool(line.split("#", 1)[0].strip())) for line in lines if "#" in line],
            "".join(line.split("#", 1)[0] for line in lines),
        )
    previous = tokenize.NEWLINE
    for i, token in enumerate(tokens):
        if token.type == tokenize.COMMENT:
            (row, col), (_, end) = token.start, token.end
            line = lines[row - 1] if row - 1 < len(lines) else ""
            if token.string.rstrip() != PROBE_COMMENT:
                prose.append((token.string.lstrip("#"), bool(line[:col].strip())))
            if line:
                lines[row - 1] = line[:col] + " " * (end - col) + line[end:]
            continue
        if token.type == tokenize.STRING and previous in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.NL):
            following = next((t.type for t in tokens[i + 1 :] if t.type != tokenize.COMMENT), tokenize.NEWLINE)
            if following in (tokenize.NEWLINE, tokenize.ENDMARKER):
                prose.append((token.string, False))  # a string alone as a statement: a docstring
        if token.type != tokenize.NL:
            previous = token.type
    return prose, "".join(lines)


# A string literal without its prefix, as the tokenizer reads it up to Python 3.11 (an f-string
# is one token): a backslash escapes the next character (in a raw string too), a
# single-quoted string stays on its line unless a backslash continues it.
_STRING_BODY = (
    r"""'''[^'\\]*(?:(?:\\(?:\r\n|[\s\S])|'(?!''))[^'\\]*)*'''"""
    r'''|"""[^"\\]*(?:(?:\\(?:\r\n|[\s\S])|"(?!""))[^"\\]*)*"""'''
    r"""|'[^'\\\r\n]*(?:\\(?:\r\n|[\s\S])[^'\\\r\n]*)*'"""
    r'''|"[^"\\\r\n]*(?:\\(?:\r\n|[\s\S])[^"\\\r\n]*)*"'''
)
# Comments and strings, left to right: a "#" outside every string starts a comment.
_COMMENTS_AND_STRINGS = lazy(r"#[^\r\n]*|" + _STRING_BODY)
# One string literal with its prefix, the whole text (not `"a" "b"`, not `("a")`).
_ONE_STRING = lazy(r"[A-Za-z]{0,2}(?:" + _STRING_BODY + ")")
# Line breaks other than "\n" and "\r\n": split_source's lines (str.splitlines) and the
# tokenizer's rows part there, which split_source itself answers for.
_OTHER_BREAKS = re.compile("[\v\f\x1c\x1d\x1e\x85\u2028\u2029]|\r(?!\n)")
# An f-string: from Python 3.12 the tokenizer reads inside it (nested quotes, comments).
_FSTRING = lazy(r"(?<!\w)(?:[fF][rR]?|[rR][fF])['\"]")


def prose_of(source: str, string_statements: Iterable[Tuple[int, int]]) -> List[Tuple[str, bool]]:
    """:func:`split_source`'s prose (its comments and docstrings, in the order written) of a
    source CPython compiles, without tokenizing it: its comments are found by one scan for
    comments and strings, its docstrings among ``string_statements``, the ``(start, end)``
    of each statement that is a string expression alone (read from the tree). Where lines
    break other than at ``\n`` and ``\r\n``, or on Python 3.12+ in a text with an f-string,
    or where a backslash continues a line around a docstring, :func:`split_source` answers."""
    if _OTHER_BREAKS.search(source) or (sys.version_info >= (3, 12) and _FSTRING().search(source)):
        return split_source(source)[0]
    found: List[Tuple[int, str, bool]] = []
    if "#" in source:
        for match in _COMMENTS_AND_STRINGS().finditer(source):
            text = match.group()
            if text[0] != "#" or text.rstrip() == PROBE_COMMENT:
                continue
            start = match.start()
            line_start = source.rfind("\n", 0, start) + 1
            found.append((start, text.lstrip("#"), bool(source[line_start:start].strip())))
    for start, end in string_statements:
        line_start = source.rfind("\n", 0, start) + 1
        if source[line_start:start].strip(" \t"):
            continue  # after `;` or a header's colon: no docstring
        if line_start and source[:line_start].rstrip("\r\n").endswith("\\"):
            return split_source(source)[0]  # maybe a continued line (or a comment ending in "\\")
        text = source[start:end]
        if _ONE_STRING().fullmatch(text) is None:
            continue  # `"a" "b"`, `("a")`: not one string token
        line_end = source.find("\n", end)
        rest = source[end : line_end if line_end >= 0 else len(source)].strip()
        if rest.startswith("\\"):
            return split_source(source)[0]
        if rest and rest[0] != "#":
            continue  # `"a"; x = 1`
        found.append((start, text, False))
    found.sort(key=lambda f: f[0])
    return [(text, note) for _, text, note in found]


def stated_capability(prose: Iterable[Tuple[str, bool]]) -> Optional[int]:
    """What a Python source's comments and docstrings (:func:`split_source`) state (see
    :func:`stated_in_text`)."""
    return summarise(c for text, note in prose for c in stated_in_text(text, note))


# --- the memory a model's weights need -------------------------------------------------
# The largest memory of a GPU without native bf16 or FlashAttention-2: the Quadro RTX 8000 and
# RTX 6000 (Turing, 48 GB; a V100 has 32 GB, a T4 16 GB). Weights that need more than that on
# one GPU fit only an 80 GB A100, an H100/H200 or newer: every one of them sm80+.
LARGEST_PRE_AMPERE_GB = 48
# A checkpoint's name states its size in billions of parameters ("deepseek-coder-33b-instruct",
# "Llama-2-70b-hf", "Mixtral-8x7B": eight experts of 7B, the memory of all of them; "Qwen3-30B-A3B":
# 30B stored, 3B active). A letter before the number ("A3B") is no size of the weights.
_BILLIONS = lazy(r"(?<![A-Za-z0-9.])(?:(\d+)\s*[x×]\s*)?(\d+(?:\.\d+)?)\s*b(?![A-Za-z0-9])", re.IGNORECASE)
# Names of quantized checkpoints (4 or 8 bits a weight, or less): their size says little of memory.
_QUANTIZED_NAME = lazy(r"gptq|awq|gguf|ggml|exl2|bnb|nf4|fp8|int[48]|[248]-?bits?\b|\bq[2-8]_", re.IGNORECASE)


def billions_of_parameters(model_name: str) -> Optional[float]:
    """The number of parameters (in billions) a checkpoint's name states, where its weights are
    stored in 16 bits or more (a quantized checkpoint's name gives None). A hub name
    (``org/name``) states it in its name; a local path in its nearest folder that states one (a
    fine-tune's output keeps its base's name above its checkpoints:
    ``/data/ckpt/QwQ-32B-lora/final-0708``, review 30a)."""
    if _QUANTIZED_NAME().search(model_name):
        return None
    parts = [p for p in model_name.replace("\\", "/").split("/") if p]
    local = model_name.startswith(("/", "./", "../", "~")) or len(parts) > 2
    for part in reversed(parts if local else parts[-1:]):
        found = None
        for experts, size in _BILLIONS().findall(part):
            billions = float(size) * (int(experts) if experts else 1)
            found = billions if found is None else max(found, billions)
        if found is not None:
            return found
    return None


def needs_an_80gb_gpu(billions: float, bytes_per_parameter: int = 2) -> bool:
    """Whether weights of ``billions`` parameters, whole on one GPU, fit no GPU without native bf16
    (the weights alone, before activations, a cache or the CUDA context's own memory)."""
    return billions * bytes_per_parameter >= LARGEST_PRE_AMPERE_GB


# --- notebooks -------------------------------------------------------------------------
# Kaggle's accelerator names (`"gpu"` is the legacy P100 session).
_KAGGLE = {"gpu": 60, "nvidiateslap100": 60, "nvidiateslat4": 75, "nvidiat4": 75, "nvidial4": 89, "nvidiaa100": 80, "nvidiah100": 90}


def notebook_capability(metadata: dict, markdown: Iterable[str] = (), outputs: Iterable[str] = ()) -> Optional[int]:
    """What a notebook's metadata (Colab's ``gpuType``, Kaggle's ``accelerator``), its
    markdown cells and its saved outputs (:func:`recorded_gpus`) state about its GPU."""
    found: List[int] = []
    for text in outputs:
        found.extend(recorded_gpus(text))
    if not isinstance(metadata, dict):
        metadata = {}
    colab = metadata.get("colab") if isinstance(metadata.get("colab"), dict) else {}
    gpu_type = colab.get("gpuType") or metadata.get("gpuType")
    if isinstance(gpu_type, str) and _capability(gpu_type.replace("-", "").replace("_", "")) is not None:
        found.append(_capability(gpu_type.replace("-", "").replace("_", "")))
    elif str(metadata.get("accelerator", "")).upper() == "GPU":
        found.append(75)  # a Colab GPU session without a type: the free T4
    kaggle = metadata.get("kaggle") if isinstance(metadata.get("kaggle"), dict) else {}
    accelerator = str(kaggle.get("accelerator", "")).lower().replace("_", "").replace("-", "")
    if accelerator in _KAGGLE:
        found.append(_KAGGLE[accelerator])
    instance = metadata.get("instance_type")  # SageMaker Studio's: `ml.g4dn.xlarge`, a T4
    capability = instance_capability(instance) if isinstance(instance, str) else None
    if capability is not None:
        found.append(capability)
    for text in markdown:
        found.extend(stated_in_text(markdown_prose(text)))
    return summarise(found)


def notebook_markdown(data: dict) -> List[str]:
    """The text of a notebook's markdown cells (its JSON, as loaded)."""
    return [
        "".join(c["source"]) if isinstance(c.get("source"), list) else str(c.get("source", ""))
        for c in data.get("cells", ())
        if isinstance(c, dict) and c.get("cell_type") == "markdown"
    ]


def notebook_outputs(data: dict) -> List[str]:
    """The text a notebook's code cells printed when it last ran (``stream`` outputs and the
    ``text/plain`` of results): the record of the run it is."""
    out: List[str] = []
    for cell in data.get("cells", ()):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        for output in cell.get("outputs") or ():
            if not isinstance(output, dict):
                continue
            text = output.get("text") if output.get("output_type") == "stream" else (output.get("data") or {}).get("text/plain")
            if text:
                out.append("".join(text) if isinstance(text, list) else str(text))
    return out


# A line of a run's own output that names the device it ran on: `nvidia-smi`'s table
# ("| 0  Tesla T4  Off |"), `torch.cuda.get_device_name()` printed ("NVIDIA A100-SXM4-80GB"),
# a library's banner or warning ("Your device 'NVIDIA H100 PCIe' ...", "GPU: NVIDIA L4").
_DEVICE_LINE = lazy(r"nvidia|tesla|geforce|quadro|\bgpu\b|cuda", re.IGNORECASE)


def recorded_gpus(text: str) -> List[int]:
    """The GPUs a recorded run names as its device (a notebook's saved outputs): the run the
    code is in happened there. Only lines that speak of a device are read (a dataset's text
    in an output says nothing)."""
    if not _may_name_a_gpu(text, exact=False):
        return []
    found: List[int] = []
    for line in text.splitlines():
        if _DEVICE_LINE().search(line):
            found.extend(c for c in (_capability(m.group(1)) for m in _GPU_WORD().finditer(line)) if c is not None)
    return found


def notebook_device(metadata: dict, markdown: Sequence[str] = ()) -> Optional[str]:
    """``"tpu"`` when the notebook's session is a TPU one (Colab or Kaggle): its metadata, or a
    markdown line that sets the session's accelerator as the notebook's settings name it
    (``- Accelerator: TPU v5e-8``); ``"cpu"`` when its metadata names a SageMaker instance
    without a GPU (``"instance_type": "ml.m5.2xlarge"``); else None."""
    if not isinstance(metadata, dict):
        return None
    kaggle = metadata.get("kaggle") if isinstance(metadata.get("kaggle"), dict) else {}
    if str(metadata.get("accelerator", "")).upper() == "TPU" or str(kaggle.get("accelerator", "")).lower().startswith("tpu"):
        return "tpu"
    if any(_TPU_SESSION().search(text) for text in markdown):
        return "tpu"
    instance = metadata.get("instance_type")
    if isinstance(instance, str) and _CPU_INSTANCE().match(instance.strip()):
        return "cpu"  # SageMaker Studio's kernel on an instance without a GPU (`ml.m5.2xlarge`)
    return None


# SageMaker's instance types without a GPU: the burstable, general-purpose, compute- and
# memory-optimised families (`ml.t3.medium`, `ml.m5.2xlarge`, `ml.c5.xlarge`, `ml.r5.large`)
_CPU_INSTANCE = lazy(r"ml\.(?:t[23]|m[4-7][a-z]*|c[4-7][a-z]*|r[5-7][a-z]*)\.[\w]+$", re.IGNORECASE)


# a markdown line that sets the session's accelerator: `- Accelerator: TPU v5e-8`, `**Accelerator** = TPU`
_TPU_SESSION = lazy(r"(?im)^[\s>*_-]*accelerator[\s*_]*[:=][\s*_`]*tpu\b")
