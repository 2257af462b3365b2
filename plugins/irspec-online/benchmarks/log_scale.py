"""Peak memory and wall time of irspec-online on a generated log of N query issues.

    python plugins/irspec-online/benchmarks/log_scale.py 2000000 /tmp/logs      # generate, then measure
    python plugins/irspec-online/benchmarks/log_scale.py 2000000 /tmp/logs --spark

Writes ``log.jsonl`` and ``log.parquet`` (about 10 query issues per session, 0-5 results, some clicks)
once, then evaluates every metric in a fresh process per form and prints its wall time and peak RSS
(``ru_maxrss`` of the child). Not a test: the figures go in the plugin's README.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

SPECS = "CTR CTR@1 ZRR Abandonment SessionSuccess QueriesPer QueriesPer(hour)"


def generate(n: int, folder: str) -> None:
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(1)
    sessions = rng.integers(0, max(1, n // 10), n)
    times = 1_714_521_600.0 + rng.integers(0, 30 * 86400, n)
    sizes = rng.integers(0, 6, n)
    frames = []
    for start in range(0, n, 500_000):
        rows = []
        for i in range(start, min(n, start + 500_000)):
            results = [f"doc{(i * 7 + j) % 100_000}" for j in range(sizes[i])]
            clicks = [{"doc": d, "rank": None, "dwell": float(i % 90)} for j, d in enumerate(results) if (i + j) % 4 == 0]
            rows.append({"session": f"sess-{sessions[i]}", "query": f"query text {i % 5000}", "timestamp": float(times[i]),
                         "results": results, "clicks": clicks})  # fmt: skip
        frames.append(pl.DataFrame(rows))
        with open(os.path.join(folder, "log.jsonl"), "a" if start else "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
    pl.concat(frames).write_parquet(os.path.join(folder, "log.parquet"), row_group_size=100_000)


def child(source: str, spark: bool) -> None:
    import irspec

    start = time.perf_counter()
    if spark:
        from pyspark.sql import SparkSession

        from irspec_online import spark as online_spark

        session = (
            SparkSession.builder.master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "4")
            .getOrCreate()
        )
        values = online_spark.aggregate(online_spark.evaluate(session.read.parquet(source), SPECS))
    else:
        values = irspec.evaluate_input(source, SPECS).aggregate()
    took = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"source": os.path.basename(source), "spark": spark, "seconds": round(took, 1),
                      "peak_rss_mib": round(peak), "values": values}))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int)
    parser.add_argument("folder")
    parser.add_argument("--spark", action="store_true", help="also evaluate the Parquet log on Spark local[2]")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.spark)
    os.makedirs(args.folder, exist_ok=True)
    if not os.path.exists(os.path.join(args.folder, "log.parquet")):
        generate(args.n, args.folder)
    for name in ("log.jsonl", "log.parquet"):
        path = os.path.join(args.folder, name)
        print(f"{name}: {os.path.getsize(path) / 2**20:.0f} MiB", flush=True)
        subprocess.run([sys.executable, __file__, str(args.n), args.folder, "--child", path], check=True)
    if args.spark:
        parquet = os.path.join(args.folder, "log.parquet")
        subprocess.run([sys.executable, __file__, str(args.n), args.folder, "--child", parquet, "--spark"], check=True)


if __name__ == "__main__":
    main()
