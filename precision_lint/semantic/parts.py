"""Parts of a trained object: which attribute path below a whole an answer is about.

``TrainedObjects`` keys an object by what makes it, and ``model.head`` by ``("part", <the
keys of model>, "head")``. Within a module two keys *meet* when they share parameters (one is a
part of the other), and two parts of one whole do not (``training_state.meets``). Across
modules the summary used to flatten a part into its whole: ``AdamW(self.model.head
.parameters())`` in a trainer made every instance of the model class trained, its float16
``self.backbone`` (never handed to an optimizer) included.

Here a key is *anchored*: its outermost whole, and the path below it (``self.backbone.layer``
of class ``Net``: the instances of ``Net``, ``backbone.layer``). A summary's fact and a weights
site's question then name that path (``TrainRef.part``), and the join answers a question when
the trained path and the asked one share parameters: one is the other, or lies below it.
"""
from __future__ import annotations

from typing import Iterable, List, Optional, Tuple

Anchor = Tuple[tuple, Tuple[str, ...], bool]  # (outermost key, path below it, whether a sink may be named)


def anchored(key: tuple) -> Anchor:
    """``(root, path, sinkable)`` of a key: the key of its outermost whole and the attribute
    names down to it. ``self.x`` of class ``K`` is the part ``x`` of ``K``'s instances (no sink:
    what trains ``self.x`` is answered by what its value is, as before)."""
    path: List[str] = []
    while key[0] == "part":
        path.insert(0, key[2])
        key = key[1]
    if key[0] == "self":
        return ("instance", key[1]), (key[2], *path), False
    return key, tuple(path), True


def outermost(anchors: Iterable[Anchor]) -> List[Anchor]:
    """``anchors`` less the parts of a whole they also hold: the object is that whole (``self``
    stands for each ``self.x`` too, which ``self.parameters()`` hands on), and its every part
    lies in it. Linked at a part too, a source would name the whole's own parts below that
    part (``self``'s ``model.head`` trained: its ``head``, as though ``self`` were its
    ``model``)."""
    anchors = list(anchors)
    wholes = {root for root, path, _ in anchors if not path}
    return [anchor for anchor in anchors if not anchor[1] or anchor[0] not in wholes]


def spelled_path(names: Iterable[str]) -> str:
    """The path as the code spells it (``encoder.layer``, ``blocks[0].attn``)."""
    out = ""
    for name in names:
        out += name if name.startswith("[") or not out else f".{name}"
    return out


def split_path(path: str) -> Tuple[str, ...]:
    """The names of a spelled path (``blocks[0].attn`` → ``blocks``, ``[0]``, ``attn``)."""
    out: List[str] = []
    for dotted in path.split(".") if path else ():
        head, _, rest = dotted.partition("[")
        if head:
            out.append(head)
        if rest:
            out.extend(f"[{item}" for item in rest.split("["))
    return tuple(out)


def relation(mine: Iterable[Anchor], theirs: Iterable[Anchor]) -> Optional[Tuple[str, ...]]:
    """How the object of ``mine`` lies in the object of ``theirs``: the path below theirs that
    mine is (``()`` when mine holds all of theirs, or is it), None when they share no
    parameters (two parts of one whole, or two objects)."""
    theirs = list(theirs)
    found: Optional[Tuple[str, ...]] = None
    for root, path, _ in mine:
        for other, their_path, _ in theirs:
            if root != other:
                continue
            n = len(their_path)
            if path[:n] == their_path:
                rest = path[n:]
                if not rest:
                    return ()
                found = found if found is not None and len(found) <= len(rest) else rest
            elif their_path[: len(path)] == path:
                return ()  # mine holds theirs: all of theirs is in it
    return found


def shares(trained: str, asked: str) -> bool:
    """Whether the part ``trained`` and the part ``asked`` of one object share parameters: one
    of them is all of it (""), or one lies below the other."""
    a, b = split_path(trained), split_path(asked)
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def covers(known: str, new: str) -> bool:
    """Whether an answer for the part ``known`` already holds for ``new`` (it is all of it, or
    ``new`` lies below it)."""
    a = split_path(known)
    return split_path(new)[: len(a)] == a


def carried(sink: str, source: str, trained: str) -> Optional[str]:
    """Across an edge "the part ``sink`` of one object is the part ``source`` of another": the
    part of the first that is trained when the part ``trained`` of the second is. None when
    ``trained`` shares nothing with ``source`` (another part of it is trained)."""
    a, b, d = split_path(sink), split_path(source), split_path(trained)
    if d[: len(b)] == b:  # below the part linked (or all of it): that far below the sink's part
        return spelled_path((*a, *d[len(b):]))
    if b[: len(d)] == d:  # a whole holding the part linked: all of the sink's part
        return sink
    return None
