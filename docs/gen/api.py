"""reference/api.md and reference/modules.md: the Python API from the live objects' docstrings, at build time.

The face is ``irspec.__all__``: each name is resolved with ``getattr(irspec, name)`` and rendered from
the object itself (``inspect``: signature, docstring, public members), wherever inside the package it is
defined, so the page follows the code when it moves. The classes those functions return that are not
in ``__all__`` (a comparison's ``Comparisons``, a plan's ``Plan``) are found through their return
annotations and documented after the face. modules.md documents the modules users import by their
path (the plugin API, the statistics on plain arrays, Spark, pytrec_eval's API, the testing helpers):
each module's ``__all__``.

A module that needs a package its extra installs and the docs extra does not (``irspec.evaluation.spark``:
pyspark and pyarrow) is read from its source where it cannot be imported (:func:`load`): its docstrings,
signatures and values as written, rendered by the same code, so that ``pip install -e ".[docs]"`` alone
builds the site and the page has the same sections and anchors as in a full environment.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mkdocs_gen_files

import irspec

sys.path.insert(0, str(Path(__file__).parent))
from _text import anchor, markdown  # noqa: E402

# The face's names by topic, for the reader; a name of __all__ not listed here still appears, under "More".
TOPICS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Metric specs", ("parse", "parse_many", "metrics", "Metric")),
    (
        "Evaluating runs",
        (
            "evaluate",
            "Evaluator",
            "Result",
            "ResultSet",
            "evaluate_many",
            "evaluate_input",
            "read_qrels",
            "read_run",
        ),
    ),
    (
        "Comparing runs",
        ("compare", "diff", "power", "PowerAnalysis", "agreement", "standardize", "by_group", "with_groups"),
    ),
    ("Fusing runs", ("fuse", "Fusion")),
    ("Plans", ("load_plan", "run_plan")),
    (
        "Writing plugins",
        ("hookimpl", "MetricDef", "Param", "Alias", "MetricGroup", "InputReader", "InputTable", "FusionDef"),
    ),
    ("Errors and warnings", ()),  # every exception class of __all__
)
# Modules imported by their path, each documented by its __all__; one listed here that is gone fails the
# build (update the list where it moved).
MODULES: tuple[str, ...] = (
    "irspec.plugin_api",
    "irspec.stats.significance",
    "irspec.stats.design",
    "irspec.stats.concordance",
    "irspec.evaluation.spark",
    "irspec.evaluation.workers",
    "irspec.compat.pytrec_eval",
    "irspec.testing",
)
API, MODULES_PAGE = "reference/api.md", "reference/modules.md"


# Modules read from their source (load), by name: what attribute_doc reads in place of sys.modules.
READ_FROM_SOURCE: dict[str, types.ModuleType] = {}


def load(name: str) -> types.ModuleType:
    """The module ``name``, imported; or, when a package it imports is not installed (an optional one,
    such as Spark's), a stand-in read from its source with :func:`from_source`. A module of irspec that
    is missing is an error, as before."""
    if name in READ_FROM_SOURCE:
        return READ_FROM_SOURCE[name]
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if (e.name or "").partition(".")[0] == name.partition(".")[0]:
            raise
        READ_FROM_SOURCE[name] = from_source(name)
        print(f"docs/gen/api.py: {name} read from its source ({e.name} is not installed)", file=sys.stderr)
        return READ_FROM_SOURCE[name]


class Written:
    """A value as its source writes it, where it cannot be computed without its module: shown by its
    text (``T.StructType([...])``)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def written_value(node: ast.expr, known: dict[str, Any]) -> Any:
    """The value of a constant expression (``2**63 - 1``, ``"irspec"``, a name defined above as one), as
    importing the module computes it; otherwise its source text."""
    try:
        code = compile(ast.Expression(node), "<source>", "eval")
        return eval(code, {"__builtins__": {}}, dict(known))  # our own source, no builtins: constants only
    except Exception:  # anything not a constant (a call, an imported name): shown as written
        return Written(ast.unparse(node))


def stand_in_function(
    module: str, node: ast.FunctionDef | ast.AsyncFunctionDef, known: dict[str, Any], owner: str = ""
) -> Any:
    """A function with ``node``'s name, docstring and signature (annotations as written, which is what
    ``from __future__ import annotations`` makes them), for ``inspect`` to read as the real one."""
    a = node.args
    params: list[inspect.Parameter] = []
    positional = [*a.posonlyargs, *a.args]
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)

    def annotation(arg: ast.arg) -> Any:
        return ast.unparse(arg.annotation) if arg.annotation is not None else inspect.Parameter.empty

    for i, (arg, default) in enumerate(zip(positional, defaults)):
        kind = (
            inspect.Parameter.POSITIONAL_ONLY
            if i < len(a.posonlyargs)
            else inspect.Parameter.POSITIONAL_OR_KEYWORD
        )
        value = inspect.Parameter.empty if default is None else written_value(default, known)
        params.append(inspect.Parameter(arg.arg, kind, default=value, annotation=annotation(arg)))
    if a.vararg is not None:
        params.append(
            inspect.Parameter(a.vararg.arg, inspect.Parameter.VAR_POSITIONAL, annotation=annotation(a.vararg))
        )
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        value = inspect.Parameter.empty if default is None else written_value(default, known)
        params.append(
            inspect.Parameter(
                arg.arg, inspect.Parameter.KEYWORD_ONLY, default=value, annotation=annotation(arg)
            )
        )
    if a.kwarg is not None:
        params.append(
            inspect.Parameter(a.kwarg.arg, inspect.Parameter.VAR_KEYWORD, annotation=annotation(a.kwarg))
        )
    returns = ast.unparse(node.returns) if node.returns is not None else inspect.Signature.empty

    def function(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{module}.{node.name} was read from its source for the documentation only")

    function.__name__ = node.name
    function.__qualname__ = f"{owner}.{node.name}" if owner else node.name
    function.__module__ = module
    function.__doc__ = ast.get_docstring(node)
    function.__signature__ = inspect.Signature(params, return_annotation=returns)  # type: ignore[attr-defined]
    return function


def stand_in_class(module: str, node: ast.ClassDef, known: dict[str, Any]) -> type:
    """A class with ``node``'s name, docstring, constructor signature and public methods and properties."""
    namespace: dict[str, Any] = {
        "__doc__": ast.get_docstring(node),
        "__module__": module,
        "__qualname__": node.name,
    }
    for item in node.body:
        if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        function = stand_in_function(module, item, known, node.name)
        decorators = {ast.unparse(d).rpartition(".")[2] for d in item.decorator_list}
        if item.name == "__init__":
            sig = inspect.signature(function)
            namespace["__signature__"] = sig.replace(
                parameters=list(sig.parameters.values())[1:], return_annotation=inspect.Signature.empty
            )
        elif not item.name.startswith("_"):
            if decorators & {"property", "cached_property"}:
                namespace[item.name] = property(function)
            elif "staticmethod" in decorators:
                namespace[item.name] = staticmethod(function)
            elif "classmethod" in decorators:
                namespace[item.name] = classmethod(function)
            else:
                namespace[item.name] = function
    return type(node.name, (), namespace)


def from_source(name: str) -> types.ModuleType:
    """A stand-in for the module ``name`` made from its source without importing it: its docstring, its
    ``__all__`` and, for each name there, a function, class or value defined at the module's top level."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"no source for {name}", name=name)
    source = Path(spec.origin).read_text(encoding="utf-8")
    tree = ast.parse(source)
    module = types.ModuleType(name, ast.get_docstring(tree))
    module.__file__ = spec.origin
    known: dict[str, Any] = {}
    defined: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined[node.name] = stand_in_function(name, node, known)
        elif isinstance(node, ast.ClassDef):
            defined[node.name] = stand_in_class(name, node, known)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    defined[target.id] = written_value(node.value, known)
                    if not isinstance(defined[target.id], Written):
                        known[target.id] = defined[target.id]
    public = defined.get("__all__", [])
    missing = [n for n in public if n not in defined]
    if missing:  # a name imported from elsewhere: its definition is not in this source
        raise ModuleNotFoundError(
            f"{name} cannot be read from its source: {missing} are not defined there", name=name
        )
    module.__all__ = list(public)
    for n in public:
        setattr(module, n, defined[n])
    return module


def qualified(obj: Any) -> str | None:
    module, name = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    return f"{module}.{name}" if module and name else None


def annotation_text(annotation: Any) -> str:
    if annotation is inspect.Parameter.empty:
        return ""
    return annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)


def signature(name: str, obj: Any, method: bool = False) -> str | None:
    """``name(a, b=1, *, c: int = 2) -> T``, one parameter a line when long; None without a signature.
    A method's first parameter (``self``) is left out."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    params, star = [], False
    for p in list(sig.parameters.values())[1 if method else 0 :]:
        if p.kind is p.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        if p.kind is p.VAR_POSITIONAL:
            star = True
        text = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "") + p.name
        ann = annotation_text(p.annotation)
        if ann:
            text += f": {ann}"
        if p.default is not p.empty:
            text += f" = {p.default!r}" if ann else f"={p.default!r}"
        params.append(text)
    ret = annotation_text(sig.return_annotation)
    tail = f") -> {ret}" if ret and not inspect.isclass(obj) else ")"
    one = f"{name}({', '.join(params)}{tail}"
    if len(one) <= 100:
        return one
    return f"{name}(\n" + "".join(f"    {p},\n" for p in params) + tail


