"""ranx's ``compare`` and its ``Report``: the runs evaluated, every pair tested, the table as ranx prints
it (``tabulate``), its LaTeX, dict, DataFrame and JSON file.

The tests are ranx's: the paired t-test (its p-value by irspec's Student's t, so that a comparison
loads no scipy; scipy's to 1e-12) and Tukey's HSD as scipy computes them (ranx calls scipy), and
Fisher's randomization test as ranx runs it (each query's pair of scores swapped with probability 1/2,
``n_permutations`` times; p is the share of permutations whose absolute difference of means is at
least the observed one, without counting the observed assignment). ranx draws its permutations from
numba's generator in parallel threads, which no seed makes repeatable; here they come from numpy's
generator seeded with ``random_seed``, so the p-values are ranx's procedure with other draws.
``irspec.compare`` is the better test (exact when it can be, the observed assignment counted, stated
corrections): docs/coming-from/ranx.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, MutableMapping, Sequence
from typing import Any

from irspec.compat.ranx._scoring import evaluate
from irspec.compat.ranx._structures import Qrels, Run

__all__ = ["FrozensetDict", "Report", "compare"]

_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_SUPERSCRIPTS = "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ۹ʳˢᵗᵘᵛʷˣʸᶻ"  # ranx's own, its "۹" for q included
_LABELS = {
    "hits": "Hits",
    "hit_rate": "Hit Rate",
    "precision": "P",
    "recall": "Recall",
    "f1": "F1",
    "r-precision": "R-Prec",
    "mrr": "MRR",
    "map": "MAP",
    "dcg": "DCG",
    "dcg_burges": "DCG Burges",
    "ndcg": "NDCG",
    "ndcg_burges": "NDCG Burges",
    "bpref": "BPref",
    **{f"rbp.{i}": f"RBP.{i}" for i in range(1, 100)},
}
_TESTS = {
    "fisher": "Fisher's randomization test",
    "student": "paired Student's t-test",
    "tukey": "Tukey's HSD test",
}


class FrozensetDict(MutableMapping[Any, Any]):
    """A dict keyed by unordered pairs: ``d[a, b]`` is ``d[b, a]`` (ranx's ``FrozensetDict``)."""

    def __init__(self, arg: Any = None) -> None:
        self._map: dict[frozenset[Any], Any] = {}
        if arg is not None:
            self.update(arg)

    def __getitem__(self, key: Any) -> Any:
        return self._map[frozenset(key)]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._map[frozenset(key)] = value

    def __delitem__(self, key: Any) -> None:
        del self._map[frozenset(key)]

    def __iter__(self) -> Iterator[frozenset[Any]]:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._map)


def formatted(score: float, digits: int, percentages: bool) -> str:
    """A score as ranx's tables show it: rounded to ``digits`` decimals, or as a percentage with two
    fewer."""
    if percentages:
        return f"{round(score * 100, max(0, digits - 2)):.{digits - 2}f}"
    return f"{round(score, digits):.{digits}f}"


def _label(metric: str) -> str:
    """A metric's column heading as ranx writes it (``ndcg@10`` is ``NDCG@10``, ``map@5-l2`` ``MAP@5-l2``)."""
    name, _, level = metric.partition("-l")
    base, at, cutoff = name.partition("@")
    text = _LABELS[base] + (f"@{cutoff}" if at else "")
    return text + (f"-l{level}" if level else "")


