"""Work and memory of one file's extraction, counted (never timed)."""
import gc

from precision_lint.facts import extract


def _source(reads: int, terms: int) -> str:
    value = " + ".join(f"x{j}" for j in range(terms))
    calls = "".join(f"    out{i} = step(latents, {i})\n    save(out{i})\n" for i in range(reads))
    return (
        "import torch\nfrom transformers.utils import is_torch_version\nfrom mypkg.helpers import load, step, save\n\n"
        'if is_torch_version(">=", "2.0"):\n    import torch.compiler\n\n'
        f"def main():\n    latents = load({value})\n{calls}"
    )


def _walked(source: str, monkeypatch) -> int:
    """How many nodes the flow walks (what may carry a dtype, a config value) visit."""
    extract._load_analysis()
    from precision_lint.semantic import evaluate

    count = [0]
    original = evaluate.Evaluator._reached

    def reached(self, expr, scope, seen, inputs=False, *args, **kwargs):
        for item in original(self, expr, scope, seen, inputs, *args, **kwargs):
            count[0] += inputs
            yield item

    with monkeypatch.context() as m:
        m.setattr(evaluate.Evaluator, "_reached", reached)
        extract.extract_facts(source, "train.py", "train", False, "/tmp")
    return count[0]


def test_a_variable_read_by_many_calls_is_walked_once(monkeypatch):
    """Each call that reads ``latents`` asks what may flow into its arguments: the walk through
    ``latents``' bindings is done once for the variable, not again for every call that reads it.
    A binding 60 terms long costs the same extra visits whether it is read once or 30 times."""
    extra_once = _walked(_source(1, 60), monkeypatch) - _walked(_source(1, 1), monkeypatch)
    extra_thirty = _walked(_source(30, 60), monkeypatch) - _walked(_source(30, 1), monkeypatch)
    assert extra_once > 50
    assert extra_thirty <= 2 * extra_once, (extra_once, extra_thirty)


def test_no_tree_outlives_its_file(monkeypatch):
    """A worker process extracts a thousand files: none of their trees (ModuleIndex, LibCST
    nodes) may stay alive after its facts are made. The version tests of a module were kept in
    a weak-keyed table whose values held their index, so no index was ever freed (3.6 GB)."""
    extract._load_analysis()
    from precision_lint.semantic import index as index_module

    def alive() -> int:
        gc.collect()
        return sum(type(o) is index_module.ModuleIndex for o in gc.get_objects())

    before = alive()
    for i in range(3):
        facts = extract.extract_facts(_source(2, 2), f"train{i}.py", f"train{i}", False, "/tmp")
        assert facts.parsed
    del facts
    assert alive() == before


# A tree walker whose result flows back into its own argument in every branch: each
# `temp, states = walk(child, states)` reads the tuples `walk` returns, and each of those
# returns `states`, reassigned the same way. Asked without a memo or a budget, one question
# branched at every reassignment up to the depth limit (a 1,200-line file of this shape,
# CodeBLEU's DFG.py, took more than five minutes).
_WALKER = "\n".join(
    ["def walk(node, states):", "    out = []", "    states = states.copy()", "    if node.kind == 'leaf':",
     "        states[node.code] = [node.index]", "        return out, states"]
    + [
        line
        for kind in range(8)
        for line in (
            f"    elif node.kind == 'k{kind}':",
            "        for child in node.children:",
            "            temp, states = walk(child, states)",
            "            out += temp",
            "        return out, states",
        )
    ]
    + ["    return out, states", ""]
)


class _TooMuchWork(Exception):
    pass


def test_a_walker_feeding_its_own_result_back_is_evaluated_within_a_budget(monkeypatch):
    """Each question the facts ask evaluates a variable met along several paths once, and makes
    at most ``_MAX_STEPS`` evaluations: the whole file's extraction stays within a few thousand
    (it is stopped at 200,000, where it used to go on for minutes)."""
    extract._load_analysis()
    from precision_lint.semantic import evaluate

    calls = [0]
    original = evaluate.Evaluator._eval

    def counted(self, expr, scope):
        calls[0] += 1
        if calls[0] > 200_000:
            raise _TooMuchWork
        return original(self, expr, scope)

    monkeypatch.setattr(evaluate.Evaluator, "_eval", counted)
    facts = extract.extract_facts(_WALKER, "walker.py", "walker", False, "/tmp", True)
    assert facts.parsed and facts.parse_error is None
    assert calls[0] < 20_000, calls[0]


def test_one_question_never_spends_another_questions_budget():
    """The budget and the memo are the question's own: asking the same argument again, after
    other questions, gives the same values."""
    extract._load_analysis()
    from precision_lint.semantic.evaluate import Evaluator
    from precision_lint.semantic.index import build_index

    index = build_index(_WALKER)
    calls = [site for site in index.calls if site.node.args and getattr(site.node.func, "id", "") == "walk"]
    first = Evaluator(index)
    alone = first.values(calls[-1].node.args[1], calls[-1].scope)
    second = Evaluator(index)
    for site in calls:  # every other question first
        second.values(site.node.args[1], site.scope)
    assert second.values(calls[-1].node.args[1], calls[-1].scope) == alone
    assert any(v.kind == "param" for v in alone)  # the parameter passed on is still found
