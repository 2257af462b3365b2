"""What the report's figures draw: the metric specs they read, the values computed from results, and the
list of figures a report has, each with its name, title and description.

Both renderers take what is computed here: :mod:`irspec.report.charts` writes each figure as SVG (the
HTML report's figures and the SVG files of the ``plots`` output) and :mod:`irspec.report.plots` draws
it with matplotlib (the PNG files). So a value drawn is computed once, whichever picture shows it:
:func:`precision_recall` (the 11-point curves), :func:`figure_data` (ROC points, AP values, confusion
matrices), :func:`differences` (each run's sorted per-topic differences from the baseline),
:func:`box` (a box plot's quartiles and whiskers), :func:`jitter` (the seeded offsets of the topics'
dots), :func:`histogram` (the AP histograms' counts), :func:`power_at` (a power curve read off at a
number of topics).

:func:`report_figures` lists a report's figures (:class:`Figure`: a kind, the data it is drawn from,
and the words around it); :func:`power_figures`, :func:`agreement_figures` and
:func:`reproduction_figures` those of a power analysis, several sets of judgments and a reproduction.
This module only computes: it draws nothing and imports no drawing library.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from irspec.frozen import frozen

__all__ = [
    "CONFUSION_K",
    "IPREC_SPECS",
    "JITTER_SEED",
    "LEVELS",
    "MAX_TOPIC_LABELS",
    "ROC_CUTOFFS",
    "Confusion",
    "Difference",
    "Figure",
    "FigureData",
    "Plot",
    "agreement_figures",
    "aligned",
    "box",
    "differences",
    "figure_data",
    "figure_metrics",
    "figure_specs",
    "histogram",
    "jitter",
    "power_at",
    "power_figures",
    "precision_recall",
    "report_figures",
    "reproduction_figures",
    "slug",
]

LEVELS: tuple[float, ...] = tuple(i / 10 for i in range(11))
"""The recall levels of the precision-recall curves: 0.0, 0.1, ..., 1.0."""
IPREC_SPECS: tuple[str, ...] = tuple(f"IPrec@{level:.1f}" for level in LEVELS)
"""The 11 recall levels of the precision-recall curves, as metric specs."""
ROC_CUTOFFS: tuple[int, ...] = (1, 2, 3, 5, 10, 15, 20, 30, 50, 100, 200, 500, 1000)
"""The cutoffs of the ROC curve's points (trec_eval's standard cutoffs and a few more at the top)."""
CONFUSION_K = 10
"""The default cutoff of the confusion matrix: the top 10 count as retrieved."""
JITTER_SEED = 0
"""The seed of the per-topic dots' jitter in the distributions plots (it moves the dots, no value)."""
MAX_TOPIC_LABELS = 80
"""Up to this many topics, the differences chart names each one under its bar."""


@frozen
class Confusion:
    """Retrieved in the top ``k`` against relevant, summed over ``topics``: relevant retrieved (true
    positives), non-relevant retrieved (false positives, unjudged documents included), relevant
    missed (false negatives), and non-relevant not retrieved (true negatives): ``None`` without the
    collection size, which is the only way to know them."""

    k: int
    topics: int
    relevant_retrieved: int
    nonrelevant_retrieved: int
    relevant_missed: int
    nonrelevant_missed: int | None


@frozen
class FigureData:
    """What the figures beyond the precision-recall curves draw, per run name: the ROC points
    ``(fall-out, recall)`` from the origin through :data:`ROC_CUTOFFS`, means over the topics; the
    per-topic AP values (the histograms); the :class:`Confusion` at ``k``. ``collection_size`` is
    ``None`` when fall-out counts judged non-relevant documents only."""

    roc: dict[str, list[tuple[float, float]]]
    ap: dict[str, list[float]]
    confusion: dict[str, Confusion]
    collection_size: int | None


