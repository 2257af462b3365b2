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
"""

from __future__ import annotations

from irspec.plan.execute import PlanReport, render_outputs, run_plan, write_outputs
from irspec.plan.load import load_plan, schema
from irspec.plan.model import SCHEMA_PATH, Output, Plan, PlanRun

__all__ = [
    "SCHEMA_PATH",
    "Plan",
    "PlanRun",
    "Output",
    "PlanReport",
    "schema",
    "load_plan",
    "run_plan",
    "render_outputs",
    "write_outputs",
]
