"""irspec-online on every form of log but Spark (test_spark.py): the same values from JSON Lines, Parquet,
polars (eager and lazy) and pandas, whatever the batch size, equal to the definitions computed record by
record; and a located error for every kind of malformed input."""

from __future__ import annotations

import json
import math

import pytest

pytest.importorskip("irspec_online")
pytest.importorskip(
    "pyarrow", reason="Parquet and pandas logs need pyarrow: pip install 'irspec-online[parquet]'"
)
pytest.importorskip("pandas", reason="pandas logs need pandas")

import numpy as np
import pandas as pd
import polars as pl
from irspec_online import plugin
from irspec_online.log import read_log
from online_logs import SPECS, expected, polars_frame, random_log, write_jsonl

import irspec
from irspec.testing import registered_plugin


@pytest.fixture(autouse=True)
def online():
    with registered_plugin(plugin) as registry:
        yield registry


def same(a: irspec.Result, b: irspec.Result) -> None:
    """Two results with the same rows, metrics and values, NaN where NaN."""
    assert a.query_ids == b.query_ids
    assert [str(m) for m in a.metrics] == [str(m) for m in b.metrics]
    np.testing.assert_array_equal(a.values, b.values)  # NaN == NaN here, and no tolerance
    assert a.aggregate() == b.aggregate()


def forms(records, tmp_path):
    """The records as every local form: JSON Lines, Parquet, polars eager and lazy, pandas."""
    frame = polars_frame(records)
    frame.write_parquet(tmp_path / "log.parquet", row_group_size=17)
    return {
        "jsonl": write_jsonl(records, tmp_path / "log.jsonl"),
        "parquet": tmp_path / "log.parquet",
        "polars": frame,
        "lazy": pl.scan_parquet(tmp_path / "log.parquet"),
        "pandas": pd.DataFrame(records),
        "records": records,
    }


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_every_form_gives_the_same_values_and_they_are_the_definitions(tmp_path, seed):
    records = random_log(seed)
    results = {
        name: irspec.evaluate_input(source, SPECS) for name, source in forms(records, tmp_path).items()
    }
    for name, res in results.items():
        assert res.aggregate() == pytest.approx(expected(records), rel=1e-15), name
        same(results["jsonl"], res)


def test_the_example_in_every_form_by_hand(tmp_path):
    # The example log of test_online.py, whose values are worked out there, as Parquet and frames.
    with open(__file__.replace("tests/test_forms.py", "examples/interactions.jsonl")) as f:
        example = [json.loads(line) for line in f]
    for r in example:
        r["timestamp"] = irspec_online_time(r["timestamp"])
        r["clicks"] = [
            {"doc": c["doc"], "rank": c.get("rank"), "dwell": c.get("dwell")} for c in r.get("clicks", [])
        ]
    for name, source in forms(example, tmp_path).items():
        res = irspec.evaluate_input(source, "CTR CTR@1 ZRR Abandonment SessionSuccess SessionSuccess(10)")
        assert res.query_ids == ("s1:1", "s1:2", "s2:1", "s2:2", "s3:1", "s4:1"), name
        assert res.aggregate() == {
            "CTR": 3 / 6, "CTR@1": 1 / 6, "ZRR": 1 / 6, "Abandonment": 1 / 4, "SessionSuccess": 2 / 4,
            "SessionSuccess(dwell=10)": 3 / 4,
        }, name  # fmt: skip


def irspec_online_time(value) -> float:
    """ISO text or Unix seconds as Unix seconds (the example mixes both; a frame column holds one type)."""
    from datetime import datetime

    return (
        float(value)
        if not isinstance(value, str)
        else datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    )


@pytest.mark.parametrize("batch_size", [1, 3, 64])
def test_small_batches_give_the_values_of_one_batch(tmp_path, batch_size):
    records = random_log(21, n=150)
    for name, source in forms(records, tmp_path).items():
        whole, batched = read_log(source), read_log(source, batch_size=batch_size)
        assert whole.ids == batched.ids, name
        for field in ("session", "time", "n_results", "line", "first_click", "best_dwell"):
            np.testing.assert_array_equal(
                getattr(whole, field), getattr(batched, field), err_msg=f"{name} {field}"
            )


