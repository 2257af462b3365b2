"""Logs larger than memory (irspec_online.streaming): the streamed pass gives the in-memory evaluation's
means to the bit, its tables and its A/B test, from every form of log, with batches, chunks and
partitions small enough to split every session over several of each; the temporary files go; a
per-query-issue evaluation over the memory budget is refused."""

from __future__ import annotations

import dataclasses
import glob
import math
import os
import tempfile

import pytest

pytest.importorskip(
    "pyarrow", reason="Parquet and pandas logs need pyarrow: pip install 'irspec-online[parquet]'"
)

import polars as pl
from irspec_online import plugin
from irspec_online.log import read_log
from online_logs import SPECS, expected, polars_frame, random_log
from test_ab import random_ab_log
from test_forms import forms

import irspec
from irspec.testing import registered_plugin


@pytest.fixture(autouse=True)
def online():
    with registered_plugin(plugin) as registry:
        yield registry


def streamed(source, specs, *, chunk_rows, partitions, batch_size=5, ab=None):
    stream = read_log(source, batch_size=batch_size, ab=ab, per_query=False)
    stream = dataclasses.replace(stream, chunk_rows=chunk_rows, partitions=partitions)
    return stream.evaluate(irspec.parse_many(specs))


@pytest.fixture(scope="module")
def in_memory(tmp_path_factory):
    """A seed's log (its records and every form of it) and each form's in-memory evaluation, made once
    for all the chunk sizes that stream it: neither depends on them (evaluated in the first test that
    asks, while the plugin is registered)."""
    made: dict[int, tuple[list[dict], dict[str, tuple]]] = {}

    def of(seed: int) -> tuple[list[dict], dict[str, tuple]]:
        if seed not in made:
            records = random_log(seed)
            sources = forms(records, tmp_path_factory.mktemp(f"log{seed}"))
            made[seed] = (
                records,
                {name: (source, irspec.evaluate_input(source, SPECS)) for name, source in sources.items()},
            )
        return made[seed]

    return of


@pytest.mark.parametrize("seed", [41, 42])
@pytest.mark.parametrize(("chunk_rows", "partitions"), [(7, 3), (50, 2), (10_000, 4)])
def test_the_streamed_means_are_the_in_memory_ones_to_the_bit(in_memory, seed, chunk_rows, partitions):
    """Chunks of 7 rows split the sessions (up to 12 ids share a prefix, 200 records) over many chunks;
    10,000 rows is the one-chunk path without temporary files."""
    records, evaluated = in_memory(seed)
    for name, (source, whole) in evaluated.items():
        means, tables, warnings = streamed(source, SPECS, chunk_rows=chunk_rows, partitions=partitions)
        assert means == whole.aggregate(), name  # ==: bit for bit, not approximately
        assert means == pytest.approx(expected(records), rel=1e-15)
        assert [t.as_dict() for t in tables] == [t.as_dict() for t in whole.tables], name
        assert warnings == ()


def test_evaluate_input_streams_without_rows(tmp_path):
    records = random_log(43)
    source = forms(records, tmp_path)["parquet"]
    res = irspec.evaluate_input(source, SPECS, per_query=False)
    assert res.query_ids == () and res.values.shape == (0, len(res.metrics))
    assert res.aggregate() == irspec.evaluate_input(source, SPECS).aggregate()
    assert [t.title for t in res.tables] == ["Top queries", "Queries per day"]  # three days


@pytest.mark.parametrize("unit", ["user", "session", "query"])
def test_a_streamed_ab_test_is_the_in_memory_one(tmp_path, unit):
    records = random_ab_log(44, users=40, arms=("control", "a", "b"))
    frame = polars_frame(records).with_columns(
        pl.Series("user", [r["user"] for r in records]), pl.Series("arm", [r["arm"] for r in records])
    )
    design = {"baseline": "control", "unit": unit}
    specs = "CTR CTR@1 ZRR Abandonment SessionSuccess QueriesPer"
    whole = irspec.evaluate_input(frame, specs, options={"ab": design})
    means, tables, warnings = streamed(frame, specs, chunk_rows=9, partitions=3, ab=design)
    assert means == whole.aggregate()
    assert [t.as_dict() for t in tables] == [t.as_dict() for t in whole.tables]
    assert warnings == tuple(whole.warnings)


