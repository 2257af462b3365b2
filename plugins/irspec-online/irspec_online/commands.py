"""irspec-online's subcommands of the ``irspec`` command line (declared in :mod:`irspec_online.plugin`,
registered through irspec's ``irspec_register_commands`` hook): each ``run_*`` does a command's work
and writes its files through :func:`irspec.plugin_api.write_all_atomic` with the command's inputs (irspec
checked them already). Their arguments are declared by :mod:`irspec_online.arguments`, whose
``declare_*`` are importable from here too.

``irspec interleave A B``
    the lists to serve for every query both runs answer, each slot's origin recorded (JSON Lines);
``irspec online LOG... -m SPECS``
    a log's metrics in one streamed pass, with its tables (an interleaving test, an A/B test,
    counterfactual estimates), as text, Markdown or JSON;
``irspec clickmodel fit LOG... --model M``
    a click model fitted to a log, its parameters (and its log-likelihood and perplexity on held-out
    sessions) as JSON;
``irspec simulate --clickmodel M.json --runs A B``
    simulated users of two rankings: the traffic an A/B test and an interleaving experiment need to tell
    them apart, and simulated logs.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

import numpy as np

import irspec
from irspec import EvaluationError, plugin_api
from irspec_online.arguments import declare_clickmodel, declare_interleave, declare_online, declare_simulate
from irspec_online.clickmodels import load
from irspec_online.clickstream import fit
from irspec_online.interleaving import implementation
from irspec_online.rankings import rankings, run_name
from irspec_online.records import key_of
from irspec_online.simulation import Design, Simulation, from_qrels, logged_records, simulate

__all__ = [
    "declare_clickmodel",
    "declare_interleave",
    "declare_online",
    "declare_simulate",
    "run_clickmodel",
    "run_interleave",
    "run_online",
    "run_simulate",
    "seeded",
]


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


def run_interleave(args: argparse.Namespace, inputs: Any) -> int:
    """Interleave two runs: a line per query both answer, ``{"qid", "query", "results", "origins",
    "method", "a", "b"}``; the queries only one answers are said on standard error."""
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


# --------------------------------------------------------------------------------------------------
# irspec clickmodel


def run_clickmodel(args: argparse.Namespace, inputs: Any) -> int:
    """Fit the model; write its JSON; say its sessions and evaluation on standard error."""
    source = args.logs[0] if len(args.logs) == 1 else list(args.logs)
    fitted = fit(source, args.model, holdout=args.holdout, iterations=args.iterations)
    _output(args, inputs, json.dumps(fitted.as_json(), indent=1, ensure_ascii=False) + "\n")
    model = fitted.model
    if fitted.train.count:
        # the models read ranks 1 to RANKS: say so, as results and clicks below are left out
        said = (f"irspec: fitted {model.name} to {fitted.train.count:,.0f} sessions ({len(fitted.train):,} distinct) "
                f"on their top {model.ranks} results")  # fmt: skip
    else:  # a swap experiment, counted from its records
        said = f"irspec: fitted {model.name} to {model.sessions:,.0f} query issues of a swap experiment"
    if fitted.log_likelihood is not None:
        said += (f"; on {fitted.test.count:,.0f} held-out sessions: log-likelihood {fitted.log_likelihood:.4f}, "
                 f"perplexity {fitted.perplexity:.4f}")  # fmt: skip
    theta = getattr(model, "propensities", None)
    unknown = (np.flatnonzero(np.isnan(theta)) + 1).tolist() if theta is not None else []
    if unknown:  # null in the JSON: IPS leaves out the clicks it would weigh there
        ranks = ", ".join(map(str, unknown[:5])) + (", ..." if len(unknown) > 5 else "")
        said += f"; examination unknown at rank {ranks} (the log has no result there to fit it by)"
    print(said, file=sys.stderr)
    return 0


# --------------------------------------------------------------------------------------------------
# irspec simulate


def run_simulate(args: argparse.Namespace, inputs: Any) -> int:
    """Simulate both designs, print the power table and the traffic each needs; write the log asked for."""
    users = load(args.clickmodel) if args.clickmodel is not None else from_qrels(args.qrels, args.model)
    a, b = rankings(args.runs[0], args.depth), rankings(args.runs[1], args.depth)
    design = Design(users, a, b, method=args.method, depth=args.depth, metric=args.metric)
    power = simulate(design, args.sessions, args.alpha, args.power, args.seed)
    outputs = []
    if args.log is not None:
        sim, rng = Simulation(design, args.seed), seeded(args.seed, "log")
        if args.log_design in ("interleaving", "ab"):
            records = sim.records(args.log_sessions, rng, interleaved=args.log_design == "interleaving")
        else:
            records = logged_records(sim, args.log_sessions, rng, args.log_design)
        names = {"a": run_name(args.runs[0], "a"), "b": run_name(args.runs[1], "b")}
        if args.log_design == "ab":
            records = ({**r, "arm": names[r["arm"]]} for r in records)
        outputs.append((args.log, _json_lines(records)))
    traffic = sorted({max(2, round(args.sessions / 10**k)) for k in range(0, 5)})
    if args.format == "json":
        report = {**power.as_dict(), "design": {"users": users.name, "method": str(args.method), "metric": args.metric,
                                                "depth": args.depth, "queries": len(design.queries)},
                  "table": [dict(zip(("sessions", "ab_power", "interleaving_power"), row, strict=True))
                            for row in power.table(traffic)]}  # fmt: skip
        text = json.dumps(report, indent=1) + "\n"
    else:
        text = _power_text(power, traffic, users.name, design)
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        outputs.append((args.output, text))
    if outputs:
        plugin_api.write_all_atomic(outputs, inputs=inputs, make_dirs=False)
    return 0


def _json_lines(records: Iterator[dict]) -> Callable[[BinaryIO], None]:
    """A writer of ``records`` as JSON Lines, a record at a time as they are made: a simulated log of a
    million query issues held whole took ~5 GB."""

    def write(f: BinaryIO) -> None:
        for rec in records:
            f.write((json.dumps(rec, ensure_ascii=False) + "\n").encode("utf-8"))

    return write


def _power_text(power: Any, traffic: list[int], users: str, design: Any) -> str:
    lines = [
        f"{users} users, {len(design.queries)} queries, lists of {design.depth}; {power.sessions:,} query issues "
        f"simulated per design; two-sided tests at alpha {power.alpha}",
        f"A/B test ({design.metric} per query issue): A {power.ab_mean[0]:.4f}, B {power.ab_mean[1]:.4f}",
        f"interleaving ({design.method}): preference of B {power.il_mean:+.4f} over the {power.il_clicked:.1%} of "
        "query issues with a click",
        "",
        f"{'query issues':>14}  {'A/B power':>9}  {'interleaving power':>18}",
    ]
    lines += [f"{n:>14,}  {ab:>9.3f}  {il:>18.3f}" for n, ab, il in power.table(traffic)]
    lines += [
        "",
        f"query issues needed for power {power.power}: A/B {power.ab_needed:,.0f}, interleaving {power.il_needed:,.0f} "
        f"(A/B / interleaving = {power.ratio:.2f})",
    ]
    return "\n".join(lines) + "\n"
