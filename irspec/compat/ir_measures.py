"""ir_measures' API on irspec's engine: code written against ir_measures changes one line.

>>> import irspec.compat.ir_measures as ir_measures
>>> from irspec.compat.ir_measures import AP, P, nDCG
>>> qrels = {"q1": {"d1": 2, "d2": 0, "d3": 1}}
>>> run = {"q1": {"d1": 0.5, "d2": 0.9, "d3": 0.1}}
>>> ir_measures.calc_aggregate([nDCG @ 10, AP, P(rel=2) @ 5], qrels, run)
{nDCG@10: 0.7039180890341347, AP: 0.5833333333333333, P(rel=2)@5: 0.2}

ir_measures 0.4.3's top level, under its names: the measures and their algebra (``nDCG@10``,
``AP(rel=2)``, ``P(rel=2)@5``, ``judged_only=``), ``parse_measure``, ``parse_trec_measure``,
``read_trec_qrels``, ``read_trec_run``, the ``Qrel``, ``ScoredDoc``, ``Metric`` and ``CalcResults``
records, and the pipeline's ``calc_aggregate``, ``iter_calc``, ``calc``, ``evaluator`` (qrels once, any
number of runs), ``run_inputs`` and ``qrel_inputs``. Qrels and runs are what ir_measures takes: named
tuples, pandas DataFrames with its columns, dicts of dicts. Results are ir_measures': aggregates keyed by
the measure objects given (floats, added in the order ir_measures adds them), ``Metric`` records per
query (a query's measures together, in the run's order of queries; then the qrels' queries the run lacks,
at the measure's ``DEFAULT``, as ir_measures yields them). A query a dict gives an empty ranking
(``{"q1": {}}``) is not one the run lacks: it is scored as an empty ranking (0 on most measures, ``NumQ``
1, ``NumRel`` R), as ir_measures' pytrec_eval provider scores it.

**Query ids** are strings or integers (pandas reads numeric topics as integers). An integer is read as its
decimal text, as ``irspec.evaluate`` reads it, so ``1`` and ``"1"`` are one query (ir_measures' pytrec_eval
provider refuses integers: ``TypeError: Expected string as key.``). The ``Metric`` records name a query by
the id the qrels give it, an integer staying an integer, as ir_measures' Python providers (``Judged``,
``RR@k``) give ids back: a query's records from irspec and from those providers name one query, and the
qrels' queries the run lacks come once. A query evaluated but not matched with an id of the run is an
error, never a ``DEFAULT``.

**Which measure objects.** Where ir_measures is installed, the measures are ir_measures' own classes
(``isinstance(nDCG, ir_measures.Measure)``), so that a measure made by ``from ir_measures import nDCG``
and one made here are equal, hash alike and key the same results: code that mixes them (PyTerrier passes
its own) finds its values. They are subclasses of ir_measures' that compute their own ``calc_aggregate``
and ``iter_calc`` here rather than in ir_measures. Where ir_measures is not installed, this module's light
equivalents (:mod:`irspec.compat.ir_measures_objects`) stand in, with the same names, parameters, text,
equality and hashing; the rest of ir_measures (``providers``, ``util``, ``define``) is not there.

**Which provider.** irspec computes every measure whose definition it shares with the provider
ir_measures would use (pytrec_eval's trec_eval measures, ``IPrec`` as trec_eval 9 computes it, gdeval's
``nDCG(dcg='exp-log2')``, msmarco's ``RR@k``, ``Compat``). The others, where irspec's definition differs on
purpose (``Judged``, gdeval's ``ERR``, cwl_eval's ``RBP`` and C/W/L measures, the diversity measures and
``Accuracy``), go to ir_measures' own providers when it is installed, as ir_measures would compute them,
and are irspec's own otherwise (docs/coming-from/ir_measures.md lists what differs).

**Inside ir_measures.** :func:`register` puts irspec's provider first in ir_measures' own default pipeline,
so that code calling ``ir_measures`` (PyTerrier's ``pt.Experiment`` among it) computes through irspec
without another change; ir_measures 0.4.3 reads no entry point for providers, so this is one call.

Importing this module loads neither numpy nor irspec's engine (ir_measures, where installed, is imported):
the engine is loaded by the first evaluation.
"""

