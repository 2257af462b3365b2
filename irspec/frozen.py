"""Immutable value classes that cost little to define: :func:`frozen`, irspec's ``@dataclass(frozen=True)``.

A class made by ``dataclasses.dataclass(frozen=True)`` has six methods written as source text and
compiled when the class is defined (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__``, ``__delattr__``): some 0.4 ms a class on Python 3.11, and ``irspec eval`` defines
about fifty before its first line of output, an eighth of a small evaluation's whole process
(benchmarks/README.md). :func:`frozen` gives the class the other five as functions shared by every
such class, which read the class's fields when called, and compiles the ``__init__`` dataclasses would
write when the class is first called (or its signature first asked for): most classes a command
defines it never makes an instance of. That ``__init__`` is compiled short (its defaults and annotations
set on it after, its fields set by one update of the instance's dict where no data descriptor is in the
way), at about half the cost of dataclasses' text. Its instances compare, hash, print, pickle, copy and refuse assignment as
a frozen dataclass's do, and ``dataclasses.fields``, ``replace`` and ``asdict`` work on them as on
any dataclass.

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
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:  # the marker that tells type checkers (PEP 681) what frozen() makes; Python 3.10's typing lacks it
    dataclass_transform = getattr(typing, "dataclass_transform", lambda **_: lambda f: f)


__all__ = ["frozen"]

T = TypeVar("T", bound=type)

# dataclasses' kinds of field (its recorded fields also hold class variables): private names, the same
# from Python 3.7 to 3.14
_FIELD: Any = dataclasses._FIELD  # type: ignore[attr-defined]
_INITVAR: Any = dataclasses._FIELD_INITVAR  # type: ignore[attr-defined]

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
    # dataclass() keeps an __init__ written in the class body, and writes its signature into a class
    # without a docstring (compiled now, then: irspec's classes have docstrings)
    init = "__init__" not in own and cls.__doc__ is not None
    made: Any = dataclasses.dataclass(cls, init=not init, repr=False, eq=False, **options)
    if init:
        _check_defaults(made)
        made.__init__ = _LazyInit(made)
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


class _LazyInit:
    """A frozen class's ``__init__`` until it is first needed: then the real one is compiled
    (:meth:`compiled`), takes this one's place in the class and does the call.

    Compiling an ``__init__`` (writing its source and ``exec``-ing it) is most of what defining a
    dataclass costs, ~0.1 ms a class, and most of the ~50 classes a small ``irspec eval`` defines are
    never instantiated in that process. The one compiled here is the one dataclasses writes, from the
    fields dataclasses recorded (:func:`_init_source`)."""

    __slots__ = ("cls",)

    def __init__(self, cls: type) -> None:
        self.cls = cls

    def compiled(self) -> Callable[..., None]:
        """The class's real ``__init__``, compiled now and set on the class in this one's place."""
        cls = self.cls
        source, names, defaults, keywords, annotations = _init_source(cls)
        made: dict[str, Any] = {}
        # compiled without this module's ``from __future__ import annotations``; the parameters' defaults
        # and annotations (the fields' types, as dataclasses writes them) are set on the function after:
        # written into its source, they were most of what compiling it cost (~0.2 ms a class)
        code = compile(source, f"<irspec.frozen {cls.__qualname__}>", "exec", dont_inherit=True)
        exec(code, names, made)
        init = made["__init__"]
        init.__defaults__ = defaults or None
        init.__kwdefaults__ = keywords or None
        init.__annotations__ = annotations
        init.__module__ = cls.__module__
        init.__qualname__ = f"{cls.__qualname__}.__init__"
        cls.__init__ = init  # type: ignore[misc]
        return cast("Callable[..., None]", init)

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        return self.compiled().__get__(instance, owner)

    def __call__(self, instance: Any, *args: Any, **kwargs: Any) -> None:  # cls.__init__(obj, ...)
        self.compiled()(instance, *args, **kwargs)

    @property
    def __signature__(self) -> Any:  # inspect.signature(cls) before the first instance
        import inspect

        return inspect.signature(self.compiled())


class _Factory:
    def __repr__(self) -> str:  # as a signature shows it, the same as a dataclass's
        return "<factory>"


_FACTORY = _Factory()
"""The default of a parameter whose field has a default factory: the factory is called in its place."""


def _init_source(
    cls: type,
) -> tuple[str, dict[str, Any], tuple[Any, ...], dict[str, Any], dict[str, Any]]:
    """The source of the ``__init__`` that ``dataclass()`` writes for ``cls`` (a class made by it with
    ``init=False``), without its defaults and annotations, and the names it reads (its globals), the
    defaults of its positional and keyword-only parameters and its annotations, for the function made
    of it: a parameter a field of ``__init__`` (those not keyword-only first), annotated with its
    field's type and defaulting to its default (or to a marker that calls its factory); each field set in
    turn, by ``object.__setattr__`` (``init=False`` ones from their factory); ``__post_init__`` called
    with the init-only variables, when the class has one."""
    fields = [f for f in cls.__dict__["__dataclass_fields__"].values() if f._field_type in (_FIELD, _INITVAR)]
    # the names the source reads, distinct from any field's (a parameter's name)
    names: dict[str, Any] = {
        "_irspec_factory": _FACTORY,
        "_irspec_set": object.__setattr__,
        "_irspec_get": object.__getattribute__,
    }
    params, keywords, body = ["self"], list[str](), list[str]()
    assigned: list[tuple[str, str]] = []  # (name, value) of the fields set, in order
    defaults: list[Any] = []
    keyword_defaults: dict[str, Any] = {}
    annotations: dict[str, Any] = {}
    for i, f in enumerate(fields):
        factory = f.default_factory is not dataclasses.MISSING
        if factory:
            names[f"_irspec_default{i}"] = f.default_factory
            value = f"_irspec_default{i}()"
            value = f"{value} if {f.name} is _irspec_factory else {f.name}" if f.init else value
            default: Any = _FACTORY
        elif f.default is not dataclasses.MISSING:
            value, default = f.name, f.default
        else:
            value, default = f.name, dataclasses.MISSING
        if f.init:
            annotations[f.name] = f.type
            if f.kw_only:
                keywords.append(f.name)
                if default is not dataclasses.MISSING:
                    keyword_defaults[f.name] = default
            else:
                params.append(f.name)
                if default is not dataclasses.MISSING:
                    defaults.append(default)
        if f._field_type is _FIELD and (f.init or factory):  # init=False with a default: the class's
            # object's __setattr__, as a frozen dataclass's __init__ sets its fields: the class's own
            # refuses every assignment after __init__, and a call of it for each field of each instance
            # was a fifth of filling the registry
            assigned.append((f.name, value))
    if assigned and _in_own_dict(cls, [name for name, _ in assigned]):
        # one update of the instance's dict: what object's __setattr__ does field by field when no field is
        # a data descriptor of the class, in a quarter of the source to compile (and a call an instance)
        body.append(f"_irspec_get(self, '__dict__').update({', '.join(f'{n}={v}' for n, v in assigned)})")
    else:
        body += [f"_irspec_set(self, {name!r}, {value})" for name, value in assigned]
    if hasattr(cls, "__post_init__"):
        variables = ", ".join(f.name for f in fields if f._field_type is _INITVAR)
        body.append(f"self.__post_init__({variables})")
    annotations["return"] = None
    signature = ", ".join(params + (["*", *keywords] if keywords else []))
    lines = "\n".join(f"    {line}" for line in body or ["pass"])
    return f"def __init__({signature}):\n{lines}\n", names, tuple(defaults), keyword_defaults, annotations


def _in_own_dict(cls: type, names: list[str]) -> bool:
    """Whether ``object.__setattr__`` sets each of ``names`` on an instance of ``cls`` in the instance's
    ``__dict__``: it has one, and no class of its MRO holds a data descriptor by any of the names."""
    if not cls.__dictoffset__:
        return False
    for name in names:
        for klass in cls.__mro__:
            if name in klass.__dict__:
                kind = type(klass.__dict__[name])
                if hasattr(kind, "__set__") or hasattr(kind, "__delete__"):
                    return False
                break
    return True


def _check_defaults(cls: type) -> None:
    """What ``dataclass()`` checks as it writes an ``__init__``: no parameter without a default after
    one with."""
    seen = False
    for f in dataclasses.fields(cls):
        if not f.init or f.kw_only:
            continue
        has = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        if seen and not has:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
        seen = seen or has


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
    # A field is set once, by __init__ (the compiled one sets them with object's __setattr__; one written
    # in the class body comes here, each field in turn); after that, or for a name that is no field,
    # assignment fails as on a frozen dataclass.
    if name in self.__dict__ or name not in type(self).__dataclass_fields__:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
