"""MP402 judges the dtype of the tensor a constant meets, in the runs that execute it: run-wide
evidence (a frozen fp16 VAE, fp16 autocast elsewhere, a merge CLI loading fp16) says nothing
about an eps in an fp32 module or an integer count; code that never runs is no evidence."""
from conftest import config, lint

from precision_lint.engine import Engine

CODE = "MP402"

ENCODER = """
import torch
from torch import nn
from diffusers import AutoencoderKL


class Encoder(nn.Module):
    def forward(self, x, ids):
        x = x / (x.norm(dim=-1, keepdim=True) + 1e-8)
        token_counts = (ids != 0).sum(-1, keepdim=True)
        mean = x.sum(1) / (token_counts + 1e-8)
        return mean


vae = AutoencoderKL.from_pretrained("m", subfolder="vae", torch_dtype=torch.float16)
vae.requires_grad_(False)
encoder = Encoder().cuda()
{cast}
"""


def test_an_eps_in_an_fp32_module_is_not_judged_by_another_models_fp16_weights():
    assert lint(ENCODER.format(cast=""), CODE) == []


def test_a_module_apex_makes_float16_is_judged_as_one_cast_to_float16():
    """apex's ``amp.initialize(model, optimizer, opt_level="O2")`` (or ``"O3"``) casts the
    model's weights to float16, as ``model.half()`` does (review 25a: a ``-1e20`` attention mask
    that raises at the first forward). ``"O1"`` patches functions instead, ``"O0"`` is float32,
    and a level the user picks on the command line casts nothing by itself."""
    apex = ENCODER.replace("import torch\n", "import torch\nfrom apex import amp\n", 1)
    opt = "optimizer = torch.optim.AdamW(encoder.parameters())\n"
    (d,) = lint(apex.format(cast=opt + 'encoder, optimizer = amp.initialize(encoder, optimizer, opt_level="O2")'), CODE)
    assert d.span.line == 9 and "casts the model to float16" in d.message
    assert len(lint(apex.format(cast=opt + 'encoder, optimizer = amp.initialize(encoder, optimizer, opt_level="O3")'), CODE)) == 1
    for level in ('"O1"', '"O0"', "args.opt_level"):
        assert lint(apex.format(cast=opt + f"encoder, optimizer = amp.initialize(encoder, optimizer, opt_level={level})"), CODE) == []


def test_an_eps_in_a_module_cast_to_float16_is_reported():
    (d,) = lint(ENCODER.format(cast="encoder.half()"), CODE)  # not the integer count, line 10
    assert d.span.line == 8
    assert "adds 0" in d.message and "casts the model to float16" in d.message


LAYERS = """
import torch
from torch import nn


class Attention(nn.Module):
    def forward(self, q, k, mask):
        scores = q @ k.transpose(-1, -2)
        return scores.masked_fill(mask, -1e9).softmax(-1)
"""
EVAL_UTILS = """
import torch


def evaluate_amp(model, batch):
    with torch.autocast("cuda", dtype=torch.float16):
        return model(**batch)
"""
TRAIN = """
import torch
from layers import Attention
from eval_utils import evaluate_amp

lr = 1e-4
model = Attention().cuda()
{call}
"""


def _lint_tree(tree, files):
    root = tree(files)
    return Engine(config(), [CODE]).run_paths([str(root / "proj")]).diagnostics


def test_fp16_autocast_in_a_helper_the_run_never_calls_is_no_evidence(tree):
    files = {"proj/layers.py": LAYERS, "proj/eval_utils.py": EVAL_UTILS, "proj/train.py": TRAIN.format(call="")}
    assert _lint_tree(tree, files) == []


def test_fp16_autocast_in_a_helper_the_run_calls_is_evidence(tree):
    files = {
        "proj/layers.py": LAYERS,
        "proj/eval_utils.py": EVAL_UTILS,
        "proj/train.py": TRAIN.format(call="evaluate_amp(model, batch)"),
    }
    (d,) = _lint_tree(tree, files)
    assert d.path.endswith("layers.py") and "fp16 autocast" in d.message