from __future__ import annotations

import functools
import itertools
import numbers
import warnings
from collections.abc import Iterable, Iterator
from typing import Any

from irspec.compat import ir_measures_objects as _light
from irspec.errors import IrspecError, IrspecWarning

_peer: Any
try:
    import ir_measures as _peer
except ImportError:  # the light equivalents stand in
    _peer = None

__version__ = "0.4.3"
"""The version of ir_measures whose API this module follows."""

# Names ir_measures' definitions share with irspec's: the measures irspec computes first. A name left out
# is computed by ir_measures' own provider where it is installed (irspec differs there on purpose).
SHARED: frozenset[str] = frozenset(
    {
        "AP", "Bpref", "Compat", "IPrec", "NumQ", "NumRel", "NumRet", "P", "R", "RR", "Rprec", "SetAP",
        "SetF", "SetP", "SetR", "Success", "infAP", "nDCG",
    }
)  # fmt: skip
"""ir_measures' measure names irspec computes as ir_measures' provider does (and is first for)."""

if _peer is not None:
    Measure: Any = _peer.Measure
    BaseMeasure: Any = _peer.BaseMeasure
    ParamInfo: Any = _peer.ParamInfo
    MeanAgg: Any = _peer.MeanAgg
    SumAgg: Any = _peer.SumAgg
    Qrel: Any = _peer.Qrel
    ScoredDoc: Any = _peer.ScoredDoc
    Metric: Any = _peer.Metric
    CalcResults: Any = _peer.CalcResults
    _NOT_PROVIDED: Any = _peer.measures.base._NOT_PROVIDED
else:
    Measure = BaseMeasure = _light.Measure
    ParamInfo, MeanAgg, SumAgg = _light.ParamInfo, _light.MeanAgg, _light.SumAgg
    Qrel, ScoredDoc, Metric, CalcResults = _light.Qrel, _light.ScoredDoc, _light.Metric, _light.CalcResults
    _NOT_PROVIDED = _light.NOT_PROVIDED

read_trec_qrels = _light.read_trec_qrels
read_trec_run = _light.read_trec_run


class _Routed:
    """The methods of a measure that compute it, here rather than in ir_measures (mixed into subclasses of
    ir_measures' measure classes)."""

    def iter_calc(self, qrels: Any, run: Any) -> Iterator[Any]:
        """This measure's value on each query."""
        self.validate_params()  # type: ignore[attr-defined]
        return iter_calc([self], qrels, run)

    def calc_aggregate(self, qrels: Any, run: Any) -> Any:
        """This measure's aggregate over the queries."""
        return calc_aggregate([self], qrels, run)[self]

    def calc(self, qrels: Any, run: Any) -> Any:
        """This measure's aggregate and its per-query records."""
        aggregated, per_query = calc([self], qrels, run)
        return CalcResults(aggregated[self], per_query)

    def evaluator(self, qrels: Any) -> Any:
        """An evaluator of this measure on ``qrels``, for any number of runs."""
        return evaluator([self], qrels)


def _routed_registry() -> dict[str, Any]:
    """ir_measures' registry with each measure made an instance of a subclass of its class that computes
    here (aliases stay one object; a preset such as NumRelRet keeps its parameters)."""
    assert _peer is not None
    classes: dict[type, type] = {}
    found: dict[str, Any] = {}
    made: dict[int, Any] = {}
    for name, measure in _peer.measures.registry.items():
        cls = type(measure)
        if cls not in classes:
            qualname = cls.__name__
            classes[cls] = type(qualname, (_Routed, cls), {"__module__": __name__, "__qualname__": qualname})
            globals()[qualname] = classes[cls]  # found by pickle under its qualified name
        if id(measure) not in made:
            made[id(measure)] = classes[cls](**measure.params)
        found[name] = made[id(measure)]
    return found


