"""A run joined with the indexed qrels and ranked as trec_eval ranks it: the kernels' :class:`Context`.

:func:`build_context` finds each run row's label (a binary search among the qrels' hashed keys, every
match checked against the strings; a join when keys collide), puts the rows in trec_eval's order (by
query, score descending, docno descending; the file's rank column is ignored), applies ``depth`` and
``judged_only``, and adds the qrels queries the run lacks under ``missing_queries="zero"``. A run file
already in that order is only checked and its tied rows moved (:func:`_rank`; only the ties that
hold a judged row, unless a per-query plugin metric asks for the ranked frame). The kernels see only
labels, and most documents are unjudged: so a pytrec_eval dict's or a retriever's top k's queries,
each a block not yet in order, are taken as the rows of a matrix whose scores are sorted and searched
for the judged documents' places (:func:`_judged_ranks`); the full order of every row
(:func:`_block_argsort`, :func:`_topk_order`) is found only for a per-query plugin metric or when many
judged documents tie. A top k of integer ids is joined with the qrels by the numbers and its ids made
text only where a tie needs them (:func:`_topk_context`). Knows nothing of metrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain, repeat
from typing import TYPE_CHECKING, Any

import numpy as np

from irspec.data import pair_keys
from irspec.data.keys import pair_keys as plain_pair_keys
from irspec.evaluation.context import UNJUDGED, Context, Options, segment_rows
from irspec.evaluation.index import IntegerKeys, QrelsIndex
from irspec.evaluation.notes import coverage_notes
from irspec.lazy import lazy_module

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")

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
    top = getattr(run, "top", None)
    if top is not None and top.numbers is not None:
        numbers = index.integer_keys()
        # An id of 19 digits or more is matched by its text: IntegerKeys holds docnos of 18 at most.
        if numbers is not None and top.numbers.max(initial=0) < 10**18:
            return _topk_context(index, run, top, numbers, options, inputs)
    mapping = getattr(run, "mapping", None)
    if mapping is not None:  # a pytrec_eval dict: its judged documents looked up in its own dicts
        made = _mapping_context(index, run, mapping, options, inputs)
        if made is not None:
            return made
    plain = getattr(run, "plain", None)
    if plain is not None:  # a run file read by numpy: joined by its docnos' bytes, no frame
        made = _plain_context(index, run, plain, options, inputs)
        if made is not None:
            return made
    frame, keys = run.frame, run.keys
    # Blocks of adjacent rows with the same query id (exact string comparison): one per query in a
    # grouped run, so everything per query below is computed on a few thousand blocks, not on rows.
    names, lengths = run.query_blocks
    codes = _query_codes(index, names)
    known = codes >= 0
    present = np.flatnonzero(np.bincount(codes[known], minlength=len(index.query_ids)))
    run_queries = {index.query_ids[c] for c in present.tolist()}
    extra = set() if known.all() else set(names.filter(pl.Series(~known)).unique().to_list())
    missing = sorted(set(index.query_ids) - run_queries)
    notes = coverage_notes(index, run.source, extra, missing, len(run) == 0, options)
    if extra:
        rows = np.repeat(known, lengths)
        frame = frame.filter(pl.Series(rows))
        keys = keys[rows] if keys is not None else None
        codes, lengths = codes[known], lengths[known]
    scores, docnos = frame.get_column("score").to_numpy(), frame.get_column("docno")
    if keys is None:  # a reader that knew its pairs distinct did not hash them
        keys = pair_keys(frame, (names.filter(pl.Series(known)) if extra else names, lengths))
    judged = _judged_blocks(
        codes, lengths, scores, docnos, lambda: _judged_rows(index, frame, keys, (codes, lengths))
    )
    if judged is not None:
        label, ranking = judged
        segments = ranking.codes, ranking.lengths
    else:
        rows, labels = _judged_rows(index, frame, keys, (codes, lengths))
        every = np.full(len(scores), UNJUDGED, dtype=np.int64)
        every[rows] = labels
        # Kernels see labels only: tied rows are put in docno order where a tie holds a judged row (a
        # tie of unjudged rows has the same labels in any order), and the whole ranking is found only if
        # a per-query plugin metric asks for the ranked frame.
        wanted = np.zeros(len(scores), dtype=bool)
        wanted[rows] = True
        labelled = _rank(codes, lengths, scores, docnos, wanted)
        label = labelled.arrange(every)
        segments = labelled.codes, labelled.lengths
        ranking = _LazyRanking(codes, lengths, scores, docnos)
    ctx = _context(index, *segments, label, missing, options, inputs, frame, ranking)
    return ctx, notes


def _judged_blocks(
    codes: np.ndarray, lengths: np.ndarray, scores: np.ndarray, docnos: Any, judged_rows: Any
) -> tuple[np.ndarray, Any] | None:
    """The ranked labels of a run whose every query is one block not yet in order (a pytrec_eval
    dict), by :func:`_judged_ranks` on the blocks as the rows of a matrix; with the ranking itself,
    found only if a per-query plugin metric asks for the ranked frame. ``judged_rows()`` gives the
    judged rows and their labels (:func:`_judged_rows`). ``None`` where :func:`_rank` is the way:
    blocks ranked already (only their ties move), blocks of lengths so unequal that a matrix would
    more than double the work, many judged documents in ties."""
    n, nb = len(scores), len(lengths)
    if n == 0 or np.bincount(codes, minlength=1).max() > 1:
        return None
    width = int(lengths.max())
    if width * nb > 2 * n:
        return None
    if _in_order(scores, _same_block(n, lengths)):
        return None
    ends = np.cumsum(lengths)
    starts = ends - lengths
    neg, rows_of = _block_matrix(scores, lengths, width)
    rows, judged = judged_rows()
    jrow = np.searchsorted(ends, rows, side="right")

    def mine(t: np.ndarray) -> Any:
        return docnos[_series(rows[t])]

    def text(r: np.ndarray, c: np.ndarray) -> Any:
        return docnos[_series(starts[r] + c)]

    label = _judged_ranks(neg, False, lengths, jrow, np.negative(scores[rows]), judged, mine, text, rows_of)
    if label is None:
        return None
    return label, _LazyRanking(codes, lengths, scores, docnos)


def _mapping_context(
    index: QrelsIndex, run: Any, read: Any, options: Options, inputs: Mapping[str, Any] | None
) -> tuple[Context, list[str]] | None:
    """:func:`build_context` of a run given as dicts (:class:`~irspec.data.MappingRun`), without its
    docnos as a column: each query's judged docnos are looked up in its own dict (some 30 lookups, not
    a hash of each of its 1,000 documents), and only the judged documents are placed among its scores
    (:func:`_judged_ranks`); a tie is broken by the docno text of the tied documents, taken from their
    dict. The same context as the frame's path gives; ``None`` where that path is the way (blocks of
    lengths so unequal that a matrix would more than double the work, many judged documents in
    ties), which then makes the run's frame."""
    names, lengths, docs = read.query_ids, read.lengths, read.docs
    codes, known, extra, missing = _listed_queries(index, names)
    scores, kept_rows = read.scores, None
    if extra:
        kept_rows = np.repeat(known, lengths)
        scores = scores[kept_rows]
        docs = [docs[i] for i in np.flatnonzero(known).tolist()]
        codes, lengths = codes[known], lengths[known]
    n, nb, width = len(scores), len(lengths), _matrix_width(lengths, len(scores))
    if width is None:
        return None
    notes = coverage_notes(index, run.source, extra, missing, len(run) == 0, options)
    lists, all_labels = index.judged_docnos()
    wanted = [lists[c] for c in codes.tolist()]
    if read.encoded:  # the dicts' docnos are bytes (a run file read as it is): so are those looked up
        wanted = [[d.encode() for d in judged] for judged in wanted]
    # Each judged docno's score in its query's dict, None where the run lacks it (looked up as the
    # dicts were read, when they were read for this index): read by the builder that read the run's
    # scores (MappingScores.converted), so equal to its entry there.
    if read.found is not None and read.wanted is index.judged_by_query():
        looked_up = read.found
    else:
        looked_up = list(chain.from_iterable(map(_lookup, docs, wanted)))
    found = read.converted(looked_up)
    hit = np.isfinite(found)
    counts = np.fromiter(map(len, wanted), np.int64, len(wanted))
    qrows = segment_rows(index.offsets[codes], counts)[hit]
    jrow = np.repeat(np.arange(nb, dtype=np.int64), counts)[hit]
    value = found[hit]
    judged = all_labels[qrows]
    ends = np.cumsum(lengths)
    starts = ends - lengths
    neg, rows_of = _block_matrix(scores, lengths, width)
    # Ranked already (each block's scores non-increasing)? Told by the first block when it is not, the
    # usual case, before a pass over every score.
    first = scores[: ends[0]] if nb else scores
    ranked = not np.any(first[1:] > first[:-1])
    if ranked:
        ranked = _in_order(scores, _same_block(n, lengths))

    # The docnos of tied documents as arrays of strings (or of UTF-8 bytes), compared as Python compares
    # them (strings by code point: the order of their UTF-8 bytes, polars' order)
    def mine(t: np.ndarray) -> np.ndarray:
        flat = list(chain.from_iterable(wanted))
        return _strings([flat[i] for i in np.flatnonzero(hit)[t].tolist()])

    keys_of: dict[int, list[str]] = {}
    every: list[np.ndarray] = []  # every docno of the run, in its rows' order, once many are asked for

    def text(r: np.ndarray, c: np.ndarray) -> np.ndarray:
        if every or len(r) * 16 >= n:
            # many tied entries (a run's scores of few distinct values): every docno listed once and
            # taken by place, not each entry's looked up in its block's list in turn
            if not every:
                every.append(_strings(list(chain.from_iterable(docs))))
            return every[0][starts[r] + c]
        out = []
        for b, i in zip(r.tolist(), c.tolist(), strict=True):
            if b not in keys_of:
                keys_of[b] = list(docs[b])
            out.append(keys_of[b][i])
        return _strings(out)

    placed = (neg, ranked, lengths, jrow, np.negative(value), judged, mine, text, rows_of)
    return _placed_context(index, run, codes, scores, kept_rows, placed, missing, options, inputs, notes)


