"""The log's non-metrics: its top queries and its queries per hour or day, as tables in every output of a
plan and as plots. Expected values are counted by hand from the records written out here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("irspec_online")

from irspec_online import plugin
from irspec_online.log import read_log
from irspec_online.records import QueryCounts

import irspec
from irspec.testing import registered_plugin

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "interactions.jsonl"
DAY = 1714521600  # 2024-05-01T00:00:00Z


@pytest.fixture(autouse=True)
def online():
    with registered_plugin(plugin) as registry:
        yield registry


def rows(log, title):
    (table,) = [t for t in log.tables() if t.title == title]
    return list(table.rows)


def test_the_example_logs_top_queries_and_queries_per_hour_by_hand():
    log = read_log(EXAMPLE)
    # six distinct query texts, each issued once; ties are listed in text order. Clicked: mars planet
    # (d2), mars bar (d7), mars weather (d10, d9); the others not.
    assert rows(log, "Top queries") == [
        ("bruno mars", 1, 0.0),
        ("chocolate mars", 1, 0.0),
        ("mars bar", 1, 1.0),
        ("mars planet", 1, 1.0),
        ("mars rover", 1, 0.0),
        ("mars weather", 1, 1.0),
    ]
    # 10:00, 10:01:30, 10:05, 10:05:20 on May 1; 1714563000 = May 1 11:30; May 2 09:00. The log spans 23
    # hours, so per hour, every hour from 10:00 to 09:00 the next day (24), the empty ones 0.
    per_hour = rows(log, "Queries per hour")
    assert len(per_hour) == 24
    assert per_hour[0] == ("2024-05-01 10:00", 4)
    assert per_hour[1] == ("2024-05-01 11:00", 1)
    assert per_hour[-1] == ("2024-05-02 09:00", 1)
    assert all(n == 0 for _, n in per_hour[2:-1])


def generated(path: Path) -> Path:
    """12 query issues over three days: "a" 5 times (2 clicked), "b" and "c" 3 times each (b: all clicked,
    c: none), "d" once (clicked). Day 1: 5 issues, day 2: none, day 3: 7."""
    plan = [
        ("a", 0, True),
        ("a", 60, False),
        ("b", 120, True),
        ("c", 3600, False),
        ("d", 7200, True),
        ("a", 2 * 86400, True),
        ("a", 2 * 86400 + 10, False),
        ("a", 2 * 86400 + 20, False),
        ("b", 2 * 86400 + 30, True),
        ("b", 2 * 86400 + 40, True),
        ("c", 2 * 86400 + 50, False),
        ("c", 2 * 86400 + 3600 * 23, False),
    ]
    with path.open("w", encoding="utf-8") as f:
        for i, (query, t, clicked) in enumerate(plan):
            clicks = [{"doc": "d1"}] if clicked else []
            rec = {
                "session": f"s{i // 3}",
                "query": query,
                "timestamp": DAY + t,
                "results": ["d1"],
                "clicks": clicks,
            }
            f.write(json.dumps(rec) + "\n")
    return path


@pytest.mark.parametrize("batch_size", [1, 5, 1000])
def test_a_generated_log_counted_across_batches(tmp_path, batch_size):
    log = read_log(generated(tmp_path / "gen.jsonl"), batch_size=batch_size)
    # b before c: both 3 issues, ties in text order
    assert rows(log, "Top queries") == [("a", 5, 2 / 5), ("b", 3, 3 / 3), ("c", 3, 0 / 3), ("d", 1, 1 / 1)]
    # the log spans more than two days (May 1 00:00 to May 3 23:00), so per day; May 2 had no query
    assert rows(log, "Queries per day") == [("2024-05-01", 5), ("2024-05-02", 0), ("2024-05-03", 7)]


def test_a_log_spanning_centuries_lists_its_days_with_queries_alone(tmp_path):
    # the first and the last day a date can be written for: every day between was 3.65 million rows
    # (2.7 GB, 40 s); a pair escaped as one character is text, and reads
    path = tmp_path / "far.jsonl"
    path.write_text(
        '{"session": "s0", "query": "q\\ud83d\\ude00", "timestamp": -62135596800, "results": ["d1"]}\n'
        '{"session": "s1", "query": "q", "timestamp": 253402300799, "results": ["d1"]}\n'
        '{"session": "s2", "query": "q", "timestamp": 253402300000, "results": ["d1"]}\n'
    )
    table = {t.title: t for t in read_log(str(path)).tables()}["Queries per day"]
    assert [count for _, count in table.rows] == [1, 2] and table.rows[-1][0] == "9999-12-31"
    assert "spans 3,652,059 days: those without queries are left out" in table.description


def test_only_the_k_most_frequent_queries_are_kept():
    counts = QueryCounts()
    for query, n in [("x", 1), ("y", 4), ("z", 2), ("w", 4)]:
        for i in range(n):
            counts.add(query, clicked=i == 0)
    assert counts.top(2) == (("w", 4, 1), ("y", 4, 1))
    assert counts.top(10) == (("w", 4, 1), ("y", 4, 1), ("z", 2, 1), ("x", 1, 1))


def test_evaluate_input_carries_the_tables():
    res = irspec.evaluate_input(EXAMPLE, "CTR")
    assert [t.title for t in res.tables] == ["Top queries", "Queries per hour"]
    assert res.tables[0].chart == "bar" and res.tables[1].chart == "line"


def test_a_plans_outputs_show_and_plot_the_tables(tmp_path):
    generated(tmp_path / "gen.jsonl")
    (tmp_path / "plan.yaml").write_text(
        "log: gen.jsonl\nmetrics: CTR\noutput:\n"
        "  - {format: table, path: out.txt}\n  - {format: json, path: out.json}\n"
        "  - {format: markdown, path: out.md}\n  - {format: html, path: out.html}\n"
        "  - {format: latex, path: out.tex}\n  - {format: plots, path: plots}\n",
        encoding="utf-8",
    )
    irspec.plan.write_outputs(irspec.run_plan(irspec.load_plan(tmp_path / "plan.yaml")))
    text = (tmp_path / "out.txt").read_text(encoding="utf-8")
    assert "gen: Top queries" in text and "gen: Queries per day" in text
    lines = [line.split() for line in text.splitlines()]
    assert ["a", "5", "0.4000"] in lines  # query, issues, CTR 2/5
    assert ["2024-05-02", "0"] in lines
    doc = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    tables = {t["title"]: t for t in doc["runs"][0]["tables"]}
    assert tables["Top queries"]["columns"] == ["query", "issues", "CTR"]
    assert tables["Top queries"]["rows"][0] == ["a", 5, 0.4]
    assert tables["Queries per day"]["rows"] == [["2024-05-01", 5], ["2024-05-02", 0], ["2024-05-03", 7]]
    markdown = (tmp_path / "out.md").read_text(encoding="utf-8")
    assert "**gen: Top queries**" in markdown and "| b | 3 | 1.0000 |" in markdown
    assert "| 2024-05-03 | 7 |" in markdown
    latex = (tmp_path / "out.tex").read_text(encoding="utf-8")
    assert r"\caption{gen: Top queries" in latex and "    b & 3 & 1.0000 \\\\" in latex
    assert "    2024-05-03 & 7 \\\\" in latex
    html = (tmp_path / "out.html").read_text(encoding="utf-8")
    assert '<h2 id="tables">Tables</h2>' in html and "<h3>gen: Queries per day</h3>" in html
    assert '<td class="text">c</td><td>3</td><td>0.0000</td>' in html
    assert html.count('<figure id="plot-gen-') == 2  # both tables drawn into the page
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == [
        "gen-queries_per_day.png",
        "gen-queries_per_day.svg",
        "gen-top_queries.png",
        "gen-top_queries.svg",
    ]


def test_a_notebook_shows_the_tables(tmp_path):
    generated(tmp_path / "gen.jsonl")
    res = irspec.evaluate_input(tmp_path / "gen.jsonl", "CTR")
    page = res._repr_html_()
    assert "<h3>gen: Top queries</h3>" in page and '<td class="text">c</td><td>3</td><td>0.0000</td>' in page
    assert (
        "**gen: Queries per day**" in res._repr_markdown_() and "| 2024-05-03 | 7 |" in res._repr_markdown_()
    )
    assert "gen: Queries per day" in str(res.show())
