"""The columns' way of reading a log (irspec_online.columnar) against the records' way it stands in for
(irspec_online.records, record by record): on random batches of good and bad records of every column type
the columns read, the same summaries to the bit, the same problems in the same words, the same first error;
a bad record deep inside a large batch named as the records' way names it; click-model sessions coded in
the same order; the texts' keys and the users' sums merged as they always were."""

from __future__ import annotations

import functools
import math

import pytest

pytest.importorskip("irspec_online")
pytest.importorskip("pyarrow", reason="the columns are Arrow's: pip install 'irspec-online[parquet]'")

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from irspec_online import clickstream, columnar, interleaving, plugin, records
from irspec_online.clickmodels import RANKS, Sessions, Vocabulary
from irspec_online.columnar import Rows
from polars.testing import assert_frame_equal

import irspec
from irspec.testing import registered_plugin

CLICK = pa.struct([("doc", pa.string()), ("rank", pa.int64()), ("dwell", pa.float64())])
ORIGIN = pa.struct(
    [("team", pa.string()), ("rank_a", pa.int64()), ("rank_b", pa.int64()), ("p_a", pa.float64())]
)
SCHEMA = pa.schema([
    ("session", pa.string()), ("user", pa.string()), ("query", pa.string()), ("timestamp", pa.float64()),
    ("results", pa.list_(pa.string())), ("clicks", pa.list_(CLICK)), ("origins", pa.list_(ORIGIN)),
    ("propensities", pa.list_(pa.float64())), ("arm", pa.string()),
])  # fmt: skip
"""The log's columns as the benchmark's Parquet holds them (and an A/B test's arm)."""

# Other types the columns read, each with the values the records' way reads the same
VARIANTS = {
    "session": (pa.int64(), lambda rng, v: None if v is None else int(rng.integers(-5, 50))),
    "user": (pa.large_string(), lambda rng, v: v),
    "timestamp": (pa.timestamp("us", tz="UTC"), lambda rng, v: None if v is None or not math.isfinite(v) else int(v * 1e6)),
    "timestamp_ms": (pa.timestamp("ms"), lambda rng, v: None if v is None or not math.isfinite(v) else int(v * 1e3)),
    "timestamp_int": (pa.int64(), lambda rng, v: None if v is None or not math.isfinite(v) else int(v)),
    "timestamp_f32": (pa.float32(), lambda rng, v: v),
}  # fmt: skip


def random_records(rng: np.random.Generator, n: int, bad: float) -> list[dict]:
    """Records of the benchmark's shape, with a share ``bad`` of them broken (or merely unusual) in one of
    many ways, each of which the columns must either vouch for exactly or hand to the records' way."""
    out = []
    for _ in range(n):
        k = int(rng.integers(0, 6))
        results = [f"d{int(j)}" for j in rng.choice(12, size=k, replace=False)]
        clicks = []
        for j, doc in enumerate(results):
            if rng.random() < 0.35:
                rank = None if rng.random() < 0.3 else j + 1
                dwell = None if rng.random() < 0.3 else float(rng.choice([0.0, 5.5, 30.0, 61.0]))
                clicks.append({"doc": doc, "rank": rank, "dwell": dwell})
        if (
            results and rng.random() < 0.1
        ):  # the same rank twice, a rank past the results, an ad at a result's
            clicks.append({"doc": results[0], "rank": 1, "dwell": 2.0})
            clicks.append({"doc": "elsewhere", "rank": k + 2, "dwell": None})
            clicks.append({"doc": "ad", "rank": k, "dwell": 4.0})
        interleaved = rng.random() < 0.7
        origins = [
            {"team": str(rng.choice(["a", "b"])) if rng.random() < 0.9 else None,
             "rank_a": int(rng.integers(1, 11)) if rng.random() < 0.9 else None,
             "rank_b": int(rng.integers(1, 11)) if rng.random() < 0.9 else None,
             "p_a": float(rng.random()) if rng.random() < 0.3 else None}
            for _ in results
        ] if interleaved else None  # fmt: skip
        rec = {
            "session": f"s{int(rng.integers(0, 40))}",
            "user": None if rng.random() < 0.3 else f"u{int(rng.integers(0, 9))}",
            "query": str(rng.choice(["q1", "q2", "", "q é 会"])),
            "timestamp": 1_714_521_600.0 + float(rng.integers(0, 10**6)) / 8,
            "results": results,
            "clicks": clicks if rng.random() < 0.9 else None,
            "origins": origins,
            "propensities": [float(rng.choice([0.25, 0.5, 1.0])) for _ in results] if rng.random() < 0.3 else None,
            "arm": str(rng.choice(["control", "treatment"])),
        }  # fmt: skip
        if rng.random() < bad:
            _break(rec, rng)
        out.append(rec)
    return out


