"""Significance marks and the words that explain them, shared by every table format.

``comparisons`` here are the compare step's ``Comparison`` objects and ``compare`` the settings that
made them (``Compare``); this module reads their attributes and imports neither.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from irspec.frozen import frozen

if TYPE_CHECKING:
    from irspec.evaluation.evaluated import Evaluated

__all__ = [
    "CORRECTION_NAMES",
    "TEST_NAMES",
    "WON_TIED_LOST",
    "Marks",
    "Method",
    "direction",
    "letters",
    "letters_text",
    "method_parts",
    "method_text",
    "query_count",
    "significance_marks",
]


def direction(metric: Any) -> int:
    """+1 when a higher value of ``metric`` is better, -1 when a lower one is, 0 when neither is
    (:attr:`~irspec.spec.definitions.Metric.better`; higher for anything else)."""
    return {"higher": 1, "lower": -1, "neither": 0}[getattr(metric, "better", "higher")]


def letters(n: int) -> list[str]:
    """``a, b, ..., z, aa, ab, ...``: the letters naming ``n`` runs in tables without a baseline."""
    out = []
    for i in range(n):
        s, i = "", i + 1
        while i:
            i, r = divmod(i - 1, 26)
            s = chr(ord("a") + r) + s
        out.append(s)
    return out


@frozen
class Marks:
    """Which run is significantly better than which, per ``(run, metric)`` cell of a results table.

    With a ``baseline``, ``cells`` holds ``"better"`` or ``"worse"`` (than the baseline). Without one,
    every run has a letter (``letter``) and ``cells`` holds the letters of the runs it is significantly
    better than, in run order. Cells without a significant difference are absent. With several
    ``baselines`` (each run compared with each of them), runs are lettered in the same way: a letter
    after a value names a run it is significantly better than, so that a table stays one mark per
    cell whatever the number of baselines, and the legend names the baselines' letters.
    """

    baseline: str | None
    letter: dict[str, str]
    cells: dict[tuple[str, str], str]
    baselines: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.baseline is not None or bool(self.letter)


def significance_marks(results: Sequence[Evaluated], comparisons: Sequence[Any], compare: Any) -> Marks:
    """The marks of a results table: from the significant ``comparisons``, each on the side its test's
    evidence is on (``direction``: a sign test's wins, not the mean difference), in the metrics'
    direction."""
    if compare is None:
        return Marks(None, {}, {})
    ways = {str(m): direction(m) for res in results for m in res.metrics}
    cells: dict[tuple[str, str], str] = {}
    if compare.baseline is not None:
        for c in comparisons:
            way = ways.get(c.metric, 1) * c.direction
            if c.significant and way:
                cells[(c.a, c.metric)] = "better" if way > 0 else "worse"
        return Marks(compare.baseline, {}, cells)
    names = [r.run_name for r in results if any(r.run_name in (c.a, c.b) for c in comparisons)]
    names = names or [r.run_name for r in results]
    letter = dict(zip(names, letters(len(names)), strict=True))
    beaten: dict[tuple[str, str], set[str]] = {}
    for c in comparisons:
        way = ways.get(c.metric, 1) * c.direction
        if c.significant and way and c.a in letter and c.b in letter:
            winner, loser = (c.a, c.b) if way > 0 else (c.b, c.a)
            beaten.setdefault((winner, c.metric), set()).add(letter[loser])
    order = list(letter.values())
    several = tuple(getattr(compare, "baselines", ()))
    return Marks(None, letter, {k: "".join(sorted(v, key=order.index)) for k, v in beaten.items()}, several)


def letters_text(letter: dict[str, str], baselines: Sequence[str], start: str = "letters") -> str:
    """What superscript letters mean, in words: ``start`` (``"letters"``) then "significantly better
    than the run with that letter", and with several ``baselines`` which runs were compared with which."""
    what = f"{start}: significantly better than the run with that letter"
    if len(baselines) > 1:
        named = [f"{b} ({letter[b]})" if b in letter else b for b in baselines]
        what += f"; every run compared with each baseline, {', '.join(named[:-1])} and {named[-1]}"
    return what


WON_TIED_LOST = (
    "W/T/L = queries won, tied, lost in the metric's direction (lower wins for fall-out, search length)"
)
"""What a comparisons table's W/T/L column counts, as every legend and caption says it (the compare step
counts wins in the metric's direction: ``Comparison.wins``)."""

TEST_NAMES = {
    "t": "paired t-test",
    "randomization": "sign-flip randomization test",
    "bootstrap": "paired bootstrap test",
    "wilcoxon": "Wilcoxon signed-rank test, whose null is symmetry around 0, not a zero mean",
    "sign": "sign test, whose null is P(a>b) = P(a<b), not a zero mean",
    "tukey": "paired Tukey HSD, two-way ANOVA of runs x queries",
    "randomized-tukey": "randomised Tukey HSD of Carterette (2012)",
}
"""Each significance test in words, as legends and captions name it."""

CORRECTION_NAMES = {
    "none": "no correction",
    "bonferroni": "Bonferroni correction",
    "holm": "Holm correction",
    "bh": "Benjamini-Hochberg correction",
    "by": "Benjamini-Yekutieli correction",
}
"""Each multiple-comparison correction in words."""

_TUKEY_TESTS = ("tukey", "randomized-tukey")


def query_count(results: Sequence[Evaluated], comparisons: Sequence[Any] = ()) -> str:
    """``"50 queries"`` (or ``"48-50 queries"``): those compared, else those evaluated (by the results with
    the first result's metrics: the runs, not a log reported beside them)."""
    ns = sorted(
        {c.n for c in comparisons} or {len(r.query_ids) for r in results if r.metrics == results[0].metrics}
    )
    if not ns:
        return "no queries"
    if len(ns) == 1:
        return f"{ns[0]} quer{'y' if ns[0] == 1 else 'ies'}"
    return f"{ns[0]}-{ns[-1]} queries"


class Method(NamedTuple):
    """How runs were compared, in words: the test, the correction and its family, alpha, and the
    number of queries compared (as :func:`query_count` says it)."""

    test: str
    correction: str
    alpha: float
    queries: str

    def text(self) -> str:
        """All four in one line, as legends say it."""
        return f"{self.test}; {self.correction}; alpha {self.alpha:g}; {self.queries}"


def method_parts(results: Sequence[Evaluated], comparisons: Sequence[Any], compare: Any) -> Method:
    """The test, the correction and its family, alpha, and the number of queries, in words."""
    test = TEST_NAMES.get(compare.test, compare.test)
    if compare.test in ("randomization", "bootstrap", "randomized-tukey"):
        if comparisons and all(c.exact for c in comparisons):
            test += ", exact enumeration"
        else:
            what = "resamples" if compare.test == "bootstrap" else "permutations"
            test += f", {compare.permutations} {what}, seed {compare.seed}"
    compared = {n for c in comparisons for n in (c.a, c.b)} or {r.run_name for r in results}
    metrics = {c.metric for c in comparisons} or {str(m) for m in results[0].metrics}
    correction_name = CORRECTION_NAMES.get(compare.correction, compare.correction)
    if compare.test in _TUKEY_TESTS:
        n_runs = len(compared)
        correction = f"adjusted over all {n_runs * (n_runs - 1) // 2} pairs of runs of each metric"
    elif compare.family == "all":
        n = len(comparisons)
        correction = f"{correction_name} over all {n} comparison{'s' if n != 1 else ''}"
    else:
        per = len(comparisons) // max(1, len(metrics))
        correction = f"{correction_name} over the {per} comparison{'s' if per != 1 else ''} of each metric"
    several = len(getattr(compare, "baselines", ())) > 1
    if several and compare.test not in _TUKEY_TESTS:
        # the family is the same words for one baseline or several; say that it spans the baselines
        correction += f", across the {len(compare.baselines)} baselines"
    return Method(test, correction, compare.alpha, query_count(results, comparisons))


def method_text(results: Sequence[Evaluated], comparisons: Sequence[Any], compare: Any) -> str:
    """The test, correction and family, alpha and number of queries in one line, as legends say it."""
    return method_parts(results, comparisons, compare).text()