registry: dict[str, Any] = _routed_registry() if _peer is not None else _light.registry
"""The measures by every name and alias ir_measures registers (``registry["MAP"] is registry["AP"]``)."""

globals().update(registry)  # nDCG, AP, P, ... as ir_measures' top level names them


def parse_measure(measure: Any) -> Any:
    """A measure from ir_measures' text (``"nDCG@10"``, ``"P(rel=2)@5"``), as ``ir_measures.parse_measure``
    reads it; a measure object is returned as it is. A ``ValueError`` for text that is no measure
    expression, a ``NameError`` for an unknown name."""
    return _light.parse_measure(measure, registry, Measure)


def parse_trec_measure(measure: str) -> list[Any]:
    """The measures a trec_eval name (``"map"``, ``"P.5,10"``, ``"ndcg_cut"``) or a pytrec_eval nickname
    (``"official"``) stands for, as ``ir_measures.parse_trec_measure`` reads it; a ``ValueError`` for a name
    it does not read."""
    return _light.parse_trec_measure(measure, registry)


# ---------------------------------------------------------------------------------------------------------
# The provider


class IrspecProvider:
    """irspec as an ir_measures provider: ``supports``, ``evaluator``, ``iter_calc``, ``calc_aggregate``,
    ``calc`` as ir_measures' providers have them. ``shared_only`` (the default) supports only the measures
    whose definition irspec shares with ir_measures' provider for them (:data:`SHARED`); without it, every
    measure irspec can compute (the pipeline of the drop-in without ir_measures)."""

    NAME = "irspec"
    SUPPORTED_MEASURES: list[Any] = []  # noqa: RUF012 (ir_measures' attribute: supports() decides here)

    def __init__(self, shared_only: bool = True) -> None:
        self.shared_only = shared_only

    def __repr__(self) -> str:
        return f"IrspecProvider(shared_only={self.shared_only})"

    def is_available(self) -> bool:
        """Always: irspec is here."""
        return True

    def initialize(self) -> None:
        """Nothing to load before the first evaluation."""

    def install_instructions(self) -> str:
        """How to install irspec."""
        return "pip install irspec"

    def supports(self, measure: Any) -> bool:
        """Whether irspec computes ``measure`` (its parameters checked first, an ``AssertionError`` naming
        an invalid one, as ir_measures' providers raise)."""
        measure.validate_params()
        return _metric_text(measure, self.shared_only) is not None

    def evaluator(self, measures: Iterable[Any], qrels: Any) -> IrspecEvaluator:
        """An evaluator of ``measures`` on ``qrels`` (read and indexed once) for any number of runs; a
        ``ValueError`` naming the measures irspec does not compute."""
        measures = list(dict.fromkeys(measures))
        unsupported = {m for m in measures if not self.supports(m)}
        if unsupported:
            raise ValueError(f"Unsupported measures {unsupported}.")
        return IrspecEvaluator(measures, qrels, self.shared_only)

    def iter_calc(self, measures: Iterable[Any], qrels: Any, run: Any) -> Iterator[Any]:
        """The per-query :class:`Metric` records of ``measures`` on ``run``."""
        return self.evaluator(measures, qrels).iter_calc(run)

    def calc_aggregate(self, measures: Iterable[Any], qrels: Any, run: Any) -> dict[Any, Any]:
        """The aggregates of ``measures`` on ``run``, keyed by the measures."""
        return self.evaluator(measures, qrels).calc_aggregate(run)

    def calc(self, measures: Iterable[Any], qrels: Any, run: Any) -> Any:
        """The aggregates and the per-query records of ``measures`` on ``run``."""
        return self.evaluator(measures, qrels).calc(run)

    def run_inputs(self, measures: Iterable[Any]) -> list[str]:
        """The run's columns the measures need."""
        return ["query_id", "doc_id", "score"]

    def qrel_inputs(self, measures: Iterable[Any]) -> list[str]:
        """The qrels' columns the measures need."""
        return ["query_id", "doc_id", "relevance"]


