"""What a plugin declares, and what binding produces: :class:`Param`, :class:`MetricDef`,
:class:`Alias`, :class:`MetricGroup`, :class:`InputReader`, :class:`InputTable`, :class:`PlanSection`,
:class:`FusionDef` (a method of fusing runs), :class:`InterleavingDef` and :class:`ClickModelDef` (methods
of online evaluation), :class:`Command` (a subcommand of the command line), and the bound, canonical
:class:`Metric`, :class:`Fusion` and :class:`Method`; and the protocols of the data objects an input reader returns
(:class:`InputData` and the optional members irspec looks for).

These are plain immutable values. The table that holds them by name, and binding a parsed spec to them,
are in :mod:`irspec.spec.registry` (which re-exports every name here, the names plugins import).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import field
from typing import Any, Literal, Protocol, runtime_checkable

from irspec.frozen import frozen
from irspec.spec import syntax

__all__ = [
    "FUSION_NORM",
    "FUSION_NORMS",
    "MAX_COUNT",
    "MAX_GAIN",
    "NONNEGATIVE",
    "RESERVED_INPUTS",
    "ROLES",
    "UNIT",
    "Aggregate",
    "Alias",
    "Better",
    "ClickModelDef",
    "Command",
    "Fusion",
    "FusionDef",
    "GainMap",
    "InputData",
    "InputReader",
    "InputTable",
    "InterleavingDef",
    "Method",
    "MethodDef",
    "Metric",
    "MetricDef",
    "MetricGroup",
    "Param",
    "ParamKind",
    "PlanSection",
    "QrelsData",
    "Redirect",
    "SupportsCompare",
    "SupportsStreaming",
    "SupportsTables",
    "each",
    "echoes_text",
]

ParamKind = Literal["int", "float", "bool", "choice", "gains", "floats", "str"]
Aggregate = Literal["mean", "sum", "gmean", "none"]
Better = Literal["higher", "lower", "neither"]
Scope = Literal["query", "catalogue"]

MAX_COUNT = 2**53
"""The largest integer parameter irspec accepts (a cutoff, a collection size), unless a metric declares a
smaller maximum. Counts up to 2**53 are exact in float64, where per-query arithmetic over ``R`` and the
kernels' divisions happen, and fit int64; no ranking or collection comes near it, so a cutoff of 2**53
already means the whole ranking."""

MAX_GAIN = 1e100
"""The largest gain a ``gains`` map may give: a sum of a billion such gains still fits float64."""


@frozen
class Param:
    """A declared parameter of a metric.

    ``kind`` is the value type: ``int``, ``float`` (ints accepted), ``bool``, ``choice`` (one of
    ``choices``, written as a bare word or a quoted string), ``gains`` (a dict literal mapping integer
    labels to gains in [0, :data:`MAX_GAIN`]), ``floats`` (a tuple of numbers) or ``str``.
    ``minimum``/``maximum`` bound numbers, and each number of a ``floats`` list (``exclusive_minimum``
    for strict bounds such as beta > 0); an ``int`` is never above :data:`MAX_COUNT`. ``per_query``
    allows arithmetic over the per-query symbol ``R`` (``bpref(10+R)``, ``P@R``); the engine gives such a
    value its meaning per query (:meth:`irspec.evaluation.context.Context.cutoff`), since R is known only there.
    A default of ``None`` means "not set" (for ``rel``: the evaluation's relevance level). ``shown`` keeps
    the parameter in the canonical text at its default (see :meth:`MetricDef.shown_at_default`): for a
    default that tools disagree on, such as RBP's persistence (0.8 in ir_measures, 0.9 in trec_eval).
    """

    name: str
    kind: ParamKind
    default: Any = None
    description: str = ""
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    per_query: bool = False
    required: bool = False
    shown: bool = False

    def describe_range(self) -> str:
        """A short human text of the allowed values, for error messages and ``irspec metrics``."""
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind in ("int", "float"):
            kind = "an integer" if self.kind == "int" else "a number"
            extra = " (may use R)" if self.per_query else ""
            return f"{kind}{self._bounds()}{extra}"
        if self.kind == "floats":
            return f"a list of numbers{self._bounds(' each')}"
        return {
            "bool": "true or false",
            "gains": f"a dict of label:gain with gains >= 0 and <= {syntax.format_number(MAX_GAIN)}, e.g. {{0:0,1:1,2:3}}",
            "str": "a string",
        }[self.kind]

    @property
    def upper(self) -> float | None:
        """The largest allowed value: ``maximum``, and for an ``int`` at most :data:`MAX_COUNT`."""
        if self.kind == "int":
            return MAX_COUNT if self.maximum is None else min(self.maximum, MAX_COUNT)
        return self.maximum

    def _bounds(self, lead: str = "") -> str:
        lo = ""
        if self.minimum is not None:
            lo = f"{'>' if self.exclusive_minimum else '>='} {syntax.format_number(self.minimum)}"
        hi = f"<= {syntax.format_number(self.upper)}" if self.upper is not None else ""
        bounds = " and ".join(b for b in (lo, hi) if b)
        return f"{lead} {bounds}" if bounds else ""


UNIT: tuple[float, float] = (0.0, 1.0)
"""``MetricDef.bounds`` of a metric whose every per-query value lies in [0, 1] (a precision, a rate)."""
NONNEGATIVE: tuple[float, None] = (0.0, None)
"""``MetricDef.bounds`` of a metric with no upper bound that is never negative (a search length, a DCG)."""


@frozen(eq=False)
class MetricDef:
    """Everything irspec knows about one metric, as a plugin registers it.

    ``name`` is the canonical name. ``at`` names the parameter that ``@`` sets (``k`` for ``P@10``,
    ``recall`` for ``IPrec@0.5``) and ``positional`` the one a single positional argument sets
    (``nonrel`` for ``bpref(10+R)``). ``aggregate`` says how per-query values combine: ``mean``,
    ``sum`` (counts) or ``gmean`` (geometric mean, with per-query values floored at ``1e-5`` as trec_eval
    does); ``none`` marks a text-valued metric (trec_eval's ``relstring``), whose kernel returns one
    string per query and which has no summary. ``compute`` is the vectorised kernel and ``per_query`` the simple per-query function (see
    :mod:`irspec.evaluation.compute`); a definition has at least one of them. Either may be a ``"module:function"``
    string, imported when evaluation starts, so that parsing specs never imports numerical code. ``trec_name`` gives trec_eval's output
    name for a bound spec, or ``None`` where trec_eval has no such measure. ``doc`` is the formula and the
    reference, shown by ``irspec metrics --json``.

    ``better`` says which values are better: ``higher`` (the default), ``lower`` (fall-out, search
    length) or ``neither`` (counts and diagnostics such as ``NumRet`` or ``unj``). Reports bold the best
    value and mark significant differences in that direction, and do neither for ``neither``. Where a
    parameter turns the value into another quantity (RBP's ``residual``: how much RBP could still grow),
    ``better`` is a function of the bound :class:`Metric` giving one of the three; read it as
    :attr:`Metric.better`.

    ``redirects`` are keyword forms that name another metric (:class:`Redirect`): ir_measures' spellings
    ``SetP(relative=True)`` for ``relP`` and ``NumRet(rel=1)`` for ``NumRelRet(rel=1)``.

    ``needs`` names the input the metric is computed from: ``"run"`` (the default: qrels and a run, through
    :class:`irspec.evaluation.context.Context`) or the name of an :class:`InputReader` a plugin registers (``"log"``).
    A metric over another input gives ``compute(data, metric)``, where ``data`` is what that reader
    returned, and returns one float per item of ``data.ids`` (NaN for an item it leaves out); see
    :mod:`irspec.evaluation.inputs`.

    ``scope`` says what one value describes: ``"query"`` (the default), a query's (a user's) ranking,
    whose values are summarised over queries as ``aggregate`` says; or ``"catalogue"``, the run as a
    whole: how a recommender's lists together use the catalogue (item coverage, the Gini index of how
    often items are recommended), which no mean over users gives. A catalogue metric's
    ``compute(recommendations, metric)`` returns one float for the run from every evaluated user's list
    (:mod:`irspec.recsys.matrices` gives the lists); its result has that value as its aggregate, no
    per-query values (a NaN column) and nothing to pair in a comparison
    (:attr:`Metric.catalogue` is the one test every reader makes).

    ``bounds`` is the range every per-query value lies in, where there is one: ``(0, 1)`` for a
    precision, ``(0, None)`` for a search length, ``(None, None)`` (the default) for a utility. A mean's
    t interval, symmetric by construction, is cut to it: the true mean lies inside the bounds, so the
    cut interval holds it exactly when the whole one does (its coverage is unchanged), and it never
    shows a precision below 0.
    """

    name: str
    summary: str
    params: tuple[Param, ...] = ()
    at: str | None = None
    positional: str | None = None
    aggregate: Aggregate = "mean"
    compute: Callable[..., Any] | str | None = None
    per_query: Callable[..., Any] | str | None = None
    trec_name: Callable[[Metric], str | None] | None = None
    doc: str = ""
    dotted: Callable[[list[str]], list[dict[str, Any]]] | None = None
    needs: str = "run"
    better: Better | Callable[[Metric], Better] = "higher"
    bounds: tuple[float | None, float | None] = (None, None)
    redirects: tuple[Redirect, ...] = ()
    scope: Scope = "query"
    plugin: str = field(default="", compare=False)

    def param(self, name: str) -> Param:
        """The declared parameter ``name``; :class:`KeyError` if there is none."""
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    @functools.cached_property
    def param_names(self) -> tuple[str, ...]:
        """Names of the declared parameters, in declaration order."""
        return tuple(p.name for p in self.params)

    def shown_at_default(self, p: Param) -> bool:
        """Whether the canonical text shows ``p`` even at its default value, where other defaults are left
        out: the ``@`` parameter when its default is a value (a default depth, ``alpha_nDCG@20``: a table
        says the depth it measured), and a parameter declared ``shown`` (``RBP(p=0.8)``)."""
        return p.default is not None and (p.shown or p.name == self.at)


def each(param: str) -> Callable[[list[str]], list[dict[str, str]]]:
    """A dotted-suffix reader for trec_eval's multi-value form: ``P.5,10`` is ``P@5`` and ``P@10``."""

    def read(values: list[str]) -> list[dict[str, str]]:
        return [{param: v} for v in values]

    read.per_value = True  # type: ignore[attr-defined]  # see echoes_text
    return read


def echoes_text(reader: Callable[[list[str]], list[dict[str, Any]]]) -> bool:
    """Whether trec_eval prints a dotted suffix read by ``reader`` as written.

    trec_eval prints a list of cutoffs one measure each, formatted (``P.05,10`` gives ``P_5`` and
    ``P_10``); a measure's other parameters (``utility.1,-1,0,0.5``, ``ndcg.1=1.0``, ``set_F.2``,
    ``11pt_avg.0.2,.5``) it keeps as one text and appends to the name unchanged. Readers made by
    :func:`each` are of the first kind, every other reader of the second.
    """
    return not getattr(reader, "per_value", False)


@frozen
class Alias:
    """Another name for a metric, optionally with fixed parameters and trec_eval's dotted suffix.

    ``fixed`` sets parameters (``Alias("ndcg_burges", fixed={"dcg": "exp-log2"})``). ``dotted`` turns
    the comma-separated values after ``name.`` (strings, as written) into one parameter dict per spec
    it stands for; ``each("k")`` is the common case. ``dotted_required`` says the alias is only a name
    with its suffix (``P.5``, never bare ``P`` meaning ``P`` from trec_eval's side). ``keywords``
    converts numeric keyword arguments given under this name (see the field).
    """

    name: str
    fixed: Mapping[str, Any] = field(default_factory=dict)
    dotted: Callable[[list[str]], list[dict[str, Any]]] | None = None
    dotted_required: bool = False
    keywords: Mapping[str, Callable[[float], float]] = field(default_factory=dict)
    """Keyword arguments that this spelling gives on another scale, each converted by its function
    before binding: ir_measures' ``SetF(beta=x)`` passes x to trec_eval's ``set_F``, where it is beta²,
    so the alias ``SetF`` converts beta with a square root. A function raises ``ValueError`` for a value
    it cannot take."""


@frozen
class Redirect:
    """A keyword that makes a spec name another metric: ``keyword=when`` on this metric is ``target``.

    With ``when`` a boolean, the keyword is a switch and is dropped: on ``P``,
    ``Redirect("relative", "relP", when=True)`` reads ``P(relative=true)@5`` as ``relP@5``. With ``when``
    ``None``, any value redirects and the keyword is passed on as the target's parameter of the same name:
    ``Redirect("rel", "NumRelRet")`` on ``NumRet`` reads ``NumRet(rel=2)`` as ``NumRelRet(rel=2)``.
    The target is the canonical name of a registered metric; the other arguments go to it unchanged.
    Such forms are spellings of another tool (ir_measures'), so the canonical text is the target's.
    """

    keyword: str
    target: str
    when: bool | None = None


@frozen
class MetricGroup:
    """A named list of specs, such as trec_eval's ``official`` and ``all_trec``."""

    name: str
    specs: tuple[str, ...]
    summary: str = ""
    plugin: str = field(default="", compare=False)


RESERVED_INPUTS: tuple[str, ...] = ("run", "qrels")
"""Input names irspec reads itself (qrels and runs, see :mod:`irspec.data`); no plugin may register them."""


@frozen
class InputReader:
    """A reader of a kind of input other than qrels and runs, as a plugin registers it.

    ``name`` is the kind of input (``"log"``): metrics declare it as their ``needs``
    (:func:`irspec.evaluate_input` evaluates them; a plan's ``log:`` key names an input of the reader
    called ``log``). ``read(source)`` takes a path (or whatever object the reader documents) and returns
    the plugin's data object, which must have an ``ids`` attribute: the items evaluated (query issues of
    a log, say), one row each in the result. The object may also have ``name`` (the row label of the
    result; default the file stem), ``source``, ``warnings`` and ``tables()``: what the input shows that
    is no metric (a log's top queries, say), as :class:`InputTable` values the reports render and plot. ``read`` may be a ``"module:function"``
    string, imported only when an input is read. ``suffixes`` are the file name endings the reader
    expects (``.jsonl``, ``.jsonl.gz``) and ``summary`` one line for humans, both shown by
    ``irspec metrics``. ``as_qrels`` marks an input read in place of the qrels (below).
    """

    name: str
    read: Callable[[Any], Any] | str
    suffixes: tuple[str, ...] = ()
    summary: str = ""
    plugin: str = field(default="", compare=False)
    as_qrels: bool = False
    """The input is a richer form of qrels (judgments per subtopic, say), read from the source given as
    the qrels of :func:`irspec.evaluate` or ``irspec eval``: the data object's ``qrels`` attribute (an
    :class:`irspec.data.Qrels`) is the qrels every metric of the evaluation is computed with, and the
    kernels of the metrics that need this input find the object itself as ``ctx.input(name)`` beside
    the run's ranking (see :meth:`irspec.evaluation.context.Context.input`)."""


@frozen
class InputTable:
    """A table an input's data object offers beside its metrics (``tables()``, see :class:`InputReader`):
    computed by the plugin, rendered by every report, and drawn as a ``chart`` (``"bar"`` or ``"line"``)
    of its second column against its first.

    ``title`` names it (``"Top queries"``); ``columns`` are the headers and ``rows`` the values, each a
    tuple of strings, ints or floats as long as ``columns``; ``description`` is one line for a reader.
    """

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    chart: Literal["bar", "line"] = "bar"
    description: str = ""

    def __post_init__(self) -> None:
        if len(self.columns) < 2 or any(len(r) != len(self.columns) for r in self.rows):
            raise ValueError(
                f"table {self.title!r}: every row needs one value per column (at least two columns)"
            )
        if self.chart not in ("bar", "line"):
            raise ValueError(f"table {self.title!r}: chart must be 'bar' or 'line', got {self.chart!r}")

    def as_dict(self) -> dict[str, Any]:
        """The table as JSON-ready data: ``title``, ``description``, ``columns``, ``rows`` (lists; an
        undefined number, NaN, as None: JSON has no NaN)."""
        return {
            "title": self.title,
            "description": self.description,
            "columns": list(self.columns),
            "rows": [[None if isinstance(v, float) and v != v else v for v in r] for r in self.rows],
        }


@runtime_checkable
class InputData(Protocol):
    """The data object an :class:`InputReader`'s ``read`` returns: ``ids``, the items evaluated (a log's
    query issues, say), one row each in the result; a metric's ``compute(data, metric)`` returns one
    float per item. irspec refuses an object without ``ids`` when it reads one.

    Every other member is optional, and used when the object has it:

    - ``name`` (str): the result's name (its row label; default: the file stem);
    - ``source`` (str): where the input was read from, for messages and provenance;
    - ``warnings`` (a sequence of str): shown by every output, as a run's are;
    - ``tables()``, ``compare(metrics, values)``, ``evaluate(metrics)``: :class:`SupportsTables`,
      :class:`SupportsCompare`, :class:`SupportsStreaming`.

    A reader registered with ``as_qrels=True`` returns a :class:`QrelsData`.
    """

    ids: Sequence[Any]


@runtime_checkable
class QrelsData(InputData, Protocol):
    """The data object of a reader registered with ``as_qrels=True`` (qrels with subtopics, say): its
    ``ids`` are the queries and ``qrels`` the ordinary :class:`irspec.data.Qrels` every metric of the
    evaluation is computed with; the metrics that need the input find the object as ``ctx.input(name)``."""

    qrels: Any


@runtime_checkable
class SupportsTables(Protocol):
    """A data object that shows what is no metric (a log's top queries): ``tables()`` returns
    :class:`InputTable` values, which every output renders after the metrics."""

    def tables(self) -> Iterable[InputTable]:
        """The input's tables."""
        ...


@runtime_checkable
class SupportsCompare(Protocol):
    """A data object that compares within itself (the arms of an A/B test in a log): after the metrics
    are computed, ``compare(metrics, values)`` gets the bound metrics and their values (one row per item
    of ``ids``, one column per metric) and returns ``(tables, warnings)``, which join the result's."""

    def compare(self, metrics: Sequence[Metric], values: Any) -> tuple[Iterable[InputTable], Iterable[str]]:
        """The comparison's tables and warnings."""
        ...


@runtime_checkable
class SupportsStreaming(Protocol):
    """A data object read in one streamed pass, in bounded memory, with no row per item (its ``ids``
    empty): what a reader may return when it is called with ``per_query=False``. ``evaluate(metrics)``
    returns ``(aggregates, tables, warnings)``: each metric's aggregate keyed by its canonical text, and
    the tables and warnings of the input."""

    def evaluate(
        self, metrics: Sequence[Metric]
    ) -> tuple[Mapping[str, float], Iterable[InputTable], Iterable[str]]:
        """The aggregates, tables and warnings of one pass."""
        ...


@frozen
class PlanSection:
    """A top-level section of irspec's plans that a plugin adds (irspec-online's ``ab:``), registered
    through the ``irspec_register_plan_sections`` hook.

    ``name`` is the plan's key, a Python identifier; ``reader`` the input reader (``"log"``) whose
    options the section sets: a plan with the section must name that reader's input (its ``log:``
    key), and the reader is called with the section's value as the keyword argument ``name``
    (``read(source, ab={...})``), as ``irspec.evaluate_input(source, metrics, options={name: value})``
    calls it. ``schema`` is the JSON Schema (draft 2020-12) of the value, with a ``description``: it
    joins the plan's schema (:func:`irspec.plan.schema`), so a plan's mistakes in the section are
    reported with their lines as irspec's own keys are. ``summary`` is one line on what the section
    does (``"an A/B test compares the arms of a log"``), said when a plan has the section and not the
    input.
    """

    name: str
    reader: str
    schema: Mapping[str, Any]
    summary: str = ""
    plugin: str = field(default="", compare=False)


@frozen
class Metric:
    """A bound metric spec: a definition plus the parameters that differ from its defaults, and those
    shown at their defaults (:meth:`MetricDef.shown_at_default`).

    Immutable and hashable; equality compares the canonical name and the parameter values, never the
    order in which they were written. ``str(metric)`` is the canonical text, and parsing it gives back
    an equal metric.
    """

    name: str
    params: tuple[tuple[str, Any], ...] = ()
    definition: MetricDef = field(compare=False, repr=False, hash=False, default=None)  # type: ignore[assignment]
    trec_text: str | None = field(compare=False, repr=False, hash=False, default=None)
    """trec_eval's printed name when the spec was trec_eval's ``name.text`` form whose text trec_eval
    echoes (``utility_1,-1,0,0.5``); ``None`` otherwise. It is no part of the metric's identity."""

    def get(self, name: str) -> Any:
        """The value of parameter ``name``: as given, or the declared default."""
        for k, v in self.params:
            if k == name:
                return v
        return self.definition.param(name).default

    @property
    def aggregate(self) -> Aggregate:
        """How per-query values combine into the summary (``mean``, ``sum`` or ``gmean``)."""
        return self.definition.aggregate

    @property
    def better(self) -> Better:
        """Which of this metric's values are better: ``higher``, ``lower`` or ``neither``, its definition's
        ``better`` (or what that function says of these parameters)."""
        better = self.definition.better
        return better(self) if callable(better) else better

    @property
    def catalogue(self) -> bool:
        """Whether the metric is catalogue-level (``MetricDef.scope``): one value per run, from every
        user's list at once, with no per-query values to list, frame or pair in a comparison."""
        return self.definition.scope == "catalogue"

    @property
    def trec_name(self) -> str | None:
        """trec_eval's name for this measure (``P_10``, ``ndcg_cut_10``), or ``None``."""
        if self.trec_text is not None:
            return self.trec_text
        fn = self.definition.trec_name
        return fn(self) if fn is not None else None

    def __str__(self) -> str:
        return self._canonical

    @functools.cached_property
    def _canonical(self) -> str:
        # made once: a table of 100 runs asks each metric for its text some 300 times
        at = self.definition.at if self.definition is not None else None
        inner = [f"{k}={_value_text(v)}" for k, v in self.params if k != at]
        text = self.name + (f"({','.join(inner)})" if inner else "")
        for k, v in self.params:
            if k == at:
                value = _value_text(v)
                simple = isinstance(v, (int, float)) or v == syntax.Symbol("R")
                text += f"@{value}" if simple else f"@({value})"
        return text


def _value_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return _num_text(v)
    if isinstance(v, str):
        return v if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z][A-Za-z0-9_]*)*", v) else repr(v)
    if isinstance(v, GainMap):
        return "{" + ",".join(f"{lab}:{_num_text(g)}" for lab, g in v.items) + "}"
    if isinstance(v, tuple):  # floats
        return "[" + ",".join(_num_text(x) for x in v) + "]"
    return syntax.expr_text(v)


