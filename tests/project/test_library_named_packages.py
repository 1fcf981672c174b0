"""A call of an installed package's name (``diffusers.…``) is the tree's own code only where the
linted tree holds that package: the package's own repository (``src/diffusers``) or a top-level
copy. A project that imports the installed library keeps it a library: no edge of its call graph
ends there, and what the library's names mean (a loader's float16 weights) still holds."""
from conftest import config, write_tree

from precision_lint.engine import Engine
from precision_lint.facts.extract import extract_facts
from precision_lint.project.model import Project
from precision_lint.workspace.discovery import ImportRoots, module_name

FILM = """
import torch
from torch import nn


class FilmLayer(nn.Module):
    def forward(self, x, mask):
        return torch.where(mask > 0, x @ x.transpose(-1, -2), -1e10).softmax(-1)


class FilmDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = FilmLayer()
"""
TRAIN = """
import torch
from diffusers import FilmDecoder, UNet2DModel

decoder = FilmDecoder()
unet = UNet2DModel.from_pretrained("m", torch_dtype=torch.float16)
"""


def _callers(root, rels):
    roots = ImportRoots(())
    facts = []
    for rel in rels:
        path = str(root / rel)
        facts.append(extract_facts((root / rel).read_text(), path, *module_name(path)))
    project = Project(facts, lambda m: roots(m.path, m.root))
    return project.callgraph._callers


def test_the_librarys_own_package_makes_edges(tmp_path):
    root = write_tree(tmp_path / "proj", {
        ".git/HEAD": "", "src/diffusers/__init__.py": "from .film import FilmDecoder\n",
        "src/diffusers/film.py": FILM, "train.py": TRAIN,
    })
    callers = _callers(root, ["src/diffusers/__init__.py", "src/diffusers/film.py", "train.py"])
    assert "diffusers.film.FilmDecoder.__init__" in callers["diffusers.film.FilmLayer"]
    assert "train" in callers["diffusers.film.FilmDecoder"]


def test_a_project_importing_the_installed_library_has_no_edge_into_it(tmp_path):
    root = write_tree(tmp_path / "proj", {".git/HEAD": "", "pkg/__init__.py": "", "pkg/film.py": FILM, "train.py": TRAIN})
    callers = _callers(root, ["pkg/__init__.py", "pkg/film.py", "train.py"])
    assert "pkg.film.FilmDecoder.__init__" in callers["pkg.film.FilmLayer"]
    assert not any(name.startswith("diffusers") for name in callers)


def test_a_library_loaders_float16_weights_still_count_in_the_librarys_own_tree(tmp_path):
    """``UNet2DModel.from_pretrained(..., torch_dtype=torch.float16)`` of the package's own tree is
    still the loader the knowledge describes: its weights are float16 (MP101 on training them)."""
    text = (
        "import torch\nfrom diffusers import UNet2DModel\n\n"
        "unet = UNet2DModel.from_pretrained('m', torch_dtype=torch.float16).cuda()\n"
        "opt = torch.optim.AdamW(unet.parameters())\nscaler = torch.amp.GradScaler('cuda')\n"
        "scaler.scale(unet(x).sample.mean()).backward()\nscaler.step(opt)\n"
    )
    for package in ("src/diffusers", "pkg"):
        root = write_tree(tmp_path / package.replace("/", "_"), {
            "proj/.git/HEAD": "", f"proj/{package}/__init__.py": "class UNet2DModel:\n    pass\n", "proj/train.py": text,
        })
        found = Engine(config(), ["MP101"]).run_paths([str(root / "proj")]).diagnostics
        assert [(d.code, d.span.line) for d in found] == [("MP101", 4)], package
