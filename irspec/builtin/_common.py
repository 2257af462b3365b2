"""Parameter declarations and trec_eval naming helpers shared by the built-in metric families."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from irspec.spec.registry import Metric, Param

TREC_CUTOFFS = ("5", "10", "15", "20", "30", "100", "200", "500", "1000")
"""trec_eval's default cutoffs for P, recall, relative_P, map_cut and ndcg_cut."""

KERNELS = "irspec.builtin.kernels"


def kernel(family: str, name: str) -> str:
    """The lazy ``module:function`` reference of a built-in kernel."""
    return f"{KERNELS}.{family}:{name}"


def rel() -> Param:
    """The relevance level: labels >= rel count as relevant."""
    return Param(
        "rel",
        "int",
        None,
        "relevance level: labels >= rel are relevant (default: the evaluation's relevance_level)",
        minimum=1,
    )


def cutoff(required: bool = False) -> Param:
    """The rank cutoff k set by ``@``; may use R (``P@R``)."""
    return Param(
        "k",
        "int",
        None,
        "rank cutoff: only the top k documents count" + ("" if required else " (default: the whole ranking)"),
        minimum=1,
        per_query=True,
        required=required,
    )


def plain(metric: Metric, *allowed: str) -> bool:
    """True when only the named parameters (or none) are set, so trec_eval has the measure."""
    return all(k in allowed for k, _ in metric.params)


def trec_int(metric: Metric, name: str) -> str:
    """A count parameter as trec_eval prints it, or '' when it is an expression of R."""
    v = metric.get(name)
    return str(v) if isinstance(v, int) else ""


def trec_name_for(
    set_name: str | None, cut_name: str | None, extra: Sequence[str] = ()
) -> Callable[[Metric], str | None]:
    """trec_eval names for a metric with an optional cutoff: ``set_P`` without, ``P_5`` with."""

    def name(metric: Metric) -> str | None:
        if not plain(metric, "k", *extra):
            return None
        k = metric.get("k")
        if k is None:
            return set_name
        if cut_name is None or not isinstance(k, int):
            return None
        return f"{cut_name}_{k}"

    return name


def short_float(x: float) -> str:
    """trec_eval's way of echoing a parameter list: ``.25`` for 0.25, ``4.5``, ``-1``."""
    text = f"{x:g}"
    if text.startswith("0."):
        return text[1:]
    if text.startswith("-0."):
        return "-" + text[2:]
    return text
