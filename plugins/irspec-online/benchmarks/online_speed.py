"""The time of irspec-online's simulations, click-model fits and commands, against an older commit's, side by
side in one invocation.

    python plugins/irspec-online/benchmarks/online_speed.py [--before REF] [--repeat 5]

Each measurement runs in a fresh process of this interpreter, the code given by ``PYTHONPATH``: this
checkout, and with ``--before REF`` the irspec and irspec-online of commit REF (``git archive``), taken in
turn, so that the machine's load falls on both alike; the median of ``--repeat`` runs is printed, and the
ratio to REF's. Each process starts with ``-P``: the working directory, this checkout, does not come before
the code named. The workloads:

- ``bank``: a simulation's bank of interleaved lists (``Simulation``: 512 lists for each of the 60 queries of
  the tests' design, ``tests/designs.py``, PBM users), for each interleaving method; in-process time.
- ``fit``: a DBN, a PBM and a UBM each fitted by 50 EM iterations to 100,000 sessions of 10 results it
  simulated (the DBN's: the tests' ``test_dbn_fit_recovers_the_parameters_it_simulated``); in-process time
  of ``fit``.
- whole commands, process start included: ``irspec online`` with a counterfactual estimate of the
  shipped randomised log, ``irspec online`` of the shipped interleaved log (the interleaving test, its
  sign test over queries), ``irspec simulate`` of the demo's runs and qrels (10,000 sessions), and
  ``irspec run examples/ab.yaml`` (an A/B test).

Both trees are byte-compiled first, as installed copies are (with ``PYTHONDONTWRITEBYTECODE`` set, a tree
never imported without it would be compiled again by every process). The times are what to compare, not
to quote alone: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLUGIN = Path(__file__).resolve().parents[1]
ROOT = PLUGIN.parents[1]
DEMO = ROOT / "specs" / "demo"

BANK = """
import sys, time
sys.path.insert(0, {tests!r})
from designs import known_better
from irspec_online.simulation import Design, Simulation
model, a, b = known_better("pbm")
design = Design(model, a, b, method={method!r}, bank=512)
Simulation(design, 0)  # first calls (a linear program's solver, numpy's generators) out of the timing
start = time.perf_counter()
Simulation(design, 1)
print(time.perf_counter() - start)
"""

FIT = """
import time
import numpy as np
from irspec_online.clickmodels import {model} as Model, Sessions, Vocabulary
truth = Model()
truth.vocabulary = Vocabulary()
for i in range(10):
    truth.vocabulary.code("q", f"d{{i}}")
rng = np.random.default_rng(3)
truth._start(10)
truth.attr = rng.uniform(0.2, 0.8, 10)
if {model!r} == "DBN":
    truth.sat, truth.cont = rng.uniform(0.2, 0.8, 10), 0.7
else:
    truth.exam = rng.uniform(0.2, 0.9, truth.exam.shape)
n = 100_000
pairs = np.array([rng.permutation(10) for _ in range(n)])
sessions = Sessions(pairs, truth.simulate(pairs, np.full(n, 10), rng), np.full(n, 10), np.ones(n), truth.vocabulary)
sessions = sessions.compact()
start = time.perf_counter()
Model().fit(sessions)
print(time.perf_counter() - start)
"""

COMMANDS = {
    "irspec online --counterfactual": [
        "online", str(PLUGIN / "examples" / "shuffled.jsonl.gz"), "--counterfactual",
        str(DEMO / "runs" / "dense.run"), "-m", "IPS(ctr)@10, SNIPS(ctr)@10", "-f", "json",
    ],
    "irspec online interleaving": [
        "online", str(PLUGIN / "examples" / "interleaved.jsonl.gz"), "-m", "Interleaving(team-draft), CTR",
        "-f", "json",
    ],
    "irspec simulate": [
        "simulate", "--qrels", str(DEMO / "qrels.txt"), "--runs", str(DEMO / "runs" / "bm25.run"),
        str(DEMO / "runs" / "dense.run"), "--sessions", "1e4", "-f", "json",
    ],
    "irspec run ab.yaml": ["run", str(PLUGIN / "examples" / "ab.yaml")],
}  # fmt: skip


def _code_of(ref: str, folder: Path) -> str:
    """Commit ``ref`` extracted into ``folder`` (benchmarks/bench_demo.py's ``tree_of``): the PYTHONPATH that
    imports its irspec and irspec-online, checked to be where both come from."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_demo import tree_of

    tree = tree_of(ref, folder / "tree")
    _compiled(tree)
    path = os.pathsep.join([str(tree), str(tree / "plugins" / "irspec-online")])
    probe = "import irspec, irspec_online; print(irspec.__file__); print(irspec_online.__file__)"
    found = subprocess.run(
        [sys.executable, "-P", "-c", probe], env=dict(os.environ, PYTHONPATH=path), cwd=ROOT,
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    if not all(f.startswith(str(tree)) for f in found):
        sys.exit(f"the code at {ref} imports from {found}, not from {tree}")
    return path


def _timed(python_path: str, argv: list[str], inside: bool) -> float:
    """One fresh process's time: what it prints (``inside``), else its whole wall time."""
    env = dict(os.environ, PYTHONPATH=python_path)
    start = time.perf_counter()
    done = subprocess.run(
        # -P: the working directory (this checkout) is not put before PYTHONPATH, which names the code timed
        [sys.executable, "-P", *argv],
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    took = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv[:3])} failed:\n{done.stderr[-2000:]}")
    return float(done.stdout.split()[-1]) if inside else took


def _compiled(tree: Path) -> None:
    """``tree``'s irspec and plugins byte-compiled (:func:`bench.compile_bytecode`), as an installed copy
    is: with ``PYTHONDONTWRITEBYTECODE`` set (this machine's containers set it) a tree never imported with
    it unset is compiled again by every process, and a command timed against it would count that."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench import compile_bytecode

    if not compile_bytecode(tree):
        sys.exit(f"{tree} did not byte-compile")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", metavar="REF", help="time the code of this commit too")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    here = os.pathsep.join([str(ROOT), str(PLUGIN)])
    workloads: list[tuple[str, list[str], bool]] = [
        (f"bank, {method}", ["-c", BANK.format(tests=str(PLUGIN / "tests"), method=method)], True)
        for method in ("team-draft", "optimized", "probabilistic")
    ]
    workloads += [
        (f"{model} fit, 100,000 sessions", ["-c", FIT.format(model=model)], True)
        for model in ("DBN", "PBM", "UBM")
    ]
    workloads += [(name, ["-m", "irspec", *argv], False) for name, argv in COMMANDS.items()]
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; load {os.getloadavg()[0]:.2f}")
    _compiled(ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        codes = {"this checkout": here}
        if args.before:
            codes = {args.before: _code_of(args.before, Path(tmp)), **codes}
        print(f"{'workload':<36} " + " ".join(f"{label[:16]:>16}" for label in codes) + "   ratio")
        for name, argv, inside in workloads:
            times: dict[str, list[float]] = {label: [] for label in codes}
            for _ in range(args.repeat):
                for label, path in codes.items():  # in turn: the load falls on both alike
                    times[label].append(_timed(path, argv, inside))
            medians = [statistics.median(t) for t in times.values()]
            ratio = f"{medians[-1] / medians[0]:7.2f}" if len(medians) > 1 else ""
            print(f"{name:<36} " + " ".join(f"{m:15.3f}s" for m in medians) + f" {ratio}")
    print(f"load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
