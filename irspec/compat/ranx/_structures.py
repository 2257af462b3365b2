"""ranx's ``Qrels`` and ``Run``: plain dicts of dicts kept in ranx's order, read and written in ranx's
formats (dicts, TREC text, gzipped TREC, JSON, LZ4, pandas DataFrames, Parquet).

ranx keeps its data in numba typed dicts, sorted: the queries by id, each query's documents by ranx's
descending sort (:mod:`._order`, ties included), so that ``run.run``, ``run[q]``, ``to_dict`` and the
files written list them in ranx's order. Here the dicts are Python's, in the same order; what irspec
evaluates is made from them on demand (:meth:`Run._ranking`) and kept until the data change.
"""

from __future__ import annotations

import gzip
import json
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from irspec.compat.ranx._order import descending

__all__ = ["Qrels", "Run", "get_file_kind"]

QRELS_KINDS = ("json", "trec", "gz", "parquet")
_RUN_KINDS = ("json", "trec", "lz4", "gz", "parquet")


def get_file_kind(path: str = "run.json", kind: str | None = None, kinds: Iterable[str] = _RUN_KINDS) -> str:
    """ranx's file kind of ``path``: ``kind`` if given, else its extension (``.txt`` is ``trec``,
    ``.parq`` is ``parquet``). A kind outside ``kinds`` is an ``AssertionError``, as in ranx."""
    if kind is None:
        kind = os.path.splitext(path)[1][1:]
        kind = {"txt": "trec", "parq": "parquet"}.get(kind, kind)
    kinds = tuple(kinds)
    if kind not in kinds:
        quoted = ", ".join(f"'{k}'" for k in kinds[:-1]) + f", or '{kinds[-1]}'"
        raise AssertionError(f"Error `kind` must be {quoted}")
    return kind


def _sorted_docs(docs: Mapping[str, Any], cast: type) -> dict[str, Any]:
    """One query's documents in ranx's order (the argsort of the negated values), values cast."""
    ids = list(docs)
    values = [cast(v) for v in docs.values()]
    return {ids[i]: values[i] for i in descending(values)}


def _create_and_sort(data: Mapping[str, Mapping[str, Any]], cast: type) -> dict[str, dict[str, Any]]:
    """ranx's ``create_and_sort``: queries sorted by id, each query's documents by value."""
    return {q: _sorted_docs(data[q], cast) for q in sorted(data)}


def _data_property(doc: str) -> Any:
    """ranx's attribute holding the data (``qrels.qrels``, ``run.run``): read, or replaced whole."""

    def get(self: _Judged) -> dict[str, dict[str, Any]]:
        return self._data

    def put(self: _Judged, value: dict[str, dict[str, Any]]) -> None:
        self._data = value
        self._changed()

    return property(get, put, doc=doc)