def test_a_lazy_frame_is_read_in_batches_not_collected(tmp_path, monkeypatch):
    # The reader must never collect a LazyFrame whole: that is what would hold a larger-than-memory log.
    records = random_log(5, n=40)
    polars_frame(records).write_parquet(tmp_path / "log.parquet")
    monkeypatch.setattr(
        pl.LazyFrame, "collect", lambda *a, **k: pytest.fail("the LazyFrame was collected whole")
    )
    sizes = []
    # each chunk reaches the reader as Arrow columns (or as records, without pyarrow)
    for way in ("to_dicts", "to_arrow"):
        real = getattr(pl.DataFrame, way)
        monkeypatch.setattr(
            pl.DataFrame,
            way,
            lambda self, *a, real=real, **k: sizes.append(self.height) or real(self, *a, **k),
        )
    read_log(pl.scan_parquet(tmp_path / "log.parquet"), batch_size=7)
    assert sum(sizes) == 41 and max(sizes) <= 7


def test_timestamps_as_datetimes_equal_unix_seconds(tmp_path):
    records = random_log(8, n=60)
    seconds = polars_frame(records)
    moments = seconds.with_columns(
        pl.from_epoch(pl.col("timestamp") * 1000, time_unit="ms").alias("timestamp")
    )
    aware = moments.with_columns(
        pl.col("timestamp").dt.replace_time_zone("UTC").dt.convert_time_zone("Asia/Kolkata")
    )
    aware.write_parquet(tmp_path / "aware.parquet")
    base = irspec.evaluate_input(seconds, SPECS)
    for source in (moments, aware, tmp_path / "aware.parquet", moments.to_pandas()):
        same(base, irspec.evaluate_input(source, SPECS))


def test_a_parquet_dataset_directory_is_one_log(tmp_path):
    records = random_log(9, n=90)
    (tmp_path / "lake").mkdir()
    polars_frame(records[:50]).write_parquet(tmp_path / "lake" / "part-0.parquet")
    polars_frame(records[50:]).write_parquet(tmp_path / "lake" / "part-1.parquet")
    res = irspec.evaluate_input(tmp_path / "lake", SPECS)
    assert res.run_name == "lake"
    assert res.aggregate() == pytest.approx(expected(records), rel=1e-15)


def test_a_plan_reads_a_parquet_log(tmp_path):
    from irspec.plan import load_plan, run_plan

    records = random_log(10, n=50)
    polars_frame(records).write_parquet(tmp_path / "clicks.parquet")
    (tmp_path / "plan.yaml").write_text(
        "log: clicks.parquet\nmetrics: CTR, Abandonment, QueriesPer(hour)\n", encoding="utf-8"
    )
    (res,) = run_plan(load_plan(tmp_path / "plan.yaml")).inputs
    assert res.run_name == "clicks"
    want = expected(records)
    assert res.aggregate() == pytest.approx(
        {k: want[k] for k in ("CTR", "Abandonment", "QueriesPer(unit=hour)")}, rel=1e-15
    )


# --------------------------------------------------------------------------------------------------
# Malformed input: located errors