def _break(rec: dict, rng: np.random.Generator) -> None:
    """One of the ways a record is bad (or unusual) in a column of its type."""
    results, clicks, origins = rec["results"], rec["clicks"] or [], rec["origins"]
    ways = [
        lambda: rec.update(session=""), lambda: rec.update(session=None), lambda: rec.update(query=None),
        lambda: rec.update(timestamp=math.nan), lambda: rec.update(timestamp=math.inf),
        lambda: rec.update(timestamp=None), lambda: rec.update(results=None),
        lambda: rec.update(results=[*results, None]), lambda: rec.update(user=""), lambda: rec.update(arm=None),
        lambda: rec.update(arm=""),
        lambda: rec.update(clicks=[*clicks, None]),
        lambda: rec.update(clicks=[*clicks, {"doc": None, "rank": 1, "dwell": None}]),
        lambda: rec.update(clicks=[*clicks, {"doc": "nowhere", "rank": None, "dwell": None}]),
        lambda: rec.update(clicks=[*clicks, {"doc": "x", "rank": 0, "dwell": None}]),
        lambda: rec.update(clicks=[*clicks, {"doc": "x", "rank": -3, "dwell": None}]),
        lambda: rec.update(clicks=[*clicks, {"doc": "x", "rank": 2**31, "dwell": None}]),
        lambda: rec.update(clicks=[*clicks, {"doc": "x", "rank": 1, "dwell": -1.0}]),
        lambda: rec.update(clicks=[*clicks, {"doc": "x", "rank": 1, "dwell": math.nan}]),
        lambda: rec.update(clicks=[*clicks, {"doc": "x", "rank": 1, "dwell": math.inf}]),
        lambda: rec.update(origins=[*(origins or []), {"team": "a", "rank_a": 1, "rank_b": 1, "p_a": None}]),
        lambda: rec.update(origins=[None] * len(results)) if results else rec.update(origins=[None]),
        lambda: rec.update(origins=[{"team": "c", "rank_a": 1, "rank_b": 1, "p_a": None}] * len(results) or [None]),
        lambda: rec.update(origins=[{"team": "b", "rank_a": 0, "rank_b": 1, "p_a": None}] * len(results) or [None]),
        lambda: rec.update(origins=[{"team": "b", "rank_a": 2, "rank_b": 2**31, "p_a": None}] * len(results) or [None]),
        lambda: rec.update(origins=[{"team": None, "rank_a": 2, "rank_b": 1, "p_a": 1.5}] * len(results) or [None]),
        lambda: rec.update(origins=[{"team": None, "rank_a": 2, "rank_b": 1, "p_a": math.nan}] * len(results) or [None]),
        lambda: rec.update(propensities=[0.0] * len(results) or [0.5]),
        lambda: rec.update(propensities=[1.5] * len(results) or [None]),
        lambda: rec.update(propensities=[*([0.5] * len(results)), 0.5]),
        lambda: rec.update(propensities=[None] * len(results) or [0.5]),
    ]  # fmt: skip
    ways[int(rng.integers(0, len(ways)))]()