class _Judged:
    """What ``Qrels`` and ``Run`` share: a dict of dicts in ranx's order, a version that changes with
    the data (what is made from them is kept per version), and ranx's accessors."""

    _cast: type = float

    def __init__(self, data: Mapping[str, Mapping[str, Any]] | None, name: str | None) -> None:
        self._data: dict[str, dict[str, Any]] = {} if data is None else _create_and_sort(data, self._cast)
        self.sorted = data is not None
        self.name = name
        self._changed()

    def _changed(self) -> None:
        self._version = getattr(self, "_version", 0) + 1
        self._made: dict[Any, Any] = {}

    def _cached(self, key: Any, make: Any) -> Any:
        """``make()``, kept until the data change."""
        made = self._made
        if key not in made:
            made[key] = make()
        return made[key]

    def keys(self) -> Any:
        """The query ids."""
        return self._data.keys()

    def get_query_ids(self) -> list[str]:
        """The query ids, as a list."""
        return list(self._data)

    def get_doc_ids_and_scores(self) -> list[dict[str, Any]]:
        """Each query's ``{document: value}``."""
        return list(self._data.values())

    def sort(self) -> None:
        """Sort the queries by id and each query's documents by value, as ranx does."""
        self._data = _create_and_sort(self._data, self._cast)
        self.sorted = True
        self._changed()

    def add_score(self, q_id: str, doc_id: str, score: Any) -> None:
        """Add a document's value to a query, or change it (the data are no longer sorted)."""
        self._data.setdefault(q_id, {})[doc_id] = self._cast(score)
        self.sorted = False
        self._changed()

    def add(self, q_id: str, doc_ids: list[str], scores: list[Any]) -> None:
        """Set a query's documents and values."""
        self.add_multi([q_id], [doc_ids], [scores])

    def add_multi(self, q_ids: list[str], doc_ids: list[list[str]], scores: list[list[Any]]) -> None:
        """Set several queries' documents and values at once; everything is sorted again, as ranx
        sorts every query after ``add_multi``."""
        for q, docs, values in zip(q_ids, doc_ids, scores, strict=False):
            self._data[q] = dict(zip(docs, (self._cast(v) for v in values), strict=False))
        self.sort()

    def to_typed_list(self) -> list[Any]:
        """ranx's internal form: per query, an array of (hash of the document id, value) rows in ranx's
        order (numpy arrays in a list, where ranx has a numba typed list)."""
        import numpy as np

        if not self.sorted:
            self.sort()
        return [
            np.array([[hash(d), v] for d, v in docs.items()], dtype=np.float64).reshape(-1, 2)
            for docs in self._data.values()
        ]

    def to_dict(self) -> defaultdict[str, dict[str, Any]]:
        """The data as ``{query: {document: value}}`` (a ``defaultdict(dict)``, as ranx returns)."""
        out: defaultdict[str, dict[str, Any]] = defaultdict(dict)
        for q, docs in self._data.items():
            out[q] = dict(docs)
        return out

    def _columns(self) -> dict[str, list[Any]]:
        rows = [(q, d, v) for q, docs in self._data.items() for d, v in docs.items()]
        return {
            "q_id": [r[0] for r in rows],
            "doc_id": [r[1] for r in rows],
            "score": [r[2] for r in rows],
        }

    def to_dataframe(self) -> Any:
        """The data as a pandas DataFrame of columns ``q_id``, ``doc_id`` and ``score``."""
        import pandas as pd

        return pd.DataFrame.from_dict(self._columns())

    @property
    def size(self) -> int:
        """The number of queries."""
        return len(self._data)

    def __getitem__(self, q_id: str) -> dict[str, Any]:
        return dict(self._data[q_id])

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return repr(self._data)

    def __str__(self) -> str:
        return str(self._data)


def _from_frame(
    df: Any, q_id_col: str, doc_id_col: str, score_col: str, dtype: str
) -> dict[str, dict[str, Any]]:
    """``{query: {document: value}}`` of a pandas DataFrame: queries in sorted order (pandas' groupby),
    documents in row order, a document's last value kept at its first place (a dict's update). ranx's
    checks: id columns of dtype ``object``, values of ``dtype`` (an ``AssertionError`` otherwise)."""
    _check_dtype(df, q_id_col, "Query IDs", "O", "object` (string)")
    _check_dtype(df, doc_id_col, "Document IDs", "O", "object` (string)")
    _check_dtype(df, score_col, "scores", dtype, "int" if dtype == "int64" else "float")
    out: dict[str, dict[str, Any]] = {}
    for q, d, s in zip(df[q_id_col].tolist(), df[doc_id_col].tolist(), df[score_col].tolist(), strict=True):
        out.setdefault(q, {})[d] = s
    return {q: out[q] for q in sorted(out)}


def _check_dtype(df: Any, column: str, what: str, expected: Any, name: str) -> None:
    """ranx's check of a column's dtype (an ``AssertionError``); id columns may also be pandas' string
    dtype, which pandas 3 gives strings and ranx 0.3.21 refuses."""
    import pandas as pd

    dtype = df[column].dtype
    if dtype == expected or (expected == "O" and pd.api.types.is_string_dtype(dtype)):
        return
    raise AssertionError(f"DataFrame {what} column dtype must be `{name}`")


