"""Positions from CPython's tree, in characters.

``index.span`` places a node from its ``ast`` range, whose columns CPython counts in UTF-8
bytes: a wrong range would put a finding, or worse a fix's edit, in the wrong place. The
tests pin the ranges of the nodes the analysis places (expressions, arguments, ``with`` items,
parameters, names held as strings, statements) on hand-written corner cases, and check on real
modules that the text of every expression's range is that expression.
"""
from __future__ import annotations

import ast
import importlib.util
import re
import textwrap
from pathlib import Path

import pytest

from precision_lint.semantic.index import build_index, line_starts, nodes_of


def _index(source: str):
    return build_index(source, "m")


def _first(ix, cls, pred=lambda n: True):
    return next(n for n in nodes_of(ix.module) if isinstance(n, cls) and pred(n))


def _where(ix, node):
    span = ix.span(node)
    return (span.line, span.col, span.end_line, span.end_col)


def _check_offsets(ix, node):
    """The offsets and the line/column pairs of a span name the same places."""
    span = ix.span(node)
    starts = line_starts(ix.source)
    assert span.start == starts[span.line - 1] + span.col
    assert span.end == starts[span.end_line - 1] + span.end_col


def test_non_ascii_columns_are_characters():
    ix = _index('é = "ü" + ü(ä=1)\n')
    call = _first(ix, ast.Call)
    assert ix.text(call) == "ü(ä=1)"
    assert _where(ix, call) == (1, 10, 1, 16)
    assert ix.text(_first(ix, ast.Constant, lambda n: n.value == "ü")) == '"ü"'
    kw = call.keywords[0]
    assert ix.text(kw) == "ä=1"
    name = ix.name_span(kw)
    assert ix.source[name.start : name.end] == "ä"
    _check_offsets(ix, call)


def test_a_line_of_ascii_after_a_line_that_is_not():
    ix = _index('s = "αβγ"\nt = f(x)\n')
    call = _first(ix, ast.Call)
    assert _where(ix, call) == (2, 4, 2, 8)
    assert ix.text(call) == "f(x)"


def test_wide_characters_and_multi_line_nodes():
    source = 'x = g(\n    "日本語", 𝒳,\n    k="€")\n'
    ix = _index(source)
    call = _first(ix, ast.Call)
    assert ix.text(call) == 'g(\n    "日本語", 𝒳,\n    k="€")'
    assert ix.text(call.args[1]) == "𝒳"
    assert ix.text(call.keywords[0]) == 'k="€"'
    _check_offsets(ix, call.keywords[0])


def test_keyword_starred_and_double_starred_arguments():
    ix = _index("h(a, *rest, k=(v), **kw)\n")
    call = _first(ix, ast.Call)
    starred = call.args[1]
    assert isinstance(starred, ast.Starred) and ix.text(starred) == "*rest"
    assert ix.text(starred.value) == "rest"
    k, kw = call.keywords
    assert ix.text(k) == "k=(v)" and ix.text(k.value) == "v"  # the value's own parentheses are left out
    assert ix.text(kw) == "**kw" and kw.arg is None
    name = ix.name_span(k)
    assert ix.source[name.start : name.end] == "k"


def test_a_keyword_name_cpython_normalized_spans_the_name_as_written():
    # CPython reads identifiers NFKC-normalized: `ｆｐ16=` is the keyword `fp16`; a finding or
    # a fix on the keyword's name must cover the name as the text writes it, not `ｆｐ16=True`
    ix = _index("TrainingArguments(ｆｐ16=True, bf16 = False)\n")
    fp16, bf16 = _first(ix, ast.Call).keywords
    assert fp16.arg == "fp16"
    name = ix.name_span(fp16)
    assert ix.source[name.start : name.end] == "ｆｐ16"
    name = ix.name_span(bf16)
    assert ix.source[name.start : name.end] == "bf16"


def test_a_parenthesized_tuple_keeps_its_parentheses_a_bare_one_has_none():
    ix = _index("a = 1, 2\nb = (1, 2)\nc = ((3, 4))\nt[5, 6] = 0\n")
    tuples = [n for n in nodes_of(ix.module) if isinstance(n, ast.Tuple)]
    assert [ix.text(t) for t in tuples] == ["1, 2", "(1, 2)", "(3, 4)", "5, 6"]


def test_parenthesized_expressions_leave_their_parentheses_out():
    ix = _index("x = (f(a))\nz = (a and b and c) or (d)\n")
    assert ix.text(_first(ix, ast.Call)) == "f(a)"
    outer = _first(ix, ast.BoolOp, lambda n: isinstance(n.op, ast.Or))
    assert ix.text(outer) == "(a and b and c) or (d)"
    inner = _first(ix, ast.BoolOp, lambda n: isinstance(n.op, ast.And))
    assert ix.text(inner) == "a and b and c"


