"""Qrels and runs given as Python objects: pytrec_eval's ``{qid: {docno: value}}`` dicts, pandas and
polars DataFrames (and polars LazyFrames), and iterables of named tuples (ir_measures' ``Qrel`` and
``ScoredDoc``, ir_datasets' ``TrecQrel`` and ``ScoredDoc``).

Each becomes the frame a TREC file gives (columns query, docno, <value>, and a null line, since
there is no line to name); :mod:`irspec.data` then checks it as it checks a file. Every source is read
the same way: an integer query id or docno is its decimal text (so ``1`` and ``"1"`` as two keys of a
mapping are one query given twice, refused), an id is text UTF-8 can encode (a string holding a lone
surrogate is refused), a label that is an integral float (``1.0``) is that integer and a 64-bit one, a
score any real number that a double holds (a longdouble or an integer is rounded to the nearest double,
so that two equal as doubles tie; a ``Decimal`` is what ``float()`` makes of it, read in Python, never by
polars: :func:`holds_decimals`). Anything else is an :class:`~irspec.errors.InputError` naming the
query and docno (and for a frame the row). A column or a mapping of booleans is refused for labels and
scores (a mask or a flag given for them, most likely); a boolean among numbers is read as its number,
as numpy and polars read it (telling it apart would cost a pass over every value).

A frame's columns are found by name (:data:`CONVENTIONS`): ir_measures' (``query_id, doc_id,
relevance | score``) or PyTerrier's (``qid, docno, label | score``), or those ``columns`` names, a
mapping from irspec's names (``query``, ``docno``, ``label``, ``score``) to the frame's own, as
:func:`irspec.evaluation.spark.evaluate` takes it.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Callable, Iterable, Mapping
from itertools import chain
from operator import methodcaller
from typing import TYPE_CHECKING, Any

import numpy as np

from irspec.data.kinds import INT64, QRELS, RUN, Kind
from irspec.errors import InputError, bad_id, encodable, label_out_of_range, quote
from irspec.lazy import lazy_module

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")

CONVENTIONS: dict[str, dict[str, str]] = {
    "ir_measures": {"query": "query_id", "docno": "doc_id", "label": "relevance", "score": "score"},
    "PyTerrier": {"query": "qid", "docno": "docno", "label": "label", "score": "score"},
}
"""The column names a frame may use, by convention: irspec's name -> the frame's."""

ROLES = ("query", "docno", "label", "score")
"""irspec's names for the columns, the keys of a ``columns`` mapping."""

RUN_COLUMN = "run"
"""The column of a run's frame, Arrow data or Parquet file that may hold its runid (one: several runs
in one are refused, never merged)."""


class MappingFrame:
    """What :func:`frame_from_mapping` reads: the frame, whether its (query, docno) pairs are distinct
    by construction, its rows' blocks of one query each, ``(ids, lengths)``, and the query ids given
    with an empty mapping (no rows, but given). (A plain class: a named tuple's is made when the module
    loads, ~0.1 ms of every process that reads a dict.)"""

    __slots__ = ("blocks", "distinct", "empty", "frame")

    frame: pl.DataFrame
    distinct: bool
    blocks: tuple[pl.Series, np.ndarray]
    empty: tuple[str, ...]

    def __init__(
        self,
        frame: pl.DataFrame,
        distinct: bool,
        blocks: tuple[pl.Series, np.ndarray],
        empty: tuple[str, ...] = (),
    ) -> None:
        self.frame, self.distinct, self.blocks, self.empty = frame, distinct, blocks, empty