class Report:
    """ranx's ``Report``: a comparison's means, p-values and win/tie/loss counts, and their renderings:
    ``str(report)`` (the table ranx prints, runs lettered, each mean marked with the letters of the runs
    it beats significantly), :meth:`to_latex`, :meth:`to_dict`, :meth:`to_dataframe`, :meth:`save`."""

    def __init__(
        self,
        model_names: list[str],
        results: dict[str, dict[str, float]],
        comparisons: FrozensetDict,
        metrics: list[str],
        max_p: float,
        win_tie_loss: dict[tuple[str, str], dict[str, dict[str, int]]],
        rounding_digits: int = 3,
        show_percentages: bool = False,
        stat_test: str = "student",
    ) -> None:
        self.model_names = model_names
        self.results = results
        self.comparisons = comparisons
        self.metrics = metrics
        self.max_p = max_p
        self.win_tie_loss = win_tie_loss
        self.rounding_digits = rounding_digits
        self.show_percentages = show_percentages
        self.stat_test = stat_test

    def format_score(self, score: float) -> str:
        """A mean as the table shows it: ``rounding_digits`` decimals, or a percentage with two fewer."""
        return formatted(score, self.rounding_digits, self.show_percentages)

    def _beaten(self, model: str, metric: str) -> list[int]:
        """The positions of the runs ``model`` beats on ``metric``: a significant difference and a higher
        mean."""
        return [
            j
            for j, other in enumerate(self.model_names)
            if other != model
            and self.comparisons[model, other][metric]["significant"]
            and self.results[model][metric] > self.results[other][metric]
        ]

    def get_superscript_for_table(self, model: str, metric: str) -> str:
        """The superscript letters of the runs ``model`` beats on ``metric``."""
        return "".join(_SUPERSCRIPTS[j] for j in self._beaten(model, metric))

    def get_superscript_for_latex(self, model: str, metric: str) -> str:
        """The letters of the runs ``model`` beats on ``metric``, for LaTeX."""
        return "".join(_LETTERS[j] for j in self._beaten(model, metric))

    def get_phantoms_for_latex(self, model: str, metric: str) -> str:
        """The letters of the other runs ``model`` does not beat (kept as space in LaTeX)."""
        beaten = set(self._beaten(model, metric))
        return "".join(
            _LETTERS[j] for j, other in enumerate(self.model_names) if other != model and j not in beaten
        )

    def get_metric_label(self, m: str) -> str:
        """The column heading of metric ``m``."""
        return _label(m)

    def get_stat_test_label(self, stat_test: str) -> str:
        """The test's name as the LaTeX caption gives it."""
        return _TESTS[stat_test]

    def to_table(self) -> str:
        """The table ``print(report)`` shows (tabulate's plain format, as ranx prints it)."""
        from tabulate import tabulate

        rows = []
        for i, (model, means) in enumerate(self.results.items()):
            cells = [_LETTERS[i], model]
            for metric, score in means.items():
                cells.append(self.format_score(score) + self.get_superscript_for_table(model, metric))
            rows.append(cells)
        headers = ["#", "Model", *[_label(m) for m in self.metrics]]
        return str(tabulate(tabular_data=rows, headers=headers))

    def to_latex(self) -> str:
        """The table as LaTeX (booktabs), best means in bold, ranx's text to the character."""
        best = {}
        for m in self.metrics:
            top, chosen = 0.0, None
            for model in self.model_names:
                shown = round(self.results[model][m], self.rounding_digits)
                if top < shown:
                    top, chosen = shown, model
            best[m] = chosen
        head = "".join(f"\n& \\textbf{{{_label(m)}}}" for m in self.metrics)
        prefix = (
            "% To change the table size, act on the resizebox argument `0.8`.\n"
            "\\begin{table*}[ht]\n\\centering\n\\caption{\nOverall effectiveness of the models.\n"
            "The best results are highlighted in boldface.\n"
            f"Superscripts denote significant differences in {_TESTS[self.stat_test]} with $p \\le {self.max_p}$.\n"
            "}\n\\resizebox{0.8\\textwidth}{!}{\n\\begin{tabular}{c|l" + "|c" * len(self.metrics) + "}"
            "\n\\toprule\n\\textbf{\\#}\n& \\textbf{Model}" + head + " \\\\ \n\\midrule"
        )
        blocks = []
        for i, model in enumerate(self.model_names):
            cells = []
            for m in self.metrics:
                score = self.format_score(self.results[model][m])
                if best[m] == model:
                    score = f"\\textbf{{{score}}}"
                marks = self.get_superscript_for_latex(model, m)
                space = self.get_phantoms_for_latex(model, m)
                cells.append(f"{score}$^{{{marks}}}$\\hphantom{{$^{{{space}}}$}} &")
            cells[-1] = cells[-1][:-1]
            blocks.append(f"{_LETTERS[i]} &\n{model} &\n" + "\n".join(cells) + "\\\\")
        body = "\n".join(blocks).replace("_", "\\_").replace("$^{}$", "")
        preamble = (
            "========================\n% Add in preamble\n\\usepackage{graphicx}\n\\usepackage{booktabs}\n"
            "========================\n\n"
        )
        suffix = "\\bottomrule\n\\end{tabular}\n}\n\\label{tab:results}\n\\end{table*}"
        return preamble + "\n" + prefix + "\n" + body + "\n" + suffix

    def to_dict(self) -> dict[str, Any]:
        """The report as a dict: ``stat_test``, ``metrics``, ``model_names``, and per run its ``scores``,
        its ``comparisons`` (the p-value against each other run per metric) and ``win_tie_loss``."""
        out: dict[str, Any] = {
            "stat_test": self.stat_test,
            "metrics": self.metrics,
            "model_names": self.model_names,
        }
        for a in self.model_names:
            others = [b for b in self.model_names if b != a]
            out[a] = {
                "scores": self.results[a],
                "comparisons": {
                    b: {m: self.comparisons[{a, b}][m]["p_value"] for m in self.metrics} for b in others
                },
                "win_tie_loss": {b: {m: self.win_tie_loss[(a, b)][m] for m in self.metrics} for b in others},
            }
        return out

    def to_dataframe(self) -> Any:
        """The means as a pandas DataFrame: a ``model_names`` column, then one column per metric."""
        import pandas as pd

        frame = pd.DataFrame.from_dict({n: self.results[n] for n in self.model_names}, orient="index")
        return frame.reset_index().rename(columns={"index": "model_names"})

    def save(self, path: str) -> None:
        """Write :meth:`to_dict` to ``path`` as JSON."""
        with open(path, "w") as f:
            f.write(json.dumps(self.to_dict(), indent=4))

    def print_results(self) -> None:
        """Print the means as JSON."""
        print(json.dumps(self.results, indent=4))

    def __repr__(self) -> str:
        return self.to_table()

    def __str__(self) -> str:
        return self.to_table()


