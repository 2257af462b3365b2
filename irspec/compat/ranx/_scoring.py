"""ranx's ``evaluate``: its metric strings read as irspec metrics with ranx's parameters, its inputs
(``Qrels``/``Run``, dicts, numba typed lists and arrays of (id, value) rows), its outputs.

Each ranx metric is an irspec metric (the table below) evaluated on ranx's ranking (ties in ranx's
order, :mod:`._order`); where ranx's definition is not trec_eval's the parameters say so:

==================  ======================================================================
ranx                irspec
==================  ======================================================================
``hits@k``          ``P(rel=l)@k`` × k (the count of relevant documents in the top k);
                    ``hits``: ``NumRelRet(rel=l)``
``hit_rate@k``      ``Success(rel=l)@k`` (``hit_rate``: at a depth no ranking reaches)
``precision@k``     ``P(rel=l)@k``; ``precision``: ``P(rel=l)``, relevant retrieved / retrieved
``recall@k``        ``R(rel=l)@k``
``f1@k``            ``F(rel=l)@k``
``r-precision``     ``Rprec(rel=l)``
``mrr@k``           ``RR(rel=l)@k``
``map@k``           ``AP(rel=l)@k`` (divided by R, as ranx and trec_eval's map_cut)
``dcg@k``           ``DCG@k``; ``ndcg@k``: ``nDCG@k`` (gain = label, log2(i + 1) discount)
``dcg_burges@k``    ``DCG(dcg=exp-log2)@k``; ``ndcg_burges@k``: ``nDCG(dcg=exp-log2)@k``
``bpref``           ``Bpref(rel=l)``, on judgments whose negative labels are 0 (see below)
``rbp.p``           ``RBP(p=0.p, max_grade=m)`` × m, m the largest label (irspec-usermodel)
==================  ======================================================================

``-l`` (``ndcg@10-l2``) is the relevance level l. ranx's gains are the labels of the documents at
level l or above, so the gain metrics at a level above 1 (dcg, ndcg, their Burges forms, rbp) are
evaluated on judgments whose labels below l are 0. A query without a relevant document scores 0 on
every metric, as in ranx. ranx counts a negative label as a judged non-relevant document in bpref
(trec_eval leaves it out of the pool), so bpref reads negative labels as 0.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from irspec.compat.ranx._order import descending
from irspec.compat.ranx._structures import Qrels, Run
from irspec.errors import IrspecWarning
from irspec.frozen import frozen

__all__ = ["evaluate", "metric_spec"]

_WHOLE = 1 << 40  # a cutoff no ranking reaches: ranx's k = 0, the whole ranking

_SUPPORTED = (
    "Metric {} not supported. Supported metrics are `hits`, `hit_rate`, `precision`, `recall`, `f1`, "
    "`r-precision`, `mrr`, `map`, `ndcg`, and `ndcg_burges`."
)
_GAIN = frozenset({"dcg", "dcg_burges", "ndcg", "ndcg_burges", "rbp"})


@frozen
class _Metric:
    """A ranx metric string as irspec computes it: ``spec`` on the judgments ``variant`` (None: as they
    are; ``("below", l)``: labels below l are 0; ``("negative",)``: negative labels are 0), its values
    times ``scale`` (hits: the cutoff; rbp: the largest label, known from the judgments: -1)."""

    name: str
    level: int
    spec: str
    variant: tuple[Any, ...] | None = None
    scale: float = 1.0


def extract(metric: str) -> tuple[str, float, int]:
    """ranx's reading of a metric string: its name, its cutoff (``k``, 0 for none; RBP's persistence)
    and its relevance level (``-l``, 1 by default). An RBP without persistence is a ``ValueError``."""
    level = "1"
    if "-l" in metric:
        metric, level = metric.split("-l")
    k: float
    if "rbp" in metric:
        if "." in metric:
            parts = metric.split(".")
        elif "@" in metric:
            parts = metric.split("@")
        else:
            raise ValueError("RBP requires persistence value. Example: `rpb.95`")
        name, k = parts[0], float(f"0.{parts[1]}")
    else:
        parts = metric.split("@")
        name, k = parts[0], int(parts[1]) if len(parts) > 1 else 0
    return name, k, int(level)


def metric_spec(metric: str) -> _Metric:
    """The irspec metric that computes ranx's ``metric`` (a ``ValueError`` for a name ranx lacks, an
    ``AssertionError`` for a negative cutoff, as in ranx)."""
    name, k, level = extract(metric)
    rel = f"rel={level}"
    at = f"@{int(k)}" if k else ""
    if name != "rbp" and k < 0:
        raise AssertionError("k must be grater or equal to 0")
    below = ("below", level) if level > 1 and name in _GAIN else None
    if name == "hits":
        if not k:
            return _Metric(name, level, f"NumRelRet({rel})")
        return _Metric(name, level, f"P({rel}){at}", scale=float(k))
    simple = {
        "hit_rate": f"Success({rel})@{int(k) or _WHOLE}",
        "precision": f"P({rel}){at}",
        "recall": f"R({rel}){at}",
        "f1": f"F({rel}){at}",
        "r-precision": f"Rprec({rel})",
        "mrr": f"RR({rel}){at}",
        "map": f"AP({rel}){at}",
        "dcg": f"DCG{at}",
        "ndcg": f"nDCG{at}",
        "dcg_burges": f"DCG(dcg=exp-log2){at}",
        "ndcg_burges": f"nDCG(dcg=exp-log2){at}",
    }
    if name in simple:
        return _Metric(name, level, simple[name], below)
    if name == "bpref":
        return _Metric(name, level, f"Bpref({rel})", ("negative",))
    if name == "rbp":
        return _Metric(name, level, f"RBP(p={k!r},max_grade={{max}})", below, scale=-1.0)
    raise ValueError(_SUPPORTED.format(name))


# ---------------------------------------------------------------------------------------------------
# Inputs: what ranx's evaluate takes, as (query ids, judgments, ranking)


def _from_rows(rows: Any) -> list[Any]:
    """Per query, an array of (id, value) rows: a 3-D array, a numba typed list or a list of 2-D arrays."""
    import numpy as np

    return [np.asarray(r, dtype=np.float64).reshape(-1, 2) for r in rows]


def _doc(x: float) -> str:
    return repr(float(x))


def _rows_as_judgments(rows: Any) -> dict[str, dict[str, int]]:
    """ranx's array qrels as ``{query position: {document id: label}}`` (a repeated id: its first label)."""
    out: dict[str, dict[str, int]] = {}
    for i, arr in enumerate(_from_rows(rows)):
        docs: dict[str, int] = {}
        for d, v in arr.tolist():
            docs.setdefault(_doc(d), int(v))
        out[str(i)] = docs
    return out


