"""Facts about names that transformers / TRL removed or renamed (read by MP302, MP304).

Recorded per file, unjudged: calls that receive a keyword named in the migration table
(directly or through ``**dict`` splats), with what the callee is (an import-resolved name,
``super`` inside a class, or a method of a variable and the calls that variable was assigned
from) and, for trainers, the config object passed as ``args=`` (so a keyword can move into
it); attribute reads of table names with what their receiver was built by; imports or
qualified uses of table names; calls of a callable a ``kind = "call"`` row names (``AdamW(...)``
of ``from transformers import AdamW``), with the values they give its silencing keywords; project functions that hand their ``**kwargs`` to a call,
and calls of project functions with table keywords (so a keyword is followed into a helper
module); and the parses of ``HfArgumentParser`` that fill their dataclasses from a JSON/YAML
file (``parser.parse_json_file(json_file=os.path.abspath(sys.argv[1]))``): the file's keys
are keywords of those classes, and which files a parse reads is decided at the join; and the
parses that fill them from the script's command line (``parse_args_into_dataclasses()``): the
options a shipped launch passes are, read at the join. A subclass of ``HfArgumentParser`` that
parses a file itself (``self.parse_yaml_file(os.path.abspath(sys.argv[1]))`` in its own
``parse()``, as the alignment handbook's ``H4ArgumentParser`` does) fills the dataclasses it is
made with, elsewhere (``H4ArgumentParser((ModelArguments, SFTConfig)).parse()``): its parse is
kept with its method (``self_parses``), each call of that method of a parser made with
dataclasses with the class (``parser_uses``), and the join makes the parse of the module that
calls it (``join``). Each use says whether the code expects the failure (a version check around it, a
``try`` that catches it, an ``except`` fallback). Whether the callee really is the library's
class, and whether the targeted version has removed the name, is decided later with the
whole project's classes and the configuration.
"""
from __future__ import annotations

import ast
import dataclasses
from ..._dataclass import dataclass
from typing import Optional, Tuple

from ...diagnostics import Span
from ...knowledge import (
    call_rows, called_names, migrated_names, newer_name_methods, newer_names, removed_keyword_names, valued_names,
)
from ...semantic.names import dotted
from ...semantic.callees import LIBRARIES, assigned_callees, is_super_init, project_callee, star_imported_callee
from ...semantic.evaluate import ARGUMENT_PARSERS, SPLAT, Evaluator
from ...semantic.kinds import instance_classes
from ...semantic.index import FUNCTION_DEFS, ModuleIndex, argument, arguments, call_args, keyword, literal_key, parameters, string_value
from ...semantic.queries import attribute_set_before, binding_scope, calls_on, reaching
from ...semantic.values import CONFIG, CONST, PARAM, RETURN, SYMBOL, SYMBOLIC, Possible
from ...semantic.version_tests import version_tests_of
from .weights import built_conditions  # the tests' reading is the weights sites' own
from .precision import (
    after_open_paren, argument_extents, comma_follows, key_span, key_text, paren_extent, skip_blank, value_text,
)
from .tolerance import CALL_FAILURES, IMPORT_FAILURES, attr_tolerated, call_tolerated, handler_caught, source_tolerated, tolerates

SECTION = "migrations"
EMPTY = {
    "calls": (), "attrs": (), "imports": (), "forwards": (), "project_calls": (), "parses": (), "argv_parses": (),
    "self_parses": (), "parser_uses": (), "fields": (), "called": (), "splats": (), "hydra": (),
}

# `HfArgumentParser`'s methods that read a whole file's keys as the dataclasses' fields (and
# `parse_dict` of what a loader read from a file), with the files each one reads
FILE_PARSES = {"parse_json_file": (".json",), "parse_yaml_file": (".yaml", ".yml"), "parse_dict": (".json", ".yaml", ".yml")}
# `HfArgumentParser`'s methods that read the script's command line (`sys.argv[1:]`, where no
# `args` is given) as the dataclasses' fields, and the position of `return_remaining_strings`
# among their parameters (TRL's `parse_args_and_config` hands the command line on to
# `parse_args_into_dataclasses` with it)
ARGV_PARSES = {"parse_args_into_dataclasses": 1, "parse_args_and_config": 1}
# a handler of these expects `ValueError: Some keys are not used by the HfArgumentParser`
VALUE_FAILURES = frozenset({"ValueError", "Exception", "BaseException", "*", "<handler>"})
# calls that hand a path on as it is (`os.path.abspath(sys.argv[1])`)
_PATH_CALLS = frozenset({
    "os.path.abspath", "os.path.realpath", "os.path.expanduser", "os.path.normpath", "os.fspath",
    "pathlib.Path", "pathlib.PurePath", "str",
})




@dataclass(frozen=True)
class KeywordUse:
    """A keyword the migration table names, where a call receives it (directly, or as a key of
    a dict splatted into the call): what a fix renames or removes."""

    name: str
    key_span: Span  # the name of `name=`, or the string key of a dict entry
    key_text: str
    via: str  # "keyword", "dict-call", "dict-literal"
    value_text: str
    position: Optional[int]  # its index among the call's arguments (direct keywords only)
    # for a name of a row with `quiet_values` or removed `values`: each value the code gives it (a parameter's: what
    # its callers pass, substituted at the join); a value the user passes on the command line
    # (an argparse option's, beside its default) is theirs, not the code's. None: not read
    code_values: Optional[Tuple[Possible, ...]] = None
    # the key is put in its dict only under a check of its own (``if version.parse(
    # transformers.__version__) <= version.parse("4.36"): kw["use_flash_attention_2"] = True``):
    # written for the versions that take it, whatever the call's other keys are
    tolerated: bool = False


@dataclass(frozen=True)
class ConfigTarget:
    """The config object a trainer call passes as ``args=`` (``SFTConfig(...)``), where
    keywords moved out of the trainer call can go."""

    callee: Optional[str]
    keywords: Tuple[str, ...]
    insert_at: int  # offset where a new keyword argument goes
    lead: str  # text before each new argument (", " or a newline and indentation)
    trail: str  # text after each new argument ("," in trailing-comma style)
    same_scope: bool  # built in the scope of the trainer call (a shared config is not)