def members(cls: type) -> list[tuple[str, Any]]:
    """The public methods and properties a class has from irspec's own classes (not ``object``'s or a
    ``Mapping``'s), in the order the classes define them, most derived first."""
    seen, out = set(), []
    for klass in cls.__mro__:
        if not (klass.__module__ or "").startswith(("irspec", "irspec_")):
            continue
        for name, value in vars(klass).items():
            if name.startswith("_") or name in seen:
                continue
            seen.add(name)
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, property) or inspect.isfunction(value):
                out.append((name, value))
    return out


def attribute_doc(dotted: str) -> str:
    """The docstring written under a module-level assignment (``NAME = ...`` then a string), or ""."""
    module_name, _, name = dotted.rpartition(".")
    module = sys.modules.get(module_name) or READ_FROM_SOURCE.get(module_name)
    if module is None or name == "__version__":
        return ""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return ""
    body = tree.body
    for node, after in zip(body, body[1:]):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            if (
                isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                return inspect.cleandoc(after.value.value)
    return ""


class Page:
    """One generated page, and the index of every name documented on either page."""

    index: dict[str, str] = {}

    def __init__(self, path: str) -> None:
        self.path, self.lines = path, []

    def register(self, names: list[str], key: str) -> None:
        for n in names:
            if n:
                Page.index.setdefault(n, f"{Path(self.path).name}#{key}")


def link_for(page: Page, context: str | None) -> Callable[[str], str | None]:
    def link(target: str) -> str | None:
        target = target.rstrip("()")
        candidates = [target]
        if context and "." not in target:
            candidates.insert(0, f"{context}.{target}")
        if "." not in target:
            candidates.append(f"irspec.{target}")
        for c in candidates:
            url = Page.index.get(c)
            if url:
                return url.removeprefix(Path(page.path).name)  # an anchor on this page needs no file name
        return None

    return link


def doc_of(obj: Any) -> str:
    doc = inspect.getdoc(obj) or ""
    # a class without its own docstring inherits object's or a base's: not this class's documentation
    if inspect.isclass(obj) and "__doc__" in vars(obj) and vars(obj)["__doc__"] is None:
        return ""
    # A function whose docstring opens with the function of the same name that it passes on to (a
    # wrapper that adds one thing) is documented by both: the wrapper's note, then the target's text.
    m = re.match(r":func:`~?([\w.]+)\.(\w+)`", doc)
    if inspect.isfunction(obj) and m and m.group(2) == obj.__name__:
        try:
            target = getattr(importlib.import_module(m.group(1)), m.group(2))
        except (ImportError, AttributeError):
            return doc
        if target is not obj and inspect.getdoc(target):
            doc += "\n\n" + inspect.getdoc(target)
    return doc


def documented(obj: Any) -> Any:
    """What documents ``obj``: itself, or for a callable wrapper that is neither a function nor a class
    (a pytest fixture, ``irspec.testing.irspec_plugin``) the function it wraps, so that the page shows
    the function's signature and docstring whether or not pytest is installed where the site is built."""
    plain = inspect.isclass(obj) or inspect.isfunction(obj) or inspect.ismethod(obj) or inspect.isbuiltin(obj)
    if plain or not hasattr(obj, "__wrapped__"):  # a fixture is a descriptor: isroutine() would take it
        return obj
    return inspect.unwrap(obj)


def value_text(obj: Any) -> str:
    """A value's text as the same on every build: a set's members in order, in a dict, list or tuple too
    (a set of strings iterates in an order that changes with each process's string hashing), and no
    memory address (an object without a ``repr`` of its own shows ``<... object at 0x7f...>``)."""
    return re.sub(r" at 0x[0-9A-Fa-f]+>", ">", _ordered_repr(obj))


def _ordered_repr(obj: Any) -> str:
    if isinstance(obj, (set, frozenset)) and obj:
        members = "{" + ", ".join(sorted(map(_ordered_repr, obj))) + "}"
        return members if type(obj) is set else f"{type(obj).__name__}({members})"
    if type(obj) is dict:
        return "{" + ", ".join(f"{_ordered_repr(k)}: {_ordered_repr(v)}" for k, v in obj.items()) + "}"
    if type(obj) in (list, tuple):
        items = [_ordered_repr(x) for x in obj]
        return (
            f"[{', '.join(items)}]"
            if type(obj) is list
            else f"({', '.join(items)}{',' if len(items) == 1 else ''})"
        )
    return repr(obj)


def render(page: Page, shown: str, obj: Any, level: int = 3) -> None:
    """One object: heading, signature, docstring, and for a class its members."""
    obj = documented(obj)
    key = anchor(shown)
    hashes = "#" * level
    lines = page.lines
    data = False
    if inspect.isclass(obj):
        kind = "exception" if issubclass(obj, BaseException) else "class"
        lines += [f"{hashes} `{shown}` {{#{key}}}", ""]
        sig = (
            None
            if issubclass(obj, BaseException) and obj.__init__ is BaseException.__init__
            else signature(shown, obj)
        )
        lines += ["```python", f"{kind} {sig or shown}", "```", ""]
    elif (
        callable(obj)
        and not inspect.isclass(obj)
        and (inspect.isfunction(obj) or inspect.ismethod(obj) or inspect.isbuiltin(obj))
    ):
        lines += [
            f"{hashes} `{shown}()` {{#{key}}}",
            "",
            "```python",
            signature(shown, obj) or shown,
            "```",
            "",
        ]
    else:
        value = value_text(obj)
        value = value if len(value) <= 300 else value[:300] + " ..."
        lines += [f"{hashes} `{shown}` {{#{key}}}", "", "```python", f"{shown} = {value}", "```", ""]
        data = True
    where = getattr(obj, "__module__", None) if (inspect.isclass(obj) or inspect.isfunction(obj)) else None
    context = qualified(obj) if inspect.isclass(obj) else None
    # a value's documentation is the docstring under its assignment, not its type's
    doc = attribute_doc(shown) if data else doc_of(obj)
    if doc:
        lines += [markdown(doc, link_for(page, context)), ""]
    if where and not shown.startswith(where + "."):
        lines += [f"<small>Defined in `{where}`.</small>", ""]
    if inspect.isclass(obj) and not issubclass(obj, BaseException):
        for name, value in members(obj):
            member = f"{shown}.{name}"
            if isinstance(value, property):
                lines += [f"{'#' * (level + 1)} `{member}` {{#{anchor(member)}}}", "", "*property*", ""]
                doc = inspect.getdoc(value.fget) if value.fget else ""
            else:
                lines += [
                    f"{'#' * (level + 1)} `{member}()` {{#{anchor(member)}}}",
                    "",
                    "```python",
                    signature(member, value, method=True) or member,
                    "```",
                    "",
                ]
                doc = inspect.getdoc(value) or ""
            if doc:
                lines += [markdown(doc, link_for(page, context)), ""]


def returned_classes(objs: list[Any]) -> list[tuple[str, type]]:
    """Classes of irspec that the given functions and methods return, not in ``__all__``, by name."""
    face_objects = [getattr(irspec, n) for n in irspec.__all__]
    face = {id(o) for o in face_objects}  # a base class of a face class is documented by its members there
    found: dict[str, type] = {}
    functions = []
    for obj in objs:
        if inspect.isclass(obj):
            functions += [v for _, v in members(obj) if inspect.isfunction(v)]
        elif inspect.isfunction(obj):
            functions.append(obj)
    for f in functions:
        ret = inspect.signature(f).return_annotation
        if ret is inspect.Signature.empty:
            continue
        text = ret if isinstance(ret, str) else inspect.formatannotation(ret)
        namespace = vars(sys.modules[f.__module__])
        for dotted in re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", text):
            value: Any = namespace
            for part in dotted.split("."):
                value = value.get(part) if isinstance(value, dict) else getattr(value, part, None)
                if value is None:
                    break
            if (
                inspect.isclass(value)
                and value.__module__.startswith("irspec")
                and id(value) not in face
                and not any(inspect.isclass(f) and issubclass(f, value) for f in face_objects)
            ):
                found.setdefault(value.__name__, value)
    return sorted(found.items())


def main() -> None:
    api, mods = Page(API), Page(MODULES_PAGE)
    face = {name: getattr(irspec, name) for name in irspec.__all__}
    exceptions = [n for n, o in face.items() if inspect.isclass(o) and issubclass(o, BaseException)]
    topics = [
        (title, [n for n in names if n in face] or (exceptions if not names else []))
        for title, names in TOPICS
    ]
    listed = {n for _, names in topics for n in names}
    more = [n for n in irspec.__all__ if n not in listed]
    if more:
        topics.append(("More", more))
    returned = returned_classes(list(face.values()))
    modules = list(MODULES)
    # the index first, so that any docstring links to any documented name
    for _, names in topics:
        for n in names:
            api.register([f"irspec.{n}", qualified(face[n])], anchor(f"irspec.{n}"))
            if inspect.isclass(face[n]):
                for m, _ in members(face[n]):
                    api.register([f"irspec.{n}.{m}", f"{qualified(face[n])}.{m}"], anchor(f"irspec.{n}.{m}"))
    for name, cls in returned:
        api.register([qualified(cls)], anchor(name))
        for m, _ in members(cls):
            api.register([f"{qualified(cls)}.{m}"], anchor(f"{name}.{m}"))
    for m in modules:
        module = load(m)
        mods.register([m], anchor(m))
        for n in getattr(module, "__all__", ()):
            mods.register([f"{m}.{n}", qualified(documented(getattr(module, n)))], anchor(f"{m}.{n}"))

    api.lines += [
        "# Python API",
        "",
        "Everything `import irspec` gives (`irspec.__all__`), generated from the objects' own docstrings and "
        "signatures when this site was built. `import irspec` is cheap: numpy, polars, scipy and YAML are "
        "imported when a name that needs them is first used. The classes these functions return follow; the "
        f"modules imported by their path (statistics on plain arrays, Spark, pytrec_eval's API, testing) are on "
        f"[their own page](modules.md).",
        "",
    ]
    for title, names in topics:
        api.lines += [f"- **{title}:** " + ", ".join(f"[`{n}`](#{anchor('irspec.' + n)})" for n in names)]
    api.lines += ["- **Returned by these:** " + ", ".join(f"[`{n}`](#{anchor(n)})" for n, _ in returned), ""]
    for title, names in topics:
        api.lines += [f"## {title}", ""]
        for n in names:
            render(api, f"irspec.{n}", face[n])
    api.lines += [
        "## Returned by these",
        "",
        "Classes the functions above return, documented here although `import irspec` does not name them: "
        "use them through the objects you are given.",
        "",
    ]
    for name, cls in returned:
        render(api, name, cls)

    mods.lines += [
        "# Modules",
        "",
        "Modules imported by their path, for what the face does not cover: each module's `__all__`, "
        "generated from its docstrings when this site was built. A module or name that moved keeps its old "
        "path for one release, with a `DeprecationWarning` naming the new one (`import irspec.spark` gives "
        "`irspec.evaluation.spark`, `irspec.stats.paired` is `irspec.stats.significance.paired`); the "
        "repository's `CHANGELOG.md` lists them.",
        "",
    ]
    for m in modules:
        module = load(m)
        mods.lines += [
            f"## `{m}` {{#{anchor(m)}}}",
            "",
            markdown(inspect.getdoc(module) or "", link_for(mods, m)),
            "",
        ]
        for n in getattr(module, "__all__", ()):
            render(mods, f"{m}.{n}", getattr(module, n))
    for page in (api, mods):
        with mkdocs_gen_files.open(page.path, "w") as f:
            f.write("\n".join(page.lines))


main()
