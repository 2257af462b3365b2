"""Evaluation plans: a YAML file that says what to evaluate, how to compare the runs, and where to write.

>>> plan = load_plan("specs/demo.yaml")                  # doctest: +SKIP
>>> report = run_plan(plan)                              # doctest: +SKIP
>>> write_outputs(report)                                # doctest: +SKIP

Loading is strict and all-at-once. The plan's JSON Schema (``specs/plan.schema.json``, shipped as
``irspec/schemas/plan.schema.json``), with the sections plugins register (irspec-online's ``ab:``;
:func:`schema`), is the single source of truth for its shape; it is checked with
:mod:`jsonschema` (draft 2020-12), and every error is reported with the plan file, the line, the path in
the plan (``runs[2].path``) and the problem. Then come the checks a schema cannot make: metric specs are
parsed and bound, files and globs resolved (relative to the plan file), run names must be distinct, the
baseline must name a run. Every problem found is raised together in one
:class:`~irspec.errors.PlanError`.

The package, one module per part (this file only gathers their public names):

- :mod:`~irspec.plan.model`: the validated plan (:class:`Plan`, :class:`PlanRun`, :class:`Output`);
- :mod:`~irspec.plan.load`: :func:`load_plan`: YAML with lines, ``--set`` overrides, the schema;
- :mod:`~irspec.plan.problems`: the problems found, with their lines, and schema errors in words;
- :mod:`~irspec.plan.resolve`: the checks a schema cannot make;
- :mod:`~irspec.plan.execute`: :func:`run_plan` (evaluate, compare), :func:`render_outputs`,
  :func:`write_outputs`.

Comparing is the compare step's (:mod:`irspec.experiment.compare`), formatting the report layer's.

The names load with their module on first use, as ``import irspec``'s do: ``irspec eval`` builds a
:class:`Plan` and runs it, and should not pay for YAML and the JSON Schema, which only a plan file needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from irspec.lazy import lazy_names

if TYPE_CHECKING:
    from irspec.plan.execute import PlanReport, render_outputs, run_plan, write_outputs
    from irspec.plan.load import load_plan, schema
    from irspec.plan.model import SCHEMA_PATH, Output, Plan, PlanRun

# Each public name by the module that defines it.
_LAZY: dict[str, str] = {
    "SCHEMA_PATH": "irspec.plan.model",
    "Plan": "irspec.plan.model",
    "PlanRun": "irspec.plan.model",
    "Output": "irspec.plan.model",
    "PlanReport": "irspec.plan.execute",
    "run_plan": "irspec.plan.execute",
    "render_outputs": "irspec.plan.execute",
    "write_outputs": "irspec.plan.execute",
    "schema": "irspec.plan.load",
    "load_plan": "irspec.plan.load",
}

__all__ = [
    "SCHEMA_PATH",
    "Output",
    "Plan",
    "PlanReport",
    "PlanRun",
    "load_plan",
    "render_outputs",
    "run_plan",
    "schema",
    "write_outputs",
]


# Names of ``irspec.plan`` the module (until irspec 0.1.0) that belong to the compare step: kept for one
# release, each loaded on use with a DeprecationWarning naming the new path.
_MOVED: dict[str, str] = {
    "Compare": "irspec.experiment.records",
    "Comparison": "irspec.experiment.records",
    "compare_results": "irspec.experiment.compare",
}

__getattr__, __dir__ = lazy_names(globals(), _LAZY, moved=_MOVED)