@dataclass(frozen=True)
class MigrationCall:
    """A call that passes a keyword some transformers or TRL version removed or renamed, with
    what the callee may be: whether it is the library's class is only known at the join, with
    the whole project's classes."""

    callee: Optional[str]  # import-resolved; "super" for super().__init__
    method: Optional[str]  # `x.m(...)`: "m"
    klass: Optional[str]  # enclosing class
    sources: Tuple[str, ...]  # for `x.m(...)`: the calls `x` was assigned from
    span: Span
    uses: Tuple[KeywordUse, ...]
    keywords: Tuple[str, ...]  # every keyword the call receives
    config: Optional[ConfigTarget]
    # each argument's (start, end, end with its comma and the blanks after it)
    arg_spans: Tuple[Tuple[int, int, int], ...] = ()
    tolerated: bool = False  # under a version check, or where a TypeError is caught
    # for `x.m(...)` whose `x` is a class (`cls = KINDS[kind]`, `self.model_cls`, a parameter
    # its callers pass a class for): what `x` may be (``SYMBOL`` atoms, parameters substituted
    # at the join), and `x` as written
    receiver_values: Tuple = ()
    receiver_text: str = ""
    tolerated_if: Tuple[str, ...] = ()  # project helpers in its guards (read at the join)
    # the tests of parameters the call runs under, decided at the join (``_parameter_tests``:
    # ``elif load_in_8bit:`` of a parameter every caller leaves at its default False): a call
    # no configuration reaches is no use of the name
    when: Tuple = ()
    # written for the versions that only warn: a version check, or a fallback in a handler (a
    # `try` whose handler catches the error catches no warning: `torch_dtype=` in one still warns)
    warning_tolerated: bool = False
    # a call of the library that hands a dict on to another (``pipeline(model_kwargs={...})``:
    # its keys are keywords of ``callee``), as the message names it
    through: str = ""
    # `**x` where `x` is a table of a JSON/YAML file the code loads by a literal path
    # (`**cfg["training"]` of `cfg = yaml.safe_load(open("config.yaml"))`): each table's (path
    # as written, keys from the file's top), its keys being keywords of the call, read at the
    # join (section "splats", whose calls have no `uses`)
    splats: Tuple[Tuple[str, Tuple], ...] = ()
    splat_text: str = ""  # the `**x` argument as written
    dropped: Tuple[str, ...] = ()  # keys the code pops or deletes from that table (never passed)
    # `**settings.TRAINING_ARGS`: a name another project module binds (qualified as imported),
    # whose dict's keys (``keyword_tables.py``) are keywords of the call, read at the join
    module_tables: Tuple[str, ...] = ()


@dataclass(frozen=True)
class MigrationAttr:
    """A read of an attribute some version removed (``self.tokenizer`` in a Trainer subclass,
    ``model.config.x``), with what built its receiver, for the join to decide whose it is."""

    name: str
    name_span: Span
    receiver: str  # "self", "name", or "config" (`name.config`, the config of what `name` holds)
    klass: Optional[str]
    sources: Tuple[str, ...]
    receiver_text: str = "self"
    tolerated: bool = False  # under a version / signature / hasattr check, or AttributeError caught
    tolerated_if: Tuple[str, ...] = ()
    # `x.name = value`: a store, which looks nothing up (no AttributeError; the row's
    # `on_store` says what it does). `x.name += 1` and `del x.name` look the name up: not stores
    store: bool = False
    # its receiver was built with `trust_remote_code=` (not certainly False): the hub's own
    # class, which may define the name itself (the row's `hub_may_define`)
    remote: bool = False


@dataclass(frozen=True)
class HydraMain:
    """A Hydra app of a module that builds objects from its configuration: the module's
    ``@hydra.main(config_path=..., config_name=...)`` and its first ``hydra.utils.instantiate``
    (or ``call``). ``instantiate`` builds each config node holding a ``_target_`` (the nodes
    below it too: recursive by default) by calling that class with the node's other keys as
    keywords: a key a library release removed raises its ``TypeError`` there, before anything
    runs (``project/hydra_configs.py`` finds the nodes)."""

    config_path: Optional[str]  # as written, from the module's folder; None where not a literal
    config_name: Optional[str]
    span: Span  # the decorator's call
    built: Span  # the first `instantiate(...)` call
    built_text: str  # how it is called: `instantiate(...)`


@dataclass(frozen=True)
class DeclaredField:
    """A field a class with bases declares (``warmup_ratio: float = 0.05`` in a subclass of
    ``TrainingArguments``) under the name of a keyword some library version removed: the join
    decides whose class it derives from."""

    klass: str
    name: str
    span: Span
    # its default where the code writes a literal (`= 0.05`, `= field(default=0.05)`):
    # what the run goes without (`known`: False where there is none or it is no literal)
    default: object = None
    known: bool = False


@dataclass(frozen=True)
class MigrationImport:
    """An import (or a qualified use) of a name some version removed or moved, and whether the
    code already expects the ImportError."""

    module: str  # `from module import name`; for a module import, the module and name ""
    name: str
    span: Span
    how: str  # "from-import", "import", "qualified"
    tolerated: bool = False  # under a version check, or where an ImportError is caught
    tolerated_if: Tuple[str, ...] = ()


@dataclass(frozen=True)
class CalledUse:
    """A call of a library callable that a ``kind = "call"`` row is about (``AdamW(...)`` with
    ``from transformers import AdamW``, under any alias, or ``transformers.optimization.AdamW(...)``),
    with what it gives the keywords that silence the row's warning."""

    callee: str  # import-resolved (`transformers.AdamW`)
    span: Span  # the callee as written
    # each `unless` keyword the call gives (directly or through a `**dict` it knows): the
    # constants it may be, as Python writes them; () where a value is not a known constant
    given: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    opaque: bool = False  # a `**splat` whose keys are not known: it may give one of them
    tolerated: bool = False  # under a version check, or in a fallback handler
    tolerated_if: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Forward:
    """A project function that hands its ``**kwargs`` to a call (``def make_args(**kw):
    return TrainingArguments(output_dir="o", **kw)``): keywords its callers pass go there."""

    function: str  # the function's qualified name
    own_params: Tuple[str, ...]  # its named parameters (these do not reach **kwargs)
    callee: Optional[str]
    method: Optional[str]
    sources: Tuple[str, ...]
    klass: Optional[str]
    keywords: Tuple[str, ...]  # keywords the inner call passes itself
    span: Span


@dataclass(frozen=True)
class ParsedFile:
    """A parse that fills the dataclasses of an ``HfArgumentParser`` from one JSON/YAML file
    (``parser.parse_json_file(json_file=os.path.abspath(sys.argv[1]))``,
    ``parse_yaml_file("train.yaml")``, ``parse_dict(json.load(open("train.json")))``): every
    key of the file becomes a keyword of one of ``classes`` (``parse_dict`` hands each class
    the keys that are its fields), and a key that none of them has raises
    ``ValueError: Some keys are not used by the HfArgumentParser: [...]`` unless
    ``allow_extra_keys=True``. Which files it reads is known at the join: the paths the code
    names, what the shipped launches pass for ``option`` / ``sys.argv[argv]``."""

    span: Span
    method: str
    classes: Tuple[str, ...]  # the dataclasses it fills, qualified ("" where not known), in order
    suffixes: Tuple[str, ...]  # the files the method reads
    extra_keys: Optional[bool]  # `allow_extra_keys`: False (the default), True, None (not known)
    paths: Tuple[str, ...] = ()  # the files the code names (a literal, an argparse option's default)
    option: str = ""  # the argparse option of the script that names the file (`--train_args_file`)
    argv: Optional[int] = None  # `sys.argv[argv]` names the file (the script's positional argument)
    tolerated: bool = False  # under a version check, or where a ValueError is caught
    tolerated_if: Tuple[str, ...] = ()
    # a parse a parser class makes of itself (`self.parse_yaml_file(...)`): the qualified name of
    # the method it is in (its classes are those the parser is made with, where it is made)
    in_method: str = ""


