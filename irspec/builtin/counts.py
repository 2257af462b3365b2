"""Counts per query, summed over queries: queries, relevant, retrieved, relevant retrieved."""

from __future__ import annotations

import dataclasses

from irspec.builtin._common import kernel, rel
from irspec.spec.hooks import builtin_hookimpl
from irspec.spec.registry import Better, MetricDef, Redirect

K = "counts"


def _count(
    name: str, trec: str, summary: str, func: str, with_rel: bool = True, better: Better = "neither"
) -> MetricDef:
    return MetricDef(
        name,
        summary,
        (rel(),) if with_rel else (),
        aggregate="sum",
        better=better,
        compute=kernel(K, func),
        trec_name=lambda m: trec if not m.params else None,
        doc=f"{summary}. Per query a count; the summary is the sum over queries (trec_eval's {trec}).",
    )


NUM_Q = _count("NumQ", "num_q", "number of queries evaluated (1 per query)", "num_q", with_rel=False)
# ir_measures writes num_rel_ret as NumRet(rel=1): NumRet with a relevance level counts the relevant ones.
NUM_RET = dataclasses.replace(
    _count("NumRet", "num_ret", "number of documents retrieved", "num_ret", with_rel=False),
    redirects=(Redirect("rel", "NumRelRet"),),
)
NUM_REL = _count("NumRel", "num_rel", "number of relevant documents in the qrels", "num_rel")
NUM_REL_RET = _count(
    "NumRelRet", "num_rel_ret", "number of relevant documents retrieved", "num_rel_ret", better="higher"
)
NUM_NONREL_JUDGED_RET = _count(
    "NumNonrelJudgedRet",
    "num_nonrel_judged_ret",
    "number of judged non-relevant documents retrieved",
    "num_nonrel_judged_ret",
    better="lower",
)


@builtin_hookimpl
def irspec_register_metrics(register) -> None:
    """Register the counts."""
    register(NUM_Q, aliases=["num_q"])
    register(NUM_RET, aliases=["num_ret"])
    register(NUM_REL, aliases=["num_rel"])
    register(NUM_REL_RET, aliases=["num_rel_ret"])
    register(NUM_NONREL_JUDGED_RET, aliases=["num_nonrel_judged_ret"])
