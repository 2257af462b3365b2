"""Evaluated results made from given per-query values, for tests of the compare step and its tables.

``make_result("a", ["q1", "q2"], [0.1, 0.2])`` is a :class:`irspec.evaluation.result.Result` of run ``a`` with
those values for every metric (AP and P@10 unless ``metrics`` says otherwise); a 2-D ``values`` gives
one column per metric.
"""

from __future__ import annotations

import numpy as np

import irspec
from irspec.evaluation.context import Options
from irspec.evaluation.result import Result


def make_result(
    name: str, qids: list[str], values: np.ndarray, metrics=("AP", "P@10"), missing="zero"
) -> Result:
    """A result of run ``name`` on queries ``qids`` with ``values`` (one column, or one per metric)."""
    bound = tuple(irspec.parse_many(list(metrics)))
    values = np.asarray(values, dtype=float).reshape(len(qids), -1)
    if values.shape[1] == 1 and len(bound) > 1:
        values = np.repeat(values, len(bound), axis=1)
    return Result(name, "<test>", bound, tuple(qids), values, Options(missing_queries=missing))
