"""The possible values of an expression, as plain data.

The evaluator (``evaluate.py``) answers "which values may this expression take?"
with a tuple of :class:`Possible`. A value that cannot be known statically is an
``unknown`` atom and is never guessed: rules only act on what is certain to be
possible. Each atom remembers the guards (``if``/ternary conditions) under which
it is chosen, so a rule can tell ``torch.bfloat16`` from
``torch.bfloat16 if BF16_OK else torch.float32``.
"""
from __future__ import annotations

import dataclasses
from operator import attrgetter
from .._dataclass import dataclass
from typing import Any, Dict, FrozenSet, Iterable, Optional, Tuple

from ..diagnostics import Span

# kinds of atoms
CONST = "const"  # a Python literal: bool, str, int, float, None
DTYPE = "dtype"  # a torch dtype, canonical name: float16, bfloat16, float32, float64, auto
CUDA = "cuda-available"  # torch.cuda.is_available(): True on a GPU machine, False elsewhere
CAPABILITY = "capability"  # a bf16/compute-capability probe (True on sm80+)
COND = "condition"  # some boolean expression built from the above
PARAM = "param"  # a function's parameter: its values are the arguments of its callers (join)
CONFIG = "config"  # a value read from a config file at a literal path: read at the join
RETURN = "return"  # what a project function in another file returns: its summary, at the join
HALF = "half"  # a tensor or model that may be float16; ``value`` says why (``facts/tensors.py``)
UNKNOWN = "unknown"
# a class or function named by its qualified name (``transformers.AutoModelForCausalLM``, a
# project class); made only where a caller asks what an expression *is* (``Evaluator.symbols``)
SYMBOL = "symbol"


@dataclass(frozen=True, slots=True)
class ParamRef:
    """A parameter, named as callers reach it: ``function`` is the function's qualified name,
    ``Class`` for ``__init__`` (callers write ``Class(...)``) or ``Class.method``; ``index`` is
    its position among the arguments a caller passes positionally (``self`` excluded), None
    for keyword-only parameters. (``slots=True``, as :class:`Possible`: 148,000 in transformers.)"""

    function: str
    name: str
    index: Optional[int]
    # `cfg["training"]["fp16"]` of a parameter `cfg`: the keys followed into what callers pass
    keys: Tuple[Any, ...] = ()
    missing: Tuple[Any, ...] = ()
    # the parameter as a tensor that is certainly float16 (``float16.py``): what each call
    # passes is its ``CallArg.fp16``, the argument's certain values, not every value it may take
    fp16: bool = False
    # the function's ``**kwargs``: its key ``keys[0]`` is what a caller passes by that keyword
    var_keyword: bool = False


@dataclass(frozen=True)
class ReturnRef:
    """What a function of another module returns (``load_settings()``), as the caller names
    it, with the keys the caller follows into it (``load_settings()["fp16"]``)."""

    callee: str
    keys: Tuple[Any, ...] = ()
    missing: Tuple[Any, ...] = ()
    # an instance that ``HfArgumentParser`` fills from the command line: its flags are the user's
    command_line: bool = False
    # The arguments of the one call it stands for, when known: ``(position, keyword, values)``.
    # The callee's own parameters in what it returns then take these, not every caller's.
    args: Optional[Tuple[Tuple[Optional[int], Optional[str], Tuple[Any, ...]], ...]] = None
    # An instance that ``HfArgumentParser`` fills from one configuration file
    # (``parse_json_file(json_file=a.args_file)``): the files it may read, as written in the
    # code (the option's default), and ``choice`` (see ``ConfigRef``). A field is the file's key,
    # else the class's default; each file's values are one configuration of the run.
    files: Tuple[str, ...] = ()
    choice: str = ""
    # the command-line option of the script that names the file (``--args_file``): what the
    # script's shipped launches pass there is read as well (``project/interproc.py``)
    option: str = ""
    # not a call: the value another module's module-level name holds (``from configs import
    # MODEL_DTYPE``; ``train_config.MODEL_DTYPE`` of ``from configs import train_config``, where
    # the name is the callee and ``MODEL_DTYPE`` its first key), read from that module's summary
    bound: bool = False