def frame_from_mapping(d: Any, kind: Kind, source: str) -> MappingFrame:
    """The frame of ``{qid: {docno: value}}``: string (or integer) ids, integer labels or real scores.
    Its pairs are distinct by construction when every id is a string, since a mapping's keys are
    distinct (an integer ``1`` beside a string ``"1"`` would be one docno twice); each query with a
    document is one block of rows.

    Each entry is touched once in Python, by the C loops of ``itertools.chain`` and polars' list
    reader (the dicts of a large run hold millions of them: a loop written out in Python would cost
    several times more than all the evaluation). The query column is built from the query ids and the
    inner mappings' sizes, so each query id is converted once, not once per document.
    """
    if not isinstance(d, Mapping):
        raise InputError(
            f"expected a mapping {{qid: {{docno: {kind.value}}}}}, got {type(d).__name__}", source
        )
    inner = list(d.values())
    bad = next(
        (i for i, docs in enumerate(inner) if type(docs) is not dict and not isinstance(docs, Mapping)), None
    )
    if bad is not None:
        raise InputError(
            f"expected a mapping docno -> {kind.value}, got {type(inner[bad]).__name__}",
            source,
            query=str(list(d)[bad]),
        )
    lengths = np.fromiter(map(len, inner), np.int64, len(inner))
    keys = list(d)
    qids, strings = _ids_from_objects("query", "query ids", keys, None, source)
    if not strings:
        _no_query_twice(qids, keys, source)
    # indexed, not gather()ed: the same rows, without the query an expression runs (~0.1 ms a dict)
    query = qids[np.repeat(np.arange(len(inner), dtype=np.int64), lengths)] if len(inner) else qids
    docno, all_strings = _ids_from_objects("docno", "docnos", list(chain.from_iterable(inner)), query, source)
    values = list(chain.from_iterable(map(methodcaller("values"), inner)))
    value = _values_from_objects(values, kind, docno, query, source)
    value = _value_column(value, kind, [query, docno], source, rows=False, given=values)
    frame = pl.DataFrame(
        [query.alias("query"), docno.alias("docno"), value.alias(kind.value), no_lines(len(value))]
    )
    answered = pl.Series(lengths > 0)
    blocks = (qids.filter(answered), lengths[answered.to_numpy()])
    return MappingFrame(frame, strings and all_strings, blocks, tuple(qids.filter(~answered).to_list()))


class MappingScores:
    """A run's ``{qid: {docno: score}}`` read for evaluation without its docnos as a column
    (:func:`mapping_scores`): the kernels need only the labels at ranks, and a query's few judged
    documents are found by looking them up in its own dict. (A plain class, as :class:`MappingFrame`.)"""

    __slots__ = ("docs", "dtype", "empty", "encoded", "found", "lengths", "query_ids", "scores", "wanted")

    query_ids: list[str]
    """The queries with at least one document, in the mapping's order."""
    docs: list[dict[Any, Any]]
    """Their dicts, docno -> score (the docnos strings, or bytes when :attr:`encoded`)."""
    lengths: np.ndarray
    """Their sizes."""
    scores: np.ndarray
    """Every score (float64), query after query in that order: the frame's score column."""
    dtype: Any
    """The type the scores were read as before the cast to float64: numpy's (float64 or int64), or
    polars' (Float64 or Int64) for values numpy does not type so."""
    wanted: Mapping[str, list[str]] | None
    """The docnos looked up in each query's dict (by query id), if any."""
    found: list[Any] | None
    """Their scores, query after query (those with a document), ``None`` for a docno the dict lacks."""
    empty: tuple[str, ...]
    """The queries given with an empty dict: no document, but given (see :attr:`irspec.data.Run.empty`)."""
    encoded: bool
    """Whether the dicts' docnos are UTF-8 bytes rather than strings (a run file read as it is:
    :class:`irspec.data.small.TextRun`); docnos looked up in them are encoded first."""

    def __init__(
        self,
        query_ids: list[str],
        docs: list[dict[Any, Any]],
        lengths: np.ndarray,
        scores: np.ndarray,
        dtype: Any,
        wanted: Mapping[str, list[str]] | None = None,
        found: list[Any] | None = None,
        empty: tuple[str, ...] = (),
        encoded: bool = False,
    ) -> None:
        self.query_ids = query_ids
        self.docs = docs
        self.lengths = lengths
        self.scores = scores
        self.dtype = dtype
        self.wanted = wanted
        self.found = found
        self.empty = empty
        self.encoded = encoded

    def converted(self, found: list[Any]) -> np.ndarray:
        """Scores looked up in :attr:`docs` (``None`` for none), as float64 equal to their entries in
        :attr:`scores` (NaN for ``None``): read by the same polars builder (:attr:`dtype`), so an
        integer or a numpy scalar among floats converts as it did there."""
        if isinstance(self.dtype, np.dtype):  # typed by numpy (_plain_scores): each value as a double
            return np.fromiter((math.nan if v is None else v for v in found), np.float64, len(found))
        column = pl.Series(RUN.value, found, dtype=self.dtype, strict=True).cast(pl.Float64)
        return column.to_numpy()  # a null (no such document) becomes NaN


