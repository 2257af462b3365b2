"""Data the project's tests read from outside it, never copied into the project.

:data:`TREC_EVAL_TEST`, trec_eval 10's own test data, for the tests that compare with it:
``$IRSPEC_TREC_EVAL_TEST`` (scripts/test sets it: ../shared/trec_eval_test in this repository's CI, else
a clone of NIST's test/ folder at tag v10.0), else ../shared/trec_eval_test beside the project.

:func:`peer_tests`, a peer's own tests as its repository publishes them, for the tests that run them
against irspec's drop-ins."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"
"""``../shared`` beside the project's folder."""

TREC_EVAL_TEST = Path(os.environ.get("IRSPEC_TREC_EVAL_TEST") or SHARED / "trec_eval_test")


def peer_tests(name: str, holds: str, setup: str) -> Path:
    """The folder of peer ``name``'s own tests (its PyPI package ships none): ``$IRSPEC_<NAME>_TESTS``,
    else ``../shared/<name>_tests``, which holds ``holds`` (a path in it).

    Without one the calling test skips: deliberately where ``scripts/test`` could not reach the
    repository, the one place the peer publishes them (``$IRSPEC_<NAME>_TESTS_UNREACHABLE`` says why: an
    outside limit of the machine, said at the start of the run too); else naming what to set up,
    ``setup``, a skip ``IRSPEC_STRICT_SKIPS`` fails. A folder named by the variable that lacks ``holds``
    fails the test: it was asked for."""
    variable = f"IRSPEC_{name.upper()}_TESTS"
    given = os.environ.get(variable)
    folder = Path(given) if given else SHARED / f"{name}_tests"
    if (folder / holds).exists():
        return folder
    if given:
        pytest.fail(f"${variable} is {given}, which holds no {holds}")
    unreachable = os.environ.get(f"{variable}_UNREACHABLE")
    if unreachable:
        pytest.skip(f"deliberate: {name} publishes its tests only on GitHub, and {unreachable}")
    pytest.skip(setup)
