"""The qrels index: query codes from the reader's order (or a join when the rows are not in it), the
ideal order by one stable sort of a combined key (or ``lexsort`` when the labels span too much), the
hashed keys built only when a run read as a frame needs them."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import irspec
from irspec.data import Qrels
from irspec.evaluation.index import QrelsIndex, _ideal_order


def _frame(rows: list[tuple[str, str, int]]) -> pl.DataFrame:
    q, d, lab = zip(*rows, strict=True)
    return pl.DataFrame(
        {"query": list(q), "docno": list(d), "label": list(lab), "line": [None] * len(rows)},
        schema={"query": pl.String, "docno": pl.String, "label": pl.Int64, "line": pl.UInt32},
    )


ROWS = [("q2", "a", 1), ("q10", "b", 0), ("q2", "c", 3), ("q1", "x", -1), ("q10", "a", 2), ("q1", "y", 1)]


def test_rows_not_in_query_order_index_as_the_sorted_rows() -> None:
    # a Qrels made by hand (a plugin's), not sorted by the reader: codes found by a join
    scattered = QrelsIndex(Qrels(_frame(ROWS), "<hand>"))
    ordered = QrelsIndex(Qrels(_frame(sorted(ROWS)), "<hand>"))
    assert scattered.query_ids == ordered.query_ids == ["q1", "q10", "q2"]
    assert [scattered.query_ids[c] for c in scattered.row_query] == [q for q, _, _ in ROWS]
    assert [ordered.query_ids[c] for c in ordered.row_query] == [q for q, _, _ in sorted(ROWS)]
    for idx in (scattered, ordered):
        assert idx.labels.tolist() == [1, -1, 2, 0, 3, 1]  # by query, label descending
        assert idx.offsets.tolist() == [0, 2, 4, 6]
        assert idx.keys_unique


@pytest.mark.parametrize("span", [5, 2**40, 2**62])
def test_the_ideal_order_is_lexsorts(span: int) -> None:
    rng = np.random.default_rng(span % 1000)
    q = np.sort(rng.integers(0, 50, 400))
    labels = rng.integers(-2, 3, 400) * (span // 4)  # many equal labels: ties keep row order
    assert _ideal_order(q, labels).tolist() == np.lexsort((-labels, q)).tolist()


def test_a_run_as_a_frame_and_as_dicts_against_qrels_made_by_hand() -> None:
    qrels = Qrels(_frame(ROWS), "<hand>")
    run = {"q2": {"a": 0.5, "c": 0.5, "z": 0.9}, "q10": {"b": 1.0, "a": 0.1}, "q1": {"y": 2.0}}
    by_frame = irspec.evaluate(qrels, irspec.read_run(run), "AP, nDCG, P@2", judged_warning=None)
    by_dicts = irspec.evaluate(qrels, run, "AP, nDCG, P@2", judged_warning=None)
    assert by_frame.per_query() == by_dicts.per_query()
    # q2: z (unjudged), c (3), a (1): AP (1/2 + 2/3) / 2
    assert by_dicts.per_query()["q2"]["AP"] == (1 / 2 + 2 / 3) / 2


def test_each_querys_judged_docnos_whatever_the_rows_order() -> None:
    for rows in (ROWS, sorted(ROWS)):
        idx = QrelsIndex(Qrels(_frame(rows), "<hand>"))
        lists, labels = idx.judged_docnos()
        assert dict(zip(idx.query_ids, lists, strict=True)) == idx.judged_by_query()
        got = {
            (q, d): int(lab)
            for q, ds in zip(idx.query_ids, lists, strict=True)
            for d, lab in zip(ds, labels[idx.offsets[idx.position[q]] :], strict=False)
        }
        assert got == {(q, d): lab for q, d, lab in rows}
