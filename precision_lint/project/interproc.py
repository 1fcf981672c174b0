"""Values across calls: parameters are substituted by what their callers pass.

Each file's facts keep a parameter as a symbolic ``PARAM`` atom and record the calls it
makes to project code (``facts/calls.py``); both stay file-local, so the per-file cache
keeps working. Here, at the join, every ``PARAM`` atom in a module's facts is replaced
by the union of the matching arguments of every recorded call of that function, class
or method in the project (classic summary-based substitution), with the guards the call
runs under. It is bounded: chains of helpers are followed a few calls deep, and a
parameter nobody is seen to call stays unknown.

Values of config files (``CONFIG`` atoms: ``yaml.safe_load(open("config.yaml"))["fp16"]``)
are read here too, from the file next to the module that loads it (``configfiles.py``):
each becomes the value written in the file, with its line there.
"""
from __future__ import annotations

from typing import Callable, Dict, Hashable, List, Optional, Tuple

from ..diagnostics import Span
from ..facts.model import CallRecord, FactsAsked, ModuleFacts
from ..workspace.configfiles import ConfigFiles
from ..workspace.shipped import ShippedFiles
from .options import as_launched, switched_by_launches
from ..workspace.launches import passed_options
from ..knowledge import is_library_training_arguments
from ..semantic.values import COMMAND_LINE_FLAGS, COMMAND_LINE_OPTIONS, command_line_flag, command_line_option
from ..semantic.values import CONFIG, CONST, DTYPE, HALF, RETURN, SYMBOLIC, UNKNOWN, Possible, ParamRef, ReturnRef, dtype_of_qualname, dtype_of_string, field_names, join_questions, select
from ..semantic.values import replace as replace_fields

# how many substitutions one value may go through: a parameter passed on by helpers, a
# returned model made with its caller's dtype (KD chains reach 4 or 5)
MAX_DEPTH = 8
_MAX_ATOMS = 64