def _listed_queries(
    index: QrelsIndex, names: list[str]
) -> tuple[np.ndarray, np.ndarray, set[str], list[str]]:
    """The query codes of a run's blocks, one query each (``names``; -1 where the qrels lack it), which of
    them the qrels know, the ids they lack (extra) and the qrels' ids the run lacks (missing, sorted)."""
    codes = np.fromiter(map(index.position.get, names, repeat(-1)), np.int64, len(names))
    known = codes >= 0
    present = np.flatnonzero(np.bincount(codes[known], minlength=len(index.query_ids)))
    run_queries = {index.query_ids[c] for c in present.tolist()}
    extra = {names[i] for i in np.flatnonzero(~known).tolist()}
    return codes, known, extra, sorted(set(index.query_ids) - run_queries)


_SMALL_MATRIX = 1 << 16
"""A matrix of at most this many entries is used however unequal its blocks: its padding costs less than
making the run's frame (polars' calls, some milliseconds), which the other way begins with."""


def _matrix_width(lengths: np.ndarray, n: int) -> int | None:
    """The width of a matrix whose rows are blocks of ``lengths`` (``n`` rows in all): the longest;
    ``None`` when the matrix would more than double the work (blocks of lengths so unequal), unless it
    is small (:data:`_SMALL_MATRIX`)."""
    width = int(lengths.max()) if len(lengths) else 0
    cells = width * len(lengths)
    return None if cells > 2 * n and cells > _SMALL_MATRIX else width


