"""Deferred call summaries (``facts/model.py`` DEFERRED, ``engine._Summaries``): a check of many
files leaves each module's call records and return summaries to be worked out when the join
asks. The findings must be those of a check that worked them all out, and what was worked out
is kept with the facts in the cache."""
import pickle

import pytest

from conftest import checked_by, config, dedent
from precision_lint import engine as engine_module
from precision_lint.engine import Engine
from precision_lint.facts.extract import extract_facts
from precision_lint.facts.model import DEFERRED, same_facts

LOADER = '''
import torch
from transformers import AutoModelForCausalLM


def load_{i}(name, dtype=torch.float32):
    return AutoModelForCausalLM.from_pretrained(name, dtype=dtype)
'''

PRECISION = '''
import torch


def weights_dtype():
    return torch.float16
'''

TRAIN = '''
from transformers import Trainer, TrainingArguments
from loader_0 import load_0
from precision import weights_dtype

model = load_0("gpt2", weights_dtype())
args = TrainingArguments(output_dir="out", fp16=True)
Trainer(model=model, args=args).train()
'''


def _project(root, loaders: int = 6) -> None:
    for i in range(loaders):
        (root / f"loader_{i}.py").write_text(dedent(LOADER.format(i=i)))
    (root / "precision.py").write_text(dedent(PRECISION))
    (root / "train.py").write_text(dedent(TRAIN))


def _check(root, defer_from: int, monkeypatch, cache=None):
    monkeypatch.setattr(engine_module, "DEFER_SUMMARIES_FROM", defer_from)
    engine = Engine(config(transformers_version="5.23"), jobs=1, cache_dir=str(cache) if cache else None)
    found = checked_by(engine, root)
    return found, {path: facts for path, (_, facts) in engine._cache.items()}, engine


def test_deferred_summaries_give_the_findings_of_summaries_worked_out_at_once(tmp_path, monkeypatch):
    _project(tmp_path)
    eager, _, _ = _check(tmp_path, 10**9, monkeypatch)
    deferred, facts, _ = _check(tmp_path, 1, monkeypatch)
    # the float16 reaches load_0's parameter through train.py's call record, which holds
    # what precision.py's weights_dtype returns
    assert any(code == "MP101" and path.endswith("loader_0.py") for path, code, *_ in eager)
    assert deferred == eager
    assert not facts["train.py"].summaries_deferred  # its records were asked
    assert not facts["precision.py"].summaries_deferred  # its return summary was asked
    assert facts["loader_3.py"].summaries_deferred  # nothing calls it: never worked out


def test_summaries_worked_out_for_the_join_are_kept_in_the_cache(tmp_path, monkeypatch):
    _project(tmp_path)
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    cold, _, engine = _check(tmp_path, 1, monkeypatch, cache)
    stored = {path: engine.disk.get(key) for path, key in engine._facts_keys.items()}
    assert not stored["train.py"].summaries_deferred  # asked, worked out, kept
    assert stored["loader_3.py"].summaries_deferred  # never asked
    assert stored["train.py"].call_records() == extract_facts(dedent(TRAIN), "train.py", "train").calls


def test_deferred_facts_pickle_as_deferred_and_refuse_to_be_read_without_a_summariser(tmp_path):
    facts = extract_facts(dedent(TRAIN), "train.py", "train", summaries=False)
    assert facts.calls is DEFERRED and facts.returns is DEFERRED
    assert facts.call_callees == tuple(r.callee for r in extract_facts(dedent(TRAIN), "train.py", "train").calls)
    again = pickle.loads(pickle.dumps(facts))
    assert again.calls is DEFERRED and again.returns is DEFERRED
    with pytest.raises(RuntimeError, match="deferred"):
        again.call_records()


def test_same_facts_compares_summaries_only_where_the_last_check_had_them():
    text = dedent(TRAIN)
    never_asked = extract_facts(text, "train.py", "train", summaries=False)
    edited = extract_facts(text.replace('"gpt2"', '"opt2"'), "train.py", "train")  # only a call record changes
    assert edited.calls != extract_facts(text, "train.py", "train").calls
    # the last check never asked for them: its findings did not read them
    assert same_facts(never_asked, edited)
    asked = extract_facts(text, "train.py", "train")
    assert not same_facts(asked, edited)
    later = extract_facts(text, "train.py", "train", summaries=False)
    later.summarise = lambda: (asked.calls, asked.returns)
    assert same_facts(asked, later) and not later.summaries_deferred  # worked out to be compared


@pytest.mark.parametrize(
    "edited, old, new, reused",
    [
        # loader_3's summaries were never asked: an edit of its call records alone reads as no change
        ("loader_3.py", '"gpt2"', '"opt2"', True),
        # train.py's were asked: the same edit there is a full check
        ("train.py", '"gpt2"', '"opt2"', False),
    ],
)
def test_an_edit_of_deferred_summaries_is_a_full_check_only_where_the_join_read_them(
    tmp_path, monkeypatch, judged, edited, old, new, reused
):
    _project(tmp_path)
    (tmp_path / "precision.py").write_text(dedent(PRECISION) + "\n\ndef tag(text):\n    return text\n")
    # a call of project code whose record no question of the join reads
    (tmp_path / "loader_3.py").write_text(dedent(LOADER.format(i=3)) + 'from precision import tag\ntag("gpt2")\n')
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    first, _, _ = _check(tmp_path, 1, monkeypatch, cache)
    path = tmp_path / edited
    path.write_text(path.read_text().replace(old, new))
    judged.clear()
    again, _, _ = _check(tmp_path, 1, monkeypatch, cache)
    assert (judged == []) == reused
    assert again == first == _check(tmp_path, 1, monkeypatch)[0]


