"""The override table (knowledge/overrides.toml) checked against the installed wheels.

For every row that the installed library has reached (``since``): one of the row's ``callers``
in the library's own source calls the method with the argument as the row says (a keyword, or
that many positional arguments), and an override with the old signature called that way fails
with exactly the row's ``error``. A table that drifts from the library fails here, in CI.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import textwrap

import pytest

from precision_lint.knowledge import at_least, overrides
from precision_lint.workspace.config import installed_version

transformers = pytest.importorskip("transformers")

ROWS = overrides()


def _owner(row):
    module, _, name = row.owner.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _installed(row):
    version = installed_version(row.library)
    if version is None:
        pytest.skip(f"{row.library} is not installed")
    if not at_least(version, row.since):
        pytest.skip(f"installed {row.library} predates {row.since}")
    return version


def _calls_of(function, method):
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == method
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "self"
        ):
            yield node


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r.owner}.{r.method}:{r.argument}")
def test_the_library_passes_the_argument(row):
    _installed(row)
    owner = _owner(row)
    calls = [call for caller in row.callers if hasattr(owner, caller) for call in _calls_of(getattr(owner, caller), row.method)]
    assert calls, f"no caller of {row.owner} calls self.{row.method}"
    if row.passed == "keyword":
        assert any(k.arg == row.argument for call in calls for k in call.keywords)
    else:
        assert any(len(call.args) == row.position for call in calls)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r.owner}.{r.method}:{r.argument}")
def test_an_old_signature_fails_with_the_rows_error(row):
    _installed(row)
    owner = _owner(row)
    assert callable(getattr(owner, row.method))
    if row.passed == "keyword":
        params = ["self", "model", "inputs"]
    else:
        params = ["self"] + [f"a{i}" for i in range(1, row.position)]
    namespace = {}
    exec(f"def {row.method}({', '.join(params)}):\n    return None\n", namespace)
    function = namespace[row.method]
    function.__qualname__ = f"Mine.{row.method}"
    cls = type("Mine", (object,), {row.method: function})
    method = getattr(cls(), row.method)
    with pytest.raises(TypeError) as raised:
        if row.passed == "keyword":
            method(None, None, **{row.argument: 1})
        else:
            method(*([None] * row.position))
    expected = row.error.format(cls="Mine", takes=len(params), given=row.position + 1)
    assert f"TypeError: {raised.value}" == expected


def test_the_rows_are_checked_by_hand_where_the_installed_version_cannot_tell():
    # 4.47-4.48 passed `num_items_in_batch` to `compute_loss` only where the model's forward
    # takes no **kwargs; that is read in the wheels (the table's header), not here: the window
    # must lie after `since` and end before a version that passes it on every call again
    for row in ROWS:
        if row.conditional_from is not None:
            assert at_least(row.conditional_from, row.since)
            assert row.conditional_until is not None and at_least(row.conditional_until, row.conditional_from)
