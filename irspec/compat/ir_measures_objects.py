"""ir_measures' measure objects, records and readers, for ``irspec.compat.ir_measures`` without ir_measures.

Where ir_measures is installed the drop-in uses ir_measures' own measure classes (so that measures made
by either compare, hash and key results alike); where it is not, these stand in for them: the same names
and aliases (:data:`registry`), parameters (``SUPPORTED_PARAMS``, with ir_measures' types, defaults and
choices), the same algebra (``nDCG@10``, ``AP(rel=2)``, ``P(rel=2)@5``), text (``str`` and ``repr`` leave
out a parameter at its default and put the ``@`` value last, as ir_measures prints them), equality and
hash (by that text, as ir_measures compares), ``DEFAULT`` and aggregators (sums for the counts).
``tests/test_compat_ir_measures.py`` holds this table equal to ir_measures' registry.

The records (:class:`Qrel`, :class:`ScoredDoc`, :class:`Metric`, :class:`CalcResults`) are named tuples
with ir_measures' fields and defaults, :func:`read_trec_qrels` and :func:`read_trec_run` read TREC text as
ir_measures does (a path, a ``.gz`` path, text holding a newline, or an open file; lazily), and
:func:`parse_measure` and :func:`parse_trec_measure` read measures from ir_measures' text and trec_eval's
names, for either kind of measure object. Nothing here loads numpy or irspec's engine.
"""

from __future__ import annotations

import ast
import gzip
import io
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

__all__ = [
    "CalcResults",
    "MeanAgg",
    "Measure",
    "Metric",
    "ParamInfo",
    "Qrel",
    "ScoredDoc",
    "SumAgg",
    "parse_measure",
    "parse_trec_measure",
    "read_trec_qrels",
    "read_trec_run",
    "registry",
]


class _NotProvided:
    """A parameter given no value (ir_measures' ``_NOT_PROVIDED``)."""

    def __repr__(self) -> str:
        return "NOT_PROVIDED"


NOT_PROVIDED: Any = _NotProvided()


class Qrel(NamedTuple):
    """A judgment: ir_measures' ``Qrel`` (``iteration`` is TREC's second column, ``'0'`` unless given)."""

    query_id: str
    doc_id: str
    relevance: int
    iteration: str = "0"


class ScoredDoc(NamedTuple):
    """A document a run retrieved for a query, with its score: ir_measures' ``ScoredDoc``."""

    query_id: str
    doc_id: str
    score: float


class Metric(NamedTuple):
    """One measure's value on one query: ir_measures' ``Metric``."""

    query_id: str
    measure: Any
    value: float | int


class CalcResults(NamedTuple):
    """``calc``'s answer: the aggregates by measure and the per-query :class:`Metric` records."""

    aggregated: Any
    per_query: list[Metric]


class ParamInfo:
    """A measure's parameter as ir_measures declares it: its type, whether it is required, its choices and
    its default (``NOT_PROVIDED`` where there is none)."""

    def __init__(
        self,
        dtype: type | None = None,
        required: bool = False,
        choices: Any = NOT_PROVIDED,
        default: Any = NOT_PROVIDED,
        desc: str | None = None,
    ) -> None:
        self.dtype = dtype
        self.required = required
        self.choices = choices
        self.default = default
        self.desc = desc

    def validate(self, value: Any) -> bool:
        """Whether ``value`` is acceptable: given when required, of the type, among the choices."""
        if value is NOT_PROVIDED:
            return not self.required
        if self.dtype is not None and not isinstance(value, self.dtype):
            return False
        return self.choices is NOT_PROVIDED or value in self.choices


class MeanAgg:
    """The mean of the values added, in the order added (NaN when none were): ir_measures' ``MeanAgg``."""

    def __init__(self, default: float = float("nan")) -> None:
        self.sum = 0.0
        self.count = 0
        self.default = default

    def add(self, value: float) -> None:
        """Add one query's value."""
        self.sum += value
        self.count += 1

    def result(self) -> float:
        """The mean so far."""
        return self.sum / self.count if self.count else self.default


class SumAgg:
    """The sum of the values added (0 when none were): ir_measures' ``SumAgg``, for the counts."""

    def __init__(self) -> None:
        self.sum: float | int = 0

    def add(self, value: float) -> None:
        """Add one query's value."""
        self.sum += value

    def result(self) -> float | int:
        """The sum so far."""
        return self.sum


