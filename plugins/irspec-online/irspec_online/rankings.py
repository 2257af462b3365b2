"""Runs as the rankings interleaving, counterfactual estimates and simulations read: per query, the
document ids in trec_eval's order (score descending, then docno descending), the top ``depth`` kept.

A run is anything :func:`irspec.read_run` reads (a TREC run file, Parquet, pytrec_eval's dicts, a frame),
or rankings already made (``{query id: [doc, ...]}``, best first).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

import irspec

__all__ = ["rankings", "run_name"]


def rankings(run: Any, depth: int | None = None) -> dict[str, list[str]]:
    """Each query's documents, best first, as trec_eval ranks them (score descending, ties by docno
    descending), the top ``depth`` when given."""
    if isinstance(run, Mapping) and all(
        isinstance(v, Sequence) and not isinstance(v, str) for v in run.values()
    ):
        return {str(q): [str(d) for d in docs][:depth] for q, docs in run.items()}
    frame = irspec.read_run(run).frame.sort(["query", "score", "docno"], descending=[False, True, True])
    if depth is not None:
        frame = frame.group_by("query", maintain_order=True).head(depth)
    grouped = frame.group_by("query", maintain_order=True).agg(pl.col("docno"))
    return dict(zip(grouped["query"].to_list(), grouped["docno"].to_list(), strict=True))


def run_name(run: Any, default: str) -> str:
    """A run's name for messages and tables: its file's stem, else ``default``."""
    if isinstance(run, str):
        base = run.rstrip("/").rsplit("/", 1)[-1]
        return base.rsplit(".", 1)[0] if "." in base.lstrip(".") else base
    return default
