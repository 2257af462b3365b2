"""pytrec_eval's API on irspec's engine: code written against pytrec_eval changes one line.

>>> import irspec.compat.pytrec_eval as pytrec_eval
>>> evaluator = pytrec_eval.RelevanceEvaluator({"q1": {"d1": 1, "d2": 0}}, {"P.1", "map"})
>>> evaluator.evaluate({"q1": {"d1": 0.5, "d2": 0.9}, "q9": {"d1": 1.0}})
{'q1': {'map': 0.5, 'P_1': 0.0}}

The names, arguments, result keys and rules are pytrec_eval's (0.5, with its trec_eval 9):

- ``RelevanceEvaluator(query_relevance, measures, relevance_level=1, judged_docs_only_flag=False)``
  takes measures as trec_eval names, alone (``"map"``, ``"P"``: its default cutoffs), with parameters
  (``"ndcg_cut.1,4"``, ``"P_5"``, ``"iprec_at_recall.0.25"``), or as nicknames (``"official"``,
  ``"all_trec"``, ``"set"``: :data:`supported_nicknames`). An unknown name is a ``ValueError`` there,
  and a ``relevance_level`` below 1 a ``TypeError``, as in pytrec_eval.
- ``evaluate(run)`` returns ``{query: {key: value}}`` for the queries of the run, in the run's order,
  that the qrels judge (a query whose judgments are an empty dict is not judged); an empty ranking is
  evaluated as one (0 on most measures). An empty run gives ``{}``; an empty set of measures gives each
  such query ``{}``. Keys are trec_eval's printed names: ``P_5``, ``ndcg_cut_10``,
  ``iprec_at_recall_0.10``, ``Rprec_mult_0.20``, ``success_1``; a measure with one value whatever its
  parameters keeps its bare name (``11pt_avg``, ``set_F``, ``utility``). As in pytrec_eval, ``gm_map``
  and ``gm_bpref`` give trec_eval's per-query term log(max(value, 1e-5)), ``num_q`` gives 1, and
  ``runid`` and ``relstring``, which are text, give 0.0. Nothing is averaged and nothing is warned of.

Which trec_eval: the values are trec_eval 10's (irspec's) wherever trec_eval 9 agrees with it, which is
every measure pytrec_eval has but two. ``iprec_at_recall`` and ``11pt_avg`` take the c-th relevant
document with trec_eval 9's c = floor(x·R + 0.9), not trec_eval 10's lround(x·R), and are NaN (0/0)
on an empty ranking where c = 0: pytrec_eval's values, which code moving from pytrec_eval has been
comparing with (irspec computes them as ``IPrec(trec9=true)`` and ``11pt(trec9=true)``). ``irspec.evaluate``
gives trec_eval 10's.

Where pytrec_eval has no defined answer, this module gives irspec's: an empty ranking that is the first
query pytrec_eval evaluates (it reads stale memory or crashes), a query whose labels are all negative
(uninitialised memory), and measure parameters that trec_eval 9 cannot read (``P.0``, ``ndcg.2``: it
aborts the process), here a ``ValueError`` at construction, as are parameters irspec refuses
(``iprec_at_recall`` above 1, ``utility`` without its four coefficients, where pytrec_eval gives 0.0).
Inputs differ at the edges: pytrec_eval reads scores into a C ``float``, so scores that differ only
beyond single precision tie there (irspec ranks by the double); irspec refuses NaN and infinite scores
and fractional labels (an ``InputError`` naming the query and document, where pytrec_eval raises
``TypeError`` on a non-integer label) and reads integer document ids as their decimal text.
:func:`compute_aggregated_measure` averages as pytrec_eval does, with numpy's pairwise sum (irspec's
own means add left to right, as trec_eval does). A ``RelevanceEvaluator`` is not to be shared between
threads (nor is pytrec_eval's).

Importing this module loads neither pytrec_eval nor numpy: irspec's engine is loaded by the first
``RelevanceEvaluator``.
"""

