"""UG807 removed-without-migration

What it flags: a version removed from ``spec.versions`` of a CRD that stays, when objects
may still be stored at it (it was the storage version in a release read, or it is in the
first release read, whose earlier history is unknown) and the policy declares no storage
migration for it (``lifecycle.storage-migrations``) in that release or an earlier one after
it stopped being the storage version.

Why it matters: ``status.storedVersions`` keeps every version ever used for storage, and
the apiserver refuses a CRD update that drops one of them from ``spec.versions``. Only a
storage migration (read and write back every object, then trim storedVersions), documented
for users in the release, makes the removal applicable (held to kube-apiserver v1.35.4 in
tests/cluster/test_lifecycle_truth.py).

Allowed: removing a version never used for storage, or one whose storage migration the
policy declares for that release or an earlier one.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Severity
from upgrade_guard.lifecycle.timeline import LifecycleViolation, ReleaseHistory
from upgrade_guard.rules.kinds import LifecycleRule


def _stored_how(
    history: ReleaseHistory, index: int, crd: str, version: str
) -> tuple[int, str] | None:
    """(last index it was storage, or -1; why objects may be stored at it), or None."""
    stored = [at for at in range(index) if history.storage(at, crd) == version]
    if stored:
        return stored[-1], f"it was the storage version in {history.releases[stored[-1]]}"
    if history.entry(0, crd, version) is not None:
        first = history.releases[0]
        return -1, f"it is in the first release read, {first}, whose earlier history is unknown"
    return None


def check(history: ReleaseHistory) -> Iterator[LifecycleViolation]:
    tags = {release.tag: index for index, release in enumerate(history.releases)}
    for index, crd, version in history.transitions():
        if crd not in history.releases[index].crds or history.entry(index, crd, version):
            continue
        stored = _stored_how(history, index, crd, version)
        if stored is None:
            continue
        last_storage, why = stored
        declared = [
            tags.get(d.release, len(history.releases))
            for d in history.settings.storage_migrations
            if (d.crd, d.version) == (crd, version)
        ]
        if any(last_storage < at <= index for at in declared):
            continue
        after = history.releases[index]
        yield LifecycleViolation(
            crd=crd,
            version=version,
            release=index,
            message=(
                f"{version} removed from spec.versions in {after}, but {why}:"
                " status.storedVersions may still hold it, and the apiserver refuses the"
                " update until a storage migration removes it; declare the migration in"
                " lifecycle.storage-migrations"
            ),
            old=history.releases[index - 1].as_data(),
            new=after.as_data(),
        )


RULE = LifecycleRule(
    code="UG807",
    name="removed-without-migration",
    severity=Severity.ERROR,
    summary="A version objects may be stored at was removed without a declared migration.",
    doc=__doc__ or "",
    check=check,
)
