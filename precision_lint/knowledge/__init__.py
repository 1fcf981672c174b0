"""Library knowledge as data (``*.toml`` beside this module), read once.

Rules and the project join ask here what a library class derives from and which
libraries patch others on import; the facts of the user's code never say that.
"""
from __future__ import annotations

import fnmatch
import os
from .._dataclass import dataclass
from functools import lru_cache
from typing import Dict, FrozenSet, Iterable, List, Optional, Tuple


@lru_cache(maxsize=None)
def _table(name: str) -> dict:
    path = os.path.join(os.path.dirname(__file__), name)
    try:  # the file beside this module; importlib.resources (and the zipfile it imports) only
        # where the package is not a folder of files
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:  # pragma: no cover - a zipped install
        from importlib import resources

        return tomllib_module().loads(resources.files(__name__).joinpath(name).read_text(encoding="utf-8"))
    return parsed(path, text)


def tomllib_module():
    """``tomllib`` (``tomli`` before Python 3.11), imported where a TOML text is read: a check
    that reads none (a standalone script's) never imports it. Every reader of TOML calls this."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    return tomllib


def parsed(path: str, text: str) -> dict:
    """The TOML ``text`` of the file ``path``, parsed; kept beside the bytecode as Python keeps
    it (``__pycache__``, or under ``sys.pycache_prefix``; never where bytecode is not written),
    marshalled with the digest of the text it was parsed from, and read back while the text is
    the same: parsing the tables costs more than anything else a small file's check reads."""
    import hashlib
    import marshal
    import sys

    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).digest()
    kept = _kept_path(path)
    if kept is not None:
        try:
            with open(kept, "rb") as f:
                found = marshal.load(f)
            if isinstance(found, tuple) and len(found) == 2 and found[0] == digest and isinstance(found[1], dict):
                return found[1]
        except (OSError, EOFError, ValueError, TypeError):
            pass
    data = tomllib_module().loads(text)
    if kept is not None and not sys.dont_write_bytecode:
        try:
            blob = marshal.dumps((digest, data))
        except ValueError:  # a value marshal cannot write (a TOML date): parsed at each run
            return data
        tmp = f"{kept}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(kept), exist_ok=True)
            with open(tmp, "wb") as f:
                f.write(blob)
            os.replace(tmp, kept)
        except OSError:  # a read-only install: parsed at each run
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return data


def _kept_path(path: str) -> Optional[str]:
    """Where the parsed table of ``path`` is kept: as ``importlib`` places bytecode."""
    import sys

    tag = sys.implementation.cache_tag
    if tag is None:  # pragma: no cover - an implementation without bytecode caching
        return None
    folder, name = os.path.split(os.path.abspath(path))
    if sys.pycache_prefix:
        folder = os.path.join(sys.pycache_prefix, os.path.splitdrive(folder)[1].lstrip(os.sep))
    else:
        folder = os.path.join(folder, "__pycache__")
    return os.path.join(folder, f"{name}.{tag}.marshal")


@lru_cache(maxsize=None)
def library_bases() -> Dict[str, Tuple[str, ...]]:
    """Library class -> the library classes it derives from."""
    return {k: tuple(v) for k, v in _table("libraries.toml").get("bases", {}).items()}


def _patches_of(imported_modules: Iterable[str], target: str) -> List[dict]:
    """The ``[[patches]]`` rows of the library table whose library is imported in the unit and
    whose targets match ``target`` (a qualified class name), in the table's order."""
    imported = {m.split(".")[0] for m in imported_modules}
    return [
        patch for patch in _table("libraries.toml").get("patches", [])
        if patch["library"] in imported and any(fnmatch.fnmatchcase(target, t) for t in patch["targets"])
    ]


def patched_keywords(imported_modules: Iterable[str], target: str) -> Tuple[str, ...]:
    """Keywords that ``target`` (a qualified class name) accepts because a patching library
    is imported in the unit (``unsloth`` makes TRL trainers accept any: ``"*"``)."""
    return tuple(keyword for patch in _patches_of(imported_modules, target) for keyword in patch.get("accepts", ()))


def patched_default(imported_modules: Iterable[str], target: str, keyword: str) -> Optional[object]:
    """The default of ``keyword`` in the class that a patching library imported in the unit puts
    in place of ``target`` (``unsloth``: TRL's configs default ``bf16`` to False), None where no
    patch changes it."""
    return next((patch["defaults"][keyword] for patch in _patches_of(imported_modules, target) if keyword in patch.get("defaults", {})), None)


def patched_native_only(imported_modules: Iterable[str], probe: str) -> bool:
    """Whether a patching library imported in the unit makes the bf16 check ``probe`` (a
    qualified name) answer for native bf16 only (``unsloth`` replaces
    ``torch.cuda.is_bf16_supported``)."""
    return any(patch.get("native_only") for patch in _patches_of(imported_modules, probe))


def patch_accepts(imported_modules: Iterable[str], target: str, keyword: str) -> bool:
    """Whether a patching library imported in the unit makes ``target`` take ``keyword``."""
    accepted = patched_keywords(imported_modules, target)
    return keyword in accepted or "*" in accepted


