"""The evaluation of one run: per-query values and their means, keyed by canonical metric text.

A :class:`Result` holds a run's values (queries × metrics), its warnings and what its input shows
beside them; its means are derived from the values (:mod:`irspec.evaluation.means`, trec_eval's
sums), so that a copy with other values (``dataclasses.replace``) has its own. It is the one result
class: ``irspec.Result``, whatever made it. A :class:`StreamedResult` is what an input evaluated in
one streamed pass gives (``irspec.evaluate_input(..., per_query=False)``): its means as the pass
computed them, and no per-query values.

Both show themselves in a notebook (``_repr_html_``, ``_repr_markdown_``, ``show()``) through the
report layer's :class:`~irspec.report.notebook.Shown`, which reads them as any
:class:`~irspec.evaluation.evaluated.Evaluated`: the report layer sits below this module and knows no
result class.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from irspec.evaluation.context import Options
from irspec.evaluation.means import aggregate_columns
from irspec.frozen import frozen
from irspec.spec.registry import Metric

if TYPE_CHECKING:
    from irspec.evaluation.evaluated import Evaluated
    from irspec.report.notebook import Shown

__all__ = ["Result", "StreamedResult", "handed_over", "with_ids_made_later"]

_MAKE_IDS = "_make_query_ids"
"""Where a :func:`with_ids_made_later` result keeps the function that makes its ids, until they are read."""


class _Shown:
    """What a :class:`Result` and a :class:`StreamedResult` do alike: their values read by query, by
    metric or as a frame (none for a streamed one), and their display in a notebook."""

    run_name: str
    metrics: tuple[Metric, ...]

    if TYPE_CHECKING:  # read-only: a Result has them as fields, a StreamedResult as properties

        @property
        def query_ids(self) -> tuple[str, ...]:
            raise NotImplementedError

        @property
        def values(self) -> np.ndarray:
            raise NotImplementedError

        @property
        def texts(self) -> Mapping[str, tuple[str, ...]]:
            raise NotImplementedError

    def per_query(self) -> dict[str, dict[str, Any]]:
        """``{query_id: {metric: value}}`` for every evaluated query (a string for a text metric; a
        catalogue metric, one value per run, is not there)."""
        kept = [j for j, m in enumerate(self.metrics) if not m.catalogue]
        names = [str(self.metrics[j]) for j in kept]
        out = {
            q: dict(zip(names, row[kept].tolist(), strict=True))
            for q, row in zip(self.query_ids, self.values, strict=True)
        }
        for name, texts in self.texts.items():
            for q, text in zip(self.query_ids, texts, strict=True):
                out[q][name] = text
        return out

    def column(self, metric: Metric | str) -> np.ndarray:
        """One metric's per-query values, aligned with ``query_ids``."""
        key = str(metric)
        for j, m in enumerate(self.metrics):
            if str(m) == key:
                return self.values[:, j]
        raise KeyError(key)

    def to_frame(self, wide: bool = False, backend: str = "polars") -> Any:
        """The per-query values as a data frame (see :func:`~irspec.evaluation.evaluated.results_frame`):
        long, one row per query and metric (``run, query_id, metric, value``), or ``wide``, one row per
        query and a column per metric. ``backend`` is ``"polars"`` or ``"pandas"`` (installed separately)."""
        from irspec.evaluation.evaluated import results_frame

        return results_frame([cast("Evaluated", self)], wide=wide, backend=backend)  # as each subclass is

    def show(self, *, intervals: str | None = "t", decimals: int = 4) -> Shown:
        """The result as a notebook shows it, with ``intervals`` ``"t"``, ``"bootstrap"`` or ``None``."""
        from irspec.report.notebook import Shown

        return Shown((cast("Evaluated", self),), intervals=intervals, decimals=decimals)

    def _repr_html_(self) -> str:
        return self.show()._repr_html_()

    def _repr_markdown_(self) -> str:
        return self.show()._repr_markdown_()

    def __str__(self) -> str:
        # print(res) in a plain REPL: the table a ResultSet prints, one row
        return str(self.show(intervals=None))

    def __repr__(self) -> str:
        # a result holds a queries x metrics array and every query id: a REPL shows what it is, not them
        metrics = ", ".join(map(str, self.metrics))
        return f"{type(self).__name__}({self.run_name!r}, metrics=[{metrics}], queries={len(self.query_ids)})"


