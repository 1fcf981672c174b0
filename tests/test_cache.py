"""The caches never change what is reported: a project checked cold, warm, in one process or
in several gives the same findings; a warm run over an unchanged tree is answered from one
entry; an edited file is parsed again alone; an edited config file is read again."""
from __future__ import annotations

import os

import pytest

from conftest import check_folder, config, dedent
from precision_lint import engine as engine_module
from precision_lint.engine import PARALLEL_THRESHOLD, Engine

HELPER = '''
import torch
from transformers import AutoModelForCausalLM


def load_{i}(name, dtype=torch.float32):
    return AutoModelForCausalLM.from_pretrained(name, torch_dtype=dtype)
'''

TRAIN = '''
import torch
import yaml
from transformers import Trainer, TrainingArguments
from helper_0 import load_0
from helper_1 import load_1

cfg = yaml.safe_load(open("train.yaml"))
model = load_0("gpt2", torch.float16)
student = load_1("gpt2", torch.bfloat16)
args = TrainingArguments(output_dir="out", fp16=cfg["fp16"])
Trainer(model=model, args=args, tokenizer=tok).train()
'''


def _project(tmp_path, files: int = PARALLEL_THRESHOLD + 4):
    """A project large enough to be parsed in worker processes, with findings across files."""
    for i in range(files):
        (tmp_path / f"helper_{i}.py").write_text(dedent(HELPER.format(i=i)))
    (tmp_path / "train.py").write_text(dedent(TRAIN))
    (tmp_path / "train.yaml").write_text("fp16: true\n")


def _check(tmp_path, jobs: int, cache=None):
    return check_folder(tmp_path, cache, jobs=jobs)


def test_findings_are_the_same_cold_warm_serial_and_parallel(tmp_path):
    _project(tmp_path)
    serial = _check(tmp_path, jobs=1)
    assert {code for _, code, *_ in serial} >= {"MP101", "MP201", "MP301"}
    assert _check(tmp_path, jobs=2) == serial
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    assert _check(tmp_path, jobs=2, cache=cache) == serial  # cold, filling the caches
    assert _check(tmp_path, jobs=1, cache=cache) == serial  # warm
    assert _check(tmp_path, jobs=2, cache=cache) == serial


def test_a_warm_run_over_an_unchanged_tree_reads_no_facts(tmp_path, monkeypatch):
    _project(tmp_path, files=3)
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    first = _check(tmp_path, jobs=1, cache=cache)

    def no_facts(*args, **kwargs):
        raise AssertionError("facts were read: the run's own entry should have answered")

    monkeypatch.setattr(Engine, "facts", no_facts)
    assert _check(tmp_path, jobs=1, cache=cache) == first


def test_a_warm_run_over_an_unchanged_tree_reads_only_the_files_with_findings(tmp_path, monkeypatch):
    """A re-run over a folder whose files keep their stamps (size, times, inode) is keyed by
    stat calls: only the files whose findings it shows are read again."""
    _project(tmp_path, files=3)
    (tmp_path / "constants.py").write_text("SEED = 0\n")  # no finding
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    first = _check(tmp_path, jobs=1, cache=cache)
    read = []
    real = engine_module.SourceFile.read

    def counting(path):
        read.append(os.path.basename(path))
        return real(path)

    monkeypatch.setattr(engine_module.SourceFile, "read", staticmethod(counting))
    assert _check(tmp_path, jobs=1, cache=cache) == first
    assert sorted(read) == sorted({os.path.basename(path) for path, *_ in first})
    assert "train.py" in read and "constants.py" not in read