def mapping_scores(d: Any, wanted: Mapping[str, list[str]] | None = None) -> MappingScores | None:
    """The scores of a run given as a ``dict`` (or a subclass) of ``dict`` with string ids, read as
    :func:`frame_from_mapping` reads them (the same score column, the same checks passed), without
    making the docno column; ``None`` for anything that reader would refuse, convert or make
    distinct otherwise (integer ids, other mappings, a value not a number, a score not finite, an
    empty run): that reader then reads it, and says what is wrong.

    ``wanted`` names docnos to look up in each query's dict (the judged ones): their scores, ``None``
    where the dict lacks one, are :attr:`MappingScores.found`. Each query's dict is read whole while it
    is in the processor's cache: its keys checked to be strings (a join, a C loop that refuses anything
    else), its scores taken and the wanted docnos looked up; a pass over every dict for each would
    fetch them from memory three times.
    """
    # The outer mapping is only iterated (a defaultdict, as pytrec_eval's parse_run makes, reads as a
    # dict); each query's is looked up too, so only a dict itself, whose get() is its keys' own.
    if not isinstance(d, dict) or not d:
        return None
    qids = list(d)
    inner = list(d.values())
    if set(map(type, qids)) != {str} or set(map(type, inner)) != {dict}:
        return None
    values: list[Any] = []
    found: list[Any] = []
    take, look, want = values.extend, found.extend, (wanted or {}).get
    join = "".join
    if not encodable(join(qids)):
        return None
    try:
        for q, docs in zip(qids, inner, strict=True):
            # a TypeError at the first docno that is not a string; the text joined is tested for lone
            # surrogates only when it is not ASCII (a flag of the string: no second pass over it)
            if not encodable(join(docs)):
                return None
            take(docs.values())
            if docs:
                look(map(docs.get, want(q, ())))
    except TypeError:
        return None
    lengths = np.fromiter(map(len, inner), np.int64, len(inner))
    plain = _plain_scores(values)
    dtype: Any
    if plain is not None:
        scores, dtype = plain
    elif holds_decimals(values):
        return None  # read in Python, each as float() reads it (polars may panic on one)
    else:
        try:
            column = pl.Series(RUN.value, values, strict=True)  # as _values_from_objects types it
        except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError):  # ValueError: longdouble
            return None
        if column.dtype not in (pl.Float64, pl.Int64) or column.null_count():
            return None
        scores, dtype = column.cast(pl.Float64).to_numpy(), column.dtype
    if not np.isfinite(scores).all():
        return None
    answered = lengths > 0
    empty: tuple[str, ...] = ()
    if not answered.all():
        keep = answered.tolist()
        empty = tuple(q for q, k in zip(qids, keep, strict=True) if not k)
        qids = [q for q, k in zip(qids, keep, strict=True) if k]
        inner = [x for x, k in zip(inner, keep, strict=True) if k]
        lengths = lengths[answered]
    return MappingScores(
        qids, inner, lengths, scores, dtype, wanted, found if wanted is not None else None, empty
    )


def _plain_scores(values: list[Any]) -> tuple[np.ndarray, np.dtype] | None:
    """Scores led by a Python float or int that numpy types as doubles or 64-bit integers (numpy's
    scalars of those and a boolean among them too), as float64 with that type; ``None`` for anything
    else, which polars types (:func:`mapping_scores`). Polars types a list by its first value, and so
    reads the same doubles from such a list (an integer beyond 2**53 rounded to the nearest, as it
    casts one), or refuses it (a float after an integer: the frame reader's numpy then reads it as
    here); numpy spares a small evaluation polars' import (:mod:`irspec.data.small`). A list led by a
    float32 is polars' to type: it reads the doubles after it as float32."""
    if not values or type(values[0]) not in (float, int):
        return None
    try:
        arr = np.array(values)
    except (TypeError, ValueError, OverflowError):
        return None
    if arr.ndim != 1 or arr.dtype not in (np.float64, np.int64):
        return None
    return arr.astype(np.float64, copy=False), arr.dtype


def _values_from_objects(
    values: list[Any], kind: Kind, docnos: pl.Series, queries: pl.Series, source: str
) -> pl.Series:
    """The labels or scores of a mapping as a column; a value that is not a number names its query and
    docno. Scores go straight into a float column (polars refuses strings and ``None`` there); labels
    through numpy, which keeps integers beyond 64 bits apart from floats. A number wider than numpy's
    types (an integer beyond 64 bits, a longdouble) is read in Python, where it is named if it does not
    fit: a label beyond 64 bits, a score beyond a double's range."""
    if kind is not QRELS and not holds_decimals(values):
        try:
            # Typed by the first value, as numpy types a list: all booleans are refused below, a
            # boolean among numbers is read as one (numpy's rule, which dicts were read by before).
            fast = pl.Series(kind.value, values, strict=True)
            if fast.dtype.is_numeric() and fast.dtype != pl.Boolean:
                return fast.cast(pl.Float64)
        except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError):
            pass  # the loop below finds the offender; ValueError: a longdouble first
    try:
        arr = np.asarray(values) if values else np.zeros(0, dtype=np.int64)
    except (OverflowError, ValueError):  # ints beyond 64 bits, ragged nesting
        arr = np.asarray(values, dtype=object)
    if arr.ndim == 1 and arr.dtype.kind in "iuf":
        return pl.Series(kind.value, as_float64(arr) if arr.dtype.kind == "f" else arr)
    i = next((i for i, x in enumerate(values) if not _is_score(x)), None)
    if i is not None:
        raise InputError(_bad_value_message(kind, values[i], docnos[i]), source, query=queries[i])
    if kind is QRELS:
        # Integers stay integers (a label beyond 64 bits is out of range, not rounded), others floats.
        far = next((i for i, x in enumerate(values) if _is_label(x) and not INT64[0] <= x <= INT64[1]), None)
        if far is not None:
            message = f"{label_out_of_range(values[far])} for docno {quote(docnos[far])}"
            raise InputError(message, source, query=queries[far])
        return pl.Series(kind.value, [x if _is_label(x) else _as_float(x) for x in values], strict=False)
    floats = []
    for i, x in enumerate(values):
        try:
            floats.append(_as_float(x))
        except OverflowError:  # an integer beyond a double's range (a longdouble becomes inf instead)
            message = f"{non_finite_message(x)} for docno {quote(docnos[i])}"
            raise InputError(message, source, query=queries[i]) from None
    return pl.Series(kind.value, floats, dtype=pl.Float64)


