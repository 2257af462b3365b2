"""The JUnit XML reports of the peers' own test suites (ir_measures', ranx's, torchmetrics'), which run
in a pytest process of their own against irspec's drop-ins: each test case and how it ended."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path
from typing import Literal


@dataclass(frozen=True)
class Case:
    """One test case of a report: its ``classname`` (the module, dotted, and class), its ``name``, how it
    ended (an error counts as a failure) and, for a failure, the first line of its message."""

    classname: str
    name: str
    outcome: Literal["passed", "failed", "skipped"]
    message: str = ""


def cases(report: Path) -> list[Case]:
    """Every test case of the report at ``report``, in its order."""
    found = []
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is not None:
            message = ((problem.get("message") or "").splitlines() or [""])[0][:300]
            outcome: Literal["passed", "failed", "skipped"] = "failed"
        else:
            message = ""
            outcome = "skipped" if case.find("skipped") is not None else "passed"
        found.append(Case(case.get("classname", ""), case.get("name", ""), outcome, message))
    return found
