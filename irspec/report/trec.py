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
    if metric.aggregate == "sum" and float(value).is_integer() and not getattr(metric, "trec_prefix", ""):
        return str(int(value))  # a count; trec_eval -Z prints its z-score as any other value
    return f"{value:6.4f}"


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

    return [m for _, m in sorted(enumerate(metrics), key=key)]


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
        ordered = [(res.metrics.index(m), m) for m in trec_order(res.metrics)]
        if several:
            lines.append(f"{'runid':<22}\tall\t{res.run_name}")
        if per_query:
            for i, qid in enumerate(res.query_ids):
                for j, m in ordered:
                    if m.aggregate == "none":  # relstring: a quoted string, per query only
                        lines.append(f"{_label(m, True):<22}\t{qid}\t'{res.texts[str(m)][i]}'")
                        continue
                    if m.name in _SUMMARY_ONLY or math.isnan(res.values[i, j]):
                        continue
                    lines.append(f"{_label(m, True):<22}\t{qid}\t{_number(res.values[i, j], m)}")
        if summary:
            if runid and not several:
                lines.append(f"{'runid':<22}\tall\t{res.runid or res.run_name}")
            agg = res.aggregate()
            for _, m in ordered:
                if m.aggregate == "none":
                    continue
                lines.append(f"{_label(m, True):<22}\tall\t{_number(agg[str(m)], m)}")
    return "\n".join(lines) + ("\n" if lines else "")
