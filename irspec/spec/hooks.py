"""The hooks an irspec plugin may implement, and the markers to implement them with.

A plugin is a module (or object) with functions decorated by :data:`hookimpl` whose names are hooks
below. Built-in metrics are registered through these same hooks (see ``irspec/builtin``), and third
parties ship theirs in a package with an entry point in the ``irspec`` group::

    [project.entry-points.irspec]
    mymetrics = "mymetrics.plugin"

:data:`hookimpl` marks a hook implementation as ``pluggy.HookimplMarker("irspec")`` marks it, without
importing pluggy: pluggy costs ~2 ms to import and its plugin manager ~3 ms to build, and a process whose
plugins all mark their hooks plainly never needs either (:func:`irspec.spec.plugins.get_registry`).
:data:`hookspec` is pluggy's marker, made when first used. The built-in modules and the hook
specifications below are marked by :func:`builtin_hookimpl` and :func:`_hookspec`, which write the options
pluggy's markers write when given none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import pluggy

    from irspec.spec.registry import Register

    hookspec: pluggy.HookspecMarker

__all__ = [
    "hookimpl",
    "hookspec",
    "irspec_register_click_models",
    "irspec_register_commands",
    "irspec_register_fusion",
    "irspec_register_interleaving",
    "irspec_register_metrics",
    "irspec_register_plan_sections",
    "irspec_register_readers",
]

PROJECT = "irspec"
"""pluggy's project name for irspec's hooks, which names the attributes its markers set."""

IMPL_MARKER = f"{PROJECT}_impl"
"""The attribute in which pluggy's ``HookimplMarker(PROJECT)`` keeps a hook implementation's options."""

SPEC_MARKER = f"{PROJECT}_spec"
"""The attribute in which pluggy's ``HookspecMarker(PROJECT)`` keeps a hook specification's options."""

IMPL_DEFAULTS: dict[str, Any] = {
    "wrapper": False,
    "hookwrapper": False,
    "optionalhook": False,
    "tryfirst": False,
    "trylast": False,
    "specname": None,
}
"""The options ``pluggy.HookimplMarker`` records for a ``@hookimpl`` given none (its ``HookimplOpts``)."""

SPEC_DEFAULTS: dict[str, Any] = {
    "firstresult": False,
    "historic": False,
    "warn_on_impl": None,
    "warn_on_impl_args": None,
}
"""The options ``pluggy.HookspecMarker`` records for a ``@hookspec`` given none (its ``HookspecOpts``)."""

F = TypeVar("F", bound=Callable[..., Any])


def builtin_hookimpl(function: F) -> F:
    """Mark ``function`` as ``@hookimpl`` with no options marks it (:data:`hookimpl` itself, which
    imports no pluggy): how the built-in modules mark their hooks. A test holds the attribute to pluggy's
    own."""
    return hookimpl(function)


class HookimplMarker:
    """irspec's ``@hookimpl``: it marks a function as ``pluggy.HookimplMarker("irspec")`` marks it, the
    same options in the same attribute (:data:`IMPL_MARKER`), so that pluggy's plugin manager reads
    it as its own; but it is made without importing pluggy (the module's docstring). Used bare
    (``@hookimpl``) or with pluggy's options (``@hookimpl(tryfirst=True)``), positional in pluggy's order
    too. A test holds every option's mark to pluggy's."""

    project_name = PROJECT
    """The project whose hooks it marks, as pluggy's marker names it."""

    def __call__(
        self,
        function: F | None = None,
        hookwrapper: bool = False,
        optionalhook: bool = False,
        tryfirst: bool = False,
        trylast: bool = False,
        specname: str | None = None,
        wrapper: bool = False,
    ) -> Any:
        options = {
            "wrapper": wrapper,
            "hookwrapper": hookwrapper,
            "optionalhook": optionalhook,
            "tryfirst": tryfirst,
            "trylast": trylast,
            "specname": specname,
        }

        def mark(func: F) -> F:
            setattr(func, IMPL_MARKER, dict(options))  # each function its own, as pluggy's marker gives
            return func

        return mark if function is None else mark(function)


hookimpl = HookimplMarker()
"""The marker of a plugin's hook implementations (:class:`HookimplMarker`): ``@irspec.hookimpl``."""


def _hookspec(function: F) -> F:
    """Mark ``function`` as ``@hookspec`` with no options marks it, without importing pluggy."""
    setattr(function, SPEC_MARKER, dict(SPEC_DEFAULTS))
    return function


def __getattr__(name: str) -> Any:
    # hookspec: pluggy's marker, made on first use (the module's docstring)
    if name != "hookspec":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import pluggy

    marker = pluggy.HookspecMarker(PROJECT)
    globals()[name] = marker
    return marker


@_hookspec
def irspec_register_metrics(register: Register) -> None:
    """Register metric definitions, their aliases, and named groups of specs.

    Signature: ``irspec_register_metrics(register)``.

    Call ``register(definition, aliases=(...))`` once per :class:`irspec.MetricDef`. An alias is a
    plain name (``"MAP"``) or an :class:`irspec.Alias` that fixes parameters (``ndcg_burges`` is
    ``nDCG(dcg=exp-log2)``) or reads trec_eval's dotted parameters (``P.5,10``). Call
    ``register(group)`` with an :class:`irspec.MetricGroup` to name a list of specs (``official``).
    A name or alias that another plugin registered already is an error that names both plugins.
    """


@_hookspec
def irspec_register_readers(register: Register) -> None:
    """Register readers of new kinds of input, for metrics not computed from qrels and a run.

    Signature: ``irspec_register_readers(register)``.

    Call ``register(reader)`` once per :class:`irspec.InputReader`:
    ``InputReader(name, read, suffixes=(...), summary=...)``. ``read(source)`` returns the plugin's data
    object, which has an ``ids`` attribute (the items evaluated, one result row each). A metric declares
    the input it is computed from with ``MetricDef(..., needs=name, compute=...)``, and its ``compute``
    is then called as ``compute(data, metric)``, returning one float per item of ``data.ids``. In Python,
    :func:`irspec.evaluate_input` evaluates such an input; a plan's ``log:`` key names an input for the
    reader called ``log``. ``run`` and ``qrels`` are irspec's own inputs; a reader
    name another plugin registered already is an error that names both plugins.

    A reader registered with ``as_qrels=True`` reads judgments richer than qrels (qrels with
    subtopics): the engine reads the qrels source with it whenever a metric needs it, evaluates every
    metric with its data object's ``qrels``, and gives the object to the kernels of the metrics that
    need it as ``ctx.input(name)``; those metrics give ``compute(ctx, metric)`` over the run's context.
    """


@_hookspec
def irspec_register_plan_sections(register: Register) -> None:
    """Register top-level sections of irspec's plans, each the options of an input reader.

    Signature: ``irspec_register_plan_sections(register)``.

    Call ``register(section)`` once per :class:`irspec.plugin_api.PlanSection`:
    ``PlanSection(name, reader=..., schema={...}, summary=...)``. The section's ``schema`` (JSON Schema,
    draft 2020-12) joins the plan's schema as the property ``name`` (after the key of its reader's input:
    ``ab`` after ``log``), so ``irspec validate`` and ``irspec run`` check it and locate its problems by
    line; a plan that has the section must name the reader's input, and its reader is called with the
    section's value as the keyword argument ``name``, as ``irspec.evaluate_input(source, metrics,
    options={name: value})`` calls it. irspec-online registers ``ab:`` (an A/B test of a log's arms) this
    way. Called after every plugin's readers are registered: a section for a reader no plugin registers,
    a section another plugin registered already, or one named like a key of irspec's own plan is an
    error that names the plugins.
    """


@_hookspec
def irspec_register_fusion(register: Register) -> None:
    """Register methods of fusing several runs into one (``irspec fuse``, :func:`irspec.fuse`).

    Signature: ``irspec_register_fusion(register)``.

    Call ``register(method, aliases=(...))`` once per :class:`irspec.FusionDef`:
    ``FusionDef(name, summary, compute=..., params=(...), doc=...)``. ``compute(table, fusion)`` gets
    the candidates of a block of queries (every document any run retrieved for them, with each run's
    normalised score and rank: :class:`irspec.plugin_api.Candidates`) and the bound spec, and returns one
    fused score per candidate. Every method takes ``norm`` (the runs' scores normalised first), declared
    or not. Fusion methods have names of their own, apart from metrics'; a name or alias another plugin
    registered already is an error that names both plugins.
    """


@_hookspec
def irspec_register_interleaving(register: Register) -> None:
    """Register methods of interleaving two rankings (team-draft, balanced, probabilistic, optimized).

    Signature: ``irspec_register_interleaving(register)``.

    Call ``register(method, aliases=(...))`` once per :class:`irspec.plugin_api.InterleavingDef`:
    ``InterleavingDef(name, summary, compute=..., params=(...), doc=...)``, named in specs as a metric is
    (``team-draft``, ``probabilistic(tau=5)``) and bound by :func:`irspec.plugin_api.parse_method`
    ``(text, "interleaving method")``. irspec keeps the table and checks the names; the plugin that serves
    and credits interleaved lists (irspec-online's ``irspec interleave`` and ``Interleaving`` metric) says
    what ``compute`` is and calls it, so a third party's method joins those. Interleaving methods have
    names of their own, apart from metrics'; a name or alias another plugin registered already is an error
    that names both plugins.
    """


@_hookspec
def irspec_register_click_models(register: Register) -> None:
    """Register click models (PBM, cascade, DCM, UBM, DBN), fitted to logs and used to simulate users.

    Signature: ``irspec_register_click_models(register)``.

    Call ``register(model, aliases=(...))`` once per :class:`irspec.plugin_api.ClickModelDef`:
    ``ClickModelDef(name, summary, compute=..., params=(...), doc=...)``, named in specs as a metric is
    (``dbn``, ``pbm``) and bound by :func:`irspec.plugin_api.parse_method` ``(text, "click model")``.
    irspec keeps the table and checks the names; the plugin that fits and simulates them
    (irspec-online's ``irspec clickmodel fit`` and ``irspec simulate``) says what ``compute`` is. Click
    models have names of their own, apart from metrics'; a name or alias another plugin registered
    already is an error that names both plugins.
    """


@_hookspec
def irspec_register_commands(register: Register) -> None:
    """Register subcommands of the ``irspec`` command line (``irspec interleave``, ``irspec online``).

    Signature: ``irspec_register_commands(register)``.

    Call ``register(command)`` once per :class:`irspec.plugin_api.Command`: ``Command(name, summary,
    declare=..., run=..., roles={...})``. irspec makes the command's parser and calls ``declare(parser)``
    to add its arguments, then ``run(args, inputs)``. ``roles`` says what each argument is, by its
    ``dest``: ``"input"`` (files it reads), ``"output"`` (a file it writes) or ``"other"``; an argument
    without one is an error when the parser is made. Before ``run``, irspec refuses an output that is one
    of the inputs (however spelled: ``..``, an absolute path, a link) or another output, as it does for
    its own commands, and ``run`` writes its files with :func:`irspec.plugin_api.write_all_atomic`
    ``(outputs, inputs=inputs)``. A command named like one of irspec's own, or one another plugin
    registered already, is an error that names the plugins.
    """


# Keep the list of hook names in one place, so tests can check each has a documented spec.
HOOKS: tuple[Callable[..., None], ...] = (
    irspec_register_metrics,
    irspec_register_readers,
    irspec_register_plan_sections,
    irspec_register_fusion,
    irspec_register_interleaving,
    irspec_register_click_models,
    irspec_register_commands,
)
