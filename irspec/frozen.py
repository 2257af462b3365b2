"""Immutable value classes that cost little to define: :func:`frozen`, irspec's ``@dataclass(frozen=True)``.

A class made by ``dataclasses.dataclass(frozen=True)`` has six methods written as source text and
compiled when the class is defined (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__``, ``__delattr__``): some 0.4 ms a class on Python 3.11, and ``irspec eval`` defines
about fifty before its first line of output, an eighth of a small evaluation's whole process
(benchmarks/README.md). :func:`frozen` has dataclasses compile the ``__init__`` alone and gives the
class the other five as functions shared by every such class, which read the class's fields when
called. Its instances compare, hash, print, pickle, copy and refuse assignment as a frozen
dataclass's do, and ``dataclasses.fields``, ``replace`` and ``asdict`` work on them as on any
dataclass.

One difference shows, to the ``dataclasses`` module alone: it records such a class as not frozen (its
``__setattr__`` is the class's own, not one dataclasses wrote), so a subclass of one is made with
:func:`frozen` too (``dataclass(frozen=True)`` refuses a base it thinks is not frozen). Knows nothing
else of irspec.
"""

from __future__ import annotations

import dataclasses
import reprlib
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:  # the marker that tells type checkers (PEP 681) what frozen() makes; Python 3.10's typing lacks it
    dataclass_transform = getattr(typing, "dataclass_transform", lambda **_: lambda f: f)


__all__ = ["frozen"]

T = TypeVar("T", bound=type)

_COMPARED = "__irspec_compared__"
"""The class attribute holding the names of the fields that ``__eq__`` and ``__hash__`` read."""


@overload
def frozen(cls: T, /) -> T: ...


@overload
def frozen(*, eq: bool = True, repr: bool = True, **options: Any) -> Callable[[T], T]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def frozen(
    cls: T | None = None, /, *, eq: bool = True, repr: bool = True, **options: Any
) -> T | Callable[[T], T]:
    """Make ``cls`` a frozen dataclass, as ``@dataclass(frozen=True, eq=eq, repr=repr, **options)``
    does, with only its ``__init__`` compiled (see the module's docstring). ``options`` are
    dataclasses' others (``kw_only``, ``match_args``, ...), except ``order``, ``unsafe_hash`` and
    ``slots``, which no class here uses."""

    def make(cls: T) -> T:
        return _make(cls, eq=eq, repr=repr, options=options)

    return make if cls is None else make(cls)


def _make(cls: T, *, eq: bool, repr: bool, options: dict[str, Any]) -> T:
    for unsupported in ("order", "unsafe_hash", "slots", "frozen"):
        if options.get(unsupported):
            raise TypeError(f"frozen() does not take {unsupported}=True")
    own = cls.__dict__
    for name in ("__setattr__", "__delattr__"):
        if name in own:  # as dataclass(frozen=True) says
            raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    # dataclasses' rule for __hash__: a hash written in the class body is kept (an __eq__ written there
    # without one sets __hash__ to None in the class's namespace, which is not a hash written)
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    made: Any = dataclasses.dataclass(cls, repr=False, eq=False, **options)
    fields = dataclasses.fields(made)
    setattr(made, _COMPARED, tuple(f.name for f in fields if f.compare))
    if repr and "__repr__" not in own:
        made.__repr__ = _repr
    if eq and "__eq__" not in own:
        made.__eq__ = _eq
    if eq and not explicit_hash:
        hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
        made.__irspec_hashed__ = hashed
        made.__hash__ = _hash
    made.__setattr__ = _setattr
    made.__delattr__ = _delattr
    return made


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr)
    return f"{type(self).__qualname__}({shown})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    names = getattr(type(self), _COMPARED)
    return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)


def _hash(self: Any) -> int:
    return hash(tuple(getattr(self, n) for n in type(self).__irspec_hashed__))


def _setattr(self: Any, name: str, value: Any) -> None:
    # A field is set once, by __init__ (which assigns each field in turn); after that, or for a name
    # that is no field, assignment fails as on a frozen dataclass.
    if name in self.__dict__ or name not in type(self).__dataclass_fields__:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
