"""A run that reads its files from a macOS home folder and holds no CUDA code runs on a Mac
(MPS or the CPU): the capability of a CUDA GPU says nothing there, so MP201/MP202 are silent
(capability._tree_marks' ``macos_home``, mp201._runs_on_a_mac). Held-out review 25: four
bf16 findings on a Mac training project whose message claimed a pre-Ampere NVIDIA card."""
import pytest

from conftest import findings_in, write_tree

from precision_lint.facts.extractors.capability import _tree_marks
from precision_lint.semantic.index import build_index

LOADER = '''
import torch
from transformers import AutoModelForCausalLM


def load():
    path = {path}
    return AutoModelForCausalLM.from_pretrained(path, dtype=torch.bfloat16)
'''
TRAIN = '''
from transformers import Trainer, TrainingArguments
from loader import load

model = load(){placed}
args = TrainingArguments(output_dir="out", bf16=True)
Trainer(model=model, args=args).train()
'''


def _mp2(root):
    return sorted((d.path.rsplit("/", 1)[-1], d.code) for d in findings_in(root) if d.code.startswith("MP2"))


@pytest.mark.parametrize("path", ['"/Users/me/models/phi"', 'f"/Users/{user}/models/phi"'], ids=["literal", "f-string"])
def test_a_run_whose_loader_reads_a_macos_home_is_a_mac_run(tmp_path, path):
    root = write_tree(tmp_path, {"loader.py": LOADER.format(path=path), "train.py": TRAIN.format(placed="")})
    assert _mp2(root) == []


@pytest.mark.parametrize(
    "path",
    ['"/home/me/models/phi"', '"C:/Users/me/models/phi"', '"microsoft/phi-2"'],
    ids=["linux-home", "windows-home", "hub-name"],
)
def test_other_paths_say_nothing_about_the_machine(tmp_path, path):
    root = write_tree(tmp_path, {"loader.py": LOADER.format(path=path), "train.py": TRAIN.format(placed="")})
    assert _mp2(root) == [("loader.py", "MP201"), ("train.py", "MP201")]


@pytest.mark.parametrize("placed", [".cuda()", '.to("cuda")'])
def test_cuda_code_anywhere_in_the_run_makes_it_a_gpu_run(tmp_path, placed):
    root = write_tree(tmp_path, {"loader.py": LOADER.format(path='"/Users/me/models/phi"'), "train.py": TRAIN.format(placed=placed)})
    assert _mp2(root) == [("loader.py", "MP201"), ("train.py", "MP201")]


def test_a_mac_path_in_one_run_leaves_another_run_of_the_module_judged(tmp_path):
    files = {
        "loader.py": LOADER.format(path="name"),
        "mac.py": 'from loader import load\nDATA = "/Users/me/data"\nload()\n',
        "gpu.py": 'import torch\nfrom loader import load\nload().to("cuda")\n',
    }
    files["loader.py"] = files["loader.py"].replace("def load():\n    path = name", "def load(path='phi'):\n    pass")
    root = write_tree(tmp_path, files)
    assert _mp2(root) == [("loader.py", "MP201")]


@pytest.mark.parametrize(
    "source, expected",
    [
        ('p = "/Users/me/x.pt"\n', True),
        ('p = "/Users/me/x.pt"\nimport torch\ntorch.cuda.empty_cache()\n', False),  # CUDA code
        ('"""/Users/me/x.pt holds the weights."""\n', False),  # a docstring's words are no path read
        ('p = "C:\\\\Users\\\\me\\\\x.pt"\n', False),
    ],
)
def test_the_mark_is_read_from_string_values(source, expected):
    assert _tree_marks(build_index(source)).macos_home is expected


@pytest.mark.parametrize(
    "readme, placed, found",
    [
        ("Fine-tuned on a Mac Studio M3 Ultra (128 GB unified memory).", "", []),
        ("Runs on Apple Silicon with the MPS backend.", "", []),
        ("Fine-tuned on a Mac Studio M3 Ultra and on an NVIDIA T4.", "", [("loader.py", "MP201"), ("train.py", "MP201")]),  # a GPU stated too
        ("Fine-tuned on a Mac Studio M3 Ultra.", ".cuda()", [("loader.py", "MP201"), ("train.py", "MP201")]),  # CUDA code
        ("A fine-tuning recipe.", "", [("loader.py", "MP201"), ("train.py", "MP201")]),
    ],
    ids=["mac-studio", "apple-silicon", "mac-and-t4", "mac-but-cuda-code", "no-machine"],
)
def test_a_run_whose_readme_names_only_a_mac_is_a_mac_run(tmp_path, readme, placed, found):
    """Review 26a: a vision-language fork's guide names a Mac Studio M3 Ultra with MPS; its
    scripts hold no CUDA code. bf16 there runs on MPS, not on a CUDA GPU."""
    root = write_tree(tmp_path, {
        ".git/HEAD": "",
        "README.md": f"# tuner\n\n{readme}\n",
        "loader.py": LOADER.format(path='"org/phi"'),
        "train.py": TRAIN.format(placed=placed),
    })
    assert _mp2(root) == found


@pytest.mark.parametrize(
    "comment, found",
    [
        ("# Runs on MPS (Apple Silicon): bfloat16 for memory\n", []),
        ('"""Fine-tunes the model on a MacBook Pro."""\n', []),
        ("# tested on mps\n", []),
        ("# The mps numbers in the paper were measured elsewhere\n", [("loader.py", "MP201"), ("train.py", "MP201")]),
    ],
    ids=["comment", "docstring", "tested-on", "word-only"],
)
def test_a_run_whose_code_says_it_runs_on_a_mac_is_a_mac_run(tmp_path, comment, found):
    """Review 27b: a script that says in its own comments where it runs (Apple's MPS backend),
    with no CUDA code in the run."""
    loader = comment + LOADER.format(path='"org/phi"')
    root = write_tree(tmp_path, {"loader.py": loader, "train.py": TRAIN.format(placed="")})
    assert _mp2(root) == found
    cuda = write_tree(tmp_path / "cuda", {"loader.py": loader, "train.py": TRAIN.format(placed="\nmodel.cuda()")})
    assert _mp2(cuda) != []
