"""Fusion (irspec.fuse, irspec fuse): every method and normalisation against hand arithmetic written out
here, the readings irspec chooses where ranx leaves things to chance, spec binding and its errors, and the
command line. tests/test_fusion_ranx.py holds every method equal to ranx 0.3.21 on random runs.

The hand example, one query and three runs (ranks in trec_eval's order: C's tie puts d3 before d1)::

    A: d1 3.0, d2 2.0, d3 1.0     min-max: d1 1.0, d2 0.5, d3 0.0     ranks d1 1, d2 2, d3 3
    B: d2 0.8, d4 0.4             min-max: d2 1.0, d4 0.0             ranks d2 1, d4 2
    C: d3 5.0, d1 5.0             min-max: both 0 (span floored)      ranks d3 1, d1 2
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
import warnings
from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest

import irspec
from irspec.cli import main
from irspec.fusion import engine
from irspec.fusion.engine import fuse_to_file, fusion_of

A = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
B = {"q1": {"d2": 0.8, "d4": 0.4}}
C = {"q1": {"d3": 5.0, "d1": 5.0}}


def scores(spec: str, runs: list | None = None, **kw) -> dict[str, float]:
    fused = irspec.fuse(runs if runs is not None else [A, B, C], spec, **kw)
    return dict(zip(fused.frame["docno"], fused.frame["score"], strict=True))


def close(found: dict[str, float], expected: dict[str, float]) -> bool:
    return found.keys() == expected.keys() and all(
        math.isclose(found[d], expected[d], rel_tol=1e-12, abs_tol=1e-15) for d in expected
    )


HAND = [
    ("sum", {"d1": 1.0 + 0 + 0, "d2": 0.5 + 1.0, "d3": 0.0 + 0.0, "d4": 0.0}),
    ("comb_sum", {"d1": 1.0, "d2": 1.5, "d3": 0.0, "d4": 0.0}),
    ("max", {"d1": max(1.0, 0.0), "d2": max(0.5, 1.0), "d3": 0.0, "d4": 0.0}),
    ("min", {"d1": min(1.0, 0.0), "d2": min(0.5, 1.0), "d3": 0.0, "d4": 0.0}),
    ("med", {"d1": (1.0 + 0.0) / 2, "d2": (0.5 + 1.0) / 2, "d3": 0.0, "d4": 0.0}),
    ("anz", {"d1": 1.0 / 2, "d2": 1.5 / 2, "d3": 0.0, "d4": 0.0}),
    ("mnz", {"d1": 1.0 * 2, "d2": 1.5 * 2, "d3": 0.0, "d4": 0.0}),
    ("gmnz(gamma=2)", {"d1": 1.0 * 2**2, "d2": 1.5 * 2**2, "d3": 0.0, "d4": 0.0}),
    (
        "rrf",  # k = 60; C's tie: d3 first, d1 second
        {"d1": 1 / 61 + 1 / 62, "d2": 1 / 62 + 1 / 61, "d3": 1 / 63 + 1 / 61, "d4": 1 / 62},
    ),
    ("isr", {"d1": (1 + 1 / 4) * 2, "d2": (1 / 4 + 1) * 2, "d3": (1 / 9 + 1) * 2, "d4": 1 / 4 * 1}),
    (
        "log_isr",
        {
            "d1": (1 + 1 / 4) * math.log(2),
            "d2": (1 / 4 + 1) * math.log(2),
            "d3": (1 / 9 + 1) * math.log(2),
            "d4": 0.0,
        },
    ),
    (
        "logn_isr",  # sigma = 0.01
        {
            "d1": (1 + 1 / 4) * math.log(2.01),
            "d2": (1 / 4 + 1) * math.log(2.01),
            "d3": (1 / 9 + 1) * math.log(2.01),
            "d4": 1 / 4 * math.log(1.01),
        },
    ),
    ("rbc(phi=0.5)", {"d1": 0.5 + 0.25, "d2": 0.25 + 0.5, "d3": 0.125 + 0.5, "d4": 0.25}),
    (
        # c = 4 candidates; A (n=3): d1 4, d2 3, d3 2, d4 (4-3+1)/2; B (n=2): d2 4, d4 3, others (4-2+1)/2;
        # C (n=2): d3 4, d1 3, others 1.5
        "bordafuse",
        {"d1": 4 + 1.5 + 3, "d2": 3 + 4 + 1.5, "d3": 2 + 1.5 + 4, "d4": 1 + 3 + 1.5},
    ),
    (
        "w_bordafuse(weights=[1, 2, 0.5])",
        {
            "d1": 4 + 2 * 1.5 + 0.5 * 3,
            "d2": 3 + 2 * 4 + 0.5 * 1.5,
            "d3": 2 + 2 * 1.5 + 0.5 * 4,
            "d4": 1 + 2 * 3 + 0.5 * 1.5,
        },
    ),
    ("wsum(weights=[0.5, 1, 2])", {"d1": 0.5 * 1.0 + 2 * 0.0, "d2": 0.5 * 0.5 + 1.0, "d3": 0.0, "d4": 0.0}),
    (
        "wmnz(weights=[0.5, 1, 2])",  # (Σ s)(Σ w) over the runs that retrieved the document
        {"d1": (1.0 + 0.0) * (0.5 + 2), "d2": (0.5 + 1.0) * (0.5 + 1), "d3": 0.0, "d4": 0.0},
    ),
    (
        "mixed(weights=[0.5, 1, 2])",
        {"d1": 0.5 * math.sqrt(2), "d2": (0.25 + 1.0) * math.sqrt(2), "d3": 0.0, "d4": 0.0},
    ),
]


@pytest.mark.parametrize(("spec", "expected"), HAND, ids=[s for s, _ in HAND])
def test_each_method_by_hand(spec: str, expected: dict[str, float]):
    assert close(scores(spec), expected)


def test_every_builtin_method_has_a_hand_test_and_a_paper():
    tested = {fusion_of(s).name for s, _ in HAND} | {"Condorcet"}
    # the methods that learn have theirs in test_fusion_learning.py
    assert tested == {n for n, d in irspec.get_registry().fusions.items() if not d.learns}
    for method in irspec.get_registry().fusions.values():
        assert re.search(r"\b(19|20)\d\d\b", method.doc), method.name  # the paper, with its year


def test_condorcet_by_hand():
    # A: d1 d2 d3, B: d2 d3 d1, C: d1 d3 d2. Majorities: d1 > d2 (A, C), d1 > d3 (A, C), d2 > d3 (A, B)
    a = {"q": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    b = {"q": {"d2": 3.0, "d3": 2.0, "d1": 1.0}}
    c = {"q": {"d1": 3.0, "d3": 2.0, "d2": 1.0}}
    assert scores("condorcet", [a, b, c]) == {"d1": 3.0, "d2": 2.0, "d3": 1.0}
    # weights 1, 3, 1: B alone outweighs A and C, so its order wins every pair: d2, d3, d1
    assert scores("w_condorcet(weights=[1, 3, 1])", [a, b, c]) == {"d2": 3.0, "d3": 2.0, "d1": 1.0}


# A and Z (one document): CombSUM(norm=...) shows A's normalised scores (Z adds 0 to them, except borda)
Z = {"q1": {"z": 2.0}}
NORMALISED = [
    ("min-max", {"d1": 1.0, "d2": 0.5, "d3": 0.0, "z": 0.0}),  # Z's span 0 is floored at 1e-9: 0/1e-9
    ("max", {"d1": 1.0, "d2": 2 / 3, "d3": 1 / 3, "z": 1.0}),
    ("sum", {"d1": 2 / 3, "d2": 1 / 3, "d3": 0.0, "z": 0.0}),  # (s - 1) / (6 - 3 * 1)
    ("zmuv", {"d1": 1 / math.sqrt(2 / 3), "d2": 0.0, "d3": -1 / math.sqrt(2 / 3), "z": 0.0}),
    ("rank", {"d1": 1.0, "d2": 2 / 3, "d3": 1 / 3, "z": 1.0}),  # 1 - r/n, r from 0
    ("min-max-inverted", {"d1": 0.0, "d2": 0.5, "d3": 1.0, "z": 0.0}),
    ("none", {"d1": 3.0, "d2": 2.0, "d3": 1.0, "z": 2.0}),
    # c = 4: A's ranked 1 - r/4, its missing z 0.5 - (3 - 1)/8; Z's z 1, the rest 0.5 - 0/8
    ("borda", {"d1": 1 + 0.5, "d2": 0.75 + 0.5, "d3": 0.5 + 0.5, "z": 0.25 + 1.0}),
]


@pytest.mark.parametrize(("norm", "expected"), NORMALISED, ids=[n for n, _ in NORMALISED])
def test_each_normalisation_by_hand(norm: str, expected: dict[str, float]):
    assert close(scores(f"sum(norm={norm})", [A, Z]), expected)


def test_sum_and_zmuv_keep_the_digits_of_large_scores_close_together():
    """Scores of a million, 1e-7 apart: the sum less n times the minimum, and the mean as the sum over n,
    cancel and lose most digits (ranx 0.3.21 gives a 0.666925 and 1.964723). The expected values are
    rational arithmetic on the doubles given, exact but for the last rounding (and zmuv's square root)."""
    run = {"q1": {"a": 1000000.0000002, "b": 1000000.0000001, "c": 1e6, "d": 1e6, "e": 1e6, "f": 1e6}}
    exact = {d: Fraction(s) for d, s in run["q1"].items()}
    low, n = min(exact.values()), len(exact)
    total = sum(s - low for s in exact.values())
    mean = sum(exact.values()) / n
    variance = sum((s - mean) ** 2 for s in exact.values()) / n
    by_sum = {d: float((s - low) / total) for d, s in exact.items()}
    by_zmuv = {d: math.copysign(math.sqrt((s - mean) ** 2 / variance), s - mean) for d, s in exact.items()}
    assert by_sum["a"] == 2 / 3 and math.isclose(by_zmuv["a"], 1.963961, abs_tol=1e-6)  # the reviewer's
    assert close(scores("sum(norm=sum)", [run, Z]), {**by_sum, "z": 0.0})
    assert close(scores("sum(norm=zmuv)", [run, Z]), {**by_zmuv, "z": 0.0})


def test_ties_rank_in_trec_evals_order():
    # d1 and d2 tie in the first run: trec_eval's order puts d2 (the larger docno) first, so d2 gets
    # RRF's 1/1 and d1 1/2; in the fused run, d9 and d2 tie at 1 and d9 comes first.
    fused = irspec.fuse([{"q": {"d1": 2.0, "d2": 2.0}}, {"q": {"d9": 1.0}}], "rrf(k=0)")
    assert fused.frame.select("docno", "score").rows() == [("d9", 1.0), ("d2", 1.0), ("d1", 0.5)]


def test_rank_methods_after_borda_rank_by_the_normalised_scores():
    # irspec ranks by the normalised scores: a run's own documents first, in its order, then the ones it
    # lacks, in candidate order (docno descending). (ranx ranks in the order its borda normalisation
    # stores them, the candidates', whatever the run's scores: test_fusion_ranx.py leaves the case out.)
    expected = {"d1": 1 / 1 + 1 / 4, "d2": 1 / 2 + 1 / 3, "d3": 1 / 3 + 1 / 2, "z": 1 / 4 + 1 / 1}
    assert close(scores("rrf(k=0, norm=borda)", [A, Z]), expected)


def test_queries_a_run_lacks_are_fused_with_a_warning():
    other = {"q1": {"d1": 1.0}, "q2": {"d7": 1.0, "d8": 3.0}}
    with pytest.warns(
        irspec.IrspecWarning, match=r"run 'a' has no documents for 1 of the 2 queries fused \(q2\)"
    ):
        fused = irspec.fuse({"a": A, "b": other}, "mnz")
    rows = fused.frame.select("query", "docno", "score").rows()
    # q2: only b; min-max gives d8 1, d7 0, each retrieved by one run
    assert [r for r in rows if r[0] == "q2"] == [("q2", "d8", 1.0), ("q2", "d7", 0.0)]
    # BordaFuse: a run that lacks a query shares its points equally, (c - 0 + 1) / 2 per candidate.
    # q: c = 2; the first run gives x 2 and y (2 - 1 + 1)/2, the second both 1.5, the third y 2 and x 1.
    # p: c = 1; the second run gives y 1, the others (1 - 0 + 1)/2 = 1 each.
    with pytest.warns(irspec.IrspecWarning):
        fused = irspec.fuse([{"q": {"x": 1.0}}, {"p": {"y": 1.0}}, {"q": {"y": 2.0}}], "bordafuse")
    assert fused.frame.select("query", "docno", "score").rows() == [
        ("p", "y", 1 + 1 + 1),
        ("q", "y", 1 + 1.5 + 2),
        ("q", "x", 2 + 1.5 + 1),
    ]


def test_depth_and_name():
    fused = irspec.fuse([A, B, C], "sum", depth=2, name="hybrid")
    assert fused.name == "hybrid"
    assert fused.frame["docno"].to_list() == ["d2", "d1"]


def test_anything_evaluate_takes(tmp_path: Path):

    path = tmp_path / "a.run"
    path.write_text("q1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq1 Q0 d3 3 1.0 a\n")
    frame = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d2", "d4"], "score": [0.8, 0.4]})
    fused = irspec.fuse([str(path), frame, irspec.read_run(C)], "sum")
    assert dict(zip(fused.frame["docno"], fused.frame["score"], strict=True)) == dict(HAND[0][1])
    qrels = {"q1": {"d2": 1, "d4": 1}}
    res = irspec.evaluate(qrels, {"a": A, "fused": fused}, "P@1")
    assert res["fused"].aggregate()["P@1"] == 1.0  # d2 first


# --- the spec --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("mnz(norm=min-max)", "CombMNZ"),
        ("comb_mnz", "CombMNZ"),
        ("rrf(k=60)", "RRF"),
        ("RRF(k=10, norm=min_max)", "RRF(k=10)"),
        ("wsum(weights=[0.3, 0.7], norm=zmuv)", "WSum(norm=zmuv,weights=[0.3,0.7])"),
        ("w_bordafuse(weights=[1, 2])", "BordaFuse(weights=[1,2])"),
        ("logn_isr(sigma=0.01)", "lognISR"),
        ("gmnz(gamma=0.5)", "CombGMNZ(gamma=0.5)"),
        ("sum(norm=min_max_inverted)", "CombSUM(norm=min-max-inverted)"),
    ],
)
def test_spec_canonical_text(text: str, canonical: str):
    fusion = fusion_of(text)
    assert str(fusion) == canonical
    assert fusion_of(canonical) == fusion


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("foo", irspec.SpecError, "unknown fusion method 'foo' at column 1"),
        ("rfr", irspec.SpecError, "did you mean 'RRF'"),
        ("rrf(", irspec.SpecSyntaxError, "unexpected end of text"),
        ("rrf, isr", irspec.SpecSyntaxError, "expected one fusion method"),
        ("rrf@10", irspec.SpecSyntaxError, "takes no @"),
        ("rrf(60)", irspec.ParameterError, "arguments are given by name"),
        ("rrf(kk=3)", irspec.ParameterError, "did you mean 'k'"),
        ("rrf(norm=minmax)", irspec.ParameterError, "did you mean 'min-max'"),
        ("wsum", irspec.ParameterError, "WSum: parameter 'weights': required"),
        ("rbc(phi=1.5)", irspec.ParameterError, "expected a number > 0 and <= 1"),
        ("rrf(k=1, k=2)", irspec.ParameterError, "given twice"),
    ],
)
def test_spec_errors(text: str, error: type, message: str):
    with pytest.raises(error, match=re.escape(message)):
        irspec.fuse([A, B], text)