def is_library_training_arguments(qualname: str) -> bool:
    """``transformers.TrainingArguments`` (``Seq2SeqTrainingArguments``) or a TRL training
    config that derives from it according to the table."""
    parts = qualname.split(".")
    return parts[0] in ("transformers", "trl") and (
        parts[-1] in ("TrainingArguments", "Seq2SeqTrainingArguments") or derives_from(qualname, "transformers.TrainingArguments")
    )


def derives_from(qualname: str, base: str) -> bool:
    """Whether a library class (``trl.GRPOConfig``, also as ``trl.trainer.grpo_config.GRPOConfig``)
    is, or derives from, ``base`` according to the table."""
    parts = qualname.split(".")
    stack = [f"{parts[0]}.{parts[-1]}" if len(parts) > 2 else qualname]
    seen = set()
    while stack:
        name = stack.pop()
        if name == base:
            return True
        if name not in seen:
            seen.add(name)
            stack.extend(library_bases().get(name, ()))
    return False


@lru_cache(maxsize=None)
def version_helpers() -> Dict[str, Tuple[str, str]]:
    """Library functions that test a library's version: qualified name -> (library, op)
    (``libraries.toml`` ``[[version_helpers]]``; "" where an argument says it)."""
    out: Dict[str, Tuple[str, str]] = {}
    for helper in _table("libraries.toml").get("version_helpers", []):
        for name in helper["names"]:
            out[name] = (helper.get("library", ""), helper.get("op", ""))
    return out


def framework_of(qualname: str) -> Optional[str]:
    """The framework other than PyTorch a library class is written for (``"jax"`` for
    ``transformers.FlaxAutoModel``, also as ``transformers.modeling_flax_utils.FlaxPreTrainedModel``),
    or None."""
    parts = qualname.split(".")
    names = {qualname, f"{parts[0]}.{parts[-1]}"}
    for framework in _table("libraries.toml").get("frameworks", []):
        if any(fnmatch.fnmatchcase(n, p) for n in names for p in framework["classes"]):
            return framework["name"]
    return None


def bf16_default_on(qualname: str) -> Optional[bool]:
    """Whether a library training config turns ``bf16`` on when neither flag is given
    (TRL's ``bf16 = not fp16``): True, False for the other library configs, None for a
    name the table does not know (a project class: its default is not judged)."""
    parts = qualname.split(".")
    if parts[0] not in ("transformers", "trl", "sentence_transformers", "unsloth"):
        return None
    return any(derives_from(qualname, base) for base in _table("libraries.toml").get("bf16_defaults", {}).get("not_fp16", ()))


@lru_cache(maxsize=None)
def model_init_keyword(qualname: str) -> Optional[str]:
    """The keyword whose dict a training config of ``qualname`` passes to ``from_pretrained``
    when its trainer loads the model itself (``model_init_kwargs``), or None."""
    table = _table("libraries.toml").get("model_init", {})
    if any(derives_from(qualname, base) for base in table.get("configs", ())):
        return table.get("keyword")
    return None



@lru_cache(maxsize=None)
def instance_attributes() -> Dict[str, str]:
    """``"accelerate.Accelerator.state"`` -> the class of what that attribute of a library
    object holds (``libraries.toml`` ``[instance_attributes]``)."""
    return dict(_table("libraries.toml").get("instance_attributes", {}))


@lru_cache(maxsize=None)
def package_tests() -> Dict[str, str]:
    """A library function that answers whether a package is installed -> that package
    (``libraries.toml`` ``[package_tests]``)."""
    return dict(_table("libraries.toml").get("package_tests", {}))


@lru_cache(maxsize=None)
def model_factories() -> Dict[str, FrozenSet[str]]:
    """The library calls that return a ``torch.nn.Module`` (``libraries.toml``
    ``[model_factories]``): ``functions``, ``builder_modules``, ``class_modules``."""
    table = _table("libraries.toml").get("model_factories", {})
    return {key: frozenset(table.get(key, ())) for key in ("functions", "builder_modules", "class_modules")}


@lru_cache(maxsize=None)
def argument_parsers() -> Dict[str, FrozenSet[str]]:
    """The library argument parsers whose parse methods return instances of the dataclasses
    they are built with, in order: ``classes`` and ``methods`` (``libraries.toml``
    ``[argument_parsers]``)."""
    table = _table("libraries.toml").get("argument_parsers", {})
    return {"classes": frozenset(table.get("classes", ())), "methods": frozenset(table.get("methods", ()))}


@dataclass(frozen=True)
class AdapterDtype:
    """The versions of a PEFT library whose ``wrap`` makes the adapters of ``configs`` in the
    base layer's float dtype: ``since`` up to (not including) ``until`` (``libraries.toml``
    ``[adapter_dtype]``)."""

    library: str
    wrap: str
    configs: Tuple[str, ...]
    since: Tuple[int, ...]
    until: Tuple[int, ...]