PROVIDER = IrspecProvider()
"""The provider :func:`register` puts first in ir_measures' default pipeline."""


@functools.lru_cache(maxsize=1024)
def _text_of(name: str, text: str, shared_only: bool) -> str | None:
    """The irspec spec of the ir_measures measure named ``name`` printed ``text``, or None when irspec
    does not compute it (or, ``shared_only``, computes it otherwise than ir_measures' provider)."""
    if shared_only and name not in SHARED:
        return None
    from irspec.spec.plugins import get_registry

    try:
        (metric,) = get_registry().parse(text)
        if name == "IPrec":  # ir_measures computes it with pytrec_eval, whose trec_eval 9 differs from 10
            from irspec.compat.pytrec_eval import _with_trec9

            (metric,) = get_registry().parse(_with_trec9(metric))
    except (IrspecError, ValueError):
        return None
    if metric.definition.needs != "run":  # a plugin's input (subtopics, a log), not qrels and a run
        return None
    return str(metric)


def _metric_text(measure: Any, shared_only: bool) -> str | None:
    """The irspec spec of ``measure`` (an ir_measures measure), or None where irspec does not compute it."""
    name = getattr(measure, "NAME", None)
    if not isinstance(name, str):
        return None
    try:
        text = str(measure)
    except KeyError:  # a parameter the measure does not declare: ir_measures' validation says which
        return None
    return _text_of(name, text, shared_only)