class Measure:
    """A measure with its parameters, as ir_measures' ``Measure`` behaves: called with keywords or ``@``
    a value it gives a new measure with those parameters set; it prints, compares and hashes by its text.

    ``iter_calc``, ``calc_aggregate``, ``calc`` and ``evaluator`` compute this measure alone, through the
    pipeline :func:`bind_pipeline` names (``irspec.compat.ir_measures``'s).
    """

    NAME: str | None = None
    AT_PARAM = "cutoff"
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {}  # noqa: RUF012 (ir_measures' class attribute, read only)
    DEFAULT = 0.0
    __name__: str

    def __init__(self, **params: Any) -> None:
        self.params = params
        self.validated = False

    def validate_params(self) -> None:
        """Check the parameters against ``SUPPORTED_PARAMS``: an ``AssertionError`` naming the first
        unknown or invalid one, as ir_measures raises."""
        if self.validated:
            return
        unknown = list(self.params.keys() - self.SUPPORTED_PARAMS.keys())
        if unknown:
            raise AssertionError(f"unsupported params found: {unknown}")
        for name, info in self.SUPPORTED_PARAMS.items():
            value = self.params.get(name, NOT_PROVIDED)
            if not info.validate(value):
                raise AssertionError(f"invalid param {name}={value!r}")
        self.validated = True

    def __call__(self, **kwargs: Any) -> Measure:
        return type(self)(**{**self.params, **kwargs})

    def __matmul__(self, at_param: Any) -> Measure:
        return self(**{self.AT_PARAM: at_param})

    def __getitem__(self, key: str) -> Any:
        return self.params.get(key, self.SUPPORTED_PARAMS[key].default)

    def iter_calc(self, qrels: Any, run: Any) -> Iterator[Metric]:
        """This measure's value on each query: ``iter_calc([self], qrels, run)``."""
        self.validate_params()
        return _PIPELINE[0].iter_calc([self], qrels, run)

    def calc_aggregate(self, qrels: Any, run: Any) -> float | int:
        """This measure's aggregate over the queries."""
        return _PIPELINE[0].calc_aggregate([self], qrels, run)[self]

    def calc(self, qrels: Any, run: Any) -> CalcResults:
        """This measure's aggregate and its per-query records."""
        aggregated, per_query = _PIPELINE[0].calc([self], qrels, run)
        return CalcResults(aggregated[self], per_query)

    def evaluator(self, qrels: Any) -> Any:
        """An evaluator of this measure on ``qrels``, for any number of runs."""
        return _PIPELINE[0].evaluator([self], qrels)

    def __str__(self) -> str:
        return repr(self)

    def __repr__(self) -> str:
        text = self.__name__
        shown = ",".join(
            f"{k}={_param_repr(v)}"
            for k, v in self.params.items()
            if k != self.AT_PARAM and v != self.SUPPORTED_PARAMS[k].default
        )
        if shown:
            text = f"{text}({shown})"
        if self.AT_PARAM in self.params:
            text = f"{text}@{self.params[self.AT_PARAM]}"
        return text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Measure) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))

    def aggregator(self) -> MeanAgg | SumAgg:
        """A fresh aggregator of this measure's per-query values (a mean; a sum for the counts)."""
        return MeanAgg()


BaseMeasure = Measure
"""ir_measures' older name of :class:`Measure`."""


def _param_repr(value: Any) -> str:
    """A parameter's value as ir_measures prints it (a gain map as ``{0:1,1:2}``, identities left out)."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{v}" for k, v in sorted(value.items()) if k != v) + "}"
    return repr(value)


_PIPELINE: list[Any] = [None]


def bind_pipeline(pipeline: Any) -> None:
    """Make ``pipeline`` (an object with ``iter_calc``, ``calc_aggregate``, ``calc`` and ``evaluator``
    taking measures first) the one a measure's own methods compute through."""
    _PIPELINE[0] = pipeline


