"""Files at the limit, in one invocation: a large run, the start-up on a small one, many small runs, the
pytrec_eval drop-in on a BEIR-sized collection and a 1M-line run against pytrec_eval.

    python benchmarks/bench_limits.py --trec-eval PATH [--workloads large,startup,many,dropin,million]
                                      [--dir DIR] [--lines 5M] [--repeat 3] [--keep] [--before REF]

Three workloads, each against trec_eval (a binary built outside this repository, ``--trec-eval``) and
pytrec_eval (``pytrec_eval_baseline.py``: the usual Python parsing into dicts, then its evaluator),
each contender a separate process timed from spawn to exit, its peak resident memory taken by
``/usr/bin/time`` (as bench_scale.py does), the best wall time of ``--repeat`` runs kept:

- ``large``: a run of ``--lines`` lines (5M by default: 5,000 queries of 1,000 documents), grouped by
  query and shuffled (bench_scale.py's files), with trec_eval's ``official`` measures, ``--format trec``.
  Beside them the read limit: polars reading the three columns irspec needs (query, docno, score) and
  nothing else, in a process of its own; ``× limit`` says how far irspec is from it.
- ``startup``: a 50-topic run (50 × 1,000 lines), the commonest evaluation of all, in irspec's default
  table format (with its t intervals) and ``-m official``; beside it ``python -c "import numpy, polars"``,
  what any Python tool on these libraries pays before its first line, and trec_eval.
  Beside them ``warm``: the same ``irspec eval`` called a second time in one process (``irspec.cli.main``),
  what a notebook or a script that evaluates again pays.
- ``many``: 100 runs of the same 50 topics (the small run's scores perturbed, one seed each) in one
  ``irspec eval qrels runs/*`` (default table format), against trec_eval run once per file, one process
  after another (the times added; the peak is the largest), and the same for pytrec_eval.
- ``dropin``: BEIR's evaluation of SciFact's shape (300 queries of 100 retrieved documents, ~1.1
  relevant each; ``map_cut``, ``ndcg_cut``, ``recall``, ``P`` at 1, 3, 5, 10, 100, 1000), the dicts read
  from a JSON file: ``import pytrec_eval``, ``RelevanceEvaluator(qrels, measures).evaluate(run)`` and
  exit, in a fresh process, against ``import irspec.compat.pytrec_eval as pytrec_eval`` doing the same,
  and against ``irspec.evaluate(qrels, run, specs)``, irspec's own API on the same dicts; ``warm`` is the fastest of five later ``evaluate`` calls of the same run, in processes apart from
  those timed whole (a process timed whole evaluates once, as BEIR does).
- ``million``: a run of 1M lines (2,000 queries of 500 documents, 100,000 judgments), grouped by query
  with each query's lines in no order of score (as dicts are written out), ``-m official --format trec``,
  against pytrec_eval (``pytrec_eval_baseline.py``, ``--set official``) and trec_eval, the contenders
  interleaved round after round.

With ``--before REF``, the ``startup``, ``dropin`` and ``million`` workloads time the irspec of commit REF
beside this checkout's, interleaved with the others.

Ratios are to trec_eval's time (and memory) on the same files: the machine may be shared, so only
ratios measured side by side mean much. ``CPU s`` is user + system time of every thread of the process:
numpy's OpenBLAS starts a thread per core as numpy loads, which spins waiting for work (some 50 ms of CPU
on a 2-core machine, in any process importing numpy with the default threads; the ``irspec`` command
starts one thread), so ``× CPU`` of a process under a second leans toward 1; compare wall times there.
Files go to ``DIR`` (default /tmp/irspec-limits) and are deleted at the end unless ``--keep``; files
already there are reused.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench import compile_bytecode, table  # noqa: E402
from bench_scale import (  # noqa: E402
    generate_apart,
    irspec_trec,
    machine,
    measure_peak,
    parse_size,
    remove,
    same_output,
    size_name,
)

BASELINE = str(HERE / "pytrec_eval_baseline.py")
READ_LIMIT = (
    "import sys, polars as pl\n"
    "df = pl.read_csv(sys.argv[1], separator=' ', has_header=False, quote_char=None, columns=[0, 2, 4],\n"
    "                 schema_overrides={'column_1': pl.String, 'column_3': pl.String, 'column_5': pl.Float64})\n"
    "print(df.height)"
)
RUNS = 100
TOPICS = 50

BEIR_MEASURES = [f"{m}.1,3,5,10,100,1000" for m in ("map_cut", "ndcg_cut", "recall", "P")]
"""The measures BEIR's ``EvaluateRetrieval.evaluate`` asks pytrec_eval for (its default k values)."""