@dataclass(frozen=True)
class ParserUse:
    """A call of a method of a parser of a project class, made with the dataclasses it fills
    (``H4ArgumentParser((ModelArguments, DataArguments, SFTConfig)).parse()``, directly or
    through a variable bound to it once): at the join, where the class derives from
    ``HfArgumentParser`` and that method parses a file itself, the parse of this module."""

    span: Span
    klass: str  # the parser's class, as this module names it (qualified through its imports)
    method: str  # the method called (`parse`)
    classes: Tuple[str, ...]  # the dataclasses it is made with, qualified, in order
    tolerated: bool = False
    tolerated_if: Tuple[str, ...] = ()


@dataclass(frozen=True)
class ParsedArgs:
    """A parse that fills the dataclasses of an ``HfArgumentParser`` from the script's own
    command line (``parser.parse_args_into_dataclasses()``, TRL's
    ``parser.parse_args_and_config()``, without ``args``): every ``--option`` a launch passes
    the script is a field of one of ``classes``, and an option none of them has (nor the
    parser's own ``add_argument``) raises ``ValueError: Some specified arguments are not used
    by the HfArgumentParser: ['--evaluation_strategy', 'steps']`` unless
    ``return_remaining_strings=True`` (then the words are handed back and the run goes on
    without them). The launches are read at the join (``project/launched_options.py``)."""

    span: Span
    method: str
    classes: Tuple[str, ...]  # the dataclasses it fills, qualified ("" where not known), in order
    remaining: Optional[bool]  # `return_remaining_strings`: False (the default), True, None (not known)
    options: Optional[Tuple[str, ...]] = ()  # what `parser.add_argument(...)` adds; None: not known
    tolerated: bool = False  # under a version check, or where a ValueError is caught
    tolerated_if: Tuple[str, ...] = ()


@dataclass(frozen=True)
class ProjectCall:
    """A call of a project function with table keywords (which may be forwarded)."""

    callee: str  # qualified in this module's namespace
    uses: Tuple[KeywordUse, ...]
    keywords: Tuple[str, ...]


def _helpers(index: ModuleIndex, guards) -> Tuple[str, ...]:
    """Project functions of other modules called in ``guards`` (``if is_at_least("trl",
    "0.12"):``): the join reads whether one of them is a version test."""
    tests = version_tests_of(index)
    return tuple(dict.fromkeys(h.callee for test, positive in guards for h in tests.helper_calls(test, positive)))


def join(module, symbols):
    """Uses under a call of another module's version test (``version_gates`` predicates) are
    tolerated as under any version test; a parse a parser class makes of itself in the method
    this module calls on a parser of that class is this module's (:func:`_made_parses`)."""
    section = module.sections.get(SECTION)
    if not section:
        return module
    made = _made_parses(module, section, symbols)
    if made:
        section = {**section, "parses": (*section.get("parses", ()), *made)}
        module = dataclasses.replace(module, sections={**module.sections, SECTION: section})
    memo = {}

    def is_test(callee: str) -> bool:
        if callee not in memo:
            where, canonical = symbols.resolve(callee, module)
            gates = where.section("version_gates") if where is not None else None
            memo[callee] = bool(gates) and any(name == canonical for name, _ in gates.get("predicates", ()))
        return memo[callee]

    changed = {}
    for key in ("calls", "attrs", "imports", "parses", "argv_parses", "called", "splats"):
        facts = section.get(key, ())
        new = tuple(
            dataclasses.replace(f, tolerated=True)
            if not f.tolerated and getattr(f, "tolerated_if", ()) and any(map(is_test, f.tolerated_if)) else f
            for f in facts
        )
        if any(a is not b for a, b in zip(new, facts)):
            changed[key] = new
    if not changed:
        return module
    return dataclasses.replace(module, sections={**module.sections, SECTION: {**section, **changed}})


def _made_parses(module, section, symbols) -> Tuple[ParsedFile, ...]:
    """For each :class:`ParserUse` of ``module`` whose class derives from ``HfArgumentParser``:
    the parses that the class (or a project class it derives from) makes of itself in the
    method called, as parses of the dataclasses the parser is made with, at the call."""
    out = []
    for use in section.get("parser_uses", ()):
        ancestry = list(symbols.ancestry(use.klass, module))
        if not any(name in ARGUMENT_PARSERS for name, _, _ in ancestry):
            continue
        for name, where, cls in ancestry:
            if cls is None or use.method not in cls.members:
                continue  # the nearest class that defines the method is the one called
            own = where.section(SECTION) if where is not None else None
            found = [p for p in (own.get("self_parses", ()) if own else ()) if p.in_method == f"{name}.{use.method}"]
            out.extend(
                dataclasses.replace(
                    parse, span=use.span, method=f"{use.method}`, through `{parse.method}", classes=use.classes,
                    tolerated=parse.tolerated or use.tolerated, tolerated_if=(*parse.tolerated_if, *use.tolerated_if),
                    in_method="",
                )
                for parse in found
            )
            break
    return tuple(out)


def _config_target(index: ModuleIndex, call: ast.Call, scope) -> Optional[ConfigTarget]:
    given = keyword(call, "args")
    value = given.value if given is not None else None
    same_scope = True
    if isinstance(value, ast.Name):
        owner, bindings = reaching(index, value, scope)
        if len(bindings) != 1 or not isinstance(bindings[0].value, ast.Call):
            return None
        same_scope = owner is scope
        value = bindings[0].value
    if not isinstance(value, ast.Call):
        return None
    site = index.call_of(value)
    args = call_args(value)
    keywords = tuple(a.arg for a in value.keywords if a.arg is not None)
    if not args:
        return ConfigTarget(site.qualname if site else None, keywords, after_open_paren(index, value), "", "", same_scope)
    text = index.text(value)
    multiline = "\n" in text
    last_start, last_end = argument_extents(index, value, args)[-1]
    span = index.span(value)
    trailing = comma_follows(index.source, last_end, index.source.rfind(")", span.start, span.end))
    if multiline:
        line_start = index.source.rfind("\n", 0, last_start) + 1
        indent = index.source[line_start:last_start]
        if not indent.strip() == "":
            indent = " " * 4
        if trailing:
            comma_at = index.source.index(",", last_end)
            return ConfigTarget(site.qualname if site else None, keywords, comma_at + 1, "\n" + indent, ",", same_scope)
        return ConfigTarget(site.qualname if site else None, keywords, last_end, ",\n" + indent, "", same_scope)
    if trailing:
        comma_at = index.source.index(",", last_end)
        return ConfigTarget(site.qualname if site else None, keywords, comma_at + 1, " ", ",", same_scope)
    return ConfigTarget(site.qualname if site else None, keywords, last_end, ", ", "", same_scope)


def _after_comma(source: str, end: int) -> int:
    """Past the blanks, the comma and the blanks (comments included) after an argument ending
    at ``end``: where the next argument, or the call's ``)``, begins."""
    at = skip_blank(source, end)
    if at < len(source) and source[at] == ",":
        at = skip_blank(source, at + 1)
    return at


