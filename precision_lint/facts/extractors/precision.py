"""Facts about where mixed precision is switched on (read by MP101, MP201).

A *precision site* is a call that turns on fp16 loss scaling or bf16:
``TrainingArguments``/``Seq2SeqTrainingArguments`` and TRL ``*Config`` (``fp16=``,
``bf16=``), ``GradScaler(...)`` (``torch.amp``/``torch.cuda.amp``, ``enabled=``),
``Accelerator(mixed_precision=...)``, Lightning ``Trainer(precision=...)``,
``torch.autocast(..., dtype=...)``. Each records the possible values of the
relevant arguments and where a fix can edit them. Project subclasses of
``TrainingArguments`` whose field defaults turn fp16/bf16 on (the
``HfArgumentParser`` pattern) are recorded as well.
"""
from __future__ import annotations

import ast
import dataclasses
from ..._dataclass import dataclass
from typing import List, Optional, Tuple

from ...diagnostics import Span
from ...semantic.callees import project_callee
from ...semantic.evaluate import ARGUMENT_PARSERS, Evaluator, is_training_arguments
from ...semantic.index import CallSite, ModuleIndex, argument, call_args, keyword, positional, string_value
from ...semantic.tree import nodes_of
from ...semantic.literal_tests import guards_text
from ...semantic.queries import reaching, reaching_at
from ...semantic.values import CONFIG, CONST, UNKNOWN, Possible, Values, as_switch
from .weights import built_conditions, option_conditions  # the tests' reading is the weights sites' own
from ..._regex import lazy

SECTION = "precision"

GRAD_SCALERS = (
    "torch.amp.GradScaler",
    "torch.cuda.amp.GradScaler",
    "torch.amp.grad_scaler.GradScaler",
    "torch.cuda.amp.grad_scaler.GradScaler",
    "torch.cpu.amp.GradScaler",
    "torch.GradScaler",
)
AUTOCASTS = ("torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast")
ACCELERATORS = ("accelerate.Accelerator", "accelerate.accelerator.Accelerator")
LIGHTNING_TRAINERS = ("lightning.Trainer", "pytorch_lightning.Trainer", "lightning.pytorch.Trainer")
# Lightning Fabric takes the same `precision=` ("16-mixed": fp16 autocast and a GradScaler)
FABRICS = ("lightning.Fabric", "lightning.fabric.Fabric", "lightning_fabric.Fabric", "lightning.fabric.fabric.Fabric")


@dataclass(frozen=True)
class Arg:
    """One argument of a precision site: its values and where to edit it."""

    values: Values
    key_span: Optional[Span]  # the keyword name (None for positional)
    value_span: Span
    value_text: str
    via: str  # "keyword", "positional", "dict-call", "dict-literal", "item-assign", "dict-update", "config-splat", "command-line", "parsed", "several", "field-default"
    checks_param_dtype: bool = False  # the expression itself checks the parameters' dtype
    # The user's switch the value is read from (``enabled=args.amp``, ``fp16=cfg.fp16``), as
    # written; "" when it is not one (a literal, a call, a library's value).
    switch: str = ""

    def possible(self) -> Values:
        """The values, where the value of the user's switch is unknown read as the switch
        itself: on when the user turns it on (``GradScaler(enabled=args.amp)`` scales the
        loss whenever ``--amp`` is passed)."""
        return as_switch(self.values, self.switch, self.value_span) if self.switch else self.values

    @property
    def in_code(self) -> bool:
        """Whether the value is written in the call (a fix may edit it), not spread from a
        config file's table (``**cfg["training"]``) or read from the command line by a
        parser (``--fp16``) or filled by a parse of a file, dict or argument list
        (``parser.parse_yaml_file("train.yaml")``), nor set in several places: a fix there is
        a hint."""
        return self.via not in ("config-splat", "command-line", "parsed", "several")


