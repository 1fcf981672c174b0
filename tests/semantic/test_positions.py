"""Positions from CPython's parser are LibCST's positions, node for node.

``facts/positions.py`` places nodes with ``ast`` instead of LibCST's positions pass (which
generates the whole module again). Every range it gives must be the one LibCST gives: a wrong
range would put a finding, or worse a fix's edit, in the wrong place. Each test compares the
two on every expression and argument of a module: hand-written corner cases, real modules of
installed libraries, and generated programs.
"""
from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from precision_lint.semantic.positions import Positions


def _line_starts(source: str):
    starts = [0]
    for i, ch in enumerate(source):
        if ch == "\n" or (ch == "\r" and source[i + 1 : i + 2] != "\n"):
            starts.append(i + 1)
    return starts


# what the analysis asks positions of: expressions, arguments, and import statements and their
# names (where a fix adds an import or the capability probe)
PLACED = (cst.BaseExpression, cst.Arg, cst.Import, cst.ImportFrom, cst.ImportAlias)


def compare(source: str):
    """(nodes placed from ``ast`` and equal to LibCST's range, the ones that differ)."""
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = Positions(source, module, _line_starts(source))
    positions.span(module.body[0]) if module.body else None  # pairs the trees
    placed, wrong = 0, []
    lines = _line_starts(source)
    for node, rng in expected.items():
        if not isinstance(node, PLACED):
            continue
        span = positions._placed(node)
        if span is None:
            continue  # left to LibCST's own pass
        want = (rng.start.line, rng.start.column, rng.end.line, rng.end.column)
        got = (span.line, span.col, span.end_line, span.end_col)
        offsets_ok = (span.start, span.end) == (lines[want[0] - 1] + want[1], lines[want[2] - 1] + want[3])
        if got != want or not offsets_ok:
            wrong.append((type(node).__name__, module.code_for_node(node), got, want))
        else:
            placed += 1
    # whatever is asked for, the answer is LibCST's
    for node, rng in expected.items():
        if isinstance(node, PLACED):
            span = positions.span(node)
            assert (span.line, span.col, span.end_line, span.end_col) == (
                rng.start.line, rng.start.column, rng.end.line, rng.end.column,
            ), module.code_for_node(node)
    return placed, wrong


CORNERS = {
    "parentheses": """
        x = (f(a))
        y = ((g)(b, (c)))
        z = (a and b and c) or (d)
        w = (  # a comment with ( in it
            h(k=(v), *rest, **kw)
        )
    """,
    "tuples": """
        a = 1, 2
        b = (1, 2)
        c = ((1, 2))
        d = (
            1,
            2,
        )
        del a, b
        del (c)
        t[1, 2] = t[(3, 4)]
        for i, j in pairs:
            pass
        e = ()
    """,
    "strings": '''
        s = "a" "b"
        f = f"{x!r:>{width}}" "tail"
        g = rb"\\x00" + b'z'
        doc = """multi
        line"""
        n = -1 + 2.5e-3j
        e = ...
        k = (None, True, False)
    ''',
    "unicode": """
        é = "ü" + ü(ä=1)
        λ = lambda α, *β, γ=1, **δ: α
    """,
    "definitions": """
        @decorator(arg)
        @other.attribute
        async def fn(a, /, b: int = 1, *args, c, d=(2, 3), **kwargs) -> Dict[str, int]:
            return await other(a)

        class C(Base, metaclass=Meta):
            x: int = field(default=0)

            def method(self) -> "C":
                return self
    """,
    "expressions": """
        v = [i for i in range(3) if i] + {k: v for k, v in d.items()} | {1, 2} - {x for x in y}
        w = (a if b else c) if d else e
        if (n := len(a)) > 10 and not flag:
            pass
        g = list(x for x in y)
        r = a[1:2, ::3][...]
        q = x.y.z(1)(2)[3].w
    """,
    "match": """
        match command:
            case Point(x=0, y=yy) if yy > 0:
                pass
            case [1, *rest]:
                pass
            case {"k": v, **others}:
                pass
            case None | True:
                pass
            case str() as text:
                pass
    """,
    "continuations": """
        total = first + \\
            second
        call(
            a,  # first
            b,
        )
        value = (
            one
            or two
        )
    """,
}


@pytest.mark.parametrize("name", sorted(CORNERS))
def test_corner_cases_match_libcst(name):
    placed, wrong = compare(textwrap.dedent(CORNERS[name]).lstrip("\n"))
    assert not wrong
    assert placed > 5


def test_windows_line_ends_and_no_final_newline():
    placed, wrong = compare("x = f(a)\r\ny = (g(b),\r\n     c)")
    assert not wrong and placed >= 5


