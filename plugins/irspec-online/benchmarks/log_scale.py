"""Peak memory and wall time of irspec-online on a generated log of N query issues.

    python plugins/irspec-online/benchmarks/log_scale.py 2000000 /tmp/logs      # generate, then measure
    python plugins/irspec-online/benchmarks/log_scale.py 20000000 /tmp/logs20 --forms parquet --modes stream
    python plugins/irspec-online/benchmarks/log_scale.py 2000000 /tmp/logs --spark
    python plugins/irspec-online/benchmarks/log_scale.py 8000000 /tmp/ab8 --ab     # an A/B test, users as the unit
    python plugins/irspec-online/benchmarks/log_scale.py 100000000 /tmp/ab100 --ab --issues-per-user 1

Writes ``log.jsonl`` and/or ``log.parquet`` (about 10 query issues per session, sessions scattered over
the whole file, 0-5 results, some clicks) once, a million records at a time, then evaluates every metric
in a fresh process per form and mode and prints its wall time and peak RSS (``ru_maxrss`` of the child):
``memory`` is the in-memory evaluation (a row per query issue, ``evaluate_input(log, specs)``, the
budget lifted), ``stream`` the streamed one (``per_query=False``). Not a test: the figures go in the
plugin's README.

``--ab`` writes ``log-ab.parquet`` instead: sessions of 2 query issues on average, user ``u<k>`` owning
sessions 2k and 2k + 1 (so about N/4 users, most with two sessions far apart in the file), users of even
k in arm ``control`` and odd k in ``treatment``; and measures the streamed A/B test with users as the unit
(``ab: {baseline: control, unit: user}``, the session metrics). ``--python`` runs the measured process with
another interpreter (a virtualenv of another irspec: the figures before a change).

``--ab --issues-per-user X`` lays the users out exactly instead, for many users with few query issues
each, in ``log-ab-X-per-user.parquet``: row i goes to slot (a*i + b) mod M, M = N or N + 1, whichever is
odd (slot N, if any, mapped once more), a permutation of the rows (a about 0.618 M, coprime to M), and
slot s to user ``u<s // X>``, whose one session is ``sess-<s // X>``.
So exactly ceil(N/X) users of X query issues (the last one the rest), ceil(users/2) of them (the even k)
in ``control`` and floor(users/2) in ``treatment``, scattered over the file, not in the order of their
ids: with X = 1, 100 million users are 100 million query issues. Without the option the log is the one
above (about 4 query issues per user, drawn at random).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time

SPECS = "CTR CTR@1 ZRR Abandonment SessionSuccess QueriesPer QueriesPer(hour)"
AB_SPECS = "CTR CTR@1 ZRR Abandonment SessionSuccess QueriesPer"  # an A/B test takes no time unit's metric
AB = {"baseline": "control", "unit": "user"}
CHUNK = 1_000_000


def ab_stem(issues_per_user: int | None) -> str:
    """The A/B log's file stem: the random shape's, or the exact layout's with its query issues per user."""
    return "log-ab" if issues_per_user is None else f"log-ab-{issues_per_user}-per-user"


