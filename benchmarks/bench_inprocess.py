"""Time evaluation in memory, where most Python users evaluate: irspec against pytrec_eval, ir_measures
and ranx, side by side in one invocation, with ratios.

    python benchmarks/bench_inprocess.py [--queries 7000] [--docs 1000] [--repeat 3] [--peers ir_measures,ranx]

Workloads (4 measures: nDCG@10, AP, R@100, P@5; pytrec_eval's ndcg_cut.10, map, recall.100, P.5):

- ``dicts``: a BEIR/MTEB-shaped run (queries × docs, random float scores, ~30 graded judgments a
  query) as pytrec_eval's dicts; timed: constructing the evaluator and evaluating (pytrec_eval's
  ``RelevanceEvaluator(qrels, measures).evaluate(run)``; ``irspec.evaluate``; ``irspec.compat.pytrec_eval``;
  ir_measures' ``calc_aggregate``; ranx's ``Qrels``, ``Run`` and ``evaluate``, its JIT compiled first).
- ``frame``: the same run as a pandas DataFrame with PyTerrier's columns (qid, docno, score; qrels qid,
  docno, label): ``irspec.evaluate`` against ir_measures' ``calc_aggregate``.
- ``reuse``: 1,000 × 100 dicts evaluated again and again by one evaluator (qrels read once); timed per
  ``evaluate`` call: ``irspec.Evaluator`` against pytrec_eval's ``RelevanceEvaluator``.
- ``topk``: the dicts' data as a retriever's top-k arrays (query ids, doc ids as integers, scores as
  float32, each row sorted by score as FAISS returns it, and shuffled): ``Evaluator.evaluate_topk``
  (evaluator built beforehand) against pytrec_eval on the dicts (construction + evaluate).

Each (workload, tool) runs in its own child process, so peak memory (the child's maximum resident set
size less its size once the data was made) belongs to that tool alone; the data are made in the child
from a fixed seed, untimed. Tools alternate within each repetition and the median of ``--repeat`` runs
is reported, with the ratio to the reference of its workload: the machine is shared, so only ratios
measured side by side mean much. Beside the wall-time ratio, the ratio of CPU time (the child's
``time.process_time``, every thread's), steadier when other jobs compete for the cores.
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

ROOT = Path(__file__).resolve().parent.parent
PYTREC = {"ndcg_cut.10", "map", "recall.100", "P.5"}
IRSPEC = "nDCG@10, AP, R@100, P@5"


def make(queries: int, docs: int, seed: int = 0) -> tuple[dict, dict]:
    """``queries`` × ``docs`` distinct documents with random float scores and ~30 graded judgments a
    query, half of them on retrieved documents: BEIR's shape (sparse judgments, a deep run)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    qrels: dict = {}
    run: dict = {}
    for i in range(queries):
        q = f"q{i}"
        ids = rng.choice(5_000_000, docs, replace=False)
        scores = rng.random(docs)
        run[q] = dict(zip([f"d{d}" for d in ids.tolist()], scores.tolist(), strict=True))
        judged = rng.choice(ids, 15).tolist() + rng.integers(0, 5_000_000, 15).tolist()
        qrels[q] = {
            f"d{d}": int(label)
            for d, label in zip(judged, rng.integers(0, 3, len(judged)).tolist(), strict=True)
        }
    return qrels, run


def _status(field: str) -> float:
    """A size from /proc/self/status (``VmRSS``, ``VmHWM``), MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def start_peak() -> float:
    """Reset this process's peak resident size to its current size (Linux: clear_refs 5) and return the
    current size, so that the peak read later is the tool's alone, not the data generation's."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass  # not Linux: the peak then includes making the data
    return _status("VmRSS")


def peak_mib() -> float:
    """This process's peak resident set size since :func:`start_peak` (VmHWM), MiB."""
    return _status("VmHWM")


