"""UG101 crd-removed

What it flags: a CRD on the old side that the new side does not have.

Why it matters: without the CRD its custom resources can no longer be read or written, and
deleting the CRD (by hand, or by a tool that prunes what the chart no longer renders) deletes
every stored object of it.

Allowed: a CRD only on the new side; nothing is stored at it yet.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import CrdSetCheck
from upgrade_guard.subjects import CrdSets


def check(subject: CrdSets) -> Iterator[tuple[str | None, Change]]:
    for name in subject.removed:
        yield name, Change(None, "CRD removed: its stored objects become unreachable")


RULE = CrdSetCheck(
    code="UG101",
    name="crd-removed",
    severity=Severity.ERROR,
    summary="A CRD that is live is missing from the new set.",
    doc=__doc__ or "",
    check=check,
    way_out=(
        "keep the release that applies this CRD (upgrade to a chart that still ships it), or "
        "back up and delete its objects deliberately, then accept it"
    ),
    author="keep the CRD in the chart, or give it helm.sh/resource-policy: keep",
)
