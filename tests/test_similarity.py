"""irspec.similarity and irspec.stats.similarity: RBO, KTU and Jaccard between two runs.

Expected values are hand arithmetic written out here, and the ``rbo`` package (PyPI ``rbo``, Webber et
al.'s RBO): it pins numpy < 2, so it is not in the test extra but installed apart
(``pip install --no-deps --target DIR rbo==0.1.3``, as ``.ci/run`` does) and run in a subprocess with
``IRSPEC_RBO_PATH=DIR``, as the benchmarks run ranx from ``--ranx-path``.
"""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import irspec
from irspec.errors import ParameterError, SpecSyntaxError
from irspec.stats.similarity import jaccard, ktu, parse_similarity, rbo

DEMO = Path(__file__).resolve().parents[1] / "specs" / "demo"


def test_rbo_by_hand() -> None:
    # a b c d against b a e d, p = 0.5, depth 4: overlaps at depths 1..4 are 0, 2, 2, 3
    # sum p^(d-1) * overlap/d = 0 + 0.5*2/2 + 0.25*2/3 + 0.125*3/4 = 0.5 + 1/6 + 3/32
    # normaliser 1 + 0.5 + 0.25 + 0.125 = 1.875
    expected = (0.5 + 1 / 6 + 3 / 32) / 1.875
    assert rbo(list("abcd"), list("baed"), 0.5, 4) == pytest.approx(expected, abs=1e-15)
    # equal lists shorter than the depth: overlap stays at 2 after depth 2
    # p = 0.5, depth 3: (1 + 0.5*2/2 + 0.25*2/3) / 1.75
    assert rbo(["x", "y"], ["x", "y"], 0.5, 3) == pytest.approx((1 + 0.5 + 0.25 * 2 / 3) / 1.75)
    assert rbo(list("abc"), list("xyz"), 0.9, 3) == 0.0
    assert rbo(list("abc"), list("abc"), 0.9, 3) == pytest.approx(1.0)


@pytest.mark.parametrize("block", [1, 3, 1 << 16])
def test_rbo_past_the_end_of_both_lists(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    """Lists shorter than the depth (a run of 100 documents at RBO's default depth 1000): past both ends
    the overlap stays, and each rank adds p^(d-1) * overlap / d (summed a block of ranks at a time, the
    block's size changing nothing, to the bit)."""
    import irspec.stats.similarity as similarity

    monkeypatch.setattr(similarity, "_BLOCK", block)
    a, b = [f"d{i}" for i in range(8)], [f"d{i}" for i in range(3, 13)]  # 5 shared; both end by rank 10
    for p, depth in [(0.9, 40), (0.95, 1000), (0.5, 11), (1.0, 25)]:
        overlap = [len(set(a[:d]) & set(b[:d])) for d in range(1, depth + 1)]
        expected = math.fsum(p ** (d - 1) * overlap[d - 1] / d for d in range(1, depth + 1)) / math.fsum(
            p ** (d - 1) for d in range(1, depth + 1)
        )
        assert rbo(a, b, p, depth) == pytest.approx(expected, rel=1e-13), (p, depth)
    monkeypatch.setattr(similarity, "_BLOCK", 1 << 16)
    alike = rbo(a, b, 0.95, 1000)
    monkeypatch.setattr(similarity, "_BLOCK", block)
    assert rbo(a, b, 0.95, 1000) == alike


def test_ktu_and_jaccard_by_hand() -> None:
    # union sorted a b c d; a b c d -> 0 1 2 3 and a c b d -> 0 2 1 3: pairs 6, one discordant (b,c)
    assert ktu(list("abcd"), list("acbd")) == pytest.approx((5 - 1) / 6)
    assert ktu(list("abcd"), list("abcd")) == 1.0
    assert math.isnan(ktu(["a"], ["a"]))  # one rank: no pair
    # cut at 3: a b c against a c b: (2 - 1) / 3
    assert ktu(list("abcd"), list("acbd"), 3) == pytest.approx(1 / 3)
    # lengths differ: both cut to the shorter (3)
    assert ktu(list("abcdef"), list("acb")) == pytest.approx(1 / 3)
    # top 3: {a b c} and {a c x}: 2 shared of 4
    assert jaccard(list("abcd"), list("acxd"), 3) == 0.5
    assert jaccard(list("abcd"), list("acxd")) == pytest.approx(3 / 5)
    assert math.isnan(jaccard([], []))


def _rbo_reference(pairs: list[tuple[list[str], list[str], int, float]]) -> list[float]:
    """The rbo package's ``RankingSimilarity(S, T).rbo(k, p)`` for each pair, in a subprocess."""
    path = os.environ.get("IRSPEC_RBO_PATH")
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [path, env.get("PYTHONPATH")]))
    code = (
        "import json, sys\n"
        "from rbo import RankingSimilarity\n"
        "pairs = json.load(sys.stdin)\n"
        "print(json.dumps([RankingSimilarity(s, t).rbo(k=k, p=p) for s, t, k, p in pairs]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(pairs),
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0 and "No module named 'rbo'" in done.stderr:
        pytest.skip(
            "the rbo package is not installed: pip install --no-deps --target DIR rbo==0.1.3 and set "
            "IRSPEC_RBO_PATH=DIR (.ci/run does)"
        )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_rbo_equals_the_rbo_package() -> None:
    """Webber et al.'s sum to depth k (the package's ``rbo(k, p)``) is ``(1 - p) * sum p^(d-1) A_d``;
    irspec's (repro_eval's) divides ``sum p^(d-1) A_d`` by ``sum p^(d-1) = (1 - p^k) / (1 - p)``, so
    for two lists of at least k documents irspec's value is the package's divided by ``1 - p^k``."""
    rng = random.Random(5)
    cases = []
    for _ in range(60):
        pool = [f"d{i}" for i in range(rng.randint(5, 40))]
        s = rng.sample(pool, rng.randint(3, len(pool)))
        t = rng.sample(pool, rng.randint(3, len(pool)))
        k = rng.randint(1, min(len(s), len(t)))
        p = rng.choice([0.5, 0.8, 0.9, 0.95, 0.99])
        cases.append((s, t, k, p))
    theirs = _rbo_reference(cases)
    for (s, t, k, p), value in zip(cases, theirs, strict=True):
        assert rbo(s, t, p, k) == pytest.approx(value / (1 - p**k), abs=1e-12), (s, t, k, p)


def test_names_in_the_spec_grammar() -> None:
    found = parse_similarity("RBO(p=0.9)@100, KTU@100, Jaccard@10, rbo, ktu(), RBO(p=0.95)@1000")
    assert [str(m) for m in found] == ["RBO(p=0.9)@100", "KTU@100", "Jaccard@10", "RBO", "KTU"]
    assert found[3].p == 0.95 and found[3].cutoff == 1000 and found[2].cutoff == 10
    assert parse_similarity(["jaccard"])[0].cutoff is None


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("RBx@10", SpecSyntaxError, "unknown similarity measure 'RBx' (did you mean RBO?)"),
        ("KTU, nDCG@10", SpecSyntaxError, "at column 6"),
        ("RBO(p=1.5)", ParameterError, "RBO: parameter 'p': must be a number in (0, 1], got 1.5"),
        ("RBO(p=x)", ParameterError, "must be a number, got 'x'"),
        ("KTU(p=0.5)", ParameterError, "KTU: parameter 'p': unknown parameter"),
        ("RBO(0.9)", ParameterError, "by name"),
        ("Jaccard@0", ParameterError, "the cutoff must be a whole number >= 1"),
        ("RBO(p=0.9", SpecSyntaxError, "unexpected end of text"),
    ],
)
def test_bad_names(text: str, error: type, message: str) -> None:
    with pytest.raises(error) as caught:
        parse_similarity(text)
    assert message in str(caught.value)


