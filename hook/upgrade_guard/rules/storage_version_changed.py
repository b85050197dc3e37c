"""UG106 storage-version-changed

What it flags: the storage version moved to another version.

Why it matters: nothing already stored is converted; objects move on their next write. Until a
storage migration rewrites them, a downgrade to a chart that no longer knows the new version
is refused (crossplane/crossplane#6148), and status.storedVersions keeps both versions.

Allowed: the same storage version on both sides.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.crd import Crd
from upgrade_guard.findings import Change, Scope, Severity
from upgrade_guard.rules.base import Rule


def compare(old: Crd, new: Crd) -> Iterator[Change]:
    before, after = old.storage_version, new.storage_version
    if before != after:
        yield Change(None, f"storage version moved from {before} to {after}", before, after)


RULE = Rule(
    code="UG106",
    name="storage-version-changed",
    severity=Severity.ERROR,
    scope=Scope.CRD,
    summary="The storage version moved.",
    compare=compare,
    doc=__doc__ or "",
)
