"""A check after an edit answers from the last check's ledger (``workspace/ledger.py``) only
where the edit changed nothing the findings read: a file with no finding whose facts, imports
and the ranges of text the rules read are the same. Any other edit is a full check, and the
findings are always those of a check without caches."""
from __future__ import annotations

import os
import random

import pytest

from conftest import check_folder, config, dedent
from precision_lint.rules.base import TextReads
from precision_lint.workspace import ledger

TRAIN = '''
import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
from helper import load

model = load("gpt2", torch.float16)
args = TrainingArguments(output_dir="out", fp16=True)
Trainer(model=model, args=args).train()
'''

HELPER = '''
import torch
from transformers import AutoModelForCausalLM


def load(name, dtype=torch.float32):
    return AutoModelForCausalLM.from_pretrained(name, torch_dtype=dtype)
'''

UTIL = '''
import torch


def scale(x, factor=2):
    """Scale a tensor."""
    return x * factor
'''

PLAIN = '''
def add(a, b):
    return a + b
'''


def _write(root, files):
    for name, text in files.items():
        (root / name).write_text(dedent(text))


_check = check_folder


def _a_full_check(root, cache, judged):
    """The cached check, which judges again and finds what a check without caches finds."""
    judged.clear()
    now = _check(root, cache)
    assert judged
    assert now == _check(root)
    return now


def _answered_from_the_ledger(root, cache, judged, name, line, first):
    """Append ``line`` to the file ``name`` (no fact of it changes): the cached check gives
    ``first`` without judging, as a check without caches finds."""
    with open(root / name, "a") as fh:
        fh.write(line)
    judged.clear()
    assert _check(root, cache) == first
    assert judged == []  # answered from the ledger
    assert _check(root) == first  # what a check without caches finds


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    _write(root, {"train.py": TRAIN, "helper.py": HELPER, "util.py": UTIL, "plain.py": PLAIN})
    return root, tmp_path / "cache"


def test_an_edit_that_changes_no_fact_answers_from_the_ledger(tree, judged):
    root, cache = tree
    first = _check(root, cache)
    assert {code for _, code, *_ in first} >= {"MP101"}
    _answered_from_the_ledger(root, cache, judged, "util.py", "# scales by two unless told otherwise\n", first)


def test_an_edit_of_a_file_with_a_finding_is_a_full_check(tree, judged):
    """Its findings may read its text (a fix's, their wording): it is judged again."""
    root, cache = tree
    first = _check(root, cache)
    assert any(path.endswith("helper.py") for path, *_ in first)
    with open(root / "helper.py", "a") as fh:
        fh.write("# loads in float32 unless told otherwise\n")
    judged.clear()
    assert _check(root, cache) == first
    assert judged


def test_an_edit_that_changes_a_fact_is_a_full_check(tree, judged):
    root, cache = tree
    _check(root, cache)
    (root / "util.py").write_text(dedent(UTIL) + "\nweights = AutoModelForCausalLM.from_pretrained('gpt2', torch_dtype=torch.float16)\n")
    judged.clear()
    now = _check(root, cache)
    assert judged
    assert now == _check(root)


def test_an_edit_that_imports_a_library_is_a_full_check(tree, judged):
    """The modules a text imports decide which files are analysed (``gate.py``): a new import
    may change the facts of other files, so it is never answered from the ledger."""
    root, cache = tree
    _check(root, cache)
    (root / "plain.py").write_text("import torch\n" + dedent(PLAIN))
    judged.clear()
    assert _check(root, cache) == _check(root)
    assert judged


def test_a_pin_added_to_a_script_reaches_the_modules_it_imports(tree, judged):
    """``require_version(...)`` in a script holds for what it imports: it is a fact of the
    script (``ModuleFacts.requirements``), never read from its text by another file's rules."""
    root, cache = tree
    settings = config()  # no configured version: the files' own pins decide
    _write(root, {"launch.py": "import helper\n\nhelper.load('gpt2')\n"})
    before = _check(root, cache, settings)
    (root / "launch.py").write_text('from transformers.utils.versions import require_version\nrequire_version("transformers<4.40")\nimport helper\n\nhelper.load("gpt2")\n')
    judged.clear()
    after = _check(root, cache, settings)
    assert judged
    assert after == _check(root, None, settings)
    # torch_dtype= is deprecated from transformers 4.56 on: below 4.40 it is the only spelling
    assert "MP304" in {code for _, code, *_ in before} and "MP304" not in {code for _, code, *_ in after}


def test_a_changed_config_file_is_a_full_check(tree, judged):
    """The config files the join read are kept with the ledger: one that changed is read again."""
    root, cache = tree
    _write(root, {"train.yaml": "fp16: true\n", "run.py": "import yaml\nimport torch\nfrom transformers import TrainingArguments\ncfg = yaml.safe_load(open('train.yaml'))\nargs = TrainingArguments(output_dir='o', fp16=cfg['fp16'])\n"})
    _check(root, cache)
    (root / "train.yaml").write_text("fp16: false\n")
    with open(root / "util.py", "a") as fh:
        fh.write("# edited\n")
    judged.clear()
    assert _check(root, cache) == _check(root)
    assert judged


