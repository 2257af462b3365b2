"""irspec.frozen.frozen behaves as dataclasses.dataclass(frozen=True) does: each class below is made
both ways, and every behaviour is compared between the two, the stdlib's the reference."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import re
from dataclasses import KW_ONLY, InitVar, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from irspec.frozen import _COMPILE_AFTER, _fields_recorded, frozen


def _both(body: Any, **options: Any) -> tuple[type, type]:
    """The class ``body`` makes, once as a frozen dataclass and once with frozen()."""
    return dataclass(frozen=True, **options)(body()), frozen(**options)(body())


def _point() -> type:
    class Point:
        """A point."""

        x: int
        y: float = 0.5
        tags: tuple[str, ...] = ()
        note: str = field(default="n", compare=False)
        secret: str = field(default="s", repr=False)
        loose: int = field(default=1, hash=False)
        made: list[int] = field(default_factory=list, compare=False, hash=False)
        unit: ClassVar[str] = "cm"

    return Point


def _normalised() -> type:
    class Normalised:
        """Values kept sorted, with their total."""

        values: tuple[int, ...]
        total: int = field(init=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "values", tuple(sorted(self.values)))
            object.__setattr__(self, "total", sum(self.values))

    return Normalised


def _own_methods() -> type:
    class Own:
        """Its own repr, eq and hash."""

        a: int

        def __repr__(self) -> str:
            return f"<own {self.a}>"

        def __eq__(self, other: object) -> bool:
            return isinstance(other, type(self)) and other.a % 2 == self.a % 2

        def __hash__(self) -> int:
            return self.a % 2

    return Own


def _eq_only() -> type:
    class EqOnly:
        """Its own eq, no hash."""

        a: int

        def __eq__(self, other: object) -> bool:
            return True

    return EqOnly


def _kw_only() -> type:
    class Keywords:
        """Two fields."""

        a: int
        b: int = 2

    return Keywords


def _scaled() -> type:
    class Scaled:
        """A base scaled by an init-only factor."""

        base: int
        factor: InitVar[int] = 2  # type: ignore[assignment]  # made a dataclass in _both
        _: KW_ONLY
        label: str = "x"
        value: int = field(init=False, default=0)

        def __post_init__(self, factor: int) -> None:
            object.__setattr__(self, "value", self.base * factor)

    return Scaled


def _undocumented() -> type:
    class Undocumented:
        a: int
        b: str = "b"

    return Undocumented


def _behaviour(cls: type, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """What an instance of ``cls`` does, as plain values to compare across the two ways."""
    # asked before the first instance: frozen() compiles a class's __init__ when first needed
    signature, doc = str(inspect.signature(cls)), cls.__doc__
    one, two, other = cls(*args, **kwargs), cls(*args, **kwargs), None
    fields = dataclasses.fields(cls)
    if fields and fields[0].init and fields[0].type in ("int", "tuple[int, ...]"):
        first = getattr(one, fields[0].name)
        changed = (first + 1) if isinstance(first, int) else (*first, 99)
        other = dataclasses.replace(one, **{fields[0].name: changed})
    out: dict[str, Any] = {
        "repr": repr(one).replace("_both.<locals>.", ""),
        "eq": one == two,
        "ne_other": None if other is None else one != other,
        "eq_foreign": one == (1, 2),
        "fields": [(f.name, f.init, f.repr, f.compare, f.hash) for f in fields],
        "asdict": dataclasses.asdict(one),
        "is_dataclass": dataclasses.is_dataclass(one),
        "match_args": getattr(cls, "__match_args__", None),
        "hashable": type(one).__hash__ is not None,
        "signature": signature,
        "doc": doc,
        "doc after": cls.__doc__,
        "init's signature": str(inspect.signature(vars(cls)["__init__"])),
    }
    if out["hashable"]:
        out["hash_equal"] = hash(one) == hash(two)
        out["hash_other"] = None if other is None else hash(one) == hash(other)
    for name in [f.name for f in fields] + ["not_a_field"]:
        for act in ("set", "del"):
            try:
                if act == "set":
                    setattr(one, name, 1)
                else:
                    delattr(one, name)
                out[f"{act} {name}"] = "allowed"
            except dataclasses.FrozenInstanceError as e:
                out[f"{act} {name}"] = ("FrozenInstanceError", str(e))
            except AttributeError as e:  # deleting a name that is not there
                out[f"{act} {name}"] = ("AttributeError", type(e).__name__)
    copied = copy.copy(one), copy.deepcopy(one)
    out["copies equal"] = [c == one for c in copied]
    out["copies' fields"] = [dataclasses.asdict(c) for c in copied]
    return out


CASES = [
    ("fields of every kind", _point, {}, (3,), {"tags": ("a",)}),
    ("__post_init__ normalising", _normalised, {}, ((3, 1, 2),), {}),
    ("methods of its own", _own_methods, {}, (4,), {}),
    ("__eq__ without __hash__", _eq_only, {}, (4,), {}),
    ("no eq", _point, {"eq": False}, (3,), {}),
    ("no repr", _point, {"repr": False}, (3,), {}),
    ("keywords only", _kw_only, {"kw_only": True}, (), {"a": 1}),
    ("InitVar, KW_ONLY and a field not in __init__", _scaled, {}, (3, 4), {"label": "y"}),
    ("no docstring", _undocumented, {}, (1,), {}),
]


@pytest.mark.parametrize(("what", "body", "options", "args", "kwargs"), CASES, ids=[c[0] for c in CASES])
def test_an_instance_behaves_as_a_frozen_dataclasss(what, body, options, args, kwargs):
    reference, made = _both(body, **options)
    expected, got = _behaviour(reference, *args, **kwargs), _behaviour(made, *args, **kwargs)
    if options.get("repr") is False:  # object's repr names the address: compare its shape only
        expected["repr"], got["repr"] = (r.split(" object at ")[0] for r in (expected["repr"], got["repr"]))
    assert got == expected


def test_hash_and_equality_follow_the_fields_that_are_compared():
    reference, made = _both(_point)
    for cls in (reference, made):
        a, b = cls(1, note="x", made=[1]), cls(1, note="y", made=[2])
        assert a == b and hash(a) == hash(b)  # note and made are not compared
        assert cls(1, loose=5) == cls(1, loose=5) and cls(1, loose=5) != cls(1, loose=6)
        assert hash(cls(1, loose=5)) == hash(cls(1, loose=6))  # loose is compared, not hashed


def test_instances_pickle_and_come_back_equal():
    made = frozen(_module_level_body())
    globals()["Pickled"] = made
    made.__qualname__ = made.__name__ = "Pickled"
    value = made(2, ("x",))
    back = pickle.loads(pickle.dumps(value))
    assert back == value and back is not value
    with pytest.raises(dataclasses.FrozenInstanceError):
        back.a = 3


def _module_level_body() -> type:
    class Body:
        a: int
        b: tuple[str, ...]

    return Body


def test_a_subclass_adds_fields_and_stays_frozen():
    base = frozen(_kw_only())

    class Sub(base):  # type: ignore[valid-type, misc]
        c: int = 3

    sub = frozen(Sub)
    value = sub(1, 2, 4)
    assert repr(value).endswith("Sub(a=1, b=2, c=4)")
    assert value == sub(1, 2, 4) and value != sub(1, 2, 5) and value != base(1, 2)
    assert dataclasses.replace(value, c=9).c == 9
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.a = 0


def test_the_init_is_compiled_once_called_often_and_then_is_a_function():
    made = frozen(_point())
    assert not inspect.isfunction(made.__dict__["__init__"])  # nothing compiled at definition
    first = [made(i) for i in range(_COMPILE_AFTER)]  # interpreted
    assert not inspect.isfunction(made.__dict__["__init__"])
    assert [(v.x, v.made) for v in first] == [(i, []) for i in range(_COMPILE_AFTER)]
    assert len({id(v.made) for v in first}) == _COMPILE_AFTER  # the factory, each time
    value = made(1)
    assert inspect.isfunction(made.__dict__["__init__"]) and value.x == 1 and value.made == []
    assert made(2, made=[3]).made == [3] and made(2).made is not value.made


# Calls of each case's class, good and bad: the interpreted __init__ must do what the compiled one does,
# and leave what it refuses to it (the same TypeError, word for word).
CALLS: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {
    "fields of every kind": [
        ((3,), {}), ((3, 1.5, ("a",)), {"note": "x", "made": [1]}), ((), {"x": 1, "loose": 2}),
        ((), {}), ((1, 2, 3, 4, 5, 6, 7, 8), {}), ((1,), {"x": 2}), ((1,), {"nope": 1}), ((1,), {"unit": "m"}),
        ((1,), {"self": 2}),
    ],
    "__post_init__ normalising": [(((3, 1, 2),), {}), ((), {"values": (2, 1)}), (((1,),), {"total": 1})],
    "methods of its own": [((4,), {}), ((), {"a": 5}), ((), {})],
    "__eq__ without __hash__": [((4,), {})],
    "keywords only": [((), {"a": 1}), ((), {"a": 1, "b": 3}), ((1,), {}), ((), {"b": 1})],
    "InitVar, KW_ONLY and a field not in __init__": [
        ((3, 4), {"label": "y"}), ((3,), {}), ((3,), {"factor": 5}), ((3, 4, "y"), {}), ((3,), {"value": 1}),
    ],
}  # fmt: skip


def _outcome(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        value = cls(*args, **kwargs)
    except TypeError as e:
        return ("TypeError", str(e).replace("_both.<locals>.", ""))
    return (dataclasses.asdict(value), vars(value))


@pytest.mark.parametrize("what", list(CALLS))
def test_the_interpreted_init_does_what_the_compiled_one_does(what):
    body, options = next((c[1], c[2]) for c in CASES if c[0] == what)
    for args, kwargs in CALLS[what]:
        reference, made = _both(body, **options)  # a new class for each call: the first call interpreted
        expected = _outcome(reference, args, kwargs)
        assert _outcome(made, args, kwargs) == expected, (args, kwargs)
        assert _outcome(made, args, kwargs) == expected  # the second, still interpreted
        compiled = frozen(**options)(body())
        assert not inspect.isfunction(compiled.__dict__["__init__"])
        compiled.__dict__["__init__"].compiled()
        assert _outcome(compiled, args, kwargs) == expected, (args, kwargs)


def test_a_subclass_not_made_with_frozen_takes_its_bases_init():
    base = frozen(_point())

    class Plain(base):  # type: ignore[valid-type, misc]
        pass

    value = Plain(5, y=1.5)  # the base's __init__, compiled at this first call, through the subclass
    assert (type(value), value.x, value.y) == (Plain, 5, 1.5)
    assert base(5, y=1.5).x == 5


def test_super_init_reaches_the_compiled_init():
    base = frozen(_kw_only())

    class Own(base):  # type: ignore[valid-type, misc]
        def __init__(self, a: int) -> None:
            super().__init__(a=a, b=a * 10)

    assert (Own(3).a, Own(3).b) == (3, 30)


def test_a_recursive_value_prints_without_end():
    made = frozen(_module_level_body())
    holder: list[Any] = []
    value = made(1, holder)  # type: ignore[arg-type]
    holder.append(value)
    assert repr(value).endswith("Body(a=1, b=[...])")


def test_what_frozen_dataclasses_refuse_is_refused():
    class Writes:
        a: int

        def __setattr__(self, name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

    with pytest.raises(TypeError, match="Cannot overwrite attribute __setattr__"):
        frozen(Writes)
    with pytest.raises(TypeError, match="order"):
        frozen(order=True)(_kw_only())


def test_irspec_makes_its_frozen_classes_with_frozen():
    # dataclass(frozen=True) compiles five more methods a class at import: the cost frozen() removes
    root = Path(__file__).resolve().parents[1] / "irspec"
    found = [
        f"{path.relative_to(root.parent)}:{n}"
        for path in sorted(root.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "dataclass(frozen=True" in line and path.name != "frozen.py"
    ]
    assert not found, f"use irspec.frozen.frozen for these: {found}"


class _Doubling:
    """A data descriptor that keeps twice what it is given."""

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        return self if obj is None else obj.__dict__.get("_doubled", 0)

    def __set__(self, obj: Any, value: int) -> None:
        obj.__dict__["_doubled"] = 2 * value


def _through_a_descriptor() -> type:
    class Base:
        x = _Doubling()

    class Doubled(Base):
        """Its field x is set through its base's data descriptor."""

        x: int
        y: int = 1

    return Doubled


