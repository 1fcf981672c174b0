"""``programs.reads_command_line``: whether a module reads the command line a program is run
with, which tells a `.py` file of notebook code run as ``python file.py`` (MP000) from one
IPython runs as cells."""
import ast

import pytest

from precision_lint.semantic.programs import reads_command_line


@pytest.mark.parametrize(
    "source",
    [
        "import sys\npath = sys.argv[1]\n",
        "from sys import argv\n",
        "import argparse\np = argparse.ArgumentParser()\nargs = p.parse_args()\n",
        "def main():\n    args, rest = parser.parse_known_args()\n",
        "from transformers import HfArgumentParser\nm, t = HfArgumentParser((M, T)).parse_args_into_dataclasses()\n",
        "import fire\nfire.Fire(main)\n",
    ],
)
def test_reads_the_command_line(source):
    assert reads_command_line(ast.parse(source))


@pytest.mark.parametrize(
    "source",
    [
        "import sys\nsys.path.append('..')\n",  # `sys` read for something else
        "args = {'lr': 1e-4}\nprint(args['lr'])\n",  # a notebook's own dict of settings
        "argv = ['a']\nprint(argv)\n",  # a name of its own, not `sys.argv`
        "import argparse\np = argparse.ArgumentParser()\n",  # built, never read
    ],
)
def test_reads_no_command_line(source):
    assert not reads_command_line(ast.parse(source))
