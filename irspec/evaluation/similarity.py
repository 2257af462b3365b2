"""Rank similarity between two runs (``irspec.similarity``): per query and averaged.

Each run is read as :func:`irspec.read_run` reads it and ranked as trec_eval ranks it (score
descending, then docno descending; the file's rank column ignored), then every query the two runs share
gets each measure of :mod:`irspec.stats.similarity` (RBO, KTU, Jaccard). Queries only one run has are
left out, and the result's warnings name them. No qrels: the measures compare orderings, not
relevance. :mod:`irspec.experiment.reproduce` computes its KTU and RBO here.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Collection, Sequence
from dataclasses import field
from typing import Any

import numpy as np

from irspec.data import Run, read_run
from irspec.data.frames import make_frame
from irspec.errors import InputError, IrspecWarning
from irspec.evaluation.means import aggregate_values
from irspec.frozen import frozen
from irspec.stats.similarity import SimilarityMeasure, parse_similarity

__all__ = ["Similarity", "rankings", "same_source_note", "shared_queries", "similarity"]


@frozen
class Similarity:
    """The similarity of two runs: ``values`` is (queries × measures), in the order of ``query_ids``
    (the queries both runs have, in id order) and ``measures``; ``warnings`` name the queries left out.

    Read it as a frame (:meth:`to_frame`), as dicts (:meth:`per_query`, :meth:`means`) or print it.
    """

    run_a: str
    run_b: str
    measures: tuple[SimilarityMeasure, ...]
    query_ids: tuple[str, ...]
    values: np.ndarray = field(repr=False)
    warnings: tuple[str, ...] = ()

    def means(self) -> dict[str, float]:
        """Each measure's mean over the queries (NaN values left out, as irspec's means leave them)."""
        return {
            str(m): float(aggregate_values(self.values[:, j], "mean")) for j, m in enumerate(self.measures)
        }

    def per_query(self) -> dict[str, dict[str, float]]:
        """``{query_id: {measure: value}}``."""
        names = [str(m) for m in self.measures]
        return {
            q: dict(zip(names, map(float, row), strict=True))
            for q, row in zip(self.query_ids, self.values, strict=True)
        }

    def to_frame(self, wide: bool = False, backend: str = "polars") -> Any:
        """The per-query values as a data frame: long (``query_id, measure, value``) or ``wide``
        (``query_id`` and one column per measure). ``backend``: ``"polars"`` or ``"pandas"``."""
        names = [str(m) for m in self.measures]
        if wide:
            columns: dict[str, Any] = {"query_id": list(self.query_ids)}
            columns.update({n: self.values[:, j] for j, n in enumerate(names)})
            types = {"query_id": "str", **dict.fromkeys(names, "float")}
            return make_frame(columns, types, backend)
        n_q, n_m = self.values.shape
        return make_frame(
            {
                "query_id": [q for q in self.query_ids for _ in range(n_m)],
                "measure": names * n_q,
                "value": self.values.reshape(-1),
            },
            {"query_id": "str", "measure": "str", "value": "float"},
            backend,
        )

    def _repr_markdown_(self) -> str:
        # a notebook shows the means, then the queries: the same table as str() in Markdown
        names = [str(m) for m in self.measures]
        means = self.means()
        rows = [f"| {self.run_a} vs {self.run_b} | " + " | ".join(names) + " |"]
        rows.append("|:---|" + "---:|" * len(names))
        rows.append("| **mean** | " + " | ".join(f"**{_fmt(means[n])}**" for n in names) + " |")
        rows += [
            f"| {q} | " + " | ".join(_fmt(v) for v in row) + " |"
            for q, row in zip(self.query_ids, self.values, strict=True)
        ]
        return "\n".join(rows) + "\n"

    def __str__(self) -> str:
        names = [str(m) for m in self.measures]
        width = max([len("query"), len("mean")] + [len(q) for q in self.query_ids])
        head = f"{'query':<{width}}  " + "  ".join(f"{n:>10}" for n in names)
        rows = [head]
        for q, row in zip(self.query_ids, self.values, strict=True):
            rows.append(f"{q:<{width}}  " + "  ".join(f"{_fmt(v):>10}" for v in row))
        means = self.means()
        rows.append(f"{'mean':<{width}}  " + "  ".join(f"{_fmt(means[n]):>10}" for n in names))
        return f"{self.run_a} vs {self.run_b}\n" + "\n".join(rows) + "\n"


def _fmt(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.4f}"


def similarity(run_a: Any, run_b: Any, measures: str | Sequence[str] = "RBO, KTU") -> Similarity:
    """Rank similarity between two runs, per query and averaged.

    ``run_a`` and ``run_b`` are anything :func:`irspec.read_run` reads (a path, a pytrec_eval dict, a
    DataFrame, a :class:`~irspec.data.Run`). ``measures`` are written as metric specs,
    ``name(params)@cutoff``: ``RBO(p=0.9)@100`` (rank-biased overlap, normalised, default ``p=0.95`` to
    depth 1000), ``KTU@100`` (Kendall's tau union as ``repro_eval`` computes it, default cut 1000),
    ``Jaccard@10`` (overlap of the top 10; the whole rankings without a cutoff). See
    :mod:`irspec.stats.similarity` for the formulas.

    Only the queries both runs have are compared; the others are named in the result's ``warnings``
    (also issued as an :class:`~irspec.errors.IrspecWarning`). An empty run is an error; the same file
    given twice is a warning.
    """
    bound = parse_similarity(measures)
    a, b = read_run(run_a), read_run(run_b)
    notes = [n for n in [same_source_note(a, b)] if n]
    ranked_a, ranked_b = rankings(a), rankings(b)
    common, left_out = shared_queries([(a.name, ranked_a), (b.name, ranked_b)])
    notes.extend(left_out)
    values = np.array(
        [[m.compute(ranked_a[q], ranked_b[q]) for m in bound] for q in common], dtype=np.float64
    ).reshape(len(common), len(bound))
    for note in notes:
        warnings.warn(note, IrspecWarning, stacklevel=2)
    return Similarity(a.name, b.name, tuple(bound), tuple(common), values, tuple(notes))


def rankings(run: Run) -> dict[str, list[str]]:
    """The run's docnos per query id as trec_eval ranks them: score descending, then docno descending.
    An empty run is an :class:`~irspec.errors.InputError` naming it: there is nothing to compare."""
    if run.frame.height == 0:
        raise InputError("the run is empty: no ranking to compare", source=run.source)
    frame = run.frame.sort(["query", "score", "docno"], descending=[False, True, True])
    out: dict[str, list[str]] = {}
    for (query,), docs in frame.group_by("query", maintain_order=True):
        out[str(query)] = docs.get_column("docno").to_list()
    return out


def shared_queries(runs: Sequence[tuple[str, Collection[str]]]) -> tuple[list[str], list[str]]:
    """The query ids every one of ``runs`` (``(name, query ids)`` pairs; two runs may share a name) has,
    sorted, and a note per run that has queries the others lack, naming them: they are left out."""
    sets = [(name, set(queries)) for name, queries in runs]
    common = set.intersection(*(queries for _, queries in sets))
    notes = []
    for name, queries in sets:
        extra = sorted(queries - common)
        if extra:
            shown = ", ".join(repr(q) for q in extra[:5]) + (", ..." if len(extra) > 5 else "")
            notes.append(
                f"{name}: {len(extra)} of its {len(queries)} queries not in every run compared "
                f"({shown}): left out"
            )
    return sorted(common), notes


def same_source_note(*runs: Run) -> str | None:
    """A note when two of ``runs`` were read from the same file: comparing a run with itself is
    allowed (every measure at its maximum) but rarely meant."""
    seen: dict[str, str] = {}
    for run in runs:
        key = os.path.realpath(run.source) if os.path.exists(run.source) else None
        if key is None:
            continue
        if key in seen:
            return f"{run.source}: the same file is given twice"
        seen[key] = run.name
    return None