def _read_trec(path: str, gzipped: bool, fields: int) -> tuple[dict[str, dict[str, str]], str | None]:
    """A TREC file's ``{query: {document: value text}}`` (ranx's ``line.split()``: a line without exactly
    ``fields`` fields is a ``ValueError``) and the first line's run tag."""
    data: defaultdict[str, dict[str, str]] = defaultdict(dict)
    tag = None
    with gzip.open(path, "rt") if gzipped else open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != fields:
                raise ValueError(
                    f"{path}: expected {fields} fields ({'query Q0 doc rank score tag' if fields == 6 else 'query 0 doc label'}), "
                    f"got {len(parts)}: {line.rstrip()!r}"
                )
            if fields == 6:
                data[parts[0]][parts[2]] = parts[4]
                if tag is None:
                    tag = parts[5]
            else:
                data[parts[0]][parts[2]] = parts[3]
    return data, tag


def _write_json(data: Any, path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(data, indent=2, ensure_ascii=False))


def _read_json(path: str) -> Any:
    with open(path, "rb") as f:
        return json.loads(f.read())


class Qrels(_Judged):
    """ranx's ``Qrels``: relevance judgments ``{query: {document: label}}``, labels cast to ``int``.

    ``Qrels(d, name=None)``, or ``Qrels()`` empty; ``from_dict``, ``from_file`` (TREC text, gzipped TREC,
    JSON), ``from_df`` and ``from_parquet`` (columns ``q_id``, ``doc_id``, ``score``), ``from_ir_datasets``;
    ``to_dict``, ``to_dataframe``, ``save``; ``qrels[q]``, ``len``, ``size``, ``name``.
    """

    _cast = int

    def __init__(self, qrels: Mapping[str, Mapping[str, Any]] | None = None, name: str | None = None) -> None:
        super().__init__(qrels, name)

    qrels = _data_property(
        "The judgments, ``{query: {document: label}}`` in ranx's order (ranx's attribute)."
    )

    def set_relevance_level(self, rel_lvl: int = 1) -> None:
        """Shift every label down by ``rel_lvl - 1``, as ranx does (labels below ``rel_lvl`` become 0 or
        less)."""
        for docs in self._data.values():
            for d in docs:
                docs[d] -= rel_lvl - 1
        self._changed()

    def save(self, path: str = "qrels.json", kind: str | None = None) -> None:
        """Write the judgments to ``path``: JSON, TREC qrels (``.trec``, ``.txt``) or Parquet, the kind
        told by the extension unless ``kind`` is given."""
        kind = get_file_kind(path, kind, QRELS_KINDS)
        if kind == "json":
            _write_json(self.to_dict(), path)
        elif kind == "parquet":
            self.to_dataframe().to_parquet(path, index=False)
        else:
            lines = [f"{q} 0 {d} {v}" for q, docs in self._data.items() for d, v in docs.items()]
            with open(path, "w") as f:
                f.write("\n".join(lines))

    @staticmethod
    def from_dict(d: Mapping[str, Mapping[str, int]]) -> Qrels:
        """``Qrels`` of ``{query: {document: label}}``."""
        return Qrels(d)

    @staticmethod
    def from_file(path: str, kind: str | None = None) -> Qrels:
        """``Qrels`` read from a TREC qrels file (``.trec``, ``.txt``; ``.gz`` gzipped) or JSON."""
        kind = get_file_kind(path, kind, QRELS_KINDS)
        if kind == "json":
            return Qrels(_read_json(path))
        data, _ = _read_trec(path, kind == "gz", 4)
        return Qrels(data)

    @staticmethod
    def from_df(
        df: Any, q_id_col: str = "q_id", doc_id_col: str = "doc_id", score_col: str = "score"
    ) -> Qrels:
        """``Qrels`` of a pandas DataFrame whose id columns hold strings (dtype ``object``) and whose
        label column holds ``int64`` (an ``AssertionError`` otherwise, as in ranx)."""
        return Qrels(_from_frame(df, q_id_col, doc_id_col, score_col, "int64"))

    @staticmethod
    def from_parquet(
        path: str,
        q_id_col: str = "q_id",
        doc_id_col: str = "doc_id",
        score_col: str = "score",
        pd_kwargs: dict[str, Any] | None = None,
    ) -> Qrels:
        """``Qrels`` of a Parquet file (read by pandas; ``pd_kwargs`` are ``pandas.read_parquet``'s)."""
        import pandas as pd

        df = pd.read_parquet(path, **(pd_kwargs or {}))
        return Qrels.from_df(df, q_id_col, doc_id_col, score_col)

    @staticmethod
    def from_ir_datasets(dataset_id: str) -> Qrels:
        """``Qrels`` of an ir_datasets dataset (``irspec[datasets]``), named by its id."""
        import ir_datasets

        qrels = Qrels(ir_datasets.load(dataset_id).qrels_dict())
        qrels.name = dataset_id
        return qrels