# The value of a key that a config file does not hold: unknown (``cfg["fp16"]`` raises).
MISSING_UNKNOWN: Tuple[Any, ...] = ()


@dataclass(frozen=True)
class ConfigRef:
    """A value of a config file that the code loads from a literal path
    (``yaml.safe_load(open("config.yaml"))["training"]["fp16"]``): ``path`` as written
    in the code, ``keys`` followed from the file's top. ``missing`` is what the code gets
    when the file has no such key: ``MISSING_UNKNOWN``, or ``(default,)`` for
    ``cfg.get("fp16", False)`` and for a key spread into a call by ``**cfg`` (absent: the
    callee's default)."""

    path: str
    keys: Tuple[Any, ...] = ()
    missing: Tuple[Any, ...] = MISSING_UNKNOWN
    # For a file that fills a whole run's arguments (``HfArgumentParser.parse_json_file``): the
    # parse call that reads it (its offset in its module), "" for any other read. The values
    # one such parse reads from different files are different configurations of the run
    # (``Possible.chosen``), never combined.
    choice: str = ""
    # the command-line option naming the file (as ``ReturnRef.option``)
    option: str = ""

    def child(self, key: Any, missing: Tuple[Any, ...] = MISSING_UNKNOWN) -> "ConfigRef":
        return ConfigRef(self.path, self.keys + (key,), missing, self.choice, self.option)

    def __str__(self) -> str:
        return self.path + "".join(f"[{k!r}]" for k in self.keys)


# atoms whose values are known only when files are joined
SYMBOLIC = frozenset({PARAM, CONFIG, RETURN})


def select(atom: "Possible", key: Any, missing: Tuple[Any, ...] = ()) -> Optional["Possible"]:
    """``atom[key]`` for a symbolic atom (a config table, a parameter or a returned value
    that may hold one); None for any other atom."""
    ref = atom.value
    if atom.kind == CONFIG:
        return replace(atom, value=ref.child(key, missing))
    if atom.kind in (PARAM, RETURN):
        return replace(atom, value=replace(ref, keys=ref.keys + (key,), missing=missing))
    return None


@dataclass(frozen=True, slots=True)
class Guard:
    """A condition under which a value is chosen. (``slots=True``, as :class:`Possible`.)"""

    text: str
    positive: bool  # the value is chosen when the condition is true
    capability: bool  # the condition consults the GPU's capability (bf16 support)
    cuda: bool  # the condition consults torch.cuda.is_available()
    param_dtype: bool = False  # the condition checks parameters' dtype (`p.dtype == torch.float16`)
    # The branch is taken only when the user opts in: the condition follows an input (a
    # command-line option that is off by default, a config or arguments object, a parameter),
    # as in `torch.bfloat16 if args.bf16 else torch.float32`. What follows the user's own
    # switch is not hard-coded.
    user_choice: bool = False
    # The value is one the user passes on the command line (an argparse option passed, a
    # TrainingArguments switch, a value other than the shipped launch's), not a choice the code
    # makes from its own flag (`True if args.use_fa2 else False`, whose default the code sets)
    on_command_line: bool = False
    # The branch runs on another device than a CUDA GPU (`if device == "xpu":`, XLA/TPU, HPU,
    # NPU, MPS, CPU): CUDA capability rules say nothing about it.
    other_device: bool = False
    # For a user's choice: the TrainingArguments switch of the command line that the condition
    # reads, where that is all it reads (`targs.fp16` of `HfArgumentParser(TrainingArguments)
    # .parse_args_into_dataclasses()`: "fp16"): the same choice as the `--fp16` a Trainer is
    # given, whatever the variable is called
    option: str = ""
    # The command-line switch the condition reads alone, negated or not, and the value of it
    # under which this branch runs: `"flash_attention_2" if not extra.disable_flash_attn2 else
    # "sdpa"` (a bool field of a dataclass the parser fills) runs its first branch where
    # `disable_flash_attn2` is False. ``switch_passed``: what a bare `--switch` stores (True for
    # a bool field and `store_true`, False for `store_false`). The join reads the shipped
    # launches of the script (``project/options.py``, :func:`switched_by_launches`): a branch
    # every launch switches off runs only by hand.
    switch: str = ""
    switch_on: bool = True
    switch_passed: bool = True
    # The package the branch runs only where it is installed: the condition asks for it and
    # the branch is the one where it was found (`"flash_attention_2" if
    # importlib.util.find_spec("flash_attn") is not None else "sdpa"`, transformers'
    # `is_flash_attn_2_available()`). What fails only without the package cannot fail there.
    package: str = ""


