"""trec_eval's named measure sets: ``official`` (its default output), ``set`` and ``all_trec``."""

from __future__ import annotations

from irspec.builtin._common import TREC_CUTOFFS
from irspec.spec.hooks import builtin_hookimpl
from irspec.spec.registry import MetricGroup

_CUTS = ",".join(TREC_CUTOFFS)
_RECALLS = ",".join(f"{r / 10:.2f}" for r in range(11))

OFFICIAL = MetricGroup(
    "official",
    (
        "num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank",
        f"iprec_at_recall.{_RECALLS}",
        f"P.{_CUTS}",
    ),
    "trec_eval's default measures (what it prints without -m), in its order",
)

SET = MetricGroup(
    "set",
    ("num_q num_ret num_rel num_rel_ret utility set_P set_relative_P set_recall set_map set_F",),
    "trec_eval's measures of the retrieved set as a whole (its nickname set), in its order",
)

ALL_TREC = MetricGroup(
    "all_trec",
    (
        "num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank",
        f"iprec_at_recall.{_RECALLS}",
        f"P.{_CUTS}",
        "relstring",
        f"recall.{_CUTS}",
        "infAP gm_bpref",
        "Rprec_mult." + ",".join(f"{m / 10:.2f}" for m in range(2, 21, 2)),
        "utility 11pt_avg binG G ndcg ndcg_rel Rndcg",
        f"ndcg_cut.{_CUTS}",
        f"map_cut.{_CUTS}",
        f"relative_P.{_CUTS}",
        "success.1,5,10",
        "set_P set_relative_P set_recall set_map set_F num_nonrel_judged_ret",
        "rbp_resid unj.5,10,20",
    ),
    "every measure trec_eval 10 computes by default with -m all_trec, in its order",
)


@builtin_hookimpl
def irspec_register_metrics(register) -> None:
    """Register trec_eval's measure sets."""
    register(OFFICIAL)
    register(SET)
    register(ALL_TREC)
