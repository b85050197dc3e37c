"""UG601 image-unknown

What it flags: the values deploy a controller image (`--controller-image SLOT=IMAGE`, one
per slot) whose digest and tag the chart's image table (`--image-table`) does not list.

Why it matters: the guard cannot tell which counters that image compiles, so it cannot tell
whether it reads what this chart's CRDs and stored state hold. It fails closed.

Allowed: an image listed in the table. Way out now: deploy the image the chart's table
pairs with this chart (`--set SLOT.tag=TAG`, as the message says). Chart author: add each
new image's tag or digest to the chart's table when it is released.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import HookCheck
from upgrade_guard.subjects import HookSubject


def check(subject: HookSubject) -> Iterator[tuple[str | None, Change]]:
    for pairing in subject.pairings:
        if pairing.entry is not None:
            continue
        image, source = pairing.image, pairing.table.source
        yield (
            None,
            Change(
                None,
                f"{pairing.slot}: the values deploy {image}, which the chart's image table"
                f" ({source}) does not list; {pairing.hint}",
                new=image,
                notes=(pairing.pin(), f"chart author: add {image} to {source}"),
            ),
        )


RULE = HookCheck(
    code="UG601",
    name="image-unknown",
    severity=Severity.ERROR,
    summary="The controller image the values deploy is not in the chart's image table.",
    doc=__doc__ or "",
    check=check,
    way_out="deploy the image the chart's table pairs with this chart (--set SLOT.tag=TAG)",
    author="add every released image's tag or digest to the chart's image table",
)
