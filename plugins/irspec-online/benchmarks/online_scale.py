"""Interleaving and click models at scale: peak memory and wall time on a generated log of N query issues.

    python plugins/irspec-online/benchmarks/online_scale.py generate 100000000 /tmp/il100     # once
    python plugins/irspec-online/benchmarks/online_scale.py measure /tmp/il100                # then

``generate`` writes ``log.parquet`` (a directory of part files, a million query issues each): team-draft
interleavings of two rankings of 1,000 queries (100 documents each, ranking B the better: A is B with
adjacent pairs of its top 10 swapped at random), clicked by DBN users whose attractiveness comes from
random graded labels (ERR's mapping; satisfaction the same, continuation 0.9), each query issue its own
session, of one of 5 million users (``--users``); each part's arrays built with numpy and written with pyarrow, the
lists drawn from a bank of 64 per query (:class:`irspec_online.simulation.Simulation`), in row groups of 65,536 rows.

``measure`` runs, each in a fresh process, and prints its wall time, CPU time and peak RSS (``ru_maxrss``
of the child); with ``--baseline DIR`` (the ``plugins/irspec-online`` folder of another checkout: ``git
worktree add /tmp/base COMMIT``) each command runs with that plugin's code too, right before, and the
ratios of the two are printed:

- ``irspec online log.parquet -m "Interleaving(team-draft), CTR"``: the streamed pass, with the
  interleaving test (1,000 bootstrap replicates over users, the sign test over queries);
- ``irspec clickmodel fit log.parquet --model pbm`` and ``--model dbn``: the sessions read and merged into
  distinct ones in bounded memory, then 50 EM iterations over those.

Not a test: the figures go in the plugin's README, with the machine's load average.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

PART = 1_000_000
QUERIES, DOCS, USERS = 1000, 100, 5_000_000


def generate(n: int, folder: Path, users: int = USERS, seed: int = 1) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    from irspec_online import plugin
    from irspec_online.simulation import Design, Simulation, from_qrels

    from irspec.testing import registered_plugin

    rng = np.random.default_rng(seed)
    labels = rng.choice([0, 0, 0, 0, 0, 0, 1, 1, 2, 3], size=(QUERIES, DOCS))
    out = folder / "log.parquet"
    out.mkdir(parents=True, exist_ok=True)
    with registered_plugin(plugin):
        # DBN users who know the labels: ERR's mapping for attractiveness and satisfaction, continuation 0.9
        qrels = {f"q{q}": {f"q{q}d{d}": int(labels[q, d]) for d in range(DOCS)} for q in range(QUERIES)}
        model = from_qrels(qrels, "dbn", unjudged=0.02, continuation=0.9)
        a, b = {}, {}
        for q in range(QUERIES):
            good = [int(d) for d in np.argsort(-(labels[q] + rng.normal(0, 0.3, DOCS)))]
            worse = good.copy()
            for i in range(0, 10, 2):
                if rng.random() < 0.5:
                    worse[i], worse[i + 1] = worse[i + 1], worse[i]
            b[f"q{q}"], a[f"q{q}"] = [f"q{q}d{d}" for d in good], [f"q{q}d{d}" for d in worse]
        sim = Simulation(Design(model, a, b, bank=64))
        names = np.array([d for _, d in sim.model.vocabulary.pairs()], dtype=object)
        queries = np.array(sim.design.queries, dtype=object)
        teams = np.array(["a", "b", None], dtype=object)
        for part, start in enumerate(range(0, n, PART)):
            m = min(PART, n - start)
            q = sim._queries(m, rng)
            j = rng.integers(0, sim.design.bank, size=m)
            pairs, length = sim.bank_pairs[q, j], sim.bank_length[q, j]
            clicks = sim.model.simulate(pairs, length, rng)
            valid = np.arange(pairs.shape[1])[None, :] < length[:, None]
            offsets = np.concatenate([[0], np.cumsum(length)]).astype(np.int32)
            docs = pa.array(names[pairs[valid]].tolist(), type=pa.string())
            rows, cols = np.nonzero(clicks)
            click_offsets = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=m))]).astype(np.int32)
            click_struct = pa.StructArray.from_arrays(
                [
                    pa.array(names[pairs[rows, cols]].tolist(), type=pa.string()),
                    pa.array(cols + 1, type=pa.int64()),
                ],
                names=["doc", "rank"],
            )
            team = sim.bank_origin["team"][q, j][valid]
            origin_struct = pa.StructArray.from_arrays(
                [pa.array(teams[team].tolist(), type=pa.string()),
                 pa.array(sim.bank_origin["rank_a"][q, j][valid], type=pa.int64()),
                 pa.array(sim.bank_origin["rank_b"][q, j][valid], type=pa.int64())],
                names=["team", "rank_a", "rank_b"],
            )  # fmt: skip
            ids = np.arange(start, start + m)
            table = pa.table({
                "session": pa.array([f"s{i}" for i in ids.tolist()]),
                "user": pa.array([f"u{u}" for u in (ids * 2654435761 % users).tolist()]),
                "query": pa.array(queries[q].tolist()),
                "timestamp": pa.array(1714521600.0 + ids * 0.01),
                "results": pa.ListArray.from_arrays(pa.array(offsets), docs),
                "clicks": pa.ListArray.from_arrays(pa.array(click_offsets), click_struct),
                "origins": pa.ListArray.from_arrays(pa.array(offsets), origin_struct),
            })  # fmt: skip
            pq.write_table(table, out / f"part-{part:05d}.parquet", row_group_size=65_536)
            print(f"part {part}: {start + m:,} query issues", flush=True)


def measure(folder: Path, only: list[str] | None = None, baseline: Path | None = None) -> None:
    log = str(folder / "log.parquet")
    every = {
        "interleaving": ["online", log, "-m", "Interleaving(team-draft), CTR"],
        "clickmodel pbm": ["clickmodel", "fit", log, "--model", "pbm", "-o", os.devnull],
        "clickmodel dbn": ["clickmodel", "fit", log, "--model", "dbn", "-o", os.devnull],
    }
    commands = {
        name: argv
        for name, argv in every.items()
        if not only or {name.split()[0], name.split()[-1]} & set(only)
    }
    print(f"load average {os.getloadavg()}", flush=True)
    for name, argv in commands.items():
        runs = {"baseline": baseline, "this": None} if baseline is not None else {"this": None}
        found = {}
        for which, code in runs.items():
            found[which] = _run(folder, name, argv, which if baseline is not None else "", code)
        if baseline is not None:
            (wall, cpu, peak), (wall_b, cpu_b, peak_b) = found["this"], found["baseline"]
            print(f"{name}: this / baseline: wall {wall / wall_b:.3f}, CPU {cpu / cpu_b:.3f}, peak {peak / peak_b:.3f}",
                  flush=True)  # fmt: skip


def _run(
    folder: Path, name: str, argv: list[str], which: str, code: Path | None
) -> tuple[float, float, float]:
    """One command in a fresh process (with the plugin's code from ``code``, when given): its wall time, CPU
    time and peak RSS (MiB), printed with its output's end and the load average after it."""
    # a file per command, so that two measures of one log may run at once
    stem = "-".join([name.replace(" ", "-"), *([which] if which else [])])
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(code), *filter(None, [env.get("PYTHONPATH")])])
    with open(folder / f"{stem}.out", "w+") as out, open(folder / f"{stem}.err", "w+") as err:
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "irspec", *argv], stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)  # this child's own usage: its peak, its CPU
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        text, said = out.read(), err.read()
    cpu = usage.ru_utime + usage.ru_stime
    peak = usage.ru_maxrss / 1024
    label = f"{name} ({which})" if which else name
    print(f"{label}: exit {os.waitstatus_to_exitcode(status)}, wall {wall:.1f} s, CPU {cpu:.1f} s, peak {peak:.0f} MiB",
          flush=True)  # fmt: skip
    print(text[-3000:], said[-2000:], flush=True)
    print(f"load average {os.getloadavg()}", flush=True)
    return wall, cpu, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    g = sub.add_parser("generate")
    g.add_argument("n", type=int)
    g.add_argument("folder", type=Path)
    g.add_argument("--users", type=int, default=USERS, help="distinct users (default %(default)s)")
    m = sub.add_parser("measure")
    m.add_argument("folder", type=Path)
    m.add_argument("--only", nargs="+", choices=("interleaving", "clickmodel", "pbm", "dbn"),
                   help="these commands alone (clickmodel: pbm and dbn)")  # fmt: skip
    m.add_argument(
        "--baseline", type=Path, help="another checkout's plugins/irspec-online, run beside this one"
    )
    args = parser.parse_args()
    if args.step == "generate":
        generate(args.n, args.folder, args.users)
    else:
        measure(args.folder, args.only, args.baseline)


if __name__ == "__main__":
    main()
