"""irspec-online's subcommands of the ``irspec`` command line (declared in :mod:`irspec_online.plugin`,
registered through irspec's ``irspec_register_commands`` hook): each ``declare_*`` adds a command's
arguments, each ``run_*`` does its work and writes its files through
:func:`irspec.plugin_api.write_all_atomic` with the command's inputs (irspec checked them already).

``irspec interleave A B``
    the lists to serve for every query both runs answer, each slot's origin recorded (JSON Lines);
``irspec online LOG... -m SPECS``
    a log's metrics in one streamed pass, with its tables (an interleaving test, an A/B test,
    counterfactual estimates), as text, Markdown or JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

import numpy as np

import irspec
from irspec import EvaluationError, plugin_api
from irspec_online.interleaving import implementation
from irspec_online.rankings import rankings, run_name
from irspec_online.records import key_of

__all__ = ["declare_interleave", "declare_online", "run_interleave", "run_online", "seeded"]


def seeded(seed: int, *parts: str) -> np.random.Generator:
    """A generator for one query (or one unit of a simulation): a function of ``seed`` and the texts
    alone, so that a query's list does not depend on which other queries are served, nor in what order."""
    return np.random.default_rng([seed, *(key_of(p) & 0xFFFFFFFFFFFFFFFF for p in parts)])


def _output(args: argparse.Namespace, inputs: Any, text: str) -> None:
    """``text`` to ``-o`` (atomically, through the guard) or to standard output."""
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        plugin_api.write_all_atomic([(args.output, text)], inputs=inputs, make_dirs=False)


# --------------------------------------------------------------------------------------------------
# irspec interleave


def declare_interleave(p: argparse.ArgumentParser) -> None:
    """``irspec interleave A B --method M --seed S --depth K -o OUT``."""
    p.add_argument(
        "run_a", metavar="A", help="the first ranking (a run: TREC text or Parquet); its slots are team a"
    )
    p.add_argument("run_b", metavar="B", help="the second ranking; its slots are team b")
    p.add_argument(
        "--method",
        default="team-draft",
        metavar="SPEC",
        help="the interleaving method: team-draft (default), balanced, probabilistic(tau=3), optimized(credit=linear)",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="the seed; each query's list depends on it and the query alone"
    )
    p.add_argument(
        "--depth", type=int, default=10, metavar="K", help="the length of the lists served (default 10)"
    )
    p.add_argument("-o", "--output", metavar="OUT",
                   help="the lists, JSON Lines (default standard output); its directory must exist")  # fmt: skip


def run_interleave(args: argparse.Namespace, inputs: Any) -> int:
    """Interleave two runs: a line per query both answer, ``{"qid", "query", "results", "origins",
    "method", "a", "b"}``; the queries only one answers are said on standard error."""
    if args.depth < 1:
        raise EvaluationError(f"--depth must be a positive number of documents, got {args.depth}")
    method = plugin_api.parse_method(args.method, "interleaving method")
    interleaver = implementation(method)
    a, b = rankings(args.run_a, args.depth), rankings(args.run_b, args.depth)
    names = (run_name(args.run_a, "a"), run_name(args.run_b, "b"))
    lines = []
    for qid in sorted(set(a) & set(b)):
        served = interleaver.interleave(a[qid], b[qid], seeded(args.seed, qid), args.depth)
        lines.append(json.dumps({"qid": qid, "query": qid, "results": list(served.docs), "origins": served.origins(),
                                 "method": str(method), "a": names[0], "b": names[1]}, ensure_ascii=False))  # fmt: skip
    _output(args, inputs, "".join(line + "\n" for line in lines))
    alone = sorted(set(a) ^ set(b))
    if alone:
        shown = ", ".join(alone[:5]) + (", ..." if len(alone) > 5 else "")
        print(
            f"irspec: warning: {len(alone)} queries answered by one run only, not interleaved: {shown}",
            file=sys.stderr,
        )
    return 0


# --------------------------------------------------------------------------------------------------
# irspec online


