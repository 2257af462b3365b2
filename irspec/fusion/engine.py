"""Runs fused into one by a fusion spec: :func:`fuse` (``irspec.fuse``) and :func:`fuse_to_file`
(``irspec fuse``).

A fusion method is a spec, bound like a metric (:mod:`irspec.spec.fusion`) to a
:class:`~irspec.spec.definitions.FusionDef` that a plugin registers through the ``irspec_register_fusion``
hook (the built-in ones: :mod:`irspec.builtin.fusion`). Fusing is one pass per block of queries:

1. each run's rows of the block are ranked as trec_eval ranks (score descending, docno descending) and
   normalised per query (``norm``);
2. the candidates (every document some run retrieved for a query) are gathered, in descending docno
   order within a query, into :class:`~irspec.builtin.kernels.fusion.Candidates`: each run's
   normalised score and rank per candidate (``borda`` fills in the candidates a run lacks);
3. the method's kernel gives each candidate a fused score; the fused run is ranked the same way and
   cut to ``depth`` documents per query.

**Queries a run lacks.** ranx refuses runs whose query sets differ; irspec fuses them: a query missing
from a run is one for which that run retrieved nothing (it adds nothing to CombSUM, and BordaFuse shares
its points equally among the candidates), and a warning names the run and how many queries it lacks.

**Bounded memory.** :func:`fuse_to_file` opens the run files together
(:func:`irspec.data.stream.open_together`): runs that fit the memory budget together, at
:data:`FUSION_FACTOR` bytes a byte of text, are fused whole; otherwise every run's rows are spread over
temporary files by a hash of the query id (:class:`irspec.data.stream.Partitions`) and fused a partition
at a time, each partition holding every row of its queries in every run, and each partition's TREC lines
are spilled (:class:`irspec.data.stream.SortedSpill`) and written out in query order: runs larger than
memory fuse too, in memory for one partition, and the file is the same byte for byte. (Parquet output in
blocks has the same rows in partition order.)

**Methods that learn** (the extension point): a :class:`~irspec.spec.definitions.FusionDef` with ``fit``
is trained before it fuses: ``state = fit(training, judged, fusion)``, ``training`` the
:class:`~irspec.builtin.kernels.fusion.Candidates` of the training queries (the queries of the
training qrels that some run retrieved documents for; their ``queries`` and ``docnos`` name each
candidate) and ``judged`` their :class:`~irspec.builtin.kernels.fusion_learning.Judged` (which
candidates are relevant, and how many relevant documents each query has), and its kernel is called
as ``compute(table, fusion, state)``.
:func:`fuse` takes the training judgments as ``qrels=`` and refuses a learning method without them, or
with qrels that share no query with the runs; :func:`train` gives a :class:`Trained` (the spec and
what it learned), which :func:`fuse` and :func:`fuse_to_file` also take in place of a spec. Parameter
search and cross-validation over query folds (:mod:`irspec.fusion.tuning`) build on the same calls.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, BinaryIO

import numpy as np
import polars as pl

from irspec.builtin.kernels.fusion import Candidates, borda_fill, normalise
from irspec.builtin.kernels.fusion_learning import Judged
from irspec.data import Qrels, Run, read_qrels, read_run, value_runs
from irspec.data.objects import no_lines
from irspec.data.stream import (
    DISCARD,
    Partitions,
    RunBlocks,
    SortedSpill,
    open_run,
    open_together,
    spill_directory,
    spill_frame,
)
from irspec.data.trec import stem
from irspec.errors import EvaluationError, InputError, InputTypeError, IrspecWarning, ParameterError, quote
from irspec.frozen import frozen
from irspec.report.files import Inputs, check_writable, in_place, write_all_atomic
from irspec.spec.definitions import Fusion
from irspec.spec.fusion import parse_fusion
from irspec.spec.plugins import get_registry

__all__ = [
    "Trained",
    "fuse",
    "fuse_frames",
    "fuse_to_file",
    "fusion_of",
    "train",
    "training_runs",
    "trec_lines",
]


_BLANK = r"[ \t\r\n\x0b\x0c]"
"""TREC text's field separators and line ends (the readers' blanks)."""

FUSION_FACTOR = 10.0
"""Peak bytes of memory per byte of the runs' text when they are fused whole: measured 8.7 (two runs of
2M lines, 1,000 documents a query, RRF; the candidates twice the rows of a run), rounded up. Runs
that would not fit the budget together at this rate are fused in blocks."""


@frozen
class Trained:
    """A fusion spec with the parameters and the state it was given by training: what :func:`train`
    and :func:`irspec.fusion.tuning.tune` return, and what :func:`fuse` takes in place of a spec.

    ``fusion`` is the bound spec (with any chosen parameters), ``state`` what the method's ``fit``
    learned (None for a method that does not learn), ``note`` how it was trained, for the fused run's
    provenance (``trained on 40 queries of train.qrels``); a tuned one also has the ``metric`` it was
    tuned for, the ``score`` the chosen parameters reached, every ``trial`` (canonical spec, score) and
    the training ``queries``.
    """

    fusion: Fusion
    state: Any = None
    note: str = ""
    metric: str | None = None
    score: float | None = None
    trials: tuple[tuple[str, float], ...] = ()
    queries: tuple[str, ...] = ()

    def __str__(self) -> str:
        return str(self.fusion)

    def provenance(self) -> dict[str, Any]:
        """What a fused run's provenance records of its spec: JSON-ready."""
        out: dict[str, Any] = {"method": str(self.fusion), "training": self.note or None}
        if self.metric is not None:
            out.update(
                metric=self.metric,
                score=self.score,
                parameters={k: list(v) if isinstance(v, tuple) else v for k, v in self.fusion.params},
                trials=len(self.trials),
                training_queries=len(self.queries),
            )
        return out


