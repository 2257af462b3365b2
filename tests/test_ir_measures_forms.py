"""The forms ir_measures' spellings needed in the language: the generic ``judged_only``, keyword redirects
(``SetP(relative=True)``, ``NumRet(rel=1)``), SetF's beta on trec_eval's scale, non-ASCII names (``α``),
and ``irspec metrics`` naming every metric's plugin. Expected values are hand arithmetic written out here;
the values against ir_measures itself are in ``tests/test_ir_measures.py``.
"""

from __future__ import annotations

import json
import math

import pytest

import irspec
from irspec.cli import main
from irspec.spec.hooks import hookimpl
from irspec.spec.registry import Alias, MetricDef, Param, Redirect

# x is unjudged, c has a negative label (pooled, unjudged), b is judged non-relevant, a relevant.
QRELS = {"q": {"a": 1, "b": 0, "c": -1, "d": 1}}
RUN = {"q": {"x": 4.0, "a": 3.0, "c": 2.0, "b": 1.0}}


def _values(specs: str, **options) -> dict[str, float]:
    return irspec.evaluate(QRELS, RUN, specs, **options).per_query()["q"]


def test_judged_only_is_minus_j_for_that_metric_alone():
    # whole ranking x a c b: P@1 = 0 (x), P@2 = 1/2. Judged only: a b: P@1 = 1, P@2 = 1/2, R = 2, AP:
    # a at rank 1 -> 1/1, d not retrieved: AP = 1/2; without -J a is at rank 2: AP = (1/2)/2 = 1/4.
    got = _values("P@1, P(judged_only=true)@1, P(judged_only=true)@2, AP, AP(judged_only=true)")
    assert got == {
        "P@1": 0.0,
        "P(judged_only=true)@1": 1.0,
        "P(judged_only=true)@2": 0.5,
        "AP": 0.25,
        "AP(judged_only=true)": 0.5,
    }
    # the same values as the option for the whole evaluation (trec_eval -J)
    whole = _values("P@1, P@2, AP", judged_only=True)
    assert whole == {"P@1": 1.0, "P@2": 0.5, "AP": 0.5}
    # under the option the flag changes nothing
    assert _values("P(judged_only=true)@1", judged_only=True)["P(judged_only=true)@1"] == 1.0


def test_judged_only_reaches_per_query_plugin_metrics(irspec_plugin):
    class Plugin:
        @hookimpl
        def irspec_register_metrics(self, register):
            register(MetricDef("RankLen", "ranking length", per_query=lambda view, m: len(view.docnos)))

    irspec_plugin(Plugin())
    assert "judged_only" in irspec.parse("RankLen").definition.param_names  # added at registration
    got = _values("RankLen, RankLen(judged_only=true)")
    assert got == {"RankLen": 4.0, "RankLen(judged_only=true)": 2.0}  # x a c b, then a b


def test_judged_only_takes_only_a_boolean():
    with pytest.raises(irspec.ParameterError, match="judged_only"):
        irspec.parse("P(judged_only=2)@5")
    # the default is dropped, on metrics with a required parameter too
    for text, canonical in [
        ("P(judged_only=false)@5", "P@5"),
        ("IPrec(judged_only=False)@0.5", "IPrec@0.5"),
        ("Success(judged_only=0)@10", "Success@10"),
        ("Compat(judged_only=false)", "Compat"),
    ]:
        assert str(irspec.parse(text)) == canonical


def test_redirects_read_as_the_other_metric():
    # relP = relevant retrieved / min(n, R): 1 / min(4, 2) = 1/2; NumRelRet at level 1 = 1
    got = _values("SetP(relative=True), SetRelP, NumRet(rel=1), NumRet")
    assert got == {"relP": 0.5, "NumRelRet(rel=1)": 1.0, "NumRet": 4.0}
    assert irspec.parse("SetP(relative=true)@3") == irspec.parse("relP@3")


def test_a_redirect_on_a_declared_parameter_or_to_nothing_is_refused(irspec_plugin):
    class Clash:
        @hookimpl
        def irspec_register_metrics(self, register):
            register(
                MetricDef(
                    "Clash", "x", (Param("rel", "int"),), compute="m:f", redirects=(Redirect("rel", "P"),)
                )
            )

    with pytest.raises(irspec.RegistryError, match="redirect"):
        irspec_plugin(Clash())

    class Nowhere:
        @hookimpl
        def irspec_register_metrics(self, register):
            register(MetricDef("Nowhere", "x", compute="m:f", redirects=(Redirect("via", "NoSuchMetric"),)))

    irspec_plugin(Nowhere())
    with pytest.raises(irspec.RegistryError, match="NoSuchMetric"):
        irspec.parse("Nowhere(via=1)")