AMP = """
from contextlib import suppress
import torch


def evaluate(model, x, amp=False):
    ctx = suppress
    if amp:
        ctx = torch.cuda.amp.autocast
    with ctx():
        return model(x)
"""


EDITS = [
    lambda text: text + "# a comment at the end\n",
    lambda text: "# a comment first\n" + text,
    lambda text: text + "\nLIMIT = 3\n",
    lambda text: text + "\nimport torch\nhalf = torch.zeros(2, dtype=torch.float16)\n",
    lambda text: text + "\nfrom transformers import TrainingArguments\nTrainingArguments(output_dir='o', bf16=True, fp16=True)\n",
    lambda text: text.replace("factor=2", "factor=3"),
    lambda text: text + '\nfrom transformers.utils.versions import require_version\nrequire_version("transformers<4.40")\n',
    lambda text: text + "\n# noqa: MP101\n",
    lambda text: text.replace("with ctx():", "with ctx():  # noqa: MP303"),
    lambda text: text.replace("ctx = suppress", "ctx = suppress  # fp32 by default"),
]


@pytest.mark.parametrize("seed", range(10))
def test_a_sequence_of_edits_finds_what_a_check_without_caches_finds(tree, seed):
    """Files with fixable findings (helper.py), with findings without a fix (amp.py), pointed
    into (train.py) and with none, edited in every way above, in a random order."""
    rng = random.Random(seed)
    root, cache = tree
    _write(root, {"amp.py": AMP})
    _check(root, cache)
    for _ in range(5):
        path = root / rng.choice(["train.py", "helper.py", "util.py", "plain.py", "amp.py"])
        path.write_text(rng.choice(EDITS)(path.read_text()))
        assert _check(root, cache) == _check(root), path.name


def test_the_ranges_read_hold_while_their_text_is_the_same():
    reads = TextReads()
    reads.span("a.py", 4, 9)
    reads.span("a.py", 0, 3)
    reads.whole("b.py")
    reads.span("b.py", 0, 1)  # the whole text read already: a range adds nothing
    text = "abc torch end"
    kept = ledger.ranges_read(reads.by_path, {"a.py": text, "b.py": "x"})
    assert kept["a.py"][0] == ((0, 3), (4, 9)) and kept["b.py"] is None
    entry = ledger.Entry({}, {}, {}, kept, (), [])
    assert entry.reads_hold("a.py", "abc torch and more")  # outside the ranges
    assert not entry.reads_hold("a.py", "abc tarch end")
    assert not entry.reads_hold("a.py", "ab")  # the range is no longer there
    assert not entry.reads_hold("b.py", "x")  # its whole text was read: any edit counts
    assert entry.reads_hold("c.py", "anything")  # nothing read of it


def test_an_edit_of_a_file_a_finding_points_into_changes_no_place(tree, judged):
    """train.py holds no finding, but helper.py's MP101 names its line (a related location): an
    edit that keeps its facts keeps that line, so the ledger answers."""
    root, cache = tree
    first = _check(root, cache)
    assert not any(path.endswith("train.py") for path, *_ in first)
    _answered_from_the_ledger(root, cache, judged, "train.py", "# trained in fp16\n", first)


def test_an_edit_of_a_file_whose_findings_have_no_fix_needs_only_their_reads(tree, judged):
    """A finding without a fix reads its file's text only where its rule asks (its ranges): an
    edit elsewhere in the file keeps it, and the ledger answers."""
    root, cache = tree
    _write(root, {"amp.py": AMP})
    first = _check(root, cache)
    assert [(code, fix) for path, code, _, _, fix in first if path.endswith("amp.py")] == [("MP303", None)]
    _answered_from_the_ledger(root, cache, judged, "amp.py", "# evaluated in fp32 unless asked\n", first)


def test_a_run_answered_from_the_ledger_keeps_the_imports_of_the_files_it_did_not_read(tree, monkeypatch):
    """The imports index drops the entries of texts a run did not see: a run that read only the
    edited file must not drop every other file's, or the next full check reads them all again."""
    from precision_lint import engine as engine_module
    from precision_lint.workspace.cache import ImportsIndex

    monkeypatch.setattr(ImportsIndex, "KEEP_UNSEEN", 0)
    root, cache = tree
    _check(root, cache)
    with open(root / "util.py", "a") as fh:
        fh.write("# from the ledger\n")
    _check(root, cache)
    read = []
    original = engine_module._facts_job
    monkeypatch.setattr(engine_module, "_facts_job", lambda args: read.append(args[1]) or original(args))
    original_read = engine_module._read_job
    monkeypatch.setattr(engine_module, "_read_job", lambda args: read.append(args[1]) or original_read(args))
    with open(root / "helper.py", "a") as fh:
        fh.write("# a full check\n")
    cached = _check(root, cache)
    assert {os.path.basename(p) for p in read} == {"helper.py"}  # and its fixes checked; the others from the cache
    assert cached == _check(root)


