"""The power tables (:func:`irspec.power`): a :class:`~irspec.experiment.power.PowerAnalysis` as
sections of the table model, ``(heading, description, block)``, which every format renders as it
renders an input's tables (:func:`.text.plain_tables`, :func:`.markdown.plain_tables`,
:func:`.latex.plain_tables`, the HTML page's power section)."""

from __future__ import annotations

from typing import Any

from irspec.report.model import Block, Cell, Column, Row, check_decimals

__all__ = ["power_legend", "power_sections"]

_PAIR_COLUMNS = (
    Column("metric", "Metric", "left"),
    Column("a", "Run", "left"),
    Column("b", "vs.", "left"),
    Column("n", "n"),
    Column("diff", "Δ"),
    Column("sd", "sd(d)"),
    Column("power", "Power"),
    Column("detectable", "Detectable Δ"),
    Column("topics", "Topics needed"),
)
_ANOVA_COLUMNS = (
    Column("metric", "Metric", "left"),
    Column("runs", "Runs"),
    Column("n", "n"),
    Column("V_E", "V_E"),
    Column("power", "Power"),
    Column("detectable", "Detectable range"),
    Column("topics", "Topics needed"),
)


def _number(value: float | None, decimals: int, sign: bool = False) -> Cell:
    if value is None:
        return Cell("-", None)
    return Cell(f"{value:+.{decimals}f}" if sign else f"{value:.{decimals}f}", value)


def _count(value: int | None) -> Cell:
    return Cell("-", None) if value is None else Cell(str(value), value)


def power_legend(analysis: Any) -> str:
    """The sentence that says what the power tables hold: the design, delta, alpha and target power."""
    delta = "no delta given" if analysis.delta is None else f"delta = {analysis.delta:g}"
    return (
        f"Power: of a two-sided test at alpha = {analysis.alpha:g} to detect {delta}; detectable: the smallest "
        f"true difference (ANOVA: range between the best and worst run) found with power {analysis.power:g} "
        f"with the n topics at hand; topics needed: for delta at alpha {analysis.alpha:g} and power {analysis.power:g} "
        "(Sakai, Topic set size design, IRJ 2016)."
    )


def power_sections(analysis: Any, *, decimals: int = 4) -> list[tuple[str, str, Block]]:
    """The power tables of ``analysis`` as ``(heading, description, block)``: the paired t-test design
    of each comparison (the differences' mean and standard deviation, the power for delta, the
    minimum detectable difference, the topics needed), then the one-way ANOVA design of each metric
    over all runs (the residual variance V_E of the two-way ANOVA, the same three answers)."""
    check_decimals(decimals)
    legend = power_legend(analysis)
    pairs = tuple(
        Row(
            (
                Cell(p.metric),
                Cell(p.a),
                Cell(p.b),
                _count(p.n),
                _number(p.mean_difference, decimals, sign=True),
                _number(p.sd_difference, decimals),
                _number(p.achieved_power, 3),
                _number(p.detectable, decimals),
                _count(p.topics_needed),
            )
        )
        for p in analysis.pairs
    )
    anova = tuple(
        Row(
            (
                Cell(a.metric),
                _count(len(a.runs)),
                _count(a.n),
                _number(a.residual_variance, 6),
                _number(a.achieved_power, 3),
                _number(a.detectable, decimals),
                _count(a.topics_needed),
            )
        )
        for a in analysis.anova
    )
    out = []
    if pairs:
        out.append(
            (
                "Power of the paired t-tests",
                f"Per comparison, on the per-topic differences d = a - b. {legend}",
                Block(_PAIR_COLUMNS, pairs),
            )
        )
    if anova:
        out.append(
            (
                "Power of the one-way ANOVA over all runs",
                "Per metric, with the residual variance V_E of the topic x run two-way ANOVA without replication.",
                Block(_ANOVA_COLUMNS, anova),
            )
        )
    return out
