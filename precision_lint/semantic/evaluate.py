"""Possible-values evaluation of expressions over a :class:`ModuleIndex`.

Follows what training scripts really do to pick a precision: literals, variables
(every assignment in the scope counts: their union), ternaries (both branches,
each remembering its guard), ``if`` blocks around assignments, ``dict(...)`` and
``{...}`` literals splatted with ``**``, argparse options (``store_true`` may be
True, ``default=``, ``choices=``), ``torch.cuda.is_available()`` (may be True),
capability probes, and ``return`` values of local functions. Anything else is
``unknown`` and stays unknown.
"""
from __future__ import annotations

import ast
import io
import itertools
import re
import tokenize
from .._dataclass import dataclass
from typing import Callable, Dict, Iterable, List, Optional, Tuple

from ..knowledge import is_library_training_arguments, model_init_keyword, package_tests
from .callees import project_callee
from .index import FUNCTION_DEFS, NOT_VALUE_BINDERS, Assignment, CallSite, ModuleIndex, Scope, children, element, subscript_key
from .index import arguments, first_argument, is_constant, item_owner, keyword, literal_key, positional, string_value, unstarred
from .names import LIBRARIES, dotted
from .queries import attribute_stored_before, calls_on
from .values import COMMAND_LINE_FLAGS, command_line_flag, command_line_option
from .values import CAPABILITY, CONFIG, CONST, COND, CUDA, DTYPE, PARAM, RETURN, SYMBOL, UNKNOWN, UNKNOWN_VALUE, SYMBOLIC, ConfigRef, Guard, ParamRef, ReturnRef, select, Possible, Values, dtype_of_qualname, dtype_of_string, may_name_dtype
from .values import replace as replace_fields
from .._regex import lazy

CUDA_AVAILABLE = "torch.cuda.is_available"
# Functions whose result tells whether this GPU runs bf16 natively (or its compute capability).
CAPABILITY_FUNCTIONS = frozenset(
    {
        "is_bf16_supported",
        "get_device_capability",
        "get_device_properties",
        "is_torch_bf16_gpu_available",
        "is_torch_bf16_available_on_device",
        "is_bfloat16_supported",
        # ComfyUI's `comfy.model_management.should_use_bf16()`: True from compute capability 8
        # (its custom nodes pick their dtype by it: recall 27c, ComfyUI-SUPIR after its fix)
        "should_use_bf16",
    }
)
# Names and strings that say a condition is about the precision (`args.bf16`,
# `accelerator.mixed_precision == "bf16"`, `cfg.dtype`, `training_args.fp16`).
# The attention implementation is such a switch too (`if args.attn == "flash_attn_2":`).
PRECISION_WORD = lazy(r"bf16|bfloat16|fp16|float16|half|precision|dtype|amp\b|mixed|attn|attention|flash|sdpa", re.IGNORECASE)
# The devices other than a CUDA GPU a condition may select (Intel XPU, Habana HPU, Ascend NPU,
# Apple MPS, XLA/TPU, the CPU), as torch and the backends name them: a string's whole value
# ("xla", "xla:0", "TPU" of torch_xla's device_type()), never a word inside a text.
OTHER_DEVICE = lazy(r"(?:xla|tpu|hpu|xpu|npu|mps|cpu)(?::\d+)?", re.IGNORECASE)
# The backends' own packages (an availability check of theirs: ``torch_npu.npu.is_available()``)
# and torch's modules for those devices (``torch.backends.mps.is_available()``, ``torch.xpu...``).
DEVICE_BACKENDS = ("torch_xla", "torch_npu", "habana_frameworks", "intel_extension_for_pytorch", "optimum.habana")
TORCH_DEVICE_CHECK = lazy(r"torch\.(?:backends\.)?(?:xla|hpu|xpu|npu|mps)\.is_(?:available|built)")
BACKEND_CHECKS = ("is_available", "is_built")
# The libraries' checks that a backend is there (transformers', accelerate's, diffusers'), by the
# function's exact name: where its body is not in the module (imported, or a name the module
# neither defines nor imports), its name is all there is to read.
DEVICE_AVAILABLE = frozenset(
    {
        "is_torch_xla_available",
        "is_torch_tpu_available",
        "is_tpu_available",
        "is_torch_xpu_available",
        "is_xpu_available",
        "is_torch_npu_available",
        "is_npu_available",
        "is_torch_mps_available",
        "is_mps_available",
        "is_torch_hpu_available",
        "is_hpu_available",
    }
)
# TrainingArguments' switches that run the Trainer on the CPU (``if training_args.use_cpu:``).
CPU_SWITCHES = ("use_cpu", "no_cuda")
# Functions that read a config file into plain data (never executing it).
CONFIG_LOADERS = frozenset(
    {
        "yaml.safe_load",
        "yaml.load",
        "yaml.full_load",
        "yaml.unsafe_load",
        "json.load",
        "json.loads",
        "tomllib.load",
        "tomllib.loads",
        "tomli.load",
        "tomli.loads",
        "toml.load",
        "toml.loads",
        "omegaconf.OmegaConf.load",
        "omegaconf.omegaconf.OmegaConf.load",
    }
)
# Calls that copy a table as it is (its keys with it): ``copy.deepcopy(cfg["training"])``
_TABLE_COPIES = frozenset({"copy.deepcopy", "copy.copy"})
# OmegaConf's conversions of a config into plain containers, keys kept (``resolve=``, ``enum_to_str=``)
_OMEGACONF_CONVERSIONS = frozenset({
    "omegaconf.OmegaConf.to_container", "omegaconf.omegaconf.OmegaConf.to_container",
    "omegaconf.OmegaConf.to_object", "omegaconf.omegaconf.OmegaConf.to_object",
})
# The text of the guard of a value an argparse option takes only when the user passes it on the
# command line, where the option has no flag (``Guard.on_command_line``)
PASSED_OPTION = "a command-line option"


# Parsers that fill dataclasses (TrainingArguments among them) from the command line.
ARGUMENT_PARSERS = frozenset(
    {
        "transformers.HfArgumentParser",
        "transformers.hf_argparser.HfArgumentParser",
        "trl.TrlParser",
        "trl.scripts.utils.TrlParser",
    }
)
PARSE_METHODS = frozenset(
    {"parse_args_into_dataclasses", "parse_args_and_config", "parse_known_args", "parse_dict", "parse_yaml_file", "parse_json_file"}
)
# Field specifiers whose ``default=`` (pydantic's: also its first argument) is a class-level
# field's default: dataclasses, pydantic models, attrs classes.
FIELD_SPECIFIERS = frozenset(
    {"dataclasses.field", "pydantic.Field", "pydantic.fields.Field", "attrs.field", "attr.field", "attr.ib", "attr.attrib"}
)
# ``(class, attribute) -> keyword``: an instance's attribute that is the keyword its library
# class was built with (``Accelerator(mixed_precision="no").mixed_precision == "no"``)
LIBRARY_ATTRIBUTES = {
    ("accelerate.Accelerator", "mixed_precision"): "mixed_precision",
    ("accelerate.accelerator.Accelerator", "mixed_precision"): "mixed_precision",
    ("torch.device", "type"): "type",  # `torch.device("mps").type` is "mps": the type given first
}
# Attributes that are part of the string the object was made from: `torch.device("cuda:1").type`
# is "cuda", the text before the index.
_DEVICE_TYPE = ("torch.device", "type")
_MAX_ATOMS = 64
_MAX_DEPTH = 24
# The values a module-level variable is summarised from (Evaluator.module_variables): a literal
# (`-1e9` too), a name, an attribute (`torch.bfloat16`), a call (`yaml.safe_load(...)`,
# `Config()`), a subscript, a ternary or `a or b`; not a table written out (the registries of
# a library's modules: many, large, never a precision)
_VARIABLE_VALUES = (ast.Constant, ast.UnaryOp, ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.IfExp, ast.BoolOp)
# Evaluations one question may make (the nested ``values`` calls below one asked from outside):
# real code needs at most a few hundred (373 on transformers' slice, 139 over 1,500 files of
# the tune repositories). A recursive function whose result flows back into its own arguments
# through many branches (``temp, states = walk(child, states)`` in each branch of a tree walker,
# each return a tuple of ``states``) made one question branch at every reassignment up to
# ``_MAX_DEPTH``: minutes on a 1,200-line file. Past the budget, the rest is unknown.
_MAX_STEPS = 2000


@dataclass(frozen=True)
class KwargSource:
    """Where a keyword argument's value comes from.

    ``key`` is the node that names the keyword: the ``ast.keyword`` ``fp16=...`` of the call
    or of ``dict(fp16=...)`` (its name's range is ``ModuleIndex.name_span(key)``: the keyword's
    own range covers ``fp16=...``), the string key of ``{"fp16": ...}`` or of ``d["fp16"] = v``,
    or the ``**cfg`` keyword a config table is spread by; ``precision.key_span`` gives the
    range that names it in each case. ``value`` is its expression; ``via`` says where it
    comes from.
    """

    name: str
    key: ast.AST
    value: ast.expr
    # "keyword", "dict-call", "dict-literal", "item-assign", "dict-update", "config-splat" (name: SPLAT);
    # "removed": ``d.pop("k")`` / ``del d["k"]``, which ``_override`` applies to the entries before it
    via: str
    # the whole argument: the ``ast.keyword`` (``fp16=x``, ``**cfg``), the ``d["k"] = v``
    # statement; None for a ``{...}`` entry (ast has no node for a key: value pair)
    arg: Optional[ast.AST] = None
    conditional: bool = False  # set under a condition of its own: it may not override
    guards: Tuple = ()  # for `d["k"] = v` / `d.update(...)`: the conditions it is set under
    # the conditions the variable the dict reaches the call through was bound under (`if
    # HAVE_CFG: kw = dict(processing_class=tok)` / `else: kw = dict(tokenizer=tok)`): which
    # versions the entry is written for (``tolerance.source_tolerated``), not its values' own
    bound_under: Tuple = ()


SPLAT = "**"  # the name of a `**table` of a config file: its keys are read at the join
REMOVED = "removed"  # KwargSource.via of a key's removal


def _const(value, guards=(), origin=None) -> Possible:
    return Possible(CONST, value, tuple(guards), origin)


def is_capability_callee(qualname: Optional[str], func: ast.expr) -> bool:
    name = qualname or dotted(func) or ""
    return name.rsplit(".", 1)[-1] in CAPABILITY_FUNCTIONS


def _is_number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _is_literal(node: ast.AST) -> bool:
    """A string, bytes or number written as it is (``True``/``False`` too: ``bool`` is an
    ``int``); not ``None``, ``...`` or an imaginary number."""
    return isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes, int, float))


def _strings_written(text: str) -> int:
    """How many string literals an expression's text writes side by side (``f"a" "b"``: 2;
    an f-string's nested strings are its own); 0 where the text does not tokenize."""
    count = depth = 0
    start, end = getattr(tokenize, "FSTRING_START", None), getattr(tokenize, "FSTRING_END", None)
    try:
        for tok in tokenize.generate_tokens(io.StringIO("(" + text + ")").readline):
            if tok.type == tokenize.STRING and not depth:
                count += 1
            elif tok.type == start:  # Python 3.12+: an f-string is tokens of its own
                count += not depth
                depth += 1
            elif tok.type == end:
                depth -= 1
    except (tokenize.TokenError, SyntaxError):
        return 0
    return count


# what an argparse ``type=`` converts a passed value with that never gives None
_NEVER_NONE_TYPES = frozenset({"int", "float", "str"})


def _option_never_none(call: ast.Call, ix) -> bool:
    """Whether an ``add_argument(...)`` call stores a value other than None wherever it is
    passed: it stores (no ``action=`` but ``"store"``), through ``int``/``float``/``str`` (or
    no ``type=``: the string), never ``nargs="?"`` (that stores ``const``, None unless given)."""
    action = keyword(call, "action")
    if action is not None and not is_constant_string(action.value, "store"):
        return False
    nargs = keyword(call, "nargs")
    if nargs is not None and not (isinstance(nargs.value, ast.Constant) and nargs.value.value in ("+", "*") or isinstance(getattr(nargs.value, "value", None), int)):
        return False
    kind = keyword(call, "type")
    return kind is None or (isinstance(kind.value, ast.Name) and kind.value.id in _NEVER_NONE_TYPES and ix.qualify(kind.value) in (None, f"builtins.{kind.value.id}", kind.value.id))


def is_constant_string(node: ast.AST, text: str) -> bool:
    return isinstance(node, ast.Constant) and node.value == text


def _field_never_none(info, name: str) -> bool:
    """Whether a dataclass of this module (``ClassInfo``) declares field ``name`` as
    ``name: int = 448`` or ``name: int = field(default=448)``: a plain ``int``/``float``/``str``/
    ``bool`` annotation (not Optional) and a literal default other than None."""
    if info is None:
        return False
    for statement in info.node.body:
        if not (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.target.id == name):
            continue
        annotation, value = statement.annotation, statement.value
        if not (isinstance(annotation, ast.Name) and annotation.id in (*_NEVER_NONE_TYPES, "bool")):
            return False
        if isinstance(value, ast.Call) and dotted(value.func) in ("field", "dataclasses.field"):
            default = keyword(value, "default")
            value = default.value if default is not None else None
        return isinstance(value, ast.Constant) and value.value is not None
    return False


def _sets_attribute(site, attr: str) -> bool:
    """Whether a call may set attribute ``attr`` of an object: ``parser.set_defaults(attr=...)``
    (or ``**``), ``setattr(obj, name, ...)`` with that name or one not written out,
    ``obj.__dict__.update(...)``."""
    node = site.node
    if site.method == "set_defaults":
        return any(k.arg in (attr, None) for k in node.keywords)
    if dotted(node.func) == "setattr":
        name = node.args[1] if len(node.args) > 1 else None
        return not (isinstance(name, ast.Constant) and name.value != attr)
    func = node.func
    return isinstance(func, ast.Attribute) and func.attr == "update" and isinstance(func.value, ast.Attribute) and func.value.attr == "__dict__"


def _is_string(node: ast.AST) -> bool:
    """A string or bytes literal (``Constant``; an f-string is a ``JoinedStr``)."""
    return isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))


def _loops(flow: frozenset) -> frozenset:
    """The loops among the conditions of :meth:`ModuleIndex.flow_at`."""
    return frozenset(k for k in flow if k[0] == "loop")