def _ids_from_objects(
    name: str, what: str, ids: list[Any], queries: pl.Series | None, source: str
) -> tuple[pl.Series, bool]:
    """Strings as they are, integers as their decimal text; anything else (and a string UTF-8 cannot
    encode) names the first offender, with its query (``queries``, one per id, when the ids are
    docnos). Also whether every id was a string already."""
    try:
        if holds_decimals(ids):  # polars' reader may panic on one: refused below, by its position
            raise TypeError
        out = pl.Series(name, ids, dtype=pl.String, strict=True)
        if not out.null_count():  # a None goes in as a null
            return out, True
    except (TypeError, ValueError, pl.exceptions.PolarsError):  # ValueError: UnicodeEncodeError
        pass
    text = ids_as_text(name, ids)
    if isinstance(text, int):
        query = queries[text] if queries is not None else None
        raise InputError(bad_id(what, ids[text]), source, query=query)
    return text, False


def ids_as_text(name: str, ids: list[Any], nulls: bool = False) -> pl.Series | int:
    """Ids that are not all strings (the slow path of every reader of ids) as a column of text: strings
    as they are, integers (not booleans) as their decimal text, ``None`` a null when ``nulls``; or the
    position of the first that is none of these, or a string UTF-8 cannot encode, for the caller to say
    where it stands."""
    bad = next((i for i, x in enumerate(ids) if not (is_id(x) or (nulls and x is None))), None)
    if bad is not None:
        return bad
    return pl.Series(
        name, [x if x is None or isinstance(x, str) else str(int(x)) for x in ids], dtype=pl.String
    )


def _no_query_twice(qids: pl.Series, keys: list[Any], source: str) -> None:
    """No two keys of a mapping that are one query id once integers are read as their decimal text
    (``1`` and ``"1"``): the mapping itself cannot tell, and their documents would be merged."""
    twice = qids.is_duplicated()
    if twice.any():
        rows = twice.arg_true().to_list()
        first = qids[rows[0]]
        same = [keys[r] for r in rows if qids[r] == first]
        raise InputError(
            f"query {quote(first)} is given twice, as {quote(same[0])} and {quote(same[1])} (an integer "
            "id is read as its decimal text)",
            source,
        )


"""The range of a label (and of a 64-bit integer)."""


def is_id(x: Any) -> bool:
    """Whether ``x`` can be an id: a string UTF-8 can encode, or an integer (not a bool)."""
    return (isinstance(x, str) and encodable(x)) or _is_label(x)


def as_float64(arr: np.ndarray) -> np.ndarray:
    """A float array as float64: itself when it is no wider; a wider one (longdouble) rounded, a value
    beyond a double's range becoming infinite there, which the finiteness checks then refuse (by the
    value given)."""
    if arr.dtype.itemsize <= 8:
        return arr
    with np.errstate(over="ignore"):
        return arr.astype(np.float64)


def non_finite_message(value: Any) -> str:
    """Why a score is not a finite double: NaN, infinite, or a finite number beyond a double's range (a
    huge integer, a longdouble), quoted as given."""
    decimal = sys.modules.get("decimal")
    if isinstance(value, numbers.Integral):
        nan, finite = False, True
    elif decimal is not None and isinstance(value, decimal.Decimal):  # numpy cannot ask one
        nan, finite = value.is_nan(), value.is_finite()
    else:
        try:
            nan, finite = bool(np.isnan(value)), bool(np.isfinite(value))  # in the value's own precision
        except (TypeError, OverflowError):  # a Fraction, say: finite, beyond a double
            nan, finite = False, True
    if isinstance(value, np.generic) and value.dtype.itemsize <= 8:
        value = value.item()  # quoted as 1e+300, not np.float64(1e+300); a longdouble keeps its digits
    if nan:
        return "NaN score"
    if finite:
        return f"score {quote(value)} is too large for a double (scores are 64-bit floats, at most 1.8e308)"
    # a text's 1e400 is read as inf: the hint says why a file that holds no "inf" gets this message
    return (
        f"infinite score {quote(value)} (scores must be finite; a number beyond ±1.8e308 reads as infinite)"
    )


