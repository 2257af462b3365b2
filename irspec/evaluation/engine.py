"""The evaluation engine: reads qrels and runs, builds each run's context, and calls the metric kernels.

A run is joined with the qrels and put in ranked order once (by query, score descending, docno
descending, as trec_eval ranks), giving the :class:`~irspec.evaluation.context.Context`: flat numpy arrays in which
each query is a contiguous segment. A run file already written that way is only checked, and its tied
rows reordered. Metric kernels (:mod:`irspec.builtin.kernels`, plugins' ``compute``) are found through the
registry's definitions and compute every query's value at once from the context; a plugin metric may
instead give a simple ``per_query(query: QueryView, metric) -> float``, called once per query (slower,
and fine for a metric that is hard to vectorise). The values form a :class:`Result`.

What kernels compute from lives in :mod:`irspec.evaluation.context`; the engine knows nothing of plans, reports or
the command line. ``irspec.evaluation.engine.Context``, ``QueryView`` and ``Options`` are the same objects as in
:mod:`irspec.evaluation.context`, kept here for plugins written against the earlier documentation.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import math
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from irspec.evaluation.context import UNJUDGED, Context, Options, QueryView, relevance_level, segment_rows
from irspec.data import Qrels, all_distinct, pair_keys, read_qrels, read_run
from irspec.data.datasets import parse_specs
from irspec.errors import EvaluationError, IrspecError, IrspecWarning
from irspec.data.frames import make_frame
from irspec.spec.plugins import get_registry
from irspec.spec.registry import JUDGED_ONLY, Metric
from irspec.data.stream import RunBlocks, open_run, parse_memory

__all__ = [
    "Options",
    "Result",
    "Part",
    "evaluate_part",
    "evaluate_parts",
    "finish",
    "evaluate_many",
    "bind_metrics",
    "issue_warnings",
    "distinct_names",
    "collect_warnings",
    "QrelsIndex",
    "index_qrels",
    "build_context",
    "compute_metric",
    "results_frame",
    "Judgments",
    "read_judgments",
    "reads_qrels",
    "read_input",
]

# --------------------------------------------------------------------------------------------------
# The qrels, indexed once for any number of runs.


class QrelsIndex:
    """A qrels set indexed for evaluation: query ids, labels grouped by query, join keys, counts per level.

    Built once per qrels and shared by every run evaluated against it.
    """

    def __init__(self, qrels: Any) -> None:
        frame = qrels.frame.select("query", "docno", "label")
        self.qrels = qrels
        self.frame = frame
        self.query_ids: list[str] = sorted(frame.get_column("query").unique().to_list())
        self.position = {q: i for i, q in enumerate(self.query_ids)}
        # Typed, so that an empty qrels (a null-typed column otherwise) still joins with a run.
        self.query_codes = pl.DataFrame(
            {"query": self.query_ids, "qcode": np.arange(len(self.query_ids), dtype=np.int64)},
            schema={"query": pl.String, "qcode": pl.Int64},
        )
        q = frame.join(self.query_codes, on="query", how="left", maintain_order="left").get_column("qcode").to_numpy()
        labels = frame.get_column("label").to_numpy().astype(np.int64, copy=False)
        self.row_query = q
        self.row_label = labels
        keys = pair_keys(frame)
        # Distinct (query, docno) pairs (the reader rejects duplicates) must have distinct keys for the
        # hashed join to be exact; when two collide, evaluation falls back to a join on the strings.
        self.keys_unique = all_distinct(keys)
        # The keys sorted, with the row each came from: a run row's judgment is found by binary search.
        self.key_order = np.argsort(keys, kind="stable")
        self.sorted_keys = keys[self.key_order]
        # A one-byte-a-slot filter on the keys' top bits: most run rows are unjudged, and a lookup in a
        # 4 MiB table tells most of them so before the search (which then sees a few percent of the rows).
        self.key_filter = np.zeros(1 << _FILTER_BITS, dtype=bool)
        self.key_filter[keys >> np.uint64(64 - _FILTER_BITS)] = True
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


_FILTER_BITS = 22
_FEW_BLOCKS = 20_000

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
    # registry.JUDGED_ONLY, the parameter every run metric gets: trec_eval's -J for this metric alone. A
    # definition that declares a judged_only of its own (irspec-diversity's, ndeval's) applies it itself.
    if dict(metric.params).get("judged_only") and JUDGED_ONLY in d.params:
        ctx = judged_only_context(ctx)
    if d.compute is not None:
        values = np.asarray(_resolve(d.compute)(ctx, metric), dtype=np.float64)
    else:
        values = _per_query_values(_resolve(d.per_query), ctx, metric)
    if values.shape != (ctx.nq,):
        raise IrspecError(f"metric {metric} returned shape {values.shape}, expected ({ctx.nq},)")
    return values


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
        sub = Context(list(ctx.query_ids), offsets, ctx.label[kept], ctx.qrels, options, frame, ctx.inputs)  # inputs: a plugin's qrels
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


# --------------------------------------------------------------------------------------------------
# Results.


@dataclass(frozen=True, eq=False)
class Result:
    """The evaluation of one run: per-query values and their aggregates, keyed by canonical text.

    ``values`` is a (queries × metrics) float array in the order of ``query_ids`` and ``metrics``; a NaN
    marks a query a metric leaves out (``SL(unfound=skip)``). A text-valued metric (``relstring``) has
    NaN there, its strings in ``texts``, and NaN as its aggregate. ``warnings`` say what the values rest
    on that the user may not expect: queries the run lacks or has beyond the qrels, a run without
    lines, a relevance level at which nothing is relevant, a name shared with another run.
    """

    run_name: str
    run_source: str
    metrics: tuple[Metric, ...]
    query_ids: tuple[str, ...]
    values: np.ndarray
    options: Options
    warnings: tuple[str, ...] = ()
    texts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    judged_at_10: float | None = None
    """The run's mean Judged@10 over the queries it answers (see :func:`judged_at_10`), whatever the
    metrics; ``None`` when not computed (a result not from qrels and a run) or no query was answered."""
    tables: tuple[Any, ...] = ()
    """What an input other than a run offers beside its metrics (:class:`~irspec.spec.definitions.InputTable`,
    a log's top queries say), from its data object's ``tables()``; reports render and plot them."""
    runid: str | None = None
    """The run's own runid (:attr:`irspec.data.Run.runid`), which trec_eval's ``runid`` line prints;
    ``None`` when its input has none. ``run_name`` is what every output calls the run."""
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

    def to_frame(self, wide: bool = False, backend: str = "polars") -> Any:
        """The per-query values as a data frame (see :func:`results_frame`): long, one row per query and
        metric (``run, query_id, metric, value``), or ``wide``, one row per query and a column per metric.
        ``backend`` is ``"polars"`` or ``"pandas"`` (installed separately)."""
        return results_frame([self], wide=wide, backend=backend)


def results_frame(results: Sequence[Result], *, wide: bool = False, backend: str = "polars") -> Any:
    """The per-query values of ``results`` as one data frame, runs one after another, queries in id order.

    Long (default): columns ``run, query_id, metric, value``, one row per query and metric, metrics in
    the order evaluated. A text-valued metric (``relstring``) has a null ``value`` and its string in a
    ``text`` column, which is there only when some metric has text values. ``wide``: columns ``run,
    query_id`` and one per metric (a text metric's column holds strings; a metric some run lacks is
    null for it). An undefined value (a NaN, such as ``SL(unfound=skip)`` leaves) is null.
    ``backend``: ``"polars"`` or ``"pandas"``.
    """
    names: list[str] = []  # every metric of every result, first seen first
    for res in results:
        names.extend(str(m) for m in res.metrics if str(m) not in names)
    texts = {name for res in results for name in res.texts}
    if wide:
        columns: dict[str, list[Any]] = {"run": [], "query_id": []}
        columns.update((name, []) for name in names)
        for res in results:
            columns["run"] += [res.run_name] * len(res.query_ids)
            columns["query_id"] += list(res.query_ids)
            own = {str(m): j for j, m in enumerate(res.metrics)}
            for name in names:
                if name in res.texts:
                    columns[name] += list(res.texts[name])
                elif name in own:
                    columns[name] += res.values[:, own[name]].tolist()
                else:
                    columns[name] += [None] * len(res.query_ids)
        types = {"run": "str", "query_id": "str"} | {name: "str" if name in texts else "float" for name in names}
        return make_frame(columns, types, backend)
    columns = {"run": [], "query_id": [], "metric": [], "value": []}
    if texts:
        columns["text"] = []
    for res in results:
        keys = [str(m) for m in res.metrics]
        nq, nm = len(res.query_ids), len(keys)
        columns["run"] += [res.run_name] * (nq * nm)
        columns["query_id"] += np.repeat(np.asarray(res.query_ids, dtype=object), nm).tolist()
        columns["metric"] += keys * nq
        columns["value"] += res.values.ravel().tolist()  # row-major: query by query, metrics in order
        if texts:
            strings: list[str | None] = [None] * (nq * nm)
            for j, key in enumerate(keys):
                if key in res.texts:
                    strings[j::nm] = res.texts[key]
            columns["text"] += strings
    types = {"run": "str", "query_id": "str", "metric": "str", "value": "float", "text": "str"}
    return make_frame(columns, types, backend)


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


def bind_metrics(metrics: str | Metric | Iterable[str | Metric], qrels: Any = None) -> list[Metric]:
    """The metrics bound; ``irds-official`` names the official measures of qrels named ``irds:<id>``."""
    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    source = qrels.source if isinstance(qrels, Qrels) else qrels  # the dataset of Qrels read from one
    out: list[Metric] = []
    for m in metrics:
        out.extend([m] if isinstance(m, Metric) else parse_specs(m, source))
    seen: set[Metric] = set()
    return [m for m in out if not (m in seen or seen.add(m))]


def read_input(kind: str, source: Any, options: Mapping[str, Any] | None = None) -> Any:
    """Read ``source`` with the input reader registered as ``kind``; returns the plugin's data object.

    ``source`` is usually a path; a reader may document other accepted objects (records in memory).
    ``options`` are passed to the reader as keywords (those it documents, such as a log's ``ab``).
    """
    reader = get_registry().reader(kind)
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    read = _resolve(reader.read)
    data = read(source, **_accepted(read, dict(options or {}), reader))
    if not hasattr(data, "ids"):
        raise EvaluationError(
            f"the {reader.name!r} reader of plugin {reader.plugin!r} returned a {type(data).__name__} without "
            "the ids attribute every input object must have"
        )
    return data


def _accepted(read: Any, options: dict[str, Any], reader: Any) -> dict[str, Any]:
    """``options`` that ``read`` takes: ``per_query=False`` is dropped for a reader that cannot stream
    (it reads whole); any other option it does not take is an error."""
    try:
        params = inspect.signature(read).parameters
    except (TypeError, ValueError):  # a builtin without a signature: pass everything
        return options
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return options
    if "per_query" not in params:
        options.pop("per_query", None)
    unknown = sorted(set(options) - set(params))
    if unknown:
        raise EvaluationError(f"the {reader.name!r} reader of plugin {reader.plugin!r} takes no option {unknown[0]!r}")
    return options


@dataclass(frozen=True)
class Judgments:
    """Qrels as the engine evaluates them: the ordinary :class:`~irspec.data.Qrels` every metric sees,
    and the inputs read in place of them (``{kind: data object}``) for the metrics that need one (qrels
    with subtopics, say: :attr:`~irspec.spec.definitions.InputReader.as_qrels`). Read once with
    :func:`read_judgments` and given as the qrels of :func:`evaluate_many` for any number of runs."""

    qrels: Qrels
    inputs: Mapping[str, Any] = field(default_factory=dict)

    @functools.cached_property
    def index(self) -> QrelsIndex:
        """The qrels indexed, once for these judgments (:class:`irspec.Evaluator` holds them)."""
        return QrelsIndex(self.qrels)


def reads_qrels(kind: str) -> bool:
    """Whether the input ``kind`` is read in place of the qrels (a registered reader with ``as_qrels``),
    so that its metrics are computed from qrels and runs."""
    try:
        return get_registry().reader(kind).as_qrels
    except IrspecError:  # "run", or a kind no plugin registers
        return False


def read_judgments(
    source: Any, metrics: str | Metric | Iterable[str | Metric], columns: Mapping[str, str] | None = None
) -> Judgments:
    """The judgments ``metrics`` (specs or bound metrics) are computed with, read from ``source`` (what
    :func:`read_qrels` takes).

    When every metric needs a run (``needs="run"``) this is :func:`read_qrels`, unchanged. When some
    need an input that a plugin reads in place of the qrels (an :class:`~irspec.spec.definitions.InputReader`
    with ``as_qrels``), ``source`` is read by that reader, and its data object's ``qrels`` are the
    qrels of every metric; a metric that needs another input is an :class:`EvaluationError`.
    """
    metrics = bind_metrics(metrics, source.qrels if isinstance(source, Judgments) else source)
    registry = get_registry()
    kinds = sorted({m.definition.needs for m in metrics} - {"run"})
    if isinstance(source, Judgments):
        unread = [k for k in kinds if k not in source.inputs]
        if unread:
            raise EvaluationError(f"these judgments were read without the {unread[0]!r} input the metrics need")
        return source
    for kind in kinds:
        if not registry.reader(kind).as_qrels:
            wrong = next(m for m in metrics if m.definition.needs == kind)
            raise EvaluationError(
                f"{wrong} is computed from a {kind!r} input, not from qrels and runs; "
                "use irspec.evaluate_input (or a plan's log key)"
            )
    if not kinds:
        return Judgments(read_qrels(source, columns=columns))
    if len(kinds) > 1:
        raise EvaluationError(f"the metrics need qrels read as {' and as '.join(map(repr, kinds))}; evaluate them separately")
    if columns is not None:
        raise EvaluationError(f"columns= names the columns of ordinary qrels; the {kinds[0]!r} reader finds its own")
    data = read_input(kinds[0], source)
    qrels = getattr(data, "qrels", None)
    if not isinstance(qrels, Qrels):
        raise EvaluationError(
            f"the {kinds[0]!r} reader returned a {type(data).__name__} whose qrels attribute is not an irspec Qrels"
        )
    return Judgments(qrels, {kinds[0]: data})


def evaluate_many(
    qrels: Any,
    runs: Iterable[Any],
    metrics: str | Metric | Iterable[str | Metric],
    *,
    options: Options | None = None,
    columns: Mapping[str, str] | None = None,
    memory: str | int | None = None,
    **kwargs: Any,
) -> list[Result]:
    """Evaluate several runs against one qrels, which is read and indexed once. ``columns`` names the
    columns of qrels and runs given as frames (see :func:`irspec.read_qrels`); ``memory`` as in
    :func:`irspec.evaluate`; ``kwargs`` are :class:`Options`' fields when ``options`` is not given."""
    options = options or Options(**kwargs)
    if memory is not None:
        parse_memory(memory)  # a bad size fails before any reading
    bound = bind_metrics(metrics, qrels.qrels if isinstance(qrels, Judgments) else qrels)
    if not bound:
        raise EvaluationError("no metrics to compute")
    # A metric over another input (a plugin's log, say) goes through irspec.evaluation.inputs; one over qrels read
    # by a plugin (with subtopics) gets that input beside the ordinary qrels.
    judgments = read_judgments(qrels, bound, columns)
    index = judgments.index if isinstance(qrels, Judgments) else index_qrels(judgments.qrels)
    inputs = judgments.inputs
    results = distinct_names([_evaluate_source(index, r, bound, options, memory, columns, inputs) for r in runs])
    issue_warnings(collect_warnings(results))
    return results


def distinct_names(results: Sequence[Result]) -> list[Result]:
    """``results`` with every run name made unique, so that no output shows two rows of one name.

    The first run of a name keeps it; the others become ``name (2)``, ``name (3)``, ... (skipping a
    label another run already has), in the order given; every run of a shared name gets a warning
    that says which file has which label.
    """
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(results):
        groups.setdefault(r.run_name, []).append(i)
    taken = set(groups)
    out = list(results)
    for name, members in groups.items():
        if len(members) < 2:
            continue
        labels, k = [name], 2
        for _ in members[1:]:
            while f"{name} ({k})" in taken:
                k += 1
            labels.append(f"{name} ({k})")
            taken.add(labels[-1])
        which = [f"{label!r} ({results[i].run_source})" for label, i in zip(labels, members)]
        text = f"{len(members)} runs are named {name!r}; labelled " + ", ".join(which[:-1]) + " and " + which[-1]
        for label, i in zip(labels, members):
            out[i] = dataclasses.replace(results[i], run_name=label, warnings=(*results[i].warnings, text))
    return out


def collect_warnings(results: Iterable[Any]) -> list[str]:
    """The warnings of ``results``, each once, in order: one about the qrels (a relevance level at
    which nothing is relevant) or about two runs is on every result it concerns."""
    return list(dict.fromkeys(w for r in results for w in r.warnings))


# irspec's own directory (this module is one level down in it): frames from files below it are irspec's
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def issue_warnings(messages: Iterable[str]) -> None:
    """Issue ``messages`` as :class:`~irspec.errors.IrspecWarning`, attributed to the first caller
    outside irspec (the line of the user's code that asked for the evaluation)."""
    level, frame = 2, sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE + os.sep):
        frame, level = frame.f_back, level + 1
    for text in messages:
        warnings.warn(text, IrspecWarning, stacklevel=level)


def _evaluate_source(
    index: QrelsIndex,
    src: Any,
    metrics: list[Metric],
    options: Options,
    memory: Any,
    columns: Any = None,
    inputs: Mapping[str, Any] | None = None,
) -> Result:
    """One run, read whole or, when it is too large for ``memory``, in blocks."""
    name, source, runid, parts = evaluate_parts(index, src, metrics, options, memory, columns, inputs)
    return finish(index, name, source, parts, metrics, options, inputs, runid=runid)


@dataclass(frozen=True)
class Part:
    """A run, or a part of one (a block of a streamed run, a batch of queries), evaluated on its own:
    the values of the queries it answers that the qrels know, with what :func:`finish` needs to make
    the whole run's :class:`Result` of any number of parts: the queries each answers, its rows, and its
    judgment coverage. The per-query values do not depend on the other queries (kernels compute each
    query on its own), so the parts' values together are the whole run's."""

    result: Result | None
    """The answered queries' values (``None`` when the qrels know none of them); its warnings are void."""
    coverage: tuple[list[str], np.ndarray, np.ndarray]
    """:func:`judgment_coverage` of the answered queries."""
    seen: frozenset[str]
    """Every query id of the part, those the qrels lack too."""
    rows: int


_NO_COVERAGE: tuple[list[str], np.ndarray, np.ndarray] = ([], np.zeros(0), np.zeros(0, dtype=np.int64))


def evaluate_part(
    index: QrelsIndex,
    run: Any,
    metrics: list[Metric],
    options: Options,
    inputs: Mapping[str, Any] | None = None,
    *,
    narrow: bool = False,
) -> Part:
    """``run`` (a :class:`~irspec.data.Run`, or a block of one) evaluated as a :class:`Part`. With
    ``narrow``, against an index of the judgments of its own queries only (a streamed run's block:
    joining each block with every judgment would cost the whole qrels a block)."""
    ids = frozenset(run.query_blocks[0].to_list())
    known = [q for q in ids if q in index.position]
    if not known:
        return Part(None, _NO_COVERAGE, ids, run.frame.height)
    coverage: list[Any] = []
    own = _sub_index(index, known) if narrow and len(known) < len(index.query_ids) else index
    skip = dataclasses.replace(options, missing_queries="skip")  # the whole run's missing queries: finish()
    result = _evaluate_run(own, run, metrics, skip, coverage, inputs)
    return Part(result, coverage[0], ids, run.frame.height)


def evaluate_parts(
    index: QrelsIndex,
    src: Any,
    metrics: list[Metric],
    options: Options,
    memory: Any = None,
    columns: Any = None,
    inputs: Mapping[str, Any] | None = None,
) -> tuple[str, str, str | None, list[Part]]:
    """A run's name, source, runid and :class:`Part`: one when it is read whole, one a block when it is
    too large for ``memory`` (:mod:`irspec.data.stream`)."""
    run = open_run(src, memory, columns=columns)
    if not isinstance(run, RunBlocks):
        return run.name, run.source, run.runid, [evaluate_part(index, run, metrics, options, inputs)]
    parts: list[Part] = []
    with run:
        for block in run:
            if block is None:  # the run is not grouped: what was read is void, its partitions follow
                parts = []
                continue
            parts.append(evaluate_part(index, block, metrics, options, inputs, narrow=True))
    return run.name, run.source, run.runid, parts


def finish(
    index: QrelsIndex,
    name: str,
    source: str,
    parts: Sequence[Part],
    metrics: Sequence[Metric],
    options: Options,
    inputs: Mapping[str, Any] | None = None,
    *,
    runid: str | None = None,
) -> Result:
    """The :class:`Result` of a run evaluated in ``parts`` (each query in one part): their values, the
    qrels queries none of them answers as ``options.missing_queries`` says, and the whole run's
    warnings (queries missing or unknown, coverage, relevance levels); ``runid`` the run's own."""
    seen = frozenset().union(*(p.seen for p in parts))
    rows = sum(p.rows for p in parts)
    missing = sorted(set(index.query_ids) - seen)
    extra = {q for q in seen if q not in index.position}
    notes = coverage_notes(index, source, extra, missing, rows == 0, options)
    notes += _level_warnings(index, options, metrics)
    answered = [p for p in parts if p.result is not None]
    judged, note = _coverage_note(source, [p.coverage for p in answered], options)
    notes += note
    results = [p.result for p in answered if p.result is not None]
    if missing and options.missing_queries == "zero":  # scored as trec_eval -c scores them
        results.append(_evaluate_run(_sub_index(index, missing), read_run({}), list(metrics), options, inputs=inputs))
    query_ids = [q for r in results for q in r.query_ids]
    order = sorted(range(len(query_ids)), key=query_ids.__getitem__)
    values = np.concatenate([r.values for r in results]) if results else np.empty((0, len(metrics)))
    texts = {key: [t for r in results for t in r.texts[key]] for key in (results[0].texts if results else {})}
    return Result(
        name,
        source,
        tuple(metrics),
        tuple([query_ids[i] for i in order]),
        values[order],
        options,
        tuple(notes),
        {key: tuple(strings[i] for i in order) for key, strings in texts.items()},
        judged_at_10=judged,
        runid=runid,
    )


def _sub_index(index: QrelsIndex, query_ids: Sequence[str]) -> QrelsIndex:
    """The index of the judgments of ``query_ids`` only (each a query of ``index``)."""
    codes = np.array(sorted(index.position[q] for q in query_ids), dtype=np.int64)
    rows = segment_rows(index.offsets[codes], index.offsets[codes + 1] - index.offsets[codes])
    return QrelsIndex(Qrels(index.qrels.frame[rows], index.qrels.source))


def _evaluate_run(
    index: QrelsIndex,
    run: Any,
    metrics: list[Metric],
    options: Options,
    coverage: list[Any] | None = None,
    inputs: Mapping[str, Any] | None = None,
) -> Result:
    ctx, notes = build_context(index, run, options, inputs)
    notes += _level_warnings(index, options, metrics)
    parts = judgment_coverage(ctx)
    if coverage is not None:  # a block of a streamed run: the whole run's coverage is told once
        coverage.append(parts)
        judged = None
    else:
        judged, note = _coverage_note(run.source, [parts], options)
        notes += note
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
        # A query the run does not answer (missing_queries="zero") has an empty ranking in the context, and
        # is scored as one, as trec_eval -c scores it (its "bogus ranking"): each metric's own rule for an
        # empty ranking decides (0 for most, NumQ 1, NumRel R, Accuracy undefined).
        values[:, j] = compute_metric(ctx, m)
    # The context lists queries in the run's order; results list them sorted by id.
    order = sorted(range(ctx.nq), key=ctx.query_ids.__getitem__)
    return Result(
        run.name,
        run.source,
        tuple(metrics),
        tuple([ctx.query_ids[i] for i in order]),
        values[order],
        options,
        tuple(notes),
        {name: tuple(strings[i] for i in order) for name, strings in texts.items()},
        judged_at_10=judged,
        runid=run.runid,
    )


@functools.cache
def _judged_metric() -> Metric:
    (metric,) = parse_specs("Judged@10", None)
    return metric


def judgment_coverage(ctx: Context) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Per query the run answers (not those ``missing_queries="zero"`` adds): its id, its Judged@10,
    and how many documents it ranks in the top 10 (at most 10). :func:`_coverage_note` combines these
    of one run, or of every block of a streamed run."""
    values = compute_metric(ctx, _judged_metric())
    shown = np.minimum(np.diff(ctx.offsets), 10)
    ids = list(ctx.query_ids)
    if ctx.missing is not None:
        values, shown = np.delete(values, ctx.missing), np.delete(shown, ctx.missing)
        dropped = set(ctx.missing.tolist())
        ids = [q for i, q in enumerate(ids) if i not in dropped]
    return ids, values, shown


def _coverage_note(source: str, parts: Sequence[Any], options: Options) -> tuple[float | None, list[str]]:
    """The run's mean Judged@10 (in query-id order, as every mean) and, when the share of the documents
    it shows in its top 10 that are judged is under ``options.judged_warning``, a warning: the share,
    not Judged@10 itself, because a ranking of 3 judged documents covers all it shows (its Judged@10 is
    0.3). ``None`` and no warning when the run answers no query."""
    ids = [q for p in parts for q in p[0]]
    if not ids:
        return None, []
    values = np.concatenate([p[1] for p in parts])
    shown = int(np.concatenate([p[2] for p in parts]).sum())
    order = sorted(range(len(ids)), key=ids.__getitem__)
    judged = aggregate_values(values[order], "mean")
    coverage = float((values * 10).sum() / shown) if shown else None  # Judged@10 is judged-in-top-10 / 10
    if coverage is None or not options.judged_warning or coverage >= options.judged_warning:
        return judged, []
    return judged, [
        f"{source}: only {coverage:.0%} of the run's top 10 documents are in the qrels (under "
        f"{options.judged_warning:.0%}; Judged@10 = {judged:.2f}), so its scores are likely underestimated "
        "(unjudged documents count as non-relevant)"
    ]


def build_context(
    index: QrelsIndex, run: Any, options: Options, inputs: Mapping[str, Any] | None = None
) -> tuple[Context, list[str]]:
    """Join a run with the indexed qrels, rank it, apply depth and judged_only: the kernels' input.
    ``inputs`` are those read in place of the qrels (:class:`Judgments`), handed to the context.

    Ranking is by query, score descending and docno descending (trec_eval's order; the file's rank
    column is ignored). A run file already grouped by query with scores non-increasing (the usual case)
    keeps its row order: only its tied rows move, and its queries are evaluated in file order (the
    caller sorts the per-query results). The labels come from a join on 64-bit hashes of the
    (query, docno) pairs, every match checked against the strings.
    """
    frame, keys = run.frame, run.keys
    # Blocks of adjacent rows with the same query id (exact string comparison): one per query in a
    # grouped run, so everything per query below is computed on a few thousand blocks, not on rows.
    names, lengths = run.query_blocks
    if len(names) <= _FEW_BLOCKS:  # a dict lookup each: a join's fixed cost is most of a small run's time
        position = index.position
        codes = np.fromiter((position.get(q, -1) for q in names.to_list()), np.int64, len(names))
    else:
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
    missing = sorted(set(index.query_ids) - run_queries)
    notes = coverage_notes(index, run.source, extra, missing, run.frame.height == 0, options)
    if extra:
        rows = np.repeat(known, lengths)
        frame = frame.filter(pl.Series(rows))
        keys = keys[rows] if keys is not None else None
        codes, lengths = codes[known], lengths[known]
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
    ctx = Context(evaluated, offsets, label, index, options, frame=_Ranked(frame, ranking, kept), inputs=inputs)
    if options.missing_queries == "zero" and missing:
        ctx.missing = np.arange(len(evaluated) - len(missing), len(evaluated), dtype=np.int64)
    return ctx, notes


def coverage_notes(
    index: QrelsIndex, source: str, extra: set[str], missing: list[str], empty: bool, options: Options
) -> list[str]:
    """The warnings on which queries a run (``source``) answers: an empty qrels, run queries not in the
    qrels (``extra``, ignored), qrels queries not in the run (``missing``, sorted), a run without lines.
    Raises under ``missing_queries="error"`` when some are missing."""
    notes = []
    if not index.query_ids:
        notes.append(f"qrels {_described(index.qrels.source)} has no judgments")
    if extra:
        notes.append(f"{source}: {_queries(len(extra))} not in the qrels ignored ({_some(sorted(extra))})")
    if missing and options.missing_queries == "error":
        raise EvaluationError(
            f"{source}: {len(missing)} qrels quer{'y is' if len(missing) == 1 else 'ies are'} missing from "
            f"the run ({_some(missing)}) and missing_queries is 'error'"
        )
    if missing or empty:
        notes.append(_missing_text(source, empty, missing, len(index.query_ids), options))
    return notes


def _queries(n: int) -> str:
    return f"{n} quer{'y' if n == 1 else 'ies'}"


def _some(items: Sequence[str], shown: int = 5, quote: bool = True) -> str:
    """The first few of ``items``, then how many more: enough to find them, short enough to read."""
    head = ", ".join(repr(i) if quote else i for i in items[:shown])
    return head + (f" and {len(items) - shown} more" if len(items) > shown else "")


def _missing_text(source: str, empty: bool, missing: list[str], total: int, options: Options) -> str:
    """The warning for a run without lines or without some qrels queries: which, and what they got."""
    if options.missing_queries == "zero":
        fate = (
            "scored as empty rankings (0 on most measures) and counted in the means (missing_queries='zero', "
            "trec_eval -c)"
        )
    else:
        fate = "left out of the means (missing_queries='skip')"
    if empty:
        if not missing:
            return f"{source}: the run has no lines"
        return f"{source}: the run has no lines; all {_queries(total)} of the qrels are {fate}"
    verb = "is" if len(missing) == 1 else "are"
    return (
        f"{source}: {len(missing)} of the {_queries(total)} of the qrels {verb} missing from the run "
        f"({_some(missing)}): {fate}"
    )


def _level_warnings(index: QrelsIndex, options: Options, metrics: Sequence[Metric]) -> list[str]:
    """A warning for each relevance level (``-l`` or a metric's ``rel``) at which no qrels document is
    relevant: every query then has R = 0, which is almost always a mistaken level."""
    levels: dict[int, list[str]] = {}
    for m in metrics:
        if "rel" in m.definition.param_names:
            levels.setdefault(relevance_level(m, options), []).append(str(m))
    labels = index.labels
    out = []
    for level, names in levels.items():
        if len(labels) and not index.counts(level)[0].any():
            out.append(
                f"relevance level {level} ({_some(names, quote=False)}): no document in the qrels is relevant "
                f"(no label >= {level}; the highest is {int(labels.max())}), so every query has R = 0"
            )
    return out


def _described(source: str) -> str:
    """``file 'x'`` for a file, ``<dict>`` (or ``<stdin>``...) for other sources, for messages."""
    return source if source.startswith("<") and source.endswith(">") else f"file {source!r}"


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
    if index.keys_unique:
        if keys is None:
            keys = pair_keys(frame)
        # The rows the filter cannot rule out (a few percent of a run's rows), searched among the sorted
        # qrels keys: the matches with their row numbers. A search, not a join: a join's fixed cost is
        # most of a small run's evaluation, and the qrels keys are distinct here.
        maybe = np.flatnonzero(index.key_filter[keys >> np.uint64(64 - _FILTER_BITS)])
        wanted = keys[maybe]
        at = np.minimum(np.searchsorted(index.sorted_keys, wanted), max(len(index.sorted_keys) - 1, 0))
        found = index.sorted_keys[at] == wanted if len(index.sorted_keys) else np.zeros(len(wanted), dtype=bool)
        row = maybe[found]
        qrow = index.key_order[at[found]]
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
    score descending, docno descending. When each query is one block, the blocks keep their order."""
    n = len(scores)
    boundary = np.cumsum(lengths)[:-1] - 1  # i where rows i and i + 1 lie in different blocks
    same_block = np.ones(max(n - 1, 0), dtype=bool)
    same_block[boundary] = False
    if np.bincount(codes, minlength=1).max() <= 1:
        if not np.any(same_block & (scores[1:] > scores[:-1])):
            # Scores non-increasing within each query (the usual run file): only ties move.
            moved, rows = _tied_order(None, same_block, scores, docnos)
            return _Ranking(codes, lengths, rows, moved)
        # A pytrec_eval dict, a retriever's top k: each block sorted on its own, far faster than one
        # sort of every row (a block of a few thousand rows fits in cache).
        order = _block_argsort(scores, lengths)
        moved, rows = _tied_order(order, same_block, scores[order], docnos)
        if moved is not None:
            order[moved] = rows
        return _Ranking(codes, lengths, order)
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


def _block_argsort(scores: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Row indices that put each block of ``lengths`` rows in order of score descending (ties in any
    order), blocks kept in place. Blocks of one length are sorted as the rows of a matrix; blocks of
    lengths that differ are padded to the longest with +inf (after the negation, so last) when that
    at most doubles the work, else sorted as one array by (block, score)."""
    n, nb = len(scores), len(lengths)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    width = int(lengths.max())
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    if width * nb == n:  # every block as long as the longest: a reshape, no copy
        order = np.argsort(-scores.reshape(nb, width), axis=1)
        order += starts[:, None]
        return order.ravel()
    if width * nb <= 2 * n:
        # Row i of block b sits at b * width + (i - starts[b]) of the flattened matrix.
        place = segment_rows(np.arange(nb, dtype=np.int64) * width, lengths)
        padded = np.full(nb * width, np.inf)
        padded[place] = -scores
        order = np.argsort(padded.reshape(nb, width), axis=1)
        order += starts[:, None]
        # A block's own rows come first in its matrix row (the padding sorts last).
        return order.ravel()[place]
    block = np.repeat(np.arange(nb, dtype=np.int64), lengths)
    order = np.argsort(-scores)
    return order[_stable_argsort(block[order])]


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
