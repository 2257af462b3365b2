"""Time whole evaluation processes on a synthetic collection: irspec against pytrec_eval and trec_eval.

    python benchmarks/bench.py [--queries 5000 --docs 1000] [--keep DIR] [--repeat 3]
    python benchmarks/bench.py --readers [--keep DIR]

The first form generates a collection with make_collection.py (or reuses ``DIR/qrels.txt`` and
``DIR/run.txt`` when ``--keep DIR`` already holds them), then runs each contender as a separate
process from the files, for two measure sets: ``nDCG@10 AP P@10`` and trec_eval's default
("official") set. Each process is timed from spawn to exit (``time.perf_counter``) and its peak
resident memory is the child's own, read by GNU ``time`` (``os.wait4``'s where it is not installed). The table
gives the best wall time of ``--repeat`` runs, the largest peak and the ratio to pytrec_eval's time.

Contenders: ``python -m irspec eval`` (if it fails, its error is printed and the benchmark goes on),
pytrec_eval (benchmarks/pytrec_eval_baseline.py: Python parsing into dicts, then
``RelevanceEvaluator``), and trec_eval's C binary when ``trec_eval`` is on PATH.

``--readers`` times only reading the run file, each reader in its own process (so peaks are
separate): irspec.data.read_run (plain and gzip), polars ``read_csv`` with no validation, a plain
``bytes.split``, the usual Python loop into a dict, and pandas (if installed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

SETS = {
    "nDCG@10 AP P@10": {
        "irspec": ["-m", "nDCG@10", "-m", "AP", "-m", "P@10"],
        "pytrec_eval": ["--set", "small"],
        "trec_eval": ["-m", "ndcg_cut.10", "-m", "map", "-m", "P.10"],
    },
    "official": {
        "irspec": ["-m", "official"],
        "pytrec_eval": ["--set", "official"],
        "trec_eval": [],
    },
}


GNU_TIME = "/usr/bin/time"


def measure(cmd: list[str], *, env: dict[str, str] | None = None) -> dict:
    """Run ``cmd`` to completion; wall and CPU seconds, peak RSS in MiB, exit status, stdout and stderr.

    The peak is the child's own, read by GNU ``time`` where it is installed: ``os.wait4``'s is at least
    the peak of this process (Linux keeps the high-water mark of the memory a child is forked with across
    its exec), so after generating a collection here every smaller contender read as this process's
    peak."""
    if not Path(GNU_TIME).exists():
        return _measured(cmd, env)
    with tempfile.NamedTemporaryFile("r", suffix=".maxrss") as f:
        r = _measured([GNU_TIME, "-f", "%M", "-o", f.name, *cmd], env)
        kib = f.read().split()
    if r["rc"] == 0 and kib and kib[-1].isdigit():
        r["peak_mib"] = int(kib[-1]) / 1024
    return r


def _measured(cmd: list[str], env: dict[str, str] | None) -> dict:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        # ru_maxrss is in KiB on Linux, bytes on macOS.
        peak = usage.ru_maxrss / (2**20 if sys.platform == "darwin" else 2**10)
        return {
            "wall": wall,
            "cpu": usage.ru_utime + usage.ru_stime,  # the child's and its own children's (user + system)
            "peak_mib": peak,
            "rc": proc.returncode,
            "stdout": out.read().decode(errors="replace"),
            "stderr": err.read().decode(errors="replace"),
        }


def child_env() -> dict[str, str]:
    """The environment for children: irspec importable from this checkout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def collection(args: argparse.Namespace) -> tuple[Path, Path, tempfile.TemporaryDirectory | None]:
    """(qrels, run, temporary directory to clean up or None)."""
    tmp = None
    if args.keep:
        outdir = Path(args.keep)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="irspec-bench-")
        outdir = Path(tmp.name)
    qrels, run = outdir / "qrels.txt", outdir / "run.txt"
    if qrels.exists() and run.exists():
        print(f"reusing {qrels} and {run}", file=sys.stderr)
    else:
        sys.path.insert(0, str(HERE))
        from make_collection import make_collection

        t0 = time.perf_counter()
        make_collection(outdir, queries=args.queries, docs=args.docs, judged=args.judged, seed=args.seed)
        print(f"generated {run} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return qrels, run, tmp


def commands(name: str, qrels: Path, run: Path, set_name: str) -> list[str] | None:
    extra = SETS[set_name][name]
    if name == "irspec":
        return [sys.executable, "-m", "irspec", "eval", str(qrels), str(run), *extra, "--format", "json"]
    if name == "pytrec_eval":
        return [sys.executable, str(HERE / "pytrec_eval_baseline.py"), str(qrels), str(run), *extra]
    exe = shutil.which("trec_eval")
    return [exe, *extra, str(qrels), str(run)] if exe else None


def table(header: list[str], rows: list[list[str]]) -> str:
    """Rows as aligned text: the first column left-aligned, the others right-aligned."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(r: list[str]) -> str:
        cells = zip(r, widths, strict=True)
        return "  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(cells))

    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows)])


PAIRS = {"nDCG@10": "ndcg_cut_10", "AP": "map", "P@10": "P_10"}


def agree(results: dict[str, dict]) -> str:
    """Whether irspec's JSON means match pytrec_eval's to 1e-4 (a sanity check, not a test)."""
    try:
        ours = json.loads(results["irspec"]["stdout"])["runs"][0]["aggregate"]
        theirs = json.loads(results["pytrec_eval"]["stdout"])
        diffs = {k: abs(ours[k] - theirs[v]) for k, v in PAIRS.items()}
    except (KeyError, IndexError, TypeError, ValueError) as e:
        return f"cannot tell ({type(e).__name__}: {e})"
    bad = {k: d for k, d in diffs.items() if d > 1e-4}
    return "yes" if not bad else f"NO, differences {bad}"


def compile_bytecode(root: Path = ROOT) -> bool:
    """Byte-compile the irspec and the plugins of ``root`` (this checkout, or a commit's tree extracted to
    time beside it), as ``pip install`` does: with ``PYTHONDONTWRITEBYTECODE`` set (some containers set
    it) every process would otherwise compile irspec's source again, which no installed copy does.
    Returns whether all of it compiled (a warning is printed otherwise)."""
    import compileall

    # the shipped plugins too: irspec imports every installed plugin's declarations at start-up
    folders = [root / "irspec", *sorted(root.glob("plugins/*/irspec_*"))]
    done = all(compileall.compile_dir(folder, quiet=1) for folder in folders)
    if not done:
        print("warning: irspec did not byte-compile; its start-up time includes compiling", file=sys.stderr)
    return done


def best_of(run: Callable[[], dict], repeat: int, label: str) -> dict | None:
    """The fastest of ``repeat`` calls of ``run`` (a :func:`measure`), with the largest peak of them;
    None, after printing the error, if one fails."""
    best = None
    for _ in range(repeat):
        r = run()
        if r["rc"] != 0:
            print(f"{label} failed with exit status {r['rc']}:\n{r['stderr'].strip()}", file=sys.stderr)
            return None
        if best is None or r["wall"] < best["wall"]:
            best = {**r, "peak_mib": max(r["peak_mib"], best["peak_mib"] if best else 0.0)}
    return best


def bench_eval(args: argparse.Namespace, qrels: Path, run: Path) -> None:
    env = child_env()
    with open(run, "rb") as f:
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 24), b""))
    print(
        f"run: {lines:,} lines, {run.stat().st_size / 2**20:.0f} MiB; best of {args.repeat}", file=sys.stderr
    )
    rows = []
    for set_name in SETS:
        results: dict[str, dict] = {}
        for name in ("irspec", "pytrec_eval", "trec_eval"):
            cmd = commands(name, qrels, run, set_name)
            if cmd is None:
                print(f"skipping {name}: not on PATH", file=sys.stderr)
                continue
            best = best_of(lambda cmd=cmd: measure(cmd, env=env), args.repeat, f"{name} ({set_name})")
            if best is not None:
                results[name] = best
        if set_name == "nDCG@10 AP P@10" and "irspec" in results and "pytrec_eval" in results:
            print(f"irspec and pytrec_eval agree on {set_name}: {agree(results)}", file=sys.stderr)
        base = results.get("pytrec_eval", {}).get("wall")
        for name, r in results.items():
            ratio = f"{r['wall'] / base:.2f}" if base else "-"
            rows.append([name, set_name, f"{r['wall']:.2f}", f"{r['peak_mib']:.0f}", ratio])
        if args.verbose:
            for name, r in results.items():
                print(f"--- {name} ({set_name}) output:\n{r['stdout'][:2000]}", file=sys.stderr)
    print(table(["contender", "measure set", "wall s", "peak MiB", "x pytrec_eval"], rows))


# --------------------------------------------------------------------------------------------------
# --readers: reading the run file only

_IRSPEC = (
    "import polars\nfrom irspec.data import read_run\nt = time.perf_counter(); r = read_run({}); n = len(r)"
)
_COLUMNS = "names=['query', 'iter', 'docno', 'rank', 'score', 'runid']"

READERS = {
    "irspec.data.read_run": _IRSPEC.format("PATH"),
    "irspec.data.read_run (gzip)": _IRSPEC.format("PATH + '.gz'"),
    "polars read_csv, no checks": (
        "import polars as pl\nt=time.perf_counter()\n"
        "df = pl.read_csv(PATH, separator=' ', has_header=False, quote_char=None, "
        "new_columns=['query','iter','docno','rank','score','runid'], "
        "schema_overrides={'query': pl.String, 'docno': pl.String, 'score': pl.Float64}); n = df.height"
    ),
    "bytes.split, no checks": (
        "import numpy as np\nt=time.perf_counter()\n"
        "tok = open(PATH, 'rb').read().split()\n"
        "q, d, s = tok[0::6], tok[2::6], np.array(tok[4::6], dtype=np.float64); n = len(q)"
    ),
    "Python loop into dict": (
        "import sys; sys.path.insert(0, HERE)\nfrom pytrec_eval_baseline import read_run\n"
        "t=time.perf_counter(); r = read_run(PATH); n = sum(map(len, r.values()))"
    ),
    "pandas read_csv sep=' '": (
        "import pandas as pd\nt=time.perf_counter()\n"
        f"df = pd.read_csv(PATH, sep=' ', header=None, {_COLUMNS}, "
        "dtype={'query': str, 'docno': str, 'score': float}); n = len(df)"
    ),
    "pandas read_csv sep=r'\\s+'": (
        "import pandas as pd\nt=time.perf_counter()\n"
        f"df = pd.read_csv(PATH, sep=r'\\s+', header=None, {_COLUMNS}, "
        "dtype={'query': str, 'docno': str, 'score': float}); n = len(df)"
    ),
}


def bench_readers(args: argparse.Namespace, run: Path) -> None:
    import gzip
    import importlib.util

    gz = Path(str(run) + ".gz")
    if not gz.exists():
        t0 = time.perf_counter()
        with open(run, "rb") as f, gzip.open(gz, "wb", compresslevel=6) as g:
            shutil.copyfileobj(f, g, 1 << 24)
        print(f"wrote {gz} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    env = child_env()
    rows = []
    for name, body in READERS.items():
        if name.startswith("pandas") and importlib.util.find_spec("pandas") is None:
            print(f"skipping {name}: pandas is not installed", file=sys.stderr)
            continue
        code = (
            f"import time, json\nPATH = {str(run)!r}\nHERE = {str(HERE)!r}\n{body}\n"
            "print(json.dumps({'read': time.perf_counter() - t, 'n': n}))"
        )
        best = None
        for _ in range(args.repeat):
            r = measure([sys.executable, "-c", code], env=env)
            if r["rc"] != 0:
                print(f"{name} failed:\n{r['stderr'].strip()}", file=sys.stderr)
                best = None
                break
            r.update(json.loads(r["stdout"].strip().splitlines()[-1]))
            if best is None or r["read"] < best["read"]:
                best = {**r, "peak_mib": max(r["peak_mib"], best["peak_mib"] if best else 0.0)}
        if best is not None:
            rows.append(
                [
                    name,
                    f"{best['read']:.2f}",
                    f"{best['wall']:.2f}",
                    f"{best['peak_mib']:.0f}",
                    f"{best['n']:,}",
                ]
            )
    print(table(["reader", "read s", "process s", "peak MiB", "rows"], rows))


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=5000)
    ap.add_argument("--docs", type=int, default=1000, help="retrieved documents per query")
    ap.add_argument("--judged", type=int, default=50, help="judged documents per query")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--keep", metavar="DIR", help="write the collection to DIR and keep it (reused if present)"
    )
    ap.add_argument("--repeat", type=int, default=3, help="runs per contender; the best wall time is shown")
    ap.add_argument("--readers", action="store_true", help="time only reading the run file")
    ap.add_argument("-v", "--verbose", action="store_true", help="show each contender's output")
    args = ap.parse_args(argv)
    qrels, run, tmp = collection(args)
    try:
        compile_bytecode()
        if args.readers:
            bench_readers(args, run)
        else:
            bench_eval(args, qrels, run)
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
