"""Time fusion's parameter search (``irspec.tune_fusion``, ``irspec.cross_fuse``), and, with ``--before
REF``, the same calls in the irspec of commit REF, interleaved, with ratios.

    python benchmarks/bench_tuning.py [--before REF] [--repeat 5] [--queries 50] [--docs 1000]

Three runs of ``--queries`` queries, each query's documents (up to ``--docs``, some queries missing from
a run) drawn from a pool twice that size with normal scores rounded to hundredths, and qrels of 60
documents a query with labels from -1 to 2, all made from a fixed seed in each process. Workloads, each
call in a fresh process and timed inside it (not the process's start):

- ``wsum``: ``tune_fusion(runs, "wsum(norm=zmuv)", "nDCG@10", qrels)``, 66 trials (weight vectors);
- ``probfuse``: ``tune_fusion(runs, "probfuse", "nDCG@10", qrels)``, 100 trials of a method that learns;
- ``cross``: ``cross_fuse(runs, "wsum(norm=zmuv)", "nDCG@10", qrels, folds=3)``, four searches.

Each process also prints a digest of what the call gave (the choice, every trial's score, the fused
rows), so that the two commits are seen to give the same results. Medians of ``--repeat`` runs; the
machine is shared, so the ratio of runs made in turn is the figure to read.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import hashlib, json, sys, time, warnings
import numpy as np
import irspec
queries, docs, workload = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(0)
runs = [
    {f"q{q}": {f"d{d}": round(float(rng.normal()), 2) for d in rng.choice(2 * docs, int(rng.integers(1, docs + 1)), replace=False)}
     for q in range(queries) if rng.random() < 0.95}
    for _ in range(3)
]
qrels = {f"q{q}": {f"d{d}": int(rng.integers(-1, 3)) for d in rng.choice(2 * docs, 60, replace=False)} for q in range(queries)}
warnings.simplefilter("ignore")
start = time.perf_counter()
if workload == "cross":
    run, tuned = irspec.cross_fuse(runs, "wsum(norm=zmuv)", "nDCG@10", qrels, folds=3)
    made = repr((run.frame.rows(), [str(t.fusion) for t in tuned]))
else:
    tuned = irspec.tune_fusion(runs, "wsum(norm=zmuv)" if workload == "wsum" else "probfuse", "nDCG@10", qrels)
    made = repr((str(tuned.fusion), tuned.trials))
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "digest": hashlib.sha256(made.encode()).hexdigest()[:16]}))
"""

WORKLOADS = ("wsum", "probfuse", "cross")


def before_tree(ref: str) -> Path:
    """Commit ``ref``'s tree (:func:`bench_demo.tree_of`), in a temporary folder removed at exit."""
    from bench_demo import tree_of

    folder = Path(tempfile.mkdtemp(prefix="irspec-tuning-before-"))
    atexit.register(shutil.rmtree, folder, True)
    return tree_of(ref, folder / "tree")


def one(workload: str, args: argparse.Namespace, env: dict[str, str]) -> dict:
    # -P: the working directory is not put before PYTHONPATH, so --before's tree is the irspec imported
    out = subprocess.run(
        [sys.executable, "-P", "-c", CHILD, str(args.queries), str(args.docs), workload],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", metavar="REF", help="also time the irspec of this commit")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    args = parser.parse_args()
    versions = {"this checkout": {**os.environ, "PYTHONPATH": str(ROOT)}}
    if args.before:
        versions[f"irspec at {args.before}"] = {**os.environ, "PYTHONPATH": str(before_tree(args.before))}
    print(
        f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; {args.queries} queries, up to {args.docs} documents"
    )
    print(f"{'workload':10} {'irspec':>28} {'median s':>9} {'best s':>7} {'ratio':>6}  digest")
    for workload in args.workloads.split(","):
        times: dict[str, list[float]] = {label: [] for label in versions}
        digests: dict[str, set[str]] = {label: set() for label in versions}
        for _ in range(args.repeat):  # the versions in turn, so that the machine's drift touches both
            for label, env in versions.items():
                got = one(workload, args, env)
                times[label].append(got["seconds"])
                digests[label].add(got["digest"])
        first = statistics.median(times["this checkout"])
        for label in versions:
            median = statistics.median(times[label])
            print(
                f"{workload:10} {label:>28} {median:9.3f} {min(times[label]):7.3f} {median / first:6.2f}  "
                f"{','.join(sorted(digests[label]))}"
            )


if __name__ == "__main__":
    main()
