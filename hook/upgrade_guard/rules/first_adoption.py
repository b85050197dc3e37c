"""UG606 first-adoption

What it flags: live CRDs that carry no `crd-schema-version` annotation (installed before the
chart adopted the counters, or by hand).

Why it matters: nothing is refused: the engine still compares them field by field; only the
counter checks have nothing to compare with.

Allowed: everything; the next release finds the annotations this one applies.
"""

from __future__ import annotations

from upgrade_guard.findings import Severity
from upgrade_guard.rules.base import HookCheck

RULE = HookCheck(
    code="UG606",
    name="first-adoption",
    severity=Severity.INFO,
    summary="Live CRDs without a schema version are compared by schema only and adopted now.",
    doc=__doc__ or "",
)
