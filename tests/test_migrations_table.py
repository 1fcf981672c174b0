"""The migration table (knowledge/migrations.toml) checked against the installed wheels.

For every row (one removed or renamed name): when the installed library has reached the row's
``removed_in``, using the old name must fail there with exactly the row's ``error``; before
that (and for deprecated-only rows) it must still be accepted. Where the table says a model
call warns, it must log the warning on the installed version; where ``silent_since`` says the
installed version accepts it silently again, it must not. A callable a call row says warns
when called must be gone where removed, and before that take the keywords that silence it.
A replacement the fix writes
(``rename_to``, ``move_to``/``move_as``) must exist. So a table that drifts from the libraries
fails here, in CI, instead of misleading users.
"""
from __future__ import annotations

import contextlib
import dataclasses
import importlib
import io
import inspect
import re
import tempfile
import warnings

import pytest

from precision_lint.workspace.config import installed_version
from precision_lint.knowledge import Migration, at_least, migrations

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("trl")
pytest.importorskip("tokenizers")

ROWS = migrations()


def _id(row: Migration) -> str:
    where = f"{row.owner}.{row.method}" if row.method else row.owner
    value = f"={'|'.join(row.values)}" if row.values else ""
    return f"{row.kind}:{where}:{row.name or '<module>'}{value}"


def _resolve(qualname: str):
    module, _, name = qualname.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _message(row: Migration, **fill) -> str:
    """The row's error without its exception type, placeholders filled."""
    kind, _, text = row.error.partition(": ")
    for key, value in fill.items():
        text = text.replace("{" + key + "}", value)
    return kind, text


def _removed(row: Migration) -> bool:
    return row.stage(installed_version(row.library)) == "removed"


# --- things to call ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny-gpt2")
    transformers.GPT2LMHeadModel(
        transformers.GPT2Config(n_layer=1, n_embd=8, n_head=2, vocab_size=16, n_positions=16,
                                bos_token_id=0, eos_token_id=0)
    ).save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def tokenizer():
    from tokenizers import Tokenizer, models

    backend = Tokenizer(models.WordLevel({"<unk>": 0, "a": 1}, unk_token="<unk>"))
    return transformers.PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", pad_token="<unk>")


@pytest.fixture(scope="module")
def trainer(tmp_path_factory, tokenizer):
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(n_layer=1, n_embd=8, n_head=2, vocab_size=16, n_positions=16))
    args = transformers.TrainingArguments(output_dir=str(tmp_path_factory.mktemp("out")), report_to="none", use_cpu=True)
    return transformers.Trainer(model=model, args=args, processing_class=tokenizer)


def _accepts(callable_, name: str) -> bool:
    """A parameter of that name, or ``**kwargs`` whose code handles it by name."""
    params = inspect.signature(callable_).parameters
    if name in params:
        return True
    var_keyword = any(p.kind is p.VAR_KEYWORD for p in params.values())
    return var_keyword and f'"{name}"' in inspect.getsource(callable_)


def _warns(row: Migration, callable_) -> None:
    """A deprecated-only row's warning is the library's own text: written in its module, or,
    where the module composes it (``f"`{old}` is deprecated ..."``), what building the owner
    (a dataclass: ``TrainingArguments``) with the keyword warns."""
    if row.error.startswith("warning: ") and "`" in row.error:
        text = row.error.removeprefix("warning: ")
        source = inspect.getsource(inspect.getmodule(callable_))
        if text not in source and dataclasses.is_dataclass(_resolve(row.owner)) and row.kind == "keyword":
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                _resolve(row.owner)(output_dir=tempfile.mkdtemp(), report_to="none", **{row.name: {} if row.name.endswith("kwargs") else True})
            assert any(str(w.message) == text for w in caught), f"{row.owner} no longer warns {row.error!r}"
            return
        assert text in source, f"{row.owner} no longer warns {row.error!r}"


def _logged(call) -> str:
    """What transformers logs while ``call()`` runs (``warning_once`` forgotten first, so a
    warning an earlier test gave is given again)."""
    import logging

    logging.Logger.warning_once.cache_clear()
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    handler = Keep(logging.WARNING)
    root = logging.getLogger("transformers")
    root.addHandler(handler)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    finally:
        root.removeHandler(handler)
    return "\n".join(records)


