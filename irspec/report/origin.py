"""Provenance: where results come from (versions, specs, options, seeds, and the SHA-256 of every
input file), so that a report can be traced to its inputs and reproduced.

The module is not called ``provenance`` so that the function :func:`provenance` keeps that name in
:mod:`irspec.report`.
"""

from __future__ import annotations

import hashlib
import os
import platform
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from importlib import metadata
from typing import TYPE_CHECKING, Any

import numpy

from irspec.version import __version__

if TYPE_CHECKING:
    from irspec.evaluation.evaluated import Evaluated

__all__ = ["VERSIONED", "hash_in_background", "provenance", "sha256_file"]


def _digest(path: str | os.PathLike[str]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


_PENDING: dict[tuple[str, int, int], Any] = {}


def _file_key(path: str | os.PathLike[str]) -> tuple[str, int, int]:
    st = os.stat(path)
    return (os.path.realpath(path), st.st_size, st.st_mtime_ns)


def hash_in_background(paths: Sequence[str | os.PathLike[str]]) -> None:
    """Start hashing ``paths`` on a worker thread, so that provenance costs no wall time.

    hashlib releases the GIL while it hashes, so this runs beside reading and evaluation on another
    core; :func:`sha256_file` then picks the result up (or hashes itself for any file not started here).
    """
    files = [p for p in paths if os.fspath(p) != "-" and os.path.isfile(p)]
    if not files:
        return
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="irspec-sha256")
    for p in files:
        _PENDING[_file_key(p)] = pool.submit(_digest, p)
    pool.shutdown(wait=False)


def sha256_file(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes (as stored: a gzip file's compressed bytes), in hex."""
    future = _PENDING.pop(_file_key(path), None)
    return future.result() if future is not None else _digest(path)


_SEEDED_TESTS = ("randomization", "bootstrap", "randomized-tukey")
# (key, distribution): every package irspec imports to read, evaluate, compare and report; matplotlib
# is imported only to draw the plots output's PNG files, and named here all the same.
_PACKAGES = (
    ("scipy", "scipy"),
    ("polars", "polars"),
    ("matplotlib", "matplotlib"),
    ("jinja2", "jinja2"),
    ("pyyaml", "pyyaml"),
    ("jsonschema", "jsonschema"),
    ("lark", "lark"),
    ("pluggy", "pluggy"),
)
VERSIONED: tuple[str, ...] = ("irspec", "python", "numpy", *(name for name, _ in _PACKAGES))
"""The provenance's version keys, in the order a report lists them."""


def provenance(
    results: Sequence[Evaluated],
    inputs: Sequence[tuple[str, str | None, Any]],
    *,
    options: Any = None,
    compare: Any = None,
    plan: str | os.PathLike[str] | None = None,
    overrides: Sequence[str] = (),
) -> dict[str, Any]:
    """Where the results come from, so that they can be traced to their inputs and reproduced.

    The date (UTC), the versions of irspec, Python and every package used (:data:`VERSIONED`; ``None``
    for one not installed), the platform, the canonical metric specs,
    the options, the comparison settings and the seeds that drew random numbers, and per input file
    (``inputs`` as ``(role, name, path)``: ``("qrels", None, path)``, ``("run", "bm25", path)``; the plan
    file is added when ``plan`` is given) its path, size and SHA-256. The files are read again to hash
    them; standard input (``-``) and in-memory data get ``null``. ``options`` (an
    :class:`~irspec.evaluation.context.Options`) defaults to the first result's.
    """

    def version(dist: str) -> str | None:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    metrics: list[str] = []
    for res in results:
        metrics.extend(str(m) for m in res.metrics if str(m) not in metrics)
    files = []
    entries = ([("plan", None, plan)] if plan is not None else []) + list(inputs)
    for role, name, path in entries:
        entry: dict[str, Any] = {"role": role, "name": name, "path": None, "bytes": None, "sha256": None}
        if isinstance(path, (str, os.PathLike)) and os.fspath(path) != "-":
            entry["path"] = os.fspath(path)
            if os.path.isfile(path):
                entry["bytes"] = os.path.getsize(path)
                entry["sha256"] = sha256_file(path)
        elif path == "-":
            entry["path"] = "-"
        files.append(entry)
    seeds = {}
    if compare is not None and compare.test in _SEEDED_TESTS:
        seeds["compare.seed"] = compare.seed
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "irspec": __version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        **{name: version(dist) for name, dist in _PACKAGES},
        "platform": platform.platform(),
        "plan": os.fspath(plan) if plan is not None else None,
        "overrides": list(overrides),
        "metrics": metrics,
        "options": options.as_dict()
        if options is not None
        else results[0].options.as_dict()
        if results
        else {},
        "compare": _settings(compare),
        "seeds": seeds,
        "inputs": files,
    }


def _settings(compare: Any) -> dict[str, Any] | None:
    if compare is None:
        return None
    return compare.as_dict() if hasattr(compare, "as_dict") else dict(vars(compare))
