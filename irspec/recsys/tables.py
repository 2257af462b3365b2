"""Interaction tables (Parquet files, polars or pandas frames) made the matrices :func:`evaluate_topk` takes.

A table of held-out interactions has a row per (user, item), and optionally a graded label; a table of
recommendations a row per (user, item) with its rank (1 the best) or its score; a table of training
interactions a row per (user, item), repeats allowed. :func:`read_tables` reads them with one user index
and one item index shared by all of them (every user and item of any table, in sorted order), checks
every row (a missing column names the file and the columns it has; a null, a repeated pair, a label
that is not a non-negative integer, a rank below 1 or a score that is not finite names the file and its
0-based row), and keeps the ids: :attr:`Tables.user_ids` names each matrix row, and
``evaluate_topk(..., user_ids=tables.user_ids)`` reports users by their own ids. :func:`evaluate_tables`
does both for several systems' tables at once, over one index (a plan's ``recsys`` section).

Two more tables are read over that index without adding to it (an id no other table has is a user with
no list, or an item no list holds, and counts for nothing): the items' features for ``ILD@k`` (a row per
item, every other column a number, a boolean or a list of numbers) and the items each user expects for
``Serendipity(expected=items)@k`` (a row per (user, item)).

Timestamps and other columns are not read: splitting interactions into training and held-out parts (by
time or otherwise) is the caller's, before the tables are written.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse

from irspec.errors import EvaluationError, InputError, quote
from irspec.frozen import frozen
from irspec.lazy import lazy_module
from irspec.recsys.matrices import EmptyUsers, evaluate_topk
from irspec.recsys.propensity import jain_propensity

if TYPE_CHECKING:
    import polars as pl

    from irspec.evaluation.result import Result
    from irspec.spec.registry import Metric
else:
    pl = lazy_module("polars")

__all__ = ["Columns", "Tables", "evaluate_tables", "read_tables"]

LABELS = ("label", "rating")
"""The columns a held-out table's graded labels are read from when ``Columns.label`` is not given, the
first one the table has; without any of them every interaction is relevant at label 1."""


@frozen
class Columns:
    """The tables' column names: ``user`` and ``item`` (every table), ``label`` (the held-out table's
    graded labels; ``None``: ``label`` or ``rating`` when the table has one, else 1 for every row),
    ``rank`` and ``score`` (the recommendations' order: the rank column when the table has it, else the
    score column, highest first)."""

    user: str = "user"
    item: str = "item"
    label: str | None = None
    rank: str = "rank"
    score: str = "score"


@frozen
class Tables:
    """The tables as :func:`~irspec.recsys.evaluate_topk`'s arguments: ``test`` (users × items CSR of
    labels), ``top_items`` (users × k item indices, best first, ``-1`` padding; ``None`` without a
    recommendations table), ``train`` and ``popularity`` (users × items CSR of 1s, ``None`` without
    the table: for ``exclude=`` and ``popularity=``, often one table given as both), and the ids of the rows (``user_ids``) and columns (``item_ids``), as text."""

    test: scipy.sparse.csr_array
    top_items: np.ndarray | None
    train: scipy.sparse.csr_array | None
    popularity: scipy.sparse.csr_array | None
    user_ids: tuple[str, ...]
    item_ids: tuple[str, ...]
    tops: tuple[np.ndarray, ...] = ()
    """The further recommendations tables' lists (``read_tables(..., tops=...)``: several systems' lists
    over one index, so that they share a catalogue), each as ``top_items`` is, in their order."""
    features: np.ndarray | None = None
    """The items' features (``read_tables(..., features=...)``): an items × features array, a row per
    item of the index (zeros for an item the table lacks), for ``evaluate_topk``'s ``features=``."""
    expected: scipy.sparse.csr_array | None = None
    """The items each user expects (``read_tables(..., expected=...)``): users × items CSR of ``True``,
    for ``evaluate_topk``'s ``expected=``."""