@dataclass(frozen=True)
class PrecisionSite:
    """A call that switches mixed precision on (fp16 loss scaling or bf16), with the arguments
    that decide it and where a fix edits them."""

    kind: str  # "training-args", "training-args-class", "grad-scaler", "accelerator", "lightning", "autocast"
    callee: str
    span: Span
    args: Tuple[Tuple[str, Arg], ...]  # (name, Arg) for the arguments that matter to the kind
    insert_at: int  # offset where a new keyword argument can be inserted (before the closing paren)
    insert_style: str  # see _insertion(): "first", "comma", "after-comma", or a newline + indent
    scope: str
    scope_kind: str
    contexts: Tuple[str, ...]
    targets: Tuple[str, ...] = ()
    deepspeed: Optional[str] = None  # a literal path given as deepspeed=
    # arguments the linter cannot read (``*args``, a ``**kwargs`` it cannot see into, more
    # positional arguments than it reads): an argument not recorded may still be passed
    opaque: bool = False
    # For a GradScaler: the tests it is built under, each ``(values of x, literals, whether x
    # must be among them)`` (``weights.built_conditions``: ``if args.fp16 and not
    # args.deepspeed:``, ``args`` a parameter whose callers' values the join substitutes), and
    # those tests as written. A configuration where one certainly fails builds no scaler.
    when: Tuple[Tuple[Tuple[Possible, ...], Tuple[object, ...], bool], ...] = ()
    built_if: str = ""
    # For training arguments: the object is only read (``training_args.local_rank``), never
    # handed to anything (a Trainer, a function, a container): its fp16 scales no loss
    unused: bool = False
    # For a GradScaler: where each optimizer it steps is made in this module (``scaler.step(opt)``
    # of ``opt = SGD(net.parameters())``), None where one of its steps takes an optimizer made
    # elsewhere (a parameter, an attribute) or it steps none here (:func:`_stepped_optimizers`)
    steps: Optional[Tuple[int, ...]] = None

    def keyword_text(self, name: str, value: str) -> str:
        """The text that adds ``name=value`` at ``insert_at``, in the call's own layout."""
        return keyword_text(self.insert_style, name, value)

    def arg(self, name: str) -> Optional[Arg]:
        for n, a in self.args:
            if n == name:
                return a
        return None

    def built_on(self) -> Optional[bool]:
        """For a GradScaler: True where it is on in every run (built under no test, with no
        ``enabled=`` or one True in every run), False where it is off in every run (each value
        its ``enabled=`` may take, the join's included, is false), None otherwise."""
        enabled = self.arg("enabled")
        values = enabled.values if enabled is not None else ()
        if enabled is not None and values and all(v.kind == CONST and not v.value for v in values):
            return False
        if not self.built_if and (enabled is None or (values and all(v.kind == CONST and v.value is True for v in values))):
            return True
        return None


def keyword_text(style: str, name: str, value: str) -> str:
    """The text that adds ``name=value`` to a call, in the layout ``_insertion`` found."""
    if style == "first":
        return f"{name}={value}"
    if style == "comma":
        return f", {name}={value}"
    if style == "after-comma":
        return f" {name}={value},"
    if style.startswith("^"):  # one per line, above the last argument (a comment ends its line)
        return f"{style[1:]}{name}={value},\n"
    if style.startswith(","):  # one per line, no trailing comma
        return f"{style}{name}={value}"
    return f"{style}{name}={value},"  # one per line, trailing comma kept


def is_training_args(qualname: Optional[str], index: Optional[ModuleIndex] = None) -> bool:
    """TrainingArguments, a TRL training config, or (given ``index``) a class of the module
    derived from one."""
    return is_training_arguments(qualname, index)


