"""reference/api.md and reference/modules.md: the Python API from the live objects' docstrings, at build time.

The face is ``irspec.__all__``: each name is resolved with ``getattr(irspec, name)`` and rendered from
the object itself (``inspect``: signature, docstring, public members), wherever inside the package it is
defined, so the page follows the code when it moves. The classes those functions return that are not
in ``__all__`` (a comparison's ``Comparisons``, a plan's ``Plan``) are found through their return
annotations and documented after the face. modules.md documents the modules users import by their
path (the plugin API, the statistics on plain arrays, Spark, pytrec_eval's API, the testing helpers):
each module's ``__all__``.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
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
    ("Evaluating runs", ("evaluate", "Evaluator", "Result", "ResultSet", "evaluate_many", "evaluate_input", "read_qrels", "read_run")),
    ("Comparing runs", ("compare", "power", "PowerAnalysis", "agreement", "standardize", "by_group", "with_groups")),
    ("Fusing runs", ("fuse", "Fusion")),
    ("Plans", ("load_plan", "run_plan")),
    ("Writing plugins", ("hookimpl", "MetricDef", "Param", "Alias", "MetricGroup", "InputReader", "InputTable", "FusionDef")),
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
    "irspec.compat.pytrec_eval",
    "irspec.testing",
)
API, MODULES_PAGE = "reference/api.md", "reference/modules.md"


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
    module = sys.modules.get(module_name)
    if module is None or name == "__version__":
        return ""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return ""
    body = tree.body
    for node, after in zip(body, body[1:]):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str):
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


def render(page: Page, shown: str, obj: Any, level: int = 3) -> None:
    """One object: heading, signature, docstring, and for a class its members."""
    key = anchor(shown)
    hashes = "#" * level
    lines = page.lines
    data = False
    if inspect.isclass(obj):
        kind = "exception" if issubclass(obj, BaseException) else "class"
        lines += [f"{hashes} `{shown}` {{#{key}}}", ""]
        sig = None if issubclass(obj, BaseException) and obj.__init__ is BaseException.__init__ else signature(shown, obj)
        lines += ["```python", f"{kind} {sig or shown}", "```", ""]
    elif callable(obj) and not inspect.isclass(obj) and (inspect.isfunction(obj) or inspect.ismethod(obj) or inspect.isbuiltin(obj)):
        lines += [f"{hashes} `{shown}()` {{#{key}}}", "", "```python", signature(shown, obj) or shown, "```", ""]
    else:
        value = repr(obj)
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
                lines += [f"{'#' * (level + 1)} `{member}()` {{#{anchor(member)}}}", "", "```python", signature(member, value, method=True) or member, "```", ""]
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
            if (inspect.isclass(value) and value.__module__.startswith("irspec") and id(value) not in face
                    and not any(inspect.isclass(f) and issubclass(f, value) for f in face_objects)):
                found.setdefault(value.__name__, value)
    return sorted(found.items())


def main() -> None:
    api, mods = Page(API), Page(MODULES_PAGE)
    face = {name: getattr(irspec, name) for name in irspec.__all__}
    exceptions = [n for n, o in face.items() if inspect.isclass(o) and issubclass(o, BaseException)]
    topics = [(title, [n for n in names if n in face] or (exceptions if not names else [])) for title, names in TOPICS]
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
        module = importlib.import_module(m)
        mods.register([m], anchor(m))
        for n in getattr(module, "__all__", ()):
            mods.register([f"{m}.{n}", qualified(getattr(module, n))], anchor(f"{m}.{n}"))

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
    api.lines += ["## Returned by these", "",
                  "Classes the functions above return, documented here although `import irspec` does not name them: "
                  "use them through the objects you are given.", ""]
    for name, cls in returned:
        render(api, name, cls)

    mods.lines += ["# Modules", "",
                   "Modules imported by their path, for what the face does not cover: each module's `__all__`, "
                   "generated from its docstrings when this site was built.", ""]
    for m in modules:
        module = importlib.import_module(m)
        mods.lines += [f"## `{m}` {{#{anchor(m)}}}", "", markdown(inspect.getdoc(module) or "", link_for(mods, m)), ""]
        for n in getattr(module, "__all__", ()):
            render(mods, f"{m}.{n}", getattr(module, n))
    for page in (api, mods):
        with mkdocs_gen_files.open(page.path, "w") as f:
            f.write("\n".join(page.lines))


main()
