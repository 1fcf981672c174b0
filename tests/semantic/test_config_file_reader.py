"""The one reader of config files (``configfiles.ConfigFiles``): YAML, JSON and TOML read
without running anything, each value with the span it is written at. Every consumer (the
evaluator's CONFIG atoms, MP101's and MP102's DeepSpeed JSON, MP102's accelerate configs)
reads through it: one policy for where a file is looked for, which suffixes, how large,
how its path is shown, and which files a cached result depends on.

TOML positions come from the table a key is written in, not from the first ``key =`` of the
file: ``fp16`` under ``[eval]`` is the line under ``[eval]``."""
import json
import os
import re
import tomllib

import pytest
from conftest import config, dedent, write_tree

from precision_lint.workspace.configfiles import MAX_BYTES, ConfigFiles
from precision_lint.engine import Engine


def _reader(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    return ConfigFiles(cwd=str(tmp_path)), str(tmp_path / "train.py")


def _at(tmp_path, name, text, *keys):
    configs, near = _reader(tmp_path, name, text)
    return configs.lookup(near, name, keys)


def _line_of(text, needle, after=""):
    """The 1-based line of the first ``needle`` at or after the first line holding ``after``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if after in line)
    return next(i for i in range(start, len(lines)) if needle in lines[i]) + 1


# --- TOML: a key is found in its own table ------------------------------------------------
TWO_TABLES = """\
[training]
fp16 = true
[eval]
fp16 = false
"""


def test_the_same_key_in_two_tables_points_at_each_own_line(tmp_path):
    train = _at(tmp_path, "c.toml", TWO_TABLES, "training", "fp16")
    evaluation = _at(tmp_path, "c.toml", TWO_TABLES, "eval", "fp16")
    assert (train.value, train.span.line) == (True, 2)
    assert (evaluation.value, evaluation.span.line) == (False, 4)  # not line 2, the first `fp16 =`
    assert TWO_TABLES[evaluation.span.start : evaluation.span.end] == "fp16 = false"


def test_a_key_of_the_nth_element_of_an_array_of_tables(tmp_path):
    text = dedent(
        """
        [[runs]]
        name = "a"
        fp16 = true

        [[runs]]
        name = "b"
        fp16 = false

        [[runs.stages]]
        dtype = "bfloat16"

        [runs.optim]
        lr = 1e-4
        """
    )
    first = _at(tmp_path, "c.toml", text, "runs", 0, "fp16")
    second = _at(tmp_path, "c.toml", text, "runs", 1, "fp16")
    stage = _at(tmp_path, "c.toml", text, "runs", 1, "stages", 0, "dtype")
    optim = _at(tmp_path, "c.toml", text, "runs", 1, "optim", "lr")
    assert (first.value, first.span.line) == (True, 3)
    assert (second.value, second.span.line) == (False, 7)
    assert (stage.value, stage.span.line) == ("bfloat16", 10)
    assert (optim.value, optim.span.line) == (1e-4, 13)
    # an element is the table its header opens; the array, where it is first written
    assert _at(tmp_path, "c.toml", text, "runs", 1).span.line == 5
    assert _at(tmp_path, "c.toml", text, "runs").span.line == 1
    assert _at(tmp_path, "c.toml", text, "runs", 2, "fp16") is None


def test_dotted_keys_and_the_tables_they_open(tmp_path):
    text = dedent(
        """
        title = "run"
        model.torch_dtype = "float16"
        [trainer]
        args . fp16 = true
        args.bf16 = false
        """
    )
    dtype = _at(tmp_path, "c.toml", text, "model", "torch_dtype")
    fp16 = _at(tmp_path, "c.toml", text, "trainer", "args", "fp16")
    bf16 = _at(tmp_path, "c.toml", text, "trainer", "args", "bf16")
    assert (dtype.value, dtype.span.line) == ("float16", 2)
    assert (fp16.value, fp16.span.line) == (True, 4)
    assert (bf16.value, bf16.span.line) == (False, 5)
    args = _at(tmp_path, "c.toml", text, "trainer", "args")
    assert args.keys == ("fp16", "bf16") and args.span.line == 4  # where the table is first written


def test_quoted_keys_and_a_dot_inside_quotes(tmp_path):
    text = dedent(
        """
        [fp16]
        enabled = false
        ["fp16.enabled"]
        value = true
        [ 'mixed precision' ]
        "fp16" = true
        'torch dtype' = 'float16'
        """
    )
    assert _at(tmp_path, "c.toml", text, "fp16", "enabled").span.line == 2
    quoted = _at(tmp_path, "c.toml", text, "fp16.enabled", "value")
    assert (quoted.value, quoted.span.line) == (True, 4)
    assert _at(tmp_path, "c.toml", text, "mixed precision", "fp16").span.line == 6
    dtype = _at(tmp_path, "c.toml", text, "mixed precision", "torch dtype")
    assert (dtype.value, dtype.span.line) == ("float16", 7)


@pytest.mark.parametrize("quote", ['"""', "'''"])
def test_a_key_inside_a_multiline_string_never_matches(tmp_path, quote):
    text = dedent(
        f"""
        notes = {quote}
        [eval]
        fp16 = true
        {quote}
        # [eval]
        # fp16 = true
        [eval]  # the real one
        fp16 = false  # off
        """
    )
    found = _at(tmp_path, "c.toml", text, "eval", "fp16")
    assert (found.value, found.span.line) == (False, 8)
    assert text[found.span.start : found.span.end] == "fp16 = false"
    notes = _at(tmp_path, "c.toml", text, "notes")
    assert notes.span.line == 1 and "fp16 = true" in notes.value


def test_inline_tables_and_arrays_over_several_lines(tmp_path):
    text = dedent(
        """
        trainer = { fp16 = true, bf16 = false }
        dtypes = [
          "float32",  # "float16" would be here
          "float16",
          { name = "x]" },
        ]
        """
    )
    assert _at(tmp_path, "c.toml", text, "trainer", "bf16").value is False
    second = _at(tmp_path, "c.toml", text, "dtypes", 1)
    assert (second.value, second.span.line) == ("float16", 4)
    assert _at(tmp_path, "c.toml", text, "dtypes", 2, "name").span.line == 5


def test_an_invalid_toml_file_gives_no_values(tmp_path):
    assert _at(tmp_path, "c.toml", "[training]\nfp16 = true\nfp16 = false\n", "training", "fp16") is None


# --- TOML, generated: every key's span holds that key and its value ----------------------------
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# keys and strings that a line search would trip on: a key spelled like a table header or a
# pair, a dot inside a quoted key, `fp16 = true` inside a (multi-line) string
KEYS = st.sampled_from(["fp16", "bf16", "a-b", "1", "with space", "dot.ted", "fp16 = true", "[eval]", ""])
TEXTS = st.sampled_from(["float16", "fp16 = true\n[eval]\nfp16 = false", "# no comment", 'a " quote', "x]"])
SCALARS = st.one_of(st.booleans(), st.integers(-3, 3), TEXTS, st.lists(st.integers(0, 3), max_size=3))
TABLES = st.recursive(
    st.fixed_dictionaries({"pairs": st.dictionaries(KEYS, SCALARS, max_size=3)}),
    lambda inner: st.fixed_dictionaries({
        "pairs": st.dictionaries(KEYS, SCALARS, max_size=3),
        "tables": st.dictionaries(KEYS, inner, max_size=2),
        "arrays": st.dictionaries(KEYS, st.lists(inner, min_size=1, max_size=2), max_size=1),
    }),
    max_leaves=6,
)


def _toml_key(key):
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _toml_value(value, draw):
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[\n  " + ",\n  ".join(map(str, value)) + ",\n]" if value and draw(st.booleans()) else repr(value)
    style = draw(st.sampled_from(["basic", "multi-basic", "multi-literal"]))
    if style == "basic":
        return json.dumps(value)
    return ('"""' if style == "multi-basic" else "'''") + value + ('"""' if style == "multi-basic" else "'''")


def _render(table, path, draw, lines):
    """TOML for ``table`` under the header ``path`` (appended to ``lines``) and its plain value;
    a table of pairs alone is sometimes written as dotted keys in its parent."""
    plain, used, later = {}, set(), []
    for key, value in table["pairs"].items():
        lines.append(f"{_toml_key(key)} = {_toml_value(value, draw)}")
        plain[key] = value
        used.add(key)
    for key, sub in table.get("tables", {}).items():
        if key in used:
            continue
        used.add(key)
        if set(sub) == {"pairs"} and sub["pairs"] and draw(st.booleans()):
            plain[key] = {}
            for k, v in sub["pairs"].items():
                lines.append(f"{_toml_key(key)} . {_toml_key(k)} = {_toml_value(v, draw)}")
                plain[key][k] = v
        else:
            later.append((key, sub, False))
    for key, elements in table.get("arrays", {}).items():
        if key not in used:
            used.add(key)
            later.append((key, elements, True))
    for key, sub, is_array in later:
        header = ".".join(_toml_key(p) for p in path + (key,))
        if is_array:
            plain[key] = []
            for element in sub:
                lines.append(f"[[{header}]]  # element")
                plain[key].append(_render(element, path + (key,), draw, lines))
        else:
            lines.append(f"[ {header} ]")
            plain[key] = _render(sub, path + (key,), draw, lines)
    return plain


def _leaves(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, path + (key,))
    elif isinstance(value, list) and not (value and all(isinstance(v, dict) for v in value)):
        yield path, value
        for n, item in enumerate(value):
            yield path + (n,), item
    elif isinstance(value, list):
        for n, item in enumerate(value):
            yield from _leaves(item, path + (n,))
    else:
        yield path, value


@settings(max_examples=int(os.environ.get("PRECISION_LINT_EXAMPLES", "60")), deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(TABLES, st.data())
def test_every_generated_toml_key_points_at_its_own_pair(tmp_path_factory, table, data):
    lines = []
    plain = _render(table, (), data.draw, lines)
    text = "\n".join(lines) + "\n"
    assert tomllib.loads(text) == plain  # the generator writes valid TOML
    folder = tmp_path_factory.mktemp("toml")
    (folder / "c.toml").write_text(text)
    configs = ConfigFiles(cwd=str(folder))
    for path, value in _leaves(plain):
        found = configs.lookup(str(folder / "train.py"), "c.toml", path)
        written = text[found.span.start : found.span.end]
        if isinstance(path[-1], int):
            assert tomllib.loads("x = " + written)["x"] == value  # an element of an inline array
            continue
        pair, key = tomllib.loads(written), None  # `key = value`, the key maybe dotted
        while isinstance(pair, dict) and len(pair) == 1 and not isinstance(value, dict):
            ((key, pair),) = pair.items()
        assert (key, pair) == (path[-1], value), (path, written)


# --- JSON: as json.loads reads it, each value with its own span ------------------------------
def test_a_json_value_span_is_the_value_itself(tmp_path):
    text = json.dumps({"fp16": {"enabled": True}, "bf16": {"enabled": "auto"}}, indent=2)
    found = _at(tmp_path, "ds.json", text, "bf16", "enabled")
    assert (found.value, found.span.line) == ("auto", _line_of(text, '"enabled"', after='"bf16"'))
    assert text[found.span.start : found.span.end] == '"auto"'


def test_a_json_file_indented_with_tabs_is_read(tmp_path):
    text = '{\n\t"fp16": {\n\t\t"enabled": true\n\t}\n}\n'  # YAML refuses tabs; JSON does not
    found = _at(tmp_path, "ds.json", text, "fp16", "enabled")
    assert (found.value, found.span.line, found.span.col) == (True, 3, 13)


def test_the_key_path_is_followed_through_the_tables_not_searched_in_the_text(tmp_path):
    text = '{\n  "notes": {"fp16": {"enabled": false}},\n  "fp16": {"enabled": true}\n}\n'
    found = _at(tmp_path, "ds.json", text, "fp16", "enabled")
    assert (found.value, found.span.line) == (True, 3)


def test_a_repeated_json_key_is_the_last_one_as_json_loads_reads_it(tmp_path):
    text = '{"fp16": {"enabled": false},\n "fp16": {"enabled": true}}'
    found = _at(tmp_path, "ds.json", text, "fp16", "enabled")
    assert (found.value, found.span.line) == (True, 2)


@pytest.mark.parametrize("text", ['{"fp16": {"enabled": true},}', "fp16:\n  enabled: true\n", "\ufeff{}"])
def test_what_json_refuses_gives_no_values(tmp_path, text):
    """A trailing comma, YAML in a ``.json`` file: DeepSpeed's ``json.load`` refuses them too."""
    assert _at(tmp_path, "ds.json", text, "fp16", "enabled") is None


# --- one policy: where, which suffixes, how large, how shown, what was looked for --------------
def test_a_file_is_looked_for_next_to_the_module_then_in_the_working_directory(tmp_path):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "ds.json").write_text('{"fp16": {"enabled": true}}')
    configs = ConfigFiles(cwd=str(tmp_path))
    found = configs.lookup(str(tmp_path / "scripts" / "train.py"), "ds.json", ("fp16", "enabled"))
    assert found.value is True and found.path == "ds.json"  # shown relative to the working directory
    assert configs.looked_for() == [str(tmp_path / "scripts" / "ds.json"), str(tmp_path / "ds.json")]


def test_a_path_without_a_config_suffix_is_not_read(tmp_path):
    (tmp_path / "ds_config").write_text('{"fp16": {"enabled": true}}')
    configs = ConfigFiles(cwd=str(tmp_path))
    assert configs.lookup(str(tmp_path / "train.py"), "ds_config", ("fp16",)) is None
    assert configs.looked_for() == []


def test_a_file_over_the_size_limit_gives_no_values_but_is_looked_for(tmp_path):
    text = '{"fp16": {"enabled": true}, "pad": "' + "x" * MAX_BYTES + '"}'
    configs, near = _reader(tmp_path, "ds.json", text)
    assert configs.lookup(near, "ds.json", ("fp16", "enabled")) is None
    assert str(tmp_path / "ds.json") in configs.looked_for()


def test_a_file_that_is_there_but_gives_no_values_says_why(tmp_path):
    """What MP002 reports: too large, invalid, not UTF-8 — each named for the module that asked;
    a file that is not there at all is no problem (a path relative to somewhere else)."""
    configs, near = _reader(tmp_path, "ds.json", '{\n  "fp16": {"enabled": true},\n}\n')
    (tmp_path / "big.yaml").write_text("fp16: true\n" + "#\n" * (MAX_BYTES // 2))
    (tmp_path / "latin.yaml").write_bytes(b"fp16: true # \xe9\n")
    for name in ("ds.json", "big.yaml", "latin.yaml", "missing.json"):
        assert configs.lookup(near, name, ("fp16",)) is None
    assert configs.problems_for(str(tmp_path / "other.py")) == []
    assert configs.problems_for(near) == [
        ("ds.json", "ds.json", "it is not valid JSON (Expecting property name enclosed in double quotes: line 3 column 1 (char 31))"),
        ("big.yaml", "big.yaml", "it is 1,000,011 bytes, more than max-file-size (1,000,000 bytes); raise `max-file-size` in [tool.precision-lint] to check it"),
        ("latin.yaml", "latin.yaml", "it is not UTF-8 (invalid continuation byte at byte 13)"),
    ]
    unlimited = ConfigFiles(cwd=str(tmp_path), max_bytes=0)  # max-file-size = 0: no limit
    assert unlimited.lookup(near, "big.yaml", ("fp16",)).value is True


def test_a_notebook_cell_that_writes_the_file_is_read_before_the_disk(tmp_path):
    disk = str(tmp_path / "ds.json")
    (tmp_path / "ds.json").write_text('{"fp16": {"enabled": false}}')
    configs = ConfigFiles(cwd=str(tmp_path), written={disk: ("nb.ipynb#cell3", '{"fp16":\n {"enabled": true}}')})
    found = configs.lookup(str(tmp_path / "nb.ipynb"), "ds.json", ("fp16", "enabled"))
    assert (found.value, found.path, found.span.line) == (True, "nb.ipynb#cell3", 2)
    assert configs.looked_for() == []  # the cell, not a file on disk


# --- end to end: the finding names the line in the file's own table -----------------------------
def test_a_toml_key_in_the_second_table_of_its_name_is_shown_at_its_line(tmp_path):
    script = dedent(
        """
        import tomllib
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        cfg = tomllib.load(open("train.toml", "rb"))
        model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.float16)
        args = TrainingArguments(output_dir="out", fp16=cfg["training"]["fp16"])
        Trainer(model=model, args=args).train()
        """
    )
    toml = "[eval]\nfp16 = false\n\n[training]\nfp16 = true\n"
    write_tree(tmp_path, {"train.py": script, "train.toml": toml})
    (finding,) = Engine(config(), ["MP101"], jobs=1).run_paths([str(tmp_path)]).diagnostics
    assert "`fp16: true` is set in train.toml (line 5)" in finding.message
    assert {(os.path.basename(r.path), r.span.line) for r in finding.related} >= {("train.toml", 5)}
    write_tree(tmp_path, {"train.toml": toml.replace("true", "false")})
    assert Engine(config(), ["MP101"], jobs=1).run_paths([str(tmp_path)]).diagnostics == []


# --- YAML: the merge key ----------------------------------------------------------------------
MERGED = """\
defaults: &defaults
  fp16: true
  lr: 0.001
train:
  <<: *defaults
  lr: 0.01
explicit:
  !!merge <<: *defaults
  fp16: false
"""


def test_a_yaml_merge_key_reads_the_merged_mapping_first(tmp_path):
    """``<<: *defaults`` (YAML's merge key, read by PyYAML and OmegaConf): valid YAML whose
    mapping takes the anchor's entries, its own after them (held-out 44u's F1: a Hydra config
    reported as "not valid YAML")."""
    merged = _at(tmp_path, "c.yaml", MERGED, "train", "fp16")
    assert merged is not None and merged.value is True
    assert _at(tmp_path, "c.yaml", MERGED, "train", "lr").value == 0.01  # its own, after the merge
    assert _at(tmp_path, "c.yaml", MERGED, "explicit", "fp16").value is False
