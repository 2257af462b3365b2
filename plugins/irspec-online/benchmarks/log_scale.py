"""Peak memory and wall time of irspec-online on a generated log of N query issues.

    python plugins/irspec-online/benchmarks/log_scale.py 2000000 /tmp/logs      # generate, then measure
    python plugins/irspec-online/benchmarks/log_scale.py 20000000 /tmp/logs20 --forms parquet --modes stream
    python plugins/irspec-online/benchmarks/log_scale.py 2000000 /tmp/logs --spark

Writes ``log.jsonl`` and/or ``log.parquet`` (about 10 query issues per session, sessions scattered over
the whole file, 0-5 results, some clicks) once, a million records at a time, then evaluates every metric
in a fresh process per form and mode and prints its wall time and peak RSS (``ru_maxrss`` of the child):
``memory`` is the in-memory evaluation (a row per query issue, ``evaluate_input(log, specs)``, the
budget lifted), ``stream`` the streamed one (``per_query=False``). Not a test: the figures go in the
plugin's README.
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
CHUNK = 1_000_000


def generate(n: int, folder: str, forms: list[str]) -> None:
    import numpy as np
    import polars as pl
    import pyarrow.parquet as pq

    rng = np.random.default_rng(1)
    writer = None
    jsonl = open(os.path.join(folder, "log.jsonl"), "w", encoding="utf-8") if "jsonl" in forms else None  # noqa: SIM115
    try:
        for start in range(0, n, CHUNK):
            m = min(n, start + CHUNK) - start
            i = pl.Series("i", np.arange(start, start + m))
            frame = pl.DataFrame({
                "session": pl.Series(rng.integers(0, max(1, n // 10), m)).cast(pl.String).map_elements(lambda s: f"sess-{s}", return_dtype=pl.String),
                "query": (i % 5000).cast(pl.String).map_elements(lambda q: f"query text {q}", return_dtype=pl.String),
                "timestamp": 1_714_521_600.0 + rng.integers(0, 30 * 86400, m).astype(np.float64),
                "size": rng.integers(0, 6, m),
                "i": i,
            }).with_columns(
                results=pl.int_ranges(0, pl.col("size")).list.eval(pl.format("doc{}", pl.element())),
            ).with_columns(
                clicks=pl.when((pl.col("i") % 4 == 0) & (pl.col("size") > 0))
                .then(pl.concat_list(pl.struct(doc=pl.col("results").list.first(), rank=pl.lit(None, pl.Int64),
                                               dwell=(pl.col("i") % 90).cast(pl.Float64))))
                .otherwise(pl.lit([], pl.List(pl.Struct({"doc": pl.String, "rank": pl.Int64, "dwell": pl.Float64})))),
            ).drop("size", "i")  # fmt: skip
            table = frame.to_arrow()
            if "parquet" in forms:
                writer = writer or pq.ParquetWriter(os.path.join(folder, "log.parquet"), table.schema)
                writer.write_table(table, row_group_size=100_000)
            if jsonl is not None:
                jsonl.writelines(json.dumps(r) + "\n" for r in frame.iter_rows(named=True))
    finally:
        if writer is not None:
            writer.close()
        if jsonl is not None:
            jsonl.close()


def child(source: str, spark: bool, mode: str) -> None:
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
    elif mode == "stream":
        values = irspec.evaluate_input(source, SPECS, per_query=False).aggregate()
    else:
        values = irspec.evaluate_input(source, SPECS, options={"memory": 1 << 50}).aggregate()
    took = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"source": os.path.basename(source), "mode": "spark" if spark else mode, "seconds": round(took, 1),
                      "peak_rss_mib": round(peak), "values": values}), flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int)
    parser.add_argument("folder")
    parser.add_argument("--spark", action="store_true", help="also evaluate the Parquet log on Spark local[2]")
    parser.add_argument("--forms", default="jsonl,parquet", help="the forms to write and measure (default jsonl,parquet)")
    parser.add_argument("--modes", default="memory,stream", help="in-memory and/or streamed evaluation (default both)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="stream", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.spark, args.mode)
    forms = args.forms.split(",")
    os.makedirs(args.folder, exist_ok=True)
    missing = [f for f in forms if not os.path.exists(os.path.join(args.folder, f"log.{f}"))]
    if missing:
        generate(args.n, args.folder, missing)
    for form in forms:
        path = os.path.join(args.folder, f"log.{form}")
        print(f"log.{form}: {os.path.getsize(path) / 2**20:.0f} MiB", flush=True)
        for mode in args.modes.split(","):
            subprocess.run([sys.executable, __file__, str(args.n), args.folder, "--child", path, "--mode", mode], check=True)
    if args.spark:
        parquet = os.path.join(args.folder, "log.parquet")
        subprocess.run([sys.executable, __file__, str(args.n), args.folder, "--child", parquet, "--spark"], check=True)


if __name__ == "__main__":
    main()