def _rows_as_ranking(rows: Any) -> dict[str, dict[str, float]]:
    """ranx's array run, ranked as given (ranx does not sort arrays), as scores irspec ranks in that
    order. A document repeated in a ranking counts once, at its first rank."""
    out: dict[str, dict[str, float]] = {}
    for i, arr in enumerate(_from_rows(rows)):
        docs: dict[str, float] = {}
        for rank, d in enumerate(arr[:, 0].tolist()):
            docs.setdefault(_doc(d), float(-rank))
        out[str(i)] = docs
    return out


def _dict_ranking(run: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """A dict run as ranx ranks it when it is handed to ``evaluate`` as a dict: each query by the
    reversed argsort of its scores."""
    out: dict[str, dict[str, float]] = {}
    for q, docs in run.items():
        ids = list(docs)
        values = [float(v) for v in docs.values()]
        order = descending(values, reversed_argsort=True)
        if len(set(values)) == len(values):
            out[q] = {ids[i]: values[i] for i in order}
        else:
            out[q] = {ids[i]: float(-r) for r, i in enumerate(order)}
    return out


class _Judgments:
    """Judgments as irspec reads them, with what evaluations of them keep: an evaluator per judgments
    variant and metrics, and each query's count of relevant documents per level."""

    def __init__(self, data: Mapping[str, Mapping[str, int]]) -> None:
        self.data = data
        self.query_ids = list(data)
        self._made: dict[Any, Any] = {}

    def kept(self, key: Any, make: Any) -> Any:
        if key not in self._made:
            self._made[key] = make()
        return self._made[key]

    def relevant(self, level: int) -> Any:
        """Each query's number of documents labelled ``level`` or above, in query order."""
        import numpy as np

        def count() -> Any:
            return np.array(
                [sum(1 for v in docs.values() if v >= level) for docs in self.data.values()], dtype=np.int64
            )

        return self.kept(("relevant", level), count)

    def nonrelevant(self, level: int) -> Any:
        """Each query's number of judged documents labelled below ``level``, in query order."""
        import numpy as np

        def count() -> Any:
            return np.array(
                [sum(1 for v in docs.values() if v < level) for docs in self.data.values()], dtype=np.int64
            )

        return self.kept(("nonrelevant", level), count)

    def largest(self) -> int:
        return self.kept(
            "largest", lambda: max((v for d in self.data.values() for v in d.values()), default=0)
        )

    def variant(self, variant: tuple[Any, ...] | None) -> Mapping[str, Mapping[str, int]]:
        if variant is None:
            return self.data
        if variant[0] == "negative":
            return self.kept(variant, lambda: _floored(self.data, 0, 0))
        return self.kept(variant, lambda: _floored(self.data, variant[1], 0))

    def evaluator(self, variant: tuple[Any, ...] | None, specs: tuple[str, ...]) -> Any:
        def make() -> Any:
            from irspec.evaluation.evaluator import Evaluator

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", IrspecWarning)
                return Evaluator(
                    _nonempty(self.variant(variant)), list(specs), judged_warning=None, missing_queries="zero"
                )

        return self.kept(("evaluator", variant, specs), make)


def _floored(data: Mapping[str, Mapping[str, int]], below: int, to: int) -> dict[str, dict[str, int]]:
    """The judgments with every label below ``below`` replaced by ``to``."""
    return {q: {d: (v if v >= below else to) for d, v in docs.items()} for q, docs in data.items()}


def _nonempty(
    data: Mapping[str, Mapping[str, int]],
) -> dict[str, Mapping[str, int]] | Mapping[str, Mapping[str, int]]:
    """Judgments without their queries of no documents (ranx scores them 0; irspec has nothing to read)."""
    if all(data.values()):
        return data
    return {q: docs for q, docs in data.items() if docs}


def _judgments(qrels: Any) -> tuple[_Judgments, list[str]]:
    if isinstance(qrels, Qrels):
        return qrels._cached("judgments", lambda: _Judgments(qrels.qrels)), qrels.get_query_ids()
    if isinstance(qrels, Mapping):
        found = _Judgments({q: {d: int(v) for d, v in docs.items()} for q, docs in qrels.items()})
        return found, found.query_ids
    found = _Judgments(_rows_as_judgments(qrels))
    return found, found.query_ids


def _ranking(run: Any) -> tuple[Any, Mapping[str, Mapping[str, Any]]]:
    """What irspec evaluates of ``run``, and its documents by query."""
    if isinstance(run, Run):
        return run._ranking(), run.run
    found = _dict_ranking(run) if isinstance(run, Mapping) else _rows_as_ranking(run)
    return found, found


# ---------------------------------------------------------------------------------------------------
# Evaluation


def per_query(qrels: Any, run: Any, metrics: Sequence[str]) -> dict[str, Any]:
    """Each of ``metrics``' per-query values (a numpy array in the judgments' query order)."""
    import numpy as np

    judged, query_ids = _judgments(qrels)
    ranking, documents = _ranking(run)
    bound = [metric_spec(m) for m in metrics]
    largest = judged.largest() if any(b.scale < 0 for b in bound) else 0
    groups: dict[tuple[Any, ...] | None, list[str]] = {}
    for b in bound:
        spec = b.spec.replace("{max}", str(max(largest, 1)))
        groups.setdefault(b.variant, [])
        if spec not in groups[b.variant]:
            groups[b.variant].append(spec)
    position = {q: i for i, q in enumerate(query_ids)}
    columns: dict[tuple[Any, ...] | None, Any] = {}
    for variant, specs in groups.items():
        evaluator = judged.evaluator(variant, tuple(specs))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IrspecWarning)
            result = evaluator.evaluate(ranking)
        table = np.zeros((len(query_ids), len(specs)))
        rows = [position.get(q, -1) for q in result.query_ids]
        found = np.array(rows, dtype=np.int64)
        keep = found >= 0
        table[found[keep]] = result.values[keep]
        columns[variant] = table
    out: dict[str, Any] = {}
    for m, b in zip(metrics, bound, strict=True):
        spec = b.spec.replace("{max}", str(max(largest, 1)))
        values = columns[b.variant][:, groups[b.variant].index(spec)].copy()
        if b.scale > 0 and b.scale != 1.0:
            values = np.round(values * b.scale)
        elif b.scale < 0:
            values = values * max(largest, 1)
        if b.name == "bpref":
            # ranx divides by the number of judged non-relevant documents (labels below the level,
            # negative ones too): without one, a retrieved relevant document makes the query NaN
            found = np.asarray(scores_retrieved(judged, documents, query_ids, b.level))
            values[(judged.nonrelevant(b.level) == 0) & found] = np.nan
        values[judged.relevant(b.level) == 0] = 0.0
        out[m] = values
    return out