@lru_cache(maxsize=None)
def adapter_dtype() -> AdapterDtype:
    row = _table("libraries.toml")["adapter_dtype"]
    return AdapterDtype(
        row["library"], row["wrap"], tuple(row["configs"]),
        tuple(int(p) for p in row["base_dtype_since"].split(".")),
        tuple(int(p) for p in row["float32_since"].split(".")),
    )

@dataclass(frozen=True)
class PeftModelKept:
    """The versions of a trainer library (below ``until``) whose trainers keep a PeftModel they
    are given with ``peft_config=`` as it is (``libraries.toml`` ``[peft_model_kept]``)."""

    library: str
    until: Tuple[int, ...]


@lru_cache(maxsize=None)
def peft_model_kept() -> PeftModelKept:
    row = _table("libraries.toml")["peft_model_kept"]
    return PeftModelKept(row["library"], tuple(int(p) for p in row["until"].split(".")))


@dataclass(frozen=True)
class TrainerFusedDefault:
    """The versions of ``library`` (from ``since``, with torch from ``torch_since``) whose Trainer
    defaults to torch's fused AdamW (``libraries.toml`` ``[trainer_fused_default]``)."""

    library: str
    since: Tuple[int, ...]
    torch_since: Tuple[int, ...]


@lru_cache(maxsize=None)
def trainer_fused_default() -> TrainerFusedDefault:
    row = _table("libraries.toml")["trainer_fused_default"]
    return TrainerFusedDefault(
        row["library"], tuple(int(p) for p in row["since"].split(".")), tuple(int(p) for p in row["torch_since"].split("."))
    )


# --- methods the library calls with a new argument (overrides.toml) ------------------------
@dataclass(frozen=True)
class Override:
    """A library method that the library calls with an argument its older versions did not pass
    (a row of overrides.toml): a subclass's override with the old signature crashes there."""

    library: str
    owner: str  # the library class whose code makes the call
    method: str
    argument: str
    passed: str  # "keyword" or "positional"
    since: Tuple[int, ...]  # every call passes it from this version on
    callers: Tuple[str, ...]  # the library methods that make the call
    default: str  # the new parameter's default in the fix
    error: str  # `{cls}`: the overriding class; positional rows also `{takes}` and `{given}`
    position: int = 0  # for "positional": the argument's place after `self`
    conditional_from: Optional[Tuple[int, ...]] = None  # passed on some calls only, from ...
    conditional_until: Optional[Tuple[int, ...]] = None  # ... to below this version


def _fields_amiss(row: dict, required, optional) -> Tuple[List[str], List[str]]:
    """(the required fields a table row lacks, the fields it has that are neither required nor
    optional): what a data table's loader refuses the row for."""
    return [k for k in required if k not in row], sorted(set(row) - set(required) - set(optional))


_OVERRIDE_FIELDS = ("library", "owner", "method", "argument", "passed", "since", "callers", "default", "error")
_OVERRIDE_OPTIONAL = ("position", "conditional_from", "conditional_until")


@lru_cache(maxsize=None)
def overrides() -> Tuple[Override, ...]:
    """Every row of overrides.toml."""
    out = []
    for i, row in enumerate(_table("overrides.toml").get("override", [])):
        where = f"overrides.toml row {i + 1} ({row.get('method', '?')})"
        missing, unknown = _fields_amiss(row, _OVERRIDE_FIELDS, _OVERRIDE_OPTIONAL)
        if missing or unknown or row["passed"] not in ("keyword", "positional"):
            raise ValueError(f"{where}: missing {missing} / unknown {unknown} / passed {row.get('passed')!r}")
        if row["passed"] == "positional" and not row.get("position"):
            raise ValueError(f"{where}: a positional argument needs `position`")
        out.append(
            Override(
                row["library"], row["owner"], row["method"], row["argument"], row["passed"],
                parse_version(row["since"]), tuple(row["callers"]), row["default"], row["error"],
                int(row.get("position", 0)), parse_version(row.get("conditional_from")),
                parse_version(row.get("conditional_until")),
            )
        )
    return tuple(out)


def overridden_methods() -> FrozenSet[str]:
    """The method names some row is about: the extractor records these overrides only."""
    return frozenset(row.method for row in overrides())


def calling_methods() -> FrozenSet[str]:
    """The library methods that make the rows' calls: an override of one that does not call its
    base's makes the call itself (MP305 then says nothing)."""
    return frozenset(caller for row in overrides() for caller in row.callers)


# --- removed and renamed names (migrations.toml) -------------------------------------------


@lru_cache(maxsize=None)
def keyword_methods() -> FrozenSet[str]:
    """The methods whose keywords a migration row is about (``from_pretrained``, ``generate``):
    a project class that defines one decides what its keywords are."""
    return frozenset(row.method for row in migrations() if row.kind == "keyword" and row.method)

KINDS = ("keyword", "attribute", "import", "call")
FIXES = ("rename", "move", "none")
_REQUIRED = ("library", "kind", "owner", "names", "replacement", "fix", "error")
_OPTIONAL = (
    "also", "unlike", "method", "deprecated_in", "removed_in", "rename_to", "rename_since", "move_to",
    "move_as", "move_since", "moved_to", "safety", "code", "verify_on", "since_note",
    "silent_since", "silent_values", "silent_with", "abbreviates", "on_store", "store_effect",
    "hub_may_define", "older_error", "quiet_values", "option_replacement", "values",
    "option_error", "default", "warning", "unless", "silent_effect",
)
STORES = ("warns", "ignored", "fails")