def declare_online(p: argparse.ArgumentParser) -> None:
    """``irspec online LOG... -m SPECS`` and the options of the A/B test, the interleaving test and the
    counterfactual estimates."""
    p.add_argument(
        "logs", nargs="+", metavar="LOG", help="the log: JSON Lines or Parquet files (several: one log)"
    )
    p.add_argument(
        "-m",
        "--measure",
        dest="measures",
        action="append",
        required=True,
        metavar="SPECS",
        help='metric specs, repeatable: "CTR, Abandonment", "Interleaving(team-draft)", "IPS(ctr)@10"',
    )
    p.add_argument("--ab", metavar="BASELINE", help="an A/B test of the log's arms against this control arm")
    p.add_argument(
        "--unit",
        choices=("user", "session", "query"),
        help="the A/B test's unit of randomisation (default user)",
    )
    p.add_argument(
        "--replicates",
        type=int,
        help="the interleaving test's bootstrap replicates over users (default 1000)",
    )
    p.add_argument("--seed", type=int, help="the interleaving test's bootstrap seed (default 0)")
    p.add_argument("--confidence", type=float, help="the intervals' confidence level (default 0.95)")
    p.add_argument(
        "--counterfactual", metavar="RUN", help="estimate this ranking's clicks from the log (IPS metrics)"
    )
    p.add_argument(
        "--propensity",
        metavar="FILE",
        help="the examination probability per rank: irspec clickmodel fit's JSON (a PBM or a swap experiment)",
    )
    p.add_argument("--clip", type=float, help="ClippedIPS's largest weight of a click (default 10)")
    p.add_argument(
        "-f", "--format", choices=("text", "markdown", "json"), default="text", help="output format"
    )
    p.add_argument(
        "--decimals",
        type=int,
        default=4,
        choices=range(11),
        metavar="N",
        help="decimal places (text, Markdown)",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (its directory must exist) instead of standard output")  # fmt: skip


def online_options(args: argparse.Namespace) -> dict[str, Any]:
    """The reader's options from ``irspec online``'s flags (an A/B test, the ``online`` settings)."""
    options: dict[str, Any] = {}
    if args.ab is not None:
        options["ab"] = {"baseline": args.ab, **({"unit": args.unit} if args.unit else {})}
        if args.confidence is not None:
            options["ab"]["confidence"] = args.confidence
    elif args.unit is not None:
        raise EvaluationError("--unit is the A/B test's: give --ab BASELINE too")
    interleaving = {
        k: getattr(args, k) for k in ("replicates", "seed", "confidence") if getattr(args, k) is not None
    }
    online: dict[str, Any] = {"interleaving": interleaving} if interleaving else {}
    if args.counterfactual is not None:
        online["counterfactual"] = {"run": args.counterfactual, "propensity": args.propensity,
                                    **({"clip": args.clip} if args.clip is not None else {}),
                                    **({"confidence": args.confidence} if args.confidence is not None else {})}  # fmt: skip
    elif args.propensity is not None or args.clip is not None:
        raise EvaluationError(
            "--propensity and --clip are the counterfactual estimate's: give --counterfactual RUN too"
        )
    if online:
        options["online"] = online
    return options


def run_online(args: argparse.Namespace, inputs: Any) -> int:
    """Evaluate the log in one streamed pass and print (or write) its means and tables."""
    source = args.logs[0] if len(args.logs) == 1 else list(args.logs)
    result = irspec.evaluate_input(
        source, ", ".join(args.measures), options=online_options(args), per_query=False
    )
    if args.format == "json":
        text = json.dumps(_as_json(result), indent=2, ensure_ascii=False) + "\n"
    elif args.format == "markdown":
        text = result.show(intervals=None, decimals=args.decimals)._repr_markdown_() + "\n"
    else:
        text = str(result.show(intervals=None, decimals=args.decimals)) + "\n"
    _output(args, inputs, text)
    for warning in result.warnings:
        print(f"irspec: warning: {warning}", file=sys.stderr)
    return 0


def _as_json(result: Any) -> dict[str, Any]:
    means = {
        k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in result.aggregate().items()
    }
    return {"log": result.run_name, "source": result.run_source, "means": means,
            "tables": [t.as_dict() for t in result.tables], "warnings": list(result.warnings)}  # fmt: skip