def _part_name(node: ast.AST) -> Optional[str]:
    """The identifier a node holds that is not a variable it reads: an attribute's name
    (``args.bf16``), a keyword's (``f(dtype=...)``), a lambda parameter's. The walks of
    :meth:`Evaluator._reached` read it as they read a variable: a name that may carry what the
    variable of that name holds (an over-reach kept on purpose: the walks were tuned on
    LibCST's tree, where each of these is a ``Name``), and a word that may say "precision"
    (``args.bf16`` is about the precision by its attribute's name)."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, (ast.keyword, ast.arg)):
        return node.arg  # None for `**kwargs`
    return None


def _walked(node: ast.AST) -> List[ast.AST]:
    """The children a walk goes on to: of an f-string, only its ``{...}`` parts; its literal
    text is part of the f-string, not a string literal whose value the walk could read."""
    if isinstance(node, ast.JoinedStr):
        return [v for v in node.values if not isinstance(v, ast.Constant)]
    return children(node)


def _element_values(seq: ast.AST) -> List[ast.expr]:
    """The elements of a tuple, list or set literal, a ``*rest`` as ``rest``."""
    return [unstarred(e) for e in seq.elts]


# how deep in an evaluation a call still records its own arguments as the context of what it
# returns (``call_arguments``)
_CONTEXT_DEPTH = 3
_MAX_TABLE = 32  # entries of a table looked up by a key known only at the join


def _without_context(v: Possible) -> Possible:
    """A returned value kept without the arguments of its own call (contexts do not nest)."""
    if v.kind == RETURN and v.value.args is not None:
        return replace_fields(v, value=replace_fields(v.value, args=None))
    return v


# stands for a variable whose walk is known already (see Evaluator._reached)
_KNOWN = object()


def _unseen(name: str, owner, bound, seen: set) -> Tuple[list, bool]:
    """The bindings among ``bound`` that a walk (:meth:`Evaluator._reached`) has not gone
    through yet, and whether it has not gone through the variable's parameter default yet;
    all of them now marked as seen."""
    fresh = []
    for b in bound:
        key = ("binding", id(b))
        if key not in seen:
            seen.add(key)
            fresh.append(b)
    key = ("default", name, id(owner))
    default = key not in seen
    seen.add(key)
    return fresh, default
# how many variables' walks (_variable_flows) may be under way inside each other
_MAX_FLOW_NESTING = 40


class Evaluator:
    def __init__(self, index: ModuleIndex) -> None:
        self.ix = index
        self._active: set = set()
        self._depth = 0
        self._steps = 0  # the evaluations of the question being answered (_MAX_STEPS)
        # (id(expr), id(scope), symbols) → its values, within the question being answered: a
        # variable reached along several paths of one question is evaluated once
        self._answered: Dict[tuple, Values] = {}
        self._guards: dict = {}
        self._sets: Dict[str, bool] = {}  # attribute → whether the module sets it (``_attribute_set``)
        # (id(expr), id(scope)) → (expr, consults' answer): a guard's test is asked about with
        # either polarity, and the extractors ask about the same conditions again
        self._consulted: Dict[tuple, tuple] = {}
        self._never: dict = {}
        self._flow_memo: Dict[tuple, Tuple[bool, bool]] = {}
        self._flow_busy: set = set()  # the variables whose walk (see _variable_flows) is under way
        self.flow_walks = 0  # how many variables' bindings were walked (a test counts them)
        self._updates: Optional[Dict[str, list]] = None  # dict name → its `.update(...)` calls
        self._removed: Optional[Dict[str, list]] = None  # dict name → its `.pop("k")` / `del d["k"]` (_removals)
        self._contexts: Dict[tuple, tuple] = {}  # (call, scope) → its call_arguments
        self._namespace: Optional[tuple] = None  # namespace_fields, made on first use
        # analyses built on this evaluator once per module and shared by the extractors
        # (``tensors.half_tensors``), keyed by name
        self.analyses: Dict[str, object] = {}
        # while True, a name of a class or function is a ``SYMBOL`` atom, not unknown
        self._symbols = False
        # (id(BoolOp), n) → a BoolOp of its first n operands (see _operands)
        self._prefixes: Dict[Tuple[int, int], ast.BoolOp] = {}

    # --- public -------------------------------------------------------------
    def values(self, expr: Optional[ast.expr], scope: Scope) -> Values:
        if expr is None:
            return UNKNOWN_VALUE
        key = (id(expr), id(scope))
        if not self._depth:
            # a question of its own: its own budget and its own answers (never another's)
            self._steps = 0
            self._answered = {}
        answered = (key, self._symbols)
        found = self._answered.get(answered)
        if found is not None:  # met again along another path of the same question
            return found
        self._steps += 1
        if key in self._active or self._depth > _MAX_DEPTH or self._steps > _MAX_STEPS:
            return UNKNOWN_VALUE
        self._active.add(key)
        self._depth += 1
        try:
            out = self._eval(expr, scope)
        finally:
            self._active.discard(key)
            self._depth -= 1
        out = self._answered[answered] = _dedupe(out)
        return out

    def symbols(self, expr: Optional[ast.expr], scope: Scope) -> Values:
        """The values of ``expr`` where it names a class or function: an imported or defined
        name is a ``SYMBOL`` atom of its qualified name, through variables, ``self.`` attributes,
        dict tables (``KINDS[kind]``: any of the table's values where the key is not known),
        ternaries and parameters (``PARAM``: what the callers pass, at the join). The receiver
        of ``cls.from_pretrained(...)`` is read so."""
        before = self._symbols
        self._symbols = True
        try:
            return self.values(expr, scope)
        finally:
            self._symbols = before

    def _symbol(self, expr: ast.expr, scope: Scope, origin) -> Optional[Possible]:
        """``expr`` as a ``SYMBOL`` atom where it names an imported or defined class or
        function (symbols mode only)."""
        if not self._symbols:
            return None
        qual = self.ix.qualify(expr, scope)
        if not qual or dtype_of_qualname(qual):
            return None
        return Possible(SYMBOL, qual, origin=origin)

    def guard(self, test: ast.expr, positive: bool, scope: Scope) -> Guard:
        # the same test guards every value evaluated under it: worked out once
        key = (id(test), id(scope), positive)
        found = self._guards.get(key)
        if found is None:
            capability, cuda, param_dtype = self.consults(test, scope, set())
            text = self.ix.text(test)
            user_choice = positive and not (capability or cuda) and self._follows_user_input(test, scope)
            found = self._guards[key] = Guard(
                text=text,
                positive=positive,
                capability=capability,
                cuda=cuda or capability,
                param_dtype=param_dtype,
                user_choice=user_choice,
                # a branch for another device, or the branch where the run is on no CUDA GPU
                # (`torch.float16 if device == "cuda" else torch.bfloat16`: bf16 on the CPU only)
                other_device=(positive and self.selects_other_device(test, scope, {})) or self._off_cuda(test, positive, scope),
                # (either way round for the switch itself: `torch.float32 if targs.fp16 else ...`)
                option=self._switch_read(test, scope) if user_choice or _part_name(test) in COMMAND_LINE_FLAGS else "",
                package=self._package_found(test, scope, positive),
                **self._switch_of(test, positive, scope),
            )
        return found

    def _package_found(self, test: ast.expr, scope: Scope, positive: bool, depth: int = 0) -> str:
        """The package ``test`` finds installed in its ``positive`` branch (``Guard.package``):
        ``importlib.util.find_spec("flash_attn")`` (true, or ``is not None``), a library's own
        availability test (``knowledge.package_tests``), ``not`` and ``and`` of them (every test of an
        ``and`` holds in its true branch), or a name bound once to one of these. "" otherwise."""
        if depth > 4:
            return ""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._package_found(test.operand, scope, not positive, depth + 1)
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and positive:
            found = (self._package_found(v, scope, True, depth + 1) for v in test.values)
            return next((p for p in found if p), "")
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and is_constant(test.comparators[0], None):
            present = isinstance(test.ops[0], (ast.IsNot, ast.NotEq))
            if present or isinstance(test.ops[0], (ast.Is, ast.Eq)):
                return self._package_found(test.left, scope, positive == present, depth + 1)
            return ""
        if isinstance(test, ast.Name):
            owner, reached = self.ix.bindings_of(test, scope)
            if owner is not None and len(reached) == 1 and reached[0].value is not None and reached[0].unpack_index is None:
                return self._package_found(reached[0].value, owner, positive, depth + 1)
            return ""
        if not positive or not isinstance(test, ast.Call):
            return ""
        q = self.ix.qualify(test.func, scope) or ""
        if q == "importlib.util.find_spec" and test.args and isinstance(test.args[0], ast.Constant):
            name = test.args[0].value
            return name.split(".")[0] if isinstance(name, str) else ""
        return package_tests().get(q, "")

    def _switch_of(self, test: ast.expr, positive: bool, scope: Scope) -> Dict[str, object]:
        """``Guard.switch`` and its values where ``test`` reads one command-line switch alone,
        negated or not: a bool field of the arguments a parser fills from the command line
        (``extra.disable_flash_attn2``, before the join a return of the parse) or an argparse
        ``store_true``/``store_false`` option (``args.no_fa``: its default, and the value
        passing it stores, guarded by that choice). Nothing for any other test."""
        runs_when = positive
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, runs_when = test.operand, not runs_when
        if not isinstance(test, (ast.Name, ast.Attribute)):
            return {}
        values = self.values(test, scope)
        if len(values) == 1 and values[0].kind == RETURN:
            ref = values[0].value
            if ref.command_line and len(ref.keys) == 1 and not ref.files and not ref.missing:
                return {"switch": ref.keys[0], "switch_on": runs_when, "switch_passed": True}
            return {}
        # an argparse switch: its default, and the other value, stored where it is passed
        # (`args.fa2 or True` is True either way: no switch)
        if any(v.kind != CONST or not isinstance(v.value, bool) or len(v.guards) > 1 for v in values):
            return {}
        passing = [v for v in values if v.guards]
        flags = {g.text[2:].replace("-", "_") for v in passing for g in v.guards if g.on_command_line and g.user_choice and g.text.startswith("--")}
        stored = {v.value for v in passing}
        if len(flags) != 1 or len(stored) != 1 or len(passing) != sum(1 for v in passing for g in v.guards if g.on_command_line):
            return {}
        passed = stored.pop()
        if any(v.value == passed for v in values if not v.guards):
            return {}
        return {"switch": flags.pop(), "switch_on": runs_when, "switch_passed": passed}

    def _switch_read(self, test: ast.expr, scope: Scope) -> str:
        """The command-line switch of a parsed TrainingArguments that ``test`` is, read as it is
        (``targs.fp16``, a variable bound to it): its option's name, else ""."""
        if not isinstance(test, (ast.Name, ast.Attribute)):
            return ""
        options = set()
        for v in self.values(test, scope):
            if v.kind == RETURN and v.value.command_line:  # the parsed class's field, before the join
                options.add(v.value.keys[-1] if len(v.value.keys) == 1 else "")
            else:
                options.add(v.option if v.kind == CONST else "")
        return options.pop() if len(options) == 1 and "" not in options and COMMAND_LINE_FLAGS.issuperset(options) else ""

    def selects_other_device(self, test: ast.expr, scope: Scope, seen: dict) -> bool:
        """Whether a condition holds only on a device other than a CUDA GPU, read from its
        tree: it compares a value with a string that is such a device, or a ``torch.device`` of
        one (``device == "xpu"``, ``device == torch.device("cpu")``,
        ``args.device in ("mps", "cpu")``, ``device.type == "npu"``,
        ``str(device).startswith("xla")``, ``"xla" in device``), directly or through a
        variable bound to one (``XLA = "xla"``); it calls a backend's availability check
        (``torch.backends.mps.is_available()``, ``torch_npu.npu.is_available()``,
        ``is_torch_xla_available()``: :data:`DEVICE_AVAILABLE`) or a local function that
        returns one; it reads TrainingArguments' ``use_cpu``/``no_cuda`` of an object made by
        such a call; or it is a variable every reaching binding of which is such a condition.
        ``a and b`` holds there when either does, ``a or b`` when both do; a negation never
        does. Words in the text (``use_mps_fallback``, ``cfg.xla_compat_mode``, a comment,
        ``"use cuda not xla"``) say nothing."""
        if isinstance(test, ast.BoolOp):
            if isinstance(test.op, ast.And):
                return any(self.selects_other_device(v, scope, seen) for v in test.values)
            return all(self.selects_other_device(v, scope, seen) for v in test.values)
        if isinstance(test, ast.Compare):
            left = test.left
            for op, right in zip(test.ops, test.comparators):
                # `x == "xpu"`, `x in ("mps", "cpu")`, `"xla" in str(device)`
                if isinstance(op, (ast.Eq, ast.Is, ast.In)) and (
                    self._device_strings(left, scope, seen) or self._device_strings(right, scope, seen)
                ):
                    return True
                left = right
            return False
        if isinstance(test, ast.Call):
            func = test.func
            if isinstance(func, ast.Attribute) and func.attr == "startswith" and (test.args or test.keywords):
                return self._device_strings(first_argument(test), scope, seen)  # `str(device).startswith("xla")`
            return self._checks_device(test, scope, seen)
        if isinstance(test, ast.Attribute) and test.attr in CPU_SWITCHES:
            return self._made_by_training_arguments(test.value, scope)
        if isinstance(test, ast.Name):
            return self._every_binding(test, scope, seen, self.selects_other_device)
        return False

    def _off_cuda(self, test: ast.expr, positive: bool, scope: Scope) -> bool:
        """Whether the branch of ``test`` taken when it is ``positive`` runs on no CUDA GPU: the
        false branch of a CUDA test (:meth:`_tests_cuda`), the true branch of its negation
        (``not torch.cuda.is_available()``, ``device != "cuda"``)."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._off_cuda(test.operand, not positive, scope)
        if positive and isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.NotEq, ast.IsNot)):
            return _names_cuda(test, ast.Eq())  # `device != "cuda"`
        return not positive and self._tests_cuda(test, scope, {})

    def _tests_cuda(self, test: ast.expr, scope: Scope, seen: dict) -> bool:
        """Whether a test holds exactly where the run is on a CUDA GPU: ``torch.cuda.is_available()``,
        ``device == "cuda"`` / ``device.type == "cuda"`` / ``"cuda" in device``,
        ``str(device).startswith("cuda")``, or a variable every reaching binding of which is
        one (``seen``: the variables worked out in this question, as :meth:`_every_binding` keeps
        them: a binding that reads itself ends there). Its false branch is the run on the CPU (or
        another device), where no CUDA capability matters. ``a and b`` is not one (it fails on a
        GPU where ``b`` does)."""
        if isinstance(test, ast.Call):
            site = self.ix.call_of(test)
            qual = site.qualname if site is not None else self.ix.qualify(test.func, scope)
            return qual == CUDA_AVAILABLE or _starts_with_cuda(test)
        if isinstance(test, ast.Compare):
            return len(test.ops) == 1 and _names_cuda(test, test.ops[0])
        if isinstance(test, ast.Name):
            return self._every_binding(test, scope, seen, self._tests_cuda)
        return False

    def _every_binding(self, name: ast.Name, scope: Scope, seen: dict, holds) -> bool:
        """Whether ``holds(value, scope, seen)`` of every binding that reaches the use ``name``
        (an assignment written there: not an import or an unpacking), worked out once per
        question in ``seen``; a binding that reads itself holds nothing while it is worked out."""
        key = (holds.__name__, id(name), id(scope))
        if key not in seen:
            seen[key] = False
            owner, bound = self.ix.bindings_of(name, scope)
            seen[key] = bool(bound) and all(
                a.value is not None and a.unpack_index is None and a.imported is None and holds(a.value, owner, seen)
                for a in bound
            )
        return seen[key]

    def _device_strings(self, expr: ast.expr, scope: Scope, seen: dict) -> bool:
        """Whether ``expr`` is a string naming a device other than a CUDA GPU, a
        ``torch.device(...)`` of one, or a tuple, list or set of only such, written there or
        bound to a variable (every reaching binding one)."""
        if isinstance(expr, ast.Constant):
            value = expr.value
            return isinstance(value, str) and bool(OTHER_DEVICE().fullmatch(value))
        if isinstance(expr, ast.Call) and self._qualname_of(expr, scope) == "torch.device":
            # `torch.device("cpu")`, `torch.device(type="xpu")`
            given = keyword(expr, "type")
            value = given.value if given is not None else next(iter(positional(expr)), None)
            return value is not None and self._device_strings(value, scope, seen)
        if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
            return bool(expr.elts) and all(
                not isinstance(e, ast.Starred) and self._device_strings(e, scope, seen) for e in expr.elts
            )
        if isinstance(expr, ast.Name):
            return self._every_binding(expr, scope, seen, self._device_strings)
        return False

    def _checks_device(self, call: ast.Call, scope: Scope, seen: dict) -> bool:
        """Whether a call is a backend's availability check, by its qualified name, or a local
        function whose every return is a device condition."""
        function = self.ix.local_function(call.func, scope)
        qual = self._qualname_of(call, scope)
        if function is None and qual:
            function = self.ix.functions.get(qual)
        if function is not None:
            key = ("device check", id(function))
            if key not in seen:
                seen[key] = False
                seen[key] = bool(function.returns) and all(
                    self.selects_other_device(value, function, seen) for value, _ in function.returns
                )
            return seen[key]
        if qual is None and isinstance(call.func, ast.Name) and scope.lookup_scope(call.func.id) is None:
            qual = call.func.id  # a check the module neither defines nor imports
        if not qual:
            return False
        last = qual.rsplit(".", 1)[-1]
        if last in DEVICE_AVAILABLE or TORCH_DEVICE_CHECK().fullmatch(qual):
            return True
        return last in BACKEND_CHECKS and any(qual.startswith(prefix + ".") for prefix in DEVICE_BACKENDS)

    def _made_by_training_arguments(self, expr: ast.expr, scope: Scope) -> bool:
        """Whether ``expr`` is a variable every reaching binding of which makes a
        TrainingArguments (or a config derived from it)."""
        if not isinstance(expr, ast.Name):
            return False
        owner, bound = self.ix.bindings_of(expr, scope)
        return bool(bound) and all(
            isinstance(a.value, ast.Call) and a.unpack_index is None
            and is_training_arguments(self._qualname_of(a.value, owner), self.ix)
            for a in bound
        )

    def _qualname_of(self, call: ast.Call, scope: Scope) -> Optional[str]:
        site = self.ix.call_of(call)
        return site.qualname if site is not None else self.ix.qualify(call.func, scope)

    def _follows_user_input(self, test: ast.expr, scope: Scope) -> bool:
        """Whether a condition is the user's own precision switch: it reads an input (an
        attribute or item of an arguments/config object, a parameter), names a precision
        (``bf16``, ``mixed_precision``, ``dtype``...), and nothing in it is on by default (a
        negation, or an argparse option whose ``default=`` may select it, makes it the
        default). Syntactic, through variables: cheap enough for every guard."""
        if tests_absence(test):
            return False  # `if precision is None: precision = "bf16-mixed"`: the code's default
        compared = compared_literals(test)
        follows = about_precision = False
        for node, here in self._reached(test, scope, set()):
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                return False  # `not args.no_bf16`: on unless the user opts out
            if isinstance(node, ast.Name):
                word = node.id
            elif _is_string(node):
                word = str(node.value)
            else:
                # an attribute's, a keyword's or a lambda parameter's name reads as a Name would
                # (`args.bf16` is about the precision; see _part_name)
                word = _part_name(node)
                if word is not None and _is_parameter_named(word, here):
                    follows = True
            if word is not None and PRECISION_WORD().search(word):
                about_precision = True
            head = node
            while isinstance(head, (ast.Attribute, ast.Subscript)):
                head = head.value
            if head is node or not isinstance(head, ast.Name):
                if isinstance(node, ast.Name) and _is_parameter(node, here):
                    follows = True
                    if _on_by_default(node.id, here, compared):
                        return False  # `def train(fp16: bool = True)`: on unless the user opts out
                continue
            owner = here.lookup_scope(head.id)
            if owner is not None and owner.is_import(head.id):
                continue  # a module's attribute (torch.cuda...), not an input
            follows = True
            # an option's default decides only for the precision switch itself (`--mixed_precision`
            # read through `accelerator.mixed_precision`), not for every option the walk passes
            # (`Accelerator(gradient_accumulation_steps=args.accum, ...)`)
            if isinstance(node, ast.Attribute) and PRECISION_WORD().search(node.attr):
                for option in self.ix.arg_options.get(node.attr, ())[:1]:  # the default is the first option's
                    default = keyword(option.call, "default")
                    action = keyword(option.call, "action")
                    if action is not None and string_value(action.value) == "store_false":
                        return False
                    if default is not None and not _falsy_literal(default.value) and not _other_than(default.value, compared):
                        return False
        # only the user's *precision* switch: bf16 under `if args.skip_batches:` is still hard-coded
        return follows and about_precision

    def reads_input(self, expr: ast.expr, scope: Scope, seen: Optional[set] = None) -> bool:
        """Whether ``expr`` is a switch the user sets: a parameter, an attribute or item of an
        arguments/config object (``args.amp``, ``cfg["fp16"]``, ``self.args.fp16``), or a
        variable every assignment of which is one (``use_amp = args.amp``), possibly negated.
        Not a module's attribute (``torch.cuda``...), a call or a literal. Where such a value
        is unknown statically, it is whatever the user passes: on when they turn it on."""
        seen = set() if seen is None else seen
        while isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            expr = expr.operand
        head = expr
        while isinstance(head, (ast.Attribute, ast.Subscript)):
            head = head.value
        if not isinstance(head, ast.Name):  # `True`, `None`: a Constant
            return False
        owner = scope.lookup_scope(head.id)
        if owner is None:
            return False
        if owner.is_import(head.id):
            return False  # `torch.cuda...`: a library's value, not an input
        if head is not expr or head.id in owner.params:
            return True
        key = (head.id, id(owner))
        if key in seen:
            return False
        seen.add(key)
        _, bound = self.ix.bindings_of(head, scope)
        return bool(bound) and all(
            a.value is not None and a.unpack_index is None and a.imported is None and self.reads_input(a.value, owner, seen)
            for a in bound
        )

    def _reached(self, expr: ast.AST, scope: Scope, seen: set, inputs: bool = False, known=None, start=None):
        """Every node whose value may flow into ``expr``, with the scope it belongs to.

        Walks the expression, the assignments of the variables it names and the returns of
        the local functions it calls; with ``inputs``, also parameter defaults and the
        argparse options read as ``args.<dest>``. A taint walk rather than an evaluation,
        so it terminates on self-referencing code (`if use_bf16 and major < 8: use_bf16 = False`).

        A variable read goes on to the bindings that reach that read (reaching definitions with
        their guards, :meth:`ModuleIndex.bindings_at`, the one policy for what a use sees): a
        walk answers for the place it starts from, never for a binding made after it or hidden
        by a later one. Each binding is walked once (``seen``).

        ``known(name, owner, bindings)``: what the walk of those reaching bindings found, where
        it is known already; they are then not walked again, and ``(_KNOWN, answer)`` is
        yielded in their place. ``start``: the walk's first nodes, (node, scope) pairs, instead
        of ``expr``.

        An attribute's, a keyword's or a lambda parameter's name is followed as a variable of
        that name read at that place would be (see :func:`_part_name`).
        """
        stack = [(expr, scope)] if start is None else list(start)
        while stack:
            node, here = stack.pop()
            yield node, here
            if isinstance(node, ast.Name):
                name = node.id
            else:
                if isinstance(node, ast.Call):
                    function = self.ix.local_function(node.func, here)
                    if function is not None and id(function) not in seen:
                        seen.add(id(function))
                        stack.extend((value, function) for value, _ in function.returns)
                elif inputs and isinstance(node, ast.Attribute):
                    for option in self.ix.arg_options.get(node.attr, ()):
                        if id(option.call) not in seen:
                            seen.add(id(option.call))
                            stack.append((option.call, here))
                    for assignment, where in self._self_assignments(node, here) or ():
                        # `self.dtype`: what the class's methods assign to it, as the evaluator reads it
                        if assignment.value is not None and ("binding", id(assignment)) not in seen:
                            seen.add(("binding", id(assignment)))
                            stack.append((assignment.value, where))
                stack.extend((child, here) for child in _walked(node))
                name = _part_name(node)
                if name is None:
                    continue
            owner, bound = self.ix.bindings_at(name, here, self.ix.order_of.get(id(node), (None,))[0])
            if owner is None:
                continue
            fresh, default = _unseen(name, owner, bound, seen)
            if not fresh and not (default and inputs and name in owner.params):
                continue
            answer = known(name, owner, bound) if known is not None else None
            if answer is not None:
                yield _KNOWN, answer
                continue
            stack.extend(self._bound_values(name, owner, fresh, inputs and default))

    @staticmethod
    def _bound_values(name: str, owner: Scope, bound, inputs: bool) -> List[Tuple[ast.AST, Scope]]:
        """What the walk of :meth:`_reached` goes on to from a variable: the values of the
        bindings that reach the read and, with ``inputs``, its parameter default (the value
        when no caller passes one: reaching wherever a parameter's reassignment may not run;
        kept as a possible value everywhere)."""
        out = [(a.value, owner) for a in bound if a.value is not None]
        default = owner.params.get(name) if inputs else None
        if default is not None:
            out.append((default, owner))
        return out

    def mentions_dtype(self, expr: ast.AST, scope: Scope, seen: Optional[set] = None) -> bool:
        """Whether a torch dtype (or a dtype string such as ``"fp16"``) may reach ``expr``.

        Cheap and syntactic: hot paths (every ``x.to(device)`` of a module) ask this before
        evaluating values, which needs source positions.
        """
        if seen is not None:
            return self._walk_flows(expr, scope, seen, dtype_only=True)[0]
        return self._flows(expr, scope)[0]

    def may_carry(self, expr: ast.AST, scope: Scope) -> bool:
        """Whether a value worth following to the join may reach ``expr``: a dtype, a config
        file's value, or what a function of another module returns. Syntactic, like
        :meth:`mentions_dtype`, so that summaries and call records of code that carries no
        precision never pay for source positions."""
        return self._flows(expr, scope)[1]

    def _flows(self, expr: ast.AST, scope: Scope) -> Tuple[bool, bool]:
        """(a dtype may reach ``expr``, something worth following may), worked out once per
        expression (and once per set of bindings reaching a variable, :meth:`_variable_flows`)."""
        key = ("node", id(expr), id(scope))
        found = self._flow_memo.get(key)
        if found is None:
            found = self._flow_memo[key] = self._walk_flows(expr, scope, set(), dtype_only=False, shared=True)
        return found

    def _variable_flows(self, name: str, owner: Scope, bound) -> Optional[Tuple[bool, bool]]:
        """:meth:`_walk_flows` of everything the bindings ``bound`` of a variable (those that
        reach one read of it) and its parameter default may carry, worked out once per such set,
        where each expression's walk would otherwise go through the same variables again (a
        pipeline's `latents` reached from every call that reads it). The walk is a closure and
        every read in it is at a fixed place, so the answer depends only on the bindings it
        starts from, whichever walk reaches them. None while that walk is under way (an
        assignment cycle: the walk that meets it goes through the bindings itself), or past a
        depth of variables."""
        key = ("bound", name, id(owner), tuple(map(id, bound)))
        found = self._flow_memo.get(key)
        if found is not None:
            return found
        if key in self._flow_busy or len(self._flow_busy) >= _MAX_FLOW_NESTING:
            return None
        self._flow_busy.add(key)
        self.flow_walks += 1
        try:
            start = self._bound_values(name, owner, bound, True)
            seen: set = set()
            _unseen(name, owner, bound, seen)
            found = self._walk_flows(None, owner, seen, dtype_only=False, shared=True, start=start)
        finally:
            self._flow_busy.discard(key)
        self._flow_memo[key] = found
        return found

    def _walk_flows(self, expr, scope: Scope, seen: set, dtype_only: bool, shared: bool = False, start=None) -> Tuple[bool, bool]:
        """``shared``: the walk may take a variable's answer from :meth:`_variable_flows`
        (only for a walk of its own ``seen``: a caller's ``seen`` must see every variable)."""
        carry = False
        known = self._variable_flows if shared else None
        for node, here in self._reached(expr, scope, seen, inputs=True, known=known, start=start):
            if node is _KNOWN:
                if here[0]:
                    return True, True
                carry = carry or here[1]
                continue
            # (an attribute whose own name is no dtype's never qualifies to one: not qualified)
            if (isinstance(node, ast.Name) or (isinstance(node, ast.Attribute) and may_name_dtype(node.attr))) and dtype_of_qualname(
                self.ix.qualify(node, here)
            ):
                return True, True
            part = _part_name(node)
            if part is not None and dtype_of_qualname(self._qualify_part(node, part, here)):
                return True, True  # `x.half` where `from torch import float16 as half` (see _part_name)
            if _is_string(node) and dtype_of_string(node.value):
                return True, True
            if not carry and not dtype_only and isinstance(node, ast.Call):
                site = self.ix.call_of(node)
                qual = site.qualname if site else None
                if qual in CONFIG_LOADERS or (qual and project_callee(self.ix, site) and qual not in self.ix.functions):
                    carry = True
                elif isinstance(node.func, ast.Attribute) and node.func.attr in ("parse_json_file", "parse_yaml_file"):
                    carry = True  # an instance `HfArgumentParser` fills from a configuration file
        return False, carry

    def _qualify_part(self, node: ast.AST, name: str, scope: Scope) -> Optional[str]:
        """What ``name``, an attribute's, keyword's or parameter's name in ``node``, would
        qualify to as a variable read there (``ModuleIndex.qualify`` of a ``Name``)."""
        return self.ix.resolve_name(name, scope, self.ix.order_of.get(id(node), (None,))[0], 0)

    def consults(self, expr: ast.AST, scope: Scope, seen: set) -> Tuple[bool, bool, bool]:
        """What an expression consults, through variables and local functions:
        (a capability probe, ``torch.cuda.is_available()``, a parameter-dtype check
        such as ``any(p.dtype == torch.float16 for p in model.parameters())``).
        """
        if not seen:  # a walk of its own: the answer depends on the expression and scope alone
            key = (id(expr), id(scope))
            found = self._consulted.get(key)
            if found is None or found[0] is not expr:
                found = self._consulted[key] = (expr, self._consults(expr, scope, seen))
            return found[1]
        return self._consults(expr, scope, seen)

    def _consults(self, expr: ast.AST, scope: Scope, seen: set) -> Tuple[bool, bool, bool]:
        capability = cuda = param_dtype = False
        for node, here in self._reached(expr, scope, seen):
            if isinstance(node, ast.Compare) and _is_param_dtype_check(node, self.ix, here):
                param_dtype = True
            elif isinstance(node, ast.Call):
                site = self.ix.call_of(node)
                qual = site.qualname if site else self.ix.qualify(node.func, here)
                if qual == CUDA_AVAILABLE:
                    cuda = True
                elif is_capability_callee(qual, node.func):
                    capability = True
        return capability, cuda, param_dtype

    def guards_of(self, guards, scope: Scope) -> Tuple[Guard, ...]:
        return tuple(self.guard(test, pos, scope) for test, pos in guards)

    def kwarg_sources(self, call: ast.Call, scope: Scope) -> List[KwargSource]:
        """Every keyword a call receives: direct ones and those of ``**dict`` splats."""
        out: List[KwargSource] = []
        for kw in call.keywords:  # `name=value` and `**value`, in source order
            if kw.arg is not None:
                out.append(KwargSource(kw.arg, kw, kw.value, "keyword", kw))
            else:
                entries = self._dict_entries(kw.value, scope, set())
                if not entries and any(v.kind == CONFIG for v in self.values(kw.value, scope)):
                    # `**cfg["training"]`: which keys it holds is known when the file is read
                    entries = [KwargSource(SPLAT, kw, kw.value, "config-splat", kw)]
                out.extend(entries)
        return out

    def splat_values(self, source: KwargSource, name: str, scope: Scope) -> Values:
        """The value keyword ``name`` gets from a config table spread with ``**``: the
        file's value, or None (the callee's default) when the table has no such key."""
        return tuple(
            Possible(CONFIG, v.value.child(name, (None,)), v.guards, origin=v.origin)
            for v in self.values(source.value, scope)
            if v.kind == CONFIG
        )

    def kwarg(self, call: ast.Call, scope: Scope, name: str) -> List[KwargSource]:
        return [s for s in self.kwarg_sources(call, scope) if s.name == name]

    def forwarded(self, call: ast.Call, scope: Scope, name: str) -> List[KwargSource]:
        """Where a call spreads the enclosing function's own ``**kwargs``
        (``from_pretrained(path, **kwargs)`` in ``def build(path, **kwargs)``), that dict's
        entry ``name`` (``via`` "forwarded"): what callers pass by that keyword, substituted at
        the join (recall 26c: tevatron's ``torch_dtype`` through ``DenseModel.build(...,
        **hf_kwargs)``). A rule that also judges the callers' keyword itself asks
        :meth:`kwarg` only (MP202 and the migrations report it where it is written)."""
        for kw in call.keywords:
            if kw.arg is None and isinstance(kw.value, ast.Name):
                owner, bound = self.ix.bindings_of(kw.value, scope)
                if owner is not None and owner.var_keyword == kw.value.id and not bound and owner.kind == "function":
                    entry = ast.copy_location(ast.Subscript(kw.value, ast.copy_location(ast.Constant(name), kw.value), ast.Load()), kw.value)
                    ast.fix_missing_locations(entry)
                    return [KwargSource(name, kw, entry, "forwarded", kw)]
        return []

    def source_values(self, source: "KwargSource", scope: Scope) -> Values:
        """The values of a keyword's source, with the conditions a ``d["k"] = v`` is set under."""
        values = self.values(source.value, scope)
        if not source.guards:
            return values
        guards = self.guards_of(source.guards, scope)
        return tuple(_with_guards(v, guards) for v in values)

    def kwarg_values(self, call: ast.Call, scope: Scope, name: str) -> Optional[Values]:
        """The union of the values of keyword ``name``; None when it is not passed."""
        sources = self.kwarg(call, scope, name)
        if not sources:
            return None
        return _dedupe(v for s in sources for v in self.source_values(s, scope))

    # --- dict splats --------------------------------------------------------------
    def model_init_entries(self, site: CallSite) -> List[KwargSource]:
        """The entries of the dict a training config hands to ``from_pretrained`` when its
        trainer loads the model itself (``SFTConfig(model_init_kwargs={"dtype": ...})``);
        [] for any other call."""
        name = model_init_keyword(site.qualname) if site.qualname else None
        passed = keyword(site.node, name) if name else None
        return self._dict_entries(passed.value, site.scope, set()) if passed is not None else []

    def dict_entries(self, expr: ast.expr, scope: Scope) -> List[KwargSource]:
        """The entries of the dict ``expr`` builds (a literal, ``dict(...)``, a name bound to
        one), as keywords a call would receive from ``**expr``."""
        return self._dict_entries(expr, scope, set())

    def builds_mapping(self, expr: ast.expr, scope: Scope) -> bool:
        """Whether ``expr`` is a dict with entries (``{"zero_optimization": {...}}``,
        ``dict(stage=2)``, a name bound to one): a value that is set, whatever its keys say."""
        return bool(self._dict_entries(expr, scope, set()))

    def _dict_entries(self, expr, scope: Scope, seen: set) -> List[KwargSource]:
        """The entries of a dict, in order, a later unconditional entry of a key overriding
        the earlier ones (``{**base, "fp16": False}``, ``dict(base, fp16=False)``,
        ``base | {"fp16": False}``, ``d["fp16"] = False`` and ``d.update(fp16=False)`` after
        ``d = {...}``); an entry set under a condition joins the earlier ones instead."""
        return _override(self._entries(expr, scope, seen))

    def _entries(self, expr, scope: Scope, seen: set) -> List[KwargSource]:
        if isinstance(expr, ast.Dict):
            out = []
            for key_node, value in zip(expr.keys, expr.values):
                if key_node is None:  # `**base`
                    out.extend(self._entries(value, scope, seen))
                else:
                    key = string_value(key_node)
                    if key is not None:
                        out.append(KwargSource(key, key_node, value, "dict-literal", None))
            return out
        if isinstance(expr, ast.Call) and dotted(expr.func) == "dict":
            out = []
            for arg in arguments(expr):
                if arg.keyword is not None:
                    out.append(KwargSource(arg.keyword, arg.node, arg.value, "dict-call", arg.node))
                else:  # `dict(base, ...)` and `dict(**base)`
                    out.extend(self._entries(arg.value, scope, seen))
            return out
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
            return self._entries(expr.left, scope, seen) + self._entries(expr.right, scope, seen)
        if isinstance(expr, ast.Subscript):  # `cfg["train"]` of `cfg = {"train": {...}}`: the inner dict's
            key = literal_key(expr)
            if key is None:
                return []
            out = [e for entry in self._dict_entries(expr.value, scope, seen) if entry.name == key for e in self._entries(entry.value, scope, seen)]
            owner_name = item_owner(expr)  # and what `cfg["train"]["fp16"] = v` sets in it before the use
            root = expr.value
            while type(root) is ast.Subscript:
                root = root.value
            if owner_name and isinstance(root, ast.Name):
                owner, bound = self.ix.bindings_of(root, scope)  # the `cfg` bindings that reach the use
                if owner is not None and bound:
                    out.extend(self._mutations(owner_name, owner, min(len(a.guards) for a in bound), seen, self._reach_window(root, scope, owner, bound)))
            return out
        if isinstance(expr, ast.Call):
            # `**load_kwargs("bf16")`: what a function of this module returns (held-out 31u: a
            # helper that builds the kwargs dict of `from_pretrained` and returns it)
            followed = self._returning_function(expr, scope, seen)
            if followed is None:
                return []
            function, inner = followed
            return [e for returned, _ in function.returns for e in self._entries(returned, function, inner)]
        if isinstance(expr, ast.Name) and expr.id not in seen:
            seen.add(expr.id)
            owner, bound = self.ix.bindings_of(expr, scope)
            if owner is None:
                return []
            out = []
            for assignment in bound:
                if assignment.value is not None:
                    if assignment.unpack_index is None:
                        entries = self._entries(assignment.value, owner, seen)
                    else:
                        entries = self._unpacked_entries(assignment.value, assignment.unpack_index, owner, seen)
                    if assignment.guards:
                        entries = [replace_fields(e, bound_under=tuple(assignment.guards) + e.bound_under) for e in entries]
                    out.extend(entries)
            # a dict known to start empty (`extra = {}`, `dict()`) holds what is put in it after
            if out or (bound and all(_empty_dict(a.value) for a in bound)):
                out.extend(self._mutations(expr.id, owner, min(len(a.guards) for a in bound), seen, self._reach_window(expr, scope, owner, bound)))
            return out
        return []

    def _unpacked_entries(self, value: ast.expr, index: int, owner: Scope, seen: set) -> List[KwargSource]:
        """The entries of the dict an unpacking target takes: the element at its position of a
        literal tuple (``kwargs, n = {...}, 2``), or of each tuple a function of this module
        returns (``model_kwargs, processor_kwargs = build_kwargs(cfg)``, held-out 31u)."""
        item = element(value, index)
        if item is not None:
            return self._entries(item, owner, seen)
        followed = self._returning_function(value, owner, seen) if isinstance(value, ast.Call) else None
        if followed is None:
            return []
        function, inner = followed
        return [
            e for returned, _ in function.returns for item in (element(returned, index),) if item is not None
            for e in self._entries(item, function, inner)
        ]

    def _returning_function(self, call: ast.Call, scope: Scope, seen: set) -> Optional[Tuple[Scope, set]]:
        """The function of this module ``call`` runs, with what :meth:`_entries` carries into its
        returns: its names are its own scope's (a ``kwargs`` there is not the caller's), so only
        the functions being followed (``"<qualname>()"``) go with it, against a recursion. None
        for another call, or a function already being followed."""
        function = self.ix.local_function(call.func, scope)
        key = f"{function.qualname}()" if function is not None else ""
        if function is None or key in seen:
            return None
        return function, {k for k in seen if k.endswith("()")} | {key}

    def _reach_window(self, use: ast.Name, scope: Scope, owner: Scope, bound) -> Callable[[ast.AST], bool]:
        """Whether a change made in place at a node (``d["k"] = v``, ``d.update(...)``) reaches
        the value ``use`` reads, where ``bound`` are the bindings of its variable that reach the
        use: made after the earliest of them (what came before changed an older object) and,
        for a use in the binding scope's own code, before the use or later in a loop that also
        holds the use (the next iteration sees it), unless that loop binds the variable anew
        before the use each time round (every binding reaching from before the use is in it).
        A use in a nested function sees every change after the binding (it runs once the
        scope has)."""
        order = self.ix.order_of
        starts = [order[id(b.statement)][0] for b in bound if id(b.statement) in order]
        first = min(starts) if starts else None
        at = order.get(id(use), (None,))[0] if owner is scope else None
        loops = _loops(self.ix.flow_at(at)) if at is not None else frozenset()
        preceding = [_loops(self.ix.flow_at(start)) for start in starts if at is not None and start < at]
        if loops and preceding:
            loops -= frozenset.intersection(*preceding)  # rebound there before each use

        def reaches(node: ast.AST) -> bool:
            when = order.get(id(node), (None,))[0]
            if when is None:
                return True
            if first is not None and when < first:
                return False
            if at is None or when < at:
                return True
            return bool(loops & _loops(self.ix.flow_at(when)))

        return reaches

    def _mutations(self, name: str, owner: Scope, depth: int, seen: set, reaches: Callable[[ast.AST], bool]) -> List[KwargSource]:
        """``d["k"] = v`` and ``d.update(...)`` on the dict ``name`` of scope ``owner`` that
        reach the use (``reaches``, see :meth:`_reach_window`), in source order; ``conditional``
        when under an ``if`` of their own (more conditions than the dict's assignment, ``depth``)."""
        found = []
        for item in self.ix.item_assigns.get(name, ()):
            if item.scope is owner and string_value(item.key) is not None and reaches(item.statement):
                source = KwargSource(string_value(item.key), item.key, item.value, "item-assign", item.statement, len(item.guards) > depth, item.guards)
                found.append((self.ix.order(item.statement)[0], [source]))
        if self._updates is None:
            self._updates = {}
            for site in self.ix.calls:
                if site.method == "update" and isinstance(site.receiver, ast.Name):
                    self._updates.setdefault(site.receiver.id, []).append(site)
        for key, node, guards in self._removals(name):
            if reaches(node) and self.ix.scope_of(node) is owner:
                own = tuple(guards[depth:])
                removal = KwargSource(key, node, node, REMOVED, node, bool(own), own)
                found.append((self.ix.order(node)[0], [removal]))
        for site in self._updates.get(name, ()):
            if site.scope is owner and reaches(site.node):
                entries = []
                for arg in arguments(site.node):
                    if arg.keyword is not None:
                        entries.append(KwargSource(arg.keyword, arg.node, arg.value, "dict-update", arg.node, len(site.guards) > depth, site.guards))
                    elif not arg.star or arg.star == "**":
                        entries.extend(replace_fields(e, conditional=len(site.guards) > depth, guards=site.guards) for e in self._entries(arg.value, owner, seen))
                found.append((self.ix.order(site.node)[0], entries))
        return [e for _, entries in sorted(found, key=lambda f: f[0]) for e in entries]

    def _removals(self, name: str) -> List[Tuple[str, ast.AST, tuple]]:
        """``(key, node, guards)`` of each ``name.pop("k")`` / ``name.pop("k", default)`` call
        and ``del name["k"]`` statement of the module (any scope: the caller keeps its own)."""
        if self._removed is None:
            self._removed = {}
            for site in self.ix.calls:
                args = site.node.args
                if site.method == "pop" and isinstance(site.receiver, ast.Name) and args and not site.node.keywords:
                    key = string_value(args[0])
                    if key is not None:
                        self._removed.setdefault(site.receiver.id, []).append((key, site.node, tuple(site.guards)))
            for owner, deletes in self.ix.item_deletes.items():
                for d in deletes:
                    key = string_value(d.key)
                    if key is not None:
                        self._removed.setdefault(owner, []).append((key, d.statement, tuple(d.guards)))
        return self._removed.get(name, ())

    # --- list contents ---------------------------------------------------------------
    def list_elements(self, expr: ast.expr, scope: Scope) -> List[Tuple[ast.expr, tuple]]:
        """The elements a list may hold where ``expr`` is read, each with the tests it was put in
        under: a list or tuple literal's (``*rest`` spread), both sides of ``a + b``, and for a
        name the elements of what the bindings reaching the use hold (``models = [unet]``,
        ``models += [te]``, ``models = models + [te]``) plus what ``models.append(te)``,
        ``models.extend([te_1, te_2])`` and ``models.insert(0, te)`` add to that list in the
        binding's own scope, after the binding and before the use. [] where nothing is known (a
        parameter, a call's result)."""
        return self._elements(expr, scope, (), set())

    def _elements(self, expr, scope: Scope, guards: tuple, seen: set) -> List[Tuple[ast.expr, tuple]]:
        if isinstance(expr, (ast.List, ast.Tuple)):
            out = []
            for el in expr.elts:
                if isinstance(el, ast.Starred):
                    out.extend(self._elements(el.value, scope, guards, seen))
                else:
                    out.append((el, guards))
            return out
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            return self._elements(expr.left, scope, guards, seen) + self._elements(expr.right, scope, guards, seen)
        if isinstance(expr, ast.Name):
            return self._name_elements(expr.id, scope, self.ix.order_of.get(id(expr), (None,))[0], seen)
        return []

    def _name_elements(self, name: str, scope: Scope, at: Optional[int], seen: set) -> List[Tuple[ast.expr, tuple]]:
        if (name, id(scope), at) in seen:
            return []
        seen.add((name, id(scope), at))
        owner, bound = self.ix.bindings_at(name, scope, at)
        if owner is None:
            return []
        end = at if owner is scope else None  # a use in a nested function sees the list as built
        out: List[Tuple[ast.expr, tuple]] = []
        starts = []
        for b in bound:
            start = self.ix.order_of.get(id(b.statement), (None,))[0]
            if start is None:
                continue
            if b.value is not None and b.unpack_index is None:
                held = self._elements(b.value, owner, b.guards, seen)
            elif isinstance(b.statement, ast.AugAssign) and isinstance(b.statement.op, ast.Add):
                held = self._elements(b.statement.value, owner, b.guards, seen) + self._name_elements(name, owner, start, seen)
            else:
                continue
            if held or isinstance(b.value, (ast.List, ast.Tuple)):  # `models = []` too
                out.extend(held)
                starts.append(start)
        if not starts:
            return out
        first = min(starts)
        for site in self.ix.calls:
            if site.method not in ("append", "extend", "insert") or site.scope is not owner:
                continue
            if not isinstance(site.receiver, ast.Name) or site.receiver.id != name:
                continue
            when = self.ix.order_of.get(id(site.node), (None,))[0]
            if when is None or when < first or (end is not None and when >= end):
                continue
            args = positional(site.node)
            if site.method == "append" and len(args) == 1:
                out.append((args[0], site.guards))
            elif site.method == "insert" and len(args) == 2:
                out.append((args[1], site.guards))
            elif site.method == "extend" and len(args) == 1:
                out.extend(self._elements(args[0], owner, site.guards, seen))
        return out

    # --- the evaluator proper ------------------------------------------------------
    def _eval(self, expr: ast.expr, scope: Scope) -> List[Possible]:
        origin = self.ix.span(expr)
        if isinstance(expr, ast.Constant):
            # strings, bytes, numbers, True/False/None; not `...` or an imaginary number (an
            # f-string is a JoinedStr: unknown)
            if expr.value is None or _is_literal(expr):
                return [_const(expr.value, origin=origin)]
            return list(UNKNOWN_VALUE)
        if isinstance(expr, ast.Name):
            return self._name(expr, scope, origin)
        if isinstance(expr, ast.Attribute):
            return self._attribute(expr, scope, origin)
        if isinstance(expr, ast.IfExp):
            yes = self.guard(expr.test, True, scope)
            no = self.guard(expr.test, False, scope)
            orelse = self.ix.text(expr.orelse)
            excluded = self.excluded_dtypes(expr.test, orelse, scope)
            out = [_with_guard(v, yes) for v in self.values(expr.body, scope)]
            switch, narrowing = self._switch_and_test(expr.test, orelse, scope)
            for v in self.values(expr.orelse, scope):
                if narrowing and (v.kind in SYMBOLIC or (v.kind in (DTYPE, CONST) and _dtype_name(v) in narrowing)):
                    # `X if S and E == float16 else E`: E is float16 here only where S is false
                    out.append(_with_guard(v, self.guard(switch, False, scope)))
                    if v.kind in SYMBOLIC:  # ... and any other value where the test failed
                        out.append(_with_guard(_narrowed(v, narrowing), no))
                elif not (excluded and v.kind in (DTYPE, CONST) and _dtype_name(v) in excluded):
                    out.append(_with_guard(_narrowed(v, excluded), no))
            return out
        if isinstance(expr, ast.Call):
            return self._call(expr, scope)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            return [_negate(v, self.ix.text(expr)) for v in _opaque(self.values(expr.operand, scope))]
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)) and _is_number(expr.operand):
            # `-100`: a number written with its sign (ast keeps the sign apart from the literal)
            number = expr.operand.value
            return [_const(-number if isinstance(expr.op, ast.USub) else number, origin=origin)]
        if isinstance(expr, ast.BoolOp):
            return self._boolean(expr, scope)
        if isinstance(expr, ast.Compare):
            return self._comparison(expr, scope)
        if isinstance(expr, ast.Subscript):
            return self._subscript(expr, scope)
        return list(UNKNOWN_VALUE)

    def _operands(self, expr: ast.BoolOp) -> Tuple[ast.expr, ast.expr]:
        """``(left, right)`` of a ``BoolOp`` folded from the left: ``a and b and c``, which
        ``ast`` keeps flat (``BoolOp(And, [a, b, c])``), is read as ``(a and b) and c``. The
        left of three or more operands is a ``BoolOp`` of all but the last, made once (the same
        node each time: guards, memos and walks key on it), spanning from the operation's start
        to the end of its last operand (with that operand's closing parentheses).

        Why binary: the evaluator was written for LibCST's tree, which nests the operation
        this way, and its answers depend on it: each step spends the one recursion budget
        (``_MAX_DEPTH``) and a guard's text is the nested operation's."""
        values = expr.values
        if len(values) == 2:
            return values[0], values[1]
        n = len(values) - 1
        key = (id(expr), n)
        left = self._prefixes.get(key)
        if left is None:
            last = values[n - 1]
            # `(b)` of `a and (b) and c`: its parentheses (on its last line) belong to the left
            # operation; each is one byte, so the column (UTF-8 bytes) moves as the offset does
            source, at = self.ix.source, self.ix.span(last).end
            end_col = last.end_col_offset
            i = at
            while i < len(source) and source[i] in " \t)":
                i += 1
                if source[i - 1] == ")":
                    end_col = last.end_col_offset + (i - at)
            left = ast.BoolOp(
                op=expr.op,
                values=values[:n],
                lineno=expr.lineno,
                col_offset=expr.col_offset,
                end_lineno=last.end_lineno,
                end_col_offset=end_col,
            )
            self._prefixes[key] = left
        return left, values[n]

    def _switch_and_test(self, test, orelse_text: str, scope: Scope):
        """(S, dtypes) for a test ``S and <E == torch.float16>`` of ``... else E``: the else
        branch is E's dtype only where the switch S is off. (None, empty) for other tests."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            left, right = self._operands(test)
            narrowing = self.excluded_dtypes(right, orelse_text, scope)
            if narrowing:
                return left, narrowing
        return None, set()

    def excluded_dtypes(self, test, orelse_text: str, scope: Scope) -> set:
        """Dtypes the else-branch cannot be: ``X if E == torch.float16 else E`` narrows E (and
        so does any failed test ``E == torch.float16``, ``or``-ed or ``in (...)``, of ``E``
        written ``orelse_text``); empty for other tests."""
        tests = [test]
        while tests and isinstance(tests[0], ast.BoolOp) and isinstance(tests[0].op, ast.Or):
            t = tests.pop(0)
            tests[:0] = t.values
        out = set()
        for t in tests:
            if not (isinstance(t, ast.Compare) and len(t.ops) == 1):
                return set()
            op = t.ops[0]
            if not isinstance(op, (ast.Eq, ast.Is, ast.In)) or self.ix.text(t.left) != orelse_text:
                return set()
            comparator = t.comparators[0]
            items = _element_values(comparator) if isinstance(op, ast.In) and isinstance(comparator, (ast.Tuple, ast.List, ast.Set)) else [comparator]
            for item in items:
                for v in self.values(item, scope):
                    name = _dtype_name(v)
                    if name:
                        out.add(name)
        return out

    def _name(self, expr: ast.Name, scope: Scope, origin) -> List[Possible]:
        # (True, False and None are Constants: see _eval)
        owner, assignments = self.ix.bindings_of(expr, scope)
        if owner is None:
            return list(UNKNOWN_VALUE)
        out: List[Possible] = []
        if expr.id in owner.params:
            default = owner.params[expr.id]
            # what the callers pass: known at the join, where calls across files are seen
            out.append(Possible(PARAM, param_ref(owner, expr.id), origin=origin))
            if default is not None:
                out.extend(self.parameter_default(owner, expr.id, default))
        # A variable reassigned under a capability test (`if major < 8: use_bf16 = False`),
        # or under a parameter-dtype check (`if has_fp16_params: use_scaler = False`),
        # is guarded as a whole.
        guard_all = self._capability_guarded(assignments, owner)
        for assignment in assignments:
            if any(self.never_holds(test, positive, owner) for test, positive in assignment.guards):
                continue  # `if accelerator.mixed_precision == "fp16":` of an `Accelerator(mixed_precision="no")`
            guards = self.guards_of(assignment.guards, owner)
            if assignment.imported is not None:  # `from torch import float16 as half`
                dtype = dtype_of_qualname(assignment.imported)
                if dtype:
                    out.append(_with_guards(Possible(DTYPE, dtype, origin=origin), guards))
                elif self._symbols:  # `from transformers import AutoModelForCausalLM`
                    out.append(_with_guards(Possible(SYMBOL, assignment.imported, origin=origin), guards))
                elif assignment.imported.partition(".")[0] not in LIBRARIES:
                    # `from configs import MODEL_DTYPE`: what that module's name holds, at the join
                    # (a module, `train_config.MODEL_DTYPE`: its name as the first key)
                    out.append(_with_guards(Possible(RETURN, ReturnRef(assignment.imported, bound=True), origin=origin), guards))
                else:
                    out.append(_with_guards(Possible(UNKNOWN), guards))
                continue
            if self._symbols and isinstance(assignment.statement, (ast.ClassDef, *FUNCTION_DEFS)) and assignment.statement.name == expr.id:
                out.append(_with_guards(Possible(SYMBOL, f"{owner.qualname}.{expr.id}" if owner.qualname else expr.id, origin=origin), guards))
                continue
            for v in self._assigned(assignment, owner):
                v = _with_guards(v, guards)
                if guard_all:
                    v = _with_guard(v, guard_all)
                out.append(v)
        if len(out) > 1 and any(_dtype_name(v) for v in out):
            out = self._narrowed_by_tests(expr, owner, assignments, out)
        return out or list(UNKNOWN_VALUE)

    def _narrowed_by_tests(self, expr: ast.Name, owner: Scope, assignments, values: List[Possible]) -> List[Possible]:
        """``values`` of a variable read where an ``if`` around it (or an early exit before it)
        compares that variable with a dtype: ``if dtype == torch.bfloat16: model.to(dtype=dtype)``
        reads only bf16 (or what is not known) there, and its ``else`` anything but bf16; ``in``
        a tuple, ``!=``, ``is`` and ``is not`` alike. Only a test that sees the same assignments
        as the read (nothing rebinds the variable in between)."""
        at = self.ix.order_of.get(id(expr), (None,))[0]
        if at is None:
            return values
        for key in self.ix.flow_at(at):
            test = self.ix.flow_tests.get(key[0]) if type(key[0]) is int else None
            if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name) and test.left.id == expr.id):
                continue
            before = self.ix.order_of.get(id(test), (None,))[0]
            if before is None or [id(a) for a in self.ix.bindings_at(expr.id, owner, before)[1]] != [id(a) for a in assignments]:
                continue
            op, comparator = test.ops[0], test.comparators[0]
            if isinstance(op, (ast.In, ast.NotIn)):
                if not isinstance(comparator, (ast.Tuple, ast.List, ast.Set)):
                    continue
                items = _element_values(comparator)
            elif isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
                items = [comparator]
            else:
                continue
            named = [_dtype_name(v) for item in items for v in self.values(item, owner)]
            if not named or None in named:
                continue  # a comparison with what is not a known dtype narrows nothing
            same = key[1] == isinstance(op, (ast.Eq, ast.Is, ast.In))  # the branch where it is one of them
            dtypes = set(named)
            if same:
                values = [v for v in values if _dtype_name(v) is None or _dtype_name(v) in dtypes]
            else:
                values = [_narrowed(v, dtypes) for v in values if _dtype_name(v) not in dtypes]
        return values

    def never_holds(self, test: ast.expr, positive: bool, scope: Scope) -> bool:
        """Whether a branch under ``test`` (its else branch where not ``positive``) runs in no
        run: the test compares one value with literals (``x == "fp16"``, ``x != "no"``, ``x in
        ("fp16", "bf16")``, ``x is None``, also under ``not``), every value ``x`` may take is a
        known constant (the defaults, the choices a user may pass, each configuration's), and
        each of them decides the test against the branch. Any other test, or a value not known,
        may hold."""
        key = (id(test), id(scope), positive)
        found = self._never.get(key)
        if found is None:
            self._never[key] = False  # a test that reads the name it guards: not known
            found = self._never[key] = self._never_holds(test, positive, scope)
        return found

    def _never_holds(self, test: ast.expr, positive: bool, scope: Scope) -> bool:
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, positive = test.operand, not positive
        if isinstance(test, ast.Constant):  # `if False:`, `if 0:`: code kept out of every run
            return bool(test.value) != positive
        if isinstance(test, ast.BoolOp):
            # `a and b` holds in no run where one of them never does; its else branch (one of
            # them false) runs in none where neither is ever false. `or` the other way round
            holds_where_all = isinstance(test.op, ast.And) == positive
            found = (self.never_holds(v, positive, scope) for v in test.values)
            return all(found) if not holds_where_all else any(found)
        if isinstance(test, ast.Name):  # `if use_fp16:` of `use_fp16 = False` (and nothing else)
            values = self.values(test, scope)
            return bool(values) and all(
                v.kind == CONST and isinstance(v.value, (bool, int, float, str, type(None))) and bool(v.value) != positive
                for v in values
            )
        literals = compared_literals(test)
        if literals is None or len(test.ops) != 1:
            return False
        op = test.ops[0]
        wanted = positive if isinstance(op, (ast.In, ast.Eq, ast.Is)) else not positive
        values = self.values(test.left, scope)
        if not values or any(v.kind != CONST for v in values):
            return False
        return all((v.value in literals) != wanted for v in values)

    def dead(self, guards, scope: Scope) -> bool:
        """Whether code under ``guards`` (``(test, positive)`` pairs, outermost first) runs in no
        run: one of them never holds (:meth:`never_holds`), or is certainly the other way
        (:meth:`certainly`: the fallback of ``args.max_length if args.max_length is not None else
        ...`` for an ``int`` option that defaults to 128). What is made there is made nowhere: a
        ``model.half()`` under ``if False:`` or under ``if accelerator.mixed_precision ==
        "fp16":`` of an ``Accelerator(mixed_precision="no")`` casts nothing."""
        return any(
            self.never_holds(test, positive, scope) or self.certainly(test, scope) is (not positive)
            for test, positive in guards
        )

    # --- tests whose outcome the values reaching them decide ------------------------------
    def certainly(self, test: ast.expr, scope: Scope) -> Optional[bool]:
        """True where ``test`` holds in every run, False where it holds in none, given the
        values that reach it; None where either may happen. Read: ``X is None`` / ``X is not
        None`` (and ``==``/``!=``) of a value that is never None (:meth:`never_none`), ``not``,
        ``and``, ``or``. ``max_len = args.max_length if args.max_length is not None else
        model.config.max_length`` of an ``int`` option defaulting to 128 never reads the config."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.certainly(test.operand, scope)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            found = [self.certainly(v, scope) for v in test.values]
            decisive = isinstance(test.op, ast.Or)  # `or`: one true value decides; `and`: one false
            if decisive in found:
                return decisive
            return (not decisive) if all(f is (not decisive) for f in found) else None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)):
            left, right = test.left, test.comparators[0]
            if is_constant(right, None):
                other = left
            elif is_constant(left, None):
                other = right
            else:
                return None
            if self.never_none(other, scope):
                return isinstance(test.ops[0], (ast.IsNot, ast.NotEq))
        return None

    def never_none(self, expr: ast.expr, scope: Scope) -> bool:
        """Whether ``expr`` is never None: every value reaching it is a literal other than None,
        or it is a command-line option that no run leaves None: an argparse option (of this
        module) with a default other than None whose passed value is converted by ``int``,
        ``float`` or ``str`` (a converter of the project's own may return None, ``nargs="?"``
        stores ``const``), or a field an ``HfArgumentParser`` fills, of a dataclass of this
        module, annotated ``int``/``float``/``str``/``bool`` (not Optional) with such a default.
        Nothing in the module may set the attribute (``args.x = None``, ``set_defaults(x=)``,
        ``setattr``)."""
        values = self.values(expr, scope)
        if not values:
            return False
        if all(v.kind == CONST and v.value is not None for v in values):
            return True
        if not (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id != "self"):
            return False
        if any(v.kind == CONST and v.value is None for v in values) or self._attribute_set(expr.attr):
            return False
        options = self.ix.arg_options.get(expr.attr)
        if options and all(v.kind in (CONST, UNKNOWN) for v in values):
            offered = self._dest_values(options, scope)
            return all(v in offered for v in values) and all(_option_never_none(option.call, self.ix) for option in options)
        if all(v.kind == RETURN for v in values):
            return all(
                v.value.keys == (expr.attr,) and (v.value.command_line or v.value.files)
                and _field_never_none(self.ix.classes.get(v.value.callee), expr.attr)
                for v in values
            )
        return False

    def _attribute_set(self, attr: str) -> bool:
        """Whether the module sets an attribute ``attr`` of some object other than ``self``
        (``args.x = None``, ``parser.set_defaults(x=...)``, ``setattr(args, "x", ...)``)."""
        found = self._sets.get(attr)
        if found is None:
            found = any(
                isinstance(node.ctx, (ast.Store, ast.Del)) and node.attr == attr
                and not (isinstance(node.value, ast.Name) and node.value.id == "self")
                for node in self.ix.attributes
            ) or any(_sets_attribute(site, attr) for site in self.ix.calls)
            self._sets[attr] = found
        return found

    def parameter_default(self, function: Scope, name: str, default: ast.expr) -> List[Possible]:
        """The values of parameter ``name``'s default, each marked as that default: the join
        keeps them only where some call may leave the parameter out."""
        ref = param_ref(function, name)
        return [replace_fields(v, default_of=ref) for v in self.values(default, function.parent or function)]

    def _capability_guarded(self, assignments: List[Assignment], owner: Scope) -> Optional[Guard]:
        if len(assignments) < 2:
            return None
        for assignment in assignments:
            for test, positive in assignment.guards:
                guard = self.guard(test, positive, owner)
                if guard.capability or guard.param_dtype:
                    return guard
        return None

    def _assigned(self, assignment: Assignment, owner: Scope) -> List[Possible]:
        if assignment.value is None:
            return list(UNKNOWN_VALUE)
        if assignment.unpack_index is not None:
            # `model_args, training_args = parser.parse_args_into_dataclasses()`
            parsed = self._unpacked_parse(assignment.value, assignment.unpack_index, owner)
            if parsed is not None:
                return parsed
            # `args, training_args = setup()` of a local function returning a tuple: the
            # element at that position of each tuple it returns (or of the parse it returns)
            function = self.ix.local_function(assignment.value.func, owner) if isinstance(assignment.value, ast.Call) else None
            if function is not None:
                out: List[Possible] = []
                for value, guards in function.returns:
                    item = element(value, assignment.unpack_index)
                    if item is None:
                        returned = self._unpacked_parse(value, assignment.unpack_index, function) if value is not None else None
                        out.extend(returned if returned is not None else UNKNOWN_VALUE)
                        continue
                    g = self.guards_of(guards, function)
                    out.extend(_with_guards(v, g) for v in self.values(item, function))
                if out:
                    return out
        item = element(assignment.value, assignment.unpack_index) if assignment.unpack_index is not None else None
        if item is not None:  # `dtype, device = torch.bfloat16, "cuda"`
            return list(self.values(item, owner))
        vals = self.values(assignment.value, owner)
        if assignment.unpack_index is None:
            return list(vals)
        # `major, minor = torch.cuda.get_device_capability()` keeps the capability taint
        return [v if v.kind == CAPABILITY else Possible(UNKNOWN) for v in vals]

    def _unpacked_parse(self, value: ast.expr, index: int, owner: Scope) -> Optional[List[Possible]]:
        """The instance at ``index`` of what a parse call ``value`` gives back
        (``parser.parse_args_into_dataclasses()``, ``parse_json_file(...)``): each field the
        file's key, else the class's default, or the user's command line; None when ``value``
        is no such parse."""
        parsed = self.parsed_classes(value, owner)
        if parsed is None:
            return None
        if index >= len(parsed):
            return list(UNKNOWN_VALUE)
        qual = self.ix.qualify(parsed[index], owner)
        if not qual:
            return list(UNKNOWN_VALUE)
        kind, arg, paths = self.parse_source(value, owner)
        if kind == "file":  # each field: the file's key, else the class's default
            ref = ReturnRef(qual, files=paths, choice=self.parse_choice(value), option=self.parse_option(arg, owner))
            return [Possible(RETURN, ref, origin=self.ix.span(value))]
        return [Possible(RETURN, ReturnRef(qual, command_line=True), origin=self.ix.span(value))]

    def _attribute(self, expr: ast.Attribute, scope: Scope, origin) -> List[Possible]:
        qual = self.ix.qualify(expr, scope)
        dtype = dtype_of_qualname(qual)
        if dtype:
            return [Possible(DTYPE, dtype, origin=origin)]
        stored = attribute_stored_before(self.ix, expr, scope)
        if stored is not None:  # `args.weight_dtype = ...` above the read (review 27a)
            return list(self.values(stored, scope))
        base_vals = self.values(expr.value, scope) if not isinstance(expr.value, ast.Name) or scope.lookup_scope(expr.value.id) else ()
        if any(v.kind == CAPABILITY for v in base_vals):  # props.major
            return [Possible(CAPABILITY, text=self.ix.text(expr), capability=True)]
        constructed = self._constructed(expr, scope)
        if constructed is not None:
            return constructed
        if not (isinstance(expr.value, ast.Name) and expr.value.id == "self"):
            symbol = self._symbol(expr, scope, origin)  # `transformers.AutoModelForCausalLM`
            if symbol is not None:
                return [symbol]
        # OmegaConf / EasyDict: `cfg.training.fp16`, also on what a helper returns
        selected = [select(v, expr.attr) for v in base_vals if v.kind in (CONFIG, RETURN)]
        if selected:
            out = [replace_fields(v, origin=origin) for v in selected]
            if expr.attr in COMMAND_LINE_FLAGS:  # `training_args.fp16` of HfArgumentParser
                for v in base_vals:
                    if v.kind == RETURN and (v.value.command_line or v.value.files) and is_training_arguments(v.value.callee, self.ix):
                        out.extend(self._parsed_flag(expr, scope))
            return out
        attrs = self._self_attribute(expr, scope)
        if attrs is not None:
            return attrs
        given = self._library_attribute(expr, scope)
        if given is not None:
            return given
        options = self.ix.arg_options.get(expr.attr)
        if options and isinstance(expr.value, ast.Name):
            return self._dest_values(options, scope)
        # `cfg.fp16` of a parameter `cfg`: that field of what the callers pass (`train(Config())`)
        fields = [replace_fields(select(v, expr.attr), origin=origin) for v in base_vals if v.kind == PARAM]
        return fields or list(UNKNOWN_VALUE)

    def parsed_classes(self, expr: ast.expr, scope: Scope) -> Optional[List[ast.expr]]:
        """For ``parser.parse_args_into_dataclasses()`` of ``parser = HfArgumentParser((A, B))``:
        the class expressions, in the order the parse returns their instances; else None."""
        if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in PARSE_METHODS):
            return None
        receiver = expr.func.value
        made = [receiver]
        if isinstance(receiver, ast.Name):
            owner, reached = self.ix.bindings_of(receiver, scope)
            made = [b.value for b in reached]
            scope = owner or scope
        for call in made:
            if isinstance(call, ast.Call) and self.ix.qualify(call.func, scope) in ARGUMENT_PARSERS:
                return self.parser_classes(call)
        return None

    def parser_classes(self, call: ast.Call) -> Optional[List[ast.expr]]:
        """``HfArgumentParser((A, B))`` → ``[A, B]``; ``HfArgumentParser(A)`` → ``[A]``."""
        args = [a.value for a in arguments(call) if a.keyword is None] or [
            kw.value for kw in call.keywords if kw.arg == "dataclass_types"
        ]
        if not args:
            return None
        if isinstance(args[0], (ast.Tuple, ast.List)):
            return _element_values(args[0])
        return [args[0]]

    def _parsed_flag(self, expr: ast.Attribute, scope: Scope) -> List[Possible]:
        """``training_args.fp16`` of ``(..., training_args) = parser.parse_...(...)``: what that
        parse gives the field (a file's key, a dict's entry), else the user's ``--fp16``."""
        parses = []
        if isinstance(expr.value, ast.Name):
            owner, reached = self.ix.bindings_of(expr.value, scope)
            for a in reached:
                if a.value is not None and a.unpack_index is not None and self.parsed_classes(a.value, owner) is not None:
                    parses.append((a.value, owner))
        if not parses:
            return self.command_line_flag(expr, expr.attr)
        return [v for call, owner in parses for v in self.parsed_field(call, owner, expr.attr)]

    def parse_calls(self, parser: CallSite) -> List[ast.Call]:
        """The parse calls of the parser ``parser`` builds (``parser = HfArgumentParser(...)``
        then ``parser.parse_yaml_file(...)``, or ``HfArgumentParser(A).parse_dict(d)``)."""
        return [site.node for site in calls_on(self.ix, parser, PARSE_METHODS)]

    def parse_source(self, call: ast.Call, scope: Scope) -> Tuple[str, Optional[ast.expr], Tuple[str, ...]]:
        """Where a parse call takes the fields it fills from: ``("file", arg, paths)`` for a
        YAML/JSON file at a literal path (``parse_yaml_file("train.yaml")``), ``("mapping", d,
        ())`` for ``parse_dict(d)``, ``("arguments", list, ())`` for
        ``parse_args_into_dataclasses(args=[...])`` with a literal list, else ``("command-line",
        None, ())``: the user's own command line, or a file they name there (``sys.argv[1]``)."""
        method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        first = next((a.value for a in arguments(call) if a.keyword is None), None)
        named = {kw.arg: kw.value for kw in call.keywords if kw.arg is not None}
        if method in ("parse_yaml_file", "parse_json_file"):
            arg = first if first is not None else named.get("yaml_file", named.get("json_file"))
            paths = tuple(p for p in self._config_paths(arg, scope, 0) if p.lower().endswith((".yaml", ".yml", ".json"))) if arg is not None else ()
            if paths:
                return "file", arg, paths
        elif method == "parse_dict":
            arg = first if first is not None else named.get("args")
            if arg is not None:
                return "mapping", arg, ()
        elif method == "parse_args_into_dataclasses":
            arg = first if first is not None else named.get("args")
            if isinstance(arg, (ast.List, ast.Tuple)):
                return "arguments", arg, ()
        return "command-line", None, ()

    def parse_choice(self, call: ast.Call) -> str:
        """The parse call as a choice among configuration files (``ConfigRef.choice``)."""
        return str(self.ix.span(call).start)

    def parse_option(self, arg: Optional[ast.expr], scope: Scope) -> str:
        """The script's command-line option whose value is the file a parse reads
        (``parse_json_file(json_file=a.train_args_file)`` of an argparse option
        ``--train_args_file``): its name, else ""."""
        if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and self.ix.arg_options.get(arg.attr):
            return arg.attr
        return ""

    def parsed_field(self, call: ast.Call, scope: Scope, name: str) -> List[Possible]:
        """The values a parse call gives field ``name`` of the TrainingArguments it fills: the
        file's key (read at the join, with its line; absent: the field's default, off), the
        dict's entry, the ``--name`` of a literal argument list, or the user's command line."""
        kind, arg, paths = self.parse_source(call, scope)
        off = (False,) if name in COMMAND_LINE_FLAGS else (None,) if name == "deepspeed" else ()
        if kind == "file":
            choice, option = self.parse_choice(call), self.parse_option(arg, scope)
            return [Possible(CONFIG, ConfigRef(p, (name,), off, choice, option), origin=self.ix.span(call)) for p in paths]
        if kind == "mapping":
            entries = [e for e in self._dict_entries(arg, scope, set()) if e.name == name]
            if entries:
                return [v for e in entries for v in self.values(e.value, scope)]
            loaded = [select(v, name, off) for v in self.values(arg, scope) if v.kind in SYMBOLIC]
            if loaded:  # `parse_dict(yaml.safe_load(open("train.yaml")))`
                return [replace_fields(v, origin=self.ix.span(call)) for v in loaded if v is not None]
            if isinstance(arg, ast.Dict) or self._dict_entries(arg, scope, set()):
                return [_const(off[0])] if off else list(UNKNOWN_VALUE)
            return list(UNKNOWN_VALUE)
        if kind == "arguments":
            items = _element_values(arg)
            words = [string_value(i) for i in items]
            if any(w is None for w in words):
                return list(UNKNOWN_VALUE)
            flag = f"--{name}"
            if flag not in words:
                return [_const(off[0])] if off else list(UNKNOWN_VALUE)
            at = words.index(flag)
            following = words[at + 1] if at + 1 < len(words) else None
            if following is not None and not following.startswith("--"):
                value = following.lower() in ("true", "yes", "1")
                return [_const(value, origin=self.ix.span(items[at + 1]))]
            return [_const(True, origin=self.ix.span(items[at]))]
        return self.command_line_flag(call, name) if name in COMMAND_LINE_FLAGS else list(UNKNOWN_VALUE)

    def command_line_flag(self, where: ast.AST, name: str) -> List[Possible]:
        """A TrainingArguments switch such as ``--fp16`` that a parser reads from the command
        line: off unless the user passes it (the user's own choice)."""
        return list(command_line_flag(name, self.ix.span(where)))

    def command_line_option(self, where: ast.AST, name: str) -> List[Possible]:
        """A TrainingArguments option that takes a value, such as ``--deepspeed ds.json``, that a
        parser reads from the command line: unset (None) unless the user passes one (their own
        choice, whose value is not known here)."""
        return list(command_line_option(name, self.ix.span(where)))

    def instance_attributes(self, klass: str) -> dict:
        """``attr -> values`` for the instances of class ``klass`` of this module: class-level
        fields (a dataclass's ``weights_dtype: str = "float16"``, ``field(default=...)``)
        and ``self.attr = ...`` in its methods."""
        info = self.ix.classes.get(klass)
        scope = self.ix.scopes.get(klass)
        if info is None or scope is None:
            return {}
        out: dict = {}
        dataclass = _declares_fields(info, self.ix, scope)
        for name, bound in scope.assignments.items():
            if name.startswith("__"):
                continue
            values: List[Possible] = []
            for assignment in bound:
                if assignment.value is None or assignment.imported is not None:
                    continue
                literal = _bool_literal(assignment.value) or (dataclass and self._literal_field(assignment.value, scope))
                if not literal and not self.may_carry(assignment.value, scope):
                    continue  # a field no precision can reach: not worth its source positions
                values.extend(self._field_default(assignment.value, scope))
            if values:
                out[name] = _dedupe(values)
        for name, assigned in info.self_attr_values.items():
            values = []
            if not any(a.value is not None and (self.may_carry(a.value, w) or _is_parameter_name(a.value, w)) for a, w in assigned):
                continue
            for assignment, where in assigned:
                guards = self.guards_of(assignment.guards, where)
                values.extend(_with_guards(v, guards) for v in self._assigned(assignment, where))
            out[name] = _dedupe([*out.get(name, ()), *values])
        return out

    def field_call(self, value: ast.expr, scope: Scope) -> Optional[ast.Call]:
        """``value`` when it is a dataclass ``field(...)``, qualified through the module's imports
        (``dataclasses.field``, ``from dataclasses import field as f``); a project's own
        ``field()`` (a local ``def field``, a ``utils/dataclasses.py``) is a call like any other."""
        if isinstance(value, ast.Call) and self.ix.qualify(value.func, scope) in FIELD_SPECIFIERS:
            return value
        return None

    def _literal_field(self, value: ast.expr, scope: Scope) -> bool:
        """A dataclass field whose default is written as a literal (``"flash_attention_2"``,
        ``field(default="fp16")``, ``field(default=None)`` of an option that is unset until a
        launch passes it): a command line or a config may choose it."""
        call = self.field_call(value, scope)
        if call is not None:
            value = _specified_default(call)
        return value is not None and isinstance(value, ast.Constant) and (value.value is None or _is_literal(value))

    def _field_default(self, value: ast.expr, scope: Scope) -> List[Possible]:
        """A class-level field's value; ``field(default=x, metadata={"choices": [...]})`` is
        ``x`` (the choices are the user's to pick on a command line)."""
        if self.field_call(value, scope) is not None:
            default = _specified_default(value)
            out = list(self.values(default, scope)) if default is not None else list(UNKNOWN_VALUE)
            metadata = keyword(value, "metadata")
            if metadata is not None:
                for entry in self._dict_entries(metadata.value, scope, set()):
                    if entry.name == "choices" and isinstance(entry.value, (ast.List, ast.Tuple, ast.Set)):
                        choice = Guard("a command-line choice", True, False, False, user_choice=True)
                        for el in _element_values(entry.value):
                            out.extend(_with_guard(v, choice) for v in self.values(el, scope))
            return out
        return list(self.values(value, scope))

    def _constructed(self, expr: ast.Attribute, scope: Scope) -> Optional[List[Possible]]:
        """``cfg.attr`` where ``cfg`` is built by a call of a project class: the keyword the
        call passes for ``attr``, else the class's own value (its summary, at the join)."""
        if not isinstance(expr.value, ast.Name):
            return None
        owner, bound = self.ix.bindings_of(expr.value, scope)
        if not bound or expr.value.id in owner.params or any(
            not isinstance(b.value, ast.Call) or b.unpack_index is not None for b in bound
        ):
            return None
        out: List[Possible] = []
        for b in bound:
            made = [v for v in self.values(b.value, owner) if v.kind == RETURN and not v.value.keys]
            if not made:
                return None
            given = keyword(b.value, expr.attr)
            fields = self._local_fields(made[0].value.callee)
            # no keyword: positional, `*args` and `**kwargs` alike
            unnamed = [a for a in arguments(b.value) if a.keyword is None]
            if given is not None:
                out.extend(self.values(given.value, owner))
            elif unnamed and fields is not None:  # a dataclass of this module: fields in order
                if any(a.star for a in unnamed):
                    out.append(Possible(UNKNOWN))
                elif expr.attr in fields[: len(unnamed)]:
                    out.extend(self.values(unnamed[fields.index(expr.attr)].value, owner))
                else:
                    out.extend(replace_fields(select(v, expr.attr), origin=self.ix.span(expr)) for v in made)
            elif unnamed and not self._has_own_init(made[0].value.callee):
                out.append(Possible(UNKNOWN))  # which field each position fills is the class's
            else:
                out.extend(replace_fields(select(v, expr.attr), origin=self.ix.span(expr)) for v in made)
        return out

    def _library_attribute(self, expr: ast.Attribute, scope: Scope) -> Optional[List[Possible]]:
        """``accelerator.mixed_precision`` of ``accelerator = Accelerator(mixed_precision=X)``
        (every binding that reaches it), and ``self.accelerator.mixed_precision`` in a method of
        a class whose methods set ``self.accelerator = Accelerator(mixed_precision=X)`` (every
        such assignment that may run): the values of X (``LIBRARY_ATTRIBUTES``). None where
        the object is bound otherwise, or the keyword is not given or may be None (the launch's
        precision, read from the environment)."""
        made_by = self._built_by(expr.value, scope)
        if not made_by:
            return None
        out: List[Possible] = []
        for call, where in made_by:
            made = self._qualname_of(call, where)
            name = LIBRARY_ATTRIBUTES.get((made or "", expr.attr))
            given = keyword(call, name) if name else None
            given = given.value if given is not None else None
            if name and given is None and (made, expr.attr) == _DEVICE_TYPE:
                given = first_argument(call)  # `torch.device("mps")`
            if given is None:
                return None
            values = self.values(given, where)
            if any(v.kind != CONST or v.value is None for v in values):
                return None
            if (made, expr.attr) == _DEVICE_TYPE:
                if not all(isinstance(v.value, str) for v in values):
                    return None  # `torch.device(0)`: an index, the type is the current accelerator's
                values = [replace_fields(v, value=v.value.split(":", 1)[0]) for v in values]
            out.extend(values)
        return out

    def _built_by(self, expr: ast.expr, scope: Scope) -> Optional[List[Tuple[ast.Call, Scope]]]:
        """The calls that build the object ``expr`` names, each with the scope it is made in: a
        name's reaching bindings, or ``self.x``'s assignments in its class's methods (those
        under a test that never holds left out). None where one of them is no call."""
        if isinstance(expr, ast.Name):
            owner, bound = self.ix.bindings_of(expr, scope)
            if owner is None or not bound or expr.id in owner.params:
                return None
            made = [(b.value, owner) for b in bound if b.unpack_index is None and b.imported is None]
            if len(made) != len(bound):
                return None
        else:
            assigned = self._self_assignments(expr, scope) if isinstance(expr, ast.Attribute) else None
            if not assigned:
                return None
            made = [(a.value, where) for a, where in assigned if not self.dead(a.guards, where)]
        if not made or any(not isinstance(call, ast.Call) for call, _ in made):
            return None
        return made

    def _local_fields(self, klass: str) -> Optional[List[str]]:
        """The fields of a dataclass defined in this module without its own ``__init__``, in
        order (what positional constructor arguments fill); None for any other class."""
        info = self.ix.classes.get(klass)
        if info is None or info.init_params is not None or any(b.split(".")[-1] != "object" for b in info.bases):
            return None
        scope = self.ix.scopes[klass]
        return [name for name, bound in scope.assignments.items() if any(b.value is not None or isinstance(b.statement, ast.AnnAssign) for b in bound)]

    def _has_own_init(self, klass: str) -> bool:
        info = self.ix.classes.get(klass)
        return info is not None and info.init_params is not None

    def _self_assignments(self, expr: ast.Attribute, scope: Scope):
        """``self.dtype`` read in a method: every ``self.dtype = ...`` of its class, with the
        method it is in (an instance's state: any method may have run before this one, so each
        of them may be what the read sees); None for any other attribute."""
        if not (isinstance(expr.value, ast.Name) and expr.value.id == "self"):
            return None
        method = scope.code_scope()
        klass = method.parent
        if method.kind != "function" or klass is None or klass.kind != "class" or "self" not in method.params:
            return None
        info = self.ix.classes.get(klass.qualname)
        return info.self_attr_values.get(expr.attr) if info is not None else None

    def _self_attribute(self, expr: ast.Attribute, scope: Scope) -> Optional[List[Possible]]:
        """``self.dtype`` in a method: every value its class assigns to it (``self.dtype = dtype``
        in ``__init__`` is the constructor's parameter, resolved at the join)."""
        assigned = self._self_assignments(expr, scope)
        if not assigned:
            return None
        out: List[Possible] = []
        for assignment, where in assigned:
            guards = self.guards_of(assignment.guards, where)
            out.extend(_with_guards(v, guards) for v in self._assigned(assignment, where))
        return out

    def namespace_fields(self) -> Tuple[Tuple[str, Tuple[Possible, ...]], ...]:
        """``(dest, values)`` of every argparse option of the module: the fields of the
        namespace its parsers parse, as ``args.<dest>`` reads them (one table per module,
        shared by every call that hands the namespace over)."""
        if self._namespace is None:
            self._namespace = tuple(
                (dest, tuple(self._dest_values(options, self.ix.root))) for dest, options in self.ix.arg_options.items()
            )
        return self._namespace

    def _dest_values(self, options, scope: Scope) -> List[Possible]:
        """The values the options that store into one name can give it. argparse sets each
        name's default once, from the first option that stores into it: ``--bf16``
        (``store_true``) then ``--no-bf16`` (``store_false``, ``dest="bf16"``) leave ``args.bf16``
        False unless the user passes ``--bf16`` (47b: read as default-on, MP102 and MP201 said
        so); the later options add only what passing them gives."""
        out: List[Possible] = []
        for i, option in enumerate(options):
            out.extend(self._arg_option_values(option.call, scope, with_default=i == 0))
        return out

    def _arg_option_values(self, call: ast.Call, scope: Scope, with_default: bool = True) -> List[Possible]:
        """The values an argparse option can hold: its default as it stands (what a run that
        does not pass the option gets; not ``with_default``: an option whose name another
        option's default has set), and what passing it gives, guarded by the user's choice of
        passing it. ``add_argument("--no_fp16", action="store_false")`` is True unless the user
        passes ``--no_fp16``; ``action="store_true", default=True`` is True either way."""
        action = keyword(call, "action")
        action_value = action.value.value if action is not None and _is_string(action.value) else None
        default = keyword(call, "default")
        choices = keyword(call, "choices")
        flag = next((a.value.value for a in arguments(call) if a.keyword is None and _is_string(a.value)), None)
        passed = Guard(
            flag if isinstance(flag, str) and flag.startswith("-") else PASSED_OPTION, True, False, False,
            user_choice=True, on_command_line=True,
        )
        out: List[Possible] = []
        if action_value in ("store_true", "store_false"):
            stored = action_value == "store_true"
            defaults = self.values(default.value, self.ix.root) if default is not None else [_const(not stored)]
            # passing the option is the user's choice even where it stores the default again
            return [*(defaults if with_default else ()), _const(stored, (passed,), self.ix.span(call))]
        if with_default and default is not None:
            out += self.values(default.value, self.ix.root)
        elif with_default and action_value is None:
            out.append(_const(None))
        if choices is not None and isinstance(choices.value, (ast.List, ast.Tuple, ast.Set)):
            for el in _element_values(choices.value):
                out += self.values(el, self.ix.root)
        else:
            if keyword(call, "type") is None or choices is None:
                out.append(Possible(UNKNOWN, guards=(passed,)))  # a user may pass any value on the command line
        return out

    def _call(self, expr: ast.Call, scope: Scope) -> List[Possible]:
        site = self.ix.call_of(expr)
        qual = site.qualname if site else self.ix.qualify(expr.func, scope)
        text = self.ix.text(expr)
        if qual == CUDA_AVAILABLE or _starts_with_cuda(expr):
            return [Possible(CUDA, text=text, cuda=True)]
        if is_capability_callee(qual, expr.func):
            return [Possible(CAPABILITY, text=text, capability=True, cuda=True)]
        given = arguments(expr)
        if qual in ("builtins.bool", "bool") or dotted(expr.func) == "bool":
            args = [a for a in given if a.keyword is None]
            return list(self.values(args[0].value, scope)) if args else [_const(False)]
        if dotted(expr.func) == "getattr" and len(given) >= 2:
            base = self.ix.qualify(given[0].value, scope)
            if base == "torch":
                out = []
                for v in self.values(given[1].value, scope):
                    if v.kind in SYMBOLIC:  # a name known at the join: "float16" becomes torch.float16
                        out.append(replace_fields(v, torch_attr=True))
                        continue
                    dtype = dtype_of_qualname(f"torch.{v.value}") if v.kind == CONST and isinstance(v.value, str) else None
                    out.append(Possible(DTYPE, dtype, v.guards, v.origin) if dtype else Possible(UNKNOWN))
                return out
        if qual in CONFIG_LOADERS:
            paths = [a.value for a in given if a.keyword is None][:1]
            origin = self.ix.span(expr)
            found = self._config_paths(paths[0], scope, 0) if paths else []
            option = self._config_option(paths[0], scope, 0) if paths else ""
            if option:  # each file the shipped launches pass there too, each a configuration of its own
                choice = self.parse_choice(expr)
                return [Possible(CONFIG, ConfigRef(p, choice=choice, option=option), origin=origin) for p in found or [""]]
            refs = [Possible(CONFIG, ConfigRef(p), origin=origin) for p in found]
            return refs or list(UNKNOWN_VALUE)
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in ("get", "pop") and given:
            got = self._mapping_get(expr, scope)
            if got is not None:
                return got
        copied = self._copied_table(expr, qual, given, scope)
        if copied is not None:
            return copied
        # a local function: the union of what it returns
        function = self.ix.local_function(expr.func, scope)
        if function is not None:
            return list(self.returned(function)) or list(UNKNOWN_VALUE)
        # a function of another module (or one this module cannot see into): its summary,
        # substituted at the join
        callee = project_callee(self.ix, site) if site is not None and site.qualname else None
        if callee is not None and callee not in self.ix.functions:
            return [Possible(RETURN, ReturnRef(callee, args=self.call_arguments(expr, scope)), origin=self.ix.span(expr))]
        return list(UNKNOWN_VALUE)

    def worth_passing(self, expr: ast.expr, scope: Scope) -> bool:
        """Whether an argument may carry a precision into the function it is passed to: a
        literal, a parameter passed on as it is (a chain of helpers), anything a dtype may
        reach, a command-line option, or a config value, instance or returned value."""
        if self.passes_dtype(expr, scope):
            return True
        if isinstance(expr, ast.Call) and self.may_carry(expr, scope):
            # `train(Config())`, `Factory(ModelConfig(path=p))`: an instance whose fields are the
            # class's defaults where the call passes none (recall 27c: ArcticTraining's config)
            return True
        if isinstance(expr, ast.Call) and (site := self.ix.call_of(expr)) is not None and site.qualname in CONFIG_LOADERS:
            return True  # `run(yaml.safe_load(open("config.yaml")))`: the file's keys, read at the join
        if isinstance(expr, ast.Name) and self.parsed_instance(expr, scope):
            return True  # its `fp16`, `deepspeed`: what the script's launches pass (`Trainer(args=...)`)
        return isinstance(expr, (ast.Name, ast.Subscript, ast.Attribute)) and self.may_carry(expr, scope)

    def parsed_instance(self, name: ast.Name, scope: Scope) -> bool:
        """Whether ``name`` is bound to an instance a parse fills (``model_args, training_args =
        parser.parse_args_into_dataclasses()``): a value that carries the run's configuration."""
        owner, reached = self.ix.bindings_of(name, scope)
        return bool(reached) and any(
            a.value is not None and a.unpack_index is not None and self.parsed_classes(a.value, owner) is not None
            for a in reached
        )

    def call_arguments(self, call: ast.Call, scope: Scope):
        """``(position, keyword, values)`` of the arguments of ``call`` that a dtype may reach
        (literals, dtypes, parameters and command-line options passed on): the context of what
        that one call returns. None when ``*args``/``**kwargs`` hide which parameter gets what,
        or when the call is met deep inside another evaluation (its callers' context is then
        used instead: nested contexts would multiply)."""
        if self._depth > _CONTEXT_DEPTH:
            return None
        key = (id(call), id(scope), self._symbols)
        if key in self._contexts:  # a call bound once and used in many places
            return self._contexts[key]
        out = []
        position = 0
        for arg in arguments(call):
            if arg.star:
                return None
            if self.passes_dtype(arg.value, scope):
                keyword = arg.keyword
                values = tuple(_without_context(v) for v in self.values(arg.value, scope))
                out.append((position if keyword is None else None, keyword, values))
            if arg.keyword is None:
                position += 1
        self._contexts[key] = tuple(out)
        return self._contexts[key]

    def passes_dtype(self, expr: ast.expr, scope: Scope) -> bool:
        """Whether a dtype may reach an argument: a literal, a parameter or a command-line option
        passed on, or an expression a dtype flows into."""
        if _is_literal(expr):  # True and False among them
            return True
        if isinstance(expr, ast.JoinedStr) and _strings_written(self.ix.text(expr)) > 1:
            # `f"a" "b"`: strings written side by side are a literal here (a concatenation, as
            # LibCST's tree has it), an f-string alone is not
            return True
        if isinstance(expr, ast.Name) and _is_parameter(expr, scope):
            return True  # passed on as it is: a chain of helpers
        if isinstance(expr, ast.Name) and self._names_a_literal(expr, scope):
            return True  # `MODEL_NAME = "org/coder-33b"` ... `Gen(model_name=MODEL_NAME)`: a literal by name
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.attr in self.ix.arg_options:
            return True  # a command-line option passed on (`main(args.amp)`): the user's switch
        return self.mentions_dtype(expr, scope)

    def _names_a_literal(self, name: ast.Name, scope: Scope) -> bool:
        """Whether every binding of ``name`` that reaches it gives it a literal."""
        _, reached = self.ix.bindings_of(name, scope)
        return bool(reached) and all(b.value is not None and b.unpack_index is None and _is_literal(b.value) for b in reached)

    def worth_summarising(self, function: Scope) -> bool:
        return any(self.may_carry(value, function) for value, _ in function.returns)

    def module_variables(self) -> List[Tuple[str, Values]]:
        """``(name, values)`` for each module-level variable whose value is known in part (a
        dtype, a literal, a config file's table, an instance of a project class): what
        ``from this_module import NAME`` reads in another file, at the join. A name bound by an
        import, a ``def``, a ``class`` or a loop is none; only values written as a literal, a
        name, an attribute, a call or a subscript are read (a table's literal is not)."""
        root = self.ix.root
        out = []
        for name, bindings in root.assignments.items():
            qualified = f"{root.qualname}.{name}" if root.qualname else name
            if len(bindings) == 1 and _small_table(bindings[0].value) and not bindings[0].guards:
                # `DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}`: each entry, as
                # `from utils import DTYPES` ... `DTYPES[args.dtype]` reads it (held-out 27)
                for key, value in zip(bindings[0].value.keys, bindings[0].value.values):
                    found = self.values(value, root)
                    if any(v.kind != UNKNOWN for v in found):
                        out.append((f"{qualified}.{key.value}", found))
                continue
            if any(b.imported is not None or b.value is None or isinstance(b.statement, NOT_VALUE_BINDERS) or not isinstance(b.value, _VARIABLE_VALUES) for b in bindings):
                continue
            values = _dedupe(
                _with_guards(v, self.guards_of(b.guards, root)) for b in bindings for v in self._assigned(b, root)
            )
            if any(v.kind != UNKNOWN for v in values):
                out.append((qualified, values))
        return out

    def returned(self, function: Scope) -> Values:
        """What ``function`` may return (its summary for callers in other files)."""
        out = []
        for value, guards in function.returns:
            g = self.guards_of(guards, function)
            out.extend(_with_guards(v, g) for v in self.values(value, function))
        return _dedupe(out)

    def _config_paths(self, expr: ast.expr, scope: Scope, depth: int) -> List[str]:
        """The literal paths a loader's argument may read: ``open("c.yaml")``, a name bound by
        ``with open(path) as f``, ``Path(dir) / "c.yaml"``, ``os.path.join(d, "c.yaml")``,
        ``Path(p).read_text()``, or the path itself (``OmegaConf.load(args.config)`` with an
        argparse ``default=``). Only string values that are certain are kept."""
        if depth > 6:
            return []
        if isinstance(expr, ast.Name) and not scope.is_import(expr.id):
            owner, bound = self.ix.bindings_of(expr, scope)
            if bound and all(a.value is not None and isinstance(a.value, ast.Call) for a in bound):
                return [p for a in bound for p in self._config_paths(a.value, owner, depth + 1)]
        if isinstance(expr, ast.Call):
            func = expr.func
            name = dotted(func) or ""
            args = [a.value for a in arguments(expr) if a.keyword is None]
            if isinstance(func, ast.Attribute) and func.attr in ("read", "read_text", "open", "read_bytes"):
                return self._config_paths(func.value, scope, depth + 1)
            last = name.rsplit(".", 1)[-1]
            if last in ("open", "Path", "PurePath") and args:
                return self._config_paths(args[0], scope, depth + 1)
            if name in ("os.path.join", "path.join", "osp.join") and args:
                return self._config_paths(args[-1], scope, depth + 1)
            return []
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
            return self._config_paths(expr.right, scope, depth + 1)  # `Path(__file__).parent / "c.yaml"`
        return [v.value for v in self.values(expr, scope) if v.kind == CONST and isinstance(v.value, str)]

    def _config_option(self, expr: ast.expr, scope: Scope, depth: int) -> str:
        """The command-line option whose value is the path a loader reads, followed as
        :meth:`_config_paths` follows it (``with open(args.exp_config_path) as f`` ...
        ``yaml.safe_load(f)``: "exp_config_path"), else "". The join reads the files the shipped
        launches pass there (47a: a SLURM job's ``--exp-config-path configs/exp.yaml`` sets both
        ``bf16`` and ``fp16``)."""
        if depth > 6:
            return ""
        if isinstance(expr, ast.Name) and not scope.is_import(expr.id):
            owner, bound = self.ix.bindings_of(expr, scope)
            if len(bound) == 1 and isinstance(bound[0].value, ast.Call):
                return self._config_option(bound[0].value, owner, depth + 1)
            return ""
        if isinstance(expr, ast.Call):
            func = expr.func
            args = [a.value for a in arguments(expr) if a.keyword is None]
            if isinstance(func, ast.Attribute) and func.attr in ("read", "read_text", "open", "read_bytes"):
                return self._config_option(func.value, scope, depth + 1)
            if (dotted(func) or "").rsplit(".", 1)[-1] in ("open", "Path", "PurePath") and args:
                return self._config_option(args[0], scope, depth + 1)
            return ""
        return self.parse_option(expr, scope)

    def _mapping_get(self, expr: ast.Call, scope: Scope) -> Optional[List[Possible]]:
        """``cfg.get("fp16", False)`` (or ``.pop``) on a config file's table or a dict built in
        the code: the key's value where it is there, else the default (None without one)."""
        func = expr.func
        args = positional(expr)
        if not args or len(args) != len([a for a in arguments(expr) if a.keyword is None]):
            return None  # `d.get(key=...)`, `d.get(*keys)`: not a dict's get
        keys = self.values(args[0], scope)
        if not keys or any(k.kind != CONST for k in keys):
            return None
        default = self.values(args[1], scope) if len(args) > 1 else (_const(None),)
        base = self.values(func.value, scope)
        out: List[Possible] = []
        single = len(default) == 1 and default[0].kind == CONST
        missing = (default[0].value,) if single else ()
        for v in base:
            for k in keys:
                chosen = select(v, k.value, missing)
                if chosen is not None:
                    out.append(replace_fields(chosen, guards=chosen.guards + k.guards, origin=self.ix.span(expr)))
        entries = self._dict_entries(func.value, scope, set())
        if entries:
            for key in keys:
                found = [e for e in entries if e.name == key.value]
                for e in found:
                    out.extend(self._looked_up(v, key) for v in self.values(e.value, scope))
                if not found:
                    out.extend(default)
        return out or None

    def _copied_table(self, expr: ast.Call, qual: Optional[str], given, scope: Scope) -> Optional[List[Possible]]:
        """A copy of a config file's table, which holds the same keys: ``OmegaConf.to_container(
        cfg.training, resolve=True)``, ``dict(cfg["training"])``, ``copy.deepcopy(cfg)``,
        ``cfg["training"].copy()``. Only the file's values are kept (``CONFIG`` atoms); None
        where the call is none of these or copies no such table (what it gives stays unknown)."""
        plain = [a.value for a in given if a.keyword is None and not a.star]
        if isinstance(expr.func, ast.Attribute) and expr.func.attr == "copy" and not given:
            source = expr.func.value
        elif len(plain) == 1 and len(given) == 1 and (
            qual in _TABLE_COPIES or (dotted(expr.func) == "dict" and not scope.is_import("dict") and qual in (None, "dict", "builtins.dict"))
        ):
            source = plain[0]
        elif plain and qual in _OMEGACONF_CONVERSIONS:
            source = plain[0]
        else:
            return None
        found = [v for v in self.values(source, scope) if v.kind == CONFIG]
        return found or None

    def _boolean(self, expr: ast.BoolOp, scope: Scope) -> List[Possible]:
        # `a and b and c` as `(a and b) and c` (see _operands)
        left_node, right_node = self._operands(expr)
        left_values, right_values = self.values(left_node, scope), self.values(right_node, scope)
        left, right = _opaque(left_values), _opaque(right_values)
        is_and = isinstance(expr.op, ast.And)
        # `fp16 and use_cuda` of a parameter the user sets: true only where the user turns it on
        # (the switch's guard, as `if fp16:` gives what it guards)
        switches = tuple(
            g for g in (
                self.guard(node, True, scope)
                for node, values in ((left_node, left_values), (right_node, right_values))
                if any(v.kind in SYMBOLIC or v.kind == UNKNOWN for v in values)
            ) if g.user_choice
        ) if is_and else ()
        out: List[Possible] = []
        if not is_and and any(v.kind in SYMBOLIC for v in left_values) and any(v.kind != UNKNOWN for v in right):
            # `torch_dtype or torch.float16`: what the callers pass, kept for the join (their falsy
            # values are not followed), and the right side where the parameter keeps its falsy
            # default (below: a default is marked `default_of`, dropped where every call passes it)
            out.extend(v for v in left_values if v.kind in SYMBOLIC)
            # the other values of the left side go on below: its default, and an unknown value
            # of its own (`dtype = getattr(torch, os.environ["DT"])` on one path) stays unknown
            left = [v for v in left_values if v.kind not in SYMBOLIC] or left
        for a, b in itertools.islice(itertools.product(left, right), _MAX_ATOMS):
            if a.kind == CONST and b.kind == CONST:
                out.append(_const((a.value and b.value) if is_and else (a.value or b.value), a.guards + b.guards))
            elif is_and and a.kind == CONST and not a.value:
                out.append(_const(a.value, a.guards))
            elif not is_and and a.kind == CONST and a.value:
                out.append(_const(a.value, a.guards))
            elif not is_and and a.kind == CONST and not a.value and b.kind != UNKNOWN:
                # `torch_dtype or torch.float16` where the parameter keeps its default None: the
                # right side (where no call passes a value, `default_of` says so at the join)
                out.append(replace_fields(b, guards=a.guards + b.guards, default_of=a.default_of or b.default_of))
            elif not is_and and a.kind == UNKNOWN and b.kind == CONST and b.value:
                # `precision or "bf16-mixed"`: the code's default where nothing is given
                out.extend((Possible(UNKNOWN), replace_fields(b, guards=a.guards + b.guards)))
            elif UNKNOWN in (a.kind, b.kind) and not (a.capability or b.capability or a.kind == CUDA or b.kind == CUDA):
                out.append(Possible(UNKNOWN))
            else:
                text = self.ix.text(expr)
                # `a and b` true: both are; `a or b` true: only itself
                terms = frozenset({(text, True)}) | (a.implies() | b.implies() if is_and else frozenset())
                out.append(
                    Possible(
                        COND,
                        None,
                        a.guards + b.guards + switches,
                        text=text,
                        capability=_consults(a, CAPABILITY) or _consults(b, CAPABILITY),
                        cuda=_consults(a, CUDA) or _consults(b, CUDA),
                        terms=terms,
                    )
                )
        return out

    def _comparison(self, expr: ast.Compare, scope: Scope) -> List[Possible]:
        left = _opaque(self.values(expr.left, scope))
        if len(expr.ops) != 1:
            return [_cond(self.ix.text(expr), left)]
        right = _opaque(self.values(expr.comparators[0], scope))
        op = expr.ops[0]
        if _names_cuda(expr, op) and not all(v.kind == CONST for v in left + right):
            # `device == "cuda"`, `device.type == "cuda"`, `"cuda" in str(device)` of a device not
            # known here: true where the run is on a CUDA GPU (as `torch.cuda.is_available()`)
            return [Possible(CUDA, text=self.ix.text(expr), cuda=True)]
        if isinstance(op, (ast.Eq, ast.Is)) and _reads_a_dtype(expr, self.ix, scope) and any(v.kind == DTYPE for v in left + right):
            # `next(model.parameters()).dtype == torch.bfloat16`: true only where the weights (or
            # the tensor) already have that dtype, which whoever made them chose (as a guard
            # `if p.dtype == torch.float16:` is: ``Guard.param_dtype``)
            text = self.ix.text(expr)
            return [Possible(COND, None, (Guard(text, True, False, False, param_dtype=True),), text=text)]
        if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)) and any(v.kind == CONST for v in left) and all(
            v.kind in (CONST, UNKNOWN) for v in left + right
        ):
            # `args.precision == "bf16"`: known operands compare; unknown ones stay unknown
            out = []
            for a, b in itertools.islice(itertools.product(left, right), _MAX_ATOMS):
                if a.kind != CONST or b.kind != CONST:
                    out.append(Possible(UNKNOWN))
                    continue
                eq = a.value == b.value
                truth = eq if isinstance(op, (ast.Eq, ast.Is)) else not eq
                # a true test keeps where the value that passes it is written (`args.dtype == "bf16"`
                # is true where the option's choice "bf16" is given: a command-line opt-in, MP201)
                out.append(_const(truth, a.guards + b.guards, a.origin if truth else None))
            return out
        return [_cond(self.ix.text(expr), left + right)]

    def _subscript(self, expr: ast.Subscript, scope: Scope) -> List[Possible]:
        base = self.values(expr.value, scope)
        if any(v.kind == CAPABILITY for v in base):  # get_device_capability()[0]
            return [Possible(CAPABILITY, text=self.ix.text(expr), capability=True, cuda=True)]
        key = subscript_key(self.ix, expr)  # None for `d[a:b]`, `d[i, j]`: no one key
        if key is None:
            return list(UNKNOWN_VALUE)
        all_keys = self.values(key, scope)
        keys = [k for k in all_keys if k.kind == CONST]
        if self._symbols and all_keys and not keys:
            # `KINDS[kind]` with a key not known here: one of the table's values (any other
            # key raises KeyError)
            table = self._table(expr.value, scope)
            if table:
                origin = self.ix.span(expr)
                return [replace_fields(v, origin=origin) for _, values in table for v in values]
        if self._symbols and keys and len(keys) == len(all_keys) and isinstance(expr.value, ast.Subscript):
            # `MODEL_CLASSES[kind]["model"]` with `kind` not known here: the entry of each of the
            # table's dicts (held-out 39u's M2: a table of model classes per model type)
            found = self._table_of_tables(expr.value, scope, {k.value for k in keys})
            if found:
                origin = self.ix.span(expr)
                return [replace_fields(v, origin=origin) for v in found]
        symbolic = [k for k in all_keys if k.kind in SYMBOLIC]
        if symbolic:  # `DTYPES[cfg["dtype"]]`: the key is known at the join, the table here
            table = self._table(expr.value, scope)
            if table:
                origin = self.ix.span(expr)
                looked = [replace_fields(k, lookup=table, origin=origin) for k in symbolic]
                if not keys:
                    return looked
                return looked + [v for v in self._subscript_known(expr, scope, base, keys, all_keys) if v.kind != UNKNOWN]
        if not keys:
            return list(UNKNOWN_VALUE)
        return self._subscript_known(expr, scope, base, keys, all_keys)

    def _table_of_tables(self, inner: ast.Subscript, scope: Scope, names: set) -> List[Possible]:
        """The values the entries ``names`` hold in each dict of a table that ``inner`` (``T[kind]``)
        looks up by a key not known here (any other key raises KeyError); [] where ``inner``'s key
        is known, or the table's values are not all dicts written in the code."""
        key = subscript_key(self.ix, inner)
        if key is None or any(k.kind == CONST for k in self.values(key, scope)):
            return []
        out: List[Possible] = []
        for entry in self._dict_entries(inner.value, scope, set())[:_MAX_TABLE]:
            rows = self._dict_entries(entry.value, scope, set())
            if not rows:
                return []
            out.extend(v for row in rows if row.name in names for v in self.source_values(row, scope))
        return out

    def _table(self, expr: ast.expr, scope: Scope):
        """A dict written in the code with literal keys, as ``(key, values)`` pairs (at most
        :data:`_MAX_TABLE` of them); () for anything else."""
        entries = self._dict_entries(expr, scope, set())
        if not entries or len(entries) > _MAX_TABLE:
            return ()
        return tuple((e.name, tuple(self.source_values(e, scope))) for e in entries)

    def _subscript_known(self, expr: ast.Subscript, scope: Scope, base, keys, all_keys) -> List[Possible]:
        # a key that may be anything (`choices=` the code computes) looks up anything: unknown,
        # beside what the known keys (the option's `default=`) look up
        out: List[Possible] = [Possible(UNKNOWN)] if len(keys) < len(all_keys) else []
        out += [
            replace_fields(chosen, guards=chosen.guards + key.guards, origin=self.ix.span(expr))
            for v in base
            for key in keys
            if (chosen := select(v, key.value)) is not None
        ]
        entries = self._dict_entries(expr.value, scope, set())
        for key in keys:  # `{"bfloat16": torch.bfloat16, ...}[dtype]`: the key's guards carry over
            for entry in entries:
                if entry.name == key.value:
                    out.extend(self._looked_up(v, key) for v in self.values(entry.value, scope))
        return out or list(UNKNOWN_VALUE)

    def _looked_up(self, value: Possible, key: Possible) -> Possible:
        """A dict's ``value`` as looked up by ``key``: chosen under the key's guards, and where the
        key is chosen by a capability check, chosen there (the probe that decides it is the
        key's); where the key is a command-line choice (``choices=[...]`` of an argparse option, not its
        ``default=``), chosen there — an opt-in stays an opt-in through ``DTYPES[args.precision]``."""
        value = _with_guards(value, key.guards)
        if key.origin is not None and (any(g.capability for g in key.guards) or self._command_line_choice(key.origin)):
            # chosen where the key is: by a capability check (`"bfloat16" if
            # is_bf16_supported() else "float16"`) or on the command line
            value = replace_fields(value, origin=key.origin)
        return value

    def _command_line_choice(self, origin) -> bool:
        """Whether ``origin`` lies inside an argparse option but outside its ``default=``."""
        for options in self.ix.arg_options.values():
            for option in options:
                span = self.ix.span(option.call)
                if span.start <= origin.start and origin.end <= span.end:
                    default = keyword(option.call, "default")
                    if default is None:
                        return True
                    inside = self.ix.span(default.value)
                    return not (inside.start <= origin.start and origin.end <= inside.end)
        return False