def test_files_named_one_by_one_defer_their_summaries_as_a_batch_of_as_many(tmp_path, monkeypatch):
    """Named files (pre-commit hands over every changed file) are read one at a time for their
    neighbours: as many of them defer their call summaries as a batch of that size does."""
    _project(tmp_path)
    monkeypatch.setattr(engine_module, "DEFER_SUMMARIES_FROM", 4)
    monkeypatch.chdir(tmp_path)
    named = sorted(p.name for p in tmp_path.glob("*.py"))
    engine = Engine(config(transformers_version="5.23"), jobs=1)
    found = [(d.path, d.code) for d in engine.run_paths(named).diagnostics]
    facts = {path: f for path, (_, f) in engine._cache.items()}
    assert facts["loader_3.py"].summaries_deferred and not facts["train.py"].summaries_deferred
    monkeypatch.setattr(engine_module, "DEFER_SUMMARIES_FROM", 10**9)
    assert found == [(d.path, d.code) for d in Engine(config(transformers_version="5.23"), jobs=1).run_paths(named).diagnostics]


def test_the_summaries_the_join_reads_are_worked_out_in_one_batch_before_it(tmp_path, monkeypatch):
    """``CallGraphValues.prefetch_summaries``: the records of the calls of each function whose
    parameter a module's facts name, and the returns they name, are worked out before the join,
    in worker processes; none is left for the join to work out alone."""
    _project(tmp_path)
    eager, _, _ = _check(tmp_path, 10**9, monkeypatch)
    original = engine_module._Summaries.__call__

    def alone(self):
        assert self.answer is not None, f"{self.key[0]}: worked out alone, as the join asked"
        return original(self)

    batches = []
    original_many = Engine._summarise_many

    def counting(self, modules):
        batches.append(sorted(m.path for m in modules))
        return original_many(self, modules)

    monkeypatch.setattr(engine_module._Summaries, "__call__", alone)
    monkeypatch.setattr(Engine, "_summarise_many", counting)
    monkeypatch.setattr(engine_module, "PARALLEL_SUMMARIES", 1)
    monkeypatch.setattr(engine_module, "DEFER_SUMMARIES_FROM", 1)
    engine = Engine(config(transformers_version="5.23"), jobs=2)
    monkeypatch.chdir(tmp_path)
    found = [(d.path, d.code, d.span, d.message, d.fix) for d in engine.run_paths(["."]).diagnostics]
    assert found == eager
    # load_0's parameter is named by loader_0's facts: train.py's call of it first; then what
    # that call passes, weights_dtype()'s return, from precision.py
    assert batches == [["train.py"], ["precision.py"]]


def test_join_questions_names_the_parameters_and_returns_a_value_holds():
    from precision_lint.semantic.values import PARAM, RETURN, ParamRef, Possible, ReturnRef, join_questions

    inner = Possible(PARAM, ParamRef("pkg.load", "dtype", 1))
    value = (Possible(RETURN, ReturnRef("pkg.make", args=((0, None, (inner,)),))), Possible("const", True))
    assert join_questions({"site": [value, value]}) == (frozenset({"pkg.load"}), frozenset({"pkg.make"}))
    assert join_questions((Possible("const", 1),)) == (frozenset(), frozenset())


def test_summaries_alone_are_those_of_the_whole_extraction():
    text = dedent(TRAIN)
    whole = extract_facts(text, "train.py", "train")
    alone = extract_facts(text, "train.py", "train", only_summaries=True)
    assert (alone.calls, alone.returns) == (whole.calls, whole.returns) and alone.calls
    assert not alone.sections  # no extractor ran


def test_same_facts_compares_what_was_asked_of_summaries_and_top_level_names():
    """With what the last check asked (``FactsAsked``), a module variable nobody asked for is no
    change, and one asked for is compared by its value, as a name asked of its top level is."""
    from precision_lint.facts.model import FactsAsked

    text = "import torch\n\nDTYPE = torch.float32\n"
    before = extract_facts(text, "config.py", "config")
    added = extract_facts(text + "LIMIT = 3\n", "config.py", "config")
    changed = extract_facts(text.replace("float32", "float16"), "config.py", "config")
    assert not same_facts(before, added)  # compared whole: a summary and a name more
    asked = FactsAsked()
    assert asked.returns_of(before, "config.DTYPE") is not None
    assert asked.binds_at_top(before, frozenset({"DTYPE", "MISSING"})) == {"DTYPE"}
    assert asked.of("config.py") == (frozenset({"config.DTYPE"}), frozenset({"DTYPE", "MISSING"}))
    assert set(asked.kept()) == {"config.py"}
    kept = asked.of("config.py")
    assert same_facts(before, added, kept)
    assert not same_facts(before, changed, kept)
    # `DTYPE = torch.float16` is also the library name it exports (read whole); a literal is not
    batch = extract_facts(text + "BATCH = 8\n", "config.py", "config")
    bigger = extract_facts(text + "BATCH = 16\n", "config.py", "config")
    assert same_facts(batch, bigger, (frozenset(), frozenset({"BATCH"})))  # its value never asked
    assert not same_facts(batch, bigger, (frozenset({"config.BATCH"}), frozenset()))
    assert not same_facts(before, added, (frozenset(), frozenset({"LIMIT"})))  # a name asked comes to be bound
