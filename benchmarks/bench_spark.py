"""irspec.evaluation.spark on a local Spark against the embedded engine, on a generated collection.

    python benchmarks/bench_spark.py [--keep DIR] [--queries 5000] [--docs 1000] [--master local[2]]
                                     [--partitions 2,8,32] [--metrics "nDCG@10, AP, P@10"] [--repeat 2]

Generates (or reuses, with ``--keep``) the collection of ``make_collection.py`` (5,000 queries x 1,000
documents = 5M run lines by default) and times:

- embedded: ``irspec.evaluate`` on the two files in a fresh process (start-up, reading, evaluating);
- Spark: the session's start, then for each bucket count, reading the TREC text with Spark
  (``irspec.evaluation.spark.read_run``) and the Parquet copy, evaluating and collecting the aggregates
  (``irspec.evaluation.spark.aggregate``).

Every Spark aggregate must equal the embedded one exactly (the script exits 1 if not). Wall times are
the best of ``--repeat``; the overhead is Spark's time over the embedded path's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from make_collection import make_collection  # noqa: E402

EMBEDDED = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
t = time.perf_counter()
import irspec
agg = irspec.evaluate(sys.argv[1], sys.argv[2], sys.argv[3]).aggregate()
print(json.dumps({"seconds": time.perf_counter() - t, "aggregate": agg}))
"""


def embedded(qrels: Path, run: Path, metrics: str) -> tuple[float, float, dict]:
    """(process wall seconds, in-process seconds from import to aggregate, aggregates)."""
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", EMBEDDED, str(qrels), str(run), metrics],
        check=True,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    found = json.loads(out.stdout)
    return wall, found["seconds"], found["aggregate"]


def best(fn, repeat: int):
    """The fastest of ``repeat`` calls of ``fn`` (its wall time and value)."""
    times, value = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t)
    return min(times), value


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", help="directory for the collection (reused when it holds one)")
    ap.add_argument("--queries", type=int, default=5000)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", default="2,8,32", help="bucket counts to try, comma-separated")
    ap.add_argument("--metrics", default="nDCG@10, AP, P@10")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)

    tmp = None if args.keep else tempfile.TemporaryDirectory()
    where = Path(args.keep or tmp.name)
    qrels, run = where / "qrels.txt", where / "run.txt"
    if not (qrels.exists() and run.exists()):
        make_collection(where, queries=args.queries, docs=args.docs)
    with open(run, "rb") as f:
        lines = sum(1 for _ in f)
    print(f"collection: {lines:,} run lines in {where}; metrics {args.metrics!r}; {os.cpu_count()} cores")

    wall, inner, want = min(
        (embedded(qrels, run, args.metrics) for _ in range(args.repeat)), key=lambda x: x[0]
    )
    print(f"embedded irspec.evaluate: {wall:.2f} s process ({inner:.2f} s import + read + evaluate)")

    warnings.simplefilter("ignore")
    from irspec.evaluation import spark as irs

    t = time.perf_counter()
    spark = irs.session(
        args.master,
        {"spark.driver.memory": "4g", "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"},
        app_name="irspec-bench",
    )
    spark.sparkContext.setLogLevel("ERROR")
    print(f"Spark session {args.master}: {time.perf_counter() - t:.2f} s to start")
    parquet = where / "run.parquet"
    if not parquet.exists():
        irs.read_run(spark, str(run)).write.parquet(str(parquet))
    q = irs.read_qrels(spark, str(qrels)).cache()
    q.count()

    ok = True
    print("| input | buckets | evaluate + aggregate | overhead over embedded (process) | equal |")
    print("|---|---|---|---|---|")
    for source, path in (("TREC text", run), ("Parquet", parquet)):
        for n in (int(x) for x in args.partitions.split(",")):

            def go(path: Path = path, n: int = n) -> dict:
                per_query = irs.evaluate(
                    q, irs.read_run(spark, str(path)), args.metrics, partitions=n, run_name="run"
                )
                return irs.aggregate(per_query)

            seconds, got = best(go, args.repeat)
            equal = got == want
            ok &= equal
            print(
                f"| {source} | {n} | {seconds:.2f} s | {seconds / wall:.1f}x ({seconds - wall:+.2f} s) | {equal} |"
            )
    spark.stop()
    if tmp is not None:
        tmp.cleanup()
    if not ok:
        print("Spark's aggregates differ from the embedded engine's", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