def _placed_context(
    index: QrelsIndex,
    run: Any,
    codes: np.ndarray,
    scores: np.ndarray,
    kept_rows: np.ndarray | None,
    placed: tuple[Any, ...],
    missing: list[str],
    options: Options,
    inputs: Mapping[str, Any] | None,
    notes: list[str],
) -> tuple[Context, list[str]] | None:
    """The context of a run whose every query is one block (a dict's, a file read by numpy), the judged
    documents placed among the blocks' scores by :func:`_judged_ranks` (``placed``, its arguments);
    ``None`` when that finds too many ties. The run's frame (less the rows of ``kept_rows``' queries
    the qrels lack) is made only if a per-query plugin metric asks for the ranked frame."""
    lengths = placed[2]
    n = len(scores)
    if n == 0:
        label = np.zeros(0, dtype=np.int64)
    else:
        found_label = _judged_ranks(*placed)
        if found_label is None:
            return None
        label = found_label
    frame = _KeptFrame(run, kept_rows, n)
    ranking = _LazyRanking(codes, lengths, scores, _Docnos(frame))
    ctx = _context(index, codes, lengths, label, missing, options, inputs, frame, ranking)
    return ctx, notes


def _plain_context(
    index: QrelsIndex, run: Any, plain: Any, options: Options, inputs: Mapping[str, Any] | None
) -> tuple[Context, list[str]] | None:
    """:func:`build_context` of a run file read by numpy (:class:`~irspec.data.plain.PlainRun`): its
    (query, docno) pairs keyed by numpy (:func:`~irspec.data.keys.pair_keys`) and searched among the
    judgments' (:attr:`QrelsIndex.plain_keys`), every match checked by the query code and the docno's
    bytes; then ranked as a dict's are (:func:`_judged_ranks`), a tie broken by the docnos' bytes, which
    order as their text does (ASCII). The same context as the frame's path gives; ``None`` where that
    path is the way (judgments not keyed so, two keys alike, blocks of lengths so unequal that a matrix
    would more than double the work, many judged documents in ties), which then reads the run's frame."""
    judgments = index.plain_keys
    if judgments is None:
        return None
    texts, key_order, sorted_keys, key_filter = judgments
    names, lengths, docnos, scores, hashes = plain
    codes, known, extra, missing = _listed_queries(index, names)
    kept_rows = None
    if extra:
        kept_rows = np.repeat(known, lengths)
        scores, docnos, hashes = scores[kept_rows], docnos[kept_rows], hashes[kept_rows]
        codes, lengths = codes[known], lengths[known]
    n, nb, width = len(scores), len(lengths), _matrix_width(lengths, len(scores))
    if width is None:
        return None
    notes = coverage_notes(index, run.source, extra, missing, len(run) == 0, options)
    row_code = np.repeat(codes, lengths)
    keys = plain_pair_keys(hashes, row_code)
    shift = np.uint64(64 - (key_filter.size.bit_length() - 1))
    maybe = np.flatnonzero(key_filter[keys >> shift])
    wanted = keys[maybe]
    at = np.minimum(_search(sorted_keys, wanted), max(len(sorted_keys) - 1, 0))
    found = sorted_keys[at] == wanted if len(sorted_keys) else np.zeros(len(wanted), dtype=bool)
    rows, qrow = maybe[found], key_order[at[found]]
    # every hashed match checked: exactness must not rest on a hash
    if not ((row_code[rows] == index.row_query[qrow]).all() and (docnos[rows] == texts[qrow]).all()):
        return None
    judged = index.row_label[qrow]
    ends = np.cumsum(lengths)
    starts = ends - lengths
    jrow = np.searchsorted(ends, rows, side="right")
    neg, rows_of = _block_matrix(scores, lengths, width)
    first = scores[: ends[0]] if nb else scores
    ranked = not np.any(first[1:] > first[:-1]) and _in_order(scores, _same_block(n, lengths))

    def mine(t: np.ndarray) -> np.ndarray:
        return docnos[rows[t]]

    def text(r: np.ndarray, c: np.ndarray) -> np.ndarray:
        return docnos[starts[r] + c]

    placed = (neg, ranked, lengths, jrow, np.negative(scores[rows]), judged, mine, text, rows_of)
    return _placed_context(index, run, codes, scores, kept_rows, placed, missing, options, inputs, notes)