def fusion_of(spec: str | Fusion | Trained) -> Fusion:
    """``spec`` bound against the current registry (a :class:`Fusion` is returned as it is)."""
    if isinstance(spec, Trained):
        return spec.fusion
    return spec if isinstance(spec, Fusion) else parse_fusion(spec, get_registry())


def _read_runs(
    runs: Sequence[Any] | Mapping[str, Any], fusion: Fusion, depth: int | None = None
) -> tuple[list[Run], list[str]]:
    """The runs read, and their names for messages; the number of runs, weights and depth are checked
    before anything is read."""
    items = _checked_items(runs, fusion, depth)
    read = [read_run(src) for _, src in items]
    names = _numbered([label or run.name for (label, _), run in zip(items, read, strict=True)])
    for run, label in zip(read, names, strict=True):
        _check_rows(run.frame.height, label)
    return read, names


def _checked_items(
    runs: Sequence[Any] | Mapping[str, Any], fusion: Fusion, depth: int | None
) -> list[tuple[str | None, Any]]:
    """``runs`` as (label or None, run) pairs, their number, weights and ``depth`` checked against
    ``fusion`` before anything is read (a run without a label named by its position)."""
    if isinstance(runs, Mapping):
        label = next((k for k in runs if not isinstance(k, str)), None)
        if label is not None:
            raise InputTypeError(
                f"runs: run names must be strings, not {type(label).__name__} {quote(label, 40)}"
            )
    elif isinstance(runs, (str, bytes, os.PathLike)) or not isinstance(
        runs, Iterable
    ):  # a path is not a list
        raise InputTypeError(
            f"runs: expected a list of runs or a mapping {{name: run}}, not {type(runs).__name__} {quote(runs, 40)}"
        )
    items: list[tuple[str | None, Any]] = (
        list(runs.items()) if isinstance(runs, Mapping) else [(None, r) for r in runs]
    )
    _check(fusion, len(items), [label or f"#{i + 1}" for i, (label, _) in enumerate(items)], depth)
    return items


def _numbered(names: list[str]) -> list[str]:
    """``names``, each with its position when two are the same (unnamed dicts are all "run")."""
    return [f"{n} (#{i + 1})" for i, n in enumerate(names)] if len(set(names)) < len(names) else names


def training_runs(
    runs: Sequence[Any] | Mapping[str, Any], fusion: Fusion, qrels: Qrels, memory: str | int | None = None
) -> tuple[list[pl.DataFrame], list[str]]:
    """Each run's rows of the queries ``qrels`` judge, and the runs' names (as :func:`fuse` names them):
    what training and parameter search read. A run file larger than the memory budget (``memory``, as
    :func:`irspec.data.stream.open_run` takes it) is read a block at a time, keeping only those rows, so
    training needs memory for the training queries' rows, not for the runs."""
    items = _checked_items(runs, fusion, None)
    judged = qrels.frame.get_column("query").unique().to_list()
    frames, names = [], []
    for label, src in items:
        opened = open_run(src, memory)
        name = label or (stem_name(os.fspath(src)) if isinstance(opened, RunBlocks) else opened.name)
        if isinstance(opened, Run):
            blocks: Iterable[Any] = [opened]
        else:
            blocks = opened
        kept: list[pl.DataFrame] = []
        rows = 0
        try:
            for block in blocks:
                if block is DISCARD:  # the run is not grouped: its rows come again, whole
                    kept, rows = [], 0
                    continue
                rows += block.frame.height
                kept.append(block.frame.filter(pl.col("query").is_in(judged)))
        finally:
            if isinstance(opened, RunBlocks):
                opened.close()
        _check_rows(rows, name)
        frames.append(pl.concat(kept))
        names.append(name)
    return frames, _numbered(names)


def fuse(
    runs: Sequence[Any] | Mapping[str, Any],
    spec: str | Fusion | Trained,
    *,
    depth: int | None = None,
    name: str = "fused",
    qrels: Any = None,
) -> Run:
    """Fuse ``runs`` into one run by the fusion ``spec`` (``"rrf(k=60)"``, ``"wsum(weights=[0.3,0.7],
    norm=zmuv)"``, ``"mnz(norm=min-max)"``: ranx's names as spelled, or irspec's canonical ones).

    ``runs`` is a list of anything :func:`irspec.evaluate` takes as a run (paths, ``{qid: {docno:
    score}}`` dicts, DataFrames, :class:`irspec.data.Run`), or a mapping of names to them (the names
    then appear in messages). ``depth`` keeps the top ``depth`` documents of each fused query. The result
    is a :class:`irspec.data.Run` named ``name``, for :func:`irspec.evaluate`, :func:`irspec.compare` or
    a file (:func:`trec_lines`); its ``source`` names the spec and how it was trained.

    A method that learns (``probfuse(segments=25)``, ``posfuse``, ...) is trained on ``qrels``, the
    training judgments (anything :func:`irspec.evaluate` takes as qrels), before it fuses every query of
    the runs; ``spec`` may also be a :class:`Trained` (:func:`train`, :func:`irspec.tune_fusion`).
    """
    fusion = fusion_of(spec)
    _check_unused_qrels(spec, fusion, qrels)
    read, names = _read_runs(runs, fusion, depth)
    frames = [r.frame for r in read]
    trained = spec if isinstance(spec, Trained) else train(frames, fusion, qrels, names)
    frame = fuse_frames(frames, trained.fusion, names, depth=depth, state=trained.state)
    note = f"; {trained.note}" if trained.note else ""
    source = f"<fused: {trained} of {', '.join(names)}{note}>"
    return Run(frame.hstack([no_lines(frame.height)]), name, source)


