"""The arguments of irspec-online's subcommands of the ``irspec`` command line: each ``declare_*`` adds
one command's arguments to its parser (:mod:`irspec_online.plugin` names them, :mod:`irspec_online.commands`
runs the commands). argparse alone: ``irspec --help`` and ``irspec --version`` declare every command,
and they should not load what the commands run with (numpy, polars, the click models: ~0.4 s).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from irspec import plugin_api

__all__ = ["declare_clickmodel", "declare_interleave", "declare_online", "declare_simulate"]


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
        "--seed", type=_SEED, default=0, help="the seed; each query's list depends on it and the query alone"
    )
    p.add_argument(
        "--depth", type=_DEPTH, default=10, metavar="K", help="the length of the lists served (default 10)"
    )
    p.add_argument("-o", "--output", metavar="OUT",
                   help="the lists, JSON Lines (default standard output); its directory must exist")  # fmt: skip


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
    p.add_argument("--seed", type=_SEED, help="the interleaving test's bootstrap seed (default 0)")
    p.add_argument("--confidence", type=float, help="the intervals' confidence level (default 0.95)")
    p.add_argument(
        "--counterfactual", metavar="RUN", help="estimate this ranking's clicks from the log (IPS metrics)"
    )
    p.add_argument(
        "--propensity",
        metavar="FILE",
        help="the examination probability per rank: irspec clickmodel fit's JSON (a PBM or a swap experiment)",
    )
    p.add_argument(
        "--clip",
        type=float,
        help="deprecated: give ClippedIPS its clip, ClippedIPS(ctr, clip=2)@10 (10 alone is accepted)",
    )
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


def declare_clickmodel(p: argparse.ArgumentParser) -> None:
    """``irspec clickmodel fit LOG... --model M --iterations N --holdout F -o OUT``."""
    p.add_argument("action", choices=("fit",), help="fit: fit a click model to the log")
    p.add_argument(
        "logs", nargs="+", metavar="LOG", help="the log: JSON Lines or Parquet files (several: one log)"
    )
    p.add_argument(
        "--model", default="dbn", metavar="SPEC", help="the click model: pbm, cm, dcm, ubm or dbn (default)"
    )
    p.add_argument(
        "--iterations",
        type=_integer("a number of EM iterations", 1, 100_000),
        default=50,
        metavar="N",
        help="EM iterations (default 50, as PyClick)",
    )
    p.add_argument(
        "--holdout",
        type=float,
        default=0.0,
        metavar="F",
        help="hold out this share of the sessions (by a key of the session id) and report the model's "
        "log-likelihood and perplexity on them (default 0: none)",
    )
    p.add_argument("-o", "--output", metavar="OUT", help="the fitted model, JSON (default standard output)")  # fmt: skip


MAX_SESSIONS = 10**9
"""The most query issues a simulation takes: far beyond what a power table needs, and below what would
overflow numpy's 64-bit counts of draws."""


def _count(text: str) -> int:
    """A count written as an integer or in scientific notation (``1e6``), from 2 to :data:`MAX_SESSIONS`."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of sessions such as 100000 or 1e6, got {plugin_api.quote(text)}"
        ) from None
    if not value.is_integer() or not 2 <= value <= MAX_SESSIONS:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of sessions from 2 to {MAX_SESSIONS:.0e}, got {plugin_api.quote(text)}"
        )
    return int(value)


def _integer(what: str, low: int, high: int) -> Callable[[str], int]:
    """An integer option from ``low`` to ``high``: numpy's seeds are not negative, and a list's depth or an
    iteration count beyond any use overflows or never ends."""

    def read(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"expected {what}, an integer from {low:,} to {high:,}, got {plugin_api.quote(text)}"
            )
        return value

    return read


_SEED = _integer("a seed", 0, 2**63 - 1)
_DEPTH = _integer("a number of documents", 1, 100_000)


def declare_simulate(p: argparse.ArgumentParser) -> None:
    """``irspec simulate (--clickmodel M.json | --qrels Q) --runs A B --sessions N ...``."""
    users = p.add_mutually_exclusive_group(required=True)
    users.add_argument(
        "--clickmodel", metavar="MODEL", help="the users: a click model irspec clickmodel fit wrote"
    )
    users.add_argument(
        "--qrels",
        metavar="QRELS",
        help="the users: a click model whose attractiveness comes from these judgments (ERR's mapping)",
    )
    p.add_argument(
        "--model",
        default="dbn",
        metavar="SPEC",
        help="with --qrels: the kind of users (pbm, cm, dcm, ubm, dbn)",
    )
    p.add_argument("--runs", nargs=2, required=True, metavar=("A", "B"), help="the two rankings compared")
    p.add_argument(
        "--sessions",
        type=_count,
        default=100_000,
        metavar="N",
        help="query issues simulated per design (1e6 may be written); the traffic in the power table goes up to it",
    )
    p.add_argument(
        "--method", default="team-draft", metavar="SPEC", help="the interleaving method (default team-draft)"
    )
    p.add_argument(
        "--metric",
        choices=("ctr", "clicks"),
        default="ctr",
        help="what the A/B test compares per query issue",
    )
    p.add_argument("--depth", type=_DEPTH, default=10, metavar="K", help="the lists' length (default 10)")
    p.add_argument("--alpha", type=float, default=0.05, help="the tests' level (default 0.05)")
    p.add_argument(
        "--power", type=float, default=0.8, help="the power the traffic needed is for (default 0.8)"
    )
    p.add_argument("--seed", type=_SEED, default=0, help="the seed of the simulation")
    p.add_argument(
        "--log", metavar="LOG", help="also write a simulated log (JSON Lines) of --log-sessions query issues"
    )
    p.add_argument(
        "--log-sessions", type=_count, default=10_000, metavar="N", help="the simulated log's query issues"
    )
    p.add_argument(
        "--log-design",
        choices=("interleaving", "ab", "ranking", "shuffle", "swap"),
        default="interleaving",
        help="the simulated log's: interleaved lists (with origins), an A/B test (arm a or b), or A alone: as it "
        "ranks (ranking), shuffled (shuffle: the records' propensities) or a swap experiment (swap)",
    )
    p.add_argument("-f", "--format", choices=("text", "json"), default="text", help="output format")
    p.add_argument("-o", "--output", metavar="OUT", help="the report (default standard output)")  # fmt: skip
