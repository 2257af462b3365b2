"""Parameter search for a fusion spec on training queries: :func:`tune_fusion` (``irspec.tune_fusion``,
``irspec fuse ... --optimize METRIC --qrels TRAIN``).

A grid search like ranx 0.3.21's ``optimize_fusion``: every parameter the spec leaves out that the
method's ``grid`` (:class:`~irspec.spec.definitions.FusionDef`) searches is tried on its grid (ranx's
default grids: RRF's k from 10 to 100 by 10; γ, σ and φ from 0.01 to 1 by 0.01; ProbFuse's segments and
SlideFuse's w from 1 to 100; weights in steps of 0.1 from 0 to 1); a method that learns is trained for
each trial; each trial's fused run of the **training queries only** (the queries of the training qrels
that some run retrieved documents for) is evaluated with the metric, and the best mean wins, a later
trial winning a tie (ranx's ``>=``). A method with nothing to search and nothing to learn is refused.

**Where irspec departs from ranx.** ranx keeps the weight vectors whose float sum is exactly 1.0, which
drops some that sum to 1 on paper (4 of the 66 for three runs, such as (0.2, 0.7, 0.1)); irspec keeps
every vector within 1e-9 of 1. ranx's metric is its own; irspec's is trec_eval's (:func:`irspec.evaluate`
with ``missing_queries="zero"``, as ranx scores a query the fused run lacks).

The training queries are fused too when the tuned spec later fuses the runs: evaluate on other queries,
or use :func:`cross_fuse`, which fuses each fold of queries with parameters tuned on the other folds.
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from irspec.data import Qrels, Run, read_qrels
from irspec.errors import EvaluationError, quote
from irspec.evaluation.evaluator import Evaluator
from irspec.evaluation.result import Result
from irspec.fusion.engine import (
    Trained,
    _read_runs,
    _SearchCandidates,
    fuse,
    fuse_frames,
    train,
    training_queries,
    training_runs,
)
from irspec.spec.definitions import Fusion, Metric
from irspec.spec.fusion import parse_fusion
from irspec.spec.plugins import get_registry

__all__ = ["cross_fuse", "fuse_held_out", "fusion_of_search", "grid_of", "tune_fusion"]


def grid_of(fusion: Fusion, runs: int) -> list[dict[str, Any]]:
    """The trials of a search: one dict of parameter values per trial, in ranx's order (the product of
    the searched parameters' grids; for ``weights``, every vector of ``runs`` weights from the grid
    that sums to 1). Parameters the spec sets are not searched."""
    given = {name for name, _ in fusion.params}
    axes: list[tuple[str, list[Any]]] = []
    for name, values in fusion.definition.grid:
        if name in given:
            continue
        if fusion.definition.param(name).kind == "floats":
            vectors = [v for v in itertools.product(values, repeat=runs) if abs(sum(v) - 1.0) < 1e-9]
            axes.append((name, vectors))
        else:
            axes.append((name, list(values)))
    return [
        dict(zip([n for n, _ in axes], combo, strict=True))
        for combo in itertools.product(*[v for _, v in axes])
    ]


def fusion_of_search(spec: str | Fusion) -> Fusion:
    """The spec of a search bound (its searched parameters may be left out; see
    :func:`~irspec.spec.fusion.parse_fusion`)."""
    return spec if isinstance(spec, Fusion) else parse_fusion(spec, get_registry(), searched=True)


def _with(fusion: Fusion, values: Mapping[str, Any]) -> Fusion:
    """``fusion`` with ``values`` set, canonical (defaults dropped) as binding makes it."""
    merged = dict(fusion.params) | {
        k: tuple(v) if isinstance(v, (list, tuple)) else v for k, v in values.items()
    }
    defn = fusion.definition
    kept = tuple(
        (p.name, merged[p.name]) for p in defn.all_params if p.name in merged and merged[p.name] != p.default
    )
    return Fusion(fusion.name, kept, defn)


def tune_fusion(
    runs: Sequence[Any] | Mapping[str, Any],
    spec: str | Fusion,
    metric: str,
    qrels: Any,
    *,
    memory: str | int | None = None,
    options: Mapping[str, Any] | None = None,
) -> Trained:
    """The parameters of ``spec`` that give the best mean ``metric`` on the training queries of
    ``qrels``, found by grid search (see the module's docstring), and what the method learned with them.
    ``options`` are :func:`irspec.evaluate`'s that score each trial (``relevance_level``, ``depth``,
    ``judged_only``, ``collection_size``), as the evaluation that reports the fused run reads it.

    ``runs`` as :func:`irspec.fuse` takes them; ``spec`` may leave out the parameters to search
    (``"wsum(norm=zmuv)"``: the weights). The result is a :class:`~irspec.fusion.engine.Trained`: pass
    it to :func:`irspec.fuse` as the spec; its ``fusion`` holds the chosen parameters, ``trials`` every
    trial's score, ``note`` what the fused run's provenance says.

    Only the rows of the queries ``qrels`` judge are kept: a run file larger than the memory budget
    (``memory``: bytes or ``"1GiB"``, the default budget when None) is read a block at a time, so the
    search needs memory for the training queries' rows, not for the runs.
    """
    judgments = read_qrels(qrels)
    frames, names = training_runs(runs, fusion_of_search(spec), judgments, memory)
    return _tune(frames, names, spec, metric, judgments, options)


def objective(metrics: Sequence[Metric], text: str) -> Metric:
    """The one metric of ``metrics`` (``text`` bound) that a search optimises. Raises
    :class:`~irspec.errors.EvaluationError` for several (a set such as ``official``, a list) or one with
    no better direction (a count, or a property of the qrels), which nothing can be tuned for."""
    if len(metrics) != 1:
        shown = ", ".join(str(m) for m in metrics[:3]) + (", ..." if len(metrics) > 3 else "")
        raise EvaluationError(f"one metric to optimise, got {quote(text)}: {len(metrics)} metrics ({shown})")
    if metrics[0].better == "neither":
        raise EvaluationError(
            f"{metrics[0]} cannot be optimised: it has no better direction (a count, or a property of the qrels)"
        )
    return metrics[0]


def _tune(
    frames: Sequence[pl.DataFrame],
    names: Sequence[str],
    spec: str | Fusion,
    metric: str | None,
    qrels: Qrels,
    options: Mapping[str, Any] | None = None,
) -> Trained:
    fusion = fusion_of_search(spec)
    trials = grid_of(fusion, len(frames))
    if metric is None:  # a method that learns, trained with the parameters it was given
        if trials != [{}]:
            searched = ", ".join(trials[0])
            raise EvaluationError(f"{fusion} leaves {searched} to search: give the metric to optimise")
        return train(frames, fusion, qrels, names)
    if trials == [{}] and not fusion.definition.learns:
        searched = ", ".join(n for n, _ in fusion.definition.grid) or "none"
        raise EvaluationError(
            f"{fusion} has nothing to tune: it learns nothing and every parameter it searches "
            f"({searched}) is set; leave one out, or fuse without --optimize"
        )
    queries = training_queries(frames, qrels, names)
    keep = list(queries)
    pieces = [f.filter(pl.col("query").is_in(keep)) for f in frames]
    held = Qrels(qrels.frame.filter(pl.col("query").is_in(keep)), qrels.source)
    # scored as the fused run is reported (a plan's relevance level, depth, collection size): a search at
    # other options tunes for another metric
    evaluator = Evaluator(held, metric, judged_warning=None, missing_queries="zero", **dict(options or {}))
    bound = objective(evaluator.metrics, metric)
    lower = bound.better == "lower"
    best: tuple[float, Trained] | None = None
    scores: list[tuple[str, float]] = []
    search = _SearchCandidates(pieces, names, held, queries)
    for values in trials:
        trained = search.train(_with(fusion, values))
        frame = search.fuse(trained)
        run = Run(frame.with_columns(pl.lit(None, pl.UInt32).alias("line")), "trial", "<trial>")
        result = evaluator.evaluate(run)
        if not isinstance(result, Result):  # one run gives one Result
            raise TypeError(f"expected one run's result, got {type(result).__name__}")
        score = float(result.aggregate()[str(bound)])
        scores.append((str(trained.fusion), score))
        if best is None or (score <= best[0] if lower else score >= best[0]) or np.isnan(best[0]):
            best = (score, trained)
    assert best is not None  # at least one trial: the empty search is refused above
    score, chosen = best
    note = f"tuned for {bound} on {len(queries)} queries of {qrels.source} ({len(trials)} trials, best {score:.4f})"
    return Trained(chosen.fusion, chosen.state, note, str(bound), score, tuple(scores), queries)


def cross_fuse(
    runs: Sequence[Any] | Mapping[str, Any],
    spec: str | Fusion,
    metric: str | None,
    qrels: Any,
    *,
    folds: int = 5,
    seed: int = 0,
    depth: int | None = None,
    name: str = "fused",
    options: Mapping[str, Any] | None = None,
) -> tuple[Run, list[Trained]]:
    """Cross-validation over query folds: the judged queries of ``qrels`` that some run retrieved
    documents for are dealt into ``folds`` folds (a seeded permutation); each fold is fused with the
    parameters :func:`tune_fusion` chose on the other folds, so no query is fused by parameters tuned on it.
    Queries the qrels do not judge are fused with the parameters tuned on every judged query.

    ``metric`` None: a method that learns is trained on the other folds with the parameters it is given.
    ``options`` score each trial, as :func:`tune_fusion`'s. Returns the fused run (its ``source`` says
    how) and the :class:`Trained` of each fold, then the one tuned on every judged query (the last)."""
    if isinstance(folds, bool) or not isinstance(folds, numbers.Integral) or folds < 2:
        raise EvaluationError(
            f"cross-validation needs a whole number of folds, two or more, got {quote(folds)}"
        )
    fusion = fusion_of_search(spec)
    read, names = _read_runs(runs, fusion, depth)
    frames = [r.frame for r in read]
    judgments = read_qrels(qrels)
    queries = training_queries(frames, judgments, names)
    if len(queries) < folds:
        raise EvaluationError(
            f"{len(queries)} judged queries cannot make {folds} folds: give fewer folds or more queries"
        )
    order = np.random.default_rng(seed).permutation(len(queries))
    parts = [sorted(queries[i] for i in order[f::folds]) for f in range(folds)]
    fused, tuned = [], []
    for held_out in parts:
        rest = [q for q in queries if q not in set(held_out)]
        train_qrels = Qrels(judgments.frame.filter(pl.col("query").is_in(rest)), judgments.source)
        trained = _tune(frames, names, fusion, metric, train_qrels, options)
        tuned.append(trained)
        pieces = [f.filter(pl.col("query").is_in(held_out)) for f in frames]
        fused.append(fuse_frames(pieces, trained.fusion, names, depth=depth, state=trained.state, warn=False))
    others = [f.filter(~pl.col("query").is_in(list(queries))) for f in frames]
    everything = _tune(frames, names, fusion, metric, judgments, options)
    tuned.append(everything)
    if any(o.height for o in others):
        fused.append(
            fuse_frames(others, everything.fusion, names, depth=depth, state=everything.state, warn=False)
        )
    frame = pl.concat([f for f in fused if f.height]).sort(
        ["query", "score", "docno"], descending=[False, True, True]
    )
    what = f"tuned for {everything.metric}" if metric is not None else "trained"
    note = f"{folds}-fold cross-validation over {len(queries)} queries of {judgments.source}, {what}"
    source = f"<fused: {fusion} of {', '.join(names)}; {note}>"
    return Run(frame.with_columns(pl.lit(None, pl.UInt32).alias("line")), name, source), tuned


def fuse_held_out(
    paths: Sequence[str],
    spec: Fusion,
    metric: str | None,
    train_qrels: Any,
    reported: Any,
    *,
    folds: int = 5,
    depth: int | None = None,
    name: str = "fused",
    where: str = "fused",
    options: Mapping[str, Any] | None = None,
) -> Run:
    """A plan's fused run that learns or searches parameters, never on the queries the plan reports
    (``reported``, the plan's qrels): trained on ``train_qrels`` when given, which must judge none of
    them (else :class:`~irspec.errors.EvaluationError` naming ``where``), or else cross-validated over
    ``folds`` folds of the reported queries (:func:`cross_fuse`). ``options``: the plan's evaluation
    options, which score each trial."""
    if train_qrels is None:
        return cross_fuse(
            paths, spec, metric, reported, folds=folds, depth=depth, name=name, options=options
        )[0]
    training = read_qrels(train_qrels)
    shared = sorted(
        set(training.frame.get_column("query").unique())
        & set(read_qrels(reported).frame.get_column("query").unique())
    )
    if shared:
        shown = ", ".join(shared[:3]) + (", ..." if len(shared) > 3 else "")
        raise EvaluationError(
            f"{where}: the training qrels {training.source} judge {len(shared)} of the queries the plan reports "
            f"({shown}): tuning and reporting on the same queries overstates the gain; leave out train to "
            "cross-validate over folds of the plan's queries, or give training qrels of other queries"
        )
    read, names = _read_runs(paths, spec, depth)
    trained = _tune([r.frame for r in read], names, spec, metric, training, options)
    return fuse(paths, trained, depth=depth, name=name)