def table_of(recs: list[dict], variant: str | None = None, drop: tuple[str, ...] = ()) -> pa.Table:
    """The records as an Arrow table of the log's types, one column of another type the columns read."""
    schema = SCHEMA
    if variant is not None:
        kind, convert = VARIANTS[variant]
        name = variant.split("_")[0]
        rng = np.random.default_rng(len(recs))
        recs = [dict(r, **{name: convert(rng, r[name])}) for r in recs]
        schema = schema.set(schema.get_field_index(name), pa.field(name, kind))
    for name in drop:
        schema = schema.remove(schema.get_field_index(name))
    return pa.Table.from_pylist([{k: r[k] for k in schema.names} for r in recs], schema=schema)


def both(table: pa.Table, fields: dict | None = None, problems: bool = True, ranker=None):
    """The columns' and the records' summaries of a table (numbered from 101), problems and query counts
    (read with a ``ranker``: the ranking a counterfactual estimate estimates)."""
    numbers = np.arange(101, 101 + table.num_rows)
    out = []
    for batch in (Rows(table, numbers), list(zip(numbers.tolist(), table.to_pylist(), strict=True))):
        found: list | None = [] if problems else None
        queries = records.QueryCounts()
        frame = columnar.summarise(
            batch, "log.parquet", "row", problems=found, queries=queries, fields=fields, ranker=ranker
        )
        out.append((frame, found, queries.issued, queries.clicked))
    return out


@functools.cache
def seeded_records(seed: int) -> list[dict]:
    """A seed's 400 random records (15% bad), made once for every column type that reads them: table_of
    copies them, never changes them."""
    return random_records(np.random.default_rng(seed), 400, bad=0.15)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("variant", [None, *VARIANTS])
def test_random_batches_summarise_as_the_records_do(seed, variant):
    table = table_of(seeded_records(seed), variant)
    fields = {"arm": "arm"} if seed % 2 else None
    (fast, fast_problems, fast_issued, fast_clicked), (slow, slow_problems, slow_issued, slow_clicked) = both(
        table, fields
    )
    assert fast_problems == slow_problems and len(slow_problems) > 20
    assert fast_issued == slow_issued and fast_clicked == slow_clicked
    assert_frame_equal(fast, slow, check_exact=True)
    # what the columns vouched for is most of it: the records' way read only the rows they flagged
    read = columnar._read(table, fields or {})
    assert read is not None and read.bad.sum() < 0.3 * table.num_rows


def random_ranker(rng: np.random.Generator) -> records.Ranker:
    """A ranking to estimate of some of the records' queries (their text, or a qid "7" or "8"), each of
    some of their documents; one query ranked empty, one not ranked at all."""
    rankings = {}
    for q in ("q1", "", "7", "8"):
        docs = rng.choice(12, size=int(rng.integers(1, 12)), replace=False)
        rankings[q] = {f"d{int(d)}": r + 1 for r, d in enumerate(docs)}
    rankings["q é 会"] = {}
    return records.Ranker(rankings)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("qid", [None, "text", "integer"])