def parse_version(text: Optional[str]) -> Optional[Tuple[int, ...]]:
    return tuple(int(p) for p in text.split(".")) if text else None


def at_least(version: Tuple[int, ...], bound: Tuple[int, ...]) -> bool:
    """``version >= bound`` with missing parts read as 0 (``5`` is ``5.0.0``)."""
    width = max(len(version), len(bound), 3)
    return tuple(version) + (0,) * (width - len(version)) >= tuple(bound) + (0,) * (width - len(bound))


@dataclass(frozen=True)
class Migration:
    """One removed or renamed name of a library (a row of migrations.toml, one name)."""

    library: str  # "transformers", "trl" or "peft": whose version gates it
    kind: str  # "keyword", "attribute", "import" or "call"
    owner: str  # class (keyword, attribute), module (import), or the callable itself (call)
    name: str  # the old name ("" for an import of the module `owner` itself)
    replacement: str
    fix: str  # "rename", "move", "none"
    error: str  # the runtime error, `{name}` filled in
    also: Tuple[str, ...] = ()
    unlike: Tuple[str, ...] = ()  # patterns `also` must not match (GenerationConfig is no model config)
    method: Optional[str] = None  # keyword of this method of `owner` (None: the constructor)
    deprecated_in: Optional[Tuple[int, ...]] = None
    removed_in: Optional[Tuple[int, ...]] = None
    rename_to: Optional[str] = None
    rename_since: Optional[Tuple[int, ...]] = None
    move_to: Optional[str] = None
    move_as: Optional[str] = None
    move_since: Optional[Tuple[int, ...]] = None
    moved_to: Optional[str] = None  # for imports: the module that has the name now
    safety: str = "safe"
    code: Optional[str] = None  # the rule that owns the row when not MP302/MP304
    verify_on: Optional[str] = None  # a concrete class the table check builds
    since_note: Optional[str] = None  # why the new name is new in `rename_since` when it is older
    # accepted again without a warning from this version on (kept for backward compatibility,
    # silently), for calls passing one of `silent_values` or one of the keywords `silent_with`
    # (neither: every call)
    silent_since: Optional[Tuple[int, ...]] = None
    # where `silent_since` keeps no compatibility but takes the keyword into `**kwargs` that
    # nothing reads: what the code then loses (the message says so instead of "accept it silently")
    silent_effect: Optional[str] = None
    silent_values: Tuple[str, ...] = ()
    silent_with: Tuple[str, ...] = ()
    # the values the deprecated versions accept without a word (`use_flash_attention_2=False`:
    # `from_pretrained` pops it and warns only for a true one), as Python writes them ("False",
    # "None"): a call whose code gives only these warns nowhere before `removed_in`
    quiet_values: Tuple[str, ...] = ()
    # for a keyword of a dataclass an HfArgumentParser fills: the option that ``--name`` on a
    # command line abbreviates (argparse accepts a unique prefix: ``--use_liger`` is read as
    # ``--use_liger_kernel``), so a launch passing it fails nowhere
    abbreviates: Optional[str] = None
    # for attributes: what `x.name = value` does on the versions the row concerns (None: the
    # store works, a plain attribute: nothing to say), with `store_effect`, its consequence
    on_store: Optional[str] = None
    store_effect: Optional[str] = None
    # the hub's own class (`trust_remote_code=True`) may define the name itself
    hub_may_define: bool = False
    # for a keyword renamed: the error its new name (`rename_to`) raises on the versions before
    # `rename_since`, where `rename_since` is the release that brought it (the one before lacks
    # it, checked in the wheels): code written with the new name fails on a lowest allowed
    # version below it. Absent where `rename_since` is only the oldest version known to have it
    older_error: Optional[str] = None
    # for a keyword of a dataclass an HfArgumentParser fills: what to pass on a command line
    # instead, where the replacement is no option (`fsdp_config=` takes a dict in Python, the
    # path of a JSON file on a command line)
    option_replacement: Optional[str] = None
    # for a keyword the library still takes: the values it removed (as Python writes them:
    # "'adamw_hf'"), each refused by the owner's own check of its value; the row concerns a use
    # only where the code (or a config file, or a launch) gives one of them
    values: Tuple[str, ...] = ()
    # ... and what a command line giving one meets instead (argparse's own check of an Enum
    # field's choices), `{value}` standing for it
    option_error: Optional[str] = None
    # for a removed keyword: the value it defaulted to, as Python writes it ("False"): a use that
    # passes just that is removed without a replacement (the run is the same without it)
    default: Optional[str] = None
    # for a call: what calling `owner` warns on `deprecated_in` up to below `removed_in`, the
    # library's own text (`FutureWarning: ...`), and the keywords given literally
    # (`("no_deprecation_warning", "True")`, from `unless = ["no_deprecation_warning=True"]`)
    # that silence it
    warning: Optional[str] = None
    unless: Tuple[Tuple[str, str], ...] = ()

    @property
    def owner_short(self) -> str:
        return self.owner.rsplit(".", 1)[-1]

    def matches_owner(self, qualname: str) -> bool:
        """Whether a library class (or function), as users import it, is this row's owner or
        one of its `also` patterns (``trl.trainer.sft_trainer.SFTTrainer`` counts as
        ``trl.SFTTrainer``)."""
        parts = qualname.split(".")
        short = f"{parts[0]}.{parts[-1]}" if len(parts) > 2 else qualname
        if any(fnmatch.fnmatchcase(q, p) for q in {qualname, short} for p in self.unlike):
            return False  # `transformers.generation.GenerationConfig` is the GenerationConfig
        if framework_of(qualname) is not None and framework_of(self.owner) is None:
            return False  # a Flax/TensorFlow class is not the PyTorch class the row is about
        return any(q == self.owner or any(fnmatch.fnmatchcase(q, p) for p in self.also) for q in {qualname, short})

    def stage(self, version: Optional[Tuple[int, ...]]) -> Optional[str]:
        """``"removed"``, ``"deprecated"`` or None (nothing to say) for the targeted version
        (None: the newest)."""
        if self.removed_in is not None and (version is None or at_least(version, self.removed_in)):
            return "removed"
        if self.deprecated_in is not None and (version is None or at_least(version, self.deprecated_in)):
            return "deprecated"
        return None

    def silent_for(self, value_text: str, keywords) -> bool:
        """Whether a call passing the name with ``value_text`` beside ``keywords`` is one that
        ``silent_since`` and later versions accept without a warning."""
        if self.silent_since is None:
            return False
        if not self.silent_values and not self.silent_with:
            return True
        text = value_text.strip()
        # a plain string literal, read without parsing (`"auto"`, `'auto'`)
        literal = text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" else None
        return (literal is not None and literal in self.silent_values) or any(k in keywords for k in self.silent_with)

    def new_name_exists(self, version: Optional[Tuple[int, ...]]) -> bool:
        """Whether the targeted version has what the fix writes (never the reverse rename)."""
        since = self.move_since if self.fix == "move" else self.rename_since
        return since is None or version is None or at_least(version, since)


