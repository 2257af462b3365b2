"""Absurd numbers in specs and options: a located error, or a defined value, never a traceback, a
wrapped integer or a numpy warning (issue 10).

The CLI cases check exit code 2 and one ``irspec: error:`` line naming the metric, the parameter, the
value and the allowed range; the same texts through the Python API raise an IrspecError subclass.
Expected values are hand arithmetic on a three-query fixture written out below.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pytest
from cli_run import irspec_cli

import irspec
from irspec import EvaluationError, IrspecError, ParameterError
from irspec.cli import main
from irspec.data import read_qrels, read_run

DEMO = ["specs/demo/qrels.txt", "specs/demo/runs/bm25.run"]

# q1: R = 2 (d1 label 1, d3 label 2), ranked d1 (.9), then the tie d3 > d2 (docno descending), dX
# (unjudged), d9 (label -1). q2: R = 0. q3: R = 2, absent from the run: an empty ranking, scored 0.
QRELS = read_qrels({"q1": {"d1": 1, "d2": 0, "d3": 2, "d9": -1}, "q2": {"d4": 0}, "q3": {"d5": 1, "d6": 3}})
RUN = read_run({"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.8, "dX": 0.7, "d9": 0.1}, "q2": {"d4": 0.5, "d7": 0.5}})
# nDCG of q1 over the whole ranking: gains 1, 2, 0, 0, 0 at ranks 1..5, ideal gains 2, 1.
NDCG_Q1 = (1 / math.log2(2) + 2 / math.log2(3)) / (2 / math.log2(2) + 1 / math.log2(3))


# --- located errors: (spec, fragments of the message) ------------------------------------------------

LOCATED = [
    ("P@1e19", ["P: parameter 'k'", "got 10000000000000000000", "an integer >= 1 and <= 9007199254740992"]),
    ("P@9007199254740993", ["P: parameter 'k'", "9007199254740993", "<= 9007199254740992"]),
    ("P@(R/0)", ["P: parameter 'k'", "R/0", "divides by zero", "an integer >= 1"]),
    ("bpref(R/0)", ["Bpref: parameter 'nonrel'", "R/0", "divides by zero", "a number >= 1"]),
    ("nDCG@(R/(2-2))", ["nDCG: parameter 'k'", "divides by zero"]),
    ("F(beta=1e155)", ["F: parameter 'beta'", "1e+155", "a number > 0 and <= 1e+100"]),
    ("set_F.1" + "0" * 300, ["F: parameter 'beta'", "1e+150", "<= 1e+100"]),
    (
        "Fallout(collection_size=1e19)@10",
        ["Fallout: parameter 'collection_size'", "10000000000000000000", "<= 9007199254740992"],
    ),
    ("11pt(points=[0.5,1e19])", ["11pt: parameter 'points'", "1e+19", "each >= 0 and <= 1"]),
    ("11pt(points=[-0.1])", ["11pt: parameter 'points'", "-0.1", "each >= 0 and <= 1"]),
    ("11pt_avg.0.5,1.5", ["11pt: parameter 'points'", "1.5", "each >= 0 and <= 1"]),
    ("IPrec@1.5", ["IPrec: parameter 'recall'", "1.5", "a number >= 0 and <= 1"]),
    ("nDCG(gains={1:-1})", ["nDCG: parameter 'gains'", "label 1 is -1", "a number >= 0"]),
    ("ndcg.1=-3", ["nDCG: parameter 'gains'", "label 1 is -3", "a number >= 0"]),
    ("nDCG(gains={1:1e101})", ["nDCG: parameter 'gains'", "<= 1e+100"]),
    ("nDCG(gains={1:1/0})", ["nDCG: parameter 'gains'", "divides by zero"]),
    ("Rprec(mult=1e300)", ["Rprec: parameter 'mult'", "1e+300", "<= 9007199254740992"]),
    ("utility(a=1e200)", ["utility: parameter 'a'", "1e+200", ">= -1e+100 and <= 1e+100"]),
    ("P(rel=1e19)", ["P: parameter 'rel'", "<= 9007199254740992"]),
    ("P@(R*1e400)", ["P: parameter 'k'", "not a finite number"]),
    ("P@(R-R)", ["P: parameter 'k'", "unknown symbol 'R-R'", "write R - R with spaces"]),
]


@pytest.mark.parametrize(("spec", "fragments"), LOCATED, ids=[c[0][:40] for c in LOCATED])
def test_absurd_parameter_is_a_located_error_in_python(spec, fragments):
    with pytest.raises(ParameterError) as info:
        irspec.parse(spec)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    assert "at column 1" in message


@pytest.mark.parametrize(("spec", "fragments"), LOCATED, ids=[c[0][:40] for c in LOCATED])
def test_absurd_parameter_is_one_error_line_from_the_cli(spec, fragments, capsys):
    assert main(["eval", *DEMO, "-m", spec]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("irspec: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err


@pytest.mark.parametrize(
    "option,least",
    # depth and relevance level may be 0, as trec_eval's -M 0 and -l 0; a collection has a document
    [
        ({"collection_size": 10**20}, 1),
        ({"collection_size": 0}, 1),
        ({"depth": 2**53 + 1}, 0),
        ({"relevance_level": 10**19}, 0),
    ],
)
def test_absurd_option_is_an_evaluation_error(option, least):
    name, value = next(iter(option.items()))
    with pytest.raises(
        EvaluationError, match=rf"{name} must be an integer >= {least} and <= 9007199254740992, got {value}"
    ):
        irspec.evaluate(QRELS, RUN, "P@5", **option)


def test_absurd_collection_size_flag_is_one_error_line(capsys):
    assert main(["eval", *DEMO, "-N", "99999999999999999999", "-m", "Fallout@10"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("irspec: error: collection_size must be an integer >= 1 and <= 9007199254740992")


# --- defined values ---------------------------------------------------------------------------------


def _per_query(spec: str, **options) -> dict[str, float]:
    result = irspec.evaluate(QRELS, RUN, spec, **options)
    return {q: v[str(irspec.parse(spec))] for q, v in result.per_query().items()}


# A numpy RuntimeWarning fails every test here; irspec's own warnings (a query the run lacks) are expected.
pytestmark = [pytest.mark.filterwarnings("error"), pytest.mark.filterwarnings("ignore::irspec.IrspecWarning")]


@pytest.mark.parametrize(
    "spec", ["nDCG@(R*1e19)", "nDCG@(R*1e300*1e300)", "nDCG@(1/(R-2))", "nDCG@9007199254740992"]
)
def test_a_cutoff_past_every_ranking_is_the_whole_ranking(spec):
    # q1: R*1e19 = 2e19, R*1e300*1e300 overflows to inf, 1/(R-2) = 1/0 = inf: all past the ranking.
    values = _per_query(spec)
    assert values["q1"] == pytest.approx(NDCG_Q1, abs=1e-15)
    assert values["q2"] == 0.0 and values["q3"] == 0.0  # R = 0 (IDCG = 0); an empty ranking


def test_whole_ranking_agrees_with_pytrec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}}
    run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.7, "dX": 0.6}}
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg"}).evaluate(run)["q1"]["ndcg"]
    got = irspec.evaluate(qrels, run, "nDCG@(R*1e19)").aggregate()["nDCG@(R*1e+19)"]
    assert got == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("spec", "q1", "q2"),
    [
        # a cutoff below 1 (R - 100, R - R) or NaN (0/0) keeps no document: P = 0
        ("P@(R-100)", 0.0, 0.0),
        ("P@(R - R)", 0.0, 0.0),
        ("P@((R - R)/(R - R))", 0.0, 0.0),
        # q1: 10/R = 5, and d1, d3 are in the top 5; q2 has R = 0: 10/R = inf, the whole ranking,
        # with no relevant document in it
        ("P@(10/R)", 2 / 5, 0.0),
        # Rprec(mult) with mult*R + 0.9 past MAX_COUNT is capped there, as a cutoff is
        ("Rprec(mult=9007199254740992)", 2 / 2**53, 0.0),
    ],
)
def test_per_query_arithmetic_gives_defined_values(spec, q1, q2):
    values = _per_query(spec)
    assert values["q1"] == pytest.approx(q1, abs=1e-18)
    assert values["q2"] == q2
    assert values["q3"] == 0.0


def test_bpref_with_an_infinite_nonrel_counts_every_judged_nonrelevant():
    # nonrel=1/(R-2) is inf for q1 (R = 2); N = 1 (d2), so min(N, X) = 1 and each relevant document
    # scores 1 - min(judged non-relevant above it, X) / 1. Ranked d1, d3, d2: nothing above either.
    # Ranked d1, d2, d3: d3 has d2 above and scores 0, so bpref = (1 + 0) / 2.
    assert _per_query("bpref(1/(R-2))")["q1"] == 1.0
    run = read_run({"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.7}})
    got = irspec.evaluate(QRELS, run, "bpref(1/(R-2))").per_query()["q1"]["Bpref(nonrel=1/(R-2))"]
    assert got == (1 + (1 - 1 / 1)) / 2


def test_huge_but_valid_beta_is_recall():
    # F_beta -> R as beta grows: q1 has every relevant document retrieved, so F = R = 1 at beta = 1e100.
    values = _per_query("F(beta=1e100)")
    assert values["q1"] == pytest.approx(1.0, abs=1e-15)


# --- round trip -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "P@(R - R)",
        "P@(R-(-R))",
        "P@(-R - R)",
        "nDCG@(R*1e19)",
        "nDCG@(R*100000000000000000000)",
        "P@9007199254740992",
        "bpref(R*1e-308)",
        "bpref(5e-324+R)",
        "F(beta=1e100)",
        "F(beta=1e-300)",
        "utility(a=-1e100,b=1e-5)",
        "11pt(points=[0,1e-300,1])",
        "nDCG(gains={0:0,1:1e100,-1:5e-324})",
        "P@(R - R - R)",
        "P@(2 - R)",
    ],
)
def test_canonical_text_reads_back_as_the_same_metric(text):
    m = irspec.parse(text)
    assert irspec.parse(str(m)) == m, str(m)
    assert str(irspec.parse(str(m))) == str(m)


def test_api_errors_are_irspec_errors():
    for spec, _ in LOCATED:
        with pytest.raises(IrspecError):
            irspec.evaluate(QRELS, RUN, spec)


# --- issue 21: numbers of hundreds of digits and long arguments, quoted short -----------------------

NINES = "9" * 400


@pytest.mark.parametrize("name", ["collection_size", "depth", "relevance_level"])
def test_an_option_of_400_digits_is_quoted_short(name):
    with pytest.raises(EvaluationError) as info:
        irspec.evaluate(QRELS, RUN, "P@5", **{name: int(NINES)})
    assert str(info.value).startswith(f"{name} must be an integer >= ") and str(info.value).endswith("9...")
    assert len(str(info.value)) < 200


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["-M", NINES], "depth must be an integer >= 0"),
        (["-M", "x" * 4000], "argument -M/--depth/--Max_retrieved_per_topic: invalid int value: 'xxx"),
        (["--decimals", NINES], "argument --decimals: invalid choice: 999"),
        (["--format", "x" * 4000], "argument -f/--format: invalid choice: 'xxx"),
        (["--system", "x" * 4000], "--system 'xxx"),
    ],
)
def test_a_long_command_line_argument_is_quoted_short(args, fragment, capsys):
    # argparse echoed the value whole, as did irspec's own messages
    done = irspec_cli(capsys, "eval", *DEMO, "-m", "AP", *args)
    assert done.returncode == 2 and done.stdout == ""
    last = done.stderr.strip().splitlines()[-1]
    assert fragment in last and "..." in last, last[:300]
    assert len(last) < 300, len(last)


def test_stats_decimals_of_400_digits_are_an_error_not_an_overflow():
    from irspec.stats import significance as stats

    for value in (301, int(NINES)):
        with pytest.raises(
            EvaluationError, match=r"^decimals must be at most 300 \(10\*\*decimals must be a float\), got "
        ):
            stats.paired([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], test="randomization", decimals=value)
    assert stats.paired([0.0, 0.1, 0.2], [0.0, 0.0, 0.0], test="randomization", decimals=300).p_value > 0


def test_a_reproduction_deeper_than_a_million_ranks_is_refused(tmp_path, capsys):
    # RBO adds a weight per rank to the depth, past the rankings' end: a depth of 10^12 ran for ever
    qrels, bm25, dense = (
        str(Path(__file__).resolve().parents[1] / "specs" / "demo" / p)
        for p in ("qrels.txt", "runs/bm25.run", "runs/dense.run")
    )
    done = irspec_cli(capsys, "reproduce", qrels, "--original", bm25, dense, "--reproduced", dense, bm25, "-m", "AP",
                      "--depth", NINES)  # fmt: skip
    assert (
        done.returncode == 2
        and "the depth must be a whole number from 1 to 1,000,000, got 999" in done.stderr
    )
    assert len(done.stderr) < 300
    plan = tmp_path / "rep.yaml"
    plan.write_text(
        f"qrels: {qrels}\nruns: {{bm25: {bm25}, dense: {dense}}}\nmetrics: [AP]\n"
        "reproduce: {original: [bm25, dense], reproduced: [bm25, dense], depth: 1000000000000}\n"
    )
    done = irspec_cli(capsys, "run", str(plan))
    assert (
        done.returncode == 2
        and "reproduce.depth: 1000000000000 is greater than the maximum of 1000000" in done.stderr
    )


def test_a_label_past_a_doubles_integers_gives_g_without_numpys_warning():
    """A label of 10**17: G's two running sums round to one double and log2 of their difference is
    log2(0), which numpy warned of on standard error with its source line; the term is -0.0, as C's."""
    qrels = {"q1": {"d1": 10**17, "d2": 1}}
    run = {"q1": {"d2": 2.0, "d1": 1.0}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = irspec.evaluate(qrels, run, "G").aggregate()["G"]
    assert 0 <= value < 1e-15  # d2's gain of 1 over an ideal total of 10**17: 0.0000 printed, as trec_eval's