def _insertion(index: ModuleIndex, call: ast.Call) -> Tuple[int, str]:
    """Where a new keyword argument goes, and the layout to give it.

    Returns (offset, style): style "first" (no arguments yet), "comma" (append
    ``, name=value``), "after-comma" (a trailing comma: append `` name=value``) or,
    for one argument per line, the indentation (``"\n" + indent``) to reuse; ``"^" + indent``:
    a line of its own above the last argument, whose line ends in a comment and has no comma
    (a comment stays on the line it was written on, never on the inserted one).
    """
    span = index.span(call)
    close = index.source.rfind(")", span.start, span.end)
    items = call_args(call)
    if not items:
        return close, "first"
    last = items[-1]
    last_start, last_end = argument_extents(index, call, items)[-1]
    value_end = index.span(last.value if isinstance(last, (ast.keyword, ast.Starred)) else last).end
    trailing = comma_follows(index.source, last_end, close)
    line_start = index.source.rfind("\n", 0, last_start) + 1
    indent = index.source[line_start:last_start]
    one_per_line = "\n" in index.source[value_end:close] and indent.strip() == ""
    if trailing:
        comma = index.source.find(",", value_end, close)
        if one_per_line and _comment_follows(index.source, comma + 1):
            # `bf16=True,  # why`: the new line goes below the comment, which stays on its line
            return _line_end(index.source, comma + 1), "\n" + indent
        return comma + 1, ("\n" + indent) if one_per_line else "after-comma"
    if one_per_line:
        if _comment_follows(index.source, value_end) and isinstance(last, ast.keyword):
            # `bf16=True  # why` with no comma to put after it: the new line goes above it
            return line_start, "^" + indent
        return value_end, ",\n" + indent
    return value_end, "comma"


def _comment_follows(source: str, offset: int) -> bool:
    """Whether the rest of the line from ``offset`` is a comment."""
    return source[offset : _line_end(source, offset)].strip().startswith("#")


def _line_end(source: str, offset: int) -> int:
    end = source.find("\n", offset)
    end = len(source) if end < 0 else end
    return end - 1 if end > 0 and source[end - 1] == "\r" else end


def _switch(evaluator: Evaluator, expr: ast.expr, text: str, scope, values: Values) -> str:
    """``expr``'s text when it is the user's switch (``args.amp``, ``cfg.fp16``, a parameter);
    "" otherwise, and for a value of a config file (a missing file or key stays unknown)."""
    if any(v.kind == CONFIG for v in values) or not evaluator.reads_input(expr, scope):
        return ""
    return text


# The value a ``deepspeed=`` given a dict takes: set (the Trainer runs DeepSpeed with it).
DEEPSPEED_DICT = "a DeepSpeed config dict"


def _args(index: ModuleIndex, evaluator: Evaluator, site: CallSite, names, positions=()) -> Tuple[Tuple[str, Arg], ...]:
    out = []
    for source in evaluator.kwarg_sources(site.node, site.scope):
        if source.name in names:
            key = key_span(index, source.key)
            text = value_text(index, source.value, source.key)
            values = evaluator.source_values(source, site.scope)
            if source.name == "deepspeed" and all(v.kind == UNKNOWN for v in values) and evaluator.builds_mapping(source.value, site.scope):
                # `deepspeed={"zero_optimization": ...}`: the Trainer runs DeepSpeed with that dict
                values = (Possible(CONST, DEEPSPEED_DICT, origin=index.span(source.value)),)
            out.append(
                (
                    source.name,
                    Arg(
                        values,
                        key,
                        index.span(source.value),
                        text,
                        source.via,
                        evaluator.consults(source.value, site.scope, set())[2],
                        _switch(evaluator, source.value, text, site.scope, values),
                    ),
                )
            )
    # a key set in several places (`d = {...}` then `if ...: d["fp16"] = True`): one argument
    # with the union of their values, which no fix edits
    merged: dict = {}
    for name, arg in out:
        if name in merged:
            first = merged[name]
            arg = dataclasses.replace(arg, values=first.values + arg.values, via="several")
        merged[name] = arg
    out = list(merged.items())
    given = {n for n, _ in out}
    for source in evaluator.kwarg_sources(site.node, site.scope):
        if source.via != "config-splat":
            continue
        for name in names:
            if name not in given:  # an explicit keyword wins (a duplicate raises anyway)
                span = index.span(source.arg)
                values = evaluator.splat_values(source, name, site.scope)
                out.append((name, Arg(values, None, span, index.text(source.arg), source.via)))
    given = {n for n, _ in out}
    pos = positional(site.node)
    for i, name in positions:
        if name not in given and i < len(pos):
            value = pos[i]
            values = evaluator.values(value, site.scope)
            text = argument_text(index, site.node, value)
            switch = _switch(evaluator, value, text, site.scope, values)
            out.append((name, Arg(values, None, index.span(value), text, "positional", switch=switch)))
    return tuple(out)


