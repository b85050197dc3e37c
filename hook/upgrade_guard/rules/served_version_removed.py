"""UG105 served-version-removed

What it flags: a version served by the old CRD that the new CRD removes or sets to
served: false.

Why it matters: every client, manifest and controller still using that apiVersion gets
404 Not Found; GitOps tools fail to apply manifests written against it. A version removed
from spec.versions breaks more: the apiserver can no longer convert to it, so a server-side
apply (kubectl apply --server-side, Flux, Argo CD with ServerSideApply) of an object whose
metadata.managedFields record it fails at any version with HTTP 500 "request to convert CR
to an invalid group/version", until a write other than an apply (an update, a merge patch,
a /status write) clears the object's managedFields (kubernetes/kubernetes#111937). Kept
in spec.versions with served: false, the version answers 404 and such applies still
succeed.

Allowed: a new served version added beside the old one.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.kinds import CrdRule
from upgrade_guard.subjects import CrdPair


def compare(pair: CrdPair) -> Iterator[Change]:
    old, new = pair.old, pair.new
    for version in old.served_versions:
        if version not in new.versions:
            yield Change(
                None,
                f"served version {version} removed: requests at {version} get 404, and a"
                f" server-side apply of an object whose managedFields record {version} fails"
                f" until a write other than an apply clears them; keep {version} listed with"
                " served: false",
                old=version,
            )
        elif version not in new.served_versions:
            yield Change(None, f"version {version} is no longer served", old=version)


RULE = CrdRule(
    code="UG105",
    name="served-version-removed",
    severity=Severity.ERROR,
    summary="A served version was removed or set to served: false.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"versions"}),
)
