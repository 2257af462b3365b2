"""The pluggy plugin manager and the registry it builds: registration, name clashes, validation, isolation.

Every test takes a fresh plugin manager from the ``fresh_pm`` fixture (pluggy's ``testing/conftest.py``
style), so a plugin registered in one test is never seen by another.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
import types

import pluggy
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import irspec
import irspec.spec.plugins
from irspec import Alias, MetricDef, MetricGroup, Param, RegistryError
from irspec.spec.plugins import DEFAULT_PLUGINS, build_registry, get_plugin_manager
from irspec.spec.registry import split_trec_name

TEST_PLUGIN = "irspec-test-plugin"


@pytest.fixture
def fresh_pm() -> pluggy.PluginManager:
    """A new plugin manager with the built-in plugins only."""
    return get_plugin_manager(load_entry_points=False)


def _metric(name: str = "Toy", **kw) -> MetricDef:
    defaults = {
        "summary": "a toy metric for tests",
        "params": (
            Param("k", "int", None, "cutoff", minimum=1, per_query=True),
            Param("strict", "bool", False, "a boolean parameter"),
            Param("label", "str", None, "a string parameter"),
            Param("mode", "choice", "fast", "a choice", choices=("fast", "slow-ish")),
            Param("weight", "float", 1.0, "a float", minimum=0, maximum=10),
        ),
        "at": "k",
        "positional": "weight",
        "per_query": lambda *a: 0.0,
    }
    defaults.update(kw)
    return MetricDef(name, **defaults)


class ToyPlugin:
    """Registers one metric with a plain alias and a parameter-fixing alias."""

    def __init__(
        self,
        definition: MetricDef | None = None,
        aliases=("toy_alias", Alias("toy_strict", fixed={"strict": True})),
    ):
        self.definition = definition or _metric()
        self.aliases = aliases

    @irspec.hookimpl
    def irspec_register_metrics(self, register):
        register(self.definition, aliases=self.aliases)


# --- fixtures and isolation --------------------------------------------------------------------------


def test_fresh_pm_has_the_builtin_plugins_only(fresh_pm):
    names = {name for name, _ in fresh_pm.list_name_plugin()}
    assert set(DEFAULT_PLUGINS) <= names
    assert all(n.startswith("irspec.builtin.") for n in DEFAULT_PLUGINS)
    registry = build_registry(fresh_pm)
    assert set(irspec.metrics()) == set(registry.definitions)


def test_each_call_gives_a_new_manager():
    a, b = get_plugin_manager(load_entry_points=False), get_plugin_manager(load_entry_points=False)
    assert a is not b
    a.register(ToyPlugin(), name=TEST_PLUGIN)
    assert b.get_plugin(TEST_PLUGIN) is None


def test_registering_a_plugin_adds_its_metric(fresh_pm):
    fresh_pm.register(ToyPlugin(), name=TEST_PLUGIN)
    fresh_pm.check_pending()
    registry = build_registry(fresh_pm)
    assert "Toy" in registry.definitions
    assert registry.definitions["Toy"].plugin == TEST_PLUGIN
    assert [str(m) for m in registry.parse("toy@5, TOY_ALIAS(weight=2)@5 toy_strict")] == [
        "Toy@5",
        "Toy(weight=2)@5",
        "Toy(strict=true)",
    ]


def test_a_plugin_registered_in_one_test_is_absent_from_the_next(fresh_pm):
    # Runs after test_registering_a_plugin_adds_its_metric (file order): nothing leaked.
    assert fresh_pm.get_plugin(TEST_PLUGIN) is None
    assert "Toy" not in build_registry(fresh_pm).definitions
    with pytest.raises(irspec.UnknownMetricError):
        irspec.parse("Toy@5")  # the default registry never saw it either


def test_registry_parse_binds_every_parameter_kind(fresh_pm):
    fresh_pm.register(ToyPlugin(), name=TEST_PLUGIN)
    registry = build_registry(fresh_pm)

    def one(text):
        (m,) = registry.parse(text)
        assert registry.parse(str(m)) == [m]  # round trip through the same registry
        return m

    assert str(one("Toy(strict=true)")) == "Toy(strict=true)"
    assert str(one("Toy(strict=TRUE)")) == "Toy(strict=true)"
    assert str(one("Toy(strict=1)")) == "Toy(strict=true)"
    assert str(one("Toy(strict=false)")) == "Toy"  # the default
    assert str(one("Toy(label='hello world')")) == "Toy(label='hello world')"
    assert str(one("Toy(label=word)")) == "Toy(label=word)"
    assert str(one("Toy(mode='slow-ish')")) == "Toy(mode=slow-ish)"
    assert str(one("Toy(3, mode=fast)@R")) == "Toy(weight=3)@R"
    assert str(one("Toy(label=x,strict=true,weight=2)@5")) == str(one("Toy(weight=2,strict=true,label=x)@5"))
    assert one("Toy(strict=true)").get("strict") is True
    with pytest.raises(irspec.ParameterError, match="strict"):
        registry.parse("Toy(strict=2)")
    with pytest.raises(irspec.ParameterError, match=r"weight.*<= 10"):
        registry.parse("Toy(weight=11)")
    with pytest.raises(irspec.ParameterError, match=r"mode.*fast, slow-ish"):
        registry.parse("Toy(mode=medium)")


def test_parse_keeps_its_answers_for_a_few_texts_and_gives_each_caller_its_own_list(fresh_pm):
    registry = build_registry(fresh_pm)
    first = registry.parse("P@10, AP")
    first.append("changed by its caller")
    again = registry.parse("P@10, AP")
    assert [str(m) for m in again] == ["P@10", "AP"]
    assert again[0] is first[0]  # the metrics kept, not parsed again
    assert [str(m) for m in registry.parse(["AP", "P@10"])] == ["AP", "P@10"]
    assert [str(m) for m in registry.parse("P.5", trec=True)] == ["P@5"]
    # texts made on the fly (a loop over cutoffs) stay bounded, every one still parsed right
    for k in range(1, 301):
        assert [str(m) for m in registry.parse(f"nDCG@{k}")] == [f"nDCG@{k}"]
    assert 0 < len(registry._parsed) <= 256
    long = ", ".join(f"P@{k}" for k in range(1, 1001))  # a text of 6,891 characters is parsed, not kept
    assert len(registry.parse(long)) == 1000 and (((long,), False) not in registry._parsed)
    for _ in range(2):  # a text in error is read again each time, never kept
        with pytest.raises(irspec.UnknownMetricError):
            registry.parse("Toy@5")


def test_register_a_group(fresh_pm):
    class GroupPlugin:
        @irspec.hookimpl
        def irspec_register_metrics(self, register):
            register(MetricGroup("my_set", ("P@5 nDCG@10", "map"), "a test group"))

    fresh_pm.register(GroupPlugin(), name=TEST_PLUGIN)
    registry = build_registry(fresh_pm)
    assert registry.groups["my_set"].plugin == TEST_PLUGIN
    assert [str(m) for m in registry.parse("MY_SET P@5")] == ["P@5", "nDCG@10", "AP"]


def test_a_plugin_may_use_the_plugin_module_style(fresh_pm):
    module = types.ModuleType("irspec_test_module_plugin")

    @irspec.hookimpl
    def irspec_register_metrics(register):
        register(_metric("ModuleToy"))

    module.irspec_register_metrics = irspec_register_metrics
    fresh_pm.register(module, name=TEST_PLUGIN)
    assert "ModuleToy" in build_registry(fresh_pm).definitions


# --- name clashes ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("definition", "aliases", "clash", "other"),
    [
        (_metric("nDCG"), (), "nDCG", "irspec.builtin.gain"),  # same canonical name
        (_metric("NDCG"), (), "NDCG", "irspec.builtin.gain"),  # case-insensitive
        (_metric("Toy"), ("ndcg",), "ndcg", "irspec.builtin.gain"),  # alias vs canonical name
        (_metric("Toy"), ("MAP",), "MAP", "irspec.builtin.ranks"),  # alias vs alias
        (_metric("Toy"), ("map",), "map", "irspec.builtin.ranks"),  # alias vs alias, other case
        (_metric("Toy"), (Alias("P_CUT"), Alias("set_p")), "set_p", "irspec.builtin.sets"),
        (_metric("official"), (), "official", "irspec.builtin.groups"),  # metric vs group
    ],
)
def test_a_duplicate_name_or_alias_is_an_error_naming_both_plugins(
    fresh_pm, definition, aliases, clash, other
):
    fresh_pm.register(ToyPlugin(definition, aliases), name=TEST_PLUGIN)
    with pytest.raises(RegistryError) as info:
        build_registry(fresh_pm)
    message = str(info.value)
    assert TEST_PLUGIN in message
    assert other in message
    assert repr(clash).lower() in message.lower()


def test_a_clash_between_two_third_party_plugins_names_both(fresh_pm):
    fresh_pm.register(ToyPlugin(_metric("Toy"), ("toy_alias",)), name="plugin-one")
    fresh_pm.register(ToyPlugin(_metric("Other"), ("TOY_ALIAS",)), name="plugin-two")
    with pytest.raises(RegistryError) as info:
        build_registry(fresh_pm)
    assert "plugin-one" in str(info.value)
    assert "plugin-two" in str(info.value)


def test_a_plugin_clashing_with_itself_is_an_error(fresh_pm):
    fresh_pm.register(ToyPlugin(_metric("Toy"), ("toy_alias", "Toy_Alias")), name=TEST_PLUGIN)
    with pytest.raises(RegistryError, match=r"toy_alias|Toy_Alias"):
        build_registry(fresh_pm)


def test_builtins_claim_their_names_before_third_party_plugins(fresh_pm):
    # The third-party plugin is the one blamed, whichever order pluggy calls implementations in.
    fresh_pm.register(ToyPlugin(_metric("AP")), name=TEST_PLUGIN)
    with pytest.raises(RegistryError) as info:
        build_registry(fresh_pm)
    assert str(info.value).startswith(f"plugin {TEST_PLUGIN!r} registers 'AP'")


# --- validation --------------------------------------------------------------------------------------


def test_a_misspelled_hook_fails_check_pending(fresh_pm):
    class Misspelled:
        @irspec.hookimpl
        def irspec_register_metric(self, register):  # missing the final "s"
            register(_metric())

    fresh_pm.register(Misspelled(), name=TEST_PLUGIN)
    with pytest.raises(pluggy.PluginValidationError, match="irspec_register_metric"):
        fresh_pm.check_pending()


def test_a_hook_with_a_wrong_argument_name_is_rejected(fresh_pm):
    class WrongArgument:
        @irspec.hookimpl
        def irspec_register_metrics(self, registry):  # the spec's argument is "register"
            pass

    with pytest.raises(pluggy.PluginValidationError):
        fresh_pm.register(WrongArgument(), name=TEST_PLUGIN)


def test_get_plugin_manager_checks_pending_hooks(monkeypatch):
    # A misspelled hook in an installed plugin makes get_plugin_manager itself fail.
    class Misspelled:
        @irspec.hookimpl
        def irspec_register_metric(self, register):
            pass

    module = types.ModuleType("irspec_test_misspelled")
    module.plugin = Misspelled()
    monkeypatch.setitem(sys.modules, "irspec_test_misspelled", module)
    _fake_entry_points(monkeypatch, [("misspelled", "irspec_test_misspelled:plugin")])
    monkeypatch.delenv("IRSPEC_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.delenv("IRSPEC_LOAD_PLUGINS", raising=False)
    with pytest.raises(pluggy.PluginValidationError):
        get_plugin_manager()


def test_a_definition_without_compute_or_per_query_is_rejected(fresh_pm):
    fresh_pm.register(ToyPlugin(_metric(per_query=None, compute=None)), name=TEST_PLUGIN)
    with pytest.raises(RegistryError, match="neither compute nor per_query") as info:
        build_registry(fresh_pm)
    assert TEST_PLUGIN in str(info.value)
    assert "'Toy'" in str(info.value)


def test_a_definition_with_compute_only_is_accepted(fresh_pm):
    fresh_pm.register(ToyPlugin(_metric(per_query=None, compute="mymod:compute")), name=TEST_PLUGIN)
    assert "Toy" in build_registry(fresh_pm).definitions


@pytest.mark.parametrize("field", ["at", "positional"])
def test_at_or_positional_naming_an_unknown_parameter_is_rejected(fresh_pm, field):
    fresh_pm.register(ToyPlugin(_metric(**{field: "cutoff"})), name=TEST_PLUGIN)
    with pytest.raises(RegistryError, match="unknown parameter 'cutoff'") as info:
        build_registry(fresh_pm)
    assert TEST_PLUGIN in str(info.value)


def test_registering_something_else_is_rejected(fresh_pm):
    class Bad:
        @irspec.hookimpl
        def irspec_register_metrics(self, register):
            register({"name": "Toy"})

    fresh_pm.register(Bad(), name=TEST_PLUGIN)
    with pytest.raises(RegistryError, match="not a MetricDef"):
        build_registry(fresh_pm)


# --- environment switches --------------------------------------------------------------------------


def _fake_entry_points(monkeypatch, specs):
    """Make the plugin manager find the given (name, value) pairs as the irspec entry points installed."""
    eps = [importlib.metadata.EntryPoint(name=n, value=v, group="irspec") for n, v in specs]
    real = irspec.spec.plugins.entry_points

    def entry_points(group):
        return eps if group == "irspec" else real(group)

    monkeypatch.setattr(irspec.spec.plugins, "entry_points", entry_points)


@pytest.fixture
def installed_toy(monkeypatch):
    """An 'installed' entry-point plugin named toy (module irspec_test_installed_toy)."""
    module = types.ModuleType("irspec_test_installed_toy")
    module.plugin = ToyPlugin(_metric("InstalledToy"), ())
    monkeypatch.setitem(sys.modules, "irspec_test_installed_toy", module)
    _fake_entry_points(monkeypatch, [("toy", "irspec_test_installed_toy:plugin")])
    monkeypatch.delenv("IRSPEC_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.delenv("IRSPEC_LOAD_PLUGINS", raising=False)
    return "toy"


def _builtins_present(pm) -> None:
    for name in DEFAULT_PLUGINS:
        assert pm.get_plugin(name) is not None
    assert {"nDCG", "AP", "P", "Bpref"} <= set(build_registry(pm).definitions)


def test_entry_point_plugins_load_by_default(installed_toy):
    pm = get_plugin_manager()
    assert pm.get_plugin(installed_toy) is not None
    assert "InstalledToy" in build_registry(pm).definitions
    _builtins_present(pm)


@pytest.mark.parametrize("value", ["1", "yes"])
def test_disable_plugin_autoload(installed_toy, monkeypatch, value):
    monkeypatch.setenv("IRSPEC_DISABLE_PLUGIN_AUTOLOAD", value)
    pm = get_plugin_manager()
    assert pm.get_plugin(installed_toy) is None
    _builtins_present(pm)
    # An explicit argument overrides the environment.
    assert get_plugin_manager(load_entry_points=True).get_plugin(installed_toy) is not None


def test_disable_plugin_autoload_empty_value_loads(installed_toy, monkeypatch):
    monkeypatch.setenv("IRSPEC_DISABLE_PLUGIN_AUTOLOAD", "")
    assert get_plugin_manager().get_plugin(installed_toy) is not None


@pytest.mark.parametrize(
    ("allow", "loaded"), [("toy", True), ("other, toy ,", True), ("other", False), ("", False)]
)
def test_load_plugins_allow_list(installed_toy, monkeypatch, allow, loaded):
    monkeypatch.setenv("IRSPEC_LOAD_PLUGINS", allow)
    pm = get_plugin_manager()
    assert (pm.get_plugin(installed_toy) is not None) is loaded
    _builtins_present(pm)


def test_a_broken_entry_point_is_a_registry_error_naming_it(monkeypatch):
    _fake_entry_points(monkeypatch, [("broken", "irspec_test_no_such_module_xyz:plugin")])
    monkeypatch.delenv("IRSPEC_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.delenv("IRSPEC_LOAD_PLUGINS", raising=False)
    with pytest.raises(RegistryError, match="'broken'"):
        get_plugin_manager()


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"IRSPEC_DISABLE_PLUGIN_AUTOLOAD": "1"},
        {"IRSPEC_LOAD_PLUGINS": ""},
        {"IRSPEC_LOAD_PLUGINS": "nothing,here"},
    ],
)
def test_env_switches_with_the_real_entry_points(monkeypatch, env):
    # Whatever is installed for real: no error, and the built-ins are there.
    monkeypatch.delenv("IRSPEC_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.delenv("IRSPEC_LOAD_PLUGINS", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    _builtins_present(get_plugin_manager())


def test_trace_plugins_writes_hook_calls_to_stderr(monkeypatch, capsys):
    monkeypatch.setenv("IRSPEC_TRACE_PLUGINS", "1")
    pm = get_plugin_manager(load_entry_points=False)
    pm.hook.irspec_register_metrics(register=lambda *a, **k: None)
    err = capsys.readouterr().err
    assert "irspec_register_metrics" in err
    monkeypatch.delenv("IRSPEC_TRACE_PLUGINS")
    get_plugin_manager(load_entry_points=False).hook.irspec_register_metrics(register=lambda *a, **k: None)
    assert capsys.readouterr().err == ""


def test_plugin_report_lists_what_each_plugin_registers(fresh_pm):
    fresh_pm.register(ToyPlugin(), name=TEST_PLUGIN)
    report = irspec.spec.plugins.plugin_report(fresh_pm)
    by_name = {r["name"]: r for r in report}
    assert [r["name"] for r in report] == sorted(by_name)
    assert by_name[TEST_PLUGIN]["metrics"] == ["Toy"]
    assert by_name[TEST_PLUGIN]["builtin"] is False
    assert by_name["irspec.builtin.gain"]["builtin"] is True
    assert "nDCG" in by_name["irspec.builtin.gain"]["metrics"]
    assert {"official", "all_trec"} <= set(by_name["irspec.builtin.groups"]["groups"])


# --- loading control: failing imports and taken names, from installed (entry-point) plugins ------------


class _FakeDist:
    name = "irspec-broken-dist"
    version = "9.9"


class _FakeEntryPoint:
    """An entry point as importlib.metadata gives one: name, value, dist, load()."""

    def __init__(self, name: str, value: str, dist=None):
        self.name, self.value, self.group, self.dist = name, value, "irspec", dist

    def load(self):
        return importlib.metadata.EntryPoint(name=self.name, value=self.value, group="irspec").load()


def _installed(monkeypatch, *eps) -> None:
    real = irspec.spec.plugins.entry_points

    def entry_points(group):
        return list(eps) if group == "irspec" else real(group)

    monkeypatch.setattr(irspec.spec.plugins, "entry_points", entry_points)
    monkeypatch.delenv("IRSPEC_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.delenv("IRSPEC_LOAD_PLUGINS", raising=False)


def test_a_plugin_whose_import_raises_is_a_registry_error_naming_it_its_module_and_distribution(
    tmp_path, monkeypatch
):
    (tmp_path / "irspec_test_raises_on_import.py").write_text("raise ValueError('no config file')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    _installed(monkeypatch, _FakeEntryPoint("raiser", "irspec_test_raises_on_import", _FakeDist()))
    with pytest.raises(RegistryError) as info:
        get_plugin_manager()
    message = str(info.value)
    assert message == (
        "plugin 'raiser' (irspec_test_raises_on_import from irspec-broken-dist 9.9) failed to import: "
        "ValueError: no config file"
    )
    assert isinstance(info.value.__cause__, ValueError)
    # the allow-list keeps a broken plugin from being imported at all
    monkeypatch.setenv("IRSPEC_LOAD_PLUGINS", "someone-else")
    _builtins_present(get_plugin_manager())


def test_a_plugin_with_a_missing_dependency_names_the_missing_module(monkeypatch):
    _installed(monkeypatch, _FakeEntryPoint("needy", "irspec_test_not_installed_dependency_xyz.plugin"))
    with pytest.raises(
        RegistryError,
        match=r"plugin 'needy' \(irspec_test_not_installed_dependency_xyz\.plugin\) "
        r"failed to import: ModuleNotFoundError: .*irspec_test_not_installed_dependency_xyz",
    ):
        get_plugin_manager()


def test_an_installed_plugin_registering_a_taken_name_is_an_error_naming_both(monkeypatch):
    module = types.ModuleType("irspec_test_installed_clash")
    module.plugin = ToyPlugin(_metric("Toy"), ("ndcg_burges",))  # a built-in alias of nDCG
    monkeypatch.setitem(sys.modules, "irspec_test_installed_clash", module)
    _installed(monkeypatch, _FakeEntryPoint("clasher", "irspec_test_installed_clash:plugin"))
    with pytest.raises(RegistryError) as info:
        build_registry(get_plugin_manager())
    assert str(info.value) == (
        "plugin 'clasher' registers 'ndcg_burges', which plugin 'irspec.builtin.gain' already registered (for 'nDCG')"
    )


def test_two_installed_plugins_registering_one_name_name_each_other(monkeypatch):
    for mod, metric in (("irspec_test_first", "Shared"), ("irspec_test_second", "SHARED")):
        module = types.ModuleType(mod)
        module.plugin = ToyPlugin(_metric(metric), ())
        monkeypatch.setitem(sys.modules, mod, module)
    _installed(
        monkeypatch,
        _FakeEntryPoint("first", "irspec_test_first:plugin"),
        _FakeEntryPoint("second", "irspec_test_second:plugin"),
    )
    with pytest.raises(
        RegistryError, match="plugin 'second' registers 'SHARED', which plugin 'first' already"
    ):
        build_registry(get_plugin_manager())
    monkeypatch.setenv("IRSPEC_LOAD_PLUGINS", "second")  # either alone is fine
    assert "SHARED" in build_registry(get_plugin_manager()).definitions


def test_installed_plugins_carry_their_distribution(monkeypatch):
    module = types.ModuleType("irspec_test_dist_plugin")
    module.plugin = ToyPlugin(_metric("DistToy"), ())
    monkeypatch.setitem(sys.modules, "irspec_test_dist_plugin", module)
    _installed(monkeypatch, _FakeEntryPoint("disttoy", "irspec_test_dist_plugin:plugin", _FakeDist()))
    pm = get_plugin_manager()
    assert pm.distributions == {"disttoy": "irspec-broken-dist 9.9"}
    registry = build_registry(pm)
    assert registry.distributions["disttoy"] == "irspec-broken-dist 9.9"
    assert registry.distributions["irspec.builtin.gain"] == f"irspec {irspec.__version__}"
    by_name = {r["name"]: r for r in irspec.spec.plugins.plugin_report(pm)}
    assert by_name["disttoy"]["distribution"] == "irspec-broken-dist 9.9"
    assert by_name["disttoy"]["metrics"] == ["DistToy"]


class _CountingDist:
    """A distribution whose metadata reads are counted (each costs a parse of its METADATA file)."""

    def __init__(self) -> None:
        self.reads = 0

    @property
    def name(self) -> str:
        self.reads += 1
        return "irspec-counted-dist"

    @property
    def version(self) -> str:
        self.reads += 1
        return "1.2"


def test_a_plugins_distribution_is_read_only_when_a_listing_asks_for_it(monkeypatch):
    # issue 23: reading the three shipped plugins' names and versions cost ~2 ms of every evaluation's
    # start-up, and only `irspec plugins` and `irspec metrics` show them
    module = types.ModuleType("irspec_test_lazy_dist_plugin")
    module.plugin = ToyPlugin(_metric("LazyDistToy"), ())
    monkeypatch.setitem(sys.modules, "irspec_test_lazy_dist_plugin", module)
    dist = _CountingDist()
    _installed(monkeypatch, _FakeEntryPoint("lazydist", "irspec_test_lazy_dist_plugin:plugin", dist))
    registry = build_registry(get_plugin_manager())
    assert str(registry.parse("LazyDistToy")[0]) == "LazyDistToy"
    assert dist.reads == 0
    assert registry.distributions["lazydist"] == "irspec-counted-dist 1.2"
    assert registry.distributions["lazydist"] == "irspec-counted-dist 1.2"
    assert dist.reads == 2  # name and version, once
    assert dict(registry.distributions)["irspec.builtin.gain"] == f"irspec {irspec.__version__}"


def test_irspec_metrics_shows_where_each_metric_comes_from(monkeypatch, capsys):
    import json

    from irspec.cli import main
    from irspec.spec.plugins import use_registry

    module = types.ModuleType("irspec_test_dist_plugin")
    module.plugin = ToyPlugin(_metric("DistToy"), ())
    monkeypatch.setitem(sys.modules, "irspec_test_dist_plugin", module)
    _installed(monkeypatch, _FakeEntryPoint("disttoy", "irspec_test_dist_plugin:plugin", _FakeDist()))
    with use_registry(build_registry(get_plugin_manager())):
        assert main(["metrics"]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert (
            "DistToy(@k, strict=false, label, mode=fast, weight=1.0)  [disttoy: irspec-broken-dist 9.9]"
            in lines
        )
        assert "AP(@k, rel, den=R)  [irspec.builtin.ranks]" in lines
        assert main(["metrics", "--json"]) == 0
        rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert (
        rows["DistToy"]["distribution"] == "irspec-broken-dist 9.9" and rows["DistToy"]["plugin"] == "disttoy"
    )
    assert rows["AP"]["distribution"] == f"irspec {irspec.__version__}" and rows["AP"]["needs"] == "run"


# --- input readers -----------------------------------------------------------------------------------


class ReaderPlugin:
    """Registers an input reader (and optionally metrics)."""

    def __init__(self, *readers, metrics=()):
        self.readers = readers
        self.metrics = metrics

    @irspec.hookimpl
    def irspec_register_readers(self, register):
        for r in self.readers:
            register(r)

    @irspec.hookimpl
    def irspec_register_metrics(self, register):
        for m in self.metrics:
            register(m)


def _reader(name="clicks", **kw) -> irspec.InputReader:
    return irspec.InputReader(name, kw.pop("read", "somewhere:read"), **kw)


def test_a_reader_is_registered_with_its_plugin(fresh_pm):
    fresh_pm.register(ReaderPlugin(_reader(suffixes=[".jsonl"], summary="s")), name=TEST_PLUGIN)
    registry = build_registry(fresh_pm)
    reader = registry.reader("CLICKS")
    assert (reader.name, reader.plugin, reader.suffixes, reader.summary) == (
        "clicks",
        TEST_PLUGIN,
        (".jsonl",),
        "s",
    )
    report = {r["name"]: r for r in irspec.spec.plugins.plugin_report(fresh_pm)}
    assert report[TEST_PLUGIN]["readers"] == ["clicks"]


def test_a_duplicate_reader_name_is_an_error_naming_both_plugins(fresh_pm):
    fresh_pm.register(ReaderPlugin(_reader("clicks")), name="plugin-one")
    fresh_pm.register(ReaderPlugin(_reader("Clicks")), name="plugin-two")
    with pytest.raises(
        RegistryError,
        match="plugin 'plugin-two' registers the input reader 'Clicks', which plugin "
        "'plugin-one' already registered",
    ):
        build_registry(fresh_pm)


@pytest.mark.parametrize(
    ("reader", "message"),
    [
        (_reader("run"), "'run', which irspec itself reads"),
        (_reader("QRELS"), "'QRELS', which irspec itself reads"),
        (_reader("two words"), "is not a plain word"),
        (_reader("clicks", read=42), "read must be a function or a 'module:function' string"),
        (_reader("clicks", read="no_colon"), "read must be a function"),
    ],
)
def test_bad_readers_are_rejected_naming_the_plugin(fresh_pm, reader, message):
    fresh_pm.register(ReaderPlugin(reader), name=TEST_PLUGIN)
    with pytest.raises(RegistryError, match=re.escape(message)) as info:
        build_registry(fresh_pm)
    assert TEST_PLUGIN in str(info.value)


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        (_metric("LogToy", needs="clicks"), "must give compute(data, metric)"),  # per_query only
        (_metric("LogToy", needs="qrels", compute="m:f"), "a metric over qrels and runs needs 'run'"),
        (_metric("LogToy", needs="", compute="m:f"), "not an input name"),
    ],
)
def test_bad_needs_are_rejected(fresh_pm, definition, message):
    fresh_pm.register(ToyPlugin(definition, ()), name=TEST_PLUGIN)
    with pytest.raises(RegistryError, match=re.escape(message)):
        build_registry(fresh_pm)


def test_an_unknown_reader_is_an_evaluation_error_listing_the_known_ones(fresh_pm):
    fresh_pm.register(ReaderPlugin(_reader("clicks")), name=TEST_PLUGIN)
    with pytest.raises(
        irspec.EvaluationError,
        match=r"no installed plugin reads 'log' inputs \(registered input readers: clicks\)",
    ):
        build_registry(fresh_pm).reader("log")


def test_a_reader_with_aliases_is_rejected(fresh_pm):
    class Bad:
        @irspec.hookimpl
        def irspec_register_readers(self, register):
            register(_reader("clicks"), aliases=["c"])

    fresh_pm.register(Bad(), name=TEST_PLUGIN)
    with pytest.raises(RegistryError, match="takes no aliases"):
        build_registry(fresh_pm)


# --- the registry override ------------------------------------------------------------------------------


def test_use_registry_overrides_the_default_and_restores_it_even_on_error(fresh_pm):
    from irspec.spec.plugins import get_registry, use_registry

    default = get_registry()
    fresh_pm.register(ToyPlugin(), name=TEST_PLUGIN)
    mine = build_registry(fresh_pm)
    with use_registry(mine):
        assert get_registry() is mine
        assert str(irspec.parse("toy@5")) == "Toy@5"
        with (
            use_registry(build_registry(get_plugin_manager(load_entry_points=False))),
            pytest.raises(irspec.UnknownMetricError),
        ):
            irspec.parse("toy@5")
        assert get_registry() is mine  # nested: back to the outer one
    assert get_registry() is default
    with pytest.raises(KeyError), use_registry(mine):
        raise KeyError("boom")
    assert get_registry() is default
    with pytest.raises(TypeError), use_registry(fresh_pm):
        pass


# --- the shipped plugins' names, when the plugin is not loaded ------------------------------------------

SHIPPED = {
    "irspec-usermodel": "irspec_usermodel.plugin",
    "irspec-online": "irspec_online.plugin",
    "irspec-diversity": "irspec_diversity.plugin",
}


@pytest.mark.parametrize(
    "text,plugin",
    [
        ("CTR", "irspec-online"),
        ("ctr@3", "irspec-online"),
        ("α_nDCG@20", "irspec-diversity"),
        ("alpha_nDCG", "irspec-diversity"),
        ("ERR@10", "irspec-usermodel"),
        ("BPM(max_rel=3)@10", "irspec-usermodel"),
        ("rank_biased_precision", "irspec-usermodel"),
    ],
)
def test_a_shipped_plugins_metric_names_the_plugin_when_it_is_not_loaded(text, plugin):
    # the suite's registry holds the built-in metrics only (conftest.py turns entry points off)
    with pytest.raises(irspec.UnknownMetricError) as info:
        irspec.parse(text)
    message = str(info.value)
    assert "unknown metric" in message and plugin in message and f"plugins/{plugin}" in message


@pytest.mark.parametrize("distribution", SHIPPED)
def test_the_shipped_plugins_table_is_what_the_plugins_register(distribution):
    """registry.SHIPPED_PLUGIN_NAMES, the core's list of the names each shipped plugin registers, equals
    what the plugin registers once loaded: a name a plugin adds or drops fails here."""
    from irspec.spec.registry import SHIPPED_PLUGIN_NAMES
    from irspec.testing import registered_plugin

    module = pytest.importorskip(SHIPPED[distribution], reason=f"{distribution} is not installed (plugins/)")
    with registered_plugin(module) as registry:
        names = set()
        for name, definition in registry.definitions.items():
            if definition.plugin == module.__name__:
                names |= {name, *(a if isinstance(a, str) else a.name for a in registry.aliases[name])}
        names |= {name for name, group in registry.groups.items() if group.plugin == module.__name__}
    assert names == set(SHIPPED_PLUGIN_NAMES[distribution])


@pytest.mark.parametrize("distribution", SHIPPED)
def test_the_shipped_plugins_sections_are_what_the_plugins_register(distribution):
    """registry.SHIPPED_PLUGIN_SECTIONS, the plan sections each shipped plugin registers (a plan's ``ab:``
    without irspec-online names it), equals what the plugin registers once loaded."""
    from irspec.spec.registry import SHIPPED_PLUGIN_SECTIONS
    from irspec.testing import registered_plugin

    module = pytest.importorskip(SHIPPED[distribution], reason=f"{distribution} is not installed (plugins/)")
    with registered_plugin(module) as registry:
        sections = {name for name, section in registry.sections.items() if section.plugin == module.__name__}
    assert sections == set(SHIPPED_PLUGIN_SECTIONS.get(distribution, ()))


# --- finding installed plugins ---------------------------------------------------------------------


def _found(eps) -> list[tuple[str, str, str]]:
    return [(e.name, e.value, e.dist.name if e.dist is not None else None) for e in eps]


def _dist(root, folder, name, entry_points=None, *, version="1.0"):
    """A distribution's metadata directory ``root/folder`` (``METADATA`` naming ``name``), with
    ``entry_points.txt`` when given."""
    path = root / folder
    path.mkdir(parents=True)
    (path / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    if entry_points is not None:
        (path / "entry_points.txt").write_text(entry_points)
    return path


def test_installed_plugins_are_found_as_importlib_metadata_finds_them(tmp_path, monkeypatch):
    # the search spec.plugins makes (without importing importlib.metadata) gives importlib.metadata's
    # entry points: every group of this environment's distributions, and crafted path entries with
    # the same distribution twice (the first on the path wins), names spelled several ways, egg-info,
    # comments, other sections and a distribution without entry points
    a, b = tmp_path / "a", tmp_path / "b"
    _dist(
        a,
        "Pkg_One-1.0.dist-info",
        "Pkg-One",
        "# a comment\n[irspec]\none = pkg_one.plugin:thing\n\n[other]\nx = y\n",
    )
    _dist(b, "pkg.one-2.0.dist-info", "pkg.one", "[irspec]\none = pkg_one.newer\n")
    _dist(
        b,
        "two.egg-info",
        "two",
        "[console_scripts]\ntwo = two:main\n[irspec]\n two_ep =  two.plugin : obj.attr [extra] \n",
    )
    _dist(a, "three-1.0.dist-info", "three")
    _dist(b, "Four-1.0.dist-info", "Four", "[irspec]\nfour = four\n")
    _dist(a, "four-0.5.dist-info", "four", "[irspec]\nfour = four.old\n")
    monkeypatch.syspath_prepend(str(b))
    monkeypatch.syspath_prepend(str(a))
    groups = {e.group for d in importlib.metadata.distributions() for e in d.entry_points}
    assert {"irspec", "console_scripts", "other"} <= groups
    for group in groups:
        theirs = importlib.metadata.entry_points(group=group)
        ours = irspec.spec.plugins._scan(group)
        assert ours is not None
        assert _found(ours) == _found(theirs)
    ours = {e.name: e for e in irspec.spec.plugins.entry_points("irspec")}
    assert ours["one"].value == "pkg_one.plugin:thing" and ours["one"].dist.version == "1.0"
    assert ours["two_ep"].value == "two.plugin : obj.attr [extra]"


def test_what_the_search_cannot_read_is_read_by_importlib_metadata(tmp_path, monkeypatch):
    # a zip file on the path, or an entry point line importlib.metadata reads otherwise (no '='): the
    # search gives up and importlib.metadata answers (here, with its own error)
    _dist(tmp_path, "odd-1.0.dist-info", "odd", "[irspec]\nno equals sign\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert irspec.spec.plugins._scan("irspec") is None
    with pytest.raises(TypeError):
        irspec.spec.plugins.entry_points("irspec")


def test_a_zip_file_on_the_path_is_searched_by_importlib_metadata(tmp_path, monkeypatch):
    import zipfile

    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("zipped-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped\nVersion: 1.0\n")
        z.writestr("zipped-1.0.dist-info/entry_points.txt", "[irspec]\nzipped = zipped_plugin\n")
    monkeypatch.syspath_prepend(str(archive))
    assert irspec.spec.plugins._scan("irspec") is None
    assert "zipped" in {e.name for e in irspec.spec.plugins.entry_points("irspec")}


def test_an_installed_plugin_is_loaded_from_what_the_search_finds(tmp_path, monkeypatch):
    package = tmp_path / "irspec_test_found"
    package.mkdir()
    (package / "__init__.py").write_text(
        "import irspec\n\n"
        "class Plugin:\n"
        "    @irspec.hookimpl\n"
        "    def irspec_register_metrics(self, register):\n"
        "        register(irspec.MetricDef('FoundToy', 'a toy', compute='irspec_test_found:compute'))\n\n"
        "holder = type('Holder', (), {'plugin': Plugin()})\n"
    )
    _dist(
        tmp_path,
        "irspec_test_found-1.0.dist-info",
        "irspec-test-found",
        "[irspec]\nfound = irspec_test_found:holder.plugin\n",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("IRSPEC_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.setenv("IRSPEC_LOAD_PLUGINS", "found")
    pm = get_plugin_manager()
    assert pm.get_plugin("found") is not None
    registry = build_registry(pm)
    assert "FoundToy" in registry.definitions
    assert registry.distributions["found"] == "irspec-test-found 1.0"


def _hook_module() -> types.ModuleType:
    """A module with every kind of attribute pluggy's static read tells apart."""
    module = types.ModuleType("irspec_test_hooks")
    hookimpl = pluggy.HookimplMarker("irspec")

    @hookimpl
    def irspec_register_metrics(register):  # a plain hook function
        pass

    @hookimpl(trylast=True)
    def irspec_register_readers(register):  # with options
        pass

    def helper():  # a function without the marker
        pass

    class Holder:
        @staticmethod
        @hookimpl
        def irspec_register_fusion(register):
            pass

    module.__dict__.update(
        irspec_register_metrics=irspec_register_metrics,
        irspec_register_readers=irspec_register_readers,
        helper=helper,
        irspec_register_fusion=Holder.__dict__["irspec_register_fusion"],  # a staticmethod object itself
        bound=Holder().__init__,  # a bound method (a method-wrapper, not hookable)
        number=3,
        builtin=len,
        Holder=Holder,
    )
    return module


