"""``irspec.agreements``, the agreement of sets of judgments until irspec 0.1.0, its names since in
:mod:`irspec.experiment.agreement` and (the output of several sets) :mod:`irspec.report.agreement`: kept for
one release, importing it warns (a :class:`DeprecationWarning`) naming each name's new module; each name is
that module's own object."""

from irspec.experiment.agreement import (
    Agreement,
    LabelAgreement,
    RankingAgreement,
    SignificanceChange,
    Swap,
    agreement,
    agreement_of,
)
from irspec.lazy import moved_names
from irspec.report.agreement import COMBINED_FORMATS
from irspec.report.agreement import judged_sets_text as combine

__all__ = [
    "COMBINED_FORMATS",
    "Agreement",
    "LabelAgreement",
    "RankingAgreement",
    "SignificanceChange",
    "Swap",
    "agreement",
    "agreement_of",
    "combine",
]

moved_names(__name__, globals())