def child(workload: str, tool: str, queries: int, docs: int) -> dict:
    """Run one (workload, tool) in this process; its seconds and extra peak memory."""
    import warnings

    import numpy as np

    warnings.simplefilter("ignore")
    if workload == "reuse":
        queries, docs = 1000, 100
    warm_up(tool)
    qrels, run = make(queries, docs)
    before = start_peak()
    calls = 1
    if workload == "dicts":
        if tool == "pytrec_eval":
            import pytrec_eval

            t, c = time.perf_counter(), time.process_time()
            pytrec_eval.RelevanceEvaluator(qrels, PYTREC).evaluate(run)
        elif tool == "irspec":
            import irspec

            t, c = time.perf_counter(), time.process_time()
            irspec.evaluate(qrels, run, IRSPEC, judged_warning=None).aggregate()
        elif tool == "irspec.compat":
            import irspec.compat.pytrec_eval as compat

            t, c = time.perf_counter(), time.process_time()
            compat.RelevanceEvaluator(qrels, PYTREC).evaluate(run)
        elif tool == "ir_measures":
            import ir_measures
            from ir_measures import AP, P, R, nDCG

            t, c = time.perf_counter(), time.process_time()
            ir_measures.calc_aggregate([nDCG @ 10, AP, R @ 100, P @ 5], qrels, run)
        elif tool == "ranx":
            from ranx import Qrels, Run, evaluate

            t, c = time.perf_counter(), time.process_time()
            evaluate(Qrels(qrels), Run(run), ["ndcg@10", "map", "recall@100", "precision@5"])
        else:
            raise SystemExit(f"unknown tool {tool}")
    elif workload == "frame":
        import pandas as pd

        run_df = pd.DataFrame(
            [(q, d, s) for q, ds in run.items() for d, s in ds.items()], columns=["qid", "docno", "score"]
        )
        qrels_df = pd.DataFrame(
            [(q, d, lab) for q, ds in qrels.items() for d, lab in ds.items()],
            columns=["qid", "docno", "label"],
        )
        del run, qrels
        before = start_peak()
        if tool == "ir_measures":
            import ir_measures
            from ir_measures import AP, P, R, nDCG

            t, c = time.perf_counter(), time.process_time()
            ir_measures.calc_aggregate(
                [nDCG @ 10, AP, R @ 100, P @ 5],
                qrels_df.rename(columns={"qid": "query_id", "docno": "doc_id", "label": "relevance"}),
                run_df.rename(columns={"qid": "query_id", "docno": "doc_id"}),
            )
        elif tool == "irspec":
            import irspec

            t, c = time.perf_counter(), time.process_time()
            irspec.evaluate(qrels_df, run_df, IRSPEC, judged_warning=None).aggregate()
        else:
            raise SystemExit(f"unknown tool {tool}")
    elif workload == "reuse":
        calls = 20
        if tool == "pytrec_eval":
            import pytrec_eval

            ev = pytrec_eval.RelevanceEvaluator(qrels, PYTREC)
            ev.evaluate(run)
            t, c = time.perf_counter(), time.process_time()
            for _ in range(calls):
                ev.evaluate(run)
        elif tool == "irspec":
            import irspec

            ev = irspec.Evaluator(qrels, IRSPEC, judged_warning=None)
            ev.evaluate(run)
            t, c = time.perf_counter(), time.process_time()
            for _ in range(calls):
                ev.evaluate(run).aggregate()
        else:
            raise SystemExit(f"unknown tool {tool}")
    elif workload == "topk":
        if tool == "pytrec_eval":
            import pytrec_eval

            t, c = time.perf_counter(), time.process_time()
            pytrec_eval.RelevanceEvaluator(qrels, PYTREC).evaluate(run)
        else:
            import irspec

            qids = np.array(list(run))
            ids = np.array([[int(d[1:]) for d in ds] for ds in run.values()], dtype=np.int64)
            scores = np.array([list(ds.values()) for ds in run.values()], dtype=np.float32)
            if tool == "irspec sorted":
                order = np.argsort(-scores, axis=1, kind="stable")
                ids, scores = np.take_along_axis(ids, order, 1), np.take_along_axis(scores, order, 1)
            qrels = {q: {d[1:]: lab for d, lab in ds.items()} for q, ds in qrels.items()}
            del run
            ev = irspec.Evaluator(qrels, IRSPEC, judged_warning=None)
            before = start_peak()
            t, c = time.perf_counter(), time.process_time()
            ev.evaluate_topk(qids, ids, scores).aggregate()
    else:
        raise SystemExit(f"unknown workload {workload}")
    seconds = (time.perf_counter() - t) / calls
    cpu = (time.process_time() - c) / calls
    return {"seconds": seconds, "cpu": cpu, "peak_mib": peak_mib() - before}