def test_hook_implementations_are_found_in_a_module_as_pluggy_finds_them():
    """irspec's manager reads a module's functions from its dict (faster); for every attribute of every
    built-in plugin, every installed plugin module and a module of each kind of attribute, it finds
    what pluggy's own reading finds, options included."""
    ours = irspec.spec.plugins.PluginManager()
    theirs = pluggy.PluginManager("irspec")
    modules = [importlib.import_module(name) for name in DEFAULT_PLUGINS]
    modules += [m for m in get_plugin_manager().get_plugins() if isinstance(m, types.ModuleType)]
    modules.append(_hook_module())
    found = 0
    for module in modules:
        for name in dir(module):
            expected = pluggy.PluginManager.parse_hookimpl_opts(theirs, module, name)
            assert ours.parse_hookimpl_opts(module, name) == expected, (module.__name__, name)
            found += expected is not None
    assert found >= len(DEFAULT_PLUGINS) + 3  # every built-in has a hook, and the test module three


@given(st.text(alphabet="ab_-.09P", max_size=10))
@example("iprec_at_recall_0.10")
@example("a_")
@example("a__5")
def test_a_trec_name_splits_at_its_first_underscore_before_a_number(name):
    """split_trec_name reads the name without a regular expression: the one it stood for is the reference."""
    m = re.match(r"(.*?)_([-.0-9].*)$", name)
    assert split_trec_name(name) == ((m.group(1), m.group(2)) if m else (name, ""))


