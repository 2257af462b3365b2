"""irspec-online's click models against PyClick's, side by side: the same sessions, the same models, the
same 50 EM iterations, in one invocation, on one machine.

    git clone https://github.com/markovi/PyClick /tmp/PyClick      # not on the package registry
    python plugins/irspec-online/benchmarks/clickmodel_speed.py --pyclick /tmp/PyClick [--repeat 3] [--models PBM UBM]

The sessions are the first 3,000 of ``tests/reference/clicklog.jsonl.gz`` (PyClick's reference run's
training set). Each model is trained ``--repeat`` times by each (PyClick's ``train`` on its parsed
sessions; irspec-online's ``fit`` on its session table, the merging of identical sessions, which EM
models do first, included), in
alternation after one untimed run of each on 50 sessions (imports, first calls: polars starts its thread
pool), and the median wall times and their ratio printed; then irspec-online's whole command,
``irspec clickmodel fit`` (reading and checking the log, process start included), once. The machine's load
average is printed before and after: the ratio is what to quote, measured side by side.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REFERENCE = HERE.parent / "tests" / "reference"
MODELS = ("PBM", "CM", "DCM", "UBM", "DBN")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pyclick", required=True, help="a checkout of PyClick's source (its root)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    args = parser.parse_args()
    sys.path.insert(0, args.pyclick)
    sys.path.insert(0, str(REFERENCE))
    import importlib

    import pyclick_reference as reference  # the data set and PyClick's sessions, as the reference run made them
    from irspec_online import plugin
    from irspec_online.clickmodels import Sessions, model_of
    from irspec_online.records import jsonl_records

    from irspec.testing import registered_plugin

    train, _ = reference.sessions()
    records = list(jsonl_records(str(reference.DATA)))[: len(train)]
    print(
        f"load average {os.getloadavg()[0]:.2f}; {len(train)} sessions; {args.repeat} runs each", flush=True
    )
    print(f"{'model':6} {'PyClick s':>10} {'irspec-online s':>16} {'ratio':>8}")
    with registered_plugin(plugin):
        sessions = Sessions.of_records(records, str(reference.DATA))
        for name in args.models:
            module = importlib.import_module(f"pyclick.click_models.{name}")
            theirs, ours = [], []
            getattr(module, name)().train(train[:50])  # one untimed run each: imports and first calls
            model_of(name.lower()).fit(Sessions.of_records(records[:50], "warm-up"))
            for _ in range(args.repeat):
                start = time.perf_counter()
                getattr(module, name)().train(train)
                theirs.append(time.perf_counter() - start)
                start = time.perf_counter()
                model_of(name.lower()).fit(sessions)
                ours.append(time.perf_counter() - start)
            a, b = statistics.median(theirs), statistics.median(ours)
            print(f"{name:6} {a:>10.3f} {b:>16.4f} {a / b:>8.1f}", flush=True)
    for name in args.models:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "irspec", "clickmodel", "fit", str(reference.DATA), "--model", name,
                        "-o", os.devnull], check=True, stderr=subprocess.DEVNULL)  # fmt: skip
        print(
            f"irspec clickmodel fit (the whole log of 4,000 sessions, process included) --model {name}: "
            f"{time.perf_counter() - start:.2f} s",
            flush=True,
        )
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