def _row_error(where: str, message: str) -> ValueError:
    return ValueError(f"migrations.toml, {where}: {message}")


@lru_cache(maxsize=None)
def migrations() -> Tuple[Migration, ...]:
    """Every row of migrations.toml, one per name."""
    out = []
    for i, row in enumerate([*_table("migrations.toml").get("migration", []), *_attention_class_migrations()]):
        where = f"row {i + 1} ({row.get('owner', '?')})"
        missing, unknown = _fields_amiss(row, _REQUIRED, _OPTIONAL)
        if missing or unknown:
            raise _row_error(where, f"missing {missing} / unknown {unknown}")
        if row["kind"] not in KINDS or row["fix"] not in FIXES:
            raise _row_error(where, f"kind {row['kind']!r} or fix {row['fix']!r} is not known")
        if row["fix"] == "rename" and not row.get("rename_to"):
            raise _row_error(where, "a rename needs `rename_to`")
        if row["fix"] == "move" and not row.get("move_to"):
            raise _row_error(where, "a move needs `move_to`")
        if row.get("silent_since") and (row.get("removed_in") or not row.get("deprecated_in")):
            raise _row_error(where, "`silent_since` is for deprecated-only rows (a `deprecated_in`, no `removed_in`)")
        if (row.get("silent_values") or row.get("silent_with") or row.get("silent_effect")) and not row.get("silent_since"):
            raise _row_error(where, "`silent_values` / `silent_with` limit a `silent_since`, `silent_effect` says what it loses")
        if row.get("quiet_values") and (not row.get("deprecated_in") or row.get("kind") != "keyword"):
            raise _row_error(where, "`quiet_values` are for a deprecated keyword (`deprecated_in`)")
        if row.get("on_store") not in (None, *STORES) or (row.get("on_store") or row.get("hub_may_define")) and row["kind"] != "attribute":
            raise _row_error(where, f"`on_store` is one of {STORES}, and it and `hub_may_define` are for attributes")
        if row.get("on_store") in ("ignored", "fails") and not (row.get("store_effect") and row.get("removed_in")):
            raise _row_error(where, "a store `ignored` or `fails` needs `store_effect` and the `removed_in` it starts at")
        if row.get("older_error") and not (row["kind"] == "keyword" and row.get("rename_to") and row.get("rename_since")):
            raise _row_error(where, "`older_error` is for a keyword renamed: a `rename_to` and the `rename_since` that brought it")
        if row.get("values") and (row["kind"] != "keyword" or not row.get("removed_in") or row["fix"] != "none" or len(row["names"]) != 1):
            raise _row_error(where, "`values` are the removed values of one keyword (a `removed_in`, no fix)")
        if row.get("option_error") and not row.get("values"):
            raise _row_error(where, "`option_error` is what a command line giving a removed value meets (`values`)")
        if row["kind"] == "call" and (
            row["names"] or not row.get("deprecated_in") or not row.get("warning") or row["fix"] != "none"
        ):
            raise _row_error(where, "a call row names its callable in `owner` (no `names`), says its `warning` from `deprecated_in`, and has no fix")
        if (row.get("warning") or row.get("unless")) and row["kind"] != "call":
            raise _row_error(where, "`warning` and `unless` are for call rows")
        if any(item.count("=") != 1 or not all(item.split("=")) for item in row.get("unless", ())):
            raise _row_error(where, "`unless` items are `keyword=value` (`no_deprecation_warning=True`)")
        abbreviates = row.get("abbreviates", {})
        if not isinstance(abbreviates, dict) or set(abbreviates) - set(row["names"]):
            raise _row_error(where, "`abbreviates` maps some of the row's names to the option each abbreviates")
        names = row["names"] or [""]
        for name in names:
            out.append(
                Migration(
                    library=row["library"], kind=row["kind"], owner=row["owner"], name=name,
                    replacement=row["replacement"], fix=row["fix"],
                    error=row["error"].replace("{name}", name),
                    also=tuple(row.get("also", ())), unlike=tuple(row.get("unlike", ())), method=row.get("method"),
                    deprecated_in=parse_version(row.get("deprecated_in")),
                    removed_in=parse_version(row.get("removed_in")),
                    rename_to=row.get("rename_to"), rename_since=parse_version(row.get("rename_since")),
                    move_to=row.get("move_to"), move_as=row.get("move_as") or (name if row["fix"] == "move" else None),
                    move_since=parse_version(row.get("move_since")),
                    moved_to=row.get("moved_to"), safety=row.get("safety", "safe"), code=row.get("code"), verify_on=row.get("verify_on"),
                    since_note=row.get("since_note"),
                    silent_since=parse_version(row.get("silent_since")), silent_effect=row.get("silent_effect"),
                    silent_values=tuple(row.get("silent_values", ())), silent_with=tuple(row.get("silent_with", ())),
                    quiet_values=tuple(row.get("quiet_values", ())),
                    abbreviates=abbreviates.get(name),
                    on_store=row.get("on_store"), store_effect=row.get("store_effect"),
                    hub_may_define=bool(row.get("hub_may_define", False)),
                    older_error=row.get("older_error"),
                    option_replacement=row.get("option_replacement"),
                    values=tuple(row.get("values", ())),
                    option_error=(row.get("option_error") or "").replace("{name}", name) or None,
                    default=row.get("default"),
                    warning=row.get("warning"),
                    unless=tuple(tuple(item.split("=")) for item in row.get("unless", ())),
                )
            )
    return tuple(out) + tuple(r for r in map(_field_read, out) if r is not None)