def test_weights_must_match_the_runs():
    with pytest.raises(irspec.ParameterError, match=r"WSum: parameter 'weights': 2 weights for 3 runs"):
        irspec.fuse([A, B, C], "wsum(weights=[1, 2])")


def test_two_runs_or_more_and_each_with_scores():
    with pytest.raises(irspec.EvaluationError, match="two runs or more, got 1"):
        irspec.fuse([A], "sum")
    with pytest.raises(irspec.InputError, match="run 'empty' has no scored documents"):
        irspec.fuse({"a": A, "empty": {}}, "sum")


def test_a_plugin_adds_a_method(irspec_plugin):
    from irspec.plugin_api import FusionDef, hookimpl

    class Plugin:
        @hookimpl
        def irspec_register_fusion(self, register):
            register(
                FusionDef("Votes", "how many runs retrieved the document", lambda t, f: t.hits * 1.0),
                aliases=("agreement",),
            )

    irspec_plugin(Plugin(), name="votes-plugin")
    assert scores("agreement") == {"d1": 2.0, "d2": 2.0, "d3": 2.0, "d4": 1.0}
    report = {r["name"]: r for r in irspec.spec.plugins.plugin_report()}
    assert report["irspec.builtin.fusion"]["fusion"][:3] == ["BordaFuse", "CombANZ", "CombGMNZ"]


