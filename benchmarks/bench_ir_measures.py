"""Time ``ir_measures.calc_aggregate`` on ir_measures' own pipeline (pytrec_eval) against the same call
through irspec's provider (``irspec.compat.ir_measures.register()``) and through the drop-in, side by side
in one invocation, with ratios.

    python benchmarks/bench_ir_measures.py [--queries 7000] [--docs 1000] [--repeat 3]

The run is ``bench_inprocess.make``'s (queries × docs, ~30 graded judgments a query), four measures
(nDCG@10, AP, R@100, P@5), given as ir_measures' users give it:

- ``dicts``: dicts of dicts;
- ``frame``: pandas DataFrames with ir_measures' columns (query_id, doc_id, score; relevance), what
  PyTerrier's ``pt.Experiment`` hands ir_measures.

Each (workload, tool, start) runs in a process of its own: ``first`` times the first call in a fresh
process (``import ir_measures`` and ``register()`` done, everything either tool loads at its first
call timed: pytrec_eval, irspec's engine); ``warm`` times a call after one on a small run. The median of
``--repeat`` runs is reported with its ratio to ir_measures' own, wall time and CPU time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

TOOLS = ["ir_measures", "irspec provider", "drop-in"]


def child(workload: str, tool: str, start: str, queries: int, docs: int) -> dict:
    """One timed call in this process: seconds, CPU seconds."""
    import warnings

    from bench_inprocess import make

    warnings.simplefilter("ignore")
    qrels, run = make(queries, docs)
    if workload == "frame":
        import pandas as pd

        run = pd.DataFrame(
            [(q, d, s) for q, ds in run.items() for d, s in ds.items()],
            columns=["query_id", "doc_id", "score"],
        )
        qrels = pd.DataFrame(
            [(q, d, lab) for q, ds in qrels.items() for d, lab in ds.items()],
            columns=["query_id", "doc_id", "relevance"],
        )
    import ir_measures

    if tool == "drop-in":
        import irspec.compat.ir_measures as module
    else:
        module = ir_measures
        if tool == "irspec provider":
            import irspec.compat.ir_measures

            irspec.compat.ir_measures.register()
    from ir_measures import AP, P, R, nDCG

    measures = [nDCG @ 10, AP, R @ 100, P @ 5]
    if start == "warm":
        module.calc_aggregate(measures, {"q": {"a": 1, "b": 0}}, {"q": {"a": 1.0, "b": 0.5, "c": 0.2}})
    t, c = time.perf_counter(), time.process_time()
    module.calc_aggregate(measures, qrels, run)
    return {"seconds": time.perf_counter() - t, "cpu": time.process_time() - c}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=7000)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workloads", default="dicts,frame")
    ap.add_argument("--child", nargs=3, metavar=("WORKLOAD", "TOOL", "START"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(*args.child, args.queries, args.docs)))
        return
    for workload in args.workloads.split(","):
        for start in ("first", "warm"):
            times: dict[str, list[float]] = {t: [] for t in TOOLS}
            cpus: dict[str, list[float]] = {t: [] for t in TOOLS}
            for _ in range(args.repeat):
                for tool in TOOLS:  # alternating, so that the machine's load falls on each alike
                    cmd = [sys.executable, __file__, "--queries", str(args.queries), "--docs", str(args.docs)]
                    proc = subprocess.run(
                        [*cmd, "--child", workload, tool, start], capture_output=True, text=True, check=True
                    )
                    out = json.loads(proc.stdout.strip().splitlines()[-1])
                    times[tool].append(out["seconds"])
                    cpus[tool].append(out["cpu"])
            ref, ref_cpu = statistics.median(times["ir_measures"]), statistics.median(cpus["ir_measures"])
            print(f"\n{workload}, {start} call ({args.queries:,} x {args.docs:,}; median of {args.repeat})")
            for tool in TOOLS:
                med, cpu = statistics.median(times[tool]), statistics.median(cpus[tool])
                print(
                    f"  {tool:16s} {med:7.2f} s  {med / ref:5.2f}x   CPU {cpu / ref_cpu:5.2f}x"
                    f"   (runs: {', '.join(f'{x:.2f}' for x in times[tool])})"
                )


if __name__ == "__main__":
    main()
