"""Facts about which objects' parameters reach an optimizer, for the join across functions.

Within a module, ``semantic/training_state.TrainedObjects`` answers whether the object a
weights site casts or loads is trained there (the weights site records it). What crosses a
function's boundary is kept here as a summary, symbolic until the join
(``project/trained.py``): *facts* (this parameter is trained inside its function; what this
function returns is trained by a caller; this class's instances are trained) and *edges* (this
is trained when that is: a parameter handed on to a function that trains it, a model loaded by
a helper and handed to ``train(model, ...)``).
"""
from __future__ import annotations

from array import array
from typing import Iterator, Tuple

from ..._dataclass import dataclass

from ...semantic.evaluate import Evaluator
from ...semantic.index import ModuleIndex
from ...semantic.training_state import trained_objects
from ...semantic.values import TrainRef, holds_no_values

SECTION = "trained"


@holds_no_values
@dataclass(frozen=True)
class TrainedFact:
    """A summary that something crossing a function's boundary is trained (a parameter, a
    return value, a class's instances), left symbolic for the join to resolve."""

    ref: TrainRef
    evidence: str  # what trains it, as written (`torch.optim.AdamW(...)` (line 12))
    scope: str  # the scope that code runs in (``<module>.__main__`` under the main block)


@holds_no_values
@dataclass(frozen=True)
class TrainedEdge:
    """A summary that ``ref`` is trained when ``because`` is (a model handed on to a function
    that trains it): the join follows edges across files."""

    ref: TrainRef  # trained ...
    because: TrainRef  # ... when this is
    scope: str  # the scope whose code links them


@holds_no_values
@dataclass(frozen=True)
class TrainedEdges:
    """A module's edges, in the order the join meets them: the references and scopes they name,
    each once, and three numbers per edge (``ref``, ``because``, ``scope``). A module may have
    tens of thousands of edges between a few dozen references (transformers'
    ``training_args.py``: 42,505 between 92): written out one object each, they were most of
    its facts, pickled from a worker and read by the join one by one. The numbers are kept as
    the bytes of an ``array("I")``: as a tuple, each took a pointer and most an int of their own
    (13 MB of a run over transformers' 890,000, 3.4 MB as bytes, #23)."""

    refs: Tuple[TrainRef, ...]
    scopes: Tuple[str, ...]
    numbers: bytes  # ``array("I", numbers).tobytes()``: see :func:`numbers_kept`

    def __len__(self) -> int:
        return len(self.numbers) // (3 * _NUMBER_SIZE)

    def numbered(self) -> Iterator[Tuple[int, int, int]]:
        """``(ref, because, scope)`` of each edge, as numbers into ``refs`` and ``scopes``."""
        n = memoryview(self.numbers).cast("I")
        return zip(n[0::3], n[1::3], n[2::3])

    def __iter__(self) -> Iterator[TrainedEdge]:
        refs, scopes = self.refs, self.scopes
        for ref, because, scope in self.numbered():
            yield TrainedEdge(refs[ref], refs[because], scopes[scope])


_NUMBER_SIZE = array("I").itemsize


def numbers_kept(numbers) -> bytes:
    """What :attr:`TrainedEdges.numbers` keeps of ``numbers`` (non-negative, below 2**32)."""
    return array("I", numbers).tobytes()


def extract(index: ModuleIndex, evaluator: Evaluator):
    facts, (refs, scopes, numbers) = trained_objects(index, evaluator).numbered_summary()
    return (
        tuple(TrainedFact(ref, f"{evidence} (line {line})", scope) for ref, evidence, scope, line in facts),
        TrainedEdges(refs, scopes, numbers_kept(numbers)),
    )
