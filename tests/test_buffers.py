"""``Engine.run_buffers``: unsaved text checked as the file it names, joined with its project on
disk (the entry point of the language server and ``--stdin-filename``)."""
import os

from conftest import config, dedent
from cross_file import HELPERS, TRAIN
from precision_lint.workspace.discovery import project_root
from precision_lint.engine import Engine
from precision_lint.workspace.sources import SourceFile

OTHER = "from transformers import Trainer\nTrainer(tokenizer=tok)\n"


def buffer(path, text):
    return SourceFile.from_bytes(str(path), text.encode(), unsaved=True)


def test_a_buffer_takes_its_files_place_and_only_buffers_are_judged(tmp_path):
    (tmp_path / "helpers.py").write_text(dedent(HELPERS))
    (tmp_path / "train.py").write_text("# saved long ago\n")
    (tmp_path / "other.py").write_text(OTHER)  # on disk, with a finding of its own
    engine = Engine(config(transformers_version="5.23"), jobs=1)
    result = engine.run_buffers([buffer(tmp_path / "train.py", dedent(TRAIN))], str(tmp_path))
    found = [(os.path.basename(d.path), d.code) for d in result.diagnostics]
    assert found == [("train.py", "MP101"), ("train.py", "MP301")]
    assert os.path.basename(result.diagnostics[0].related[0].path) == "helpers.py"
    assert sorted(os.path.basename(p) for p in result.sources) == ["helpers.py", "other.py", "train.py"]


def test_fixing_a_buffer_leaves_the_other_files_alone(tmp_path):
    (tmp_path / "helpers.py").write_text(dedent(HELPERS))
    (tmp_path / "other.py").write_text(OTHER)
    engine = Engine(config(transformers_version="5.23"), jobs=1)
    path = str(tmp_path / "train.py")
    result = engine.run_buffers([buffer(path, dedent(TRAIN))], str(tmp_path), fix=True)
    assert list(result.changed) == [path]
    assert "processing_class=tok" in result.fixed_texts[path] and "torch.float32" in result.fixed_texts[path]
    assert result.fixed_codes == {path: {"MP101": 1, "MP301": 1}}
    assert result.diagnostics == []
    assert (tmp_path / "other.py").read_text() == OTHER


def test_unsaved_text_is_not_written_to_the_disk_cache(tmp_path):
    (tmp_path / "helpers.py").write_text(dedent(HELPERS))
    cache = tmp_path / "cache"
    engine = Engine(config(transformers_version="5.23"), jobs=1, cache_dir=str(cache))
    engine.run_buffers([buffer(tmp_path / "train.py", dedent(TRAIN))], str(tmp_path))
    entries = [p for p in cache.rglob("*.pickle") if "imports" not in p.parts]
    assert len(entries) == 1  # helpers.py, read from disk; the buffer stays in memory
    import pickle

    (index,) = cache.rglob("imports/index.pickle")  # what is read before the facts: helpers.py's only
    assert {key[1][0] if key[0] == "facts" else key[1] for key in pickle.loads(index.read_bytes())} == {
        str(tmp_path / "helpers.py")
    }


def test_memory_cache_keeps_one_text_per_file(tmp_path):
    engine = Engine(config(transformers_version="5.23"), jobs=1)
    path = str(tmp_path / "train.py")
    for n in range(5):  # keystrokes
        engine.run_buffers([buffer(path, dedent(TRAIN) + f"x = {n}\n")], None)
    assert list(engine._cache) == [path]


def test_project_root(tmp_path):
    (tmp_path / "proj" / "pkg").mkdir(parents=True)
    (tmp_path / "proj" / "pkg" / "__init__.py").write_text("")
    script = tmp_path / "proj" / "pkg" / "train.py"
    assert project_root(str(script)) == str((tmp_path / "proj").resolve())  # where `import pkg` works
    assert project_root(str(script), folders=[str(tmp_path), str(tmp_path / "proj" / "pkg")]) == str(
        (tmp_path / "proj" / "pkg").resolve()
    )
    assert project_root(str(script), config_root=tmp_path, folders=[str(tmp_path / "proj")]) == str(tmp_path.resolve())
    outside = tmp_path / "elsewhere" / "x.py"
    assert project_root(str(outside), config_root=tmp_path / "proj") == str((tmp_path / "elsewhere").resolve())