def read_tables(
    test: Any,
    top: Any = None,
    train: Any = None,
    *,
    popularity: Any = None,
    columns: Columns | None = None,
    tops: Sequence[Any] = (),
    features: Any = None,
    expected: Any = None,
) -> Tables:
    """Read the held-out interactions ``test``, the recommendations ``top``, the training interactions
    ``train`` and the interactions whose counts are the items' ``popularity`` (each the path of a Parquet
    file, or a polars or pandas DataFrame) into matrices over one shared index of users and items (every
    id of any table, sorted: numbers numerically, text as text). ``tops``: further recommendations
    tables (other systems' lists, each a path or a frame), read over the same index into
    :attr:`Tables.tops`: systems compared on one catalogue of items and one set of users.

    ``features`` (the items' features: a row per item, its other columns numbers, booleans or lists of
    numbers, each a feature) and ``expected`` (a row per user and item the user expects) are read over
    the index without adding to it: their rows of an id no other table has are passed over.

    User and item ids may be integers or strings, but of one kind across the tables (an id ``"7"`` and an
    id ``7`` are not silently taken as the same user). Raises :class:`~irspec.errors.InputError` naming
    the table (its path, or ``<test>``, ``<top>``, ``<train>`` for a frame) and the row.
    """
    cols = columns or Columns()
    held_out = _frame(test, "test")
    if held_out is None:
        raise InputError("the held-out interactions (test) are required", "<test>")
    given = {"test": held_out}
    for key, table in (("top", top), ("train", train), ("popularity", popularity)):
        found = _frame(table, key)
        if found is not None:
            given[key] = found
    for i, table in enumerate(tops):
        found = _frame(table, f"top {i + 1}")
        if found is None:
            raise InputError("a recommendations table of tops is None", f"<top {i + 1}>")
        given[f"top {i + 1}"] = found
    users, user_index = _index(given, cols.user)
    items, item_index = _index(given, cols.item)
    user_ids, item_ids = _as_text(user_index), _as_text(item_index)
    shape = (len(user_ids), len(item_ids))
    frame, source = given["test"]
    rows, cols_at = users["test"], items["test"]
    _distinct(rows, cols_at, source, cols)
    labels = _labels(frame, source, cols.label)
    test_matrix = scipy.sparse.csr_array((labels, (rows, cols_at)), shape=shape)
    top_items = None
    if "top" in given:
        top_items = _top(given["top"], users["top"], items["top"], shape[0], cols)
    train_matrix = _interactions(given, users, items, "train", shape)
    popular = _interactions(given, users, items, "popularity", shape)
    more = tuple(
        _top(given[key], users[key], items[key], shape[0], cols) for key in given if key.startswith("top ")
    )
    vectors = None if features is None else _features(features, item_index, cols)
    expects = None if expected is None else _expected(expected, user_index, item_index, cols)
    return Tables(test_matrix, top_items, train_matrix, popular, user_ids, item_ids, more, vectors, expects)


def evaluate_tables(
    test: Any,
    tops: Mapping[str, Any],
    metrics: str | Metric | Iterable[str | Metric],
    *,
    exclude: Any = None,
    popularity: Any = None,
    propensity: tuple[float, float] | None = None,
    empty_users: EmptyUsers = "skip",
    relevance_level: int = 1,
    columns: Columns | None = None,
    features: Any = None,
    expected: Any = None,
) -> list[Result]:
    """Several systems' recommendations tables (``tops``: each system's name and its table, a path or a
    frame) evaluated against the held-out interactions ``test``, all read by :func:`read_tables` over one
    index of users and items (one catalogue for every system), each by
    :func:`~irspec.recsys.matrices.evaluate_topk` with the users by their own ids: a result per system,
    in ``tops``' order, named by its key.

    ``exclude`` and ``popularity`` are the tables of training interactions that :func:`evaluate_topk`'s
    arguments of those names take; ``propensity``, Jain et al.'s ``(A, B)``: the propensities
    (:func:`~irspec.recsys.propensity.jain_propensity`) fitted to ``popularity``'s table, else to
    ``exclude``'s: ``N``, the training points, is the users that table lists (pyxclib's rows of the
    training matrix), not the shared index's users, which may include users with held-out items or lists
    and no training interaction; ``features`` and ``expected`` the tables of
    the items' features (``ILD@k``) and of the items each user expects (``Serendipity(expected=items)@k``),
    read by :func:`read_tables`. What ``irspec run`` does with a plan's ``recsys`` section, and
    ``irspec eval --recsys``.
    """
    names = list(tops)
    tables = read_tables(
        test,
        None,
        exclude,
        popularity=popularity,
        columns=columns,
        tops=list(tops.values()),
        features=features,
        expected=expected,
    )
    weights = None
    if propensity is not None:
        fitted = tables.popularity if tables.popularity is not None else tables.train
        if fitted is None:
            raise EvaluationError(
                "the propensity model is fitted to the training interactions: give popularity or exclude"
            )
        # N, the model's training points, is the training table's users, not the shared index's: a user
        # only the held-out or recommendations tables name (cold start) was never trained on. Each user
        # the table lists has a row there, hence an interaction; a user it does not list, none.
        trained = np.flatnonzero(np.diff(fitted.indptr))
        if len(trained) < 3:
            raise EvaluationError(
                f"the propensity model needs at least 3 training users (ln N - 1 > 0, N the users of the "
                f"training table), the table has {len(trained)}"
            )
        weights = jain_propensity(fitted[trained], *propensity)
    return [
        evaluate_topk(
            tables.test,
            top,
            metrics,
            exclude=tables.train,
            propensity=weights,
            popularity=tables.popularity,
            empty_users=empty_users,
            relevance_level=relevance_level,
            name=name,
            user_ids=tables.user_ids,
            features=tables.features,
            expected=tables.expected,
        )
        for name, top in zip(names, tables.tops, strict=True)
    ]