DROPIN = (
    "import json, sys, time\n"
    "if sys.argv[2] == 'evaluate':\n"
    "    import irspec\n"
    "elif sys.argv[2] == 'irspec':\n"
    "    import irspec.compat.pytrec_eval as pytrec_eval\n"
    "else:\n"
    "    import pytrec_eval\n"
    "with open(sys.argv[1]) as f:\n"
    "    d = json.load(f)\n"
    "if sys.argv[2] == 'evaluate':\n"
    "    def once():\n"
    "        return irspec.evaluate(d['qrels'], d['run'], sys.argv[4:], missing_queries='skip')\n"
    "    first = once()\n"
    "    out = {'queries': len(first.query_ids), 'mean_ndcg_10': first.aggregate()['nDCG@10']}\n"
    "else:\n"
    "    evaluator = pytrec_eval.RelevanceEvaluator(d['qrels'], set(sys.argv[4:]))\n"
    "    def once():\n"
    "        return evaluator.evaluate(d['run'])\n"
    "    first = once()\n"
    "    out = {'queries': len(first), 'mean_ndcg_10': sum(v['ndcg_cut_10'] for v in first.values()) / len(first)}\n"
    "if sys.argv[3] == 'warm':\n"
    "    times = []\n"
    "    for _ in range(5):\n"
    "        t = time.perf_counter()\n"
    "        once()\n"
    "        times.append(time.perf_counter() - t)\n"
    "    out['warm'] = min(times)\n"
    "print(json.dumps(out))\n"
)
"""One pytrec_eval evaluation as a BEIR user runs it (``sys.argv[2]`` picks the library: ``pytrec_eval``,
``irspec`` for the drop-in, ``evaluate`` for ``irspec.evaluate`` on the same dicts, which reads the same
trec_eval names: ``ndcg_cut.10`` is its ``nDCG@10``):
with ``sys.argv[3]`` ``whole``, that alone, the process timed from outside; with ``warm``, five more
``evaluate`` calls timed in the process (the fastest printed; ``irspec.evaluate`` reads the qrels in each
call, pytrec_eval's evaluator read them once), in processes of their own, so that the whole process's
time is of the one evaluation BEIR makes."""

WARM_CLI = (
    "import contextlib, io, json, sys, time\n"
    "from irspec.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
    "    main(sys.argv[1:])\n"
    "t = time.perf_counter()\n"
    "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
    "    main(sys.argv[1:])\n"
    "print(json.dumps({'warm': time.perf_counter() - t}))\n"
)
"""``irspec eval`` a second time in one process, timed."""


def best(cmd: list[str], repeat: int, label: str) -> dict:
    """The fastest of ``repeat`` runs of ``cmd`` (its peak the largest seen); exits if one fails."""
    return interleaved({label: cmd}, repeat)[label]