def generate(
    n: int, folder: str, forms: list[str], ab: bool = False, issues_per_user: int | None = None
) -> None:
    import numpy as np
    import polars as pl
    import pyarrow.parquet as pq

    rng = np.random.default_rng(1)
    writer = None
    jsonl = open(os.path.join(folder, "log.jsonl"), "w", encoding="utf-8") if "jsonl" in forms else None  # noqa: SIM115
    stem = ab_stem(issues_per_user) if ab else "log"
    # a stride coprime to the modulus makes row -> (stride * row + offset) mod modulus a permutation: every
    # slot taken once, so the users are counted exactly, and neighbouring rows land about 0.618 of the file
    # apart. The modulus is odd: modulo an even one a slot's parity (the user's arm) would be the row's, and
    # the clicks (on every fourth row) all in one arm; n + 1's extra slot is walked past (mapped once more)
    modulus = n | 1
    stride = max(1, round(modulus * 0.6180339887))
    while math.gcd(stride, modulus) != 1:
        stride += 1
    try:
        for start in range(0, n, CHUNK):
            m = min(n, start + CHUNK) - start
            i = pl.Series("i", np.arange(start, start + m))
            if issues_per_user is None:
                session = pl.Series(rng.integers(0, max(1, n // (2 if ab else 10)), m))
            else:  # one session per user: the session's number is the user's
                slot = (np.arange(start, start + m, dtype=np.int64) * stride + modulus // 3) % modulus
                slot = np.where(slot >= n, (slot * stride + modulus // 3) % modulus, slot)
                session = pl.Series(slot // issues_per_user)
            frame = pl.DataFrame({
                "session": "sess-" + session.cast(pl.String),
                "query": "query text " + (i % 5000).cast(pl.String),
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
            if ab:
                user = session // 2 if issues_per_user is None else session
                frame = frame.with_columns(
                    user="u" + user.cast(pl.String),
                    arm=pl.when(user % 2 == 0).then(pl.lit("control")).otherwise(pl.lit("treatment")),
                )
            table = frame.to_arrow()
            if "parquet" in forms:
                writer = writer or pq.ParquetWriter(os.path.join(folder, f"{stem}.parquet"), table.schema)
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
    extra = {}
    if mode == "ab":
        res = irspec.evaluate_input(source, AB_SPECS, options={"ab": AB}, per_query=False)
        values = res.aggregate()
        ratio = next(t for t in res.tables if t.title.startswith("Sample ratio"))
        extra["users"] = {arm: units for arm, units, *_ in ratio.rows}
        extra["p"] = {row[0]: row[-1] for t in res.tables if t.title.startswith("A/B") for row in t.rows}
    elif spark:
        from irspec_online import spark as online_spark
        from pyspark.sql import SparkSession

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
    usage = resource.getrusage(resource.RUSAGE_SELF)
    peak = usage.ru_maxrss / 1024
    # the process's CPU time as well: on a shared machine the wall time says as much about the others' load
    print(json.dumps({"source": os.path.basename(source), "mode": "spark" if spark else mode, "seconds": round(took, 1),
                      "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1), "peak_rss_mib": round(peak),
                      "values": values, **extra}), flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int)
    parser.add_argument("folder")
    parser.add_argument(
        "--spark", action="store_true", help="also evaluate the Parquet log on Spark local[2]"
    )
    parser.add_argument(
        "--forms", default="jsonl,parquet", help="the forms to write and measure (default jsonl,parquet)"
    )
    parser.add_argument(
        "--modes", default="memory,stream", help="in-memory and/or streamed evaluation (default both)"
    )
    parser.add_argument(
        "--ab", action="store_true", help="an A/B test with users as the unit, streamed, on log-ab.parquet"
    )
    parser.add_argument(
        "--issues-per-user",
        type=int,
        metavar="X",
        help="with --ab: exactly ceil(N/X) users of X query issues each, scattered (default: about 4, at random)",
    )
    parser.add_argument("--python", default=sys.executable, help="the interpreter of the measured process")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="stream", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.spark, args.mode)
    if args.issues_per_user is not None and (not args.ab or args.issues_per_user < 1):
        parser.error("--issues-per-user takes a positive number, with --ab")
    os.makedirs(args.folder, exist_ok=True)
    if args.ab:
        name = f"{ab_stem(args.issues_per_user)}.parquet"
        path = os.path.join(args.folder, name)
        if not os.path.exists(path):
            generate(args.n, args.folder, ["parquet"], ab=True, issues_per_user=args.issues_per_user)
        print(f"{name}: {os.path.getsize(path) / 2**20:.0f} MiB", flush=True)
        subprocess.run(
            [args.python, __file__, str(args.n), args.folder, "--child", path, "--mode", "ab"], check=True
        )
        return
    forms = args.forms.split(",")
    missing = [f for f in forms if not os.path.exists(os.path.join(args.folder, f"log.{f}"))]
    if missing:
        generate(args.n, args.folder, missing)
    for form in forms:
        path = os.path.join(args.folder, f"log.{form}")
        print(f"log.{form}: {os.path.getsize(path) / 2**20:.0f} MiB", flush=True)
        for mode in args.modes.split(","):
            subprocess.run(
                [args.python, __file__, str(args.n), args.folder, "--child", path, "--mode", mode], check=True
            )
    if args.spark:
        parquet = os.path.join(args.folder, "log.parquet")
        subprocess.run(
            [args.python, __file__, str(args.n), args.folder, "--child", parquet, "--spark"], check=True
        )


if __name__ == "__main__":
    main()