@frozen
class Plot:
    """One rendered figure: ``name`` (the file stem, such as ``pr-curves``), a ``title``, a one-line
    ``description``, its ``svg`` and ``png`` bytes (``None`` when that format was not asked for), and
    the ``seed`` of any random numbers it drew (the distributions' jitter), for the provenance."""

    name: str
    title: str
    description: str
    svg: bytes | None
    png: bytes | None
    seed: int | None = None


@frozen
class Figure:
    """One figure to draw: its ``name`` (the file stem), ``title`` and ``description``; its ``kind``
    (``pr``, ``roc``, ``ap``, ``confusion``, ``differences``, ``distributions``, ``groups``, ``input``,
    ``power``, ``agreement``, ``reproduce-order``, ``reproduce-effects``) and the ``args`` each renderer's
    function of that kind takes; the ``seed`` of its random numbers, if any."""

    name: str
    title: str
    description: str
    kind: str
    args: tuple[Any, ...]
    seed: int | None = None


def figure_specs(collection_size: int | None, k: int = CONFUSION_K) -> tuple[str, ...]:
    """The metric specs :func:`figure_data` reads: AP, recall and fall-out at
    every ROC cutoff (judged-only fall-out without ``collection_size``), and P@k, NumRet and NumRel
    for the confusion matrix at ``k``."""
    fallout = "Fallout" if collection_size is not None else "Fallout(judged=true)"
    roc = [spec for c in ROC_CUTOFFS for spec in (f"R@{c}", f"{fallout}@{c}")]
    return ("AP", *roc, f"P@{k}", "NumRet", "NumRel")


def figure_metrics(collection_size: int | None, k: int = CONFUSION_K) -> tuple[str, ...]:
    """Every metric spec the figures read from the runs: :data:`IPREC_SPECS` (:func:`precision_recall`)
    and :func:`figure_specs` (:func:`figure_data`). A plan that draws evaluates its runs on these as an
    evaluation of their own, beside the one its tables show, which holds the plan's metrics alone."""
    return (*IPREC_SPECS, *figure_specs(collection_size, k))


def figure_data(results: Sequence[Any], collection_size: int | None, k: int = CONFUSION_K) -> FigureData:
    """The ROC points, AP values and confusion matrices of ``results`` (evaluated with
    :func:`figure_specs` of the same ``collection_size`` and ``k`` among their metrics)."""
    fallout = "Fallout" if collection_size is not None else "Fallout(judged=true)"
    roc, ap, confusion = {}, {}, {}
    for res in results:
        agg = res.aggregate()
        roc[res.run_name] = [(0.0, 0.0)] + [(agg[f"{fallout}@{c}"], agg[f"R@{c}"]) for c in ROC_CUTOFFS]
        values = res.column("AP")
        ap[res.run_name] = [float(v) for v in values[np.isfinite(values)]]
        # P@k is relevant-in-top-k / k exactly, so P@k * k is that count up to the last bit
        tp = np.rint(res.column(f"P@{k}") * k).astype(np.int64)
        fp = np.minimum(res.column("NumRet").astype(np.int64), k) - tp
        rel = res.column("NumRel").astype(np.int64)
        tn = None if collection_size is None else int((collection_size - rel - fp).sum())
        confusion[res.run_name] = Confusion(
            k, len(tp), int(tp.sum()), int(fp.sum()), int((rel - tp).sum()), tn
        )
    return FigureData(roc, ap, confusion, collection_size)


def precision_recall(results: Sequence[Any]) -> dict[str, list[float]]:
    """The 11-point interpolated precision-recall curve of each run: its mean ``IPrec`` at recall 0.0,
    0.1, ..., 1.0, read from ``results`` evaluated with :data:`IPREC_SPECS` among their metrics
    (:func:`figure_metrics`, which a plan evaluates when an output draws plots). ``{run name: curve}``."""
    curves = {}
    for res in results:
        agg = res.aggregate()
        at = {m.get("recall"): agg[str(m)] for m in res.metrics if m.name == "IPrec"}
        missing = [spec for spec, level in zip(IPREC_SPECS, LEVELS, strict=True) if level not in at]
        if missing:
            raise ValueError(f"{res.run_name} was evaluated without {', '.join(missing)}")
        curves[res.run_name] = [at[level] for level in LEVELS]
    return curves