def _lookup(docs: dict[str, Any], docnos: list[str]) -> Any:
    return map(docs.get, docnos)


def _strings(values: list[str]) -> np.ndarray:
    """Strings as an array of objects (numpy's fixed-width strings would drop trailing NULs)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


class _KeptFrame:
    """A run's frame, made when a column is first asked for, less the rows of queries the qrels lack
    (``kept``, a mask over its rows, or ``None``); ``height`` is what is left."""

    def __init__(self, run: Any, kept: np.ndarray | None, height: int) -> None:
        self._run, self._kept, self.height = run, kept, height

    def get_column(self, name: str) -> Any:
        column = self._run.frame.get_column(name)
        return column if self._kept is None else column.filter(pl.Series(self._kept))


class _Docnos:
    """The docno column of a :class:`_KeptFrame`, read when a tie first needs it."""

    def __init__(self, frame: _KeptFrame) -> None:
        self._frame = frame

    def gather(self, rows: Any) -> Any:
        return self._frame.get_column("docno")[rows]  # indexing: see _series


def _block_matrix(scores: np.ndarray, lengths: np.ndarray, width: int) -> tuple[np.ndarray, Any]:
    """Blocks of ``lengths`` scores as the rows of a matrix of negated scores, padded with +inf past
    each block's end (so last in ascending order), ``width`` wide; and ``rows_of(r)``, those rows as
    given (:func:`_judged_ranks` sorts the matrix in place)."""
    n, nb = len(scores), len(lengths)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    if width * nb == n:  # every block as long as the longest: a reshape
        neg = np.negative(scores).reshape(nb, width)
    else:  # row i of block b at b * width + (i - starts[b])
        place = segment_rows(np.arange(nb, dtype=np.int64) * width, lengths)
        neg = np.full(nb * width, np.inf)
        neg[place] = np.negative(scores)
        neg = neg.reshape(nb, width)

    def rows_of(r: np.ndarray) -> np.ndarray:
        at = starts[r, None] + np.arange(width)
        inside = at < ends[r, None]
        return np.where(inside, np.negative(scores[np.where(inside, at, 0)]), np.inf)

    return neg, rows_of


class _LazyRanking:
    """A run's ranking (:func:`_rank`) found when a per-query plugin metric first asks for it."""

    def __init__(self, codes: np.ndarray, lengths: np.ndarray, scores: np.ndarray, docnos: Any) -> None:
        self.codes, self.lengths = codes, lengths
        self._args = (codes, lengths, scores, docnos)

    def indices(self, n: int) -> np.ndarray:
        return _rank(*self._args).indices(n)


def _query_codes(index: QrelsIndex, names: pl.Series) -> np.ndarray:
    """Each id's query code in ``index``, -1 for an id the qrels lack."""
    if len(names) <= _FEW_BLOCKS:  # a dict lookup each: a join's fixed cost is most of a small run's time
        position = index.position
        return np.fromiter((position.get(q, -1) for q in names.to_list()), np.int64, len(names))
    return (
        pl.DataFrame({"query": names})
        .join(index.query_codes, on="query", how="left", maintain_order="left")
        .get_column("qcode")
        .fill_null(-1)
        .to_numpy()
    )


def _context(
    index: QrelsIndex,
    seg_codes: np.ndarray,
    seg_lengths: np.ndarray,
    label: np.ndarray,
    missing: list[str],
    options: Options,
    inputs: Mapping[str, Any] | None,
    frame: Any,
    ranking: Any,
) -> Context:
    """The context of ranked rows: ``label`` in ranked order, ``seg_lengths`` rows of each query code
    ``seg_codes``; depth and judged_only applied, the qrels queries the run lacks added as
    ``missing_queries`` says. ``frame`` and ``ranking`` give the ranked frame to per-query plugin
    metrics (:class:`_Ranked`)."""
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
    return ctx