def _fisher(control: Any, treatment: Any, permutations: int, max_p: float, seed: int) -> tuple[float, bool]:
    """ranx's randomization test: the share of ``permutations`` random swaps of each query's pair whose
    absolute difference of means reaches the observed one (the observed assignment not counted)."""
    import numpy as np

    a, b = np.asarray(control, dtype=float), np.asarray(treatment, dtype=float)
    observed = abs(a.mean() - b.mean())
    swap = np.random.default_rng(seed).random((permutations, a.size)) < 0.5
    first, second = np.where(swap, b, a), np.where(swap, a, b)
    p = float(np.mean(np.abs(first.mean(axis=1) - second.mean(axis=1)) >= observed))
    return p, p <= max_p


def _paired_t(control: Any, treatment: Any) -> float:
    """The two-sided p-value of the paired t-test (scipy's ``ttest_rel``, which ranx calls): NaN when
    every difference is equal to the mean difference of 0, 0 when they are all equal to another."""
    import math

    import numpy as np

    from irspec.stats.student import t_sf

    d = np.asarray(control, dtype=np.float64) - np.asarray(treatment, dtype=np.float64)
    n = d.size
    mean = float(np.mean(d))
    sd = float(np.std(d, ddof=1)) if n > 1 else math.nan
    if math.isnan(sd) or sd == 0.0:
        return math.nan if mean == 0.0 or math.isnan(sd) else 0.0
    return 2.0 * t_sf(abs(mean / (sd / math.sqrt(n))), n - 1)


