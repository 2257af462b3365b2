"""The warnings' text: what a run's values rest on that the user may not expect, said in words.

Which queries a run answers (qrels queries it lacks, run queries the qrels lack, a run without
lines: :func:`coverage_notes`), a relevance level at which nothing is relevant
(:func:`level_warnings`), and how much of what a run shows in its top 10 is judged
(:func:`coverage_note`). The engine says them once per run, however many parts it was evaluated
in; Spark says the first two from its own counts of the queries and labels (:func:`missing_text`,
:func:`levels_without_relevant`), and not the third, which needs every query's top 10. Plain
strings: issuing them as warnings is :func:`irspec.evaluation.evaluate.issue_warnings`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from irspec.errors import EvaluationError
from irspec.evaluation.context import Options, relevance_level
from irspec.evaluation.index import QrelsIndex
from irspec.evaluation.means import aggregate_values
from irspec.spec.registry import Metric

__all__ = [
    "CoverageWarning",
    "coverage_note",
    "coverage_notes",
    "first_few",
    "level_warnings",
    "levels_without_relevant",
    "missing_text",
    "queries_text",
    "summarised",
]


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
        notes.append(
            f"{source}: {queries_text(len(extra))} not in the qrels ignored ({first_few(sorted(extra))})"
        )
    if missing and options.missing_queries == "error":
        raise EvaluationError(
            f"{source}: {len(missing)} qrels quer{'y is' if len(missing) == 1 else 'ies are'} missing from "
            f"the run ({first_few(missing)}) and missing_queries is 'error'"
        )
    if missing or empty:
        notes.append(missing_text(source, empty, missing, len(index.query_ids), options))
    return notes


def queries_text(n: int) -> str:
    """``"1 query"``, ``"3 queries"``."""
    return f"{n} quer{'y' if n == 1 else 'ies'}"


def first_few(items: Sequence[str], shown: int = 5, quote: bool = True) -> str:
    """The first few of ``items``, then how many more: enough to find them, short enough to read."""
    head = ", ".join(repr(i) if quote else i for i in items[:shown])
    return head + (f" and {len(items) - shown} more" if len(items) > shown else "")


def missing_text(source: str, empty: bool, missing: list[str], total: int, options: Options) -> str:
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
        return f"{source}: the run has no lines; all {queries_text(total)} of the qrels are {fate}"
    verb = "is" if len(missing) == 1 else "are"
    return (
        f"{source}: {len(missing)} of the {queries_text(total)} of the qrels {verb} missing from the run "
        f"({first_few(missing)}): {fate}"
    )


def level_warnings(index: QrelsIndex, options: Options, metrics: Sequence[Metric]) -> list[str]:
    """A warning for each relevance level (``-l`` or a metric's ``rel``) at which no qrels document is
    relevant: every query then has R = 0, which is almost always a mistaken level."""
    labels = index.labels
    return levels_without_relevant(int(labels.max()) if len(labels) else None, options, metrics)


def levels_without_relevant(highest: int | None, options: Options, metrics: Sequence[Metric]) -> list[str]:
    """:func:`level_warnings` from the qrels' highest label alone (``None``: the qrels have none), which
    Spark counts on the cluster: no document is relevant at a level above it."""
    if highest is None:
        return []
    levels: dict[int, list[str]] = {}
    for m in metrics:
        if "rel" in m.definition.param_names:
            levels.setdefault(relevance_level(m, options), []).append(str(m))
    return [
        f"relevance level {level} ({first_few(names, quote=False)}): no document in the qrels is relevant "
        f"(no label >= {level}; the highest is {highest}), so every query has R = 0"
        for level, names in levels.items()
        if highest < level
    ]


def _described(source: str) -> str:
    """``file 'x'`` for a file, ``<dict>`` (or ``<stdin>``...) for other sources, for messages."""
    return source if source.startswith("<") and source.endswith(">") else f"file {source!r}"


def coverage_note(source: str, parts: Sequence[Any], options: Options) -> tuple[float | None, list[str]]:
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
    return judged, [CoverageWarning(source, coverage, options.judged_warning, judged)]


class CoverageWarning(str):
    """The warning that a run shows mostly unjudged documents in its top 10 (:func:`coverage_note`): its
    text, with what :func:`summarised` needs to say the warnings of many runs as one."""

    source: str
    share: float
    """The share of the documents the run shows in its top 10 that the qrels judge."""
    under: float
    """The threshold it is under (``Options.judged_warning``)."""
    judged: float
    """The run's mean Judged@10."""

    def __new__(cls, source: str, share: float, under: float, judged: float) -> CoverageWarning:
        text = (
            f"{source}: only {share:.0%} of the run's top 10 documents are in the qrels (under {under:.0%}; "
            f"Judged@10 = {judged:.2f}), so its scores are likely underestimated (unjudged documents count "
            "as non-relevant)"
        )
        made = super().__new__(cls, text)
        made.source, made.share, made.under, made.judged = source, share, under, judged
        return made

    def __reduce__(self) -> tuple[Any, ...]:  # pickled as made: the attributes are its arguments
        return (CoverageWarning, (self.source, self.share, self.under, self.judged))


def summarised(messages: Sequence[str]) -> list[str]:
    """``messages`` with the :class:`CoverageWarning` of several runs (of one threshold) said as one, where
    the first of them stands, naming how many runs and the first few: a directory of runs from one
    collection is typically under the threshold run after run, and a line a run hides the other warnings."""
    groups: dict[float, list[CoverageWarning]] = {}
    for m in messages:
        if isinstance(m, CoverageWarning):
            groups.setdefault(m.under, []).append(m)
    out: list[str] = []
    for m in messages:
        group = groups.get(m.under) if isinstance(m, CoverageWarning) else None
        if group is None or len(group) < 2:
            out.append(m)
        elif m is group[0]:
            runs = [f"{w.source} ({w.share:.0%}; Judged@10 = {w.judged:.2f})" for w in group]
            out.append(
                f"{len(group)} runs show under {m.under:.0%} of their top 10 documents in the qrels, so their "
                "scores are likely underestimated (unjudged documents count as non-relevant): "
                + first_few(runs, shown=3, quote=False)
            )
    return out