def test_a_file_with_a_new_stamp_is_read_and_known_by_its_content(tmp_path, monkeypatch):
    """A file written again with the same bytes (a checkout, `touch`) is read once more, and
    the run is still answered from its entry; new bytes make a new run."""
    _project(tmp_path, files=3)
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    first = _check(tmp_path, jobs=1, cache=cache)
    helper = tmp_path / "helper_1.py"
    stat = helper.stat()
    os.utime(helper, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    monkeypatch.setattr(Engine, "facts", lambda *a, **k: pytest.fail("the run's entry should have answered"))
    assert _check(tmp_path, jobs=1, cache=cache) == first
    monkeypatch.undo()
    train = tmp_path / "train.py"
    train.write_text(train.read_text().replace("torch.float16", "torch.float32"))
    assert _check(tmp_path, jobs=1, cache=cache) != first


def test_an_unreadable_file_is_never_answered_by_its_stamp(tmp_path):
    """A file that cannot be read (here a link to nothing) has no stamp nor digest to
    remember: its error is reported on every run (MP001), never a cached pass."""
    _project(tmp_path, files=3)
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    (tmp_path / "gone.py").symlink_to(tmp_path / "nowhere.py")
    for _ in range(2):
        assert "MP001" in {code for _, code, *_ in _check(tmp_path, jobs=1, cache=cache)}
    (tmp_path / "nowhere.py").write_text("SEED = 0\n")
    assert "MP001" not in {code for _, code, *_ in _check(tmp_path, jobs=1, cache=cache)}


def test_an_edited_file_alone_is_parsed_again(tmp_path, monkeypatch):
    _project(tmp_path, files=3)
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    _check(tmp_path, jobs=1, cache=cache)
    parsed = []
    real = engine_module.extract_facts

    def counting(text, path, *args, **kwargs):
        parsed.append(os.path.basename(path))
        return real(text, path, *args, **kwargs)

    monkeypatch.setattr(engine_module, "extract_facts", counting)
    (tmp_path / "helper_2.py").write_text(dedent(HELPER.format(i=2)) + "\nVERSION = 2\n")
    _check(tmp_path, jobs=1, cache=cache)
    # the edited file, and the copy its fixes make (a fix is marked fixable once its result is checked)
    assert set(parsed) == {"helper_2.py"}


def test_a_new_process_reads_the_imports_of_the_unchanged_files_from_the_cache(tmp_path, monkeypatch):
    """The gate needs every file's imports before any file is analysed: a new process (a new
    engine) with one file edited reads them for the edited file alone."""
    from precision_lint.semantic import gate

    _project(tmp_path, files=3)
    (tmp_path / "constants.py").write_text("SEED = 0\n")  # no finding
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    first = _check(tmp_path, jobs=1, cache=cache)
    read = []
    real = gate.imported_modules

    def counting(text, *args):
        read.append(text)
        return real(text, *args)

    monkeypatch.setattr(gate, "imported_modules", counting)
    assert _check(tmp_path, jobs=1, cache=cache) == first  # nothing changed: no file read
    assert read == []
    edited = dedent(HELPER.format(i=2)) + "\nVERSION = 2\n"
    (tmp_path / "helper_2.py").write_text(edited)
    assert _check(tmp_path, jobs=1, cache=cache) == first
    assert edited in read and all(text == edited or "VERSION = 2" in text for text in read)
    monkeypatch.setattr(gate, "imported_modules", real)
    assert _check(tmp_path, jobs=1) == first  # the same findings without any cache


def test_a_cold_run_parses_each_text_once(tmp_path, monkeypatch):
    """The gate needs a file's imports before its facts, and both are read from one parse:
    CPython's tree of a new text gives its imports and is the tree analysed. A file the gate
    analyses only because a file that imports torch imports it is read again once every
    file's imports are known (`plain.py`, imported by `train.py`)."""
    import ast

    from precision_lint.semantic import syntax

    _project(tmp_path, files=3)
    (tmp_path / "plain.py").write_text("def scale(x):\n    return x * 2\n")
    (tmp_path / "train.py").write_text(dedent(TRAIN) + "from plain import scale\n")
    (tmp_path / "alone.py").write_text("import os\nprint(os.getcwd())\n")
    expected = _check(tmp_path, jobs=1)
    parsed = []
    real_tree, real_parse = syntax.parsed_tree, ast.parse

    def tree(source, path, *args):
        parsed.append((os.path.basename(path), source))
        return real_tree(source, path, *args)

    def parse(source, *args, **kwargs):
        parsed.append("ast.parse")
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(syntax, "parsed_tree", tree)
    monkeypatch.setattr(ast, "parse", parse)
    assert _check(tmp_path, jobs=1) == expected
    assert "ast.parse" not in parsed
    again = sorted(name for name, text in set(parsed) if parsed.count((name, text)) > 1)
    assert again == ["plain.py"], again  # each text once, but the one analysed for its link
    # the files as they are (and the copies the check of their fixes makes)
    assert {name for name, text in parsed if text == (tmp_path / name).read_text()} == {
        "alone.py", "helper_0.py", "helper_1.py", "helper_2.py", "plain.py", "train.py"
    }


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_edited_config_file_is_read_again(tmp_path, jobs):
    _project(tmp_path, files=3 if jobs == 1 else PARALLEL_THRESHOLD)
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    on = _check(tmp_path, jobs=jobs, cache=cache)
    assert any(code == "MP101" for _, code, *_ in on)  # fp16: true in train.yaml with fp16 weights
    (tmp_path / "train.yaml").write_text("fp16: false\n")
    off = _check(tmp_path, jobs=jobs, cache=cache)
    assert not any(code == "MP101" for _, code, *_ in off)
    assert off == _check(tmp_path, jobs=jobs)  # what a run without caches says


def test_an_edited_deepspeed_json_that_a_rule_reads_is_read_again(tmp_path):
    """The rules read files too (MP102 the DeepSpeed JSON of ``deepspeed="ds.json"``): a cached
    run depends on them as on the files the join reads."""
    (tmp_path / "train.py").write_text(
        dedent(
            """
            from transformers import TrainingArguments
            args = TrainingArguments("o", deepspeed="ds.json", bf16=True)
            """
        )
    )
    (tmp_path / "ds.json").write_text('{"bf16": {"enabled": false}}')
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    assert any(code == "MP102" for _, code, *_ in _check(tmp_path, jobs=1, cache=cache))
    (tmp_path / "ds.json").write_text('{"bf16": {"enabled": true}}')
    warm = _check(tmp_path, jobs=1, cache=cache)
    assert not any(code == "MP102" for _, code, *_ in warm)
    assert warm == _check(tmp_path, jobs=1)  # what a run without caches says


def test_an_edited_requirements_file_is_read_again(tmp_path):
    """The pins a file targets are files the result depends on: a warm run after an edit of
    requirements.txt judges the new versions."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.py").write_text("from transformers import Trainer\nTrainer(model=m, tokenizer=tok)\n")
    (tmp_path / "requirements.txt").write_text("transformers==4.38.0\n")
    cache = tmp_path / ".cache-dir"

    def check():
        engine = Engine(config(), ["MP301"], jobs=1, cache_dir=str(cache))
        return engine.run_paths([str(tmp_path / "train.py")]).diagnostics

    assert check() == []
    (tmp_path / "requirements.txt").write_text("transformers==5.1.0\n")
    assert [d.code for d in check()] == ["MP301"]


def test_a_requirements_file_written_later_is_read(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.py").write_text("from transformers import Trainer\nTrainer(model=m, tokenizer=tok)\n")
    cache = tmp_path / ".cache-dir"

    def check():
        engine = Engine(config(), ["MP301"], jobs=1, cache_dir=str(cache))
        return engine.run_paths([str(tmp_path / "train.py")]).diagnostics

    assert [d.code for d in check()] == ["MP301"]  # the installed transformers 5
    (tmp_path / "requirements.txt").write_text("transformers==4.38.0\n")
    assert check() == []


def _freezes(monkeypatch) -> list:
    """The calls of ``gc.freeze`` the engine makes (recorded, not made: a frozen object of a test
    would stay in the test process for good)."""
    calls = []
    monkeypatch.setattr(engine_module.gc, "freeze", lambda: calls.append(True))
    return calls


def test_a_one_shot_run_freezes_the_facts_it_keeps_until_it_ends(tmp_path, monkeypatch):
    (tmp_path / "train.py").write_text("import torch\nmodel = torch.nn.Linear(2, 2).half()\n")
    calls = _freezes(monkeypatch)
    Engine(config(), None, jobs=1, one_shot=True).run_paths([str(tmp_path)])
    assert calls  # the collections of the join and the rules skip every fact of the run


def test_an_engine_that_lives_on_never_freezes(tmp_path, monkeypatch):
    """The language server, a test, a tool calling ``cli.main(argv)``: what they froze would never
    be collected."""
    from precision_lint import cli

    (tmp_path / "train.py").write_text("import torch\nmodel = torch.nn.Linear(2, 2).half()\n")
    calls = _freezes(monkeypatch)
    Engine(config(), None, jobs=1).run_paths([str(tmp_path)])
    assert cli.main([str(tmp_path), "--no-cache", "-j", "1", "--quiet"]) in (0, 1)
    assert not calls


def test_the_command_line_as_a_process_freezes(tmp_path, monkeypatch):
    from precision_lint import cli

    (tmp_path / "train.py").write_text("import torch\nmodel = torch.nn.Linear(2, 2).half()\n")
    calls = _freezes(monkeypatch)
    monkeypatch.setattr(cli.sys, "argv", ["precision-lint", str(tmp_path), "--no-cache", "-j", "1", "--quiet"])
    assert cli.main() in (0, 1)
    assert calls


TRAINLIB = '''
import torch


def train(model, loader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda", enabled=torch.cuda.is_available())  # off on a CPU: Adam steps float16
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
'''
RUN = '''
import torch
from transformers import AutoModelForSequenceClassification
from trainlib import train

student = AutoModelForSequenceClassification.from_pretrained("s")
train(student.to("cuda", dtype=torch.float16), loader)
'''


def test_packed_sections_read_from_the_cache_answer_as_when_made(tmp_path):
    """The trained-object summaries a cached module keeps packed (``facts.model.PACKED``) are
    made into objects when the trained join asks for them: an edited file beside it is checked
    with the cached summary of ``trainlib.py`` and MP101 still finds the model it trains."""
    from precision_lint.facts.model import PackedSection
    from precision_lint.workspace.cache import FactsCache

    (tmp_path / "trainlib.py").write_text(dedent(TRAINLIB))
    (tmp_path / "run.py").write_text(dedent(RUN))
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    first = _check(tmp_path, jobs=1, cache=cache)
    # MP101 at the cast; MP104 at the AdamW trainlib.py builds over the float16 parameters
    assert sorted(code for _, code, *_ in first) == ["MP101", "MP104"]
    stored = [facts for path in FactsCache(str(cache)).folder.rglob("*.pickle") if (facts := _load_entry(path)) is not None]
    assert any(type(f.sections.get("trained")) is PackedSection for f in stored if f.path.endswith("trainlib.py"))
    (tmp_path / "run.py").write_text(dedent(RUN) + "\nprint('edited')\n")  # a new run; trainlib.py from the cache
    again = _check(tmp_path, jobs=1, cache=cache)
    assert [(p, c, s.line) for p, c, s, *_ in again] == [(p, c, s.line) for p, c, s, *_ in first]


def _load_entry(path):
    from precision_lint.workspace.cache import _load

    entry = _load(path)
    if isinstance(entry, tuple) and len(entry) == 2 and hasattr(entry[1], "sections"):  # (key, facts)
        return entry[1]
    return None  # another cache's entry (the imports index, a whole run's findings)


DTYPES = '''
import torch


def weights_dtype():
    return torch.float16
'''
RUN_WITH_RETURN = '''
import torch
from transformers import AutoModelForSequenceClassification
from dtypes import weights_dtype
from trainlib import train

student = AutoModelForSequenceClassification.from_pretrained("s", torch_dtype=weights_dtype())
train(student, loader)
'''


def test_packed_return_summaries_read_from_the_cache_answer_as_when_made(tmp_path):
    """A cached module's return summaries (packed: ``facts.model.PACKED``) are made into
    objects when the join substitutes a call of its function: the float16 that
    ``weights_dtype()`` returns in another file still makes the model MP101's."""
    from precision_lint.facts.model import PackedSection
    from precision_lint.workspace.cache import FactsCache

    (tmp_path / "trainlib.py").write_text(dedent(TRAINLIB))
    (tmp_path / "dtypes.py").write_text(dedent(DTYPES))
    (tmp_path / "run.py").write_text(dedent(RUN_WITH_RETURN))
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    first = _check(tmp_path, jobs=1, cache=cache)
    assert ("run.py", "MP101") in [(p, c) for p, c, *_ in first]
    stored = [facts for path in FactsCache(str(cache)).folder.rglob("*.pickle") if (facts := _load_entry(path)) is not None]
    assert any(type(f.returns) is PackedSection for f in stored if f.path.endswith("dtypes.py"))
    (tmp_path / "run.py").write_text(dedent(RUN_WITH_RETURN) + "\nprint('edited')\n")
    again = _check(tmp_path, jobs=1, cache=cache)
    assert [(p, c, s.line) for p, c, s, *_ in again] == [(p, c, s.line) for p, c, s, *_ in first]


def test_packed_call_records_read_from_the_cache_answer_as_when_made(tmp_path):
    """A cached module's call records (packed: ``facts.model.PACKED``) are indexed by their
    callees and made into objects where the join asks what the calls pass: ``train.py``'s
    ``load_0("gpt2", torch.float16)``, read from the cache, still fills the edited helper's
    ``dtype`` parameter."""
    from precision_lint.facts.model import PackedSection
    from precision_lint.workspace.cache import FactsCache

    _project(tmp_path, files=2)
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    _check(tmp_path, jobs=1, cache=cache)
    stored = [facts for path in FactsCache(str(cache)).folder.rglob("*.pickle") if (facts := _load_entry(path)) is not None]
    assert any(type(f.calls) is PackedSection and f.call_callees for f in stored if f.path.endswith("train.py"))
    helper = tmp_path / "helper_0.py"
    helper.write_text(helper.read_text() + "\n# edited\n")  # a new run: train.py's facts from the cache
    fresh = _check(tmp_path, jobs=1)
    assert {code for _, code, *_ in fresh} >= {"MP101"}
    assert _check(tmp_path, jobs=1, cache=cache) == fresh