def _significance(
    names: list[str], scores: dict[str, dict[str, Any]], metrics: list[str], stat_test: str, n_permutations: int,
    max_p: float, seed: int,
) -> FrozensetDict:  # fmt: skip
    """Every pair of runs tested on every metric: ``{pair: {metric: {"p_value", "significant"}}}``."""
    found = FrozensetDict()
    if stat_test in ("fisher", "student"):
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                tests = {}
                for m in metrics:
                    if stat_test == "student":
                        p = _paired_t(scores[a][m], scores[b][m])
                        tests[m] = {"p_value": p, "significant": p <= max_p}
                    else:
                        p, significant = _fisher(scores[a][m], scores[b][m], n_permutations, max_p, seed)
                        tests[m] = {"p_value": p, "significant": significant}
                found[a, b] = tests
        return found
    if stat_test == "tukey":
        from scipy import stats

        for i, a in enumerate(names):
            for b in names[i:]:
                found[a, b] = dict.fromkeys(metrics)
        for m in metrics:
            p = stats.tukey_hsd(*[scores[n][m] for n in names]).pvalue
            for i, a in enumerate(names):
                for j, b in enumerate(names):
                    found[a, b][m] = {"p_value": p[i, j], "significant": p[i, j] <= max_p}
        return found
    raise NotImplementedError(f"Statistical test `{stat_test}` not supported.")


def compare(
    qrels: Qrels,
    runs: Sequence[Run],
    metrics: list[str] | str,
    stat_test: str = "student",
    n_permutations: int = 1000,
    max_p: float = 0.01,
    random_seed: int = 42,
    threads: int = 0,
    rounding_digits: int = 3,
    show_percentages: bool = False,
    make_comparable: bool = False,
) -> Report:
    """ranx's ``compare``: every run evaluated on ``metrics`` (its per-query values kept on the run, as
    ``evaluate`` keeps them), every pair of runs tested (``stat_test``: ``"student"``, the paired t-test;
    ``"fisher"``, the randomization test with ``n_permutations`` and ``random_seed``; ``"tukey"``,
    Tukey's HSD over all runs), a difference significant at ``p <= max_p``. Runs without a name are
    ``run_1``, ``run_2``, .... Returns a :class:`Report`."""
    import numpy as np

    names_of = [metrics] if isinstance(metrics, str) else list(metrics)
    if not all(isinstance(m, str) for m in names_of):
        raise AssertionError("Metrics error")
    model_names: list[str] = []
    scores: dict[str, dict[str, Any]] = {}
    results: dict[str, dict[str, float]] = {}
    for i, run in enumerate(runs):
        name = run.name if run.name is not None else f"run_{i + 1}"
        model_names.append(name)
        found = evaluate(
            qrels, run, names_of, return_mean=False, threads=threads, make_comparable=make_comparable
        )
        scores[name] = {names_of[0]: found} if len(names_of) == 1 else found
        results[name] = {m: float(np.mean(scores[name][m])) for m in names_of}
    comparisons = _significance(model_names, scores, names_of, stat_test, n_permutations, max_p, random_seed)
    win_tie_loss: dict[tuple[str, str], dict[str, dict[str, int]]] = {}
    for a in model_names:
        for b in model_names:
            if a != b:
                win_tie_loss[(a, b)] = {
                    m: {
                        "W": int(np.sum(scores[a][m] > scores[b][m])),
                        "T": int(np.sum(scores[a][m] == scores[b][m])),
                        "L": int(np.sum(scores[a][m] < scores[b][m])),
                    }
                    for m in names_of
                }
    return Report(
        model_names=model_names,
        results=results,
        comparisons=comparisons,
        metrics=names_of,
        max_p=max_p,
        win_tie_loss=win_tie_loss,
        rounding_digits=rounding_digits,
        show_percentages=show_percentages,
        stat_test=stat_test,
    )