def test_a_log_read_with_a_ranking_to_estimate_summarises_as_the_records_do(seed, qid):
    """The new ranks of the clicked slots, the matched slots and their weights, the shown documents' new
    ranks, whether each row is ranked: the columns' way gives the records' values to the bit, the rows
    looked up by their query text, or by a qid (text, with nulls the records' way reads as "None"; or
    integers, read as their text); documents shown twice counted once among those shown."""
    rng = np.random.default_rng(200 + seed)
    recs = random_records(rng, 400, bad=0.1)
    for rec in recs[::7]:  # a document shown twice, with its origin and logging probability
        if isinstance(rec["results"], list) and rec["results"] and None not in rec["results"]:
            rec["results"] = [*rec["results"], rec["results"][0]]
            for key in ("origins", "propensities"):
                if isinstance(rec[key], list) and rec[key]:
                    rec[key] = [*rec[key], rec[key][0]]
    table = table_of(recs)
    if qid == "text":
        values = [None if rng.random() < 0.05 else str(rng.choice(["q1", "7", "q é 会", "9"])) for _ in recs]
        table = table.append_column("qid", pa.array(values, pa.string()))
    elif qid == "integer":
        table = table.append_column("qid", pa.array(rng.choice([7, 8, 9], size=len(recs)), pa.int64()))
    ranker = random_ranker(rng)
    (fast, fast_problems, *fast_counts), (slow, slow_problems, *slow_counts) = both(table, ranker=ranker)
    assert fast_problems == slow_problems and fast_counts == slow_counts
    assert_frame_equal(fast, slow, check_exact=True)
    # each kind of row is there: unranked, ranked, ranked with the logger's propensities, and matched slots
    assert set(slow["ranked"].to_list()) == {0, 1, 2} and slow["matched"].list.len().sum() > 0
    read = columnar._read(table, {}, ranker)
    assert read is not None and read.bad.sum() < 0.3 * table.num_rows


@pytest.mark.parametrize("seed", range(4))
def test_the_first_bad_record_is_the_records_ways_first(seed):
    rng = np.random.default_rng(100 + seed)
    recs = random_records(rng, 300, bad=0.02)
    recs[int(rng.integers(0, 300))]["session"] = ""  # one bad record at least
    table = table_of(recs)
    messages = []
    for batch in (Rows(table, np.arange(1, 301)), list(enumerate(table.to_pylist(), start=1))):
        with pytest.raises(irspec.InputError) as info:
            columnar.summarise(batch, "log.parquet", "row")
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_good_batches_go_the_columns_way_alone(monkeypatch):
    table = table_of(random_records(np.random.default_rng(7), 500, bad=0.0))
    slow, _ = both(table)[1][:2]
    monkeypatch.setattr(
        records, "summarise", lambda *a, **k: pytest.fail("a good batch was read record by record")
    )
    assert_frame_equal(
        columnar.summarise(Rows(table, np.arange(101, 601)), "log.parquet", "row"), slow, check_exact=True
    )


def test_columns_of_other_types_go_the_records_way_whole():
    # ISO text timestamps: not read by the columns; the records' way reads them, whole
    recs = random_records(np.random.default_rng(3), 50, bad=0.0)
    table = table_of(recs).set_column(3, "timestamp", pa.array(["2024-05-01T10:00:00Z"] * 50))
    assert columnar._read(table, {}) is None
    (fast, *_), (slow, *_) = both(table)
    assert_frame_equal(fast, slow, check_exact=True)


GOOD = {"session": "s", "user": "u", "query": "q", "timestamp": 1.0, "results": ["d1"],
        "clicks": [{"doc": "d1", "rank": None, "dwell": 3.0}], "origins": None, "propensities": None, "arm": "a"}  # fmt: skip