# ir_measures 0.4.3's measures: name, aliases, the parameter @ sets, parameters as (name, type, required,
# choices, default), whether the aggregate is a sum, and the parameters an alias presets (NumRelRet is
# NumRet(rel=1), SetRelP SetP(relative=True)). The test of this module compares it with ir_measures' registry.
_N = NOT_PROVIDED
_CUT = ("cutoff", int, False, _N, _N)
_CUT_REQ = ("cutoff", int, True, _N, _N)
_REL = ("rel", int, False, _N, 1)
_JUDGED = ("judged_only", bool, False, _N, False)
_MINREL = ("min_rel", int, False, _N, 0)
_MAXREL = ("max_rel", int, True, _N, _N)
_T = ("T", float, False, _N, 1.0)
_ALPHA = ("alpha", float, False, _N, 0.5)
_TABLE: list[
    tuple[str, tuple[str, ...], str, tuple[tuple[Any, ...], ...], bool, dict[str, dict[str, Any]]]
] = [
    ("Accuracy", (), "cutoff", (_CUT, _REL), False, {}),
    ("AP", ("MAP",), "cutoff", (_CUT, _REL, _JUDGED), False, {}),
    ("BPM", (), "cutoff", (_CUT_REQ, _T, _MINREL, _MAXREL), False, {}),
    ("Bpref", ("BPref",), "cutoff", (_REL,), False, {}),
    (
        "Compat",
        (),
        "cutoff",
        (("p", float, False, _N, 0.95), ("normalize", bool, False, _N, True)),
        False,
        {},
    ),
    ("ERR_IA", (), "cutoff", (_CUT, _REL, _JUDGED), False, {}),
    ("nERR_IA", (), "cutoff", (_CUT, _REL, _JUDGED), False, {}),
    ("alpha_DCG", ("α_DCG",), "cutoff", (_CUT, _REL, _ALPHA, _JUDGED), False, {}),
    ("alpha_nDCG", ("α_nDCG",), "cutoff", (_CUT, _REL, _ALPHA, _JUDGED), False, {}),
    ("NRBP", (), "cutoff", (_REL, _ALPHA, ("beta", float, False, _N, 0.5)), False, {}),
    ("nNRBP", (), "cutoff", (_REL, _ALPHA, ("beta", float, False, _N, 0.5)), False, {}),
    ("AP_IA", ("MAP_IA",), "cutoff", (_REL, _JUDGED), False, {}),
    ("P_IA", (), "cutoff", (_CUT, _REL, _JUDGED), False, {}),
    ("StRecall", (), "cutoff", (_CUT, _REL), False, {}),
    ("ERR", (), "cutoff", (_CUT,), False, {}),
    ("INST", (), "cutoff", (_T, _MINREL, _MAXREL), False, {}),
    ("INSQ", (), "cutoff", (_T, _MINREL, _MAXREL), False, {}),
    ("infAP", (), "cutoff", (_REL,), False, {}),
    ("IPrec", (), "recall", (("recall", float, True, _N, _N), _REL, _JUDGED), False, {}),
    ("Judged", (), "cutoff", (_CUT,), False, {}),
    (
        "nDCG",
        ("NDCG",),
        "cutoff",
        (_CUT, ("dcg", str, False, ["log2", "exp-log2"], "log2"), ("gains", dict, False, _N, _N), _JUDGED),
        False,
        {},
    ),
    ("NERR8", (), "cutoff", (_CUT_REQ, _MINREL, _MAXREL), False, {}),
    ("NERR9", (), "cutoff", (_CUT_REQ, _MINREL, _MAXREL), False, {}),
    ("NERR10", (), "cutoff", (("p", float, False, _N, 0.9), _MINREL, _MAXREL), False, {}),
    ("NERR11", (), "cutoff", (_T, _MINREL, _MAXREL), False, {}),
    ("NumQ", (), "cutoff", (), True, {}),
    ("NumRel", (), "cutoff", (_REL,), True, {}),
    ("NumRet", (), "cutoff", (("rel", int, False, _N, _N),), True, {"NumRelRet": {"rel": 1}}),
    ("P", ("Precision",), "cutoff", (_CUT_REQ, _REL, _JUDGED), False, {}),
    ("R", ("Recall",), "cutoff", (_CUT_REQ, _REL, _JUDGED), False, {}),
    (
        "RBP",
        (),
        "cutoff",
        (_CUT, ("p", float, False, _N, 0.8), ("rel", int, False, _N, _N)),
        False,
        {},
    ),
    ("Rprec", ("RPrec",), "cutoff", (_REL, _JUDGED), False, {}),
    ("RR", ("MRR",), "cutoff", (_CUT, _REL, _JUDGED), False, {}),
    (
        "SDCG",
        (),
        "cutoff",
        (_CUT_REQ, ("dcg", str, False, ["log2"], "log2"), _MINREL, _MAXREL),
        False,
        {},
    ),
    (
        "SetP",
        (),
        "cutoff",
        (_REL, ("relative", bool, False, _N, False), _JUDGED),
        False,
        {"SetRelP": {"relative": True}},
    ),
    ("SetR", (), "cutoff", (_REL,), False, {}),
    ("SetF", (), "cutoff", (_REL, ("beta", float, False, _N, 1.0), _JUDGED), False, {}),
    ("SetAP", (), "cutoff", (_REL, _JUDGED), False, {}),
    ("Success", (), "cutoff", (_CUT_REQ, _REL, _JUDGED), False, {}),
]


def _sum_aggregator(self: Measure) -> SumAgg:
    return SumAgg()