# --- the built-ins' registry, built without pluggy ----------------------------------------------------


def _described(registry: irspec.spec.registry.Registry) -> dict:
    """Everything a registry holds, as text that two equal registries share: each table's entries with
    their reprs (a frozen class's repr shows every field), each name's entry, and the distributions. A
    function a hook makes as it runs (an alias's reader of dotted parameters) is shown without its
    address: each call of the hook makes its own."""

    def shown(x):
        return re.sub(r" at 0x[0-9a-f]+", "", repr(x))

    names = {key: (e.plugin, shown(e.definition), shown(e.alias)) for key, e in registry._names.items()}
    tables = {k: shown(v) for k, v in vars(registry).items() if k not in ("_names", "distributions")}
    return {"names": names, "tables": tables, "distributions": dict(registry.distributions)}


def test_the_builtins_registry_is_the_one_pluggys_manager_builds():
    """builtin_registry() calls the built-in modules' hooks itself, in the order pluggy calls them:
    the same entries, in the same order, claimed by the same plugins, as build_registry over a plugin
    manager of the built-ins alone."""
    ours = irspec.spec.plugins.builtin_registry()
    assert ours is not None
    theirs = build_registry(get_plugin_manager(load_entry_points=False))
    assert _described(ours) == _described(theirs)
    assert list(ours.definitions) == list(theirs.definitions)
    assert len(ours.definitions) > 40 and ours.groups and ours.fusions and ours.aliases


