"""Time the significance step of a plan: 5 runs x 5,000 queries x 4 metrics, 10,000 permutations.

    PYTHONPATH=. python benchmarks/bench_compare.py [--queries 5000] [--runs 5] [--permutations 10000]

Per-query scores are synthetic (one seeded ``numpy.random.Generator``; P@10-like grid values for P@10,
continuous values for the others), wrapped in :class:`irspec.evaluation.result.Result` objects so that the timing
covers the plan's own path: alignment by query id, the tests, and the correction. Query order is
shuffled per run, so the alignment does real work. Prints wall times; asserts nothing.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import irspec
from irspec.evaluation.context import Options
from irspec.evaluation.result import Result
from irspec.experiment.compare import compare_results
from irspec.experiment.records import Compare

METRICS = ["nDCG@10", "AP", "P@10", "recip_rank"]


def synthetic_results(runs: int, queries: int, seed: int = 0) -> list[Result]:
    """``runs`` results on ``queries`` queries, each run a little better than the one before."""
    rng = np.random.default_rng(seed)
    metrics = tuple(irspec.parse_many(METRICS))
    qids = np.array([f"q{i:05d}" for i in range(queries)])
    ease = rng.random((queries, len(metrics)))  # shared per-query difficulty: the pairing
    out = []
    for r in range(runs):
        values = np.clip(ease + 0.01 * r + rng.normal(0.0, 0.15, ease.shape), 0.0, 1.0)
        values[:, 2] = np.round(values[:, 2] * 10) / 10  # P@10 takes 11 values: many ties
        order = rng.permutation(queries)
        out.append(Result(f"run{r}", "<synthetic>", metrics, tuple(qids[order]), values[order], Options()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--queries", type=int, default=5000)
    parser.add_argument("--permutations", type=int, default=10_000)
    args = parser.parse_args()
    results = synthetic_results(args.runs, args.queries)
    print(
        f"{args.runs} runs x {args.queries} queries x {len(METRICS)} metrics, {args.permutations} permutations"
    )
    cases = [
        (
            "randomization vs baseline",
            Compare(baseline="run0", test="randomization", permutations=args.permutations),
        ),
        ("randomization, all pairs", Compare(test="randomization", permutations=args.permutations)),
        ("bootstrap vs baseline", Compare(baseline="run0", test="bootstrap", permutations=args.permutations)),
        (
            "randomized Tukey HSD",
            Compare(test="randomized-tukey", correction="none", permutations=args.permutations),
        ),
        ("paired t, all pairs", Compare(test="t")),
    ]
    for label, compare in cases:
        start = time.perf_counter()
        comparisons, _ = compare_results(results, compare)
        elapsed = time.perf_counter() - start
        print(f"  {label:<28} {len(comparisons):3d} comparisons  {elapsed:7.2f} s")


if __name__ == "__main__":
    main()