class CallGraphValues:
    def __init__(
        self, modules: List[ModuleFacts], symbols, configs: Optional[ConfigFiles] = None,
        shipped: Optional[ShippedFiles] = None, asked: Optional[FactsAsked] = None,
    ) -> None:
        self._symbols = symbols
        self._asked = asked if asked is not None else FactsAsked()  # every return summary read, noted
        self._configs = configs or ConfigFiles()
        self._shipped = shipped or ShippedFiles()
        self._modules = modules
        self._by_callee: Optional[Dict[str, List[Tuple[ModuleFacts, int, str]]]] = None
        self._memo: Dict[Tuple[ParamRef, str], Tuple[Possible, ...]] = {}
        self._by_path = {m.path: m for m in modules}
        self._returns_memo: Dict[Tuple[str, str], Tuple[Possible, ...]] = {}

    def _callers(self) -> Dict[str, List[Tuple[ModuleFacts, int, str]]]:
        """Canonical callee → (calling module, the record's position in its call records, the
        path of the module that defines the callee), indexed by the callees alone
        (``ModuleFacts.call_callees``): a module's records are made into objects only where a
        question reads them (:meth:`_calls_to`)."""
        if self._by_callee is None:
            index: Dict[str, List[Tuple[ModuleFacts, int, str]]] = {}
            # the calling module's scope → callee → its keys: all they read of the module
            keys: Dict[Hashable, Dict[str, Tuple[Tuple[str, str], ...]]] = {}
            for module in self._modules:
                scope = self._symbols.scope(module)
                named = keys.get(scope)
                if named is None:
                    named = keys[scope] = {}
                for at, callee in enumerate(module.call_callees):
                    found = named.get(callee)
                    if found is None:
                        found = named[callee] = self._keys(callee, module, scope)
                    for key, home in found:
                        index.setdefault(key, []).append((module, at, home))
            self._by_callee = index
        return self._by_callee

    def prefetch_summaries(self, complete: Callable[[List[ModuleFacts]], None]) -> None:
        """Have ``complete`` work out, a batch at a time, the DEFERRED call summaries
        (``facts/model.py``) of the modules the substitution will read, as it reads them: for
        each function whose parameter a module's facts name (``ModuleFacts.asks``), the records
        of its calls; for each callee whose return they name, its return summary; then what
        those records' arguments and those returns name in turn. A module a question reaches
        by another way (a base class's attribute) is worked out when asked, alone."""
        params = {f for m in self._modules for f in m.asks[0]}
        returns = {(callee, m.path) for m in self._modules for callee in m.asks[1]}
        seen_params: set = set()
        seen_returns: set = set()
        while params or returns:
            seen_params |= params
            seen_returns |= returns
            calls = [(f, entry) for f in sorted(params) for entry in self._callers().get(f, ())]
            defined = []
            for callee, near in sorted(returns):
                where, canonical = self._symbols.resolve(callee, self._by_path.get(near))
                if where is not None:
                    defined.append((where, canonical))
            batch = {id(m): m for m in [entry[0] for _, entry in calls] + [where for where, _ in defined]}
            deferred = sorted((m for m in batch.values() if m.summaries_deferred), key=lambda m: m.path)
            if deferred:
                complete(deferred)
            read = []  # what the substitution reads of them: the records of those calls, those returns
            for _, (module, at, _) in calls:
                if not module.summaries_deferred:  # (one not worked out is asked again, alone)
                    read.append((module.call_records()[at].args, module.path))
            for where, canonical in defined:
                if not where.summaries_deferred:
                    read.append((self._asked.returns_of(where, canonical), where.path))
            params, returns = set(), set()
            for values, path in read:
                asked_params, asked_returns = join_questions(values)
                params |= asked_params
                returns |= {(callee, path) for callee in asked_returns}
            params -= seen_params
            returns -= seen_returns

    def _calls_to(self, function: str, home: str = "") -> List[Tuple[ModuleFacts, CallRecord]]:
        """Every recorded call of ``function`` (canonical), with the module it is written in;
        with ``home``, only the calls of the function that module defines. Two scripts run
        as programs are both the module ``train`` (each folder is its own import root): a
        call of ``train.main`` in one is no call of the other's ``main``."""
        return [
            (module, module.call_records()[at])
            for module, at, defined in self._callers().get(function, ())
            if not home or not defined or defined == home
        ]

    def _keys(self, callee: str, module: ModuleFacts, scope: Hashable) -> Tuple[Tuple[str, str], ...]:
        """The names a parameter reference may use for this callee (written in ``module``, whose
        scope is ``scope``), each with the path of the module that defines it (""where no
        linted module does): its canonical name, and for a class without its own ``__init__``,
        the class whose ``__init__`` runs."""
        where, canonical, owner_module, owner = self._symbols.callee(callee, module, scope)
        home = where.path if where is not None else ""
        if owner is not None and owner.qualname != canonical:
            return ((canonical, home), (owner.qualname, owner_module.path if owner_module is not None else ""))
        return ((canonical, home),)

    def _home(self, function: str, near: str) -> str:
        """The path of the module that defines ``function`` (canonical) as the module at
        ``near`` names it; "" where not known."""
        module = self._by_path.get(near)
        if module is None:
            return ""
        where, _ = self._symbols.resolve(function, module)
        return where.path if where is not None else ""

    def arguments(self, ref: ParamRef, depth: int = 0, near: str = "") -> Tuple[Possible, ...]:
        """What callers pass for ``ref`` (a parameter of a function of the module at ``near``,
        where known), substituted in turn; ``(UNKNOWN,)`` when no call is seen."""
        home = self._home(ref.function, near) if near else ""
        key = (ref, home)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = (Possible(UNKNOWN),)  # a recursive chain ends here
        out: List[Possible] = []
        records = self._calls_to(ref.function, home)
        for module, record in records:
            for arg in record.args:
                if _fills(ref, arg.index, arg.keyword):
                    # a certainly float16 tensor: its own values; a namespace: the field read
                    passed, keys = (arg.fp16, _inner_keys(ref)) if ref.fp16 else arg.passed(_inner_keys(ref))
                    for v in self.substitute(_follow(passed, keys, ref.missing), module.path, depth + 1):
                        out.append(
                            replace_fields(
                                v,
                                guards=tuple(record.guards) + v.guards,
                                where=v.where or module.path,
                                via=v.via | {module.path},
                                autocast=v.autocast or record.autocast,
                            )
                        )
        if out:
            result = _dedupe(out)
        elif records and not ref.keys and not ref.missing and all(r.omits(ref.name, ref.index) for _, r in records):
            result = ()  # every call seen leaves it out: its default (an atom of its own) is its value
        elif records and ref.var_keyword and len(ref.keys) == 1 and all(r.omits(ref.keys[0], None) for _, r in records):
            result = ()  # no call passes that keyword: the entry is not in the `**kwargs` it spreads
        else:
            result = (Possible(UNKNOWN),)
        self._memo[key] = result
        return result

    def always_passed(self, ref: ParamRef, near: str = "") -> bool:
        """Whether calls of ``ref``'s function are seen and every one passes the parameter."""
        records = self._calls_to(ref.function, self._home(ref.function, near) if near else "")
        return bool(records) and all(any(_fills(ref, a.index, a.keyword) for a in r.args) for _, r in records)

    def chosen_at_every_call(self, module: ModuleFacts, function: str) -> Optional[str]:
        """The condition every recorded call of ``function`` (canonical, defined in ``module``)
        runs under when each is a choice (the user's switch, a capability check, a branch for
        another device): ``if args.precision == "bf16": model.convert_to_bf16()`` makes what
        ``convert_to_bf16`` does the user's choice too. None where a call runs unconditionally,
        or where no call is seen (a library may call it: a hook, a callback)."""
        records = self._calls_to(function, module.path)
        chosen = [
            next((g.text for g in record.guards if g.user_choice or g.capability or g.other_device), None)
            for _, record in records
        ]
        return chosen[0] if chosen and None not in chosen else None

    def calls_of(self, function: str, paths=None) -> Tuple[CallRecord, ...]:
        """Every recorded call of the project function, class or method ``function``
        (its canonical name), in any module; with ``paths`` (a run's modules), only the calls
        written in those modules."""
        return tuple(
            record for module, record in self._calls_to(function) if paths is None or module.path in paths
        )

    def substitute(self, values, near: str, depth: int = 0, call=None) -> Tuple[Possible, ...]:
        """``values`` with their symbolic atoms replaced; ``near``: the file they were
        evaluated in (config paths are relative to it). ``call``: ``(function, ReturnRef, the
        caller's file)`` when ``values`` are what that one call of ``function`` returns and the
        call's arguments are known: the function's own parameters take those arguments, not
        every caller's (``load("s", torch.float32)`` and ``load("t", torch.float16)``)."""
        if not any(v.kind in SYMBOLIC for v in values):
            return tuple(values)
        out: List[Possible] = []
        for v in values:
            if v.default_of is not None and self.always_passed(v.default_of, v.where or near):
                continue  # a parameter default no call leaves in place
            if v.kind not in SYMBOLIC:
                out.append(v)
                continue
            if v.kind == CONFIG:
                found: Tuple[Possible, ...] = tuple(
                    self.config_value(replace_fields(v, value=ref), v.where or near)
                    for ref in self._alternatives(v.value, v.where or near)
                )
            elif depth >= MAX_DEPTH:
                found = (Possible(UNKNOWN),)
            elif v.kind == RETURN:
                found = self.returned(v.value, v.where or near, depth)
            elif call is not None and v.value.function == call[0]:
                found = self._passed(v.value, call[1], call[2], depth)
            else:
                found = self.arguments(v.value, depth, v.where or near)
            if v.lookup:  # `DTYPES[cfg["dtype"]]`: the key's value picks the table's entry
                found = _looked_up(v, found, v.where or near)
            for a in found:
                if v.torch_attr:  # `getattr(torch, name)`
                    a = _torch_attr(a)
                if v.tensor_of:  # the dtype a model is made with: float16 makes it half
                    if _dtype_name(a) != "float16":
                        continue
                    # made here, half in the runs the float16 was passed in
                    passed = a.via | ({a.where} if a.where else set())
                    a = Possible(HALF, _made_half(v.tensor_of, a), a.guards, origin=v.origin, where=v.where or near, via=passed)
                if v.excluded and _dtype_name(a) in v.excluded:
                    continue  # ruled out where the value is used
                if v.kind != CONFIG:
                    a = replace_fields(a, guards=v.guards + a.guards)
                out.append(_casts_kept(a, v))
        return _dedupe(out)

    def _passed(self, param: ParamRef, ref: ReturnRef, caller: str, depth: int) -> Tuple[Possible, ...]:
        """What the call ``ref`` (made in the file ``caller``) passes for ``param``."""
        for index, keyword, values in ref.args:
            if _fills(param, index, keyword):
                found = self.substitute(_follow(values, _inner_keys(param), param.missing), caller, depth + 1)
                return tuple(replace_fields(v, where=v.where or caller, via=v.via | {caller}) for v in found)
        return (Possible(UNKNOWN),)  # not passed: the parameter's default, or nothing we know

    def returned(self, ref: ReturnRef, near: str, depth: int) -> Tuple[Possible, ...]:
        """What the project function ``ref.callee`` (as named in the module at ``near``)
        returns, its keys followed and substituted in turn; ``(UNKNOWN,)`` for a library's or
        an unknown function."""
        key = (ref, near)
        if key in self._returns_memo:
            return self._returns_memo[key]
        self._returns_memo[key] = (Possible(UNKNOWN),)  # a recursive chain ends here
        if ref.bound:
            self._returns_memo[key] = self._bound_value(ref, near, depth)
            return self._returns_memo[key]
        module, canonical = self._symbols.resolve(ref.callee, self._by_path.get(near))
        values = self._asked.returns_of(module, canonical) if module is not None else None
        keys = ref.keys
        passed = self._constructed_with(ref, canonical, module)
        if passed is not None:
            result = self.substitute(_follow(passed, keys[1:], ref.missing), near, depth + 1)
            self._returns_memo[key] = result
            return result
        if values is None and module is not None and keys:
            # an instance's attribute: the class's (or a base class's) field or `self.` value
            for name, where, _ in self._symbols.ancestry(canonical, module):
                values = self._asked.returns_of(where, f"{name}.{keys[0]}") if where is not None else None
                if values is not None:
                    module, keys = where, keys[1:]
                    break
        result = (Possible(UNKNOWN),)
        if values is None and ref.command_line and len(ref.keys) == 1:
            # a field the library's TrainingArguments holds (`--fp16`, `--deepspeed`), of an
            # instance the parser fills from the command line of the script at `near`, handed to
            # project code (`Trainer(args=training_args)`): off or unset unless passed, as
            # that script's shipped launches pass it (options.py)
            made = self._library_field(canonical, module, ref.keys[0])
            if made is not None:
                result = as_launched(made, self._shipped, lambda v: near)
                self._returns_memo[key] = result
                return result
        if ref.files and len(ref.keys) == 1:
            self._returns_memo[key] = self._configured(ref, near, module, values, depth)
            return self._returns_memo[key]
        if values:
            values = _follow(values, keys, ref.missing)
            result = self.substitute(
                tuple(v if v.where else replace_fields(v, where=module.path) for v in values),
                module.path,
                depth + 1,
                (canonical, ref, near) if ref.args is not None else None,
            ) or result
            if ref.command_line and len(ref.keys) == 1:
                # a field of the arguments a parser fills from the command line of the script
                # at `near`: what that script's shipped launches pass (options.py)
                field = ref.keys[0]
                result = as_launched(
                    tuple(replace_fields(v, option=field) for v in result), self._shipped, lambda v: near
                )
        self._returns_memo[key] = result
        return result

    def _bound_value(self, ref: ReturnRef, near: str, depth: int) -> Tuple[Possible, ...]:
        """What the module-level name ``ref.callee`` (imported in the module at ``near``) holds,
        its keys followed: ``from configs import MODEL_DTYPE``, or ``train_config.MODEL_DTYPE``
        of an imported module (the module's name, its first key the variable's). A function or a
        class of that module is no value here (``from models import Net`` passed as a factory);
        a library's name is unknown (a dtype apart), as is a variable whose value is not
        summarised."""
        name, keys = ref.callee, ref.keys
        module, canonical = self._symbols.resolve(name, self._by_path.get(near))
        while module is not None and keys and isinstance(keys[0], str) and not self._asked.returns_of(module, canonical):
            if canonical in (module.module, name):
                name = f"{name}.{keys[0]}"  # a module's variable
            elif self._asked.returns_of(module, f"{canonical}.{keys[0]}") is not None:
                name = f"{canonical}.{keys[0]}"  # an entry of a module's table, re-exported (`from .helpers import *`)
            else:
                break
            keys = keys[1:]
            module, canonical = self._symbols.resolve(name, self._by_path.get(near))
        if module is None:
            # a library's name, also through the module's alias of one (`MODEL_DTYPE =
            # torch.bfloat16` is exported as `torch.bfloat16`)
            dtype = dtype_of_qualname(canonical) if not keys else None
            return (Possible(DTYPE, dtype, where=near),) if dtype else (Possible(UNKNOWN),)
        local = canonical[len(module.module) + 1:] if module.module and canonical.startswith(module.module + ".") else canonical
        values = self._asked.returns_of(module, canonical) if not module.defines(local) else None
        if not values:
            return (Possible(UNKNOWN),)
        values = _follow(values, keys, ref.missing)
        found = self.substitute(tuple(v if v.where else replace_fields(v, where=module.path) for v in values), module.path, depth + 1)
        return found or (Possible(UNKNOWN),)

    def _constructed_with(self, ref: ReturnRef, canonical: str, module) -> Optional[Tuple[Possible, ...]]:
        """The values one construction passes for the field ``ref.keys[0]`` of a project class
        whose ``__init__`` is generated from its fields (a dataclass, pydantic or attrs model,
        a NamedTuple: no ``__init__`` and no ``__post_init__`` of the project in its
        ancestry), when ``ref`` stands for that one call (``Settings(dtype=pick())``): there the
        keyword, or the position in field order, *is* the attribute, and the class's default
        is never read. None when the call does not pass the field, when its arguments are not
        known, or when the class's own code may set the attribute otherwise."""
        if ref.args is None or not ref.keys or module is None or not isinstance(ref.keys[0], str):
            return None
        field = ref.keys[0]
        classes = [cls for _, _, cls in self._symbols.ancestry(canonical, module)]
        own = [cls for cls in classes if cls is not None]
        if not own or classes[0] is None or any(
            cls.init_params is not None or "__post_init__" in cls.members or field in cls.self_attrs for cls in own
        ):
            return None
        order: List[str] = []
        for cls in reversed(own):  # a dataclass's fields: its bases' first, a redefined one keeps its place
            order.extend(f for f in cls.fields if f not in order)
        if field not in order:
            return None
        for index, keyword, values in ref.args:
            if keyword == field or (keyword is None and index == order.index(field) and len(own) == len(classes)):
                return tuple(values)
        return None

    def _library_field(self, canonical: str, module, field) -> Optional[Tuple[Possible, ...]]:
        """The command-line values of ``field`` of the class ``canonical`` (a project subclass
        that does not set it, or the library's own) when it is one of TrainingArguments' switches
        or options; None otherwise."""
        if field not in COMMAND_LINE_FLAGS and field not in COMMAND_LINE_OPTIONS:
            return None
        if not any(is_library_training_arguments(name) for name, _, _ in self._symbols.ancestry(canonical, module)):
            return None
        made = command_line_flag(field) if field in COMMAND_LINE_FLAGS else command_line_option(field)
        return made

    def _alternatives(self, ref, near: str):
        """``ref`` (a ``ConfigRef`` of a run's configuration file, or a ``ReturnRef`` of an
        instance filled from one) and, where the script's option names the file
        (``--train_args_file``), one more for each file its shipped launches pass there: each
        file is a configuration of the run of its own."""
        if not ref.option:
            return [ref]
        out = [ref]
        paths = ref.files if isinstance(ref, ReturnRef) else (ref.path,)
        for _, launch in self._shipped.launches_for(near):
            word = passed_options(launch.args).get(ref.option)
            if word and word not in paths:
                paths += (word,)
                out.append(replace_fields(ref, files=paths) if isinstance(ref, ReturnRef) else replace_fields(ref, path=word))
        return out[-1:] if isinstance(ref, ReturnRef) else out

    def _configured(self, ref: ReturnRef, near: str, module, values, depth: int) -> Tuple[Possible, ...]:
        """The field ``ref.keys[0]`` of an instance a parse fills from one of ``ref.files``:
        for each file, its key (with its line), else the class's default (``values``, its
        summary); each value marked as that file's configuration (``Possible.chosen``)."""
        (alternatives,) = self._alternatives(ref, near)
        default: Tuple[Possible, ...] = ()
        if values:
            default = self.substitute(
                tuple(v if v.where else replace_fields(v, where=module.path) for v in _follow(values, ref.keys[1:], ref.missing)),
                module.path,
                depth + 1,
            )
        out: List[Possible] = []
        for path in alternatives.files:
            located = self._configs.locate(near, path)
            if located is None:
                out.append(Possible(UNKNOWN))
                continue
            chosen = (f"{near}:{ref.choice}", located)
            found = self._configs.lookup(near, path, ref.keys)
            if found is not None:
                value = Possible(CONST, found.value, origin=found.span, where=found.path) if found.keys is None else Possible(UNKNOWN)
                out.append(replace_fields(value, chosen=chosen))
            else:  # not in the file: the class's default (a library class's: left to its reader)
                out.extend(replace_fields(v, chosen=chosen) for v in default)
        return _dedupe(out) or (Possible(UNKNOWN),)

    def config_value(self, atom: Possible, near: str) -> Possible:
        """The value a ``CONFIG`` atom names, as written in its file (``where``: that file)."""
        ref = atom.value
        located = self._configs.locate(near, ref.path) if ref.choice else None
        chosen = (f"{near}:{ref.choice}", located) if located is not None else ()
        found = self._configs.lookup(near, ref.path, ref.keys)
        if found is None:
            if ref.missing and self._configs.locate(near, ref.path) is not None:
                return Possible(CONST, ref.missing[0], atom.guards, chosen=chosen)  # `cfg.get("fp16", False)`
            return Possible(UNKNOWN)
        if found.keys is not None:
            return Possible(UNKNOWN, chosen=chosen)  # a whole table: no single value
        return Possible(CONST, found.value, atom.guards, origin=found.span, where=found.path, chosen=chosen)

    # --- facts with parameters substituted ---------------------------------------------
    def resolve_facts(self, module: ModuleFacts) -> ModuleFacts:
        """``module`` with every symbolic atom of its sections substituted (a copy: cached
        facts are shared and never changed)."""
        memo: dict = {}  # facts share their parts: each is substituted once
        sections = {
            name: self._resolve(value, module.path, memo) if name in module.to_join else value
            for name, value in module.sections.items()
        }
        if all(sections[name] is module.sections[name] for name in sections):
            return module
        return replace_fields(module, sections=sections)

    def _resolve(self, obj, near: str, memo: Optional[dict] = None):
        if isinstance(obj, _LEAVES):
            return obj  # holds no value to substitute (a Possible alone is already what it is)
        memo = {} if memo is None else memo
        found = memo.get(id(obj))
        if found is not None:
            return found[1]
        new = self._resolved_part(obj, near, memo)
        memo[id(obj)] = (obj, new)  # the part is held, so its id is not reused meanwhile
        return new

    def _resolved_part(self, obj, near: str, memo: dict):
        if isinstance(obj, tuple):
            if obj and all(isinstance(v, Possible) for v in obj):
                out = self.substitute(obj, near) if any(v.kind in SYMBOLIC for v in obj) else obj
                # a command-line option's values: as the shipped launches of its script pass them
                if any(v.option for v in out):
                    out = as_launched(out, self._shipped, lambda v: v.where or near)
                # a branch of a command-line switch that every shipped launch turns off: by hand only
                if any(g.switch for v in out for g in v.guards):
                    out = switched_by_launches(out, self._shipped, lambda v: v.where or near)
                return out
            new = tuple(self._resolve(v, near, memo) for v in obj)
            return obj if all(a is b for a, b in zip(new, obj)) else new
        if isinstance(obj, list):
            new = [self._resolve(v, near, memo) for v in obj]
            return obj if all(a is b for a, b in zip(new, obj)) else new
        if isinstance(obj, dict):
            new = {k: self._resolve(v, near, memo) for k, v in obj.items()}
            return obj if all(new[k] is obj[k] for k in obj) else new
        names = field_names(type(obj))
        if names:
            changes = {}
            for name in names:
                value = getattr(obj, name)
                new = self._resolve(value, near, memo)
                if new is not value:
                    changes[name] = new
            if not changes:
                return obj
            resolved = replace_fields(obj, **changes)
            hook = getattr(resolved, "after_substitution", None)
            return hook() if hook is not None else resolved
        return obj