from __future__ import annotations

import collections
import functools
import operator
import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from irspec.errors import IrspecError, IrspecWarning

__all__ = [
    "RelevanceEvaluator",
    "compute_aggregated_measure",
    "parse_qrel",
    "parse_run",
    "supported_measures",
    "supported_nicknames",
]

supported_measures: set[str] = {
    "11pt_avg", "G", "P", "Rndcg", "Rprec", "Rprec_mult", "binG", "bpref", "gm_bpref", "gm_map", "infAP",
    "iprec_at_recall", "map", "map_cut", "ndcg", "ndcg_cut", "ndcg_rel", "num_nonrel_judged_ret", "num_q",
    "num_rel", "num_rel_ret", "num_ret", "recall", "recip_rank", "relative_P", "relstring", "runid", "set_F",
    "set_P", "set_map", "set_recall", "set_relative_P", "success", "utility",
}  # fmt: skip
"""The measures pytrec_eval computes: trec_eval 9's ``all_trec``."""

supported_nicknames: dict[str, set[str]] = {
    "official": {
        "P", "Rprec", "bpref", "gm_map", "iprec_at_recall", "map", "num_q", "num_rel", "num_rel_ret", "num_ret",
        "recip_rank", "runid",
    },
    "set": {
        "num_q", "num_rel", "num_rel_ret", "num_ret", "runid", "set_F", "set_P", "set_map", "set_recall",
        "set_relative_P", "utility",
    },
    "all_trec": set(supported_measures),
    # trec_eval 9's preference and judgment-group sets: pytrec_eval lists them, and refuses their
    # measures (not in supported_measures), as this module does
    "all_prefs": {
        "num_q", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_avgjg_Rnonrel_ret", "prefs_avgjg_imp",
        "prefs_avgjg_ret", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_num_prefs_poss", "prefs_pair",
        "prefs_pair_imp", "prefs_pair_ret", "prefs_simp", "prefs_simp_imp", "prefs_simp_ret", "runid",
    },
    "prefs": {
        "num_q", "prefs_avgjg", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_num_prefs_poss",
        "prefs_pair", "prefs_simp", "runid",
    },
    "qrels_jg": {"P_avgjg", "Rprec_mult_avgjg", "map_avgjg", "num_q", "runid"},
}  # fmt: skip
"""pytrec_eval's nicknames: each stands for the measures of its set."""

# How trec_eval 9 reads each measure's parameters, for the measures that take any (the others ignore
# theirs): one value per cutoff, the key naming it (P_5); or one value whatever the parameters, the key
# the bare name (set_F). Label=gain pairs (G, ndcg, ...) cannot be written in a name pytrec_eval accepts.
_INT_CUTOFFS = frozenset({"P", "recall", "map_cut", "ndcg_cut", "relative_P", "success"})
_FLOAT_CUTOFFS = frozenset({"iprec_at_recall", "Rprec_mult"})
_FLOAT_PARAMS = frozenset({"11pt_avg", "set_F", "utility"})
_GAIN_PAIRS = frozenset({"G", "ndcg", "ndcg_rel", "Rndcg"})
_TEXT = frozenset({"runid", "relstring"})  # trec_eval prints text; pytrec_eval's number stays 0.0
_TREC9 = frozenset({"iprec_at_recall", "11pt_avg"})  # where trec_eval 9's values differ from 10's

# A measure's parameters as pytrec_eval reads them from its name: after "." or "_", numbers separated
# by commas; what follows them is ignored ("P_5x" is P_5), as pytrec_eval's match at the start does.
_PARAMETERS = re.compile(r"[._]([0-9]+(?:\.[0-9]+)?(?:,[0-9]+(?:\.[0-9]+)?)*)")

# A document id for the queries whose ranking is empty, evaluated with every ranking cut to depth 0.
_PLACEHOLDER = "irspec.compat: empty ranking"