class IrspecEvaluator:
    """Qrels read and indexed once, and measures bound once, for any number of runs: what
    :func:`evaluator` and :meth:`IrspecProvider.evaluator` return (ir_measures' ``Evaluator`` API).

    ``measures`` is the list of measure objects (results are keyed by them); ``qrel_qids`` the judged
    queries as the qrels give their ids (an integer stays an integer), each given its measures'
    ``DEFAULT`` when a run lacks it.
    """

    def __init__(self, measures: list[Any], qrels: Any, shared_only: bool = True) -> None:
        self.measures = measures
        # a measure's column in irspec's result; ``measures`` may be put in another order afterwards (the
        # pipeline puts them in the order the caller gave, where ir_measures' own gives a set's order)
        self._column = {m: j for j, m in enumerate(measures)}
        specs = [str(_metric_text(m, shared_only)) for m in measures]  # each supported, so a text
        qrels = _qrels_input(qrels)
        self._specs = specs
        self._evaluate = None
        # each judged query's id as the qrels give it, by irspec's text of it; None when they are that
        # text already (every id a string)
        self._given: dict[str, Any] | None = None
        self._judged: frozenset[str] = frozenset()  # irspec's text of each judged query's id
        self.qrel_qids: set[Any] = set()
        if qrels is not None:
            from irspec.evaluation.evaluator import Evaluator

            ev = Evaluator(qrels, specs, judged_warning=None, missing_queries="skip")
            self._qrels = ev.judgments.qrels
            self._judged = frozenset(ev.judgments.qrels.query_ids)
            given = _query_ids(qrels)
            if not all(isinstance(q, str) for q in given):
                self._given = {_id_text(q): q for q in given}
            texts = self._given
            self.qrel_qids = set(self._judged) if texts is None else {texts[q] for q in self._judged}
            self._evaluate = ev.evaluate

    def __repr__(self) -> str:
        return f"<irspec.compat.ir_measures evaluator: {len(self.qrel_qids)} judged queries; {self.measures}>"

    @functools.cached_property
    def _evaluate_empty(self) -> Any:
        """The evaluation of queries whose ranking is empty, with every ranking cut to nothing (trec_eval's
        -M 0): a run without documents for a query has no rows to read it from. Made on first need, from
        the qrels read already, since most runs have none."""
        from irspec.evaluation.evaluator import Evaluator

        return Evaluator(
            self._qrels, self._specs, judged_warning=None, missing_queries="skip", depth=0
        ).evaluate

    def _table(self, run: Any) -> tuple[list[Any], list[list[float]], list[Any]]:
        """The run's judged queries in the run's order, their values (a row per query, a column per
        measure) and the judged queries the run lacks, sorted; ids as the qrels give them."""
        if self._evaluate is None:
            return [], [], []
        run, order = _run_input(run)
        rows: list[list[float]] = []
        queries: list[str] = []  # irspec's text of each id
        if run is not None:
            given = order()
            # irspec reads an integer id as its decimal text: the run's ids are matched with the result's
            # by that text (as given, ``1`` would match nothing and the query get its DEFAULT)
            texts = given if all(isinstance(q, str) for q in given) else [_id_text(q) for q in given]
            # A dict's empty ranking ({qid: {}}) is a query given, not one the run lacks: ir_measures'
            # pytrec_eval scores it as an empty ranking (0 on most measures, NumQ 1, NumRel R), not at the
            # measure's DEFAULT. irspec's evaluation skips it with the queries the run lacks.
            empty = []
            if isinstance(run, dict):
                empty = [
                    t for t, docs in zip(texts, run.values(), strict=True) if not docs and t in self._judged
                ]
            with warnings.catch_warnings():
                # what irspec warns of (queries outside the qrels, a level nothing reaches) ir_measures does not
                warnings.simplefilter("ignore", IrspecWarning)
                result: Any = self._evaluate(run)  # one run: a Result
                ids, values = list(result.query_ids), result.values
                if empty:
                    import numpy as np

                    from irspec.compat.pytrec_eval import _PLACEHOLDER  # a docno no qrels judge

                    cut: Any = self._evaluate_empty({q: {_PLACEHOLDER: 0.0} for q in empty})
                    ids += cut.query_ids
                    values = np.concatenate([values, cut.values])
            position = {q: i for i, q in enumerate(ids)}
            queries = [q for q in dict.fromkeys(texts) if q in position]
            if len(queries) != len(position):
                unmatched = sorted(set(position).difference(queries))
                raise IrspecError(
                    f"irspec.compat.ir_measures: the run's query ids {unmatched[:5]} were evaluated but not found "
                    "among the ids the run gives (an id must be a string or an integer)"
                )
            if queries != ids:
                import numpy as np

                values = values[
                    np.fromiter((position[q] for q in queries), dtype=np.intp, count=len(queries))
                ]
            rows = values.tolist()
        missing = self._judged.difference(queries)
        if self._given is None:
            return queries, rows, sorted(missing)
        given_ids = self._given
        return [given_ids[q] for q in queries], rows, sorted((given_ids[q] for q in missing), key=_id_order)

    def iter_calc(self, run: Any) -> Iterator[Any]:
        """The :class:`Metric` records of ``run``: each query's measures together, queries in the run's
        order; then the judged queries the run lacks at each measure's ``DEFAULT`` (sorted by measure,
        then query), as ir_measures yields them."""
        queries, rows, missing = self._table(run)
        measures = self.measures
        columns = [self._column[m] for m in measures]
        for query, row in zip(queries, rows, strict=True):
            for measure, j in zip(measures, columns, strict=True):
                yield Metric(query, measure, row[j])
        # a stable sort by measure keeps each measure's queries in _table's order (sorted)
        for measure, query in sorted(itertools.product(measures, missing), key=lambda x: str(x[0])):
            yield Metric(query, measure, measure.DEFAULT)

    def calc_aggregate(self, run: Any) -> dict[Any, Any]:
        """Each measure's aggregate on ``run`` (its ``aggregator()``, fed the values in ``iter_calc``'s
        order, as ir_measures feeds it)."""
        _, rows, missing = self._table(run)
        found = {}
        for measure in self.measures:
            j = self._column[measure]
            agg = measure.aggregator()
            for row in rows:
                agg.add(row[j])
            for _ in missing:
                agg.add(measure.DEFAULT)
            found[measure] = agg.result()
        return found

    def calc(self, run: Any) -> Any:
        """The aggregates and the per-query records of ``run``."""
        per_query = list(self.iter_calc(run))
        aggregators = {m: m.aggregator() for m in self.measures}
        for metric in per_query:
            aggregators[metric.measure].add(metric.value)
        return CalcResults({m: a.result() for m, a in aggregators.items()}, per_query)


