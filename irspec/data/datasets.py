"""ir_datasets' datasets as qrels and as measures: ``irds:<dataset id>``.

``irds:msmarco-passage/trec-dl-2019/judged`` stands wherever a qrels path does (the CLI, a plan's
``qrels``, :func:`irspec.evaluate`): the dataset's qrels are read through ir_datasets' own API
(``ir_datasets.load(id).qrels_iter()``, which downloads them on first use, as ir_datasets always does)
and go through the same checks as a DataFrame's (:meth:`irspec.data.Qrels.from_frame`): string or
integer ids, integer labels, no docno twice in a query.

Beside such qrels, the spec name ``irds-official`` (:data:`irspec.spec.registry.DATASET_MEASURES`) stands
for the measures the dataset's documentation names official (ir_datasets' ``official_measures``),
written in ir_measures' spelling, which is irspec's spec language too: ``nDCG@10``, ``RR(rel=2)``,
``AP(rel=2)``, each with its own relevance level. A measure irspec cannot read is an error that names it,
never a measure silently left out.

ir_datasets is optional (``pip install 'irspec[datasets]'``) and slow to import (more than half a
second), so it is imported only when an ``irds:`` id is read: this module is an edge of the import
layering (ARCHITECTURE.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from irspec.errors import InputError, SpecError, or_list, suggest
from irspec.lazy import lazy_module
from irspec.spec.plugins import get_registry
from irspec.spec.registry import DATASET_MEASURES, Metric, Registry

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")

__all__ = [
    "PREFIX",
    "check_qrels",
    "is_dataset_id",
    "official_specs",
    "parse_specs",
    "qrels_frame",
    "qrels_records",
]

PREFIX = "irds:"
"""How a qrels argument names an ir_datasets dataset instead of a file."""

_FIELDS = {"query_id": "String", "doc_id": "String", "relevance": "Int64"}
"""The fields irspec reads from ir_datasets' qrels records (ir_measures' column names), and the polars
type of each when there are no records to infer it from."""

_INSTALL = "pip install 'irspec[datasets]'"


def is_dataset_id(src: Any) -> bool:
    """Whether ``src`` names an ir_datasets dataset (a string ``irds:<id>``) rather than a file."""
    return isinstance(src, str) and src.startswith(PREFIX)


def check_qrels(src: str) -> None:
    """Raise an :class:`~irspec.errors.InputError` unless ``src`` (``irds:<id>``) names a dataset that
    ir_datasets knows and that has qrels. Nothing is downloaded."""
    _dataset_with_qrels(src)


def qrels_records(src: str) -> list[Any]:
    """The qrels records of the dataset ``src`` (``irds:<id>``) names, as ir_datasets gives them (named
    tuples: ``TrecQrel``, or ``TrecSubQrel`` with a ``subtopic_id`` for a diversity task)."""
    dataset = _dataset_with_qrels(src)
    try:
        return list(dataset.qrels_iter())
    # ir_datasets downloads and decompresses on first use: network, disk, checksum and format errors of
    # every kind come from here, and each is the user's to fix, not a crash of irspec.
    except Exception as e:
        raise InputError(f"ir_datasets could not read the qrels: {type(e).__name__}: {e}", src) from None


def qrels_frame(src: str) -> pl.DataFrame:
    """The qrels of the dataset ``src`` (``irds:<id>``) names, read through ir_datasets, as a polars
    frame with ir_measures' columns ``query_id``, ``doc_id`` and ``relevance``, in ir_datasets' order."""
    rows = qrels_records(src)
    missing = [name for name in _FIELDS if rows and not hasattr(rows[0], name)]
    if missing:
        raise InputError(
            f"the dataset's qrels records ({type(rows[0]).__name__}) have no {or_list(missing)}", src
        )
    return pl.DataFrame(
        [
            pl.Series(
                name,
                [getattr(r, name) for r in rows],
                dtype=None if rows else getattr(pl, dtype),
                strict=False,
            )
            for name, dtype in _FIELDS.items()
        ]
    )


def official_specs(src: str) -> tuple[str, ...]:
    """The measures the documentation of the dataset ``src`` (``irds:<id>``) names official, as written
    there (ir_measures' names, such as ``RR(rel=2)``). A :class:`~irspec.errors.SpecError` when there
    are none, or names every one that irspec cannot read."""
    dataset = _dataset_with_qrels(src)  # measures without judgments to compute them from mean nothing
    documentation = dataset.documentation() if hasattr(dataset, "documentation") else {}
    measures = (documentation or {}).get("official_measures")
    if isinstance(measures, str):  # a YAML scalar where a list is usual
        measures = [measures]
    if not measures:
        raise SpecError(
            f"{src}: ir_datasets documents no official measures for this dataset; "
            f"name the measures instead of {DATASET_MEASURES} (for example nDCG@10, AP)"
        )
    unreadable = [f"{m!r} ({e})" for m, e in _spec_errors(measures, get_registry()).items()]
    if unreadable:
        raise SpecError(
            f"{src}: irspec cannot read {len(unreadable)} of the dataset's official measures "
            f"{list(measures)}: {'; '.join(unreadable)}; name the measures instead of {DATASET_MEASURES}"
        )
    return tuple(measures)


def parse_specs(specs: str | Iterable[str], qrels: Any, *, trec: bool = False) -> list[Metric]:
    """Metric specs parsed as :meth:`irspec.spec.registry.Registry.parse` does, where ``irds-official`` stands
    for the official measures of the dataset that ``qrels`` names, when it names one (``irds:<id>``).

    The dataset's documentation is read only if a spec says ``irds-official``.
    """
    groups = {DATASET_MEASURES: lambda: official_specs(qrels)} if is_dataset_id(qrels) else None
    return get_registry().parse(specs, trec=trec, groups=groups)


def _spec_errors(specs: Iterable[str], registry: Registry) -> dict[str, SpecError]:
    """Each of ``specs`` that the registry cannot read, with its error."""
    errors = {}
    for text in specs:
        try:
            registry.parse(text)
        except SpecError as e:
            errors[text] = e
    return errors


def _dataset_with_qrels(src: str) -> Any:
    dataset = _dataset(src)
    if not dataset.has_qrels():
        raise InputError(
            "ir_datasets has no qrels for this dataset; name one that has, such as a subset with "
            "judgments (e.g. irds:msmarco-passage/trec-dl-2019/judged)",
            src,
        )
    return dataset


def _dataset(src: str) -> Any:
    """The ir_datasets dataset that ``src`` (``irds:<id>``) names; nothing is downloaded yet."""
    dataset_id = src[len(PREFIX) :]
    ir_datasets = _import_ir_datasets(src)
    if not dataset_id:
        raise InputError(
            f"no dataset id after {PREFIX!r}; expected {PREFIX}<id>, e.g. irds:antique/test", src
        )
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        hint = suggest(dataset_id, list(ir_datasets.registry))
        also = f"did you mean {or_list(hint)}? " if hint else ""
        raise InputError(
            f"ir_datasets has no dataset {dataset_id!r}; {also}its ids are listed at https://ir-datasets.com",
            src,
        ) from None


def _import_ir_datasets(src: str) -> Any:
    try:
        import ir_datasets
    except ModuleNotFoundError as e:
        if e.name != "ir_datasets":  # installed, but one of its own dependencies is not
            raise InputError(f"ir_datasets cannot be imported ({e}); reinstall it: {_INSTALL}", src) from None
        raise InputError(
            f"reading irds: qrels needs ir_datasets, which is not installed: {_INSTALL}", src
        ) from None
    return ir_datasets