@dataclass(frozen=True, slots=True)
class Possible:
    """One value an expression may take (an atom), with the conditions that choose it and where
    it is written: rules act only on what is certain to be possible, and fixes edit it there.

    ``slots=True``: a run over transformers holds 175,000, and each one's ``__dict__`` was more
    than two thirds of its size (#23); so for the other classes of values and references."""

    kind: str
    value: Any = None
    guards: Tuple[Guard, ...] = ()
    # Where the literal that produced this value is written (for fixes), if known.
    origin: Optional[Span] = None
    # For conditions: the expression text and what it consults.
    text: str = ""
    capability: bool = False
    cuda: bool = False
    # The file ``origin`` lies in, when the value came from another file (a caller's argument).
    where: str = ""
    # The files of the calls the join passed it through (each caller whose argument it is):
    # it reaches its use only in a run that holds all of them (``project/runs.py``).
    via: FrozenSet[str] = frozenset()
    # For a symbolic atom: dtypes the code has already ruled out where it is used
    # (`torch.float32 if dtype == torch.float16 else dtype`), dropped when it is substituted.
    excluded: FrozenSet[str] = frozenset()
    # For a symbolic atom read through `getattr(torch, name)`: its string becomes that dtype.
    torch_attr: bool = False
    # For a tensor (a ``HALF`` atom, or a symbolic atom standing for one): an fp32 upcast
    # (``.float()``) / a two-sided clamp lies between its source and where it is used. The
    # substitution at the join keeps both on what replaces a symbolic atom.
    upcast: bool = False
    clamped: bool = False
    # For a symbolic key into a table the code writes (``DTYPES[cfg["dtype"]]``): the table's
    # literal keys and their values. Substituted, the key's value picks its entry; a key the
    # table does not hold picks nothing (the code raises KeyError there).
    lookup: Tuple[Tuple[Any, Tuple[Any, ...]], ...] = ()
    # For a symbolic atom that is the dtype of a tensor or model (``from_pretrained(name,
    # torch_dtype=dtype)`` with ``dtype`` a parameter or a config value): why that tensor would
    # be float16. Substituted, a float16 value makes it a ``HALF`` atom with this reason (and
    # ``origin``: where the tensor is made); any other value makes it nothing.
    tensor_of: str = ""
    # Reached through a call made inside an enabled ``torch.autocast`` region: autocast is
    # dynamically scoped, so the callee's softmax/log_softmax/kl_div run in float32 there.
    autocast: bool = False
    # A parameter's default value: which parameter (dropped at the join when every recorded
    # call passes that parameter: a default no call can leave is not the code's choice).
    default_of: Optional["ParamRef"] = None
    # For a condition: what it being true implies, as (test, truth) pairs, the test named by
    # the text of the expression that defines it (through variables: ``bf16 = BF16_OK`` is the
    # probe's own text). ``a and not b`` implies (a, True) and (b, False); two values are
    # exclusive when one implies a test the other denies (``bf16=BF16_OK`` and
    # ``fp16=torch.cuda.is_available() and not BF16_OK``).
    terms: FrozenSet[Tuple[str, bool]] = frozenset()
    # A value of the command-line option of this name (``fp16`` for ``--fp16``) of the script
    # that parses it (the file ``where``, else the module's own): at the join, what the
    # script's shipped launches pass replaces it (``project/options.py``), and it is cleared.
    option: str = ""
    # ``(choice, file)``: the value holds only in the configuration where the parse ``choice``
    # (a module and a parse call in it) reads ``file``. Two values of the same choice from
    # different files never hold together (``exclusive``).
    chosen: Tuple[str, str] = ()

    def implies(self) -> FrozenSet[Tuple[str, bool]]:
        """The tests this value being true implies (itself, for a test without parts)."""
        if self.terms:
            return self.terms
        if self.kind in ("condition", "capability", "cuda-available"):
            return frozenset({(self.text or self.kind, True)})
        return frozenset()

    def guarded_by_capability(self) -> bool:
        return self.capability or any(g.capability for g in self.guards)

    def guarded_by_cuda(self) -> bool:
        return self.cuda or self.capability or any(g.cuda or g.capability for g in self.guards)


