"""UG704 schema-changed-without-bump

What it flags: a normalized spec changed since the baseline, or a CRD was added or removed,
while the schema version stayed the same.

Why it matters: two different schemas would carry one version. Declared breaks, restart
records and the cluster hook rely on a version naming exactly one schema: the hook would
take the new schema for the one already live.

Allowed: the version raised by one with the change (`upgrade-guard stamp DIR
--schema-version N+1`); documentation-only edits need no bump.
"""

from __future__ import annotations

from upgrade_guard.findings import Severity
from upgrade_guard.rules.base import HistoryCheck

RULE = HistoryCheck(
    code="UG704",
    name="schema-changed-without-bump",
    severity=Severity.ERROR,
    summary="The schema changed but its version did not rise.",
    doc=__doc__ or "",
)
