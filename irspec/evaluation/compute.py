"""Metrics bound and computed: the kernels called, through the registry's definitions, on a context.

:func:`bind_metrics` turns specs into bound :class:`~irspec.spec.registry.Metric` objects;
:func:`compute_metric` calls a metric's kernel (``compute(ctx, metric)``, every query at once, or a
plugin's ``per_query(query, metric)``, once per query) on a :class:`~irspec.evaluation.context.Context`,
on the judged-only context for a metric given ``judged_only=true``; :func:`judgment_coverage` is a
run's Judged@10 per query, which every run's warnings rest on. Knows nothing of files or rankings.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from irspec.data import Qrels
from irspec.data.datasets import parse_specs
from irspec.errors import EvaluationError, IrspecError
from irspec.evaluation.context import UNJUDGED, Context, QueryView
from irspec.lazy import lazy_module
from irspec.spec.plugins import trec_eval_registry
from irspec.spec.registry import JUDGED_ONLY, Metric

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")

__all__ = [
    "CATALOGUE_INPUT",
    "bind_metrics",
    "catalogue_value",
    "compute_metric",
    "judged_at_10",
    "judged_only_context",
    "judgment_coverage",
    "resolve",
]


def bind_metrics(metrics: str | Metric | Iterable[str | Metric], qrels: Any = None) -> list[Metric]:
    """The metrics bound; ``irds-official`` names the official measures of qrels named ``irds:<id>``."""
    if isinstance(metrics, (str, Metric)) or not isinstance(metrics, Iterable):
        metrics = [metrics]  # a single spec; anything else the parser refuses, naming it
    source = qrels.source if isinstance(qrels, Qrels) else qrels  # the dataset of Qrels read from one
    out: list[Metric] = []
    for m in metrics:
        out.extend([m] if isinstance(m, Metric) else parse_specs([m], source))
    return list(dict.fromkeys(out))  # first occurrence kept


def resolve(ref: Callable[..., Any] | str | None) -> Callable[..., Any]:
    """A definition's function: ``ref`` itself, or the ``"module:function"`` it names, imported."""
    if ref is None:  # MetricDef requires compute or per_query; the caller took the one given
        raise IrspecError("a metric definition without a function (compute= or per_query=)")
    if callable(ref):
        return ref
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


CATALOGUE_INPUT = "recommendations"
"""The context input that makes catalogue metrics computable: every evaluated user's list, which
:mod:`irspec.recsys.matrices` gives (a ranking of judged documents alone does not show the catalogue)."""


def compute_metric(ctx: Context, metric: Metric) -> np.ndarray:
    """One metric's per-query values (float array, length ``ctx.nq``); a catalogue metric has none
    (NaN: its one value is :func:`catalogue_value`'s)."""
    d = metric.definition
    if metric.catalogue:
        if CATALOGUE_INPUT not in ctx.inputs:
            raise EvaluationError(
                f"{metric} is a catalogue-level metric, one value from a recommender's lists for every user "
                "together: evaluate them with irspec.evaluate_topk or irspec.evaluate_scores"
            )
        return np.full(ctx.nq, np.nan)
    # registry.JUDGED_ONLY, the parameter every run metric gets: trec_eval's -J for this metric alone. A
    # definition that declares a judged_only of its own (irspec-diversity's, ndeval's) applies it itself.
    if dict(metric.params).get("judged_only") and JUDGED_ONLY in d.params:
        ctx = judged_only_context(ctx)
    if d.compute is not None:
        values = np.asarray(resolve(d.compute)(ctx, metric), dtype=np.float64)
    else:
        values = _per_query_values(resolve(d.per_query), ctx, metric)
    if values.shape != (ctx.nq,):
        raise IrspecError(f"metric {metric} returned shape {values.shape}, expected ({ctx.nq},)")
    return values


def catalogue_value(recommendations: Any, metric: Metric) -> float:
    """A catalogue metric's one value for a run, from ``recommendations`` (every evaluated user's list:
    what the ``"recommendations"`` input holds)."""
    return float(resolve(metric.definition.compute)(recommendations, metric))


def judged_only_context(ctx: Context) -> Context:
    """``ctx`` with the documents that have no label >= 0 left out of every ranking, as the option
    ``judged_only`` (trec_eval's ``-J``) builds it: the context of the metrics given ``judged_only=true``.
    Built once per context; ``ctx`` itself when the whole evaluation is judged-only already."""
    if ctx.options.judged_only:
        return ctx
    if "judged-only" not in ctx._cache:
        kept = ctx.judged()
        lengths = np.bincount(ctx.seg_of(np.flatnonzero(kept)), minlength=ctx.nq)
        offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        frame = None if ctx.frame is None else _Kept(ctx.frame, kept)
        options = dataclasses.replace(ctx.options, judged_only=True)
        sub = Context(
            list(ctx.query_ids), offsets, ctx.label[kept], ctx.qrels, options, frame, ctx.inputs
        )  # inputs: a plugin's qrels
        sub.missing = ctx.missing
        ctx._cache["judged-only"] = sub
    return ctx._cache["judged-only"]


class _Kept:
    """A ranked frame's rows where ``kept`` is true (the frame of a :func:`judged_only_context`)."""

    def __init__(self, frame: Any, kept: np.ndarray) -> None:
        self._frame = frame
        self._kept = kept

    def get_column(self, name: str) -> Any:
        return self._frame.get_column(name).filter(pl.Series(self._kept))


def _per_query_values(fn: Callable[..., float], ctx: Context, metric: Metric) -> np.ndarray:
    level = ctx.level(metric)
    frame = ctx.qrels.frame
    judgments: dict[str, dict[str, int]] = {}
    for q, d, lab in frame.iter_rows():
        judgments.setdefault(q, {})[d] = lab
    out = np.zeros(ctx.nq)
    docnos = ctx.frame.get_column("docno").to_list()
    scores = ctx.frame.get_column("score").to_list()
    for i, qid in enumerate(ctx.query_ids):
        lo, hi = ctx.offsets[i], ctx.offsets[i + 1]
        labels = tuple(None if v == UNJUDGED else int(v) for v in ctx.label[lo:hi])
        view = QueryView(
            qid,
            tuple(docnos[lo:hi]),
            tuple(scores[lo:hi]),
            labels,
            judgments.get(qid, {}),
            level,
        )
        out[i] = float(fn(view, metric))
    return out


@functools.cache
def judged_at_10() -> Metric:
    """Judged@10, the judgment coverage every result carries (``Result.judged_at_10``)."""
    # irspec.builtin.sets' metric, whatever plugins are installed or registry is in use: the coverage is
    # the engine's own, and the pytrec_eval drop-in's process builds no other registry
    (metric,) = trec_eval_registry().parse("Judged@10")
    return metric


def judgment_coverage(ctx: Context) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Per query the run answers (not those ``missing_queries="zero"`` adds): its id, its Judged@10,
    and how many documents it ranks in the top 10 (at most 10). :func:`~irspec.evaluation.notes.coverage_note` combines these
    of one run, or of every block of a streamed run."""
    values = compute_metric(ctx, judged_at_10())
    shown = np.minimum(np.diff(ctx.offsets), 10)
    ids = list(ctx.query_ids)
    if ctx.missing is not None:
        values, shown = np.delete(values, ctx.missing), np.delete(shown, ctx.missing)
        dropped = set(ctx.missing.tolist())
        ids = [q for i, q in enumerate(ids) if i not in dropped]
    return ids, values, shown