def slug(text: str) -> str:
    """A metric's (or a name's) text as part of a file name: ``nDCG@10`` is ``nDCG_at_10``."""
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", text.replace("@", "_at_")).strip("_") or "metric"


def aligned(a: Any, b: Any, metric: str) -> tuple[list[str], Any, Any]:
    """Two results' values of ``metric`` on the queries both have, paired by id (undefined left out)."""
    qa = np.asarray(a.query_ids, dtype=str)
    qb = np.asarray(b.query_ids, dtype=str)
    common, ia, ib = np.intersect1d(qa, qb, assume_unique=True, return_indices=True)
    x, y = a.column(metric)[ia], b.column(metric)[ib]
    ok = np.isfinite(x) & np.isfinite(y)
    return [str(q) for q in common[ok]], x[ok], y[ok]


@frozen
class Difference:
    """One run's per-topic differences from the baseline in a metric, largest first (ties in query-id
    order): the ``topics``, the run's values ``a``, the baseline's ``b`` and ``a - b``, ``diff``.
    ``lower_is_better`` for a metric whose lower values are better (search length, fall-out), where a
    negative difference is the run's win."""

    run: str
    baseline: str
    topics: tuple[str, ...]
    a: tuple[float, ...]
    b: tuple[float, ...]
    diff: tuple[float, ...]
    lower_is_better: bool = False

    @property
    def outcomes(self) -> tuple[int, ...]:
        """Per topic, 1 where the run is better than the baseline in the metric's direction, -1 where it
        is worse, 0 where they tie (a metric better neither way counts a higher value as better)."""
        way = -1 if self.lower_is_better else 1
        return tuple(way * ((d > 0) - (d < 0)) for d in self.diff)

    @property
    def counts(self) -> tuple[int, int, int]:
        """How many topics the run is better, tied and worse on, in the metric's direction."""
        outcomes = self.outcomes
        return outcomes.count(1), outcomes.count(0), outcomes.count(-1)

    @property
    def mean(self) -> float:
        """The mean difference (NaN without topics)."""
        return float(np.mean(self.diff)) if self.diff else math.nan


def differences(results: Sequence[Any], metric: str, baseline: str) -> list[Difference]:
    """Every run but ``baseline``'s per-topic differences from it in ``metric``, topics paired by id, each
    knowing which way the metric is better (:attr:`~irspec.spec.definitions.Metric.better`)."""
    base = next(r for r in results if r.run_name == baseline)
    lower = any(str(m) == metric and m.better == "lower" for m in base.metrics)
    out = []
    for run in results:
        if run.run_name == baseline:
            continue
        topics, x, y = aligned(run, base, metric)
        d = x - y
        order = np.argsort(-d, kind="stable")
        out.append(
            Difference(
                run.run_name,
                baseline,
                tuple(topics[i] for i in order),
                tuple(float(v) for v in x[order]),
                tuple(float(v) for v in y[order]),
                tuple(float(v) for v in d[order]),
                lower,
            )
        )
    return out


def box(values: Any) -> tuple[float, float, float, float, float] | None:
    """A box plot's ``(q1, median, q3, low, high)``: quartiles (numpy's linear percentiles) and whiskers
    to the furthest value within 1.5 IQR (Tukey's rule, as matplotlib's boxplot); ``None`` without values."""
    values = np.asarray(values, dtype=float)
    if not len(values):
        return None
    q1, median, q3 = (float(v) for v in np.percentile(values, [25, 50, 75]))
    iqr = q3 - q1
    low = float(values[values >= q1 - 1.5 * iqr].min())
    high = float(values[values <= q3 + 1.5 * iqr].max())
    return q1, median, q3, low, high