def scores_retrieved(
    judged: _Judgments, ranking: Mapping[str, Mapping[str, float]], query_ids: list[str], level: int
) -> list[bool]:
    """Per query (in ``query_ids``' order): whether the ranking holds a document labelled ``level`` or
    above."""
    out = []
    for q in query_ids:
        docs, ranked = judged.data.get(q, {}), ranking.get(q, {})
        out.append(any(v >= level and d in ranked for d, v in docs.items()))
    return out


def _check_keys(qrels: Any, run: Any) -> None:
    if set(qrels.keys()) != set(run.keys()):
        raise AssertionError(
            "Qrels and Run query ids do not match. Pass `make_comparable=True` to add empty results for "
            "queries missing from the run and remove those not appearing in qrels."
        )


def evaluate(
    qrels: Any,
    run: Any,
    metrics: list[str] | str,
    return_mean: bool = True,
    return_std: bool = False,
    threads: int = 0,
    save_results_in_run: bool = True,
    make_comparable: bool = False,
) -> Any:
    """ranx's ``evaluate``: ``metrics`` (a ranx metric string or a list of them) of ``run`` against
    ``qrels``.

    ``qrels`` and ``run``: :class:`Qrels` and :class:`Run`, ``{query: {document: value}}`` dicts, or
    ranx's arrays of (id, value) rows per query (a 3-D numpy array, a numba typed list, a list of 2-D
    arrays; a run's rows ranked as given). One metric gives a number, several a dict by metric string;
    ``return_mean=False`` gives each metric's per-query values (a numpy array in the qrels' query
    order), ``return_std=True`` a ``{"mean": ..., "std": ...}`` per metric. A :class:`Run` keeps the
    per-query values in ``run.scores[metric][query]`` and the means in ``run.mean_scores`` (unless
    ``save_results_in_run=False``). Queries must be the same in both (an ``AssertionError``, as in ranx)
    unless ``make_comparable=True``, which gives the run an empty ranking for each query it lacks and
    drops the queries the qrels lack, in place. ``threads`` is accepted and ignored.
    """
    import numpy as np

    if not return_mean:
        return_std = False
    if make_comparable and isinstance(qrels, Qrels) and isinstance(run, Run):
        run = run.make_comparable(qrels)
    if isinstance(qrels, (Qrels, Mapping)) and isinstance(run, (Run, Mapping)):
        _check_keys(qrels, run)
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not all(isinstance(m, str) for m in names):
        raise AssertionError("Metrics error")
    scores = per_query(qrels, run, names)
    if isinstance(run, Run) and save_results_in_run:
        ids = run.get_query_ids()
        judged = (
            qrels.get_query_ids()
            if isinstance(qrels, Qrels)
            else list(qrels)
            if isinstance(qrels, Mapping)
            else ids
        )
        where = {q: i for i, q in enumerate(judged)}
        for m, values in scores.items():
            ordered = values[[where[q] for q in ids]] if judged != ids else values
            run.mean_scores[m] = np.mean(ordered)
            if return_std:
                run.std_scores[m] = np.std(ordered)
            run.scores[m].update(zip(ids, ordered, strict=True))
    out: dict[str, Any] = dict(scores)
    if return_mean:
        for m, values in scores.items():
            out[m] = {"mean": np.mean(values), "std": np.std(values)} if return_std else np.mean(values)
    return out[names[-1]] if len(names) == 1 else out
