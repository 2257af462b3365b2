"""Interleaving methods and click models (the ``irspec_register_interleaving`` and
``irspec_register_click_models`` hooks): their tables, names and bound specs (:mod:`irspec.spec.methods`),
and commands (``irspec_register_commands``) as the registry takes them. What the command line does with a
plugin's command is in tests/test_nothing_lost.py (its guard) and tests/test_cli_parse.py."""

from __future__ import annotations

import pytest

import irspec
from irspec.errors import ParameterError, RegistryError, SpecError, SpecSyntaxError
from irspec.plugin_api import ClickModelDef, Command, InterleavingDef, Method, Param, parse_method
from irspec.spec.plugins import plugin_report

TEAM_DRAFT = InterleavingDef("TeamDraft", "team-draft interleaving", compute="builtins:len")
PROBABILISTIC = InterleavingDef(
    "Probabilistic",
    "probabilistic interleaving",
    compute="builtins:len",
    params=(Param("tau", "float", 3.0, "the softmax's exponent", minimum=0, exclusive_minimum=True),),
    positional="tau",
)
PBM = ClickModelDef("PBM", "position-based model", compute="builtins:len")


class Online:
    @irspec.hookimpl
    def irspec_register_interleaving(self, register):
        register(TEAM_DRAFT, aliases=["team-draft", "tdi"])
        register(PROBABILISTIC, aliases=["probabilistic", "pi"])

    @irspec.hookimpl
    def irspec_register_click_models(self, register):
        register(PBM, aliases=["position-based"])

    @irspec.hookimpl
    def irspec_register_commands(self, register):
        register(Command("hello", "says hello", declare=lambda p: None, run=lambda a, i: 0))


def test_methods_bind_by_name_alias_and_arguments(irspec_plugin):
    irspec_plugin(Online(), name="online")
    assert str(parse_method("team-draft", "interleaving method")) == "TeamDraft"
    assert str(parse_method("TDI", "interleaving method")) == "TeamDraft"
    bound = parse_method("pi(tau=5)", "interleaving method")
    assert (str(bound), bound.get("tau")) == ("Probabilistic(tau=5)", 5)
    assert parse_method("probabilistic(5)", "interleaving method") == bound  # positional: tau
    assert parse_method("probabilistic(tau=3)", "interleaving method").params == ()  # a default is dropped
    assert parse_method(str(bound), "interleaving method") == bound  # the canonical text reads back
    assert parse_method(bound, "interleaving method") is bound
    assert parse_method("position-based", "click model") == Method("PBM")


@pytest.mark.parametrize(
    ("text", "kind", "error", "message"),
    [
        ("team-drift", "interleaving method", SpecError, "did you mean 'team-draft'?"),
        ("pbm", "interleaving method", SpecError, "registered: Probabilistic, TeamDraft"),  # another kind's
        ("team-draft", "click model", SpecError, "unknown click model 'team-draft'"),
        ("pi(tau=0)", "interleaving method", ParameterError, "tau"),
        ("pi(taux=1)", "interleaving method", ParameterError, "did you mean 'tau'?"),
        ("team-draft(1)", "interleaving method", ParameterError, "by name"),
        ("pi(1, tau=2)", "interleaving method", ParameterError, "given twice"),
        ("team-draft@10", "interleaving method", SpecSyntaxError, "takes no @"),
        ("team-draft pi", "interleaving method", SpecSyntaxError, "a second one"),
    ],
)
def test_a_bad_method_spec_says_what_is_wrong(irspec_plugin, text, kind, error, message):
    irspec_plugin(Online(), name="online")
    with pytest.raises(error, match=message.replace("(", r"\(").replace("?", r"\?")):
        parse_method(text, kind)


def test_without_a_plugin_no_method_is_known():
    with pytest.raises(SpecError, match="registered: none"):
        parse_method("team-draft", "interleaving method")


def test_a_method_name_another_plugin_registered_names_both(irspec_plugin):
    class Again:
        __name__ = "again"

        @irspec.hookimpl
        def irspec_register_interleaving(self, register):
            register(InterleavingDef("TDI2", "again", compute="builtins:len"), aliases=["team-draft"])

    with pytest.raises(
        RegistryError, match="'again' registers the interleaving method 'team-draft', which plugin 'online'"
    ):
        irspec_plugin(_named(Online(), "online"), Again())


def _named(plugin, name):
    plugin.__name__ = name
    return plugin


def test_a_click_model_may_share_a_name_with_an_interleaving_method(irspec_plugin):
    """Each kind is a table of its own (as fusion methods are apart from metrics)."""

    class Same:
        @irspec.hookimpl
        def irspec_register_click_models(self, register):
            register(ClickModelDef("TeamDraft", "a click model of that name", compute="builtins:len"))

    registry = irspec_plugin(_named(Online(), "online"), _named(Same(), "same"))
    assert set(registry.methods) == {"interleaving method", "click model"}
    assert "TeamDraft" in registry.methods["click model"]


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (InterleavingDef("X", "", compute="nothing"), "'module:attribute' string"),
        (InterleavingDef("X", "", compute=len, positional="k"), "unknown parameter 'k'"),
        (Command("Bad Name", "", declare=len, run=len), "not a lower-case word"),
        (Command("x", "", declare="nothing", run=len), "declare must be"),
        (Command("x", "", declare=len, run=len, roles={"out": "written"}), "'written', not one of"),
    ],
)
def test_a_bad_declaration_is_refused_naming_the_plugin(irspec_plugin, item, message):
    class Bad:
        @irspec.hookimpl
        def irspec_register_interleaving(self, register):
            register(item)

    Bad.irspec_register_interleaving.__name__ = "irspec_register_interleaving"
    with pytest.raises(RegistryError, match=message):
        irspec_plugin(Bad(), name="bad")


def test_plugins_lists_what_each_plugin_registers(irspec_plugin):
    from irspec.spec.plugins import get_plugin_manager

    pm = get_plugin_manager(load_entry_points=False)
    pm.register(Online(), name="online")
    (entry,) = [e for e in plugin_report(pm) if e["name"] == "online"]
    assert entry["interleaving"] == ["Probabilistic", "TeamDraft"]
    assert entry["click_models"] == ["PBM"]
    assert entry["commands"] == ["hello"]