def _interactions(
    given: dict[str, tuple[pl.DataFrame, str]],
    users: dict[str, np.ndarray],
    items: dict[str, np.ndarray],
    key: str,
    shape: tuple[int, int],
) -> scipy.sparse.csr_array | None:
    """A table of training interactions as a matrix of 1s (a repeated interaction is one), or ``None``
    without the table."""
    if key not in given:
        return None
    return _pairs(users[key], items[key], shape, np.int64)


def _pairs(rows: np.ndarray, items: np.ndarray, shape: tuple[int, int], dtype: Any) -> scipy.sparse.csr_array:
    """A matrix holding 1 (of ``dtype``) at each distinct (row, item) pair: a pair repeated is one."""
    ones = np.ones(len(rows), dtype=dtype)
    matrix = scipy.sparse.csr_array((ones, (rows, items)), shape=shape)
    matrix.sum_duplicates()
    matrix.data[:] = 1
    return matrix


def _frame(table: Any, what: str) -> tuple[pl.DataFrame, str] | None:
    """A table as a polars frame and the name its messages give it (its path, or ``<what>``)."""
    if table is None:
        return None
    if isinstance(table, (str, os.PathLike)):
        source = os.fspath(table)
        try:
            return pl.read_parquet(source), source
        except (pl.exceptions.PolarsError, OSError) as e:
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise InputError(f"cannot read as Parquet: {first}", source) from None
    source = f"<{what}>"
    if isinstance(table, pl.LazyFrame):
        return table.collect(), source
    if isinstance(table, pl.DataFrame):
        return table, source
    if type(table).__module__.startswith("pandas"):
        try:
            return pl.from_pandas(table), source
        except (ImportError, pl.exceptions.PolarsError, TypeError, ValueError) as e:  # pyarrow, odd dtypes
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise InputError(f"cannot read the pandas DataFrame: {first}", source) from None
    raise InputError(
        f"{what} must be a Parquet file's path or a polars or pandas DataFrame, got {type(table).__name__}",
        source,
    )


def _shown(frame: pl.DataFrame) -> str:
    """A table's column names for a message: the first eight."""
    names = ", ".join(map(quote, frame.columns[:8])) + (", ..." if frame.width > 8 else "")
    return names or "none"


def _ids(frame: pl.DataFrame, source: str, column: str) -> pl.Series:
    """The column of ids, checked: present, integers or text, no null."""
    if column not in frame.columns:
        raise InputError(f"no column {quote(column)} (columns: {_shown(frame)})", source)
    s = frame.get_column(column)
    if s.dtype in (pl.Categorical, pl.Enum):
        s = s.cast(pl.String)
    if not (s.dtype.is_integer() or s.dtype == pl.String):
        raise InputError(f"column {quote(column)} holds {s.dtype}: ids must be integers or text", source)
    nulls = s.is_null()
    if nulls.any():
        row = int(nulls.arg_max() or 0)
        raise InputError(f"column {quote(column)} is empty (null)", source, row, unit="row")
    return s.cast(pl.Int64) if s.dtype.is_integer() else s


def _index(
    given: dict[str, tuple[pl.DataFrame, str]], column: str
) -> tuple[dict[str, np.ndarray], pl.Series]:
    """Each table's row numbers in the shared index of ``column``'s ids, and the index: every id, sorted."""
    series = {key: _ids(frame, source, column) for key, (frame, source) in given.items()}
    kinds = {key: s.dtype == pl.String for key, s in series.items()}
    if len(set(kinds.values())) > 1:
        text = [given[k][1] for k, v in kinds.items() if v]
        numbers = [given[k][1] for k, v in kinds.items() if not v]
        raise InputError(
            f"column {quote(column)} holds text in {', '.join(text)} and integers in {', '.join(numbers)}: "
            "give every table ids of one kind"
        )
    every = pl.concat(list(series.values())).unique().sort()
    codes = {key: every.search_sorted(s).to_numpy().astype(np.int64) for key, s in series.items()}
    return codes, every