# The dataclasses whose constructor keywords are their fields: a field the table says a release
# removed is an attribute their instances no longer have (`training_args.group_by_length` after
# `TrainingArguments(group_by_length=...)` was removed in 5.2).
FIELD_OWNERS = ("transformers.TrainingArguments", "trl.SFTConfig", "trl.DPOConfig", "trl.GRPOConfig")


@lru_cache(maxsize=None)
def _removed_imports() -> Dict[str, Migration]:
    out: Dict[str, Migration] = {}
    for row in migrations():
        if row.kind == "import" and row.name and row.removed_in is not None:
            out.setdefault(f"{row.owner}.{row.name}", row)
    return out


def removed_import(qualname: str) -> Optional[Migration]:
    """The row of the table that removes the import of ``qualname`` (``trl.PPOTrainer``: gone
    from ``trl`` in 0.29), None where none does."""
    return _removed_imports().get(qualname)


def _field_read(row: Migration) -> Optional[Migration]:
    """The read of a removed dataclass field: for a keyword row of a :data:`FIELD_OWNERS`
    constructor that a release removed (not one of its values), the attribute row of the same
    name, removed in the same release, with ``AttributeError`` as its error. Reading a field
    warns on no version (the deprecation is the constructor's): the row has no warning period.
    A renamed field reads under its new name (``.eval_strategy``) where that exists."""
    if row.kind != "keyword" or row.owner not in FIELD_OWNERS or row.method or row.removed_in is None or row.values:
        return None
    if row.name.startswith("_"):
        return None  # `_n_gpu`: no field, the class's own bookkeeping, which it may keep setting
    if row.fix == "rename":
        replacement = f"`.{row.rename_to}`"
    elif row.replacement.startswith("remove"):
        replacement = "remove the read: the field is gone"
    else:
        replacement = f"remove the read: the field is gone (its keyword's replacement: {row.replacement})"
    return Migration(  # what a read of the field shares with its keyword: whose it is, when it went, its new name
        library=row.library, kind="attribute", owner=row.owner, name=row.name, replacement=replacement,
        fix="rename" if row.fix == "rename" else "none",
        error=f"AttributeError: '{{config}}' object has no attribute '{row.name}'",
        also=row.also, unlike=row.unlike, removed_in=row.removed_in,
        rename_to=row.rename_to, rename_since=row.rename_since, safety=row.safety, code=row.code,
        verify_on=row.verify_on, since_note=row.since_note,
    )