@frozen(eq=False, repr=False)  # _Shown's short repr: not every query and value
class Result(_Shown):
    """The evaluation of one run: per-query values and their aggregates, keyed by canonical text.

    ``values`` is a (queries × metrics) float array in the order of ``query_ids`` and ``metrics``; a NaN
    marks a query a metric leaves out (``SL(unfound=skip)``). It is read-only, as the result is frozen
    (its means are derived from it once): a writable array given is copied, the caller's own left as it
    is; ``dataclasses.replace(result, values=...)`` makes a result of other values. A text-valued metric (``relstring``) has
    NaN there, its strings in ``texts``, and NaN as its aggregate. ``warnings`` say what the values rest
    on that the user may not expect: queries the run lacks or has beyond the qrels, a run without
    lines, a relevance level at which nothing is relevant, a name shared with another run.

    In a notebook it shows a table of its means with 95% t intervals (:meth:`show` for others).
    """

    run_name: str
    run_source: str
    metrics: tuple[Metric, ...]
    query_ids: tuple[str, ...]
    values: np.ndarray
    options: Options
    warnings: tuple[str, ...] = ()
    texts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    judged_at_10: float | None = None
    """The run's mean Judged@10 over the queries it answers (see
    :func:`~irspec.evaluation.compute.judgment_coverage`), whatever the metrics; ``None`` when not
    computed (a result not from qrels and a run) or no query was answered."""
    tables: tuple[Any, ...] = ()
    """What an input other than a run offers beside its metrics (:class:`~irspec.spec.definitions.InputTable`,
    a log's top queries say), from its data object's ``tables()``; reports render and plot them."""
    runid: str | None = None
    """The run's own runid (:attr:`irspec.data.Run.runid`), which trec_eval's ``runid`` line prints;
    ``None`` when its input has none. ``run_name`` is what every output calls the run."""
    catalogue: Mapping[str, float] = field(default_factory=dict)
    """The value of each catalogue-level metric (:attr:`~irspec.spec.registry.Metric.catalogue`: item
    coverage, Gini), by canonical text: one per run, computed from every user's list at once. Their
    columns of ``values`` are NaN (no user has a value of their own); :meth:`aggregate` gives these."""

    def __post_init__(self) -> None:
        # Frozen, its values too: the means are cached from them (and a report may have read them), so a
        # value written afterwards would disagree with them. Written, the array now raises.
        object.__setattr__(self, "values", _read_only(self.values))

    def aggregate(self) -> dict[str, float]:
        """Summary value per metric: mean, sum or geometric mean over queries, as the metric says; a
        catalogue metric's one value for the run."""
        return dict(self._means)

    def aggregate_over(self, query_ids: Sequence[str]) -> dict[str, float]:
        """:meth:`aggregate` over ``query_ids`` alone, some of this result's queries, summed in the order
        given (trec_eval's means of those queries): the means of a comparison or a system that leaves out
        a query this run answers (``missing_queries="skip"``)."""
        if tuple(query_ids) == tuple(self.query_ids):
            return self.aggregate()
        position = {q: i for i, q in enumerate(self.query_ids)}
        rows = [position[q] for q in query_ids]
        return dataclasses.replace(
            self, query_ids=tuple(query_ids), values=self.values[rows], texts={}
        ).aggregate()

    def __getstate__(self) -> dict[str, Any]:
        # pickled and copied with its ids made: the pickle of a with_ids_made_later() result is an ordinary
        # result's, with no function in it
        if _MAKE_IDS in self.__dict__:
            self.query_ids  # noqa: B018 (read for its effect)
        return self.__dict__

    def __setstate__(self, state: dict[str, Any]) -> None:
        # unpickled or deep-copied, numpy's array comes back writable: this result's own, made read-only
        self.__dict__.update(state)
        values = state.get("values")
        if isinstance(values, np.ndarray):
            values.flags.writeable = False

    @functools.cached_property
    def _means(self) -> dict[str, float]:
        # Computed from the values on first use and kept on this object only (not a field): a copy made
        # by dataclasses.replace() computes its own from its own values.
        found = aggregate_columns(self.values, [m.aggregate for m in self.metrics])
        means = {str(m): value for m, value in zip(self.metrics, found, strict=True)}
        for m in self.metrics:
            if m.catalogue:  # not a summary of the (NaN) column: the run's one value
                means[str(m)] = float(self.catalogue.get(str(m), np.nan))
        return means