# The arguments that matter to each kind of site: (keywords, (position, name) pairs).
ARGUMENTS = {
    "training-args": (("fp16", "bf16", "half_precision_backend", "deepspeed", "fp16_opt_level", "use_cpu", "no_cuda"), ()),
    "grad-scaler": (("device", "enabled"), ((0, "device"),)),
    "accelerator": (("mixed_precision",), ()),
    "lightning": (("precision",), ()),
    "autocast": (("device_type", "dtype", "enabled"), ((0, "device_type"),)),
}
# The autocast callables' own positional parameters: `torch.autocast("cuda", torch.bfloat16)`
# passes the dtype second, as `torch.cuda.amp.autocast(True, torch.bfloat16)` does after `enabled`.
_DEVICE_AUTOCAST = ((0, "device_type"), (1, "dtype"), (2, "enabled"))
_DEVICE_SPECIFIC_AUTOCAST = ((0, "enabled"), (1, "dtype"))
AUTOCAST_POSITIONS = {
    "torch.autocast": _DEVICE_AUTOCAST,
    "torch.amp.autocast": _DEVICE_AUTOCAST,
    "torch.cuda.amp.autocast": _DEVICE_SPECIFIC_AUTOCAST,
    "torch.cpu.amp.autocast": _DEVICE_SPECIFIC_AUTOCAST,
}
# A call of a project class whose bases are known only at the join.
PROJECT_CLASS = "project-class"
ARGUMENTS[PROJECT_CLASS] = (
    tuple(dict.fromkeys(n for k in ("training-args", "grad-scaler", "accelerator") for n in ARGUMENTS[k][0])),
    (),
)


def library_kind(qualname: Optional[str], index: Optional[ModuleIndex] = None, seen: Optional[set] = None) -> Optional[str]:
    """The kind of precision site a call of ``qualname`` is, for library classes (and, given
    ``index``, classes of the same module derived from one); None for any other callee."""
    q = qualname or ""
    seen = set() if seen is None else seen
    if not q or q in seen:
        return None
    seen.add(q)
    if is_training_args(q, index):
        return "training-args"
    if q in GRAD_SCALERS or (q.endswith(".GradScaler") and q.startswith("torch")):
        return "grad-scaler"
    if q in ACCELERATORS:
        return "accelerator"
    if q in LIGHTNING_TRAINERS or q in FABRICS or (q.endswith((".Trainer", ".Fabric")) and "lightning" in q):
        return "lightning"
    if q in AUTOCASTS:
        return "autocast"
    if index is not None and q in index.classes:  # a subclass defined in this module
        for base in index.classes[q].bases:
            kind = library_kind(base, None, seen) if base not in index.classes else library_kind(base, index, seen)
            if kind is not None:
                return kind
    return None


# `functools.partial(f, ...)` and the libraries' copies of it: a callable that calls `f` with
# those arguments (an autocast context made once, entered later: `with amp_ctx():`)
PARTIALS = ("functools.partial", "funcy.partial", "toolz.partial", "toolz.curried.partial")


def _partial_autocast(index: ModuleIndex, site: CallSite) -> Optional[str]:
    """The autocast callable a ``partial(...)`` call binds its arguments to, else None."""
    if site.qualname not in PARTIALS:
        return None
    args = positional(site.node)
    bound = index.qualify(args[0], site.scope) if args else None
    return bound if bound in AUTOCASTS else None


def _project_class(index: ModuleIndex, site: CallSite) -> bool:
    """A call of a class that another project module may define (``from .args import MyArgs``)."""
    callee = project_callee(index, site) if site.qualname else None
    return bool(callee) and callee.rsplit(".", 1)[-1][:1].isupper() and callee not in index.classes


