"""Time fusion: irspec against ranx 0.3.21, side by side, with ratios.

    python benchmarks/bench_fusion.py --ranx-path DIR [--queries 1000] [--docs 1000] [--methods rrf,wsum]

Three runs of ``--queries`` × ``--docs`` (TREC files, random scores, documents drawn from a pool five
times a run's depth, so that runs overlap in part), made once from a fixed seed in ``--data``
(``bench-data/fusion`` by default). Two workloads, each tool in a process of its own:

- ``process``: the whole process, as a user pays it: start, read the three files, fuse, write the fused
  run as TREC text. irspec: ``irspec fuse a b c --method SPEC -o OUT``; ranx: ``Run.from_file``,
  ``fuse`` and ``Run.save`` in a fresh ``python`` (numba's compilation included, as every new process
  pays it; its on-disk cache is warm after the first run, which the first, untimed, repetition makes).
- ``again``: the second ``fuse`` call in one process, the runs read already (irspec: ``irspec.fuse`` on
  three :class:`irspec.data.Run`; ranx: ``fuse`` on three ``ranx.Run``), as wall time and as the
  process's CPU time (``again cpu``: ranx's numba functions use several threads, as polars does).
  ``--again-only`` times this workload alone (ranx's whole process takes a minute on a loaded machine).

ranx runs from the folder ``--ranx-path`` (``pip install --target DIR ranx==0.3.21``), on the path of
its process only: installed beside ir_measures, ranx changes which provider ir_measures uses. Methods:
``rrf`` (k = 60) and ``wsum`` (weights 0.3, 0.3, 0.4, min-max). The median of ``--repeat`` runs is
reported; the machine is shared, so only ratios measured side by side mean much.
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
SPECS = {
    "rrf": ("rrf(k=60)", {"method": "rrf", "norm": "min-max", "params": {"k": 60}}),
    "wsum": (
        "wsum(weights=[0.3,0.3,0.4], norm=min-max)",
        {"method": "wsum", "norm": "min-max", "params": {"weights": [0.3, 0.3, 0.4]}},
    ),
}


def make(folder: Path, queries: int, docs: int, seed: int = 0) -> list[Path]:
    """Three TREC runs in ``folder`` (made once: kept when they exist with the same shape)."""
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    stamp = folder / "shape.json"
    paths = [folder / f"run{i}.run" for i in range(3)]
    if stamp.exists() and json.loads(stamp.read_text()) == [queries, docs, seed]:
        return paths
    rng = np.random.default_rng(seed)
    for i, path in enumerate(paths):
        lines = []
        for q in range(queries):
            ids = rng.choice(5 * docs, docs, replace=False).tolist()
            scores = sorted(rng.random(docs).tolist(), reverse=True)
            lines.extend(
                f"q{q} Q0 d{d} {r + 1} {s!r} run{i}\n"
                for r, (d, s) in enumerate(zip(ids, scores, strict=True))
            )
        path.write_text("".join(lines))
    stamp.write_text(json.dumps([queries, docs, seed]))
    return paths


def child(workload: str, tool: str, method: str, paths: list[str], out: str) -> None:
    """One timing, in this (child) process; prints its seconds as JSON."""
    spec, ranx_args = SPECS[method]
    if tool == "irspec":
        import irspec

        runs = [irspec.read_run(p) for p in paths]
        irspec.fuse(runs, spec)
        start, cpu = time.perf_counter(), time.process_time()
        irspec.fuse(runs, spec)
    else:
        from ranx import Run, fuse

        runs = [Run.from_file(p, kind="trec") for p in paths]
        fuse(runs, **ranx_args)
        start, cpu = time.perf_counter(), time.process_time()
        fuse(runs, **ranx_args)
    print(json.dumps([time.perf_counter() - start, time.process_time() - cpu]))


RANX_PROCESS = """
import sys, warnings
warnings.simplefilter("ignore")
from ranx import Run, fuse
args = {args}
runs = [Run.from_file(p, kind="trec") for p in sys.argv[2:]]
fuse(runs, **args).save(sys.argv[1], kind="trec")
"""


def process(tool: str, method: str, paths: list[str], out: str, env: dict) -> float:
    spec, ranx_args = SPECS[method]
    if tool == "irspec":
        cmd = [sys.executable, "-m", "irspec", "fuse", *paths, "--method", spec, "-o", out]
    else:
        cmd = [sys.executable, "-c", RANX_PROCESS.format(args=repr(ranx_args)), out, *paths]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{tool} failed: {proc.stderr.strip()[-500:]}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--methods", default="rrf,wsum")
    ap.add_argument("--data", default=str(ROOT / "bench-data" / "fusion"))
    ap.add_argument(
        "--ranx-path",
        required=True,
        help="a folder ranx 0.3.21 was installed into (pip install --target DIR ranx==0.3.21)",
    )
    ap.add_argument("--again-only", action="store_true", help="time the second call only")
    ap.add_argument("--child", nargs=3, metavar=("WORKLOAD", "TOOL", "METHOD"), help=argparse.SUPPRESS)
    ap.add_argument("paths", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child, args.paths, "")
        return
    paths = [str(p) for p in make(Path(args.data), args.queries, args.docs)]
    out = str(Path(args.data) / "fused.run")
    base = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(ROOT)]))
    )
    env = {
        "irspec": base,
        "ranx": dict(base, PYTHONPATH=os.pathsep.join([base["PYTHONPATH"], args.ranx_path])),
    }
    print(f"3 runs x {args.queries} queries x {args.docs} documents; median of {args.repeat}")
    print(f"{'method':<6} {'workload':<9} {'irspec':>9} {'ranx':>9} {'ratio':>7}")
    for method in args.methods.split(","):
        for tool in ("irspec", "ranx") if not args.again_only else ():
            process(tool, method, paths, out, env[tool])  # untimed: numba's cache, the files' pages warm
        times: dict[str, dict[str, list[float]]] = {"again": {}, "again cpu": {}}
        if not args.again_only:
            times = {"process": {}, **times}
        for _ in range(args.repeat):
            for tool in ("irspec", "ranx"):
                if not args.again_only:
                    times["process"].setdefault(tool, []).append(process(tool, method, paths, out, env[tool]))
                cmd = [
                    sys.executable,
                    __file__,
                    "--ranx-path",
                    args.ranx_path,
                    "--child",
                    "again",
                    tool,
                    method,
                ]
                proc = subprocess.run(
                    [*cmd, *paths], capture_output=True, text=True, env=env[tool], check=False
                )
                if proc.returncode != 0:
                    raise SystemExit(f"{tool} failed: {proc.stderr.strip()[-500:]}")
                wall, cpu = json.loads(proc.stdout.strip().splitlines()[-1])
                times["again"].setdefault(tool, []).append(wall)
                times["again cpu"].setdefault(tool, []).append(cpu)
        for workload, found in times.items():
            ours, theirs = statistics.median(found["irspec"]), statistics.median(found["ranx"])
            print(f"{method:<6} {workload:<9} {ours:>8.2f}s {theirs:>8.2f}s {ours / theirs:>6.2f}x")


if __name__ == "__main__":
    main()