def _check_unused_qrels(spec: Any, fusion: Fusion, qrels: Any) -> None:
    """Refuse training qrels given to a method that learns nothing: silently unused, they would let a
    user believe the fused run was trained or tuned on them."""
    if qrels is not None and not isinstance(spec, Trained) and not fusion.definition.learns:
        raise EvaluationError(
            f"{fusion} learns nothing, so the training qrels would not be used: leave them out, or search "
            "its parameters on them (--optimize METRIC on the command line, irspec.tune_fusion in Python)"
        )


def train(frames: Sequence[pl.DataFrame], fusion: Fusion, qrels: Any, names: Sequence[str]) -> Trained:
    """``fusion`` trained on the judged queries of the run frames (``qrels``: anything
    :func:`irspec.read_qrels` takes); a method that does not learn is returned as it is.

    Raises :class:`~irspec.errors.EvaluationError` for a method that learns without ``qrels``, and
    :class:`~irspec.errors.InputError` naming the qrels when they share no query with the runs."""
    fit_step = fusion.definition.fit
    if fit_step is None:  # the method does not learn
        return Trained(fusion)
    if qrels is None:
        raise EvaluationError(
            f"{fusion} learns from judged queries: give the training qrels (qrels= in Python, --qrels "
            "on the command line)"
        )
    judgments = read_qrels(qrels)
    _check(fusion, len(frames), names, None)
    queries = training_queries(frames, judgments, names)
    return _fit(
        fit_step, fusion, judgments, training_table(frames, judgments, queries, fusion.get("norm")), queries
    )


def _fit(
    fit_step: Callable[..., Any] | str,
    fusion: Fusion,
    judgments: Qrels,
    training: tuple[Candidates, Judged],
    queries: tuple[str, ...],
) -> Trained:
    """``fusion`` fitted by its method's ``fit_step`` to the candidates of its training queries and their
    judgments."""
    state = _function(fit_step)(*training, fusion)
    return Trained(fusion, state, f"trained on {len(queries)} queries of {judgments.source}", queries=queries)


def training_queries(frames: Sequence[pl.DataFrame], qrels: Qrels, names: Sequence[str]) -> tuple[str, ...]:
    """The training queries, sorted: the qrels' queries some run retrieved documents for. Raises
    :class:`~irspec.errors.InputError` when there is none."""
    judged = qrels.frame.get_column("query").unique()
    retrieved = pl.concat([f.get_column("query").unique() for f in frames]).unique()
    queries = tuple(sorted(set(judged.to_list()) & set(retrieved.to_list())))
    if not queries:
        shown = ", ".join(sorted(judged.to_list())[:3])
        raise InputError(
            f"{qrels.source}: the training qrels share no query with the runs "
            f"({', '.join(quote(n) for n in names)}): they judge {judged.len()} queries ({shown}"
            f"{', ...' if judged.len() > 3 else ''}), none of which a run retrieved documents for"
        )
    return queries


def training_table(
    frames: Sequence[pl.DataFrame], qrels: Qrels, queries: Sequence[str], norm: str
) -> tuple[Candidates, Judged]:
    """The candidates of ``queries`` (training queries some run retrieved documents for) after the
    normalisation ``norm``, and which of them ``qrels`` judge relevant (a label of 1 or more)."""
    keep = list(queries)
    pieces = [f.filter(pl.col("query").is_in(keep)) for f in frames]
    names, table = _candidates(pieces, norm)
    return table, _judged(names, qrels)


def _judged(names: _Names, qrels: Qrels) -> Judged:
    """Which of the candidates ``names`` ``qrels`` judge relevant (a label of 1 or more), and how many
    relevant documents they judge for each query."""
    first = names.frame()
    labels = qrels.frame.select("query", "docno", "label")
    joined = first.join(labels, on=["query", "docno"], how="left", maintain_order="left")
    relevant = (joined.get_column("label").fill_null(0) >= 1).to_numpy()
    ids = first.get_column("query").unique(maintain_order=True)
    totals = (
        pl.DataFrame({"query": ids})
        .join(
            labels.filter(pl.col("label") >= 1).group_by("query").len(),
            on="query",
            how="left",
            maintain_order="left",
        )
        .get_column("len")
        .fill_null(0)
        .to_numpy()
    )
    return Judged(relevant, totals)