def interleaved(
    commands: dict[str, list[str]], repeat: int, envs: dict[str, dict[str, str]] | None = None
) -> dict[str, dict]:
    """Each command run ``repeat`` times, round after round (one run of each per round, so that a
    change of the machine's load falls on all of them alike): per command the fastest run, with the
    median wall time, the least CPU time (user + system) and the largest peak seen; exits if one fails.
    ``envs`` gives a command its own environment (another checkout's irspec), by label."""
    runs: dict[str, list[dict]] = {label: [] for label in commands}
    for _ in range(repeat):
        for label, cmd in commands.items():
            r = measure_peak(cmd, (envs or {}).get(label))
            if r["rc"] != 0:
                sys.exit(f"{label} failed ({r['rc']}): {r['stderr'][-2000:]}")
            runs[label].append(r)
    out = {}
    for label, found in runs.items():
        fastest = min(found, key=lambda r: r["wall"])
        out[label] = {
            **fastest,
            "peak_mib": max(r["peak_mib"] for r in found),
            "median": statistics.median(r["wall"] for r in found),
            "cpu": min(r["cpu"] for r in found),
            "runs": found,
        }
    return out


def one_per_file(cmd: list[str], files: list[Path], label: str) -> dict:
    """``cmd FILE`` once per file, one after another: the times added, the largest peak."""
    total, peak = 0.0, 0.0
    for f in files:
        r = measure_peak([*cmd, str(f)])
        if r["rc"] != 0:
            sys.exit(f"{label} failed on {f} ({r['rc']}): {r['stderr'][-2000:]}")
        total, peak = total + r["wall"], max(peak, r["peak_mib"])
    return {"wall": total, "median": total, "peak_mib": peak, "stdout": ""}


def rows_of(
    workload: str, results: dict[str, dict], reference: str = "trec_eval", limit: str | None = None
) -> list[list[str]]:
    base = results.get(reference)
    rows = []
    for name, r in results.items():
        ratio = f"{r['wall'] / base['wall']:.2f}" if base else "-"
        cpu_ratio = f"{r['cpu'] / base['cpu']:.2f}" if base and "cpu" in r and "cpu" in base else ""
        memory = f"{r['peak_mib'] / base['peak_mib']:.2f}" if base else "-"
        to_limit = f"{r['wall'] / results[limit]['wall']:.2f}" if limit and name.startswith("irspec") else ""
        rows.append(
            [
                workload,
                name,
                f"{r['wall']:.3f}",
                f"{r['median']:.3f}",
                f"{r['cpu']:.3f}" if "cpu" in r else "",
                f"{r['peak_mib']:.0f}",
                ratio,
                cpu_ratio,
                memory,
                to_limit,
            ]
        )
    return rows


def large(args: argparse.Namespace) -> list[list[str]]:
    folder = args.dir / size_name(args.lines)
    args.made += generate_apart(folder, args.lines, ["grouped", "shuffled"], seed=0)
    qrels = folder / "qrels.txt"
    rows = []
    for order in ("grouped", "shuffled"):
        run = folder / f"run-{order}.txt"
        results = {
            "trec_eval": best([args.trec_eval, str(qrels), str(run)], args.repeat, "trec_eval"),
            "irspec": best(
                irspec_trec(qrels, run, ["-m", "official"]),
                args.repeat,
                "irspec",
            ),
            "read limit (polars, 3 columns)": best(
                [sys.executable, "-c", READ_LIMIT, str(run)], args.repeat, "read limit"
            ),
        }
        if args.pytrec_eval:
            results["pytrec_eval"] = best(
                [sys.executable, BASELINE, str(qrels), str(run), "--set", "official"], 1, "pytrec_eval"
            )
        print(
            f"  {order}: irspec prints trec_eval's lines: {same_output(results['irspec']['stdout'], results['trec_eval']['stdout'])}",
            file=sys.stderr,
        )
        rows += rows_of(f"{size_name(args.lines)} {order}", results, limit="read limit (polars, 3 columns)")
    return rows


