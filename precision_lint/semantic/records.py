"""Records the semantic layer hands to the facts: plain, picklable data.

A call of project code with the arguments it passes (:class:`CallRecord`), and why a file
was not analysed (:class:`ParseError`). They are made here, below the facts, and kept in
each file's :class:`facts.model.ModuleFacts`.
"""
from __future__ import annotations

from .._dataclass import dataclass
from typing import Any, Optional, Tuple


@dataclass(frozen=True, slots=True)
class CallArg:
    """One argument of a recorded call: by position (``index``) or by ``keyword``. (``slots=True``:
    call records are tens of thousands in a large tree, #23.)"""

    index: Optional[int]
    keyword: Optional[str]
    values: Tuple[Any, ...]  # Possible atoms, evaluated in the caller
    # why the argument is certainly a float16 tensor (``float16.py``), the ``HALF`` atoms placed
    # at the argument: what a parameter reference marked ``fp16`` takes
    fp16: Tuple[Any, ...] = ()
    # for an argparse namespace handed over (``build_trainer(args)`` of ``args =
    # parser.parse_args()``): ``(dest, values)`` of each option of the caller's parsers, what
    # the callee's ``args.precision`` reads (its values are unknown as a whole)
    fields: Tuple[Tuple[str, Tuple[Any, ...]], ...] = ()

    def passed(self, keys: Tuple[Any, ...]) -> Tuple[Tuple[Any, ...], Tuple[Any, ...]]:
        """The values a parameter read at ``keys`` (``args.precision``: ``("precision",)``) takes
        from this argument, and the keys left to follow into them."""
        if keys and self.fields:
            for dest, values in self.fields:
                if dest == keys[0]:
                    return values, keys[1:]
        return self.values, keys


@dataclass(frozen=True, slots=True)
class CallRecord:
    """A call of a project function, class or method, with the arguments that may carry a
    precision (dtypes, flags, strings, float16 tensors): what the callee's parameters receive
    at the join. Every call is recorded, with or without such arguments: whether *every* call
    of a function runs under autocast decides the precision of what it computes. (``slots=True``,
    as :class:`CallArg`.)"""

    callee: str  # qualified in the caller's namespace (``Class`` for a constructor, ``Class.method``)
    args: Tuple[CallArg, ...]
    guards: Tuple[Any, ...] = ()  # Guard: the conditions the call runs under
    # made inside an enabled torch.autocast region (whose ops then run in autocast's precision)
    autocast: bool = False
    # what the call writes, whether or not its values are recorded above: the keywords, how many
    # arguments by position, and whether a `*args` / `**kwargs` splat may pass any parameter.
    # A call that certainly leaves a parameter out gives it its default (:meth:`omits`).
    keywords: Tuple[str, ...] = ()
    positionals: int = 0
    splat: bool = False

    def omits(self, name: str, index: Optional[int]) -> bool:
        """Whether the call certainly passes nothing for the parameter ``name`` (at position
        ``index``; None: keyword-only)."""
        return not self.splat and name not in self.keywords and (index is None or self.positionals <= index)


@dataclass(frozen=True)
class ParseError:
    """Why a file could not be analysed (syntax, unreadable bytes, too large or too deeply
    nested), reported as MP000-MP002 at the line and column it names."""

    message: str
    line: int
    col: int
    # "syntax" (MP000); "read" / "decode" (MP001): the file's bytes never became text;
    # "size" / "depth" (MP002): text that was not analysed (over max-file-size, nested deeper
    # than the analysis goes); "ipython": a `.py` file CPython refuses only at its IPython lines
    # (`!pip install x`), which nothing shows Python runs (MP000 asks the project).
    kind: str = "syntax"


def run_by_python_note(why: str) -> str:
    """What MP000 adds to the refusal of a ``.py`` file of notebook code that Python runs
    (``why``: what runs it): said by the facts for what the file itself shows (a main block),
    by the rule for what the project shows (an importer, a launcher)."""
    return f" (an IPython line: only IPython runs this file, but {why}; its Python lines were checked)"