def test_a_name_taken_twice_names_both_plugins(irspec_plugin):
    from irspec.plugin_api import FusionDef, hookimpl

    class Plugin:
        @hookimpl
        def irspec_register_fusion(self, register):
            register(FusionDef("MyRRF", "", lambda t, f: t.hits * 1.0), aliases=("RRF",))

    with pytest.raises(
        irspec.RegistryError, match=r"'other' registers the fusion method 'RRF'.*'irspec\.builtin\.fusion'"
    ):
        irspec_plugin(Plugin(), name="other")


# --- the command line --------------------------------------------------------------------------------


def write_runs(tmp_path: Path) -> list[str]:
    paths = []
    for name, run in (("a", A), ("b", B), ("c", C)):
        path = tmp_path / f"{name}.run"
        path.write_text(
            "".join(f"{q} Q0 {d} 0 {s!r} {name}\n" for q, docs in run.items() for d, s in docs.items())
        )
        paths.append(str(path))
    return paths


def test_cli_writes_a_trec_run_that_reads_back_as_fused(tmp_path: Path, capsys):
    # 0.1 + 0.2 and 0.3 differ in the last bit: printed to 6 decimals they would tie, and d2 would rank
    # first as the larger docno. Written at full precision, the file ranks as fused.
    one, two = tmp_path / "one.run", tmp_path / "two.run"
    one.write_text("q Q0 d1 1 0.1 x\nq Q0 d2 2 0.3 x\n")
    two.write_text("q Q0 d1 1 0.2 y\n")
    out = tmp_path / "fused.run"
    assert main(["fuse", str(one), str(two), "--method", "sum(norm=none)", "-o", str(out)]) == 0
    assert out.read_text() == "q Q0 d1 1 0.30000000000000004 fused\nq Q0 d2 2 0.3 fused\n"
    back = irspec.read_run(str(out))
    assert back.frame["score"].to_list() == [0.1 + 0.2, 0.3]
    assert "fused 2 runs by CombSUM(norm=none)" in capsys.readouterr().err