def _topk_context(
    index: QrelsIndex,
    run: Any,
    top: Any,
    numbers: IntegerKeys,
    options: Options,
    inputs: Mapping[str, Any] | None,
) -> tuple[Context, list[str]]:
    """:func:`build_context` of a top k of integer ids (the evaluator's top k as a run), on its
    matrices: the labels found by the numbers (:class:`~irspec.evaluation.index.IntegerKeys`) and only
    the judged documents placed in ranked order (:func:`_judged_ranks`), the ids' text made only for
    documents in a tie (ordered by docno descending as text: "9" before "10"). The same context as the
    frame's path gives, without making the frame or sorting every row's documents."""
    codes = _query_codes(index, top.query_ids)
    answered = top.lengths > 0
    known = codes >= 0
    present = codes[known & answered]
    run_queries = {index.query_ids[c] for c in present.tolist()}
    unknown = answered & ~known
    extra = set(top.query_ids.filter(pl.Series(unknown)).to_list()) if unknown.any() else set()
    missing = sorted(set(index.query_ids) - run_queries)
    notes = coverage_notes(index, run.source, extra, missing, len(run) == 0, options)
    rows = np.flatnonzero(known & answered)
    every = len(rows) == len(codes)
    scores = top.scores if every else top.scores[rows]
    if scores.dtype not in (np.float32, np.float64):
        scores = scores.astype(np.float64)  # as the frame has them (ints; float16 gains nothing)
    lengths = top.lengths[rows]
    width = scores.shape[1]
    # Score descending as ascending negated scores; a left-out (-1) entry gets +inf, so it sorts last.
    neg = np.negative(scores)
    if top.valid is not None:
        neg[~(top.valid if every else top.valid[rows])] = np.inf
    ranked = neg.size == 0 or bool((neg[:, 1:] >= neg[:, :-1]).all())  # as FAISS and torch.topk return them
    docs = top.numbers if every else top.numbers[rows]
    at, judged = numbers.lookup(np.repeat(codes[rows], width), docs.ravel())
    jrow, jcol = np.divmod(at, max(width, 1))

    def text(r: np.ndarray, c: np.ndarray) -> pl.Series:
        return pl.Series("docno", docs[r, c]).cast(pl.String)

    def mine(t: np.ndarray) -> pl.Series:
        return text(jrow[t], jcol[t])

    label = _judged_ranks(neg, ranked, lengths, jrow, neg[jrow, jcol], judged, mine, text)
    ranking = _TopKOrder(top, rows, neg, docs, lengths, ranked)
    if label is None:  # many ties among the judged documents: every row put in order
        matrix = np.full(neg.shape, UNJUDGED, dtype=np.int64)
        matrix.flat[at] = judged
        label = ranking.arrange(matrix)
    ctx = _context(index, codes[rows], lengths, label, missing, options, inputs, _LazyFrame(run), ranking)
    return ctx, notes


_TIED_JUDGED = 1 << 22
"""At most this many (judged document, document it ties with) pairs are compared by docno text in
:func:`_judged_ranks`; beyond, every row is put in order (a sort of each row)."""


def _judged_ranks(
    neg: np.ndarray,
    ranked: bool,
    lengths: np.ndarray,
    jrow: np.ndarray,
    value: np.ndarray,
    judged: np.ndarray,
    mine: Any,
    text: Any,
    rows_of: Any = None,
) -> np.ndarray | None:
    """The labels of blocks of rows in ranked order, placing only the judged documents.

    ``neg`` is a matrix of negated scores, a block per row, padded with +inf past its ``lengths``
    (``ranked``: each row is ascending already); ``jrow``, ``value`` and ``judged`` give the judged
    documents' rows, negated scores and labels, ``mine(i)`` the docnos of the judged documents ``i``,
    ``text(rows, cols)`` the docnos of matrix entries. Given ``rows_of(rows)`` (those rows of ``neg``
    as they were), ``neg`` is the caller's to spend: it is sorted in place. Kernels see
    only labels, and nearly every document is unjudged, so sorting the scores (a sort of values, several
    times faster than finding each row's order) and searching it for each judged document's score
    gives its rank: the documents of higher score, plus those of its score whose docno is greater (ties
    go by docno descending, as everywhere). Returns the flat ranked labels (:data:`UNJUDGED` for the
    others), or ``None`` when too many judged documents tie for the docno comparisons to be cheap."""
    width = neg.shape[1]
    label = np.full(int(lengths.sum()), UNJUDGED, dtype=np.int64)
    if len(judged) == 0:
        return label
    # Rows of ``neg`` as given: gathered from ``neg`` while it is unsorted (a copy of whole rows), made
    # again by ``rows_of`` (an element-wise gather, several times slower) only once it is sorted in place.
    unsorted = neg.__getitem__
    found = None
    if not ranked and neg.dtype == np.float64:
        found = _coarse_places(neg, jrow, value)
    if found is None:
        if rows_of is not None and not ranked:
            neg.sort(axis=1)  # the caller's own matrix, sorted in place: a copy fewer at the peak
            srt, unsorted = neg, rows_of
        else:
            srt = neg if ranked else np.sort(neg, axis=1)
        place = _first_places(srt, jrow, value)
        # tied: the next place holds the same score
        flat, nxt = srt.ravel(), np.minimum(place + 1, width - 1)
        tied = np.flatnonzero((place + 1 < width) & (flat[jrow * width + nxt] == value))
        pairs: tuple[np.ndarray, np.ndarray] | None = None
    else:
        place, tied, pairs = found
    if len(tied):
        if pairs is None:  # each tied judged document's tie group: (which tied document, column) pairs
            pairs = _equal_entries(unsorted(jrow[tied]), value[tied])
        which, col = pairs
        if len(which) > _TIED_JUDGED:
            return None
        others = text(jrow[tied][which], col)
        greater = np.asarray(others > mine(tied[which]), dtype=bool)
        place = place.copy()
        place[tied] += np.bincount(which, weights=greater, minlength=len(tied)).astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    label[starts[jrow] + place] = judged
    return label