def _id_text(query_id: Any) -> Any:
    """irspec's text of a query id: a string as it is, an integer (not a bool) its decimal text, as irspec
    reads ids; anything else as it is (irspec's reader refuses it)."""
    if isinstance(query_id, str | bool) or not isinstance(query_id, numbers.Integral):
        return query_id
    return str(int(query_id))


def _id_order(query_id: Any) -> tuple[bool, Any]:
    """The order of query ids ir_measures sorts (integers as numbers), integers before strings where the
    qrels mix them (Python does not order an int and a str)."""
    return isinstance(query_id, str), query_id


def _query_ids(qrels: Any) -> list[Any]:
    """The distinct query ids of qrels as :func:`_qrels_input` gives them (a dict, a frame, a list of
    records), as they are there."""
    if isinstance(qrels, dict):
        return list(qrels)
    if hasattr(qrels, "itertuples"):
        return list(qrels["query_id"].unique().tolist())
    return list(dict.fromkeys(r.query_id for r in qrels))


_QREL_FIELDS = ("query_id", "doc_id", "relevance")
_RUN_FIELDS = ("query_id", "doc_id", "score")


def _qrels_input(qrels: Any) -> Any:
    """``qrels`` as irspec reads them (a frame cut to ir_measures' columns, a list of the records), or None
    when there are none. A frame without ir_measures' columns, or no qrels at all, is ir_measures'
    ``ValueError``."""
    if isinstance(qrels, dict):
        return qrels if any(qrels.values()) else None
    if hasattr(qrels, "itertuples"):
        missing = [f for f in _QREL_FIELDS if f not in qrels.columns]
        if missing:
            raise ValueError(
                f"unknown qrels format: DataFrame missing columns: {missing} (found {list(qrels.columns)})"
            )
        return qrels[list(_QREL_FIELDS)] if len(qrels) else None
    if hasattr(qrels, "__iter__") and not isinstance(qrels, str | bytes):
        rows = list(qrels)
        if rows and not (isinstance(rows[0], tuple) and hasattr(rows[0], "_fields")):
            raise ValueError("unknown qrels format: iterable not a namedtuple iterator")
        return rows or None
    raise ValueError(
        "unknown qrels format: unexpected format; please provide either: (1) an iterable of namedtuples "
        f"(fields {_QREL_FIELDS}, e.g., from ir_measures.Qrel); (2) a pandas DataFrame with columns "
        f"{_QREL_FIELDS}; or (3) a dict-of-dict"
    )


def _run_input(run: Any) -> tuple[Any, Any]:
    """``run`` as irspec reads it (None when empty) and a function giving its queries in the run's order
    (None: any order is the run's)."""
    if isinstance(run, dict):
        return (run if run else None), lambda: list(run)
    if hasattr(run, "itertuples"):
        missing = [f for f in _RUN_FIELDS if f not in run.columns]
        if missing:
            raise ValueError(
                f"unknown run format: DataFrame missing columns: {missing} (found {list(run.columns)})"
            )
        if not len(run):
            return None, None
        return run[list(_RUN_FIELDS)], lambda: run["query_id"].unique().tolist()
    if hasattr(run, "__iter__") and not isinstance(run, str | bytes):
        rows = list(run)
        if not rows:
            return None, None
        if not (isinstance(rows[0], tuple) and hasattr(rows[0], "_fields")):
            raise ValueError("unknown run format: iterable not a namedtuple iterator")
        return rows, lambda: list(dict.fromkeys(r.query_id for r in rows))
    raise ValueError(
        "unknown run format: unexpected format; please provide either: (1) an iterable of namedtuples "
        f"(fields {_RUN_FIELDS}, e.g., from ir_measures.ScoredDoc); (2) a pandas DataFrame with columns "
        f"{_RUN_FIELDS}; or (3) a dict-of-dict"
    )