def test_a_field_a_data_descriptor_holds_is_set_through_it():
    """The compiled __init__ sets the fields with one update of the instance's dict, which would bypass a
    data descriptor: a class with one by a field's name gets object's __setattr__ field by field, as a
    frozen dataclass's __init__ does."""
    reference, made = _both(_through_a_descriptor)
    for cls in (reference, made):
        value = cls(3, y=4)
        assert (value.x, value.y, value.__dict__) == (6, 4, {"_doubled": 6, "y": 4})


def _shown(value: Any) -> str:
    """``value``'s repr without the address an object's default repr shows (not the same in two processes)."""
    return re.sub(" at 0x[0-9a-f]+", "", repr(value))


def _recorded(cls: type) -> dict[str, Any]:
    """What dataclasses records of a class, as plain values: each field's every attribute, the params, the
    match arguments, and what the class holds by each field's name."""
    fields = {
        name: (
            f.name, f.type, _shown(f.default), _shown(f.default_factory), f.init, f.repr, f.hash, f.compare,
            dict(f.metadata), _shown(f.kw_only), f._field_type.name,  # type: ignore[attr-defined]
        )
        for name, f in cls.__dataclass_fields__.items()  # type: ignore[attr-defined]
    }  # fmt: skip
    return {
        "fields": fields,
        "params": repr(cls.__dataclass_params__),  # type: ignore[attr-defined]
        "match_args": cls.__dict__.get("__match_args__"),
        "attributes": {name: _shown(cls.__dict__.get(name, "<absent>")) for name in fields},
    }


