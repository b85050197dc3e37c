"""UG602 image-mismatch

What it flags: an image the values deploy, in any of the chart's controller-image slots
(`image`, `webhook.image`, ...), compiles another `controller-state-version` (or another
counter the policy marks `paired-with-image`) than the chart declares. The classic cause is
`helm upgrade --reuse-values`, which keeps the old chart's image tag under a new chart, or a
tag the admin pinned, which `--reset-then-reuse-values` keeps too.

Why it matters: the controller would run against CRDs and state of another contract: it may
fail to decode objects, or write state the chart's other parts do not expect.

Allowed: the image the table pairs with this chart. Way out now (the message names slot
and tag): `helm upgrade REL CHART --reuse-values --set SLOT.tag=TAG`, TAG the tag the
chart's table pairs with this chart (or `SLOT.digest=` the paired digest when a digest is
set), which works whatever kept the old one; or install the chart that goes with the
deployed image. Chart author: pair the chart's counters with the images it deploys in the
image table.
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