def no_lines(n: int) -> pl.Series:
    """The ``line`` column of a source without lines (a dict, a frame, arrays): ``n`` nulls. One null
    repeated by the series itself: ``pl.repeat`` runs a query, a tenth of a millisecond on a small run."""
    return pl.Series("line", [None], dtype=pl.UInt32).new_from_index(0, n)


def _is_label(x: Any) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, (bool, np.bool_))


def _is_score(x: Any) -> bool:
    # a Decimal too, which polars reads as a number when it comes first; its module looked up, not
    # imported (~0.5 ms): a Decimal exists only once decimal is imported
    decimal = sys.modules.get("decimal")
    number = isinstance(x, numbers.Real) or (decimal is not None and isinstance(x, decimal.Decimal))
    return number and not isinstance(x, (bool, np.bool_))


def holds_decimals(values: Iterable[Any]) -> bool:
    """Whether ``values`` holds a :class:`decimal.Decimal` (or a subclass): read in Python, each as
    ``float()`` reads it, never by polars, whose reader of a list of Decimals panics on a NaN or an
    infinity (a ``BaseException``, with a Rust backtrace on standard error) and fails on a number beyond
    its 38 digits (``1e39``, ``1e400``, 41 significant digits), which ``float()`` reads. One look at each
    value's type (a C loop), then at the few types found."""
    decimal = sys.modules.get("decimal")  # a Decimal exists only once decimal is imported
    return decimal is not None and any(issubclass(t, decimal.Decimal) for t in set(map(type, values)))


def _as_float(x: Any) -> float:
    """A number as a double, as ``float()`` reads it; a signalling NaN Decimal (which ``float()``
    refuses) is a NaN too, refused as one by the finiteness checks."""
    try:
        return float(x)
    except ValueError:  # Decimal('sNaN'): "cannot convert signaling NaN to float"
        if getattr(x, "is_nan", lambda: False)():
            return math.nan
        raise


def _bad_value_message(kind: Kind, value: Any, docno: Any) -> str:
    if kind is QRELS:
        return f"label must be an integer, got {quote(value)} for docno {quote(docno)}"
    return f"score must be a number, got {quote(value)} for docno {quote(docno)}"


def is_dataframe(obj: Any) -> bool:
    """Whether ``obj`` is a pandas or polars DataFrame or a polars LazyFrame, told by its type's name so
    that pandas is never imported to ask."""
    t = type(obj)
    module = t.__module__.split(".")[0]
    return (t.__name__ == "DataFrame" and module in ("pandas", "polars")) or (
        t.__name__ == "LazyFrame" and module == "polars"
    )


def is_named_tuples(obj: Any) -> bool:
    """Whether ``obj`` is a list or tuple whose first item is a tuple (a ``Qrel``, ``ScoredDoc``...),
    or another iterable that is neither a string, a path, a mapping, a file nor a frame: a generator of
    them, as ir_datasets' ``qrels_iter()`` gives."""
    if isinstance(obj, (list, tuple)):
        return bool(obj) and isinstance(obj[0], tuple)  # plain tuples get a clear error there
    return (
        isinstance(obj, Iterable)
        and not isinstance(obj, (str, bytes, Mapping))
        and not (hasattr(obj, "read") or hasattr(obj, "__fspath__") or is_dataframe(obj))
    )


_NO_ROW = object()  # what an empty iterable of rows gives for its first item


def named_rows(
    rows: Iterable[Any], source: str, expected: str, hint: Callable[[Any], str] | None = None
) -> tuple[tuple[str, ...], list[Any]]:
    """The field names and the items of ``rows``, named tuples of one kind (no fields for no rows).

    The first item is looked at before the rest are taken, so that an iterable of what are not rows (an
    endless generator too) is refused at once, not after it has filled memory: an
    :class:`~irspec.errors.InputError` of ``source`` saying ``expected`` (what the rows should be) and
    quoting the item short, followed by what ``hint`` says of it, if anything. An item further on with
    other fields is an input error naming its position."""
    items = iter(rows)
    first = next(items, _NO_ROW)
    if first is _NO_ROW:
        return (), []
    fields = getattr(first, "_fields", None)
    if fields is None:
        more = hint(first) if hint is not None else ""
        raise InputError(f"expected {expected}, got {type(first).__name__} {quote(first)}{more}", source)
    found = [first, *items]
    bad = next((i for i, r in enumerate(found) if getattr(r, "_fields", None) != fields), None)
    if bad is not None:
        raise InputError(
            f"item {bad}: expected a tuple with the fields {', '.join(fields)}, got {quote(found[bad])}",
            source,
        )
    return tuple(fields), found