def test_cli_parquet_and_depth(tmp_path: Path):
    paths = write_runs(tmp_path)
    out = tmp_path / "fused.parquet"
    assert main(["fuse", *paths, "--method", "mnz", "--depth", "3", "-o", str(out), "--runid", "h"]) == 0
    back = irspec.read_run(str(out))
    assert back.runid == "h"
    assert dict(zip(back.frame["docno"], back.frame["score"], strict=True)) == {
        "d2": 3.0,
        "d1": 2.0,
        "d4": 0.0,
    }


def test_cli_in_blocks_equals_in_memory(tmp_path: Path):
    # a budget of one byte streams every run; one run is not grouped by query (its blocks are discarded
    # and its lines read again, spread by query)
    paths = write_runs(tmp_path)
    extra = tmp_path / "d.run"
    extra.write_text("q2 Q0 x 1 1.0 d\nq1 Q0 d9 1 0.5 d\nq2 Q0 y 2 0.5 d\nq1 Q0 d8 2 0.7 d\n")
    paths.append(str(extra))
    whole, blocks = tmp_path / "whole.run", tmp_path / "blocks.run"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        fuse_to_file(paths, "bordafuse", str(whole))
        fuse_to_file(paths, "bordafuse", str(blocks), memory=1)
    # byte for byte: a run fused in blocks comes out in the query order of one fused whole, so the
    # output does not depend on the memory budget (the default one, on the machine's free memory)
    assert blocks.read_bytes() == whole.read_bytes()
    assert len(whole.read_text().splitlines()) == 6 + 2


def _adversarial_files(tmp_path: Path, seed: int = 3) -> list[str]:
    """:func:`adversarial_runs` as TREC files, the second not grouped by query."""
    paths = []
    for i, run in enumerate(adversarial_runs(seed)):
        lines = [f"{q} Q0 {d} 0 {s!r} r{i}\n" for q, docs in run.items() for d, s in docs.items()]
        path = tmp_path / f"r{i}.run"
        path.write_text("".join(lines[::-1] if i == 1 else lines))  # the second not grouped by query
        paths.append(str(path))
    return paths


def test_parquet_in_blocks_holds_the_rows_of_one_fused_whole(tmp_path: Path):
    # in blocks each partition's rows are spilled and written out in partition order (bounded memory);
    # the rows, their values and their order within a query are those of the run fused whole
    paths = _adversarial_files(tmp_path)
    whole, blocks = tmp_path / "whole.parquet", tmp_path / "blocks.parquet"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        fuse_to_file(paths, "rrf", str(whole), runid="h")
        fuse_to_file(paths, "rrf", str(blocks), runid="h", memory=1)
    a, b = pl.read_parquet(whole), pl.read_parquet(blocks)
    assert a.schema == b.schema and a.columns == ["query_id", "doc_id", "score", "run"]
    assert a.height == b.height > 0
    by_query = {q: frame.to_dicts() for (q,), frame in b.group_by("query_id", maintain_order=True)}
    assert {q: frame.to_dicts() for (q,), frame in a.group_by("query_id", maintain_order=True)} == by_query


