"""irspec.testing: the helpers plugin authors test with (a context manager and a pytest fixture)."""

from __future__ import annotations

import types

import pluggy
import pytest

import irspec
from irspec import MetricDef, RegistryError
from irspec.spec.plugins import get_registry
from irspec.testing import registered_plugin


def _plugin(name: str = "Tiny", value: float = 0.5):
    class Tiny:
        @irspec.hookimpl
        def irspec_register_metrics(self, register):
            register(MetricDef(name, "a constant", per_query=lambda query, metric: value))

    return Tiny()


QRELS = {"q1": {"d1": 1}, "q2": {"d2": 1}}
RUN = {"q1": {"d1": 1.0}, "q2": {"d3": 1.0}}


def test_registered_plugin_makes_parse_and_evaluate_see_the_plugin_inside_the_block_only():
    default = get_registry()
    with registered_plugin(_plugin()) as registry:
        assert get_registry() is registry is not default
        assert registry.definitions["Tiny"].plugin == "test-plugin-1"
        assert irspec.evaluate(QRELS, RUN, "Tiny P@1").aggregate() == {"Tiny": 0.5, "P@1": 0.5}
        assert irspec.metrics()["Tiny"].summary == "a constant"
    assert get_registry() is default
    with pytest.raises(irspec.UnknownMetricError):
        irspec.parse("Tiny")


def test_plugins_are_named_by_name_or_module():
    module = types.ModuleType("my_plugin_module")
    module.irspec_register_metrics = irspec.hookimpl(
        lambda register: register(MetricDef("Mod", "m", per_query=len))
    )
    with registered_plugin(module) as registry:
        assert registry.definitions["Mod"].plugin == "my_plugin_module"
    with registered_plugin(_plugin(), name="my-name") as registry:
        assert registry.definitions["Tiny"].plugin == "my-name"
    with (
        pytest.raises(TypeError, match="exactly one plugin"),
        registered_plugin(_plugin("A"), _plugin("B"), name="x"),
    ):
        pass


def test_problems_surface_on_entry_as_at_installation():
    with (
        pytest.raises(RegistryError, match=r"'test-plugin-2' registers 'same'.*'test-plugin-1'"),
        registered_plugin(_plugin("Same"), _plugin("same")),
    ):
        pass

    class Misspelled:
        @irspec.hookimpl
        def irspec_register_metric(self, register):  # no final "s"
            pass

    with pytest.raises(pluggy.PluginValidationError), registered_plugin(Misspelled()):
        pass
    with pytest.raises(irspec.UnknownMetricError):
        irspec.parse("Same")


def test_the_previous_registry_is_back_after_an_error_in_the_block():
    default = get_registry()
    with pytest.raises(ZeroDivisionError), registered_plugin(_plugin()):
        _ = 1 / 0
    assert get_registry() is default


def test_installed_plugins_are_left_out_unless_asked_for(monkeypatch):
    monkeypatch.delenv("IRSPEC_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    with registered_plugin(_plugin()) as registry:
        assert all(
            d.plugin.startswith("irspec.builtin.") or d.plugin == "test-plugin-1"
            for d in registry.definitions.values()
        )
    with registered_plugin(_plugin(), load_entry_points=True) as registry:
        assert "Tiny" in registry.definitions


def test_the_fixture_registers_until_the_end_of_the_test(irspec_plugin):
    registry = irspec_plugin(_plugin(value=0.25))
    assert get_registry() is registry
    assert irspec.evaluate(QRELS, RUN, "Tiny").aggregate() == {"Tiny": 0.25}
    # a second call replaces the registry with one holding the new plugins and the built-ins
    irspec_plugin(_plugin("Other"))
    assert "Other" in irspec.metrics() and "Tiny" not in irspec.metrics()


def test_the_fixture_left_nothing_behind():
    # runs after the test above (file order)
    for name in ("Tiny", "Other"):
        with pytest.raises(irspec.UnknownMetricError):
            irspec.parse(name)


def test_the_pytest11_entry_point_names_the_module():
    tomllib = pytest.importorskip("tomllib")
    from pathlib import Path

    doc = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    assert doc["project"]["entry-points"]["pytest11"] == {"irspec.testing": "irspec.testing"}
