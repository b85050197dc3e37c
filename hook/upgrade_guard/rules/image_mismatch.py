"""UG602 image-mismatch

What it flags: an image the values deploy, in any of the chart's controller-image slots
(`image`, `webhook.image`, ...), compiles another `controller-state-version` (or another
counter the policy marks `paired-with-image`) than the chart declares. The classic cause is
`helm upgrade --reuse-values`, which keeps the old chart's image tag under a new chart, or a
tag the admin pinned, which `--reset-then-reuse-values` keeps too.

Why it matters: the controller would run against CRDs and state of another contract: it may
fail to decode objects, or write state the chart's other parts do not expect.

Allowed: the image the table pairs with this chart. Way out now (the message names slot
and tag): `helm upgrade REL CHART --reset-then-reuse-values --set SLOT.tag=TAG` (the report
prints it for the operation at hand), TAG the tag the chart's table pairs with this chart
(or `SLOT.digest=` the paired digest when a digest is set), which works whatever kept the
old one; or install the chart that goes with the deployed image. Chart author: pair the
chart's counters with the images it deploys in the image table.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HookCheck
from upgrade_guard.subjects import HookSubject


def check(subject: HookSubject) -> Iterator[tuple[str | None, Change]]:
    for pairing in subject.pairings:
        if pairing.entry is None:
            continue
        key, compiled = pairing.entry
        wanted = pairing.wanted
        wrong = {n: compiled.get(n) for n, v in wanted.items() if compiled.get(n) != v}
        if not wrong:
            continue
        has = ", ".join(f"{n} {v if v is not None else 'none'}" for n, v in sorted(wrong.items()))
        yield (
            None,
            Change(
                None,
                f"{pairing.slot}: the values deploy {pairing.image} ({key}: {has}),"
                f" but {pairing.hint}",
                old=dict(compiled),
                new=dict(wanted),
                notes=(
                    pairing.pin(),
                    "chart author: pair the chart's counters with the images it deploys in"
                    f" {pairing.table.source}",
                ),
            ),
        )


RULE = HookCheck(
    code="UG602",
    name="image-mismatch",
    severity=Severity.ERROR,
    summary="The controller image does not compile the counters this chart declares.",
    doc=__doc__ or "",
    check=check,
    way_out="deploy the image the chart's table pairs with this chart (--set SLOT.tag=TAG)",
    author="pair the chart's counters with the images it deploys in the image table",
)
