"""Tests of irspec.data.datasets: ``irds:<id>`` qrels and the ``irds-official`` measures, through ir_datasets.

No network here: the datasets are registered locally through ir_datasets' own registry
(``ir_datasets.registry.register(id, Dataset(...))``), built from ir_datasets' own parts (``TrecQrels``
over a local file, ``BaseQrels``), so that reading them runs the real ir_datasets code path. A dataset's
documentation is a constituent with a ``documentation()`` method, as ir_datasets' ``YamlDocumentation``
gives one; the packaged documentation of ir_datasets' real datasets is read too (it ships in the wheel).

Expected values come from pytrec_eval (its ``relevance_level`` is trec_eval's ``-l``, which is what
ir_measures' ``rel=`` means) and from the arithmetic written out below, never from irspec.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import irspec
from irspec.cli import main
from irspec.errors import InputError, PlanError, SpecError

FIXTURES = Path(__file__).resolve().parent / "fixtures"
QRELS = FIXTURES / "irds_qrels.txt"  # q1: d1 2, d2 1, d3 0, d4 2; q2: d5 1, d6 2, d7 0
RUN = FIXTURES / "irds_run.txt"  # q1: d3 d2 d1 d9 d4; q2: d5 d7 d6 (scores descending)
OFFICIAL = ["nDCG@10", "RR(rel=2)", "AP(rel=2)"]  # msmarco-passage/trec-dl-2019's, as ir_datasets writes them


class _Documentation:
    """A dataset's documentation, as ir_datasets' ``YamlDocumentation`` provides it to a ``Dataset``."""

    def __init__(self, **fields: object) -> None:
        self._fields = fields

    def documentation(self) -> dict[str, object]:
        return dict(self._fields)


@pytest.fixture(scope="module")
def irds():
    """ir_datasets with this module's datasets registered (once per process: its registry is global)."""
    ir_datasets = pytest.importorskip(
        "ir_datasets", reason="needs the datasets extra: pip install 'irspec[datasets]'"
    )
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import BaseQrels, GenericQrel, GenericScoredDoc, TrecQrels
    from ir_datasets.util import LocalDownload, StringFile

    class Listed(BaseQrels):  # qrels records as a loader yields them (ids as numbers, say)
        def __init__(self, *records: tuple) -> None:
            self._records = records

        def qrels_iter(self):
            yield from self._records

        def qrels_defs(self):
            return {0: "no", 1: "yes", 3: "perfect"}

    def trec(path: Path) -> TrecQrels:
        return TrecQrels(LocalDownload(path), {0: "not relevant", 1: "relevant", 2: "highly relevant"})

    datasets = {
        "graded": Dataset(trec(QRELS), _Documentation(official_measures=OFFICIAL)),
        "unreadable": Dataset(
            trec(QRELS), _Documentation(official_measures=["nDCG@10", "alpha_nDCG@20", "RBP(p=0.8)"])
        ),
        "undocumented": Dataset(trec(QRELS)),
        "integer-ids": Dataset(Listed(GenericQrel(7, 70, 1), GenericQrel(7, 71, 0), GenericQrel(12, 70, 3))),
        "fractional": Dataset(Listed(GenericQrel("q1", "d1", 1), GenericQrel("q1", "d2", 1.5))),
        "empty": Dataset(TrecQrels(StringFile(""), {0: "no", 1: "yes"})),
        "not-qrels": Dataset(Listed(GenericScoredDoc("q1", "d1", 1.5))),
        "no-qrels": Dataset(_Documentation(official_measures=OFFICIAL)),
        "missing-file": Dataset(
            trec(FIXTURES / "irds_no_such_file.txt"), _Documentation(official_measures=OFFICIAL)
        ),
    }
    known = set(ir_datasets.registry)
    for name, dataset in datasets.items():
        if f"irspec-test/{name}" not in known:
            ir_datasets.registry.register(f"irspec-test/{name}", dataset)
    return ir_datasets


