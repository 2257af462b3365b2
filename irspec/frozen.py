"""Immutable value classes that cost little to define: :func:`frozen`, irspec's ``@dataclass(frozen=True)``.

A class made by ``dataclasses.dataclass(frozen=True)`` has six methods written as source text and
compiled when the class is defined (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__``, ``__delattr__``): some 0.4 ms a class on Python 3.11, and ``irspec eval`` defines
about fifty before its first line of output, an eighth of a small evaluation's whole process
(benchmarks/README.md). :func:`frozen` gives the class the other five as functions shared by every
such class, which read the class's fields when called. The ``__init__`` dataclasses would write is done
by an interpreter of its plan for the class's first calls, and compiled once the class is called often
(or its signature asked for): most classes a command defines it makes a few instances of, if any. That
``__init__`` is compiled short (its defaults and annotations set on it after, its fields set by one update
of the instance's dict where no data descriptor is in the way), at about half the cost of dataclasses'
text. A class of plain fields has them recorded as dataclasses records them, without its parsing of each
annotation (:func:`_fields_recorded`); any other, dataclasses records. Its instances compare, hash,
print, pickle, copy and refuse assignment as a frozen dataclass's do, and ``dataclasses.fields``,
``replace`` and ``asdict`` work on them as on any dataclass.

One difference shows, to the ``dataclasses`` module alone: it records such a class as not frozen (its
``__setattr__`` is the class's own, not one dataclasses wrote), so a subclass of one is made with
:func:`frozen` too (``dataclass(frozen=True)`` refuses a base it thinks is not frozen). Knows nothing
else of irspec.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import reprlib
import types
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
_FIELDS_NAME = "__dataclass_fields__"
_PARAMS_NAME = "__dataclass_params__"

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
    made: Any = cls
    if not (init and _fields_recorded(cls, options)):
        made = dataclasses.dataclass(cls, init=not init, repr=False, eq=False, **options)
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


_OPTIONS = frozenset({"kw_only", "match_args"})


def _fields_recorded(cls: type, options: dict[str, Any]) -> bool:
    """Record ``cls``'s fields as ``dataclass(cls, init=False, repr=False, eq=False, **options)`` records
    them (its ``__dataclass_fields__``, ``__dataclass_params__`` and ``__match_args__``, its fields'
    defaults left as class attributes) for a class of the common shape: annotations all text naming
    plain fields, no base a frozen dataclass, ``options`` at most ``kw_only`` and ``match_args``. For
    those dataclasses' work is mostly three parses of each annotation, looking for markers the text
    does not hold (~40 µs a class at import, ~1 ms of a BEIR evaluation's process). ``False``, with the
    class unchanged, for any other class: dataclasses makes it (a test holds the two to each other for
    every class irspec makes)."""
    # read as dataclasses reads them (the class's own, not its bases')
    annotations = cls.__dict__.get("__annotations__")  # noqa: RUF063
    if not isinstance(annotations, dict) or not _OPTIONS.issuperset(options):
        return False  # (Python 3.14 evaluates annotations lazily: dataclasses knows how)
    kw_only = bool(options.get("kw_only", False))
    fields: dict[str, Any] = {}
    for base in cls.__mro__[-1:0:-1]:
        base_fields = getattr(base, _FIELDS_NAME, None)
        if base_fields is not None:
            if getattr(base, _PARAMS_NAME).frozen:
                return False  # dataclasses refuses a non-frozen one over it
            fields.update((f.name, f) for f in base_fields.values())
    own: list[Any] = []
    for name, kind in annotations.items():
        # what dataclasses reads in an annotation to make the field other than a plain one (a class
        # variable, an init-only variable, the keyword-only marker) is left to it: it parses the text
        if not isinstance(kind, str) or "ClassVar" in kind or "InitVar" in kind or "KW_ONLY" in kind:
            return False
        default: Any = getattr(cls, name, dataclasses.MISSING)
        if isinstance(default, dataclasses.Field):
            f = default
        else:
            if isinstance(default, types.MemberDescriptorType):
                default = dataclasses.MISSING
            f = dataclasses.field(default=default)
        if f.default.__class__.__hash__ is None:
            return False  # a mutable default: dataclasses' ValueError
        own.append((f, name, kind))
    if any(isinstance(v, dataclasses.Field) and k not in annotations for k, v in cls.__dict__.items()):
        return False  # a field without annotation: dataclasses' TypeError
    for f, name, kind in own:
        f.name, f.type, f._field_type = name, kind, _FIELD
        if f.kw_only is dataclasses.MISSING:
            f.kw_only = kw_only
        fields[name] = f
        if isinstance(cls.__dict__.get(name), dataclasses.Field):
            if f.default is dataclasses.MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
    setattr(cls, _PARAMS_NAME, _params(kw_only, bool(options.get("match_args", True))))
    setattr(cls, _FIELDS_NAME, fields)
    if options.get("match_args", True) and "__match_args__" not in cls.__dict__:
        match_args = tuple(
            f.name
            for f in fields.values()
            if f._field_type in (_FIELD, _INITVAR) and f.init and not f.kw_only
        )
        cls.__match_args__ = match_args  # type: ignore[attr-defined,misc]
    abc.update_abstractmethods(cls)
    return True


@functools.cache
def _params(kw_only: bool, match_args: bool) -> Any:
    """The ``__dataclass_params__`` dataclasses records for such a class, as this Python's dataclasses
    writes it (its fields vary by version): taken from an empty class it makes."""
    empty = type("_", (), {"__doc__": "-"})
    made: type = dataclasses.dataclass(
        empty, init=False, repr=False, eq=False, kw_only=kw_only, match_args=match_args
    )
    return getattr(made, _PARAMS_NAME)


_COMPILE_AFTER = 8
"""The calls of a frozen class's ``__init__`` made by :func:`_interpreted` before it is compiled. Compiling
costs about what forty interpreted calls cost more than forty compiled ones (~0.1 ms against ~2.4 µs a
call), and a class is called either a few times in a process (an evaluation's options, its result) or
hundreds (the registry's definitions): after eight calls it is taken to be one of the latter."""


class _LazyInit:
    """A frozen class's ``__init__`` until it is called often: the fields set by :func:`_interpreted`
    for the first :data:`_COMPILE_AFTER` calls, then the real one compiled (:meth:`compiled`), set on
    the class in this one's place, doing every call.

    Compiling an ``__init__`` (writing its source and ``exec``-ing it) is most of what defining a
    dataclass costs, ~0.1 ms a class; most of the ~50 classes a small ``irspec eval`` defines are never
    instantiated in that process, and most of the others a few times. The one compiled here is the one
    dataclasses writes, from the fields dataclasses recorded (:func:`_init_source`); the interpreted
    one does what it does, and leaves every call it would refuse to it (its ``TypeError``)."""

    __slots__ = ("calls", "cls", "plan")

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self.calls = 0
        self.plan: _Plan | None = None

    def compiled(self) -> Callable[..., None]:
        """The class's real ``__init__``, compiled now and set on the class in this one's place."""
        cls = self.cls
        plan = self.plan or _Plan(cls)
        source, names = _init_source(plan)
        made: dict[str, Any] = {}
        # compiled without this module's ``from __future__ import annotations``; the parameters' defaults
        # and annotations (the fields' types, as dataclasses writes them) are set on the function after:
        # written into its source, they were most of what compiling it cost (~0.2 ms a class)
        code = compile(source, f"<irspec.frozen {cls.__qualname__}>", "exec", dont_inherit=True)
        exec(code, names, made)
        init = made["__init__"]
        init.__defaults__ = tuple(plan.defaults[n] for n in plan.positional if n in plan.defaults) or None
        init.__kwdefaults__ = {n: plan.defaults[n] for n in plan.keywords if n in plan.defaults} or None
        init.__annotations__ = plan.annotations
        init.__module__ = cls.__module__
        init.__qualname__ = f"{cls.__qualname__}.__init__"
        cls.__init__ = init  # type: ignore[misc]
        return cast("Callable[..., None]", init)

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        if self.calls >= _COMPILE_AFTER:
            return self.compiled().__get__(instance, owner)
        return types.MethodType(self, instance)

    def __call__(self, instance: Any, /, *args: Any, **kwargs: Any) -> None:  # cls.__init__(obj, ...)
        if self.calls < _COMPILE_AFTER:
            self.calls += 1
            if self.plan is None:
                self.plan = _Plan(self.cls)
            if _interpreted(self.plan, instance, args, kwargs):
                return
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


class _Plan:
    """What the ``__init__`` that ``dataclass()`` writes for a class does, read from the fields it recorded
    (a class made by it with ``init=False``): its parameters, the fields of ``__init__`` (those not
    keyword-only first), each defaulting to its field's default (or to a marker that calls its factory)
    and annotated with its type; each field set in turn (``init=False`` ones from their factory); then
    ``__post_init__`` called with the init-only variables, when the class has one."""

    __slots__ = (
        "annotations", "assigned", "count", "defaults", "factories", "keywords", "own_dict", "parameters",
        "positional", "post_init", "variables",
    )  # fmt: skip

    def __init__(self, cls: type) -> None:
        fields = [
            f for f in cls.__dict__["__dataclass_fields__"].values() if f._field_type in (_FIELD, _INITVAR)
        ]
        self.positional = [f.name for f in fields if f.init and not f.kw_only]
        self.keywords = [f.name for f in fields if f.init and f.kw_only]
        self.parameters = frozenset(self.positional + self.keywords)
        self.count = len(self.parameters)
        self.annotations: dict[str, Any] = {f.name: f.type for f in fields if f.init}
        self.annotations["return"] = None
        self.factories = {
            f.name: f.default_factory for f in fields if f.default_factory is not dataclasses.MISSING
        }
        self.defaults = {
            f.name: _FACTORY if f.name in self.factories else f.default
            for f in fields
            if f.init and (f.name in self.factories or f.default is not dataclasses.MISSING)
        }
        # an init=False field with a plain default is the class's attribute, not set
        self.assigned = [
            f.name for f in fields if f._field_type is _FIELD and (f.init or f.name in self.factories)
        ]
        self.own_dict = bool(self.assigned) and _in_own_dict(cls, self.assigned)
        self.post_init = hasattr(cls, "__post_init__")
        self.variables = [f.name for f in fields if f._field_type is _INITVAR]


def _interpreted(plan: _Plan, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Set ``instance``'s fields from the arguments of a call of its class, as the compiled ``__init__``
    sets them, and call its ``__post_init__``; ``False``, with nothing done, for a call that ``__init__``
    refuses (too many arguments, one given twice or not given, a name it does not take)."""
    if len(args) > len(plan.positional):
        return False
    values = dict(zip(plan.positional, args, strict=False))  # the first parameters given
    for name, value in kwargs.items():
        if name in values or name not in plan.parameters:
            return False
        values[name] = value
    if len(values) < plan.count:
        for name, default in plan.defaults.items():
            values.setdefault(name, default)
        if len(values) < plan.count:
            return False
    for name, factory in plan.factories.items():
        if values.get(name, _FACTORY) is _FACTORY:
            values[name] = factory()
    if plan.own_dict:
        object.__getattribute__(instance, "__dict__").update({name: values[name] for name in plan.assigned})
    else:
        for name in plan.assigned:
            object.__setattr__(instance, name, values[name])
    if plan.post_init:
        instance.__post_init__(*[values[name] for name in plan.variables])
    return True


def _init_source(plan: _Plan) -> tuple[str, dict[str, Any]]:
    """The source of the ``__init__`` that ``dataclass()`` writes (:class:`_Plan`), without its defaults and
    annotations (set on the function made of it), and the names it reads (its globals). Each field is set
    by ``object.__setattr__``, as a frozen dataclass's ``__init__`` sets them: the class's own refuses
    every assignment after ``__init__``, and a call of it for each field of each instance was a fifth of
    filling the registry."""
    # the names the source reads, distinct from any field's (a parameter's name)
    names: dict[str, Any] = {
        "_irspec_factory": _FACTORY,
        "_irspec_set": object.__setattr__,
        "_irspec_get": object.__getattribute__,
    }
    values: dict[str, str] = {}
    for i, (name, factory) in enumerate(plan.factories.items()):
        names[f"_irspec_default{i}"] = factory
        call = f"_irspec_default{i}()"
        values[name] = f"{call} if {name} is _irspec_factory else {name}" if name in plan.parameters else call
    assigned = [(name, values.get(name, name)) for name in plan.assigned]
    body: list[str] = []
    if plan.own_dict:
        # one update of the instance's dict: what object's __setattr__ does field by field when no field is
        # a data descriptor of the class, in a quarter of the source to compile (and a call an instance)
        body.append(f"_irspec_get(self, '__dict__').update({', '.join(f'{n}={v}' for n, v in assigned)})")
    else:
        body += [f"_irspec_set(self, {name!r}, {value})" for name, value in assigned]
    if plan.post_init:
        body.append(f"self.__post_init__({', '.join(plan.variables)})")
    signature = ", ".join(["self", *plan.positional] + (["*", *plan.keywords] if plan.keywords else []))
    lines = "\n".join(f"    {line}" for line in body or ["pass"])
    return f"def __init__({signature}):\n{lines}\n", names


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
