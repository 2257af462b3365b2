"""Statistics on plain arrays: significance tests, resampling, power design, agreement. Knows no Result.

The package itself holds only the old names of ``irspec.stats`` the module, loaded when used."""

from __future__ import annotations

from irspec.lazy import lazy_names

# Until irspec 0.1.0 ``irspec.stats`` was a module (irspec/stats.py), now ``stats/significance.py`` and
# (the records of a test) ``stats/outcome.py``: its names are kept here for one release, each loaded on
# use with a DeprecationWarning naming the new path (``irspec.stats.paired``).
_MOVED: dict[str, str] = {
    **dict.fromkeys(
        (
            "ADJUST_METHODS",
            "BOOTSTRAP_METHODS",
            "INTERVAL_METHODS",
            "NULL_HYPOTHESES",
            "TESTS",
            "ZERO_METHODS",
            "adjust",
            "bootstrap_ci",
            "mean_ci",
            "paired",
            "residual_variance",
            "tukey",
        ),
        "irspec.stats.significance",
    ),
    "ComparisonResult": "irspec.stats.outcome",
    "PairResult": "irspec.stats.outcome",
}

__getattr__, __dir__ = lazy_names(globals(), {}, moved=_MOVED)
