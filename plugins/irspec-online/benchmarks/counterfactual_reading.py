"""CPU time of reading a log with a ranking to estimate (a counterfactual estimate's reading), a batch of
Arrow columns at a time against record by record, side by side on the same batches.

    python plugins/irspec-online/benchmarks/counterfactual_reading.py [--records 200000] [--repeat 5]

The log is the plugin's tests' simulated one (tests/test_counterfactual.py's ``world``: 20 queries of 10
documents, PBM users), drawn by ``irspec_online.simulation.logged_frame`` for each logger (``ranking``:
A's lists as they are; ``shuffle``: randomised, with the logger's propensities), cut into batches of
16,384 records as the log's reader cuts a Parquet file or a frame. Each batch is summarised with the
ranking B by ``irspec_online.columnar.summarise`` (the columns' way) and by
``irspec_online.records.summarise`` over the batch's records (the way every such batch went before: Arrow's
rows made Python dicts, then checked and summarised one by one), alternately, ``--repeat`` times; the
summaries are checked equal. Prints each way's best CPU time per record and their ratio. Not a test.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' simulated world


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    import numpy as np
    from irspec_online import columnar, records
    from irspec_online.counterfactual import ranker_of
    from irspec_online.simulation import logged_frame
    from polars.testing import assert_frame_equal
    from test_counterfactual import world

    sim, b = world()
    ranker = ranker_of(b)
    for logger in ("ranking", "shuffle"):
        table = logged_frame(sim, args.records, np.random.default_rng(1), logger).to_arrow()
        batches = [
            columnar.Rows(table.slice(at, 16_384), np.arange(at + 1, min(at + 16_385, table.num_rows + 1)))
            for at in range(0, table.num_rows, 16_384)
        ]
        best = {"columns": float("inf"), "records": float("inf")}
        for _ in range(args.repeat):
            for way in best:
                start = time.process_time()
                if way == "columns":
                    got = [columnar.summarise(batch, "log", "row", ranker=ranker) for batch in batches]
                else:
                    want = [records.summarise(batch, "log", "row", ranker=ranker) for batch in batches]
                best[way] = min(best[way], time.process_time() - start)
        for g, w in zip(got, want, strict=True):
            assert_frame_equal(g, w, check_exact=True)
        per = {way: 1e6 * t / table.num_rows for way, t in best.items()}
        print(
            f"{logger}: {table.num_rows:,} records, columns {per['columns']:.2f} µs a record, records "
            f"{per['records']:.2f} µs a record, ratio {best['columns'] / best['records']:.3f}"
        )


if __name__ == "__main__":
    main()
