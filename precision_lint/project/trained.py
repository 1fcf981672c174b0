"""Trained, across functions: the per-function summaries of ``facts/extractors/trained.py``
joined over the project.

Each module says, symbolically, what it trains (a *fact*: ``param-in(train, model)`` for
``def train(model, ...): AdamW(model.parameters())``; ``return(load_model)`` for
``model = load_model(); Trainer(model=model)``) and what follows from what (an *edge*:
``param-in(main, m)`` because ``param-in(train, model)`` for ``def main(m): train(m)``).
Names are made canonical here (``symbols.py``), a caller's argument is matched to the
callee's parameter by position or keyword (as ``interproc.py`` matches values), a class's
instances stand for what calling it returns, and an instance of a subclass trains the
attributes its base classes set. The answer is the least fixpoint.

A derivation remembers the code it went through (module, scope): a question is asked for one
run, and an answer holds there only when every piece of code it went through runs in that run
(a ``__main__`` benchmark of a model library trains nothing in the scripts importing it).

A derivation also remembers the part of its object that is trained (``TrainRef.part``,
``semantic/parts.py``): ``AdamW(self.model.head.parameters())`` in a trainer trains the ``head``
of the model class's instances, and a cast of that class's ``self.backbone`` asks about the
``backbone``: the two share no parameters, and the float16 backbone is not trained. An edge links a
part of one object to a part of another (``train(model.head)``: the ``head`` of what ``load()``
returns is what ``train`` is given): the part trained is carried across it (``parts.carried``),
and another part of the far end (``model.tail``) is not trained by it.
"""
from __future__ import annotations

from typing import Dict, FrozenSet, Hashable, List, Optional, Set, Tuple

from ..facts.model import ModuleFacts
from ..semantic.parts import carried, covers, shares
from ..semantic.values import TrainRef

SECTION = "trained"
MAX_DERIVATIONS = 6

Node = Tuple[str, str, str]  # (kind, canonical function or class, parameter name or "")
Witness = Tuple[str, str]  # (module path, scope)