def compared_literals(test: ast.expr) -> Optional[Tuple[object, ...]]:
    """The literals a condition compares a value with: ``x == "bf16"`` → ``("bf16",)``,
    ``x in ("bf16", "bfloat16")`` → both; None for any other condition."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    op, comparator = test.ops[0], test.comparators[0]
    if isinstance(op, ast.Eq) and _is_string(comparator):
        return (comparator.value,)
    if isinstance(op, ast.In) and isinstance(comparator, (ast.Tuple, ast.List, ast.Set)):
        items = _element_values(comparator)
        if items and all(_is_string(i) for i in items):
            return tuple(i.value for i in items)
    return None


def _other_than(default: ast.expr, compared: Optional[Tuple[object, ...]]) -> bool:
    """Whether an option's literal ``default=`` is none of the values a condition selects:
    ``--dtype`` defaulting to "float16" makes ``args.dtype == "bfloat16"`` an opt-in."""
    return compared is not None and _is_string(default) and default.value not in compared


def tests_absence(test: ast.expr) -> bool:
    """Whether a condition asks if a value was left out: ``x is None``, ``x == None`` (alone or
    joined with ``and``/``or``). The branch it guards fills in the code's own default."""
    if isinstance(test, ast.BoolOp):
        return any(tests_absence(v) for v in test.values)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        if isinstance(test.ops[0], (ast.Is, ast.Eq)):
            return any(is_constant(side, None) for side in (test.left, test.comparators[0]))
    return False