LIBRARY_COPY = {
    "setup.py": 'from setuptools import setup\nsetup(name="mylib", package_dir={"": "src"}, packages=["mylib"])\n',
    "src/mylib/__init__.py": "from .modeling import Encoder\nfrom .trainer import Trainer\n",
    "src/mylib/modeling.py": (
        "import torch.nn as nn\n\n\nclass Encoder(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        return self.fc(x)\n"
    ),
    "src/mylib/trainer.py": (
        "import torch\n\n\nclass Trainer:\n    def __init__(self, model, half_eval=False):\n        self.model = model\n"
        "        self.half_eval = half_eval\n\n    def evaluate(self, batch):\n        model = self.model\n"
        "        if self.half_eval:\n            model = model.half().to('cuda')\n        with torch.no_grad():\n"
        "            return model(batch)\n\n\ndef search(model_init):\n    return Trainer(model_init())\n"
    ),
    "examples/summ/modeling_summ.py": (
        "import torch\nfrom torch import nn\nfrom mylib import Encoder\n\n\nclass Summarizer(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.enc = Encoder()\n\n"
        "    def forward(self, x, mask):\n        scores = torch.matmul(self.enc(x), x.transpose(-1, -2))\n"
        "        return scores.masked_fill(mask, -1e18).softmax(-1)\n"
    ),
    "examples/summ/run_summ.py": (
        "import torch\nfrom modeling_summ import Summarizer\n\n\ndef main(use_trainer=False):\n"
        "    model = Summarizer().eval()\n    CALL\n\n\nif __name__ == '__main__':\n    main()\n"
    ),
}


def _library_copy_run(tmp_path, call):
    for rel, text in LIBRARY_COPY.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("CALL", call))
    return [d for d in Engine(config(), ["MP402"], jobs=1).run_paths([str(tmp_path)]).diagnostics]


def test_a_half_cast_in_a_method_of_a_class_only_an_uncalled_helper_creates_is_no_evidence(tmp_path):
    """A copy of a library in the repository: its Trainer casts to float16 for evaluation, and
    only its own `search` helper (never called here) creates a Trainer; the script never does."""
    assert _library_copy_run(tmp_path, "print(model(torch.randn(2, 4, 8), torch.zeros(2, 4, 4, dtype=torch.bool)))") == []


def test_the_same_trainer_created_by_the_script_runs_its_methods(tmp_path):
    call = "from mylib import Trainer\n    print(Trainer(model, half_eval=True).evaluate(torch.randn(2, 4, 8)))"
    assert len(_library_copy_run(tmp_path, call)) == 1


LAZY_PACKAGE = {
    # the shape of diffusers' and transformers' package `__init__`: every submodule named for a
    # type checker (and for a debugging switch), a lazy module that imports one on first use
    "proj/lib/__init__.py": (
        "from typing import TYPE_CHECKING\n\nfrom .utils import SLOW_IMPORT, LazyModule\n\n"
        "_structure = {'attention': ['Attention'], 'loaders': ['load_weights']}\n\n"
        "if TYPE_CHECKING or SLOW_IMPORT:\n    try:\n        import torch\n    except ImportError:\n        pass\n"
        "    else:\n        from .attention import Attention\n        from .loaders import load_weights\n"
        "else:\n    import sys\n\n    sys.modules[__name__] = LazyModule(__name__, _structure)\n"
    ),
    "proj/lib/utils.py": (
        "import os\n\nSLOW_IMPORT = os.environ.get('SLOW_IMPORT', '0') == '1'\n\n\n"
        "class LazyModule:\n    def __init__(self, name, structure):\n        self.name = name\n"
    ),
    "proj/lib/attention.py": LAYERS,
    "proj/lib/loaders.py": "import torch\n\n\ndef load_weights(model):\n    return model\n",
    "proj/train.py": (
        "import torch\nfrom transformers import AutoModel\n<import>\n\n"
        "model = AutoModel.from_pretrained('m').cuda()\n"
        "with torch.autocast('cuda', dtype=torch.float16):\n    model(torch.ones(1, 4, dtype=torch.long))\n"
    ),
}


def _lazy_run(tree, line):
    files = {path: text.replace("<import>", line) for path, text in LAZY_PACKAGE.items()}
    return _lint_tree(tree, files)


def test_model_code_a_package_imports_only_for_a_type_checker_is_not_in_the_run(tree):
    """A lazy package ``__init__`` (diffusers, transformers) names every submodule under ``if
    TYPE_CHECKING or SLOW_IMPORT:``; the script's fp16 autocast says nothing about a model
    whose module only that import names: it never runs there."""
    assert _lazy_run(tree, "from lib import load_weights") == []


def test_model_code_the_script_imports_itself_is_in_the_run(tree):
    (d,) = _lazy_run(tree, "from lib.attention import Attention")
    assert d.path.endswith("attention.py") and "fp16 autocast" in d.message