def test_setf_beta_is_trec_evals_beta_squared():
    # ir_measures' SetF(beta=x) runs trec_eval's set_F.x, F = (x+1)PR / (xP + R): x = 4 is F with beta 2.
    assert irspec.parse("SetF(beta=4)") == irspec.parse("F(beta=2)") == irspec.parse("set_F.4")
    # P = 1/4, R = 1/2: (4+1)(1/4)(1/2) / (4(1/4) + 1/2) = (5/8) / (3/2) = 5/12
    assert _values("SetF(beta=4)")["F(beta=2)"] == pytest.approx(5 / 12, abs=1e-15)
    with pytest.raises(irspec.ParameterError, match="beta squared"):
        irspec.parse("SetF(beta=-1)")


def _alpha_plugin():
    class Plugin:
        @hookimpl
        def irspec_register_metrics(self, register):
            register(
                MetricDef(
                    "alpha_probe",
                    "a probe",
                    (Param("k", "int", None, minimum=1),),
                    at="k",
                    per_query=lambda v, m: 1.0,
                ),
                aliases=["α_probe", Alias("α-probe")],
            )

    return Plugin()


def test_a_registered_alias_with_alpha_resolves(irspec_plugin):
    irspec_plugin(_alpha_plugin())
    canonical = irspec.parse("alpha_probe@5")
    # the simple (lark-free) path and the grammar both read it; the canonical text is the definition's name
    assert irspec.parse("α_probe@5") == canonical and str(irspec.parse("α_probe@5")) == "alpha_probe@5"
    assert irspec.parse("α_probe(k=5)") == canonical  # through the grammar
    assert irspec.parse("Α_PROBE@5") == canonical  # names are case-insensitive, Greek too
    assert irspec.parse("α-probe@5") == canonical  # a hyphenated spelling
    assert irspec.parse_many("P@5, α_probe@5 AP") == [irspec.parse("P@5"), canonical, irspec.parse("AP")]


def test_unknown_non_ascii_names_are_unknown_metrics_not_syntax_errors():
    with pytest.raises(irspec.UnknownMetricError, match="α_nothing"):
        irspec.parse("α_nothing@5")
    # a letter right after a number is part of one word, in any script
    with pytest.raises(irspec.SpecError):
        irspec.parse("P@5α")


@pytest.mark.parametrize(
    "text", ["α_nDCG@10", "P@Rα", "α, β_x@3", "é1@2 P.5,10", "ndcg١@3", "P@5α", "α_x.5,10"]
)
def test_the_simple_path_and_the_grammar_agree_on_non_ascii_names(text):
    from irspec.spec import syntax as spec

    fast = spec._parse_simple(text)
    if fast is None:
        return  # declined: the grammar reads it (or refuses it) alone
    tree = spec._parser().parse(text)
    assert fast == [spec._spec(child, text) for child in tree.children[0].children]


def test_metrics_names_the_plugin_of_every_metric(capsys, irspec_plugin):
    irspec_plugin(load_entry_points=True)  # the installed plugins too, as a user's `irspec metrics`
    assert main(["metrics"]) == 0
    lines = capsys.readouterr().out.splitlines()
    heads = [line for line in lines if line and not line.startswith(" ") and "(" in line.split()[0]]
    registry = irspec.spec.plugins.get_registry()
    for name, d in registry.definitions.items():
        (head,) = [h for h in heads if h.startswith(name + "(")]
        assert f"[{d.plugin}" in head, head
    compat = next(h for h in heads if h.startswith("Compat("))
    assert "[irspec.builtin.preference]" in compat and "judged_only" not in compat
    assert any("judged_only=true" in line for line in lines)
    assert main(["metrics", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["Accuracy"]["plugin"] == "irspec.builtin.preference"
    assert rows["P"]["redirects"] == [
        {"keyword": "relative", "when": True, "target": "relP"},
        {"keyword": "relative", "when": False, "target": "P"},
    ]
    assert "judged_only" in {p["name"] for p in rows["P"]["params"]}


def test_no_nan_leaks_into_judged_only_values_of_empty_rankings():
    # -J empties the ranking of a query that retrieved only unjudged documents: 0, as the option gives
    qrels = {"q": {"a": 1}}
    run = {"q": {"x": 1.0, "y": 0.5}}
    got = irspec.evaluate(
        qrels, run, "P(judged_only=true)@2, AP(judged_only=true), IPrec(judged_only=true)@0.0"
    ).per_query()["q"]
    assert all(v == 0.0 and not math.isnan(v) for v in got.values()), got
