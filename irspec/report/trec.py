"""trec_eval's own output: ``measure<TAB>qid<TAB>value`` lines, in trec_eval's order of measures."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from irspec.spec.registry import split_trec_name

if TYPE_CHECKING:
    from irspec.evaluation.evaluated import Evaluated

__all__ = ["TREC_ORDER", "to_trec", "trec_order"]

# trec_eval prints these only in the summary: a per-query num_q or geometric mean means nothing.
_SUMMARY_ONLY = {"NumQ", "GMAP", "gm_bpref"}


def _label(metric: Any, trec: bool) -> str:
    if not trec:
        return str(metric)
    # a standardised measure: trec_eval -Z prints "Z" before the padded name ("Z%-22s")
    return getattr(metric, "trec_prefix", "") + f"{metric.trec_name or str(metric):<22}"


def _number(value: float, metric: Any) -> str:
    if math.isnan(value):
        return "nan"
    return _formatted(float(value), _is_count(metric))


def _formatted(value: float, count: bool) -> str:
    """A value as trec_eval prints it: a count's whole value as an integer, any other to 4 decimals."""
    return str(int(value)) if count and value.is_integer() else f"{value:6.4f}"


def _is_count(metric: Any) -> bool:
    """Whether ``metric``'s whole values print as integers: a count (a sum over queries), not a
    standardised one (trec_eval -Z prints its z-score as any other value)."""
    return metric.aggregate == "sum" and not getattr(metric, "trec_prefix", "")


# trec_eval prints measures in the order of its internal table (measures.c), not the order asked.
TREC_ORDER = [
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
    "relstring",
    "recall",
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "11pt_avg",
    "binG",
    "G",
    "dcg",
    "ideal_dcg",
    "ndcg",
    "ndcg_rel",
    "Rndcg",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
    "yaap",
    "rbp",
    "rbp_resid",
    "unj",
]
_TREC_RANK = {name: i for i, name in enumerate(TREC_ORDER)}


def trec_order(metrics: Sequence[Any]) -> list[Any]:
    """Metrics in trec_eval's output order (cutoffs ascending); those trec_eval lacks keep their order, last."""
    return [m for _, m in _trec_ordered(metrics)]


def _trec_ordered(metrics: Sequence[Any]) -> list[tuple[int, Any]]:
    """:func:`trec_order`'s metrics, each with its position in ``metrics``."""

    def key(item: tuple[int, Any]) -> tuple[int, float, int]:
        i, m = item
        if m.trec_name is None:
            return (len(TREC_ORDER), 0.0, i)
        root, param = split_trec_name(m.trec_name)
        try:
            value = float(param)
        except ValueError:  # a parameter list (utility_2,-1,0,0) or none: keep the order given
            value = 0.0
        return (_TREC_RANK.get(root, len(TREC_ORDER)), value, i)

    return sorted(enumerate(metrics), key=key)


def _per_query_lines(res: Evaluated, ordered: list[tuple[int, Any]]) -> list[str]:
    """The per-query lines of one result, queries in order, each with its measures in ``ordered``
    ((column, metric) pairs) order. Each measure's label and kind are found once and the values read as
    Python floats once, so that a line costs its formatting alone: properties and numpy scalars read
    for each line were a third of a 2,000-query ``-q`` evaluation's time (56,000 lines)."""
    # (column, label, the texts of a text-valued measure, whether a whole value is a count)
    shown: list[tuple[int, str, Sequence[str] | None, bool]] = []
    for j, m in ordered:
        if m.aggregate == "none":  # relstring: a quoted string, per query only
            shown.append((j, f"{_label(m, True):<22}", res.texts[str(m)], False))
        elif m.name not in _SUMMARY_ONLY:
            shown.append((j, f"{_label(m, True):<22}", None, _is_count(m)))
    lines = []
    rows = res.values.astype(float, copy=False).tolist()  # an integer column too
    for i, (qid, row) in enumerate(zip(res.query_ids, rows, strict=True)):
        for j, label, texts, count in shown:
            if texts is not None:
                lines.append(f"{label}\t{qid}\t'{texts[i]}'")
                continue
            value = row[j]
            if value != value:  # NaN: no line, as trec_eval prints none for a measure it did not compute
                continue
            lines.append(f"{label}\t{qid}\t{_formatted(value, count)}")
    return lines


def to_trec(
    results: Sequence[Evaluated], *, per_query: bool = False, runid: bool = False, summary: bool = True
) -> str:
    """trec_eval's output: ``measure<TAB>qid<TAB>value`` lines, the name left-aligned to 22 columns.

    Per-query lines come first (queries in order, each with its measures), then the summary (``all``);
    ``runid`` adds trec_eval's ``runid all RUNID`` line (the run's runid, else its name), as its
    official and all_trec sets do; ``summary=False`` leaves the summary out, as trec_eval's ``-n`` does.
    trec_eval reads one run; of several, each run's lines start with ``runid all NAME``, the name every
    other output gives it, so that each block says which run it is.
    """
    lines: list[str] = []
    several = len(results) > 1
    for res in results:
        # each metric's column as trec_order finds it (list.index compared the metrics field by field,
        # quadratic in their number: half of all_trec's output, ~100 measures, on 50 queries)
        ordered = _trec_ordered(res.metrics)
        if several:
            lines.append(f"{'runid':<22}\tall\t{res.run_name}")
        if per_query:
            lines += _per_query_lines(res, ordered)
        if summary:
            if runid and not several:
                lines.append(f"{'runid':<22}\tall\t{res.runid or res.run_name}")
            agg = res.aggregate()
            for _, m in ordered:
                if m.aggregate == "none":
                    continue
                lines.append(f"{_label(m, True):<22}\tall\t{_number(agg[str(m)], m)}")
    return "\n".join(lines) + ("\n" if lines else "")