BUILT_ELSEWHERE = {
    "proj/pkg/__init__.py": "from .film import FilmDecoder\nfrom .unet import TinyUNet\n",
    "proj/pkg/film.py": (
        "import torch\nfrom torch import nn\n\n\nclass FilmDecoder(nn.Module):\n"
        "    def __init__(self, dim=8):\n        super().__init__()\n        self.proj = nn.Linear(dim, dim)\n\n"
        "    def forward(self, x, mask):\n        scores = self.proj(x) @ x.transpose(-1, -2)\n"
        "        return torch.where(mask > 0, scores, -1e10).softmax(-1)\n"
    ),
    "proj/pkg/unet.py": (
        "from torch import nn\nfrom .film import FilmDecoder\n\n\nclass TinyUNet(nn.Module):\n"
        "    def __init__(self, dim=8):\n        super().__init__()\n        self.body = nn.Linear(dim, dim)\n<part>\n"
        "    def forward(self, x):\n        return self.body(x)\n"
    ),
    "proj/convert.py": (
        "import torch\nfrom pkg import FilmDecoder\n\nif __name__ == '__main__':\n"
        "    torch.save(FilmDecoder().state_dict(), 'film.pt')\n"
    ),
    "proj/train.py": (
        "import torch\nfrom pkg import FilmDecoder, TinyUNet\n\n\ndef main():\n"
        "    model = <built>.cuda().half()\n    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    loss = model(torch.randn(2, 8, device='cuda', dtype=torch.float16)).float().mean()\n"
        "    loss.backward()\n    opt.step()\n\n\nif __name__ == '__main__':\n    main()\n"
    ),
}


def _built(tree, built, part=""):
    files = {path: text.replace("<built>", built).replace("<part>", part) for path, text in BUILT_ELSEWHERE.items()}
    return _lint_tree(tree, files)


def test_model_code_only_another_script_builds_runs_no_method_in_this_run(tree):
    """The package ``__init__`` imports the decoder's module into the training run, but only
    the conversion script builds a decoder: the training run's float16 model is another."""
    assert _built(tree, "TinyUNet()") == []


def test_model_code_the_run_builds_is_judged_there(tree):
    (d,) = _built(tree, "FilmDecoder()")
    assert d.path.endswith("film.py") and "float16 weights" in d.message


def test_model_code_built_inside_a_model_the_run_builds(tree):
    (d,) = _built(tree, "TinyUNet()", part="        self.film = FilmDecoder(dim)\n")
    assert d.path.endswith("film.py")


def test_model_code_built_by_its_from_pretrained(tree):
    files = dict(BUILT_ELSEWHERE)
    files["proj/pkg/film.py"] += "\n    @classmethod\n    def from_pretrained(cls, path):\n        return cls()\n"
    files = {p: t.replace("<built>", "FilmDecoder.from_pretrained('film.pt')").replace("<part>", "") for p, t in files.items()}
    (d,) = _lint_tree(tree, files)
    assert d.path.endswith("film.py")



OWN_MODULE = {
    "proj/attend.py": (
        "import torch\nfrom torch import nn\n\n\n<decorator>def attend(q, k, mask):\n"
        "    scores = q @ k.transpose(-1, -2)\n    return scores.masked_fill(mask, -1e9).softmax(-1)\n\n\n"
        "class Renderer(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(8, 8)\n\n"
        "    def forward(self, x, mask):\n        q = self.proj(x)\n        return attend(q, q, mask)\n"
    ),
    "proj/train.py": (
        "import torch\nfrom diffusers import StableDiffusionPipeline\nfrom attend import Renderer\n\n\n"
        "def main():\n    guidance = StableDiffusionPipeline.from_pretrained('sd', torch_dtype=torch.float16).to('cuda')\n"
        "    guidance.unet.requires_grad_(False)\n    model = Renderer().cuda()<cast>\n"
        "    opt = torch.optim.Adam(model.parameters())\n    x = torch.randn(2, 4, 8, device='cuda')\n"
        "    mask = torch.zeros(2, 4, 4, dtype=torch.bool, device='cuda')\n"
        "    <region>loss = model(x, mask).float().mean()\n    loss.backward()\n    opt.step()\n\n\n"
        "if __name__ == '__main__':\n    main()\n"
    ),
}
AUTOCAST_REGION = "with torch.autocast('cuda', dtype=torch.float16):\n        "
SWITCHED_OFF = "@torch.autocast('cuda', enabled=False)\n"


def _own(tree, decorator="", cast="", region=""):
    files = {p: t.replace("<decorator>", decorator).replace("<cast>", cast).replace("<region>", region) for p, t in OWN_MODULE.items()}
    return _lint_tree(tree, files)


def test_a_library_models_float16_weights_do_not_make_a_plain_module_of_the_project_half(tree):
    """A frozen float16 guidance pipeline beside a float32 module of the project's own (a NeRF
    renderer beside Stable Diffusion): the pipeline's weights are not the module's tensors."""
    assert _own(tree) == []


def test_the_plain_module_cast_to_float16_is_reported(tree):
    (d,) = _own(tree, cast=".half()")
    assert d.path.endswith("attend.py") and d.related[0].path.endswith("train.py") and d.related[0].span.line == 9


def test_the_runs_fp16_autocast_makes_the_scores_half(tree):
    (d,) = _own(tree, region=AUTOCAST_REGION)
    assert d.path.endswith("attend.py") and "fp16 autocast" in d.message


