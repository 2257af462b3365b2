"""The agreement tables (:func:`irspec.agreement`): an :class:`~irspec.experiment.agreement.Agreement`
as sections of the table model, ``(heading, description, block)``, which every format renders as it
renders the power tables (:mod:`.power`): :func:`.text.plain_tables`, :func:`.markdown.plain_tables`,
:func:`.latex.plain_tables`, the HTML page's agreement section. :func:`judged_sets_text` is one text
output of several sets of judgments: each set's results, then the agreement.

The agreement is read by its attributes, as comparisons and systems are: this module imports nothing of
:mod:`irspec.experiment`, whose agreement step renders itself through it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from irspec.errors import EvaluationError
from irspec.report import latex, markdown, text
from irspec.report.model import Block, Cell, Column, Row, p_text

__all__ = ["COMBINED_FORMATS", "agreement_sections", "judged_sets_text"]


def _text(value: float | None, decimals: int) -> str:
    return "-" if value is None else f"{value:.{decimals}f}"


def _cell(value: float | None, decimals: int) -> Cell:
    return Cell(_text(value, decimals), value)


def _mark(value: bool | None) -> Cell:
    return Cell("?" if value is None else "yes" if value else "no", value)


def _block(columns: Sequence[tuple[str, str, str]], rows: Sequence[Sequence[Cell]]) -> Block:
    return Block(tuple(Column(*c) for c in columns), tuple(Row(tuple(r)) for r in rows))


def agreement_sections(found: Any, *, decimals: int = 4) -> list[tuple[str, str, Block]]:
    """The tables of ``found`` (an :class:`~irspec.experiment.agreement.Agreement`, read by its
    attributes) as ``(heading, description, block)``: the rankings' agreement, the swapped pairs of
    runs (when there are any), the labels' agreement and each confusion matrix, and the significance
    that does not hold under the other set."""
    method = found.compare.as_dict() if found.compare is not None else None
    how = (
        f"significance: {method['test']} test, {method['correction'] or 'default'} correction, alpha {method['alpha']:g}"
        if method
        else "significance: not compared"
    )
    out = [
        (
            "Agreement between system rankings",
            "tau = Kendall's tau-b; tau_AP a = Yilmaz et al.'s AP correlation with set a's ranking the reference "
            "(b's ranking read from its best run down: the lowest mean where lower is better), tau_AP b the reverse, "
            "mean their mean; undefined (-) with tied means (within 1e-12 of the larger).",
            _block(
                [
                    ("metric", "Metric", "left"),
                    ("a", "Set a", "left"),
                    ("b", "Set b", "left"),
                    ("runs", "Runs", "right"),
                    ("tau", "Kendall's τ", "right"),
                    ("tau_AP a", "τ_AP (a ref.)", "right"),
                    ("tau_AP b", "τ_AP (b ref.)", "right"),
                    ("tau_AP mean", "τ_AP mean", "right"),
                    ("swaps", "Swaps", "right"),
                ],
                [
                    [
                        Cell(r.metric),
                        Cell(r.a),
                        Cell(r.b),
                        Cell(str(r.systems), r.systems),
                        _cell(r.kendall_tau, decimals),
                        _cell(r.tau_ap_a, decimals),
                        _cell(r.tau_ap_b, decimals),
                        _cell(r.tau_ap_mean, decimals),
                        Cell(str(r.swaps), r.swaps),
                    ]
                    for r in found.rankings
                ],
            ),
        )
    ]
    if found.swaps:
        out.append(
            (
                "Swapped pairs of runs",
                f"Runs ordered one way under set a and the other under set b; sig a/b: significant under each set "
                f"({how}; ? = not compared).",
                _block(
                    [
                        ("metric", "Metric", "left"),
                        ("a", "Set a", "left"),
                        ("b", "Set b", "left"),
                        ("run 1", "Run 1", "left"),
                        ("run 2", "Run 2", "left"),
                        ("1 (a)", "Run 1 (a)", "right"),
                        ("2 (a)", "Run 2 (a)", "right"),
                        ("1 (b)", "Run 1 (b)", "right"),
                        ("2 (b)", "Run 2 (b)", "right"),
                        ("sig a", "Sig. a", "center"),
                        ("sig b", "Sig. b", "center"),
                    ],
                    [
                        [
                            Cell(s.metric),
                            Cell(s.a),
                            Cell(s.b),
                            Cell(s.run_1),
                            Cell(s.run_2),
                            *(_cell(v, decimals) for v in (s.mean_1_a, s.mean_2_a, s.mean_1_b, s.mean_2_b)),
                            _mark(s.significant_a),
                            _mark(s.significant_b),
                        ]
                        for s in found.swaps
                    ],
                ),
            )
        )
    out.append(
        (
            "Agreement between labels",
            "On the query-document pairs both sets judged: agree = same label; kappa = Cohen's kappa; kappa q = "
            "quadratic-weighted kappa on the grades; alpha = Krippendorff's ordinal alpha; bin = the same on relevant "
            "(label >= the relevance level) or not. Negative labels are a grade of their own.",
            _block(
                [
                    ("a", "Set a", "left"),
                    ("b", "Set b", "left"),
                    ("common", "Common", "right"),
                    ("only a", "Only a", "right"),
                    ("only b", "Only b", "right"),
                    ("agree", "Agree", "right"),
                    ("kappa", "κ", "right"),
                    ("kappa q", "κ quadratic", "right"),
                    ("alpha", "α ordinal", "right"),
                    ("bin agree", "Binary agree", "right"),
                    ("bin kappa", "Binary κ", "right"),
                ],
                [
                    [
                        Cell(x.a),
                        Cell(x.b),
                        Cell(str(x.common), x.common),
                        Cell(str(x.only_a), x.only_a),
                        Cell(str(x.only_b), x.only_b),
                        _cell(x.agreement, decimals),
                        _cell(x.kappa, decimals),
                        _cell(x.kappa_quadratic, decimals),
                        _cell(x.alpha_ordinal, decimals),
                        _cell(x.binary_agreement, decimals),
                        _cell(x.binary_kappa, decimals),
                    ]
                    for x in found.labels
                ],
            ),
        )
    )
    for x in found.labels:
        if x.labels:
            out.append(
                (
                    f"Labels: {x.a} (rows) against {x.b} (columns)",
                    "Counts of the commonly judged query-document pairs.",
                    _block(
                        [
                            (f"{x.a} \\ {x.b}", f"{x.a} \\ {x.b}", "left"),
                            *((str(v), str(v), "right") for v in x.labels),
                        ],
                        [
                            [Cell(str(v)), *(Cell(str(n), n) for n in row)]
                            for v, row in zip(x.labels, x.confusion, strict=True)
                        ],
                    ),
                )
            )
    out.append(
        (
            "Significance that does not hold",
            f"Comparisons significant under one set and not under the other ({how}).",
            _block(
                [
                    ("metric", "Metric", "left"),
                    ("run a", "Run a", "left"),
                    ("run b", "Run b", "left"),
                    ("a", "Set a", "left"),
                    ("b", "Set b", "left"),
                    ("sig a", "Sig. a", "center"),
                    ("sig b", "Sig. b", "center"),
                    ("p adj a", "p adj. a", "right"),
                    ("p adj b", "p adj. b", "right"),
                ],
                [
                    [
                        Cell(s.metric),
                        Cell(s.run_a),
                        Cell(s.run_b),
                        Cell(s.a),
                        Cell(s.b),
                        _mark(s.significant_a),
                        _mark(s.significant_b),
                        Cell(p_text(s.p_adjusted_a), s.p_adjusted_a),
                        Cell(p_text(s.p_adjusted_b), s.p_adjusted_b),
                    ]
                    for s in found.significance
                ],
            ),
        )
    )
    return out


COMBINED_FORMATS = ("table", "json", "markdown", "latex")
"""The text formats :func:`judged_sets_text` joins: one output holding every set's results and the agreement."""