def _may_take(name: str, site) -> bool:
    """Whether a call may be one that a row of the new name ``name`` is about (see
    :func:`newer_name_methods`): a constructor row, a call of a named class (or
    ``super().__init__``); a method row, a call of that method (``X.from_pretrained``,
    ``model_cls.from_pretrained``, ``load`` bound to ``AutoModel.from_pretrained``). Which
    class it is, a subclass's included, is decided at the join."""
    methods = newer_name_methods()[name]
    if None in methods and (site.qualname is not None or is_super_init(site)):
        return True
    called = (site.method, (site.qualname or "").rpartition(".")[2])
    return any(m is not None and m in called for m in methods)


# Library calls that hand the keys of one dict keyword on to another call as its keywords:
# `pipeline(model_kwargs={...})` loads the model with `<Auto class>.from_pretrained(model,
# **model_kwargs)` where `model` is a name to load (transformers 4.57.1 and 5.24.0
# `pipelines/base.py` `load_model`), not where it is a model already built; sentence-transformers'
# `CrossEncoder(name, model_kwargs={...})` and `SentenceTransformer(name, model_kwargs={...})` load
# theirs with `AutoModel*.from_pretrained(name, **model_kwargs)` (5.7.0's cross_encoder/model.py and
# models/Transformer.py; held-out 39u's M1: `torch_dtype` in a reranker's model_kwargs).
# Each: (the dict keyword, the call it reaches, the model's keyword, the model's position)
HANDED_ON = {
    "transformers.pipeline": ("model_kwargs", "transformers.AutoModel.from_pretrained", "model", 1),
    "transformers.pipelines.pipeline": ("model_kwargs", "transformers.AutoModel.from_pretrained", "model", 1),
    **{
        name: ("model_kwargs", "transformers.AutoModel.from_pretrained", "model_name_or_path", 0)
        for name in (
            "sentence_transformers.CrossEncoder", "sentence_transformers.cross_encoder.CrossEncoder",
            "sentence_transformers.SentenceTransformer", "sentence_transformers.SparseEncoder",
        )
    },
}


def _handed_on(index: ModuleIndex, evaluator: Evaluator, site, wanted, valued):
    """The call a library call's dict keyword reaches (:data:`HANDED_ON`), with the dict's
    table keys as its keyword uses; None where there is none."""
    spec = HANDED_ON.get(site.qualname or "")
    if spec is None:
        return None
    name, callee, model_keyword, position = spec
    given = keyword(site.node, name)
    if given is None or evaluator.dead(site.guards, site.scope):
        return None
    model = keyword(site.node, model_keyword)
    model = model.value if model is not None else (site.node.args[position] if len(site.node.args) > position else None)
    if isinstance(model, ast.Call) or (
        isinstance(model, ast.Name) and any(c.endswith((".from_pretrained", "get_peft_model")) for c in assigned_callees(index, model, site.scope))
    ):
        return None  # a model built already: nothing is loaded with the dict
    entries = evaluator.dict_entries(given.value, site.scope)
    uses = tuple(
        KeywordUse(
            e.name, key_span(index, e.key), key_text(index, e.key), e.via, value_text(index, e.value, e.key), None,
            _code_values(evaluator, e.value, site.scope) if e.name in valued else None,
        )
        for e in entries if e.name in wanted
    )
    if not uses:
        return None
    return MigrationCall(
        callee, None, site.klass, (), index.span(site.node), uses, tuple(sorted({e.name for e in entries})), None, (),
        tolerates(index, site.guards, site.caught, CALL_FAILURES), (), "", _helpers(index, site.guards), _parameter_tests(evaluator, site),
        warning_tolerated=_warning_tolerated(index, site),
        through=f"{site.qualname.rsplit('.', 1)[-1]}({name}=...)",
    )


def _calls(index: ModuleIndex, evaluator: Evaluator):
    old = migrated_names("keyword")
    wanted = old | newer_names()  # old names, and new ones older versions lack
    valued = valued_names()
    out = []
    for site in index.calls:
        handed = _handed_on(index, evaluator, site, old, valued)
        if handed is not None:
            out.append(handed)
        every = evaluator.kwarg_sources(site.node, site.scope)
        # a name that is only new (`dtype`) where the call can be one of its rows' methods: not
        # every `torch.zeros(..., dtype=)` of a file
        sources = [s for s in every if s.name in wanted and (s.name in old or _may_take(s.name, site))]
        if not sources or evaluator.dead(site.guards, site.scope):
            continue
        callee, receivers, named = _callee_of(index, evaluator, site)
        if callee is None and not receivers and not named:
            continue
        args = call_args(site.node)
        caught = handler_caught(index, site, {s.name for s in sources if s.via == "keyword"})
        uses = []
        for s in sources:
            position = next(i for i, a in enumerate(args) if a is s.arg) if s.via == "keyword" else None
            uses.append(
                KeywordUse(
                    s.name, key_span(index, s.key), key_text(index, s.key), s.via, value_text(index, s.value, s.key), position,
                    _code_values(evaluator, s.value, site.scope) if s.name in valued else None,
                    tolerated=source_tolerated(index, s, CALL_FAILURES),
                )
            )
        arg_spans = tuple(
            (start, end, _after_comma(index.source, end)) for start, end in argument_extents(index, site.node, args)
        )
        out.append(
            MigrationCall(
                callee, site.method, site.klass, receivers, index.span(site.node), tuple(uses),
                tuple(sorted({s.name for s in every})), _config_target(index, site.node, site.scope),
                arg_spans, call_tolerated(index, site, sources, CALL_FAILURES, caught),
                named, _receiver_text(index, site) if named else "", _helpers(index, site.guards),
                _parameter_tests(evaluator, site),
                warning_tolerated=_warning_tolerated(index, site, caught),
            )
        )
    return tuple(out)


def _warning_tolerated(index: ModuleIndex, site, caught=None) -> bool:
    """Whether a call is written for the versions where a name only warns: under a version
    check, or a fallback in a handler (a ``try`` whose handler catches the error catches no
    warning: ``MigrationCall.warning_tolerated``); ``caught``: what is caught around it, where
    not ``site.caught`` (a retry of the try's own call is no fallback: ``handler_caught``)."""
    caught = site.caught if caught is None else caught
    return tolerates(index, site.guards, tuple(c for c in caught if c == "<handler>"), CALL_FAILURES)


def _callee_of(index: ModuleIndex, evaluator: Evaluator, site):
    """What a call may run, as :class:`MigrationCall` records it: ``(callee, receivers,
    receiver classes)``, its callee ``"super"`` for ``super().__init__``; all empty where
    nothing is known."""
    # `from utils import *` then `MyTrainer(...)`: the name the star import binds
    callee, receivers = site.qualname or star_imported_callee(index, site), ()
    if is_super_init(site):
        callee = "super"
    elif callee is None and site.method and isinstance(site.receiver, ast.Name):
        receivers = assigned_callees(index, site.receiver, site.scope)
    named: Tuple = ()
    if callee is None and not receivers and site.method and site.receiver is not None:
        named = _receiver_classes(evaluator, site)
    return callee, receivers, named


# the files whose tables a splat's keys are read from (TOML keys have no place the finding could point at yet)
_SPLAT_FILES = (".json", ".yaml", ".yml")


