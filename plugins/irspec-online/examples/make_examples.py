"""Make the example logs of interleaving, click models and counterfactual estimates, from irspec's demo data.

    python plugins/irspec-online/examples/make_examples.py [FOLDER]     # from the repository's root

Users whose attractiveness comes from the demo's judgments (``irspec simulate --qrels``: ERR's mapping of
each label, PBM users: examination 1/rank) are shown the demo's runs ``bm25`` and ``dense`` (``dense`` is the
better: nDCG@10 0.625 against 0.543), 2,000 query issues per log, each written gzip-compressed beside this
script (or into ``FOLDER``) by ``irspec simulate --log``:

- ``interleaved.jsonl.gz``: team-draft interleaving of bm25 (a) and dense (b), each slot's origin recorded;
- ``logged.jsonl.gz``: bm25's rankings as they are, the log of a deterministic logger;
- ``swap.jsonl.gz``: bm25's rankings with the top result swapped with a random rank (a swap experiment);
- ``shuffled.jsonl.gz``: bm25's top 10 shuffled, with each slot's probability (a randomised logger).

The seeds are fixed: the files are the same every time (tests/test_examples.py checks it, and runs the
commands of the how-to on them).
"""

from __future__ import annotations

import gzip
import os
import sys
import tempfile
from pathlib import Path

from irspec.cli import main as irspec

HERE = Path(__file__).resolve().parent
DEMO = HERE.parents[2] / "specs" / "demo"
LOGS = {"interleaved": "interleaving", "logged": "ranking", "swap": "swap", "shuffled": "shuffle"}


def main(folder: Path = HERE) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        for name, design in LOGS.items():
            plain = Path(scratch) / f"{name}.jsonl"
            # the command as typed, run in this process (one start-up for the four logs, not four)
            done = irspec(
                ["simulate", "--qrels", str(DEMO / "qrels.txt"), "--model", "pbm",
                 "--runs", str(DEMO / "runs" / "bm25.run"), str(DEMO / "runs" / "dense.run"), "--sessions", "1000",
                 "--seed", "37", "--log", str(plain), "--log-sessions", "2000", "--log-design", design,
                 "-o", os.devnull]
            )  # fmt: skip
            if done != 0:
                raise SystemExit(f"irspec simulate exited with {done} making {name}")
            with gzip.GzipFile(
                folder / f"{name}.jsonl.gz", "wb", mtime=0
            ) as out:  # mtime 0: the same bytes each time
                out.write(plain.read_bytes())


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
