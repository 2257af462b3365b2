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
  and a ``relevance_level`` that is 0 or beyond a C int a ``TypeError``, as in pytrec_eval; a negative
  one too (pytrec_eval reads it as 2**32 + level, at which nothing is relevant, and crashes on bpref).
  Parameters trec_eval 9 computes that irspec's own specs refuse as meaningless give pytrec_eval's
  values: ``set_F.0`` (F with beta² = 0, which is P), ``Rprec_mult.0`` (0), recall levels above 1
  (``iprec_at_recall.1.5``, ``11pt_avg.2``), ``utility`` without its four coefficients (0.0).
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

The inputs are read by pytrec_eval's rules: query and document ids are strings, judgments and
rankings are mappings, labels integers (``True`` and ``False`` are 1 and 0) and scores numbers; a query
without judgments is left out of the qrels whatever its key. What pytrec_eval refuses with a
``TypeError`` is refused with an :class:`~irspec.errors.InputTypeError`, a ``TypeError`` that is an
irspec ``InputError`` too, whose message starts with pytrec_eval's words and names the query and
document. Every query id of a run is checked, and that its ranking is a mapping; the rankings of the
queries the qrels do not judge are not read further (pytrec_eval reads them all: reading what is not
evaluated would cost as much as evaluating it). The checks of the rankings read run only when
irspec's fast reader of dicts cannot read them (every docno a string and every score a number pass
them), so they cost good input nothing.