def test_the_builtins_hooks_are_marked_as_pluggys_markers_mark_them():
    """builtin_hookimpl and the hook specifications' marker write what pluggy's markers write when
    given no options: a pluggy that records another option fails here, not in a user's process."""

    def f(register): ...

    def g(register): ...

    assert vars(pluggy.HookimplMarker("irspec")(f)) == vars(irspec.spec.hooks.builtin_hookimpl(g))
    spec = pluggy.HookspecMarker("irspec")(lambda register: None)
    assert spec.irspec_spec == irspec.spec.hooks.irspec_register_metrics.irspec_spec
    assert set(irspec.spec.plugins._REGISTRATION_ORDER) == {h.__name__ for h in irspec.spec.hooks.HOOKS}


def test_a_builtin_hook_with_options_is_left_to_pluggy(monkeypatch):
    """An option that changes pluggy's order of calls (tryfirst) is pluggy's to honour: builtin_registry
    declines, and the default registry is then built by a plugin manager."""
    hook = importlib.import_module(DEFAULT_PLUGINS[0]).irspec_register_metrics
    monkeypatch.setattr(hook, "irspec_impl", {**hook.irspec_impl, "tryfirst": True})
    assert irspec.spec.plugins.builtin_registry() is None


def test_the_registry_with_the_shipped_plugins_is_the_one_pluggys_manager_builds():
    """The default registry, with the installed plugins (the three shipped ones), built without pluggy:
    the same entries, in the same order, claimed by the same plugins, with the same distributions, as
    build_registry over a plugin manager that loads them."""
    selected = irspec.spec.plugins._selected_entry_points()
    assert {"online", "diversity", "usermodel"} <= {ep.name for ep in selected}
    ours = irspec.spec.plugins._without_pluggy(selected)
    assert ours is not None
    theirs = build_registry(get_plugin_manager(load_entry_points=True))
    assert _described(ours) == _described(theirs)
    assert list(ours.definitions) == list(theirs.definitions)
    assert {"online", "diversity", "usermodel"} <= {d.plugin for d in ours.definitions.values()}