def _num_text(v: int | float) -> str:
    # Integral floats print as integers ("F(beta=2)"), which bind back to the same float.
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e16:
        return str(int(v))
    return syntax.format_number(v)


@frozen
class GainMap:
    """An immutable label -> gain map (the ``gains`` parameter), sorted by label."""

    items: tuple[tuple[int, float], ...]

    def as_dict(self) -> dict[int, float]:
        """The map as a plain dict."""
        return dict(self.items)


@frozen
class MethodDef:
    """A named method a plugin registers beside its metrics, with parameters as a metric declares them:
    the base of :class:`InterleavingDef` and :class:`ClickModelDef`, whose ``kind`` tells their tables apart.

    ``name`` is the canonical name (``TeamDraft``), ``summary`` one line, ``params`` its parameters
    (:class:`Param`; ``positional`` names the one a single positional argument sets, as a metric's does),
    ``compute`` the implementation, a function, class or ``"module:attribute"`` string imported when the
    method is used, so that declaring it imports nothing heavy; what it is called with is the plugin's
    business (the plugin that uses the kind documents it). ``doc`` is the definition and the paper it comes
    from, shown beside the name. A spec names a method as a metric is named, ``probabilistic(tau=3)``,
    bound by :func:`irspec.spec.methods.parse_method` to a :class:`Method`.
    """

    kind = "method"
    """What the table of such methods is called in messages (a class attribute, not a field)."""

    name: str
    summary: str
    compute: Callable[..., Any] | str
    params: tuple[Param, ...] = ()
    positional: str | None = None
    doc: str = ""
    plugin: str = field(default="", compare=False)

    @property
    def all_params(self) -> tuple[Param, ...]:
        """Every parameter the method takes (the declared ones; a fusion method adds ``norm``)."""
        return self.params

    def param(self, name: str) -> Param:
        """The parameter ``name``; :class:`KeyError` if there is none."""
        for p in self.all_params:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def param_names(self) -> tuple[str, ...]:
        """Names of every parameter, in declaration order."""
        return tuple(p.name for p in self.all_params)