GOOD = {"session": "s", "query": "q", "timestamp": 1.0, "results": ["d1"], "clicks": []}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"timestamp": math.nan}, "timestamp is not a finite number"),
        ({"timestamp": math.inf}, "timestamp is not a finite number"),
        ({"session": ""}, "session must be a non-empty string"),
        ({"session": None}, "session must be a non-empty string, got null"),
        ({"results": None}, "results must be a list"),
        ({"results": ["d1", "d2", "d1"], "clicks": [{"doc": "d1", "rank": 3, "dwell": None}]},
         "results show 'd1' twice (ranks 1 and 3)"),
        ({"clicks": [{"doc": "d9", "rank": None, "dwell": None}]}, "'d9' is not among the results shown"),
        ({"clicks": [{"doc": "d1", "rank": 0, "dwell": None}]}, "rank must be an integer >= 1"),
        ({"results": ["d1", "d2"], "clicks": [{"doc": "d1", "rank": 2, "dwell": None}]},
         "document 'd1' clicked at rank 2, where the results show 'd2' (and 'd1' at rank 1)"),
        # below the list's end, a shown document's click was taken for an ad's
        ({"results": ["d1", "d2"], "clicks": [{"doc": "d1", "rank": 3, "dwell": None}]},
         "document 'd1' clicked at rank 3, below the 2 results (they show 'd1' at rank 1)"),
        ({"clicks": [{"doc": "d1", "rank": None, "dwell": -1.0}]}, "dwell must be a number of seconds >= 0"),
        ({"clicks": [{"doc": "d1", "rank": None, "dwell": math.nan}]}, "dwell must be a number of seconds >= 0"),
    ],
)  # fmt: skip
def test_a_bad_row_of_a_frame_or_parquet_names_the_row(tmp_path, change, message):
    rows = [GOOD, GOOD, dict(GOOD, **change)]
    frame = polars_frame(rows)
    frame.write_parquet(tmp_path / "bad.parquet", row_group_size=2)
    sources = {
        "<polars DataFrame>": frame,
        "<polars LazyFrame>": frame.lazy(),
        str(tmp_path / "bad.parquet"): tmp_path / "bad.parquet",
    }
    if "nan" not in repr(change):  # pandas's NaN is its missing value: covered below
        sources["<pandas DataFrame>"] = pd.DataFrame(rows)
    for where, source in sources.items():
        with pytest.raises(irspec.InputError) as info:
            irspec.evaluate_input(source, "CTR")
        assert str(info.value).startswith(f"{where}: row 3: "), str(info.value)
        assert message in str(info.value)


def test_pandas_nan_is_a_missing_value():
    # pandas marks a missing value NaN: a NaN timestamp is a missing one, a NaN dwell time an unknown one.
    frame = pd.DataFrame([GOOD, dict(GOOD, timestamp=math.nan)])
    with pytest.raises(
        irspec.InputError, match=r"^<pandas DataFrame>: row 2: timestamp must be .*, got null$"
    ):
        irspec.evaluate_input(frame, "CTR")
    unknown = pd.DataFrame([dict(GOOD, clicks=[{"doc": "d1", "dwell": math.nan}])])
    assert irspec.evaluate_input(unknown, "CTR SessionSuccess(0)").aggregate() == {
        "CTR": 1.0,
        "SessionSuccess(dwell=0)": 0.0,
    }


def test_a_nan_timestamp_in_json_lines_names_the_line(tmp_path):
    path = tmp_path / "nan.jsonl"
    path.write_text(
        json.dumps(GOOD) + "\n" + json.dumps(dict(GOOD, timestamp=math.nan)) + "\n", encoding="utf-8"
    )
    assert "NaN" in path.read_text()  # Python writes (and reads) JSON's non-standard NaN
    with pytest.raises(irspec.InputError, match=rf"^{path}:2: timestamp is not a finite number, got nan$"):
        irspec.evaluate_input(path, "CTR")


def test_bad_bytes_and_unicode_name_the_line(tmp_path):
    path = tmp_path / "bytes.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b"\n" + b'{"session": "\xff"}\n')
    with pytest.raises(irspec.InputError, match=rf"^{path}:2: not UTF-8 text"):
        irspec.evaluate_input(path, "CTR")
    path.write_text(
        json.dumps(GOOD) + "\n" + json.dumps(dict(GOOD, session="\ud800")) + "\n", encoding="utf-8"
    )
    with pytest.raises(irspec.InputError, match=rf"^{path}:2: session '\\ud800' is not valid Unicode"):
        irspec.evaluate_input(path, "CTR")


def test_a_cut_gzip_log_is_an_input_error(tmp_path):
    import gzip

    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(gzip.compress((json.dumps(GOOD) + "\n").encode() * 5000)[:200])
    with pytest.raises(irspec.InputError, match="not a valid gzip file"):
        irspec.evaluate_input(path, "CTR")


