"""Time irspec.compat.torchmetrics against torchmetrics itself, side by side, on the CPU, with ratios.

    python benchmarks/bench_torchmetrics.py [--repeat 5] [--only ndcg-step|map-epoch] [--json]

Two workloads, torchmetrics' own ground (torchmetrics issue 2287):

- ``ndcg-step``: a training step's ``RetrievalNormalizedDCG(top_k=10)`` called on a batch (``forward``:
  the batch's value, and its rows added to the states) of 8,000 queries × 40 candidates (random scores,
  targets 0..3), on a fresh metric each time;
- ``map-epoch``: ``RetrievalMAP().compute()`` at an epoch's end, over 100,000 queries × 40 candidates
  (binary targets) given by 25 ``update`` calls of 4,000 queries; the updates are not timed.

Both tools run in this one process, alternately, on the same tensors (made once from a fixed seed), each
repetition with a new metric, after one untimed run each (a process that has trained an epoch is past
its first allocations). ``map-epoch cold`` times instead the first ``compute`` of a fresh process (the
tensors made and the batches given first, untimed), ``--cold`` processes per tool, alternately. The
median wall time is reported with the ratio of the drop-in's to torchmetrics', the values both gave,
the machine's load average before and after and torch's thread count. The machine is shared: only the
ratios, measured side by side, mean much.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def ndcg_step(module: Any, data: dict[str, Any]) -> tuple[float, float]:
    """One forward of a new RetrievalNormalizedDCG(top_k=10): (seconds, value)."""
    metric = module.RetrievalNormalizedDCG(top_k=10)
    start = time.perf_counter()
    value = metric(data["preds"], data["target"], indexes=data["indexes"])
    return time.perf_counter() - start, float(value)


def map_epoch(module: Any, data: dict[str, Any]) -> tuple[float, float]:
    """A new RetrievalMAP given the epoch's batches, then compute(): (seconds of compute, value)."""
    metric = module.RetrievalMAP()
    for indexes, preds, target in data["batches"]:
        metric.update(preds, target, indexes=indexes)
    start = time.perf_counter()
    value = metric.compute()
    return time.perf_counter() - start, float(value)


def inputs(workload: str) -> dict[str, Any]:
    """The workload's tensors, from a fixed seed."""
    import torch

    generator = torch.Generator().manual_seed(0)
    if workload == "ndcg-step":
        queries, candidates = 8_000, 40
        return {
            "indexes": torch.arange(queries).repeat_interleave(candidates),
            "preds": torch.rand(queries * candidates, generator=generator),
            "target": torch.randint(0, 4, (queries * candidates,), generator=generator),
        }
    queries, candidates, per_batch = 100_000, 40, 4_000
    batches = []
    for first in range(0, queries, per_batch):
        rows = per_batch * candidates
        batches.append(
            (
                torch.arange(first, first + per_batch).repeat_interleave(candidates),
                torch.rand(rows, generator=generator),
                torch.randint(0, 2, (rows,), generator=generator),
            )
        )
    return {"batches": batches}


WORKLOADS = {"ndcg-step": ndcg_step, "map-epoch": map_epoch}


def cold_child(tool: str) -> list[float]:
    """In a fresh process: the map-epoch workload's first compute, as (seconds, value)."""
    import torchmetrics.retrieval as reference

    import irspec.compat.torchmetrics as dropin

    return list(map_epoch(dropin if tool == "irspec" else reference, inputs("map-epoch")))


def cold(processes: int) -> dict[str, Any]:
    """map-epoch's first compute in fresh processes, the tools alternately."""
    times: dict[str, list[float]] = {"torchmetrics": [], "irspec": []}
    values: dict[str, float] = {}
    for _ in range(processes):
        for tool in times:
            out = subprocess.run(
                [sys.executable, __file__, "--child", tool], capture_output=True, text=True, check=True
            )
            seconds, values[tool] = json.loads(out.stdout)
            times[tool].append(seconds)
    median = {tool: statistics.median(t) for tool, t in times.items()}
    return {
        "workload": "map-epoch cold",
        "torchmetrics_s": median["torchmetrics"],
        "irspec_s": median["irspec"],
        "ratio": median["irspec"] / median["torchmetrics"],
        "torchmetrics_value": values["torchmetrics"],
        "irspec_value": values["irspec"],
        "times": times,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="repetitions of each workload (median)")
    parser.add_argument("--only", choices=sorted(WORKLOADS), help="one workload")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument(
        "--cold", type=int, default=3, help="fresh processes per tool for map-epoch cold (0: none)"
    )
    parser.add_argument("--child", choices=["torchmetrics", "irspec"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:  # one cold compute, printed as JSON
        print(json.dumps(cold_child(args.child)))
        return 0

    import torch
    import torchmetrics
    import torchmetrics.retrieval as reference

    import irspec.compat.torchmetrics as dropin

    tools = {"torchmetrics": reference, "irspec": dropin}
    load_before = os.getloadavg()
    results = []
    for workload in [args.only] if args.only else list(WORKLOADS):
        data = inputs(workload)
        run = WORKLOADS[workload]
        for module in tools.values():  # once each, untimed: imports, first allocations
            run(module, data)
        times: dict[str, list[float]] = {name: [] for name in tools}
        values: dict[str, float] = {}
        for _ in range(args.repeat):
            for name, module in tools.items():
                seconds, values[name] = run(module, data)
                times[name].append(seconds)
        median = {name: statistics.median(t) for name, t in times.items()}
        results.append(
            {
                "workload": workload,
                "torchmetrics_s": median["torchmetrics"],
                "irspec_s": median["irspec"],
                "ratio": median["irspec"] / median["torchmetrics"],
                "torchmetrics_value": values["torchmetrics"],
                "irspec_value": values["irspec"],
                "times": times,
            }
        )
    if args.cold and args.only in (None, "map-epoch"):
        results.append(cold(args.cold))
    load_after = os.getloadavg()
    machine = {
        "torch": torch.__version__,
        "torchmetrics": torchmetrics.__version__,
        "threads": torch.get_num_threads(),
        "cpus": os.cpu_count(),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in load_after],
        "repeat": args.repeat,
    }
    if args.json:
        print(json.dumps({"machine": machine, "results": results}, indent=2))
        return 0
    print(
        f"torch {machine['torch']}, torchmetrics {machine['torchmetrics']}, {machine['threads']} threads on "
        f"{machine['cpus']} CPUs; load average {machine['load_before']} before, {machine['load_after']} after; "
        f"median of {args.repeat}"
    )
    print(
        f"{'workload':<15} {'torchmetrics s':>15} {'irspec s':>10} {'ratio':>8}   values (torchmetrics, irspec)"
    )
    for r in results:
        print(
            f"{r['workload']:<15} {r['torchmetrics_s']:>15.4f} {r['irspec_s']:>10.4f} {r['ratio']:>8.4f}   "
            f"{r['torchmetrics_value']:.6f}, {r['irspec_value']:.6f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
