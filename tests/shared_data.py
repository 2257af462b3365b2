"""Where trec_eval 10's own test data is, for the tests that compare with it: ``$IRSPEC_TREC_EVAL_TEST``
(scripts/test sets it: ../shared/trec_eval_test in this repository's CI, else a clone of NIST's test/
folder at tag v10.0), else ../shared/trec_eval_test beside the project. Never copied into the project."""

from __future__ import annotations

import os
from pathlib import Path

TREC_EVAL_TEST = Path(
    os.environ.get("IRSPEC_TREC_EVAL_TEST")
    or Path(__file__).resolve().parents[2] / "shared" / "trec_eval_test"
)