def test_a_line_too_long_to_be_a_record_is_refused_before_it_is_held_whole(tmp_path):
    import gzip

    from irspec.lines import MAX_LINE

    data = json.dumps(GOOD).encode() + b"\n" + bytes(3 * MAX_LINE) + b"\n"
    plain, packed = tmp_path / "garbage.jsonl", tmp_path / "garbage.jsonl.gz"
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data))
    for path in (plain, packed):
        with pytest.raises(irspec.InputError, match=rf"^{path}:2: line longer than 1 MiB") as info:
            irspec.evaluate_input(path, "CTR")
        assert len(str(info.value)) < 300


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"timestamp": "y" * 100_000}, "is not ISO 8601"),
        ({"clicks": [{"doc": "y" * 100_000}]}, "is not among the results shown"),
        ({"clicks": [{"doc": "d1", "rank": "y" * 100_000}]}, "rank must be an integer"),
        ({"clicks": [{"doc": "d1", "dwell": "y" * 100_000}]}, "dwell must be a number"),
    ],
)
def test_a_long_value_is_quoted_short(tmp_path, change, reason):
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(dict(GOOD, **change)) + "\n", encoding="utf-8")
    with pytest.raises(irspec.InputError, match=reason) as info:
        irspec.evaluate_input(path, "CTR")
    assert len(str(info.value)) < 300 and "yyy..." in str(info.value)


def test_an_endless_standard_input_is_refused_in_bounded_memory():
    import os
    import subprocess
    import sys

    code = (
        "import resource\n"  # a regression stops at 2 GB of address space, not the machine's memory
        "resource.setrlimit(resource.RLIMIT_AS, (2_000_000_000, 2_000_000_000))\n"
        "import irspec\n"
        "from irspec_online.records import jsonl_records\n"  # the reader itself: no plugin to load
        "try:\n    list(jsonl_records('-'))\nexcept irspec.InputError as e:\n    print(e)"
    )
    with open("/dev/zero", "rb") as zero:
        done = subprocess.run([sys.executable, "-c", code], check=False, stdin=zero, capture_output=True, text=True,
                              timeout=60, env=dict(os.environ))  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("-:1: line longer than 1 MiB") and len(done.stdout) < 300


@pytest.mark.parametrize("form", ["polars", "pandas", "parquet"])
def test_a_missing_column_is_named(tmp_path, form):
    frame = polars_frame([GOOD]).drop("results")
    frame.write_parquet(tmp_path / "cols.parquet")
    source = {"polars": frame, "pandas": frame.to_pandas(), "parquet": tmp_path / "cols.parquet"}[form]
    with pytest.raises(
        irspec.InputError,
        match="missing required column 'results' \\(the columns are clicks, query, session, timestamp\\)",
    ):
        irspec.evaluate_input(source, "CTR")


def test_a_column_of_the_wrong_type_names_the_row(tmp_path):
    frame = polars_frame([GOOD, GOOD]).with_columns(
        pl.Series("timestamp", [1.0, None]), pl.Series("query", ["q", None])
    )
    with pytest.raises(
        irspec.InputError, match=r"^<polars DataFrame>: row 2: query must be a string, got null$"
    ):
        irspec.evaluate_input(frame, "CTR")
    frame = polars_frame([GOOD]).with_columns(pl.lit(True).alias("timestamp"))
    with pytest.raises(
        irspec.InputError, match=r"row 1: timestamp must be Unix seconds or ISO 8601 text, got a boolean"
    ):
        irspec.evaluate_input(frame, "CTR")
    mixed = pd.DataFrame(
        {"session": ["s", "t"], "query": ["q", "q"], "timestamp": [1.0, "noon"], "results": [[], []]}
    )
    with pytest.raises(irspec.InputError, match=r"^<pandas DataFrame>: rows 1-2: cannot read the columns"):
        irspec.evaluate_input(mixed, "CTR")
    # an object column's integer past 64 bits: Arrow's OverflowError
    huge = pd.DataFrame({"session": ["s"], "query": ["q"], "timestamp": pd.Series([10**400], dtype=object),
                         "results": [["d1"]]})  # fmt: skip
    with pytest.raises(irspec.InputError, match=r"^<pandas DataFrame>: rows 1-1: cannot read the columns"):
        irspec.evaluate_input(huge, "CTR")


def test_an_unreadable_or_missing_parquet_log_is_an_input_error(tmp_path):
    (tmp_path / "text.parquet").write_text("not parquet", encoding="utf-8")
    for name, message in (("text.parquet", "not a Parquet file"), ("none.parquet", "no such file")):
        with pytest.raises(irspec.InputError, match=f"^{tmp_path / name}: {message}"):
            irspec.evaluate_input(tmp_path / name, "CTR")
