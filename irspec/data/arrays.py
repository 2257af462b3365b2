"""A retriever's top k as arrays: query ids (n), document ids and scores (n × k), read into a run's frame.

Dense retrievers return exactly this (FAISS's ``index.search`` gives scores ``D`` and positions ``I``,
``torch.topk`` values and indices), so a validation loop need not build dicts. Arrays are taken through
the protocols numpy reads without importing their library: ``__array__`` (numpy, pandas, a CPU torch
tensor, JAX) or DLPack (``__dlpack__``). Document ids are strings or integers; an integer is its
decimal text, as a frame's integer ids are, and ``-1`` is FAISS's "no result" padding, skipped with its
score, in an integer array or an object array alike (one of integers is read as an integer array, one of
strings and integers takes each integer so). Scores are checked finite as the doubles they are ranked
as (a longdouble beyond a double's range is refused, by its value). Rows need not be sorted: ranking is
by score descending, then docno descending, as everywhere.

Every problem is an :class:`~irspec.errors.InputError` naming ``<topk>`` and the row (0-based, as the
arrays index it) and, where known, its query.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from irspec.data.objects import as_float64, bad_id, ids_as_text, is_id, no_lines, non_finite_message
from irspec.errors import InputError, quote
from irspec.frozen import frozen
from irspec.lazy import lazy_module

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")

__all__ = ["NO_RESULT", "SOURCE", "TopK", "frame_from_topk"]

SOURCE = "<topk>"
NO_RESULT = -1
"""The integer document id FAISS gives where it found fewer than k results; skipped."""


@frozen
class TopK:
    """A top k read and checked: each row's query id and number of documents, the scores as given, and
    the documents; :attr:`frame` is the run's frame (``query, docno, score, line``: rows in the order
    given, each row's documents in their columns' order, ``-1`` documents left out), made when first
    asked for: integer ids are not turned into text unless something needs the text."""

    query_ids: pl.Series
    lengths: np.ndarray
    scores: np.ndarray
    """The ``n × k`` scores as given (finite where a document stands), not yet converted to float64; a
    type wider than a double (longdouble) as float64, the precision they were checked finite in."""
    docnos: pl.Series | None
    """The documents' ids as text, in the frame's order, when they were not integers (read at once, so
    that an id that is neither a string nor an integer fails when the arrays are read)."""
    numbers: np.ndarray | None = None
    """The document ids as the integer matrix given (``-1`` for none), when they were integers: a row's
    duplicates are then found among the numbers themselves, exactly and without hashing."""
    valid: np.ndarray | None = None
    """Which entries of the ``n × k`` matrix given are the frame's rows, when some (``-1``) were left
    out; ``None`` when every entry is a row."""

    @cached_property
    def frame(self) -> pl.DataFrame:
        """The run's frame (see the class)."""
        every = self.valid is None
        docno = self.docnos
        if docno is None:
            assert self.numbers is not None
            docno = _ids(self.numbers if every else self.numbers[self.valid], "doc_ids")
        values = self.scores.astype(np.float64, copy=False)
        score = values.ravel() if every else values[self.valid]
        query = self.query_ids.gather(np.repeat(np.arange(len(self.query_ids), dtype=np.int64), self.lengths))
        return pl.DataFrame(
            [query.alias("query"), docno.alias("docno"), pl.Series("score", score), no_lines(len(score))]
        )

    @cached_property
    def size(self) -> int:
        """The number of documents given (the frame's rows)."""
        return int(self.lengths.sum())

    @property
    def blocks(self) -> tuple[pl.Series, np.ndarray]:
        """The frame's blocks of one query each, ``(ids, lengths)``: the rows with a document."""
        answered = self.lengths > 0
        return self.query_ids.filter(pl.Series(answered)), self.lengths[answered]

    @property
    def empty(self) -> tuple[str, ...]:
        """The query ids of the rows without a document (all ``-1``, or no columns): given, though
        they have no rows (:attr:`irspec.data.Run.empty`)."""
        return tuple(self.query_ids.filter(pl.Series(self.lengths == 0)).to_list())

    def check_distinct(self, keys: np.ndarray) -> None:
        """No document twice in one row, by the rows' (query, docno) hashes ``keys``
        (:func:`~irspec.data.pair_keys`): sorted row by row as a padded matrix (the padding, the
        largest key, sorts last), equal neighbours then compared as strings, so a hash collision is
        never taken for a duplicate. Raises :class:`InputError` naming the row."""
        lengths = self.lengths
        n = len(lengths)
        if n == 0 or int(lengths.max()) < 2:
            return
        if self.numbers is not None:
            self._check_numbers(self.numbers)
            return
        padding = np.iinfo(np.uint64).max
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        # each row's keys where its documents stood in the matrix given (left-out entries stay padding)
        if self.valid is None:
            matrix = keys.reshape(n, len(keys) // n).copy()
        else:
            matrix = np.full(self.valid.shape, padding, dtype=np.uint64)
            matrix[self.valid] = keys
        matrix.sort(axis=1)
        suspect = ((matrix[:, 1:] == matrix[:, :-1]) & (matrix[:, 1:] != padding)).any(axis=1)
        if (keys == padding).any():  # a document whose hash is the padding's: its row is compared whole
            suspect[np.repeat(np.arange(n), lengths)[keys == padding]] = True
        docnos = self.frame.get_column("docno")
        for row in np.flatnonzero(suspect).tolist():
            own = docnos.slice(int(starts[row]), int(lengths[row]))
            repeated = own.filter(own.is_duplicated())
            if len(repeated):
                raise InputError(
                    f"row {row}: doc id {quote(repeated[0])} is given twice",
                    SOURCE,
                    query=self.query_ids[row],
                )

    def _check_numbers(self, numbers: np.ndarray) -> None:
        """No integer id twice in a row of ``numbers`` (``-1``, no result, may repeat): each row
        sorted, equal neighbours compared; in 32 bits when the ids fit, twice as fast to sort."""
        small = numbers.dtype.itemsize > 4 and len(numbers) and numbers.min() >= -1 and numbers.max() < 2**31
        ordered = np.sort(numbers.astype(np.int32) if small else numbers, axis=1)
        same = (ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] != NO_RESULT)
        rows = np.flatnonzero(same.any(axis=1))
        if len(rows):
            row = int(rows[0])
            doc = ordered[row, 1:][same[row]][0]
            raise InputError(
                f"row {row}: doc id {str(int(doc))!r} is given twice", SOURCE, query=self.query_ids[row]
            )


