"""UG101 crd-removed

What it flags: a CRD on the old side that the new side does not have.

Why it matters: without the CRD its custom resources can no longer be read or written, and
deleting the CRD (by hand, or by a tool that prunes what the chart no longer renders) deletes
every stored object of it.

Allowed: a CRD only on the new side; nothing is stored at it yet.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.crd import Crd
from upgrade_guard.findings import Change, Scope, Severity
from upgrade_guard.rules.base import Rule


def compare(old: Crd, new: Crd | None) -> Iterator[Change]:
    if new is None:
        yield Change(None, "CRD removed: its stored objects become unreachable")


RULE = Rule(
    code="UG101",
    name="crd-removed",
    severity=Severity.ERROR,
    scope=Scope.CRD,
    summary="A CRD that is live is missing from the new set.",
    compare=compare,
    doc=__doc__ or "",
)