def test_where_autocast_is_switched_off_the_runs_fp16_autocast_makes_nothing_half(tree):
    """``@torch.autocast(..., enabled=False)`` on the function: its matmul runs in the inputs'
    dtype (float32 here), whatever autocast the caller opened."""
    assert _own(tree, decorator=SWITCHED_OFF, region=AUTOCAST_REGION) == []
    assert _own(tree, decorator=SWITCHED_OFF.replace("'cuda', ", "").replace("torch.autocast", "torch.cuda.amp.autocast"), region=AUTOCAST_REGION) == []


REGISTRY_FILM = (
    "import torch\nfrom torch import nn\n\n\nclass FilmLayer(nn.Module):\n"
    "    def __init__(self, dim=8):\n        super().__init__()\n        self.proj = nn.Linear(dim, dim)\n\n"
    "    def forward(self, x, mask):\n        scores = self.proj(x) @ x.transpose(-1, -2)\n"
    "        return torch.where(mask > 0, scores, -1e10).softmax(-1)\n\n\n"
    "class FilmDecoder(nn.Module):\n    def __init__(self, dim=8):\n        super().__init__()\n"
    "        self.layer = FilmLayer(dim)\n\n    def forward(self, x, mask):\n        return self.layer(x, mask)\n"
)
# The repository of a library itself (diffusers' own `src/diffusers`) or a top-level copy named
# like the library: a call of `diffusers.…` there runs the tree's own code, so the call graph
# must see the classes it builds (a layer built in a decoder's `__init__`), or every class of the
# package counts as built by any run that imports it.
LIBRARY_ITSELF = {
    "proj/pyproject.toml": "[project]\nname = 'diffusers'\n",
    "proj/src/diffusers/__init__.py": "from .models.film import FilmDecoder\nfrom .models.unet import TinyUNet\n",
    "proj/src/diffusers/models/__init__.py": "",
    "proj/src/diffusers/models/film.py": REGISTRY_FILM,
    "proj/src/diffusers/models/unet.py": (
        "from torch import nn\n<import>\n\n\nclass TinyUNet(nn.Module):\n"
        "    def __init__(self, dim=8):\n        super().__init__()\n        self.body = nn.Linear(dim, dim)\n<part>\n"
        "    def forward(self, x):\n        return self.body(x)\n"
    ),
    "proj/scripts/convert.py": (
        "import torch\nfrom diffusers import FilmDecoder\n\nif __name__ == '__main__':\n"
        "    torch.save(FilmDecoder().state_dict(), 'film.pt')\n"
    ),
    "proj/examples/train.py": (
        "import torch\nfrom diffusers import TinyUNet\n\n\ndef main():\n"
        "    model = TinyUNet().cuda().half()\n    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    loss = model(torch.randn(2, 8, device='cuda', dtype=torch.float16)).float().mean()\n"
        "    loss.backward()\n    opt.step()\n\n\nif __name__ == '__main__':\n    main()\n"
    ),
}


def _library_itself(tree, move=None, **parts):
    files = {}
    for path, text in LIBRARY_ITSELF.items():
        for key, value in {"<import>": "", "<part>": "", **parts}.items():
            text = text.replace(key, value)
        files[move(path) if move else path] = text
    return _lint_tree(tree, files)


def test_in_the_librarys_own_repository_a_layer_only_another_script_builds_runs_no_method(tree):
    """``FilmLayer`` is built in ``FilmDecoder.__init__``, and only the conversion script builds
    a decoder: the training run's float16 ``TinyUNet`` never runs the layer's masking."""
    assert _library_itself(tree) == []


def test_in_the_librarys_own_repository_a_layer_the_run_builds_is_judged(tree):
    (d,) = _library_itself(tree, **{"<import>": "from diffusers.models.film import FilmDecoder", "<part>": "        self.film = FilmDecoder(dim)\n"})
    assert d.path.endswith("film.py") and "float16" in d.message


def test_in_the_librarys_own_repository_a_relative_import_builds_the_layer(tree):
    (d,) = _library_itself(tree, **{"<import>": "from .film import FilmDecoder", "<part>": "        self.film = FilmDecoder(dim)\n"})
    assert d.path.endswith("film.py")


def test_a_top_level_copy_named_like_the_library_is_the_projects_code(tree):
    """The same package copied at the top of a project (no ``src``): the same answers."""
    move = lambda p: p.replace("proj/src/", "proj/")  # noqa: E731
    assert _library_itself(tree, move) == []
    (d,) = _library_itself(tree, move, **{"<import>": "from diffusers.models.film import FilmDecoder", "<part>": "        self.film = FilmDecoder(dim)\n"})
    assert d.path.endswith("film.py")
