"""Several sets of judgments: how far the conclusions drawn from one set hold under another.

>>> found = irspec.agreement({"human": "qrels.txt", "llm": "qrels.llm.txt"}, runs, "nDCG@10")  # doctest: +SKIP
>>> print(found)                       # the agreement section of a report                     # doctest: +SKIP
>>> found.to_frame("polars", table="swaps")                                                    # doctest: +SKIP

For every pair of sets ``(a, b)`` (in the order given) and every compared metric, the runs' means
under each set rank the runs; :class:`RankingAgreement` gives Kendall's τ-b and τ_AP both ways (``a``
as the reference, ``b``'s ranking read from its top; and the reverse) and their mean, and every pair of
runs the two rankings order differently is a :class:`Swap`, marked with whether the difference is
significant under each set (the compare step's own comparisons, :mod:`irspec.experiment.compare`; a pair the
compare settings did not compare, against a baseline say, is marked unknown). :class:`LabelAgreement`
compares the labels of the query-document pairs both sets judged; :class:`SignificanceChange` lists the
comparisons significant under one set and not the other. The statistics are
:mod:`irspec.stats.concordance`'s; this module pairs runs, metrics and judgments, and builds the report
tables (:mod:`irspec.report`'s model), so every format renders them.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from irspec.stats import concordance
from irspec import report as fmt
from irspec.experiment.records import Compare, Comparison
from irspec.experiment.compare import metrics_to_compare, compare_results
from irspec.data import Qrels, read_qrels
from irspec.evaluation.result import Result
from irspec.errors import EvaluationError
from irspec.data.frames import check_backend, make_frame
from irspec.evaluation.results import evaluate
from irspec.report.model import Block, Cell, Column, Row, p_text

__all__ = [
    "Agreement",
    "RankingAgreement",
    "Swap",
    "LabelAgreement",
    "SignificanceChange",
    "agreement",
    "agreement_of",
    "combine",
    "COMBINED_FORMATS",
]

TABLES = ("rankings", "swaps", "labels", "significance", "means")
"""The tables of an :class:`Agreement` (:meth:`Agreement.to_frame`'s ``table``)."""


def _num(value: float) -> float | None:
    """NaN (undefined) as ``None``, as every record of irspec says it."""
    return None if value is None or math.isnan(value) else float(value)


@dataclass(frozen=True)
class RankingAgreement:
    """How the rankings of the runs by ``metric`` under sets ``a`` and ``b`` agree, over ``systems`` runs.

    ``kendall_tau`` is τ-b; ``tau_ap_a`` is τ_AP with ``a``'s ranking the reference (``b``'s ranking
    read from its top: does ``b`` get ``a``'s top runs right?), ``tau_ap_b`` the reverse and
    ``tau_ap_mean`` their mean. τ_AP is undefined (``None``) when either ranking has tied means, and
    every value is when fewer than two runs are ranked; ``swaps`` counts the pairs ordered differently.
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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class LabelAgreement:
    """How sets ``a`` and ``b`` label the ``common`` query-document pairs both judged (``only_a`` and
    ``only_b`` were judged by one set only and are not compared).

    ``agreement`` is the proportion of pairs with the same label; ``kappa`` Cohen's κ on the labels as
    categories, ``kappa_quadratic`` the quadratic-weighted κ on the grades, ``alpha_ordinal``
    Krippendorff's ordinal α; ``binary_agreement`` and ``binary_kappa`` the same on relevant or not
    (``label >= relevance_level``). Negative labels are a grade of their own below 0 (not clipped).
    ``labels`` and ``confusion`` are the confusion matrix: ``confusion[i][j]`` pairs labelled
    ``labels[i]`` by ``a`` and ``labels[j]`` by ``b``. Undefined values (no common pairs, one label
    only) are ``None``.
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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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
        kind = {"rankings": RankingAgreement, "swaps": Swap, "labels": LabelAgreement, "significance": SignificanceChange}[table]
        fields = [f for f in dataclasses.fields(kind) if f.name not in ("labels", "confusion")]
        records = getattr(self, table)
        columns = {f.name: [getattr(r, f.name) for r in records] for f in fields}
        return make_frame(columns, {f.name: str(f.type).split(" | ")[0] for f in fields}, backend)

    def sections(self, *, decimals: int = 4) -> list[tuple[str, str, Block]]:
        """The agreement as titled tables of the report model, ``(heading, description, block)``: what
        every format renders."""
        return _sections(self, decimals)

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


COMBINED_FORMATS = ("table", "json", "markdown", "latex")
"""The text formats :func:`combine` joins: one output holding every set's results and the agreement."""


def combine(texts: Mapping[str, str], found: Agreement, fmt: str, *, decimals: int = 4) -> str:
    """One output of several sets of judgments: each set's results rendered in ``fmt`` (``texts``,
    ``{set: text}``) under a heading naming the set, then the agreement section (``found``). For
    ``json``, ``{"qrels_sets": {set: its document}, "agreement": found.as_dict()}``."""
    if fmt == "json":
        doc = {"qrels_sets": {name: json.loads(text) for name, text in texts.items()}, "agreement": found.as_dict()}
        return json.dumps(doc, indent=2, allow_nan=False) + "\n"
    if fmt not in COMBINED_FORMATS:
        raise EvaluationError(f"several sets of judgments are reported in the {', '.join(COMBINED_FORMATS)} formats, not {fmt}")
    heading = {"table": "== qrels: {} ==\n", "markdown": "## qrels: {}\n\n", "latex": "% qrels: {}\n"}[fmt]
    parts = [heading.format(name) + text for name, text in texts.items()]
    if fmt == "table":
        tail = "== agreement ==\n" + found.to_table(decimals=decimals)
    elif fmt == "markdown":
        tail = "## Agreement between the sets of judgments\n" + found.to_markdown(decimals=decimals)
    else:
        tail = "% agreement between the sets of judgments\n" + found.to_latex(decimals=decimals)
    return "\n".join([*parts, tail])


def agreement(
    qrels: Mapping[str, Any],
    runs: Any,
    metrics: Any,
    *,
    relevance_level: int = 1,
    baseline: str | None = None,
    test: str = "t",
    correction: str | None = None,
    alpha: float = 0.05,
    permutations: int = 10_000,
    seed: int = 42,
    **options: Any,
) -> Agreement:
    """Evaluate ``runs`` against each set of ``qrels`` (``{name: qrels}``, at least two, anything
    :func:`irspec.evaluate` reads), compare them under each set, and measure the agreement.

    ``runs`` and ``metrics`` are :func:`irspec.evaluate`'s (at least two runs); ``relevance_level`` and
    the other ``options`` (``depth``, ``missing_queries``, ...) too. The comparisons that decide which
    swaps are significant are :func:`irspec.compare`'s with ``baseline``, ``test``, ``correction``,
    ``alpha``, ``permutations`` and ``seed`` (default: every pair, paired t-test, Holm).
    """
    sets = _named_qrels(qrels)
    settings = Compare(baseline=baseline, test=test, permutations=permutations, seed=seed, correction=correction, alpha=alpha)
    results: dict[str, list[Result]] = {}
    for name, q in sets.items():
        found = evaluate(q, runs, metrics, relevance_level=relevance_level, **options)
        results[name] = list(found.values()) if isinstance(found, Mapping) else [found]
    return agreement_of(results, sets, settings, relevance_level=relevance_level)


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
        raise EvaluationError("agreement needs the results and the qrels of the same two or more sets of judgments")
    runs = [r.run_name for r in results[names[0]]]
    if len(runs) < 2:
        raise EvaluationError(f"agreement between rankings needs at least 2 runs, got {len(runs)}")
    for name in names[1:]:
        if [r.run_name for r in results[name]] != runs:
            raise EvaluationError(f"set {name!r} has other runs than set {names[0]!r}; evaluate the same runs under every set")
    metrics = metrics_to_compare(results[names[0]], None)
    if comparisons is None and compare is not None:
        comparisons = {n: compare_results(results[n], compare)[0] for n in names}
    marks = {n: {(c.metric, c.a, c.b): c for c in (comparisons or {}).get(n, ())} for n in names}
    means = {n: {r.run_name: r.aggregate() for r in results[n]} for n in names}
    rankings, swaps, changes, notes = [], [], [], []
    for a, b in itertools.combinations(names, 2):
        for metric in map(str, metrics):
            x = np.array([means[a][run][metric] for run in runs])
            y = np.array([means[b][run][metric] for run in runs])
            if not (np.isfinite(x).all() and np.isfinite(y).all()):
                notes.append(f"{metric}: a run's mean is undefined under {a} or {b}; its rankings are not compared")
                continue
            rankings.append(_ranking(metric, a, b, x, y, notes))
            for i, j in concordance.swapped_pairs(x, y):
                sig = [_significant(marks[s], metric, runs[i], runs[j]) for s in (a, b)]
                swaps.append(Swap(metric, a, b, runs[i], runs[j], float(x[i]), float(x[j]), float(y[i]), float(y[j]), *sig))
        changes.extend(_changes(marks[a], marks[b], a, b))
    labels = [_labels(a, b, qrels[a], qrels[b], relevance_level, notes) for a, b in itertools.combinations(names, 2)]
    table = tuple((n, run, m, float(means[n][run][m])) for n in names for run in runs for m in map(str, metrics))
    return Agreement(tuple(names), tuple(rankings), tuple(swaps), tuple(labels), tuple(changes), compare, table, tuple(notes))


def _ranking(metric: str, a: str, b: str, x: np.ndarray, y: np.ndarray, notes: list[str]) -> RankingAgreement:
    forward, backward = concordance.tau_ap(x, y), concordance.tau_ap(y, x)
    if len(x) > 1 and math.isnan(forward):
        notes.append(f"{metric}: tau_AP {a} vs {b} undefined: tied means (tau_AP is defined for rankings without ties)")
    return RankingAgreement(
        metric,
        a,
        b,
        len(x),
        _num(concordance.kendall_tau_b(x, y)),
        _num(forward),
        _num(backward),
        _num((forward + backward) / 2),
        len(concordance.swapped_pairs(x, y)),
    )


def _significant(found: Mapping[tuple[str, str, str], Comparison], metric: str, one: str, two: str) -> bool | None:
    c = found.get((metric, one, two)) or found.get((metric, two, one))
    return None if c is None else c.significant


def _changes(
    found_a: Mapping[tuple[str, str, str], Comparison], found_b: Mapping[tuple[str, str, str], Comparison], a: str, b: str
) -> list[SignificanceChange]:
    out = []
    for key, ca in found_a.items():
        cb = found_b.get(key)
        if cb is not None and ca.significant != cb.significant:
            out.append(
                SignificanceChange(
                    ca.metric, ca.a, ca.b, a, b, ca.significant, cb.significant,
                    ca.p_adjusted, cb.p_adjusted, ca.mean_difference, cb.mean_difference,
                )
            )
    return out


def _labels(a: str, b: str, qa: Qrels, qb: Qrels, level: int, notes: list[str]) -> LabelAgreement:
    """The label agreement of sets ``a`` and ``b`` on the query-document pairs both judged."""
    joined = qa.frame.select("query", "docno", "label").join(
        qb.frame.select("query", "docno", "label"), on=["query", "docno"], how="inner", suffix="_b"
    )
    x = joined["label"].to_numpy().astype(np.int64)
    y = joined["label_b"].to_numpy().astype(np.int64)
    common = len(x)
    if common == 0:
        notes.append(f"labels {a} vs {b}: no query-document pair is judged in both sets; label agreement is undefined")
    labels, counts = concordance.confusion_matrix(x, y)
    bx, by = concordance.binary(x, level), concordance.binary(y, level)
    return LabelAgreement(
        a,
        b,
        common,
        qa.frame.height - common,
        qb.frame.height - common,
        _num(float(np.mean(x == y)) if common else math.nan),
        _num(concordance.cohen_kappa(x, y)),
        _num(concordance.cohen_kappa(x, y, "quadratic")),
        _num(concordance.krippendorff_alpha_ordinal(x, y)),
        _num(float(np.mean(bx == by)) if common else math.nan),
        _num(concordance.cohen_kappa(bx, by)),
        level,
        tuple(labels),
        tuple(tuple(int(v) for v in row) for row in counts),
    )


# --------------------------------------------------------------------------------------------------
# The report tables


def _text(value: float | None, decimals: int) -> str:
    return "-" if value is None else f"{value:.{decimals}f}"


def _cell(value: float | None, decimals: int) -> Cell:
    return Cell(_text(value, decimals), value)


def _mark(value: bool | None) -> Cell:
    return Cell("?" if value is None else "yes" if value else "no", value)


def _block(columns: Sequence[tuple[str, str, str]], rows: Sequence[Sequence[Cell]]) -> Block:
    return Block(tuple(Column(*c) for c in columns), tuple(Row(tuple(r)) for r in rows))


def _sections(found: Agreement, decimals: int) -> list[tuple[str, str, Block]]:
    method = found.compare.as_dict() if found.compare is not None else None
    how = (
        f"significance: {method['test']} test, {method['correction'] or 'default'} correction, alpha {method['alpha']:g}"
        if method
        else "significance: not compared"
    )
    out = [
        (
            "Agreement between system rankings",
            "tau = Kendall's tau-b; tau_AP a = Yilmaz et al.'s AP correlation with set a's ranking the reference "
            "(b's ranking read from its top), tau_AP b the reverse, mean their mean; undefined (-) with tied means.",
            _block(
                [("metric", "Metric", "left"), ("a", "Set a", "left"), ("b", "Set b", "left"), ("runs", "Runs", "right"),
                 ("tau", "Kendall's τ", "right"), ("tau_AP a", "τ_AP (a ref.)", "right"), ("tau_AP b", "τ_AP (b ref.)", "right"),
                 ("tau_AP mean", "τ_AP mean", "right"), ("swaps", "Swaps", "right")],
                [
                    [Cell(r.metric), Cell(r.a), Cell(r.b), Cell(str(r.systems), r.systems), _cell(r.kendall_tau, decimals),
                     _cell(r.tau_ap_a, decimals), _cell(r.tau_ap_b, decimals), _cell(r.tau_ap_mean, decimals),
                     Cell(str(r.swaps), r.swaps)]
                    for r in found.rankings
                ],
            ),
        )
    ]
    if found.swaps:
        out.append(
            (
                "Swapped pairs of runs",
                f"Runs ordered one way under set a and the other under set b; sig a/b: significant under each set "
                f"({how}; ? = not compared).",
                _block(
                    [("metric", "Metric", "left"), ("a", "Set a", "left"), ("b", "Set b", "left"), ("run 1", "Run 1", "left"),
                     ("run 2", "Run 2", "left"), ("1 (a)", "Run 1 (a)", "right"), ("2 (a)", "Run 2 (a)", "right"),
                     ("1 (b)", "Run 1 (b)", "right"), ("2 (b)", "Run 2 (b)", "right"), ("sig a", "Sig. a", "center"),
                     ("sig b", "Sig. b", "center")],
                    [
                        [Cell(s.metric), Cell(s.a), Cell(s.b), Cell(s.run_1), Cell(s.run_2),
                         *(_cell(v, decimals) for v in (s.mean_1_a, s.mean_2_a, s.mean_1_b, s.mean_2_b)),
                         _mark(s.significant_a), _mark(s.significant_b)]
                        for s in found.swaps
                    ],
                ),
            )
        )
    out.append(
        (
            "Agreement between labels",
            "On the query-document pairs both sets judged: agree = same label; kappa = Cohen's kappa; kappa q = "
            "quadratic-weighted kappa on the grades; alpha = Krippendorff's ordinal alpha; bin = the same on relevant "
            "(label >= the relevance level) or not. Negative labels are a grade of their own.",
            _block(
                [("a", "Set a", "left"), ("b", "Set b", "left"), ("common", "Common", "right"), ("only a", "Only a", "right"),
                 ("only b", "Only b", "right"), ("agree", "Agree", "right"), ("kappa", "κ", "right"),
                 ("kappa q", "κ quadratic", "right"), ("alpha", "α ordinal", "right"), ("bin agree", "Binary agree", "right"),
                 ("bin kappa", "Binary κ", "right")],
                [
                    [Cell(x.a), Cell(x.b), Cell(str(x.common), x.common), Cell(str(x.only_a), x.only_a),
                     Cell(str(x.only_b), x.only_b), _cell(x.agreement, decimals), _cell(x.kappa, decimals),
                     _cell(x.kappa_quadratic, decimals), _cell(x.alpha_ordinal, decimals),
                     _cell(x.binary_agreement, decimals), _cell(x.binary_kappa, decimals)]
                    for x in found.labels
                ],
            ),
        )
    )
    for x in found.labels:
        if x.labels:
            out.append(
                (
                    f"Labels: {x.a} (rows) against {x.b} (columns)",
                    "Counts of the commonly judged query-document pairs.",
                    _block(
                        [(f"{x.a} \\ {x.b}", f"{x.a} \\ {x.b}", "left"), *((str(v), str(v), "right") for v in x.labels)],
                        [[Cell(str(v)), *(Cell(str(n), n) for n in row)] for v, row in zip(x.labels, x.confusion)],
                    ),
                )
            )
    out.append(
        (
            "Significance that does not hold",
            f"Comparisons significant under one set and not under the other ({how}).",
            _block(
                [("metric", "Metric", "left"), ("run a", "Run a", "left"), ("run b", "Run b", "left"), ("a", "Set a", "left"),
                 ("b", "Set b", "left"), ("sig a", "Sig. a", "center"), ("sig b", "Sig. b", "center"),
                 ("p adj a", "p adj. a", "right"), ("p adj b", "p adj. b", "right")],
                [
                    [Cell(s.metric), Cell(s.run_a), Cell(s.run_b), Cell(s.a), Cell(s.b), _mark(s.significant_a),
                     _mark(s.significant_b), Cell(p_text(s.p_adjusted_a), s.p_adjusted_a),
                     Cell(p_text(s.p_adjusted_b), s.p_adjusted_b)]
                    for s in found.significance
                ],
            ),
        )
    )
    return out