# What the join walks past without looking inside: scalars, positions, and a value alone.
_LEAVES = (str, int, float, bool, type(None), bytes, Span, Possible)


def _fills(param: ParamRef, index: Optional[int], keyword: Optional[str]) -> bool:
    """Whether an argument at position ``index`` or named ``keyword`` fills ``param``; for
    the entry ``keys[0]`` of a ``**kwargs`` parameter, the keyword of that name."""
    if param.var_keyword:
        return bool(param.keys) and keyword == param.keys[0]
    return keyword == param.name or (keyword is None and param.index is not None and index == param.index)


def _inner_keys(param: ParamRef) -> tuple:
    """The keys followed into what fills ``param``: for a ``**kwargs`` entry, those after
    the keyword's own."""
    return param.keys[1:] if param.var_keyword else param.keys


def _looked_up(atom: Possible, keys, near: str) -> Tuple[Possible, ...]:
    """The entries of ``atom``'s table that the substituted ``keys`` pick, each chosen under its
    key's guards (the table lies in the file ``near``); an unknown key picks an unknown value,
    a key the table does not hold picks nothing."""
    out: List[Possible] = []
    for key in keys:
        if key.kind == UNKNOWN:
            out.append(key)
            continue
        for name, values in atom.lookup:
            if key.kind == CONST and key.value == name:
                out += [
                    replace_fields(v, guards=key.guards + v.guards, where=v.where or near)
                    for v in values
                ]
    return tuple(out)


