"""How a recommender's lists together expose the catalogue: Coverage@k, Gini@k and Entropy@k.

These are **catalogue-level** metrics (``MetricDef(scope="catalogue")``): one value per run, from every
evaluated user's top k at once, with no value per user and so no mean over users, no interval and no
paired test. Each counts how often each item is recommended, c(i) = the number of users whose top k
holds item i, over the whole catalogue I (the columns of the test matrix; an item never recommended
has c(i) = 0). The lists are the context's ``"recommendations"`` input, which
:func:`irspec.evaluate_topk` and :func:`irspec.evaluate_scores` give: the evaluated users' lists, after
the training items are removed.
"""

from __future__ import annotations

from irspec.builtin._common import kernel
from irspec.builtin.popularity import list_cutoff
from irspec.spec.hooks import builtin_hookimpl
from irspec.spec.registry import NONNEGATIVE, UNIT, MetricDef

K = "exposure"

COVERAGE = MetricDef(
    "Coverage",
    "item coverage: the share of the catalogue recommended in some user's top k (one value per run)",
    (list_cutoff(),),
    at="k",
    compute=kernel(K, "coverage"),
    doc="""Coverage@k = |{i ∈ I : c(i) > 0}| / |I|, the share of the catalogue in at least one user's top k
(RecTools' ``CatalogCoverage(normalize=True)``; Elliot's ``ItemCoverage`` is the count). Reference:
Ge, Delgado-Battenfeld & Jannach, "Beyond accuracy: evaluating recommender systems by coverage and
serendipity", RecSys 2010.""",
    bounds=UNIT,
    scope="catalogue",
)

GINI = MetricDef(
    "Gini",
    "Gini index of how often items are recommended in the top k: 0 all equally, 1 one item only",
    (list_cutoff(),),
    at="k",
    compute=kernel(K, "gini"),
    doc="""Gini@k = (1 / (|I| - 1)) Σ_{j=1}^{|I|} (2j - |I| - 1) c(i_j) / Σ_i c(i), with the items i_j in
increasing c, never-recommended items included (0 when every item is recommended equally often, 1 when
one item takes every place; 0 for a catalogue of one item, undefined when nothing is recommended).
RankSys and Elliot report 1 - Gini@k under the name Gini (a diversity, higher better); irspec reports
the index itself, lower meaning recommendations spread more evenly. Reference: Castells, Hurley &
Vargas, "Novelty and diversity in recommender systems", Recommender Systems Handbook 2015.""",
    better="lower",
    bounds=UNIT,
    scope="catalogue",
)

ENTROPY = MetricDef(
    "Entropy",
    "Shannon entropy (bits) of the distribution of recommendations over items in the top k",
    (list_cutoff(),),
    at="k",
    compute=kernel(K, "entropy"),
    doc="""Entropy@k = -Σ_{i : c(i) > 0} p(i) log2 p(i), p(i) = c(i) / Σ_j c(j): 0 when one item takes every
place, log2 |I| when every item is recommended equally often; undefined when nothing is recommended.
Reference: Shani & Gunawardana, "Evaluating recommendation systems", Recommender Systems Handbook 2011.""",
    bounds=NONNEGATIVE,
    scope="catalogue",
)


@builtin_hookimpl
def irspec_register_metrics(register) -> None:
    """Register the catalogue-level metrics."""
    register(COVERAGE)
    register(GINI)
    register(ENTROPY)