def _several_runs_hint(item: Any) -> str:
    """What an error adds of an item of rows that is a run in its own right (a path, a dict, a frame):
    several runs were meant."""
    if isinstance(item, (str, Mapping)) or hasattr(item, "__fspath__") or is_dataframe(item):
        return "; several runs go in a list, or a mapping {name: run}"
    return ""


def frame_from_rows(
    rows: Iterable[Any], kind: Kind, source: str, columns: Mapping[str, str] | None = None
) -> pl.DataFrame:
    """The frame of named tuples (one per judgment or ranked document), by their field names as a
    frame's columns are found (:func:`frame_from_dataframe`)."""
    hint = _several_runs_hint if kind is RUN else None
    fields, rows = named_rows(rows, source, "named tuples (such as ir_measures' Qrel or ScoredDoc)", hint)
    names = _column_names(list(fields), kind, columns, source, "fields")
    data = dict(zip(fields, zip(*rows, strict=True), strict=True)) if rows else dict.fromkeys(fields, ())
    series = [_series_from_objects(name, list(data[name])) for name in names]
    return _frame_from_columns(series, kind, source)


def _series_from_objects(name: str, values: Any) -> pl.Series:
    # Typed by polars when every value is of one type (the common case); mixed ones (strings and
    # integers, integers and floats, a longdouble, an integer beyond 64 bits, a string UTF-8 cannot
    # encode) stay Python objects, which the id and value readers read one by one and name what they
    # cannot read. Polars' lenient typing would make what it cannot convert a null ("missing score").
    # An array is read as a list: polars keeps an array of objects as objects, None not a null.
    # Decimals too: polars' reader of them panics on a NaN or fails beyond 38 digits (holds_decimals).
    values = values.tolist() if isinstance(values, np.ndarray) else values
    if holds_decimals(values):
        return pl.Series(name, values, dtype=pl.Object)
    try:
        return pl.Series(name, values, strict=True)
    except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError):  # ValueError: a surrogate
        return pl.Series(name, values, dtype=pl.Object)


def frame_from_dataframe(
    df: Any, kind: Kind, source: str, columns: Mapping[str, str] | None = None
) -> pl.DataFrame:
    """The frame of a pandas or polars DataFrame (or a polars LazyFrame): its query, docno and value
    columns, found by name (see the module docstring); other columns are ignored."""
    if not is_dataframe(df):
        raise InputError(f"expected a pandas or polars DataFrame, got {type(df).__name__}", source)
    lazy = isinstance(df, pl.LazyFrame)
    found = df.collect_schema().names() if lazy else [str(c) for c in df.columns]
    names = _column_names(found, kind, columns, source, "columns")
    if lazy:
        df = df.select(names).collect()
    if isinstance(df, pl.DataFrame):
        cols = [df.get_column(c) for c in names]
    else:
        cols = [_series_from_pandas(df[c], c, source) for c in names]
    return _frame_from_columns(cols, kind, source)


def frame_runid(df: Any, source: str) -> str | None:
    """The runid in the ``run`` column of a run's pandas or polars DataFrame or polars LazyFrame
    (:data:`RUN_COLUMN`; ``None`` without one, or with nothing but nulls), as Arrow data and Parquet files
    give theirs: a frame whose column names several runs is refused rather than merged into one."""
    if isinstance(df, pl.LazyFrame):
        if RUN_COLUMN not in df.collect_schema().names():
            return None
        names = df.select(pl.col(RUN_COLUMN).drop_nulls().unique(maintain_order=True)).collect()
        return one_runid(names.get_column(RUN_COLUMN), source, "frame")
    if isinstance(df, pl.DataFrame):
        if RUN_COLUMN not in df.columns:
            return None
        return one_runid(df.get_column(RUN_COLUMN), source, "frame")
    if RUN_COLUMN not in [str(c) for c in df.columns]:
        return None
    # pandas' own unique (in order of appearance, missing values dropped): a few names, not every row
    found = next(df[c] for c in df.columns if str(c) == RUN_COLUMN).dropna().unique()
    return one_runid(pl.Series(RUN_COLUMN, [str(v) for v in found], dtype=pl.String), source, "frame")


