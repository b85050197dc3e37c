"""UG603 schema-below-live

What it flags: a live CRD's `crd-schema-version` above the chart's: a rollback below the
schema a newer release applied.

Why it matters: objects stored under the newer schema may use fields the older one prunes or
values it refuses; the engine's findings say which, this check says that it is a rollback at
all.

Allowed: the same or a newer schema version; roll forward instead of back.
"""

from __future__ import annotations

from upgrade_guard.findings import Severity
from upgrade_guard.rules.base import HookCheck

RULE = HookCheck(
    code="UG603",
    name="schema-below-live",
    severity=Severity.ERROR,
    summary="The live CRD carries a newer schema version than the chart.",
    doc=__doc__ or "",
)