def _make_registry() -> dict[str, Measure]:
    """Every name and alias, each bound to its measure object (aliases to the same object), with ir_measures'
    class names (``_nDCG``) for the classes."""
    found: dict[str, Measure] = {}
    for name, aliases, at, params, summed, presets in _TABLE:
        attrs: dict[str, Any] = {
            "__name__": name,
            "NAME": name,
            "AT_PARAM": at,
            "SUPPORTED_PARAMS": {
                p: ParamInfo(dtype=t, required=r, choices=c, default=d) for p, t, r, c, d in params
            },
            "__module__": __name__,
            "__qualname__": f"_{name}",
        }
        if summed:
            attrs["aggregator"] = _sum_aggregator
        cls = type(f"_{name}", (Measure,), attrs)
        globals()[f"_{name}"] = cls  # found by pickle under its qualified name
        measure = cls()
        for spelling in (name, *aliases):
            found[spelling] = measure
        for alias, preset in presets.items():
            found[alias] = cls(**preset)
    return found


registry: dict[str, Measure] = _make_registry()
"""ir_measures' measures by every name and alias it registers: ``registry["MAP"] is registry["AP"]``."""


def read_trec_qrels(file: Any) -> Iterator[Qrel]:
    """:class:`Qrel` records from TREC qrels (``query iteration document relevance``), one a line, blank
    lines skipped: ``file`` is a path (``.gz`` read through gzip), text holding a newline, or an open file."""
    for fields in _lines(file):
        query_id, iteration, doc_id, relevance = fields
        yield Qrel(query_id=query_id, doc_id=doc_id, relevance=int(relevance), iteration=iteration)


def read_trec_run(file: Any) -> Iterator[ScoredDoc]:
    """:class:`ScoredDoc` records from a TREC run (``query Q0 document rank score tag``), one a line, blank
    lines skipped: ``file`` is a path (``.gz`` read through gzip), text holding a newline, or an open file."""
    for fields in _lines(file):
        query_id, _, doc_id, _, score, _ = fields
        yield ScoredDoc(query_id=query_id, doc_id=doc_id, score=float(score))


def _lines(file: Any) -> Iterator[list[str]]:
    """The whitespace-separated fields of each non-blank line of ``file``, read as ir_measures reads it (a
    line of the wrong width is a ``ValueError`` from unpacking, as there)."""
    if hasattr(file, "read"):
        for line in file:
            if line.strip():
                yield line.split()
    elif isinstance(file, str):
        if "\n" in file:
            yield from _lines(io.StringIO(file))
        else:
            opener: Callable[..., Any] = gzip.open if file.endswith(".gz") else open
            with opener(file, "rt") as f:
                yield from _lines(f)


_PARSE_ERROR = "problem parsing measure {}; must be in format Measure(k1=v1, k2=v2)@c"