def _as_text(index: pl.Series) -> tuple[str, ...]:
    return tuple(index.cast(pl.String).to_list())


def _in_index(table: tuple[pl.DataFrame, str], column: str, index: pl.Series) -> np.ndarray:
    """The place in ``index`` of each row's id in ``column`` (checked as every table's ids are), ``-1``
    for an id the index lacks; ids of the other kind (text against integers) are an error, as between
    the tables that make the index."""
    frame, source = table
    ids = _ids(frame, source, column)
    if (ids.dtype == pl.String) != (index.dtype == pl.String) and len(index):
        kinds = ("text", "integers") if ids.dtype == pl.String else ("integers", "text")
        raise InputError(
            f"column {quote(column)} holds {kinds[0]} where the other tables hold {kinds[1]}: give every "
            "table ids of one kind",
            source,
        )
    at = np.minimum(index.search_sorted(ids).to_numpy().astype(np.int64), max(len(index) - 1, 0))
    found = (index.gather(at) == ids).to_numpy() if len(index) else np.zeros(len(ids), dtype=bool)
    return np.where(found, at, -1)


def _features(table: Any, items: pl.Series, cols: Columns) -> np.ndarray:
    """The items' features as an items × features array over the index ``items`` (a row of zeros for an
    item the table lacks): every column but the item's is a feature (a number or a boolean), or as many
    as its lists hold (a list of numbers, each row's of one length)."""
    found = _frame(table, "features")
    assert found is not None  # the caller's: a table given
    frame, source = found
    at = _in_index((frame, source), cols.item, items)
    again = ~frame.get_column(cols.item).is_first_distinct()
    if again.any():
        row = int(again.arg_true()[0])
        raise InputError(
            f"{cols.item} {quote(frame[row, cols.item])} repeats: a row an item", source, row, unit="row"
        )
    blocks = [_feature_values(frame, name, source) for name in frame.columns if name != cols.item]
    if not blocks:
        raise InputError(f"no feature: the table has the column {quote(cols.item)} alone", source)
    values = np.hstack(blocks)
    out = np.zeros((len(items), values.shape[1]))
    kept = at >= 0
    out[at[kept]] = values[kept]
    return out


def _feature_values(frame: pl.DataFrame, name: str, source: str) -> np.ndarray:
    """Column ``name`` of a features table as a rows × features array: one feature for a number or a
    boolean, one for each number of a list (every row's list as long as the first's)."""
    s = frame.get_column(name)
    n = len(s)
    inner = getattr(s.dtype, "inner", None)
    if isinstance(s.dtype, (pl.List, pl.Array)) and inner is not None and inner.is_numeric():
        lists = s.cast(pl.List(pl.Float64))
        lengths = lists.list.len().fill_null(-1).to_numpy()
        width = int(lengths[0]) if n else 0
        bad = (lengths != width) | (lengths < 0)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"column {quote(name)}: a list of {width} numbers in every row, as in the first",
                source,
                row,
                unit="row",
            )
        flat = lists.explode() if width else pl.Series([], dtype=pl.Float64)
        values = flat.fill_null(float("nan")).to_numpy().reshape(n, width)
    elif s.dtype == pl.Boolean or s.dtype.is_numeric():
        values = s.cast(pl.Float64).fill_null(float("nan")).to_numpy().reshape(n, 1)
    else:
        raise InputError(
            f"column {quote(name)} holds {s.dtype}: each column but the item's is a feature, a number, a "
            "boolean or a list of numbers (text such as genres one-hot first)",
            source,
        )
    bad_rows = ~np.isfinite(values).all(axis=1)
    if bad_rows.any():
        row = int(np.flatnonzero(bad_rows)[0])
        raise InputError(
            f"column {quote(name)}: a feature that is not a finite number", source, row, unit="row"
        )
    return values