@functools.cache
def good_table() -> pa.Table:
    """40,000 good records, sessions s0, s1, ..., as a table: made once (most of a case's time), and a bad
    record put in it for each case."""
    return table_of([dict(GOOD, session=f"s{i}") for i in range(40_000)])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"clicks": [{"doc": "d1", "rank": 0, "dwell": None}]}, "clicks[0].rank must be an integer >= 1, got 0"),
        ({"clicks": [{"doc": "d9", "rank": None, "dwell": None}]},
         "clicks[0]: document 'd9' is not among the results shown, and the click has no rank"),
        ({"results": ["d1", "d2"], "clicks": [{"doc": "d2", "rank": 1, "dwell": None}]},
         "clicks[0]: document 'd2' clicked at rank 1, where the results show 'd1' (and 'd2' at rank 2)"),
        ({"timestamp": math.nan}, "timestamp is not a finite number, got nan"),
        ({"propensities": [1e-300]},
         "propensities[0] must be at least 1e-100, got 1e-300: its weight, 1 / p, is squared for the standard error"),
        ({"origins": [{"team": "c", "rank_a": 1, "rank_b": 1, "p_a": None}]},
         "origins[0].team must be \"a\", \"b\" or null, got 'c'"),
        ({"session": ""}, "session must be a non-empty string, got a string"),
    ],
)  # fmt: skip
def test_a_bad_record_deep_inside_a_large_batch_is_named(tmp_path, change, message):
    bad = {**GOOD, "session": "s30000", **change}  # row 30,001: the middle of the second batch of 16,384
    good = good_table()
    table = pa.concat_tables([good.slice(0, 30_000), table_of([bad]), good.slice(30_001)]).combine_chunks()
    path = tmp_path / "log.parquet"
    pq.write_table(table, path, row_group_size=65_536)
    sources = {str(path): path, "<polars DataFrame>": pl.from_arrow(table)}
    readers = {
        "online": lambda source: irspec.evaluate_input(source, "CTR", per_query=False),
        "clickmodel fit": lambda source: clickstream.fit(source, "pbm", iterations=1),
    }
    for where, source in sources.items():
        for name, read in readers.items():
            with registered_plugin(plugin), pytest.raises(irspec.InputError) as info:
                read(source)
            assert str(info.value) == f"{where}: row 30001: {message}", name


# --------------------------------------------------------------------------------------------------
# Click-model sessions


def coded_one_by_one(recs: list[dict], vocabulary: Vocabulary) -> np.ndarray:
    """The pairs' codes as the sessions were once coded: record by record, result by result."""
    pairs = np.full((len(recs), RANKS), -1, dtype=np.int64)
    for i, rec in enumerate(recs):
        for j, doc in enumerate(rec["results"][:RANKS]):
            pairs[i, j] = vocabulary.code(rec["query"], doc)
    return pairs


@pytest.mark.parametrize("seed", range(4))
def test_click_model_sessions_are_the_records_ways(seed):
    rng = np.random.default_rng(200 + seed)
    recs = random_records(rng, 500, bad=0.1)
    for r in recs[::7]:  # longer lists than the model reads
        r["results"] = [f"e{j}" for j in range(14)] if r["results"] is not None else None
        r["origins"] = r["propensities"] = None
    table = table_of(recs, "session" if seed % 2 else None)
    numbers = np.arange(1, len(recs) + 1)
    made = []
    for batch in (Rows(table, numbers), list(zip(numbers.tolist(), table.to_pylist(), strict=True))):
        problems: list = []
        made.append((columnar.sessions(batch, "log.parquet", "row", RANKS, problems), problems))
    (fast, fast_problems), (slow, slow_problems) = made
    assert fast_problems == slow_problems and slow_problems
    np.testing.assert_array_equal(fast.number, slow.number)
    for name in ("query", "session", "docs"):
        assert getattr(fast, name).to_list() == getattr(slow, name).to_list(), name
    np.testing.assert_array_equal(fast.length, slow.length)
    np.testing.assert_array_equal(fast.clicks, slow.clicks)
    # the pairs coded in the order first seen, as record after record did
    kept = [
        r for n, r in zip(numbers.tolist(), table.to_pylist(), strict=True) if n in set(fast.number.tolist())
    ]
    vocabulary, reference = Vocabulary(), Vocabulary()
    sessions = Sessions.of_batch(fast, vocabulary)
    np.testing.assert_array_equal(sessions.pairs, coded_one_by_one(kept, reference))
    assert vocabulary.codes == reference.codes


# --------------------------------------------------------------------------------------------------
# The texts' keys, the users' sums


