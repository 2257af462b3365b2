"""Recommender evaluation from matrices: held-out interactions as a scipy.sparse users × items matrix,
recommendations as a users × k array of item indices or as a score matrix whose top k is found here.

The matrices become what the engine evaluates, and nothing else changes: the held-out matrix is the
qrels (a user is the query whose id is its row number as text, an item the document whose docno is its
column number; a stored value is a graded label, an explicit zero a judged non-relevant item), the
top-k array is a retriever's top k (:meth:`irspec.Evaluator.evaluate_topk`, joined by the integer ids),
its order the ranking. Results are ordinary :class:`~irspec.evaluation.result.Result` objects: frames,
comparisons, reports and plans take them as they take a run's.

``exclude=``, the training interactions, are removed from each user's list before any cutoff applies,
as recommender toolkits do (a model need not be told not to recommend what the user has seen); the
result's ``run_source`` says so. Users without a relevant held-out item are left out
(``empty_users="skip"``, as most toolkits do) or counted with 0 on every metric (``"zero"``).
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal

import numpy as np
import scipy.sparse

from irspec.data import Qrels
from irspec.errors import EvaluationError, InputError, IrspecWarning, quote
from irspec.evaluation.compute import (
    CATALOGUE_INPUT,
    bind_metrics,
    catalogue_value,
    compute_metric,
    judged_at_10,
)
from irspec.evaluation.context import Options, segment_counts
from irspec.evaluation.evaluate import issue_warnings
from irspec.evaluation.evaluator import Evaluator
from irspec.evaluation.judgments import Judgments
from irspec.evaluation.means import aggregate_values
from irspec.evaluation.notes import level_warnings
from irspec.evaluation.parts import context_values
from irspec.evaluation.result import Result, handed_over, with_ids_made_later
from irspec.frozen import frozen
from irspec.lazy import lazy_module
from irspec.recsys.features import expected_items, item_features
from irspec.recsys.ranked import (
    ListScan,
    decimal_texts,
    list_lengths,
    matrix_context,
    scan_lists,
    stored_at,
    text_order,
)
from irspec.spec.registry import Metric

pl = lazy_module("polars")

__all__ = ["CHUNK_ENTRIES", "EmptyUsers", "evaluate_scores", "evaluate_topk", "top_items"]

EmptyUsers = Literal["skip", "zero"]

CHUNK_ENTRIES = 1 << 22
"""Score entries :func:`evaluate_scores` works on at a time (rows × items): a dense score matrix is
read in chunks of rows this large, so that no copy larger than one chunk is made (32 MiB of float64)."""

TEST = "<test_matrix>"


@frozen
class _Propensities:
    """The ``"propensity"`` input of an evaluation (:mod:`irspec.builtin.kernels.propensity` reads it):
    each item's weight 1/p, and the held-out matrix's CSR arrays (for the ideal top k)."""

    weights: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    labels: np.ndarray
    ids: tuple[str, ...] = ()


@frozen
class _Recommendations:
    """The ``"recommendations"`` input (:data:`~irspec.evaluation.compute.CATALOGUE_INPUT`): every test
    user's list after the training items are removed (``items``, by row number, ``-1`` padding), the
    evaluated users' rows (``users``: the catalogue metrics count their lists) and the catalogue's size."""

    items: np.ndarray
    users: np.ndarray
    n_items: int


@frozen
class _Popularity:
    """The ``"popularity"`` input (:mod:`irspec.builtin.kernels.popularity` reads it): each item's
    number of training users (``counts``) and the number of users with a training interaction."""

    counts: np.ndarray
    users: int


def evaluate_topk(
    test_matrix: Any,
    top_items: Any,
    metrics: str | Metric | Iterable[str | Metric],
    *,
    exclude: Any = None,
    propensity: Any = None,
    popularity: Any = None,
    empty_users: EmptyUsers = "skip",
    relevance_level: int = 1,
    name: str = "run",
    user_ids: Sequence[str] | None = None,
    features: Any = None,
    expected: Any = None,
) -> Result:
    """Evaluate recommendations given as a users × k array of item indices against held-out interactions.

    ``test_matrix``: a scipy.sparse matrix (CSR, CSC, COO, ...: any format, an array or a matrix) of
    users × items, whose stored values are graded relevance labels (integers; ``1`` for an implicit
    interaction), an explicit zero a judged non-relevant item. ``top_items``: an integer array with a row
    per user of the matrix (in its order) and the recommended items' column numbers in rank order,
    ``-1`` padding a short list (numpy, or anything with ``__array__`` or DLPack: a CPU torch tensor).

    ``exclude``: a sparse matrix of the same shape (the training interactions); its stored items are
    removed from each user's list before any cutoff, so give lists longer than the largest cutoff when
    the model may recommend them. ``propensity``: each item's propensity p in (0, 1]
    (:func:`irspec.recsys.jain_propensity`), for the propensity-scored metrics (PSP@k, PSnDCG@k).
    ``popularity``: a sparse matrix of the same shape, the training interactions (usually ``exclude``'s),
    whose stored entries per item are its popularity, for ARP@k, APLT@k, Novelty@k and Serendipity@k.
    ``features``: the items' features for ILD@k, an items × features matrix (numpy or scipy.sparse, a
    row per column of the test matrix), or a distance function ``d(a, b)`` of two arrays of item
    indices (for ``ILD(distance=given)@k``). ``expected``: each user's expected items for
    ``Serendipity(expected=items)@k``, a sparse matrix of the test matrix's shape or a users × m array of
    item indices (``-1`` padding). See :mod:`irspec.builtin.beyond`.
    ``empty_users``: a user with no held-out item at ``relevance_level`` or above is left out (``"skip"``,
    the default) or counted with 0 on every metric (``"zero"``).

    Returns a :class:`~irspec.evaluation.result.Result` whose query ids are the users' row numbers as text
    (``"0"``, ``"1"``, ...), or with ``user_ids`` (one distinct id per row of the matrix, in its order;
    :attr:`irspec.recsys.tables.Tables.user_ids`) the users' own ids, in their order as text. Raises :class:`~irspec.errors.InputError` naming the argument and the row for
    shapes that do not match, item indices outside the matrix, a repeated item in a row, a (user, item)
    pair ``test_matrix`` stores twice (scipy would add them up into one label; in ``exclude`` and
    ``popularity`` a pair stored twice is one interaction), and labels that are not integers.
    """
    test = _csr(test_matrix, "test_matrix")
    # without exclude=, the bounds are checked in the pass that finds the lists' lengths
    items = _items(top_items, test.shape, bounds=exclude is not None)
    excluded, scan = None, None
    if exclude is not None:
        excluded = _csr(exclude, "exclude", test.shape)
        items = _excluded(items, excluded)
    else:
        scan = scan_lists(items)
        _in_bounds(items, scan.smallest, scan.largest, test.shape)
    ids = _user_ids(user_ids, test.shape[0])
    extra = _beyond_inputs(features, expected, test.shape)
    args = (
        test,
        items,
        metrics,
        excluded,
        propensity,
        popularity,
        empty_users,
        relevance_level,
        name,
        extra,
        scan,
    )
    return _evaluate(*args) if ids is None else _named(ids, *args)


def evaluate_scores(
    test_matrix: Any,
    scores: Any,
    metrics: str | Metric | Iterable[str | Metric],
    *,
    k: int | None = None,
    exclude: Any = None,
    propensity: Any = None,
    popularity: Any = None,
    empty_users: EmptyUsers = "skip",
    relevance_level: int = 1,
    name: str = "run",
    user_ids: Sequence[str] | None = None,
    features: Any = None,
    expected: Any = None,
) -> Result:
    """Evaluate a model's scores of every item for every user: its top k found here, then evaluated as
    :func:`evaluate_topk` evaluates a top k (the other arguments are its own).

    ``scores``: a users × items array (numpy, or anything with ``__array__``), or an iterable of row
    chunks (2-D arrays whose rows, in turn, are the users' in order: a model scored batch by batch).
    Memory stays bounded: an array is read :data:`CHUNK_ENTRIES` entries at a time, and nothing larger
    than a chunk is copied. ``k``: how many items each user's list keeps, by default the largest cutoff of
    the metrics (a metric without a fixed cutoff, such as AP over the whole list, needs ``k``); a
    ``k`` below a metric's cutoff cuts its lists short (R@6 with ``k=2`` counts the top 2 alone), which
    a warning says, in the result's ``warnings`` too.
    ``exclude``: the training items are given no place in the top k (they are never among the k kept).

    Each row's top k is found with ``numpy.argpartition`` and sorted by score descending; **equal scores
    rank the lower item index first**, whatever the chunking. ``user_ids`` names the rows, as
    :func:`evaluate_topk`'s does. A NaN or infinite score is an
    :class:`~irspec.errors.InputError` naming the user and item.
    """
    test = _csr(test_matrix, "test_matrix")
    ids = _user_ids(user_ids, test.shape[0])
    metrics = bind_metrics(metrics)
    depth = _depth(metrics, k)
    skip = None if exclude is None else _csr(exclude, "exclude", test.shape)
    extra = _beyond_inputs(features, expected, test.shape)  # checked before any score is read
    found: list[np.ndarray] = []
    start = 0
    for chunk in _chunks(scores, test.shape[1]):
        stop = start + len(chunk)
        if stop > test.shape[0]:
            raise InputError(f"scores have more rows than test_matrix's {test.shape[0]} users", "<scores>")
        found.append(top_items(chunk, depth, None if skip is None else skip[start:stop], first_row=start))
        start = stop
    if start != test.shape[0]:
        raise InputError(f"scores have {start} rows, test_matrix {test.shape[0]} users", "<scores>")
    items = np.concatenate(found) if found else np.zeros((0, depth), dtype=np.int64)
    args = (test, items, metrics, skip, propensity, popularity, empty_users, relevance_level, name, extra)
    result = _evaluate(*args) if ids is None else _named(ids, *args)
    short = _cut_short(metrics, depth)
    if short is None:
        return result
    issue_warnings((short,))
    return dataclasses.replace(result, warnings=(*result.warnings, short))


def top_items(scores: Any, k: int, exclude: Any = None, *, first_row: int = 0) -> np.ndarray:
    """The ``k`` best items of each row of ``scores`` (rows × items), by score descending and, among
    equal scores, by item index ascending: a rows × k int64 array, padded with ``-1`` where a row has
    fewer than k items left. ``exclude``: a sparse rows × items matrix whose stored items are never
    kept. ``first_row`` numbers the rows in messages (a chunk's first user).

    Integer scores (signed or unsigned, any width) are ranked as integers, never made floats: two
    int64 scores above 2**53 that a float64 would make equal keep their order."""
    scores = checked_scores(scores, first_row)
    rows, width = scores.shape
    excluded = None
    if exclude is not None and exclude.nnz:
        coo = scipy.sparse.coo_array(exclude)
        # the chunk's one copy, of its own type: an excluded item's score is the lowest the type holds
        # (below every score of a float; a real score may equal it in an integer type, which the mask
        # tells apart, so that an excluded item never takes the place of a real one)
        scores = scores.copy()
        scores[coo.row, coo.col] = -np.inf if scores.dtype.kind == "f" else np.iinfo(scores.dtype).min
        excluded = np.zeros(scores.shape, dtype=bool)
        excluded[coo.row, coo.col] = True
    kk = min(k, width)
    if kk == 0 or rows == 0:
        return np.full((rows, k), -1, dtype=np.int64)
    # The kth largest score of each row; every score above it is in, and of the scores equal to it the
    # lowest item indices fill the places left (argpartition alone would pick among ties arbitrarily),
    # the excluded items last (they tie with a real score only at the type's lowest value).
    part = np.argpartition(scores, width - kk, axis=1)[:, width - kk :]
    kth = np.take_along_axis(scores, part, axis=1).min(axis=1)[:, None]
    above = scores > kth
    tied = scores == kth
    chosen = above | tied
    left = kk - above.sum(axis=1)
    crowded = np.flatnonzero(tied.sum(axis=1) > left)  # rows with more ties at the kth score than places
    if len(crowded):
        some = tied[crowded]
        place = np.cumsum(some, axis=1)  # 1 + each tied entry's place among its row's, by index
        if excluded is not None:
            out_of = some & excluded[crowded]
            kept_ties = some & ~out_of
            # the real ties first, by index, then the excluded ones (only to fill the row's places)
            place = np.where(
                out_of,
                kept_ties.sum(axis=1)[:, None] + np.cumsum(out_of, axis=1),
                np.cumsum(kept_ties, axis=1),
            )
        chosen[crowded] = above[crowded] | (some & (place <= left[crowded, None]))
    cols = np.nonzero(chosen)[1].reshape(rows, kk)  # each row's kk items, by index ascending
    values = np.take_along_axis(scores, cols, axis=1)
    # descending by a key ascending: -x for floats (finite: no overflow), ~x for integers, which
    # reverses their order and never overflows (-x wraps an unsigned x and leaves int64's minimum as it is)
    order = np.argsort(
        -values if values.dtype.kind == "f" else ~values, axis=1, kind="stable"
    )  # stable: ties keep the index order
    ranked = np.take_along_axis(cols, order, axis=1)
    out = np.full((rows, k), -1, dtype=np.int64)
    if excluded is None:
        out[:, :kk] = ranked
        return out
    gone = np.take_along_axis(excluded, ranked, axis=1)
    if gone.any():
        # an excluded item ties a real one only at the type's lowest score: moved after it (stable, so
        # each part keeps its order), then dropped
        last = np.argsort(gone, axis=1, kind="stable")
        ranked = np.take_along_axis(ranked, last, axis=1)
        ranked[np.take_along_axis(gone, last, axis=1)] = -1
    out[:, :kk] = ranked
    return out


def checked_scores(scores: Any, first_row: int = 0) -> np.ndarray:
    """``scores`` (a chunk of a score matrix) as a 2-D numpy array of numbers, every score finite: an
    :class:`~irspec.errors.InputError` names the first user (``first_row`` the chunk's first) and item
    whose score is NaN or infinite. The check of :func:`top_items` and of
    :func:`irspec.recsys.sampling.sampled`, which take scores alike."""
    scores = np.asarray(scores)
    if scores.ndim != 2 or scores.dtype.kind not in "fiu":
        raise InputError(
            f"scores must be a 2-D array of numbers, got shape {scores.shape} of {scores.dtype}", "<scores>"
        )
    if scores.dtype.kind == "f":
        bad = ~np.isfinite(scores)
        if bad.any():
            r, c = np.argwhere(bad)[0].tolist()
            raise InputError(
                f"user {first_row + r}, item {c}: score {scores[r, c]} is not finite", "<scores>"
            )
    return scores


def _evaluate(
    test: scipy.sparse.csr_array,
    items: np.ndarray,
    metrics: str | Metric | Iterable[str | Metric],
    excluded: scipy.sparse.csr_array | None,
    propensity: Any,
    popularity: Any,
    empty_users: EmptyUsers,
    relevance_level: int,
    name: str,
    extra: dict[str, Any] | None = None,
    scan: ListScan | None = None,
) -> Result:
    """The evaluation of ``items`` (checked) against ``test``; ``scan``: the lists' :func:`scan_lists`,
    when the caller has it."""
    if empty_users not in ("skip", "zero"):
        raise EvaluationError(f"empty_users must be skip or zero, got {empty_users!r}")
    has = _has_relevant(test, relevance_level)
    kept = np.flatnonzero(has)
    # the catalogue metrics count the lists of the users the result has: with "zero", every user's
    listed = kept if empty_users == "skip" else np.arange(test.shape[0])
    # each list's items before its -1 padding; None when a -1 comes before an item (a hole), which the
    # engine skips as it skips any -1: the lists' items are then moved up, in order
    lengths = list_lengths(items) if scan is None else scan.lengths
    compact = items if lengths is not None else _moved_up(items, items >= 0)
    inputs: dict[str, Any] = {CATALOGUE_INPUT: _Recommendations(compact, listed, test.shape[1])}
    if propensity is not None:
        weights = 1.0 / _propensities(propensity, test.shape[1])
        inputs["propensity"] = _Propensities(weights, test.indptr, test.indices, test.data)
    if popularity is not None:
        train = _csr(popularity, "popularity", test.shape)
        inputs["popularity"] = _Popularity(
            np.bincount(train.indices, minlength=test.shape[1]), int(np.count_nonzero(np.diff(train.indptr)))
        )
    inputs.update(extra or {})
    bound = bind_metrics(metrics)
    every = len(kept) == test.shape[0]
    source = f"<topk: {test.shape[0]} users × {test.shape[1]} items"
    if excluded is not None:
        source += f"; exclude: {excluded.nnz} training interactions, removed before the cut"
    source += ">"
    catalogue = {str(m): catalogue_value(inputs[CATALOGUE_INPUT], m) for m in bound if m.catalogue}
    # The context built from the matrices (ranked.py) when the engine would say nothing the result's
    # warnings must say: every evaluated user has a list (else "missing from the run"), each -1 after
    # the items (the list's places are its ranks), and every metric reads rankings and qrels.
    if (
        lengths is not None
        and len(kept) > 0
        and bool((lengths if every else lengths[kept]).all())
        and all(m.definition.needs == "run" for m in bound)
    ):
        result = _direct(test, items, lengths, kept, bound, relevance_level, inputs, name, source, catalogue)
    else:
        users = np.repeat(np.arange(test.shape[0], dtype=np.int64), np.diff(test.indptr))
        judged = has[users]
        qrels = _qrels(users[judged], test.indices[judged].astype(np.int64), test.data[judged], test.shape)
        evaluator = Evaluator(
            Judgments(qrels, inputs),
            bound,
            relevance_level=relevance_level,
            # every item not held out is unjudged: the warning that a run rests on unjudged documents
            # would be given for every recommender
            judged_warning=None,
        )
        rows = items if every else items[kept]
        # the list's own order is the ranking: strictly decreasing scores, no tie to break
        ranks = np.broadcast_to(np.arange(items.shape[1], 0, -1, dtype=np.float64), rows.shape)
        result = evaluator.evaluate_topk(kept, rows, ranks, name=name)
        result = dataclasses.replace(result, run_source=source, catalogue=catalogue)
    if empty_users == "zero" and len(kept) < test.shape[0]:
        result = _with_zeros(result, np.flatnonzero(~has))
    return result


def _beyond_inputs(features: Any, expected: Any, shape: tuple[int, int]) -> dict[str, Any]:
    """The ``"features"`` and ``"expected"`` inputs of ILD and Serendipity (:mod:`irspec.recsys.features`),
    those given."""
    found: dict[str, Any] = {}
    if features is not None:
        found["features"] = item_features(features, shape[1])
    if expected is not None:
        lists = expected if scipy.sparse.issparse(expected) else _items(expected, shape, "expected")
        found["expected"] = expected_items(lists, shape)
    return found


def _direct(
    test: scipy.sparse.csr_array,
    items: np.ndarray,
    lengths: np.ndarray,
    kept: np.ndarray,
    metrics: list[Metric],
    relevance_level: int,
    inputs: dict[str, Any],
    name: str,
    source: str,
    catalogue: dict[str, float],
) -> Result:
    """The result :meth:`Evaluator.evaluate_topk` gives for the users ``kept`` and their lists (their
    rows of ``items``, each with ``lengths`` items before its padding), from the context built straight
    from the matrices (:func:`~irspec.recsys.ranked.matrix_context`): the same values, means, Judged@10
    and warnings, with no qrels frame, run frame or join made; its ``run_source`` is ``source``. The
    users' ids are made when first read (a result only aggregated never makes them)."""
    options = Options(relevance_level, judged_warning=None)
    ctx = matrix_context(test, items, lengths, kept, options, inputs)
    values, texts = context_values(ctx, metrics)
    order = text_order(kept)  # results list users by id as text, as every result lists queries
    # Judged@10 as judgment_coverage() computes it, without the list of the ids it returns beside it; the
    # mean in id order, as finish() takes it
    judged = aggregate_values(compute_metric(ctx, judged_at_10())[order], "mean")
    notes = level_warnings(ctx.qrels, options, metrics)  # type: ignore[arg-type]
    users = kept[order]
    result = with_ids_made_later(
        lambda: tuple(decimal_texts(users)),
        run_name=name,
        run_source=source,
        metrics=tuple(metrics),
        values=handed_over(values[order]),
        options=options,
        warnings=tuple(notes),
        texts={key: tuple(map(strings.__getitem__, order.tolist())) for key, strings in texts.items()},
        judged_at_10=judged,
        catalogue=catalogue,
    )
    issue_warnings(result.warnings)
    return result


def _has_relevant(test: scipy.sparse.csr_array, level: int) -> np.ndarray:
    """Whether each user (row) has a held-out item at ``level`` or above."""
    if not test.nnz or int(test.data.min()) >= level:  # every label relevant (implicit feedback): no count
        return np.diff(test.indptr) > 0
    return segment_counts(test.data >= level, test.indptr) > 0


def _moved_up(items: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Each row of ``items`` with its entries where ``keep`` moved up, in order, and ``-1`` after them."""
    out = np.full(items.shape, -1, dtype=items.dtype)
    place = np.cumsum(keep, axis=1) - 1
    out[np.nonzero(keep)[0], place[keep]] = items[keep]
    return out


def _qrels(users: np.ndarray, items: np.ndarray, labels: np.ndarray, shape: tuple[int, int]) -> Qrels:
    """The judgments as :class:`~irspec.data.Qrels`: a user's row number as its query id, an item's
    column number as its docno. A CSR matrix's entries are distinct by construction, so they are put in
    the qrels' order (by query id, then docno, as text) here, and the checks a reader's frame goes
    through (duplicates, that order: hashing and sorting every row's strings) have nothing to find."""
    text_rank = [np.empty(n, dtype=np.int64) for n in shape]
    for rank, n in zip(text_rank, shape, strict=True):
        rank[np.argsort(np.arange(n).astype(str), kind="stable")] = np.arange(n)
    order = np.argsort(text_rank[0][users] * shape[1] + text_rank[1][items], kind="stable")
    frame = pl.DataFrame(
        [
            pl.Series("query", users[order]).cast(pl.String),
            pl.Series("docno", items[order]).cast(pl.String),
            pl.Series("label", labels[order], dtype=pl.Int64),
            pl.Series("line", dtype=pl.UInt32).extend_constant(None, len(order)),
        ]
    )
    return Qrels(frame, TEST)


def _with_zeros(result: Result, users: np.ndarray) -> Result:
    """``result`` with ``users`` added, each 0 on every metric (NaN on a text metric, as it has no
    mean), in the result's order of query ids."""
    ids = list(result.query_ids) + [str(u) for u in users.tolist()]
    zeros = np.zeros((len(users), len(result.metrics)))
    # NaN where a user has no value of its own: a text metric (no mean), a catalogue metric (one per run)
    zeros[:, [m.aggregate == "none" or m.catalogue for m in result.metrics]] = np.nan
    values = np.concatenate([result.values, zeros])
    order = sorted(range(len(ids)), key=ids.__getitem__)
    texts = {key: tuple((list(t) + [""] * len(users))[i] for i in order) for key, t in result.texts.items()}
    return dataclasses.replace(
        result, query_ids=tuple(ids[i] for i in order), values=values[order], texts=texts
    )


def _user_ids(user_ids: Sequence[str] | None, users: int) -> list[str] | None:
    """``user_ids`` checked: one distinct id per row of the matrix, as text."""
    if user_ids is None:
        return None
    if isinstance(user_ids, str):
        raise InputError("user_ids must be a sequence of ids, one per row, not a string", "<user_ids>")
    ids = [str(u) for u in user_ids]
    if len(ids) != users:
        raise InputError(f"user_ids has {len(ids)} ids, test_matrix {users} users: one per row", "<user_ids>")
    if len(set(ids)) != users:
        seen: set[str] = set()
        twice = next(u for u in ids if u in seen or seen.add(u))  # type: ignore[func-returns-value]
        raise InputError(f"user_ids names two rows {quote(twice)}: one id per user", "<user_ids>")
    return ids


def _named(ids: list[str], *args: Any) -> Result:
    """:func:`_evaluate` of ``args`` with each user (a row number as text: the kernels of the
    propensity and popularity metrics find users' rows by it) then called by its id, in the ids' order as
    text, as every result's query ids are. The warnings name users by id too: issued here once renamed,
    not by the evaluation."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrspecWarning)
        result = _evaluate(*args)
    named = [ids[int(q)] for q in result.query_ids]
    order = sorted(range(len(named)), key=named.__getitem__)
    texts = {key: tuple(t[i] for i in order) for key, t in result.texts.items()}

    def by_id(match: re.Match[str]) -> str:  # a quoted row number, as the warnings list users
        row = int(match.group(1))
        return quote(ids[row]) if row < len(ids) else match.group(0)

    said = tuple(re.sub(r"'(\d+)'", by_id, w) for w in result.warnings)
    issue_warnings(said)
    return dataclasses.replace(
        result,
        query_ids=tuple(named[i] for i in order),
        values=result.values[order],
        texts=texts,
        warnings=said,
    )


def _csr(matrix: Any, what: str, shape: tuple[int, int] | None = None) -> scipy.sparse.csr_array:
    """A scipy.sparse matrix as CSR with integer labels, each (row, column) once, indices sorted: a
    (row, column) pair stored twice is an :class:`~irspec.errors.InputError` naming the user and item
    (summed, two stored 1s would be a label 2, a 1 and a -1 no entry), as a pair twice in the
    held-out table is. For ``exclude`` and ``popularity`` (a ``shape`` given), which entries are stored,
    whatever their values: a training interaction stored twice is one (as a repeated row of a training
    table, and as :func:`~irspec.recsys.propensity.jain_propensity` counts it)."""
    if not scipy.sparse.issparse(matrix):
        raise InputError(
            f"{what} must be a scipy.sparse matrix (users × items; csr_array(dense) makes one), "
            f"got {type(matrix).__name__}",
            f"<{what}>",
        )
    if len(matrix.shape) != 2 or (shape is not None and matrix.shape != shape):
        expected = f"; expected {shape}, test_matrix's" if shape is not None else ""
        raise InputError(f"{what} has shape {matrix.shape}{expected}", f"<{what}>")
    if shape is None and matrix.format == "coo" and not matrix.has_canonical_format:
        # made CSR, a COO matrix's repeated entries are added up: looked for before
        order = np.lexsort((matrix.col, matrix.row))
        _stored_once(matrix.row[order], matrix.col[order], what)
    csr = scipy.sparse.csr_array(matrix)  # a CSR input's arrays shared, read and never written
    if not csr.has_canonical_format:  # indices unsorted or repeated: the check costs only then
        csr = csr.copy()  # sorted and summed in place: the caller's matrix stays as it was
        csr.sort_indices()
        if shape is None:
            rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
            _stored_once(rows, csr.indices, what)
        csr.sum_duplicates()
    if shape is not None:
        return csr
    data = csr.data
    if data.dtype.kind == "b":
        data = data.astype(np.int64)
    elif data.dtype.kind == "f":
        least, most = (float(data.min()), float(data.max())) if len(data) else (0.0, 0.0)
        if least == most and least.is_integer() and abs(least) < 2**63:
            # one whole label for every entry (implicit feedback's 1.0): made, not converted and compared
            # (NaN is not equal to itself, an infinity not whole: neither comes here)
            csr.data = np.full(len(data), int(least), dtype=np.int64)
            return csr
        # a label is whole when it comes back from int64 unchanged: NaN, infinities, fractions and labels
        # beyond 64 bits do not (three passes over the labels, where isfinite and round took five)
        with np.errstate(invalid="ignore"):
            whole = data.astype(np.int64)
        if not np.array_equal(whole, data):
            i = int(np.flatnonzero(whole != data)[0])
            row = int(np.searchsorted(csr.indptr, i, side="right") - 1)
            raise InputError(
                f"user {row}, item {int(csr.indices[i])}: label {data[i]} is not an integer; labels are graded "
                f"relevance (binarise ratings first, e.g. (ratings >= 4).astype(int))",
                f"<{what}>",
            )
        data = whole
    elif data.dtype.kind not in "iu":
        raise InputError(f"{what} must hold numbers, got {data.dtype}", f"<{what}>")
    csr.data = data.astype(np.int64, copy=False)
    return csr


def _stored_once(rows: np.ndarray, cols: np.ndarray, what: str) -> None:
    """Refuses a (row, column) pair twice among the entries (sorted by row, then column), naming the
    first such user and item."""
    again = np.flatnonzero((rows[1:] == rows[:-1]) & (cols[1:] == cols[:-1]))
    if len(again):
        i = int(again[0])
        raise InputError(
            f"user {int(rows[i])}, item {int(cols[i])}: stored twice in {what}; each held-out (user, item) "
            "once, its label (scipy would add them up: call sum_duplicates() first if a sum is meant)",
            f"<{what}>",
        )


def _items(
    top_items: Any, shape: tuple[int, int], what: str = "top_items", bounds: bool = True
) -> np.ndarray:
    """``top_items`` (or the argument ``what``: ``expected`` lists too) checked: 2-D integers, a row per
    user, each an item of the matrix or -1 (unless ``bounds`` is false: the caller checks them with
    :func:`_in_bounds`; unsigned integers are checked here, before they are made signed)."""
    try:
        items = (
            np.asarray(top_items)
            if not hasattr(top_items, "__dlpack__") or hasattr(top_items, "__array__")
            else np.from_dlpack(top_items)
        )
    except (TypeError, ValueError, RuntimeError, BufferError) as e:
        raise InputError(f"{what}: cannot read it as an array ({str(e)[:120]})", f"<{what}>") from None
    if items.ndim != 2 or items.dtype.kind not in "iu":
        raise InputError(
            f"{what} must be a 2-D integer array (users × k item indices), got shape {items.shape} of "
            f"{items.dtype}",
            f"<{what}>",
        )
    if items.shape[0] != shape[0]:
        raise InputError(
            f"{what} has {items.shape[0]} rows, test_matrix {shape[0]} users: one row per user, in order",
            f"<{what}>",
        )
    # the smallest and largest items first (two quick passes), the entry itself only when one is out
    if items.size and (bounds or items.dtype.kind == "u"):
        _in_bounds(items, int(items.min()), int(items.max()), shape, what)
    # signed as given (a model's int32 lists are not copied into 64 bits: 80 MB for 10M entries); an
    # unsigned type made signed, so that -1 and arithmetic with row offsets mean what they say
    if items.dtype.kind == "u":
        items = items.astype(np.int64)
    return np.ascontiguousarray(items)


def _in_bounds(
    items: np.ndarray, smallest: int, largest: int, shape: tuple[int, int], what: str = "top_items"
) -> None:
    """Refuses ``items`` unless its ``smallest`` and ``largest`` entries are -1 or columns of the
    matrix, naming the first entry that is not."""
    if smallest < -1 or largest >= shape[1]:
        r, c = np.argwhere((items < -1) | (items >= shape[1]))[0].tolist()
        raise InputError(
            f"user {r}, column {c}: item {int(items[r, c])} is not a column of test_matrix (0 to {shape[1] - 1}, "
            "or -1 for none)",
            f"<{what}>",
        )


def _excluded(items: np.ndarray, exclude: scipy.sparse.csr_array) -> np.ndarray:
    """Each row of ``items`` without the items ``exclude`` stores for its user, the rest moved up in
    order and ``-1`` after them."""
    if not exclude.nnz or not items.size:
        return items
    flat, _ = stored_at(exclude, items)  # the (user, item) entries exclude stores
    if not len(flat):
        return items
    kept = np.ones(items.shape, dtype=bool)
    kept.flat[flat] = False
    return _moved_up(items, kept)


def _propensities(propensity: Any, items: int) -> np.ndarray:
    p = np.asarray(propensity, dtype=np.float64)
    if p.shape != (items,):
        raise InputError(
            f"propensity must hold one value per item ({items}), got shape {p.shape}", "<propensity>"
        )
    bad = ~(np.isfinite(p) & (p > 0) & (p <= 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"item {i}: propensity {p[i]} is not in (0, 1]", "<propensity>")
    return p


def _depth(metrics: list[Metric], k: int | None) -> int:
    """The length of the lists :func:`evaluate_scores` keeps: ``k``, or the metrics' largest cutoff."""
    if k is not None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise EvaluationError(f"k must be a positive integer, got {k!r}")
        return k
    cutoffs = []
    for m in metrics:
        value = m.get("k") if "k" in m.definition.param_names else None
        if not isinstance(value, int):
            raise EvaluationError(
                f"{m} has no fixed cutoff, so its value depends on the whole ranking: give k= (how many "
                "items each user's list keeps)"
            )
        cutoffs.append(value)
    return max(cutoffs)


def _cut_short(metrics: list[Metric], k: int) -> str | None:
    """The warning that ``k``, given to :func:`evaluate_scores`, keeps fewer items than some metrics'
    cutoffs: those metrics see lists of k items (R@6 of a top 2 counts the relevant items in the top 2
    alone), which their values do not show."""
    cutoffs = {str(m): m.get("k") for m in metrics if "k" in m.definition.param_names}
    cut = {name: c for name, c in cutoffs.items() if isinstance(c, int) and c > k}
    if not cut:
        return None
    return (
        f"k={k} is below the cutoff of {', '.join(cut)}: each user's list keeps {k} "
        f"item{'s' if k != 1 else ''}, so {'they count' if len(cut) > 1 else 'it counts'} the top {k} "
        f"alone (k={max(cut.values())} or more keeps every cutoff whole)"
    )


def _chunks(scores: Any, width: int) -> Iterator[np.ndarray]:
    """The score matrix in chunks of rows of at most :data:`CHUNK_ENTRIES` entries, or the chunks given."""
    if isinstance(scores, np.ndarray) or hasattr(scores, "__array__"):
        matrix = np.asarray(scores)
        if matrix.ndim != 2 or matrix.shape[1] != width:
            raise InputError(
                f"scores must be users × items ({width} items), got shape {matrix.shape}", "<scores>"
            )
        step = max(1, CHUNK_ENTRIES // max(width, 1))
        for start in range(0, matrix.shape[0], step):
            yield matrix[start : start + step]
        return
    for chunk in scores:
        block = np.asarray(chunk)
        if block.ndim != 2 or block.shape[1] != width:
            raise InputError(
                f"a chunk of scores must be rows × items ({width} items), got shape {block.shape}", "<scores>"
            )
        yield block