def join(module, symbols):
    """At the join: a call of a project class derived from TrainingArguments, GradScaler or
    Accelerator (through any chain of project modules) is that kind of site; other project
    classes are dropped."""
    sites = module.sections.get(SECTION)
    if not sites or not any(s.kind == PROJECT_CLASS for s in sites):
        return module
    out = []
    for site in sites:
        if site.kind != PROJECT_CLASS:
            out.append(site)
            continue
        kind = next(
            (k for name, _, _ in symbols.ancestry(site.callee, module) if (k := library_kind(name)) is not None),
            None,
        )
        if kind is None or kind == "autocast":
            continue
        names = ARGUMENTS[kind][0]
        out.append(
            dataclasses.replace(
                site,
                kind=kind,
                args=tuple((n, a) for n, a in site.args if n in names),
                deepspeed=site.deepspeed if kind == "training-args" else None,
                when=site.when if kind == "grad-scaler" else (),
                built_if=site.built_if if kind == "grad-scaler" else "",
            )
        )
    return dataclasses.replace(module, sections={**module.sections, SECTION: tuple(out)})


def _stepped_optimizers(index: ModuleIndex, scaler: CallSite) -> Optional[Tuple[int, ...]]:
    """Where each optimizer the GradScaler ``scaler`` steps is made: every ``s.step(opt)`` whose
    ``s`` only this call reaches, its ``opt`` a name every binding of which (reaching the step) is
    a call of this module (``opt = torch.optim.SGD(net.parameters())``). None where a step's
    optimizer is made elsewhere (a parameter, an attribute, a container), the scaler is bound to
    no name, or no step is seen: what it steps is then not known here."""
    if not scaler.assigned_to:
        return None
    found: List[int] = []
    for site in index.calls:
        if site.method != "step" or not isinstance(site.receiver, ast.Name) or site.receiver.id not in scaler.assigned_to:
            continue
        bound = reaching(index, site.receiver, site.scope).bindings
        if not bound or any(b.value is not scaler.node for b in bound):
            continue  # another object under that name (`scheduler.step()` of another `s`)
        optimizer = argument(site.node, 0, "optimizer")
        if not isinstance(optimizer, ast.Name):
            return None
        made = reaching(index, optimizer, site.scope).bindings
        if not made or any(not isinstance(b.value, ast.Call) or b.unpack_index is not None for b in made):
            return None
        found.extend(index.span(b.value).start for b in made)
    return tuple(sorted(set(found))) or None


def _parser_sites(index: ModuleIndex, evaluator: Evaluator, site: CallSite) -> List["PrecisionSite"]:
    """``HfArgumentParser((ModelArguments, TrainingArguments))``: the TrainingArguments it
    fills take ``--fp16``/``--bf16`` from the command line (the user's switches). Nothing
    in the code can be edited for them: a fix is a hint."""
    classes = evaluator.parser_classes(site.node) or []
    out = []
    # Each parse that reads fields from the code's own file, dict or argument list is a site
    # of its own, with those values (`parse_yaml_file("train.yaml")`: `fp16: true` there);
    # the user's command line (or a file they name on it) is one site at the parser.
    parses = []
    for call in evaluator.parse_calls(site):
        at = index.call_of(call)
        where = at.scope if at is not None else site.scope
        if evaluator.parse_source(call, where)[0] != "command-line":
            parses.append((call, where, at))
    if not parses or len(parses) < len(evaluator.parse_calls(site)):
        parses.append((None, site.scope, site))
    for cls in classes:
        q = index.qualify(cls, site.scope)
        if not is_training_args(q, index):
            continue
        span = index.span(cls)
        for call, where, at in parses:
            if call is None:
                args = tuple(
                    (name, Arg(tuple(evaluator.command_line_flag(cls, name)), None, span, f"--{name}", "command-line"))
                    for name in ("fp16", "bf16")
                ) + (
                    # `--deepspeed ds.json` hands fp16 to DeepSpeed's own loss scaler (MP101)
                    ("deepspeed", Arg(tuple(evaluator.command_line_option(cls, "deepspeed")), None, span, "--deepspeed", "command-line")),
                )
            else:
                # a dict the code cannot see into (`parse_dict(args)` of what a caller read from
                # the user's file) is the user's, like their command line
                kind = evaluator.parse_source(call, where)[0]
                args = tuple(
                    (
                        name,
                        Arg(
                            tuple(evaluator.parsed_field(call, where, name)),
                            None,
                            index.span(call),
                            index.text(call),
                            "parsed",
                            switch=name if kind == "mapping" else "",
                        ),
                    )
                    # a file's `deepspeed` key hands fp16 to DeepSpeed's own loss scaler (MP101)
                    for name in (("fp16", "bf16", "deepspeed") if kind == "file" else ("fp16", "bf16"))
                )
            here = where.code_scope()
            out.append(
                PrecisionSite(
                    kind="training-args",
                    callee=q,
                    span=index.span(site.node if call is None else call),
                    args=args,
                    insert_at=span.end,
                    insert_style="first",
                    scope=here.qualname,
                    scope_kind=here.kind,
                    contexts=(at or site).contexts,
                    targets=site.assigned_to,
                    unused=_parses_only_read(index, evaluator, site),
                )
            )
    return out


