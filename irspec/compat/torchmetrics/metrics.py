"""torchmetrics' retrieval metric classes: the same arguments, states and life cycle, every query at once.

Where torchmetrics is installed, each class is a ``torchmetrics.Metric``: its states are torchmetrics'
(``indexes``, ``preds`` and ``target``, lists gathered across processes as torchmetrics' own retrieval
metrics declare them), so ``forward``, ``update``, ``compute``, ``reset``, DDP, ``MetricCollection``,
``clone``, pickling and Lightning's ``self.log`` work unchanged. Without it, the classes stand on
:class:`PlainMetric`: the same life cycle in one process, over numpy arrays (or tensors, if torch is
there). ``compute`` is :mod:`.retrieval`'s, on the device of the states.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from irspec.compat.torchmetrics import checks
from irspec.compat.torchmetrics import retrieval as kernels
from irspec.compat.torchmetrics.backend import Ops, Route, ops_for, torch_ops

__all__ = [
    "PlainMetric",
    "RetrievalAUROC",
    "RetrievalFallOut",
    "RetrievalHitRate",
    "RetrievalMAP",
    "RetrievalMRR",
    "RetrievalMetric",
    "RetrievalNormalizedDCG",
    "RetrievalPrecision",
    "RetrievalPrecisionRecallCurve",
    "RetrievalRPrecision",
    "RetrievalRecall",
    "RetrievalRecallAtFixedPrecision",
]

# What torchmetrics' Metric takes besides a metric's own arguments: settings of distributed
# synchronisation and caching, which have no effect in one process without it.
_METRIC_SETTINGS = frozenset(
    {
        "compute_on_cpu",
        "dist_sync_on_step",
        "process_group",
        "dist_sync_fn",
        "distributed_available_fn",
        "sync_on_compute",
        "compute_with_cache",
    }
)


class PlainMetric:
    """torchmetrics' ``Metric`` life cycle for when torchmetrics is not installed: ``update`` adds to the
    states, ``compute`` reads them, ``reset`` empties them, and ``forward`` (a call) gives the value of
    its batch alone while adding it to the states. The settings of distributed synchronisation are taken
    and have no effect; any other keyword argument is torchmetrics' ``ValueError``."""

    is_differentiable: bool = False
    higher_is_better: bool | None = True
    full_state_update: bool = False

    def __init__(self, **kwargs: Any) -> None:
        unknown = sorted(set(kwargs) - _METRIC_SETTINGS)
        if unknown:
            raise ValueError(f"Unexpected keyword arguments: {', '.join(f'`{a}`' for a in unknown)}")
        self._state_names: list[str] = []
        self._update_count = 0

    def add_state(
        self, name: str, default: list[Any], dist_reduce_fx: Any = None, persistent: bool = False
    ) -> None:
        """A state that starts as an empty list and grows by ``update``."""
        self._state_names.append(name)
        setattr(self, name, list(default))

    @property
    def update_count(self) -> int:
        """How many times ``update`` was called since the last ``reset``."""
        return self._update_count

    def _plot(self, val: Any = None, ax: Any = None) -> Any:
        raise ModuleNotFoundError(
            "plotting a metric needs torchmetrics (and matplotlib): pip install torchmetrics"
        )

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Add a batch to the states."""
        raise NotImplementedError

    def compute(self) -> Any:
        """The value of everything added since the last ``reset``."""
        raise NotImplementedError

    def reset(self) -> None:
        """Empty the states."""
        for name in self._state_names:
            setattr(self, name, [])
        self._update_count = 0

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The value of this batch alone; the batch is added to the states."""
        kept = {name: getattr(self, name) for name in self._state_names}
        count = self._update_count
        self.reset()
        self.update(*args, **kwargs)
        value = self.compute()
        for name, before in kept.items():
            setattr(self, name, before + getattr(self, name))
        self._update_count = count + 1
        return value

    __call__ = forward


try:
    from torchmetrics import Metric as _Base
except ImportError:  # no torch or no torchmetrics: the life cycle without distributed states
    _Base = PlainMetric  # type: ignore[assignment,misc]


_STATES = ("indexes", "preds", "target")


def _ops(*arrays: Any) -> Ops:
    """The operations of a metric's states: torch's where torchmetrics is installed (its states are
    tensors, whatever the inputs were), else those of the arrays given."""
    return ops_for(*arrays) if _Base is PlainMetric else torch_ops()