# ---------------------------------------------------------------------------------------------------------
# The pipeline: irspec first, then (where ir_measures is installed) ir_measures' own providers

if _peer is not None:

    class _Pipeline(_peer.providers.FallbackProvider):
        """ir_measures' fallback pipeline, its evaluators' measures in the order the caller gave them (ir_measures'
        own makes them a set, so that its aggregates come back in no particular order)."""

        def _evaluator(self, measures: Iterable[Any], qrels: Any) -> Any:
            ordered = list(dict.fromkeys(measures))
            found = super()._evaluator(ordered, qrels)
            found.measures = [m for m in ordered if m in set(found.measures)]
            return found

    DefaultPipeline: Any = _Pipeline([PROVIDER, *_peer.DefaultPipeline.providers])
else:
    DefaultPipeline = IrspecProvider(shared_only=False)

evaluator = DefaultPipeline.evaluator
iter_calc = DefaultPipeline.iter_calc
calc_aggregate = DefaultPipeline.calc_aggregate
calc = DefaultPipeline.calc
run_inputs = DefaultPipeline.run_inputs
qrel_inputs = DefaultPipeline.qrel_inputs
if _peer is not None:
    calc_ctxt = DefaultPipeline.calc_ctxt  # deprecated in ir_measures 0.2.0, still there
_light.bind_pipeline(DefaultPipeline)


def register() -> None:
    """Put irspec's provider first in ir_measures' own default pipeline (and in its registry of providers,
    as ``"irspec"``), so that ``ir_measures.calc_aggregate``, ``iter_calc``, ``evaluator`` and every caller
    of them (PyTerrier's ``pt.Experiment``) compute through irspec the measures it shares with ir_measures'
    providers. Calling it again changes nothing; :func:`unregister` undoes it. An ``ImportError`` when
    ir_measures is not installed."""
    import ir_measures

    providers = ir_measures.DefaultPipeline.providers
    if PROVIDER not in providers:
        providers.insert(0, PROVIDER)
    registered: dict[str, Any] = ir_measures.providers.registry  # duck-typed: ir_measures calls its methods
    registered[PROVIDER.NAME] = PROVIDER


def unregister() -> None:
    """Take irspec's provider out of ir_measures' default pipeline and registry (nothing when it is not there)."""
    import ir_measures

    providers = ir_measures.DefaultPipeline.providers
    while PROVIDER in providers:
        providers.remove(PROVIDER)
    ir_measures.providers.registry.pop(PROVIDER.NAME, None)


__all__ = sorted(
    {
        "BaseMeasure", "CalcResults", "DefaultPipeline", "IrspecProvider", "MeanAgg", "Measure", "Metric",
        "PROVIDER", "ParamInfo", "Qrel", "SHARED", "ScoredDoc", "SumAgg", "calc", "calc_aggregate", "evaluator",
        "iter_calc", "parse_measure", "parse_trec_measure", "qrel_inputs", "read_trec_qrels", "read_trec_run",
        "register", "registry", "run_inputs", "unregister", *registry,
        *(_peer.__all__ if _peer is not None else ()),
    }
)  # fmt: skip


def __getattr__(name: str) -> Any:
    """ir_measures' other names (its providers, ``util``, ``define``...) where it is installed; measures by
    name (``ir_measures.nDCG``)."""
    if name in registry:
        return registry[name]
    if _peer is not None and not name.startswith("__"):
        return getattr(_peer, name)
    raise AttributeError(
        f"module {__name__!r} has no attribute {name!r}"
        + (
            ""
            if name.startswith("__")
            else " (ir_measures' providers and utilities need ir_measures installed)"
        )
    )
