"""UG711 counter-bumped-without-change

What it flags: an `equal-when-unchanged` counter whose value moved while its files did not
change.

Why it matters: a new number with the same contract splits chart and image pairs that still
agree, and hides which commit really changed the contract.

Allowed: the counter kept equal until its files change.
"""

from __future__ import annotations

from upgrade_guard.findings import Severity
from upgrade_guard.rules.base import HistoryCheck

RULE = HistoryCheck(
    code="UG711",
    name="counter-bumped-without-change",
    severity=Severity.ERROR,
    summary="A counter moved but its files did not change.",
    doc=__doc__ or "",
)
