"""UG707 first-adoption-not-one

What it flags: a baseline without schema versions (no CRDs, or none annotated) and a version
other than 1.

Why it matters: numbering from 1 makes every version traceable to the commit that adopted
it; a first version of 5 claims four releases of history that no baseline shows.

Allowed: schema version 1 on the first stamped commit.
"""

from __future__ import annotations

from upgrade_guard.findings import Severity
from upgrade_guard.rules.base import HistoryCheck

RULE = HistoryCheck(
    code="UG707",
    name="first-adoption-not-one",
    severity=Severity.ERROR,
    summary="A first adoption must start at schema version 1.",
    doc=__doc__ or "",
)