def test_similarity_of_two_runs() -> None:
    a = {"q1": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}, "q2": {"x": 1.0, "y": 0.5}}
    # b ties c at 2.0: trec_eval's order puts c (docno descending) first: a c b d
    b = {"q1": {"a": 1.0, "c": 0.9, "b": 0.8, "d": 0.7}, "q2": {"y": 1.0, "x": 0.5}}
    result = irspec.similarity(a, b, "KTU, Jaccard@1, RBO(p=0.5)@2")
    assert result.query_ids == ("q1", "q2")
    values = result.per_query()
    assert values["q1"]["KTU"] == 1.0  # both a c b d
    assert values["q2"]["KTU"] == -1.0  # x y against y x
    assert values["q2"]["Jaccard@1"] == 0.0
    # q2, p = 0.5, depth 2: overlaps 0 then 2: (0 + 0.5 * 2/2) / 1.5
    assert values["q2"]["RBO(p=0.5)@2"] == pytest.approx(0.5 / 1.5)
    assert result.means()["KTU"] == 0.0
    frame = result.to_frame()
    assert frame.columns == ["query_id", "measure", "value"] and frame.height == 6
    wide = result.to_frame(wide=True, backend="pandas")
    assert list(wide.columns) == ["query_id", "KTU", "Jaccard@1", "RBO(p=0.5)@2"]
    assert "mean" in str(result)
    shown = result._repr_markdown_().splitlines()
    assert shown[0] == "| run vs run | KTU | Jaccard@1 | RBO(p=0.5)@2 |"
    assert shown[2] == "| **mean** | **0.0000** | **0.5000** | **0.6667** |"


def test_different_query_sets_are_left_out_with_a_warning() -> None:
    a = {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q3": {"c": 1.0}}
    b = {"q1": {"a": 1.0}, "q4": {"b": 1.0}}
    with pytest.warns(irspec.IrspecWarning) as caught:
        result = irspec.similarity(irspec.read_run(a), b, "Jaccard")
    assert result.query_ids == ("q1",)
    texts = [str(w.message) for w in caught]
    assert any("2 of its 3 queries" in t and "'q2', 'q3'" in t and "left out" in t for t in texts)
    assert any("'q4'" in t for t in texts)
    assert result.warnings == tuple(texts)


def test_same_file_twice_warns_and_empty_run_fails(tmp_path: Path) -> None:
    run = DEMO / "runs" / "bm25.run"
    with pytest.warns(irspec.IrspecWarning, match="the same file is given twice"):
        result = irspec.similarity(run, run, "RBO@10, KTU")
    assert result.means()["KTU"] == 1.0
    assert result.means()["RBO@10"] == pytest.approx(1.0)
    empty = tmp_path / "empty.run"
    empty.write_text("")
    with pytest.raises(irspec.InputError, match=r"empty\.run: the run is empty"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        irspec.similarity(run, empty)
