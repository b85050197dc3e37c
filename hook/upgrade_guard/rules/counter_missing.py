"""UG708 counter-missing

What it flags: a counter declared in the policy's `counters` (and controller-state-version
whenever a CRD on either side carries it) that a CRD lacks, carries in a non-canonical form,
or carries with another value than the other CRDs.

Why it matters: a counter says which controller state or contract the CRDs go with. Without
it on every CRD, the checks on it (UG709-UG711) and the cluster hook's image pairing cannot
be made.

Allowed: the same canonical value on every CRD (`upgrade-guard stamp DIR --counter NAME=N`).
"""

from __future__ import annotations

from upgrade_guard.findings import Severity
from upgrade_guard.rules.base import HistoryCheck

RULE = HistoryCheck(
    code="UG708",
    name="counter-missing",
    severity=Severity.ERROR,
    summary="A counter is missing, not canonical, or differs between CRDs.",
    doc=__doc__ or "",
)