Values = Tuple[Possible, ...]


def exclusive(a: Possible, b: Possible) -> bool:
    """Whether ``a`` and ``b`` are values of two different configurations of one choice (a
    parse that reads one configuration file of several): no run holds both."""
    return bool(a.chosen and b.chosen) and a.chosen[0] == b.chosen[0] and a.chosen[1] != b.chosen[1]

UNKNOWN_VALUE: Values = (Possible(UNKNOWN),)

# --- dtypes -----------------------------------------------------------------

_DTYPE_ATTRS = {
    "float16": "float16",
    "half": "float16",
    "bfloat16": "bfloat16",
    "float32": "float32",
    "float": "float32",
    "float64": "float64",
    "double": "float64",
}

_DTYPE_STRINGS = {
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "torch.float16": "float16",
    "torch.half": "float16",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "torch.bfloat16": "bfloat16",
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
    "torch.float32": "float32",
    "torch.float": "float32",
    "auto": "auto",
}


def dtype_of_qualname(qualname: Optional[str]) -> Optional[str]:
    """``torch.float16`` / ``torch.half`` → ``"float16"``; other names → None."""
    if not qualname or not qualname.startswith("torch."):
        return None
    head, _, attr = qualname.rpartition(".")
    if head != "torch":
        return None
    return _DTYPE_ATTRS.get(attr)


def may_name_dtype(attr: str) -> bool:
    """Whether an attribute of this name can be a torch dtype (``x.float16``): the qualified
    name of a dotted expression ends with its last attribute, so only such an attribute can
    qualify to one (:func:`dtype_of_qualname`); a bare name may, through its import."""
    return attr in _DTYPE_ATTRS


def dtype_of_string(text: Any) -> Optional[str]:
    """``"fp16"`` / ``"float16"`` → ``"float16"``; other values → None."""
    if isinstance(text, str):
        return _DTYPE_STRINGS.get(text.strip().lower())
    return None


def dtypes(values: Iterable[Possible]) -> Tuple[Possible, ...]:
    """The atoms that denote a dtype, strings like ``"fp16"`` included."""
    out = []
    for v in values:
        if v.kind == DTYPE:
            out.append(v)
        elif v.kind == CONST and dtype_of_string(v.value):
            out.append(Possible(DTYPE, dtype_of_string(v.value), v.guards, v.origin))
    return tuple(out)


def as_switch(values: Iterable[Possible], text: str, origin: Optional[Span] = None) -> Values:
    """``values`` of an expression that is the user's switch (``args.amp``, ``cfg.fp16``), with
    each unknown atom read as the switch itself: True when the user turns ``text`` on, False
    when they leave it off. A switch the user cannot turn on has known values (its callers pass
    ``False``, its option is ``store_false``...) and keeps them."""
    out = []
    for v in values:
        if v.kind != UNKNOWN:
            out.append(v)
            continue
        on = Guard(text, True, False, False, user_choice=True)
        off = Guard(text, False, False, False)
        out += [Possible(CONST, True, v.guards + (on,), origin), Possible(CONST, False, v.guards + (off,))]
    return tuple(dict.fromkeys(out))


# TrainingArguments' switches that a command line turns on (`--fp16`), off by default.
COMMAND_LINE_FLAGS = frozenset({"fp16", "bf16", "tf32", "half_precision_backend"})
# TrainingArguments' options that take a value (`--deepspeed ds.json`), unset by default.
COMMAND_LINE_OPTIONS = frozenset({"deepspeed"})


