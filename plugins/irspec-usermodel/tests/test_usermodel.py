"""irspec-usermodel: ERR, RBP and its residual, NCG.

Hand-checked values first (each with its arithmetic in a comment), then the published formulas computed
independently here on random data, then RBP's residual bounds, then the plugin's packaging. The plugin
is registered for each test with irspec.testing, so the tests hold whether or not it is installed with
its entry point (they skip when the package cannot be imported at all).
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import math

import pytest

pytest.importorskip("irspec_usermodel")

import numpy as np
from irspec_usermodel import plugin

import irspec
from irspec.cli import main
from irspec.testing import registered_plugin

# q1 ranks a (3), b (0), c (1), e (unjudged); "x-2" ranks z (unjudged), a (1). Query ids are any strings.
QRELS = {"q1": {"a": 3, "b": 0, "c": 1, "d": 2}, "x-2": {"a": 1}}
RUN = {"q1": {"a": 0.9, "b": 0.8, "c": 0.7, "e": 0.6}, "x-2": {"z": 1.0, "a": 0.5}}


def values(specs: str, qrels=QRELS, run=RUN, **kw) -> dict[str, dict[str, float]]:
    return irspec.evaluate(qrels, run, specs, **kw).per_query()


# --------------------------------------------------------------------------------------------------
# Hand-checked


def test_err_by_hand():
    v = values("ERR, ERR@2, ERR@1, ERR(max_grade=3)")
    # g_max 4: R(3) = 7/16, R(0) = 0, R(1) = 1/16.  ERR = 7/16 + (9/16)(0)/2 + (9/16)(1)(1/16)/3
    assert v["q1"]["ERR"] == pytest.approx(7 / 16 + (9 / 16) * (1 / 16) / 3)
    assert v["q1"]["ERR@2"] == pytest.approx(7 / 16)
    assert v["q1"]["ERR@1"] == pytest.approx(7 / 16)
    # g_max 3: R(3) = 7/8, R(1) = 1/8: ERR = 7/8 + (1/8)(1/8)/3
    assert v["q1"]["ERR(max_grade=3)"] == pytest.approx(7 / 8 + (1 / 8) * (1 / 8) / 3)
    # unjudged z at rank 1 stops nobody; a (1) at rank 2: (1/16) / 2
    assert v["x-2"]["ERR"] == pytest.approx(1 / 32)


def test_err_clips_labels_above_the_maximum_grade_and_ignores_negative_ones():
    qrels = {"q": {"a": 9, "b": -2}}
    run = {"q": {"b": 2.0, "a": 1.0}}
    v = values("ERR(max_grade=2)", qrels, run)
    assert v["q"]["ERR(max_grade=2)"] == pytest.approx((3 / 4) / 2)  # b: grade 0; a: grade 2 at rank 2


def test_rbp_by_hand():
    v = values("RBP, RBP(residual=true), RBP(0.5)@2, RBP(max_grade=3), RBP(0.5, residual=true)@2")
    # binary at rel 1: a (rank 1) and c (rank 3) relevant: 0.2 (1 + 0.8^2)
    assert v["q1"]["RBP(p=0.8)"] == pytest.approx(0.2 * (1 + 0.64))
    # e unjudged at rank 4: 0.2 * 0.8^3, plus p^n = 0.8^4 for the ranks below the list
    assert v["q1"]["RBP(p=0.8,residual=true)"] == pytest.approx(0.2 * 0.8**3 + 0.8**4)
    assert v["q1"]["RBP(p=0.5)@2"] == pytest.approx(0.5)
    assert v["q1"]["RBP(p=0.5,residual=true)@2"] == pytest.approx(0.25)  # top 2 judged: p^2
    # graded, max grade 3: r = 1, 0, 1/3, 0
    assert v["q1"]["RBP(max_grade=3,p=0.8)"] == pytest.approx(0.2 * (1 + 0.64 / 3))
    assert v["x-2"]["RBP(p=0.8)"] == pytest.approx(0.2 * 0.8)
    assert v["x-2"]["RBP(p=0.8,residual=true)"] == pytest.approx(0.2 + 0.8**2)


def test_rbps_residual_has_no_better_direction(tmp_path, capsys):
    # The residual is how much RBP the judgments leave unknown: a smaller one is a better-judged ranking,
    # not a better one, so no comparison marks it better or worse, as trec_eval's rbp_resid (irspec's
    # built-in, declared "neither"); it was marked as RBP is, higher better.
    rbp, residual, resid = irspec.parse_many("RBP(p=0.9), RBP(p=0.9, residual=true), rbp_resid")
    assert (rbp.better, residual.better, resid.better) == ("higher", "neither", "neither")
    # b ranks both relevant documents first on every query, a one of them below an unjudged e: b's RBP is
    # higher and its residual lower on all 8 queries, which the sign test finds (p = 2/256)
    (tmp_path / "q").write_text("".join(f"q{i} 0 {d} 1\n" for i in range(8) for d in "ab"))
    for name, ranked in (("a", "eaf"), ("b", "abe")):
        lines = [f"q{i} Q0 {d} {r} {4 - r} {name}\n" for i in range(8) for r, d in enumerate(ranked, 1)]
        (tmp_path / f"{name}.run").write_text("".join(lines))
    (tmp_path / "plan.yaml").write_text(
        "qrels: q\nruns: [{name: a, path: a.run}, {name: b, path: b.run}]\n"
        'metrics: ["RBP(p=0.9)", "RBP(p=0.9, residual=true)"]\n'
        "compare: {baseline: a, test: sign}\noutput: [{format: table}]\n"
    )
    assert main(["run", str(tmp_path / "plan.yaml")]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("b "))
    assert row.count("▲") == 1 and "▼" not in row, row  # RBP's mark alone


def test_a_query_the_run_lacks_has_rbp_0_and_residual_1():
    # irspec scores a qrels query the run lacks as its empty ranking (trec_eval -c): n = 0, so RBP = 0 and
    # the residual is p^0 = 1: nothing of the ranking is known, RBP could be anything from 0 to 1.
    v = values("RBP, RBP(residual=true), ERR, NCG@10", {**QRELS, "q3": {"a": 1}}, RUN)
    assert v["q3"] == {"RBP(p=0.8)": 0.0, "RBP(p=0.8,residual=true)": 1.0, "ERR": 0.0, "NCG@10": 0.0}


def test_rbp_binary_uses_the_relevance_level():
    v = values("RBP, RBP(rel=2)", relevance_level=2)
    assert v["q1"]["RBP(p=0.8)"] == pytest.approx(0.2)  # only a (3) at rank 1
    assert v["q1"]["RBP(p=0.8,rel=2)"] == v["q1"]["RBP(p=0.8)"]
    with pytest.raises(irspec.ParameterError, match="rel"):
        values("RBP(rel=2, max_grade=3)")


def test_ncg_by_hand():
    v = values("NCG@2, NCG@3, NCG, NCG(gains={1:0,2:1,3:3})@2")
    # ideal gains 3, 2, 1; ranked 3, 0, 1, unjudged
    assert v["q1"]["NCG@2"] == pytest.approx(3 / 5)
    assert v["q1"]["NCG@3"] == pytest.approx(4 / 6)
    assert v["q1"]["NCG"] == pytest.approx(4 / 6)
    assert v["q1"]["NCG(gains={1:0,2:1,3:3})@2"] == pytest.approx(3 / 4)  # ideal: 3 + 1
    assert v["x-2"]["NCG@2"] == 1.0
    assert values("NCG", {"q": {"a": 0}}, {"q": {"a": 1.0}})["q"]["NCG"] == 0.0  # no gain to find: 0


def test_ranx_spelling_of_rbp_is_its_persistence():
    # ranx reads rbp.95 as p = 0.95 (float("0." + "95"), ranx/metrics/__init__.py): the digits after the
    # dot are p's decimals, never a cutoff
    assert irspec.parse("rbp.95") == irspec.parse("RBP(p=0.95)")
    assert str(irspec.parse("RBP.8")) == "RBP(p=0.8)"
    assert irspec.parse_many("rbp.5,95") == irspec.parse_many("RBP(p=0.5), RBP(p=0.95)")
    assert irspec.parse("rbp.95").trec_name is None  # no trec_eval name is claimed
    with pytest.raises(irspec.ParameterError, match="ranx"):
        irspec.parse("rbp.0.95")
    # @ stays the cutoff, as in ir_measures (ranx's rbp@95 would be p = 0.95 too: not read that way)
    assert str(irspec.parse("RBP@95")) == "RBP(p=0.8)@95"


def test_rbp_on_trec_evals_command_line_is_refused_even_with_the_plugin():
    # trec_eval's rbp has p = 0.9 (m_rbp.c); the language's rbp is this plugin's RBP, which says its p
    assert str(irspec.parse("rbp")) == "RBP(p=0.8)"
    with pytest.raises(irspec.SpecError, match="trec_eval's rbp"):
        irspec.parse_many("rbp", trec=True)
    assert irspec.parse_many("RBP(p=0.9)", trec=True) == [irspec.parse("RBP(p=0.9)")]


def test_canonical_texts_and_aliases():
    cases = {
        "RBP(0.9)@10": "RBP(p=0.9)@10",
        # p is shown at its default: 0.8 here and in ir_measures, 0.9 in trec_eval, no default in ranx
        "rank_biased_precision(residual=true)": "RBP(p=0.8,residual=true)",
        "RBP": "RBP(p=0.8)",
        "RBP(p=0.8)": "RBP(p=0.8)",
        "ERR(max_grade=4)@20": "ERR@20",
        "expected_reciprocal_rank@10": "ERR@10",
        "normalized_cumulative_gain@100": "NCG@100",
        "NCG.10": "NCG@10",
    }
    for text, canonical in cases.items():
        assert str(irspec.parse(text)) == canonical
        assert irspec.parse(canonical) == irspec.parse(text)
    with pytest.raises(irspec.ParameterError, match="p"):
        irspec.parse("RBP(p=0)")
    with pytest.raises(irspec.ParameterError, match="max_grade"):
        irspec.parse("ERR(max_grade=0)")


def test_rbp_residual_differs_from_trec_evals_rbp_resid_on_a_fully_judged_ranking():
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    v = values("RBP(p=0.9, residual=true), rbp_resid", qrels, run)["q"]
    assert v["RBP(p=0.9,residual=true)"] == pytest.approx(0.81)  # p^n: the ranks below the list
    assert v["rbp_resid"] == 0.0  # trec_eval's convention


# --------------------------------------------------------------------------------------------------
# Against the published formulas, computed here


def _random_collection(seed: int, queries: int = 40):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(queries):
        qid = f"topic-{q}" if q % 2 else str(q)
        docs = [f"d{i}" for i in range(int(rng.integers(1, 30)))]
        judged = {d: int(rng.integers(-1, 5)) for d in docs if rng.random() < 0.7}
        qrels[qid] = judged or {"d0": 0}
        ranked = [d for d in docs if rng.random() < 0.8] or docs[:1]
        run[qid] = {d: float(s) for d, s in zip(ranked, rng.permutation(len(ranked)), strict=True)}
    return qrels, run


def _ranked_labels(qrels, run, qid):
    order = sorted(run[qid], key=lambda d: (-run[qid][d], tuple(-ord(c) for c in d)))  # score, docno desc
    return [qrels[qid].get(d) for d in order]


def published_err(labels, g_max, k=None):
    """Chapelle et al. (2009), eq. 4: ERR = Σ_r (1/r) R_r Π_{i<r} (1 − R_i), R = (2^g − 1) / 2^g_max."""
    labels = labels[:k] if k is not None else labels
    R = [(2 ** min(max(g or 0, 0), g_max) - 1) / 2**g_max for g in labels]
    return sum(R[r] / (r + 1) * math.prod(1 - R[i] for i in range(r)) for r in range(len(R)))


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize(("g_max", "k"), [(4, None), (4, 10), (2, 5), (1, None)])
def test_err_matches_the_published_formula(seed, g_max, k):
    qrels, run = _random_collection(seed)
    spec = f"ERR(max_grade={g_max})" + (f"@{k}" if k else "")
    got = irspec.evaluate(qrels, run, spec).per_query()
    for qid in run:
        want = published_err(_ranked_labels(qrels, run, qid), g_max, k)
        assert got[qid][str(irspec.parse(spec))] == pytest.approx(want, abs=1e-12), qid


def test_err_vectorised_kernel_equals_the_reference_per_query_function():
    # ERR declares both forms; the engine uses compute. A definition with only the per-query form
    # runs the paper's algorithm one query at a time through irspec's per-query path.
    reference = dataclasses.replace(plugin.ERR, name="ERRReference", compute=None)

    class Reference:
        @irspec.hookimpl
        def irspec_register_metrics(self, register):
            register(reference)

    qrels, run = _random_collection(7, queries=60)
    with registered_plugin(plugin, Reference()):
        res = irspec.evaluate(
            qrels, run, "ERR ERRReference ERR@5 ERRReference@5 ERR(max_grade=2) ERRReference(max_grade=2)"
        )
        for a, b in [(0, 1), (2, 3), (4, 5)]:
            np.testing.assert_allclose(res.values[:, a], res.values[:, b], rtol=0, atol=1e-12)


def published_rbp(labels, p, level=1, k=None, max_grade=None):
    """Moffat & Zobel (2008), eq. 4 and §5: RBP = (1 − p) Σ r_i p^(i−1); residual as defined in the plugin."""
    labels = labels[:k] if k is not None else labels
    r = [
        0.0 if g is None or g < 0 else (min(g, max_grade) / max_grade if max_grade else float(g >= level))
        for g in labels
    ]
    base = (1 - p) * sum(ri * p**i for i, ri in enumerate(r))
    unjudged = (1 - p) * sum(p**i for i, g in enumerate(labels) if g is None or g < 0)
    return base, unjudged + p ** len(labels)


@pytest.mark.parametrize("seed", [4, 5])
@pytest.mark.parametrize(
    ("p", "k", "max_grade"), [(0.8, None, None), (0.5, 10, None), (0.95, 20, 4), (0.8, None, 3)]
)
def test_rbp_and_residual_match_the_published_formula_and_bounds(seed, p, k, max_grade):
    qrels, run = _random_collection(seed)
    args = f"p={p}" + (f",max_grade={max_grade}" if max_grade else "")
    cut = f"@{k}" if k else ""
    base_spec, resid_spec = f"RBP({args}){cut}", f"RBP({args},residual=true){cut}"
    res = irspec.evaluate(qrels, run, [base_spec, resid_spec])
    base, resid = res.values[:, 0], res.values[:, 1]
    for i, qid in enumerate(res.query_ids):
        want_base, want_resid = published_rbp(_ranked_labels(qrels, run, qid), p, k=k, max_grade=max_grade)
        assert base[i] == pytest.approx(want_base, abs=1e-12)
        assert resid[i] == pytest.approx(want_resid, abs=1e-12)
    # the bounds: 0 <= RBP <= RBP + residual <= 1
    assert np.all(base >= 0) and np.all(resid >= 0)
    assert np.all(base + resid <= 1 + 1e-12)


def test_residual_is_exactly_p_to_the_depth_when_every_document_is_judged():
    qrels, run = _random_collection(9)
    judged = {q: {**qrels[q], **{d: max(qrels[q].get(d, 0), 0) for d in run[q]}} for q in run}  # no label < 0
    res = irspec.evaluate(judged, run, ["RBP(p=0.7, residual=true)", "RBP(p=0.7, residual=true)@5"])
    n = np.array([len(run[q]) for q in res.query_ids], dtype=float)
    np.testing.assert_allclose(res.values[:, 0], 0.7**n, rtol=1e-12)
    np.testing.assert_allclose(res.values[:, 1], 0.7 ** np.minimum(n, 5), rtol=1e-12)


def test_rbp_plus_residual_is_one_when_every_judged_document_is_fully_relevant():
    qrels = {"q": {"a": 1, "c": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}  # b unjudged
    v = values("RBP(p=0.6), RBP(p=0.6, residual=true)", qrels, run)["q"]
    assert v["RBP(p=0.6)"] + v["RBP(p=0.6,residual=true)"] == pytest.approx(1.0)


# --------------------------------------------------------------------------------------------------
# The plugin as a package


def test_ncg_is_in_the_per_query_form_and_the_others_vectorised(usermodel):
    d = usermodel.definitions
    assert d["NCG"].compute is None and d["NCG"].per_query == "irspec_usermodel.kernels:ncg"
    assert d["RBP"].compute == "irspec_usermodel.kernels:rbp"
    assert d["ERR"].compute and d["ERR"].per_query
    assert {d[n].plugin for n in ("ERR", "RBP", "NCG")} == {"irspec_usermodel.plugin"}


def test_declaring_the_metrics_imports_no_numerical_code():
    import subprocess
    import sys

    code = (
        "import sys, irspec_usermodel.plugin; "
        "print(sorted(m for m in ('numpy', 'irspec_usermodel.kernels', 'irspec.evaluation.context', 'irspec.evaluation.ranking') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_installed_entry_point_is_found_with_its_distribution(monkeypatch):
    try:
        dist = importlib.metadata.distribution("irspec-usermodel")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("irspec-usermodel is importable but not installed")
    from irspec.spec.plugins import build_registry, get_plugin_manager, plugin_report

    monkeypatch.delenv("IRSPEC_LOAD_PLUGINS", raising=False)
    pm = get_plugin_manager(load_entry_points=True)
    assert pm.get_plugin("usermodel") is not None
    registry = build_registry(pm)
    assert registry.definitions["RBP"].plugin == "usermodel"
    assert registry.distributions["usermodel"] == f"irspec-usermodel {dist.version}"
    (entry,) = [r for r in plugin_report(pm) if r["name"] == "usermodel"]
    assert entry["distribution"] == f"irspec-usermodel {dist.version}"
    assert entry["metrics"] == [
        "BPM",
        "ERR",
        "INSQ",
        "INST",
        "NCG",
        "NERR10",
        "NERR11",
        "NERR8",
        "NERR9",
        "RBP",
        "SDCG",
    ]
    monkeypatch.setenv("IRSPEC_LOAD_PLUGINS", "something-else")
    assert get_plugin_manager(load_entry_points=True).get_plugin("usermodel") is None
