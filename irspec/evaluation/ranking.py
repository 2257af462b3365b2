"""A run joined with the indexed qrels and ranked as trec_eval ranks it: the kernels' :class:`Context`.

:func:`build_context` finds each run row's label (a binary search among the qrels' hashed keys, every
match checked against the strings; a join when keys collide), puts the rows in trec_eval's order (by
query, score descending, docno descending; the file's rank column is ignored), applies ``depth`` and
``judged_only``, and adds the qrels queries the run lacks under ``missing_queries="zero"``. A run file
already in that order is only checked and its tied rows moved (:func:`_rank`); a pytrec_eval dict or
a retriever's top k is sorted block by block (:func:`_block_argsort`). Knows nothing of metrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from irspec.data import pair_keys
from irspec.evaluation.context import UNJUDGED, Context, Options, segment_rows
from irspec.evaluation.index import FILTER_BITS, QrelsIndex
from irspec.evaluation.notes import coverage_notes

__all__ = ["build_context"]

_FEW_BLOCKS = 20_000
"""Up to this many blocks of rows with one query id, a run's query codes are found by dict lookups;
above, by a join (whose fixed cost is most of a small run's time)."""


def build_context(
    index: QrelsIndex, run: Any, options: Options, inputs: Mapping[str, Any] | None = None
) -> tuple[Context, list[str]]:
    """Join a run with the indexed qrels, rank it, apply depth and judged_only: the kernels' input.
    ``inputs`` are those read in place of the qrels (:class:`~irspec.evaluation.judgments.Judgments`), handed to the context.

    Ranking is by query, score descending and docno descending (trec_eval's order; the file's rank
    column is ignored). A run file already grouped by query with scores non-increasing (the usual case)
    keeps its row order: only its tied rows move, and its queries are evaluated in file order (the
    caller sorts the per-query results). The labels come from a join on 64-bit hashes of the
    (query, docno) pairs, every match checked against the strings.
    """
    frame, keys = run.frame, run.keys
    # Blocks of adjacent rows with the same query id (exact string comparison): one per query in a
    # grouped run, so everything per query below is computed on a few thousand blocks, not on rows.
    names, lengths = run.query_blocks
    if len(names) <= _FEW_BLOCKS:  # a dict lookup each: a join's fixed cost is most of a small run's time
        position = index.position
        codes = np.fromiter((position.get(q, -1) for q in names.to_list()), np.int64, len(names))
    else:
        codes = (
            pl.DataFrame({"query": names})
            .join(index.query_codes, on="query", how="left", maintain_order="left")
            .get_column("qcode")
            .fill_null(-1)
            .to_numpy()
        )
    known = codes >= 0
    present = np.flatnonzero(np.bincount(codes[known], minlength=len(index.query_ids)))
    run_queries = {index.query_ids[c] for c in present.tolist()}
    extra = set() if known.all() else set(names.filter(pl.Series(~known)).unique().to_list())
    missing = sorted(set(index.query_ids) - run_queries)
    notes = coverage_notes(index, run.source, extra, missing, run.frame.height == 0, options)
    if extra:
        rows = np.repeat(known, lengths)
        frame = frame.filter(pl.Series(rows))
        keys = keys[rows] if keys is not None else None
        codes, lengths = codes[known], lengths[known]
    ranking = _rank(codes, lengths, frame.get_column("score").to_numpy(), frame.get_column("docno"))
    label = ranking.arrange(_labels(index, frame, keys, (codes, lengths)))
    seg_codes, seg_lengths = ranking.codes, ranking.lengths
    kept = None
    if options.depth is not None or options.judged_only:
        starts = np.concatenate(([0], np.cumsum(seg_lengths)))[:-1]
        segment = np.repeat(np.arange(len(seg_lengths)), seg_lengths)
        kept = np.ones(len(label), dtype=bool)
        if options.depth is not None:
            # depth cuts the ranking before anything else (trec_eval -M)
            kept &= np.arange(len(label)) - starts[segment] < options.depth
        if options.judged_only:
            kept &= label >= 0
        label = label[kept]
        seg_lengths = np.bincount(segment[kept], minlength=len(seg_lengths))
    # Every run query the qrels know is evaluated, even one that depth or judged_only emptied; under
    # missing_queries="zero" the qrels queries the run lacks follow, with empty rankings.
    evaluated = [index.query_ids[c] for c in seg_codes.tolist()]
    if options.missing_queries == "zero" and missing:
        evaluated += missing
        seg_lengths = np.concatenate((seg_lengths, np.zeros(len(missing), dtype=np.int64)))
    offsets = np.concatenate(([0], np.cumsum(seg_lengths))).astype(np.int64)
    ctx = Context(
        evaluated, offsets, label, index, options, frame=_Ranked(frame, ranking, kept), inputs=inputs
    )
    if options.missing_queries == "zero" and missing:
        ctx.missing = np.arange(len(evaluated) - len(missing), len(evaluated), dtype=np.int64)
    return ctx, notes


@dataclass
class _Ranking:
    """How the run's rows (after dropping queries the qrels lack) go into ranked order.

    ``codes`` and ``lengths`` give each ranked segment's query code and length. The order is either a
    full row index (``rows``, ranked position -> row) or, when the file was already ranked but for
    ties, file order with the rows at positions ``moved`` replaced by ``rows``.
    """

    codes: np.ndarray
    lengths: np.ndarray
    rows: np.ndarray | None = None
    moved: np.ndarray | None = None

    def arrange(self, values: np.ndarray) -> np.ndarray:
        """``values`` (one per row, in file order) in ranked order; ``values`` itself may be reused."""
        if self.rows is None:
            return values
        if self.moved is None:
            return values[self.rows]
        values[self.moved] = values[self.rows]  # the gather on the right is done before the scatter
        return values

    def indices(self, n: int) -> np.ndarray:
        """The full row index of the ranked order, for ``n`` rows."""
        if self.rows is None:
            return np.arange(n, dtype=np.int64)
        if self.moved is None:
            return self.rows
        index = np.arange(n, dtype=np.int64)
        index[self.moved] = self.rows
        return index


class _Ranked:
    """The run's rows in ranked order, gathered only when a per-query plugin metric asks for them."""

    def __init__(self, frame: Any, ranking: _Ranking, kept: np.ndarray | None) -> None:
        self._frame = frame
        self._ranking = ranking
        self._kept = kept

    def get_column(self, name: str) -> Any:
        index = self._ranking.indices(self._frame.height)
        return self._frame.get_column(name).gather(index if self._kept is None else index[self._kept])


def _labels(
    index: QrelsIndex, frame: Any, keys: np.ndarray | None, blocks: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """The qrels label of each run row (:data:`UNJUDGED` where the qrels do not have the pair).

    ``keys`` are the run rows' :func:`~irspec.data.pair_keys`, when the reader kept them; ``blocks``
    the (query code, length) of each block of rows with one query id."""
    if index.keys_unique:
        if keys is None:
            keys = pair_keys(frame)
        # The rows the filter cannot rule out (a few percent of a run's rows), searched among the sorted
        # qrels keys: the matches with their row numbers. A search, not a join: a join's fixed cost is
        # most of a small run's evaluation, and the qrels keys are distinct here.
        maybe = np.flatnonzero(index.key_filter[keys >> np.uint64(64 - FILTER_BITS)])
        wanted = keys[maybe]
        at = np.minimum(np.searchsorted(index.sorted_keys, wanted), max(len(index.sorted_keys) - 1, 0))
        found = (
            index.sorted_keys[at] == wanted if len(index.sorted_keys) else np.zeros(len(wanted), dtype=bool)
        )
        row = maybe[found]
        qrow = index.key_order[at[found]]
        # Check every hashed match: exactness must not rest on a hash. The query codes come from the
        # strings themselves, so equal codes are equal query ids; the docnos are compared as strings.
        codes, lengths = blocks
        row_code = codes[np.searchsorted(np.cumsum(lengths), row, side="right")]
        if (row_code == index.row_query[qrow]).all() and (
            frame.get_column("docno").gather(row) == index.frame.get_column("docno").gather(qrow)
        ).all():
            label = np.full(len(keys), UNJUDGED, dtype=np.int64)
            label[row] = index.row_label[qrow]
            return label
    joined = frame.select("query", "docno").join(
        index.frame, on=["query", "docno"], how="left", maintain_order="left"
    )
    return joined.get_column("label").fill_null(UNJUDGED).to_numpy().astype(np.int64)


def _rank(codes: np.ndarray, lengths: np.ndarray, scores: np.ndarray, docnos: Any) -> _Ranking:
    """The ranked order of rows given as blocks of one query each (``codes``, ``lengths``): by query,
    score descending, docno descending. When each query is one block, the blocks keep their order."""
    n = len(scores)
    boundary = np.cumsum(lengths)[:-1] - 1  # i where rows i and i + 1 lie in different blocks
    same_block = np.ones(max(n - 1, 0), dtype=bool)
    same_block[boundary] = False
    if np.bincount(codes, minlength=1).max() <= 1:
        if not np.any(same_block & (scores[1:] > scores[:-1])):
            # Scores non-increasing within each query (the usual run file): only ties move.
            moved, rows = _tied_order(None, same_block, scores, docnos)
            return _Ranking(codes, lengths, rows, moved)
        # A pytrec_eval dict, a retriever's top k: each block sorted on its own, far faster than one
        # sort of every row (a block of a few thousand rows fits in cache).
        order = _block_argsort(scores, lengths)
        moved, rows = _tied_order(order, same_block, scores[order], docnos)
        if moved is not None:
            order[moved] = rows
        return _Ranking(codes, lengths, order)
    qcode = np.repeat(codes, lengths)
    # By score descending in any order of ties (they are ordered by docno next), then a stable sort
    # by query: a quicksort and a radix sort, several times faster than two stable sorts.
    order = np.argsort(-scores)
    order = order[_stable_argsort(qcode[order])]
    q = qcode[order]
    moved, rows = _tied_order(order, q[1:] == q[:-1], scores[order], docnos)
    if moved is not None:
        order[moved] = rows
    counts = np.bincount(qcode)
    present = np.flatnonzero(counts)
    return _Ranking(present, counts[present], order)


def _block_argsort(scores: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Row indices that put each block of ``lengths`` rows in order of score descending (ties in any
    order), blocks kept in place. Blocks of one length are sorted as the rows of a matrix; blocks of
    lengths that differ are padded to the longest with +inf (after the negation, so last) when that
    at most doubles the work, else sorted as one array by (block, score)."""
    n, nb = len(scores), len(lengths)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    width = int(lengths.max())
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    if width * nb == n:  # every block as long as the longest: a reshape, no copy
        order = np.argsort(-scores.reshape(nb, width), axis=1)
        order += starts[:, None]
        return order.ravel()
    if width * nb <= 2 * n:
        # Row i of block b sits at b * width + (i - starts[b]) of the flattened matrix.
        place = segment_rows(np.arange(nb, dtype=np.int64) * width, lengths)
        padded = np.full(nb * width, np.inf)
        padded[place] = -scores
        order = np.argsort(padded.reshape(nb, width), axis=1)
        order += starts[:, None]
        # A block's own rows come first in its matrix row (the padding sorts last).
        return order.ravel()[place]
    block = np.repeat(np.arange(nb, dtype=np.int64), lengths)
    order = np.argsort(-scores)
    return order[_stable_argsort(block[order])]


def _stable_argsort(codes: np.ndarray) -> np.ndarray:
    """The stable argsort of non-negative integer ``codes`` below 2**32, as one or two radix passes
    (numpy sorts 16-bit integers by radix when asked for a stable sort)."""
    if len(codes) == 0 or codes.max() < 2**16:
        return np.argsort(codes.astype(np.uint16), kind="stable")
    low = np.argsort((codes & 0xFFFF).astype(np.uint16), kind="stable")
    return low[np.argsort((codes[low] >> 16).astype(np.uint16), kind="stable")]


def _tied_order(
    order: np.ndarray | None, same_q: np.ndarray, s: np.ndarray, docnos: Any
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Where runs of equal (query, score) must be reordered by docno descending, as trec_eval does.

    ``order`` lists rows (``None``: every row in file order); ``same_q[i]`` says whether its entries
    i and i+1 share a query, ``s`` is the score of each listed row. Returns (positions in ``order``,
    the rows that belong there), or (None, None) when nothing ties.
    """
    tie = same_q & (s[1:] == s[:-1])
    if not tie.any():
        return None, None
    in_tie = np.zeros(len(s), dtype=bool)
    in_tie[1:] |= tie
    in_tie[:-1] |= tie
    positions = np.flatnonzero(in_tie)
    # A group starts where a tied row does not continue the tie before it.
    group = np.cumsum(~np.concatenate(([False], tie))[positions])
    rows = positions if order is None else order[positions]
    sub = pl.DataFrame({"group": group, "docno": docnos.gather(rows), "row": rows})
    sub = sub.sort(["group", "docno"], descending=[False, True])
    return positions, sub.get_column("row").to_numpy()
