"""The README's first command, `irspec run specs/demo.yaml`, timed whole process: this checkout against
another commit's code (main by default), side by side in one invocation.

    python benchmarks/bench_demo.py [--before main] [--runs 7] [--variants demo,tables,plots]

Each side runs from its own copy of the demo plan and data (``specs/demo.yaml``, ``specs/demo/`` of its
own tree, in a temporary folder, so that nothing is written into the checkout), its code on
``PYTHONPATH`` (``--before REF`` is extracted with ``git archive``; ``--before-dir DIR`` takes a
checkout as it is), with ``IRSPEC_DISABLE_PLUGIN_AUTOLOAD=1``: a new user's ``pip install .`` has no
plugin installed. Variants:

- ``demo``: the plan as shipped: the terminal table, JSON, LaTeX, Markdown and the HTML report with its
  figures;
- ``tables``: the same plan without the HTML report (its other outputs as shipped): what the figures
  cost is the difference;
- ``plots``: the ``plots`` output alone (the PNG and SVG files: matplotlib draws the PNG);
- ``reproduce``: the plan with a ``reproduce`` section (bm25 and dense reproduced by hybrid and random:
  KTU, RBO, RMSE, the t-tests' p-values, ER, ΔRI) and the terminal table alone.

Every run is a fresh process (after one warm-up run per side and variant, not counted, and both trees
byte-compiled), the sides and variants interleaved so that both see the same load; the median wall
time and the median CPU time (user + system, from ``os.wait4``: less sensitive to a shared machine
than the wall) of ``--runs`` runs are reported, with after/before ratios. The machine and its load
average before and after are printed with the table.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench import table  # noqa: E402
from bench_scale import machine  # noqa: E402

_TABLES = (
    "output=[{format: table}, {format: json, path: out/demo/results.json}, "
    "{format: latex, path: out/demo/table.tex}, {format: markdown, path: out/demo/table.md}]"
)
VARIANTS = {
    "demo": [],
    "tables": ["--set", _TABLES],
    "plots": ["--set", "output=[{format: plots, path: out/demo/plots/}]"],
    "reproduce": [
        "--set", "reproduce={original: [bm25, dense], reproduced: [hybrid, random]}",
        "--set", "output=[{format: table}]",
    ],
}  # fmt: skip


def tree_of(ref: str, into: Path) -> Path:
    """The files of commit ``ref`` of this repository, extracted into ``into``."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def workplace(tree: Path, into: Path) -> Path:
    """A copy of ``tree``'s demo plan and data in ``into``; the plan's path."""
    into.mkdir(parents=True)
    shutil.copy(tree / "specs" / "demo.yaml", into / "demo.yaml")
    shutil.copytree(tree / "specs" / "demo", into / "demo")
    return into / "demo.yaml"


def run_once(tree: Path, plan: Path, extra: list[str]) -> tuple[float, float]:
    """One fresh ``python -m irspec run PLAN`` with ``tree``'s code: (wall seconds, CPU seconds)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "IRSPEC_DISABLE_PLUGIN_AUTOLOAD": "1"}
    cmd = [sys.executable, "-m", "irspec", "run", str(plan), *extra]
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=plan.parent,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    error = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)} failed in {tree}:\n{error[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def imported_from(tree: Path) -> str:
    """Where a child with ``tree`` on its path imports irspec from (each side must run its own code)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    code = "import irspec; print(irspec.__file__)"
    # run in the tree itself: `python -c` puts its folder first on the path, where this checkout would win
    found = subprocess.run(
        [sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True, check=True
    )
    return found.stdout.strip()


def load() -> str:
    """The load average over 1, 5 and 15 minutes."""
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="main", help="the commit to compare with (default main)")
    ap.add_argument("--before-dir", help="a checkout to compare with, as it is (instead of --before)")
    ap.add_argument("--runs", type=int, default=7, help="timed runs per side and variant (default 7)")
    ap.add_argument("--variants", default="demo,tables,plots", help=f"some of {', '.join(VARIANTS)}")
    args = ap.parse_args(argv)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        ap.error(f"unknown variants: {', '.join(sorted(unknown))}")
    with tempfile.TemporaryDirectory(prefix="irspec-demo-bench-") as tmp:
        folder = Path(tmp)
        before = (
            Path(args.before_dir).resolve() if args.before_dir else tree_of(args.before, folder / "before")
        )
        sides = {"before": before, "after": ROOT}
        for name, tree in sides.items():
            where = imported_from(tree)
            if not where.startswith(str(tree)):
                sys.exit(f"the {name} side imports irspec from {where}, not from {tree}")
            compileall.compile_dir(tree / "irspec", quiet=1)
        plans = {name: workplace(tree, folder / f"work-{name}") for name, tree in sides.items()}
        said = f"{args.before_dir or args.before} ({before})"
        print(f"irspec run specs/demo.yaml, whole process: before = {said}, after = this checkout ({ROOT})")
        print(f"{machine()}; Python {sys.version.split()[0]}; load average {load()} at the start")
        for variant in variants:  # warm-up: the file cache, each tree's first imports
            for name, tree in sides.items():
                run_once(tree, plans[name], VARIANTS[variant])
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for _ in range(args.runs):
            for variant in variants:
                for name, tree in sides.items():
                    times.setdefault((variant, name), []).append(
                        run_once(tree, plans[name], VARIANTS[variant])
                    )
        rows = []
        for variant in variants:
            wall = {n: statistics.median(w for w, _ in times[(variant, n)]) for n in sides}
            cpu = {n: statistics.median(c for _, c in times[(variant, n)]) for n in sides}
            rows.append(
                [
                    variant,
                    f"{wall['before']:.2f}",
                    f"{wall['after']:.2f}",
                    f"{wall['after'] / wall['before']:.2f}x",
                    f"{cpu['before']:.2f}",
                    f"{cpu['after']:.2f}",
                    f"{cpu['after'] / cpu['before']:.2f}x",
                ]
            )
        header = [
            "variant",
            "wall before s",
            "wall after s",
            "after/before",
            "CPU before s",
            "CPU after s",
            "after/before",
        ]
        print(table(header, rows))
        print(f"median of {args.runs} runs each; load average {load()} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
