"""UG701 schema-version-missing

What it flags: a CRD in the checked tree without a canonical crd-schema-version annotation:
a positive decimal string such as "1" (no sign, no leading zero, no spaces).

Why it matters: the schema version is how verify-history, diff and the cluster hook tell
which release of the schema a CRD is; without it a missed bump or a rollback cannot be seen,
so verify-history refuses instead of guessing.

Allowed: any canonical value; `upgrade-guard stamp DIR --schema-version N` writes it on
every CRD.
"""

from __future__ import annotations

from upgrade_guard.findings import Severity
from upgrade_guard.rules.base import HistoryCheck

RULE = HistoryCheck(
    code="UG701",
    name="schema-version-missing",
    severity=Severity.ERROR,
    summary="A CRD lacks a canonical crd-schema-version.",
    doc=__doc__ or "",
)