def test_with_items():
    ix = _index("with torch.autocast('cuda') as ctx, open(p) as (f, g), lock:\n    pass\n")
    items = _first(ix, ast.With).items
    assert [ix.text(i) for i in items] == ["torch.autocast('cuda') as ctx", "open(p) as (f, g)", "lock"]
    _check_offsets(ix, items[1])


def test_parameters_with_defaults_and_annotations():
    source = "def fn(a, /, b: int = 1, *args, c, d=(2, 3), **kwargs) -> int:\n    return a\n"
    ix = _index(source)
    fn = _first(ix, ast.FunctionDef)
    args = {a.arg: a for a in nodes_of(fn.args) if isinstance(a, ast.arg)}
    assert ix.text(args["b"]) == "b: int"
    assert ix.source[ix.param_span(args["b"]).start : ix.param_span(args["b"]).end] == "b: int = 1"
    d = ix.param_span(args["d"])
    assert ix.source[d.start : d.end] == "d=(2, 3)"
    a = ix.param_span(args["a"])
    assert ix.source[a.start : a.end] == "a"
    assert ix.text(fn.args) == "a, /, b: int = 1, *args, c, d=(2, 3), **kwargs"
    name = ix.name_span(fn)
    assert ix.source[name.start : name.end] == "fn"


def test_names_held_as_strings():
    source = textwrap.dedent(
        """
        import torch.cuda.amp as amp, os
        from ..transformers . models import (AutoModel as A)
        @decorator
        async def load(x):
            return x.tokenizer . encode_plus
        class  Config(Base):
            pass
        """
    )
    ix = _index(source)

    def named(node):
        span = ix.name_span(node)
        return ix.source[span.start : span.end]

    imp = _first(ix, ast.Import)
    assert [named(a) for a in imp.names] == ["torch.cuda.amp", "os"]
    frm = _first(ix, ast.ImportFrom)
    assert named(frm) == "transformers . models"
    assert named(frm.names[0]) == "AutoModel"
    assert named(_first(ix, ast.AsyncFunctionDef)) == "load"
    assert named(_first(ix, ast.ClassDef)) == "Config"
    attr = _first(ix, ast.Attribute, lambda n: n.attr == "encode_plus")
    assert named(attr) == "encode_plus"
    assert ix.text(attr) == "x.tokenizer . encode_plus"


def test_statement_spans():
    source = textwrap.dedent(
        """
        import torch
        x = f(a, b)
        y: int = g(
            1,
            2,
        )
        n += h(1)
        a = b = c(d)
        if ok:
            w = (k(1)
                 + 2)
            (m(1)).run()
            return_value = q; r = s
        s.t[0] = u.v(w)
        """
    )
    ix = _index(source)
    simple = [n for n in nodes_of(ix.module) if isinstance(n, ast.stmt) and not isinstance(n, ast.If)]
    texts = [ix.source[ix.statement_span(s).start : ix.statement_span(s).end] for s in simple]
    assert texts == [
        "import torch",
        "x = f(a, b)",
        "y: int = g(\n    1,\n    2,\n)",
        "n += h(1)",
        "a = b = c(d)",
        "w = (k(1)\n         + 2)",
        "(m(1)).run()",
        "return_value = q",
        "r = s",
        "s.t[0] = u.v(w)",
    ]
    block = _first(ix, ast.If).body
    assert ix.text(block) == "w = (k(1)\n         + 2)\n    (m(1)).run()\n    return_value = q; r = s"


def test_windows_line_ends_and_no_final_newline():
    ix = _index("x = f(a)\r\ny = (g(é),\r\n     c)")
    t = _first(ix, ast.Tuple)
    assert ix.text(t) == "(g(é),\r\n     c)"
    assert _where(ix, t) == (2, 4, 3, 7)
    _check_offsets(ix, t)


def test_a_lone_carriage_return_ends_a_line():
    # old Mac line ends: Python's tokenizer breaks lines at a lone "\r" too
    ix = _index("x = f(a)\ry = (g(b),\r     c)\r\nz = h(\u00e9)\n")
    assert ix.text(_first(ix, ast.Call, lambda n: n.func.id == "h")) == "h(\u00e9)"
    assert _where(ix, _first(ix, ast.Call, lambda n: n.func.id == "h")) == (4, 4, 4, 8)