def _plain_shapes() -> type:
    class Shapes:
        """Fields of every plain kind, none marked."""

        a: int
        b: str = "b"
        c: tuple[int, ...] = field(default=(), compare=False, metadata={"unit": "s"})
        d: list[int] = field(default_factory=list, repr=False)
        e: int = field(init=False, default=5)
        f: dict[str, int] = field(init=False, default_factory=dict, hash=False)
        g: float = field(default=1.0, kw_only=True)

    return Shapes


def _slotted() -> type:
    class Slotted:
        """A field whose name is a slot: no default."""

        __slots__ = ("__dict__", "a")
        a: int

    return Slotted


@pytest.mark.parametrize(
    ("body", "options"),
    [
        (_plain_shapes, {}), (_plain_shapes, {"kw_only": True}), (_plain_shapes, {"match_args": False}),
        (_normalised, {}), (_own_methods, {}), (_eq_only, {}), (_kw_only, {"kw_only": True}),
        (_through_a_descriptor, {}), (_slotted, {}),
    ],
)  # fmt: skip
def test_a_class_of_plain_fields_is_recorded_as_dataclasses_records_it(body, options):
    reference = dataclass(body(), init=False, repr=False, eq=False, **options)
    made = body()
    assert _fields_recorded(made, options)
    assert _recorded(made) == _recorded(reference)


