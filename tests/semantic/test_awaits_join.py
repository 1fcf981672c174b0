"""``values.awaits_join``: which facts the join must walk (the rest are final as extracted)."""
from dataclasses import dataclass
from typing import Tuple

from precision_lint.semantic.values import CONFIG, CONST, PARAM, Possible, awaits_join


@dataclass(frozen=True)
class _Site:
    name: str
    values: Tuple[Possible, ...]


def test_only_symbolic_or_option_values_await_the_join():
    final = (Possible(CONST, True), Possible(CONST, None))
    assert not awaits_join(final)
    assert awaits_join((Possible(CONST, True), Possible(PARAM, "f.dtype")))
    assert awaits_join((Possible(CONFIG, "ds.json:fp16"),))
    assert awaits_join((Possible(CONST, False, option="fp16"),))  # what a shipped launch passes


def test_values_are_found_inside_sites_lists_dicts_and_mixed_tuples():
    symbolic = (Possible(PARAM, "load.dtype"),)
    assert awaits_join((_Site("a", (Possible(CONST, 1),)), _Site("b", symbolic)))
    assert awaits_join([{"x": (symbolic, ("lit",), True)}])  # a condition: (values, literals, wanted)
    assert not awaits_join([{"x": ((Possible(CONST, 1),), ("lit",), True)}, "text", 3, None])
    assert not awaits_join(Possible(PARAM, "alone"))  # a value outside a tuple of values is kept as it is
