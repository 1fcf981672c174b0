"""``dataclass`` as the standard library makes it, for less at import.

The standard decorator compiles six functions from source for each frozen class (``__init__``,
``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``; three for a mutable
one): the ninety-odd classes a check imports cost more than anything else a small file's check
does (#23, the pre-commit case). Here the methods an analysis calls (``__init__``, ``__eq__``,
``__hash__``) are compiled from the standard library's texts in one piece per class (their
signatures, defaults and factories, ``object.__setattr__`` in a frozen class: as fast as the
standard ones); ``__repr__`` and the frozen ``__setattr__``/``__delattr__`` are the same
functions made without compiling (closures over the field names); and the class reads as a
standard dataclass to ``dataclasses.fields``, ``replace``, ``asdict``, ``is_dataclass``, pickle
and a standard subclass.

What this does not write (``order=True``, ``__post_init__``, ``InitVar``, keyword-only fields, a
method of its own among those above, a dataclass base) goes to the standard decorator.

``slots=True`` (on every Python the package supports: the standard decorator has it from 3.10)
gives the class ``__slots__`` of its fields and no ``__dict__``: for the facts a run holds by
the hundred thousand (values, spans, references), an instance's ``__dict__`` was most of its
size (#23). A frozen one pickles as its class called with its fields (pickle's default restores
slots with ``setattr``, which a frozen class refuses).
"""
# no `from __future__ import annotations`: exec() compiles with this module's flags, and the
# annotations of __init__ are the types themselves, as the standard decorator leaves them
import dataclasses
import sys
from dataclasses import MISSING, FrozenInstanceError
from operator import attrgetter
from reprlib import recursive_repr

_STANDARD = dataclasses.dataclass
# the marker a parameter with a factory defaults to (its repr, "<factory>", is in the signature)
_HAS_DEFAULT_FACTORY = getattr(dataclasses, "_HAS_DEFAULT_FACTORY", None)
_OWN = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__post_init__")


def dataclass(cls=None, *, frozen: bool = False, order: bool = False, slots: bool = False):
    """``dataclasses.dataclass(cls, frozen=frozen, order=order, slots=slots)``, the same class."""

    def wrap(cls):
        if order or not _writable(cls):
            made = _STANDARD(cls, frozen=frozen, order=order)
            return _with_slots(made, frozen, _plain_init(made)) if slots else made
        return _process(cls, frozen, slots)

    return wrap if cls is None else wrap(cls)


def _with_slots(cls, frozen: bool, setters: bool):
    """``cls`` made again with ``__slots__`` of its fields, as the standard ``slots=True`` makes
    it: the class attributes that held the fields' defaults go (``__init__`` holds them).

    A frozen one gets an ``__init__`` that stores each field through its slot's own setter
    (``type(self).kind.__set__``), not ``object.__setattr__(self, "kind", kind)`` as the
    standard decorator writes it: the same effect for a third of the time, which counts for
    the classes made by the hundred thousand (values, spans, trained-object references) and
    made again by unpickling cached facts (``__reduce__`` below calls the class: a run with
    one file edited unpickles 1.9 million objects on transformers, #23).

    ``setters``: whether that ``__init__`` is made here (:func:`_process` makes the class here
    before its methods; the standard decorator's own ``__init__`` is replaced only where it does
    nothing but store the fields, :func:`_plain_init`)."""
    fields = dataclasses.fields(cls)
    names = tuple(f.name for f in fields)
    if any(not f.init for f in fields) or len(fields) != len(cls.__dataclass_fields__):
        raise TypeError(f"{cls.__qualname__}: slots=True needs every field in __init__")
    body = {k: v for k, v in cls.__dict__.items() if k not in names and k not in ("__dict__", "__weakref__")}
    body["__slots__"] = names
    new = type(cls)(cls.__name__, cls.__bases__, body)
    new.__qualname__ = cls.__qualname__
    if frozen and setters:
        fields = dataclasses.fields(new)
        module = sys.modules.get(cls.__module__)
        _set(new, _init_with_setters(new, fields, module.__dict__ if module is not None else {}))
    if frozen:  # bound to the new class (the old ones name the class they were made for)
        _set(new, _setattr(new, names))
        _set(new, _delattr(new, names))
        _set(new, _reduce(names))
    return new