def test_text_keys_from_arrow_buffers_equal_those_of_the_texts():
    rng = np.random.default_rng(5)
    alphabet = ["a", "b", "é", "会", "🙂", "\x00", " "]
    texts = ["".join(rng.choice(alphabet, size=int(rng.integers(0, 30)))) for _ in range(3000)]
    want = records.text_keys(texts)
    for kind in (pa.string(), pa.large_string()):
        array = pa.array(["pad", *texts, "pad"], type=kind).slice(
            1, len(texts)
        )  # a slice: offsets not from 0
        np.testing.assert_array_equal(columnar._text_keys(array), want)
    # equal texts, equal keys; distinct texts (those of 8 bytes or more too), distinct keys
    assert len(set(want.tolist())) == len(set(texts))
    ids = [f"u{i}" for i in range(200_000)] + [f"session-{i:012d}" for i in range(200_000)]
    assert len(set(records.text_keys(ids).tolist())) == len(ids)
    assert (
        records.text_keys(["ab", "ab\x00", "ab\x00\x00"]).tolist()
        == records.text_keys(["ab", "ab\x00", "ab\x00\x00"]).tolist()
    )
    assert len(set(records.text_keys(["ab", "ab\x00", "ab\x00\x00", ""]).tolist())) == 4


@pytest.mark.parametrize("held", [3, 50, 1 << 21])
def test_key_sums_merged_early_or_late_are_the_sums_at_once(monkeypatch, held):
    # fractional values (probabilistic interleaving's): the sums' bits depend on the order they are added in
    monkeypatch.setattr(interleaving, "USERS_HELD", held)
    rng = np.random.default_rng(9)
    parts = [(rng.integers(0, 400, size=int(rng.integers(0, 300))), None) for _ in range(40)]
    parts = [(k, rng.random(len(k)) * 2 - 1) for k, _ in parts]
    sums = interleaving.KeySums()
    for keys, values in parts:
        sums.add(*interleaving._grouped(keys, values))
    want = interleaving._grouped(*interleaving._joined([interleaving._grouped(k, v) for k, v in parts]))
    for got, expected in zip(sums.table(), want, strict=True):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("holdout", [0.0, 0.3])
def test_the_distinct_sessions_are_the_same_compacted_early_or_late(tmp_path, monkeypatch, holdout):
    recs = random_records(np.random.default_rng(11), 600, bad=0.0)
    pq.write_table(table_of(recs), tmp_path / "log.parquet")
    monkeypatch.setattr(clickstream, "BATCH", 7)  # many batches, each compacting or not
    tables = [
        clickstream.read_sessions(tmp_path / "log.parquet", holdout, chunk_rows=c) for c in (5, 60, 10**6)
    ]
    for train, test in tables[1:]:
        for got, want in ((train, tables[0][0]), (test, tables[0][1])):
            for name in ("pairs", "clicks", "length", "weight"):
                np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
            assert got.vocabulary.codes == want.vocabulary.codes


@pytest.mark.parametrize("by_polars", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_results_showing_a_document_twice_are_found_by_numpy_and_by_polars(monkeypatch, by_polars, seed):
    """Both ways of finding a row whose results show a document twice (numpy below _TWICE_BY_POLARS
    results, polars from it) flag what Python's set finds: short and empty lists, null lists and null
    results, documents from a few so that repeats are common, in a slice of a larger array."""
    rng = np.random.default_rng(seed)
    lists = []
    for _ in range(300):
        if rng.random() < 0.05:
            lists.append(None)
            continue
        docs = [f"d{rng.integers(12)}" if rng.random() > 0.03 else None for _ in range(rng.integers(0, 6))]
        lists.append(docs)
    column = pa.array([["pad"]] * 7 + lists, pa.list_(pa.string())).slice(7)
    want = np.array([docs is not None and len(set(docs)) < len(docs) for docs in lists])
    assert 10 < want.sum() < 290  # repeats and none, both common
    monkeypatch.setattr(columnar, "_TWICE_BY_POLARS", 0 if by_polars else 10**9)
    count, _, items = columnar._list(column)
    np.testing.assert_array_equal(columnar._twice(column, items, count), want)