@frozen
class InterleavingDef(MethodDef):
    """A method of interleaving two rankings into one list to serve, and of crediting the clicks on it to
    either ranking, as a plugin registers it (``register(InterleavingDef(...), aliases=(...))`` in the
    ``irspec_register_interleaving`` hook): team-draft, balanced, probabilistic, optimized."""

    kind = "interleaving method"


@frozen
class ClickModelDef(MethodDef):
    """A click model, a model of how users examine and click a result list, as a plugin registers it
    (``register(ClickModelDef(...), aliases=(...))`` in the ``irspec_register_click_models`` hook): PBM,
    cascade, DCM, UBM, DBN."""

    kind = "click model"


@frozen
class Method:
    """A bound method spec: a :class:`MethodDef` and the parameters that differ from its defaults.

    Immutable and hashable; ``str(method)`` is the canonical text (``Probabilistic(tau=5)``), parameters in
    declaration order, defaults left out, and parsing it gives back an equal value.
    """

    name: str
    params: tuple[tuple[str, Any], ...] = ()
    definition: MethodDef = field(compare=False, repr=False, hash=False, default=None)  # type: ignore[assignment]

    def get(self, name: str) -> Any:
        """The value of parameter ``name``: as given, or the declared default."""
        given = dict(self.params)
        return given[name] if name in given else self.definition.param(name).default

    def __str__(self) -> str:
        return self.name + (
            "(" + ",".join(f"{k}={_value_text(v)}" for k, v in self.params) + ")" if self.params else ""
        )


