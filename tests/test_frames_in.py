"""Frames in: the same qrels and run given as TREC text, dicts, pandas and polars DataFrames, polars
LazyFrames, PyTerrier's columns, columns named by ``columns={...}`` and ir_measures' / ir_datasets' named
tuples give identical per-query values, and those values are pytrec_eval's.

The data has numeric query ids (given as integers where a source can hold them: they must read as
their decimal text) and, in frames, labels as floats (``1.0`` must read as 1).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import irspec
from irspec.data import read_qrels, read_run
from irspec.errors import InputError

pd = pytest.importorskip("pandas")
pytrec_eval = pytest.importorskip("pytrec_eval")
ir_measures = pytest.importorskip("ir_measures")

# irspec's name -> pytrec_eval's
MEASURES = {"AP": "map", "nDCG@10": "ndcg_cut_10", "P@5": "P_5", "RR": "recip_rank"}


def _data() -> tuple[list[tuple[int, str, int]], list[tuple[int, str, float]]]:
    """Qrels rows (query, docno, label) and run rows (query, docno, score), with score ties."""
    rng = np.random.default_rng(13)
    qrels, run = [], []
    for q in (3, 10, 301, 7, 42):
        pool = [f"d{i}" for i in rng.choice(60, size=25, replace=False)]
        qrels += [(q, d, int(rng.integers(0, 3))) for d in pool[:15]]
        ranked = list(rng.choice(pool + [f"x{i}" for i in range(20)], size=20, replace=False))
        run += [(q, d, float(rng.choice([3.0, 2.5, 2.0, 1.0]))) for d in ranked]
    return qrels, run


QRELS, RUN = _data()


def _trec(tmp_path):
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {d} {lab}\n" for q, d, lab in QRELS))
    (tmp_path / "run.txt").write_text("".join(f"{q} Q0 {d} {i} {s} r\n" for i, (q, d, s) in enumerate(RUN)))
    return str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")


def _nested(rows, key=str, value=lambda v: v):
    out: dict = {}
    for q, d, v in rows:
        out.setdefault(key(q), {})[d] = value(v)
    return out


def _columns(rows, names):
    q, d, v = zip(*rows, strict=True)
    return dict(zip(names, (list(q), list(d), list(v)), strict=True))


SOURCES = {
    "dict": lambda: (_nested(QRELS), _nested(RUN)),
    "dict, int ids, float labels": lambda: (_nested(QRELS, int, float), _nested(RUN, int)),
    "pandas, ir_measures": lambda: (
        pd.DataFrame(_columns([(q, d, float(v)) for q, d, v in QRELS], ["query_id", "doc_id", "relevance"])),
        pd.DataFrame(_columns(RUN, ["query_id", "doc_id", "score"])),
    ),
    "pandas, PyTerrier": lambda: (
        pd.DataFrame(_columns([(str(q), d, v) for q, d, v in QRELS], ["qid", "docno", "label"])),
        pd.DataFrame(
            _columns(RUN, ["qid", "docno", "score"]) | {"rank": list(range(len(RUN))), "query": "text"}
        ),
    ),
    "polars, ir_measures": lambda: (
        pl.DataFrame(_columns(QRELS, ["query_id", "doc_id", "relevance"])),
        pl.DataFrame(_columns(RUN, ["query_id", "doc_id", "score"])),
    ),
    "polars, PyTerrier, float labels": lambda: (
        pl.DataFrame(_columns([(q, d, float(v)) for q, d, v in QRELS], ["qid", "docno", "label"])),
        pl.DataFrame(_columns(RUN, ["qid", "docno", "score"]) | {"rank": list(range(len(RUN)))}),
    ),
    "LazyFrame": lambda: (
        pl.LazyFrame(_columns(QRELS, ["qid", "docno", "label"])),
        pl.LazyFrame(_columns(RUN, ["query_id", "doc_id", "score"])),
    ),
    "named tuples": lambda: (
        [ir_measures.Qrel(str(q), d, v) for q, d, v in QRELS],
        [ir_measures.ScoredDoc(str(q), d, s) for q, d, s in RUN],
    ),
    "ir_datasets tuples, generators": lambda: (
        (_ir_datasets().TrecQrel(str(q), d, v, "0") for q, d, v in QRELS),
        (_ir_datasets().GenericScoredDoc(str(q), d, s) for q, d, s in RUN),
    ),
}


def _ir_datasets():
    formats = pytest.importorskip("ir_datasets.formats")
    return formats


def _custom(rows, names):
    return pd.DataFrame(_columns(rows, names))


@pytest.fixture(scope="module")
def expected(tmp_path_factory):
    qrels, run = _trec(tmp_path_factory.mktemp("trec"))
    return irspec.evaluate(qrels, run, list(MEASURES)).per_query()


@pytest.mark.parametrize("source", SOURCES)
def test_every_source_gives_the_values_of_the_trec_files(source, expected):
    qrels, run = SOURCES[source]()
    assert irspec.evaluate(qrels, run, list(MEASURES)).per_query() == expected


def test_columns_names_the_columns_for_qrels_and_run_alike(expected):
    qrels = _custom(QRELS, ["topic", "doc", "grade"])
    run = _custom(RUN, ["topic", "doc", "sim"])
    columns = {"query": "topic", "docno": "doc", "label": "grade", "score": "sim"}
    assert irspec.evaluate(qrels, run, list(MEASURES), columns=columns).per_query() == expected
    # Only the names that differ: the others are found by convention (here PyTerrier's docno).
    run = _custom(RUN, ["topic", "docno", "score"])
    assert (
        irspec.evaluate(_nested(QRELS), run, list(MEASURES), columns={"query": "topic"}).per_query()
        == expected
    )
    # Per input, through the readers.
    both = irspec.evaluate(
        read_qrels(qrels, columns=columns),
        read_run(_custom(RUN, ["q", "d", "s"]), columns={"query": "q", "docno": "d", "score": "s"}),
        list(MEASURES),
    )
    assert both.per_query() == expected


def test_several_runs_of_named_tuples_take_the_columns(expected):
    run = [ir_measures.ScoredDoc(str(q), d, s) for q, d, s in RUN]
    many = irspec.evaluate(
        _nested(QRELS), {"a": run, "b": _custom(RUN, ["qid", "docno", "score"])}, list(MEASURES)
    )
    assert [r.per_query() for r in many.values()] == [expected, expected]


def test_the_values_are_pytrec_evals(expected):
    evaluator = pytrec_eval.RelevanceEvaluator(_nested(QRELS), set(MEASURES.values()))
    theirs = evaluator.evaluate(_nested(RUN))
    assert set(theirs) == set(expected) == {"3", "10", "301", "7", "42"}
    for q, values in expected.items():
        for name, value in values.items():
            assert value == pytest.approx(theirs[q][MEASURES[name]], abs=1e-12), (q, name)


# --------------------------------------------------------------------------------------------------
# Errors


def test_a_fractional_label_is_located():
    df = pd.DataFrame({"qid": [1, 1, 2], "docno": ["a", "b", "c"], "label": [1.0, 0.0, 0.5]})
    with pytest.raises(InputError, match=r"row 2: label must be an integer, got 0\.5 for docno 'c'") as e:
        read_qrels(df)
    assert e.value.query == "2"
    with pytest.raises(InputError, match=r"label must be an integer, got 0\.5 for docno 'c'") as e:
        read_qrels({1: {"a": 1.0}, 2: {"c": 0.5}})
    assert e.value.query == "2"
    with pytest.raises(InputError, match=r"row 1: label must be an integer, got 2\.5 for docno 'b'"):
        read_qrels([ir_measures.Qrel("1", "a", 1), ir_measures.Qrel("1", "b", 2.5)])


def test_wrong_columns_name_what_was_found_and_what_is_accepted():
    df = pl.DataFrame({"topic": ["1"], "docid": ["a"], "rel": [1]})
    with pytest.raises(InputError) as e:
        read_qrels(df)
    assert str(e.value) == (
        "<DataFrame>: no query id or docno or label column: the columns are 'topic', 'docid', 'rel'; expected "
        "query_id, doc_id, relevance (ir_measures); qid, docno, label (PyTerrier), or names given by "
        "columns={'query': ..., 'docno': ..., 'label': ...}"
    )
    with pytest.raises(
        InputError,
        match=r"no score column: the columns are 'qid', 'docno', 'label'; expected "
        r"query_id, doc_id, score \(ir_measures\); qid, docno, score \(PyTerrier\)",
    ):
        read_run(pd.DataFrame({"qid": ["1"], "docno": ["a"], "label": [1]}))
    with pytest.raises(InputError, match=r"no query id column: .* \(given: \{'query': 'topik', 'docno'"):
        read_qrels(df, columns={"query": "topik", "docno": "docid", "label": "rel"})
    with pytest.raises(
        InputError, match="columns: unknown name 'doc'; irspec's names are query, docno, label, score"
    ):
        read_qrels(df, columns={"doc": "docid"})
    with pytest.raises(
        InputError,
        match=r"both 'query_id' and 'qid' could be the query id columns; say which with "
        r"columns=\{'query': \.\.\.\}",
    ):
        read_qrels(pl.DataFrame({"query_id": ["1"], "qid": ["2"], "docno": ["a"], "label": [1]}))


def test_fields_of_tuples_are_named_like_columns():
    with pytest.raises(
        InputError, match=r"<rows>: no label field: the fields are 'query_id', 'doc_id', 'score'"
    ):
        read_qrels([ir_measures.ScoredDoc("1", "a", 1.0)])
    with pytest.raises(
        InputError,
        match=r"<rows>: expected named tuples \(such as ir_measures' Qrel or ScoredDoc\), "
        r"got tuple \('1', 'a', 1\)",
    ):
        read_qrels([("1", "a", 1)])
    with pytest.raises(
        InputError, match=r"item 1: expected a tuple with the fields query_id, doc_id, score, got 'x'"
    ):
        read_run([ir_measures.ScoredDoc("1", "a", 1.0), "x"])


def test_a_generator_of_runs_is_one_run_of_rows_and_the_error_says_where_several_go(tmp_path):
    """A generator is one run of rows (ir_datasets' ``scoreddocs_iter()``); a generator of paths, dicts
    or frames was meant as several runs: the error says how to give them, and quotes the item short."""
    path = str(tmp_path / ("a" * 100 + ".run"))  # a long one, quoted short
    for first, shown in ((path, f"str '{path[:20]}"), ({"q1": {"d1": 1.0}}, "dict {'q1': {'d1': 1.0}}")):
        with pytest.raises(InputError) as e:
            irspec.evaluate({"q1": {"d1": 1}}, (r for r in [first, first]), "P@1")
        assert str(e.value).startswith(
            f"<rows>: expected named tuples (such as ir_measures' Qrel or ScoredDoc), got {shown}"
        )
        assert str(e.value).endswith("; several runs go in a list, or a mapping {name: run}")
        assert path not in str(e.value)  # cut
    with pytest.raises(InputError) as e:  # plain tuples, and qrels, have no runs to group
        read_qrels(iter(["qrels.txt"]))
    assert "several runs" not in str(e.value)


def test_rows_that_are_not_rows_are_refused_at_the_first_and_quoted_short():
    """The first item is looked at before the rest are taken: an endless generator of paths is refused
    at once, not read until memory is full (here one that fails when read past its first item); a
    later item that is no row is quoted short."""

    def paths():
        yield "a.run"
        raise AssertionError("read past the first item")

    with pytest.raises(InputError, match=r"got str 'a\.run'; several runs go in a list"):
        read_run(paths())
    with pytest.raises(InputError, match=r"item 1: expected a tuple with the fields .*, got 'xxx") as e:
        read_run([ir_measures.ScoredDoc("1", "a", 1.0), "x" * 10_000])
    assert len(str(e.value)) < 300


def _with_run_column(runids: list[str]) -> dict[str, list]:
    """A run of two documents of query 1 (``b`` above ``a``, the relevant one: AP = 1/2) whose ``run``
    column holds ``runids``."""
    return {"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, 2.0], "run": runids}


def _every_table(columns: dict[str, list]) -> dict[str, object]:
    """The same columns as each kind of table a run may be given as."""
    pa = pytest.importorskip("pyarrow")
    frame = pl.DataFrame(columns)
    return {
        "pandas": pd.DataFrame(columns),
        "polars": frame,
        "LazyFrame": frame.lazy(),
        "Arrow": pa.table(columns),
    }


@pytest.mark.parametrize("kind", ["pandas", "polars", "LazyFrame", "Arrow"])
def test_a_run_column_of_several_runs_is_refused_in_every_table(kind):
    """A frame whose ``run`` column names two runs is refused, as Arrow data and a Parquet file were:
    pandas and polars frames merged the two runs' documents into one ranking, silently."""
    table = _every_table(_with_run_column(["x", "y"]))[kind]
    holder = "table" if kind == "Arrow" else "frame"
    with pytest.raises(InputError, match=rf"column 'run' names 2 runs \('x', 'y'\): one run per {holder}"):
        irspec.evaluate({"1": {"a": 1}}, table, "AP")
    with pytest.raises(InputError, match="names 2 runs"):
        read_run(table)


@pytest.mark.parametrize("kind", ["pandas", "polars", "LazyFrame", "Arrow"])
def test_a_run_column_names_the_run_in_every_table(kind):
    """One runid in the ``run`` column names the run and is its runid, whatever the table (a frame was
    named ``run`` and its runid dropped, Arrow data named by it); without one, the run is ``run``."""
    tables = _every_table(_with_run_column(["dense", "dense"]))
    result = irspec.evaluate({"1": {"a": 1}}, tables[kind], "AP")
    assert (result.run_name, result.runid, result.aggregate()) == ("dense", "dense", {"AP": 0.5})
    unnamed = _every_table({k: v for k, v in _with_run_column([]).items() if k != "run"})[kind]
    assert (read_run(unnamed).name, read_run(unnamed).runid) == ("run", None)
    if kind != "Arrow":
        assert irspec.data.Run.from_frame(tables[kind], "mine").name == "mine"  # a name given wins


def test_a_pandas_frame_and_arrow_data_of_one_run_are_named_alike():
    """The hunter's case: the same data as a pandas frame and as an Arrow table were named ``run`` and
    ``dense``; both are ``dense`` now, told apart as two runs of one name are."""
    pa = pytest.importorskip("pyarrow")
    one = pd.DataFrame(_with_run_column(["dense", "dense"]))
    assert list(irspec.evaluate({"1": {"a": 1}}, [one, pa.Table.from_pandas(one)], "AP")) == [
        "dense",
        "dense (2)",
    ]