def _warning_text(row: Migration) -> str:
    return row.error.removeprefix("warning: ")


def _silent_now(row: Migration) -> bool:
    """Whether the installed version has reached the row's ``silent_since``."""
    version = installed_version(row.library)
    return row.silent_since is not None and (version is None or at_least(version, row.silent_since))


def _fields(cls) -> set:
    return {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set(inspect.signature(cls.__init__).parameters)


# --- keyword rows --------------------------------------------------------------------------------
KEYWORDS = [r for r in ROWS if r.kind == "keyword" and not r.values]


@pytest.mark.parametrize("row", KEYWORDS, ids=_id)
def test_keyword_row(row, tiny_model_dir, tokenizer, tmp_path):
    owner = _resolve(row.owner)
    if row.method == "from_pretrained" and issubclass(owner, transformers.PreTrainedTokenizerBase):
        _check_tokenizer_from_pretrained(row, tokenizer, tmp_path)
        return
    if row.method == "from_pretrained" and issubclass(owner, transformers.PretrainedConfig):
        _check_config_from_pretrained(row, tiny_model_dir)
        return
    if row.method == "from_pretrained":
        _check_from_pretrained(row, tiny_model_dir)
        return
    if row.method == "from_config" and row.name == "torch_dtype":
        _check_from_config(row)
        return
    if row.name == "return_all_scores":
        _check_text_classification(row, tokenizer)
        return
    if inspect.isfunction(owner):
        function = owner
    else:
        function = getattr(owner, row.method) if row.method else owner.__init__
    has_var_keyword = any(p.kind is p.VAR_KEYWORD for p in inspect.signature(function).parameters.values())
    if _removed(row):
        assert not has_var_keyword, f"{row.owner} takes **kwargs: the table cannot say that {row.name!r} fails"
        kind, text = _message(row)
        bound = () if function is owner else (owner.__new__(owner),)
        with pytest.raises(TypeError) as info:
            function(*bound, **{row.name: None})
        assert kind == "TypeError"
        assert str(info.value) == text
    else:
        assert _accepts(function, row.name), f"{row.owner} no longer accepts {row.name!r}: set removed_in"
        _warns(row, function)
    if row.fix == "rename":
        assert _accepts(function, row.rename_to), f"{row.owner} has no {row.rename_to!r}"
    if row.fix == "move":
        assert row.move_as in _fields(_resolve(row.move_to)), f"{row.move_to} has no {row.move_as!r}"
    if dataclasses.is_dataclass(owner):  # every keyword the message tells users to write exists
        for keyword in re.findall(r"\b(\w+)=", row.replacement):
            assert keyword in _fields(owner), f"{row.owner} has no {keyword!r} (named in the replacement)"


# --- removed values of a keyword ----------------------------------------------------------------
VALUES = [r for r in ROWS if r.values]


@pytest.mark.parametrize("row", VALUES, ids=_id)
def test_removed_value_row(row, tmp_path):
    """A removed value, given in code and on a command line (``HfArgumentParser``): refused by
    the field's own check with the row's error (up to the list of choices, which changes with
    each release) where the installed version has reached ``removed_in``, accepted before; the
    values the message and the option advice name are accepted."""
    from transformers import HfArgumentParser

    owner = _resolve(row.owner)
    assert dataclasses.is_dataclass(owner) and row.name in _fields(owner), _id(row)
    build = lambda **kw: owner(output_dir=str(tmp_path), report_to="none", **kw)
    parse = lambda value: HfArgumentParser(owner).parse_args_into_dataclasses(
        ["--output_dir", str(tmp_path), "--report_to", "none", f"--{row.name}", value]
    )
    for written in row.values:
        value = written.strip("'\"")
        if not _removed(row):
            build(**{row.name: value})
            parse(value)
            continue
        kind, text = _message(row, value=value)
        assert kind == "ValueError" and text.endswith("[...]"), _id(row)
        with pytest.raises(ValueError) as info:
            build(**{row.name: value})
        assert str(info.value).startswith(text.removesuffix("[...]")), str(info.value)
        if row.option_error is None:  # the parser builds the class: its check refuses the value
            with pytest.raises(ValueError) as info:
                parse(value)
            assert str(info.value).startswith(text.removesuffix("[...]")), str(info.value)
            continue
        status, said = row.option_error.replace("{value}", value).split(" (argparse: ", 1)
        assert status == "SystemExit: 2" and said.endswith("(choose from ...))"), _id(row)
        with pytest.raises(SystemExit) as exited:
            with contextlib.redirect_stderr(io.StringIO()) as err:
                parse(value)
        assert exited.value.code == 2
        assert f"error: {said.removesuffix('(choose from ...))')}" in err.getvalue(), err.getvalue()
    advised = re.findall(rf"\b{row.name}='([^']+)'", row.replacement) + re.findall(rf"--{row.name} (\S+?)`", row.option_replacement or "")
    assert advised, f"{_id(row)}: the replacement names no value"
    for value in advised:
        build(**{row.name: value})


def _check_tokenizer_from_pretrained(row, tokenizer, folder):
    """A tokenizer saved and loaded again with the row's keyword: accepted, warning only where
    the installed version has not reached ``silent_since``, and the new spelling a parameter."""
    tokenizer.save_pretrained(folder)
    _check_loader_warns(row, lambda **given: transformers.AutoTokenizer.from_pretrained(str(folder), **given))
    if row.fix == "rename":
        assert row.rename_to in inspect.signature(transformers.PreTrainedTokenizerBase.from_pretrained).parameters


def _check_config_from_pretrained(row, folder):
    """A saved model's config loaded again with the row's keyword (through ``AutoConfig``, as
    code writes it): accepted, warning only where the installed version has not reached
    ``silent_since``, and the new spelling taken by the config's loader."""
    load = lambda **given: transformers.AutoConfig.from_pretrained(str(folder), **given)  # noqa: E731
    _check_loader_warns(row, load)
    if row.fix == "rename":
        load(**{row.rename_to: None})


def _check_loader_warns(row, load):
    """``load(**{row.name: True})`` is accepted, and warns (a warning or a log line with the row's
    text) exactly where the installed version has not reached ``silent_since``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        log = _logged(lambda: load(**{row.name: True}))
    said = [str(w.message) for w in caught] + [log]
    if _silent_now(row):
        assert not any(_warning_text(row).split(": ", 1)[-1] in s for s in said), f"{_id(row)}: the installed version warns"
    else:
        assert any(_warning_text(row).split(": ", 1)[-1] in s for s in said), f"{_id(row)}: no warning"


def _check_text_classification(row, tokenizer):
    """A text-classification pipeline of a tiny three-label classifier, built with the row's
    keyword: accepted, warning only where the installed version has not reached
    ``silent_since``; from there silent, and the pipeline gives the top label alone where the
    keyword asked for every label's score, which the replacement ``top_k=None`` still gives."""
    model = transformers.GPT2ForSequenceClassification(transformers.GPT2Config(
        n_layer=1, n_embd=8, n_head=2, vocab_size=16, n_positions=16, num_labels=3, pad_token_id=0,
        bos_token_id=0, eos_token_id=0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        classify = transformers.pipeline("text-classification", model=model, tokenizer=tokenizer, **{row.name: True})
        found = classify("a a")
    said = [str(w.message) for w in caught]
    if _silent_now(row):
        assert not any(_warning_text(row).split(": ", 1)[-1] in s for s in said), f"{_id(row)}: the installed version warns"
        assert len(found) == 1 and isinstance(found[0], dict), f"{_id(row)}: still gives every score: {found!r}"
    else:
        assert any(_warning_text(row).split(": ", 1)[-1] in s for s in said), f"{_id(row)}: no warning"
    every = transformers.pipeline("text-classification", model=model, tokenizer=tokenizer, top_k=None)("a a")
    scores = every[0] if every and isinstance(every[0], list) else every  # one list per text
    assert len(scores) == 3, f"top_k=None no longer gives every label's score: {every!r}"


def _check_from_pretrained(row, model_dir):
    # an Auto class for the rows about the Auto classes (their own path: the config is loaded first)
    auto = row.owner.startswith("transformers.AutoModel")
    model_class = transformers.AutoModelForCausalLM if auto else transformers.GPT2LMHeadModel
    value = torch.float32 if row.name == "torch_dtype" else True
    if _removed(row):
        kind, text = _message(row, model=model_class.__name__)
        with pytest.raises(TypeError) as info:
            model_class.from_pretrained(model_dir, **{row.name: value})
        assert kind == "TypeError"
        assert str(info.value) == text
    else:
        log = _logged(lambda: model_class.from_pretrained(model_dir, **{row.name: value}))  # still accepted
        _warns(row, transformers.PreTrainedModel.from_pretrained)
        if row.error.startswith("warning: ") and row.stage(installed_version(row.library)) == "deprecated":
            silent = _silent_now(row) and not (row.silent_values or row.silent_with)
            if silent:
                assert _warning_text(row) not in log, f"{_id(row)}: silent_since says the installed version is silent"
            else:
                assert _warning_text(row) in log, f"{_id(row)}: no longer warns {row.error!r} (silent_since?)"
            if _silent_now(row):  # the calls the silence is limited to
                for silent_value in row.silent_values:
                    log = _logged(lambda: model_class.from_pretrained(model_dir, **{row.name: silent_value}))
                    assert _warning_text(row) not in log, f"{_id(row)}: warns for {row.name}={silent_value!r}"
                if "config" in row.silent_with:
                    config = transformers.AutoConfig.from_pretrained(model_dir)
                    log = _logged(lambda: model_class.from_pretrained(model_dir, config=config, **{row.name: value}))
                    assert _warning_text(row) not in log, f"{_id(row)}: warns beside config="
    if row.fix == "rename":
        new_value = torch.float32 if row.rename_to == "dtype" else None
        model_class.from_pretrained(model_dir, **{row.rename_to: new_value})


def _check_from_config(row):
    config = transformers.GPT2Config(n_layer=1, n_embd=8, n_head=2, vocab_size=16, n_positions=16)
    model_class = transformers.AutoModelForCausalLM
    assert row.matches_owner("transformers.AutoModelForCausalLM"), _id(row)
    log = _logged(lambda: model_class.from_config(config, **{row.name: torch.float32}))
    if row.stage(installed_version(row.library)) == "deprecated" and not _silent_now(row):
        assert _warning_text(row) in log, f"{_id(row)}: no longer warns {row.error!r}"
    if row.fix == "rename":
        model_class.from_config(config, **{row.rename_to: torch.float32})


def test_silent_since_is_consistent():
    """``silent_since`` comes after the warning started, on rows that only warn; what limits it
    is only ever written with it."""
    for row in ROWS:
        if row.silent_since is not None:
            assert row.deprecated_in is not None and row.removed_in is None, _id(row)
            assert not at_least(row.deprecated_in, row.silent_since), _id(row)
            assert row.error.startswith("warning: "), _id(row)
        else:
            assert not row.silent_values and not row.silent_with, _id(row)


# --- options of a command line (HfArgumentParser) ------------------------------------------------
def _parsed_classes(row: Migration):
    """The installed dataclasses an ``HfArgumentParser`` may fill that the row's keyword is a
    field of: its owner and the library's subclasses of it in the bases table."""
    from precision_lint.knowledge import library_bases

    out = []
    for name in sorted({row.owner, *library_bases()}):
        try:
            cls = _resolve(name)
        except (ImportError, AttributeError):
            continue
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and issubclass(cls, _resolve(row.owner)):
            out.append(cls)
    return out


DATACLASS_KEYWORDS = [
    r for r in KEYWORDS
    if r.method is None and dataclasses.is_dataclass(_resolve(r.owner)) and r.code is None
]


@pytest.mark.parametrize("row", DATACLASS_KEYWORDS, ids=_id)
def test_a_removed_field_as_a_command_line_option(row):
    """What a launch passing ``--name value`` to ``parse_args_into_dataclasses`` of a parser of
    the owner (or a library subclass) meets on the installed version: where removed, argparse
    leaves both words over and the parse raises the ValueError MP302 quotes, unless ``--name``
    is a unique prefix of one of the parser's options, which argparse reads as that option
    (the row's ``abbreviates``); before that, the option is the field."""
    import inspect as _inspect

    from transformers import HfArgumentParser

    source = _inspect.getsource(HfArgumentParser.parse_args_into_dataclasses)
    assert 'raise ValueError(f"Some specified arguments are not used by the HfArgumentParser: {remaining_args}")' in source
    classes = _parsed_classes(row)
    assert classes, _id(row)
    for cls in classes:
        parser = HfArgumentParser(cls)
        options = [o for action in parser._actions for o in action.option_strings]
        for written in (f"--{row.name}", f"--{row.name.replace('_', '-')}"):
            if not _removed(row):
                assert written in options, f"{_id(row)}: {cls.__name__} has no {written}"
                continue
            assert written not in options, f"{_id(row)}: {cls.__name__} still has {written}"
            begun = [o for o in options if o.startswith(written)]
            if row.abbreviates:
                new = f"--{row.abbreviates}" if "_" in written or "_" not in row.name else f"--{row.abbreviates.replace('_', '-')}"
                assert begun == [new], f"{_id(row)}: {written} in {cls.__name__} begins {begun}, not {new}"
                namespace, left = parser.parse_known_args([written, "1"])
                assert left == [] and getattr(namespace, row.abbreviates) is not None
            else:
                assert begun == [], f"{_id(row)}: {written} begins {begun} in {cls.__name__} (`abbreviates`?)"
                assert parser.parse_known_args([written, "1"])[1] == [written, "1"]


# --- attribute rows ---------------------------------------------------------------------------
ATTRIBUTES = [r for r in ROWS if r.kind == "attribute"]


def _instance(row, trainer, tokenizer):
    if row.owner == "transformers.Trainer":
        return trainer
    if row.owner == "transformers.PreTrainedTokenizerBase":
        return tokenizer
    cls = _resolve(row.verify_on or row.owner)
    if dataclasses.is_dataclass(cls) and issubclass(cls, transformers.TrainingArguments):
        # a TrainingArguments-like config (a removed field's read): built for the CPU, as a test runs
        return cls(output_dir="out", report_to="none", use_cpu=True, bf16=False)
    if issubclass(cls, transformers.ProcessorMixin):
        # a processor without its feature extractor and tokenizer: attribute lookup as on a built one
        return cls.__new__(cls)
    if issubclass(cls, torch.nn.Module):
        # an nn.Module with its bookkeeping but no weights: attribute lookup as on a built model
        instance = cls.__new__(cls)
        torch.nn.Module.__init__(instance)
        return instance
    return cls()


@pytest.mark.parametrize("row", ATTRIBUTES, ids=_id)
def test_attribute_row(row, trainer, tokenizer):
    pytest.importorskip(row.library)  # accelerate's rows: transformers and TRL are required above
    instance = _instance(row, trainer, tokenizer)
    if _removed(row):
        kind, text = _message(row, tokenizer=type(instance).__name__, config=type(instance).__name__, processor=type(instance).__name__, model=type(instance).__name__)
        with pytest.raises(AttributeError) as info:
            getattr(instance, row.name)
        assert kind == "AttributeError"
        assert str(info.value) == text
        if row.owner == "transformers.PreTrainedTokenizerBase":  # slow tokenizers too
            for backend in ("PythonBackend", "SentencePieceBackend", "PreTrainedTokenizerBase"):
                cls = getattr(transformers, backend, None)
                assert cls is None or not hasattr(cls, row.name), f"{backend} still has {row.name}"
    else:
        log = _logged(lambda: getattr(instance, row.name))
        if row.error.startswith("warning: `") and row.stage(installed_version(row.library)) == "deprecated":
            assert _warning_text(row) in log, f"{_id(row)}: no longer warns {row.error!r}"
    if row.fix == "rename":
        if isinstance(instance, transformers.ProcessorMixin) and row.rename_to in type(instance).get_attributes():
            return  # a part the processor's __init__ sets (`image_processor`), absent on a bare instance
        getattr(instance, row.rename_to)


STORED = [r for r in ATTRIBUTES if r.on_store]


@pytest.mark.parametrize("row", STORED, ids=_id)
def test_attribute_store_row(row, trainer, tokenizer, tmp_path):
    """A store of the name does what `on_store` says on the installed version: warns as the read
    does, succeeds and is ignored (what the library reads stays as it was), or succeeds and a
    later `save_pretrained` raises the ValueError `store_effect` quotes."""
    instance = _instance(row, trainer, tokenizer)
    value = ["<unk>"] if row.name == "additional_special_tokens" else 3
    if row.on_store == "warns":
        if row.stage(installed_version(row.library)) == "deprecated":
            assert _warning_text(row) in _logged(lambda: setattr(instance, row.name, getattr(instance, row.rename_to)))
        return
    assert _removed(row), f"{_id(row)}: `on_store` describes the versions that removed the name"
    if isinstance(instance, transformers.PreTrainedTokenizerBase):
        before = (instance.special_tokens_map, instance.all_special_tokens)
        setattr(instance, row.name, value)  # succeeds: no AttributeError
        assert row.on_store == "ignored" and (instance.special_tokens_map, instance.all_special_tokens) == before
        return
    before = {k: v for k, v in instance.to_dict().items() if k != row.name}
    setattr(instance, row.name, value)  # succeeds: no AttributeError
    if row.on_store == "ignored":
        assert {k: v for k, v in instance.to_dict().items() if k != row.name} == before
        return
    with pytest.raises(ValueError) as info:
        instance.save_pretrained(tmp_path)
    quoted = row.store_effect.split("raises `", 1)[1].split("` (", 1)[0].removeprefix("ValueError: ")
    assert str(info.value).startswith(quoted)


# --- import rows ------------------------------------------------------------------------------
IMPORTS = [r for r in ROWS if r.kind == "import"]


@pytest.mark.parametrize("row", IMPORTS, ids=_id)
def test_import_row(row):
    pytest.importorskip(row.library)  # peft's rows: transformers and TRL are required above
    kind, text = _message(row)
    if not row.name:  # the module itself
        if _removed(row):
            with pytest.raises(ModuleNotFoundError) as info:
                importlib.import_module(row.owner)
            assert kind == "ModuleNotFoundError" and str(info.value) == text
        if row.fix == "rename":
            importlib.import_module(row.rename_to)
        return
    statement = f"from {row.owner} import {row.name}"
    if _removed(row):
        with pytest.raises(ImportError) as info:
            exec(statement, {})  # noqa: S102 - the import statement itself is what fails
        # a name of a module that is gone itself (`from transformers.data.processors.squad
        # import SquadV1Processor`) fails with the subclass ModuleNotFoundError
        assert kind == type(info.value).__name__ and kind in ("ImportError", "ModuleNotFoundError")
        # the message goes on with the package's path: ` (/…/site-packages/trl/__init__.py)`
        assert str(info.value) == text or str(info.value).startswith(text + " (")
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(statement, {})  # noqa: S102 - the import statement itself is what fails
        if row.error.startswith("warning: "):  # the library's own deprecation text
            source = inspect.getsource(importlib.import_module(row.owner))
            assert row.error.removeprefix("warning: ") in source, f"{row.owner} no longer warns {row.error!r}"
    if row.rename_to:
        exec(f"from {row.owner} import {row.rename_to}", {})  # noqa: S102
    if row.moved_to:
        assert hasattr(importlib.import_module(row.moved_to), row.name), f"{row.moved_to} has no {row.name}"
    elif row.replacement.startswith(("trl.", "transformers.")):  # a module named as the new home
        importlib.import_module(row.replacement.split()[0])


# --- call rows --------------------------------------------------------------------------------
CALLS = [r for r in ROWS if r.kind == "call"]


@pytest.mark.parametrize("row", CALLS, ids=_id)
def test_call_row(row):
    """Where the installed version has reached ``removed_in``, the callable is gone under every
    spelling the extractor resolves (``from <module> import <name>`` of its own module and of
    the package, the package's attribute); before that, it exists, takes each ``unless``
    keyword, and its module warns the row's text. The ``torch.optim.AdamW`` the advice names
    exists with the defaults the replacement quotes."""
    pytest.importorskip(row.library)
    module, _, name = row.owner.rpartition(".")
    if name[:1].islower() and module.rpartition(".")[2][:1].isupper():
        module, _, name = module.rpartition(".")  # a class's method (`AutoModelWithLMHead.from_pretrained`): the class is what goes
    kind, text = _message(row)
    if _removed(row):
        assert kind == "ImportError"
        with pytest.raises(ImportError) as info:
            exec(f"from {module} import {name}", {})  # noqa: S102 - the import is what fails
        assert str(info.value) == text or str(info.value).startswith(text + " (")
        with pytest.raises(AttributeError):
            getattr(importlib.import_module(module), name)
    else:
        callable_ = _resolve(row.owner)
        for keyword, _ in row.unless:
            assert _accepts(callable_, keyword), f"{row.owner} no longer takes {keyword!r}"
        category, said = row.warning.split(": ", 1)
        source = inspect.getsource(inspect.getmodule(callable_))
        assert category in source and said.split(". ")[0] in source, f"{row.owner} no longer warns {row.warning!r}"
    for replacement in re.findall(r"\btorch\.[\w.]+", row.replacement):
        target = _resolve(replacement)
        defaults = {p.name: p.default for p in inspect.signature(target).parameters.values()}
        quoted = re.findall(r"(\w+)=([\d.e-]+)(?= where|,)", row.replacement.split(" where ")[0] + " where")
        assert quoted, f"{_id(row)}: the replacement quotes no default of {replacement}"
        for keyword, value in quoted:
            assert defaults[keyword] == float(value), f"{replacement}({keyword}=) defaults to {defaults[keyword]!r}"


def test_call_rows_warn_between_deprecation_and_removal():
    for row in CALLS:
        assert row.deprecated_in is not None and row.warning and row.fix == "none" and not row.name, _id(row)
        assert row.removed_in is None or at_least(row.removed_in, row.deprecated_in), _id(row)
        assert row.warning.split(": ", 1)[0].endswith("Warning"), _id(row)


# --- the table itself ---------------------------------------------------------------------------
def test_table_covers_the_reference_families():
    """At least the rows of the reference's 85 that still apply, one name each or more."""
    by_library = {lib: {(r.kind, r.owner, r.name) for r in ROWS if r.library == lib} for lib in ("transformers", "trl")}
    assert len(by_library["transformers"]) >= 50 and len(by_library["trl"]) >= 60
    assert {r.kind for r in ROWS} == {"keyword", "attribute", "import", "call"}


def test_every_rename_and_move_has_a_version():
    for row in ROWS:
        if row.fix == "rename":
            assert row.rename_since is not None, _id(row)
        if row.fix == "move":
            assert row.move_since is not None and row.move_as, _id(row)
        assert row.removed_in or row.deprecated_in, _id(row)


def test_every_library_of_the_table_is_named_in_messages():
    from precision_lint.rules.migration_findings import VERSION_TEXT

    assert {row.library for row in ROWS} <= set(VERSION_TEXT)


def test_the_classes_a_row_leaves_out_still_have_the_attribute():
    """The ``unlike`` of the ``language_model`` row names the classes its ``also`` pattern
    matches that keep the attribute on 5.x (BLIP-2's, review 27a): each still sets or defines
    it in the installed library's source, and each does match the row's ``also``."""
    import fnmatch
    import inspect

    rows = [r for r in ATTRIBUTES if r.unlike and r.name == "language_model"]
    assert rows
    for row in rows:
        for name in row.unlike:
            if "*" in name:
                continue
            assert any(fnmatch.fnmatch(name, pattern) for pattern in row.also), f"{name} is not matched by {row.also}"
            cls = getattr(transformers, name.split(".", 1)[1])
            source = inspect.getsource(cls)
            assert f"self.{row.name} =" in source or f"def {row.name}" in source, f"{name} no longer has {row.name}"