def older_spelling(row: Migration) -> Optional[Migration]:
    """For a keyword that moves into a config under a newer name (``SFTTrainer(max_seq_length=)``
    into ``SFTConfig(max_length=)``, new in TRL 0.16): the table's row that renames the config's
    own keyword of the old name to it (``SFTConfig(max_seq_length=)``, renamed ``max_length`` in
    0.16), whose name the config takes below that version; None where the table has none."""
    if row.fix != "move" or row.move_as in (None, row.name):
        return None
    for other in migrations():
        if (
            other.kind == "keyword" and other.owner == row.move_to and other.name == row.name
            and other.fix == "rename" and other.rename_to == row.move_as
        ):
            return other
    return None


@lru_cache(maxsize=None)
@lru_cache(maxsize=None)
def call_rows() -> Tuple[Migration, ...]:
    """The rows about calling a library callable (``kind = "call"``: building
    ``transformers.AdamW`` warns from 4.16)."""
    return tuple(row for row in migrations() if row.kind == "call")


@lru_cache(maxsize=None)
def called_names() -> FrozenSet[str]:
    """The last parts of the call rows' callables (``AdamW``): what the facts layer looks at."""
    return frozenset(row.owner_short for row in call_rows())


def migrated_names(kind: str) -> FrozenSet[str]:
    """The old names of one kind (what the facts layer records uses of)."""
    return frozenset(m.name for m in migrations() if m.kind == kind and m.name)


@lru_cache(maxsize=None)
def removed_keyword_names() -> FrozenSet[str]:
    """The keywords some version removed (a row with ``removed_in``, about the keyword, not some
    of its values): a project class that declares a field of that name keeps it where the
    library no longer reads it."""
    return frozenset(m.name for m in migrations() if m.kind == "keyword" and m.name and m.removed_in is not None and not m.values)


@lru_cache(maxsize=None)
def valued_names() -> FrozenSet[str]:
    """The keywords of rows with ``quiet_values``, ``silent_values`` or removed ``values``: the
    facts layer records the values the code gives them."""
    return frozenset(m.name for m in migrations() if m.kind == "keyword" and (m.quiet_values or m.values or m.silent_values))


def newer_names() -> FrozenSet[str]:
    """The new keywords that some version before the rename lacks (rows with an
    ``older_error``): the facts layer records their uses too."""
    return frozenset(newer_name_methods())


@lru_cache(maxsize=None)
def newer_name_methods() -> Dict[str, FrozenSet[Optional[str]]]:
    """For each of :func:`newer_names`, the methods its rows are about (None: the owner's
    constructor): a use of a name that is only new (no row's old name) can match a row only in
    a call of one of them (``dtype=`` in ``X.from_pretrained(...)``, not in ``torch.zeros(...)``)."""
    out: Dict[str, set] = {}
    for m in migrations():
        if m.older_error:
            out.setdefault(m.rename_to, set()).add(m.method)
    return {name: frozenset(methods) for name, methods in out.items()}




# --- torch: emulated bf16, torch.amp, release dates (torch.toml) ----------------------------
@lru_cache(maxsize=None)
def bf16_facts() -> Dict[str, object]:
    """When a GPU without native bf16 is refused and when it runs bf16 emulated: versions as
    tuples (``torch_emulates_since``...), the error texts as written."""
    table = _table("torch.toml")["bf16"]
    return {k: (parse_version(v) if k.endswith("_since") else v) for k, v in table.items()}


@lru_cache(maxsize=None)
def trainer_facts() -> Dict[str, Tuple[int, ...]]:
    """What the transformers ``Trainer`` runs under its own fp16 autocast, by version."""
    return {k: parse_version(v) for k, v in _table("torch.toml")["trainer"].items()}


@lru_cache(maxsize=None)
def amp_facts() -> Dict[str, Tuple[int, ...]]:
    """The torch versions that have each ``torch.amp`` spelling, and the deprecation of ``torch.cuda.amp``."""
    return {k: parse_version(v) for k, v in _table("torch.toml")["amp"].items()}


@lru_cache(maxsize=None)
def autocast_ops() -> Dict[str, FrozenSet[str]]:
    """What an fp16 autocast computes in float16 (``float16_functions`` qualified,
    ``float16_methods`` by name) and the tensor methods that keep their receiver's dtype."""
    return {k: frozenset(v) for k, v in _table("torch.toml")["autocast"].items()}


@lru_cache(maxsize=None)
def release_dates(dist: str) -> Tuple[Tuple[Tuple[int, ...], str], ...]:
    """``((minor, "YYYY-MM-DD"), ...)`` in version order: the day each minor of ``dist`` first
    reached PyPI (empty for a library the table does not list)."""
    table = _table("torch.toml").get("release_dates", {}).get(dist, {})
    return tuple(sorted((parse_version(k), v) for k, v in table.items()))


@dataclass(frozen=True)
class RemovedModule:
    """A library module, or a name of one, that ``removed_in`` took away (``torch._six``, torch
    2.0): code that imports it unconditionally runs only on the versions before
    (``libraries.toml``)."""

    dist: str
    module: str
    removed_in: Tuple[int, ...]