def _made_half(reason: str, dtype: Possible) -> str:
    """Why a tensor made with a substituted dtype is float16: where that float16 comes from."""
    if dtype.origin is not None and dtype.where:
        where = dtype.where.replace("\\", "/").rsplit("/", 1)[-1]
        return f"{reason}, float16 as given in {where}, line {dtype.origin.line}"
    return f"{reason}, float16 as its callers give it"


def _casts_kept(a: Possible, atom: Possible) -> Possible:
    """``a``, which replaces the symbolic ``atom``, with the casts met between ``atom`` and its
    use (a parameter that its function upcasts is upcast whatever the callers pass)."""
    if (a.upcast or not atom.upcast) and (a.clamped or not atom.clamped) and (a.autocast or not atom.autocast):
        return a
    return replace_fields(
        a, upcast=a.upcast or atom.upcast, clamped=a.clamped or atom.clamped, autocast=a.autocast or atom.autocast
    )


def _torch_attr(a: Possible) -> Possible:
    """``getattr(torch, "float16")`` is ``torch.float16``; any other value is unknown."""
    if a.kind in SYMBOLIC:
        return replace_fields(a, torch_attr=True)
    dtype = dtype_of_qualname(f"torch.{a.value}") if a.kind == CONST and isinstance(a.value, str) else None
    return replace_fields(a, kind=DTYPE, value=dtype) if dtype else Possible(UNKNOWN)


def _follow(values, keys, missing) -> Tuple[Possible, ...]:
    """``values[k1][k2]...``: each atom with the keys a caller follows into it (only symbolic
    atoms can be followed; any other is unknown)."""
    if not keys:
        return tuple(values)
    out = []
    for v in values:
        for i, key in enumerate(keys):
            v = select(v, key, missing if i == len(keys) - 1 else ()) if v is not None else None
        out.append(v if v is not None else Possible(UNKNOWN))
    return tuple(out)


def _dedupe(values) -> Tuple[Possible, ...]:
    out, seen = [], set()
    for v in values:
        if v not in seen:
            seen.add(v)
            out.append(v)
            if len(out) >= _MAX_ATOMS:
                break
    return tuple(out)


def _dtype_name(v: Possible) -> Optional[str]:
    if v.kind == DTYPE:
        return v.value
    return dtype_of_string(v.value) if v.kind == CONST else None