def _splats(index: ModuleIndex, evaluator: Evaluator) -> Tuple[MigrationCall, ...]:
    """The calls given ``**x`` where ``x`` is a table of a JSON/YAML file the code loads by a
    literal path (``TrainingArguments(**cfg["training"])``, ``cfg.get("training")``, OmegaConf's
    ``cfg.training``, ``OmegaConf.to_container(...)``, through variables): the table's keys are
    the call's keywords, read at the join (:attr:`MigrationCall.splats`). A table the code
    drops a key from by a name it computes (``for k in unused: cfg.pop(k)``) is not known, nor
    is a copy it builds itself (``{k: v for k, v in cfg.items() if ...}``): no fact."""
    out = []
    dropped_from = None
    for site in index.calls:
        stars = [kw for kw in site.node.keywords if kw.arg is None]
        if not stars or evaluator.dead(site.guards, site.scope):
            continue
        refs, named = [], []
        for kw in stars:
            for v in evaluator.values(kw.value, site.scope):
                ref = v.value
                if v.kind == CONFIG and not ref.choice and isinstance(ref.path, str) and ref.path.lower().endswith(_SPLAT_FILES):
                    refs.append((kw, (ref.path, tuple(ref.keys))))
                elif v.kind == RETURN and ref.args is None and ref.bound and all(isinstance(k, str) for k in ref.keys):
                    named.append((kw, ".".join([ref.callee, *ref.keys])))  # another module's name
        if not refs and not named:
            continue
        callee, receivers, classes = _callee_of(index, evaluator, site)
        if callee is None and not receivers and not classes:
            continue
        if dropped_from is None:
            dropped_from = _dropped_keys(index, evaluator)
        tables = tuple(dict.fromkeys(t for _, t in refs))
        if any(dropped_from.get(t, ()) is None for t in tables):
            continue  # a key dropped by a name not known: which keys are left is not known
        dropped = tuple(dict.fromkeys(k for t in tables for k in dropped_from.get(t, ())))
        given = tuple(sorted({s.name for s in evaluator.kwarg_sources(site.node, site.scope) if s.name != SPLAT}))
        text = " ".join(dict.fromkeys(f"**{index.text(kw.value)}" for kw, _ in (*refs, *named)))
        out.append(
            MigrationCall(
                callee, site.method, site.klass, receivers, index.span(site.node), (), given, None, (),
                tolerates(index, site.guards, site.caught, CALL_FAILURES),
                classes, _receiver_text(index, site) if classes else "", _helpers(index, site.guards),
                _parameter_tests(evaluator, site),
                warning_tolerated=_warning_tolerated(index, site),
                splats=tables, splat_text=text, dropped=dropped,
                module_tables=tuple(dict.fromkeys(q for _, q in named)),
            )
        )
    return tuple(out)


def _dropped_keys(index: ModuleIndex, evaluator: Evaluator) -> dict:
    """For each table of a config file (``(path, keys)``), the keys the code removes from it
    anywhere in the module (``cfg["training"].pop("evaluation_strategy", None)``, ``del
    train_cfg["evaluation_strategy"]``, on the table or on a copy of it); None for a table it
    removes a key from whose name it computes."""
    out: dict = {}

    def note(receiver, key: Optional[str], scope) -> None:
        for v in evaluator.values(receiver, scope):
            if v.kind == CONFIG:
                table = (v.value.path, tuple(v.value.keys))
                if key is None:
                    out[table] = None
                elif out.get(table, ()) is not None:
                    out[table] = (*out.get(table, ()), key)

    for site in index.calls:
        if site.method in ("pop", "popitem") and site.receiver is not None:
            args = [a for a in arguments(site.node) if a.keyword is None]
            key = string_value(args[0].value) if args and site.method == "pop" and not args[0].star else None
            note(site.receiver, key, site.scope)
    for node in ast.walk(index.module):
        if isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Subscript):
                    note(target.value, literal_key(target), index.scope_of(node))
    return out


def _parameter_tests(evaluator: Evaluator, site):
    """:attr:`MigrationCall.when`: the tests of parameters alone that the call runs under, which
    the join reads with what the callers pass (not a parsed dataclass's field, whose default
    the user's command line may replace: ``--model_name_or_path``)."""
    return tuple(
        test for test in built_conditions(evaluator, site.guards, site.scope)
        if test[0] and all(v.kind == PARAM or v.default_of is not None for v in test[0])  # (and its default)
    )


def _receiver_text(index: ModuleIndex, site) -> str:
    """The receiver of ``x.m(...)`` as written, with its own parentheses."""
    span = index.span(site.receiver)
    start, end = paren_extent(index.source, span.start, span.end, index.span(site.node.func).start)
    return index.source[start:end]


def _receiver_classes(evaluator: Evaluator, site) -> Tuple:
    """What the receiver of ``x.m(...)`` may be where it names a class: the evaluator's
    ``SYMBOL`` atoms (and parameters, known at the join); () where nothing names one."""
    values = evaluator.symbols(site.receiver, site.scope)
    if any(v.kind in (SYMBOL, *SYMBOLIC) for v in values):
        return tuple(values)
    return ()


def _forwards(index: ModuleIndex):
    out = []
    for site in index.calls:
        scope = site.scope.code_scope()
        node = scope.node
        if scope.kind != "function" or not isinstance(node, FUNCTION_DEFS):
            continue
        star = node.args.kwarg
        if star is None:
            continue
        name = star.arg
        if not any(a.arg is None and isinstance(a.value, ast.Name) and a.value.id == name for a in site.node.keywords):
            continue
        receivers = ()
        if site.qualname is None and site.method and isinstance(site.receiver, ast.Name):
            receivers = assigned_callees(index, site.receiver, site.scope)
        if site.qualname is None and not receivers:
            continue
        own = tuple(p.name for p in parameters(node) if p.kind in ("posonly", "normal", "kwonly"))
        keywords = tuple(a.arg for a in site.node.keywords if a.arg is not None)
        out.append(
            Forward(scope.qualname, own, site.qualname, site.method, receivers, site.klass, keywords, index.span(site.node))
        )
    return tuple(out)


def _code_values(evaluator: Evaluator, value, scope) -> Tuple[Possible, ...]:
    """:attr:`KeywordUse.code_values` of one keyword's value: its values, less those a user
    passes on the command line (they are theirs to choose). A parameter's are its callers'
    arguments, and its default where a call leaves it: the join substitutes them (a subclass
    that forwards ``beta=beta`` from its own ``beta=0.1``)."""
    return tuple(v for v in evaluator.values(value, scope) if not any(g.on_command_line for g in v.guards))


def _project_calls(index: ModuleIndex, evaluator: Evaluator):
    wanted = migrated_names("keyword")
    out = []
    for site in index.calls:
        keywords = [a for a in site.node.keywords if a.arg is not None]
        if not any(a.arg in wanted for a in keywords):
            continue
        callee = project_callee(index, site)
        if callee is None:
            continue
        args = call_args(site.node)
        uses = tuple(
            KeywordUse(a.arg, key_span(index, a), key_text(index, a), "keyword", value_text(index, a.value, a), i)
            for i, a in enumerate(args)
            if isinstance(a, ast.keyword) and a.arg is not None and a.arg in wanted
        )
        out.append(ProjectCall(callee, uses, tuple(a.arg for a in keywords)))
    return tuple(out)


