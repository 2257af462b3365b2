"""irspec.plugin_api, the module plugin authors import besides the face, and the protocols of the data
objects an input reader returns (``irspec.spec.definitions``), as ``irspec.evaluate_input`` reads them.

A toy reader plugin defined here returns objects with and without each optional member; the values are
hand arithmetic written out in each test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import irspec
import irspec.plugin_api as api
from irspec import InputReader, InputTable, MetricDef

ROOT = str(Path(irspec.__file__).resolve().parent.parent)
HEAVY = ["numpy", "polars", "scipy", "pandas", "pyarrow", "yaml", "matplotlib", "ir_datasets", "pyspark"]


def test_importing_it_loads_nothing_heavy():
    """A plugin's declarations import it whenever irspec builds its registry, to parse a spec."""
    code = (
        "import sys, json\nfrom irspec.plugin_api import UNIT, MetricDef, hookimpl, quote, bounded_lines, PlanSection\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    env = {**os.environ, "PYTHONPATH": ROOT, "IRSPEC_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(set(HEAVY) & set(json.loads(proc.stdout))) == []


@pytest.mark.parametrize("name", api.__all__)
def test_every_name_resolves_and_is_documented(name):
    value = getattr(api, name)
    assert name in api.__doc__, f"{name} is not in the module's docstring"
    if callable(value) and not isinstance(value, type(api.hookimpl)):
        assert (value.__doc__ or "").strip() and value.__doc__ != type(value).__doc__, (
            f"{name} has no docstring"
        )
    assert name in dir(api)


def test_the_heavy_names_are_irspecs_own():
    from irspec.data.stream import Partitions
    from irspec.evaluation.context import Context
    from irspec.stats.significance import adjust, sign_p_value

    assert (api.Context, api.Partitions, api.adjust, api.sign_p_value) == (
        Context,
        Partitions,
        adjust,
        sign_p_value,
    )
    assert api.adjust([0.01, 0.04, 0.03], "holm").tolist() == pytest.approx(
        [0.03, 0.06, 0.06]
    )  # 3p; 2p; max(p, 2p)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="plugin_api' has no attribute 'Engine'"):
        api.Engine  # noqa: B018
    assert not hasattr(api, "Engine")


# --------------------------------------------------------------------------------------------------
# The data object's members, as evaluate_input uses them.


class Bare:
    """Only the required ``ids``."""

    def __init__(self, seconds):
        self.ids = tuple(f"q{i + 1}" for i in range(len(seconds)))
        self.seconds = np.asarray(seconds, dtype=float)


class Full(Bare):
    """Every optional member."""

    name = "full"
    source = "<made up>"
    warnings = ("the clock was late",)

    def tables(self):
        return [
            InputTable(
                "Slowest",
                ("query", "seconds"),
                ((self.ids[int(self.seconds.argmax())], float(self.seconds.max())),),
            )
        ]

    def compare(self, metrics, values):
        # the first half of the items against the second, on each metric
        half = len(self.ids) // 2
        rows = tuple(
            (str(m), float(values[:half, j].mean() - values[half:, j].mean())) for j, m in enumerate(metrics)
        )
        return [InputTable("First half minus second", ("metric", "difference"), rows)], ["compared halves"]


class Streamed:
    """No rows: one pass that gives the aggregates (what a reader may return for per_query=False)."""

    ids = ()
    name = "streamed"

    def __init__(self, seconds):
        self.seconds = seconds

    def evaluate(self, metrics):
        slow = sum(s > 1 for s in self.seconds) / len(self.seconds)
        return {str(m): slow for m in metrics}, [], ["streamed in one pass"]


class NoCompare(Full):
    """``compare`` set to None: not a comparing object (as ``callable(getattr(...))`` had it)."""

    compare = None


def _plugin(make):
    class Toy:
        @irspec.hookimpl
        def irspec_register_readers(self, register):
            register(
                InputReader(
                    "timings", lambda source, per_query=True: make(source) if per_query else Streamed(source)
                )
            )

        @irspec.hookimpl
        def irspec_register_metrics(self, register):
            register(MetricDef("Slow", "queries slower than a second", needs="timings",
                               compute=lambda data, metric: (data.seconds > 1).astype(float)))  # fmt: skip

    return Toy()


SECONDS = [0.5, 2.0, 3.0, 0.25]  # slow: 0, 1, 1, 0


def test_a_bare_object_gives_its_rows_and_nothing_else(irspec_plugin):
    irspec_plugin(_plugin(Bare))
    res = irspec.evaluate_input(SECONDS, "Slow", name="bare")
    assert isinstance(Bare(SECONDS), api.InputData) and not isinstance(Bare(SECONDS), api.SupportsTables)
    assert res.aggregate() == {"Slow": 0.5} and res.tables == () and res.warnings == ()


def test_every_optional_member_is_used(irspec_plugin):
    irspec_plugin(_plugin(Full))
    res = irspec.evaluate_input(SECONDS, "Slow")
    assert (res.run_name, res.run_source) == ("full", "<made up>")
    assert [t.title for t in res.tables] == ["Slowest", "First half minus second"]
    assert res.tables[0].rows == (("q3", 3.0),)
    assert res.tables[1].rows == (("Slow", 0.5 - 0.5),)  # (0 + 1) / 2 - (1 + 0) / 2
    assert res.warnings == ("the clock was late", "compared halves")


def test_a_member_set_to_none_is_not_called(irspec_plugin):
    irspec_plugin(_plugin(NoCompare))
    res = irspec.evaluate_input(SECONDS, "Slow")
    assert [t.title for t in res.tables] == ["Slowest"] and res.warnings == ("the clock was late",)


def test_a_streamed_object_gives_the_aggregates_and_no_rows(irspec_plugin):
    irspec_plugin(_plugin(Full))
    res = irspec.evaluate_input(SECONDS, "Slow", per_query=False)
    assert isinstance(Streamed(SECONDS), api.SupportsStreaming)
    assert res.run_name == "streamed" and res.query_ids == () and res.aggregate() == {"Slow": 2 / 4}
    assert res.warnings == ("streamed in one pass",)
