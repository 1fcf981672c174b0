"""precision_lint._dataclass makes the class the standard ``dataclasses.dataclass`` makes."""
from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import pickle
import pkgutil
from dataclasses import field
from typing import Optional, Tuple

import pytest

import precision_lint
from precision_lint import _dataclass


def _bodies():
    class Plain:
        a: int
        b: str = "x"
        c: Tuple[int, ...] = ()

    class Documented:
        """Its own words."""

        name: str
        items: list = field(default_factory=list)
        seen: dict = field(default_factory=dict, init=False, repr=False, compare=False)
        note: Optional[str] = field(default=None, compare=False)
        weight: float = field(default=1.0, hash=False)

    class Empty:
        pass

    class One:
        value: object

    class SelfField:
        self: int
        other: int = 2

    class WithMethods:
        x: int
        y: int = 0

        def total(self) -> int:
            return self.x + self.y

        @property
        def doubled(self) -> int:
            return 2 * self.x

    return Plain, Documented, Empty, One, SelfField, WithMethods


def _outcome(fn, *args):
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - the same error, or the same value
        return type(exc), str(exc)


ARGS = {
    "Plain": ((1,), (1, "y", (2,))),
    "Documented": (("n",), ("n", [1], None, 2.0)),
    "Empty": ((), ()),
    "One": ((float("nan"),), ([1],)),
    "SelfField": ((1,), (1, 3)),
    "WithMethods": ((1,), (1, 2)),
}