def _parses_only_read(index: ModuleIndex, evaluator: Evaluator, parser: CallSite) -> bool:
    """Whether every parse of ``parser`` is assigned to names whose objects are only read
    (:func:`only_attributes_read`): review 27e's LightSeq script reads ``training_args.local_rank``
    of its parsed TrainingArguments and gives them to no Trainer."""
    calls = evaluator.parse_calls(parser)
    if not calls:
        return False
    names = []
    for call in calls:
        at = index.call_of(call)
        if at is None or not isinstance(at.statement, ast.Assign) or at.statement.value is not call:
            return False
        for target in at.statement.targets:  # `args = ...`, `(model_args, training_args) = ...`
            parts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            for part in parts:
                part = part.value if isinstance(part, ast.Starred) else part
                if not isinstance(part, ast.Name):
                    return False
                names.append(part.id)
    return only_attributes_read(index, names)


# The fields of training arguments that carry their precision on to code that reads them
# (`GradScaler(enabled=training_args.fp16)`): read, the object's switch is used.
_PRECISION_FIELDS = frozenset({"fp16", "bf16", "half_precision_backend", "fp16_opt_level", "deepspeed", "fp16_backend"})


def only_attributes_read(index: ModuleIndex, names) -> bool:
    """Whether every use of the variables ``names`` in the module reads an attribute of their
    object (``args.output_dir``, ``args.to_dict()``) other than its precision switches: none
    hands it on (an argument, a value assigned, returned or put in a container) and none reads
    its ``fp16`` for code of its own."""
    wanted = set(names)
    if not wanted:
        return False
    for node in nodes_of(index.module):
        for child in ast.iter_child_nodes(node):
            if type(child) is ast.Name and child.id in wanted and type(child.ctx) is ast.Load:
                if not (type(node) is ast.Attribute and node.value is child) or node.attr in _PRECISION_FIELDS:
                    return False
    return True


def _built_under(index: ModuleIndex, evaluator: Evaluator, site: CallSite):
    """The tests a call runs under that a configuration may decide (``built_conditions``), and
    the guards as written (``args.fp16 and not args.deepspeed``), both with those of the
    conditional expressions it is a branch of (``GradScaler() if args.precision == "amp" else
    None``: no configuration with another precision builds it; rules read the text for tests
    that exclude each other, and whether it is built in every run); ((), "") for none."""
    guards = site.every_guard
    if not guards:
        return (), ""
    return built_conditions(evaluator, guards, site.scope), guards_text(index, guards)


def _opaque(evaluator: Evaluator, site: CallSite, positions) -> bool:
    """Whether the call passes arguments that cannot be read: ``*args``, a ``**kwargs`` whose
    keys are not known, or positional arguments where none are read."""
    if any(isinstance(arg, ast.Starred) for arg in site.node.args):
        return True
    for arg in site.node.keywords:
        if arg.arg is None and not evaluator.kwarg_sources(_only(site.node, arg), site.scope):
            return True
    return len(positional(site.node)) > len(positions)


