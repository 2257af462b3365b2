"""The settings of a log's interleaving test and counterfactual estimates: a plan's ``online:`` section
(:data:`irspec_online.plugin.ONLINE`, its JSON Schema), the ``online`` option of
:func:`irspec_online.log.read_log`, and the command line's flags.

Plain values, checked here (a bad one is an :class:`irspec.EvaluationError` naming ``online.<key>``);
they import nothing heavy.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from irspec import EvaluationError

__all__ = ["Counterfactual", "Interleaving", "Online"]

CLIP = 10.0
"""ClippedIPS's default clip (its ``clip`` parameter, :data:`irspec_online.plugin.CLIPPED_IPS`)."""


def _check(where: str, value: Any, kind: str, low: float | None = None, high: float | None = None) -> None:
    """Refuse ``value`` unless it is a number of ``kind`` (``int``, ``float``) within (low, high)."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if ok and kind == "int":
        ok = isinstance(value, numbers.Integral)
    if ok and low is not None:
        ok = value > low
    if ok and high is not None:
        ok = value < high
    if not ok:
        bounds = " and ".join(
            part
            for part in (f"> {low}" if low is not None else "", f"< {high}" if high is not None else "")
            if part
        )
        raise EvaluationError(f"{where} must be {'an integer' if kind == 'int' else 'a number'}"
                              f"{' ' + bounds if bounds else ''}, not {value!r}")  # fmt: skip


def _known(where: str, given: Mapping[str, Any], cls: type) -> None:
    if not isinstance(given, Mapping):
        raise EvaluationError(f"{where} must be a mapping of settings, not {type(given).__name__}")
    names = [f.name for f in fields(cls)]
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise EvaluationError(
            f"{where}: unknown setting {unknown[0]!r} (the settings are {', '.join(names)})"
        )


@dataclass(frozen=True)
class Interleaving:
    """How an interleaving experiment is tested: ``replicates`` of the Poisson bootstrap over users, its
    ``seed``, and the ``confidence`` of the preference's interval."""

    replicates: int = 1000
    seed: int = 0
    confidence: float = 0.95

    def __post_init__(self) -> None:
        _check("online.interleaving.replicates", self.replicates, "int", 0, 1_000_001)
        _check("online.interleaving.seed", self.seed, "int", -1)
        _check("online.interleaving.confidence", self.confidence, "float", 0, 1)


@dataclass(frozen=True)
class Counterfactual:
    """A counterfactual estimate of a new ranking's clicks from the log of another (:mod:`irspec_online.
    counterfactual`): ``run`` the new ranking (a TREC run file, or ``{query id: {doc: score}}``),
    ``propensity`` the examination probability per rank (a fitted PBM's or a swap experiment's JSON file
    written by ``irspec clickmodel fit``, or a list, rank 1 first) and the ``confidence`` of the intervals.

    ``clip`` is deprecated: no estimate ever read it, each ``ClippedIPS`` taking its own (``clip=``, default
    10). 10 is accepted with a :class:`DeprecationWarning`; another value is refused, as its estimates would
    not be clipped at it."""

    run: Any = None
    propensity: Any = None
    clip: float | None = None
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if self.run is None:
            raise EvaluationError("online.counterfactual.run: give the ranking to estimate (a run file)")
        if self.clip is not None:
            _check("online.counterfactual.clip", self.clip, "float", 0)
            if self.clip != CLIP:
                raise EvaluationError(
                    f"online.counterfactual.clip (--clip) {self.clip!r} would not be read: each ClippedIPS takes "
                    f"its own clip, default {CLIP:g}; give it in the metric: ClippedIPS(ctr, clip={self.clip:g})@10"
                )
            warnings.warn(
                "online.counterfactual.clip (--clip) is deprecated: give ClippedIPS its clip, "
                f"ClippedIPS(ctr, clip={CLIP:g})@10 (the default, which every estimate used)",
                DeprecationWarning,
                stacklevel=2,
            )
        _check("online.counterfactual.confidence", self.confidence, "float", 0, 1)


@dataclass(frozen=True)
class Online:
    """A log's ``online`` settings: the ``interleaving`` test's and, when given, a ``counterfactual``
    estimate's."""

    interleaving: Interleaving = field(default_factory=Interleaving)
    counterfactual: Counterfactual | None = None

    @classmethod
    def of(cls, given: Mapping[str, Any] | Online | None) -> Online:
        """Settings from a plan's ``online:`` mapping (``None``: the defaults)."""
        if given is None:
            return cls()
        if isinstance(given, Online):
            return given
        _known("online", given, cls)
        parts: dict[str, Any] = {}
        for name, part in (("interleaving", Interleaving), ("counterfactual", Counterfactual)):
            if given.get(name) is not None:
                _known(f"online.{name}", given[name], part)
                parts[name] = part(**given[name])
        return cls(**parts)
