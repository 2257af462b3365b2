"""ranx's ``fuse``, ``normalize`` and ``optimize_fusion`` on irspec's fusion (``irspec.fuse``,
``irspec.tune_fusion``), which has every ranx method and normalisation by ranx's names.

The fused scores are ranx's (tests/test_fusion_ranx.py holds every method and normalisation to
1e-9). Two things are irspec's: a method that reads ranks ranks tied scores as irspec ranks them (by
document id; ranx's order among ties is its sort's), and ``optimize_fusion`` scores each trial with
the ranx metric's irspec counterpart (:mod:`._scoring`) on the training queries, ties in irspec's
order. A method that learns (probfuse, segfuse, slidefuse, posfuse, mapfuse, bayesfuse) is trained by
``optimize_fusion`` (or ``ranx.fusion``'s ``*_train``), whose arrays, one per run (``{"probs": ...}``),
``fuse`` takes back, as in ranx; irspec's fit computes them (tests/test_fusion_learning_ranx.py).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from irspec.compat.ranx._comparisons import formatted
from irspec.compat.ranx._scoring import metric_spec
from irspec.compat.ranx._structures import Qrels, Run
from irspec.errors import IrspecWarning

__all__ = ["OptimizationReport", "fuse", "normalize", "optimize_fusion"]

# ranx's name of the run each method returns
_NAMES = {
    "anz": "comb_anz", "gmnz": "comb_gmnz", "max": "comb_max", "med": "comb_med", "min": "comb_min",
    "mnz": "comb_mnz", "sum": "comb_sum", "w_bordafuse": "weighted_bordafuse",
    "w_condorcet": "weighted_condorcet", "wsum": "weighted_sum",
}  # fmt: skip
_METHODS = frozenset({
    "bayesfuse", "bordafuse", "anz", "gmnz", "max", "med", "min", "mnz", "sum", "condorcet", "isr", "log_isr",
    "logn_isr", "mapfuse", "mixed", "posfuse", "probfuse", "rbc", "rrf", "segfuse", "slidefuse", "w_bordafuse",
    "w_condorcet", "wmnz", "wsum",
})  # fmt: skip
# the key under which ranx's optimize_fusion returns what a method learned or the parameter it chose
_LEARNED = {
    "probfuse": "probs", "segfuse": "probs", "slidefuse": "probs", "posfuse": "probs", "mapfuse": "map_scores",
    "bayesfuse": "log_odds",
}  # fmt: skip
_CHOSEN = {
    "rrf": "k", "gmnz": "gamma", "logn_isr": "sigma", "rbc": "phi", "wsum": "weights", "wmnz": "weights",
    "mixed": "weights", "w_bordafuse": "weights", "w_condorcet": "weights",
}  # fmt: skip
_NORMS = frozenset({"min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda"})
_REPORTED = frozenset(_CHOSEN) | {"probfuse", "slidefuse"}


def _check_method(method: str) -> None:
    if method not in _METHODS:
        raise ValueError(f"Fusion method {method} not supported.")


def check_norm(norm: str | None) -> str:
    """irspec's name of ranx's normalisation ``norm`` (ranx also spells min-max with underscores;
    None is none); a ``ValueError`` for one ranx lacks."""
    if norm is None:
        return "none"
    spelled = {"min_max": "min-max", "min_max_inverted": "min-max-inverted"}.get(norm, norm)
    if spelled not in _NORMS:
        raise ValueError(f"Normalization method {norm} not supported.")
    return spelled


def _check_same_queries(runs: Sequence[Run]) -> None:
    if len(runs) <= 1:
        raise AssertionError("Only one run provided")
    for i, a in enumerate(runs):
        for j, b in enumerate(runs[i + 1 :]):
            if set(a.keys()) != set(b.keys()):
                # ranx's message numbers the second run from the first's successor
                raise AssertionError(f"Runs {i} and {j} query ids do not match")


def _spec(method: str, norm: str, params: dict[str, Any]) -> tuple[str, Any]:
    """The irspec fusion spec of ranx's method, normalisation and parameters, and the trained state
    among them (what a ``*_train`` function or ``optimize_fusion`` returned, for a method that learns)."""
    learned = params.get(_LEARNED.get(method, ""))
    args = [f"norm={norm}"]
    for key, value in params.items():
        if key == _LEARNED.get(method):
            continue
        if key == "weights":
            value = "[" + ",".join(repr(float(w)) for w in value) + "]"
        args.append(f"{key}={value}")
    if method == "probfuse" and learned is not None:
        args.append(f"segments={len(learned[0])}")
    spec = f"{method}({', '.join(args)})"
    if learned is None:
        return spec, None
    import numpy as np

    from irspec.fusion.engine import Trained, fusion_of

    state = tuple(np.atleast_1d(np.asarray(v, dtype=np.float64)) for v in learned)
    return spec, Trained(fusion_of(spec), state)


def train(qrels: Qrels, runs: Sequence[Run], spec: str) -> tuple[Any, ...]:
    """What the method of ``spec`` learns from ``qrels`` on ``runs``: one array per run (irspec's
    fit, ranx's ``*_train``)."""
    from irspec.fusion.tuning import tune_fusion

    _check_same_queries(runs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrspecWarning)
        trained = tune_fusion([r.run for r in runs], spec, None, _judged(qrels))  # type: ignore[arg-type]
    return tuple(trained.state)


def _judged(qrels: Qrels) -> dict[str, dict[str, int]]:
    """The judgments irspec trains and tunes on: the queries with a judged document."""
    return {q: d for q, d in qrels.qrels.items() if d}


def _as_run(fused: Any, queries: Sequence[str], name: str) -> Run:
    """irspec's fused run as a ranx ``Run`` holding every query of the runs (an empty one where no
    document was fused), sorted as ranx sorts a fused run."""
    data: dict[str, dict[str, float]] = {q: {} for q in queries}
    for q, d, s in fused.frame.select("query", "docno", "score").iter_rows():
        data[q][d] = s
    return Run(data, name=name)


def fuse(
    runs: list[Run], norm: str | None = "min-max", method: str = "wsum", params: dict[str, Any] | None = None
) -> Run:
    """ranx's ``fuse``: ``runs`` (two or more, over the same queries) normalised by ``norm``
    (``"min-max"``, ``"max"``, ``"sum"``, ``"zmuv"``, ``"rank"``, ``"borda"``, ``"min-max-inverted"``, or
    None) and fused by ``method`` (ranx's names: ``"wsum"``, ``"rrf"``, ``"mnz"``, ...) with ``params``
    (``{"weights": [...]}``, ``{"k": 60}``, or what :func:`optimize_fusion` returned). Returns a
    :class:`Run` named as ranx names it (``"rrf"``, ``"weighted_sum"``, ...)."""
    from irspec.fusion.engine import fuse as irspec_fuse

    params = dict(params or {})
    _check_same_queries(runs)
    _check_method(method)
    spec, trained = _spec(method, check_norm(norm), params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrspecWarning)  # ranx says nothing of queries without documents
        fused = irspec_fuse([r.run for r in runs], trained if trained is not None else spec)
    return _as_run(fused, runs[0].get_query_ids(), _NAMES.get(method, method))


def normalize(run: Run, norm: str = "min-max") -> Run:
    """ranx's ``normalize``: ``run``'s scores normalised per query (``"min-max"``, ``"max"``, ``"sum"``,
    ``"zmuv"``, ``"rank"``, ``"borda"``, ``"min-max-inverted"``), as a new run of the same name. It is
    irspec's CombMAX of the run and itself under that normalisation. ``"borda"`` gives each document its Borda
    score (ranx fails on it: its Borda normalisation takes a list of runs)."""
    from irspec.fusion.engine import fuse as irspec_fuse

    # irspec fuses two runs or more: the larger of a score and itself is the score
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrspecWarning)
        fused = irspec_fuse([run.run, run.run], f"max(norm={check_norm(norm)})")
    return _as_run(fused, run.get_query_ids(), run.name)  # type: ignore[arg-type]