def test_a_subclass_of_plain_fields_is_recorded_as_dataclasses_records_it():
    def sub(base: type) -> type:
        class Sub(base):  # type: ignore[valid-type, misc]
            """More fields."""

            h: int = 7
            b: str = "override"

        return Sub

    plain = {"init": False, "repr": False, "eq": False}
    reference = dataclass(sub(dataclass(_plain_shapes(), **plain)), **plain)
    base = _plain_shapes()
    assert _fields_recorded(base, {})
    made = sub(base)
    assert _fields_recorded(made, {})
    assert _recorded(made) == _recorded(reference)


def _marked(annotation: str) -> type:
    return type("Marked", (), {"__doc__": "-", "__annotations__": {"a": "int", "b": annotation}, "b": 1})


@pytest.mark.parametrize(
    "make",
    [
        lambda: _marked("ClassVar[int]"),
        lambda: _marked("dataclasses.InitVar[int]"),
        lambda: _marked("KW_ONLY"),
        lambda: type("Mutable", (), {"__doc__": "-", "__annotations__": {"a": "list[int]"}, "a": []}),
        lambda: type("Unannotated", (), {"__doc__": "-", "__annotations__": {}, "a": field(default=1)}),
        lambda: type("Typed", (), {"__doc__": "-", "__annotations__": {"a": int}}),
    ],
    ids=["ClassVar", "InitVar", "KW_ONLY", "mutable default", "field without annotation", "a type, not text"],
)
def test_a_class_dataclasses_must_read_is_left_to_it_unchanged(make):
    cls = make()
    before = dict(cls.__dict__)
    assert not _fields_recorded(cls, {})
    assert dict(cls.__dict__) == before
    assert not _fields_recorded(make(), {"slots": True})  # an option it leaves to dataclasses


def _frozen_classes() -> dict[str, type]:
    """Every class of irspec's modules made with frozen(), by module and name (the modules that use it)."""
    import importlib

    import irspec

    root = Path(irspec.__file__).parent
    found = {}
    for path in sorted(root.rglob("*.py")):
        if "@frozen" not in path.read_text(encoding="utf-8"):
            continue
        name = ".".join(("irspec", *path.relative_to(root).with_suffix("").parts)).removesuffix(".__init__")
        try:
            module = importlib.import_module(name)
        except ImportError:  # an extra not installed: the same in both processes
            continue
        for value in list(vars(module).values()):
            if (
                isinstance(value, type)
                and "__irspec_compared__" in value.__dict__
                and value.__module__ == name
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


_BY_DATACLASSES = """
import importlib.util, json, sys
# every class made by dataclasses, as before irspec recorded fields itself
spec = importlib.util.find_spec("irspec.frozen")
frozen_module = importlib.util.module_from_spec(spec)
sys.modules["irspec.frozen"] = frozen_module
spec.loader.exec_module(frozen_module)
frozen_module._fields_recorded = lambda cls, options: False
sys.path.insert(0, sys.argv[1])
from test_frozen import _frozen_classes, _recorded
print(json.dumps({name: _recorded(cls) for name, cls in sorted(_frozen_classes().items())}))
"""


def test_every_class_irspec_makes_is_recorded_as_dataclasses_records_it():
    import json
    import subprocess
    import sys

    made = {name: _recorded(cls) for name, cls in sorted(_frozen_classes().items())}
    run = [sys.executable, "-c", _BY_DATACLASSES, str(Path(__file__).parent)]
    reference = json.loads(subprocess.run(run, capture_output=True, text=True, check=True).stdout)
    assert len(made) > 30
    assert json.loads(json.dumps(made)) == reference