def frame_from_topk(query_ids: Any, doc_ids: Any, scores: Any, corpus_ids: Any = None) -> TopK:
    """A top k as a run's frame; the scores are checked finite here, and :meth:`TopK.check_distinct`
    checks the pairs. With ``corpus_ids``, ``doc_ids`` are positions in it. Raises
    :class:`InputError` naming the row for mismatched shapes, a NaN or infinite score, a query twice,
    ids that are neither strings nor integers."""
    queries = _as_array(query_ids, "query_ids")
    docs = _as_array(doc_ids, "doc_ids")
    values = _as_array(scores, "scores")
    if queries.ndim != 1:
        raise InputError(f"query_ids must be 1-D (one id per row), got shape {queries.shape}", SOURCE)
    if docs.ndim != 2 or values.ndim != 2:
        raise InputError(
            f"doc_ids and scores must be 2-D (rows × k), got shapes {docs.shape} and {values.shape}", SOURCE
        )
    if docs.shape != values.shape or docs.shape[0] != len(queries):
        raise InputError(
            f"shapes do not match: query_ids {queries.shape}, doc_ids {docs.shape}, scores {values.shape}; "
            "expected (n,), (n, k), (n, k)",
            SOURCE,
        )
    if values.dtype.kind not in "fiu":
        raise InputError(f"scores must be numbers, got an array of {values.dtype}", SOURCE)
    qids = _ids(queries, "query_ids")
    _no_repeated_queries(qids)
    kept = None
    if docs.dtype.kind == "O":
        docs, kept = _object_ids(docs, qids)
    valid = _valid(docs) if kept is None else kept
    if values.dtype.kind == "f":
        # Checked in float64, the precision scores are ranked in: a longdouble beyond a double's range
        # is finite as given and infinite once converted, where two of them would tie.
        given, values = values, as_float64(values)
        finite = np.isfinite(values)
        if not finite[valid].all():
            row, col = np.argwhere(valid & ~finite)[0].tolist()
            what = non_finite_message(given[row, col])
            raise InputError(f"row {row}, column {col}: {what}", SOURCE, query=qids[row])
    lengths = valid.sum(axis=1)
    every = bool(lengths.sum() == valid.size)
    numbers = docs if docs.dtype.kind in "iu" and corpus_ids is None else None
    docno = None
    if numbers is None:
        kept = docs if every else docs[valid]
        if corpus_ids is not None:
            kept = _positions(kept, docs, _as_array(corpus_ids, "corpus_ids"))
        docno = _ids(kept, "doc_ids")
    return TopK(qids, lengths, values, docno, numbers, None if every else valid)


def _as_array(x: Any, what: str) -> np.ndarray:
    """``x`` as a numpy array through ``__array__`` or DLPack; lists and tuples as numpy reads them."""
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "__dlpack__") and not hasattr(x, "__array__"):
        try:
            return np.from_dlpack(x)
        except (BufferError, TypeError, RuntimeError) as e:  # a GPU tensor, say
            raise InputError(
                f"{what}: cannot read it through DLPack ({e}); move it to the CPU first", SOURCE
            ) from None
    try:
        return np.asarray(x)
    except (TypeError, ValueError, RuntimeError) as e:  # ragged lists; a CUDA tensor's __array__
        raise InputError(
            f"{what}: cannot read it as an array ({str(e)[:120]}); move a GPU tensor to the CPU first", SOURCE
        ) from None


