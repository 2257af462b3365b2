"""Names that do not shadow the standard library or each other, in irspec and in its shipped plugins.

Read from the source with :mod:`ast`, as ``tests/test_architecture.py`` reads the imports:

1. No import binds the name of a standard library module to something else (``from irspec.spec import
   syntax as ast`` hid the standard library's ``ast`` in five modules; ``from irspec.report import html``
   hid ``html``). A module may be *named* like one inside a package (``irspec/report/html.py``):
   imports are absolute, so ``import html`` never finds it; what shadows is a name bound in a module.
2. No module of the package is named like a function of the face: importing a submodule
   ``irspec/compare.py`` would replace the function ``irspec.compare`` (the reason the flat house had
   ``comparisons``, ``power_analysis`` and ``zscores``).
3. No two modules of one distribution have names that differ only by a plural ``s``, case or
   underscores (``comparison`` and ``comparisons``). The old paths of moved modules, kept for one
   release (``tests/test_architecture.py``'s ``DEPRECATED``), are the exception: their names are the
   old ones, confusable or not (``irspec.results`` beside ``irspec.evaluation.result``), and go after it.
4. Every name ``dir(irspec)`` lists is an attribute of the face.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest
from test_architecture import DEPRECATED

import irspec

ROOT = Path(irspec.__file__).resolve().parent
PLUGINS = ROOT.parent / "plugins"
STDLIB = frozenset(sys.stdlib_module_names)


def packages() -> dict[str, Path]:
    """irspec's package and each shipped plugin's, by their import name (the plugins' when in this checkout)."""
    found = {"irspec": ROOT}
    for path in sorted(PLUGINS.glob("irspec-*/irspec_*/__init__.py")):
        found[path.parent.name] = path.parent
    return found


def stdlib_shadows(source: str, where: str = "<text>") -> list[str]:
    """Each import of ``source`` that binds a standard library module's name to something else."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            if bound not in STDLIB:
                continue
            if isinstance(node, ast.Import):
                what = alias.name
                same = alias.name == bound or (alias.asname is None and alias.name.split(".")[0] == bound)
            else:
                what = f"{'.' * node.level}{node.module or ''}.{alias.name}"
                # `from os import path` binds os.path under its own stdlib-sized name: not a shadow
                same = node.level == 0 and (node.module or "").split(".")[0] in STDLIB
            if not same:
                out.append(
                    f"{where}:{node.lineno}: {what} bound as {bound!r}, the standard library's {bound}"
                )
    return out


def module_names(root: Path, leave_out: frozenset[Path] = frozenset()) -> list[str]:
    """The last part of every module and sub-package name under ``root``, but the files ``leave_out``."""
    files = [p for p in root.rglob("*.py") if "__pycache__" not in p.parts and p not in leave_out]
    names = {p.stem for p in files if p.stem != "__init__"}
    names |= {p.parent.name for p in files if p.name == "__init__.py" and p.parent != root}
    return sorted(names)


def confusable(names: list[str]) -> list[tuple[str, str]]:
    """Pairs of distinct names equal once case, underscores and a trailing ``s`` are set aside."""

    def key(name: str) -> str:
        return re.sub(r"s$", "", name.lower().replace("_", ""))

    by_key: dict[str, list[str]] = {}
    for name in names:
        by_key.setdefault(key(name), []).append(name)
    return [(a, b) for group in by_key.values() for i, a in enumerate(group) for b in group[i + 1 :]]


@pytest.mark.parametrize("package", sorted(packages()))
def test_no_import_hides_a_standard_library_module(package):
    root = packages()[package]
    found = [
        problem
        for path in sorted(root.rglob("*.py"))
        for problem in stdlib_shadows(
            path.read_text(encoding="utf-8"), path.relative_to(root.parent).as_posix()
        )
    ]
    assert found == []


def test_no_module_is_named_like_a_function_of_the_face():
    face = set(irspec.__all__) | set(irspec._LAZY)
    top = {p.stem for p in ROOT.glob("*.py")} | {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert sorted(face & top) == []


@pytest.mark.parametrize("package", sorted(packages()))
def test_no_two_modules_have_confusable_names(package):
    # an old path kept for a release has the name it had (irspec.results, irspec.comparison): confusable
    # with the module its names went to is what an old name is; every other module is held to the rule
    root = packages()[package]
    kept = frozenset(
        path
        for name in (DEPRECATED if package == "irspec" else ())
        for path in (root / f"{name.replace('.', '/')}.py", root / name.replace(".", "/") / "__init__.py")
        if path.exists()
    )
    assert len(kept) == (len(DEPRECATED) if package == "irspec" else 0)
    assert confusable(module_names(root, kept)) == []


def test_every_name_the_face_lists_is_an_attribute():
    # the face's table of sub-packages outlived the move into sub-packages: irspec.engine raised
    # ModuleNotFoundError (not AttributeError, so even hasattr raised)
    missing = []
    for name in dir(irspec):
        try:
            getattr(irspec, name)
        except AttributeError:
            missing.append(name)
        except ImportError as e:
            missing.append(f"{name} ({e})")
    assert missing == []
    assert not hasattr(irspec, "engine")


# --------------------------------------------------------------------------------------------------
# The checks themselves, on made-up text: they must see what they are meant to see.


@pytest.mark.parametrize(
    "text, shadows",
    [
        ("from irspec.spec import syntax as ast", True),
        ("from irspec.report import html", True),
        ("import numpy as json", True),
        ("from . import html", True),
        ("import ast", False),
        ("import os.path", False),
        ("from os import path", False),
        ("from collections import abc", False),
        ("import xml.etree.ElementTree as ElementTree", False),
        ("from irspec.spec import syntax", False),
    ],
)
def test_the_check_sees_a_binding_that_hides_the_standard_library(text, shadows):
    assert bool(stdlib_shadows(text)) is shadows


def test_the_check_sees_confusable_names():
    assert confusable(["comparison", "comparisons", "power", "power_analysis", "z_scores", "zscores"]) == [
        ("comparison", "comparisons"),
        ("z_scores", "zscores"),
    ]