def _plain_module(**attributes: object) -> types.ModuleType:
    """A plugin module with one plain hook, and ``attributes``."""
    module = types.ModuleType("irspec_test_plain")

    @irspec.hookimpl
    def irspec_register_metrics(register):
        register(_metric("PlainToy"))

    module.__dict__.update(irspec_register_metrics=irspec_register_metrics, **attributes)
    return module


def _marked(options: dict | None = None, name: str = "irspec_register_fusion", args: str = "register"):
    """A function named ``name`` taking ``args``, marked by irspec.hookimpl with ``options``."""
    namespace: dict = {}
    exec(f"def {name}({args}): pass", namespace)
    return irspec.hookimpl(**(options or {}))(namespace[name])


class _InstancePlugin:
    @irspec.hookimpl
    def irspec_register_metrics(self, register):
        register(_metric("PlainToy"))


class _Static:
    @staticmethod
    @irspec.hookimpl
    def irspec_register_fusion(register):
        pass


def _alone(plugin: object) -> list[tuple[str, object, None]]:
    """``plugin`` registered alone as ``p``, of no distribution."""
    return [("p", plugin, None)]


_PLAIN = _plain_module()


@pytest.mark.parametrize(
    "plugins",
    [
        pytest.param(
            _alone(_plain_module(irspec_register_fusion=_marked({"tryfirst": True}))), id="tryfirst"
        ),
        pytest.param(_alone(_plain_module(irspec_register_fusion=_marked({"specname": "x"}))), id="specname"),
        pytest.param(
            _alone(_plain_module(irspec_register_metric=_marked(name="irspec_register_metric"))),
            id="no-such-hook",
        ),
        pytest.param(
            _alone(_plain_module(irspec_register_fusion=_marked(args="register, extra"))), id="more-args"
        ),
        pytest.param(_alone(_plain_module(irspec_register_fusion=_marked(args=""))), id="no-args"),
        pytest.param(
            _alone(_plain_module(irspec_register_fusion=_marked(args="register=None"))), id="default"
        ),
        pytest.param(_alone(_plain_module(irspec_register_fusion=_marked(args="*register"))), id="varargs"),
        pytest.param(
            _alone(_plain_module(hook=_Static.__dict__["irspec_register_fusion"])), id="staticmethod"
        ),
        pytest.param(_alone(_plain_module(__dir__=lambda: [])), id="own-dir"),
        pytest.param(_alone(_InstancePlugin()), id="not-a-module"),
        pytest.param([("p", _PLAIN, None), ("q", _PLAIN, None)], id="registered-twice"),
    ],
)
def test_a_plugin_that_pluggy_must_read_is_left_to_it(plugins):
    """What pluggy would do more with than call the hooks (options, a name no hook has, arguments it
    checks, a plugin not a module or registered twice) leaves the registry to a plugin manager, which
    honours it or says what is wrong in its own words; a module with its plain hook alone, beside an
    unmarked function and a number, is built without it."""
    assert irspec.spec.plugins.plain_registry(plugins) is None
    plain = irspec.spec.plugins.plain_registry(_alone(_plain_module(helper=_marked, number=3)))
    assert plain is not None and plain.definitions["PlainToy"].plugin == "p"


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"tryfirst": True},
        {"trylast": True},
        {"hookwrapper": True},
        {"wrapper": True},
        {"optionalhook": True},
        {"specname": "irspec_register_metrics"},
    ],
)
def test_irspecs_hookimpl_marks_as_pluggys_marker_marks(options):
    """irspec.hookimpl, made without pluggy, writes what pluggy.HookimplMarker("irspec") writes, bare,
    with each option by name, and positionally in pluggy's order."""

    def f(register): ...

    def g(register): ...

    def h(register): ...

    def i(register): ...

    theirs = pluggy.HookimplMarker("irspec")
    assert vars(theirs(**options)(f)) == vars(irspec.hookimpl(**options)(g))
    assert vars(theirs(h)) == vars(irspec.hookimpl(i))
    order = ["hookwrapper", "optionalhook", "tryfirst", "trylast", "specname", "wrapper"]
    positional = [options.get(k, None if k == "specname" else False) for k in order]
    assert vars(theirs(None, *positional)(f)) == vars(irspec.hookimpl(None, *positional)(g))
    assert irspec.hookimpl.project_name == theirs.project_name


