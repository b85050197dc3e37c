"""UG602 image-mismatch

What it flags: the image the values deploy compiles another `controller-state-version` (or
another counter the policy marks `paired-with-image`) than the chart declares. The classic
cause is `helm upgrade --reuse-values`, which keeps the old release's image tag under a new
chart.

Why it matters: the controller would run against CRDs and state of another contract: it may
fail to decode objects, or write state the chart's other parts do not expect.

Allowed: the image the message names (`helm upgrade --reset-then-reuse-values`, or set the
image tag), or the chart that goes with the deployed image.
"""

from __future__ import annotations

from upgrade_guard.findings import Severity
from upgrade_guard.rules.base import HookCheck

RULE = HookCheck(
    code="UG602",
    name="image-mismatch",
    severity=Severity.ERROR,
    summary="The controller image does not compile the counters this chart declares.",
    doc=__doc__ or "",
)
