"""Time the ranx drop-in (``irspec.compat.ranx``) against ranx 0.3.21 itself, side by side, with ratios.

    python benchmarks/bench_ranx.py --ranx-path DIR [--queries 1000] [--docs 100] [--runs 5] [--repeat 3]

The same code for both, ``from irspec.compat import ranx`` or ``import ranx``: judgments of ``--queries``
queries (20 judged documents each, labels 0 to 2) and ``--runs`` runs of ``--docs`` documents per query
(random scores, a fifth of them tied in pairs), made from a fixed seed as dicts in each process. Each
repetition starts, per tool, a fresh process for ``evaluate`` and another for ``compare``, and times:

- ``build``: ``Qrels`` and the runs' ``Run`` objects made from the dicts (in the ``evaluate`` process);
- ``evaluate first``, ``compare first``: the first call of the process (one run and five metrics:
  ndcg@10, map@100, mrr, precision@5, recall@100; every run, the same metrics, the t-test): ranx loads
  or compiles its numba functions here;
- ``evaluate warm``, ``compare warm``: the same call again in the same process on new ``Run`` objects
  made from the same dicts (outside the timing), so that nothing a run object keeps from an earlier
  call is reused; the ``Qrels`` object is the same, as in a user's loop. Garbage is collected before
  each timed call (as ``timeit`` does), so that the cost of the objects made before it is not counted.

ranx runs from the folder ``--ranx-path`` (``pip install --target DIR ranx==0.3.21``), on its
process's path only (beside ir_measures it changes ir_measures' providers). numba's on-disk cache is
as the folder has it (warm after the first use of ranx: the untimed first process makes sure); with
``--cold-numba`` each ranx process gets an empty cache directory, so that the first calls compile. The
median of ``--repeat`` repetitions is reported, each tool's processes alternating; the machine is
shared, so only the ratios, measured side by side, mean much.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
METRICS = ["ndcg@10", "map@100", "mrr", "precision@5", "recall@100"]
STEPS = ["build", "evaluate first", "evaluate warm", "compare first", "compare warm"]


def data(queries: int, docs: int, runs: int, seed: int = 0) -> tuple[dict, list[dict]]:
    """Judgments and runs as dicts, from ``seed``."""
    import numpy as np

    rng = np.random.default_rng(seed)
    qrels = {
        f"q{q}": {f"d{d}": int(rng.integers(0, 3)) for d in rng.choice(10 * docs, 20, replace=False)}
        for q in range(queries)
    }
    out = []
    for _ in range(runs):
        run = {}
        for q in range(queries):
            ids = rng.choice(10 * docs, docs, replace=False)
            scores = np.round(rng.random(docs), 6)
            scores[1 : docs // 5 : 2] = scores[0 : docs // 5 - 1 : 2]  # a fifth tied in pairs
            run[f"q{q}"] = {f"d{d}": float(s) for d, s in zip(ids, scores, strict=True)}
        out.append(run)
    return qrels, out


def child(tool: str, call: str, queries: int, docs: int, runs: int) -> None:
    """One repetition of ``call`` (evaluate or compare), in this (child) process: prints the seconds of
    each step as JSON."""
    import warnings

    warnings.simplefilter("ignore")
    if tool == "irspec":
        from irspec.compat import ranx
    else:
        import ranx  # type: ignore[import-not-found, no-redef]
    qrels_dict, run_dicts = data(queries, docs, runs)

    def made() -> list:
        return [ranx.Run(r, name=f"run{i}") for i, r in enumerate(run_dicts)]

    def timed() -> float:
        runs = made()  # new Run objects each time: nothing a run keeps from an earlier call is reused
        gc.collect()  # the garbage of making them is not the call's (timeit's practice)
        start = time.perf_counter()
        if call == "evaluate":
            ranx.evaluate(qrels, runs[0], METRICS)
        else:
            ranx.compare(qrels, runs, METRICS, max_p=0.01, stat_test="student")
        return time.perf_counter() - start

    start = time.perf_counter()
    qrels = ranx.Qrels(qrels_dict)
    made()
    built = time.perf_counter() - start
    print(json.dumps({"build": built, f"{call} first": timed(), f"{call} warm": timed()}))


def repetition(tool: str, call: str, args: argparse.Namespace, env: dict[str, str]) -> dict[str, float]:
    cmd = [sys.executable, __file__, "--ranx-path", args.ranx_path, "--child", tool, call]
    cmd += ["--queries", str(args.queries), "--docs", str(args.docs), "--runs", str(args.runs)]
    with tempfile.TemporaryDirectory() as cache:
        if tool == "ranx" and args.cold_numba:
            env = dict(env, NUMBA_CACHE_DIR=cache)
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{tool} failed: {proc.stderr.strip()[-800:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cold-numba", action="store_true", help="an empty numba cache for each ranx process")
    ap.add_argument(
        "--ranx-path",
        required=True,
        help="a folder ranx 0.3.21 was installed into (pip install --target DIR)",
    )
    ap.add_argument("--child", nargs=2, metavar=("TOOL", "CALL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child, args.queries, args.docs, args.runs)
        return
    base = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(ROOT)]))
    )
    env = {
        "irspec": base,
        "ranx": dict(base, PYTHONPATH=os.pathsep.join([base["PYTHONPATH"], args.ranx_path])),
    }
    if not args.cold_numba:
        for call in ("evaluate", "compare"):
            repetition("ranx", call, args, env["ranx"])  # untimed: numba's on-disk cache filled
    found: dict[str, dict[str, list[float]]] = {step: {"irspec": [], "ranx": []} for step in STEPS}
    for _ in range(args.repeat):
        for call in ("evaluate", "compare"):
            for tool in ("irspec", "ranx"):
                for step, took in repetition(tool, call, args, env[tool]).items():
                    if step != "build" or call == "evaluate":
                        found[step][tool].append(took)
    cache = "an empty numba cache per process" if args.cold_numba else "numba's cache warm"
    print(
        f"{args.runs} runs x {args.queries} queries x {args.docs} documents, {len(METRICS)} metrics; "
        f"median of {args.repeat} fresh processes per tool ({cache}); load {os.getloadavg()[0]:.1f}"
    )
    print(f"{'step':<15} {'drop-in':>9} {'ranx':>9} {'ratio':>7}")
    for step in STEPS:
        ours, theirs = statistics.median(found[step]["irspec"]), statistics.median(found[step]["ranx"])
        print(f"{step:<15} {ours:>8.3f}s {theirs:>8.3f}s {ours / theirs:>6.2f}x")


if __name__ == "__main__":
    main()
