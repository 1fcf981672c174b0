"""Where a module's ``if __name__ == "__main__":`` block lies comes from CPython's tree: a
top-level ``If`` comparing ``__name__`` with ``"__main__"`` (either way round), never the text
of a string, never an ``if`` nested in another block."""
import ast
import textwrap

from precision_lint.facts.extract import extract_facts
from precision_lint.semantic.main_block import main_block_lines


def lines(src: str):
    return main_block_lines(ast.parse(textwrap.dedent(src)))


def test_the_block_runs_from_its_header_to_its_last_statement():
    src = """
    import torch
    if __name__ == "__main__":
        x = 1

        y = 2
    z = 3
    """
    assert lines(src) == ((3, 6),)


def test_the_reversed_comparison_and_parentheses_are_a_main_block():
    assert lines('if "__main__" == __name__:\n    run()\n') == ((1, 2),)
    assert lines("if (\n    __name__ == '__main__'\n):\n    run()\n    done()\n") == ((1, 5),)


def test_an_else_runs_on_import_so_it_is_not_part_of_the_block():
    assert lines('if __name__ == "__main__":\n    run()\nelse:\n    imported()\n') == ((1, 2),)


def test_a_string_holding_the_header_is_no_main_block():
    src = '''
    HELP = """
    if __name__ == "__main__":
        main()
    """
    '''
    assert lines(src) == ()


def test_an_if_nested_in_another_block_is_no_main_block():
    assert lines('if True:\n    if __name__ == "__main__":\n        run()\n') == ()
    assert lines('def f():\n    if __name__ == "__main__":\n        run()\n') == ()
    assert lines('class C:\n    if __name__ == "__main__":\n        run()\n') == ()


def test_other_comparisons_are_no_main_block():
    assert lines('if __name__ != "__main__":\n    run()\n') == ()
    assert lines('if __name__ == "__mp_main__":\n    run()\n') == ()
    assert lines('if __name__ == "__main__" and debug:\n    run()\n') == ()
    assert lines('if name == "__main__":\n    run()\n') == ()


def test_the_facts_of_a_module_carry_the_lines():
    src = 'import torch\nif __name__ == "__main__":\n    torch.zeros(1)\n'
    assert extract_facts(src, "m.py", "m").main_lines == ((2, 3),)
    assert extract_facts('import torch\nx = """\nif __name__ == "__main__":\n    """\n', "m.py", "m").main_lines == ()
