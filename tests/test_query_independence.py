"""A query's values do not depend on the other queries it is evaluated with.

Evaluation partitions by query exactly (irspec.evaluation.spark evaluates buckets of queries, streaming evaluates
blocks of them): each query's value must then be the same, to the last bit, whether it is evaluated
alone, with every other query, or with the run's queries in another order. A kernel that sums over all
queries at once and subtracts (a global cumulative sum less the sum before each query) breaks this in
the last bit; trec_eval sums each query from zero.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

import irspec
from irspec.evaluation.context import segment_cumsum

sys.path.insert(0, str(Path(__file__).resolve().parent))
from randomdata import random_case

METRICS = "all_trec, bpref(10+R), P@R"


@pytest.mark.parametrize("seed", range(6))
def test_each_query_alone_equals_it_among_all(seed):
    qrels, run = random_case(seed, all_negative=True, near_ties=True)
    together = irspec.evaluate(qrels, run, METRICS).per_query()
    reversed_run = dict(reversed(list(run.items())))
    assert irspec.evaluate(qrels, reversed_run, METRICS).per_query() == together
    for qid in qrels:
        alone = irspec.evaluate({qid: qrels[qid]}, {qid: run[qid]} if qid in run else {}, METRICS).per_query()
        assert alone == {qid: together[qid]}, qid


def test_segment_cumsum_adds_each_segment_from_zero():
    rng = np.random.default_rng(5)
    lengths = np.concatenate((rng.integers(0, 40, size=300), [0, 1, 2, 700, 0]))
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    values = rng.normal(size=int(offsets[-1])) * 10.0 ** rng.integers(-8, 8, size=int(offsets[-1]))
    want = []
    for lo, hi in itertools.pairwise(offsets):
        total = 0.0
        for v in values[lo:hi].tolist():  # the C loop: a running total from zero
            total += v
            want.append(total)
    assert segment_cumsum(values, offsets).tolist() == want
    assert segment_cumsum(np.zeros(0), np.array([0])).tolist() == []