def _equal_entries(rows: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each row of ``rows`` holds its ``value``: ``(which row, column)`` pairs, in row order. A flat
    search of the mask: numpy's two-dimensional ``nonzero`` is many times slower."""
    flat = np.flatnonzero(rows == value[:, None])
    return np.divmod(flat, rows.shape[1])


def _first_places(srt: np.ndarray, jrow: np.ndarray, value: np.ndarray) -> np.ndarray:
    """In each row ``jrow`` of ``srt`` (ascending rows), the first place ``value`` stands: the number of
    entries below it. A binary search of every row at once, by powers of two: the entries below
    ``value`` are a prefix of its row, whose length grows by each step whose last entry is below."""
    width = srt.shape[1]
    flat = srt.ravel()
    before = jrow * width - 1  # entry i (from 1) of row r at r * width + i - 1
    count = np.zeros(len(value), dtype=np.int64)
    step = 1 << (width.bit_length() - 1) if width else 0
    while step:
        longer = count + step
        # Past the row's end the row's last entry is read: when it is below, the whole row is (and
        # the count, capped below, is the width).
        count = np.where(flat[before + np.minimum(longer, width)] < value, longer, count)
        step >>= 1
    return np.minimum(count, width)


def _coarse_places(
    neg: np.ndarray, jrow: np.ndarray, value: np.ndarray
) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]] | None:
    """:func:`_judged_ranks`' places for float64 scores, from their float32 roundings, sorted at a third
    of the cost: rounding keeps order (a < b gives f32(a) <= f32(b)), so the entries whose rounding is
    below a judged document's are all below it. A judged document alone in its rounding's bucket is
    placed by them; one sharing it (nearly always an exact tie) is counted exactly in its row as given.
    Returns ``(places, tied, pairs)``: the judged documents whose score another entry of the row shares,
    and the entries of each one's score as :func:`_equal_entries` gives them (``which`` numbering the
    tied documents); or ``None`` when too many share buckets for the exact counts to be cheap."""
    width = neg.shape[1]
    with np.errstate(over="ignore"):  # beyond float32's range a rounding is +-inf: order still kept
        coarse = neg.astype(np.float32)
        rounded = value.astype(np.float32)
    coarse.sort(axis=1)
    place = _first_places(coarse, jrow, rounded)
    nxt = np.minimum(place + 1, width - 1)
    shared = np.flatnonzero((place + 1 < width) & (coarse.ravel()[jrow * width + nxt] == rounded))
    if len(shared) * width > _TIED_JUDGED:
        return None
    if not len(shared):
        return place, shared, (shared, shared)
    rows = neg[jrow[shared]]
    place[shared] = np.count_nonzero(rows < value[shared, None], axis=1)
    which, col = _equal_entries(rows, value[shared])
    size = np.bincount(which, minlength=len(shared))  # the judged document itself is one of them
    is_tied = size > 1
    # the tied ones renumbered among themselves, their pairs kept
    number = np.cumsum(is_tied) - 1
    keep = is_tied[which]
    return place, shared[is_tied], (number[which[keep]], col[keep])


def _topk_order(
    neg: np.ndarray, docs: np.ndarray, lengths: np.ndarray, ranked: bool
) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """Each row of a top k put in order: ``(order, first, moved, tied)``: the row-wise argsort of
    ``neg`` (``None`` when ``ranked``), the mask of a row's documents among the ranked entries (``None``
    when nothing was left out), and the flat positions whose tied entries move by docno
    (:func:`_tied_order`)."""
    order = None if ranked else np.argsort(neg, axis=1)
    width = neg.shape[1]
    ordered = neg if order is None else np.take_along_axis(neg, order, axis=1)
    full = bool((lengths == width).all())
    # A row's documents come first in its ranked row, the left-out entries after them.
    first = None if full else np.arange(width) < lengths[:, None]
    s = ordered.ravel() if first is None else ordered[first]
    ranked_docs = docs if order is None else np.take_along_axis(docs, order, axis=1)
    same_row = _same_block(len(s), lengths)
    flat_docs = ranked_docs.ravel() if first is None else ranked_docs[first]
    moved, tied = _tied_order(None, same_row, s, _Decimal(flat_docs))
    return order, first, moved, tied


