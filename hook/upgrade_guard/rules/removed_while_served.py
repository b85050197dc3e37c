"""UG806 removed-while-served

What it flags: a version removed from ``spec.versions`` (or with its whole CRD) in the
release right after one that still served it, instead of first being set
``served: false`` for a release.

Why it matters: ``served: false`` is the step a patch release can undo: clients still
using the version see it gone, while its schema stays for objects stored at it, and
serving it again is one line. Kubernetes' CRD versioning guide removes a version in this
order: stop serving it, migrate storage (UG807), then remove it from ``spec.versions``.

Allowed: removing a version a release after it stopped being served.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Severity
from upgrade_guard.lifecycle.timeline import LifecycleViolation, ReleaseHistory
from upgrade_guard.rules.kinds import LifecycleRule


def check(history: ReleaseHistory) -> Iterator[LifecycleViolation]:
    for index, crd, version in history.transitions():
        if history.entry(index, crd, version) is not None:
            continue
        if not history.served(index - 1, crd, version):
            continue
        before, after = history.releases[index - 1], history.releases[index]
        whole = " with its whole CRD" if crd not in after.crds else ""
        yield LifecycleViolation(
            crd=crd,
            version=version,
            release=index,
            message=(
                f"{version} removed{whole} in {after} while {before} still served it;"
                " set served: false for a release first"
            ),
            old=before.as_data(),
            new=after.as_data(),
        )


RULE = LifecycleRule(
    code="UG806",
    name="removed-while-served",
    severity=Severity.ERROR,
    summary="A version was removed in the release right after one that still served it.",
    doc=__doc__ or "",
    check=check,
)
