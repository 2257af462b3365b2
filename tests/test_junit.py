"""tests/junit.py, which reads the peers' suites' reports, on a report written here by hand."""

from __future__ import annotations

from pathlib import Path

from junit import Case, cases

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="4">
<testcase classname="unit.ranx.metrics_test" name="test_ok" time="0.1"/>
<testcase classname="unit.ranx.metrics_test" name="test_bad" time="0.1">
<failure message="assert 0.5 == 0.25&#10;second line">trace</failure></testcase>
<testcase classname="" name="unit.ranx.io_test" time="0"><error message="collection failure">trace</error></testcase>
<testcase classname="unit.ranx.metrics_test" name="test_skip" time="0"><skipped message="no numba"/></testcase>
</testsuite></testsuites>
"""


def test_each_case_with_its_outcome_and_the_first_line_of_why(tmp_path: Path) -> None:
    report = tmp_path / "report.xml"
    report.write_text(REPORT, encoding="utf-8")
    assert cases(report) == [
        Case("unit.ranx.metrics_test", "test_ok", "passed"),
        Case("unit.ranx.metrics_test", "test_bad", "failed", "assert 0.5 == 0.25"),
        Case("", "unit.ranx.io_test", "failed", "collection failure"),
        Case("unit.ranx.metrics_test", "test_skip", "skipped"),
    ]
