"""Plan sections that plugins register (``irspec_register_plan_sections``): the section's schema joins the
plan's, its value reaches the reader as a keyword, and the errors name the plugins.

A toy plugin defined here reads visits (``VISITOR SECONDS`` lines) as the ``log`` input and registers a
``window:`` section, the visits to keep; irspec-online's ``ab:`` goes the same way (its own tests). The
values are hand arithmetic written out in each test.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import irspec
from irspec import InputReader, MetricDef, PlanError, RegistryError
from irspec.plugin_api import PlanSection
from irspec.testing import registered_plugin

VISITS = "ann 30\nbob 90\nann 75\ncid 10\n"  # long visits (>= 60 s): bob's and ann's second

WINDOW = PlanSection(
    "window",
    reader="log",
    summary="a window keeps part of a log",
    schema={
        "description": "The visits kept: from the first-th on.",
        "type": "object",
        "additionalProperties": False,
        "required": ["first"],
        "properties": {
            "first": {"description": "The first visit kept, 1-based.", "type": "integer", "minimum": 1}
        },
    },
)


class Visits:
    def __init__(self, seconds):
        self.ids = tuple(f"v{i + 1}" for i in range(len(seconds)))
        self.seconds = np.asarray(seconds, dtype=float)


def read_visits(source, window=None):
    with open(source, encoding="utf-8") as f:
        seconds = [float(line.split()[1]) for line in f if line.strip()]
    return Visits(seconds[(window or {"first": 1})["first"] - 1 :])


def make_plugin(*sections, reader="log"):
    class Toy:
        @irspec.hookimpl
        def irspec_register_readers(self, register):
            register(InputReader(reader, read_visits))

        @irspec.hookimpl
        def irspec_register_metrics(self, register):
            register(MetricDef("LongVisit", "visits of a minute or more", needs=reader,
                               compute=lambda data, metric: (data.seconds >= 60).astype(float)))  # fmt: skip

        @irspec.hookimpl
        def irspec_register_plan_sections(self, register):
            for section in sections:
                register(section)

    return Toy()


def _plan(tmp_path, text):
    (tmp_path / "week.visits").write_text(VISITS, encoding="utf-8")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 2.0 a\n", encoding="utf-8")
    path = tmp_path / "plan.yaml"
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def test_a_sections_value_reaches_its_reader(tmp_path, irspec_plugin):
    from irspec.plan import load_plan, run_plan

    irspec_plugin(make_plugin(WINDOW))
    plan = load_plan(_plan(tmp_path, "log: week.visits\nmetrics: LongVisit\nwindow: {first: 2}\n"))
    assert plan.sections == (("window", {"first": 2}),)
    # visits 2-4: bob 90, ann 75, cid 10, of which 2 last a minute or more
    assert run_plan(plan).inputs[0].aggregate() == {"LongVisit": 2 / 3}
    # the same keyword as evaluate_input's options
    assert irspec.evaluate_input(
        tmp_path / "week.visits", "LongVisit", options={"window": {"first": 2}}
    ).aggregate() == {"LongVisit": 2 / 3}


def test_a_section_joins_the_schema_after_its_readers_key(irspec_plugin):
    from irspec.plan import schema

    own = list(schema()["properties"])
    irspec_plugin(make_plugin(WINDOW))
    keys = list(schema()["properties"])
    assert keys == [*own[: own.index("log") + 1], "window", *own[own.index("log") + 1 :]]
    assert schema()["properties"]["window"] == WINDOW.schema


def test_a_sections_mistakes_are_located_as_the_plans_own(tmp_path, irspec_plugin):
    from irspec.plan import load_plan

    irspec_plugin(make_plugin(WINDOW))
    path = _plan(tmp_path, "log: week.visits\nmetrics: LongVisit\nwindow:\n  first: 0\n  last: 3\n")
    with pytest.raises(PlanError) as info:
        load_plan(path)
    assert sorted(info.value.problems) == [
        f"{path}:4: window.first: 0 is less than the minimum of 1",
        f"{path}:5: window.last: unknown key 'last'; allowed keys: first",
    ]


def test_a_section_without_its_readers_input_says_what_it_is_for(tmp_path, irspec_plugin):
    from irspec.plan import load_plan

    irspec_plugin(make_plugin(WINDOW))
    path = _plan(tmp_path, "qrels: qrels.txt\nruns: [a.run]\nmetrics: P@1\nwindow: {first: 2}\n")
    with pytest.raises(PlanError) as info:
        load_plan(path)
    assert info.value.problems == [
        f"{path}:4: window: a window keeps part of a log; give one with the log key"
    ]


def test_without_its_plugin_a_shipped_plugins_section_names_the_plugin(tmp_path):
    """irspec's own tests load no entry-point plugin: irspec-online's ab: is then unknown, and said to be
    irspec-online's, as a metric of it is."""
    from irspec.plan import load_plan

    path = _plan(tmp_path, "qrels: qrels.txt\nruns: [a.run]\nmetrics: P@1\nab: {baseline: control}\n")
    with pytest.raises(PlanError) as info:
        load_plan(path)
    assert info.value.problems == [
        f"{path}:4: ab: unknown key 'ab': it comes from the plugin irspec-online, which is not loaded (install it "
        "from irspec's source, pip install -e plugins/irspec-online; or IRSPEC_LOAD_PLUGINS leaves it out)"
    ]


@pytest.mark.parametrize(
    ("sections", "reader", "message"),
    [
        (
            (WINDOW, WINDOW),
            "log",
            "registers the plan section 'window', which plugin '.*' already registered",
        ),
        (
            (PlanSection("window", "visits", {}),),
            "log",
            "plan section 'window' is for the input reader 'visits', which no plugin",
        ),
        (
            (PlanSection("not-a-name", "log", {}),),
            "log",
            "plan section name 'not-a-name' is not a Python identifier",
        ),
        ((PlanSection("class", "log", {}),), "log", "plan section name 'class' is not a Python identifier"),
        ((PlanSection("window", "log", "{}"),), "log", "plan section 'window': schema must be a mapping"),
    ],
)
def test_a_section_that_cannot_be_registered_names_its_plugin(sections, reader, message):
    with (
        pytest.raises(RegistryError, match=message),
        registered_plugin(make_plugin(*sections, reader=reader)),
    ):
        pass


@pytest.mark.parametrize(
    ("section", "message"),
    [
        (
            PlanSection("metrics", "log", {}),
            "registers the plan section 'metrics', which is a key of irspec's own plan",
        ),
        (PlanSection("window", "log", {"type": "objet"}), "plan section 'window': not a JSON Schema: "),
    ],
)
def test_a_section_the_plan_cannot_take_names_its_plugin(tmp_path, section, message):
    from irspec.plan import load_plan

    with (
        registered_plugin(make_plugin(section), name="toy"),
        pytest.raises(RegistryError, match=message) as info,
    ):
        load_plan(_plan(tmp_path, "log: week.visits\nmetrics: LongVisit\n"))
    assert "plugin 'toy'" in str(info.value)


def test_a_section_is_no_metric_nor_reader():
    with pytest.raises(RegistryError, match="plan section 'window' takes no aliases"):

        class Aliased:
            @irspec.hookimpl
            def irspec_register_plan_sections(self, register):
                register(WINDOW, aliases=["w"])

        with registered_plugin(make_plugin(), Aliased()):
            pass