def extract(index: ModuleIndex, evaluator: Evaluator):
    out: List[PrecisionSite] = []
    for site in index.calls:
        q = site.qualname or ""
        kind = None
        args: Tuple[Tuple[str, Arg], ...] = ()
        deepspeed = None
        if q in ARGUMENT_PARSERS:
            out.extend(_parser_sites(index, evaluator, site))
            continue
        kind = library_kind(q, index)
        partial_of = _partial_autocast(index, site) if kind is None else None
        if partial_of is not None:  # `partial(torch.cuda.amp.autocast, dtype=torch.bfloat16)`
            kind, q = "autocast", partial_of
        if kind is None and _project_class(index, site):
            # a class of another module, maybe derived from one of these (judged at the join)
            kind = PROJECT_CLASS
        positions = ()
        if kind is not None:
            names, positions = ARGUMENTS[kind]
            positions = AUTOCAST_POSITIONS.get(q, positions) if kind == "autocast" else positions
            if partial_of is not None:  # the partial's own first argument is the callable
                positions = tuple((i + 1, name) for i, name in positions)
            args = _args(index, evaluator, site, names, positions)
            ds = keyword(site.node, "deepspeed")
            if ds is not None and kind in ("training-args", PROJECT_CLASS):
                deepspeed = string_value(ds.value)
        if kind is None or evaluator.dead(site.guards, site.scope):
            continue  # (under a test that never holds: built in no run)
        insert_at, insert_style = _insertion(index, site.node)
        scope = site.scope.code_scope()
        when, built_if = _built_under(index, evaluator, site) if kind in ("grad-scaler", PROJECT_CLASS) else ((), "")
        enabled = keyword(site.node, "enabled") if kind == "grad-scaler" else None
        if enabled is not None:  # `GradScaler(enabled=args.amp)` scales only where `if args.amp: GradScaler()` would be built
            when += option_conditions(index, evaluator, enabled.value, site.scope)
        unused = (
            kind == "training-args" and bool(site.assigned_to) and isinstance(site.statement, ast.Assign)
            and site.statement.value is site.node and only_attributes_read(index, site.assigned_to)
        )
        out.append(
            PrecisionSite(
                kind=kind,
                callee=q,
                span=index.span(site.node),
                args=args,
                insert_at=insert_at,
                insert_style=insert_style,
                scope=scope.qualname,
                scope_kind=scope.kind,
                contexts=site.contexts,
                targets=site.assigned_to,
                deepspeed=deepspeed,
                opaque=_opaque(evaluator, site, positions),
                when=when,
                built_if=built_if,
                unused=unused,
                steps=_stepped_optimizers(index, site) if kind == "grad-scaler" else None,
            )
        )
    # `@dataclass class MyArgs(TrainingArguments): fp16: bool = True` (HfArgumentParser)
    for info in index.classes.values():
        if not any(is_training_args(b) for b in info.bases):
            continue
        scope = index.scopes.get(info.qualname)
        if scope is None:
            continue
        found = []
        for name in ("fp16", "bf16"):
            # a class body's field: the default is the binding the class body ends with
            owner, reached = reaching_at(index, name, scope, None)
            for a in reached if owner is scope else ():
                value = a.value
                if value is not None and evaluator.field_call(value, scope) is not None:
                    given = keyword(value, "default")  # `bf16: bool = field(default=True)`
                    value = given.value if given is not None else None  # (a `default_factory`: not read)
                if value is not None:
                    found.append(
                        (name, Arg(evaluator.values(value, scope), None, index.span(value), index.text(value), "field-default"))
                    )
        if found:
            out.append(
                PrecisionSite(
                    kind="training-args-class",
                    callee=info.qualname,
                    span=index.span(info.node),
                    args=tuple(found),
                    insert_at=index.span(info.node).end,
                    insert_style="first",
                    scope=index.module_name,
                    scope_kind="module",
                    contexts=(),
                )
            )
    return tuple(out)


# --- positions CPython's tree leaves to the text ----------------------------------------------
# `ast` gives a node's range without its parentheses, and a call argument no range of its own
# with them (its star or keyword, its value's parentheses, the comma and blanks after it). What
# the facts record (spans to edit, texts to copy) is read from the source around CPython's
# ranges here.
_BLANK = " \t\f\r\n\\"
_COMMENT = lazy(r"#[^\n]*")


def _blanked(text: str) -> str:
    """``text`` (code between two nodes: no strings there) with its comments blanked out."""
    return _COMMENT().sub(lambda m: " " * len(m.group()), text) if "#" in text else text