@pytest.mark.parametrize(
    "source",
    [
        "A#\x0c\nA^\u00c0\u00b7()\n",  # a form feed in a comment
        "x = 1  # \u2028 \u00e9\nf('\u00e9', b)\n",  # a line separator in a comment
        "#\x1c\x1d\x1e\x85\n\u00df = g(\u00e4, h('\u00e9'))\n",
    ],
)
def test_characters_str_splitlines_breaks_at_but_python_does_not(source):
    # columns of non-ASCII lines are counted on the line the tokenizer sees, not on the pieces
    # str.splitlines() makes at form feeds and other separators a comment may hold
    ix = _index(source)
    calls = [n for n in nodes_of(ix.module) if isinstance(n, ast.Call)]
    assert calls
    for call in calls:
        _check_offsets(ix, call)
        assert ast.dump(ast.parse(ix.text(call), mode="eval").body) == ast.dump(call)


def test_the_index_never_parses_a_tree_it_is_given(monkeypatch):
    source = "import torch\nx = torch.zeros(1)\n"
    tree = ast.parse(source)

    def refuse(*args, **kwargs):
        raise AssertionError("parsed again")

    monkeypatch.setattr(ast, "parse", refuse)
    ix = build_index(source, "m", False, tree)
    assert ix.module is tree and ix.text(_first(ix, ast.Call)) == "torch.zeros(1)"


# --- every expression's text is that expression -------------------------------------
_UNPLACEABLE = (ast.Starred, ast.Slice, ast.FormattedValue)


def _inside_fstrings(tree):
    """CPython 3.11 places the parts of an f-string unreliably (3.12 exactly): not checked."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            out.update(id(n) for n in ast.walk(node) if n is not node)
    return out


def _dump(node) -> str:
    return re.sub(r"ctx=(Store|Del)\(\)", "ctx=Load()", ast.dump(node))


def _same(again, node) -> bool:
    """The same expression: its kind, and a leaf's identifier or value (cheap enough for large
    modules; the corner cases compare whole trees)."""
    if type(again) is not type(node):
        return False
    for field in ("id", "attr", "value", "n"):
        mine = getattr(node, field, None)
        if isinstance(mine, (str, int, float, complex, bytes)) and getattr(again, field, None) != mine:
            return False
    return True


def _expressions_round_trip(source: str, whole: bool = True) -> int:
    ix = _index(source)
    skip = _inside_fstrings(ix.module)
    checked = 0
    for node in nodes_of(ix.module):
        if not isinstance(node, ast.expr) or isinstance(node, _UNPLACEABLE) or id(node) in skip:
            continue
        if isinstance(node, ast.Tuple) and any(isinstance(e, ast.Slice) for e in node.elts):
            continue  # `a[1:2, ::3]`: no expression outside a subscript
        text = ix.text(node)
        if not whole and len(text) > 200:
            continue  # its parts are checked (parsing every large expression again is slow)
        try:
            again = ast.parse(f"(\n{text}\n)", mode="eval").body
        except SyntaxError:
            again = ast.parse(f"({text})", mode="eval").body  # a string whose lines are joined by "\"
        assert _dump(again) == _dump(node) if whole else _same(again, node), text
        checked += 1
    return checked


def test_corner_cases_round_trip():
    source = textwrap.dedent(
        '''
        v = [i for i in range(3) if i] + {k: v for k, v in d.items()} | {1, 2} - {x for x in y}
        w = (a if b else c) if d else e
        if (n := len(a)) > 10 and not flag:
            pass
        g = list(x for x in y)
        r = a[1:2, ::3][...]
        q = x.y.z(1)(2)[3].w
        s = "a" "b"
        f = f"{x!r:>{width}}" "tail"
        b = rb"\\x00" + b'z'
        doc = """multi
        line"""
        n = -1 + 2.5e-3j
        é = "ü" + ü(ä=1)
        λ = lambda α, *β, γ=1, **δ: α
        total = first + \\
            second
        '''
    )
    assert _expressions_round_trip(source) > 80


def _module_file(name: str):
    spec = importlib.util.find_spec(name)
    return Path(spec.origin) if spec and spec.origin else None


# Real modules of what the tests install: large, old and new styles, typing-heavy code.
REAL = [
    "transformers.training_args",
    "torch.nn.modules.module",
    "torch.amp.grad_scaler",
    "peft.tuners.lora.layer",
]


@pytest.mark.parametrize("name", REAL)
def test_real_modules_round_trip(name):
    try:
        path = _module_file(name)
    except ImportError:
        path = None
    if path is None or not path.exists():
        pytest.skip(f"{name} is not installed")
    assert _expressions_round_trip(path.read_text(encoding="utf-8"), whole=False) > 500