def _aug_targets(index: ModuleIndex) -> frozenset:
    """The ids of ``x.a += v`` targets: a Store context that reads the attribute first (the
    index lists every augmented assignment, ``index.inplace_updates``)."""
    return frozenset(id(update.node.target) for update in index.inplace_updates)


def _remote(index: ModuleIndex, evaluator: Evaluator, name: ast.Name, scope) -> bool:
    """Whether a call whose result reaches ``name`` passes ``trust_remote_code=`` with a value
    that is not certainly false (``AutoConfig.from_pretrained(p, trust_remote_code=True)``):
    what it builds may be the hub's own class."""
    _, reached = reaching(index, name, scope)
    for assignment in reached:
        value = assignment.value
        if not isinstance(value, ast.Call):
            continue
        given = keyword(value, "trust_remote_code")
        if given is not None and _literal_bool(evaluator, given.value, scope) is not False:
            return True
    return False


def _attrs(index: ModuleIndex, evaluator: Evaluator):
    wanted = migrated_names("attribute")
    augmented = None
    out = []
    for use in index.attr_uses:
        if use.attr not in wanted or evaluator.dead(use.guards, use.scope):
            continue
        store = isinstance(use.node.ctx, ast.Store)
        if store:
            augmented = _aug_targets(index) if augmented is None else augmented
            store = id(use.node) not in augmented
        elif attribute_set_before(index, use):
            continue  # `model.language_model = llm` above: the read returns what was set (review 26a)
        if isinstance(use.base, ast.Name) and use.base.id == "self":
            out.append(MigrationAttr(use.attr, index.name_span(use.node), "self", use.klass, (), "self", attr_tolerated(index, use), _helpers(index, use.guards), store))
            continue
        if (
            isinstance(use.base, ast.Attribute)
            and use.base.attr == "config"
            and isinstance(use.base.value, ast.Name)
        ):  # `model.config.max_length`: the config of a model a library call built
            sources = assigned_callees(index, use.base.value, use.scope)
            if sources:
                text = f"{use.base.value.id}.config"
                remote = _remote(index, evaluator, use.base.value, use.scope)
                out.append(MigrationAttr(use.attr, index.name_span(use.node), "config", use.klass, sources, text, attr_tolerated(index, use), _helpers(index, use.guards), store, remote))
                continue
        # what the receiver is an instance of, from how it is made (the calls a name was
        # assigned from; an annotation, a parser's dataclass, a library object's attribute,
        # `self.x`: semantic/kinds.py)
        sources = assigned_callees(index, use.base, use.scope) if isinstance(use.base, ast.Name) else ()
        remote = bool(sources) and _remote(index, evaluator, use.base, use.scope)
        sources = tuple(dict.fromkeys((*sources, *instance_classes(index, use.base, use.scope, use.klass))))
        if sources:
            text = use.base.id if isinstance(use.base, ast.Name) else index.text(use.base)
            out.append(MigrationAttr(use.attr, index.name_span(use.node), "name", use.klass, sources, text, attr_tolerated(index, use), _helpers(index, use.guards), store, remote))
    return tuple(out)


def _imports(index: ModuleIndex):
    wanted = migrated_names("import")
    out = []
    for statement in index.import_statements:
        guards, caught = index.import_context.get(id(statement), ((), ()))
        tolerated = tolerates(index, guards, caught, IMPORT_FAILURES)
        pending = _helpers(index, guards)
        if isinstance(statement, ast.ImportFrom):
            if statement.names[0].name == "*" or statement.level:
                continue
            module = statement.module or ""
            if module == "transformers" and any(a.name == "deepspeed" for a in statement.names):
                alias = next(a for a in statement.names if a.name == "deepspeed")
                out.append(MigrationImport("transformers.deepspeed", "", index.name_span(alias), "from-import", tolerated, pending))
            if module == "transformers.deepspeed":
                out.append(MigrationImport(module, "", index.name_span(statement), "import", tolerated, pending))
            for alias in statement.names:
                name = alias.name
                if name in wanted:
                    out.append(MigrationImport(module or "", name, index.name_span(alias), "from-import", tolerated, pending))
        else:
            for alias in statement.names:
                name = alias.name
                if name == "transformers.deepspeed" or name.startswith("transformers.deepspeed."):
                    out.append(MigrationImport("transformers.deepspeed", "", index.name_span(alias), "import", tolerated, pending))
    for site in index.calls:  # `transformers.AdamW(...)`
        q = site.qualname or ""
        module, _, name = q.rpartition(".")
        if name in wanted and isinstance(site.node.func, ast.Attribute):
            tolerated = tolerates(index, site.guards, site.caught, IMPORT_FAILURES)
            out.append(MigrationImport(module, name, index.span(site.node.func), "qualified", tolerated, _helpers(index, site.guards)))
    for use in index.attr_uses:  # `transformers.TRANSFORMERS_CACHE`
        if use.attr not in wanted or not isinstance(use.base, (ast.Name, ast.Attribute)):
            continue
        q = index.qualify(use.node, use.scope) or ""
        module, _, name = q.rpartition(".")
        if name == use.attr and module and index.qualify(use.base, use.scope) == module:
            if any(i.span == index.span(use.node) for i in out):
                continue
            out.append(MigrationImport(module, name, index.span(use.node), "qualified"))
    return tuple(out)


def _called(index: ModuleIndex, evaluator: Evaluator) -> Tuple[CalledUse, ...]:
    """The calls whose callee resolves (through imports and aliases) to a call row's callable."""
    short = called_names()
    rows = call_rows()
    out = []
    for site in index.calls:
        q = site.qualname
        if not q or q.rpartition(".")[2] not in short:
            continue
        hits = [row for row in rows if row.matches_owner(q)]
        if not hits or evaluator.dead(site.guards, site.scope):
            continue
        sources = evaluator.kwarg_sources(site.node, site.scope)
        # a `*args` or a `**splat` of which no key is known (each splat asked alone) may give
        # the silencing keyword; a config table's is read at the join, not here
        opaque = any(isinstance(a, ast.Starred) for a in site.node.args) or any(
            kw.arg is None and not [
                s for s in evaluator.kwarg_sources(ast.Call(site.node.func, [], [kw]), site.scope) if s.via != "config-splat"
            ]
            for kw in site.node.keywords
        )
        given = []
        for name in dict.fromkeys(k for row in hits for k, _ in row.unless):
            values = [v for s in sources if s.name == name for v in evaluator.source_values(s, site.scope)]
            if not any(s.name == name for s in sources):
                continue
            known = bool(values) and all(v.kind == CONST for v in values)
            given.append((name, tuple(dict.fromkeys(repr(v.value) for v in values)) if known else ()))
        out.append(CalledUse(
            q, index.span(site.node.func), tuple(given), opaque,
            _warning_tolerated(index, site),
            _helpers(index, site.guards),
        ))
    return tuple(out)


