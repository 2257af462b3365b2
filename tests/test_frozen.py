"""irspec.frozen.frozen behaves as dataclasses.dataclass(frozen=True) does: each class below is made
both ways, and every behaviour is compared between the two, the stdlib's the reference."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from dataclasses import KW_ONLY, InitVar, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from irspec.frozen import frozen


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
        values: tuple[int, ...]
        total: int = field(init=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "values", tuple(sorted(self.values)))
            object.__setattr__(self, "total", sum(self.values))

    return Normalised


def _own_methods() -> type:
    class Own:
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
        a: int

        def __eq__(self, other: object) -> bool:
            return True

    return EqOnly


def _kw_only() -> type:
    class Keywords:
        a: int
        b: int = 2

    return Keywords


def _scaled() -> type:
    class Scaled:
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


def test_the_init_is_compiled_when_first_needed_and_then_is_a_function():
    made = frozen(_point())
    assert not inspect.isfunction(made.__dict__["__init__"])  # nothing compiled at definition
    value = made(1)
    assert inspect.isfunction(made.__dict__["__init__"]) and value.x == 1 and value.made == []
    assert made(2, made=[3]).made == [3] and made(2).made is not value.made  # the factory, each time


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