def small_collection(args: argparse.Namespace) -> tuple[Path, list[Path]]:
    """The 50-topic qrels and run, and the 100 runs made from it (written once, reused after)."""
    from make_collection import make_collection

    folder = args.dir / "small"
    qrels, run = folder / "qrels.txt", folder / "run.txt"
    if not run.exists():
        make_collection(folder, queries=TOPICS, docs=1000, seed=0)
        args.made += [qrels, run]
    runs = [folder / "runs" / f"run{k:03d}.txt" for k in range(RUNS)]
    if not all(p.exists() for p in runs):
        import numpy as np
        import polars as pl

        base = pl.read_csv(
            run, separator=" ", has_header=False, new_columns=["q", "it", "d", "rank", "score", "tag"]
        )
        runs[0].parent.mkdir(parents=True, exist_ok=True)
        for k, path in enumerate(runs):
            noise = np.random.default_rng(k).normal(0.0, 0.3, base.height).round(3)
            base.with_columns(pl.col("score") + noise, pl.lit(f"run{k:03d}").alias("tag")).write_csv(
                path, separator=" ", include_header=False, quote_style="never", float_precision=3
            )
            args.made.append(path)
    return qrels, [run, *runs]


def startup(args: argparse.Namespace) -> list[list[str]]:
    qrels, (run, *_) = small_collection(args)
    repeat = max(args.repeat, 10)  # a fraction of a second: more runs settle the figure
    commands = {
        "trec_eval": [args.trec_eval, str(qrels), str(run)],
        "irspec (table, t intervals)": [
            sys.executable,
            "-m",
            "irspec",
            "eval",
            str(qrels),
            str(run),
            "-m",
            "official",
        ],
        "irspec --format trec": irspec_trec(qrels, run, ["-m", "official"]),
        "python -c 'import numpy, polars'": [sys.executable, "-c", "import numpy, polars"],
        "python -c 'import numpy'": [sys.executable, "-c", "import numpy"],
    }
    if args.pytrec_eval:
        commands["pytrec_eval"] = [sys.executable, BASELINE, str(qrels), str(run), "--set", "official"]
    envs = with_before(args, commands, "irspec (table, t intervals)", f"irspec at {args.before} (table)")
    warm = [sys.executable, "-c", WARM_CLI, "eval", str(qrels), str(run), "-m", "official"]
    commands["irspec, default table, warm (a 2nd call in the process)"] = warm
    results = interleaved(commands, repeat, envs)
    label = "irspec, default table, warm (a 2nd call in the process)"
    again = [json.loads(r["stdout"])["warm"] for r in results[label]["runs"]]
    results[label] = {
        **results[label],
        "wall": min(again),
        "median": statistics.median(again),
    }
    del results[label]["cpu"]
    imports = results["python -c 'import numpy, polars'"]["wall"]
    rows = rows_of("50 topics", results)
    for row in rows:
        if row[1].startswith("irspec") and "warm" not in row[1]:
            row[-1] = f"{float(row[2]) / imports:.2f} × imports"
    return rows