def test_standard_output_in_blocks_is_the_file_fused_whole(tmp_path: Path, capsys):
    paths = _adversarial_files(tmp_path)
    whole = tmp_path / "whole.run"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        fuse_to_file(paths, "bordafuse", str(whole))
    capsys.readouterr()
    assert main(["fuse", *paths, "--method", "bordafuse", "--memory", "1"]) == 0
    assert capsys.readouterr().out == whole.read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--method", "rrf("], "unexpected end of text"),
        (["--method", "nope"], "unknown fusion method 'nope'"),
        (["--method", "wsum(weights=[1, 2])"], "2 weights for 3 runs ('a', 'b', 'c')"),
        (["--method", "rrf", "--depth", "0"], "--depth must be a positive number"),
    ],
)
def test_cli_errors_exit_2_with_one_line_and_no_output(tmp_path: Path, capsys, args: list[str], message: str):
    out = tmp_path / "out.run"
    assert main(["fuse", *write_runs(tmp_path), *args, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("irspec: error: ") and message in err and "Traceback" not in err
    assert not out.exists()


def test_cli_a_run_with_no_scores(tmp_path: Path, capsys):
    empty = tmp_path / "empty.run"
    empty.write_text("")
    assert main(["fuse", write_runs(tmp_path)[0], str(empty), "--method", "rrf"]) == 2
    assert "irspec: error: run 'empty' has no scored documents" in capsys.readouterr().err


def test_cli_warns_of_queries_a_run_lacks(tmp_path: Path):
    one, two = tmp_path / "one.run", tmp_path / "two.run"
    one.write_text("q1 Q0 d1 1 1.0 x\nq2 Q0 d1 1 1.0 x\n")
    two.write_text("q1 Q0 d2 1 1.0 y\n")
    proc = subprocess.run(
        [sys.executable, "-m", "irspec", "fuse", str(one), str(two), "--method", "rrf"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0
    assert "irspec: warning: run 'two' has no documents for 1 of the 2 queries fused (q2)" in proc.stderr
    assert proc.stdout.splitlines()[-1] == f"q2 Q0 d1 1 {1 / 61!r} fused"


# --- plans and irspec eval ------------------------------------------------------------------------------

DEMO = Path(__file__).resolve().parents[1] / "specs" / "demo"


def test_a_plans_fused_runs_are_evaluated_and_compared_like_runs(tmp_path: Path):
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"qrels: {DEMO / 'qrels.txt'}\n"
        f"runs: [{DEMO / 'runs/bm25.run'}, {DEMO / 'runs/dense.run'}]\n"
        "fused:\n"
        "  - {name: hybrid, runs: [bm25, dense], method: 'rrf(k=60)'}\n"
        "  - {name: linear, runs: [dense, bm25], method: 'wsum(weights=[0.7, 0.3], norm=zmuv)', depth: 10}\n"
        "metrics: nDCG@10, AP\n"
        "compare: {baseline: hybrid}\n"
    )
    report = irspec.run_plan(irspec.load_plan(str(plan)))
    found = {r.run_name: r.aggregate() for r in report.results}
    runs = {"bm25": str(DEMO / "runs/bm25.run"), "dense": str(DEMO / "runs/dense.run")}
    direct = {
        "hybrid": irspec.fuse(runs, "rrf(k=60)"),
        "linear": irspec.fuse([runs["dense"], runs["bm25"]], "wsum(weights=[0.7,0.3],norm=zmuv)", depth=10),
    }
    expected = irspec.evaluate(str(DEMO / "qrels.txt"), direct, "nDCG@10, AP")
    assert found["hybrid"] == expected["hybrid"].aggregate()
    assert found["linear"] == expected["linear"].aggregate()
    pairs = {frozenset((c.a, c.b)) for c in report.comparisons}
    assert pairs == {frozenset(p) for p in (("hybrid", "bm25"), ("hybrid", "dense"), ("hybrid", "linear"))}


def test_a_plans_fused_runs_problems_are_located(tmp_path: Path):
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"qrels: {DEMO / 'qrels.txt'}\n"
        f"runs: [{DEMO / 'runs/bm25.run'}, {DEMO / 'runs/dense.run'}]\n"
        "fused:\n"
        "  - {name: a, runs: [bm25, dence], method: rrf}\n"
        "  - {name: b, runs: [bm25, dense], method: 'wsum(weights=[1])'}\n"
        "  - {name: c, runs: [bm25, dense], method: nope}\n"
        "  - {name: bm25, runs: [bm25, dense], method: rrf}\n"
        "metrics: nDCG@10\n"
    )
    with pytest.raises(irspec.PlanError) as caught:
        irspec.load_plan(str(plan))
    text = str(caught.value)
    assert "plan.yaml:4: fused[0].runs[1]: no run is named 'dence'; did you mean 'dense'?" in text
    assert "plan.yaml:5: fused[1].method: 1 weights for 2 runs" in text
    assert "plan.yaml:6: fused[2].method: unknown fusion method 'nope'" in text
    assert "plan.yaml:7: fused[3].name: duplicate name 'bm25'" in text


def test_eval_fuse_on_the_command_line(tmp_path: Path, capsys):
    bm25, dense = str(DEMO / "runs/bm25.run"), str(DEMO / "runs/dense.run")
    out = tmp_path / "out.json"
    args = ["eval", str(DEMO / "qrels.txt"), bm25, "--fuse", f"h=rrf(k=60):{bm25},{dense}", "-m", "AP"]
    assert main([*args, "-f", "json", "-o", str(out)]) == 0
    import json

    runs = json.loads(out.read_text())["runs"]
    expected = irspec.evaluate(str(DEMO / "qrels.txt"), irspec.fuse([bm25, dense], "rrf(k=60)"), "AP")
    assert [r["name"] for r in runs] == ["bm25", "h"]
    assert runs[1]["aggregate"]["AP"] == expected.aggregate()["AP"]
    assert main([*args[:3], "--fuse", "h=nope:a.run,b.run"]) == 2
    assert "irspec: error: --fuse h: unknown fusion method 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize("spec", ["rrf(k=0)", "sum(norm=rank)", "sum(norm=min-max-inverted)", "condorcet"])
def test_a_run_in_trec_evals_order_is_only_checked_and_fuses_as_a_shuffled_one(monkeypatch, spec: str):
    # ties in both runs; the first run is written in trec_eval's order, the second not; runs this small
    # are sorted unchecked unless CHECKED says otherwise
    monkeypatch.setattr(engine, "CHECKED", 0)
    ranked = {"q1": {"d9": 3.0, "d5": 2.0, "d4": 2.0, "d1": 1.0}, "q2": {"d2": 1.0, "d1": 1.0}}
    shuffled_rows = [("q2", "d1", 1.0), ("q1", "d4", 2.0), ("q1", "d1", 1.0), ("q2", "d2", 1.0)]
    shuffled = irspec.read_run([irspec_row(*r) for r in shuffled_rows])

    in_order = irspec.read_run(
        pl.DataFrame(
            [(q, d, s) for q, docs in ranked.items() for d, s in docs.items()],
            schema=["query_id", "doc_id", "score"],
            orient="row",
        )
    )
    reversed_order = irspec.read_run(
        in_order.frame.reverse().select(
            pl.col("query").alias("query_id"), pl.col("docno").alias("doc_id"), "score"
        )
    )
    one = irspec.fuse([in_order, shuffled], spec).frame
    two = irspec.fuse([reversed_order, shuffled], spec).frame
    assert one.equals(two)
    # and the expected order by hand for RRF(k=0): q1 ranks d9, d5, d4, d1 in the first run
    if spec == "rrf(k=0)":
        q1 = dict(one.filter(pl.col("query") == "q1").select("docno", "score").rows())
        assert q1 == {"d9": 1.0, "d5": 1 / 2, "d4": 1 / 3 + 1 / 1, "d1": 1 / 4 + 1 / 2}


def irspec_row(query: str, docno: str, score: float):
    from collections import namedtuple

    return namedtuple("ScoredDoc", ["query_id", "doc_id", "score"])(query, docno, score)


def test_the_runs_count_weights_and_depth_are_checked_before_anything_is_read(tmp_path: Path):
    missing = str(tmp_path / "no-such.run")
    with pytest.raises(irspec.ParameterError, match=re.escape("1 weight for 2 runs ('#1', '#2')")):
        irspec.fuse([missing, missing], "wsum(weights=[1])")
    with pytest.raises(irspec.EvaluationError, match="depth must be a positive number of documents, got 0"):
        irspec.fuse([missing, missing], "rrf", depth=0)
    with pytest.raises(irspec.EvaluationError, match="two runs or more, got 1"):
        fuse_to_file([missing], "rrf", None)


# --- the ways of gathering and ranking the candidates ------------------------------------------------
# Candidates are found by docno codes when docnos repeat across queries (FEW rows per distinct docno or
# more; their keys marked in a table, or sorted when the table would be large: TABLE) and by a sort of
# the rows otherwise; the fused run is ranked a query at a time when queries are long (LONG), by one
# lexsort otherwise; each run is sorted at once when small, or checked first and sorted only when not in
# trec_eval's order (CHECKED). Whichever way, the fused run is the same, bit for bit; the thresholds are
# set here so that each way runs on the same small runs.
WAYS = {
    "codes, table, per query": {"FEW": 0, "TABLE": 10**9, "LONG": 0, "CHECKED": 0},
    "codes, sorted keys, lexsort": {"FEW": 0, "TABLE": 0, "LONG": 10**9},
    "sort, per query": {"FEW": 10**9, "LONG": 0},
    "sort, lexsort": {"FEW": 10**9, "LONG": 10**9, "CHECKED": 0},
}
# docnos that sort differently as text and as numbers, a prefix of another, upper case, non-ASCII
POOL = ["d1", "d10", "d2", "d9", "D", "a", "é", "ü1", "10", "9", "d01", "z"]


def adversarial_runs(seed: int) -> list[dict[str, dict[str, float]]]:
    """Three runs: depths from 1 to the whole pool, queries a run lacks, tied or negative scores."""
    import numpy as np

    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(3):
        run = {}
        for q in ["q1", "q2", "q10", "Q", "é"]:
            if rng.random() < 0.25:
                continue
            docs = rng.choice(POOL, int(rng.integers(1, len(POOL) + 1)), replace=False).tolist()
            tied = rng.random() < 0.5
            values = rng.integers(-2, 3, len(docs)) if tied else rng.normal(size=len(docs))
            run[q] = {d: float(s) for d, s in zip(docs, values, strict=True)}
        runs.append(run or {"q1": {"d1": 1.0}})
    return runs


def every_method() -> list[str]:
    """A spec of every registered method, with the parameters it requires."""
    required = {
        "weights": "weights=[0.3, 0.5, 0.2]",
        "segments": "segments=3",
        "w": "w=1",
        "phi": "phi=0.8",
        "gamma": "gamma=0.7",
    }
    specs = []
    for name, method in sorted(irspec.get_registry().fusions.items()):
        given = [required[p.name] for p in method.params if p.required or p.name == "weights"]
        specs.append(f"{name}({', '.join(given)})" if given else name)
    return specs


def fused_rows(runs: list, spec: str, **kw) -> list[tuple[str, str, str]]:
    """The fused rows, scores as their exact text (so -0.0 and 0.0 differ)."""
    frame = irspec.fuse(runs, spec, **kw).frame
    return [(q, d, repr(s)) for q, d, s in frame.select("query", "docno", "score").rows()]


@pytest.mark.parametrize("norm", ["min-max", "borda", "min-max-inverted"])
def test_every_way_of_gathering_candidates_fuses_alike(monkeypatch, norm: str):
    # every method; borda gives every run every candidate, min-max-inverted reverses the runs' ranks
    from irspec.fusion import engine

    qrels = {"q1": {"d1": 1, "d10": 2, "é": 0}, "Q": {"a": 1, "z": -1}, "q10": {"9": 1}}
    cases = []
    for spec in every_method():
        learns = fusion_of(spec).definition.learns
        spec = f"{spec[:-1]}, norm={norm})" if spec.endswith(")") else f"{spec}(norm={norm})"
        cases.append((spec, {"qrels": qrels} if learns else {}))
    found: dict[str, list] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        for way, settings in [("default", {}), *WAYS.items()]:
            with monkeypatch.context() as patch:
                for name, value in settings.items():
                    patch.setattr(engine, name, value)
                found[way] = [
                    fused_rows(adversarial_runs(seed), spec, depth=None if seed % 2 else 2, **kw)
                    for seed in range(3)
                    for spec, kw in cases
                ]
    assert len(found["default"]) == 3 * 23
    for way in WAYS:
        for got, expected, (spec, _) in zip(found[way], found["default"], cases * 3, strict=True):
            assert got == expected, (way, spec)


def descending(text: str) -> list[int]:
    """A sort key that orders strings descending (a prefix after the longer string, as "d10" > "d1")."""
    return [-ord(c) for c in text] + [1]


@pytest.mark.parametrize("way", list(WAYS))
def test_each_way_gives_candidates_in_query_then_descending_docno_order(monkeypatch, way: str):
    # the order the Candidates promise, against Python's own sort (UTF-8 bytes sort as code points)

    from irspec.fusion import engine

    for name, value in WAYS[way].items():
        monkeypatch.setattr(engine, name, value)
    for seed in range(4):
        runs = adversarial_runs(seed)
        frames = [irspec.read_run(r).frame for r in runs]
        names, table = engine._candidates(frames, "min-max")
        pairs = {(q, d) for run in runs for q, docs in run.items() for d in docs}
        expected = sorted(pairs, key=lambda p: (p[0], descending(p[1])))
        assert names.frame().rows() == expected
        assert table.queries.to_list() == sorted({q for q, _ in pairs})
        assert table.docnos.to_list() == [d for _, d in expected]
        for i, run in enumerate(runs):  # each run's rank of each candidate, -1 where it lacks it
            ranked = {
                (q, d): r
                for q, docs in run.items()
                for r, (d, _) in enumerate(sorted(docs.items(), key=lambda x: (-x[1], descending(x[0]))))
            }
            assert table.ranks[i].tolist() == [ranked.get(p, -1) for p in expected]
        assert isinstance(table.docnos, pl.Series)


@pytest.mark.parametrize("way", list(WAYS))
@pytest.mark.parametrize("spec", ["rrf", "bordafuse", "condorcet", "sum(norm=borda)", "probfuse(segments=2)"])
def test_in_blocks_equals_in_memory_every_way_at_every_budget(
    tmp_path: Path, monkeypatch, way: str, spec: str
):
    for name, value in WAYS[way].items():
        monkeypatch.setattr(engine, name, value)
    paths = _adversarial_files(tmp_path, seed=7)
    kw = {"qrels": {"q1": {"d1": 1, "a": 1}, "q2": {"9": 1}}} if "probfuse" in spec else {}
    outputs = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        for memory in (None, 1, 300, 3000):
            out = tmp_path / f"fused-{memory}.run"
            fuse_to_file(paths, spec, str(out), memory=memory, depth=3, **kw)
            outputs.add(out.read_bytes())
    assert len(outputs) == 1


_PEAK_PROBE = (
    "import sys\nfrom irspec.cli import main\nstatus = main(sys.argv[1:])\n"
    "hwm = next(line for line in open('/proc/self/status') if line.startswith('VmHWM:'))\n"
    "print(int(hwm.split()[1]) * 1024, file=sys.stderr)\nsys.exit(status)"
)
"""``irspec ARGS`` printing its peak resident bytes (VmHWM, this process image's own) last on stderr."""


def _fuse_peak(args: list[str]) -> int:
    env = dict(__import__("os").environ, IRSPEC_DISABLE_PLUGIN_AUTOLOAD="1")
    child = subprocess.run(
        [sys.executable, "-c", _PEAK_PROBE, "fuse", *args],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert child.returncode == 0, child.stderr[-2000:]
    return int(child.stderr.strip().splitlines()[-1])


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="deliberate: Linux's /proc gives the peak")
def test_runs_fused_in_blocks_take_bounded_memory_and_give_the_same_file(tmp_path: Path):
    # Fused in blocks, a run was gathered whole in memory before it was written (two runs of 60 MB
    # took 1.5 GB under --memory 50MiB); now each partition's lines are spilled and written out in order
    import numpy as np

    rng = np.random.default_rng(5)
    paths = []
    for name, step in (("a", 13), ("b", 17)):
        queries = np.repeat(np.arange(600), 1000)
        docs = (queries * 7919 + np.tile(np.arange(1000), 600) * step) % 50_000  # distinct in a query
        lines = zip(queries.tolist(), docs.tolist(), rng.random(queries.size).tolist(), strict=True)
        path = tmp_path / f"large-{name}.run"
        path.write_text("".join(f"q{q} Q0 d{d} 1 {s:.6f} {name}\n" for q, d, s in lines))
        paths.append(str(path))
    tiny = write_runs(tmp_path)
    base = _fuse_peak([*tiny, "--method", "rrf", "-o", str(tmp_path / "tiny.run")])
    whole = _fuse_peak([*paths, "--method", "rrf", "--memory", "4GiB", "-o", str(tmp_path / "whole.run")])
    blocks = _fuse_peak([*paths, "--method", "rrf", "--memory", "1MB", "-o", str(tmp_path / "blocks.run")])
    assert (tmp_path / "blocks.run").read_bytes() == (tmp_path / "whole.run").read_bytes()
    mib = 1 << 20
    assert whole - base > 200 * mib, (base // mib, whole // mib)  # holding the runs costs this much
    assert blocks - base < 120 * mib, (base // mib, blocks // mib, whole // mib)


def test_runs_that_fit_the_budget_alone_but_not_together_are_fused_in_blocks(tmp_path: Path):
    # each run was opened with the whole budget, as if it were the only one: ten runs that each fit were
    # fused whole in ten times the budget (and fusing costs twice an evaluation's memory a byte of text)
    from irspec.data import Run, stream

    paths = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.run"
        path.write_text("".join(f"q{i // 100} Q0 d{i} 1 {i} {name}\n" for i in range(30_000)))  # ~0.7 MB
        paths.append(str(path))
    size = sum(Path(p).stat().st_size for p in paths)
    budget = stream._resident() + 6 * size  # room for either alone (x5), not for both fused (x10 each)
    opened = stream.open_together(paths, budget, factor=engine.FUSION_FACTOR)
    try:
        assert [type(r).__name__ for r in opened] == ["RunBlocks", "RunBlocks"]
    finally:
        for r in opened:
            r.close()
    assert all(isinstance(stream.open_run(p, stream._resident() + 6 * size), Run) for p in paths)
    roomy = stream.open_together(paths, stream._resident() + 40 * size, factor=engine.FUSION_FACTOR)
    assert all(isinstance(r, Run) for r in roomy)


@pytest.mark.parametrize("memory", [None, "1"], ids=["whole", "blocks"])
def test_an_id_with_a_blank_is_refused_in_trec_text_and_kept_in_parquet(tmp_path: Path, capsys, memory):
    # a Parquet run may hold "d 1"; written into a TREC line it read back as other fields, silently
    spaced = tmp_path / "spaced.parquet"
    pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d 1", "d2"], "score": [1.0, 2.0]}).write_parquet(
        spaced
    )
    other = tmp_path / "other.run"
    other.write_text("q1 Q0 d2 1 0.5 o\nq2 Q0 d3 1 0.4 o\n")
    budget = ["--memory", memory] if memory else []
    out = tmp_path / "fused.run"
    assert main(["fuse", str(spaced), str(other), "--method", "rrf", *budget, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("irspec: error: document 'd 1' of query 'q1' has a blank in its id")
        and not out.exists()
    )
    assert main(["fuse", str(spaced), str(other), "--method", "rrf", *budget]) == 2
    assert capsys.readouterr().out == ""  # nothing half written to standard output either
    parquet = tmp_path / "fused.parquet"
    assert main(["fuse", str(spaced), str(other), "--method", "rrf", *budget, "-o", str(parquet)]) == 0
    assert "d 1" in pl.read_parquet(parquet)["doc_id"].to_list()


@pytest.mark.parametrize("memory", [[], ["--memory", "1"]], ids=["whole", "blocks"])
def test_fusing_to_a_text_stream_without_a_buffer(tmp_path: Path, memory: list[str]):
    # a notebook's sys.stdout (or a StringIO) takes text only: the fused lines reach it as text
    import contextlib
    import io

    paths = _adversarial_files(tmp_path)
    whole = tmp_path / "whole.run"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        fuse_to_file(paths, "rrf", str(whole))
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        assert main(["fuse", *paths, "--method", "rrf", *memory]) == 0
    assert text.getvalue() == whole.read_text()


def test_a_run_file_given_twice_is_warned_of(tmp_path, capsys, monkeypatch):
    # as irspec eval and irspec diff warn: fused with itself, most likely a mistake (another spelling of
    # its path, or a link, is the same file)
    monkeypatch.chdir(tmp_path)
    Path("a.run").write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n")
    Path("link.run").symlink_to("a.run")
    Path("b.run").write_text("q1 Q0 d2 1 2.0 r\n")
    assert main(["fuse", "--method", "rrf", "a.run", "link.run", "b.run", "-o", "f.run"]) == 0
    err = capsys.readouterr().err
    assert (
        "irspec: warning: the same run is given twice ('a.run' and 'link.run'): it is fused with itself"
        in err
    )
    assert main(["fuse", "--method", "rrf", "a.run", "./b.run", "-o", "g.run"]) == 0
    assert "given twice" not in capsys.readouterr().err