def _override(entries: List[KwargSource]) -> List[KwargSource]:
    """Entries with those a later unconditional entry of the same key replaces left out. A
    removal (``d.pop("k")``, ``del d["k"]``) leaves out the entries of its key before it; one
    under a test of its own leaves them where the test fails, or, under several tests, keeps
    them as they are. The test's other branch goes to ``bound_under`` (the versions the entry is
    written for: review 30a's ``kw["eval_strategy"] = kw.pop("evaluation_strategy")`` under a
    signature check) and to ``guards`` (the runs its value reaches the call in: ``if use_bf16:
    kw.pop("fp16"); kw["bf16"] = True`` passes fp16 only where bf16 is off, held-out 41u's F7)."""
    out: List[KwargSource] = []
    for entry in entries:
        if entry.via == REMOVED:
            if not entry.conditional:
                out = [e for e in out if e.name != entry.name]
            elif len(entry.guards) == 1:
                ((test, positive),) = entry.guards
                other = ((test, not positive),)
                out = [replace_fields(e, bound_under=e.bound_under + other, guards=e.guards + other) if e.name == entry.name else e for e in out]
            continue
        if not entry.conditional:
            out = [e for e in out if e.name != entry.name]
        out.append(entry)
    return out


def is_training_arguments(qualname: Optional[str], index: Optional[ModuleIndex] = None) -> bool:
    """``transformers.TrainingArguments``, a TRL training config (from the library table),
    or a class of this module derived from one."""
    seen = set()
    stack = [qualname] if qualname else []
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        if is_library_training_arguments(name):
            return True
        info = index.classes.get(name) if index is not None else None
        if info is not None:
            stack.extend(info.bases)
    return False