def fuse_frames(
    frames: Sequence[pl.DataFrame],
    fusion: Fusion,
    names: Sequence[str],
    *,
    depth: int | None = None,
    state: Any = None,
    warn: bool = True,
) -> pl.DataFrame:
    """The fused rows (``query``, ``docno``, ``score``; ranked, cut to ``depth``) of run frames holding
    whole queries. Checks the number of runs and weights, and warns of queries a run lacks."""
    _check(fusion, len(frames), names, depth)
    if warn:
        _warn_missing(_lacking(frames), names)
    return _fuse_block(frames, fusion, depth, state)


def _check(fusion: Fusion, count: int, names: Sequence[str], depth: int | None) -> None:
    """The number of runs (two or more, one weight each) and the depth (a positive integer)."""
    if count < 2:
        raise EvaluationError(f"fusion needs two runs or more, got {count}")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise EvaluationError(f"depth must be a positive number of documents, got {quote(depth)}")
    weights = fusion.get("weights") if fusion.definition.weighted else None
    if weights is not None and len(weights) != count:
        raise ParameterError(
            fusion.name,
            "weights",
            f"{len(weights)} weight{'s' if len(weights) != 1 else ''} for {count} runs "
            f"({', '.join(quote(n) for n in names)}); give one weight per run, in the runs' order",
        )


def _lacking(frames: Sequence[pl.DataFrame]) -> tuple[int, list[list[str]]]:
    """The number of queries of the frames together, and the ones each frame lacks (sorted)."""
    ids = [set(f.get_column("query").unique().to_list()) for f in frames]
    union = set().union(*ids)
    return len(union), [sorted(union - own) for own in ids]


def _warn_missing(lacking: tuple[int, list[list[str]]], names: Sequence[str]) -> None:
    total, missing = lacking
    for name, ids in zip(names, missing, strict=True):
        if ids:
            shown = ", ".join(ids[:3]) + (", ..." if len(ids) > 3 else "")
            warnings.warn(
                f"run {quote(name)} has no documents for {len(ids)} of the {total} queries fused "
                f"({shown}); it adds nothing to them (ranx would refuse runs whose queries differ)",
                IrspecWarning,
                stacklevel=4,
            )


def _function(named: Callable[..., Any] | str) -> Callable[..., Any]:
    """A kernel or fit: a function, or a ``"module:function"`` string imported now."""
    if isinstance(named, str):
        module, _, function = named.partition(":")
        return getattr(importlib.import_module(module), function)
    return named


def _kernel(fusion: Fusion) -> Callable[..., np.ndarray]:
    return _function(fusion.definition.compute)


@frozen
class _Names:
    """Which document of which query each candidate is, as codes: ``query`` indexes ``queries`` (the
    block's query ids, sorted) and ``docno`` indexes ``docnos`` (the block's docnos, in descending
    order); the strings themselves are gathered only for the rows that need them."""

    queries: pl.Series
    docnos: pl.Series
    query: np.ndarray
    docno: np.ndarray

    def frame(self, order: np.ndarray | None = None) -> pl.DataFrame:
        """The candidates' ``query`` and ``docno`` columns (those at ``order``, if given)."""
        query, docno = (self.query, self.docno) if order is None else (self.query[order], self.docno[order])
        # indexed, not gather()ed: the same rows without the query an expression runs (a small fuse's cost)
        return pl.DataFrame([self.queries[query].alias("query"), self.docnos[docno].alias("docno")])


def _codes(values: pl.Series, descending: bool = False) -> tuple[pl.Series, np.ndarray]:
    """The distinct ``values`` sorted (polars' order of strings, bytewise, as its sorts compare them),
    and each value's index among them: one hash of every value instead of a sort of the rows. Meant for
    few distinct values: polars' lookup of many categories is slower than a sort."""
    distinct = values.unique().sort(descending=descending)
    if values.len() == 0:
        return distinct, np.zeros(0, dtype=np.int64)
    return distinct, values.cast(pl.Enum(distinct)).to_physical().to_numpy().astype(np.int64)


FEW = 100
"""Rows per distinct docno from which candidates are found by docno codes, not by a sort (see
:func:`_candidate_ids`; measured: codes cost more than a sort below about 50)."""

TABLE = 8
"""Possible keys (queries × distinct docnos) per row up to which the codes path marks keys in a table
instead of sorting them."""

LONG = 64
"""Candidates per query, on average, from which the fused run is ranked a query at a time (see
:func:`_ranking`)."""

CHECKED = 1000
"""Rows from which a run's order is checked before it is sorted (see :func:`_ranked`): below, a sort
costs less than the check alone (measured: 0.1 ms against 0.3 at 40 rows, 0.4 against 0.5 at 1,000 rows
out of order)."""