class _Decimal:
    """Integer ids whose decimal text is made only for the rows gathered (the documents in a tie)."""

    def __init__(self, numbers: np.ndarray) -> None:
        self._numbers = numbers

    def gather(self, rows: np.ndarray) -> pl.Series:
        return pl.Series("docno", self._numbers[rows]).cast(pl.String)


class _LazyFrame:
    """A run's frame, made when a column is first asked for (``height`` is the run's length)."""

    def __init__(self, run: Any) -> None:
        self._run = run

    @property
    def height(self) -> int:
        return len(self._run)

    def get_column(self, name: str) -> Any:
        return self._run.frame.get_column(name)


class _TopKOrder:
    """A top k's ranked order (:func:`_topk_order`), found when first asked for: by the labels when
    too many judged documents tie, by a per-query plugin metric for the ranked frame."""

    def __init__(
        self, top: Any, rows: np.ndarray, neg: np.ndarray, docs: np.ndarray, lengths: np.ndarray, ranked: bool
    ) -> None:
        self.top, self.rows, self.neg, self.docs, self.lengths, self.ranked = (
            top,
            rows,
            neg,
            docs,
            lengths,
            ranked,
        )
        self._order: Any = None

    def _found(self) -> Any:
        if self._order is None:
            self._order = _topk_order(self.neg, self.docs, self.lengths, self.ranked)
        return self._order

    def arrange(self, matrix: np.ndarray) -> np.ndarray:
        """The entries of ``matrix`` (one per top-k entry) in ranked order, flat."""
        order, first, moved, tied = self._found()
        if order is not None:
            matrix = np.take_along_axis(matrix, order, axis=1)
        flat = matrix.ravel() if first is None else matrix[first]
        if moved is not None:
            flat[moved] = flat[tied]
        return flat

    def indices(self, n: int) -> np.ndarray:
        """The frame's rows in ranked order."""
        top = self.top
        width = top.scores.shape[1]
        # an entry's frame row: its row's first frame row, plus the documents before it in its row
        starts = np.concatenate(([0], np.cumsum(top.lengths)[:-1]))[self.rows]
        if top.valid is None:
            within = np.broadcast_to(np.arange(width), (len(self.rows), width))
        else:
            within = np.cumsum(top.valid[self.rows], axis=1) - 1
        return np.repeat(starts, self.lengths) + self.arrange(within)


class _Ranking:
    """How the run's rows (after dropping queries the qrels lack) go into ranked order.

    ``codes`` and ``lengths`` give each ranked segment's query code and length. The order is either a
    full row index (``rows``, ranked position -> row) or, when the file was already ranked but for
    ties, file order with the rows at positions ``moved`` replaced by ``rows``.
    """

    # a plain class: a dataclass writes and compiles three methods as the module loads (~0.35 ms of the
    # start of every evaluation, issue 35), and nothing compares or prints a ranking
    __slots__ = ("codes", "lengths", "moved", "rows")

    def __init__(
        self,
        codes: np.ndarray,
        lengths: np.ndarray,
        rows: np.ndarray | None = None,
        moved: np.ndarray | None = None,
    ) -> None:
        self.codes = codes
        self.lengths = lengths
        self.rows = rows
        self.moved = moved

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


