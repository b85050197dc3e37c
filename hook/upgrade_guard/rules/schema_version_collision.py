"""UG604 schema-version-collision

What it flags: the live CRD and the chart carry the same `crd-schema-version` but their
normalized specs differ.

Why it matters: the schema version no longer names one schema: someone changed a CRD without
a bump, or applied it by hand, and every check that trusts the counter is misled.

Allowed: equal specs under equal versions; bump the version (`upgrade-guard stamp --bump`)
when the spec changes.
"""

from __future__ import annotations

from upgrade_guard.findings import Severity
from upgrade_guard.rules.base import HookCheck

RULE = HookCheck(
    code="UG604",
    name="schema-version-collision",
    severity=Severity.ERROR,
    summary="A live CRD carries the chart's schema version with another spec.",
    doc=__doc__ or "",
)