def test_a_lone_carriage_return_ends_a_line():
    # old Mac line ends: Python's tokenizer (and LibCST) break lines at a lone "\r" too; found by
    # the generated programs ("#\r0" raised IndexError)
    placed, wrong = compare("#\r0")
    assert not wrong and placed == 1
    placed, wrong = compare("x = f(a)\ry = (g(b),\r     c)\r\nz = h(\u00e9)\n")
    assert not wrong and placed >= 8


@pytest.mark.parametrize(
    "source",
    [
        "A#\x0c\nA^\u00c0\u00b7()\n",  # found by the generated programs: a form feed in a comment
        "x = 1  # \u2028 \u00e9\nf('\u00e9', b)\n",  # a line separator in a comment
        "#\x1c\x1d\x1e\x85\n\u00df = g(\u00e4, h('\u00e9'))\n",
    ],
)
def test_characters_str_splitlines_breaks_at_but_python_does_not(source):
    # columns of non-ASCII lines are counted on the line the tokenizer sees, not on the pieces
    # str.splitlines() makes at form feeds and other separators a comment may hold
    placed, wrong = compare(source)
    assert not wrong and placed >= 2


def test_syntax_only_libcst_reads_falls_back():
    # `type X = ...` is 3.12 syntax: CPython 3.11's parser rejects it, LibCST parses it
    source = "type X = list[int]\ny = f(x)\n"
    try:
        cst.parse_module(source)
    except cst.ParserSyntaxError:
        pytest.skip("this LibCST does not parse 3.12 syntax")
    placed, wrong = compare(source)
    assert placed == 0 and not wrong


def _module_file(name: str):
    spec = importlib.util.find_spec(name)
    return Path(spec.origin) if spec and spec.origin else None


# Real modules of what the tests install: large, old and new styles, typing-heavy code.
REAL = [
    "transformers.training_args",
    "transformers.trainer_pt_utils",
    "torch.nn.modules.module",
    "torch.amp.grad_scaler",
    "trl.trainer.sft_trainer",
    "peft.tuners.lora.layer",
]


@pytest.mark.parametrize("name", REAL)
def test_real_modules_match_libcst(name):
    try:
        path = _module_file(name)
    except ImportError:
        path = None
    if path is None or not path.exists():
        pytest.skip(f"{name} is not installed")
    placed, wrong = compare(path.read_text(encoding="utf-8"))
    assert not wrong[:5]
    assert placed > 500


try:
    import hypothesmith
    from hypothesis import HealthCheck, given, settings
except ImportError:  # only the generated programs need them
    hypothesmith = None


if hypothesmith is not None:

    @settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(hypothesmith.from_grammar())
    def test_generated_programs_match_libcst(source):
        try:
            cst.parse_module(source)
        except (cst.ParserSyntaxError, RecursionError, ValueError):
            return  # the grammar's odd corners LibCST itself rejects
        _, wrong = compare(source)
        assert not wrong

else:

    @pytest.mark.skip(reason="hypothesmith is not installed")
    def test_generated_programs_match_libcst():
        pass


STATEMENTS = """
import torch
x = f(a, b)
y: int = g(
    1,
    2,
)
n += h(1)
scaler.unscale_(optimizer)
torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
a = b = c(d)
if ok:
    w = (k(1)
         + 2)
    (m(1)).run()
    z = [
        i for i in range(3)
    ]
    return_value = q; r = s
s.t[0] = u.v(w)
"""


def test_one_statement_lines_are_placed_as_libcst_places_them():
    """``statement_span`` gives LibCST's range of every one-statement line, without starting
    LibCST's positions pass where the line is placed from its expressions."""
    source = textwrap.dedent(STATEMENTS)
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = Positions(source, module, _line_starts(source))
    lines = [n for n in expected if isinstance(n, cst.SimpleStatementLine)]
    assert len(lines) == 12
    for line in lines:
        rng = expected[line]
        span = positions.statement_span(line)
        assert (span.line, span.col, span.end_line, span.end_col) == (
            rng.start.line, rng.start.column, rng.end.line, rng.end.column
        ), module.code_for_node(line)
    placed_alone = [line for line in lines if not isinstance(line.body[0], cst.Import) and len(line.body) == 1]
    fresh = Positions(source, module, _line_starts(source))
    for line in placed_alone:
        small = line.body[0]
        value = getattr(small, "value", None)
        first = small.targets[0].target if isinstance(small, cst.Assign) else getattr(small, "target", value)
        if first.lpar or value.rpar:
            continue
        fresh.statement_span(line)
    assert fresh._libcst is None  # no positions pass for those
