"""The pytrec_eval baseline for benchmarks/bench.py: evaluate a run the way most Python code does.

    python benchmarks/pytrec_eval_baseline.py QRELS RUN [--set small|official]

Both files are parsed line by line in Python into pytrec_eval's dicts (``{qid: {docno: label}}`` and
``{qid: {docno: score}}``), evaluated with ``pytrec_eval.RelevanceEvaluator``, and the mean of every
measure over queries is printed as JSON (``gm_map`` is kept as pytrec_eval reports it per query, the
log of AP, so its mean is not trec_eval's GMAP; the timing is what matters here).

Measure sets:
- ``small``: nDCG@10, AP, P@10 (``ndcg_cut_10``, ``map``, ``P_10``);
- ``official``: what trec_eval prints by default (``map``, ``gm_map``, ``Rprec``, ``bpref``,
  ``recip_rank``, ``iprec_at_recall``, ``P``, ``num_q``, ``num_ret``, ``num_rel``, ``num_rel_ret``).
"""

from __future__ import annotations

import argparse
import json
import sys

MEASURE_SETS = {
    "small": {"ndcg_cut_10", "map", "P_10"},
    "official": {
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall",
        "P",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
    },
}


def read_qrels(path: str) -> dict[str, dict[str, int]]:
    """``{qid: {docno: label}}`` from a TREC qrels file."""
    qrels: dict[str, dict[str, int]] = {}
    with open(path) as f:
        for line in f:
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            qid, _, docno, label = fields
            qrels.setdefault(qid, {})[docno] = int(label)
    return qrels


def read_run(path: str) -> dict[str, dict[str, float]]:
    """``{qid: {docno: score}}`` from a TREC run file."""
    run: dict[str, dict[str, float]] = {}
    with open(path) as f:
        for line in f:
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            run.setdefault(fields[0], {})[fields[2]] = float(fields[4])
    return run


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("qrels")
    ap.add_argument("run")
    ap.add_argument("--set", choices=sorted(MEASURE_SETS), default="small")
    args = ap.parse_args(argv)

    import pytrec_eval

    qrels = read_qrels(args.qrels)
    run = read_run(args.run)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, MEASURE_SETS[args.set]).evaluate(run)
    means: dict[str, float] = {}
    for values in per_query.values():
        for measure, value in values.items():
            means[measure] = means.get(measure, 0.0) + value
    n = max(len(per_query), 1)
    json.dump({m: v / n for m, v in sorted(means.items())}, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