Where pytrec_eval has no defined answer, this module gives irspec's: an empty ranking that is the first
query pytrec_eval evaluates (it reads stale memory or crashes), a query whose labels are all negative
(uninitialised memory), and measure parameters that trec_eval 9 cannot read (``P.0``, ``ndcg.2``: it
aborts the process), here a ``ValueError`` at construction. Inputs differ at the edges, each on purpose
(``docs/coming-from/pytrec_eval.md`` lists them, ``tests/test_hostile_api.py`` holds them):
pytrec_eval reads scores into a C ``float``, so scores that differ only beyond single precision tie
there (irspec ranks by the double); irspec refuses NaN and infinite scores and one too large for a
double (an ``InputError`` naming the query and document); it reads numbers pytrec_eval refuses with a
``TypeError`` (numpy numbers of any precision, a ``Fraction``; numpy integers and integral floats as
labels; any mapping where pytrec_eval takes only a dict), labels beyond a C int as the 64-bit integers
they are (pytrec_eval misreads them), and ids with a NUL character whole (pytrec_eval cuts them there);
an id holding a lone surrogate, on which pytrec_eval crashes, is an ``InputError`` naming it.
:func:`compute_aggregated_measure` averages as pytrec_eval does, with numpy's pairwise sum (irspec's
own means add left to right, as trec_eval does). A ``RelevanceEvaluator`` is not to be shared between
threads (nor is pytrec_eval's).

Importing this module loads neither pytrec_eval nor numpy: irspec's engine is loaded by the first
``RelevanceEvaluator``.
"""

from __future__ import annotations

import collections
import functools
import itertools
import math
import operator
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from irspec.errors import InputError, InputTypeError, IrspecError, IrspecWarning, quote
from irspec.evaluation.pure import evaluate_pure, pure_judgments, pure_rankings
from irspec.lazy import collector_paused

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

_DIGITS = frozenset("0123456789")


def _parameters(name: str, at: int) -> str | None:
    """A measure's parameters as pytrec_eval reads them from its name at ``at``: after "." or "_", numbers
    (``5``, ``0.25``) separated by commas; what follows them is ignored ("P_5x" is P_5), as pytrec_eval's
    match at the start does (its pattern ``[._]([0-9]+(?:\\.[0-9]+)?(?:,[0-9]+(?:\\.[0-9]+)?)*)``, read by
    hand: compiling it was ~0.2 ms of every BEIR evaluation's process). ``None`` when there are none."""
    if at >= len(name) or name[at] not in "._":
        return None
    end = _number_end(name, at + 1)
    if end is None:
        return None
    while end < len(name) and name[end] == ",":
        after = _number_end(name, end + 1)
        if after is None:
            break
        end = after
    return name[at + 1 : end]


def _number_end(name: str, i: int) -> int | None:
    """Where a number (``[0-9]+(\\.[0-9]+)?``) starting at ``i`` of ``name`` ends; ``None`` for no digit."""
    j = i
    while j < len(name) and name[j] in _DIGITS:
        j += 1
    if j == i:
        return None
    if j + 1 < len(name) and name[j] == "." and name[j + 1] in _DIGITS:
        j += 2
        while j < len(name) and name[j] in _DIGITS:
            j += 1
    return j


# A document id for the queries whose ranking is empty, evaluated with every ranking cut to depth 0.
_PLACEHOLDER = "irspec.compat: empty ranking"


class _Key:
    """One key of a query's result: ``metric`` is the irspec metric it shows (None for text measures,
    0.0), ``log`` when pytrec_eval gives trec_eval's per-query term of a geometric mean. (A plain class:
    a frozen one's fields are read when the module loads, ~0.1 ms of every BEIR evaluation.)"""

    __slots__ = ("log", "metric", "trec_name")

    def __init__(self, trec_name: str, metric: Any = None, log: bool = False) -> None:
        self.trec_name = trec_name  # the key, as the attribute report.trec.trec_order sorts by
        self.metric = metric
        self.log = log


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
            params = _parameters(name, len(base)) if name.startswith(base) else None
            if params:
                found.setdefault(base, set()).update(params.split(","))
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
    from irspec.spec.plugins import trec_eval_registry

    registry = trec_eval_registry()
    keys: list[_Key] = []
    for base, given in requested.items():
        if base == "utility" and given and len(given) != 4:  # trec_eval 9 computes nothing: 0.0
            keys.append(_Key(base))
            continue
        beyond, params = _beyond_range(base, given)
        keys.extend(beyond)
        spec = _spec(base, params) if params or not beyond else None
        if spec is None:
            if not beyond:
                keys.append(_Key(base))
            continue
        try:
            metrics = registry.parse(spec, trec=True)
            if base in _TREC9:
                metrics = [registry.parse(_with_trec9(m))[0] for m in metrics]
        except IrspecError as e:
            raise ValueError(f"unsupported measure {base}.{','.join(given)}: {e}") from None
        for m in metrics:
            name = m.trec_name if base in _INT_CUTOFFS | _FLOAT_CUTOFFS else base
            assert name is not None  # every measure with a cutoff has a trec_eval name
            keys.append(_Key(name, m, m.aggregate == "gmean"))
    return trec_order(keys)


# The measures irspec.evaluation.pure computes: each trec_eval name with its metric there, and whether
# it takes cutoffs (trec_eval's defaults when none are given).
_PURE = {
    "P": ("P", True),
    "recall": ("R", True),
    "map_cut": ("AP", True),
    "ndcg_cut": ("nDCG", True),
    "map": ("AP", False),
    "ndcg": ("nDCG", False),
    "recip_rank": ("RR", False),
}


def _pure_measures(requested: dict[str, list[str]]) -> list[tuple[str, tuple[str, int | None]]] | None:
    """The keys of ``requested`` in trec_eval's order, as :func:`_keys` gives them, each with its metric
    of :mod:`irspec.evaluation.pure`, when that module computes every measure; ``None`` otherwise (the
    engine then reads them, and names what is wrong with them). Cutoffs trec_eval 9 cannot read are the
    ``ValueError`` of :func:`_keys`."""
    from irspec.builtin._common import TREC_CUTOFFS
    from irspec.report.trec import trec_order
    from irspec.spec.definitions import MAX_COUNT

    if not requested or not requested.keys() <= _PURE.keys():
        return None
    keys = []
    for base, params in requested.items():
        kind, cut = _PURE[base]
        if not cut:
            if base == "ndcg" and params:  # label=gain pairs
                return None
            keys.append(_Key(base, (kind, None)))
            continue
        spec = _spec(base, params)
        assert spec is not None  # not a text measure
        cutoffs = [int(c) for c in (spec.split(".", 1)[1].split(",") if params else TREC_CUTOFFS)]
        if max(cutoffs) > MAX_COUNT:
            return None
        keys.extend(_Key(f"{base}_{k}", (kind, k)) for k in cutoffs)
    return [(k.trec_name, k.metric) for k in trec_order(keys)]


def _pure_first() -> bool:
    """Whether an evaluation the pure-Python path can compute is computed there: while numpy is not
    loaded, whose import costs more than that evaluation (once it is, the engine is the faster). Both
    give the same values, bit for bit."""
    return "numpy" not in sys.modules


def _beyond_range(base: str, params: list[str]) -> tuple[list[_Key], list[str]]:
    """The keys of parameters trec_eval 9 computes that irspec's own specs refuse as meaningless, with
    their metrics built past the spec's range check (the kernels are defined there), and the parameters
    left for the spec: ``set_F.0`` (beta² = 0: F is P), ``Rprec_mult.0`` (rank floor(0.9) = 0: 0), a recall
    level above 1 (``iprec_at_recall.1.5``, ``11pt_avg.2``: trec_eval 9's c = floor(x·R + 0.9) beyond R
    gives 0, or at x < 1.1 the value at recall 1 for a small R). A level above 2 is computed at 2, which
    gives the same c beyond R for every R >= 1 (and R = 0 gives c = 0 at any level), and keeps x·R a
    count."""
    if base == "set_F" and params and _number(params[0]) == 0:
        return [_Key(base, _unchecked("F", beta=0.0))], []
    if base == "Rprec_mult" and any(_number(p) == 0 for p in params):
        zero = _unchecked("Rprec", mult=0.0)
        return [_Key(zero.trec_name or base, zero)], [p for p in params if _number(p) != 0]
    if base == "iprec_at_recall":
        over = sorted({_number(p) for p in params if _number(p) > 1})
        keys = [_Key(f"{base}_{x:.2f}", _unchecked("IPrec", recall=min(x, 2.0), trec9=True)) for x in over]
        return keys, [p for p in params if _number(p) <= 1]
    if base == "11pt_avg" and any(_number(p) > 1 for p in params):
        points = tuple(min(_number(p), 2.0) for p in params)
        return [_Key(base, _unchecked("11pt", points=points, trec9=True))], []
    return [], params


def _number(text: str) -> float:
    """A parameter as trec_eval 9 reads a float (C's atof of the digits :func:`_parameters` read)."""
    return float(text)


def _unchecked(name: str, **params: Any) -> Any:
    """Metric ``name`` with ``params``, bound without the range check of irspec's specs."""
    from irspec.spec.plugins import trec_eval_registry
    from irspec.spec.registry import Metric

    return Metric(name, tuple(sorted(params.items())), trec_eval_registry().definitions[name])


def _with_trec9(metric: Any) -> str:
    """``metric``'s canonical text with ``trec9=true`` added (``IPrec(trec9=true)@0.1``)."""
    text = str(metric)
    rest = text[len(metric.name) :]
    return (
        f"{metric.name}(trec9=true,{rest[1:]}" if rest.startswith("(") else f"{metric.name}(trec9=true){rest}"
    )


def _make_evaluator(qrels: Any, metrics: list[Any], **options: Any) -> Callable[[Any], tuple[list[str], Any]]:
    """The one call into irspec's evaluation: a function of a run (a dict of dicts, every query judged by
    the qrels) giving its query ids and their values (one row each, a column per metric), with the
    qrels indexed and the metrics bound once, as :class:`irspec.Evaluator` holds them. ``options`` are
    ``irspec.evaluate``'s (``relevance_level``, ``judged_only``, ``depth``).

    The run is read as ``irspec.evaluate`` reads a dict, its docnos left in the dicts, whenever it can
    be: then every docno is a string and every score a number, and nothing more is checked. When it
    cannot be, pytrec_eval's rules (:func:`_scores_checked`) run on it first, and irspec's reader of
    dicts names whatever else is wrong (a NaN score), so the checks cost nothing on good input.

    The engine's own steps are called, not :class:`irspec.Evaluator`'s: its module brings the readers of
    files, of several runs and of systems (~4 ms of a BEIR evaluation's whole process, issue 35). A run
    read from its dicts is ranked (:func:`~irspec.evaluation.ranking.build_context`) and its metrics
    computed (:func:`~irspec.evaluation.parts.context_values`) as every evaluation does, without the
    :class:`~irspec.evaluation.result.Result` around them: its warnings and its Judged@10 are those
    :meth:`RelevanceEvaluator.evaluate` would silence and drop (~0.4 ms of each evaluation of SciFact's
    shape, a tenth)."""
    from irspec.data import mapping_run
    from irspec.evaluation.compute import bind_metrics
    from irspec.evaluation.context import Options
    from irspec.evaluation.judgments import read_judgments
    from irspec.evaluation.parts import context_values, evaluate_parts, finish
    from irspec.evaluation.ranking import build_context

    settings = Options(**options, missing_queries="skip", judged_warning=None)
    bound = bind_metrics(metrics, qrels)
    judgments = read_judgments(qrels, bound)
    index = judgments.index
    wanted = index.judged_by_query()

    def evaluate(run: dict[str, Any]) -> tuple[list[str], Any]:
        read = mapping_run(run, wanted=wanted)
        if read is not None:
            ctx, _ = build_context(index, read, settings, judgments.inputs)
            values, _ = context_values(ctx, bound)
            return list(ctx.query_ids), values
        converted = _scores_checked(run, list(run))
        run = {q: converted.get(q, docs) for q, docs in run.items()} if converted else run
        name, source, runid, parts = evaluate_parts(index, run, bound, settings, inputs=judgments.inputs)
        result = finish(index, name, source, parts, bound, settings, judgments.inputs, runid=runid)
        return list(result.query_ids), result.values

    return evaluate


# The arguments as pytrec_eval's messages name them, the sources of the drop-in's errors.
_QRELS = "query_relevance"
_RUN = "scores"
_NO_SCORES = "Unable to extract query/object scores"  # pytrec_eval's words for a run it refuses


def _refused(source: str, reason: str, query: Any, detail: str) -> InputTypeError:
    """pytrec_eval's ``TypeError`` for ``reason`` (its own words), saying which query (a string id; a
    query id that is not one is named in ``detail``) and what is wrong."""
    return InputTypeError(f"{reason}: {detail}", source, query=query)


def _kind(x: Any) -> str:
    """``x``'s type for a message: ``an int``, ``a list``, ``None``."""
    if x is None:
        return "None"
    name = type(x).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _shown(x: Any) -> str:
    """``x`` for a message, its type first: ``a float 1.5``, ``a list [1]``, ``None``."""
    return "None" if x is None else f"{_kind(x)} {quote(x, 30)}"


def _int_argument(value: Any, name: str) -> int:
    """``value`` as an integer, as pytrec_eval's C code takes it (a ``TypeError`` otherwise, as there), the
    error naming the argument (Python's said "'str' object cannot be interpreted as an integer")."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(
            f"Argument {name} should be an integer, got {type(value).__name__} {value!r:.40}"
        ) from None


def _level(level: Any) -> int:
    """``relevance_level`` as pytrec_eval takes it: an integer (a ``TypeError`` otherwise) that is a C
    ``int`` at least 1. pytrec_eval refuses 0 and levels beyond a C int; a negative level it reads as
    2**32 + level, at which nothing is relevant, and crashes on some measures (bpref) and reads
    uninitialised memory for others (runid): no answer to give, so it is refused too."""
    level = _int_argument(level, "relevance_level")
    if level == 0:
        raise TypeError("Argument relevance_level should be positive.")
    if level < 0:
        raise TypeError(
            f"Argument relevance_level should be positive, got {level} (pytrec_eval reads it as "
            f"{level + 2**32}, at which nothing is relevant, and crashes on bpref)"
        )
    if level > _C_INT_MAX:
        raise TypeError(f"Argument relevance_level should be at most {_C_INT_MAX} (a C int), got {level}")
    return level


_C_INT_MAX = 2**31 - 1


def _doc_ids(docs: Mapping[Any, Any], query: str, source: str, reason: str) -> None:
    """Every document id of one query's dict a string (pytrec_eval's rule), and one UTF-8 can encode
    (pytrec_eval crashes on a lone surrogate; irspec's readers refuse it, naming it)."""
    from irspec.errors import bad_id, encodable

    try:
        text = "".join(docs)
    except TypeError:
        bad = next(d for d in docs if not isinstance(d, str))
        raise _refused(
            source, reason, query, f"document id {quote(bad)} is {_kind(bad)}, not a string"
        ) from None
    if not encodable(text):
        bad = next(d for d in docs if not encodable(d))
        raise InputError(bad_id("docnos", bad), source, query=query)


def _judgments(qrels: Mapping[Any, Any]) -> Mapping[Any, Any]:
    """``query_relevance`` checked as pytrec_eval checks it (a ``TypeError`` in its words, naming what
    it refuses): query and document ids strings, judgments dicts, labels integers. What irspec then
    reads: the mapping itself, or a copy without the queries that judge nothing (pytrec_eval leaves them
    out whatever their key) and with booleans as the integers pytrec_eval takes them for. Labels that
    pytrec_eval refuses but irspec reads exactly (numpy integers, integral floats) are read."""
    import numbers

    from irspec.errors import bad_id, encodable

    if _plain_judgments(qrels, encodable):
        return qrels
    kept: dict[Any, Any] = {}
    changed = False
    for q, docs in qrels.items():
        try:
            judged = len(docs)
        except TypeError:  # pytrec_eval asks for len() first, and raises Python's TypeError there
            raise _refused(
                _QRELS, "Expected dictionary as value", None, f"query {quote(q)} has {_shown(docs)}"
            ) from None
        if not judged:
            changed = True
            continue
        if not isinstance(q, str):
            raise _refused(
                _QRELS, "Expected string as key", None, f"query id {quote(q)} is {_kind(q)}, not a string"
            )
        if not encodable(q):
            raise InputError(bad_id("query ids", q), _QRELS)
        if not isinstance(docs, Mapping):
            raise _refused(
                _QRELS, "Expected dictionary as value", q, f"its judgments are {_shown(docs)}, not a dict"
            )
        _doc_ids(docs, q, _QRELS, "Expected mapping of document id to query relevance or matching score")
        kinds = set(map(type, docs.values()))
        if not kinds <= {int}:
            bad = next((d for d, v in docs.items() if not _integer(v, numbers)), None)
            if bad is not None:
                raise _refused(
                    _QRELS,
                    "Expected relevance to be integer",
                    q,
                    f"document {quote(bad)} has {_shown(docs[bad])}",
                )
            if bool in kinds:
                docs = {d: int(v) for d, v in docs.items()}
                changed = True
        kept[q] = docs
    return kept if changed else qrels


def _plain_judgments(qrels: Mapping[Any, Any], encodable: Callable[[str], bool]) -> bool:
    """Whether ``qrels`` pass :func:`_judgments` as they are, asked of every id and label at once by C
    loops (the query-by-query checks, which name what is wrong, cost several times more): string ids
    UTF-8 can encode, non-empty dicts of integer labels."""
    values = list(qrels.values())
    if set(map(type, qrels)) - {str} or set(map(type, values)) - {dict} or not all(map(len, values)):
        return False
    try:
        docs = "".join(itertools.chain.from_iterable(values))
    except TypeError:
        return False
    labels = set(map(type, itertools.chain.from_iterable(map(operator.methodcaller("values"), values))))
    return labels <= {int} and encodable(docs) and encodable("".join(qrels))


def _integer(x: Any, numbers: Any) -> bool:
    """Whether irspec reads ``x`` as a label: an integer (a bool too, as pytrec_eval), or a float that
    is one (``numbers``: the module, imported by the caller once)."""
    if isinstance(x, numbers.Integral):
        return True
    return isinstance(x, numbers.Real) and math.isfinite(x) and float(x).is_integer()


def _scores_checked(scores: Mapping[Any, Any], queries: list[Any]) -> dict[Any, Any]:
    """The rankings of ``queries`` (strings whose value is a mapping: :meth:`RelevanceEvaluator.evaluate`
    checked them) checked as pytrec_eval checks them (a ``TypeError`` in its words, naming what it
    refuses): document ids strings, scores numbers. Returns those that hold booleans, with the floats
    pytrec_eval takes them for. Scores pytrec_eval refuses but irspec reads (numpy numbers of any
    precision) are read."""
    import numbers

    from irspec.errors import bad_id, encodable

    converted: dict[Any, Any] = {}
    for q in queries:
        if not encodable(q):
            raise InputError(bad_id("query ids", q), _RUN)
        docs = scores[q]
        _doc_ids(docs, q, _RUN, _NO_SCORES)
        kinds = set(map(type, docs.values()))
        if kinds <= {float, int}:
            continue
        bad = next((d for d, v in docs.items() if not isinstance(v, numbers.Real)), None)
        if bad is not None:
            raise _refused(
                _RUN,
                _NO_SCORES,
                q,
                f"the score of document {quote(bad)} is {_shown(docs[bad])}, not a number",
            )
        if bool in kinds:
            converted[q] = {d: float(v) if type(v) is bool else v for d, v in docs.items()}
    return converted


class RelevanceEvaluator:
    """pytrec_eval's ``RelevanceEvaluator``: qrels and measures once, then :meth:`evaluate` per run.

    ``query_relevance`` is ``{query: {document: label}}``; ``measures`` an iterable of trec_eval measure
    names or nicknames (see the module's docstring); ``relevance_level`` the lowest relevant label (at
    least 1); ``judged_docs_only_flag`` trec_eval's -J (unjudged documents leave the rankings). The qrels
    are read, checked and indexed here, once. What pytrec_eval refuses with a ``TypeError`` is refused
    with an :class:`~irspec.errors.InputTypeError`, a ``TypeError`` that names the query and document.
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
        relevance_level = _level(relevance_level)
        judged_only = bool(_int_argument(judged_docs_only_flag, "judged_docs_only_flag"))
        # the first evaluator loads irspec's engine and registry, with the caller's dicts in memory
        with collector_paused():
            self._load(query_relevance, requested, relevance_level, judged_only)

    def _load(self, query_relevance: Any, requested: Any, relevance_level: int, judged_only: bool) -> None:
        judgments = _judgments(query_relevance)
        self._options = {"relevance_level": relevance_level, "judged_only": judged_only}
        self._requested = requested
        self._judgments = judgments
        self._engine_loaded = False
        # BEIR's measures (P, recall, map_cut, ndcg_cut; map, ndcg, recip_rank too) of int labels can be
        # computed without numpy (irspec.evaluation.pure): the engine is then loaded on first need
        self._pure = None if judged_only else _pure_measures(requested)
        if self._pure is not None and pure_judgments(judgments):
            # a copy, as the engine's index is: the caller's dicts may change after (pytrec_eval's may)
            self._judgments = {q: dict(labels) for q, labels in judgments.items()}
            self._names = [name for name, _ in self._pure]
            self._judged = frozenset(judgments)  # each with a judgment: _judgments left out the others
        else:
            self._pure = None
            self._load_engine()

    def _load_engine(self) -> None:
        """The engine's part of the evaluator: the measures bound, the qrels read and indexed."""
        from irspec.evaluation.judgments import read_judgments

        keys = _keys(self._requested)
        self._names = [k.trec_name for k in keys]
        # each distinct metric with its column in a result (a dict: list.index compared metrics field by
        # field, ~0.3 ms of a BEIR evaluation's process)
        column = {m: i for i, m in enumerate(dict.fromkeys(k.metric for k in keys if k.metric is not None))}
        self._metrics = list(column)
        # where each key's value is in a result's columns (a text key takes any, then 0.0), which keys
        # are 0.0 and which logarithms
        self._columns = [column[k.metric] if k.metric is not None else 0 for k in keys]
        self._texts = [i for i, k in enumerate(keys) if k.metric is None]
        self._logs = [i for i, k in enumerate(keys) if k.log]
        # read as irspec.evaluate reads them: a dict of plain ids and labels without polars (a small
        # evaluation never imports it)
        qrels = read_judgments(self._judgments, self._metrics).qrels
        self._judged = frozenset(qrels.query_ids)
        self._qrels = qrels
        self._evaluate = _make_evaluator(qrels, self._metrics, **self._options) if self._metrics else None
        self._engine_loaded = True

    @functools.cached_property
    def _evaluate_empty(self) -> Callable[[Any], tuple[list[str], Any]]:
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
        the qrels judge, in the order of ``scores``; ``{}`` for an empty run. Every query id is checked
        to be a string and every ranking a mapping, as pytrec_eval checks them; the rankings of queries
        the qrels do not judge are not read further (pytrec_eval reads them all: reading what is not
        evaluated would cost as much as evaluating it)."""
        if not scores:
            return {}
        if not isinstance(scores, Mapping):
            raise InputTypeError("Argument object scores should be of type dictionary.", _RUN)
        from irspec.errors import bad_id, encodable

        judged = self._judged
        queries: list[str] = []
        for q, docs in scores.items():
            if type(q) is not str and not isinstance(q, str):  # str first: the check of a subclass is slower
                raise _refused(_RUN, _NO_SCORES, None, f"query id {quote(q)} is {_kind(q)}, not a string")
            if type(docs) is not dict and not isinstance(docs, Mapping):  # likewise dict
                raise _refused(_RUN, _NO_SCORES, q, f"its scores are {_shown(docs)}, not a dict")
            if q in judged:
                queries.append(q)
            elif not encodable(q):  # a judged one is encodable: the qrels' reader refuses any other
                raise InputError(bad_id("query ids", q), _RUN)
        if not queries:
            return {}
        if self._pure is not None and _pure_first() and pure_rankings(scores, queries):
            return self._per_query_pure(queries, scores)
        if not self._engine_loaded:
            with collector_paused():
                self._load_engine()
        if self._evaluate is None:  # text measures only (runid), or none: nothing else reads the run
            _scores_checked(scores, queries)
            return {q: dict.fromkeys(self._names, 0.0) for q in queries}
        ranked = {q: scores[q] for q in queries if scores[q]}
        empty = [q for q in queries if not scores[q]]
        return self._per_query(queries, ranked, empty)

    def _per_query_pure(self, queries: list[str], scores: Mapping[str, Any]) -> dict[str, dict[str, float]]:
        """:meth:`_per_query`'s values, computed without numpy (:mod:`irspec.evaluation.pure`)."""
        assert self._pure is not None  # evaluate() calls it only then
        metrics = [metric for _, metric in self._pure]
        level = self._options["relevance_level"]
        rows = evaluate_pure(self._judgments, scores, queries, metrics, level)
        names = self._names
        return {q: dict(zip(names, row, strict=True)) for q, row in zip(queries, rows, strict=True)}

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
        # The parts list their queries in an order of their own, the metrics in the order given: one
        # gather puts the rows in the run's order and the columns in the keys'.
        ids = [q for part_ids, _ in parts for q in part_ids]
        values = parts[0][1] if len(parts) == 1 else np.concatenate([part for _, part in parts])
        row = {q: i for i, q in enumerate(ids)}
        table = values[np.array([row[q] for q in queries])][:, self._columns]
        if self._logs:
            from irspec.evaluation.means import floored_logs  # loaded with the engine already

            for j in self._logs:  # the C library's log, as trec_eval's (numpy's differs in the last bit)
                table[:, j] = floored_logs(table[:, j])
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