class RetrievalMetric(_Base):
    """The states, checks and ``compute`` every retrieval metric of torchmetrics shares (torchmetrics'
    ``RetrievalMetric``): rows of ``indexes``, ``preds`` and ``target`` gathered by ``update``, each query
    valued by :meth:`_values`, the queries without a positive target (:meth:`_empty`) valued by
    ``empty_target_action``, and the values aggregated by ``aggregation``."""

    is_differentiable: bool = False
    higher_is_better: bool | None = True
    full_state_update: bool = False
    plot_lower_bound: float = 0.0
    plot_upper_bound: float = 1.0

    _empty_message = "`compute` method was provided with a query with no positive target."
    _takes_grades = False  # targets other than 0 and 1 (nDCG's)

    def __init__(
        self,
        empty_target_action: str = "neg",
        ignore_index: int | None = None,
        aggregation: str | Callable[..., Any] = "mean",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.allow_non_binary_target = self._takes_grades
        checks.check_empty_target_action(empty_target_action)
        self.empty_target_action = empty_target_action
        checks.check_ignore_index(ignore_index)
        self.ignore_index = ignore_index
        checks.check_aggregation(aggregation)
        self.aggregation = aggregation
        self._add_states()

    def _add_states(self) -> None:
        # as torchmetrics declares its retrieval states: lists, gathered from every process (the states
        # are not declared on the class, where TorchScript would read their annotations)
        for name in _STATES:
            self.add_state(name, default=[], dist_reduce_fx=None)

    def update(self, preds: Any, target: Any, indexes: Any) -> None:
        """Check a batch and add its rows: ``preds`` floats, ``target`` booleans, integers or floats
        (binary unless the metric takes grades), ``indexes`` 64-bit integers naming each row's query, all
        of one shape; rows whose target is ``ignore_index`` are left out. Numpy arrays are taken as they
        are where torchmetrics is not installed, else as tensors sharing their memory."""
        if indexes is None:
            raise ValueError("Argument `indexes` cannot be None")
        ops = _ops(preds, target, indexes)
        preds, target, indexes = (ops.asarray(x, like=preds) for x in (preds, target, indexes))
        indexes, preds, target = checks.check_inputs(
            ops, indexes, preds, target, self.allow_non_binary_target, self.ignore_index
        )
        for name, value in zip(_STATES, (indexes, preds, target), strict=True):
            getattr(self, name).append(value)
        if _Base is PlainMetric:
            self._update_count += 1

    def _blocks(self) -> tuple[Route, Iterator[kernels.Queries]]:
        """Every row added since the last ``reset``, grouped by query and ranked, a block of queries at
        a time; and the route: where they are computed, and what the results are."""
        states = [getattr(self, name) for name in _STATES]
        if any(isinstance(s, list) and not s for s in states):
            raise ValueError("No samples to concatenate")  # torchmetrics' dim_zero_cat's
        route = Route(*(s[0] if isinstance(s, list) else s for s in states))
        batches = [s if isinstance(s, list) else [s] for s in states]
        parts = [tuple(route.inward(x) for x in rows) for rows in zip(*batches, strict=True)]
        return route, kernels.blocks(route.ops, parts)

    def compute(self) -> Any:
        """The aggregate of the queries' values (float32; 0 when every query is skipped)."""
        route, blocks = self._blocks()
        kept = [v for q in blocks if (v := self._kept(q, self._values, scalar=True)) is not None]
        io = route.io
        if not kept:
            return io.zeros((), io.float32, route.like)[()]
        values = kept[0] if len(kept) == 1 else route.ops.concat(kept)
        return kernels.aggregate(io, route.outward(values), self.aggregation)

    def _empty(self, q: kernels.Queries) -> Any:
        """Per query, whether it has no positive target (its targets add up to 0, as torchmetrics tests)."""
        return q.sum(q.target) == 0

    def _kept(self, q: kernels.Queries, compute: Callable[[kernels.Queries], Any], scalar: bool) -> Any:
        """The values ``compute`` gives (float64, one per query, or one row per query) with the empty
        queries valued by ``empty_target_action`` (or left out), as float32; None when none is left.

        torchmetrics goes through the queries in order and stops at the first error: with ``error``, at
        the first empty query, unless a query before it made the metric raise. So an empty first query
        (of ``q``, a block: the queries of the blocks before raised nothing) raises before the values are
        computed, and any other after."""
        ops = q.ops
        empty = self._empty(q)
        error = self.empty_target_action == "error" and bool(empty.any())
        if error and bool(empty[0]):
            raise ValueError(self._empty_message)
        values = compute(q)
        if error:
            raise ValueError(self._empty_message)
        if self.empty_target_action == "skip":
            values = values[ops.flatnonzero(~empty)]
        else:
            fill = 1.0 if self.empty_target_action == "pos" else 0.0
            values = ops.where(empty if scalar else empty[:, None], fill, values)
        return ops.cast(values, ops.float32) if len(values) else None

    def _values(self, q: kernels.Queries) -> Any:
        """Each query's value (float64)."""
        raise NotImplementedError

    def plot(self, val: Any = None, ax: Any = None) -> Any:
        """torchmetrics' plot of a value (or of ``compute()``); needs torchmetrics and matplotlib."""
        return self._plot(val, ax)


class _TopK(RetrievalMetric):
    """A metric with a ``top_k``, checked as torchmetrics checks it: a positive integer or None, or, for
    average precision and reciprocal rank (``_topk_argument``), their own check, which lets a negative
    integer through to fail when computed, as ``torch.topk``'s argument; kept under torchmetrics' name
    for it too (``k`` in ``RetrievalMAP``)."""

    _top_k_name = "top_k"
    _topk_argument = False

    def __init__(
        self,
        empty_target_action: str = "neg",
        ignore_index: int | None = None,
        top_k: int | None = None,
        aggregation: str | Callable[..., Any] = "mean",
        **kwargs: Any,
    ) -> None:
        super().__init__(
            empty_target_action=empty_target_action,
            ignore_index=ignore_index,
            aggregation=aggregation,
            **kwargs,
        )
        if not self._topk_argument:
            checks.check_top_k(top_k)
        elif top_k is not None and not isinstance(top_k, int) and top_k <= 0:
            raise ValueError(f"Argument ``top_k`` has to be a positive integer or None, but got {top_k}")
        self.top_k = top_k
        if self._top_k_name != "top_k":
            setattr(self, self._top_k_name, top_k)


class RetrievalMAP(_TopK):
    """Mean average precision: per query, the mean of the precisions at its relevant documents (target
    and score above 0) within the top ``top_k``, divided by how many there are there (torchmetrics'
    definition, not trec_eval's, which divides by all the relevant documents)."""

    _top_k_name = "k"
    _topk_argument = True

    def _values(self, q: kernels.Queries) -> Any:
        return kernels.average_precision(q, self.top_k)


class RetrievalMRR(_TopK):
    """Mean reciprocal rank: per query, 1 / the rank of its first relevant document (target and score above
    0) within the top ``top_k``, 0 without one."""

    _topk_argument = True

    def _values(self, q: kernels.Queries) -> Any:
        return kernels.reciprocal_rank(q, self.top_k)


class RetrievalPrecision(_TopK):
    """Precision@k: per query, the targets (scores above 0) within the top ``top_k``, over ``top_k`` (over
    the query's size where it has fewer documents and ``adaptive_k`` is set, or ``top_k`` is None)."""

    def __init__(
        self,
        empty_target_action: str = "neg",
        ignore_index: int | None = None,
        top_k: int | None = None,
        adaptive_k: bool = False,
        aggregation: str | Callable[..., Any] = "mean",
        **kwargs: Any,
    ) -> None:
        super().__init__(empty_target_action, ignore_index, top_k, aggregation, **kwargs)
        checks.check_adaptive_k(adaptive_k)
        self.adaptive_k = adaptive_k

    def _values(self, q: kernels.Queries) -> Any:
        return kernels.precision(q, self.top_k, self.adaptive_k)


class RetrievalRecall(_TopK):
    """Recall@k: per query, the targets (scores above 0) within the top ``top_k``, over all its targets."""

    def _values(self, q: kernels.Queries) -> Any:
        return kernels.recall(q, self.top_k)


class RetrievalHitRate(_TopK):
    """Hit rate@k: per query, 1 when a positive target is within the top ``top_k``, else 0."""

    def _values(self, q: kernels.Queries) -> Any:
        return kernels.hit_rate(q, self.top_k)


class RetrievalFallOut(_TopK):
    """Fall-out@k: per query, the non-relevant documents within the top ``top_k``, over all of its
    non-relevant ones. A query without a non-relevant document is the empty one, valued ``pos`` (1) by
    default; lower is better."""

    higher_is_better: bool | None = False
    _empty_message = "`compute` method was provided with a query with no negative target."

    def __init__(
        self,
        empty_target_action: str = "pos",
        ignore_index: int | None = None,
        top_k: int | None = None,
        aggregation: str | Callable[..., Any] = "mean",
        **kwargs: Any,
    ) -> None:
        super().__init__(empty_target_action, ignore_index, top_k, aggregation, **kwargs)

    def _empty(self, q: kernels.Queries) -> Any:
        return q.sum(1 - q.target) == 0

    def _values(self, q: kernels.Queries) -> Any:
        return kernels.fall_out(q, self.top_k)


class RetrievalRPrecision(RetrievalMetric):
    """R-precision: per query, the targets within the top R, over R, R being the number of its relevant
    documents."""

    def _values(self, q: kernels.Queries) -> Any:
        return kernels.r_precision(q)


class RetrievalNormalizedDCG(_TopK):
    """nDCG@k: per query, DCG over ideal DCG within the top ``top_k``, the gain being the target itself
    (graded and negative targets taken), tied scores sharing their mean gain."""

    _takes_grades = True

    def _values(self, q: kernels.Queries) -> Any:
        return kernels.normalized_dcg(q, self.top_k)


class RetrievalAUROC(_TopK):
    """AUROC of each query's top ``top_k`` (the partial, standardised area up to ``max_fpr`` if given);
    0 for a query whose top k lacks a relevant or a non-relevant document."""

    def __init__(
        self,
        empty_target_action: str = "neg",
        ignore_index: int | None = None,
        top_k: int | None = None,
        max_fpr: float | None = None,
        aggregation: str | Callable[..., Any] = "mean",
        **kwargs: Any,
    ) -> None:
        super().__init__(empty_target_action, ignore_index, top_k, aggregation, **kwargs)
        # torchmetrics' check, as written: it refuses only a non-float inside (0, 1]
        if max_fpr is not None and not isinstance(max_fpr, float) and 0 < max_fpr <= 1:
            raise ValueError(f"Arguments `max_fpr` should be a float in range (0, 1], but got: {max_fpr}")
        self.max_fpr = max_fpr

    def _values(self, q: kernels.Queries) -> Any:
        return kernels.auroc(q, self.top_k, self.max_fpr)


class RetrievalPrecisionRecallCurve(RetrievalMetric):
    """Precision and recall at k = 1, ..., ``max_k`` (the largest query's size when None), each
    aggregated over the queries point by point: ``compute`` returns ``(precisions, recalls, top_k)``.
    An empty query's curve is all ones (``pos``) or zeros (``neg``)."""

    def __init__(
        self,
        max_k: int | None = None,
        adaptive_k: bool = False,
        empty_target_action: str = "neg",
        ignore_index: int | None = None,
        aggregation: str | Callable[..., Any] = "mean",
        **kwargs: Any,
    ) -> None:
        _Base.__init__(self, **kwargs)
        self.allow_non_binary_target = False
        checks.check_empty_target_action(empty_target_action)
        self.empty_target_action = empty_target_action
        checks.check_ignore_index(ignore_index)
        self.ignore_index = ignore_index
        checks.check_top_k(max_k, name="max_k")
        self.max_k = max_k
        checks.check_adaptive_k(adaptive_k)
        self.adaptive_k = adaptive_k
        checks.check_aggregation(aggregation)
        self.aggregation = aggregation
        self._add_states()

    def compute(self) -> Any:
        route, blocks = self._blocks()
        parts = list(blocks)
        ops, io = route.ops, route.io
        max_k = self.max_k if self.max_k is not None else max(q.longest for q in parts)
        curves = []
        for which in (0, 1):  # precisions, recalls

            def curve(q: kernels.Queries, which: int = which) -> Any:
                return kernels.curve_values(q, max_k, self.adaptive_k)[which]

            kept = [v for q in parts if (v := self._kept(q, curve, scalar=False)) is not None]
            curves.append(
                kernels.aggregate(io, route.outward(ops.concat(kept)), self.aggregation, dim=0)
                if kept
                else io.zeros(max_k, io.float32, route.like)
            )
        return curves[0], curves[1], io.arange(max_k, route.like) + 1

    def plot(self, curve: Any = None, ax: Any = None) -> Any:
        """torchmetrics' plot of the curve (or of ``compute()``'s)."""
        from torchmetrics.utilities.plot import plot_curve

        curve = curve or self.compute()
        return plot_curve(
            curve,
            ax=ax,
            label_names=("False positive rate", "True positive rate"),
            name=self.__class__.__name__,
        )


class RetrievalRecallAtFixedPrecision(RetrievalPrecisionRecallCurve):
    """The largest recall of the aggregated precision-recall curve whose precision is at least
    ``min_precision``, and the k of it: ``compute`` returns ``(max_recall, best_k)``."""

    higher_is_better: bool | None = True

    def __init__(
        self,
        min_precision: float = 0.0,
        max_k: int | None = None,
        adaptive_k: bool = False,
        empty_target_action: str = "neg",
        ignore_index: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            max_k=max_k,
            adaptive_k=adaptive_k,
            empty_target_action=empty_target_action,
            ignore_index=ignore_index,
            **kwargs,
        )
        if not (isinstance(min_precision, float) and 0.0 <= min_precision <= 1.0):
            raise ValueError("`min_precision` has to be a positive float between 0 and 1")
        self.min_precision = min_precision

    def compute(self) -> Any:
        precisions, recalls, top_k = super().compute()
        ops = _ops(precisions)
        return kernels.recall_at_fixed_precision(ops, precisions, recalls, top_k, self.min_precision)

    def plot(self, val: Any = None, ax: Any = None) -> Any:
        """torchmetrics' plot of the recall (or of ``compute()``'s)."""
        val = val or self.compute()[0]
        return self._plot(val, ax)
