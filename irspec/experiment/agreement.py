"""Several sets of judgments: how far the conclusions drawn from one set hold under another.

>>> found = irspec.agreement({"human": "qrels.txt", "llm": "qrels.llm.txt"}, runs, "nDCG@10")  # doctest: +SKIP
>>> print(found)                       # the agreement section of a report                     # doctest: +SKIP
>>> found.to_frame("polars", table="swaps")                                                    # doctest: +SKIP

For every pair of sets ``(a, b)`` (in the order given) and every compared metric, the runs' means
under each set rank the runs; :class:`RankingAgreement` gives Kendall's τ-b and τ_AP both ways (``a``
as the reference, ``b``'s ranking read from its best run down, the highest mean or, for a metric where
lower is better, the lowest; and the reverse) and their mean, and every pair of
runs the two rankings order differently is a :class:`Swap`, marked with whether the difference is
significant under each set (the compare step's own comparisons, :mod:`irspec.experiment.compare`; a pair the
compare settings did not compare, against a baseline say, is marked unknown). :class:`LabelAgreement`
compares the labels of the query-document pairs both sets judged; :class:`SignificanceChange` lists the
comparisons significant under one set and not the other. The statistics are
:mod:`irspec.stats.concordance`'s; this module pairs runs, metrics and judgments. The tables are the
report layer's (:func:`irspec.report.agreement.agreement_sections`, beside power's), which reads an
:class:`Agreement` by its attributes; this module renders through it, so it sits above report.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from irspec import report as fmt
from irspec.data import Qrels, read_qrels
from irspec.data.frames import check_backend, make_frame
from irspec.errors import EvaluationError, suggest
from irspec.evaluation import result_set
from irspec.evaluation.result import Result
from irspec.evaluation.systems import evaluate
from irspec.experiment.compare import compare_results, compare_settings, metrics_to_compare
from irspec.experiment.records import Compare, Comparison
from irspec.frozen import frozen
from irspec.report.agreement import agreement_sections
from irspec.report.marks import direction
from irspec.report.model import Block
from irspec.stats import concordance

__all__ = [
    "CONFUSION_LIMIT",
    "Agreement",
    "LabelAgreement",
    "RankingAgreement",
    "SignificanceChange",
    "Swap",
    "agreement",
    "agreement_of",
]

TABLES = ("rankings", "swaps", "labels", "significance", "means")
"""The tables of an :class:`Agreement` (:meth:`Agreement.to_frame`'s ``table``)."""


def _num(value: float) -> float | None:
    """NaN (undefined) as ``None``, as every record of irspec says it."""
    return None if value is None or math.isnan(value) else float(value)


@frozen
class RankingAgreement:
    """How the rankings of the runs by ``metric`` under sets ``a`` and ``b`` agree, over ``systems`` runs.

    ``kendall_tau`` is τ-b; ``tau_ap_a`` is τ_AP with ``a``'s ranking the reference (``b``'s ranking
    read from its best run down: does ``b`` get ``a``'s best runs right? The best is the highest mean,
    or the lowest for a metric where lower is better), ``tau_ap_b`` the reverse and ``tau_ap_mean``
    their mean. Means within :data:`~irspec.stats.concordance.TIE_TOLERANCE` (1e-12) of each other
    are tied: τ-b counts them as ties, no swap is listed, and τ_AP is undefined (``None``) when either
    ranking has tied means; every value is when fewer than two runs are ranked. ``swaps`` counts the
    pairs ordered differently. The :class:`Agreement`'s notes say why a value is undefined.
    """

    metric: str
    a: str
    b: str
    systems: int
    kendall_tau: float | None
    tau_ap_a: float | None
    tau_ap_b: float | None
    tau_ap_mean: float | None
    swaps: int


@frozen
class Swap:
    """Two runs ``run_1`` and ``run_2`` ordered one way by their means of ``metric`` under set ``a``
    and the other way under ``b``; ``significant_a``/``significant_b``: whether their comparison is
    significant under each set (``None``: the compare settings did not compare them)."""

    metric: str
    a: str
    b: str
    run_1: str
    run_2: str
    mean_1_a: float
    mean_2_a: float
    mean_1_b: float
    mean_2_b: float
    significant_a: bool | None
    significant_b: bool | None


@frozen
class LabelAgreement:
    """How sets ``a`` and ``b`` label the ``common`` query-document pairs both judged (``only_a`` and
    ``only_b`` were judged by one set only and are not compared).

    ``agreement`` is the proportion of pairs with the same label; ``kappa`` Cohen's κ on the labels as
    categories, ``kappa_quadratic`` the quadratic-weighted κ on the grades, ``alpha_ordinal``
    Krippendorff's ordinal α; ``binary_agreement`` and ``binary_kappa`` the same on relevant or not
    (``label >= relevance_level``). Negative labels are a grade of their own below 0 (not clipped).
    ``labels`` and ``confusion`` are the confusion matrix: ``confusion[i][j]`` pairs labelled
    ``labels[i]`` by ``a`` and ``labels[j]`` by ``b`` (both empty, with a note, beyond
    :data:`CONFUSION_LIMIT` distinct labels). Undefined values (no common pairs, one label only) are
    ``None``, and the :class:`Agreement`'s notes say why.
    """

    a: str
    b: str
    common: int
    only_a: int
    only_b: int
    agreement: float | None
    kappa: float | None
    kappa_quadratic: float | None
    alpha_ordinal: float | None
    binary_agreement: float | None
    binary_kappa: float | None
    relevance_level: int
    labels: tuple[int, ...]
    confusion: tuple[tuple[int, ...], ...]


@frozen
class SignificanceChange:
    """A comparison of ``run_a`` with ``run_b`` on ``metric`` that is significant under one of the sets
    ``a`` and ``b`` and not under the other; the adjusted p-values and mean differences under each."""

    metric: str
    run_a: str
    run_b: str
    a: str
    b: str
    significant_a: bool
    significant_b: bool
    p_adjusted_a: float
    p_adjusted_b: float
    mean_difference_a: float
    mean_difference_b: float


@frozen
class Agreement:
    """The agreement between several sets of judgments (see the module docstring): ``sets`` (their
    names), ``rankings``, ``swaps``, ``labels``, ``significance``, the ``compare`` settings that decided
    significance, ``means`` (``(set, run, metric, mean)``, what the scatter plots draw) and ``notes``.

    ``str()`` is the text section of a report; :meth:`as_dict`/:meth:`to_json` the JSON,
    :meth:`to_frame` a data frame of one table, :meth:`to_markdown`, :meth:`to_latex` and the notebook's
    HTML the other formats, all from :meth:`sections`.
    """

    sets: tuple[str, ...]
    rankings: tuple[RankingAgreement, ...]
    swaps: tuple[Swap, ...]
    labels: tuple[LabelAgreement, ...]
    significance: tuple[SignificanceChange, ...]
    compare: Compare | None
    means: tuple[tuple[str, str, str, float], ...]
    notes: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.to_table()

    def as_dict(self) -> dict[str, Any]:
        """Plain data: the sets, the compare settings, each table as a list of records, the notes."""
        return {
            "sets": list(self.sets),
            "compare": self.compare.as_dict() if self.compare is not None else None,
            "rankings": [dataclasses.asdict(r) for r in self.rankings],
            "swaps": [dataclasses.asdict(s) for s in self.swaps],
            "labels": [dataclasses.asdict(x) for x in self.labels],
            "significance": [dataclasses.asdict(s) for s in self.significance],
            "means": [{"set": s, "run": r, "metric": m, "mean": _num(v)} for s, r, m, v in self.means],
            "notes": list(self.notes),
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """:meth:`as_dict` as JSON text (undefined numbers are ``null``)."""
        return json.dumps(self.as_dict(), indent=indent, allow_nan=False) + "\n"

    def to_frame(self, backend: str = "polars", *, table: str = "rankings") -> Any:
        """One ``table`` (``rankings``, ``swaps``, ``labels``, ``significance`` or ``means``) as a long
        data frame, a row per record (the labels' confusion matrix left out: see :meth:`as_dict`)."""
        check_backend(backend)
        if table not in TABLES:
            raise EvaluationError(f"to_frame: table must be one of {', '.join(TABLES)}, not {table!r}")
        if table == "means":
            rows = [{"set": s, "run": r, "metric": m, "mean": _num(v)} for s, r, m, v in self.means]
            types = {"set": "str", "run": "str", "metric": "str", "mean": "float"}
            return make_frame({k: [row[k] for row in rows] for k in types}, types, backend)
        kind = {
            "rankings": RankingAgreement,
            "swaps": Swap,
            "labels": LabelAgreement,
            "significance": SignificanceChange,
        }[table]
        fields = [f for f in dataclasses.fields(kind) if f.name not in ("labels", "confusion")]
        records = getattr(self, table)
        columns = {f.name: [getattr(r, f.name) for r in records] for f in fields}
        return make_frame(columns, {f.name: str(f.type).split(" | ")[0] for f in fields}, backend)

    def sections(self, *, decimals: int = 4) -> list[tuple[str, str, Block]]:
        """The agreement as titled tables of the report model, ``(heading, description, block)``: what
        every format renders (:func:`irspec.report.agreement.agreement_sections`)."""
        return agreement_sections(self, decimals=decimals)

    def to_table(self, *, decimals: int = 4) -> str:
        """The agreement section as aligned text."""
        return fmt.text.plain_tables(self.sections(decimals=decimals), notes=self.notes)

    def to_markdown(self, *, decimals: int = 4) -> str:
        """The agreement section as GitHub-flavoured Markdown."""
        return fmt.markdown.plain_tables(self.sections(decimals=decimals), notes=self.notes)

    def to_latex(self, *, decimals: int = 4) -> str:
        """The agreement section as LaTeX (booktabs) tables."""
        return fmt.latex.plain_tables(self.sections(decimals=decimals), notes=self.notes)

    def _repr_html_(self) -> str:
        return fmt.html.plain_tables(self.sections(), notes=self.notes)

    def _repr_markdown_(self) -> str:
        return self.to_markdown()


def agreement(
    qrels: Mapping[str, Any],
    runs: Any,
    metrics: Any,
    *,
    relevance_level: int = 1,
    baseline: str | None = None,
    baselines: Sequence[str] = (),
    test: str = "t",
    correction: str | None = None,
    alpha: float = 0.05,
    family: str = "per-metric",
    permutations: int = 10_000,
    seed: int = 42,
    **options: Any,
) -> Agreement:
    """Evaluate ``runs`` against each set of ``qrels`` (``{name: qrels}``, at least two, anything
    :func:`irspec.evaluate` reads), compare them under each set, and measure the agreement.

    ``runs`` and ``metrics`` are :func:`irspec.evaluate`'s (at least two runs), systems of several runs
    included (``{"dense": ["s1.run", "s2.run"]}``, ranked by their means per topic); ``relevance_level``
    and the other ``options`` (``depth``, ``missing_queries``, ...) too, and any other keyword is an
    error naming it. The comparisons that decide which swaps are significant are
    :func:`irspec.compare`'s with ``baseline`` or ``baselines``, ``test``, ``correction``, ``alpha``,
    ``family``, ``permutations`` and ``seed`` (default: every pair, paired t-test, Holm).
    """
    _check_options(options)
    sets = _named_qrels(qrels)
    settings = compare_settings(
        baseline=baseline,
        test=test,
        permutations=permutations,
        seed=seed,
        correction=correction,
        alpha=alpha,
        family=family,
        baselines=baselines,
    )
    results: dict[str, list[Result]] = {}
    for name, q in sets.items():
        found = evaluate(q, runs, metrics, relevance_level=relevance_level, **options)
        results[name] = list(found.values()) if isinstance(found, Mapping) else [found]
    return agreement_of(results, sets, settings, relevance_level=relevance_level)


def _check_options(options: Mapping[str, Any]) -> None:
    """Every keyword of ``options`` is one of :func:`irspec.evaluate`'s, or an error naming it (a bare
    ``TypeError`` from deep inside the evaluation would not say which call it belongs to)."""

    def keywords(function: Any) -> list[str]:
        parameters = inspect.signature(function).parameters.values()
        return [p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]

    known = [k for k in keywords(result_set.evaluate) if k != "relevance_level"]
    own = keywords(agreement)  # relevance_level, then irspec.compare's
    for name in options:
        if name not in known:
            close = suggest(name, [*known, *own], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise EvaluationError(
                f"agreement: unknown keyword argument {name!r}{hint}; it takes irspec.evaluate's options "
                f"({', '.join(known)}), relevance_level and irspec.compare's {', '.join(own[1:])}"
            )


def _named_qrels(qrels: Any) -> dict[str, Qrels]:
    if not isinstance(qrels, Mapping) or len(qrels) < 2:
        raise EvaluationError("agreement needs a mapping {name: qrels} of at least two sets of judgments")
    out = {}
    for name, q in qrels.items():
        if not isinstance(name, str):
            raise EvaluationError(f"qrels set names must be strings, not {type(name).__name__}")
        out[name] = read_qrels(q)
    return out


def agreement_of(
    results: Mapping[str, Sequence[Result]],
    qrels: Mapping[str, Qrels],
    compare: Compare | None,
    *,
    comparisons: Mapping[str, Sequence[Comparison]] | None = None,
    relevance_level: int = 1,
) -> Agreement:
    """The agreement of results already evaluated: ``results`` ``{set: the runs' results}`` (the same
    runs, by name, under every set), ``qrels`` ``{set: Qrels}``; ``comparisons`` ``{set: the compare
    step's comparisons}`` made with ``compare`` (computed here with ``compare`` when not given; with
    ``compare`` ``None`` as well, no swap is marked significant or not)."""
    names = list(results)
    if len(names) < 2 or set(names) != set(qrels):
        raise EvaluationError(
            "agreement needs the results and the qrels of the same two or more sets of judgments"
        )
    runs = [r.run_name for r in results[names[0]]]
    if len(runs) < 2:
        raise EvaluationError(f"agreement between rankings needs at least 2 runs, got {len(runs)}")
    for name in names[1:]:
        if [r.run_name for r in results[name]] != runs:
            raise EvaluationError(
                f"set {name!r} has other runs than set {names[0]!r}; evaluate the same runs under every set"
            )
    metrics = _ranked_metrics(results, names)
    if comparisons is None and compare is not None:
        comparisons = {n: compare_results(results[n], compare)[0] for n in names}
    marks = {n: {(c.metric, c.a, c.b): c for c in (comparisons or {}).get(n, ())} for n in names}
    means = {n: {r.run_name: r.aggregate() for r in results[n]} for n in names}
    rankings, swaps, changes, notes = [], [], [], []
    unpaired = [str(m) for m in metrics if m.catalogue]
    if unpaired:
        notes.append(
            f"{', '.join(unpaired)}: catalogue-level, one value per run and none per user: the runs are "
            "ranked by it, but no swap of theirs is known to be significant or not (no pairs to test)"
        )
    for m in metrics:
        if direction(m) == 0:
            notes.append(
                f"{m}: neither a higher nor a lower value is better; tau_AP reads its rankings from the "
                "highest mean down"
            )
    for a, b in itertools.combinations(names, 2):
        for m in metrics:
            metric = str(m)
            x = np.array([means[a][run][metric] for run in runs])
            y = np.array([means[b][run][metric] for run in runs])
            if not (np.isfinite(x).all() and np.isfinite(y).all()):
                notes.append(
                    f"{metric}: a run's mean is undefined under {a} or {b}; its rankings are not compared"
                )
                continue
            rankings.append(_ranking(m, a, b, x, y, notes))
            for i, j in concordance.swapped_pairs(x, y):
                sig = [_significant(marks[s], metric, runs[i], runs[j]) for s in (a, b)]
                swaps.append(
                    Swap(
                        metric,
                        a,
                        b,
                        runs[i],
                        runs[j],
                        float(x[i]),
                        float(x[j]),
                        float(y[i]),
                        float(y[j]),
                        *sig,
                    )
                )
        changes.extend(_changes(marks[a], marks[b], a, b))
    labels = [
        _labels(a, b, qrels[a], qrels[b], relevance_level, notes) for a, b in itertools.combinations(names, 2)
    ]
    table = tuple(
        (n, run, m, float(means[n][run][m])) for n in names for run in runs for m in map(str, metrics)
    )
    return Agreement(
        tuple(names),
        tuple(rankings),
        tuple(swaps),
        tuple(labels),
        tuple(changes),
        compare,
        table,
        tuple(notes),
    )


def _ranked_metrics(results: Mapping[str, Sequence[Result]], names: Sequence[str]) -> tuple[Any, ...]:
    """The metrics whose rankings of the runs are compared: those the compare step tests, and the
    catalogue-level ones every run has under every set, whose one value per run ranks runs as a mean
    does (:meth:`Result.aggregate` gives it), in the first run's order."""
    tested = metrics_to_compare(results[names[0]], None)
    everywhere = [r.metrics for n in names for r in results[n]]
    return tuple(
        m
        for m in results[names[0]][0].metrics
        if m in tested or (m.catalogue and all(m in found for found in everywhere))
    )


def _ranking(metric: Any, a: str, b: str, x: np.ndarray, y: np.ndarray, notes: list[str]) -> RankingAgreement:
    """The agreement of the rankings of the runs by ``metric``'s means ``x`` under ``a`` and ``y`` under
    ``b``. τ_AP weighs the top of a ranking, the best runs: where lower is better (``better="lower"``), the
    lowest mean; τ-b and the swaps do not depend on the direction. Means within
    :data:`~irspec.stats.concordance.TIE_TOLERANCE` of each other are tied, in all three."""
    best_first = -1.0 if direction(metric) < 0 else 1.0
    forward = concordance.tau_ap(best_first * x, best_first * y)
    backward = concordance.tau_ap(best_first * y, best_first * x)
    tau = concordance.kendall_tau_b(x, y)
    if math.isnan(tau):
        constant = [s for s, v in ((a, x), (b, y)) if math.isnan(concordance.kendall_tau_b(v, v))]
        notes.append(
            f"{metric}: tau and tau_AP {a} vs {b} undefined: every run has the same mean under "
            f"{' and '.join(constant)} (a constant ranking orders no pair)"
        )
    elif math.isnan(forward):
        notes.append(
            f"{metric}: tau_AP {a} vs {b} undefined: tied means (tau_AP is defined for rankings without ties)"
        )
    return RankingAgreement(
        str(metric),
        a,
        b,
        len(x),
        _num(tau),
        _num(forward),
        _num(backward),
        _num((forward + backward) / 2),
        len(concordance.swapped_pairs(x, y)),
    )


def _significant(
    found: Mapping[tuple[str, str, str], Comparison], metric: str, one: str, two: str
) -> bool | None:
    c = found.get((metric, one, two)) or found.get((metric, two, one))
    return None if c is None else c.significant


def _changes(
    found_a: Mapping[tuple[str, str, str], Comparison],
    found_b: Mapping[tuple[str, str, str], Comparison],
    a: str,
    b: str,
) -> list[SignificanceChange]:
    out = []
    for key, ca in found_a.items():
        cb = found_b.get(key)
        if cb is not None and ca.significant != cb.significant:
            out.append(
                SignificanceChange(
                    ca.metric,
                    ca.a,
                    ca.b,
                    a,
                    b,
                    ca.significant,
                    cb.significant,
                    ca.p_adjusted,
                    cb.p_adjusted,
                    ca.mean_difference,
                    cb.mean_difference,
                )
            )
    return out


CONFUSION_LIMIT = 100
"""The most distinct labels whose confusion matrix a :class:`LabelAgreement` holds (a square of that
many rows and columns); with more, the statistics are computed all the same and a note says why the
matrix is left out."""


def _labels(a: str, b: str, qa: Qrels, qb: Qrels, level: int, notes: list[str]) -> LabelAgreement:
    """The label agreement of sets ``a`` and ``b`` on the query-document pairs both judged; ``notes``
    says why a statistic is undefined, and why a confusion matrix is left out."""
    joined = qa.frame.select("query", "docno", "label").join(
        qb.frame.select("query", "docno", "label"), on=["query", "docno"], how="inner", suffix="_b"
    )
    x = joined["label"].to_numpy().astype(np.int64)
    y = joined["label_b"].to_numpy().astype(np.int64)
    common = len(x)
    bx, by = concordance.binary(x, level), concordance.binary(y, level)
    kappa = concordance.cohen_kappa(x, y)
    binary_kappa = concordance.cohen_kappa(bx, by)
    seen = np.union1d(x, y)
    if common == 0:
        notes.append(
            f"labels {a} vs {b}: no query-document pair is judged in both sets; label agreement is undefined"
        )
    elif math.isnan(kappa):
        notes.append(
            f"labels {a} vs {b}: all {common} commonly judged pairs have label {int(seen[0])} in both sets; "
            "kappa, kappa q, alpha and bin kappa are undefined (with one label, chance alone explains the agreement)"
        )
    elif math.isnan(binary_kappa):
        which = f"relevant (label >= {level})" if bx[0] else f"not relevant (label < {level})"
        notes.append(
            f"labels {a} vs {b}: all {common} commonly judged pairs are {which} in both sets; bin kappa is "
            "undefined (chance alone explains the agreement)"
        )
    if len(seen) > CONFUSION_LIMIT:
        labels: list[int] = []
        confusion: tuple[tuple[int, ...], ...] = ()
        notes.append(
            f"labels {a} vs {b}: {len(seen)} distinct labels; their confusion matrix is left out "
            f"(it is shown for at most {CONFUSION_LIMIT})"
        )
    else:
        labels, counts = concordance.confusion_matrix(x, y)
        confusion = tuple(tuple(int(v) for v in row) for row in counts)
    return LabelAgreement(
        a,
        b,
        common,
        qa.frame.height - common,
        qb.frame.height - common,
        _num(float(np.mean(x == y)) if common else math.nan),
        _num(kappa),
        _num(concordance.cohen_kappa(x, y, "quadratic")),
        _num(concordance.krippendorff_alpha_ordinal(x, y)),
        _num(float(np.mean(bx == by)) if common else math.nan),
        _num(binary_kappa),
        level,
        tuple(labels),
        confusion,
    )