@lru_cache(maxsize=None)
def removed_modules() -> Dict[str, RemovedModule]:
    """Module name (or ``module.name``) -> its removal, for every ``[[removed_module]]`` of
    ``libraries.toml`` and every attention table of ``attention_classes.toml`` (code that imports
    one runs on the versions before its removal)."""
    rows = [
        *_table("libraries.toml").get("removed_module", ()),
        *({"dist": "transformers", "module": f"{r['module']}.{r['name']}", "removed_in": r["removed_in"]} for r in _attention_classes()),
    ]
    return {r["module"]: RemovedModule(r["dist"], r["module"], parse_version(r["removed_in"])) for r in rows}


def _attention_classes() -> List[dict]:
    """The per-backend attention tables transformers' modeling files defined and the minor each
    is gone from (``attention_classes.toml``, made by ``tools/attention_classes_table.py`` from
    the wheels)."""
    return list(_table("attention_classes.toml").get("attention_classes", ()))


def _attention_class_migrations() -> List[dict]:
    """A ``migrations.toml`` row for each attention table: its import raises ``ImportError``
    from the release that moved its model to ``ALL_ATTENTION_FUNCTIONS`` (no fix: the patch
    that used it is written for the old attention classes)."""
    return [
        {
            "library": "transformers", "kind": "import", "owner": r["module"], "names": [r["name"]],
            "removed_in": r["removed_in"], "fix": "none",
            "replacement": "the attention interface of 4.48 (`transformers.modeling_utils.ALL_ATTENTION_FUNCTIONS`)",
            "error": f"ImportError: cannot import name '{r['name']}' from '{r['module']}'",
        }
        for r in _attention_classes()
    ]


@lru_cache(maxsize=None)
def _removed_patterns() -> Tuple[RemovedModule, ...]:
    return tuple(row for name, row in removed_modules().items() if "*" in name)


def removed_module(name: str) -> Optional[RemovedModule]:
    """The removal of the module (or ``module.name``) ``name``: a row of its own, or a row whose
    ``module`` is a pattern that matches it (``transformers.Flax*``); None where none is."""
    found = removed_modules().get(name)
    if found is not None:
        return found
    pattern = next((row for row in _removed_patterns() if fnmatch.fnmatchcase(name, row.module)), None)
    return RemovedModule(pattern.dist, name, pattern.removed_in) if pattern is not None else None


def implying_libraries() -> Tuple[str, ...]:
    """The libraries whose pins imply the torch of their time."""
    return tuple(_table("torch.toml")["implies_torch"]["libraries"])


def torch_of_its_time(dist: str, minor: Tuple[int, ...]) -> Optional[Tuple[Tuple[int, ...], Tuple[int, ...]]]:
    """(the newest torch minor released while ``dist``'s minor ``minor`` was current, the
    next minor of ``dist`` whose release day bounds it), or None: ``minor`` is the newest
    listed (or not listed), so nothing caps torch."""
    dates = release_dates(dist)
    after = next(((v, day) for v, day in dates if v > tuple(minor[:2])), None)
    if after is None or not any(v == tuple(minor[:2]) for v, _ in dates):
        return None
    torch = [v for v, day in release_dates("torch") if day <= after[1]]
    return (torch[-1], after[0]) if torch else None


# --- what each release line requires of the others (requires.toml) ----------------------------
@lru_cache(maxsize=None)
def requirement_rows(dist: str) -> Tuple[Tuple[Tuple[int, ...], Dict[str, str]], ...]:
    """``((minor, {"torch": ">=1.9", "tokenizers": ">=0.11.1,<0.14"}), ...)`` in version order:
    what the releases of each minor of ``dist`` require (``requires.toml``, and for torch's
    companions ``companions.toml``; empty for a library neither lists)."""
    table = _requirement_table(dist)
    rows = []
    for minor, row in table.items():
        rows.append((parse_version(minor), {k: v for k, v in row.items() if k not in ("releases", "release")}))
    return tuple(sorted(rows))


@lru_cache(maxsize=None)
def release_requirements(dist: str, version: Tuple[int, ...]) -> Optional[Dict[str, str]]:
    """What one release of ``dist`` requires where it differs from its line's row (TRL 0.12.2:
    ``transformers<4.47.0``, which 0.12.0 does not say); None for a release whose line's row
    says it (or one not read)."""
    row = _requirement_table(dist).get(".".join(map(str, version[:2])), {})
    for text, own in row.get("release", {}).items():
        if parse_version(text) == tuple(version):
            return dict(own)
    return None


@lru_cache(maxsize=None)
def requirement_releases(dist: str) -> Dict[Tuple[int, ...], Tuple[str, ...]]:
    """The releases of each minor of ``dist`` whose metadata the row was read from."""
    return {parse_version(k): tuple(v.get("releases", ())) for k, v in _requirement_table(dist).items()}


def _requirement_table(dist: str) -> Dict[str, dict]:
    return _table("requires.toml").get(dist) or _table("companions.toml").get(dist, {})