@dataclass(frozen=True)
class _Key:
    """One key of a query's result: ``metric`` is the irspec metric it shows (None for text measures,
    0.0), ``log`` when pytrec_eval gives trec_eval's per-query term of a geometric mean."""

    trec_name: str  # the key, as the attribute report.trec.trec_order sorts by
    metric: Any = None
    log: bool = False


def _requested(measures: Iterable[str]) -> dict[str, list[str]]:
    """pytrec_eval's reading of ``measures``: each measure name with the parameters given to it (the
    union over every spelling of it, sorted as strings, as pytrec_eval hands them to trec_eval)."""
    names: set[str] = set()
    for m in measures:
        names |= supported_nicknames.get(m, {m})
    found: dict[str, set[str]] = {}
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"a measure is a string, not {type(name).__name__} ({name!r})")
        if name in supported_measures:
            found.setdefault(name, set())
            continue
        for base in supported_measures:
            params = _PARAMETERS.match(name, len(base)) if name.startswith(base) else None
            if params:
                found.setdefault(base, set()).update(params.group(1).split(","))
                break
        else:
            raise ValueError(f"unsupported measure {name}")
    return {base: sorted(params) for base, params in found.items()}


def _spec(base: str, params: list[str]) -> str | None:
    """The irspec spec (trec_eval's dotted form) of measure ``base`` given ``params``; ``None`` for a
    text measure. Parameters trec_eval 9 would fail on are a ``ValueError``."""
    if base in _TEXT:
        return None
    if not params:
        return base
    if base in _INT_CUTOFFS:
        cutoffs = sorted(int(p.split(".")[0]) for p in params)  # C's atol: the digits before any point
        if cutoffs[0] < 1 or len(set(cutoffs)) < len(cutoffs):
            raise ValueError(f"{base}: cutoffs must be distinct integers >= 1, got {','.join(params)}")
        return f"{base}.{','.join(map(str, cutoffs))}"
    if base in _FLOAT_CUTOFFS:
        if len({float(p) for p in params}) < len(params):
            raise ValueError(f"{base}: cutoffs must be distinct, got {','.join(params)}")
        return f"{base}.{','.join(sorted(params, key=float))}"
    if base in _GAIN_PAIRS:
        raise ValueError(f"{base}: takes label=gain pairs, not {','.join(params)}")
    if base == "set_F":  # trec_eval 9 reads the first parameter only
        return f"set_F.{params[0]}"
    if base in _FLOAT_PARAMS:
        if base == "utility" and len(params) != 4:
            raise ValueError(f"utility: takes 4 coefficients, got {','.join(params)}")
        return f"{base}.{','.join(params)}"
    return base  # a measure without parameters ignores them


def _keys(requested: dict[str, list[str]]) -> list[_Key]:
    """Every key of a query's result, with the irspec metric it shows, in trec_eval's order."""
    from irspec.report.trec import trec_order
    from irspec.spec.plugins import get_registry

    registry = get_registry()
    keys: list[_Key] = []
    for base, params in requested.items():
        spec = _spec(base, params)
        if spec is None:
            keys.append(_Key(base))
            continue
        try:
            metrics = registry.parse(spec, trec=True)
            if base in _TREC9:
                metrics = [registry.parse(_with_trec9(m))[0] for m in metrics]
        except IrspecError as e:
            raise ValueError(f"unsupported measure {base}.{','.join(params)}: {e}") from None
        for m in metrics:
            name = m.trec_name if base in _INT_CUTOFFS | _FLOAT_CUTOFFS else base
            assert name is not None  # every measure with a cutoff has a trec_eval name
            keys.append(_Key(name, m, m.aggregate == "gmean"))
    return trec_order(keys)


