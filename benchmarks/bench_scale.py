"""Time irspec (and trec_eval, given its path) on generated runs of millions of lines, grouped and shuffled.

    python benchmarks/bench_scale.py [--sizes 5M,20M,100M] [--orders grouped,shuffled]
                                     [--trec-eval PATH] [--memory SIZE] [--dir DIR] [--keep]

For each size, make_collection.py's generator writes the qrels and the run block by block (5,000
queries of 1,000 documents at a time, so 100M lines never need 100M lines of memory): ``run-grouped.txt``
as retrieval systems write runs (a query's lines together, scores descending) and ``run-shuffled.txt``,
the same lines in a uniformly random order (each block's lines are dealt to random bucket files, each
bucket is shuffled in memory and appended). Each contender then runs once per file (``--repeat`` for
more, the best wall time kept) as a separate process on the same files; its wall time is measured
around the child and its peak resident memory is the maximum resident set size that ``/usr/bin/time``
reports for it (else ``os.wait4``'s, which cannot be below this process's own peak, ~20 MiB). One table gives every figure and the ratios to trec_eval, and says whether
irspec printed trec_eval's lines.

Contenders: ``python -m irspec eval ... --format trec`` as irspec is today; with ``--memory SIZE``
also ``irspec eval --memory SIZE`` when this irspec's ``eval`` has that option (the streaming
engine), else a note says it is not there; and ``trec_eval`` when ``--trec-eval PATH`` names a built
binary. Files go to ``DIR/<size>/`` (default under /tmp); what this invocation generated is deleted at
the end unless ``--keep``, and files already there are reused (and left alone).
"""

from __future__ import annotations

import argparse
import multiprocessing
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench import best_of, child_env, compile_bytecode, measure, table  # noqa: E402

DOCS = 1000  # documents per query: a size of N lines is N / DOCS queries
BUCKET_LINES = 5_000_000  # lines per bucket when shuffling: the memory of one shuffle
MEASURES = {
    "official": {"irspec": ["-m", "official"], "trec_eval": []},
    "small": {
        "irspec": ["-m", "ndcg_cut.10", "-m", "map", "-m", "P.10"],
        "trec_eval": ["-m", "ndcg_cut.10", "-m", "map", "-m", "P.10"],
    },
}


def parse_size(text: str) -> int:
    """``5M``, ``100M``, ``500k`` or a plain number of lines; a multiple of :data:`DOCS`."""
    m = re.fullmatch(r"(\d+)([kKmM]?)", text.strip())
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 5M, 500k, 20000000)")
    lines = int(m.group(1)) * {"": 1, "k": 10**3, "m": 10**6}[m.group(2).lower()]
    if lines < DOCS or lines % DOCS:
        raise argparse.ArgumentTypeError(f"{text}: the number of lines must be a multiple of {DOCS}")
    return lines


def size_name(lines: int) -> str:
    return f"{lines // 10**6}M" if lines % 10**6 == 0 else f"{lines // 1000}k"


# --------------------------------------------------------------------------------------------------
# Generating the files


def generate_apart(directory: Path, lines: int, orders: Sequence[str], seed: int) -> list[Path]:
    """:func:`generate` in a fresh interpreter. Linux gives a child the peak resident set of the process
    it was forked from as its own starting peak, so the generator's gigabytes would be counted in every
    contender's peak: the timing process must stay small (~20 MiB with bench.py's imports)."""
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
        return pool.submit(generate, directory, lines, orders, seed).result()