class TrainedJoin:
    def __init__(self, modules: List[ModuleFacts], symbols) -> None:
        self._symbols = symbols
        self._modules = modules
        self._params: Dict[Tuple[str, str], Set[Tuple[str, Optional[int]]]] = {}  # (kind, f) -> {(name, index)}
        self._derived: Optional[Dict[Node, List[Tuple[FrozenSet[Witness], str, str]]]] = None
        self._functions: Dict[Tuple[str, Hashable], str] = {}  # see _function

    # --- names ----------------------------------------------------------------------
    def _function(self, name: str, module: ModuleFacts) -> str:
        """The canonical function a reference names: asked for each end of every edge (a module
        hands thousands of edges between a few dozen functions), worked out once per name."""
        key = (name, self._symbols.scope(module))  # all that the answer reads of the module
        found = self._functions.get(key)
        if found is None:
            found = self._functions[key] = self._function_of(name, module)
        return found

    def _function_of(self, name: str, module: ModuleFacts) -> str:
        canonical = self._symbols.canonical(name, module)
        owner = self._symbols.init_owner(name, module)
        found, cls = self._symbols.find_class(name, module)
        if cls is not None and owner is not None:
            return self._symbols.canonical(owner.qualname, found)  # the class whose __init__ runs
        return canonical

    def nodes(self, ref: TrainRef, module: ModuleFacts, asking: bool = False) -> List[Node]:
        """The canonical nodes ``ref`` (written in ``module``) stands for: a caller's argument
        (by position or keyword) becomes the callee's parameters it fills."""
        kind = ref.kind
        if kind in ("return", "instance"):
            canonical = self._symbols.canonical(ref.function, module)
            _, cls = self._symbols.find_class(ref.function, module)
            if cls is not None or kind == "instance":
                return [("instance", canonical, "")]
            # what a function returns, or one element of the tuple it returns (`model, tok =
            # load(...)`); a caller that takes the whole value stands for every element
            if ref.index is None:
                return [("return", canonical, "")]
            return [("return", canonical, str(ref.index)), ("return", canonical, "")] if asking else [("return", canonical, str(ref.index))]
        function = self._function(ref.function, module)
        if ref.name:
            self._params.setdefault((kind, function), set()).add((ref.name, ref.index))
            return [(kind, function, ref.name)]
        # a caller's argument: the callee's parameters it may fill
        out = []
        self._collect()
        for other in ("param-in", "param-out"):
            for name, index in self._params.get((other, function), ()):
                if ref.keyword == name or (ref.keyword is None and ref.index is not None and ref.index == index):
                    out.append((kind, function, name))
        return sorted(set(out))

    # --- the fixpoint -------------------------------------------------------------------
    def _collect(self) -> None:
        """The parameters named by their own functions (first, so callers' arguments match)."""
        if getattr(self, "_collected", False):
            return
        self._collected = True
        for module in self._modules:
            summary = module.section(SECTION)
            for fact in summary[0] if summary else ():
                if fact.ref.name:
                    self.nodes(fact.ref, module)
            for ref in summary[1].refs if summary else ():  # each reference the edges name (TrainedEdges)
                if ref.name:
                    self.nodes(ref, module)
            for site in module.section("weights"):
                for ref in site.trained_if:
                    if ref.name:
                        self.nodes(ref, module)

    def _derive(self) -> Dict[Node, List[Tuple[FrozenSet[Witness], str, str]]]:
        """Each node's derivations: ``(witnesses, evidence, part)``, part "" for all of it."""
        if self._derived is not None:
            return self._derived
        self._collect()
        derived: Dict[Node, List[Tuple[FrozenSet[Witness], str, str]]] = {}
        follows: Dict[Node, List[Tuple[Node, Witness, str, str]]] = {}
        work: List[Tuple[Node, FrozenSet[Witness], str, str]] = []
        for module in self._modules:
            summary = module.section(SECTION)
            if not summary:
                continue
            facts, edges = summary
            refs, scopes = edges.refs, edges.scopes
            nodes: Dict[int, List[Node]] = {}
            witnesses: Dict[int, Witness] = {}
            for fact in facts:
                for node in self.nodes(fact.ref, module):
                    work.append((node, frozenset({(module.path, fact.scope)}), fact.evidence, fact.ref.part))
            # the edges in their order; the nodes of each reference worked out once (every
            # parameter is known since _collect: a reference's nodes are the same at each edge)
            for sink, source, scope in edges.numbered():
                sources = nodes[source] if source in nodes else nodes.setdefault(source, self.nodes(refs[source], module))
                if not sources:
                    continue
                targets = nodes[sink] if sink in nodes else nodes.setdefault(sink, self.nodes(refs[sink], module))
                witness = witnesses[scope] if scope in witnesses else witnesses.setdefault(scope, (module.path, scopes[scope]))
                linked = (refs[sink].part, refs[source].part)
                for source_node in sources:
                    for target in targets:
                        follows.setdefault(source_node, []).append((target, witness, *linked))
            # an instance of a class trains what its base classes set on `self`
            for cls in module.classes:
                for name, _, _ in list(self._symbols.ancestry(cls.qualname, module))[1:]:
                    follows.setdefault(("instance", cls.qualname, ""), []).append((("instance", name, ""), (module.path, ""), "", ""))
        while work:
            node, witnesses, evidence, part = work.pop()
            known = derived.setdefault(node, [])
            if any(w <= witnesses and covers(p, part) for w, _, p in known) or len(known) >= MAX_DERIVATIONS:
                continue
            known.append((witnesses, evidence, part))
            for target, witness, sink_part, source_part in follows.get(node, ()):
                there = carried(sink_part, source_part, part)
                if there is None:
                    continue  # another part of the object trained: not the one this edge links
                more = witnesses | {witness} if witness[1] else witnesses
                work.append((target, more, evidence, there))
        self._derived = derived
        return derived

    # --- the question ---------------------------------------------------------------------
    def trained(self, refs, module: ModuleFacts, runs=None) -> str:
        """What trains an object whose symbolic answers are ``refs`` (written in ``module``): the
        evidence, or "" when none holds. ``runs(witnesses)``: whether a derivation's code all
        runs in the run asked about (None: any run)."""
        derived = self._derive()
        for ref in refs:
            for node in self.nodes(ref, module, asking=True):
                for witnesses, evidence, part in derived.get(node, ()):
                    if shares(part, ref.part) and (runs is None or runs(witnesses)):
                        return evidence
        return ""