def _specified_default(call: ast.Call) -> Optional[ast.expr]:
    """The default a field specifier gives: ``default=``, or pydantic's first argument
    (``Field("float16", description=...)``); None for ``default_factory=`` or a required
    pydantic field (``Field(...)``)."""
    given = keyword(call, "default")
    default = given.value if given is not None else next(iter(positional(call)), None)
    if default is None or (isinstance(default, ast.Constant) and default.value is Ellipsis):
        return None
    return default


def _bool_literal(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, bool)


def _is_parameter_name(node: ast.expr, scope: Scope) -> bool:
    return isinstance(node, ast.Name) and _is_parameter(node, scope)


def _is_parameter(node: ast.Name, scope: Scope) -> bool:
    return _is_parameter_named(node.id, scope)


def _is_parameter_named(name: str, scope: Scope) -> bool:
    owner = scope.lookup_scope(name)
    return owner is not None and name in owner.params


def _on_by_default(name: str, scope: Scope, compared) -> bool:
    """Whether a precision parameter's written default turns it on (``fp16: bool = True``,
    ``precision="bf16"`` where the test compares it with ``"bf16"``)."""
    owner = scope.lookup_scope(name)
    default = owner.params.get(name) if owner is not None else None
    return (
        isinstance(default, ast.Constant) and bool(PRECISION_WORD().search(name))
        and not _falsy_literal(default) and not _other_than(default, compared)
    )