def _positions(kept: np.ndarray, docs: np.ndarray, corpus: np.ndarray) -> np.ndarray:
    """The ids at positions ``kept`` (the valid entries of ``docs``) of ``corpus``."""
    if docs.dtype.kind not in "iu":
        raise InputError(
            f"with corpus_ids, doc_ids must be integer positions, got an array of {docs.dtype}", SOURCE
        )
    if corpus.ndim != 1:
        raise InputError(f"corpus_ids must be 1-D, got shape {corpus.shape}", SOURCE)
    beyond = docs >= len(corpus)
    if beyond.any():
        row, col = np.argwhere(beyond)[0].tolist()
        raise InputError(
            f"row {row}, column {col}: position {int(docs[row, col])} is beyond corpus_ids ({len(corpus)} ids)",
            SOURCE,
        )
    return corpus[kept]


def _object_ids(docs: np.ndarray, qids: pl.Series) -> tuple[np.ndarray, np.ndarray | None]:
    """An object array of document ids read as the ids it holds, and which entries hold one when
    that is not every entry of an array's own kind: as it is when every id is a string (the common
    case, one pass in polars); as an integer array when every one is an integer, so that an integer
    means the same in any array (its decimal text, ``-1`` for no result); strings and integers mixed,
    as strings with each integer's text, its ``-1`` entries left out. An entry that is neither, or an
    integer below ``-1``, is named by its row and column."""
    try:
        if not pl.Series("doc_ids", docs.ravel(), dtype=pl.String, strict=True).null_count():
            return docs, None
    except (TypeError, ValueError, pl.exceptions.PolarsError):  # ValueError: UnicodeEncodeError
        pass
    flat = docs.ravel().tolist()
    for i, x in enumerate(flat):
        if not is_id(x) or (not isinstance(x, str) and x < NO_RESULT):
            row, col = np.unravel_index(i, docs.shape)
            raise InputError(f"row {row}, column {col}: {_bad_doc_id(x)}", SOURCE, query=qids[int(row)])
    if not any(isinstance(x, str) for x in flat):
        try:
            return np.array(flat, dtype=np.int64).reshape(docs.shape), None
        except OverflowError:  # beyond 64 bits: their text, as below
            pass
    kept = np.array([isinstance(x, str) or x != NO_RESULT for x in flat]).reshape(docs.shape)
    text = [x if isinstance(x, str) else str(int(x)) for x in flat]
    return np.array(text, dtype=object).reshape(docs.shape), kept


def _bad_doc_id(x: Any) -> str:
    if is_id(x):  # an integer below -1
        return f"doc id {int(x)}; an integer id must be >= 0, or -1 for no result"
    return bad_id("doc ids", x)


def _valid(docs: np.ndarray) -> np.ndarray:
    """Which entries hold a document: all but an integer array's ``-1`` padding."""
    if docs.dtype.kind in "iu":
        valid = docs != NO_RESULT
        if docs.dtype.kind == "i" and (docs < NO_RESULT).any():
            row, col = np.argwhere(docs < NO_RESULT)[0].tolist()
            raise InputError(
                f"row {row}, column {col}: doc id {int(docs[row, col])}; an integer id must be >= 0, or -1 for no result",
                SOURCE,
            )
        return valid
    return np.ones(docs.shape, dtype=bool)


def _ids(arr: np.ndarray, what: str) -> pl.Series:
    """Ids as strings: integers as their decimal text, strings as they are (numpy's fixed-width ones
    through Python objects, which polars reads several times faster)."""
    flat = arr.ravel()
    if flat.size == 0:  # an empty batch: numpy makes [] a float array
        return pl.Series(what, [], dtype=pl.String)
    if flat.dtype.kind in "iu":
        return pl.Series(what, flat).cast(pl.String)
    if flat.dtype.kind == "U":
        flat = flat.astype(object)
    if flat.dtype.kind == "O":
        try:
            out = pl.Series(what, flat, dtype=pl.String, strict=True)
            if not out.null_count():
                return out
        except (TypeError, ValueError, pl.exceptions.PolarsError):  # ValueError: UnicodeEncodeError
            pass
        # integers among them are their decimal text, as an integer array's are; anything else is named
        values = flat.tolist()
        text = ids_as_text(what, values)
        if not isinstance(text, int):
            return text
        where = ", ".join(map(str, np.unravel_index(text, arr.shape)))
        raise InputError(f"{what}[{where}]: {bad_id('ids', values[text])}", SOURCE)
    raise InputError(f"{what} must hold strings or integers, got an array of {arr.dtype}", SOURCE)


def _no_repeated_queries(qids: pl.Series) -> None:
    dup = qids.is_duplicated()
    if dup.any():
        rows = dup.arg_true().to_list()
        first = qids[rows[0]]
        again = [r for r in rows if qids[r] == first]
        raise InputError(f"query {quote(first)} is given twice (rows {again[0]} and {again[1]})", SOURCE)