def _pair(body, frozen):
    def copy_of(cls):
        return type(cls.__name__, cls.__bases__, {k: v for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__")})

    theirs = dataclasses.dataclass(copy_of(body), frozen=frozen)
    ours = _dataclass.dataclass(copy_of(body), frozen=frozen)
    assert ours.__init__.__code__ is not theirs.__init__.__code__
    return ours, theirs


def _same_class(ours, theirs):
    assert str(inspect.signature(ours)) == str(inspect.signature(theirs))
    assert ours.__doc__.replace("_pair.<locals>.", "") == theirs.__doc__.replace("_pair.<locals>.", "")
    assert ours.__match_args__ == theirs.__match_args__
    assert [(f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.hash, f.compare) for f in dataclasses.fields(ours)] == [
        (f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.hash, f.compare) for f in dataclasses.fields(theirs)
    ]
    for name in ("init", "repr", "eq", "order", "unsafe_hash", "frozen"):
        assert getattr(ours.__dataclass_params__, name) == getattr(theirs.__dataclass_params__, name), name
    assert (ours.__hash__ is None) == (theirs.__hash__ is None)
    assert set(ours.__dict__) == set(theirs.__dict__)
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
        mine, std = ours.__dict__.get(name), theirs.__dict__.get(name)
        assert (mine is None) == (std is None), name
        if mine is not None:
            assert mine.__qualname__ == std.__qualname__ and mine.__name__ == std.__name__
    assert ours.__init__.__annotations__ == theirs.__init__.__annotations__
    assert repr(ours.__init__.__defaults__) == repr(theirs.__init__.__defaults__)


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("index", range(6))
def test_the_class_and_its_instances_are_the_standard_ones(index, frozen):
    body = _bodies()[index]
    ours, theirs = _pair(body, frozen)
    _same_class(ours, theirs)
    for args in ARGS[body.__name__]:
        a, b = ours(*args), theirs(*args)
        assert repr(a).replace("Ours", "") == repr(b)
        assert vars(a) == vars(b) or repr(vars(a)) == repr(vars(b))
        assert (a == ours(*args)) == (b == theirs(*args))
        assert (a != ours(*args)) == (b != theirs(*args))
        assert a.__eq__(b) is NotImplemented and b.__eq__(a) is NotImplemented
        if frozen:
            assert _outcome(hash, a) == _outcome(hash, b)
            for action in (lambda o: setattr(o, "a", 1), lambda o: setattr(o, "zzz", 1), lambda o: delattr(o, "zzz")):
                with pytest.raises(dataclasses.FrozenInstanceError) as mine:
                    action(a)
                with pytest.raises(dataclasses.FrozenInstanceError) as std:
                    action(b)
                assert str(mine.value) == str(std.value)
        else:
            with pytest.raises(TypeError):
                hash(a)
            a.extra = 1
        assert dataclasses.asdict(a) == dataclasses.asdict(b) or repr(dataclasses.asdict(a)) == repr(dataclasses.asdict(b))
        if dataclasses.fields(ours) and dataclasses.fields(ours)[0].init:
            first = dataclasses.fields(ours)[0].name
            assert repr(dataclasses.replace(a, **{first: args[0] if args else 0})) == repr(a)
        assert repr(copy.deepcopy(a)) == repr(a)


def test_a_recursive_repr_and_a_mismatched_call_behave_alike():
    ours, theirs = _pair(_bodies()[3], False)
    a, b = ours(None), theirs(None)
    a.value, b.value = [a], [b]
    assert repr(a) == repr(b) == "One(value=[...])"
    for cls in (ours, theirs):
        with pytest.raises(TypeError):
            cls()
        with pytest.raises(TypeError):
            cls(1, 2)


def test_what_it_does_not_write_goes_to_the_standard_decorator():
    @_dataclass.dataclass(frozen=True, order=True)
    class Ordered:
        a: int

    assert Ordered(1) < Ordered(2)

    @_dataclass.dataclass
    class Post:
        a: int

        def __post_init__(self):
            self.b = self.a + 1

    assert Post(1).b == 2

    @_dataclass.dataclass(frozen=True)
    class Child(Ordered):
        b: int = 0

    assert Child(1, 2) == Child(1, 2) and hash(Child(1, 2)) == hash(Child(1, 2))


def test_instances_pickle_as_standard_ones():
    from precision_lint.diagnostics import Span

    span = Span(1, 2, 3, 4) if len(dataclasses.fields(Span)) == 4 else None
    if span is not None:
        assert pickle.loads(pickle.dumps(span)) == span


def _package_dataclasses():
    found = []
    for info in pkgutil.walk_packages(precision_lint.__path__, "precision_lint."):
        if ".lsp" in info.name or ".verify" in info.name:
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            continue
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == info.name and "__dataclass_fields__" in value.__dict__:
                found.append(value)
    return found


def test_every_dataclass_of_the_package_has_the_standard_signature_and_methods():
    """Each class rebuilt from its fields by the standard decorator: the same signature, the
    same methods, the same parameters."""
    classes = _package_dataclasses()
    assert len(classes) > 50
    for cls in classes:
        if any("__dataclass_fields__" in vars(base) for base in cls.__mro__[1:]):
            continue
        namespace = {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                     "__annotations__": {f.name: f.type for f in dataclasses.fields(cls)}}
        for f in dataclasses.fields(cls):
            namespace[f.name] = field(default=f.default, default_factory=f.default_factory, init=f.init,
                                      repr=f.repr, hash=f.hash, compare=f.compare, metadata=f.metadata)
        for name, value in vars(cls).items():
            if callable(value) and name not in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__") and not name.startswith("__"):
                namespace[name] = value
        params = cls.__dataclass_params__
        standard = dataclasses.dataclass(type(cls.__name__, (), namespace), frozen=params.frozen, order=params.order)
        assert str(inspect.signature(cls)) == str(inspect.signature(standard)), cls
        for name in ("init", "repr", "eq", "order", "unsafe_hash", "frozen"):
            assert getattr(params, name) == getattr(standard.__dataclass_params__, name), (cls, name)
        assert (cls.__hash__ is None) == (standard.__hash__ is None), cls
        for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
            assert (name in vars(cls)) == (name in vars(standard)), (cls, name)


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("ordered", [False, True])
def test_a_class_with_slots_is_the_standard_one(frozen, ordered):
    """``slots=True``: ``__slots__`` of the fields, no ``__dict__``, and instances that compare,
    hash, copy, replace and pickle as the standard decorator's (3.10 and newer have one)."""
    from precision_lint.semantic.values import replace

    def body():
        class Point:
            """A point."""

            x: int
            y: Tuple[int, ...] = ()
            label: str = "p"

            def total(self) -> int:
                return self.x + sum(self.y)

        return Point

    ours = _dataclass.dataclass(body(), frozen=frozen, order=ordered, slots=True)
    assert ours.__slots__ == ("x", "y", "label") and "__dict__" not in dir(ours(1))
    assert ours.__qualname__.endswith("body.<locals>.Point") and ours(1, (2,)).total() == 3
    ours.__qualname__ = f"SlotsPoint{int(frozen)}{int(ordered)}"  # where pickle finds it
    globals()[ours.__qualname__] = ours
    a = ours(1, (2, 3))
    assert repr(a) == f"{ours.__qualname__}(x=1, y=(2, 3), label='p')" and a == ours(1, (2, 3)) and a != ours(2)
    assert pickle.loads(pickle.dumps(a)) == a and copy.deepcopy(a) == a and copy.copy(a) == a
    assert dataclasses.replace(a, label="q") == ours(1, (2, 3), "q")
    assert dataclasses.asdict(a) == {"x": 1, "y": (2, 3), "label": "p"}
    if ordered:
        assert ours(1) < ours(2)
    if frozen:
        assert hash(a) == hash(ours(1, (2, 3)))
        assert replace(a, y=(), label="r") == ours(1, (), "r") and type(replace(a, x=5)) is ours
        for action in (lambda o: setattr(o, "x", 5), lambda o: delattr(o, "x"), lambda o: setattr(o, "zzz", 1)):
            with pytest.raises(dataclasses.FrozenInstanceError):
                action(a)
    else:
        a.x = 5
        assert a.x == 5
        with pytest.raises(AttributeError):
            a.zzz = 1
    if hasattr(dataclasses, "KW_ONLY"):  # Python 3.10+: the standard decorator's own slots
        theirs = dataclasses.dataclass(body(), frozen=frozen, order=ordered, slots=True)
        assert ours.__slots__ == theirs.__slots__
        assert repr(a).split("(", 1)[1] == repr(theirs(*dataclasses.astuple(a))).split("(", 1)[1]
        assert str(inspect.signature(ours)) == str(inspect.signature(theirs))


def test_the_facts_held_by_the_hundred_thousand_have_slots():
    """The fact classes a run holds most of (#23: a ``__dict__`` was most of each one's size)."""
    from precision_lint.diagnostics import Span
    from precision_lint.facts.model import ClassFact, ImportLine
    from precision_lint.semantic.records import CallArg, CallRecord
    from precision_lint.semantic.values import Guard, ParamRef, Possible, TrainRef

    for cls in (Span, Possible, Guard, ParamRef, TrainRef, CallArg, CallRecord, ClassFact, ImportLine):
        assert "__slots__" in vars(cls) and cls.__dataclass_params__.frozen, cls
    atom = Possible("param", ParamRef("f", "x", 0), origin=Span(1, 0, 1, 3, 0, 3))
    assert not hasattr(atom, "__dict__") and pickle.loads(pickle.dumps(atom)) == atom


@pytest.mark.parametrize("ordered", [False, True])
def test_a_frozen_class_with_slots_stores_each_field_and_keeps_post_init(ordered):
    """A frozen class with slots stores its fields through its slots' setters (``__init__``
    made by ``_with_slots``, on our path and on the standard decorator's): defaults, default
    factories and a field named ``self`` still arrive; a ``__post_init__`` (the standard
    decorator's ``__init__``, kept) still runs."""

    class Made:
        self: int
        items: list = dataclasses.field(default_factory=list)
        label: str = "m"

    ours = _dataclass.dataclass(Made, frozen=True, order=ordered, slots=True)
    a, b = ours(1), ours(2, [3], "n")
    assert (a.self, a.items, a.label) == (1, [], "m") and (b.self, b.items, b.label) == (2, [3], "n")
    assert ours(1).items is not a.items  # the factory is called for each instance
    assert "__setattr__" not in ours.__init__.__code__.co_names  # no object.__setattr__(self, name, value)

    class Checked:
        x: int

        def __post_init__(self):
            if self.x < 0:
                raise ValueError("x < 0")

    checked = _dataclass.dataclass(Checked, frozen=True, order=ordered, slots=True)
    assert checked(1).x == 1
    with pytest.raises(ValueError):
        checked(-1)
