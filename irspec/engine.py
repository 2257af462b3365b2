"""The evaluation engine: one vectorised pass over all queries of a run.

A run is joined with the qrels and put in ranked order once (by query, score descending, docno
descending, as trec_eval ranks), giving flat numpy arrays in which each query is a contiguous segment;
a run file already written that way is only checked, and its tied rows reordered. Metric kernels
(:mod:`irspec.kernels`) compute every query's value at once with segment operations on those arrays;
:class:`Context` offers the shared pieces (relevance masks, the relevant rows, cutoffs) and caches
them, so ten metrics at one relevance level share one selection of relevant rows.

A plugin metric may instead give a simple ``per_query(query: QueryView, metric) -> float``; the engine
calls it once per query (slower, and fine for a metric that is hard to vectorise).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import numpy as np

from irspec import spec as ast
from irspec.errors import EvaluationError, IrspecError
from irspec.registry import Metric

__all__ = ["Options", "Context", "QueryView", "Result", "evaluate", "evaluate_many", "UNJUDGED"]

UNJUDGED = np.iinfo(np.int64).min // 2
"""Label given to a retrieved document that is absent from the qrels (negative, so never relevant)."""

MissingQueries = Literal["zero", "skip", "error"]


@dataclass(frozen=True)
class Options:
    """Options that apply to a whole evaluation (trec_eval's flag in brackets).

    ``relevance_level`` [-l]: the default ``rel`` of every metric. ``depth`` [-M]: keep the top
    ``depth`` documents of each ranking. ``judged_only`` [-J]: drop unjudged and negative-label
    documents before measuring. ``missing_queries`` [-c is ``zero``]: what a qrels query absent from
    the run gets: ``zero`` (every measure 0, counted in the mean), ``skip``, or ``error``.
    ``collection_size``: the number of documents in the collection, for fall-out.
    """

    relevance_level: int = 1
    depth: int | None = None
    judged_only: bool = False
    missing_queries: MissingQueries = "zero"
    collection_size: int | None = None

    def __post_init__(self) -> None:
        # trec_eval takes -l 0 (every judged document is relevant) and -M 0 (empty rankings). Below 0,
        # its measures disagree on what is relevant (P counts documents absent from the qrels, its
        # relevant-retrieved count does not): no defined value to give, so irspec refuses.
        if isinstance(self.relevance_level, bool) or not isinstance(self.relevance_level, int) or self.relevance_level < 0:
            raise EvaluationError(f"relevance_level must be an integer >= 0, got {self.relevance_level!r}")
        if self.depth is not None and (isinstance(self.depth, bool) or not isinstance(self.depth, int) or self.depth < 0):
            raise EvaluationError(f"depth must be an integer >= 0 or None, got {self.depth!r}")
        if self.missing_queries not in ("zero", "skip", "error"):
            raise EvaluationError(f"missing_queries must be zero, skip or error, got {self.missing_queries!r}")
        if self.collection_size is not None and (not isinstance(self.collection_size, int) or self.collection_size < 1):
            raise EvaluationError(f"collection_size must be a positive integer, got {self.collection_size!r}")

    def as_dict(self) -> dict[str, Any]:
        """The options as a plain dict (for JSON output)."""
        return {
            "relevance_level": self.relevance_level,
            "depth": self.depth,
            "judged_only": self.judged_only,
            "missing_queries": self.missing_queries,
            "collection_size": self.collection_size,
        }


# --------------------------------------------------------------------------------------------------
# The qrels, indexed once for any number of runs.


class QrelsIndex:
    """A qrels set indexed for evaluation: query ids, labels grouped by query, join keys, counts per level.

    Built once per qrels and shared by every run evaluated against it.
    """

    def __init__(self, qrels: Any) -> None:
        import polars as pl

        frame = qrels.frame.select("query", "docno", "label")
        self.qrels = qrels
        self.frame = frame
        self.query_ids: list[str] = sorted(frame.get_column("query").unique().to_list())
        self.position = {q: i for i, q in enumerate(self.query_ids)}
        self.query_codes = pl.DataFrame(
            {"query": self.query_ids, "qcode": np.arange(len(self.query_ids), dtype=np.int64)}
        )
        q = frame.join(self.query_codes, on="query", how="left", maintain_order="left").get_column("qcode").to_numpy()
        labels = frame.get_column("label").to_numpy().astype(np.int64, copy=False)
        self.row_query = q
        self.row_label = labels
        from irspec.data import all_distinct, pair_keys

        keys = pair_keys(frame)
        # Distinct (query, docno) pairs (the reader rejects duplicates) must have distinct keys for the
        # hashed join to be exact; when two collide, evaluation falls back to a join on the strings.
        self.keys_unique = all_distinct(keys)
        self.key_frame = pl.DataFrame({"key": keys, "qrow": np.arange(len(keys), dtype=np.int64)})
        order = np.lexsort((-labels, q))  # by query, then label descending: the ideal ranking
        self.labels = labels[order]
        self.query_of = q[order]
        counts = np.bincount(q, minlength=len(self.query_ids))
        self.offsets = np.zeros(len(self.query_ids) + 1, np.int64)
        np.cumsum(counts, out=self.offsets[1:])
        self._by_level: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def counts(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        """(R, N) per query: relevant (label >= level) and judged non-relevant (0 <= label < level)."""
        if level not in self._by_level:
            n = len(self.query_ids)
            rel = np.bincount(self.query_of[self.labels >= level], minlength=n)
            nonrel = np.bincount(self.query_of[(self.labels >= 0) & (self.labels < level)], minlength=n)
            self._by_level[level] = (rel.astype(np.int64), nonrel.astype(np.int64))
        return self._by_level[level]


_INDEX_CACHE: dict[int, QrelsIndex] = {}


def index_qrels(qrels: Any) -> QrelsIndex:
    """Index ``qrels`` (a :class:`~irspec.data.Qrels`), reusing the index for the same object."""
    key = id(qrels)
    idx = _INDEX_CACHE.get(key)
    if idx is None or idx.qrels is not qrels:
        idx = QrelsIndex(qrels)
        _INDEX_CACHE.clear()  # keep one: holding every qrels ever seen would leak memory
        _INDEX_CACHE[key] = idx
    return idx


# --------------------------------------------------------------------------------------------------
# The per-run context that kernels compute from.


class Context:
    """A run joined with the qrels: flat arrays with one contiguous segment per query.

    Attributes every kernel may use (``nq`` queries, ``m`` ranked documents in all):

    ``query_ids`` (list of nq ids, in the order of the segments: not necessarily sorted), ``offsets``
    (nq + 1 segment bounds), ``seg`` (m, query index of each row), ``rank`` (m, 1-based rank within its
    query), ``label`` (m, qrels label; :data:`UNJUDGED` for documents absent from the qrels), ``n`` (nq,
    ranking lengths), ``qrels`` (the :class:`QrelsIndex`), ``qpos`` (nq, each query's position in the
    qrels index), ``options``.

    ``seg`` and ``rank`` are built on first use: most kernels only need them at a few rows (the
    relevant ones, the top k), which :meth:`seg_of`, :meth:`rank_of` and :meth:`top_rows` give without
    touching every row.
    """

    def __init__(
        self,
        query_ids: list[str],
        offsets: np.ndarray,
        label: np.ndarray,
        qrels: QrelsIndex,
        options: Options,
        frame: Any = None,
    ) -> None:
        self.query_ids = query_ids
        self.nq = len(query_ids)
        self.offsets = offsets
        self.label = label
        self.n = np.diff(offsets)
        self.qrels = qrels
        self.qpos = np.array([qrels.position[q] for q in query_ids], dtype=np.int64)
        self.options = options
        self.frame = frame  # the ranked polars frame, for per-query plugin metrics
        self.missing: np.ndarray | None = None  # queries absent from the run, under missing_queries="zero"
        self._cache: dict[Any, Any] = {}

    @cached_property
    def seg(self) -> np.ndarray:
        """Per row: the index of its query (int32: a run has < 2**31 queries)."""
        return np.repeat(np.arange(self.nq, dtype=np.int32), self.n)

    @cached_property
    def rank(self) -> np.ndarray:
        """Per row: its 1-based rank within its query (int32)."""
        rank = np.arange(1, len(self.label) + 1, dtype=np.int32)
        rank -= np.repeat(self.offsets[:-1].astype(np.int32), self.n)
        return rank

    def seg_of(self, rows: np.ndarray) -> np.ndarray:
        """The query index of each of ``rows`` (row indices, or a bool mask over rows), as ``seg[rows]``
        gives it, without building ``seg`` when it is not there yet."""
        if "seg" in self.__dict__:
            return self.seg[rows]
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        return (np.searchsorted(self.offsets, rows, side="right") - 1).astype(np.int32)

    def rank_of(self, rows: np.ndarray, seg: np.ndarray | None = None) -> np.ndarray:
        """The 1-based rank of each of ``rows`` (indices or a bool mask), as ``rank[rows]``; ``seg`` is
        their :meth:`seg_of`, when the caller has it."""
        if "rank" in self.__dict__:
            return self.rank[rows]
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        seg = self.seg_of(rows) if seg is None else seg
        return (rows - self.offsets[seg] + 1).astype(np.int32)

    # --- parameters -----------------------------------------------------------------------------
    def level(self, metric: Metric) -> int:
        """The relevance level of ``metric``: its ``rel`` parameter, or the evaluation's."""
        rel = metric.get("rel") if "rel" in metric.definition.param_names else None
        return self.options.relevance_level if rel is None else rel

    def value(self, metric: Metric, name: str) -> Any:
        """A parameter's value; one evaluated per query (a float array) when it uses ``R``."""
        if name not in metric.definition.param_names:
            return None  # a kernel shared by metrics that lack the parameter (GMAP uses AP's)
        v = metric.get(name)
        if isinstance(v, ast.Expr.__args__):
            R = self.R(self.level(metric)).astype(np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.broadcast_to(np.asarray(ast.evaluate_expr(v, {"R": R}), np.float64), (self.nq,))
        return v

    def cutoff(self, metric: Metric, name: str = "k") -> np.ndarray | None:
        """The cutoff per query as an int array, or ``None`` for the whole ranking.

        A cutoff computed from ``R`` is rounded down; where it is below 1 (``P@R`` with R = 0) it is 0,
        and cutoff metrics give 0 for that query.
        """
        v = self.value(metric, name)
        if v is None:
            return None
        if isinstance(v, np.ndarray):
            v = np.where(np.isfinite(v), np.floor(v + 1e-9), 0)  # 1e-9: (0.3*R)*10 is not quite integral
            return np.maximum(v, 0).astype(np.int64)
        return np.full(self.nq, int(v), dtype=np.int64)

    # --- per-query qrels counts -----------------------------------------------------------------
    def R(self, level: int) -> np.ndarray:
        """Relevant documents of each query in the qrels (label >= level)."""
        return self.qrels.counts(level)[0][self.qpos]

    def N(self, level: int) -> np.ndarray:
        """Judged non-relevant documents of each query in the qrels (0 <= label < level)."""
        return self.qrels.counts(level)[1][self.qpos]

    # --- per-row masks and running counts -------------------------------------------------------
    def relevant(self, level: int) -> np.ndarray:
        """Bool per ranked row: label >= level."""
        key = ("rel", level)
        if key not in self._cache:
            self._cache[key] = self.label >= level
        return self._cache[key]

    def judged_nonrelevant(self, level: int) -> np.ndarray:
        """Bool per ranked row: judged and 0 <= label < level."""
        key = ("nonrel", level)
        if key not in self._cache:
            self._cache[key] = (self.label >= 0) & (self.label < level)
        return self._cache[key]

    def judged(self) -> np.ndarray:
        """Bool per ranked row: the document has a label >= 0 in the qrels."""
        return self.label >= 0

    def relevant_rows(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        """(rows, nth): the relevant rows in rank order, and each one's 1-based place among its query's
        relevant rows. Kernels that only look at relevant documents (AP, IPrec, infAP) work on these few
        rows rather than on every retrieved document."""
        key = ("relevant-rows", level)
        if key not in self._cache:
            rows = np.flatnonzero(self.relevant(level))
            self._cache[key] = (rows, self.before(rows, rows) + 1)
        return self._cache[key]

    def before(self, marked: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """For each of ``rows``: how many of the ``marked`` rows (sorted indices) of the same query lie above it."""
        first = np.searchsorted(marked, self.offsets[:-1])  # each query's first marked row
        return np.searchsorted(marked, rows) - first[self.seg_of(rows)]

    def running_sum(self, values: np.ndarray) -> np.ndarray:
        """Per row: the sum of ``values`` over its query's rows up to and including it."""
        c = np.cumsum(values, dtype=np.float64)
        before = np.concatenate(([0.0], c))[self.offsets[:-1]]
        return c - before[self.seg]

    def seg_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of ``values`` over each query's rows."""
        return np.bincount(self.seg, weights=values, minlength=self.nq)

    def top(self, k: np.ndarray) -> np.ndarray:
        """Bool per row: within the top ``k[query]`` of its query."""
        mask = np.zeros(len(self.label), dtype=bool)
        mask[self.top_rows(k)] = True
        return mask

    def top_rows(self, k: np.ndarray) -> np.ndarray:
        """The rows within the top ``k[query]`` of their query, in order (cached: P@10 and nDCG@10
        share them). Built from the segment bounds: 50,000 rows for @10, whatever the run's length."""
        key = ("top", k.tobytes())
        if key not in self._cache:
            self._cache[key] = segment_rows(self.offsets[:-1], np.minimum(np.maximum(k, 0), self.n))
        return self._cache[key]

    def count(self, mask: np.ndarray, k: np.ndarray | None = None) -> np.ndarray:
        """Rows satisfying ``mask`` per query, within the top ``k`` (per-query array) when given."""
        rows = np.flatnonzero(mask)
        seg = self.seg_of(rows)
        if k is not None:
            # Test the cutoff on the selected rows only (few, for relevant documents), not on all rows.
            seg = seg[self.rank_of(rows, seg) <= k[seg]]
        return np.bincount(seg, minlength=self.nq).astype(np.int64)

    def relevant_places(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        """(seg, rank) of the :meth:`relevant_rows`, cached: AP, IPrec, bpref and P@k all need them."""
        key = ("relevant-places", level)
        if key not in self._cache:
            rows, _ = self.relevant_rows(level)
            seg = self.seg_of(rows)
            self._cache[key] = (seg, self.rank_of(rows, seg))
        return self._cache[key]

    def count_relevant(self, level: int, k: np.ndarray | None = None) -> np.ndarray:
        """Relevant documents per query (within the top ``k`` when given), from the cached relevant
        rows: a dozen P@k share one selection instead of scanning every row each."""
        seg, rank = self.relevant_places(level)
        if k is not None:
            seg = seg[rank <= k[seg]]
        return np.bincount(seg, minlength=self.nq).astype(np.int64)

    def first_rank(self, mask: np.ndarray) -> np.ndarray:
        """Rank of the first row satisfying ``mask`` per query; 0 where there is none."""
        out = np.zeros(self.nq, dtype=np.int64)
        rows = np.flatnonzero(mask)
        if len(rows):
            segs = self.seg_of(rows)
            first = np.concatenate(([True], segs[1:] != segs[:-1]))
            out[segs[first]] = self.rank_of(rows[first], segs[first])
        return out

    def nth_rank(self, mask: np.ndarray, nth: np.ndarray) -> np.ndarray:
        """Rank of the ``nth`` (per query, 1-based) row satisfying ``mask``; 0 where there are fewer."""
        rows = np.flatnonzero(mask)
        counts = np.bincount(self.seg_of(rows), minlength=self.nq)
        starts = np.concatenate(([0], np.cumsum(counts)))[:-1]
        ok = (nth >= 1) & (nth <= counts)
        out = np.zeros(self.nq, dtype=np.int64)
        out[ok] = self.rank_of(rows[starts[ok] + nth[ok] - 1])
        return out

    def ideal_labels(self) -> tuple[np.ndarray, np.ndarray]:
        """Every qrels label of the evaluated queries, each query's sorted descending: (labels, offsets)."""
        if "ideal" not in self._cache:
            q = self.qrels
            starts, ends = q.offsets[self.qpos], q.offsets[self.qpos + 1]
            lengths = ends - starts
            offsets = np.concatenate(([0], np.cumsum(lengths)))
            self._cache["ideal"] = (q.labels[segment_rows(starts, lengths)], offsets)
        return self._cache["ideal"]


def segment_rows(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices ``starts[q], ..., starts[q] + lengths[q] - 1`` for each q in turn, concatenated."""
    ends = np.cumsum(lengths)
    # index = its segment's start + its place within the segment
    shift = np.repeat(np.asarray(starts, dtype=np.int64) - (ends - lengths), lengths)
    return np.arange(ends[-1] if len(ends) else 0, dtype=np.int64) + shift


def safe_divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` per query, 0 where ``den`` is 0 (no relevant documents, empty ranking)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


# --------------------------------------------------------------------------------------------------
# The simple per-query form for plugins.


@dataclass(frozen=True)
class QueryView:
    """One query's data, for a metric written as a plain per-query function.

    ``labels`` are the qrels labels of the ranked documents in rank order (``None`` for unjudged),
    ``docnos`` and ``scores`` the ranking itself, ``qrels`` the query's judgments, and
    ``relevance_level`` the level that applies to the metric.
    """

    query_id: str
    docnos: tuple[str, ...]
    scores: tuple[float, ...]
    labels: tuple[int | None, ...]
    qrels: Mapping[str, int]
    relevance_level: int

    @property
    def R(self) -> int:
        """Relevant documents of the query in the qrels."""
        return sum(1 for v in self.qrels.values() if v >= self.relevance_level)


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


def _resolve(ref: Callable[..., Any] | str) -> Callable[..., Any]:
    if callable(ref):
        return ref
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


def compute_metric(ctx: Context, metric: Metric) -> np.ndarray:
    """One metric's per-query values (float array, length ``ctx.nq``)."""
    d = metric.definition
    if d.compute is not None:
        values = np.asarray(_resolve(d.compute)(ctx, metric), dtype=np.float64)
    else:
        values = _per_query_values(_resolve(d.per_query), ctx, metric)
    if values.shape != (ctx.nq,):
        raise IrspecError(f"metric {metric} returned shape {values.shape}, expected ({ctx.nq},)")
    return values


# --------------------------------------------------------------------------------------------------
# Results.


@dataclass(frozen=True, eq=False)
class Result:
    """The evaluation of one run: per-query values and their aggregates, keyed by canonical text.

    ``values`` is a (queries × metrics) float array in the order of ``query_ids`` and ``metrics``; a NaN
    marks a query a metric leaves out (``SL(unfound=skip)``). A text-valued metric (``relstring``) has
    NaN there, its strings in ``texts``, and NaN as its aggregate.
    """

    run_name: str
    run_source: str
    metrics: tuple[Metric, ...]
    query_ids: tuple[str, ...]
    values: np.ndarray
    options: Options
    warnings: tuple[str, ...] = ()
    texts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _aggregate: dict[str, float] = field(default_factory=dict, repr=False)

    def aggregate(self) -> dict[str, float]:
        """Summary value per metric: mean, sum or geometric mean over queries, as the metric says."""
        if not self._aggregate:
            for j, m in enumerate(self.metrics):
                self._aggregate[str(m)] = aggregate_values(self.values[:, j], m.aggregate)
        return dict(self._aggregate)

    def per_query(self) -> dict[str, dict[str, Any]]:
        """``{query_id: {metric: value}}`` for every evaluated query (a string for a text metric)."""
        names = [str(m) for m in self.metrics]
        out = {q: dict(zip(names, row.tolist())) for q, row in zip(self.query_ids, self.values)}
        for name, texts in self.texts.items():
            for q, text in zip(self.query_ids, texts):
                out[q][name] = text
        return out

    def column(self, metric: Metric | str) -> np.ndarray:
        """One metric's per-query values, aligned with ``query_ids``."""
        key = str(metric)
        for j, m in enumerate(self.metrics):
            if str(m) == key:
                return self.values[:, j]
        raise KeyError(key)


def aggregate_values(values: np.ndarray, how: str) -> float:
    """Combine per-query values: ``mean`` and ``sum`` skip NaN; ``gmean`` floors values at 1e-5.

    trec_eval's rule, to the last bit: the values are added one after another in the order given (the
    caller's query order; a :class:`Result` lists queries sorted by id, as trec_eval visits them), then
    the sum is divided by their number. A pairwise or compensated sum (numpy's ``mean``, ``math.fsum``)
    rounds differently and moves a printed fourth decimal now and then. ``gmean`` adds the logarithms
    the same way and takes ``exp`` of their mean, with the C library's ``log`` and ``exp``.
    """
    if how == "none":
        return math.nan
    v = values[~np.isnan(values)]
    if len(v) == 0:
        return 0.0
    if how == "gmean":
        logs = np.array([math.log(x) for x in np.maximum(v, GMEAN_FLOOR).tolist()])
        return math.exp(sequential_sum(logs) / len(v))
    total = sequential_sum(v)
    return total if how == "sum" else total / len(v)


GMEAN_FLOOR = 1e-5
"""trec_eval's MIN_GEO_MEAN: the floor of a value entering a geometric mean (a 0 would make it 0)."""


def sequential_sum(values: np.ndarray) -> float:
    """``((v0 + v1) + v2) + ...``: left to right in float64, as a C loop adds; 0.0 when empty.

    ``np.add.accumulate`` is sequential by definition (each partial sum is an output), unlike
    ``np.sum``, which adds pairwise.
    """
    if len(values) == 0:
        return 0.0
    return float(np.add.accumulate(np.asarray(values, dtype=np.float64))[-1])


# --------------------------------------------------------------------------------------------------
# Entry points.


def _as_metrics(metrics: str | Metric | Iterable[str | Metric]) -> list[Metric]:
    import irspec

    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    out: list[Metric] = []
    for m in metrics:
        out.extend([m] if isinstance(m, Metric) else irspec.parse_many(m))
    seen: set[Metric] = set()
    return [m for m in out if not (m in seen or seen.add(m))]


def evaluate(
    qrels: Any,
    run: Any,
    metrics: str | Metric | Iterable[str | Metric],
    *,
    relevance_level: int = 1,
    depth: int | None = None,
    judged_only: bool = False,
    missing_queries: MissingQueries = "zero",
    collection_size: int | None = None,
) -> Result:
    """Evaluate one run against qrels.

    ``qrels`` and ``run`` are file paths (gzip or plain; ``"-"`` for standard input), ``{qid: {docno:
    label}}`` / ``{qid: {docno: score}}`` dicts, pandas DataFrames, or :class:`~irspec.data.Qrels` /
    :class:`~irspec.data.Run` objects. ``metrics`` is a spec text (``"nDCG@10, AP"``), a list of texts,
    or bound :class:`~irspec.Metric` objects. See :class:`Options` for the keyword options.
    """
    options = Options(relevance_level, depth, judged_only, missing_queries, collection_size)
    return evaluate_many(qrels, [run], metrics, options=options)[0]


def evaluate_many(
    qrels: Any,
    runs: Iterable[Any],
    metrics: str | Metric | Iterable[str | Metric],
    *,
    options: Options | None = None,
    **kwargs: Any,
) -> list[Result]:
    """Evaluate several runs against one qrels, which is read and indexed once."""
    from irspec.data import read_qrels, read_run

    options = options or Options(**kwargs)
    bound = _as_metrics(metrics)
    if not bound:
        raise EvaluationError("no metrics to compute")
    for m in bound:  # a metric over another input (a plugin's log, say) goes through irspec.inputs
        if m.definition.needs != "run":
            raise EvaluationError(
                f"{m} is computed from a {m.definition.needs!r} input, not from qrels and runs; "
                "use irspec.evaluate_input (or a plan's log key)"
            )
    q = read_qrels(qrels)
    index = index_qrels(q)
    results = []
    for r in runs:
        run = read_run(r)
        results.append(_evaluate_run(index, run, bound, options))
    return results


def _evaluate_run(index: QrelsIndex, run: Any, metrics: list[Metric], options: Options) -> Result:
    ctx, notes = build_context(index, run, options)
    values = np.empty((ctx.nq, len(metrics)))
    texts: dict[str, list[str]] = {}
    for j, m in enumerate(metrics):
        if m.aggregate == "none":
            strings = [str(t) for t in _resolve(m.definition.compute)(ctx, m)]
            if ctx.missing is not None:
                for i in ctx.missing:
                    strings[i] = ""
            texts[str(m)] = strings
            values[:, j] = np.nan
            continue
        values[:, j] = compute_metric(ctx, m)
    if ctx.missing is not None:
        values[ctx.missing, :] = 0.0  # trec_eval -c: a query the run does not answer scores 0 everywhere
        for j, m in enumerate(metrics):
            if m.name == "NumQ":
                values[ctx.missing, j] = 1.0
            elif m.name == "NumRel":
                values[ctx.missing, j] = ctx.R(ctx.level(m))[ctx.missing]
            elif m.aggregate == "none":
                values[ctx.missing, j] = np.nan
    # The context lists queries in the run's order; results list them sorted by id.
    order = sorted(range(ctx.nq), key=ctx.query_ids.__getitem__)
    return Result(
        run.name,
        run.source,
        tuple(metrics),
        tuple(ctx.query_ids[i] for i in order),
        values[order],
        options,
        tuple(notes),
        {name: tuple(strings[i] for i in order) for name, strings in texts.items()},
    )


def build_context(index: QrelsIndex, run: Any, options: Options) -> tuple[Context, list[str]]:
    """Join a run with the indexed qrels, rank it, apply depth and judged_only: the kernels' input.

    Ranking is by query, score descending and docno descending (trec_eval's order; the file's rank
    column is ignored). A run file already grouped by query with scores non-increasing (the usual case)
    keeps its row order: only its tied rows move, and its queries are evaluated in file order (the
    caller sorts the per-query results). The labels come from a join on 64-bit hashes of the
    (query, docno) pairs, every match checked against the strings.
    """
    import polars as pl

    notes: list[str] = []
    frame, keys = run.frame, getattr(run, "keys", None)
    # Blocks of adjacent rows with the same query id (exact string comparison): one per query in a
    # grouped run, so everything per query below is computed on a few thousand blocks, not on rows.
    blocks = frame.get_column("query").rle()
    names = blocks.struct.field("value")
    lengths = blocks.struct.field("len").to_numpy().astype(np.int64)
    codes = (
        pl.DataFrame({"query": names})
        .join(index.query_codes, on="query", how="left", maintain_order="left")
        .get_column("qcode")
        .fill_null(-1)
        .to_numpy()
    )
    known = codes >= 0
    present = np.flatnonzero(np.bincount(codes[known], minlength=len(index.query_ids)))
    run_queries = {index.query_ids[c] for c in present.tolist()}
    extra = set() if known.all() else set(names.filter(pl.Series(~known)).unique().to_list())
    if extra:
        notes.append(
            f"{run.source}: {len(extra)} quer{'y' if len(extra) == 1 else 'ies'} not in the qrels ignored "
            f"(e.g. {sorted(extra)[0]!r})"
        )
        rows = np.repeat(known, lengths)
        frame = frame.filter(pl.Series(rows))
        keys = keys[rows] if keys is not None else None
        codes, lengths = codes[known], lengths[known]
    missing = sorted(set(index.query_ids) - run_queries)
    if missing and options.missing_queries == "error":
        raise EvaluationError(
            f"{run.source}: {len(missing)} qrels quer{'y is' if len(missing) == 1 else 'ies are'} missing from "
            f"the run (e.g. {missing[0]!r}) and missing_queries is 'error'"
        )
    ranking = _rank(codes, lengths, frame.get_column("score").to_numpy(), frame.get_column("docno"))
    label = ranking.arrange(_labels(index, frame, keys, (codes, lengths)))
    seg_codes, seg_lengths = ranking.codes, ranking.lengths
    kept = None
    if options.depth is not None or options.judged_only:
        starts = np.concatenate(([0], np.cumsum(seg_lengths)))[:-1]
        segment = np.repeat(np.arange(len(seg_lengths)), seg_lengths)
        kept = np.ones(len(label), dtype=bool)
        if options.depth is not None:
            # depth cuts the ranking before anything else (trec_eval -M)
            kept &= np.arange(len(label)) - starts[segment] < options.depth
        if options.judged_only:
            kept &= label >= 0
        label = label[kept]
        seg_lengths = np.bincount(segment[kept], minlength=len(seg_lengths))
    # Every run query the qrels know is evaluated, even one that depth or judged_only emptied; under
    # missing_queries="zero" the qrels queries the run lacks follow, with empty rankings.
    evaluated = [index.query_ids[c] for c in seg_codes.tolist()]
    if options.missing_queries == "zero" and missing:
        evaluated += missing
        seg_lengths = np.concatenate((seg_lengths, np.zeros(len(missing), dtype=np.int64)))
    offsets = np.concatenate(([0], np.cumsum(seg_lengths))).astype(np.int64)
    ctx = Context(evaluated, offsets, label, index, options, frame=_Ranked(frame, ranking, kept))
    if options.missing_queries == "zero" and missing:
        ctx.missing = np.arange(len(evaluated) - len(missing), len(evaluated), dtype=np.int64)
    return ctx, notes


@dataclass
class _Ranking:
    """How the run's rows (after dropping queries the qrels lack) go into ranked order.

    ``codes`` and ``lengths`` give each ranked segment's query code and length. The order is either a
    full row index (``rows``, ranked position -> row) or, when the file was already ranked but for
    ties, file order with the rows at positions ``moved`` replaced by ``rows``.
    """

    codes: np.ndarray
    lengths: np.ndarray
    rows: np.ndarray | None = None
    moved: np.ndarray | None = None

    def arrange(self, values: np.ndarray) -> np.ndarray:
        """``values`` (one per row, in file order) in ranked order; ``values`` itself may be reused."""
        if self.rows is None:
            return values
        if self.moved is None:
            return values[self.rows]
        values[self.moved] = values[self.rows]  # the gather on the right is done before the scatter
        return values

    def indices(self, n: int) -> np.ndarray:
        """The full row index of the ranked order, for ``n`` rows."""
        if self.rows is None:
            return np.arange(n, dtype=np.int64)
        if self.moved is None:
            return self.rows
        index = np.arange(n, dtype=np.int64)
        index[self.moved] = self.rows
        return index


class _Ranked:
    """The run's rows in ranked order, gathered only when a per-query plugin metric asks for them."""

    def __init__(self, frame: Any, ranking: _Ranking, kept: np.ndarray | None) -> None:
        self._frame = frame
        self._ranking = ranking
        self._kept = kept

    def get_column(self, name: str) -> Any:
        index = self._ranking.indices(self._frame.height)
        return self._frame.get_column(name).gather(index if self._kept is None else index[self._kept])


def _labels(
    index: QrelsIndex, frame: Any, keys: np.ndarray | None, blocks: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """The qrels label of each run row (:data:`UNJUDGED` where the qrels do not have the pair).

    ``keys`` are the run rows' :func:`~irspec.data.pair_keys`, when the reader kept them; ``blocks``
    the (query code, length) of each block of rows with one query id."""
    import polars as pl

    from irspec.data import pair_keys

    if index.keys_unique:
        if keys is None:
            keys = pair_keys(frame)
        # An inner join gives only the matches (a few percent of a run's rows), with their row numbers.
        hits = index.key_frame.join(pl.DataFrame({"key": keys}).with_row_index("row"), on="key", how="inner")
        row = hits.get_column("row").to_numpy()
        qrow = hits.get_column("qrow").to_numpy()
        # Check every hashed match: exactness must not rest on a hash. The query codes come from the
        # strings themselves, so equal codes are equal query ids; the docnos are compared as strings.
        codes, lengths = blocks
        row_code = codes[np.searchsorted(np.cumsum(lengths), row, side="right")]
        if (row_code == index.row_query[qrow]).all() and (
            frame.get_column("docno").gather(row) == index.frame.get_column("docno").gather(qrow)
        ).all():
            label = np.full(len(keys), UNJUDGED, dtype=np.int64)
            label[row] = index.row_label[qrow]
            return label
    joined = frame.select("query", "docno").join(index.frame, on=["query", "docno"], how="left", maintain_order="left")
    return joined.get_column("label").fill_null(UNJUDGED).to_numpy().astype(np.int64)


def _rank(codes: np.ndarray, lengths: np.ndarray, scores: np.ndarray, docnos: Any) -> _Ranking:
    """The ranked order of rows given as blocks of one query each (``codes``, ``lengths``): by query,
    score descending, docno descending."""
    n = len(scores)
    boundary = np.cumsum(lengths)[:-1] - 1  # i where rows i and i + 1 lie in different blocks
    same_block = np.ones(max(n - 1, 0), dtype=bool)
    same_block[boundary] = False
    if np.bincount(codes, minlength=1).max() <= 1 and not np.any(same_block & (scores[1:] > scores[:-1])):
        # One block per query, scores non-increasing (the usual run file): only ties move.
        moved, rows = _tied_order(None, same_block, scores, docnos)
        return _Ranking(codes, lengths, rows, moved)
    qcode = np.repeat(codes, lengths)
    # By score descending in any order of ties (they are ordered by docno next), then a stable sort
    # by query: a quicksort and a radix sort, several times faster than two stable sorts.
    order = np.argsort(-scores)
    order = order[_stable_argsort(qcode[order])]
    q = qcode[order]
    moved, rows = _tied_order(order, q[1:] == q[:-1], scores[order], docnos)
    if moved is not None:
        order[moved] = rows
    counts = np.bincount(qcode)
    present = np.flatnonzero(counts)
    return _Ranking(present, counts[present], order)


def _stable_argsort(codes: np.ndarray) -> np.ndarray:
    """The stable argsort of non-negative integer ``codes`` below 2**32, as one or two radix passes
    (numpy sorts 16-bit integers by radix when asked for a stable sort)."""
    if len(codes) == 0 or codes.max() < 2**16:
        return np.argsort(codes.astype(np.uint16), kind="stable")
    low = np.argsort((codes & 0xFFFF).astype(np.uint16), kind="stable")
    return low[np.argsort((codes[low] >> 16).astype(np.uint16), kind="stable")]


def _tied_order(
    order: np.ndarray | None, same_q: np.ndarray, s: np.ndarray, docnos: Any
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Where runs of equal (query, score) must be reordered by docno descending, as trec_eval does.

    ``order`` lists rows (``None``: every row in file order); ``same_q[i]`` says whether its entries
    i and i+1 share a query, ``s`` is the score of each listed row. Returns (positions in ``order``,
    the rows that belong there), or (None, None) when nothing ties.
    """
    import polars as pl

    tie = same_q & (s[1:] == s[:-1])
    if not tie.any():
        return None, None
    in_tie = np.zeros(len(s), dtype=bool)
    in_tie[1:] |= tie
    in_tie[:-1] |= tie
    positions = np.flatnonzero(in_tie)
    # A group starts where a tied row does not continue the tie before it.
    group = np.cumsum(~np.concatenate(([False], tie))[positions])
    rows = positions if order is None else order[positions]
    sub = pl.DataFrame({"group": group, "docno": docnos.gather(rows), "row": rows})
    sub = sub.sort(["group", "docno"], descending=[False, True])
    return positions, sub.get_column("row").to_numpy()