def command_line_flag(name: str, origin: Optional[Span] = None) -> Values:
    """A TrainingArguments switch such as ``--fp16`` that a parser reads from the command
    line: off unless the user passes it (the user's own choice). What a shipped launch of the
    script passes replaces both at the join (``project/options.py``: ``option``)."""
    choice = Guard(f"--{name}", True, False, False, user_choice=True, on_command_line=True)
    return (Possible(CONST, True, (choice,), origin, option=name), Possible(CONST, False, option=name))


def command_line_option(name: str, origin: Optional[Span] = None) -> Values:
    """A TrainingArguments option that takes a value, such as ``--deepspeed ds.json``, that a
    parser reads from the command line: unset (None) unless the user passes one (their own
    choice, whose value is not known here)."""
    choice = Guard(f"--{name}", True, False, False, user_choice=True, on_command_line=True)
    return (Possible(CONST, None, option=name), Possible(UNKNOWN, guards=(choice,), origin=origin, option=name))


def may_be_true(values: Iterable[Possible]) -> bool:
    """True when one of the values is certainly possible and truthy on some machine.

    ``torch.cuda.is_available()`` and capability probes may be True (on a GPU);
    unknown values are not guessed.
    """
    for v in values:
        if v.kind == CONST and v.value not in (None, False, 0, "", "no", "false", "False"):
            return True
        if v.kind in (CUDA, CAPABILITY):
            return True
        if v.kind == COND and v.value is not False:
            return True
    return False


_SCALARS = (str, int, float, bool, type(None), bytes)
_FIELD_NAMES: Dict[type, Tuple[str, ...]] = {}  # a class → the names of its fields


def field_names(kind: type) -> Tuple[str, ...]:
    """The names of the fields of the dataclass ``kind``, () for any other class, worked out once
    per class (``dataclasses.fields`` on every fact of every module, at every run, was most of
    the join's time)."""
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(f.name for f in dataclasses.fields(kind)) if dataclasses.is_dataclass(kind) else ()
    return names


def replace(obj, /, **changes):
    """``dataclasses.replace(obj, **changes)``, in a quarter of its time for a frozen dataclass
    without ``__post_init__`` whose fields are all ``__init__``'s: its ``__dict__`` copied with
    the changes (``dataclasses.replace`` reads every field and calls ``__init__`` with all of
    them; ``Possible`` has 24, and the join replaces one or two of them for every value each
    caller passes). A frozen instance holds nothing but its fields, so the copy is the object
    ``__init__`` would make. A class with ``__slots__`` has no ``__dict__``: its fields are read
    in one call (``attrgetter``) and given to ``__init__`` with the changes, in half the time of
    ``dataclasses.replace``. Any other class, or a name that is no such field:
    ``dataclasses.replace``."""
    cls = type(obj)
    how = _REPLACEABLE.get(cls, _UNSEEN)
    if how is _UNSEEN:
        how = _REPLACEABLE[cls] = _replaceable(cls)
    if how is None or not how[0].keys() >= changes.keys():
        return dataclasses.replace(obj, **changes)
    position, fields = how
    if fields is None:
        new = object.__new__(cls)
        state = new.__dict__
        state.update(obj.__dict__)
        state.update(changes)
        return new
    values = list(fields(obj))
    for name, value in changes.items():
        values[position[name]] = value
    return cls(*values)


_UNSEEN = object()
_REPLACEABLE: dict = {}