class Run(_Judged):
    """ranx's ``Run``: a system's scores ``{query: {document: score}}``, scores cast to ``float``.

    ``Run(d, name=None)``, or ``Run()`` empty; ``from_dict``, ``from_file`` (TREC text, gzipped TREC, JSON,
    LZ4), ``from_df`` and ``from_parquet`` (columns ``q_id``, ``doc_id``, ``score``); ``to_dict``,
    ``to_dataframe``, ``save``, ``make_comparable``; ``run[q]``, ``len``, ``size``, ``name``. ``evaluate``
    keeps each metric's per-query values in ``scores``, their means in ``mean_scores`` (and
    ``std_scores``).
    """

    def __init__(self, run: Mapping[str, Mapping[str, Any]] | None = None, name: str | None = None) -> None:
        super().__init__(run, name)
        if self.sorted:
            self._ranking()
        self.metadata: dict[str, Any] = {}
        self.scores: defaultdict[str, dict[str, Any]] = defaultdict(dict)
        self.mean_scores: dict[str, Any] = {}
        self.std_scores: dict[str, Any] = {}

    run = _data_property("The scores, ``{query: {document: score}}`` in ranx's order (ranx's attribute).")

    def make_comparable(self, qrels: Qrels) -> Run:
        """Give the queries of ``qrels`` the run lacks an empty ranking and drop the queries ``qrels``
        lacks, in place; returns the run."""
        for q in qrels.qrels:
            self._data.setdefault(q, {})
        for q in [q for q in self._data if q not in qrels.qrels]:
            del self._data[q]
        self.sort()
        return self

    def _ranking(self) -> Any:
        """What irspec evaluates: an :class:`irspec.data.Run` of the documents in ranx's order, their
        ranks as scores (ranx's order among tied scores is not irspec's), made when the run is sorted
        (ranx prepares its arrays when a run is made, too) and kept until the data change."""
        if not self.sorted:
            self.sort()
        return self._cached("ranking", lambda: ranked_run(self._data))

    def sort(self) -> None:
        """Sort as ranx does, and prepare what irspec evaluates."""
        super().sort()
        self._ranking()

    def save(self, path: str = "run.json", kind: str | None = None) -> None:
        """Write the run to ``path``: JSON, TREC run (``.trec``, ``.txt``; the tag is the run's name),
        LZ4 (ranx's CBOR in an LZ4 frame: ``lz4`` and ``cbor2`` installed) or Parquet, the kind told by
        the extension unless ``kind`` is given."""
        kind = get_file_kind(path, kind)
        if not self.sorted:
            self.sort()
        if kind == "json":
            _write_json(self.to_dict(), path)
        elif kind == "lz4":
            import cbor2
            import lz4.frame

            with lz4.frame.open(path, mode="wb") as f:
                f.write(lz4.frame.compress(cbor2.dumps(self.to_dict()), compression_level=16))
        elif kind == "parquet":
            self.to_dataframe().to_parquet(path, index=False)
        else:
            lines = [
                f"{q} Q0 {d} {rank} {s} {self.name}"
                for q, docs in self._data.items()
                for rank, (d, s) in enumerate(docs.items(), start=1)
            ]
            with open(path, "w") as f:
                f.write("\n".join(lines))

    @staticmethod
    def from_dict(d: Mapping[str, Mapping[str, float]], name: str | None = None) -> Run:
        """``Run`` of ``{query: {document: score}}``."""
        return Run(d, name)

    @staticmethod
    def from_file(path: str, kind: str | None = None, name: str | None = None) -> Run:
        """``Run`` read from a TREC run file (``.trec``, ``.txt``; ``.gz`` gzipped; named by its first
        line's tag unless ``name`` is given), JSON or LZ4."""
        kind = get_file_kind(path, kind)
        if kind == "json":
            return Run(_read_json(path), name)
        if kind == "lz4":
            import cbor2
            import lz4.frame

            with lz4.frame.open(path, mode="r") as f:
                return Run(cbor2.loads(lz4.frame.decompress(f.read())), name)
        data, tag = _read_trec(path, kind == "gz", 6)
        return Run(data, name if name is not None else tag)

    @staticmethod
    def from_df(
        df: Any,
        q_id_col: str = "q_id",
        doc_id_col: str = "doc_id",
        score_col: str = "score",
        name: str | None = None,
    ) -> Run:
        """``Run`` of a pandas DataFrame whose id columns hold strings (dtype ``object``) and whose score
        column holds ``float64`` (an ``AssertionError`` otherwise, as in ranx)."""
        return Run(_from_frame(df, q_id_col, doc_id_col, score_col, "float64"), name)

    @staticmethod
    def from_parquet(
        path: str,
        q_id_col: str = "q_id",
        doc_id_col: str = "doc_id",
        score_col: str = "score",
        pd_kwargs: dict[str, Any] | None = None,
        name: str | None = None,
    ) -> Run:
        """``Run`` of a Parquet file (read by pandas; ``pd_kwargs`` are ``pandas.read_parquet``'s)."""
        import pandas as pd

        df = pd.read_parquet(path, **(pd_kwargs or {}))
        return Run.from_df(df, q_id_col, doc_id_col, score_col, name)