def _writable(cls) -> bool:
    if _HAS_DEFAULT_FACTORY is None or any(name in cls.__dict__ for name in _OWN) or hasattr(cls, "__post_init__"):
        return False
    if any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:]):
        return False
    for annotation in cls.__dict__.get("__annotations__", {}).values():
        text = annotation if isinstance(annotation, str) else repr(annotation)
        if "InitVar" in text or "KW_ONLY" in text:
            return False
    return not any(
        isinstance(value, dataclasses.Field) and getattr(value, "kw_only", MISSING) is True
        for value in cls.__dict__.values()
    )


def _plain_init(cls) -> bool:
    """Whether the standard decorator's ``__init__`` of ``cls`` only stores its fields (no
    ``__post_init__``, no ``InitVar``, no keyword-only field): one :func:`_init_with_setters`
    may stand for."""
    if hasattr(cls, "__post_init__") or "__init__" not in cls.__dict__:
        return False
    fields = dataclasses.fields(cls)
    if any(getattr(f, "kw_only", False) is True for f in fields):
        return False
    wanted = [f.name for f in fields]
    import inspect

    return list(inspect.signature(cls.__init__).parameters)[1:] == wanted


def _process(cls, frozen: bool, slots: bool = False):
    doc_missing = not getattr(cls, "__doc__")
    if doc_missing:  # the standard decorator would describe the signature of an __init__ not yet there
        cls.__doc__ = "-"
    # the fields, their defaults and __match_args__ as the standard decorator sets them, and no method
    cls = _STANDARD(cls, init=False, repr=False, eq=False)
    params = cls.__dataclass_params__
    params.init = params.repr = params.eq = True
    params.frozen = frozen
    if slots:  # the class with slots first: a frozen one's __init__ is made with its slots' setters
        cls = _with_slots(cls, frozen, setters=True)
    fields = dataclasses.fields(cls)
    module = sys.modules.get(cls.__module__)
    hashed = [f for f in fields if (f.compare if f.hash is None else f.hash)] if frozen else None
    with_init = not (slots and frozen)
    for fn in _compiled(fields, [f for f in fields if f.compare], hashed, frozen, module.__dict__ if module is not None else {}, with_init):
        _set(cls, fn)
    _set(cls, _repr(tuple(f.name for f in fields if f.repr)))
    if frozen:
        if not slots:  # (with slots: set by _with_slots)
            names = tuple(f.name for f in fields)
            _set(cls, _setattr(cls, names))
            _set(cls, _delattr(cls, names))
    else:  # eq without frozen: unhashable, as the standard decorator leaves it
        cls.__hash__ = None
    if doc_missing:
        import inspect

        cls.__doc__ = cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")
    return cls


def _set(cls, fn) -> None:
    fn.__qualname__ = f"{cls.__qualname__}.{fn.__name__}"
    setattr(cls, fn.__name__, fn)


def _tuple(obj: str, fields) -> str:
    return f"({','.join(f'{obj}.{f.name}' for f in fields)},)" if fields else "()"