def skip_blank(source: str, at: int) -> int:
    """The first offset from ``at`` that is not a blank, a line continuation or a comment
    (``at`` lies between two tokens of an expression, never inside a string)."""
    n = len(source)
    while at < n:
        c = source[at]
        if c in _BLANK:
            at += 1
        elif c == "#":
            at = source.find("\n", at)
            at = n if at < 0 else at
        else:
            break
    return at


def after_open_paren(index: ModuleIndex, call: ast.Call) -> int:
    """The offset just after a call's ``(`` (past the blanks and comments after its callee, and
    the parentheses the callee may close first): where a first argument goes."""
    src = index.source
    at = skip_blank(src, index.span(call.func).end)
    while at < len(src) and src[at] == ")":
        at = skip_blank(src, at + 1)
    return at + 1


def paren_extent(source: str, start: int, end: int, before: int, own: int = 0) -> Tuple[int, int]:
    """The range ``start..end`` of a node with the parentheses around it (``(t - t.max())``).

    ``before`` is where the code in front of the node ends that is not the node's (the end of
    the previous sibling, of ``name=`` for a keyword's value, the start of a ``BinOp`` for its
    left operand); the ``(`` just in front of the node, after it, are the node's own, less
    ``own`` of them that are the parent's (a call's ``(`` before its first argument). Each is
    matched by a ``)`` after ``end``; where one is missing the bare range is kept."""
    gap = _blanked(source[before:start])
    opens = []
    i = len(gap)
    while i > 0 and (gap[i - 1] in _BLANK or gap[i - 1] == "("):
        i -= 1
        if gap[i] == "(":
            opens.append(before + i)
    count = len(opens) - own
    if count <= 0:
        return start, end
    at = end
    for _ in range(count):
        at = skip_blank(source, at)
        if at >= len(source) or source[at] != ")":
            return start, end
        at += 1
    return opens[count - 1], at


def argument_extents(index: ModuleIndex, call: ast.Call, items: Optional[List[ast.AST]] = None) -> List[Tuple[int, int]]:
    """(start, end) of each of ``call_args(call)`` as written: a ``*x``/``name=x``/``**x`` as
    ``ast`` gives it (its value's parentheses included), a positional expression with its own
    parentheses."""
    items = call_args(call) if items is None else items
    out = []
    before, own = index.span(call.func).end, 1
    for item in items:
        span = index.span(item)
        if isinstance(item, (ast.keyword, ast.Starred)):
            extent = (span.start, span.end)
        else:
            extent = paren_extent(index.source, span.start, span.end, before, own)
        out.append(extent)
        before, own = extent[1], 0
    return out


def argument_text(index: ModuleIndex, call: ast.Call, value: ast.expr) -> str:
    """The text of a positional argument of ``call``, with its own parentheses."""
    items = call_args(call)
    for item, (start, end) in zip(items, argument_extents(index, call, items)):
        if item is value:
            return index.source[start:end]
    return index.text(value)


def key_span(index: ModuleIndex, key) -> Span:
    """The span of what names a keyword (a ``KwargSource.key``): the name of ``name=value``
    (an ``ast.keyword``'s own range covers ``name=value``), a dict's string key, or the whole
    ``**cfg`` that spreads a config table."""
    if isinstance(key, ast.keyword) and key.arg is not None:
        return index.name_span(key)
    return index.span(key)


def key_text(index: ModuleIndex, key) -> str:
    """The text of :func:`key_span` (the keyword's name, a string key with its quotes)."""
    span = key_span(index, key)
    return index.source[span.start : span.end]


def value_text(index: ModuleIndex, value: ast.expr, key=None) -> str:
    """A keyword's (or dict entry's) value as written, with its own parentheses
    (``fp16=(True)``): what follows ``key``'s text is the value's."""
    if key is None:
        return index.text(value)
    span = index.span(value)
    start, end = paren_extent(index.source, span.start, span.end, key_span(index, key).end)
    return index.source[start:end]


def comma_follows(source: str, end: int, close: int) -> bool:
    """Whether a comma comes between the last argument's ``end`` and the call's ``)``."""
    return "," in _blanked(source[end:close])


def _only(call: ast.Call, kw: ast.keyword) -> ast.Call:
    """``call`` with ``kw`` as its only argument (a new node: the index never saw it)."""
    return ast.Call(func=call.func, args=[], keywords=[kw])
