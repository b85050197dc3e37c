"""UG705 schema-bumped-without-change

What it flags: a schema version above the baseline's while no normalized spec changed and no
CRD was added or removed.

Why it matters: a version names a schema change. A bump without one makes declared breaks
and restart records written for that version refer to nothing, and hides which release
really changed the schema.

Allowed: the baseline's version kept until the schema changes.
"""

from __future__ import annotations

from upgrade_guard.findings import Severity
from upgrade_guard.rules.base import HistoryCheck

RULE = HistoryCheck(
    code="UG705",
    name="schema-bumped-without-change",
    severity=Severity.ERROR,
    summary="The schema version moved but the schema did not.",
    doc=__doc__ or "",
)
