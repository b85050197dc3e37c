"""UG607 already-applied

What it flags: live CRDs whose normalized spec equals the chart's, for example when Argo CD
or Flux (`upgrade.crds: CreateReplace`) applied them before the hook ran.

Why it matters: the CRD change, if there was one, has already happened: the guard cannot
protect stored objects from it any more, and says so rather than passing silently.

Allowed: everything; run the guard before the CRDs are applied (see the Argo CD and Flux
sections).
"""

from __future__ import annotations

from upgrade_guard.findings import Severity
from upgrade_guard.rules.base import HookCheck

RULE = HookCheck(
    code="UG607",
    name="already-applied",
    severity=Severity.INFO,
    summary="Live CRDs that already equal the chart's: nothing left to guard.",
    doc=__doc__ or "",
)