@pytest.mark.parametrize(("chunk_rows", "partitions"), [(9, 3), (40, 5), (10_000, 4)])
def test_users_sums_stream_through_partitions_by_user(monkeypatch, chunk_rows, partitions):
    """Users as the unit: the users' sums are spread over partitions by user (no more than a chunk of them
    held at a time), not kept for the end, and the test is the in-memory one to the bit. The records
    come shuffled, so a user's sessions sit in several batches, chunks and session partitions; 10,000
    rows is the one-chunk path, without temporary files."""
    import random

    from irspec.data.stream import Partitions

    records = random_ab_log(48, users=70, arms=("control", "a", "b"))
    random.Random(48).shuffle(records)
    spread: list[tuple[str, int]] = []
    add = Partitions.add

    def watched(self, frame):  # the real Partitions, watched: what is spread, and how much at a time
        spread.append((self.key, frame.height))
        add(self, frame)

    monkeypatch.setattr(Partitions, "add", watched)
    design = {"baseline": "control", "unit": "user"}
    specs = "CTR CTR@1 ZRR Abandonment SessionSuccess QueriesPer"
    whole = irspec.evaluate_input(records, specs, options={"ab": design})
    means, tables, warnings = streamed(
        records, specs, chunk_rows=chunk_rows, partitions=partitions, ab=design
    )
    assert means == whole.aggregate()
    assert [t.as_dict() for t in tables] == [t.as_dict() for t in whole.tables]  # the comparisons' floats: ==
    assert warnings == tuple(whole.warnings)
    by_user = [rows for key, rows in spread if key == "unit"]
    if chunk_rows > len(records):
        assert spread == []
        return
    # every user's sums go to disk, a row per user and session partition (70 users, 1-3 sessions each),
    # spread as the pass goes (a chunk's worth at a time), not held to the end
    assert sum(by_user) >= 70 and len(by_user) >= 2


def test_the_temporary_files_are_removed_on_success_and_on_error(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    records = random_log(45)
    streamed(records, SPECS, chunk_rows=7, partitions=3)
    assert glob.glob(str(tmp_path / "irspec-*")) == []
    bad = [*records[:100], dict(records[0], timestamp="yesterday"), *records[100:]]
    with pytest.raises(irspec.InputError, match=r"<records>:101: timestamp 'yesterday' is not ISO 8601"):
        streamed(bad, SPECS, chunk_rows=7, partitions=3)
    assert [p for p in os.listdir(tmp_path) if p.startswith("irspec-")] == []


def test_per_query_rows_over_the_memory_budget_are_refused(tmp_path):
    records = random_log(46)
    source = forms(records, tmp_path)["jsonl"]
    with pytest.raises(
        irspec.EvaluationError,
        match=r"log.jsonl: a row per query issue for more than .* query issues needs over "
        r"0 MiB, more than the memory budget of 0 MiB \(--memory, a plan's options.memory, memory=\)",
    ):
        irspec.evaluate_input(source, SPECS, options={"memory": 1000})
    # the aggregates stream whatever the budget
    assert irspec.evaluate_input(source, SPECS, per_query=False).aggregate() == pytest.approx(
        expected(records), rel=1e-15
    )


def test_a_plan_streams_unless_an_output_shows_rows(tmp_path):
    from online_logs import write_jsonl

    from irspec.plan.execute import run_plan
    from irspec.plan.load import load_plan

    write_jsonl(random_log(47), tmp_path / "log.jsonl")
    plan = "log: log.jsonl\nmetrics: [CTR, Abandonment]\noptions: {memory: 2000}\noutput:\n  - {format: markdown}\n"
    (tmp_path / "plan.yaml").write_text(plan, encoding="utf-8")
    (res,) = run_plan(load_plan(str(tmp_path / "plan.yaml"))).inputs
    assert res.query_ids == () and set(res.aggregate()) == {"CTR", "Abandonment"}
    (tmp_path / "plan.yaml").write_text(
        plan.replace("{format: markdown}", "{format: json}"), encoding="utf-8"
    )
    with pytest.raises(
        irspec.EvaluationError, match="more than the memory budget"
    ):  # JSON has the rows by default
        run_plan(load_plan(str(tmp_path / "plan.yaml")))


def test_a_metric_undefined_on_every_query_issue_has_an_undefined_mean_streamed_too(tmp_path):
    """No record of the log served an interleaved list (none has origins), so Interleaving is NaN on
    every query issue: its mean is undefined in memory (irspec.evaluation.means) and streamed alike, not
    0.0; CTR beside it is defined."""
    records = random_log(41)
    source = forms(records, tmp_path)["jsonl"]
    specs = "Interleaving CTR"  # team-draft, the default
    whole = irspec.evaluate_input(source, specs).aggregate()
    means, _, _ = streamed(source, specs, chunk_rows=7, partitions=3)
    assert math.isnan(whole["Interleaving"]) and math.isnan(means["Interleaving"])
    assert means["CTR"] == whole["CTR"] == pytest.approx(expected(records)["CTR"], rel=1e-15)