def _candidate_ids(query: np.ndarray, docno: pl.Series, queries: pl.Series) -> tuple[np.ndarray, _Names]:
    """Each row's candidate, numbered in candidate order (query ascending, docno descending), and the
    candidates' names; the rows given by their query's index in ``queries`` (sorted) and their docno.

    When docnos repeat across queries (one collection, many queries), each distinct docno gets its
    index in descending order (:func:`_codes`), each row the key ``query × docnos + docno``, and a
    candidate is a distinct key: integers where a sort would compare strings. Otherwise the rows are
    sorted by query and docno, and a candidate is a run of equal pairs. ``tests/test_fusion.py`` holds
    both ways equal."""
    rows = docno.len()
    # distinct hashes: at most the distinct docnos (a collision only makes them fewer, so costs speed,
    # never exactness: the choice of way does not change the result); fewer than FEW rows cannot have
    # FEW rows a docno, and are not hashed (a query polars runs: a small fuse's tenth of a millisecond)
    if rows and rows >= FEW and docno.hash().n_unique() * FEW <= rows:
        docnos, code = _codes(docno, descending=True)
        width = docnos.len()
        key = query * width + code
        if queries.len() * width <= TABLE * rows:  # a table of every possible key is small: no sort
            seen = np.zeros(queries.len() * width, dtype=bool)
            seen[key] = True
            first = np.flatnonzero(seen)  # each candidate's key, in key order
            candidate = (np.cumsum(seen) - 1)[key]
        else:
            candidate = pl.Series(key).rank("dense").to_numpy().astype(np.int64) - 1
            first = np.empty(int(candidate.max()) + 1, dtype=np.int64)
            first[candidate] = key
        return candidate, _Names(queries, docnos, first // width, first % width)
    ordered = (
        pl.DataFrame([pl.Series("q", query), docno.alias("docno")])
        .with_row_index("row")
        .sort(["q", "docno"], descending=[False, True])
    )
    q, d = pl.col("q"), pl.col("docno")
    new = ordered.select(q.ne_missing(q.shift()) | d.ne_missing(d.shift())).to_series().to_numpy()
    candidate = np.empty(rows, dtype=np.int64)
    candidate[ordered.get_column("row").to_numpy()] = np.cumsum(new) - 1
    heads = ordered.filter(new)  # one row per candidate
    names = _Names(
        queries, heads.get_column("docno"), heads.get_column("q").to_numpy(), np.arange(heads.height)
    )
    return candidate, names


def _candidates(frames: Sequence[pl.DataFrame], norm: str) -> tuple[_Names, Candidates]:
    """The candidates of frames holding whole queries: their names (:class:`_Names`, in candidate
    order) and their :class:`Candidates` (steps 1 and 2 of the module's docstring)."""
    m = len(frames)
    # the columns taken as they are: a select runs a query, a tenth of a millisecond on a small run
    ranked = [
        _ranked(
            pl.DataFrame([frame.get_column(c) for c in ("query", "docno", "score")]),
            norm == "min-max-inverted",
        )
        for frame in frames
    ]
    blocks = [value_runs(r.get_column("query")) for r in ranked]  # one block per query: ranked groups them
    ids = [values for values, _ in blocks]
    queries, block_codes = _codes(pl.concat(ids).alias("query") if ids else pl.Series("query", [], pl.String))
    heights = [r.height for r in ranked]
    query_parts, rank_parts, norm_parts = [], [], []
    at = 0
    for r, (_, lengths) in zip(ranked, blocks, strict=True):
        starts = np.concatenate(([0], np.cumsum(lengths)))
        ranks = np.arange(r.height, dtype=np.int64) - np.repeat(starts[:-1], lengths)
        rank_parts.append(ranks)
        norm_parts.append(normalise(r.get_column("score").to_numpy(), starts, ranks, norm))
        query_parts.append(np.repeat(block_codes[at : at + len(lengths)], lengths))
        at += len(lengths)
    query = np.concatenate(query_parts) if query_parts else np.zeros(0, dtype=np.int64)
    docno = (
        pl.concat([r.get_column("docno") for r in ranked]) if ranked else pl.Series("docno", [], pl.String)
    )
    candidate, names = _candidate_ids(query, docno, queries)
    n, q = len(names.query), queries.len()
    scores = np.full((m, n), np.nan)
    ranks = np.full((m, n), -1, dtype=np.int64)
    row = 0
    for i, height in enumerate(heights):
        here = candidate[row : row + height]
        scores[i, here] = norm_parts[i]
        ranks[i, here] = rank_parts[i]
        row += height
    run = np.repeat(np.arange(m, dtype=np.int64), heights)
    counts = np.bincount(run * q + query, minlength=m * q)
    starts = np.concatenate(([0], np.cumsum(np.bincount(names.query, minlength=q))))
    table = Candidates(scores, ranks, starts, counts.reshape(m, q), queries, names.docnos[names.docno])
    if norm == "borda":
        table = borda_fill(table)
    return names, table


def _fuse_block(
    frames: Sequence[pl.DataFrame], fusion: Fusion, depth: int | None, state: Any = None
) -> pl.DataFrame:
    names, table = _candidates(frames, fusion.get("norm"))
    return _fused(names, table, fusion, depth, state)


def _fused(names: _Names, table: Candidates, fusion: Fusion, depth: int | None, state: Any) -> pl.DataFrame:
    """The candidates ``names`` and ``table`` scored by ``fusion``'s kernel, ranked and cut to ``depth``."""
    n = len(names.query)
    kernel = _kernel(fusion)
    fused = kernel(table, fusion) if state is None else kernel(table, fusion, state)
    fused = np.asarray(fused, dtype=np.float64)
    if fused.shape != (n,):
        raise EvaluationError(
            f"fusion method {fusion.name} (plugin {fusion.definition.plugin!r}) gave {fused.shape} scores "
            f"for {n} candidates"
        )
    if not np.isfinite(fused).all():
        bad = int(np.flatnonzero(~np.isfinite(fused))[0])
        query, docno = names.frame(np.array([bad])).row(0)
        raise EvaluationError(
            f"{fusion} gave the score {fused[bad]} to document {quote(docno)} of query "
            f"{quote(query)}: choose parameters that keep the scores finite"
        )
    order = _ranking(fused, table.starts, depth)
    return names.frame(order).hstack([pl.Series("score", fused[order])])  # no query: with_columns runs one


class _SearchCandidates:
    """The candidates of fixed run frames holding a search's training ``queries`` alone (judged by
    ``qrels``), made once for each normalisation asked for: the trials of a parameter search
    (:mod:`irspec.fusion.tuning`) differ in their parameters, never in their candidates, and making
    those was most of a trial's time (benchmarks/README.md). :meth:`train` and :meth:`fuse` give what
    :func:`train` and :func:`fuse_frames` give for these frames."""

    def __init__(
        self, frames: Sequence[pl.DataFrame], names: Sequence[str], qrels: Qrels, queries: tuple[str, ...]
    ) -> None:
        self.frames = frames
        self.names = names
        self.qrels = qrels
        self.queries = queries
        self._made: dict[str, tuple[_Names, Candidates]] = {}
        self._judged: dict[str, Judged] = {}

    def _candidates(self, norm: str) -> tuple[_Names, Candidates]:
        if norm not in self._made:
            self._made[norm] = _candidates(self.frames, norm)
        return self._made[norm]

    def train(self, fusion: Fusion) -> Trained:
        """``train(frames, fusion, qrels, names)``."""
        fit_step = fusion.definition.fit
        if fit_step is None:
            return Trained(fusion)
        _check(fusion, len(self.frames), self.names, None)
        norm = fusion.get("norm")
        names, table = self._candidates(norm)
        if norm not in self._judged:
            self._judged[norm] = _judged(names, self.qrels)
        judged = self._judged[norm]
        training = (_own(table), Judged(judged.relevant.copy(), judged.totals.copy()))
        return _fit(fit_step, fusion, self.qrels, training, self.queries)

    def fuse(self, trained: Trained) -> pl.DataFrame:
        """``fuse_frames(frames, trained.fusion, names, state=trained.state, warn=False)``: the fused rows,
        ranked, not cut."""
        _check(trained.fusion, len(self.frames), self.names, None)
        names, table = self._candidates(trained.fusion.get("norm"))
        return _fused(names, _own(table), trained.fusion, None, trained.state)


def _own(table: Candidates) -> Candidates:
    """``table`` with arrays of its own, as a fresh one has: a method that wrote into its table would
    otherwise change the next trial's."""
    return Candidates(
        table.scores.copy(),
        table.ranks.copy(),
        table.starts.copy(),
        table.counts.copy(),
        table.queries,
        table.docnos,
    )


def _ranking(fused: np.ndarray, starts: np.ndarray, depth: int | None) -> np.ndarray:
    """The candidates' order in the fused run: by query, then descending fused score, cut to ``depth``.
    Candidates are in descending docno order within a query, so a stable sort leaves ties in that
    order, which is trec_eval's."""
    n = len(fused)
    sizes = np.diff(starts)
    if n >= LONG * len(sizes):  # long queries: one short sort each beats one long lexsort
        order = np.empty(n, dtype=np.int64)
        negated = -fused
        for start, stop in zip(starts[:-1].tolist(), starts[1:].tolist(), strict=True):
            order[start:stop] = start + np.argsort(negated[start:stop], kind="stable")
    else:
        order = np.lexsort((-fused, np.repeat(np.arange(len(sizes)), sizes)))
    if depth is not None:
        order = order[np.arange(n) - np.repeat(starts[:-1], sizes) < depth]
    return order


def _ranked(frame: pl.DataFrame, inverted: bool) -> pl.DataFrame:
    """A run's rows grouped by query, each query in trec_eval's order (score descending, then docno
    descending; an inverted normalisation ranks the smallest score first). A run already so (a TREC
    file as systems write it, in any order of queries) of :data:`CHECKED` rows or more is only checked,
    not sorted, as the engine's ranking does; ``tests/test_fusion.py`` holds both paths equal (the
    order of the queries changes no candidate)."""
    by, descending = ["query", "score", "docno"], [False, not inverted, True]
    if frame.height < CHECKED:
        return frame.sort(by, descending=descending)
    query, score, docno = pl.col("query"), pl.col("score"), pl.col("docno")
    before, prev = (score > score.shift()) if inverted else (score < score.shift()), score.shift()
    in_order = frame.select(
        (query.ne_missing(query.shift()) | before | ((score == prev) & (docno < docno.shift())))
        .all()
        .alias("ranked"),
        (query.rle_id().max().fill_null(0) + 1 == query.n_unique()).alias(
            "grouped"
        ),  # each query's rows together
    ).row(0)
    if frame.height == 0 or all(in_order):
        return frame
    return frame.sort(by, descending=descending)


def trec_lines(frame: pl.DataFrame, runid: str) -> Iterable[str]:
    """A fused frame (ranked, as :func:`fuse_frames` returns it) as TREC run lines, scores at full
    precision (the shortest text that reads back as the same float, so the run ranks as it was fused).
    A ``runid`` with a blank or a control character is an :class:`~irspec.errors.InputError`."""
    for chunk in _line_column(frame, _check_runid(runid)).to_list():
        yield chunk + "\n"


def _line_column(frame: pl.DataFrame, runid: str) -> pl.Series:
    """:func:`trec_lines`' lines, without their line ends, as a string column. An id with a blank (from
    a Parquet run) is an error: written into a line it would read back as other fields."""
    blank = pl.col("query").str.contains(_BLANK) | pl.col("docno").str.contains(_BLANK)
    bad = frame.filter(blank).head(1)
    if bad.height:
        query, docno = bad.select("query", "docno").row(0)
        raise InputError(
            f"document {quote(docno)} of query {quote(query)} has a blank in its id, which a TREC run line "
            "cannot hold: write Parquet instead (-o fused.parquet)"
        )
    return frame.select(
        pl.format(
            "{} Q0 {} {} {} {}",
            "query",
            "docno",
            (pl.int_range(pl.len()).over("query") + 1).cast(pl.String),
            pl.col("score").cast(pl.String),
            pl.lit(runid),
        ).alias("line")
    ).get_column("line")


def _write_lines(lines: pl.Series, out: BinaryIO, chunk: int = 1 << 16) -> None:
    """``lines`` written to ``out`` a chunk at a time: the text of a whole run is never held at once."""
    for start in range(0, len(lines), chunk):
        out.write(_joined(lines.slice(start, chunk)))


def _joined(lines: pl.Series) -> bytes:
    """``lines`` as UTF-8 text, each ended by a line end."""
    return (lines.str.join("\n").item() + "\n").encode() if len(lines) else b""


def fuse_to_file(
    paths: Sequence[str | Run],
    spec: str | Fusion | Trained,
    output: str | None,
    *,
    depth: int | None = None,
    runid: str | None = None,
    memory: str | int | None = None,
    qrels: Any = None,
) -> Trained:
    """``irspec fuse``: the runs at ``paths`` fused into ``output`` (TREC text, or Parquet when its name
    ends in ``.parquet``; standard output when None), in bounded memory (see the module's docstring).
    Written atomically: nothing is left at ``output`` on error. A method that learns is trained on
    ``qrels`` first, from the rows of the queries they judge (:func:`training_runs`, in bounded
    memory too). A run already read (standard input, which can be read only once, when the method is
    trained or tuned first) is given as its :class:`~irspec.data.Run`. Returns the spec with what it
    learned."""
    fusion = fusion_of(spec)
    _check_unused_qrels(spec, fusion, qrels)
    sources = [p if isinstance(p, str) else p.source for p in paths]
    names = [stem_name(p) for p in sources]
    _check(fusion, len(paths), names, depth)  # before anything is read
    _warn_twice(sources)
    runid = _check_runid("fused" if runid is None else runid)
    inputs = Inputs([*paths, qrels])
    if output is not None and output != "-":
        check_writable(output, inputs=inputs, make_dirs=True)  # before anything is read
    trained = spec if isinstance(spec, Trained) else None
    if trained is None:
        if fusion.definition.learns:
            if qrels is None:
                train([], fusion, None, names)  # raises: the error says what is missing
            judgments = read_qrels(qrels)
            frames, _ = training_runs(paths, fusion, judgments, memory)
            trained = train(frames, fusion, judgments, names)
        else:
            trained = Trained(fusion)
    state = trained.state
    parquet = output is not None and output.endswith(".parquet")
    side = _provenance(output, trained, sources)
    opened = open_together(paths, memory, factor=FUSION_FACTOR)
    try:
        if all(isinstance(r, Run) for r in opened):
            runs = [r for r in opened if isinstance(r, Run)]
            for run, label in zip(runs, names, strict=True):
                _check_rows(run.frame.height, label)
            fused = fuse_frames([r.frame for r in runs], fusion, names, depth=depth, state=state)
            if parquet:
                _write(output, lambda out: _columns(fused, runid).write_parquet(out), side, inputs)
            else:
                lines = _line_column(fused, runid)
                _write(output, lambda out: _write_lines(lines, out), side, inputs)
        else:
            with spill_directory() as directory, SortedSpill(directory, what="the fused run") as spill:
                parts = _fused_partitions(opened, names, fusion, depth, state, directory)
                if parquet:  # each partition's rows in a file, written out in partition order
                    files = [_spilled(_columns(fused, runid), directory, k) for k, fused in enumerate(parts)]
                    _write(
                        output,
                        lambda out: pl.concat([pl.scan_ipc(f) for f in files]).sink_parquet(out),
                        side,
                        inputs,
                    )
                else:  # the TREC lines of every partition, written out in the order of a run fused whole
                    for fused in parts:
                        lines = _line_column(fused, runid)
                        size = (lines.str.len_bytes() + 1).alias("size")
                        per_query = fused.select("query", size).group_by("query", maintain_order=True).sum()
                        spill.add(per_query["query"].to_list(), per_query["size"].to_list(), _joined(lines))
                    _write(output, spill.write_to, side, inputs)
    finally:
        for r in opened:
            if isinstance(r, RunBlocks):
                r.close()
    return trained


def _fused_partitions(
    opened: Sequence[Run | RunBlocks],
    names: Sequence[str],
    fusion: Fusion,
    depth: int | None,
    state: Any,
    directory: str,
) -> Iterator[pl.DataFrame]:
    """Runs larger than memory fused a partition of queries at a time (every run's rows spread over
    files in ``directory`` by a hash of the query id), so that memory holds one partition; the queries
    a run lacks are warned of once the last partition is fused."""
    # a partition about a block of text: the blocks were sized so that one of each run fits, fused
    count = max(2, sum(_blocks(r) for r in opened))
    spread = Partitions(directory, count, "query", what="the runs' lines")
    for i, src in enumerate(opened):
        epoch, rows = 0, 0
        for block in src if isinstance(src, RunBlocks) else [src]:
            if block is DISCARD:  # the run is not grouped: its rows come again, whole
                epoch, rows = epoch + 1, 0
                continue
            rows += block.frame.height
            spread.add(_tagged(block.frame, i, epoch))
        _check_rows(rows, names[i])
    total = 0
    missing: list[list[str]] = [[] for _ in opened]
    for part in spread:
        # rows of a run's blocks before it was found not grouped are void: its last epoch counts
        last = part.group_by("run").agg(pl.col("epoch").max())
        part = part.join(last, on=["run", "epoch"])
        pieces = [part.filter(pl.col("run") == i) for i in range(len(opened))]
        count_here, lacking = _lacking(pieces)
        total += count_here
        for i, ids in enumerate(lacking):
            missing[i].extend(ids)
        yield fuse_frames(pieces, fusion, names, depth=depth, state=state, warn=False)
    _warn_missing((total, [sorted(m) for m in missing]), names)


def _spilled(frame: pl.DataFrame, directory: str, k: int) -> str:
    """``frame`` written to an Arrow file of its own in ``directory``; its path."""
    path = os.path.join(directory, f"fused-{k}.arrow")
    spill_frame(frame, path, "the fused run")
    return path


def _columns(fused: pl.DataFrame, runid: str) -> pl.DataFrame:
    """A fused run's columns as ``irspec fuse -o x.parquet`` writes them: query_id, doc_id, score, run."""
    return fused.select(
        pl.col("query").alias("query_id"),
        pl.col("docno").alias("doc_id"),
        "score",
        pl.lit(runid).alias("run"),
    )


def _write(
    output: str | None, write: Callable[[BinaryIO], None], side: list[tuple[str, str]], inputs: Inputs
) -> None:
    """What ``write`` writes to the binary file it is given, to ``output`` atomically with the ``side``
    files beside it (all or none, none of them one of ``inputs``), or to standard output."""
    if output is not None and output != "-":
        write_all_atomic([(output, write), *side], inputs=inputs)
        return
    sys.stdout.flush()
    out: Any = getattr(sys.stdout, "buffer", None) or _Text(sys.stdout)  # a notebook's has no buffer
    write(out)
    out.flush()


class _Text:
    """A text stream taking the bytes of whole lines (UTF-8), as the binary file the writers expect."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, data: bytes) -> int:
        return self.stream.write(data.decode())

    def flush(self) -> None:
        self.stream.flush()


def _warn_twice(sources: Sequence[str]) -> None:
    """Warn of a run file given twice (by path, link or another name: the same file), as ``irspec eval``
    and ``irspec diff`` do: it is fused with itself, most likely by mistake."""
    seen = Inputs()  # a file by its real path and its inode, as the guard of outputs knows inputs
    for source in sources:
        earlier = seen.find(source)
        if earlier is not None:
            warnings.warn(
                f"the same run is given twice ({quote(earlier)} and {quote(source)}): it is fused with itself",
                IrspecWarning,
                stacklevel=3,
            )
        seen.add(source)


def _provenance(output: str | None, trained: Trained, paths: Sequence[str]) -> list[tuple[str, str]]:
    """Beside a fused run that was trained or tuned, ``OUT.provenance.json``: its spec with the chosen
    parameters, the metric and score, the training qrels and how many queries, the runs fused. None for
    a run written to standard output or into a special file (``/dev/null``: no file beside it)."""
    if not trained.note or output is None or output == "-" or in_place(output):
        return []
    record = trained.provenance() | {"runs": list(paths)}
    return [(output + ".provenance.json", json.dumps(record, indent=2) + "\n")]


def _check_runid(runid: str) -> str:
    """``runid`` if a TREC run line can hold it as its last field: text without blanks or control
    characters, which would end the field or the line (``a b`` reads back as seven fields, a line end
    as another ranking line)."""
    if not isinstance(runid, str) or not runid or not runid.isprintable() or re.search(_BLANK, runid):
        raise InputError(
            f"run id {quote(str(runid))} cannot be written in a TREC run line: give one word of printable "
            "characters, without blanks"
        )
    return runid


def _tagged(frame: pl.DataFrame, run: int, epoch: int) -> pl.DataFrame:
    return frame.select(
        "query", "docno", "score", pl.lit(run, pl.Int64).alias("run"), pl.lit(epoch, pl.Int64).alias("epoch")
    )


def _blocks(src: Any) -> int:
    if not isinstance(src, RunBlocks):
        return 1
    return max(1, -(-(os.path.getsize(src.path) or 0) // src.block_bytes))


def _check_rows(rows: int, name: str) -> None:
    if rows == 0:
        raise InputError(f"run {quote(name)} has no scored documents: there is nothing to fuse")


def stem_name(path: str) -> str:
    """A run's name from its path, as the readers name it (``bm25`` for ``runs/bm25.run.gz``)."""
    return stem(path) or path
