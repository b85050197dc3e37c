"""UG104 stored-version-removed

What it flags: a version objects may be stored at (status.storedVersions of the live CRD, and
always its storage version) that the new spec.versions no longer lists.

Why it matters: the apiserver refuses the CRD update (from 1.33: "status.storedVersions[0]:
Invalid value: "v1alpha1": missing from spec.versions; v1alpha1 was previously a storage
version, and must remain in spec.versions until a storage migration ..."; before: "... must
appear in spec.versions"), and objects still stored at that version could not be decoded. A
storage migration must rewrite them and trim status.storedVersions first.

Allowed: the version kept in spec.versions with served: false.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import CrdRule
from upgrade_guard.subjects import CrdPair


def compare(pair: CrdPair) -> Iterator[Change]:
    old, new = pair.old, pair.new
    for version in old.stored_versions:
        if version not in new.versions:
            yield Change(
                None,
                f"version {version} may hold stored objects but is missing from spec.versions;"
                " the apiserver refuses this update until a storage migration removes it"
                " from status.storedVersions",
                old=version,
            )


RULE = CrdRule(
    code="UG104",
    name="stored-version-removed",
    severity=Severity.ERROR,
    summary="A version in status.storedVersions is missing from the new spec.versions.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"versions"}),
    way_out=(
        "migrate storage: rewrite every object at the storage version, remove the old version"
        " from status.storedVersions, then upgrade again"
    ),
    author="keep serving the stored version until every object is migrated",
)