def _parse_calls(index: ModuleIndex, evaluator: Evaluator, table: dict):
    """The calls of a method in ``table`` (a parse of HfArgumentParser) that fill dataclasses and
    may run: ``(site, table's entry, the classes, keyword arguments by name, positional ones)``."""
    for site in index.calls:
        entry = table.get(site.method or "")
        if entry is None or evaluator.dead(site.guards, site.scope):
            continue
        classes = evaluator.parsed_classes(site.node, site.scope)
        if classes:
            named = {kw.arg: kw.value for kw in site.node.keywords if kw.arg is not None}
            given = [a.value for a in arguments(site.node) if a.keyword is None]
            yield site, entry, classes, named, given


def _parses(index: ModuleIndex, evaluator: Evaluator):
    return _file_parses(index, evaluator, _parse_calls(index, evaluator, FILE_PARSES))


def _self_parses(index: ModuleIndex, evaluator: Evaluator):
    """The file parses a parser class makes of itself in its methods (``self.parse_yaml_file(
    os.path.abspath(sys.argv[1]))`` in a class whose bases include ``HfArgumentParser``, or a
    project class the join follows), each with its method; the classes it fills are not known
    here."""
    calls = []
    for site in index.calls:
        suffixes = FILE_PARSES.get(site.method or "")
        receiver = site.receiver
        if suffixes is None or site.method == "parse_dict" or site.klass is None or site.klass not in index.classes:
            continue
        if not (isinstance(receiver, ast.Name) and receiver.id == "self") or evaluator.dead(site.guards, site.scope):
            continue
        named = {kw.arg: kw.value for kw in site.node.keywords if kw.arg is not None}
        given = [a.value for a in arguments(site.node) if a.keyword is None]
        calls.append((site, suffixes, (), named, given))
    return tuple(
        dataclasses.replace(parse, in_method=site.scope.code_scope().qualname)
        for parse, site in zip(_file_parses(index, evaluator, calls, keep_all=True), [c[0] for c in calls])
        if parse is not None
    )


def _parser_uses(index: ModuleIndex, evaluator: Evaluator):
    """The calls of a method of a parser made, of a project class, with dataclasses
    (:class:`ParserUse`): the parsers first (a call of a project class given a class or a
    tuple of classes, as ``HfArgumentParser`` is), then the methods called on each."""
    out = []
    for made in index.calls:
        klass = made.qualname
        if not klass or klass in ARGUMENT_PARSERS or klass.split(".")[0] in LIBRARIES or not made.node.args:
            continue
        classes = evaluator.parser_classes(made.node)
        if not classes or not all(isinstance(c, (ast.Name, ast.Attribute)) for c in classes):
            continue
        # classes, each a name the module imports or defines (`Net(config)` hands a value over)
        qualified = tuple(index.qualify(c, made.scope) or "" for c in classes)
        if not all(qualified):
            continue
        for site in calls_on(index, made):
            if site.method in PARSE_METHODS_OF_LIBRARY:
                continue
            out.append(
                ParserUse(
                    index.span(site.node), klass, site.method, qualified,
                    tolerates(index, site.guards, site.caught, VALUE_FAILURES), _helpers(index, site.guards),
                )
            )
    return tuple(out)


# the library's own parse methods: a call of one on a parser is a parse this module records itself
PARSE_METHODS_OF_LIBRARY = frozenset({*FILE_PARSES, "parse_args_into_dataclasses", "parse_args", "parse_known_args"})


def _file_parses(index: ModuleIndex, evaluator: Evaluator, calls, keep_all: bool = False):
    """:class:`ParsedFile` of each parse call (``(site, suffixes, classes, keywords, positional
    arguments)``) that names its file somehow; with ``keep_all``, None in the place of the
    others (the caller pairs them with its calls)."""
    out = []
    for site, suffixes, classes, named, given in calls:
        node, scope = site.node, site.scope
        arg = given[0] if given else named.get("args" if site.method == "parse_dict" else site.method[6:-5] + "_file")
        if arg is None:
            if keep_all:
                out.append(None)
            continue
        paths: Tuple[str, ...] = ()
        option, argv = "", None
        if site.method == "parse_dict":  # `parse_dict(yaml.safe_load(open("train.yaml")))`
            paths = tuple(dict.fromkeys(
                v.value.path for v in evaluator.values(arg, scope)
                if v.kind == CONFIG and not v.value.keys and v.value.path.lower().endswith(suffixes)
            ))
        else:
            kind, _, found = evaluator.parse_source(node, scope)
            paths = tuple(p for p in found if p.lower().endswith(suffixes)) if kind == "file" else ()
            option = evaluator.parse_option(arg, scope)
            argv = _argv_index(index, arg, scope)
        if not paths and not option and argv is None:
            if keep_all:
                out.append(None)
            continue
        extra = given[1] if len(given) > 1 else named.get("allow_extra_keys")
        out.append(
            ParsedFile(
                index.span(node), site.method, tuple(index.qualify(c, scope) or "" for c in classes), suffixes,
                _literal_bool(evaluator, extra, scope), paths, option, argv,
                tolerates(index, site.guards, site.caught, VALUE_FAILURES), _helpers(index, site.guards),
            )
        )
    return tuple(out)


def _command_line_parses(index: ModuleIndex, evaluator: Evaluator, table: dict):
    """The parse calls of ``table`` that read the script's own command line (no ``args``, or
    ``sys.argv[1:]``), as :func:`_parse_calls` gives them."""
    for site, position, classes, named, given in _parse_calls(index, evaluator, table):
        if len(given) != len(site.node.args):
            continue  # `*args`: not known
        args = given[0] if given else named.get("args")
        if args is not None and not _reads_argv(index, evaluator, args, site.scope):
            continue  # a list of its own (`parse_args_into_dataclasses(args=["--bf16"])`)
        yield site, position, classes, named, given


def _argv_parses(index: ModuleIndex, evaluator: Evaluator):
    out = []
    for site, position, classes, named, given in _command_line_parses(index, evaluator, ARGV_PARSES):
        node, scope = site.node, site.scope
        remaining = given[position] if len(given) > position else named.get("return_remaining_strings")
        out.append(
            ParsedArgs(
                index.span(node), site.method, tuple(index.qualify(c, scope) or "" for c in classes),
                _literal_bool(evaluator, remaining, scope), _added_options(index, site),
                tolerates(index, site.guards, site.caught, VALUE_FAILURES), _helpers(index, site.guards),
            )
        )
    return tuple(out)


def _config_parses(index: ModuleIndex, evaluator: Evaluator):
    """TRL's ``parser.parse_args_and_config()`` reading the YAML file its command line names
    with ``--config`` (trl 1.16 ``scripts/utils.py``): each key becomes the default of the field
    of that name, and a key no dataclass of the parser has is handed back and raises
    ``ValueError: Unknown arguments from config file: ['--key', 'value']. ...`` unless
    ``return_remaining_strings=True`` or ``fail_with_unknown_args=False`` (then it is dropped).
    The file is the one a shipped launch passes as ``--config`` (``project/parsed_files.py``)."""
    out = []
    for site, _, classes, named, given in _command_line_parses(index, evaluator, {"parse_args_and_config": 1}):
        node, scope = site.node, site.scope
        remaining = given[1] if len(given) > 1 else named.get("return_remaining_strings")
        failing = given[2] if len(given) > 2 else named.get("fail_with_unknown_args")
        kept = False if remaining is None else _literal_bool(evaluator, remaining, scope)  # None: not known
        fails = True if failing is None else _literal_bool(evaluator, failing, scope)
        if kept or fails is False:
            extra = True  # the unknown keys are handed back, or dropped
        elif kept is None or fails is None:
            extra = None
        else:
            extra = False
        out.append(
            ParsedFile(
                index.span(node), site.method, tuple(index.qualify(c, scope) or "" for c in classes), (".yaml", ".yml"),
                extra, (), "config", None,
                tolerates(index, site.guards, site.caught, VALUE_FAILURES), _helpers(index, site.guards),
            )
        )
    return tuple(out)