def _read_only(values: Any) -> np.ndarray:
    """``values`` as a read-only array: itself when it is read-only already (another result's, or
    :func:`handed_over`), else a read-only copy, so that the caller's array stays writable and unshared."""
    arr = np.asarray(values)
    if arr.flags.writeable:
        arr = arr.copy()
        arr.flags.writeable = False
    return arr


def handed_over(values: np.ndarray) -> np.ndarray:
    """``values``, an array its maker hands over to a :class:`Result` and keeps no use of, made read-only
    in place: the result takes it as it is, without the copy it makes of a writable array."""
    values.flags.writeable = False
    return values


class _QueryIds:
    """:attr:`Result.query_ids`, read from the instance, or made first by the function that
    :func:`with_ids_made_later` left there. A data descriptor, so that it is asked before the
    instance's own value (a placeholder until the ids are made, which keeps frozen's refusal of a second
    assignment); assigned by ``__init__`` as any field is."""

    def __get__(self, result: Result | None, owner: type | None = None) -> Any:
        if result is None:  # the class's attribute: none, as for any field without a default
            raise AttributeError("query_ids")
        state = result.__dict__
        make = state.get(_MAKE_IDS)
        if make is not None:
            state["query_ids"] = tuple(make())
            state.pop(_MAKE_IDS, None)
        return state["query_ids"]

    def __set__(self, result: Result, ids: tuple[str, ...]) -> None:
        result.__dict__["query_ids"] = ids


# set once the dataclass is made, which would otherwise take the descriptor for the field's default
setattr(Result, "query_ids", _QueryIds())  # noqa: B010 (mypy would refuse the assignment written out)


def with_ids_made_later(make_ids: Callable[[], tuple[str, ...]], **fields: Any) -> Result:
    """A :class:`Result` of ``fields`` (every field but ``query_ids``) whose ``query_ids`` are
    ``make_ids()``, called when they are first read rather than now; a result that is only aggregated
    never makes them (a recommender's 100,000 users' ids as text: a sixth of the time of an evaluation
    of their top 100). Otherwise it is a result as any other: of the class ``Result``, its ids read,
    copied (``dataclasses.replace``, ``copy``) and pickled as any result's, made then, and never assigned
    again. ``make_ids`` gives them in the order of the rows of ``values``."""
    result = Result(query_ids=(), **fields)
    result.__dict__[_MAKE_IDS] = make_ids  # not a field: frozen's guard refuses it through setattr
    return result


@frozen(eq=False, repr=False)
class StreamedResult(_Shown):
    """An input's metrics evaluated in one streamed pass (``per_query=False``): each metric's mean as
    the pass computed it (``means``, by canonical text), with the input's tables and warnings, and no
    per-query values (``query_ids`` is empty, ``values`` has no rows; frames and per-query outputs are
    empty). Every report renders its means, as it renders a :class:`Result`'s."""

    run_name: str
    run_source: str
    metrics: tuple[Metric, ...]
    means: Mapping[str, float]
    """Each metric's mean (canonical text), given by the pass that read the input, not derived here."""
    options: Options = Options()
    warnings: tuple[str, ...] = ()
    tables: tuple[Any, ...] = ()
    """What the input offers beside its metrics (:class:`~irspec.spec.definitions.InputTable`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "means", dict(self.means))  # the caller's dict may change; this may not

    @property
    def query_ids(self) -> tuple[str, ...]:
        """None: a streamed pass keeps no row per item."""
        return ()

    @property
    def values(self) -> np.ndarray:
        """(0 × metrics): no per-query values."""
        return np.empty((0, len(self.metrics)))

    @property
    def texts(self) -> dict[str, tuple[str, ...]]:
        """None: no per-query strings."""
        return {}

    @property
    def judged_at_10(self) -> float | None:
        """``None``: an input's metrics rest on no qrels."""
        return None

    @property
    def runid(self) -> str | None:
        """``None``: an input has no runid."""
        return None

    def aggregate(self) -> dict[str, float]:
        """Each metric's mean, as the streamed pass computed it."""
        return dict(self.means)

    def __repr__(self) -> str:
        metrics = ", ".join(map(str, self.metrics))
        return f"{type(self).__name__}({self.run_name!r}, metrics=[{metrics}], means only)"