def _judged_rows(
    index: QrelsIndex, frame: Any, keys: np.ndarray, blocks: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """The run rows the qrels judge (ascending) and their labels; the other rows are unjudged.

    ``keys`` are the run rows' :func:`~irspec.data.pair_keys`; ``blocks`` the (query code, length) of
    each block of rows with one query id."""
    if index.keys_unique:
        # The rows the filter cannot rule out (a few percent of a run's rows), searched among the sorted
        # qrels keys: the matches with their row numbers. A search, not a join: a join's fixed cost is
        # most of a small run's evaluation, and the qrels keys are distinct here.
        maybe = np.flatnonzero(index.key_filter[keys >> index.filter_shift])
        wanted = keys[maybe]
        at = np.minimum(_search(index.sorted_keys, wanted), max(len(index.sorted_keys) - 1, 0))
        found = (
            index.sorted_keys[at] == wanted if len(index.sorted_keys) else np.zeros(len(wanted), dtype=bool)
        )
        row = maybe[found]
        qrow = index.key_order[at[found]]
        # Check every hashed match: exactness must not rest on a hash. The query codes come from the
        # strings themselves, so equal codes are equal query ids; the docnos are compared as strings.
        codes, lengths = blocks
        row_code = codes[np.searchsorted(np.cumsum(lengths), row, side="right")]
        whole, whole_rows = index.rows_of_whole(qrow)
        if (row_code == index.row_query[qrow]).all() and frame.get_column("docno")[_series(row)].equals(
            whole.frame.get_column("docno")[_series(whole_rows)]
        ):
            return row, index.row_label[qrow]
    joined = frame.select("query", "docno").join(
        index.frame, on=["query", "docno"], how="left", maintain_order="left"
    )
    label = joined.get_column("label")
    rows = label.is_not_null().arg_true().to_numpy().astype(np.int64)
    return rows, label.gather(rows).to_numpy().astype(np.int64)


def _search(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """``np.searchsorted(haystack, needles)``, the same places, found for the needles in sorted order: a
    hashed key's needles come in no order, and numpy searches those several times slower than sorted ones
    (numpy 2.4, 64-bit keys: 0.56 ms against 0.08 ms with the sort, for a streamed block's 4,500 among
    5,000 keys; 15.7 ms against 4.5 ms for 50,000 among 100,000)."""
    if len(needles) < _SEARCH_SORTED_FROM:
        return np.searchsorted(haystack, needles)
    order = np.argsort(needles)
    at = np.empty(len(needles), dtype=np.intp)
    at[order] = np.searchsorted(haystack, needles[order])
    return at


_SEARCH_SORTED_FROM = 64
"""Needles from this many on are sorted before :func:`_search` (below, sorting costs more than it saves)."""


def _same_block(n: int, lengths: np.ndarray) -> np.ndarray:
    """Whether rows ``i`` and ``i + 1`` of ``n`` rows, in blocks of ``lengths``, lie in the same block."""
    same = np.ones(max(n - 1, 0), dtype=bool)
    same[np.cumsum(lengths)[:-1] - 1] = False
    return same


def _in_order(scores: np.ndarray, same_block: np.ndarray) -> bool:
    """Whether each block's scores are non-increasing (ranked already), ``same_block`` from
    :func:`_same_block`."""
    return not np.any(same_block & (scores[1:] > scores[:-1]))


def _rank(
    codes: np.ndarray, lengths: np.ndarray, scores: np.ndarray, docnos: Any, wanted: np.ndarray | None = None
) -> _Ranking:
    """The ranked order of rows given as blocks of one query each (``codes``, ``lengths``): by query,
    score descending, docno descending. When each query is one block, the blocks keep their order.
    Given ``wanted`` (a mask of rows), only the ties holding a wanted row are put in docno order: the
    others' rows stay in the order they come in, which is the ranked order of whatever is the same for
    all their rows (the labels, where ``wanted`` marks the judged rows)."""
    same_block = _same_block(len(scores), lengths)
    if np.bincount(codes, minlength=1).max() <= 1:
        if _in_order(scores, same_block):
            # Scores non-increasing within each query (the usual run file): only ties move.
            moved, rows = _tied_order(None, same_block, scores, docnos, wanted)
            return _Ranking(codes, lengths, rows, moved)
        # A pytrec_eval dict, a retriever's top k: each block sorted on its own, far faster than one
        # sort of every row (a block of a few thousand rows fits in cache).
        order = _block_argsort(scores, lengths)
        moved, rows = _tied_order(order, same_block, scores[order], docnos, wanted)
        if moved is not None:
            order[moved] = rows
        return _Ranking(codes, lengths, order)
    qcode = np.repeat(codes, lengths)
    # By score descending in any order of ties (they are ordered by docno next), then a stable sort
    # by query: a quicksort and a radix sort, several times faster than two stable sorts.
    order = np.argsort(-scores)
    order = order[_stable_argsort(qcode[order])]
    q = qcode[order]
    moved, rows = _tied_order(order, q[1:] == q[:-1], scores[order], docnos, wanted)
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
    order: np.ndarray | None, same_q: np.ndarray, s: np.ndarray, docnos: Any, wanted: np.ndarray | None = None
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Where runs of equal (query, score) must be reordered by docno descending, as trec_eval does.

    ``order`` lists rows (``None``: every row in file order); ``same_q[i]`` says whether its entries
    i and i+1 share a query, ``s`` is the score of each listed row; ``wanted``, a mask of rows, leaves
    out the runs without a wanted row (:func:`_rank`). Returns (positions in ``order``, the rows that
    belong there), or (None, None) when nothing ties.
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
    if wanted is not None:
        held = np.zeros(int(group[-1]) + 1, dtype=bool)
        held[group[wanted[rows]]] = True
        kept = held[group]
        if not kept.any():
            return None, None
        positions, group, rows = positions[kept], group[kept], rows[kept]
    sub = pl.DataFrame({"group": _series(group), "docno": docnos.gather(_series(rows)), "row": _series(rows)})
    sub = sub.sort(["group", "docno"], descending=[False, True])
    return positions, sub.get_column("row").to_numpy()


_LIST_BELOW = 1 << 16
"""Integer arrays shorter than this are made polars Series through a list (:func:`_series`)."""


def _series(values: np.ndarray) -> pl.Series:
    """An integer array as a polars Series: a short one through a Python list, since polars imports
    ``numpy.ma`` (10-15 ms, a tenth of a small evaluation's own time) for the first numpy array it is
    given, and a run's few tied rows are its only numpy array on the way to a result. The hot paths
    gather rows by indexing a column with it (``column[index]``, as ``_judged_rows`` and the ties'
    docnos do): ``Series.gather`` plans and runs a query, several times the cost for a few thousand
    rows."""
    if len(values) < _LIST_BELOW:
        return pl.Series(values.tolist(), dtype=pl.Int64)
    return pl.Series(values)