FUSION_NORMS: tuple[str, ...] = ("min-max", "max", "sum", "zmuv", "rank", "borda", "min-max-inverted", "none")
"""The normalisations of a run's scores, per query, before fusion (ranx's six, its inverted min-max for
distances, and ``none``); :mod:`irspec.builtin.kernels.fusion` defines each."""

FUSION_NORM = Param(
    "norm",
    "choice",
    "min-max",
    "how each run's scores are normalised per query before fusing (ranx's default: min-max)",
    choices=FUSION_NORMS,
)
"""The parameter every fusion method takes, declared or not."""


@frozen
class FusionDef(MethodDef):
    """A method of fusing several runs into one, as a plugin registers it (``register(FusionDef(...),
    aliases=(...))`` in the ``irspec_register_fusion`` hook): a :class:`MethodDef` in a table of its own.

    ``name`` is the canonical name (``CombMNZ``), ``params`` its parameters as a metric declares them
    (every method also takes ``norm``, the normalisation of each run's scores before fusing, unless it
    declares ``norm`` itself). ``compute`` is the kernel, a function or a ``"module:function"`` string
    imported when runs are fused: ``compute(table, fusion)`` with ``table`` the candidates of a block of
    queries (:class:`irspec.builtin.kernels.fusion.Candidates`: each run's normalised scores and ranks,
    ``NaN``/``-1`` where a run lacks a document) and ``fusion`` the bound :class:`Fusion`, returning one
    fused score per candidate. ``doc`` is the formula and the paper.

    Methods that learn (probfuse, segfuse, ...) set ``fit``: a function or ``"module:function"`` called
    once as ``fit(training, judged, fusion)`` on the training queries' candidates and their judgments
    (:class:`irspec.builtin.kernels.fusion_learning.Judged`: which candidates are relevant, how many
    relevant documents each query has), whose return value (the method's state, plain data) reaches
    the kernel as ``compute(table, fusion, state)``. irspec then refuses to fuse such a method without training judgments. ``weighted`` says the
    method takes one weight per run (``weights``), checked against the number of runs.

    ``grid`` is what parameter search (``--optimize``, :func:`irspec.fusion.tuning.tune`) tries for each
    parameter the user leaves out: ``(("k", (10, 20, ...)),)``; for ``weights``, the values each weight
    may take, the vectors tried being those whose weights sum to 1 (ranx's ``optimize_fusion`` grids).
    """

    kind = "fusion method"

    fit: Callable[..., Any] | str | None = None
    weighted: bool = False
    grid: tuple[tuple[str, tuple[Any, ...]], ...] = ()

    @property
    def all_params(self) -> tuple[Param, ...]:
        """Every parameter the method takes: :data:`FUSION_NORM` first unless it declares ``norm``."""
        return self.params if any(p.name == "norm" for p in self.params) else (FUSION_NORM, *self.params)

    @property
    def learns(self) -> bool:
        """Whether the method is trained on judged queries before it fuses (it has a ``fit`` step)."""
        return self.fit is not None