def _with_trec9(metric: Any) -> str:
    """``metric``'s canonical text with ``trec9=true`` added (``IPrec(trec9=true)@0.1``)."""
    text = str(metric)
    rest = text[len(metric.name) :]
    return (
        f"{metric.name}(trec9=true,{rest[1:]}" if rest.startswith("(") else f"{metric.name}(trec9=true){rest}"
    )


def _make_evaluator(qrels: Any, metrics: list[Any], **options: Any) -> Callable[[Any], Any]:
    """The one call into irspec's evaluation: a function of a run giving its result (queries the qrels
    lack are left out, and Judged@10 is not warned of), from an :class:`irspec.Evaluator` that holds
    the qrels' index and the metrics. ``options`` are ``irspec.evaluate``'s (``relevance_level``,
    ``judged_only``, ``depth``)."""
    from irspec.evaluation.evaluator import Evaluator

    return Evaluator(qrels, metrics, judged_warning=None, missing_queries="skip", **options).evaluate


class RelevanceEvaluator:
    """pytrec_eval's ``RelevanceEvaluator``: qrels and measures once, then :meth:`evaluate` per run.

    ``query_relevance`` is ``{query: {document: label}}``; ``measures`` an iterable of trec_eval measure
    names or nicknames (see the module's docstring); ``relevance_level`` the lowest relevant label (at
    least 1); ``judged_docs_only_flag`` trec_eval's -J (unjudged documents leave the rankings). The qrels
    are read, checked and indexed here, once.
    """

    def __init__(
        self,
        query_relevance: Mapping[str, Mapping[str, int]],
        measures: Iterable[str],
        relevance_level: int = 1,
        judged_docs_only_flag: bool = False,
    ) -> None:
        requested = _requested(measures)
        if not isinstance(query_relevance, Mapping):
            raise TypeError("Argument query_relevance should be of type dictionary.")
        relevance_level = operator.index(relevance_level)
        judged_only = bool(operator.index(judged_docs_only_flag))
        if relevance_level < 1:
            raise TypeError("Argument relevance_level should be positive.")
        from irspec.data import read_qrels
        from irspec.evaluation.means import GMEAN_FLOOR

        keys = _keys(requested)
        self._names = [k.trec_name for k in keys]
        self._metrics = list(dict.fromkeys(k.metric for k in keys if k.metric is not None))
        # where each key's value is in a result's columns (a text key takes any, then 0.0), which keys
        # are 0.0 and which logarithms
        self._columns = [self._metrics.index(k.metric) if k.metric is not None else 0 for k in keys]
        self._texts = [i for i, k in enumerate(keys) if k.metric is None]
        self._logs = [i for i, k in enumerate(keys) if k.log]
        self._floor = GMEAN_FLOOR
        qrels = read_qrels(query_relevance)
        self._judged = frozenset(qrels.query_ids)
        self._qrels = qrels
        self._options = {"relevance_level": relevance_level, "judged_only": judged_only}
        self._evaluate = _make_evaluator(qrels, self._metrics, **self._options) if self._metrics else None

    @functools.cached_property
    def _evaluate_empty(self) -> Callable[[Any], Any]:
        """Queries whose ranking is empty, evaluated with every ranking cut to nothing (trec_eval's -M 0):
        a run without documents for a query has no rows to read it from. Made on first need, since most
        runs have none (an evaluator indexes the qrels)."""
        return _make_evaluator(self._qrels, self._metrics, depth=0, **self._options)

    def __repr__(self) -> str:
        shown = ", ".join(self._names[:6]) + (
            f", ... ({len(self._names)} keys)" if len(self._names) > 6 else ""
        )
        return f"<irspec.compat.pytrec_eval.RelevanceEvaluator: {len(self._judged)} judged queries; {shown}>"

    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
        """``{query: {key: value}}`` for the queries of ``scores`` (``{query: {document: score}}``) that
        the qrels judge, in the order of ``scores``; ``{}`` for an empty run."""
        if not scores:
            return {}
        if not isinstance(scores, Mapping):
            raise TypeError("Argument object scores should be of type dictionary.")
        queries = [q for q in scores if q in self._judged]
        if not queries:
            return {}
        ranked: dict[str, Mapping[str, float]] = {}
        empty: list[str] = []
        for q in queries:
            docs = scores[q]
            if type(docs) is not dict and not isinstance(
                docs, Mapping
            ):  # dict first: the ABC check is slower
                raise TypeError(f"Unable to extract query/object scores: query {q!r} has no dict of scores.")
            if docs:
                ranked[q] = docs
            else:
                empty.append(q)
        if self._evaluate is None:  # text measures only (runid), or none
            return {q: dict.fromkeys(self._names, 0.0) for q in queries}
        return self._per_query(queries, ranked, empty)

    def _per_query(
        self, queries: list[str], ranked: dict[str, Any], empty: list[str]
    ) -> dict[str, dict[str, float]]:
        import numpy as np

        assert self._evaluate is not None  # evaluate() answers without one
        parts = []
        with warnings.catch_warnings():
            # What irspec would warn of (queries the run lacks, a level at which nothing is relevant)
            # pytrec_eval does not: the evaluation is the same, and silent.
            warnings.simplefilter("ignore", IrspecWarning)
            if ranked:
                parts.append(self._evaluate(ranked))
            if empty:
                parts.append(self._evaluate_empty({q: {_PLACEHOLDER: 0.0} for q in empty}))
        # The results list their queries sorted by id, the metrics in the order given: one gather puts
        # the rows in the run's order and the columns in the keys'.
        ids = [q for res in parts for q in res.query_ids]
        values = parts[0].values if len(parts) == 1 else np.concatenate([res.values for res in parts])
        row = {q: i for i, q in enumerate(ids)}
        table = values[np.array([row[q] for q in queries])][:, self._columns]
        if self._logs:
            table[:, self._logs] = np.log(np.maximum(table[:, self._logs], self._floor))
        if self._texts:
            table[:, self._texts] = 0.0
        names = self._names
        return {
            q: dict(zip(names, line, strict=True)) for q, line in zip(queries, table.tolist(), strict=True)
        }


