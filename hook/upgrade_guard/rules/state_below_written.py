"""UG605 state-below-written

What it flags: a `controller-state-version` found on a live CRD's annotation, or at a
policy's `stored-state` path in a stored object, above the chart's. The message names the
holders.

Why it matters: a newer controller wrote that state; this release's controller does not know
how to read it (NVIDIA/nodewright#469), and a rollback would run it anyway.

Allowed: state at or below the version this release reads; roll forward, or restore the
named objects from a backup taken before the newer release.
"""

from __future__ import annotations

from upgrade_guard.findings import Severity
from upgrade_guard.rules.base import HookCheck

RULE = HookCheck(
    code="UG605",
    name="state-below-written",
    severity=Severity.ERROR,
    summary="The cluster holds state newer than this release reads.",
    doc=__doc__ or "",
)
