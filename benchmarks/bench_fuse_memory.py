"""`irspec fuse`'s peak memory and time at several memory budgets, against another checkout's.

    python benchmarks/bench_fuse_memory.py [--runs 2] [--queries 2000] [--docs 1000]
                                           [--budgets default,1GiB,250MB,50MiB] [--baseline DIR]

``--runs`` TREC runs of ``--queries`` x ``--docs`` lines (random scores; each query's documents drawn
from a pool of 100,000, so the runs share some) are fused by RRF at each budget, each fusion a process
of its own, its peak resident memory taken by ``/usr/bin/time``. With ``--baseline DIR`` (a checkout of
another commit, e.g. ``git worktree add /tmp/old <commit>``) its code is run the same way, side by side,
and every output is checked to hold the same lines as this checkout's fused whole; "same file" says
whether it is the same byte for byte. Files go to ``--dir`` (default /tmp/irspec-fuse-memory).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench import compile_bytecode, table  # noqa: E402
from bench_scale import machine, measure_peak  # noqa: E402


def make(folder: Path, runs: int, queries: int, docs: int) -> list[Path]:
    """The runs, written once (kept for the next invocation with the same shape)."""
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for r in range(runs):
        path = folder / f"r{r}-{queries}x{docs}.run"
        if not path.exists():
            rng = np.random.default_rng(r)
            with path.open("w") as f:
                for q in range(queries):
                    ids = rng.choice(100_000, docs, replace=False).tolist()
                    scores = sorted(rng.random(docs).tolist(), reverse=True)
                    f.write(
                        "".join(
                            f"q{q} Q0 d{d} {i + 1} {s:.6f} r{r}\n"
                            for i, (d, s) in enumerate(zip(ids, scores, strict=True))
                        )
                    )
        paths.append(path)
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--budgets", default="default,1GiB,250MB,50MiB")
    ap.add_argument("--baseline", help="another checkout, run side by side (its code on PYTHONPATH)")
    ap.add_argument("--dir", default="/tmp/irspec-fuse-memory")
    args = ap.parse_args()
    compile_bytecode()
    folder = Path(args.dir)
    paths = make(folder, args.runs, args.queries, args.docs)
    text = sum(p.stat().st_size for p in paths) / 2**20
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.1f}")
    print(f"{args.runs} runs x {args.queries} queries x {args.docs} documents: {text:.0f} MiB of text")
    checkouts = {"this checkout": None, **({"baseline": args.baseline} if args.baseline else {})}
    rows, reference = [], None
    for budget in args.budgets.split(","):
        for label, root in checkouts.items():
            out = folder / f"fused-{label.replace(' ', '-')}-{budget}.run"
            cmd = [
                sys.executable,
                "-m",
                "irspec",
                "fuse",
                *map(str, paths),
                "--method",
                "rrf",
                "-o",
                str(out),
            ]
            if budget != "default":
                cmd += ["--memory", budget]
            env = dict(os.environ, PYTHONPATH=root) if root else None  # None: this checkout
            r = measure_peak(cmd, env)
            if r["rc"] != 0:
                sys.exit(f"{label} at {budget} failed: {r['stderr'][-2000:]}")
            if reference is None:
                reference = out
            same_lines = sorted(out.read_text().splitlines()) == sorted(reference.read_text().splitlines())
            rows.append([
                budget, label, f"{r['wall']:.2f}", f"{r['peak_mib']:.0f}", f"{r['peak_mib'] / text:.1f}",
                "yes" if filecmp.cmp(out, reference, shallow=False) else ("lines only" if same_lines else "NO"),
            ])  # fmt: skip
    print(table(["budget", "code", "wall s", "peak MiB", "x text", "same file"], rows))


if __name__ == "__main__":
    main()
