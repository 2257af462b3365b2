"""How many times the traffic of an interleaving experiment an A/B test needs to find a known better ranking.

    python plugins/irspec-online/benchmarks/interleaving_ratio.py [--seeds 1 2 3] [--sessions 300000]

The design is the plugin's tests' (``tests/designs.py``, ``known_better``: 60 queries of 30 documents
with random graded labels; B ranks by the labels with a little noise, A is B with some adjacent pairs of
its top 10 swapped), its users PBM (examination 1/rank) or DBN (continuation 0.9), their attractiveness
ERR's mapping of the labels. For each click model, interleaving method and seed, ``simulate`` draws
``--sessions`` query issues per design and gives the query issues each test needs for 80% power at level
0.05 (the A/B test of CTR per query issue, Welch; interleaving, the mean preference against 0); the ratio
is A/B's over interleaving's. Then, at the traffic interleaving needs, 200 whole simulated experiments of
each design say how often each finds B (it should be about 80% for interleaving).

Not a test (tests/test_simulation.py holds seed 1's ratios within 40% and each above 3): the figures go in
the plugin's README and docs/how-to/online-experiments.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' design

METHODS = ("team-draft", "optimized", "probabilistic")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--sessions", type=int, default=300_000)
    parser.add_argument(
        "--experiments", type=int, default=200, help="whole experiments at interleaving's traffic"
    )
    args = parser.parse_args()

    from designs import known_better
    from irspec_online import plugin
    from irspec_online.simulation import Design, monte_carlo, simulate

    from irspec.testing import registered_plugin

    print(f"load average {os.getloadavg()}; {args.sessions:,} query issues per design", flush=True)
    print(
        "users  method         seed  A/B needs  interleaving needs  ratio  found: A/B  interleaving",
        flush=True,
    )
    with registered_plugin(plugin):
        for users in ("pbm", "dbn"):
            model, a, b = known_better(users)
            for method in METHODS:
                design = Design(model, a, b, method=method, bank=512)
                for seed in args.seeds:
                    start = time.perf_counter()
                    power = simulate(design, sessions=args.sessions, seed=seed)
                    found_ab, found_il = monte_carlo(
                        design, int(power.il_needed), args.experiments, seed=seed + 1
                    )
                    print(f"{users:5}  {method:13}  {seed:4}  {power.ab_needed:9,.0f}  {power.il_needed:18,.0f}  "
                          f"{power.ratio:5.1f}  {found_ab:10.2f}  {found_il:12.2f}   ({time.perf_counter() - start:.0f} s)",
                          flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