def jitter(sizes: Sequence[int], spread: float = 0.18) -> list[Any]:
    """The vertical offsets of the topics' dots, per run of ``sizes[i]`` topics, uniform in
    ``[-spread, spread)`` from one generator seeded :data:`JITTER_SEED`: the same dots every time."""
    rng = np.random.default_rng(JITTER_SEED)  # jitter only: a fixed seed keeps the figure reproducible
    return [rng.uniform(-spread, spread, n) for n in sizes]


def histogram(values: Sequence[float]) -> list[int]:
    """How many ``values`` fall in each tenth of [0, 1] (the last tenth closed, as numpy's histogram)."""
    counts, _ = np.histogram(np.asarray(values, dtype=float), bins=np.linspace(0.0, 1.0, 11))
    return [int(c) for c in counts]


def power_at(curve: Any, n: int) -> float:
    """A power curve's power at ``n`` topics, read off its points (linear between two of them)."""
    return float(np.interp(n, curve.topics, curve.power))


def fallout_words(collection_size: int | None) -> str:
    """What the ROC curves' fall-out counts, in words."""
    if collection_size is None:
        return "judged non-relevant documents only (no collection size given: -N or collection_size)"
    return f"non-relevant documents of a collection of {collection_size:,}"


def _group_tables(results: Sequence[Any]) -> dict[str, list[tuple[str, Any]]]:
    """``{metric: [(run, table)]}``: the runs' query-group tables (:class:`irspec.experiment.groups.GroupTable`,
    told by their ``metric``), in run order."""
    found: dict[str, list[tuple[str, Any]]] = {}
    for res in results:
        for table in res.tables:
            if getattr(table, "metric", ""):
                found.setdefault(table.metric, []).append((res.run_name, table))
    return found


def report_figures(
    results: Sequence[Any],
    *,
    curves: Mapping[str, Sequence[float]] | None = None,
    data: FigureData | None = None,
    baseline: str | None = None,
    inputs: Sequence[Any] = (),
) -> list[Figure]:
    """Every figure of ``results`` (one result per run, same metrics), and of the tables of ``inputs``
    (results of other inputs, a log's) after them: the precision-recall curves (with ``curves``), the
    ROC curves, AP histograms and confusion matrices (with ``data``), per metric the differences from
    ``baseline`` (the first run without one) and the distributions, the query groups' means, the inputs'
    tables."""
    out: list[Figure] = []
    if curves:
        out.append(
            Figure(
                "pr-curves",
                "Interpolated precision-recall curves",
                "11-point interpolated precision-recall curves (mean IPrec at recall 0.0, 0.1, ..., 1.0); the legend "
                "gives each run's mean over the 11 points.",
                "pr",
                (dict(curves),),
            )
        )
    if data is not None:
        out.extend(_data_figures(data))
    used: set[str] = set()

    def unique(stem: str) -> str:
        name, i = stem, 2
        while name in used:
            name, i = f"{stem}-{i}", i + 1
        used.add(name)
        return name

    metrics = [str(m) for m in results[0].metrics] if results else []
    reference = baseline if baseline is not None else (results[0].run_name if results else None)
    for metric in metrics:
        if len(results) > 1 and reference is not None:
            how = "the baseline" if baseline is not None else "the first run (the plan has no baseline)"
            out.append(
                Figure(
                    unique(f"differences-{slug(metric)}"),
                    f"Per-topic differences in {metric}",
                    f"Each run's per-topic {metric} minus {reference}'s ({how}), sorted: green where the run is "
                    "better, red where it is worse.",
                    "differences",
                    (results, metric, reference),
                )
            )
        out.append(
            Figure(
                unique(f"distributions-{slug(metric)}"),
                f"Per-topic {metric}",
                f"The distribution of {metric} over topics for every run: box from the first to the third "
                "quartile, line at the median, diamond at the mean, one dot per topic.",
                "distributions",
                (results, metric),
                JITTER_SEED,
            )
        )
    for metric, tables in _group_tables(results).items():
        out.append(
            Figure(
                unique(f"groups-{slug(metric)}"),
                f"{metric} by query group",
                f"Every run's mean {metric} per group of queries with its 95% t interval (none for a group of one "
                "query); below the dotted line, the macro mean over the groups and the micro mean over all queries.",
                "groups",
                (metric, tables),
            )
        )
    for res in inputs:
        for table in res.tables:
            out.append(
                Figure(
                    f"{slug(res.run_name)}-{slug(table.title.lower())}",
                    f"{res.run_name}: {table.title}",
                    table.description,
                    "input",
                    (table,),
                )
            )
    return out