@frozen
class Fusion(Method):
    """A bound fusion spec: a method and the parameters that differ from its defaults.

    Immutable and hashable; ``str(fusion)`` is the canonical text (``CombMNZ(norm=zmuv)``), parameters
    in declaration order, defaults left out, and parsing it gives back an equal value.
    """

    definition: FusionDef = field(compare=False, repr=False, hash=False, default=None)  # type: ignore[assignment]


ROLES = ("input", "output", "other")
"""What each option of a :class:`Command` is: a file it reads, a file it writes, or neither."""


@frozen
class Command:
    """A subcommand of the ``irspec`` command line that a plugin adds (``irspec_register_commands``).

    ``name`` is the subcommand (``interleave``: ``irspec interleave ...``), ``summary`` its line in
    ``irspec --help`` and ``description`` its help's paragraph (default: the summary). ``declare(parser)``
    adds its arguments to the :class:`argparse.ArgumentParser` irspec makes for it; ``run(args, inputs)``
    does the work and returns the exit code, with ``args`` the parsed arguments and ``inputs`` the
    :class:`irspec.plugin_api.Inputs` of the files it reads. Both may be ``"module:function"`` strings,
    imported when needed: ``run`` when the command runs, ``declare`` also when ``irspec --help`` or
    ``--version`` declares every command (so its module should import argparse alone, not what ``run``
    computes with).

    ``roles`` says what every argument is, by its ``dest``: ``"input"`` (a file, or a list of files, it
    reads), ``"output"`` (a file it writes) or ``"other"``; an argument without a role is refused when the
    parser is made, so that no output escapes the guard (the invariant "Nothing lost"). Before ``run``,
    irspec checks the outputs as every command's are (none is an input, however spelled; no two are one
    file; a directory that exists), and ``run`` writes them with
    :func:`irspec.plugin_api.write_all_atomic` ``(..., inputs=inputs)``, which checks again and writes
    all or none.
    """

    name: str
    summary: str
    declare: Callable[[Any], None] | str
    run: Callable[[Any, Any], int] | str
    roles: Mapping[str, str] = field(default_factory=dict)
    description: str = ""
    plugin: str = field(default="", compare=False)