def dropin(args: argparse.Namespace) -> list[list[str]]:
    """The pytrec_eval drop-in against pytrec_eval on SciFact's shape, whole process and warm."""
    path = args.dir / "beir-scifact.json"
    if not path.exists():
        import numpy as np

        rng = np.random.default_rng(0)
        qrels: dict[str, dict[str, int]] = {}
        run: dict[str, dict[str, float]] = {}
        for q in range(300):
            docs = [f"{d}" for d in rng.choice(5183, size=100, replace=False) + 4000]
            scores = np.round(rng.normal(0.5, 0.2, size=100), 6)
            run[f"{q}"] = {d: float(s) for d, s in zip(docs, scores, strict=True)}
            relevant = rng.choice(100, size=1 + int(rng.random() < 0.13), replace=False)
            qrels[f"{q}"] = {docs[int(i)]: 1 for i in relevant}
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"qrels": qrels, "run": run}))
        args.made.append(path)
    repeat = max(args.repeat, 10)
    labels = {
        "pytrec_eval": "pytrec_eval",
        "irspec": "irspec.compat.pytrec_eval",
        "evaluate": "irspec.evaluate",
    }

    def commands_for(mode: str) -> tuple[dict[str, list[str]], dict[str, dict[str, str]]]:
        commands = {
            label: [sys.executable, "-c", DROPIN, str(path), name, mode, *BEIR_MEASURES]
            for name, label in labels.items()
        }
        envs = {
            **with_before(
                args, commands, "irspec.compat.pytrec_eval", f"irspec.compat.pytrec_eval at {args.before}"
            ),
            **with_before(args, commands, "irspec.evaluate", f"irspec.evaluate at {args.before}"),
        }
        return commands, envs

    commands, envs = commands_for("whole")
    results = interleaved(commands, repeat, envs)
    # each library's fastest later evaluate, from processes apart from those timed whole
    commands, envs = commands_for("warm")
    warm_runs = interleaved(commands, 3, envs)
    warm = {
        label: {**json.loads(r["stdout"]), "warm": min(json.loads(x["stdout"])["warm"] for x in r["runs"])}
        for label, r in warm_runs.items()
    }
    theirs = warm["pytrec_eval"]
    same = all(abs(w["mean_ndcg_10"] - theirs["mean_ndcg_10"]) < 1e-12 for w in warm.values())
    print(f"  dropin: the same mean nDCG@10: {same}", file=sys.stderr)
    rows = rows_of("300 × 100 dicts (SciFact)", results, reference="pytrec_eval")
    for label in results:
        w = warm[label]["warm"]
        rows.append(
            [
                "",
                f"{label}, warm (a later evaluate)",
                f"{w:.4f}",
                "",
                "",
                "",
                f"{w / theirs['warm']:.2f}",
                "",
                "",
                "",
            ]
        )
    return rows


def million(args: argparse.Namespace) -> list[list[str]]:
    """A 1M-line run, grouped by query, its lines in no order of score, against pytrec_eval."""
    from make_collection import make_collection

    folder = args.dir / "million"
    qrels, ranked, run = folder / "qrels.txt", folder / "run.txt", folder / "run-unranked.txt"
    if not run.exists():
        import numpy as np

        make_collection(folder, queries=2000, docs=500, judged=50, seed=0)
        lines = ranked.read_bytes().split(b"\n")[:-1]
        rng = np.random.default_rng(1)
        order = (
            np.arange(2000)[:, None] * 500 + rng.permuted(np.tile(np.arange(500), (2000, 1)), axis=1)
        ).ravel()
        run.write_bytes(b"\n".join(lines[i] for i in order) + b"\n")
        ranked.unlink()
        args.made += [qrels, run]
    commands = {
        "pytrec_eval": [sys.executable, BASELINE, str(qrels), str(run), "--set", "official"],
        "irspec": irspec_trec(qrels, run, ["-m", "official"]),
    }
    envs = with_before(args, commands, "irspec", f"irspec at {args.before}")
    commands["trec_eval"] = [args.trec_eval, str(qrels), str(run)]
    results = interleaved(commands, args.repeat, envs)
    for label in commands:
        if label.startswith("irspec"):
            same = same_output(results[label]["stdout"], results["trec_eval"]["stdout"])
            print(f"  million: {label} prints trec_eval's lines: {same}", file=sys.stderr)
    return rows_of("1M lines, unranked", results, reference="pytrec_eval")


def with_before(
    args: argparse.Namespace, commands: dict[str, list[str]], ours: str, label: str
) -> dict[str, dict[str, str]]:
    """With ``--before REF``: REF's irspec running ``commands[ours]`` (a Python command line) beside this
    checkout's, added to ``commands`` as ``label``; returns its environment by label for
    :func:`interleaved` (none without ``--before``)."""
    if not args.before:
        return {}
    tree = before_tree(args)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    # -P: the working directory (this checkout, maybe) is not put before PYTHONPATH
    commands[label] = [sys.executable, "-P", *commands[ours][1:]]
    where = measure_peak([sys.executable, "-P", "-c", "import irspec; print(irspec.__file__)"], env)
    if not where["stdout"].startswith(str(tree)):
        sys.exit(f"irspec at {args.before} imports irspec from {where['stdout'].strip()}, not from {tree}")
    return {label: env}