def judged_sets_text(texts: Mapping[str, str], found: Any, fmt: str, *, decimals: int = 4) -> str:
    """One output of several sets of judgments: each set's results rendered in ``fmt`` (``texts``,
    ``{set: text}``) under a heading naming the set, then the agreement section (``found``, an
    :class:`~irspec.experiment.agreement.Agreement`). For ``json``,
    ``{"qrels_sets": {set: its document}, "agreement": found.as_dict()}``. (The HTML page shows the
    sets in its own way: :class:`~irspec.report.html.JudgedSet`.)"""
    if fmt == "json":
        doc = {
            "qrels_sets": {name: json.loads(body) for name, body in texts.items()},
            "agreement": found.as_dict(),
        }
        return json.dumps(doc, indent=2, allow_nan=False) + "\n"
    if fmt not in COMBINED_FORMATS:
        raise EvaluationError(
            f"several sets of judgments are reported in the {', '.join(COMBINED_FORMATS)} formats, not {fmt}"
        )
    heading = {"table": "== qrels: {} ==\n", "markdown": "## qrels: {}\n\n", "latex": "% qrels: {}\n"}[fmt]
    # a set's name as its format needs it: escaped in Markdown, one line in a LaTeX comment and a text heading
    shown = {"table": latex.one_line, "markdown": markdown.markdown_escape, "latex": latex.one_line}[fmt]
    parts = [heading.format(shown(name)) + body for name, body in texts.items()]
    sections = agreement_sections(found, decimals=decimals)
    if fmt == "table":
        tail = "== agreement ==\n" + text.plain_tables(sections, notes=found.notes)
    elif fmt == "markdown":
        tail = "## Agreement between the sets of judgments\n" + markdown.plain_tables(
            sections, notes=found.notes
        )
    else:
        tail = "% agreement between the sets of judgments\n" + latex.plain_tables(sections, notes=found.notes)
    return "\n".join([*parts, tail])