def _pytrec(measures: set[str], relevance_level: int) -> dict[str, dict[str, float]]:
    import pytrec_eval

    qrels: dict[str, dict[str, int]] = {}
    for line in QRELS.read_text().splitlines():
        q, _, d, label = line.split()
        qrels.setdefault(q, {})[d] = int(label)
    run: dict[str, dict[str, float]] = {}
    for line in RUN.read_text().splitlines():
        q, _, d, _, score, _ = line.split()
        run.setdefault(q, {})[d] = float(score)
    return pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=relevance_level).evaluate(run)


def _error_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """The one stderr line of a CLI call that must fail with exit code 2 and print nothing else."""
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("irspec: error: "), err
    return lines[0]


# --------------------------------------------------------------------------------------------------
# Qrels


def test_qrels_read_through_ir_datasets_equal_the_files(irds):
    found = irspec.read_qrels("irds:irspec-test/graded")
    assert found.source == "irds:irspec-test/graded"
    direct = irspec.read_qrels(str(QRELS))  # the same judgments, through irspec's TREC reader
    assert found.frame.drop("line").rows() == direct.frame.drop("line").rows()
    assert found.frame.get_column("line").null_count() == len(found)


def test_integer_ids_become_text_and_labels_stay_integers(irds):
    found = irspec.read_qrels("irds:irspec-test/integer-ids")
    assert found.frame.select("query", "docno", "label").rows() == [
        ("12", "70", 3),
        ("7", "70", 1),
        ("7", "71", 0),
    ]


def test_a_fractional_label_is_refused_and_no_judgments_is_a_warning(irds):
    with pytest.raises(
        InputError,
        match=r"^irds:irspec-test/fractional: query 'q1': row 1: label must be an integer, got 1\.5 for docno 'd2'",
    ):
        irspec.read_qrels("irds:irspec-test/fractional")
    assert len(irspec.read_qrels("irds:irspec-test/empty")) == 0
    res = irspec.evaluate("irds:irspec-test/empty", str(RUN), "P@5")
    assert any("irds:irspec-test/empty" in w and "no judgments" in w for w in res.warnings), res.warnings


def test_evaluate_irds_official_gives_the_official_measures_at_their_levels(irds):
    res = irspec.evaluate("irds:irspec-test/graded", str(RUN), "irds-official")
    assert [str(m) for m in res.metrics] == OFFICIAL
    per_query = res.per_query()
    # By hand: RR(rel=2) counts labels >= 2 only: q1's first is d1 at rank 3, q2's d6 at rank 3. AP(rel=2):
    # q1 has d1 (rank 3) and d4 (rank 5) of R = 2: (1/3 + 2/5) / 2 = 11/30; q2 has d6 at rank 3: 1/3.
    assert per_query["q1"]["RR(rel=2)"] == pytest.approx(1 / 3)
    assert per_query["q2"]["RR(rel=2)"] == pytest.approx(1 / 3)
    assert per_query["q1"]["AP(rel=2)"] == pytest.approx(11 / 30)
    assert per_query["q2"]["AP(rel=2)"] == pytest.approx(1 / 3)
    level2 = _pytrec({"recip_rank", "map"}, relevance_level=2)
    level1 = _pytrec({"ndcg_cut_10"}, relevance_level=1)
    for q in ("q1", "q2"):
        assert per_query[q]["RR(rel=2)"] == pytest.approx(level2[q]["recip_rank"], abs=1e-12)
        assert per_query[q]["AP(rel=2)"] == pytest.approx(level2[q]["map"], abs=1e-12)
        assert per_query[q]["nDCG@10"] == pytest.approx(level1[q]["ndcg_cut_10"], abs=1e-12)


def test_irds_official_mixes_with_other_specs_and_qrels_already_read(irds):
    qrels = irspec.read_qrels("irds:irspec-test/graded")  # a Qrels keeps the dataset it came from
    res = irspec.evaluate(qrels, str(RUN), ["P@5", "irds-official, RR"])
    assert [str(m) for m in res.metrics] == ["P@5", *OFFICIAL, "RR"]
    # RR at the default level 1: q1's d2 (label 1) at rank 2, q2's d5 at rank 1.
    assert res.per_query()["q1"]["RR"] == pytest.approx(0.5)
    assert res.per_query()["q2"]["RR"] == pytest.approx(1.0)