def warm_up(tool: str) -> None:
    """Each tool's one-time costs paid before the clock starts, as in a long-lived process: imports,
    irspec's registry and grammar, ranx's JIT compilation of the same measures."""
    qrels, run = {"q": {"a": 1, "b": 0}}, {"q": {"a": 1.0, "b": 0.5, "c": 0.2}}
    if tool == "pytrec_eval":
        import pytrec_eval

        pytrec_eval.RelevanceEvaluator(qrels, PYTREC).evaluate(run)
    elif tool.startswith("irspec"):
        import irspec

        irspec.Evaluator(qrels, IRSPEC, judged_warning=None).evaluate_topk(["q"], [["a", "c"]], [[1.0, 0.5]])
        irspec.evaluate(qrels, run, IRSPEC, judged_warning=None)
        if tool == "irspec.compat":
            import irspec.compat.pytrec_eval as compat

            compat.RelevanceEvaluator(qrels, PYTREC).evaluate(run)
    elif tool == "ir_measures":
        import ir_measures
        from ir_measures import AP, P, R, nDCG

        ir_measures.calc_aggregate([nDCG @ 10, AP, R @ 100, P @ 5], qrels, run)
    elif tool == "ranx":
        from ranx import Qrels, Run, evaluate

        evaluate(Qrels(qrels), Run(run), ["ndcg@10", "map", "recall@100", "precision@5"])


TOOLS = {
    "dicts": ["pytrec_eval", "irspec", "irspec.compat", "ir_measures", "ranx"],
    "frame": ["ir_measures", "irspec"],
    "reuse": ["pytrec_eval", "irspec"],
    "topk": ["pytrec_eval", "irspec shuffled", "irspec sorted"],
}
REFERENCE = {"dicts": "pytrec_eval", "frame": "ir_measures", "reuse": "pytrec_eval", "topk": "pytrec_eval"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=7000)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workloads", default="dicts,frame,reuse,topk")
    ap.add_argument(
        "--peers", default="ir_measures,ranx", help="optional peers to time (installed separately)"
    )
    ap.add_argument(
        "--ranx-path",
        help="a folder ranx was installed into (pip install --target DIR ranx), on the path of "
        "ranx's process only: installed beside ir_measures, ranx changes which provider ir_measures uses",
    )
    ap.add_argument("--child", nargs=2, metavar=("WORKLOAD", "TOOL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(*args.child, args.queries, args.docs)))
        return
    peers = set(filter(None, args.peers.split(",")))
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    )
    for workload in args.workloads.split(","):
        tools = [
            t
            for t in TOOLS[workload]
            if t in ("pytrec_eval", REFERENCE[workload]) or t.startswith("irspec") or t in peers
        ]
        times: dict[str, list[float]] = {t: [] for t in tools}
        cpus: dict[str, list[float]] = {t: [] for t in tools}
        peaks: dict[str, float] = dict.fromkeys(tools, 0.0)
        failed: dict[str, str] = {}
        for _ in range(args.repeat):
            for tool in tools:
                if tool in failed:
                    continue
                cmd = [
                    sys.executable,
                    __file__,
                    "--queries",
                    str(args.queries),
                    "--docs",
                    str(args.docs),
                    "--child",
                    workload,
                    tool,
                ]
                own = env
                if tool == "ranx" and args.ranx_path:
                    own = dict(env, PYTHONPATH=os.pathsep.join([env["PYTHONPATH"], args.ranx_path]))
                proc = subprocess.run(cmd, check=False, capture_output=True, text=True, env=own)
                if proc.returncode != 0:
                    failed[tool] = (proc.stderr.strip().splitlines() or ["?"])[-1][:200]
                    continue
                out = json.loads(proc.stdout.strip().splitlines()[-1])
                times[tool].append(out["seconds"])
                cpus[tool].append(out["cpu"])
                peaks[tool] = max(peaks[tool], out["peak_mib"])
        shape = "1,000 x 100, per call" if workload == "reuse" else f"{args.queries:,} x {args.docs:,}"
        print(f"\n{workload} ({shape}; median of {args.repeat}; ratio to {REFERENCE[workload]})")
        ref = statistics.median(times[REFERENCE[workload]]) if times.get(REFERENCE[workload]) else None
        ref_cpu = statistics.median(cpus[REFERENCE[workload]]) if cpus.get(REFERENCE[workload]) else None
        for tool in tools:
            if tool in failed:
                print(f"  {tool:18s} failed: {failed[tool]}")
                continue
            med = statistics.median(times[tool])
            ratio = f"{med / ref:5.2f}x" if ref else "  -  "
            cpu = statistics.median(cpus[tool])
            cpu_ratio = f"{cpu / ref_cpu:5.2f}x" if ref_cpu else "  -  "
            unit = f"{med * 1000:8.1f} ms" if med < 1 else f"{med:8.2f} s "
            print(
                f"  {tool:18s} {unit}  {ratio}   CPU {cpu_ratio}   peak +{peaks[tool]:6.0f} MiB"
                f"   (runs: {', '.join(f'{x:.3f}' for x in times[tool])})"
            )


if __name__ == "__main__":
    main()
