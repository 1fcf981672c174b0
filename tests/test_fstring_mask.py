"""``workspace/fstring_mask.py``: a file written for Python 3.12's f-strings (PEP 701), made
readable to this interpreter's parser with every other node where it was."""
import ast
import sys

import pytest

from precision_lint.workspace.fstring_mask import masked, refused_for_fstring

pytestmark = pytest.mark.skipif(
    sys.version_info >= (3, 12), reason="Python 3.12 parses PEP 701 f-strings itself: nothing is put aside"
)

NEWER = {
    "own-quote": 'names = ["a"]\nprint(f"{", ".join(names)}", end="")\nmodel.half()\n',
    "backslash": 'rows = ["a"]\ntext = f"{chr(10).join(rows)}{\'\\n\'.join(rows)}"; model.half()\n',
    "nested": 'x = 1\ns = f"{f"{x}"}" + f"{x}"\nmodel.half()\n',
    "concatenated": 'y = (f"a" f"{"b"}" "c")\nmodel.half()\n',
    "triple-quoted": 'msg = f"""a\n{"x" + \'\\\\n\'}\nb""" if x else f"""{"c"}"""\nmodel.half()\n',
    "field-over-lines": 'out = print(f"{", ".join(\n    names)}", flush=True)\nmodel.half()\n',
    "non-ascii": 's = "é" + f"{"ü"}"; t = model.half()\n',
}


def _places(tree):
    """Every node of ``tree`` by kind and place, a string (an f-string or a plain one) as one
    node whatever it holds."""
    inside = {id(n) for top in ast.walk(tree) if isinstance(top, ast.JoinedStr) for n in ast.walk(top) if n is not top}
    return sorted(
        ("str" if isinstance(n, (ast.JoinedStr, ast.Constant)) else type(n).__name__,
         n.lineno, n.col_offset, n.end_lineno, n.end_col_offset)
        for n in ast.walk(tree)
        if hasattr(n, "lineno") and id(n) not in inside
    )


@pytest.mark.parametrize("source", NEWER.values(), ids=NEWER.keys())
def test_every_node_outside_the_f_strings_keeps_its_place(source):
    with pytest.raises(SyntaxError):
        ast.parse(source)  # what this interpreter says of the file as written
    text = masked(source)
    assert text is not None
    assert text.count("\n") == source.count("\n")
    # LibCST parses 3.12's text; its placing of the same code, compared on a text 3.11 reads
    # with the f-strings replaced by hand by other strings of the same extent, is what the
    # masked text must give: checked here on the nodes that are not f-strings
    tree = ast.parse(text)
    assert any(isinstance(n, ast.Attribute) and n.attr == "half" for n in ast.walk(tree))
    half = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "half"][0]
    line = source.splitlines()[half.lineno - 1].encode()  # CPython's columns count UTF-8 bytes
    assert line[half.col_offset : half.end_col_offset] == b"model.half"


def test_a_text_this_interpreter_reads_is_left_alone():
    assert masked('x = f"{1}" + f"""{"y"}"""\n') is None  # nothing to put aside
    assert masked('x = f"{1 +}"\n') is None  # wrong on every version: LibCST refuses it too


def test_what_is_put_aside_is_an_f_string_of_the_same_extent():
    assert masked('p(f"{"a"}", 1)\n') == 'p(f"     ", 1)\n'
    assert masked('m = f"""\n{"a"}\n"""\n') is None  # 3.11 reads a `"` inside `"""`
    assert masked("m = f'''\n{'a'}\n'''\n") is None
    assert masked('m = f"""{"a"}\n{\'\\n\'}"""\nz = 2\n') == 'm = f"""     \n      """\nz = 2\n'
    assert masked('s = f"{"ü"}é"\n') == 's = f"  ü  é"\n'  # CPython's columns are UTF-8 bytes


def test_a_field_over_lines_outside_brackets_with_code_after_it_is_not_put_aside():
    """Its line break would end the statement early: no padded replacement keeps the rest."""
    assert masked('x = f"{"a"\n} " + y\n') is None
    assert masked('x = (f"{"a"\n} " + y)\n') == 'x = (f"   "\nf"" + y)\n'


def test_the_refusals_that_may_be_a_newer_f_string():
    assert refused_for_fstring("SyntaxError: f-string: expecting '}'")
    assert refused_for_fstring("SyntaxError: unterminated string literal (detected at line 1)")
    assert not refused_for_fstring("SyntaxError: invalid syntax")


def test_every_node_matches_a_hand_masked_text():
    """The masked text against one where each f-string is replaced by hand by a plain string
    of its width: the same tree outside the strings, every place the same."""
    fstrings = ['f"{"x"}"', 'f"{\'\\t\'.join(r)}"']
    source = f"a = {fstrings[0]}\nb = call({fstrings[1]}, k=1)\n"
    by_hand = source
    for written in fstrings:
        by_hand = by_hand.replace(written, '"' + " " * (len(written) - 2) + '"')
    assert _places(ast.parse(masked(source))) == _places(ast.parse(by_hand))