def generate(directory: Path, lines: int, orders: Sequence[str], seed: int) -> list[Path]:
    """Write ``qrels.txt`` and ``run-<order>.txt`` for each order that is not there yet; return the
    files written. Each goes to a temporary name first, so an interrupted run is never reused."""
    import numpy as np
    from make_collection import blocks, write_lines

    wanted = {o: directory / f"run-{o}.txt" for o in orders if not (directory / f"run-{o}.txt").exists()}
    qrels = directory / "qrels.txt"
    if not wanted and qrels.exists():
        return []
    directory.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    n_buckets = -(-lines // BUCKET_LINES)
    buckets = [directory / f".bucket{k}.tmp" for k in range(n_buckets)] if "shuffled" in wanted else []
    files = {"qrels": directory / ".qrels.txt.tmp", **{o: p.with_suffix(".tmp") for o, p in wanted.items()}}
    # closed in the finally below (the buckets also before it, to be read back)
    handles = {k: open(p, "wb") for k, p in files.items()}  # noqa: SIM115  (closed in the finally)
    bucket_handles = [open(b, "wb") for b in buckets]  # noqa: SIM115  (closed in the finally)
    deal = np.random.default_rng(seed + 1)
    try:
        for q, run in blocks(queries=lines // DOCS, docs=DOCS, seed=seed):
            write_lines(q, handles["qrels"])
            if "grouped" in handles:
                write_lines(run, handles["grouped"])
            if bucket_handles:
                which = deal.integers(0, n_buckets, size=run.height)
                for k, f in enumerate(bucket_handles):
                    write_lines(run.filter(which == k), f)
        for f in bucket_handles:
            f.close()
        if "shuffled" in handles:
            for k, b in enumerate(buckets):
                shuffle_lines(b, handles["shuffled"], seed + 2 + k)
                b.unlink()
    finally:
        for f in [*handles.values(), *bucket_handles]:
            f.close()
        for b in buckets:
            b.unlink(missing_ok=True)
    written = []
    for key, tmp in files.items():
        target = qrels if key == "qrels" else wanted[key]
        if key == "qrels" and qrels.exists():
            tmp.unlink()  # the same bytes: one seed, one generator
            continue
        tmp.rename(target)
        written.append(target)
    print(
        f"generated {', '.join(p.name for p in written)} in {time.perf_counter() - t0:.0f} s", file=sys.stderr
    )
    return written


def shuffle_lines(bucket: Path, out: object, seed: int) -> None:
    """Append the lines of ``bucket`` to ``out`` in a random order (whole lines, bytes unchanged)."""
    import polars as pl

    lines = pl.read_csv(
        bucket,
        has_header=False,
        separator="\x1f",
        quote_char=None,
        new_columns=["line"],
        schema={"line": pl.String},
    )
    lines.sample(fraction=1.0, shuffle=True, seed=seed).write_csv(
        out, include_header=False, quote_style="never"
    )


# --------------------------------------------------------------------------------------------------
# Timing


def irspec_has_memory_option() -> bool:
    """Whether this checkout's ``irspec eval`` takes ``--memory`` (the streaming engine)."""
    cmd = [sys.executable, "-m", "irspec", "eval", "--help"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=child_env(), check=False).stdout
    return "--memory" in out


def measure_peak(cmd: list[str], env: dict[str, str] | None = None) -> dict:
    """bench.py's ``measure`` (the child's own peak) in ``env``, this checkout's irspec by default."""
    return measure(cmd, env=env or child_env())


def irspec_trec(qrels: Path, run: Path, measures: Sequence[str]) -> list[str]:
    """``irspec eval QRELS RUN <measures> --format trec`` (trec_eval's lines) as a command line."""
    return [sys.executable, "-m", "irspec", "eval", str(qrels), str(run), *measures, "--format", "trec"]


def contenders(args: argparse.Namespace, qrels: Path, run: Path) -> dict[str, list[str]]:
    """Name -> command line, for one file and the chosen measures."""
    flags = MEASURES[args.measures]
    irspec = irspec_trec(qrels, run, flags["irspec"])
    out = {"irspec": irspec}
    if args.memory and args.memory_supported:
        out[f"irspec --memory {args.memory}"] = [*irspec, "--memory", args.memory]
    if args.trec_eval:
        out["trec_eval"] = [args.trec_eval, *flags["trec_eval"], str(qrels), str(run)]
    return out


def summary(stdout: str) -> dict[tuple[str, str], str]:
    """trec_eval's lines ``measure all value`` as ``{(measure, query): value}``."""
    out = {}
    for line in stdout.splitlines():
        fields = line.split()
        if len(fields) == 3:
            out[(fields[0], fields[1])] = fields[2]
    return out


def same_output(ours: str, theirs: str) -> str:
    """``yes`` when irspec printed trec_eval's lines (order aside), else which measures differ."""
    a, b = summary(ours), summary(theirs)
    if a == b:
        return "yes"
    differ = sorted({k[0] for k in a.keys() ^ b.keys()} | {k[0] for k in a.keys() & b.keys() if a[k] != b[k]})
    return "NO: " + ", ".join(differ)


def time_file(args: argparse.Namespace, size: str, order: str, qrels: Path, run: Path) -> list[list[str]]:
    results = {}
    for name, cmd in contenders(args, qrels, run).items():
        best = best_of(lambda: measure_peak(cmd), args.repeat, f"{name} on {run}")  # noqa: B023 (called at once)
        if best is not None:
            results[name] = best
            print(
                f"  {size} {order} {name}: {best['wall']:.1f} s, {best['peak_mib']:.0f} MiB", file=sys.stderr
            )
    base = results.get("trec_eval")
    rows = []
    for name, r in results.items():
        ratios = ["-", "-", "-"]
        if base is not None:
            same = "-" if name == "trec_eval" else same_output(r["stdout"], base["stdout"])
            ratios = [f"{r['wall'] / base['wall']:.2f}", f"{r['peak_mib'] / base['peak_mib']:.2f}", same]
        rows.append([size, order, name, f"{r['wall']:.1f}", f"{r['peak_mib']:.0f}", *ratios])
    return rows


def remove(files: list[Path]) -> list[Path]:
    """Delete ``files`` and then their directories if that leaves them empty; returns ``[]``."""
    for p in files:
        p.unlink(missing_ok=True)
    for d in {p.parent for p in files}:
        if d.is_dir() and not any(d.iterdir()):
            d.rmdir()
    return []


def machine() -> str:
    """Cores, memory and CPU model of this machine, for the record."""
    import os

    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), model)
        with open("/proc/meminfo") as f:
            mem = int(next(ln.split()[1] for ln in f if ln.startswith("MemTotal"))) / 2**20
    except OSError:
        mem = float("nan")
    return f"{os.cpu_count()} cores, {mem:.0f} GiB, {model}"


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--sizes", default="5M,20M,100M", help="run sizes in lines, comma-separated (default 5M,20M,100M)"
    )
    ap.add_argument("--orders", default="grouped,shuffled", help="grouped, shuffled or both (default)")
    ap.add_argument(
        "--measures",
        choices=sorted(MEASURES),
        default="official",
        help="official (trec_eval's default set) or small (nDCG@10, AP, P@10)",
    )
    ap.add_argument("--trec-eval", metavar="PATH", help="a built trec_eval binary to time on the same files")
    ap.add_argument(
        "--memory", metavar="SIZE", help="also run irspec eval --memory SIZE, if this irspec has it"
    )
    ap.add_argument(
        "--dir", default="/tmp/irspec-scale", help="where the files go (default /tmp/irspec-scale)"
    )
    ap.add_argument("--keep", action="store_true", help="keep the files this invocation generates")
    ap.add_argument(
        "--repeat", type=int, default=1, help="runs per contender and file; the best wall time is kept"
    )
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    try:
        sizes = [parse_size(s) for s in args.sizes.split(",")]
    except argparse.ArgumentTypeError as e:
        ap.error(str(e))
    orders = [o.strip() for o in args.orders.split(",")]
    if not orders or set(orders) - {"grouped", "shuffled"}:
        ap.error(f"--orders takes grouped, shuffled or both, not {args.orders!r}")
    if args.trec_eval and shutil.which(args.trec_eval) is None:
        ap.error(f"--trec-eval {args.trec_eval}: not an executable")
    args.memory_supported = bool(args.memory) and irspec_has_memory_option()
    if args.memory and not args.memory_supported:
        print(
            f"note: this irspec's eval has no --memory option; --memory {args.memory} is not timed",
            file=sys.stderr,
        )
    print(f"machine: {machine()}", file=sys.stderr)
    compile_bytecode()
    rows: list[list[str]] = []
    generated: list[Path] = []
    try:
        for lines in sizes:
            directory = Path(args.dir) / size_name(lines)
            generated += generate_apart(directory, lines, orders, args.seed)
            for order in orders:
                run = directory / f"run-{order}.txt"
                rows += time_file(args, size_name(lines), order, directory / "qrels.txt", run)
            if not args.keep:  # before the next size: 100M lines take ~4 GB of disk per file
                generated = remove(generated)
    finally:
        if not args.keep:
            remove(generated)
    print(f"{args.measures} measures; peak = the child's maximum resident set size; ratios to trec_eval")
    header = ["lines", "order", "contender", "wall s", "peak MiB", "x te wall", "x te peak", "same output"]
    print(table(header, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