def test_several_runs_against_irds_qrels(irds):
    many = irspec.evaluate("irds:irspec-test/graded", {"a": str(RUN), "b": str(RUN)}, "irds-official")
    assert list(many) == ["a", "b"]
    for name in ("a", "b"):
        assert [str(m) for m in many[name].metrics] == OFFICIAL
        assert many[name].aggregate()["RR(rel=2)"] == pytest.approx(1 / 3)


def test_the_documented_measures_of_a_real_dataset(irds):
    from irspec.data.datasets import official_specs

    # ir_datasets' docs/msmarco-passage.yaml: trec-dl-2019 has official_measures ['nDCG@10', 'RR(rel=2)',
    # 'AP(rel=2)'], and its judged subset shares them. Read from the packaged file, nothing downloaded.
    assert official_specs("irds:msmarco-passage/trec-dl-2019/judged") == tuple(OFFICIAL)
    assert official_specs("irds:msmarco-passage/dev/small") == ("RR@10",)


def test_every_official_measure_ir_datasets_documents_is_readable(irds):
    from irspec.data.datasets import official_specs

    documented = 0
    for dataset_id in list(irds.registry):
        if dataset_id.startswith("irspec-test/"):
            continue
        dataset = irds.load(dataset_id)
        if dataset.has_qrels() and (dataset.documentation() or {}).get("official_measures"):
            official_specs(f"irds:{dataset_id}")  # raises, naming them, for any irspec cannot read
            documented += 1
    assert documented > 50  # ir_datasets 0.5 and later document dozens


# --------------------------------------------------------------------------------------------------
# The command line