def _compiled(fields, compared, hashed, frozen: bool, globals: dict, with_init: bool = True):
    """``__init__`` (``with_init``), ``__eq__`` and (``hashed``) ``__hash__``, compiled together
    from the texts the standard decorator writes (``dataclasses._init_fn``, ``_cmp_fn``,
    ``_hash_fn``): the methods an analysis calls most, as fast as the standard ones."""
    local_vars = {"__dataclass_builtins_object__": object}
    text = f"def __create_fn__({{names}}):\n"
    made = []
    if with_init:
        text += _init_text(fields, local_vars, lambda self, name, value: (
            f"__dataclass_builtins_object__.__setattr__({self},{name!r},{value})" if frozen else f"{self}.{name}={value}"
        ))
        made.append("__init__")
    text += (
        f" def __eq__(self,other):\n"
        f"  if other.__class__ is self.__class__:\n"
        f"   return {_tuple('self', compared)}=={_tuple('other', compared)}\n"
        f"  return NotImplemented\n"
    )
    made.append("__eq__")
    if hashed is not None:
        text += f" def __hash__(self):\n  return hash({_tuple('self', hashed)})\n"
        made.append("__hash__")
    return _made(text, made, local_vars, globals)


def _init_with_setters(cls, fields, globals: dict):
    """The ``__init__`` of a frozen class with slots: each field stored by its slot's setter
    (see :func:`_with_slots`)."""
    local_vars = {f"_dataclass_set_{f.name}": cls.__dict__[f.name].__set__ for f in fields}
    text = "def __create_fn__({names}):\n" + _init_text(
        fields, local_vars, lambda self, name, value: f"_dataclass_set_{name}({self},{value})"
    )
    return _made(text, ["__init__"], local_vars, globals)[0]


def _init_text(fields, local_vars: dict, store) -> str:
    """The text of ``__init__`` (inside ``__create_fn__``), the names it needs added to
    ``local_vars``; ``store(self, name, value)``: the statement that stores a field."""
    self_name = "__dataclass_self__" if "self" in (f.name for f in fields) else "self"
    local_vars.update({f"_type_{f.name}": f.type for f in fields})
    local_vars.update({"MISSING": MISSING, "_HAS_DEFAULT_FACTORY": _HAS_DEFAULT_FACTORY, "_return_type": None})
    params, body = [self_name], []
    for f in fields:
        default = f"_dflt_{f.name}"
        if f.default_factory is not MISSING:
            local_vars[default] = f.default_factory
            value = f"{default}() if {f.name} is _HAS_DEFAULT_FACTORY else {f.name}" if f.init else f"{default}()"
        elif f.init:
            if f.default is not MISSING:
                local_vars[default] = f.default
            value = f.name
        else:
            value = None  # the class attribute holds the default
        if value is not None:
            body.append(store(self_name, f.name, value))
        if f.init:
            if f.default is not MISSING:
                params.append(f"{f.name}:_type_{f.name}=_dflt_{f.name}")
            elif f.default_factory is not MISSING:
                params.append(f"{f.name}:_type_{f.name}=_HAS_DEFAULT_FACTORY")
            else:
                params.append(f"{f.name}:_type_{f.name}")
    lines = "\n".join(f"  {b}" for b in body or ["pass"])
    return f" def __init__({','.join(params)})->_return_type:\n{lines}\n"


def _made(text: str, names: list, local_vars: dict, globals: dict) -> list:
    """The functions ``names`` that ``text`` (a ``__create_fn__`` over ``local_vars``) makes."""
    text = text.replace("{names}", ", ".join(local_vars)) + f" return {', '.join(names)},\n"
    ns: dict = {}
    exec(text, globals, ns)
    return list(ns["__create_fn__"](**local_vars))


def _repr(names):
    def __repr__(self):
        return self.__class__.__qualname__ + "(" + ", ".join([f"{n}={getattr(self, n)!r}" for n in names]) + ")"

    return recursive_repr()(__repr__)


def _reduce(names):
    get = attrgetter(*names) if len(names) > 1 else (lambda self: tuple(getattr(self, n) for n in names))

    def __reduce__(self):
        return (self.__class__, get(self))

    return __reduce__


def _setattr(cls, names):
    def __setattr__(self, name, value):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    return __setattr__


def _delattr(cls, names):
    def __delattr__(self, name):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __delattr__