def _falsy_literal(node: ast.expr) -> bool:
    if not isinstance(node, ast.Constant):
        return False
    value = node.value
    if value is None or value is False:
        return True
    if isinstance(value, str):
        return value in ("", "no", "none", "fp32", "float32", "32")
    # an integer written `0` or `32` (not `True`, not a float)
    return type(value) is int and value in (0, 32)


def param_ref(function: Scope, name: str) -> ParamRef:
    """How callers reach parameter ``name`` of ``function`` (``Class(...)`` for ``__init__``):
    one reference per parameter, kept on its scope. Each use of a parameter is a value that
    names it, and a module's facts held a copy for each (transformers: 83,000 of 148,000, #23)."""
    found = function.param_refs.get(name)
    if found is None:
        found = function.param_refs[name] = _param_ref(function, name)
    return found


def _param_ref(function: Scope, name: str) -> ParamRef:
    positional = list(function.positional)
    key = function.qualname
    parent = function.parent
    if parent is not None and parent.kind == "class" and positional and positional[0] in ("self", "cls"):
        positional = positional[1:]
        if key.endswith(".__init__"):
            key = parent.qualname
    index = positional.index(name) if name in positional else None
    return ParamRef(key, name, index, var_keyword=name == function.var_keyword)


def _narrowed(v: Possible, excluded: set) -> Possible:
    """A parameter, config value or returned value in the else-branch of a dtype test keeps
    the exclusion until the join replaces it."""
    if not excluded or v.kind not in SYMBOLIC:
        return v
    return replace_fields(v, excluded=v.excluded | frozenset(excluded))