def _replaceable(cls):
    """How :func:`replace` may copy the instances of ``cls``: ``(field → its position, None)``
    to copy the ``__dict__``, ``(field → its position, a getter of all fields)`` for a class
    with ``__slots__``; None where neither may."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or hasattr(cls, "__post_init__") or cls.__new__ is not object.__new__:
        return None
    fields = dataclasses.fields(cls)
    if len(fields) != len(cls.__dataclass_fields__) or any(not f.init for f in fields):
        return None  # an InitVar, a ClassVar or a field __init__ does not take
    position = {f.name: i for i, f in enumerate(fields)}
    slotted = [base for base in cls.__mro__[:-1] if "__slots__" in vars(base)]
    if not slotted:
        return position, None
    if slotted != [cls] or tuple(cls.__slots__) != tuple(position) or len(position) < 2:
        return None  # slots of a base too, or not exactly the fields
    return position, attrgetter(*position)


# Classes whose instances never hold a value the join substitutes (their fields are names and
# references, never a value): awaits_join answers for them without looking inside.
_HOLD_NO_VALUES: set = set()


def holds_no_values(cls):
    """Declares a fact class whose fields never hold a :class:`Possible` (names, lines,
    :class:`TrainRef`): :func:`awaits_join` does not look inside its instances (a module's
    trained-object edges are tens of thousands)."""
    _HOLD_NO_VALUES.add(cls)
    return cls


@holds_no_values
@dataclass(frozen=True, order=True, slots=True)
class TrainRef:
    """A symbolic "is trained" question, answered at the join:

    - ``param-in``: what a function is given for a parameter is trained by the function (or by
      what it hands it to); ``param-out``: what its callers pass for it is trained by them;
    - ``return``: what a function (or a class: its instances) returns is trained by a caller;
    - ``instance``: the instances of a class are trained (its ``self.x`` modules are).

    ``part``: the attribute path below that object the answer is about (``head`` for
    ``AdamW(self.model.head.parameters())``, ``backbone`` for a cast of ``self.backbone`` in the
    class), "" for all of it (``semantic/parts.py``).

    Parameters are named as the callee names them (``function``: as ``param_ref`` gives it,
    ``name``, ``index``) or as a caller passes them (``index``/``keyword``, ``name`` ""). (``slots=True``,
    as :class:`Possible`: 197,000 in transformers.)"""

    kind: str
    function: str
    name: str = ""
    index: Optional[int] = None
    keyword: Optional[str] = None
    part: str = ""


def join_questions(obj) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """The functions whose parameters (``ParamRef.function``) and the callees whose returns
    (``ReturnRef.callee``) the symbolic values of ``obj`` name: what the join will ask of the
    modules that call those functions (their call records) and of the modules that define
    those callees (their return summaries). Each shared part is looked at once."""
    params: set = set()
    returns: set = set()
    seen: set = set()
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, _SCALARS) or type(item) in _HOLD_NO_VALUES or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, ParamRef):
            params.add(item.function)
        elif isinstance(item, ReturnRef):
            returns.add(item.callee)
        if isinstance(item, (tuple, list, frozenset, set)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            stack.extend(getattr(item, name) for name in field_names(type(item)))
    return frozenset(params), frozenset(returns)


def awaits_join(obj, _memo: Optional[dict] = None) -> bool:
    """Whether a fact holds a value the join substitutes: a tuple of values with one that is
    symbolic (a parameter, a configuration file's key, another module's return), a
    command-line option's (``Possible.option``) or one chosen by a command-line switch
    (``Guard.switch``). Worked out once, when the facts are made, so
    that each run walks only the sections that have one (``project/interproc.py``). Facts
    share their parts (one guard, one trained-object reference in many sites): each part is
    looked at once."""
    if isinstance(obj, (_SCALARS, Possible)) or type(obj) in _HOLD_NO_VALUES:
        return False
    memo = {} if _memo is None else _memo
    found = memo.get(id(obj))
    if found is not None:
        return found[1]
    if isinstance(obj, tuple) and obj and all(isinstance(v, Possible) for v in obj):
        result = any(v.kind in SYMBOLIC or v.option or any(g.switch for g in v.guards) for v in obj)
    elif isinstance(obj, (tuple, list)) and _HOLD_NO_VALUES.issuperset(map(type, obj)):
        result = False  # (a module's tens of thousands of trained-object edges: one pass in C)
    elif isinstance(obj, (tuple, list)):
        result = any(awaits_join(v, memo) for v in obj)
    elif isinstance(obj, dict):
        result = any(awaits_join(v, memo) for v in obj.values())
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        result = any(awaits_join(getattr(obj, name), memo) for name in field_names(type(obj)))
    else:
        result = False
    memo[id(obj)] = (obj, result)  # the object is held, so its id is not reused meanwhile
    return result