def parse_run(f_run: Iterable[str]) -> collections.defaultdict[str, dict[str, float]]:
    """A run from the lines of a TREC run file (``query Q0 document rank score tag``), as pytrec_eval
    reads it: ``{query: {document: score}}``. A line without six fields is a ``ValueError``; a document
    given twice for a query an ``AssertionError``."""
    run: collections.defaultdict[str, dict[str, float]] = collections.defaultdict(dict)
    for line in f_run:
        query, _, document, _, score, _ = line.split()
        if document in run[query]:
            raise AssertionError(f"query {query}: document {document} given twice")
        run[query][document] = float(score)
    return run


def parse_qrel(f_qrel: Iterable[str]) -> collections.defaultdict[str, dict[str, int]]:
    """Qrels from the lines of a TREC qrels file (``query 0 document label``), as pytrec_eval reads them:
    ``{query: {document: label}}``. A line without four fields is a ``ValueError``; a document given
    twice for a query an ``AssertionError``."""
    qrels: collections.defaultdict[str, dict[str, int]] = collections.defaultdict(dict)
    for line in f_qrel:
        query, _, document, label = line.split()
        if document in qrels[query]:
            raise AssertionError(f"query {query}: document {document} judged twice")
        qrels[query][document] = int(label)
    return qrels


def compute_aggregated_measure(measure: str, values: list[float]) -> float:
    """The summary of a measure's per-query values, as pytrec_eval computes it: the sum for ``num_*``,
    exp of the mean for ``gm_*`` (whose per-query values are logarithms), else the mean; numpy's sums."""
    import numpy as np

    if measure.startswith("num_"):
        return float(np.sum(values))
    if measure.startswith("gm_"):
        return float(np.exp(np.sum(values) / len(values)))
    return float(np.mean(values))