def borda(runs: list[Run]) -> list[Run]:
    """Each of ``runs`` Borda-normalised over the documents any of them retrieved for the query (a
    document a run lacks gets that run's share of the positions left), as ranx's ``borda_norm``: the
    weighted sum under the Borda normalisation, with weight 1 on the run and 0 on the others."""
    from irspec.fusion.engine import fuse as irspec_fuse

    out = []
    for i, run in enumerate(runs):
        weights = ",".join("1.0" if j == i else "0.0" for j in range(len(runs)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IrspecWarning)
            fused = irspec_fuse([r.run for r in runs], f"wsum(norm=borda, weights=[{weights}])")
        out.append(_as_run(fused, run.get_query_ids(), run.name))  # type: ignore[arg-type]
    return out


class OptimizationReport:
    """What ``optimize_fusion(..., return_optimization_report=True)`` returns beside the parameters:
    every trial (``configs``) and its score (``results``) on ``metric``. Printed as a plain table (ranx
    draws one with rich), the best trial marked."""

    def __init__(
        self,
        method: str,
        configs: list[str],
        results: list[float],
        metric: str,
        rounding_digits: int = 3,
        show_percentages: bool = False,
    ) -> None:
        self.method = method
        self.configs = configs
        self.results = results
        self.metric = metric
        self.rounding_digits = rounding_digits
        self.show_percentages = show_percentages

    def format_score(self, score: float) -> str:
        """A score with ``rounding_digits`` decimals, or a percentage with two fewer."""
        return formatted(score, self.rounding_digits, self.show_percentages)

    def to_table(self) -> str:
        """The trials as a text table."""
        best = max(range(len(self.results)), key=self.results.__getitem__) if self.results else -1
        rows = [(str(c), self.format_score(s)) for c, s in zip(self.configs, self.results, strict=True)]
        width = max([len(_CHOSEN.get(self.method, "config")), *[len(c) for c, _ in rows]])
        lines = [f"{_CHOSEN.get(self.method, 'config'):<{width}}  {self.metric}"]
        lines += [f"{c:<{width}}  {s}{'  (best)' if i == best else ''}" for i, (c, s) in enumerate(rows)]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_table()

    __repr__ = __str__


def optimize_fusion(
    qrels: Qrels,
    runs: list[Run],
    norm: str | None = "min-max",
    method: str = "wsum",
    metric: str = "ndcg",
    return_optimization_report: bool = False,
    rounding_digits: int = 3,
    show_percentages: bool = False,
    show_progress: bool = True,
) -> Any:
    """ranx's ``optimize_fusion``: the parameters of ``method`` that fuse ``runs`` best on ``metric``
    (a ranx metric string) against ``qrels``, searched on ranx's default grids (irspec's
    ``tune_fusion``), or for a method that learns, what it learned from ``qrels``: a dict to give
    :func:`fuse` as ``params`` (``{"weights": (...)}``, ``{"k": 60}``, ``{"probs": ...}``). With
    ``return_optimization_report`` (methods with a parameter to search), also an
    :class:`OptimizationReport`. ``show_progress`` is accepted and ignored."""
    from irspec.fusion.tuning import tune_fusion

    _check_same_queries(runs)
    for i, run in enumerate(runs):
        if set(run.keys()) != set(qrels.keys()):
            raise AssertionError(f"Run {i} and Qrels query ids do not match")
    _check_method(method)
    if method not in _CHOSEN and method not in _LEARNED:
        raise ValueError(f"{method} does not support optimization.")
    if return_optimization_report and method not in _REPORTED:
        raise ValueError(f"{method} does not support optimization report.")
    bound = metric_spec(metric)
    if bound.variant is not None or bound.scale != 1.0:
        raise ValueError(
            f"optimize_fusion: {metric} has no single irspec metric; use ndcg, map, mrr, precision, ..."
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrspecWarning)
        trained = tune_fusion(
            [r.run for r in runs],
            f"{method}(norm={check_norm(norm)})",
            bound.spec,
            {q: d for q, d in qrels.qrels.items() if d},
        )
    if method in _LEARNED:
        chosen: dict[str, Any] = {_LEARNED[method]: trained}
    else:
        key = _CHOSEN[method]
        value = dict(trained.fusion.params).get(key, trained.fusion.definition.param(key).default)
        chosen = {key: tuple(value) if isinstance(value, (list, tuple)) else value}
    if not return_optimization_report:
        return chosen
    configs = [
        _trial_label(spec, _CHOSEN.get(method, "segments" if method == "probfuse" else "w"))
        for spec, _ in trained.trials
    ]
    report = OptimizationReport(
        method, configs, [s for _, s in trained.trials], metric, rounding_digits, show_percentages
    )
    return chosen, report


def _trial_label(spec: str, key: str) -> str:
    """The searched parameter's value in a trial's canonical spec (``rrf(k=20)`` gives ``20``)."""
    start = spec.find(f"{key}=")
    if start < 0:
        return spec
    rest = spec[start + len(key) + 1 :]
    if rest.startswith("["):
        return "(" + rest[1 : rest.index("]")].replace(",", ", ") + ")"
    end = min((i for i in (rest.find(","), rest.find(")")) if i >= 0), default=len(rest))
    return rest[:end]