def _literal(node: ast.expr) -> Any:
    """A parameter's value from its syntax: a number, string, True/False/None or a dict of them."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Dict):
        return {
            _literal(k): _literal(v) for k, v in zip(node.keys, node.values, strict=True) if k is not None
        }
    raise ValueError(_PARSE_ERROR.format("values must be str, float, int, bool, etc."))


def parse_measure(measure: Any, measures: Mapping[str, Any] = registry, kind: type = Measure) -> Any:
    """A measure from ir_measures' text (``"nDCG@10"``, ``"P(rel=2)@5"``, ``"nDCG(dcg='exp-log2')"``), as
    ``ir_measures.parse_measure`` reads it: keywords only, ``@`` setting the measure's ``AT_PARAM`` (over
    a keyword of the same name). A measure object (of ``kind``) is returned as it is; a text that is no such
    expression is a ``ValueError``, an unknown name a ``NameError``. ``measures`` is the registry the names
    are looked up in (the drop-in passes ir_measures' own where it is installed)."""
    if isinstance(measure, kind):
        return measure
    try:
        body = ast.parse(measure).body
    except SyntaxError as e:
        raise ValueError(_PARSE_ERROR.format(str(e))) from None
    if len(body) != 1:
        raise ValueError(_PARSE_ERROR.format("multiple expressions"))
    statement = body[0]
    if not isinstance(statement, ast.Expr):
        raise ValueError(_PARSE_ERROR.format("not an expression"))
    node = statement.value
    at: Any = None
    args: dict[str, Any] = {}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        at = _literal(node.right)
        node = node.left
    if isinstance(node, ast.Call):
        if node.args:
            raise ValueError(_PARSE_ERROR.format("args must be named"))
        for keyword in node.keywords:
            args[str(keyword.arg)] = _literal(keyword.value)
        node = node.func
    if not isinstance(node, ast.Name):
        raise ValueError(_PARSE_ERROR.format("unexpected expression"))
    if node.id not in measures:
        raise NameError(f"measure not found: {node.id}")
    found = measures[node.id]
    if at is not None:
        args[found.AT_PARAM] = at
    return found(**args)  # the registered measure called: an alias keeps its preset (SetRelP)


# trec_eval's names as ir_measures reads them: the measure's name, the parameter a trec_eval parameter
# sets, and the values a bare name stands for; a name ir_measures knows but cannot compute maps to None.
_TREC_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_TREC_NAMES: dict[str, tuple[str, str | None, tuple[Any, ...] | None] | None] = {
    "ndcg": ("nDCG", None, None),
    "P": ("P", "cutoff", _TREC_CUTS),
    "map_cut": ("AP", "cutoff", _TREC_CUTS),
    "Rndcg": None,
    "num_nonrel_judged_ret": None,
    "set_map": ("SetAP", None, None),
    "11pt_avg": None,
    "relative_P": None,
    "gm_map": None,
    "binG": None,
    "set_P": ("SetP", None, None),
    "infAP": ("infAP", None, None),
    "bpref": ("Bpref", None, None),
    "num_rel_ret": ("NumRelRet", None, None),
    "ndcg_rel": None,
    "recip_rank": ("RR", None, None),
    "recall": ("R", "cutoff", _TREC_CUTS),
    "set_recall": ("SetR", None, None),
    "utility": None,
    "set_relative_P": ("SetRelP", None, None),
    "num_ret": ("NumRet", None, None),
    "num_rel": ("NumRel", None, None),
    "ndcg_cut": ("nDCG", "cutoff", _TREC_CUTS),
    "Rprec": ("Rprec", None, None),
    "Rprec_mult": None,
    "relstring": None,
    "gm_bpref": None,
    "num_q": ("NumQ", None, None),
    "map": ("AP", None, None),
    "G": None,
    "success": ("Success", "cutoff", (1, 5, 10)),
    "set_F": ("SetF", "beta", (1.0,)),
    "iprec_at_recall": ("IPrec", "recall", (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)),
}
_TREC_PARAMS = r"{}[\._]([0-9]+(\.[0-9]+)?(,[0-9]+(\.[0-9]+)?)*)"


def parse_trec_measure(measure: str, measures: Mapping[str, Any] = registry) -> list[Any]:
    """The measures a trec_eval name stands for, as ``ir_measures.parse_trec_measure`` reads it: ``"map"``
    is ``[AP]``, ``"P"`` P at trec_eval's nine cutoffs, ``"ndcg_cut.5,10"`` ``[nDCG@5, nDCG@10]``, and a
    pytrec_eval nickname (``"official"``) the measures of its set that ir_measures computes, in sorted
    order of their names (those it cannot are named on standard output, as ir_measures prints them). A name
    ir_measures does not read is a ``ValueError``."""
    from irspec.compat.pytrec_eval import supported_nicknames

    if measure in supported_nicknames:
        found: list[Any] = []
        skipped = []
        for sub in sorted(supported_nicknames[measure]):
            try:
                found += parse_trec_measure(sub, measures)
            except ValueError:
                if sub != "runid":
                    skipped.append(sub)
        if skipped:
            print(f"skipped {skipped}: measures not yet supported")
        return found
    if measure in _TREC_NAMES:
        entry = _TREC_NAMES[measure]
        if entry is None:
            raise ValueError(f"known trec name {measure}, but not yet supported")
        name, param, defaults = entry
        if param is not None and defaults is not None:
            return [measures[name](**{param: value}) for value in defaults]
        return [measures[name]]
    for base in _TREC_NAMES:
        match = re.match(_TREC_PARAMS.format(re.escape(base)), measure)
        if match is None:
            continue
        entry = _TREC_NAMES[base]
        if entry is None:
            raise ValueError(f"known trec name {measure}, but not yet supported")
        name, param, _ = entry
        if param is None:
            raise ValueError(f"unknown argument for {measure}: {match.group(1)}")
        found_measure = measures[name]
        dtype = found_measure.SUPPORTED_PARAMS[param].dtype
        return [found_measure(**{param: dtype(value)}) for value in match.group(1).split(",")]
    raise ValueError(f"unknown measure {measure}")


def measures_of(values: Iterable[Any]) -> list[Any]:
    """Measures from measure objects and ir_measures' text (a text parsed with :func:`parse_measure`)."""
    return [parse_measure(m) if isinstance(m, str) else m for m in values]