def _opaque(values: Iterable[Possible]) -> List[Possible]:
    """Parameters and config values inside a larger expression (``not flag``, ``a and b``)
    are not followed to the join: only a value passed on as it is keeps its symbolic value."""
    return [Possible(UNKNOWN) if v.kind in SYMBOLIC else v for v in values]


def _dtype_name(v: Possible) -> Optional[str]:
    if v.kind == DTYPE:
        return v.value
    if v.kind == CONST:
        return dtype_of_string(v.value)
    return None


def _dtype_read(side: ast.expr, index: ModuleIndex, scope: Scope) -> bool:
    """An object's ``.dtype`` (``x.dtype``), or a variable every binding of which reads one
    (``param_dtype = next(model.parameters()).dtype``)."""
    if isinstance(side, ast.Attribute):
        return side.attr == "dtype"
    if not isinstance(side, ast.Name):
        return False
    _, bound = index.bindings_of(side, scope)
    return bool(bound) and all(isinstance(b.value, ast.Attribute) and b.value.attr == "dtype" and b.unpack_index is None for b in bound)


def _reads_a_dtype(node: ast.Compare, index: ModuleIndex, scope: Scope) -> bool:
    """A comparison one side of which is an object's ``.dtype`` (``x.dtype == torch.bfloat16``),
    also through a variable (``param_dtype == torch.float32``)."""
    return any(_dtype_read(s, index, scope) for s in (node.left, *node.comparators))