def before_tree(args: argparse.Namespace) -> Path:
    """Commit ``args.before`` of this repository extracted (``git archive``) and byte-compiled, in a
    temporary folder removed at exit."""
    import atexit
    import compileall
    import shutil
    import tempfile

    from bench_demo import tree_of

    if getattr(args, "before_tree", None) is None:  # once for every workload of the invocation
        folder = Path(tempfile.mkdtemp(prefix="irspec-limits-before-"))
        atexit.register(shutil.rmtree, folder, True)
        args.before_tree = tree_of(args.before, folder / "tree")
        compileall.compile_dir(args.before_tree / "irspec", quiet=1)
    return args.before_tree


def many(args: argparse.Namespace) -> list[list[str]]:
    qrels, (_, *runs) = small_collection(args)
    results = {
        "trec_eval (once per file)": one_per_file([args.trec_eval, str(qrels)], runs, "trec_eval"),
        "irspec eval qrels runs/*": best(
            [sys.executable, "-m", "irspec", "eval", str(qrels), *map(str, runs), "-m", "official"],
            args.repeat,
            "irspec",
        ),
    }
    if args.pytrec_eval:
        results["pytrec_eval (once per file)"] = one_per_file(
            [sys.executable, BASELINE, str(qrels)], runs, "pytrec_eval"
        )
    return rows_of(f"{RUNS} runs × {TOPICS} topics", results, reference="trec_eval (once per file)")


WORKLOADS = {"large": large, "startup": startup, "many": many, "dropin": dropin, "million": million}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trec-eval", required=True, metavar="PATH", help="a built trec_eval binary")
    ap.add_argument(
        "--workloads",
        default=",".join(WORKLOADS),
        help=f"any of {', '.join(WORKLOADS)} (default all)",
    )
    ap.add_argument(
        "--lines", type=parse_size, default=parse_size("5M"), help="lines of the large run (default 5M)"
    )
    ap.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs per contender; the best wall time is kept (startup: at least 10)",
    )
    ap.add_argument(
        "--no-pytrec-eval", dest="pytrec_eval", action="store_false", help="leave pytrec_eval out"
    )
    ap.add_argument(
        "--before",
        metavar="REF",
        help="million: also time the irspec of commit REF (git archive), side by side, interleaved",
    )
    ap.add_argument("--dir", type=Path, default=Path("/tmp/irspec-limits"))
    ap.add_argument("--keep", action="store_true", help="keep the files this invocation generates")
    args = ap.parse_args(argv)
    names = args.workloads.split(",")
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        ap.error(f"unknown workloads {unknown}; choose from {sorted(WORKLOADS)}")
    args.made = []
    compile_bytecode()
    print(f"machine: {machine()}, Python {sys.version.split()[0]}", file=sys.stderr)
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", file=sys.stderr)
    rows = []
    try:
        for name in names:
            rows += WORKLOADS[name](args)
    finally:
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", file=sys.stderr)
        if not args.keep:
            remove(args.made)
    print(
        table(
            [
                "workload",
                "contender",
                "best s",
                "median s",
                "CPU s",
                "peak MiB",
                "× reference",
                "× CPU",
                "× memory",
                "× limit",
            ],
            rows,
        )
    )
    print(
        "(the reference: trec_eval; pytrec_eval for the 300 × 100 dicts and the 1M-line run; CPU counts numpy's"
        " BLAS threads spinning after import, ~50 ms a process: compare wall times of short processes)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