def _reads_argv(index: ModuleIndex, evaluator: Evaluator, expr, scope) -> bool:
    """Whether ``args=expr`` is the script's command line as the default reads it: None, or
    ``sys.argv[1:]``."""
    if isinstance(expr, ast.Constant) and expr.value is None:
        return True
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Slice):
        part = expr.slice
        return (
            index.qualify(expr.value, scope) == "sys.argv" and part.upper is None and part.step is None
            and isinstance(part.lower, ast.Constant) and part.lower.value == 1
        )
    return False


def _added_options(index: ModuleIndex, site) -> Optional[Tuple[str, ...]]:
    """The option strings the code adds to the parser ``site`` parses with
    (``parser.add_argument("--local_rank", type=int)``, on the variable it is bound to in that
    scope); None where one is not a literal (any option may be added)."""
    receiver = site.receiver
    if not isinstance(receiver, ast.Name):
        return ()
    home = binding_scope(receiver.id, site.scope)
    out = []
    for other in index.calls:
        if other.method not in ("add_argument", "add_argument_group", "add_mutually_exclusive_group", "add_subparsers"):
            continue
        named = other.receiver
        if not (isinstance(named, ast.Name) and named.id == receiver.id and binding_scope(named.id, other.scope) is home):
            continue
        if other.method != "add_argument":
            return None  # options added through a group or sub-parsers: not followed
        for arg in other.node.args:
            text = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None
            if text is None:
                return None
            out.append(text)
    return tuple(dict.fromkeys(out))


def _literal_bool(evaluator: Evaluator, expr, scope) -> Optional[bool]:
    """False where ``expr`` is absent (the default) or certainly falsy, True where certainly
    true, None where not known."""
    if expr is None:
        return False
    values = evaluator.values(expr, scope)
    if values and all(v.kind == CONST for v in values):
        truths = {bool(v.value) for v in values}
        if len(truths) == 1:
            return truths.pop()
    return None


def _argv_index(index: ModuleIndex, expr, scope, depth: int = 0) -> Optional[int]:
    """N where ``expr`` is the script's argument ``sys.argv[N]`` (N != 0; -1 for the last), as
    it is or through calls that keep a path (``os.path.abspath(sys.argv[1])``,
    ``Path(sys.argv[1]).resolve()``) and variables assigned it once."""
    if expr is None or depth > 6:
        return None
    if isinstance(expr, ast.Call):
        func = expr.func
        qual = index.qualify(func, scope) or (func.id if isinstance(func, ast.Name) else None)
        args = [a for a in expr.args if not isinstance(a, ast.Starred)]
        if qual in _PATH_CALLS and len(args) == 1 and not expr.keywords:
            return _argv_index(index, args[0], scope, depth + 1)
        if isinstance(func, ast.Attribute) and func.attr in ("resolve", "absolute", "expanduser") and not args:
            return _argv_index(index, func.value, scope, depth + 1)
        return None
    if isinstance(expr, ast.Subscript):
        if index.qualify(expr.value, scope) != "sys.argv":
            return None
        key = expr.slice
        if isinstance(key, ast.UnaryOp) and isinstance(key.op, ast.USub) and isinstance(key.operand, ast.Constant):
            return -key.operand.value if key.operand.value == 1 else None
        if isinstance(key, ast.Constant) and isinstance(key.value, int) and not isinstance(key.value, bool) and key.value > 0:
            return key.value
        return None
    if isinstance(expr, ast.Name):
        owner, bound = reaching(index, expr, scope)
        if len(bound) == 1 and bound[0].value is not None and bound[0].unpack_index is None:
            return _argv_index(index, bound[0].value, owner or scope, depth + 1)
    return None


def extract(index: ModuleIndex, evaluator: Evaluator):
    return {
        "calls": _calls(index, evaluator),
        "attrs": _attrs(index, evaluator),
        "imports": _imports(index),
        "forwards": _forwards(index),
        "project_calls": _project_calls(index, evaluator),
        "parses": _parses(index, evaluator) + _config_parses(index, evaluator),
        "argv_parses": _argv_parses(index, evaluator),
        "self_parses": _self_parses(index, evaluator),
        "parser_uses": _parser_uses(index, evaluator),
        "fields": _declared_fields(index),
        "called": _called(index, evaluator),
        "splats": _splats(index, evaluator),
        "hydra": _hydra_mains(index),
    }


# what builds a config node's `_target_` (`from hydra.utils import instantiate`)
HYDRA_BUILDERS = frozenset({"hydra.utils.instantiate", "hydra.utils.call"})


def _hydra_mains(index: ModuleIndex) -> Tuple[HydraMain, ...]:
    """The module's Hydra apps (:class:`HydraMain`), where it also calls ``instantiate``: an app
    that only reads values from its config builds no ``_target_``."""
    mains = [site for site in index.calls if site.qualname == "hydra.main"]
    if not mains:
        return ()
    built = next((site for site in index.calls if site.qualname in HYDRA_BUILDERS), None)
    if built is None:
        return ()
    text = f"{index.text(built.node.func)}(...)"
    return tuple(
        HydraMain(
            string_value(argument(site.node, 0, "config_path")),
            string_value(argument(site.node, 1, "config_name")),
            index.span(site.node),
            index.span(built.node),
            text,
        )
        for site in mains
    )


def _declared_fields(index: ModuleIndex) -> Tuple[DeclaredField, ...]:
    """The fields classes with bases declare in their bodies whose names a removed keyword row
    of the table has (most classes: none, and no lookup beyond a set's)."""
    names = removed_keyword_names()
    out = []
    for info in index.classes.values():
        if not info.bases:
            continue
        for stmt in info.node.body:
            if type(stmt) is ast.AnnAssign and type(stmt.target) is ast.Name and stmt.target.id in names:
                known, default = _literal_default(stmt.value)
                out.append(DeclaredField(info.qualname, stmt.target.id, index.span(stmt.target), default, known))
    return tuple(out)


def _literal_default(value: Optional[ast.expr]) -> Tuple[bool, object]:
    """(whether it is known, the default) of a dataclass field's value: a literal, or the
    ``default=`` of ``field(...)`` that is one."""
    if isinstance(value, ast.Call) and dotted(value.func) in ("field", "dataclasses.field"):
        value = next((k.value for k in value.keywords if k.arg == "default"), None)
    if value is None:
        return False, None
    try:
        return True, ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None