CONFIG = '''
import torch

DTYPE = torch.float32
'''

TRAIN_WITH_CONFIG = '''
import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
from config import DTYPE

model = AutoModelForCausalLM.from_pretrained("gpt2", dtype=DTYPE)
args = TrainingArguments(output_dir="out", fp16=True, max_grad_norm=1.0)
Trainer(model=model, args=args).train()
'''


def test_a_constant_nothing_imports_answers_from_the_ledger(tree, judged):
    """A module variable is a fact (its summary, a name its top level binds: another module may
    import it); one nobody asks for changes no answer the join read: the benchmark's edit."""
    root, cache = tree
    first = _check(root, cache)
    _answered_from_the_ledger(root, cache, judged, "util.py", "\nLIMIT = 3\n", first)
    _answered_from_the_ledger(root, cache, judged, "util.py", "\nLIMIT = 4\n", first)


def test_a_constant_another_module_imports_is_compared_by_its_value(tree, judged):
    """The summary of ``DTYPE`` was asked by the join (train2.py's load reads it): an edit that
    keeps its value answers from the ledger, one that changes it is a full check, and MP101
    follows the new value."""
    root, cache = tree
    _write(root, {"config.py": CONFIG, "train2.py": TRAIN_WITH_CONFIG})
    first = _check(root, cache)
    assert not any(path.endswith("train2.py") for path, *_ in first)
    _answered_from_the_ledger(root, cache, judged, "config.py", "\nLIMIT = 3\n", first)
    (root / "config.py").write_text((root / "config.py").read_text().replace("torch.float32", "torch.float16"))
    now = _a_full_check(root, cache, judged)
    assert any(path.endswith("train2.py") and code == "MP101" for path, code, *_ in now)


def test_a_name_a_starred_reexport_asked_for_is_compared(tree, judged):
    """``pkg/__init__.py`` re-exports ``from .helpers import *`` and train3.py imports ``DTYPE``
    from ``pkg``: the join asked whether helpers.py's top level binds it. Binding it there is a
    full check (the load becomes float16: MP101); another new name answers from the ledger."""
    root, cache = tree
    (root / "pkg").mkdir()
    _write(root, {
        "pkg/__init__.py": "from .helpers import *\n",
        "pkg/helpers.py": "import torch\n\nOTHER = 1\n",
        "train3.py": TRAIN_WITH_CONFIG.replace("from config import DTYPE", "from pkg import DTYPE"),
    })
    first = _check(root, cache)
    assert not any(path.endswith("train3.py") for path, *_ in first)
    _answered_from_the_ledger(root, cache, judged, "pkg/helpers.py", "\nLIMIT = 3\n", first)
    with open(root / "pkg" / "helpers.py", "a") as fh:
        fh.write("\nDTYPE = torch.float16\n")
    now = _a_full_check(root, cache, judged)
    assert any(path.endswith("train3.py") and code == "MP101" for path, code, *_ in now)


def test_a_name_a_session_piece_reads_is_compared(tree, judged):
    """train4.py's top level reads ``DTYPE``, which nothing in it binds (a piece of a session,
    ``Project._session_pieces``): the join asked which files of its folder bind it. One that
    comes to bind it is a full check; another new name answers from the ledger."""
    root, cache = tree
    _write(root, {
        "shared.py": "import torch\n\nOTHER = 1\n",
        "train4.py": TRAIN_WITH_CONFIG.replace("from config import DTYPE\n", ""),
    })
    first = _check(root, cache)
    _answered_from_the_ledger(root, cache, judged, "shared.py", "\nLIMIT = 3\n", first)
    with open(root / "shared.py", "a") as fh:
        fh.write("\nDTYPE = torch.float16\n")
    _a_full_check(root, cache, judged)


def test_a_file_edited_and_checked_by_another_path_is_read_again(tree, judged):
    """Stamps are kept by absolute path, the ledger by the paths a check names: a file edited,
    then checked through the folder's absolute path, keeps its new stamp when the folder is
    checked again as ``.``, yet it changed since that ledger's check. It is read again (it once
    raised ``KeyError``) and the findings are those of a check without caches."""
    from precision_lint.engine import Engine

    root, cache = tree
    settings = config(transformers_version="5.23")
    engine = lambda: Engine(settings, jobs=1, cache_dir=str(cache))
    first = _check(root, cache, settings)
    (root / "util.py").write_text(dedent(UTIL) + "\nLIMIT = 3\n")
    cwd = os.getcwd()
    os.chdir(root)
    try:
        by_absolute = engine().run_paths([str(root)])
    finally:
        os.chdir(cwd)
    assert {d.code for d in by_absolute.diagnostics} == {code for _, code, *_ in first}
    judged.clear()
    assert _check(root, cache, settings) == first  # util.py read again: no fact of it changed
    assert judged == []
    assert _check(root, None, settings) == first
