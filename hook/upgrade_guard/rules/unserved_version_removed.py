"""UG113 unserved-version-removed

What it flags: a version the old CRD lists with served: false (and not in
status.storedVersions, which UG104 covers) that the new spec.versions no longer lists.

Why it matters: objects written at that version while it was served keep a
metadata.managedFields entry naming it. Once it leaves spec.versions the apiserver can no
longer convert to it, so a server-side apply (kubectl apply --server-side, Flux, Argo CD
with ServerSideApply) of such an object fails at any version with HTTP 500 "request to
convert CR to an invalid group/version", until a write other than an apply (an update, a
merge patch, a /status write) clears the object's managedFields (kubernetes/kubernetes#111937,
knative/operator#1184). Which objects still hold such an entry the CRDs do not say, so it
is a warning.

Allowed: the version kept in spec.versions with served: false.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import CrdRule
from upgrade_guard.subjects import CrdPair


def compare(pair: CrdPair) -> Iterator[Change]:
    old, new = pair.old, pair.new
    for version in old.versions:
        if (
            version not in old.served_versions
            and version not in old.stored_versions
            and version not in new.versions
        ):
            yield Change(
                None,
                f"unserved version {version} removed: a server-side apply of an object whose"
                f" managedFields record {version} fails until a write other than an apply"
                " clears them",
                old=version,
            )


RULE = CrdRule(
    code="UG113",
    name="unserved-version-removed",
    severity=Severity.WARNING,
    summary="A version listed with served: false was removed from spec.versions.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"versions"}),
)