def one_runid(s: pl.Series, source: str, holder: str) -> str | None:
    """The one runid in a run's ``run`` column ``s`` (``None`` for none); a ``holder`` (a file, a frame)
    of several runs is an error naming them: merged, their documents would be ranked as one run's."""
    names = s.drop_nulls().cast(pl.String).unique(maintain_order=True)
    if len(names) > 1:
        shown = ", ".join(repr(n) for n in names.head(3)) + (", ..." if len(names) > 3 else "")
        # several runs given to the Python API go in a mapping; files are one run each already
        hint = "" if holder == "file" else "; several runs go in a mapping {name: run}, one run each"
        raise InputError(
            f"column {s.name!r} names {len(names)} runs ({shown}): one run per {holder}{hint}", source
        )
    return names[0] if len(names) else None


def _column_names(
    found: list[str], kind: Kind, columns: Mapping[str, str] | None, source: str, what: str
) -> list[str]:
    """The names of the query, docno and value columns among ``found``: those ``columns`` gives, the
    others by one of :data:`CONVENTIONS` (whichever has a name among ``found``; both is ambiguous)."""
    given = dict(columns or {})
    unknown = sorted(set(given) - set(ROLES))
    if unknown:
        raise InputError(
            f"columns: unknown name{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
            f"irspec's names are {', '.join(ROLES)}",
            source,
        )
    names: list[str | None] = []  # None: no column found for the role (an error below)
    for role in ("query", "docno", kind.value):
        if role in given:
            names.append(given[role])
            continue
        candidates = list(dict.fromkeys(c[role] for c in CONVENTIONS.values() if c[role] in found))
        if len(candidates) > 1:
            raise InputError(
                f"both {candidates[0]!r} and {candidates[1]!r} could be the {_ROLE_TEXT[role]} {what}; "
                f"say which with columns={{{role!r}: ...}}",
                source,
            )
        names.append(candidates[0] if candidates else None)
    missing = [
        role for role, name in zip(("query", "docno", kind.value), names, strict=True) if name not in found
    ]
    if missing:
        accepted = "; ".join(
            f"{', '.join(c[r] for r in ('query', 'docno', kind.value))} ({convention})"
            for convention, c in CONVENTIONS.items()
        )
        shown = ", ".join(quote(c, 20) for c in found[:6]) + (
            f", ... ({len(found)} in all)" if len(found) > 6 else ""
        )
        # irspec's own name of a role is no column name it reads by itself: say so when a column has it
        own = [role for role in missing if role in found and role not in given]
        named = "".join(
            f"; a column {role!r} is read when columns={{{role!r}: {role!r}}} names it" for role in own
        )
        by_columns = f", or names given by columns={{'query': ..., 'docno': ..., {kind.value!r}: ...}}" + (
            f" (given: {given})" if given else ""
        )
        raise InputError(
            f"no {' or '.join(_ROLE_TEXT[r] for r in missing)} {what[:-1]}: the {what} are {shown or 'none'}; "
            f"expected {accepted}{named or by_columns}",
            source,
        )
    return [n for n in names if n is not None]  # all of them: a missing one raised above


_ROLE_TEXT = {"query": "query id", "docno": "docno", "label": "label", "score": "score"}
"""A role as a message names the column it misses: "query" alone read like a column of that name."""


def _frame_from_columns(cols: list[pl.Series], kind: Kind, source: str) -> pl.DataFrame:
    q, d, v = cols
    ids = [_id_column(s, source) for s in (q, d)]
    value = _value_column(v, kind, ids, source)
    return pl.DataFrame(
        [ids[0].alias("query"), ids[1].alias("docno"), value.alias(kind.value), no_lines(len(value))]
    )


def _series_from_pandas(s: Any, name: str, source: str) -> pl.Series:
    if isinstance(s.dtype, np.dtype) and s.dtype.kind in "iufb":
        values = s.to_numpy()
        if values.dtype.kind == "f" and values.dtype.itemsize > 8:  # longdouble, which polars has not
            converted = as_float64(values)
            over = np.flatnonzero(np.isfinite(values) & ~np.isfinite(converted))
            if len(over):
                row = int(over[0])
                raise InputError(
                    f"row {row}: column {name!r} holds {quote(values[row])}, too large for a double (64-bit float)",
                    source,
                )
            values = converted
        return pl.Series(name, values)
    if s.dtype == object:
        # A column of strings (the common object column) is read as it is, several times faster than
        # with pandas' missing-value mapping; anything else in it (NaN, pd.NA, numbers) takes that path.
        try:
            strings = pl.Series(name, s.to_numpy(), strict=True)
            if strings.dtype == pl.String:
                return strings
        except (TypeError, ValueError, ArithmeticError, pl.exceptions.PolarsError):
            pass  # ValueError: UnicodeEncodeError; ArithmeticError: Decimal('sNaN'), which polars compares
    # Object, string or nullable extension columns: go through Python objects, nulls as None.
    given = s.to_numpy() if s.dtype == object else None
    if given is not None and holds_decimals(given):
        # pandas takes Decimal('NaN') for a missing value (and fails asking a signalling one), but it is
        # a NaN given: the Decimals kept as they are, named as what they are
        decimal = sys.modules["decimal"]
        kept = np.fromiter((isinstance(x, decimal.Decimal) for x in given), bool, len(given))
        others = type(s)(np.where(kept, None, given), dtype=object).to_numpy(dtype=object, na_value=None)
        return _series_from_objects(name, np.where(kept, given, others))
    return _series_from_objects(name, s.to_numpy(dtype=object, na_value=None))


