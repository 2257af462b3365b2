"""bpref and its seed variant bpref-X, which judge a run only by the judged documents it retrieves."""

from __future__ import annotations

from irspec.builtin._common import kernel, rel
from irspec.spec import syntax
from irspec.spec.hooks import builtin_hookimpl
from irspec.spec.registry import UNIT, MetricDef, Param

K = "bpref"


def _nonrel() -> Param:
    return Param(
        "nonrel",
        "float",
        syntax.Symbol("R"),
        "how many judged non-relevant documents count (default R; 10+R gives bpref-10)",
        minimum=1,
        per_query=True,
    )


BPREF = MetricDef(
    "Bpref",
    "binary preference: how often relevant documents rank above judged non-relevant ones",
    (_nonrel(), rel()),
    positional="nonrel",
    compute=kernel(K, "bpref"),
    trec_name=lambda m: "bpref" if not m.params else None,
    doc="""Bpref = (1/R) Σ_{r relevant retrieved} (1 − min(k_r, X) / min(N, X)), with k_r the judged
non-relevant documents ranked above r, N the judged non-relevant documents of the query, and X = R
(trec_eval's bpref; a term is 1 when min(N, X) = 0). Unjudged and negative-label documents are
skipped. Bpref(nonrel=10+R), written bpref(10+R), is bpref-10. 0 when R = 0. Reference: Buckley &
Voorhees, "Retrieval evaluation with incomplete information", SIGIR 2004.""",
    bounds=UNIT,
)

GM_BPREF = MetricDef(
    "gm_bpref",
    "geometric mean of bpref over queries (per-query values are bpref)",
    (_nonrel(), rel()),
    positional="nonrel",
    aggregate="gmean",
    compute=kernel(K, "bpref"),
    trec_name=lambda m: "gm_bpref" if not m.params else None,
    doc="""gm_bpref = exp(mean(log(max(bpref_q, 1e-5)))), trec_eval's geometric mean of bpref.""",
)


@builtin_hookimpl
def irspec_register_metrics(register) -> None:
    """Register bpref and gm_bpref."""
    register(BPREF, aliases=["binary_preference"])
    register(GM_BPREF, aliases=["GMBpref"])