def _data_figures(data: FigureData) -> Iterable[Figure]:
    yield Figure(
        "roc-curves",
        "ROC curves",
        "Mean recall against mean fall-out over the topics as the cutoff grows from 0 to "
        f"{ROC_CUTOFFS[-1]} (cutoff 10 labelled); fall-out counts {fallout_words(data.collection_size)}.",
        "roc",
        (data,),
    )
    yield Figure(
        "ap-histograms",
        "Histograms of AP over topics",
        "How many topics of each run have an AP in each tenth of [0, 1]; the dashed line is the run's mean AP.",
        "ap",
        (data,),
    )
    k = next(iter(data.confusion.values())).k if data.confusion else CONFUSION_K
    unknown = (
        ""
        if data.collection_size is not None
        else " Non-relevant documents not retrieved are unknown without the collection size (-N or collection_size)."
    )
    yield Figure(
        f"confusion-at-{k}",
        f"Confusion matrices at {k}",
        f"Per run, summed over topics: the top {k} documents (fewer when a ranking is shorter) count as "
        f"retrieved; non-relevant includes unjudged documents.{unknown}",
        "confusion",
        (data,),
    )


def power_figures(curves: Sequence[Any], target: float) -> list[Figure]:
    """The ``power-curves`` figure of a power analysis's curves (none without curves: no delta given)."""
    if not curves:
        return []
    return [
        Figure(
            "power-curves",
            "Power against the number of topics",
            f"The power to detect delta against the number of topics; dashed: the target power {target:g}; filled "
            "mark: the topics delta needs; hollow mark: the topics at hand.",
            "power",
            (tuple(curves), target),
        )
    ]


def agreement_figures(found: Any) -> list[Figure]:
    """The scatter plots of an :class:`~irspec.experiment.agreement.Agreement` (``agreement-<metric>-<a>-<b>``):
    per metric and pair of sets, each run's mean under one set against the other."""
    metrics = list(dict.fromkeys(m for _, _, m, _ in found.means))
    out = []
    for i, a in enumerate(found.sets):
        for b in found.sets[i + 1 :]:
            for metric in metrics:
                out.append(
                    Figure(
                        f"agreement-{slug(metric)}-{slug(a)}-{slug(b)}",
                        f"{metric}: {a} against {b}",
                        f"Each run's mean {metric} under the judgments {a} (x) and {b} (y); off the diagonal the sets "
                        "disagree.",
                        "agreement",
                        (tuple(found.means), metric, a, b),
                    )
                )
    return out


def reproduction_figures(reproduction: Any) -> list[Figure]:
    """A reproduction's figures (:mod:`irspec.experiment.reproduce`): per-topic KTU and RBO (on the
    same qrels only) and ER against ΔRI."""
    out = []
    if reproduction.kind == "reproducibility":
        out.append(
            Figure(
                "reproduce-order",
                "Per-topic KTU and RBO",
                "Document order per topic: 1 is the same ordering.",
                "reproduce-order",
                (reproduction,),
            )
        )
    out.append(
        Figure(
            "reproduce-effects",
            "ER against ΔRI",
            "Overall effects per metric: the ideal reproduction is at (0, 1).",
            "reproduce-effects",
            (reproduction,),
        )
    )
    return out