def test_cli_eval_irds_official(irds, capsys):
    assert (
        main(
            [
                "eval",
                "irds:irspec-test/graded",
                str(RUN),
                "-m",
                "irds-official",
                "-m",
                "P.5",
                "--format",
                "json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["metrics"] == [*OFFICIAL, "P@5"]
    aggregate = out["runs"][0]["aggregate"]
    assert aggregate["RR(rel=2)"] == pytest.approx(1 / 3)
    assert aggregate["AP(rel=2)"] == pytest.approx((11 / 30 + 1 / 3) / 2)
    assert aggregate["P@5"] == pytest.approx((3 / 5 + 2 / 5) / 2)  # q1: d2 d1 d4 of 5; q2: d5 d6 (of 5)
    assert out["provenance"]["inputs"][0]["path"] == "irds:irspec-test/graded"


@pytest.mark.parametrize(
    ("qrels", "spec", "expected"),
    [
        (
            "irds:irspec-test/nope",
            "P@5",
            "irds:irspec-test/nope: ir_datasets has no dataset 'irspec-test/nope'; did you mean 'irspec-test/",
        ),
        ("irds:", "P@5", "irds:: no dataset id after 'irds:'; expected irds:<id>"),
        (
            "irds:irspec-test/no-qrels",
            "P@5",
            "irds:irspec-test/no-qrels: ir_datasets has no qrels for this dataset",
        ),
        (
            "irds:irspec-test/no-qrels",
            "irds-official",
            "irds:irspec-test/no-qrels: ir_datasets has no qrels for this dataset",
        ),
        (
            "irds:irspec-test/not-qrels",
            "P@5",
            "irds:irspec-test/not-qrels: the dataset's qrels records (GenericScoredDoc) have no 'relevance'",
        ),
        (
            "irds:irspec-test/missing-file",
            "P@5",
            "irds:irspec-test/missing-file: ir_datasets could not read the qrels: FileNotFoundError",
        ),
        (
            "irds:irspec-test/undocumented",
            "irds-official",
            "irds:irspec-test/undocumented: ir_datasets documents no official measures",
        ),
        (
            str(QRELS),
            "irds-official",
            "'irds-official' stands for the official measures of an ir_datasets dataset, so it needs qrels named irds:<dataset id>",
        ),
        (
            "irds:irspec-test/graded",
            "irds-official@10",
            "irds-official: a group of metrics takes no arguments or cutoff",
        ),
    ],
)
def test_cli_errors_say_what_to_do(irds, capsys, qrels, spec, expected):
    assert expected in _error_line(capsys, ["eval", qrels, str(RUN), "-m", spec])


def test_unreadable_official_measures_are_named(irds, capsys):
    line = _error_line(capsys, ["eval", "irds:irspec-test/unreadable", str(RUN), "-m", "irds-official"])
    assert "irds:irspec-test/unreadable: irspec cannot read 2 of the dataset's official measures" in line
    assert "'alpha_nDCG@20' (unknown metric 'alpha_nDCG'" in line
    assert "'RBP(p=0.8)' (unknown metric 'RBP'" in line
    # Without irds-official, the dataset's qrels serve any other measure.
    assert main(["eval", "irds:irspec-test/unreadable", str(RUN), "-m", "P.5"]) == 0


def test_without_ir_datasets_the_error_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setitem(
        sys.modules, "ir_datasets", None
    )  # what `import ir_datasets` meets when it is missing
    line = _error_line(
        capsys, ["eval", "irds:msmarco-passage/trec-dl-2019/judged", str(RUN), "-m", "nDCG@10"]
    )
    assert line == (
        "irspec: error: irds:msmarco-passage/trec-dl-2019/judged: reading irds: qrels needs ir_datasets, "
        "which is not installed: pip install 'irspec[datasets]'"
    )
    with pytest.raises(InputError, match=r"pip install 'irspec\[datasets\]'"):
        irspec.evaluate("irds:msmarco-passage/trec-dl-2019/judged", str(RUN), "irds-official")


def test_the_spec_language_alone_refuses_irds_official():
    with pytest.raises(SpecError, match=r"'irds-official' stands for .* needs qrels named irds:<dataset id>"):
        irspec.parse("irds-official")
    with pytest.raises(SpecError, match="needs qrels named irds:"):
        irspec.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, "irds-official")


def test_evaluating_files_does_not_import_ir_datasets():
    code = textwrap.dedent(
        f"""
        import sys, irspec
        irspec.evaluate({str(QRELS)!r}, {str(RUN)!r}, "nDCG@10, P@5")
        print("ir_datasets" in sys.modules)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


# --------------------------------------------------------------------------------------------------
# Plans


def _plan(tmp_path: Path, qrels: str, metrics: str) -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(
        f"qrels: {qrels}\nruns:\n  - {{name: graded, path: {RUN}}}\nmetrics: {metrics}\noutput:\n  - {{format: table}}\n",
        encoding="utf-8",
    )
    return path


def test_a_plan_names_irds_qrels_and_official_measures(irds, tmp_path):
    from irspec.plan.execute import run_plan
    from irspec.plan.load import load_plan

    plan = load_plan(_plan(tmp_path, "irds:irspec-test/graded", "[irds-official, P@5]"))
    assert plan.qrels == "irds:irspec-test/graded"  # a dataset id, not a path beside the plan
    assert [str(m) for m in plan.metrics] == [*OFFICIAL, "P@5"]
    (result,) = run_plan(plan).results
    expected = irspec.evaluate(str(QRELS), str(RUN), [*OFFICIAL, "P@5"])
    assert result.per_query() == expected.per_query()


def test_a_plan_with_an_unknown_dataset_names_its_line(irds, tmp_path):
    from irspec.plan.load import load_plan

    path = _plan(tmp_path, "irds:irspec-test/nope", "[irds-official]")
    with pytest.raises(PlanError) as info:
        load_plan(path)
    (problem,) = info.value.problems  # said once, under qrels, not again under metrics
    assert problem.startswith(
        f"{path}:1: qrels: irds:irspec-test/nope: ir_datasets has no dataset 'irspec-test/nope'"
    )


def test_a_plan_with_unreadable_official_measures_names_them(irds, tmp_path):
    from irspec.plan.load import load_plan

    with pytest.raises(PlanError, match=r"metrics.*'alpha_nDCG@20'.*'RBP\(p=0\.8\)'"):
        load_plan(_plan(tmp_path, "irds:irspec-test/unreadable", "[irds-official]"))