_DEFAULT_REGISTRY_CHILD = """
import json, sys
import irspec
from irspec.spec.plugins import get_registry
registry = get_registry()
irspec.parse("nDCG@10")
print(json.dumps({"pluggy": "pluggy" in sys.modules, "metrics": sorted(registry.definitions)}))
"""


@pytest.mark.parametrize(
    ("env", "pluggy_used"),
    [
        ({"IRSPEC_DISABLE_PLUGIN_AUTOLOAD": "1"}, False),
        ({"IRSPEC_LOAD_PLUGINS": ""}, False),  # an allow-list of none: nothing to load
        ({}, False),  # the shipped plugins are installed where this suite runs, and mark their hooks plainly
        ({"IRSPEC_DISABLE_PLUGIN_AUTOLOAD": "1", "IRSPEC_TRACE_PLUGINS": "1"}, True),  # traced by pluggy
    ],
)
def test_the_default_registry_imports_pluggy_only_for_tracing(env, pluggy_used):
    """In a process of its own (the default registry is built once a process): with or without the
    shipped plugins to load, the registry is built without pluggy, and holds what a plugin manager's
    holds."""
    import json
    import os
    import subprocess

    clean = {k: v for k, v in os.environ.items() if not k.startswith("IRSPEC_")}
    out = subprocess.run(
        [sys.executable, "-c", _DEFAULT_REGISTRY_CHILD],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(out.stdout)
    assert got["pluggy"] is pluggy_used
    builtins = sorted(build_registry(get_plugin_manager(load_entry_points=False)).definitions)
    if not env:
        assert set(builtins) < set(got["metrics"])  # the shipped plugins' metrics too
    else:
        assert got["metrics"] == builtins