def _id_column(s: pl.Series, source: str) -> pl.Series:
    if (
        s.dtype == pl.String
        or (s.dtype == pl.Null and s.len() == 0)  # an empty object column (a pandas frame filtered to no row)
        or s.dtype == pl.Categorical
        or isinstance(s.dtype, pl.Enum)
        or s.dtype.is_integer()
    ):
        out = s.cast(pl.String)
    elif s.dtype == pl.Object:
        out = _ids_from_column(s, source)
    else:
        raise InputError(f"column {s.name!r} must hold strings (or integers), not {s.dtype}", source)
    if out.null_count():
        row = int(out.is_null().arg_true()[0])
        raise InputError(f"missing {s.name} in row {row}", source)
    return out


def _ids_from_column(s: pl.Series, source: str) -> pl.Series:
    """A column of Python objects as ids (strings as they are, integers as their decimal text, as a
    mapping's are), the first other value named by its row: a column mixing strings and integers, or
    holding a string UTF-8 cannot encode, which polars keeps as objects."""
    values = s.to_list()
    out = ids_as_text(s.name, values, nulls=True)
    if isinstance(out, int):
        raise InputError(f"row {out}: column {s.name!r}: {bad_id('ids', values[out])}", source)
    return out


def _value_column(
    s: pl.Series,
    kind: Kind,
    ids: list[pl.Series],
    source: str,
    rows: bool = True,
    given: list[Any] | None = None,
) -> pl.Series:
    """The labels (Int64; integral floats become integers) or scores (Float64) of ``s``; an error names
    the query, the docno and, when ``rows``, the row. ``given``: the values as the input held them (a
    mapping's), quoted in messages rather than the column's (a longdouble or a huge integer made a
    float); with them, scores are checked finite here, so that one beyond a double is named as such."""

    def fail(row: int, message: str) -> None:
        where = f"row {row}: " if rows else ""
        raise InputError(f"{where}{message} for docno {quote(ids[1][row])}", source, query=ids[0][row])

    def shown(row: int) -> Any:
        return given[row] if given is not None else s[row]

    if s.dtype == pl.Null and s.len() == 0:  # an empty object column (a pandas frame with no row)
        return s.cast(pl.Int64 if kind is QRELS else pl.Float64)
    if s.dtype == pl.Object:  # Python objects of several types (named tuples, a pandas object column)
        given = s.to_list()
        missing = next((i for i, x in enumerate(given) if x is None), None)
        if missing is not None:
            fail(missing, f"missing {kind.value}")
        s = _values_from_objects(given, kind, ids[1], ids[0], source)
    if s.null_count():
        fail(int(s.is_null().arg_true()[0]), f"missing {kind.value}")
    if kind is QRELS:
        if s.dtype.is_integer():
            as_int = s.cast(pl.Int64, strict=False)
            if not as_int.null_count():
                return as_int
            row = int(as_int.is_null().arg_true()[0])  # beyond 64 bits (no label was missing: above)
            fail(row, label_out_of_range(shown(row)))
        if s.dtype.is_float():
            whole = s.is_finite() & (s == s.round(0))
            fits = whole & (s >= -(2.0**63)) & (s < 2.0**63)
            if fits.all():
                return s.cast(pl.Int64)
            row = int((~fits).arg_true()[0])
            value = shown(row)
            fail(
                row,
                label_out_of_range(value) if whole[row] else f"label must be an integer, got {quote(value)}",
            )
        raise InputError(f"column {s.name!r} must hold integers, not {s.dtype}", source)
    if s.dtype.is_numeric() and s.dtype != pl.Boolean:
        out = s.cast(pl.Float64)
        if given is not None:
            bad = np.flatnonzero(~np.isfinite(out.to_numpy()))
            if len(bad):
                fail(int(bad[0]), non_finite_message(shown(int(bad[0]))))
        return out
    raise InputError(f"column {s.name!r} must hold numbers, not {s.dtype}", source)