def ranked_run(data: Mapping[str, Mapping[str, Any]]) -> Any:
    """``data`` (each query's documents in ranx's order) as an :class:`irspec.data.Run` whose scores
    are the negated ranks, so that irspec ranks every query in that order, ties never left to the
    document ids. The frame is made by columns and handed to the ``Run`` without irspec's input checks:
    its scores are finite and a dict holds a document once."""
    import itertools

    import numpy as np
    import polars as pl

    from irspec.data import Run as RankedRun

    ids = [q for q, docs in data.items() if docs]
    lengths = np.fromiter((len(data[q]) for q in ids), dtype=np.int64, count=len(ids))
    rows = int(lengths.sum())
    docnos = list(itertools.chain.from_iterable(data[q] for q in ids))
    try:
        docno = pl.Series("docno", docnos, dtype=pl.String)
    except (TypeError, pl.exceptions.PolarsError):  # ids that are not text (ranx wants text): as text
        docno = pl.Series("docno", [str(d) for d in docnos], dtype=pl.String)
    queries = pl.Series("query", [str(q) for q in ids], dtype=pl.String)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    frame = pl.DataFrame(
        {
            "query": queries.gather(np.repeat(np.arange(len(ids)), lengths)),
            "docno": docno,
            "score": -(np.arange(rows) - starts).astype(np.float64),
            "line": pl.Series("line", [None] * rows, dtype=pl.UInt32),
        }
    )
    return RankedRun(frame, "run", "<ranx Run>", blocks=(queries, lengths))
