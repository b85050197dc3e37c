"""UG106 storage-version-changed

What it flags: the storage version moved to another version.

Why it matters: nothing already stored is converted; objects move on their next write, and
status.storedVersions keeps both versions until a storage migration rewrites every object.
The apiserver adds the new storage version to status.storedVersions as soon as the new CRD
is applied, whether or not anything is written, and every entry must stay in spec.versions:
a rollback re-applying the previous release's CRD, if that CRD does not list the new storage
version, is refused ("status.storedVersions[1]: Invalid value: "v1": missing from
spec.versions"; crossplane/crossplane#6148). That is the error, witnessed by that refusal.
So, as Kubernetes' deprecation policy (rule 4b) says, the storage version may advance only to
a version the previous release already served, while the previous storage version stays
served: that move is reported as info, naming the storage migration still to do. A move in
the release that stops serving the previous storage version is against the policy, which
wants one release serving both, but the rollback's CRD is accepted and every object reads
back at both versions after it: its harm is UG105's (reads and writes at the version no
longer served fail), so it is a warning here. A move to a version the previous CRD listed
without serving it is accepted on rollback too (info).

Allowed: the same storage version on both sides; a move to a version the old CRD listed,
with the old storage version still served (info).
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import CrdRule
from upgrade_guard.subjects import CrdPair


def compare(pair: CrdPair) -> Iterator[Change]:
    old, new = pair.old, pair.new
    before, after = old.storage_version, new.storage_version
    if before == after:
        return
    moved = f"storage version moved from {before} to {after}"
    if after not in old.versions:
        yield Change(
            None,
            f"{moved}, which the previous release does not serve: once this CRD is applied,"
            f" status.storedVersions lists {after} and the apiserver refuses a rollback's CRD,"
            f" which does not list it; serve {after} for one release first, then move the"
            " storage version",
            before,
            after,
        )
    elif before not in new.served_versions:
        yield Change(
            None,
            f"{moved} in the release that stops serving {before}: Kubernetes' deprecation"
            f" policy (rule 4b) moves storage in a release that serves both; a rollback's CRD"
            f" is still accepted (it lists {after}), and what stops working is UG105's:"
            f" requests at {before}",
            before,
            after,
            severity=Severity.WARNING,
        )
    else:
        listed = (
            f"{after} was already served, so a rollback can read it"
            if after in old.served_versions
            else f"the previous release lists {after}, so a rollback's CRD is accepted"
        )
        yield Change(
            None,
            f"{moved} ({listed}): a storage"
            f" migration is still to do: read and write back every object, then remove"
            f" {before} from status.storedVersions, before {before} stops being served",
            before,
            after,
            severity=Severity.INFO,
        )


RULE = CrdRule(
    code="UG106",
    name="storage-version-changed",
    severity=Severity.ERROR,
    summary="The storage version moved to a version the previous release did not list.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"versions"}),
    way_out=(
        "if you will not need to roll back below this release, accept it: once applied, the"
        " CRD cannot go back to one that does not serve the new storage version; else stay on"
        " the deployed release until the chart serves the new version a release before"
        " storing it"
    ),
    author="serve the new version for one release before making it the storage version",
)
