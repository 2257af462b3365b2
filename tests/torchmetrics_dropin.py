"""irspec's drop-in put where torchmetrics' retrieval metrics were, so that torchmetrics' own tests and
examples test the drop-in: a pytest plugin (``-p torchmetrics_dropin``, for a run of torchmetrics' tests)
and :func:`replaced` (a context, for one test of irspec's).

Every module of torchmetrics that is loaded has each retrieval class and function of torchmetrics'
(``RetrievalMAP``, ``retrieval_average_precision``, ...) replaced by irspec's of the same name, wherever
it is bound: ``torchmetrics.retrieval``, ``torchmetrics.retrieval.average_precision``,
``torchmetrics.functional``, and the deprecated top-level classes (``torchmetrics.RetrievalMAP``, which
only warn before they do what the others do). What torchmetrics' tests use of torchmetrics besides
these (``Metric``, ``_retrieval_aggregate`` for their expected values, utilities) stays its own.
Importing this module changes nothing.
"""

from __future__ import annotations

import contextlib
import importlib
import pkgutil
import sys
from collections.abc import Iterator
from typing import Any

import irspec.compat.torchmetrics as dropin


def originals() -> dict[int, Any]:
    """torchmetrics' retrieval classes and functions (and its deprecated classes), by ``id``, each with
    irspec's of its name."""
    import torchmetrics.functional.retrieval
    import torchmetrics.retrieval

    found: dict[int, Any] = {}
    for package in (torchmetrics.retrieval, torchmetrics.functional.retrieval):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for name in dropin.__all__:
                # the deprecated classes (_RetrievalMAP) subclass torchmetrics' own: replaced as well
                for bound in (name, f"_{name}" if name[0].isupper() else None):
                    if bound and hasattr(module, bound) and getattr(module, bound) is not None:
                        found[id(getattr(module, bound))] = getattr(dropin, name)
    return found


def replace() -> list[tuple[Any, str, Any]]:
    """Bind irspec's classes and functions in place of torchmetrics' in every loaded torchmetrics module;
    ``(module, name, original)`` for each binding replaced."""
    table = originals()
    done = []
    for module_name, module in list(sys.modules.items()):
        if module is None or not (module_name == "torchmetrics" or module_name.startswith("torchmetrics.")):
            continue
        for name, value in list(vars(module).items()):
            if id(value) in table and not name.startswith("__") and value is not table[id(value)]:
                setattr(module, name, table[id(value)])
                done.append((module, name, value))
    return done


@contextlib.contextmanager
def replaced() -> Iterator[list[tuple[Any, str, Any]]]:
    """:func:`replace` for the time of a ``with`` block, then torchmetrics' own back."""
    done = replace()
    try:
        yield done
    finally:
        for module, name, value in reversed(done):
            setattr(module, name, value)


def pytest_configure(config: Any) -> None:
    """As a plugin: replace before torchmetrics' tests are collected (they import the names then)."""
    replace()