def _is_param_dtype_check(node: ast.Compare, index: ModuleIndex, scope: Scope) -> bool:
    """``p.dtype == torch.float16`` / ``x.dtype is torch.half`` / ``model.dtype != torch.float16``."""
    sides = [node.left, *node.comparators]
    has_dtype_attr = any(_dtype_read(s, index, scope) for s in sides)
    has_fp16 = any(dtype_of_qualname(index.qualify(s, scope)) == "float16" for s in sides if isinstance(s, (ast.Attribute, ast.Name)))
    return has_dtype_attr and has_fp16


def _consults(v: Possible, kind: str) -> bool:
    if kind == CAPABILITY:
        return v.kind == CAPABILITY or v.capability
    return v.kind == CUDA or v.cuda or v.kind == CAPABILITY or v.capability


def _is_cuda_string(node: ast.expr) -> bool:
    """``"cuda"`` or ``"cuda:0"`` written out."""
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and (node.value == "cuda" or node.value.startswith("cuda:"))


def _names_cuda(expr: ast.Compare, op: ast.cmpop) -> bool:
    """``x == "cuda"`` (either side), ``"cuda" in x``: a test that a device is a CUDA GPU."""
    if isinstance(op, (ast.Eq, ast.Is)):
        return _is_cuda_string(expr.left) or _is_cuda_string(expr.comparators[0])
    return isinstance(op, ast.In) and _is_cuda_string(expr.left)


def _starts_with_cuda(call: ast.Call) -> bool:
    """``device.startswith("cuda")`` (``str(device)``, ``args.device``): a test that a device
    string is a CUDA GPU's."""
    func = call.func
    return (
        isinstance(func, ast.Attribute) and func.attr == "startswith" and len(call.args) == 1 and not call.keywords
        and isinstance(call.args[0], ast.Constant) and call.args[0].value == "cuda"
    )


def _cond(text: str, parts: Iterable[Possible]) -> Possible:
    parts = list(parts)
    if all(p.kind == UNKNOWN for p in parts):
        return Possible(UNKNOWN)
    return Possible(
        COND,
        None,
        text=text,
        capability=any(_consults(p, CAPABILITY) for p in parts),
        cuda=any(_consults(p, CUDA) for p in parts),
    )


def _negate(v: Possible, text: str) -> Possible:
    if v.kind == CONST:
        return _const(not v.value, v.guards)
    if v.kind == UNKNOWN:
        return v
    # `not x` true: x's test is false (and so is each test x implies alone)
    denied = frozenset((t, not truth) for t, truth in v.implies() if len(v.implies()) == 1 or t == (v.text or v.kind))
    terms = frozenset({(text, True)}) | denied
    return Possible(
        COND, None, v.guards, text=text, capability=_consults(v, CAPABILITY), cuda=_consults(v, CUDA), terms=terms
    )


def _with_guard(v: Possible, guard: Guard) -> Possible:
    return replace_fields(v, guards=v.guards + (guard,))


def _with_guards(v: Possible, guards: Tuple[Guard, ...]) -> Possible:
    if not guards:
        return v
    return replace_fields(v, guards=guards + v.guards)


def _empty_dict(value: Optional[ast.expr]) -> bool:
    """``{}`` or ``dict()``: a dict with no entries yet; or the idiom of a ``None`` default,
    ``{} if kwargs is None else kwargs`` (``kwargs or {}``): what the caller gave, else empty:
    what is put in it after is there either way."""
    if isinstance(value, ast.IfExp):
        branches = (value.body, value.orelse)
        given = [b for b in branches if isinstance(b, ast.Name)]
        return len(given) == 1 and any(_empty_dict(b) for b in branches) and _tests_none(value.test, given[0].id)
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) and len(value.values) == 2:
        first, second = value.values
        return isinstance(first, ast.Name) and _empty_dict(second)
    return (isinstance(value, ast.Dict) and not value.keys) or (
        isinstance(value, ast.Call) and dotted(value.func) == "dict" and not value.args and not value.keywords
    )


# Classes whose class-level annotated names are the fields of a generated ``__init__``: pydantic
# models and settings, NamedTuples (by a base); dataclasses and attrs classes (by a decorator:
# ``@dataclass``, ``@attr.s``, ``@attrs.define``, ``@define`` from attrs).
FIELD_BASES = frozenset(
    {"pydantic.BaseModel", "pydantic.main.BaseModel", "pydantic.v1.BaseModel", "pydantic_settings.BaseSettings", "typing.NamedTuple"}
)


def _declares_fields(info, ix: ModuleIndex, scope: Scope) -> bool:
    """Whether a class's literal class-level values are the defaults of its instances' fields:
    a dataclass, an attrs class, a pydantic model (recall 27c: ArcticTraining's
    ``attn_implementation: str = "flash_attention_2"`` of a ``BaseModel``), a NamedTuple."""
    for d in info.node.decorator_list:
        decorator = d.func if isinstance(d, ast.Call) else d
        written = dotted(decorator) or ""
        qualified = ix.qualify(decorator, scope.parent or scope) or written
        if written.endswith("dataclass") or qualified.startswith(("attr.", "attrs.")):
            return True
    return any(base in FIELD_BASES for base in info.bases)


def _small_table(value: Optional[ast.expr]) -> bool:
    """A dict literal of a few string keys whose values are names, attributes or literals
    (``{"bf16": torch.bfloat16, "fp16": torch.float16}``): a choice table, not a registry."""
    return (
        isinstance(value, ast.Dict) and 0 < len(value.keys) <= 16
        and all(isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value.isidentifier() for k in value.keys)
        and all(isinstance(v, (ast.Attribute, ast.Name, ast.Constant)) for v in value.values)
    )


def _tests_none(test: ast.expr, name: str) -> bool:
    """``name is None``, ``name is not None``, ``not name`` or ``name`` itself."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)):
        return is_constant(test.comparators[0], None) and isinstance(test.left, ast.Name) and test.left.id == name
    return isinstance(test, ast.Name) and test.id == name


def _dedupe(values: Iterable[Possible]) -> Values:
    out = []
    seen = set()
    for v in values:
        if v in seen:
            continue
        seen.add(v)
        out.append(v)
        if len(out) >= _MAX_ATOMS:
            break
    return tuple(out)