def _expected(table: Any, users: pl.Series, items: pl.Series, cols: Columns) -> scipy.sparse.csr_array:
    """The items each user expects as a users × items CSR of ``True`` over the indexes (a pair repeated
    is one; a pair of a user or an item the index lacks is passed over: no list of that user, or none
    that holds that item)."""
    found = _frame(table, "expected")
    assert found is not None  # the caller's: a table given
    frame, source = found
    rows = _in_index((frame, source), cols.user, users)
    at = _in_index((frame, source), cols.item, items)
    kept = (rows >= 0) & (at >= 0)
    return _pairs(rows[kept], at[kept], (len(users), len(items)), bool)


def _distinct(rows: np.ndarray, items: np.ndarray, source: str, cols: Columns) -> None:
    """No (user, item) twice in a table: the second row of the first pair repeated is named."""
    if not len(rows):
        return
    keys = rows * (int(items.max()) + 1) + items
    order = np.argsort(keys, kind="stable")
    again = np.flatnonzero(keys[order][1:] == keys[order][:-1])
    if len(again):
        first, second = order[again[0]], order[again[0] + 1]
        raise InputError(
            f"{cols.user} and {cols.item} repeat row {int(first)}'s: each pair once",
            source,
            int(second),
            unit="row",
        )


def _labels(frame: pl.DataFrame, source: str, label: str | None) -> np.ndarray:
    """The held-out table's graded labels: integers >= 0 (an integral float is taken), or 1 for every row."""
    if label is None:
        label = next((c for c in LABELS if c in frame.columns), None)
        if label is None:
            return np.ones(frame.height, dtype=np.int64)
    elif label not in frame.columns:
        raise InputError(f"no column {quote(label)} (columns: {_shown(frame)})", source)
    s = frame.get_column(label)
    if s.dtype == pl.Boolean:
        s = s.cast(pl.Int64)
    if not s.dtype.is_numeric():
        raise InputError(f"column {quote(label)} holds {s.dtype}: labels are integers >= 0", source)
    values = s.cast(pl.Float64).fill_null(float("nan")).to_numpy()
    bad = ~(np.isfinite(values) & (values >= 0) & (values == np.round(values)))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"{label} {values[row]}: labels are integers >= 0 (graded relevance; round or binarise ratings "
            "first, or keep integer ratings and give the relevance level, e.g. -l 4)",
            source,
            row,
            unit="row",
        )
    return values.astype(np.int64)


def _top(
    table: tuple[pl.DataFrame, str], users: np.ndarray, items: np.ndarray, n_users: int, cols: Columns
) -> np.ndarray:
    """The recommendations as a users × k array, each user's items by rank ascending (or score
    descending, equal scores to the lower item index), ``-1`` after a short list; k the longest list."""
    frame, source = table
    _distinct(users, items, source, cols)
    if cols.rank in frame.columns:
        column, sign = cols.rank, 1.0
    elif cols.score in frame.columns:
        column, sign = cols.score, -1.0
    else:
        raise InputError(
            f"no column {quote(cols.rank)} or {quote(cols.score)} to order the recommendations "
            f"(columns: {_shown(frame)})",
            source,
        )
    s = frame.get_column(column)
    if not s.dtype.is_numeric():
        raise InputError(f"column {quote(column)} holds {s.dtype}: expected numbers", source)
    values = s.cast(pl.Float64).fill_null(float("nan")).to_numpy()
    bad = ~np.isfinite(values) if sign < 0 else ~((values >= 1) & (values == np.round(values)))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        expected = "a finite number" if sign < 0 else "an integer >= 1 (1 the best)"
        raise InputError(f"{column} {values[row]}: expected {expected}", source, row, unit="row")
    # by user, then rank ascending or score descending, then item index: polars' sort of the three keys,
    # several times numpy's lexsort on a model's lists of every user
    keys = pl.DataFrame({"user": users, "value": sign * values, "item": items})
    order = keys.with_row_index().sort(["user", "value", "item"]).get_column("index").to_numpy()
    if sign > 0:  # two items at one rank of a user's list: no order between them to take
        same = (users[order][1:] == users[order][:-1]) & (values[order][1:] == values[order][:-1])
        if same.any():
            row = int(order[np.flatnonzero(same)[0] + 1])
            raise InputError(
                f"{column} {int(values[row])} is given twice to one user", source, row, unit="row"
            )
    counts = np.bincount(users, minlength=n_users)
    depth = int(counts.max()) if len(counts) else 0
    out = np.full((n_users, depth), -1, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    sorted_users = users[order]
    place = np.arange(len(order)) - starts[sorted_users]
    out[sorted_users, place] = items[order]
    return out
